//! Shared by the tests that drive the real `ludo` binary: start it on an
//! ephemeral port, read its JSON log lines, stop it, and a few REST calls.
#![allow(dead_code)] // each test binary uses its own share of these helpers

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running `ludo serve` and the address it reported.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:port`.
    pub base: String,
    /// `127.0.0.1:port`.
    pub addr: std::net::SocketAddr,
    pub lines: std::sync::mpsc::Receiver<Value>,
    /// The log lines before the one saying where it listens.
    pub early: Vec<Value>,
}

/// Starts `ludo serve` on `data_dir` with no extra flags.
pub fn start(data_dir: &Path) -> Server {
    start_with(data_dir, &[])
}

/// Starts `ludo serve --listen 127.0.0.1:0 --data-dir DIR ARGS…` and waits
/// for the line saying where it listens.
pub fn start_with(data_dir: &Path, args: &[&str]) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ludo"));
    command.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(data_dir).args(args);
    start_command(&mut command)
}

/// Every per-address limit off: the replica tests' traffic comes from one
/// address (a load balancer's, or the test's own, ending games at full speed).
pub const UNTHROTTLED: [&str; 8] =
    ["--rate-create", "off", "--rate-records", "off", "--rate-moves-per-ip", "off", "--rate-moves-per-seat", "off"];

/// Starts a replica: `ludo serve` on `data_dir` with its log in `store`
/// (a `postgres://` URL), unthrottled.
pub fn replica(data_dir: &Path, store: &str) -> Server {
    start_with(data_dir, &[&["--store", store][..], &UNTHROTTLED[..]].concat())
}

/// The operator token every test server takes imports with.
#[allow(dead_code)]
pub const OPERATOR_TOKEN: &str = "ludo_test_operator_0123456789abcdef0123456789abcdef";

/// Starts `command` (a `ludo serve` on port 0, perhaps behind a shell) and
/// waits for the line saying where it listens. It takes imports with
/// [`OPERATOR_TOKEN`].
pub fn start_command(command: &mut Command) -> Server {
    let mut child = command
        .env("LUDO_OPERATOR_TOKEN", OPERATOR_TOKEN)
        .env("LUDO_LOG_FORMAT", "json")
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("start ludo");
    let stderr = child.stderr.take().unwrap();
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                let _ = send.send(value);
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut early = Vec::new();
    loop {
        let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) else {
            let _ = child.kill();
            let status = child.wait();
            panic!("ludo never logged where it listens (exit: {status:?})");
        };
        if line["message"] == "serving REST and gRPC" {
            let addr: std::net::SocketAddr = line["addr"].as_str().unwrap().parse().unwrap();
            return Server { child, base: format!("http://{addr}"), addr, lines, early };
        }
        early.push(line);
    }
}

impl Server {
    /// Sends SIGTERM and waits for a clean exit, returning the log lines seen.
    pub fn terminate(mut self) -> Vec<Value> {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().expect("kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let exit = loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                break exit;
            }
            assert!(Instant::now() < deadline, "ludo did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(exit.success(), "ludo exited with {exit}");
        self.lines.try_iter().collect()
    }

    /// The value of an OpenMetrics sample (`name` exactly as printed, labels
    /// included); 0 for a labelled sample of a known family not counted yet.
    pub async fn metric(&self, name: &str) -> f64 {
        let text = reqwest::get(format!("{}/metrics", self.base)).await.unwrap().text().await.unwrap();
        let family = name.split('{').next().unwrap().trim_end_matches("_total");
        match text.lines().find_map(|line| line.strip_prefix(name).and_then(|rest| rest.strip_prefix(' '))) {
            Some(value) => value.trim().parse().unwrap(),
            None if name.contains('{') && text.contains(&format!("# TYPE {family} ")) => 0.0,
            None => panic!("no metric {name} in\n{text}"),
        }
    }

    /// Polls `metric` until `done` holds or `within` passes; returns the last value.
    pub async fn metric_until(&self, name: &str, within: Duration, done: impl Fn(f64) -> bool) -> f64 {
        let deadline = Instant::now() + within;
        loop {
            let value = self.metric(name).await;
            if done(value) || Instant::now() > deadline {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A test that failed before terminating must not leave a server behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates a game of `kind` for `players` and returns the answer.
pub async fn create(http: &reqwest::Client, base: &str, kind: &str, players: &[&str]) -> Value {
    let answer = http.post(format!("{base}/v1/games")).json(&json!({"kind": kind, "players": players})).send().await.unwrap();
    assert_eq!(answer.status(), 201, "{}", answer.text().await.unwrap());
    answer.json().await.unwrap()
}

/// Plays one move: the first legal move of the seat to move. Returns false
/// when the game is over.
pub async fn play_one(http: &reqwest::Client, base: &str, created: &Value) -> bool {
    let id = created["id"].as_str().unwrap();
    let state: Value = http.get(format!("{base}/v1/games/{id}")).send().await.unwrap().json().await.unwrap();
    if state["status"]["state"] == "finished" {
        return false;
    }
    let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
    let token = created["seats"][seat]["token"].as_str().unwrap();
    let legal: Value = http.get(format!("{base}/v1/games/{id}/legal-moves")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    let answer =
        http.post(format!("{base}/v1/games/{id}/moves")).bearer_auth(token).json(&json!({"move": legal["moves"][0]})).send().await.unwrap();
    assert_eq!(answer.status(), 200, "{}", answer.text().await.unwrap());
    true
}

/// A two-seat Cardinal game ended on `base` by seat 1's resignation: its
/// id and the receipt the resignation answered with.
pub async fn resigned_game(http: &reqwest::Client, base: &str) -> (String, Value) {
    let game = create(http, base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap().to_string();
    let token = game["seats"][1]["token"].as_str().unwrap();
    let answer = http.post(format!("{base}/v1/games/{id}/resign")).bearer_auth(token).json(&json!({})).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let body: Value = answer.json().await.unwrap();
    assert!(body["receipt"].is_object(), "the resignation that ended game {id} on {base} carries its receipt: {body}");
    (id, body["receipt"].clone())
}

/// Plays a game to its end over REST with each seat's first legal move.
pub async fn play_out(http: &reqwest::Client, base: &str, created: &Value) {
    while play_one(http, base, created).await {}
}
