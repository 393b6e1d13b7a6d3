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

use crate::bot::BotSeat;
use crate::kinds::{self, AnyEffect, AnyGame, AnyMove, Kind};
use crate::record::{GENESIS, GameCreated, MoveRecord, Record, RecordBody, SeatBotRecord, sha256_hex, write_sorted};

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
    /// Per seat, the server bot that plays it after the last applied record.
    pub bots: Vec<Option<BotSeat>>,
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
        let bots = (0..created.seats.len()).map(|seat| created.bot(seat)).collect();
        let replayer = Replayer { kind, created: created.clone(), game: new.game, version: 0, last_hash, bots, hid, scratch };
        Ok((replayer, new.effects))
    }

    /// A replayer that goes on from a game already at `version`, whose
    /// record has hash `last_hash` (a snapshot, say).
    #[must_use]
    pub fn resume(
        kind: &'static Kind,
        created: GameCreated,
        game: AnyGame,
        (version, last_hash): (u64, [u8; 32]),
        bots: Vec<Option<BotSeat>>,
    ) -> Replayer {
        Replayer { kind, created, game, version, last_hash, bots, hid: false, scratch: Vec::with_capacity(512) }
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
        let step = apply_next(&mut self.game, (self.version, &self.last_hash), &mut self.bots, record, &mut self.scratch)?;
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
    /// `seat` was handed to a server bot, or taken back (`bot: None`).
    SeatBot {
        /// The seat.
        seat: Seat,
        /// Who plays it from now on.
        bot: Option<BotSeat>,
    },
}

impl Applied {
    /// Who moved and what, for a move.
    #[must_use]
    pub fn as_move(&self) -> Option<(Seat, &AnyMove)> {
        match self {
            Applied::Move { seat, mv } => Some((*seat, mv)),
            Applied::SeatBot { .. } => None,
        }
    }
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

/// Applies `record` to `game`, which is at `version` after a record hashed
/// `last_hash` with its seats played by `bots`, checking it as replay does
/// (see [`Replayer::apply`]); `scratch` is a buffer to reuse. On an error,
/// `game` and `bots` may have been partly changed and are not to be used again.
///
/// # Errors
/// As [`Replayer::apply`].
pub fn apply_next(
    game: &mut AnyGame,
    (version, last_hash): (u64, &[u8; 32]),
    bots: &mut [Option<BotSeat>],
    record: &Record,
    scratch: &mut Vec<u8>,
) -> Result<Step, ReplayError> {
    let seq = version + 1;
    let hash = record.verify_link(seq, last_hash).map_err(|r| bad(seq, r))?;
    let mv = match &record.body {
        RecordBody::Move(mv) => mv,
        RecordBody::GameCreated(_) => return Err(bad(seq, "a game_created record after record 0")),
        RecordBody::SeatBot(SeatBotRecord { seat, bot }) => {
            // Who plays a seat changes only while the game goes on, and
            // changes nothing in the game itself.
            if game.status().is_finished() {
                return Err(bad(seq, "a seat_bot record after the game ended"));
            }
            if record.effects().len() != 0 {
                return Err(bad(seq, "a seat_bot record with effects: it changes nothing in the game"));
            }
            let held = bots
                .get_mut(usize::from(seat.0))
                .ok_or_else(|| bad(seq, format!("a seat_bot record for {seat}, who is not at the table")))?;
            *held = *bot;
            return Ok(Step { applied: Applied::SeatBot { seat: *seat, bot: *bot }, effects: Vec::new(), hash, hid: false });
        }
    };
    // A move marked as a bot's was made while a bot of that level played the seat.
    if let Some(mark) = &mv.bot
        && bots.get(usize::from(mv.seat.0)).copied().flatten().is_none_or(|bot| bot.level != mark.level)
    {
        return Err(bad(seq, format!("a move marked as the {} bot's for {}, which no such bot plays", mark.level.name(), mv.seat)));
    }
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
    Ok(Step { applied: Applied::Move { seat: mv.seat, mv: parsed }, effects, hash, hid })
}

/// Per seat, the server bot that plays it after `records` (record 0 first),
/// read from the records alone (no replay).
#[must_use]
pub fn bots_after(records: &[Record]) -> Vec<Option<BotSeat>> {
    let mut bots = Vec::new();
    for record in records {
        match &record.body {
            RecordBody::GameCreated(created) => bots = (0..created.seats.len()).map(|seat| created.bot(seat)).collect(),
            RecordBody::SeatBot(handed) => {
                if let Some(held) = bots.get_mut(usize::from(handed.seat.0)) {
                    *held = handed.bot;
                }
            }
            RecordBody::Move(_) => {}
        }
    }
    bots
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
