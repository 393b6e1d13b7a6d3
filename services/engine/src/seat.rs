//! Seats and viewers.

use core::fmt;

/// A place at the table, numbered from 0 in clockwise order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(value_type = u8))]
pub struct Seat(pub u8);

impl Seat {
    /// The seat as an index into per-seat arrays.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The seat after this one, clockwise, at a table of `players` seats.
    #[must_use]
    pub const fn next(self, players: usize) -> Seat {
        Seat(((self.0 as usize + 1) % players) as u8)
    }

    /// All seats of a table of `players` seats, in order.
    pub fn all(players: usize) -> impl Iterator<Item = Seat> {
        (0..players).map(|i| Seat(i as u8))
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// Who is looking at a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// A player: sees what that seat may see at the table.
    Seat(Seat),
    /// Anyone without a seat: sees public information only.
    Spectator,
    /// Sees everything: used once a game is over (its whole record is then
    /// public) and by offline audits holding the seed.
    Omniscient,
}

impl Viewer {
    /// Whether this viewer may see what only `seat` may see.
    #[must_use]
    pub fn sees_private_of(self, seat: Seat) -> bool {
        match self {
            Viewer::Seat(s) => s == seat,
            Viewer::Spectator => false,
            Viewer::Omniscient => true,
        }
    }
}
