//! Any `Move` value whatsoever, by any seat, in any reachable state: the
//! engine never panics, accepts only listed moves, and a refusal leaves the
//! state untouched.

use ludo_cardinal::{Colour, Game, Move, Options, Orientation, Shape};
use ludo_engine::testkit::{chooser_seed_bytes, test_seed};
use ludo_engine::{DeckRng, Engine, Seat, Setup, Status};
use proptest::prelude::*;

/// A state reached by `steps` random legal moves (or the end of the game).
fn reached(players: usize, seed: u64, steps: usize) -> Game {
    let (mut game, _) = Game::new(&Setup { players, options: Options::default(), seed: test_seed(seed) }).unwrap();
    let mut chooser = DeckRng::new(&chooser_seed_bytes(seed));
    for _ in 0..steps {
        let Status::InProgress { to_move } = game.status() else {
            break;
        };
        let moves = game.legal_moves(to_move[0]);
        let mv = moves[chooser.below(moves.len() as u32) as usize].clone();
        game.apply(to_move[0], &mv).unwrap();
    }
    game
}

fn coordinate() -> impl Strategy<Value = i32> {
    prop_oneof![6 => -6i32..8, 1 => any::<i32>(), 1 => Just(i32::MAX), 1 => Just(i32::MIN), 1 => Just(i32::MAX - 1)]
}

fn colour() -> impl Strategy<Value = Colour> {
    prop_oneof![4 => 0u8..4, 1 => any::<u8>()].prop_map(Colour)
}

fn any_move() -> impl Strategy<Value = Move> {
    let build = (
        prop::sample::select(Shape::ALL.to_vec()),
        colour(),
        coordinate(),
        coordinate(),
        prop::option::of(prop::sample::select(Orientation::ALL.to_vec())),
        prop::option::of(colour()),
    )
        .prop_map(|(shape, colour, x, y, orientation, bonus_colour)| Move::Build { shape, colour, x, y, orientation, bonus_colour });
    prop_oneof![
        6 => build,
        2 => (coordinate(), coordinate()).prop_map(|(x, y)| Move::MoveCardinal { x, y }),
        1 => Just(Move::KeepCardinal),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_move_is_accepted_only_if_listed(
        players in 2usize..=4,
        seed in 0u64..500,
        steps in 0usize..60,
        seat in 0u8..6,
        mv in any_move(),
    ) {
        let game = reached(players, seed, steps);
        let seat = Seat(seat);
        let listed = game.legal_moves(seat).contains(&mv);
        let mut probe = game.clone();
        match probe.apply(seat, &mv) {
            Ok(_) => prop_assert!(listed, "{:?} by {} accepted but not listed", mv, seat),
            Err(err) => {
                prop_assert!(!listed, "{:?} by {} listed but refused: {}", mv, seat, err);
                prop_assert_eq!(&probe, &game);
            }
        }
    }
}
