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

/// A token bucket: `per_second` tokens flow in, at most `burst` are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Sustained requests per second.
    pub per_second: u32,
    /// Requests allowed at once after a quiet spell.
    pub burst: u32,
}

impl Rate {
    /// `per_second` sustained, `burst` at once.
    #[must_use]
    pub const fn new(per_second: u32, burst: u32) -> Self {
        Rate { per_second, burst }
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/s,burst={}", self.per_second, self.burst)
    }
}

impl std::str::FromStr for Rate {
    type Err = String;

    /// `N/s` or `N/s,burst=B` (the burst defaults to N).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = || format!("`{text}`: expected a rate like `20/s` or `20/s,burst=40` (both at least 1)");
        let (rate, burst) = match text.split_once(',') {
            Some((rate, burst)) => (rate, Some(burst.trim().strip_prefix("burst=").ok_or_else(wrong)?)),
            None => (text, None),
        };
        let per_second: u32 = rate.trim().strip_suffix("/s").ok_or_else(wrong)?.trim().parse().map_err(|_| wrong())?;
        let burst: u32 = match burst {
            Some(burst) => burst.trim().parse().map_err(|_| wrong())?,
            None => per_second,
        };
        if per_second == 0 || burst == 0 {
            return Err(wrong());
        }
        Ok(Rate { per_second, burst })
    }
}

/// Per-client rate limits (token buckets); `None` = unlimited. A refused
/// request is answered `429 rate_limited` with `Retry-After` (gRPC
/// `RESOURCE_EXHAUSTED` with a `RetryInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// Games created per client address.
    pub create_per_ip: Option<Rate>,
    /// Imports and verifications (whole exports, up to 64 MiB each) per client address.
    pub records_per_ip: Option<Rate>,
    /// Moves submitted per client address.
    pub moves_per_ip: Option<Rate>,
    /// Moves submitted per seat (per token).
    pub moves_per_seat: Option<Rate>,
}

impl Default for RateLimits {
    /// Generous: far above what people or bots at a table need, low enough
    /// that one address cannot fill the disk or the CPU.
    fn default() -> Self {
        RateLimits {
            create_per_ip: Some(Rate::new(10, 100)),
            records_per_ip: Some(Rate::new(2, 20)),
            moves_per_ip: Some(Rate::new(500, 1_000)),
            moves_per_seat: Some(Rate::new(20, 60)),
        }
    }
}

impl RateLimits {
    /// No limit at all.
    #[must_use]
    pub fn unlimited() -> Self {
        RateLimits { create_per_ip: None, records_per_ip: None, moves_per_ip: None, moves_per_seat: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print() {
        assert_eq!("20/s".parse::<Rate>(), Ok(Rate::new(20, 20)));
        assert_eq!("20/s,burst=40".parse::<Rate>(), Ok(Rate::new(20, 40)));
        assert_eq!(Rate::new(3, 9).to_string().parse::<Rate>(), Ok(Rate::new(3, 9)));
        for bad in ["", "20", "0/s", "20/s,burst=0", "20/m", "x/s", "20/s,40"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }
}
