//! Live streams: a watcher follows one game's log from a seq on.
//!
//! - Woken only by its own game: the store's notices of durable appends go
//!   to one dispatcher, which rings the doorbell of the appended game only
//!   (a doorbell exists while someone watches that game). A watcher that
//!   hears its bell re-reads the log from where it is: the notice is only a
//!   doorbell, the log is the truth.
//! - Gone with its client: while it waits for records, a watcher also waits
//!   for its receiver to be dropped (the client went away: its connection
//!   closed or its gRPC call was cancelled) and ends then, not at the game's
//!   next record.
//! - Ended at shutdown: a graceful shutdown would otherwise wait on it.
//! - Ended when its seat changes hands: a stream opened as a seat (with
//!   its token or a stream ticket) follows the seat's changes in the log it
//!   reads, and ends with `seat_revoked` at the record where the seat
//!   changed hands (a leave, a renewed token, a bot's takeover after a
//!   timeout), before sending anything from it on, on whichever server it
//!   runs. A resignation is no change of hands: the seat's player keeps
//!   its view.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ludo_engine::Viewer;

use ludo_record::status::Status;
use ludo_storage::{EventStore, StreamId};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{mpsc, watch};

use super::{GameId, GameService, Slot, corrupt, effective, event, parse_records, seat_of};
use crate::api::{GameUpdate, StreamEnd};
use crate::error::ServiceError;
use ludo_record::kinds::{AnyEffect, AnyGame};
use ludo_record::record::{Record, RecordBody};
use ludo_record::replay::Replayer;
use ludo_record::table::Table;

/// Items buffered per watcher before it waits for its client to read.
const WATCH_BUFFER: usize = 64;

/// What a live stream carries.
#[derive(Debug, Clone)]
pub enum Watched {
    /// One record, with the caller's view after it.
    Update(Box<GameUpdate>),
    /// The game is over and its last record was sent: the stream ends here.
    /// (A stream that ends without this ended because the server stopped.)
    Over(StreamEnd),
}

/// The answer to a watch request.
#[derive(Debug)]
pub enum Watch {
    /// The records from the asked seq on, then each new one live.
    Live(mpsc::Receiver<Result<Watched, ServiceError>>),
    /// The game is over and its last record comes before the asked seq:
    /// there is nothing to send, ever.
    Over(StreamEnd),
}

/// Games with at least one live stream open, counted at each scrape.
pub(super) struct WatchedGames(pub(super) Arc<Doorbells>);

impl std::fmt::Debug for WatchedGames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchedGames")
    }
}

impl prometheus_client::collector::Collector for WatchedGames {
    fn encode(&self, mut encoder: prometheus_client::encoding::DescriptorEncoder) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeMetric;
        let gauge = prometheus_client::metrics::gauge::ConstGauge::new(i64::try_from(self.0.len()).unwrap_or(i64::MAX));
        gauge.encode(encoder.encode_descriptor("watched_games", "Games with at least one live stream open", None, gauge.metric_type())?)
    }
}

/// The doorbells of the games being watched, and the dispatcher ringing them.
#[derive(Debug, Default)]
pub(super) struct Doorbells {
    /// One bell per watched game. A std mutex: held only to look up, insert
    /// or remove, never across an await.
    bells: Mutex<HashMap<StreamId, watch::Sender<()>>>,
    /// Per game, the record a writer of this service is appending: the
    /// store's notice of it does not ring, the writer does once reads
    /// return it. A released hold of a watched game stays until the notice
    /// comes (so that append rings once, not twice) or the bell goes. A std
    /// mutex, like `bells`; taken after `bells` when both are.
    held: Mutex<HashMap<StreamId, Hold>>,
    dispatcher: OnceLock<()>,
}

impl Doorbells {
    fn bells(&self) -> std::sync::MutexGuard<'_, HashMap<StreamId, watch::Sender<()>>> {
        // The map is consistent between statements: poison is harmless.
        self.bells.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bell of `stream`; it rings for every durable append to it from
    /// now on. Starts the dispatcher on first use (it needs a runtime).
    fn subscribe(self: &Arc<Self>, store: &Arc<dyn EventStore>, stream: StreamId) -> Bell {
        self.dispatcher.get_or_init(|| {
            tokio::spawn(dispatch(Arc::downgrade(self), store.subscribe()));
        });
        let receiver = self.bells().entry(stream).or_insert_with(|| watch::channel(()).0).subscribe();
        Bell { doorbells: Arc::clone(self), stream, receiver: Some(receiver) }
    }

    /// Holds the bell of `stream` for the append of record `seq` until the
    /// returned guard is dropped, which rings it. The writer drops the guard
    /// once its new state is what reads return, so a watcher woken for a
    /// record never sends it before `GET` shows it (a page that reads the
    /// game on each record would otherwise stay one record behind).
    pub(super) fn hold(self: &Arc<Self>, stream: StreamId, seq: u64) -> Held {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).insert(stream, Hold { seq, released: false });
        Held { doorbells: Arc::clone(self), stream, seq }
    }

    /// Whether the append ending at `last_seq` is rung by its writer rather
    /// than by its notice (consuming a released hold: its work is done).
    fn rung_by_writer(&self, stream: StreamId, last_seq: u64) -> bool {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        match held.get(&stream) {
            Some(hold) if hold.seq >= last_seq => {
                if hold.released && hold.seq == last_seq {
                    held.remove(&stream);
                }
                true
            }
            _ => false,
        }
    }

    /// The record of `stream` a writer is making readable, if any: a watcher
    /// sends nothing from it on until its writer rings.
    fn held(&self, stream: StreamId) -> Option<u64> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).get(&stream).filter(|hold| !hold.released).map(|hold| hold.seq)
    }

    /// How many games have a doorbell (for tests: it must return to zero).
    pub(super) fn len(&self) -> usize {
        self.bells().len()
    }
}

/// Rings, for each durable append the store announces, the bell of its game
/// only. When notices were lost (this task fell behind), every bell rings:
/// each watcher re-reads its own game and finds whatever is new. Ends with
/// the store (every bell is then dropped, which ends every watcher) or with
/// the service.
async fn dispatch(doorbells: std::sync::Weak<Doorbells>, mut notices: tokio::sync::broadcast::Receiver<ludo_storage::Appended>) {
    loop {
        let notice = notices.recv().await;
        let Some(doorbells) = doorbells.upgrade() else { return };
        let mut bells = doorbells.bells();
        match notice {
            Ok(notice) => {
                let last_seq = notice.next_seq.saturating_sub(1);
                if let Some(bell) = bells.get(&notice.stream).filter(|_| !doorbells.rung_by_writer(notice.stream, last_seq)) {
                    bell.send_replace(());
                }
            }
            Err(RecvError::Lagged(_)) => bells.values().for_each(|bell| {
                bell.send_replace(());
            }),
            Err(RecvError::Closed) => {
                bells.clear();
                return;
            }
        }
    }
}

/// A writer's hold on its game's bell (see [`Doorbells::hold`]): rings it
/// when dropped, whether the append succeeded or not (a ring only makes
/// watchers look).
pub(super) struct Held {
    doorbells: Arc<Doorbells>,
    stream: StreamId,
    seq: u64,
}

/// A writer's claim on the ring for record `seq`.
#[derive(Debug, Clone, Copy)]
struct Hold {
    seq: u64,
    /// The writer has made the record readable and rung.
    released: bool,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Never one lock inside the other here: the dispatcher takes `bells`
        // then `held`. Released before the ring, so a woken watcher reads on.
        let watched = self.doorbells.bells().contains_key(&self.stream);
        {
            let mut held = self.doorbells.held.lock().unwrap_or_else(PoisonError::into_inner);
            if held.get(&self.stream).is_some_and(|hold| hold.seq == self.seq) {
                // Unwatched games keep nothing; a watched one keeps the
                // released hold until its notice (or its bell) goes.
                if watched {
                    held.insert(self.stream, Hold { seq: self.seq, released: true });
                } else {
                    held.remove(&self.stream);
                }
            }
        }
        if let Some(bell) = self.doorbells.bells().get(&self.stream) {
            bell.send_replace(());
        }
    }
}

/// A watcher's subscription to one game's bell; the bell is removed with
/// its last watcher.
struct Bell {
    doorbells: Arc<Doorbells>,
    stream: StreamId,
    receiver: Option<watch::Receiver<()>>,
}

impl Bell {
    /// Waits for the next ring; false when the bell is gone (the store closed).
    async fn rung(&mut self) -> bool {
        match &mut self.receiver {
            Some(receiver) => receiver.changed().await.is_ok(),
            None => false,
        }
    }
}

impl Drop for Bell {
    fn drop(&mut self) {
        drop(self.receiver.take());
        let mut bells = self.doorbells.bells();
        // Under the lock, so no watcher subscribes in between.
        if bells.get(&self.stream).is_some_and(|bell| bell.receiver_count() == 0) {
            bells.remove(&self.stream);
            let mut held = self.doorbells.held.lock().unwrap_or_else(PoisonError::into_inner);
            if held.get(&self.stream).is_some_and(|hold| hold.released) {
                held.remove(&self.stream);
            }
        }
    }
}

impl GameService {
    /// A live stream of the game's records from seq `from` on, each with the
    /// caller's view after it: first the records already in the log, then
    /// each new one as soon as it is durable. Every record comes exactly once
    /// and in order; once the game is over and its last record sent, a final
    /// [`Watched::Over`] ends the stream. It also ends when the receiver is
    /// dropped (within moments, not at the next record) and when the server
    /// shuts down. Redacted for the caller like every read.
    ///
    /// # Errors
    /// `not_found`, `unauthorized`; `invalid_input` (field `from`) when
    /// `from` is past the next record; later failures arrive in the stream.
    pub async fn watch(&self, id: &GameId, token: Option<&str>, from: u64) -> Result<Watch, ServiceError> {
        let slot = self.slot(id).await?;
        // The token and the seat's generation from one state: a stream
        // opened with a token renewed meanwhile is not given the new one's.
        let table = Arc::clone(&slot.current().table);
        let viewer = slot.viewer_at(&table, token)?;
        let generation = seat_of(viewer).map(|seat| table.generation(seat));
        self.watch_as(slot, viewer, generation, from).await
    }

    /// [`GameService::watch`] for a viewer already known; a seat's stream
    /// lasts while the seat's `generation` stays what it is (see `Table`).
    pub(super) async fn watch_as(
        &self,
        slot: Arc<Slot>,
        viewer: Viewer,
        generation: Option<u32>,
        from: u64,
    ) -> Result<Watch, ServiceError> {
        let current = slot.current();
        if from > current.version + 1 {
            return Err(ServiceError::invalid(
                "from",
                format!("the game is at version {}: a stream starts at {} at most", current.version, current.version + 1),
            ));
        }
        if from > current.version && current.status.is_finished() {
            return Ok(Watch::Over(StreamEnd { version: current.version, status: current.status.clone() }));
        }
        let mut closing = self.closing.subscribe();
        if *closing.borrow() {
            return Err(ServiceError::Storage("the server is shutting down".into()));
        }
        // A stream from the middle starts from the game's history, not from
        // a replay of its log from record 0.
        let start = if from > 0 { Some(self.game_and_table_at(&slot, from - 1).await?) } else { None };
        // Subscribe before reading the backlog, so no append falls between.
        let bell = self.doorbells.subscribe(&self.store, slot.meta.stream);
        let (send, receive) = mpsc::channel(WATCH_BUFFER);
        let store = Arc::clone(&self.store);
        let watchers = self.metrics.watchers.clone();
        let wakeups = self.metrics.watch_wakeups.clone();
        watchers.inc();
        let holder = seat_of(viewer).zip(generation);
        let who = seat_of(viewer).map_or_else(|| "spectator".to_string(), |seat| seat.to_string());
        tracing::info!(game = %slot.meta.id, viewer = %who, from, "stream opened");
        tokio::spawn(async move {
            // Whatever the watcher is waiting on (new records, a slow
            // client), a shutdown ends it.
            let why = tokio::select! {
                outcome = follow(store, &slot, (viewer, holder), from, start, bell, &send, &wakeups) => match outcome {
                    Ok(()) => "over or left",
                    Err(err) => {
                        let why = if matches!(err, ServiceError::SeatRevoked { .. }) { "seat changed hands" } else { "failed" };
                        let _ = send.send(Err(err)).await;
                        why
                    }
                },
                () = shut_down(&mut closing) => "server shutting down",
            };
            tracing::info!(game = %slot.meta.id, viewer = %who, why, "stream ended");
            watchers.dec();
        });
        Ok(Watch::Live(receive))
    }
}

/// Resolves once the service starts shutting down (or is gone).
async fn shut_down(closing: &mut watch::Receiver<bool>) {
    loop {
        let closed = *closing.borrow_and_update();
        if closed || closing.changed().await.is_err() {
            return;
        }
    }
}

/// Feeds a watcher: brings its own copy of the game to record `from - 1`
/// (`start`, from the game's history; from record 0 when `from` is 0),
/// sends each record from `from` on, then follows appends until the game
/// is over or the watcher's receiver is gone. A seat's watcher (`holder`:
/// its seat and the seat's generation when it opened) ends with
/// `seat_revoked` at the first record after which the seat's generation
/// is past it, sending nothing from that record on.
#[allow(clippy::too_many_arguments)]
async fn follow(
    store: Arc<dyn EventStore>,
    slot: &Slot,
    (viewer, holder): (Viewer, Option<(ludo_engine::Seat, u32)>),
    from: u64,
    start: Option<(AnyGame, Arc<Table>)>,
    mut bell: Bell,
    send: &mpsc::Sender<Result<Watched, ServiceError>>,
    wakeups: &prometheus_client::metrics::counter::Counter,
) -> Result<(), ServiceError> {
    let id = slot.meta.id.as_str();
    let stream = slot.meta.stream;
    let read = |from: u64, to: Option<u64>| {
        let store = Arc::clone(&store);
        async move { store.read(stream, from, to).await.map_err(ServiceError::from) }
    };
    let update = |replayer: &Replayer, record: Record, effects: Vec<AnyEffect>| {
        let status = replayer.status();
        let seen_as = effective(viewer, &status);
        let effects = effects.iter().map(|e| replayer.game.redact(e, seen_as)).collect();
        let event = event(&replayer.game, id, record, effects)?;
        Ok(Watched::Update(Box::new(GameUpdate { kind: slot.meta.kind.id.into(), event, status, view: replayer.game.view(seen_as) })))
    };
    let empty = || ServiceError::CorruptLog { game: id.into(), seq: 0, reason: "the log is empty".into() };
    // Whether the seat changed hands since the watcher opened (records
    // before its opening may show older holders: the seat's log is its
    // holder's to read).
    let revoked = |table: &Table| holder.and_then(|(seat, generation)| (table.generation(seat) > generation).then_some(seat));
    let (mut replayer, mut pending) = match start {
        None => {
            let mut pending = parse_records(id, read(0, None).await?)?.into_iter();
            let first = pending.next().ok_or_else(empty)?;
            let (replayer, effects) = Replayer::start(&first, &slot.meta.secrets.seed).map_err(|e| corrupt(id, e))?;
            if send.send(update(&replayer, first, effects)).await.is_err() {
                return Ok(()); // the watcher went away
            }
            (replayer, pending)
        }
        Some((game, table)) => {
            let first = parse_records(id, read(0, Some(1)).await?)?.into_iter().next().ok_or_else(empty)?;
            let RecordBody::GameCreated(created) = first.body else {
                return Err(ServiceError::CorruptLog { game: id.into(), seq: 0, reason: "record 0 is not game_created".into() });
            };
            // The record before `from` gives the chain's position.
            let mut pending = parse_records(id, read(from - 1, None).await?)?.into_iter();
            let before = pending.next().ok_or_else(empty)?;
            let last_hash = before.hash_bytes().map_err(|reason| ServiceError::CorruptLog { game: id.into(), seq: before.seq, reason })?;
            (Replayer::resume(slot.meta.kind, created, game, (from - 1, last_hash), table), pending)
        }
    };
    loop {
        // A record already durable but not yet readable waits for the ring
        // of its writer (see `Doorbells::hold`); the next read starts there.
        let held = bell.doorbells.held(stream);
        for record in pending.by_ref().take_while(|record| held.is_none_or(|held| record.seq < held)) {
            let effects = replayer.apply(&record).map_err(|e| corrupt(id, e))?;
            if let Some(seat) = revoked(&replayer.table) {
                return Err(ServiceError::SeatRevoked { seat });
            }
            if replayer.version >= from && send.send(update(&replayer, record, effects)).await.is_err() {
                return Ok(());
            }
        }
        let status: Status = replayer.status();
        if status.is_finished() {
            let _ = send.send(Ok(Watched::Over(StreamEnd { version: replayer.version, status }))).await;
            return Ok(());
        }
        // Wait for this game's log to grow, or for the watcher to go. On a
        // shared store the ring may be another server's notice, which the
        // store may not hear (its listening connection down, or a database
        // without notifications): look again as often as it says anyway
        // (reads go by seq, so a late look loses nothing).
        let fallback = async {
            match store.poll_every() {
                Some(every) => tokio::time::sleep(every).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = send.closed() => return Ok(()),
            rung = bell.rung() => if !rung {
                return Ok(()); // the store closed
            },
            () = fallback => {}
        }
        wakeups.inc();
        pending = parse_records(id, read(replayer.version + 1, None).await?)?.into_iter();
    }
}
