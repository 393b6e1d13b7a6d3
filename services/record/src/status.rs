//! Where a game stands, as the service tells it: the engine's own status,
//! and what only the table knows — seats still open, a game called off
//! before it started, a side that gave up.

use ludo_engine::{Outcome, Seat};
use serde::{Deserialize, Serialize};

/// Whose turn it is, or how the game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    /// Seats are still open: the game starts once every seat is taken.
    Waiting {
        /// The seats nobody has taken yet.
        open_seats: Vec<Seat>,
    },
    /// The game goes on; these seats may act now.
    InProgress {
        /// Seats whose move is awaited (usually exactly one).
        to_move: Vec<Seat>,
        /// The seats' clocks, in a game with time controls.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockStatus>,
    },
    /// The game is over.
    Finished {
        /// Final scores and winners. When a game of two sides ends because
        /// one side gave up, the other side wins and every score is 0.
        result: Outcome,
        /// The seats that gave up (resigned), in the order they did; a
        /// seat that gave up in a game of more than two sides was played by
        /// a server bot from then on.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        forfeits: Vec<Forfeit>,
    },
    /// Called off by its creator before it started.
    Cancelled,
}

/// The seats' clocks after the last record: clients count down to each
/// deadline themselves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ClockStatus {
    /// Every seat's clock, in seat order.
    pub seats: Vec<SeatClock>,
}

/// One seat's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SeatClock {
    /// The seat.
    pub seat: Seat,
    /// What is left of its bank after its last turn (ms); absent without a bank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_ms: Option<u64>,
    /// When its time for the move it owes runs out (RFC 3339); absent while
    /// its clock is stopped (not its turn, or a server bot plays it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
}

/// A seat that gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Forfeit {
    /// The seat.
    pub seat: Seat,
    /// How it gave up.
    pub reason: ForfeitReason,
}

/// How a seat gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ForfeitReason {
    /// Its player resigned.
    Resigned,
    /// Its time ran out, in a game whose clock makes a seat lose then.
    TimedOut,
}

impl ForfeitReason {
    /// Its name, as the JSON and the transparency log's leaves write it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ForfeitReason::Resigned => "resigned",
            ForfeitReason::TimedOut => "timed_out",
        }
    }
}

impl Status {
    /// Whether the game is over: finished, or cancelled before it started.
    /// Nothing more is appended to its log, and its whole record is public.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        matches!(self, Status::Finished { .. } | Status::Cancelled)
    }

    /// How the game ended, as the transparency log's leaf says it; `None`
    /// while it is not over.
    #[must_use]
    pub fn ending(&self) -> Option<ludo_transparency::Ending> {
        match self {
            Status::Finished { result, forfeits } => Some(ludo_transparency::Ending::Finished {
                result: result.clone(),
                forfeits: forfeits.iter().map(|forfeit| (forfeit.seat, forfeit.reason.as_str())).collect(),
            }),
            Status::Cancelled => Some(ludo_transparency::Ending::Cancelled),
            Status::Waiting { .. } | Status::InProgress { .. } => None,
        }
    }

    /// Seats that may act now (none while seats are open, nor once the game is over).
    #[must_use]
    pub fn to_move(&self) -> &[Seat] {
        match self {
            Status::InProgress { to_move, .. } => to_move,
            _ => &[],
        }
    }
}

impl From<ludo_engine::Status> for Status {
    /// The engine's status, as a game every seat of which is taken and no
    /// side of which gave up.
    fn from(status: ludo_engine::Status) -> Status {
        match status {
            ludo_engine::Status::InProgress { to_move } => Status::InProgress { to_move, clock: None },
            ludo_engine::Status::Finished { result } => Status::Finished { result, forfeits: Vec::new() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_as_the_engines_did_and_name_their_state() {
        // Summaries stored before this type existed hold the engine's shape.
        let old: Status = serde_json::from_str(r#"{"state":"finished","result":{"scores":[3,1],"winners":[0]}}"#).unwrap();
        assert_eq!(old, Status::Finished { result: Outcome { scores: vec![3, 1], winners: vec![Seat(0)] }, forfeits: vec![] });
        assert_eq!(
            serde_json::to_string(&Status::Waiting { open_seats: vec![Seat(2)] }).unwrap(),
            r#"{"state":"waiting","open_seats":[2]}"#
        );
        assert_eq!(serde_json::to_string(&Status::Cancelled).unwrap(), r#"{"state":"cancelled"}"#);
        for reason in [ForfeitReason::Resigned, ForfeitReason::TimedOut] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str(), "a leaf names a forfeit as the JSON does");
        }
        assert!(Status::Cancelled.is_finished());
        assert!(Status::Waiting { open_seats: vec![Seat(1)] }.to_move().is_empty());
    }
}

#[cfg(test)]
mod ending {
    use super::*;
    use ludo_transparency::{Ending, GameHead};

    #[test]
    fn a_status_ends_a_leaf_as_it_always_did() {
        let finished = Status::Finished {
            result: Outcome { scores: vec![3, -1], winners: vec![Seat(0)] },
            forfeits: vec![Forfeit { seat: Seat(1), reason: ForfeitReason::TimedOut }],
        };
        let head = GameHead { game_id: "g".into(), records: 9, last_hash: "ab".into(), ending: finished.ending(), imported: None };
        assert_eq!(
            head.leaf().unwrap(),
            "ludotheque/game-head/v1\ngame g\nrecords 9\nlast ab\noutcome finished\nscores 3 -1\nwinners 0\nforfeits 1:timed_out\n"
        );
        assert_eq!(Status::Cancelled.ending(), Some(Ending::Cancelled));
        assert_eq!(Status::Waiting { open_seats: vec![] }.ending(), None);
        assert_eq!(Status::InProgress { to_move: vec![Seat(0)], clock: None }.ending(), None);
    }
}
