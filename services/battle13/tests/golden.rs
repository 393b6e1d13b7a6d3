//! The golden recorded match: `tests/fixtures/battle13-golden.json` holds a
//! seed, options and every move of a whole match, with the expected figures
//! of each joust, the final crowns and the winners. Replaying it guards the
//! rules and the deal (seed → shuffle → hands) at once.
//!
//! The expected figures were computed by the engine when the record was made
//! and checked independently by `tests/fixtures/check_golden.py`, which
//! re-reads the moves alone (no hands, no engine code) and recounts each
//! joust's contract, tournaments and crowns. Do not regenerate the fixture to
//! make this test pass: a difference means the rules or the shuffle changed
//! (bump the ruleset instead).
//!
//! The JSON is read by hand so that this test also runs without the `serde`
//! feature; with it, the crate's own parser must agree.

mod common;

use ludo_battle13::{BidCard, Decision, Effect, Family, FamilyCard, Game, Knight, Move, Options, View, tournament_winner, weapons};
use ludo_engine::{Engine, Seat, Seed, Setup, Viewer};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/battle13-golden.json");

fn family(name: &str) -> Family {
    match name {
        "eagle" => Family::Eagle,
        "wolf" => Family::Wolf,
        "dragon" => Family::Dragon,
        "lion" => Family::Lion,
        other => panic!("no family {other}"),
    }
}

fn family_card(name: &str) -> FamilyCard {
    match name {
        "neutral" => FamilyCard::Neutral,
        other => FamilyCard::from(family(other)),
    }
}

fn family_card_name(card: FamilyCard) -> &'static str {
    match card {
        FamilyCard::Eagle => "eagle",
        FamilyCard::Wolf => "wolf",
        FamilyCard::Dragon => "dragon",
        FamilyCard::Lion => "lion",
        FamilyCard::Neutral => "neutral",
    }
}

fn int(v: &Value) -> u8 {
    u8::try_from(v.as_u64().expect("an integer")).expect("small")
}

/// A move from its documented JSON shape.
fn move_from_json(v: &Value) -> Move {
    match v["type"].as_str().expect("type") {
        "bid" => {
            let card = &v["card"];
            Move::Bid {
                card: match card["kind"].as_str().expect("kind") {
                    "family" => BidCard::Family { family: family_card(card["family"].as_str().unwrap()) },
                    "weapons" => BidCard::Weapons { value: int(&card["value"]) },
                    "tournaments" => BidCard::Tournaments { value: int(&card["value"]) },
                    other => panic!("no card kind {other}"),
                },
            }
        }
        "pass" => Move::Pass,
        "choose_family" => Move::ChooseFamily { family: family_card(v["family"].as_str().unwrap()) },
        "chaos" => Move::Chaos,
        "decline_chaos" => Move::DeclineChaos,
        "play" => Move::Play { knight: Knight::new(family(v["knight"]["family"].as_str().unwrap()), int(&v["knight"]["strength"])) },
        other => panic!("no move {other}"),
    }
}

/// A move in its documented JSON shape.
fn move_to_json(mv: &Move) -> Value {
    match *mv {
        Move::Bid { card: BidCard::Family { family } } => {
            json!({"type": "bid", "card": {"kind": "family", "family": family_card_name(family)}})
        }
        Move::Bid { card: BidCard::Weapons { value } } => {
            json!({"type": "bid", "card": {"kind": "weapons", "value": value}})
        }
        Move::Bid { card: BidCard::Tournaments { value } } => {
            json!({"type": "bid", "card": {"kind": "tournaments", "value": value}})
        }
        Move::Pass => json!({"type": "pass"}),
        Move::ChooseFamily { family } => {
            json!({"type": "choose_family", "family": family_card_name(family)})
        }
        Move::Chaos => json!({"type": "chaos"}),
        Move::DeclineChaos => json!({"type": "decline_chaos"}),
        Move::Play { knight } => json!({"type": "play", "knight": {
            "family": family_card_name(FamilyCard::from(knight.family)),
            "strength": knight.strength,
        }}),
    }
}

fn seed_from_hex(hex: &str) -> Seed {
    assert_eq!(hex.len(), 64, "a seed is 32 bytes");
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex");
    }
    Seed(bytes)
}

fn setup_from(fixture: &Value) -> Setup<Options> {
    let o = &fixture["options"];
    let options = Options {
        first_seat: o["first_seat"].as_u64().map(|s| Seat(s as u8)),
        target_crowns: o["target_crowns"].as_u64().expect("target") as u32,
    };
    Setup { players: 4, options, seed: seed_from_hex(fixture["seed"].as_str().expect("seed")) }
}

/// Each finished joust's figures, as the fixture records them.
fn joust_figures(view: &View) -> Value {
    Value::Array(
        view.history
            .iter()
            .map(|j| {
                let c = j.contract.expect("contract");
                let crowns = j.crowns.expect("crowns");
                json!({
                    "joust": j.number,
                    "first_player": j.first_player.0,
                    "master": c.master.0,
                    "contract": c.tournaments,
                    "favoured": family_card_name(j.favoured.expect("favoured")),
                    "chaos": j.chaos.as_ref().is_some_and(|c| c.activated_by.is_some()),
                    "tournaments_won": j.tournaments_won,
                    "crowns": {"camp": crowns.camp.0, "crowns": crowns.crowns},
                })
            })
            .collect(),
    )
}

#[test]
fn the_golden_match_replays_to_the_recorded_crowns_and_winners() {
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).expect("fixture")).expect("json");
    assert_eq!(fixture["ruleset"], Game::RULESET);
    let setup = setup_from(&fixture);
    let (mut game, _) = Game::new(&setup).expect("set-up");
    let moves = fixture["moves"].as_array().expect("moves");
    for (i, record) in moves.iter().enumerate() {
        let seat = Seat(int(&record["seat"]));
        let mv = move_from_json(&record["move"]);
        #[cfg(feature = "serde")]
        assert_eq!(serde_json::from_value::<Move>(record["move"].clone()).unwrap(), mv, "move {i}");
        assert_eq!(move_to_json(&mv), record["move"], "move {i} reads back");
        if let Err(err) = game.apply(seat, &mv) {
            panic!("move {i} ({record}) refused: {err}");
        }
    }
    let expected = &fixture["expected"];
    let view = game.view(Viewer::Spectator);
    assert_eq!(joust_figures(&view), expected["jousts"]);
    assert_eq!(json!(view.crowns), expected["crowns"]);
    let result = match game.status() {
        ludo_engine::Status::Finished { result } => result,
        other => panic!("the golden match is not over: {other:?}"),
    };
    assert_eq!(json!(result.winners.iter().map(|s| s.0).collect::<Vec<_>>()), expected["winners"]);
    assert_eq!(json!(result.scores), expected["scores"]);
}

// ---------------------------------------------------------------- making the record

/// A plain, deterministic player used only to make the record: it bids from
/// its weapons, favours its longest family, and plays to win cheaply.
fn bot_move(game: &Game) -> (Seat, Move) {
    let view = game.view(Viewer::Omniscient);
    let turn = view.turn.expect("a turn");
    let hand = view.joust.hands[turn.for_seat.index()].held.clone().unwrap();
    let legal = game.legal_moves(turn.seat);
    let longest = Family::ALL.into_iter().max_by_key(|&f| hand.iter().filter(|k| k.family == f).count()).unwrap();
    let w = weapons(&view.joust.hands[turn.seat.index()].dealt.clone().unwrap());
    let mv = match turn.decision {
        Decision::OpenBidding => Move::Bid { card: BidCard::Family { family: longest.into() } },
        Decision::Bid => {
            let highest = view
                .joust
                .calls
                .iter()
                .filter_map(|c| match c.card {
                    Some(BidCard::Tournaments { value }) => Some(value),
                    _ => None,
                })
                .max()
                .unwrap_or(6);
            let estimate = (5 + w / 3).min(13) as u8;
            let tournaments = Move::Bid { card: BidCard::Tournaments { value: highest + 1 } };
            let weapons_card = ludo_battle13::WEAPONS_CARDS.iter().rev().find(|&&v| u32::from(v) <= w.max(6)).copied();
            let weapons_move = Move::Bid { card: BidCard::Weapons { value: weapons_card.unwrap_or(6) } };
            if highest < estimate && legal.contains(&tournaments) {
                tournaments
            } else if legal.contains(&weapons_move) && w >= 9 {
                weapons_move
            } else {
                Move::Pass
            }
        }
        Decision::ChooseFamily => Move::ChooseFamily { family: longest.into() },
        Decision::Chaos => {
            let contract = view.joust.contract.unwrap().tournaments;
            if contract >= 10 && w >= 11 { Move::Chaos } else { Move::DeclineChaos }
        }
        Decision::Play | Decision::PlayForServant => {
            let t = view.joust.tournaments.last().unwrap();
            let favoured = view.joust.favoured.and_then(FamilyCard::family);
            let knights: Vec<Knight> = legal
                .iter()
                .map(|m| match m {
                    Move::Play { knight } => *knight,
                    _ => unreachable!(),
                })
                .collect();
            let chosen = if t.plays.is_empty() {
                *knights.iter().filter(|k| k.family == longest).max().unwrap_or(knights.last().unwrap())
            } else {
                let wins = |k: &Knight| {
                    let mut plays = t.plays.clone();
                    plays.push(ludo_battle13::Play { seat: turn.for_seat, knight: *k });
                    tournament_winner(&plays, favoured).unwrap().seat == turn.for_seat
                };
                let cheapest = |ks: Vec<Knight>| ks.into_iter().min_by_key(|k| (k.strength, k.family));
                cheapest(knights.iter().copied().filter(wins).collect()).or_else(|| cheapest(knights.clone())).unwrap()
            };
            Move::Play { knight: chosen }
        }
    };
    (turn.seat, mv)
}

/// Makes a record: `RECORD_GOLDEN=1 cargo test -p ludo-battle13 --test golden
/// -- --ignored` prints it; check it with `check_golden.py` before freezing.
#[test]
#[ignore = "makes the golden record; run by hand"]
fn make_golden_record() {
    let seed_hex = std::env::var("GOLDEN_SEED").unwrap_or_else(|_| "b13".repeat(21) + "7");
    let target: u32 = std::env::var("GOLDEN_TARGET").ok().and_then(|t| t.parse().ok()).unwrap_or(50);
    let fixture = json!({"seed": seed_hex, "options": {"first_seat": null, "target_crowns": target}});
    let setup = setup_from(&fixture);
    let (mut game, _) = Game::new(&setup).unwrap();
    let mut moves = Vec::new();
    let mut effects = Vec::new();
    while !game.status().is_finished() {
        let (seat, mv) = bot_move(&game);
        effects.extend(game.apply(seat, &mv).unwrap());
        moves.push(json!({"seat": seat.0, "move": move_to_json(&mv)}));
    }
    let view = game.view(Viewer::Spectator);
    let ludo_engine::Status::Finished { result } = game.status() else { unreachable!() };
    let record = json!({
        "ruleset": Game::RULESET,
        "seed": seed_hex,
        "options": fixture["options"],
        "moves": moves,
        "expected": {
            "jousts": joust_figures(&view),
            "crowns": view.crowns,
            "winners": result.winners.iter().map(|s| s.0).collect::<Vec<_>>(),
            "scores": result.scores,
        },
    });
    let voids = effects.iter().filter(|e| matches!(e, Effect::DealVoided { .. })).count();
    eprintln!("{} moves, {} jousts, {voids} void deals", moves.len(), view.history.len());
    if std::env::var("RECORD_GOLDEN").is_ok() {
        println!("{}", serde_json::to_string(&record).unwrap());
    }
}
