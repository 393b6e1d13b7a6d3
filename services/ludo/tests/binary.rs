//! The `ludo` binary itself: serves on the address it logs, stops cleanly
//! on SIGTERM after flushing the log, and finds its games again on restart.

mod common;

use std::process::Command;

use common::{create, play_out, start};

use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_flushes_and_a_restart_finds_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let created = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = created["id"].as_str().unwrap();
    let state: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
    let token = created["seats"][seat]["token"].as_str().unwrap();
    let legal: Value =
        http.get(format!("{}/v1/games/{id}/legal-moves", server.base)).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    let moved = http
        .post(format!("{}/v1/games/{id}/moves", server.base))
        .bearer_auth(token)
        .json(&json!({"move": legal["moves"][0]}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 200);
    let before: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    drop(http);

    let lines = server.terminate();
    let messages: Vec<&str> = lines.iter().filter_map(|l| l["message"].as_str()).collect();
    assert!(messages.contains(&"SIGTERM received"), "{messages:?}");
    assert!(messages.contains(&"log flushed and closed"), "{messages:?}");

    let server = start(dir.path());
    let http = reqwest::Client::new();
    let after: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(after, before);
    assert_eq!(after["version"], 1);
    drop(http);
    server.terminate();
}

#[test]
fn a_data_dir_that_cannot_be_opened_is_a_clear_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_ludo"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(file.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot open the data directory"), "{stderr}");
}

#[test]
fn openapi_subcommand_prints_the_committed_document() {
    let output = Command::new(env!("CARGO_BIN_EXE_ludo")).arg("openapi").output().unwrap();
    assert!(output.status.success());
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi/openapi.json")).unwrap())
            .unwrap();
    assert!(
        printed == committed,
        "`ludo openapi` differs from openapi/openapi.json: regenerate it with `cargo run -p ludo -- openapi > openapi/openapi.json`"
    );
}

/// Runs `ludo ARGS…`; `ludo verify` pins logs' keys in a file of this test
/// process, never in the user's own configuration.
fn ludo(args: &[&str]) -> std::process::Output {
    static KNOWN: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(|| tempfile::tempdir().expect("a temp dir")).path().join("known_log_keys");
    Command::new(env!("CARGO_BIN_EXE_ludo")).args(args).env("LUDO_KNOWN_KEYS", known).output().expect("run ludo")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_and_export_work_offline_and_sigterm_ends_live_streams() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let created = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    play_out(&http, &server.base, &created).await;
    let id = created["id"].as_str().unwrap().to_string();
    let export = http.get(format!("{}/v1/games/{id}/export", server.base)).send().await.unwrap().bytes().await.unwrap().to_vec();
    // A running game with a live stream open while the server is stopped.
    let running = create(&http, &server.base, "cardinal", &["Cid", "Dee"]).await;
    let stream = http.get(format!("{}/v1/games/{}/stream", server.base, running["id"].as_str().unwrap())).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let lines = server.terminate();
    assert!(lines.iter().any(|l| l["message"] == "log flushed and closed"), "the server stopped cleanly with a stream open");
    drop(stream);

    let file = dir.path().join("game.jsonl");
    std::fs::write(&file, &export).unwrap();
    let path = file.to_str().unwrap();
    let valid = ludo(&["verify", path]);
    let text = String::from_utf8_lossy(&valid.stdout);
    assert!(valid.status.success(), "{text}");
    assert!(text.contains("seed: matches the commitment") && text.contains("VALID"), "{text}");
    let report: Value = serde_json::from_slice(&ludo(&["verify", "--json", path]).stdout).unwrap();
    assert_eq!((report["valid"].clone(), report["replayed"].clone()), (json!(true), json!(true)));

    let mut tampered = export.clone();
    let third_line = tampered.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(2).unwrap().0 + 1;
    tampered[third_line + 25] ^= 0x01;
    std::fs::write(&file, &tampered).unwrap();
    let invalid = ludo(&["verify", path]);
    let text = String::from_utf8_lossy(&invalid.stdout);
    assert_eq!(invalid.status.code(), Some(1), "{text}");
    assert!(text.contains("INVALID at line 4 (record 2)"), "{text}");
    assert_eq!(ludo(&["verify", "/no/such/file"]).status.code(), Some(2));

    // The offline export of the stopped server's data is the same record.
    let offline = ludo(&["export", "--data-dir", dir.path().to_str().unwrap(), &id]);
    assert!(offline.status.success(), "{}", String::from_utf8_lossy(&offline.stderr));
    let records = |bytes: &[u8]| bytes.split(|&b| b == b'\n').skip(1).map(<[u8]>::to_vec).collect::<Vec<_>>();
    assert_eq!(records(&offline.stdout), records(&export));
}

/// Every path under `dir` whose mode gives anything to group or others.
fn shared_paths(dir: &std::path::Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            out.push(format!("{} {mode:o}", path.display()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_directory_and_its_files_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().unwrap();
    // A new data directory.
    let fresh = parent.path().join("fresh");
    let server = start(&fresh);
    let http = reqwest::Client::new();
    let created = create(&http, &server.base, "kardinal", &["Ann", "Bob", "Cid"]).await;
    for _ in 0..5 {
        assert!(common::play_one(&http, &server.base, &created).await);
    }
    server.terminate();
    assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(shared_paths(&fresh), Vec::<String>::new(), "the seeds of running games are their owner's alone");

    // A data directory written before this rule, readable by everyone.
    let old = parent.path().join("old");
    std::fs::create_dir(&old).unwrap();
    {
        let store = ludo_storage::SledStore::open(&old, ludo_storage::SledOptions::default()).unwrap();
        ludo_storage::EventStore::close(&store).unwrap();
    }
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    for entry in std::fs::read_dir(&old).unwrap() {
        let path = entry.unwrap().path();
        let mode = if path.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    assert!(!shared_paths(&old).is_empty());
    let server = start(&old);
    let early = server.early.clone();
    let lines = server.terminate();
    assert_eq!(shared_paths(&old), Vec::<String>::new(), "made owner-only when opened");
    assert!(early.iter().chain(&lines).any(|l| l["message"].as_str().is_some_and(|m| m.contains("made owner-only"))), "and said so");
}

#[test]
fn probe_exits_0_on_a_2xx_answer_and_1_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let probe = |url: &str| ludo(&["probe", "--timeout", "2s", url]);
    assert!(probe(&format!("{}/readyz", server.base)).status.success());
    assert!(probe(&format!("{}/healthz", server.base)).status.success());
    let missing = probe(&format!("{}/no-such-thing", server.base));
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("404"));
    server.terminate();
    // Nobody listening, or a listener that never answers.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    assert_eq!(probe(&format!("http://127.0.0.1:{port}/readyz")).status.code(), Some(1));
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let started = std::time::Instant::now();
    let mute = ludo(&["probe", "--timeout", "300ms", &format!("http://{}/readyz", silent.local_addr().unwrap())]);
    assert_eq!(mute.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&mute.stderr).contains("no answer"), "{}", String::from_utf8_lossy(&mute.stderr));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(ludo(&["probe", "https://127.0.0.1/"]).status.code(), Some(1), "only http");
}

#[test]
fn simulate_plays_bots_against_each_other_and_writes_verifiable_records() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("records");
    let records_arg = records.to_str().unwrap();
    for (game, players) in [("kardinal", "3"), ("battle13", "4"), ("cardinal", "2")] {
        let out = ludo(&[
            "simulate",
            "--game",
            game,
            "--players",
            players,
            "--bots",
            "greedy,random",
            "--games",
            "2",
            "--iterations",
            "20",
            "--think-ms",
            "0",
            "--records",
            records_arg,
        ]);
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{game}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(report.contains("win share") && report.contains("greedy") && report.contains("random"), "{report}");
        assert!(report.contains("games/s"), "{report}");
        for n in 0..2 {
            let file = records.join(format!("game-{n}.ndjson"));
            let verified = ludo(&["verify", file.to_str().unwrap()]);
            assert!(verified.status.success(), "{game} game {n}: {}", String::from_utf8_lossy(&verified.stdout));
            assert!(String::from_utf8_lossy(&verified.stdout).contains("VALID"));
            // Each seat is recorded as the bot that played it, each move as that bot's.
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
            let bots = lines[1]["bots"].as_array().unwrap().clone();
            let seats = lines[1]["seats"].as_array().unwrap();
            for (seat, bot) in bots.iter().enumerate() {
                assert!(seats[seat].as_str().unwrap().starts_with(bot["level"].as_str().unwrap()), "{game}: seat {seat} is {bot}");
            }
            let moves: Vec<&Value> = lines.iter().filter(|l| l["type"] == "move").collect();
            assert!(!moves.is_empty());
            for mv in moves {
                let seat = mv["seat"].as_u64().unwrap() as usize;
                assert_eq!(mv["bot"]["level"], bots[seat]["level"], "{game}: {mv}");
            }
        }
    }
    // Bad input is a clear error, and nothing runs.
    let out = ludo(&["simulate", "--game", "battle13", "--bots", "expert"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown bot level `expert`"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = ludo(&["simulate", "--game", "battle13", "--players", "3"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("takes 4 to 4 players"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = ludo(&["simulate", "--game", "chess"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown game `chess`"));
}
