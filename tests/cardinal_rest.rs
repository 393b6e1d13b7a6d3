//! A whole Cardinal game over REST, moves chosen from the legal-moves
//! endpoint, final scores checked against the engine replaying the
//! published seed and the logged moves.

use ludo_blackbox::{TestServer, chooser, engine_replay};
use ludo_engine::Status;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_game_over_rest_for_each_table_size() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    for (players, seed) in [(vec!["Ann", "Bob"], 11), (vec!["Ann", "Bob", "Cid"], 12), (vec!["Ann", "Bob", "Cid", "Dee"], 13)] {
        let game = rest.create("cardinal", &players, json!({})).await;
        let id = game["id"].as_str().unwrap();
        assert_eq!(game["version"], 0);
        assert_eq!(game["seats"].as_array().unwrap().len(), players.len());
        let played = rest.play(&game, 400, chooser(seed)).await;
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        assert_eq!(state["status"]["state"], "finished", "the game ended after {played} moves");
        assert_eq!(state["version"], played as u64, "one record per move");
        assert_eq!(state["view"]["phase"], "finished");

        let events = rest.events(id, None).await;
        assert_eq!(events.len(), played + 1);
        let engine = engine_replay::<ludo_cardinal::Game>(&state, &events);
        let server_status: Status = serde_json::from_value(state["status"].clone()).unwrap();
        assert_eq!(server_status, engine, "the server's final scores are the engine's");
        let Status::Finished { result } = engine else { panic!("the engine says the game goes on") };
        assert_eq!(state["view"]["scoring"]["seats"].as_array().unwrap().len(), players.len());
        for (seat, score) in result.scores.iter().enumerate() {
            assert_eq!(state["view"]["scoring"]["seats"][seat]["total"], json!(score));
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_is_consistent_along_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 1})).await;
    let id = game["id"].as_str().unwrap();
    let created = rest.get(&format!("/v1/games/{id}"), None).await;
    assert_eq!(created.status, 200);
    assert_eq!(created.body["status"]["to_move"], json!([1]), "first_seat is honoured");
    assert!(created.body.get("seed").is_none(), "the seed stays secret while the game runs");
    assert_eq!(created.body["seed_commitment"], game["seed_commitment"]);

    rest.play(&game, 10, chooser(5)).await;
    let live = rest.get(&format!("/v1/games/{id}"), None).await.body;
    for at in 0..=10 {
        let replay = rest.get(&format!("/v1/games/{id}/replay?at={at}"), None).await;
        assert_eq!(replay.status, 200);
        assert_eq!(replay.body["version"], at);
        assert_eq!(replay.body["latest_version"], 10);
    }
    let last = rest.get(&format!("/v1/games/{id}/replay?at=10"), None).await.body;
    assert_eq!(last["view"], live["view"]);
    let events = rest.events(id, None).await;
    assert_eq!(events[0]["type"], "game_created");
    assert_eq!(events[0]["game"]["seed_commitment"], game["seed_commitment"]);
    assert!(events[1..].iter().all(|e| e["type"] == "move" && e["hash"].as_str().unwrap().len() == 64));

    let listed = rest.get("/v1/games?kind=cardinal&state=in_progress", None).await;
    assert_eq!(listed.status, 200);
    assert!(listed.body["games"].as_array().unwrap().iter().any(|g| g["id"] == id));
    let seat_view = rest.get(&format!("/v1/games/{id}"), game["seats"][0]["token"].as_str()).await.body;
    assert_eq!(seat_view["viewer_seat"], 0);

    // One refusal, then the metrics count exactly what happened.
    let refused = rest
        .post(
            &format!("/v1/games/{id}/moves"),
            game["seats"][0]["token"].as_str(),
            &json!({"move": {"type": "keep_cardinal"}, "expected_version": 0}),
        )
        .await;
    assert_eq!(refused.body["code"], "version_conflict");
    let (status, metrics) = rest.get_bytes("/metrics", None).await;
    assert_eq!(status, 200);
    let metrics = String::from_utf8(metrics).unwrap();
    for line in [
        "ludo_games_created_total{kind=\"cardinal\"} 1",
        "ludo_moves_total{outcome=\"accepted\"} 10",
        "ludo_moves_total{outcome=\"version_conflict\"} 1",
        "ludo_move_seconds_count 10",
        "ludo_store_appends_total 11",
    ] {
        assert!(metrics.lines().any(|l| l == line), "`{line}` missing from:\n{metrics}");
    }
    server.stop().await;
}
