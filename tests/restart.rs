//! Stop the server and start it again on the same data directory: every
//! game's state (as every viewer sees it) and log are exactly as they were.

use ludo_blackbox::{Rest, TestServer, chooser};
use serde_json::{Value, json};

/// Everything observable about a game: its state for a spectator and for
/// each seat, its legal moves per seat, its log, and a replay.
async fn snapshot(rest: &Rest, game: &Value) -> Value {
    let id = game["id"].as_str().unwrap();
    let mut seats = Vec::new();
    for seat in game["seats"].as_array().unwrap() {
        let token = seat["token"].as_str();
        seats.push(json!({
            "state": rest.get(&format!("/v1/games/{id}"), token).await.body,
            "legal": rest.get(&format!("/v1/games/{id}/legal-moves"), token).await.body,
            "events": rest.events(id, token).await,
        }));
    }
    json!({
        "spectator": rest.get(&format!("/v1/games/{id}"), None).await.body,
        "events": rest.events(id, None).await,
        "replay_1": rest.get(&format!("/v1/games/{id}/replay?at=1"), None).await.body,
        "seats": seats,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let finished = rest.create("cardinal", &["Ann", "Bob", "Cid", "Dee"], json!({})).await;
    rest.play(&finished, 400, chooser(1)).await;
    let running = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 1})).await;
    rest.play(&running, 7, chooser(2)).await;
    let fresh = rest.create("cardinal", &["Ann", "Bob", "Cid"], json!(null)).await;
    let games = [finished, running, fresh];
    let mut before = Vec::new();
    for game in &games {
        before.push(snapshot(&rest, game).await);
    }
    let listing = rest.get("/v1/games", None).await.body;
    server.stop().await;

    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    assert_eq!(rest.get("/v1/games", None).await.body, listing);
    for (game, before) in games.iter().zip(before) {
        assert_eq!(snapshot(&rest, game).await, before, "game {} changed across a restart", game["id"]);
    }
    assert_eq!(before_finished_state(&rest, &games[0]).await, "finished");
    // The running game goes on where it stopped, seats' tokens still work.
    let played = rest.play(&games[1], 3, chooser(3)).await;
    assert_eq!(played, 3);
    let id = games[1]["id"].as_str().unwrap();
    assert_eq!(rest.get(&format!("/v1/games/{id}"), None).await.body["version"], 10);
    server.stop().await;
}

async fn before_finished_state(rest: &Rest, game: &Value) -> String {
    let id = game["id"].as_str().unwrap();
    rest.get(&format!("/v1/games/{id}"), None).await.body["status"]["state"].as_str().unwrap().to_string()
}
