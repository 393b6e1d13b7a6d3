//! The event-sourced game service of ludotheque.
//!
//! *Decide*: load a game's state, ask its engine to apply a command, and if
//! it is legal append one record to the game's log. *Evolve*: a state is the
//! fold of the log through the engine ([`replay`]). This crate owns
//! versions, optimistic concurrency, idempotency, seat tokens, per-viewer
//! views, replays at any version and the cache of live games; it knows
//! nothing of HTTP or gRPC.

pub mod api;
pub mod bot;
pub mod clock;
mod error;
pub mod export;
pub mod games;
pub mod kinds;
mod metrics;
pub mod projection;
pub mod quota;
pub mod record;
pub mod replay;
pub mod schema;
pub mod secrets;
mod service;
pub mod shape;
pub mod status;
pub mod table;
pub mod text;
pub mod transparency;
pub mod webhook;

pub use error::ServiceError;
pub use games::engines;
pub use service::{
    BotSettings, Clock, DEFAULT_MAX_LIVE_GAMES, DEFAULT_SEAT_RATE, DEFAULT_THINK_MS, GameId, GameService, LogInfo, LogSettings,
    MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS, MAX_LIST_SCAN, MAX_NAME_CHARS, MAX_OPTIONS_BYTES, MAX_PAGE, MAX_REQUEST_ID, SystemClock,
    TICKET_LIFETIME, TransparencyLog, Watch, Watched, is_reserved,
};
pub use status::{Forfeit, ForfeitReason, Status};
