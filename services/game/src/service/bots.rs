//! The server's bot seats: playing a seat's turn when a bot plays it, and
//! handing a seat to a bot and back (autopilot).
//!
//! A bot's move takes the path every move takes (`submit`, as
//! [`Mover::Bot`]): the same checks, the same durable, hash-chained record,
//! marked with the bot that made it. The bot decides from its seat's
//! information only (`AnyGame::bot_move`), on a blocking thread, with at
//! most [`BotSettings::workers`] bots thinking at once, so bots never hold
//! up an async worker nor crowd out the server's other work.
//!
//! Who plays each seat is in the log (`game_created`'s `bots` and
//! `seat_bot` records), so nothing about bots lives only in memory: after a
//! restart a sweep of the games' summaries finds every game where a bot is
//! to move and plays on. On a shared store every replica sweeps now and
//! then too, so a bot's turn left by a replica that died is played by
//! another; two replicas that play the same turn race like any two
//! writers: the store's version check lets one move in, the other's is a
//! conflict it drops.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Weak;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ludo_bots::{Bot, Budget};
use ludo_engine::Seat;
use ludo_storage::StreamId;

use crate::api::{Answer, MoveAccepted, MoveInput, Submission};
use crate::api::{Autopilot, SetAutopilot};
use crate::error::ServiceError;
use crate::projection::games::Games;
use ludo_record::bot::BotSeat;
use ludo_record::kinds::AnyMove;
use ludo_record::record::RecordBody;
use ludo_record::record::SeatBotRecord;
use ludo_record::status::Status;

use super::commit::{Committed, Heard, Subscriber};
use super::ids::{GameId, game_id};
use super::listing::StoredSummary;
use super::submit::{Cached, Mover};
use super::{Current, GameService};

/// How the server's bots play.
#[derive(Clone, Copy, Debug)]
pub struct BotSettings {
    /// Bots thinking at once, at most (each on a blocking thread).
    pub workers: usize,
    /// What one move may cost a bot.
    pub budget: Budget,
    /// The think delay of a bot seat whose request names none (ms).
    pub think_ms: u32,
}

/// The think delay of a bot seat by default: enough for a person to see
/// each bot move land.
pub const DEFAULT_THINK_MS: u32 = 500;

impl Default for BotSettings {
    /// One bot per core, the bots' default budget, [`DEFAULT_THINK_MS`].
    fn default() -> Self {
        BotSettings {
            workers: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            budget: Budget::default(),
            think_ms: DEFAULT_THINK_MS,
        }
    }
}

/// How often each replica of a shared store looks for bot turns nobody plays.
const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// Summaries read per page by a sweep.
const SWEEP_PAGE: usize = 1000;
/// How long a sweep waits for the `games` projection to fold what was
/// committed before it (a server that starts after an upgrade folds the
/// whole feed first).
const SWEEP_WAIT: Duration = Duration::from_secs(600);
/// How soon a sweep that failed is tried again.
const SWEEP_RETRY: Duration = Duration::from_secs(5);
/// Tries of one bot move that the store fails, before the turn is left
/// to the next sweep (or the next start).
const STORE_TRIES: u32 = 6;

/// The bot seats' runner, one per service.
pub(super) struct Bots {
    settings: BotSettings,
    /// One permit per bot thinking.
    permits: Arc<tokio::sync::Semaphore>,
    /// Games a bot task is playing; `true`: the game changed since the task
    /// last looked, so it looks again before it stops.
    running: Mutex<HashMap<StreamId, bool>>,
    /// The service itself, for the tasks it starts (set by `start_bots`).
    service: std::sync::OnceLock<Weak<GameService>>,
}

impl Bots {
    pub(super) fn new(settings: BotSettings) -> Bots {
        let workers = settings.workers.max(1);
        Bots {
            settings: BotSettings { workers, ..settings },
            permits: Arc::new(tokio::sync::Semaphore::new(workers)),
            running: Mutex::default(),
            service: std::sync::OnceLock::new(),
        }
    }

    /// Whether the task playing `stream` may stop: not if the game changed
    /// since it last looked (it looks again). Forgets the game when it may.
    fn may_stop(&self, stream: StreamId) -> bool {
        let mut running = self.running.lock().expect("bots lock");
        match running.get_mut(&stream) {
            Some(changed) if *changed => {
                *changed = false;
                false
            }
            _ => {
                running.remove(&stream);
                true
            }
        }
    }

    fn forget(&self, stream: StreamId) {
        self.running.lock().expect("bots lock").remove(&stream);
    }
}

impl std::fmt::Debug for Bots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bots").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// The first seat to move that a bot plays, with its bot.
fn bot_turn(current: &Current) -> Option<(Seat, BotSeat)> {
    current.status.to_move().iter().find_map(|&seat| current.table.bot_for(seat).map(|bot| (seat, bot)))
}

/// Makes sure a task plays a game's bots when a record leaves a bot to move.
pub(super) struct BotTurns;

impl Subscriber for BotTurns {
    fn name(&self) -> &'static str {
        "bots"
    }

    fn committed<'a>(&'a self, service: &'a GameService, commit: &'a Committed) -> Heard<'a> {
        service.wake_bots(commit.slot.meta.stream, &commit.now);
        Box::pin(std::future::ready(()))
    }
}

impl GameService {
    /// Plays bot seats with `settings` (the default: [`BotSettings::default`]).
    #[must_use]
    pub fn with_bots(mut self, settings: BotSettings) -> Self {
        self.bots = Bots::new(settings);
        self
    }

    /// The think delay of a bot seat whose request names none (ms).
    pub(super) fn think_ms(&self) -> u32 {
        self.bots.settings.think_ms
    }

    /// Starts playing bot seats: from now on the service plays every bot's
    /// turn, and it looks through every game's summary for bot turns
    /// already due (after a restart, say); on a shared store, again every
    /// 30 s. Without this call bot seats wait. Call it once, in a runtime.
    pub fn start_bots(self: &Arc<Self>) {
        if self.bots.service.set(Arc::downgrade(self)).is_err() {
            return; // started already
        }
        tokio::spawn(GameService::run_timers(Arc::downgrade(self)));
        let service = Arc::downgrade(self);
        let again = self.store.shared().then_some(SWEEP_EVERY);
        tokio::spawn(async move {
            loop {
                let Some(this) = service.upgrade() else { return };
                if *this.closing.borrow() {
                    return;
                }
                let pause = match this.sweep_bot_turns().await {
                    Ok(()) => match again {
                        Some(every) => every,
                        None => return,
                    },
                    Err(err) => {
                        // Even without a shared store: this sweep is what
                        // resumes the bots and clocks of a restart.
                        tracing::warn!(%err, "looking for bot turns failed; trying again");
                        SWEEP_RETRY
                    }
                };
                drop(this);
                tokio::time::sleep(pause).await;
            }
        });
    }

    /// Wakes the bot of every game whose summary says a bot is to move, and
    /// sets the timer of every game whose summary has a clock running. The
    /// summaries are the `games` projection's rows, once it has folded
    /// what was committed before the sweep.
    async fn sweep_bot_turns(&self) -> Result<(), ServiceError> {
        self.games_projection_caught_up(SWEEP_WAIT).await?;
        let mut after: Option<StreamId> = None;
        let mut woken = 0_u64;
        let mut ended = Vec::new();
        // Both read in stream order.
        let mut logged = self.logged_places();
        loop {
            let page = self.store.projection_scan(Games::NAME, after.map(Games::key), SWEEP_PAGE).await?;
            let exhausted = page.len() < SWEEP_PAGE;
            for (key, row) in page {
                let stream = Games::stream_of(&key).ok_or_else(|| ServiceError::Internal("a games row keyed by no game".into()))?;
                after = Some(stream);
                let Some(summary) = StoredSummary::from_row(&row) else {
                    tracing::warn!(game = %game_id(stream), "a game's row in the games projection does not read");
                    continue;
                };
                if summary.status.is_finished() {
                    // Over: in the transparency log once its place is noted
                    // in the summary the store keeps beside its log.
                    if logged.place(stream).await?.is_none() {
                        ended.push((stream, summary));
                    }
                    continue;
                }
                let bot_due = summary.bot_to_move() && !self.bots.running.lock().expect("bots lock").contains_key(&stream);
                if bot_due || summary.deadline_ms.is_some() {
                    match self.slot_of(stream).await {
                        Ok(slot) => {
                            woken += 1;
                            self.wake(stream, &slot.current());
                        }
                        Err(err) => tracing::warn!(%err, game = %game_id(stream), "a game with a bot or a clock due does not load"),
                    }
                }
            }
            if exhausted {
                break;
            }
        }
        if woken > 0 {
            tracing::info!(games = woken, "bots and clocks resumed");
        }
        // Games that ended on a server that stopped before adding them to
        // the transparency log.
        self.log_unlogged(&ended, SWEEP_EVERY).await;
        Ok(())
    }

    /// After a change to a game: its bot plays if one is to move, and its
    /// clock's timer is set to its next deadline.
    pub(super) fn wake(&self, stream: StreamId, current: &Current) {
        self.wake_clock(stream, current);
        self.wake_bots(stream, current);
    }

    /// After a change to a game: if a bot is to move in it, makes sure a
    /// task plays it (one task per game; a running one looks again).
    pub(super) fn wake_bots(&self, stream: StreamId, current: &Current) {
        if bot_turn(current).is_none() {
            return;
        }
        let Some(service) = self.bots.service.get().and_then(Weak::upgrade) else { return };
        match self.bots.running.lock().expect("bots lock").entry(stream) {
            Entry::Occupied(mut running) => {
                *running.get_mut() = true;
            }
            Entry::Vacant(idle) => {
                idle.insert(false);
                tokio::spawn(async move { service.play_bots(stream).await });
            }
        }
    }

    /// Plays the bot turns of one game until no bot is to move.
    async fn play_bots(self: Arc<Self>, stream: StreamId) {
        let id = GameId::from(stream);
        let mut store_failures = 0;
        loop {
            if *self.closing.borrow() {
                self.bots.forget(stream);
                return;
            }
            let slot = match self.slot_of(stream).await {
                Ok(slot) => slot,
                Err(err) => {
                    tracing::warn!(%err, game = %id, "a bot's game does not load");
                    self.bots.forget(stream);
                    return;
                }
            };
            let current = slot.current();
            let Some((seat, bot)) = bot_turn(&current) else {
                if self.bots.may_stop(stream) {
                    return;
                }
                continue;
            };
            let started = Instant::now();
            let Some(mv) = self.think(&current, seat, bot).await else {
                // Nothing to play (no legal move): leave it to the next change.
                if self.bots.may_stop(stream) {
                    return;
                }
                continue;
            };
            // The think delay counts from the turn's start, thinking included.
            let delay = Duration::from_millis(u64::from(bot.think_ms)).saturating_sub(started.elapsed());
            let mut closing = self.closing.subscribe();
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                _ = closing.wait_for(|closed| *closed) => {
                    self.bots.forget(stream);
                    return;
                }
            }
            let request =
                Submission { mv: MoveInput::Typed(mv), expected_version: Some(current.version), request_id: None, answer: Answer::Minimal };
            match self.submit_as(&id, Mover::Bot(seat, bot), request).await {
                Ok(_) => store_failures = 0,
                // The game moved on meanwhile (a person's move, a hand-over,
                // another replica's bot): look again.
                Err(ServiceError::VersionConflict { .. } | ServiceError::NotYourTurn { .. } | ServiceError::GameFinished) => {}
                Err(err @ ServiceError::Storage(_)) if store_failures + 1 < STORE_TRIES => {
                    store_failures += 1;
                    let wait = Duration::from_millis(250 << store_failures);
                    tracing::warn!(%err, game = %id, %seat, retry_in = ?wait, "a bot's move was not stored");
                    tokio::time::sleep(wait).await;
                }
                Err(err) => {
                    tracing::error!(%err, game = %id, %seat, "a bot's move was refused: the bot stops for this game");
                    self.bots.forget(stream);
                    return;
                }
            }
        }
    }

    /// The move `bot` makes for `seat` in `current`, thought out on a
    /// blocking thread once a worker is free.
    async fn think(&self, current: &Arc<Current>, seat: Seat, bot: BotSeat) -> Option<AnyMove> {
        let permit = Arc::clone(&self.bots.permits).acquire_owned().await.ok()?;
        let current = Arc::clone(current);
        let budget = self.bots.settings.budget;
        // Any seed will do: a bot's move is recorded, never recomputed.
        let seed = rand_seed(current.version);
        let (thinking, think_seconds) = (self.metrics.bots_thinking.clone(), self.metrics.bot_think_seconds.clone());
        let thought = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            thinking.inc();
            let started = Instant::now();
            let mut bot = Bot::new(bot.level.into(), budget, seed);
            let mv = current.game.bot_move(seat, &mut bot);
            think_seconds.observe(started.elapsed().as_secs_f64());
            thinking.dec();
            mv
        })
        .await;
        match thought {
            Ok(mv) => mv,
            Err(err) => {
                tracing::error!(%err, %seat, "a bot's thinking failed");
                None
            }
        }
    }

    /// Submits `request` for `seat` as the server bot that plays it: its
    /// record is marked as that bot's move. For programs that run the
    /// service's bots themselves (`ludo simulate --records`); the server
    /// plays its bot seats on its own (see [`Self::start_bots`]).
    ///
    /// # Errors
    /// `invalid_input` (field `seat`) when no server bot plays the seat;
    /// otherwise as [`Self::submit`].
    pub async fn submit_for_bot(&self, id: &GameId, seat: Seat, request: Submission) -> Result<MoveAccepted, ServiceError> {
        let slot = self.slot(id).await?;
        let bot = slot.current().bot(seat).ok_or_else(|| ServiceError::invalid("seat", format!("no server bot plays {seat}")))?;
        self.submit_as(id, Mover::Bot(seat, bot), request).await
    }

    /// Hands the token's seat to a server bot, or takes it back
    /// (`request.bot` null). The change is a `seat_bot` record in the log;
    /// asking for what already holds changes nothing and appends nothing.
    ///
    /// # Errors
    /// `unauthorized` without the seat's token, `game_finished`,
    /// `version_conflict` when another server changed the game at the same
    /// moment, storage errors. Nothing is appended unless the answer is `Ok`.
    pub async fn set_autopilot(&self, id: &GameId, token: Option<&str>, request: SetAutopilot) -> Result<Autopilot, ServiceError> {
        // A hand-over appends a record, as a move does: limited alike.
        let (slot, seat, writer) = self.writing(id, Mover::Token(token), Cached::IsLatest).await?;
        let current = slot.current();
        if current.status.is_finished() {
            return Err(match current.status {
                Status::Cancelled => ServiceError::GameCancelled,
                _ => ServiceError::GameFinished,
            });
        }
        let bot = request.bot.map(|bot| bot.seat(self.think_ms()));
        if current.bot(seat) == bot && !current.table.seats().get(usize::from(seat.0)).is_some_and(|s| s.resigned) {
            return Ok(Autopilot { version: current.version, seat, bot });
        }
        let now = self.commit_seat_record(&slot, writer, current, RecordBody::SeatBot(SeatBotRecord { seat, bot })).await?.now;
        tracing::info!(game = %slot.meta.id, %seat, bot = bot.map(|b| b.level.name()), "seat handed over");
        Ok(Autopilot { version: now.version, seat, bot })
    }
}

/// A bot's seed: different for every move the process makes.
fn rand_seed(version: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(version);
    hasher.finish()
}
