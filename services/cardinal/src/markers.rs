//! Score markers: the supply and what each seat has taken (CA-2, CA-9, CA-11).

use ludo_engine::Seat;

use crate::pieces::Colour;
use crate::seats::Table;
use crate::town::Contacts;

/// Markers of each colour in the box that the game uses (CA-2).
pub const MARKERS_PER_COLOUR: u8 = 12;

/// A number of markers of one colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::MarkerCount))]
pub struct MarkerCount {
    /// The markers' colour.
    pub colour: Colour,
    /// How many.
    pub count: u32,
}

/// One count per colour, in colour order, as the views and scores list them.
pub(crate) fn per_colour(counts: [u8; Colour::COUNT]) -> Vec<MarkerCount> {
    Colour::ALL.iter().map(|&colour| MarkerCount { colour, count: u32::from(counts[colour.index()]) }).collect()
}

/// The supply and the seats' takings; their sum per colour is always 12.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Markers {
    supply: [u8; Colour::COUNT],
    taken: Vec<[u8; Colour::COUNT]>,
}

impl Markers {
    pub(crate) fn new(players: usize) -> Self {
        Markers { supply: [MARKERS_PER_COLOUR; Colour::COUNT], taken: vec![[0; Colour::COUNT]; players] }
    }

    pub(crate) fn supply(&self) -> [u8; Colour::COUNT] {
        self.supply
    }

    pub(crate) fn taken(&self, seat: Seat) -> [u8; Colour::COUNT] {
        self.taken[seat.index()]
    }

    /// CA-9: one marker of the touched building's colour per shared unit
    /// edge, while the supply lasts; the cathedral and (at three players) the
    /// fourth colour give nothing. Returns what was taken, zero counts left out.
    pub(crate) fn take_for_contacts(&mut self, table: Table, seat: Seat, contacts: &Contacts) -> Vec<MarkerCount> {
        let mut taken = Vec::new();
        for colour in Colour::ALL.into_iter().filter(|&c| table.counts(c)) {
            let n = contacts.edges_by_colour[colour.index()].min(self.supply[colour.index()]);
            if n > 0 {
                self.supply[colour.index()] -= n;
                self.taken[seat.index()][colour.index()] += n;
                taken.push(MarkerCount { colour, count: u32::from(n) });
            }
        }
        taken
    }

    /// CA-11: the first player's one marker of a chosen colour (checked by the caller to count and be in supply).
    pub(crate) fn take_bonus(&mut self, seat: Seat, colour: Colour) {
        self.supply[colour.index()] -= 1;
        self.taken[seat.index()][colour.index()] += 1;
    }

    /// Moves `n` markers from the supply to `seat`, to arrange test positions.
    #[cfg(test)]
    pub(crate) fn hand_over(&mut self, seat: Seat, colour: Colour, n: u8) {
        self.supply[colour.index()] -= n;
        self.taken[seat.index()][colour.index()] += n;
    }
}
