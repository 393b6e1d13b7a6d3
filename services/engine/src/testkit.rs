//! Checks every engine's property tests share (feature `testkit`).
//!
//! [`random_playout`] plays a whole game choosing uniformly among the legal
//! moves, and on the way checks the contract itself: a seat to move always
//! has a legal move, every listed move is accepted, a seat that is not to
//! move has no legal move and is refused without any change of state, and
//! replaying the accepted moves from the set-up rebuilds the same state and
//! the same effects. Game-specific invariants (conservation, hidden
//! information) are checked by the engine's own tests through the
//! `on_step` hook.

use crate::{DeckRng, Engine, MoveError, Seat, Seed, Setup, Status};

/// One accepted move of a playout.
#[derive(Clone, Debug)]
pub struct Step<E: Engine> {
    /// The seat that acted.
    pub seat: Seat,
    /// The move it made.
    pub mv: E::Move,
    /// What the engine reported.
    pub effects: Vec<E::Effect>,
}

/// A finished (or cut short) random game.
#[derive(Clone, Debug)]
pub struct Playout<E: Engine> {
    /// The effects of the set-up.
    pub setup_effects: Vec<E::Effect>,
    /// Every accepted move, in order.
    pub steps: Vec<Step<E>>,
    /// The state after the last move.
    pub state: E,
}

/// Plays one game from `setup`, choosing moves with a generator seeded by
/// `chooser_seed`, for at most `max_moves` moves; `on_step` sees the state
/// after every accepted move (and after set-up, with `None`).
///
/// # Panics
/// When the engine breaks the contract: that is the point of the check.
pub fn random_playout<E: Engine>(
    setup: &Setup<E::Options>,
    chooser_seed: u64,
    max_moves: usize,
    mut on_step: impl FnMut(&E, Option<&Step<E>>),
) -> Playout<E> {
    let (mut state, setup_effects) = E::new(setup).expect("set-up refused");
    let mut chooser = DeckRng::new(&chooser_seed_bytes(chooser_seed));
    let mut steps: Vec<Step<E>> = Vec::new();
    on_step(&state, None);
    while steps.len() < max_moves {
        let to_move = match state.status() {
            Status::Finished { .. } => break,
            Status::InProgress { to_move } => to_move,
        };
        assert!(!to_move.is_empty(), "in progress but nobody to move");
        for seat in Seat::all(setup.players) {
            let moves = state.legal_moves(seat);
            if to_move.contains(&seat) {
                assert!(!moves.is_empty(), "{seat} is to move but has no legal move");
            } else {
                assert!(moves.is_empty(), "{seat} is not to move but lists legal moves");
            }
        }
        check_refused_out_of_turn(&state, &to_move, setup.players);
        let seat = to_move[chooser.below(to_move.len() as u32) as usize];
        let moves = state.legal_moves(seat);
        let mv = moves[chooser.below(moves.len() as u32) as usize].clone();
        let effects = match state.apply(seat, &mv) {
            Ok(effects) => effects,
            Err(err) => panic!("listed legal move {mv:?} of {seat} refused: {err}"),
        };
        steps.push(Step { seat, mv, effects });
        on_step(&state, steps.last());
    }
    let playout = Playout { setup_effects, steps, state };
    check_replay(setup, &playout);
    playout
}

/// Replays a playout's moves from its set-up and checks that every effect
/// and the final state come out identical.
///
/// # Panics
/// When the replay diverges.
pub fn check_replay<E: Engine>(setup: &Setup<E::Options>, playout: &Playout<E>) {
    let (mut replayed, effects) = E::new(setup).expect("set-up refused on replay");
    assert_eq!(effects, playout.setup_effects, "set-up effects differ on replay");
    for (i, step) in playout.steps.iter().enumerate() {
        let effects = replayed.apply(step.seat, &step.mv).unwrap_or_else(|err| panic!("move {i} refused on replay: {err}"));
        assert_eq!(effects, step.effects, "effects of move {i} differ on replay");
    }
    assert_eq!(replayed, playout.state, "replayed state differs from the live one");
}

/// Every move a seat that is not to move could list (we borrow the to-move
/// seats' moves) must be refused as out of turn, leaving the state intact.
fn check_refused_out_of_turn<E: Engine>(state: &E, to_move: &[Seat], players: usize) {
    let Some(sample) = to_move.iter().find_map(|&s| state.legal_moves(s).into_iter().next()) else {
        return;
    };
    for seat in Seat::all(players).filter(|s| !to_move.contains(s)) {
        let mut probe = state.clone();
        match probe.apply(seat, &sample) {
            Err(MoveError::NotYourTurn { .. } | MoveError::Rule { .. }) => {}
            other => panic!("{seat} out of turn: expected a refusal, got {other:?}"),
        }
        assert_eq!(&probe, state, "a refused move changed the state");
    }
    let mut probe = state.clone();
    let stranger = Seat(players as u8);
    assert!(probe.apply(stranger, &sample).is_err(), "a seat not at the table was accepted");
    assert_eq!(&probe, state, "a refused move changed the state");
}

/// A seed for the move chooser (not the game's seed).
#[must_use]
pub fn chooser_seed_bytes(n: u64) -> Seed {
    let mut bytes = [0x5Au8; 32];
    bytes[..8].copy_from_slice(&n.to_le_bytes());
    Seed(bytes)
}

/// A game seed derived from a number, for tests.
#[must_use]
pub fn test_seed(n: u64) -> Seed {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&n.to_le_bytes());
    bytes[31] = 0xC0;
    Seed(bytes)
}
