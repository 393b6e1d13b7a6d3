//! Cells of the unbounded grid the town grows on (CA-3).

use core::hash::{BuildHasherDefault, Hasher};
use std::collections::HashMap;

/// One square of the grid: x grows east, y grows north; the cathedral's nave is at (0, 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Cell))]
pub struct Cell {
    /// Column, growing east.
    pub x: i32,
    /// Row, growing north.
    pub y: i32,
}

impl Cell {
    /// The cell at (`x`, `y`).
    #[must_use]
    pub const fn new(x: i32, y: i32) -> Self {
        Cell { x, y }
    }

    /// The cell `dx` east and `dy` north of this one, if it is on the grid
    /// (coordinates come from clients and may sit at the `i32` limits).
    #[must_use]
    pub fn offset(self, dx: i32, dy: i32) -> Option<Cell> {
        Some(Cell { x: self.x.checked_add(dx)?, y: self.y.checked_add(dy)? })
    }

    /// The up to four cells sharing an edge with this one.
    pub fn neighbours(self) -> impl Iterator<Item = Cell> {
        [(1, 0), (-1, 0), (0, 1), (0, -1)].into_iter().filter_map(move |(dx, dy)| self.offset(dx, dy))
    }

    /// Whether `other` shares an edge with this cell.
    #[must_use]
    pub fn touches(self, other: Cell) -> bool {
        let dx = (i64::from(self.x) - i64::from(other.x)).abs();
        let dy = (i64::from(self.y) - i64::from(other.y)).abs();
        dx + dy == 1
    }
}

/// How a square (two cells) lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Orientation))]
pub enum Orientation {
    /// Covers (x, y) and (x + 1, y).
    Horizontal,
    /// Covers (x, y) and (x, y + 1).
    Vertical,
}

impl Orientation {
    /// Both orientations, in a fixed order.
    pub const ALL: [Orientation; 2] = [Orientation::Horizontal, Orientation::Vertical];

    /// The step from a square's anchor cell to its second cell.
    #[must_use]
    pub const fn step(self) -> (i32, i32) {
        match self {
            Orientation::Horizontal => (1, 0),
            Orientation::Vertical => (0, 1),
        }
    }
}

/// A map keyed by cell with a fixed, fast hash. std's default hasher is
/// seeded per map (and SipHash is slow for two integers); this map is only
/// ever looked up, never iterated into an output, so order cannot leak.
pub(crate) type CellMap<V> = HashMap<Cell, V, BuildHasherDefault<CellHasher>>;

/// Multiply-rotate hash in the style of rustc's FxHasher.
#[derive(Default)]
pub(crate) struct CellHasher(u64);

impl CellHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    fn write_i32(&mut self, i: i32) {
        self.add(u64::from(i as u32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_stop_at_the_edge_of_i32() {
        assert_eq!(Cell::new(0, 0).neighbours().count(), 4);
        assert_eq!(Cell::new(i32::MAX, i32::MIN).neighbours().count(), 2);
    }

    #[test]
    fn touches_is_edge_adjacency_only() {
        let c = Cell::new(3, -2);
        assert!(c.touches(Cell::new(4, -2)));
        assert!(c.touches(Cell::new(3, -1)));
        assert!(!c.touches(Cell::new(4, -1)), "diagonal is no edge");
        assert!(!c.touches(c));
        assert!(!Cell::new(i32::MIN, 0).touches(Cell::new(i32::MAX, 0)));
    }
}
