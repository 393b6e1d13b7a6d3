//! What a seat can submit, and the list of legal moves (CA-8, CA-10, CA-11).

use core::ops::ControlFlow;

use ludo_engine::Seat;

use crate::cell::{Cell, Orientation};
use crate::game::Game;
use crate::pieces::{Colour, Footprint, Shape};
use crate::town::neighbours_allow;

/// A move: a turn is a `build` followed by `move_cardinal` or `keep_cardinal` by the same seat.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "type", rename_all = "snake_case", deny_unknown_fields, from = "wire::MoveWire")
)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Move))]
pub enum Move {
    /// Build one building (CA-8); the markers it earns are taken automatically (CA-9).
    Build {
        /// The building's shape.
        shape: Shape,
        /// The building's colour: one the seat plays (CA-5/6/7).
        colour: Colour,
        /// Column of the building's cell (a square's west or south cell).
        x: i32,
        /// Row of the building's cell (a square's west or south cell).
        y: i32,
        /// Squares only (required for them, absent otherwise): horizontal covers (x, y) and (x + 1, y), vertical (x, y) and (x, y + 1).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        orientation: Option<Orientation>,
        /// The first building of the game only (required then, absent otherwise): colour of the bonus marker (CA-11).
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        bonus_colour: Option<Colour>,
    },
    /// After building, move the cardinal to a free building zone (CA-10); its current cell is refused (keep it instead).
    MoveCardinal {
        /// Column of the cardinal's new cell.
        x: i32,
        /// Row of the cardinal's new cell.
        y: i32,
    },
    /// After building, leave the cardinal where it stands (refused on the game's first turn, CA-10).
    KeepCardinal,
}

/// The JSON a [`Move`] is read from. Serde ignores extra fields next to the
/// tag of a unit variant (`{"type": "keep_cardinal", "x": 3}` would read as
/// keeping the cardinal), so `keep_cardinal` is read as an empty struct,
/// which does refuse them.
#[cfg(feature = "serde")]
mod wire {
    use super::{Colour, Move, Orientation, Shape};

    #[derive(serde::Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
    pub(super) enum MoveWire {
        Build {
            shape: Shape,
            colour: Colour,
            x: i32,
            y: i32,
            #[serde(default)]
            orientation: Option<Orientation>,
            #[serde(default)]
            bonus_colour: Option<Colour>,
        },
        MoveCardinal {
            x: i32,
            y: i32,
        },
        KeepCardinal {},
    }

    impl From<MoveWire> for Move {
        fn from(wire: MoveWire) -> Self {
            match wire {
                MoveWire::Build { shape, colour, x, y, orientation, bonus_colour } => {
                    Move::Build { shape, colour, x, y, orientation, bonus_colour }
                }
                MoveWire::MoveCardinal { x, y } => Move::MoveCardinal { x, y },
                MoveWire::KeepCardinal {} => Move::KeepCardinal,
            }
        }
    }
}

impl Move {
    /// A house of `colour` at (`x`, `y`).
    #[must_use]
    pub const fn house(colour: u8, x: i32, y: i32) -> Self {
        Move::Build { shape: Shape::House, colour: Colour(colour), x, y, orientation: None, bonus_colour: None }
    }

    /// A tower of `colour` at (`x`, `y`).
    #[must_use]
    pub const fn tower(colour: u8, x: i32, y: i32) -> Self {
        Move::Build { shape: Shape::Tower, colour: Colour(colour), x, y, orientation: None, bonus_colour: None }
    }

    /// A square of `colour` anchored at (`x`, `y`).
    #[must_use]
    pub const fn square(colour: u8, x: i32, y: i32, orientation: Orientation) -> Self {
        Move::Build { shape: Shape::Square, colour: Colour(colour), x, y, orientation: Some(orientation), bonus_colour: None }
    }

    /// This build move with the first player's bonus colour (CA-11); other moves are returned unchanged.
    #[must_use]
    pub fn with_bonus(mut self, colour: u8) -> Self {
        if let Move::Build { bonus_colour, .. } = &mut self {
            *bonus_colour = Some(Colour(colour));
        }
        self
    }

    /// Moving the cardinal to (`x`, `y`).
    #[must_use]
    pub const fn cardinal_to(x: i32, y: i32) -> Self {
        Move::MoveCardinal { x, y }
    }

    fn build(shape: Shape, colour: Colour, footprint: &Footprint, bonus_colour: Option<Colour>) -> Self {
        let anchor = footprint.anchor();
        Move::Build { shape, colour, x: anchor.x, y: anchor.y, orientation: footprint.orientation(), bonus_colour }
    }
}

impl Game {
    /// Calls `visit` with every legal placement of `seat` (without the bonus
    /// colour), in a fixed order: one-cell placements by cell, then squares.
    ///
    /// Candidates come from the building zones only (CA-12 needs contact), so
    /// the work grows with the town's border, not with the grid.
    pub(crate) fn each_placement(
        &self,
        seat: Seat,
        mut visit: impl FnMut(Shape, Colour, &Footprint) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let (last_shape, last_colour) = match self.last_built {
            Some((shape, colour)) => (Some(shape), Some(colour)),
            None => (None, None),
        };
        let mut colours = [Colour(0); Colour::COUNT];
        let mut n_colours = 0;
        for colour in self.table.buildable(seat).filter(|&c| Some(c) != last_colour && self.stock.any_left(c)) {
            colours[n_colours] = colour;
            n_colours += 1;
        }
        let colours = &colours[..n_colours];
        let shape_open = |shape: Shape| Some(shape) != last_shape && colours.iter().any(|&c| self.stock.left(c, shape) > 0);
        let mut try_all = |shapes: &[Shape], footprint: &Footprint| -> ControlFlow<()> {
            let contacts = self.town.contacts(footprint);
            for &shape in shapes.iter().filter(|&&s| shape_open(s)) {
                for &colour in colours {
                    if self.stock.left(colour, shape) > 0 && neighbours_allow(shape, colour, &contacts) {
                        visit(shape, colour, footprint)?;
                    }
                }
            }
            ControlFlow::Continue(())
        };
        if colours.is_empty() {
            return ControlFlow::Continue(());
        }
        let zones = self.town.zones();
        if shape_open(Shape::House) || shape_open(Shape::Tower) {
            for &zone in zones.iter().filter(|&&z| Some(z) != self.cardinal) {
                try_all(&[Shape::House, Shape::Tower], &Footprint::single(zone))?;
            }
        }
        if shape_open(Shape::Square) {
            let mut anchors: Vec<(Cell, Orientation)> = Vec::with_capacity(zones.len() * 4);
            for &zone in &zones {
                for orientation in Orientation::ALL {
                    let (dx, dy) = orientation.step();
                    anchors.push((zone, orientation));
                    if let Some(before) = zone.offset(-dx, -dy) {
                        anchors.push((before, orientation));
                    }
                }
            }
            anchors.sort_unstable();
            anchors.dedup();
            for (anchor, orientation) in anchors {
                let Some(footprint) = Footprint::square(anchor, orientation) else {
                    continue;
                };
                if footprint.cells().iter().all(|&c| !self.town.is_occupied(c) && Some(c) != self.cardinal) {
                    try_all(&[Shape::Square], &footprint)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Whether `seat` has any legal placement (CA-20).
    pub(crate) fn can_build(&self, seat: Seat) -> bool {
        self.each_placement(seat, |_, _, _| ControlFlow::Break(())).is_break()
    }

    /// Every build move of `seat`, with each bonus colour on the game's first building (CA-11).
    pub(crate) fn build_moves(&self, seat: Seat) -> Vec<Move> {
        let bonus_colours: Vec<Option<Colour>> = if self.town.buildings().is_empty() {
            Colour::ALL.into_iter().filter(|&c| self.table.counts(c)).map(Some).collect()
        } else {
            vec![None]
        };
        let mut moves = Vec::new();
        let _ = self.each_placement(seat, |shape, colour, footprint| {
            moves.extend(bonus_colours.iter().map(|&bonus| Move::build(shape, colour, footprint, bonus)));
            ControlFlow::Continue(())
        });
        moves
    }

    /// The cardinal moves after a build: keep it (except on the first turn), or any other free zone (CA-10).
    pub(crate) fn cardinal_moves(&self) -> Vec<Move> {
        let keep = self.cardinal.is_some().then_some(Move::KeepCardinal);
        let moves = self.town.zones().into_iter().filter(|&z| Some(z) != self.cardinal).map(|z| Move::cardinal_to(z.x, z.y));
        keep.into_iter().chain(moves).collect()
    }
}
