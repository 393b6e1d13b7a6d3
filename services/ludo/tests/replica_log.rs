//! The transparency log of two `ludo serve` replicas on one PostgreSQL
//! database: they share one key (made by the first to start, read back by
//! the other), and games ending on both at once land in one linear tree,
//! each with a leaf of its own; a checkpoint read on one replica and a later
//! one read on the other are consistent. A replica given another key than
//! the database's refuses to start.
//!
//! Needs PostgreSQL (see `storage/tests/common/postgres.rs`, shared here):
//! skips without it unless `LUDO_REQUIRE_POSTGRES=1`, which makes that a failure.

mod common;
#[path = "../../../storage/tests/common/postgres.rs"]
#[allow(dead_code)] // each test binary uses its own share of the harness
mod postgres;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{replica, resigned_game};
use ludo_transparency::{self as transparency, ConsistencyProof};
use postgres::Cluster;
use serde_json::Value;

async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    let answer = http.get(url).send().await.unwrap();
    assert_eq!(answer.status(), 200, "GET {url}");
    answer.json().await.unwrap()
}

/// The checkpoint `base` serves, opened with `key`.
async fn tree(http: &reqwest::Client, base: &str, key: &str) -> transparency::SignedTree {
    let note = http.get(format!("{base}/v1/log/checkpoint")).send().await.unwrap().text().await.unwrap();
    transparency::open_checkpoint(&note, key).unwrap_or_else(|e| panic!("{base}'s checkpoint: {e}\n{note}"))
}

/// The "works on every store", with replicas: one key for both
/// (the same `/v1/log` key), one linear tree for the games that end on
/// either (every leaf index distinct, 0 to n-1, each bundle verifies with
/// the key), and a checkpoint read on A, then a later one read on B, linked
/// by B's consistency proof.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_one_key_and_one_linear_tree() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.new_database("replica_log");
    let dir = tempfile::tempdir().unwrap();
    let a = replica(&dir.path().join("a"), &url);
    let b = replica(&dir.path().join("b"), &url);
    let http = reqwest::Client::new();
    let (info_a, info_b) = (get_json(&http, &format!("{}/v1/log", a.base)).await, get_json(&http, &format!("{}/v1/log", b.base)).await);
    assert_eq!(info_a["key"], info_b["key"], "one key for both replicas");
    let key = info_a["key"].as_str().unwrap().to_string();

    // Three games on A, then its checkpoint.
    let mut ended = Vec::new();
    for _ in 0..3 {
        ended.push((a.base.clone(), resigned_game(&http, &a.base).await));
    }
    let early = tree(&http, &a.base, &key).await;
    assert_eq!(early.size, 3);

    // Then games ending on both replicas at once.
    let mut tasks = Vec::new();
    for i in 0..24 {
        let base = if i % 2 == 0 { a.base.clone() } else { b.base.clone() };
        let http = http.clone();
        tasks.push(tokio::spawn(async move {
            let ended = resigned_game(&http, &base).await;
            (base, ended)
        }));
    }
    for task in tasks {
        ended.push(task.await.unwrap());
    }
    // One more on B: its checkpoint is then of the whole tree.
    ended.push((b.base.clone(), resigned_game(&http, &b.base).await));
    let total = ended.len() as u64;
    let late = tree(&http, &b.base, &key).await;
    assert_eq!(late.size, total, "B's checkpoint after its own last append holds every leaf");

    // One leaf per game, every index once: a linear tree.
    let mut indexes: Vec<u64> = ended.iter().map(|(_, (_, receipt))| receipt["leaf_index"].as_u64().unwrap()).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, (0..total).collect::<Vec<_>>(), "one leaf per game, none shared, none skipped");
    for (base, (id, receipt)) in &ended {
        assert_eq!(receipt["key"], key.as_str());
        assert_eq!(transparency::leaf_game(receipt["leaf"].as_str().unwrap()), Some(id.as_str()));
        // Its bundle, exported from the other replica, verifies with the key.
        let other = if *base == a.base { &b.base } else { &a.base };
        let bundle = http.get(format!("{other}/v1/games/{id}/export")).send().await.unwrap().bytes().await.unwrap();
        let report = ludo_record::export::verify_with(&bundle, Some(&key));
        assert!(report.valid, "game {id} (ended on {base}, exported from {other}): {:?}", report.fault);
        assert_eq!(report.receipt.unwrap().leaf_index, receipt["leaf_index"].as_u64().unwrap());
    }

    // A's early checkpoint and B's late one: B's proof links them, and so does A's.
    for base in [&b.base, &a.base] {
        let proof: ConsistencyProof =
            serde_json::from_value(get_json(&http, &format!("{base}/v1/log/consistency?from={}&to={}", early.size, late.size)).await)
                .unwrap();
        transparency::check_consistency(&early, &late, &proof).unwrap_or_else(|e| panic!("{base}'s proof: {e}"));
    }
    // Every receipt's checkpoint is a prefix of the late one.
    for (_, (id, receipt)) in &ended {
        let signed = transparency::open_checkpoint(receipt["checkpoint"].as_str().unwrap(), &key).unwrap();
        let url = format!("{}/v1/log/consistency?from={}&to={}", b.base, signed.size, late.size);
        let proof: ConsistencyProof = serde_json::from_value(get_json(&http, &url).await).unwrap();
        transparency::check_consistency(&signed, &late, &proof).unwrap_or_else(|e| panic!("game {id}'s checkpoint: {e}"));
    }

    // `ludo verify --consistency` agrees, asking the other replica.
    let (old, new) = (dir.path().join("early.txt"), dir.path().join("late.txt"));
    let early_note = http.get(format!("{}/v1/log/checkpoint", a.base)).send().await.unwrap().text().await.unwrap();
    std::fs::write(&old, early_note).unwrap();
    std::fs::write(&new, http.get(format!("{}/v1/log/checkpoint", b.base)).send().await.unwrap().text().await.unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ludo"))
        .args(["verify", "--consistency"])
        .args([&old, &new])
        .args(["--key", &key, "--server", &a.base])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));

    // A third replica with a key of its own is refused: the database's log has one.
    let key_file = dir.path().join("other.key");
    let made = Command::new(env!("CARGO_BIN_EXE_ludo"))
        .args(["log-key", "--origin", key.split('+').next().unwrap(), "--out"])
        .arg(&key_file)
        .output()
        .unwrap();
    assert!(made.status.success());
    let log = dir.path().join("c.log");
    let mut refused = Command::new(env!("CARGO_BIN_EXE_ludo"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("c"))
        .args(["--store", &url, "--log-key"])
        .arg(&key_file)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        if let Some(exit) = refused.try_wait().unwrap() {
            break exit;
        }
        if Instant::now() > deadline {
            let _ = refused.kill();
            let _ = refused.wait();
            panic!("a replica with another key did not refuse to start: {}", std::fs::read_to_string(&log).unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(!exit.success(), "{stderr}");
    assert!(stderr.contains("transparency log") && stderr.contains("is not the store's log key"), "{stderr}");
    drop(http);
    a.terminate();
    b.terminate();
}
