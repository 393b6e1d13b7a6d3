//! Open seats end to end: games created with seats left open, filled by
//! invitation or from the public lobby, left before the start, cancelled by
//! their admin, seats given new tokens or handed to the server's bots, and
//! resignations (a game of two sides ends, any other goes on with a bot in
//! the seat), over REST and gRPC, with every refusal changing nothing and
//! every log verifying.

use std::collections::BTreeMap;
use std::time::Duration;

use ludo_blackbox::{Answer, Rest, TestServer, authed, chooser, engine_replay};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};
use tonic_types::StatusExt;

/// How long any one wait of these tests may last before it fails.
const PATIENCE: Duration = Duration::from_secs(60);

/// A seat's player: the client it plays from and the seat's token.
struct Player {
    rest: Rest,
    token: String,
}

/// POSTs a new game from raw player entries (`null` for an open seat).
async fn post_game(rest: &Rest, kind: &str, players: Value, options: Value, public: bool) -> Answer {
    rest.post("/v1/games", None, &json!({"kind": kind, "players": players, "options": options, "public": public})).await
}

/// Creates a game and checks the created answer's credentials: a token for
/// each seat a person takes (none for a bot's seat, which no token opens),
/// the admin token, and (with open seats) one invitation per seat, open
/// where the seat is; the created answer.
async fn create(rest: &Rest, kind: &str, players: Value, options: Value, public: bool) -> Value {
    let answer = post_game(rest, kind, players.clone(), options, public).await;
    assert_eq!(answer.status, 201, "create: {answer:?}");
    let game = answer.body;
    let id = game["id"].as_str().expect("id");
    let players = players.as_array().expect("players");
    let taken: Vec<usize> = (0..players.len()).filter(|&seat| !players[seat].is_null()).collect();
    let people: Vec<usize> = taken.iter().copied().filter(|&seat| players[seat].get("bot").is_none()).collect();
    let seats = game["seats"].as_array().expect("seats");
    assert_eq!(seats.len(), people.len(), "only the seats people take at creation have tokens: {game}");
    for (entry, &seat) in seats.iter().zip(&people) {
        assert_eq!(entry["seat"], seat, "{game}");
        assert!(entry["token"].as_str().is_some_and(|t| !t.is_empty()), "{entry}");
    }
    assert!(game["admin_token"].as_str().is_some_and(|t| !t.is_empty()), "every game has an admin token: {game}");
    if taken.len() == players.len() {
        assert!(game.get("invitations").is_none(), "a full table has no invitations: {game}");
        return game;
    }
    let invitations = game["invitations"].as_array().expect("invitations for a game with open seats");
    assert_eq!(invitations.len(), players.len(), "one invitation per seat: {game}");
    for (seat, invitation) in invitations.iter().enumerate() {
        let code = invitation["code"].as_str().expect("code");
        assert!(!code.is_empty());
        assert_eq!(invitation["seat"], seat);
        assert_eq!(invitation["open"], players[seat].is_null(), "{invitation}");
        assert_eq!(invitation["link"], format!("/games/{id}/join#{code}"));
    }
    game
}

fn id_of(game: &Value) -> String {
    game["id"].as_str().expect("id").to_string()
}

fn token_of(game: &Value, seat: u64) -> String {
    let entry = game["seats"].as_array().unwrap().iter().find(|s| s["seat"] == seat).unwrap_or_else(|| panic!("seat {seat} in {game}"));
    entry["token"].as_str().unwrap().to_string()
}

fn admin_of(game: &Value) -> String {
    game["admin_token"].as_str().unwrap().to_string()
}

fn invitation(game: &Value, seat: usize) -> String {
    game["invitations"][seat]["code"].as_str().expect("an invitation code").to_string()
}

fn version(state: &Value) -> u64 {
    state["version"].as_u64().expect("a version")
}

fn waiting(open: &[u64]) -> Value {
    json!({"state": "waiting", "open_seats": open})
}

/// The game as a spectator sees it.
async fn state(rest: &Rest, id: &str) -> Value {
    let answer = rest.get(&format!("/v1/games/{id}"), None).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.body
}

/// Polls the game (as a spectator) until `done` holds of its state; the state.
async fn wait_for(rest: &Rest, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    rest.wait_for(id, what, PATIENCE, done).await
}

/// Asserts `answer` is the problem `status` / `code`.
fn problem(answer: &Answer, status: u16, code: &str) {
    assert_eq!(answer.status, status, "{answer:?}");
    assert_eq!(answer.body["code"], code, "{answer:?}");
}

/// Asserts `answer` is an `invalid_input` problem naming `field`.
fn invalid(answer: &Answer, field: &str) {
    problem(answer, 400, "invalid_input");
    assert_eq!(answer.body["field"], field, "{answer:?}");
}

async fn join(rest: &Rest, id: &str, body: Value) -> Answer {
    rest.post(&format!("/v1/games/{id}/join"), None, &body).await
}

async fn joined(rest: &Rest, id: &str, body: Value) -> Value {
    let answer = join(rest, id, body).await;
    assert_eq!(answer.status, 200, "join: {answer:?}");
    assert!(answer.body["token"].as_str().is_some_and(|t| !t.is_empty()), "{answer:?}");
    answer.body
}

/// POSTs `/v1/games/{id}/{action}` with `token` (leave, resign, cancel).
async fn act(rest: &Rest, id: &str, action: &str, token: Option<&str>) -> Answer {
    rest.post(&format!("/v1/games/{id}/{action}"), token, &json!({})).await
}

/// The ids of the games the lobby lists (public games waiting for players).
async fn lobby(rest: &Rest) -> Vec<String> {
    let answer = rest.get("/v1/games?open=true&limit=1000", None).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.body["games"].as_array().expect("games").iter().map(|g| g["id"].as_str().unwrap().to_string()).collect()
}

/// The export, checked to verify (chain intact, records re-played), its
/// seed check being `seed` (`matches` once the game is over); its bytes.
async fn export_verifies(rest: &Rest, id: &str, seed: &str) -> Vec<u8> {
    let (status, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert_eq!(status, 200);
    let report = rest.post_bytes("/v1/verify", export.clone()).await;
    assert_eq!(report.status, 200, "{report:?}");
    assert_eq!(report.body["valid"], true, "game {id}: {}", report.body);
    assert_eq!(report.body["chain_intact"], true, "game {id}: {}", report.body);
    assert_eq!(report.body["seed"], seed, "game {id}: {}", report.body);
    if seed == "matches" {
        assert_eq!(report.body["replayed"], true, "game {id}: {}", report.body);
    }
    export
}

/// Imports a finished game's export into a second, fresh server, and checks
/// that it stands there as here.
async fn imports_elsewhere(export: Vec<u8>, here: &Value) {
    let dir = tempfile::tempdir().unwrap();
    let other = TestServer::start(dir.path()).await;
    let rest = other.rest();
    let imported = rest.import(export).await;
    assert_eq!(imported.status, 201, "{imported:?}");
    assert_eq!(imported.body["id"], here["id"]);
    assert_eq!(imported.body["version"], here["version"]);
    assert_eq!(imported.body["status"], here["status"]);
    let there = state(&rest, here["id"].as_str().unwrap()).await;
    assert_eq!(there["status"], here["status"]);
    assert_eq!(there["seats"], here["seats"]);
    assert_eq!(there["view"], here["view"], "the imported game ends as it did here");
    other.stop().await;
}

/// Plays the game with each to-move seat of `players` choosing a legal move
/// by `choose`, waiting for the server's bots at the other seats, for at
/// most `max_moves` moves of `players`; how many they played.
async fn play(
    spectator: &Rest,
    id: &str,
    players: &BTreeMap<u64, Player>,
    max_moves: usize,
    mut choose: impl FnMut(&[Value]) -> usize,
) -> usize {
    let mut played = 0;
    while played < max_moves {
        let now = state(spectator, id).await;
        if now["status"]["state"] != "in_progress" {
            break;
        }
        let seat = now["status"]["to_move"][0].as_u64().expect("a seat to move");
        let Some(player) = players.get(&seat) else {
            // A seat the server's bot plays: wait for its move.
            let at = version(&now);
            wait_for(spectator, id, "moved by a bot", |s| version(s) > at).await;
            continue;
        };
        let legal = player.rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&player.token)).await;
        assert_eq!(legal.status, 200, "{legal:?}");
        assert_eq!(legal.body["seat"], seat);
        let moves = legal.body["moves"].as_array().expect("moves").clone();
        assert!(!moves.is_empty(), "seat {seat} is to move but has no legal move");
        let mv = &moves[choose(&moves)];
        let answer = player
            .rest
            .post(&format!("/v1/games/{id}/moves"), Some(&player.token), &json!({"move": mv, "expected_version": now["version"]}))
            .await;
        assert_eq!(answer.status, 200, "a listed legal move was refused: {answer:?}");
        played += 1;
    }
    played
}

/// Record 0 and the moves of a log: what the engine replays.
fn moves_only(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| e["seq"] == 0 || e["type"] == "move").cloned().collect()
}

/// Asserts that no secret in `secrets` appears in `text`.
fn no_secret_in(text: &str, secrets: &[&str], what: &str) {
    for secret in secrets {
        assert!(!text.contains(secret), "{what} shows the secret {secret}");
    }
}

/// Asserts a gRPC refusal: its code and its ErrorInfo reason.
fn refused(status: tonic::Status, code: tonic::Code, reason: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    let info = status.get_details_error_info().expect("an ErrorInfo detail");
    assert_eq!(info.reason, reason, "{status:?}");
}

/// The games the lobby lists over gRPC.
async fn grpc_lobby(grpc: &mut pb::ludo_client::LudoClient<tonic::transport::Channel>) -> Vec<pb::GameSummary> {
    grpc.list_games(pb::ListGamesRequest { open: true, ..Default::default() }).await.unwrap().into_inner().games
}

fn grpc_state(state: &pb::GameState) -> &pb::status::State {
    state.status.as_ref().and_then(|s| s.state.as_ref()).expect("a status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kardinal_table_filled_by_invitations_from_three_clients_plays_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let host = server.rest();
    let game = create(&host, "kardinal", json!(["Ann", null, null, null]), json!({"first_seat": 0}), false).await;
    let id = id_of(&game);
    assert_eq!(game["version"], 0);
    assert_eq!(game["status"], waiting(&[1, 2, 3]));
    let ann = token_of(&game, 0);
    let opened = state(&host, &id).await;
    assert_eq!(opened["status"], waiting(&[1, 2, 3]));
    assert_eq!(
        opened["seats"],
        json!([{"seat": 0, "name": "Ann"}, {"seat": 1, "name": null}, {"seat": 2, "name": null}, {"seat": 3, "name": null}])
    );
    assert!(opened.get("public").is_none(), "a game is private unless asked: {opened}");
    assert!(!lobby(&host).await.contains(&id), "a private game is not in the lobby");

    let mut players = BTreeMap::new();
    players.insert(0, Player { rest: host.clone(), token: ann.clone() });
    for (seat, name) in [(1u64, "Bob"), (2, "Cid"), (3, "Dee")] {
        // Each from a client of its own, holding only its invitation.
        let client = server.rest();
        let answer = joined(&client, &id, json!({"name": name, "invitation": invitation(&game, seat as usize)})).await;
        assert_eq!((&answer["version"], &answer["seat"], &answer["name"]), (&json!(seat), &json!(seat), &json!(name)), "{answer}");
        let open: Vec<u64> = (seat + 1..=3).collect();
        let expected = if open.is_empty() { json!({"state": "in_progress", "to_move": [0]}) } else { waiting(&open) };
        assert_eq!(answer["status"], expected, "after {name} joined");
        let token = answer["token"].as_str().unwrap().to_string();
        let seen = client.get(&format!("/v1/games/{id}"), Some(&token)).await;
        assert_eq!(seen.status, 200, "{seen:?}");
        assert_eq!(seen.body["viewer_seat"], seat, "the joined token opens its seat");
        assert_eq!(seen.body["seats"][seat as usize]["name"], name);
        players.insert(seat, Player { rest: client, token });
    }
    let started = state(&host, &id).await;
    assert_eq!(version(&started), 3);
    assert_eq!(started["status"], json!({"state": "in_progress", "to_move": [0]}));

    let events = host.events(&id, None).await;
    assert_eq!(events.len(), 4);
    for (seat, name) in [(1u64, "Bob"), (2, "Cid"), (3, "Dee")] {
        let event = &events[seat as usize];
        assert_eq!((&event["type"], &event["seat"], &event["name"]), (&json!("seat_joined"), &json!(seat), &json!(name)), "{event}");
        assert!(event.get("handover").is_none(), "a person joined: {event}");
    }
    let mut secrets: Vec<String> = players.values().map(|p| p.token.clone()).collect();
    secrets.extend((0..4).map(|seat| invitation(&game, seat)));
    secrets.push(admin_of(&game));
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    no_secret_in(&serde_json::to_string(&events).unwrap(), &secrets, "the log");

    let played = play(&host, &id, &players, 4000, chooser(41)).await;
    let over = state(&host, &id).await;
    assert_eq!(over["status"]["state"], "finished", "not over after {played} moves: {}", over["status"]);
    assert!(over["status"].get("forfeits").is_none(), "nobody gave up: {}", over["status"]);
    let events = host.events(&id, None).await;
    assert_eq!(events.len() as u64, version(&over) + 1);
    assert_eq!(events.len(), played + 4, "after the joins, only the players' moves");
    for seat in 0..4 {
        assert!(events[4..].iter().any(|e| e["seat"] == seat), "seat {seat} moved");
    }
    assert!(events[4..].iter().all(|e| e["type"] == "move" && e.get("bot").is_none()));
    let engine = engine_replay::<ludo_kardinal::Game>(&over, &moves_only(&events));
    let ludo_engine::Status::Finished { result } = engine else { panic!("the engine's replay is not over: {engine:?}") };
    assert_eq!(over["status"]["result"], serde_json::to_value(&result).unwrap(), "the server's result is the engine's");

    let export = export_verifies(&host, &id, "matches").await;
    no_secret_in(&String::from_utf8_lossy(&export), &secrets, "the export");
    imports_elsewhere(export, &over).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_game_is_joined_from_the_lobby_over_rest_and_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let public = create(&rest, "cardinal", json!(["Ann", null]), json!({}), true).await;
    let private = create(&rest, "cardinal", json!(["Cid", null]), json!({}), false).await;
    let full = rest.create("cardinal", &["Dee", "Eve"], json!({})).await;
    let id = id_of(&public);
    assert_eq!(lobby(&rest).await, vec![id.clone()], "only the public game waiting for players");
    let listed = rest.get("/v1/games?open=true", None).await.body;
    let summary = &listed["games"][0];
    assert_eq!(summary["public"], true);
    assert_eq!(summary["status"], waiting(&[1]));
    assert_eq!(summary["seats"], json!([{"seat": 0, "name": "Ann"}, {"seat": 1, "name": null}]));
    assert_eq!(state(&rest, &id).await["public"], true);

    // A stranger picks it from the lobby and joins without an invitation.
    let stranger = server.rest();
    let seen = stranger.get("/v1/games?open=true", None).await.body;
    let pick = seen["games"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(pick, id);
    let bob = joined(&stranger, &pick, json!({"name": "Bob"})).await;
    assert_eq!(bob["seat"], 1);
    assert_eq!(bob["version"], 1);
    assert_eq!(bob["status"]["state"], "in_progress");
    assert!(lobby(&rest).await.is_empty(), "a full game leaves the lobby");
    let legal = stranger.get(&format!("/v1/games/{id}/legal-moves"), bob["token"].as_str()).await;
    assert_eq!((legal.status, &legal.body["seat"]), (200, &json!(1)), "{legal:?}");
    let events = rest.events(&id, None).await;
    assert_eq!((&events[1]["type"], &events[1]["seat"], &events[1]["name"]), (&json!("seat_joined"), &json!(1), &json!("Bob")));
    // Nobody else gets in now.
    problem(&join(&stranger, &id, json!({"name": "Zed"})).await, 409, "game_started");
    // The other two never were in the lobby.
    problem(&join(&stranger, &id_of(&private), json!({"name": "Zed"})).await, 401, "unauthorized");
    problem(&join(&stranger, &id_of(&full), json!({"name": "Zed"})).await, 401, "unauthorized");

    // With two open seats: the seat asked for, then the lowest one left.
    let two = create(&rest, "cardinal", json!([null, "Ann", null]), json!({}), true).await;
    let two_id = id_of(&two);
    assert_eq!(lobby(&rest).await, vec![two_id.clone()]);
    let asked = joined(&stranger, &two_id, json!({"name": "Bob", "seat": 2})).await;
    assert_eq!((&asked["seat"], &asked["status"]), (&json!(2), &waiting(&[0])));
    problem(&join(&stranger, &two_id, json!({"name": "Zed", "seat": 1})).await, 409, "seat_taken");
    assert_eq!(lobby(&rest).await, vec![two_id.clone()], "still a seat open");
    let lowest = joined(&server.rest(), &two_id, json!({"name": "Cid"})).await;
    assert_eq!((&lowest["seat"], &lowest["version"], &lowest["status"]["state"]), (&json!(0), &json!(2), &json!("in_progress")));
    assert!(lobby(&rest).await.is_empty());

    // The same over gRPC.
    let mut grpc = server.grpc().await;
    let created = grpc
        .create_game(pb::CreateGameRequest {
            kind: "cardinal".into(),
            players: vec!["Ann".into(), String::new()],
            open_seats: vec![1],
            public: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        created.status.as_ref().and_then(|s| s.state.clone()),
        Some(pb::status::State::Waiting(pb::Waiting { open_seats: vec![1] }))
    );
    assert_eq!(created.seats.len(), 1);
    assert_eq!(created.invitations.len(), 2);
    let listed = grpc_lobby(&mut grpc).await;
    assert_eq!(listed.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), vec![created.id.as_str()]);
    assert!(listed[0].public);
    assert!(listed[0].seats[1].open && !listed[0].seats[0].open, "{:?}", listed[0].seats);
    let joined = grpc
        .join_game(pb::JoinGameRequest { id: created.id.clone(), name: "Bob".into(), invitation: None, seat: None })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((joined.seat, joined.version, joined.name.as_str()), (1, 1, "Bob"));
    assert!(matches!(joined.status.and_then(|s| s.state), Some(pb::status::State::InProgress(_))));
    assert!(grpc_lobby(&mut grpc).await.is_empty(), "a full game leaves the lobby");
    let mine = grpc.get_game(authed(pb::GetGameRequest { id: created.id.clone() }, &joined.token)).await.unwrap().into_inner();
    assert_eq!(mine.viewer_seat, Some(1));
    assert!(matches!(grpc_state(&mine), pb::status::State::InProgress(_)));
    assert!(mine.public);
    refused(
        grpc.join_game(pb::JoinGameRequest { id: created.id.clone(), name: "Zed".into(), invitation: None, seat: None }).await.unwrap_err(),
        tonic::Code::FailedPrecondition,
        "game_started",
    );
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_before_the_start_reopens_the_seat_and_after_it_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null, null]), json!({"first_seat": 0}), false).await;
    let id = id_of(&game);
    let ann = token_of(&game, 0);
    let bob = joined(&rest, &id, json!({"name": "Bob", "invitation": invitation(&game, 1)})).await;
    let bob = bob["token"].as_str().unwrap().to_string();
    problem(&act(&rest, &id, "leave", None).await, 401, "unauthorized");
    problem(&act(&rest, &id, "leave", Some(&admin_of(&game))).await, 401, "unauthorized");
    assert_eq!(version(&state(&rest, &id).await), 1, "a refusal appended something");

    let left = act(&rest, &id, "leave", Some(&bob)).await;
    assert_eq!(left.status, 200, "{left:?}");
    assert_eq!(left.body, json!({"version": 2, "status": waiting(&[1, 2])}));
    let now = state(&rest, &id).await;
    assert_eq!(now["status"], waiting(&[1, 2]));
    assert_eq!(now["seats"][1], json!({"seat": 1, "name": null}));
    // Bob's token opens nothing any more.
    problem(&rest.get(&format!("/v1/games/{id}"), Some(&bob)).await, 401, "unauthorized");
    problem(&rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&bob)).await, 401, "unauthorized");
    problem(&act(&rest, &id, "leave", Some(&bob)).await, 401, "unauthorized");
    let events = rest.events(&id, None).await;
    assert_eq!((&events[2]["type"], &events[2]["seat"]), (&json!("seat_left"), &json!(1)), "{}", events[2]);

    // The same invitation takes the seat again, with a new token.
    let bea = joined(&rest, &id, json!({"name": "Bea", "invitation": invitation(&game, 1)})).await;
    assert_eq!((&bea["seat"], &bea["version"], &bea["status"]), (&json!(1), &json!(3), &waiting(&[2])));
    let bea = bea["token"].as_str().unwrap().to_string();
    assert_ne!(bea, bob);
    problem(&rest.get(&format!("/v1/games/{id}"), Some(&bob)).await, 401, "unauthorized");

    // The creator's seat too: it opens when its player leaves, and its
    // invitation (not open at creation) takes it then.
    let left = act(&rest, &id, "leave", Some(&ann)).await;
    assert_eq!(left.body, json!({"version": 4, "status": waiting(&[0, 2])}), "{left:?}");
    problem(&rest.get(&format!("/v1/games/{id}"), Some(&ann)).await, 401, "unauthorized");
    let ann = joined(&rest, &id, json!({"name": "Ann", "invitation": invitation(&game, 0)})).await;
    assert_eq!((&ann["seat"], &ann["version"], &ann["status"]), (&json!(0), &json!(5), &waiting(&[2])));
    let ann = ann["token"].as_str().unwrap().to_string();

    // The last seat starts the game; leaving is refused from then on.
    let cid = joined(&rest, &id, json!({"name": "Cid", "invitation": invitation(&game, 2)})).await;
    assert_eq!((&cid["version"], &cid["status"]), (&json!(6), &json!({"state": "in_progress", "to_move": [0]})));
    let cid = cid["token"].as_str().unwrap().to_string();
    for token in [&ann, &bea, &cid] {
        problem(&act(&rest, &id, "leave", Some(token)).await, 409, "game_started");
    }
    // An invitation whose seat was taken, once the game started.
    problem(&join(&rest, &id, json!({"name": "Zed", "invitation": invitation(&game, 1)})).await, 409, "game_started");
    assert_eq!(version(&state(&rest, &id).await), 6, "a refusal appended something");
    let events = rest.events(&id, None).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["game_created", "seat_joined", "seat_left", "seat_joined", "seat_left", "seat_joined", "seat_joined"]);

    // The three tokens play.
    let players: BTreeMap<u64, Player> =
        [(0, ann), (1, bea), (2, cid)].into_iter().map(|(seat, token)| (seat, Player { rest: rest.clone(), token })).collect();
    assert_eq!(play(&rest, &id, &players, 6, chooser(3)).await, 6);
    assert_eq!(version(&state(&rest, &id).await), 12);
    export_verifies(&rest, &id, "absent").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_cancels_a_waiting_game_and_nothing_happens_in_it_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null, null]), json!({}), true).await;
    let id = id_of(&game);
    let (ann, admin) = (token_of(&game, 0), admin_of(&game));
    let bob = joined(&rest, &id, json!({"name": "Bob", "invitation": invitation(&game, 1)})).await;
    let bob = bob["token"].as_str().unwrap().to_string();
    // Only the admin token cancels.
    let invited = invitation(&game, 2);
    for token in [None, Some(ann.as_str()), Some(bob.as_str()), Some(invited.as_str())] {
        problem(&act(&rest, &id, "cancel", token).await, 401, "unauthorized");
    }
    assert_eq!(version(&state(&rest, &id).await), 1, "a refusal appended something");

    let cancelled = act(&rest, &id, "cancel", Some(&admin)).await;
    assert_eq!(cancelled.status, 200, "{cancelled:?}");
    assert_eq!((&cancelled.body["version"], &cancelled.body["status"]), (&json!(2), &json!({"state": "cancelled"})));
    assert!(cancelled.body["receipt"]["leaf"].as_str().is_some_and(|leaf| leaf.ends_with("outcome cancelled\n")), "{cancelled:?}");
    let over = state(&rest, &id).await;
    assert_eq!(over["status"], json!({"state": "cancelled"}));
    assert!(over["seed"].as_str().is_some(), "a cancelled game is over: its seed is published: {over}");
    let events = rest.events(&id, None).await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "game_cancelled", "{last}");
    assert!(last.get("seat").is_none(), "{last}");

    // Nothing more happens in it.
    problem(&join(&rest, &id, json!({"name": "Cid", "invitation": invited})).await, 409, "game_cancelled");
    problem(&join(&rest, &id, json!({"name": "Cid"})).await, 409, "game_cancelled");
    problem(&act(&rest, &id, "cancel", Some(&admin)).await, 409, "game_cancelled");
    problem(&act(&rest, &id, "leave", Some(&bob)).await, 409, "game_cancelled");
    problem(&act(&rest, &id, "resign", Some(&ann)).await, 409, "game_cancelled");
    let mv = rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &json!({"move": {"type": "pass"}})).await;
    problem(&mv, 409, "game_cancelled");
    assert!(!lobby(&rest).await.contains(&id), "a cancelled game left the lobby");
    let still = state(&rest, &id).await;
    assert_eq!(version(&still), 2, "a refusal appended something");
    assert_eq!(still["status"], json!({"state": "cancelled"}));
    export_verifies(&rest, &id, "matches").await;

    // A game that started is no longer the admin's to cancel.
    let started = create(&rest, "cardinal", json!(["Ann", null]), json!({}), false).await;
    let started_id = id_of(&started);
    joined(&rest, &started_id, json!({"name": "Bob", "invitation": invitation(&started, 1)})).await;
    problem(&act(&rest, &started_id, "cancel", Some(&admin_of(&started))).await, 409, "game_started");
    problem(&act(&rest, &started_id, "cancel", Some(&admin)).await, 401, "unauthorized");
    assert_eq!(version(&state(&rest, &started_id).await), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_token_replaces_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = id_of(&game);
    let (ann, bob, admin) = (token_of(&game, 0), token_of(&game, 1), admin_of(&game));
    let renew = format!("/v1/games/{id}/seats/0/token");
    // Neither no token nor another seat's renews seat 0.
    problem(&rest.post(&renew, None, &json!({})).await, 401, "unauthorized");
    problem(&rest.post(&renew, Some(&bob), &json!({})).await, 403, "forbidden");
    assert_eq!(version(&state(&rest, &id).await), 0, "a refusal appended something");

    // The admin renews the token it was handed when it created the game
    // (Ann's link leaked, say).
    let issued = rest.post(&renew, Some(&admin), &json!({})).await;
    assert_eq!(issued.status, 200, "{issued:?}");
    assert_eq!((&issued.body["version"], &issued.body["seat"]), (&json!(1), &json!(0)));
    let fresh = issued.body["token"].as_str().expect("a new token").to_string();
    assert_ne!(fresh, ann);
    // The old token opens nothing.
    problem(&rest.get(&format!("/v1/games/{id}"), Some(&ann)).await, 401, "unauthorized");
    problem(&rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await, 401, "unauthorized");
    problem(&rest.post(&renew, Some(&ann), &json!({})).await, 401, "unauthorized");
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&fresh)).await;
    assert_eq!((legal.status, &legal.body["seat"]), (200, &json!(0)), "{legal:?}");
    let mv = legal.body["moves"][0].clone();
    problem(
        &rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &json!({"move": mv, "expected_version": 1})).await,
        401,
        "unauthorized",
    );
    assert_eq!(version(&state(&rest, &id).await), 1);
    // The new one moves.
    let moved = rest.post(&format!("/v1/games/{id}/moves"), Some(&fresh), &json!({"move": mv, "expected_version": 1})).await;
    assert_eq!(moved.status, 200, "{moved:?}");
    assert_eq!(moved.body["version"], 2);
    // Ann renews her token herself: the new one is hers alone, and the
    // admin (who held every token it renewed) cannot renew it again.
    let own = rest.post(&renew, Some(&fresh), &json!({})).await;
    assert_eq!((own.status, &own.body["version"]), (200, &json!(3)), "{own:?}");
    let mine = own.body["token"].as_str().expect("a new token").to_string();
    problem(&rest.get(&format!("/v1/games/{id}"), Some(&fresh)).await, 401, "unauthorized");
    problem(&rest.post(&renew, Some(&admin), &json!({})).await, 403, "forbidden");
    let seen = rest.get(&format!("/v1/games/{id}"), Some(&mine)).await;
    assert_eq!(seen.body["viewer_seat"], 0);
    // Bob's seat is untouched.
    assert_eq!(rest.get(&format!("/v1/games/{id}"), Some(&bob)).await.body["viewer_seat"], 1);

    // The log says who asked, for every seat to see; it holds no token.
    let events = rest.events(&id, None).await;
    assert_eq!(
        (&events[1]["type"], &events[1]["seat"], &events[1]["by"]),
        (&json!("seat_token"), &json!(0), &json!("admin")),
        "{}",
        events[1]
    );
    assert_eq!(
        (&events[3]["type"], &events[3]["seat"], &events[3]["by"]),
        (&json!("seat_token"), &json!(0), &json!("seat")),
        "{}",
        events[3]
    );
    assert_eq!(rest.events(&id, Some(&bob)).await[3]["by"], "seat", "Bob sees the change too");
    no_secret_in(&serde_json::to_string(&events).unwrap(), &[&fresh, &mine, &ann, &admin], "the log");

    // Both seats play on to the end with their tokens.
    let players: BTreeMap<u64, Player> =
        [(0, mine.clone()), (1, bob.clone())].into_iter().map(|(seat, token)| (seat, Player { rest: rest.clone(), token })).collect();
    play(&rest, &id, &players, 1000, chooser(5)).await;
    let over = state(&rest, &id).await;
    assert_eq!(over["status"]["state"], "finished");
    problem(&rest.post(&renew, Some(&mine), &json!({})).await, 409, "game_finished");
    assert_eq!(version(&state(&rest, &id).await), version(&over));
    let export = export_verifies(&rest, &id, "matches").await;
    no_secret_in(&String::from_utf8_lossy(&export), &[&fresh, &mine, &ann, &bob, &admin], "the export");
    imports_elsewhere(export, &over).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resigning_a_two_player_cardinal_game_ends_it_and_the_other_seat_wins() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let id = id_of(&game);
    let (ann, bob) = (token_of(&game, 0), token_of(&game, 1));
    let players: BTreeMap<u64, Player> =
        [(0, ann.clone()), (1, bob.clone())].into_iter().map(|(seat, token)| (seat, Player { rest: rest.clone(), token })).collect();
    assert_eq!(play(&rest, &id, &players, 4, chooser(7)).await, 4);
    let before = state(&rest, &id).await;
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await.body;
    problem(&act(&rest, &id, "resign", None).await, 401, "unauthorized");
    problem(&act(&rest, &id, "resign", Some(&admin_of(&game))).await, 401, "unauthorized");
    assert_eq!(version(&state(&rest, &id).await), version(&before));

    let resigned = act(&rest, &id, "resign", Some(&ann)).await;
    assert_eq!(resigned.status, 200, "{resigned:?}");
    let finished = json!({
        "state": "finished",
        "result": {"scores": [0, 0], "winners": [1]},
        "forfeits": [{"seat": 0, "reason": "resigned"}],
    });
    assert_eq!((&resigned.body["version"], &resigned.body["status"]), (&json!(version(&before) + 1), &finished));
    assert!(resigned.body["receipt"]["leaf"].as_str().is_some_and(|leaf| leaf.contains("outcome finished")), "{resigned:?}");
    let over = state(&rest, &id).await;
    assert_eq!(over["status"], finished);
    assert_eq!(version(&over), version(&before) + 1);
    assert!(over["seed"].as_str().is_some(), "the seed is published: {over}");
    assert_eq!(over["seats"][0]["resigned"], true, "{}", over["seats"]);
    assert!(over["seats"][0].get("bot").is_none(), "no bot plays a seat of a game that ended: {}", over["seats"]);
    let events = rest.events(&id, None).await;
    let last = events.last().unwrap();
    assert_eq!((&last["type"], &last["seat"]), (&json!("seat_resigned"), &json!(0)), "{last}");
    assert!(last.get("handover").is_none(), "{last}");

    // Over: nothing more.
    let mv = &legal["moves"][0];
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &json!({"move": mv})).await, 409, "game_finished");
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(&bob), &json!({"move": mv})).await, 409, "game_finished");
    problem(&act(&rest, &id, "resign", Some(&bob)).await, 409, "game_finished");
    problem(&act(&rest, &id, "resign", Some(&ann)).await, 409, "game_finished");
    assert_eq!(version(&state(&rest, &id).await), version(&over), "a refusal appended something");

    let export = export_verifies(&rest, &id, "matches").await;
    imports_elsewhere(export, &over).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_battle13_camp_that_resigns_loses_the_match() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("battle13", &["North", "East", "South", "West"], json!({})).await;
    let id = id_of(&game);
    let players: BTreeMap<u64, Player> = (0..4).map(|seat| (seat, Player { rest: rest.clone(), token: token_of(&game, seat) })).collect();
    assert_eq!(play(&rest, &id, &players, 5, chooser(13)).await, 5);
    let before = state(&rest, &id).await;

    let resigned = act(&rest, &id, "resign", Some(&players[&0].token)).await;
    assert_eq!(resigned.status, 200, "{resigned:?}");
    let finished = json!({
        "state": "finished",
        "result": {"scores": [0, 0, 0, 0], "winners": [1, 3]},
        "forfeits": [{"seat": 0, "reason": "resigned"}],
    });
    assert_eq!((&resigned.body["version"], &resigned.body["status"]), (&json!(version(&before) + 1), &finished));
    assert!(resigned.body["receipt"]["leaf"].as_str().is_some_and(|leaf| leaf.contains("outcome finished")), "{resigned:?}");
    let over = state(&rest, &id).await;
    assert_eq!(over["status"], finished);
    // The partner's side is over too.
    problem(&act(&rest, &id, "resign", Some(&players[&2].token)).await, 409, "game_finished");
    let moves = rest.post(&format!("/v1/games/{id}/moves"), Some(&players[&1].token), &json!({"move": {"type": "pass"}})).await;
    problem(&moves, 409, "game_finished");
    assert_eq!(version(&state(&rest, &id).await), version(&over));
    let export = export_verifies(&rest, &id, "matches").await;
    imports_elsewhere(export, &over).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resigned_seat_of_a_three_player_game_is_played_on_by_a_greedy_bot() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob", "Cid"], json!({"first_seat": 0})).await;
    let id = id_of(&game);
    let mut players: BTreeMap<u64, Player> =
        (0..3).map(|seat| (seat, Player { rest: rest.clone(), token: token_of(&game, seat) })).collect();
    let mut choose = chooser(17);
    // Play on until it is Ann's turn again after a few moves.
    assert_eq!(play(&rest, &id, &players, 3, &mut choose).await, 3);
    let mut guard = 0;
    while state(&rest, &id).await["status"]["to_move"] != json!([0]) {
        assert_eq!(play(&rest, &id, &players, 1, &mut choose).await, 1);
        guard += 1;
        assert!(guard < 100, "Ann's turn never comes");
    }
    let before = state(&rest, &id).await;
    let ann = players.remove(&0).unwrap().token;
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await.body;
    let mv = legal["moves"][0].clone();
    assert!(!mv.is_null(), "Ann has a move: {legal}");

    let resigned = act(&rest, &id, "resign", Some(&ann)).await;
    assert_eq!(resigned.status, 200, "{resigned:?}");
    let at = version(&before) + 1;
    assert_eq!(resigned.body["version"], at);
    assert_eq!(resigned.body["status"], json!({"state": "in_progress", "to_move": [0]}), "the game goes on");
    let events = rest.events(&id, None).await;
    let record = &events[at as usize];
    assert_eq!((&record["type"], &record["seat"]), (&json!("seat_resigned"), &json!(0)), "{record}");
    let bot = &record["handover"]["bot"];
    assert_eq!(bot["level"], "greedy", "a greedy bot takes the seat: {record}");
    assert!(bot["think_ms"].is_u64(), "{record}");
    let seats = state(&rest, &id).await["seats"].clone();
    assert_eq!(seats[0]["resigned"], true, "{seats}");
    assert_eq!(&seats[0]["bot"], bot, "{seats}");

    // Its token only watches now.
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &json!({"move": mv})).await, 409, "seat_resigned");
    problem(&act(&rest, &id, "resign", Some(&ann)).await, 409, "seat_resigned");
    let admin = admin_of(&game);
    let handover =
        rest.put(&format!("/v1/games/{id}/seats/0/bot"), Some(&admin), &json!({"bot": {"level": "random", "think_ms": 0}})).await;
    problem(&handover, 409, "seat_resigned");
    let watching = rest.get(&format!("/v1/games/{id}"), Some(&ann)).await;
    assert_eq!((watching.status, &watching.body["viewer_seat"]), (200, &json!(0)), "{watching:?}");
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await.body;
    assert_eq!(legal["moves"], json!([]), "a resigned seat has no moves of its own: {legal}");

    // The bot plays the seat by itself.
    let moved = wait_for(&rest, &id, "moved by the bot", |s| version(s) > at).await;
    let events = rest.events(&id, None).await;
    let first = &events[at as usize + 1];
    assert_eq!((&first["type"], &first["seat"], &first["bot"]["level"]), (&json!("move"), &json!(0), &json!("greedy")), "{first}");
    assert!(version(&moved) > at);

    // Bob and Cid play the game out against it.
    play(&rest, &id, &players, 2000, &mut choose).await;
    let over = wait_for(&rest, &id, "finished", |s| s["status"]["state"] == "finished").await;
    assert_eq!(over["status"]["forfeits"], json!([{"seat": 0, "reason": "resigned"}]), "{}", over["status"]);
    let events = rest.events(&id, None).await;
    let mut by_bot = 0;
    for event in &events[at as usize + 1..] {
        assert_eq!(event["type"], "move", "{event}");
        if event["seat"] == 0 {
            assert_eq!(event["bot"]["level"], "greedy", "only the bot moves for the resigned seat: {event}");
            by_bot += 1;
        } else {
            assert!(event.get("bot").is_none(), "{event}");
        }
    }
    assert!(by_bot > 0);
    let engine = engine_replay::<ludo_cardinal::Game>(&over, &moves_only(&events));
    let ludo_engine::Status::Finished { result } = engine else { panic!("the engine's replay is not over: {engine:?}") };
    assert_eq!(over["status"]["result"], serde_json::to_value(&result).unwrap(), "the board decides the result");
    let export = export_verifies(&rest, &id, "matches").await;
    imports_elsewhere(export, &over).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_seat_requests_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null, null]), json!({"first_seat": 0}), false).await;
    let other = create(&rest, "cardinal", json!(["Dee", null]), json!({}), false).await;
    let id = id_of(&game);
    let (ann, admin) = (token_of(&game, 0), admin_of(&game));
    let bob = joined(&rest, &id, json!({"name": "Bob", "invitation": invitation(&game, 1)})).await;
    let bob = bob["token"].as_str().unwrap().to_string();
    let before = state(&rest, &id).await;
    assert_eq!((version(&before), &before["status"]), (1, &waiting(&[2])));
    let unchanged = |rest: Rest, id: String, before: Value| async move {
        let now = state(&rest, &id).await;
        assert_eq!(version(&now), version(&before), "a refusal appended something");
        assert_eq!(now["status"], before["status"]);
        assert_eq!(now["seats"], before["seats"]);
    };

    // An invitation used twice.
    let again = join(&rest, &id, json!({"name": "Zed", "invitation": invitation(&game, 1)})).await;
    problem(&again, 409, "seat_taken");
    assert_eq!(again.body["seat"], 1, "{again:?}");
    unchanged(rest.clone(), id.clone(), before.clone()).await;
    // No invitation to a private game; a wrong one; another game's.
    problem(&join(&rest, &id, json!({"name": "Zed"})).await, 401, "unauthorized");
    problem(&join(&rest, &id, json!({"name": "Zed", "invitation": "ludo_inv_0123456789abcdef"})).await, 401, "unauthorized");
    problem(&join(&rest, &id, json!({"name": "Zed", "invitation": invitation(&other, 1)})).await, 401, "unauthorized");
    problem(&join(&rest, &id, json!({"name": "Zed", "invitation": ann})).await, 401, "unauthorized");
    unchanged(rest.clone(), id.clone(), before.clone()).await;
    // Bad names; a seat the invitation does not open; a malformed body.
    let code = invitation(&game, 2);
    let long = "x".repeat(41);
    for name in ["", "   ", long.as_str(), "Zed\u{202e}"] {
        invalid(&join(&rest, &id, json!({"name": name, "invitation": code})).await, "name");
    }
    invalid(&join(&rest, &id, json!({"name": "Zed", "invitation": code, "seat": 1})).await, "seat");
    problem(&join(&rest, &id, json!({"invitation": code})).await, 400, "invalid_input");
    problem(&join(&rest, &id, json!({"name": "Zed", "invitation": code, "colour": "red"})).await, 400, "invalid_input");
    unchanged(rest.clone(), id.clone(), before.clone()).await;

    // Moves and resignations while seats are open.
    let mv = json!({"move": {"type": "pass"}, "expected_version": 1});
    let waiting_move = rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &mv).await;
    problem(&waiting_move, 409, "game_waiting");
    assert_eq!(waiting_move.body["open_seats"], json!([2]), "{waiting_move:?}");
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(&bob), &mv).await, 409, "game_waiting");
    problem(&act(&rest, &id, "resign", Some(&ann)).await, 409, "game_waiting");
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await;
    assert_eq!((legal.status, &legal.body["moves"]), (200, &json!([])), "nobody moves while waiting: {legal:?}");
    // The admin token is no seat's.
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(&admin), &mv).await, 401, "unauthorized");
    problem(&rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&admin)).await, 401, "unauthorized");
    problem(&act(&rest, &id, "leave", Some(&admin)).await, 401, "unauthorized");
    // Seat paths: not a number, not at the table, open.
    for seat in ["abc", "-1", "1.5", "256"] {
        invalid(&rest.post(&format!("/v1/games/{id}/seats/{seat}/token"), Some(&admin), &json!({})).await, "seat");
        invalid(&rest.put(&format!("/v1/games/{id}/seats/{seat}/bot"), Some(&admin), &json!({"bot": {"level": "random"}})).await, "seat");
    }
    invalid(&rest.post(&format!("/v1/games/{id}/seats/3/token"), Some(&admin), &json!({})).await, "seat");
    invalid(&rest.put(&format!("/v1/games/{id}/seats/7/bot"), Some(&admin), &json!({"bot": {"level": "random"}})).await, "seat");
    problem(&rest.post(&format!("/v1/games/{id}/seats/2/token"), Some(&admin), &json!({})).await, 409, "seat_open");
    // An open seat goes to a bot only with its level: without one (`bot`
    // null: "its player again") there is no player to give it back to.
    problem(&rest.put(&format!("/v1/games/{id}/seats/2/bot"), Some(&admin), &json!({"name": "Robo"})).await, 409, "seat_open");
    invalid(
        &rest.put(&format!("/v1/games/{id}/seats/2/bot"), Some(&admin), &json!({"bot": {"level": "random"}, "name": " "})).await,
        "name",
    );
    // A seat a person holds is theirs: the admin (who may play too) hands
    // neither Ann's seat (named at creation) nor Bob's (joined) to a bot.
    for seat in [0, 1] {
        let handover = rest.put(&format!("/v1/games/{id}/seats/{seat}/bot"), Some(&admin), &json!({"bot": {"level": "random"}})).await;
        problem(&handover, 403, "forbidden");
        problem(&rest.delete(&format!("/v1/games/{id}/seats/{seat}/bot"), Some(&admin)).await, 403, "forbidden");
    }
    // Admin routes with a seat's token, or none.
    problem(&rest.put(&format!("/v1/games/{id}/seats/2/bot"), Some(&ann), &json!({"bot": {"level": "random"}})).await, 401, "unauthorized");
    problem(&rest.put(&format!("/v1/games/{id}/seats/2/bot"), None, &json!({"bot": {"level": "random"}})).await, 401, "unauthorized");
    problem(&rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(&admin_of(&other)), &json!({})).await, 401, "unauthorized");
    problem(&rest.post(&format!("/v1/games/{id}/seats/1/token"), None, &json!({})).await, 401, "unauthorized");
    // A seat renews its own token only; the admin never renews the token a
    // person joined with (it would then read Bob's hand).
    problem(&rest.post(&format!("/v1/games/{id}/seats/0/token"), Some(&bob), &json!({})).await, 403, "forbidden");
    problem(&rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(&ann), &json!({})).await, 403, "forbidden");
    problem(&rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(&admin), &json!({})).await, 403, "forbidden");
    unchanged(rest.clone(), id.clone(), before.clone()).await;
    assert_eq!(rest.events(&id, None).await.len(), 2);

    // A public game needs an open seat; nothing is created without one.
    let games = rest.get("/v1/games?limit=1000", None).await.body["games"].as_array().unwrap().len();
    invalid(&post_game(&rest, "cardinal", json!(["Ann", "Bob"]), json!({}), true).await, "public");
    assert_eq!(rest.get("/v1/games?limit=1000", None).await.body["games"].as_array().unwrap().len(), games, "a refused create made a game");

    // Once full, the admin still cannot move, and the seats can.
    let cid = joined(&rest, &id, json!({"name": "Cid", "invitation": code})).await;
    assert_eq!(cid["status"], json!({"state": "in_progress", "to_move": [0]}));
    let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(&ann)).await.body;
    let mv = json!({"move": legal["moves"][0], "expected_version": 2});
    problem(&rest.post(&format!("/v1/games/{id}/moves"), Some(&admin), &mv).await, 401, "unauthorized");
    assert_eq!(version(&state(&rest, &id).await), 2);
    let moved = rest.post(&format!("/v1/games/{id}/moves"), Some(&ann), &mv).await;
    assert_eq!((moved.status, &moved.body["version"]), (200, &json!(3)), "{moved:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_hands_an_open_seat_to_a_bot_which_starts_the_game_and_plays() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null, null]), json!({"first_seat": 0}), true).await;
    let id = id_of(&game);
    let (ann, admin) = (token_of(&game, 0), admin_of(&game));
    let random = json!({"level": "random", "think_ms": 0});

    // A bot under its default name: the game still waits for seat 1.
    let first = rest.put(&format!("/v1/games/{id}/seats/2/bot"), Some(&admin), &json!({"bot": random})).await;
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(first.body, json!({"version": 1, "status": waiting(&[1])}));
    assert!(lobby(&rest).await.contains(&id), "seat 1 is still open to anyone");
    // A bot named by the admin takes the last one: the game starts.
    let second = rest.put(&format!("/v1/games/{id}/seats/1/bot"), Some(&admin), &json!({"bot": random, "name": "Robo"})).await;
    assert_eq!(second.status, 200, "{second:?}");
    assert_eq!(second.body, json!({"version": 2, "status": {"state": "in_progress", "to_move": [0]}}));
    assert!(!lobby(&rest).await.contains(&id));
    let now = state(&rest, &id).await;
    assert_eq!(
        now["seats"],
        json!([{"seat": 0, "name": "Ann"}, {"seat": 1, "name": "Robo", "bot": random}, {"seat": 2, "name": "Bot 2", "bot": random}])
    );
    let events = rest.events(&id, None).await;
    for (seq, seat, name) in [(1, 2, "Bot 2"), (2, 1, "Robo")] {
        let event = &events[seq];
        assert_eq!((&event["type"], &event["seat"], &event["name"]), (&json!("seat_joined"), &json!(seat), &json!(name)), "{event}");
        assert_eq!(event["handover"], json!({"bot": random}), "{event}");
    }
    // Nobody joins a seat a bot took.
    problem(&join(&rest, &id, json!({"name": "Zed", "invitation": invitation(&game, 1)})).await, 409, "game_started");

    // Ann plays; the bots answer.
    let ann_plays: BTreeMap<u64, Player> = [(0, Player { rest: rest.clone(), token: ann.clone() })].into();
    let mut choose = chooser(8);
    let mut guard = 0;
    let played = loop {
        play(&rest, &id, &ann_plays, 1, &mut choose).await;
        let events = rest.events(&id, None).await;
        let bots: Vec<&Value> = events[3..].iter().filter(|e| e["seat"] != 0).collect();
        if bots.iter().any(|e| e["seat"] == 1) && bots.iter().any(|e| e["seat"] == 2) {
            for event in bots {
                assert_eq!(event["bot"]["level"], "random", "a bot seat's move is its bot's: {event}");
            }
            break events.len();
        }
        guard += 1;
        assert!(guard < 50, "the bots do not play");
    };

    // Once the game runs, a bot's seat is nobody's to read: the admin (who
    // may sit at the table, as Ann's creator does) cannot take it back from
    // its bot nor get a token for it; it may only hand it to another bot.
    let before = state(&rest, &id).await;
    problem(&rest.delete(&format!("/v1/games/{id}/seats/1/bot"), Some(&admin)).await, 403, "forbidden");
    problem(&rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(&admin), &json!({})).await, 403, "forbidden");
    problem(&rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(&ann), &json!({})).await, 403, "forbidden");
    assert!(version(&state(&rest, &id).await) >= version(&before));
    assert!(
        rest.events(&id, None).await.iter().all(|e| e["type"] != "seat_token" && e["type"] != "seat_bot"),
        "a refusal appended something"
    );
    let greedy = json!({"level": "greedy", "think_ms": 0});
    let other = rest.put(&format!("/v1/games/{id}/seats/1/bot"), Some(&admin), &json!({"bot": greedy})).await;
    assert_eq!(other.status, 200, "{other:?}");
    let events = rest.events(&id, None).await;
    let n = events.len();
    let handed = events.iter().find(|e| e["type"] == "seat_bot").expect("the hand-over is a record");
    assert_eq!((&handed["seat"], &handed["handover"]), (&json!(1), &json!({"bot": greedy})), "{handed}");
    // Ann plays to the end against the two bots.
    play(&rest, &id, &ann_plays, 2000, &mut choose).await;
    let over = wait_for(&rest, &id, "finished", |s| s["status"]["state"] == "finished").await;
    let events = rest.events(&id, None).await;
    assert!(played <= n);
    for event in &events[n..] {
        assert_eq!(event["type"], "move", "{event}");
        assert_eq!(event.get("bot").is_some(), event["seat"] != 0, "seats 1 and 2 are the bots': {event}");
        if event["seat"] == 1 {
            assert_eq!(event["bot"]["level"], "greedy", "{event}");
        }
    }
    let export = export_verifies(&rest, &id, "matches").await;
    imports_elsewhere(export, &over).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_over_grpc_invitation_join_and_resignation() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut grpc = server.grpc().await;
    let create = |players: &[&str], open_seats: Vec<u32>| pb::CreateGameRequest {
        kind: "cardinal".into(),
        players: players.iter().map(|s| s.to_string()).collect(),
        open_seats,
        ..Default::default()
    };
    let created = grpc.create_game(create(&["Ann", ""], vec![1])).await.unwrap().into_inner();
    assert_eq!(
        created.status.as_ref().and_then(|s| s.state.clone()),
        Some(pb::status::State::Waiting(pb::Waiting { open_seats: vec![1] }))
    );
    assert_eq!(created.seats.len(), 1);
    assert!(!created.admin_token.is_empty());
    assert_eq!(created.invitations.len(), 2);
    let invitation = &created.invitations[1];
    assert_eq!((invitation.seat, invitation.open), (1, true));
    assert_eq!(invitation.link, format!("/games/{}/join#{}", created.id, invitation.code));
    assert!(!created.invitations[0].open);
    let ann = created.seats[0].token.clone();
    let get = |id: &str| pb::GetGameRequest { id: id.to_string() };

    let waiting_state = grpc.get_game(get(&created.id)).await.unwrap().into_inner();
    assert_eq!(grpc_state(&waiting_state), &pb::status::State::Waiting(pb::Waiting { open_seats: vec![1] }));
    assert!(waiting_state.seats[1].open && waiting_state.seats[1].name.is_empty());
    assert!(!waiting_state.public);
    let page = grpc.list_events(pb::ListEventsRequest { id: created.id.clone(), from: 0, limit: 10 }).await.unwrap().into_inner();
    let Some(pb::event::Record::GameCreated(record)) = &page.events[0].record else { panic!("{:?}", page.events[0]) };
    assert_eq!((record.open_seats.as_slice(), record.public), (&[1][..], false));

    let join = |invitation: Option<String>| pb::JoinGameRequest { id: created.id.clone(), name: "Bob".into(), invitation, seat: None };
    refused(grpc.join_game(join(None)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    refused(grpc.join_game(join(Some("ludo_inv_wrong".into()))).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    let bad_name = pb::JoinGameRequest { name: " ".into(), ..join(Some(invitation.code.clone())) };
    refused(grpc.join_game(bad_name).await.unwrap_err(), tonic::Code::InvalidArgument, "invalid_input");
    let legal = grpc.list_legal_moves(authed(pb::ListLegalMovesRequest { id: created.id.clone() }, &ann)).await.unwrap().into_inner();
    assert!(legal.moves.is_empty(), "nobody moves while waiting");
    assert_eq!(grpc.get_game(get(&created.id)).await.unwrap().into_inner().version, 0, "a refusal appended something");

    let bob = grpc.join_game(join(Some(invitation.code.clone()))).await.unwrap().into_inner();
    assert_eq!((bob.version, bob.seat, bob.name.as_str()), (1, 1, "Bob"));
    assert!(matches!(bob.status.as_ref().and_then(|s| s.state.as_ref()), Some(pb::status::State::InProgress(_))));
    refused(grpc.join_game(join(Some(invitation.code.clone()))).await.unwrap_err(), tonic::Code::FailedPrecondition, "game_started");
    let started = grpc.get_game(authed(get(&created.id), &bob.token)).await.unwrap().into_inner();
    assert!(matches!(grpc_state(&started), pb::status::State::InProgress(_)), "{:?}", started.status);
    assert_eq!(started.viewer_seat, Some(1));
    assert_eq!(started.seats[1].name, "Bob");
    assert!(!started.seats[1].open);

    // Bob resigns: a game of two ends, Ann winning.
    refused(grpc.resign(pb::ResignRequest { id: created.id.clone() }).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    let resigned = grpc.resign(authed(pb::ResignRequest { id: created.id.clone() }, &bob.token)).await.unwrap().into_inner();
    let finished = pb::status::State::Finished(pb::Finished {
        scores: vec![0, 0],
        winners: vec![0],
        forfeits: vec![pb::Forfeit { seat: 1, reason: pb::ForfeitReason::Resigned as i32 }],
    });
    assert_eq!((resigned.version, resigned.status.and_then(|s| s.state)), (2, Some(finished.clone())));
    let over = grpc.get_game(get(&created.id)).await.unwrap().into_inner();
    assert_eq!(grpc_state(&over), &finished);
    assert!(over.seats[1].resigned);
    assert!(over.seed.is_some());
    refused(
        grpc.resign(authed(pb::ResignRequest { id: created.id.clone() }, &ann)).await.unwrap_err(),
        tonic::Code::FailedPrecondition,
        "game_finished",
    );
    let page = grpc.list_events(pb::ListEventsRequest { id: created.id.clone(), from: 0, limit: 10 }).await.unwrap().into_inner();
    assert_eq!(page.events.len(), 3);
    let Some(pb::event::Record::SeatJoined(joined)) = &page.events[1].record else { panic!("{:?}", page.events[1]) };
    assert_eq!((joined.seat, joined.name.as_str(), joined.bot), (1, "Bob", None));
    let Some(pb::event::Record::SeatResigned(gave_up)) = &page.events[2].record else { panic!("{:?}", page.events[2]) };
    assert_eq!((gave_up.seat, gave_up.bot), (1, None));
    let export = grpc.export_game(pb::ExportGameRequest { id: created.id.clone() }).await.unwrap().into_inner().export;
    let report = grpc.verify_game(pb::VerifyGameRequest { export }).await.unwrap().into_inner();
    assert!(report.valid && report.replayed, "{report:?}");
    assert_eq!(report.seed, pb::SeedCheck::Matches as i32);

    // Leaving, a bot for an open seat, a new token and cancelling, over gRPC.
    let lobby = grpc.create_game(create(&["Ann", "", ""], vec![1, 2])).await.unwrap().into_inner();
    let admin = lobby.admin_token.clone();
    let ann = lobby.seats[0].token.clone();
    let id = lobby.id.clone();
    let cid = grpc
        .join_game(pb::JoinGameRequest {
            id: id.clone(),
            name: "Cid".into(),
            invitation: Some(lobby.invitations[1].code.clone()),
            seat: None,
        })
        .await
        .unwrap()
        .into_inner();
    let left = grpc.leave_game(authed(pb::LeaveGameRequest { id: id.clone() }, &cid.token)).await.unwrap().into_inner();
    assert_eq!(
        (left.version, left.status.and_then(|s| s.state)),
        (2, Some(pb::status::State::Waiting(pb::Waiting { open_seats: vec![1, 2] })))
    );
    refused(grpc.get_game(authed(get(&id), &cid.token)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    let robot = pb::SetSeatBotRequest {
        id: id.clone(),
        seat: 2,
        bot: Some(pb::BotRequest { level: pb::BotLevel::Random as i32, think_ms: Some(0) }),
        name: Some("Robo".into()),
    };
    refused(grpc.set_seat_bot(authed(robot.clone(), &ann)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    let set = grpc.set_seat_bot(authed(robot, &admin)).await.unwrap().into_inner();
    assert_eq!((set.version, set.status.and_then(|s| s.state)), (3, Some(pb::status::State::Waiting(pb::Waiting { open_seats: vec![1] }))));
    let now = grpc.get_game(get(&id)).await.unwrap().into_inner();
    assert_eq!(
        (now.seats[2].name.as_str(), now.seats[2].bot),
        ("Robo", Some(pb::BotSeat { level: pb::BotLevel::Random as i32, think_ms: 0 }))
    );
    let reissue = pb::ReissueTokenRequest { id: id.clone(), seat: 0 };
    let robots = pb::ReissueTokenRequest { id: id.clone(), seat: 2 };
    refused(grpc.reissue_token(authed(reissue.clone(), &cid.token)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    refused(grpc.reissue_token(authed(robots.clone(), &ann)).await.unwrap_err(), tonic::Code::PermissionDenied, "forbidden");
    refused(grpc.reissue_token(authed(robots, &admin)).await.unwrap_err(), tonic::Code::PermissionDenied, "forbidden");
    let issued = grpc.reissue_token(authed(reissue, &admin)).await.unwrap().into_inner();
    assert_eq!((issued.version, issued.seat), (4, 0));
    refused(grpc.get_game(authed(get(&id), &ann)).await.unwrap_err(), tonic::Code::Unauthenticated, "unauthorized");
    assert_eq!(grpc.get_game(authed(get(&id), &issued.token)).await.unwrap().into_inner().viewer_seat, Some(0));
    refused(
        grpc.cancel_game(authed(pb::CancelGameRequest { id: id.clone() }, &issued.token)).await.unwrap_err(),
        tonic::Code::Unauthenticated,
        "unauthorized",
    );
    let cancelled = grpc.cancel_game(authed(pb::CancelGameRequest { id: id.clone() }, &admin)).await.unwrap().into_inner();
    assert_eq!((cancelled.version, cancelled.status.and_then(|s| s.state)), (5, Some(pb::status::State::Cancelled(pb::Cancelled {}))));
    assert_eq!(grpc_state(&grpc.get_game(get(&id)).await.unwrap().into_inner()), &pb::status::State::Cancelled(pb::Cancelled {}));
    let late = pb::JoinGameRequest { id: id.clone(), name: "Dee".into(), invitation: Some(lobby.invitations[1].code.clone()), seat: None };
    refused(grpc.join_game(late).await.unwrap_err(), tonic::Code::FailedPrecondition, "game_cancelled");
    refused(
        grpc.cancel_game(authed(pb::CancelGameRequest { id: id.clone() }, &admin)).await.unwrap_err(),
        tonic::Code::FailedPrecondition,
        "game_cancelled",
    );
    let page = grpc.list_events(pb::ListEventsRequest { id: id.clone(), from: 0, limit: 10 }).await.unwrap().into_inner();
    let records: Vec<_> = page.events.iter().map(|e| e.record.clone().expect("a record")).collect();
    assert!(matches!(records[2], pb::event::Record::SeatLeft(pb::SeatLeftRecord { seat: 1 })), "{:?}", records[2]);
    assert!(
        matches!(&records[3], pb::event::Record::SeatJoined(j) if j.seat == 2 && j.name == "Robo" && j.bot.is_some()),
        "{:?}",
        records[3]
    );
    assert_eq!(records[4], pb::event::Record::SeatToken(pb::SeatTokenRecord { seat: 0, by: pb::TokenBy::Admin.into() }));
    assert!(matches!(records[5], pb::event::Record::GameCancelled(_)), "{:?}", records[5]);
    assert_eq!(records.len(), 6);
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_seated_at_creation_waits_for_the_table_then_moves_first() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let random = json!({"level": "random", "think_ms": 0});
    let game = create(&rest, "cardinal", json!([{"name": "Robo", "bot": random}, null]), json!({"first_seat": 0}), false).await;
    let id = id_of(&game);
    assert_eq!(game["status"], waiting(&[1]));
    // Nobody moves while a seat is open, not even the bot to move first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let still = state(&rest, &id).await;
    assert_eq!((version(&still), &still["status"]), (0, &waiting(&[1])), "the bot moved at a table still waiting");
    let ann = joined(&rest, &id, json!({"name": "Ann", "invitation": invitation(&game, 1)})).await;
    assert_eq!(ann["status"], json!({"state": "in_progress", "to_move": [0]}));
    // The last join wakes the bot: it plays its turn, then it is Ann's.
    let moved =
        wait_for(&rest, &id, "at Ann's turn", |s| s["status"]["state"] != "in_progress" || s["status"]["to_move"] == json!([1])).await;
    assert!(version(&moved) >= 2, "{moved}");
    let events = rest.events(&id, None).await;
    for event in &events[2..] {
        assert_eq!((&event["type"], &event["seat"], &event["bot"]["level"]), (&json!("move"), &json!(0), &json!("random")), "{event}");
    }
    server.stop().await;
}

/// `DELETE /v1/games/{id}/seats/{seat}/bot` (and gRPC `SetSeatBot` without a
/// bot) on a seat nobody has taken is documented as `409 seat_open`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taking_a_bot_off_an_open_seat_is_refused_as_seat_open() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null]), json!({}), false).await;
    let id = id_of(&game);
    let admin = admin_of(&game);
    let mut grpc = server.grpc().await;
    let request = pb::SetSeatBotRequest { id: id.clone(), seat: 1, bot: None, name: None };
    let status = grpc.set_seat_bot(authed(request, &admin)).await.unwrap_err();
    let answer = rest.delete(&format!("/v1/games/{id}/seats/1/bot"), Some(&admin)).await;
    assert_eq!(version(&state(&rest, &id).await), 0, "a refusal appended something");
    problem(&answer, 409, "seat_open");
    assert_eq!(answer.body["seat"], 1, "{answer:?}");
    refused(status, tonic::Code::FailedPrecondition, "seat_open");
    drop(grpc);
    server.stop().await;
}

/// A game's seat records are bounded (256); joining and leaving a public
/// game, which anyone may do, must not use them up so that its admin can no
/// longer call it off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_can_still_cancel_a_public_game_after_many_joins_and_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null, null]), json!({}), true).await;
    let id = id_of(&game);
    let stranger = server.rest();
    let mut cycles = 0;
    loop {
        let answer = join(&stranger, &id, json!({"name": "Zed"})).await;
        if answer.status != 200 {
            // The table is out of seat records.
            invalid(&answer, "game");
            break;
        }
        let left = act(&stranger, &id, "leave", answer.body["token"].as_str()).await;
        assert_eq!(left.status, 200, "{left:?}");
        cycles += 1;
        assert!(cycles <= 1000, "joins and leaves are unbounded");
    }
    let before = state(&rest, &id).await;
    assert_eq!(before["status"], waiting(&[1, 2]), "{}", before["status"]);
    assert!(lobby(&rest).await.contains(&id), "the game is still offered in the lobby");
    let cancelled = act(&rest, &id, "cancel", Some(&admin_of(&game))).await;
    assert_eq!(
        (cancelled.status, &cancelled.body["status"]),
        (200, &json!({"state": "cancelled"})),
        "after {cycles} joins and leaves by a stranger (version {}), the admin cannot cancel: {cancelled:?}",
        version(&before)
    );
    server.stop().await;
}

/// The cards are dealt when the game is created, but nobody sees a hand
/// before every seat is taken: a seat's next player must not get a hand
/// that someone who sat there and left (or the creator, who holds every
/// invitation) has seen. Once the game starts, each seat sees its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_hand_is_seen_before_the_game_starts() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "kardinal", json!(["Ann", null, null]), json!({}), true).await;
    let id = id_of(&game);
    let ann = token_of(&game, 0);
    let bea = joined(&rest, &id, json!({"name": "Bea"})).await;
    let bea = bea["token"].as_str().unwrap().to_string();
    let spectator = rest.get(&format!("/v1/games/{id}"), None).await.body["view"].clone();
    for token in [&ann, &bea] {
        let seen = rest.get(&format!("/v1/games/{id}"), Some(token)).await;
        assert_eq!(seen.status, 200, "{seen:?}");
        assert_eq!(seen.body["view"], spectator, "a seat of a waiting game sees what a spectator sees");
        let events = rest.get(&format!("/v1/games/{id}/events"), Some(token)).await;
        let public = rest.get(&format!("/v1/games/{id}/events"), None).await;
        assert_eq!(events.body["events"], public.body["events"], "nor more of the log");
        problem(&rest.get(&format!("/v1/games/{id}/info"), Some(token)).await, 409, "game_waiting");
    }
    // Bea leaves and comes back at the last seat: the game starts, and now
    // each seat sees its own hand (more than a spectator).
    assert_eq!(act(&rest, &id, "leave", Some(&bea)).await.status, 200);
    let cy = joined(&rest, &id, json!({"name": "Cy"})).await;
    let dee = joined(&rest, &id, json!({"name": "Dee"})).await;
    assert_eq!(dee["status"]["state"], "in_progress", "{dee}");
    let spectator = rest.get(&format!("/v1/games/{id}"), None).await.body["view"].clone();
    for token in [ann.as_str(), cy["token"].as_str().unwrap(), dee["token"].as_str().unwrap()] {
        let seen = rest.get(&format!("/v1/games/{id}"), Some(token)).await.body["view"].clone();
        assert_ne!(seen, spectator, "a seat of a started game sees its hand");
        assert_eq!(rest.get(&format!("/v1/games/{id}/info"), Some(token)).await.status, 200);
    }
    assert_eq!(rest.get(&format!("/v1/games/{id}"), Some(&bea)).await.status, 401, "the token of a seat left opens nothing");
    server.stop().await;
}

/// The steps say what each seat record did, naming the players, and a
/// table has one player of each name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_steps_tell_who_joined_left_and_resigned_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = create(&rest, "cardinal", json!(["Ann", null, null]), json!({}), true).await;
    let id = id_of(&game);
    let bea = joined(&rest, &id, json!({"name": "Bea"})).await;
    invalid(&join(&rest, &id, json!({"name": " ann "})).await, "name");
    assert_eq!(act(&rest, &id, "leave", bea["token"].as_str()).await.status, 200);
    joined(&rest, &id, json!({"name": "Cy"})).await;
    let dee = joined(&rest, &id, json!({"name": "Dee"})).await;
    assert_eq!(act(&rest, &id, "resign", dee["token"].as_str()).await.status, 200);
    let steps = rest.get(&format!("/v1/games/{id}/steps?from=1"), None).await.body;
    let lines: Vec<String> = steps["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        lines[..5],
        ["Bea joined", "Bea left", "Cy joined", "Dee joined", "Dee resigned; the greedy bot plays the seat from now on"],
        "{lines:?}"
    );
    server.stop().await;
}

/// Asserts a gRPC `invalid_input` refusal naming `field`.
fn grpc_invalid(status: tonic::Status, field: &str) {
    refused(status.clone(), tonic::Code::InvalidArgument, "invalid_input");
    let info = status.get_details_error_info().expect("an ErrorInfo detail");
    assert_eq!(info.metadata.get("field").map(String::as_str), Some(field), "{status:?}");
    let bad = status.get_details_bad_request().expect("a BadRequest detail");
    assert_eq!(bad.field_violations[0].field, field, "{status:?}");
}

/// The REST view of a new game that a twin made the same way must equal:
/// everything but its id, secrets and times.
fn comparable(created: &Value, state: &Value, events: &[Value]) -> Value {
    // The `game_created` record, less its game's own id and seed (and the
    // effects, which name the first seat the seed drew).
    let mut record = events[0]["game"].clone();
    for volatile in ["game_id", "seed_commitment"] {
        record.as_object_mut().unwrap().remove(volatile);
    }
    json!({
        "created": {
            "seats": created["seats"].as_array().unwrap().iter().map(|s| json!([s["seat"], s["name"]])).collect::<Vec<_>>(),
            "invitations": created["invitations"].as_array().map(|all| all.iter().map(|i| json!([i["seat"], i["open"]])).collect::<Vec<_>>()),
            "status": created["status"],
        },
        "state": {"seats": state["seats"], "status": state["status"], "public": state["public"], "version": state["version"]},
        "record": record,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_seats_create_the_game_rest_players_do() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut grpc = server.grpc().await;
    // A person, a server bot and an open seat, over REST…
    let players = json!(["Ann", {"name": "Robo", "bot": {"level": "greedy", "think_ms": 0}}, null]);
    let by_rest = create(&rest, "cardinal", players, json!({}), true).await;
    let rest_id = id_of(&by_rest);
    // …and over gRPC with `seats`.
    use pb::player_seat::Seat;
    let seat = |seat: Seat| pb::PlayerSeat { seat: Some(seat) };
    let robo = pb::BotPlayer { name: "Robo".into(), bot: Some(pb::BotRequest { level: pb::BotLevel::Greedy.into(), think_ms: Some(0) }) };
    let with_seats =
        |seats: Vec<pb::PlayerSeat>| pb::CreateGameRequest { kind: "cardinal".into(), seats, public: true, ..Default::default() };
    let three = vec![seat(Seat::Name("Ann".into())), seat(Seat::Bot(robo.clone())), seat(Seat::Open(pb::OpenSeat {}))];
    let by_grpc = grpc.create_game(with_seats(three.clone())).await.unwrap().into_inner();
    assert_eq!(grpc_state_of(by_grpc.status.as_ref()), &pb::status::State::Waiting(pb::Waiting { open_seats: vec![2] }));
    assert_eq!(
        by_grpc.seats.iter().map(|s| (s.seat, s.name.as_str())).collect::<Vec<_>>(),
        [(0, "Ann")],
        "only the person's seat has a token"
    );
    assert_eq!(by_grpc.invitations.iter().map(|i| (i.seat, i.open)).collect::<Vec<_>>(), [(0, false), (1, false), (2, true)]);
    // The older form, for the same table.
    let older = pb::CreateGameRequest {
        kind: "cardinal".into(),
        players: vec!["Ann".into(), "Robo".into(), String::new()],
        bots: [(1, robo.bot.unwrap())].into(),
        open_seats: vec![2],
        public: true,
        ..Default::default()
    };
    let by_older = grpc.create_game(older.clone()).await.unwrap().into_inner();
    assert_eq!(grpc_state_of(by_older.status.as_ref()), grpc_state_of(by_grpc.status.as_ref()));

    // The three games are one table: seats, bots, open seat, invitations, record.
    let view = async |id: &str, created: Value| {
        let state = state(&rest, id).await;
        comparable(&created, &state, &rest.events(id, None).await)
    };
    let expected = view(&rest_id, by_rest.clone()).await;
    assert_eq!(expected["state"]["seats"][1]["bot"]["level"], "greedy", "{expected}");
    assert_eq!(expected["state"]["status"], waiting(&[2]), "{expected}");
    for created in [&by_grpc, &by_older] {
        let as_json = json!({
            "seats": created.seats.iter().map(|s| json!({"seat": s.seat, "name": s.name})).collect::<Vec<_>>(),
            "invitations": created.invitations.iter().map(|i| json!({"seat": i.seat, "open": i.open})).collect::<Vec<_>>(),
            "status": by_rest["status"],
        });
        assert_eq!(view(&created.id, as_json).await, expected, "gRPC's game {} is REST's", created.id);
    }
    // The gRPC game is joined like REST's: by the open seat's invitation.
    let code = by_grpc.invitations[2].code.clone();
    let joined = joined(&rest, &by_grpc.id, json!({"name": "Bob", "invitation": code})).await;
    assert_eq!((&joined["seat"], &joined["status"]["state"]), (&json!(2), &json!("in_progress")));

    // `seats` with any of the older fields: refused, naming the older field.
    let mut mixed = with_seats(three.clone());
    mixed.players = vec!["Ann".into()];
    grpc_invalid(grpc.create_game(mixed).await.unwrap_err(), "players");
    let mut mixed = with_seats(three.clone());
    mixed.bots = older.bots.clone();
    grpc_invalid(grpc.create_game(mixed).await.unwrap_err(), "bots");
    let mut mixed = with_seats(three.clone());
    mixed.open_seats = vec![2];
    grpc_invalid(grpc.create_game(mixed).await.unwrap_err(), "open_seats");
    // A seat with nothing set, a bot's seat without its bot or level.
    let mut empty = three.clone();
    empty[1] = pb::PlayerSeat { seat: None };
    grpc_invalid(grpc.create_game(with_seats(empty)).await.unwrap_err(), "seats[1]");
    let mut botless = three.clone();
    botless[1] = seat(Seat::Bot(pb::BotPlayer { name: "Robo".into(), bot: None }));
    grpc_invalid(grpc.create_game(with_seats(botless)).await.unwrap_err(), "seats[1].bot.bot");
    let mut levelless = three.clone();
    levelless[1] = seat(Seat::Bot(pb::BotPlayer { name: "Robo".into(), bot: Some(pb::BotRequest::default()) }));
    grpc_invalid(grpc.create_game(with_seats(levelless)).await.unwrap_err(), "seats[1].bot.bot.level");
    // The service's bounds, as REST has them, naming the seat's field.
    let mut blank = three.clone();
    blank[0] = seat(Seat::Name(" ".into()));
    grpc_invalid(grpc.create_game(with_seats(blank)).await.unwrap_err(), "seats[0].name");
    invalid(&post_game(&rest, "cardinal", json!([" ", "Bob"]), json!({}), false).await, "players[0]");
    let mut unnamed_bot = three.clone();
    unnamed_bot[1] = seat(Seat::Bot(pb::BotPlayer { name: String::new(), ..robo.clone() }));
    grpc_invalid(grpc.create_game(with_seats(unnamed_bot)).await.unwrap_err(), "seats[1].bot.name");
    let one = vec![seat(Seat::Name("Ann".into()))];
    grpc_invalid(grpc.create_game(with_seats(one)).await.unwrap_err(), "seats");
    invalid(&post_game(&rest, "cardinal", json!(["Ann"]), json!({}), false).await, "players");
    let mut slow = three;
    slow[1] = seat(Seat::Bot(pb::BotPlayer { bot: Some(pb::BotRequest { think_ms: Some(10_001), ..robo.bot.unwrap() }), ..robo }));
    grpc_invalid(grpc.create_game(with_seats(slow)).await.unwrap_err(), "seats[1].bot.bot.think_ms");
    let listed = grpc.list_games(pb::ListGamesRequest::default()).await.unwrap().into_inner().games;
    assert_eq!(listed.len(), 3, "no refusal created a game");
    drop(grpc);
    server.stop().await;
}

fn grpc_state_of(status: Option<&pb::Status>) -> &pb::status::State {
    status.and_then(|s| s.state.as_ref()).expect("a status")
}
