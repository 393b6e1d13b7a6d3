//! `ludo`: the ludotheque server and its tools. Parses flags, sets up
//! logging and storage, and hands over to `ludo_server::run`.

mod heap;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use ludo_game::{GameService, SystemClock};
use ludo_server::{ConnectionLimits, Rate, RateLimits, ServerConfig};
use ludo_storage::{Durability, EventStore, SledOptions, SledStore};

#[derive(Parser)]
#[command(name = "ludo", version, about = "Game-as-a-service for Cardinal, Kardinal & König and Battle 13")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve REST and gRPC on one port, with the log in a sled data directory.
    Serve(ServeArgs),
    /// Print the OpenAPI document of the REST API.
    Openapi,
    /// Verify an exported game record offline: its hash chain, its seed
    /// against the commitment, and a re-play of every record. Exit status 0
    /// when valid, 1 when not.
    Verify(VerifyArgs),
    /// Export a game's record from a data directory (of a stopped server).
    Export(ExportArgs),
    /// Health probe for containers (no shell or curl needed): GET the URL,
    /// exit 0 on a 2xx answer and 1 on anything else, within the timeout.
    Probe(ProbeArgs),
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
    file: PathBuf,
    /// Print the whole report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The game's id.
    game: String,
    /// The data directory the server used.
    #[arg(long, env = "LUDO_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on (REST and gRPC share it).
    #[arg(long, env = "LUDO_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Directory of the embedded sled database holding every game's log.
    #[arg(long, env = "LUDO_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
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
    /// Log line format (the level comes from RUST_LOG, default `info`).
    #[arg(long, env = "LUDO_LOG_FORMAT", value_enum, default_value_t = LogFormat::Human)]
    log_format: LogFormat,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Connection, time and rate limits (README, "Limits and hardening").
#[derive(clap::Args)]
#[command(next_help_heading = "Limits")]
struct LimitArgs {
    /// Connections served at once; a connection beyond it is answered 503
    /// (gRPC UNAVAILABLE) and closed. Lowered at start to what the process's
    /// descriptor limit allows.
    #[arg(long, env = "LUDO_MAX_CONNECTIONS", default_value_t = ConnectionLimits::default().max_connections)]
    max_connections: usize,
    /// Connections served at once from one client address (IPv6: one /64); 0 = no bound.
    #[arg(long, env = "LUDO_MAX_CONNECTIONS_PER_IP", default_value_t = ConnectionLimits::default().max_connections_per_ip)]
    max_connections_per_ip: usize,
    /// Time to send a request's headers (from the connection's start, or from
    /// the previous answer on an HTTP/1.1 keep-alive connection).
    #[arg(long, env = "LUDO_HEADER_TIMEOUT", value_parser = humantime::parse_duration, default_value = "10s")]
    header_timeout: Duration,
    /// Time to receive a request's body and start its answer (408 beyond it).
    #[arg(long, env = "LUDO_REQUEST_TIMEOUT", value_parser = humantime::parse_duration, default_value = "30s")]
    request_timeout: Duration,
    /// A connection with no request in flight is closed after this long; one
    /// with requests in flight but no byte moving, too.
    #[arg(long, env = "LUDO_IDLE_TIMEOUT", value_parser = humantime::parse_duration, default_value = "60s")]
    idle_timeout: Duration,
    /// Requests at once on one HTTP/2 connection (gRPC calls and live streams).
    #[arg(long, env = "LUDO_H2_MAX_STREAMS", default_value_t = ConnectionLimits::default().h2_max_concurrent_streams)]
    h2_max_streams: u32,
    /// How long a graceful stop waits for open connections.
    #[arg(long, env = "LUDO_SHUTDOWN_GRACE", value_parser = humantime::parse_duration, default_value = "20s")]
    shutdown_grace: Duration,
    /// Games created per client address: `N/s,burst=B`, or `off`.
    #[arg(long, env = "LUDO_RATE_CREATE", default_value_t = RateFlag(RateLimits::default().create_per_ip))]
    rate_create: RateFlag,
    /// Imports and verifications per client address: `N/s,burst=B`, or `off`.
    #[arg(long, env = "LUDO_RATE_RECORDS", default_value_t = RateFlag(RateLimits::default().records_per_ip))]
    rate_records: RateFlag,
    /// Moves per client address: `N/s,burst=B`, or `off`.
    #[arg(long, env = "LUDO_RATE_MOVES_PER_IP", default_value_t = RateFlag(RateLimits::default().moves_per_ip))]
    rate_moves_per_ip: RateFlag,
    /// Moves per seat: `N/s,burst=B`, or `off`.
    #[arg(long, env = "LUDO_RATE_MOVES_PER_SEAT", default_value_t = RateFlag(Some(ludo_game::DEFAULT_SEAT_RATE)))]
    rate_moves_per_seat: RateFlag,
}

/// A rate limit flag: `N/s`, `N/s,burst=B`, or `off`.
#[derive(Clone, Copy, Debug)]
struct RateFlag(Option<Rate>);

impl std::str::FromStr for RateFlag {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text.eq_ignore_ascii_case("off") { Ok(RateFlag(None)) } else { text.parse().map(|rate| RateFlag(Some(rate))) }
    }
}

impl std::fmt::Display for RateFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(rate) => rate.fmt(f),
            None => f.write_str("off"),
        }
    }
}

impl LimitArgs {
    fn config(&self) -> ServerConfig {
        ServerConfig {
            connections: ConnectionLimits {
                max_connections: self.max_connections,
                max_connections_per_ip: self.max_connections_per_ip,
                header_timeout: self.header_timeout,
                request_timeout: self.request_timeout,
                idle_timeout: self.idle_timeout,
                h2_max_concurrent_streams: self.h2_max_streams,
                shutdown_grace: self.shutdown_grace,
            },
            rates: RateLimits {
                create_per_ip: self.rate_create.0,
                records_per_ip: self.rate_records.0,
                moves_per_ip: self.rate_moves_per_ip.0,
            },
        }
    }
}

/// Most threads of the runtime's blocking pool (store reads run there: sled
/// calls block). A read takes microseconds, so a few dozen threads keep up
/// with any burst; tokio's default of 512 lets a burst of live streams start
/// hundreds, each keeping its stack and allocator cache while it idles.
const MAX_BLOCKING_THREADS: usize = 32;

/// How long an idle blocking thread lives (tokio's default: 10 s).
const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(2);

/// The server's runtime: a worker per core, a bounded blocking pool.
fn server_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .build()
}

/// Connections the kernel queues before the server accepts them (it caps
/// this at `net.core.somaxconn`). The usual 128 overflows when hundreds of
/// clients connect at once, and each overflowed client waits a second to
/// retry.
const LISTEN_BACKLOG: u32 = 4096;

/// A listening socket on `addr`, with a deep accept queue.
fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // A restarted server rebinds at once, whatever connections of the last one linger.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Descriptors kept for everything but client connections: the store's
/// files, the listener, refusals being answered, logs.
const RESERVED_DESCRIPTORS: u64 = 256;

/// Raises the soft limit on open descriptors to the hard one (as Go and
/// nginx do), and lowers `max_connections` to what it allows, so that too
/// many clients get a clear refusal instead of making accept fail for all.
fn fit_descriptor_limit(max_connections: usize) -> usize {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if let Some(hard) = limit.maximum
        && limit.current.is_some_and(|soft| soft < hard)
    {
        let raised = rustix::process::Rlimit { current: Some(hard), maximum: Some(hard) };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => limit = getrlimit(Resource::Nofile),
            Err(err) => tracing::warn!(%err, "cannot raise the open-file limit"),
        }
    }
    let Some(soft) = limit.current else { return max_connections };
    let allowed = usize::try_from(soft.saturating_sub(RESERVED_DESCRIPTORS).max(1)).unwrap_or(usize::MAX);
    if max_connections > allowed {
        tracing::warn!(
            max_connections,
            allowed,
            open_file_limit = soft,
            "--max-connections lowered to fit the open-file limit (raise LimitNOFILE / ulimit -n)"
        );
        return allowed;
    }
    max_connections
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Flush,
    Fsync,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Human,
    Json,
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Human => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
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
    let store = SledStore::open(&args.data_dir, SledOptions { durability })
        .map_err(|e| format!("cannot open the data directory {}: {e}", args.data_dir.display()))?;
    tracing::info!(data_dir = %args.data_dir.display(), "log opened");
    let store: Arc<dyn EventStore> = Arc::new(store);
    let mut service = GameService::new(store, Arc::new(SystemClock))
        .with_max_live_games(args.max_live_games)
        .with_seat_rate(args.limits.rate_moves_per_seat.0);
    if let Some(path) = &args.kardinal_board {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the board {}: {e}", path.display()))?;
        let board: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("the board {} is not JSON: {e}", path.display()))?;
        service =
            service.with_option_default("kardinal", "board", board).map_err(|e| format!("the board {} is refused: {e}", path.display()))?;
        tracing::info!(board = %path.display(), "Kardinal & König board loaded");
    }
    service.register_collector(Box::new(heap::HeapStats));
    let service = Arc::new(service);
    let mut config = args.limits.config();
    config.connections.max_connections = fit_descriptor_limit(config.connections.max_connections);
    let listener = listen(args.listen).map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let shutdown = shutdown_signal()?;
    ludo_server::run_with(listener, service, config, shutdown).await.map_err(|e| e.to_string())
}

fn verify(args: &VerifyArgs) -> ExitCode {
    let bytes = if args.file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map(|_| bytes)
    } else {
        std::fs::read(&args.file)
    };
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("ludo verify: cannot read {}: {err}", args.file.display());
            return ExitCode::from(2);
        }
    };
    let report = ludo_game::export::verify(&bytes);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("reports serialize"));
    } else {
        print!("{}", describe(&report));
    }
    if report.valid { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// The report in words.
fn describe(report: &ludo_game::export::VerifyReport) -> String {
    use ludo_game::export::SeedCheck;
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
        if let Some(status) = &report.status {
            let _ = writeln!(out, "result: {}", serde_json::to_string(status).expect("statuses serialize"));
        }
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

async fn export(args: ExportArgs) -> Result<Vec<u8>, String> {
    let store = SledStore::open(&args.data_dir, SledOptions::default())
        .map_err(|e| format!("cannot open the data directory {} (is a server using it?): {e}", args.data_dir.display()))?;
    let store: Arc<dyn EventStore> = Arc::new(store);
    let service = GameService::new(store, Arc::new(SystemClock));
    let bytes = service.export(&args.game, None).await.map_err(|e| e.to_string())?;
    service.shutdown().await.map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// GETs `url` over HTTP/1.1; the answer's status code.
async fn probe(url: &str) -> Result<u16, String> {
    let uri: hyper::Uri = url.parse().map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("`{url}`: only http:// URLs are probed"));
    }
    let host = uri.host().ok_or_else(|| format!("`{url}` has no host"))?;
    let port = uri.port_u16().unwrap_or(80);
    let tcp = tokio::net::TcpStream::connect((host, port)).await.map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.map_err(|e| format!("HTTP handshake: {e}"))?;
    tokio::spawn(connection);
    let authority = uri.authority().map_or_else(|| host.to_string(), ToString::to_string);
    let request = hyper::Request::get(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(hyper::header::HOST, authority)
        .header(hyper::header::USER_AGENT, "ludo-probe")
        .body(http_body_util::Empty::<hyper::body::Bytes>::new())
        .map_err(|e| e.to_string())?;
    let answer = sender.send_request(request).await.map_err(|e| format!("GET {url}: {e}"))?;
    Ok(answer.status().as_u16())
}

fn main() -> ExitCode {
    // Whatever this process creates (the store's files hold every running
    // game's seed) is its owner's alone.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    let cli = Cli::parse();
    match cli.command {
        Command::Verify(args) => verify(&args),
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
        Command::Probe(args) => {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
            match runtime.block_on(async { tokio::time::timeout(args.timeout, probe(&args.url)).await }) {
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
        Command::Openapi => {
            println!("{}", serde_json::to_string_pretty(&ludo_server::openapi()).expect("JSON values serialize"));
            ExitCode::SUCCESS
        }
        Command::Serve(args) => {
            init_logging(args.log_format);
            let runtime = match server_runtime() {
                Ok(runtime) => runtime,
                Err(err) => {
                    eprintln!("cannot start the runtime: {err}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(serve(args)) {
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
