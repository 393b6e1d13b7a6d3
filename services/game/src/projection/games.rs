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

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use ludo_storage::{EventStore, FeedEntry, StreamId};

use super::{Folded, Projection, Rows};
use crate::secrets::Secrets;
use crate::service::is_reserved;
use crate::service::listing::StoredSummary;
use ludo_record::kinds::AnyGame;
use ludo_record::record::{Record, RecordBody};
use ludo_record::replay::{self, Replayer, replay};
use ludo_record::status::Status;
use ludo_record::table::Table;
use ludo_transparency::Imported;

/// Games whose state the projection keeps in memory between folds, at
/// most; one it forgot is replayed from its log when it next moves.
const MAX_KEPT: usize = 10_000;

/// Folds the feed into one summary per game, keyed by the game's stream id.
#[derive(Default)]
pub struct Games {
    state: Mutex<State>,
}

/// What the projection keeps in memory between folds.
#[derive(Default)]
struct State {
    /// Games still played, as last folded.
    kept: HashMap<StreamId, Kept>,
    /// Kept games folded since their row was last written (in this step).
    dirty: HashSet<StreamId>,
}

impl State {
    /// Writes the row of every dirty game.
    fn settle(&mut self, rows: &mut Rows) {
        for stream in self.dirty.drain() {
            if let Some(kept) = self.kept.get(&stream) {
                rows.put(Games::key(stream), kept.summary().to_bytes());
            }
        }
    }
}

/// A game as the projection last folded it.
struct Kept {
    kind: &'static ludo_record::kinds::Kind,
    game: AnyGame,
    table: std::sync::Arc<Table>,
    version: u64,
    created_at: String,
    last_at: String,
    imported: Option<Imported>,
}

impl Kept {
    fn of(replayer: Replayer, created_at: String, last_at: String, imported: Option<Imported>) -> Kept {
        Kept { kind: replayer.kind, game: replayer.game, table: replayer.table, version: replayer.version, created_at, last_at, imported }
    }

    /// Folds the game's next record into it.
    fn fold(&mut self, record: &Record) -> Result<(), String> {
        let mv = match &record.body {
            RecordBody::Move(stored) => Some(self.game.parse_move_json(stored.move_json().as_bytes()).map_err(|e| e.to_string())?),
            _ => None,
        };
        let at = replay::time_of(&self.table, &record.at)?;
        replay::evolve(&mut self.game, &mut self.table, &record.body, mv, at).map_err(|refused| format!("{refused:?}"))?;
        self.version = record.seq;
        self.last_at.clone_from(&record.at);
        Ok(())
    }

    fn status(&self) -> Status {
        self.table.status(self.game.status())
    }

    /// The game's row.
    fn summary(&self) -> StoredSummary {
        StoredSummary::new(self.kind.id.into(), &self.table, self.created_at.clone(), (self.version, &self.status()), &self.last_at)
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

    async fn fold_record(&self, rows: &mut Rows, entry: &FeedEntry) -> Result<(), String> {
        let store = Arc::clone(rows.store());
        let record = Record::from_bytes(&entry.bytes)?;
        if record.seq != entry.seq {
            return Err(format!("the record says seq {}, the feed {}", record.seq, entry.seq));
        }
        let kept = self.lock().kept.remove(&entry.stream).filter(|kept| kept.version + 1 == entry.seq);
        let kept = match (entry.seq, kept) {
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
    }
}
