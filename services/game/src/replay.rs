//! Evolve: a game's state is the fold of its log through its engine.
//!
//! [`replay`] is the one place a log becomes a state: it checks every
//! record's link in the hash chain, the seed against its commitment, the
//! ruleset, and that re-applying each move yields exactly the effects the
//! record holds. The service uses it to load games, to answer reads at a
//! past version and to rebuild what a seat may see of old effects; it needs
//! no store, so offline tools can verify an exported log with it too.

use std::collections::HashMap;

use ludo_engine::{Seat, Seed, Viewer};

use crate::kinds::{self, AnyEffect, AnyGame, AnyMove, Kind};
use crate::record::{GENESIS, GameCreated, MoveRecord, Record, RecordBody, sha256_hex, write_sorted};

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
        let replayer = Replayer { kind, created: created.clone(), game: new.game, version: 0, last_hash, hid, scratch };
        Ok((replayer, new.effects))
    }

    /// A replayer that goes on from a game already at `version`, whose
    /// record has hash `last_hash` (a snapshot, say).
    #[must_use]
    pub fn resume(kind: &'static Kind, created: GameCreated, game: AnyGame, version: u64, last_hash: [u8; 32]) -> Replayer {
        Replayer { kind, created, game, version, last_hash, hid: false, scratch: Vec::with_capacity(512) }
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

    /// [`Replayer::apply`], answering also who moved and the move, typed.
    ///
    /// # Errors
    /// As [`Replayer::apply`].
    pub fn step(&mut self, record: &Record) -> Result<((Seat, AnyMove), Vec<AnyEffect>), ReplayError> {
        let step = apply_next(&mut self.game, self.version, &self.last_hash, record, &mut self.scratch)?;
        self.hid = step.hid;
        self.version += 1;
        self.last_hash = step.hash;
        Ok(((step.seat, step.mv), step.effects))
    }
}

/// What [`apply_next`] applied.
#[derive(Debug)]
pub struct Step {
    /// Who moved.
    pub seat: Seat,
    /// The move, typed.
    pub mv: AnyMove,
    /// What it did, unredacted.
    pub effects: Vec<AnyEffect>,
    /// The record's hash (the next record's link).
    pub hash: [u8; 32],
    /// Whether the record's stored effects hide part of what the engine computed.
    pub hid: bool,
}

/// Applies `record` to `game`, which is at `version` after a record hashed
/// `last_hash`, checking it as replay does (see [`Replayer::apply`]);
/// `scratch` is a buffer to reuse. On an error, `game` may have been
/// partly changed and is not to be used again.
///
/// # Errors
/// As [`Replayer::apply`].
pub fn apply_next(
    game: &mut AnyGame,
    version: u64,
    last_hash: &[u8; 32],
    record: &Record,
    scratch: &mut Vec<u8>,
) -> Result<Step, ReplayError> {
    let seq = version + 1;
    let hash = record.verify_link(seq, last_hash).map_err(|r| bad(seq, r))?;
    let RecordBody::Move(mv) = &record.body else {
        return Err(bad(seq, "a game_created record after record 0"));
    };
    let stored = mv.move_json().as_bytes();
    let parsed = game.parse_move_json(stored).map_err(|e| bad(seq, format!("the engine refuses this move: {e}")))?;
    // The move as the engine writes it must be the stored bytes: no
    // member the engine ignores, none it would fill in.
    scratch.clear();
    if write_sorted(&parsed, scratch).is_err() || *scratch != stored {
        return Err(bad(seq, "the move is not in canonical form"));
    }
    let effects = game.apply(mv.seat, &parsed).map_err(|e| bad(seq, format!("the engine refuses this move: {e:?}")))?;
    let hid = check_effects(seq, game, &effects, record, scratch)?;
    Ok(Step { seat: mv.seat, mv: parsed, effects, hash, hid })
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
