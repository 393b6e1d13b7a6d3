//! The JSON shapes third-party clients rely on (feature `serde`).
#![cfg(feature = "serde")]

use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{DeckRng, Engine, InfoSet, Seat, Setup, Viewer};
use ludo_kardinal::{Board, CardKind, Country, Effect, Game, Info, Move, Options, Placement, Source, Variant, View};
use serde_json::{Value, json};

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn moves_have_the_documented_shapes_and_round_trip() {
    let cases = [
        (
            Move::Place {
                pieces: vec![
                    Placement::abbey(Country::Burgundy, "cluny", &[CardKind::BavariaBurgundy]),
                    Placement::counsellor(Country::Burgundy, &[CardKind::FranconiaAragon, CardKind::FranconiaAragon]),
                ],
            },
            json!({"type": "place", "pieces": [
                {"piece": "abbey", "country": "burgundy", "site": "cluny", "paid_with": ["bavaria_burgundy"]},
                {"piece": "counsellor", "country": "burgundy", "paid_with": ["franconia_aragon", "franconia_aragon"]}
            ]}),
        ),
        (Move::DrawDeck {}, json!({"type": "draw_deck"})),
        (Move::TakeDisplay { slot: 1 }, json!({"type": "take_display", "slot": 1})),
        (
            Move::Exchange { discard: CardKind::France, take: Source::Deck },
            json!({"type": "exchange", "discard": "france", "take": "deck"}),
        ),
        (
            Move::Exchange { discard: CardKind::EnglandSwabia, take: Source::Display0 },
            json!({"type": "exchange", "discard": "england_swabia", "take": "display_0"}),
        ),
        (Move::Pass {}, json!({"type": "pass"})),
    ];
    for (mv, expected) in cases {
        assert_eq!(to_json(&mv), expected);
        assert_eq!(serde_json::from_value::<Move>(expected).unwrap(), mv);
    }
    // A counsellor may also spell its missing site as null.
    let explicit_null = json!({"type": "place", "pieces": [
        {"piece": "counsellor", "country": "italy", "site": null, "paid_with": ["lotharingia_italy"]}]});
    assert!(serde_json::from_value::<Move>(explicit_null).is_ok());
}

#[test]
fn moves_and_options_refuse_unknown_fields() {
    for bad in [
        json!({"type": "draw_deck", "slot": 0}),
        json!({"type": "take_display", "slot": 0, "extra": true}),
        json!({"type": "place", "pieces": [
            {"piece": "abbey", "country": "france", "site": "bec", "paid_with": ["france"], "cost": 1}]}),
        json!({"type": "fly"}),
        json!({"type": "exchange", "discard": "france", "take": "display_2"}),
    ] {
        assert!(serde_json::from_value::<Move>(bad.clone()).is_err(), "{bad} accepted");
    }
    assert!(serde_json::from_value::<Options>(json!({"first_seat": 0, "colour": "red"})).is_err());
}

#[test]
fn options_default_and_round_trip_exactly_with_a_board() {
    assert_eq!(serde_json::from_value::<Options>(json!({})).unwrap(), Options::default());
    assert_eq!(to_json(&Options::default()), json!({"first_seat": null, "variant": "standard", "board": null}));
    let opts: Options = serde_json::from_value(json!({"first_seat": 2, "variant": "dynamic"})).unwrap();
    assert_eq!((opts.first_seat, opts.variant), (Some(Seat(2)), Variant::Dynamic));
    let with_board = Options { board: Some(Board::embedded()), ..opts };
    let text = serde_json::to_string(&with_board).unwrap();
    let back: Options = serde_json::from_str(&text).unwrap();
    assert_eq!(back, with_board);
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
    // The board inside the options has the board file's shape.
    let file: Value = serde_json::from_str(include_str!("../board/reconstructed-v1.json")).unwrap();
    assert_eq!(to_json(&with_board)["board"], file);
}

#[test]
fn effects_are_tagged_and_hidden_cards_are_null_when_redacted() {
    let setup = Setup { players: 3, options: Options::default(), seed: test_seed(1) };
    let (game, effects) = Game::new(&setup).unwrap();
    let types: Vec<String> = effects.iter().map(|e| to_json(e)["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(types, ["cards_removed", "dealt", "dealt", "dealt", "display_refilled", "display_refilled", "first_seat", "turn_started"]);
    let dealt = effects.iter().find(|e| matches!(e, Effect::Dealt { seat: Seat(1), .. })).unwrap();
    assert_eq!(to_json(&game.redact(dealt, Viewer::Seat(Seat(0)))), json!({"type": "dealt", "seat": 1, "cards": null}));
    let shown = to_json(&game.redact(dealt, Viewer::Seat(Seat(1))));
    assert_eq!(shown["cards"].as_array().unwrap().len(), 3);
    for e in &effects {
        assert_eq!(&serde_json::from_value::<Effect>(to_json(e)).unwrap(), e);
    }
}

#[test]
fn a_view_serialises_with_its_documented_fields() {
    let setup = Setup { players: 4, options: Options { first_seat: Some(Seat(0)), ..Options::default() }, seed: test_seed(2) };
    let (game, _) = Game::new(&setup).unwrap();
    let v = to_json(&game.view(Viewer::Seat(Seat(1))));
    for field in [
        "viewer",
        "board",
        "variant",
        "players",
        "first_seat",
        "turn",
        "seats",
        "display",
        "deck_size",
        "deck",
        "discard",
        "removed",
        "abbeys",
        "seals",
        "exhaustions",
        "last_round",
        "interim",
        "final_scoring",
        "end_reason",
    ] {
        assert!(v.get(field).is_some(), "view lacks {field}");
    }
    assert_eq!(v["turn"], json!({"seat": 0, "step": "place_or_exchange", "cards_to_draw": 0}));
    assert_eq!(v["seats"][0]["hand"], Value::Null);
    assert_eq!(v["seats"][1]["hand"].as_array().unwrap().len(), 3);
    assert_eq!(v["deck"], Value::Null);
    let back: View = serde_json::from_value(v).unwrap();
    assert_eq!(back, game.view(Viewer::Seat(Seat(1))));
}

#[cfg(feature = "schema")]
#[test]
fn schemas_generate_with_descriptions() {
    use utoipa::PartialSchema;
    for (name, schema) in [
        ("Move", Move::schema()),
        ("Options", Options::schema()),
        ("View", View::schema()),
        ("Effect", Effect::schema()),
        ("Board", Board::schema()),
    ] {
        let text = serde_json::to_string(&schema).unwrap();
        assert!(text.contains("description"), "{name} schema has no description: {text}");
    }
    let mv = serde_json::to_string(&Move::schema()).unwrap();
    for tag in ["place", "draw_deck", "take_display", "exchange", "pass"] {
        assert!(mv.contains(&format!("\"{tag}\"")), "Move schema lacks {tag}");
    }
}

/// Every `$ref` of the five top-level schemas resolves to a schema the
/// types register themselves (`ToSchema::schemas`), all namespaced `kardinal.`.
#[cfg(feature = "schema")]
#[test]
fn schema_references_resolve_and_are_namespaced() {
    use utoipa::ToSchema;
    fn collect<T: ToSchema>(all: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        all.push((T::name().into_owned(), T::schema()));
        T::schemas(all);
    }
    let mut all = Vec::new();
    collect::<Move>(&mut all);
    collect::<Options>(&mut all);
    collect::<View>(&mut all);
    collect::<Effect>(&mut all);
    collect::<Board>(&mut all);
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    for name in &names {
        assert!(name.starts_with("kardinal.") || *name == "Seat", "schema {name} is not namespaced");
    }
    let text = serde_json::to_string(&all.iter().map(|(_, s)| s).collect::<Vec<_>>()).unwrap();
    for part in text.split("#/components/schemas/").skip(1) {
        let name = &part[..part.find('"').unwrap()];
        assert!(names.contains(&name), "dangling reference to {name}");
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
            for _ in 0..2 {
                let drawn = Game::determinize(&back, &mut a);
                assert_eq!(drawn, Game::determinize(&info, &mut b));
                assert_eq!(drawn.view(Viewer::Seat(seat)), state.view(Viewer::Seat(seat)));
            }
            text.len()
        })
        .collect()
}

/// The embedded board with another name: a custom board, written in full.
fn custom_board() -> Board {
    Board { name: "custom/test".into(), ..Board::embedded() }
}

/// A seat's info (for a computer player in another process) survives JSON
/// at every few moves of 50 random games, and draws the same games after.
#[test]
fn infos_round_trip_through_json() {
    let (mut embedded, mut custom) = (Vec::new(), Vec::new());
    for n in 0..50u64 {
        let players = 3 + (n % 3) as usize;
        let variant = if n % 2 == 0 { Variant::Standard } else { Variant::Dynamic };
        let board = (n % 5 == 4).then(custom_board);
        let sizes = if board.is_some() { &mut custom } else { &mut embedded };
        let setup = Setup { players, options: Options { variant, board, ..Options::default() }, seed: test_seed(n) };
        let mut moves = 0;
        let playout = random_playout::<Game>(&setup, n, 2_000, |state, _| {
            if moves % 15 == 0 {
                sizes.extend(check_info_round_trip(state, players, n * 1000 + moves));
            }
            moves += 1;
        });
        sizes.extend(check_info_round_trip(&playout.state, players, n));
    }
    for (what, sizes) in [("embedded", &embedded), ("custom", &custom)] {
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        eprintln!("kardinal info JSON, {what} board: {} infos, {min} to {max} bytes", sizes.len());
    }
    assert!(*embedded.iter().max().unwrap() < 8_000, "the embedded board goes by name");
}

/// The board reads as the embedded board's name or as a valid board.
#[test]
fn an_info_names_the_embedded_board_and_carries_any_other() {
    let setup = |board| Setup { players: 3, options: Options { board, ..Options::default() }, seed: test_seed(3) };
    let (game, _) = Game::new(&setup(None)).unwrap();
    let info = to_json(&game.info(Seat(0)));
    assert_eq!(info["game"]["board"], json!(Board::embedded().name));
    // A board given in full that is the embedded one also goes by name.
    let (same, _) = Game::new(&setup(Some(Board::embedded()))).unwrap();
    assert_eq!(to_json(&same.info(Seat(0))), info);
    let (custom, _) = Game::new(&setup(Some(custom_board()))).unwrap();
    let custom_info = to_json(&custom.info(Seat(0)));
    assert_eq!(custom_info["game"]["board"], to_json(&custom_board()));
    assert_eq!(serde_json::from_value::<Info>(custom_info.clone()).unwrap(), custom.info(Seat(0)));

    let with_board = |info: &Value, board: Value| {
        let mut info = info.clone();
        info["game"]["board"] = board;
        serde_json::from_value::<Info>(info)
    };
    // Another name, an invalid board, not a board at all.
    assert!(with_board(&info, json!("kardinal-und-koenig/reconstructed-v0")).is_err());
    let mut invalid = to_json(&custom_board());
    invalid["sites"][1]["id"] = invalid["sites"][0]["id"].clone();
    assert!(with_board(&custom_info, invalid).is_err());
    assert!(with_board(&info, json!(null)).is_err());
    // The embedded board in full reads back as the embedded board.
    let full = with_board(&info, to_json(&Board::embedded())).unwrap();
    assert_eq!(full, game.info(Seat(0)));
    // The occupied sites are a decimal string (no u128 in the JSON).
    assert_eq!(info["game"]["occupied"], json!("0"));
}
