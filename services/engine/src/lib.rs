//! The engine contract: what every game of ludotheque implements.
//!
//! An engine is pure, synchronous and deterministic: no I/O, no clock, no
//! global randomness. Given the same [`Setup`] and the same sequence of
//! accepted moves it always reaches the same state, which is what lets the
//! game service keep only a log of moves and rebuild any state by replay.
//!
//! The contract is shaped for hidden information from the start:
//! [`Engine::view`] projects the state for a [`Viewer`], and
//! [`Engine::redact`] hides from a viewer what an [`Engine::Effect`] must not
//! tell them (a drawn card, a dealt hand).

mod error;
pub mod rng;
mod seat;
mod status;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod words;

pub use error::{MoveError, SetupError};
pub use rng::{DeckRng, Seed};
pub use seat::{Seat, Viewer};
pub use status::{Outcome, Status};

/// How a new game is set up: seat count, options and the secret seed.
#[derive(Clone, Debug)]
pub struct Setup<O> {
    /// Number of seats; seats are numbered `0..players` in clockwise order.
    pub players: usize,
    /// The game's options, already parsed (defaults filled in).
    pub options: O,
    /// The game's secret seed: every random draw of the engine comes from it.
    pub seed: Seed,
}

/// One game kind's rules, as a state machine driven by seats' moves.
///
/// Invariants every implementation keeps (and its property tests check):
/// - `apply` either accepts the move and returns what happened, or refuses it
///   and leaves the state exactly as it was.
/// - every move returned by `legal_moves(seat)` is accepted by `apply(seat, …)`.
/// - automatic steps (forced passes, deals, interim scoring …) happen inside
///   `new` or `apply` and are reported as effects.
pub trait Engine: Clone + PartialEq + core::fmt::Debug + Send + Sync + Sized + 'static {
    /// Options chosen at creation.
    type Options: Clone + Default + PartialEq + core::fmt::Debug + Send + Sync;
    /// A move a seat can submit.
    type Move: Clone + PartialEq + core::fmt::Debug + Send + Sync;
    /// The state as one viewer may see it.
    type View: Clone + core::fmt::Debug + Send + Sync;
    /// Something that happened as a consequence of creating the game or of a
    /// move (including automatic steps), described for a log reader.
    type Effect: Clone + PartialEq + core::fmt::Debug + Send + Sync;

    /// Stable game id used in the API (`cardinal`, `kardinal`, `battle13`).
    const KIND: &'static str;
    /// Version of the rules implementation; recorded in every game's log so a
    /// replay can refuse to run a log under different rules.
    const RULESET: &'static str;
    /// Fewest seats the game accepts.
    const MIN_PLAYERS: usize;
    /// Most seats the game accepts.
    const MAX_PLAYERS: usize;

    /// Sets up a new game and returns it with the effects of the set-up.
    ///
    /// # Errors
    /// [`SetupError`] when the seat count or an option is not acceptable.
    fn new(setup: &Setup<Self::Options>) -> Result<(Self, Vec<Self::Effect>), SetupError>;

    /// Whose turn it is, or the final result.
    fn status(&self) -> Status;

    /// Every move `seat` may submit now (empty when it is not its turn).
    fn legal_moves(&self, seat: Seat) -> Vec<Self::Move>;

    /// Applies `mv` by `seat` and returns what happened.
    ///
    /// # Errors
    /// [`MoveError`] when the move is refused; the state is then unchanged.
    fn apply(&mut self, seat: Seat, mv: &Self::Move) -> Result<Vec<Self::Effect>, MoveError>;

    /// The state as `viewer` may see it.
    fn view(&self, viewer: Viewer) -> Self::View;

    /// `effect` as `viewer` may see it, judged against the current state
    /// (`self`): what was secret when it happened may be public now.
    fn redact(&self, effect: &Self::Effect, viewer: Viewer) -> Self::Effect;

    /// Describes `effect` in a short English sentence a replay viewer can
    /// show, naming seats by `seats[i]` (the players' names) and things as
    /// people say them (a board's country names, colours by name), never by
    /// their ids. The effect is already redacted for its viewer: a hidden
    /// card reads as "a card". `self` is any state of the same game (the
    /// current one): it supplies what the game was set up with, such as a
    /// custom board's names; narration never depends on the state's progress.
    fn narrate(&self, effect: &Self::Effect, seats: &[String]) -> String;

    /// The sides of a game of `players` seats: the seats that win or lose
    /// together. Each seat alone unless the game has partnerships. A game
    /// of exactly two sides ends when one of them resigns.
    #[must_use]
    fn sides(players: usize) -> Vec<Vec<Seat>> {
        (0..players).filter_map(|seat| u8::try_from(seat).ok()).map(|seat| vec![Seat(seat)]).collect()
    }
}

/// What one seat knows of a game, and full states drawn from it: what a
/// computer player searches with, so that it never decides from what its
/// seat may not see.
///
/// Honesty is a property of [`InfoSet::Info`]: it is computed from the full
/// state, but two states that differ only in what is hidden from the seat
/// (other hands, the deck's order, the seed of deals to come) give equal
/// infos. Each engine's tests check that. A bot is then handed only the
/// info, never the state, and every state it searches is one that
/// [`InfoSet::determinize`] drew at random among those the seat cannot tell
/// apart from the real one (as far as the engine tracks what the log
/// proves: see each engine's implementation).
pub trait InfoSet: Engine {
    /// Everything one seat knows, and nothing else.
    type Info: Clone + PartialEq + core::fmt::Debug + Send + Sync;

    /// What `seat` knows of this state.
    fn info(&self, seat: Seat) -> Self::Info;

    /// A full state consistent with `info`: the hidden parts dealt from
    /// `rng` among the places they may be.
    fn determinize(info: &Self::Info, rng: &mut DeckRng) -> Self;
}
