//! A page on another origin uses the API through CORS: it creates a game,
//! plays with bearer tokens and follows the game live as its seat through a
//! stream ticket (`EventSource` cannot send a header); it turns autopilot on
//! and off and hands a seat to a bot and back (`PUT`, `DELETE`); and a
//! server limited to one origin refuses the others.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::harness::{Browser, Test};

/// The page: plain JavaScript, no build, on its own origin. `?server=` is
/// the ludo server; `?moves=N` how many moves to play; `?only=create` stops
/// after creating the game.
const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Another origin's front end</title></head>
<body>
<h1>A front end elsewhere</h1>
<pre id="log"></pre>
<script>
const params = new URLSearchParams(location.search);
const server = params.get('server');
const wanted = Number(params.get('moves') || '0');
window.events = [];
window.streamErrors = 0;
window.result = null;
const log = (line) => { document.getElementById('log').textContent += line + '\n'; };

async function call(method, path, token, body) {
  const headers = {};
  if (token) headers['Authorization'] = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const answer = await fetch(server + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await answer.text();
  return { status: answer.status, location: answer.headers.get('Location'), json: text ? JSON.parse(text) : null };
}

async function run() {
  const created = await call('POST', '/v1/games', null, { kind: 'kardinal', players: ['Ann', 'Bob', 'Cid'], options: { first_seat: 0 } });
  if (created.status !== 201) throw new Error('create: ' + created.status + ' ' + JSON.stringify(created.json));
  const game = created.json;
  const tokens = game.seats.map((s) => s.token);
  log('created ' + game.id + ' at ' + created.location);
  if (params.get('only') === 'create') { window.result = { id: game.id, location: created.location }; return; }

  // Follow the game as seat 0: a ticket, then an EventSource (no header possible).
  const issued = await call('POST', '/v1/games/' + game.id + '/stream-tickets', tokens[0]);
  if (issued.status !== 201) throw new Error('ticket: ' + issued.status + ' ' + JSON.stringify(issued.json));
  const ticket = issued.json;
  const source = new EventSource(server + '/v1/games/' + game.id + '/stream?ticket=' + encodeURIComponent(ticket.ticket));
  source.addEventListener('record', (e) => { window.events.push({ id: e.lastEventId, data: JSON.parse(e.data) }); });
  source.addEventListener('end', (e) => { window.events.push({ end: JSON.parse(e.data) }); source.close(); });
  source.onerror = () => { window.streamErrors++; };
  window.source = source;

  // Play: whoever is to move, with that seat's bearer token.
  const answers = [];
  for (let i = 0; i < wanted; i++) {
    const state = await call('GET', '/v1/games/' + game.id);
    if (state.json.status.state !== 'in_progress') break;
    const seat = state.json.status.to_move[0];
    const legal = await call('GET', '/v1/games/' + game.id + '/legal-moves', tokens[seat]);
    const move = legal.json.moves[0];
    const answer = await call('POST', '/v1/games/' + game.id + '/moves', tokens[seat], { move, expected_version: state.json.version });
    answers.push({ seat, status: answer.status, version: answer.json && answer.json.version });
    log('seat ' + seat + ' ' + move.type + ': ' + answer.status);
  }
  window.result = { id: game.id, location: created.location, ticket, answers, tokens };
}
run().catch((e) => { window.result = { error: String((e && e.stack) || e) }; log('failed: ' + window.result.error); });
</script>
</body></html>
"#;

/// A page that hands seats to server bots and takes them back, with the
/// methods beyond simple requests: autopilot on (`PUT`) and off (`DELETE`)
/// with a seat's token, and, with the admin token, an open seat of a game
/// still waiting for players handed to a bot (`PUT`) and taken back
/// (`DELETE`). `window.result.steps` holds each answer's status and JSON.
const SEATS_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Another origin's seat manager</title></head>
<body>
<h1>Seats handed over from elsewhere</h1>
<pre id="log"></pre>
<script>
const server = new URLSearchParams(location.search).get('server');
window.result = null;
const log = (line) => { document.getElementById('log').textContent += line + '\n'; };

async function call(method, path, token, body) {
  const headers = {};
  if (token) headers['Authorization'] = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let answer;
  try {
    answer = await fetch(server + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new Error(method + ' ' + path + ': ' + e);
  }
  const text = await answer.text();
  log(method + ' ' + path + ': ' + answer.status);
  return { status: answer.status, json: text ? JSON.parse(text) : null };
}

async function run() {
  const random = { level: 'random', think_ms: 0 };
  const steps = {};
  // A game under way, seat 0 to move: seat 1's bot has nothing to play yet.
  const playing = await call('POST', '/v1/games', null, { kind: 'cardinal', players: ['Ann', 'Bob'], options: { first_seat: 0 } });
  if (playing.status !== 201) throw new Error('create: ' + playing.status + ' ' + JSON.stringify(playing.json));
  const bob = playing.json.seats[1].token;
  steps.autopilot_on = await call('PUT', '/v1/games/' + playing.json.id + '/autopilot', bob, { bot: random });
  steps.autopilot_off = await call('DELETE', '/v1/games/' + playing.json.id + '/autopilot', bob);
  // A game waiting for players: its open seat 2 goes to a bot.
  const waiting = await call('POST', '/v1/games', null, { kind: 'cardinal', players: ['Ann', null, null] });
  if (waiting.status !== 201) throw new Error('create: ' + waiting.status + ' ' + JSON.stringify(waiting.json));
  const admin = waiting.json.admin_token;
  steps.seat_to_bot = await call('PUT', '/v1/games/' + waiting.json.id + '/seats/2/bot', admin, { bot: random, name: 'Robo' });
  steps.seat_from_bot = await call('DELETE', '/v1/games/' + waiting.json.id + '/seats/2/bot', admin);
  window.result = { playing: playing.json.id, waiting: waiting.json.id, steps };
}
run().catch((e) => { window.result = { error: String((e && e.stack) || e) }; log('failed: ' + window.result.error); });
</script>
</body></html>
"#;

/// Serves `page` on a loopback port of its own (another origin); returns the port.
async fn serve_page(page: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 2048];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buffer[..n]),
                    }
                    if head.len() > 64 * 1024 {
                        return;
                    }
                }
                let first = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
                let answer = if first.starts_with("GET / ") || first.starts_with("GET /?") {
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{page}",
                        page.len()
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
                };
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    port
}

/// Waits for the page's `window.result`.
async fn result(page: &Browser) -> Value {
    page.wait_js("the page on the other origin to finish its script (window.result)", "return window.result;", vec![]).await
}

/// A CORS preflight for a move with a bearer token, from `origin`.
async fn preflight(base: &str, origin: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, format!("{base}/v1/games/some-game/moves"))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "authorization,content-type")
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_origin_plays_a_game_and_follows_it_as_its_seat() {
    let Some(t) = Test::start("cross_origin", &[]) else { return };
    let port = serve_page(PAGE).await;
    let origin = format!("http://127.0.0.1:{port}");
    const MOVES: usize = 12;
    let page = t.browser("other-origin").await;
    page.goto(&format!("{origin}/?server={}&moves={MOVES}", t.base())).await;
    let outcome = result(&page).await;
    assert!(outcome.get("error").is_none(), "the page on {origin} failed: {outcome}");
    let id = outcome["id"].as_str().unwrap();
    assert_eq!(outcome["location"], json!(format!("/v1/games/{id}")), "the page reads Location (an exposed header)");
    assert_eq!(outcome["ticket"]["seat"], 0, "{outcome}");
    assert!(outcome["ticket"]["expires_in_ms"].as_u64().is_some_and(|ms| ms > 0), "{outcome}");
    let answers = outcome["answers"].as_array().unwrap();
    assert_eq!(answers.len(), MOVES);
    for answer in answers {
        assert_eq!(answer["status"], 200, "a move from the other origin: {outcome}");
    }
    let last = answers.last().unwrap()["version"].as_u64().unwrap();
    assert_eq!(t.get(&format!("/v1/games/{id}"), None).await["version"], json!(last));

    // The stream, as seat 0: every record in order, with seat 0's own hand and no other.
    let events = page
        .wait_js(
            &format!("the EventSource to deliver record {last}"),
            "return window.events.some((e) => e.data && e.data.event.seq === arguments[0]) ? window.events : null;",
            vec![json!(last)],
        )
        .await;
    let events = events.as_array().unwrap();
    let seqs: Vec<u64> = events.iter().filter_map(|e| e["data"]["event"]["seq"].as_u64()).collect();
    assert_eq!(seqs, (0..=last).collect::<Vec<_>>(), "every record once, in order");
    for event in events {
        let seats = event["data"]["view"]["seats"].as_array().unwrap();
        assert!(seats[0]["hand"].is_array() && !seats[0]["hand"].as_array().unwrap().is_empty(), "seat 0's own hand in {event}");
        assert!(seats[1]["hand"].is_null() && seats[2]["hand"].is_null(), "no other seat's hand in {event}");
        assert_eq!(event["id"], json!(event["data"]["event"]["seq"].to_string()), "the SSE id is the record's seq");
    }
    // Seat 0's hand in the stream is the one seat 0 reads with its token.
    let token = outcome["tokens"][0].as_str().unwrap();
    let own = t.get(&format!("/v1/games/{id}"), Some(token)).await;
    assert_eq!(events.last().unwrap()["data"]["view"]["seats"][0]["hand"], own["view"]["seats"][0]["hand"]);
    // The token itself never appeared in a URL: the server's log lines name no token.
    let lines: Vec<Value> = t.server.lines.try_iter().collect();
    for token in outcome["tokens"].as_array().unwrap() {
        let token = token.as_str().unwrap();
        assert!(!lines.iter().any(|l| l.to_string().contains(token)), "a seat token in the server's log");
    }
    page.screenshot("other-origin").await;
    page.close().await;
    t.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_limited_to_one_origin_refuses_the_others() {
    let allowed = serve_page(PAGE).await;
    let other = serve_page(PAGE).await;
    let allowed_origin = format!("http://127.0.0.1:{allowed}");
    let other_origin = format!("http://127.0.0.1:{other}");
    let Some(t) = Test::start("cors_limited", &["--cors-origins", &allowed_origin]) else { return };

    // Preflights: the allowed origin gets its grant, another gets none.
    let granted = preflight(t.base(), &allowed_origin).await;
    assert_eq!(
        granted.headers().get("access-control-allow-origin").and_then(|v| v.to_str().ok()),
        Some(allowed_origin.as_str()),
        "the allowed origin's preflight: {:?}",
        granted.headers()
    );
    let allowed_headers = granted.headers().get("access-control-allow-headers").and_then(|v| v.to_str().ok()).unwrap_or("").to_lowercase();
    assert!(allowed_headers.contains("authorization"), "Authorization may be sent: {allowed_headers}");
    let refused = preflight(t.base(), &other_origin).await;
    assert!(
        refused.headers().get("access-control-allow-origin").is_none(),
        "another origin's preflight must not be granted: {:?}",
        refused.headers()
    );

    // In browsers: the page on the allowed origin creates a game, the other cannot.
    let page = t.browser("allowed-origin").await;
    page.goto(&format!("{allowed_origin}/?server={}&only=create", t.base())).await;
    let outcome = result(&page).await;
    assert!(outcome.get("error").is_none(), "the allowed origin's page failed: {outcome}");
    page.close().await;
    let page = t.browser("refused-origin").await;
    page.goto(&format!("{other_origin}/?server={}&only=create", t.base())).await;
    let outcome = result(&page).await;
    let error = outcome["error"].as_str().unwrap_or_else(|| panic!("the other origin's page must be refused: {outcome}"));
    assert!(error.contains("Failed to fetch") || error.contains("TypeError"), "a CORS refusal: {error}");
    page.screenshot("refused").await;
    let _ = page.console().await; // the browser logs the CORS refusal it was meant to make
    page.close().await;
    // Only the allowed page's game exists.
    let games = t.get("/v1/games", None).await;
    assert_eq!(games["games"].as_array().unwrap().len(), 1);
    t.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_origin_hands_seats_to_bots_and_takes_them_back() {
    let port = serve_page(SEATS_PAGE).await;
    let origin = format!("http://127.0.0.1:{port}");
    let Some(t) = Test::start("cross_origin_seats", &["--cors-origins", &origin]) else { return };
    let page = t.browser("other-origin-seats").await;
    page.goto(&format!("{origin}/?server={}", t.base())).await;
    let outcome = result(&page).await;
    assert!(outcome.get("error").is_none(), "the page on {origin} failed: {outcome}");
    let steps = &outcome["steps"];
    let answer = |step: &str| {
        assert_eq!(steps[step]["status"], 200, "{step} from {origin}: {outcome}");
        steps[step]["json"].clone()
    };
    let random = json!({"level": "random", "think_ms": 0});
    assert_eq!(answer("autopilot_on"), json!({"version": 1, "seat": 1, "bot": random}));
    assert_eq!(answer("autopilot_off"), json!({"version": 2, "seat": 1}));
    let waiting = json!({"state": "waiting", "open_seats": [1]});
    assert_eq!(answer("seat_to_bot"), json!({"version": 1, "status": waiting}));
    // Before the start, a bot taken off a seat leaves it: the seat is open again.
    let reopened = json!({"state": "waiting", "open_seats": [1, 2]});
    assert_eq!(answer("seat_from_bot"), json!({"version": 2, "status": reopened}));

    // The server holds what the page was told.
    let playing = t.get(&format!("/v1/games/{}", outcome["playing"].as_str().unwrap()), None).await;
    assert_eq!(playing["version"], 2);
    assert!(playing["seats"][1].get("bot").is_none(), "seat 1 is Bob's again: {playing}");
    let waiting_game = t.get(&format!("/v1/games/{}", outcome["waiting"].as_str().unwrap()), None).await;
    assert_eq!((&waiting_game["version"], &waiting_game["status"]), (&json!(2), &reopened), "{waiting_game}");
    assert_eq!(waiting_game["seats"][2], json!({"seat": 2, "name": null}), "Robo left seat 2: {waiting_game}");
    page.screenshot("other-origin-seats").await;
    page.close().await;
    t.finish();
}
