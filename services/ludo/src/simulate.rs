//! `ludo simulate`: tournaments between bot levels, offline, over every core.
//!
//! Seats are balanced: in game `g`, seat `s` is played by the
//! `(s + g) mod n`-th of the `n` levels given, so every level sits in every
//! seat equally often over the run (and in Battle 13 with two levels, each
//! camp is one level). A game's win is shared among its winning seats; a
//! level's win rate is its share of the wins, with a 95% Wilson interval.
//!
//! Games are played on the engines directly, each bot seeing only its
//! seat's information set. With `--records DIR` each game is played through
//! the game service instead (an in-memory store, the same durable path as
//! the server's: records hashed and chained, the seed committed) and its
//! export written to `DIR/game-N.ndjson`, which `ludo verify` checks.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ludo_bots::{Bot, Budget, Level, Playable, play_out};
use ludo_engine::{Engine, Outcome, Seed, Setup, Status};

/// A game's length is bounded: a bug may not loop forever.
const MAX_MOVES: usize = 20_000;

#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The game: its kind's id (cardinal, kardinal, battle13 …; see `GET /v1/kinds`).
    #[arg(long)]
    game: String,
    /// Seats at the table (default: the fewest the game takes).
    #[arg(long)]
    players: Option<usize>,
    /// The levels that play, comma-separated (random, greedy, strong),
    /// rotated over the seats from game to game.
    #[arg(long, value_delimiter = ',', default_value = "greedy,random")]
    bots: Vec<Level>,
    /// Games to play.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Search iterations per move of a strong bot (a greedy bot samples a
    /// tenth as many worlds).
    #[arg(long, default_value_t = Budget::default().iterations)]
    iterations: u32,
    /// Longest a strong bot thinks per move, in milliseconds (0: only the
    /// iterations bound it, and runs repeat exactly for a given --seed).
    #[arg(long, default_value_t = 200)]
    think_ms: u64,
    /// Random moves a strong bot's playout makes before it scores the
    /// position (default: the game's: 8 for Cardinal and Kardinal & König,
    /// 64 for Battle 13).
    #[arg(long)]
    playout_depth: Option<u32>,
    /// Seed of the run: deals and bots' choices follow from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write each game's export (verifiable with `ludo verify`) into this
    /// directory, playing it through the game service.
    #[arg(long)]
    records: Option<PathBuf>,
}

/// What one game came to.
struct Played {
    /// The level of each seat.
    levels: Vec<Level>,
    outcome: Outcome,
    moves: usize,
}

/// Runs the tournament and answers its report.
pub fn run(args: &SimulateArgs) -> Result<String, String> {
    let kind = ludo_record::kinds::kind(&args.game).ok_or_else(|| format!("unknown game `{}`: {}", args.game, known_kinds()))?;
    let players = args.players.unwrap_or(kind.min_players);
    if !(kind.min_players..=kind.max_players).contains(&players) {
        return Err(format!("{} takes {} to {} players, not {players}", kind.name, kind.min_players, kind.max_players));
    }
    if args.bots.is_empty() || args.games == 0 {
        return Err("--bots needs at least one level and --games at least 1".into());
    }
    if args.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    if let Some(dir) = &args.records {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let budget = Budget {
        iterations: args.iterations,
        time: (args.think_ms > 0).then(|| Duration::from_millis(args.think_ms)),
        playout_depth: args.playout_depth,
    };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, 256);
    let progress = indicatif::ProgressBar::new(args.games as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} games, {per_sec}, eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let results: Vec<Result<Played, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let game = next.fetch_add(1, Ordering::Relaxed);
                        if game >= args.games {
                            return done;
                        }
                        done.push(one_game(args, players, budget, game));
                        progress.inc(1);
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|_| vec![Err("a worker thread panicked".to_string())])).collect()
    });
    progress.finish_and_clear();
    let elapsed = started.elapsed();
    let played: Vec<Played> = results.into_iter().collect::<Result<_, _>>()?;
    Ok(report(args, kind.name, players, &played, elapsed))
}

/// The listed kinds' ids: `cardinal, kardinal or battle13`.
fn known_kinds() -> String {
    let ids: Vec<&str> = ludo_record::kinds::KINDS.iter().map(|k| k.id).collect();
    match ids.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn game_seed(run: u64, game: usize) -> Seed {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&run.to_le_bytes());
    bytes[8..16].copy_from_slice(&(game as u64).to_le_bytes());
    bytes[16..24].copy_from_slice(b"simulate");
    Seed(bytes)
}

fn one_game(args: &SimulateArgs, players: usize, budget: Budget, game: usize) -> Result<Played, String> {
    let levels: Vec<Level> = (0..players).map(|s| args.bots[(s + game) % args.bots.len()]).collect();
    let bot_seed = args.seed.wrapping_mul(1_000_003).wrapping_add(game as u64 * 16);
    let mut bots: Vec<Bot> = levels.iter().enumerate().map(|(s, &level)| Bot::new(level, budget, bot_seed + s as u64)).collect();
    let (outcome, moves) = match &args.records {
        Some(dir) => served(&args.game, players, &mut bots, &dir.join(format!("game-{game}.ndjson")))?,
        None => {
            let seed = game_seed(args.seed, game);
            macro_rules! by_kind {
                ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
                    match args.game.as_str() {
                        $(kind if kind == <ludo_record::engines::$krate::Game as Engine>::KIND => direct::<ludo_record::engines::$krate::Game>(players, seed, &mut bots)?,)*
                        other => return Err(format!("no bots for `{other}`")),
                    }
                };
            }
            ludo_record::for_each_game!(by_kind)
        }
    };
    Ok(Played { levels, outcome, moves })
}

/// A game on the engine itself.
fn direct<E: Playable>(players: usize, seed: Seed, bots: &mut [Bot]) -> Result<(Outcome, usize), String>
where
    E::Options: Default,
{
    let (mut game, _) = E::new(&Setup { players, options: E::Options::default(), seed }).map_err(|e| e.to_string())?;
    let moves = play_out(&mut game, bots, MAX_MOVES)?;
    match game.status() {
        Status::Finished { result } => Ok((result, moves)),
        Status::InProgress { .. } => Err(format!("a game did not end within {MAX_MOVES} moves")),
    }
}

/// A game through the game service on an in-memory store, its export
/// written to `path`.
fn served(kind: &str, players: usize, bots: &mut [Bot], path: &std::path::Path) -> Result<(Outcome, usize), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let store = Arc::new(ludo_storage::MemoryStore::new());
        let service = ludo_game::GameService::new(store, Arc::new(ludo_game::SystemClock));
        // Each seat is recorded as the bot that plays it, and each move as that bot's.
        let names: Vec<ludo_game::api::Player> = (0..players)
            .map(|s| {
                let level = ludo_record::bot::BotLevel::from(bots[s].level());
                ludo_game::api::Player::bot(
                    format!("{} {}", bots[s].level(), s + 1),
                    ludo_record::bot::BotRequest { level, think_ms: Some(0) },
                )
            })
            .collect();
        let created = service.create(ludo_game::api::CreateGame::new(kind, names)).await.map_err(|e| e.to_string())?;
        let id: ludo_game::GameId = created.id.parse().map_err(|e: ludo_game::ServiceError| e.to_string())?;
        let mut moves = 0;
        let outcome = loop {
            let state = service.get(&id, None).await.map_err(|e| e.to_string())?;
            let seat = match state.status {
                ludo_record::Status::Finished { result, .. } => break result,
                ludo_record::Status::InProgress { to_move, .. } if moves < MAX_MOVES => to_move[0],
                ludo_record::Status::InProgress { .. } => return Err(format!("a game did not end within {MAX_MOVES} moves")),
                other => return Err(format!("a game of bots stood {other:?}")),
            };
            let bot = bots[seat.index()].clone();
            let (mv, version, bot) = service.bot_move_for_bot(&id, seat, bot).await.map_err(|e| e.to_string())?;
            bots[seat.index()] = bot;
            let mv = mv.ok_or_else(|| format!("seat {} is to move but its bot found no move", seat.index()))?;
            let submission = ludo_game::api::Submission {
                mv: ludo_game::api::MoveInput::Typed(mv),
                expected_version: Some(version),
                request_id: None,
                answer: ludo_game::api::Answer::Minimal,
            };
            service.submit_for_bot(&id, seat, submission).await.map_err(|e| e.to_string())?;
            moves += 1;
        };
        let export = service.export(&id, None).await.map_err(|e| e.to_string())?;
        std::fs::write(path, export).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        service.shutdown().await.map_err(|e| e.to_string())?;
        Ok((outcome, moves))
    })
}

/// The 95% Wilson score interval of a proportion `p` over `n` trials.
fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z = 1.959_964;
    let denominator = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denominator;
    let half = z * ((p * (1.0 - p) / n) + z * z / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn report(args: &SimulateArgs, name: &str, players: usize, played: &[Played], elapsed: Duration) -> String {
    let games = played.len() as f64;
    let mut distinct = Vec::new();
    for &level in &args.bots {
        if !distinct.contains(&level) {
            distinct.push(level);
        }
    }
    let mut out = format!(
        "{name}, {players} players, {} games, levels {} rotated over the seats; strong: {} iterations{}\n",
        played.len(),
        args.bots.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
        args.iterations,
        if args.think_ms > 0 { format!(" or {} ms a move", args.think_ms) } else { String::new() },
    );
    out.push_str("level   | win share | 95% interval     | mean score | seats played\n");
    for level in distinct {
        let mut wins = 0.0;
        let (mut score, mut seats) = (0.0, 0usize);
        for game in played {
            let winners = game.outcome.winners.len().max(1) as f64;
            wins += game.outcome.winners.iter().filter(|w| game.levels.get(w.index()) == Some(&level)).count() as f64 / winners;
            for (seat, _) in game.levels.iter().enumerate().filter(|(_, l)| **l == level) {
                score += f64::from(game.outcome.scores.get(seat).copied().unwrap_or(0));
                seats += 1;
            }
        }
        let share = wins / games;
        let (low, high) = wilson(share, games);
        let mean = if seats == 0 { 0.0 } else { score / seats as f64 };
        out.push_str(&format!(
            "{:<7} | {:>8.1}% | {:>5.1}% – {:>5.1}% | {:>10.2} | {seats}\n",
            level.name(),
            share * 100.0,
            low * 100.0,
            high * 100.0,
            mean
        ));
    }
    let moves: usize = played.iter().map(|p| p.moves).sum();
    out.push_str(&format!(
        "mean game length {:.1} moves; {:.2} games/s ({:.1} s){}",
        moves as f64 / games,
        games / elapsed.as_secs_f64().max(1e-9),
        elapsed.as_secs_f64(),
        match &args.records {
            Some(dir) => format!("; exports in {}", dir.display()),
            None => String::new(),
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wilson_interval_brackets_the_share() {
        let (low, high) = wilson(0.9, 500.0);
        assert!((0.87..0.9).contains(&low) && (0.9..0.93).contains(&high), "{low} {high}");
        // All won: the interval reaches 1 and starts well below it.
        let (low, high) = wilson(1.0, 10.0);
        assert!((high - 1.0).abs() < 1e-9 && (0.69..0.73).contains(&low), "{low} {high}");
        let (low, high) = wilson(0.0, 10.0);
        assert!(low.abs() < 1e-9 && (0.27..0.31).contains(&high), "{low} {high}");
    }
}
