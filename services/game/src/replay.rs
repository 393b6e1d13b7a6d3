//! Evolve: a game's state is the fold of its log through its engine.
//!
//! [`replay`] is the one place a log becomes a state: it checks every
//! record's link in the hash chain, the seed against its commitment, the
//! ruleset, and that re-applying each move yields exactly the effects the
//! record holds. The service uses it to load games, to answer reads at a
//! past version and to rebuild what a seat may see of old effects; it needs
//! no store, so offline tools can verify an exported log with it too.

use std::collections::HashMap;

use ludo_engine::{Seed, Viewer};
use serde_json::Value;

use crate::kinds::{self, DynGame, Kind};
use crate::record::{GENESIS, GameCreated, Record, RecordBody, sha256_hex};

/// The state rebuilt from a log.
#[derive(Debug)]
pub struct Replayed {
    /// The kind of game.
    pub kind: &'static Kind,
    /// Record 0.
    pub created: GameCreated,
    /// The game after the last replayed record.
    pub game: Box<dyn DynGame>,
    /// Seq of the last replayed record.
    pub version: u64,
    /// Hash of the last replayed record.
    pub last_hash: [u8; 32],
    /// Request ids seen, with the seq of their record.
    pub request_ids: HashMap<String, u64>,
    /// Every record's unredacted effects, by seq (only when asked for).
    pub effects: Vec<Vec<Value>>,
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

/// Replays `records` (record 0 first) with the game's `seed`, keeping each
/// record's effects when `keep_effects` is set.
///
/// # Errors
/// [`ReplayError`] naming the first record that breaks the chain, does not
/// match the seed commitment or the engine, or names an unknown kind.
pub fn replay(records: &[Record], seed: &Seed, keep_effects: bool) -> Result<Replayed, ReplayError> {
    let first = records.first().ok_or_else(|| bad(0, "the log is empty"))?;
    let mut last_hash = first.verify_link(0, &GENESIS).map_err(|r| bad(0, r))?;
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
    let mut game = new.game;
    check_effects(0, game.as_ref(), &new.effects, &first.effects)?;
    let mut effects = Vec::new();
    if keep_effects {
        effects.push(new.effects);
    }
    let mut request_ids = HashMap::new();
    for (i, record) in records.iter().enumerate().skip(1) {
        let seq = i as u64;
        last_hash = record.verify_link(seq, &last_hash).map_err(|r| bad(seq, r))?;
        let RecordBody::Move(mv) = &record.body else {
            return Err(bad(seq, "a game_created record after record 0"));
        };
        let applied = game.apply(mv.seat, &mv.mv).map_err(|e| bad(seq, format!("the engine refuses this move: {e:?}")))?;
        if applied.canonical_move != mv.mv {
            return Err(bad(seq, "the move is not in canonical form"));
        }
        check_effects(seq, game.as_ref(), &applied.effects, &record.effects)?;
        if let Some(id) = &mv.request_id {
            request_ids.insert(id.clone(), seq);
        }
        if keep_effects {
            effects.push(applied.effects);
        }
    }
    Ok(Replayed {
        kind,
        created: created.clone(),
        game,
        version: records.len() as u64 - 1,
        last_hash,
        request_ids,
        effects,
    })
}

/// The stored effects are the spectator's view of the recomputed ones.
fn check_effects(seq: u64, game: &dyn DynGame, computed: &[Value], stored: &[Value]) -> Result<(), ReplayError> {
    let public: Vec<Value> = computed.iter().map(|e| game.redact(e, Viewer::Spectator)).collect();
    if public != stored {
        return Err(bad(seq, "the recorded effects differ from what the engine computes"));
    }
    Ok(())
}
