//! The 52 knight tokens (B13-1), their weapons (B13-2) and the deal (B13-7).

use core::fmt;

use ludo_engine::DeckRng;

/// Number of seats: Battle 13 is played by exactly four players (B13-5).
pub const SEATS: usize = 4;
/// Knights dealt to each player (B13-7).
pub const HAND_SIZE: usize = 13;
/// Strength of the strongest knight of a family (B13-1).
pub const MAX_STRENGTH: u8 = 13;

/// One of the four families of knights (B13-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Family))]
pub enum Family {
    /// The Eagle family.
    Eagle,
    /// The Wolf family.
    Wolf,
    /// The Dragon family.
    Dragon,
    /// The Lion family.
    Lion,
}

impl Family {
    /// The four families, in the rules' order (also the bag's order, see [`bag`]).
    pub const ALL: [Family; 4] = [Family::Eagle, Family::Wolf, Family::Dragon, Family::Lion];

    /// The family's name as players say it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Family::Eagle => "Eagle",
            Family::Wolf => "Wolf",
            Family::Dragon => "Dragon",
            Family::Lion => "Lion",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A knight token: a family and a strength from 1 to 13 (B13-1).
// Any value can be built (a move may name a knight that does not exist):
// the engine refuses those, see `Knight::exists`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Knight))]
pub struct Knight {
    /// The knight's family.
    pub family: Family,
    /// The knight's strength, 1 (weakest) to 13 (strongest).
    #[cfg_attr(feature = "schema", schema(minimum = 1, maximum = 13))]
    pub strength: u8,
}

impl Knight {
    /// The knight of `family` with `strength`.
    #[must_use]
    pub const fn new(family: Family, strength: u8) -> Self {
        Knight { family, strength }
    }

    /// Whether this knight is one of the 52 tokens (strength 1..=13).
    #[must_use]
    pub const fn exists(self) -> bool {
        self.strength >= 1 && self.strength <= MAX_STRENGTH
    }

    /// Weapons carried by this knight (B13-2): 13 → 4, 12 → 3, 11 → 2, 10 → 1, else 0.
    #[must_use]
    pub const fn weapons(self) -> u32 {
        match self.strength {
            13 => 4,
            12 => 3,
            11 => 2,
            10 => 1,
            _ => 0,
        }
    }
}

impl fmt::Display for Knight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.family, self.strength)
    }
}

/// Total weapons of some knights (B13-2).
#[must_use]
pub fn weapons(knights: &[Knight]) -> u32 {
    knights.iter().map(|k| k.weapons()).sum()
}

/// The bag of 52 knights in its canonical order: Eagle 1..13, Wolf 1..13,
/// Dragon 1..13, Lion 1..13. Every deal is one `DeckRng::shuffle` of this
/// order, after which seat `s` takes positions `13·s .. 13·s + 13`.
#[must_use]
pub fn bag() -> Vec<Knight> {
    Family::ALL.iter().flat_map(|&family| (1..=MAX_STRENGTH).map(move |s| Knight::new(family, s))).collect()
}

/// Deals a joust (B13-7): one full shuffle of the canonical [`bag`], then
/// seat `s` takes positions `13·s .. 13·s + 13` of the shuffled bag. Hands
/// are returned sorted (family, then strength) so that the order a player
/// sees reveals nothing about the shuffle.
pub(crate) fn deal(rng: &mut DeckRng) -> [Vec<Knight>; SEATS] {
    let mut knights = bag();
    rng.shuffle(&mut knights);
    let mut hands: [Vec<Knight>; SEATS] = Default::default();
    for (hand, chunk) in hands.iter_mut().zip(knights.chunks(HAND_SIZE)) {
        hand.extend_from_slice(chunk);
        hand.sort_unstable();
    }
    hands
}

/// Whether `hands` are four hands of 13 that together hold each of the 52
/// knights exactly once.
pub(crate) fn is_full_deal(hands: &[Vec<Knight>; SEATS]) -> bool {
    let mut seen = [false; 52];
    for hand in hands {
        if hand.len() != HAND_SIZE {
            return false;
        }
        for &k in hand {
            if !k.exists() {
                return false;
            }
            let i = k.family as usize * 13 + usize::from(k.strength - 1);
            if seen[i] {
                return false;
            }
            seen[i] = true;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b13_1_the_bag_holds_52_distinct_knights_of_four_families() {
        let bag = bag();
        assert_eq!(bag.len(), 52);
        let mut sorted = bag.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 52);
        for family in Family::ALL {
            let strengths: Vec<u8> = bag.iter().filter(|k| k.family == family).map(|k| k.strength).collect();
            assert_eq!(strengths, (1..=13).collect::<Vec<_>>());
        }
        assert!(!Knight::new(Family::Eagle, 0).exists());
        assert!(!Knight::new(Family::Eagle, 14).exists());
    }

    #[test]
    fn b13_2_weapons_by_strength_and_forty_in_the_bag() {
        let w = |s| Knight::new(Family::Lion, s).weapons();
        assert_eq!([w(13), w(12), w(11), w(10), w(9), w(1)], [4, 3, 2, 1, 0, 0]);
        assert_eq!(weapons(&bag()), 40);
    }

    #[test]
    fn b13_7_a_deal_gives_each_seat_13_knights_from_one_shuffle() {
        let mut rng = DeckRng::new(&ludo_engine::Seed([9; 32]));
        let hands = deal(&mut rng);
        assert!(is_full_deal(&hands));
        // The exact algorithm: one shuffle of the canonical bag, 13 per seat.
        let mut again = DeckRng::new(&ludo_engine::Seed([9; 32]));
        let mut knights = bag();
        again.shuffle(&mut knights);
        let mut seat2 = knights[26..39].to_vec();
        seat2.sort_unstable();
        assert_eq!(hands[2], seat2);
    }
}
