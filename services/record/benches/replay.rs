//! Server-side replay: how many records a second the service turns back
//! into a game, as `POST /v1/verify` does with an export (parse every line,
//! check the chain and the canonical form, re-play every move and compare
//! its effects with the stored ones, check the revealed lines), as a cold
//! load does with the bytes the store returns (parse and check each
//! record, then replay), and with records already parsed.
//!
//! The logs are sealed exactly as the service seals them, from fixed seeds
//! and a fixed pseudo-random choice among the legal moves, so every run
//! replays the same games. `cargo bench -p ludo-record --bench replay`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ludo_engine::{Seed, Viewer};
use ludo_record::export::{self, EXPORT_FORMAT, ExportHeader};
use ludo_record::kinds::{self, AnyEffect};
use ludo_record::record::{GENESIS, GameCreated, MoveRecord, Record, RecordBody, sha256_hex};
use ludo_record::replay;
use serde_json::{Value, json};

/// The export of a finished game of `kind`, from the first seed whose
/// game is at least `at_least` records long.
fn finished_game(kind: &str, players: usize, options: Value, at_least: usize) -> Vec<u8> {
    let kind = kinds::kind(kind).expect("a hosted kind");
    let mut options = match options {
        Value::Object(mut map) => {
            map.extend(kind.server_defaults());
            Value::Object(map)
        }
        other => other,
    };
    for salt in 0u8..=255 {
        let seed = Seed([salt; 32]);
        let new = kind.create(players, &options, &seed).expect("the game is set up");
        options = new.options.clone();
        let public = |game: &kinds::AnyGame, effects: &[AnyEffect]| -> Vec<AnyEffect> {
            effects.iter().map(|e| game.redact(e, Viewer::Spectator)).collect()
        };
        let created = GameCreated {
            game_id: format!("00000000-0000-7000-8000-0000000000{salt:02x}"),
            kind: kind.id.into(),
            ruleset: kind.ruleset.into(),
            options: new.options.clone(),
            seats: (0..players).map(|i| Some(format!("P{i}"))).collect(),
            public: false,
            clock: None,
            bots: vec![None; players],
            seed_commitment: sha256_hex(&seed.0),
        };
        let at = "2026-11-23T00:00:00.000Z";
        let first = Record::seal(0, at.into(), RecordBody::GameCreated(created), &public(&new.game, &new.effects), &GENESIS).unwrap();
        let mut prev = first.hash_bytes().unwrap();
        let mut records = vec![first];
        let mut game = new.game;
        let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ u64::from(salt);
        while let Some(&seat) = game.status().to_move().first() {
            let legal = game.legal_moves(seat);
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let mv = &legal[(rng % legal.len() as u64) as usize];
            let effects = game.apply(seat, mv).expect("a legal move applies");
            let body = RecordBody::Move(MoveRecord::new(seat, mv, None).unwrap());
            let record = Record::seal(records.len() as u64, at.into(), body, &public(&game, &effects), &prev).unwrap();
            prev = record.hash_bytes().unwrap();
            records.push(record);
        }
        if records.len() < at_least {
            continue;
        }
        let replayed = replay::replay(&records, &seed, true).expect("the log replays");
        let revealed = export::revealed(&records, &replayed);
        let header = ExportHeader {
            format: EXPORT_FORMAT.into(),
            game_id: format!("00000000-0000-7000-8000-0000000000{salt:02x}"),
            kind: kind.id.into(),
            ruleset: kind.ruleset.into(),
            records: records.len() as u64,
            finished: true,
            seed: Some(hex::encode(seed.0)),
            exported_at: at.into(),
            revealed: Some(revealed.len() as u64),
            receipt: None,
            imported: None,
        };
        let raw: Vec<Vec<u8>> = records.iter().map(Record::to_bytes).collect();
        return export::write(&header, &raw, &revealed);
    }
    panic!("no seed gives a {} game of {at_least} records", kind.id);
}

fn replay_bench(c: &mut Criterion) {
    let games = [
        ("battle13", finished_game("battle13", 4, json!({"first_seat": 0, "target_crowns": 100}), 500)),
        ("cardinal", finished_game("cardinal", 4, json!({"first_seat": 0}), 40)),
        ("kardinal", finished_game("kardinal", 4, json!({}), 100)),
    ];
    let mut group = c.benchmark_group("replay");
    for (kind, export) in &games {
        let verified = export::check(export);
        assert!(verified.report.valid, "{kind}: {:?}", verified.report.fault);
        let records = verified.records.len() as u64;
        let seed = Seed(hex::decode(verified.header.seed.as_deref().expect("a finished game's seed")).unwrap().try_into().unwrap());
        group.throughput(Throughput::Elements(records));
        group.bench_function(format!("{kind}/verify export ({records} records)"), |b| {
            b.iter(|| export::verify(std::hint::black_box(export)));
        });
        // What a cold load does with the bytes the store returns.
        let stored: Vec<Vec<u8>> = verified.records.iter().map(Record::to_bytes).collect();
        group.bench_function(format!("{kind}/load stored records ({records} records)"), |b| {
            b.iter(|| {
                let records: Vec<Record> = std::hint::black_box(&stored).iter().map(|bytes| Record::from_bytes(bytes).unwrap()).collect();
                replay::replay(&records, &seed, false).expect("it replays")
            });
        });
        group.bench_function(format!("{kind}/replay parsed records ({records} records)"), |b| {
            b.iter(|| replay::replay(std::hint::black_box(&verified.records), &seed, false).expect("it replays"));
        });
    }
    group.finish();
}

criterion_group!(benches, replay_bench);
criterion_main!(benches);
