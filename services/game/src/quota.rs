//! Token buckets per key (a client address, a seat): how often a client may
//! make the server store or compute something. GCRA through `governor`.

use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// A token bucket: `per_second` tokens flow in, at most `burst` are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Sustained requests per second (at least 1).
    pub per_second: u32,
    /// Requests allowed at once after a quiet spell (at least 1).
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

/// Checks between two prunings of the keys whose buckets are full again
/// (they hold no information: a fresh bucket is the same).
const PRUNE_EVERY: u64 = 4096;

/// One token bucket per key, at one rate.
#[derive(Debug)]
pub struct Limiter<K: Hash + Eq + Clone> {
    buckets: DefaultKeyedRateLimiter<K>,
    checks: AtomicU64,
}

impl<K: Hash + Eq + Clone> Limiter<K> {
    /// Buckets at `rate`.
    #[must_use]
    pub fn new(rate: Rate) -> Self {
        let per_second = NonZeroU32::new(rate.per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(rate.burst).unwrap_or(NonZeroU32::MIN);
        Limiter { buckets: RateLimiter::keyed(Quota::per_second(per_second).allow_burst(burst)), checks: AtomicU64::new(0) }
    }

    /// Takes a token from `key`'s bucket, or says how long until one is there.
    ///
    /// # Errors
    /// The wait, when the bucket is empty.
    pub fn check(&self, key: &K) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            // Keys stay bounded by the clients active within one refill.
            self.buckets.retain_recent();
            self.buckets.shrink_to_fit();
        }
        self.buckets.check_key(key).map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// A wait in whole milliseconds, at least 1: what a refusal tells the
/// client (`retry_after_ms`, gRPC `RetryInfo`; `Retry-After` rounds it up to seconds).
#[must_use]
pub fn retry_after_ms(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1)
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

    #[test]
    fn a_burst_passes_then_the_bucket_refuses_with_a_wait_per_key() {
        let limiter = Limiter::new(Rate::new(1, 3));
        for _ in 0..3 {
            limiter.check(&"a").unwrap();
        }
        let wait = limiter.check(&"a").unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1), "{wait:?}");
        limiter.check(&"b").expect("another key has its own bucket");
    }
}
