//! A whole Cardinal game over gRPC, moves chosen from ListLegalMoves, with
//! the same answers as REST; health and reflection are served.

use ludo_blackbox::{TestServer, chooser, grpc_play};
use ludo_proto::ludo::cardinal::v1 as cpb;
use ludo_proto::v1 as pb;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_game_over_grpc_matches_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let kinds = grpc.list_kinds(pb::ListKindsRequest {}).await.unwrap().into_inner();
    assert!(kinds.kinds.iter().any(|k| k.kind == "cardinal" && k.min_players == 2 && k.max_players == 4));

    let options = pb::Options { game: Some(pb::options::Game::Cardinal(cpb::Options { first_seat: Some(2) })) };
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "cardinal".into(),
            players: vec!["Ann".into(), "Bob".into(), "Cid".into()],
            options: Some(options),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.version, 0);
    let played = grpc_play(&mut grpc, &created, 400, chooser(99)).await as u64;
    let finished = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
    assert_eq!(finished.version, played);
    let Some(pb::status::State::Finished(result)) = finished.status.unwrap().state else { panic!("not finished") };
    assert!(finished.seed.is_some(), "the seed is published at the end");

    // The same game read over REST: same version, same scores and winners.
    let rest = server.rest().get(&format!("/v1/games/{}", created.id), None).await.body;
    assert_eq!(rest["version"], played);
    assert_eq!(rest["status"]["result"]["scores"], json!(result.scores));
    assert_eq!(rest["status"]["result"]["winners"], json!(result.winners));
    let Some(pb::view::Game::Cardinal(view)) = finished.view.unwrap().game else { panic!("a cardinal view") };
    assert_eq!(view.buildings.len(), rest["view"]["buildings"].as_array().unwrap().len());
    let totals: Vec<u32> = view.scoring.unwrap().seats.iter().map(|s| s.total).collect();
    assert_eq!(json!(totals), json!(result.scores));

    let events = grpc.list_events(pb::ListEventsRequest { id: created.id.clone(), from: 0, limit: 1000 }).await.unwrap().into_inner();
    assert_eq!(events.events.len() as u64, played + 1);
    assert!(matches!(events.events[0].record, Some(pb::event::Record::GameCreated(_))));
    let replay = grpc.get_replay(pb::GetReplayRequest { id: created.id.clone(), at: 1 }).await.unwrap().into_inner();
    assert_eq!(replay.version, 1);
    let listed = grpc
        .list_games(pb::ListGamesRequest {
            kind: "cardinal".into(),
            state: pb::GameStateFilter::Finished.into(),
            after: String::new(),
            limit: 0,
            open: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(listed.games.iter().any(|g| g.id == created.id));
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_reflection_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut health = tonic_health::pb::health_client::HealthClient::new(server.channel().await);
    for service in ["", "ludo.v1.Ludo"] {
        let answer = health.check(tonic_health::pb::HealthCheckRequest { service: service.into() }).await.unwrap().into_inner();
        assert_eq!(answer.status, tonic_health::pb::health_check_response::ServingStatus::Serving as i32, "service `{service}`");
    }
    drop(health);

    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let mut reflection = ServerReflectionClient::new(server.channel().await);
    let request = ServerReflectionRequest { host: String::new(), message_request: Some(MessageRequest::ListServices(String::new())) };
    let mut answers = reflection.server_reflection_info(tokio_stream::iter(vec![request])).await.unwrap().into_inner();
    let answer = answers.message().await.unwrap().expect("one answer");
    let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else { panic!("not a service list") };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"ludo.v1.Ludo".to_string()), "{names:?}");
    assert!(names.contains(&"grpc.health.v1.Health".to_string()), "{names:?}");
    drop(answers);
    drop(reflection);
    server.stop().await;
}
