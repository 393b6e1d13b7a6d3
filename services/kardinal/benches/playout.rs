//! Engine speed: random legal full games per second (3 and 5 players,
//! standard and dynamic variant) and replay speed in records per second.
//!
//! `cargo bench -p ludo-kardinal --bench playout`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ludo_engine::testkit::{chooser_seed_bytes, test_seed};
use ludo_engine::{DeckRng, Engine, Seat, Setup};
use ludo_kardinal::{Game, Move, Options, Variant};

fn setup(players: usize, variant: Variant, seed: u64) -> Setup<Options> {
    Setup { players, options: Options { variant, ..Options::default() }, seed: test_seed(seed) }
}

/// One random legal game, as a client would play it: list the moves, pick one, apply it.
fn playout(setup: &Setup<Options>, chooser: u64) -> Vec<(Seat, Move)> {
    let (mut game, _) = Game::new(setup).expect("set-up");
    let mut rng = DeckRng::new(&chooser_seed_bytes(chooser));
    let mut record = Vec::new();
    while let Some(&seat) = game.status().to_move().first() {
        let moves = game.legal_moves(seat);
        let mv = moves[rng.below(moves.len() as u32) as usize].clone();
        game.apply(seat, &mv).expect("a listed move");
        record.push((seat, mv));
    }
    record
}

fn replay(setup: &Setup<Options>, record: &[(Seat, Move)]) -> Game {
    let (mut game, _) = Game::new(setup).expect("set-up");
    for (seat, mv) in record {
        game.apply(*seat, mv).expect("a recorded move");
    }
    game
}

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("playout");
    group.throughput(Throughput::Elements(1));
    for (players, variant, name) in [
        (3, Variant::Standard, "3p"),
        (5, Variant::Standard, "5p"),
        (3, Variant::Dynamic, "3p-dynamic"),
        (5, Variant::Dynamic, "5p-dynamic"),
    ] {
        let mut n = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                black_box(playout(&setup(players, variant, n), n))
            });
        });
    }
    group.finish();
}

fn replays(c: &mut Criterion) {
    let mut group = c.benchmark_group("replay");
    for players in [3, 5] {
        let setup = setup(players, Variant::Standard, 7);
        let record = playout(&setup, 7);
        group.throughput(Throughput::Elements(record.len() as u64));
        group.bench_function(format!("{players}p-records"), |b| b.iter(|| black_box(replay(&setup, &record))));
    }
    group.finish();
}

criterion_group!(benches, playouts, replays);
criterion_main!(benches);
