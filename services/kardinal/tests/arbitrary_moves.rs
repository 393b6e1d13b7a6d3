//! Any `Move` value, by any seat, in any position: never a panic; a refusal
//! leaves the state exactly as it was; an accepted move (perhaps an unusual
//! spelling) has the same result as one of the listed legal moves.

use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{Engine, Seat, Setup};
use ludo_kardinal::{Board, CardKind, Country, Game, Move, Options, Piece, Placement, Source, Variant};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Positions met along a few random games of every size and variant.
fn positions() -> Vec<Game> {
    let mut states = Vec::new();
    for (n, (players, variant)) in
        [(3, Variant::Standard), (4, Variant::Standard), (5, Variant::Standard), (3, Variant::Dynamic), (5, Variant::Dynamic)]
            .into_iter()
            .enumerate()
    {
        for g in 0..3u64 {
            let setup = Setup { players, options: Options { variant, ..Options::default() }, seed: test_seed(n as u64 * 10 + g) };
            let mut all = Vec::new();
            random_playout::<Game>(&setup, g, 2_000, |state, _| all.push(state.clone()));
            states.extend(all.into_iter().step_by(3));
        }
    }
    states
}

fn any_move(sites: Vec<String>) -> impl Strategy<Value = Move> {
    let card = prop::sample::select(CardKind::ALL.to_vec());
    let country = prop::sample::select(Country::ALL.to_vec());
    let piece = prop::sample::select(vec![Piece::Abbey, Piece::Counsellor]);
    let site = prop::option::weighted(0.85, prop_oneof![4 => prop::sample::select(sites), 1 => "[a-z-]{0,8}"]);
    let placement = (piece, country, site, prop::collection::vec(card.clone(), 0..4))
        .prop_map(|(piece, country, site, paid_with)| Placement { piece, country, site, paid_with });
    let source = prop::sample::select(vec![Source::Deck, Source::Display0, Source::Display1]);
    prop_oneof![
        6 => prop::collection::vec(placement, 0..4).prop_map(|pieces| Move::Place { pieces }),
        1 => Just(Move::DrawDeck {}),
        1 => (0u8..4).prop_map(|slot| Move::TakeDisplay { slot }),
        2 => (card, source).prop_map(|(discard, take)| Move::Exchange { discard, take }),
        1 => Just(Move::Pass {}),
    ]
}

/// Equal states, the display's order aside (taking either of two identical
/// display cards is accepted; only one of them is listed).
fn same_result(a: &Game, b: &Game) -> bool {
    use ludo_engine::Viewer;
    let norm = |g: &Game| {
        let mut v = g.view(Viewer::Omniscient);
        v.display.sort_by_key(|d| d.card);
        for (i, d) in v.display.iter_mut().enumerate() {
            d.slot = i as u8;
        }
        v
    };
    norm(a) == norm(b)
}

#[test]
fn any_move_is_refused_cleanly_or_matches_a_listed_move() {
    let states = positions();
    let sites: Vec<String> = Board::embedded().sites.into_iter().map(|s| s.id).collect();
    let mut runner = TestRunner::new(Config { cases: 4_000, failure_persistence: None, ..Config::default() });
    // Half the cases respell a listed move (pieces reversed, payments
    // swapped), half are free-form; most are by the seat to move.
    let respell = prop::option::of((any::<prop::sample::Index>(), any::<bool>(), any::<bool>()));
    let strategy = (0..states.len(), 0u8..6, any::<bool>(), any_move(sites), respell);
    let accepted = std::cell::Cell::new(0u32);
    runner
        .run(&strategy, |(i, seat, own_turn, mv, respell)| {
            let before = &states[i];
            let to_move = before.status().to_move().first().copied();
            let seat = match to_move {
                Some(s) if own_turn => s,
                _ => Seat(seat),
            };
            let mv = match (respell, to_move) {
                (Some((pick, reverse, swap)), Some(s)) => {
                    let legal = before.legal_moves(s);
                    let mut mv = legal[pick.index(legal.len())].clone();
                    if let Move::Place { pieces } = &mut mv {
                        if reverse {
                            pieces.reverse();
                        }
                        if swap && pieces.len() == 2 {
                            let first = pieces[0].paid_with.clone();
                            pieces[0].paid_with = std::mem::replace(&mut pieces[1].paid_with, first);
                        }
                    }
                    mv
                }
                _ => mv,
            };
            let mut after = before.clone();
            match after.apply(seat, &mv) {
                Err(_) => prop_assert_eq!(&after, before, "a refused move changed the state"),
                Ok(_) => {
                    accepted.set(accepted.get() + 1);
                    let matched = before.legal_moves(seat).iter().any(|legal| {
                        let mut probe = before.clone();
                        probe.apply(seat, legal).is_ok() && same_result(&probe, &after)
                    });
                    prop_assert!(matched, "accepted {:?} matches no listed move", mv);
                }
            }
            Ok(())
        })
        .unwrap();
    let accepted = accepted.get();
    eprintln!("{accepted} of 4000 moves were accepted");
    assert!(accepted > 50, "only {accepted} arbitrary moves were legal: the generator is too wild");
}
