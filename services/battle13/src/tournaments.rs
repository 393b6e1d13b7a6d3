//! Tournaments (B13-17 … B13-19): who leads, following the family led, and
//! who wins.

use ludo_engine::Seat;

use crate::knights::{Family, Knight};

/// Tournaments in a joust (B13-17).
pub const TOURNAMENTS: u8 = 13;

/// A knight played face up in a tournament.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Play))]
pub struct Play {
    /// The seat whose knight it is (the servant's, even when the master chose it).
    pub seat: Seat,
    /// The knight played.
    pub knight: Knight,
}

/// One tournament (trick) of a joust (B13-17).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Tournament))]
pub struct Tournament {
    /// The tournament's number in the joust, 1 to 13.
    pub number: u8,
    /// The seat that played the first knight.
    pub leader: Seat,
    /// The knights played so far, in order (the first sets the family led).
    pub plays: Vec<Play>,
    /// The seat whose knight won, once all four knights are down.
    pub winner: Option<Seat>,
}

impl Tournament {
    /// The family led: the first knight's family, once someone has played.
    #[must_use]
    pub fn family_led(&self) -> Option<Family> {
        self.plays.first().map(|p| p.knight.family)
    }
}

/// The winning play of a complete tournament (B13-19): the strongest
/// favoured knight if any was played, else the strongest knight of the
/// family led. Knights of other families never win. `None` only for an
/// empty tournament.
#[must_use]
pub fn tournament_winner(plays: &[Play], favoured: Option<Family>) -> Option<Play> {
    let led = plays.first()?.knight.family;
    let strongest_of = |family: Family| plays.iter().filter(|p| p.knight.family == family).max_by_key(|p| p.knight.strength).copied();
    favoured.and_then(strongest_of).or_else(|| strongest_of(led))
}

/// Whether a player holding `hand` may play `knight` in a tournament where
/// `led` was led (B13-18): follow the family led when you can.
pub(crate) fn follows(hand: &[Knight], knight: Knight, led: Option<Family>) -> bool {
    match led {
        Some(led) if knight.family != led => !hand.iter().any(|k| k.family == led),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(seat: u8, family: Family, strength: u8) -> Play {
        Play { seat: Seat(seat), knight: Knight::new(family, strength) }
    }

    /// Worked check: Wolf favoured; Eagle 11 led; Lion 13 (no Eagle held) and
    /// two lower Eagles played → Eagle 11 wins.
    #[test]
    fn b13_19_worked_check_lion_13_off_family_cannot_win() {
        let plays = [play(0, Family::Eagle, 11), play(1, Family::Lion, 13), play(2, Family::Eagle, 5), play(3, Family::Eagle, 9)];
        assert_eq!(tournament_winner(&plays, Some(Family::Wolf)), Some(plays[0]));
    }

    /// Worked check: same but Wolf 2 instead of Lion 13 → Wolf 2 wins.
    #[test]
    fn b13_19_worked_check_favoured_wolf_2_beats_the_led_eagle_11() {
        let plays = [play(0, Family::Eagle, 11), play(1, Family::Wolf, 2), play(2, Family::Eagle, 5), play(3, Family::Eagle, 9)];
        assert_eq!(tournament_winner(&plays, Some(Family::Wolf)), Some(plays[1]));
    }

    #[test]
    fn b13_19_strongest_favoured_wins_and_without_favour_the_led_family_wins() {
        let plays = [play(2, Family::Dragon, 3), play(3, Family::Lion, 4), play(0, Family::Lion, 12), play(1, Family::Dragon, 13)];
        assert_eq!(tournament_winner(&plays, Some(Family::Lion)), Some(plays[2]));
        assert_eq!(tournament_winner(&plays, None), Some(plays[3]));
        // A favoured family nobody played changes nothing.
        assert_eq!(tournament_winner(&plays, Some(Family::Eagle)), Some(plays[3]));
        assert_eq!(tournament_winner(&[], None), None);
    }

    #[test]
    fn b13_18_follow_the_family_led_when_you_can() {
        let hand = [Knight::new(Family::Eagle, 2), Knight::new(Family::Lion, 9)];
        assert!(!follows(&hand, Knight::new(Family::Lion, 9), Some(Family::Eagle)));
        assert!(follows(&hand, Knight::new(Family::Eagle, 2), Some(Family::Eagle)));
        assert!(follows(&hand, Knight::new(Family::Lion, 9), Some(Family::Wolf)));
        assert!(follows(&hand, Knight::new(Family::Lion, 9), None));
    }
}
