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

use std::collections::HashMap;
use std::sync::Mutex;

use ludo_storage::{EventStore, FeedEntry, StreamId};

use super::{Folded, Projection, Rows};
use crate::secrets::Secrets;
use crate::service::is_reserved;
use crate::service::listing::StoredSummary;
use ludo_record::kinds::AnyGame;
use ludo_record::record::{Record, RecordBody};
use ludo_record::replay::{self, Replayer, replay};
use ludo_record::table::Table;
use ludo_transparency::Imported;

/// Games whose state the projection keeps in memory between folds, at
/// most; one it forgot is replayed from its log when it next moves.
const MAX_KEPT: usize = 10_000;

/// Folds the feed into one summary per game, keyed by the game's stream id.
#[derive(Default)]
pub struct Games {
    kept: Mutex<HashMap<StreamId, Kept>>,
}

/// A game as the projection last folded it.
struct Kept {
    kind: &'static ludo_record::kinds::Kind,
    game: AnyGame,
    table: std::sync::Arc<Table>,
    version: u64,
    created_at: String,
    imported: Option<Imported>,
}

impl Kept {
    fn of(replayer: Replayer, created_at: String, imported: Option<Imported>) -> Kept {
        Kept { kind: replayer.kind, game: replayer.game, table: replayer.table, version: replayer.version, created_at, imported }
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
        Ok(())
    }
}

impl Games {
    /// The summary row a fold of `stream` leaves, as bytes, from its key.
    #[must_use]
    pub fn key(stream: StreamId) -> Vec<u8> {
        stream.0.to_vec()
    }

    async fn fold_record(&self, store: &dyn EventStore, entry: &FeedEntry) -> Result<Vec<u8>, String> {
        let record = Record::from_bytes(&entry.bytes)?;
        if record.seq != entry.seq {
            return Err(format!("the record says seq {}, the feed {}", record.seq, entry.seq));
        }
        let kept = self.kept.lock().expect("games lock").remove(&entry.stream).filter(|kept| kept.version + 1 == entry.seq);
        let kept = match (entry.seq, kept) {
            (0, _) => {
                let secrets = secrets(store, entry.stream).await?;
                let (replayer, _) = Replayer::start(&record, &secrets.seed).map_err(|e| format!("record {}: {}", e.seq, e.reason))?;
                Kept::of(replayer, record.at.clone(), secrets.imported)
            }
            (_, Some(mut kept)) => {
                kept.fold(&record).map_err(|reason| format!("record {}: {reason}", record.seq))?;
                kept
            }
            (seq, None) => {
                // Forgotten (or never seen by this process): the log up to it.
                let secrets = secrets(store, entry.stream).await?;
                let stored = store.read(entry.stream, 0, Some(seq + 1)).await.map_err(|e| e.to_string())?;
                let records = stored.iter().map(|s| Record::from_bytes(&s.bytes)).collect::<Result<Vec<_>, _>>()?;
                if records.len() as u64 != seq + 1 || records.last().map(Record::hash_bytes) != Some(record.hash_bytes()) {
                    return Err(format!("the game's log does not hold record {seq} as the feed does"));
                }
                let created_at = records[0].at.clone();
                let replayed = replay(&records, &secrets.seed, false).map_err(|e| format!("record {}: {}", e.seq, e.reason))?;
                Kept::of(replayed.state, created_at, secrets.imported)
            }
        };
        let status = kept.table.status(kept.game.status());
        let summary = StoredSummary::new(kept.kind.id.into(), &kept.table, kept.created_at.clone(), (kept.version, &status), &record.at)
            .imported(kept.imported.clone());
        // A game over moves no more: nothing to keep of it.
        if !status.is_finished() {
            let mut games = self.kept.lock().expect("games lock");
            if games.len() >= MAX_KEPT {
                games.clear();
            }
            games.insert(entry.stream, kept);
        }
        Ok(summary.to_bytes())
    }
}

/// The game's sealed data (its seed, and where an imported game came from).
async fn secrets(store: &dyn EventStore, stream: StreamId) -> Result<Secrets, String> {
    let sealed = store.sealed(stream).await.map_err(|e| e.to_string())?.ok_or("the game has no sealed data")?;
    Secrets::from_bytes(&sealed)
}

impl Projection for Games {
    fn name(&self) -> &'static str {
        "games"
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
            let summary = self.fold_record(&**rows.store(), entry).await?;
            rows.put(Games::key(entry.stream), summary);
            Ok(())
        })
    }

    fn forget(&self) {
        self.kept.lock().expect("games lock").clear();
    }
}
