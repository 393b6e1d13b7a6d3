//! How many connections are served at once, in all and per client address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use crate::config::TrustedProxies;

/// Why a connection was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server serves `max_connections` already.
    Full,
    /// This client address has `max_connections_per_ip` open already.
    PerAddress,
}

impl Refusal {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Refusal::Full => "server_full",
            Refusal::PerAddress => "per_address",
        }
    }
}

/// The client an address counts for: an IPv4 address, or an IPv6 /64 (one
/// subscriber's network: handing out addresses within it costs nothing).
pub(crate) fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

/// Counts open connections against the caps.
#[derive(Debug)]
pub(crate) struct Admission {
    max: usize,
    per_address: usize,
    /// Proxies: not capped per address, since each carries many clients.
    trusted: TrustedProxies,
    /// A std mutex: held only to count.
    open: Mutex<Open>,
    /// Signalled when the last connection closes (graceful shutdown waits on it).
    drained: Notify,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

impl Admission {
    pub(crate) fn new(max: usize, per_address: usize, trusted: TrustedProxies) -> Arc<Self> {
        Arc::new(Admission { max: max.max(1), per_address, trusted, open: Mutex::default(), drained: Notify::new() })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // Counts are consistent between statements: poison is harmless.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a connection from `ip`, or says why not.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Admitted, Refusal> {
        let client = client_key(ip);
        let mut open = self.open();
        if open.total >= self.max {
            return Err(Refusal::Full);
        }
        let mine = open.by_client.get(&client).copied().unwrap_or(0);
        if self.per_address > 0 && mine >= self.per_address && !self.trusted.trusts(ip) {
            return Err(Refusal::PerAddress);
        }
        open.total += 1;
        open.by_client.insert(client, mine + 1);
        Ok(Admitted { admission: Arc::clone(self), client })
    }

    /// Connections open now.
    pub(crate) fn count(&self) -> usize {
        self.open().total
    }

    /// Resolves once no connection is open.
    pub(crate) async fn drained(&self) {
        loop {
            let notified = self.drained.notified();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// An admitted connection; dropping it frees its place.
#[derive(Debug)]
pub(crate) struct Admitted {
    admission: Arc<Admission>,
    client: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.admission.open();
        open.total -= 1;
        if let Some(count) = open.by_client.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.by_client.remove(&self.client);
            }
        }
        if open.total == 0 {
            self.admission.drained.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_hold_in_all_and_per_client_and_places_come_back() {
        let admission = Admission::new(3, 2, TrustedProxies::default());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = admission.admit(a).unwrap();
        let _second = admission.admit(a).unwrap();
        assert_eq!(admission.admit(a).unwrap_err(), Refusal::PerAddress);
        let _third = admission.admit(b).unwrap();
        assert_eq!(admission.admit(b).unwrap_err(), Refusal::Full);
        drop(first);
        let _again = admission.admit(a).expect("a place came back");
        assert_eq!(admission.count(), 3);
    }

    #[test]
    fn a_trusted_proxy_is_not_capped_per_address_but_counts_in_all() {
        let admission = Admission::new(4, 1, "10.0.0.9".parse().unwrap());
        let proxy: IpAddr = "10.0.0.9".parse().unwrap();
        let other: IpAddr = "10.0.0.1".parse().unwrap();
        let _kept: Vec<Admitted> = (0..3).map(|_| admission.admit(proxy).expect("a proxy carries many clients")).collect();
        let _one = admission.admit(other).unwrap();
        assert_eq!(admission.admit(proxy).unwrap_err(), Refusal::Full);
        let admission = Admission::new(4, 1, "10.0.0.9".parse().unwrap());
        let _one = admission.admit(other).unwrap();
        assert_eq!(admission.admit(other).unwrap_err(), Refusal::PerAddress, "others still are");
    }

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_ipv4_is_itself() {
        let one: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let two: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(one), client_key(two));
        assert_ne!(client_key(one), client_key(other));
        assert_eq!(client_key("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
    }
}
