//! The transparency log of games, from a client's point of view, over real
//! sockets: every game that ends (finished by its moves or a resignation,
//! or cancelled) gets one leaf and a receipt, in the answer that ended it,
//! in its state, at `/v1/games/{id}/receipt` and in its export (a bundle);
//! the log's key is published at `/v1/log`, `/.well-known/ludotheque-log-key`
//! and over gRPC; a bundle verifies offline with that key and with no
//! other, and fails when a record is removed or appended, when its leaf or
//! proof is altered, and when its checkpoint is re-signed over another
//! root; `/v1/verify` and `VerifyGame` report the receipt's checks;
//! consistency proofs link checkpoints taken before and after more games;
//! a restart keeps the key and the tree; and a tree altered behind a
//! stopped server's back is refused. Runs on sled and, as part of
//! `on_postgres`, on PostgreSQL.

use ludo_blackbox::bundle::{join, split};
use ludo_blackbox::{Rest, TestServer, authed, chooser, tamper};
use ludo_game::LogSettings;
use ludo_proto::v1 as pb;
use ludo_record::export;
use ludo_transparency::{self as transparency, ConsistencyProof, LogKey, SignedTree};
use serde_json::{Value, json};

/// The log stream's id (the largest UUID, reserved: never a game).
const LOG_STREAM: &str = "ffffffff-ffff-ffff-ffff-ffffffffffff";
/// The key stream's id (reserved too).
const KEY_STREAM: &str = "ffffffff-ffff-ffff-ffff-fffffffffffe";

/// A server whose log signs with `key`, which the test holds (so it can
/// re-sign checkpoints as a dishonest operator would).
async fn server_with_key(dir: &std::path::Path, key: &LogKey) -> TestServer {
    let config = ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() };
    let key = key.clone();
    TestServer::start_configured(dir, config, move |service| service.with_log(LogSettings { origin: None, key: Some(key) })).await
}

fn id_of(game: &Value) -> String {
    game["id"].as_str().expect("id").to_string()
}

/// Plays `game` over REST to its end, each seat to move choosing among its
/// legal moves by `seed`'s chooser; answers the body of the move that ended
/// it. No answer before it carries a receipt.
async fn play_to_end(rest: &Rest, game: &Value, seed: u64) -> Value {
    let id = id_of(game);
    let mut choose = chooser(seed);
    for _ in 0..5000 {
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        assert_eq!(state["status"]["state"], "in_progress", "{state}");
        let seat = state["status"]["to_move"][0].as_u64().expect("a seat to move") as usize;
        let token = game["seats"][seat]["token"].as_str().expect("token");
        let legal = rest.get(&format!("/v1/games/{id}/legal-moves"), Some(token)).await.body;
        let moves = legal["moves"].as_array().expect("moves").clone();
        let mv = moves[choose(&moves)].clone();
        let answer =
            rest.post(&format!("/v1/games/{id}/moves"), Some(token), &json!({"move": mv, "expected_version": state["version"]})).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        if answer.body["status"]["state"] == "finished" {
            return answer.body;
        }
        assert!(answer.body.get("receipt").is_none(), "a move that did not end the game carries a receipt: {}", answer.body);
    }
    panic!("game {id} did not end");
}

/// A two-seat Cardinal game ended by seat 1's resignation: the game and the
/// resignation's answer.
async fn resigned_game(rest: &Rest) -> (Value, Value) {
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({})).await;
    let id = id_of(&game);
    let token = game["seats"][1]["token"].as_str().unwrap();
    let answer = rest.post(&format!("/v1/games/{id}/resign"), Some(token), &json!({})).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["status"]["state"], "finished", "{answer:?}");
    (game, answer.body)
}

/// The leaf the log must hold for a game over, written here from the
/// documented format (`ludotheque/game-head/v1`) and what the API shows:
/// its id, record count, last record's hash and outcome.
fn expected_leaf(id: &str, state: &Value, last_hash: &str) -> String {
    let records = state["version"].as_u64().unwrap() + 1;
    let mut leaf = format!("ludotheque/game-head/v1\ngame {id}\nrecords {records}\nlast {last_hash}\n");
    let status = &state["status"];
    match status["state"].as_str().unwrap() {
        "finished" => {
            let list = |items: &Value, f: &dyn Fn(&Value) -> String| -> String {
                items.as_array().map(|items| items.iter().map(|i| format!(" {}", f(i))).collect()).unwrap_or_default()
            };
            leaf.push_str("outcome finished\n");
            leaf.push_str(&format!("scores{}\n", list(&status["result"]["scores"], &|s| s.to_string())));
            leaf.push_str(&format!("winners{}\n", list(&status["result"]["winners"], &|s| s.to_string())));
            let forfeit = |f: &Value| format!("{}:{}", f["seat"], f["reason"].as_str().unwrap());
            leaf.push_str(&format!("forfeits{}\n", list(&status["forfeits"], &forfeit)));
        }
        "cancelled" => leaf.push_str("outcome cancelled\n"),
        other => panic!("a game that is not over ({other}) has no leaf"),
    }
    leaf
}

async fn bundle_of(rest: &Rest, id: &str) -> Vec<u8> {
    let (status, bytes) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    bytes
}

/// `GET /v1/log`.
async fn log_info(rest: &Rest) -> Value {
    let answer = rest.get("/v1/log", None).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.body
}

/// `GET /v1/log/checkpoint`: the C2SP note as text.
async fn checkpoint(rest: &Rest) -> String {
    let (status, bytes) = rest.get_bytes("/v1/log/checkpoint", None).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    String::from_utf8(bytes).unwrap()
}

/// `GET /v1/log/consistency?from&to`, parsed.
async fn consistency(rest: &Rest, from: u64, to: u64) -> ConsistencyProof {
    let answer = rest.get(&format!("/v1/log/consistency?from={from}&to={to}"), None).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    serde_json::from_value(answer.body).expect("a consistency proof")
}

fn problem(answer: &ludo_blackbox::Answer, status: u16, code: &str) {
    assert_eq!((answer.status, answer.body["code"].as_str()), (status, Some(code)), "{answer:?}");
    assert!(answer.content_type.starts_with("application/problem+json"), "{answer:?}");
}

/// The issue's checks: "receipts in the ending answer, the game state and
/// the export"; "the public key at a well-known REST path"; "a finished
/// game's bundle verifies offline with the right key"; "/v1/verify …
/// report[s] the receipt checks". For all three kinds, played to their end
/// over REST: one leaf each, in the order they ended, whose text is the
/// game's head as the API shows it; the same receipt everywhere; the
/// checkpoint it carries is signed by the published key and first includes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_ended_over_rest_has_one_receipt_everywhere_under_the_published_key() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();

    // An empty log: its key, no checkpoint yet.
    let empty = log_info(&rest).await;
    // Left unnamed, the log gets an origin of its own.
    let origin = empty["origin"].as_str().unwrap().to_string();
    let random = origin.strip_prefix(transparency::DEFAULT_ORIGIN_PREFIX).unwrap_or_default();
    assert!(random.len() == 8 && random.bytes().all(|b| b.is_ascii_hexdigit()), "{empty}");
    let key = empty["key"].as_str().unwrap().to_string();
    let key_id = empty["key_id"].as_str().unwrap().to_string();
    assert!(key.starts_with(&format!("{origin}+{key_id}+")), "{key}");
    assert_eq!(transparency::key_id_of(&key), Some(key_id.clone()));
    assert!(empty.get("checkpoint").is_none() && empty.get("tree").is_none(), "an empty log has no checkpoint: {empty}");
    problem(&rest.get("/v1/log/checkpoint", None).await, 404, "not_found");
    let well_known = rest.get_bytes("/.well-known/ludotheque-log-key", None).await;
    assert_eq!(well_known, (200, format!("{key}\n").into_bytes()), "the well-known key is /v1/log's, on one line");
    let answer = rest.get("/.well-known/ludotheque-log-key", None).await;
    assert!(answer.content_type.starts_with("text/plain"), "{answer:?}");

    let games = [
        ("cardinal", vec!["Ann", "Bob", "Cid"], json!({})),
        ("kardinal", vec!["Ann", "Bob", "Cid", "Dee"], json!({})),
        ("battle13", vec!["North", "East", "South", "West"], json!({"target_crowns": 20})),
    ];
    let mut receipts = Vec::new();
    for (i, (kind, players, options)) in games.into_iter().enumerate() {
        let game = rest.create(kind, &players, options).await;
        let id = id_of(&game);
        assert_eq!(rest.get(&format!("/v1/games/{id}"), None).await.body.get("receipt"), None, "{kind}: a new game has no receipt");
        let ended = play_to_end(&rest, &game, 40 + i as u64).await;
        let receipt = ended["receipt"].clone();
        assert!(receipt.is_object(), "{kind}: the answer that ended the game carries its receipt: {ended}");
        assert_eq!(receipt["key"], key, "{kind}");
        assert_eq!(receipt["leaf_index"], i, "{kind}: one leaf per game, in the order they ended");

        // The leaf is the game's head as the API shows it.
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        let events = rest.events(&id, None).await;
        assert_eq!(events.len() as u64, state["version"].as_u64().unwrap() + 1);
        let last_hash = events.last().unwrap()["hash"].as_str().unwrap();
        assert_eq!(receipt["leaf"].as_str().unwrap(), expected_leaf(&id, &state, last_hash), "{kind}");
        assert_eq!(transparency::leaf_game(receipt["leaf"].as_str().unwrap()), Some(id.as_str()));

        // The same receipt in the state (for everyone), at its own path, and in the export.
        assert_eq!(state["receipt"], receipt, "{kind}: the state's receipt");
        let token = game["seats"][0]["token"].as_str();
        assert_eq!(rest.get(&format!("/v1/games/{id}"), token).await.body["receipt"], receipt, "{kind}: a seat's state");
        let answer = rest.get(&format!("/v1/games/{id}/receipt"), None).await;
        assert_eq!((answer.status, &answer.body), (200, &receipt), "{kind}: GET …/receipt");
        let bundle = bundle_of(&rest, &id).await;
        let (header, _) = split::<Value>(&bundle);
        assert_eq!(header["receipt"], receipt, "{kind}: the export is a bundle with the same receipt");

        // Its checkpoint is the first to include it, signed by the published key.
        let tree = transparency::open_checkpoint(receipt["checkpoint"].as_str().unwrap(), &key).expect("signed by the log's key");
        assert_eq!((tree.origin.as_str(), tree.size), (origin.as_str(), i as u64 + 1), "{kind}");

        // Offline, with the published key: valid, every receipt check passed.
        let report = export::verify_with(&bundle, Some(&key));
        assert!(report.valid, "{kind}: {:?}", report.fault);
        let checked = report.receipt.expect("the receipt was checked");
        assert!(checked.trusted && checked.signature && checked.leaf_matches && checked.included, "{kind}: {checked:?}");
        assert_eq!(checked.tree.as_ref(), Some(&tree));

        // The server's own report says the same, and that the key is its own.
        let verified = rest.post_bytes("/v1/verify", bundle.clone()).await;
        assert_eq!(verified.status, 200, "{verified:?}");
        assert_eq!(verified.body["valid"], true, "{kind}: {}", verified.body);
        let report = &verified.body["receipt"];
        for check in ["trusted", "signature", "leaf_matches", "included"] {
            assert_eq!(report[check], true, "{kind}: /v1/verify's receipt.{check}: {report}");
        }
        assert_eq!((report["leaf_index"].as_u64(), report["key_id"].as_str()), (Some(i as u64), Some(key_id.as_str())));
        assert_eq!(report["tree"]["size"], i + 1);
        receipts.push((tree, receipt));
    }

    // The log after three games: one checkpoint, the same on every path.
    let info = log_info(&rest).await;
    assert_eq!((info["key"].as_str(), info["key_id"].as_str()), (Some(key.as_str()), Some(key_id.as_str())));
    assert_eq!(info["tree"]["size"], 3, "{info}");
    let note = checkpoint(&rest).await;
    assert_eq!(info["checkpoint"], note);
    let answer = rest.get("/v1/log/checkpoint", None).await;
    assert!(answer.content_type.starts_with("text/plain"), "{answer:?}");
    // A C2SP checkpoint: origin, size, base64 root, a blank line, then the signature line.
    let lines: Vec<&str> = note.lines().collect();
    assert_eq!(&lines[..2], &[origin.as_str(), "3"], "{note}");
    assert_eq!(lines[2], info["tree"]["root"].as_str().unwrap(), "{note}");
    assert_eq!(lines[3], "", "{note}");
    assert!(lines[4].starts_with(&format!("— {origin} ")), "{note}");
    let latest = transparency::open_checkpoint(&note, &key).unwrap();
    assert_eq!(serde_json::to_value(&latest).unwrap(), info["tree"]);
    // Each receipt's checkpoint is a prefix of the latest one.
    for (tree, receipt) in &receipts {
        let proof = consistency(&rest, tree.size, latest.size).await;
        transparency::check_consistency(tree, &latest, &proof).unwrap_or_else(|e| panic!("{}: {e}", receipt["leaf"]));
    }
    // Listings show the three games, never the log's own streams.
    let listed = rest.get("/v1/games?limit=1000", None).await.body;
    assert_eq!(listed["games"].as_array().unwrap().len(), 3, "{listed}");
    assert!(!listed.to_string().contains("ffffffff-ffff-ffff-ffff-ffff"), "{listed}");
    server.stop().await;
}

/// The answer and the receipt of a game played to its end over gRPC.
async fn grpc_game_to_end(
    grpc: &mut ludo_proto::v1::ludo_client::LudoClient<tonic::transport::Channel>,
    seed: u64,
) -> (pb::CreateGameResponse, pb::MoveAccepted) {
    let created = grpc
        .create_game(pb::CreateGameRequest { kind: "cardinal".into(), players: vec!["Ann".into(), "Bob".into()], ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let mut choose = chooser(seed);
    for _ in 0..2000 {
        let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
        let Some(pb::status::State::InProgress(progress)) = state.status.unwrap().state else { panic!("the game ended unseen") };
        let token = &created.seats[progress.to_move[0] as usize].token;
        let legal = grpc.list_legal_moves(authed(pb::ListLegalMovesRequest { id: created.id.clone() }, token)).await.unwrap().into_inner();
        let mv = legal.moves[choose(&vec![Value::Null; legal.moves.len()])].clone();
        let request = pb::SubmitMoveRequest {
            id: created.id.clone(),
            r#move: Some(mv),
            expected_version: Some(state.version),
            request_id: None,
            omit_view: false,
        };
        let accepted = grpc.submit_move(authed(request, token)).await.unwrap().into_inner();
        if matches!(accepted.status.as_ref().and_then(|s| s.state.as_ref()), Some(pb::status::State::Finished(_))) {
            return (created, accepted);
        }
        assert!(accepted.receipt.is_none(), "a move that did not end the game carries a receipt");
    }
    panic!("the game did not end");
}

fn receipt_json(receipt: &pb::Receipt) -> Value {
    json!({
        "key": receipt.key,
        "leaf_index": receipt.leaf_index,
        "leaf": receipt.leaf,
        "checkpoint": receipt.checkpoint,
        "inclusion": receipt.inclusion,
    })
}

fn grpc_error(status: &tonic::Status, code: tonic::Code, reason: &str) {
    use tonic_types::StatusExt;
    assert_eq!(status.code(), code, "{status:?}");
    assert_eq!(status.get_details_error_info().expect("an ErrorInfo detail").reason, reason, "{status:?}");
}

/// The checks over gRPC: "the public key … over gRPC" (`GetLog`),
/// receipts in the ending answer (`SubmitMove`, `Resign`) and the game
/// state, `GetReceipt`, `GetConsistencyProof`, and "VerifyGame report[s]
/// the receipt checks" (valid for the bundle, invalid for a tampered one);
/// `FAILED_PRECONDITION game_not_over`, `NOT_FOUND` for the reserved ids,
/// `INVALID_ARGUMENT` for a bad range. Every answer matches REST's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_serves_the_same_log_receipts_and_proofs_and_verify_game_reports_the_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut grpc = server.grpc().await;

    let empty = grpc.get_log(pb::GetLogRequest {}).await.unwrap().into_inner();
    assert_eq!((empty.checkpoint.as_deref(), empty.tree.as_ref()), (None, None), "an empty log");
    let rest_info = log_info(&rest).await;
    assert_eq!(
        (empty.origin.as_str(), empty.key.as_str(), empty.key_id.as_str()),
        (rest_info["origin"].as_str().unwrap(), rest_info["key"].as_str().unwrap(), rest_info["key_id"].as_str().unwrap())
    );
    let key = empty.key.clone();

    // A game played to its end over gRPC: its receipt in the last answer.
    let (created, accepted) = grpc_game_to_end(&mut grpc, 5).await;
    let receipt = accepted.receipt.clone().expect("the move that ended the game carries its receipt");
    assert_eq!((receipt.key.as_str(), receipt.leaf_index), (key.as_str(), 0));
    let state = grpc.get_game(pb::GetGameRequest { id: created.id.clone() }).await.unwrap().into_inner();
    assert_eq!(state.receipt.as_ref(), Some(&receipt), "GetGame's receipt");
    let got = grpc.get_receipt(pb::GetReceiptRequest { id: created.id.clone() }).await.unwrap().into_inner();
    assert_eq!(got, receipt, "GetReceipt");
    assert_eq!(rest.get(&format!("/v1/games/{}/receipt", created.id), None).await.body, receipt_json(&receipt), "REST's receipt");
    let rest_state = rest.get(&format!("/v1/games/{}", created.id), None).await.body;
    let events = rest.events(&created.id, None).await;
    assert_eq!(receipt.leaf, expected_leaf(&created.id, &rest_state, events.last().unwrap()["hash"].as_str().unwrap()));

    // A second game ended by a resignation over gRPC.
    let second = grpc
        .create_game(pb::CreateGameRequest { kind: "cardinal".into(), players: vec!["Cid".into(), "Dee".into()], ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let resigned = grpc.resign(authed(pb::ResignRequest { id: second.id.clone() }, &second.seats[0].token)).await.unwrap().into_inner();
    let second_receipt = resigned.receipt.expect("the resignation that ended the game carries its receipt");
    assert_eq!(second_receipt.leaf_index, 1);
    assert!(second_receipt.leaf.contains("\nforfeits 0:resigned\n"), "{}", second_receipt.leaf);

    // GetLog: the latest checkpoint, as REST serves it.
    let info = grpc.get_log(pb::GetLogRequest {}).await.unwrap().into_inner();
    assert_eq!(info.key, key);
    assert_eq!(info.checkpoint.as_deref(), Some(checkpoint(&rest).await.as_str()));
    let tree = info.tree.expect("the tree of a log with leaves");
    let latest = transparency::open_checkpoint(info.checkpoint.as_deref().unwrap(), &key).unwrap();
    assert_eq!((tree.origin, tree.size, tree.root), (latest.origin.clone(), 2, latest.root.clone()));

    // GetConsistencyProof: REST's proof, and it checks out.
    let proof = grpc.get_consistency_proof(pb::GetConsistencyProofRequest { from: 1, to: 2 }).await.unwrap().into_inner();
    let rest_proof = consistency(&rest, 1, 2).await;
    assert_eq!((proof.from, proof.to, &proof.proof), (1, 2, &rest_proof.proof));
    let first = transparency::open_checkpoint(&receipt.checkpoint, &key).unwrap();
    transparency::check_consistency(&first, &latest, &rest_proof).unwrap();
    assert!(!rest_proof.proof.is_empty(), "a proof from 1 to 2 leaves holds a hash");

    // VerifyGame: the bundle's receipt checks, then a tampered bundle's.
    let bundle = grpc.export_game(pb::ExportGameRequest { id: created.id.clone() }).await.unwrap().into_inner().export;
    let report = grpc.verify_game(pb::VerifyGameRequest { export: bundle.clone() }).await.unwrap().into_inner();
    assert!(report.valid, "{:?}", report.fault);
    let checked = report.receipt.expect("VerifyGame reports the receipt");
    assert!(checked.trusted && checked.signature && checked.leaf_matches && checked.included, "{checked:?}");
    assert_eq!((checked.key.as_str(), checked.key_id.as_deref(), checked.leaf_index), (key.as_str(), Some(info.key_id.as_str()), 0));
    assert_eq!(checked.tree.map(|t| t.size), Some(1));
    let (mut header, lines) = split::<Value>(&bundle);
    let leaf = header["receipt"]["leaf"].as_str().unwrap().replace("outcome finished", "outcome cancelled");
    header["receipt"]["leaf"] = json!(leaf);
    let report = grpc.verify_game(pb::VerifyGameRequest { export: join(&header, &lines) }).await.unwrap().into_inner();
    assert!(!report.valid, "a bundle whose leaf says the game was cancelled verified");
    let checked = report.receipt.expect("the receipt's checks so far");
    assert!(checked.trusted && checked.signature && !checked.leaf_matches && !checked.included, "{checked:?}");
    let fault = report.fault.expect("a fault");
    assert!(fault.reason.contains("receipt") && fault.reason.contains("outcome cancelled"), "{}", fault.reason);

    // Errors: a running game, the reserved ids, a bad range.
    let running = grpc
        .create_game(pb::CreateGameRequest { kind: "cardinal".into(), players: vec!["Eve".into(), "Fay".into()], ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let status = grpc.get_receipt(pb::GetReceiptRequest { id: running.id.clone() }).await.unwrap_err();
    grpc_error(&status, tonic::Code::FailedPrecondition, "game_not_over");
    assert!(grpc.get_game(pb::GetGameRequest { id: running.id.clone() }).await.unwrap().into_inner().receipt.is_none());
    for reserved in [LOG_STREAM, KEY_STREAM] {
        let status = grpc.get_receipt(pb::GetReceiptRequest { id: reserved.into() }).await.unwrap_err();
        grpc_error(&status, tonic::Code::NotFound, "not_found");
        let status = grpc.get_game(pb::GetGameRequest { id: reserved.into() }).await.unwrap_err();
        grpc_error(&status, tonic::Code::NotFound, "not_found");
        let status = grpc.export_game(pb::ExportGameRequest { id: reserved.into() }).await.unwrap_err();
        grpc_error(&status, tonic::Code::NotFound, "not_found");
    }
    for (from, to) in [(2, 1), (0, 3), (3, 3)] {
        let status = grpc.get_consistency_proof(pb::GetConsistencyProofRequest { from, to }).await.unwrap_err();
        grpc_error(&status, tonic::Code::InvalidArgument, "invalid_input");
    }
    let same = grpc.get_consistency_proof(pb::GetConsistencyProofRequest { from: 2, to: 2 }).await.unwrap().into_inner();
    assert!(same.proof.is_empty());
    drop(grpc);
    server.stop().await;
}

/// The error codes over REST: `game_not_over` (409) for a game
/// still waiting or being played, `not_found` for unknown games and for the
/// log's reserved ids (ffffffff-ffff-ffff-ffff-ffffffffffff and …fffe: no
/// game can be read, exported or moved in there), and `invalid_input` for
/// consistency ranges other than 0 <= from <= to <= the log's size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_game_has_no_receipt_reserved_ids_are_no_games_and_bad_ranges_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    // Before any leaf: every range beyond 0 is refused; 0..0 is the empty proof.
    problem(&rest.get("/v1/log/consistency?from=0&to=1", None).await, 400, "invalid_input");
    assert_eq!(consistency(&rest, 0, 0).await, ConsistencyProof { from: 0, to: 0, proof: vec![] });

    let running = rest.create("cardinal", &["Ann", "Bob"], json!({})).await;
    let id = id_of(&running);
    problem(&rest.get(&format!("/v1/games/{id}/receipt"), None).await, 409, "game_not_over");
    let waiting = rest.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", null]})).await;
    assert_eq!(waiting.status, 201, "{waiting:?}");
    problem(&rest.get(&format!("/v1/games/{}/receipt", id_of(&waiting.body)), None).await, 409, "game_not_over");
    assert!(rest.get(&format!("/v1/games/{id}"), None).await.body.get("receipt").is_none());
    let (header, _) = split::<Value>(&bundle_of(&rest, &id).await);
    assert!(header.get("receipt").is_none(), "a running game's export carries no receipt: {header}");
    problem(&rest.get("/v1/games/01890000-0000-7000-8000-000000000000/receipt", None).await, 404, "not_found");

    let (ended, _) = resigned_game(&rest).await;
    for reserved in [LOG_STREAM, KEY_STREAM] {
        for path in ["", "/receipt", "/export", "/events", "/legal-moves", "/steps", "/replay?at=0"] {
            problem(&rest.get(&format!("/v1/games/{reserved}{path}"), None).await, 404, "not_found");
        }
        let token = ended["seats"][0]["token"].as_str();
        let moved = rest.post(&format!("/v1/games/{reserved}/moves"), token, &json!({"move": {"type": "pass"}})).await;
        problem(&moved, 404, "not_found");
        problem(&rest.post(&format!("/v1/games/{reserved}/resign"), token, &json!({})).await, 404, "not_found");
    }

    // One leaf now: ranges within 0..=1 only.
    for query in [
        "from=1&to=0",
        "from=0&to=2",
        "from=2&to=2",
        "from=5&to=99",
        "from=1",
        "to=1",
        "from=-1&to=1",
        "from=a&to=1",
        "from=0&to=1&extra=1",
    ] {
        problem(&rest.get(&format!("/v1/log/consistency?{query}"), None).await, 400, "invalid_input");
    }
    for (from, to) in [(0, 0), (0, 1), (1, 1)] {
        assert_eq!(consistency(&rest, from, to).await, ConsistencyProof { from, to, proof: vec![] }, "{from}..{to} needs no hash");
    }
    assert_eq!(log_info(&rest).await["tree"]["size"], 1);
    server.stop().await;
}

/// Whether `bundle` verifies offline with `key`, and the fault's reason.
fn offline(bundle: &[u8], key: &str) -> Result<export::VerifyReport, String> {
    let report = export::verify_with(bundle, Some(key));
    match &report.fault {
        None if report.valid => Ok(report),
        fault => Err(fault.as_ref().map(|f| f.reason.clone()).unwrap_or_default()),
    }
}

/// The issue's checks: "a finished game's bundle verifies offline with the
/// right key and fails with another key, with a record removed, with a
/// record appended, with the leaf or proof altered, and when the checkpoint
/// is re-signed over a different root" — offline with the key from
/// `/.well-known/ludotheque-log-key`, and through `POST /v1/verify`, whose
/// receipt report names the check that failed. The server signs with a key
/// the test holds, as a dishonest operator would hold theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_fails_with_another_key_a_record_less_or_more_an_altered_leaf_or_proof_and_a_re_signed_root() {
    let dir = tempfile::tempdir().unwrap();
    let signer = LogKey::from_seed("games.example.org/log", &[21; 32]).unwrap();
    let server = server_with_key(dir.path(), &signer).await;
    let rest = server.rest();
    let (_, body) = rest.get_bytes("/.well-known/ludotheque-log-key", None).await;
    let key = String::from_utf8(body).unwrap().trim().to_string();
    assert_eq!(key, signer.verifier_key(), "the server publishes the key it was given");
    assert_eq!(log_info(&rest).await["origin"], "games.example.org/log");

    // Three games, so the middle one's proof has hashes to alter.
    resigned_game(&rest).await;
    let game = rest.create("cardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    play_to_end(&rest, &game, 9).await;
    resigned_game(&rest).await;
    let bundle = bundle_of(&rest, &id_of(&game)).await;
    let report = offline(&bundle, &key).expect("the bundle verifies with the published key");
    let receipt = report.receipt.unwrap();
    assert_eq!((receipt.leaf_index, receipt.tree.map(|t| t.size)), (1, Some(2)));

    // Through /v1/verify: invalid, with the receipt checks as far as they went.
    let server_says = |bytes: Vec<u8>| {
        let rest = rest.clone();
        async move {
            let answer = rest.post_bytes("/v1/verify", bytes).await;
            assert_eq!(answer.status, 200, "{answer:?}");
            assert_eq!(answer.body["valid"], false, "/v1/verify passed a tampered bundle: {}", answer.body);
            answer.body
        }
    };

    // Another key, under the same origin: refused offline.
    let other = LogKey::from_seed("games.example.org/log", &[22; 32]).unwrap();
    let reason = offline(&bundle, other.verifier_key()).unwrap_err();
    assert!(reason.contains("not with the trusted key"), "{reason}");

    let (header, lines) = split::<Value>(&bundle);
    let records = header["records"].as_u64().unwrap() as usize;
    // A record removed (the last one), the header's count adjusted.
    let mut fewer = lines.clone();
    fewer.remove(records - 1);
    let mut short_header = header.clone();
    short_header["records"] = json!(records - 1);
    let reason = offline(&join(&short_header, &fewer), &key).unwrap_err();
    assert!(!reason.is_empty());
    server_says(join(&short_header, &fewer)).await;
    // A record appended: a copy of the last one.
    let mut more = lines.clone();
    more.insert(records, lines[records - 1].clone());
    let mut long_header = header.clone();
    long_header["records"] = json!(records + 1);
    offline(&join(&long_header, &more), &key).unwrap_err();
    server_says(join(&long_header, &more)).await;

    let with_receipt = |change: &dyn Fn(&mut Value)| {
        let mut header = header.clone();
        change(&mut header["receipt"]);
        join(&header, &lines)
    };
    // The leaf altered (another record count): it is not the re-played head.
    let leaf = with_receipt(&|r| {
        let leaf = r["leaf"].as_str().unwrap().replace(&format!("\nrecords {records}\n"), &format!("\nrecords {}\n", records + 1));
        r["leaf"] = json!(leaf);
    });
    let reason = offline(&leaf, &key).unwrap_err();
    assert!(reason.contains("the receipt") && reason.contains(&format!("records {}", records + 1)), "{reason}");
    let report = server_says(leaf).await;
    assert_eq!((report["receipt"]["signature"].clone(), report["receipt"]["leaf_matches"].clone()), (json!(true), json!(false)));

    // The inclusion proof altered: one hash replaced.
    let forged_hash = transparency::encode_hash(&transparency::record_hash(b"not a sibling"));
    let proof = with_receipt(&|r| r["inclusion"][0] = json!(forged_hash));
    let reason = offline(&proof, &key).unwrap_err();
    assert!(reason.contains("inclusion proof"), "{reason}");
    let report = server_says(proof).await;
    assert_eq!((report["receipt"]["leaf_matches"].clone(), report["receipt"]["included"].clone()), (json!(true), json!(false)));
    // A hash dropped from the proof, or the leaf's index moved.
    offline(&with_receipt(&|r| r["inclusion"].as_array_mut().unwrap().truncate(0)), &key).unwrap_err();
    offline(&with_receipt(&|r| r["leaf_index"] = json!(0)), &key).unwrap_err();

    // The checkpoint re-signed, with the log's own key, over another root:
    // the signature holds, the proof no longer leads to the root.
    let tree = transparency::open_checkpoint(header["receipt"]["checkpoint"].as_str().unwrap(), &key).unwrap();
    let resigned = signer.sign_checkpoint(tree.size, transparency::record_hash(b"another root")).unwrap();
    let resigned = with_receipt(&|r| r["checkpoint"] = json!(resigned));
    let reason = offline(&resigned, &key).unwrap_err();
    assert!(reason.contains("inclusion proof"), "{reason}");
    let report = server_says(resigned).await;
    assert_eq!((report["receipt"]["signature"].clone(), report["receipt"]["included"].clone()), (json!(true), json!(false)));
    // The checkpoint's text altered under the original signature.
    let size_changed = header["receipt"]["checkpoint"].as_str().unwrap().replacen("\n2\n", "\n3\n", 1);
    let reason = offline(&with_receipt(&|r| r["checkpoint"] = json!(size_changed)), &key).unwrap_err();
    assert!(reason.contains("signature"), "{reason}");

    // A whole receipt forged under another key (its own checkpoint over the
    // right root): consistent in itself, so /v1/verify calls it valid but
    // not trusted; offline, with the published key, it fails.
    let root = transparency::decode_hash(&tree.root).unwrap();
    let forged_checkpoint = other.sign_checkpoint(tree.size, root).unwrap();
    let forged = with_receipt(&|r| {
        r["key"] = json!(other.verifier_key());
        r["checkpoint"] = json!(forged_checkpoint);
    });
    let reason = offline(&forged, &key).unwrap_err();
    assert!(reason.contains("not with the trusted key"), "{reason}");
    assert!(offline(&forged, other.verifier_key()).is_ok(), "the forger's own key opens it");
    let answer = rest.post_bytes("/v1/verify", forged).await;
    assert_eq!(answer.body["valid"], true, "{}", answer.body);
    assert_eq!(answer.body["receipt"]["trusted"], false, "another key than the server's is not trusted: {}", answer.body);
    server.stop().await;
}

async fn tree_of(rest: &Rest, key: &str) -> (String, SignedTree) {
    let note = checkpoint(rest).await;
    let tree = transparency::open_checkpoint(&note, key).unwrap();
    (note, tree)
}

/// The issue's check: "consistency proofs between checkpoints taken before
/// and after more games". Checkpoints read from `/v1/log/checkpoint` after
/// 1, 2, 5 and 9 games: every later one extends every earlier one by the
/// server's proof; the same proof fails for the pair swapped, a forged
/// hash, a checkpoint re-signed over another root, and a proof of other sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consistency_proofs_link_checkpoints_taken_before_and_after_more_games() {
    let dir = tempfile::tempdir().unwrap();
    let signer = LogKey::from_seed("games.example.org/log", &[31; 32]).unwrap();
    let server = server_with_key(dir.path(), &signer).await;
    let rest = server.rest();
    let key = signer.verifier_key().to_string();
    let mut taken = Vec::new();
    for total in [1, 2, 5, 9] {
        while log_info(&rest).await["tree"]["size"].as_u64().unwrap_or(0) < total {
            resigned_game(&rest).await;
        }
        taken.push(tree_of(&rest, &key).await);
    }
    assert_eq!(taken.iter().map(|(_, t)| t.size).collect::<Vec<_>>(), [1, 2, 5, 9]);
    for (i, (_, old)) in taken.iter().enumerate() {
        for (_, new) in &taken[i + 1..] {
            let proof = consistency(&rest, old.size, new.size).await;
            assert_eq!((proof.from, proof.to), (old.size, new.size));
            transparency::check_consistency(old, new, &proof).unwrap_or_else(|e| panic!("{} → {}: {e}", old.size, new.size));
            // Swapped: the older checkpoint does not extend the newer.
            assert!(transparency::check_consistency(new, old, &proof).is_err());
            // A forged hash in the proof.
            for at in 0..proof.proof.len() {
                let mut forged = proof.clone();
                forged.proof[at] = transparency::encode_hash(&transparency::record_hash(b"forged"));
                assert!(transparency::check_consistency(old, new, &forged).is_err(), "{} → {}: hash {at} forged", old.size, new.size);
            }
            // The newer checkpoint re-signed over another root.
            let rewritten = signer.sign_checkpoint(new.size, transparency::record_hash(b"a rewritten log")).unwrap();
            let rewritten = transparency::open_checkpoint(&rewritten, &key).unwrap();
            let err = transparency::check_consistency(old, &rewritten, &proof).unwrap_err();
            assert!(err.contains("prefix"), "{err}");
        }
    }
    // A proof of other sizes than the checkpoints'.
    let (old, new) = (&taken[1].1, &taken[3].1);
    let other_sizes = consistency(&rest, 3, 9).await;
    assert!(transparency::check_consistency(old, new, &other_sizes).is_err());
    // Two checkpoints of one size with different roots: a fork.
    let fork = signer.sign_checkpoint(new.size, transparency::record_hash(b"fork")).unwrap();
    let fork = transparency::open_checkpoint(&fork, &key).unwrap();
    let same = consistency(&rest, new.size, new.size).await;
    transparency::check_consistency(new, new, &same).unwrap();
    let err = transparency::check_consistency(new, &fork, &same).unwrap_err();
    assert!(err.contains("forked"), "{err}");
    server.stop().await;
}

/// Across a restart on the same store (sled, or the same PostgreSQL
/// database) the log keeps its key (made and sealed in the store at first
/// start) and its tree: the same `/v1/log`, the same receipts, and the
/// games that end afterwards extend the tree the old checkpoint signed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_keeps_its_key_and_extends_its_tree() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut ended = Vec::new();
    for _ in 0..3 {
        ended.push(id_of(&resigned_game(&rest).await.0));
    }
    let before = log_info(&rest).await;
    let mut receipts = Vec::new();
    for id in &ended {
        receipts.push(rest.get(&format!("/v1/games/{id}/receipt"), None).await.body);
    }
    let bundle = bundle_of(&rest, &ended[1]).await;
    server.stop().await;

    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    assert_eq!(log_info(&rest).await, before, "the same key and checkpoint after a restart");
    for (id, receipt) in ended.iter().zip(&receipts) {
        assert_eq!(&rest.get(&format!("/v1/games/{id}/receipt"), None).await.body, receipt, "game {id}'s receipt");
    }
    let key = before["key"].as_str().unwrap();
    assert!(offline(&bundle, key).is_ok(), "a bundle exported before the restart still verifies with the key");
    let (_, more) = resigned_game(&rest).await;
    assert_eq!(more["receipt"]["leaf_index"], 3, "the next leaf after the restart: {more}");
    assert_eq!(more["receipt"]["key"], key);
    let old = transparency::open_checkpoint(before["checkpoint"].as_str().unwrap(), key).unwrap();
    let (_, new) = tree_of(&rest, key).await;
    assert_eq!(new.size, 4);
    transparency::check_consistency(&old, &new, &consistency(&rest, 3, 4).await).unwrap();
    server.stop().await;
}

/// A game cancelled before it started is over too: it gets a leaf
/// (`outcome cancelled`) and a bundle that verifies. A finished game
/// imported into another server gets a leaf in that server's log: the
/// importing server's export carries its own receipt, and `/v1/verify` there
/// reports the original bundle's receipt as valid but not under its key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_and_imported_games_get_leaves_in_the_log_of_the_server_that_holds_them() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (TestServer::start(dir_a.path()).await, TestServer::start(dir_b.path()).await);
    let (rest_a, rest_b) = (a.rest(), b.rest());
    let (key_a, key_b) = (log_info(&rest_a).await["key"].clone(), log_info(&rest_b).await["key"].clone());
    assert_ne!(key_a, key_b, "each store makes a key of its own");
    let (key_a, key_b) = (key_a.as_str().unwrap().to_string(), key_b.as_str().unwrap().to_string());

    let waiting = rest_a.post("/v1/games", None, &json!({"kind": "cardinal", "players": ["Ann", null]})).await.body;
    let id = id_of(&waiting);
    let cancelled = rest_a.post(&format!("/v1/games/{id}/cancel"), waiting["admin_token"].as_str(), &json!({})).await;
    assert_eq!(cancelled.status, 200, "{cancelled:?}");
    let receipt = &cancelled.body["receipt"];
    assert_eq!(receipt["leaf_index"], 0, "{cancelled:?}");
    let state = rest_a.get(&format!("/v1/games/{id}"), None).await.body;
    let events = rest_a.events(&id, None).await;
    assert_eq!(receipt["leaf"].as_str().unwrap(), expected_leaf(&id, &state, events.last().unwrap()["hash"].as_str().unwrap()));
    assert!(receipt["leaf"].as_str().unwrap().ends_with("outcome cancelled\n"));
    assert!(offline(&bundle_of(&rest_a, &id).await, &key_a).is_ok());

    let (game, _) = resigned_game(&rest_a).await;
    let id = id_of(&game);
    let bundle = bundle_of(&rest_a, &id).await;
    let imported = rest_b.import(bundle.clone()).await;
    assert_eq!(imported.status, 201, "{imported:?}");
    // B's own leaf for it, under B's key: the same head as A's, as an
    // imported game's, naming the key that signed A's bundle.
    let there = rest_b.get(&format!("/v1/games/{id}/receipt"), None).await;
    assert_eq!(there.status, 200, "{there:?}");
    assert_eq!((there.body["key"].as_str(), there.body["leaf_index"].as_u64()), (Some(key_b.as_str()), Some(0)));
    let (header_a, _) = split::<Value>(&bundle);
    let leaf_a = header_a["receipt"]["leaf"].as_str().unwrap();
    let as_imported = leaf_a.replacen("ludotheque/game-head/v1\n", "ludotheque/imported-game-head/v1\n", 1).replacen(
        "\noutcome ",
        &format!("\norigin key {key_a}\noutcome "),
        1,
    );
    assert_eq!(there.body["leaf"].as_str(), Some(as_imported.as_str()), "both logs commit to the same head; B's says it imported it");
    let bundle_b = bundle_of(&rest_b, &id).await;
    assert!(offline(&bundle_b, &key_b).is_ok());
    assert!(offline(&bundle_b, &key_a).is_err(), "B's bundle is not signed by A's key");
    let report = rest_b.post_bytes("/v1/verify", bundle).await.body;
    assert_eq!((report["valid"].clone(), report["receipt"]["trusted"].clone()), (json!(true), json!(false)), "{report}");
    assert_eq!(report["receipt"]["included"], true, "{report}");
    a.stop().await;
    b.stop().await;
}

/// The issue's check: "the server refuses to … [use a] stored tree [that]
/// disagrees with its last signed checkpoint", on whichever store the
/// suite runs: a byte of the log's last leaf flipped while the server was
/// stopped, and the restarted server serves no log key, checkpoint, proof
/// or receipt (`corrupt_log`, naming the transparency log) rather than sign
/// anything over the altered tree. (`ludo serve` does not start at all:
/// `services/ludo/tests/audit.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_tree_altered_while_the_server_was_stopped_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut ended = Vec::new();
    for _ in 0..3 {
        ended.push(id_of(&resigned_game(&rest).await.0));
    }
    assert_eq!(log_info(&rest).await["tree"]["size"], 3);
    server.stop().await;

    // Every byte of the last leaf's entry is checked: its leaf, its stored
    // hashes, its checkpoint (and the entry's own JSON).
    tamper::flip_record_bit(dir.path(), LOG_STREAM, 2);
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    for path in ["/v1/log", "/v1/log/checkpoint", "/.well-known/ludotheque-log-key", "/v1/log/consistency?from=1&to=2"] {
        let answer = rest.get(path, None).await;
        problem(&answer, 500, "corrupt_log");
        let detail = answer.body["detail"].as_str().unwrap();
        assert!(detail.contains("transparency log"), "{path}: {detail}");
    }
    let answer = rest.get(&format!("/v1/games/{}/receipt", ended[0]), None).await;
    problem(&answer, 500, "corrupt_log");
    // The games themselves are intact and still served.
    let state = rest.get(&format!("/v1/games/{}", ended[0]), None).await;
    assert_eq!((state.status, state.body["status"]["state"].as_str()), (200, Some("finished")), "{state:?}");
    server.stop().await;
}
