//! `ludo bot`: the bots as a program of their own, playing a seat of a game
//! on a real `ludo serve` over the public API, against the server's own bot
//! seats and people.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Runs `ludo bot` for one seat in the background.
fn remote_bot(base: &str, game: &str, token: &str, level: &str, seed: u64) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ludo"))
        .args(["bot", "--server", base, "--game", game, "--level", level, "--iterations", "80", "--seed", &seed.to_string()])
        .env("LUDO_TOKEN", token)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ludo bot")
}

/// Waits (at most 120 s) for `child` to exit and answers its output.
fn finished(mut child: std::process::Child) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

async fn events(http: &reqwest::Client, base: &str, id: &str) -> Vec<Value> {
    let page: Value = http.get(format!("{base}/v1/games/{id}/events?limit=1000")).send().await.unwrap().json().await.unwrap();
    page["events"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_bots_play_their_seats_to_the_end_beside_the_servers_own() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path());
    let http = reqwest::Client::new();
    // Battle 13 (hidden knights): two seats the server plays, two played by
    // `ludo bot` processes from what their seats know.
    let server_bot = json!({"level": "random", "think_ms": 0});
    let body = json!({"kind": "battle13", "players": [
        {"name": "North", "bot": server_bot}, "East (remote)", {"name": "South", "bot": server_bot}, "West (remote)"]});
    let created: Value = http.post(format!("{}/v1/games", server.base)).json(&body).send().await.unwrap().json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    // Only people's seats have tokens (the server's bot seats have none).
    let seats = created["seats"].as_array().unwrap();
    assert_eq!(seats.iter().map(|s| s["seat"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 3], "{created}");
    let token = |seat: u64| seats.iter().find(|s| s["seat"] == seat).unwrap()["token"].as_str().unwrap().to_string();
    let east = remote_bot(&server.base, &id, &token(1), "strong", 1);
    let west = remote_bot(&server.base, &id, &token(3), "greedy", 2);
    for (seat, output) in [(1, finished(east)), (3, finished(west))] {
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "seat {seat}: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains(&format!("game over: seat {seat} made")), "{stdout}");
    }
    let state: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["status"]["state"], "finished", "{state}");
    // The remote seats' moves are theirs (made with their tokens); the
    // server's seats' moves name the server's bot.
    let events = events(&http, &server.base, &id).await;
    let mut by_seat = [0; 4];
    for event in &events[1..] {
        let seat = event["seat"].as_u64().unwrap() as usize;
        by_seat[seat] += 1;
        assert_eq!(event.get("bot").is_some(), seat.is_multiple_of(2), "record {}: {event}", event["seq"]);
    }
    assert!(by_seat.iter().all(|&n| n > 0), "every seat moved: {by_seat:?}");
    let export = http.get(format!("{}/v1/games/{id}/export", server.base)).send().await.unwrap().bytes().await.unwrap();
    let report: Value = http.post(format!("{}/v1/verify", server.base)).body(export).send().await.unwrap().json().await.unwrap();
    assert_eq!(report["valid"], true, "{report}");
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_bot_with_a_wrong_token_or_game_says_why_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path());
    let http = reqwest::Client::new();
    let created = common::create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = created["id"].as_str().unwrap();
    let output = finished(remote_bot(&server.base, id, "not-a-token", "random", 0));
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unauthorized"), "{}", String::from_utf8_lossy(&output.stderr));
    let output = finished(remote_bot(&server.base, "0190a0a0-0000-7000-8000-000000000000", "x", "random", 0));
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("not_found"), "{}", String::from_utf8_lossy(&output.stderr));
    // Nothing was played.
    let state: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["version"], 0);
    server.terminate();
}
