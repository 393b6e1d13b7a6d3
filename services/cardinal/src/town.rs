//! The town: the cathedral, the buildings around it, and the placement laws
//! (CA-3, CA-12 … CA-16, CA-19).

use ludo_engine::{MoveError, Seat};

use crate::cell::{Cell, CellMap};
use crate::pieces::{Building, Colour, Footprint, Shape};

/// The cathedral's nave: counts as a house (CA-3).
pub const NAVE: Cell = Cell::new(0, 0);
/// The cathedral's tower: counts as a tower (CA-3).
pub const CATHEDRAL_TOWER: Cell = Cell::new(1, 0);

/// What stands on an occupied cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    shape: Shape,
    /// `None` for the cathedral, which has no colour (CA-3).
    colour: Option<Colour>,
}

/// What a footprint's cells touch: everything the placement laws and the
/// markers need, gathered in one pass over its neighbours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Contacts {
    /// Bit set of the shapes touched (cathedral included).
    shapes: u8,
    /// Bit set of the colours touched.
    colours: u8,
    /// Unit edges shared with the cathedral.
    pub(crate) cathedral_edges: u8,
    /// Unit edges shared with buildings, per colour.
    pub(crate) edges_by_colour: [u8; Colour::COUNT],
}

impl Contacts {
    pub(crate) fn touches_anything(&self) -> bool {
        self.shapes != 0
    }

    fn touches_shape(&self, shape: Shape) -> bool {
        self.shapes & shape.bit() != 0
    }

    fn touches_colour(&self, colour: Colour) -> bool {
        self.colours & colour.bit() != 0
    }
}

/// The cathedral and the buildings, with a cell index for the laws.
///
/// With the `serde` feature it reads and writes as its buildings only
/// (`{"buildings": [...]}`); reading rebuilds the cell index, refusing
/// buildings that overlap or do not have their shape's cells.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(into = "wire::TownWire", try_from = "wire::TownWire"))]
pub(crate) struct Town {
    /// In build order; never moved or removed (CA-19).
    buildings: Vec<Building>,
    occupied: CellMap<Piece>,
}

impl Town {
    pub(crate) fn new() -> Self {
        let mut occupied = CellMap::default();
        occupied.insert(NAVE, Piece { shape: Shape::House, colour: None });
        occupied.insert(CATHEDRAL_TOWER, Piece { shape: Shape::Tower, colour: None });
        Town { buildings: Vec::new(), occupied }
    }

    pub(crate) fn buildings(&self) -> &[Building] {
        &self.buildings
    }

    pub(crate) fn is_occupied(&self, cell: Cell) -> bool {
        self.occupied.contains_key(&cell)
    }

    /// A free cell sharing an edge with the cathedral or a building.
    pub(crate) fn is_zone(&self, cell: Cell) -> bool {
        !self.is_occupied(cell) && cell.neighbours().any(|n| self.is_occupied(n))
    }

    /// Every building zone, sorted (the cardinal is not taken into account).
    pub(crate) fn zones(&self) -> Vec<Cell> {
        let occupied = [NAVE, CATHEDRAL_TOWER].into_iter().chain(self.buildings.iter().flat_map(|b| b.cells.iter().copied()));
        let mut zones: Vec<Cell> = occupied.flat_map(Cell::neighbours).filter(|&c| !self.is_occupied(c)).collect();
        zones.sort_unstable();
        zones.dedup();
        zones
    }

    /// What the cells of `footprint` touch, outside the footprint itself.
    pub(crate) fn contacts(&self, footprint: &Footprint) -> Contacts {
        let mut contacts = Contacts::default();
        for &cell in footprint.cells() {
            for n in cell.neighbours() {
                let Some(piece) = self.occupied.get(&n) else {
                    continue;
                };
                contacts.shapes |= piece.shape.bit();
                match piece.colour {
                    Some(colour) => {
                        contacts.colours |= colour.bit();
                        contacts.edges_by_colour[colour.index()] += 1;
                    }
                    None => contacts.cathedral_edges += 1,
                }
            }
        }
        contacts
    }

    /// Unit edges between the cathedral and buildings of the given colours (CA-24 tie-break).
    pub(crate) fn cathedral_edges(&self, colours: &[Colour]) -> u32 {
        let cathedral = [NAVE, CATHEDRAL_TOWER];
        self.buildings
            .iter()
            .filter(|b| colours.contains(&b.colour))
            .flat_map(|b| b.cells.iter())
            .map(|&cell| cathedral.iter().filter(|&&c| c.touches(cell)).count() as u32)
            .sum()
    }

    /// Adds an already-checked building (CA-19: it stays forever).
    pub(crate) fn add(&mut self, seat: Seat, shape: Shape, colour: Colour, footprint: &Footprint) {
        for &cell in footprint.cells() {
            let previous = self.occupied.insert(cell, Piece { shape, colour: Some(colour) });
            debug_assert!(previous.is_none(), "built over {cell:?}");
        }
        self.buildings.push(Building { seat, shape, colour, cells: footprint.cells().to_vec() });
    }
}

/// The JSON form of a [`Town`]: the buildings in build order.
#[cfg(feature = "serde")]
mod wire {
    use crate::cell::Orientation;
    use crate::pieces::{Building, Footprint, Shape};

    use super::Town;

    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct TownWire {
        buildings: Vec<Building>,
    }

    impl From<Town> for TownWire {
        fn from(town: Town) -> Self {
            TownWire { buildings: town.buildings }
        }
    }

    impl TryFrom<TownWire> for Town {
        type Error = String;

        fn try_from(wire: TownWire) -> Result<Self, String> {
            let mut town = Town::new();
            for building in wire.buildings {
                let Building { seat, shape, colour, cells } = building;
                if !colour.exists() {
                    return Err(format!("there is no colour {}", colour.0));
                }
                let footprint = match (shape, cells.as_slice()) {
                    (Shape::Square, &[anchor, _]) => Orientation::ALL
                        .into_iter()
                        .filter_map(|o| Footprint::square(anchor, o))
                        .find(|f| f.cells() == cells.as_slice())
                        .ok_or_else(|| format!("a square at ({}, {}) must cover two adjacent cells, anchor first", anchor.x, anchor.y))?,
                    (Shape::House | Shape::Tower, &[cell]) => Footprint::single(cell),
                    _ => return Err(format!("a {} cannot cover {} cells", shape.name(), cells.len())),
                };
                if let Some(cell) = footprint.cells().iter().find(|&&c| town.is_occupied(c)) {
                    return Err(format!("two buildings on ({}, {})", cell.x, cell.y));
                }
                town.add(seat, shape, colour, &footprint);
            }
            Ok(town)
        }
    }
}

/// Law 1 (CA-12): every cell of the footprint is free and not under the cardinal.
///
/// # Errors
/// A CA-12 refusal naming the first cell that is not free.
pub(crate) fn check_free(town: &Town, footprint: &Footprint, cardinal: Option<Cell>) -> Result<(), MoveError> {
    for &cell in footprint.cells() {
        if town.is_occupied(cell) {
            return Err(MoveError::rule("CA-12", format!("cell ({}, {}) is already built on", cell.x, cell.y)));
        }
        if cardinal == Some(cell) {
            return Err(MoveError::rule("CA-12", format!("law 1: the cardinal stands on ({}, {})", cell.x, cell.y)));
        }
    }
    Ok(())
}

/// The laws a placement must obey against its neighbours (CA-12 contact, CA-13 … CA-16).
///
/// # Errors
/// A refusal citing the first law broken.
pub(crate) fn check_neighbours(shape: Shape, colour: Colour, contacts: &Contacts) -> Result<(), MoveError> {
    if !contacts.touches_anything() {
        return Err(MoveError::rule("CA-12", "a building must share an edge with the cathedral or a building"));
    }
    if shape == Shape::Tower && !contacts.touches_shape(Shape::House) {
        return Err(MoveError::rule("CA-13", "law 2: a tower must touch a house"));
    }
    if shape == Shape::Square && !contacts.touches_shape(Shape::House) {
        return Err(MoveError::rule("CA-14", "law 3: a square must touch a house"));
    }
    if contacts.touches_shape(shape) {
        return Err(MoveError::rule("CA-15", format!("law 4: a {} may not touch another {}", shape.name(), shape.name())));
    }
    if contacts.touches_colour(colour) {
        return Err(MoveError::rule("CA-16", format!("law 5: a building may not touch a building of its colour ({colour})")));
    }
    Ok(())
}

/// Whether the placement obeys CA-13 … CA-16 (its contact with the town assumed).
pub(crate) fn neighbours_allow(shape: Shape, colour: Colour, contacts: &Contacts) -> bool {
    let house_ok = shape == Shape::House || contacts.touches_shape(Shape::House);
    house_ok && !contacts.touches_shape(shape) && !contacts.touches_colour(colour)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Orientation;

    fn rule_of(r: Result<(), MoveError>) -> &'static str {
        match r {
            Err(MoveError::Rule { rule, .. }) => rule,
            other => panic!("expected a rule refusal, got {other:?}"),
        }
    }

    /// CA-3: the cathedral is fixed at (0,0)+(1,0), its nave a house, its tower a tower, with no colour and 6 zones.
    #[test]
    fn ca3_cathedral_is_a_colourless_house_and_tower_with_six_zones() {
        let town = Town::new();
        assert!(town.is_occupied(NAVE) && town.is_occupied(CATHEDRAL_TOWER));
        assert_eq!(town.zones().len(), 6);
        let north_of_nave = town.contacts(&Footprint::single(Cell::new(0, 1)));
        assert!(north_of_nave.touches_shape(Shape::House) && !north_of_nave.touches_shape(Shape::Tower));
        assert_eq!(north_of_nave.colours, 0, "the cathedral has no colour");
        let east = town.contacts(&Footprint::single(Cell::new(2, 0)));
        assert!(east.touches_shape(Shape::Tower) && !east.touches_shape(Shape::House));
    }

    /// CA-12: a building needs contact with the town, and cells must be free.
    #[test]
    fn ca12_building_must_be_free_and_touch_the_town() {
        let town = Town::new();
        let far = Footprint::single(Cell::new(5, 5));
        assert_eq!(rule_of(check_neighbours(Shape::House, Colour(0), &town.contacts(&far))), "CA-12");
        let on_nave = Footprint::single(NAVE);
        assert_eq!(rule_of(check_free(&town, &on_nave, None)), "CA-12");
        let under_cardinal = Footprint::single(Cell::new(2, 0));
        assert_eq!(rule_of(check_free(&town, &under_cardinal, Some(Cell::new(2, 0)))), "CA-12");
        let square_half_on_tower = Footprint::square(Cell::new(1, 0), Orientation::Vertical).unwrap();
        assert_eq!(rule_of(check_free(&town, &square_half_on_tower, None)), "CA-12");
    }

    /// CA-9 counting: a square lying along a square shares two unit edges.
    #[test]
    fn contacts_count_unit_edges() {
        let mut town = Town::new();
        let below = Footprint::square(Cell::new(0, 1), Orientation::Horizontal).unwrap();
        town.add(Seat(0), Shape::Square, Colour(0), &below);
        let above = Footprint::square(Cell::new(0, 2), Orientation::Horizontal).unwrap();
        let c = town.contacts(&above);
        assert_eq!(c.edges_by_colour, [2, 0, 0, 0]);
        assert_eq!(c.cathedral_edges, 0);
        assert_eq!(town.cathedral_edges(&[Colour(0)]), 2);
        assert_eq!(town.cathedral_edges(&[Colour(1)]), 0);
    }
}
