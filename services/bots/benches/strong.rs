//! How long the strong bot thinks per move at its default budget, for each
//! game (median and p99 over positions taken from random games), and how
//! many playouts it runs per second on one core. Prints; asserts nothing.
//!
//! `cargo bench -p ludo-bots --bench strong` (release).

use std::time::Instant;

use ludo_bots::{Bot, Budget, Level, Playable};
use ludo_engine::{Seed, Setup};

/// Positions measured per game.
const POSITIONS: usize = 60;

fn positions<E: Playable>(players: usize) -> Vec<E>
where
    E::Options: Default,
{
    let mut out = Vec::new();
    let mut n = 0u8;
    while out.len() < POSITIONS {
        n = n.wrapping_add(1);
        let (mut game, _) = E::new(&Setup { players, options: E::Options::default(), seed: Seed([n; 32]) }).expect("set-up");
        let mut random = Bot::new(Level::Random, Budget::default(), u64::from(n));
        // Positions from the opening to late in the game.
        let stop = usize::from(n) * 7 % 90;
        for _ in 0..stop {
            let Some(&seat) = game.status().to_move().first() else { break };
            let Some(mv) = random.choose::<E>(seat, &game.info(seat)) else { break };
            game.apply(seat, &mv).expect("legal");
        }
        let Some(&seat) = game.status().to_move().first() else { continue };
        if game.legal_moves(seat).len() > 1 {
            out.push(game);
        }
    }
    out
}

fn measure<E: Playable>(name: &str, players: usize)
where
    E::Options: Default,
{
    let mut times = Vec::new();
    let (mut playouts, mut thinking) = (0u64, 0.0f64);
    for (i, game) in positions::<E>(players).into_iter().enumerate() {
        let seat = game.status().to_move()[0];
        let info = game.info(seat);
        let mut bot = Bot::new(Level::Strong, Budget::default(), i as u64);
        let started = Instant::now();
        let chosen = bot.choose::<E>(seat, &info);
        let took = started.elapsed().as_secs_f64();
        assert!(chosen.is_some());
        times.push(took * 1000.0);
        playouts += u64::from(bot.last_iterations());
        thinking += took;
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:<17} strong, default budget ({} iterations or {} ms): median {:.1} ms, p99 {:.1} ms over {} positions; {:.0} playouts/s on one core",
        Budget::default().iterations,
        Budget::default().time.map_or(0, |t| t.as_millis()),
        at(0.5),
        at(0.99),
        times.len(),
        playouts as f64 / thinking
    );
}

fn main() {
    measure::<ludo_cardinal::Game>("Cardinal (2)", 2);
    measure::<ludo_kardinal::Game>("Kardinal (3)", 3);
    measure::<ludo_battle13::Game>("Battle 13 (4)", 4);
}
