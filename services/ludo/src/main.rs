//! `ludo`: the ludotheque server and its tools. Parses flags, sets up
//! logging and storage, and hands over to `ludo_server::run`.

mod audit;
mod copy;
mod grpc;
mod heap;
mod limits;
mod logging;
mod probe;
mod remote;
mod simulate;
mod store;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use logging::LogFormat;
use ludo_game::{GameService, SystemClock};
use ludo_storage::Durability;
use store::{StoreArgs, StoreSpec};

#[derive(Parser)]
#[command(name = "ludo", version, about = "Game-as-a-service for Cardinal, Kardinal & König and Battle 13")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve REST and gRPC on one port, with the log in a sled data
    /// directory (the default) or a PostgreSQL database.
    Serve(Box<ServeArgs>),
    /// Copy every game from one store to another (`--from sled:./data --to
    /// postgres://…`, or back), verifying each game's hash chain in the
    /// target; run it again to resume an interrupted copy. No server may be
    /// writing to either store meanwhile.
    Copy(CopyArgs),
    /// Bring a PostgreSQL store's schema up to this version (`ludo serve`
    /// also does it when it starts), and print the version.
    MigrateSchema(MigrateArgs),
    /// Print the OpenAPI document of the REST API.
    Openapi,
    /// Verify an exported game record offline: its hash chain, its seed
    /// against the commitment, a re-play of every record and, for a
    /// finished game's bundle, its receipt from the server's transparency
    /// log (leaf, inclusion proof, checkpoint signature). Or, with
    /// `--consistency OLD NEW`, that a newer checkpoint extends an older
    /// one. Exit status 0 when valid, 1 when not.
    Verify(VerifyArgs),
    /// Make a signing key for a transparency log (`ludo serve --log-key`):
    /// writes the private key to a file, prints the public verifier key.
    LogKey(LogKeyArgs),
    /// Export a game's record from a store (a sled data directory only when
    /// no server is using it).
    Export(ExportArgs),
    /// Play bots against each other offline, over every core, and print each
    /// level's share of the wins with a 95% interval, scores, game lengths
    /// and games/s (e.g. `--game battle13 --bots strong,random --games 500`).
    Simulate(simulate::SimulateArgs),
    /// Play one seat of a game on a server with a computer player running
    /// here: it reads what its seat knows over the API and moves when it is
    /// the seat's turn, until the game ends.
    Bot(remote::BotArgs),
    /// Show where each projection (a read model folded from the store's
    /// feed of records) stands, or build one again from the feed's start:
    /// `ludo projections status`, `ludo projections rebuild games`.
    #[command(subcommand)]
    Projections(ProjectionsCommand),
    /// Health probe for containers (no shell or curl needed): GET the URL,
    /// exit 0 on a 2xx answer and 1 on anything else, within the timeout.
    Probe(ProbeArgs),
    /// Call the gRPC API with requests and answers in proto3 JSON (a small
    /// grpcurl for this API): `ludo grpc list`, `ludo grpc CreateGame
    /// '{"kind": "cardinal", "seats": [{"name": "Ann"}, {"name": "Bob"}]}'`.
    /// Exit status 1 for a refusal (its code and details on stderr), 2 for
    /// a request that is not one.
    Grpc(grpc::GrpcArgs),
}

#[derive(clap::Args)]
struct ProbeArgs {
    /// What to GET, e.g. `http://127.0.0.1:8080/readyz`.
    url: String,
    /// Longest wait for the whole answer.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "2s")]
    timeout: Duration,
}

#[derive(clap::Args)]
struct VerifyArgs {
    /// The export (JSON Lines); `-` reads standard input.
    #[arg(required_unless_present = "consistency")]
    file: Option<PathBuf>,
    /// Print the whole report as JSON.
    #[arg(long)]
    json: bool,
    /// The transparency log's public key to trust: a verifier key
    /// (`origin+keyid+base64`, as `/.well-known/ludotheque-log-key` serves
    /// it) or a file holding one. Without it, the key pinned for the log's
    /// origin in the known keys is used, and a log seen for the first time
    /// has its key pinned there (trust on first use).
    #[arg(long)]
    key: Option<String>,
    /// Where keys are pinned (default `$LUDO_KNOWN_KEYS`, else
    /// `~/.config/ludo/known_log_keys`).
    #[arg(long)]
    known_keys: Option<PathBuf>,
    /// Check two checkpoints instead (files holding a signed checkpoint,
    /// as `/v1/log/checkpoint` serves it, or bundles): both signed by the
    /// key, and the newer tree extends the older.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with = "file")]
    consistency: Option<Vec<PathBuf>>,
    /// With --consistency: the proof, as `/v1/log/consistency` answers it.
    #[arg(long, requires = "consistency", conflicts_with = "server")]
    proof: Option<PathBuf>,
    /// With --consistency: the server to ask for the proof (e.g. http://127.0.0.1:8080).
    #[arg(long, requires = "consistency")]
    server: Option<String>,
}

#[derive(clap::Args)]
struct LogKeyArgs {
    /// The log's origin, which names the key: a schema-less URL such as
    /// `games.example.org/log` (no spaces, no `+`).
    #[arg(long)]
    origin: String,
    /// Where to write the private key (created; never overwritten).
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Subcommand)]
enum ProjectionsCommand {
    /// Print each projection's checkpoint, the feed's head and how far behind it is.
    Status(ProjectionsStatusArgs),
    /// Forget a projection's rows and fold the whole feed again; refused
    /// while a server advances it (a sled store: while a server has it open).
    Rebuild(ProjectionsRebuildArgs),
}

#[derive(clap::Args)]
struct ProjectionsStatusArgs {
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(clap::Args)]
struct ProjectionsRebuildArgs {
    /// The projection (`ludo projections status` lists them).
    name: String,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The game's id.
    game: String,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(clap::Args)]
struct CopyArgs {
    /// The store to copy from: `sled:DIR` or `postgres://…`.
    #[arg(long)]
    from: StoreSpec,
    /// The store to copy into: `sled:DIR` or `postgres://…`.
    #[arg(long)]
    to: StoreSpec,
    /// Connections to PostgreSQL kept open at most, per store.
    #[arg(long, default_value_t = 4)]
    store_pool_size: usize,
}

#[derive(clap::Args)]
struct MigrateArgs {
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on (REST and gRPC share it).
    #[arg(long, env = "LUDO_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    #[command(flatten)]
    store: StoreArgs,
    /// When a move is acknowledged: `flush` (survives a killed process) or
    /// `fsync` (also survives a power loss; slower).
    #[arg(long, env = "LUDO_DURABILITY", value_enum, default_value_t = DurabilityArg::Flush)]
    durability: DurabilityArg,
    /// A Kardinal & König board file (JSON, the shape of the embedded
    /// board) to play new games on instead of the embedded one. Each game
    /// records its board, so changing this never alters existing games.
    #[arg(long, env = "LUDO_KARDINAL_BOARD")]
    kardinal_board: Option<PathBuf>,
    /// Most games kept in memory; beyond it the least recently used idle
    /// games are forgotten and reloaded from their log when needed.
    #[arg(long, env = "LUDO_MAX_LIVE_GAMES", default_value_t = ludo_game::DEFAULT_MAX_LIVE_GAMES)]
    max_live_games: usize,
    /// Log line format on stderr: `auto` (text, coloured only on a
    /// terminal and without NO_COLOR), `text` (never coloured; `human` is
    /// its old name) or `json`. The level comes from RUST_LOG (default `info`).
    #[arg(long, env = "LUDO_LOG_FORMAT", value_enum, default_value_t = LogFormat::Auto)]
    log_format: LogFormat,
    /// One line per request at `info`, target `ludo::access` (method, route
    /// template, status, duration, bytes, client, request id): `on` or `off`.
    #[arg(long, env = "LUDO_ACCESS_LOG", value_enum, default_value_t = logging::Switch::On)]
    access_log: logging::Switch,
    /// Web pages on other origins that may call the API from a browser
    /// (CORS): `*` (any: seat tokens are bearer headers, never cookies),
    /// `off` (this server's own pages only), or a comma-separated list of
    /// origins such as `https://play.example.org,http://localhost:5173`.
    #[arg(long, env = "LUDO_CORS_ORIGINS", default_value = "*")]
    cors_origins: ludo_server::CorsOrigins,
    /// The transparency log's origin, which names its key and starts every
    /// checkpoint: a schema-less URL such as `games.example.org/log`.
    /// Default: the origin the store's log already has, or, for a new one,
    /// `ludotheque/log-` and 8 random hex digits.
    #[arg(long, env = "LUDO_LOG_ORIGIN")]
    log_origin: Option<String>,
    /// A file holding the log's private signing key (from `ludo log-key`),
    /// for replicas that must not keep it in the database (or the key's
    /// text itself in the variable LUDO_LOG_KEY). Default: the key kept
    /// (sealed) in the store, made at first start.
    #[arg(long, env = "LUDO_LOG_KEY_FILE")]
    log_key: Option<PathBuf>,
    /// Addresses games' webhooks may call beyond public ones: CIDR ranges
    /// or addresses, comma-separated (`127.0.0.1/32` for a receiver on this
    /// machine), or `none`. Loopback, private, link-local and other
    /// special-purpose addresses are refused unless listed here.
    #[arg(long, env = "LUDO_WEBHOOK_ALLOW", default_value_t = ludo_game::webhook::WebhookPolicy::default())]
    webhook_allow: ludo_game::webhook::WebhookPolicy,
    /// A file holding the operator's token (or the token itself in the
    /// variable LUDO_OPERATOR_TOKEN): imports (`POST /v1/games/import`,
    /// gRPC `ImportGame`) need it as their bearer token. At least 32
    /// characters (e.g. `openssl rand -hex 32`). Default: none, and the
    /// server takes no import.
    #[arg(long, env = "LUDO_OPERATOR_TOKEN_FILE")]
    operator_token_file: Option<PathBuf>,
    #[command(flatten)]
    limits: limits::LimitArgs,
    #[command(flatten)]
    bots: BotArgs,
}

/// How the server's bot seats play.
#[derive(Args)]
struct BotArgs {
    /// Bots thinking at once, at most, each on a thread of its own
    /// (default: one per core).
    #[arg(long, env = "LUDO_BOT_WORKERS", value_parser = clap::value_parser!(u32).range(1..=1024))]
    bot_workers: Option<u32>,
    /// The think delay of a bot seat whose creator named none: the least
    /// time from its turn to its move, so people can follow (ms, 0 to 10000).
    #[arg(long, env = "LUDO_BOT_THINK_MS", default_value_t = ludo_game::DEFAULT_THINK_MS, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    bot_think_ms: u32,
    /// The most time a bot spends choosing one move (ms).
    #[arg(long, env = "LUDO_BOT_TIME_MS", default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    bot_time_ms: u64,
    /// The most search iterations a strong bot runs per move.
    #[arg(long, env = "LUDO_BOT_ITERATIONS", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    bot_iterations: u32,
}

/// Fewest characters of an operator token: a token anyone could guess
/// would open imports to everyone.
const MIN_OPERATOR_TOKEN: usize = 32;

impl ServeArgs {
    /// The operator's token, from its file or the environment (never from
    /// the command line, where any user of the machine could read it).
    fn operator_token(&self) -> Result<Option<String>, String> {
        let from_env = std::env::var("LUDO_OPERATOR_TOKEN").ok().filter(|text| !text.trim().is_empty());
        let token = match (&self.operator_token_file, from_env) {
            (Some(_), Some(_)) => {
                return Err(
                    "the operator token is given twice: --operator-token-file (LUDO_OPERATOR_TOKEN_FILE) and LUDO_OPERATOR_TOKEN".into()
                );
            }
            (None, None) => return Ok(None),
            (None, Some(text)) => text,
            (Some(path), None) => {
                std::fs::read_to_string(path).map_err(|e| format!("cannot read the operator token {}: {e}", path.display()))?
            }
        };
        let token = token.trim();
        if token.chars().count() < MIN_OPERATOR_TOKEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "the operator token is {MIN_OPERATOR_TOKEN} or more printable characters without spaces (e.g. `openssl rand -hex 32`)"
            ));
        }
        Ok(Some(token.to_string()))
    }

    /// The transparency log's settings: origin, and the key from its file.
    fn log_settings(&self) -> Result<ludo_game::LogSettings, String> {
        // The key's text may also come from the environment (a secret
        // injected as a variable), never from the command line.
        let from_env = std::env::var("LUDO_LOG_KEY").ok().filter(|text| !text.trim().is_empty());
        let key = match (&self.log_key, from_env) {
            (Some(_), Some(_)) => return Err("the log key is given twice: --log-key (LUDO_LOG_KEY_FILE) and LUDO_LOG_KEY".into()),
            (None, None) => None,
            (None, Some(text)) => {
                Some(ludo_transparency::LogKey::from_private(&text).map_err(|e| format!("the log key in LUDO_LOG_KEY: {e}"))?)
            }
            (Some(path), None) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the log key {}: {e}", path.display()))?;
                Some(ludo_transparency::LogKey::from_private(&text).map_err(|e| format!("the log key {}: {e}", path.display()))?)
            }
        };
        if let Some(origin) = &self.log_origin
            && !ludo_transparency::origin_is_valid(origin)
        {
            return Err(format!("--log-origin `{origin}`: 1 to 128 printable bytes, no space and no `+` (e.g. games.example.org/log)"));
        }
        Ok(ludo_game::LogSettings { origin: self.log_origin.clone(), key })
    }
}

impl BotArgs {
    fn settings(&self) -> ludo_game::BotSettings {
        let defaults = ludo_game::BotSettings::default();
        ludo_game::BotSettings {
            workers: self.bot_workers.map_or(defaults.workers, |w| w as usize),
            budget: ludo_bots::Budget {
                iterations: self.bot_iterations,
                time: Some(std::time::Duration::from_millis(self.bot_time_ms)),
                playout_depth: None,
            },
            think_ms: self.bot_think_ms,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Flush,
    Fsync,
}

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed now, before the
/// server says it listens: a signal sent as soon as it does is not lost (nor
/// does it kill the process, the default action).
#[cfg(unix)]
fn shutdown_signal() -> Result<impl Future<Output = ()>, String> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| format!("cannot listen for Ctrl-C: {e}"))?;
    let mut terminate = signal(SignalKind::terminate()).map_err(|e| format!("cannot listen for SIGTERM: {e}"))?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("Ctrl-C received"),
            _ = terminate.recv() => tracing::info!("SIGTERM received"),
        }
    })
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> Result<impl Future<Output = ()>, String> {
    Ok(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("Ctrl-C received");
        }
    })
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let durability = match args.durability {
        DurabilityArg::Flush => Durability::Flush,
        DurabilityArg::Fsync => Durability::Fsync,
    };
    let store = args.store.open(durability)?;
    tracing::info!(store = %args.store.spec(), "log opened");
    let mut service = GameService::new(store, Arc::new(SystemClock))
        .with_max_live_games(args.max_live_games)
        .with_seat_rate(args.limits.rate_moves_per_seat.0)
        .with_bots(args.bots.settings())
        .with_webhook_policy(args.webhook_allow.clone())
        .with_operator_token(args.operator_token()?.as_deref())
        .with_log(args.log_settings()?);
    if let Some(path) = &args.kardinal_board {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the board {}: {e}", path.display()))?;
        let board: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("the board {} is not JSON: {e}", path.display()))?;
        service =
            service.with_option_default("kardinal", "board", board).map_err(|e| format!("the board {} is refused: {e}", path.display()))?;
        tracing::info!(board = %path.display(), "Kardinal & König board loaded");
    }
    let service = Arc::new(service);
    let metrics = ludo_server::Metrics::new(&service);
    metrics.register_collector(Box::new(heap::HeapStats));
    // The transparency log is checked before the server listens: a stored
    // tree that disagrees with its last checkpoint stops it here.
    let log = service.open_log().await.map_err(|e| match e {
        // A key or origin that is not the store's: the operator's to fix.
        ludo_game::ServiceError::Internal(reason) => format!("the transparency log: {reason}"),
        other => format!("the transparency log: {other}"),
    })?;
    tracing::info!(origin = %log.origin, key = %log.key, leaves = log.tree.as_ref().map_or(0, |t| t.size), "transparency log ready");
    let mut config = args.limits.config();
    config.cors = args.cors_origins.clone();
    config.access_log = args.access_log.into();
    config.connections.max_connections = limits::fit_descriptor_limit(config.connections.max_connections);
    let listener = limits::listen(args.listen).map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let shutdown = shutdown_signal()?;
    ludo_server::run_measured(listener, service, config, metrics, shutdown).await.map_err(|e| e.to_string())
}

fn verify(args: &VerifyArgs) -> ExitCode {
    let given = match args.key.as_deref().map(audit::given_key).transpose() {
        Ok(given) => given,
        Err(err) => {
            eprintln!("ludo verify: {err}");
            return ExitCode::from(2);
        }
    };
    let known = audit::known_keys_path(args.known_keys.as_deref());
    if let Some(pair) = &args.consistency {
        let source = match (&args.proof, &args.server) {
            (Some(path), _) => audit::ProofSource::File(path),
            (None, Some(url)) => audit::ProofSource::Server(url),
            (None, None) => audit::ProofSource::None,
        };
        return match audit::consistency(&pair[0], &pair[1], given.as_deref(), known.as_deref(), &source) {
            Ok(report) => {
                say(&report);
                ExitCode::SUCCESS
            }
            Err(err) => {
                say(&format!("INVALID: {err}\n"));
                ExitCode::FAILURE
            }
        };
    }
    let Some(file) = &args.file else {
        eprintln!("ludo verify: name an export, or --consistency OLD NEW");
        return ExitCode::from(2);
    };
    let bytes = if file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map(|_| bytes)
    } else {
        std::fs::read(file)
    };
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("ludo verify: cannot read {}: {err}", file.display());
            return ExitCode::from(2);
        }
    };
    // The key the receipt must be signed by: given, pinned, or pinned now.
    // (Only the header is read here: the whole check runs once, below.)
    let named = ludo_record::export::ExportHeader::read(&bytes).ok().and_then(|header| header.receipt).map(|receipt| receipt.key);
    let (trusted, how) = match named.as_deref().map(|key| audit::trusted_key(given.as_deref(), known.as_deref(), key)).transpose() {
        Ok(Some((key, how))) => (Some(key), Some(how)),
        Ok(None) => (given.clone(), None),
        Err(err) => {
            eprintln!("ludo verify: {err}");
            return ExitCode::from(2);
        }
    };
    let report = ludo_record::export::verify_with(&bytes, trusted.as_deref());
    if args.json {
        say(&format!("{}\n", serde_json::to_string_pretty(&report).expect("reports serialize")));
    } else {
        if let Some(how) = how {
            say(&format!("{how}\n"));
        }
        say(&describe(&report));
    }
    if report.valid { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Writes to standard output; a reader that went away (`| head`) is not an error.
fn say(text: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
}

/// The report in words.
fn describe(report: &ludo_record::export::VerifyReport) -> String {
    use ludo_record::export::SeedCheck;
    use std::fmt::Write;
    let mut out = String::new();
    let game = report.game_id.as_deref().unwrap_or("?");
    let kind = report.kind.as_deref().unwrap_or("?");
    let _ = writeln!(out, "game {game} ({kind}), {} records", report.records);
    if report.chain_intact {
        let _ = writeln!(out, "hash chain: intact, last hash {}", report.last_hash.as_deref().unwrap_or("-"));
    }
    let _ = writeln!(
        out,
        "seed: {}",
        match report.seed {
            SeedCheck::Unchecked => "not checked (verification stopped at the fault below)",
            SeedCheck::Matches => "matches the commitment in record 0",
            SeedCheck::Absent => "absent (the game was running when exported; the deal cannot be checked yet)",
            SeedCheck::Mismatch => "DOES NOT match the commitment in record 0",
        }
    );
    if report.replayed {
        let _ = writeln!(out, "re-played: every record, through this build's engine");
        if report.revealed > 0 {
            let _ = writeln!(out, "revealed: the hidden cards of {} records, each as the seed deals them", report.revealed);
        }
        if let Some(status) = &report.status {
            let _ = writeln!(out, "result: {}", serde_json::to_string(status).expect("statuses serialize"));
        }
    }
    if let Some(imported) = &report.imported {
        let from = imported.key.as_deref().map_or_else(|| "an unknown origin".to_string(), |key| format!("the log whose key is {key}"));
        let _ = writeln!(out, "imported: the exporting server did not see this game played; it came from {from}");
    }
    match &report.receipt {
        Some(receipt) => {
            if let Some(tree) = &receipt.tree {
                let leaves = if tree.size == 1 { "leaf" } else { "leaves" };
                let _ = writeln!(
                    out,
                    "checkpoint: signed by {} ({}), {} {leaves}, root {}",
                    receipt.key_id.as_deref().unwrap_or("?"),
                    tree.origin,
                    tree.size,
                    tree.root
                );
            }
            if receipt.leaf_matches {
                let what = if report.imported.is_some() { "head as an imported game's" } else { "head" };
                let _ =
                    writeln!(out, "leaf {}: this game's {what} (id, {} records, last hash, outcome)", receipt.leaf_index, report.records);
            }
            if receipt.included {
                let _ = writeln!(out, "inclusion: the proof leads from the leaf to the checkpoint's root");
            }
        }
        None if report.replayed => {
            let _ = writeln!(out, "completeness: not proven (no receipt: compare the last hash with what the server says)");
        }
        None => {}
    }
    match &report.fault {
        None => {
            let _ = writeln!(out, "VALID");
        }
        Some(fault) => {
            let at = fault.seq.map(|seq| format!(" (record {seq})")).unwrap_or_default();
            let _ = writeln!(out, "INVALID at line {}{at}: {}", fault.line, fault.reason);
        }
    }
    out
}

/// `ludo log-key`: a new key, its private half in a new file.
fn log_key(args: &LogKeyArgs) -> Result<String, String> {
    let key = ludo_transparency::LogKey::generate(&args.origin)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    std::io::Write::write_all(&mut file, format!("{}\n", key.private_key()).as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    Ok(key.verifier_key().to_string())
}

/// `ludo copy`.
fn copy_stores(args: &CopyArgs) -> Result<String, String> {
    if args.from == args.to {
        return Err(format!("--from and --to are the same store ({})", args.from));
    }
    let open = |spec: &StoreSpec| {
        let store = StoreArgs {
            store: Some(spec.clone()),
            data_dir: PathBuf::new(),
            store_pool_size: args.store_pool_size,
            store_notify: store::Notify::Listen,
            store_poll_ms: 250,
        };
        store.open(Durability::Flush)
    };
    let (from, to) = (open(&args.from)?, open(&args.to)?);
    let progress = indicatif::ProgressBar::new(0);
    let copied = copy::copy(&from, &to, &progress);
    // Whatever happened, what was written is made durable before leaving.
    let closed = to.close().and(from.close()).map_err(|e| format!("cannot close the stores: {e}"));
    let copied = copied?;
    closed?;
    Ok(format!(
        "{} games copied ({} records), {} already there; every game's chain verified in {}",
        copied.games, copied.records, copied.skipped, args.to
    ))
}

/// Opening a PostgreSQL store migrates its schema; sled has none.
fn migrate_schema(args: &MigrateArgs) -> Result<String, String> {
    match args.store.spec() {
        StoreSpec::Sled(path) => Ok(format!("sled:{} has no schema to migrate", path.display())),
        spec @ StoreSpec::Postgres(_) => {
            let store = args.store.open(Durability::Flush)?;
            store.close().map_err(|e| e.to_string())?;
            Ok(format!("{spec}: schema version {}", ludo_storage::schema_version()))
        }
    }
}

async fn export(args: ExportArgs) -> Result<Vec<u8>, String> {
    let store = args.store.open(Durability::Flush).map_err(|e| format!("{e} (is a server using it?)"))?;
    let service = GameService::new(store, Arc::new(SystemClock));
    let game: ludo_game::GameId = args.game.parse().map_err(|e: ludo_game::ServiceError| e.to_string())?;
    let bytes = service.export(&game, None).await.map_err(|e| e.to_string())?;
    service.shutdown().await.map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// `ludo projections …`: what it prints.
async fn projections(command: ProjectionsCommand) -> Result<String, String> {
    let store_args = match &command {
        ProjectionsCommand::Status(args) => &args.store,
        ProjectionsCommand::Rebuild(args) => &args.store,
    };
    let store = store_args.open(Durability::Flush).map_err(|e| format!("{e} (is a server using it?)"))?;
    let projections = ludo_game::projection::Projections::new(Arc::clone(&store));
    let out = match &command {
        ProjectionsCommand::Status(_) => {
            let mut out = format!("{:<12} {:>12} {:>12} {:>10}  about\n", "projection", "checkpoint", "feed head", "behind");
            for status in projections.status().await.map_err(|e| e.to_string())? {
                out += &format!(
                    "{:<12} {:>12} {:>12} {:>10}  {}\n",
                    status.name,
                    status.checkpoint,
                    status.head,
                    status.behind(),
                    status.about
                );
            }
            out
        }
        ProjectionsCommand::Rebuild(args) => {
            let started = std::time::Instant::now();
            let checkpoint = projections.rebuild(&args.name).await.map_err(|e| e.to_string())?;
            format!("{} rebuilt from the feed's start up to position {checkpoint} in {:.2?}\n", args.name, started.elapsed())
        }
    };
    let closing = Arc::clone(&store);
    tokio::task::spawn_blocking(move || closing.close()).await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
    Ok(out)
}

fn main() -> ExitCode {
    // Whatever this process creates (the store's files hold every running
    // game's seed) is its owner's alone.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    let cli = Cli::parse();
    match cli.command {
        Command::Verify(args) => verify(&args),
        Command::LogKey(args) => match log_key(&args) {
            Ok(verifier) => {
                println!("{verifier}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("ludo log-key: {err}");
                ExitCode::FAILURE
            }
        },
        Command::Export(args) => {
            let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
            match runtime.block_on(export(args)) {
                Ok(bytes) => {
                    let _ = std::io::Write::write_all(&mut std::io::stdout(), &bytes);
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("ludo export: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Copy(args) => match copy_stores(&args) {
            Ok(message) => {
                println!("{message}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("ludo copy: {err}");
                ExitCode::FAILURE
            }
        },
        Command::Simulate(args) => match simulate::run(&args) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("ludo simulate: {err}");
                ExitCode::FAILURE
            }
        },
        Command::Bot(args) => {
            logging::init(LogFormat::Auto);
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
            match runtime.block_on(remote::run(args)) {
                Ok(played) => {
                    println!("game over: seat {} made {} moves; {}", played.seat.0, played.moves, played.status);
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("ludo bot: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::MigrateSchema(args) => match migrate_schema(&args) {
            Ok(message) => {
                println!("{message}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("ludo migrate-schema: {err}");
                ExitCode::FAILURE
            }
        },
        Command::Projections(command) => {
            let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
            match runtime.block_on(projections(command)) {
                Ok(out) => {
                    print!("{out}");
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("ludo projections: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Probe(args) => {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
            match runtime.block_on(async { tokio::time::timeout(args.timeout, probe::probe(&args.url)).await }) {
                Ok(Ok(status)) if (200..300).contains(&status) => ExitCode::SUCCESS,
                Ok(Ok(status)) => {
                    eprintln!("ludo probe: {} answered {status}", args.url);
                    ExitCode::FAILURE
                }
                Ok(Err(err)) => {
                    eprintln!("ludo probe: {err}");
                    ExitCode::FAILURE
                }
                Err(_) => {
                    eprintln!("ludo probe: no answer from {} within {:?}", args.url, args.timeout);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Grpc(args) => {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
            runtime.block_on(grpc::run(args))
        }
        Command::Openapi => {
            println!("{}", serde_json::to_string_pretty(&ludo_server::openapi()).expect("JSON values serialize"));
            ExitCode::SUCCESS
        }
        Command::Serve(args) => {
            logging::init(args.log_format);
            let runtime = match limits::server_runtime() {
                Ok(runtime) => runtime,
                Err(err) => {
                    eprintln!("cannot start the runtime: {err}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(serve(*args)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    tracing::error!("{err}");
                    eprintln!("ludo: {err}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
