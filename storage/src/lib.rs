//! The event store of ludotheque: every game is one append-only stream of
//! opaque records, and this crate keeps those streams.
//!
//! - [`EventStore`] is the contract the game service is written against
//!   (append with an expected next seq, read a range, list streams, side data
//!   sealed at creation, notices of durable appends, graceful close).
//! - [`SledStore`] is the embedded default: sled, one dedicated writer thread,
//!   group commit (concurrent appends share one flush).
//! - [`PgStore`] keeps the streams in a PostgreSQL database that any number
//!   of servers share.
//! - [`MemoryStore`] has the same semantics without a disk, for tests.
//! - Every store also keeps the global feed (every record at a dense
//!   position in commit order, [`FeedEntry`]) and the state of projections
//!   built from it ([`ProjectionCommit`], [`ProjectionLease`]); the checks
//!   common to every backend live in `projection`.
//!
//! Keys are built in [`key`]: stream id ‖ big-endian seq, so sled's byte order
//! is log order.
//!
//! # What "durable" means
//! An append is acknowledged (its [`PendingAppend`] resolves to `Ok`) only
//! after its records are flushed; see [`Durability`] for exactly what each
//! mode survives. Readers only ever see acknowledged records.

mod contract;
pub mod key;
mod memory;
mod pg_tls;
mod postgres;
mod projection;
mod sled_store;

pub use contract::{
    AppendRequest, Appended, EventStore, FeedEntry, MAX_FEED_PAGE, NOTICE_BUFFER, PendingAppend, StoreError, StoreFuture, StoreStats,
    StoredRecord, StreamSummary,
};
pub use key::{FeedKey, ProjectionRowKey, RecordKey, StreamId};
pub use memory::MemoryStore;
pub use postgres::{MIGRATIONS, NOTIFY_CHANNEL, POLL_WHILE_LISTENING, PgOptions, PgStore, schema_version};
pub use projection::{
    MAX_PROJECTION_KEY, MAX_PROJECTION_NAME, MAX_PROJECTION_PUTS, MAX_PROJECTION_SCAN, MAX_PROJECTION_VALUE, ProjectionCommit,
    ProjectionLease, ProjectionRow, validate_name as validate_projection_name,
};
pub use sled_store::{Durability, RECOVERY_INTERVAL, SledOptions, SledStore};
