//! Projection storage on sled.
//!
//! Tree `projections`: key = the name, value = the checkpoint (big-endian
//! `u64`). Tree `projection_rows`: key = [`ProjectionRowKey`], value = the
//! row's value.
//!
//! Commits and resets go through the writer thread like appends: the
//! compare-and-set is checked there (one writer: no race between the check
//! and the write), all of a group's projection changes are written in one
//! sled transaction over both trees (atomic: rows and checkpoint together),
//! and they are acknowledged after the group's flush. Readers wait out that
//! window (the writer holds [`Shared::projections_gate`](super::Shared) from
//! the transaction to the end of the flush), so they never see a change
//! before it is durable. Projection commits are few (a runner commits a
//! batch of records at a time), so the transaction's cost does not weigh on
//! appends, which share the group's flush without it.

use std::collections::{BTreeMap, HashMap};

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::{Handles, Shared, backend};
use crate::contract::StoreError;
use crate::key::ProjectionRowKey;
use crate::projection::{MAX_PROJECTION_SCAN, ProjectionCommit, ProjectionRow, conflict, validate_key, validate_name};

/// A decided change, written by the group's transaction in queue order.
pub(super) enum Change {
    /// Rows written (`Some`) or deleted (`None`), and the checkpoint set.
    Commit { name: String, checkpoint: u64, rows: Vec<(Vec<u8>, Option<Vec<u8>>)> },
    /// The checkpoint deleted, and these rows.
    Reset { name: String, rows: Vec<Vec<u8>> },
}

/// The writer's view of projections while it decides a group: the stored
/// checkpoints, as changed by the group's earlier decisions.
#[derive(Default)]
pub(super) struct Pending {
    checkpoints: HashMap<String, Option<u64>>,
    /// Rows the group's earlier commits wrote, by projection (a reset later
    /// in the group deletes them too).
    written: HashMap<String, Vec<Vec<u8>>>,
}

fn checkpoint_of(value: &[u8], name: &str) -> Result<u64, StoreError> {
    value
        .try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::Backend(format!("projection {name}: a checkpoint of {} bytes", value.len())))
}

/// The stored checkpoint of `name`.
fn stored(handles: &Handles, name: &str) -> Result<Option<u64>, StoreError> {
    let value = handles.projections.get(name.as_bytes()).map_err(|e| backend("reading the projections tree", e))?;
    value.map(|value| checkpoint_of(&value, name)).transpose()
}

impl Pending {
    fn checkpoint(&self, handles: &Handles, name: &str) -> Result<Option<u64>, StoreError> {
        match self.checkpoints.get(name) {
            Some(pending) => Ok(*pending),
            None => stored(handles, name),
        }
    }

    /// Checks a commit against the checkpoint as the group leaves it.
    pub(super) fn commit(&mut self, handles: &Handles, commit: ProjectionCommit) -> Result<Change, StoreError> {
        commit.validate()?;
        let actual = self.checkpoint(handles, &commit.name)?;
        if actual != commit.expected {
            return Err(conflict(&commit.name, commit.expected, actual));
        }
        let rows: Vec<(Vec<u8>, Option<Vec<u8>>)> =
            commit.changes().into_iter().map(|(key, value)| (key.to_vec(), value.map(<[u8]>::to_vec))).collect();
        self.checkpoints.insert(commit.name.clone(), Some(commit.checkpoint));
        self.written.entry(commit.name.clone()).or_default().extend(rows.iter().map(|(key, _)| key.clone()));
        Ok(Change::Commit { name: commit.name, checkpoint: commit.checkpoint, rows })
    }

    /// A reset: every stored row of `name`, and those the group wrote.
    pub(super) fn reset(&mut self, handles: &Handles, name: String) -> Result<Change, StoreError> {
        validate_name(&name)?;
        let mut rows = Vec::new();
        for entry in handles.projection_rows.scan_prefix(ProjectionRowKey::prefix(&name)) {
            let (key, _) = entry.map_err(|e| backend("reading the projection rows", e))?;
            rows.push(key.to_vec());
        }
        let written = self.written.remove(&name).unwrap_or_default();
        rows.extend(written.iter().map(|key| ProjectionRowKey { name: &name, key }.to_bytes()));
        self.checkpoints.insert(name.clone(), None);
        Ok(Change::Reset { name, rows })
    }
}

/// Writes a group's projection changes in one transaction.
pub(super) fn write(handles: &Handles, changes: &[Change]) -> Result<(), StoreError> {
    (&handles.projections, &handles.projection_rows)
        .transaction(|(projections, rows)| {
            for change in changes {
                match change {
                    Change::Commit { name, checkpoint, rows: puts } => {
                        for (key, value) in puts {
                            let key = ProjectionRowKey { name, key }.to_bytes();
                            match value {
                                Some(value) => rows.insert(key, value.as_slice())?,
                                None => rows.remove(key)?,
                            };
                        }
                        projections.insert(name.as_bytes(), &checkpoint.to_be_bytes()[..])?;
                    }
                    Change::Reset { name, rows: keys } => {
                        for key in keys {
                            rows.remove(key.as_slice())?;
                        }
                        projections.remove(name.as_bytes())?;
                    }
                }
            }
            Ok::<(), ConflictableTransactionError<()>>(())
        })
        .map_err(|e| match e {
            TransactionError::Storage(e) => backend("writing projections", e),
            TransactionError::Abort(()) => StoreError::Backend("writing projections: aborted".into()),
        })
}

impl Shared {
    /// Runs a read of projection data, after any change being flushed.
    fn projection_read<T>(&self, f: impl FnOnce(&Handles) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let _gate = self.projections_gate.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.with_handles(f)
    }

    pub(super) fn projection_load(&self, name: &str) -> Result<Option<u64>, StoreError> {
        validate_name(name)?;
        self.projection_read(|handles| stored(handles, name))
    }

    pub(super) fn projection_get(&self, name: &str, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        validate_name(name)?;
        validate_key(name, key)?;
        self.projection_read(|handles| {
            let value = handles
                .projection_rows
                .get(ProjectionRowKey { name, key }.to_bytes())
                .map_err(|e| backend("reading a projection row", e))?;
            Ok(value.map(|value| value.to_vec()))
        })
    }

    pub(super) fn projection_scan(&self, name: &str, after: Option<&[u8]>, limit: usize) -> Result<Vec<ProjectionRow>, StoreError> {
        validate_name(name)?;
        if let Some(after) = after {
            validate_key(name, after)?;
        }
        let prefix = ProjectionRowKey::prefix(name);
        self.projection_read(|handles| {
            let start = match after {
                Some(after) => std::ops::Bound::Excluded(ProjectionRowKey { name, key: after }.to_bytes()),
                None => std::ops::Bound::Included(prefix.clone()),
            };
            let mut out = Vec::new();
            for entry in handles.projection_rows.range((start, std::ops::Bound::Unbounded)).take(limit.min(MAX_PROJECTION_SCAN)) {
                let (key, value) = entry.map_err(|e| backend("reading the projection rows", e))?;
                let Some(row) = ProjectionRowKey::row_key(name, &key) else { break };
                out.push((row.to_vec(), value.to_vec()));
            }
            Ok(out)
        })
    }

    pub(super) fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.projection_read(|handles| {
            let mut names = BTreeMap::new();
            for entry in handles.projections.iter() {
                let (name, value) = entry.map_err(|e| backend("reading the projections tree", e))?;
                let name = String::from_utf8(name.to_vec()).map_err(|_| StoreError::Backend("a projection name is not UTF-8".into()))?;
                let checkpoint = checkpoint_of(&value, &name)?;
                names.insert(name, checkpoint);
            }
            Ok(names.into_iter().collect())
        })
    }
}
