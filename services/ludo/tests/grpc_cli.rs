//! `ludo grpc`, the API's own small grpcurl, against a real `ludo serve`:
//! it lists the methods, plays part of a Cardinal game (CreateGame with
//! seats, ListLegalMoves and SubmitMove with a seat's token, GetGame),
//! prints a refusal's code and reason and exits 1, refuses a request that
//! is not one with 2, and follows a finished game's WatchGame to its end.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The longest any one `ludo grpc` may take here.
const PATIENCE: Duration = Duration::from_secs(60);

/// Runs `ludo grpc --server BASE ARGS…` with `token` in `LUDO_TOKEN` and
/// `stdin` on its standard input (none: an empty one); its output.
fn ludo_grpc(base: &str, token: Option<&str>, args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ludo"));
    command.args(["grpc", "--server", base]).args(args).env_remove("LUDO_TOKEN").env_remove("LUDO_SERVER");
    if let Some(token) = token {
        command.env("LUDO_TOKEN", token);
    }
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start ludo grpc");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default().as_bytes()).unwrap();
    drop(input);
    let pid = child.id();
    let (send, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(child.wait_with_output()));
    match outcome.recv_timeout(PATIENCE) {
        Ok(output) => output.expect("ludo grpc's output"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("`ludo grpc {}` did not end within {PATIENCE:?}", args.join(" "));
        }
    }
}

/// The JSON answer of a call that must succeed.
fn answer(base: &str, token: Option<&str>, method: &str, request: &Value) -> Value {
    let output = ludo_grpc(base, token, &[method, &request.to_string()], None);
    assert!(output.status.success(), "{method} {request}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{method}: not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)))
}

/// A refused call's exit code, standard output and standard error.
fn refused(base: &str, token: Option<&str>, args: &[&str]) -> (Option<i32>, String, String) {
    let output = ludo_grpc(base, token, args, None);
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn token_of(created: &Value, seat: u64) -> String {
    let seats = created["seats"].as_array().expect("seats");
    let entry = seats.iter().find(|s| s["seat"] == seat).unwrap_or_else(|| panic!("seat {seat} in {created}"));
    entry["token"].as_str().unwrap().to_string()
}

#[test]
fn list_names_every_method_and_requests_that_are_none_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path());
    let output = ludo_grpc(&server.base, None, &["list"], None);
    assert!(output.status.success());
    let listed = String::from_utf8(output.stdout).unwrap();
    assert!(listed.starts_with("ludo.v1.Ludo\n"), "{listed}");
    for line in [
        "  CreateGame(ludo.v1.CreateGameRequest) returns (ludo.v1.CreateGameResponse)\n",
        "  WatchGame(ludo.v1.WatchGameRequest) returns (stream ludo.v1.GameUpdate)\n",
        "grpc.health.v1.Health\n",
    ] {
        assert!(listed.contains(line), "no {line:?} in\n{listed}");
    }
    // The health service, its request from standard input.
    let output = ludo_grpc(&server.base, None, &["grpc.health.v1.Health/Check", "-"], Some(r#"{"service": "ludo.v1.Ludo"}"#));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(serde_json::from_slice::<Value>(&output.stdout).unwrap(), json!({"status": "SERVING"}));

    // What is not a request exits 2 without calling, naming what is wrong.
    let bad = |args: &[&str], says: &str| {
        let (code, out, err) = refused(&server.base, None, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(says), "{args:?}: no {says:?} in {err}");
    };
    bad(&["NoSuchMethod", "{}"], "no method `NoSuchMethod`");
    bad(&["list", "{}"], "`list` takes no request");
    bad(&["CreateGame", r#"{"kind": "cardinal", "seats": [{"bot": {"name": "B", "bot": {"level": 7.5}}}]}"#], "`seats[0].bot.bot.level`");
    bad(&["CreateGame", r#"{"kind": "cardinal", "players": ["Ann"], "colour": 1}"#], "colour");
    bad(&["GetGame", "{"], "ludo.v1.GetGameRequest");
    // No server there: the call fails (1), it does not hang.
    let (code, _, err) = refused("http://127.0.0.1:1", None, &["ListKinds", "{}"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    server.terminate();
}

#[test]
fn part_of_a_cardinal_game_played_with_ludo_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path());
    let base = server.base.as_str();

    // A table of a person, a server bot and an open seat, as REST's `players`.
    let table = json!({"kind": "cardinal", "seats": [
        {"name": "Ann"}, {"bot": {"name": "Robo", "bot": {"level": "BOT_LEVEL_GREEDY", "think_ms": 0}}}, {"open": {}}]});
    let created = answer(base, None, "ludo.v1.Ludo/CreateGame", &table);
    assert_eq!(created["status"], json!({"waiting": {"open_seats": [2]}}), "{created}");
    assert_eq!(created["seats"].as_array().unwrap().len(), 1, "a token for the person's seat only: {created}");
    let opens: Vec<&Value> = created["invitations"].as_array().unwrap().iter().map(|i| &i["open"]).collect();
    assert_eq!(opens, [false, false, true], "{created}");
    let state = answer(base, None, "GetGame", &json!({"id": created["id"]}));
    let seats: Vec<Value> = state["seats"].as_array().unwrap().iter().map(|s| json!([s["name"], s["bot"]["level"], s["open"]])).collect();
    assert_eq!(seats, [json!(["Ann", null, false]), json!(["Robo", "BOT_LEVEL_GREEDY", false]), json!(["", null, true])]);

    // Two people, the request from standard input; four moves.
    let request = json!({"kind": "cardinal", "seats": [{"name": "Ann"}, {"name": "Bob"}]}).to_string();
    let output = ludo_grpc(base, None, &["CreateGame"], Some(&request));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let game: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((&game["version"], &game["kind"]), (&json!("0"), &json!("cardinal")), "{game}");
    let id = game["id"].as_str().unwrap().to_string();
    let tokens = [token_of(&game, 0), token_of(&game, 1)];
    for played in 0..4u64 {
        let state = answer(base, None, "GetGame", &json!({"id": id}));
        assert_eq!(state["version"], played.to_string(), "{state}");
        let seat = state["status"]["in_progress"]["to_move"][0].as_u64().unwrap_or_else(|| panic!("in progress: {state}"));
        let token = &tokens[usize::try_from(seat).unwrap()];
        let legal = answer(base, Some(token), "ListLegalMoves", &json!({"id": id}));
        assert_eq!((&legal["seat"], &legal["version"]), (&json!(seat), &json!(played.to_string())), "{legal}");
        let other = &tokens[1 - usize::try_from(seat).unwrap()];
        let mv = legal["moves"][0].clone();
        assert!(mv["cardinal"].is_object(), "{legal}");
        if played == 0 {
            // The other seat's move is refused: code, reason and detail on stderr.
            let request = json!({"id": id, "move": mv}).to_string();
            let (code, out, err) = refused(base, Some(other), &["SubmitMove", &request]);
            assert_eq!(code, Some(1), "{err}");
            assert!(out.is_empty(), "{out}");
            assert!(err.contains("FAILED_PRECONDITION") && err.contains("reason: not_your_turn"), "{err}");
            assert!(err.contains(&format!("to_move: {seat}")), "{err}");
            assert!(!err.contains(other.as_str()), "the token is never printed: {err}");
            // No token at all: UNAUTHENTICATED.
            let (code, _, err) = refused(base, None, &["ListLegalMoves", &json!({"id": id}).to_string()]);
            assert_eq!(code, Some(1), "{err}");
            assert!(err.contains("UNAUTHENTICATED") && err.contains("reason: unauthorized"), "{err}");
        }
        let request = json!({"id": id, "move": mv, "expected_version": played.to_string(), "omit_view": true});
        let accepted = answer(base, Some(token), "SubmitMove", &request);
        assert_eq!(accepted["version"], (played + 1).to_string(), "{accepted}");
        assert!(accepted["effects"].as_array().is_some_and(|e| !e.is_empty()), "{accepted}");
        assert!(accepted.get("view").is_none(), "omit_view: {accepted}");
    }
    let state = answer(base, Some(&tokens[0]), "GetGame", &json!({"id": id}));
    assert_eq!((&state["version"], &state["viewer_seat"]), (&json!("4"), &json!(0)), "{state}");
    assert_eq!(state["seats"][0], json!({"seat": 0, "name": "Ann", "open": false, "resigned": false}), "every field is printed");
    // --skip-defaults: the proto3 JSON mapping's short form.
    let output = ludo_grpc(base, None, &["--skip-defaults", "GetGame", &json!({"id": id}).to_string()], None);
    let short: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(short["seats"][0], json!({"name": "Ann"}), "{short}");
    server.terminate();
}

#[test]
fn watch_game_prints_a_finished_games_records_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(dir.path());
    let base = server.base.as_str();
    let game = answer(base, None, "CreateGame", &json!({"kind": "cardinal", "seats": [{"name": "Ann"}, {"name": "Bob"}]}));
    let id = game["id"].as_str().unwrap().to_string();
    let resigned = answer(base, Some(&token_of(&game, 1)), "Resign", &json!({"id": id}));
    assert_eq!(resigned["status"]["finished"]["winners"], json!([0]), "{resigned}");
    let started = Instant::now();
    let output = ludo_grpc(base, None, &["WatchGame", &json!({"id": id}).to_string()], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(started.elapsed() < PATIENCE);
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("one JSON object per line")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["event"]["game_created"]["seats"], json!(["Ann", "Bob"]), "{text}");
    assert_eq!(lines[1]["event"]["seat_resigned"]["seat"], 1, "{text}");
    assert_eq!(lines[1]["status"], resigned["status"], "{text}");
    // From a later record: only what follows.
    let output = ludo_grpc(base, None, &["WatchGame", &json!({"id": id, "from": 1}).to_string()], None);
    assert_eq!(String::from_utf8(output.stdout).unwrap().lines().count(), 1);
    server.terminate();
}
