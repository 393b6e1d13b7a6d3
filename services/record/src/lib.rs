//! The game log of ludotheque, as an auditor reads it.
//!
//! A game is its log: record 0 (`game_created`) and one record per move or
//! seat change, each hash-chained to the one before in a canonical byte
//! form ([`record`]). Folding the log through the game's engine rebuilds
//! the game ([`replay`]), with the table of who sits where ([`table`]),
//! its clocks ([`clock`]) and where it stands ([`status`]); the registry
//! of the hosted engines ([`kinds`]) comes from the one list of games
//! ([`for_each_game!`]). An export bundle is a log with a header and what
//! it reveals ([`export`]), verified here offline, transparency-log
//! receipt included (through `ludo-transparency`).
//!
//! This is the crate an auditor embeds, and what `ludo verify` and the
//! server both verify with. It depends on the engines and on no runtime,
//! storage, HTTP, gRPC or metrics crate (no tokio, `ludo-storage`, axum,
//! hyper, tonic or prometheus-client): nothing here does I/O. Its OpenAPI
//! schemas come with the feature `schema`, which only the server turns on.

pub mod bot;
pub mod clock;
pub mod export;
pub mod games;
pub mod kinds;
pub mod record;
pub mod replay;
#[cfg(feature = "schema")]
pub mod schema;
pub mod shape;
pub mod status;
pub mod table;

pub use games::engines;
pub use status::{Forfeit, ForfeitReason, Status};
