//! Golden recorded games: replaying each fixture must give its frozen final
//! scores and winners. The fixtures were generated once from random playouts
//! (`write_golden_fixtures`, ignored) and checked by the independent Python
//! reference `tools/reference_cardinal.py`. Never regenerate them to make a
//! change pass: a difference means the rules changed (bump the ruleset).

use std::path::PathBuf;

use ludo_cardinal::{Colour, Effect, Game, Move, Options, Orientation, Shape};
use ludo_engine::testkit::random_playout;
use ludo_engine::{Engine, Seat, Seed, Setup, Status, Viewer};
use serde_json::{Value, json};

const FIXTURES: [&str; 3] = ["cardinal-golden-4p.json", "cardinal-golden-2p.json", "cardinal-golden-3p.json"];

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn seed_from_hex(hex: &str) -> Seed {
    assert_eq!(hex.len(), 64, "a seed is 32 bytes");
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex seed");
    }
    Seed(bytes)
}

fn seed_to_hex(seed: &Seed) -> String {
    seed.0.iter().map(|b| format!("{b:02x}")).collect()
}

fn shape_name(shape: Shape) -> &'static str {
    shape.name()
}

fn parse_shape(s: &str) -> Shape {
    Shape::ALL.into_iter().find(|sh| sh.name() == s).unwrap_or_else(|| panic!("shape {s}"))
}

fn orientation_name(o: Orientation) -> &'static str {
    match o {
        Orientation::Horizontal => "horizontal",
        Orientation::Vertical => "vertical",
    }
}

fn parse_orientation(s: &str) -> Orientation {
    match s {
        "horizontal" => Orientation::Horizontal,
        "vertical" => Orientation::Vertical,
        _ => panic!("orientation {s}"),
    }
}

/// The move in its documented JSON shape, written by hand so that the test
/// runs without the `serde` feature (and checks that feature when it is on).
fn move_to_json(mv: &Move) -> Value {
    match *mv {
        Move::Build { shape, colour, x, y, orientation, bonus_colour } => {
            let mut v = json!({"type": "build", "shape": shape_name(shape), "colour": colour.0, "x": x, "y": y});
            if let Some(o) = orientation {
                v["orientation"] = json!(orientation_name(o));
            }
            if let Some(c) = bonus_colour {
                v["bonus_colour"] = json!(c.0);
            }
            v
        }
        Move::MoveCardinal { x, y } => json!({"type": "move_cardinal", "x": x, "y": y}),
        Move::KeepCardinal => json!({"type": "keep_cardinal"}),
    }
}

/// The move's JSON with its keys in the documented order (serde_json sorts them).
fn ordered_move_text(mv: &Move) -> String {
    let v = move_to_json(mv);
    let keys = ["type", "shape", "colour", "x", "y", "orientation", "bonus_colour"];
    let fields: Vec<String> = keys.iter().filter(|k| v.get(**k).is_some()).map(|k| format!("\"{k}\": {}", v[*k])).collect();
    format!("{{{}}}", fields.join(", "))
}

fn int(v: &Value, key: &str) -> i64 {
    v[key].as_i64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn json_to_move(v: &Value) -> Move {
    match v["type"].as_str().expect("type") {
        "build" => Move::Build {
            shape: parse_shape(v["shape"].as_str().expect("shape")),
            colour: Colour(int(v, "colour") as u8),
            x: int(v, "x") as i32,
            y: int(v, "y") as i32,
            orientation: v.get("orientation").map(|o| parse_orientation(o.as_str().expect("orientation"))),
            bonus_colour: v.get("bonus_colour").map(|c| Colour(c.as_u64().expect("bonus") as u8)),
        },
        "move_cardinal" => Move::MoveCardinal { x: int(v, "x") as i32, y: int(v, "y") as i32 },
        "keep_cardinal" => Move::KeepCardinal,
        other => panic!("move type {other}"),
    }
}

/// Replays the fixture's records; returns the game and the seats passed by the server (CA-20).
fn replay(fixture: &Value) -> (Game, Vec<u64>) {
    let players = fixture["players"].as_u64().expect("players") as usize;
    let first_seat = fixture["options"]["first_seat"].as_u64().map(|s| Seat(s as u8));
    let setup = Setup { players, options: Options { first_seat }, seed: seed_from_hex(fixture["seed"].as_str().expect("seed")) };
    let (mut game, _) = Game::new(&setup).expect("set-up");
    let mut passes = Vec::new();
    for (i, record) in fixture["moves"].as_array().expect("moves").iter().enumerate() {
        let seat = Seat(int(record, "seat") as u8);
        let mv = json_to_move(&record["move"]);
        assert_eq!(move_to_json(&mv), record["move"], "record {i} is not in canonical form");
        #[cfg(feature = "serde")]
        {
            let parsed: Move = serde_json::from_value(record["move"].clone()).expect("serde parses the record");
            assert_eq!(parsed, mv);
            assert_eq!(serde_json::to_value(&mv).unwrap(), record["move"]);
        }
        let effects = game.apply(seat, &mv).unwrap_or_else(|err| panic!("record {i} refused: {err}"));
        passes.extend(effects.iter().filter_map(|e| match e {
            Effect::ForcedPass { seat } => Some(u64::from(seat.0)),
            _ => None,
        }));
    }
    (game, passes)
}

#[test]
fn golden_games_replay_to_their_recorded_scores() {
    for name in FIXTURES {
        let text = std::fs::read_to_string(fixture_path(name)).expect("fixture");
        let fixture: Value = serde_json::from_str(&text).expect("fixture JSON");
        assert_eq!(fixture["ruleset"], Game::RULESET);
        let (game, passes) = replay(&fixture);
        let Status::Finished { result } = game.status() else { panic!("{name}: not finished after its records") };
        let scores: Vec<i64> = fixture["expected"]["scores"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap()).collect();
        let winners: Vec<Seat> =
            fixture["expected"]["winners"].as_array().unwrap().iter().map(|s| Seat(s.as_u64().unwrap() as u8)).collect();
        assert_eq!(result.scores.iter().map(|&s| i64::from(s)).collect::<Vec<_>>(), scores, "{name}: scores");
        assert_eq!(result.winners, winners, "{name}: winners");
        let view = game.view(Viewer::Spectator);
        assert_eq!(view.buildings.len() as u64, fixture["expected"]["buildings"].as_u64().unwrap(), "{name}: buildings");
        let expected_passes: Vec<u64> =
            fixture["expected"]["forced_passes"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
        assert_eq!(passes, expected_passes, "{name}: forced passes");
    }
}

/// Writes the fixtures from random playouts: run once by hand with
/// `cargo test -p ludo-cardinal --test golden -- --ignored`, then check them
/// with `tools/reference_cardinal.py` before committing.
#[test]
#[ignore = "writes the golden fixtures; run by hand only"]
fn write_golden_fixtures() {
    for (name, players, seed_n, chooser) in [(FIXTURES[0], 4usize, 4004u64, 44u64), (FIXTURES[1], 2, 2002, 22), (FIXTURES[2], 3, 3003, 33)]
    {
        let seed = ludo_engine::testkit::test_seed(seed_n);
        let setup = Setup { players, options: Options::default(), seed: seed.clone() };
        let playout = random_playout::<Game>(&setup, chooser, 500, |_, _| {});
        let Status::Finished { result } = playout.state.status() else { panic!("unfinished") };
        let passes: Vec<Value> = playout
            .steps
            .iter()
            .flat_map(|s| &s.effects)
            .filter_map(|e| match e {
                Effect::ForcedPass { seat } => Some(json!(seat.0)),
                _ => None,
            })
            .collect();
        let fixture = json!({
            "description": format!("A random {players}-player game of Cardinal, replayed by tests/golden.rs; checked by tools/reference_cardinal.py."),
            "ruleset": Game::RULESET,
            "players": players,
            "seed": seed_to_hex(&seed),
            "options": {"first_seat": null},
            "moves": playout.steps.iter().map(|s| json!({"seat": s.seat.0, "move": move_to_json(&s.mv)})).collect::<Vec<_>>(),
            "expected": {
                "scores": result.scores,
                "winners": result.winners.iter().map(|s| s.0).collect::<Vec<_>>(),
                "buildings": playout.state.view(Viewer::Spectator).buildings.len(),
                "forced_passes": passes,
            },
        });
        let mut text = String::new();
        // One record per line keeps the fixture readable and its diffs small.
        text.push_str("{\n");
        let keys = ["description", "ruleset", "players", "seed", "options"];
        for key in keys {
            text.push_str(&format!("  \"{key}\": {},\n", fixture[key]));
        }
        text.push_str("  \"moves\": [\n");
        let moves = fixture["moves"].as_array().unwrap();
        for (i, step) in playout.steps.iter().enumerate() {
            let comma = if i + 1 < moves.len() { "," } else { "" };
            text.push_str(&format!("    {{\"seat\": {}, \"move\": {}}}{comma}\n", step.seat.0, ordered_move_text(&step.mv)));
        }
        text.push_str("  ],\n");
        // Keys sorted whatever serde_json's map type (feature `preserve_order` changes it).
        let expected: std::collections::BTreeMap<&String, &Value> = fixture["expected"].as_object().unwrap().iter().collect();
        text.push_str(&format!("  \"expected\": {}\n}}\n", serde_json::to_string(&expected).unwrap()));
        std::fs::write(fixture_path(name), text).expect("write fixture");
    }
}
