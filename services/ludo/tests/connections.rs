//! Connections are bounded, against the real binary over real sockets:
//! silent, slow, idle and stalled clients are cut; a body that never comes
//! or is declared too large is refused; connections over the caps get a
//! clear refusal, not a hang; HTTP/2 streams are capped per connection, and
//! many at once on one connection are all served; a
//! busy keep-alive connection stays while an idle one goes; and
//! a process with few descriptors refuses clients instead of failing for all.

mod common;

use std::time::{Duration, Instant};

use common::{Server, create, start_with};
use ludo_proto::v1 as pb;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic_types::StatusExt;

/// Reads until the server closes the connection (or `limit` passes);
/// returns what came and how long it took.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> (Vec<u8>, Option<Duration>) {
    let started = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match tokio::time::timeout_at((started + limit).into(), stream.read(&mut buf)).await {
            Err(_) => return (out, None),
            Ok(Ok(0)) | Ok(Err(_)) => return (out, Some(started.elapsed())),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

fn head(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).lines().next().unwrap_or_default().to_string()
}

fn problem_of(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(bytes);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

async fn connect(server: &Server) -> TcpStream {
    TcpStream::connect(server.addr).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_slow_and_idle_clients_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--header-timeout", "1s", "--idle-timeout", "2s"]);
    let limit = Duration::from_secs(15);

    // A client that connects and says nothing.
    let mut silent = connect(&server).await;
    let (said, closed) = until_closed(&mut silent, limit).await;
    assert!(closed.is_some() && said.is_empty(), "a silent connection is closed without an answer");

    // A client that sends its headers a byte at a time, too slowly.
    let mut slow = connect(&server).await;
    let request = b"GET /v1/kinds HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut cut = false;
    for byte in request {
        if slow.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (said, closed) = until_closed(&mut slow, limit).await;
    assert!(cut || closed.is_some(), "a slow-header client is cut");
    assert!(!head(&said).contains("200"), "it was never answered: {said:?}");

    // An HTTP/1.1 keep-alive connection waiting for its next request.
    let mut idle = connect(&server).await;
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let (said, closed) = until_closed(&mut idle, limit).await;
    assert!(head(&said).contains("200"), "{said:?}");
    assert!(closed.is_some(), "an idle keep-alive connection is closed");

    // An HTTP/2 (gRPC) connection left idle after a call: GOAWAY, then closed.
    let before = server.metric("ludo_connections_closed_total{reason=\"idle\"}").await;
    let mut grpc = pb::ludo_client::LudoClient::connect(server.base.clone()).await.unwrap();
    grpc.list_kinds(pb::ListKindsRequest {}).await.unwrap();
    let after = server.metric_until("ludo_connections_closed_total{reason=\"idle\"}", limit, |v| v > before).await;
    assert!(after > before, "the idle HTTP/2 connection was closed by the server");
    // The client reconnects on its own.
    grpc.list_kinds(pb::ListKindsRequest {}).await.unwrap();
    server.terminate();
}

/// Reads one answer of a keep-alive exchange: its head and a body of the
/// length it declares.
async fn one_answer(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&out).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap()))
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await.expect("an answer in time").unwrap();
        assert!(n > 0, "the connection closed mid-answer: {text:?}");
        out.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_keep_alive_connection_stays_and_an_idle_one_goes_after_the_idle_timeout() {
    // The watchdog hears of no request: it wakes on its timer and looks.
    // A connection that asks more often than the idle timeout is never
    // closed as idle; one that stops is closed once idle that long, not
    // sooner.
    let dir = tempfile::tempdir().unwrap();
    let idle = Duration::from_secs(1);
    let server = start_with(dir.path(), &["--header-timeout", "10s", "--idle-timeout", "1s"]);
    let mut stream = connect(&server).await;
    let started = Instant::now();
    // The server's idle spell begins when it has sent the last answer:
    // after the client asked, before the client has read it (a loaded
    // client may read it late). So the spell is at least what the client
    // sees from its last answer, at most what it sees from its last ask.
    let (last_asked, last_answer) = loop {
        let asked = Instant::now();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let answer = one_answer(&mut stream).await;
        assert!(head(answer.as_bytes()).contains("200"), "{answer:?}");
        if started.elapsed() >= 4 * idle {
            break (asked, Instant::now());
        }
        tokio::time::sleep(idle / 4).await;
    };
    let (said, closed) = until_closed(&mut stream, Duration::from_secs(10)).await;
    assert!(said.is_empty(), "nothing more was said: {said:?}");
    closed.expect("the idle connection was closed");
    let (at_most, at_least) = (last_asked.elapsed(), last_answer.elapsed());
    assert!(at_most >= idle, "closed {at_most:?} after the last request was sent, before the idle timeout of {idle:?}");
    assert!(at_least < 5 * idle, "closed only after {at_least:?} idle (idle timeout {idle:?})");
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_never_come_or_are_too_large_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--request-timeout", "1s"]);
    let limit = Duration::from_secs(15);
    // A declared length over the route's limit: refused at once, whatever the route.
    for (path, length) in [("/v1/verify", 1_000_000_000_000_u64), ("/v1/games/import", 1 << 40), ("/v1/games", 3 << 20)] {
        let mut stream = connect(&server).await;
        // (An import shows the operator's token: without it, it is refused whatever its body.)
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
            common::OPERATOR_TOKEN
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let (said, _) = until_closed(&mut stream, limit).await;
        assert!(head(&said).contains("413"), "{path}: {said:?}");
        assert_eq!(problem_of(&said)["code"], "payload_too_large", "{path}");
    }
    // A body that stops half way: 408 once the request timeout passes, and the connection is closed.
    let mut stream = connect(&server).await;
    stream
        .write_all(b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"ki")
        .await
        .unwrap();
    let (said, closed) = until_closed(&mut stream, limit).await;
    assert!(head(&said).contains("408"), "{said:?}");
    assert_eq!(problem_of(&said)["code"], "request_timeout");
    assert!(closed.is_some());
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_caps_get_a_clear_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--max-connections", "20", "--max-connections-per-ip", "0"]);
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    drop(http);
    tokio::time::sleep(Duration::from_millis(300)).await; // let the client's connection go
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(connect(&server).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The 21st: a 503 problem with Retry-After, at once.
    let started = Instant::now();
    let mut extra = connect(&server).await;
    extra.write_all(b"GET /v1/kinds HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let (said, closed) = until_closed(&mut extra, Duration::from_secs(10)).await;
    assert!(head(&said).contains("503"), "{said:?}");
    assert!(String::from_utf8_lossy(&said).to_ascii_lowercase().contains("retry-after: 1"));
    assert_eq!(problem_of(&said)["code"], "too_many_connections");
    assert!(closed.is_some() && started.elapsed() < Duration::from_secs(5), "refused and closed, not left hanging");
    // A gRPC client is refused in gRPC terms.
    let channel = tonic::transport::Channel::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    let status = pb::ludo_client::LudoClient::new(channel)
        .get_game(pb::GetGameRequest { id: game["id"].as_str().unwrap().into() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert_eq!(status.get_details_error_info().expect("an ErrorInfo").reason, "too_many_connections");
    // Places come back, once the server has seen the held connections
    // close (at once, but a loaded machine may take its time).
    drop(held);
    let url = format!("{}/v1/games/{}", server.base, game["id"].as_str().unwrap());
    let mut status = reqwest::get(&url).await.unwrap().status();
    for _ in 0..100 {
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        status = reqwest::get(&url).await.unwrap().status();
    }
    assert_eq!(status, 200, "places came back");
    assert!(server.metric("ludo_connections_refused_total{reason=\"server_full\"}").await >= 2.0);
    server.terminate();

    // One address alone is capped too.
    let server = start_with(dir.path(), &["--max-connections-per-ip", "5"]);
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(connect(&server).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = connect(&server).await;
    extra.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let (said, _) = until_closed(&mut extra, Duration::from_secs(10)).await;
    assert!(head(&said).contains("503"), "{said:?}");
    drop(held);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(server.metric("ludo_connections_refused_total{reason=\"per_address\"}").await, 1.0);
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_streams_are_capped_per_connection() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--h2-max-streams", "3"]);
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap().to_string();
    let channel = tonic::transport::Channel::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    let mut grpc = pb::ludo_client::LudoClient::new(channel);
    let mut streams = Vec::new();
    for _ in 0..3 {
        let mut updates = grpc.watch_game(pb::WatchGameRequest { id: id.clone(), from: 0 }).await.unwrap().into_inner();
        updates.message().await.unwrap().unwrap();
        streams.push(updates);
    }
    // A fourth call on the same connection waits for a free stream …
    let mut fourth = Box::pin(grpc.get_game(pb::GetGameRequest { id: id.clone() }));
    assert!(tokio::time::timeout(Duration::from_secs(1), &mut fourth).await.is_err(), "the fourth stream waits while three are open");
    // … and goes through once one ends.
    streams.pop();
    let state = tokio::time::timeout(Duration::from_secs(10), fourth).await.expect("served once a stream is free").unwrap();
    assert_eq!(state.into_inner().id, id);
    drop(streams);
    server.terminate();
}

/// One connection's HTTP/2 streams run in its own task up to a limit (8)
/// and as tasks of their own beyond it: both kinds answer, at once, on one
/// connection, live streams of both kinds hear a move, and all of them end
/// when the connection goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_at_once_on_one_http2_connection_are_all_answered() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &[]);
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap().to_string();
    let channel = tonic::transport::Channel::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    let grpc = pb::ludo_client::LudoClient::new(channel);
    // Twelve live streams: more than run in the connection's task.
    let mut watches = Vec::new();
    for _ in 0..12 {
        let mut updates = grpc.clone().watch_game(pb::WatchGameRequest { id: id.clone(), from: 0 }).await.unwrap().into_inner();
        let created = updates.message().await.unwrap().unwrap();
        assert_eq!(created.event.unwrap().seq, 0);
        watches.push(updates);
    }
    // Forty calls at once beside them, on the same connection.
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..40 {
        let (mut grpc, id) = (grpc.clone(), id.clone());
        calls.spawn(async move { grpc.get_game(pb::GetGameRequest { id }).await.map(|r| r.into_inner().id) });
    }
    let answered = tokio::time::timeout(Duration::from_secs(20), calls.join_all()).await.expect("every call is answered");
    assert_eq!(answered.len(), 40);
    for answer in answered {
        assert_eq!(answer.unwrap(), id);
    }
    // A move reaches every live stream, whichever way it runs.
    assert!(common::play_one(&http, &server.base, &game).await);
    for updates in &mut watches {
        let update = tokio::time::timeout(Duration::from_secs(10), updates.message()).await.expect("the move arrives").unwrap().unwrap();
        assert_eq!(update.event.unwrap().seq, 1);
    }
    // The connection goes with its streams open: every one of them ends.
    drop((grpc, watches));
    let left = server.metric_until("ludo_watchers", Duration::from_secs(10), |v| v == 0.0).await;
    assert_eq!(left, 0.0, "a closed connection ended its streams, inline and spawned");
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--idle-timeout", "1s"]);
    // Many pipelined requests for the OpenAPI document, and never a byte read:
    // the answers fill the socket's buffers and the server's writes stall.
    let mut stream = connect(&server).await;
    let request = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(2000);
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.write_all(&request)).await;
    let stalled = server.metric_until("ludo_connections_closed_total{reason=\"stalled\"}", Duration::from_secs(20), |v| v >= 1.0).await;
    assert_eq!(stalled, 1.0, "the stalled connection was dropped");
    drop(stream);
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn few_descriptors_mean_refusals_not_a_lockout() {
    let dir = tempfile::tempdir().unwrap();
    // A process limited to 400 descriptors (soft and hard: it cannot raise them).
    let Ok(sh) = which("sh") else {
        eprintln!("SKIPPED few_descriptors_mean_refusals_not_a_lockout: no sh");
        return;
    };
    let script = format!(
        "ulimit -n 400 && exec {} serve --listen 127.0.0.1:0 --data-dir {} --max-connections-per-ip 0",
        env!("CARGO_BIN_EXE_ludo"),
        dir.path().display()
    );
    let server = common::start_command(std::process::Command::new(sh).args(["-c", &script]));
    let early = server.early.clone();
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    drop(http);
    // Far more idle sockets than descriptors.
    let mut held = Vec::new();
    for _ in 0..600 {
        match TcpStream::connect(server.addr).await {
            Ok(stream) => held.push(stream),
            Err(err) => panic!("the listener stopped accepting: {err}"),
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A newcomer is told, not left hanging.
    let mut extra = connect(&server).await;
    extra.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let (said, closed) = until_closed(&mut extra, Duration::from_secs(10)).await;
    assert!(closed.is_some(), "answered and closed");
    assert!(head(&said).contains("503") || said.is_empty(), "{said:?}");
    drop(held);
    // Once they go, everyone is served again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answer = reqwest::get(format!("{}/v1/games/{}", server.base, game["id"].as_str().unwrap())).await.unwrap();
    assert_eq!(answer.status(), 200);
    // 400 descriptors less 256 reserved: at most 144 of the 601 were served at once.
    let refused = server.metric("ludo_connections_refused_total{reason=\"server_full\"}").await;
    assert!(refused >= 601.0 - 144.0, "{refused} refused");
    let lines = server.terminate();
    let warned = early.into_iter().chain(lines).any(|line| line["message"].as_str().is_some_and(|m| m.contains("lowered to fit")));
    assert!(warned, "the lowered cap is logged");
}

fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join(program)).find(|path| path.is_file()))
        .ok_or(())
}
