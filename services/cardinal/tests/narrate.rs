//! Narration over random legal games: every effect of every game reads as a
//! non-empty sentence, with the players' names or without any, never panics,
//! and names colours as people say them, never by number (CA-1).

use std::collections::BTreeSet;

use ludo_cardinal::{Effect, Game, Options};
use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{Engine, Setup, Viewer};

const GAMES_PER_PLAYER_COUNT: u64 = 100;
const MAX_MOVES: usize = 200;

fn names(players: usize) -> Vec<String> {
    ["Ann", "Bob", "Cid", "Dee"][..players].iter().map(|&n| n.to_owned()).collect()
}

fn variant(effect: &Effect) -> &'static str {
    match effect {
        Effect::GameStarted { .. } => "game_started",
        Effect::Built { .. } => "built",
        Effect::CardinalMoved { .. } => "cardinal_moved",
        Effect::CardinalKept { .. } => "cardinal_kept",
        Effect::ForcedPass { .. } => "forced_pass",
        Effect::GameEnded { .. } => "game_ended",
    }
}

fn check(game: &Game, effect: &Effect, names: &[String]) {
    let named = game.narrate(effect, names);
    assert!(!named.trim().is_empty(), "empty narration of {effect:?}");
    assert!(!named.contains("seat "), "a seat at the table was not named: {named}");
    assert!(!game.narrate(effect, &[]).trim().is_empty());
    assert!(!named.contains("colour"), "a colour read as a number: {named}");
    // No hidden information: every viewer reads the same sentence.
    let redacted = game.redact(effect, Viewer::Spectator);
    assert_eq!(game.narrate(&redacted, names), named);
}

#[test]
fn every_effect_of_random_games_narrates() {
    let mut seen = BTreeSet::new();
    for players in 2..=4 {
        let names = names(players);
        for n in 0..GAMES_PER_PLAYER_COUNT {
            let setup = Setup { players, options: Options::default(), seed: test_seed(n) };
            random_playout::<Game>(&setup, n, MAX_MOVES, |game, step| {
                let effects = match step {
                    Some(step) => step.effects.clone(),
                    None => Game::new(&setup).expect("set-up").1,
                };
                for effect in &effects {
                    check(game, effect, &names);
                    seen.insert(variant(effect));
                }
            });
        }
    }
    assert_eq!(seen.len(), 6, "random games should show every kind of effect: {seen:?}");
}
