//! One English sentence per effect, for a step-by-step replay viewer.
//!
//! Sentences are in the simple past, without a final full stop, and say only
//! what the (already redacted) effect carries: a hidden card reads as "a
//! card", a hidden hand as "an opening hand". Things are named as people say
//! them, from the game's board (so a custom board's names are used):
//! countries by their display names ("Burgundy"), card kinds by the
//! countries they name ("an England / Swabia card", "two France cards"),
//! sites by a name made from their id (`saint-denis` → "Saint Denis", see
//! [`site_name`]); display slots and counts in words ("the second display
//! slot", "three cards"):
//! "Ann placed an abbey at Cluny in Burgundy, paying with a Bavaria / Burgundy card".

use ludo_engine::Seat;
use ludo_engine::words::{and_list as join, article, capitalised, ordinal, plural, seat_name as name};

use crate::board::Board;
use crate::cards::CardKind;
use crate::country::{Country, Piece};
use crate::effect::{Effect, EndReason};
use crate::scoring::FinalScoring;

/// The sentence for `effect` in a game on `board`, seats named by `seats[i]`
/// ("seat N" past its end).
pub(crate) fn narrate(effect: &Effect, seats: &[String], board: &Board) -> String {
    let name = |seat: Seat| name(seats, seat);
    let one = |card: CardKind| one_card(board, card);
    match effect {
        Effect::CardsRemoved { cards } if cards.is_empty() => String::from("No card was put back in the box"),
        Effect::CardsRemoved { cards } => format!(
            "{} put back in the box: {}",
            capitalised(&if cards.len() == 1 { "one card was".to_owned() } else { format!("{} were", plural(count(cards.len()), "card")) }),
            cards_named(board, cards)
        ),
        Effect::Dealt { seat, cards: None } => format!("{} was dealt an opening hand", name(*seat)),
        Effect::Dealt { seat, cards: Some(cards) } if cards.is_empty() => format!("{} was dealt no card", name(*seat)),
        Effect::Dealt { seat, cards: Some(cards) } => format!("{} was dealt {}", name(*seat), cards_named(board, cards)),
        Effect::DisplayRefilled { slot, card } => format!("The {} was filled with {}", display_slot(*slot), one(*card)),
        Effect::FirstSeat { seat, drawn } => {
            format!("{} was {} to play first and took the black token", name(*seat), if *drawn { "drawn" } else { "chosen" })
        }
        Effect::Placed { seat, piece, country, site, paid_with } => {
            placed(board, &name(*seat), *piece, *country, site.as_deref(), paid_with)
        }
        Effect::Discarded { seat, card } => format!("{} discarded {}", name(*seat), one(*card)),
        Effect::DrewFromDeck { seat, card: Some(card) } => format!("{} drew {} from the deck", name(*seat), one(*card)),
        Effect::DrewFromDeck { seat, card: None } => format!("{} drew a card from the deck", name(*seat)),
        Effect::TookFromDisplay { seat, slot, card } => {
            format!("{} took the {} card from the {}", name(*seat), card_name(board, *card), display_slot(*slot))
        }
        Effect::Passed { seat } => format!("{} passed", name(*seat)),
        Effect::RefillStopped { seat, hand_size: 0 } => format!("{} could draw no more cards and kept an empty hand", name(*seat)),
        Effect::RefillStopped { seat, hand_size } => {
            format!("{} could draw no more cards and kept a hand of {}", name(*seat), plural(u32::from(*hand_size), "card"))
        }
        Effect::DeckExhausted { count: 1 } => String::from("The deck ran out for the first time"),
        Effect::DeckExhausted { count: 2 } => String::from("The deck ran out for the second time: no more cards would be drawn"),
        Effect::DeckExhausted { count } => format!("The deck ran out for the {} time", ordinal(u32::from(*count))),
        Effect::InterimScoring { countries, scores } => {
            let scores: Vec<String> = scores.iter().enumerate().map(|(i, points)| format!("{} {points}", seat_name(seats, i))).collect();
            if scores.is_empty() {
                format!("Interim abbey scoring of {}", plural(count(countries.len()), "country"))
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

/// "Ann placed an abbey at Cluny in Burgundy, paying with a Bavaria / Burgundy card".
fn placed(board: &Board, who: &str, piece: Piece, country: Country, site: Option<&str>, paid_with: &[CardKind]) -> String {
    let country = country_name(board, country);
    let mut out = match (piece, site) {
        (Piece::Abbey, Some(site)) => format!("{who} placed an abbey at {} in {country}", site_name(site)),
        (Piece::Abbey, None) => format!("{who} placed an abbey in {country}"),
        (Piece::Counsellor, _) => format!("{who} placed a counsellor on the seal of {country}"),
    };
    match paid_with {
        [] => {}
        // KK-11: two identical cards pay for a piece in any country.
        [a, b] if a == b => out.push_str(&format!(", paying with a joker of two {} cards", card_name(board, *a))),
        cards => out.push_str(&format!(", paying with {}", cards_named(board, cards))),
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

/// The country's display name on `board`, or its name in the rules (KK-1)
/// when the board gives none.
fn country_name(board: &Board, country: Country) -> String {
    match board.countries.iter().find(|c| c.id == country) {
        Some(info) if !info.name.trim().is_empty() => info.name.clone(),
        _ => rules_country_name(country).to_owned(),
    }
}

/// The country's name as the rules write it (KK-1).
fn rules_country_name(country: Country) -> &'static str {
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

/// A card kind as printed: the names of the countries it names, in the
/// board's order, joined by a slash ("England / Swabia", "France"; KK-4).
fn card_name(board: &Board, card: CardKind) -> String {
    let countries = board.card_kinds.iter().find(|k| k.id == card).map_or(card.countries(), |k| k.countries.as_slice());
    let countries = if countries.is_empty() { card.countries() } else { countries };
    countries.iter().map(|&c| country_name(board, c)).collect::<Vec<_>>().join(" / ")
}

/// "a France card", "an England / Swabia card".
fn one_card(board: &Board, card: CardKind) -> String {
    let name = card_name(board, card);
    format!("{} {name} card", article(&name))
}

/// The cards counted per kind, in order of first appearance:
/// "two France cards and an England / Swabia card".
fn cards_named(board: &Board, cards: &[CardKind]) -> String {
    let mut kinds: Vec<(CardKind, u32)> = Vec::new();
    for &card in cards {
        match kinds.iter_mut().find(|(k, _)| *k == card) {
            Some((_, n)) => *n += 1,
            None => kinds.push((card, 1)),
        }
    }
    let named: Vec<String> =
        kinds.iter().map(|&(k, n)| if n == 1 { one_card(board, k) } else { plural(n, &format!("{} card", card_name(board, k))) }).collect();
    join(&named)
}

/// "the first display slot" for slot 0 (slots count from 0 in moves and effects, KK-18).
fn display_slot(slot: u8) -> String {
    format!("{} display slot", ordinal(u32::from(slot) + 1))
}

/// A site as people say it. Boards give sites ids only, so the name is made
/// from the id: a lower-case id of words joined by `-` or `_` reads as those
/// words capitalised, small linking words kept lower case (`cluny` → "Cluny",
/// `san-juan-de-la-pena` → "San Juan de la Pena"); any other id (capitals,
/// spaces, other characters) is taken to be a name already and kept as it is.
pub(crate) fn site_name(id: &str) -> String {
    const LINKS: [&str; 17] =
        ["am", "an", "and", "da", "de", "del", "della", "der", "des", "di", "du", "im", "la", "le", "les", "of", "the"];
    let plain = id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    let words: Vec<&str> = id.split(['-', '_']).filter(|w| !w.is_empty()).collect();
    if !plain || words.is_empty() {
        return id.to_owned();
    }
    words
        .iter()
        .enumerate()
        .map(|(i, &w)| if i > 0 && LINKS.contains(&w) { w.to_owned() } else { capitalised(w) })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A count of things as a `u32` (counts here are small; a huge one reads as the largest).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
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
        narrate(effect, &names(), &Board::embedded())
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
            "Five cards were put back in the box: a Franconia / Aragon card, a Bavaria / Burgundy card, \
             a Lotharingia / Italy card, an England / Swabia card and a France card"
        );
        let three = Effect::CardsRemoved { cards: vec![FA, FA, FR, FR] };
        assert_eq!(say(&three), "Four cards were put back in the box: two Franconia / Aragon cards and two France cards");
        assert_eq!(say(&Effect::CardsRemoved { cards: Vec::new() }), "No card was put back in the box");
    }

    /// KK-7.
    #[test]
    fn dealt_lists_a_visible_hand_only() {
        let seen = Effect::Dealt { seat: Seat(0), cards: Some(vec![FR, FR, ES]) };
        assert_eq!(say(&seen), "Ann was dealt two France cards and an England / Swabia card");
        let hidden = Effect::Dealt { seat: Seat(0), cards: None };
        assert_eq!(say(&hidden), "Ann was dealt an opening hand");
    }

    #[test]
    fn display_refilled() {
        let e = Effect::DisplayRefilled { slot: 1, card: BB };
        assert_eq!(say(&e), "The second display slot was filled with a Bavaria / Burgundy card");
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
        assert_eq!(say(&abbey), "Ann placed an abbey at Cluny in Burgundy, paying with a Bavaria / Burgundy card");
        let counsellor =
            Effect::Placed { seat: Seat(1), piece: Piece::Counsellor, country: Country::Italy, site: None, paid_with: vec![FR, FR] };
        assert_eq!(say(&counsellor), "Bob placed a counsellor on the seal of Italy, paying with a joker of two France cards");
    }

    #[test]
    fn discarded() {
        assert_eq!(say(&Effect::Discarded { seat: Seat(1), card: ES }), "Bob discarded an England / Swabia card");
    }

    /// KK-18, KK-31.
    #[test]
    fn drew_from_deck_names_the_card_only_when_shown() {
        assert_eq!(say(&Effect::DrewFromDeck { seat: Seat(1), card: Some(FR) }), "Bob drew a France card from the deck");
        assert_eq!(say(&Effect::DrewFromDeck { seat: Seat(1), card: None }), "Bob drew a card from the deck");
    }

    #[test]
    fn took_from_display() {
        let e = Effect::TookFromDisplay { seat: Seat(2), slot: 0, card: FA };
        assert_eq!(say(&e), "Cid took the Franconia / Aragon card from the first display slot");
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
        assert_eq!(say(&e), "Ann could draw no more cards and kept a hand of two cards");
        let e = Effect::RefillStopped { seat: Seat(0), hand_size: 1 };
        assert_eq!(say(&e), "Ann could draw no more cards and kept a hand of one card");
    }

    /// KK-19, KK-20.
    #[test]
    fn deck_exhausted() {
        assert_eq!(say(&Effect::DeckExhausted { count: 1 }), "The deck ran out for the first time");
        assert_eq!(say(&Effect::DeckExhausted { count: 2 }), "The deck ran out for the second time: no more cards would be drawn");
        assert_eq!(say(&Effect::DeckExhausted { count: 3 }), "The deck ran out for the third time");
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
        assert_eq!(say(&bare), "Interim abbey scoring of no countries");
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
        let board = Board::embedded();
        let told = |effect: &Effect, viewer| narrate(&redact(effect, viewer, false), &names(), &board);
        let drew = Effect::DrewFromDeck { seat: Seat(1), card: Some(FR) };
        assert_eq!(told(&drew, Viewer::Spectator), "Bob drew a card from the deck");
        assert_eq!(told(&drew, Viewer::Seat(Seat(1))), "Bob drew a France card from the deck");
        let dealt = Effect::Dealt { seat: Seat(0), cards: Some(vec![FA, ES, BB]) };
        let hidden = told(&dealt, Viewer::Seat(Seat(2)));
        assert_eq!(hidden, "Ann was dealt an opening hand");
        for card in [FA, ES, BB] {
            assert!(!hidden.contains(&card_name(&board, card)) && !hidden.contains(card.id()));
        }
    }

    #[test]
    fn seats_without_a_name_read_as_seat_n() {
        let board = Board::embedded();
        assert_eq!(narrate(&Effect::TurnStarted { seat: Seat(4) }, &names(), &board), "seat 4's turn began");
        assert_eq!(narrate(&Effect::Passed { seat: Seat(0) }, &[], &board), "seat 0 passed");
        let e = Effect::InterimScoring { countries: Vec::new(), scores: vec![1, 2, 3, 4] };
        assert_eq!(narrate(&e, &names(), &board), "Interim abbey scoring: Ann 1, Bob 2, Cid 3, seat 3 4");
    }

    /// KK-1, KK-4: every card kind reads as the countries it names, never as its id.
    #[test]
    fn card_kinds_read_as_their_countries() {
        let board = Board::embedded();
        let names = CardKind::ALL.map(|k| card_name(&board, k));
        assert_eq!(names, ["Franconia / Aragon", "Bavaria / Burgundy", "Lotharingia / Italy", "England / Swabia", "France"]);
        for country in Country::ALL {
            assert_eq!(country_name(&board, country), rules_country_name(country));
        }
    }

    /// KK-3: a custom board's country names are the ones told, in cards too;
    /// a blank name falls back to the rules' name.
    #[test]
    fn a_custom_boards_names_are_used() {
        let mut board = Board::embedded();
        for info in &mut board.countries {
            match info.id {
                Country::England => info.name = "Angleterre".into(),
                Country::Burgundy => info.name = "Bourgogne".into(),
                Country::Bavaria => info.name = " ".into(),
                _ => {}
            }
        }
        let e = Effect::Placed {
            seat: Seat(0),
            piece: Piece::Abbey,
            country: Country::Burgundy,
            site: Some("cluny".into()),
            paid_with: vec![BB],
        };
        assert_eq!(narrate(&e, &names(), &board), "Ann placed an abbey at Cluny in Bourgogne, paying with a Bavaria / Bourgogne card");
        assert_eq!(narrate(&Effect::Discarded { seat: Seat(1), card: ES }, &names(), &board), "Bob discarded an Angleterre / Swabia card");
    }

    /// KK-14: sites read as names made from their ids; a name-like id stays as it is.
    #[test]
    fn sites_read_as_names() {
        let cases = [
            ("cluny", "Cluny"),
            ("saint-denis", "Saint Denis"),
            ("st-gallen", "St Gallen"),
            ("la-chaise-dieu", "La Chaise Dieu"),
            ("san-juan-de-la-pena", "San Juan de la Pena"),
            ("site_12", "Site 12"),
            ("Mont Saint-Michel", "Mont Saint-Michel"),
            ("münster", "münster"),
            ("-", "-"),
        ];
        for (id, want) in cases {
            assert_eq!(site_name(id), want, "{id}");
        }
        for site in &Board::embedded().sites {
            let name = site_name(&site.id);
            assert!(name.starts_with(|c: char| c.is_ascii_uppercase()) && !name.contains(['-', '_']), "{} reads {name}", site.id);
        }
    }
}
