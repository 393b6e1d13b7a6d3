//! The writer thread: every write of a [`SledStore`](super::SledStore) goes
//! through it, with group commit.
//!
//! Why one dedicated thread:
//! - sled calls block (a flush waits for the disk); they must stay off the
//!   async runtime's workers, and `append` must never block its caller;
//! - a single writer makes the optimistic-concurrency check race-free: it
//!   checks `expected_next` against the stream's next seq and writes in one
//!   step, with no lock held across I/O and no compare-and-swap retries;
//! - flushes are shared: whatever queued up while the previous group was
//!   being flushed is written and then made durable by one flush, so the
//!   cost of a flush is spread over every append of the group.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, mpsc};
use std::time::Instant;

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use tokio::sync::{broadcast, oneshot};

use super::fsync::FileSyncer;
use super::{Handles, MAX_CACHED_STREAMS, RECOVERY_INTERVAL, Shared, StreamState, backend, open_handles, stored_next};
use crate::contract::{AppendRequest, Appended, StoreError};
use crate::key::{RecordKey, StreamId};

/// At most this many appends per group …
const MAX_GROUP_APPENDS: usize = 1024;
/// … and about this many payload bytes (a larger single append still forms a
/// group of its own).
const MAX_GROUP_BYTES: usize = 8 << 20;

/// Where an append's answer goes.
type Reply = oneshot::Sender<Result<Appended, StoreError>>;

/// An accepted append, waiting to be written.
struct Accepted {
    stream: StreamId,
    first_seq: u64,
    records: Vec<Vec<u8>>,
    sealed: Option<Vec<u8>>,
    summary: Option<Vec<u8>>,
}

/// One queued append and where to send its answer.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) request: AppendRequest,
    pub(super) reply: Reply,
}

/// The writer thread's state.
pub(super) struct Writer {
    /// The open database; `None` while a recovery could not reopen it.
    handles: Option<Arc<Handles>>,
    shared: Arc<Shared>,
    queue: mpsc::Receiver<Job>,
    notices: broadcast::Sender<Appended>,
    syncer: Option<FileSyncer>,
    /// When the last recovery was tried (while `Shared::failure` says why
    /// appends are refused).
    last_recovery: Instant,
    /// Whether the last look found the disk without room for writes (to say
    /// so once, not at every group or recovery).
    disk_full: bool,
}

impl Writer {
    pub(super) fn new(
        handles: Arc<Handles>,
        shared: Arc<Shared>,
        queue: mpsc::Receiver<Job>,
        notices: broadcast::Sender<Appended>,
        syncer: Option<FileSyncer>,
    ) -> Self {
        Writer { handles: Some(handles), shared, queue, notices, syncer, last_recovery: Instant::now(), disk_full: false }
    }

    /// The next queued append; while failed, also wakes up every
    /// [`RECOVERY_INTERVAL`] to try to recover. `None` once the queue's
    /// sender is dropped and the queue is drained.
    fn next_job(&mut self) -> Option<Job> {
        loop {
            if self.shared.refusal().is_none() {
                return self.queue.recv().ok();
            }
            if self.last_recovery.elapsed() >= RECOVERY_INTERVAL {
                self.recover();
                continue;
            }
            match self.queue.recv_timeout(RECOVERY_INTERVAL.saturating_sub(self.last_recovery.elapsed())) {
                Ok(job) => return Some(job),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Commits groups until the queue's sender is dropped and the queue is
    /// drained, then flushes a last time.
    pub(super) fn run(mut self) -> Result<(), StoreError> {
        while let Some(first) = self.next_job() {
            #[cfg(test)]
            self.shared.hooks.checkpoint(super::tests::Point::BeforeDrain);
            let mut bytes = first.request.payload_len();
            let mut group = vec![first];
            while group.len() < MAX_GROUP_APPENDS && bytes < MAX_GROUP_BYTES {
                match self.queue.try_recv() {
                    Ok(job) => {
                        bytes += job.request.payload_len();
                        group.push(job);
                    }
                    Err(_) => break,
                }
            }
            self.commit(group, bytes);
        }
        if let Some(refusal) = self.shared.refusal() {
            return Err(refusal);
        }
        self.flush()
    }

    /// Tries to leave the failed state without taking the database from
    /// readers while the disk stays full.
    ///
    /// While the file system reports no room for writes (see [`KEEP_FREE`](super::space::KEEP_FREE)),
    /// nothing is done: readers keep the database in hand (sled latched the
    /// failed write's error, which stops its writes, not its reads; the
    /// stream states still hide what the failed group wrote), and sled could
    /// not reopen it anyway (opening writes a snapshot). Once there is room
    /// (or the file system cannot say), the database is reopened, so that
    /// it shows what really reached the disk, and a probe write and flush
    /// decide whether appends are taken again. A database that could not be
    /// reopened is tried again at every recovery, room or not: readers have
    /// none meanwhile.
    fn recover(&mut self) {
        #[cfg(test)]
        self.shared.hooks.checkpoint(super::tests::Point::Recovering);
        self.last_recovery = Instant::now();
        #[cfg(test)]
        self.shared.hooks.recoveries.fetch_add(1, Ordering::SeqCst);
        let full = self.shared.disk_full(0);
        if let Some(full) = &full {
            self.say_disk_full(full);
            if self.handles.is_some() {
                *self.shared.failure() = Some(format!("recovering from a failed write once the disk has room: {full}"));
                return;
            }
        }
        if let Err(error) = self.reopen() {
            tracing::warn!(%error, retry_in = ?RECOVERY_INTERVAL, "the event store could not reopen its database: reads and appends are refused");
            *self.shared.failure() = Some(format!("recovering from a failed write; the database could not be reopened: {error}"));
            return;
        }
        if let Some(full) = full {
            *self.shared.failure() = Some(format!("recovering from a failed write once the disk has room: {full}"));
            return;
        }
        let probed = self.handles().and_then(probe);
        #[cfg(test)]
        self.shared.hooks.probes.fetch_add(1, Ordering::SeqCst);
        match probed {
            Ok(()) => {
                *self.shared.failure() = None;
                tracing::info!(dir = %self.shared.dir.display(), "the event store recovered: appends are taken again");
            }
            Err(error) => {
                tracing::warn!(%error, retry_in = ?RECOVERY_INTERVAL, "the event store is still failing");
                *self.shared.failure() = Some(format!("recovering from a failed write; last attempt: {error}"));
            }
        }
    }

    /// Logs, once per episode, that the disk has no room for writes.
    fn say_disk_full(&mut self, full: &str) {
        if !self.disk_full {
            tracing::warn!(%full, dir = %self.shared.dir.display(), "the disk is full: the event store refuses appends (nothing written) and serves reads until it has room");
        }
        self.disk_full = true;
    }

    /// Reopens the database, forgetting every stream state (they are re-read
    /// from what sled recovered), and hands it to readers.
    ///
    /// Readers wait for it instead of being refused: the lock they read
    /// under is held for writing throughout (sled lets go of its files only
    /// once every handle is dropped, so the old database cannot be read
    /// meanwhile). Reads on an async worker do not wait here: they move to
    /// the blocking pool (see `SledStore::read`). If the database cannot be
    /// reopened, readers are refused until a later recovery reopens it.
    fn reopen(&mut self) -> Result<(), StoreError> {
        let mut readable = self.shared.handles.write().unwrap_or_else(PoisonError::into_inner);
        drop(readable.take());
        drop(self.handles.take());
        self.syncer = None;
        #[cfg(test)]
        self.shared.hooks.checkpoint(super::tests::Point::Reopening);
        let (handles, syncer) = open_handles(&self.shared.dir, self.shared.options)?;
        // Under the lock: no reader sees the new tree with the old states.
        self.shared.streams().clear();
        *readable = Some(Arc::clone(&handles));
        (self.handles, self.syncer) = (Some(handles), syncer);
        tracing::info!(dir = %self.shared.dir.display(), "the event store reopened its database after a failed write: reads are served from it");
        Ok(())
    }

    /// The open database, unless a recovery left it closed.
    fn handles(&self) -> Result<&Handles, StoreError> {
        self.handles.as_deref().ok_or_else(|| StoreError::Unavailable("the database is being reopened".into()))
    }

    /// Decides, writes, flushes and answers one group of `bytes` payload.
    fn commit(&mut self, group: Vec<Job>, bytes: usize) {
        self.shared.counters.groups.fetch_add(1, Ordering::Relaxed);
        // A group that would leave the disk with less than `KEEP_FREE` is
        // refused before anything is written: sled's latched error after a
        // write that hit a full disk would stop more than writes, and the
        // room kept lets sled reopen the database (after a restart too).
        // One statvfs per group: about a microsecond, beside a flush.
        let refusal = self.shared.refusal().or_else(|| {
            let full = self.shared.disk_full(u64::try_from(bytes).unwrap_or(u64::MAX));
            match &full {
                Some(full) => self.say_disk_full(full),
                None if self.disk_full => {
                    self.disk_full = false;
                    tracing::info!(dir = %self.shared.dir.display(), "the disk has room again: the event store takes appends");
                }
                None => {}
            }
            full.map(|full| StoreError::Unavailable(format!("{full}; nothing was written")))
        });
        if let Some(refusal) = refusal {
            for job in group {
                let _ = job.reply.send(Err(refusal.clone()));
            }
            return;
        }

        // Decide, in queue order: a later request on the same stream is
        // checked against the earlier ones' records.
        let mut writes = Vec::new();
        let mut touched = Vec::new();
        // Accepted requests, those of them that add records, and their records.
        let (mut accepted, mut appends, mut records) = (0_u64, 0_u64, 0_u64);
        let mut answers = Vec::with_capacity(group.len());
        for job in group {
            let decision = self.decide(job.request, &mut writes);
            if let Ok(notice) = &decision {
                touched.push(notice.stream);
                accepted += 1;
                appends += u64::from(notice.next_seq > notice.first_seq);
                records += notice.next_seq - notice.first_seq;
            }
            answers.push((job.reply, decision));
        }
        if accepted == 0 {
            // Nothing written: every answer is already based on durable state.
            self.answer(answers);
            return;
        }

        let mut committed = self.write(writes);
        #[cfg(test)]
        self.shared.hooks.checkpoint(super::tests::Point::BeforeFlush);
        if committed.is_ok() {
            committed = self.flush();
        }
        #[cfg(test)]
        if committed.is_ok() {
            committed = self.shared.hooks.injected_flush_failure();
        }
        if let Err(error) = committed {
            // The group's outcome is unknown: whatever reached the disk shows
            // once the database is reopened. Later appends are refused
            // (nothing written) until then.
            tracing::error!(%error, "a group commit failed: appends are refused until the event store recovers");
            let outcome = StoreError::Backend(format!("group commit failed; this append may or may not be stored: {error}"));
            *self.shared.failure() = Some(format!("a group commit failed: {error}"));
            self.last_recovery = Instant::now();
            for (reply, _) in answers {
                let _ = reply.send(Err(outcome.clone()));
            }
            return;
        }

        // Durable: publish to readers before anyone hears of it.
        {
            let mut streams = self.shared.streams();
            for stream in touched {
                if let Some(state) = streams.get_mut(&stream) {
                    state.durable = state.next;
                }
            }
            if streams.len() > MAX_CACHED_STREAMS {
                // Everything is durable now: forget it all, it is re-read
                // from the tree on next use.
                streams.retain(|_, state| state.next != state.durable);
            }
        }
        let counters = &self.shared.counters;
        counters.flushes.fetch_add(1, Ordering::Relaxed);
        counters.appends.fetch_add(appends, Ordering::Relaxed);
        counters.records.fetch_add(records, Ordering::Relaxed);
        self.answer(answers);
    }

    /// Checks one request against the stream's next seq; if accepted, adds
    /// its writes to the group and advances the stream's (pending) next seq.
    fn decide(&mut self, request: AppendRequest, writes: &mut Vec<Accepted>) -> Result<Appended, StoreError> {
        // `append` validated already; a second check costs nothing.
        request.validate()?;
        let next_after = request.next_after()?;
        let stream = request.stream;
        let next = self.pending_next(stream)?;
        if next != request.expected_next {
            return Err(StoreError::Conflict { stream, expected_next: request.expected_next, actual_next: next });
        }
        writes.push(Accepted { stream, first_seq: next, records: request.records, sealed: request.sealed, summary: request.summary });
        if let Some(state) = self.shared.streams().get_mut(&stream) {
            state.next = next_after;
        }
        Ok(Appended { stream, first_seq: next, next_seq: next_after })
    }

    /// The stream's next seq including pending writes, read from the tree's
    /// last key on first use and cached.
    fn pending_next(&self, stream: StreamId) -> Result<u64, StoreError> {
        if let Some(state) = self.shared.streams().get(&stream) {
            return Ok(state.next);
        }
        // Not cached: nothing of this stream is pending, the tree is durable.
        // Read without holding the map's lock (readers use it).
        let next = stored_next(&self.handles()?.records, stream)?;
        match self.shared.streams().entry(stream) {
            // Only this thread inserts entries.
            Entry::Occupied(entry) => Ok(entry.get().next),
            Entry::Vacant(entry) => {
                entry.insert(StreamState { next, durable: next });
                Ok(next)
            }
        }
    }

    /// Writes a group's accepted appends, each atomically.
    ///
    /// An append of one record, alone on its stream in the group, is a plain
    /// insert: a single key is atomic by itself. Everything else goes into
    /// one batch (several records of a stream must appear together), or,
    /// when streams are created with side data, one transaction over both
    /// trees (record 0 and its sealed data exist together or not at all).
    /// Plain inserts matter: sled's batches and transactions roll its I/O
    /// buffer twice, which made a one-record append plus flush about twice
    /// as slow in the `append` benchmark. Nothing is acknowledged before the
    /// flush, so the group itself need not be atomic, only each append; and
    /// since all appends of a stream within the group share one atomic write,
    /// a stream can never show a gap.
    fn write(&self, writes: Vec<Accepted>) -> Result<(), StoreError> {
        let Handles { records, sealed: sealed_tree, summaries, .. } = self.handles()?;
        // Summaries go in after every record of the group, each stamped with
        // the record count it describes (see the module docs of `sled_store`).
        let mut described: HashMap<StreamId, Vec<u8>> = HashMap::new();
        for write in &writes {
            let next = write.first_seq + write.records.len() as u64;
            match &write.summary {
                Some(summary) => {
                    let mut value = next.to_be_bytes().to_vec();
                    value.extend_from_slice(summary);
                    described.insert(write.stream, value);
                }
                // A later append without a summary leaves the earlier one stale.
                None => {
                    described.remove(&write.stream);
                }
            }
        }
        self.write_records(records, sealed_tree, writes)?;
        for (stream, value) in described {
            summaries.insert(stream.0, value).map_err(|e| backend("writing a summary", e))?;
        }
        Ok(())
    }

    fn write_records(&self, records: &sled::Tree, sealed_tree: &sled::Tree, writes: Vec<Accepted>) -> Result<(), StoreError> {
        let mut per_stream: HashMap<StreamId, usize> = HashMap::new();
        for write in &writes {
            *per_stream.entry(write.stream).or_default() += 1;
        }
        let mut batch = sled::Batch::default();
        let mut batched = false;
        let mut sealed = Vec::new();
        for write in writes {
            let alone = per_stream.get(&write.stream) == Some(&1);
            if alone && write.sealed.is_none() && write.records.len() == 1 {
                let key = RecordKey::new(write.stream, write.first_seq).to_bytes();
                if let Some(record) = write.records.into_iter().next() {
                    records.insert(key, record).map_err(|e| backend("writing a record", e))?;
                }
                continue;
            }
            for (seq, record) in (write.first_seq..).zip(write.records) {
                batch.insert(&RecordKey::new(write.stream, seq).to_bytes()[..], record);
                batched = true;
            }
            if let Some(bytes) = write.sealed {
                sealed.push((write.stream, bytes));
            }
        }
        if sealed.is_empty() {
            if !batched {
                return Ok(());
            }
            return records.apply_batch(batch).map_err(|e| backend("writing records", e));
        }
        (records, sealed_tree)
            .transaction(|(records, sealed_tree)| {
                records.apply_batch(&batch)?;
                for (stream, bytes) in &sealed {
                    sealed_tree.insert(&stream.0[..], bytes.as_slice())?;
                }
                Ok::<(), ConflictableTransactionError<()>>(())
            })
            .map_err(|e| match e {
                TransactionError::Storage(e) => backend("writing records and sealed data", e),
                TransactionError::Abort(()) => StoreError::Backend("writing records and sealed data: aborted".into()),
            })
    }

    /// One flush of everything written so far (plus an fsync in `Fsync` mode).
    fn flush(&mut self) -> Result<(), StoreError> {
        self.handles()?.db.flush().map_err(|e| backend("flushing sled", e))?;
        if let Some(syncer) = &mut self.syncer {
            syncer.sync().map_err(|e| backend("fsync", e))?;
        }
        Ok(())
    }

    /// Broadcasts the notices of accepted appends (in queue order), then
    /// answers every request.
    fn answer(&self, answers: Vec<(Reply, Result<Appended, StoreError>)>) {
        for (_, decision) in &answers {
            // A summary-only append added no record: nothing to announce.
            if let Ok(notice) = decision
                && notice.next_seq > notice.first_seq
            {
                // No subscriber is not an error.
                let _ = self.notices.send(notice.clone());
            }
        }
        for (reply, decision) in answers {
            // The caller may have stopped waiting: not an error either.
            let _ = reply.send(decision);
        }
    }
}

/// Writes and flushes a marker: whether the reopened database takes writes.
fn probe(handles: &Handles) -> Result<(), StoreError> {
    let health = handles.db.open_tree("health").map_err(|e| backend("opening the health tree", e))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    health.insert("probe", &now.to_be_bytes()[..]).map_err(|e| backend("writing the probe", e))?;
    handles.db.flush().map_err(|e| backend("flushing the probe", e))?;
    Ok(())
}
