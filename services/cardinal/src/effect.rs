//! What happened, for a log reader (Cardinal has no hidden information).

use ludo_engine::Seat;

use crate::cell::Cell;
use crate::markers::MarkerCount;
use crate::pieces::{Colour, Shape};
use crate::scoring::Scoring;

/// Something that happened when the game was created or a move was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(tag = "type", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Effect))]
pub enum Effect {
    /// The game was set up; this seat builds first.
    GameStarted {
        /// The first player (option `first_seat`, or drawn from the seed).
        first_seat: Seat,
    },
    /// A building was built and its markers taken (CA-8, CA-9, CA-11).
    Built {
        /// The seat that built.
        seat: Seat,
        /// The building's shape.
        shape: Shape,
        /// The building's colour.
        colour: Colour,
        /// The cells it covers (a square's anchor cell first).
        cells: Vec<Cell>,
        /// Markers taken for the edges shared with other buildings, per colour (colours with none are left out).
        markers_taken: Vec<MarkerCount>,
        /// On the game's first building: the colour of the bonus marker taken (CA-11).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        bonus_colour: Option<Colour>,
    },
    /// The seat that built moved the cardinal (CA-10).
    CardinalMoved {
        /// The seat that moved it.
        seat: Seat,
        /// Column of the cardinal's new cell.
        x: i32,
        /// Row of the cardinal's new cell.
        y: i32,
    },
    /// The seat that built left the cardinal where it was (CA-10).
    CardinalKept {
        /// The seat that kept it.
        seat: Seat,
    },
    /// The seat could not build and was passed by the server (CA-20).
    ForcedPass {
        /// The seat passed over.
        seat: Seat,
    },
    /// Nobody can build any more: the game is over (CA-21) with this final scoring (CA-22 … CA-24).
    GameEnded {
        /// The final scores and winners.
        scoring: Scoring,
    },
}
