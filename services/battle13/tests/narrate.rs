//! Narration over random legal matches: every effect reads as a non-empty
//! sentence, with the players' names or without any, never panics, names
//! camps by their players, and a sentence about a deal names no knight its
//! viewer may not see (B13-25).

use std::collections::BTreeSet;

use ludo_battle13::{Effect, Family, Game, Options};
use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{Engine, Seat, Setup, Viewer};

const MATCHES: u64 = 150;
/// Far more moves than a match to 20 crowns takes.
const MAX_MOVES: usize = 1_000_000;

fn names() -> Vec<String> {
    ["North", "East", "South", "West"].iter().map(|&n| n.to_owned()).collect()
}

fn variant(effect: &Effect) -> &'static str {
    match effect {
        Effect::JoustStarted { .. } => "joust_started",
        Effect::Dealt { .. } => "dealt",
        Effect::OpeningAnswered { .. } => "opening_answered",
        Effect::DealVoided { .. } => "deal_voided",
        Effect::BidLaid { .. } => "bid_laid",
        Effect::Passed { .. } => "passed",
        Effect::BiddingEnded { .. } => "bidding_ended",
        Effect::FamilyFavoured { .. } => "family_favoured",
        Effect::ChaosActivated { .. } => "chaos_activated",
        Effect::ChaosDeclined { .. } => "chaos_declined",
        Effect::KnightPlayed { .. } => "knight_played",
        Effect::ServantRevealed { .. } => "servant_revealed",
        Effect::TournamentWon { .. } => "tournament_won",
        Effect::JoustScored { .. } => "joust_scored",
        Effect::MatchWon { .. } => "match_won",
    }
}

/// The sentence `viewer` reads for `effect`, checked against what the
/// redacted deal still carries; returns whether any hand was hidden.
fn check_deal(game: &Game, effect: &Effect, viewer: Viewer, names: &[String]) -> bool {
    let Effect::Dealt { hands, .. } = effect else {
        return false;
    };
    let redacted = game.redact(effect, viewer);
    let told = game.narrate(&redacted, names);
    let Effect::Dealt { hands: shown, .. } = &redacted else {
        panic!("redaction changed the kind of effect: {redacted:?}");
    };
    let mut hid = false;
    for (hand, shown) in hands.iter().zip(shown) {
        let got = format!("{} got", names[hand.seat.index()]);
        match (&hand.knights, &shown.knights) {
            (Some(_), None) => {
                hid = true;
                assert!(!told.contains(&got), "{viewer:?} reads a hidden hand: {told}");
            }
            (_, Some(_)) => assert!(told.contains(&got), "a visible hand is not told: {told}"),
            (None, None) => {}
        }
    }
    if shown.iter().all(|h| h.knights.is_none()) {
        for family in Family::ALL {
            assert!(!told.contains(family.name()), "{viewer:?} reads a knight in {told}");
        }
    }
    hid
}

fn check(game: &Game, effect: &Effect, names: &[String]) -> usize {
    let named = game.narrate(effect, names);
    assert!(!named.trim().is_empty(), "empty narration of {effect:?}");
    assert!(!named.contains("seat "), "a seat at the table was not named: {named}");
    // B13-5: a camp is its two players, never a number.
    assert!(!named.to_lowercase().contains("camp"), "a camp read as a number: {named}");
    assert!(!game.narrate(effect, &[]).trim().is_empty());
    let redacted = game.redact(effect, Viewer::Spectator);
    if redacted == *effect {
        assert_eq!(game.narrate(&redacted, names), named);
    }
    [Viewer::Spectator, Viewer::Seat(Seat(0)), Viewer::Seat(Seat(3))]
        .into_iter()
        .filter(|&viewer| check_deal(game, effect, viewer, names))
        .count()
}

#[test]
fn every_effect_of_random_matches_narrates_without_leaking_knights() {
    let names = names();
    let mut seen = BTreeSet::new();
    let mut hidden = 0;
    for n in 0..MATCHES {
        let setup = Setup { players: 4, options: Options::default(), seed: test_seed(n) };
        random_playout::<Game>(&setup, n, MAX_MOVES, |game, step| {
            let effects = match step {
                Some(step) => step.effects.clone(),
                None => Game::new(&setup).expect("set-up").1,
            };
            for effect in &effects {
                hidden += check(game, effect, &names);
                seen.insert(variant(effect));
            }
        });
    }
    assert!(hidden > 0, "no deal was ever hidden: the leak check checked nothing");
    assert_eq!(seen.len(), 15, "random matches should show every kind of effect: {seen:?}");
}
