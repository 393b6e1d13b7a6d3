//! The log's records: their stored form, canonical bytes and hash chain.
//!
//! A game's log is one stream of JSON records. Record 0 is `game_created`;
//! every later record is one accepted `move` or, from format 2 on, a
//! `seat_bot` record (a seat handed to a server bot, or taken back). Each record carries
//! `hash = SHA-256(previous hash ‖ canonical bytes of the record without its
//! hash)`, the previous hash of record 0 being 32 zero bytes, so editing any
//! byte of a stored record breaks the chain from that record on.
//!
//! Canonical bytes are the record's JSON with object keys sorted bytewise,
//! no insignificant whitespace, strings and numbers as `serde_json` writes
//! them (integers only). They are built by [`canonical_json`], which sorts
//! keys itself instead of relying on a map type's iteration order.
//!
//! A record's bytes are written once, when it is sealed: the hash is taken
//! over them and they are stored as they are. A record read back keeps the
//! bytes it was read from, and its hash is checked over those very bytes,
//! so neither writing nor checking a record builds its JSON again.
//!
//! Records carry a `format` number; a reader upcasts older formats rather
//! than rewriting stored records, and a record read keeps its format so
//! its bytes (and hash) stay exactly what was written:
//! - format 1: `game_created` and `move`;
//! - format 2: `game_created` gains `bots` (per
//!   seat, the server bot that plays it, or null), `move` gains `bot`
//!   (which bot made it, or null), and the `seat_bot` record appears. A
//!   format 1 record reads as a format 2 one without bots;
//! - format 3: `game_created` gains `public`
//!   (whether anyone may join its open seats) and `clock` (its time
//!   controls, or null), and its `seats` may hold `null` for a seat left
//!   open; seat records appear: `seat_joined`, `seat_left`,
//!   `game_cancelled`, `seat_token` (a reissued token's hash),
//!   `seat_resigned` and `timeout`. An older record reads as a format 3
//!   one with no open seat and no clock;
//! - format 4 (this version writes it): `seat_token` gains `by` (`admin`,
//!   or `seat` for a seat that renewed its own token). A format 3
//!   `seat_token` reads with no `by`: only the admin could write one then.
//!   Every other type has format 3's members.
//!
//! A record of the new seat types is written from its type's key list
//! (`keys_of`) by one generic writer, so the list that says which members
//! a reader expects is also what the writer follows.

mod canonical;
mod sorted;
#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use ludo_engine::Seat;
use serde::{Deserialize, Serialize};

use crate::bot::{BotMark, BotSeat};
use crate::clock::TimeControl;
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

pub use canonical::canonical_json;
use canonical::{write_canonical, write_str};
pub(crate) use sorted::write_sorted;

/// The record format written by this version.
pub const FORMAT: u32 = 4;

/// The oldest record format this version reads.
pub const OLDEST_FORMAT: u32 = 1;

/// The previous hash of record 0.
pub const GENESIS: [u8; 32] = [0; 32];

/// One record of a game's log, as stored.
///
/// A record is made by [`Record::seal`] or read by [`Record::from_bytes`],
/// never edited: its fields are what its stored bytes say, and
/// [`Record::to_bytes`] and [`Record::verify_link`] work on those bytes.
/// (Debug builds check that the fields were left alone.)
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Record format version.
    pub format: u32,
    /// Position in the log, from 0.
    pub seq: u64,
    /// When the record was appended (RFC 3339, UTC).
    pub at: String,
    /// What the record says.
    pub body: RecordBody,
    /// Hex SHA-256 chaining this record to the previous one.
    pub hash: String,
    /// The bytes stored for this record.
    stored: Stored,
    /// Where in the stored bytes each effect is: what the engine reported,
    /// as a spectator may see it at append time (see [`Record::effects`]).
    effects: Vec<Range<usize>>,
}

/// The content of a record.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordBody {
    /// Record 0: the game's set-up.
    GameCreated(GameCreated),
    /// An accepted move.
    Move(MoveRecord),
    /// A seat handed to a server bot, or taken back by its player (format 2 on).
    SeatBot(SeatBotRecord),
    /// An open seat taken, by a person or a server bot (format 3 on).
    SeatJoined(SeatJoined),
    /// A seat's player left before the game started (format 3 on).
    SeatLeft {
        /// The seat, open again.
        seat: Seat,
    },
    /// The game called off before it started (format 3 on).
    GameCancelled,
    /// A new token for a seat; the old one stops opening it (format 3 on).
    SeatToken {
        /// The seat.
        seat: Seat,
        /// Hex SHA-256 of the new token.
        token_hash: String,
        /// Who asked for it (format 4 on; `None` in a format 3 record, when
        /// only the game's admin could).
        by: Option<crate::table::TokenBy>,
    },
    /// A seat resigned (format 3 on).
    SeatResigned {
        /// The seat.
        seat: Seat,
        /// In a game of more than two sides, the server bot that plays the
        /// seat from now on; `None`: the game of two sides ended.
        bot: Option<BotSeat>,
    },
    /// A seat's time ran out (format 3 on).
    Timeout {
        /// The seat.
        seat: Seat,
        /// Whether the seat loses as if it had resigned (the game's
        /// `on_timeout: lose`); otherwise `bot` makes its move.
        forfeit: bool,
        /// The server bot that makes the seat's move (not a forfeit), or
        /// plays the seat from now on (a forfeit in a game of more than two
        /// sides); `None`: a forfeit ended a game of two sides.
        bot: Option<BotSeat>,
    },
}

/// An open seat taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatJoined {
    /// The seat.
    pub seat: Seat,
    /// The name it is taken under.
    pub name: String,
    /// The server bot that takes it, for a seat handed to a bot.
    pub bot: Option<BotSeat>,
    /// Hex SHA-256 of the seat's new token, for a seat a person takes.
    pub token_hash: Option<String>,
}

impl RecordBody {
    /// The record type's name in the log.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            RecordBody::GameCreated(_) => "game_created",
            RecordBody::Move(_) => "move",
            RecordBody::SeatBot(_) => "seat_bot",
            RecordBody::SeatJoined(_) => "seat_joined",
            RecordBody::SeatLeft { .. } => "seat_left",
            RecordBody::GameCancelled => "game_cancelled",
            RecordBody::SeatToken { .. } => "seat_token",
            RecordBody::SeatResigned { .. } => "seat_resigned",
            RecordBody::Timeout { .. } => "timeout",
        }
    }

    /// The seat the record is about, if it is about one.
    #[must_use]
    pub fn seat(&self) -> Option<Seat> {
        match self {
            RecordBody::GameCreated(_) | RecordBody::GameCancelled => None,
            RecordBody::Move(mv) => Some(mv.seat),
            RecordBody::SeatBot(handed) => Some(handed.seat),
            RecordBody::SeatJoined(joined) => Some(joined.seat),
            RecordBody::SeatLeft { seat }
            | RecordBody::SeatToken { seat, .. }
            | RecordBody::SeatResigned { seat, .. }
            | RecordBody::Timeout { seat, .. } => Some(*seat),
        }
    }
}

/// A seat handed to a server bot (`bot`), or taken back by its player (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatBotRecord {
    /// The seat.
    pub seat: Seat,
    /// The bot that plays it from now on; `None`: its player does.
    pub bot: Option<BotSeat>,
}

/// Record 0: everything needed to set the game up again, except the secret seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GameCreated {
    /// The game's id.
    pub game_id: String,
    /// The game kind (`cardinal` …).
    pub kind: String,
    /// The engine's ruleset version that must replay this log.
    pub ruleset: String,
    /// The options, defaults filled in (a board, where the game has one, is part of them).
    #[cfg_attr(feature = "schema", schema(value_type = crate::schema::GameOptions))]
    pub options: Value,
    /// Seat names, indexed by seat; null for a seat left open (format 3 on).
    pub seats: Vec<Option<String>>,
    /// Per seat, the server bot that plays it from the start, or null
    /// (records of format 1 have none: every seat is a player's).
    #[serde(default)]
    pub bots: Vec<Option<BotSeat>>,
    /// Whether anyone may join its open seats, not only the holders of
    /// their invitations (records before format 3: no).
    #[serde(default)]
    pub public: bool,
    /// The game's time controls (records before format 3: none).
    #[serde(default)]
    pub clock: Option<TimeControl>,
    /// Hex SHA-256 of the 32-byte seed, published before the seed itself.
    pub seed_commitment: String,
}

impl GameCreated {
    /// The bot that plays `seat` from the start, if any.
    #[must_use]
    pub fn bot(&self, seat: usize) -> Option<BotSeat> {
        self.bots.get(seat).copied().flatten()
    }
}

/// An accepted move.
#[derive(Clone, Debug)]
pub struct MoveRecord {
    /// The seat that moved.
    pub seat: Seat,
    /// The move, in the game's JSON shape, in canonical form: written so
    /// by [`MoveRecord::new`], or read from checked canonical bytes.
    mv: Box<RawValue>,
    /// The client's idempotency key, when it sent one.
    pub request_id: Option<String>,
    /// The server bot that made the move, if one did.
    pub bot: Option<BotMark>,
}

impl MoveRecord {
    /// The record of `seat`'s move `mv` (an engine's move, or JSON).
    ///
    /// # Errors
    /// When the move does not serialize as JSON.
    pub fn new<M: Serialize + ?Sized>(seat: Seat, mv: &M, request_id: Option<String>) -> Result<MoveRecord, serde_json::Error> {
        let mut bytes = Vec::with_capacity(64);
        write_sorted(mv, &mut bytes)?;
        let text = String::from_utf8(bytes).expect("serde_json writes UTF-8");
        Ok(MoveRecord { seat, mv: RawValue::from_string(text)?, request_id, bot: None })
    }

    /// This record, as a move the server's bot `bot` made.
    #[must_use]
    pub fn by_bot(mut self, bot: BotMark) -> MoveRecord {
        self.bot = Some(bot);
        self
    }

    /// The move, as its canonical JSON text.
    #[must_use]
    pub fn move_json(&self) -> &str {
        self.mv.get()
    }
}

impl PartialEq for MoveRecord {
    fn eq(&self, other: &Self) -> bool {
        (self.seat, self.mv.get(), &self.request_id, &self.bot) == (other.seat, other.mv.get(), &other.request_id, &other.bot)
    }
}

/// A record's stored bytes, with where its hash member sits in them.
#[derive(Clone, PartialEq, Eq)]
struct Stored {
    /// Canonical JSON of the whole record, its hash included. Shared:
    /// cloning a record does not copy them.
    bytes: Arc<[u8]>,
    /// The `"hash":"…",` member (its comma included): the hash covers
    /// every byte around it, which are the canonical bytes of the record
    /// without its hash.
    hash_member: Range<usize>,
}

impl Stored {
    /// The hash these bytes should carry after `prev_hash`.
    fn hash(&self, prev_hash: &[u8; 32]) -> [u8; 32] {
        hash_around(prev_hash, &self.bytes, &self.hash_member)
    }
}

/// SHA-256 of `prev_hash ‖ bytes without the hash member`.
fn hash_around(prev_hash: &[u8; 32], bytes: &[u8], hash_member: &Range<usize>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash);
    hasher.update(&bytes[..hash_member.start]);
    hasher.update(&bytes[hash_member.end..]);
    hasher.finalize().into()
}

impl fmt::Debug for Stored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Stored({} bytes)", self.bytes.len())
    }
}

/// The top-level keys of each record type in each format, in canonical
/// (bytewise) order.
const MOVE_KEYS_1: [&str; 9] = ["at", "effects", "format", "hash", "move", "request_id", "seat", "seq", "type"];
const CREATED_KEYS_1: [&str; 12] =
    ["at", "effects", "format", "game_id", "hash", "kind", "options", "ruleset", "seats", "seed_commitment", "seq", "type"];
const MOVE_KEYS_2: [&str; 10] = ["at", "bot", "effects", "format", "hash", "move", "request_id", "seat", "seq", "type"];
const CREATED_KEYS_2: [&str; 13] =
    ["at", "bots", "effects", "format", "game_id", "hash", "kind", "options", "ruleset", "seats", "seed_commitment", "seq", "type"];
const SEAT_BOT_KEYS_2: [&str; 8] = ["at", "bot", "effects", "format", "hash", "seat", "seq", "type"];
const CREATED_KEYS_3: [&str; 15] = [
    "at",
    "bots",
    "clock",
    "effects",
    "format",
    "game_id",
    "hash",
    "kind",
    "options",
    "public",
    "ruleset",
    "seats",
    "seed_commitment",
    "seq",
    "type",
];
const SEAT_JOINED_KEYS_3: [&str; 10] = ["at", "bot", "effects", "format", "hash", "name", "seat", "seq", "token_hash", "type"];
const SEAT_LEFT_KEYS_3: [&str; 7] = ["at", "effects", "format", "hash", "seat", "seq", "type"];
const GAME_CANCELLED_KEYS_3: [&str; 6] = ["at", "effects", "format", "hash", "seq", "type"];
const SEAT_TOKEN_KEYS_3: [&str; 8] = ["at", "effects", "format", "hash", "seat", "seq", "token_hash", "type"];
const SEAT_TOKEN_KEYS_4: [&str; 9] = ["at", "by", "effects", "format", "hash", "seat", "seq", "token_hash", "type"];
const SEAT_RESIGNED_KEYS_3: [&str; 8] = ["at", "bot", "effects", "format", "hash", "seat", "seq", "type"];
const TIMEOUT_KEYS_3: [&str; 9] = ["at", "bot", "effects", "forfeit", "format", "hash", "seat", "seq", "type"];

/// The keys of a record of type `kind` (its JSON string) in `format`, if
/// that format has the type, with the type's name.
fn keys_of(kind: &[u8], format: u32) -> Option<(&'static [&'static str], &'static str)> {
    Some(match (kind, format) {
        (br#""move""#, 1) => (&MOVE_KEYS_1, "move"),
        (br#""game_created""#, 1) => (&CREATED_KEYS_1, "game_created"),
        (br#""move""#, 2..=4) => (&MOVE_KEYS_2, "move"),
        (br#""game_created""#, 2) => (&CREATED_KEYS_2, "game_created"),
        (br#""game_created""#, 3 | 4) => (&CREATED_KEYS_3, "game_created"),
        (br#""seat_bot""#, 2..=4) => (&SEAT_BOT_KEYS_2, "seat_bot"),
        (br#""seat_joined""#, 3 | 4) => (&SEAT_JOINED_KEYS_3, "seat_joined"),
        (br#""seat_left""#, 3 | 4) => (&SEAT_LEFT_KEYS_3, "seat_left"),
        (br#""game_cancelled""#, 3 | 4) => (&GAME_CANCELLED_KEYS_3, "game_cancelled"),
        (br#""seat_token""#, 3) => (&SEAT_TOKEN_KEYS_3, "seat_token"),
        (br#""seat_token""#, 4) => (&SEAT_TOKEN_KEYS_4, "seat_token"),
        (br#""seat_resigned""#, 3 | 4) => (&SEAT_RESIGNED_KEYS_3, "seat_resigned"),
        (br#""timeout""#, 3 | 4) => (&TIMEOUT_KEYS_3, "timeout"),
        _ => return None,
    })
}

/// Writes a record of one of the seat types, which carry no effects, from
/// its type's key list (see [`keys_of`]); the record's own members come
/// from [`write_member`].
fn write_keyed(
    out: &mut Vec<u8>,
    (format, seq, at): (u32, u64, &str),
    body: &RecordBody,
    hash: &str,
    effects: impl FnOnce(&mut Vec<u8>) -> Result<Vec<Range<usize>>, serde_json::Error>,
) -> Written {
    let type_json = format!("\"{}\"", body.type_name());
    let (keys, _) = keys_of(type_json.as_bytes(), format).expect("a record type of its format");
    let mut hash_member = 0..0;
    let mut effects_at = Vec::new();
    let mut effects = Some(effects);
    out.push(b'{');
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let start = out.len();
        write_str(key, out);
        out.push(b':');
        match *key {
            "at" => write_str(at, out),
            "effects" => {
                out.push(b'[');
                effects_at = (effects.take().expect("one effects member"))(out)?;
                out.push(b']');
            }
            "format" => serde_json::to_writer(&mut *out, &format).expect("integers serialize"),
            "hash" => {
                write_str(hash, out);
                // The comma the next member starts with belongs to it.
                hash_member = start..out.len() + 1;
            }
            "seq" => serde_json::to_writer(&mut *out, &seq).expect("integers serialize"),
            "type" => out.extend_from_slice(type_json.as_bytes()),
            own => write_member(body, own, out)?,
        }
    }
    out.push(b'}');
    Ok((hash_member, effects_at))
}

/// Writes the value of a seat record's own member `key`.
fn write_member(body: &RecordBody, key: &str, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let seat = |out: &mut Vec<u8>, seat: &Seat| serde_json::to_writer(&mut *out, seat);
    match (body, key) {
        (RecordBody::SeatJoined(joined), "seat") => seat(out, &joined.seat),
        (RecordBody::SeatJoined(joined), "name") => {
            write_str(&joined.name, out);
            Ok(())
        }
        (RecordBody::SeatJoined(joined), "bot") => write_optional(joined.bot.as_ref(), out),
        (RecordBody::SeatJoined(joined), "token_hash") => write_optional(joined.token_hash.as_ref(), out),
        (
            RecordBody::SeatLeft { seat: at }
            | RecordBody::SeatToken { seat: at, .. }
            | RecordBody::SeatResigned { seat: at, .. }
            | RecordBody::Timeout { seat: at, .. },
            "seat",
        ) => seat(out, at),
        (RecordBody::Timeout { forfeit, .. }, "forfeit") => {
            out.extend_from_slice(if *forfeit { b"true" } else { b"false" });
            Ok(())
        }
        (RecordBody::Timeout { bot, .. }, "bot") => write_optional(bot.as_ref(), out),
        (RecordBody::SeatToken { token_hash, .. }, "token_hash") => {
            write_str(token_hash, out);
            Ok(())
        }
        (RecordBody::SeatToken { by, .. }, "by") => {
            write_str(by.expect("a format 4 seat_token record says who asked").name(), out);
            Ok(())
        }
        (RecordBody::SeatResigned { bot, .. }, "bot") => write_optional(bot.as_ref(), out),
        _ => unreachable!("`{key}` is not a member of a {} record", body.type_name()),
    }
}

/// Writes `value` in canonical form, or `null`.
fn write_optional<T: Serialize>(value: Option<&T>, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match value {
        Some(value) => write_sorted(value, out),
        None => {
            out.extend_from_slice(b"null");
            Ok(())
        }
    }
}

/// What a seal writes where the hash will go, to hash the bytes around it.
const UNSEALED: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Writes a record's canonical bytes (`hash` as given) in `format` and
/// returns where its hash member is. The types of formats 1 and 2 (on the
/// path of every move) write their members here, by hand, in the order of
/// their keys (see [`keys_of`]): that order is the whole of the canonical
/// form's key sorting at the top level, and the nested values go through
/// [`write_canonical`] or [`write_sorted`]. The seat records go through
/// [`write_keyed`].
fn write_record(
    out: &mut Vec<u8>,
    (format, seq, at): (u32, u64, &str),
    body: &RecordBody,
    hash: &str,
    effects: impl FnOnce(&mut Vec<u8>) -> Result<Vec<Range<usize>>, serde_json::Error>,
) -> Written {
    if !matches!(body, RecordBody::GameCreated(_) | RecordBody::Move(_) | RecordBody::SeatBot(_)) {
        return write_keyed(out, (format, seq, at), body, hash, effects);
    }
    let number = |out: &mut Vec<u8>, n: u64| serde_json::to_writer(&mut *out, &n).expect("integers serialize");
    let hash_member = |out: &mut Vec<u8>| {
        let start = out.len();
        out.extend_from_slice(b"\"hash\":");
        write_str(hash, out);
        out.push(b',');
        start..out.len()
    };
    out.extend_from_slice(b"{\"at\":");
    write_str(at, out);
    if format >= 2 {
        match body {
            RecordBody::GameCreated(created) => {
                out.extend_from_slice(b",\"bots\":[");
                for seat in 0..created.seats.len() {
                    if seat > 0 {
                        out.push(b',');
                    }
                    write_optional(created.bot(seat).as_ref(), out)?;
                }
                out.push(b']');
                if format >= 3 {
                    out.extend_from_slice(b",\"clock\":");
                    write_optional(created.clock.as_ref(), out)?;
                }
            }
            RecordBody::Move(mv) => {
                out.extend_from_slice(b",\"bot\":");
                write_optional(mv.bot.as_ref(), out)?;
            }
            RecordBody::SeatBot(handed) => {
                out.extend_from_slice(b",\"bot\":");
                write_optional(handed.bot.as_ref(), out)?;
            }
            _ => unreachable!("seat records are written by write_keyed"),
        }
    }
    out.extend_from_slice(b",\"effects\":[");
    let effects = effects(out)?;
    out.extend_from_slice(b"],\"format\":");
    number(out, u64::from(format));
    out.push(b',');
    let member = match body {
        RecordBody::Move(mv) => {
            let member = hash_member(out);
            out.extend_from_slice(b"\"move\":");
            // Canonical already (see `MoveRecord::mv`).
            out.extend_from_slice(mv.move_json().as_bytes());
            out.extend_from_slice(b",\"request_id\":");
            match &mv.request_id {
                Some(id) => write_str(id, out),
                None => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(b",\"seat\":");
            serde_json::to_writer(&mut *out, &mv.seat).expect("seats serialize");
            member
        }
        RecordBody::SeatBot(handed) => {
            let member = hash_member(out);
            out.extend_from_slice(b"\"seat\":");
            serde_json::to_writer(&mut *out, &handed.seat).expect("seats serialize");
            member
        }
        RecordBody::GameCreated(created) => {
            out.extend_from_slice(b"\"game_id\":");
            write_str(&created.game_id, out);
            out.push(b',');
            let member = hash_member(out);
            out.extend_from_slice(b"\"kind\":");
            write_str(&created.kind, out);
            out.extend_from_slice(b",\"options\":");
            write_canonical(&created.options, out);
            if format >= 3 {
                out.extend_from_slice(if created.public { b",\"public\":true" } else { b",\"public\":false" });
            }
            out.extend_from_slice(b",\"ruleset\":");
            write_str(&created.ruleset, out);
            out.extend_from_slice(b",\"seats\":[");
            for (i, seat) in created.seats.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                match seat {
                    Some(name) => write_str(name, out),
                    None => out.extend_from_slice(b"null"),
                }
            }
            out.extend_from_slice(b"],\"seed_commitment\":");
            write_str(&created.seed_commitment, out);
            member
        }
        _ => unreachable!("seat records are written by write_keyed"),
    };
    out.extend_from_slice(b",\"seq\":");
    number(out, seq);
    out.extend_from_slice(match body {
        RecordBody::Move(_) => b",\"type\":\"move\"}",
        RecordBody::GameCreated(_) => b",\"type\":\"game_created\"}",
        _ => b",\"type\":\"seat_bot\"}",
    });
    Ok((member, effects))
}

/// Where [`write_record`] wrote the hash member and each effect.
type Written = Result<(Range<usize>, Vec<Range<usize>>), serde_json::Error>;

/// Writes `items` comma-separated, each with `write`, and answers where
/// each went.
fn write_list<T>(
    items: &[T],
    out: &mut Vec<u8>,
    mut write: impl FnMut(&T, &mut Vec<u8>) -> Result<(), serde_json::Error>,
) -> Result<Vec<Range<usize>>, serde_json::Error> {
    let mut at = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let start = out.len();
        write(item, out)?;
        at.push(start..out.len());
    }
    Ok(at)
}

/// A member a record of its type must have, unless it is `null`.
fn required<T>(value: Option<T>, record_type: &str, key: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("unreadable record: a {record_type} record's `{key}` is null"))
}

impl Record {
    /// Builds a record chained to `prev_hash`, writing its stored bytes.
    /// The effects (an engine's, or JSON) are written in canonical form
    /// straight from their type, with no JSON tree in between.
    ///
    /// # Errors
    /// When an effect does not serialize as JSON.
    pub fn seal<E: Serialize>(
        seq: u64,
        at: String,
        body: RecordBody,
        effects: &[E],
        prev_hash: &[u8; 32],
    ) -> Result<Record, serde_json::Error> {
        let mut bytes = Vec::with_capacity(512);
        let (hash_member, effects) =
            write_record(&mut bytes, (FORMAT, seq, &at), &body, UNSEALED, |out| write_list(effects, out, |e, out| write_sorted(e, out)))?;
        // The hash covers the bytes around its member, so it can go in
        // place of the placeholder afterwards.
        let hash = hex::encode(hash_around(prev_hash, &bytes, &hash_member));
        let hex_at = hash_member.start + br#""hash":""#.len();
        bytes[hex_at..hex_at + hash.len()].copy_from_slice(hash.as_bytes());
        Ok(Record { format: FORMAT, seq, at, body, hash, stored: Stored { bytes: bytes.into(), hash_member }, effects })
    }

    /// The record's effects, each as its canonical JSON bytes: what the
    /// engine reported, as a spectator may see it at append time.
    pub fn effects(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.effects.iter().map(|at| &self.stored.bytes[at.clone()])
    }

    /// The hash this record should carry after `prev_hash`: over its
    /// stored bytes, without its hash member.
    #[must_use]
    pub fn compute_hash(&self, prev_hash: &[u8; 32]) -> [u8; 32] {
        self.debug_assert_unedited();
        self.stored.hash(prev_hash)
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

    /// The bytes stored for this record, as written when it was sealed or
    /// as it was read.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.debug_assert_unedited();
        &self.stored.bytes
    }

    /// The bytes stored for this record, copied.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes().to_vec()
    }

    /// Parses a stored record, keeping its bytes.
    ///
    /// The bytes must be exactly the record's canonical form. The hash is
    /// checked over the stored bytes as they are, so an edit that parses
    /// to the same content (a renamed null field, say) already breaks the
    /// chain; the check is still here because it makes the record's
    /// fields and bytes one: the fields written out canonically are the
    /// bytes again, so what replay reads from the fields is exactly what
    /// the hash covers, and any other reader of the log (with any JSON
    /// parser) reads the same record, with no duplicate key or unknown
    /// member for parsers to disagree on. It is a single scan of the bytes
    /// (`canonical::check_object`), which also finds each member and each
    /// effect, so the members are read from their own bytes and the
    /// effects are not parsed at all.
    ///
    /// # Errors
    /// When the bytes are not a canonical record of a known format.
    pub fn from_bytes(bytes: &[u8]) -> Result<Record, String> {
        // One scan checks the canonical form and says where every member,
        // and every effect, is; each member's value is then read from its
        // own bytes, the effects not at all (they are kept where they are).
        let members = canonical::check_object(bytes).map_err(|e| format!("record bytes are not in canonical form: {e}"))?;
        let member = |key: &str| members.iter().find(|m| m.key == key.as_bytes());
        fn parse<'a, T: Deserialize<'a>>(key: &str, value: &'a [u8]) -> Result<T, String> {
            serde_json::from_slice(value).map_err(|e| format!("unreadable record: `{key}`: {e}"))
        }
        // The format says which members a record of each type has.
        let format: u32 = match member("format") {
            Some(m) => parse("format", &bytes[m.value.clone()])?,
            None => return Err("unreadable record: no format".into()),
        };
        if !(OLDEST_FORMAT..=FORMAT).contains(&format) {
            return Err(format!("unknown record format {format}"));
        }
        let record_type = match member("type") {
            Some(m) => &bytes[m.value.clone()],
            None => return Err("unreadable record: no record type".into()),
        };
        let Some((keys, name)) = keys_of(record_type, format) else {
            return Err(format!("unreadable record: unknown record type {} in format {format}", String::from_utf8_lossy(record_type)));
        };
        if !members.iter().map(|m| m.key).eq(keys.iter().map(|k| k.as_bytes())) {
            return Err(format!("record bytes are not in canonical form: not the members of a format {format} {name} record"));
        }
        // Every key is there (checked just above), in this order.
        let at = |key: &str| &members[keys.iter().position(|&k| k == key).expect("a record key")];
        let read = |key: &str| -> Result<&[u8], String> { Ok(&bytes[at(key).value.clone()]) };
        let seq: u64 = parse("seq", read("seq")?)?;
        let at_time: String = parse("at", read("at")?)?;
        let hash: String = parse("hash", read("hash")?)?;
        if !bytes[at("effects").value.clone()].starts_with(b"[") {
            return Err("unreadable record: `effects` is not an array".into());
        }
        let effects = at("effects").items.clone();
        // Not the last member (`type` follows it), so its comma follows it.
        let hash_at = keys.iter().position(|&k| k == "hash").expect("records have a hash");
        let hash_member = members[hash_at].start..members[hash_at + 1].start;
        let body = match name {
            "move" => {
                let mv: Box<RawValue> = parse("move", read("move")?)?;
                let seat: Option<Seat> = parse("seat", read("seat")?)?;
                let request_id: Option<String> = parse("request_id", read("request_id")?)?;
                let bot: Option<BotMark> = if format >= 2 { parse("bot", read("bot")?)? } else { None };
                RecordBody::Move(MoveRecord { seat: required(seat, name, "seat")?, mv, request_id, bot })
            }
            "seat_bot" => {
                let seat: Option<Seat> = parse("seat", read("seat")?)?;
                let bot: Option<BotSeat> = parse("bot", read("bot")?)?;
                RecordBody::SeatBot(SeatBotRecord { seat: required(seat, name, "seat")?, bot })
            }
            "seat_joined" | "seat_left" | "game_cancelled" | "seat_token" | "seat_resigned" | "timeout" => {
                if !bytes[at("effects").value.clone()].eq(b"[]") {
                    return Err(format!("unreadable record: a {name} record has no effects"));
                }
                let seat = || -> Result<Seat, String> { required(parse::<Option<Seat>>("seat", read("seat")?)?, name, "seat") };
                let text = |key: &str| -> Result<String, String> { required(parse::<Option<String>>(key, read(key)?)?, name, key) };
                match name {
                    "seat_joined" => RecordBody::SeatJoined(SeatJoined {
                        seat: seat()?,
                        name: text("name")?,
                        bot: parse("bot", read("bot")?)?,
                        token_hash: parse("token_hash", read("token_hash")?)?,
                    }),
                    "seat_left" => RecordBody::SeatLeft { seat: seat()? },
                    "game_cancelled" => RecordBody::GameCancelled,
                    "seat_token" => RecordBody::SeatToken {
                        seat: seat()?,
                        token_hash: text("token_hash")?,
                        by: match format {
                            3 => None,
                            _ => {
                                let by = text("by")?;
                                Some(crate::table::TokenBy::from_name(&by).ok_or_else(|| {
                                    format!("unreadable record: a seat_token record's `by` is `admin` or `seat`, not `{by}`")
                                })?)
                            }
                        },
                    },
                    "seat_resigned" => RecordBody::SeatResigned { seat: seat()?, bot: parse("bot", read("bot")?)? },
                    _ => RecordBody::Timeout {
                        seat: seat()?,
                        forfeit: required(parse("forfeit", read("forfeit")?)?, name, "forfeit")?,
                        bot: parse("bot", read("bot")?)?,
                    },
                }
            }
            _ => {
                let text = |key: &str| -> Result<String, String> { required(parse::<Option<String>>(key, read(key)?)?, name, key) };
                let seats: Vec<Option<String>> = required(parse("seats", read("seats")?)?, name, "seats")?;
                if format < 3 && seats.iter().any(Option::is_none) {
                    return Err(format!("unreadable record: a format {format} game_created record has no open seat"));
                }
                let bots: Vec<Option<BotSeat>> = if format >= 2 {
                    let bots: Vec<Option<BotSeat>> = required(parse("bots", read("bots")?)?, name, "bots")?;
                    if bots.len() != seats.len() {
                        return Err(format!("unreadable record: {} bots for {} seats", bots.len(), seats.len()));
                    }
                    bots
                } else {
                    Vec::new()
                };
                let public: bool = if format >= 3 { required(parse("public", read("public")?)?, name, "public")? } else { false };
                let clock: Option<TimeControl> = if format >= 3 { parse("clock", read("clock")?)? } else { None };
                RecordBody::GameCreated(GameCreated {
                    game_id: text("game_id")?,
                    kind: text("kind")?,
                    ruleset: text("ruleset")?,
                    options: parse("options", read("options")?)?,
                    seats,
                    bots,
                    public,
                    clock,
                    seed_commitment: text("seed_commitment")?,
                })
            }
        };
        let stored = Stored { bytes: bytes.into(), hash_member };
        Ok(Record { format, seq, at: at_time, body, hash, stored, effects })
    }

    /// Checks this record's place and hash in the chain.
    ///
    /// # Errors
    /// Why the record does not belong at `seq` after `prev_hash`.
    pub fn verify_link(&self, seq: u64, prev_hash: &[u8; 32]) -> Result<[u8; 32], String> {
        if self.seq != seq {
            return Err(format!("record says seq {} at position {seq}", self.seq));
        }
        let computed = self.compute_hash(prev_hash);
        // The stored hash is written in lower-case hex: compare it as text
        // first, which is cheaper than decoding it.
        let mut hex = [0u8; 64];
        hex::encode_to_slice(computed, &mut hex).expect("64 hex digits hold 32 bytes");
        if self.hash.as_bytes() == hex {
            return Ok(computed);
        }
        if self.hash_bytes()? != computed {
            return Err("hash does not match the record's content and the previous hash".into());
        }
        Ok(computed)
    }

    /// In debug builds, panics when the fields no longer say what the
    /// stored bytes say: records are never edited (see [`Record`]).
    fn debug_assert_unedited(&self) {
        if cfg!(debug_assertions) {
            let mut written = Vec::with_capacity(self.stored.bytes.len());
            let bytes = &self.stored.bytes;
            let (_, effects) = write_record(&mut written, (self.format, self.seq, &self.at), &self.body, &self.hash, |out| {
                write_list(&self.effects, out, |at, out| {
                    out.extend_from_slice(&bytes[at.clone()]);
                    Ok(())
                })
            })
            .expect("a record's own effects write");
            assert!(
                *written == *self.stored.bytes && effects == self.effects,
                "record {} was edited after it was sealed or read: its fields no longer say what its stored bytes say",
                self.seq
            );
        }
    }
}

/// Hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
