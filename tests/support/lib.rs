//! Shared helpers of the black-box tests: a real server on port 0 over a
//! store, and thin REST and gRPC clients.
//!
//! # Which store
//! Every suite runs on sled (each server's data directory). The test binary
//! `on_postgres` (tests/on_postgres.rs) runs the same suites again on
//! PostgreSQL: each data directory stands for a database of its own in one
//! throwaway cluster per test process (`Cluster::shared`), so a restart on
//! the same directory finds the same database. `LUDO_TEST_STORE=sled` or
//! `=postgres` chooses for any binary. Without PostgreSQL on the machine
//! the PostgreSQL runs print why and use sled instead, unless
//! `LUDO_REQUIRE_POSTGRES=1` (CI), which makes that a failure.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use ludo_engine::{Engine, Seat, Seed, Setup, Status};
use ludo_game::{GameService, SystemClock};
use ludo_proto::v1::ludo_client::LudoClient;
use ludo_storage::{EventStore, PgOptions, PgStore, SledOptions, SledStore};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

/// Taking an export apart and putting it back together (the game crate's
/// test helper, shared with its tests and the `ludo` binary's).
#[path = "../../services/game/tests/support/bundle.rs"]
pub mod bundle;

/// The throwaway PostgreSQL cluster of the tests (the storage crate's
/// harness, shared with its conformance suite).
#[path = "../../storage/tests/common/postgres.rs"]
#[allow(dead_code)]
pub mod postgres;

/// Finding and running the external tools of the API checks.
pub mod tools;

/// The event store the black-box servers of this test process run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An embedded sled database in the server's data directory.
    Sled,
    /// A database of its own per data directory, in one cluster per process.
    Postgres,
}

impl Backend {
    /// `LUDO_TEST_STORE` if set; otherwise PostgreSQL for the `on_postgres`
    /// test binary (cargo names it `on_postgres-<hash>`) and sled for the
    /// others; sled, with a printed reason, when PostgreSQL was asked for
    /// but this machine has none (and it is not required).
    pub fn current() -> Backend {
        static CURRENT: OnceLock<Backend> = OnceLock::new();
        *CURRENT.get_or_init(|| {
            let asked = match std::env::var("LUDO_TEST_STORE").as_deref() {
                Ok("postgres") => Backend::Postgres,
                Ok("sled") => Backend::Sled,
                Ok(other) => panic!("LUDO_TEST_STORE={other}: expected `sled` or `postgres`"),
                Err(_) => {
                    let exe = std::env::current_exe().ok();
                    let name = exe.as_deref().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or("");
                    if name.starts_with("on_postgres") { Backend::Postgres } else { Backend::Sled }
                }
            };
            if asked == Backend::Postgres && postgres::Cluster::shared().is_none() {
                eprintln!("the black-box suites run on sled here, not on PostgreSQL (see the reason above)");
                return Backend::Sled;
            }
            asked
        })
    }

    /// The database standing for `data_dir` on PostgreSQL (created on first
    /// use): its name and URL.
    fn database(data_dir: &Path) -> (String, String) {
        static DATABASES: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
        let cluster = postgres::Cluster::shared().expect("Backend::current checked that the cluster runs");
        let mut databases = DATABASES.get_or_init(Default::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = databases.len();
        let name = databases
            .entry(data_dir.to_path_buf())
            .or_insert_with(|| {
                let name = format!("blackbox_{count}");
                cluster.new_database(&name);
                name
            })
            .clone();
        let url = cluster.url(&name);
        (name, url)
    }

    /// Opens the store of `data_dir` on this backend.
    async fn open(self, data_dir: &Path) -> Arc<dyn EventStore> {
        match self {
            Backend::Sled => Arc::new(SledStore::open(data_dir, SledOptions::default()).expect("open sled")),
            Backend::Postgres => {
                let (_, url) = Backend::database(data_dir);
                // Connecting waits on the store's own runtime: not on this one's workers.
                let store =
                    tokio::task::spawn_blocking(move || PgStore::connect(&url, &PgOptions { pool_size: 8, ..PgOptions::default() }))
                        .await
                        .expect("connect task")
                        .expect("connect to the test database");
                Arc::new(store)
            }
        }
    }
}

/// Changes made to a stopped server's store behind its back, as an operator,
/// a bug or an attacker could, on whichever backend the tests run.
pub mod tamper {
    use super::{Backend, Path};

    fn stream_hex(id: &str) -> String {
        let hex: String = id.chars().filter(|c| *c != '-').collect();
        assert_eq!(hex.len(), 32, "a game id is a UUID");
        hex
    }

    /// Deletes the summaries the store keeps beside the logs of the games
    /// `ids` (whether current, stale or already gone), as a store written
    /// before summaries existed has none.
    pub fn forget_summaries(data_dir: &Path, ids: &[&str]) {
        match Backend::current() {
            Backend::Sled => {
                let db = sled::open(data_dir).unwrap();
                let summaries = db.open_tree("summaries").unwrap();
                for id in ids {
                    let mut key = [0u8; 16];
                    hex::decode_to_slice(stream_hex(id), &mut key).unwrap();
                    summaries.remove(key).unwrap();
                }
                db.flush().unwrap();
            }
            Backend::Postgres => {
                let (name, _) = Backend::database(data_dir);
                for id in ids {
                    let sql = format!("UPDATE ludo_streams SET summary = NULL WHERE stream = '\\x{}' RETURNING 1", stream_hex(id));
                    let cluster = super::postgres::Cluster::shared().unwrap();
                    assert_eq!(cluster.psql(&name, &sql).lines().next(), Some("1"), "game {id} is stored");
                }
            }
        }
    }

    /// Flips the lowest bit of the middle byte of record `seq` of game `id`.
    pub fn flip_record_bit(data_dir: &Path, id: &str, seq: u64) {
        match Backend::current() {
            Backend::Sled => {
                let db = sled::open(data_dir).unwrap();
                let records = db.open_tree("records").unwrap();
                let mut stream = [0u8; 16];
                hex::decode_to_slice(stream_hex(id), &mut stream).unwrap();
                let key = ludo_storage::RecordKey::new(ludo_storage::StreamId(stream), seq).to_bytes();
                let mut value = records.get(key).unwrap().expect("the record is stored").to_vec();
                let middle = value.len() / 2;
                value[middle] ^= 0x01;
                records.insert(key, value).unwrap();
                db.flush().unwrap();
            }
            Backend::Postgres => {
                let (name, _) = Backend::database(data_dir);
                let sql = format!(
                    "UPDATE ludo_records SET bytes = set_byte(bytes, length(bytes) / 2, get_byte(bytes, length(bytes) / 2) # 1) \
                     WHERE stream = '\\x{}' AND seq = {seq} RETURNING 1",
                    stream_hex(id)
                );
                let cluster = super::postgres::Cluster::shared().unwrap();
                assert_eq!(cluster.psql(&name, &sql).lines().next(), Some("1"), "record {seq} of game {id} is stored");
            }
        }
    }
}

/// The operator token every test server takes imports with (see
/// [`Rest::import`]).
pub const OPERATOR_TOKEN: &str = "ludo_test_operator_0123456789abcdef0123456789abcdef";

/// The real server, serving on an ephemeral port over a store of
/// [`Backend::current`].
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// `http://addr`.
    pub base: String,
    /// Its data directory (on PostgreSQL, what names its database).
    pub data_dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Starts a server on `data_dir` (created if missing).
    pub async fn start(data_dir: &Path) -> TestServer {
        // These tests play thousands of moves from one address as fast as
        // they can: the per-address rate limits (tested on their own) would
        // only slow them down. Every other limit is the default.
        let config = ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() };
        TestServer::start_with(data_dir, config).await
    }

    /// Starts a server on `data_dir` with `config`'s limits.
    pub async fn start_with(data_dir: &Path, config: ludo_server::ServerConfig) -> TestServer {
        TestServer::start_configured(data_dir, config, |service| service).await
    }

    /// Starts a server on `data_dir` with `config`'s limits and its game
    /// service set up by `configure` (a webhook policy, say), after it takes
    /// imports with [`OPERATOR_TOKEN`].
    pub async fn start_configured(
        data_dir: &Path,
        config: ludo_server::ServerConfig,
        configure: impl FnOnce(GameService) -> GameService,
    ) -> TestServer {
        let store = Backend::current().open(data_dir).await;
        let service = Arc::new(configure(GameService::new(store, Arc::new(SystemClock)).with_operator_token(Some(OPERATOR_TOKEN))));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(ludo_server::run_with(listener, service, config, async move {
            let _ = stopped.await;
        }));
        TestServer { addr, base: format!("http://{addr}"), data_dir: data_dir.to_path_buf(), stop: Some(stop), task: Some(task) }
    }

    /// Stops the server gracefully and waits until the log is flushed and closed.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("server stopped cleanly");
        }
    }

    /// A REST client of this server.
    pub fn rest(&self) -> Rest {
        Rest { base: self.base.clone(), http: reqwest::Client::new() }
    }

    /// A gRPC client of this server.
    pub async fn grpc(&self) -> LudoClient<Channel> {
        LudoClient::new(self.channel().await)
    }

    /// A gRPC channel to this server.
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.base.clone()).expect("uri").connect().await.expect("connect")
    }
}

/// A REST answer: status, content type and JSON body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// `content-type` header.
    pub content_type: String,
    /// The body as JSON (`null` when empty or not JSON).
    pub body: Value,
}

/// A thin JSON client.
#[derive(Clone)]
pub struct Rest {
    base: String,
    http: reqwest::Client,
}

impl Rest {
    /// A client of the server at `base` (`http://host:port`).
    #[must_use]
    pub fn new(base: &str) -> Rest {
        Rest { base: base.to_string(), http: reqwest::Client::new() }
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let text = response.text().await.expect("body");
        Answer { status, content_type, body: serde_json::from_str(&text).unwrap_or(Value::Null) }
    }

    fn auth(request: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// GET `path` with an optional seat token.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Answer {
        self.send(Self::auth(self.http.get(format!("{}{path}", self.base)), token)).await
    }

    /// POST JSON to `path` with an optional seat token.
    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Answer {
        self.send(Self::auth(self.http.post(format!("{}{path}", self.base)).json(body), token)).await
    }

    /// PUT JSON to `path` with an optional seat token.
    pub async fn put(&self, path: &str, token: Option<&str>, body: &Value) -> Answer {
        self.send(Self::auth(self.http.put(format!("{}{path}", self.base)).json(body), token)).await
    }

    /// DELETE `path` with an optional seat token.
    pub async fn delete(&self, path: &str, token: Option<&str>) -> Answer {
        self.send(Self::auth(self.http.delete(format!("{}{path}", self.base)), token)).await
    }

    /// GET the raw bytes of `path`.
    pub async fn get_bytes(&self, path: &str, token: Option<&str>) -> (u16, Vec<u8>) {
        let response = Self::auth(self.http.get(format!("{}{path}", self.base)), token).send().await.expect("request");
        (response.status().as_u16(), response.bytes().await.expect("body").to_vec())
    }

    /// POST raw bytes (an export) to `path`.
    pub async fn post_bytes(&self, path: &str, body: Vec<u8>) -> Answer {
        self.send(self.http.post(format!("{}{path}", self.base)).header("content-type", "application/x-ndjson").body(body)).await
    }

    /// Imports an export, with the test servers' [`OPERATOR_TOKEN`].
    pub async fn import(&self, export: Vec<u8>) -> Answer {
        self.post_raw("/v1/games/import", Some(OPERATOR_TOKEN), "application/x-ndjson", export).await
    }

    /// Opens a Server-Sent Events stream.
    pub async fn sse(&self, path: &str, token: Option<&str>, last_event_id: Option<u64>) -> Sse {
        let mut request = Self::auth(self.http.get(format!("{}{path}", self.base)), token);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = request.send().await.expect("stream request");
        assert_eq!(response.status().as_u16(), 200, "stream refused");
        Sse { response, buffer: String::new() }
    }

    /// POST raw bytes with a content type.
    pub async fn post_raw(&self, path: &str, token: Option<&str>, content_type: &str, body: impl Into<reqwest::Body>) -> Answer {
        let request = self.http.post(format!("{}{path}", self.base)).header("content-type", content_type).body(body);
        self.send(Self::auth(request, token)).await
    }

    /// Creates a game and returns the created answer's body.
    pub async fn create(&self, kind: &str, players: &[&str], options: Value) -> Value {
        let answer = self.post("/v1/games", None, &json!({"kind": kind, "players": players, "options": options})).await;
        assert_eq!(answer.status, 201, "create: {answer:?}");
        answer.body
    }

    /// Plays `game` with each to-move seat choosing a legal move by `choose`,
    /// for at most `max_moves` moves; returns how many were played.
    pub async fn play(&self, game: &Value, max_moves: usize, mut choose: impl FnMut(&[Value]) -> usize) -> usize {
        let id = game["id"].as_str().expect("id");
        let mut played = 0;
        while played < max_moves {
            let state = self.get(&format!("/v1/games/{id}"), None).await.body;
            if state["status"]["state"] == "finished" {
                break;
            }
            let seat = state["status"]["to_move"][0].as_u64().expect("a seat to move") as usize;
            let token = game["seats"][seat]["token"].as_str().expect("token");
            let legal = self.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
            let moves = legal["moves"].as_array().expect("moves").clone();
            assert!(!moves.is_empty(), "seat {seat} is to move but has no legal move");
            let mv = moves[choose(&moves)].clone();
            let answer =
                self.post(&format!("/v1/games/{id}/moves"), Some(token), &json!({"move": mv, "expected_version": state["version"]})).await;
            assert_eq!(answer.status, 200, "a listed legal move was refused: {answer:?}");
            played += 1;
        }
        played
    }

    /// Polls game `id` (as a spectator) until `done` holds of its state,
    /// for at most `patience` (then fails, saying it was not yet `what`); the state.
    pub async fn wait_for(&self, id: &str, what: &str, patience: std::time::Duration, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + patience;
        loop {
            let answer = self.get(&format!("/v1/games/{id}"), None).await;
            assert_eq!(answer.status, 200, "{answer:?}");
            if done(&answer.body) {
                return answer.body;
            }
            assert!(std::time::Instant::now() < deadline, "game {id}: still not {what} after {patience:?}; now {}", answer.body["status"]);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Every record of a game's log as `token` sees it.
    pub async fn events(&self, id: &str, token: Option<&str>) -> Vec<Value> {
        let mut events = Vec::new();
        let mut from = 0;
        loop {
            let page = self.get(&format!("/v1/games/{id}/events?from={from}&limit=100"), token).await;
            assert_eq!(page.status, 200, "{page:?}");
            events.extend(page.body["events"].as_array().expect("events").iter().cloned());
            match page.body["next_from"].as_u64() {
                Some(next) => from = next,
                None => return events,
            }
        }
    }
}

/// Sends `head`, then (if `chunked_bytes` > 0) that many bytes in chunks
/// until the server stops reading, and returns the answer's status and
/// JSON body.
pub async fn raw_exchange(addr: std::net::SocketAddr, head: &[u8], chunked_bytes: usize) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 1 << 20, "x".repeat(1 << 20));
    let mut sent = 0;
    while sent < chunked_bytes {
        // The server answers and closes once the limit is passed: stop writing then.
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
        sent += 1 << 20;
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    let status = text.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").and_then(|(_, body)| serde_json::from_str(body).ok()).unwrap_or(Value::Null);
    (status, body)
}

/// A deterministic chooser of legal moves (xorshift), so runs are repeatable.
pub fn chooser(seed: u64) -> impl FnMut(&[Value]) -> usize {
    let mut state = seed | 1;
    move |moves| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % moves.len() as u64) as usize
    }
}

/// Replays a finished game's log through the engine `E` from its published
/// seed, independently of the server, and returns the engine's final status.
///
/// # Panics
/// When the seed is not published or the engine refuses a logged move.
pub fn engine_replay<E>(state: &Value, events: &[Value]) -> Status
where
    E: Engine<Options: serde::de::DeserializeOwned, Move: serde::de::DeserializeOwned>,
{
    let mut seed = [0u8; 32];
    hex::decode_to_slice(state["seed"].as_str().expect("a finished game publishes its seed"), &mut seed).unwrap();
    let created = &events[0]["game"];
    let options: E::Options = serde_json::from_value(created["options"].clone()).expect("recorded options");
    let players = created["seats"].as_array().unwrap().len();
    let (mut game, _) = E::new(&Setup { players, options, seed: Seed(seed) }).expect("the recorded set-up");
    for event in &events[1..] {
        let seat = Seat(event["seat"].as_u64().unwrap() as u8);
        let mv: E::Move = serde_json::from_value(event["move"].clone()).expect("a logged move");
        game.apply(seat, &mv).expect("the engine accepts every logged move");
    }
    game.status()
}

/// Plays `created` over gRPC, each to-move seat choosing among its listed
/// legal moves by `choose`, for at most `max_moves`; returns the moves played.
pub async fn grpc_play(
    grpc: &mut LudoClient<Channel>,
    created: &ludo_proto::v1::CreateGameResponse,
    max_moves: usize,
    mut choose: impl FnMut(&[Value]) -> usize,
) -> usize {
    use ludo_proto::v1 as pb;
    let mut played = 0;
    while played < max_moves {
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.expect("get").into_inner();
        let Some(pb::status::State::InProgress(progress)) = state.status.expect("status").state else { break };
        let seat = progress.to_move[0] as usize;
        let token = &created.seats[seat].token;
        let legal =
            grpc.list_legal_moves(authed(pb::ListLegalMovesRequest { id: created.id.clone() }, token)).await.expect("legal").into_inner();
        assert_eq!(legal.seat as usize, seat);
        assert!(!legal.moves.is_empty(), "seat {seat} is to move but has no legal move");
        // The chooser only looks at the list's length.
        let mv = legal.moves[choose(&vec![Value::Null; legal.moves.len()])].clone();
        let request = pb::SubmitMoveRequest {
            id: created.id.clone(),
            r#move: Some(mv),
            expected_version: Some(state.version),
            request_id: None,
            omit_view: false,
        };
        let accepted = grpc.submit_move(authed(request, token)).await.expect("a listed legal move is accepted").into_inner();
        assert_eq!(accepted.version, state.version + 1);
        played += 1;
    }
    played
}

/// A gRPC request carrying a seat's token.
pub fn authed<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().expect("ascii token"));
    request
}

/// A Server-Sent Events stream being read.
pub struct Sse {
    response: reqwest::Response,
    buffer: String,
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// `id:`
    pub id: Option<String>,
    /// `event:`
    pub event: String,
    /// `data:`, parsed as JSON.
    pub data: Value,
}

impl Sse {
    /// The next event, or None when the stream ends.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::from("message"), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some(SseEvent { id, event, data: serde_json::from_str(&data).expect("event data is JSON") });
            }
            let chunk = self.response.chunk().await.expect("stream read")?;
            self.buffer.push_str(std::str::from_utf8(&chunk).expect("utf-8 stream"));
        }
    }
}

/// A gRPC-Web server stream (HTTP/1.1, binary frames) being read, as a
/// browser's client reads it.
pub struct GrpcWebStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
    ended: bool,
}

impl GrpcWebStream {
    /// Calls `method` (`/ludo.v1.Ludo/WatchGame`) at `base` with `message`
    /// (its protobuf bytes) and `token` as a bearer.
    pub async fn open(base: &str, method: &str, token: Option<&str>, message: &impl prost::Message) -> GrpcWebStream {
        let body = message.encode_to_vec();
        let mut framed = vec![0];
        framed.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
        framed.extend_from_slice(&body);
        let http = reqwest::Client::builder().http1_only().build().unwrap();
        let mut request =
            http.post(format!("{base}{method}")).header("content-type", "application/grpc-web+proto").header("x-grpc-web", "1");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.body(framed).send().await.expect("a gRPC-Web call");
        assert_eq!(response.status(), 200, "{method}");
        GrpcWebStream { response, buffer: Vec::new(), ended: false }
    }

    /// The next message (`Ok`), or the call's final status (`Err`: from the
    /// trailers frame, or a trailers-only answer's headers); `None` after it.
    pub async fn next<M: prost::Message + Default>(&mut self) -> Option<Result<M, tonic::Status>> {
        if self.ended {
            return None;
        }
        loop {
            if self.buffer.len() >= 5 {
                let len = u32::from_be_bytes([self.buffer[1], self.buffer[2], self.buffer[3], self.buffer[4]]) as usize;
                if self.buffer.len() >= 5 + len {
                    let flag = self.buffer[0];
                    let frame: Vec<u8> = self.buffer.drain(..5 + len).skip(5).collect();
                    if flag & 0x80 == 0 {
                        return Some(Ok(M::decode(&frame[..]).expect("a message of the call's type")));
                    }
                    let mut trailers = reqwest::header::HeaderMap::new();
                    for line in String::from_utf8(frame).unwrap().split("\r\n").filter(|line| !line.is_empty()) {
                        let (name, value) = line.split_once(':').unwrap();
                        trailers.insert(
                            reqwest::header::HeaderName::try_from(name.trim()).unwrap(),
                            reqwest::header::HeaderValue::try_from(value.trim()).unwrap(),
                        );
                    }
                    self.ended = true;
                    return Some(Err(tonic::Status::from_header_map(&trailers).expect("a grpc-status in the trailers")));
                }
            }
            match self.response.chunk().await.expect("stream read") {
                Some(chunk) => self.buffer.extend_from_slice(&chunk),
                None => {
                    // A trailers-only answer carries its status in its headers.
                    self.ended = true;
                    return tonic::Status::from_header_map(self.response.headers()).map(Err);
                }
            }
        }
    }
}

/// Kardinal & König: every private card in `value` (a view, a log page, an
/// update …) that `viewer` (a seat, or None for a spectator) must not see.
#[must_use]
pub fn kardinal_leaks(value: &Value, viewer: Option<usize>) -> Vec<String> {
    let mut out = Vec::new();
    kardinal_walk(value, viewer, &mut out);
    out
}

fn kardinal_walk(value: &Value, viewer: Option<usize>, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let owner = map.get("seat").and_then(Value::as_u64).map(|s| s as usize);
            let private = match map.get("type").and_then(Value::as_str) {
                Some("dealt") => map.get("cards"),
                Some("drew_from_deck") => map.get("card"),
                _ if map.contains_key("hand_size") => map.get("hand"),
                _ => None,
            };
            if let Some(private) = private
                && !private.is_null()
                && owner != viewer
            {
                out.push(format!("seat {owner:?}'s private {private} shown to {viewer:?}"));
            }
            if map.get("deck").is_some_and(|deck| !deck.is_null()) {
                out.push(format!("the deck order shown to {viewer:?}"));
            }
            map.values().for_each(|v| kardinal_walk(v, viewer, out));
        }
        Value::Array(items) => items.iter().for_each(|v| kardinal_walk(v, viewer, out)),
        _ => {}
    }
}

/// Battle 13: every knight (held, dealt, in a deal effect) of a seat not in
/// `allowed` that `value` shows.
#[must_use]
pub fn battle13_leaks(value: &Value, allowed: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    battle13_walk(value, allowed, &mut out);
    out
}

fn battle13_walk(value: &Value, allowed: &[usize], out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let owner = map.get("seat").and_then(Value::as_u64).map(|s| s as usize);
            for key in ["held", "dealt", "knights"] {
                if let (Some(private), Some(owner)) = (map.get(key), owner)
                    && !private.is_null()
                    && !allowed.contains(&owner)
                {
                    out.push(format!("seat {owner}'s {key} {private} shown to a viewer allowed {allowed:?}"));
                }
            }
            map.values().for_each(|v| battle13_walk(v, allowed, out));
        }
        Value::Array(items) => items.iter().for_each(|v| battle13_walk(v, allowed, out)),
        _ => {}
    }
}

/// The served OpenAPI document as a contract: every answer's status must be
/// documented for its operation, and its JSON body must validate against the
/// documented schema (JSON Schema 2020-12, as OpenAPI 3.1 uses; a `oneOf`
/// must match exactly one member).
pub struct Contract {
    doc: Value,
    validators: std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<jsonschema::Validator>>>,
    /// Every (method, path, status) checked, to say what was covered.
    pub seen: std::sync::Mutex<std::collections::BTreeSet<(String, String, u16)>>,
}

const DOC_URI: &str = "urn:ludotheque:openapi";

impl Contract {
    /// The contract of the document `doc`.
    pub fn new(doc: Value) -> Contract {
        Contract { doc, validators: Default::default(), seen: Default::default() }
    }

    /// The document's path template that `path` (query stripped) falls under.
    fn template(&self, path: &str) -> String {
        let path = path.split('?').next().unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        let paths = self.doc["paths"].as_object().expect("paths");
        let matches = |template: &str| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len() && parts.iter().zip(&segments).all(|(t, s)| t.starts_with('{') || t == s)
        };
        // A literal path wins over a template (`/v1/games/import` over `/v1/games/{id}`).
        let mut found: Vec<&String> = paths.keys().filter(|t| matches(t)).collect();
        found.sort_by_key(|t| t.matches('{').count());
        found.first().unwrap_or_else(|| panic!("{path} is not a documented path")).to_string()
    }

    /// Checks one answer (JSON bodies only; `content_type` as received).
    pub fn check(&self, method: &str, path: &str, status: u16, content_type: &str, body: &Value) {
        let template = self.template(path);
        let escaped = template.replace('~', "~0").replace('/', "~1");
        let mut pointer = format!("/paths/{escaped}/{method}/responses/{status}");
        let response = self.doc.pointer(&pointer).unwrap_or_else(|| panic!("{method} {template}: status {status} is not documented"));
        if let Some(shared) = response.get("$ref").and_then(Value::as_str) {
            pointer = shared.trim_start_matches('#').to_string();
        }
        self.seen.lock().unwrap().insert((method.to_string(), template.clone(), status));
        let media = content_type.split(';').next().unwrap_or("").trim();
        // JSON bodies only: `application/json` and `…+json` (not JSON Lines).
        if media != "application/json" && !media.ends_with("+json") {
            return;
        }
        let media_pointer = format!("{pointer}/content/{}/schema", media.replace('/', "~1"));
        assert!(self.doc.pointer(&media_pointer).is_some(), "{method} {template} {status}: no schema for {media}");
        self.validate(&media_pointer, body, &format!("{method} {path} {status}"));
    }

    /// Validates `value` against the schema at `pointer` in the document.
    pub fn validate(&self, pointer: &str, value: &Value, what: &str) {
        let errors = self.errors(pointer, value);
        assert!(errors.is_empty(), "{what}: the answer does not match its documented schema ({pointer}):\n{}\n{value}", errors.join("\n"));
    }

    /// Why `value` does not validate against the schema at `pointer` (empty when it does).
    pub fn errors(&self, pointer: &str, value: &Value) -> Vec<String> {
        let validator = {
            let mut validators = self.validators.lock().unwrap();
            std::sync::Arc::clone(validators.entry(pointer.to_string()).or_insert_with(|| {
                let resource = jsonschema::Draft::Draft202012.create_resource(self.doc.clone());
                // A JSON pointer in a URI fragment: `{` and `}` percent-encoded.
                let fragment = pointer.replace('{', "%7B").replace('}', "%7D");
                let schema = json!({ "$ref": format!("{DOC_URI}#{fragment}") });
                std::sync::Arc::new(
                    jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft202012)
                        .with_resource(DOC_URI, resource)
                        .build(&schema)
                        .unwrap_or_else(|e| panic!("the schema at {pointer} does not compile: {e}")),
                )
            }))
        };
        validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).take(5).collect()
    }
}
