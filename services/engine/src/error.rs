//! Why an engine refuses a set-up or a move.

use crate::Seat;

/// A move refused by the engine. The state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The game is over: no more moves.
    #[error("the game is over")]
    GameOver,
    /// The seat does not exist at this table.
    #[error("{seat} is not at this table")]
    UnknownSeat {
        /// The seat named by the caller.
        seat: Seat,
    },
    /// It is not this seat's turn to act.
    #[error("it is not {seat}'s turn")]
    NotYourTurn {
        /// The seat that tried to act.
        seat: Seat,
        /// The seats that may act now.
        to_move: Vec<Seat>,
    },
    /// A rule forbids the move.
    #[error("{rule}: {reason}")]
    Rule {
        /// The rule id from the rules file (`CA-13`, `KK-15`, `B13-18` …).
        rule: &'static str,
        /// Why, in words a player understands.
        reason: String,
    },
}

impl MoveError {
    /// A refusal citing `rule`.
    pub fn rule(rule: &'static str, reason: impl Into<String>) -> Self {
        MoveError::Rule { rule, reason: reason.into() }
    }
}

/// A game that cannot be set up as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// Wrong number of players for this game.
    #[error("this game takes {min} to {max} players, not {got}")]
    PlayerCount {
        /// Fewest players accepted.
        min: usize,
        /// Most players accepted.
        max: usize,
        /// Players asked for.
        got: usize,
    },
    /// An option has a value the game cannot use.
    #[error("option `{field}`: {reason}")]
    InvalidOption {
        /// The option's name as it appears in the JSON options.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}
