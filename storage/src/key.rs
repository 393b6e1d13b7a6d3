//! Keys of the sled trees, built so that byte order (what sled sorts by) is
//! the order scans rely on:
//! - records: stream id ‖ big-endian seq (24 bytes), so all records of a
//!   stream are adjacent, in seq order, and streams follow each other in id
//!   order ([`RecordKey`]);
//! - the feed: a big-endian position (8 bytes), so byte order is feed order
//!   ([`FeedKey`]);
//! - projection rows: the name's length ‖ the name ‖ the row's key, so each
//!   projection's rows are adjacent, in key order ([`ProjectionRowKey`]).

use std::fmt;

/// A game's stream id: 16 bytes (the service uses `UUIDv7` bytes, so byte order
/// is creation order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub [u8; 16]);

impl StreamId {
    /// Length of a stream id in bytes.
    pub const LEN: usize = 16;

    /// The id held in `bytes`, if it is exactly 16 bytes long.
    #[must_use]
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(StreamId)
    }

    /// The raw bytes.
    #[must_use]
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The smallest id greater than this one in byte order (`None` after
    /// `ff…ff`): where a scan for the next stream resumes.
    #[must_use]
    pub fn successor(self) -> Option<Self> {
        u128::from_be_bytes(self.0).checked_add(1).map(|next| StreamId(next.to_be_bytes()))
    }
}

impl fmt::Display for StreamId {
    /// Lower-case hex, 32 digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

/// Key of one record: stream id ‖ big-endian seq. The derived order (stream,
/// then seq) equals the byte order of [`RecordKey::to_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordKey {
    /// The stream the record belongs to.
    pub stream: StreamId,
    /// The record's position in its stream, from 0.
    pub seq: u64,
}

impl RecordKey {
    /// Length of an encoded key in bytes.
    pub const LEN: usize = StreamId::LEN + 8;

    /// The key of record `seq` of `stream`.
    #[must_use]
    pub const fn new(stream: StreamId, seq: u64) -> Self {
        RecordKey { stream, seq }
    }

    /// The 24 stored bytes: the stream id, then the seq big-endian.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut bytes = [0; Self::LEN];
        bytes[..StreamId::LEN].copy_from_slice(&self.stream.0);
        bytes[StreamId::LEN..].copy_from_slice(&self.seq.to_be_bytes());
        bytes
    }

    /// Decodes stored bytes; `None` unless they are exactly 24 bytes.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != Self::LEN {
            return None;
        }
        let (stream, seq) = bytes.split_at(StreamId::LEN);
        Some(RecordKey { stream: StreamId::from_slice(stream)?, seq: u64::from_be_bytes(seq.try_into().ok()?) })
    }
}

/// Key of a feed entry: its position, big-endian (8 bytes), so byte order
/// is position order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedKey(pub u64);

impl FeedKey {
    /// Length of an encoded key in bytes.
    pub const LEN: usize = 8;

    /// The 8 stored bytes.
    #[must_use]
    pub fn to_bytes(self) -> [u8; Self::LEN] {
        self.0.to_be_bytes()
    }

    /// Decodes stored bytes; `None` unless they are exactly 8 bytes.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Some(FeedKey(u64::from_be_bytes(bytes.try_into().ok()?)))
    }
}

/// Key of a projection's row: the name's length (one byte; names are at
/// most 64 bytes) ‖ the name ‖ the row's key. The length makes the prefix
/// of one name never the prefix of another's, so a projection's rows are
/// exactly the keys starting with [`ProjectionRowKey::prefix`], in the
/// order of their row keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectionRowKey<'a> {
    /// The projection (at most 255 bytes).
    pub name: &'a str,
    /// The row's key.
    pub key: &'a [u8],
}

impl ProjectionRowKey<'_> {
    /// The bytes every row key of projection `name` starts with.
    #[must_use]
    pub fn prefix(name: &str) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(1 + name.len());
        bytes.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
        bytes.extend_from_slice(name.as_bytes());
        bytes
    }

    /// The stored bytes.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Self::prefix(self.name);
        bytes.extend_from_slice(self.key);
        bytes
    }

    /// The row's key in stored bytes of projection `name`; `None` if they
    /// are not one of its rows.
    #[must_use]
    pub fn row_key<'b>(name: &str, bytes: &'b [u8]) -> Option<&'b [u8]> {
        bytes.strip_prefix(Self::prefix(name).as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Ids drawn so that shared prefixes (the interesting case for byte
    /// order) are common: each byte is 0, 1, 0xff or anything.
    fn stream_id() -> impl Strategy<Value = StreamId> {
        let byte = prop_oneof![Just(0u8), Just(1u8), Just(0xffu8), any::<u8>()];
        proptest::array::uniform16(byte).prop_map(StreamId)
    }

    fn seq() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..300, Just(u64::MAX), Just(u64::MAX - 1), Just(1 << 32), Just((1 << 8) - 1), any::<u64>(),]
    }

    fn record_key() -> impl Strategy<Value = RecordKey> {
        (stream_id(), seq()).prop_map(|(stream, seq)| RecordKey { stream, seq })
    }

    fn projection_name() -> impl Strategy<Value = String> {
        prop_oneof![Just("a".to_string()), Just("ab".to_string()), Just("b".to_string()), "[a-z0-9_-]{1,64}"]
    }

    proptest! {
        #[test]
        fn feed_byte_order_is_position_order(a in seq(), b in seq()) {
            prop_assert_eq!(FeedKey(a).to_bytes().cmp(&FeedKey(b).to_bytes()), a.cmp(&b));
            prop_assert_eq!(FeedKey::from_bytes(&FeedKey(a).to_bytes()), Some(FeedKey(a)));
        }

        #[test]
        fn projection_rows_sort_by_key_within_a_name_and_never_mix(
            n1 in projection_name(), n2 in projection_name(),
            k1 in proptest::collection::vec(any::<u8>(), 0..8), k2 in proptest::collection::vec(any::<u8>(), 0..8),
        ) {
            let (a, b) = (ProjectionRowKey { name: &n1, key: &k1 }.to_bytes(), ProjectionRowKey { name: &n2, key: &k2 }.to_bytes());
            if n1 == n2 {
                prop_assert_eq!(a.cmp(&b), k1.cmp(&k2));
            }
            // A row belongs to its own projection only.
            prop_assert_eq!(ProjectionRowKey::row_key(&n1, &a), Some(k1.as_slice()));
            prop_assert_eq!(ProjectionRowKey::row_key(&n2, &a).is_some(), n1 == n2);
        }

        #[test]
        fn byte_order_is_stream_then_seq_order(a in record_key(), b in record_key()) {
            let log_order = (a.stream, a.seq).cmp(&(b.stream, b.seq));
            prop_assert_eq!(a.to_bytes().cmp(&b.to_bytes()), log_order);
            prop_assert_eq!(a.cmp(&b), log_order);
        }

        #[test]
        fn same_stream_byte_order_is_seq_order(stream in stream_id(), a in seq(), b in seq()) {
            let (ka, kb) = (RecordKey::new(stream, a), RecordKey::new(stream, b));
            prop_assert_eq!(ka.to_bytes().cmp(&kb.to_bytes()), a.cmp(&b));
        }

        #[test]
        fn bytes_round_trip(key in record_key()) {
            prop_assert_eq!(RecordKey::from_bytes(&key.to_bytes()), Some(key));
        }

        #[test]
        fn wrong_lengths_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            prop_assume!(bytes.len() != RecordKey::LEN);
            prop_assert_eq!(RecordKey::from_bytes(&bytes), None);
        }

        #[test]
        fn successor_is_the_next_id_in_byte_order(id in stream_id()) {
            match id.successor() {
                Some(next) => {
                    prop_assert!(next > id);
                    // No id fits strictly between: every key of `id` sorts
                    // before the bare prefix of `next`.
                    let last_of_id = RecordKey::new(id, u64::MAX).to_bytes();
                    prop_assert!(last_of_id.as_slice() < next.0.as_slice());
                }
                None => prop_assert_eq!(id, StreamId([0xff; 16])),
            }
        }
    }

    #[test]
    fn successor_carries() {
        let mut id = [0u8; 16];
        id[15] = 0xff;
        id[14] = 0xff;
        let mut expected = [0u8; 16];
        expected[13] = 1;
        assert_eq!(StreamId(id).successor(), Some(StreamId(expected)));
        assert_eq!(StreamId([0xff; 16]).successor(), None);
    }

    #[test]
    fn display_is_hex() {
        let mut id = [0u8; 16];
        id[0] = 0xab;
        id[15] = 0x01;
        assert_eq!(StreamId(id).to_string(), "ab000000000000000000000000000001");
    }
}
