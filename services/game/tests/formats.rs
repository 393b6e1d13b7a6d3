//! Record formats: every log written before format 3 (formats 1 and 2)
//! still reads, replays, verifies and imports, and goes on in the format
//! of the day; format 2's bot marks and format 3's seat records are checked
//! by replay like everything else.
//!
//! `fixtures/format1/*.ndjson` are whole exports of finished games (one per
//! kind) as the version before format 2 wrote them (`ludo simulate
//! --records`, commit e1d414e): kept byte for byte, never regenerated.

use std::sync::Arc;

use ludo_engine::Seat;
use ludo_game::api::{CreateGame, Player, SubmitMove};
use ludo_game::secrets::Secrets;
use ludo_game::{GameService, SystemClock};
use ludo_record::bot::{BotLevel, BotMark, BotRequest, BotSeat};
use ludo_record::export::{self, ExportHeader};
use ludo_record::record::{GENESIS, GameCreated, MoveRecord, Record, RecordBody, SeatBotRecord, SeatJoined};
use ludo_record::replay::replay;
use ludo_record::table::TokenBy;
use ludo_storage::{AppendRequest, EventStore, MemoryStore};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const FIXTURES: [(&str, &str); 3] = [
    ("cardinal", include_str!("fixtures/format1/cardinal.ndjson")),
    ("kardinal", include_str!("fixtures/format1/kardinal.ndjson")),
    ("battle13", include_str!("fixtures/format1/battle13.ndjson")),
];

fn records_of(export: &str) -> (ExportHeader, Vec<Vec<u8>>) {
    let mut lines = export.lines();
    let header: ExportHeader = serde_json::from_str(lines.next().expect("a header")).expect("an export header");
    let records = lines.take(header.records as usize).map(|line| line.as_bytes().to_vec()).collect();
    (header, records)
}

#[test]
fn format_1_exports_still_verify_replay_and_read_as_format_1() {
    for (kind, export) in FIXTURES {
        let report = export::verify(export.as_bytes());
        assert!(report.valid, "{kind}: {:?}", report.fault);
        assert!(report.replayed && report.chain_intact, "{kind}: replayed and chained");
        assert!(report.status.as_ref().is_some_and(ludo_record::Status::is_finished), "{kind}: the game was over");
        let (_, bytes) = records_of(export);
        for raw in &bytes {
            let record = Record::from_bytes(raw).expect("a format 1 record reads");
            assert_eq!(record.format, 1, "{kind}: the fixture is format 1");
            // Read records keep their bytes: the hash still covers what was written.
            assert_eq!(record.bytes(), &raw[..]);
            match &record.body {
                RecordBody::GameCreated(created) => assert!(created.bots.is_empty(), "format 1 has no bot seats"),
                RecordBody::Move(mv) => assert!(mv.bot.is_none(), "format 1 moves were a seat's own"),
                other => panic!("format 1 has no {} records", other.type_name()),
            }
        }
    }
}

#[test]
fn a_format_1_record_with_format_2_members_is_refused() {
    let (_, bytes) = records_of(FIXTURES[0].1);
    let text = String::from_utf8(bytes[1].clone()).unwrap();
    assert!(text.starts_with(r#"{"at":"#), "{text}");
    // A `bot` member in a record that says format 1 is not canonical format 1.
    let with_bot = text.replacen(r#"","effects":"#, r#"","bot":null,"effects":"#, 1);
    assert!(Record::from_bytes(with_bot.as_bytes()).unwrap_err().contains("format 1 move"), "{with_bot}");
    // And a format 2 record without it is not canonical format 2.
    let as_two = text.replace(r#""format":1,"#, r#""format":2,"#);
    assert!(Record::from_bytes(as_two.as_bytes()).unwrap_err().contains("format 2 move"), "{as_two}");
}

#[tokio::test]
async fn format_1_exports_import_and_read_back() {
    for (kind, export) in FIXTURES {
        let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
        let service = GameService::new(store, Arc::new(SystemClock)).with_operator_token(Some(OPERATOR));
        let imported = service.import(export.as_bytes().to_vec(), Some(OPERATOR)).await.expect("a format 1 export imports");
        let id = imported.id.parse().unwrap();
        let page = service.events(&id, None, 0, 1000).await.unwrap();
        let (header, records) = records_of(export);
        assert_eq!(page.events.len(), records.len(), "{kind}");
        assert!(page.events.iter().all(|e| e.bot.is_none() && e.handover.is_none()), "{kind}: no bots in format 1");
        // The export made now is the same log, byte for byte.
        let again = service.export(&id, None).await.unwrap();
        let (again_header, again_records) = records_of(std::str::from_utf8(&again).unwrap());
        assert_eq!(again_records, records, "{kind}: records re-exported unchanged");
        assert_eq!(again_header.seed, header.seed);
    }
}

/// A game left half-played by the version before format 2 goes on: its
/// next move is written in format 2, and the mixed log verifies.
#[tokio::test]
async fn a_half_played_format_1_game_goes_on_in_the_format_of_the_day() {
    let (header, records) = records_of(FIXTURES[0].1);
    let cut = records.len() / 2;
    let mut seed = [0u8; 32];
    hex::decode_to_slice(header.seed.as_deref().unwrap(), &mut seed).unwrap();
    let tokens = ["token-of-seat-0", "token-of-seat-1"];
    let secrets = Secrets {
        seed: ludo_engine::Seed(seed),
        token_hashes: tokens.iter().map(|t| <[u8; 32]>::from(Sha256::digest(t.as_bytes()))).collect(),
        admin_hash: None,
        invitation_hashes: Vec::new(),
        webhook: None,
        imported: None,
    };
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let stream = header.game_id.parse::<ludo_game::GameId>().unwrap().stream();
    store.append(AppendRequest::create(stream, records[..cut].to_vec(), Some(secrets.to_bytes()))).await.unwrap();
    let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
    let id = header.game_id.parse().unwrap();
    let state = service.get(&id, None).await.expect("the half-played format 1 game loads");
    assert_eq!(state.version, cut as u64 - 1);
    let seat = state.status.to_move()[0];
    let token = tokens[usize::from(seat.0)];
    let legal = service.legal_moves(&id, Some(token)).await.unwrap();
    let mv = serde_json::to_value(&legal.moves[0]).unwrap();
    let accepted = service.submit(&id, Some(token), SubmitMove { mv, expected_version: Some(state.version), request_id: None }).await;
    assert_eq!(accepted.expect("the next move is taken").version, cut as u64);
    let export = service.export(&id, None).await.unwrap();
    let report = export::verify(&export);
    assert!(report.valid && report.chain_intact, "{:?}", report.fault);
    let (_, mixed) = records_of(std::str::from_utf8(&export).unwrap());
    let formats: Vec<u32> = mixed.iter().map(|r| Record::from_bytes(r).unwrap().format).collect();
    assert!(formats[..cut].iter().all(|&f| f == 1) && formats[cut] == ludo_record::record::FORMAT, "{formats:?}");
}

fn created(bots: Vec<Option<BotSeat>>) -> (Record, ludo_engine::Seed) {
    let seed = ludo_engine::Seed([9; 32]);
    let kind = ludo_record::kinds::kind("cardinal").unwrap();
    let new = kind.create(2, &json!({}), &seed).unwrap();
    let public: Vec<_> = new.effects.iter().map(|e| new.game.redact(e, ludo_engine::Viewer::Spectator)).collect();
    let body = RecordBody::GameCreated(GameCreated {
        game_id: "00000000-0000-7000-8000-000000000001".into(),
        kind: kind.id.into(),
        ruleset: kind.ruleset.into(),
        options: new.options,
        seats: vec![Some("Ann".into()), Some("Robo".into())],
        bots,
        public: false,
        clock: None,
        seed_commitment: ludo_record::record::sha256_hex(&seed.0),
    });
    (Record::seal(0, "2026-11-23T00:00:00.000Z".into(), body, &public, &GENESIS).unwrap(), seed)
}

/// The records of `seat`'s first legal move after `log`, marked with `bot`.
fn next_move(log: &[Record], seed: &ludo_engine::Seed, bot: Option<BotMark>) -> Record {
    let replayed = replay(log, seed, false).unwrap();
    let mut game = replayed.state.game;
    let seat = game.status().to_move()[0];
    let mv = game.legal_moves(seat)[0].clone();
    let effects = game.apply(seat, &mv).unwrap();
    let public: Vec<_> = effects.iter().map(|e| game.redact(e, ludo_engine::Viewer::Spectator)).collect();
    let record = MoveRecord::new(seat, &mv, None).unwrap();
    let body = RecordBody::Move(match bot {
        Some(bot) => record.by_bot(bot),
        None => record,
    });
    let last = log.last().unwrap();
    Record::seal(last.seq + 1, "2026-11-23T00:00:01.000Z".into(), body, &public, &last.hash_bytes().unwrap()).unwrap()
}

#[test]
fn a_move_marked_as_a_bot_replays_only_where_that_bot_played_the_seat() {
    let strong = BotSeat { level: BotLevel::Strong, think_ms: 0 };
    let mark = |level| Some(BotMark { level, version: "0.1.0".into() });
    // Both seats bots: a marked move replays.
    let (first, seed) = created(vec![Some(strong), Some(strong)]);
    let log = vec![first.clone()];
    let marked = next_move(&log, &seed, mark(BotLevel::Strong));
    assert!(replay(&[first.clone(), marked], &seed, false).is_ok());
    // The mark names another level: refused.
    let wrong = next_move(&log, &seed, mark(BotLevel::Random));
    assert!(replay(&[first, wrong], &seed, false).unwrap_err().reason.contains("marked"));
    // No bot plays the seat: a marked move is refused, an unmarked one replays.
    let (first, seed) = created(vec![None, None]);
    let log = vec![first.clone()];
    let marked = next_move(&log, &seed, mark(BotLevel::Strong));
    let err = replay(&[first.clone(), marked], &seed, false).unwrap_err();
    assert_eq!(err.seq, 1);
    assert!(err.reason.contains("marked"), "{}", err.reason);
    assert!(replay(&[first, next_move(&log, &seed, None)], &seed, false).is_ok());
}

#[test]
fn a_seat_handed_to_a_bot_lets_that_bot_move_and_taking_it_back_stops_it() {
    let (first, seed) = created(vec![None, None]);
    let to_move = replay(std::slice::from_ref(&first), &seed, false).unwrap().state.game.status().to_move()[0];
    let random = BotSeat { level: BotLevel::Random, think_ms: 0 };
    let hand = |log: &[Record], bot: Option<BotSeat>| {
        let last = log.last().unwrap();
        let body = RecordBody::SeatBot(SeatBotRecord { seat: to_move, bot });
        Record::seal(last.seq + 1, "2026-11-23T00:00:02.000Z".into(), body, &[] as &[Value], &last.hash_bytes().unwrap()).unwrap()
    };
    let mut log = vec![first];
    log.push(hand(&log, Some(random)));
    let replayed = replay(&log, &seed, false).unwrap();
    assert_eq!(replayed.state.table.bot(to_move), Some(random));
    assert_eq!(replayed.state.version, 1, "a hand-over is a record");
    log.push(next_move(&log, &seed, Some(BotMark { level: BotLevel::Random, version: "0.1.0".into() })));
    assert!(replay(&log, &seed, false).is_ok(), "the bot moved for the seat it was handed");
    // Taken back before its next turn: a marked move of that seat is refused.
    let mut back = log[..2].to_vec();
    back.push(hand(&back, None));
    back.push(next_move(&back, &seed, Some(BotMark { level: BotLevel::Random, version: "0.1.0".into() })));
    assert!(replay(&back, &seed, false).unwrap_err().reason.contains("marked"));
    // A seat that is not at the table is refused.
    let mut stranger = log[..1].to_vec();
    let last = &stranger[0];
    let body = RecordBody::SeatBot(SeatBotRecord { seat: Seat(5), bot: Some(random) });
    stranger.push(Record::seal(1, "2026-11-23T00:00:02.000Z".into(), body, &[] as &[Value], &last.hash_bytes().unwrap()).unwrap());
    assert!(replay(&stranger, &seed, false).unwrap_err().reason.contains("not at the table"));
}

#[tokio::test]
async fn created_bot_seats_are_recorded_in_game_created() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = GameService::new(store, Arc::new(SystemClock));
    let players = vec![Player::named("Ann"), Player::bot("Robo", BotRequest { level: BotLevel::Greedy, think_ms: Some(250) })];
    let game = service.create(CreateGame::new("cardinal", players)).await.unwrap();
    let id = game.id.parse().unwrap();
    let page = service.events(&id, None, 0, 1).await.unwrap();
    let created = page.events[0].game.as_ref().unwrap();
    assert_eq!(created.bots, vec![None, Some(BotSeat { level: BotLevel::Greedy, think_ms: 250 })]);
    let state = service.get(&id, None).await.unwrap();
    assert_eq!(state.seats[1].bot, Some(BotSeat { level: BotLevel::Greedy, think_ms: 250 }));
    assert_eq!(state.seats[0].bot, None);
}

/// Whole exports of finished games as the version before format 3 wrote
/// them (commit 97f2b97, by a running server: bot seats, bot marks,
/// autopilot hand-overs and take-backs, request ids), kept byte for byte.
const FORMAT_2: [(&str, &str); 4] = [
    ("cardinal with a bot", include_str!("fixtures/format2/cardinal_bot.ndjson")),
    ("cardinal with autopilot", include_str!("fixtures/format2/cardinal_autopilot.ndjson")),
    ("kardinal", include_str!("fixtures/format2/kardinal.ndjson")),
    ("battle13", include_str!("fixtures/format2/battle13.ndjson")),
];

#[tokio::test]
async fn format_2_exports_still_verify_import_and_export_byte_for_byte() {
    for (what, export) in FORMAT_2 {
        let report = export::verify(export.as_bytes());
        assert!(report.valid && report.replayed && report.chain_intact, "{what}: {:?}", report.fault);
        assert!(report.status.as_ref().is_some_and(|s| matches!(s, ludo_record::Status::Finished { forfeits, .. } if forfeits.is_empty())));
        let (header, records) = records_of(export);
        let mut handovers = 0;
        for raw in &records {
            let record = Record::from_bytes(raw).expect("a format 2 record reads");
            assert_eq!(record.format, 2, "{what}: the fixture is format 2");
            assert_eq!(record.bytes(), &raw[..], "{what}: read records keep their bytes");
            match &record.body {
                RecordBody::GameCreated(created) => assert!(!created.public && created.seats.iter().all(Option::is_some)),
                RecordBody::SeatBot(_) => handovers += 1,
                RecordBody::Move(_) => {}
                other => panic!("{what}: format 2 has no {} records", other.type_name()),
            }
        }
        assert!(handovers >= 1, "{what}: every fixture hands a seat over at least once");
        let service = GameService::new(Arc::new(MemoryStore::new()), Arc::new(SystemClock)).with_operator_token(Some(OPERATOR));
        let imported = service.import(export.as_bytes().to_vec(), Some(OPERATOR)).await.expect("a format 2 export imports");
        let id = imported.id.parse().unwrap();
        let page = service.events(&id, None, 0, 1000).await.unwrap();
        assert_eq!(page.events.iter().filter(|e| e.kind == "seat_bot").count(), handovers, "{what}");
        assert!(page.events.iter().any(|e| e.bot.is_some()), "{what}: bot moves keep their marks");
        let again = service.export(&id, None).await.unwrap();
        let (again_header, again_records) = records_of(std::str::from_utf8(&again).unwrap());
        assert_eq!(again_records, records, "{what}: records re-exported unchanged");
        assert_eq!(again_header.seed, header.seed);
    }
}

/// Whole bundles of finished games as the version before format 4 wrote
/// them (commit 28da19c, by a running server): open seats joined, left and
/// taken by a bot, a token reissued by the admin, autopilot, a resignation,
/// clock timeouts; each with its receipt from that server's log, whose key
/// is `fixtures/format3/log-key.txt`.
const FORMAT_3: [(&str, &str); 2] = [
    ("kardinal with seat records", include_str!("fixtures/format3/kardinal_seats.ndjson")),
    ("cardinal with a clock", include_str!("fixtures/format3/cardinal_clock.ndjson")),
];

#[tokio::test]
async fn format_3_bundles_still_verify_with_their_receipts_and_import_as_imported() {
    let key = include_str!("fixtures/format3/log-key.txt").trim();
    for (what, export) in FORMAT_3 {
        let report = export::verify_with(export.as_bytes(), Some(key));
        assert!(report.valid && report.replayed && report.chain_intact, "{what}: {:?}", report.fault);
        assert!(report.receipt.as_ref().is_some_and(|r| r.trusted), "{what}: the receipt checks out under its server's key");
        let (_, records) = records_of(export);
        let mut types = std::collections::BTreeSet::new();
        for raw in &records {
            let record = Record::from_bytes(raw).expect("a format 3 record reads");
            assert_eq!(record.format, 3, "{what}: the fixture is format 3");
            assert_eq!(record.bytes(), &raw[..], "{what}: read records keep their bytes");
            if let RecordBody::SeatToken { by, .. } = &record.body {
                assert_eq!(*by, None, "{what}: a format 3 seat_token says nothing of who asked");
            }
            types.insert(record.body.type_name());
        }
        let service = GameService::new(Arc::new(MemoryStore::new()), Arc::new(SystemClock)).with_operator_token(Some(OPERATOR));
        let imported = service.import(export.as_bytes().to_vec(), Some(OPERATOR)).await.expect("a format 3 bundle imports");
        assert_eq!(imported.imported.key.as_deref(), Some(key), "{what}: imported from the key that signed its bundle");
        let id = imported.id.parse().unwrap();
        let page = service.events(&id, None, 0, 1000).await.unwrap();
        assert_eq!(page.events.len(), records.len());
        // A reissue from before the log said who asked was the admin's.
        assert!(page.events.iter().filter(|e| e.kind == "seat_token").all(|e| e.by == Some(TokenBy::Admin)), "{what}");
        let again = service.export(&id, None).await.unwrap();
        let (again_header, again_records) = records_of(std::str::from_utf8(&again).unwrap());
        assert_eq!(again_records, records, "{what}: records re-exported unchanged");
        assert_eq!(again_header.imported, Some(imported.imported.clone()), "{what}");
        if what.starts_with("kardinal") {
            for wanted in ["seat_joined", "seat_left", "seat_token", "seat_bot", "seat_resigned"] {
                assert!(types.contains(wanted), "{what}: the fixture holds a {wanted} record");
            }
        } else {
            assert!(types.contains("timeout"), "{what}: the fixture holds a timeout");
        }
    }
}

#[test]
fn a_format_2_record_with_format_3_members_is_refused() {
    let (_, bytes) = records_of(FORMAT_2[0].1);
    let text = String::from_utf8(bytes[0].clone()).unwrap();
    assert!(text.contains(r#""format":2,"#), "{text}");
    let with_public = text.replacen(r#","ruleset":"#, r#","public":false,"ruleset":"#, 1);
    assert!(Record::from_bytes(with_public.as_bytes()).unwrap_err().contains("format 2 game_created"), "{with_public}");
    let as_three = text.replace(r#""format":2,"#, r#""format":3,"#);
    assert!(Record::from_bytes(as_three.as_bytes()).unwrap_err().contains("format 3 game_created"), "{as_three}");
}

/// The operator token the services here take imports with.
const OPERATOR: &str = "operator-token-of-the-format-tests";

/// A game of `seats` (null: open) of two-seat Cardinal or three-seat, set up.
fn lobby(seats: &[Option<&str>], public: bool) -> (Record, ludo_engine::Seed) {
    let seed = ludo_engine::Seed([5; 32]);
    let kind = ludo_record::kinds::kind("cardinal").unwrap();
    let new = kind.create(seats.len(), &json!({}), &seed).unwrap();
    let effects: Vec<_> = new.effects.iter().map(|e| new.game.redact(e, ludo_engine::Viewer::Spectator)).collect();
    let body = RecordBody::GameCreated(GameCreated {
        game_id: "00000000-0000-7000-8000-000000000002".into(),
        kind: kind.id.into(),
        ruleset: kind.ruleset.into(),
        options: new.options,
        seats: seats.iter().map(|s| s.map(String::from)).collect(),
        bots: vec![None; seats.len()],
        public,
        clock: None,
        seed_commitment: ludo_record::record::sha256_hex(&seed.0),
    });
    (Record::seal(0, "2026-11-24T00:00:00.000Z".into(), body, &effects, &GENESIS).unwrap(), seed)
}

/// `log` with the seat record `body` after it.
fn then(log: &[Record], body: RecordBody) -> Vec<Record> {
    let last = log.last().unwrap();
    let record = Record::seal(last.seq + 1, "2026-11-24T00:00:01.000Z".into(), body, &[] as &[Value], &last.hash_bytes().unwrap()).unwrap();
    let mut longer = log.to_vec();
    longer.push(record);
    longer
}

fn joined(seat: u8, name: &str) -> RecordBody {
    RecordBody::SeatJoined(SeatJoined { seat: Seat(seat), name: name.into(), bot: None, token_hash: Some("ab".repeat(32)) })
}

/// Replay refuses what the service would have refused: a log can only say
/// what a server following the rules of the table could have written.
#[test]
fn seat_records_replay_only_where_the_table_allows_them() {
    let (first, seed) = lobby(&[Some("Ann"), None, None], false);
    let log = vec![first];
    let refused = |log: &[Record], why: &str| {
        let err = replay(log, &seed, false).expect_err(why);
        assert_eq!(err.seq, log.len() as u64 - 1, "{why}: {}", err.reason);
        assert!(err.reason.contains(why), "expected `{why}` in: {}", err.reason);
    };
    // While seats are open nobody moves, resigns or hands a seat to a bot.
    let waiting = replay(&log, &seed, false).unwrap();
    assert_eq!(waiting.state.status(), ludo_record::Status::Waiting { open_seats: vec![Seat(1), Seat(2)] });
    refused(&[log.clone(), vec![next_move(&log, &seed, None)]].concat(), "not started");
    refused(&then(&log, RecordBody::SeatResigned { seat: Seat(0), bot: None }), "not started");
    refused(&then(&log, RecordBody::SeatToken { seat: Seat(1), token_hash: "ab".repeat(32), by: Some(TokenBy::Admin) }), "open");
    refused(&then(&log, RecordBody::SeatLeft { seat: Seat(2) }), "open");
    refused(&then(&log, joined(5, "Stranger")), "not at the table");
    // A seat is taken once.
    let one = then(&log, joined(1, "Bea"));
    refused(&then(&one, joined(1, "Cy")), "taken");
    // Taken by a person with a token, or by a bot without one.
    let both = SeatJoined {
        seat: Seat(2),
        name: "Robo".into(),
        bot: Some(BotSeat { level: BotLevel::Random, think_ms: 0 }),
        token_hash: Some("ab".repeat(32)),
    };
    refused(&then(&one, RecordBody::SeatJoined(both)), "a bot without one");
    // The last seat taken, the game starts: no more joining, leaving or cancelling.
    let full = then(&one, joined(2, "Cy"));
    assert!(matches!(replay(&full, &seed, false).unwrap().state.status(), ludo_record::Status::InProgress { .. }));
    refused(&then(&full, RecordBody::SeatLeft { seat: Seat(1) }), "has started");
    refused(&then(&full, RecordBody::GameCancelled), "has started");
    assert!(replay(&[full.clone(), vec![next_move(&full, &seed, None)]].concat(), &seed, false).is_ok());
    // A three-seat game goes on after a resignation only with a bot for the seat.
    refused(&then(&full, RecordBody::SeatResigned { seat: Seat(1), bot: None }), "resignation");
    let bot = BotSeat { level: BotLevel::Greedy, think_ms: 0 };
    let resigned = then(&full, RecordBody::SeatResigned { seat: Seat(1), bot: Some(bot) });
    let state = replay(&resigned, &seed, false).unwrap().state;
    assert_eq!(state.table.bot(Seat(1)), Some(bot));
    refused(&then(&resigned, RecordBody::SeatResigned { seat: Seat(1), bot: Some(bot) }), "resigned");
    refused(&then(&resigned, RecordBody::SeatBot(SeatBotRecord { seat: Seat(1), bot: None })), "resigned");
    // The admin renews only a token it holds: the sealed one of a seat
    // named at creation, not one a person joined with; the seat itself
    // renews its own. (A format 3 record, from before the log said who
    // asked, replays as it did: see the format 3 fixtures.)
    let token = |seat: u8, by: Option<TokenBy>| RecordBody::SeatToken { seat: Seat(seat), token_hash: "cd".repeat(32), by };
    assert!(replay(&then(&full, token(0, Some(TokenBy::Admin))), &seed, false).is_ok(), "Ann's seat was named at creation");
    refused(&then(&full, token(1, Some(TokenBy::Admin))), "alone");
    let renewed = then(&full, token(1, Some(TokenBy::Seat)));
    assert!(replay(&renewed, &seed, false).is_ok(), "a seat renews its own token");
    refused(&then(&renewed, token(1, Some(TokenBy::Admin))), "alone");
    let by_admin = then(&then(&full, token(0, Some(TokenBy::Admin))), token(0, Some(TokenBy::Admin)));
    assert!(replay(&by_admin, &seed, false).is_ok(), "a token the admin renewed is one it holds");
    // Each change of hands moves the seat's generation, which tickets and streams follow.
    let generation = |log: &[Record], seat: u8| replay(log, &seed, false).unwrap().state.table.generation(Seat(seat));
    assert_eq!((generation(&full, 0), generation(&full, 1), generation(&full, 2)), (0, 1, 1));
    assert_eq!(generation(&renewed, 1), 2);
    assert_eq!(generation(&then(&one, RecordBody::SeatLeft { seat: Seat(1) }), 1), 2);
    assert_eq!(generation(&resigned, 1), 1, "a resignation is no change of hands");
    // A cancelled game takes nothing more.
    let cancelled = then(&log, RecordBody::GameCancelled);
    assert_eq!(replay(&cancelled, &seed, false).unwrap().state.status(), ludo_record::Status::Cancelled);
    refused(&then(&cancelled, joined(1, "Late")), "cancelled");
}

/// In a game of two sides a resignation ends it: nothing more replays.
#[test]
fn a_resignation_ends_a_duel_for_replay_too() {
    let (first, seed) = lobby(&[Some("Ann"), Some("Bob")], false);
    let log = then(&[first], RecordBody::SeatResigned { seat: Seat(1), bot: None });
    let state = replay(&log, &seed, false).unwrap().state;
    let ludo_record::Status::Finished { result, forfeits } = state.status() else { panic!("a resigned duel is over") };
    assert_eq!((result.winners, forfeits.len()), (vec![Seat(0)], 1));
    let err = replay(&[log.clone(), vec![next_move(&log[..1], &seed, None)]].concat(), &seed, false);
    assert!(err.is_err(), "a move after the duel ended is refused");
}
