//! Projection leases on PostgreSQL: a session advisory lock
//! (`pg_try_advisory_lock`) held by a connection of the lease's own, outside
//! the pool, for as long as the lease lives.
//!
//! Why a session lock on its own connection: it lasts as long as the
//! holder wants without a transaction left open (which would hold back
//! vacuum), and it cannot outlive its holder: the database releases it when
//! the connection ends, whether the lease is dropped, the process dies or
//! the network fails. A lost connection is a lost lease, which
//! [`PgHold::is_held`] reports.
//!
//! The lock's key is a 64-bit hash of the projection's name: two names
//! with the same hash would share one lease, which only delays one of them
//! (the commits' compare-and-set, not the lease, keeps records from being
//! applied twice).

use tokio_postgres_rustls::MakeRustlsConnect;

use super::{backend, describe};
use crate::contract::StoreError;

/// A held advisory lock: its connection, driven by a task of the store's
/// runtime. Dropping it closes the connection, which releases the lock.
pub(crate) struct PgHold {
    client: tokio_postgres::Client,
    driver: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PgHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgHold").field("held", &self.is_held()).finish()
    }
}

impl PgHold {
    /// Whether the connection holding the lock is still up.
    pub(crate) fn is_held(&self) -> bool {
        !self.client.is_closed() && !self.driver.is_finished()
    }
}

/// The advisory lock key of projection `name`: FNV-1a (64 bits) of a
/// prefix and the name, stable across builds and servers.
fn lock_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"ludo projection lease:".iter().chain(name.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// Opens a connection and tries the lock: the hold, or `None` while another
/// session has it (the connection is then closed at once).
pub(super) async fn take((config, tls): (tokio_postgres::Config, MakeRustlsConnect), name: String) -> Result<Option<PgHold>, StoreError> {
    let (client, connection) =
        config.connect(tls).await.map_err(|e| StoreError::Unavailable(format!("cannot connect to hold a lease: {}", describe(&e))))?;
    let driver = tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::warn!("the connection holding a projection lease failed: {err}");
        }
    });
    let row = client.query_one("SELECT pg_try_advisory_lock($1)", &[&lock_key(&name)]).await.map_err(|e| backend(&e))?;
    if row.get::<_, bool>(0) { Ok(Some(PgHold { client, driver })) } else { Ok(None) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_are_stable_and_differ_by_name() {
        assert_eq!(lock_key("ratings"), lock_key("ratings"));
        assert_ne!(lock_key("ratings"), lock_key("standings"));
    }
}
