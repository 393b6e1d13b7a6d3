//! Kardinal & König end to end: full 3- and 5-player games over REST and
//! gRPC, every seat seeing only its own hand, exact scoring breakdowns, and
//! replays equal to what was seen live.

use std::collections::BTreeMap;

use ludo_blackbox::{Rest, TestServer, authed, chooser, engine_replay, grpc_play};
use ludo_engine::Status;
use ludo_proto::v1 as pb;
use serde_json::{Value, json};

/// Checks what each seat and a spectator see of the hands right now.
async fn check_hands(rest: &Rest, game: &Value, players: usize) {
    let id = game["id"].as_str().unwrap();
    let spectator = rest.get(&format!("/v1/games/{id}"), None).await.body;
    for seat in 0..players {
        assert!(spectator["view"]["seats"][seat]["hand"].is_null(), "a spectator sees seat {seat}'s hand");
    }
    assert!(spectator["view"]["deck"].is_null(), "a spectator sees the deck");
    for viewer in 0..players {
        let seen = rest.get(&format!("/v1/games/{id}"), game["seats"][viewer]["token"].as_str()).await.body;
        for seat in 0..players {
            let hand = &seen["view"]["seats"][seat]["hand"];
            if seat == viewer {
                assert_eq!(hand.as_array().unwrap().len() as u64, seen["view"]["seats"][seat]["hand_size"].as_u64().unwrap());
            } else {
                assert!(hand.is_null(), "seat {viewer} sees seat {seat}'s hand");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_games_over_rest_at_three_and_five_players() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let kinds = rest.get("/v1/kinds", None).await.body;
    let kind = kinds["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == "kardinal").expect("kardinal is hosted").clone();
    assert_eq!((kind["min_players"].as_u64(), kind["max_players"].as_u64()), (Some(3), Some(5)));
    let board = &kind["default_options"]["board"];
    assert_eq!(board["sites"].as_array().unwrap().len(), 65, "clients get the board topology to draw it");
    assert_eq!(board["alliances"].as_array().unwrap().len(), 15);

    for (players, seed) in [(3usize, 31u64), (5, 32)] {
        let names = ["Ann", "Bob", "Cid", "Dee", "Eve"];
        let game = rest.create("kardinal", &names[..players], json!({"first_seat": 0})).await;
        let id = game["id"].as_str().unwrap();
        let mut choose = chooser(seed);
        let mut seen: BTreeMap<u64, Value> = BTreeMap::new();
        let mut moves = 0;
        loop {
            let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
            if state["status"]["state"] == "finished" {
                break;
            }
            seen.insert(state["version"].as_u64().unwrap(), state["view"].clone());
            if moves % 25 == 0 {
                check_hands(&rest, &game, players).await;
            }
            if moves == 60 {
                // While the game runs, a replay shows exactly what was seen live.
                for (version, view) in &seen {
                    let replay = rest.get(&format!("/v1/games/{id}/replay?at={version}"), None).await.body;
                    assert_eq!(&replay["view"], view, "replay at {version}");
                }
            }
            assert_eq!(rest.play(&game, 1, &mut choose).await, 1);
            moves += 1;
            assert!(moves < 3000, "the game does not end");
        }
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        let events = rest.events(id, None).await;
        assert_eq!(events[0]["game"]["options"]["board"], *board, "the board in use is recorded in the log");
        let engine = engine_replay::<ludo_kardinal::Game>(&state, &events);
        let server: Status = serde_json::from_value(state["status"].clone()).unwrap();
        assert_eq!(server, engine, "the server's result is the engine's, replayed from the published seed");
        let Status::Finished { result } = engine else { unreachable!() };
        let view = &state["view"];
        assert_eq!(view["interim"].as_array().map(Vec::len), Some(9), "the interim scoring covers the nine countries");
        let totals = view["final_scoring"]["totals"].as_array().unwrap();
        for (seat, total) in totals.iter().enumerate() {
            assert_eq!(total["total"], json!(result.scores[seat]));
            let parts = ["interim", "abbeys", "alliances", "chains"].iter().map(|k| total[k].as_i64().unwrap()).sum::<i64>();
            assert_eq!(parts, total["total"].as_i64().unwrap(), "the breakdown adds up for seat {seat}");
        }
        assert_eq!(view["final_scoring"]["alliances"].as_array().unwrap().len(), 15);
        for seat in 0..players {
            assert!(view["seats"][seat]["hand"].is_array(), "hands are public once the game is over");
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_games_over_grpc_at_three_and_five_players() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    for (players, seed) in [(3usize, 41u64), (5, 42)] {
        let names: Vec<String> = ["Ann", "Bob", "Cid", "Dee", "Eve"][..players].iter().map(|s| s.to_string()).collect();
        let created = grpc
            .create_game(pb::CreateGameRequest { kind: "kardinal".into(), players: names, options: None, ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        let mut choose = chooser(seed);
        // Mid-game, each seat's view over gRPC holds its own hand only.
        grpc_play(&mut grpc, &created, 20, &mut choose).await;
        for viewer in 0..players {
            let state = grpc
                .get_game(authed(pb::GetGameRequest { id: created.id.clone() }, &created.seats[viewer].token))
                .await
                .unwrap()
                .into_inner();
            let Some(pb::view::Game::Kardinal(view)) = state.view.unwrap().game else { panic!("a kardinal view") };
            for seat in &view.seats {
                assert_eq!(seat.hand.is_some(), seat.seat as usize == viewer, "seat {viewer} and seat {}'s hand", seat.seat);
            }
        }
        let played = grpc_play(&mut grpc, &created, 3000, &mut choose).await;
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
        let Some(pb::status::State::Finished(result)) = state.status.unwrap().state else { panic!("finished after {played} more moves") };
        let Some(pb::view::Game::Kardinal(view)) = state.view.unwrap().game else { panic!("a kardinal view") };
        let totals: Vec<i32> = view.final_scoring.expect("final scoring").totals.iter().map(|t| t.total).collect();
        assert_eq!(totals, result.scores);
        let rest = server.rest().get(&format!("/v1/games/{}", created.id), None).await.body;
        assert_eq!(rest["status"]["result"]["scores"], json!(result.scores), "REST and gRPC agree");
    }
    drop(grpc);
    server.stop().await;
}
