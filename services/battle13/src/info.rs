//! What one seat knows of a match, and matches drawn from it, for computer
//! players (see [`ludo_engine::InfoSet`]).
//!
//! Hidden from a seat, in the joust in play: the knights of every other seat
//! whose hand it may not see (B13-25; the servant's are public after the
//! first knight, B13-18), and the seed of the deals to come. In the info,
//! those knights are pooled and handed back in a fixed order (sorted, seat
//! by seat, each seat keeping its count), and the seed is a fixed one, so
//! the info depends only on what the seat knows.
//!
//! A determinization deals the pool at random among the hidden seats,
//! respecting what the log proves:
//! - a seat that did not follow the family led holds none of it (B13-18);
//! - each opening statement (B13-9) still holds of the seat's dealt hand
//!   (tried by rejection, a bounded number of times; a deal that only keeps
//!   the first rule is used when no try keeps both).

use ludo_engine::{DeckRng, InfoSet, Seat, Seed, Viewer};

use crate::knights::{Family, Knight, SEATS, weapons};
use crate::r#match::Game;
use crate::opening::OPENING_WEAPONS;

/// What one seat knows of a match. With the `serde` feature it reads and
/// writes as JSON (for a computer player in another process).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Info {
    seat: Seat,
    /// The match with the hidden knights in canonical places and a fixed seed.
    game: Game,
}

impl Info {
    /// The seat this info belongs to.
    #[must_use]
    pub fn seat(&self) -> Seat {
        self.seat
    }
}

/// Tries at a deal keeping the opening statements, before settling for one
/// that keeps the voids only.
const OPENING_TRIES: usize = 200;

/// Tries at a deal keeping the voids, before dealing in order.
const VOID_TRIES: usize = 200;

/// The seats whose knights `seat` may not see now.
fn hidden(game: &Game, seat: Seat) -> Vec<Seat> {
    let (number, deal) = (game.joust.number, game.joust.deal);
    Seat::all(SEATS).filter(|&other| !game.sees_hand(Viewer::Seat(seat), number, deal, other)).collect()
}

/// The knights `seat` played in the joust in play.
fn played(game: &Game, seat: Seat) -> impl Iterator<Item = Knight> + '_ {
    game.joust.tournaments.iter().flat_map(|t| t.plays.iter()).filter(move |p| p.seat == seat).map(|p| p.knight)
}

/// Gives each hidden seat `hands[i]` (sorted) and its dealt hand back.
fn place(game: &mut Game, hidden: &[Seat], hands: Vec<Vec<Knight>>) {
    for (&seat, mut held) in hidden.iter().zip(hands) {
        held.sort_unstable();
        let mut dealt: Vec<Knight> = held.iter().copied().chain(played(game, seat)).collect();
        dealt.sort_unstable();
        game.joust.held[seat.index()] = held;
        game.joust.dealt[seat.index()] = dealt;
    }
}

/// The families each hidden seat is proven not to hold: it did not follow
/// them when they were led.
fn voids(game: &Game) -> [[bool; 4]; SEATS] {
    let mut void = [[false; 4]; SEATS];
    for tournament in &game.joust.tournaments {
        let Some(led) = tournament.family_led() else { continue };
        for play in tournament.plays.iter().skip(1).filter(|p| p.knight.family != led) {
            void[play.seat.index()][family_index(led)] = true;
        }
    }
    void
}

fn family_index(family: Family) -> usize {
    Family::ALL.iter().position(|f| *f == family).unwrap_or(0)
}

/// Deals `pool` to `hidden` (each its `counts`), none to a seat void in
/// its family; `None` when the random order dead-ends.
fn deal_once(pool: &[Knight], hidden: &[Seat], counts: &[usize], void: &[[bool; 4]; SEATS], rng: &mut DeckRng) -> Option<Vec<Vec<Knight>>> {
    let mut order = pool.to_vec();
    rng.shuffle(&mut order);
    // The most constrained knights first: fewer dead ends.
    let eligible = |knight: &Knight| hidden.iter().filter(|s| !void[s.index()][family_index(knight.family)]).count();
    order.sort_by_key(eligible);
    let mut hands: Vec<Vec<Knight>> = counts.iter().map(|&n| Vec::with_capacity(n)).collect();
    for knight in order {
        let open: Vec<usize> =
            (0..hidden.len()).filter(|&i| hands[i].len() < counts[i] && !void[hidden[i].index()][family_index(knight.family)]).collect();
        if open.is_empty() {
            return None;
        }
        let pick = open[rng.below(u32::try_from(open.len()).ok()?) as usize];
        hands[pick].push(knight);
    }
    Some(hands)
}

impl InfoSet for Game {
    type Info = Info;

    fn info(&self, seat: Seat) -> Info {
        let mut game = self.clone();
        let hidden = hidden(self, seat);
        let mut pool: Vec<Knight> = hidden.iter().flat_map(|s| self.joust.held[s.index()].iter().copied()).collect();
        pool.sort_unstable();
        let mut rest = pool.into_iter();
        let hands = hidden.iter().map(|s| rest.by_ref().take(self.joust.held[s.index()].len()).collect()).collect();
        place(&mut game, &hidden, hands);
        game.rng = DeckRng::new(&Seed([0; 32]));
        Info { seat, game }
    }

    fn determinize(info: &Info, rng: &mut DeckRng) -> Game {
        let mut game = info.game.clone();
        game.rng = DeckRng::new(&rng.next_seed());
        let hidden = hidden(&game, info.seat);
        if hidden.is_empty() {
            return game;
        }
        let counts: Vec<usize> = hidden.iter().map(|s| game.joust.held[s.index()].len()).collect();
        let pool: Vec<Knight> = hidden.iter().flat_map(|s| game.joust.held[s.index()].iter().copied()).collect();
        let void = voids(&game);
        let opening = game.joust.opening.clone();
        let keeps_opening = |game: &Game| {
            opening.iter().filter(|a| hidden.contains(&a.seat)).all(|a| {
                let dealt = &game.joust.dealt[a.seat.index()];
                (weapons(dealt) >= OPENING_WEAPONS) == a.twelve_weapons
            })
        };
        let mut fallback = None;
        for _ in 0..OPENING_TRIES {
            let Some(hands) = (0..VOID_TRIES).find_map(|_| deal_once(&pool, &hidden, &counts, &void, rng)) else { break };
            let mut candidate = game.clone();
            place(&mut candidate, &hidden, hands);
            if keeps_opening(&candidate) {
                return candidate;
            }
            fallback.get_or_insert(candidate);
        }
        // Never worse than the info's own arrangement (which the true deal
        // proves possible, but the search above may miss).
        fallback.unwrap_or(game)
    }
}

#[cfg(test)]
mod tests {
    use ludo_engine::{Engine, Setup, Status};

    use super::*;
    use crate::r#match::Options;

    fn setup(seed: u8) -> Setup<Options> {
        Setup { players: SEATS, options: Options::default(), seed: Seed([seed; 32]) }
    }

    /// Plays `moves` moves, each the `pick`-th legal one, from `game`.
    fn play(game: &mut Game, moves: usize, pick: usize) {
        for n in 0..moves {
            let Status::InProgress { to_move } = game.status() else { return };
            let legal = game.legal_moves(to_move[0]);
            game.apply(to_move[0], &legal[(n * 7 + pick) % legal.len()]).expect("a legal move");
        }
    }

    #[test]
    fn the_info_is_the_same_whatever_the_hidden_knights_are() {
        // Two matches with the same public past but hidden hands swapped
        // between seats 1 and 3 (same counts): seat 0 cannot tell them apart.
        let (mut a, _) = Game::new(&setup(3)).unwrap();
        play(&mut a, 9, 1);
        let mut b = a.clone();
        let (one, three) = (b.joust.held[1].clone(), b.joust.held[3].clone());
        let mut both: Vec<Knight> = one.iter().chain(&three).copied().collect();
        both.reverse();
        let (x, y) = both.split_at(one.len());
        b.joust.held[1] = x.to_vec();
        b.joust.held[1].sort_unstable();
        b.joust.held[3] = y.to_vec();
        b.joust.held[3].sort_unstable();
        b.rng = DeckRng::new(&Seed([99; 32]));
        assert_ne!(a, b, "the matches differ");
        assert_eq!(a.info(Seat(0)), b.info(Seat(0)));
        assert_eq!(a.info(Seat(0)).seat(), Seat(0));
    }

    #[test]
    fn determinizations_agree_with_everything_the_seat_knows() {
        for seed in 0..20u8 {
            let (mut game, _) = Game::new(&setup(seed)).unwrap();
            play(&mut game, 12 + usize::from(seed) * 3, usize::from(seed));
            let Status::InProgress { to_move } = game.status() else { continue };
            let seat = to_move[0];
            let info = game.info(seat);
            let mut rng = DeckRng::new(&Seed([seed; 32]));
            for _ in 0..10 {
                let drawn = Game::determinize(&info, &mut rng);
                // What the seat sees is exactly what it saw.
                assert_eq!(drawn.view(Viewer::Seat(seat)), game.view(Viewer::Seat(seat)), "seed {seed}");
                assert_eq!(drawn.legal_moves(seat), game.legal_moves(seat), "seed {seed}");
                // Every knight once; nobody holds a family it failed to follow.
                let mut all: Vec<Knight> = drawn.joust.dealt.iter().flatten().copied().collect();
                all.sort_unstable();
                all.dedup();
                assert_eq!(all.len(), 52);
                let void = voids(&game);
                for other in Seat::all(SEATS) {
                    for knight in &drawn.joust.held[other.index()] {
                        assert!(!void[other.index()][family_index(knight.family)], "seed {seed}: {other:?} holds {knight:?}");
                    }
                }
                // It plays on.
                let mut next = drawn.clone();
                play(&mut next, 30, 2);
            }
        }
    }
}
