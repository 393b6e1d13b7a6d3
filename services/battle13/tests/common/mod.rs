//! Helpers shared by the integration tests: hands from short strings, set-ups
//! and drivers through the phases of a joust.
#![allow(dead_code)]

use ludo_battle13::{BidCard, Decision, Effect, Family, FamilyCard, Game, Knight, Move, Options, View};
use ludo_engine::{Engine, MoveError, Seat, Setup, Viewer, testkit::test_seed};

/// A knight from `E11`, `W2`, `D13`, `L1`.
pub fn k(s: &str) -> Knight {
    let family = match &s[..1] {
        "E" => Family::Eagle,
        "W" => Family::Wolf,
        "D" => Family::Dragon,
        "L" => Family::Lion,
        other => panic!("no family {other}"),
    };
    Knight::new(family, s[1..].parse().expect("strength"))
}

/// Knights from a list like `E1-13 W13 D2`: single knights or ranges.
pub fn knights(spec: &str) -> Vec<Knight> {
    let mut out = Vec::new();
    for token in spec.split_whitespace() {
        if let Some((from, to)) = token.split_once('-') {
            let first = k(from);
            let to: u8 = to.parse().expect("range end");
            out.extend((first.strength..=to).map(|s| Knight::new(first.family, s)));
        } else {
            out.push(k(token));
        }
    }
    out
}

/// Four hands from four specs.
pub fn hands(specs: [&str; 4]) -> [Vec<Knight>; 4] {
    specs.map(knights)
}

/// Seat 0 holds every Eagle; seat 2 opens (19 weapons). With Eagle favoured,
/// seat 0 wins every tournament whatever anyone plays.
pub const EAGLE_WALL: [&str; 4] = ["E1-13", "W1-9 D7-10", "W10-13 D11-13 D1-6", "L1-13"];

/// The rules' worked tournament: seat 3 opens; with seat 3 master, seat 0
/// leads Eagle 11 and the servant (seat 1) has no Eagle but Lion 13 and Wolf 2.
pub const WORKED: [&str; 4] = ["E11 E1-3 D1-9", "L13 W2-13", "E4-8 D10-13 L1-4", "E9 E10 E12 E13 W1 L5-12"];

/// One family per seat: 10 weapons each, nobody opens (B13-9).
pub const NO_OPENER: [&str; 4] = ["E1-13", "W1-13", "D1-13", "L1-13"];

/// A set-up for 4 players.
pub fn setup(seed: u64, first_seat: Option<u8>, target_crowns: u32) -> Setup<Options> {
    Setup { players: 4, options: Options { first_seat: first_seat.map(Seat), target_crowns }, seed: test_seed(seed) }
}

/// A match whose first deal is `specs`, first player `first`, target 20.
pub fn game(specs: [&str; 4], first: u8) -> (Game, Vec<Effect>) {
    game_to(specs, first, 20)
}

/// A match whose first deal is `specs`, first player `first`, with a target.
pub fn game_to(specs: [&str; 4], first: u8, target: u32) -> (Game, Vec<Effect>) {
    Game::with_first_deal(&setup(1, Some(first), target), hands(specs)).expect("set-up")
}

/// Applies a move that must be accepted.
pub fn ok(game: &mut Game, seat: u8, mv: Move) -> Vec<Effect> {
    game.apply(Seat(seat), &mv).unwrap_or_else(|e| panic!("seat {seat} {mv:?} refused: {e}"))
}

/// Applies a move that must be refused for `rule`; the state must not change.
pub fn refused(game: &mut Game, seat: u8, mv: Move, rule: &str) -> MoveError {
    let before = game.clone();
    let err = game.apply(Seat(seat), &mv).expect_err("move accepted");
    assert_eq!(game, &before, "a refused move changed the state");
    match &err {
        MoveError::Rule { rule: r, .. } => assert_eq!(*r, rule, "wrong rule for {mv:?}: {err}"),
        other => panic!("expected a {rule} refusal, got {other:?}"),
    }
    err
}

/// A tournaments bid card.
pub fn tournaments(value: u8) -> Move {
    Move::Bid { card: BidCard::Tournaments { value } }
}

/// A weapons bid card.
pub fn weapons_card(value: u8) -> Move {
    Move::Bid { card: BidCard::Weapons { value } }
}

/// A family bid card.
pub fn family_card(family: FamilyCard) -> Move {
    Move::Bid { card: BidCard::Family { family } }
}

/// A knight played.
pub fn play(knight: &str) -> Move {
    Move::Play { knight: k(knight) }
}

/// The seat to move now.
pub fn to_move(game: &Game) -> Seat {
    game.status().to_move()[0]
}

/// The decision awaited now.
pub fn decision(game: &Game) -> Decision {
    game.view(Viewer::Omniscient).turn.expect("a turn").decision
}

/// Runs the talking rounds so that `master` wins the contract `value`: the
/// opener lays Weapons 6 (or the contract if it is the master), the master
/// lays the contract, everyone else passes.
pub fn bid_contract(game: &mut Game, master: u8, value: u8) -> Vec<Effect> {
    let mut effects = Vec::new();
    let mut laid = false;
    while matches!(decision(game), Decision::OpenBidding | Decision::Bid) {
        let seat = to_move(game).0;
        let mv = if seat == master && !laid {
            laid = true;
            tournaments(value)
        } else if decision(game) == Decision::OpenBidding {
            weapons_card(6)
        } else {
            Move::Pass
        };
        effects.extend(ok(game, seat, mv));
    }
    effects
}

/// Runs a joust up to its first tournament: contract, favoured family (when
/// asked), Chaos activated by the master's left if `chaos`, else declined.
pub fn to_tournaments(game: &mut Game, master: u8, value: u8, family: FamilyCard, chaos: bool) -> Vec<Effect> {
    let mut effects = bid_contract(game, master, value);
    if decision(game) == Decision::ChooseFamily {
        effects.extend(ok(game, master, Move::ChooseFamily { family }));
    }
    while decision(game) == Decision::Chaos {
        let seat = to_move(game).0;
        effects.extend(ok(game, seat, if chaos { Move::Chaos } else { Move::DeclineChaos }));
    }
    effects
}

/// Plays the current joust's tournaments to the end, everyone (the master
/// for the servant) playing their first legal knight.
pub fn play_out_joust(game: &mut Game) -> Vec<Effect> {
    let number = game.view(Viewer::Omniscient).joust.number;
    let mut effects = Vec::new();
    while !game.status().is_finished() && game.view(Viewer::Omniscient).joust.number == number {
        let seat = to_move(game);
        let mv = game.legal_moves(seat)[0];
        effects.extend(ok(game, seat.0, mv));
    }
    effects
}

/// The omniscient view.
pub fn omni(game: &Game) -> View {
    game.view(Viewer::Omniscient)
}
