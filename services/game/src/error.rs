//! Everything the game service can refuse, each with a stable machine code.

use ludo_engine::Seat;

/// A refusal or failure of the game service.
///
/// Adapters map each variant to a transport status in one exhaustive match;
/// [`ServiceError::code`] is the stable machine code both adapters expose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// No such game (or other resource).
    #[error("no {what} with id `{id}`")]
    NotFound {
        /// What was looked for (`game`, `kind`).
        what: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The request is malformed; `field` names the offending input.
    #[error("invalid `{field}`: {reason}")]
    InvalidInput {
        /// Dotted path of the field (`move.shape`, `players`, `at` …).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No valid seat token for an action that needs one, or a token that
    /// opens no seat of this game.
    #[error("{reason}")]
    Unauthorized {
        /// Why.
        reason: String,
    },
    /// The caller is who it says, but may not do this (the game's admin
    /// asking for what only a seat's own player may do; an import on a
    /// server whose operator allows none).
    #[error("{reason}")]
    Forbidden {
        /// Why.
        reason: String,
    },
    /// The seat changed hands (its player left, its token was renewed, a
    /// bot took it over after a timeout) since this stream ticket was
    /// issued or this stream opened: it no longer opens the seat.
    #[error("seat {} changed hands: this ticket or stream no longer opens it", seat.0)]
    SeatRevoked {
        /// The seat.
        seat: Seat,
    },
    /// A game rule forbids the move.
    #[error("{rule}: {reason}")]
    RuleViolation {
        /// The rule id (`CA-13` …).
        rule: String,
        /// Why, for a player.
        reason: String,
    },
    /// The seat may not act now.
    #[error("it is not seat {}'s turn", seat.0)]
    NotYourTurn {
        /// The seat that tried.
        seat: Seat,
        /// Seats that may act now.
        to_move: Vec<Seat>,
    },
    /// The game is over.
    #[error("the game is finished")]
    GameFinished,
    /// The game is not over: it has no receipt yet.
    #[error("the game is not over: its receipt comes when it ends")]
    GameNotOver,
    /// Seats are still open: nobody moves (or resigns) before every seat is taken.
    #[error("the game has not started: seats are still open")]
    GameWaiting {
        /// The open seats.
        open_seats: Vec<Seat>,
    },
    /// Joining, leaving or cancelling needs a game whose seats are still open.
    #[error("the game has started: every seat was taken")]
    GameStarted,
    /// The game was called off before it started.
    #[error("the game was cancelled")]
    GameCancelled,
    /// The seat is taken (an invitation used again, a seat someone else joined first).
    #[error("seat {} is taken", seat.0)]
    SeatTaken {
        /// The seat.
        seat: Seat,
    },
    /// Nobody sits at the seat.
    #[error("seat {} is open: nobody sits there", seat.0)]
    SeatOpen {
        /// The seat.
        seat: Seat,
    },
    /// The seat's time for this move ran out (its move is now a bot's, or it lost).
    #[error("seat {}'s time for this move ran out", seat.0)]
    TimeUp {
        /// The seat.
        seat: Seat,
    },
    /// The seat resigned: a server bot plays it, and its token can only watch.
    #[error("seat {} resigned: a server bot plays it now", seat.0)]
    SeatResigned {
        /// The seat.
        seat: Seat,
    },
    /// The client's `expected_version` is not the game's version.
    #[error("expected version {expected}, but the game is at version {current}")]
    VersionConflict {
        /// What the client expected.
        expected: u64,
        /// The game's current version.
        current: u64,
    },
    /// A `request_id` already used for a different move.
    #[error("request_id `{request_id}` was already used for another move (version {version})")]
    RequestIdReused {
        /// The reused id.
        request_id: String,
        /// The version of the move it first named.
        version: u64,
    },
    /// An export does not verify; the first bad line is named.
    #[error("the export is invalid at line {line}: {reason}")]
    InvalidExport {
        /// 1-based line of the export.
        line: u64,
        /// The record on that line, if a record line.
        seq: Option<u64>,
        /// What is wrong.
        reason: String,
    },
    /// A game with this id already exists here.
    #[error("a game with id `{id}` already exists")]
    GameExists {
        /// The game's id.
        id: String,
    },
    /// Too many requests of this kind from this client (a token bucket is empty).
    #[error("too many {what}: retry in {} ms", crate::quota::retry_after_ms(*retry_after))]
    RateLimited {
        /// What was limited (`moves of this seat`, `games created from this address` …).
        what: &'static str,
        /// When a token is back.
        retry_after: std::time::Duration,
    },
    /// The event store failed; nothing was acknowledged.
    #[error("storage unavailable: {0}")]
    Storage(String),
    /// A stored log does not verify or replay.
    #[error("the log of game `{game}` is corrupt at record {seq}: {reason}")]
    CorruptLog {
        /// The game.
        game: String,
        /// The first bad record.
        seq: u64,
        /// What is wrong.
        reason: String,
    },
    /// The server is shutting down or misbehaved.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// The stable machine code of this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::NotFound { .. } => "not_found",
            ServiceError::InvalidInput { .. } => "invalid_input",
            ServiceError::Unauthorized { .. } => "unauthorized",
            ServiceError::Forbidden { .. } => "forbidden",
            ServiceError::SeatRevoked { .. } => "seat_revoked",
            ServiceError::RuleViolation { .. } => "rule_violation",
            ServiceError::NotYourTurn { .. } => "not_your_turn",
            ServiceError::GameFinished => "game_finished",
            ServiceError::GameNotOver => "game_not_over",
            ServiceError::GameWaiting { .. } => "game_waiting",
            ServiceError::GameStarted => "game_started",
            ServiceError::GameCancelled => "game_cancelled",
            ServiceError::SeatTaken { .. } => "seat_taken",
            ServiceError::SeatOpen { .. } => "seat_open",
            ServiceError::SeatResigned { .. } => "seat_resigned",
            ServiceError::TimeUp { .. } => "time_up",
            ServiceError::VersionConflict { .. } => "version_conflict",
            ServiceError::RequestIdReused { .. } => "request_id_reused",
            ServiceError::InvalidExport { .. } => "invalid_export",
            ServiceError::GameExists { .. } => "game_exists",
            ServiceError::RateLimited { .. } => "rate_limited",
            ServiceError::Storage(_) => "storage_unavailable",
            ServiceError::CorruptLog { .. } => "corrupt_log",
            ServiceError::Internal(_) => "internal",
        }
    }

    /// An invalid-input error for `field`.
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ServiceError::InvalidInput { field: field.into(), reason: reason.into() }
    }
}

impl From<ludo_storage::StoreError> for ServiceError {
    fn from(err: ludo_storage::StoreError) -> Self {
        ServiceError::Storage(err.to_string())
    }
}
