//! Anonymous callers cannot make the server do unbounded work: per-address
//! and per-seat rate limits (429 with Retry-After, gRPC RESOURCE_EXHAUSTED
//! with RetryInfo, one bucket for both transports), and bounded sizes for
//! what a client makes the server store. Against the real binary.

mod common;

use std::time::Duration;

use common::{create, start_with};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tonic_types::StatusExt;

async fn post(http: &reqwest::Client, url: String, token: Option<&str>, body: &Value) -> (u16, Option<String>, Value) {
    let mut request = http.post(url).json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    let retry_after = answer.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
    (status, retry_after, answer.json().await.unwrap_or(Value::Null))
}

fn assert_rate_limited(status: u16, retry_after: Option<&str>, body: &Value) {
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["code"], "rate_limited");
    let ms = body["retry_after_ms"].as_u64().expect("retry_after_ms");
    let seconds: u64 = retry_after.expect("a Retry-After header").parse().unwrap();
    assert!(ms >= 1 && seconds == ms.div_ceil(1000), "Retry-After {seconds} s for {ms} ms");
}

fn assert_grpc_rate_limited(status: &tonic::Status) {
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert_eq!(status.get_details_error_info().expect("an ErrorInfo").reason, "rate_limited");
    assert!(status.get_details_retry_info().expect("a RetryInfo").retry_delay.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_and_records_are_limited_per_address_on_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &["--rate-create", "1/s,burst=3", "--rate-records", "1/s,burst=2"]);
    let http = reqwest::Client::new();
    let games = format!("{}/v1/games", server.base);
    let new_game = json!({"kind": "cardinal", "players": ["Ann", "Bob"]});
    for _ in 0..3 {
        assert_eq!(post(&http, games.clone(), None, &new_game).await.0, 201);
    }
    let (status, retry_after, body) = post(&http, games.clone(), None, &new_game).await;
    assert_rate_limited(status, retry_after.as_deref(), &body);
    // gRPC draws on the same bucket.
    let mut grpc = pb::ludo_client::LudoClient::connect(server.base.clone()).await.unwrap();
    let request =
        pb::CreateGameRequest { kind: "cardinal".into(), players: vec!["Ann".into(), "Bob".into()], options: None, ..Default::default() };
    assert_grpc_rate_limited(&grpc.create_game(request.clone()).await.unwrap_err());
    // Refused creations stored nothing; after the wait, creating works again.
    let listed: Value = http.get(&games).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed["games"].as_array().unwrap().len(), 3);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    grpc.create_game(request).await.expect("a token came back");

    // Imports and verifications share one bucket.
    let export =
        http.get(format!("{games}/{}/export", listed["games"][0]["id"].as_str().unwrap())).send().await.unwrap().bytes().await.unwrap();
    let verify =
        |path: &str| http.post(format!("{}{path}", server.base)).header("content-type", "application/x-ndjson").body(export.clone());
    assert_eq!(verify("/v1/verify").send().await.unwrap().status(), 200);
    assert_eq!(verify("/v1/verify").send().await.unwrap().status(), 200);
    let refused = verify("/v1/games/import").send().await.unwrap();
    let retry_after = refused.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
    let status = refused.status().as_u16();
    assert_rate_limited(status, retry_after.as_deref(), &refused.json().await.unwrap());
    assert_grpc_rate_limited(&grpc.verify_game(pb::VerifyGameRequest { export: export.to_vec() }).await.unwrap_err());
    assert!(server.metric("ludo_rate_limited_total{class=\"create\"}").await >= 2.0);
    assert!(server.metric("ludo_rate_limited_total{class=\"records\"}").await >= 2.0);
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_are_limited_per_seat_and_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();

    // Per seat: each seat has its own bucket.
    let server = start_with(dir.path(), &["--rate-moves-per-seat", "1/s,burst=2", "--rate-moves-per-ip", "off"]);
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap();
    let mut played = 0;
    let mut seat_moves = [0; 2];
    let refused = loop {
        let state: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
        let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
        let token = game["seats"][seat]["token"].as_str().unwrap();
        let legal: Value =
            http.get(format!("{}/v1/games/{id}/legal-moves", server.base)).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        let answer = post(&http, format!("{}/v1/games/{id}/moves", server.base), Some(token), &json!({"move": legal["moves"][0]})).await;
        if answer.0 != 200 {
            break (seat, answer, state["version"].clone());
        }
        played += 1;
        seat_moves[seat] += 1;
        assert!(played < 20, "no per-seat limit was met");
    };
    let (seat, (status, retry_after, body), version) = refused;
    assert_rate_limited(status, retry_after.as_deref(), &body);
    assert_eq!(seat_moves[seat], 2, "a seat's third move in a burst is refused, the other seat's first ones are not");
    let after: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    assert_eq!(after["version"], version, "a refused move appends nothing");
    server.terminate();

    // Per address: REST and gRPC moves from one address share a bucket.
    let server = start_with(dir.path(), &["--rate-moves-per-ip", "1/s,burst=3", "--rate-moves-per-seat", "off"]);
    let game = create(&http, &server.base, "cardinal", &["Cid", "Dee"]).await;
    for _ in 0..3 {
        assert!(common::play_one(&http, &server.base, &game).await);
    }
    let id = game["id"].as_str().unwrap().to_string();
    let state: Value = http.get(format!("{}/v1/games/{id}", server.base)).send().await.unwrap().json().await.unwrap();
    let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
    let token = game["seats"][seat]["token"].as_str().unwrap();
    let legal: Value =
        http.get(format!("{}/v1/games/{id}/legal-moves", server.base)).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    let (status, retry_after, body) =
        post(&http, format!("{}/v1/games/{id}/moves", server.base), Some(token), &json!({"move": legal["moves"][0]})).await;
    assert_rate_limited(status, retry_after.as_deref(), &body);
    let mut grpc = pb::ludo_client::LudoClient::connect(server.base.clone()).await.unwrap();
    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
        id: id.clone(),
        r#move: None,
        expected_version: None,
        request_id: None,
        omit_view: false,
    });
    request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    assert_grpc_rate_limited(&grpc.submit_move(request).await.unwrap_err());
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_client_stores_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), &[]);
    let http = reqwest::Client::new();
    let games = format!("{}/v1/games", server.base);
    let refused = |answer: &(u16, Option<String>, Value), field: &str| {
        assert_eq!(
            (answer.0, answer.2["code"].as_str(), answer.2["field"].as_str()),
            (400, Some("invalid_input"), Some(field)),
            "{}",
            answer.2
        );
    };
    // Names: visible characters only (no bidi overrides, zero-width or
    // other format characters), at most 40 of them.
    for bad in ["Ann\u{202E}nnA", "A\u{200B}nn", "\u{FEFF}Bob", "Ann\u{2028}", "Ann\u{7}", &"x".repeat(41)] {
        let answer = post(&http, games.clone(), None, &json!({"kind": "cardinal", "players": ["Zoë", bad]})).await;
        refused(&answer, "players[1]");
    }
    assert_eq!(post(&http, games.clone(), None, &json!({"kind": "cardinal", "players": ["Zoë", "李小龙"]})).await.0, 201);
    let mut grpc = pb::ludo_client::LudoClient::connect(server.base.clone()).await.unwrap();
    let status = grpc
        .create_game(pb::CreateGameRequest {
            kind: "cardinal".into(),
            players: vec!["Ann".into(), "B\u{202E}ob".into()],
            options: None,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert_eq!(status.get_details_bad_request().unwrap().field_violations[0].field, "players[1]");

    // A custom board: its texts and lists are bounded, and visible too.
    let kinds: Value = http.get(format!("{}/v1/kinds", server.base)).send().await.unwrap().json().await.unwrap();
    let board = kinds["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == "kardinal").unwrap()["default_options"]["board"].clone();
    let with_board = |edit: &dyn Fn(&mut Value)| {
        let mut board = board.clone();
        edit(&mut board);
        json!({"kind": "kardinal", "players": ["Ann", "Bob", "Cid"], "options": {"board": board}})
    };
    let answer = post(&http, games.clone(), None, &with_board(&|b| b["note"] = json!("n".repeat(1_900_000)))).await;
    refused(&answer, "options.board.note");
    let answer = post(&http, games.clone(), None, &with_board(&|b| b["note"] = json!("n".repeat(2001)))).await;
    refused(&answer, "options.board.note");
    let answer = post(&http, games.clone(), None, &with_board(&|b| b["countries"][0]["name"] = json!("Fr\u{202E}ance"))).await;
    refused(&answer, "options.board.countries[0].name");
    assert_eq!(post(&http, games.clone(), None, &with_board(&|b| b["note"] = json!("n".repeat(2000)))).await.0, 201);

    // Request ids: 1 to 128 printable characters.
    let game = create(&http, &server.base, "cardinal", &["Ann", "Bob"]).await;
    let id = game["id"].as_str().unwrap();
    let token = game["seats"][0]["token"].as_str();
    let answer =
        post(&http, format!("{games}/{id}/moves"), token, &json!({"move": {"type": "keep_cardinal"}, "request_id": "r".repeat(129)})).await;
    refused(&answer, "request_id");
    server.terminate();
}
