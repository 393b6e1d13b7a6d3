//! The `games` projection: each game's summary (kind, seats, version,
//! status, when it was created and when it ended, its bots, resigned
//! seats, next deadline), folded from the feed through the step the
//! service commits records with (`replay::evolve`). The rows are the
//! summaries the store keeps beside each log, but for the game's place in
//! the transparency log (which no game record holds).
//!
//! A record in the feed was checked when it was committed; the fold trusts
//! it and does not check its hash chain or effects again (`ludo verify`
//! and a game's loading do). Record 0 is checked against the game's seed
//! commitment, since the fold deals the game from the seed.
//!
//! # Offers
//! While this process keeps the projection, the service offers it the
//! game as each of its commits left it (`Offered`, keyed by the record's
//! feed position). The fold of that position then takes the offered state
//! instead of parsing the record and applying it again: the same state,
//! since the service made it with the same step from the same game. It is
//! only a saving: an entry without an offer (another replica's record, an
//! offer dropped because too many wait, a rebuild) folds from its bytes,
//! to the same row.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use ludo_storage::{EventStore, FeedEntry, StreamId};

use super::{Folded, Projection, Rows};
use crate::secrets::Secrets;
use crate::service::listing::StoredSummary;
use crate::service::{Current, is_reserved};
use ludo_record::kinds::{AnyGame, Kind};
use ludo_record::record::{Record, RecordBody};
use ludo_record::replay::{self, Replayer, replay};
use ludo_record::status::Status;
use ludo_record::table::Table;
use ludo_transparency::Imported;

/// Games whose state the projection keeps in memory between folds, at
/// most; one it forgot is replayed from its log when it next moves.
const MAX_KEPT: usize = 10_000;

/// Offers waiting for their entry, at most; more are not taken (their
/// entries fold from their bytes). About a second of moves at full speed.
const MAX_OFFERED: usize = 8_192;

/// Folds the feed into one summary per game, keyed by the game's stream id.
#[derive(Default)]
pub struct Games {
    state: Mutex<State>,
    /// Entries folded from an offer rather than from their bytes.
    offers_taken: std::sync::atomic::AtomicU64,
}

/// A record this process committed, with the game as the commit left it:
/// offered to the fold of the record's feed entry (see the module docs).
pub(crate) struct Offered {
    /// The record's feed position.
    pub(crate) position: u64,
    /// Its game.
    pub(crate) stream: StreamId,
    /// The game after it.
    pub(crate) now: Arc<Current>,
    /// The game's kind.
    pub(crate) kind: &'static Kind,
    /// When the game was created (its record 0's time).
    pub(crate) created_at: String,
    /// The record's time.
    pub(crate) last_at: String,
    /// Where an imported game came from.
    pub(crate) imported: Option<Imported>,
}

/// What the projection keeps in memory between folds.
#[derive(Default)]
struct State {
    /// Games still played, as last folded.
    kept: HashMap<StreamId, Kept>,
    /// Kept games folded since their row was last written (in this step).
    dirty: HashSet<StreamId>,
    /// Offers by feed position, waiting for their entry.
    offered: BTreeMap<u64, Offered>,
    /// The last position folded.
    folded: u64,
}

impl State {
    /// Writes the row of every dirty game, and lets go of the offers of
    /// positions already folded (an offer can come after its entry).
    fn settle(&mut self, rows: &mut Rows) {
        for stream in self.dirty.drain() {
            if let Some(kept) = self.kept.get(&stream) {
                rows.put(Games::key(stream), kept.summary().to_bytes());
            }
        }
        self.offered = self.offered.split_off(&(self.folded + 1));
    }

    /// The offer for `entry`, if one waits.
    fn take_offer(&mut self, entry: &FeedEntry) -> Option<Offered> {
        self.folded = entry.position;
        let offered = self.offered.remove(&entry.position)?;
        // A position names one record of one store; checked all the same.
        (offered.stream == entry.stream && offered.now.version() == entry.seq).then_some(offered)
    }
}

/// A game as the projection last folded it.
struct Kept {
    kind: &'static Kind,
    game: Game,
    created_at: String,
    last_at: String,
    imported: Option<Imported>,
}

/// A kept game's state.
enum Game {
    /// Folded here (boxed: an engine's state is large beside an `Arc`).
    Folded { game: Box<AnyGame>, table: Arc<Table>, version: u64 },
    /// Offered by the service (shared with its cache, not copied).
    Offered(Arc<Current>),
}

impl Kept {
    fn of(replayer: Replayer, created_at: String, last_at: String, imported: Option<Imported>) -> Kept {
        let game = Game::Folded { game: Box::new(replayer.game), table: replayer.table, version: replayer.version };
        Kept { kind: replayer.kind, game, created_at, last_at, imported }
    }

    fn offered(offered: Offered) -> Kept {
        let Offered { now, kind, created_at, last_at, imported, .. } = offered;
        Kept { kind, game: Game::Offered(now), created_at, last_at, imported }
    }

    fn version(&self) -> u64 {
        match &self.game {
            Game::Folded { version, .. } => *version,
            Game::Offered(now) => now.version(),
        }
    }

    /// Folds the game's next record into it.
    fn fold(&mut self, record: &Record) -> Result<(), String> {
        if let Game::Offered(now) = &self.game {
            self.game = Game::Folded { game: Box::new(now.game().clone()), table: Arc::clone(now.table()), version: now.version() };
        }
        let Game::Folded { game, table, version } = &mut self.game else { unreachable!("made a folded game just above") };
        let mv = match &record.body {
            RecordBody::Move(stored) => Some(game.parse_move_json(stored.move_json().as_bytes()).map_err(|e| e.to_string())?),
            _ => None,
        };
        let at = replay::time_of(table, &record.at)?;
        replay::evolve(game, table, &record.body, mv, at).map_err(|refused| format!("{refused:?}"))?;
        *version = record.seq;
        self.last_at.clone_from(&record.at);
        Ok(())
    }

    fn status(&self) -> Status {
        match &self.game {
            Game::Folded { game, table, .. } => table.status(game.status()),
            Game::Offered(now) => now.status().clone(),
        }
    }

    /// The game's row.
    fn summary(&self) -> StoredSummary {
        let table = match &self.game {
            Game::Folded { table, .. } => table,
            Game::Offered(now) => now.table(),
        };
        StoredSummary::new(self.kind.id.into(), table, self.created_at.clone(), (self.version(), &self.status()), &self.last_at)
            .imported(self.imported.clone())
    }
}

impl Games {
    /// The projection's name, as the store keeps it.
    pub const NAME: &'static str = "games";

    /// The key of `stream`'s row.
    #[must_use]
    pub fn key(stream: StreamId) -> Vec<u8> {
        stream.0.to_vec()
    }

    /// The game a row's key names (`None`: not a key [`Games::key`] makes).
    #[must_use]
    pub fn stream_of(key: &[u8]) -> Option<StreamId> {
        Some(StreamId(key.try_into().ok()?))
    }

    /// How many entries were folded from an offer rather than from their
    /// bytes, since start.
    pub fn offers_taken(&self) -> u64 {
        self.offers_taken.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes `offered` for the fold of its feed entry (see the module
    /// docs), unless too many offers wait already.
    pub(crate) fn offer(&self, offered: Offered) {
        let mut state = self.lock();
        if state.offered.len() < MAX_OFFERED && offered.position > state.folded {
            state.offered.insert(offered.position, offered);
        }
    }

    async fn fold_record(&self, rows: &mut Rows, entry: &FeedEntry) -> Result<(), String> {
        let (offered, kept) = {
            let mut state = self.lock();
            let offered = state.take_offer(entry);
            (offered, state.kept.remove(&entry.stream))
        };
        let kept = match offered {
            Some(offered) => {
                self.offers_taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Kept::offered(offered)
            }
            None => self.fold_bytes(rows, entry, kept).await?,
        };
        let mut state = self.lock();
        if kept.status().is_finished() {
            // A game over moves no more: its row now, and nothing to keep.
            state.dirty.remove(&entry.stream);
            rows.put(Games::key(entry.stream), kept.summary().to_bytes());
        } else {
            // Its row once the step's entries are folded (`settle`): a game
            // moves many times a step.
            if state.kept.len() >= MAX_KEPT {
                state.settle(rows);
                state.kept.clear();
            }
            state.dirty.insert(entry.stream);
            state.kept.insert(entry.stream, kept);
        }
        Ok(())
    }

    /// Folds `entry` from its bytes into `kept`, the game as last folded
    /// (if kept), or into the game dealt or replayed from its log.
    async fn fold_bytes(&self, rows: &Rows, entry: &FeedEntry, kept: Option<Kept>) -> Result<Kept, String> {
        let store = Arc::clone(rows.store());
        let record = Record::from_bytes(&entry.bytes)?;
        if record.seq != entry.seq {
            return Err(format!("the record says seq {}, the feed {}", record.seq, entry.seq));
        }
        let kept = kept.filter(|kept| kept.version() + 1 == entry.seq);
        Ok(match (entry.seq, kept) {
            (0, _) => {
                let secrets = secrets(&*store, entry.stream).await?;
                let (replayer, _) = Replayer::start(&record, &secrets.seed).map_err(|e| format!("record {}: {}", e.seq, e.reason))?;
                Kept::of(replayer, record.at.clone(), record.at.clone(), secrets.imported)
            }
            (_, Some(mut kept)) => {
                kept.fold(&record).map_err(|reason| format!("record {}: {reason}", record.seq))?;
                kept
            }
            (seq, None) => {
                // Forgotten (or never seen by this process): the log up to it.
                let secrets = secrets(&*store, entry.stream).await?;
                let stored = store.read(entry.stream, 0, Some(seq + 1)).await.map_err(|e| e.to_string())?;
                let records = stored.iter().map(|s| Record::from_bytes(&s.bytes)).collect::<Result<Vec<_>, _>>()?;
                if records.len() as u64 != seq + 1 || records.last().map(Record::hash_bytes) != Some(record.hash_bytes()) {
                    return Err(format!("the game's log does not hold record {seq} as the feed does"));
                }
                let created_at = records[0].at.clone();
                let replayed = replay(&records, &secrets.seed, false).map_err(|e| format!("record {}: {}", e.seq, e.reason))?;
                Kept::of(replayed.state, created_at, record.at.clone(), secrets.imported)
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The game's sealed data (its seed, and where an imported game came from).
async fn secrets(store: &dyn EventStore, stream: StreamId) -> Result<Secrets, String> {
    let sealed = store.sealed(stream).await.map_err(|e| e.to_string())?.ok_or("the game has no sealed data")?;
    Secrets::from_bytes(&sealed)
}

impl Projection for Games {
    fn name(&self) -> &'static str {
        Games::NAME
    }

    fn about(&self) -> &'static str {
        "each game's summary: kind, seats, version, status, bots, when it was created and ended"
    }

    fn fold<'a>(&'a self, entry: &'a FeedEntry, rows: &'a mut Rows) -> Folded<'a> {
        Box::pin(async move {
            // The transparency log's own streams are not games.
            if is_reserved(entry.stream) {
                return Ok(());
            }
            self.fold_record(rows, entry).await
        })
    }

    fn settle<'a>(&'a self, rows: &'a mut Rows) -> Folded<'a> {
        self.lock().settle(rows);
        Box::pin(std::future::ready(Ok(())))
    }

    fn forget(&self) {
        let mut state = self.lock();
        state.kept.clear();
        state.dirty.clear();
        state.offered.clear();
        state.folded = 0;
    }
}
