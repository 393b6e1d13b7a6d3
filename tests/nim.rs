//! The test-only game Nim (feature `test-game`, docs/adding-a-game.md),
//! registered by one line of `ludo_record::for_each_game!`: created and played
//! to its end over REST and over gRPC like any published game, its export
//! verifies, and it is published nowhere (`GET /v1/kinds`, `ListKinds`,
//! the OpenAPI document).

use ludo_blackbox::{TestServer, chooser, grpc_play};
use ludo_proto::ludo::nim::v1 as npb;
use ludo_proto::v1 as pb;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nim_is_played_to_its_end_over_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let created = rest.create("nim", &["Ann", "Bob"], json!({"heap": 10})).await;
    assert_eq!(created["kind"], "nim");
    let id = created["id"].as_str().unwrap();

    let played = rest.play(&created, 20, chooser(7)).await;
    assert!((4..=10).contains(&played), "{played} moves take 10 counters");
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["status"]["state"], "finished");
    assert_eq!(state["view"]["heap"], 0);
    let winner = state["view"]["winner"].clone();
    assert_eq!(state["status"]["result"]["winners"], json!([winner]));

    // Every record is there, the last move ending the game, and the export verifies.
    let events = rest.events(id, None).await;
    assert_eq!(events.len(), played + 1);
    assert_eq!(events.last().unwrap()["effects"].as_array().unwrap().last().unwrap()["type"], "game_ended");
    let (status, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert_eq!(status, 200);
    let report = rest.post_bytes("/v1/verify", export).await;
    assert_eq!(report.body["valid"], true, "{report:?}");

    // Hosted, but listed nowhere.
    let kinds = rest.get("/v1/kinds", None).await.body;
    assert!(kinds["kinds"].as_array().unwrap().iter().all(|k| k["kind"] != "nim"), "{kinds}");
    assert!(!ludo_server::openapi().to_string().contains("schemas/nim."), "the OpenAPI document names no Nim schema");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nim_is_played_to_its_end_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let options = pb::Options { game: Some(pb::options::Game::Nim(npb::Options { heap: 9 })) };
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "nim".into(),
            players: vec!["Ann".into(), "Bob".into()],
            options: Some(options),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let played = grpc_play(&mut grpc, &created, 20, chooser(11)).await as u64;
    let finished = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
    assert_eq!(finished.version, played);
    let Some(pb::options::Game::Nim(recorded)) = finished.options.and_then(|o| o.game) else { panic!("Nim options") };
    assert_eq!(recorded.heap, 9);
    let Some(pb::status::State::Finished(result)) = finished.status.unwrap().state else { panic!("not finished") };
    let Some(pb::view::Game::Nim(view)) = finished.view.unwrap().game else { panic!("a Nim view") };
    assert_eq!(view.heap, 0);
    assert_eq!(result.winners, [view.winner.expect("a winner")]);

    let events = grpc.list_events(pb::ListEventsRequest { id: created.id.clone(), from: 0, limit: 100 }).await.unwrap().into_inner();
    let taken: u32 = events
        .events
        .iter()
        .flat_map(|e| &e.effects)
        .filter_map(|e| match &e.game {
            Some(pb::effect::Game::Nim(npb::Effect { effect: Some(npb::effect::Effect::Took(took)) })) => Some(took.count),
            _ => None,
        })
        .sum();
    assert_eq!(taken, 9, "every counter taken, one effect each move");

    // The same game over REST.
    let rest = server.rest().get(&format!("/v1/games/{}", created.id), None).await.body;
    assert_eq!(rest["status"]["result"]["winners"], json!(result.winners));
    let kinds = grpc.list_kinds(pb::ListKindsRequest {}).await.unwrap().into_inner();
    assert!(kinds.kinds.iter().all(|k| k.kind != "nim"));
    drop(grpc);
    server.stop().await;
}
