//! External checks of the OpenAPI document, with tools from outside the Rust
//! toolchain:
//!
//! - a Python client generated from the served document (openapi-python-client)
//!   round-trips every kind's options, answers and moves against a real server
//!   (`tests/clients/python/roundtrip.py`);
//! - `redocly lint` with its recommended ruleset passes on
//!   `openapi/openapi.json` (config: `redocly.yaml`);
//! - a real gRPC-Web client (Connect-ES's gRPC-Web transport over HTTP/1.1,
//!   with the service read at run time from the proto crate's descriptor set,
//!   no generated code) calls every unary RPC and `WatchGame` while playing a
//!   game to its end, reads refusals' codes and ErrorInfo details, and checks
//!   the transparency log as an outside auditor would (checkpoint signatures,
//!   inclusion and consistency proofs, with node:crypto only)
//!   (`tests/clients/grpcweb/roundtrip.mjs`);
//! - the Python client also reads the transparency log over REST (`/v1/log`,
//!   its checkpoint, key and consistency proofs, a game's receipt).
//!
//! The tools are installed at pinned versions into `.tools/` by
//! `.ci/install-client-tools`. Where they are missing, each test says so and
//! passes (skips) — unless `LUDO_REQUIRE_CLIENT_TOOLS=1`, which makes a missing
//! tool a failure. `LUDO_PYTHON` names the Python that has the generator (by
//! default `.tools/venv/bin/python3`, then `python3`), `LUDO_REDOCLY` the
//! redocly executable (by default `.tools/npm/node_modules/.bin/redocly`, then
//! `redocly` on `PATH`), `LUDO_NODE` the Node.js to run the gRPC-Web client
//! with (by default `node` on `PATH`) and `LUDO_GRPCWEB_PACKAGES` the directory
//! whose `node_modules` holds its packages (by default `.tools/grpcweb`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ludo_blackbox::TestServer;
use ludo_blackbox::tools::{candidates, missing, pinned_requirement, repo, run};
use serde_json::{Value, json};

/// The value of `NAME=value` in `.ci/install-client-tools` (the pins live there).
fn pinned(name: &str) -> String {
    let path = repo().join(".ci/install-client-tools");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name}= in {}", path.display()))
        .trim()
        .to_string()
}

/// The generator's pinned version, from its requirements file.
fn pinned_generator() -> String {
    pinned_requirement("tests/clients/python/requirements.txt", "openapi-python-client")
}

/// A Python with the pinned generator (and the generated client's needs), or why there is none.
fn python_with_generator() -> Result<PathBuf, String> {
    let want = pinned_generator();
    let probe =
        "import openapi_python_client, httpx, attrs; from importlib.metadata import version; print(version('openapi-python-client'))";
    let mut tried = Vec::new();
    for python in candidates("LUDO_PYTHON", vec![repo().join(".tools/venv/bin/python3"), PathBuf::from("python3")]) {
        let mut command = Command::new(&python);
        command.args(["-c", probe]);
        match run(command, Duration::from_secs(60)) {
            Ok(ran) if ran.status.success() && ran.stdout.trim() == want => return Ok(python),
            Ok(ran) if ran.status.success() => {
                tried.push(format!("{} has openapi-python-client {}, not the pinned {want}", python.display(), ran.stdout.trim()))
            }
            Ok(ran) => {
                tried.push(format!("{}: {}", python.display(), ran.stderr.trim().lines().last().unwrap_or("the generator does not import")))
            }
            Err(e) => tried.push(format!("{}: {e}", python.display())),
        }
    }
    Err(format!("no Python with openapi-python-client {want}: {}", if tried.is_empty() { "none found".into() } else { tried.join("; ") }))
}

/// The pinned redocly, or why there is none.
fn redocly() -> Result<PathBuf, String> {
    let want = pinned("REDOCLY_VERSION");
    let mut tried = Vec::new();
    for redocly in candidates("LUDO_REDOCLY", vec![repo().join(".tools/npm/node_modules/.bin/redocly"), PathBuf::from("redocly")]) {
        let mut command = Command::new(&redocly);
        command.arg("--version").env("REDOCLY_TELEMETRY", "off").env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true");
        match run(command, Duration::from_secs(60)) {
            Ok(ran) if ran.status.success() && ran.stdout.trim() == want => return Ok(redocly),
            Ok(ran) if ran.status.success() => {
                tried.push(format!("{} is version {}, not the pinned {want}", redocly.display(), ran.stdout.trim()))
            }
            Ok(ran) => tried.push(format!("{}: exit {}: {}", redocly.display(), ran.status, ran.stderr.trim())),
            Err(e) => tried.push(format!("{}: {e}", redocly.display())),
        }
    }
    Err(format!("no @redocly/cli {want}: {}", if tried.is_empty() { "none found".into() } else { tried.join("; ") }))
}

/// The gRPC-Web client's packages and their pinned versions, from its `package.json`.
fn pinned_grpcweb() -> Vec<(String, String)> {
    let path = repo().join("tests/clients/grpcweb/package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let manifest: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let pins: Vec<(String, String)> = manifest["dependencies"]
        .as_object()
        .unwrap_or_else(|| panic!("no dependencies in {}", path.display()))
        .iter()
        .map(|(name, version)| (name.clone(), version.as_str().unwrap_or_default().to_string()))
        .collect();
    assert!(pins.iter().all(|(_, v)| v.chars().all(|c| c.is_ascii_digit() || c == '.')), "pin exact versions: {pins:?}");
    pins
}

/// A Node.js (20 or later) and the directory holding the gRPC-Web client's
/// packages at their pinned versions, or why there are none.
fn node_with_grpcweb() -> Result<(PathBuf, PathBuf), String> {
    let mut tried = Vec::new();
    let mut found = None;
    for node in candidates("LUDO_NODE", vec![PathBuf::from("node")]) {
        let mut command = Command::new(&node);
        command.arg("--version");
        match run(command, Duration::from_secs(60)) {
            Ok(ran) if ran.status.success() => {
                let version = ran.stdout.trim().to_string();
                let major: u32 = version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
                if major >= 20 {
                    found = Some(node);
                    break;
                }
                tried.push(format!("{} is Node.js {version}; 20 or later is needed", node.display()));
            }
            Ok(ran) => tried.push(format!("{}: exit {}: {}", node.display(), ran.status, ran.stderr.trim())),
            Err(e) => tried.push(format!("{}: {e}", node.display())),
        }
    }
    let Some(node) = found else {
        return Err(format!("no Node.js: {}", if tried.is_empty() { "none found".into() } else { tried.join("; ") }));
    };
    let packages = match std::env::var_os("LUDO_GRPCWEB_PACKAGES") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repo().join(".tools/grpcweb"),
    };
    for (name, want) in pinned_grpcweb() {
        let manifest = packages.join("node_modules").join(&name).join("package.json");
        let version = std::fs::read_to_string(&manifest)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|m| m["version"].as_str().map(str::to_string));
        match version {
            Some(version) if version == want => {}
            Some(version) => return Err(format!("{name} in {} is {version}, not the pinned {want}", packages.display())),
            None => return Err(format!("no {name} {want} in {}", packages.display())),
        }
    }
    Ok((node, packages))
}

/// The RPCs `proto/ludo/v1/ludo.proto` declares, in order.
fn declared_rpcs() -> Vec<String> {
    let path = repo().join("proto/ludo/v1/ludo.proto");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter_map(|l| l.trim().strip_prefix("rpc ")).filter_map(|l| l.split('(').next()).map(|n| n.trim().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_web_client_calls_every_rpc_and_watches_a_game_to_its_end() {
    let test = "a_grpc_web_client_calls_every_rpc_and_watches_a_game_to_its_end";
    let (node, packages) = match node_with_grpcweb() {
        Ok(found) => found,
        Err(why) => return missing(test, &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data")).await;
    // A second, empty server to import the finished game into.
    let other = TestServer::start(&dir.path().join("other")).await;
    // The client reads the service from the descriptor set the server offers for reflection.
    let descriptors = dir.path().join("ludo.binpb");
    std::fs::write(&descriptors, ludo_proto::FILE_DESCRIPTOR_SET).unwrap();
    let script = repo().join("tests/clients/grpcweb/roundtrip.mjs");
    let mut command = Command::new(&node);
    command
        .arg(&script)
        .arg("--base")
        .arg(&server.base)
        .arg("--import-base")
        .arg(&other.base)
        .arg("--descriptors")
        .arg(&descriptors)
        .arg("--packages")
        .arg(&packages)
        .arg("--operator-token")
        .arg(ludo_blackbox::OPERATOR_TOKEN);
    let ran = tokio::task::spawn_blocking(move || run(command, Duration::from_secs(300))).await.unwrap();
    server.stop().await;
    other.stop().await;
    let ran = ran.unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    assert!(ran.status.success(), "the gRPC-Web client failed ({}):\n{}", ran.status, ran.output());
    let s: Value = serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("not a JSON summary ({e}):\n{}", ran.output()));
    println!("{}", serde_json::to_string_pretty(&s).unwrap());

    // The real client, at the pinned versions, speaking gRPC-Web over HTTP/1.1.
    assert_eq!((s["client"]["transport"].as_str(), s["client"]["http"].as_str()), (Some("grpc-web"), Some("1.1")));
    for (name, version) in pinned_grpcweb() {
        assert_eq!(s["client"][&name], json!(version), "{name}");
    }
    // Every RPC the proto declares was found in the descriptor set and called.
    let methods: Vec<&str> = s["methods"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(methods, declared_rpcs(), "the descriptor set's service is the proto's");
    assert_eq!(s["called"].as_array().unwrap().len(), methods.len(), "every RPC called: {}", s["not_called"]);
    assert!(
        s["methods"].as_array().unwrap().iter().all(|m| m["kind"] == if m["name"] == "WatchGame" { "server_streaming" } else { "unary" })
    );
    assert_eq!(s["kinds"], json!(["cardinal", "kardinal", "battle13"]));

    // A whole Cardinal game, played with the seats' tokens.
    let game = &s["game"];
    let version = game["version"].as_u64().unwrap();
    assert_eq!(game["finished"], true);
    assert_eq!(game["moves"].as_u64(), Some(version), "one record per move");
    assert!(version > 20, "a whole game: {version} records");
    assert_eq!(game["seed_revealed"], true);
    assert_eq!(game["view"], "cardinal");
    assert_eq!(game["retried"], json!({"same_version": true, "effects": true}), "an exact retry answers as the first time");

    // WatchGame over gRPC-Web: every record, in order, then the stream ends.
    let live = &s["watch"]["live"];
    assert_eq!((live["first"].as_u64(), live["last"].as_u64(), live["count"].as_u64()), (Some(0), Some(version), Some(version + 1)));
    assert_eq!((live["in_order"].clone(), live["ended"].clone(), live["last_finished"].clone()), (json!(true), json!(true), json!(true)));
    assert_eq!(live["views"].as_u64(), Some(version + 1), "each update carries the view");
    let after = &s["watch"]["after"];
    assert_eq!((after["first"].as_u64(), after["last"].as_u64(), after["count"].as_u64()), (Some(3), Some(version), Some(version - 2)));
    assert_eq!((after["in_order"].clone(), after["ended"].clone()), (json!(true), json!(true)));

    // The reads.
    assert_eq!(s["list"]["found"], true, "the finished game is listed");
    let events = &s["events"];
    assert_eq!(events["in_order"], true);
    assert_eq!(events["pages"].as_u64(), Some((version + 1).div_ceil(7)), "pages of 7 followed by next_from");
    assert_eq!((events["created"].clone(), events["moved"].clone(), events["hashes"].clone()), (json!(true), json!(true), json!(true)));
    let steps = &s["steps"];
    assert_eq!(steps["count"].as_u64(), Some(version + 1));
    assert_eq!(steps["every_step_says_something"], true);
    assert_eq!(steps["first"], "A game of Cardinal was set up for Ann and Bob");
    let build = steps["a_build"].as_str().unwrap();
    assert!(build.starts_with("Ann built a ") && ["red", "blue", "green", "yellow"].iter().any(|c| build.contains(c)), "{build}");
    assert!(!build.contains("colour"), "colours by name: {build}");
    assert!(steps["last"].as_str().unwrap().starts_with("Game over: Ann "), "{}", steps["last"]);
    let replay = &s["replay"];
    assert_eq!((replay["at0"].as_u64(), replay["at1"].as_u64(), replay["latest"].as_u64()), (Some(0), Some(1), Some(version)));
    assert_eq!((replay["at1_in_progress"].clone(), replay["view"].clone()), (json!(true), json!("cardinal")));

    // Export, verify (a good and a tampered export) and import.
    assert_eq!(s["export"]["lines"].as_u64(), Some(version + 2), "a header and every record");
    let verify = &s["verify"];
    assert_eq!(
        verify,
        &json!({
            "valid": true, "chain_intact": true, "seed": 1, "replayed": true, "records": version + 1, "finished": true,
            "tampered_valid": false, "tampered_fault_line": 7, "tampered_fault_seq": 5,
            // The export is a bundle: its receipt, checked by the server that signed it.
            "receipt": {
                "key_is_the_logs": true, "key_id": true, "trusted": true, "signature": true,
                "tree_size": 1, "leaf_index": 0, "leaf_matches": true, "included": true,
            },
        }),
        "seed 1 is SEED_CHECK_MATCHES"
    );
    assert_eq!(
        s["import"],
        json!({"id": game["id"], "version": version, "finished": true, "same_game": true, "origin_is_the_bundles": true})
    );
    // What seat 0 knows, for a bot of its own: its information set as JSON.
    assert_eq!(s["knowledge"], json!({"kind": "cardinal", "seat": 0, "version": 0, "info_is_json": true}));
    // A seat handed to a bot and taken back: two records, none left playing.
    assert_eq!(
        s["autopilot"],
        json!({"handed": {"version": 1, "seat": 1, "level": 1, "think_ms": 5000}, "back": {"version": 2, "bot": null}, "seats_with_bots": 0})
    );

    // Seats and clocks: joined by invitation, a clock running once the
    // duel started, a reissued token, a resignation ending the duel; a
    // public game joined, left, a bot seated by the admin, then cancelled.
    assert_eq!(
        s["seats"],
        json!({
            "waiting": "waiting", "invitations": 2,
            "joined": {"seat": 1, "version": 1, "state": "inProgress"},
            "clock": 600000, "deadline": true,
            "reissued": {"seat": 0, "version": 2},
            "resigned": {"state": "finished", "winners": [1], "forfeits": [[0, 1]]},
            "public_join": {"seat": 0, "state": "waiting"},
            "left": "waiting", "botted": [0, 1], "cancelled": "cancelled",
        }),
        "forfeit reason 1 is FORFEIT_REASON_RESIGNED"
    );

    // The transparency log. Before any game ended: a key, no checkpoint, no
    // tree, and the empty tree is consistent with itself.
    let log = &s["log"];
    let origin = log["empty"]["origin"].as_str().unwrap();
    assert!(!origin.is_empty() && !origin.contains(['+', ' ']), "an origin names the log: {origin:?}");
    assert_eq!(
        log["empty"],
        json!({"origin": origin, "key_id": log["empty"]["key_id"], "checkpoint": null, "tree": null, "proof": {"from": 0, "to": 0, "hashes": 0}})
    );
    // After three games ended (the played game, the resigned duel, the
    // cancelled lobby): a tree of three leaves under the same key, whose
    // latest checkpoint is signed by it and is the one the last receipt holds.
    assert_eq!(
        log["after"],
        json!({
            "origin": origin, "key_names_origin_and_id": true, "key_id_is_hex": true, "same_key_as_before": true,
            "checkpoint_signed": true, "tree": {"origin": origin, "size": 3, "root_matches": true},
            "latest_is_the_last_receipts": true,
        })
    );
    // Each receipt names its game and outcome, is signed by the log's key,
    // and its leaf is included in the tree its checkpoint signs (the tree as
    // it was when the game ended).
    let receipt = |index: u64, records: Value, outcome: &str, winners: Value, forfeits: Value| {
        json!({
            "leaf_index": index, "key_is_the_logs": true, "format": "ludotheque/game-head/v1", "names_the_game": true,
            "records": records, "last_is_a_hash": true, "outcome": outcome, "winners": winners, "forfeits": forfeits,
            "signed": true, "tree_size": index + 1, "included": true,
        })
    };
    let receipts = &log["receipts"];
    let game_winners = receipts["game"]["winners"].clone();
    assert!(game_winners.as_str().is_some_and(|w| !w.is_empty()), "a finished game has winners: {game_winners}");
    assert_eq!(receipts["game"], receipt(0, json!(version + 1), "finished", game_winners, json!("")));
    assert_eq!(receipts["duel"], receipt(1, json!(4), "finished", json!("1"), json!("0:resigned")), "created, joined, reissued, resigned");
    assert_eq!(receipts["lobby"], receipt(2, json!(5), "cancelled", Value::Null, Value::Null));
    assert_eq!(log["game_records_match"], true, "the leaf counts every record of the game");
    // The same receipt in the answer that ended each game, in the game state and in the export.
    assert_eq!(
        log["answers_carry_it"],
        json!({
            "move": {"at": version, "finished": true, "same": true},
            "state": true, "state_now": true, "in_progress_state": null, "export": true,
            "resigned": true, "cancelled": true, "left": null,
        })
    );
    // Every older signed tree is a prefix of the latest (the empty one trivially).
    assert_eq!(
        log["consistency"],
        json!([
            {"from": 0, "to": 3, "hashes": 0, "consistent": true},
            {"from": 1, "to": 3, "hashes": 2, "consistent": true},
            {"from": 2, "to": 3, "hashes": 1, "consistent": true},
            {"from": 3, "to": 3, "hashes": 0, "consistent": true},
        ])
    );
    // And the client's checks are not vacuous.
    assert_eq!(
        log["checks_can_fail"],
        json!({"forged_leaf_included": false, "wrong_root_consistent": false, "altered_checkpoint_signed": false})
    );

    // Refusals: the gRPC code, and our ErrorInfo (reason, domain, metadata) read by the client.
    let expected = [
        ("getGame", "an unknown game", "NotFound", "not_found", json!({})),
        ("getReplay", "a version past the end", "InvalidArgument", "invalid_input", json!({"field": "at"})),
        ("getSeatKnowledge", "what a spectator knows", "Unauthenticated", "unauthorized", json!({})),
        ("submitMove", "the other seat moves", "FailedPrecondition", "not_your_turn", json!({"to_move": "0"})),
        ("submitMove", "a move without a token", "Unauthenticated", "unauthorized", json!({})),
        ("submitMove", "a colour that does not exist", "FailedPrecondition", "rule_violation", json!({"rule": "CA-1"})),
        ("submitMove", "a stale expected version", "Aborted", "version_conflict", json!({"current_version": "0", "expected_version": "5"})),
        ("submitMove", "a move after the end", "FailedPrecondition", "game_finished", json!({})),
        ("setAutopilot", "a bot of no level", "InvalidArgument", "invalid_input", json!({"field": "bot.level"})),
        ("setAutopilot", "a hand-over after the end", "FailedPrecondition", "game_finished", json!({})),
        ("joinGame", "an invitation used after the start", "FailedPrecondition", "game_started", json!({})),
        ("resign", "a token replaced", "Unauthenticated", "unauthorized", json!({})),
        ("importGame", "no operator token", "Unauthenticated", "unauthorized", json!({})),
        ("importGame", "a tampered export", "InvalidArgument", "invalid_export", json!({"line": "7", "seq": "5"})),
        ("importGame", "the same game twice", "AlreadyExists", "game_exists", json!({})),
        ("getReceipt", "a game still being played", "FailedPrecondition", "game_not_over", json!({})),
        ("getReceipt", "an unknown game", "NotFound", "not_found", json!({})),
        ("getConsistencyProof", "a tree larger than the log", "InvalidArgument", "invalid_input", json!({"field": "to"})),
        ("getConsistencyProof", "from after to", "InvalidArgument", "invalid_input", json!({"field": "from"})),
    ];
    let errors = s["errors"].as_array().unwrap();
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (error, (rpc, what, code, reason, metadata)) in errors.iter().zip(expected) {
        let got = (&error["rpc"], &error["what"], &error["code_name"], &error["reason"], &error["domain"], &error["metadata"]);
        assert_eq!(got, (&json!(rpc), &json!(what), &json!(code), &json!(reason), &json!("ludotheque"), &metadata), "{error:#}");
    }
    let invalid = errors.iter().find(|e| e["reason"] == "invalid_input").unwrap();
    assert_eq!(invalid["field_violations"], json!(["at"]), "a BadRequest names the field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_python_client_round_trips_every_kind() {
    let test = "a_generated_python_client_round_trips_every_kind";
    let python = match python_with_generator() {
        Ok(python) => python,
        Err(why) => return missing(test, &why),
    };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data")).await;
    let script = repo().join("tests/clients/python/roundtrip.py");
    let mut command = Command::new(&python);
    command
        .arg(&script)
        .arg("--openapi")
        .arg(format!("{}/openapi.json", server.base))
        .arg("--base")
        .arg(&server.base)
        .arg("--out")
        .arg(dir.path().join("client"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let ran = tokio::task::spawn_blocking(move || run(command, Duration::from_secs(600))).await.unwrap();
    server.stop().await;
    let ran = ran.unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    // The failed checks and the summary (every check is listed when it passes, with --nocapture).
    let failures: Vec<&str> = ran.stdout.lines().filter(|line| !line.starts_with("ok ")).collect();
    assert!(
        ran.status.success(),
        "the generated Python client does not round-trip ({}, {}):\n{}{}",
        ran.status,
        Path::new("tests/clients/python/roundtrip.py").display(),
        failures.join("\n"),
        ran.output().strip_prefix(ran.stdout.as_str()).unwrap_or_default()
    );
    println!("{}", ran.output());
    // The transparency log was read through the generated client too: these checks ran (and passed).
    for check in [
        "log: an empty log has no checkpoint nor tree",
        "log: GET /v1/log/checkpoint (an empty log): 404 not_found",
        "log: the well-known key is the log's, on one line",
        "log: GET /v1/games/{id}/receipt (a game being played): 409 game_not_over",
        "log: POST /v1/games/{id}/resign (the game ends) round-trips",
        "log: the log holds two leaves",
        "log: GET /v1/log/checkpoint is the latest checkpoint",
        "log: GET /v1/games/{id}/receipt (leaf 0): the leaf names the game and its outcome",
        "log: GET /v1/games/{id}/receipt (leaf 1): the inclusion proof leads to the root of the tree of 2 leaves",
        "log: GET /v1/games/{id}: the state of a game over carries its receipt",
        "log: the consistency proof leads from the first checkpoint's root to the latest's",
        "log: GET /v1/log/consistency?from=2&to=1: 400 invalid_input",
    ] {
        assert!(ran.stdout.lines().any(|line| line == format!("ok   {check}")), "the Python client did not check: {check}");
    }
}

#[test]
fn redocly_lint_passes_with_the_recommended_rules() {
    let test = "redocly_lint_passes_with_the_recommended_rules";
    let redocly = match redocly() {
        Ok(redocly) => redocly,
        Err(why) => return missing(test, &why),
    };
    let mut command = Command::new(&redocly);
    command
        .current_dir(repo())
        .args(["lint", "--config", "redocly.yaml", "--max-problems", "1000", "openapi/openapi.json"])
        .env("REDOCLY_TELEMETRY", "off")
        .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true")
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0");
    let ran = run(command, Duration::from_secs(300)).unwrap_or_else(|e| panic!("{}: {e}", redocly.display()));
    assert!(
        ran.status.success(),
        "`redocly lint --config redocly.yaml openapi/openapi.json` ({}) found problems:\n{}",
        ran.status,
        ran.output()
    );
    println!("{}", ran.output());
}
