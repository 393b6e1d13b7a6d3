//! The baseline: the sled store's own durable append rate, in this process,
//! with no server in the way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ludo_storage::{AppendRequest, EventStore, SledOptions, SledStore, StreamId};

/// About the size of one Cardinal move's record.
const RECORD_BYTES: usize = 300;

/// Durable appends per second with `writers` concurrent appenders, each on
/// its own stream and waiting for each append to be flushed before the next,
/// as the service does for a move (the store's default durability: flush).
///
/// # Errors
/// When the store cannot be opened or refuses an append.
pub async fn durable_appends(writers: usize, seconds: Duration) -> Result<f64, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a store directory: {e}"))?;
    let store = SledStore::open(dir.path(), SledOptions::default()).map_err(|e| format!("cannot open the raw store: {e}"))?;
    let store: Arc<dyn EventStore> = Arc::new(store);
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
    store.close().map_err(|e| format!("cannot close the raw store: {e}"))?;
    Ok(appends as f64 / elapsed.as_secs_f64())
}
