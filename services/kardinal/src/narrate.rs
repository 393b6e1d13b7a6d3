//! One English sentence per effect, for a step-by-step replay viewer.
//!
//! Sentences are in the simple past, without a final full stop, and say only
//! what the (already redacted) effect carries: a hidden card reads as "a
//! card", a hidden hand as "an opening hand". Card kinds and site ids appear
//! as the engine names them (`bavaria_burgundy`, `cluny`); countries by name.

use ludo_engine::Seat;
use ludo_engine::words::{and_list as join, plural, seat_name as name};

use crate::cards::CardKind;
use crate::country::{Country, Piece};
use crate::effect::{Effect, EndReason};
use crate::scoring::FinalScoring;

/// The sentence for `effect`, seats named by `seats[i]` ("seat N" past its end).
pub(crate) fn narrate(effect: &Effect, seats: &[String]) -> String {
    let name = |seat: Seat| name(seats, seat);
    match effect {
        Effect::CardsRemoved { cards } if cards.is_empty() => String::from("No card was put back in the box"),
        Effect::CardsRemoved { cards } => format!(
            "{} put back in the box: {}",
            if cards.len() == 1 { "1 card was".to_owned() } else { format!("{} cards were", cards.len()) },
            join(&grouped(cards))
        ),
        Effect::Dealt { seat, cards: None } => format!("{} was dealt an opening hand", name(*seat)),
        Effect::Dealt { seat, cards: Some(cards) } if cards.is_empty() => format!("{} was dealt no card", name(*seat)),
        Effect::Dealt { seat, cards: Some(cards) } => format!("{} was dealt {}", name(*seat), join(&ids(cards))),
        Effect::DisplayRefilled { slot, card } => format!("Display slot {slot} was filled with {card}"),
        Effect::FirstSeat { seat, drawn } => {
            format!("{} was {} to play first and took the black token", name(*seat), if *drawn { "drawn" } else { "chosen" })
        }
        Effect::Placed { seat, piece, country, site, paid_with } => placed(&name(*seat), *piece, *country, site.as_deref(), paid_with),
        Effect::Discarded { seat, card } => format!("{} discarded {card}", name(*seat)),
        Effect::DrewFromDeck { seat, card: Some(card) } => format!("{} drew {card} from the deck", name(*seat)),
        Effect::DrewFromDeck { seat, card: None } => format!("{} drew a card from the deck", name(*seat)),
        Effect::TookFromDisplay { seat, slot, card } => {
            format!("{} took {card} from display slot {slot}", name(*seat))
        }
        Effect::Passed { seat } => format!("{} passed", name(*seat)),
        Effect::RefillStopped { seat, hand_size } => {
            format!("{} could draw no more cards and kept a hand of {}", name(*seat), plural(u32::from(*hand_size), "card"))
        }
        Effect::DeckExhausted { count: 1 } => String::from("The deck ran out for the first time"),
        Effect::DeckExhausted { count: 2 } => String::from("The deck ran out for the second time: no more cards would be drawn"),
        Effect::DeckExhausted { count } => format!("The deck ran out (exhaustion {count})"),
        Effect::InterimScoring { countries, scores } => {
            let scores: Vec<String> = scores.iter().enumerate().map(|(i, points)| format!("{} {points}", seat_name(seats, i))).collect();
            if scores.is_empty() {
                format!("Interim abbey scoring of {}", plural(countries.len() as u32, "country"))
            } else {
                format!("Interim abbey scoring: {}", scores.join(", "))
            }
        }
        Effect::Reshuffled { deck_size } => {
            format!("The discard pile was shuffled into a new deck of {}", plural(*deck_size, "card"))
        }
        Effect::LastRound { ends_before } => {
            format!("The last round began: the game would end before {}'s next turn", name(*ends_before))
        }
        Effect::TurnStarted { seat } => format!("{}'s turn began", name(*seat)),
        Effect::GameEnded { reason, scoring } => game_ended(seats, *reason, scoring),
    }
}

/// "Ann placed an abbey at cluny in Burgundy, paying with bavaria_burgundy".
fn placed(who: &str, piece: Piece, country: Country, site: Option<&str>, paid_with: &[CardKind]) -> String {
    let mut out = match (piece, site) {
        (Piece::Abbey, Some(site)) => format!("{who} placed an abbey at {site} in {}", country_name(country)),
        (Piece::Abbey, None) => format!("{who} placed an abbey in {}", country_name(country)),
        (Piece::Counsellor, _) => format!("{who} placed a counsellor on the seal of {}", country_name(country)),
    };
    match paid_with {
        [] => {}
        // KK-11: two identical cards pay for a piece in any country.
        [a, b] if a == b => out.push_str(&format!(", paying with a joker of two {a}")),
        cards => out.push_str(&format!(", paying with {}", join(&ids(cards)))),
    }
    out
}

/// "Game over after the last round: Ann 45, Bob 50, Cid 38 — Bob won".
fn game_ended(seats: &[String], reason: EndReason, scoring: &FinalScoring) -> String {
    let mut out = String::from(match reason {
        EndReason::LastRoundOver => "Game over after the last round",
        EndReason::NoPlacementLeft => "Game over, no piece could be placed any more",
    });
    let totals: Vec<String> = scoring.totals.iter().map(|t| format!("{} {}", name(seats, t.seat), t.total)).collect();
    if !totals.is_empty() {
        out.push_str(": ");
        out.push_str(&totals.join(", "));
    }
    let winners: Vec<String> = scoring.winners.iter().map(|&s| name(seats, s)).collect();
    // KK-27: a winner level on points with a loser won on unused pieces.
    let total_of = |seat: Seat| scoring.totals.iter().find(|t| t.seat == seat).map(|t| t.total);
    let tie_broken = scoring
        .winners
        .iter()
        .any(|&w| total_of(w).is_some_and(|total| scoring.totals.iter().any(|t| !scoring.winners.contains(&t.seat) && t.total == total)));
    let tie_break = if tie_broken { " on unused pieces" } else { "" };
    match winners.len() {
        0 => {}
        1 => out.push_str(&format!(" — {} won{tie_break}", winners[0])),
        _ => out.push_str(&format!(" — {} shared the win{tie_break}", join(&winners))),
    }
    out
}

/// The country's name as the rules write it.
fn country_name(country: Country) -> &'static str {
    match country {
        Country::England => "England",
        Country::France => "France",
        Country::Aragon => "Aragon",
        Country::Lotharingia => "Lotharingia",
        Country::Franconia => "Franconia",
        Country::Swabia => "Swabia",
        Country::Bavaria => "Bavaria",
        Country::Burgundy => "Burgundy",
        Country::Italy => "Italy",
    }
}

/// The cards' ids, in order.
fn ids(cards: &[CardKind]) -> Vec<String> {
    cards.iter().map(|c| c.id().to_owned()).collect()
}

/// The cards counted per kind, in order of first appearance: "2 france", or "france" for one.
fn grouped(cards: &[CardKind]) -> Vec<String> {
    let mut kinds: Vec<(CardKind, usize)> = Vec::new();
    for &card in cards {
        match kinds.iter_mut().find(|(k, _)| *k == card) {
            Some((_, n)) => *n += 1,
            None => kinds.push((card, 1)),
        }
    }
    kinds.iter().map(|&(k, n)| if n == 1 { k.id().to_owned() } else { format!("{n} {}", k.id()) }).collect()
}

/// The name of the seat at index `i` of a per-seat list.
fn seat_name(seats: &[String], i: usize) -> String {
    u8::try_from(i).map_or_else(|_| format!("seat {i}"), |i| name(seats, Seat(i)))
}

#[cfg(test)]
mod tests {
    use ludo_engine::Viewer;

    use super::*;
    use crate::cards::CardKind::{BavariaBurgundy as BB, EnglandSwabia as ES, France as FR, FranconiaAragon as FA};
    use crate::effect::redact;
    use crate::scoring::{CountryScoring, SeatTotal};

    fn names() -> Vec<String> {
        ["Ann", "Bob", "Cid"].map(String::from).to_vec()
    }

    fn say(effect: &Effect) -> String {
        narrate(effect, &names())
    }

    fn total(seat: u8, total: i32) -> SeatTotal {
        SeatTotal { seat: Seat(seat), interim: 0, abbeys: total, alliances: 0, chains: 0, total, unused_pieces: 0 }
    }

    fn final_scoring(totals: Vec<SeatTotal>, winners: Vec<Seat>) -> FinalScoring {
        FinalScoring { abbeys: Vec::new(), alliances: Vec::new(), chains: Vec::new(), totals, winners }
    }

    /// KK-6.
    #[test]
    fn cards_removed_are_counted_per_kind() {
        let four = Effect::CardsRemoved { cards: CardKind::ALL.to_vec() };
        assert_eq!(
            say(&four),
            "5 cards were put back in the box: franconia_aragon, bavaria_burgundy, lotharingia_italy, \
             england_swabia and france"
        );
        let three = Effect::CardsRemoved { cards: vec![FA, FA, FR, FR] };
        assert_eq!(say(&three), "4 cards were put back in the box: 2 franconia_aragon and 2 france");
        assert_eq!(say(&Effect::CardsRemoved { cards: Vec::new() }), "No card was put back in the box");
    }

    /// KK-7.
    #[test]
    fn dealt_lists_a_visible_hand_only() {
        let seen = Effect::Dealt { seat: Seat(0), cards: Some(vec![FR, FR, ES]) };
        assert_eq!(say(&seen), "Ann was dealt france, france and england_swabia");
        let hidden = Effect::Dealt { seat: Seat(0), cards: None };
        assert_eq!(say(&hidden), "Ann was dealt an opening hand");
    }

    #[test]
    fn display_refilled() {
        let e = Effect::DisplayRefilled { slot: 1, card: BB };
        assert_eq!(say(&e), "Display slot 1 was filled with bavaria_burgundy");
    }

    /// KK-8.
    #[test]
    fn first_seat_drawn_or_chosen() {
        let drawn = Effect::FirstSeat { seat: Seat(2), drawn: true };
        assert_eq!(say(&drawn), "Cid was drawn to play first and took the black token");
        let chosen = Effect::FirstSeat { seat: Seat(2), drawn: false };
        assert_eq!(say(&chosen), "Cid was chosen to play first and took the black token");
    }

    /// KK-11, KK-14, KK-15.
    #[test]
    fn placed_names_piece_site_country_and_payment() {
        let abbey = Effect::Placed {
            seat: Seat(0),
            piece: Piece::Abbey,
            country: Country::Burgundy,
            site: Some("cluny".into()),
            paid_with: vec![BB],
        };
        assert_eq!(say(&abbey), "Ann placed an abbey at cluny in Burgundy, paying with bavaria_burgundy");
        let counsellor =
            Effect::Placed { seat: Seat(1), piece: Piece::Counsellor, country: Country::Italy, site: None, paid_with: vec![FR, FR] };
        assert_eq!(say(&counsellor), "Bob placed a counsellor on the seal of Italy, paying with a joker of two france");
    }

    #[test]
    fn discarded() {
        assert_eq!(say(&Effect::Discarded { seat: Seat(1), card: ES }), "Bob discarded england_swabia");
    }

    /// KK-18, KK-31.
    #[test]
    fn drew_from_deck_names_the_card_only_when_shown() {
        assert_eq!(say(&Effect::DrewFromDeck { seat: Seat(1), card: Some(FR) }), "Bob drew france from the deck");
        assert_eq!(say(&Effect::DrewFromDeck { seat: Seat(1), card: None }), "Bob drew a card from the deck");
    }

    #[test]
    fn took_from_display() {
        let e = Effect::TookFromDisplay { seat: Seat(2), slot: 0, card: FA };
        assert_eq!(say(&e), "Cid took franconia_aragon from display slot 0");
    }

    /// KK-20.
    #[test]
    fn passed() {
        assert_eq!(say(&Effect::Passed { seat: Seat(2) }), "Cid passed");
    }

    /// KK-22.
    #[test]
    fn refill_stopped() {
        let e = Effect::RefillStopped { seat: Seat(0), hand_size: 2 };
        assert_eq!(say(&e), "Ann could draw no more cards and kept a hand of 2 cards");
        let e = Effect::RefillStopped { seat: Seat(0), hand_size: 1 };
        assert_eq!(say(&e), "Ann could draw no more cards and kept a hand of 1 card");
    }

    /// KK-19, KK-20.
    #[test]
    fn deck_exhausted() {
        assert_eq!(say(&Effect::DeckExhausted { count: 1 }), "The deck ran out for the first time");
        assert_eq!(say(&Effect::DeckExhausted { count: 2 }), "The deck ran out for the second time: no more cards would be drawn");
        assert_eq!(say(&Effect::DeckExhausted { count: 3 }), "The deck ran out (exhaustion 3)");
    }

    /// KK-19, KK-24.
    #[test]
    fn interim_scoring_sums_up_per_seat() {
        let e = Effect::InterimScoring {
            countries: vec![CountryScoring { country: Country::England, abbeys: vec![2, 1, 0], points: vec![3, 2, 0] }],
            scores: vec![12, 7, 3],
        };
        assert_eq!(say(&e), "Interim abbey scoring: Ann 12, Bob 7, Cid 3");
        let bare = Effect::InterimScoring { countries: Vec::new(), scores: Vec::new() };
        assert_eq!(say(&bare), "Interim abbey scoring of 0 countries");
    }

    #[test]
    fn reshuffled() {
        let e = Effect::Reshuffled { deck_size: 30 };
        assert_eq!(say(&e), "The discard pile was shuffled into a new deck of 30 cards");
    }

    #[test]
    fn last_round() {
        let e = Effect::LastRound { ends_before: Seat(0) };
        assert_eq!(say(&e), "The last round began: the game would end before Ann's next turn");
    }

    #[test]
    fn turn_started() {
        assert_eq!(say(&Effect::TurnStarted { seat: Seat(1) }), "Bob's turn began");
    }

    /// KK-20, KK-21, KK-27.
    #[test]
    fn game_ended_gives_reason_totals_and_winners() {
        let e = Effect::GameEnded {
            reason: EndReason::LastRoundOver,
            scoring: final_scoring(vec![total(0, 45), total(1, 50), total(2, 38)], vec![Seat(1)]),
        };
        assert_eq!(say(&e), "Game over after the last round: Ann 45, Bob 50, Cid 38 — Bob won");
        let tie = Effect::GameEnded {
            reason: EndReason::NoPlacementLeft,
            scoring: final_scoring(vec![total(0, 40), total(1, 40), total(2, 38)], vec![Seat(0)]),
        };
        assert_eq!(say(&tie), "Game over, no piece could be placed any more: Ann 40, Bob 40, Cid 38 — Ann won on unused pieces");
        let shared = Effect::GameEnded {
            reason: EndReason::LastRoundOver,
            scoring: final_scoring(vec![total(0, 40), total(1, 40)], vec![Seat(0), Seat(1)]),
        };
        assert_eq!(say(&shared), "Game over after the last round: Ann 40, Bob 40 — Ann and Bob shared the win");
    }

    /// KK-31: redaction blanks the card, and the sentence then names no card.
    #[test]
    fn redacted_cards_are_not_named() {
        let drew = Effect::DrewFromDeck { seat: Seat(1), card: Some(FR) };
        let hidden = redact(&drew, Viewer::Spectator, false);
        assert_eq!(say(&hidden), "Bob drew a card from the deck");
        assert!(!say(&hidden).contains(FR.id()));
        assert_eq!(narrate(&redact(&drew, Viewer::Seat(Seat(1)), false), &names()), "Bob drew france from the deck");
        let dealt = Effect::Dealt { seat: Seat(0), cards: Some(vec![FA, ES, BB]) };
        let hidden = narrate(&redact(&dealt, Viewer::Seat(Seat(2)), false), &names());
        assert_eq!(hidden, "Ann was dealt an opening hand");
        for card in [FA, ES, BB] {
            assert!(!hidden.contains(card.id()));
        }
    }

    #[test]
    fn seats_without_a_name_read_as_seat_n() {
        assert_eq!(narrate(&Effect::TurnStarted { seat: Seat(4) }, &names()), "seat 4's turn began");
        assert_eq!(narrate(&Effect::Passed { seat: Seat(0) }, &[]), "seat 0 passed");
        let e = Effect::InterimScoring { countries: Vec::new(), scores: vec![1, 2, 3, 4] };
        assert_eq!(narrate(&e, &names()), "Interim abbey scoring: Ann 1, Bob 2, Cid 3, seat 3 4");
    }
}
