//! What happened: the effects of the set-up and of each move, for a log
//! reader and a step-by-step replay viewer.

use ludo_engine::{Seat, Viewer};

use crate::cards::CardKind;
use crate::country::{Country, Piece};
use crate::scoring::{CountryScoring, FinalScoring};

/// One thing that happened. Effects carrying a hidden card hold it in an
/// `Option` that redaction blanks for anyone but the card's owner.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(tag = "type", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Effect))]
pub enum Effect {
    /// Cards put back in the box before shuffling (KK-6: 4 players one per kind, 3 players two).
    CardsRemoved {
        /// The removed cards (public: the same for every game of this size).
        cards: Vec<CardKind>,
    },
    /// A seat was dealt its opening hand (KK-7). Private to that seat.
    Dealt {
        /// The seat.
        seat: Seat,
        /// The three cards; `null` when hidden from the viewer.
        cards: Option<Vec<CardKind>>,
    },
    /// A display slot was filled from the deck (at set-up, and after each turn, KK-9/KK-10).
    DisplayRefilled {
        /// The slot, 0 or 1.
        slot: u8,
        /// The card turned face up.
        card: CardKind,
    },
    /// The first seat, which keeps the black token (KK-8).
    FirstSeat {
        /// The seat.
        seat: Seat,
        /// Whether it was drawn from the seed (`false`: chosen in the options).
        drawn: bool,
    },
    /// A seat placed a piece (KK-14/KK-15); its payment goes face up on the discard pile.
    Placed {
        /// The seat.
        seat: Seat,
        /// Abbey or counsellor.
        piece: Piece,
        /// The country.
        country: Country,
        /// The site, for an abbey.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        site: Option<String>,
        /// The cards paid (public).
        paid_with: Vec<CardKind>,
    },
    /// A seat discarded a card to exchange it (KK-10).
    Discarded {
        /// The seat.
        seat: Seat,
        /// The card, face up on the discard pile.
        card: CardKind,
    },
    /// A seat drew the deck's top card (KK-10, KK-18). Private to that seat.
    DrewFromDeck {
        /// The seat.
        seat: Seat,
        /// The card; `null` when hidden from the viewer.
        card: Option<CardKind>,
    },
    /// A seat took a face-up display card (public).
    TookFromDisplay {
        /// The seat.
        seat: Seat,
        /// The slot taken from.
        slot: u8,
        /// The card.
        card: CardKind,
    },
    /// A seat passed in the last round (KK-20).
    Passed {
        /// The seat.
        seat: Seat,
    },
    /// A seat's refill stopped short because no card can be drawn any more (KK-22).
    RefillStopped {
        /// The seat.
        seat: Seat,
        /// Cards left in its hand.
        hand_size: u8,
    },
    /// The deck ran out (KK-19: first time, KK-20: second time).
    DeckExhausted {
        /// 1 or 2.
        count: u8,
    },
    /// The interim abbey scoring (KK-19, KK-24), country by country in the board's order.
    InterimScoring {
        /// Each country's scoring.
        countries: Vec<CountryScoring>,
        /// Every seat's score after it, indexed by seat.
        scores: Vec<i32>,
    },
    /// The discard pile was shuffled into a new deck (KK-19).
    Reshuffled {
        /// Cards in the new deck.
        deck_size: u32,
    },
    /// The last round began (KK-20): no more drawing; the game ends before `ends_before` plays again.
    LastRound {
        /// The first seat: the game ends when its turn comes round.
        ends_before: Seat,
    },
    /// A seat's turn began.
    TurnStarted {
        /// The seat.
        seat: Seat,
    },
    /// The game ended; the final scoring in full.
    GameEnded {
        /// Why it ended.
        reason: EndReason,
        /// Every figure of the final scoring.
        scoring: FinalScoring,
    },
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::EndReason))]
pub enum EndReason {
    /// The last round after the second exhaustion is over (KK-20).
    LastRoundOver,
    /// No piece can be placed any more by anyone (KK-21).
    NoPlacementLeft,
}

/// `effect` with the cards `viewer` may not see blanked (`reveal_all`: the game is over).
pub(crate) fn redact(effect: &Effect, viewer: Viewer, reveal_all: bool) -> Effect {
    if reveal_all {
        return effect.clone();
    }
    match effect {
        Effect::Dealt { seat, .. } if !viewer.sees_private_of(*seat) => Effect::Dealt { seat: *seat, cards: None },
        Effect::DrewFromDeck { seat, .. } if !viewer.sees_private_of(*seat) => Effect::DrewFromDeck { seat: *seat, card: None },
        other => other.clone(),
    }
}
