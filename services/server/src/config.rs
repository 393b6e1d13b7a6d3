//! What the server bounds, with the defaults `ludo serve` starts with.
//!
//! Every limit here is also a flag of `ludo serve` (docs/operations.md,
//! "Limits and hardening").

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
    /// The proxies (load balancers) whose `X-Forwarded-For` names the client.
    pub trusted_proxies: TrustedProxies,
    /// Whether each request gets a line in the access log.
    pub access_log: AccessLog,
}

/// The access log: one line per request, at `info` under the target
/// `ludo::access` (method, route template, status, duration, bytes sent,
/// client address, request id). Every answer carries its request id in
/// `x-request-id` either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AccessLog {
    /// A line per request (the default).
    #[default]
    On,
    /// No line.
    Off,
}

/// The addresses of the proxies in front of the server (load balancers,
/// ingress controllers) whose word on the client's address is taken.
///
/// A request that comes from one of them is counted, for the per-address
/// rate limits, against the address its `X-Forwarded-For` names: the
/// rightmost entry that is not itself a trusted proxy (every proxy appends
/// the address it was connected from, so everything left of the first
/// untrusted entry is the client's own claim, which anyone can forge).
/// Connections from a trusted proxy are not capped per address (it carries
/// many clients); the total cap still holds. Empty (the default): the
/// header is ignored and the connection's address counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<ipnet::IpNet>);

/// At most this many `X-Forwarded-For` entries are looked at, from the right.
const MAX_FORWARDED_HOPS: usize = 32;

impl TrustedProxies {
    /// Trusts `ranges`.
    #[must_use]
    pub fn new(ranges: Vec<ipnet::IpNet>) -> Self {
        TrustedProxies(ranges)
    }

    /// Whether none is trusted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `ip` is a trusted proxy (an IPv4-mapped IPv6 address counts
    /// as its IPv4 address).
    #[must_use]
    pub fn trusts(&self, ip: std::net::IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|range| range.contains(&ip))
    }

    /// The client of a request that came from `peer` with these
    /// `X-Forwarded-For` header values (in order): `peer` unless it is
    /// trusted; then, from the right, the first entry not trusted. An
    /// entry that is not an address stops the walk at the hop that added
    /// it (the last one trusted).
    pub fn client<'a>(&self, peer: std::net::IpAddr, forwarded: impl DoubleEndedIterator<Item = &'a [u8]>) -> std::net::IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let entries = forwarded.rev().flat_map(|value| value.rsplit(|b| *b == b','));
        for entry in entries.take(MAX_FORWARDED_HOPS) {
            let Some(ip) = std::str::from_utf8(entry).ok().and_then(|text| parse_hop(text.trim())) else { return client };
            client = ip;
            if !self.trusts(ip) {
                return ip;
            }
        }
        client
    }
}

/// One `X-Forwarded-For` entry: an address, IPv6 possibly in brackets,
/// possibly with a port (some proxies add one).
fn parse_hop(text: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = text.parse() {
        return Some(ip);
    }
    text.parse::<std::net::SocketAddr>().ok().map(|addr| addr.ip()).or_else(|| text.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
}

impl std::str::FromStr for TrustedProxies {
    type Err = String;

    /// A comma-separated list of addresses or CIDR ranges
    /// (`10.0.0.0/8,192.168.1.7,fd00::/8`); empty or `none` for none.
    fn from_str(text: &str) -> Result<Self, String> {
        ludo_game::webhook::parse_ranges(text).map(TrustedProxies)
    }
}

impl std::fmt::Display for TrustedProxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        let items: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&items.join(","))
    }
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
    /// Imports and verifications (whole exports, up to 4 MiB each) per client address.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn client(trusted: &str, peer: &str, forwarded: &[&str]) -> IpAddr {
        let trusted: TrustedProxies = trusted.parse().unwrap();
        trusted.client(ip(peer), forwarded.iter().map(|v| v.as_bytes()))
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_claims() {
        assert_eq!(client("", "203.0.113.9", &["10.1.1.1"]), ip("203.0.113.9"));
        assert_eq!(client("10.0.0.0/8", "203.0.113.9", &["10.1.1.1"]), ip("203.0.113.9"));
    }

    #[test]
    fn behind_trusted_proxies_the_rightmost_untrusted_hop_is_the_client() {
        // The client forged a first entry; the proxy appended the real one.
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["198.51.100.1, 203.0.113.9"]), ip("203.0.113.9"));
        // Two proxies: the edge one's entry is trusted and skipped.
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["203.0.113.9, 10.0.0.3"]), ip("203.0.113.9"));
        // Several header lines read as one list, in order.
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["198.51.100.1", "203.0.113.9,10.0.0.3"]), ip("203.0.113.9"));
        // Brackets and ports.
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["[2001:db8::1]:4711"]), ip("2001:db8::1"));
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["203.0.113.9:80"]), ip("203.0.113.9"));
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["[2001:db8::1]"]), ip("2001:db8::1"));
        // An IPv4-mapped peer is trusted as its IPv4 address.
        assert_eq!(client("10.0.0.0/8", "::ffff:10.0.0.2", &["203.0.113.9"]), ip("203.0.113.9"));
    }

    #[test]
    fn without_a_usable_header_the_last_trusted_hop_counts() {
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &[]), ip("10.0.0.2"));
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["unknown"]), ip("10.0.0.2"));
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["203.0.113.9, garbage, 10.0.0.3"]), ip("10.0.0.3"));
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &["10.0.0.4, 10.0.0.3"]), ip("10.0.0.4"), "all trusted: the leftmost");
        // A long list is looked at only so far from the right.
        let long = vec!["10.9.9.9"; 100].join(",");
        assert_eq!(client("10.0.0.0/8", "10.0.0.2", &[&format!("203.0.113.9,{long}")]), ip("10.9.9.9"));
    }

    #[test]
    fn ranges_parse_and_print() {
        let trusted: TrustedProxies = " 10.0.0.0/8, 192.168.1.7 ,fd00::/8".parse().unwrap();
        assert_eq!(trusted.to_string(), "10.0.0.0/8,192.168.1.7/32,fd00::/8");
        assert!(trusted.trusts(ip("10.200.0.1")) && trusted.trusts(ip("fd00::1")) && !trusted.trusts(ip("192.168.1.8")));
        assert!("none".parse::<TrustedProxies>().unwrap().is_empty());
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
        let err = "10.0.0.0/8,nginx".parse::<TrustedProxies>().unwrap_err();
        assert!(err.contains("\"nginx\""), "{err}");
        assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
    }
}
