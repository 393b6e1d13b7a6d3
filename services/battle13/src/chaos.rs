//! The Chaos card (B13-16): the master's opponents may activate it before
//! the first tournament; it doubles the stakes (B13-23).

use ludo_engine::Seat;

use crate::knights::SEATS;

/// The Chaos decision of a joust (B13-16).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Chaos))]
pub struct Chaos {
    /// Opponents who declined to activate it, in the order they decided.
    pub declined: Vec<Seat>,
    /// The opponent who activated it, if one did.
    pub activated_by: Option<Seat>,
}

impl Chaos {
    /// Whether the Chaos card is active.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.activated_by.is_some()
    }
}

/// The opponent who decides first: the one on the master's left (B13-16).
pub(crate) fn first_to_decide(master: Seat) -> Seat {
    master.next(SEATS)
}

/// The opponent who decides after the first declined: the master's right.
pub(crate) fn second_to_decide(master: Seat) -> Seat {
    master.next(SEATS).next(SEATS).next(SEATS)
}
