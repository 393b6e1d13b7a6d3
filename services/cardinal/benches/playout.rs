//! Engine speed: random full playouts per second (2 and 4 players) and
//! replay speed of a recorded game (records per second).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ludo_cardinal::{Game, Move, Options};
use ludo_engine::testkit::{chooser_seed_bytes, test_seed};
use ludo_engine::{DeckRng, Engine, Seat, Setup, Status};

fn setup(players: usize, n: u64) -> Setup<Options> {
    Setup { players, options: Options::default(), seed: test_seed(n) }
}

/// Plays one game choosing uniformly among the legal moves, as a client
/// would: list the moves of the seat to act, submit one.
fn random_game(players: usize, n: u64) -> (Game, Vec<(Seat, Move)>) {
    let (mut game, _) = Game::new(&setup(players, n)).expect("set-up");
    let mut chooser = DeckRng::new(&chooser_seed_bytes(n));
    let mut record = Vec::with_capacity(64);
    while let Status::InProgress { to_move } = game.status() {
        let seat = to_move[0];
        let moves = game.legal_moves(seat);
        let mv = moves[chooser.below(moves.len() as u32) as usize].clone();
        game.apply(seat, &mv).expect("a listed move");
        record.push((seat, mv));
    }
    (game, record)
}

fn replay(players: usize, n: u64, record: &[(Seat, Move)]) -> Game {
    let (mut game, _) = Game::new(&setup(players, n)).expect("set-up");
    for (seat, mv) in record {
        game.apply(*seat, mv).expect("a recorded move");
    }
    game
}

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("cardinal/random_playout");
    group.throughput(Throughput::Elements(1));
    for players in [2, 4] {
        let mut n = 0;
        group.bench_function(format!("{players}p"), |b| {
            b.iter(|| {
                n += 1;
                black_box(random_game(players, n))
            });
        });
    }
    group.finish();
}

fn replays(c: &mut Criterion) {
    let mut group = c.benchmark_group("cardinal/replay");
    for players in [2, 4] {
        let (_, record) = random_game(players, 4242);
        group.throughput(Throughput::Elements(record.len() as u64));
        group.bench_function(format!("{players}p_{}_records", record.len()), |b| {
            b.iter(|| black_box(replay(players, 4242, black_box(&record))));
        });
    }
    group.finish();
}

criterion_group!(benches, playouts, replays);
criterion_main!(benches);
