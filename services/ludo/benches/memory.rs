//! Server load benchmark: durable moves per second and latency over REST and
//! over gRPC on loopback with many concurrent games, beside the raw sled
//! append+flush rate measured in the same run (the machine's limit), and the
//! memory a live game takes.
//!
//! Run with `cargo bench -p ludo --bench load` (release build). Figures are
//! printed as ratios to the raw store rate of the same run, since machines
//! are noisy. `LOAD_CLIENTS` (default 64) and `LOAD_SECONDS` (default 8)
//! tune it.
//!
//! Each client plays its own Cardinal games. A Cardinal game with a fixed
//! first seat does not depend on its seed, so each client computes its game's
//! moves up front with the engine and then only submits them: the timed path
//! is exactly "submit a move and wait until it is durable".

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ludo_game::{GameService, SystemClock};
use ludo_storage::{AppendRequest, EventStore, SledOptions, SledStore, StreamId};
use serde_json::{Value, json};

struct Figures {
    moves: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Figures {
    fn rate(&self) -> f64 {
        self.moves as f64 / self.elapsed.as_secs_f64()
    }

    fn percentile(&mut self, p: f64) -> Duration {
        self.latencies.sort_unstable();
        self.latencies[((self.latencies.len() as f64 - 1.0) * p).round() as usize]
    }
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Raw sled rate: `writers` concurrent appenders of 300-byte records, each
/// waiting for its append to be durable, as the service does.
async fn raw_store(writers: usize, seconds: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path(), SledOptions::default()).unwrap());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut stream = [0u8; 16];
            stream[..8].copy_from_slice(&(w as u64).to_be_bytes());
            let mut next = 0;
            while Instant::now() < deadline {
                let request = AppendRequest::at(StreamId(stream), next, vec![vec![b'x'; 300]]);
                store.append(request).await.expect("append");
                next += 1;
            }
            next as usize
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    store.close().unwrap();
    total as f64 / seconds as f64
}

async fn start_server() -> (String, Arc<GameService>, tempfile::TempDir, tokio::sync::oneshot::Sender<()>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path(), SledOptions::default()).unwrap());
    let service = Arc::new(GameService::new(store, Arc::new(SystemClock)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // Every load client comes from 127.0.0.1: the per-address rate limits
    // would measure the limiter, not the server. Everything else is default.
    let config = ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() };
    tokio::spawn(ludo_server::run_with(listener, Arc::clone(&service), config, async move {
        let _ = stopped.await;
    }));
    (base, service, dir, stop)
}

async fn rest_load(base: &str, clients: usize, seconds: u64) -> Figures {
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (http, base) = (http.clone(), base.to_string());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut game_no = 0u64;
            'games: while Instant::now() < deadline {
                let created: Value = http
                    .post(format!("{base}/v1/games"))
                    .json(&json!({"kind": "cardinal", "players": ["A", "B", "C", "D"], "options": {"first_seat": 0}}))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let id = created["id"].as_str().unwrap();
                for (seat, mv) in support::playout(4, (c as u64) << 20 | game_no) {
                    if Instant::now() >= deadline {
                        break 'games;
                    }
                    let token = created["seats"][seat]["token"].as_str().unwrap();
                    let sent = Instant::now();
                    let answer = http
                        .post(format!("{base}/v1/games/{id}/moves"))
                        .bearer_auth(token)
                        .json(&json!({"move": mv}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(answer.status(), 200, "a computed legal move was refused");
                    answer.bytes().await.unwrap();
                    latencies.push(sent.elapsed());
                }
                game_no += 1;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    Figures { moves: latencies.len(), elapsed: started.elapsed(), latencies }
}

async fn grpc_load(base: &str, clients: usize, seconds: u64) -> Figures {
    use ludo_proto::v1 as pb;
    // One HTTP/2 connection is served by one task: spread the clients over
    // several, as a real client pool would.
    let mut channels = Vec::new();
    for _ in 0..clients.div_ceil(8) {
        channels.push(tonic::transport::Channel::from_shared(base.to_string()).unwrap().connect().await.unwrap());
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let mut client = pb::ludo_client::LudoClient::new(channels[c % channels.len()].clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut game_no = 0u64;
            'games: while Instant::now() < deadline {
                let options =
                    pb::Options { game: Some(pb::options::Game::Cardinal(ludo_proto::cardinal::Options { first_seat: Some(0) })) };
                let players = ["A", "B", "C", "D"].map(String::from).to_vec();
                let created = client
                    .create_game(pb::CreateGameRequest { kind: "cardinal".into(), players, options: Some(options) })
                    .await
                    .unwrap()
                    .into_inner();
                for (seat, mv) in support::playout(4, (c as u64) << 20 | game_no | 1 << 40) {
                    if Instant::now() >= deadline {
                        break 'games;
                    }
                    let mv: ludo_cardinal::Move = serde_json::from_value(mv).unwrap();
                    let message = pb::Move { game: Some(pb::r#move::Game::Cardinal(to_proto(&mv))) };
                    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
                        id: created.id.clone(),
                        r#move: Some(message),
                        expected_version: None,
                        request_id: None,
                    });
                    request.metadata_mut().insert("authorization", format!("Bearer {}", created.seats[seat].token).parse().unwrap());
                    let sent = Instant::now();
                    client.submit_move(request).await.expect("a computed legal move is accepted");
                    latencies.push(sent.elapsed());
                }
                game_no += 1;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    Figures { moves: latencies.len(), elapsed: started.elapsed(), latencies }
}

fn to_proto(mv: &ludo_cardinal::Move) -> ludo_proto::cardinal::Move {
    use ludo_proto::cardinal as pb;
    let kind = match *mv {
        ludo_cardinal::Move::Build { shape, colour, x, y, orientation, bonus_colour } => pb::r#move::Kind::Build(pb::Build {
            shape: match shape {
                ludo_cardinal::Shape::House => pb::Shape::House,
                ludo_cardinal::Shape::Tower => pb::Shape::Tower,
                ludo_cardinal::Shape::Square => pb::Shape::Square,
            }
            .into(),
            colour: u32::from(colour.0),
            x,
            y,
            orientation: orientation.map(|o| match o {
                ludo_cardinal::Orientation::Horizontal => pb::Orientation::Horizontal.into(),
                ludo_cardinal::Orientation::Vertical => pb::Orientation::Vertical.into(),
            }),
            bonus_colour: bonus_colour.map(|c| u32::from(c.0)),
        }),
        ludo_cardinal::Move::MoveCardinal { x, y } => pb::r#move::Kind::MoveCardinal(pb::MoveCardinal { x, y }),
        ludo_cardinal::Move::KeepCardinal => pb::r#move::Kind::KeepCardinal(pb::KeepCardinal {}),
    };
    pb::Move { kind: Some(kind) }
}

/// Counts the heap bytes in use, so memory per game is measured exactly
/// rather than read off the resident size (which the allocator's reuse of
/// freed pages blurs).
struct CountingAllocator;

static HEAP_IN_USE: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// wrapper only adds to or subtracts from a counter.
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
    let names: Vec<String> = (0..players).map(|i| format!("P{i}")).collect();
    let create = || ludo_game::api::CreateGame { kind: kind.into(), players: names.clone(), options: None };
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
    let clients = env("LOAD_CLIENTS", 64);
    let seconds = env("LOAD_SECONDS", 8) as u64;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        // Memory first, while nothing else runs and frees memory meanwhile.
        for (kind, players) in [("cardinal", 4), ("kardinal", 5), ("battle13", 4)] {
            let bytes = memory_per_game(kind, players, 2000).await;
            println!("heap per live {kind} game ({players} seats, just created; service cache and store): {:.1} KiB", bytes / 1024.0);
        }
        println!(
            "load benchmark: {clients} concurrent clients, {seconds} s per run, Cardinal games of 4 seats, sled with flush durability"
        );
        let raw = raw_store(clients, seconds).await;
        let raw_single = raw_store(1, seconds.min(4)).await;
        println!("raw store, {clients} writers (group commit): {raw:>9.0} durable appends/s  (the limit)");
        println!("raw store, 1 writer:                {raw_single:>9.0} durable appends/s  ({:.2}x the limit)", raw_single / raw);

        let (base, _service, _dir, stop) = start_server().await;
        for (name, mut figures) in [("REST", rest_load(&base, clients, seconds).await), ("gRPC", grpc_load(&base, clients, seconds).await)]
        {
            let rate = figures.rate();
            let (p50, p99) = (figures.percentile(0.50), figures.percentile(0.99));
            println!(
                "{name:<4} server: {rate:>9.0} durable moves/s ({:.2}x the raw store)  p50 {:>7.2} ms  p99 {:>7.2} ms  ({} moves)",
                rate / raw,
                p50.as_secs_f64() * 1000.0,
                p99.as_secs_f64() * 1000.0,
                figures.moves
            );
        }
        let _ = stop.send(());
    });
}
