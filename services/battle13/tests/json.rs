//! JSON shapes of the public types (feature `serde`) and their OpenAPI
//! schemas (feature `schema`).
#![cfg(feature = "serde")]

mod common;

use common::*;
use ludo_battle13::{BidCard, Effect, Family, FamilyCard, Game, Info, Knight, Move, Options, View};
use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{DeckRng, Engine, InfoSet, Seat, Viewer};
use serde_json::{Value, json};

fn parse(v: Value) -> Move {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v} does not parse: {e}"))
}

#[test]
fn moves_have_the_documented_shapes() {
    let cases = [
        (json!({"type": "bid", "card": {"kind": "family", "family": "eagle"}}), family_card(FamilyCard::Eagle)),
        (json!({"type": "bid", "card": {"kind": "family", "family": "neutral"}}), family_card(FamilyCard::Neutral)),
        (json!({"type": "bid", "card": {"kind": "weapons", "value": 25}}), weapons_card(25)),
        (json!({"type": "bid", "card": {"kind": "tournaments", "value": 7}}), tournaments(7)),
        (json!({"type": "pass"}), Move::Pass),
        (json!({"type": "choose_family", "family": "lion"}), Move::ChooseFamily { family: FamilyCard::Lion }),
        (json!({"type": "chaos"}), Move::Chaos),
        (json!({"type": "decline_chaos"}), Move::DeclineChaos),
        (json!({"type": "play", "knight": {"family": "eagle", "strength": 11}}), Move::Play { knight: Knight::new(Family::Eagle, 11) }),
    ];
    for (json, mv) in cases {
        assert_eq!(parse(json.clone()), mv);
        assert_eq!(serde_json::to_value(mv).unwrap(), json);
    }
}

#[test]
fn moves_with_unknown_fields_or_values_do_not_parse() {
    for bad in [
        json!({"type": "pass", "card": null}),
        json!({"type": "bid", "card": {"kind": "weapons", "value": 6, "extra": 1}}),
        json!({"type": "play", "knight": {"family": "eagle", "strength": 3, "x": 0}}),
        json!({"type": "play", "knight": {"family": "unicorn", "strength": 3}}),
        json!({"type": "bid", "card": {"kind": "tournaments", "value": -1}}),
        json!({"type": "surrender"}),
    ] {
        assert!(serde_json::from_value::<Move>(bad.clone()).is_err(), "{bad} parsed");
    }
    // Values outside the rules parse but are refused by the engine (B13-3).
    assert_eq!(parse(json!({"type": "bid", "card": {"kind": "weapons", "value": 7}})), weapons_card(7));
}

#[test]
fn options_default_and_refuse_unknown_fields() {
    let o: Options = serde_json::from_value(json!({})).unwrap();
    assert_eq!(o, Options::default());
    assert_eq!(serde_json::to_value(&o).unwrap(), json!({"first_seat": null, "target_crowns": 20}));
    let o: Options = serde_json::from_value(json!({"first_seat": 2, "target_crowns": 50})).unwrap();
    assert_eq!(o, Options { first_seat: Some(Seat(2)), target_crowns: 50 });
    assert!(serde_json::from_value::<Options>(json!({"target": 50})).is_err());
}

#[test]
fn effects_are_tagged_by_type_and_redacted_deals_carry_nulls() {
    let (g, effects) = game(EAGLE_WALL, 0);
    let shown: Vec<Value> = effects.iter().map(|e| serde_json::to_value(g.redact(e, Viewer::Seat(Seat(1)))).unwrap()).collect();
    assert_eq!(shown[0], json!({"type": "joust_started", "joust": 1, "first_player": 0}));
    assert_eq!(shown[1]["type"], "dealt");
    assert_eq!(shown[1]["hands"][0], json!({"seat": 0, "knights": null}));
    assert_eq!(shown[1]["hands"][1]["knights"][0], json!({"family": "wolf", "strength": 1}));
    assert_eq!(shown[2], json!({"type": "opening_answered", "seat": 0, "twelve_weapons": false}));
    for e in &effects {
        let back: Effect = serde_json::from_value(serde_json::to_value(e).unwrap()).unwrap();
        assert_eq!(&back, e);
    }
}

#[test]
fn a_view_round_trips_and_reads_well() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    ok(&mut g, 0, play("E11"));
    let view = g.view(Viewer::Seat(Seat(2)));
    let json = serde_json::to_value(&view).unwrap();
    let back: View = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, view);
    assert_eq!(json["turn"], json!({"seat": 3, "decision": "play_for_servant", "for_seat": 1}));
    assert_eq!(json["joust"]["contract"], json!({"master": 3, "servant": 1, "tournaments": 7}));
    assert_eq!(json["joust"]["favoured"], "wolf");
    assert_eq!(json["joust"]["calls"][0], json!({"seat": 3, "card": {"kind": "tournaments", "value": 7}}));
    assert_eq!(json["joust"]["hands"][0]["held"], Value::Null);
    assert_eq!(json["joust"]["hands"][0]["held_count"], 12);
    assert_eq!(json["joust"]["chaos"], json!({"declined": [0, 2], "activated_by": null}));
    assert!(json["joust"]["hands"][1]["held"].is_array(), "the servant is public");
    assert_eq!(json["crowns"], json!([0, 0]));
    let _: BidCard = serde_json::from_value(json!({"kind": "family", "family": "dragon"})).unwrap();
}

#[cfg(feature = "schema")]
mod schema {
    use super::*;
    use utoipa::ToSchema;
    use utoipa::openapi::{ComponentsBuilder, RefOr, Schema};

    type Schemas = Vec<(String, RefOr<Schema>)>;

    fn add<T: ToSchema>(all: &mut Schemas) {
        all.push((T::name().into_owned(), T::schema()));
        T::schemas(all);
    }

    /// The schemas of the four API types and of everything they hold.
    fn components() -> Value {
        let mut all = Schemas::new();
        add::<Options>(&mut all);
        add::<Move>(&mut all);
        add::<View>(&mut all);
        add::<Effect>(&mut all);
        serde_json::to_value(ComponentsBuilder::new().schemas_from_iter(all).build()).unwrap()
    }

    /// Walks every object schema and checks that each property is described.
    fn undescribed(path: &str, schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    for (name, prop) in props {
                        // A nullable reference carries its description on the reference.
                        let described = prop.get("description").is_some()
                            || prop["oneOf"].as_array().is_some_and(|o| o.iter().any(|s| s.get("description").is_some()));
                        // The tag of a tagged enum is described by its variant.
                        let tag = (name == "type" || name == "kind") && prop["enum"].as_array().is_some_and(|e| e.len() == 1);
                        if !described && !tag {
                            out.push(format!("{path}.{name}"));
                        }
                    }
                }
                for (key, value) in map {
                    undescribed(&format!("{path}/{key}"), value, out);
                }
            }
            Value::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    undescribed(&format!("{path}[{i}]"), value, out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_schema_and_field_is_described() {
        let components = components();
        let schemas = components["schemas"].as_object().expect("schemas");
        for name in ["Options", "Move", "View", "Effect", "Knight", "BidCard", "Joust", "Contract", "Turn"] {
            let name = format!("battle13.{name}");
            assert!(schemas.contains_key(&name), "no schema {name}");
        }
        let mut missing = Vec::new();
        for (name, schema) in schemas {
            if schema.get("description").is_none() {
                missing.push(name.clone());
            }
            undescribed(name, schema, &mut missing);
        }
        assert!(missing.is_empty(), "fields without a description: {missing:#?}");
    }

    #[test]
    fn moves_are_a_tagged_one_of() {
        let components = components();
        let one_of = components["schemas"]["battle13.Move"]["oneOf"].as_array().expect("oneOf");
        assert_eq!(one_of.len(), 6);
        assert_eq!(Game::KIND, "battle13");
    }
}

/// Every seat's info at `state`, written to JSON and read back: equal, written
/// the same again, also through a `serde_json::Value`, and drawing the same
/// matches as the original. Returns the JSON sizes.
fn check_info_round_trip(state: &Game, draw_seed: u64) -> Vec<usize> {
    Seat::all(4)
        .map(|seat| {
            let info = state.info(seat);
            let text = serde_json::to_string(&info).expect("an info serialises");
            let back: Info = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(back, info);
            assert_eq!(back.seat(), seat);
            assert_eq!(serde_json::to_string(&back).unwrap(), text, "written the same again");
            assert_eq!(serde_json::from_value::<Info>(serde_json::to_value(&info).unwrap()).unwrap(), info, "through a Value");
            let (mut a, mut b) = (DeckRng::new(&test_seed(draw_seed)), DeckRng::new(&test_seed(draw_seed)));
            for _ in 0..2 {
                let drawn = Game::determinize(&back, &mut a);
                assert_eq!(drawn, Game::determinize(&info, &mut b));
                assert_eq!(drawn.view(Viewer::Seat(seat)), state.view(Viewer::Seat(seat)));
            }
            text.len()
        })
        .collect()
}

/// A seat's info (for a computer player in another process) survives JSON
/// at every few moves of 50 random matches, and draws the same matches after.
#[test]
fn infos_round_trip_through_json() {
    let mut sizes = Vec::new();
    for n in 0..50u64 {
        let target = [20, 50, 100][(n % 3) as usize];
        let setup = setup(n, None, target);
        let mut moves = 0;
        let playout = random_playout::<Game>(&setup, n, 100_000, |state, _| {
            if moves % 23 == 0 {
                sizes.extend(check_info_round_trip(state, n * 10_000 + moves));
            }
            moves += 1;
        });
        assert!(playout.state.status().is_finished());
        sizes.extend(check_info_round_trip(&playout.state, n));
    }
    let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    eprintln!("battle13 info JSON: {} infos, {min} to {max} bytes", sizes.len());
}
