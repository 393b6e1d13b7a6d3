//! A sick disk is visible and recoverable, against the real binary with its
//! data on a small tmpfs that fills up: moves answer 503 (outcome unknown),
//! `/readyz` and gRPC health say not ready while `/healthz` stays live, the
//! store recovers by itself once space is freed, and a move retried with its
//! `request_id` is stored exactly once whatever its first answer was.
//!
//! Mounting a tmpfs needs root: elsewhere the test prints why it skips,
//! unless `LUDO_REQUIRE_TMPFS=1` (CI) makes that a failure.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{create, start_with};
use serde_json::{Value, json};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(megabytes: u32) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m,mode=0700"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !output.status.success() {
            return Err(format!("mount -t tmpfs failed (root is needed): {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

/// Fills the file system holding `path` to its last byte.
fn fill(path: &Path) -> PathBuf {
    let filler = path.join("filler");
    let mut file = std::fs::File::create(&filler).expect("filler");
    for size in [1 << 20, 1 << 12, 1] {
        let chunk = vec![0u8; size];
        while file.write_all(&chunk).is_ok() {}
    }
    let _ = file.sync_all();
    filler
}

/// gRPC health once it reads `want` (it follows readiness within a poll), or
/// what it reads after 10 s.
async fn grpc_health_becomes(base: &str, want: ServingStatus) -> ServingStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = grpc_health(base).await;
        if now == want || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn grpc_health(base: &str) -> ServingStatus {
    let channel = tonic::transport::Channel::from_shared(base.to_string()).unwrap().connect().await.expect("connect");
    let mut health = HealthClient::new(channel);
    let answer = health.check(HealthCheckRequest { service: "ludo.v1.Ludo".into() }).await.expect("health");
    answer.into_inner().status()
}

async fn get_status(http: &reqwest::Client, url: String) -> (u16, Value) {
    let answer = http.get(url).send().await.unwrap();
    (answer.status().as_u16(), answer.json().await.unwrap_or(Value::Null))
}

/// Submits the seat to move's first legal move with `request_id`; returns
/// the status and body, or None when the game could not be read.
async fn submit(http: &reqwest::Client, base: &str, game: &Value, request_id: &str) -> Option<(u16, Value)> {
    let id = game["id"].as_str().unwrap();
    let state: Value = http.get(format!("{base}/v1/games/{id}")).send().await.ok()?.json().await.ok()?;
    let seat = state["status"]["to_move"][0].as_u64()? as usize;
    let token = game["seats"][seat]["token"].as_str().unwrap();
    let legal: Value = http.get(format!("{base}/v1/games/{id}/legal-moves")).bearer_auth(token).send().await.ok()?.json().await.ok()?;
    let mv = legal["moves"].get(0)?.clone();
    let answer = http
        .post(format!("{base}/v1/games/{id}/moves"))
        .bearer_auth(token)
        .json(&json!({"move": mv, "request_id": request_id}))
        .send()
        .await
        .unwrap();
    Some((answer.status().as_u16(), answer.json().await.unwrap_or(Value::Null)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_reported_not_ready_and_the_store_recovers_once_space_is_freed() {
    let tmpfs = match Tmpfs::mount(24) {
        Ok(tmpfs) => tmpfs,
        Err(reason) if std::env::var("LUDO_REQUIRE_TMPFS").as_deref() != Ok("1") => {
            eprintln!("SKIPPED a_full_disk_is_reported_not_ready…: {reason} (set LUDO_REQUIRE_TMPFS=1 to fail instead)");
            return;
        }
        Err(reason) => panic!("LUDO_REQUIRE_TMPFS=1 but {reason}"),
    };
    let data = tmpfs.path().join("data");
    let server = start_with(&data, &["--rate-moves-per-seat", "off", "--rate-moves-per-ip", "off"]);
    let http = reqwest::Client::new();
    let games: Vec<Value> = {
        let mut games = Vec::new();
        for _ in 0..4 {
            games.push(create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await);
        }
        games
    };
    assert_eq!(get_status(&http, format!("{}/readyz", server.base)).await.0, 200);
    assert_eq!(grpc_health(&server.base).await, ServingStatus::Serving);

    // The disk fills up.
    let filler = fill(tmpfs.path());
    let mut sent: Vec<(usize, String, u16)> = Vec::new(); // game, request id, first answer
    let mut refused = 0;
    for n in 0..40 {
        let game = n % games.len();
        let request_id = format!("move-{n}");
        match submit(&http, &server.base, &games[game], &request_id).await {
            Some((status, body)) => {
                if status == 503 {
                    assert_eq!(body["code"], "storage_unavailable", "{body}");
                    refused += 1;
                } else {
                    assert_eq!(status, 200, "{body}");
                }
                sent.push((game, request_id, status));
            }
            None => refused += 1, // the game could not even be read: nothing was sent
        }
    }
    assert!(refused > 0, "moves fail on a full disk");
    let (status, problem) = get_status(&http, format!("{}/readyz", server.base)).await;
    assert_eq!((status, problem["code"].as_str()), (503, Some("not_ready")), "{problem}");
    assert_eq!(grpc_health_becomes(&server.base, ServingStatus::NotServing).await, ServingStatus::NotServing);
    assert_eq!(get_status(&http, format!("{}/healthz", server.base)).await.0, 200, "liveness is not readiness");

    // Space comes back: the store reopens by itself, readiness follows.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while get_status(&http, format!("{}/readyz", server.base)).await.0 != 200 {
        assert!(Instant::now() < deadline, "the server never became ready again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(grpc_health_becomes(&server.base, ServingStatus::Serving).await, ServingStatus::Serving);

    // Every move answered 503 is retried with its request id: it is taken
    // (now) or answered as the first time (it was stored after all) — never twice.
    for (game, request_id, first) in &sent {
        if *first == 503 {
            let (status, body) = submit(&http, &server.base, &games[*game], request_id).await.expect("readable again");
            assert!(status == 200 || (status == 422 && body["code"] == "request_id_reused"), "{request_id}: {status} {body}");
        }
    }
    // Moves go on.
    for (n, game) in games.iter().enumerate() {
        let (status, body) = submit(&http, &server.base, game, &format!("after-{n}")).await.expect("readable");
        assert_eq!(status, 200, "{body}");
    }
    let check_logs = |server_base: String| {
        let http = http.clone();
        let games = games.clone();
        async move {
            for game in &games {
                let id = game["id"].as_str().unwrap();
                let events: Value =
                    http.get(format!("{server_base}/v1/games/{id}/events?limit=1000")).send().await.unwrap().json().await.unwrap();
                let ids: Vec<&str> = events["events"].as_array().unwrap().iter().filter_map(|e| e["request_id"].as_str()).collect();
                let mut unique = ids.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), ids.len(), "a request id stored twice: {ids:?}");
                let export = http.get(format!("{server_base}/v1/games/{id}/export")).send().await.unwrap().bytes().await.unwrap();
                let report: Value = http
                    .post(format!("{server_base}/v1/verify"))
                    .header("content-type", "application/x-ndjson")
                    .body(export)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                assert_eq!(report["chain_intact"], true, "{report}");
            }
        }
    };
    check_logs(server.base.clone()).await;
    server.terminate();
    // And after a restart, the same.
    let server = start_with(&data, &[]);
    check_logs(server.base.clone()).await;
    server.terminate();
}
