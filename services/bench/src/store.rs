//! The baseline: the sled store's own durable append rate, in this process,
//! with no server in the way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ludo_storage::{AppendRequest, EventStore, SledOptions, SledStore, StreamId};

use crate::server::machine_busy;

/// About the size of one Cardinal move's record.
const RECORD_BYTES: usize = 300;

/// What the raw store did in one timed phase.
pub struct RawRun {
    pub appends_per_s: f64,
    /// The whole machine's CPU per append (the store runs in the bench's
    /// process, so that is the store's own cost, and the kernel's).
    pub machine_cpu_us_per_append: f64,
}

/// Durable appends per second with `writers` concurrent appenders, each on
/// its own stream and waiting for each append to be flushed before the next,
/// as the service does for a move (the store's default durability: flush).
///
/// # Errors
/// When the store cannot be opened or refuses an append.
pub async fn durable_appends(writers: usize, seconds: Duration) -> Result<RawRun, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a store directory: {e}"))?;
    let store = SledStore::open(dir.path(), SledOptions::default()).map_err(|e| format!("cannot open the raw store: {e}"))?;
    let store: Arc<dyn EventStore> = Arc::new(store);
    let machine_before = machine_busy()?;
    let started = Instant::now();
    let deadline = started + seconds;
    let mut tasks = Vec::with_capacity(writers);
    for writer in 0..writers {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut stream = [0u8; 16];
            stream[..8].copy_from_slice(&(writer as u64).to_be_bytes());
            let mut next = 0u64;
            while Instant::now() < deadline {
                let request = AppendRequest::at(StreamId(stream), next, vec![vec![b'x'; RECORD_BYTES]]);
                store.append(request).await.map_err(|e| format!("the raw store refused an append: {e}"))?;
                next += 1;
            }
            Ok::<u64, String>(next)
        }));
    }
    let mut appends = 0;
    for task in tasks {
        appends += task.await.map_err(|e| format!("a raw store writer failed: {e}"))??;
    }
    let elapsed = started.elapsed();
    let machine = machine_busy()?.saturating_sub(machine_before);
    store.close().map_err(|e| format!("cannot close the raw store: {e}"))?;
    Ok(RawRun {
        appends_per_s: appends as f64 / elapsed.as_secs_f64(),
        machine_cpu_us_per_append: machine.as_secs_f64() * 1e6 / appends as f64,
    })
}
