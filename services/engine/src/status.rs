//! Where a game stands.

use crate::Seat;

/// Whose turn it is, or how the game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(tag = "state", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub enum Status {
    /// The game goes on; these seats may act now.
    InProgress {
        /// Seats whose move is awaited (usually exactly one).
        to_move: Vec<Seat>,
    },
    /// The game is over.
    Finished {
        /// Final scores and winners.
        result: Outcome,
    },
}

impl Status {
    /// Whether the game is over.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        matches!(self, Status::Finished { .. })
    }

    /// Seats that may act now (none once the game is over).
    #[must_use]
    pub fn to_move(&self) -> &[Seat] {
        match self {
            Status::InProgress { to_move } => to_move,
            Status::Finished { .. } => &[],
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Outcome {
    /// Final score of each seat, indexed by seat.
    pub scores: Vec<i32>,
    /// The winning seats (more than one on a shared win or a draw).
    pub winners: Vec<Seat>,
}
