//! The sled backend, the embedded default.
//!
//! Layout: tree `feed` (key = [`FeedKey`](crate::key::FeedKey), value = a
//! group of appends: where records are committed, see [`feed`]), tree
//! `records` (key = [`RecordKey`] bytes, value = the record), tree `sealed`
//! (key = stream id, value = the side data), tree `summaries` (key = stream
//! id, value = the big-endian record count it describes, then the summary),
//! tree `meta` (marks of the feed), trees `projections` and
//! `projection_rows` ([`projection`]). There is no stream index: streams
//! are listed by seeking in `records`. A summary is written with its
//! records' group, so the two are flushed together; it is only returned
//! while its count is the stream's durable record count, so a crash between
//! the two writes (or an append without a summary) shows as no summary,
//! never as a wrong one. Sequence numbers come from the last key of a
//! stream, never from sled's `generate_id()` (which jumps after a restart);
//! feed positions from the last key of the feed.
//!
//! All writes go through one dedicated writer thread ([`writer`]) doing group
//! commit; reads run on the caller's thread.
//!
//! A full disk stops writes, never reads. The writer refuses a group of
//! appends (`Unavailable`, nothing written) that would leave the file system
//! with less than [`space::KEEP_FREE`], and [`EventStore::health`] says not
//! ready meanwhile; appends are taken again as soon as there is room.
//!
//! A write or flush that fails all the same (the disk filled up from
//! elsewhere, an I/O error) leaves sled's state unknown and sled latches the
//! error, so the writer refuses appends and, every [`RECOVERY_INTERVAL`],
//! tries to recover. Readers keep the database meanwhile (the stream states
//! hide what the failed group wrote). Only once the file system has room is
//! it reopened (sled recovers what really reached the disk; readers wait for
//! that rather than being refused) and probed with a write and flush; appends
//! are taken again when that succeeds.

mod feed;
mod fsync;
mod projection;
mod space;
#[cfg(test)]
mod tests;
mod writer;

use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, oneshot};

use crate::contract::{
    AppendRequest, Appended, EventStore, FeedEntry, MAX_FEED_PAGE, NOTICE_BUFFER, PendingAppend, StoreError, StoreFuture, StoreStats,
    StoredRecord, StreamSummary, closed_receiver,
};
use crate::key::{RecordKey, StreamId};
use crate::projection::{LocalLeases, ProjectionCommit, ProjectionLease, ProjectionRow, validate_name};
use writer::{Done, Job, Writer};

/// What an acknowledged append survives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// sled's `flush()` once per commit group. On Linux it writes the log
    /// with `sync_file_range`: an acknowledged record survives the process
    /// being killed (even `kill -9`) at any instant, but **not** a power loss
    /// or kernel crash until sled's periodic fsync (every 500 ms) has run
    /// after it, since neither the file's metadata nor the disk's write cache
    /// are flushed.
    #[default]
    Flush,
    /// As `Flush`, then a real `fsync` of sled's data file (and of any new
    /// blob files and their directory) before the group is acknowledged: an
    /// acknowledged record also survives a power loss, provided the disk
    /// honours flush requests. Costs one fsync per group (see the `append`
    /// benchmark).
    Fsync,
}

/// Options of [`SledStore::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SledOptions {
    /// What an acknowledged append survives.
    pub durability: Durability,
}

/// Tree names.
const FEED_TREE: &str = "feed";
const RECORDS_TREE: &str = "records";
const SEALED_TREE: &str = "sealed";
const SUMMARIES_TREE: &str = "summaries";
const META_TREE: &str = "meta";
const PROJECTIONS_TREE: &str = "projections";
const PROJECTION_ROWS_TREE: &str = "projection_rows";

/// How long `open` waits for sled's file lock, which a store closed an
/// instant ago in this process may still hold while sled's background I/O
/// threads (and a blocking read still in flight) let go of the file. On a
/// loaded machine that has been seen to take more than 3 s; another
/// process holding the directory is still refused, after this wait.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Above this many cached stream states the writer forgets the settled ones
/// (they are re-read from the last key on next use).
const MAX_CACHED_STREAMS: usize = 1 << 20;

/// How often a failed store tries to reopen its database.
pub const RECOVERY_INTERVAL: Duration = Duration::from_secs(2);

/// An event store on sled with group commit. See [`Durability`] for what an
/// acknowledged append survives.
///
/// Dropping the store closes it like [`EventStore::close`] (errors ignored):
/// queued appends are still committed and answered, the writer thread is
/// joined and sled's file lock is released.
#[derive(Debug)]
pub struct SledStore {
    shared: Arc<Shared>,
    /// Queue to the writer; `None` once closed.
    jobs: RwLock<Option<mpsc::Sender<Job>>>,
    /// Where notices come from; `None` once closed (ending subscribers).
    notices: Mutex<Option<broadcast::Sender<Appended>>>,
    writer: Mutex<Option<JoinHandle<Result<(), StoreError>>>>,
    /// Projections leased in this process (sled's file lock keeps other
    /// processes out of the directory).
    leases: LocalLeases,
}

/// The open database and its trees.
#[derive(Debug)]
struct Handles {
    db: sled::Db,
    feed: sled::Tree,
    records: sled::Tree,
    sealed: sled::Tree,
    summaries: sled::Tree,
    meta: sled::Tree,
    projections: sled::Tree,
    projection_rows: sled::Tree,
}

/// State shared by the writer and the readers.
#[derive(Debug)]
struct Shared {
    /// Where the database lives (the writer reopens it there).
    dir: std::path::PathBuf,
    options: SledOptions,
    /// The sled handles; `None` while the writer reopens the database after
    /// a failure, and once closed (so that closing releases sled's file lock
    /// even while the store value itself lives on).
    handles: RwLock<Option<Arc<Handles>>>,
    /// Why appends are refused, while they are: a group's write or flush
    /// failed, so the state of the files is unknown (and sled latches the
    /// error) until the writer has reopened the database and sled has
    /// recovered what really reached the disk. Set and cleared by the writer.
    failure: Mutex<Option<String>>,
    closed: std::sync::atomic::AtomicBool,
    /// Streams the writer has touched since opening. An entry exists whenever
    /// the records tree may hold records of that stream that are not durable
    /// yet (the writer inserts it before writing), which is what lets readers
    /// hide them.
    streams: Mutex<HashMap<StreamId, StreamState>>,
    /// The highest durable feed position: what readers of the feed may see
    /// (the feed tree also holds the group being flushed). Set by the writer.
    feed_head: AtomicU64,
    /// Held for writing by the writer from a group's projection changes to
    /// the end of its flush, and for reading by readers of projections:
    /// they never see a change before it is durable. (std lock, not tokio's:
    /// never held across an await.)
    projections_gate: RwLock<()>,
    counters: Counters,
    #[cfg(test)]
    hooks: tests::Hooks,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StreamState {
    /// Next seq including records written but not yet flushed (writer only).
    next: u64,
    /// Next seq of what is durable: what readers may see.
    durable: u64,
}

#[derive(Debug, Default)]
struct Counters {
    appends: AtomicU64,
    records: AtomicU64,
    flushes: AtomicU64,
    groups: AtomicU64,
}

impl Shared {
    fn failure(&self) -> MutexGuard<'_, Option<String>> {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The refusal every append gets while the store is failing.
    fn refusal(&self) -> Option<StoreError> {
        self.failure().clone().map(StoreError::Unavailable)
    }

    fn streams(&self) -> MutexGuard<'_, HashMap<StreamId, StreamState>> {
        // The map is consistent between statements: poison is harmless.
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Free bytes on the store's file system, if it says (a test may pretend).
    fn free_bytes(&self) -> Option<u64> {
        #[cfg(test)]
        if let Some(free) = self.hooks.pretended_free_bytes() {
            return Some(free);
        }
        space::free_bytes(&self.dir)
    }

    /// Why a write of `bytes` may not go ahead, if it would leave the disk
    /// with less than [`space::KEEP_FREE`].
    fn disk_full(&self, bytes: u64) -> Option<String> {
        let free = self.free_bytes()?;
        let needed = space::KEEP_FREE.saturating_add(bytes);
        (free < needed).then(|| {
            format!(
                "the disk holding the event store is full: {free} bytes free, {needed} needed to write (the store keeps {} free)",
                space::KEEP_FREE
            )
        })
    }

    /// The durable next seq of a stream the writer has touched.
    fn durable_next(&self, stream: StreamId) -> Option<u64> {
        self.streams().get(&stream).map(|state| state.durable)
    }
}

impl Shared {
    /// Runs `f` on the open handles (holding them against a concurrent
    /// close or reopening, and waiting for a reopening in progress), or
    /// answers `Closed` or `Unavailable`.
    fn with_handles<T>(&self, f: impl FnOnce(&Handles) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let handles = self.handles.read().unwrap_or_else(PoisonError::into_inner);
        self.on_handles(handles.as_deref(), f)
    }

    /// As [`Self::with_handles`], but `None` at once where it would wait
    /// (the writer holds the handles to reopen the database): for callers
    /// on an async worker, which must not wait for that.
    fn try_with_handles<T>(&self, f: impl FnOnce(&Handles) -> Result<T, StoreError>) -> Option<Result<T, StoreError>> {
        let handles = match self.handles.try_read() {
            Ok(handles) => handles,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(self.on_handles(handles.as_deref(), f))
    }

    fn on_handles<T>(&self, handles: Option<&Handles>, f: impl FnOnce(&Handles) -> Result<T, StoreError>) -> Result<T, StoreError> {
        match handles {
            Some(handles) => f(handles),
            None if self.closed.load(Ordering::Acquire) => Err(StoreError::Closed),
            None => Err(self.refusal().unwrap_or_else(|| StoreError::Unavailable("the store is reopening".into()))),
        }
    }

    /// The stream's durable record count.
    fn next_of(&self, handles: &Handles, stream: StreamId) -> Result<u64, StoreError> {
        if let Some(durable) = self.durable_next(stream) {
            return Ok(durable);
        }
        let stored = stored_next(&handles.records, stream)?;
        // The writer may have touched the stream meanwhile (see `read`).
        Ok(self.durable_next(stream).unwrap_or(stored))
    }

    /// Stream ids after `after`, in byte order, at most `limit`.
    fn streams_after(&self, handles: &Handles, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError> {
        let mut out = Vec::new();
        let mut cursor = match after {
            Some(after) => after.successor(),
            None => Some(StreamId([0; StreamId::LEN])),
        };
        // Seek to the first key at or after `cursor ‖ 0`: its stream is
        // the next one; then jump past that stream's keys.
        while let Some(at) = cursor.filter(|_| out.len() < limit) {
            let Some(entry) = handles.records.range(at.0..).next() else {
                break;
            };
            let (key, _) = entry.map_err(|e| backend("reading the records tree", e))?;
            let key = RecordKey::from_bytes(&key).ok_or_else(|| corrupt_key(&key))?;
            // A stream whose creation is not durable yet is not listed.
            if self.durable_next(key.stream) != Some(0) {
                out.push(key.stream);
            }
            cursor = key.stream.successor();
        }
        Ok(out)
    }

    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        self.with_handles(|handles| self.read_in(handles, stream, from, to))
    }

    /// As [`Self::read`], or `None` at once while the database is being
    /// reopened (see [`Self::try_with_handles`]).
    fn read_now(&self, stream: StreamId, from: u64, to: Option<u64>) -> Option<Result<Vec<StoredRecord>, StoreError>> {
        self.try_with_handles(|handles| self.read_in(handles, stream, from, to))
    }

    fn read_in(&self, handles: &Handles, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        // Seq u64::MAX never exists (next_seq would overflow), so an open
        // range may end there.
        let end = to.unwrap_or(u64::MAX);
        if from >= end {
            return Ok(Vec::new());
        }
        let range = RecordKey::new(stream, from).to_bytes()..RecordKey::new(stream, end).to_bytes();
        let mut out: Vec<StoredRecord> = Vec::new();
        for entry in handles.records.range(range) {
            let (key, value) = entry.map_err(|e| backend("reading the records tree", e))?;
            let key = RecordKey::from_bytes(&key).ok_or_else(|| corrupt_key(&key))?;
            let expected = from + out.len() as u64;
            if key.stream != stream || key.seq != expected {
                return Err(StoreError::Backend(format!("stream {stream}: found record {} where record {expected} was expected", key.seq)));
            }
            out.push(StoredRecord { seq: key.seq, bytes: value.to_vec() });
        }
        // Read the tree first, then the map: records written but not yet
        // durable always have a map entry by the time they are in the
        // tree, so this never shows them.
        if let Some(durable) = self.durable_next(stream) {
            let visible = durable.saturating_sub(from);
            out.truncate(usize::try_from(visible).unwrap_or(usize::MAX));
        }
        Ok(out)
    }

    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
        self.with_handles(|handles| {
            let streams = self.streams_after(handles, after, limit)?;
            streams
                .into_iter()
                .map(|stream| {
                    let next_seq = self.next_of(handles, stream)?;
                    let stored = handles.summaries.get(stream.0).map_err(|e| backend("reading the summaries tree", e))?;
                    let summary = stored.and_then(|value| {
                        let (count, summary) = value.split_at_checked(8)?;
                        (u64::from_be_bytes(count.try_into().ok()?) == next_seq).then(|| summary.to_vec())
                    });
                    Ok(StreamSummary { stream, next_seq, summary })
                })
                .collect()
        })
    }

    /// Feed entries after `after`, up to the durable head.
    fn read_feed(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        self.with_handles(|handles| {
            // The head first: every group up to it is in the tree.
            let head = self.feed_head.load(Ordering::Acquire);
            feed::read(handles, head, after, limit.min(MAX_FEED_PAGE))
        })
    }

    fn sealed(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
        self.with_handles(|handles| {
            let sealed = handles.sealed.get(stream.0).map_err(|e| backend("reading the sealed tree", e))?;
            if self.durable_next(stream) == Some(0) {
                return Ok(None);
            }
            Ok(sealed.map(|bytes| bytes.to_vec()))
        })
    }
}

/// Reads of at most this many records run on the caller's task; longer ones
/// (a whole log, for a replay or a cold load) on tokio's blocking pool.
///
/// Why: a page of records is a short range scan that sled serves from its
/// page cache in a few microseconds (a page it must fetch costs one disk
/// read), while a trip to the blocking pool and back costs two thread
/// wake-ups, which the load driver measured as most of a paged read's
/// server time (`ludo-bench`, "reads"). A whole log may be long: it keeps
/// off the async workers.
const INLINE_READ_RECORDS: u64 = 100;

/// Runs a blocking sled read on tokio's blocking pool when there is a
/// runtime (inline when there is none), so that no async worker waits on
/// sled for long: with [`INLINE_READ_RECORDS`], which lets reads of a page
/// run where they are asked, the one place of the crate that decides it.
fn off_the_workers<T: Send + 'static>(read: impl FnOnce() -> Result<T, StoreError> + Send + 'static) -> StoreFuture<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => Box::pin(async move {
            runtime.spawn_blocking(read).await.unwrap_or_else(|e| Err(StoreError::Backend(format!("a read task failed: {e}"))))
        }),
        Err(_) => Box::pin(std::future::ready(read())),
    }
}

fn backend(context: &str, error: impl Display) -> StoreError {
    StoreError::Backend(format!("{context}: {error}"))
}

fn corrupt_key(key: &[u8]) -> StoreError {
    StoreError::Backend(format!("corrupt key of {} bytes in the records tree (expected {})", key.len(), RecordKey::LEN))
}

impl SledStore {
    /// Opens (or creates) the store in `dir` and starts its writer thread.
    ///
    /// # Errors
    /// [`StoreError::Backend`] if the directory cannot be created, sled
    /// cannot open it (another process holds it, corrupt files …), or the
    /// writer thread cannot be started.
    pub fn open(dir: &Path, options: SledOptions) -> Result<SledStore, StoreError> {
        create_private_dir(dir)?;
        let (handles, syncer) = open_handles(dir, options)?;
        // Records from before the feed get their positions (once); groups
        // committed but not derived before a stop are derived (see `feed`).
        feed::upgrade(&handles)?;
        let head = feed::repair(&handles)?;
        // The store holds every running game's seed: owner-only, also for a
        // directory (and the files sled just created) from before this rule.
        make_private(dir).map_err(|e| backend("making the data directory owner-only", e))?;
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            options,
            handles: RwLock::new(Some(Arc::clone(&handles))),
            failure: Mutex::new(None),
            closed: std::sync::atomic::AtomicBool::new(false),
            streams: Mutex::default(),
            feed_head: AtomicU64::new(head),
            projections_gate: RwLock::new(()),
            counters: Counters::default(),
            #[cfg(test)]
            hooks: tests::Hooks::default(),
        });
        let (jobs, queue) = mpsc::channel();
        let (notices, _) = broadcast::channel(NOTICE_BUFFER);
        let writer = Writer::new(handles, Arc::clone(&shared), queue, notices.clone(), syncer, head);
        let thread = std::thread::Builder::new()
            .name("ludo-sled-write".into())
            .spawn(move || writer.run())
            .map_err(|e| backend("starting the writer thread", e))?;
        Ok(SledStore {
            shared,
            jobs: RwLock::new(Some(jobs)),
            notices: Mutex::new(Some(notices)),
            writer: Mutex::new(Some(thread)),
            leases: LocalLeases::default(),
        })
    }

    /// Queues `job` for the writer, or answers that the store is closed.
    fn queue(&self, job: Job) -> Result<(), StoreError> {
        let jobs = self.jobs.read().unwrap_or_else(PoisonError::into_inner);
        let jobs = jobs.as_ref().ok_or(StoreError::Closed)?;
        // The writer is gone only once it stopped (it only stops early by panicking).
        jobs.send(job).map_err(|_| StoreError::Closed)
    }

    /// Queues a projection change and resolves with the writer's answer.
    fn change_projection(&self, job: impl FnOnce(Done) -> Job) -> StoreFuture<()> {
        let (done, answer) = oneshot::channel();
        if let Err(refused) = self.queue(job(done)) {
            return Box::pin(std::future::ready(Err(refused)));
        }
        Box::pin(async move { answer.await.unwrap_or_else(|_| Err(StoreError::Backend("the store stopped without answering".into()))) })
    }

    /// Stops the writer (after it committed what is queued), ends notices
    /// and drops the handles, releasing sled's file lock.
    fn shutdown(&self) -> Result<(), StoreError> {
        // Dropping the queue's only sender lets the writer drain what is
        // queued, answer it, flush and return.
        drop(self.jobs.write().unwrap_or_else(PoisonError::into_inner).take());
        let thread = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        let result = match thread.map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(StoreError::Backend("the writer thread panicked".into())),
        };
        drop(self.notices.lock().unwrap_or_else(PoisonError::into_inner).take());
        // Last handles: sled stops its flusher and releases the file lock.
        self.shared.closed.store(true, Ordering::Release);
        drop(self.shared.handles.write().unwrap_or_else(PoisonError::into_inner).take());
        result
    }
}

/// Creates `dir` (and missing parents) owner-only: 0700.
fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| backend("creating the data directory", e))
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir).map_err(|e| backend("creating the data directory", e))
}

/// Takes every permission of group and others off `dir` and everything in
/// it (0700 directories, 0600 files), saying so when it changes anything.
fn make_private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mut tightened = 0;
        let mut pending = vec![dir.to_path_buf()];
        while let Some(path) = pending.pop() {
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.is_dir() {
                pending.extend(std::fs::read_dir(&path)?.map(|entry| entry.map(|e| e.path())).collect::<Result<Vec<_>, _>>()?);
            }
            let mode = meta.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o700))?;
                tightened += 1;
            }
        }
        if tightened > 0 {
            tracing::warn!(dir = %dir.display(), tightened, "the data directory was readable by others: made owner-only");
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Opens the database in `dir`: sled, its trees, and (in `Fsync` mode) the
/// file syncer.
fn open_handles(dir: &Path, options: SledOptions) -> Result<(Arc<Handles>, Option<fsync::FileSyncer>), StoreError> {
    let db = open_db(dir)?;
    let records = db.open_tree(RECORDS_TREE).map_err(|e| backend("opening the records tree", e))?;
    let sealed = db.open_tree(SEALED_TREE).map_err(|e| backend("opening the sealed tree", e))?;
    let summaries = db.open_tree(SUMMARIES_TREE).map_err(|e| backend("opening the summaries tree", e))?;
    let tree = |name: &str| db.open_tree(name).map_err(|e| backend(&format!("opening the {name} tree"), e));
    let (feed, meta) = (tree(FEED_TREE)?, tree(META_TREE)?);
    let (projections, projection_rows) = (tree(PROJECTIONS_TREE)?, tree(PROJECTION_ROWS_TREE)?);
    let syncer = match options.durability {
        Durability::Flush => None,
        Durability::Fsync => Some(fsync::FileSyncer::open(dir).map_err(|e| backend("preparing fsync", e))?),
    };
    Ok((Arc::new(Handles { db, feed, records, sealed, summaries, meta, projections, projection_rows }), syncer))
}

/// Opens sled in `dir`, waiting a little for a file lock that a store of this
/// process closed an instant ago may still hold.
fn open_db(dir: &Path) -> Result<sled::Db, StoreError> {
    let config = sled::Config::new().path(dir);
    let deadline = Instant::now() + LOCK_WAIT;
    let mut pause = Duration::from_millis(5);
    loop {
        match config.open() {
            Ok(db) => return Ok(db),
            Err(sled::Error::Io(e)) if e.to_string().contains("could not acquire lock") && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Err(e) => return Err(backend("opening sled", e)),
        }
    }
}

/// The next seq of `stream` according to the records tree (its last key + 1).
fn stored_next(records: &sled::Tree, stream: StreamId) -> Result<u64, StoreError> {
    let first = RecordKey::new(stream, 0).to_bytes();
    let last = RecordKey::new(stream, u64::MAX).to_bytes();
    match records.range(first..=last).next_back() {
        None => Ok(0),
        Some(entry) => {
            let (key, _) = entry.map_err(|e| backend("reading the records tree", e))?;
            let key = RecordKey::from_bytes(&key).ok_or_else(|| corrupt_key(&key))?;
            key.seq.checked_add(1).ok_or_else(|| StoreError::Backend(format!("stream {stream}: a record has seq u64::MAX")))
        }
    }
}

impl EventStore for SledStore {
    fn append(&self, request: AppendRequest) -> PendingAppend {
        if let Err(invalid) = request.validate() {
            return PendingAppend::ready(Err(invalid));
        }
        let (reply, answer) = oneshot::channel();
        match self.queue(Job::Append { request, reply }) {
            Ok(()) => PendingAppend::from_receiver(answer),
            Err(refused) => PendingAppend::ready(Err(refused)),
        }
    }

    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> StoreFuture<Vec<StoredRecord>> {
        if to.is_some_and(|to| to.saturating_sub(from) <= INLINE_READ_RECORDS) {
            // A page: read where it is asked (see `INLINE_READ_RECORDS`),
            // unless the database is being reopened (then it waits off the
            // workers, below).
            if let Some(read) = self.shared.read_now(stream, from, to) {
                return Box::pin(std::future::ready(read));
            }
        }
        let shared = Arc::clone(&self.shared);
        off_the_workers(move || shared.read(stream, from, to))
    }

    fn read_blocking(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        self.shared.read(stream, from, to)
    }

    fn next_seq(&self, stream: StreamId) -> Result<u64, StoreError> {
        self.shared.with_handles(|handles| self.shared.next_of(handles, stream))
    }

    fn list_streams(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError> {
        self.shared.with_handles(|handles| self.shared.streams_after(handles, after, limit))
    }

    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> StoreFuture<Vec<StreamSummary>> {
        let shared = Arc::clone(&self.shared);
        off_the_workers(move || shared.list_summaries(after, limit))
    }

    fn list_summaries_blocking(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
        self.shared.list_summaries(after, limit)
    }

    fn sealed(&self, stream: StreamId) -> StoreFuture<Option<Vec<u8>>> {
        let shared = Arc::clone(&self.shared);
        off_the_workers(move || shared.sealed(stream))
    }

    fn sealed_blocking(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
        self.shared.sealed(stream)
    }

    fn read_feed(&self, after: u64, limit: usize) -> StoreFuture<Vec<FeedEntry>> {
        let shared = Arc::clone(&self.shared);
        off_the_workers(move || shared.read_feed(after, limit))
    }

    fn read_feed_blocking(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        self.shared.read_feed(after, limit)
    }

    fn feed_head(&self) -> Result<u64, StoreError> {
        self.shared.with_handles(|_| Ok(self.shared.feed_head.load(Ordering::Acquire)))
    }

    fn projection_load(&self, name: &str) -> StoreFuture<Option<u64>> {
        let (shared, name) = (Arc::clone(&self.shared), name.to_string());
        off_the_workers(move || shared.projection_load(&name))
    }

    fn projection_load_blocking(&self, name: &str) -> Result<Option<u64>, StoreError> {
        self.shared.projection_load(name)
    }

    fn projection_commit(&self, commit: ProjectionCommit) -> StoreFuture<()> {
        if let Err(invalid) = commit.validate() {
            return Box::pin(std::future::ready(Err(invalid)));
        }
        self.change_projection(|done| Job::Project { commit, done })
    }

    fn projection_get(&self, name: &str, key: &[u8]) -> StoreFuture<Option<Vec<u8>>> {
        let (shared, name, key) = (Arc::clone(&self.shared), name.to_string(), key.to_vec());
        off_the_workers(move || shared.projection_get(&name, &key))
    }

    fn projection_scan(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> StoreFuture<Vec<ProjectionRow>> {
        let (shared, name) = (Arc::clone(&self.shared), name.to_string());
        off_the_workers(move || shared.projection_scan(&name, after.as_deref(), limit))
    }

    fn projection_scan_blocking(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> Result<Vec<ProjectionRow>, StoreError> {
        self.shared.projection_scan(name, after.as_deref(), limit)
    }

    fn projection_reset(&self, name: &str) -> StoreFuture<()> {
        if let Err(invalid) = validate_name(name) {
            return Box::pin(std::future::ready(Err(invalid)));
        }
        let name = name.to_string();
        self.change_projection(|done| Job::Reset { name, done })
    }

    fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.shared.projection_names()
    }

    fn projection_lease(&self, name: &str) -> StoreFuture<Option<ProjectionLease>> {
        let lease = self.shared.with_handles(|_| self.leases.take(name));
        Box::pin(std::future::ready(lease))
    }

    fn subscribe(&self) -> broadcast::Receiver<Appended> {
        self.notices.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map_or_else(closed_receiver, broadcast::Sender::subscribe)
    }

    fn health(&self) -> Result<(), StoreError> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        // A full disk makes the store not ready before any append is
        // refused (after a restart on it, say): appends would be.
        self.shared.refusal().or_else(|| self.shared.disk_full(0).map(StoreError::Unavailable)).map_or(Ok(()), Err)
    }

    fn close(&self) -> Result<(), StoreError> {
        self.shutdown()
    }

    fn stats(&self) -> StoreStats {
        let counters = &self.shared.counters;
        StoreStats {
            appends: counters.appends.load(Ordering::Relaxed),
            records: counters.records.load(Ordering::Relaxed),
            flushes: counters.flushes.load(Ordering::Relaxed),
            groups: counters.groups.load(Ordering::Relaxed),
        }
    }
}

impl Drop for SledStore {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
