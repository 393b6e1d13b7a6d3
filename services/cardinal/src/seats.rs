//! Which colours each seat plays and scores (CA-5, CA-6, CA-7).

use ludo_engine::Seat;

use crate::pieces::Colour;

/// The colours a table of `players` hands out (CA-5/6/7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Table {
    players: u8,
}

impl Table {
    pub(crate) const fn new(players: u8) -> Self {
        Table { players }
    }

    pub(crate) const fn players(self) -> usize {
        self.players as usize
    }

    /// The rule that decides colour ownership at this table, for refusals.
    pub(crate) const fn ownership_rule(self) -> &'static str {
        match self.players {
            2 => "CA-7",
            3 => "CA-6",
            _ => "CA-5",
        }
    }

    /// The colours `seat` owns: they score for it and it may build them.
    pub(crate) fn own_colours(self, seat: Seat) -> Vec<Colour> {
        if self.players == 2 { vec![Colour(seat.0), Colour(seat.0 + 2)] } else { vec![Colour(seat.0)] }
    }

    /// The seat owning `colour`, if any (the fourth colour at three players has none).
    pub(crate) fn owner(self, colour: Colour) -> Option<Seat> {
        match self.players {
            2 => Some(Seat(colour.0 % 2)),
            3 if colour == Colour::FOURTH => None,
            _ => Some(Seat(colour.0)),
        }
    }

    /// Whether `seat` may build buildings of `colour`: its own, or the fourth colour at three players.
    pub(crate) fn may_build(self, seat: Seat, colour: Colour) -> bool {
        colour.exists() && self.owner(colour).is_none_or(|owner| owner == seat)
    }

    /// The colours `seat` may build, in order.
    pub(crate) fn buildable(self, seat: Seat) -> impl Iterator<Item = Colour> {
        Colour::ALL.into_iter().filter(move |&c| self.may_build(seat, c))
    }

    /// Whether markers of `colour` are in play (CA-6: not the fourth colour's at three players).
    pub(crate) fn counts(self, colour: Colour) -> bool {
        colour.exists() && !(self.players == 3 && colour == Colour::FOURTH)
    }

    /// The fourth colour, when the table has one.
    pub(crate) fn fourth_colour(self) -> Option<Colour> {
        (self.players == 3).then_some(Colour::FOURTH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CA-5: at four players seat i plays colour i and nothing else.
    #[test]
    fn ca5_four_players_each_seat_plays_its_own_colour() {
        let t = Table::new(4);
        for seat in Seat::all(4) {
            assert_eq!(t.own_colours(seat), vec![Colour(seat.0)]);
            assert_eq!(t.buildable(seat).collect::<Vec<_>>(), vec![Colour(seat.0)]);
        }
        assert!(Colour::ALL.iter().all(|&c| t.counts(c)));
    }

    /// CA-6: at three players colour 3 is buildable by anyone, owned and scored by nobody.
    #[test]
    fn ca6_three_players_share_the_fourth_colour() {
        let t = Table::new(3);
        for seat in Seat::all(3) {
            assert_eq!(t.own_colours(seat), vec![Colour(seat.0)]);
            assert_eq!(t.buildable(seat).collect::<Vec<_>>(), vec![Colour(seat.0), Colour::FOURTH]);
        }
        assert_eq!(t.owner(Colour::FOURTH), None);
        assert!(!t.counts(Colour::FOURTH));
        assert_eq!(t.fourth_colour(), Some(Colour::FOURTH));
    }

    /// CA-7: at two players seat 0 plays colours 0 and 2, seat 1 colours 1 and 3.
    #[test]
    fn ca7_two_players_each_play_two_colours() {
        let t = Table::new(2);
        assert_eq!(t.own_colours(Seat(0)), vec![Colour(0), Colour(2)]);
        assert_eq!(t.own_colours(Seat(1)), vec![Colour(1), Colour(3)]);
        assert_eq!(t.owner(Colour(3)), Some(Seat(1)));
        assert!(!t.may_build(Seat(0), Colour(1)));
        assert!(!t.may_build(Seat(0), Colour(4)));
        assert!(Colour::ALL.iter().all(|&c| t.counts(c)));
    }
}
