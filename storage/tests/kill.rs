//! Kill safety: a process appending to a store (sled, or a PostgreSQL
//! database) and advancing a projection is killed with SIGKILL mid-stream;
//! after reopening, every acknowledged record is present and intact, no
//! partial append is visible, the feed holds every record exactly once at
//! dense positions, and the projection resumes with no record skipped and
//! none applied twice.
//!
//! The appending process is this test binary itself, re-run with an
//! environment variable that turns `child_appender` from a no-op into the
//! appender.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::postgres::Cluster;
use common::{record, stream};
use ludo_storage::{
    AppendRequest, Durability, EventStore, PgOptions, PgStore, ProjectionCommit, SledOptions, SledStore, StoreError, StreamId,
};

const DIR_VAR: &str = "LUDO_STORAGE_KILL_TEST_DIR";
const PG_VAR: &str = "LUDO_STORAGE_KILL_TEST_PG";
const STREAMS: u32 = 4;
/// The child stops on its own after this long, should the parent vanish.
const CHILD_LIFETIME: Duration = Duration::from_secs(30);
/// The projection the child advances: it counts records, in all and by
/// stream, so a record applied twice or skipped shows in its counts.
const PROJECTION: &str = "counts";
const TOTAL: &[u8] = b"total";

/// Size of the append starting at `seq`: batches of 1 to 3 records, so an
/// append cut in half would show as a stream ending off a batch boundary.
fn batch_len(seq: u64) -> u64 {
    1 + seq % 3
}

fn sealed_of(n: u32) -> Vec<u8> {
    format!("sealed-{n}").into_bytes()
}

/// The store the child is told to use.
fn child_store() -> Option<Box<dyn EventStore>> {
    if let Some(dir) = std::env::var_os(DIR_VAR) {
        return Some(Box::new(SledStore::open(Path::new(&dir), SledOptions::default()).expect("child: open sled")));
    }
    let url = std::env::var(PG_VAR).ok()?;
    Some(Box::new(PgStore::connect(&url, &PgOptions { pool_size: 8, ..PgOptions::default() }).expect("child: connect")))
}

fn count_of(value: Option<Vec<u8>>) -> u64 {
    value.map_or(0, |bytes| u64::from_be_bytes(bytes.try_into().expect("a count")))
}

/// One step of the projection: the next page of the feed after its
/// checkpoint, counted and committed with the checkpoint moved (a
/// compare-and-set). Answers how many records it applied.
fn project(store: &dyn EventStore, runtime: &tokio::runtime::Runtime, page: usize) -> Result<usize, StoreError> {
    let checkpoint = store.projection_load_blocking(PROJECTION)?;
    let entries = store.read_feed_blocking(checkpoint.unwrap_or(0), page)?;
    let Some(last) = entries.last().map(|e| e.position) else { return Ok(0) };
    let mut counts: HashMap<Vec<u8>, u64> = HashMap::new();
    for key in entries.iter().map(|e| e.stream.0.to_vec()).chain([TOTAL.to_vec()]) {
        if let std::collections::hash_map::Entry::Vacant(slot) = counts.entry(key) {
            let stored = count_of(runtime.block_on(store.projection_get(PROJECTION, slot.key()))?);
            slot.insert(stored);
        }
    }
    for entry in &entries {
        *counts.get_mut(entry.stream.0.as_slice()).expect("read above") += 1;
        *counts.get_mut(TOTAL).expect("read above") += 1;
    }
    let puts = counts.into_iter().map(|(key, count)| (key, Some(count.to_be_bytes().to_vec()))).collect();
    store.projection_commit_blocking(ProjectionCommit { name: PROJECTION.into(), expected: checkpoint, checkpoint: last, puts })?;
    Ok(entries.len())
}

/// Not a test on its own: the appender run by the kill tests below.
#[test]
fn child_appender() {
    let Some(store) = child_store() else {
        return;
    };
    let store = &*store;
    let started = Instant::now();
    std::thread::scope(|scope| {
        for n in 0..STREAMS {
            scope.spawn(move || {
                let id = stream(n);
                let mut next = store.next_seq(id).expect("child: next seq");
                while started.elapsed() < CHILD_LIFETIME {
                    let len = batch_len(next);
                    let request = AppendRequest {
                        stream: id,
                        expected_next: next,
                        records: (next..next + len).map(|seq| record(id, seq)).collect(),
                        sealed: (next == 0).then(|| sealed_of(n)),
                        summary: Some(summary_of(n, next + len)),
                    };
                    next = store.append(request).wait().expect("child: append").next_seq;
                    // Printed only once durable: the parent's list of
                    // acknowledged appends.
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {n} {next}").expect("child: stdout");
                    out.flush().expect("child: stdout");
                }
            });
        }
        // The projection, under its lease (a killed child's lease on
        // PostgreSQL goes when the database notices its connection is gone).
        scope.spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("child: runtime");
            let _lease = loop {
                if let Some(lease) = runtime.block_on(store.projection_lease(PROJECTION)).expect("child: lease") {
                    break lease;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            while started.elapsed() < CHILD_LIFETIME {
                if project(store, &runtime, 16).expect("child: project") == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
    });
}

/// The summary written with the append that makes stream `n` `next` long.
fn summary_of(n: u32, next: u64) -> Vec<u8> {
    format!("stream {n} at {next}").into_bytes()
}

/// Notes one "ack <stream> <next>" line.
fn record_ack(line: &str, acked: &mut HashMap<u32, u64>) {
    let mut words = line.split(' ').skip(1);
    let n: u32 = words.next().and_then(|w| w.parse().ok()).expect("stream");
    let next: u64 = words.next().and_then(|w| w.parse().ok()).expect("next");
    let slot = acked.entry(n).or_insert(0);
    *slot = (*slot).max(next);
}

/// Runs the child (its store named by `var` = `value`) until it has
/// acknowledged `acks` appends, kills it, and returns the highest
/// acknowledged next seq of each stream.
fn run_and_kill(var: &str, value: &str, acks: usize) -> HashMap<u32, u64> {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["child_appender", "--exact", "--nocapture", "--test-threads=1"])
        .env(var, value)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut acked = HashMap::new();
    let mut seen = 0;
    for line in lines.by_ref() {
        let line = line.expect("read child");
        if line.starts_with("ack ") {
            record_ack(&line, &mut acked);
            seen += 1;
            if seen >= acks {
                break;
            }
        }
    }
    // std's `kill` is SIGKILL on Unix: no destructor, no flush, no goodbye.
    child.kill().expect("kill child");
    let status = child.wait().expect("reap child");
    assert!(!status.success(), "the child was killed, not finished: {status:?}");
    // Acknowledgements printed before the kill, still in the pipe.
    for line in lines {
        let Ok(line) = line else { break };
        if line.starts_with("ack ") {
            record_ack(&line, &mut acked);
        }
    }
    assert!(seen >= acks, "the child stopped early");
    acked
}

/// Everything the kill must not have broken, on the reopened `store`.
fn check_after_kill(store: &dyn EventStore, round: u32, acked_total: &HashMap<u32, u64>) {
    let mut lengths = HashMap::new();
    for n in 0..STREAMS {
        let id = stream(n);
        let acked = acked_total.get(&n).copied().unwrap_or(0);
        let next = store.next_seq(id).expect("next seq");
        assert!(next >= acked, "round {round}: stream {n} lost acknowledged records: {next} < {acked}");
        // Everything present is intact and contiguous …
        let stored = store.read_blocking(id, 0, None).expect("read");
        assert_eq!(stored.len() as u64, next);
        for (seq, r) in (0..).zip(&stored) {
            assert_eq!(r.seq, seq);
            assert!(r.bytes == record(id, seq), "round {round}: record {seq} of stream {n} damaged");
        }
        // … and ends on an append's boundary: no half-applied batch.
        let mut boundary = 0;
        while boundary < next {
            boundary += batch_len(boundary);
        }
        assert_eq!(boundary, next, "round {round}: stream {n} ends inside an append");
        if next > 0 {
            assert_eq!(store.sealed_blocking(id), Ok(Some(sealed_of(n))));
        }
        lengths.insert(id, next);
    }
    // A summary, when there is one, describes the stream as it is: never
    // an earlier or a later length.
    for listed in store.list_summaries_blocking(None, STREAMS as usize).expect("summaries") {
        if let Some(summary) = &listed.summary {
            let n = (0..STREAMS).find(|&n| stream(n) == listed.stream).expect("a stream of the test");
            assert_eq!(summary, &summary_of(n, listed.next_seq), "round {round}: stream {n}'s summary is stale");
        }
    }

    // The feed: positions 1..=head, each (stream, seq) once, every record
    // of every stream (so every acknowledged one), each stream in seq order.
    let head = store.feed_head().expect("head");
    let mut feed = Vec::new();
    loop {
        let page = store.read_feed_blocking(feed.len() as u64, 500).expect("feed");
        if page.is_empty() {
            break;
        }
        feed.extend(page);
    }
    assert_eq!(feed.len() as u64, head, "round {round}: the feed holds its head's number of records");
    let mut next_in_feed: HashMap<StreamId, u64> = HashMap::new();
    for (position, entry) in (1..).zip(&feed) {
        assert_eq!(entry.position, position, "round {round}: a gap or a repeat in the feed");
        let next = next_in_feed.entry(entry.stream).or_default();
        assert_eq!(entry.seq, *next, "round {round}: {} out of order or twice in the feed", entry.stream);
        *next += 1;
        assert!(entry.bytes == record(entry.stream, entry.seq), "round {round}: feed entry {position} damaged");
    }
    assert_eq!(next_in_feed, lengths.into_iter().filter(|(_, len)| *len > 0).collect(), "round {round}: the feed is the streams");

    // The projection's counts are exactly the feed up to its checkpoint.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let counted = |store: &dyn EventStore| -> (u64, u64, HashMap<StreamId, u64>) {
        let checkpoint = store.projection_load_blocking(PROJECTION).expect("load").unwrap_or(0);
        let total = count_of(runtime.block_on(store.projection_get(PROJECTION, TOTAL)).expect("get"));
        let by_stream = (0..STREAMS)
            .map(|n| (stream(n), count_of(runtime.block_on(store.projection_get(PROJECTION, &stream(n).0)).expect("get"))))
            .filter(|(_, count)| *count > 0)
            .collect();
        (checkpoint, total, by_stream)
    };
    let in_feed_up_to = |checkpoint: u64| -> HashMap<StreamId, u64> {
        let mut counts = HashMap::new();
        for entry in feed.iter().take_while(|e| e.position <= checkpoint) {
            *counts.entry(entry.stream).or_insert(0) += 1;
        }
        counts
    };
    let (at_kill, total, by_stream) = counted(store);
    let checkpoint = at_kill;
    assert!(checkpoint <= head);
    assert_eq!(total, checkpoint, "round {round}: the projection applied a record twice or skipped one");
    assert_eq!(by_stream, in_feed_up_to(checkpoint), "round {round}: the projection's counts by stream");
    // It resumes from its checkpoint to the head, and is still exact.
    let _lease = loop {
        if let Some(lease) = runtime.block_on(store.projection_lease(PROJECTION)).expect("lease") {
            break lease;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    while project(store, &runtime, 64).expect("project") > 0 {}
    let (checkpoint, total, by_stream) = counted(store);
    assert_eq!((checkpoint, total), (head, head), "round {round}: the resumed projection");
    assert_eq!(by_stream, in_feed_up_to(head));
    println!("round {round}: acknowledged {acked_total:?}, feed head {head}, projection found at {at_kill}, resumed to {checkpoint}");
}

/// Three rounds of run, kill, check: a different number of
/// acknowledgements each round, so the kill lands at different points.
fn rounds(var: &str, value: &str, mut reopen: impl FnMut() -> Box<dyn EventStore>) {
    let mut acked_total: HashMap<u32, u64> = HashMap::new();
    for round in 0..3 {
        let acked = run_and_kill(var, value, 100 + 53 * round as usize);
        for (n, next) in acked {
            let slot = acked_total.entry(n).or_insert(0);
            *slot = (*slot).max(next);
        }
        let store = reopen();
        check_after_kill(&*store, round, &acked_total);
        store.close().expect("close");
    }
}

#[test]
fn acknowledged_records_survive_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_str().expect("a UTF-8 temp path").to_string();
    rounds(DIR_VAR, &path, || {
        Box::new(SledStore::open(dir.path(), SledOptions { durability: Durability::Flush }).expect("reopen after kill"))
    });
}

/// Client connections to the test's database other than the asking one.
const WAITING: &str =
    "SELECT count(*) FROM pg_stat_activity WHERE datname = 'kill' AND backend_type = 'client backend' AND pid <> pg_backend_pid()";

#[test]
fn acknowledged_records_survive_sigkill_on_postgres() {
    let Some(cluster) = Cluster::shared() else { return };
    let url = cluster.new_database("kill");
    rounds(PG_VAR, &url, || {
        // The killed child's connections end once the database notices:
        // wait, so that nothing of it commits behind the checks.
        let deadline = Instant::now() + Duration::from_secs(20);
        while cluster.psql("kill", WAITING).trim() != "0" {
            assert!(Instant::now() < deadline, "the killed child's connections linger");
            std::thread::sleep(Duration::from_millis(50));
        }
        Box::new(PgStore::connect(&url, &PgOptions { pool_size: 4, ..PgOptions::default() }).expect("connect after kill"))
    });
}
