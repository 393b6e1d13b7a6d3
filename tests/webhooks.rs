//! Turn notifications for apps, end to end: a game's webhook is called by
//! the real server, over a real socket, on a local receiver, when it
//! becomes a seat's turn and when the game ends; every call is signed
//! (checked here with an HMAC implementation of our own choosing), a call
//! the receiver fails is tried again, a receiver that does not answer holds
//! up no move, and webhooks cannot reach internal addresses unless the
//! server's operator allows them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use ludo_blackbox::{Rest, TestServer};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// How long any one wait of these tests may last before it fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// One call the receiver took.
#[derive(Clone, Debug)]
struct Call {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Call {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a webhook body is JSON")
    }
}

/// How the receiver answers its calls, in order (then 200).
#[derive(Clone, Copy, Debug)]
enum Answer {
    Status(u16),
    /// Holds the call open until released.
    Hold,
}

/// A local HTTP receiver: records every call, answers as scripted.
struct Receiver {
    url: String,
    calls: Arc<Mutex<Vec<Call>>>,
    release: Arc<Notify>,
}

impl Receiver {
    async fn start(script: Vec<Answer>) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let calls = Arc::new(Mutex::new(Vec::new()));
        let release = Arc::new(Notify::new());
        let script = Arc::new(Mutex::new(script.into_iter()));
        let (taken, held) = (Arc::clone(&calls), Arc::clone(&release));
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let (taken, held, script) = (Arc::clone(&taken), Arc::clone(&held), Arc::clone(&script));
                tokio::spawn(async move {
                    let Some(call) = read_request(&mut socket).await else { return };
                    taken.lock().unwrap().push(call);
                    let answer = script.lock().unwrap().next().unwrap_or(Answer::Status(200));
                    let status = match answer {
                        Answer::Status(status) => status,
                        Answer::Hold => {
                            held.notified().await;
                            200
                        }
                    };
                    let head = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                    let _ = socket.write_all(head.as_bytes()).await;
                });
            }
        });
        Receiver { url, calls, release }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// Waits until `done` holds of the calls taken so far; those calls.
    async fn wait_for(&self, what: &str, done: impl Fn(&[Call]) -> bool) -> Vec<Call> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let calls = self.calls();
            if done(&calls) {
                return calls;
            }
            assert!(Instant::now() < deadline, "waited too long for {what}; calls so far: {calls:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Reads one HTTP/1.1 request with a `content-length` body.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Call> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > 64 * 1024 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> =
        lines.filter_map(|line| line.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let length: usize =
        headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-length")).and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(Call { path, headers, body })
}

/// `sha256=` and the hex HMAC-SHA256 of `body` keyed with `secret`'s text.
fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// A server whose webhooks may call this machine's loopback receivers.
async fn server(dir: &std::path::Path) -> TestServer {
    let config = ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() };
    let allow = ludo_game::webhook::WebhookPolicy::allowing(vec!["127.0.0.1/32".parse().unwrap()]);
    TestServer::start_configured(dir, config, |service| service.with_webhook_policy(allow)).await
}

async fn create(rest: &Rest, body: Value) -> Value {
    let created = rest.post("/v1/games", None, &body).await;
    assert_eq!(created.status, 201, "{created:?}");
    created.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_and_the_end_are_called_signed_and_a_failed_call_is_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let rest = server.rest();
    // The first call fails: the server tries it again.
    let receiver = Receiver::start(vec![Answer::Status(503)]).await;
    let game =
        create(&rest, json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}, "webhook": receiver.url})).await;
    let id = game["id"].as_str().unwrap();
    let secret = game["webhook_secret"].as_str().expect("the creator gets the webhook's secret").to_string();
    let tokens: Vec<String> = game["seats"].as_array().unwrap().iter().map(|s| s["token"].as_str().unwrap().to_string()).collect();
    // The secret is the creator's alone: not in the game, its log or its export.
    for path in [format!("/v1/games/{id}"), format!("/v1/games/{id}/events")] {
        let answer = rest.get(&path, Some(&tokens[0])).await;
        assert!(!answer.body.to_string().contains(&secret), "{path} shows the secret");
        assert!(!answer.body.to_string().contains("/hook"), "{path} shows the webhook URL");
    }
    let (_, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert!(!String::from_utf8_lossy(&export).contains(&secret));
    // It is seat 0's turn from the start: called twice (503, then 200).
    let calls = receiver.wait_for("the first turn, tried twice", |calls| calls.len() >= 2).await;
    assert_eq!(calls[0].body, calls[1].body, "a retry sends the same call");
    assert_eq!(calls[0].header("x-ludo-delivery"), calls[1].header("x-ludo-delivery"), "a retry carries the same delivery id");
    let first = calls[0].json();
    assert_eq!((first["event"].as_str(), first["seats"].clone(), first["version"].as_u64()), (Some("turn"), json!([0]), Some(0)));
    // Play until seat 1's turn comes, then resign it: a turn call, then the end.
    let mut version = 0;
    loop {
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        let to_move = state["status"]["to_move"][0].as_u64().unwrap() as usize;
        if to_move == 1 {
            break;
        }
        let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&tokens[to_move])).await;
        let moved = rest.post(&format!("/v1/games/{id}/moves"), Some(&tokens[to_move]), &json!({"move": legal.body["moves"][0]})).await;
        assert_eq!(moved.status, 200, "{moved:?}");
        version = moved.body["version"].as_u64().unwrap();
    }
    let resigned = rest.post(&format!("/v1/games/{id}/resign"), Some(&tokens[1]), &json!(null)).await;
    assert_eq!(resigned.status, 200, "{resigned:?}");
    let calls = receiver.wait_for("the end", |calls| calls.iter().any(|c| c.json()["event"] == "game_over")).await;
    let events: Vec<(String, Value, u64)> = calls[1..]
        .iter()
        .map(|c| {
            let body = c.json();
            (body["event"].as_str().unwrap().to_string(), body["seats"].clone(), body["version"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        events,
        vec![("turn".into(), json!([0]), 0), ("turn".into(), json!([1]), version), ("game_over".into(), json!([]), version + 1)],
        "a call when a seat's turn begins (not again while it goes on) and one when the game ends"
    );
    let last = calls.last().unwrap().json();
    assert_eq!(last["status"]["forfeits"][0]["reason"], "resigned");
    for call in &calls {
        assert_eq!(call.path, "/hook");
        assert_eq!(call.header("content-type"), Some("application/json"));
        assert_eq!(call.header("x-ludo-signature"), Some(signature(&secret, &call.body).as_str()), "a call signed with the game's secret");
        assert_ne!(call.header("x-ludo-signature"), Some(signature("another secret", &call.body).as_str()));
        assert_eq!(call.header("x-ludo-event"), call.json()["event"].as_str());
    }
    let metrics = rest.get_bytes("/metrics", None).await.1;
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(metrics.contains("ludo_webhook_calls_total{outcome=\"retried\"} 1"), "{metrics}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_does_not_answer_holds_up_no_move() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let rest = server.rest();
    let receiver = Receiver::start(vec![Answer::Hold, Answer::Hold, Answer::Hold]).await;
    let game =
        create(&rest, json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}, "webhook": receiver.url})).await;
    let id = game["id"].as_str().unwrap();
    let tokens: Vec<String> = game["seats"].as_array().unwrap().iter().map(|s| s["token"].as_str().unwrap().to_string()).collect();
    receiver.wait_for("the first call, held open", |calls| !calls.is_empty()).await;
    // Moves go on and are answered while the receiver holds its calls open.
    let played = rest.play(&game, 6, |_| 0).await;
    assert_eq!(played, 6, "every move was answered");
    assert_eq!(rest.get(&format!("/v1/games/{id}"), Some(&tokens[0])).await.body["version"], 6);
    receiver.release.notify_waiters();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_reach_no_internal_address_without_an_allow_list() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let receiver = Receiver::start(vec![]).await;
    let before = rest.get("/v1/games", None).await.body["games"].as_array().unwrap().len();
    for url in [
        receiver.url.as_str(),
        "http://localhost:9/hook",
        "http://[::1]:9/hook",
        "http://10.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:192.168.0.1]/hook",
        "ftp://example.com/hook",
        "file:///etc/passwd",
        "http://user:secret@example.com/hook",
        "not a url",
    ] {
        let refused = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "webhook": url})).await;
        assert_eq!((refused.status, refused.body["field"].as_str()), (400, Some("webhook")), "{url}: {refused:?}");
    }
    let long = format!("https://example.com/{}", "a".repeat(3000));
    let refused = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "webhook": long})).await;
    assert_eq!(refused.status, 400, "{refused:?}");
    assert_eq!(rest.get("/v1/games", None).await.body["games"].as_array().unwrap().len(), before, "nothing was created");
    // (Public names and addresses are taken: see the policy's unit tests;
    // these tests call nothing beyond loopback.)
    assert!(receiver.calls().is_empty(), "nothing reached the loopback receiver");
    server.stop().await;
}

/// IPv6 spellings of internal IPv4 addresses and special-purpose IPv6
/// blocks, each once accepted, are refused like the addresses they stand
/// for: an IPv4-compatible and an IPv4-translated loopback, a 6to4 address
/// of loopback, the discard-only block and Teredo's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_forms_of_internal_addresses_are_refused_as_webhooks() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    for url in [
        "http://[::127.0.0.1]/hook",
        "http://[2002:7f00:1::]/hook",
        "http://[::ffff:0:7f00:1]/hook",
        "http://[100::1]/hook",
        "http://[2001::1]/hook",
    ] {
        let refused = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "webhook": url})).await;
        assert_eq!(
            (refused.status, refused.body["code"].as_str(), refused.body["field"].as_str()),
            (400, Some("invalid_input"), Some("webhook")),
            "{url}: {refused:?}"
        );
    }
    assert!(rest.get("/v1/games", None).await.body["games"].as_array().unwrap().is_empty(), "nothing was created");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_creates_a_game_with_a_webhook_and_gets_its_secret_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let receiver = Receiver::start(vec![]).await;
    let mut grpc = server.grpc().await;
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "cardinal".into(),
            players: vec!["Ann".into(), "Bob".into()],
            webhook: Some(receiver.url.clone()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let secret = created.webhook_secret.expect("the creator gets the secret");
    let calls = receiver.wait_for("the first turn", |calls| !calls.is_empty()).await;
    assert_eq!(calls[0].header("x-ludo-signature"), Some(signature(&secret, &calls[0].body).as_str()));
    let refused = grpc
        .create_game(pb::CreateGameRequest {
            kind: "cardinal".into(),
            players: vec!["Ann".into(), "Bob".into()],
            webhook: Some("http://10.1.1.1/".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    server.stop().await;
}
