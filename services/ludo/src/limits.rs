//! `ludo serve`'s limits: their flags, and what the process itself must
//! provide for them (a bounded runtime, a deep accept queue, descriptors).

use std::net::SocketAddr;
use std::time::Duration;

use ludo_server::{ConnectionLimits, Rate, RateLimits, ServerConfig, TrustedProxies};

/// Connection, time and rate limits (docs/operations.md, "Limits and hardening").
#[derive(clap::Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
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
    pub rate_moves_per_seat: RateFlag,
    /// Load balancers in front of the server whose `X-Forwarded-For` names
    /// the client for the per-address rate limits (and which are not capped
    /// per address themselves): addresses or CIDR ranges, comma-separated,
    /// or `none`. Only list proxies that append the address they were
    /// connected from (nginx's `$proxy_add_x_forwarded_for` does).
    #[arg(long, env = "LUDO_TRUSTED_PROXIES", default_value_t = TrustedProxies::default())]
    trusted_proxies: TrustedProxies,
}

/// A rate limit flag: `N/s`, `N/s,burst=B`, or `off`.
#[derive(Clone, Copy, Debug)]
pub struct RateFlag(pub Option<Rate>);

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
    pub fn config(&self) -> ServerConfig {
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
            cors: ludo_server::CorsOrigins::default(),
            trusted_proxies: self.trusted_proxies.clone(),
            access_log: ludo_server::AccessLog::default(),
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
pub fn server_runtime() -> std::io::Result<tokio::runtime::Runtime> {
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
pub fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
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
pub fn fit_descriptor_limit(max_connections: usize) -> usize {
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
