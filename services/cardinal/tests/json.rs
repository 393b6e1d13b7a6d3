//! The JSON shapes clients see (feature `serde`) and the OpenAPI schemas (feature `schema`).
#![cfg(feature = "serde")]

use ludo_cardinal::{Effect, Game, Info, Move, Options, Orientation, View};
use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{DeckRng, Engine, InfoSet, Seat, Setup, Viewer};
use serde_json::{Value, json};

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serialises")
}

fn game(players: usize, first: u8) -> Game {
    Game::new(&Setup { players, options: Options { first_seat: Some(Seat(first)) }, seed: test_seed(1) }).unwrap().0
}

#[test]
fn move_shapes() {
    assert_eq!(to_json(&Move::house(1, 2, 0)), json!({"type": "build", "shape": "house", "colour": 1, "x": 2, "y": 0}));
    assert_eq!(
        to_json(&Move::square(0, -1, 3, Orientation::Vertical).with_bonus(2)),
        json!({"type": "build", "shape": "square", "colour": 0, "x": -1, "y": 3, "orientation": "vertical", "bonus_colour": 2})
    );
    assert_eq!(to_json(&Move::cardinal_to(-2, 5)), json!({"type": "move_cardinal", "x": -2, "y": 5}));
    assert_eq!(to_json(&Move::KeepCardinal), json!({"type": "keep_cardinal"}));
}

#[test]
fn moves_parse_from_their_documented_shape() {
    let parse = |v: Value| serde_json::from_value::<Move>(v);
    assert_eq!(
        parse(json!({"type": "build", "shape": "tower", "colour": 3, "x": 0, "y": 1, "bonus_colour": 0})).unwrap(),
        Move::tower(3, 0, 1).with_bonus(0)
    );
    assert_eq!(
        parse(json!({"type": "build", "shape": "tower", "colour": 3, "x": 0, "y": 1, "orientation": null})).unwrap(),
        Move::tower(3, 0, 1)
    );
    assert_eq!(parse(json!({"type": "keep_cardinal"})).unwrap(), Move::KeepCardinal);
    // Unknown fields, unknown types, bad enum values and out-of-range numbers are parse errors.
    assert!(parse(json!({"type": "build", "shape": "house", "colour": 1, "x": 2, "y": 0, "color": 1})).is_err());
    assert!(parse(json!({"type": "move_cardinal", "x": 1, "y": 1, "z": 0})).is_err());
    // Also beside the tag of a move with no fields (serde would ignore it on a unit variant).
    assert!(parse(json!({"type": "keep_cardinal", "x": 1})).is_err());
    assert!(parse(json!({"type": "pass"})).is_err());
    assert!(parse(json!({"type": "build", "shape": "castle", "colour": 1, "x": 2, "y": 0})).is_err());
    assert!(parse(json!({"type": "build", "shape": "house", "colour": 1, "x": 2_147_483_648_i64, "y": 0})).is_err());
    assert!(parse(json!({"type": "build", "shape": "house", "colour": -1, "x": 2, "y": 0})).is_err());
}

#[test]
fn options_shapes() {
    assert_eq!(serde_json::from_value::<Options>(json!({})).unwrap(), Options::default());
    assert_eq!(serde_json::from_value::<Options>(json!({"first_seat": null})).unwrap(), Options::default());
    assert_eq!(serde_json::from_value::<Options>(json!({"first_seat": 2})).unwrap(), Options { first_seat: Some(Seat(2)) });
    assert!(serde_json::from_value::<Options>(json!({"first_player": 2})).is_err());
    assert_eq!(to_json(&Options::default()), json!({"first_seat": null}));
}

#[test]
fn effect_shapes() {
    let mut g = game(4, 0);
    let built = g.apply(Seat(0), &Move::tower(0, 0, 1).with_bonus(2)).unwrap();
    assert_eq!(
        to_json(&built),
        json!([{"type": "built", "seat": 0, "shape": "tower", "colour": 0, "cells": [{"x": 0, "y": 1}], "markers_taken": [], "bonus_colour": 2}])
    );
    let moved = g.apply(Seat(0), &Move::cardinal_to(2, 0)).unwrap();
    assert_eq!(to_json(&moved), json!([{"type": "cardinal_moved", "seat": 0, "x": 2, "y": 0}]));
    let built = g.apply(Seat(1), &Move::house(1, 1, 1)).unwrap();
    assert_eq!(to_json(&built)[0]["markers_taken"], json!([{"colour": 0, "count": 1}]));
    assert_eq!(to_json(&Effect::ForcedPass { seat: Seat(3) }), json!({"type": "forced_pass", "seat": 3}));
    assert_eq!(to_json(&Effect::CardinalKept { seat: Seat(1) }), json!({"type": "cardinal_kept", "seat": 1}));
    assert_eq!(to_json(&Effect::GameStarted { first_seat: Seat(2) }), json!({"type": "game_started", "first_seat": 2}));
}

#[test]
fn view_shape() {
    let mut g = game(3, 0);
    g.apply(Seat(0), &Move::tower(0, 0, 1).with_bonus(1)).unwrap();
    let v = to_json(&g.view(Viewer::Spectator));
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "buildings",
            "buildings_left",
            "cathedral",
            "first_seat",
            "fourth_colour",
            "last_built",
            "phase",
            "players",
            "scoring",
            "seats",
            "supply",
            "to_act"
        ],
        "no cardinal yet: the key is left out"
    );
    assert_eq!(v["cathedral"], json!({"nave": {"x": 0, "y": 0}, "tower": {"x": 1, "y": 0}}));
    assert_eq!(v["buildings"], json!([{"seat": 0, "shape": "tower", "colour": 0, "cells": [{"x": 0, "y": 1}]}]));
    assert_eq!(v["phase"], json!("cardinal"));
    assert_eq!(v["last_built"], json!({"shape": "tower", "colour": 0}));
    assert_eq!(
        v["seats"][0],
        json!({"seat": 0, "colours": [0], "markers_taken": [
        {"colour": 0, "count": 0}, {"colour": 1, "count": 1}, {"colour": 2, "count": 0}, {"colour": 3, "count": 0}]})
    );
    assert_eq!(v["buildings_left"][0], json!({"colour": 0, "houses": 2, "towers": 1, "squares": 2}));
    assert_eq!(v["scoring"]["provisional"], json!(true));
    assert_eq!(v["scoring"]["seats"][0]["doubled_colour"], json!(0));
    assert_eq!(v["scoring"]["seats"][0]["total"], json!(25));
    let back: View = serde_json::from_value(v).unwrap();
    assert_eq!(back, g.view(Viewer::Spectator));
}

/// Every legal move and every effect of random games survives a JSON round trip.
#[test]
fn moves_and_effects_round_trip() {
    for players in 2..=4 {
        random_playout::<Game>(&Setup { players, options: Options::default(), seed: test_seed(9) }, 3, 200, |game, step| {
            for mv in game.legal_moves(game.status().to_move().first().copied().unwrap_or(Seat(0))) {
                let text = serde_json::to_string(&mv).unwrap();
                assert!(!text.contains("null"), "{text}");
                assert_eq!(serde_json::from_str::<Move>(&text).unwrap(), mv);
            }
            if let Some(step) = step {
                for effect in &step.effects {
                    assert_eq!(serde_json::from_value::<Effect>(to_json(effect)).unwrap(), *effect);
                }
            }
            let view = game.view(Viewer::Spectator);
            assert_eq!(serde_json::from_value::<View>(to_json(&view)).unwrap(), view);
        });
    }
}

#[cfg(feature = "schema")]
mod schema {
    use utoipa::openapi::OpenApi;
    use utoipa::openapi::schema::Components;
    use utoipa::{PartialSchema, ToSchema};

    use super::*;

    fn components() -> Value {
        let mut schemas = Vec::new();
        <Options as ToSchema>::schemas(&mut schemas);
        <Move as ToSchema>::schemas(&mut schemas);
        <Effect as ToSchema>::schemas(&mut schemas);
        <View as ToSchema>::schemas(&mut schemas);
        schemas.push((<Options as ToSchema>::name().into(), <Options as PartialSchema>::schema()));
        schemas.push((<Move as ToSchema>::name().into(), <Move as PartialSchema>::schema()));
        schemas.push((<Effect as ToSchema>::name().into(), <Effect as PartialSchema>::schema()));
        schemas.push((<View as ToSchema>::name().into(), <View as PartialSchema>::schema()));
        let mut components = Components::new();
        components.schemas.extend(schemas);
        let mut api = OpenApi::default();
        api.components = Some(components);
        serde_json::to_value(&api).unwrap()["components"]["schemas"].clone()
    }

    /// Walks a schema and collects the paths of properties without a description.
    fn undocumented(path: &str, schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    for (name, prop) in props {
                        // utoipa writes the tag of a tagged union itself; the variant's own description covers it.
                        if name == "type" && map.get("description").is_some() {
                            continue;
                        }
                        let described = prop.get("description").is_some()
                            || prop.get("allOf").is_some_and(|all| all.to_string().contains("description"))
                            || prop.get("oneOf").is_some_and(|one| one.to_string().contains("description"));
                        if !described {
                            out.push(format!("{path}.{name}"));
                        }
                    }
                }
                for (k, v) in map {
                    undocumented(&format!("{path}/{k}"), v, out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    undocumented(&format!("{path}[{i}]"), v, out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_schema_field_is_documented() {
        let schemas = components();
        for name in [
            "cardinal.Options",
            "cardinal.Move",
            "cardinal.Effect",
            "cardinal.View",
            "cardinal.Scoring",
            "cardinal.SeatScore",
            "cardinal.Building",
            "cardinal.Cell",
            "cardinal.MarkerCount",
        ] {
            assert!(schemas.get(name).is_some(), "schema {name} missing from {:?}", schemas.as_object().unwrap().keys());
        }
        let mut missing = Vec::new();
        undocumented("", &schemas, &mut missing);
        assert!(missing.is_empty(), "fields without a description: {missing:#?}");
    }

    #[test]
    fn move_schema_is_a_tagged_union() {
        let schemas = components();
        let text = schemas["cardinal.Move"].to_string();
        if std::env::var_os("PRINT_SCHEMA").is_some() {
            println!("{}", serde_json::to_string_pretty(&schemas).unwrap());
        }
        for tag in ["build", "move_cardinal", "keep_cardinal"] {
            assert!(text.contains(&format!("\"{tag}\"")), "tag {tag} missing: {text}");
        }
    }
}

/// Every seat's info at `state`, written to JSON and read back: equal, written
/// the same again, also through a `serde_json::Value`, and drawing the same
/// games as the original. Returns the JSON sizes.
fn check_info_round_trip(state: &Game, players: usize, draw_seed: u64) -> Vec<usize> {
    Seat::all(players)
        .map(|seat| {
            let info = state.info(seat);
            let text = serde_json::to_string(&info).expect("an info serialises");
            let back: Info = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(back, info);
            assert_eq!(back.seat(), seat);
            assert_eq!(serde_json::to_string(&back).unwrap(), text, "written the same again");
            assert_eq!(serde_json::from_value::<Info>(to_json(&info)).unwrap(), info, "through a Value");
            let (mut a, mut b) = (DeckRng::new(&test_seed(draw_seed)), DeckRng::new(&test_seed(draw_seed)));
            let drawn = Game::determinize(&back, &mut a);
            assert_eq!(drawn, Game::determinize(&info, &mut b));
            assert_eq!(drawn.legal_moves(seat), state.legal_moves(seat));
            text.len()
        })
        .collect()
}

/// A seat's info (for a computer player in another process) survives JSON
/// at every few moves of 50 random games, and draws the same games after.
#[test]
fn infos_round_trip_through_json() {
    let mut sizes = Vec::new();
    for n in 0..50u64 {
        let players = 2 + (n % 3) as usize;
        let setup = Setup { players, options: Options::default(), seed: test_seed(n) };
        let mut moves = 0;
        let playout = random_playout::<Game>(&setup, n, 500, |state, _| {
            if moves % 7 == 0 {
                sizes.extend(check_info_round_trip(state, players, n * 1000 + moves));
            }
            moves += 1;
        });
        sizes.extend(check_info_round_trip(&playout.state, players, n));
    }
    let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    eprintln!("cardinal info JSON: {} infos, {min} to {max} bytes", sizes.len());
    assert!(*max < 16_000, "an info of {max} bytes");
}

/// The town reads as its buildings and refuses impossible ones.
#[test]
fn an_info_with_an_impossible_town_does_not_parse() {
    let mut state = game(2, 0);
    state.apply(Seat(0), &Move::tower(0, 0, 1).with_bonus(1)).unwrap();
    state.apply(Seat(0), &Move::cardinal_to(2, 0)).unwrap();
    state.apply(Seat(1), &Move::square(1, -1, 0, Orientation::Vertical)).unwrap();
    let info = to_json(&state.info(Seat(1)));
    let buildings = &info["game"]["town"]["buildings"];
    assert_eq!(buildings[0], json!({"seat": 0, "shape": "tower", "colour": 0, "cells": [{"x": 0, "y": 1}]}));
    assert_eq!(buildings[1]["cells"], json!([{"x": -1, "y": 0}, {"x": -1, "y": 1}]));
    let broken = |path: &[&str], value: Value| {
        let mut info = info.clone();
        let mut at = &mut info["game"]["town"]["buildings"];
        for key in path {
            at = match key.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*key],
            };
        }
        *at = value;
        serde_json::from_value::<Info>(info)
    };
    assert!(broken(&[], buildings.clone()).is_ok());
    // On the cathedral, on another building, a square's cells apart or in the wrong order, a tower on two cells.
    assert!(broken(&["0", "cells"], json!([{"x": 1, "y": 0}])).is_err());
    assert!(broken(&["1", "cells"], json!([{"x": 0, "y": 1}, {"x": 0, "y": 2}])).is_err());
    assert!(broken(&["1", "cells"], json!([{"x": -1, "y": 0}, {"x": -1, "y": 2}])).is_err());
    assert!(broken(&["1", "cells"], json!([{"x": -1, "y": 1}, {"x": -1, "y": 0}])).is_err());
    assert!(broken(&["0", "cells"], json!([{"x": 0, "y": 1}, {"x": 0, "y": 2}])).is_err());
    assert!(broken(&["0", "colour"], json!(4)).is_err());
}
