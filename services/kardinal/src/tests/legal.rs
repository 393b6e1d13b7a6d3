//! The canonical legal-move list against a brute force: every spelling of
//! every placement is run through the checker; the distinct outcomes
//! (cards spent, pieces placed) must be exactly those the generator lists,
//! each listed once.

use std::collections::BTreeSet;

use ludo_engine::{DeckRng, Engine, Seat, Seed, Setup};

use super::*;
use crate::country::Piece;

type Outcome = (Cards, Vec<(Piece, Country, Option<u8>)>);

fn key(g: &Game, seat: Seat, pieces: &[Placement]) -> Option<Outcome> {
    let plan = g.check_place(seat, pieces).ok()?;
    let mut placed = plan.pieces.clone();
    placed.sort();
    Some((plan.spent, placed))
}

/// Every single piece spelling worth trying: each country, each free site or
/// the seal, each payment made of held cards (valid or not).
fn singles(g: &Game, seat: Seat) -> Vec<Placement> {
    let hand = g.hands[seat.index()];
    let mut pays: Vec<Vec<CardKind>> = Vec::new();
    for k in CardKind::ALL {
        if hand.count(k) >= 1 {
            pays.push(vec![k]);
        }
        if hand.count(k) >= 2 {
            pays.push(vec![k, k]);
        }
    }
    let mut out = Vec::new();
    for c in Country::ALL {
        let free = g.board.country_sites[c.index()] & !g.occupied;
        for pay in &pays {
            for site in crate::board::bits(free) {
                out.push(abbey(c, g.board.site_id(site), pay));
            }
            out.push(counsellor(c, pay));
        }
    }
    out
}

fn brute_force(g: &Game, seat: Seat) -> BTreeSet<Outcome> {
    let singles = singles(g, seat);
    let mut found = BTreeSet::new();
    for a in &singles {
        if let Some(k) = key(g, seat, std::slice::from_ref(a)) {
            found.insert(k);
        }
        for b in &singles {
            if let Some(k) = key(g, seat, &[a.clone(), b.clone()]) {
                found.insert(k);
            }
        }
    }
    found
}

fn generated(g: &Game, seat: Seat) -> BTreeSet<Outcome> {
    let mut set = BTreeSet::new();
    for m in g.legal_moves(seat) {
        if let Move::Place { pieces } = m {
            let k = key(g, seat, &pieces).expect("a listed move is valid");
            assert!(set.insert(k), "two listed placements have the same outcome: {pieces:?}");
        }
    }
    set
}

fn compare_along_random_games(variant: Variant, players: usize, games: u64, every: usize) {
    let mut checked = 0;
    for n in 0..games {
        let options = Options { first_seat: None, variant, board: None };
        let (mut g, _) = Game::new(&Setup { players, options, seed: Seed([n as u8 + 100; 32]) }).unwrap();
        let mut chooser = DeckRng::new(&Seed([n as u8; 32]));
        let mut step = 0;
        while let Some(&seat) = g.status().to_move().first() {
            if g.step() == Step::Act {
                if step % every == 0 {
                    assert_eq!(generated(&g, seat), brute_force(&g, seat), "variant {variant:?}, game {n}, turn {step}");
                    checked += 1;
                }
                step += 1;
            }
            let moves = g.legal_moves(seat);
            let mv = moves[chooser.below(moves.len() as u32) as usize].clone();
            g.apply(seat, &mv).unwrap();
        }
    }
    assert!(checked > 100, "only {checked} positions checked");
}

#[test]
fn legal_placements_are_complete_and_unique_standard() {
    compare_along_random_games(Variant::Standard, 4, 12, 2);
}

#[test]
fn legal_placements_are_complete_and_unique_dynamic() {
    compare_along_random_games(Variant::Dynamic, 3, 8, 2);
}

#[test]
fn legal_placements_with_three_of_a_kind_and_busy_board() {
    for variant in [Variant::Standard, Variant::Dynamic] {
        let mut g = game_with(5, variant);
        for c in Country::ALL {
            g.put_abbeys(s(1), c, 2);
            g.put_abbeys(s(2), c, 1);
        }
        g.put_counsellors(s(3), Country::France, 1);
        for hand in [[LI, LI, LI], [FA, FA, FR], [FR, FR, FR], [ES, BB, LI]] {
            g.set_hand(s(0), &hand);
            assert_eq!(generated(&g, s(0)), brute_force(&g, s(0)), "{variant:?} {hand:?}");
        }
    }
}

/// Every 3-card hand (35 multisets).
fn all_hands() -> Vec<[CardKind; 3]> {
    let mut hands = Vec::new();
    for a in 0..5 {
        for b in a..5 {
            for c in b..5 {
                hands.push([CardKind::ALL[a], CardKind::ALL[b], CardKind::ALL[c]]);
            }
        }
    }
    hands
}

/// The largest legal-move lists: every hand, on boards where every
/// country is open (an opponent's abbey in each, so two pieces may go
/// anywhere) with the most free sites, with and without room for two counsellors.
#[test]
fn legal_move_lists_stay_bounded_in_the_worst_case() {
    for (variant, bound) in [(Variant::Standard, 400), (Variant::Dynamic, 2_500)] {
        let mut worst = (0, Vec::new());
        for opponent_abbeys in [1, 2] {
            let mut g = game_with(5, variant);
            for c in Country::ALL {
                g.put_abbeys(s(1 + (c.index() % 4) as u8), c, opponent_abbeys);
            }
            for hand in all_hands() {
                g.set_hand(s(0), &hand);
                let n = g.legal_moves(s(0)).len();
                if n > worst.0 {
                    worst = (n, hand.to_vec());
                }
            }
        }
        eprintln!("{variant:?}: worst legal list {} moves, hand {:?}", worst.0, worst.1);
        assert!(worst.0 <= bound, "{variant:?}: {} legal moves", worst.0);
    }
}
