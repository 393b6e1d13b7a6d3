//! Bad requests get the right status and machine code, over REST and gRPC,
//! and never change the log.

use ludo_blackbox::{OPERATOR_TOKEN, Rest, TestServer, authed, chooser, raw_exchange};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tonic_types::StatusExt;

async fn log(rest: &Rest, id: &str) -> Vec<Value> {
    rest.events(id, None).await
}

fn problem(answer: &ludo_blackbox::Answer, status: u16, code: &str) {
    assert_eq!(answer.status, status, "{answer:?}");
    assert_eq!(answer.content_type, "application/problem+json", "{answer:?}");
    assert_eq!(answer.body["code"], code, "{answer:?}");
    assert_eq!(answer.body["status"], status);
    assert!(answer.body["type"].as_str().unwrap().ends_with(code));
    assert!(!answer.body["detail"].as_str().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_refusals_have_codes_and_leave_the_log_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    rest.play(&game, 4, chooser(7)).await;
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
    let token = game["seats"][seat]["token"].as_str().unwrap();
    let other = game["seats"][1 - seat]["token"].as_str().unwrap();
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
    let good = legal["moves"][0].clone();
    let moves = format!("/v1/games/{id}/moves");
    let before = log(&rest, id).await;

    // A wrong token.
    let answer = rest.post(&moves, Some("ludo_not-a-token"), &json!({"move": good})).await;
    problem(&answer, 401, "unauthorized");
    // No token at all.
    problem(&rest.post(&moves, None, &json!({"move": good})).await, 401, "unauthorized");
    // The other seat's token.
    let answer = rest.post(&moves, Some(other), &json!({"move": good})).await;
    problem(&answer, 409, "not_your_turn");
    assert_eq!(answer.body["to_move"], json!([seat]));
    // A stale expected_version.
    let answer = rest.post(&moves, Some(token), &json!({"move": good, "expected_version": 2})).await;
    problem(&answer, 409, "version_conflict");
    assert_eq!(answer.body["current_version"], 4);
    assert_eq!(answer.body["expected_version"], 2);
    // An illegal move: a building far from the town (CA-12).
    let far = json!({"type": "build", "shape": "house", "colour": seat, "x": 50, "y": 50});
    let answer = rest.post(&moves, Some(token), &json!({"move": far})).await;
    if state["view"]["phase"] == "build" {
        problem(&answer, 422, "rule_violation");
        assert!(answer.body["rule"].as_str().unwrap().starts_with("CA-"), "{answer:?}");
    } else {
        problem(&answer, 422, "rule_violation");
    }
    // Malformed JSON, a wrong shape, a wrong content type, unknown fields.
    let answer = rest.post_raw(&moves, Some(token), "application/json", r#"{"move": {"type": "build""#).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "body");
    let answer = rest.post(&moves, Some(token), &json!({"move": {"type": "build", "shape": "castle", "colour": 0, "x": 0, "y": 1}})).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "move.shape");
    let answer = rest.post(&moves, Some(token), &json!({"mvoe": good})).await;
    problem(&answer, 400, "invalid_input");
    // Arrays where objects are expected, which serde alone reads as the
    // objects (fields in order, a tagged enum's tag first): the body, the move.
    let answer = rest.post(&moves, Some(token), &json!([good])).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "body");
    for array in [json!(["keep_cardinal"]), json!(["move_cardinal", 1, 1])] {
        let answer = rest.post(&moves, Some(token), &json!({"move": array})).await;
        problem(&answer, 400, "invalid_input");
        assert_eq!(answer.body["field"], "move", "{array}");
    }
    problem(&rest.post_raw(&moves, Some(token), "text/plain", "{}").await, 415, "unsupported_media_type");
    // A move body over 2 MB is refused before it is read in full: at once
    // when its length is declared (the server then closes the connection, so
    // the body is sent over a raw socket that reads the answer), and at the
    // limit when it comes in chunks.
    for (framing, chunked) in [(format!("Content-Length: {}", 3 << 20), 0), ("Transfer-Encoding: chunked".to_string(), 3 << 20)] {
        let head = format!(
            "POST {moves} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n",
            token
        );
        let (status, body) = raw_exchange(server.addr, head.as_bytes(), chunked).await;
        assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{framing}: {body}");
    }
    // Unknown game, unknown path, wrong method.
    problem(
        &rest.post("/v1/games/01890000-0000-7000-8000-000000000000/moves", Some(token), &json!({"move": good})).await,
        404,
        "not_found",
    );
    problem(&rest.get("/v1/nothing-here", None).await, 404, "not_found");
    problem(&rest.get(&moves, None).await, 405, "method_not_allowed");
    // A replay past the end, a bad query value.
    let answer = rest.get(&format!("/v1/games/{id}/replay?at=99"), None).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "at");
    let answer = rest.get("/v1/games?limit=lots", None).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "limit");

    // A game asked for as an array, or with its options as one, is not made.
    let answer = rest.post("/v1/games", None, &json!(["cardinal", ["Ann", "Bob"], {"first_seat": 0}])).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "body");
    let answer = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": [0]})).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "options");

    assert_eq!(log(&rest, id).await, before, "a refusal changed the log");
    // And the right move still goes through.
    let answer = rest.post(&moves, Some(token), &json!({"move": good, "expected_version": 4})).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_array_for_an_object_inside_a_move_is_refused_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let token = game["seats"][0]["token"].as_str().unwrap();
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
    let place = legal["moves"].as_array().unwrap().iter().find(|m| m["type"] == "place").expect("a first move places a piece").clone();
    // The first placement as a list of its fields, in their declared order,
    // which serde alone reads as the placement.
    let first = &place["pieces"][0];
    let mut listed = place.clone();
    listed["pieces"][0] = json!([first["piece"], first["country"], first.get("site"), first["paid_with"]]);
    let moves = format!("/v1/games/{id}/moves");
    let before = log(&rest, id).await;
    let answer = rest.post(&moves, Some(token), &json!({"move": listed})).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "move.pieces[0]", "{answer:?}");
    assert_eq!(log(&rest, id).await, before, "a refusal changed the log");
    // As objects, the same move is played.
    let answer = rest.post(&moves, Some(token), &json!({"move": place})).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_refusals_carry_the_same_codes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let token = game["seats"][0]["token"].as_str().unwrap();
    let mut grpc = server.grpc().await;
    let legal = grpc.list_legal_moves(authed(pb::ListLegalMovesRequest { id: id.clone() }, token)).await.unwrap().into_inner();
    let good = legal.moves[0].clone();
    let before = log(&rest, &id).await;
    let submit = |mv: Option<pb::Move>, expected: Option<u64>| pb::SubmitMoveRequest {
        id: id.clone(),
        r#move: mv,
        expected_version: expected,
        request_id: None,
        omit_view: false,
    };

    let check = |status: tonic::Status, code: tonic::Code, reason: &str| {
        assert_eq!(status.code(), code, "{status:?}");
        let info = status.get_details_error_info().expect("an ErrorInfo detail");
        assert_eq!(info.reason, reason);
        assert_eq!(info.domain, "ludotheque");
        info
    };
    check(
        grpc.submit_move(authed(submit(Some(good.clone()), None), "ludo_wrong")).await.unwrap_err(),
        tonic::Code::Unauthenticated,
        "unauthorized",
    );
    let info = check(
        grpc.submit_move(authed(submit(Some(good.clone()), Some(3)), token)).await.unwrap_err(),
        tonic::Code::Aborted,
        "version_conflict",
    );
    assert_eq!(info.metadata["current_version"], "0");
    let status = grpc.submit_move(authed(submit(None, None), token)).await.unwrap_err();
    let info = check(status.clone(), tonic::Code::InvalidArgument, "invalid_input");
    assert_eq!(info.metadata["field"], "move");
    assert_eq!(status.get_details_bad_request().unwrap().field_violations[0].field, "move");
    let tower = pb::Move {
        game: Some(pb::r#move::Game::Cardinal(ludo_proto::ludo::cardinal::v1::Move {
            kind: Some(ludo_proto::ludo::cardinal::v1::r#move::Kind::Build(ludo_proto::ludo::cardinal::v1::Build {
                shape: ludo_proto::ludo::cardinal::v1::Shape::Tower.into(),
                colour: 0,
                x: 2,
                y: 0,
                orientation: None,
                bonus_colour: Some(1),
            })),
        })),
    };
    let info = check(
        grpc.submit_move(authed(submit(Some(tower), None), token)).await.unwrap_err(),
        tonic::Code::FailedPrecondition,
        "rule_violation",
    );
    assert!(info.metadata["rule"].starts_with("CA-"));
    check(
        grpc.get_game(pb::GetGameRequest { id: "01890000-0000-7000-8000-000000000000".into() }).await.unwrap_err(),
        tonic::Code::NotFound,
        "not_found",
    );
    assert_eq!(log(&rest, &id).await, before, "a refusal changed the log");
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rest_error_is_a_problem_with_a_code() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    // Over the 4 MiB export limit, on both routes that take exports: told
    // by its length (refused at once) or sent in chunks (refused at the
    // limit). (An import shows the operator's token: without it, it is
    // refused whatever its body, which is dropped.)
    let over = ludo_server::limits::MAX_EXPORT_BYTES + 1;
    let auth = format!("Authorization: Bearer {OPERATOR_TOKEN}\r\n");
    for path in ["/v1/verify", "/v1/games/import"] {
        let head = format!("POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/x-ndjson\r\nContent-Length: {over}\r\n\r\n");
        let (status, body) = raw_exchange(server.addr, head.as_bytes(), 0).await;
        assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{path}: {body}");
        let head =
            format!("POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n");
        let (status, body) = raw_exchange(server.addr, head.as_bytes(), over).await;
        assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{path} chunked: {body}");
    }
    // A path id that is not UTF-8.
    let answer = rest.get("/v1/games/%FF%FE", None).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "id");
    problem(&rest.get("/v1/games/%FF/events", None).await, 400, "invalid_input");
    // A move with no fields but the tag refuses any other field, like every move.
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    rest.play(&game, 1, chooser(3)).await;
    let token = game["seats"][0]["token"].as_str();
    let answer = rest.post(&format!("/v1/games/{id}/moves"), token, &json!({"move": {"type": "keep_cardinal", "x": 3}})).await;
    problem(&answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], "move.x", "{answer:?}");
    assert_eq!(rest.get(&format!("/v1/games/{id}"), None).await.body["version"], 1, "nothing was appended");
    server.stop().await;
}

/// Sends raw bytes as a gRPC message and reads nothing back.
#[derive(Clone, Default)]
struct RawCodec;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = ();
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }
    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl tonic::codec::Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, buf: &mut tonic::codec::EncodeBuf<'_>) -> Result<(), tonic::Status> {
        bytes::BufMut::put_slice(buf, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = ();
    type Error = tonic::Status;
    fn decode(&mut self, _: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<()>, tonic::Status> {
        Ok(Some(()))
    }
}

async fn raw_call(channel: tonic::transport::Channel, method: &str, bytes: Vec<u8>) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = tonic::codegen::http::uri::PathAndQuery::try_from(method).unwrap();
    // With the operator's token, which `ImportGame` asks for before its message.
    grpc.unary(authed(bytes, OPERATOR_TOKEN), path, RawCodec).await.expect_err("the call is refused")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_grpc_error_carries_a_code_and_details() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let channel = server.channel().await;
    // A message that does not decode (field 1, a string, longer than the message).
    let status = raw_call(channel.clone(), "/ludo.v1.Ludo/GetGame", vec![0x0a, 0x7f, b'a']).await;
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let info = status.get_details_error_info().expect("an ErrorInfo");
    assert_eq!((info.reason.as_str(), info.domain.as_str()), ("invalid_input", "ludotheque"));
    assert_eq!(status.get_details_bad_request().expect("a BadRequest").field_violations[0].field, "request");

    // Only verify and import take messages past the REST body limit.
    let mut grpc =
        pb::ludo_client::LudoClient::new(channel.clone()).max_encoding_message_size(usize::MAX).max_decoding_message_size(usize::MAX);
    let big = "x".repeat(3 * 1024 * 1024);
    let status = grpc
        .submit_move(pb::SubmitMoveRequest {
            id: "g".into(),
            r#move: None,
            expected_version: None,
            request_id: Some(big.clone()),
            omit_view: false,
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert_eq!(status.get_details_error_info().expect("an ErrorInfo").reason, "payload_too_large");
    let report = grpc.verify_game(pb::VerifyGameRequest { export: big.into_bytes() }).await.expect("a 3 MB export is read").into_inner();
    assert!(!report.valid, "3 MB of x is no export");
    let over = vec![b'x'; ludo_server::limits::MAX_EXPORT_BYTES + 1];
    let status = grpc.import_game(authed(pb::ImportGameRequest { export: over }, OPERATOR_TOKEN)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert_eq!(status.get_details_error_info().expect("an ErrorInfo").reason, "payload_too_large");
    drop(grpc);
    drop(channel);
    server.stop().await;
}

/// Every method of `ludo.v1.Ludo` (`/ludo.v1.Ludo/GetGame` …), from the
/// descriptor set the server reflects: a new RPC is covered as it is added.
fn ludo_methods() -> Vec<String> {
    let set = <prost_types::FileDescriptorSet as prost::Message>::decode(ludo_proto::FILE_DESCRIPTOR_SET).unwrap();
    let methods: Vec<String> = set
        .file
        .iter()
        .filter(|file| file.package() == "ludo.v1")
        .flat_map(|file| file.service.iter().filter(|service| service.name() == "Ludo"))
        .flat_map(|service| service.method.iter())
        .map(|method| {
            // The server refuses a call that ends without a message: right
            // only while no method takes a stream from the client.
            assert!(!method.client_streaming(), "{} streams from the client", method.name());
            format!("/ludo.v1.Ludo/{}", method.name())
        })
        .collect();
    assert!(methods.len() > 20, "{methods:?}");
    methods
}

/// A call whose body holds no gRPC message at all: the request half-closed
/// right after its headers.
async fn call_without_a_message(channel: tonic::transport::Channel, method: &str) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = tonic::codegen::http::uri::PathAndQuery::try_from(method).unwrap();
    let nothing = tokio_stream::empty::<Vec<u8>>();
    // With the operator's token, which `ImportGame` asks for before its message.
    grpc.client_streaming(authed(nothing, OPERATOR_TOKEN), path, RawCodec).await.expect_err("the call is refused")
}

/// A gRPC-Web call (HTTP/1.1, binary) with `body`, answered with its status:
/// from the headers of a trailers-only answer, or from the trailers frame.
async fn grpc_web_call(base: &str, method: &str, body: Vec<u8>) -> tonic::Status {
    let http = reqwest::Client::builder().http1_only().build().unwrap();
    let response = http
        .post(format!("{base}{method}"))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .bearer_auth(OPERATOR_TOKEN)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{method}");
    let mut trailers = response.headers().clone();
    let mut bytes = &response.bytes().await.unwrap()[..];
    while bytes.len() >= 5 {
        let len = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
        let (frame, rest) = bytes[5..].split_at(len);
        if bytes[0] & 0x80 != 0 {
            for line in String::from_utf8(frame.to_vec()).unwrap().split("\r\n").filter(|line| !line.is_empty()) {
                let (name, value) = line.split_once(':').unwrap();
                trailers.insert(
                    reqwest::header::HeaderName::try_from(name.trim()).unwrap(),
                    reqwest::header::HeaderValue::try_from(value.trim()).unwrap(),
                );
            }
        }
        bytes = rest;
    }
    tonic::Status::from_header_map(&trailers).expect("a grpc-status")
}

/// `status` is `INVALID_ARGUMENT` with the ErrorInfo every bad input gets,
/// naming the request.
fn invalid_request(status: &tonic::Status, what: &str) {
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{what}: {status:?}");
    let info = status.get_details_error_info().unwrap_or_else(|| panic!("{what}: an ErrorInfo in {status:?}"));
    assert_eq!((info.reason.as_str(), info.domain.as_str()), ("invalid_input", "ludotheque"), "{what}");
    assert_eq!(info.metadata.get("field").map(String::as_str), Some("request"), "{what}");
    assert_eq!(status.get_details_bad_request().expect("a BadRequest").field_violations[0].field, "request", "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ludo_call_with_no_message_or_an_undecodable_one_is_invalid_input_over_grpc_and_grpc_web() {
    let dir = tempfile::tempdir().unwrap();
    let config = ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() };
    let server = TestServer::start_with(dir.path(), config).await;
    let channel = server.channel().await;
    // Field 1 (a string) longer than the message.
    let undecodable = vec![0, 0, 0, 0, 3, 0x0a, 0x7f, b'a'];
    for method in ludo_methods() {
        let status = call_without_a_message(channel.clone(), &method).await;
        invalid_request(&status, &format!("{method} over gRPC without a message"));
        let status = grpc_web_call(&server.base, &method, Vec::new()).await;
        invalid_request(&status, &format!("{method} over gRPC-Web without a message"));
        let status = grpc_web_call(&server.base, &method, undecodable.clone()).await;
        invalid_request(&status, &format!("{method} over gRPC-Web with an undecodable message"));
        let status = raw_call(channel.clone(), &method, undecodable[5..].to_vec()).await;
        invalid_request(&status, &format!("{method} over gRPC with an undecodable message"));
    }
    drop(channel);
    server.stop().await;
}
