//! What a seat may submit.

use crate::cards::CardKind;
use crate::country::{Country, Piece};

/// A move: one step of a turn (placing, each single draw, an exchange, a pass).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)
)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Move))]
pub enum Move {
    /// Play 1–3 cards to place 1 or 2 pieces, in the listed order (KK-9, KK-11..KK-17).
    /// Afterwards the same seat draws card by card until the hand holds 3.
    Place {
        /// The pieces, placed in this order (KK-16); one or two.
        pieces: Vec<Placement>,
    },
    // `DrawDeck {}` and `Pass {}` are struct variants without fields, not unit
    // variants: serde ignores `deny_unknown_fields` on unit variants of a tagged enum.
    /// Draw the top card of the deck while refilling the hand (KK-18).
    DrawDeck {},
    /// Take a face-up display card while refilling the hand (KK-18).
    TakeDisplay {
        /// The display slot, 0 or 1.
        slot: u8,
    },
    /// Discard one card and take the deck's top card or a display card (KK-10).
    Exchange {
        /// The card kind to discard from the hand.
        discard: CardKind,
        /// Where the new card comes from.
        take: Source,
    },
    /// Place nothing; only in the last round, after the second exhaustion (KK-20).
    Pass {},
}

/// One piece of a [`Move::Place`] and the cards paying for it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Placement))]
pub struct Placement {
    /// Abbey or counsellor.
    pub piece: Piece,
    /// The country the piece goes into.
    pub country: Country,
    /// The monastery site, for an abbey (KK-14); absent for a counsellor (it goes on the seal).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub site: Option<String>,
    /// The payment (KK-11): one card naming `country`, or two cards of one kind (a joker).
    pub paid_with: Vec<CardKind>,
}

/// Where an exchanged card is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Source))]
pub enum Source {
    /// The top card of the deck (hidden until drawn).
    #[cfg_attr(feature = "serde", serde(rename = "deck"))]
    Deck,
    /// Display slot 0.
    #[cfg_attr(feature = "serde", serde(rename = "display_0"))]
    Display0,
    /// Display slot 1.
    #[cfg_attr(feature = "serde", serde(rename = "display_1"))]
    Display1,
}

impl Source {
    /// The display slot this source names, if any.
    #[must_use]
    pub const fn slot(self) -> Option<u8> {
        match self {
            Source::Deck => None,
            Source::Display0 => Some(0),
            Source::Display1 => Some(1),
        }
    }

    /// The source for display slot `slot` (0 or 1).
    #[must_use]
    pub const fn display(slot: u8) -> Source {
        if slot == 0 { Source::Display0 } else { Source::Display1 }
    }
}

impl Placement {
    /// An abbey on `site` in `country`, paid with `paid_with`.
    #[must_use]
    pub fn abbey(country: Country, site: impl Into<String>, paid_with: &[CardKind]) -> Placement {
        Placement { piece: Piece::Abbey, country, site: Some(site.into()), paid_with: paid_with.to_vec() }
    }

    /// A counsellor on the seal of `country`, paid with `paid_with`.
    #[must_use]
    pub fn counsellor(country: Country, paid_with: &[CardKind]) -> Placement {
        Placement { piece: Piece::Counsellor, country, site: None, paid_with: paid_with.to_vec() }
    }
}
