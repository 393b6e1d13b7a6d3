//! The opening check (B13-9): who holds 12 weapons or more, from the first
//! player clockwise.

use ludo_engine::Seat;

use crate::knights::{Knight, SEATS, weapons};

/// Weapons a player must hold to open the bidding (B13-9).
pub const OPENING_WEAPONS: u32 = 12;

/// One statement of the opening check, made by the server for a seat (B13-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::OpeningAnswer))]
pub struct OpeningAnswer {
    /// The seat the statement is about.
    pub seat: Seat,
    /// Whether that seat holds 12 weapons or more (the first "yes" opens the bidding).
    pub twelve_weapons: bool,
}

/// The statements of the opening check from `first` clockwise, stopping at
/// the first "yes" (only those become public), and the opener if any.
pub(crate) fn opening_check(hands: &[Vec<Knight>; SEATS], first: Seat) -> (Vec<OpeningAnswer>, Option<Seat>) {
    let mut answers = Vec::with_capacity(SEATS);
    let mut seat = first;
    for _ in 0..SEATS {
        let yes = weapons(&hands[seat.index()]) >= OPENING_WEAPONS;
        answers.push(OpeningAnswer { seat, twelve_weapons: yes });
        if yes {
            return (answers, Some(seat));
        }
        seat = seat.next(SEATS);
    }
    (answers, None)
}
