//! Submitting a move: the single writer per game, the expected-version
//! check, request-id idempotency, and the append.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ludo_engine::Seat;
use ludo_storage::{AppendRequest, StoreError, StreamId};

use crate::api::{MoveAccepted, MoveInput, Submission};
use crate::error::ServiceError;
use ludo_record::bot::{BotMark, BotSeat};
use ludo_record::record::{MoveRecord, Record, RecordBody};

use super::commit::Proposal;
use super::ids::GameId;
use super::{GameService, Slot, Writer, answer, check_request_id, refusal, refused, timestamp};

impl GameService {
    /// Submits a move for the token's seat.
    ///
    /// # Errors
    /// `unauthorized`, `invalid_input`, `rule_violation`, `not_your_turn`,
    /// `game_finished`, `version_conflict`, `request_id_reused`, storage errors.
    /// Nothing is appended unless the answer is `Ok`.
    pub async fn submit(&self, id: &GameId, token: Option<&str>, request: impl Into<Submission>) -> Result<MoveAccepted, ServiceError> {
        self.submit_as(id, Mover::Token(token), request.into()).await
    }

    /// [`Self::submit_move`], counted in the move metrics.
    pub(super) async fn submit_as(&self, id: &GameId, mover: Mover<'_>, request: Submission) -> Result<MoveAccepted, ServiceError> {
        let started = std::time::Instant::now();
        let answer = self.submit_move(id, mover, request).await;
        let outcome = answer.as_ref().map_or_else(ServiceError::code, |_| "accepted");
        self.metrics.observe_move(outcome, started.elapsed());
        if let (Ok(accepted), Mover::Bot(_, bot)) = (&answer, mover) {
            let label = crate::metrics::BotLabel { kind: accepted.kind.clone(), level: bot.level.name().into() };
            self.metrics.bot_moves.get_or_create(&label).inc();
        }
        answer
    }

    pub(super) async fn submit_move(&self, id: &GameId, token: Mover<'_>, request: Submission) -> Result<MoveAccepted, ServiceError> {
        if let Some(request_id) = &request.request_id {
            check_request_id(request_id)?;
        }
        if !self.store.shared() {
            return self.submit_on(id, token, request, Cached::IsLatest).await;
        }
        // On a shared store the cached game may be behind what other
        // servers appended. Writes do not ask the store first (that would
        // be a round trip on every move): a move is tried on the cached
        // game, and only when it is refused in a way a stale game would
        // explain (the store's conflict above all) is it tried once more on
        // the game caught up with the store, which decides.
        self.hearing.call_once(|| {
            tokio::spawn(hear(Arc::downgrade(&self.games), self.store.subscribe()));
        });
        // A notice already told of appends this cache lacks: catch up first.
        let heard_behind = self
            .games
            .lock()
            .expect("games lock")
            .get(&id.stream())
            .is_some_and(|slot| slot.heard.load(Ordering::Relaxed) > slot.current().version + 1);
        if heard_behind {
            return self.submit_on(id, token, request, Cached::IsLatest).await;
        }
        match self.submit_on(id, token, request.clone(), Cached::MayBeBehind).await {
            Err(
                ServiceError::VersionConflict { .. }
                | ServiceError::NotYourTurn { .. }
                | ServiceError::RuleViolation { .. }
                | ServiceError::InvalidInput { .. }
                | ServiceError::GameFinished,
            ) => self.submit_on(id, token, request, Cached::IsLatest).await,
            other => other,
        }
    }

    /// One try of [`Self::submit_move`], on the game as cached (`MayBeBehind`)
    /// or as the store has it (`IsLatest`: caught up first on a shared store).
    async fn submit_on(&self, id: &GameId, mover: Mover<'_>, request: Submission, cached: Cached) -> Result<MoveAccepted, ServiceError> {
        let (slot, seat, writer) = self.writing(id, mover, cached).await?;
        let current = slot.current();
        if let Some(request_id) = &request.request_id
            && let Some(&seq) = writer.request_ids.get(request_id)
        {
            drop(writer);
            return self.retried(&slot, seq, seat, &request).await;
        }
        if let Some(expected) = request.expected_version
            && expected != current.version
        {
            return Err(ServiceError::VersionConflict { expected, current: current.version });
        }
        // A bot moves only for a seat it still plays (or whose move is due after a timeout).
        if let Mover::Bot(seat, bot) = mover
            && current.table.bot_for(seat) != Some(bot)
        {
            return Err(ServiceError::VersionConflict {
                expected: request.expected_version.unwrap_or(current.version),
                current: current.version,
            });
        }
        // Only while every seat is taken, within the seat's time, and not
        // by a seat that resigned (its bot plays): asked before the move is
        // parsed, so a seat that may not move hears why. The time is the
        // record's, to the millisecond; the commit's fold asks again, as
        // replay does.
        let mark = match mover {
            Mover::Token(_) => None,
            Mover::Bot(_, bot) => Some(bot.level),
        };
        let at = timestamp(self.clock.now());
        let at_ms = ludo_record::clock::millis(&at).map_err(ServiceError::Internal)?;
        current.table.check_move(seat, mark, at_ms).map_err(refusal)?;
        let mv = match request.mv {
            MoveInput::Json(json) => current.game.parse_move("move", &json).map_err(refused)?,
            MoveInput::Typed(mv) => mv,
        };
        let record = MoveRecord::new(seat, &mv, request.request_id.clone())
            .map_err(|e| ServiceError::Internal(format!("the move does not serialize: {e}")))?;
        let body = RecordBody::Move(match mover {
            Mover::Token(_) => record,
            Mover::Bot(_, bot) => record.by_bot(BotMark::of(bot.level)),
        });
        let expected = request.expected_version.unwrap_or(current.version);
        let proposal = Proposal { body, mv: Some(mv), at, expected };
        let committed = self.commit(&slot, writer, current, proposal).await?;
        let now = &committed.now;
        let mut answer = answer(slot.meta.kind, now.version, &now.status, &now.game, seat, &committed.effects, request.answer);
        answer.receipt = committed.receipt.into_inner();
        Ok(answer)
    }

    /// The game locked for writing by `mover`'s seat: the game the cache
    /// holds (`cached`), the seat (a person's counted against its limit; the
    /// server's own bots are bounded by its workers), and the writer lock.
    /// If the cache forgot the game between the lookup and the lock (a tiny
    /// window, but a reader could reload it in between and never see this
    /// record), the log is the truth: it is loaded again.
    pub(super) async fn writing(
        &self,
        id: &GameId,
        mover: Mover<'_>,
        cached: Cached,
    ) -> Result<(Arc<Slot>, Seat, tokio::sync::OwnedMutexGuard<Writer>), ServiceError> {
        loop {
            let slot = match cached {
                Cached::IsLatest => self.slot(id).await?,
                Cached::MayBeBehind => self.cached_slot(id.stream()).await?,
            };
            let seat = match mover {
                Mover::Token(token) => slot.seat(token)?,
                Mover::Bot(seat, _) => seat,
            };
            if let Mover::Token(_) = mover {
                self.limit_seat(slot.meta.stream, seat)?;
            }
            let writer = Arc::clone(&slot.writer).lock_owned().await;
            if !writer.evicted {
                return Ok((slot, seat, writer));
            }
        }
    }

    /// Counts a record the seat asks for (a move, a hand-over) against its
    /// limit, when moves per seat are limited.
    pub(super) fn limit_seat(&self, stream: StreamId, seat: Seat) -> Result<(), ServiceError> {
        match &self.seat_moves {
            Some(limiter) => limiter
                .check(&(stream, seat))
                .map_err(|retry_after| ServiceError::RateLimited { what: "moves from this seat", retry_after }),
            None => Ok(()),
        }
    }

    /// Appends `record`, the game's next, as the game's single writer (`writer`, locked), and chains the
    /// writer to it; answers the record's feed position. The one path every
    /// record after record 0 is written by. Refused, it appended nothing: a
    /// conflict is `version_conflict` against `expected`, the version the
    /// caller decided on.
    pub(super) async fn append_next(&self, slot: &Slot, writer: &mut Writer, record: &Record, expected: u64) -> Result<u64, ServiceError> {
        let request = AppendRequest::at(slot.meta.stream, record.seq, vec![record.to_bytes()]);
        let appended = match self.store.append(request).await {
            Ok(appended) => appended,
            Err(err) => {
                // The store may hold more than this cache knows (a failed flush
                // after a write): forget the game so the next request reloads it.
                // A refusal wrote nothing (a full disk, a closed store): the
                // cache is still the game, and keeping it keeps reads off a
                // store that may be struggling. A conflict wrote nothing either:
                // on a shared store the cache is only behind, and the next use
                // catches it up record by record.
                let nothing_written = matches!(err, StoreError::Unavailable(_) | StoreError::Closed | StoreError::Invalid(_));
                if !(nothing_written || self.store.shared() && matches!(err, StoreError::Conflict { .. })) {
                    writer.evicted = true;
                    self.evict(slot.meta.stream);
                }
                return Err(match err {
                    StoreError::Conflict { actual_next, .. } => {
                        ServiceError::VersionConflict { expected, current: actual_next.saturating_sub(1) }
                    }
                    other => other.into(),
                });
            }
        };
        writer.last_hash = record.hash_bytes().map_err(ServiceError::Internal)?;
        Ok(appended.first_position)
    }

    /// The first answer to a request id, if this is an exact retry.
    pub(super) async fn retried(&self, slot: &Slot, seq: u64, seat: Seat, request: &Submission) -> Result<MoveAccepted, ServiceError> {
        let (game, table) = self.game_and_table_at(slot, seq).await?;
        let (first_seat, first_move, effects) = {
            let history = slot.history.read().expect("history lock");
            let history = history.as_ref().ok_or_else(|| ServiceError::Internal("the history went missing".into()))?;
            let (first_seat, first_move) =
                history.move_of(seq).cloned().ok_or_else(|| ServiceError::Internal("request id names a non-move record".into()))?;
            (first_seat, first_move, history.effects(seq).to_vec())
        };
        // The same move is the same typed move (its canonical form is its
        // serialization), by the same seat.
        let same_move = match &request.mv {
            MoveInput::Json(json) => game.parse_move("move", json).is_ok_and(|mv| mv == first_move),
            MoveInput::Typed(mv) => *mv == first_move,
        };
        if first_seat != seat || !same_move {
            let request_id = request.request_id.clone().unwrap_or_default();
            return Err(ServiceError::RequestIdReused { request_id, version: seq });
        }
        Ok(answer(slot.meta.kind, seq, &table.status(game.status()), &game, seat, &effects, request.answer))
    }
}

/// Who a submission comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum Mover<'a> {
    /// Whoever holds this seat token (none: refused).
    Token(Option<&'a str>),
    /// The server's bot `bot`, playing `seat`.
    Bot(Seat, BotSeat),
}

/// Whether a submission may use the cached game as it is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Cached {
    /// The cache is the latest state (this process is the only writer), or
    /// must be made so first.
    IsLatest,
    /// The cache may be behind the store; a refusal is checked again.
    MayBeBehind,
}

/// Keeps each cached game's `heard` up with a shared store's notices (its
/// own appends' and other servers'), until the service is gone. A lost
/// notice only loses the hint: a stale cache still learns from the store.
async fn hear(
    games: std::sync::Weak<Mutex<HashMap<StreamId, Arc<Slot>>>>,
    mut notices: tokio::sync::broadcast::Receiver<ludo_storage::Appended>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match notices.recv().await {
            Ok(notice) => {
                let Some(games) = games.upgrade() else { return };
                if let Some(slot) = games.lock().expect("games lock").get(&notice.stream) {
                    slot.heard.fetch_max(notice.next_seq, Ordering::Relaxed);
                }
            }
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
    }
}
