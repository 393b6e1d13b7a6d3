//! Final scoring (CA-22, CA-23, CA-24), also shown provisionally while the game runs.

use ludo_engine::{Outcome, Seat};

use crate::markers::{MarkerCount, Markers, per_colour};
use crate::pieces::Colour;
use crate::seats::Table;
use crate::town::Town;

/// The scores of every seat and who wins.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Scoring))]
pub struct Scoring {
    /// True while the game runs: the scores are what the players would get if it ended now.
    pub provisional: bool,
    /// One entry per seat, in seat order.
    pub seats: Vec<SeatScore>,
    /// The winning seats (several on a draw, CA-24); the leaders while provisional.
    pub winners: Vec<Seat>,
}

/// One seat's score breakdown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::SeatScore))]
pub struct SeatScore {
    /// The seat.
    pub seat: Seat,
    /// Markers counted per colour (one entry per colour, in colour order): those taken plus the supply left of the seat's own colours (CA-22).
    pub markers: Vec<MarkerCount>,
    /// The colour counted double (the best one, lowest colour on a tie; none without markers) (CA-23).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub doubled_colour: Option<Colour>,
    /// Total points: every marker once, the doubled colour's twice (CA-23).
    pub total: u32,
    /// Unit edges the seat's own-colour buildings share with the cathedral: the tie-break (CA-24).
    pub cathedral_contacts: u32,
}

/// The markers a seat scores, per colour (CA-22): taken, plus its own colours' supply.
fn scored_markers(table: Table, markers: &Markers, seat: Seat) -> [u8; Colour::COUNT] {
    let mut counts = markers.taken(seat);
    let supply = markers.supply();
    for colour in table.own_colours(seat) {
        counts[colour.index()] += supply[colour.index()];
    }
    counts
}

/// CA-23: every marker counts one, the best colour counts twice.
pub(crate) fn total(counts: [u8; Colour::COUNT]) -> (Option<Colour>, u32) {
    let sum: u32 = counts.iter().map(|&n| u32::from(n)).sum();
    let best = Colour::ALL.into_iter().filter(|c| counts[c.index()] > 0).max_by_key(|c| (counts[c.index()], core::cmp::Reverse(c.0)));
    let bonus = best.map_or(0, |c| u32::from(counts[c.index()]));
    (best, sum + bonus)
}

/// CA-24: highest total; ties broken by cathedral contacts; still tied, all of them.
fn winners(seats: &[SeatScore]) -> Vec<Seat> {
    let best = seats.iter().map(|s| (s.total, s.cathedral_contacts)).max();
    seats.iter().filter(|s| Some((s.total, s.cathedral_contacts)) == best).map(|s| s.seat).collect()
}

/// Scores every seat from the markers and the town.
pub(crate) fn score(table: Table, markers: &Markers, town: &Town, provisional: bool) -> Scoring {
    let seats: Vec<SeatScore> = Seat::all(table.players())
        .map(|seat| {
            let counts = scored_markers(table, markers, seat);
            let (doubled_colour, total) = total(counts);
            SeatScore {
                seat,
                markers: per_colour(counts),
                doubled_colour,
                total,
                cathedral_contacts: town.cathedral_edges(&table.own_colours(seat)),
            }
        })
        .collect();
    let winners = winners(&seats);
    Scoring { provisional, seats, winners }
}

impl Scoring {
    /// The engine-neutral result: totals per seat and winners.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        Outcome { scores: self.seats.iter().map(|s| i32::try_from(s.total).unwrap_or(i32::MAX)).collect(), winners: self.winners.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Cell, Orientation};
    use crate::pieces::{Footprint, Shape};

    /// CA-23: the best colour counts double, the rest one each.
    #[test]
    fn ca23_best_colour_is_doubled() {
        assert_eq!(total([3, 5, 0, 1]), (Some(Colour(1)), 9 + 5));
        assert_eq!(total([4, 0, 4, 0]), (Some(Colour(0)), 12), "a tie doubles the lower colour, same total");
        assert_eq!(total([0; 4]), (None, 0));
    }

    /// CA-22: a seat scores its own colour's supply left, and the markers it took of others.
    #[test]
    fn ca22_own_colour_supply_goes_to_its_owner() {
        let table = Table::new(4);
        let mut markers = Markers::new(4);
        markers.hand_over(Seat(1), Colour(0), 5);
        let s = score(table, &markers, &Town::new(), false);
        // seat 0: 7 own in supply, doubled → 14; seat 1: 12 own + 5 of colour 0 → 24 + 5 = 29.
        assert_eq!(s.seats[0].total, 14);
        assert_eq!(s.seats[1].total, 29);
        assert_eq!(s.seats[1].doubled_colour, Some(Colour(1)));
        assert_eq!(s.winners, vec![Seat(1)]);
    }

    /// CA-22 at two players: both colours' supply counts for their owner.
    #[test]
    fn ca22_two_players_score_both_colours_supply() {
        let s = score(Table::new(2), &Markers::new(2), &Town::new(), false);
        assert_eq!(s.seats[0].total, 12 + 12 + 12);
        assert_eq!(s.seats[0].markers.iter().map(|m| m.count).collect::<Vec<_>>(), vec![12, 0, 12, 0]);
    }

    /// CA-6/CA-22 at three players: nobody scores the fourth colour.
    #[test]
    fn ca22_three_players_nobody_scores_the_fourth_colour() {
        let s = score(Table::new(3), &Markers::new(3), &Town::new(), false);
        assert!(s.seats.iter().all(|seat| seat.markers[3].count == 0 && seat.total == 24));
    }

    /// CA-24: equal totals are split by cathedral contacts; equal again is a shared win.
    #[test]
    fn ca24_tie_break_by_cathedral_contacts_then_draw() {
        let table = Table::new(4);
        let markers = Markers::new(4);
        let mut town = Town::new();
        assert_eq!(score(table, &markers, &town, false).winners, Seat::all(4).collect::<Vec<_>>(), "all tied: a draw");
        // Seat 2's square along the whole north side: 2 edges; seat 1's tower west: 1 edge.
        town.add(Seat(2), Shape::Square, Colour(2), &Footprint::square(Cell::new(0, 1), Orientation::Horizontal).unwrap());
        town.add(Seat(1), Shape::Tower, Colour(1), &Footprint::single(Cell::new(-1, 0)));
        let s = score(table, &markers, &town, false);
        assert_eq!(s.seats.iter().map(|x| x.cathedral_contacts).collect::<Vec<_>>(), vec![0, 1, 2, 0]);
        assert_eq!(s.winners, vec![Seat(2)]);
        town.add(Seat(1), Shape::Square, Colour(1), &Footprint::square(Cell::new(0, -1), Orientation::Horizontal).unwrap());
        assert_eq!(score(table, &markers, &town, false).winners, vec![Seat(1)]);
    }

    /// CA-24: a higher total wins whatever the contacts.
    #[test]
    fn ca24_highest_total_wins() {
        let table = Table::new(3);
        let mut markers = Markers::new(3);
        markers.hand_over(Seat(2), Colour(0), 1);
        let mut town = Town::new();
        town.add(Seat(0), Shape::Tower, Colour(0), &Footprint::single(Cell::new(-1, 0)));
        let s = score(table, &markers, &town, false);
        assert_eq!(s.winners, vec![Seat(2)]);
        assert_eq!(s.outcome().scores, vec![22, 24, 25]);
    }
    /// CA-23: the doubled colour may be one taken from others, not the seat's own.
    #[test]
    fn ca23_a_taken_colour_can_be_the_doubled_one() {
        let mut markers = Markers::new(4);
        markers.hand_over(Seat(1), Colour(2), 12);
        markers.hand_over(Seat(0), Colour(1), 5);
        let s = score(Table::new(4), &markers, &Town::new(), false);
        assert_eq!(s.seats[1].doubled_colour, Some(Colour(2)));
        assert_eq!(s.seats[1].total, 7 + 12 * 2);
        assert_eq!(s.seats[2].total, 0, "colour 2's supply is empty: nothing left to receive");
    }

    /// CA-24 at two players: a seat's contacts count both of its colours.
    #[test]
    fn ca24_two_players_count_both_colours_contacts() {
        let mut town = Town::new();
        let one = |x, y| Footprint::single(Cell::new(x, y));
        town.add(Seat(0), Shape::Tower, Colour(0), &one(-1, 0));
        town.add(Seat(0), Shape::House, Colour(2), &one(0, -1));
        town.add(Seat(0), Shape::House, Colour(2), &one(1, -1));
        town.add(Seat(1), Shape::Square, Colour(1), &Footprint::square(Cell::new(0, 1), Orientation::Horizontal).unwrap());
        let s = score(Table::new(2), &Markers::new(2), &town, false);
        assert_eq!(s.outcome().scores, vec![36, 36]);
        assert_eq!((s.seats[0].cathedral_contacts, s.seats[1].cathedral_contacts), (3, 2));
        assert_eq!(s.winners, vec![Seat(0)]);
    }

    /// CA-24 at three players: fourth-colour buildings by the cathedral count for nobody,
    /// not even for the seat that built them.
    #[test]
    fn ca24_three_players_fourth_colour_contacts_count_for_nobody() {
        let mut town = Town::new();
        town.add(Seat(0), Shape::Square, Colour::FOURTH, &Footprint::square(Cell::new(0, 1), Orientation::Horizontal).unwrap());
        town.add(Seat(1), Shape::Tower, Colour(1), &Footprint::single(Cell::new(-1, 0)));
        let s = score(Table::new(3), &Markers::new(3), &town, false);
        assert_eq!(s.seats.iter().map(|x| x.cathedral_contacts).collect::<Vec<_>>(), vec![0, 1, 0]);
        assert_eq!(s.winners, vec![Seat(1)]);
    }
}
