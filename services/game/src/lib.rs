//! The event-sourced game service of ludotheque.
//!
//! *Decide*: load a game's state, ask its engine to apply a command, and if
//! it is legal append one record to the game's log. *Evolve*: a state is the
//! fold of the log through the engine (`ludo_record::replay`). This crate
//! owns versions, optimistic concurrency, idempotency, seat tokens,
//! per-viewer views, replays at any version, the cache of live games and
//! the keeping of the transparency log; it knows nothing of HTTP or gRPC.
//!
//! The log's format, replay and the verification of exports are
//! `ludo-record`'s, the transparency log's formats `ludo-transparency`'s:
//! this crate uses them as any auditor would. Its OpenAPI schemas come with
//! the feature `schema`, which only the server turns on.

pub mod api;
mod error;
mod metrics;
pub mod projection;
pub mod quota;
#[cfg(feature = "schema")]
pub mod schema;
pub mod secrets;
mod service;
pub mod text;
pub mod webhook;

pub use error::ServiceError;
pub use service::{
    BotSettings, Clock, DEFAULT_MAX_LIVE_GAMES, DEFAULT_SEAT_RATE, DEFAULT_THINK_MS, GameId, GameService, LogInfo, LogSettings,
    MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS, MAX_LIST_SCAN, MAX_NAME_CHARS, MAX_OPTIONS_BYTES, MAX_PAGE, MAX_REQUEST_ID, SystemClock,
    TICKET_LIFETIME, TransparencyLog, Watch, Watched, is_reserved,
};
