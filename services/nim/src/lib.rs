//! Nim as a ludotheque engine: the smallest game the server can host, kept
//! to prove that adding a game is its crate, its proto file and converters,
//! and one line in `ludo_record::for_each_game!` (docs/adding-a-game.md). It
//! is compiled into the server only with the feature `test-game`.
//!
//! The rules (`docs/rules/nim.md`): a heap of counters (NM-1), two players
//! alternately take one to three of them (NM-2, NM-3), and whoever takes
//! the last counter wins (NM-4). There is no hidden information and no
//! chance.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use ludo_engine::{DeckRng, Engine, InfoSet, MoveError, Outcome, Seat, SetupError, Status, Viewer};

/// Counters on the heap unless the options say otherwise (NM-1).
pub const DEFAULT_HEAP: u8 = 15;
/// Most counters a move takes (NM-3).
pub const MAX_TAKE: u8 = 3;

/// How a game of Nim is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(default, deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = nim::Options))]
pub struct Options {
    /// Counters on the heap at the start, 1 to 255 (NM-1).
    pub heap: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options { heap: DEFAULT_HEAP }
    }
}

/// A move: take `count` counters from the heap (NM-3).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(tag = "type", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = nim::Move))]
pub enum Move {
    /// Take one to three counters, no more than the heap holds.
    Take {
        /// How many.
        count: u8,
    },
}

/// The whole state as anyone sees it: everything in Nim is public.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = nim::View))]
pub struct View {
    /// Counters left on the heap.
    pub heap: u8,
    /// The seat to take next; absent once the game is over.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub to_act: Option<Seat>,
    /// The seat that took the last counter (NM-4); absent until then.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub winner: Option<Seat>,
}

/// Something that happened when the game was set up or a move applied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(tag = "type", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = nim::Effect))]
pub enum Effect {
    /// The heap was laid out; seat 0 takes first (NM-1, NM-2).
    GameStarted {
        /// Counters on the heap.
        heap: u8,
    },
    /// A seat took counters (NM-3).
    Took {
        /// The seat that took.
        seat: Seat,
        /// How many it took.
        count: u8,
        /// Counters left.
        left: u8,
    },
    /// The last counter was taken (NM-4).
    GameEnded {
        /// The seat that took it.
        winner: Seat,
    },
}

/// A game of Nim.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Game {
    heap: u8,
    to_act: Seat,
    winner: Option<Seat>,
}

impl Engine for Game {
    type Options = Options;
    type Move = Move;
    type View = View;
    type Effect = Effect;

    const KIND: &'static str = "nim";
    const RULESET: &'static str = "nim-1";
    const MIN_PLAYERS: usize = 2;
    const MAX_PLAYERS: usize = 2;

    fn new(setup: &ludo_engine::Setup<Options>) -> Result<(Self, Vec<Effect>), SetupError> {
        if setup.players != 2 {
            return Err(SetupError::PlayerCount { min: Self::MIN_PLAYERS, max: Self::MAX_PLAYERS, got: setup.players });
        }
        let heap = setup.options.heap;
        if heap == 0 {
            return Err(SetupError::InvalidOption { field: "heap", reason: "NM-1: the heap holds at least one counter".into() });
        }
        Ok((Game { heap, to_act: Seat(0), winner: None }, vec![Effect::GameStarted { heap }]))
    }

    fn status(&self) -> Status {
        match self.winner {
            None => Status::InProgress { to_move: vec![self.to_act] },
            Some(winner) => {
                let scores = (0..2).map(|s| i32::from(Seat(s) == winner)).collect();
                Status::Finished { result: Outcome { scores, winners: vec![winner] } }
            }
        }
    }

    fn legal_moves(&self, seat: Seat) -> Vec<Move> {
        if self.winner.is_some() || seat != self.to_act {
            return Vec::new();
        }
        (1..=MAX_TAKE.min(self.heap)).map(|count| Move::Take { count }).collect()
    }

    fn apply(&mut self, seat: Seat, mv: &Move) -> Result<Vec<Effect>, MoveError> {
        if seat.index() >= 2 {
            return Err(MoveError::UnknownSeat { seat });
        }
        if self.winner.is_some() {
            return Err(MoveError::GameOver);
        }
        if seat != self.to_act {
            return Err(MoveError::NotYourTurn { seat, to_move: vec![self.to_act] });
        }
        let Move::Take { count } = *mv;
        if !(1..=MAX_TAKE).contains(&count) {
            return Err(MoveError::rule("NM-3", format!("take 1 to {MAX_TAKE} counters, not {count}")));
        }
        if count > self.heap {
            return Err(MoveError::rule("NM-3", format!("the heap holds {} counters, not {count}", self.heap)));
        }
        self.heap -= count;
        let mut effects = vec![Effect::Took { seat, count, left: self.heap }];
        if self.heap == 0 {
            self.winner = Some(seat);
            effects.push(Effect::GameEnded { winner: seat });
        } else {
            self.to_act = seat.next(2);
        }
        Ok(effects)
    }

    fn view(&self, _viewer: Viewer) -> View {
        View { heap: self.heap, to_act: self.winner.is_none().then_some(self.to_act), winner: self.winner }
    }

    fn redact(&self, effect: &Effect, _viewer: Viewer) -> Effect {
        effect.clone()
    }

    fn narrate(&self, effect: &Effect, seats: &[String]) -> String {
        let name = |seat: Seat| seats.get(seat.index()).cloned().unwrap_or_else(|| seat.to_string());
        match effect {
            Effect::GameStarted { heap } => format!("The heap holds {heap} counters."),
            Effect::Took { seat, count, left } => format!("{} took {count}; {left} left.", name(*seat)),
            Effect::GameEnded { winner } => format!("{} took the last counter and wins.", name(*winner)),
        }
    }
}

/// What one seat knows: all of it (no hidden information, no chance).
impl InfoSet for Game {
    type Info = Game;

    fn info(&self, _seat: Seat) -> Game {
        self.clone()
    }

    fn determinize(info: &Game, _rng: &mut DeckRng) -> Game {
        info.clone()
    }
}

/// The theory of the game: the seat to move loses against perfect play
/// exactly when the heap is a multiple of four.
impl ludo_bots::Evaluate for Game {
    const PLAYOUT_DEPTH: u32 = 8;

    fn value(&self, seat: Seat) -> f64 {
        if let Some(value) = ludo_bots::result_value(&self.status(), seat) {
            return value;
        }
        let mover_wins = !self.heap.is_multiple_of(MAX_TAKE + 1);
        if mover_wins == (seat == self.to_act) { 0.9 } else { 0.1 }
    }
}

#[cfg(test)]
mod tests {
    use ludo_engine::{Seed, Setup};

    use super::*;

    fn new(heap: u8) -> Game {
        Game::new(&Setup { players: 2, options: Options { heap }, seed: Seed([0; 32]) }).expect("set-up").0
    }

    #[test]
    fn nm_3_a_seat_takes_one_to_three_and_no_more_than_the_heap() {
        let mut game = new(2);
        assert_eq!(game.legal_moves(Seat(0)), [Move::Take { count: 1 }, Move::Take { count: 2 }]);
        for count in [0, 3, 4] {
            let before = game.clone();
            assert!(matches!(game.apply(Seat(0), &Move::Take { count }), Err(MoveError::Rule { rule: "NM-3", .. })));
            assert_eq!(game, before, "a refused move changes nothing");
        }
    }

    #[test]
    fn nm_2_seats_alternate() {
        let mut game = new(5);
        assert!(matches!(game.apply(Seat(1), &Move::Take { count: 1 }), Err(MoveError::NotYourTurn { .. })));
        game.apply(Seat(0), &Move::Take { count: 1 }).unwrap();
        assert_eq!(game.status().to_move(), [Seat(1)]);
    }

    #[test]
    fn nm_4_whoever_takes_the_last_counter_wins() {
        let mut game = new(4);
        game.apply(Seat(0), &Move::Take { count: 3 }).unwrap();
        let effects = game.apply(Seat(1), &Move::Take { count: 1 }).unwrap();
        assert_eq!(effects.last(), Some(&Effect::GameEnded { winner: Seat(1) }));
        assert_eq!(game.status(), Status::Finished { result: Outcome { scores: vec![0, 1], winners: vec![Seat(1)] } });
        assert!(matches!(game.apply(Seat(0), &Move::Take { count: 1 }), Err(MoveError::GameOver)));
    }

    #[test]
    fn random_playouts_keep_the_contract() {
        for (chooser, heap) in (0..50).zip(1..) {
            let setup = Setup { players: 2, options: Options { heap }, seed: Seed([0; 32]) };
            let playout = ludo_engine::testkit::random_playout::<Game>(&setup, chooser, 1000, |_, _| {});
            assert!(playout.state.status().is_finished());
        }
    }
}
