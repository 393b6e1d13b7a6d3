//! The global feed on sled, and how a group of appends is committed.
//!
//! # The feed tree is where records are committed
//! The writer commits a group of appends as **one key** of the `feed` tree:
//! key = the group's first position ([`FeedKey`]), value = every record of
//! the group with its stream, seq and the streams' sealed data (an
//! [inline group](FORMAT_INLINE)). One key is atomic by itself in sled, so a
//! crash leaves either the whole group, positions and records together, or
//! none of it: never a record without its position, a position without its
//! record, or a gap in the positions (groups take consecutive positions, and
//! a group is written only after the previous one's flush).
//!
//! Only once that key is flushed does the writer *derive* the group into
//! the trees readers use by stream (`records`, `sealed`): plain inserts,
//! not atomic together and not flushed yet, which is fine because the feed
//! already holds them. The `derived` mark (tree `meta`) says up to which
//! position that derivation is known to be durable; it is written only for
//! groups whose derived writes were followed by a completed flush, so it
//! never runs ahead, and only every few thousand positions, so it costs no
//! write per group. Opening (and reopening after a failed write) derives
//! again every group after it ([`repair`]); inserting what is already there
//! is harmless.
//!
//! Why not write records and positions in one sled transaction: sled's
//! transactions and batches roll its I/O buffer twice, which made a
//! one-record append plus flush about 1.5–2× as slow (measured before this
//! change); one key per group keeps an append at one insert and one flush,
//! as before the feed existed. The price is that new records are stored
//! twice (in the feed and by stream).
//!
//! # Records from before the feed
//! A database written before the feed existed has records and no feed.
//! [`upgrade`] gives them positions once, on open, in stream id then seq
//! order (their commit order is not known), as groups that point at the
//! records instead of holding them ([`FORMAT_POINTERS`]), each group
//! flushed before the next: an interrupted upgrade resumes after the last
//! group written. The `feed` mark (tree `meta`) says it is done, so later
//! opens cost one read.

use sled::IVec;

use super::{Handles, backend, corrupt_key};
use crate::contract::{FeedEntry, StoreError};
use crate::key::{FeedKey, RecordKey, StreamId};

/// A feed value holding a group's records (what the writer commits).
pub(super) const FORMAT_INLINE: u8 = 1;
/// A feed value pointing at records of the `records` tree (what the upgrade
/// of an older database writes).
pub(super) const FORMAT_POINTERS: u8 = 2;

/// Key in `meta`: present once every record has its position.
const FEED_MARK: &[u8] = b"feed";
/// The version of the feed written under [`FEED_MARK`].
const FEED_VERSION: u8 = 1;
/// Key in `meta`: the position up to which groups are durably derived.
const DERIVED_MARK: &[u8] = b"derived";

/// Records per group written by [`upgrade`].
const UPGRADE_GROUP: usize = 10_000;

/// One append of a group, as committed in the feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Committed {
    pub(super) stream: StreamId,
    pub(super) first_seq: u64,
    pub(super) records: Vec<Vec<u8>>,
    pub(super) sealed: Option<Vec<u8>>,
}

/// A decoded feed value.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Group {
    /// The records themselves.
    Inline(Vec<Committed>),
    /// Where the records are, in position order.
    Pointers(Vec<RecordKey>),
}

impl Group {
    /// Number of records (= positions) in the group.
    pub(super) fn len(&self) -> u64 {
        match self {
            Group::Inline(appends) => appends.iter().map(|a| a.records.len() as u64).sum(),
            Group::Pointers(keys) => keys.len() as u64,
        }
    }
}

/// Encodes appends (with their records) as one inline group. Lengths are
/// big-endian `u32`s; an append is: stream id, first seq, record count,
/// sealed flag (and sealed data), then each record.
pub(super) fn encode_inline<'a>(appends: impl Iterator<Item = (StreamId, u64, &'a [Vec<u8>], Option<&'a [u8]>)>) -> Vec<u8> {
    let mut out = vec![FORMAT_INLINE];
    let mut count = 0_u32;
    out.extend_from_slice(&count.to_be_bytes());
    for (stream, first_seq, records, sealed) in appends {
        count += 1;
        out.extend_from_slice(&stream.0);
        out.extend_from_slice(&first_seq.to_be_bytes());
        out.extend_from_slice(&len32(records.len()).to_be_bytes());
        match sealed {
            Some(sealed) => {
                out.push(1);
                out.extend_from_slice(&len32(sealed.len()).to_be_bytes());
                out.extend_from_slice(sealed);
            }
            None => out.push(0),
        }
        for record in records {
            out.extend_from_slice(&len32(record.len()).to_be_bytes());
            out.extend_from_slice(record);
        }
    }
    out[1..5].copy_from_slice(&count.to_be_bytes());
    out
}

/// A length as stored. A group is at most about 8 MiB plus one append
/// (which the service bounds far below 4 GiB).
fn len32(len: usize) -> u32 {
    u32::try_from(len).expect("a record, sealed data or group under 4 GiB")
}

/// Encodes record keys as one pointer group.
fn encode_pointers(keys: &[RecordKey]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + keys.len() * RecordKey::LEN);
    out.push(FORMAT_POINTERS);
    out.extend_from_slice(&len32(keys.len()).to_be_bytes());
    for key in keys {
        out.extend_from_slice(&key.to_bytes());
    }
    out
}

/// Reads a stored feed value.
struct Reader<'a> {
    bytes: &'a [u8],
    at: FeedKey,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let (head, rest) = self
            .bytes
            .split_at_checked(n)
            .ok_or_else(|| StoreError::Backend(format!("the feed group at position {} is cut short", self.at.0)))?;
        self.bytes = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<usize, StoreError> {
        let bytes: [u8; 4] = self.take(4)?.try_into().unwrap_or_default();
        Ok(usize::try_from(u32::from_be_bytes(bytes)).unwrap_or(usize::MAX))
    }

    fn u64(&mut self) -> Result<u64, StoreError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }

    fn stream(&mut self) -> Result<StreamId, StoreError> {
        Ok(StreamId(self.take(StreamId::LEN)?.try_into().unwrap_or_default()))
    }
}

/// Decodes the feed value stored at `at`.
pub(super) fn decode(at: FeedKey, bytes: &[u8]) -> Result<Group, StoreError> {
    let mut reader = Reader { bytes, at };
    let format = reader.take(1)?[0];
    let count = reader.u32()?;
    let group = match format {
        FORMAT_INLINE => {
            let mut appends = Vec::with_capacity(count.min(1024));
            for _ in 0..count {
                let (stream, first_seq, records) = (reader.stream()?, reader.u64()?, reader.u32()?);
                let sealed = match reader.take(1)?[0] {
                    0 => None,
                    _ => {
                        let len = reader.u32()?;
                        Some(reader.take(len)?.to_vec())
                    }
                };
                let records = (0..records)
                    .map(|_| {
                        let len = reader.u32()?;
                        Ok(reader.take(len)?.to_vec())
                    })
                    .collect::<Result<Vec<_>, StoreError>>()?;
                appends.push(Committed { stream, first_seq, records, sealed });
            }
            Group::Inline(appends)
        }
        FORMAT_POINTERS => Group::Pointers(
            (0..count)
                .map(|_| {
                    let key = reader.take(RecordKey::LEN)?;
                    RecordKey::from_bytes(key).ok_or_else(|| corrupt_key(key))
                })
                .collect::<Result<_, _>>()?,
        ),
        other => return Err(StoreError::Backend(format!("the feed group at position {} has unknown format {other}", at.0))),
    };
    if !reader.bytes.is_empty() {
        return Err(StoreError::Backend(format!("the feed group at position {} has {} bytes too many", at.0, reader.bytes.len())));
    }
    Ok(group)
}

fn decode_entry(entry: sled::Result<(IVec, IVec)>) -> Result<(FeedKey, Group), StoreError> {
    let (key, value) = entry.map_err(|e| backend("reading the feed tree", e))?;
    let at = FeedKey::from_bytes(&key).ok_or_else(|| StoreError::Backend(format!("a feed key of {} bytes", key.len())))?;
    Ok((at, decode(at, &value)?))
}

/// The highest position in the feed tree (0: empty).
pub(super) fn stored_head(handles: &Handles) -> Result<u64, StoreError> {
    match handles.feed.last().transpose() {
        None => Ok(0),
        Some(entry) => {
            let (at, group) = decode_entry(entry)?;
            Ok(at.0 + group.len() - 1)
        }
    }
}

/// Entries at positions `after + 1 ..= head.min(after + limit)`.
pub(super) fn read(handles: &Handles, head: u64, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
    let last = head.min(after.saturating_add(u64::try_from(limit).unwrap_or(u64::MAX)));
    if after >= last {
        return Ok(Vec::new());
    }
    let first = after + 1;
    // The group holding `first` starts at or before it.
    let start = match handles.feed.range(..=FeedKey(first).to_bytes()).next_back() {
        Some(entry) => entry.map_err(|e| backend("reading the feed tree", e))?.0,
        None => IVec::from(&FeedKey(first).to_bytes()[..]),
    };
    let mut out = Vec::new();
    for entry in handles.feed.range(start..) {
        let (at, group) = decode_entry(entry)?;
        if at.0 > last {
            break;
        }
        let positions = at.0..;
        match group {
            Group::Inline(appends) => {
                let records =
                    appends.into_iter().flat_map(|a| (a.first_seq..).zip(a.records).map(move |(seq, bytes)| (a.stream, seq, bytes)));
                for (position, (stream, seq, bytes)) in positions.zip(records) {
                    if (first..=last).contains(&position) {
                        out.push(FeedEntry { position, stream, seq, bytes });
                    }
                }
            }
            Group::Pointers(keys) => {
                for (position, key) in positions.zip(keys) {
                    if (first..=last).contains(&position) {
                        let bytes =
                            handles.records.get(key.to_bytes()).map_err(|e| backend("reading the records tree", e))?.ok_or_else(|| {
                                StoreError::Backend(format!(
                                    "feed position {position} points at a missing record {} of {}",
                                    key.seq, key.stream
                                ))
                            })?;
                        out.push(FeedEntry { position, stream: key.stream, seq: key.seq, bytes: bytes.to_vec() });
                    }
                }
            }
        }
    }
    let expected = last - after;
    if out.len() as u64 != expected || out.first().map(|e| e.position) != Some(first) {
        return Err(StoreError::Backend(format!(
            "the feed holds {} of the {expected} positions after {after} up to {last}: a gap in the feed",
            out.len()
        )));
    }
    Ok(out)
}

/// Writes a group's records and sealed data where readers look for them by
/// stream (see the module docs: after the group's flush). `only_missing`
/// (a repair on open) writes only the copies that did not reach the disk:
/// a copy that did is never replaced, so a stored record altered on disk
/// stays altered, and its game's replay reports it, rather than being
/// silently mended from the feed.
pub(super) fn derive(handles: &Handles, appends: &[Committed], only_missing: bool) -> Result<(), StoreError> {
    for append in appends {
        for (seq, record) in (append.first_seq..).zip(&append.records) {
            let key = RecordKey::new(append.stream, seq).to_bytes();
            if only_missing && handles.records.contains_key(key).map_err(|e| backend("reading a record", e))? {
                continue;
            }
            handles.records.insert(key, record.as_slice()).map_err(|e| backend("writing a record", e))?;
        }
        if let Some(sealed) = &append.sealed {
            if only_missing && handles.sealed.contains_key(append.stream.0).map_err(|e| backend("reading sealed data", e))? {
                continue;
            }
            handles.sealed.insert(append.stream.0, sealed.as_slice()).map_err(|e| backend("writing sealed data", e))?;
        }
    }
    Ok(())
}

/// The position up to which groups are durably derived.
pub(super) fn derived_mark(handles: &Handles) -> Result<u64, StoreError> {
    let stored = handles.meta.get(DERIVED_MARK).map_err(|e| backend("reading the derived mark", e))?;
    Ok(stored.and_then(|value| Some(u64::from_be_bytes(value.as_ref().try_into().ok()?))).unwrap_or(0))
}

/// Writes the derived mark (flushed with whatever follows).
pub(super) fn set_derived_mark(handles: &Handles, position: u64) -> Result<(), StoreError> {
    handles.meta.insert(DERIVED_MARK, &position.to_be_bytes()[..]).map_err(|e| backend("writing the derived mark", e))?;
    Ok(())
}

/// Derives every group after the derived mark again, flushes, and moves the
/// mark to the feed's head: after it, the `records` and `sealed` trees hold
/// every record of the feed. Answers the head.
pub(super) fn repair(handles: &Handles) -> Result<u64, StoreError> {
    let mark = derived_mark(handles)?;
    let mut repaired = 0_u64;
    for entry in handles.feed.range(FeedKey(mark.saturating_add(1)).to_bytes()..) {
        let (_, group) = decode_entry(entry)?;
        if let Group::Inline(appends) = &group {
            derive(handles, appends, true)?;
        }
        repaired += group.len();
    }
    let head = stored_head(handles)?;
    if head != mark {
        handles.db.flush().map_err(|e| backend("flushing the repaired records", e))?;
        set_derived_mark(handles, head)?;
        handles.db.flush().map_err(|e| backend("flushing the derived mark", e))?;
        tracing::info!(repaired, head, "the event store derived the feed's last groups again after a stop");
    }
    Ok(head)
}

/// Gives the records of a database from before the feed their positions,
/// once (see the module docs). A no-op once done.
pub(super) fn upgrade(handles: &Handles) -> Result<(), StoreError> {
    let mark = handles.meta.get(FEED_MARK).map_err(|e| backend("reading the feed mark", e))?;
    if mark.as_ref().is_some_and(|version| version.as_ref() == [FEED_VERSION]) {
        return Ok(());
    }
    if let Some(version) = mark {
        return Err(StoreError::Backend(format!("the feed is of version {version:?}, unknown to this build: run a newer ludo")));
    }
    // Resume after the last group an interrupted upgrade wrote (only
    // pointer groups exist before the mark).
    let (mut next, mut after) = match handles.feed.last().transpose() {
        None => (1, None),
        Some(entry) => match decode_entry(entry)? {
            (at, Group::Pointers(keys)) => (at.0 + keys.len() as u64, keys.last().copied()),
            (at, Group::Inline(_)) => {
                return Err(StoreError::Backend(format!("the feed holds appends at position {} but was never completed", at.0)));
            }
        },
    };
    let started = next;
    loop {
        let from = match after {
            Some(key) => std::ops::Bound::Excluded(IVec::from(&key.to_bytes()[..])),
            None => std::ops::Bound::Unbounded,
        };
        let keys = handles
            .records
            .range::<IVec, _>((from, std::ops::Bound::Unbounded))
            .take(UPGRADE_GROUP)
            .map(|entry| {
                let (key, _) = entry.map_err(|e| backend("reading the records tree", e))?;
                RecordKey::from_bytes(&key).ok_or_else(|| corrupt_key(&key))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let Some(last) = keys.last().copied() else { break };
        handles.feed.insert(FeedKey(next).to_bytes(), encode_pointers(&keys)).map_err(|e| backend("writing the feed", e))?;
        // Flushed before the next group: an interruption leaves a prefix.
        handles.db.flush().map_err(|e| backend("flushing the feed", e))?;
        next += keys.len() as u64;
        after = Some(last);
    }
    set_derived_mark(handles, next - 1)?;
    handles.meta.insert(FEED_MARK, &[FEED_VERSION][..]).map_err(|e| backend("writing the feed mark", e))?;
    handles.db.flush().map_err(|e| backend("flushing the feed mark", e))?;
    if next > started {
        tracing::info!(
            records = next - started,
            head = next - 1,
            "the event store gave the records written before the feed their positions"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_round_trip() {
        let (a, b) = (StreamId([1; 16]), StreamId([2; 16]));
        let appends = [
            Committed { stream: a, first_seq: 0, records: vec![b"x".to_vec(), vec![]], sealed: Some(b"seed".to_vec()) },
            Committed { stream: b, first_seq: 7, records: vec![vec![9; 300]], sealed: None },
        ];
        let bytes = encode_inline(appends.iter().map(|a| (a.stream, a.first_seq, a.records.as_slice(), a.sealed.as_deref())));
        let group = decode(FeedKey(5), &bytes).expect("decode");
        assert_eq!(group.len(), 3);
        assert_eq!(group, Group::Inline(appends.to_vec()));
        let keys = [RecordKey::new(a, 0), RecordKey::new(b, 3)];
        assert_eq!(decode(FeedKey(1), &encode_pointers(&keys)), Ok(Group::Pointers(keys.to_vec())));
    }

    #[test]
    fn damaged_groups_are_reported_not_panicked_on() {
        let bytes = encode_inline([(StreamId([1; 16]), 0, &[b"abc".to_vec()][..], None)].into_iter());
        for cut in 0..bytes.len() {
            assert!(decode(FeedKey(1), &bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(FeedKey(1), &longer).is_err());
        let mut unknown = bytes;
        unknown[0] = 9;
        assert!(decode(FeedKey(1), &unknown).is_err());
    }
}
