//! Clocks: the time controls a game is created with, and the seats' clocks
//! as a fold of the records' timestamps.
//!
//! Time lives in the service, not in the engines: a seat's turn starts at
//! the time of the record after which it is to move, and its time is
//! charged at the time of the record that ends its turn (its move, most
//! often). Replaying the log gives the same clocks, and a timeout is a
//! record (`timeout`) the server appends once a deadline has passed, which
//! replay checks against the same fold: no timeout before its deadline, no
//! move after it.

use serde::{Deserialize, Serialize};

/// Shortest per-move limit or bank: less is no time for a person.
pub const MIN_LIMIT_MS: u64 = 1_000;
/// Longest per-move limit or bank: 30 days (correspondence play).
pub const MAX_LIMIT_MS: u64 = 30 * 24 * 3_600_000;
/// Largest increment: one day.
pub const MAX_INCREMENT_MS: u64 = 24 * 3_600_000;

/// A game's time controls, as its `game_created` record holds them.
/// Every member is written, so a record reads and writes back the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TimeControl {
    /// Most milliseconds a seat may take over one move; null: no limit per move.
    pub move_ms: Option<u64>,
    /// Each seat's bank of milliseconds for the whole game; null: no bank.
    pub bank_ms: Option<u64>,
    /// Milliseconds added to a seat's bank after each of its moves.
    pub increment_ms: u64,
    /// What happens when a seat's time runs out.
    pub on_timeout: OnTimeout,
}

/// What happens when a seat's time runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// A server bot makes the seat's move; the seat stays its player's.
    Bot,
    /// The seat loses as if it had resigned.
    Lose,
}

/// Time controls as a request asks for them (`move_ms` and/or `bank_ms`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClockRequest {
    /// Most milliseconds per move (1000 to 2592000000, 30 days).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(minimum = 1000, maximum = 2592000000u64))] // MIN_LIMIT_MS, MAX_LIMIT_MS
    pub move_ms: Option<u64>,
    /// Each seat's bank for the game (1000 to 2592000000).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(minimum = 1000, maximum = 2592000000u64))] // MIN_LIMIT_MS, MAX_LIMIT_MS
    pub bank_ms: Option<u64>,
    /// Added to the bank after each move (0 to 86400000, a day; default 0;
    /// needs a bank).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(maximum = 86400000))] // MAX_INCREMENT_MS
    pub increment_ms: Option<u64>,
    /// `bot` (default: a server bot makes the move) or `lose`.
    #[serde(default)]
    pub on_timeout: Option<OnTimeout>,
}

impl ClockRequest {
    /// The time controls this asks for.
    ///
    /// # Errors
    /// The field (under `clock.`) and why, when a limit is out of bounds
    /// or there is neither a per-move limit nor a bank.
    pub fn control(self) -> Result<TimeControl, (String, String)> {
        let bounded = |field: &str, value: Option<u64>| -> Result<Option<u64>, (String, String)> {
            match value {
                Some(ms) if !(MIN_LIMIT_MS..=MAX_LIMIT_MS).contains(&ms) => {
                    Err((format!("clock.{field}"), format!("from {MIN_LIMIT_MS} ms (a second) to {MAX_LIMIT_MS} ms (30 days), not {ms}")))
                }
                other => Ok(other),
            }
        };
        let move_ms = bounded("move_ms", self.move_ms)?;
        let bank_ms = bounded("bank_ms", self.bank_ms)?;
        if move_ms.is_none() && bank_ms.is_none() {
            return Err(("clock".into(), "a clock has a limit per move (`move_ms`), a bank (`bank_ms`), or both".into()));
        }
        let increment_ms = self.increment_ms.unwrap_or(0);
        if increment_ms > MAX_INCREMENT_MS {
            return Err(("clock.increment_ms".into(), format!("at most {MAX_INCREMENT_MS} ms (a day), not {increment_ms}")));
        }
        if increment_ms > 0 && bank_ms.is_none() {
            return Err(("clock.increment_ms".into(), "an increment is added to a bank: set `bank_ms`".into()));
        }
        Ok(TimeControl { move_ms, bank_ms, increment_ms, on_timeout: self.on_timeout.unwrap_or(OnTimeout::Bot) })
    }
}

/// The seats' clocks: a fold of the records' times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clocks {
    /// The game's time controls.
    pub control: TimeControl,
    /// Per seat, what is left of its bank after its last turn (ms).
    banks: Vec<u64>,
    /// Per seat, when its running turn started (ms since the Unix epoch).
    started: Vec<Option<u64>>,
}

impl Clocks {
    /// Clocks for `seats` seats under `control`, none running.
    #[must_use]
    pub fn new(control: TimeControl, seats: usize) -> Clocks {
        Clocks { control, banks: vec![control.bank_ms.unwrap_or(0); seats], started: vec![None; seats] }
    }

    /// Moves the clocks to a record made at `at` (ms), after which the
    /// seats whose clocks run are `running`; `moved` is the seat whose move
    /// the record is, if it is one. A turn that ends is charged to its
    /// seat's bank; a move adds the increment.
    pub fn advance(&mut self, at: u64, running: impl Fn(usize) -> bool, moved: Option<usize>) {
        for seat in 0..self.started.len() {
            let on_turn = running(seat);
            let moved_now = moved == Some(seat);
            if let Some(start) = self.started[seat]
                && (!on_turn || moved_now)
            {
                if self.control.bank_ms.is_some() {
                    self.banks[seat] = self.banks[seat].saturating_sub(at.saturating_sub(start));
                }
                self.started[seat] = None;
            }
            if moved_now {
                self.banks[seat] = self.banks[seat].saturating_add(self.control.increment_ms);
            }
            if on_turn && self.started[seat].is_none() {
                self.started[seat] = Some(at);
            }
        }
    }

    /// When `seat`'s time runs out (ms since the epoch), while its clock runs.
    #[must_use]
    pub fn deadline(&self, seat: usize) -> Option<u64> {
        let start = (*self.started.get(seat)?)?;
        let per_move = self.control.move_ms.map(|ms| start.saturating_add(ms));
        let bank = self.control.bank_ms.map(|_| start.saturating_add(self.banks[seat]));
        match (per_move, bank) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The earliest deadline, with its seat.
    #[must_use]
    pub fn next_deadline(&self) -> Option<(u64, usize)> {
        (0..self.started.len()).filter_map(|seat| self.deadline(seat).map(|at| (at, seat))).min()
    }

    /// What is left of `seat`'s bank after its last turn (ms), with a bank.
    #[must_use]
    pub fn bank(&self, seat: usize) -> Option<u64> {
        self.control.bank_ms.map(|_| self.banks[seat])
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 time (a record's `at`).
///
/// # Errors
/// When the text is not an RFC 3339 time after the epoch.
pub fn millis(at: &str) -> Result<u64, String> {
    let time = humantime::parse_rfc3339(at).map_err(|e| format!("`{at}` is not an RFC 3339 time: {e}"))?;
    let since = time.duration_since(std::time::UNIX_EPOCH).map_err(|_| format!("`{at}` is before 1970"))?;
    u64::try_from(since.as_millis()).map_err(|_| format!("`{at}` is too far in the future"))
}

/// The RFC 3339 time (UTC, milliseconds) of `ms` since the epoch.
#[must_use]
pub fn rfc3339(ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(move_ms: Option<u64>, bank_ms: Option<u64>, increment_ms: u64) -> TimeControl {
        TimeControl { move_ms, bank_ms, increment_ms, on_timeout: OnTimeout::Lose }
    }

    #[test]
    fn a_bank_is_charged_for_each_turn_and_grows_by_the_increment() {
        let mut clocks = Clocks::new(control(None, Some(10_000), 1_000), 2);
        clocks.advance(0, |seat| seat == 0, None);
        assert_eq!(clocks.deadline(0), Some(10_000));
        assert_eq!(clocks.deadline(1), None, "only the seat to move runs");
        // Seat 0 moves after 4 s: 6 s left, plus 1 s.
        clocks.advance(4_000, |seat| seat == 1, Some(0));
        assert_eq!(clocks.bank(0), Some(7_000));
        assert_eq!(clocks.deadline(1), Some(14_000));
        clocks.advance(20_000, |seat| seat == 0, Some(1));
        assert_eq!(clocks.bank(1), Some(1_000), "10 s used of 10, and the increment");
        assert_eq!(clocks.next_deadline(), Some((27_000, 0)));
    }

    #[test]
    fn the_earlier_of_the_move_limit_and_the_bank_is_the_deadline() {
        let mut clocks = Clocks::new(control(Some(3_000), Some(5_000), 0), 2);
        clocks.advance(100, |seat| seat == 0, None);
        assert_eq!(clocks.deadline(0), Some(3_100));
        clocks.advance(2_100, |seat| seat == 0, Some(0));
        // 3 s left in the bank, 3 s per move: both at 5.1 s.
        assert_eq!(clocks.deadline(0), Some(5_100));
        clocks.advance(4_100, |seat| seat == 0, Some(0));
        assert_eq!(clocks.deadline(0), Some(5_100), "1 s left in the bank binds before the 3 s per move");
    }

    #[test]
    fn requests_are_bounded_and_name_the_field() {
        let ok = ClockRequest { move_ms: Some(60_000), ..ClockRequest::default() }.control().unwrap();
        assert_eq!(ok, TimeControl { move_ms: Some(60_000), bank_ms: None, increment_ms: 0, on_timeout: OnTimeout::Bot });
        let field = |request: ClockRequest| request.control().unwrap_err().0;
        assert_eq!(field(ClockRequest::default()), "clock");
        assert_eq!(field(ClockRequest { move_ms: Some(10), ..ClockRequest::default() }), "clock.move_ms");
        assert_eq!(field(ClockRequest { bank_ms: Some(MAX_LIMIT_MS + 1), ..ClockRequest::default() }), "clock.bank_ms");
        let no_bank = ClockRequest { move_ms: Some(5_000), increment_ms: Some(1_000), ..ClockRequest::default() };
        assert_eq!(field(no_bank), "clock.increment_ms");
        assert!(serde_json::from_str::<ClockRequest>(r#"{"move_ms": -5}"#).is_err(), "a negative limit does not parse");
    }

    #[test]
    fn record_times_read_to_the_millisecond() {
        assert_eq!(millis("1970-01-01T00:00:01.250Z"), Ok(1_250));
        assert_eq!(rfc3339(1_250), "1970-01-01T00:00:01.250Z");
        assert!(millis("yesterday").is_err());
    }
}
