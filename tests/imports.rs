//! Import is the operator's act, bounded as creation is, and an imported
//! game says so everywhere, its transparency-log leaf included: the server
//! never signs a statement that a game was played on it when it was not.
//!
//! The forged exports here are what an attacker makes: a real export
//! edited and every record sealed again (the hash chain re-computed), its
//! receipt dropped, so it verifies as a whole and only the server's bounds
//! stand between it and the store.

use ludo_blackbox::{OPERATOR_TOKEN, Rest, TestServer, authed, chooser, raw_exchange};
use ludo_proto::v1 as pb;
use ludo_record::export::{ExportHeader, Revealed};
use ludo_record::record::{GENESIS, GameCreated, Record, RecordBody};
use serde_json::{Value, json};
use tonic_types::StatusExt;

/// A finished game of `kind` on `rest`, and its export.
async fn finished_export(rest: &Rest, kind: &str, players: &[&str], options: Value) -> (String, Vec<u8>) {
    let game = rest.create(kind, players, options).await;
    rest.play(&game, 5000, chooser(11)).await;
    let id = game["id"].as_str().unwrap().to_string();
    let (status, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert_eq!(status, 200);
    (id, export)
}

fn lines(export: &[u8]) -> Vec<&[u8]> {
    export.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n').collect()
}

/// `export` with record 0 edited by `edit` and every record sealed again,
/// its header following record 0 and its receipt dropped: an export that
/// verifies, of a game nobody played.
fn forged(export: &[u8], edit: impl FnOnce(&mut GameCreated)) -> Vec<u8> {
    forged_with_seed(export, None, edit)
}

/// [`forged`], with the game's seed replaced by `seed` (and its commitment
/// in record 0 with it) when given.
fn forged_with_seed(export: &[u8], seed: Option<[u8; 32]>, edit: impl FnOnce(&mut GameCreated)) -> Vec<u8> {
    let lines = lines(export);
    let mut header: ExportHeader = serde_json::from_slice(lines[0]).unwrap();
    if let Some(seed) = seed {
        header.seed = Some(hex::encode(seed));
    }
    let count = usize::try_from(header.records).unwrap();
    let mut edit = Some(edit);
    let (mut prev, mut records) = (GENESIS, Vec::new());
    for (seq, raw) in lines[1..=count].iter().enumerate() {
        let record = Record::from_bytes(raw).unwrap();
        let effects: Vec<Value> = record.effects().map(|e| serde_json::from_slice(e).unwrap()).collect();
        let mut body = record.body.clone();
        if let RecordBody::GameCreated(created) = &mut body {
            if let Some(seed) = seed {
                created.seed_commitment = ludo_record::record::sha256_hex(&seed);
            }
            (edit.take().unwrap())(created);
            header.game_id.clone_from(&created.game_id);
        }
        let sealed = Record::seal(seq as u64, record.at.clone(), body, &effects, &prev).unwrap();
        prev = sealed.hash_bytes().unwrap();
        records.push(sealed.to_bytes());
    }
    let revealed: Vec<Revealed> = lines[count + 1..].iter().map(|line| serde_json::from_slice(line).unwrap()).collect();
    header.receipt = None;
    header.imported = None;
    let forged = ludo_record::export::write(&header, &records, &revealed);
    let report = ludo_record::export::verify(&forged);
    assert!(report.valid, "the forgery verifies as a whole: {:?}", report.fault);
    forged
}

/// A fresh time-ordered game id, as a server makes them (a UUID v7 of now:
/// 48 bits of milliseconds, the version, the variant, bits from the clock).
fn fresh_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let ms = u64::try_from(now.as_millis()).unwrap();
    let bits = u64::from(now.subsec_nanos());
    let hex =
        format!("{ms:012x}7{:03x}8{:03x}{:012x}", bits & 0xfff, (bits >> 12) & 0xfff, bits.wrapping_mul(0x9e37_79b9) & 0xffff_ffff_ffff);
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

fn problem(answer: &ludo_blackbox::Answer, status: u16, code: &str) {
    assert_eq!((answer.status, answer.body["code"].as_str()), (status, Some(code)), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_needs_the_operator_s_token_and_a_server_with_none_takes_no_import() {
    let (dir, closed_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = TestServer::start(dir.path()).await;
    let closed = TestServer::start_configured(
        closed_dir.path(),
        ludo_server::ServerConfig { rates: ludo_server::RateLimits::unlimited(), ..Default::default() },
        |service| service.with_operator_token(None),
    )
    .await;
    let rest = server.rest();
    let (_, export) = finished_export(&rest, "cardinal", &["Ann", "Bob"], json!({})).await;
    let game = rest.create("cardinal", &["Cid", "Dee"], json!({})).await;
    let seat = game["seats"][0]["token"].as_str().unwrap();
    let admin = game["admin_token"].as_str().unwrap();

    // A server whose operator configured no token takes no import, whoever asks.
    for token in [None, Some(OPERATOR_TOKEN)] {
        let answer = closed.rest().post_raw("/v1/games/import", token, "application/x-ndjson", export.clone()).await;
        problem(&answer, 403, "forbidden");
    }
    let mut grpc_closed = closed.grpc().await;
    let status = grpc_closed.import_game(authed(pb::ImportGameRequest { export: export.clone() }, OPERATOR_TOKEN)).await.unwrap_err();
    assert_eq!((status.code(), status.get_details_error_info().unwrap().reason), (tonic::Code::PermissionDenied, "forbidden".into()));

    // Here: no token, a seat's, the game admin's or a wrong one are refused.
    for token in [None, Some(seat), Some(admin), Some("ludo_test_operator_0123456789abcdef0123456789abcdeX")] {
        let answer = rest.post_raw("/v1/games/import", token, "application/x-ndjson", export.clone()).await;
        problem(&answer, 401, "unauthorized");
    }
    let mut grpc = server.grpc().await;
    let status = grpc.import_game(pb::ImportGameRequest { export: export.clone() }).await.unwrap_err();
    assert_eq!((status.code(), status.get_details_error_info().unwrap().reason), (tonic::Code::Unauthenticated, "unauthorized".into()));
    // A refused body is read and dropped, so that the client gets its
    // answer rather than a connection closed under it.
    let answer = rest.post_raw("/v1/games/import", None, "application/x-ndjson", vec![b'x'; 3 << 20]).await;
    problem(&answer, 401, "unauthorized");

    // The operator's token imports (the game exists already here, so: game_exists), over REST and gRPC.
    problem(&rest.import(export.clone()).await, 409, "game_exists");
    let status = grpc.import_game(authed(pb::ImportGameRequest { export }, OPERATOR_TOKEN)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::AlreadyExists, "{status:?}");
    drop((grpc, grpc_closed));
    server.stop().await;
    closed.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_is_bounded_as_creation_is() {
    let (dir, other_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (server, other) = (TestServer::start(dir.path()).await, TestServer::start(other_dir.path()).await);
    let (rest, there) = (server.rest(), other.rest());
    let (_, export) = finished_export(&rest, "kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let games_before = there.get("/v1/games?limit=1000", None).await.body["games"].as_array().unwrap().len();

    // A 10 MB note on the board: refused by size, before anything is read
    // (its length told) or once past the limit (sent in chunks), never
    // re-played.
    let huge = forged(&export, |created| created.options["board"]["note"] = json!("x".repeat(10 << 20)));
    let auth = format!("Authorization: Bearer {OPERATOR_TOKEN}\r\nContent-Type: application/x-ndjson\r\n");
    let told = format!("POST /v1/games/import HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: {}\r\n\r\n", huge.len());
    let (status, body) = raw_exchange(other.addr, told.as_bytes(), 0).await;
    assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{body}");
    let chunked = format!("POST /v1/games/import HTTP/1.1\r\nHost: x\r\n{auth}Transfer-Encoding: chunked\r\n\r\n");
    let (status, body) = raw_exchange(other.addr, chunked.as_bytes(), huge.len()).await;
    assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{body}");
    // A 1 MB note fits the byte limit, not creation's bound on the note.
    let long = forged(&export, |created| created.options["board"]["note"] = json!("x".repeat(1 << 20)));
    let refused = there.import(long).await;
    problem(&refused, 422, "invalid_export");
    assert_eq!(refused.body["seq"], 0, "{refused:?}");
    assert!(refused.body["detail"].as_str().unwrap().contains("note"), "{refused:?}");
    // Names as names are: no bidi override, zero-width or control character.
    for bad in ["Ann\u{202e}", "Bo\u{200b}b", "C\u{7}id"] {
        let named = forged(&export, |created| created.seats[0] = Some(bad.to_string()));
        let refused = there.import(named).await;
        problem(&refused, 422, "invalid_export");
        assert!(refused.body["detail"].as_str().unwrap().contains("players[0]"), "{bad:?}: {refused:?}");
    }
    // Ids as this server makes them: time-ordered (v7), not from the future.
    for id in ["00000000-0000-0000-0000-000000000000", "7c9e6679-7425-40de-944b-e07fc1f90ae7", "ffffffff-ffff-7fff-bfff-ffffffffffff"] {
        let renamed = forged(&export, |created| created.game_id = id.to_string());
        let refused = there.import(renamed).await;
        problem(&refused, 422, "invalid_export");
        assert!(refused.body["detail"].as_str().unwrap().contains(id), "{refused:?}");
    }
    // A game longer than any played here is refused from its header.
    let mut header: Value = serde_json::from_slice(lines(&export)[0]).unwrap();
    header["records"] = json!(ludo_game::MAX_IMPORT_RECORDS + 1);
    let long = [&serde_json::to_vec(&header).unwrap()[..], b"\n", &lines(&export)[1..].join(&b'\n')[..], b"\n"].concat();
    problem(&there.import(long).await, 400, "invalid_input");
    let games_after = there.get("/v1/games?limit=1000", None).await.body["games"].as_array().unwrap().len();
    assert_eq!(games_after, games_before, "a refused import stored nothing");
    server.stop().await;
    other.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_game_imports_only_as_imported_from_nowhere_known_and_its_leaf_says_so() {
    let (dir, other_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (server, other) = (TestServer::start(dir.path()).await, TestServer::start(other_dir.path()).await);
    let (rest, there) = (server.rest(), other.rest());
    let (_, export) = finished_export(&rest, "battle13", &["North", "East", "South", "West"], json!({"target_crowns": 20})).await;
    // A game nobody played: a new id, every record sealed again, no receipt.
    let id = fresh_id();
    let made_up = forged(&export, |created| created.game_id.clone_from(&id));
    let imported = there.import(made_up).await;
    assert_eq!(imported.status, 201, "{imported:?}");
    assert_eq!(imported.body["imported"], json!({"key": null}), "{imported:?}");
    // Its view, its listing, its export and its leaf say it was imported from nowhere known.
    let state = there.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["imported"], json!({"key": null}), "{state}");
    let listed = there.get("/v1/games?limit=1000", None).await.body;
    let entry = listed["games"].as_array().unwrap().iter().find(|g| g["id"] == id.as_str()).expect("listed").clone();
    assert_eq!(entry["imported"], json!({"key": null}), "{entry}");
    let leaf = state["receipt"]["leaf"].as_str().expect("a receipt").to_string();
    assert!(leaf.starts_with(&format!("ludotheque/imported-game-head/v1\ngame {id}\n")), "{leaf}");
    assert!(leaf.contains("\norigin unknown\n"), "{leaf}");
    let (_, bundle) = there.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    let header: Value = serde_json::from_slice(lines(&bundle)[0]).unwrap();
    assert_eq!(header["imported"], json!({"key": null}));
    // The bundle verifies offline with the importer's key; stripped of the
    // mark, its receipt no longer does.
    let key = there.get("/v1/log", None).await.body["key"].as_str().unwrap().to_string();
    let report = ludo_record::export::verify_with(&bundle, Some(&key));
    assert!(report.valid, "{:?}", report.fault);
    let mut unmarked = header.clone();
    unmarked.as_object_mut().unwrap().remove("imported");
    let stripped = [&serde_json::to_vec(&unmarked).unwrap()[..], b"\n", &lines(&bundle)[1..].join(&b'\n')[..], b"\n"].concat();
    let report = ludo_record::export::verify_with(&stripped, Some(&key));
    assert!(!report.valid, "a receipt for an imported game never passes for one played there");
    // No leaf of the importer's log says the game was played there.
    let played = format!("ludotheque/game-head/v1\ngame {id}\n");
    assert!(!leaf.starts_with(&played));

    // A Cardinal game whose first seat was chosen needs nothing of its
    // seed: a forger may claim any seed at all (here 32 zero bytes, and a
    // commitment to it) and the export still verifies. It imports only as
    // imported from nowhere known.
    let (_, cardinal) = finished_export(&rest, "cardinal", &["Ann", "Bob"], json!({"first_seat": 0})).await;
    let chosen = fresh_id();
    let seeded = forged_with_seed(&cardinal, Some([0; 32]), |created| created.game_id.clone_from(&chosen));
    let imported = there.import(seeded).await;
    assert_eq!((imported.status, &imported.body["imported"]), (201, &json!({"key": null})), "{imported:?}");
    let state = there.get(&format!("/v1/games/{chosen}"), None).await.body;
    assert_eq!(state["seed"], "0".repeat(64), "the chosen seed, published as the game's");
    let leaf = state["receipt"]["leaf"].as_str().unwrap();
    assert!(leaf.starts_with("ludotheque/imported-game-head/v1\n") && leaf.contains("\norigin unknown\n"), "{leaf}");
    server.stop().await;
    other.stop().await;
}
