//! Game ids: UUIDv7, made in increasing order, and read back as the store's stream ids.

use super::tlog;
use crate::error::ServiceError;
use crate::secrets;
use ludo_storage::StreamId;
use std::sync::Mutex;
use std::time::SystemTime;

/// Game ids: UUIDv7, strictly increasing within this process (RFC 9562
/// §6.2, method 2: the random bits after the millisecond act as a counter
/// when two games are created in the same millisecond), so the store, which
/// lists streams in byte order, lists games oldest first.
#[derive(Debug, Default)]
pub(super) struct IdGenerator {
    last: Mutex<u128>,
}

impl IdGenerator {
    pub(super) fn next(&self, now: SystemTime) -> Result<StreamId, ServiceError> {
        let millis = now.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let random = secrets::random_bytes().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
        let mut random10 = [0u8; 10];
        random10.copy_from_slice(&random[..10]);
        let fresh = uuid::Builder::from_unix_timestamp_millis(millis, &random10).into_uuid().as_u128();
        let mut last = self.last.lock().expect("id lock");
        let id = if fresh > *last { fresh } else { bump(*last) };
        *last = id;
        Ok(StreamId(id.to_be_bytes()))
    }
}

/// The next UUIDv7 after `id` with the same millisecond: add one to the 74
/// random bits (12 of `rand_a`, 62 of `rand_b`), keeping version and variant.
fn bump(id: u128) -> u128 {
    const RAND_B: u128 = (1 << 62) - 1;
    const RAND_A: u128 = 0xFFF << 64;
    let counter = (((id & RAND_A) >> 64) << 62 | (id & RAND_B)) + 1;
    let keep = id & !(RAND_A | RAND_B);
    keep | ((counter >> 62) & 0xFFF) << 64 | (counter & RAND_B)
}

/// A game's id, parsed once where it enters (a REST path, a gRPC field):
/// a UUID, which is also the game's stream in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GameId(StreamId);

impl GameId {
    /// The game's stream in the store.
    #[must_use]
    pub fn stream(self) -> StreamId {
        self.0
    }
}

impl From<StreamId> for GameId {
    /// The game whose log is `stream` (a store's listing names streams).
    fn from(stream: StreamId) -> Self {
        GameId(stream)
    }
}

impl std::str::FromStr for GameId {
    type Err = ServiceError;

    /// # Errors
    /// `not_found` (no game has an id that is not a UUID), naming at most
    /// the first 64 characters of the text.
    fn from_str(id: &str) -> Result<Self, Self::Err> {
        parse_id(id).map(GameId)
    }
}

impl std::fmt::Display for GameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        uuid::Uuid::from_bytes(self.0.0).hyphenated().fmt(f)
    }
}

/// Parses a game id (a UUID) into its stream.
pub(super) fn parse_id(id: &str) -> Result<StreamId, ServiceError> {
    // The transparency log's own streams have ids no game can have.
    uuid::Uuid::try_parse(id)
        .ok()
        .map(|u| StreamId(*u.as_bytes()))
        .filter(|&stream| !tlog::is_reserved(stream))
        .ok_or_else(|| ServiceError::NotFound { what: "game", id: id.chars().take(64).collect() })
}

pub(super) fn game_id(stream: StreamId) -> String {
    uuid::Uuid::from_bytes(stream.0).hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_made_in_one_millisecond_still_increase_and_stay_v7() {
        let ids = IdGenerator::default();
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_000);
        let mut previous = ids.next(now).unwrap();
        for _ in 0..1000 {
            let id = ids.next(now).unwrap();
            assert!(id > previous);
            let uuid = uuid::Uuid::from_bytes(id.0);
            assert_eq!(uuid.get_version_num(), 7);
            assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122);
            previous = id;
        }
    }

    #[test]
    fn bump_carries_from_rand_b_into_rand_a() {
        let id = uuid::Builder::from_unix_timestamp_millis(1, &[0xFF; 10]).into_uuid().as_u128();
        let next = bump(id & !(0xFFF << 64));
        let uuid = uuid::Uuid::from_u128(next);
        assert_eq!(uuid.get_version_num(), 7);
        assert_eq!((next >> 64) & 0xFFF, 1, "the carry reaches rand_a");
        assert_eq!(next & ((1 << 62) - 1), 0);
    }
}
