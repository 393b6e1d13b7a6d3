//! Soak benchmark against the real `ludo` binary, a separate process driven
//! over loopback: open and close 10,000 live streams on one idle game (A),
//! then hold 5,000 idle connections, and print `ludo_watchers`,
//! `ludo_connections`, the server's resident size (VmRSS) and the latency of
//! moves on another game (B) before, during and after each abuse, beside the
//! same figures with no abuse measured in the same run (machines are noisy:
//! the ratios are what matter). The two abuses run twice (`SOAK_ROUNDS`), so
//! that memory which is merely kept (a high-water mark) can be told from
//! memory which keeps growing.
//!
//! Run with `cargo bench -p ludo --bench soak` (release build). It asserts
//! nothing about speed; it exits with status 1, saying so, when a target is
//! missed on an "after" row: watchers back to 0, RSS within 10% of the
//! baseline, move latency (p50 and p99) within 1.5x of the baseline.
//! `SOAK_STREAMS` (default 10000), `SOAK_IDLE` (default 5000), `SOAK_MOVES`
//! (moves per latency window, default 400) and `SOAK_ROUNDS` (default 2) tune
//! it.
//!
//! The server runs with its per-address throttles off (everything comes from
//! 127.0.0.1) but every other limit at its default: a silent HTTP/1.1
//! connection, or one idle after an answer, is closed after the 10 s header
//! timeout. So the idle connections are measured while they are held, within
//! that time, and the benchmark then reports how long the server took to
//! close them. They are opened in steps paced by the server's accept queue
//! (its listen backlog is 4096, capped by `net.core.somaxconn`, which is 128
//! on older kernels: more connects at once than that get their
//! SYN dropped and wait a second to send it again); a last, informational
//! probe makes 1,000 connects at once to show what an unpaced crowd meets.
//!
//! Move latency is client-side: one REST move at a time on game B (Cardinal,
//! 4 seats, a fresh game when one ends), each move computed up front with the
//! engine so that the timed path is exactly "submit a move and wait until it
//! is durable", with a 5 ms pause between moves so that every window has the
//! same pace. The benchmark's own clients share the machine with the server.

#[path = "../tests/common/mod.rs"]
mod common;

use std::any::Any;
use std::net::SocketAddr;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Streams open at once during the churn (half SSE, half gRPC).
const CHURN_BATCH: usize = 250;
/// HTTP/2 connections the gRPC streams of the churn share (the server allows
/// 100 concurrent streams on each; a batch puts about 32 on each).
const GRPC_CHANNELS: usize = 4;
/// The pause after each timed move.
const MOVE_GAP: Duration = Duration::from_millis(5);
/// Idle connections opened per step (under the smallest listen queue a kernel allows it, 128).
const IDLE_STEP: usize = 100;
/// How long a stream or connection may take to open before it counts as failed.
const OPEN_LIMIT: Duration = Duration::from_secs(10);
/// How long the benchmark waits for the server to close the idle connections
/// (its idle timeout is 60 s) before closing the rest itself.
const IDLE_WAIT: Duration = Duration::from_secs(75);
/// How long `ludo_watchers` may take to return to 0 after the churn.
const SETTLE_LIMIT: Duration = Duration::from_secs(30);

const RSS_TARGET: f64 = 1.10;
const LATENCY_TARGET: f64 = 1.5;

const SERVER_FLAGS: &[&str] = &[
    "--rate-create",
    "off",
    "--rate-records",
    "off",
    "--rate-moves-per-ip",
    "off",
    "--rate-moves-per-seat",
    "off",
    "--max-connections-per-ip",
    "0",
    "--max-connections",
    "20000",
];

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Plays timed moves on game B, one at a time, starting a new game when one ends.
struct Mover {
    http: reqwest::Client,
    base: String,
    game: Value,
    moves: Vec<(usize, Value)>,
    next: usize,
    games: u64,
    /// Sends retried (with the same `request_id`) after a transport error.
    retries: usize,
    server_pid: u32,
}

/// An error and its sources, on one line.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

impl Mover {
    async fn new(base: &str, server_pid: u32) -> Mover {
        let mut mover = Mover {
            http: reqwest::Client::new(),
            base: base.to_string(),
            game: Value::Null,
            moves: Vec::new(),
            next: 0,
            games: 0,
            retries: 0,
            server_pid,
        };
        mover.new_game().await;
        mover
    }

    async fn new_game(&mut self) {
        let body = json!({"kind": "cardinal", "players": ["Ann", "Bob", "Cid", "Dee"], "options": {"first_seat": 0}});
        let answer = self.http.post(format!("{}/v1/games", self.base)).json(&body).send().await.expect("create game B");
        assert_eq!(answer.status(), 201, "creating game B");
        self.game = answer.json().await.unwrap();
        self.games += 1;
        self.moves = support::playout(4, self.games.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        self.next = 0;
    }

    /// The server process's state letter from /proc (R, S, Z for exited, ...).
    fn server_state(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/stat", self.server_pid))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next().map(|s| format!("process state {s}")))
            })
            .unwrap_or_else(|| "process gone".into())
    }

    /// Submits the next move and returns how long it took to be answered.
    async fn play(&mut self) -> Duration {
        if self.next == self.moves.len() {
            self.new_game().await;
        }
        let (seat, mv) = &self.moves[self.next];
        let id = self.game["id"].as_str().unwrap();
        let token = self.game["seats"][*seat]["token"].as_str().unwrap();
        let url = format!("{}/v1/games/{id}/moves", self.base);
        let body = json!({"move": mv, "request_id": format!("soak-{}-{}", self.games, self.next)});
        let sent = Instant::now();
        let mut attempts = 0;
        loop {
            match self.http.post(&url).bearer_auth(token).json(&body).send().await {
                Ok(answer) => {
                    let status = answer.status();
                    let text = answer.text().await.unwrap_or_default();
                    assert_eq!(status, 200, "a computed legal move was refused: {text}");
                    break;
                }
                Err(err) if attempts < 3 => {
                    attempts += 1;
                    self.retries += 1;
                    eprintln!(
                        "soak: move send failed ({}); server {}; retrying with the same request_id",
                        chain(&err),
                        self.server_state()
                    );
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(err) => panic!("move send failed {attempts} times: {}; server {}", chain(&err), self.server_state()),
            }
        }
        let elapsed = sent.elapsed();
        self.next += 1;
        elapsed
    }

    /// At least `min` timed moves, and on until `stop` is set when given.
    async fn window(&mut self, min: usize, stop: Option<&AtomicBool>) -> Vec<Duration> {
        let mut latencies = Vec::new();
        while latencies.len() < min || stop.is_some_and(|stop| !stop.load(Ordering::Acquire)) {
            latencies.push(self.play().await);
            tokio::time::sleep(MOVE_GAP).await;
        }
        latencies
    }
}

/// One reading of /metrics.
struct Scrape(String);

impl Scrape {
    /// The value of a sample (`name` exactly as printed, labels included); NaN if absent.
    fn get(&self, name: &str) -> f64 {
        self.0
            .lines()
            .find_map(|line| line.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(f64::NAN)
    }
}

async fn scrape(http: &reqwest::Client, base: &str) -> Scrape {
    let mut attempts = 0;
    loop {
        let result = async { http.get(format!("{base}/metrics")).send().await?.error_for_status()?.text().await }.await;
        match result {
            Ok(text) => return Scrape(text),
            Err(err) if attempts < 3 => {
                attempts += 1;
                eprintln!("soak: /metrics failed ({err}); retrying");
            }
            Err(err) => panic!("/metrics failed: {err}"),
        }
    }
}

/// (VmRSS, VmHWM) of a process, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The RSS of a process once it stops falling (the allocator gives memory
/// back over a second or so, idle blocking threads leave after 2 s), sampled
/// every 250 ms for at most 15 s.
async fn settled_rss_kib(pid: u32) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut samples = vec![rss_kib(pid).0];
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        samples.push(rss_kib(pid).0);
        // No new low over the last three seconds: settled.
        let recent = samples.len().saturating_sub(12);
        if recent > 0 && samples[recent..].iter().min() >= samples[..recent].iter().min() {
            break;
        }
    }
    *samples.last().expect("one sample at least")
}

/// The threads of a process.
fn threads(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    status.lines().find_map(|line| line.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

fn percentile(latencies: &[Duration], p: f64) -> Duration {
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// One line of the table.
struct Row {
    phase: String,
    watchers: f64,
    connections: f64,
    rss_kib: u64,
    /// On an "after" row: the RSS just before the abuse began, with the same
    /// data (no timed moves in between): what the RSS target compares with.
    rss_before_kib: Option<u64>,
    /// The server's threads (tokio workers, blocking threads, sled's).
    threads: u64,
    /// Bytes the server has allocated and not freed (`ludo_heap_allocated_bytes`):
    /// live memory, where RSS also counts what the allocator keeps.
    allocated: f64,
    latencies: Vec<Duration>,
    /// Mean server-side time to a durable move over the window (`ludo_move_seconds`).
    server_ms: f64,
    /// Cores kept busy by other processes on the machine during the window.
    other_cores: f64,
    note: String,
}

/// CPU time used so far: by the whole machine, the server, this process (clock ticks).
struct CpuMark {
    at: Instant,
    busy: u64,
    server: u64,
    me: u64,
}

fn process_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    rest.split_whitespace().skip(11).take(2).filter_map(|v| v.parse::<u64>().ok()).sum()
}

fn cpu_mark(pid: u32) -> CpuMark {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<u64> = stat.lines().next().unwrap_or_default().split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is within user)
    let busy = fields.iter().take(8).sum::<u64>() - fields.get(3).unwrap_or(&0) - fields.get(4).unwrap_or(&0);
    CpuMark { at: Instant::now(), busy, server: process_ticks(&pid.to_string()), me: process_ticks("self") }
}

/// Cores busy with neither the server nor the benchmark between two marks.
fn other_cores(before: &CpuMark, after: &CpuMark) -> f64 {
    let ticks = 100.0; // USER_HZ: what /proc counts in on Linux, whatever the kernel's own rate
    let others = (after.busy - before.busy) as f64 - (after.server - before.server) as f64 - (after.me - before.me) as f64;
    (others / ticks / (after.at - before.at).as_secs_f64()).max(0.0)
}

impl Row {
    fn p50(&self) -> Duration {
        percentile(&self.latencies, 0.50)
    }

    fn p99(&self) -> Duration {
        percentile(&self.latencies, 0.99)
    }
}

fn server_mean_ms(before: &Scrape, after: &Scrape) -> f64 {
    let sum = after.get("ludo_move_seconds_sum") - before.get("ludo_move_seconds_sum");
    let count = after.get("ludo_move_seconds_count") - before.get("ludo_move_seconds_count");
    sum / count * 1000.0
}

/// Shared by every phase.
struct Bench {
    base: String,
    addr: SocketAddr,
    pid: u32,
    /// For /metrics only (the mover has its own client).
    http: reqwest::Client,
    moves_per_window: usize,
}

impl Bench {
    /// The row after an abuse: the RSS once settled (the target compares it
    /// with `rss_before`, taken just before the abuse), then a window of moves.
    async fn after(&self, mover: &mut Mover, phase: &str, rss_before: u64, note: String) -> Row {
        let rss_after = settled_rss_kib(self.pid).await;
        let mut row = self.measure(mover, phase).await;
        row.rss_kib = rss_after;
        row.rss_before_kib = Some(rss_before);
        row.note = format!("{note}; RSS {:.1} MiB just before it", rss_before as f64 / 1024.0);
        row
    }

    /// A window of timed moves with nothing else going on, then the figures.
    async fn measure(&self, mover: &mut Mover, phase: &str) -> Row {
        // The RSS before this window's moves add records (and memory) of their own.
        let rss = rss_kib(self.pid).0;
        let before = scrape(&self.http, &self.base).await;
        let allocated = before.get("ludo_heap_allocated_bytes");
        let cpu = cpu_mark(self.pid);
        let latencies = mover.window(self.moves_per_window, None).await;
        let other_cores = other_cores(&cpu, &cpu_mark(self.pid));
        let after = scrape(&self.http, &self.base).await;
        Row {
            other_cores,
            phase: phase.to_string(),
            watchers: after.get("ludo_watchers"),
            connections: after.get("ludo_connections"),
            rss_kib: rss,
            rss_before_kib: None,
            threads: threads(self.pid),
            allocated,
            server_ms: server_mean_ms(&before, &after),
            latencies,
            note: String::new(),
        }
    }

    async fn metric(&self, name: &str) -> f64 {
        scrape(&self.http, &self.base).await.get(name)
    }
}

/// Opens an SSE stream on its own connection and reads until its first event
/// (record 0) has come whole; returns the connection, still open.
async fn sse_first_event(addr: SocketAddr, path: String) -> Result<Box<dyn Any + Send>, String> {
    let open = async {
        let mut stream = TcpStream::connect(addr).await.map_err(|e| format!("SSE connect: {e}"))?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
        stream.write_all(request.as_bytes()).await.map_err(|e| format!("SSE write: {e}"))?;
        let mut received = Vec::with_capacity(8192);
        let mut buf = [0u8; 8192];
        loop {
            let n = stream.read(&mut buf).await.map_err(|e| format!("SSE read: {e}"))?;
            if n == 0 {
                return Err(format!("SSE closed before its first event: {:?}", String::from_utf8_lossy(&received)));
            }
            received.extend_from_slice(&buf[..n]);
            if let Some(at) = find(&received, b"\ndata:")
                && find(&received[at..], b"\n\n").is_some()
            {
                if !received.starts_with(b"HTTP/1.1 200") {
                    return Err(format!("SSE answered {:?}", String::from_utf8_lossy(&received[..received.len().min(80)])));
                }
                return Ok(Box::new(stream) as Box<dyn Any + Send>);
            }
        }
    };
    tokio::time::timeout(OPEN_LIMIT, open).await.unwrap_or_else(|_| Err("SSE: no first event in time".into()))
}

/// Opens a gRPC WatchGame call and waits for its first update; returns the call, still open.
async fn grpc_first_event(channel: tonic::transport::Channel, id: String) -> Result<Box<dyn Any + Send>, String> {
    let open = async {
        let mut client = pb::ludo_client::LudoClient::new(channel);
        let mut updates =
            client.watch_game(pb::WatchGameRequest { id, from: 0 }).await.map_err(|s| format!("WatchGame: {s}"))?.into_inner();
        match updates.message().await {
            Ok(Some(_)) => Ok(Box::new(updates) as Box<dyn Any + Send>),
            Ok(None) => Err("WatchGame ended before its first update".to_string()),
            Err(status) => Err(format!("WatchGame: {status}")),
        }
    };
    tokio::time::timeout(OPEN_LIMIT, open).await.unwrap_or_else(|_| Err("WatchGame: no first update in time".into()))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The kernel's count of connections dropped because a listen queue was full
/// (`TcpExt: ListenOverflows` in /proc/net/netstat; for the whole network
/// namespace, so for this server while nothing else listens).
fn listen_overflows() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let at = names.split_whitespace().position(|n| n == "ListenOverflows")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

fn overflow_delta(before: Option<u64>) -> String {
    match (before, listen_overflows()) {
        (Some(before), Some(after)) => format!("+{}", after - before),
        _ => "?".into(),
    }
}

struct Churn {
    opened: usize,
    failures: usize,
    first_failures: Vec<String>,
    peak_watchers: f64,
    peak_connections: f64,
    peak_rss_kib: u64,
    elapsed: Duration,
}

/// Opens and closes `total` streams on game A, `CHURN_BATCH` at a time: each
/// stream gets its first event, the batch is then closed together.
async fn churn(bench: &Bench, game_a: &str, total: usize) -> Churn {
    let mut channels = Vec::new();
    for _ in 0..GRPC_CHANNELS {
        channels.push(tonic::transport::Channel::from_shared(bench.base.clone()).unwrap().connect().await.expect("gRPC connect"));
    }
    let path = format!("/v1/games/{game_a}/stream");
    let started = Instant::now();
    let mut report = Churn {
        opened: 0,
        failures: 0,
        first_failures: Vec::new(),
        peak_watchers: 0.0,
        peak_connections: 0.0,
        peak_rss_kib: 0,
        elapsed: Duration::ZERO,
    };
    let mut launched = 0;
    let mut batch_no = 0;
    while launched < total {
        let size = CHURN_BATCH.min(total - launched);
        let mut tasks = Vec::with_capacity(size);
        for i in launched..launched + size {
            if i % 2 == 0 {
                tasks.push(tokio::spawn(sse_first_event(bench.addr, path.clone())));
            } else {
                let channel = channels[(i / 2) % GRPC_CHANNELS].clone();
                tasks.push(tokio::spawn(grpc_first_event(channel, game_a.to_string())));
            }
        }
        launched += size;
        let mut held = Vec::with_capacity(size);
        for task in tasks {
            match task.await.expect("stream task") {
                Ok(stream) => held.push(stream),
                Err(err) => {
                    report.failures += 1;
                    if report.first_failures.len() < 5 {
                        report.first_failures.push(err);
                    }
                }
            }
        }
        report.opened += held.len();
        if batch_no % 8 == 0 {
            let scrape = scrape(&bench.http, &bench.base).await;
            report.peak_watchers = report.peak_watchers.max(scrape.get("ludo_watchers"));
            report.peak_connections = report.peak_connections.max(scrape.get("ludo_connections"));
            report.peak_rss_kib = report.peak_rss_kib.max(rss_kib(bench.pid).0);
        }
        batch_no += 1;
        drop(held); // SSE: the connection closes; gRPC: the call is cancelled (RST_STREAM)
    }
    drop(channels);
    report.elapsed = started.elapsed();
    report
}

/// An idle connection held open, and when.
struct Held {
    stream: TcpStream,
    opened: Instant,
    after_request: bool,
}

/// An idle connection's fate, seen from the client.
struct IdleFate {
    after_request: bool,
    /// When the server closed it, counted from the connect; None if the benchmark had to.
    closed_after: Option<Duration>,
}

/// Connects, and for `after_request` sends one HTTP/1.1 request and reads its
/// whole answer (the connection stays open, keep-alive). Also returns how
/// long the connect took.
async fn idle_open(addr: SocketAddr, after_request: bool) -> Result<(Held, Duration), String> {
    let open = async {
        let started = Instant::now();
        let mut stream = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        let opened = Instant::now();
        if after_request {
            stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.map_err(|e| format!("write: {e}"))?;
            let mut received = Vec::new();
            let mut buf = [0u8; 1024];
            loop {
                let n = stream.read(&mut buf).await.map_err(|e| format!("read: {e}"))?;
                if n == 0 {
                    return Err("closed before answering".to_string());
                }
                received.extend_from_slice(&buf[..n]);
                if let Some(end) = find(&received, b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
                    if !head.starts_with("http/1.1 200") {
                        return Err(format!("answered {:?}", head.lines().next()));
                    }
                    let length: usize = head
                        .lines()
                        .find_map(|line| line.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .ok_or("no content-length")?;
                    if received.len() >= end + 4 + length {
                        break;
                    }
                }
            }
        }
        Ok((Held { stream, opened, after_request }, opened - started))
    };
    tokio::time::timeout(OPEN_LIMIT, open).await.unwrap_or_else(|_| Err("no answer in time".into()))
}

struct Opened {
    held: Vec<Held>,
    failed: usize,
    first_failures: Vec<String>,
    /// Connects that took a second or more (a dropped SYN, sent again).
    slow_connects: usize,
    slowest_connect: Duration,
}

impl Opened {
    fn take(&mut self, result: Result<(Held, Duration), String>) {
        match result {
            Ok((held, connect)) => {
                self.slow_connects += usize::from(connect >= Duration::from_millis(900));
                self.slowest_connect = self.slowest_connect.max(connect);
                self.held.push(held);
            }
            Err(err) => {
                self.failed += 1;
                if self.first_failures.len() < 5 {
                    self.first_failures.push(err);
                }
            }
        }
    }
}

/// Opens `count` idle connections, half silent and half after one request,
/// in steps of `IDLE_STEP` paced by the server's accept queue: a step's
/// silent connections first, then its requesting ones, whose answers mean
/// (the queue being first in, first out) that the whole step was accepted.
/// So no more than a step waits in the queue, which holds at least 128.
async fn open_idle(addr: SocketAddr, count: usize) -> Opened {
    let mut opened = Opened {
        held: Vec::with_capacity(count),
        failed: 0,
        first_failures: Vec::new(),
        slow_connects: 0,
        slowest_connect: Duration::ZERO,
    };
    let mut launched = 0;
    while launched < count {
        let size = IDLE_STEP.min(count - launched);
        for after_request in [false, true] {
            let tasks: Vec<_> = (launched..launched + size)
                .filter(|i| (i % 2 == 1) == after_request)
                .map(|_| tokio::spawn(idle_open(addr, after_request)))
                .collect();
            for task in tasks {
                opened.take(task.await.unwrap());
            }
        }
        launched += size;
    }
    opened
}

/// Waits until the server closes `held` or `deadline` passes (then the
/// benchmark closes it by dropping it).
async fn watch_idle(held: Held, deadline: Instant, closed: Arc<AtomicUsize>) -> IdleFate {
    let Held { mut stream, opened, after_request } = held;
    let mut buf = [0u8; 512];
    let read_to_end = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    let closed_after = match tokio::time::timeout_at(deadline.into(), read_to_end).await {
        Ok(()) => {
            closed.fetch_add(1, Ordering::Relaxed);
            Some(opened.elapsed())
        }
        Err(_) => None,
    };
    IdleFate { after_request, closed_after }
}

fn summarise(label: &str, fates: &[&IdleFate]) {
    let mut times: Vec<Duration> = fates.iter().filter_map(|f| f.closed_after).collect();
    times.sort_unstable();
    if times.is_empty() {
        println!("  {label}: {} held; none closed by the server within {} s", fates.len(), IDLE_WAIT.as_secs());
        return;
    }
    println!(
        "  {label}: {} held; {} closed by the server {:.1} / {:.1} / {:.1} s (min / median / max) after connecting; {} closed by the benchmark",
        fates.len(),
        times.len(),
        times[0].as_secs_f64(),
        times[times.len() / 2].as_secs_f64(),
        times[times.len() - 1].as_secs_f64(),
        fates.len() - times.len()
    );
}

fn nofile() -> (Option<u64>, Option<u64>) {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    (limit.current, limit.maximum)
}

fn show(limit: Option<u64>) -> String {
    limit.map_or("unlimited".into(), |v| v.to_string())
}

/// Raises this process's soft descriptor limit to the hard one, as the server does.
fn raise_nofile() {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let before = nofile();
    if let (Some(soft), Some(hard)) = before
        && soft < hard
        && let Err(err) = setrlimit(Resource::Nofile, Rlimit { current: Some(hard), maximum: Some(hard) })
    {
        println!("soak: cannot raise the open-file limit: {err}");
    }
    let after = nofile();
    println!("benchmark process open-file limit: soft {} -> {}, hard {}", show(before.0), show(after.0), show(after.1));
}

fn server_nofile(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/limits"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Max open files"))
                .map(|l| l.split_whitespace().skip(3).take(2).collect::<Vec<_>>().join(" / "))
        })
        .unwrap_or_else(|| "?".into())
}

fn print_table(rows: &[Row]) {
    let base = &rows[0];
    let (base_rss, base_p50, base_p99) = (base.rss_kib as f64, ms(base.p50()), ms(base.p99()));
    println!();
    println!(
        "{:<30} {:>8} {:>6} {:>8} {:>6} {:>9} {:>7} {:>8} {:>6} {:>8} {:>6} {:>6} {:>9} {:>6}  note",
        "phase",
        "watchers",
        "conns",
        "RSS MiB",
        "x base",
        "alloc MiB",
        "threads",
        "p50 ms",
        "x base",
        "p99 ms",
        "x base",
        "moves",
        "server ms",
        "others"
    );
    for row in rows {
        let (p50, p99) = (ms(row.p50()), ms(row.p99()));
        println!(
            "{:<30} {:>8} {:>6} {:>8.1} {:>6.2} {:>9.1} {:>7} {:>8.2} {:>6.2} {:>8.2} {:>6.2} {:>6} {:>9.2} {:>6.2}  {}",
            row.phase,
            row.watchers,
            row.connections,
            row.rss_kib as f64 / 1024.0,
            row.rss_kib as f64 / base_rss,
            row.allocated / (1024.0 * 1024.0),
            row.threads,
            p50,
            p50 / base_p50,
            p99,
            p99 / base_p99,
            row.latencies.len(),
            row.server_ms,
            row.other_cores,
            row.note
        );
    }
    let disturbed: Vec<&str> = rows.iter().filter(|r| r.other_cores >= 0.5).map(|r| r.phase.as_str()).collect();
    if !disturbed.is_empty() {
        println!(
            "WARNING: other processes kept half a core or more busy during: {}; their latencies (and ratios to them) are unreliable",
            disturbed.join(", ")
        );
    }
    println!(
        "(x base: ratio to the baseline row; moves: timed moves in the window; server ms: mean ludo_move_seconds over the window; \
         others: cores busy with other processes meanwhile; the benchmark's own clients share the server's cores)"
    );
}

struct Targets {
    missed: usize,
}

impl Targets {
    fn check(&mut self, what: &str, value: String, pass: bool) {
        if !pass {
            self.missed += 1;
        }
        println!("  {what:<58} {value:<22} {}", if pass { "PASS" } else { "MISS" });
    }
}

/// Churns `streams` streams on game A while moves are timed on game B; adds
/// the "during" and "after" rows.
async fn churn_round(bench: &Bench, mover: Mover, game_a: &str, streams: usize, round: usize, rows: &mut Vec<Row>) -> Mover {
    let rss_before = settled_rss_kib(bench.pid).await;
    let before = scrape(&bench.http, &bench.base).await;
    let wakeups_before = before.get("ludo_watch_wakeups_total");
    let overflows = listen_overflows();
    let stop = Arc::new(AtomicBool::new(false));
    let mover_stop = Arc::clone(&stop);
    let mut mover = mover;
    let cpu = cpu_mark(bench.pid);
    let mover_task = tokio::spawn(async move {
        let latencies = mover.window(50, Some(&mover_stop)).await;
        (mover, latencies)
    });
    let report = churn(bench, game_a, streams).await;
    let churned = Instant::now();
    let cpu_after = cpu_mark(bench.pid);
    let (_, watchers_left) = bench.metric_until_zero_watchers().await;
    let settle_time = churned.elapsed();
    stop.store(true, Ordering::Release);
    let (mut mover, latencies) = mover_task.await.unwrap();
    let after = scrape(&bench.http, &bench.base).await;
    println!();
    println!(
        "stream churn #{round}: {} streams opened and closed in {:.1} s ({:.0}/s), {} failed{}; listen-queue overflows {}",
        report.opened,
        report.elapsed.as_secs_f64(),
        report.opened as f64 / report.elapsed.as_secs_f64(),
        report.failures,
        if report.first_failures.is_empty() { String::new() } else { format!(": {:?}", report.first_failures) },
        overflow_delta(overflows)
    );
    println!(
        "  ludo_watchers {} {:.2} s after the last batch closed (ludo_watched_games {}); watch wake-ups: {} (game A never moved)",
        watchers_left,
        settle_time.as_secs_f64(),
        after.get("ludo_watched_games"),
        after.get("ludo_watch_wakeups_total") - wakeups_before
    );
    rows.push(Row {
        phase: format!("during churn #{round} ({}k streams)", report.opened / 1000),
        watchers: report.peak_watchers,
        connections: report.peak_connections,
        rss_kib: report.peak_rss_kib,
        rss_before_kib: None,
        threads: threads(bench.pid),
        allocated: bench.metric("ludo_heap_allocated_bytes").await,
        server_ms: server_mean_ms(&before, &after),
        other_cores: other_cores(&cpu, &cpu_after),
        latencies,
        note: format!("highest sampled at a batch's peak; {:.1} s of churn", report.elapsed.as_secs_f64()),
    });
    let note = format!("watchers {watchers_left} {:.2} s after the churn", settle_time.as_secs_f64());
    rows.push(bench.after(&mut mover, &format!("after churn #{round}"), rss_before, note).await);
    mover
}

/// Holds `count` idle connections, times moves on game B while all are held
/// (within the 10 s header timeout), then waits for the server to close
/// them; adds the "during" and "after" rows.
async fn hold_round(bench: &Bench, mover: &mut Mover, count: usize, round: usize, rows: &mut Vec<Row>) {
    let baseline_connections = rows[0].connections;
    let rss_before = settled_rss_kib(bench.pid).await;
    let before = scrape(&bench.http, &bench.base).await;
    let closed_idle_before = before.get("ludo_connections_closed_total{reason=\"idle\"}");
    let closed_stalled_before = before.get("ludo_connections_closed_total{reason=\"stalled\"}");
    let overflows = listen_overflows();
    let hold_started = Instant::now();
    let opened = open_idle(bench.addr, count).await;
    let opened_in = hold_started.elapsed();
    let held_count = opened.held.len();
    let held_silent = opened.held.iter().filter(|h| !h.after_request).count();
    let deadline = hold_started + IDLE_WAIT;
    let closed = Arc::new(AtomicUsize::new(0));
    let monitors: Vec<_> = opened.held.into_iter().map(|held| tokio::spawn(watch_idle(held, deadline, Arc::clone(&closed)))).collect();
    let connections_held = bench.metric("ludo_connections").await;
    let cpu = cpu_mark(bench.pid);
    let latencies = mover.window(bench.moves_per_window, None).await;
    let cpu_after = cpu_mark(bench.pid);
    let after = scrape(&bench.http, &bench.base).await;
    let rss_held = rss_kib(bench.pid).0;
    let measured_at = hold_started.elapsed();
    let still_open = held_count - closed.load(Ordering::Relaxed);
    println!();
    println!(
        "idle hold #{round}: {held_count} connections opened in {:.1} s ({held_silent} silent, {} after one request), {} failed{}; \
         connects of 1 s or more: {} (slowest {:.2} s); listen-queue overflows {}",
        opened_in.as_secs_f64(),
        held_count - held_silent,
        opened.failed,
        if opened.first_failures.is_empty() { String::new() } else { format!(": {:?}", opened.first_failures) },
        opened.slow_connects,
        opened.slowest_connect.as_secs_f64(),
        overflow_delta(overflows)
    );
    println!(
        "  while held: ludo_connections {connections_held} before the moves, {} after; {still_open} of {held_count} still open {:.1} s after the first connect",
        after.get("ludo_connections"),
        measured_at.as_secs_f64()
    );
    rows.push(Row {
        phase: format!("during idle hold #{round} ({}k)", held_count / 1000),
        watchers: after.get("ludo_watchers"),
        connections: connections_held,
        rss_kib: rss_held,
        rss_before_kib: None,
        threads: threads(bench.pid),
        allocated: bench.metric("ludo_heap_allocated_bytes").await,
        server_ms: server_mean_ms(&before, &after),
        other_cores: other_cores(&cpu, &cpu_after),
        latencies,
        note: format!("{still_open} still open when measured, {:.1} s in", measured_at.as_secs_f64()),
    });
    // The server closes them (header timeout 10 s; idle timeout 60 s).
    let mut back_near_baseline = None;
    loop {
        let connections = bench.metric("ludo_connections").await;
        if back_near_baseline.is_none() && connections <= baseline_connections + 2.0 {
            back_near_baseline = Some((hold_started.elapsed(), connections));
        }
        if (closed.load(Ordering::Relaxed) == held_count && back_near_baseline.is_some()) || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut fates = Vec::with_capacity(held_count);
    for task in monitors {
        fates.push(task.await.unwrap());
    }
    let released_at = hold_started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = scrape(&bench.http, &bench.base).await;
    let silent: Vec<&IdleFate> = fates.iter().filter(|f| !f.after_request).collect();
    let requested: Vec<&IdleFate> = fates.iter().filter(|f| f.after_request).collect();
    summarise("silent (no byte sent)", &silent);
    summarise("idle after one answered request", &requested);
    match back_near_baseline {
        Some((at, connections)) => println!(
            "  ludo_connections back to {connections} (baseline {baseline_connections}) {:.1} s after the first connect",
            at.as_secs_f64()
        ),
        None => println!("  ludo_connections not back near the baseline within {} s", IDLE_WAIT.as_secs()),
    }
    let (idle_closed, stalled_closed) = (
        after.get("ludo_connections_closed_total{reason=\"idle\"}") - closed_idle_before,
        after.get("ludo_connections_closed_total{reason=\"stalled\"}") - closed_stalled_before,
    );
    let server_closed = fates.iter().filter(|f| f.closed_after.is_some()).count();
    println!(
        "  ludo_connections_closed_total since the hold began: idle +{idle_closed}, stalled +{stalled_closed}; the server closed {server_closed} \
         of these connections{}; all gone {:.1} s after the first connect",
        if (idle_closed + stalled_closed) < server_closed as f64 {
            format!(" (so at least {} of them are counted under no reason)", server_closed as f64 - idle_closed - stalled_closed)
        } else {
            String::new()
        },
        released_at.as_secs_f64()
    );
    let note = format!("hold ended {:.1} s after the first connect", released_at.as_secs_f64());
    rows.push(bench.after(mover, &format!("after idle hold #{round}"), rss_before, note).await);
}

/// For information, at the end: `count` connects at once, unpaced, as a
/// crowd of real clients would, and how many had their SYN dropped.
async fn connect_burst(addr: SocketAddr, count: usize) {
    let overflows = listen_overflows();
    let started = Instant::now();
    let tasks: Vec<_> = (0..count)
        .map(|_| {
            tokio::spawn(async move {
                let start = Instant::now();
                let result = tokio::time::timeout(OPEN_LIMIT, TcpStream::connect(addr)).await;
                (result.map(|r| r.is_ok()).unwrap_or(false), start.elapsed())
            })
        })
        .collect();
    let mut times = Vec::new();
    let mut failed = 0;
    for task in tasks {
        let (ok, took) = task.await.unwrap();
        failed += usize::from(!ok);
        times.push(took);
    }
    times.sort_unstable();
    let slow = times.iter().filter(|t| **t >= Duration::from_millis(900)).count();
    println!(
        "connect burst (information, no target): {count} connects at once took {:.2} s in all; {slow} took 1 s or more (SYN dropped and sent again), \
         median {:.1} ms, max {:.2} s, {failed} failed; listen-queue overflows {}",
        started.elapsed().as_secs_f64(),
        ms(times[times.len() / 2]),
        times[times.len() - 1].as_secs_f64(),
        overflow_delta(overflows)
    );
}

fn main() {
    let streams = env("SOAK_STREAMS", 10_000);
    let idle = env("SOAK_IDLE", 5_000);
    let moves_per_window = env("SOAK_MOVES", 400);
    let rounds = env("SOAK_ROUNDS", 2);
    raise_nofile();
    let dir = tempfile::tempdir().unwrap();
    let server = common::start_with(dir.path(), SERVER_FLAGS);
    let pid = server.child.id();
    println!("server pid {pid} at {}, its open-file limit (soft / hard) {}", server.base, server_nofile(pid));
    println!(
        "soak: {rounds} rounds of {streams} streams churned on game A ({CHURN_BATCH} at a time, half SSE, half gRPC over {GRPC_CHANNELS} HTTP/2 connections) \
         then {idle} idle connections held (half silent, half after one request); {moves_per_window} timed moves on game B per window"
    );
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
        let http = reqwest::Client::new();
        let mut mover = Mover::new(&server.base, pid).await;
        let bench = Bench { base: server.base.clone(), addr: server.addr, pid, http, moves_per_window };
        let game_a = common::create(&bench.http, &bench.base, "cardinal", &["Ann", "Bob"]).await;
        let game_a = game_a["id"].as_str().unwrap().to_string();

        // Warm-up: the code paths, not the capacity (a few streams and idle connections).
        mover.window(moves_per_window, None).await;
        let warm = churn(&bench, &game_a, 40).await;
        assert_eq!(warm.failures, 0, "warm-up streams failed: {:?}", warm.first_failures);
        let warm_idle = open_idle(bench.addr, 20).await;
        assert_eq!(warm_idle.failed, 0, "warm-up connections failed: {:?}", warm_idle.first_failures);
        drop(warm_idle);
        bench.metric_until_zero_watchers().await;
        tokio::time::sleep(Duration::from_millis(500)).await;

        let mut rows = Vec::new();
        // Baseline, then the same again: the second says how noisy the machine is.
        rows.push(bench.measure(&mut mover, "baseline (no abuse)").await);
        let mut control = bench.measure(&mut mover, "control (no abuse, again)").await;
        control.note = "the same as the baseline: noise".into();
        rows.push(control);
        let refused_before = refused(&bench).await;

        for round in 1..=rounds {
            mover = churn_round(&bench, mover, &game_a, streams, round, &mut rows).await;
            hold_round(&bench, &mut mover, idle, round, &mut rows).await;
        }
        let refused_after = refused(&bench).await;

        print_table(&rows);
        let (_, hwm) = rss_kib(pid);
        println!(
            "server peak RSS (VmHWM) {:.1} MiB; connections refused during the run: {}; move sends retried: {}; game B games played: {}",
            hwm as f64 / 1024.0,
            refused_after - refused_before,
            mover.retries,
            mover.games
        );

        let base = &rows[0];
        let mut targets = Targets { missed: 0 };
        println!();
        println!("targets (every \"after\" row against the baseline):");
        let after_rows: Vec<&Row> = rows.iter().filter(|r| r.phase.starts_with("after")).collect();
        for row in &after_rows {
            targets.check(&format!("ludo_watchers back to 0, {}", row.phase), format!("{}", row.watchers), row.watchers == 0.0);
        }
        // The RSS once the abuse is over, against the RSS just before it:
        // the same data (the timed moves of other windows add records, and
        // memory, of their own: see the baseline column).
        for row in &after_rows {
            let before = row.rss_before_kib.expect("after rows know the RSS before their abuse");
            let ratio = row.rss_kib as f64 / before as f64;
            targets.check(
                &format!("RSS within 10% of before the abuse, {}", row.phase),
                format!("{:.1} MiB, {ratio:.2}x of {:.1}", row.rss_kib as f64 / 1024.0, before as f64 / 1024.0),
                ratio <= RSS_TARGET,
            );
        }
        for row in &after_rows {
            for (name, value, base) in [("p50", row.p50(), base.p50()), ("p99", row.p99(), base.p99())] {
                let ratio = ms(value) / ms(base);
                targets.check(
                    &format!("move latency {name} within 1.5x of baseline, {}", row.phase),
                    format!("{:.2} ms, {ratio:.2}x", ms(value)),
                    ratio <= LATENCY_TARGET,
                );
            }
        }
        connect_burst(bench.addr, 1000).await;
        targets.missed
    })
    }));
    drop(runtime);
    let Ok(missed) = outcome else {
        server_post_mortem(server);
        std::process::exit(2);
    };

    let lines = server.terminate();
    let mut problems = std::collections::BTreeMap::<String, usize>::new();
    for line in &lines {
        let level = line["level"].as_str().unwrap_or_default();
        if level == "WARN" || level == "ERROR" {
            *problems.entry(format!("{level} {}", line["message"].as_str().unwrap_or_default())).or_default() += 1;
        }
    }
    println!(
        "server stopped cleanly; warnings and errors in its log: {}; whole run {:.0} s",
        if problems.is_empty() { "none".into() } else { format!("{problems:?}") },
        started.elapsed().as_secs_f64()
    );
    if missed > 0 {
        println!("soak: {missed} target(s) MISSED");
        std::process::exit(1);
    }
    println!("soak: every target met");
}

/// After the benchmark failed: whether the server is still running, how it
/// ended if not, and the last lines of its log.
fn server_post_mortem(mut server: common::Server) {
    std::thread::sleep(Duration::from_millis(500)); // let the log reader catch up
    match server.child.try_wait() {
        Ok(Some(status)) => println!("soak: FAILED; the server had exited: {status}"),
        Ok(None) => println!("soak: FAILED; the server is still running (stopping it)"),
        Err(err) => println!("soak: FAILED; cannot tell whether the server runs: {err}"),
    }
    let lines: Vec<Value> = server.lines.try_iter().collect();
    println!("the last {} of its {} log lines since it started listening:", lines.len().min(15), lines.len());
    for line in lines.iter().skip(lines.len().saturating_sub(15)) {
        println!("  {line}");
    }
}

async fn refused(bench: &Bench) -> f64 {
    let scrape = scrape(&bench.http, &bench.base).await;
    scrape.get("ludo_connections_refused_total{reason=\"server_full\"}")
        + scrape.get("ludo_connections_refused_total{reason=\"per_address\"}")
}

impl Bench {
    /// Polls `ludo_watchers` until it is 0 or `SETTLE_LIMIT` passes: (reached 0, last value).
    async fn metric_until_zero_watchers(&self) -> (bool, f64) {
        let deadline = Instant::now() + SETTLE_LIMIT;
        loop {
            let watchers = self.metric("ludo_watchers").await;
            if watchers == 0.0 {
                return (true, watchers);
            }
            if Instant::now() >= deadline {
                return (false, watchers);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
