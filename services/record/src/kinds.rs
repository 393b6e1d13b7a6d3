//! The games this server hosts: one declaration (`hosted_games!`) from
//! which the service gets typed enums of games, moves, views, effects and
//! options ([`AnyGame`], [`AnyMove`], [`AnyView`], [`AnyEffect`],
//! [`AnyOptions`]) and the table of [`KINDS`].
//!
//! The service works on these types end to end: a move is parsed once at
//! the edge, applied, and its effects and the mover's view are serialized
//! (REST) or converted (gRPC) straight from the engine's own types. JSON
//! trees exist only where JSON is the format: a request's body and the
//! stored record. The games themselves are declared once, in
//! [`crate::games`]; `hosted_games!` below is what this crate expands from
//! that list.

use std::fmt;

use ludo_engine::{Engine, MoveError, Seat, Seed, Setup, SetupError, Status, Viewer};
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
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
    #[cfg(feature = "schema")]
    pub options_schema: fn() -> std::borrow::Cow<'static, str>,
    default_options: fn() -> Value,
    server_defaults: fn() -> serde_json::Map<String, Value>,
    create: fn(usize, &Value, &Seed) -> Result<NewGame, CreateError>,
    /// Bounds on the options of new games (not of recorded ones, which
    /// replay whatever they hold).
    check_new: fn(&Value) -> Result<(), CreateError>,
    /// The sides of a game of so many seats (see `Engine::sides`).
    sides: fn(usize) -> Vec<Vec<Seat>>,
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kind").field("id", &self.id).field("ruleset", &self.ruleset).finish_non_exhaustive()
    }
}

/// An engine the registry hosts: its values wrap into the registry's enums.
pub trait Hosted: JsonEngine {
    /// The game as any game.
    fn any_game(self) -> AnyGame;
    /// An effect as any effect.
    fn any_effect(effect: Self::Effect) -> AnyEffect;
}

/// The registry of the games [`crate::for_each_game!`] lists: everything the
/// service knows of the kinds of game comes from here.
macro_rules! hosted_games {
    ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
        /// A game of any hosted kind.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyGame { $(
            #[doc = $name]
            $variant($krate::Game),
        )* }

        /// A move of any hosted kind, serialized in its game's JSON shape.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyMove { $(
            #[doc = $name]
            $variant(<$krate::Game as Engine>::Move),
        )* }

        /// A view of any hosted kind, serialized in its game's JSON shape.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyView { $(
            #[doc = $name]
            $variant(<$krate::Game as Engine>::View),
        )* }

        /// An effect of any hosted kind, serialized in its game's JSON shape.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyEffect {
            $(
                #[doc = $name]
                $variant(<$krate::Game as Engine>::Effect),
            )*
            /// An effect withheld entirely (`null`): what a game is asked to
            /// show of an effect not its own. It cannot happen through the
            /// service; if it ever did, nothing would be shown unredacted.
            Withheld,
        }

        /// Options of any hosted kind.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyOptions { $(
            #[doc = $name]
            $variant(<$krate::Game as Engine>::Options),
        )* }

        $(
            impl Hosted for $krate::Game {
                fn any_game(self) -> AnyGame {
                    AnyGame::$variant(self)
                }
                fn any_effect(effect: Self::Effect) -> AnyEffect {
                    AnyEffect::$variant(effect)
                }
            }
        )*

        /// Every game kind compiled in: the listed ones first, then the
        /// test-only ones (see [`crate::games`]).
        pub static HOSTED: &[Kind] = &[$(
            Kind {
                id: <$krate::Game as Engine>::KIND,
                name: $name,
                ruleset: <$krate::Game as Engine>::RULESET,
                min_players: <$krate::Game as Engine>::MIN_PLAYERS,
                max_players: <$krate::Game as Engine>::MAX_PLAYERS,
                #[cfg(feature = "schema")]
                options_schema: <<$krate::Game as Engine>::Options as utoipa::ToSchema>::name,
                default_options: default_options::<$krate::Game>,
                server_defaults: $defaults,
                create: create::<$krate::Game>,
                check_new: $bounds,
                sides: <$krate::Game as Engine>::sides,
            },
        )*];

        /// How many of [`HOSTED`] are listed (they come first).
        const LISTED: usize = 0 $(+ $listed as usize)*;

        impl Serialize for AnyMove {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self { $(AnyMove::$variant(inner) => inner.serialize(serializer),)* }
            }
        }

        impl Serialize for AnyView {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self { $(AnyView::$variant(inner) => inner.serialize(serializer),)* }
            }
        }

        impl Serialize for AnyEffect {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(AnyEffect::$variant(inner) => inner.serialize(serializer),)*
                    AnyEffect::Withheld => serializer.serialize_unit(),
                }
            }
        }

        impl Serialize for AnyOptions {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self { $(AnyOptions::$variant(inner) => inner.serialize(serializer),)* }
            }
        }

        impl AnyOptions {
            /// Options of the kind `kind` from their JSON shape (`None`: no
            /// such kind).
            #[must_use]
            pub fn from_json(kind: &str, json: &str) -> Option<Result<AnyOptions, String>> {
                $(
                    if kind == <$krate::Game as Engine>::KIND {
                        return Some(serde_json::from_str(json).map(AnyOptions::$variant).map_err(|e| e.to_string()));
                    }
                )*
                None
            }
        }

        impl AnyGame {
            /// The kind of this game.
            #[must_use]
            pub fn kind(&self) -> &'static Kind {
                match self { $(AnyGame::$variant(_) => kind_of::<$krate::Game>(),)* }
            }

            /// Whose turn it is, or the result.
            #[must_use]
            pub fn status(&self) -> Status {
                match self { $(AnyGame::$variant(game) => game.status(),)* }
            }

            /// The legal moves of `seat`, each exactly as a client submits it.
            #[must_use]
            pub fn legal_moves(&self, seat: Seat) -> Vec<AnyMove> {
                match self { $(AnyGame::$variant(game) => game.legal_moves(seat).into_iter().map(AnyMove::$variant).collect(),)* }
            }

            /// The move `bot` makes for `seat` now (`None` when it is not
            /// the seat's turn). The bot is given the seat's information
            /// set, never this game: it decides from what the seat may know.
            pub fn bot_move(&self, seat: Seat, bot: &mut ludo_bots::Bot) -> Option<AnyMove> {
                use ludo_engine::InfoSet as _;
                match self { $(AnyGame::$variant(game) => bot.choose::<$krate::Game>(seat, &game.info(seat)).map(AnyMove::$variant),)* }
            }

            /// What `seat` knows of this game, as JSON: its information set
            /// (`ludo_engine::InfoSet::info`), from which a bot in another
            /// process decides exactly as the server's own bots do. Equal
            /// for every state the seat cannot tell from this one: the
            /// cards it has not seen are in canonical places, not theirs.
            #[must_use]
            pub fn info_json(&self, seat: Seat) -> Box<serde_json::value::RawValue> {
                use ludo_engine::InfoSet as _;
                match self {
                    $(AnyGame::$variant(game) => serde_json::value::to_raw_value(&game.info(seat)),)*
                }
                .expect("information sets serialize")
            }

            /// Parses a move of this game from its JSON shape (`root` names
            /// where it sits in the request, for the error's field path).
            ///
            /// # Errors
            /// [`ApplyError::Invalid`] naming the bad field.
            pub fn parse_move(&self, root: &str, json: &Value) -> Result<AnyMove, ApplyError> {
                match self { $(AnyGame::$variant(_) => parse_at(root, json).map(AnyMove::$variant),)* }
                    .map_err(|(field, reason)| ApplyError::Invalid { field, reason })
            }

            /// Parses a recorded move of this game from its JSON text, with
            /// no tree in between (a stored record's move: its error need
            /// not name the field, the log is corrupt).
            ///
            /// # Errors
            /// Why the text is not a move of this game.
            pub fn parse_move_json(&self, json: &[u8]) -> Result<AnyMove, String> {
                match self { $(AnyGame::$variant(_) => serde_json::from_slice(json).map(AnyMove::$variant),)* }
                    .map_err(|e: serde_json::Error| e.to_string())
            }

            /// Parses an effect of this game from its JSON text (a stored
            /// record's effect), with no tree in between.
            ///
            /// # Errors
            /// Why the text is not an effect of this game.
            pub fn parse_effect_json(&self, json: &[u8]) -> Result<AnyEffect, String> {
                match self { $(AnyGame::$variant(_) => serde_json::from_slice(json).map(AnyEffect::$variant),)* }
                    .map_err(|e: serde_json::Error| e.to_string())
            }

            /// Applies `mv` by `seat` and returns what happened, unredacted.
            ///
            /// # Errors
            /// [`ApplyError`] when the move is of another game or the engine
            /// refuses it; the state is then unchanged.
            pub fn apply(&mut self, seat: Seat, mv: &AnyMove) -> Result<Vec<AnyEffect>, ApplyError> {
                match (self, mv) {
                    $((AnyGame::$variant(game), AnyMove::$variant(mv)) => {
                        Ok(game.apply(seat, mv).map_err(ApplyError::Refused)?.into_iter().map(AnyEffect::$variant).collect())
                    })*
                    #[allow(unreachable_patterns)]
                    _ => Err(ApplyError::Invalid { field: "move".into(), reason: "not a move of this game".into() }),
                }
            }

            /// The state as `viewer` sees it.
            #[must_use]
            pub fn view(&self, viewer: Viewer) -> AnyView {
                match self { $(AnyGame::$variant(game) => AnyView::$variant(game.view(viewer)),)* }
            }

            /// `effect` as `viewer` may see it now (see [`Engine::redact`]).
            #[must_use]
            pub fn redact(&self, effect: &AnyEffect, viewer: Viewer) -> AnyEffect {
                match (self, effect) {
                    $((AnyGame::$variant(game), AnyEffect::$variant(effect)) => AnyEffect::$variant(game.redact(effect, viewer)),)*
                    #[allow(unreachable_patterns)]
                    _ => AnyEffect::Withheld,
                }
            }

            /// `effect` in words, seats named by `seats` (see [`Engine::narrate`]).
            #[must_use]
            pub fn narrate(&self, effect: &AnyEffect, seats: &[String]) -> String {
                match (self, effect) {
                    $((AnyGame::$variant(game), AnyEffect::$variant(effect)) => game.narrate(effect, seats),)*
                    #[allow(unreachable_patterns)]
                    _ => String::new(),
                }
            }
        }
    };
}

crate::for_each_game!(hosted_games);

/// Every game kind this server lists (`GET /v1/kinds`, `ListKinds`) and
/// documents (the OpenAPI document): [`HOSTED`] but the test-only games.
pub static KINDS: &[Kind] = HOSTED.split_at(LISTED).0;

/// The kind entry of engine `E`.
fn kind_of<E: Engine>() -> &'static Kind {
    kind(E::KIND).expect("every hosted engine has its kind entry")
}

impl AnyMove {
    /// The move as a JSON value (the stored record's form).
    #[must_use]
    pub fn to_json(&self) -> Value {
        to_json(self)
    }
}

impl AnyOptions {
    /// The options as a JSON value (the stored record's form).
    #[must_use]
    pub fn to_json(&self) -> Value {
        to_json(self)
    }
}

impl AnyEffect {
    /// The effect as a JSON value (the stored record's form).
    #[must_use]
    pub fn to_json(&self) -> Value {
        to_json(self)
    }
}

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

/// The kind named `id`, listed or test-only.
#[must_use]
pub fn kind(id: &str) -> Option<&'static Kind> {
    HOSTED.iter().find(|k| k.id == id)
}

/// A freshly set-up game.
#[derive(Debug)]
pub struct NewGame {
    /// The game.
    pub game: AnyGame,
    /// The options as they will be recorded: parsed, defaults filled in.
    pub options: Value,
    /// The set-up's effects, unredacted.
    pub effects: Vec<AnyEffect>,
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
    /// The sides of a game of `players` seats: the seats that win or lose
    /// together (each seat alone, or the game's partnerships).
    #[must_use]
    pub fn sides(&self, players: usize) -> Vec<Vec<Seat>> {
        (self.sides)(players)
    }

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
///
/// The value is parsed plainly first: tracking the path to every field
/// about doubles the cost of the parse and is needed only to name what
/// was wrong, so only a refused value is parsed again with it. An array
/// given where the parsed value holds an object is refused too (see
/// [`crate::shape`]).
pub(crate) fn parse_at<T: DeserializeOwned + Serialize>(root: &str, value: &Value) -> Result<T, (String, String)> {
    if let Ok(parsed) = T::deserialize(value) {
        // serde reads a struct, or a tagged enum, from an array too.
        return match crate::shape::array_for_object(value, &parsed) {
            None => Ok(parsed),
            Some(path) => {
                let field = if path.is_empty() { root.to_string() } else { format!("{root}.{path}") };
                Err((field, "an array where an object is expected".to_string()))
            }
        };
    }
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

fn create<E: Hosted>(players: usize, options: &Value, seed: &Seed) -> Result<NewGame, CreateError> {
    let options: E::Options = parse_at("options", options).map_err(|(field, reason)| CreateError::InvalidOptions { field, reason })?;
    let setup = Setup { players, options, seed: seed.clone() };
    let (game, effects) = E::new(&setup).map_err(CreateError::Setup)?;
    Ok(NewGame { game: game.any_game(), options: to_json(&setup.options), effects: effects.into_iter().map(E::any_effect).collect() })
}
