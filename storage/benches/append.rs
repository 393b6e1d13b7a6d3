//! Durable appends of 200-byte records, in records per second: one writer
//! waiting on each append (every flush alone) against 64 concurrent writers
//! sharing flushes, for sled in both durability modes, with the in-memory
//! store as the baseline, and sled alone (insert + flush on the calling
//! thread) for context. All in one run, so the ratios are meaningful.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ludo_storage::{AppendRequest, Durability, EventStore, MemoryStore, SledOptions, SledStore, StreamId};

const RECORD_LEN: usize = 200;
const WRITERS: u64 = 64;

/// A store with one stream per writer, remembering each stream's next seq
/// across criterion's samples.
struct Fixture {
    store: Arc<dyn EventStore>,
    next: Mutex<Vec<u64>>,
    _dir: Option<tempfile::TempDir>,
}

fn stream(writer: u64) -> StreamId {
    let mut id = [0xbe; 16];
    id[8..].copy_from_slice(&writer.to_be_bytes());
    StreamId(id)
}

fn request(writer: u64, seq: u64) -> AppendRequest {
    AppendRequest::at(stream(writer), seq, vec![vec![(seq % 251) as u8; RECORD_LEN]])
}

impl Fixture {
    fn new(store: Arc<dyn EventStore>, dir: Option<tempfile::TempDir>) -> Self {
        for writer in 0..WRITERS {
            store.append(AppendRequest::create(stream(writer), vec![vec![0; RECORD_LEN]], None)).wait().expect("create");
        }
        Fixture { store, next: Mutex::new(vec![1; WRITERS as usize]), _dir: dir }
    }

    fn memory() -> Self {
        Fixture::new(Arc::new(MemoryStore::new()), None)
    }

    fn sled(durability: Durability) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SledStore::open(dir.path(), SledOptions { durability }).expect("open");
        Fixture::new(Arc::new(store), Some(dir))
    }

    /// `iters` appends by one writer, each awaited before the next.
    fn one_writer(&self, iters: u64) -> Duration {
        let mut next = self.next.lock().expect("lock");
        let start = Instant::now();
        for _ in 0..iters {
            self.store.append(request(0, next[0])).wait().expect("append");
            next[0] += 1;
        }
        start.elapsed()
    }

    /// `iters` appends spread over 64 async writers, each awaiting its own.
    fn many_writers(&self, runtime: &tokio::runtime::Runtime, iters: u64) -> Duration {
        let mut next = self.next.lock().expect("lock");
        let start = Instant::now();
        let ends = runtime.block_on(async {
            let tasks: Vec<_> = (0..WRITERS)
                .map(|writer| {
                    let store = Arc::clone(&self.store);
                    let count = iters / WRITERS + u64::from(writer < iters % WRITERS);
                    let first = next[writer as usize];
                    tokio::spawn(async move {
                        for seq in first..first + count {
                            store.append(request(writer, seq)).await.expect("append");
                        }
                        first + count
                    })
                })
                .collect();
            let mut ends = Vec::with_capacity(tasks.len());
            for task in tasks {
                ends.push(task.await.expect("writer"));
            }
            ends
        });
        let elapsed = start.elapsed();
        *next = ends;
        elapsed
    }
}

fn append(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("runtime");
    let mut group = c.benchmark_group("append_200B");
    group
        .throughput(Throughput::Elements(1))
        .sample_size(10)
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(3));
    type Make = fn() -> Fixture;
    let backends: [(&str, Make); 3] = [
        ("memory", Fixture::memory),
        ("sled_flush", || Fixture::sled(Durability::Flush)),
        ("sled_fsync", || Fixture::sled(Durability::Fsync)),
    ];
    // Context: sled alone, insert + flush on the calling thread, no store.
    group.bench_function("sled_raw_insert_flush/1_writer", |b| {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = sled::open(dir.path()).expect("open");
        let mut seq = 0_u64;
        b.iter(|| {
            seq += 1;
            db.insert(seq.to_be_bytes(), vec![(seq % 251) as u8; RECORD_LEN]).expect("insert");
            db.flush().expect("flush");
        });
    });
    for (name, make) in backends {
        let fixture = make();
        group.bench_function(format!("{name}/1_writer"), |b| {
            b.iter_custom(|iters| fixture.one_writer(iters));
        });
        group.bench_function(format!("{name}/{WRITERS}_writers"), |b| {
            b.iter_custom(|iters| fixture.many_writers(&runtime, iters));
        });
        let stats = fixture.store.stats();
        if stats.flushes > 0 {
            println!(
                "{name}: {} appends in {} flushes ({:.1} appends per flush)",
                stats.appends,
                stats.flushes,
                stats.appends as f64 / stats.flushes as f64
            );
        }
        fixture.store.close().expect("close");
    }
    group.finish();
}

criterion_group!(benches, append);
criterion_main!(benches);
