//! A move's answer without the view, for clients that follow the game
//! another way: REST `Prefer: return=minimal` (RFC 7240), gRPC `omit_view`.
//! It carries the same version, status and effects as the whole answer (an
//! exact retry of the same request id, asked the other way, shows it), says
//! so in `Preference-Applied`, matches the documented schema, and leaks no
//! more than the whole answer would.

use ludo_blackbox::{Contract, TestServer, authed, battle13_leaks, chooser, kardinal_leaks};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};

/// A REST answer with the one header these tests read.
struct Answered {
    status: u16,
    applied: Option<String>,
    content_type: String,
    body: Value,
}

async fn post_move(http: &reqwest::Client, url: &str, token: &str, body: &Value, prefer: Option<&str>) -> Answered {
    let mut request = http.post(url).bearer_auth(token).json(body);
    if let Some(prefer) = prefer {
        request = request.header("prefer", prefer);
    }
    let response = request.send().await.expect("request");
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().expect("text").to_string());
    let (status, applied, content_type) = (response.status().as_u16(), header("preference-applied"), header("content-type"));
    Answered { status, applied, content_type: content_type.unwrap_or_default(), body: response.json().await.expect("JSON") }
}

/// Whether `answer` is a minimal one, checked from both sides: no view and
/// the header saying so, or a view and no header.
fn is_minimal(answer: &Answered) -> bool {
    let minimal = answer.body.get("view").is_none();
    assert_eq!(answer.applied.as_deref(), minimal.then_some("return=minimal"), "Preference-Applied says what was done: {}", answer.body);
    minimal
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_rest_a_minimal_answer_is_the_whole_answer_without_its_view_for_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let http = reqwest::Client::new();
    let contract = Contract::new(ludo_server::openapi());
    for (kind, players, seed) in
        [("cardinal", vec!["Ann", "Bob"], 3), ("kardinal", vec!["Ann", "Bob", "Cid"], 4), ("battle13", vec!["N", "E", "S", "W"], 5)]
    {
        let game = rest.create(kind, &players, json!({})).await;
        let id = game["id"].as_str().unwrap();
        let url = format!("{}/v1/games/{id}/moves", server.base);
        let mut choose = chooser(seed);
        for n in 0..24 {
            let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
            if state["status"]["state"] == "finished" {
                break;
            }
            let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
            let token = game["seats"][seat]["token"].as_str().unwrap();
            let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
            let moves = legal["moves"].as_array().unwrap();
            let body = json!({"move": moves[choose(moves)], "request_id": format!("move-{n}")});
            // Half the moves ask for a minimal answer first and retry for
            // the whole one, half the other way round.
            let (first_prefer, retry_prefer) = if n % 2 == 0 { (Some("return=minimal"), None) } else { (None, Some("return=minimal")) };
            let first = post_move(&http, &url, token, &body, first_prefer).await;
            let retry = post_move(&http, &url, token, &body, retry_prefer).await;
            for answer in [&first, &retry] {
                assert_eq!(answer.status, 200, "{kind} move {n}: {}", answer.body);
                contract.check("post", &format!("/v1/games/{id}/moves"), 200, &answer.content_type, &answer.body);
            }
            assert_eq!(is_minimal(&first), n % 2 == 0, "{kind} move {n}");
            assert_eq!(is_minimal(&retry), n % 2 == 1, "{kind} move {n}");
            let (minimal, whole) = if n % 2 == 0 { (&first.body, &retry.body) } else { (&retry.body, &first.body) };
            let mut without_view = whole.clone();
            without_view.as_object_mut().unwrap().remove("view");
            assert_eq!(minimal, &without_view, "{kind} move {n}: all but the view is the same");
            assert_eq!(minimal["version"], n + 1, "{kind} move {n}: one record for the move and its retry");
            // The whole answer's view is the seat's view of the game now.
            let seen = rest.get(&format!("/v1/games/{id}"), Some(token)).await.body;
            assert_eq!(whole["view"], seen["view"], "{kind} move {n}");
            match kind {
                "kardinal" => assert!(kardinal_leaks(minimal, Some(seat)).is_empty(), "{kind} move {n}: {minimal}"),
                "battle13" => assert!(battle13_leaks(minimal, &[seat]).is_empty(), "{kind} move {n}: {minimal}"),
                _ => {}
            }
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_preferences_get_the_whole_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let http = reqwest::Client::new();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let url = format!("{}/v1/games/{id}/moves", server.base);
    let token = game["seats"][0]["token"].as_str().unwrap();
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
    let body = json!({"move": legal["moves"][0], "request_id": "only-move"});
    for prefer in ["return=representation", "respond-async", "return=minimalist", "x-return=minimal", "return", "foo=\"return=minimal\""] {
        let answer = post_move(&http, &url, token, &body, Some(prefer)).await;
        assert_eq!(answer.status, 200, "{prefer}: {}", answer.body);
        assert!(!is_minimal(&answer), "{prefer}");
    }
    // Among other preferences, in any case, over several header fields.
    for prefer in ["respond-async, RETURN=Minimal; x=1", "wait=5,return=\"minimal\""] {
        assert!(is_minimal(&post_move(&http, &url, token, &body, Some(prefer)).await), "{prefer}");
    }
    let answer = http.post(&url).bearer_auth(token).header("prefer", "wait=5").header("prefer", "return=minimal").json(&body).send().await;
    assert_eq!(answer.unwrap().headers().get("preference-applied").unwrap(), "return=minimal");
    // A refusal is a problem whatever the preference.
    for (body, status, code) in [
        (json!({"move": {"kind": "nonsense"}}), 400, "invalid_input"),
        (json!({"move": legal["moves"][0]}), 422, "rule_violation"),
        (json!({"move": legal["moves"][0], "request_id": "only-move", "expected_version": 0}), 200, ""),
    ] {
        let answer = post_move(&http, &url, token, &body, Some("return=minimal")).await;
        assert_eq!(answer.status, status, "{body}: {}", answer.body);
        if status != 200 {
            assert_eq!(answer.body["code"], code, "{body}: {}", answer.body);
            assert!(answer.content_type.starts_with("application/problem+json"), "{body}");
            assert_eq!(answer.applied, None, "{body}: nothing was applied to a refusal");
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_grpc_omit_view_leaves_out_the_view_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "kardinal".into(),
            players: vec!["A".into(), "B".into(), "C".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut choose = chooser(9);
    for n in 0..20u64 {
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
        let Some(pb::status::State::InProgress(progress)) = state.status.unwrap().state else { break };
        let token = &created.seats[progress.to_move[0] as usize].token;
        let legal = grpc.list_legal_moves(authed(pb::ListLegalMovesRequest { id: created.id.clone() }, token)).await.unwrap().into_inner();
        let mv = legal.moves[choose(&vec![Value::Null; legal.moves.len()])].clone();
        let request = |omit_view| pb::SubmitMoveRequest {
            id: created.id.clone(),
            r#move: Some(mv.clone()),
            expected_version: None,
            request_id: Some(format!("move-{n}")),
            omit_view,
        };
        let omit_first = n % 2 == 0;
        let first = grpc.submit_move(authed(request(omit_first), token)).await.unwrap().into_inner();
        let retry = grpc.submit_move(authed(request(!omit_first), token)).await.unwrap().into_inner();
        assert_eq!(first.view.is_none(), omit_first, "move {n}");
        assert_eq!(retry.view.is_none(), !omit_first, "move {n}");
        let (mut minimal, whole) = if omit_first { (first, retry) } else { (retry, first) };
        assert_eq!(minimal.version, n + 1, "move {n}: one record for the move and its retry");
        minimal.view.clone_from(&whole.view);
        assert_eq!(minimal, whole, "move {n}: all but the view is the same");
    }
    server.stop().await;
}
