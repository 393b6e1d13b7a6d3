//! The event-store contract shared by every backend.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use tokio::sync::{broadcast, oneshot};

use crate::key::StreamId;
use crate::projection::{ProjectionCommit, ProjectionLease, ProjectionRow};

/// Capacity of the notice channel behind [`EventStore::subscribe`]. A
/// subscriber that falls further behind gets
/// [`broadcast::error::RecvError::Lagged`] and should re-read the streams it
/// follows from the store.
pub const NOTICE_BUFFER: usize = 4096;

/// One stored record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRecord {
    /// Position in the stream, from 0.
    pub seq: u64,
    /// The record as appended (the store never interprets it).
    pub bytes: Vec<u8>,
}

/// An atomic append of one or more records to one stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendRequest {
    /// The stream appended to.
    pub stream: StreamId,
    /// The seq the first new record must get (= number of records already in
    /// the stream). 0 creates the stream.
    pub expected_next: u64,
    /// Records to append atomically, seqs `expected_next`, `expected_next + 1`,
    /// … (non-empty).
    pub records: Vec<Vec<u8>>,
    /// Side data kept beside the stream but outside the log (the game's
    /// secret seed and token hashes); only allowed when creating the stream
    /// (`expected_next == 0`); written atomically with record 0.
    pub sealed: Option<Vec<u8>>,
    /// A short description of the stream as it stands after this append
    /// (the game's kind, seats, status …), replacing the previous one; what
    /// [`EventStore::list_summaries`] returns, so a listing reads no log. A
    /// request may carry a summary and no records: it then only describes the
    /// stream at `expected_next` (its current length), and is refused with a
    /// conflict if the stream has grown meanwhile.
    pub summary: Option<Vec<u8>>,
}

impl AppendRequest {
    /// A request creating `stream` with its first records and optional side
    /// data.
    #[must_use]
    pub fn create(stream: StreamId, records: Vec<Vec<u8>>, sealed: Option<Vec<u8>>) -> Self {
        AppendRequest { stream, expected_next: 0, records, sealed, summary: None }
    }

    /// A request appending `records` to `stream` at `expected_next`.
    #[must_use]
    pub fn at(stream: StreamId, expected_next: u64, records: Vec<Vec<u8>>) -> Self {
        AppendRequest { stream, expected_next, records, sealed: None, summary: None }
    }

    /// A request describing `stream`, `next` records long, with `summary`
    /// and appending nothing.
    #[must_use]
    pub fn describe(stream: StreamId, next: u64, summary: Vec<u8>) -> Self {
        AppendRequest { stream, expected_next: next, records: Vec::new(), sealed: None, summary: Some(summary) }
    }

    /// This request, also replacing the stream's summary.
    #[must_use]
    pub fn with_summary(mut self, summary: Vec<u8>) -> Self {
        self.summary = Some(summary);
        self
    }

    /// Checks what can be checked without the stream's state.
    ///
    /// # Errors
    /// [`StoreError::Invalid`] for an empty batch (unless it only carries
    /// a summary of an existing stream), sealed data on a non-creating
    /// append, or seqs that would overflow `u64`.
    pub fn validate(&self) -> Result<(), StoreError> {
        if self.records.is_empty() && (self.summary.is_none() || self.sealed.is_some() || self.expected_next == 0) {
            return Err(StoreError::Invalid("an append needs at least one record, or a summary of an existing stream".into()));
        }
        if self.sealed.is_some() && self.expected_next != 0 {
            return Err(StoreError::Invalid(format!(
                "sealed data can only be written when creating a stream \
                 (expected_next = 0), not at expected_next = {}",
                self.expected_next
            )));
        }
        self.next_after().map(|_| ())
    }

    /// The stream's next seq once this request is applied.
    pub(crate) fn next_after(&self) -> Result<u64, StoreError> {
        u64::try_from(self.records.len()).ok().and_then(|count| self.expected_next.checked_add(count)).ok_or_else(|| {
            StoreError::Invalid(format!("{} records at expected_next = {} overflow the seq range", self.records.len(), self.expected_next))
        })
    }

    /// Bytes carried (records and side data), to bound a commit group.
    pub(crate) fn payload_len(&self) -> usize {
        self.records.iter().map(Vec::len).sum::<usize>()
            + self.sealed.as_ref().map_or(0, Vec::len)
            + self.summary.as_ref().map_or(0, Vec::len)
    }
}

/// Notice broadcast after records are durable: `stream` now holds
/// `first_seq..next_seq` more, at feed positions `first_position..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The stream appended to.
    pub stream: StreamId,
    /// Seq of the first appended record.
    pub first_seq: u64,
    /// The stream's next seq after the append (= its record count).
    pub next_seq: u64,
    /// Feed position of the first appended record; the others follow it
    /// (`first_position + (seq - first_seq)`), since an append's records
    /// take consecutive positions. 0 for an append of no record (a summary
    /// alone), which takes none.
    pub first_position: u64,
}

/// Most entries one [`EventStore::read_feed`] returns, whatever the limit
/// asked.
pub const MAX_FEED_PAGE: usize = 10_000;

/// One record of the global feed (the `$all` stream): every record of every
/// stream, at its position.
///
/// Positions start at 1 and are dense: the feed holds `1..=head` (see
/// [`EventStore::feed_head`]). A record's position is assigned in the same
/// atomic write as the record (a crash leaves neither without the other)
/// and in commit order, so a reader that has seen position `p` never later
/// finds a record at a position `<= p` appear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedEntry {
    /// Position in the feed, from 1.
    pub position: u64,
    /// The record's stream.
    pub stream: StreamId,
    /// The record's seq in its stream.
    pub seq: u64,
    /// The record as appended.
    pub bytes: Vec<u8>,
}

/// A stream in a listing, with its summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamSummary {
    /// The stream.
    pub stream: StreamId,
    /// Its record count.
    pub next_seq: u64,
    /// The summary given with the append that brought the stream to
    /// `next_seq` (or by a summary-only append at `next_seq`); `None` when
    /// that append carried none, or a crash kept the records but lost it.
    pub summary: Option<Vec<u8>>,
}

/// Why the store refused or failed an operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Optimistic concurrency: the stream is not at `expected_next`. Nothing
    /// was written. `actual_next` is durable when this is reported.
    #[error("stream {stream}: append expected next seq {expected_next}, but the stream is at {actual_next}")]
    Conflict {
        /// The stream appended to.
        stream: StreamId,
        /// What the request expected.
        expected_next: u64,
        /// The stream's actual next seq.
        actual_next: u64,
    },
    /// The request itself is malformed (empty batch, sealed data on a
    /// non-creating append, a bad projection name or an oversized row …).
    /// Nothing was written.
    #[error("invalid request: {0}")]
    Invalid(String),
    /// A projection commit's compare-and-set failed: the stored checkpoint
    /// is not the one the committer read (another runner advanced or reset
    /// the projection meanwhile). Nothing was written; reload and go on
    /// from `actual`.
    #[error("projection {name}: the commit expected checkpoint {expected:?}, but {actual:?} is stored")]
    ProjectionConflict {
        /// The projection.
        name: String,
        /// The checkpoint the commit expected (`None`: never committed).
        expected: Option<u64>,
        /// The stored checkpoint.
        actual: Option<u64>,
    },
    /// The storage backend failed (sled or I/O error, corrupt data). For an
    /// append the outcome is unknown: the records were not acknowledged but
    /// may be found in the stream later (once the store has recovered, or
    /// after a restart).
    #[error("storage backend failure: {0}")]
    Backend(String),
    /// The store is failing and recovering (a full or failing disk): the
    /// operation was refused before anything was written. Retry later.
    #[error("the event store is unavailable: {0}")]
    Unavailable(String),
    /// The store was closed.
    #[error("the event store is closed")]
    Closed,
}

/// Counters making group commit observable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Appends acknowledged.
    pub appends: u64,
    /// Records acknowledged.
    pub records: u64,
    /// Flushes done (sled: one per commit group that wrote something).
    pub flushes: u64,
    /// Commit groups processed (sled: one per wake-up of the writer;
    /// PostgreSQL: one per transaction that carried appends, shared by a
    /// batch of them or one's alone).
    pub groups: u64,
}

/// A pending append: resolves once the records are durable (or refused).
///
/// Await it from async code, or call [`PendingAppend::wait`] from a plain
/// thread. Dropping it does not cancel the append.
#[must_use = "an append is only known to be durable once its PendingAppend resolves"]
#[derive(Debug)]
pub struct PendingAppend(Pending);

#[derive(Debug)]
enum Pending {
    Ready(Option<Result<Appended, StoreError>>),
    Waiting(oneshot::Receiver<Result<Appended, StoreError>>),
}

impl PendingAppend {
    /// An append already decided (refused requests, synchronous backends).
    pub fn ready(result: Result<Appended, StoreError>) -> Self {
        PendingAppend(Pending::Ready(Some(result)))
    }

    /// An append answered later through `receiver`. If its sender is dropped
    /// unanswered, the append resolves to [`StoreError::Backend`].
    pub fn from_receiver(receiver: oneshot::Receiver<Result<Appended, StoreError>>) -> Self {
        PendingAppend(Pending::Waiting(receiver))
    }

    /// Blocks the calling thread until the append is durable or refused.
    /// For synchronous callers only: inside an async task, `.await` instead
    /// (this would block a runtime worker).
    ///
    /// # Errors
    /// Whatever the store answered: [`StoreError::Conflict`],
    /// [`StoreError::Invalid`], [`StoreError::Backend`], [`StoreError::Closed`].
    pub fn wait(self) -> Result<Appended, StoreError> {
        block_on(self)
    }
}

/// Runs `future` to completion on the calling thread (the `*_blocking`
/// calls of the contract, for callers outside an async runtime).
///
/// A minimal `block_on`: the waker unparks this thread; spurious wake-ups
/// just poll again. (tokio's `blocking_recv` or `Handle::block_on` would
/// panic when called from a runtime thread; this never panics.) The
/// futures of the stores do their work elsewhere (a writer thread, a
/// blocking pool, the PostgreSQL runtime) or are ready at once, so nothing
/// needs this thread to drive them.
pub(crate) fn block_on<T>(future: impl Future<Output = T>) -> T {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(result) = future.as_mut().poll(&mut cx) {
            return result;
        }
        std::thread::park();
    }
}

impl Future for PendingAppend {
    type Output = Result<Appended, StoreError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.0 {
            Pending::Ready(result) => {
                Poll::Ready(result.take().unwrap_or_else(|| Err(StoreError::Backend("append polled after completion".into()))))
            }
            Pending::Waiting(receiver) => Pin::new(receiver).poll(cx).map(|answer| {
                answer.unwrap_or_else(|_| Err(StoreError::Backend("the store stopped without answering this append".into())))
            }),
        }
    }
}

/// What an async read of the store resolves to (boxed: the contract is
/// object safe).
pub type StoreFuture<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'static>>;

/// The event-store contract. Object safe: the service holds an
/// `Arc<dyn EventStore>`.
///
/// Readers only see acknowledged (durable) records: a record becomes visible
/// to [`read`](EventStore::read), [`next_seq`](EventStore::next_seq),
/// [`list_streams`](EventStore::list_streams),
/// [`sealed`](EventStore::sealed) and [`read_feed`](EventStore::read_feed)
/// no later than its append resolves and its notice is sent, and never
/// before it is durable.
///
/// Besides the streams, a store keeps the global feed (every record at a
/// position, see [`FeedEntry`]) and the state of projections built from it
/// (see [`ProjectionCommit`]).
pub trait EventStore: Send + Sync + 'static {
    /// Queues an append; never blocks on I/O. Resolves only after its records
    /// are durable (or with the reason they were refused).
    fn append(&self, request: AppendRequest) -> PendingAppend;

    /// Records `from..to` (`to = None`: to the end) in seq order. A range
    /// past the end, an empty or reversed range, or an unknown stream reads
    /// nothing. The async read: a backend whose I/O blocks (sled) does it
    /// off the caller's async worker itself, so callers simply await.
    ///
    /// # Errors
    /// [`StoreError::Backend`] (including corrupt data), [`StoreError::Closed`].
    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> StoreFuture<Vec<StoredRecord>>;

    /// [`read`](EventStore::read) for callers outside an async runtime
    /// (offline tools, tests): may block on I/O.
    ///
    /// # Errors
    /// As [`read`](EventStore::read).
    fn read_blocking(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError>;

    /// Number of records in the stream (0 = no such stream).
    ///
    /// # Errors
    /// [`StoreError::Backend`], [`StoreError::Closed`].
    fn next_seq(&self, stream: StreamId) -> Result<u64, StoreError>;

    /// Whether other processes may append to this store too (a database
    /// shared by several servers): their appends are then only known by
    /// reading the store, and their notices come from it.
    fn shared(&self) -> bool {
        false
    }

    /// How often a reader following a stream should read it again although
    /// no notice rang: `None` when this store's notices are complete (every
    /// append, whoever made it, is announced to every subscriber). A store
    /// shared with other servers hears their appends through the database,
    /// which may drop a notice (a lost connection) or not carry them at all
    /// (a database without notifications): readers then poll.
    fn poll_every(&self) -> Option<std::time::Duration> {
        None
    }

    /// Stream ids in byte order, strictly after `after`, at most `limit`.
    ///
    /// # Errors
    /// [`StoreError::Backend`], [`StoreError::Closed`].
    fn list_streams(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError>;

    /// Like [`list_streams`](EventStore::list_streams), with each stream's
    /// record count and current summary (see [`StreamSummary`]); async, as
    /// [`read`](EventStore::read).
    ///
    /// # Errors
    /// [`StoreError::Backend`], [`StoreError::Closed`].
    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> StoreFuture<Vec<StreamSummary>>;

    /// One stream's record count and summary (`None`: no such stream): the
    /// listing that starts just before it. Backends may answer it more
    /// directly.
    ///
    /// # Errors
    /// As [`list_summaries`](EventStore::list_summaries).
    fn summary(&self, stream: StreamId) -> StoreFuture<Option<StreamSummary>> {
        // The id just before `stream` in byte order (none before all zeros).
        let before = u128::from_be_bytes(stream.0).checked_sub(1).map(|id| StreamId(id.to_be_bytes()));
        let listing = self.list_summaries(before, 1);
        Box::pin(async move { Ok(listing.await?.into_iter().next().filter(|listed| listed.stream == stream)) })
    }

    /// [`list_summaries`](EventStore::list_summaries) for callers outside
    /// an async runtime.
    ///
    /// # Errors
    /// As [`list_summaries`](EventStore::list_summaries).
    fn list_summaries_blocking(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError>;

    /// The side data stored with the stream's creation (`None` if the stream
    /// does not exist or was created without any); async, as
    /// [`read`](EventStore::read).
    ///
    /// # Errors
    /// [`StoreError::Backend`], [`StoreError::Closed`].
    fn sealed(&self, stream: StreamId) -> StoreFuture<Option<Vec<u8>>>;

    /// [`sealed`](EventStore::sealed) for callers outside an async runtime.
    ///
    /// # Errors
    /// As [`sealed`](EventStore::sealed).
    fn sealed_blocking(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError>;

    /// The global feed: every record with a position `> after`, in position
    /// order, at most `limit` (and at most [`MAX_FEED_PAGE`]). Only durable
    /// records, as [`read`](EventStore::read); since positions are assigned
    /// in commit order, a page never skips a position that shows up later:
    /// reading on from the last position seen misses nothing and sees
    /// nothing twice. Async, as [`read`](EventStore::read).
    ///
    /// # Errors
    /// [`StoreError::Backend`] (including corrupt data), [`StoreError::Closed`].
    fn read_feed(&self, after: u64, limit: usize) -> StoreFuture<Vec<FeedEntry>>;

    /// [`read_feed`](EventStore::read_feed) for callers outside an async
    /// runtime.
    ///
    /// # Errors
    /// As [`read_feed`](EventStore::read_feed).
    fn read_feed_blocking(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError>;

    /// The highest durable feed position (0: no record yet): the feed holds
    /// exactly `1..=feed_head()`.
    ///
    /// # Errors
    /// [`StoreError::Backend`], [`StoreError::Closed`].
    fn feed_head(&self) -> Result<u64, StoreError>;

    /// The stored checkpoint of projection `name` (`None`: it never
    /// committed, or was reset).
    ///
    /// # Errors
    /// [`StoreError::Invalid`] for a bad name, [`StoreError::Backend`],
    /// [`StoreError::Closed`].
    fn projection_load(&self, name: &str) -> StoreFuture<Option<u64>>;

    /// [`projection_load`](EventStore::projection_load) for callers outside
    /// an async runtime (an offline tool).
    ///
    /// # Errors
    /// As [`projection_load`](EventStore::projection_load).
    fn projection_load_blocking(&self, name: &str) -> Result<Option<u64>, StoreError> {
        block_on(self.projection_load(name))
    }

    /// Applies one step of a projection atomically: if its stored
    /// checkpoint is `commit.expected`, writes and deletes `commit.puts` and
    /// stores `commit.checkpoint`; otherwise changes nothing. Resolves once
    /// the step is durable.
    ///
    /// # Errors
    /// [`StoreError::ProjectionConflict`] when the stored checkpoint is
    /// another; [`StoreError::Invalid`] for a commit out of bounds (see
    /// [`ProjectionCommit::validate`]); [`StoreError::Unavailable`],
    /// [`StoreError::Backend`] (the outcome is then unknown: load the
    /// checkpoint again), [`StoreError::Closed`].
    fn projection_commit(&self, commit: ProjectionCommit) -> StoreFuture<()>;

    /// [`projection_commit`](EventStore::projection_commit) for callers
    /// outside an async runtime.
    ///
    /// # Errors
    /// As [`projection_commit`](EventStore::projection_commit).
    fn projection_commit_blocking(&self, commit: ProjectionCommit) -> Result<(), StoreError> {
        block_on(self.projection_commit(commit))
    }

    /// One row of projection `name` (`None`: no such row).
    ///
    /// # Errors
    /// [`StoreError::Invalid`] for a bad name or key, [`StoreError::Backend`],
    /// [`StoreError::Closed`].
    fn projection_get(&self, name: &str, key: &[u8]) -> StoreFuture<Option<Vec<u8>>>;

    /// Rows of projection `name` with keys strictly after `after` (`None`:
    /// from the first), in key (byte) order, at most `limit` (and at most
    /// [`MAX_PROJECTION_SCAN`](crate::MAX_PROJECTION_SCAN)).
    ///
    /// # Errors
    /// As [`projection_get`](EventStore::projection_get).
    fn projection_scan(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> StoreFuture<Vec<ProjectionRow>>;

    /// [`projection_scan`](EventStore::projection_scan) for callers outside
    /// an async runtime.
    ///
    /// # Errors
    /// As [`projection_scan`](EventStore::projection_scan).
    fn projection_scan_blocking(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> Result<Vec<ProjectionRow>, StoreError> {
        block_on(self.projection_scan(name, after, limit))
    }

    /// Deletes every row and the checkpoint of projection `name`,
    /// atomically (to rebuild it from the start of the feed). Resolves once
    /// durable; resetting a projection that does not exist is no error.
    ///
    /// # Errors
    /// As [`projection_commit`](EventStore::projection_commit), without the
    /// conflict.
    fn projection_reset(&self, name: &str) -> StoreFuture<()>;

    /// [`projection_reset`](EventStore::projection_reset) for callers
    /// outside an async runtime.
    ///
    /// # Errors
    /// As [`projection_reset`](EventStore::projection_reset).
    fn projection_reset_blocking(&self, name: &str) -> Result<(), StoreError> {
        block_on(self.projection_reset(name))
    }

    /// Every projection with a stored checkpoint, by name.
    ///
    /// # Errors
    /// [`StoreError::Backend`], [`StoreError::Closed`].
    fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError>;

    /// The right to advance projection `name`, or `None` while someone else
    /// holds it (another task of this process; on PostgreSQL, another
    /// server too). Released when the [`ProjectionLease`] is dropped.
    ///
    /// # Errors
    /// [`StoreError::Invalid`] for a bad name, [`StoreError::Unavailable`]
    /// (the database cannot be reached), [`StoreError::Closed`].
    fn projection_lease(&self, name: &str) -> StoreFuture<Option<ProjectionLease>>;

    /// Receives a notice for every durable append of records, in append order
    /// (a summary-only append sends none). The
    /// channel ends (`RecvError::Closed`) when the store is closed; see
    /// [`NOTICE_BUFFER`] for slow receivers.
    fn subscribe(&self) -> broadcast::Receiver<Appended>;

    /// Makes everything durable and stops accepting appends (graceful
    /// shutdown). Later appends and reads get [`StoreError::Closed`]; closing
    /// again is a no-op.
    ///
    /// # Errors
    /// [`StoreError::Backend`] if the final flush failed (or an earlier group
    /// commit did).
    fn close(&self) -> Result<(), StoreError>;

    /// Whether the store can take appends now: `Err(Unavailable)` while it
    /// fails and recovers (readiness probes report it), `Err(Closed)` once
    /// closed.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] with the reason, [`StoreError::Closed`].
    fn health(&self) -> Result<(), StoreError>;

    /// Counters (appends, records, flushes, commit groups) since opening.
    fn stats(&self) -> StoreStats {
        StoreStats::default()
    }
}

/// A receiver that reports `Closed` at once: what `subscribe` hands out after
/// the store was closed.
pub(crate) fn closed_receiver() -> broadcast::Receiver<Appended> {
    broadcast::channel(1).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_types_can_be_shared_across_threads() {
        fn shared<T: Send + Sync + 'static>() {}
        fn sent<T: Send + Unpin + 'static>() {}
        shared::<crate::SledStore>();
        shared::<crate::MemoryStore>();
        shared::<std::sync::Arc<dyn EventStore>>();
        shared::<StoreError>();
        sent::<PendingAppend>();
    }

    #[tokio::test]
    async fn wait_does_not_panic_inside_a_runtime() {
        // tokio's own blocking_recv would panic here.
        let (reply, answer) = oneshot::channel();
        let notice = Appended { stream: StreamId([1; 16]), first_seq: 0, next_seq: 1, first_position: 1 };
        let sent = notice.clone();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            reply.send(Ok(sent))
        });
        assert_eq!(PendingAppend::from_receiver(answer).wait(), Ok(notice));
        assert!(sender.join().expect("sender").is_ok());
    }

    #[test]
    fn an_unanswered_append_is_a_backend_error() {
        let (reply, answer) = oneshot::channel::<Result<Appended, StoreError>>();
        drop(reply);
        let result = PendingAppend::from_receiver(answer).wait();
        assert!(matches!(result, Err(StoreError::Backend(_))), "{result:?}");
    }
}
