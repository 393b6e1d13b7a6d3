//! Clocks, end to end: games created with time controls over REST and
//! gRPC, a per-move limit running out (a greedy server bot makes the move
//! and the seat stays its player's), a bank running out (the seat loses),
//! a move after its deadline never stored as the seat's own, a deadline
//! that falls while the server is stopped fired after the restart, and bad
//! time controls creating nothing. Every wait is bounded; every finished
//! game's export verifies (the clocks are a fold of the records' times).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ludo_blackbox::{Answer, Rest, TestServer, authed};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tonic_types::StatusExt;

/// How long any one wait of these tests may last before it fails.
const PATIENCE: Duration = Duration::from_secs(20);
/// How often a wait looks again (short: a move must land within its second).
const POLL: Duration = Duration::from_millis(20);

/// Milliseconds since the Unix epoch, now, by the clock the server reads too.
fn now_ms() -> u64 {
    u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_millis()).expect("ms fit")
}

/// Milliseconds since the epoch of a UTC RFC 3339 time as the server writes
/// them (`2025-01-02T03:04:05.678Z`; fraction optional).
fn ms(at: &str) -> u64 {
    let bad = || -> ! { panic!("`{at}` is not an RFC 3339 UTC time") };
    let Some((date, time)) = at.strip_suffix('Z').and_then(|t| t.split_once('T')) else { bad() };
    let numbers = |text: &str, sep: char| -> Vec<i64> { text.split(sep).map(|p| p.parse().unwrap_or_else(|_| bad())).collect() };
    let [year, month, day] = numbers(date, '-')[..] else { bad() };
    let (hms, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let [hour, minute, second] = numbers(hms, ':')[..] else { bad() };
    let millis: i64 = format!("{fraction:0<3}")[..3].parse().unwrap_or_else(|_| bad());
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    u64::try_from(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis).unwrap_or_else(|_| bad())
}

fn version(state: &Value) -> u64 {
    state["version"].as_u64().expect("a version")
}

fn finished(state: &Value) -> bool {
    state["status"]["state"] == "finished"
}

fn to_move(state: &Value, seat: u64) -> bool {
    state["status"]["state"] == "in_progress" && state["status"]["to_move"] == json!([seat])
}

/// A seat's clock as the status shows it.
fn seat_clock(state: &Value, seat: usize) -> &Value {
    let clock = &state["status"]["clock"]["seats"][seat];
    assert_eq!(clock["seat"], seat, "the status's clocks are in seat order: {}", state["status"]);
    clock
}

/// When a seat's time runs out (ms), while its clock runs.
fn deadline_of(state: &Value, seat: usize) -> Option<u64> {
    seat_clock(state, seat).get("deadline").map(|d| ms(d.as_str().expect("a deadline is RFC 3339 text")))
}

/// What is left of a seat's bank (ms), in a game with a bank.
fn bank_of(state: &Value, seat: usize) -> Option<u64> {
    seat_clock(state, seat).get("bank_ms").map(|b| b.as_u64().expect("a bank is a count of ms"))
}

/// Asserts `answer` is the problem `status` / `code`.
fn problem(answer: &Answer, status: u16, code: &str) {
    assert_eq!(answer.status, status, "{answer:?}");
    assert_eq!(answer.body["code"], code, "{answer:?}");
}

/// Creates a two-player Cardinal game (seat 0 first) with `clock`; the created answer.
async fn create_clocked(rest: &Rest, clock: Value) -> Value {
    let body = json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}, "clock": clock});
    let answer = rest.post("/v1/games", None, &body).await;
    assert_eq!(answer.status, 201, "create with {clock}: {answer:?}");
    answer.body
}

/// Polls the game (as a spectator) until `done` holds of its state; the state.
async fn wait_for(rest: &Rest, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    rest.wait_for(id, what, PATIENCE, done).await
}

/// Polls the game's log until `done` holds of it; the log.
async fn wait_for_events(rest: &Rest, id: &str, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let events = rest.events(id, None).await;
        if done(&events) {
            return events;
        }
        assert!(Instant::now() < deadline, "game {id}: the log still does not show {what} after {PATIENCE:?}: {events:#?}");
        tokio::time::sleep(POLL).await;
    }
}

/// Record `seq` of the game's log.
async fn record(rest: &Rest, id: &str, seq: u64) -> Value {
    let page = rest.get(&format!("/v1/games/{id}/events?from={seq}&limit=1"), None).await;
    assert_eq!(page.status, 200, "{page:?}");
    let record = page.body["events"][0].clone();
    assert_eq!(record["seq"], seq, "{page:?}");
    record
}

/// The level of the server bot that made a move, if a bot made it.
fn bot_level(event: &Value) -> Option<&str> {
    let mark = event.get("bot")?;
    Some(mark["level"].as_str().expect("a bot mark names its level"))
}

/// Asserts `event` is the timeout of `seat`, forfeit or not.
fn assert_timeout(event: &Value, seat: u64, forfeit: bool) {
    assert_eq!(event["type"], "timeout", "{event}");
    assert_eq!(event["seat"], seat, "{event}");
    assert_eq!(event["forfeit"], forfeit, "{event}");
    assert!(event.get("move").is_none() && event.get("bot").is_none(), "a timeout is no move: {event}");
}

/// `token`'s seat, to move in `state`, plays its first legal move at once
/// (expecting the state's version); the answer.
async fn move_now(rest: &Rest, id: &str, token: &str, state: &Value) -> Answer {
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await;
    assert_eq!(legal.status, 200, "{legal:?}");
    let mv = legal.body["moves"][0].clone();
    assert!(mv.is_object(), "the seat to move has a legal move: {legal:?}");
    rest.post(&format!("/v1/games/{id}/moves"), Some(token), &json!({"move": mv, "expected_version": state["version"]})).await
}

/// The game's export verifies: chain intact, seed matching, every record
/// (every timeout and every move against its seat's clock) re-played.
async fn export_verifies(rest: &Rest, id: &str) {
    let (status, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert_eq!(status, 200);
    let report = rest.post_bytes("/v1/verify", export).await;
    assert_eq!(report.status, 200, "{report:?}");
    assert_eq!(report.body["valid"], true, "game {id}: {}", report.body);
    assert_eq!(report.body["replayed"], true, "game {id}: {}", report.body);
    assert_eq!(report.body["seed"], "matches", "game {id}: {}", report.body);
}

/// `ludo_timeouts_total{outcome="written"}` (0 before any).
async fn timeouts_written(rest: &Rest) -> u64 {
    let (status, bytes) = rest.get_bytes("/metrics", None).await;
    assert_eq!(status, 200);
    let text = String::from_utf8(bytes).expect("metrics are text");
    text.lines()
        .find_map(|l| l.strip_prefix("ludo_timeouts_total{outcome=\"written\"} "))
        .map_or(0, |v| v.trim().parse().unwrap_or_else(|_| panic!("a counter: {v}")))
}

#[test]
fn record_times_read_to_the_millisecond() {
    assert_eq!(ms("1970-01-01T00:00:01.250Z"), 1_250);
    assert_eq!(ms("2000-03-01T00:00:00Z"), 951_868_800_000);
    assert_eq!(ms("2024-12-31T23:59:59.999Z"), 1_735_689_599_999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_limit_running_out_has_a_greedy_bot_move_and_the_seat_stays_its_players() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create_clocked(&rest, json!({"move_ms": 1000})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();

    // The control, every member written; Ann's clock runs from record 0.
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    let control = json!({"move_ms": 1000, "bank_ms": null, "increment_ms": 0, "on_timeout": "bot"});
    assert_eq!(state["clock"], control, "{state}");
    let created = record(&rest, id, 0).await;
    assert_eq!(created["game"]["clock"], control, "record 0 holds the control: {created}");
    let first_deadline = ms(created["at"].as_str().unwrap()) + 1000;
    assert!(ms(created["at"].as_str().unwrap()).abs_diff(now_ms()) < 60_000, "record times are now: {created}");
    assert_eq!(deadline_of(&state, 0), Some(first_deadline), "{}", state["status"]);
    assert_eq!(seat_clock(&state, 1), &json!({"seat": 1}), "Bob's clock is stopped, and there is no bank");
    assert_eq!(bank_of(&state, 0), None);

    // Nobody moves: the timeout, then the greedy bot's move for Ann.
    let events = wait_for_events(&rest, id, "a timeout and the bot's move", |e| e.len() >= 3).await;
    assert_timeout(&events[1], 0, false);
    assert_eq!(events[1]["handover"]["bot"]["level"], "greedy", "the timeout names the bot that moves: {}", events[1]);
    let fired = ms(events[1]["at"].as_str().unwrap());
    assert!(fired >= first_deadline, "a timeout before the deadline {first_deadline}: {}", events[1]);
    assert!(fired < first_deadline + 5000, "the timeout came {} ms late", fired - first_deadline);
    assert_eq!((&events[2]["type"], &events[2]["seat"]), (&json!("move"), &json!(0)), "{}", events[2]);
    assert_eq!(bot_level(&events[2]), Some("greedy"), "the move after a timeout is the bot's: {}", events[2]);
    assert!(timeouts_written(&rest).await >= 1, "the metric counts the timeout written");
    let seats = rest.get(&format!("/v1/games/{id}"), None).await.body["seats"].clone();
    assert!(seats[0].get("bot").is_none(), "the seat stays Ann's: {seats}");

    // On Ann's next turn (a Cardinal turn is two moves: maybe the very next),
    // her clock runs afresh and her own token moves in time.
    let mut late = 0;
    let (accepted, deadline) = loop {
        let state = wait_for(&rest, id, "at Ann's running clock", |s| to_move(s, 0) && deadline_of(s, 0).is_some()).await;
        let deadline = deadline_of(&state, 0).unwrap();
        let started = record(&rest, id, version(&state)).await;
        assert_eq!(deadline, ms(started["at"].as_str().unwrap()) + 1000, "the limit counts from the record that started the clock");
        assert!(deadline > first_deadline, "a new deadline: {}", state["status"]);
        let answer = move_now(&rest, id, ann, &state).await;
        if answer.status == 200 {
            break (answer.body, deadline);
        }
        // Only a move too slow (a loaded machine) may be refused, and only for time.
        assert!(now_ms() > deadline, "Ann's move in time was refused: {answer:?}");
        assert!(["time_up", "version_conflict"].contains(&answer.body["code"].as_str().unwrap_or("")), "{answer:?}");
        late += 1;
        assert!(late < 5, "Ann never managed a move within a second");
    };
    let hers = record(&rest, id, accepted["version"].as_u64().expect("the accepted move's version")).await;
    assert_eq!((&hers["type"], &hers["seat"]), (&json!("move"), &json!(0)), "{hers}");
    assert!(hers.get("bot").is_none(), "Ann's own move carries no bot mark: {hers}");
    assert!(ms(hers["at"].as_str().unwrap()) <= deadline, "a move stored after its deadline: {hers}");

    // Ann gives up, so the log can be re-played with its seed.
    let resigned = rest.post(&format!("/v1/games/{id}/resign"), Some(ann), &json!({})).await;
    assert_eq!(resigned.status, 200, "{resigned:?}");
    let over = wait_for(&rest, id, "finished", finished).await;
    assert_eq!(over["status"]["forfeits"], json!([{"seat": 0, "reason": "resigned"}]), "{}", over["status"]);
    assert!(over["status"].get("clock").is_none(), "no clock runs in a finished game: {}", over["status"]);
    let events = rest.events(id, None).await;
    assert!(events.iter().any(|e| e["type"] == "timeout"), "the timeout is in the log");
    export_verifies(&rest, id).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bank_running_out_makes_the_seat_lose_when_the_clock_says_lose() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create_clocked(&rest, json!({"bank_ms": 1500, "increment_ms": 0, "on_timeout": "lose"})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();
    let bob = game["seats"][1]["token"].as_str().unwrap();

    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["clock"], json!({"move_ms": null, "bank_ms": 1500, "increment_ms": 0, "on_timeout": "lose"}), "{state}");
    let mut last_at = ms(record(&rest, id, 0).await["at"].as_str().unwrap());
    assert_eq!(deadline_of(&state, 0), Some(last_at + 1500), "{}", state["status"]);
    assert_eq!((bank_of(&state, 0), bank_of(&state, 1)), (Some(1500), Some(1500)));
    assert_eq!(deadline_of(&state, 1), None, "Bob's clock is stopped: {}", state["status"]);

    // Ann plays her turn at once: each move is charged to her bank.
    let mut bank = 1500;
    let mut state = state;
    let mut moves = 0;
    while to_move(&state, 0) {
        let answer = move_now(&rest, id, ann, &state).await;
        assert_eq!(answer.status, 200, "Ann's quick move: {answer:?}");
        let at = ms(record(&rest, id, answer.body["version"].as_u64().unwrap()).await["at"].as_str().unwrap());
        bank -= at - last_at;
        last_at = at;
        state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        assert_eq!(version(&state), answer.body["version"].as_u64().unwrap(), "nothing but Ann's moves yet");
        assert_eq!(bank_of(&state, 0), Some(bank), "Ann's bank is charged for the move: {}", state["status"]);
        moves += 1;
        assert!(moves <= 4, "Ann's turn does not end");
    }
    assert!(bank < 1500, "the bank went down: {}", state["status"]);
    assert!(to_move(&state, 1), "{}", state["status"]);
    assert_eq!(deadline_of(&state, 0), None, "Ann's clock stopped with her turn: {}", state["status"]);
    let bob_deadline = last_at + 1500;
    assert_eq!(deadline_of(&state, 1), Some(bob_deadline), "Bob's whole bank from his turn's start: {}", state["status"]);
    assert_eq!(bank_of(&state, 1), Some(1500));

    // Bob does nothing: he loses on time.
    let over = wait_for(&rest, id, "finished", finished).await;
    assert_eq!(over["status"]["result"], json!({"scores": [0, 0], "winners": [0]}), "{}", over["status"]);
    assert_eq!(over["status"]["forfeits"], json!([{"seat": 1, "reason": "timed_out"}]), "{}", over["status"]);
    let events = rest.events(id, None).await;
    assert_eq!(events.len() as u64, version(&over) + 1);
    let last = events.last().unwrap();
    assert_timeout(last, 1, true);
    assert!(last.get("handover").is_none(), "no bot plays on in a game of two sides: {last}");
    assert!(ms(last["at"].as_str().unwrap()) >= bob_deadline, "a timeout before the deadline {bob_deadline}: {last}");
    assert!(events.iter().all(|e| e["seat"] != 1 || e["type"] == "timeout"), "Bob never moved: {events:#?}");
    assert_eq!(events.iter().filter(|e| e["type"] == "timeout").count(), 1);
    let after = json!({"move": {"type": "keep_cardinal"}, "expected_version": version(&over)});
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(bob), &after).await, 409, "game_finished");
    assert_eq!(version(&rest.get(&format!("/v1/games/{id}"), None).await.body), version(&over));
    export_verifies(&rest, id).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bank_is_charged_per_move_grows_by_the_increment_and_binds_before_a_longer_move_limit() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create_clocked(&rest, json!({"move_ms": 60_000, "bank_ms": 5000, "increment_ms": 1000})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["clock"], json!({"move_ms": 60_000, "bank_ms": 5000, "increment_ms": 1000, "on_timeout": "bot"}));
    let created = ms(record(&rest, id, 0).await["at"].as_str().unwrap());
    assert_eq!(deadline_of(&state, 0), Some(created + 5000), "the bank binds before the minute per move: {}", state["status"]);

    let answer = move_now(&rest, id, ann, &state).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let at = ms(record(&rest, id, 1).await["at"].as_str().unwrap());
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(version(&state), 1);
    let bank = 5000 - (at - created) + 1000;
    assert_eq!(bank_of(&state, 0), Some(bank), "charged for the move, plus the increment: {}", state["status"]);
    assert_eq!(bank_of(&state, 1), Some(5000), "Bob's bank is untouched: {}", state["status"]);
    if to_move(&state, 0) {
        assert_eq!(deadline_of(&state, 0), Some(at + bank), "{}", state["status"]);
    } else {
        assert_eq!(deadline_of(&state, 1), Some(at + 5000), "{}", state["status"]);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_losing_on_time_at_a_table_of_three_is_played_on_by_a_bot() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let body = json!({
        "kind": "cardinal",
        "players": ["Ann", "Bob", "Cid"],
        "options": {"first_seat": 0},
        "clock": {"move_ms": 1000, "on_timeout": "lose"},
    });
    let answer = rest.post("/v1/games", None, &body).await;
    assert_eq!(answer.status, 201, "{answer:?}");
    let id = answer.body["id"].as_str().unwrap();
    let ann = answer.body["seats"][0]["token"].as_str().unwrap();
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    let deadline = deadline_of(&state, 0).expect("Ann's clock runs");

    let events = wait_for_events(&rest, id, "Ann's timeout and her bot's move", |e| e.len() >= 3).await;
    assert_timeout(&events[1], 0, true);
    let heir = events[1]["handover"]["bot"]["level"].as_str().expect("the timeout names the bot that plays on");
    assert!(ms(events[1]["at"].as_str().unwrap()) >= deadline, "{}", events[1]);
    assert_eq!((&events[2]["type"], &events[2]["seat"]), (&json!("move"), &json!(0)), "{}", events[2]);
    assert_eq!(bot_level(&events[2]), Some(heir), "the heir plays Ann's seat: {}", events[2]);
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert!(!finished(&state), "a game of three goes on: {}", state["status"]);
    assert_eq!(state["seats"][0]["bot"]["level"], heir, "{}", state["seats"]);
    // Ann's clock no longer runs: a bot plays her seat.
    assert_eq!(deadline_of(&state, 0), None, "{}", state["status"]);
    // The bot took the seat over: her token no longer opens it, to move or
    // to read (unlike a resignation, her own act, which leaves her the view).
    let mv = json!({"move": {"type": "keep_cardinal"}});
    let refused = rest.post(&format!("/v1/games/{id}/moves"), Some(ann), &mv).await;
    problem(&refused, 401, "unauthorized");
    problem(&rest.get(&format!("/v1/games/{id}"), Some(ann)).await, 401, "unauthorized");
    let events = rest.events(id, None).await;
    assert!(events.iter().all(|e| e["type"] != "move" || e["seat"] != 0 || bot_level(e).is_some()), "{events:#?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_after_the_deadline_is_never_stored_as_the_seats_own() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create_clocked(&rest, json!({"move_ms": 1000})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    let deadline = deadline_of(&state, 0).expect("Ann's clock runs");
    assert_eq!(version(&state), 0);

    // Ann's move, ready before her deadline, sent the moment it has passed.
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(ann)).await.body;
    let mv = legal["moves"][0].clone();
    assert!(mv.is_object(), "{legal}");
    while now_ms() <= deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let late = rest.post(&format!("/v1/games/{id}/moves"), Some(ann), &json!({"move": mv, "expected_version": 0})).await;
    // Refused for its time, or because the timeout record landed first.
    assert_eq!(late.status, 409, "a move after the deadline was not refused: {late:?}");
    assert!(["time_up", "version_conflict"].contains(&late.body["code"].as_str().unwrap_or("")), "{late:?}");

    let events = wait_for_events(&rest, id, "the timeout and the bot's move", |e| e.len() >= 3).await;
    assert_timeout(&events[1], 0, false);
    assert!(ms(events[1]["at"].as_str().unwrap()) >= deadline, "{}", events[1]);
    for event in events.iter().filter(|e| e["type"] == "move" && e["seat"] == 0) {
        assert!(ms(event["at"].as_str().unwrap()) > deadline, "a move of Ann's before the deadline? {event}");
        assert_eq!(bot_level(event), Some("greedy"), "every move of Ann's seat after her deadline is the bot's: {event}");
    }
    assert_eq!(bot_level(&events[2]), Some("greedy"), "{}", events[2]);
    assert_eq!(events[2]["seat"], 0, "{}", events[2]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_passing_while_the_server_is_stopped_fires_right_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create_clocked(&rest, json!({"move_ms": 2000})).await;
    let id = game["id"].as_str().unwrap().to_string();
    server.stop().await;
    let stopped = now_ms();

    // Ann's deadline as the created answer shows it: record 0's time + 2 s.
    let deadline = ms(game["status"]["clock"]["seats"][0]["deadline"].as_str().expect("Ann's deadline in the answer"));
    let created_at = deadline - 2000;
    assert!(stopped < deadline, "the server took until past the deadline to stop: the test proves nothing");
    tokio::time::sleep(Duration::from_millis((created_at + 3000).saturating_sub(now_ms()))).await;

    let restarted = now_ms();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    // Without anyone asking for the game: the start's sweep fires the deadline.
    let waited = Instant::now() + PATIENCE;
    loop {
        let listed = rest.get("/v1/games", None).await;
        assert_eq!(listed.status, 200, "{listed:?}");
        let summary = listed.body["games"].as_array().unwrap().iter().find(|g| g["id"] == id.as_str()).cloned().expect("listed");
        if version(&summary) >= 2 {
            break;
        }
        assert!(Instant::now() < waited, "the deadline did not fire after the restart: {summary}");
        tokio::time::sleep(POLL).await;
    }
    assert!(timeouts_written(&rest).await >= 1, "the new server wrote the timeout");

    let events = rest.events(&id, None).await;
    assert_eq!(ms(events[0]["at"].as_str().unwrap()), created_at, "the deadline counts from record 0: {}", events[0]["at"]);
    assert_timeout(&events[1], 0, false);
    let fired = ms(events[1]["at"].as_str().unwrap());
    assert!(fired >= deadline, "a timeout before the deadline {deadline}: {}", events[1]);
    assert!(fired >= restarted, "the timeout was written before the restart (by the stopped server?): {}", events[1]);
    assert!(fired < restarted + 5000, "the timeout came {} ms after the restart", fired - restarted);
    assert_eq!((&events[2]["type"], &events[2]["seat"]), (&json!("move"), &json!(0)), "{}", events[2]);
    assert_eq!(bot_level(&events[2]), Some("greedy"), "{}", events[2]);
    // The clocks run on: whoever is to move has a deadline from the last record.
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    if !finished(&state) {
        let seat = state["status"]["to_move"][0].as_u64().expect("a seat to move") as usize;
        let last = record(&rest, &id, version(&state)).await;
        let expected = if last["type"] == "timeout" { None } else { Some(ms(last["at"].as_str().unwrap()) + 2000) };
        assert_eq!(deadline_of(&state, seat), expected, "after {last}: {}", state["status"]);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_time_controls_are_refused_naming_the_field_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let count = |listed: Answer| {
        assert_eq!(listed.status, 200, "{listed:?}");
        listed.body["games"].as_array().expect("games").len()
    };
    rest.create("cardinal", &["Ann", "Bob"], json!({})).await;
    assert_eq!(count(rest.get("/v1/games?limit=100", None).await), 1);

    let bad = [
        (json!({"move_ms": -5}), "clock.move_ms"),
        (json!({"move_ms": 10}), "clock.move_ms"),
        (json!({"move_ms": 999}), "clock.move_ms"),
        (json!({"bank_ms": 2_592_000_001_u64}), "clock.bank_ms"),
        (json!({"move_ms": 5000, "bank_ms": 0}), "clock.bank_ms"),
        (json!({}), "clock"),
        (json!({"on_timeout": "lose"}), "clock"),
        (json!({"move_ms": 5000, "increment_ms": 1000}), "clock.increment_ms"),
        (json!({"bank_ms": 5000, "increment_ms": 86_400_001}), "clock.increment_ms"),
        (json!({"move_ms": 5000, "on_timeout": "explode"}), "clock.on_timeout"),
        (json!("fast"), "clock"),
    ];
    for (clock, field) in bad {
        let body = json!({"kind": "cardinal", "players": ["Ann", "Bob"], "clock": clock});
        let answer = rest.post("/v1/games", None, &body).await;
        problem(&answer, 400, "invalid_input");
        assert_eq!(answer.body["field"], field, "clock {clock}: {answer:?}");
    }
    // An unknown member is refused too, naming the clock.
    let answer = rest
        .post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", "Bob"], "clock": {"move_ms": 5000, "moves": 40}}))
        .await;
    problem(&answer, 400, "invalid_input");
    assert!(answer.body["field"].as_str().is_some_and(|f| f.starts_with("clock")), "{answer:?}");
    assert_eq!(count(rest.get("/v1/games?limit=100", None).await), 1, "a refused request created a game");

    // The bounds themselves are allowed.
    let bounds = json!({"move_ms": 1000, "bank_ms": 2_592_000_000_u64, "increment_ms": 86_400_000, "on_timeout": "lose"});
    let game = create_clocked(&rest, bounds.clone()).await;
    let state = rest.get(&format!("/v1/games/{}", game["id"].as_str().unwrap()), None).await.body;
    assert_eq!(state["clock"], bounds);
    assert_eq!(count(rest.get("/v1/games?limit=100", None).await), 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_limit_over_grpc_ends_a_two_player_game_when_the_clock_says_lose() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let request = |clock: pb::TimeControl| pb::CreateGameRequest {
        kind: "cardinal".into(),
        players: vec!["Ann".into(), "Bob".into()],
        clock: Some(clock),
        ..Default::default()
    };
    let lose = pb::OnTimeout::Lose as i32;

    // Refusals name the field.
    for (clock, field) in [
        (pb::TimeControl { move_ms: Some(10), on_timeout: lose, ..Default::default() }, "clock.move_ms"),
        (pb::TimeControl { on_timeout: lose, ..Default::default() }, "clock"),
        (pb::TimeControl { move_ms: Some(5000), on_timeout: 7, ..Default::default() }, "clock.on_timeout"),
    ] {
        let status = grpc.create_game(request(clock)).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{clock:?}: {status:?}");
        assert_eq!(status.get_details_error_info().expect("an ErrorInfo").reason, "invalid_input");
        assert_eq!(status.get_details_bad_request().expect("a BadRequest").field_violations[0].field, field, "{status:?}");
    }

    let control = pb::TimeControl { move_ms: Some(1000), bank_ms: None, increment_ms: 0, on_timeout: lose };
    let created = grpc.create_game(request(control)).await.unwrap().into_inner();
    let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
    assert_eq!(state.clock, Some(control), "GameState.clock");
    let Some(pb::status::State::InProgress(progress)) = state.status.and_then(|s| s.state) else { panic!("not in progress") };
    assert_eq!(progress.to_move.len(), 1);
    let loser = progress.to_move[0];
    let clock = progress.clock.expect("InProgress.clock");
    assert_eq!(clock.seats.len(), 2);
    for seat in &clock.seats {
        assert_eq!(seat.bank_ms, None, "no bank: {seat:?}");
        assert_eq!(seat.deadline.is_some(), seat.seat == loser, "only the seat to move has a deadline: {clock:?}");
    }
    let deadline = ms(clock.seats[loser as usize].deadline.as_deref().unwrap());
    // The seat to move may look at its legal moves meanwhile: reading does not stop its clock.
    let legal =
        grpc.list_legal_moves(authed(pb::ListLegalMovesRequest { id: created.id.clone() }, &created.seats[loser as usize].token)).await;
    assert!(!legal.unwrap().into_inner().moves.is_empty());

    let waited = Instant::now() + PATIENCE;
    let finished = loop {
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
        if let Some(pb::status::State::Finished(finished)) = state.status.and_then(|s| s.state) {
            break finished;
        }
        assert!(Instant::now() < waited, "not finished after {PATIENCE:?}");
        tokio::time::sleep(POLL).await;
    };
    let winner = 1 - loser;
    assert_eq!(finished.winners, vec![winner]);
    assert_eq!(finished.scores, vec![0, 0]);
    assert_eq!(finished.forfeits, vec![pb::Forfeit { seat: loser, reason: pb::ForfeitReason::TimedOut as i32 }]);

    let page = grpc.list_events(pb::ListEventsRequest { id: created.id.clone(), from: 0, limit: 100 }).await.unwrap().into_inner();
    assert_eq!(page.events.len(), 2, "record 0 and the timeout: {page:?}");
    let Some(pb::event::Record::GameCreated(record0)) = &page.events[0].record else { panic!("{:?}", page.events[0]) };
    assert_eq!(record0.clock, Some(control), "record 0 holds the control");
    let Some(pb::event::Record::Timeout(timeout)) = &page.events[1].record else { panic!("{:?}", page.events[1]) };
    assert_eq!(*timeout, pb::TimeoutRecord { seat: loser, forfeit: true, bot: None });
    assert!(ms(&page.events[1].at) >= deadline, "{:?}", page.events[1]);

    let export = grpc.export_game(pb::ExportGameRequest { id: created.id.clone() }).await.unwrap().into_inner().export;
    let report = grpc.verify_game(pb::VerifyGameRequest { export }).await.unwrap().into_inner();
    assert!(report.valid, "{report:?}");
    drop(grpc);
    server.stop().await;
}

/// A game whose stored summary is gone (the store predates summaries)
/// still has its deadline fired after a restart: the start's sweep finds
/// it in the `games` projection, folded from the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_of_a_game_without_a_summary_fires_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create_clocked(&rest, json!({"move_ms": 1500})).await;
    let id = game["id"].as_str().unwrap().to_string();
    server.stop().await;
    ludo_blackbox::tamper::forget_summaries(dir.path(), &[id.as_str()]);
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let waited = Instant::now() + PATIENCE;
    // Only the metrics are read while waiting: any read of the game would
    // load it (and set its timer) itself; here nothing but the sweep may.
    while timeouts_written(&rest).await == 0 {
        assert!(Instant::now() < waited, "the deadline of a game without a summary did not fire");
        tokio::time::sleep(POLL).await;
    }
    let events = rest.events(&id, None).await;
    assert_timeout(&events[1], 0, false);
    server.stop().await;
}
