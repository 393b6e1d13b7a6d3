//! Kill safety: a process appending to a sled store is killed with SIGKILL
//! mid-stream; after reopening, every acknowledged record is present and
//! intact, and no partial append is visible.
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

use common::{record, stream};
use ludo_storage::{AppendRequest, Durability, EventStore, SledOptions, SledStore};

const DIR_VAR: &str = "LUDO_STORAGE_KILL_TEST_DIR";
const STREAMS: u32 = 4;
/// The child stops on its own after this long, should the parent vanish.
const CHILD_LIFETIME: Duration = Duration::from_secs(30);

/// Size of the append starting at `seq`: batches of 1 to 3 records, so an
/// append cut in half would show as a stream ending off a batch boundary.
fn batch_len(seq: u64) -> u64 {
    1 + seq % 3
}

fn sealed_of(n: u32) -> Vec<u8> {
    format!("sealed-{n}").into_bytes()
}

/// Not a test on its own: the appender run by `acknowledged_records_survive_sigkill`.
#[test]
fn child_appender() {
    let Some(dir) = std::env::var_os(DIR_VAR) else {
        return;
    };
    let store = SledStore::open(Path::new(&dir), SledOptions::default()).expect("child: open");
    let started = Instant::now();
    std::thread::scope(|scope| {
        for n in 0..STREAMS {
            let store = &store;
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

/// Runs the child until it has acknowledged `acks` appends, kills it, and
/// returns the highest acknowledged next seq of each stream.
fn run_and_kill(dir: &Path, acks: usize) -> HashMap<u32, u64> {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["child_appender", "--exact", "--nocapture", "--test-threads=1"])
        .env(DIR_VAR, dir)
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

#[test]
fn acknowledged_records_survive_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut acked_total: HashMap<u32, u64> = HashMap::new();
    for round in 0..3 {
        // A different number of acknowledgements each round, so the kill lands
        // at different points of the stream.
        let acked = run_and_kill(dir.path(), 100 + 53 * round);
        for (n, next) in acked {
            let slot = acked_total.entry(n).or_insert(0);
            *slot = (*slot).max(next);
        }

        let store = SledStore::open(dir.path(), SledOptions { durability: Durability::Flush }).expect("reopen after kill");
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
        }
        // A summary, when there is one, describes the stream as it is: never
        // an earlier or a later length.
        for listed in store.list_summaries_blocking(None, STREAMS as usize).expect("summaries") {
            if let Some(summary) = &listed.summary {
                let n = (0..STREAMS).find(|&n| stream(n) == listed.stream).expect("a stream of the test");
                assert_eq!(summary, &summary_of(n, listed.next_seq), "round {round}: stream {n}'s summary is stale");
            }
        }
        store.close().expect("close");
        println!("round {round}: acknowledged {acked_total:?}");
    }
}
