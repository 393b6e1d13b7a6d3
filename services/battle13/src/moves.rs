//! What a seat can submit.

use crate::bidding::{BidCard, FamilyCard};
use crate::knights::Knight;

/// A move a seat submits. Any value parses; the engine then accepts it or
/// refuses it with the rule it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "type", rename_all = "snake_case", deny_unknown_fields, from = "wire::MoveWire")
)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Move))]
pub enum Move {
    /// Lay a bid card face up in the talking rounds (B13-10 … B13-12).
    Bid {
        /// The card laid.
        card: BidCard,
    },
    /// Pass in the talking rounds (not final; refused on the opener's first call).
    Pass,
    /// The master chooses the favoured family, Neutral for none (B13-15).
    ChooseFamily {
        /// The family card chosen.
        family: FamilyCard,
    },
    /// An opponent of the master activates the Chaos card (B13-16).
    Chaos,
    /// An opponent of the master declines to activate the Chaos card (B13-16).
    DeclineChaos,
    /// Play a knight in the current tournament: your own, or, for the master
    /// on the servant's turn, one of the servant's (B13-18).
    Play {
        /// The knight played.
        knight: Knight,
    },
}

/// The JSON a [`Move`] is read from. Serde ignores extra fields next to the
/// tag of a unit variant (`{"type": "pass", "card": …}` would read as a
/// pass), so the unit moves are read as empty structs, which do refuse them.
#[cfg(feature = "serde")]
mod wire {
    use super::{BidCard, FamilyCard, Knight, Move};

    #[derive(serde::Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
    pub(super) enum MoveWire {
        Bid { card: BidCard },
        Pass {},
        ChooseFamily { family: FamilyCard },
        Chaos {},
        DeclineChaos {},
        Play { knight: Knight },
    }

    impl From<MoveWire> for Move {
        fn from(wire: MoveWire) -> Self {
            match wire {
                MoveWire::Bid { card } => Move::Bid { card },
                MoveWire::Pass {} => Move::Pass,
                MoveWire::ChooseFamily { family } => Move::ChooseFamily { family },
                MoveWire::Chaos {} => Move::Chaos,
                MoveWire::DeclineChaos {} => Move::DeclineChaos,
                MoveWire::Play { knight } => Move::Play { knight },
            }
        }
    }
}
