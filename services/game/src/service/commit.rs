//! The commit pipeline: the one path by which a record enters a live
//! game's log, and the subscribers that hear of it.
//!
//! A command — a person's move, a bot's, a join, a leave, a renewed
//! token, a hand-over, a timeout, a resignation, a cancel — checks what
//! only it knows (who asks, what the table allows) and decides a record
//! body under the game's writer lock. [`GameService::commit`] does the
//! rest, in the same order for all of them:
//! 1. **fold**: the body is applied to a copy of the game through
//!    [`ludo_record::replay::evolve`], the step replay applies to a stored log,
//!    so a record is applied live exactly as it will replay;
//! 2. **seal**: the record is sealed onto the game's hash chain with the
//!    fold's effects as a spectator sees them;
//! 3. **append**: it is appended at the version the command decided on
//!    (the game's summary is not: the `games` projection folds it from the
//!    feed, off this path);
//! 4. **publish**: the request id, the history and the current state are
//!    updated under the lock, and watchers are rung once reads return it;
//! 5. **dispatch**: the lock let go, the committed record goes to every
//!    subscriber, in the order [`subscribers`] registers them.
//!
//! Record 0 is written by `create` (it also stores the game's secrets),
//! and dispatched the same way.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use tokio::sync::OwnedMutexGuard;

use super::{Current, GameService, Slot, Writer};
use crate::error::ServiceError;
use crate::metrics::{KindLabel, Metrics, RecordLabel};
use ludo_engine::Viewer;
use ludo_record::kinds::{AnyEffect, AnyMove};
use ludo_record::record::{MoveRecord, Record, RecordBody};
use ludo_record::replay::{self, Refused};
use ludo_transparency::Receipt;

/// A record a command decided on, before it is committed.
#[derive(Debug)]
pub(super) struct Proposal {
    /// What the record says.
    pub(super) body: RecordBody,
    /// The record's move, typed (a move record's; parsed once, at the edge).
    pub(super) mv: Option<AnyMove>,
    /// The record's time (RFC 3339, to the millisecond).
    pub(super) at: String,
    /// The version the command decided on: an append that finds the game
    /// elsewhere is `version_conflict` against it.
    pub(super) expected: u64,
}

/// A record committed: durable, readable, and handed to the subscribers.
#[derive(Debug)]
pub(super) struct Committed {
    /// The game.
    pub(super) slot: Arc<Slot>,
    /// The game before the record (none for record 0).
    pub(super) before: Option<Arc<Current>>,
    /// The game after it.
    pub(super) now: Arc<Current>,
    /// The record's position in the store's feed.
    pub(super) position: u64,
    /// The record's time.
    pub(super) at: String,
    /// The record's type (`move`, `seat_joined` …).
    pub(super) record: &'static str,
    /// What the record did, unredacted.
    pub(super) effects: Vec<AnyEffect>,
    /// The game's receipt from the transparency log, when this record
    /// ended it and its leaf was added (set by that subscriber).
    pub(super) receipt: OnceLock<Receipt>,
}

impl Committed {
    /// Whether this record ended the game.
    pub(super) fn ended_game(&self) -> bool {
        self.before.as_ref().is_some_and(|before| !before.status.is_finished()) && self.now.status.is_finished()
    }
}

/// What a subscriber's hearing resolves to (boxed: subscribers are kept
/// as trait objects).
pub(super) type Heard<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Hears every record the service commits, in commit order for each game,
/// after the game's writer lock is let go. A subscriber never refuses a
/// record (it is durable): what fails is logged, and made good later by
/// the subscriber itself (the transparency log's sweep, a clock's retry).
pub(super) trait Subscriber: Send + Sync {
    /// What the subscriber keeps up (for logs and tests).
    fn name(&self) -> &'static str;

    /// Hears `commit`; `service` is what the subscriber acts through.
    fn committed<'a>(&'a self, service: &'a GameService, commit: &'a Committed) -> Heard<'a>;
}

/// The subscribers a service starts with, in the order they hear a record:
/// the projections this server keeps (the game as the commit left it, so
/// that they need not fold the record again), the game's webhook (it only
/// queues a call), then its clock's timer and its bots, then the counters,
/// and last the transparency log, whose leaf for a game that just ended is
/// in the answer to the command.
pub(super) fn subscribers(metrics: Arc<Metrics>) -> Vec<Box<dyn Subscriber>> {
    vec![
        Box::new(Offers),
        Box::new(super::webhooks::Webhooks),
        Box::new(super::clocks::ClockTimers),
        Box::new(super::bots::BotTurns),
        Box::new(Counters(metrics)),
        Box::new(super::tlog::EndedGames),
    ]
}

/// Offers each committed record's game state to the projections this
/// server keeps (see `projection::games::Offered`).
struct Offers;

impl Subscriber for Offers {
    fn name(&self) -> &'static str {
        "projections"
    }

    fn committed<'a>(&'a self, service: &'a GameService, commit: &'a Committed) -> Heard<'a> {
        let meta = &commit.slot.meta;
        service.projections().offer(crate::projection::games::Offered {
            position: commit.position,
            stream: meta.stream,
            now: Arc::clone(&commit.now),
            kind: meta.kind,
            created_at: meta.created_at.clone(),
            last_at: commit.at.clone(),
            imported: meta.secrets.imported.clone(),
        });
        Box::pin(std::future::ready(()))
    }
}

/// Counts committed records by type, and new games by kind.
struct Counters(Arc<Metrics>);

impl Subscriber for Counters {
    fn name(&self) -> &'static str {
        "metrics"
    }

    fn committed<'a>(&'a self, _: &'a GameService, commit: &'a Committed) -> Heard<'a> {
        self.0.records.get_or_create(&RecordLabel { record: commit.record.into() }).inc();
        if commit.before.is_none() {
            self.0.games_created.get_or_create(&KindLabel { kind: commit.slot.meta.kind.id.into() }).inc();
        }
        Box::pin(std::future::ready(()))
    }
}

impl GameService {
    /// Commits `proposal` as the next record of the game in `slot`, which
    /// `writer` locks at `before` (see the module's docs for the steps),
    /// and answers it as its subscribers heard it.
    ///
    /// # Errors
    /// What the fold refuses (the table's or the engine's refusal);
    /// `version_conflict` and storage errors from the append. Nothing is
    /// committed then, and no subscriber hears anything.
    pub(super) async fn commit(
        &self,
        slot: &Arc<Slot>,
        mut writer: OwnedMutexGuard<Writer>,
        before: Arc<Current>,
        proposal: Proposal,
    ) -> Result<Committed, ServiceError> {
        let Proposal { body, mv, at, expected } = proposal;
        let seq = before.version + 1;
        let at_ms = replay::time_of(&before.table, &at).map_err(ServiceError::Internal)?;
        let (mut game, mut table) = (before.game.clone(), Arc::clone(&before.table));
        let (applied, effects) = replay::evolve(&mut game, &mut table, &body, mv, at_ms).map_err(|refused| match refused {
            Refused::Table(refused) => super::refusal(refused),
            Refused::Engine(err) => super::refused(err),
            Refused::Malformed(reason) => ServiceError::Internal(format!("the service decided a record the fold refuses: {reason}")),
        })?;
        let public: Vec<AnyEffect> = effects.iter().map(|e| game.redact(e, Viewer::Spectator)).collect();
        let name = body.type_name();
        let request_id = match &body {
            RecordBody::Move(MoveRecord { request_id, .. }) => request_id.clone(),
            _ => None,
        };
        let record = Record::seal(seq, at.clone(), body, &public, &writer.last_hash)
            .map_err(|e| ServiceError::Internal(format!("the {name} record does not serialize: {e}")))?;
        let now = Arc::new(Current::new(seq, game, table));
        let position;
        {
            // Watchers hear of the record once reads return it (when this drops).
            let _ring_when_readable = self.doorbells.hold(slot.meta.stream, seq);
            position = self.append_next(slot, &mut writer, &record, expected).await?;
            if let Some(request_id) = request_id {
                writer.request_ids.insert(request_id, seq);
            }
            if let Some(history) = slot.history.write().expect("history lock").as_mut() {
                history.push_replayed(applied, effects.clone(), &now.game, &now.table);
            }
            *slot.current.write().expect("current lock") = Arc::clone(&now);
            drop(writer);
        }
        if !matches!(record.body, RecordBody::Move(_)) {
            tracing::info!(game = %slot.meta.id, record = name, seq, "seat record appended");
        }
        let committed =
            Committed { slot: Arc::clone(slot), before: Some(before), now, position, at, record: name, effects, receipt: OnceLock::new() };
        self.dispatch(&committed).await;
        Ok(committed)
    }

    /// Hands a committed record to every subscriber, in order.
    pub(super) async fn dispatch(&self, committed: &Committed) {
        for subscriber in &self.subscribers {
            tracing::trace!(subscriber = subscriber.name(), game = %committed.slot.meta.id, seq = committed.now.version, "dispatched");
            subscriber.committed(self, committed).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::SystemClock;
    use crate::api::{CreateGame, JoinGame, SubmitMove};
    use crate::service::GameId;

    #[test]
    fn the_transparency_log_hears_last_so_the_rest_never_wait_for_it() {
        // The answer waits for the last subscriber; webhooks, clocks and
        // bots must not wait behind a leaf being added.
        let metrics = Arc::new(Metrics::new(Arc::new(ludo_storage::MemoryStore::new())));
        let names: Vec<&str> = subscribers(metrics).iter().map(|s| s.name()).collect();
        assert_eq!(names, ["projections", "webhooks", "clocks", "bots", "metrics", "transparency_log"]);
    }

    /// What a subscriber heard of one record: its seq, type, whether it
    /// ended the game, and whether the game's state was already readable.
    type Heard = (u64, &'static str, bool, bool);

    struct Recording(Arc<Mutex<Vec<Heard>>>);

    impl Subscriber for Recording {
        fn name(&self) -> &'static str {
            "recording"
        }

        fn committed<'a>(&'a self, _: &'a GameService, commit: &'a Committed) -> super::Heard<'a> {
            let readable = commit.slot.current().version == commit.now.version;
            self.0.lock().expect("lock").push((commit.now.version, commit.record, commit.ended_game(), readable));
            Box::pin(std::future::ready(()))
        }
    }

    #[tokio::test]
    async fn every_command_commits_through_the_pipeline_and_each_record_is_heard_once_in_order() {
        let mut service = GameService::new(Arc::new(ludo_storage::MemoryStore::new()), Arc::new(SystemClock));
        let heard = Arc::new(Mutex::new(Vec::new()));
        service.subscribers.push(Box::new(Recording(Arc::clone(&heard))));
        // Seat 1 open: joined by invitation, its token renewed, then moves, then a resignation.
        let request = CreateGame {
            players: vec![Some("Ann".into()), None],
            ..CreateGame::new("cardinal", ["Ann", "Bob"]).with_options(json!({"first_seat": 0}))
        };
        let game = service.create(request).await.expect("created");
        let id: GameId = game.id.parse().expect("id");
        let invitation = game.invitations[1].code.clone();
        let joined = service.join(&id, JoinGame { name: "Bob".into(), invitation: Some(invitation), seat: None }).await.expect("joined");
        let bob = service.reissue_token(&id, Some(&joined.token), joined.seat).await.expect("renewed").token;
        let ann = game.seats[0].token.clone();
        for _ in 0..4 {
            let state = service.get(&id, None).await.expect("state");
            let to_move = state.status.to_move().first().copied().expect("someone is to move");
            let token = if to_move.0 == 0 { &ann } else { &bob };
            let moves = service.legal_moves(&id, Some(token)).await.expect("legal moves");
            let mv = SubmitMove { mv: moves.moves[0].to_json(), expected_version: None, request_id: None };
            service.submit(&id, Some(token), mv).await.expect("a legal move");
        }
        // A refused command commits nothing, and nobody hears of it.
        let refused = SubmitMove { mv: json!({"nonsense": true}), expected_version: None, request_id: None };
        assert!(service.submit(&id, Some(&ann), refused).await.is_err());
        let resigned = service.resign(&id, Some(&ann)).await.expect("resigned");
        assert!(resigned.status.is_finished());

        let log = service.events(&id, None, 0, 100).await.expect("log").events;
        let heard = heard.lock().expect("lock").clone();
        let expected: Vec<Heard> =
            log.iter().map(|event| (event.seq, heard_name(&event.kind), event.seq == resigned.version, true)).collect();
        assert_eq!(heard, expected, "each record heard once, in order, once readable; only the last ended the game");
        assert_eq!(
            log.iter().map(|event| event.kind.as_str()).collect::<Vec<_>>(),
            ["game_created", "seat_joined", "seat_token", "move", "move", "move", "move", "seat_resigned"]
        );
        assert!(resigned.receipt.is_some(), "the transparency log heard the end, and its receipt is in the answer");
    }

    /// The record type names as the pipeline reports them.
    fn heard_name(kind: &str) -> &'static str {
        ["game_created", "seat_joined", "seat_token", "move", "seat_resigned"].into_iter().find(|name| *name == kind).expect("a known type")
    }
}
