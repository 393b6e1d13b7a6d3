//! Memory per live game: the heap a just-created game takes in the service's
//! cache and the store, per game kind.
//!
//! Run with `cargo bench -p ludo --bench memory` (release build). The load
//! figures (durable moves over REST and gRPC, CPU per move, reads) come from
//! the external driver instead: `ludo-bench` (`services/bench`), which drives
//! the real binary in its own process.

use std::sync::Arc;

use ludo_game::{GameService, SystemClock};
use ludo_storage::{EventStore, SledOptions, SledStore};

/// Counts the heap bytes in use, so memory per game is measured exactly
/// rather than read off the resident size (which the allocator's reuse of
/// freed pages blurs).
struct CountingAllocator;

static HEAP_IN_USE: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// wrapper only adds to or subtracts from a counter.
#[allow(unsafe_code, reason = "a global allocator is unsafe to implement; this one only forwards to the system's")]
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let ptr = unsafe { std::alloc::System.alloc(layout) };
        if !ptr.is_null() {
            HEAP_IN_USE.fetch_add(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.dealloc(ptr, layout) };
        HEAP_IN_USE.fetch_sub(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let new = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            HEAP_IN_USE.fetch_add(new_size as isize - layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn heap() -> isize {
    HEAP_IN_USE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Heap bytes per live game of `kind`: create `count` games through the
/// service (held in its cache; the store holds their first record) and
/// divide the growth of the heap in use.
async fn memory_per_game(kind: &str, players: usize, count: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path(), SledOptions::default()).unwrap());
    let service = GameService::new(store, Arc::new(SystemClock));
    let names: Vec<ludo_game::api::Player> = (0..players).map(|i| ludo_game::api::Player::named(format!("P{i}"))).collect();
    let create = || ludo_game::api::CreateGame::new(kind, names.iter().cloned());
    service.create(create()).await.unwrap(); // warm up the store
    let before = heap();
    for _ in 0..count {
        service.create(create()).await.unwrap();
    }
    let after = heap();
    service.shutdown().await.unwrap();
    (after - before) as f64 / count as f64
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        for (kind, players) in [("cardinal", 4), ("kardinal", 5), ("battle13", 4)] {
            let bytes = memory_per_game(kind, players, 2000).await;
            println!("heap per live {kind} game ({players} seats, just created; service cache and store): {:.1} KiB", bytes / 1024.0);
        }
    });
}
