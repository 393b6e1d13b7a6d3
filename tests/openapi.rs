//! The committed `openapi/openapi.json` is exactly what the server serves,
//! it is OpenAPI 3.1, every reference resolves, and the docs page works
//! offline.
//!
//! After changing the REST API, regenerate it with
//! `cargo run -p ludo -- openapi > openapi/openapi.json`.

use std::path::PathBuf;

use ludo_blackbox::TestServer;
use serde_json::Value;

fn committed() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../openapi/openapi.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("the committed document is JSON")
}

fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                out.push(target);
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn the_committed_document_matches_the_code() {
    let generated = ludo_server::openapi();
    assert!(
        generated == committed(),
        "openapi/openapi.json drifted from the code: run `cargo run -p ludo -- openapi > openapi/openapi.json`"
    );
}

#[test]
fn the_document_is_openapi_3_1_and_self_contained() {
    let doc = committed();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{}", doc["openapi"]);
    let mut targets = Vec::new();
    refs(&doc, &mut targets);
    assert!(targets.len() > 20, "the schemas are referenced, not inlined away");
    for target in targets {
        let pointer = target.strip_prefix('#').unwrap_or_else(|| panic!("external reference {target}"));
        assert!(doc.pointer(pointer).is_some(), "dangling reference {target}");
    }
    for path in [
        "/v1/kinds",
        "/v1/games",
        "/v1/games/{id}",
        "/v1/games/{id}/legal-moves",
        "/v1/games/{id}/moves",
        "/v1/games/{id}/events",
        "/v1/games/{id}/replay",
        "/v1/games/{id}/receipt",
        "/v1/log",
        "/v1/log/checkpoint",
        "/v1/log/consistency",
        "/.well-known/ludotheque-log-key",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not documented");
    }
    assert_eq!(doc["components"]["securitySchemes"]["seat_token"]["scheme"], "bearer");
    // Every union is discriminated: a oneOf of named schemas with a mapping.
    // Two are told apart otherwise, and still match exactly one member: a
    // verify report may carry no kind at all (an unreadable export), a
    // stream event's data is named by its SSE `event:` line, and a new
    // game's seat is a string (a person's name) or an object (a bot's seat).
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        if let Some(members) = schema.get("oneOf").and_then(Value::as_array) {
            let nullable = members.iter().any(|m| m.get("type") == Some(&Value::String("null".into())));
            if nullable || name == "VerifyReport" || name == "StreamData" || name == "PlayerSeat" {
                continue;
            }
            let mapping = schema.pointer("/discriminator/mapping").and_then(Value::as_object);
            assert!(mapping.is_some_and(|m| m.len() == members.len()), "{name}: a union without a full discriminator mapping");
        }
    }
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                let response = match response["$ref"].as_str() {
                    Some(shared) => doc.pointer(shared.trim_start_matches('#')).expect("a shared response"),
                    None => response,
                };
                let described = response["description"].as_str().is_some_and(|d| !d.is_empty());
                assert!(described, "{method} {path} {status}: a response needs a description");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_serves_the_document_and_an_offline_docs_page() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let served = rest.get("/openapi.json", None).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.body, committed());
    let http = reqwest::Client::new();
    let page = http.get(format!("{}/docs/", server.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger-ui"), "not the docs page: {html}");
    assert!(!html.contains("https://"), "the docs page must not load anything from the internet");
    let script = http.get(format!("{}/docs/swagger-ui-bundle.js", server.base)).send().await.unwrap();
    assert_eq!(script.status(), 200, "the docs page's script is served locally");
    assert!(script.text().await.unwrap().len() > 100_000);
    server.stop().await;
}

/// Every answer of every endpoint, for all three kinds and for the errors
/// each can give, matches the served document: its status is documented for
/// the operation and its body validates against the documented schema (a
/// union matching exactly one member: each is discriminated).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_matches_the_served_document() {
    use ludo_blackbox::{Answer, Contract, chooser};
    use serde_json::json;

    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let contract = Contract::new(rest.get("/openapi.json", None).await.body);
    let check = |method: &str, path: &str, answer: &Answer| contract.check(method, path, answer.status, &answer.content_type, &answer.body);
    for path in ["/healthz", "/readyz", "/v1/kinds", "/v1/games", "/v1/games?state=finished&kind=kardinal&limit=2"] {
        let answer = rest.get(path, None).await;
        assert_eq!(answer.status, 200, "{path}");
        check("get", path, &answer);
    }
    let (status, _) = rest.get_bytes("/metrics", None).await;
    contract.check("get", "/metrics", status, "application/openmetrics-text", &Value::Null);

    // The transparency log before any game ended: its key, no checkpoint yet.
    let log = rest.get("/v1/log", None).await;
    assert_eq!((log.status, &log.body["checkpoint"], &log.body["tree"]), (200, &Value::Null, &Value::Null), "{log:?}");
    check("get", "/v1/log", &log);
    let no_checkpoint = rest.get("/v1/log/checkpoint", None).await;
    assert_eq!((no_checkpoint.status, no_checkpoint.body["code"].as_str()), (404, Some("not_found")), "{no_checkpoint:?}");
    check("get", "/v1/log/checkpoint", &no_checkpoint);
    let (status, key) = rest.get_bytes("/.well-known/ludotheque-log-key", None).await;
    assert_eq!((status, String::from_utf8(key).unwrap()), (200, format!("{}\n", log.body["key"].as_str().unwrap())));
    contract.check("get", "/.well-known/ludotheque-log-key", status, "text/plain", &Value::Null);
    let empty_proof = rest.get("/v1/log/consistency?from=0&to=0", None).await;
    assert_eq!(empty_proof.body, json!({"from": 0, "to": 0, "proof": []}), "{empty_proof:?}");
    check("get", "/v1/log/consistency", &empty_proof);

    let mut exports = Vec::new();
    let mut states = Vec::new();
    for (kind, players, options) in [
        ("cardinal", vec!["Ann", "Bob"], json!({"first_seat": 1})),
        ("kardinal", vec!["Ann", "Bob", "Cid"], json!({"variant": "dynamic"})),
        ("battle13", vec!["N", "E", "S", "W"], json!({"target_crowns": 20, "first_seat": null})),
    ] {
        let created = rest.post("/v1/games", None, &json!({"kind": kind, "players": players, "options": options})).await;
        assert_eq!(created.status, 201, "{created:?}");
        check("post", "/v1/games", &created);
        let game = created.body;
        let id = game["id"].as_str().unwrap().to_string();
        let token = |seat: usize| game["seats"][seat]["token"].as_str().unwrap().to_string();
        let receipt = format!("/v1/games/{id}/receipt");
        let not_over = rest.get(&receipt, None).await;
        assert_eq!((not_over.status, not_over.body["code"].as_str()), (409, Some("game_not_over")), "{not_over:?}");
        check("get", &receipt, &not_over);
        let mut choose = chooser(11);
        loop {
            let state = rest.get(&format!("/v1/games/{id}"), None).await;
            check("get", "/v1/games/{id}", &state);
            if state.body["status"]["state"] == "finished" {
                // Over: its receipt, the one its state carries.
                let over = rest.get(&receipt, None).await;
                assert_eq!((over.status, &over.body), (200, &state.body["receipt"]), "{over:?}");
                check("get", &receipt, &over);
                states.push(state.body);
                break;
            }
            let seat = state.body["status"]["to_move"][0].as_u64().unwrap() as usize;
            let mine = rest.get(&format!("/v1/games/{id}"), Some(&token(seat))).await;
            check("get", "/v1/games/{id}", &mine);
            let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&token(seat))).await;
            check("get", "/v1/games/{id}/legal-moves", &legal);
            let moves = legal.body["moves"].as_array().unwrap().clone();
            let moved = rest.post(&format!("/v1/games/{id}/moves"), Some(&token(seat)), &json!({"move": moves[choose(&moves)]})).await;
            assert_eq!(moved.status, 200, "{moved:?}");
            check("post", "/v1/games/{id}/moves", &moved);
        }
        for path in [
            format!("/v1/games/{id}/events?from=0&limit=50"),
            format!("/v1/games/{id}/steps?limit=1000"),
            format!("/v1/games/{id}/replay?at=1"),
            format!("/v1/games/{id}/replay?at=0"),
            format!("/v1/games?kind={kind}"),
        ] {
            let answer = rest.get(&path, Some(&token(0))).await;
            check("get", &path, &answer);
            let answer = rest.get(&path, None).await;
            check("get", &path, &answer);
        }
        // A live stream: each `record` is a GameUpdate, the `end` a StreamEnd.
        let mut stream = rest.sse(&format!("/v1/games/{id}/stream"), Some(&token(1)), None).await;
        let schema = "/paths/~1v1~1games~1{id}~1stream/get/responses/200/content/text~1event-stream/schema";
        let mut events = 0;
        while let Some(event) = stream.next().await {
            let whole = json!({ "event": event.event, "id": event.id, "data": event.data.to_string() });
            let whole = if event.id.is_none() { json!({ "event": event.event, "data": event.data.to_string() }) } else { whole };
            contract.validate(schema, &whole, &format!("{kind} stream event {}", event.event));
            // `data` is JSON text: its own schema is checked on the parsed value.
            contract.validate(
                &format!("{schema}/properties/data/contentSchema"),
                &event.data,
                &format!("{kind} stream event {} data", event.event),
            );
            events += 1;
        }
        assert!(events > 2);
        let (status, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
        contract.check("get", "/v1/games/{id}/export", status, "application/x-ndjson", &Value::Null);
        let report = rest.post_bytes("/v1/verify", export.clone()).await;
        assert_eq!(report.body["kind"], kind);
        check("post", "/v1/verify", &report);
        exports.push(export);
    }

    // The log after the three games ended: its checkpoint, and the proof
    // that the first game's tree is a prefix of the latest.
    let log = rest.get("/v1/log", None).await;
    assert_eq!(log.body["tree"]["size"], 3, "{log:?}");
    check("get", "/v1/log", &log);
    let (status, checkpoint) = rest.get_bytes("/v1/log/checkpoint", None).await;
    assert_eq!((status, String::from_utf8(checkpoint).unwrap().as_str()), (200, log.body["checkpoint"].as_str().unwrap()));
    contract.check("get", "/v1/log/checkpoint", status, "text/plain", &Value::Null);
    let proof = rest.get("/v1/log/consistency?from=1&to=3", None).await;
    assert_eq!((proof.status, proof.body["proof"].as_array().map(Vec::len)), (200, Some(2)), "{proof:?}");
    check("get", "/v1/log/consistency", &proof);
    for path in ["/v1/log/consistency?from=1&to=4", "/v1/log/consistency?from=2&to=1", "/v1/log/consistency?from=1"] {
        let refused = rest.get(path, None).await;
        assert_eq!((refused.status, refused.body["code"].as_str()), (400, Some("invalid_input")), "{path}: {refused:?}");
        check("get", path, &refused);
    }
    let unknown = rest.get("/v1/games/01890000-0000-7000-8000-000000000000/receipt", None).await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    check("get", "/v1/games/{id}/receipt", &unknown);

    // The check can fail: a game of one kind passed off as another, or
    // options of the right kind missing what they must hold, match nothing.
    let state_schema = "/components/schemas/GameState";
    assert!(contract.errors(state_schema, &states[1]).is_empty());
    let mut relabelled = states[1].clone();
    relabelled["kind"] = json!("cardinal");
    assert!(!contract.errors(state_schema, &relabelled).is_empty(), "a Kardinal & König state is not a Cardinal one");
    let mut stripped = states[2].clone();
    stripped["options"].as_object_mut().unwrap().remove("target_crowns");
    stripped["options"]["board"] = json!({});
    assert!(!contract.errors(state_schema, &stripped).is_empty(), "Battle 13 options hold no board");

    // Refusals, each documented where it can happen.
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str();
    let bob = game["seats"][1]["token"].as_str();
    let moves = format!("/v1/games/{id}/moves");
    // Bot seats: created, read, handed over and back, their records and what a seat knows.
    let created = rest
        .post(
            "/v1/games",
            None,
            &json!({"kind": "cardinal", "players": ["Ann", {"name": "Robo", "bot": {"level": "random", "think_ms": 0}}]}),
        )
        .await;
    assert_eq!(created.status, 201, "{created:?}");
    check("post", "/v1/games", &created);
    let bot_game = created.body["id"].as_str().unwrap().to_string();
    let robo_owner = created.body["seats"][0]["token"].as_str().unwrap().to_string();
    let known = rest.get(&format!("/v1/games/{bot_game}/info"), Some(&robo_owner)).await;
    assert_eq!(known.status, 200, "{known:?}");
    check("get", "/v1/games/{id}/info", &known);
    let handed =
        rest.put(&format!("/v1/games/{bot_game}/autopilot"), Some(&robo_owner), &json!({"bot": {"level": "greedy", "think_ms": 0}})).await;
    assert_eq!(handed.status, 200, "{handed:?}");
    check("put", "/v1/games/{id}/autopilot", &handed);
    let back = rest.delete(&format!("/v1/games/{bot_game}/autopilot"), Some(&robo_owner)).await;
    assert_eq!(back.status, 200, "{back:?}");
    check("delete", "/v1/games/{id}/autopilot", &back);
    for (path, token) in [
        (format!("/v1/games/{bot_game}"), None),
        (format!("/v1/games/{bot_game}/events"), Some(robo_owner.as_str())),
        (format!("/v1/games/{bot_game}/steps"), None),
    ] {
        let answer = rest.get(&path, token).await;
        check("get", &path, &answer);
    }
    for (method, answer) in [
        ("put", rest.put(&format!("/v1/games/{bot_game}/autopilot"), Some(&robo_owner), &json!({"bot": {"level": "genius"}})).await),
        ("put", rest.put(&format!("/v1/games/{bot_game}/autopilot"), None, &json!({"bot": {"level": "random"}})).await),
        ("delete", rest.delete(&format!("/v1/games/{bot_game}/autopilot"), None).await),
        ("get", rest.get(&format!("/v1/games/{bot_game}/info"), None).await),
    ] {
        assert!(answer.status == 400 || answer.status == 401, "{answer:?}");
        check(method, if method == "get" { "/v1/games/{id}/info" } else { "/v1/games/{id}/autopilot" }, &answer);
    }
    // Seats: a public game with open seats, joined, left, reissued, handed to a bot, resigned; another cancelled.
    let lobby = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", null, null], "public": true})).await;
    assert_eq!(lobby.status, 201, "{lobby:?}");
    check("post", "/v1/games", &lobby);
    let lobby_id = lobby.body["id"].as_str().unwrap().to_string();
    let admin = lobby.body["admin_token"].as_str().unwrap().to_string();
    let ann_token = lobby.body["seats"][0]["token"].as_str().unwrap().to_string();
    let open = rest.get("/v1/games?open=true", None).await;
    check("get", "/v1/games", &open);
    let join = format!("/v1/games/{lobby_id}/join");
    let joined = rest.post(&join, None, &json!({"name": "Bea"})).await;
    assert_eq!(joined.status, 200, "{joined:?}");
    check("post", "/v1/games/{id}/join", &joined);
    let bea = joined.body["token"].as_str().unwrap().to_string();
    let moving = rest.post(&moves.replace(id, &lobby_id), Some(&ann_token), &json!({"move": {"type": "keep_cardinal"}})).await;
    assert_eq!(moving.body["code"], "game_waiting", "{moving:?}");
    check("post", "/v1/games/{id}/moves", &moving);
    let left = rest.post(&format!("/v1/games/{lobby_id}/leave"), Some(&bea), &json!(null)).await;
    assert_eq!(left.status, 200, "{left:?}");
    check("post", "/v1/games/{id}/leave", &left);
    let code = lobby.body["invitations"][1]["code"].as_str().unwrap();
    let by_invitation = rest.post(&join, None, &json!({"name": "Cy", "invitation": code})).await;
    assert_eq!(by_invitation.status, 200, "{by_invitation:?}");
    let again = rest.post(&join, None, &json!({"name": "Dee", "invitation": code})).await;
    assert_eq!(again.body["code"], "seat_taken", "{again:?}");
    check("post", "/v1/games/{id}/join", &again);
    let bot_seat =
        rest.put(&format!("/v1/games/{lobby_id}/seats/2/bot"), Some(&admin), &json!({"bot": {"level": "random", "think_ms": 0}})).await;
    assert_eq!(bot_seat.status, 200, "{bot_seat:?}");
    check("put", "/v1/games/{id}/seats/{seat}/bot", &bot_seat);
    let reissued = rest.post(&format!("/v1/games/{lobby_id}/seats/0/token"), Some(&admin), &json!(null)).await;
    assert_eq!(reissued.status, 200, "{reissued:?}");
    check("post", "/v1/games/{id}/seats/{seat}/token", &reissued);
    let not_admin = rest.post(&format!("/v1/games/{lobby_id}/seats/0/token"), Some(&ann_token), &json!(null)).await;
    assert_eq!(not_admin.status, 401, "{not_admin:?}");
    check("post", "/v1/games/{id}/seats/{seat}/token", &not_admin);
    let resigned = rest.post(&format!("/v1/games/{lobby_id}/resign"), reissued.body["token"].as_str(), &json!(null)).await;
    assert_eq!(resigned.status, 200, "{resigned:?}");
    check("post", "/v1/games/{id}/resign", &resigned);
    let back = rest.delete(&format!("/v1/games/{lobby_id}/seats/2/bot"), Some(&admin)).await;
    check("delete", "/v1/games/{id}/seats/{seat}/bot", &back);
    let state = rest.get(&format!("/v1/games/{lobby_id}"), None).await;
    check("get", "/v1/games/{id}", &state);
    let events = rest.get(&format!("/v1/games/{lobby_id}/events"), None).await;
    check("get", "/v1/games/{id}/events", &events);
    let waiting = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": [null, null]})).await;
    let waiting_id = waiting.body["id"].as_str().unwrap();
    let cancelled = rest.post(&format!("/v1/games/{waiting_id}/cancel"), waiting.body["admin_token"].as_str(), &json!(null)).await;
    assert_eq!(cancelled.status, 200, "{cancelled:?}");
    check("post", "/v1/games/{id}/cancel", &cancelled);
    let twice = rest.post(&format!("/v1/games/{waiting_id}/cancel"), waiting.body["admin_token"].as_str(), &json!(null)).await;
    assert_eq!(twice.body["code"], "game_cancelled", "{twice:?}");
    check("post", "/v1/games/{id}/cancel", &twice);
    // Clocks: a running clock in the status, then a timeout record.
    let timed = rest
        .post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "clock": {"move_ms": 1000, "on_timeout": "lose"}}))
        .await;
    assert_eq!(timed.status, 201, "{timed:?}");
    check("post", "/v1/games", &timed);
    let timed_id = timed.body["id"].as_str().unwrap().to_string();
    let running = rest.get(&format!("/v1/games/{timed_id}"), None).await;
    assert!(
        running.body["status"]["clock"]["seats"][0]["deadline"].is_string()
            || running.body["status"]["clock"]["seats"][1]["deadline"].is_string(),
        "{running:?}"
    );
    check("get", "/v1/games/{id}", &running);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let over = loop {
        let state = rest.get(&format!("/v1/games/{timed_id}"), None).await;
        if state.body["status"]["state"] == "finished" {
            break state;
        }
        assert!(std::time::Instant::now() < deadline, "the clock never ran out: {state:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    check("get", "/v1/games/{id}", &over);
    let timed_events = rest.get(&format!("/v1/games/{timed_id}/events"), None).await;
    assert!(timed_events.body["events"].as_array().unwrap().iter().any(|e| e["type"] == "timeout"), "{timed_events:?}");
    check("get", "/v1/games/{id}/events", &timed_events);
    let bad_clock = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "clock": {"move_ms": 5}})).await;
    assert_eq!(bad_clock.body["field"], "clock.move_ms", "{bad_clock:?}");
    check("post", "/v1/games", &bad_clock);
    let internal =
        rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "webhook": "http://127.0.0.1:9/"})).await;
    assert_eq!(internal.body["field"], "webhook", "{internal:?}");
    check("post", "/v1/games", &internal);
    let refusals: Vec<(&str, String, Answer)> = vec![
        ("post", "/v1/games".into(), rest.post("/v1/games", None, &json!({"kind": "chess", "players": ["A", "B"]})).await),
        ("post", "/v1/games".into(), rest.post_raw("/v1/games", None, "text/plain", "{}").await),
        ("get", "/v1/games?limit=lots".into(), rest.get("/v1/games?limit=lots", None).await),
        ("get", "/v1/games/%FF".into(), rest.get("/v1/games/%FF", None).await),
        (
            "get",
            "/v1/games/01890000-0000-7000-8000-000000000000".into(),
            rest.get("/v1/games/01890000-0000-7000-8000-000000000000", None).await,
        ),
        ("get", format!("/v1/games/{id}/legal-moves"), rest.get(&format!("/v1/games/{id}/legal-moves"), Some("ludo_nope")).await),
        ("post", moves.clone(), rest.post(&moves, bob, &json!({"move": {"type": "keep_cardinal"}})).await),
        ("post", moves.clone(), rest.post(&moves, ann, &json!({"move": {"type": "keep_cardinal"}, "expected_version": 7})).await),
        (
            "post",
            moves.clone(),
            rest.post(&moves, ann, &json!({"move": {"type": "build", "shape": "house", "colour": 0, "x": 50, "y": 50}})).await,
        ),
        ("get", format!("/v1/games/{id}/replay?at=99"), rest.get(&format!("/v1/games/{id}/replay?at=99"), None).await),
        ("get", format!("/v1/games/{id}/stream?from=9"), rest.get(&format!("/v1/games/{id}/stream?from=9"), None).await),
        ("post", "/v1/verify".into(), rest.post_bytes("/v1/verify", b"not an export".to_vec()).await),
        ("post", "/v1/games/import".into(), rest.import(b"not an export".to_vec()).await),
        ("post", "/v1/games/import".into(), rest.import(exports[0].clone()).await),
    ];
    // Over the body limit: the server answers and closes at once, so a raw
    // socket sends it and reads the answer.
    let head = format!("POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", 3 << 20);
    let (status, body) = ludo_blackbox::raw_exchange(server.addr, head.as_bytes(), 0).await;
    contract.check("post", "/v1/games", status, "application/problem+json", &body);
    let mut statuses = std::collections::BTreeSet::from([status]);
    for (method, path, answer) in &refusals {
        statuses.insert(answer.status);
        check(method, path, answer);
    }
    assert_eq!(
        statuses.into_iter().collect::<Vec<_>>(),
        vec![200, 400, 401, 404, 409, 413, 415, 422],
        "the refusals above cover these statuses"
    );
    server.stop().await;

    // A second server takes the import; one with tight limits answers 429.
    let other = tempfile::tempdir().unwrap();
    let mut config = ludo_server::ServerConfig::default();
    config.rates.create_per_ip = Some(ludo_server::Rate::new(1, 1));
    let limited = TestServer::start_with(other.path(), config).await;
    let rest = limited.rest();
    let imported = rest.import(exports[2].clone()).await;
    assert_eq!(imported.status, 201, "{imported:?}");
    check("post", "/v1/games/import", &imported);
    assert_eq!(rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["A", "B"]})).await.status, 201);
    let refused = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["A", "B"]})).await;
    assert_eq!(refused.status, 429);
    check("post", "/v1/games", &refused);
    limited.stop().await;
    eprintln!("checked {} (method, path, status) answers against the document", contract.seen.lock().unwrap().len());
}

/// The bounds schemathesis found the server and the document disagreeing
/// on, each now the same on both sides (and over gRPC, where it has one):
/// refused with `invalid_input` naming the field where the document says
/// no, accepted where it says yes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bounds_the_document_states_are_the_bounds_the_server_keeps() {
    use ludo_proto::v1 as pb;
    use serde_json::json;

    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let refused = |answer: &ludo_blackbox::Answer, field: &str| {
        assert_eq!(
            (answer.status, answer.body["code"].as_str(), answer.body["field"].as_str()),
            (400, Some("invalid_input"), Some(field)),
            "{answer:?}"
        );
    };
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let admin = game["admin_token"].as_str();

    // A page size out of 1..=1000 is refused, not clamped.
    for path in ["/v1/games", &format!("/v1/games/{id}/events"), &format!("/v1/games/{id}/steps")] {
        for limit in [0, 1001] {
            refused(&rest.get(&format!("{path}?limit={limit}"), None).await, "limit");
        }
        assert_eq!(rest.get(&format!("{path}?limit=1000"), None).await.status, 200, "{path}");
    }
    let mut grpc = server.grpc().await;
    let too_many = grpc.list_events(pb::ListEventsRequest { id: id.into(), from: 0, limit: 1001 }).await.unwrap_err();
    assert_eq!(too_many.code(), tonic::Code::InvalidArgument, "{too_many:?}");
    assert!(grpc.list_events(pb::ListEventsRequest { id: id.into(), from: 0, limit: 0 }).await.is_ok(), "0: the default page");

    // An empty body is no export, to verify or to import (by the operator).
    refused(&rest.post_bytes("/v1/verify", Vec::new()).await, "export");
    refused(&rest.import(Vec::new()).await, "export");
    let empty = grpc.verify_game(pb::VerifyGameRequest { export: Vec::new() }).await.unwrap_err();
    assert_eq!(empty.code(), tonic::Code::InvalidArgument, "{empty:?}");

    // A seat is a u8; a bot thinks 0 to 10000 ms; a listing resumes after a hyphenated id.
    refused(&rest.post(&format!("/v1/games/{id}/seats/256/token"), admin, &json!({})).await, "seat");
    let bot = |think_ms: Value| json!({"kind": "cardinal", "players": ["Ann", {"name": "Robo", "bot": {"level": "random", "think_ms": think_ms}}]});
    refused(&rest.post("/v1/games", None, &bot(json!(10_001))).await, "players[1]");
    refused(&rest.get("/v1/games?after=01890000000070008000000000000000", None).await, "after");
    assert_eq!(rest.get("/v1/games?after=01890000-0000-7000-8000-000000000000", None).await.status, 200);

    // A number with a zero fraction is the integer JSON Schema says it is.
    let created = rest.post("/v1/games", None, &bot(json!(10_000.0))).await;
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(rest.post("/v1/games", None, &bot(json!(10.5))).await.status, 400, "a fraction is no integer");

    // A seat object without a bot is a person's seat, as documented.
    let person =
        rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": [{"name": "Ann"}, {"name": "Bob", "bot": null}]})).await;
    assert_eq!((person.status, person.body["seats"].as_array().map(Vec::len)), (201, Some(2)), "{person:?}");
    drop(grpc);
    server.stop().await;
}
