//! What one seat knows of a game, and games drawn from it, for computer
//! players (see [`ludo_engine::InfoSet`]).
//!
//! Hidden from a seat until the game is over: the other hands and the
//! deck's order (and the generator that will reshuffle the discard pile).
//! Public: the display, the discard pile, the cards put back in the box,
//! every hand's size, and the cards a hand took from the display (it holds
//! them until it spends or discards cards of their kind: see
//! `Game::known`). In the info, the unseen cards — the other hands beyond
//! what is known of them, and the deck — are pooled and handed back in a
//! fixed order (sorted), with a fixed generator, so the info depends only on
//! what the seat knows. A determinization deals the same pool at random
//! into the same places.
//!
//! One simplification: after the deck's first exhaustion its new content is
//! the discard pile, which everyone saw; the pool still mixes it with the
//! unseen cards of the other hands.

use ludo_engine::{DeckRng, InfoSet, Seat, Seed};

use crate::cards::CardKind;
use crate::game::Game;

/// What one seat knows of a game. With the `serde` feature it reads and
/// writes as JSON (for a computer player in another process).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Info {
    seat: Seat,
    /// The game with the unseen cards in canonical places and a fixed seed.
    game: Game,
}

impl Info {
    /// The seat this info belongs to.
    #[must_use]
    pub fn seat(&self) -> Seat {
        self.seat
    }
}

/// The seats whose hands `seat` does not see.
fn others(game: &Game, seat: Seat) -> Vec<Seat> {
    if game.result.is_some() {
        return Vec::new(); // every hand is shown once the game is over
    }
    Seat::all(game.players).filter(|&s| s != seat).collect()
}

/// The unseen cards: each other hand beyond what is known of it, and the deck.
fn pool(game: &Game, others: &[Seat]) -> Vec<CardKind> {
    let mut pool = game.deck.clone();
    for s in others {
        let mut unknown = game.hands[s.index()];
        unknown.remove_all(game.known[s.index()]);
        pool.extend(unknown.to_vec());
    }
    pool
}

/// Deals `cards` in order: each other hand gets its known cards and as many
/// more as it holds; the deck the rest, in order (top card last).
fn place(game: &mut Game, others: &[Seat], cards: Vec<CardKind>) {
    let mut cards = cards.into_iter();
    for s in others {
        let i = s.index();
        let unknown = game.hands[i].len() - game.known[i].len();
        let mut hand = game.known[i];
        for card in cards.by_ref().take(unknown) {
            hand.add(card);
        }
        game.hands[i] = hand;
    }
    game.deck = cards.collect();
}

impl InfoSet for Game {
    type Info = Info;

    fn info(&self, seat: Seat) -> Info {
        let mut game = self.clone();
        let others = others(self, seat);
        let mut cards = pool(self, &others);
        cards.sort_unstable();
        place(&mut game, &others, cards);
        game.rng = DeckRng::new(&Seed([0; 32]));
        Info { seat, game }
    }

    fn determinize(info: &Info, rng: &mut DeckRng) -> Game {
        let mut game = info.game.clone();
        let others = others(&game, info.seat);
        let mut cards = pool(&game, &others);
        rng.shuffle(&mut cards);
        place(&mut game, &others, cards);
        game.rng = DeckRng::new(&rng.next_seed());
        game
    }
}

/// Test support: the multiset a hand holds.
#[cfg(test)]
fn hand(game: &Game, seat: Seat) -> crate::cards::Cards {
    game.hands[seat.index()]
}

#[cfg(test)]
mod tests {
    use ludo_engine::{Engine, Setup, Status, Viewer};

    use super::*;
    use crate::options::Options;

    fn play(game: &mut Game, moves: usize, pick: usize) {
        for n in 0..moves {
            let Status::InProgress { to_move } = game.status() else { return };
            let legal = game.legal_moves(to_move[0]);
            game.apply(to_move[0], &legal[(n * 5 + pick) % legal.len()]).expect("a legal move");
        }
    }

    fn new(seed: u8, players: usize) -> Game {
        Game::new(&Setup { players, options: Options::default(), seed: Seed([seed; 32]) }).unwrap().0
    }

    #[test]
    fn the_info_is_the_same_whatever_the_unseen_cards_are() {
        let mut a = new(4, 4);
        play(&mut a, 25, 3);
        // Another game with the same public past: seat 2's unknown cards
        // swapped with the deck's top ones, and another generator.
        let mut b = a.clone();
        let unknown = {
            let mut u = hand(&b, Seat(2));
            u.remove_all(b.known[2]);
            u.to_vec()
        };
        let n = unknown.len().min(b.deck.len());
        let from_deck: Vec<CardKind> = b.deck.split_off(b.deck.len() - n);
        let mut new_hand = b.known[2];
        for card in &from_deck {
            new_hand.add(*card);
        }
        for card in unknown.iter().skip(n) {
            new_hand.add(*card);
        }
        b.deck.extend(unknown.iter().take(n));
        b.hands[2] = new_hand;
        b.rng = DeckRng::new(&Seed([77; 32]));
        assert_ne!(a.rng, b.rng);
        assert_eq!(a.info(Seat(0)), b.info(Seat(0)));
    }

    #[test]
    fn determinizations_agree_with_everything_the_seat_knows() {
        for seed in 0..12u8 {
            let players = 3 + usize::from(seed % 3);
            let mut game = new(seed, players);
            play(&mut game, 10 + usize::from(seed) * 4, usize::from(seed));
            let Status::InProgress { to_move } = game.status() else { continue };
            let seat = to_move[0];
            let info = game.info(seat);
            let mut rng = DeckRng::new(&Seed([seed; 32]));
            for _ in 0..8 {
                let drawn = Game::determinize(&info, &mut rng);
                assert_eq!(drawn.view(Viewer::Seat(seat)), game.view(Viewer::Seat(seat)), "seed {seed}");
                assert_eq!(drawn.legal_moves(seat), game.legal_moves(seat), "seed {seed}");
                for other in Seat::all(players) {
                    assert!(hand(&drawn, other).contains(game.known[other.index()]), "seed {seed}: {other:?} keeps what it took");
                    assert_eq!(hand(&drawn, other).len(), hand(&game, other).len());
                }
                let mut next = drawn.clone();
                play(&mut next, 40, 1);
            }
        }
    }
}
