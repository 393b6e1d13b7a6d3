//! The components: shapes, colours and the buildings made of them (CA-1).

use ludo_engine::Seat;

use crate::cell::{Cell, Orientation};

/// The form of a building (CA-1); the cathedral's cells count as a house and a tower (CA-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Shape))]
pub enum Shape {
    /// One cell; towers and squares must touch one.
    House,
    /// One cell; must touch a house.
    Tower,
    /// Two cells (a "place"); must touch a house.
    Square,
}

impl Shape {
    /// Every shape, in a fixed order.
    pub const ALL: [Shape; 3] = [Shape::House, Shape::Tower, Shape::Square];

    /// The shape as an index into per-shape arrays.
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The shape's name, as in the JSON.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Shape::House => "house",
            Shape::Tower => "tower",
            Shape::Square => "square",
        }
    }

    /// Cells a building of this shape covers.
    #[must_use]
    pub const fn size(self) -> usize {
        match self {
            Shape::Square => 2,
            Shape::House | Shape::Tower => 1,
        }
    }

    pub(crate) const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// One of the four colours, 0 to 3 (CA-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(value_type = u8, as = cardinal::Colour))]
pub struct Colour(pub u8);

impl Colour {
    /// How many colours the game has.
    pub const COUNT: usize = 4;
    /// Every colour, in order.
    pub const ALL: [Colour; 4] = [Colour(0), Colour(1), Colour(2), Colour(3)];
    /// The colour nobody owns at three players (CA-6).
    pub const FOURTH: Colour = Colour(3);

    /// The colour as an index into per-colour arrays.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Whether this names one of the four colours.
    #[must_use]
    pub const fn exists(self) -> bool {
        (self.0 as usize) < Self::COUNT
    }

    pub(crate) const fn bit(self) -> u8 {
        1 << self.0
    }
}

impl core::fmt::Display for Colour {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "colour {}", self.0)
    }
}

/// Buildings of each shape every colour starts with (CA-1).
pub const BUILDINGS_PER_SHAPE: u8 = 2;

/// A building standing in the town.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Building))]
pub struct Building {
    /// The seat that built it.
    pub seat: Seat,
    /// Its shape.
    pub shape: Shape,
    /// Its colour.
    pub colour: Colour,
    /// The cells it covers: one, or two for a square (anchor cell first).
    pub cells: Vec<Cell>,
}

/// The cells a building would cover, computed without overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Footprint {
    cells: [Cell; 2],
    len: u8,
}

impl Footprint {
    /// A one-cell footprint.
    pub(crate) const fn single(cell: Cell) -> Self {
        Footprint { cells: [cell, cell], len: 1 }
    }

    /// A square anchored at `cell`; `None` when its second cell is off the grid.
    pub(crate) fn square(cell: Cell, orientation: Orientation) -> Option<Self> {
        let (dx, dy) = orientation.step();
        Some(Footprint { cells: [cell, cell.offset(dx, dy)?], len: 2 })
    }

    pub(crate) fn cells(&self) -> &[Cell] {
        &self.cells[..usize::from(self.len)]
    }

    pub(crate) fn anchor(&self) -> Cell {
        self.cells[0]
    }

    /// The orientation of a square's footprint (`None` for one cell).
    pub(crate) fn orientation(&self) -> Option<Orientation> {
        if self.len == 1 {
            None
        } else if self.cells[1].x == self.cells[0].x {
            Some(Orientation::Vertical)
        } else {
            Some(Orientation::Horizontal)
        }
    }
}

/// Buildings not yet built, per colour and shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Stock([[u8; 3]; Colour::COUNT]);

impl Stock {
    pub(crate) const fn full() -> Self {
        Stock([[BUILDINGS_PER_SHAPE; 3]; Colour::COUNT])
    }

    pub(crate) fn left(&self, colour: Colour, shape: Shape) -> u8 {
        self.0[colour.index()][shape.index()]
    }

    pub(crate) fn any_left(&self, colour: Colour) -> bool {
        self.0[colour.index()].iter().any(|&n| n > 0)
    }

    pub(crate) fn take(&mut self, colour: Colour, shape: Shape) {
        self.0[colour.index()][shape.index()] -= 1;
    }
}
