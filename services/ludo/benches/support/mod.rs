//! Shared by the benchmarks that drive a server.

use ludo_engine::{Engine, Seat, Seed, Setup, Status};
use serde_json::Value;

/// A whole Cardinal game's moves for `players` seats (first seat 0, so the
/// game does not depend on its seed), computed with the engine: (seat, move
/// JSON). `salt` picks among the legal moves (xorshift).
pub fn playout(players: usize, salt: u64) -> Vec<(usize, Value)> {
    let setup = Setup { players, options: ludo_cardinal::Options { first_seat: Some(Seat(0)) }, seed: Seed([0; 32]) };
    let (mut game, _) = ludo_cardinal::Game::new(&setup).expect("set-up");
    let mut state = salt | 1;
    let mut moves = Vec::new();
    while let Status::InProgress { to_move } = game.status() {
        let seat = to_move[0];
        let legal = game.legal_moves(seat);
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mv = legal[(state % legal.len() as u64) as usize].clone();
        game.apply(seat, &mv).expect("a legal move");
        moves.push((seat.index(), serde_json::to_value(&mv).expect("moves serialize")));
    }
    moves
}
