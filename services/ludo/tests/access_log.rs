//! The log as an operator gets it, from the real binary with its stderr and
//! stdout redirected to a file: no colour codes in a file, one access line
//! per request (REST, a live stream, gRPC, web pages), matched by the
//! request id each answer echoes, with the route's template; and none of
//! the secrets the requests carried or got (seat and admin tokens,
//! invitations, a stream ticket, the operator's token) anywhere in it.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{OPERATOR_TOKEN, UNTHROTTLED};
use ludo_proto::v1 as pb;
use ludo_proto::v1::ludo_client::LudoClient;
use serde_json::{Value, json};

/// A `ludo serve` whose stderr and stdout go to one file.
struct Logged {
    child: Child,
    base: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Logged {
    /// Starts it with `LUDO_LOG_FORMAT` set to `format` (unset for `None`)
    /// and `extra` flags, and waits for the line saying where it listens.
    fn start(format: Option<&str>, extra: &[&str]) -> Logged {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("ludo.log");
        let file = std::fs::File::create(&log).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_ludo"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(UNTHROTTLED)
            .args(extra)
            .env("LUDO_OPERATOR_TOKEN", OPERATOR_TOKEN)
            .env("RUST_LOG", "info")
            .env_remove("NO_COLOR")
            .env_remove("LUDO_ACCESS_LOG")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file);
        match format {
            Some(format) => command.env("LUDO_LOG_FORMAT", format),
            None => command.env_remove("LUDO_LOG_FORMAT"),
        };
        let child = command.spawn().expect("start ludo");
        let mut server = Logged { child, base: String::new(), log, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        server.base = loop {
            let text = std::fs::read_to_string(&server.log).unwrap();
            if let Some(addr) = text.lines().find(|line| line.contains("serving REST and gRPC")).and_then(listening_on) {
                break format!("http://{addr}");
            }
            assert!(Instant::now() < deadline && server.child.try_wait().unwrap().is_none(), "ludo never said where it listens:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        };
        server
    }

    /// Stops it with SIGTERM and returns the whole file.
    fn stop(mut self) -> Vec<u8> {
        assert!(Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "ludo did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::read(&self.log).unwrap()
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in the line saying where the server listens (text or JSON).
fn listening_on(line: &str) -> Option<String> {
    if let Ok(value) = serde_json::from_str::<Value>(line) {
        return value["addr"].as_str().map(str::to_string);
    }
    line.split_whitespace().find_map(|word| word.strip_prefix("addr=")).map(str::to_string)
}

/// One request the test made: the id its answer carried, the route and
/// status its access line must say.
#[derive(Debug)]
struct Sent {
    id: String,
    route: Option<String>,
    status: u16,
    grpc_status: Option<u16>,
}

/// What the test sent and saw: every request, and every secret.
#[derive(Default)]
struct Record {
    sent: Vec<Sent>,
    secrets: Vec<String>,
}

impl Record {
    fn secret(&mut self, value: &Value) -> String {
        let secret = value.as_str().unwrap_or_else(|| panic!("a secret, got {value}")).to_string();
        assert!(secret.len() >= 16, "{secret}");
        self.secrets.push(secret.clone());
        secret
    }

    /// Sends `request` with a request id of the test's (or `id`: `None`
    /// sends none) and checks the answer echoes it (or carries one made by
    /// the server, which is then what the log must say).
    async fn send(&mut self, request: reqwest::RequestBuilder, id: Option<&str>, route: Option<&str>) -> reqwest::Response {
        let own = id.map(str::to_string);
        let request = match &own {
            Some(id) => request.header("x-request-id", id),
            None => request,
        };
        let answer = request.send().await.unwrap();
        let echoed = answer.headers().get("x-request-id").expect("every answer has x-request-id").to_str().unwrap().to_string();
        if let Some(own) = own.filter(|own| is_sane(own)) {
            assert_eq!(echoed, own, "a sane id comes back as it was sent");
        } else {
            assert!(echoed.len() == 20 && echoed.bytes().all(|b| b.is_ascii_hexdigit()), "a made id: {echoed}");
        }
        self.sent.push(Sent { id: echoed, route: route.map(str::to_string), status: answer.status().as_u16(), grpc_status: None });
        answer
    }

    /// Records a gRPC call's answer metadata.
    fn grpc(&mut self, metadata: &tonic::metadata::MetadataMap, route: &str, grpc_status: u16) {
        let id = metadata.get("x-request-id").expect("gRPC answers carry x-request-id").to_str().unwrap().to_string();
        self.sent.push(Sent { id, route: Some(route.into()), status: 200, grpc_status: Some(grpc_status) });
    }
}

fn is_sane(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic())
}

fn with_id<T>(message: T, id: &str, token: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert("x-request-id", id.parse().unwrap());
    if let Some(token) = token {
        request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

/// Every kind of request there is, each with its own request id.
async fn exercise(base: &str) -> Record {
    let http = reqwest::Client::new();
    let mut r = Record::default();
    let page = r.send(http.get(format!("{base}/")), Some("web-index"), Some("/")).await;
    assert_eq!(page.status(), 200);

    // A game with an open seat: a token, the admin's token, an invitation.
    let created: Value = r
        .send(
            http.post(format!("{base}/v1/games")).json(&json!({"kind": "cardinal", "players": ["Ann", null]})),
            Some("create-1"),
            Some("/v1/games"),
        )
        .await
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    let ann = r.secret(&created["seats"][0]["token"]);
    r.secret(&created["admin_token"]);
    let open = created["invitations"].as_array().unwrap().iter().find(|i| i["open"] == true).expect("an open seat's invitation");
    let invitation = r.secret(&open["code"]);
    let join_page = r.send(http.get(format!("{base}/games/{id}/join")), Some("web-join"), Some("/games/{id}/{page}")).await;
    assert_eq!(join_page.status(), 200);
    let joined: Value = r
        .send(
            http.post(format!("{base}/v1/games/{id}/join")).json(&json!({"name": "Bob", "invitation": invitation})),
            Some("join-1"),
            Some("/v1/games/{id}/join"),
        )
        .await
        .json()
        .await
        .unwrap();
    let bob = r.secret(&joined["token"]);

    // A browser's way to a live stream: a ticket, in the query string.
    let ticket: Value = r
        .send(
            http.post(format!("{base}/v1/games/{id}/stream-tickets")).bearer_auth(&bob),
            Some("ticket-1"),
            Some("/v1/games/{id}/stream-tickets"),
        )
        .await
        .json()
        .await
        .unwrap();
    let ticket = r.secret(&ticket["ticket"]);
    let stream = r
        .send(http.get(format!("{base}/v1/games/{id}/stream?ticket={ticket}&from=0")), Some("stream-1"), Some("/v1/games/{id}/stream"))
        .await;
    assert_eq!(stream.status(), 200);
    let stream = tokio::spawn(stream.text());

    // Moves, with the seats' tokens.
    for n in 0..2 {
        let state: Value = r
            .send(http.get(format!("{base}/v1/games/{id}")), Some(&format!("read-{n}")), Some("/v1/games/{id}"))
            .await
            .json()
            .await
            .unwrap();
        let seat = state["status"]["to_move"][0].as_u64().unwrap();
        let token = if seat == 0 { &ann } else { &bob };
        let legal: Value = r
            .send(
                http.get(format!("{base}/v1/games/{id}/legal-moves")).bearer_auth(token),
                Some(&format!("legal-{n}")),
                Some("/v1/games/{id}/legal-moves"),
            )
            .await
            .json()
            .await
            .unwrap();
        let moved = r
            .send(
                http.post(format!("{base}/v1/games/{id}/moves")).bearer_auth(token).json(&json!({"move": legal["moves"][0]})),
                Some(&format!("move-{n}")),
                Some("/v1/games/{id}/moves"),
            )
            .await;
        assert_eq!(moved.status(), 200);
    }
    // A token where it does not belong (a query string): the route is logged, never the URL.
    let misplaced = r.send(http.get(format!("{base}/v1/games/{id}?token={ann}")), Some("misplaced"), Some("/v1/games/{id}")).await;
    assert_eq!(misplaced.status(), 200);
    // …nor a path no route has, whatever it carries.
    let nowhere = r.send(http.get(format!("{base}/v1/games/{id}/join/{invitation}")), Some("no-route"), None).await;
    assert_eq!(nowhere.status(), 404);
    // Ids the server makes: none sent, and one that is not sane.
    r.send(http.get(format!("{base}/healthz")), None, Some("/healthz")).await;
    r.send(http.get(format!("{base}/healthz")), Some("two words"), Some("/healthz")).await;

    // The end: the stream sends its last record and `end`, and stops.
    let resigned = r
        .send(
            http.post(format!("{base}/v1/games/{id}/resign")).bearer_auth(&ann).json(&json!({})),
            Some("resign"),
            Some("/v1/games/{id}/resign"),
        )
        .await;
    assert_eq!(resigned.status(), 200);
    let streamed = tokio::time::timeout(Duration::from_secs(30), stream).await.expect("the stream ends").unwrap().unwrap();
    assert!(streamed.contains("event: end"), "{streamed}");

    // Its export, imported with the operator's token (this server has it: 409).
    let export = r.send(http.get(format!("{base}/v1/games/{id}/export")), Some("export"), Some("/v1/games/{id}/export")).await;
    let export = export.bytes().await.unwrap();
    r.secrets.push(OPERATOR_TOKEN.to_string());
    let imported = r
        .send(
            http.post(format!("{base}/v1/games/import"))
                .bearer_auth(OPERATOR_TOKEN)
                .header("content-type", "application/x-ndjson")
                .body(export),
            Some("import"),
            Some("/v1/games/import"),
        )
        .await;
    assert_eq!(imported.status(), 409, "{}", imported.text().await.unwrap());

    // The admin's token cancels another game.
    let other: Value = r
        .send(
            http.post(format!("{base}/v1/games")).json(&json!({"kind": "cardinal", "players": ["Cy", null]})),
            Some("create-2"),
            Some("/v1/games"),
        )
        .await
        .json()
        .await
        .unwrap();
    let other_id = other["id"].as_str().unwrap().to_string();
    let admin = r.secret(&other["admin_token"]);
    r.secret(&other["seats"][0]["token"]);
    for invitation in other["invitations"].as_array().unwrap() {
        r.secret(&invitation["code"]);
    }
    let cancelled = r
        .send(http.post(format!("{base}/v1/games/{other_id}/cancel")).bearer_auth(&admin), Some("cancel"), Some("/v1/games/{id}/cancel"))
        .await;
    assert_eq!(cancelled.status(), 200);

    // gRPC: a read as a seat, a refusal, the health service.
    let channel = tonic::transport::Channel::from_shared(base.to_string()).unwrap().connect().await.unwrap();
    let mut grpc = LudoClient::new(channel.clone());
    let read = grpc.get_game(with_id(pb::GetGameRequest { id: id.clone() }, "grpc-read", Some(&bob))).await.expect("GetGame");
    r.grpc(read.metadata(), "/ludo.v1.Ludo/GetGame", 0);
    let missing = grpc
        .get_game(with_id(pb::GetGameRequest { id: "0190b5a4-0000-7000-8000-000000000000".into() }, "grpc-missing", None))
        .await
        .expect_err("no such game");
    assert_eq!(missing.code(), tonic::Code::NotFound);
    r.grpc(missing.metadata(), "/ludo.v1.Ludo/GetGame", tonic::Code::NotFound as u16);
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let checked =
        health.check(with_id(tonic_health::pb::HealthCheckRequest { service: String::new() }, "grpc-health", None)).await.expect("Check");
    r.grpc(checked.metadata(), "/grpc.health.v1.Health/Check", 0);
    r
}

/// An access line's fields, from text (`key=value` words after the target)
/// or JSON.
fn access_fields(line: &str) -> Option<BTreeMap<String, Value>> {
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(line) {
        return (object.get("target") == Some(&json!("ludo::access"))).then(|| object.into_iter().collect());
    }
    let (_, fields) = line.split_once(" ludo::access: ")?;
    Some(
        fields
            .split_whitespace()
            .map(|word| {
                let (key, value) = word.split_once('=').unwrap_or_else(|| panic!("a key=value word, got {word:?} in {line}"));
                let value = value.parse::<f64>().map_or_else(|_| json!(value), |number| json!(number));
                (key.to_string(), value)
            })
            .collect(),
    )
}

/// The checks on a whole log file, after `record`'s requests.
fn check(log: &[u8], record: &Record, json: bool) {
    let text = std::str::from_utf8(log).expect("the log is UTF-8");
    assert!(!log.contains(&0x1b), "no escape (colour) codes in a file:\n{text}");
    for secret in &record.secrets {
        assert!(!text.contains(secret.as_str()), "a secret ({}…) is in the log:\n{text}", &secret[..12]);
    }
    if json {
        for line in text.lines() {
            serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        }
    }
    let access: Vec<BTreeMap<String, Value>> = text.lines().filter_map(access_fields).collect();
    assert_eq!(access.len(), record.sent.len(), "one access line per request:\n{text}");
    for sent in &record.sent {
        let lines: Vec<_> = access.iter().filter(|fields| fields.get("request_id") == Some(&json!(sent.id))).collect();
        assert_eq!(lines.len(), 1, "one line for {sent:?}:\n{text}");
        let line = lines[0];
        assert_eq!(line.get("route").and_then(Value::as_str), sent.route.as_deref(), "{sent:?}: {line:?}");
        assert_eq!(line.get("status").and_then(Value::as_f64), Some(f64::from(sent.status)), "{sent:?}: {line:?}");
        assert_eq!(line.get("grpc_status").and_then(Value::as_f64), sent.grpc_status.map(f64::from), "{sent:?}: {line:?}");
        assert_eq!(line.get("client").and_then(Value::as_str), Some("127.0.0.1"), "{line:?}");
        assert!(line.get("method").and_then(Value::as_str).is_some_and(|m| ["GET", "POST"].contains(&m)), "{line:?}");
        assert!(line.get("duration_ms").and_then(Value::as_f64).is_some_and(|ms| ms >= 0.0), "{line:?}");
        assert!(line.get("bytes").and_then(Value::as_f64).is_some(), "{line:?}");
        if json {
            assert!(line["status"].is_u64() && line["bytes"].is_u64() && line["duration_ms"].is_number(), "JSON numbers: {line:?}");
            assert_eq!(line["level"], "INFO", "{line:?}");
        }
    }
    // A stream's line is written at its end, with every byte it sent.
    let stream = access.iter().find(|fields| fields.get("request_id") == Some(&json!("stream-1"))).unwrap();
    assert!(stream["bytes"].as_f64().unwrap() > 100.0, "{stream:?}");
}

async fn run(format: Option<&str>) {
    let server = Logged::start(format, &[]);
    let record = exercise(&server.base).await;
    let log = server.stop();
    check(&log, &record, format == Some("json"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_file_gets_plain_text_an_access_line_per_request_and_no_secret() {
    run(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_and_its_old_name_human_are_plain_in_a_file() {
    run(Some("text")).await;
    run(Some("human")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_parse_and_carry_the_access_fields_as_json() {
    run(Some("json")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_access_log_off_answers_still_carry_their_request_id() {
    let server = Logged::start(Some("text"), &["--access-log", "off"]);
    let answer = reqwest::Client::new().get(format!("{}/healthz", server.base)).header("x-request-id", "kept").send().await.unwrap();
    assert_eq!(answer.headers()["x-request-id"], "kept");
    let log = server.stop();
    let text = String::from_utf8(log).unwrap();
    assert!(text.contains("log flushed and closed"), "{text}");
    assert!(!text.contains("ludo::access"), "{text}");
}
