//! Two `ludo serve` replicas on one PostgreSQL database behind a real nginx
//! load balancer, driven over REST (HTTP/1.1, with a live SSE stream) and
//! gRPC (HTTP/2, `grpc_pass`), with nginx alternating the requests between
//! the replicas; the shipped nginx config, which keeps each game on one
//! replica and takes gRPC on its h2c port; and what the binary does when its
//! database is missing or newer than it.
//!
//! Needs PostgreSQL (see `storage/tests/common/postgres.rs`, shared here)
//! and Debian's `nginx`: skips without them unless `LUDO_REQUIRE_POSTGRES=1`
//! or `LUDO_REQUIRE_NGINX=1`, which turn the skip into a failure.

mod common;
#[path = "../../../storage/tests/common/postgres.rs"]
#[allow(dead_code)] // each test binary uses its own share of the harness
mod postgres;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Server, replica, start_command};
use ludo_proto::v1 as pb;
use ludo_proto::v1::ludo_client::LudoClient;
use postgres::Cluster;
use serde_json::{Value, json};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// nginx in front of `replicas`: REST on one port (HTTP/1.1), gRPC on
/// another (cleartext HTTP/2, as nginx 1.22 needs a port of its own for it).
struct Balancer {
    child: Child,
    rest: String,
    grpc: String,
    _dir: tempfile::TempDir,
}

/// Debian's nginx, or the one `LUDO_NGINX` names (to run these tests with
/// another version).
fn nginx_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("LUDO_NGINX") {
        return Some(PathBuf::from(path));
    }
    ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().map(PathBuf::from).find(|p| p.exists())
}

/// An nginx upstream's `server` lines for `replicas`.
fn upstream(replicas: &[&Server]) -> String {
    replicas.iter().map(|r| format!("server {};", r.addr)).collect::<Vec<_>>().join(" ")
}

impl Balancer {
    fn start(replicas: &[&Server]) -> Option<Balancer> {
        let (rest_port, grpc_port) = (free_port(), free_port());
        let servers = upstream(replicas);
        let http = format!(
            r#"
    upstream ludo {{ {servers} keepalive 16; }}
    upstream ludo_grpc {{ {servers} }}
    server {{
        listen 127.0.0.1:{rest_port};
        location / {{
            proxy_pass http://ludo;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
    server {{
        listen 127.0.0.1:{grpc_port} http2;
        location / {{ grpc_pass grpc://ludo_grpc; }}
    }}
"#
        );
        Balancer::launch(&http, rest_port, Some(grpc_port))
    }

    /// nginx with the shipped `deploy/nginx/ludo.conf` as it is, but for
    /// its ports (free ones on 127.0.0.1 for 8080, HTTP/1.1, and 8081, h2c)
    /// and its upstream (`replicas`).
    fn shipped(replicas: &[&Server]) -> Option<Balancer> {
        let shipped =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/nginx/ludo.conf")).expect("the shipped config");
        let (rest_port, grpc_port) = (free_port(), free_port());
        let servers = upstream(replicas);
        let mut http = String::new();
        for line in shipped.lines() {
            let code = line.split('#').next().unwrap_or_default().trim();
            let line = match code {
                "listen 8080;" => &format!("listen 127.0.0.1:{rest_port};"),
                "listen 8081 http2;" => &format!("listen 127.0.0.1:{grpc_port} http2;"),
                "server ludo:8080;" => &servers,
                _ => line,
            };
            http.push_str(line);
            http.push('\n');
        }
        for found in [servers.clone(), format!(":{rest_port};"), format!(":{grpc_port} http2;")] {
            assert!(http.contains(&found), "the shipped config's upstream and ports were found: no {found}");
        }
        Balancer::launch(&http, rest_port, Some(grpc_port))
    }

    /// nginx with `http` as its `http {}` block, once it listens on its ports.
    fn launch(http: &str, rest_port: u16, grpc_port: Option<u16>) -> Option<Balancer> {
        let Some(nginx) = nginx_binary() else {
            assert!(std::env::var("LUDO_REQUIRE_NGINX").as_deref() != Ok("1"), "LUDO_REQUIRE_NGINX=1 but there is no nginx");
            eprintln!("skipped: no nginx to balance the replicas (install Debian's `nginx` package to run this test)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        let d = dir.path().display();
        let config = format!(
            r#"{user}
worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
{http}
}}
"#,
            user = if root { "user root root;" } else { "" },
        );
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, config).unwrap();
        let child = Command::new(nginx)
            .args(["-p"])
            .arg(dir.path())
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let balancer = Balancer {
            child,
            rest: format!("http://127.0.0.1:{rest_port}"),
            grpc: grpc_port.map_or_else(String::new, |port| format!("http://127.0.0.1:{port}")),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", rest_port)).is_err()
            || grpc_port.is_some_and(|port| std::net::TcpStream::connect(("127.0.0.1", port)).is_err())
        {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen: {}",
                std::fs::read_to_string(balancer._dir.path().join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(balancer)
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        // SIGTERM: nginx's master stops its workers before it exits (after
        // a SIGKILL they would outlive it); SIGKILL only if it hangs.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn json_of(answer: reqwest::Response) -> (u16, Value) {
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// Plays `game` to its end through `base`, first legal move each time;
/// answers the last version.
async fn play_out(http: &reqwest::Client, base: &str, game: &Value) -> u64 {
    let id = game["id"].as_str().unwrap();
    let mut version = 0;
    for _ in 0..2000 {
        let (status, state) = json_of(http.get(format!("{base}/v1/games/{id}")).send().await.unwrap()).await;
        assert_eq!(status, 200, "{state}");
        assert_eq!(state["version"], version, "a read through the balancer is never behind what was acknowledged");
        if state["status"]["state"] == "finished" {
            return version;
        }
        let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
        let token = game["seats"][seat]["token"].as_str().unwrap();
        let (_, legal) = json_of(http.get(format!("{base}/v1/games/{id}/legal-moves")).bearer_auth(token).send().await.unwrap()).await;
        let mv = legal["moves"][version as usize % legal["moves"].as_array().unwrap().len()].clone();
        let body = json!({"move": mv, "expected_version": version});
        let (status, accepted) =
            json_of(http.post(format!("{base}/v1/games/{id}/moves")).bearer_auth(token).json(&body).send().await.unwrap()).await;
        assert_eq!(status, 200, "{accepted}");
        version = accepted["version"].as_u64().unwrap();
    }
    panic!("the game did not end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_behind_nginx_serve_rest_streams_and_grpc() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("replicas");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (replica(&dir.path().join("a"), &url), replica(&dir.path().join("b"), &url));
    let Some(lb) = Balancer::start(&[&a, &b]) else { return };
    let http = reqwest::Client::new();

    // REST: a whole game, every request through the balancer, while a live
    // stream (also through it, so on either replica) follows.
    let (status, game) = json_of(
        http.post(format!("{}/v1/games", lb.rest)).json(&json!({"kind": "cardinal", "players": ["A", "B", "C"]})).send().await.unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{game}");
    let id = game["id"].as_str().unwrap().to_string();
    let mut stream = http.get(format!("{}/v1/games/{id}/stream", lb.rest)).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let last = play_out(&http, &lb.rest, &game).await;
    let mut received = String::new();
    while !received.contains("event: end") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
            .await
            .expect("the stream goes on")
            .unwrap()
            .expect("not ended early");
        received.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let seqs: Vec<u64> = received
        .split("\n\n")
        .filter(|event| event.starts_with("event: record") || event.contains("\nevent: record"))
        .map(|event| serde_json::from_str::<Value>(event.split_once("data: ").unwrap().1.trim()).unwrap()["event"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..=last).collect::<Vec<_>>(), "every record once, in order");

    // Both replicas took moves: the balancer alternated them.
    for replica in [&a, &b] {
        let accepted = replica.metric("ludo_moves_total{outcome=\"accepted\"}").await;
        assert!(accepted > 0.0, "replica {} accepted no move", replica.base);
    }

    // gRPC through the balancer (HTTP/2): a match played, read back over REST.
    let channel = tonic::transport::Channel::from_shared(lb.grpc.clone()).unwrap().connect().await.expect("gRPC through nginx");
    let mut grpc = LudoClient::new(channel);
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "battle13".into(),
            players: vec!["A".into(), "B".into(), "C".into(), "D".into()],
            ..Default::default()
        })
        .await
        .expect("create over gRPC")
        .into_inner();
    let mut version = 0;
    for _ in 0..40 {
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
        assert_eq!(state.version, version, "gRPC reads are never behind either");
        let Some(pb::status::State::InProgress(progress)) = state.status.unwrap().state else { break };
        let token = &created.seats[progress.to_move[0] as usize].token;
        let mut legal = tonic::Request::new(pb::ListLegalMovesRequest { id: created.id.clone() });
        legal.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        let mv = grpc.list_legal_moves(legal).await.unwrap().into_inner().moves[0].clone();
        let mut submit = tonic::Request::new(pb::SubmitMoveRequest {
            id: created.id.clone(),
            r#move: Some(mv),
            expected_version: Some(version),
            request_id: None,
            omit_view: false,
        });
        submit.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        version = grpc.submit_move(submit).await.expect("accepted over gRPC").into_inner().version;
    }
    let (_, state) = json_of(http.get(format!("{}/v1/games/{}", lb.rest, created.id)).send().await.unwrap()).await;
    assert_eq!(state["version"], version);
    drop(lb);
    a.terminate();
    b.terminate();
}

/// Plays `moves` moves of `game` through `base` (see [`play_one_more`]);
/// answers the version reached.
async fn play_moves(http: &reqwest::Client, base: &str, game: &Value, moves: usize) -> u64 {
    for _ in 0..moves {
        assert!(play_one_more(http, base, game).await, "game {}: a move through {base}", game["id"]);
    }
    let (_, state) = json_of(http.get(format!("{base}/v1/games/{}", game["id"].as_str().unwrap())).send().await.unwrap()).await;
    state["version"].as_u64().unwrap()
}

/// The shipped nginx config sends every REST request that names a game to
/// one replica (so that replica's cached game is never behind), spreads the
/// games over both, and, once that replica is gone, sends its games to the
/// other, which serves them and takes their moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_nginx_config_keeps_each_game_on_one_replica_until_it_dies() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("by_game");
    let dir = tempfile::tempdir().unwrap();
    let (mut a, b) = (replica(&dir.path().join("a"), &url), replica(&dir.path().join("b"), &url));
    let Some(lb) = Balancer::shipped(&[&a, &b]) else { return };
    let http = reqwest::Client::new();
    // Each replica's own appends (a move is one; the creation is counted before).
    let appends = "ludo_store_appends_total";
    let mut on = [Vec::new(), Vec::new()];
    // Games until each replica has had two (a game lands on either as its id hashes).
    for _ in 0..40 {
        if on.iter().all(|games| games.len() >= 2) {
            break;
        }
        let created = http.post(format!("{}/v1/games", lb.rest)).json(&json!({"kind": "cardinal", "players": ["A", "B"]})).send().await;
        let (status, game) = json_of(created.unwrap()).await;
        assert_eq!(status, 201, "{game}");
        let before = [a.metric(appends).await, b.metric(appends).await];
        assert_eq!(play_moves(&http, &lb.rest, &game, 6).await, 6);
        let took = [a.metric(appends).await - before[0], b.metric(appends).await - before[1]];
        assert!(took == [6.0, 0.0] || took == [0.0, 6.0], "game {}: moves taken by A and B {took:?}, not all by one", game["id"]);
        on[usize::from(took[1] > 0.0)].push(game);
    }
    assert!(
        on.iter().all(|games| games.len() >= 2),
        "40 games, and a replica had fewer than two: {} on A, {} on B",
        on[0].len(),
        on[1].len()
    );

    // A dies: its games are served by B, through the same balancer.
    a.child.kill().expect("kill -9 of replica A");
    let _ = a.child.wait();
    for game in &on[0] {
        let id = game["id"].as_str().unwrap();
        let (status, state) = json_of(http.get(format!("{}/v1/games/{id}", lb.rest)).send().await.unwrap()).await;
        assert_eq!((status, state["version"].as_u64()), (200, Some(6)), "game {id} once A is gone: {state}");
        let before = b.metric(appends).await;
        assert!(play_one_more(&http, &lb.rest, game).await, "game {id}: a move once A is gone");
        assert_eq!(b.metric(appends).await - before, 1.0, "game {id}: B took it");
    }

    // gRPC through the shipped config's h2c port, the request id passed on.
    let channel = tonic::transport::Channel::from_shared(lb.grpc.clone()).unwrap().connect().await.expect("gRPC through nginx");
    let id = on[0][0]["id"].as_str().unwrap().to_string();
    let mut read = tonic::Request::new(pb::GetGameRequest { id });
    read.metadata_mut().insert("x-request-id", "through-nginx".parse().unwrap());
    let read = LudoClient::new(channel).get_game(read).await.expect("GetGame through the shipped config");
    assert_eq!(read.metadata().get("x-request-id").and_then(|v| v.to_str().ok()), Some("through-nginx"));
    assert_eq!(read.into_inner().version, 7);
    // REST too: nginx gives a request that has no id its own.
    let answer = http.get(format!("{}/healthz", lb.rest)).send().await.unwrap();
    let made = answer.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(made.len() == 32 && made.bytes().all(|b| b.is_ascii_hexdigit()), "nginx's $request_id: {made:?}");
    drop(lb);
    b.terminate();
}

/// Creates games as client `who` (the address it claims in
/// `X-Forwarded-For`) until refused or `tries` are made: how many were made.
async fn creates_allowed(http: &reqwest::Client, base: &str, who: &str, tries: usize) -> usize {
    let mut made = 0;
    for _ in 0..tries {
        let answer = http
            .post(format!("{base}/v1/games"))
            .header("x-forwarded-for", who)
            .json(&json!({"kind": "cardinal", "players": ["A", "B"]}))
            .send()
            .await
            .unwrap();
        match answer.status().as_u16() {
            201 => made += 1,
            429 => return made,
            other => panic!("create as {who}: {other}"),
        }
    }
    made
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_balancer_each_client_has_its_own_rate_limit() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("replicas");
    let dir = tempfile::tempdir().unwrap();
    // One game a second, five at once, per client; nginx's address trusted.
    let limited = ["--rate-create", "1/s,burst=5", "--trusted-proxies", "127.0.0.1"];
    let start = |name: &str, extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ludo"));
        command.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(dir.path().join(name)).args(["--store", &url]).args(extra);
        start_command(&mut command)
    };
    let (a, b) = (start("a", &limited), start("b", &limited));
    let Some(lb) = Balancer::start(&[&a, &b]) else { return };
    let http = reqwest::Client::new();
    // Every request reaches a replica from nginx (127.0.0.1), which appends
    // that address to what the client sent: the client is the entry left
    // of it. One client spends its burst (each replica keeps its own
    // buckets: at most twice the burst, plus what refilled meanwhile) …
    let first = creates_allowed(&http, &lb.rest, "203.0.113.1", 40).await;
    assert!((5..40).contains(&first), "the first client was limited after its burst ({first} games)");
    // … and right after its refusal another client still has a whole burst.
    assert_eq!(creates_allowed(&http, &lb.rest, "203.0.113.2", 3).await, 3, "another client is not held by the first one's limit");

    // Not trusted (the default), the header is ignored: every request
    // counts against the connection's address, whatever it claims.
    let c = start("c", &["--rate-create", "1/s,burst=5"]);
    let first = creates_allowed(&http, &c.base, "203.0.113.1", 40).await;
    assert!((5..40).contains(&first), "limited after the burst ({first} games)");
    assert!(creates_allowed(&http, &c.base, "203.0.113.2", 3).await < 3, "a forged X-Forwarded-For earns no new bucket");
    drop(lb);
    for replica in [a, b, c] {
        replica.terminate();
    }
}

/// `ludo serve --store STORE`, run to its exit (for stores it refuses).
fn serve_until_exit(store: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_ludo"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .args(["--store", store])
        .output()
        .expect("ludo runs")
}

#[test]
fn a_database_that_cannot_be_reached_stops_the_start_with_a_clear_error() {
    let store = format!("postgres://ludo:secret@127.0.0.1:{}/games", free_port());
    let out = serve_until_exit(&store);
    assert!(!out.status.success(), "it must not serve without its database");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot reach PostgreSQL") && stderr.contains("refused"), "{stderr}");
    assert!(!stderr.contains("secret"), "the password never shows: {stderr}");
}

#[test]
fn a_schema_newer_than_the_binary_is_refused() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("newer");
    let migrate =
        |url: &str| Command::new(env!("CARGO_BIN_EXE_ludo")).args(["migrate-schema", "--store", url]).output().expect("ludo runs");
    let first = migrate(&url);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert!(String::from_utf8_lossy(&first.stdout).contains(&format!("schema version {}", ludo_storage::schema_version())));
    cluster.psql("newer", "UPDATE ludo_schema SET version = 99");
    let refused = migrate(&url);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&format!("version 99, newer than this build's {}", ludo_storage::schema_version())), "{stderr}");
    assert!(!serve_until_exit(&url).status.success(), "a server does not start on a newer schema");
}

/// One client's game for the kill test: what it was told was durable.
struct Played {
    game: Value,
    acknowledged: u64,
}

/// Plays moves of `game` on `bases` (switching to the next base when one
/// stops answering) until `until`; answers the highest version acknowledged.
async fn keep_playing(http: reqwest::Client, bases: Vec<String>, game: Value, until: Instant) -> Played {
    let id = game["id"].as_str().unwrap().to_string();
    let (mut at, mut acknowledged) = (0, 0);
    while Instant::now() < until {
        let base = &bases[at % bases.len()];
        let Ok(answer) = http.get(format!("{base}/v1/games/{id}")).send().await else {
            at += 1; // this replica is gone: the next one
            continue;
        };
        let state: Value = answer.json().await.unwrap_or(Value::Null);
        let Some(version) = state["version"].as_u64() else {
            at += 1;
            continue;
        };
        assert!(version >= acknowledged, "game {id}: read version {version} after {acknowledged} was acknowledged");
        if state["status"]["state"] != "in_progress" {
            break;
        }
        let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
        let token = game["seats"][seat]["token"].as_str().unwrap();
        let Ok(legal) = http.get(format!("{base}/v1/games/{id}/legal-moves")).bearer_auth(token).send().await else {
            at += 1;
            continue;
        };
        let legal: Value = legal.json().await.unwrap_or(Value::Null);
        let Some(moves) = legal["moves"].as_array().filter(|m| !m.is_empty()) else { continue };
        let body = json!({"move": moves[version as usize % moves.len()], "expected_version": version});
        match http.post(format!("{base}/v1/games/{id}/moves")).bearer_auth(token).json(&body).send().await {
            Ok(answer) if answer.status() == 200 => {
                let accepted: Value = answer.json().await.unwrap();
                acknowledged = accepted["version"].as_u64().unwrap();
            }
            Ok(_) => {}        // a conflict or an unavailable store: read again
            Err(_) => at += 1, // the replica died under the request: its outcome is unknown
        }
    }
    Played { game, acknowledged }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_replica_under_64_clients_loses_no_acknowledged_move() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("kill");
    let dir = tempfile::tempdir().unwrap();
    let (mut a, b) = (replica(&dir.path().join("a"), &url), replica(&dir.path().join("b"), &url));
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let mut games = Vec::new();
    for i in 0..64 {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        let players = json!({"kind": "battle13", "players": ["A", "B", "C", "D"], "options": {"target_crowns": 100}});
        let (status, game) = json_of(http.post(format!("{base}/v1/games")).json(&players).send().await.unwrap()).await;
        assert_eq!(status, 201, "{game}");
        games.push(game);
    }
    let until = Instant::now() + Duration::from_secs(4);
    let clients: Vec<_> = games
        .into_iter()
        .enumerate()
        .map(|(i, game)| {
            // Half the clients start on each replica.
            let bases = if i % 2 == 0 { vec![a.base.clone(), b.base.clone()] } else { vec![b.base.clone(), a.base.clone()] };
            tokio::spawn(keep_playing(http.clone(), bases, game, until))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    a.child.kill().expect("kill -9 of replica A");
    let _ = a.child.wait();
    let mut played = Vec::new();
    for client in clients {
        played.push(client.await.expect("a client"));
    }
    // The survivor serves every game, with every acknowledged move in an
    // unbroken chain, and takes more.
    let total: u64 = played.iter().map(|p| p.acknowledged).sum();
    assert!(total > 64, "the clients played ({total} moves acknowledged)");
    eprintln!("{total} moves acknowledged by 64 clients, replica A killed after 1.5 s of 4");
    for Played { game, acknowledged } in &played {
        let id = game["id"].as_str().unwrap();
        let answer = http.get(format!("{}/v1/games/{id}/export", b.base)).send().await.unwrap();
        assert_eq!(answer.status(), 200, "game {id}: the survivor serves it");
        let export = answer.bytes().await.unwrap();
        let records = export.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count() as u64 - 1;
        assert!(records > *acknowledged, "game {id}: {records} records, but version {acknowledged} was acknowledged");
        let (_, report) = json_of(
            http.post(format!("{}/v1/verify", b.base)).header("content-type", "application/x-ndjson").body(export).send().await.unwrap(),
        )
        .await;
        assert_eq!(report["chain_intact"], true, "game {id}: {report}");
    }
    let first = played[0].game.clone();
    assert!(play_one_more(&http, &b.base, &first).await, "the survivor takes moves");
    b.terminate();
}

/// One more move of `game` on `base`.
async fn play_one_more(http: &reqwest::Client, base: &str, game: &Value) -> bool {
    let id = game["id"].as_str().unwrap();
    let (_, state) = json_of(http.get(format!("{base}/v1/games/{id}")).send().await.unwrap()).await;
    let Some(seat) = state["status"]["to_move"][0].as_u64() else { return false };
    let token = game["seats"][seat as usize]["token"].as_str().unwrap();
    let (_, legal) = json_of(http.get(format!("{base}/v1/games/{id}/legal-moves")).bearer_auth(token).send().await.unwrap()).await;
    let body = json!({"move": legal["moves"][0], "expected_version": state["version"]});
    http.post(format!("{base}/v1/games/{id}/moves")).bearer_auth(token).json(&body).send().await.unwrap().status() == 200
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_database_is_503_and_not_ready_until_it_returns() {
    let Some(mut cluster) = Cluster::start() else { return };
    let url = cluster.new_database("lost");
    let dir = tempfile::tempdir().unwrap();
    let server = replica(dir.path(), &url);
    let http = reqwest::Client::new();
    let (_, game) = json_of(
        http.post(format!("{}/v1/games", server.base)).json(&json!({"kind": "cardinal", "players": ["A", "B"]})).send().await.unwrap(),
    )
    .await;
    assert!(play_one_more(&http, &server.base, &game).await);
    let ready =
        |http: reqwest::Client, base: String| async move { http.get(format!("{base}/readyz")).send().await.unwrap().status().as_u16() };
    assert_eq!(ready(http.clone(), server.base.clone()).await, 200);

    cluster.stop();
    let id = game["id"].as_str().unwrap();
    let (status, problem) = json_of(
        http.post(format!("{}/v1/games", server.base)).json(&json!({"kind": "cardinal", "players": ["A", "B"]})).send().await.unwrap(),
    )
    .await;
    assert_eq!((status, problem["code"].as_str()), (503, Some("storage_unavailable")), "{problem}");
    let (status, _) = json_of(http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap()).await;
    assert_eq!(status, 503, "a read that cannot check the store's length is refused, not answered stale");
    assert_eq!(ready(http.clone(), server.base.clone()).await, 503, "not ready without its database");

    cluster.start_again();
    // Ready again by itself, without any other request.
    let deadline = Instant::now() + Duration::from_secs(15);
    while ready(http.clone(), server.base.clone()).await != 200 {
        assert!(Instant::now() < deadline, "readiness did not come back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, state) = json_of(http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap()).await;
    assert_eq!((status, state["version"].as_u64()), (200, Some(1)), "the acknowledged move is there");
    assert!(play_one_more(&http, &server.base, &game).await, "and play goes on");
    server.terminate();
}

/// A seat renewed on one replica ends, on the other, the old token's
/// ticket and every stream it opened there (SSE by ticket and by token,
/// gRPC and gRPC-Web): each replica reads the change from the shared log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_renewed_on_one_replica_ends_its_tickets_and_streams_on_the_other() {
    use ludo_blackbox::{GrpcWebStream, Rest, authed};
    use tonic_types::StatusExt;
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("revocation");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (replica(&dir.path().join("a"), &url), replica(&dir.path().join("b"), &url));
    let (on_a, on_b) = (Rest::new(&a.base), Rest::new(&b.base));
    let game = on_a.create("kardinal", &["Ann", "Bob", "Cid"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let (bob, admin) = (game["seats"][1]["token"].as_str().unwrap(), game["admin_token"].as_str().unwrap());
    // Bob follows the game on B, four ways.
    let ticket =
        on_b.post(&format!("/v1/games/{id}/stream-tickets"), Some(bob), &json!({})).await.body["ticket"].as_str().unwrap().to_string();
    let mut by_ticket = on_b.sse(&format!("/v1/games/{id}/stream?ticket={ticket}"), None, None).await;
    let mut by_token = on_b.sse(&format!("/v1/games/{id}/stream"), Some(bob), None).await;
    let request = pb::WatchGameRequest { id: id.to_string(), from: 0 };
    let channel = tonic::transport::Channel::from_shared(b.base.clone()).unwrap().connect().await.unwrap();
    let mut grpc = LudoClient::new(channel).watch_game(authed(request.clone(), bob)).await.expect("a stream").into_inner();
    let mut web = GrpcWebStream::open(&b.base, "/ludo.v1.Ludo/WatchGame", Some(bob), &request).await;
    for sse in [&mut by_ticket, &mut by_token] {
        assert_eq!(sse.next().await.map(|e| (e.event, e.data["event"]["seq"].clone())), Some(("record".into(), json!(0))));
    }
    assert_eq!(grpc.message().await.unwrap().unwrap().event.unwrap().seq, 0);
    assert_eq!(web.next::<pb::GameUpdate>().await.unwrap().unwrap().event.unwrap().seq, 0);

    // The admin renews Bob's token on A.
    let renewed = on_a.post(&format!("/v1/games/{id}/seats/1/token"), Some(admin), &json!({})).await;
    assert_eq!(renewed.status, 200, "{renewed:?}");
    for (how, sse) in [("ticket", &mut by_ticket), ("token", &mut by_token)] {
        let last = tokio::time::timeout(Duration::from_secs(10), sse.next()).await.expect("the stream ends at once").expect("a last event");
        assert_eq!((last.event.as_str(), &last.data["code"]), ("seat_revoked", &json!("seat_revoked")), "SSE by {how}: {last:?}");
        assert!(sse.next().await.is_none(), "SSE by {how} ends");
    }
    for status in [grpc.message().await.unwrap_err(), web.next::<pb::GameUpdate>().await.unwrap().unwrap_err()] {
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
        assert_eq!(status.get_details_error_info().unwrap().reason, "seat_revoked");
    }
    let refused = on_b.get(&format!("/v1/games/{id}/stream?ticket={ticket}"), None).await;
    assert_eq!((refused.status, refused.body["code"].as_str()), (401, Some("seat_revoked")), "{refused:?}");
    assert_eq!(on_b.get(&format!("/v1/games/{id}"), Some(bob)).await.status, 401);
    let fresh = renewed.body["token"].as_str().unwrap();
    assert_eq!(on_b.get(&format!("/v1/games/{id}"), Some(fresh)).await.body["viewer_seat"], 1);
    a.terminate();
    b.terminate();
}
