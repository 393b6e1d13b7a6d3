//! Server bot seats, end to end: games the server's bots play by
//! themselves, a person against a bot, bot turns across a restart, and a
//! seat handed to a bot and taken back (autopilot), over REST and gRPC,
//! with every bot move marked in the log and every log verifying.

use std::time::{Duration, Instant};

use ludo_blackbox::{Answer, Rest, TestServer, authed, chooser};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tonic_types::StatusExt;

/// How long any one wait of these tests may last before it fails.
const PATIENCE: Duration = Duration::from_secs(60);
/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(50);

/// A bot seat's JSON as a create request names it.
fn bot(name: &str, level: &str, think_ms: u32) -> Value {
    json!({"name": name, "bot": {"level": level, "think_ms": think_ms}})
}

/// Creates a game from raw player entries; the created answer.
async fn create(rest: &Rest, kind: &str, players: &[Value], options: Value) -> Value {
    let answer = rest.post("/v1/games", None, &json!({"kind": kind, "players": players, "options": options})).await;
    assert_eq!(answer.status, 201, "create: {answer:?}");
    // A token for each person's seat, none for a bot's: no token opens a
    // bot's seat, or its creator (who may play too) would read its hand.
    let seats = answer.body["seats"].as_array().expect("seats");
    let people: Vec<usize> = (0..players.len()).filter(|&seat| players[seat].get("bot").is_none()).collect();
    assert_eq!(seats.iter().map(|entry| entry["seat"].as_u64().unwrap() as usize).collect::<Vec<_>>(), people, "{seats:?}");
    for entry in seats {
        assert!(entry["token"].as_str().is_some_and(|t| !t.is_empty()), "every person's seat gets a token: {entry}");
    }
    answer.body
}

/// Polls the game (as a spectator) until `done` holds of its state; the state.
async fn wait_for(rest: &Rest, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    rest.wait_for(id, what, PATIENCE, done).await
}

fn finished(state: &Value) -> bool {
    state["status"]["state"] == "finished"
}

fn version(state: &Value) -> u64 {
    state["version"].as_u64().expect("a version")
}

/// Asserts `answer` is the problem `status` / `code`.
fn problem(answer: &Answer, status: u16, code: &str) {
    assert_eq!(answer.status, status, "{answer:?}");
    assert_eq!(answer.body["code"], code, "{answer:?}");
}

/// The game's export verifies: chain intact, seed matching, every record re-played.
async fn export_verifies(rest: &Rest, id: &str) {
    let (status, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert_eq!(status, 200);
    let report = rest.post_bytes("/v1/verify", export).await;
    assert_eq!(report.status, 200, "{report:?}");
    assert_eq!(report.body["valid"], true, "game {id}: {}", report.body);
    assert_eq!(report.body["replayed"], true, "game {id}: {}", report.body);
    assert_eq!(report.body["seed"], "matches", "game {id}: {}", report.body);
}

/// The moves of a log (records after 0 that are moves).
fn moves(events: &[Value]) -> impl Iterator<Item = &Value> {
    events.iter().filter(|e| e["type"] == "move")
}

/// The bot that made `event`'s move, checked to be well formed: its level.
fn bot_level(event: &Value) -> Option<&str> {
    let mark = event.get("bot")?;
    assert!(mark["version"].as_str().is_some_and(|v| !v.is_empty()), "a bot mark names its version: {event}");
    Some(mark["level"].as_str().expect("a bot mark names its level"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn games_of_bots_alone_play_themselves_to_the_end_for_each_kind() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let kinds = rest.get("/v1/kinds", None).await.body;
    let min_players = |kind: &str| {
        let info = kinds["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == kind).unwrap_or_else(|| panic!("{kind} is hosted"));
        info["min_players"].as_u64().expect("min_players") as usize
    };
    // The three games at once, each at its kind's smallest table.
    let mut games = Vec::new();
    for kind in ["cardinal", "kardinal", "battle13"] {
        let mut levels = vec!["random"; min_players(kind)];
        if kind == "cardinal" {
            levels[1] = "strong";
        }
        let players: Vec<Value> = levels.iter().enumerate().map(|(seat, level)| bot(&format!("Bot {seat}"), level, 0)).collect();
        let game = create(&rest, kind, &players, json!(null)).await;
        games.push((kind, levels, game));
    }
    for (kind, levels, game) in &games {
        let id = game["id"].as_str().unwrap();
        let state = wait_for(&rest, id, "finished", finished).await;
        for (seat, level) in levels.iter().enumerate() {
            assert_eq!(state["seats"][seat]["bot"], json!({"level": level, "think_ms": 0}), "{kind}: seat {seat}");
        }
        let events = rest.events(id, None).await;
        assert_eq!(events.len() as u64, version(&state) + 1, "{kind}: one record per version");
        assert_eq!(events[0]["type"], "game_created");
        let bots: Vec<Value> = levels.iter().map(|level| json!({"level": level, "think_ms": 0})).collect();
        assert_eq!(events[0]["game"]["bots"], json!(bots), "{kind}: record 0 names the bot seats");
        assert!(events.len() > 2, "{kind}: a whole game is more than one move");
        for event in &events[1..] {
            assert_eq!(event["type"], "move", "{kind}: only bots played: {event}");
            let seat = event["seat"].as_u64().unwrap() as usize;
            assert_eq!(bot_level(event), Some(levels[seat]), "{kind}: seat {seat}'s move is its bot's: {event}");
        }
        if *kind == "cardinal" {
            assert!(moves(&events).any(|e| bot_level(e) == Some("strong")), "the strong bot moved");
        }
        export_verifies(&rest, id).await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_person_plays_a_whole_game_against_a_greedy_bot() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", &[json!("Ann"), bot("Greedy", "greedy", 0)], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let token = game["seats"][0]["token"].as_str().unwrap();
    assert_eq!(game["status"]["to_move"], json!([0]));
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert!(state["seats"][0].get("bot").is_none(), "Ann's seat is hers: {state}");
    assert_eq!(state["seats"][1]["bot"], json!({"level": "greedy", "think_ms": 0}));

    let mut choose = chooser(21);
    let mut mine = 0;
    loop {
        // Ann's turn, or the end: the bot must answer each of her moves.
        let state = wait_for(&rest, id, "at Ann's turn or over", |s| finished(s) || s["status"]["to_move"] == json!([0])).await;
        if finished(&state) {
            break;
        }
        let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
        assert_eq!(legal["version"], state["version"]);
        let options = legal["moves"].as_array().expect("moves");
        let mv = &options[choose(options)];
        let answer =
            rest.post(&format!("/v1/games/{id}/moves"), Some(token), &json!({"move": mv, "expected_version": state["version"]})).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        mine += 1;
        assert!(mine < 400, "the game does not end");
    }

    let events = rest.events(id, None).await;
    let (mut hers, mut its) = (0, 0);
    for event in moves(&events) {
        match event["seat"].as_u64() {
            Some(0) => {
                assert!(event.get("bot").is_none(), "a person's move carries no bot mark: {event}");
                hers += 1;
            }
            Some(1) => {
                assert_eq!(bot_level(event), Some("greedy"), "{event}");
                its += 1;
            }
            other => panic!("a move by seat {other:?}"),
        }
    }
    assert_eq!(hers, mine, "every move of Ann's is hers");
    assert!(its > 0, "the bot played");
    assert_eq!(hers + its + 1, events.len(), "nothing but moves after record 0");
    export_verifies(&rest, id).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_battle13_match_of_bots_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let random = pb::BotLevel::Random as i32;
    let greedy = pb::BotLevel::Greedy as i32;
    let levels = [random, random, greedy, random];
    let bots = levels.iter().enumerate().map(|(seat, &level)| (seat as u32, pb::BotRequest { level, think_ms: Some(0) })).collect();
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "battle13".into(),
            players: ["North", "East", "South", "West"].iter().map(|s| s.to_string()).collect(),
            options: None,
            bots,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(created.seats.is_empty(), "no token opens a bot's seat: {:?}", created.seats);

    let deadline = Instant::now() + PATIENCE;
    let state = loop {
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
        for (seat, info) in state.seats.iter().enumerate() {
            assert_eq!(info.bot, Some(pb::BotSeat { level: levels[seat], think_ms: 0 }), "seat {seat}");
        }
        if matches!(state.status.as_ref().and_then(|s| s.state.as_ref()), Some(pb::status::State::Finished(_))) {
            break state;
        }
        assert!(Instant::now() < deadline, "not finished after {PATIENCE:?}: {:?}", state.status);
        tokio::time::sleep(POLL).await;
    };

    let mut events = Vec::new();
    let mut from = 0;
    loop {
        let page = grpc.list_events(pb::ListEventsRequest { id: created.id.clone(), from, limit: 1000 }).await.unwrap().into_inner();
        events.extend(page.events);
        match page.next_from {
            Some(next) => from = next,
            None => break,
        }
    }
    assert_eq!(events.len() as u64, state.version + 1);
    let Some(pb::event::Record::GameCreated(created_record)) = &events[0].record else { panic!("record 0: {:?}", events[0]) };
    assert_eq!(created_record.bots.len(), 4);
    for (seat, &level) in levels.iter().enumerate() {
        assert_eq!(created_record.bots.get(&(seat as u32)), Some(&pb::BotSeat { level, think_ms: 0 }), "record 0, seat {seat}");
    }
    let mut by_greedy = 0;
    for event in &events[1..] {
        let Some(pb::event::Record::Move(mv)) = &event.record else { panic!("only moves after record 0: {event:?}") };
        let mark = mv.bot.as_ref().unwrap_or_else(|| panic!("record {}: a bot's move carries its mark", event.seq));
        assert_eq!(mark.level, levels[mv.seat as usize], "record {}", event.seq);
        assert!(!mark.version.is_empty());
        by_greedy += usize::from(mark.level == greedy);
    }
    assert!(by_greedy > 0, "the greedy seat moved");

    let export = grpc.export_game(pb::ExportGameRequest { id: created.id.clone() }).await.unwrap().into_inner().export;
    let report = grpc.verify_game(pb::VerifyGameRequest { export }).await.unwrap().into_inner();
    assert!(report.valid, "{report:?}");
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bots_play_on_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", &[bot("A", "random", 100), bot("B", "random", 100)], json!(null)).await;
    let id = game["id"].as_str().unwrap().to_string();
    let before = wait_for(&rest, &id, "at version 3", |s| version(s) >= 3).await;
    assert!(!finished(&before), "a game of bots is over after three moves: {before}");
    server.stop().await;

    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let restarted = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert!(version(&restarted) >= version(&before), "the restart lost moves: {restarted}");
    assert!(!finished(&restarted), "{restarted}");
    let after = wait_for(&rest, &id, "finished", finished).await;
    assert!(version(&after) > version(&restarted), "the bots moved after the restart");
    let events = rest.events(&id, None).await;
    assert!(events[1..].iter().all(|e| e["type"] == "move" && bot_level(e) == Some("random")), "every move is a bot's");
    export_verifies(&rest, &id).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bot_turn_pending_at_shutdown_is_played_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", &[bot("Slow", "random", 2000), json!("Ann")], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["version"], 0);
    assert_eq!(game["status"]["to_move"], json!([0]), "the bot's seat moves first");
    server.stop().await;

    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let restarted = rest.get(&format!("/v1/games/{id}"), None).await.body;
    // The bot waits 2 s from its turn: stopped at once, the first server did not move.
    assert_eq!(version(&restarted), 0, "the bot moved before the shutdown (a slow stop?): {restarted}");
    // The bot plays its whole turn (a turn may take several moves), then it is Ann's.
    let moved = wait_for(&rest, &id, "at Ann's turn", |s| s["status"]["to_move"] == json!([1])).await;
    assert!(version(&moved) >= 1, "{moved}");
    let events = rest.events(&id, None).await;
    assert_eq!(events.len() as u64, version(&moved) + 1);
    for event in &events[1..] {
        assert_eq!((&event["type"], &event["seat"]), (&json!("move"), &json!(0)), "{event}");
        assert_eq!(bot_level(event), Some("random"), "{event}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_seat_handed_to_a_bot_and_taken_back_over_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let ann = game["seats"][0]["token"].as_str().unwrap();
    let bob = game["seats"][1]["token"].as_str().unwrap();
    let autopilot = format!("/v1/games/{id}/autopilot");
    let random = json!({"bot": {"level": "random", "think_ms": 0}});

    // Refusals change nothing.
    let other = rest.create("cardinal", &["Cid", "Dee"], json!({})).await;
    problem(&rest.put(&autopilot, None, &random).await, 401, "unauthorized");
    problem(&rest.put(&autopilot, other["seats"][1]["token"].as_str(), &random).await, 401, "unauthorized");
    problem(&rest.delete(&autopilot, None).await, 401, "unauthorized");
    problem(&rest.put(&autopilot, Some(bob), &json!({"bot": {"level": "genius"}})).await, 400, "invalid_input");
    problem(&rest.put(&autopilot, Some(bob), &json!({"bot": {"level": "random", "think_ms": 20000}})).await, 400, "invalid_input");
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(version(&state), 0, "a refusal appended something");
    assert!(state["seats"][1].get("bot").is_none());

    // Bob hands his seat over.
    let answer = rest.put(&autopilot, Some(bob), &random).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body, json!({"version": 1, "seat": 1, "bot": {"level": "random", "think_ms": 0}}));
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(version(&state), 1);
    assert_eq!(state["seats"][1]["bot"], json!({"level": "random", "think_ms": 0}));
    assert!(state["seats"][0].get("bot").is_none());
    let events = rest.events(id, None).await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "seat_bot", "{last}");
    assert_eq!(last["seat"], 1);
    assert_eq!(last["handover"], json!({"bot": {"level": "random", "think_ms": 0}}));
    // Asking again for what holds appends nothing.
    let again = rest.put(&autopilot, Some(bob), &random).await;
    assert_eq!(again.status, 200, "{again:?}");
    assert_eq!(again.body["version"], 1);
    assert_eq!(rest.events(id, None).await.len(), 2);

    // Ann plays; the bot answers for Bob.
    let mut choose = chooser(5);
    let mut bob_by_bot = 0;
    while bob_by_bot < 3 {
        let state = wait_for(&rest, id, "at Ann's turn", |s| s["status"]["to_move"] == json!([0])).await;
        assert_eq!(rest.play(&game, 1, &mut choose).await, 1);
        // Until it is Ann's turn again, Bob's seat is the bot's to play.
        let next = wait_for(&rest, id, "at Ann's turn again", |s| finished(s) || s["status"]["to_move"] == json!([0])).await;
        assert!(!finished(&next), "the game ended before the hand-back: {next}");
        let events = rest.events(id, None).await;
        for event in &events[version(&state) as usize + 1..] {
            if event["seat"] == 1 {
                assert_eq!(bot_level(event), Some("random"), "Bob's seat is played by its bot: {event}");
                bob_by_bot += 1;
            } else {
                assert!(event.get("bot").is_none(), "{event}");
            }
        }
    }

    // Bob takes his seat back, at Ann's turn.
    let before = wait_for(&rest, id, "at Ann's turn", |s| s["status"]["to_move"] == json!([0])).await;
    let answer = rest.delete(&autopilot, Some(bob)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body, json!({"version": version(&before) + 1, "seat": 1}));
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert!(state["seats"][1].get("bot").is_none(), "{state}");
    let events = rest.events(id, None).await;
    let last = events.last().unwrap();
    assert_eq!((&last["type"], &last["seat"], &last["handover"]), (&json!("seat_bot"), &json!(1), &json!({"bot": null})), "{last}");
    let again = rest.delete(&autopilot, Some(bob)).await;
    assert_eq!(again.body["version"], version(&state), "taking back a seat no bot plays appends nothing: {again:?}");

    // Now nobody plays Bob's seat but Bob.
    let mut guard = 0;
    let waiting = loop {
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        assert!(!finished(&state), "the game ended before Bob's turn");
        if state["status"]["to_move"] == json!([1]) {
            break state;
        }
        assert_eq!(rest.play(&game, 1, &mut choose).await, 1);
        guard += 1;
        assert!(guard < 50, "Bob's turn never comes");
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let still = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(version(&still), version(&waiting), "the server moved for Bob after he took his seat back");
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(bob)).await.body;
    let mv = &legal["moves"][0];
    let answer = rest.post(&format!("/v1/games/{id}/moves"), Some(bob), &json!({"move": mv, "expected_version": version(&still)})).await;
    assert_eq!(answer.status, 200, "Bob moves for himself again: {answer:?}");
    let events = rest.events(id, None).await;
    assert!(events.last().unwrap().get("bot").is_none());

    // Once over, the seat is no one's to hand over.
    rest.play(&game, 1000, chooser(6)).await;
    let over = wait_for(&rest, id, "finished", finished).await;
    problem(&rest.put(&autopilot, Some(bob), &random).await, 409, "game_finished");
    problem(&rest.delete(&autopilot, Some(ann)).await, 409, "game_finished");
    assert_eq!(version(&rest.get(&format!("/v1/games/{id}"), None).await.body), version(&over));
    export_verifies(&rest, id).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn autopilot_over_grpc_and_its_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 1})).await;
    let other = rest.create("cardinal", &["Cid", "Dee"], json!({})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let ann = game["seats"][0]["token"].as_str().unwrap();
    let bob = game["seats"][1]["token"].as_str().unwrap();
    let mut grpc = server.grpc().await;
    let request = |bot: Option<pb::BotRequest>| pb::SetAutopilotRequest { id: id.clone(), bot };
    let random = Some(pb::BotRequest { level: pb::BotLevel::Random as i32, think_ms: Some(0) });
    let check = |status: tonic::Status, code: tonic::Code, reason: &str| {
        assert_eq!(status.code(), code, "{status:?}");
        let info = status.get_details_error_info().expect("an ErrorInfo detail");
        assert_eq!(info.reason, reason, "{status:?}");
    };

    check(grpc.set_autopilot(request(random)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    let foreign = other["seats"][0]["token"].as_str().unwrap();
    check(grpc.set_autopilot(authed(request(random), foreign)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    for level in [pb::BotLevel::Unspecified as i32, 42] {
        let bad = Some(pb::BotRequest { level, think_ms: None });
        check(grpc.set_autopilot(authed(request(bad), bob)).await.unwrap_err(), tonic::Code::InvalidArgument, "invalid_input");
    }
    let slow = Some(pb::BotRequest { level: pb::BotLevel::Greedy as i32, think_ms: Some(10_001) });
    check(grpc.set_autopilot(authed(request(slow), bob)).await.unwrap_err(), tonic::Code::InvalidArgument, "invalid_input");
    assert_eq!(version(&rest.get(&format!("/v1/games/{id}"), None).await.body), 0, "a refusal appended something");

    // Bob, to move, hands over: the bot plays his turn at once.
    let set = grpc.set_autopilot(authed(request(random), bob)).await.unwrap().into_inner();
    let seat = Some(pb::BotSeat { level: pb::BotLevel::Random as i32, think_ms: 0 });
    assert_eq!((set.version, set.seat, set.bot), (1, 1, seat));
    let moved = wait_for(&rest, &id, "at Ann's turn", |s| s["status"]["to_move"] == json!([0])).await;
    let state = grpc.get_game(pb::GetGameRequest { id: id.clone() }).await.unwrap().into_inner();
    assert_eq!(state.seats[1].bot, seat);
    assert_eq!(state.seats[0].bot, None);
    let page = grpc.list_events(pb::ListEventsRequest { id: id.clone(), from: 0, limit: 1000 }).await.unwrap().into_inner();
    let Some(pb::event::Record::SeatBot(handover)) = &page.events[1].record else { panic!("record 1: {:?}", page.events[1]) };
    assert_eq!((handover.seat, handover.bot), (1, seat));
    for event in &page.events[2..] {
        let Some(pb::event::Record::Move(mv)) = &event.record else { panic!("{event:?}") };
        assert_eq!(mv.seat, 1);
        assert_eq!(mv.bot.as_ref().map(|b| b.level), Some(pb::BotLevel::Random as i32), "{event:?}");
    }
    assert_eq!(page.events.len() as u64, version(&moved) + 1);

    // And takes it back (at Ann's turn, so nothing races).
    let back = grpc.set_autopilot(authed(request(None), bob)).await.unwrap().into_inner();
    assert_eq!((back.version, back.seat, back.bot), (version(&moved) + 1, 1, None));
    let page = grpc.list_events(pb::ListEventsRequest { id: id.clone(), from: back.version, limit: 10 }).await.unwrap().into_inner();
    let Some(pb::event::Record::SeatBot(handover)) = &page.events[0].record else { panic!("{:?}", page.events[0]) };
    assert_eq!((handover.seat, handover.bot), (1, None));
    let same = grpc.set_autopilot(authed(request(None), bob)).await.unwrap().into_inner();
    assert_eq!(same.version, back.version, "nothing to take back appends nothing");

    // Over: FAILED_PRECONDITION.
    rest.play(&game, 1000, chooser(8)).await;
    let over = wait_for(&rest, &id, "finished", finished).await;
    check(grpc.set_autopilot(authed(request(random), ann)).await.unwrap_err(), tonic::Code::FailedPrecondition, "game_finished");
    assert_eq!(version(&rest.get(&format!("/v1/games/{id}"), None).await.body), version(&over));
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bot_seats_create_no_game() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let bad_players = [
        json!({"name": "X", "bot": {"level": "genius"}}),
        json!({"name": "X", "bot": {"level": "random", "think_ms": 20000}}),
        json!({"name": "X", "bot": {"level": "random", "think_ms": -1}}),
        json!({"name": "X", "bot": {"level": "random", "speed": 3}}),
        json!({"name": "X", "bot": {}}),
        json!({"name": "X", "bot": "random"}),
        json!({"name": "X", "robot": {"level": "random"}}),
    ];
    for bad in bad_players {
        let body = json!({"kind": "cardinal", "players": ["Ann", bad], "options": {}});
        let answer = rest.post("/v1/games", None, &body).await;
        problem(&answer, 400, "invalid_input");
    }
    let listed = rest.get("/v1/games", None).await;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.body["games"], json!([]), "a refused request created a game");

    let mut grpc = server.grpc().await;
    let create = |bots: Vec<(u32, i32, Option<u32>)>| pb::CreateGameRequest {
        kind: "cardinal".into(),
        players: vec!["Ann".into(), "Bob".into()],
        options: None,
        bots: bots.into_iter().map(|(seat, level, think_ms)| (seat, pb::BotRequest { level, think_ms })).collect(),
        ..Default::default()
    };
    let random = pb::BotLevel::Random as i32;
    for bots in
        [vec![(7, random, Some(0))], vec![(2, random, None)], vec![(1, 0, None)], vec![(1, 9, None)], vec![(0, random, Some(20_000))]]
    {
        let status = grpc.create_game(create(bots.clone())).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{bots:?}: {status:?}");
        assert_eq!(status.get_details_error_info().expect("an ErrorInfo").reason, "invalid_input");
    }
    let listed = grpc
        .list_games(pb::ListGamesRequest {
            kind: String::new(),
            state: pb::GameStateFilter::Any.into(),
            after: String::new(),
            limit: 0,
            open: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(listed.games.is_empty(), "{listed:?}");
    // The same request with a valid seat goes through.
    let created = grpc.create_game(create(vec![(1, random, Some(0))])).await.unwrap().into_inner();
    assert_eq!(created.seats.iter().map(|s| s.seat).collect::<Vec<_>>(), vec![0], "a token for the person's seat only");
    drop(grpc);
    server.stop().await;
}
