//! Enforcing clocks: when a seat's time runs out, the server appends a
//! `timeout` record; per the game's time controls, a server bot then makes
//! the seat's move, or the seat loses as if it had resigned.
//!
//! One timer task per service keeps every known game's next deadline in
//! order and sleeps until the earliest. The deadlines come from the clocks'
//! fold (see `ludo_record::clock`), so nothing about them lives only in memory:
//! at start, the sweep of the games' summaries (each summary holds its
//! game's next deadline) sets the timers again, and a deadline that passed
//! while the server was stopped fires at once. A timeout is appended like
//! any record, by the game's single writer with the version it was decided
//! at: when several servers share a store and each fires the same expiry,
//! the store's version check lets exactly one record in, and the others'
//! conflicts are dropped.

use std::collections::BTreeSet;
use std::collections::HashMap;
use std::sync::Weak;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use std::time::SystemTime;

use ludo_storage::StreamId;

use crate::error::ServiceError;
use ludo_record::bot::BotLevel;
use ludo_record::bot::BotSeat;
use ludo_record::record::RecordBody;

use super::commit::{Committed, Heard, Subscriber};
use super::ids::GameId;
use super::{Current, GameService};

/// The bot that makes a seat's move when its time ran out: it moves at once.
const TIMEOUT_BOT: BotSeat = BotSeat { level: BotLevel::Greedy, think_ms: 0 };

/// How long a timeout the store failed to take waits before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Every known game's next deadline.
#[derive(Debug, Default)]
pub(super) struct Timers {
    state: Mutex<Deadlines>,
    /// Rung when a deadline is set: the timer task looks again. (A ring
    /// with nobody waiting is kept for the next wait: none is lost.)
    changed: Arc<tokio::sync::Notify>,
}

#[derive(Debug, Default)]
struct Deadlines {
    by_game: HashMap<StreamId, u64>,
    by_time: BTreeSet<(u64, StreamId)>,
}

impl Deadlines {
    fn set(&mut self, stream: StreamId, at: Option<u64>) {
        if let Some(old) = self.by_game.remove(&stream) {
            self.by_time.remove(&(old, stream));
        }
        if let Some(at) = at {
            self.by_game.insert(stream, at);
            self.by_time.insert((at, stream));
        }
    }

    /// The earliest deadline, taken out when it is due by `now`.
    fn due(&mut self, now: u64) -> Result<StreamId, Option<u64>> {
        match self.by_time.first().copied() {
            Some((at, stream)) if at <= now => {
                self.set(stream, None);
                Ok(stream)
            }
            next => Err(next.map(|(at, _)| at)),
        }
    }
}

/// Milliseconds since the epoch of `time`.
fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH).map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// Sets each game's timer to its next deadline after a record.
pub(super) struct ClockTimers;

impl Subscriber for ClockTimers {
    fn name(&self) -> &'static str {
        "clocks"
    }

    fn committed<'a>(&'a self, service: &'a GameService, commit: &'a Committed) -> Heard<'a> {
        service.wake_clock(commit.slot.meta.stream, &commit.now);
        Box::pin(std::future::ready(()))
    }
}

impl GameService {
    /// After a change to a game: its timer is set to its next deadline
    /// (none: no clock runs).
    pub(super) fn wake_clock(&self, stream: StreamId, current: &Current) {
        let next = current.table.next_deadline().map(|(at, _)| at);
        let mut deadlines = self.timers.state.lock().expect("timers lock");
        if next.is_none() && !deadlines.by_game.contains_key(&stream) {
            return;
        }
        deadlines.set(stream, next);
        drop(deadlines);
        self.timers.changed.notify_one();
    }

    /// The timer task: fires each deadline as it falls, until the service
    /// shuts down or is gone.
    pub(super) async fn run_timers(service: Weak<GameService>) {
        loop {
            let Some(this) = service.upgrade() else { return };
            if *this.closing.borrow() {
                return;
            }
            let now = epoch_ms(this.clock.now());
            let due = this.timers.state.lock().expect("timers lock").due(now);
            match due {
                Ok(stream) => {
                    tokio::spawn(Arc::clone(&this).expire(stream));
                }
                Err(next) => {
                    let changed = Arc::clone(&this.timers.changed);
                    let mut closing = this.closing.subscribe();
                    drop(this);
                    let wait = next.map_or(Duration::from_secs(3600), |at| Duration::from_millis(at.saturating_sub(now)));
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = changed.notified() => {}
                        _ = closing.wait_for(|closed| *closed) => return,
                    }
                }
            }
        }
    }

    /// A deadline of `stream` fell: appends its timeout if it still stands
    /// (the game may have moved on meanwhile), and sets the next one.
    async fn expire(self: Arc<Self>, stream: StreamId) {
        let id = GameId::from(stream);
        let fired = async {
            let (slot, writer) = self.locked(&id).await?;
            let current = slot.current();
            let now = epoch_ms(self.clock.now());
            let Some((deadline, seat)) = current.table.next_deadline().filter(|&(at, _)| at <= now) else {
                drop(writer);
                self.wake_clock(stream, &current);
                return Ok("moved_on");
            };
            let heir = BotSeat { level: TIMEOUT_BOT.level, think_ms: self.think_ms() };
            let (forfeit, bot) = current.table.timeout_of(seat, TIMEOUT_BOT, heir);
            self.commit_seat_record(&slot, writer, current, RecordBody::Timeout { seat, forfeit, bot }).await?;
            tracing::info!(game = %id, %seat, late_ms = now - deadline, forfeit, "a seat's time ran out");
            Ok::<_, ServiceError>("written")
        };
        let outcome = match fired.await {
            Ok(outcome) => outcome,
            // Another server wrote first (its timeout, or a move in time):
            // the game as it is now says what is next.
            Err(ServiceError::VersionConflict { .. }) => {
                match self.slot_of(stream).await {
                    Ok(slot) => self.wake_clock(stream, &slot.current()),
                    Err(err) => tracing::warn!(%err, game = %id, "a game whose clock ran out does not load"),
                }
                "lost_race"
            }
            Err(err) => {
                tracing::warn!(%err, game = %id, retry_in = ?RETRY_AFTER, "a timeout was not stored");
                let at = epoch_ms(self.clock.now()) + u64::try_from(RETRY_AFTER.as_millis()).unwrap_or(1000);
                self.timers.state.lock().expect("timers lock").set(stream, Some(at));
                self.timers.changed.notify_one();
                "failed"
            }
        };
        self.metrics.timeouts.get_or_create(&crate::metrics::OutcomeLabel { outcome: outcome.into() }).inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_fall_in_time_order_and_a_game_has_one() {
        let (a, b) = (StreamId::from_slice(&[1; 16]).unwrap(), StreamId::from_slice(&[2; 16]).unwrap());
        let mut deadlines = Deadlines::default();
        deadlines.set(a, Some(500));
        deadlines.set(b, Some(300));
        deadlines.set(a, Some(200));
        assert_eq!(deadlines.due(100), Err(Some(200)));
        assert_eq!(deadlines.due(250), Ok(a));
        assert_eq!(deadlines.due(250), Err(Some(300)));
        deadlines.set(b, None);
        assert_eq!(deadlines.due(1000), Err(None));
    }
}
