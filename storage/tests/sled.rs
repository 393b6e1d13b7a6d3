//! What only the sled backend promises: acknowledged data outlives the
//! process's handle on it.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{record, records, stream};
use ludo_storage::{AppendRequest, Durability, EventStore, SledOptions, SledStore, StoreError, StreamId};

fn open(dir: &Path, durability: Durability) -> SledStore {
    SledStore::open(dir, SledOptions { durability }).expect("open sled")
}

fn assert_stream(store: &dyn EventStore, id: StreamId, count: u64) {
    assert_eq!(store.next_seq(id), Ok(count), "next seq of {id}");
    let stored = store.read_blocking(id, 0, None).expect("read");
    assert_eq!(stored.len() as u64, count, "records of {id}");
    for (seq, r) in (0..).zip(stored) {
        assert_eq!(r.seq, seq);
        assert_eq!(r.bytes, record(id, seq), "record {seq} of {id}");
    }
}

#[test]
fn reopening_after_close_keeps_every_acknowledged_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    for n in 0..5 {
        let id = stream(n);
        store.append(AppendRequest::create(id, records(id, 0, 2), Some(vec![n as u8; 32]))).wait().expect("create");
        for seq in 2..(2 + u64::from(n)) {
            store.append(AppendRequest::at(id, seq, records(id, seq, seq + 1))).wait().expect("append");
        }
    }
    store.close().expect("close");

    // The closed store value still exists: closing alone released the files.
    let reopened = open(dir.path(), Durability::Flush);
    for n in 0..5 {
        let id = stream(n);
        assert_stream(&reopened, id, 2 + u64::from(n));
        assert_eq!(reopened.sealed_blocking(id), Ok(Some(vec![n as u8; 32])));
    }
    assert_eq!(reopened.list_streams(None, 10), Ok((0..5).map(stream).collect()));
    // Appends continue at the right seq; a stale one still conflicts.
    let id = stream(4);
    let stale = reopened.append(AppendRequest::at(id, 5, records(id, 5, 6))).wait();
    assert_eq!(stale, Err(StoreError::Conflict { stream: id, expected_next: 5, actual_next: 6 }));
    let appended = reopened.append(AppendRequest::at(id, 6, records(id, 6, 8))).wait().expect("append after reopen");
    assert_eq!((appended.first_seq, appended.next_seq), (6, 8));
    drop(reopened);
    drop(store);

    // Dropping (not closing) also releases the files and keeps everything.
    let again = open(dir.path(), Durability::Flush);
    assert_stream(&again, stream(4), 8);
    assert_stream(&again, stream(0), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_appenders_are_all_acknowledged_and_kept() {
    const TASKS: u32 = 64;
    const APPENDS: u64 = 20;
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn EventStore> = Arc::new(open(dir.path(), Durability::Flush));
    let mut tasks = Vec::new();
    for n in 0..TASKS {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let id = stream(n);
            for seq in 0..APPENDS {
                let request = AppendRequest {
                    stream: id,
                    expected_next: seq,
                    records: records(id, seq, seq + 1),
                    sealed: (seq == 0).then(|| id.0.to_vec()),
                    summary: None,
                };
                let appended = store.append(request).await.expect("acknowledged");
                assert_eq!(appended.next_seq, seq + 1);
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    let stats = store.stats();
    assert_eq!(stats.appends, u64::from(TASKS) * APPENDS);
    assert!(stats.flushes <= stats.groups && stats.groups <= stats.appends, "{stats:?}");
    println!("{stats:?}");
    store.close().expect("close");
    drop(store);

    let reopened = open(dir.path(), Durability::Flush);
    assert_eq!(reopened.list_streams(None, 1000), Ok((0..TASKS).map(stream).collect()));
    for n in 0..TASKS {
        let id = stream(n);
        assert_stream(&reopened, id, APPENDS);
        assert_eq!(reopened.sealed_blocking(id), Ok(Some(id.0.to_vec())));
    }
}

#[test]
fn fsync_mode_keeps_records_including_large_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Over a quarter of sled's 512 KiB segment: stored as a separate blob
    // file, which Fsync mode syncs itself.
    let large: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    {
        let store = open(dir.path(), Durability::Fsync);
        let pending: Vec<_> = (0..8)
            .map(|n| {
                let id = stream(n);
                store.append(AppendRequest::create(id, records(id, 0, 3), Some(vec![7; 64])))
            })
            .collect();
        for p in pending {
            p.wait().expect("create");
        }
        let big = stream(100);
        store.append(AppendRequest::create(big, vec![large.clone()], Some(large.clone()))).wait().expect("large record");
        let stats = store.stats();
        assert_eq!(stats.appends, 9);
        assert!(stats.flushes >= 1);
        store.close().expect("close");
    }
    // Switching modes across a reopen is fine: the files are the same.
    let store = open(dir.path(), Durability::Flush);
    for n in 0..8 {
        assert_stream(&store, stream(n), 3);
    }
    let big = store.read_blocking(stream(100), 0, None).expect("read");
    assert_eq!(big.len(), 1);
    assert!(big[0].bytes == large, "large record intact");
    assert_eq!(store.sealed_blocking(stream(100)), Ok(Some(large)));
}

#[test]
fn opening_a_directory_in_use_or_a_file_fails_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    // sled's file lock: a second open (here or in another process) is refused.
    let second = SledStore::open(dir.path(), SledOptions::default());
    assert!(matches!(second, Err(StoreError::Backend(_))), "{second:?}");
    drop(store);

    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").expect("write");
    let on_file = SledStore::open(&file, SledOptions::default());
    assert!(matches!(on_file, Err(StoreError::Backend(_))), "{on_file:?}");
}

#[cfg(unix)]
#[test]
fn the_data_directory_is_owner_only_new_or_old() {
    use std::os::unix::fs::PermissionsExt;
    let shared = |dir: &std::path::Path| -> Vec<String> {
        let mut out = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(path) = pending.pop() {
            let meta = std::fs::metadata(&path).unwrap();
            if meta.is_dir() {
                pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            }
            if meta.permissions().mode() & 0o077 != 0 {
                out.push(format!("{} {:o}", path.display(), meta.permissions().mode() & 0o777));
            }
        }
        out
    };
    let parent = tempfile::tempdir().expect("tempdir");
    let fresh = parent.path().join("a").join("data");
    let store = SledStore::open(&fresh, SledOptions::default()).expect("open");
    assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(shared(&fresh), Vec::<String>::new());
    store.close().expect("close");
    // A directory left readable by an older version, with a stray file.
    std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(fresh.join("notes.txt"), "x").unwrap();
    std::fs::set_permissions(fresh.join("notes.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = SledStore::open(&fresh, SledOptions::default()).expect("reopen");
    assert_eq!(shared(&fresh), Vec::<String>::new());
    store.close().expect("close");
}

/// Writes a database as a build from before the feed did: records and
/// sealed data by stream, no feed. `streams` gives each stream's length.
fn write_old_layout(dir: &Path, streams: &[(u32, u64)]) {
    let db = sled::open(dir).expect("open raw sled");
    let records = db.open_tree("records").expect("records tree");
    let sealed = db.open_tree("sealed").expect("sealed tree");
    for (n, len) in streams {
        let id = stream(*n);
        for seq in 0..*len {
            records.insert(ludo_storage::RecordKey::new(id, seq).to_bytes(), record(id, seq)).expect("insert");
        }
        sealed.insert(id.0, vec![*n as u8]).expect("sealed");
    }
    db.flush().expect("flush");
}

#[test]
fn a_database_from_before_the_feed_gets_positions_once_on_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Written out of id order: positions follow stream id then seq.
    write_old_layout(dir.path(), &[(7, 2), (3, 3), (5, 1)]);
    let expected: Vec<(StreamId, u64)> =
        [(3, 3), (5, 1), (7, 2)].iter().flat_map(|(n, len)| (0..*len).map(move |seq| (stream(*n), seq))).collect();
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.feed_head(), Ok(6));
    let feed = store.read_feed_blocking(0, 100).expect("feed");
    assert_eq!(feed.iter().map(|e| (e.stream, e.seq)).collect::<Vec<_>>(), expected);
    assert_eq!(feed.iter().map(|e| e.position).collect::<Vec<_>>(), (1..=6).collect::<Vec<_>>());
    assert!(feed.iter().all(|e| e.bytes == record(e.stream, e.seq)));
    assert_stream(&store, stream(3), 3);
    assert_eq!(store.sealed_blocking(stream(7)), Ok(Some(vec![7])));
    // New appends continue the feed.
    let id = stream(5);
    let appended = store.append(AppendRequest::at(id, 1, records(id, 1, 3))).wait().expect("append");
    assert_eq!(appended.first_position, 7);
    drop(store);
    // Reopening neither numbers again nor loses anything.
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.feed_head(), Ok(8));
    let again = store.read_feed_blocking(0, 100).expect("feed");
    assert_eq!(&again[..6], &feed[..]);
    assert_eq!((again[6].stream, again[6].seq, again[7].seq), (id, 1, 2));
}

#[test]
fn an_empty_or_new_database_starts_its_feed_at_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.feed_head(), Ok(0));
    let id = stream(1);
    assert_eq!(store.append(AppendRequest::create(id, records(id, 0, 2), None)).wait().expect("create").first_position, 1);
    drop(store);
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.feed_head(), Ok(2));
    assert_eq!(store.append(AppendRequest::at(id, 2, records(id, 2, 3))).wait().expect("append").first_position, 3);
}
