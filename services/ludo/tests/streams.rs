//! Live streams against the real binary: they end when their client goes,
//! an append wakes only its own game's streams, resumption is bounded, and
//! a finished game's stream ends so that a browser stops.

mod common;

use std::time::Duration;

use common::{create, play_one, play_out, start};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tokio_stream::StreamExt;

const STREAMS: usize = 40;

async fn sse(http: &reqwest::Client, url: &str) -> reqwest::Response {
    let response = http.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_end_when_their_clients_go_without_any_new_record() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap();
    let url = format!("{}/v1/games/{id}/stream", server.base);

    // SSE over HTTP/1.1, each stream on its own connection.
    let mut open = Vec::new();
    for _ in 0..STREAMS {
        open.push(sse(&reqwest::Client::new(), &url).await);
    }
    // gRPC WatchGame over one HTTP/2 connection.
    let channel = tonic::transport::Channel::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    let mut calls = Vec::new();
    for _ in 0..STREAMS {
        let mut grpc = pb::ludo_client::LudoClient::new(channel.clone());
        let mut updates = grpc.watch_game(pb::WatchGameRequest { id: id.to_string(), from: 0 }).await.unwrap().into_inner();
        assert_eq!(updates.message().await.unwrap().unwrap().event.unwrap().seq, 0);
        calls.push(updates);
    }
    let all = (2 * STREAMS) as f64;
    assert_eq!(server.metric_until("ludo_watchers", Duration::from_secs(10), |v| v == all).await, all);
    assert_eq!(server.metric("ludo_watched_games").await, 1.0);

    // The clients go; the game stays idle: nothing but their going can end the streams.
    drop(open);
    let left = server.metric_until("ludo_watchers", Duration::from_secs(10), |v| v == STREAMS as f64).await;
    assert_eq!(left, STREAMS as f64, "closed SSE connections ended their streams");
    drop(calls); // cancels each call (RST_STREAM) on a connection that stays open
    let left = server.metric_until("ludo_watchers", Duration::from_secs(10), |v| v == 0.0).await;
    assert_eq!(left, 0.0, "cancelled WatchGame calls ended their streams");
    assert_eq!(server.metric("ludo_watched_games").await, 0.0, "no doorbell outlives its last watcher");
    // The game itself never moved.
    let state: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["version"], 0);
    drop(channel);
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_wakes_only_the_streams_of_its_own_game() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let idle = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let busy = create(&http, &server.base, "cardinal", &["Cid", "Dee"]).await;
    let mut idle_streams = Vec::new();
    for _ in 0..STREAMS {
        idle_streams.push(sse(&reqwest::Client::new(), &format!("{}/v1/games/{}/stream", server.base, idle["id"].as_str().unwrap())).await);
    }
    let mut busy_stream = sse(&http, &format!("{}/v1/games/{}/stream", server.base, busy["id"].as_str().unwrap())).await;
    assert_eq!(server.metric_until("ludo_watchers", Duration::from_secs(10), |v| v == (STREAMS + 1) as f64).await, (STREAMS + 1) as f64);
    let before = server.metric("ludo_watch_wakeups_total").await;
    const MOVES: usize = 12;
    for _ in 0..MOVES {
        assert!(play_one(&http, &server.base, &busy).await);
    }
    // The busy game's one stream receives every record (0 and the 12 moves).
    let mut received = String::new();
    while received.matches("event: record").count() < MOVES + 1 {
        let chunk = tokio::time::timeout(Duration::from_secs(10), busy_stream.chunk()).await.expect("records arrive").unwrap().unwrap();
        received.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let woken = server.metric("ludo_watch_wakeups_total").await - before;
    // One wake-up per append at most (appends may share one), and none for the 40 idle streams.
    assert!((1.0..=MOVES as f64).contains(&woken), "{woken} wake-ups for {MOVES} appends to a game with one stream");
    drop(idle_streams);
    drop(busy_stream);
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_past_the_log_is_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let url = format!("{}/v1/games/{}/stream", server.base, game["id"].as_str().unwrap());
    for (header, field) in [(Some(u64::MAX.to_string()), "Last-Event-ID"), (Some("5".to_string()), "Last-Event-ID"), (None, "from")] {
        let request = match &header {
            Some(last) => http.get(&url).header("last-event-id", last),
            None => http.get(format!("{url}?from=7")),
        };
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), 400, "{header:?}");
        assert_eq!(answer.headers()["content-type"], "application/problem+json");
        let problem: Value = answer.json().await.unwrap();
        assert_eq!((problem["code"].as_str(), problem["field"].as_str()), (Some("invalid_input"), Some(field)), "{problem}");
    }
    // Resuming right after the last record waits for the next one.
    let mut live = sse(&http, &format!("{url}?from=1")).await;
    assert!(play_one(&http, &server.base, &game).await);
    let chunk = tokio::time::timeout(Duration::from_secs(10), live.chunk()).await.unwrap().unwrap().unwrap();
    assert!(std::str::from_utf8(&chunk).unwrap().contains("id: 1\n"), "{chunk:?}");
    drop(live);
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_games_stream_ends_with_an_end_event_and_a_reconnect_gets_204() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap();
    let url = format!("{}/v1/games/{id}/stream", server.base);
    let stream = sse(&http, &url).await;
    play_out(&http, &server.base, &game).await;
    let text = tokio::time::timeout(Duration::from_secs(30), stream.text()).await.expect("the stream of a finished game ends").unwrap();
    let blocks: Vec<&str> = text.split("\n\n").filter(|b| b.contains("data:")).collect();
    let last = blocks.last().unwrap();
    assert!(last.starts_with("event: end\n"), "the last event is `end`: {last}");
    let end: Value = serde_json::from_str(last.split_once("data: ").unwrap().1.trim()).unwrap();
    let version = end["version"].as_u64().unwrap();
    assert_eq!(end["status"]["state"], "finished");
    assert_eq!(blocks.len() as u64, version + 2, "every record, then the end");
    assert!(blocks[blocks.len() - 2].contains(&format!("id: {version}\n")));

    // A browser's EventSource reconnects with the last id it saw: nothing
    // will ever follow, and 204 tells it to stop.
    let again = http.get(&url).header("last-event-id", version.to_string()).send().await.unwrap();
    assert_eq!(again.status(), 204);
    assert!(again.bytes().await.unwrap().is_empty());
    // From the start, the whole record and the end again.
    let replayed = http.get(&url).send().await.unwrap().text().await.unwrap();
    assert_eq!(replayed.matches("event: record").count() as u64, version + 1);
    assert!(replayed.contains("event: end"));

    // gRPC: a finished game's stream ends with OK after its last record, or at once when nothing is left.
    let mut grpc = pb::ludo_client::LudoClient::connect(server.base.clone()).await.unwrap();
    let updates = grpc.watch_game(pb::WatchGameRequest { id: id.to_string(), from: version }).await.unwrap().into_inner();
    let seqs: Vec<u64> = updates.map(|u| u.unwrap().event.unwrap().seq).collect().await;
    assert_eq!(seqs, vec![version]);
    let mut nothing = grpc.watch_game(pb::WatchGameRequest { id: id.to_string(), from: version + 1 }).await.unwrap().into_inner();
    assert!(nothing.message().await.unwrap().is_none());
    drop(grpc);
    server.terminate();
}

/// An operator can see who follows a game as which seat, and why a stream
/// ended: the log says when a seat's stream opens and ends, and a stream
/// that ended because its seat changed hands says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_shows_a_seat_s_stream_opening_and_ending_when_the_seat_changes_hands() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let http = reqwest::Client::new();
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap();
    let bob = game["seats"][1]["token"].as_str().unwrap();
    let ticket: Value =
        http.post(format!("{}/v1/games/{id}/stream-tickets", server.base)).bearer_auth(bob).send().await.unwrap().json().await.unwrap();
    let mut stream = sse(&http, &format!("{}/v1/games/{id}/stream?ticket={}", server.base, ticket["ticket"].as_str().unwrap())).await;
    stream.chunk().await.unwrap().expect("record 0");
    let renewed = http
        .post(format!("{}/v1/games/{id}/seats/1/token", server.base))
        .bearer_auth(game["admin_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(renewed.status(), 200);
    let mut rest = String::new();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await.expect("the stream ends").unwrap() {
        rest.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert!(rest.contains("event: seat_revoked"), "{rest}");
    let lines = server.terminate();
    let said = |message: &str| lines.iter().find(|line| line["message"] == message && line["game"] == id).cloned();
    let opened = said("stream opened").expect("a line for the stream's opening");
    assert_eq!(opened["viewer"], "seat 1", "{opened}");
    let ended = said("stream ended").expect("a line for the stream's end");
    assert_eq!((&ended["why"], &ended["viewer"]), (&json!("seat changed hands"), &json!("seat 1")), "{ended}");
    assert!(said("seat token renewed: the old token, its tickets and its streams no longer open the seat").is_some());
}
