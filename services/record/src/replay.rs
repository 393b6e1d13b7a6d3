//! Evolve: a game's state is the fold of its log through its engine.
//!
//! [`replay`] is the one place a log becomes a state: it checks every
//! record's link in the hash chain, the seed against its commitment, the
//! ruleset, and that re-applying each move yields exactly the effects the
//! record holds. The service uses it to load games, to answer reads at a
//! past version and to rebuild what a seat may see of old effects; it needs
//! no store, so offline tools can verify an exported log with it too.

use std::collections::HashMap;
use std::sync::Arc;

use ludo_engine::{Seat, Seed, Viewer};

use crate::kinds::{self, AnyEffect, AnyGame, AnyMove, ApplyError, Kind};
use crate::record::{GENESIS, GameCreated, MoveRecord, Record, RecordBody, SeatBotRecord, SeatJoined, sha256_hex, write_sorted};
use crate::status::Status;
use crate::table::{Change, Refusal, Table};

/// The state rebuilt from a whole log.
#[derive(Debug)]
pub struct Replayed {
    /// The game after the last record, with its chain position.
    pub state: Replayer,
    /// Request ids seen, with the seq of their record.
    pub request_ids: HashMap<String, u64>,
    /// Every record's unredacted effects, by seq (only when asked for).
    pub effects: Vec<Vec<AnyEffect>>,
    /// By seq: whether the record's stored (public) effects hide part of
    /// what the engine computed (a dealt hand, a drawn card).
    pub hid: Vec<bool>,
}

/// Why a log does not replay; `seq` is the first bad record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    /// The first record that is wrong.
    pub seq: u64,
    /// What is wrong with it.
    pub reason: String,
}

fn bad(seq: u64, reason: impl Into<String>) -> ReplayError {
    ReplayError { seq, reason: reason.into() }
}

/// Evolves a game one record at a time, checking each as it goes.
#[derive(Debug)]
pub struct Replayer {
    /// The kind of game.
    pub kind: &'static Kind,
    /// Record 0.
    pub created: GameCreated,
    /// The game after the last applied record.
    pub game: AnyGame,
    /// Seq of the last applied record.
    pub version: u64,
    /// Hash of the last applied record.
    pub last_hash: [u8; 32],
    /// Who sits at the table after the last applied record (shared with
    /// whoever keeps it: a record that changes it copies it first).
    pub table: Arc<Table>,
    /// Whether the last applied record's stored effects hide part of what
    /// the engine computed.
    pub hid: bool,
    /// Where moves and effects are written to compare them with the stored
    /// bytes (kept to reuse its allocation).
    scratch: Vec<u8>,
}

impl Replayer {
    /// Sets the game up from record 0 and returns it with record 0's
    /// unredacted effects.
    ///
    /// # Errors
    /// [`ReplayError`] at seq 0 when record 0 breaks the chain, names an
    /// unknown kind or another ruleset, or does not match the seed.
    pub fn start(first: &Record, seed: &Seed) -> Result<(Replayer, Vec<AnyEffect>), ReplayError> {
        let last_hash = first.verify_link(0, &GENESIS).map_err(|r| bad(0, r))?;
        let RecordBody::GameCreated(created) = &first.body else {
            return Err(bad(0, "record 0 is not game_created"));
        };
        let kind = kinds::kind(&created.kind).ok_or_else(|| bad(0, format!("game kind `{}` is not hosted here", created.kind)))?;
        if created.ruleset != kind.ruleset {
            return Err(bad(0, format!("recorded under ruleset {}, this server runs {}", created.ruleset, kind.ruleset)));
        }
        if sha256_hex(&seed.0) != created.seed_commitment {
            return Err(bad(0, "the seed does not match the seed commitment"));
        }
        let new = kind
            .create(created.seats.len(), &created.options, seed)
            .map_err(|e| bad(0, format!("the recorded set-up is refused: {e:?}")))?;
        let mut scratch = Vec::with_capacity(512);
        let hid = check_effects(0, &new.game, &new.effects, first, &mut scratch)?;
        let mut table = Table::new(created, kind.sides(created.seats.len()));
        table.advance(record_time(&table, first).map_err(|r| bad(0, r))?, || new.game.status(), None);
        let replayer =
            Replayer { kind, created: created.clone(), game: new.game, version: 0, last_hash, table: Arc::new(table), hid, scratch };
        Ok((replayer, new.effects))
    }

    /// How the game stands after the last applied record.
    #[must_use]
    pub fn status(&self) -> Status {
        self.table.status(self.game.status())
    }

    /// A replayer that goes on from a game already at `version`, whose
    /// record has hash `last_hash` (a snapshot, say).
    #[must_use]
    pub fn resume(
        kind: &'static Kind,
        created: GameCreated,
        game: AnyGame,
        (version, last_hash): (u64, [u8; 32]),
        table: Arc<Table>,
    ) -> Replayer {
        Replayer { kind, created, game, version, last_hash, table, hid: false, scratch: Vec::with_capacity(512) }
    }

    /// Applies the next record and returns its unredacted effects.
    ///
    /// # Errors
    /// [`ReplayError`] naming the record when it is out of place, breaks the
    /// chain, or does not re-play to the same move and effects. The log is
    /// then corrupt from that record on: the replayer may have applied part
    /// of it and is not to be used again (every caller drops it).
    pub fn apply(&mut self, record: &Record) -> Result<Vec<AnyEffect>, ReplayError> {
        self.step(record).map(|(_, effects)| effects)
    }

    /// [`Replayer::apply`], answering also what the record did, typed.
    ///
    /// # Errors
    /// As [`Replayer::apply`].
    pub fn step(&mut self, record: &Record) -> Result<(Applied, Vec<AnyEffect>), ReplayError> {
        let step = apply_next(&mut self.game, (self.version, &self.last_hash), &mut self.table, record, &mut self.scratch)?;
        self.hid = step.hid;
        self.version += 1;
        self.last_hash = step.hash;
        Ok((step.applied, step.effects))
    }
}

/// What one record after record 0 did.
#[derive(Clone, Debug, PartialEq)]
pub enum Applied {
    /// `seat` played `mv`.
    Move {
        /// Who moved.
        seat: Seat,
        /// The move, typed.
        mv: AnyMove,
    },
    /// A seat record changed the table (who sits where, the game's phase),
    /// and nothing in the game itself.
    Table,
}

impl Applied {
    /// Who moved and what, for a move.
    #[must_use]
    pub fn as_move(&self) -> Option<(Seat, &AnyMove)> {
        match self {
            Applied::Move { seat, mv } => Some((*seat, mv)),
            Applied::Table => None,
        }
    }
}

/// The change of the table a seat record made at `at` (ms since the epoch)
/// makes (`None` for a move or record 0).
///
/// # Errors
/// When a token hash in it is not 64 hex digits.
pub fn change_of(body: &RecordBody, at: u64) -> Result<Option<Change<'_>>, String> {
    let hash = |hex: &str| -> Result<[u8; 32], String> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(hex, &mut out).map_err(|_| "a token hash is not 64 hex digits".to_string())?;
        Ok(out)
    };
    Ok(Some(match body {
        RecordBody::GameCreated(_) | RecordBody::Move(_) => return Ok(None),
        RecordBody::SeatBot(SeatBotRecord { seat, bot }) => Change::Bot(*seat, *bot),
        RecordBody::SeatJoined(SeatJoined { seat, name, bot, token_hash }) => {
            Change::Join { seat: *seat, name, bot: *bot, token_hash: token_hash.as_deref().map(hash).transpose()? }
        }
        RecordBody::SeatLeft { seat } => Change::Leave(*seat),
        RecordBody::GameCancelled => Change::Cancel,
        RecordBody::SeatToken { seat, token_hash, by } => Change::Token { seat: *seat, hash: hash(token_hash)?, by: *by },
        RecordBody::SeatResigned { seat, bot } => Change::Resign(*seat, *bot),
        RecordBody::Timeout { seat, forfeit, bot } => Change::Timeout { seat: *seat, forfeit: *forfeit, bot: *bot, at },
    }))
}

/// What [`apply_next`] applied.
#[derive(Debug)]
pub struct Step {
    /// What the record did.
    pub applied: Applied,
    /// What it did, unredacted.
    pub effects: Vec<AnyEffect>,
    /// The record's hash (the next record's link).
    pub hash: [u8; 32],
    /// Whether the record's stored effects hide part of what the engine computed.
    pub hid: bool,
}

/// Why a record's change does not fold into its game (see [`evolve`]).
#[derive(Debug)]
pub enum Refused {
    /// The table refuses it: the seat is not to move, its time is up, the
    /// seat is taken …
    Table(Refusal),
    /// The engine refuses the move.
    Engine(ApplyError),
    /// The record is not one a fold applies (record 0, a move record
    /// without its move), or holds a malformed token hash.
    Malformed(String),
}

/// Folds one record after record 0 into `game` and its `table`: the evolve
/// step of the game's aggregate, which the service's commits and replay
/// both apply, so a record is applied live exactly as it replays. `mv` is
/// the record's move, typed (for a move record); `at` is the record's time
/// as [`time_of`] reads it. A move's table is only copied when the move
/// changes it (a clock runs, or a due bot made it).
///
/// # Errors
/// [`Refused`]; `game` and `table` may then have been partly changed and
/// are not to be used again.
pub fn evolve(
    game: &mut AnyGame,
    table: &mut Arc<Table>,
    body: &RecordBody,
    mv: Option<AnyMove>,
    at: u64,
) -> Result<(Applied, Vec<AnyEffect>), Refused> {
    match body {
        RecordBody::Move(record) => {
            let mv = mv.ok_or_else(|| Refused::Malformed("a move record without its move".into()))?;
            // A move is made while the game is played, by its seat's player
            // or (if marked so) by the bot of that level that plays the seat.
            table.check_move(record.seat, record.bot.as_ref().map(|mark| mark.level), at).map_err(Refused::Table)?;
            let effects = game.apply(record.seat, &mv).map_err(Refused::Engine)?;
            if table.moved_by(record.seat) {
                Arc::make_mut(table).advance(at, || game.status(), Some(record.seat));
            }
            Ok((Applied::Move { seat: record.seat, mv }, effects))
        }
        RecordBody::GameCreated(_) => Err(Refused::Malformed("a game_created record after record 0".into())),
        seated => {
            // A seat record changes the table, and nothing in the game itself.
            let change = change_of(seated, at).map_err(Refused::Malformed)?.expect("a seat record changes the table");
            let status = game.status();
            let table = Arc::make_mut(table);
            table.apply(&change, status.is_finished()).map_err(Refused::Table)?;
            table.advance(at, || status, None);
            Ok((Applied::Table, Vec::new()))
        }
    }
}

/// Applies `record` to `game`, which is at `version` after a record hashed
/// `last_hash` with `table` as its table, checking it as replay does
/// (see [`Replayer::apply`]): its link, its move's canonical form, then
/// [`evolve`], then its stored effects; `scratch` is a buffer to reuse. On
/// an error, `game` and `table` may have been partly changed and are not to
/// be used again.
///
/// # Errors
/// As [`Replayer::apply`].
pub fn apply_next(
    game: &mut AnyGame,
    (version, last_hash): (u64, &[u8; 32]),
    table: &mut Arc<Table>,
    record: &Record,
    scratch: &mut Vec<u8>,
) -> Result<Step, ReplayError> {
    let seq = version + 1;
    let hash = record.verify_link(seq, last_hash).map_err(|r| bad(seq, r))?;
    let name = record.body.type_name();
    let at = record_time(table, record).map_err(|r| bad(seq, r))?;
    let parsed = match &record.body {
        RecordBody::Move(mv) => {
            let stored = mv.move_json().as_bytes();
            let parsed = game.parse_move_json(stored).map_err(|e| bad(seq, format!("the engine refuses this move: {e}")))?;
            // The move as the engine writes it must be the stored bytes: no
            // member the engine ignores, none it would fill in.
            scratch.clear();
            if write_sorted(&parsed, scratch).is_err() || *scratch != stored {
                return Err(bad(seq, "the move is not in canonical form"));
            }
            Some(parsed)
        }
        RecordBody::GameCreated(_) => None,
        // A seat record changes nothing in the game itself.
        _ if record.effects().len() != 0 => return Err(bad(seq, format!("a {name} record with effects: it changes nothing in the game"))),
        _ => None,
    };
    let (applied, effects) = evolve(game, table, &record.body, parsed, at).map_err(|refused| match refused {
        Refused::Table(refusal) if matches!(record.body, RecordBody::Move(_)) => bad(seq, refusal.to_string()),
        Refused::Table(refusal) => bad(seq, format!("a {name} record where {refusal}")),
        Refused::Engine(e) => bad(seq, format!("the engine refuses this move: {e:?}")),
        Refused::Malformed(reason) => bad(seq, reason),
    })?;
    let hid = match applied {
        Applied::Move { .. } => check_effects(seq, game, &effects, record, scratch)?,
        Applied::Table => false,
    };
    Ok(Step { applied, effects, hash, hid })
}

/// A record's time (ms since the epoch), where the game's clocks need it:
/// a game without a clock reads no time, so no log of one is refused over
/// how its times are written.
fn record_time(table: &Table, record: &Record) -> Result<u64, String> {
    time_of(table, &record.at)
}

/// The time `at` (RFC 3339) as a fold of a game with `table` reads it (ms
/// since the epoch): 0 in a game without a clock, which reads no time.
///
/// # Errors
/// When a game with a clock is given a time that does not parse.
pub fn time_of(table: &Table, at: &str) -> Result<u64, String> {
    match table.clocks() {
        Some(_) => crate::clock::millis(at),
        None => Ok(0),
    }
}

/// Replays `records` (record 0 first) with the game's `seed`, keeping each
/// record's effects when `keep_effects` is set.
///
/// # Errors
/// [`ReplayError`] naming the first record that breaks the chain, does not
/// match the seed commitment or the engine, or names an unknown kind.
pub fn replay(records: &[Record], seed: &Seed, keep_effects: bool) -> Result<Replayed, ReplayError> {
    let first = records.first().ok_or_else(|| bad(0, "the log is empty"))?;
    let (mut replayer, first_effects) = Replayer::start(first, seed)?;
    let mut effects = Vec::new();
    let mut hid = Vec::with_capacity(records.len());
    hid.push(replayer.hid);
    if keep_effects {
        effects.push(first_effects);
    }
    let mut request_ids = HashMap::new();
    for record in &records[1..] {
        let applied = replayer.apply(record)?;
        if let RecordBody::Move(MoveRecord { request_id: Some(id), .. }) = &record.body {
            request_ids.insert(id.clone(), record.seq);
        }
        hid.push(replayer.hid);
        if keep_effects {
            effects.push(applied);
        }
    }
    Ok(Replayed { state: replayer, request_ids, effects, hid })
}

/// The stored effects are the spectator's view of the recomputed ones;
/// answers whether that view hides anything of them. The view is written
/// in canonical form and compared with the stored bytes.
fn check_effects(seq: u64, game: &AnyGame, computed: &[AnyEffect], record: &Record, written: &mut Vec<u8>) -> Result<bool, ReplayError> {
    let mut hid = false;
    let stored = record.effects();
    let same = computed.len() == stored.len()
        && computed.iter().zip(stored).all(|(computed, stored)| {
            let public = game.redact(computed, Viewer::Spectator);
            hid |= public != *computed;
            written.clear();
            write_sorted(&public, written).is_ok() && *written == stored
        });
    if !same {
        return Err(bad(seq, "the recorded effects differ from what the engine computes"));
    }
    Ok(hid)
}
