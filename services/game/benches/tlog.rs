//! The transparency log against the moves it must keep up with, on the
//! in-memory store and on sled, in one run so the ratios mean something:
//!
//! - the durable move rate of the game service (64 Cardinal games played
//!   at once with legal moves, each game that ends adding its leaf as the
//!   service does), before the leaves and after the proofs: the baseline;
//! - leaves added per second through `TransparencyLog::append` by 64 tasks
//!   at once (so appends batch), up to a million leaves, by stage;
//! - the time `TransparencyLog::open` takes (what a server's start waits
//!   for: the stored tree against its last checkpoint), beside the time
//!   `check_tree` takes to check the whole stored tree leaf by leaf (what
//!   the start waited for before, and what now runs in the background);
//! - inclusion (`receipt`) and consistency proofs at that size: the median
//!   over 1000 random leaves of a log just opened (cold: only the hashes
//!   earlier proofs of the pass read are cached) and the same 1000 again
//!   (warm).
//!
//! A plain `main` (no criterion): each figure is one long measurement.
//! `cargo bench -p ludo-game --bench tlog`; `LUDO_BENCH_LEAVES` and
//! `LUDO_BENCH_MOVES` change the sizes (default 1,000,000 and 50,000).
//! Everything runs in this process on a runtime of two workers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ludo_engine::Seat;
use ludo_game::api::{CreateGame, MoveInput, Submission};
use ludo_game::{GameId, GameService, LogSettings, SystemClock, TransparencyLog};
use ludo_record::status::Status;
use ludo_storage::{EventStore, MemoryStore, SledOptions, SledStore};
use ludo_transparency::{self as transparency, GameHead};
use serde_json::json;
use sha2::{Digest, Sha256};

/// Tasks appending (or playing) at once.
const TASKS: u64 = 64;
/// Proofs timed per pass.
const PROOFS: usize = 1000;
/// Where the append rate is reported.
const STAGES: [u64; 4] = [10_000, 100_000, 500_000, 1_000_000];

fn env_count(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(default)
}

/// A small deterministic generator (xorshift64), so every run times the
/// same games and the same proofs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Leaf `n`: the head of a finished two-player game, as the service writes it.
fn leaf(n: u64) -> String {
    let digest = Sha256::digest(n.to_be_bytes());
    let head = GameHead {
        game_id: format!("0193c3e4-5c2a-7c1e-9d3b-{:012x}", n),
        records: 30 + n % 20,
        last_hash: hex::encode(digest),
        ending: Status::Finished {
            result: ludo_engine::Outcome { scores: vec![(n % 40) as i32, (n % 17) as i32], winners: vec![Seat((n % 2) as u8)] },
            forfeits: vec![],
        }
        .ending(),
        imported: None,
    };
    head.leaf().expect("a finished game has a leaf")
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn per_second(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn p99(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() * 99 / 100]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// What one store measured.
struct Figures {
    store: &'static str,
    moves_per_s: f64,
    leaves_per_s: f64,
    /// Moves per game that ended.
    per_game: f64,
}

/// What the game service did.
struct Played {
    moves_per_s: f64,
    moves: u64,
    /// Games that ended, and the moves they took.
    ended: u64,
    moves_in_ended: u64,
}

/// `moves` legal moves submitted by 64 tasks, each playing two-player
/// Cardinal games one after the other.
async fn move_rate(service: Arc<GameService>, moves: u64) -> Played {
    let made = Arc::new(AtomicU64::new(0));
    let ended = Arc::new(AtomicU64::new(0));
    let moves_in_ended = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..TASKS {
        let (service, made, ended, moves_in_ended) =
            (Arc::clone(&service), Arc::clone(&made), Arc::clone(&ended), Arc::clone(&moves_in_ended));
        tasks.spawn(async move {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (task + 1));
            while made.load(Ordering::Relaxed) < moves {
                let request = CreateGame::new("cardinal", ["Ada", "Bo"]).with_options(json!({"first_seat": 0}));
                let game = service.create(request).await.expect("a game is created");
                let id: GameId = game.id.parse().expect("a game id");
                let mut status = game.status;
                let mut played = 0;
                while let Status::InProgress { to_move, .. } = &status {
                    if made.fetch_add(1, Ordering::Relaxed) >= moves {
                        return;
                    }
                    let seat = to_move[0].index();
                    let token = Some(game.seats[seat].token.as_str());
                    let legal = service.legal_moves(&id, token).await.expect("legal moves");
                    let mv = legal.moves[rng.below(legal.moves.len() as u64) as usize].clone();
                    let submission = Submission {
                        mv: MoveInput::Typed(mv),
                        expected_version: None,
                        request_id: None,
                        answer: ludo_game::api::Answer::Minimal,
                    };
                    status = service.submit(&id, token, submission).await.expect("a legal move is accepted").status;
                    played += 1;
                }
                ended.fetch_add(1, Ordering::Relaxed);
                moves_in_ended.fetch_add(played, Ordering::Relaxed);
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a player task");
    }
    let elapsed = start.elapsed();
    let made = made.load(Ordering::Relaxed).min(moves);
    Played {
        moves_per_s: per_second(made, elapsed),
        moves: made,
        ended: ended.load(Ordering::Relaxed),
        moves_in_ended: moves_in_ended.load(Ordering::Relaxed),
    }
}

/// `leaves` leaves appended by 64 tasks; prints the rate by stage and
/// answers the overall rate and the tree's size.
async fn append_rate(log: Arc<TransparencyLog>, leaves: u64) -> (f64, u64) {
    let next = Arc::new(AtomicU64::new(0));
    let stages: Vec<u64> = STAGES.iter().copied().filter(|&s| s < leaves).chain([leaves]).collect();
    let reached: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; stages.len()]));
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..TASKS {
        let (log, next, done, reached, stages) =
            (Arc::clone(&log), Arc::clone(&next), Arc::clone(&done), Arc::clone(&reached), stages.clone());
        tasks.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= leaves {
                    return;
                }
                log.append(leaf(n)).await.expect("the leaf is appended");
                let count = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(stage) = stages.iter().position(|&s| s == count) {
                    reached.lock().expect("stages lock")[stage] = Some(Instant::now());
                }
            }
        });
    }
    while let Some(finished) = tasks.join_next().await {
        finished.expect("an appending task");
    }
    let elapsed = start.elapsed();
    let reached = reached.lock().expect("stages lock").clone();
    let (mut from, mut at) = (0, start);
    for (stage, when) in stages.iter().zip(reached) {
        let when = when.expect("every stage is reached");
        println!(
            "    leaves {:>9} – {:>9}: {:>10.0} leaves/s  ({:.2} s)",
            from,
            stage,
            per_second(stage - from, when - at),
            (when - at).as_secs_f64()
        );
        (from, at) = (*stage, when);
    }
    let size = log.info().tree.expect("a tree").size;
    (per_second(leaves, elapsed), size)
}

fn report_moves(when: &str, played: &Played) {
    println!(
        "  game service ({when}): {} moves by {TASKS} games at once: {:.0} moves/s ({} games ended, {:.1} moves each, each adding its leaf)",
        played.moves,
        played.moves_per_s,
        played.ended,
        played.moves_in_ended as f64 / played.ended.max(1) as f64
    );
}

/// Opens the log anew over `store` (checked against its last checkpoint) and times it.
async fn open_timed(store: &Arc<dyn EventStore>) -> (TransparencyLog, Duration) {
    let start = Instant::now();
    let log = TransparencyLog::open(Arc::clone(store), &LogSettings::default(), now()).await.expect("the log opens");
    (log, start.elapsed())
}

/// Times `receipt(i, size)` for `indexes`, each call alone.
async fn time_receipts(log: &TransparencyLog, indexes: &[u64], size: u64) -> Vec<Duration> {
    let mut times = Vec::with_capacity(indexes.len());
    for &index in indexes {
        let start = Instant::now();
        let receipt = log.receipt(index, size).await.expect("a receipt");
        times.push(start.elapsed());
        std::hint::black_box(receipt);
    }
    times
}

/// Times `consistency(from, size)` for each of `froms`, each call alone.
async fn time_consistency(log: &TransparencyLog, froms: &[u64], size: u64) -> Vec<Duration> {
    let mut times = Vec::with_capacity(froms.len());
    for &from in froms {
        let start = Instant::now();
        let proof = log.consistency(from, size).await.expect("a consistency proof");
        times.push(start.elapsed());
        std::hint::black_box(proof);
    }
    times
}

async fn bench_store(name: &'static str, store: Arc<dyn EventStore>, leaves: u64, moves: u64) -> Figures {
    println!("\n== {name} ==");
    // The baseline: the game service's durable moves, on this store, before
    // the leaves and again after the proofs (the mean is the baseline; the
    // two show how steady the machine was meanwhile).
    let service = Arc::new(GameService::new(Arc::clone(&store), Arc::new(SystemClock)));
    let first = move_rate(Arc::clone(&service), moves).await;
    report_moves("before", &first);

    // Leaves, appended by 64 tasks at once (so they batch) to the same store.
    let log = Arc::new(TransparencyLog::open(Arc::clone(&store), &LogSettings::default(), now()).await.expect("the log opens"));
    let before = log.info().tree.map_or(0, |t| t.size);
    println!("  transparency log: {leaves} leaves by {TASKS} tasks at once (after the {before} the games added)");
    let (leaves_per_s, size) = append_rate(Arc::clone(&log), leaves).await;
    println!("    overall: {leaves_per_s:.0} leaves/s; the tree holds {size} leaves");
    drop(log);

    // Opening: the stored tree against its last checkpoint; then the whole
    // tree, leaf by leaf, as the start checked it before.
    let (fresh, opened) = open_timed(&store).await;
    println!("  open (the {size}-leaf tree against its last checkpoint): {}", ms(opened));
    let start = Instant::now();
    let checked = fresh.check_tree().await.expect("the whole tree checks out");
    let whole = start.elapsed();
    assert_eq!(checked, size);
    println!(
        "  the whole tree checked leaf by leaf (in the background since): {:.2} s ({:.0} leaves/s): {:.0}x the open",
        whole.as_secs_f64(),
        per_second(size, whole),
        whole.as_secs_f64() / opened.as_secs_f64()
    );
    drop(fresh);
    let (fresh, opened) = open_timed(&store).await;
    println!("  open again: {}", ms(opened));

    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let indexes: Vec<u64> = (0..PROOFS).map(|_| rng.below(size)).collect();
    let cold = time_receipts(&fresh, &indexes, size).await;
    let warm = time_receipts(&fresh, &indexes, size).await;
    // What was timed is a real proof.
    let receipt = fresh.receipt(indexes[0], size).await.expect("a receipt");
    let tree = transparency::open_checkpoint(&receipt.checkpoint, &receipt.key).expect("the checkpoint opens");
    transparency::check_inclusion(&receipt.leaf, receipt.leaf_index, &receipt.inclusion, &tree).expect("the proof checks out");
    println!(
        "  inclusion proof (receipt) at {size} leaves, {} hashes: median cold {} (p99 {}), warm {} (p99 {})",
        receipt.inclusion.len(),
        ms(median(cold.clone())),
        ms(p99(cold)),
        ms(median(warm.clone())),
        ms(p99(warm))
    );
    drop(fresh);

    let (fresh, reopened) = open_timed(&store).await;
    println!("  open again: {}", ms(reopened));
    let froms: Vec<u64> = (0..PROOFS).map(|_| 1 + rng.below(size - 1)).collect();
    let cold = time_consistency(&fresh, &froms, size).await;
    let warm = time_consistency(&fresh, &froms, size).await;
    println!(
        "  consistency proof to {size} leaves: median cold {} (p99 {}), warm {} (p99 {})",
        ms(median(cold.clone())),
        ms(p99(cold)),
        ms(median(warm.clone())),
        ms(p99(warm))
    );
    drop(fresh);

    let second = move_rate(Arc::clone(&service), moves).await;
    report_moves("after", &second);
    drop(service);
    let moves_per_s = (first.moves_per_s + second.moves_per_s) / 2.0;
    let per_game = (first.moves_in_ended + second.moves_in_ended) as f64 / (first.ended + second.ended).max(1) as f64;
    println!("  leaves/s ÷ moves/s (mean of both) = {:.2}", leaves_per_s / moves_per_s);
    println!("  leaves/s ÷ games ended/s at that move rate (one leaf per game) = {:.0}", leaves_per_s / (moves_per_s / per_game));
    Figures { store: name, moves_per_s, leaves_per_s, per_game }
}

fn main() {
    let leaves = env_count("LUDO_BENCH_LEAVES", 1_000_000).max(2);
    let moves = env_count("LUDO_BENCH_MOVES", 50_000).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let started = Instant::now();
    let figures = runtime.block_on(async {
        let mut figures = Vec::new();
        figures.push(bench_store("memory", Arc::new(MemoryStore::new()), leaves, moves).await);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sled: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path(), SledOptions::default()).expect("sled opens"));
        figures.push(bench_store("sled (flush)", Arc::clone(&sled), leaves, moves).await);
        let closing = Arc::clone(&sled);
        tokio::task::spawn_blocking(move || closing.close()).await.expect("close").expect("sled closes");
        figures
    });

    println!("\n== summary ==");
    println!("  {:<14} {:>10} {:>10} {:>20} {:>26}", "store", "moves/s", "leaves/s", "leaves/s ÷ moves/s", "leaves/s ÷ games ended/s");
    for f in &figures {
        println!(
            "  {:<14} {:>10.0} {:>10.0} {:>20.2} {:>26.0}",
            f.store,
            f.moves_per_s,
            f.leaves_per_s,
            f.leaves_per_s / f.moves_per_s,
            f.leaves_per_s / (f.moves_per_s / f.per_game)
        );
    }
    println!("  (whole run: {:.0} s)", started.elapsed().as_secs_f64());
}
