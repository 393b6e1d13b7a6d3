//! The game: turn order, building, the cardinal, passes and the end
//! (CA-8, CA-10, CA-11, CA-17, CA-18, CA-20, CA-21), behind the engine contract.

use ludo_engine::{DeckRng, Engine, MoveError, Seat, Setup, SetupError, Status, Viewer};

use crate::cell::{Cell, Orientation};
use crate::effect::Effect;
use crate::markers::Markers;
use crate::moves::Move;
use crate::options::Options;
use crate::pieces::{Colour, Footprint, Shape, Stock};
use crate::scoring::{Scoring, score};
use crate::seats::Table;
use crate::town::{Town, check_free, check_neighbours};
use crate::view::View;

/// Who acts next, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub(crate) enum Turn {
    /// The seat must build (it has a legal placement: passes are applied automatically).
    Build(Seat),
    /// The seat has built and now moves or keeps the cardinal.
    Cardinal(Seat),
    /// Nobody can build any more (CA-21).
    Over,
}

/// A game of Cardinal: the whole state, all of it public.
///
/// With the `serde` feature a game (and an [`crate::Info`]) reads and writes
/// as JSON, so a computer player can be handed one over the network.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Game {
    pub(crate) table: Table,
    pub(crate) first_seat: Seat,
    pub(crate) town: Town,
    /// `None` until the first player places it (CA-10).
    pub(crate) cardinal: Option<Cell>,
    pub(crate) markers: Markers,
    pub(crate) stock: Stock,
    /// Shape and colour of the last building: laws 6 and 7 (CA-17, CA-18).
    pub(crate) last_built: Option<(Shape, Colour)>,
    pub(crate) turn: Turn,
}

impl Game {
    /// A new game for `players` seats, `first_seat` to play (no checks: see [`Engine::new`]).
    fn start(players: u8, first_seat: Seat) -> Self {
        Game {
            table: Table::new(players),
            first_seat,
            town: Town::new(),
            cardinal: None,
            markers: Markers::new(usize::from(players)),
            stock: Stock::full(),
            last_built: None,
            turn: Turn::Build(first_seat),
        }
    }

    /// The score breakdown: final once the game is over, provisional before.
    #[must_use]
    pub fn scoring(&self) -> Scoring {
        score(self.table, &self.markers, &self.town, self.turn != Turn::Over)
    }

    /// Checks a build against the state (CA-1, CA-5/6/7, CA-11 … CA-18).
    ///
    /// # Errors
    /// A refusal citing the first rule the build breaks.
    fn decide_build(
        &self,
        seat: Seat,
        shape: Shape,
        colour: Colour,
        at: Cell,
        orientation: Option<Orientation>,
        bonus_colour: Option<Colour>,
    ) -> Result<Footprint, MoveError> {
        if !colour.exists() {
            return Err(MoveError::rule("CA-1", format!("there is no colour {}: colours are 0 to 3", colour.0)));
        }
        if !self.table.may_build(seat, colour) {
            return Err(MoveError::rule(self.table.ownership_rule(), format!("{seat} does not play {colour}")));
        }
        let footprint = match (shape, orientation) {
            (Shape::Square, None) => {
                return Err(MoveError::rule("CA-1", "a square needs an orientation"));
            }
            (Shape::Square, Some(o)) => {
                Footprint::square(at, o).ok_or_else(|| MoveError::rule("CA-12", "the square would reach past the edge of the grid"))?
            }
            (_, Some(_)) => {
                return Err(MoveError::rule("CA-1", format!("a {} has no orientation", shape.name())));
            }
            (_, None) => Footprint::single(at),
        };
        let first = self.town.buildings().is_empty();
        match bonus_colour {
            None if first => {
                return Err(MoveError::rule("CA-11", "the first building takes a bonus marker: choose its colour"));
            }
            Some(_) if !first => {
                return Err(MoveError::rule("CA-11", "only the game's first building takes a bonus marker"));
            }
            Some(c) if !self.table.counts(c) => {
                return Err(MoveError::rule("CA-11", format!("the bonus marker cannot be of {c}: its markers do not count")));
            }
            _ => {}
        }
        if self.stock.left(colour, shape) == 0 {
            return Err(MoveError::rule("CA-1", format!("{colour} has no {} left", shape.name())));
        }
        if let Some((last_shape, last_colour)) = self.last_built {
            if shape == last_shape {
                return Err(MoveError::rule("CA-17", format!("law 6: the last building was a {} too", shape.name())));
            }
            if colour == last_colour {
                return Err(MoveError::rule("CA-18", format!("law 7: the last building was of {colour} too")));
            }
        }
        check_free(&self.town, &footprint, self.cardinal)?;
        check_neighbours(shape, colour, &self.town.contacts(&footprint))?;
        Ok(footprint)
    }

    /// Applies an accepted build: the building, its markers (CA-9) and the bonus (CA-11).
    fn build(&mut self, seat: Seat, shape: Shape, colour: Colour, footprint: &Footprint, bonus_colour: Option<Colour>) -> Effect {
        let contacts = self.town.contacts(footprint);
        let markers_taken = self.markers.take_for_contacts(self.table, seat, &contacts);
        if let Some(bonus) = bonus_colour {
            self.markers.take_bonus(seat, bonus);
        }
        self.town.add(seat, shape, colour, footprint);
        self.stock.take(colour, shape);
        self.last_built = Some((shape, colour));
        self.turn = Turn::Cardinal(seat);
        Effect::Built { seat, shape, colour, cells: footprint.cells().to_vec(), markers_taken, bonus_colour }
    }

    /// Checks a cardinal move (CA-10).
    ///
    /// # Errors
    /// A CA-10 refusal.
    fn decide_cardinal(&self, to: Cell) -> Result<(), MoveError> {
        if self.cardinal == Some(to) {
            return Err(MoveError::rule("CA-10", "the cardinal already stands there: keep it instead"));
        }
        if !self.town.is_zone(to) {
            return Err(MoveError::rule("CA-10", format!("({}, {}) is not a free building zone", to.x, to.y)));
        }
        Ok(())
    }

    /// Ends `seat`'s turn: the next seat clockwise that can build plays;
    /// those that cannot are passed (CA-20); if none can, the game ends (CA-21).
    ///
    /// Passes change nothing and laws 6/7 look at the last building, so once
    /// every seat in turn is blocked nobody will ever build again. Such final
    /// non-turns are not reported as passes: the `game_ended` effect says it.
    fn end_turn(&mut self, seat: Seat, effects: &mut Vec<Effect>) {
        let players = self.table.players();
        let mut passes = Vec::new();
        let mut next = seat;
        for _ in 0..players {
            next = next.next(players);
            if self.can_build(next) {
                effects.append(&mut passes);
                self.turn = Turn::Build(next);
                return;
            }
            passes.push(Effect::ForcedPass { seat: next });
        }
        self.turn = Turn::Over;
        effects.push(Effect::GameEnded { scoring: self.scoring() });
    }
}

impl Engine for Game {
    type Options = Options;
    type Move = Move;
    type View = View;
    type Effect = Effect;

    const KIND: &'static str = "cardinal";
    const RULESET: &'static str = "cardinal/1";
    const MIN_PLAYERS: usize = 2;
    const MAX_PLAYERS: usize = 4;

    fn new(setup: &Setup<Options>) -> Result<(Self, Vec<Effect>), SetupError> {
        let players = setup.players;
        if !(Self::MIN_PLAYERS..=Self::MAX_PLAYERS).contains(&players) {
            return Err(SetupError::PlayerCount { min: Self::MIN_PLAYERS, max: Self::MAX_PLAYERS, got: players });
        }
        let first_seat = match setup.options.first_seat {
            Some(seat) if seat.index() < players => seat,
            Some(seat) => {
                return Err(SetupError::InvalidOption { field: "first_seat", reason: format!("{seat} is not at a table of {players}") });
            }
            // The first draw of the seed's stream, so anyone holding the published seed can check it.
            None => Seat(DeckRng::new(&setup.seed).below(players as u32) as u8),
        };
        let game = Game::start(players as u8, first_seat);
        Ok((game, vec![Effect::GameStarted { first_seat }]))
    }

    fn status(&self) -> Status {
        match self.turn {
            Turn::Build(seat) | Turn::Cardinal(seat) => Status::InProgress { to_move: vec![seat] },
            Turn::Over => Status::Finished { result: self.scoring().outcome() },
        }
    }

    fn legal_moves(&self, seat: Seat) -> Vec<Move> {
        match self.turn {
            Turn::Build(s) if s == seat => self.build_moves(seat),
            Turn::Cardinal(s) if s == seat => self.cardinal_moves(),
            _ => Vec::new(),
        }
    }

    fn apply(&mut self, seat: Seat, mv: &Move) -> Result<Vec<Effect>, MoveError> {
        if seat.index() >= self.table.players() {
            return Err(MoveError::UnknownSeat { seat });
        }
        let actor = match self.turn {
            Turn::Over => return Err(MoveError::GameOver),
            Turn::Build(s) | Turn::Cardinal(s) => s,
        };
        if seat != actor {
            return Err(MoveError::NotYourTurn { seat, to_move: vec![actor] });
        }
        match (self.turn, mv) {
            (Turn::Build(_), &Move::Build { shape, colour, x, y, orientation, bonus_colour }) => {
                let footprint = self.decide_build(seat, shape, colour, Cell::new(x, y), orientation, bonus_colour)?;
                Ok(vec![self.build(seat, shape, colour, &footprint, bonus_colour)])
            }
            (Turn::Build(_), Move::MoveCardinal { .. } | Move::KeepCardinal) => {
                Err(MoveError::rule("CA-10", "build first: only a seat that built this turn may move the cardinal"))
            }
            (Turn::Cardinal(_), Move::Build { .. }) => Err(MoveError::rule("CA-8", "one building per turn: now move or keep the cardinal")),
            (Turn::Cardinal(_), &Move::MoveCardinal { x, y }) => {
                let to = Cell::new(x, y);
                self.decide_cardinal(to)?;
                self.cardinal = Some(to);
                let mut effects = vec![Effect::CardinalMoved { seat, x, y }];
                self.end_turn(seat, &mut effects);
                Ok(effects)
            }
            (Turn::Cardinal(_), Move::KeepCardinal) => {
                if self.cardinal.is_none() {
                    return Err(MoveError::rule("CA-10", "on the first turn the cardinal must be placed"));
                }
                let mut effects = vec![Effect::CardinalKept { seat }];
                self.end_turn(seat, &mut effects);
                Ok(effects)
            }
            (Turn::Over, _) => Err(MoveError::GameOver),
        }
    }

    fn view(&self, _viewer: Viewer) -> View {
        View::of(self)
    }

    fn redact(&self, effect: &Effect, _viewer: Viewer) -> Effect {
        // Cardinal has no hidden information.
        effect.clone()
    }

    fn narrate(&self, effect: &Effect, seats: &[String]) -> String {
        crate::narrate::narrate(effect, seats)
    }
}

#[cfg(test)]
mod tests;
