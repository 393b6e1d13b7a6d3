//! Records against the implementation they replace: the bytes written once
//! must be, byte for byte and hash for hash, what the old one built through
//! a JSON tree (extended to format 2's members), and what it refused as not
//! canonical must still be refused. Format 1 records, as the version before
//! format 2 wrote them, are in `tests/fixtures/format1`.

use ludo_engine::{Seed, Viewer};
use proptest::prelude::*;
use serde_json::{Map, json};

use super::*;
use crate::kinds::KINDS;

/// The previous implementation, kept as the reference: a `serde_json::Value`
/// of the whole record, written out with its keys sorted.
mod reference {
    use super::*;

    /// The old record body: the move as a JSON tree.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum OldBody {
        GameCreated(GameCreated),
        Move(OldMove),
        SeatBot(OldSeatBot),
        SeatJoined(OldSeatJoined),
        SeatLeft(OldSeat),
        GameCancelled,
        SeatToken(OldSeatToken),
        SeatResigned(OldSeatBot),
        Timeout(OldTimeout),
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldTimeout {
        pub seat: Seat,
        pub forfeit: bool,
        pub bot: Option<BotSeat>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldSeatJoined {
        pub seat: Seat,
        pub name: String,
        pub bot: Option<BotSeat>,
        pub token_hash: Option<String>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldSeat {
        pub seat: Seat,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldSeatToken {
        pub seat: Seat,
        pub token_hash: String,
        /// Format 4 on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub by: Option<String>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldMove {
        pub seat: Seat,
        #[serde(rename = "move")]
        pub mv: Value,
        pub request_id: Option<String>,
        pub bot: Option<BotMark>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldSeatBot {
        pub seat: Seat,
        pub bot: Option<BotSeat>,
    }

    impl OldBody {
        /// Whether records of this type carry effects (seat records do not).
        pub fn has_effects(&self) -> bool {
            matches!(self, OldBody::GameCreated(_) | OldBody::Move(_) | OldBody::SeatBot(_))
        }

        /// The same body for the new implementation, which writes the move
        /// from the tree it is given.
        pub fn new_body(&self) -> RecordBody {
            match self {
                OldBody::GameCreated(created) => RecordBody::GameCreated(created.clone()),
                OldBody::Move(m) => {
                    let record = MoveRecord::new(m.seat, &m.mv, m.request_id.clone()).unwrap();
                    RecordBody::Move(match &m.bot {
                        Some(bot) => record.by_bot(bot.clone()),
                        None => record,
                    })
                }
                OldBody::SeatBot(s) => RecordBody::SeatBot(SeatBotRecord { seat: s.seat, bot: s.bot }),
                OldBody::SeatJoined(j) => {
                    RecordBody::SeatJoined(SeatJoined { seat: j.seat, name: j.name.clone(), bot: j.bot, token_hash: j.token_hash.clone() })
                }
                OldBody::SeatLeft(s) => RecordBody::SeatLeft { seat: s.seat },
                OldBody::GameCancelled => RecordBody::GameCancelled,
                OldBody::SeatToken(t) => RecordBody::SeatToken {
                    seat: t.seat,
                    token_hash: t.token_hash.clone(),
                    by: t.by.as_deref().map(|by| crate::table::TokenBy::from_name(by).unwrap()),
                },
                OldBody::SeatResigned(s) => RecordBody::SeatResigned { seat: s.seat, bot: s.bot },
                OldBody::Timeout(t) => RecordBody::Timeout { seat: t.seat, forfeit: t.forfeit, bot: t.bot },
            }
        }

        /// A new implementation's body, as the old one held it.
        pub fn of(body: &RecordBody) -> OldBody {
            match body {
                RecordBody::GameCreated(created) => OldBody::GameCreated(created.clone()),
                RecordBody::Move(m) => OldBody::Move(OldMove {
                    seat: m.seat,
                    mv: serde_json::from_str(m.move_json()).unwrap(),
                    request_id: m.request_id.clone(),
                    bot: m.bot.clone(),
                }),
                RecordBody::SeatBot(s) => OldBody::SeatBot(OldSeatBot { seat: s.seat, bot: s.bot }),
                RecordBody::SeatJoined(j) => {
                    OldBody::SeatJoined(OldSeatJoined { seat: j.seat, name: j.name.clone(), bot: j.bot, token_hash: j.token_hash.clone() })
                }
                RecordBody::SeatLeft { seat } => OldBody::SeatLeft(OldSeat { seat: *seat }),
                RecordBody::GameCancelled => OldBody::GameCancelled,
                RecordBody::SeatToken { seat, token_hash, by } => {
                    OldBody::SeatToken(OldSeatToken { seat: *seat, token_hash: token_hash.clone(), by: by.map(|by| by.name().to_string()) })
                }
                RecordBody::SeatResigned { seat, bot } => OldBody::SeatResigned(OldSeatBot { seat: *seat, bot: *bot }),
                RecordBody::Timeout { seat, forfeit, bot } => OldBody::Timeout(OldTimeout { seat: *seat, forfeit: *forfeit, bot: *bot }),
            }
        }
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct OldRecord {
        pub format: u32,
        pub seq: u64,
        pub at: String,
        #[serde(flatten)]
        pub body: OldBody,
        pub effects: Vec<Value>,
        pub hash: String,
    }

    pub fn canonical(value: &Value) -> Vec<u8> {
        fn write(value: &Value, out: &mut Vec<u8>) {
            match value {
                Value::Object(map) => {
                    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    out.push(b'{');
                    for (i, (key, item)) in entries.into_iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        serde_json::to_writer(&mut *out, key).unwrap();
                        out.push(b':');
                        write(item, out);
                    }
                    out.push(b'}');
                }
                Value::Array(items) => {
                    out.push(b'[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        write(item, out);
                    }
                    out.push(b']');
                }
                scalar => serde_json::to_writer(&mut *out, scalar).unwrap(),
            }
        }
        let mut out = Vec::new();
        write(value, &mut out);
        out
    }

    impl OldRecord {
        pub fn seal(seq: u64, at: String, body: OldBody, effects: Vec<Value>, prev_hash: &[u8; 32]) -> OldRecord {
            let mut record = OldRecord { format: FORMAT, seq, at, body, effects, hash: String::new() };
            record.hash = hex::encode(record.compute_hash(prev_hash));
            record
        }

        pub fn compute_hash(&self, prev_hash: &[u8; 32]) -> [u8; 32] {
            let mut value = serde_json::to_value(self).unwrap();
            value.as_object_mut().unwrap().remove("hash");
            let mut hasher = Sha256::new();
            hasher.update(prev_hash);
            hasher.update(canonical(&value));
            hasher.finalize().into()
        }

        pub fn to_bytes(&self) -> Vec<u8> {
            canonical(&serde_json::to_value(self).unwrap())
        }

        pub fn from_bytes(bytes: &[u8]) -> Result<OldRecord, String> {
            let record: OldRecord = serde_json::from_slice(bytes).map_err(|e| format!("unreadable record: {e}"))?;
            if record.format != FORMAT {
                return Err(format!("unknown record format {}", record.format));
            }
            if record.to_bytes() != bytes {
                return Err("record bytes are not in canonical form".into());
            }
            if !record.body.has_effects() && !record.effects.is_empty() {
                return Err("a seat record has no effects".into());
            }
            // Format 4 names who renewed a token with one of two words.
            if let OldBody::SeatToken(OldSeatToken { by: Some(by), .. }) = &record.body
                && by != "admin"
                && by != "seat"
            {
                return Err(format!("a seat_token record's `by` is `admin` or `seat`, not `{by}`"));
            }
            Ok(record)
        }
    }
}

use crate::clock::TimeControl;
use reference::{OldBody, OldMove, OldRecord, OldSeat, OldSeatBot, OldSeatJoined, OldSeatToken, OldTimeout};

fn same_content(new: &Record, old: &OldRecord) -> bool {
    let effects: Vec<Value> = new.effects().map(|e| serde_json::from_slice(e).expect("a stored effect is JSON")).collect();
    (new.format, new.seq, &new.at, &OldBody::of(&new.body), &effects, &new.hash)
        == (old.format, old.seq, &old.at, &old.body, &old.effects, &old.hash)
}

/// Seals with both implementations and checks they agree on everything:
/// the new one writes the effects straight from their type, the old one
/// through a JSON tree of them.
fn seal_both<E: Serialize>(seq: u64, at: &str, body: &OldBody, effects: &[E], prev: &[u8; 32]) -> Record {
    let new = Record::seal(seq, at.into(), body.new_body(), effects, prev).unwrap();
    let trees = effects.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    let old = OldRecord::seal(seq, at.into(), body.clone(), trees, prev);
    assert_eq!(String::from_utf8_lossy(new.bytes()), String::from_utf8_lossy(&old.to_bytes()));
    assert_eq!(new.hash, old.hash);
    assert_eq!(new.compute_hash(prev), old.compute_hash(prev));
    // A float that does not survive `serde_json`'s own reading is refused
    // by both readers (records hold integers); anything else reads back.
    match (Record::from_bytes(new.bytes()), OldRecord::from_bytes(new.bytes())) {
        (Ok(read), Ok(old)) => {
            assert_eq!(read, new);
            assert_eq!(read.verify_link(seq, prev), Ok(new.hash_bytes().unwrap()));
            assert!(same_content(&read, &old));
        }
        (Err(_), Err(_)) => assert!(String::from_utf8_lossy(new.bytes()).contains('.'), "only a float is refused"),
        (new, old) => panic!("the readers disagree: new {new:?}, old {old:?}"),
    }
    new
}

// Keys, strings and numbers with what makes canonical JSON hard: escapes,
// control characters, non-ASCII, keys that sort differently escaped, a
// `hash` key inside nested values, integers at the edges, a few floats.

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("hash".to_string()),
        Just("type".to_string()),
        Just(String::new()),
        "[a-z]{1,6}",
        "[\"#\\\\/a\\u{0}-\\u{1f}\\u{7f}é😀\\u{2028}]{1,4}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[ -~]{0,12}", "[\"\\\\/\\u{0}-\\u{1f}\\u{7f}\\u{80}-\\u{10ffff}]{0,8}", Just("\"hash\":\"".to_string()),]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        (-100_000i32..100_000, 0..4).prop_map(|(m, e)| Value::from(f64::from(m) / 10f64.powi(e))),
        (-1.0e9f64..1.0e9).prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6).prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn body() -> impl Strategy<Value = OldBody> {
    prop_oneof![
        (
            (text(), text(), text(), value()),
            prop::collection::vec((prop::option::of(text()), prop::option::of(bot_seat())), 0..5),
            (any::<bool>(), prop::option::of(time_control()), text())
        )
            .prop_map(|((game_id, kind, ruleset, options), seats, (public, clock, seed_commitment))| {
                let (seats, bots) = seats.into_iter().unzip();
                OldBody::GameCreated(GameCreated { game_id, kind, ruleset, options, seats, bots, public, clock, seed_commitment })
            }),
        (any::<u8>(), value(), prop::option::of(text()), prop::option::of((bot_level(), text()))).prop_map(
            |(seat, mv, request_id, bot)| {
                OldBody::Move(OldMove { seat: Seat(seat), mv, request_id, bot: bot.map(|(level, version)| BotMark { level, version }) })
            }
        ),
        (any::<u8>(), prop::option::of(bot_seat())).prop_map(|(seat, bot)| OldBody::SeatBot(OldSeatBot { seat: Seat(seat), bot })),
        (any::<u8>(), text(), prop::option::of(bot_seat()), prop::option::of(text()))
            .prop_map(|(seat, name, bot, token_hash)| OldBody::SeatJoined(OldSeatJoined { seat: Seat(seat), name, bot, token_hash })),
        any::<u8>().prop_map(|seat| OldBody::SeatLeft(OldSeat { seat: Seat(seat) })),
        Just(OldBody::GameCancelled),
        (any::<u8>(), text(), prop::sample::select(vec!["admin", "seat"]))
            .prop_map(|(seat, token_hash, by)| OldBody::SeatToken(OldSeatToken { seat: Seat(seat), token_hash, by: Some(by.to_string()) })),
        (any::<u8>(), prop::option::of(bot_seat())).prop_map(|(seat, bot)| OldBody::SeatResigned(OldSeatBot { seat: Seat(seat), bot })),
        (any::<u8>(), any::<bool>(), prop::option::of(bot_seat())).prop_map(|(seat, forfeit, bot)| OldBody::Timeout(OldTimeout {
            seat: Seat(seat),
            forfeit,
            bot
        })),
    ]
}

fn bot_level() -> impl Strategy<Value = crate::bot::BotLevel> {
    prop::sample::select(vec![crate::bot::BotLevel::Random, crate::bot::BotLevel::Greedy, crate::bot::BotLevel::Strong])
}

fn time_control() -> impl Strategy<Value = TimeControl> {
    (prop::option::of(any::<u64>()), prop::option::of(any::<u64>()), any::<u64>(), any::<bool>()).prop_map(
        |(move_ms, bank_ms, increment_ms, lose)| TimeControl {
            move_ms,
            bank_ms,
            increment_ms,
            on_timeout: if lose { crate::clock::OnTimeout::Lose } else { crate::clock::OnTimeout::Bot },
        },
    )
}

fn bot_seat() -> impl Strategy<Value = BotSeat> {
    (bot_level(), any::<u32>()).prop_map(|(level, think_ms)| BotSeat { level, think_ms })
}

fn record() -> impl Strategy<Value = (u64, String, OldBody, Vec<Value>, [u8; 32])> {
    (any::<u64>(), text(), body(), prop::collection::vec(value(), 0..5), any::<[u8; 32]>()).prop_map(|(seq, at, body, effects, prev)| {
        // Seat records change nothing in the game: they have no effects.
        let effects = if body.has_effects() { effects } else { Vec::new() };
        (seq, at, body, effects, prev)
    })
}

/// Ways to make canonical bytes not canonical, or not a record: most are
/// refused, some (a changed letter in a string) still read.
fn mutation() -> impl Strategy<Value = (prop::sample::Index, u8, u8)> {
    let bytes = prop::sample::select(b" \t\n{}[],:\"\\/0123456789-+.eEuabfnrtlsx\x01\xc3\xa9\x7f".to_vec());
    (any::<prop::sample::Index>(), 0u8..5, bytes)
}

fn mutate(bytes: &[u8], (index, how, byte): &(prop::sample::Index, u8, u8)) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let at = index.index(out.len());
    match how {
        0 => out[at] ^= 1 << (byte % 8),
        1 => out[at] = *byte,
        2 => out.insert(at, *byte),
        3 => {
            out.remove(at);
        }
        _ => {
            // A copy of a run of bytes elsewhere: duplicated keys and members.
            let end = (at + usize::from(*byte % 24) + 1).min(bytes.len());
            let run = bytes[at..end].to_vec();
            let to = (at * 7 + 13) % out.len();
            out.splice(to..to, run);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn sealed_bytes_and_hashes_are_the_old_ones((seq, at, body, effects, prev) in record()) {
        seal_both(seq, &at, &body, &effects, &prev);
    }

    #[test]
    fn what_the_old_reader_refused_is_refused((seq, at, body, effects, prev) in record(), mutations in prop::collection::vec(mutation(), 1..4)) {
        let sealed = Record::seal(seq, at, body.new_body(), &effects, &prev).unwrap();
        let mut bytes = sealed.to_bytes();
        for m in &mutations {
            bytes = mutate(&bytes, m);
        }
        let (new, old) = (Record::from_bytes(&bytes), OldRecord::from_bytes(&bytes));
        if let Ok(read) = &new
            && read.format != FORMAT
        {
            // A flipped bit in the format's digit can make it an older
            // format's record with the same members (a `seat_bot` record is
            // the same in formats 2 and 3), which the reader upcasts, as the
            // old one did; the model above reads only this version's format.
            prop_assert!((OLDEST_FORMAT..FORMAT).contains(&read.format));
            prop_assert_eq!(read.bytes(), &bytes[..]);
            return Ok(());
        }
        prop_assert_eq!(new.is_ok(), old.is_ok(), "{}\nnew: {:?}\nold: {:?}", String::from_utf8_lossy(&bytes), new.as_ref().err(), old.as_ref().err());
        if let (Ok(new), Ok(old)) = (new, old) {
            prop_assert!(same_content(&new, &old));
            prop_assert_eq!(new.compute_hash(&prev), old.compute_hash(&prev));
            prop_assert_eq!(new.bytes(), &bytes[..]);
        }
    }
}

#[test]
fn real_games_seal_as_before() {
    for kind in KINDS {
        let seed = Seed([7; 32]);
        let players = kind.min_players.max(3).min(kind.max_players);
        // With what the service fills in (Kardinal's board: 8.6 KB of options).
        let mut options = kind.default_options();
        options.as_object_mut().expect("options are an object").extend(kind.server_defaults());
        let new = kind.create(players, &options, &seed).unwrap();
        let created = OldBody::GameCreated(GameCreated {
            game_id: "0f3c-…".into(),
            kind: kind.id.into(),
            ruleset: kind.ruleset.into(),
            options: new.options.clone(),
            seats: (0..players).map(|i| Some(format!("Seat «{i}»"))).collect(),
            bots: vec![None; players],
            public: false,
            clock: None,
            seed_commitment: sha256_hex(&seed.0),
        });
        let public = |game: &crate::kinds::AnyGame, effects: &[crate::kinds::AnyEffect]| -> Vec<crate::kinds::AnyEffect> {
            effects.iter().map(|e| game.redact(e, Viewer::Spectator)).collect()
        };
        let first = seal_both(0, "2026-11-22T00:00:00.000Z", &created, &public(&new.game, &new.effects), &GENESIS);
        let mut prev = first.hash_bytes().unwrap();
        let mut game = new.game;
        for seq in 1..200u64 {
            let Some(&seat) = game.status().to_move().first() else { break };
            let legal = game.legal_moves(seat);
            let mv = &legal[(seq as usize * 31) % legal.len()];
            let effects = game.apply(seat, mv).unwrap();
            // The new implementation writes the engine's move from its type.
            let request_id = (seq % 3 == 0).then(|| format!("req-{seq}"));
            let new_body = RecordBody::Move(MoveRecord::new(seat, mv, request_id.clone()).unwrap());
            let body = OldBody::Move(OldMove { seat, mv: mv.to_json(), request_id, bot: None });
            assert_eq!(new_body, body.new_body(), "the typed move writes the bytes its JSON tree writes");
            let record = seal_both(seq, "2026-11-22T00:00:01.000Z", &body, &public(&game, &effects), &prev);
            prev = record.hash_bytes().unwrap();
        }
    }
}

fn created() -> Record {
    let body = RecordBody::GameCreated(GameCreated {
        game_id: "g".into(),
        kind: "cardinal".into(),
        ruleset: "cardinal/1".into(),
        options: json!({"first_seat": 1, "hash": "0".repeat(64), "board": {"hash": [1, 2]}}),
        seats: vec![Some("Ann".into()), Some("Bob".into())],
        bots: vec![None, None],
        public: false,
        clock: None,
        seed_commitment: "00".repeat(32),
    });
    Record::seal(0, "2026-11-22T00:00:00.000Z".into(), body, &[json!({"hash": "x"})], &GENESIS).unwrap()
}

fn a_move(prev: &Record) -> Record {
    let body = RecordBody::Move(MoveRecord::new(Seat(1), &json!({"type": "keep_cardinal"}), Some("r1".into())).unwrap());
    Record::seal(1, "2026-11-22T00:00:01.000Z".into(), body, &[json!({"type": "x"})], &prev.hash_bytes().unwrap()).unwrap()
}

#[test]
fn both_record_kinds_round_trip_through_bytes() {
    let r0 = created();
    let r1 = a_move(&r0);
    for record in [r0, r1] {
        assert_eq!(Record::from_bytes(&record.to_bytes()).unwrap(), record);
    }
}

#[test]
fn the_hash_member_is_the_top_level_one() {
    let r0 = created();
    let text = String::from_utf8(r0.to_bytes()).unwrap();
    assert_eq!(text.matches(r#""hash":"#).count(), 4, "{text}");
    let member = format!(r#""hash":"{}","#, r0.hash);
    assert!(text.contains(&format!(r#""game_id":"g",{member}"kind":"#)), "{text}");
    let read = Record::from_bytes(text.as_bytes()).unwrap();
    assert_eq!(read.verify_link(0, &GENESIS), Ok(r0.hash_bytes().unwrap()));
}

#[test]
fn chain_verifies_and_any_edit_breaks_it() {
    let r0 = created();
    let r1 = a_move(&r0);
    let h0 = r0.verify_link(0, &GENESIS).unwrap();
    r1.verify_link(1, &h0).unwrap();

    let text = String::from_utf8(r1.to_bytes()).unwrap();
    let edited = Record::from_bytes(text.replace(r#""seat":1"#, r#""seat":0"#).as_bytes()).expect("still a canonical record");
    assert!(edited.verify_link(1, &h0).is_err(), "changed seat not detected");
    let edited = Record::from_bytes(text.replace(r#"{"type":"x"}"#, r#"{"type":"y"}"#).as_bytes()).expect("still canonical");
    assert!(edited.verify_link(1, &h0).is_err(), "changed effect not detected");
    assert!(r1.verify_link(1, &GENESIS).is_err(), "wrong previous hash not detected");
    assert!(r1.verify_link(2, &h0).is_err(), "wrong position not detected");
}

#[test]
fn flipping_any_byte_of_stored_bytes_is_caught() {
    for (record, seq, prev) in [(created(), 0, GENESIS), (a_move(&created()), 1, created().hash_bytes().unwrap())] {
        let bytes = record.to_bytes();
        for i in 0..bytes.len() {
            let mut tampered = bytes.clone();
            tampered[i] ^= 0x01;
            let caught = match Record::from_bytes(&tampered) {
                Err(_) => true,
                Ok(record) => record.verify_link(seq, &prev).is_err(),
            };
            assert!(caught, "flipping byte {i} of record {seq} went unnoticed");
        }
    }
}

#[test]
fn non_canonical_records_are_refused() {
    let text = String::from_utf8(a_move(&created()).to_bytes()).unwrap();
    for (from, to) in [
        (r#""seat":1"#, r#""seat": 1"#),
        (r#""seat":1"#, r#""seat":1.0"#),
        (r#""seat":1"#, r#""seat":01"#),
        (r#""request_id":"r1""#, r#""request_id":"\u0072\u0031""#),
        (r#""request_id":"r1","#, ""),
        (r#""request_id":"r1","#, r#""request_id":"r1","request_id":"r1","#),
        (r#""request_id":"r1","#, r#""request_id":"r1","rez":1,"#),
        (r#"{"type":"x"}"#, r#"{"type":"x","type":"x"}"#),
        (r#"{"type":"x"}"#, r#"{"type":"x","a":1}"#),
        (r#"{"type":"keep_cardinal"}"#, r#"{"type":"keep\/cardinal"}"#),
    ] {
        let edited = text.replace(from, to);
        assert_ne!(edited, text, "{from} is in {text}");
        let refused = Record::from_bytes(edited.as_bytes()).expect_err(&edited);
        assert!(OldRecord::from_bytes(edited.as_bytes()).is_err(), "the old reader took {edited}");
        assert!(refused.contains("canonical") || refused.contains("unreadable"), "{refused}");
    }
}

#[test]
fn unknown_format_is_refused() {
    let text = String::from_utf8(created().to_bytes()).unwrap();
    let edited = text.replace(&format!(r#""format":{FORMAT},"#), r#""format":99,"#);
    assert_ne!(edited, text);
    assert!(Record::from_bytes(edited.as_bytes()).unwrap_err().contains("format"));
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "edited after it was sealed or read")]
fn an_edited_record_is_a_bug_debug_builds_catch() {
    let mut record = a_move(&created());
    record.at = "2000-01-01T00:00:00.000Z".into();
    let _ = record.verify_link(1, &GENESIS);
}
