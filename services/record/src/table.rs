//! The table: who sits at each seat of a game, and how the game stands
//! beyond its engine (seats still open, a game called off, a side that gave
//! up). Like the game itself it is a fold of the log: record 0 sets it up,
//! and the seat records (`seat_joined`, `seat_left`, `game_cancelled`,
//! `seat_token`, `seat_bot`, `seat_resigned`, `timeout`) change it. The
//! engines know nothing of it. The seats' clocks live here too (see
//! `crate::clock`): after every record, [`Table::advance`] moves them to
//! the record's time.
//!
//! Each change is checked here, once, by [`Table::check`]: the service
//! decides with it (a refusal becomes a problem with its code) and replay
//! checks every stored record with it (a refusal there is a corrupt log),
//! so a log can only say what the service would have accepted.

use ludo_engine::{Outcome, Seat};
use subtle::ConstantTimeEq;

use crate::bot::{BotLevel, BotSeat};
use crate::clock::{Clocks, OnTimeout, rfc3339};
use crate::record::GameCreated;
use crate::status::{ClockStatus, Forfeit, ForfeitReason, SeatClock, Status};

/// SHA-256 of a token or code: what the server keeps of it (in the log's
/// seat records, and in a game's sealed secrets for the first tokens).
#[must_use]
pub fn hash_token(token: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(token.as_bytes()).into()
}

/// Who sits at a game's seats, and the game's phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    seats: Vec<Sitter>,
    /// Whether anyone may join an open seat (from the lobby listing), not
    /// only the holder of its invitation.
    public: bool,
    phase: Phase,
    /// The seats that win or lose together (see `Kind::sides`).
    sides: Vec<Vec<Seat>>,
    forfeits: Vec<Forfeit>,
    /// Seat records applied so far.
    changes: u32,
    /// The seats' clocks, in a game with time controls.
    clocks: Option<Clocks>,
    /// A seat whose time ran out, and the bot that makes its move.
    due_bot: Option<(Seat, BotSeat)>,
}

/// One seat at the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sitter {
    /// The player's name; `None` while the seat is open.
    pub name: Option<String>,
    /// The server bot that plays the seat, if one does.
    pub bot: Option<BotSeat>,
    /// What opens the seat.
    key: SeatKey,
    /// Whether its player resigned (a bot plays it since).
    pub resigned: bool,
    /// How many times what opens the seat changed since record 0 (a join,
    /// a leave, a new token, a takeover after a timeout): a stream ticket
    /// names it, and a stream opened as the seat ends when it grows, so a
    /// seat's eyes go with its hands.
    generation: u32,
}

/// What opens a seat: its token, as a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SeatKey {
    /// The token made with the game, whose hash is sealed beside the log
    /// (the game's creator was handed it).
    Sealed,
    /// A token issued since, its hash in the log: by the game's admin (a
    /// reissue: `admin`), or to the seat's person alone (a join, or the
    /// seat renewing its own token).
    Issued {
        /// The token's hash.
        hash: [u8; 32],
        /// Whether the game's admin asked for it (and so holds it).
        admin: bool,
    },
    /// None: an open seat, one a bot took, or one a bot took over after a timeout.
    Locked,
}

/// Who asked for a seat's new token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TokenBy {
    /// The game's admin, for a seat whose token it already holds.
    Admin,
    /// The seat itself, with its current token: the new one is its person's alone.
    Seat,
}

impl TokenBy {
    /// The word the log and the API use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TokenBy::Admin => "admin",
            TokenBy::Seat => "seat",
        }
    }

    /// The one `name` gives.
    #[must_use]
    pub fn from_name(name: &str) -> Option<TokenBy> {
        match name {
            "admin" => Some(TokenBy::Admin),
            "seat" => Some(TokenBy::Seat),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Seats are open.
    Waiting,
    /// Every seat is taken: the engine says how the game stands.
    Playing,
    /// Called off before it started.
    Cancelled,
    /// Over: the side at this index gave up, in a game of two sides.
    GaveUp(usize),
}

/// A change of the table, as a record says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change<'a> {
    /// `seat` taken by a player named `name` (with a new token's hash) or a server bot.
    Join {
        /// The seat.
        seat: Seat,
        /// Its player's name.
        name: &'a str,
        /// The bot that plays it, for a seat a bot takes.
        bot: Option<BotSeat>,
        /// The hash of its new token, for a seat a person takes.
        token_hash: Option<[u8; 32]>,
    },
    /// `seat`'s player left before the game started: the seat is open again.
    Leave(Seat),
    /// The game called off before it started.
    Cancel,
    /// A new token for `seat` (the old one stops opening it), asked for by
    /// `by` (`None`: a record from before the log said, the admin's).
    Token {
        /// The seat.
        seat: Seat,
        /// The new token's hash.
        hash: [u8; 32],
        /// Who asked for it.
        by: Option<TokenBy>,
    },
    /// `seat` handed to a server bot, or taken back (`None`).
    Bot(Seat, Option<BotSeat>),
    /// `seat` resigned; in a game of more than two sides, `bot` plays it from now on.
    Resign(Seat, Option<BotSeat>),
    /// `seat`'s time ran out at `at` (ms since the epoch): it forfeits
    /// (as `Resign`), or `bot` makes its move.
    Timeout {
        /// The seat.
        seat: Seat,
        /// Whether it loses as if it had resigned.
        forfeit: bool,
        /// The bot that makes its move, or plays it from now on.
        bot: Option<BotSeat>,
        /// When (ms since the epoch).
        at: u64,
    },
}

/// Why the table refuses a change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No such seat.
    #[error("{0} is not at the table")]
    UnknownSeat(Seat),
    /// Only while seats are open.
    #[error("the game has started: every seat was taken")]
    Started,
    /// Not while seats are open.
    #[error("the game has not started: seats {0:?} are still open")]
    Waiting(Vec<u8>),
    /// The game was called off.
    #[error("the game was cancelled")]
    Cancelled,
    /// The game is over.
    #[error("the game is over")]
    Over,
    /// The seat is taken.
    #[error("{0} is taken")]
    Taken(Seat),
    /// The seat is open.
    #[error("{0} is open: nobody sits there")]
    Open(Seat),
    /// The seat's player resigned.
    #[error("{0} resigned: a server bot plays it now")]
    Resigned(Seat),
    /// The seat's time for this move ran out.
    #[error("{0}'s time for this move ran out")]
    TimeUp(Seat),
    /// Nobody holds the seat: a server bot plays it, and no token opens it.
    #[error("{0} is a server bot's: no token opens it")]
    NoPerson(Seat),
    /// The seat's token is its person's alone: the game's admin cannot renew it.
    #[error("{0}'s token is its player's alone: only they can renew it")]
    NotAdmins(Seat),
    /// A timeout before the seat's deadline, or for a seat whose clock is stopped.
    #[error("{0}'s time has not run out")]
    TimeLeft(Seat),
    /// A move marked as a bot's on a seat no such bot plays.
    #[error("a move marked as the {level} bot's for {seat}, which no such bot plays", seat = .0, level = .1.name())]
    NotThatBot(Seat, BotLevel),
    /// A seat taken by neither a person with a token nor a bot, or by both;
    /// or a resignation that does not say what a game of its sides needs.
    #[error("{0}")]
    Malformed(String),
}

impl Table {
    /// The table record 0 sets: its named seats taken (with the sealed
    /// tokens), its null ones open, `sides` as the game's kind has them.
    #[must_use]
    pub fn new(created: &GameCreated, sides: Vec<Vec<Seat>>) -> Table {
        let seats: Vec<Sitter> = created
            .seats
            .iter()
            .enumerate()
            .map(|(seat, name)| {
                let bot = created.bot(seat);
                Sitter {
                    name: name.clone(),
                    bot,
                    // A seat a bot takes at creation is the bot's: no token
                    // opens it (its creator would otherwise read its hand).
                    key: if name.is_some() && bot.is_none() { SeatKey::Sealed } else { SeatKey::Locked },
                    resigned: false,
                    generation: 0,
                }
            })
            .collect();
        let phase = if seats.iter().all(|s| s.name.is_some()) { Phase::Playing } else { Phase::Waiting };
        let clocks = created.clock.map(|control| Clocks::new(control, created.seats.len()));
        Table { seats, public: created.public, phase, sides, forfeits: Vec::new(), changes: 0, clocks, due_bot: None }
    }

    /// Moves the clocks to a record made at `at` (ms since the epoch),
    /// after which the engine says `engine()`; `moved` is the seat whose
    /// move the record is, if it is one. Called after every record, record
    /// 0 included, by replay and by the service alike; a game without a
    /// clock has nothing to move, and its engine is not asked.
    pub fn advance(&mut self, at: u64, engine: impl FnOnce() -> ludo_engine::Status, moved: Option<Seat>) {
        if moved.is_some() && moved == self.due_bot.map(|(seat, _)| seat) {
            self.due_bot = None;
        }
        let Some(clocks) = &mut self.clocks else { return };
        let engine = engine();
        let running = self.phase == Phase::Playing && !engine.is_finished();
        let seats = &self.seats;
        let due = self.due_bot.map(|(seat, _)| usize::from(seat.0));
        // A seat's clock runs on its turn, unless a server bot plays it.
        let on_turn = |i: usize| running && engine.to_move().contains(&seat_at(i)) && seats[i].bot.is_none() && due != Some(i);
        clocks.advance(at, on_turn, moved.map(|seat| usize::from(seat.0)));
    }

    /// Whether [`Table::advance`] after a move by `seat` changes anything:
    /// a clock runs, or the move is the one a due bot owed. (A fold copies
    /// a shared table only then.)
    #[must_use]
    pub fn moved_by(&self, seat: Seat) -> bool {
        self.clocks.is_some() || self.due_bot.is_some_and(|(due, _)| due == seat)
    }

    /// The game's time controls' clocks, if it has any.
    #[must_use]
    pub fn clocks(&self) -> Option<&Clocks> {
        self.clocks.as_ref()
    }

    /// The earliest deadline (ms since the epoch) and its seat.
    #[must_use]
    pub fn next_deadline(&self) -> Option<(u64, Seat)> {
        self.clocks.as_ref()?.next_deadline().map(|(at, seat)| (at, seat_at(seat)))
    }

    /// The record a server writes when `seat`'s time runs out: whether it
    /// forfeits, and the bot that makes its move (`mover`), or plays it from
    /// then on in a game that goes on after a forfeit (`heir`).
    #[must_use]
    pub fn timeout_of(&self, seat: Seat, mover: BotSeat, heir: BotSeat) -> (bool, Option<BotSeat>) {
        let forfeit = self.clocks.as_ref().is_some_and(|c| c.control.on_timeout == OnTimeout::Lose);
        let bot = match forfeit {
            false => Some(mover),
            true if self.two_sided() => None,
            true => Some(self.bot(seat).unwrap_or(heir)),
        };
        (forfeit, bot)
    }

    /// The server bot that moves for `seat` now: the one whose move is due
    /// after a timeout, or the one that plays the seat.
    #[must_use]
    pub fn bot_for(&self, seat: Seat) -> Option<BotSeat> {
        match self.due_bot {
            Some((due, bot)) if due == seat => Some(bot),
            _ => self.bot(seat),
        }
    }

    /// How many seat records changed the table since record 0.
    #[must_use]
    pub fn changes(&self) -> u32 {
        self.changes
    }

    /// The seats, in order.
    #[must_use]
    pub fn seats(&self) -> &[Sitter] {
        &self.seats
    }

    /// Whether anyone may join an open seat.
    #[must_use]
    pub fn public(&self) -> bool {
        self.public
    }

    /// Per seat, the server bot that plays it.
    #[must_use]
    pub fn bots(&self) -> Vec<Option<BotSeat>> {
        self.seats.iter().map(|s| s.bot).collect()
    }

    /// The server bot that plays `seat`, if one does.
    #[must_use]
    pub fn bot(&self, seat: Seat) -> Option<BotSeat> {
        self.seats.get(usize::from(seat.0)).and_then(|s| s.bot)
    }

    /// The seats' names, an open seat as "Seat N (open)" (for sentences,
    /// which may start with a name).
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.seats.iter().enumerate().map(|(i, s)| s.name.clone().unwrap_or_else(|| format!("Seat {i} (open)"))).collect()
    }

    /// The seats nobody has taken.
    #[must_use]
    pub fn open_seats(&self) -> Vec<Seat> {
        (0..self.seats.len()).filter(|&i| self.seats[i].name.is_none()).map(seat_at).collect()
    }

    /// Whether the game is waiting for players.
    #[must_use]
    pub fn waiting(&self) -> bool {
        self.phase == Phase::Waiting
    }

    /// Whether the game has two sides, so that a resignation ends it.
    #[must_use]
    pub fn two_sided(&self) -> bool {
        self.sides.len() == 2
    }

    /// How the game stands, the engine saying `engine` about the game itself.
    #[must_use]
    pub fn status(&self, engine: ludo_engine::Status) -> Status {
        match self.phase {
            Phase::Waiting => Status::Waiting { open_seats: self.open_seats() },
            Phase::Cancelled => Status::Cancelled,
            Phase::GaveUp(loser) => {
                let winners = self.sides.iter().enumerate().filter(|&(i, _)| i != loser).flat_map(|(_, side)| side.iter().copied());
                let mut winners: Vec<Seat> = winners.collect();
                winners.sort_unstable();
                Status::Finished { result: Outcome { scores: vec![0; self.seats.len()], winners }, forfeits: self.forfeits.clone() }
            }
            Phase::Playing => match Status::from(engine) {
                Status::Finished { result, .. } => Status::Finished { result, forfeits: self.forfeits.clone() },
                Status::InProgress { to_move, .. } => Status::InProgress { to_move, clock: self.clock_status() },
                other => other,
            },
        }
    }

    /// The seats' clocks as the API shows them.
    fn clock_status(&self) -> Option<ClockStatus> {
        let clocks = self.clocks.as_ref()?;
        let seats = (0..self.seats.len())
            .map(|i| SeatClock { seat: seat_at(i), bank_ms: clocks.bank(i), deadline: clocks.deadline(i).map(rfc3339) })
            .collect();
        Some(ClockStatus { seats })
    }

    /// The seat `token` opens (checked against every seat in constant time,
    /// so timing tells nothing about tokens), with `sealed` the hashes of
    /// the seats' first tokens, indexed by seat (kept with the game's
    /// secrets, outside the log).
    #[must_use]
    pub fn seat_of(&self, token: &str, sealed: &[[u8; 32]]) -> Option<Seat> {
        let presented = hash_token(token);
        let mut found = None;
        for (i, sitter) in self.seats.iter().enumerate() {
            let stored = match sitter.key {
                SeatKey::Sealed => sealed.get(i).copied(),
                SeatKey::Issued { hash, .. } => Some(hash),
                SeatKey::Locked => None,
            };
            if let Some(stored) = stored
                && bool::from(presented.ct_eq(&stored))
            {
                found = Some(seat_at(i));
            }
        }
        found
    }

    /// How many times what opens `seat` changed (see [`Sitter`]); 0 for a
    /// seat not at the table.
    #[must_use]
    pub fn generation(&self, seat: Seat) -> u32 {
        self.seats.get(usize::from(seat.0)).map_or(0, |sitter| sitter.generation)
    }

    /// Whether a person holds `seat` (a token opens it), rather than nobody
    /// or a server bot alone.
    #[must_use]
    pub fn held_by_person(&self, seat: Seat) -> bool {
        self.seats.get(usize::from(seat.0)).is_some_and(|sitter| sitter.key != SeatKey::Locked)
    }

    fn sitter(&self, seat: Seat) -> Result<&Sitter, Refusal> {
        self.seats.get(usize::from(seat.0)).ok_or(Refusal::UnknownSeat(seat))
    }

    /// Refuses, unless the game is being played.
    fn playing(&self) -> Result<(), Refusal> {
        match self.phase {
            Phase::Playing => Ok(()),
            Phase::Waiting => Err(Refusal::Waiting(self.open_seats().iter().map(|s| s.0).collect())),
            Phase::Cancelled => Err(Refusal::Cancelled),
            Phase::GaveUp(_) => Err(Refusal::Over),
        }
    }

    /// Refuses, unless seats are open.
    fn in_lobby(&self) -> Result<(), Refusal> {
        match self.phase {
            Phase::Waiting => Ok(()),
            Phase::Playing => Err(Refusal::Started),
            Phase::Cancelled => Err(Refusal::Cancelled),
            Phase::GaveUp(_) => Err(Refusal::Over),
        }
    }

    /// Whether `change` may happen now, the game being `game_over` or not
    /// (the engine's word).
    ///
    /// # Errors
    /// [`Refusal`], saying why not.
    pub fn check(&self, change: &Change<'_>, game_over: bool) -> Result<(), Refusal> {
        match *change {
            Change::Join { seat, name, bot, token_hash } => {
                self.in_lobby()?;
                if self.sitter(seat)?.name.is_some() {
                    return Err(Refusal::Taken(seat));
                }
                if bot.is_some() == token_hash.is_some() {
                    return Err(Refusal::Malformed("a seat is taken by a person with a token, or by a bot without one".into()));
                }
                if name.trim().is_empty() {
                    return Err(Refusal::Malformed("a seat is taken under a name".into()));
                }
                Ok(())
            }
            Change::Leave(seat) => {
                self.in_lobby()?;
                match self.sitter(seat)?.name {
                    Some(_) => Ok(()),
                    None => Err(Refusal::Open(seat)),
                }
            }
            Change::Cancel => self.in_lobby(),
            Change::Token { seat, by, .. } => {
                self.ongoing(game_over)?;
                let sitter = self.sitter(seat)?;
                if sitter.name.is_none() {
                    return Err(Refusal::Open(seat));
                }
                match (by, sitter.key) {
                    // Nobody holds a bot's seat: no token is issued for it.
                    (Some(_), SeatKey::Locked) => Err(Refusal::NoPerson(seat)),
                    // The admin renews only a token it holds already, never
                    // one a person holds alone (it would read their hand).
                    (Some(TokenBy::Admin), SeatKey::Issued { admin: false, .. }) => Err(Refusal::NotAdmins(seat)),
                    _ => Ok(()),
                }
            }
            Change::Bot(seat, _) => {
                self.ongoing(game_over)?;
                let sitter = self.sitter(seat)?;
                if sitter.name.is_none() {
                    return Err(Refusal::Open(seat));
                }
                if sitter.resigned {
                    return Err(Refusal::Resigned(seat));
                }
                Ok(())
            }
            Change::Resign(seat, bot) => {
                self.playing()?;
                self.ongoing(game_over)?;
                if self.sitter(seat)?.resigned {
                    return Err(Refusal::Resigned(seat));
                }
                if self.two_sided() == bot.is_some() {
                    return Err(Refusal::Malformed(
                        "a resignation ends a game of two sides, and hands the seat to a bot in any other game".into(),
                    ));
                }
                Ok(())
            }
            Change::Timeout { seat, forfeit, bot, at } => {
                self.playing()?;
                self.ongoing(game_over)?;
                self.sitter(seat)?;
                let Some(clocks) = &self.clocks else {
                    return Err(Refusal::Malformed("a timeout in a game without a clock".into()));
                };
                match clocks.deadline(usize::from(seat.0)) {
                    Some(deadline) if at >= deadline => {}
                    _ => return Err(Refusal::TimeLeft(seat)),
                }
                let lose = clocks.control.on_timeout == OnTimeout::Lose;
                if forfeit != lose {
                    return Err(Refusal::Malformed(format!("this game's clock says `on_timeout: {}`", if lose { "lose" } else { "bot" })));
                }
                if bot.is_none() != (forfeit && self.two_sided()) {
                    return Err(Refusal::Malformed(
                        "a timeout names the bot that moves, or plays the seat on; none only when it ends a game of two sides".into(),
                    ));
                }
                Ok(())
            }
        }
    }

    /// Refuses once the game is over, in any phase.
    fn ongoing(&self, game_over: bool) -> Result<(), Refusal> {
        match self.phase {
            Phase::Cancelled => Err(Refusal::Cancelled),
            Phase::GaveUp(_) => Err(Refusal::Over),
            _ if game_over => Err(Refusal::Over),
            _ => Ok(()),
        }
    }

    /// Whether `seat` may move at `at` (ms since the epoch), by its player
    /// (`mark` none) or by the server bot of that level: while the game is
    /// played, within the seat's time, not by the player of a seat that
    /// resigned, and after a timeout only by the bot whose move it is.
    /// A move changes nothing at the table but its clocks ([`Table::advance`]).
    ///
    /// # Errors
    /// [`Refusal`], saying why not.
    pub fn check_move(&self, seat: Seat, mark: Option<BotLevel>, at: u64) -> Result<(), Refusal> {
        self.playing()?;
        let sitter = self.sitter(seat)?;
        let due = self.due_bot.filter(|(due, _)| *due == seat).map(|(_, bot)| bot.level);
        match (mark, due) {
            // After a timeout, the seat's move is its bot's.
            (None, Some(_)) => return Err(Refusal::TimeUp(seat)),
            (Some(level), Some(due)) if level != due => return Err(Refusal::NotThatBot(seat, level)),
            (Some(level), None) if sitter.bot.is_none_or(|bot| bot.level != level) => {
                return Err(Refusal::NotThatBot(seat, level));
            }
            (None, None) if sitter.resigned => return Err(Refusal::Resigned(seat)),
            _ => {}
        }
        match self.clocks.as_ref().and_then(|c| c.deadline(usize::from(seat.0))) {
            Some(deadline) if at > deadline => Err(Refusal::TimeUp(seat)),
            _ => Ok(()),
        }
    }

    /// Applies `change` after [`Table::check`].
    ///
    /// # Errors
    /// As [`Table::check`]; the table is then unchanged.
    pub fn apply(&mut self, change: &Change<'_>, game_over: bool) -> Result<(), Refusal> {
        self.check(change, game_over)?;
        if !matches!(change, Change::Timeout { .. }) {
            self.changes = self.changes.saturating_add(1);
        }
        match *change {
            Change::Join { seat, name, bot, token_hash } => {
                let sitter = &mut self.seats[usize::from(seat.0)];
                sitter.name = Some(name.to_string());
                sitter.bot = bot;
                sitter.key = token_hash.map_or(SeatKey::Locked, |hash| SeatKey::Issued { hash, admin: false });
                sitter.generation += 1;
                if self.seats.iter().all(|s| s.name.is_some()) {
                    self.phase = Phase::Playing;
                }
            }
            Change::Leave(seat) => {
                let sitter = &mut self.seats[usize::from(seat.0)];
                let generation = sitter.generation + 1;
                *sitter = Sitter { name: None, bot: None, key: SeatKey::Locked, resigned: false, generation };
            }
            Change::Cancel => self.phase = Phase::Cancelled,
            Change::Token { seat, hash, by } => {
                let sitter = &mut self.seats[usize::from(seat.0)];
                // A record from before the log said who asked was the admin's.
                sitter.key = SeatKey::Issued { hash, admin: by.is_none_or(|by| by == TokenBy::Admin) };
                sitter.generation += 1;
            }
            Change::Bot(seat, bot) => self.seats[usize::from(seat.0)].bot = bot,
            Change::Resign(seat, bot) => self.give_up(seat, bot, ForfeitReason::Resigned),
            Change::Timeout { seat, forfeit: true, bot, .. } => {
                self.give_up(seat, bot, ForfeitReason::TimedOut);
                // A seat a bot takes over is the bot's from now on: its
                // person's token stops opening it (a resignation, the
                // person's own act, leaves them their seat's view).
                if bot.is_some() {
                    let sitter = &mut self.seats[usize::from(seat.0)];
                    sitter.key = SeatKey::Locked;
                    sitter.generation += 1;
                }
            }
            Change::Timeout { seat, forfeit: false, bot, .. } => self.due_bot = bot.map(|bot| (seat, bot)),
        }
        Ok(())
    }
}

impl Table {
    /// `seat` gives up: a game of two sides ends, any other goes on with
    /// `bot` playing the seat.
    fn give_up(&mut self, seat: Seat, bot: Option<BotSeat>, reason: ForfeitReason) {
        self.forfeits.push(Forfeit { seat, reason });
        let sitter = &mut self.seats[usize::from(seat.0)];
        sitter.resigned = true;
        match bot {
            Some(bot) => sitter.bot = Some(bot),
            None => {
                let side = self.sides.iter().position(|side| side.contains(&seat)).unwrap_or(0);
                self.phase = Phase::GaveUp(side);
            }
        }
    }
}

fn seat_at(index: usize) -> Seat {
    Seat(u8::try_from(index).expect("a table has fewer than 256 seats"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::BotLevel;

    fn created(seats: &[Option<&str>], public: bool) -> GameCreated {
        GameCreated {
            game_id: "g".into(),
            kind: "kardinal".into(),
            ruleset: "kardinal/1".into(),
            options: serde_json::json!({}),
            seats: seats.iter().map(|s| s.map(String::from)).collect(),
            bots: vec![None; seats.len()],
            public,
            clock: None,
            seed_commitment: String::new(),
        }
    }

    fn alone(players: u8) -> Vec<Vec<Seat>> {
        (0..players).map(|s| vec![Seat(s)]).collect()
    }

    const GREEDY: BotSeat = BotSeat { level: BotLevel::Greedy, think_ms: 0 };

    #[test]
    fn a_table_with_open_seats_waits_until_every_seat_is_taken() {
        let mut table = Table::new(&created(&[Some("Ann"), None, None], false), alone(3));
        assert_eq!(
            table.status(ludo_engine::Status::InProgress { to_move: vec![Seat(0)] }),
            Status::Waiting { open_seats: vec![Seat(1), Seat(2)] }
        );
        assert_eq!(table.check_move(Seat(0), None, 0), Err(Refusal::Waiting(vec![1, 2])));
        table.apply(&Change::Join { seat: Seat(1), name: "Bea", bot: None, token_hash: Some([1; 32]) }, false).unwrap();
        let again = Change::Join { seat: Seat(1), name: "Cy", bot: None, token_hash: Some([2; 32]) };
        assert_eq!(table.check(&again, false), Err(Refusal::Taken(Seat(1))));
        table.apply(&Change::Leave(Seat(1)), false).unwrap();
        table.apply(&again, false).unwrap();
        table.apply(&Change::Join { seat: Seat(2), name: "Robot", bot: Some(GREEDY), token_hash: None }, false).unwrap();
        assert!(!table.waiting());
        assert_eq!(table.check(&Change::Leave(Seat(1)), false), Err(Refusal::Started));
        assert_eq!(table.check(&Change::Cancel, false), Err(Refusal::Started));
        assert_eq!(table.check_move(Seat(0), None, 0), Ok(()));
    }

    #[test]
    fn a_resignation_ends_a_two_sided_game_and_hands_the_seat_to_a_bot_otherwise() {
        let mut duel = Table::new(&created(&[Some("Ann"), Some("Bob")], false), alone(2));
        assert!(duel.check(&Change::Resign(Seat(0), Some(GREEDY)), false).is_err(), "a duel's resignation ends it");
        duel.apply(&Change::Resign(Seat(0), None), false).unwrap();
        let Status::Finished { result, forfeits } = duel.status(ludo_engine::Status::InProgress { to_move: vec![Seat(0)] }) else {
            panic!("a duel ends when a side resigns")
        };
        assert_eq!((result.winners, result.scores), (vec![Seat(1)], vec![0, 0]));
        assert_eq!(forfeits, vec![Forfeit { seat: Seat(0), reason: ForfeitReason::Resigned }]);
        assert_eq!(duel.check_move(Seat(1), None, 0), Err(Refusal::Over));

        let camps = vec![vec![Seat(0), Seat(2)], vec![Seat(1), Seat(3)]];
        let mut b13 = Table::new(&created(&[Some("A"), Some("B"), Some("C"), Some("D")], false), camps);
        b13.apply(&Change::Resign(Seat(3), None), false).unwrap();
        let Status::Finished { result, .. } = b13.status(ludo_engine::Status::InProgress { to_move: vec![Seat(0)] }) else {
            panic!("a camp's resignation ends the match")
        };
        assert_eq!(result.winners, vec![Seat(0), Seat(2)]);

        let mut three = Table::new(&created(&[Some("A"), Some("B"), Some("C")], false), alone(3));
        three.apply(&Change::Resign(Seat(1), Some(GREEDY)), false).unwrap();
        assert_eq!(three.bot(Seat(1)), Some(GREEDY));
        assert_eq!(three.check_move(Seat(1), None, 0), Err(Refusal::Resigned(Seat(1))));
        assert_eq!(three.check_move(Seat(1), Some(BotLevel::Greedy), 0), Ok(()));
        assert_eq!(three.check(&Change::Bot(Seat(1), None), false), Err(Refusal::Resigned(Seat(1))));
        let over = ludo_engine::Status::Finished { result: Outcome { scores: vec![1, 2, 3], winners: vec![Seat(2)] } };
        assert!(matches!(three.status(over), Status::Finished { forfeits, .. } if forfeits.len() == 1));
    }

    #[test]
    fn tokens_open_the_seat_they_were_issued_for_until_replaced() {
        let tokens = ["ludo_ann", "ludo_bob"];
        let sealed = tokens.map(hash_token);
        let mut table = Table::new(&created(&[Some("Ann"), Some("Bob")], false), alone(2));
        assert_eq!(table.seat_of(tokens[1], &sealed), Some(Seat(1)));
        let fresh = "ludo_fresh";
        table.apply(&Change::Token { seat: Seat(1), hash: hash_token(fresh), by: Some(TokenBy::Admin) }, false).unwrap();
        assert_eq!(table.seat_of(tokens[1], &sealed), None, "the old token stops working");
        assert_eq!(table.seat_of(fresh, &sealed), Some(Seat(1)));
        assert_eq!(table.seat_of(tokens[0], &sealed), Some(Seat(0)));
    }
}
