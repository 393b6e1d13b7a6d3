//! The game kinds this server hosts, behind one object-safe trait.
//!
//! [`DynGame`] is implemented once, generically, for every engine whose
//! types have JSON shapes; the service only ever sees `Box<dyn DynGame>`
//! and JSON values. Adding a game kind is one entry in [`KINDS`].

use std::fmt;

use ludo_engine::{Engine, MoveError, Seat, Seed, Setup, SetupError, Status, Viewer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A game kind hosted by this server.
pub struct Kind {
    /// Stable id used in the API (`cardinal` …).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Version of the rules implementation.
    pub ruleset: &'static str,
    /// Fewest seats.
    pub min_players: usize,
    /// Most seats.
    pub max_players: usize,
    /// Name of the options schema in the OpenAPI components.
    pub options_schema: fn() -> std::borrow::Cow<'static, str>,
    default_options: fn() -> Value,
    server_defaults: fn() -> serde_json::Map<String, Value>,
    create: fn(usize, &Value, &Seed) -> Result<NewGame, CreateError>,
    /// Bounds on the options of new games (not of recorded ones, which
    /// replay whatever they hold).
    check_new: fn(&Value) -> Result<(), CreateError>,
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kind").field("id", &self.id).field("ruleset", &self.ruleset).finish_non_exhaustive()
    }
}

/// Every game kind of this server.
pub static KINDS: &[Kind] = &[
    Kind {
        id: ludo_cardinal::Game::KIND,
        name: "Cardinal",
        ruleset: ludo_cardinal::Game::RULESET,
        min_players: ludo_cardinal::Game::MIN_PLAYERS,
        max_players: ludo_cardinal::Game::MAX_PLAYERS,
        options_schema: <ludo_cardinal::Options as utoipa::ToSchema>::name,
        default_options: default_options::<ludo_cardinal::Game>,
        server_defaults: serde_json::Map::new,
        create: create::<ludo_cardinal::Game>,
        check_new: no_bounds,
    },
    Kind {
        id: ludo_kardinal::Game::KIND,
        name: "Kardinal & König",
        ruleset: ludo_kardinal::Game::RULESET,
        min_players: ludo_kardinal::Game::MIN_PLAYERS,
        max_players: ludo_kardinal::Game::MAX_PLAYERS,
        options_schema: <ludo_kardinal::Options as utoipa::ToSchema>::name,
        default_options: default_options::<ludo_kardinal::Game>,
        server_defaults: kardinal_defaults,
        create: create::<ludo_kardinal::Game>,
        check_new: kardinal_bounds,
    },
    Kind {
        id: ludo_battle13::Game::KIND,
        name: "Battle 13",
        ruleset: ludo_battle13::Game::RULESET,
        min_players: ludo_battle13::Game::MIN_PLAYERS,
        max_players: ludo_battle13::Game::MAX_PLAYERS,
        options_schema: <ludo_battle13::Options as utoipa::ToSchema>::name,
        default_options: default_options::<ludo_battle13::Game>,
        server_defaults: serde_json::Map::new,
        create: create::<ludo_battle13::Game>,
        check_new: no_bounds,
    },
];

/// Kardinal & König is played on the embedded board unless the server is
/// configured with another; either way the board is written into each
/// game's recorded options, so a replay never depends on the current file.
fn kardinal_defaults() -> serde_json::Map<String, Value> {
    let mut defaults = serde_json::Map::new();
    defaults.insert("board".into(), to_json(&ludo_kardinal::Board::embedded()));
    defaults
}

/// Options with nothing a client could make large.
fn no_bounds(_: &Value) -> Result<(), CreateError> {
    Ok(())
}

/// A new Kardinal & König game's board stays within the board format's bounds.
fn kardinal_bounds(options: &Value) -> Result<(), CreateError> {
    let Some(board) = options.get("board") else { return Ok(()) };
    let board: ludo_kardinal::Board =
        parse_at("options.board", board).map_err(|(field, reason)| CreateError::InvalidOptions { field, reason })?;
    board.check_size().map_err(|err| {
        let field = match &err {
            ludo_kardinal::BoardError::TextTooLong { field, .. } => format!("options.board.{field}"),
            ludo_kardinal::BoardError::TooManyRoads(_) => "options.board.roads".into(),
            ludo_kardinal::BoardError::TooManyAlliances(_) => "options.board.alliances".into(),
            _ => "options.board".into(),
        };
        CreateError::InvalidOptions { field, reason: err.to_string() }
    })
}

/// The kind named `id`.
#[must_use]
pub fn kind(id: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.id == id)
}

/// A freshly set-up game.
pub struct NewGame {
    /// The game.
    pub game: Box<dyn DynGame>,
    /// The options as they will be recorded: parsed, defaults filled in.
    pub options: Value,
    /// The set-up's effects, unredacted.
    pub effects: Vec<Value>,
}

/// Why a game cannot be created or re-created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateError {
    /// The options JSON does not fit the kind's options (path of the bad field).
    InvalidOptions {
        /// Dotted path of the offending field (`options.first_seat`).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The engine refused the set-up.
    Setup(SetupError),
}

impl Kind {
    /// The engine's default options (before the server's own defaults).
    #[must_use]
    pub fn default_options(&self) -> Value {
        (self.default_options)()
    }

    /// Options the server fills in when a request leaves them out or null
    /// (the Kardinal & König board), before the server's configuration.
    #[must_use]
    pub fn server_defaults(&self) -> serde_json::Map<String, Value> {
        (self.server_defaults)()
    }

    /// Checks the options of a new game (as the engine wrote them back)
    /// against the bounds only new games must keep.
    ///
    /// # Errors
    /// [`CreateError::InvalidOptions`] naming the field over its bound.
    pub fn check_new(&self, options: &Value) -> Result<(), CreateError> {
        (self.check_new)(options)
    }

    /// Sets up a game of this kind.
    ///
    /// # Errors
    /// [`CreateError`] when the options or the seat count are refused.
    pub fn create(&self, players: usize, options: &Value, seed: &Seed) -> Result<NewGame, CreateError> {
        (self.create)(players, options, seed)
    }
}

/// Why a move was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// The JSON is not a move of this game (path of the bad field).
    Invalid {
        /// Dotted path of the offending field, from `move`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The engine refused the move.
    Refused(MoveError),
}

/// An accepted move.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The move in canonical JSON (as parsed and written back).
    pub canonical_move: Value,
    /// What happened, unredacted.
    pub effects: Vec<Value>,
}

/// A game of any kind, through JSON.
pub trait DynGame: Send + Sync + fmt::Debug {
    /// Whose turn it is, or the result.
    fn status(&self) -> Status;
    /// The legal moves of `seat`, each exactly as a client submits it.
    fn legal_moves(&self, seat: Seat) -> Vec<Value>;
    /// Applies a move given as JSON.
    ///
    /// # Errors
    /// [`ApplyError`] when the JSON is not a move or the engine refuses it;
    /// the state is then unchanged.
    fn apply(&mut self, seat: Seat, mv: &Value) -> Result<Applied, ApplyError>;
    /// The state as `viewer` sees it.
    fn view(&self, viewer: Viewer) -> Value;
    /// An effect as `viewer` may see it now. Effects that do not parse are
    /// hidden entirely (`null`) rather than shown unredacted.
    fn redact(&self, effect: &Value, viewer: Viewer) -> Value;
    /// An effect in words, seats named by `seats` (see [`Engine::narrate`]).
    fn narrate(&self, effect: &Value, seats: &[String]) -> String;
    /// A copy of the game.
    fn clone_box(&self) -> Box<dyn DynGame>;
}

impl Clone for Box<dyn DynGame> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// An engine whose options, moves, views and effects have JSON shapes.
pub trait JsonEngine:
    Engine<Options: Serialize + DeserializeOwned, Move: Serialize + DeserializeOwned, View: Serialize, Effect: Serialize + DeserializeOwned>
{
}

impl<E> JsonEngine for E where
    E: Engine<
            Options: Serialize + DeserializeOwned,
            Move: Serialize + DeserializeOwned,
            View: Serialize,
            Effect: Serialize + DeserializeOwned,
        >
{
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("engine types serialize to JSON")
}

/// Parses `value` as `T`, naming the failing field by its path under `root`.
pub(crate) fn parse_at<T: DeserializeOwned>(root: &str, value: &Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let reason = err.into_inner().to_string();
        let field = match (path.as_str(), blame::<T>(value)) {
            (".", Some(key)) => format!("{root}.{key}"),
            (".", None) => root.to_string(),
            (path, _) => format!("{root}.{path}"),
        };
        (field, reason)
    })
}

/// Which top-level field of `value` makes it fail to parse as `T`.
///
/// Moves are internally tagged enums, which serde buffers before parsing,
/// so the path to the bad field is lost. Removing the culprit turns the
/// error into "missing field" for it, or into success (an optional or
/// unknown field); removing any other field leaves the error as it was.
fn blame<T: DeserializeOwned>(value: &Value) -> Option<String> {
    let Value::Object(map) = value else { return None };
    map.keys().filter(|key| key.as_str() != "type").find_map(|key| {
        let mut probe = map.clone();
        probe.remove(key);
        match serde_json::from_value::<T>(Value::Object(probe)) {
            Ok(_) => Some(key.clone()),
            Err(err) if err.to_string().contains(&format!("missing field `{key}`")) => Some(key.clone()),
            Err(_) => None,
        }
    })
}

fn default_options<E: JsonEngine>() -> Value {
    to_json(&E::Options::default())
}

fn create<E: JsonEngine>(players: usize, options: &Value, seed: &Seed) -> Result<NewGame, CreateError> {
    let options: E::Options = parse_at("options", options).map_err(|(field, reason)| CreateError::InvalidOptions { field, reason })?;
    let setup = Setup { players, options, seed: seed.clone() };
    let (game, effects) = E::new(&setup).map_err(CreateError::Setup)?;
    Ok(NewGame { game: Box::new(game), options: to_json(&setup.options), effects: effects.iter().map(to_json).collect() })
}

impl<E: JsonEngine> DynGame for E {
    fn status(&self) -> Status {
        Engine::status(self)
    }

    fn legal_moves(&self, seat: Seat) -> Vec<Value> {
        Engine::legal_moves(self, seat).iter().map(to_json).collect()
    }

    fn apply(&mut self, seat: Seat, mv: &Value) -> Result<Applied, ApplyError> {
        let parsed: E::Move = parse_at("move", mv).map_err(|(field, reason)| ApplyError::Invalid { field, reason })?;
        let effects = Engine::apply(self, seat, &parsed).map_err(ApplyError::Refused)?;
        Ok(Applied { canonical_move: to_json(&parsed), effects: effects.iter().map(to_json).collect() })
    }

    fn view(&self, viewer: Viewer) -> Value {
        to_json(&Engine::view(self, viewer))
    }

    fn redact(&self, effect: &Value, viewer: Viewer) -> Value {
        match serde_json::from_value::<E::Effect>(effect.clone()) {
            Ok(parsed) => to_json(&Engine::redact(self, &parsed, viewer)),
            Err(_) => Value::Null,
        }
    }

    fn narrate(&self, effect: &Value, seats: &[String]) -> String {
        match serde_json::from_value::<E::Effect>(effect.clone()) {
            Ok(parsed) => Engine::narrate(self, &parsed, seats),
            Err(_) => String::new(),
        }
    }

    fn clone_box(&self) -> Box<dyn DynGame> {
        Box::new(self.clone())
    }
}
