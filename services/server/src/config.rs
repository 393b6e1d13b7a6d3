//! What the server bounds, with the defaults `ludo serve` starts with.
//!
//! Every limit here is also a flag of `ludo serve` (README, "Limits and
//! hardening").

use std::time::Duration;

/// The server's limits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerConfig {
    /// Connections, timeouts and HTTP/2 streams.
    pub connections: ConnectionLimits,
    /// Per-client rate limits.
    pub rates: RateLimits,
    /// Which web origins may call the API from a browser.
    pub cors: crate::cors::CorsOrigins,
}

/// Bounds on connections and the time a client may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once; beyond it a new connection is answered
    /// `503 too_many_connections` (gRPC `UNAVAILABLE`) and closed.
    pub max_connections: usize,
    /// Connections served at once from one client address (an IPv6 client
    /// is its /64); 0 = no per-address bound.
    pub max_connections_per_ip: usize,
    /// Time to send a request's headers, from the connection's start or, on
    /// an HTTP/1.1 keep-alive connection, from the end of the previous
    /// answer (so it also bounds how long such a connection idles).
    pub header_timeout: Duration,
    /// Time from a request's headers to the start of its answer: reading the
    /// body included. Live streams are bounded by this only until they start.
    pub request_timeout: Duration,
    /// A connection with no request in flight is closed after this long
    /// (HTTP/2: a GOAWAY, then the close).
    pub idle_timeout: Duration,
    /// Requests in flight at once on one HTTP/2 connection (gRPC calls,
    /// live streams included).
    pub h2_max_concurrent_streams: u32,
    /// How long a graceful shutdown waits for open connections.
    pub shutdown_grace: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 10_000,
            max_connections_per_ip: 1_000,
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            h2_max_concurrent_streams: 100,
            shutdown_grace: Duration::from_secs(20),
        }
    }
}

pub use ludo_game::quota::Rate;

/// Per-client rate limits (token buckets); `None` = unlimited. A refused
/// request is answered `429 rate_limited` with `Retry-After` (gRPC
/// `RESOURCE_EXHAUSTED` with a `RetryInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// Games created per client address.
    pub create_per_ip: Option<Rate>,
    /// Imports and verifications (whole exports, up to 64 MiB each) per client address.
    pub records_per_ip: Option<Rate>,
    /// Moves submitted per client address. (Moves per seat are limited by
    /// the game service: `GameService::with_seat_rate`.)
    pub moves_per_ip: Option<Rate>,
}

impl Default for RateLimits {
    /// Generous: far above what people or bots at a table need, low enough
    /// that one address cannot fill the disk or the CPU.
    fn default() -> Self {
        RateLimits {
            create_per_ip: Some(Rate::new(10, 100)),
            records_per_ip: Some(Rate::new(2, 20)),
            moves_per_ip: Some(Rate::new(500, 1_000)),
        }
    }
}

impl RateLimits {
    /// No limit at all.
    #[must_use]
    pub fn unlimited() -> Self {
        RateLimits { create_per_ip: None, records_per_ip: None, moves_per_ip: None }
    }
}
