//! The in-memory backend: the same semantics as sled, no disk (service tests).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::broadcast;

use crate::contract::{
    AppendRequest, Appended, EventStore, FeedEntry, MAX_FEED_PAGE, NOTICE_BUFFER, PendingAppend, StoreError, StoreFuture, StoreStats,
    StoredRecord, StreamSummary, closed_receiver,
};
use crate::key::StreamId;
use crate::projection::{
    LocalLeases, MAX_PROJECTION_SCAN, ProjectionCommit, ProjectionLease, ProjectionRow, conflict, validate_key, validate_name,
};

/// An event store held in memory. Appends are applied and acknowledged at
/// once (each is its own "group"; nothing is ever flushed).
#[derive(Debug)]
pub struct MemoryStore {
    // std mutex, not tokio's: never held across an await.
    state: Mutex<State>,
    leases: LocalLeases,
}

#[derive(Debug)]
struct State {
    streams: BTreeMap<StreamId, Stream>,
    /// The feed: position `p` is `feed[p - 1]`, a record of a stream.
    feed: Vec<(StreamId, u64)>,
    projections: BTreeMap<String, Projection>,
    /// `None` once closed.
    notices: Option<broadcast::Sender<Appended>>,
    stats: StoreStats,
}

#[derive(Debug, Default)]
struct Stream {
    records: Vec<Vec<u8>>,
    sealed: Option<Vec<u8>>,
    /// The summary and the record count it describes.
    summary: Option<(u64, Vec<u8>)>,
}

#[derive(Debug, Default)]
struct Projection {
    checkpoint: u64,
    rows: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        MemoryStore {
            state: Mutex::new(State {
                streams: BTreeMap::new(),
                feed: Vec::new(),
                projections: BTreeMap::new(),
                notices: Some(broadcast::channel(NOTICE_BUFFER).0),
                stats: StoreStats::default(),
            }),
            leases: LocalLeases::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock, and the state is consistent
        // between statements anyway: a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state, unless closed.
    fn open_state(&self) -> Result<MutexGuard<'_, State>, StoreError> {
        let state = self.lock();
        if state.notices.is_none() {
            return Err(StoreError::Closed);
        }
        Ok(state)
    }

    fn apply(&self, request: AppendRequest) -> Result<Appended, StoreError> {
        request.validate()?;
        let next_after = request.next_after()?;
        let mut state = self.open_state()?;
        let actual_next = state.streams.get(&request.stream).map_or(0, |stream| stream.records.len() as u64);
        if actual_next != request.expected_next {
            return Err(StoreError::Conflict { stream: request.stream, expected_next: request.expected_next, actual_next });
        }
        let count = request.records.len() as u64;
        // Positions follow append order: appends are applied under the lock.
        let first_position = if count == 0 { 0 } else { state.feed.len() as u64 + 1 };
        state.feed.extend((request.expected_next..next_after).map(|seq| (request.stream, seq)));
        let stream = state.streams.entry(request.stream).or_default();
        stream.records.extend(request.records);
        if request.sealed.is_some() {
            stream.sealed = request.sealed;
        }
        if let Some(summary) = request.summary {
            stream.summary = Some((next_after, summary));
        }
        let notice = Appended { stream: request.stream, first_seq: request.expected_next, next_seq: next_after, first_position };
        if count == 0 {
            return Ok(notice); // a summary only: no records, no notice
        }
        state.stats.appends += 1;
        state.stats.records += count;
        state.stats.groups += 1;
        // Sent under the lock, so notices follow append order. No receiver
        // is not an error.
        if let Some(notices) = &state.notices {
            let _ = notices.send(notice.clone());
        }
        Ok(notice)
    }
}

impl MemoryStore {
    fn read_feed_now(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        let state = self.open_state()?;
        let Some(from) = usize::try_from(after).ok().filter(|from| *from < state.feed.len()) else { return Ok(Vec::new()) };
        let page = state.feed.get(from..).unwrap_or_default().iter().take(limit.min(MAX_FEED_PAGE));
        Ok((after + 1..)
            .zip(page)
            .map(|(position, (stream, seq))| {
                let bytes =
                    usize::try_from(*seq).ok().and_then(|seq| state.streams.get(stream)?.records.get(seq)).cloned().unwrap_or_default();
                FeedEntry { position, stream: *stream, seq: *seq, bytes }
            })
            .collect())
    }

    fn projection_commit_now(&self, commit: &ProjectionCommit) -> Result<(), StoreError> {
        commit.validate()?;
        let mut state = self.open_state()?;
        let actual = state.projections.get(&commit.name).map(|p| p.checkpoint);
        if actual != commit.expected {
            return Err(conflict(&commit.name, commit.expected, actual));
        }
        let projection = state.projections.entry(commit.name.clone()).or_default();
        for (key, value) in commit.changes() {
            match value {
                Some(value) => projection.rows.insert(key.to_vec(), value.to_vec()),
                None => projection.rows.remove(key),
            };
        }
        projection.checkpoint = commit.checkpoint;
        Ok(())
    }

    fn projection_scan_now(&self, name: &str, after: Option<&[u8]>, limit: usize) -> Result<Vec<ProjectionRow>, StoreError> {
        validate_name(name)?;
        if let Some(after) = after {
            validate_key(name, after)?;
        }
        let state = self.open_state()?;
        let Some(projection) = state.projections.get(name) else { return Ok(Vec::new()) };
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        Ok(projection
            .rows
            .range::<[u8], _>((start, Bound::Unbounded))
            .take(limit.min(MAX_PROJECTION_SCAN))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect())
    }

    fn projection_load_now(&self, name: &str) -> Result<Option<u64>, StoreError> {
        validate_name(name)?;
        Ok(self.open_state()?.projections.get(name).map(|p| p.checkpoint))
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl EventStore for MemoryStore {
    fn append(&self, request: AppendRequest) -> PendingAppend {
        PendingAppend::ready(self.apply(request))
    }

    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> StoreFuture<Vec<StoredRecord>> {
        // Memory never blocks: answered at once.
        Box::pin(std::future::ready(self.read_blocking(stream, from, to)))
    }

    fn read_blocking(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        let state = self.open_state()?;
        let Some(records) = state.streams.get(&stream).map(|s| &s.records) else {
            return Ok(Vec::new());
        };
        let index = |seq: u64| usize::try_from(seq).unwrap_or(usize::MAX).min(records.len());
        let end = to.map_or(records.len(), index);
        let slice = records.get(index(from)..end).unwrap_or_default();
        Ok((from..).zip(slice).map(|(seq, bytes)| StoredRecord { seq, bytes: bytes.clone() }).collect())
    }

    fn next_seq(&self, stream: StreamId) -> Result<u64, StoreError> {
        let state = self.open_state()?;
        Ok(state.streams.get(&stream).map_or(0, |s| s.records.len() as u64))
    }

    fn list_streams(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError> {
        let state = self.open_state()?;
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        Ok(state.streams.range((start, Bound::Unbounded)).map(|(id, _)| *id).take(limit).collect())
    }

    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> StoreFuture<Vec<StreamSummary>> {
        // Memory never blocks: answered at once.
        Box::pin(std::future::ready(self.list_summaries_blocking(after, limit)))
    }

    fn list_summaries_blocking(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
        let state = self.open_state()?;
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        Ok(state
            .streams
            .range((start, Bound::Unbounded))
            .take(limit)
            .map(|(id, s)| {
                let next_seq = s.records.len() as u64;
                let summary = s.summary.as_ref().filter(|(at, _)| *at == next_seq).map(|(_, bytes)| bytes.clone());
                StreamSummary { stream: *id, next_seq, summary }
            })
            .collect())
    }

    fn sealed(&self, stream: StreamId) -> StoreFuture<Option<Vec<u8>>> {
        // Memory never blocks: answered at once.
        Box::pin(std::future::ready(self.sealed_blocking(stream)))
    }

    fn sealed_blocking(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
        let state = self.open_state()?;
        Ok(state.streams.get(&stream).and_then(|s| s.sealed.clone()))
    }

    // Memory never blocks: every answer below is ready at once.

    fn read_feed(&self, after: u64, limit: usize) -> StoreFuture<Vec<FeedEntry>> {
        Box::pin(std::future::ready(self.read_feed_now(after, limit)))
    }

    fn read_feed_blocking(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        self.read_feed_now(after, limit)
    }

    fn feed_head(&self) -> Result<u64, StoreError> {
        Ok(self.open_state()?.feed.len() as u64)
    }

    fn projection_load(&self, name: &str) -> StoreFuture<Option<u64>> {
        Box::pin(std::future::ready(self.projection_load_now(name)))
    }

    fn projection_commit(&self, commit: ProjectionCommit) -> StoreFuture<()> {
        Box::pin(std::future::ready(self.projection_commit_now(&commit)))
    }

    fn projection_get(&self, name: &str, key: &[u8]) -> StoreFuture<Option<Vec<u8>>> {
        let got = validate_name(name)
            .and_then(|()| validate_key(name, key))
            .and_then(|()| Ok(self.open_state()?.projections.get(name).and_then(|p| p.rows.get(key)).cloned()));
        Box::pin(std::future::ready(got))
    }

    fn projection_scan(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> StoreFuture<Vec<ProjectionRow>> {
        Box::pin(std::future::ready(self.projection_scan_now(name, after.as_deref(), limit)))
    }

    fn projection_reset(&self, name: &str) -> StoreFuture<()> {
        let reset = validate_name(name).and_then(|()| {
            self.open_state()?.projections.remove(name);
            Ok(())
        });
        Box::pin(std::future::ready(reset))
    }

    fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        Ok(self.open_state()?.projections.iter().map(|(name, p)| (name.clone(), p.checkpoint)).collect())
    }

    fn projection_lease(&self, name: &str) -> StoreFuture<Option<ProjectionLease>> {
        let lease = self.open_state().and_then(|_| self.leases.take(name));
        Box::pin(std::future::ready(lease))
    }

    fn subscribe(&self) -> broadcast::Receiver<Appended> {
        self.lock().notices.as_ref().map_or_else(closed_receiver, broadcast::Sender::subscribe)
    }

    fn health(&self) -> Result<(), StoreError> {
        self.open_state().map(|_| ())
    }

    fn close(&self) -> Result<(), StoreError> {
        // Dropping the sender ends every subscriber's channel.
        self.lock().notices = None;
        Ok(())
    }

    fn stats(&self) -> StoreStats {
        self.lock().stats
    }
}
