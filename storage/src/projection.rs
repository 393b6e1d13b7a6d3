//! Projection storage: the durable state of read models built from the
//! global feed (see [`EventStore::projection_commit`](crate::EventStore::projection_commit)).
//!
//! A projection is a name, a checkpoint (the feed position of the last
//! record it applied) and rows (key → value, in key order). Every change is
//! a [`ProjectionCommit`]: rows written or deleted and the checkpoint moved,
//! atomically, only if the stored checkpoint is the one the committer read.
//! That compare-and-set is what keeps a record from being applied twice,
//! even by two processes running the same projection; the
//! [`ProjectionLease`] only keeps them from wasting work.
//!
//! What every backend checks the same way lives here: the names, the
//! bounds, the order of a commit's puts.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use crate::contract::StoreError;

/// Longest projection name, in bytes (names are `[a-z0-9_-]`, so also in
/// characters).
pub const MAX_PROJECTION_NAME: usize = 64;
/// Longest row key, in bytes.
pub const MAX_PROJECTION_KEY: usize = 512;
/// Longest row value, in bytes.
pub const MAX_PROJECTION_VALUE: usize = 64 * 1024;
/// Most rows one commit may write or delete.
pub const MAX_PROJECTION_PUTS: usize = 10_000;
/// Most rows one scan returns, whatever the limit asked.
pub const MAX_PROJECTION_SCAN: usize = 10_000;

/// A projection's row: its key and its value.
pub type ProjectionRow = (Vec<u8>, Vec<u8>);

/// One atomic step of a projection: check the stored checkpoint, write or
/// delete rows, move the checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectionCommit {
    /// The projection (see [`validate_name`]).
    pub name: String,
    /// The checkpoint the committer read: the commit is refused with
    /// [`StoreError::ProjectionConflict`] unless the stored one is this
    /// (`None`: the projection has never committed, or was reset).
    pub expected: Option<u64>,
    /// The checkpoint stored once the commit is applied: the feed position
    /// of the last record these puts account for.
    pub checkpoint: u64,
    /// Rows to write (`Some(value)`) or delete (`None`), applied in order:
    /// of two puts of one key the later wins.
    pub puts: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl ProjectionCommit {
    /// Checks the name, the bounds of keys and values, the number of puts,
    /// and that the checkpoint fits every backend (PostgreSQL's `bigint`).
    ///
    /// # Errors
    /// [`StoreError::Invalid`] naming what is wrong; nothing is written.
    pub fn validate(&self) -> Result<(), StoreError> {
        validate_name(&self.name)?;
        if self.puts.len() > MAX_PROJECTION_PUTS {
            return Err(StoreError::Invalid(format!(
                "projection {}: {} puts in one commit, at most {MAX_PROJECTION_PUTS}",
                self.name,
                self.puts.len()
            )));
        }
        for checkpoint in self.expected.iter().chain([&self.checkpoint]) {
            if i64::try_from(*checkpoint).is_err() {
                return Err(StoreError::Invalid(format!("projection {}: checkpoint {checkpoint} is beyond 2^63 - 1", self.name)));
            }
        }
        for (key, value) in &self.puts {
            validate_key(&self.name, key)?;
            if let Some(value) = value
                && value.len() > MAX_PROJECTION_VALUE
            {
                return Err(StoreError::Invalid(format!(
                    "projection {}: a value of {} bytes, at most {MAX_PROJECTION_VALUE}",
                    self.name,
                    value.len()
                )));
            }
        }
        Ok(())
    }

    /// The puts with one change per key, the last asked (what applying
    /// them in order leaves), in key order.
    pub(crate) fn changes(&self) -> BTreeMap<&[u8], Option<&[u8]>> {
        self.puts.iter().map(|(key, value)| (key.as_slice(), value.as_deref())).collect()
    }
}

/// Checks a projection's name: 1 to [`MAX_PROJECTION_NAME`] characters of
/// `a-z`, `0-9`, `_` and `-` (safe in a file name, a URL, a log line).
///
/// # Errors
/// [`StoreError::Invalid`] saying why.
pub fn validate_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || name.len() > MAX_PROJECTION_NAME {
        return Err(StoreError::Invalid(format!(
            "projection name {name:?}: {} characters, expected 1 to {MAX_PROJECTION_NAME}",
            name.chars().count()
        )));
    }
    if let Some(bad) = name.chars().find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '-')) {
        return Err(StoreError::Invalid(format!("projection name {name:?}: {bad:?} is not one of a-z, 0-9, _ and -")));
    }
    Ok(())
}

/// Checks a row key's length.
pub(crate) fn validate_key(name: &str, key: &[u8]) -> Result<(), StoreError> {
    if key.len() > MAX_PROJECTION_KEY {
        return Err(StoreError::Invalid(format!("projection {name}: a key of {} bytes, at most {MAX_PROJECTION_KEY}", key.len())));
    }
    Ok(())
}

/// The conflict of a commit that expected `expected` where `actual` is stored.
pub(crate) fn conflict(name: &str, expected: Option<u64>, actual: Option<u64>) -> StoreError {
    StoreError::ProjectionConflict { name: name.to_string(), expected, actual }
}

/// The right to advance a projection, held until dropped.
///
/// On PostgreSQL it is a session advisory lock held by a connection of its
/// own: several servers on one database advance each projection one at a
/// time. The lock goes with its connection, so a holder should look at
/// [`is_held`](Self::is_held) before each step (and the commit's
/// compare-and-set refuses a step another holder already made). The
/// embedded stores (memory, sled) belong to one process: their leases only
/// keep two tasks of that process from advancing one projection together.
#[must_use = "the lease is released when dropped"]
#[derive(Debug)]
pub struct ProjectionLease {
    name: String,
    hold: Hold,
}

/// What keeps a lease, by backend.
#[derive(Debug)]
pub(crate) enum Hold {
    /// A name in a store's set of leased names, removed on drop.
    Local(LocalHold),
    /// A PostgreSQL connection holding the advisory lock.
    Postgres(crate::postgres::lease::PgHold),
}

impl ProjectionLease {
    pub(crate) fn new(name: &str, hold: Hold) -> Self {
        ProjectionLease { name: name.to_string(), hold }
    }

    /// The projection leased.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the lease still stands: false once the PostgreSQL
    /// connection holding it is lost (the database then released the lock,
    /// and another server may have taken it). Always true on the embedded
    /// stores.
    #[must_use]
    pub fn is_held(&self) -> bool {
        match &self.hold {
            Hold::Local(hold) => hold.is_held(),
            Hold::Postgres(hold) => hold.is_held(),
        }
    }
}

/// The projections leased in one embedded store.
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalLeases(Arc<Mutex<HashSet<String>>>);

impl LocalLeases {
    /// A lease on `name`, unless one is out already.
    pub(crate) fn take(&self, name: &str) -> Result<Option<ProjectionLease>, StoreError> {
        validate_name(name)?;
        // The set is consistent between statements: poison is harmless.
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !held.insert(name.to_string()) {
            return Ok(None);
        }
        let hold = LocalHold { leases: self.clone(), name: name.to_string() };
        Ok(Some(ProjectionLease::new(name, Hold::Local(hold))))
    }
}

/// A name in [`LocalLeases`], released on drop.
#[derive(Debug)]
pub(crate) struct LocalHold {
    leases: LocalLeases,
    name: String,
}

impl LocalHold {
    /// Whether the store still counts this name as leased (it does until
    /// the hold is dropped).
    fn is_held(&self) -> bool {
        self.leases.0.lock().unwrap_or_else(PoisonError::into_inner).contains(&self.name)
    }
}

impl Drop for LocalHold {
    fn drop(&mut self) {
        self.leases.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(name: &str, puts: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> ProjectionCommit {
        ProjectionCommit { name: name.into(), expected: None, checkpoint: 1, puts }
    }

    #[test]
    fn names_are_short_lower_case_words() {
        for good in ["a", "ratings", "player-history_2", &"x".repeat(64)] {
            assert_eq!(validate_name(good), Ok(()), "{good}");
        }
        for bad in ["", "Ratings", "a b", "a/b", "é", "a.b", &"x".repeat(65)] {
            assert!(matches!(validate_name(bad), Err(StoreError::Invalid(_))), "{bad}");
        }
    }

    #[test]
    fn bounds_are_checked() {
        assert_eq!(commit("p", vec![(vec![1; MAX_PROJECTION_KEY], Some(vec![2; MAX_PROJECTION_VALUE]))]).validate(), Ok(()));
        let invalid = |c: ProjectionCommit| matches!(c.validate(), Err(StoreError::Invalid(_)));
        assert!(invalid(commit("p", vec![(vec![1; MAX_PROJECTION_KEY + 1], None)])));
        assert!(invalid(commit("p", vec![(vec![1], Some(vec![2; MAX_PROJECTION_VALUE + 1]))])));
        assert!(invalid(commit("p", vec![(vec![1], None); MAX_PROJECTION_PUTS + 1])));
        assert!(invalid(ProjectionCommit { checkpoint: u64::MAX, ..commit("p", vec![]) }));
        assert!(invalid(commit("P", vec![])));
    }

    #[test]
    fn the_last_put_of_a_key_wins() {
        let c = commit("p", vec![(b"k".to_vec(), Some(b"1".to_vec())), (b"a".to_vec(), None), (b"k".to_vec(), None)]);
        let changes: Vec<_> = c.changes().into_iter().collect();
        assert_eq!(changes, vec![(&b"a"[..], None), (&b"k"[..], None)]);
    }

    #[test]
    fn a_local_lease_is_exclusive_until_dropped() {
        let leases = LocalLeases::default();
        let first = leases.take("p").expect("valid").expect("granted");
        assert!(first.is_held());
        assert!(leases.take("p").expect("valid").is_none());
        let other = leases.take("q").expect("valid");
        assert!(other.is_some(), "another name is leased apart");
        drop(first);
        assert!(leases.take("p").expect("valid").is_some());
        assert!(leases.take("Bad").is_err());
    }
}
