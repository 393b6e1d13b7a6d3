//! The log's records: their stored form, canonical bytes and hash chain.
//!
//! A game's log is one stream of JSON records. Record 0 is `game_created`;
//! every later record is one accepted `move`. Each record carries
//! `hash = SHA-256(previous hash ‖ canonical bytes of the record without its
//! hash)`, the previous hash of record 0 being 32 zero bytes, so editing any
//! byte of a stored record breaks the chain from that record on.
//!
//! Canonical bytes are the record's JSON with object keys sorted bytewise,
//! no insignificant whitespace, strings and numbers as `serde_json` writes
//! them (integers only). They are built by [`canonical_json`], which sorts
//! keys itself instead of relying on a map type's iteration order.
//!
//! Records carry a `format` number; a reader upcasts older formats rather
//! than rewriting stored records.

use ludo_engine::Seat;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The record format written by this version.
pub const FORMAT: u32 = 1;

/// The previous hash of record 0.
pub const GENESIS: [u8; 32] = [0; 32];

/// One record of a game's log, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Record format version.
    pub format: u32,
    /// Position in the log, from 0.
    pub seq: u64,
    /// When the record was appended (RFC 3339, UTC).
    pub at: String,
    /// What the record says.
    #[serde(flatten)]
    pub body: RecordBody,
    /// What the engine reported, as a spectator may see it at append time.
    pub effects: Vec<Value>,
    /// Hex SHA-256 chaining this record to the previous one.
    pub hash: String,
}

/// The content of a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordBody {
    /// Record 0: the game's set-up.
    GameCreated(GameCreated),
    /// An accepted move.
    Move(MoveRecord),
}

/// Record 0: everything needed to set the game up again, except the secret seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GameCreated {
    /// The game's id.
    pub game_id: String,
    /// The game kind (`cardinal` …).
    pub kind: String,
    /// The engine's ruleset version that must replay this log.
    pub ruleset: String,
    /// The options, defaults filled in (a board, where the game has one, is part of them).
    #[schema(value_type = crate::schema::GameOptions)]
    pub options: Value,
    /// Seat names, indexed by seat.
    pub seats: Vec<String>,
    /// Hex SHA-256 of the 32-byte seed, published before the seed itself.
    pub seed_commitment: String,
}

/// An accepted move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// The seat that moved.
    pub seat: Seat,
    /// The move, in the game's JSON shape.
    #[serde(rename = "move")]
    pub mv: Value,
    /// The client's idempotency key, when it sent one.
    pub request_id: Option<String>,
}

impl Record {
    /// Builds a record chained to `prev_hash`.
    #[must_use]
    pub fn seal(seq: u64, at: String, body: RecordBody, effects: Vec<Value>, prev_hash: &[u8; 32]) -> Record {
        let mut record = Record { format: FORMAT, seq, at, body, effects, hash: String::new() };
        record.hash = hex::encode(record.compute_hash(prev_hash));
        record
    }

    /// The hash this record should carry after `prev_hash`.
    #[must_use]
    pub fn compute_hash(&self, prev_hash: &[u8; 32]) -> [u8; 32] {
        let mut value = serde_json::to_value(self).expect("records serialize");
        if let Value::Object(map) = &mut value {
            map.remove("hash");
        }
        let mut hasher = Sha256::new();
        hasher.update(prev_hash);
        hasher.update(canonical_json(&value));
        hasher.finalize().into()
    }

    /// The stored hash, decoded.
    ///
    /// # Errors
    /// When the stored hash is not 64 hex digits.
    pub fn hash_bytes(&self) -> Result<[u8; 32], String> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(&self.hash, &mut out).map_err(|e| format!("hash is not 32 hex bytes: {e}"))?;
        Ok(out)
    }

    /// The bytes stored for this record.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        canonical_json(&serde_json::to_value(self).expect("records serialize"))
    }

    /// Parses a stored record.
    ///
    /// The bytes must be exactly the record's canonical form: an edit that
    /// parses to the same content (a renamed null field, say) is still an
    /// edit of the stored log, and is refused here.
    ///
    /// # Errors
    /// When the bytes are not a canonical record of a known format.
    pub fn from_bytes(bytes: &[u8]) -> Result<Record, String> {
        let record: Record = serde_json::from_slice(bytes).map_err(|e| format!("unreadable record: {e}"))?;
        if record.format != FORMAT {
            return Err(format!("unknown record format {}", record.format));
        }
        if record.to_bytes() != bytes {
            return Err("record bytes are not in canonical form".into());
        }
        Ok(record)
    }

    /// Checks this record's place and hash in the chain.
    ///
    /// # Errors
    /// Why the record does not belong at `seq` after `prev_hash`.
    pub fn verify_link(&self, seq: u64, prev_hash: &[u8; 32]) -> Result<[u8; 32], String> {
        if self.seq != seq {
            return Err(format!("record says seq {} at position {seq}", self.seq));
        }
        let stored = self.hash_bytes()?;
        if stored != self.compute_hash(prev_hash) {
            return Err("hash does not match the record's content and the previous hash".into());
        }
        Ok(stored)
    }
}

/// JSON with object keys sorted bytewise and no whitespace.
#[must_use]
pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("strings serialize");
                out.push(b':');
                write_canonical(item, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar).expect("scalars serialize"),
    }
}

/// Hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn created() -> Record {
        let body = RecordBody::GameCreated(GameCreated {
            game_id: "g".into(),
            kind: "cardinal".into(),
            ruleset: "cardinal/1".into(),
            options: json!({"first_seat": 1}),
            seats: vec!["Ann".into(), "Bob".into()],
            seed_commitment: "00".repeat(32),
        });
        Record::seal(0, "2026-11-22T00:00:00.000Z".into(), body, vec![], &GENESIS)
    }

    fn a_move(prev: &Record) -> Record {
        let body = RecordBody::Move(MoveRecord { seat: Seat(1), mv: json!({"type": "keep_cardinal"}), request_id: Some("r1".into()) });
        Record::seal(1, "2026-11-22T00:00:01.000Z".into(), body, vec![json!({"type": "x"})], &prev.hash_bytes().unwrap())
    }

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        let v: Value = serde_json::from_str(r#"{ "b": [1, {"z": 1, "a": "é"}], "a": null }"#).unwrap();
        assert_eq!(String::from_utf8(canonical_json(&v)).unwrap(), r#"{"a":null,"b":[1,{"a":"é","z":1}]}"#);
    }

    #[test]
    fn both_record_kinds_round_trip_through_bytes() {
        let r0 = created();
        let r1 = a_move(&r0);
        for record in [r0, r1] {
            assert_eq!(Record::from_bytes(&record.to_bytes()).unwrap(), record);
        }
    }

    #[test]
    fn chain_verifies_and_any_edit_breaks_it() {
        let r0 = created();
        let r1 = a_move(&r0);
        let h0 = r0.verify_link(0, &GENESIS).unwrap();
        r1.verify_link(1, &h0).unwrap();

        let mut edited = r1.clone();
        edited.body = RecordBody::Move(MoveRecord { seat: Seat(0), mv: json!({"type": "keep_cardinal"}), request_id: Some("r1".into()) });
        assert!(edited.verify_link(1, &h0).is_err(), "changed seat not detected");
        assert!(r1.verify_link(1, &GENESIS).is_err(), "wrong previous hash not detected");
        assert!(r1.verify_link(2, &h0).is_err(), "wrong position not detected");
    }

    #[test]
    fn flipping_any_byte_of_stored_bytes_is_caught() {
        let r0 = created();
        let bytes = r0.to_bytes();
        for i in 0..bytes.len() {
            let mut tampered = bytes.clone();
            tampered[i] ^= 0x01;
            let caught = match Record::from_bytes(&tampered) {
                Err(_) => true,
                Ok(record) => record.verify_link(0, &GENESIS).is_err(),
            };
            assert!(caught, "flipping byte {i} went unnoticed");
        }
    }

    #[test]
    fn unknown_format_is_refused() {
        let mut v = serde_json::to_value(created()).unwrap();
        v["format"] = json!(99);
        assert!(Record::from_bytes(&canonical_json(&v)).unwrap_err().contains("format"));
    }
}
