//! Replay, audit and live updates: export → verify → import for every game
//! kind, tampering caught at the exact record (in an export and in the
//! store), seed commitments checked, live streams that deliver every record
//! exactly once in order across a reconnect, redacted per seat.

use ludo_blackbox::{Rest, TestServer, authed, chooser, kardinal_leaks, tamper};
use ludo_proto::v1 as pb;
use serde_json::{Value, json};

async fn finished(rest: &Rest, kind: &str, players: &[&str], options: Value, seed: u64) -> Value {
    let game = rest.create(kind, players, options).await;
    rest.play(&game, 5000, chooser(seed)).await;
    let id = game["id"].as_str().unwrap();
    assert_eq!(rest.get(&format!("/v1/games/{id}"), None).await.body["status"]["state"], "finished");
    game
}

fn lines(export: &[u8]) -> Vec<&[u8]> {
    export.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n').collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_verify_import_replays_identically_for_every_kind() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (TestServer::start(dir_a.path()).await, TestServer::start(dir_b.path()).await);
    let (rest_a, rest_b) = (a.rest(), b.rest());
    let games = [
        ("cardinal", vec!["Ann", "Bob", "Cid"], json!({})),
        ("kardinal", vec!["Ann", "Bob", "Cid", "Dee"], json!({})),
        ("battle13", vec!["North", "East", "South", "West"], json!({"target_crowns": 20})),
    ];
    for (i, (kind, players, options)) in games.into_iter().enumerate() {
        let game = finished(&rest_a, kind, &players, options, 100 + i as u64).await;
        let id = game["id"].as_str().unwrap();
        let (status, export) = rest_a.get_bytes(&format!("/v1/games/{id}/export"), None).await;
        assert_eq!(status, 200);
        let header: Value = serde_json::from_slice(lines(&export)[0]).unwrap();
        assert_eq!(header["format"], "ludotheque-export/1");
        assert_eq!(header["finished"], true);
        assert!(header["seed"].is_string(), "a finished game's export carries its seed");

        let report = rest_a.post_bytes("/v1/verify", export.clone()).await;
        assert_eq!(report.status, 200);
        assert_eq!(report.body["valid"], true, "{kind}: {}", report.body);
        assert_eq!(report.body["seed"], "matches");
        assert_eq!(report.body["replayed"], true);
        assert_eq!(report.body["revealed"], header["revealed"], "every revealed line was checked");
        let events = rest_a.events(id, None).await;
        assert_eq!(report.body["last_hash"], events.last().unwrap()["hash"], "the report's last hash is the server's");
        let state_a = rest_a.get(&format!("/v1/games/{id}"), None).await.body;
        assert_eq!(report.body["status"], state_a["status"]);

        // The hidden cards are revealed after the records, checked by replay;
        // the same export without them (as exports were before) still verifies.
        let announced = header["revealed"].as_u64().expect("a finished game's export counts its revealed lines");
        let records = header["records"].as_u64().unwrap() as usize;
        let revealed: Vec<Value> = lines(&export)[1 + records..].iter().map(|l| serde_json::from_slice(l).unwrap()).collect();
        assert_eq!(revealed.len() as u64, announced);
        if kind == "cardinal" {
            assert!(revealed.is_empty(), "Cardinal hides nothing");
        } else {
            assert!(!revealed.is_empty(), "{kind} deals hidden cards");
            for line in &revealed {
                let seq = line["revealed"].as_u64().unwrap() as usize;
                let stored: Value = serde_json::from_slice(lines(&export)[1 + seq]).unwrap();
                assert_ne!(stored["effects"], line["effects"], "{kind} record {seq} is revealed because it hid something");
                assert!(!line["effects"].to_string().contains("null"), "{kind} record {seq} still hides something: {}", line["effects"]);
            }
        }
        let mut old_header = header.clone();
        old_header.as_object_mut().unwrap().remove("revealed");
        let old_form =
            [&serde_json::to_vec(&old_header).unwrap()[..], b"\n", &lines(&export)[1..=records].join(&b'\n')[..], b"\n"].concat();
        assert!(ludo_record::export::verify(&old_form).valid, "{kind}: an export without revealed lines");

        let imported = rest_b.import(export.clone()).await;
        assert_eq!(imported.status, 201, "{imported:?}");
        assert_eq!(imported.body["id"], id);
        assert_eq!(rest_b.import(export.clone()).await.body["code"], "game_exists");
        // The imported game is the same game: state, log, steps and every
        // replay. It says it was imported, from the key that signed A's
        // bundle; and B's receipt commits to the same head as an imported
        // game's, under B's own key: B never signs that it was played there.
        let mut state_b = rest_b.get(&format!("/v1/games/{id}"), None).await.body;
        let (mut state_a, receipt_b) = (state_a.clone(), state_b.as_object_mut().unwrap().remove("receipt"));
        let receipt_a = state_a.as_object_mut().unwrap().remove("receipt");
        let (receipt_a, receipt_b) = (receipt_a.expect("A's receipt"), receipt_b.expect("B's receipt"));
        let origin = state_b.as_object_mut().unwrap().remove("imported");
        assert_eq!(origin, Some(json!({"key": receipt_a["key"]})), "{kind}: B shows where the game came from");
        assert!(state_a.get("imported").is_none(), "{kind}: A played it");
        assert_eq!(state_b, state_a);
        let (leaf_a, leaf_b) = (receipt_a["leaf"].as_str().unwrap(), receipt_b["leaf"].as_str().unwrap());
        assert!(leaf_a.starts_with("ludotheque/game-head/v1\n"), "{leaf_a}");
        let key_a = receipt_a["key"].as_str().unwrap();
        let expected_b = leaf_a.replacen("ludotheque/game-head/v1", "ludotheque/imported-game-head/v1", 1).replacen(
            "\noutcome ",
            &format!("\norigin key {key_a}\noutcome "),
            1,
        );
        assert_eq!(leaf_b, expected_b, "{kind}: B commits to the same head, as an imported game's");
        assert_ne!(receipt_a["key"], receipt_b["key"], "{kind}: each server signs with its own key");
        let listed = rest_b.get("/v1/games?limit=1000", None).await.body;
        let entry = listed["games"].as_array().unwrap().iter().find(|g| g["id"] == id).expect("listed on B").clone();
        assert_eq!(entry["imported"], json!({"key": key_a}), "{kind}: the listing says so too");
        assert_eq!(rest_b.events(id, None).await, events);
        assert_eq!(
            rest_b.get(&format!("/v1/games/{id}/steps?limit=1000"), None).await.body,
            rest_a.get(&format!("/v1/games/{id}/steps?limit=1000"), None).await.body
        );
        let version = state_a["version"].as_u64().unwrap();
        for at in (0..=version).step_by(7) {
            let path = format!("/v1/games/{id}/replay?at={at}");
            let mut replay_b = rest_b.get(&path, None).await.body;
            assert_eq!(replay_b.as_object_mut().unwrap().remove("imported"), Some(json!({"key": key_a})), "{kind} replay at {at}");
            assert_eq!(replay_b, rest_a.get(&path, None).await.body, "{kind} replay at {at}");
        }
        let (_, export_b) = rest_b.get_bytes(&format!("/v1/games/{id}/export"), None).await;
        assert_eq!(lines(&export_b)[1..], lines(&export)[1..], "re-exported records are byte-identical");
        let header_b: Value = serde_json::from_slice(lines(&export_b)[0]).unwrap();
        assert_eq!(header_b["imported"], json!({"key": key_a}), "{kind}: B's export says so too");
        let report = ludo_record::export::verify(&export_b);
        assert!(report.valid, "{kind}: B's bundle verifies: {:?}", report.fault);
        // Dropping the mark from B's bundle breaks its receipt.
        let mut unmarked = header_b.clone();
        unmarked.as_object_mut().unwrap().remove("imported");
        let forged = [&serde_json::to_vec(&unmarked).unwrap()[..], b"\n", &lines(&export_b)[1..].join(&b'\n')[..], b"\n"].concat();
        let report = ludo_record::export::verify(&forged);
        assert!(!report.valid && report.fault.as_ref().is_some_and(|f| f.reason.contains("receipt")), "{kind}: {:?}", report.fault);
    }
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_exports_are_caught_at_the_exact_record() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = finished(&rest, "cardinal", &["Ann", "Bob"], json!({"first_seat": 0}), 7).await;
    let id = game["id"].as_str().unwrap();
    let (_, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    let header: Value = serde_json::from_slice(lines(&export)[0]).unwrap();
    let records = header["records"].as_u64().unwrap() as usize;
    let mut checked = 0;
    for seq in 0..records {
        let line = lines(&export)[seq + 1];
        let start: usize = lines(&export)[..=seq].iter().map(|l| l.len() + 1).sum();
        for offset in [0, line.len() / 3, line.len() / 2, line.len() - 2, line.len() - 1] {
            let mut tampered = export.clone();
            tampered[start + offset] ^= 0x01;
            let report = ludo_record::export::verify(&tampered);
            assert!(!report.valid, "flipping byte {offset} of record {seq} went unnoticed");
            let fault = report.fault.unwrap();
            assert_eq!((fault.line, fault.seq), (seq as u64 + 2, Some(seq as u64)), "record {seq}, byte {offset}: {}", fault.reason);
            checked += 1;
        }
    }
    assert!(checked >= 5 * 30);
    // The same through the server, and an import of it is refused with the place.
    let mut tampered = export.clone();
    let start: usize = lines(&export)[..=5].iter().map(|l| l.len() + 1).sum();
    tampered[start + 30] ^= 0x02;
    let report = rest.post_bytes("/v1/verify", tampered.clone()).await.body;
    assert_eq!((report["valid"].clone(), report["fault"]["seq"].clone()), (json!(false), json!(5)));
    let refused = rest.import(tampered).await;
    assert_eq!((refused.status, refused.body["code"].clone(), refused.body["seq"].clone()), (422, json!("invalid_export"), json!(5)));
    // A record removed from the middle, or a forged seed.
    let mut removed: Vec<&[u8]> = lines(&export);
    removed.remove(4);
    let report = ludo_record::export::verify(&[removed.join(&b'\n'), b"\n".to_vec()].concat());
    assert_eq!(report.fault.unwrap().seq, Some(3), "the gap is found where record 3 should be");
    let mut header: Value = serde_json::from_slice(lines(&export)[0]).unwrap();
    header["seed"] = json!("00".repeat(32));
    let forged = [serde_json::to_vec(&header).unwrap(), export[lines(&export)[0].len()..].to_vec()].concat();
    let report = ludo_record::export::verify(&forged);
    assert_eq!(report.seed, ludo_record::export::SeedCheck::Mismatch);
    assert_eq!(report.fault.unwrap().line, 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_in_the_stored_log_is_caught_at_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let victim = rest.create("cardinal", &["Ann", "Bob"], json!({})).await;
    rest.play(&victim, 12, chooser(3)).await;
    let bystander = rest.create("cardinal", &["Cid", "Dee"], json!({})).await;
    rest.play(&bystander, 4, chooser(4)).await;
    let id = victim["id"].as_str().unwrap();
    server.stop().await;

    tamper::flip_record_bit(dir.path(), id, 5);

    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let answer = rest.get(&format!("/v1/games/{id}"), None).await;
    assert_eq!(
        (answer.status, answer.body["code"].clone(), answer.body["seq"].clone()),
        (500, json!("corrupt_log"), json!(5)),
        "{answer:?}"
    );
    let bystander_id = bystander["id"].as_str().unwrap();
    assert_eq!(rest.get(&format!("/v1/games/{bystander_id}"), None).await.status, 200, "other games are untouched");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_delivers_every_record_once_in_order_across_a_reconnect() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("cardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let id = game["id"].as_str().unwrap().to_string();
    rest.play(&game, 3, chooser(1)).await;
    let mut seen: Vec<u64> = Vec::new();
    let mut hashes: Vec<Value> = Vec::new();
    let mut stream = rest.sse(&format!("/v1/games/{id}/stream"), None, None).await;
    // A player plays the whole game while we watch.
    let player = {
        let (rest, game) = (rest.clone(), game.clone());
        tokio::spawn(async move { rest.play(&game, 500, chooser(2)).await })
    };
    while seen.len() < 10 {
        let event = stream.next().await.expect("the stream goes on");
        assert_eq!(event.event, "record");
        seen.push(event.id.unwrap().parse().unwrap());
        hashes.push(event.data["event"]["hash"].clone());
    }
    drop(stream); // disconnect while the game goes on
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let last = *seen.last().unwrap();
    let mut stream = rest.sse(&format!("/v1/games/{id}/stream"), None, Some(last)).await;
    let mut final_status = Value::Null;
    while let Some(event) = stream.next().await {
        if event.event == "end" {
            final_status = event.data["status"].clone();
            assert_eq!(event.data["version"], json!(seen.last().unwrap()), "the end names the last record");
            break;
        }
        assert_eq!(event.event, "record");
        seen.push(event.id.unwrap().parse().unwrap());
        hashes.push(event.data["event"]["hash"].clone());
    }
    assert!(stream.next().await.is_none(), "nothing follows the end");
    player.await.unwrap();
    let events = rest.events(&id, None).await;
    let version = events.len() as u64 - 1;
    assert_eq!(seen, (0..=version).collect::<Vec<_>>(), "every record exactly once, in order");
    assert_eq!(hashes, events.iter().map(|e| e["hash"].clone()).collect::<Vec<_>>());
    assert_eq!(final_status["state"], "finished", "the stream ends with the game, saying so");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seats_stream_never_carries_another_seats_hand() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let mut seat1 = rest.sse(&format!("/v1/games/{id}/stream"), game["seats"][1]["token"].as_str(), None).await;
    let mut spectator = rest.sse(&format!("/v1/games/{id}/stream"), None, None).await;
    let player = {
        let (rest, game) = (rest.clone(), game.clone());
        tokio::spawn(async move { rest.play(&game, 80, chooser(9)).await })
    };
    let played = player.await.unwrap();
    let (mut leaks, mut own_cards_seen, mut updates) = (Vec::new(), 0, 0);
    let within = std::time::Duration::from_secs(30);
    while updates <= played {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), seat1.next())
            .await
            .unwrap_or_else(|_| panic!("seat 1's stream stalled after {updates} of {} updates", played + 1))
            .expect("seat 1's stream");
        leaks.extend(kardinal_leaks(&event.data, Some(1)));
        own_cards_seen += usize::from(event.data["view"]["seats"][1]["hand"].is_array());
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), spectator.next())
            .await
            .unwrap_or_else(|_| panic!("the spectator's stream stalled after {updates} of {} updates", played + 1))
            .expect("the spectator's stream");
        leaks.extend(kardinal_leaks(&event.data, None));
        updates += 1;
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert_eq!(own_cards_seen, updates, "seat 1 sees its own hand in every update");
    // The game still runs: stopping the server must end its live streams.
    tokio::time::timeout(within, server.stop()).await.expect("a server with open streams stops");
    assert!(tokio::time::timeout(within, seat1.next()).await.expect("the stream ends").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_watch_export_verify_and_steps() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("battle13", &["North", "East", "South", "West"], json!({})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let mut grpc = server.grpc().await;
    let mut updates = grpc
        .watch_game(authed(pb::WatchGameRequest { id: id.clone(), from: 0 }, game["seats"][2]["token"].as_str().unwrap()))
        .await
        .unwrap()
        .into_inner();
    let player = {
        let (rest, game) = (rest.clone(), game.clone());
        tokio::spawn(async move { rest.play(&game, 5000, chooser(5)).await })
    };
    let mut seqs = Vec::new();
    while let Some(update) = updates.message().await.unwrap() {
        seqs.push(update.event.unwrap().seq);
        assert!(matches!(update.view.unwrap().game, Some(pb::view::Game::Battle13(_))));
    }
    let played = player.await.unwrap() as u64;
    assert_eq!(seqs, (0..=played).collect::<Vec<_>>(), "every record once, in order, then the end");

    let export = grpc.export_game(pb::ExportGameRequest { id: id.clone() }).await.unwrap().into_inner().export;
    let report = grpc.verify_game(pb::VerifyGameRequest { export: export.clone() }).await.unwrap().into_inner();
    assert!(report.valid && report.replayed);
    assert_eq!(report.seed, pb::SeedCheck::Matches as i32);
    // A byte near the end of the last record (the revealed lines follow it).
    let records_end: usize = lines(&export)[..=played as usize + 1].iter().map(|l| l.len() + 1).sum();
    let mut tampered = export;
    let at = records_end - 40;
    tampered[at] ^= 0x01;
    let report = grpc.verify_game(pb::VerifyGameRequest { export: tampered }).await.unwrap().into_inner();
    assert!(!report.valid);
    assert_eq!(report.fault.unwrap().seq, Some(played), "the last record is at fault");

    let steps = grpc.list_steps(pb::ListStepsRequest { id: id.clone(), from: 0, limit: 1000 }).await.unwrap().into_inner();
    assert_eq!(steps.steps.len() as u64, played + 1);
    assert!(steps.steps.iter().all(|s| !s.lines.is_empty()), "every record says something");
    let text: Vec<String> = steps.steps.iter().flat_map(|s| s.lines.clone()).collect();
    assert!(text.iter().any(|l| l.contains("Tournament") && l.contains("won by")), "tricks are narrated");
    drop(grpc);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_revealed_line_is_caught_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = finished(&rest, "battle13", &["North", "East", "South", "West"], json!({"target_crowns": 20}), 11).await;
    let id = game["id"].as_str().unwrap();
    let (_, export) = rest.get_bytes(&format!("/v1/games/{id}/export"), None).await;
    assert!(ludo_record::export::verify(&export).valid);
    let all = lines(&export);
    let header: Value = serde_json::from_slice(all[0]).unwrap();
    let records = header["records"].as_u64().unwrap() as usize;
    let first = 1 + records;
    assert!(all.len() > first, "a Battle 13 game reveals its deals");
    let join = |lines: &[Vec<u8>]| [lines.join(&b'\n'), b"\n".to_vec()].concat();
    let owned: Vec<Vec<u8>> = all.iter().map(|l| l.to_vec()).collect();

    // A revealed card swapped for another: named at its line and record.
    let mut line: Value = serde_json::from_slice(all[first]).unwrap();
    let seq = line["revealed"].as_u64().unwrap();
    let text = line["effects"].to_string();
    let changed = text.replacen("\"strength\":", "\"strength\":1", 1);
    assert_ne!(text, changed, "the revealed effects name cards: {text}");
    line["effects"] = serde_json::from_str(&changed).unwrap();
    let mut tampered = owned.clone();
    tampered[first] = serde_json::to_vec(&line).unwrap();
    let fault = ludo_record::export::verify(&join(&tampered)).fault.expect("a changed card is caught");
    assert_eq!((fault.line, fault.seq), ((first + 1) as u64, Some(seq)), "{}", fault.reason);

    // A revealed line dropped (with the count kept or fixed), or one added.
    let mut dropped = owned.clone();
    dropped.remove(first);
    assert_eq!(ludo_record::export::verify(&join(&dropped)).fault.unwrap().line, 1, "the header's count no longer matches");
    let mut recounted: Value = header.clone();
    recounted["revealed"] = json!(header["revealed"].as_u64().unwrap() - 1);
    dropped[0] = serde_json::to_vec(&recounted).unwrap();
    let fault = ludo_record::export::verify(&join(&dropped)).fault.unwrap();
    assert_eq!(fault.line, (first + 1) as u64, "the first revealed line is now wrong or missing: {}", fault.reason);
    server.stop().await;
}
