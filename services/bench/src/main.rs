//! `ludo-bench`: the external load benchmark. It starts a release
//! `ludo serve` in its own process, drives it over loopback in bounded
//! loops, and prints what it measured beside the sled store's own durable
//! append rate measured in the same run (machines are noisy: the ratios are
//! what matter). With `--baseline` it runs the same suite against a second
//! binary (an older build) and prints after/before ratios.
//!
//! It asserts nothing about speed: the targets are printed beside
//! the figures. The bench's clients share the machine with the server, so
//! on a small machine the figures are a floor.

mod floor;
mod moves;
mod reads;
mod replicas;
mod report;
mod server;
mod store;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use moves::Answers;
use report::{LoadRow, Suite};
use server::Server;

#[derive(Parser)]
#[command(name = "ludo-bench", about = "Load benchmark of a ludo server binary, over loopback")]
struct Cli {
    /// The server binary to measure (default: the `ludo` beside this one).
    #[arg(long)]
    ludo: Option<PathBuf>,
    /// An older server binary to run the same suite against, for after/before ratios.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Seconds per timed phase.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Concurrent games (and raw store writers) per phase, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    concurrency: Vec<usize>,
    /// Also write every figure as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Measure replicas on a PostgreSQL store instead: a
    /// throwaway cluster, raw INSERT+COMMIT beside one and two replicas and
    /// sled, and the time for a move on one replica to reach a stream on
    /// the other.
    #[arg(long)]
    postgres: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("ludo-bench: cannot start a runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("ludo-bench: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: &Cli) -> Result<(), String> {
    if cli.seconds.is_nan() || cli.seconds <= 0.0 || cli.concurrency.is_empty() || cli.concurrency.contains(&0) {
        return Err("--seconds must be positive and --concurrency a list of positive numbers".into());
    }
    let after_binary = cli.ludo.clone().unwrap_or_else(server::default_binary);
    let seconds = Duration::from_secs_f64(cli.seconds);
    let playouts = moves::playouts();
    if cli.postgres {
        let suite = replicas::measure(&after_binary, &playouts, &cli.concurrency, seconds).await?;
        println!("{}", replicas::table(&suite, cli.seconds));
        if let Some(path) = &cli.json {
            let text = serde_json::to_string_pretty(&suite).map_err(|e| format!("cannot serialize the figures: {e}"))?;
            std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        return Ok(());
    }

    let mut suites = Vec::new();
    // The older build first, so that "after" is never the one measured on a
    // cooler machine. The long game it plays is imported into the second
    // server, so both read the very same game (a match's length varies).
    let mut long_game = None;
    if let Some(before) = &cli.baseline {
        let (measured, export) = suite("before", before, &playouts, &cli.concurrency, seconds, None).await?;
        println!("{}", measured.table(cli.seconds));
        suites.push(measured);
        long_game = Some(export);
    }
    let role = if cli.baseline.is_some() { "after" } else { "measured" };
    let (after, _) = suite(role, &after_binary, &playouts, &cli.concurrency, seconds, long_game.as_ref()).await?;
    println!("{}", after.table(cli.seconds));
    suites.push(after);

    let ratios = match suites.as_slice() {
        [before, after] => {
            let ratios = report::ratios(after, before);
            println!("{}", report::ratio_table(&ratios));
            ratios
        }
        _ => Vec::new(),
    };

    if let Some(path) = &cli.json {
        let document = serde_json::json!({
            "seconds_per_phase": cli.seconds,
            "concurrency": cli.concurrency,
            "suites": suites,
            "after_over_before": ratios,
        });
        let text = serde_json::to_string_pretty(&document).map_err(|e| format!("cannot serialize the figures: {e}"))?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Every figure of one server binary, in a fresh server process, and the
/// export of the long game it read (`long_game`, when given, is imported
/// rather than played).
async fn suite(
    role: &str,
    binary: &Path,
    playouts: &[std::sync::Arc<moves::Playout>],
    concurrency: &[usize],
    seconds: Duration,
    long_game: Option<&bytes::Bytes>,
) -> Result<(Suite, bytes::Bytes), String> {
    eprintln!("ludo-bench: {role}: starting {}", binary.display());
    let server = Server::start(binary).await?;
    let mut load = Vec::with_capacity(concurrency.len());
    for &n in concurrency {
        eprintln!("ludo-bench: {role}: N={n}: raw store, the request floor, REST, gRPC, both with minimal answers");
        let raw = store::durable_appends(n, seconds).await?;
        let (rest_floor, grpc_floor) = (floor::rest(&server, n, seconds).await?, floor::grpc(&server, n, seconds).await?);
        // Whole answers first at every other N, minimal ones first at the
        // others, so that neither always runs on the warmer machine.
        let order = if load.len() % 2 == 0 { [Answers::Full, Answers::Minimal] } else { [Answers::Minimal, Answers::Full] };
        let (mut whole, mut minimal) = (None, None);
        for answers in order {
            let measured = Some(moves::rest_and_grpc(&server, playouts, n, seconds, answers).await?);
            match answers {
                Answers::Full => whole = measured,
                Answers::Minimal => minimal = measured,
            }
        }
        let ((rest, grpc), (rest_minimal, grpc_minimal)) = (whole.expect("measured"), minimal.expect("measured"));
        load.push(LoadRow {
            concurrency: n,
            raw_store_appends_per_s: raw.appends_per_s,
            raw_store_machine_cpu_us_per_append: raw.machine_cpu_us_per_append,
            rest_floor,
            grpc_floor,
            rest,
            grpc,
            rest_minimal,
            grpc_minimal,
        });
    }
    eprintln!("ludo-bench: {role}: reads of a long game");
    let (reads, export) = reads::measure(&server, long_game).await?;
    drop(server);
    Ok((Suite { role: role.into(), binary: binary.display().to_string(), load, reads }, export))
}
