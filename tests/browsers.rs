//! What a web page needs from the server, over real sockets: the built-in
//! app's files, CORS for pages on other origins, and stream tickets that
//! let a browser follow a game live as its seat without a token in a URL.
//! (The pages themselves are driven in a real Chromium by
//! `services/ludo/tests/browser.rs`.)

use ludo_blackbox::{Contract, Rest, TestServer, kardinal_leaks};
use ludo_proto::ludo::v1 as pb;
use ludo_server::{ConnectionLimits, CorsOrigins, RateLimits, ServerConfig};
use prost::Message;
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn preflight(base: &str, path: &str, origin: &str) -> reqwest::Response {
    client()
        .request(reqwest::Method::OPTIONS, format!("{base}{path}"))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type")
        .send()
        .await
        .unwrap()
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_any_origin_may_create_play_and_read_with_a_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig { rates: RateLimits::unlimited(), ..Default::default() };
    let server = TestServer::start_with(dir.path(), config).await;
    let origin = "https://front.example";

    for path in ["/v1/games", "/v1/games/0190b5a4-0000-7000-8000-000000000000/moves", "/v1/verify", "/ludo.v1.Ludo/GetGame"] {
        let answer = preflight(&server.base, path, origin).await;
        assert!(answer.status().is_success(), "{path}: {}", answer.status());
        assert_eq!(header(&answer, "access-control-allow-origin").as_deref(), Some("*"), "{path}");
        let allowed = header(&answer, "access-control-allow-headers").unwrap();
        assert!(allowed.contains("authorization") && allowed.contains("content-type"), "{path}: {allowed}");
        assert!(header(&answer, "access-control-allow-methods").unwrap().contains("POST"));
        assert_eq!(header(&answer, "access-control-allow-credentials"), None, "no cookies, no credentials mode");
    }

    // A created game: the page can read its Location.
    let created = client()
        .post(format!("{}/v1/games", server.base))
        .header("origin", origin)
        .json(&json!({"kind": "cardinal", "players": ["Ann", "Bob"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(header(&created, "access-control-allow-origin").as_deref(), Some("*"));
    let exposed = header(&created, "access-control-expose-headers").unwrap();
    for name in ["location", "retry-after", "grpc-status"] {
        assert!(exposed.contains(name), "{name} is readable by the page: {exposed}");
    }
    // Refusals are readable too (a page shows their `detail`).
    let missing = client()
        .get(format!("{}/v1/games/0190b5a4-0000-7000-8000-000000000000", server.base))
        .header("origin", origin)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(header(&missing, "access-control-allow-origin").as_deref(), Some("*"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_can_be_narrowed_to_a_list_or_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let only: CorsOrigins = "https://front.example".parse().unwrap();
    let server = TestServer::start_with(dir.path(), ServerConfig { cors: only, ..Default::default() }).await;
    let allowed = preflight(&server.base, "/v1/games", "https://front.example").await;
    assert_eq!(header(&allowed, "access-control-allow-origin").as_deref(), Some("https://front.example"));
    let refused = preflight(&server.base, "/v1/games", "https://other.example").await;
    assert_eq!(header(&refused, "access-control-allow-origin"), None, "another origin gets no grant");
    server.stop().await;

    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_with(dir.path(), ServerConfig { cors: CorsOrigins::Off, ..Default::default() }).await;
    let refused = preflight(&server.base, "/v1/games", "https://front.example").await;
    assert_eq!(refused.status(), 405, "no CORS: a preflight is a method this path does not take");
    assert_eq!(header(&refused, "access-control-allow-origin"), None);
    server.stop().await;
}

/// Reads the stream at `url` until `records` records have arrived.
async fn stream_records(url: &str, records: usize) -> Vec<Value> {
    let mut response = client().get(url).send().await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    let (mut buffer, mut out) = (String::new(), Vec::new());
    while out.len() < records {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(20), response.chunk()).await.unwrap().unwrap().unwrap();
        buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                out.push(serde_json::from_str(data).unwrap());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ticket_follows_a_game_as_its_seat_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let contract = Contract::new(ludo_server::openapi());
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let id = game["id"].as_str().unwrap();
    let token = |seat: usize| game["seats"][seat]["token"].as_str().unwrap().to_string();
    let path = format!("/v1/games/{id}/stream-tickets");

    let ticket = rest.post(&path, Some(&token(1)), &json!({})).await;
    assert_eq!(ticket.status, 201, "{:?}", ticket.body);
    contract.check("post", &path, ticket.status, &ticket.content_type, &ticket.body);
    assert_eq!(ticket.body["seat"], 1);
    assert_eq!(ticket.body["expires_in_ms"], 60_000);
    let secret = ticket.body["ticket"].as_str().unwrap();
    assert!(!secret.contains(&token(1)[5..]), "the ticket does not carry the token");

    // The ticket opens the stream as seat 1: its own hand, nobody else's.
    let records = stream_records(&format!("{}/v1/games/{id}/stream?ticket={secret}", server.base), 1).await;
    let view = &records[0]["view"];
    assert!(view["seats"][1]["hand"].is_array(), "the seat sees its own hand: {view}");
    assert_eq!(kardinal_leaks(&records[0], Some(1)), Vec::<String>::new());

    // Refusals, each with a code and a reason.
    let refusals = [
        (format!("/v1/games/{id}/stream?ticket=0.1.00"), 401, "unauthorized"),
        (format!("/v1/games/{id}/stream?ticket={}", secret.replacen("1.", "0.", 1)), 401, "unauthorized"),
    ];
    for (path, status, code) in refusals {
        let answer = rest.get(&path, None).await;
        assert_eq!((answer.status, answer.body["code"].as_str()), (status, Some(code)), "{path}: {:?}", answer.body);
        contract.check("get", &path, answer.status, &answer.content_type, &answer.body);
    }
    let other = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let elsewhere = rest.get(&format!("/v1/games/{}/stream?ticket={secret}", other["id"].as_str().unwrap()), None).await;
    assert_eq!(elsewhere.status, 401, "a ticket opens its own game only");
    let both = rest.get(&format!("/v1/games/{id}/stream?ticket={secret}"), Some(&token(1))).await;
    assert_eq!((both.status, both.body["field"].as_str()), (400, Some("ticket")));
    for token in [None, Some("ludo_not_a_token")] {
        let answer = rest.post(&path, token, &json!({})).await;
        assert_eq!((answer.status, answer.body["code"].as_str()), (401, Some("unauthorized")), "a ticket needs a seat's token");
        contract.check("post", &path, answer.status, &answer.content_type, &answer.body);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_app_is_served_with_a_strict_policy_and_revalidated_by_etag() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let get = |path: &'static str| client().get(format!("{}{path}", server.base)).send();
    for path in ["/", "/games/0190b5a4-0000-7000-8000-000000000000/play", "/games/x/replay", "/games/x/watch", "/games/x/audit"] {
        let page = get(path).await.unwrap();
        assert_eq!(page.status(), 200, "{path}");
        assert_eq!(header(&page, "content-type").as_deref(), Some("text/html; charset=utf-8"));
        let policy = header(&page, "content-security-policy").unwrap();
        assert!(policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), "{policy}");
        let html = page.text().await.unwrap();
        assert!(html.contains("/assets/js/main.js"), "the shell loads the app");
        for attribute in ["src=\"http", "href=\"http", "src='http", "href='http", "url(http"] {
            assert!(!html.contains(attribute), "nothing is fetched from elsewhere ({attribute})");
        }
    }
    let script = get("/assets/js/main.js").await.unwrap();
    assert_eq!(header(&script, "content-type").as_deref(), Some("text/javascript; charset=utf-8"));
    let etag = header(&script, "etag").unwrap();
    let again = client().get(format!("{}/assets/js/main.js", server.base)).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(again.status(), 304, "a current copy is not sent again");

    // Unknown pages and files, and escapes from the app's folder, are 404 problems.
    let rest: Rest = server.rest();
    for path in ["/games/x/nope", "/assets/nope.js", "/assets/../Cargo.toml", "/assets/%2e%2e/%2e%2e/Cargo.toml", "/README.md"] {
        let answer = rest.get(path, None).await;
        assert_eq!((answer.status, answer.body["code"].as_str()), (404, Some("not_found")), "{path}");
    }
    let (status, _) =
        ludo_blackbox::raw_exchange(server.addr, b"GET /assets/../../Cargo.toml HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", 0).await;
    assert_eq!(status, 404, "a raw ../ path");
    server.stop().await;
}

/// Reads gRPC-Web frames from `response` until a data frame (a message) is
/// whole, within 10 s.
async fn next_message(response: &mut reqwest::Response, buffer: &mut Vec<u8>) -> pb::GameUpdate {
    loop {
        if buffer.len() >= 5 {
            let len = u32::from_be_bytes(buffer[1..5].try_into().unwrap()) as usize;
            if buffer.len() >= 5 + len {
                let frame: Vec<u8> = buffer.drain(..5 + len).collect();
                assert_eq!(frame[0], 0, "a data frame, not the trailers: {:?}", String::from_utf8_lossy(&frame[5..]));
                return pb::GameUpdate::decode(&frame[5..]).unwrap();
            }
        }
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), response.chunk()).await.expect("a frame in time");
        buffer.extend_from_slice(&chunk.unwrap().expect("the stream is still open"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_web_stream_over_http1_outlives_the_idle_timeout_between_records() {
    // gRPC-Web over HTTP/1.1 has no heartbeat: between records nothing
    // moves, and that is the server's wait, not a client's stall.
    let dir = tempfile::tempdir().unwrap();
    let idle = std::time::Duration::from_secs(1);
    let connections = ConnectionLimits { idle_timeout: idle, ..Default::default() };
    let server =
        TestServer::start_with(dir.path(), ServerConfig { connections, rates: RateLimits::unlimited(), ..Default::default() }).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let ann = game["seats"][0]["token"].as_str().unwrap().to_string();

    let message = pb::WatchGameRequest { id: id.clone(), from: 0 }.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(&message);
    let http = reqwest::Client::builder().http1_only().build().unwrap();
    let mut response = http
        .post(format!("{}/ludo.v1.Ludo/WatchGame", server.base))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .header("authorization", format!("Bearer {ann}"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "content-type").as_deref(), Some("application/grpc-web+proto"));
    let mut buffer = Vec::new();
    assert_eq!(next_message(&mut response, &mut buffer).await.event.unwrap().seq, 0);

    // Three idle timeouts without a record, then a move: it still arrives.
    tokio::time::sleep(3 * idle).await;
    let moves = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await.body["moves"].clone();
    let played = rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &json!({"move": moves[0]})).await;
    assert_eq!(played.status, 200, "{:?}", played.body);
    assert_eq!(next_message(&mut response, &mut buffer).await.event.unwrap().seq, 1);
    server.stop().await;
}
