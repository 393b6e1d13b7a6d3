//! What one seat knows of a game, for computer players (see
//! [`ludo_engine::InfoSet`]): everything. Cardinal has no hidden
//! information and no chance (CA rules: "Perfect information, no
//! randomness"), so the info is the game and its only determinization is
//! the game itself.

use ludo_engine::{DeckRng, InfoSet, Seat};

use crate::game::Game;

/// What one seat knows of a game: all of it. With the `serde` feature it
/// reads and writes as JSON (for a computer player in another process).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Info {
    seat: Seat,
    game: Game,
}

impl Info {
    /// The seat this info belongs to.
    #[must_use]
    pub fn seat(&self) -> Seat {
        self.seat
    }
}

impl InfoSet for Game {
    type Info = Info;

    fn info(&self, seat: Seat) -> Info {
        Info { seat, game: self.clone() }
    }

    fn determinize(info: &Info, _rng: &mut DeckRng) -> Game {
        info.game.clone()
    }
}
