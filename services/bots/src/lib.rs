//! Computer players that play fair: a bot decides from what its seat
//! knows — an [`InfoSet::Info`], which equals for every state the seat
//! cannot tell from the real one — and never from the game's full state.
//! That is the type of [`Bot::choose`]: it takes an info, not a game. Every
//! full state a bot looks at is one it drew itself with
//! [`InfoSet::determinize`].
//!
//! Three levels, for every game:
//! - [`Level::Random`]: a legal move, uniformly;
//! - [`Level::Greedy`]: one ply ahead: each legal move is tried on a few
//!   determinizations and the state after it is scored by the game's
//!   evaluation ([`Evaluate`], written from each game's rules);
//! - [`Level::Strong`]: information-set Monte Carlo tree search (single
//!   observer: one tree over the seat's information, each iteration on a
//!   fresh determinization, selection by UCB1 among the moves available in
//!   it), with random playouts cut off after a few moves and scored by the
//!   same evaluation, within an iteration and time budget.
//!
//! Pure and synchronous: no I/O, no clock except the optional time budget,
//! randomness only from the bot's own seeded generator (so a bot with a
//! fixed seed and an iteration budget is deterministic).

mod eval;
mod search;

use std::time::Duration;

use ludo_engine::{DeckRng, InfoSet, Seat, Seed, Status};

pub use eval::Evaluate;

/// How well a bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// A legal move, uniformly at random.
    Random,
    /// The best move one ply ahead by the game's evaluation.
    Greedy,
    /// Information-set Monte Carlo tree search.
    Strong,
}

impl Level {
    /// Every level, weakest first.
    pub const ALL: [Level; 3] = [Level::Random, Level::Greedy, Level::Strong];

    /// The level's name in the API (`random`, `greedy`, `strong`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Greedy => "greedy",
            Level::Strong => "strong",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown level's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown bot level `{0}`: expected random, greedy or strong")]
pub struct UnknownLevel(pub String);

impl std::str::FromStr for Level {
    type Err = UnknownLevel;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Level::ALL.into_iter().find(|l| l.name() == text).ok_or_else(|| UnknownLevel(text.to_string()))
    }
}

/// How much a bot may think per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Search iterations at most (`Strong`), determinizations per move
    /// (`Greedy`: a tenth of this, at least 4).
    pub iterations: u32,
    /// Wall time at most, if any (checked between iterations).
    pub time: Option<Duration>,
    /// Random moves a playout makes before it is scored (`Strong`);
    /// `None`: the game's own default ([`Evaluate::PLAYOUT_DEPTH`]).
    pub playout_depth: Option<u32>,
}

impl Default for Budget {
    /// Fast enough for play on a small machine: 1,000 iterations, at most
    /// 200 ms, playouts as deep as the game's default.
    fn default() -> Self {
        Budget { iterations: 1_000, time: Some(Duration::from_millis(200)), playout_depth: None }
    }
}

/// What a bot needs of a game: its information sets and an evaluation.
pub trait Playable: InfoSet + Evaluate {}

impl<E: InfoSet + Evaluate> Playable for E {}

/// A computer player.
#[derive(Clone, Debug)]
pub struct Bot {
    level: Level,
    budget: Budget,
    rng: DeckRng,
    /// Search iterations (each one playout) of the last strong move.
    last_iterations: u32,
}

impl Bot {
    /// A bot of `level` thinking within `budget`, its randomness from `seed`.
    #[must_use]
    pub fn new(level: Level, budget: Budget, seed: u64) -> Self {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        bytes[8..16].copy_from_slice(b"ludo-bot");
        Bot { level, budget, rng: DeckRng::new(&Seed(bytes)), last_iterations: 0 }
    }

    /// Its level.
    #[must_use]
    pub fn level(&self) -> Level {
        self.level
    }

    /// The search iterations (one playout each) its last strong move took.
    #[must_use]
    pub fn last_iterations(&self) -> u32 {
        self.last_iterations
    }

    /// The move `seat` makes knowing `info`, or `None` when it is not the
    /// seat's turn (or the game is over).
    ///
    /// The bot sees `info` and nothing else: whatever the hidden parts of
    /// the real game are, the same info and the same bot state give the
    /// same move.
    pub fn choose<E: Playable>(&mut self, seat: Seat, info: &E::Info) -> Option<E::Move> {
        // A determinization answers what the seat may do: its legal moves
        // depend only on what it knows.
        let sample = E::determinize(info, &mut self.rng);
        if !sample.status().to_move().contains(&seat) {
            return None;
        }
        let legal = sample.legal_moves(seat);
        match legal.len() {
            0 => None,
            1 => legal.into_iter().next(),
            _ => Some(match self.level {
                Level::Random => {
                    let pick = self.rng.below(u32::try_from(legal.len()).unwrap_or(u32::MAX)) as usize;
                    legal[pick].clone()
                }
                Level::Greedy => self.greedy::<E>(seat, info, legal),
                Level::Strong => {
                    let (mv, iterations) = search::ismcts::<E>(seat, info, &legal, self.budget, &mut self.rng);
                    self.last_iterations = iterations;
                    mv
                }
            }),
        }
    }

    fn greedy<E: Playable>(&mut self, seat: Seat, info: &E::Info, legal: Vec<E::Move>) -> E::Move {
        let samples = (self.budget.iterations / 10).max(4);
        let worlds: Vec<E> = (0..samples).map(|_| E::determinize(info, &mut self.rng)).collect();
        let mut best: Option<(f64, E::Move)> = None;
        for mv in legal {
            let mut total = 0.0;
            for world in &worlds {
                let mut next = world.clone();
                // Legal in every world (it depends only on what the seat knows).
                if next.apply(seat, &mv).is_ok() {
                    total += next.value(seat);
                }
            }
            // Ties keep the first listed: deterministic.
            if best.as_ref().is_none_or(|(score, _)| total > *score) {
                best = Some((total, mv));
            }
        }
        best.map(|(_, mv)| mv).expect("at least two legal moves")
    }
}

/// The value of a finished game for `seat`: 1 for a sole winner, shared
/// among joint winners, 0 for the others.
#[must_use]
pub fn result_value(status: &Status, seat: Seat) -> Option<f64> {
    match status {
        Status::Finished { result } if result.winners.contains(&seat) => Some(1.0 / result.winners.len() as f64),
        Status::Finished { .. } => Some(0.0),
        Status::InProgress { .. } => None,
    }
}

/// Plays `game` to its end with `bots[seat]` for each seat, at most
/// `max_moves` moves; answers the moves made. Every bot sees only its
/// seat's info.
///
/// # Errors
/// When a bot's move is refused (a bug: bots choose among legal moves).
pub fn play_out<E: Playable>(game: &mut E, bots: &mut [Bot], max_moves: usize) -> Result<usize, String> {
    let mut made = 0;
    while made < max_moves {
        let Some(&seat) = game.status().to_move().first() else { break };
        let bot = bots.get_mut(seat.index()).ok_or_else(|| format!("no bot for seat {}", seat.index()))?;
        let info = game.info(seat);
        let Some(mv) = bot.choose::<E>(seat, &info) else {
            return Err(format!("seat {} is to move but its bot found no move", seat.index()));
        };
        game.apply(seat, &mv).map_err(|e| format!("seat {}'s bot chose a refused move {mv:?}: {e}", seat.index()))?;
        made += 1;
    }
    Ok(made)
}

/// This library's version: the server records it beside each move a bot
/// makes, so a log says which bot made it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
