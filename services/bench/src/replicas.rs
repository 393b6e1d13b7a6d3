//! `ludo-bench --postgres`: replicas on a PostgreSQL store,
//! beside sled and beside the database's own limit, in one run.
//!
//! It starts a throwaway PostgreSQL cluster (`initdb` on a free loopback
//! port, as `storage/tests/common/postgres.rs` does for the tests), then at
//! each concurrency N measures:
//! - the raw baseline: N connections each doing single-row
//!   `INSERT … ; COMMIT` (autocommit) of a record-sized row, as fast as
//!   they can: what the database itself takes at that concurrency;
//! - durable REST moves/s with one replica on the database, and with two
//!   (each move to the next replica in turn, as a load balancer without
//!   stickiness sends them);
//! - the same moves on sled, one server (the embedded default).
//!
//! And the time from a move's answer on replica A to its record on a live
//! stream (SSE) on replica B, p50 and p99 over a few hundred moves.
//!
//! Beside the rates, the CPU each write costs: PostgreSQL's (the postmaster
//! and every process it started, from `/proc`) per raw INSERT and per move,
//! and the servers' per move. All of them share the machine's cores with the
//! load driver, so these say where a move's cost goes and why the replicas'
//! rate stays below the raw one.

#[path = "../../../storage/tests/common/postgres.rs"]
#[allow(dead_code)]
mod postgres;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::moves::{self, Answers, MoveRun, Playout, Routing};
use crate::server::{ProcStat, Server, checked, ticks};

/// What one concurrency measured.
#[derive(serde::Serialize)]
pub struct ReplicaRow {
    /// Concurrent games (and raw writers).
    pub concurrency: usize,
    /// Raw single-row INSERT+COMMIT per second.
    pub raw_inserts_per_s: f64,
    /// REST, one replica on PostgreSQL.
    pub one_replica: MoveRun,
    /// REST, two replicas on PostgreSQL, moves alternating.
    pub two_replicas: MoveRun,
    /// REST, two replicas on PostgreSQL, each game's moves on one.
    pub two_by_game: MoveRun,
    /// REST, one server on sled.
    pub sled: MoveRun,
    /// PostgreSQL's CPU per raw INSERT+COMMIT, µs.
    pub raw_pg_cpu_us_per_insert: f64,
    /// PostgreSQL's CPU per move with one replica, µs.
    pub one_replica_pg_cpu_us_per_move: f64,
    /// PostgreSQL's CPU per move with two replicas, moves alternating, µs.
    pub two_replicas_pg_cpu_us_per_move: f64,
    /// PostgreSQL's CPU per move with two replicas, by game, µs.
    pub two_by_game_pg_cpu_us_per_move: f64,
}

/// Stream latency across replicas.
#[derive(serde::Serialize)]
pub struct Propagation {
    /// Moves timed.
    pub moves: usize,
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
}

/// Everything `--postgres` measured.
#[derive(serde::Serialize)]
pub struct ReplicaSuite {
    /// Per concurrency.
    pub rows: Vec<ReplicaRow>,
    /// A → B stream latency.
    pub propagation: Propagation,
}

/// Runs the suite against `binary`.
///
/// # Errors
/// When PostgreSQL cannot be started, or a server or a request fails.
pub async fn measure(binary: &Path, playouts: &[Arc<Playout>], concurrency: &[usize], seconds: Duration) -> Result<ReplicaSuite, String> {
    let cluster = tokio::task::spawn_blocking(postgres::Cluster::start)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no PostgreSQL cluster could be started (install Debian's `postgresql` package)")?;
    let mut rows = Vec::new();
    for (i, &n) in concurrency.iter().enumerate() {
        // A database per concurrency: every phase starts on empty tables.
        let url = cluster.new_database(&format!("bench{i}"));
        eprintln!("ludo-bench: postgres: N={n}: raw INSERT+COMMIT, one replica, two replicas (moves alternating, then by game), sled");
        let postmaster = cluster.postmaster_pid();
        let (raw, raw_pg_cpu_us_per_insert) = with_pg_cpu(postmaster, raw_inserts(&url, n, seconds), |raw| raw.inserts).await?;
        let raw_inserts_per_s = raw.inserts_per_s;
        // Its connections close before the replicas open theirs (the
        // cluster takes 100).
        drop(raw);
        let flags = vec!["--store".to_string(), url.clone(), "--store-pool-size".to_string(), n.clamp(4, 32).to_string()];
        let moves_of = |run: &MoveRun| run.moves as u64;
        let (one_replica, one_replica_pg_cpu_us_per_move) = {
            let a = Server::start_with(binary, &flags).await?;
            with_pg_cpu(postmaster, moves::rest(&a, playouts, n, seconds, Answers::Full), moves_of).await?
        };
        let (two_replicas, two_replicas_pg_cpu_us_per_move) = {
            let (a, b) = (Server::start_with(binary, &flags).await?, Server::start_with(binary, &flags).await?);
            with_pg_cpu(postmaster, moves::rest_on(&[&a, &b], Routing::Alternating, playouts, n, seconds, Answers::Full), moves_of).await?
        };
        let (two_by_game, two_by_game_pg_cpu_us_per_move) = {
            let (a, b) = (Server::start_with(binary, &flags).await?, Server::start_with(binary, &flags).await?);
            with_pg_cpu(postmaster, moves::rest_on(&[&a, &b], Routing::ByGame, playouts, n, seconds, Answers::Full), moves_of).await?
        };
        let sled = {
            let server = Server::start(binary).await?;
            moves::rest(&server, playouts, n, seconds, Answers::Full).await?
        };
        rows.push(ReplicaRow {
            concurrency: n,
            raw_inserts_per_s,
            one_replica,
            two_replicas,
            two_by_game,
            sled,
            raw_pg_cpu_us_per_insert,
            one_replica_pg_cpu_us_per_move,
            two_replicas_pg_cpu_us_per_move,
            two_by_game_pg_cpu_us_per_move,
        });
    }
    let url = cluster.new_database("propagation");
    let flags = vec!["--store".to_string(), url];
    let (a, b) = (Server::start_with(binary, &flags).await?, Server::start_with(binary, &flags).await?);
    let propagation = propagation(&a, &b).await?;
    Ok(ReplicaSuite { rows, propagation })
}

/// CPU time the cluster has used so far: the postmaster's own, that of the
/// processes it started and still runs (backends, WAL writer, …), and that
/// of those it has reaped (in its children's times), so a backend that ends
/// during a phase still counts.
///
/// # Errors
/// When the postmaster's `/proc` entry cannot be read.
fn cluster_cpu(postmaster: u32) -> Result<Duration, String> {
    let own = ProcStat::of(postmaster).ok_or("cannot read the PostgreSQL postmaster's /proc stat")?;
    let mut count = own.utime + own.stime + own.cutime + own.cstime;
    let entries = std::fs::read_dir("/proc").map_err(|e| format!("cannot list /proc: {e}"))?;
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        if let Some(child) = ProcStat::of(pid).filter(|stat| stat.ppid == postmaster) {
            count += child.utime + child.stime;
        }
    }
    Ok(ticks(count))
}

/// Runs `phase`, and answers what it answered with PostgreSQL's CPU during
/// it per write (µs), `writes` saying how many writes the phase made. The
/// phase's connections must still be open when it ends (a replica still
/// running, [`RawRun`]): the CPU of a backend that exited and is not yet
/// reaped is counted nowhere.
async fn with_pg_cpu<T>(
    postmaster: u32,
    phase: impl std::future::Future<Output = Result<T, String>>,
    writes: impl Fn(&T) -> u64,
) -> Result<(T, f64), String> {
    let before = cluster_cpu(postmaster)?;
    let done = phase.await?;
    let cpu = cluster_cpu(postmaster)?.saturating_sub(before);
    let per_write = cpu.as_secs_f64() * 1e6 / writes(&done).max(1) as f64;
    Ok((done, per_write))
}

/// What the raw baseline measured, and its connections, still open: a
/// backend that exits is in nobody's CPU time until the postmaster reaps
/// it, so the cluster's CPU is read while they are open (see
/// [`with_pg_cpu`]), and they close when this is dropped.
struct RawRun {
    inserts_per_s: f64,
    inserts: u64,
    _connections: Vec<tokio_postgres::Client>,
}

/// `clients` connections inserting one record-sized row per transaction.
async fn raw_inserts(url: &str, clients: usize, seconds: Duration) -> Result<RawRun, String> {
    let (setup, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| format!("raw baseline: {e}"))?;
    tokio::spawn(connection);
    setup
        .batch_execute("CREATE TABLE raw_inserts (id bigserial PRIMARY KEY, payload bytea NOT NULL)")
        .await
        .map_err(|e| format!("raw baseline: {e}"))?;
    let payload = vec![0x5a_u8; 400];
    let started = Instant::now();
    let deadline = started + seconds;
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (url, payload) = (url.to_string(), payload.clone());
        tasks.push(tokio::spawn(async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
            tokio::spawn(connection);
            let insert = client.prepare("INSERT INTO raw_inserts (payload) VALUES ($1)").await.map_err(|e| e.to_string())?;
            let mut done = 0u64;
            while Instant::now() < deadline {
                client.execute(&insert, &[&payload]).await.map_err(|e| e.to_string())?;
                done += 1;
            }
            Ok::<(u64, tokio_postgres::Client), String>((done, client))
        }));
    }
    let mut inserts = 0;
    let mut connections = vec![setup];
    for task in tasks {
        let (done, client) = task.await.map_err(|e| e.to_string())??;
        inserts += done;
        connections.push(client);
    }
    Ok(RawRun { inserts_per_s: inserts as f64 / started.elapsed().as_secs_f64(), inserts, _connections: connections })
}

/// Moves made on `a`, timed until they arrive on a live stream on `b`.
async fn propagation(a: &Server, b: &Server) -> Result<Propagation, String> {
    const MOVES: usize = 300;
    let http = reqwest::Client::new();
    let mut times = Vec::with_capacity(MOVES);
    while times.len() < MOVES {
        let body = json!({"kind": "battle13", "players": ["A", "B", "C", "D"], "options": {"target_crowns": 100}});
        let game = json_of(http.post(format!("{}/v1/games", a.base)).json(&body), "create").await?;
        let id = game["id"].as_str().ok_or("no game id")?.to_string();
        let mut stream = http.get(format!("{}/v1/games/{id}/stream?from=1", b.base)).send().await.map_err(|e| e.to_string())?;
        let mut pending = String::new();
        loop {
            let state = json_of(http.get(format!("{}/v1/games/{id}", a.base)), "game").await?;
            let Some(seat) = state["status"]["to_move"][0].as_u64() else { break };
            let token = game["seats"][seat as usize]["token"].as_str().unwrap_or_default();
            let legal = json_of(http.get(format!("{}/v1/games/{id}/legal-moves", a.base)).bearer_auth(token), "legal moves").await?;
            let mv = legal["moves"][0].clone();
            let answer = http
                .post(format!("{}/v1/games/{id}/moves", a.base))
                .bearer_auth(token)
                .json(&json!({"move": mv}))
                .send()
                .await
                .map_err(|e| format!("move: {e}"))?;
            let answer = checked(answer, "a listed legal move was refused").await?;
            let answered = Instant::now();
            let version = answer.json::<Value>().await.map_err(|e| e.to_string())?["version"].as_u64().ok_or("no version")?;
            // Wait for this record on B's stream.
            let wanted = format!("\"seq\":{version},");
            while !pending.contains(&wanted) {
                let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
                    .await
                    .map_err(|_| format!("record {version} never reached the stream on B"))?
                    .map_err(|e| e.to_string())?
                    .ok_or("B's stream ended")?;
                pending.push_str(&String::from_utf8_lossy(&chunk));
            }
            times.push(answered.elapsed());
            // Keep only what may hold a later record.
            if let Some(at) = pending.rfind("\n\n") {
                pending.drain(..at);
            }
            if times.len() >= MOVES {
                break;
            }
        }
    }
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(Propagation { moves: times.len(), p50_ms: ms(times[times.len() / 2]), p99_ms: ms(times[times.len() * 99 / 100]) })
}

/// Sends `request` and answers its JSON body (`what` names it in errors,
/// an error status included).
async fn json_of(request: reqwest::RequestBuilder, what: &str) -> Result<Value, String> {
    let answer = request.send().await.map_err(|e| format!("{what}: {e}"))?;
    checked(answer, what).await?.json().await.map_err(|e| format!("{what}: {e}"))
}

/// The suite as a table.
#[must_use]
pub fn table(suite: &ReplicaSuite, seconds: f64) -> String {
    let mut out = format!(
        "durable moves on PostgreSQL: N concurrent Cardinal games over REST, {seconds} s per phase; raw = N connections doing single-row INSERT+COMMIT on the same cluster; two replicas with each move sent to the other (alternating: every move lands on the replica one move behind) or every move of a game to the replica that created it (by game)\n"
    );
    out += "    N |    raw/s |  1 replica/s  x raw  p50 ms  p99 ms | 2, alternating/s  x raw  p50 ms  p99 ms | 2, by game/s  x raw  p50 ms  p99 ms |  sled/s  p50 ms  p99 ms\n";
    for r in &suite.rows {
        let x = |run: &MoveRun| run.moves_per_s / r.raw_inserts_per_s;
        let cells =
            |run: &MoveRun, width: usize| format!("{:>width$.0} {:>5.2}x {:>7.2} {:>7.2}", run.moves_per_s, x(run), run.p50_ms, run.p99_ms);
        out += &format!(
            "{:>5} | {:>8.0} | {} | {} | {} | {:>7.0} {:>7.2} {:>7.2}\n",
            r.concurrency,
            r.raw_inserts_per_s,
            cells(&r.one_replica, 12),
            cells(&r.two_replicas, 16),
            cells(&r.two_by_game, 12),
            r.sled.moves_per_s,
            r.sled.p50_ms,
            r.sled.p99_ms,
        );
    }
    out += "CPU per durable write, µs (PostgreSQL's processes and the servers, from /proc; the load driver's is not counted)\n";
    out += "    N | PostgreSQL per raw INSERT | 1 replica: PostgreSQL  server | 2, alternating: PostgreSQL  servers | 2, by game: PostgreSQL  servers\n";
    for r in &suite.rows {
        out += &format!(
            "{:>5} | {:>25.0} | {:>21.0} {:>7.0} | {:>26.0} {:>8.0} | {:>22.0} {:>8.0}\n",
            r.concurrency,
            r.raw_pg_cpu_us_per_insert,
            r.one_replica_pg_cpu_us_per_move,
            r.one_replica.server_cpu_us_per_move,
            r.two_replicas_pg_cpu_us_per_move,
            r.two_replicas.server_cpu_us_per_move,
            r.two_by_game_pg_cpu_us_per_move,
            r.two_by_game.server_cpu_us_per_move,
        );
    }
    let p = &suite.propagation;
    out += &format!(
        "a move answered on replica A reaches a live stream on replica B: p50 {:.2} ms, p99 {:.2} ms over {} moves (target: p99 < 50 ms); target for the replicas: >= 0.5x raw\n",
        p.p50_ms, p.p99_ms, p.moves
    );
    out
}
