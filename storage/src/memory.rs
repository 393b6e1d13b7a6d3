//! The in-memory backend: the same semantics as sled, no disk (service tests).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::broadcast;

use crate::contract::{
    AppendRequest, Appended, EventStore, NOTICE_BUFFER, PendingAppend, StoreError, StoreFuture, StoreStats, StoredRecord, StreamSummary,
    closed_receiver,
};
use crate::key::StreamId;

/// An event store held in memory. Appends are applied and acknowledged at
/// once (each is its own "group"; nothing is ever flushed).
#[derive(Debug)]
pub struct MemoryStore {
    // std mutex, not tokio's: never held across an await.
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    streams: BTreeMap<StreamId, Stream>,
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

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        MemoryStore {
            state: Mutex::new(State {
                streams: BTreeMap::new(),
                notices: Some(broadcast::channel(NOTICE_BUFFER).0),
                stats: StoreStats::default(),
            }),
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
        let stream = state.streams.entry(request.stream).or_default();
        stream.records.extend(request.records);
        if request.sealed.is_some() {
            stream.sealed = request.sealed;
        }
        if let Some(summary) = request.summary {
            stream.summary = Some((next_after, summary));
        }
        let notice = Appended { stream: request.stream, first_seq: request.expected_next, next_seq: next_after };
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
