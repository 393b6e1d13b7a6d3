//! Narration over random legal games: every effect reads as a non-empty
//! sentence, with the players' names or without any, never panics, names
//! card kinds, countries and sites as people say them (the board's names,
//! never ids), and a spectator's sentence names no card the spectator may
//! not see (KK-31).

use std::collections::BTreeSet;

use ludo_engine::testkit::{random_playout, test_seed};
use ludo_engine::{Engine, Setup, Viewer};
use ludo_kardinal::{Board, CardKind, Effect, Game, Options, Variant};

const GAMES_PER_TABLE: u64 = 30;
const MAX_MOVES: usize = 2_000;

fn names(players: usize) -> Vec<String> {
    ["Ann", "Bob", "Cid", "Dee", "Eve"][..players].iter().map(|&n| n.to_owned()).collect()
}

fn variant(effect: &Effect) -> &'static str {
    match effect {
        Effect::CardsRemoved { .. } => "cards_removed",
        Effect::Dealt { .. } => "dealt",
        Effect::DisplayRefilled { .. } => "display_refilled",
        Effect::FirstSeat { .. } => "first_seat",
        Effect::Placed { .. } => "placed",
        Effect::Discarded { .. } => "discarded",
        Effect::DrewFromDeck { .. } => "drew_from_deck",
        Effect::TookFromDisplay { .. } => "took_from_display",
        Effect::Passed { .. } => "passed",
        Effect::RefillStopped { .. } => "refill_stopped",
        Effect::DeckExhausted { .. } => "deck_exhausted",
        Effect::InterimScoring { .. } => "interim_scoring",
        Effect::Reshuffled { .. } => "reshuffled",
        Effect::LastRound { .. } => "last_round",
        Effect::TurnStarted { .. } => "turn_started",
        Effect::GameEnded { .. } => "game_ended",
    }
}

/// Every card an effect carries.
fn cards_of(effect: &Effect) -> Vec<CardKind> {
    match effect {
        Effect::CardsRemoved { cards } | Effect::Dealt { cards: Some(cards), .. } => cards.clone(),
        Effect::Placed { paid_with, .. } => paid_with.clone(),
        Effect::DisplayRefilled { card, .. }
        | Effect::Discarded { card, .. }
        | Effect::DrewFromDeck { card: Some(card), .. }
        | Effect::TookFromDisplay { card, .. } => vec![*card],
        _ => Vec::new(),
    }
}

/// A card as the sentences name it: the board's names of its countries ("England / Swabia card").
fn card_phrase(game: &Game, card: CardKind) -> String {
    let board = game.board();
    let info = board.card_kinds.iter().find(|k| k.id == card).expect("every kind is on the board");
    let names: Vec<&str> =
        info.countries.iter().map(|&c| board.countries.iter().find(|i| i.id == c).expect("every country").name.as_str()).collect();
    format!("{} card", names.join(" / "))
}

/// Checks one effect and returns whether redaction hid something from a spectator.
fn check(game: &Game, effect: &Effect, names: &[String]) -> bool {
    let named = game.narrate(effect, names);
    assert!(!named.trim().is_empty(), "empty narration of {effect:?}");
    assert!(!named.contains("seat "), "a seat at the table was not named: {named}");
    // Card kinds, countries and sites read as names, never as ids (`england_swabia`, `saint-denis`).
    assert!(!named.contains(['_', '-']), "an id in {named}");
    for card in CardKind::ALL {
        assert!(!named.contains(card.id()), "{card} read as an id: {named}");
        assert_eq!(named.contains(&card_phrase(game, card)), cards_of(effect).contains(&card), "{effect:?} reads {named}");
    }
    assert!(!game.narrate(effect, &[]).trim().is_empty());

    let redacted = game.redact(effect, Viewer::Spectator);
    let told = game.narrate(&redacted, names);
    assert!(!told.trim().is_empty());
    let shown = cards_of(&redacted);
    for card in CardKind::ALL {
        assert!(
            !told.contains(&card_phrase(game, card)) || shown.contains(&card),
            "a spectator's sentence names {card}, which the redacted {redacted:?} does not carry: {told}"
        );
    }
    if redacted == *effect {
        assert_eq!(told, named);
    }
    redacted != *effect
}

#[test]
fn every_effect_of_random_games_narrates_without_leaking_cards() {
    let mut seen = BTreeSet::new();
    let mut hidden = 0;
    for players in 3..=5 {
        let names = names(players);
        for n in 0..GAMES_PER_TABLE {
            let variant_option = if n % 2 == 0 { Variant::Standard } else { Variant::Dynamic };
            let setup = Setup { players, options: Options { variant: variant_option, ..Options::default() }, seed: test_seed(n) };
            random_playout::<Game>(&setup, n, MAX_MOVES, |game, step| {
                let effects = match step {
                    Some(step) => step.effects.clone(),
                    None => Game::new(&setup).expect("set-up").1,
                };
                for effect in &effects {
                    hidden += usize::from(check(game, effect, &names));
                    seen.insert(variant(effect));
                }
            });
        }
    }
    assert!(hidden > 0, "no effect was ever hidden from a spectator: the leak check checked nothing");
    for expected in ["cards_removed", "dealt", "drew_from_deck", "interim_scoring", "placed", "game_ended"] {
        assert!(seen.contains(expected), "random games never showed {expected}: {seen:?}");
    }
}

/// KK-3: on a custom board (here the countries' German names) the sentences
/// use that board's names, never the rules' English ones.
#[test]
fn a_custom_boards_names_are_told() {
    let mut board = Board::embedded();
    for info in &mut board.countries {
        info.name = info.german.clone();
    }
    let renamed: Vec<String> = Board::embedded().countries.iter().filter(|c| c.name != c.german).map(|c| c.name.clone()).collect();
    assert!(renamed.contains(&"France".to_owned()));
    let names = names(3);
    let setup = Setup { players: 3, options: Options { board: Some(board), ..Options::default() }, seed: test_seed(7) };
    let mut told = String::new();
    random_playout::<Game>(&setup, 7, MAX_MOVES, |game, step| {
        let effects = match step {
            Some(step) => step.effects.clone(),
            None => Game::new(&setup).expect("set-up").1,
        };
        for effect in &effects {
            check(game, effect, &names);
            told.push_str(&game.narrate(effect, &names));
            told.push('\n');
        }
    });
    for english in &renamed {
        assert!(!told.contains(english.as_str()), "{english} told on a German board:\n{told}");
    }
    assert!(told.contains("Frankreich card"), "{told}");
}
