//! Throughput of the Battle 13 engine: random full matches per second, and
//! replays of recorded matches per second (what the service does to rebuild
//! a game from its log).
//!
//! `cargo bench -p ludo-battle13 --bench playout`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ludo_battle13::{Game, Move, Options};
use ludo_engine::testkit::test_seed;
use ludo_engine::{DeckRng, Engine, Seat, Setup};

fn setup(n: u64, target_crowns: u32) -> Setup<Options> {
    Setup { players: 4, options: Options { first_seat: None, target_crowns }, seed: test_seed(n) }
}

/// Plays match `n` to the end choosing uniformly among the legal moves, or
/// passing two times in three when a pass is legal (`pass_often`: lower
/// contracts, so more jousts per match). Returns the moves.
fn play(n: u64, target: u32, pass_often: bool) -> Vec<(Seat, Move)> {
    let (mut game, _) = Game::new(&setup(n, target)).expect("set-up");
    let mut chooser = DeckRng::new(&test_seed(n ^ 0xB13));
    let mut record = Vec::new();
    while let Some(&seat) = game.status().to_move().first() {
        let legal = game.legal_moves(seat);
        let mv = if pass_often && legal.contains(&Move::Pass) && chooser.below(3) > 0 {
            Move::Pass
        } else {
            legal[chooser.below(legal.len() as u32) as usize]
        };
        game.apply(seat, &mv).expect("legal");
        record.push((seat, mv));
    }
    record
}

/// Rebuilds a match from its set-up and moves.
fn replay(setup: &Setup<Options>, record: &[(Seat, Move)]) -> Game {
    let (mut game, _) = Game::new(setup).expect("set-up");
    for (seat, mv) in record {
        game.apply(*seat, mv).expect("recorded move");
    }
    game
}

fn matches(c: &mut Criterion) {
    let mut group = c.benchmark_group("battle13");
    group.throughput(Throughput::Elements(1));
    let mut n = 0;
    group.bench_function("random match to 20 crowns (uniform)", |b| {
        b.iter(|| {
            n += 1;
            black_box(play(n, 20, false))
        });
    });
    group.bench_function("random match to 50 crowns (pass often)", |b| {
        b.iter(|| {
            n += 1;
            black_box(play(n, 50, true))
        });
    });
    // A fixed long record: a match to 100 crowns.
    let record = play(7, 100, true);
    let setup = setup(7, 100);
    let jousts = replay(&setup, &record).view(ludo_engine::Viewer::Omniscient).history.len();
    eprintln!("replayed record: {} moves, {jousts} jousts", record.len());
    group.bench_function("replay a record to 100 crowns", |b| b.iter(|| black_box(replay(&setup, &record))));
    group.finish();
}

criterion_group!(benches, matches);
criterion_main!(benches);
