//! Tests of the sled writer's internals, through test-only hooks that hold
//! the writer at fixed points: group commit and visibility are checked
//! deterministically, not by timing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, TryLockError};

use super::{Durability, SledOptions, SledStore};
use crate::contract::{AppendRequest, EventStore, StoreError};
use crate::key::{FeedKey, RecordKey, StreamId};

/// Where the writer can be held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Point {
    /// After receiving a group's first request, before draining the queue.
    BeforeDrain,
    /// After writing a group to sled, before flushing it.
    BeforeFlush,
    /// About to try to recover from a failure.
    Recovering,
    /// Reopening the database after a failure: the old handles are
    /// dropped, the new ones not yet opened.
    Reopening,
}

#[derive(Debug, Default)]
pub(super) struct Hooks {
    state: Mutex<HookState>,
    changed: Condvar,
    fail_next_flush: AtomicBool,
    /// Free bytes the writer is told its file system has (`None`: ask it).
    free_bytes: Mutex<Option<u64>>,
    /// Recoveries tried, and probe writes among them.
    pub(super) recoveries: AtomicU64,
    pub(super) probes: AtomicU64,
}

#[derive(Debug, Default)]
struct HookState {
    held: Vec<Point>,
    waiting_at: Option<Point>,
}

impl Hooks {
    /// Called by the writer: waits while `point` is held.
    pub(super) fn checkpoint(&self, point: Point) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.held.contains(&point) {
            state.waiting_at = Some(point);
            self.changed.notify_all();
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.waiting_at = None;
    }

    /// Called by the writer before it looks at the disk's free space.
    pub(super) fn pretended_free_bytes(&self) -> Option<u64> {
        *self.free_bytes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn pretend_free_bytes(&self, free: Option<u64>) {
        *self.free_bytes.lock().unwrap_or_else(PoisonError::into_inner) = free;
    }

    /// Called by the writer after a successful flush: fails it if asked to.
    pub(super) fn injected_flush_failure(&self) -> Result<(), StoreError> {
        if self.fail_next_flush.swap(false, Ordering::SeqCst) {
            return Err(StoreError::Backend("injected flush failure".into()));
        }
        Ok(())
    }
}

/// Holds the writer at a point until dropped (also on a failing test's
/// unwinding, so the store's drop never waits for a held writer).
struct Hold<'a> {
    store: &'a SledStore,
    point: Point,
}

fn hold(store: &SledStore, point: Point) -> Hold<'_> {
    let hooks = &store.shared.hooks;
    hooks.state.lock().unwrap_or_else(PoisonError::into_inner).held.push(point);
    Hold { store, point }
}

impl Hold<'_> {
    /// Waits until the writer is held here.
    fn reached(&self) {
        let hooks = &self.store.shared.hooks;
        let mut state = hooks.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.waiting_at != Some(self.point) {
            state = hooks.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let hooks = &self.store.shared.hooks;
        let mut state = hooks.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.held.retain(|p| *p != self.point);
        hooks.changed.notify_all();
    }
}

fn stream(n: u8) -> StreamId {
    let mut id = [0; 16];
    id[0] = 0x42;
    id[15] = n;
    StreamId(id)
}

fn record(stream: StreamId, seq: u64) -> Vec<u8> {
    format!("{stream}/{seq}").into_bytes()
}

fn open(dir: &std::path::Path, durability: Durability) -> SledStore {
    SledStore::open(dir, SledOptions { durability }).expect("open")
}

fn queued_appends_share_one_flush(durability: Durability) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), durability);
    // A stream that exists before the group.
    store.append(AppendRequest::create(stream(0), vec![record(stream(0), 0)], None)).wait().expect("create");
    // Streams that get one single-record append each in the group.
    for n in 50..60 {
        let id = stream(n);
        store.append(AppendRequest::create(id, vec![record(id, 0)], None)).wait().expect("create");
    }
    let before = store.stats();

    let held = hold(&store, Point::BeforeDrain);
    // Every append() below returns only once its request is queued, and the
    // writer cannot drain before the hold is released: one group, provably.
    let creates: Vec<_> = (1..=40)
        .map(|n| {
            let id = stream(n);
            store.append(AppendRequest::create(id, vec![record(id, 0), record(id, 1)], Some(vec![n])))
        })
        .collect();
    // Two racing appends in the same group: the first queued wins, the
    // second is checked against it.
    let first = store.append(AppendRequest::at(stream(0), 1, vec![record(stream(0), 1)]));
    let second = store.append(AppendRequest::at(stream(0), 1, vec![b"loser".to_vec()]));
    let third = store.append(AppendRequest::at(stream(0), 2, vec![record(stream(0), 2)]));
    let singles: Vec<_> = (50..60)
        .map(|n| {
            let id = stream(n);
            store.append(AppendRequest::at(id, 1, vec![record(id, 1)]))
        })
        .collect();
    drop(held);

    for (n, pending) in (1..).zip(creates) {
        let appended = pending.wait().expect("create in the group");
        assert_eq!((appended.stream, appended.first_seq, appended.next_seq), (stream(n), 0, 2));
    }
    assert_eq!(first.wait().expect("first").next_seq, 2);
    assert_eq!(second.wait(), Err(StoreError::Conflict { stream: stream(0), expected_next: 1, actual_next: 2 }));
    assert_eq!(third.wait().expect("third").next_seq, 3);
    for pending in singles {
        assert_eq!(pending.wait().expect("single").next_seq, 2);
    }

    let after = store.stats();
    assert_eq!(after.groups - before.groups, 1, "one group");
    assert_eq!(after.flushes - before.flushes, 1, "one flush for 53 appends");
    assert_eq!(after.appends - before.appends, 52);
    assert_eq!(after.records - before.records, 92);
    store.close().expect("close");

    // Everything of the group (plain inserts, batch, transaction) is kept.
    let store = open(dir.path(), Durability::Flush);
    let stored = |id| -> Vec<Vec<u8>> {
        let records = store.read_blocking(id, 0, None).expect("read");
        records.into_iter().map(|r| r.bytes).collect()
    };
    let expected = |id, count| (0..count).map(|seq| record(id, seq)).collect::<Vec<_>>();
    assert_eq!(stored(stream(0)), expected(stream(0), 3));
    for n in 1..=40 {
        assert_eq!(stored(stream(n)), expected(stream(n), 2));
        assert_eq!(store.sealed_blocking(stream(n)), Ok(Some(vec![n])));
    }
    for n in 50..60 {
        assert_eq!(stored(stream(n)), expected(stream(n), 2));
    }
}

#[test]
fn queued_appends_share_one_flush_with_flush_durability() {
    queued_appends_share_one_flush(Durability::Flush);
}

#[test]
fn queued_appends_share_one_flush_with_fsync_durability() {
    queued_appends_share_one_flush(Durability::Fsync);
}

#[test]
fn readers_never_see_records_before_they_are_durable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    let (old, new) = (stream(1), stream(2));
    store.append(AppendRequest::create(old, vec![record(old, 0)], Some(b"old".to_vec()))).wait().expect("create old");
    let mut notices = store.subscribe();

    // Both appends in one group, held between its write and its flush.
    let drain = hold(&store, Point::BeforeDrain);
    let held = hold(&store, Point::BeforeFlush);
    let grow = store.append(AppendRequest::at(old, 1, vec![record(old, 1)]));
    let create = store.append(AppendRequest::create(new, vec![record(new, 0)], Some(b"new".to_vec())));
    drop(drain);
    held.reached();
    // Written to sled, not flushed: in the feed (records by stream come
    // after the flush), invisible through the store.
    let handles = store.shared.handles.read().expect("lock").clone().expect("open");
    assert!(handles.feed.contains_key(FeedKey(2).to_bytes()).expect("tree"), "the group is in the feed at its first position");
    assert!(!handles.records.contains_key(RecordKey::new(new, 0).to_bytes()).expect("tree"));
    drop(handles);
    assert_eq!(store.feed_head(), Ok(1));
    assert_eq!(store.read_feed_blocking(0, 10).expect("feed").len(), 1);
    assert_eq!(store.next_seq(old), Ok(1));
    assert_eq!(store.read_blocking(old, 0, None).expect("read").len(), 1);
    assert_eq!(store.next_seq(new), Ok(0));
    assert_eq!(store.read_blocking(new, 0, None), Ok(vec![]));
    assert_eq!(store.sealed_blocking(new), Ok(None));
    assert_eq!(store.list_streams(None, 10), Ok(vec![old]));
    assert!(notices.try_recv().is_err(), "no notice before the flush");
    drop(held);

    assert_eq!(grow.wait().expect("grow").next_seq, 2);
    assert_eq!(create.wait().expect("create").next_seq, 1);
    assert_eq!(store.next_seq(old), Ok(2));
    assert_eq!(store.read_blocking(new, 0, None).expect("read").len(), 1);
    assert_eq!(store.sealed_blocking(new), Ok(Some(b"new".to_vec())));
    assert_eq!(store.list_streams(None, 10), Ok(vec![old, new]));
    assert_eq!(notices.try_recv().expect("notice").stream, old);
    assert_eq!(notices.try_recv().expect("notice").stream, new);
    assert_eq!(store.feed_head(), Ok(3));
}

#[test]
fn a_failed_flush_fails_the_whole_group_and_later_appends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (stream(1), stream(2));
    {
        let store = open(dir.path(), Durability::Flush);
        store.append(AppendRequest::create(a, vec![record(a, 0)], None)).wait().expect("create a");
        let before = store.stats();

        let held = hold(&store, Point::BeforeDrain);
        store.shared.hooks.fail_next_flush.store(true, Ordering::SeqCst);
        let group = [
            store.append(AppendRequest::at(a, 1, vec![record(a, 1)])),
            store.append(AppendRequest::create(b, vec![record(b, 0)], Some(vec![1]))),
            // Would be a conflict; fails like the rest of its group.
            store.append(AppendRequest::at(a, 7, vec![record(a, 7)])),
        ];
        drop(held);
        for pending in group {
            assert!(matches!(pending.wait(), Err(StoreError::Backend(_))));
        }
        let after = store.stats();
        assert_eq!((after.appends, after.flushes), (before.appends, before.flushes));
        // Nothing of the failed group is visible.
        assert_eq!(store.next_seq(a), Ok(1));
        assert_eq!(store.next_seq(b), Ok(0));
        assert_eq!(store.list_streams(None, 10), Ok(vec![a]));
        // The store refuses appends (nothing written) until it recovers, and says so.
        let later = store.append(AppendRequest::at(a, 1, vec![record(a, 1)])).wait();
        assert!(matches!(later, Err(StoreError::Unavailable(_))), "{later:?}");
        assert!(matches!(store.health(), Err(StoreError::Unavailable(_))));
        assert!(matches!(store.close(), Err(StoreError::Unavailable(_))));
    }
    // After reopening, the unacknowledged group's outcome is whatever reached
    // the disk, but each stream is whole and appends work again.
    let store = open(dir.path(), Durability::Flush);
    let next_a = store.next_seq(a).expect("next a");
    assert!(next_a == 1 || next_a == 2);
    let records = store.read_blocking(a, 0, None).expect("read a");
    assert_eq!(records.len() as u64, next_a);
    store.append(AppendRequest::at(a, next_a, vec![record(a, next_a)])).wait().expect("append after reopen");
}

#[test]
fn the_writer_thread_stops_when_the_store_is_dropped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    let id = stream(3);
    let pending = store.append(AppendRequest::create(id, vec![record(id, 0)], None));
    let thread = store.writer.lock().expect("lock").as_ref().map(|handle| handle.thread().id()).expect("writer running");
    let shared = Arc::clone(&store.shared);
    drop(store);
    // Queued work was still committed and answered …
    assert_eq!(pending.wait().expect("answered").next_seq, 1);
    // … the writer's clone of the shared state is gone (thread ended) …
    assert_eq!(Arc::strong_count(&shared), 1, "writer {thread:?} still alive");
    // … and sled's lock is free: the directory reopens at once.
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.next_seq(id), Ok(1));
}

#[test]
fn corrupt_keys_are_reported_not_panicked_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    let id = stream(4);
    store.append(AppendRequest::create(id, vec![record(id, 0)], None)).wait().expect("create");
    let handles = store.shared.handles.read().expect("lock").clone().expect("open");
    // A 20-byte key inside stream 4's range, and a gap (seq 5 after 0).
    let mut short = id.0.to_vec();
    short.extend_from_slice(&[0, 0, 0, 9]);
    handles.records.insert(short, b"?".as_slice()).expect("insert");
    handles.records.insert(RecordKey::new(id, 5).to_bytes(), b"?".as_slice()).expect("insert");
    drop(handles);
    assert!(matches!(store.read_blocking(id, 0, None), Err(StoreError::Backend(_))));
    assert!(matches!(store.list_streams(None, 10), Ok(_) | Err(StoreError::Backend(_))));
    let other = stream(9);
    let handles = store.shared.handles.read().expect("lock").clone().expect("open");
    handles.records.insert(&other.0[..3], b"?".as_slice()).expect("insert");
    drop(handles);
    assert!(matches!(store.list_streams(None, 10), Err(StoreError::Backend(_))));
}

#[test]
fn a_failed_store_recovers_by_itself_and_takes_appends_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = stream(1);
    let store = open(dir.path(), Durability::Flush);
    store.append(AppendRequest::create(a, vec![record(a, 0)], None)).wait().expect("create a");
    assert_eq!(store.health(), Ok(()));
    store.shared.hooks.fail_next_flush.store(true, Ordering::SeqCst);
    let failed = store.append(AppendRequest::at(a, 1, vec![record(a, 1)])).wait();
    assert!(matches!(failed, Err(StoreError::Backend(_))), "the failed group's outcome is unknown: {failed:?}");
    assert!(matches!(store.health(), Err(StoreError::Unavailable(_))));
    // Within a recovery interval or two, the database is reopened.
    let deadline = std::time::Instant::now() + 5 * crate::RECOVERY_INTERVAL;
    while store.health().is_err() {
        assert!(std::time::Instant::now() < deadline, "the store never recovered: {:?}", store.health());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The failed append was written before its flush failed: after the
    // reopening it is there, whole, and the stream goes on after it.
    let next = store.next_seq(a).expect("next");
    assert!(next == 1 || next == 2, "{next}");
    assert_eq!(store.read_blocking(a, 0, None).expect("read").len() as u64, next);
    store.append(AppendRequest::at(a, next, vec![record(a, next)])).wait().expect("appends work again");
    assert_eq!(store.next_seq(a), Ok(next + 1));
    store.close().expect("close");
}

/// Streams `a` (two records, sealed data) and `b` (a record and a summary)
/// in `store`.
fn two_streams(store: &SledStore) -> (StreamId, StreamId) {
    let (a, b) = (stream(1), stream(2));
    store.append(AppendRequest::create(a, vec![record(a, 0), record(a, 1)], Some(b"a".to_vec()))).wait().expect("create a");
    store.append(AppendRequest::create(b, vec![record(b, 0)], None).with_summary(b"b".to_vec())).wait().expect("create b");
    (a, b)
}

/// Everything readers can ask of `two_streams`.
type Reads = (
    Result<Vec<crate::StoredRecord>, StoreError>,
    Result<Option<Vec<u8>>, StoreError>,
    Result<u64, StoreError>,
    Result<Vec<StreamId>, StoreError>,
    Result<Vec<Option<Vec<u8>>>, StoreError>,
);

fn reads(store: &SledStore, (a, b): (StreamId, StreamId)) -> Reads {
    (
        store.read_blocking(a, 0, None),
        store.sealed_blocking(a),
        store.next_seq(b),
        store.list_streams(None, 10),
        store.list_summaries_blocking(None, 10).map(|all| all.into_iter().map(|s| s.summary).collect()),
    )
}

#[test]
fn a_group_that_would_leave_the_disk_too_little_room_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    let (a, b) = two_streams(&store);
    let before = reads(&store, (a, b));
    assert_eq!(before.0.as_ref().map(Vec::len), Ok(2));
    assert_eq!(store.health(), Ok(()));

    // Room for a small append but not for a large one.
    store.shared.hooks.pretend_free_bytes(Some(super::space::KEEP_FREE + 100));
    let large = store.append(AppendRequest::at(a, 2, vec![vec![7; 200]])).wait();
    assert!(matches!(&large, Err(StoreError::Unavailable(reason)) if reason.contains("full")), "{large:?}");
    assert_eq!(reads(&store, (a, b)), before, "nothing was written");
    store.append(AppendRequest::at(a, 2, vec![record(a, 2)])).wait().expect("a small append fits");

    // No room at all: refused, not ready, readable; never a failed write.
    store.shared.hooks.pretend_free_bytes(Some(0));
    assert!(matches!(store.health(), Err(StoreError::Unavailable(_))), "not ready: {:?}", store.health());
    let refused = store.append(AppendRequest::at(a, 3, vec![record(a, 3)])).wait();
    assert!(matches!(refused, Err(StoreError::Unavailable(_))), "{refused:?}");
    assert_eq!(store.read_blocking(a, 0, None).map(|records| records.len()), Ok(3));
    assert_eq!(store.sealed_blocking(a), Ok(Some(b"a".to_vec())));
    assert_eq!(reads(&store, (a, b)).4, before.4);
    assert_eq!(*store.shared.failure(), None, "no write failed: nothing to recover from");

    // Room comes back: appends are taken at once.
    store.shared.hooks.pretend_free_bytes(None);
    assert_eq!(store.health(), Ok(()));
    store.append(AppendRequest::at(a, 3, vec![record(a, 3)])).wait().expect("appends work again");
    store.close().expect("close");
}

/// Waits (polling, up to a generous deadline) until the writer has tried
/// to recover `count` times in all.
fn wait_for_recoveries(store: &SledStore, count: u64) {
    let deadline = std::time::Instant::now() + (count as u32 + 5) * crate::RECOVERY_INTERVAL;
    while store.shared.hooks.recoveries.load(Ordering::SeqCst) < count {
        assert!(std::time::Instant::now() < deadline, "the writer never tried to recover {count} times");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn after_a_failed_write_readers_keep_the_database_until_the_disk_has_room() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    let (a, b) = two_streams(&store);
    let before = reads(&store, (a, b));

    // A write fails, and then the disk has no room.
    let recovering = hold(&store, Point::Recovering);
    store.shared.hooks.fail_next_flush.store(true, Ordering::SeqCst);
    let failed = store.append(AppendRequest::at(a, 2, vec![record(a, 2)])).wait();
    assert!(matches!(failed, Err(StoreError::Backend(_))), "{failed:?}");
    store.shared.hooks.pretend_free_bytes(Some(0));
    assert_eq!(reads(&store, (a, b)), before, "readable, without the failed record");
    drop(recovering);

    // Recoveries come and go; none takes the database from readers (the
    // failed record, written to sled before its flush failed, stays hidden:
    // the database was not reopened) nor tries a write.
    wait_for_recoveries(&store, 2);
    assert_eq!(reads(&store, (a, b)), before, "readable across recoveries");
    assert_eq!(store.shared.hooks.probes.load(Ordering::SeqCst), 0, "no write is tried while the disk is full");
    let refused = store.append(AppendRequest::at(a, 2, vec![record(a, 2)])).wait();
    assert!(matches!(refused, Err(StoreError::Unavailable(_))), "appends are refused, nothing written: {refused:?}");
    assert!(matches!(store.health(), Err(StoreError::Unavailable(reason)) if reason.contains("full")), "{:?}", store.health());

    // Room comes back: the database is reopened (showing what reached the
    // disk) and probed, and appends are taken again.
    store.shared.hooks.pretend_free_bytes(None);
    let deadline = std::time::Instant::now() + 5 * crate::RECOVERY_INTERVAL;
    while store.health().is_err() {
        assert!(std::time::Instant::now() < deadline, "the store never recovered: {:?}", store.health());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(store.shared.hooks.probes.load(Ordering::SeqCst), 1);
    let next = store.next_seq(a).expect("next");
    assert!(next == 2 || next == 3, "{next}");
    assert_eq!(store.read_blocking(a, 0, None).map(|records| records.len() as u64), Ok(next));
    store.append(AppendRequest::at(a, next, vec![record(a, next)])).wait().expect("appends work again");
    store.close().expect("close");
}

#[test]
fn reads_wait_for_a_reopening_instead_of_being_refused_and_async_workers_never_block_on_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = stream(1);
    let store = Arc::new(open(dir.path(), Durability::Flush));
    store.append(AppendRequest::create(a, vec![record(a, 0), record(a, 1)], None)).wait().expect("create a");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().expect("runtime");

    let reopening = hold(&store, Point::Reopening);
    store.shared.hooks.fail_next_flush.store(true, Ordering::SeqCst);
    assert!(store.append(AppendRequest::at(a, 2, vec![record(a, 2)])).wait().is_err());
    reopening.reached();
    // The writer holds the handles' lock while it reopens: every reader
    // of the database waits for it …
    assert!(matches!(store.shared.handles.try_read(), Err(TryLockError::WouldBlock)));
    let blocking = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || store.read_blocking(a, 0, None))
    };
    // … but a page read asked for on an async worker returns its future at
    // once (it waits on the blocking pool): were it to wait here, this
    // thread, which alone can let the reopening go on, would hang.
    let page = {
        let _on_the_runtime = runtime.enter();
        store.read(a, 0, Some(2))
    };
    drop(reopening);
    let page = runtime.block_on(page).expect("the page, once reopened");
    assert_eq!(page.len(), 2);
    let whole = blocking.join().expect("reader thread").expect("the log, once reopened");
    assert!(whole.len() == 2 || whole.len() == 3, "{}", whole.len());
}

#[test]
fn an_interrupted_upgrade_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let streams = [stream(1), stream(2), stream(3)];
    let keys: Vec<RecordKey> = streams.iter().flat_map(|id| (0..3).map(move |seq| RecordKey::new(*id, seq))).collect();
    {
        // Records from before the feed, and the first group an upgrade
        // wrote (positions 1–4) before it was stopped: no mark yet.
        let db = sled::open(dir.path()).expect("raw sled");
        let records = db.open_tree("records").expect("records");
        for key in &keys {
            records.insert(key.to_bytes(), record(key.stream, key.seq)).expect("insert");
        }
        let mut group = vec![super::feed::FORMAT_POINTERS];
        group.extend_from_slice(&4_u32.to_be_bytes());
        for key in &keys[..4] {
            group.extend_from_slice(&key.to_bytes());
        }
        db.open_tree("feed").expect("feed").insert(FeedKey(1).to_bytes(), group).expect("insert");
        db.flush().expect("flush");
    }
    let store = open(dir.path(), Durability::Flush);
    let feed = store.read_feed_blocking(0, 100).expect("feed");
    let order: Vec<RecordKey> = feed.iter().map(|e| RecordKey::new(e.stream, e.seq)).collect();
    assert_eq!(order, keys, "every record once, in stream then seq order");
    assert_eq!(feed.iter().map(|e| e.position).collect::<Vec<_>>(), (1..=9).collect::<Vec<_>>());
    assert_eq!(store.feed_head(), Ok(9));
}

#[test]
fn groups_committed_but_not_derived_are_derived_on_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (stream(1), stream(2));
    {
        let store = open(dir.path(), Durability::Flush);
        store.append(AppendRequest::create(a, vec![record(a, 0)], None)).wait().expect("create");
        // What a stop right after a group's flush leaves: the group in the
        // feed, not yet in the records and sealed trees.
        let handles = store.shared.handles.read().expect("lock").clone().expect("open");
        let group = super::feed::encode_inline(
            [(a, 1, &[record(a, 1), record(a, 2)][..], None), (b, 0, &[record(b, 0)][..], Some(&b"seed"[..]))].into_iter(),
        );
        handles.feed.insert(FeedKey(2).to_bytes(), group).expect("insert");
        handles.db.flush().expect("flush");
    }
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.feed_head(), Ok(4));
    assert_eq!(store.next_seq(a), Ok(3));
    assert_eq!(
        store.read_blocking(a, 1, None).expect("read").iter().map(|r| r.bytes.clone()).collect::<Vec<_>>(),
        vec![record(a, 1), record(a, 2)]
    );
    assert_eq!(store.sealed_blocking(b), Ok(Some(b"seed".to_vec())));
    assert_eq!(store.append(AppendRequest::at(b, 1, vec![record(b, 1)])).wait().expect("append").first_position, 5);
}
