//! Battle 13 end to end: whole matches over REST and gRPC with four tokens,
//! each seat seeing exactly its own knights, crowns equal to the engine's,
//! and every version replayable.

use ludo_blackbox::{Rest, TestServer, authed, engine_replay, grpc_play};
use ludo_engine::Status;
use ludo_proto::v1 as pb;
use serde_json::{Value, json};

/// Picks a legal move, passing two times in three when passing is allowed,
/// so matches see several jousts and contracts that are made.
fn patient(seed: u64) -> impl FnMut(&[Value]) -> usize {
    let mut state = seed | 1;
    move |moves| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        match moves.iter().position(|m| m["type"] == "pass") {
            Some(pass) if !state.is_multiple_of(3) => pass,
            _ => (state % moves.len() as u64) as usize,
        }
    }
}

/// Each seat sees its own knights, no other seat's (but the servant's once public).
async fn check_knights(rest: &Rest, game: &Value) {
    let id = game["id"].as_str().unwrap();
    for viewer in 0..4 {
        let seen = rest.get(&format!("/v1/games/{id}"), game["seats"][viewer]["token"].as_str()).await.body;
        let joust = &seen["view"]["joust"];
        let servant = (joust["servant_public"] == true).then(|| joust["contract"]["servant"].as_u64().unwrap() as usize);
        for (seat, hand) in joust["hands"].as_array().unwrap().iter().enumerate() {
            let visible = !hand["held"].is_null();
            assert_eq!(visible, seat == viewer || Some(seat) == servant, "seat {viewer} looking at seat {seat}'s knights");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_match_over_rest_with_four_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("battle13", &["North", "East", "South", "West"], json!({"target_crowns": 20})).await;
    let id = game["id"].as_str().unwrap();
    let mut choose = patient(13);
    let mut moves = 0;
    while rest.get(&format!("/v1/games/{id}"), None).await.body["status"]["state"] != "finished" {
        if moves % 7 == 0 {
            check_knights(&rest, &game).await;
        }
        assert_eq!(rest.play(&game, 1, &mut choose).await, 1);
        moves += 1;
        assert!(moves < 5000, "the match does not end");
    }
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    let events = rest.events(id, None).await;
    let engine = engine_replay::<ludo_battle13::Game>(&state, &events);
    assert_eq!(serde_json::from_value::<Status>(state["status"].clone()).unwrap(), engine, "crowns equal the engine's");
    let Status::Finished { result } = engine else { unreachable!() };
    assert_eq!(result.winners.len(), 2);
    let camp = result.winners[0].index() % 2;
    assert!(state["view"]["crowns"][camp].as_i64().unwrap() >= 20, "the winning camp reached the target");
    assert_eq!(json!(result.scores[camp]), state["view"]["crowns"][camp]);
    // Replay gives the same state at every version (sampled densely).
    let latest = state["version"].as_u64().unwrap();
    for at in (0..=latest).step_by(9).chain([latest]) {
        let replay = rest.get(&format!("/v1/games/{id}/replay?at={at}"), None).await;
        assert_eq!(replay.status, 200);
        assert_eq!(replay.body["version"], at);
    }
    assert_eq!(rest.get(&format!("/v1/games/{id}/replay?at={latest}"), None).await.body["view"], state["view"]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_match_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "battle13".into(),
            players: ["North", "East", "South", "West"].iter().map(|s| s.to_string()).collect(),
            options: None,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut choose = ludo_blackbox::chooser(7);
    grpc_play(&mut grpc, &created, 3, &mut choose).await;
    for viewer in 0..4 {
        let state =
            grpc.get_game(authed(pb::GetGameRequest { id: created.id.clone() }, &created.seats[viewer].token)).await.unwrap().into_inner();
        assert!(matches!(state.view.unwrap().game, Some(pb::view::Game::Battle13(_))));
    }
    let played = grpc_play(&mut grpc, &created, 5000, &mut choose).await;
    let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
    let Some(pb::status::State::Finished(result)) = state.status.unwrap().state else { panic!("finished after {played} more moves") };
    assert_eq!(result.winners.len(), 2);
    let rest = server.rest().get(&format!("/v1/games/{}", created.id), None).await.body;
    assert_eq!(rest["status"]["result"]["scores"], json!(result.scores), "REST and gRPC agree");
    drop(grpc);
    server.stop().await;
}
