//! Camps (B13-5) and crowns (B13-20 … B13-24).

use ludo_engine::Seat;

use crate::knights::SEATS;

/// A camp (partnership, B13-5): camp 0 is seats 0 and 2, camp 1 is seats 1
/// and 3 (partners face each other).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(value_type = u8, as = battle13::Camp))]
pub struct Camp(pub u8);

impl Camp {
    /// The camp `seat` belongs to.
    #[must_use]
    pub const fn of(seat: Seat) -> Camp {
        Camp(seat.0 % 2)
    }

    /// The camp as an index into per-camp arrays (0 or 1).
    #[must_use]
    pub const fn index(self) -> usize {
        (self.0 % 2) as usize
    }

    /// The other camp.
    #[must_use]
    pub const fn other(self) -> Camp {
        Camp((self.0 + 1) % 2)
    }

    /// The camp's two seats, in order.
    #[must_use]
    pub const fn seats(self) -> [Seat; 2] {
        [Seat(self.0 % 2), Seat(self.0 % 2 + 2)]
    }
}

/// Crowns earned by one camp in one joust (only one camp scores per joust).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Crowns))]
pub struct Crowns {
    /// The camp that scores.
    pub camp: Camp,
    /// How many crowns it scores.
    pub crowns: u32,
}

/// The tournament bonus of a contract (B13-20): 7 → 2, 8 → 4, 9 → 8,
/// 10 → 12, 11 → 20, 12 → 30, 13 → 40; 0 for a number that is no contract.
#[must_use]
pub const fn bonus(contract: u8) -> u32 {
    match contract {
        7 => 2,
        8 => 4,
        9 => 8,
        10 => 12,
        11 => 20,
        12 => 30,
        13 => 40,
        _ => 0,
    }
}

/// Crowns of a joust (B13-21 … B13-23) for a `contract` of the master's
/// camp `master_camp`, which won `won` tournaments, with or without Chaos.
///
/// - made: bonus + 1 per tournament above the contract (with Chaos: twice
///   the bonus + 2 per tournament above);
/// - failed: the other camp scores half the bonus (with Chaos: the bonus + 2
///   per tournament short). Every bonus is even, so the half is exact.
#[must_use]
pub fn joust_crowns(master_camp: Camp, contract: u8, won: u8, chaos: bool) -> Crowns {
    let bonus = bonus(contract);
    if won >= contract {
        let over = u32::from(won - contract);
        let crowns = if chaos { 2 * bonus + 2 * over } else { bonus + over };
        Crowns { camp: master_camp, crowns }
    } else {
        let short = u32::from(contract - won);
        let crowns = if chaos { bonus + 2 * short } else { bonus / 2 };
        Crowns { camp: master_camp.other(), crowns }
    }
}

/// Per-seat scores from per-camp crowns: each seat scores its camp's crowns.
pub(crate) fn seat_scores(crowns: [u32; 2]) -> Vec<i32> {
    Seat::all(SEATS).map(|s| i32::try_from(crowns[Camp::of(s).index()]).unwrap_or(i32::MAX)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER: Camp = Camp(1);
    const OTHER: Camp = Camp(0);

    #[test]
    fn b13_5_camps_are_seats_0_2_against_1_3() {
        assert_eq!(Camp::of(Seat(0)), Camp::of(Seat(2)));
        assert_eq!(Camp::of(Seat(1)), Camp::of(Seat(3)));
        assert_ne!(Camp::of(Seat(0)), Camp::of(Seat(1)));
        assert_eq!(Camp(0).seats(), [Seat(0), Seat(2)]);
        assert_eq!(Camp(1).seats(), [Seat(1), Seat(3)]);
        assert_eq!(Camp(0).other(), Camp(1));
    }

    #[test]
    fn b13_20_tournament_bonus_table() {
        let table: Vec<u32> = (7..=13).map(bonus).collect();
        assert_eq!(table, [2, 4, 8, 12, 20, 30, 40]);
        assert!((7..=13).all(|c| bonus(c).is_multiple_of(2)), "halves must be exact");
    }

    /// Worked check: contract 11, 12 tournaments won → master's camp 21 crowns.
    #[test]
    fn b13_21_worked_check_contract_11_made_with_12() {
        assert_eq!(joust_crowns(MASTER, 11, 12, false), Crowns { camp: MASTER, crowns: 21 });
        assert_eq!(joust_crowns(MASTER, 7, 7, false), Crowns { camp: MASTER, crowns: 2 });
    }

    /// Worked check: contract 11, 10 won → other camp 10 crowns.
    #[test]
    fn b13_22_worked_check_contract_11_failed_with_10() {
        assert_eq!(joust_crowns(MASTER, 11, 10, false), Crowns { camp: OTHER, crowns: 10 });
        assert_eq!(joust_crowns(MASTER, 7, 0, false), Crowns { camp: OTHER, crowns: 1 });
    }

    /// Worked check: contract 11, 10 won, Chaos → other camp 20 + 2 = 22.
    #[test]
    fn b13_23_worked_check_chaos_failed_contract_11_with_10() {
        assert_eq!(joust_crowns(MASTER, 11, 10, true), Crowns { camp: OTHER, crowns: 22 });
    }

    /// Worked check: contract 11, 12 won, Chaos → master's camp 40 + 2 = 42.
    #[test]
    fn b13_23_worked_check_chaos_made_contract_11_with_12() {
        assert_eq!(joust_crowns(MASTER, 11, 12, true), Crowns { camp: MASTER, crowns: 42 });
        assert_eq!(joust_crowns(MASTER, 13, 0, true), Crowns { camp: OTHER, crowns: 66 });
    }
}
