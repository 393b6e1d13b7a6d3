//! The state as anyone sees it: everything in Cardinal is public.

use ludo_engine::Seat;

use crate::cell::Cell;
use crate::game::{Game, Turn};
use crate::markers::{MarkerCount, per_colour};
use crate::pieces::{Building, Colour, Shape};
use crate::scoring::Scoring;
use crate::town::{CATHEDRAL_TOWER, NAVE};

/// The whole public state of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::View))]
pub struct View {
    /// Number of seats (2 to 4).
    pub players: u8,
    /// The seat that played first.
    pub first_seat: Seat,
    /// Each seat's colours and takings, in seat order.
    pub seats: Vec<SeatView>,
    /// The colour anyone may build and nobody scores (three players only, CA-6).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub fourth_colour: Option<Colour>,
    /// Where the cathedral stands (CA-3).
    pub cathedral: Cathedral,
    /// Every building, in the order built.
    pub buildings: Vec<Building>,
    /// The cardinal's cell; absent until the first player places it (CA-10).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub cardinal: Option<Cell>,
    /// Markers left in the supply, one entry per colour in colour order (CA-2).
    pub supply: Vec<MarkerCount>,
    /// Buildings not yet built, one entry per colour in colour order (CA-1).
    pub buildings_left: Vec<BuildingsLeft>,
    /// Shape and colour of the last building, which the next one must differ from (CA-17, CA-18).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub last_built: Option<LastBuilt>,
    /// What the seat to act does next.
    pub phase: Phase,
    /// The seat to act; absent once the game is over.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub to_act: Option<Seat>,
    /// Scores and winners: final once the game is over, provisional before (CA-22 … CA-24).
    pub scoring: Scoring,
}

/// One seat's colours and the markers it has taken.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::SeatView))]
pub struct SeatView {
    /// The seat.
    pub seat: Seat,
    /// The colours it owns and scores (CA-5, CA-6, CA-7).
    pub colours: Vec<Colour>,
    /// Markers it has taken so far, one entry per colour in colour order.
    pub markers_taken: Vec<MarkerCount>,
}

/// The cathedral's two cells (CA-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Cathedral))]
pub struct Cathedral {
    /// The nave: counts as a house.
    pub nave: Cell,
    /// The tower: counts as a tower.
    pub tower: Cell,
}

/// How many buildings of one colour are left, per shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::BuildingsLeft))]
pub struct BuildingsLeft {
    /// The colour.
    pub colour: Colour,
    /// Houses left (of 2).
    pub houses: u32,
    /// Towers left (of 2).
    pub towers: u32,
    /// Squares left (of 2).
    pub squares: u32,
}

/// The last building's shape and colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::LastBuilt))]
pub struct LastBuilt {
    /// Its shape: the next building needs another (law 6).
    pub shape: Shape,
    /// Its colour: the next building needs another (law 7).
    pub colour: Colour,
}

/// The step of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Phase))]
pub enum Phase {
    /// The seat to act must submit a `build` move.
    Build,
    /// The seat to act has built and submits `move_cardinal` or `keep_cardinal`.
    Cardinal,
    /// Nobody can build any more: the game is over.
    Finished,
}

impl View {
    pub(crate) fn of(game: &Game) -> View {
        let table = game.table;
        let (phase, to_act) = match game.turn {
            Turn::Build(seat) => (Phase::Build, Some(seat)),
            Turn::Cardinal(seat) => (Phase::Cardinal, Some(seat)),
            Turn::Over => (Phase::Finished, None),
        };
        View {
            players: table.players() as u8,
            first_seat: game.first_seat,
            seats: Seat::all(table.players())
                .map(|seat| SeatView { seat, colours: table.own_colours(seat), markers_taken: per_colour(game.markers.taken(seat)) })
                .collect(),
            fourth_colour: table.fourth_colour(),
            cathedral: Cathedral { nave: NAVE, tower: CATHEDRAL_TOWER },
            buildings: game.town.buildings().to_vec(),
            cardinal: game.cardinal,
            supply: per_colour(game.markers.supply()),
            buildings_left: Colour::ALL
                .iter()
                .map(|&colour| BuildingsLeft {
                    colour,
                    houses: u32::from(game.stock.left(colour, Shape::House)),
                    towers: u32::from(game.stock.left(colour, Shape::Tower)),
                    squares: u32::from(game.stock.left(colour, Shape::Square)),
                })
                .collect(),
            last_built: game.last_built.map(|(shape, colour)| LastBuilt { shape, colour }),
            phase,
            to_act,
            scoring: game.scoring(),
        }
    }
}
