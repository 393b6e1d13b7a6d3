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
//!   cost of a flush is spread over every append of the group;
//! - positions in the global feed are assigned here, in queue order, so
//!   they follow commit order with no lock (see [`feed`](super::feed) for
//!   how a group is committed).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, mpsc};
use std::time::Instant;

use tokio::sync::{broadcast, oneshot};

use super::feed::{self, Committed};
use super::fsync::FileSyncer;
use super::projection::{self, Change};
use super::{Handles, MAX_CACHED_STREAMS, RECOVERY_INTERVAL, Shared, StreamState, backend, open_handles, stored_next};
use crate::contract::{AppendRequest, Appended, StoreError};
use crate::key::{FeedKey, StreamId};
use crate::projection::ProjectionCommit;

/// At most this many appends per group …
const MAX_GROUP_APPENDS: usize = 1024;
/// … and about this many payload bytes (a larger single append still forms a
/// group of its own).
const MAX_GROUP_BYTES: usize = 8 << 20;

/// How far the derived mark may lag the derived records (see `feed`).
const MARK_EVERY: u64 = 4096;

/// Where an append's answer goes.
type Reply = oneshot::Sender<Result<Appended, StoreError>>;

/// Where a projection change's answer goes.
pub(super) type Done = oneshot::Sender<Result<(), StoreError>>;

/// An accepted append, waiting to be written.
struct Accepted {
    stream: StreamId,
    first_seq: u64,
    records: Vec<Vec<u8>>,
    sealed: Option<Vec<u8>>,
    summary: Option<Vec<u8>>,
}

/// One queued write and where to send its answer.
#[derive(Debug)]
pub(super) enum Job {
    /// An append.
    Append { request: AppendRequest, reply: Reply },
    /// A projection's commit.
    Project { commit: ProjectionCommit, done: Done },
    /// A projection's reset.
    Reset { name: String, done: Done },
}

impl Job {
    /// Bytes carried, to bound a group.
    fn payload_len(&self) -> usize {
        match self {
            Job::Append { request, .. } => request.payload_len(),
            Job::Project { commit, .. } => commit.puts.iter().map(|(key, value)| key.len() + value.as_ref().map_or(0, Vec::len)).sum(),
            Job::Reset { .. } => 0,
        }
    }
}

/// A decision, waiting for the group's flush to be sent.
enum Answer {
    Append(Reply, Result<Appended, StoreError>),
    Projection(Done, Result<(), StoreError>),
}

/// The writer's feed positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Positions {
    /// The position the next record gets.
    next: u64,
    /// Up to here, groups are derived (records by stream) and a flush has
    /// completed since: what the derived mark may say.
    derived_durable: u64,
    /// Up to here, groups are derived (not necessarily flushed).
    derived: u64,
    /// What the stored derived mark says.
    marked: u64,
    /// What the current group wrote to the derived mark (durable, and so
    /// `marked`, once its flush completes).
    marking: u64,
}

impl Positions {
    /// Positions of a feed whose head is `head`, all derived and marked.
    fn at(head: u64) -> Self {
        Positions { next: head + 1, derived_durable: head, derived: head, marked: head, marking: head }
    }
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
    positions: Positions,
}

impl Writer {
    /// A writer of the database in `handles`, whose feed ends at `head`
    /// (repaired: every group derived).
    pub(super) fn new(
        handles: Arc<Handles>,
        shared: Arc<Shared>,
        queue: mpsc::Receiver<Job>,
        notices: broadcast::Sender<Appended>,
        syncer: Option<FileSyncer>,
        head: u64,
    ) -> Self {
        Writer {
            handles: Some(handles),
            shared,
            queue,
            notices,
            syncer,
            last_recovery: Instant::now(),
            disk_full: false,
            positions: Positions::at(head),
        }
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
            let mut bytes = first.payload_len();
            let mut group = vec![first];
            while group.len() < MAX_GROUP_APPENDS && bytes < MAX_GROUP_BYTES {
                match self.queue.try_recv() {
                    Ok(job) => {
                        bytes += job.payload_len();
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
        // What the failed group wrote to the feed, if it reached the disk,
        // is committed: derive it before readers look (see `feed`).
        let head = feed::repair(&handles)?;
        self.positions = Positions::at(head);
        // Under the lock: no reader sees the new tree with the old states.
        self.shared.streams().clear();
        self.shared.feed_head.store(head, Ordering::Release);
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
                match job {
                    Job::Append { reply, .. } => drop(reply.send(Err(refusal.clone()))),
                    Job::Project { done, .. } | Job::Reset { done, .. } => drop(done.send(Err(refusal.clone()))),
                }
            }
            return;
        }

        // Decide, in queue order: a later request on the same stream (or
        // projection) is checked against the earlier ones' changes.
        let mut writes = Vec::new();
        let mut changes = Vec::new();
        let mut touched = Vec::new();
        let mut pending = projection::Pending::default();
        let first_position = self.positions.next;
        // Accepted requests, those of them that add records, and their records.
        let (mut accepted, mut appends, mut records) = (0_u64, 0_u64, 0_u64);
        let mut answers = Vec::with_capacity(group.len());
        for job in group {
            match job {
                Job::Append { request, reply } => {
                    let decision = self.decide(request, &mut writes);
                    if let Ok(notice) = &decision {
                        touched.push(notice.stream);
                        accepted += 1;
                        appends += u64::from(notice.next_seq > notice.first_seq);
                        records += notice.next_seq - notice.first_seq;
                    }
                    answers.push(Answer::Append(reply, decision));
                }
                Job::Project { commit, done } => {
                    let decision = self.handles().and_then(|handles| pending.commit(handles, commit)).map(|change| {
                        changes.push(change);
                        accepted += 1;
                    });
                    answers.push(Answer::Projection(done, decision));
                }
                Job::Reset { name, done } => {
                    let decision = self.handles().and_then(|handles| pending.reset(handles, name)).map(|change| {
                        changes.push(change);
                        accepted += 1;
                    });
                    answers.push(Answer::Projection(done, decision));
                }
            }
        }
        if accepted == 0 {
            // Nothing written: every answer is already based on durable state.
            self.answer(answers);
            return;
        }

        // Readers of projections wait from the write to the end of the flush.
        let shared = Arc::clone(&self.shared);
        let gate = (!changes.is_empty()).then(|| shared.projections_gate.write().unwrap_or_else(PoisonError::into_inner));
        let mut committed = self.write(first_position, &writes, &changes);
        #[cfg(test)]
        self.shared.hooks.checkpoint(super::tests::Point::BeforeFlush);
        if committed.is_ok() {
            committed = self.flush();
        }
        #[cfg(test)]
        if committed.is_ok() {
            committed = self.shared.hooks.injected_flush_failure();
        }
        // Durable: derive the group's records where readers find them by
        // stream (see `feed`), before anyone hears of them.
        if committed.is_ok() {
            self.positions.derived_durable = self.positions.derived;
            self.positions.marked = self.positions.marked.max(self.positions.marking);
            committed = self.derive(writes);
        }
        drop(gate);
        if let Err(error) = committed {
            // The group's outcome is unknown: whatever reached the disk shows
            // once the database is reopened. Later appends are refused
            // (nothing written) until then.
            tracing::error!(%error, "a group commit failed: appends are refused until the event store recovers");
            let outcome = StoreError::Backend(format!("group commit failed; this append may or may not be stored: {error}"));
            *self.shared.failure() = Some(format!("a group commit failed: {error}"));
            self.last_recovery = Instant::now();
            Self::fail(answers, &outcome);
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
        self.shared.feed_head.store(self.positions.next - 1, Ordering::Release);
        let counters = &self.shared.counters;
        counters.flushes.fetch_add(1, Ordering::Relaxed);
        counters.appends.fetch_add(appends, Ordering::Relaxed);
        counters.records.fetch_add(records, Ordering::Relaxed);
        self.answer(answers);
    }

    /// Checks one request against the stream's next seq; if accepted, adds
    /// its writes to the group, advances the stream's (pending) next seq and
    /// gives its records the next positions.
    fn decide(&mut self, request: AppendRequest, writes: &mut Vec<Accepted>) -> Result<Appended, StoreError> {
        // `append` validated already; a second check costs nothing.
        request.validate()?;
        let next_after = request.next_after()?;
        let stream = request.stream;
        let next = self.pending_next(stream)?;
        if next != request.expected_next {
            return Err(StoreError::Conflict { stream, expected_next: request.expected_next, actual_next: next });
        }
        let count = next_after - next;
        let first_position = if count == 0 { 0 } else { self.positions.next };
        self.positions.next += count;
        writes.push(Accepted { stream, first_seq: next, records: request.records, sealed: request.sealed, summary: request.summary });
        if let Some(state) = self.shared.streams().get_mut(&stream) {
            state.next = next_after;
        }
        Ok(Appended { stream, first_seq: next, next_seq: next_after, first_position })
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

    /// Writes a group before its flush: its records as one feed key (the
    /// commit itself, see `feed`), the summaries, the derived mark, and
    /// the projection changes (one transaction).
    ///
    /// One key, not a batch or a transaction over the record trees: sled's
    /// batches and transactions roll its I/O buffer twice, which made a
    /// one-record append plus flush about twice as slow in the `append`
    /// benchmark.
    fn write(&mut self, first_position: u64, writes: &[Accepted], changes: &[Change]) -> Result<(), StoreError> {
        let handles = self.handles()?;
        let grouped = writes.iter().filter(|write| !write.records.is_empty());
        if grouped.clone().next().is_some() {
            let value = feed::encode_inline(grouped.map(|w| (w.stream, w.first_seq, w.records.as_slice(), w.sealed.as_deref())));
            handles.feed.insert(FeedKey(first_position).to_bytes(), value).map_err(|e| backend("writing the feed", e))?;
        }
        // Summaries go in with the group, each stamped with the record count
        // it describes (see the module docs of `sled_store`): shown only
        // once the records are durable and derived.
        let mut described: HashMap<StreamId, Vec<u8>> = HashMap::new();
        for write in writes {
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
        for (stream, value) in described {
            handles.summaries.insert(stream.0, value).map_err(|e| backend("writing a summary", e))?;
        }
        // The mark moves every `MARK_EVERY` positions, not every group: one
        // write fewer per group, and an open derives at most that many
        // records again.
        let mark = self.positions.derived_durable;
        if mark >= self.positions.marked + MARK_EVERY {
            feed::set_derived_mark(handles, mark)?;
        }
        if !changes.is_empty() {
            projection::write(handles, changes)?;
        }
        self.positions.marking = if mark >= self.positions.marked + MARK_EVERY { mark } else { self.positions.marked };
        Ok(())
    }

    /// After the group's flush: its records and sealed data where readers
    /// look for them by stream.
    fn derive(&mut self, writes: Vec<Accepted>) -> Result<(), StoreError> {
        let committed: Vec<Committed> = writes
            .into_iter()
            .filter(|write| !write.records.is_empty())
            .map(|write| Committed { stream: write.stream, first_seq: write.first_seq, records: write.records, sealed: write.sealed })
            .collect();
        feed::derive(self.handles()?, &committed, false)?;
        self.positions.derived = self.positions.next - 1;
        Ok(())
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
    fn answer(&self, answers: Vec<Answer>) {
        for answer in &answers {
            // A summary-only append added no record: nothing to announce.
            if let Answer::Append(_, Ok(notice)) = answer
                && notice.next_seq > notice.first_seq
            {
                // No subscriber is not an error.
                let _ = self.notices.send(notice.clone());
            }
        }
        // The caller may have stopped waiting: not an error either.
        for answer in answers {
            match answer {
                Answer::Append(reply, decision) => drop(reply.send(decision)),
                Answer::Projection(reply, decision) => drop(reply.send(decision)),
            }
        }
    }

    /// Answers every decision of a group with the same failure.
    fn fail(answers: Vec<Answer>, failure: &StoreError) {
        for answer in answers {
            match answer {
                Answer::Append(reply, _) => drop(reply.send(Err(failure.clone()))),
                Answer::Projection(reply, _) => drop(reply.send(Err(failure.clone()))),
            }
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
