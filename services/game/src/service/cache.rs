//! The cache of live games: loading from the log, eviction of idle games.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use ludo_storage::StreamId;

use crate::error::ServiceError;
use crate::secrets::Secrets;
use ludo_record::record::{MoveRecord, Record, RecordBody};
use ludo_record::replay::{ReplayError, Replayed, replay};

use super::ids::{GameId, game_id};
use super::{Current, GameService, Slot, Writer, blocking, corrupt, parse_records};

/// Forgets the least recently used games that no writer holds, down to 90%
/// of `max` (so eviction is not paid on every insert), never `keep`, and
/// returns how many. Each is marked evicted under its writer lock: a writer
/// that gets the lock later sees the mark and reloads the game from its log.
/// The bound is soft: games being written are never forgotten.
pub(super) fn evict_idle(games: &mut HashMap<StreamId, Arc<Slot>>, max: usize, keep: StreamId) -> u64 {
    let mut evicted = 0;
    let target = max - max / 10;
    let mut by_age: Vec<(u64, StreamId)> = games.iter().map(|(stream, slot)| (slot.last_used.load(Ordering::Relaxed), *stream)).collect();
    by_age.sort_unstable();
    for (_, stream) in by_age {
        if games.len() <= target {
            break;
        }
        if stream == keep {
            continue;
        }
        let writer = Arc::clone(&games[&stream].writer);
        if let Ok(mut idle) = writer.try_lock() {
            idle.evicted = true;
            games.remove(&stream);
            evicted += 1;
        }
    }
    evicted
}

impl GameService {
    pub(super) fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::Relaxed)
    }

    /// Caches a live game and keeps the gauge in step.
    pub(super) fn cache(&self, stream: StreamId, slot: Arc<Slot>) -> Arc<Slot> {
        let mut games = self.games.lock().expect("games lock");
        let slot = Arc::clone(games.entry(stream).or_insert(slot));
        if games.len() > self.max_live_games {
            let evicted = evict_idle(&mut games, self.max_live_games, stream);
            self.metrics.evictions.inc_by(evicted);
        }
        self.metrics.live_games.set(games.len() as i64);
        slot
    }

    /// Forgets a cached game (it reloads from its log on the next request).
    pub(super) fn evict(&self, stream: StreamId) {
        let mut games = self.games.lock().expect("games lock");
        games.remove(&stream);
        self.metrics.live_games.set(games.len() as i64);
    }

    pub(super) async fn slot(&self, id: &GameId) -> Result<Arc<Slot>, ServiceError> {
        self.slot_of(id.stream()).await
    }

    /// The cached game, or the game loaded from its log.
    pub(super) async fn slot_of(&self, stream: StreamId) -> Result<Arc<Slot>, ServiceError> {
        let cached = self.games.lock().expect("games lock").get(&stream).map(Arc::clone);
        if let Some(slot) = cached {
            slot.last_used.store(self.tick(), Ordering::Relaxed);
            if !self.store.shared() {
                // This process is the game's only writer: the cache is the
                // latest acknowledged state.
                return Ok(slot);
            }
            return self.caught_up(slot).await;
        }
        self.loaded(stream).await
    }

    /// The cached game as it is, even on a shared store where it may be
    /// behind (the submit path checks a refusal again; see `submit`), or
    /// the game loaded from its log.
    pub(super) async fn cached_slot(&self, stream: StreamId) -> Result<Arc<Slot>, ServiceError> {
        let cached = self.games.lock().expect("games lock").get(&stream).map(Arc::clone);
        if let Some(slot) = cached {
            slot.last_used.store(self.tick(), Ordering::Relaxed);
            return Ok(slot);
        }
        self.loaded(stream).await
    }

    /// The game loaded from its log and cached.
    async fn loaded(&self, stream: StreamId) -> Result<Arc<Slot>, ServiceError> {
        let id = game_id(stream);
        let store = Arc::clone(&self.store);
        let (bytes, sealed) = tokio::try_join!(store.read(stream, 0, None), store.sealed(stream))?;
        if bytes.is_empty() {
            return Err(ServiceError::NotFound { what: "game", id });
        }
        let sealed =
            sealed.ok_or_else(|| ServiceError::CorruptLog { game: id.clone(), seq: 0, reason: "the game's secrets are missing".into() })?;
        let secrets = Secrets::from_bytes(&sealed).map_err(|reason| ServiceError::CorruptLog { game: id.clone(), seq: 0, reason })?;
        // A whole replay: off the async workers, like the reads before it.
        let (id, records, secrets, replayed) = blocking(move || {
            let records = parse_records(&id, bytes)?;
            let replayed = replay(&records, &secrets.seed, false).map_err(|e| corrupt(&id, e))?;
            Ok::<_, ServiceError>((id, records, secrets, replayed))
        })
        .await??;
        let created_at = records[0].at.clone();
        let Replayed { state, request_ids, .. } = replayed;
        let slot = Arc::new(Slot {
            meta: self.meta(id, stream, state.kind, &state.created, created_at, secrets),
            writer: Arc::new(tokio::sync::Mutex::new(Writer { last_hash: state.last_hash, request_ids, evicted: false })),
            current: RwLock::new(Arc::new(Current::new(state.version, state.game, state.table))),
            last_used: AtomicU64::new(self.tick()),
            history: RwLock::new(None),
            heard: AtomicU64::new(0),
            receipt: tokio::sync::OnceCell::new(),
        });
        // Two readers may load the same game at once: keep whichever came first.
        let slot = self.cache(stream, slot);
        // A game with a running clock is watched by every server that loads it.
        self.wake_clock(stream, &slot.current());
        Ok(slot)
    }

    /// A cached game brought up to the store's length. On a shared store
    /// another server may have appended to the game since this one last
    /// looked: every read asks the store for the records past the cached
    /// version (one indexed read, usually answering none), so a read never
    /// answers an older version than one already acknowledged anywhere, and
    /// the records this server has not seen are applied as replay applies
    /// them, request ids included (a retry sent here after its first answer
    /// came from elsewhere finds it).
    async fn caught_up(&self, slot: Arc<Slot>) -> Result<Arc<Slot>, ServiceError> {
        let stream = slot.meta.stream;
        // One read: the records past the cached version (usually none).
        let newer = self.records(&slot, slot.current().version + 1, None).await?;
        if newer.is_empty() {
            return Ok(slot);
        }
        let mut writer = Arc::clone(&slot.writer).lock_owned().await;
        if writer.evicted {
            // Forgotten meanwhile: load it afresh (it is not cached now).
            drop(writer);
            return Box::pin(self.slot_of(stream)).await;
        }
        let current = slot.current();
        // A writer of this process may have applied some of them while the
        // lock was awaited; if what is left does not follow on, read again.
        let mut records: Vec<Record> = newer.into_iter().filter(|record| record.seq > current.version).collect();
        if records.first().is_some_and(|record| record.seq != current.version + 1) {
            records = self.records(&slot, current.version + 1, None).await?;
        }
        if records.is_empty() {
            return Ok(slot);
        }
        let now = apply_newer(&slot, &mut writer, &current, &records).map_err(|e| corrupt(&slot.meta.id, e))?;
        tracing::debug!(game = %slot.meta.id, from = current.version, to = now.version, "caught up with the store");
        drop(writer);
        self.wake_clock(stream, &now);
        Ok(slot)
    }
}

/// Applies `records`, the ones after `current`, to the cached game as
/// replay applies them (request ids and history included), under its
/// writer lock (`writer`), and answers the game after them. On an error
/// the cache is as it was.
fn apply_newer(slot: &Slot, writer: &mut Writer, current: &Current, records: &[Record]) -> Result<Arc<Current>, ReplayError> {
    let (mut game, mut version, mut last_hash) = (current.game.clone(), current.version, writer.last_hash);
    let mut table = Arc::clone(&current.table);
    let mut scratch = Vec::new();
    let mut request_ids = Vec::new();
    let mut history = slot.history.write().expect("history lock");
    let kept = history.as_ref().map(super::history::History::len);
    for record in records {
        let step = match ludo_record::replay::apply_next(&mut game, (version, &last_hash), &mut table, record, &mut scratch) {
            Ok(step) => step,
            Err(err) => {
                if let (Some(history), Some(kept)) = (history.as_mut(), kept) {
                    history.truncate(kept);
                }
                return Err(err);
            }
        };
        if let RecordBody::Move(MoveRecord { request_id: Some(id), .. }) = &record.body {
            request_ids.push((id.clone(), record.seq));
        }
        if let Some(history) = history.as_mut() {
            history.push_replayed(step.applied, step.effects, &game, &table);
        }
        version += 1;
        last_hash = step.hash;
    }
    drop(history);
    writer.request_ids.extend(request_ids);
    writer.last_hash = last_hash;
    let now = Arc::new(Current::new(version, game, table));
    *slot.current.write().expect("current lock") = Arc::clone(&now);
    Ok(now)
}
