//! The service's requests and answers: the JSON envelope shared by every
//! game kind (docs/api.md, "Common JSON shapes"). Game-specific parts
//! (options, moves, views, effects) are JSON values whose schemas are the
//! engines' own, named in the OpenAPI document.

use ludo_engine::Seat;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use ludo_record::bot::{BotMark, BotRequest, BotSeat};
use ludo_record::kinds::{AnyEffect, AnyMove, AnyView};
use ludo_record::status::Status;

/// A game kind this server hosts.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct KindInfo {
    /// Stable id to pass as `kind` when creating a game.
    #[cfg_attr(feature = "schema", schema(example = "cardinal"))]
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Version of the rules implementation games of this kind are recorded under.
    pub ruleset: String,
    /// Fewest players.
    pub min_players: usize,
    /// Most players.
    pub max_players: usize,
    /// The options a new game takes, defaults filled in.
    #[cfg_attr(feature = "schema", schema(value_type = ludo_record::schema::GameOptions))]
    pub default_options: Value,
    /// JSON Schema of the options (references resolved).
    pub options_schema: Value,
}

/// Request to create a game.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// Game kind (see `GET /v1/kinds`).
    #[cfg_attr(feature = "schema", schema(example = "cardinal"))]
    pub kind: String,
    /// The seats in seat order (seat 0 first): each a player's name,
    /// `{"name": …, "bot": {"level": …}}` for a seat the server's bot plays,
    /// or `null` for a seat left open for someone to join. A game with open
    /// seats waits until every seat is taken.
    #[cfg_attr(feature = "schema", schema(example = json!(["Ann", {"name": "Robot", "bot": {"level": "strong"}}]), value_type = Vec<Option<crate::schema::PlayerSchema>>))]
    pub players: Vec<Option<Player>>,
    /// Game options; omitted or null means the kind's defaults.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(value_type = Option<ludo_record::schema::GameOptions>))]
    pub options: Option<Value>,
    /// Whether anyone may join the open seats from the lobby listing
    /// (`GET /v1/games?open=true`), not only the holders of their
    /// invitations. Needs an open seat.
    #[serde(default)]
    pub public: bool,
    /// Time controls: a limit per move and/or a bank per seat (with an
    /// increment), and what a timeout does; omitted: no clock.
    #[serde(default)]
    pub clock: Option<ludo_record::clock::ClockRequest>,
    /// An `http(s)` URL the server `POST`s to when it becomes a seat's turn
    /// and when the game ends, signed with `webhook_secret` (see the
    /// answer). Public addresses only, unless the server allows more.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(max_length = 2048, format = "uri"))] // webhook::MAX_URL_BYTES
    pub webhook: Option<String>,
}

impl CreateGame {
    /// A game of `kind` whose seats are all taken by `players` (names, or
    /// bot seats), on the kind's default options, with no clock or webhook.
    pub fn new(kind: impl Into<String>, players: impl IntoIterator<Item = impl Into<Player>>) -> CreateGame {
        CreateGame {
            kind: kind.into(),
            players: players.into_iter().map(|player| Some(player.into())).collect(),
            options: None,
            public: false,
            clock: None,
            webhook: None,
        }
    }

    /// This request, with `options`.
    #[must_use]
    pub fn with_options(mut self, options: Value) -> CreateGame {
        self.options = Some(options);
        self
    }
}

/// A seat of a new game: its player's name and, for a seat the server
/// plays, the bot that plays it. In JSON, a name alone or
/// `{"name": "…", "bot": {"level": "…", "think_ms": …}}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub struct Player {
    /// The name shown for the seat.
    pub name: String,
    /// The server bot that plays it, if one does.
    pub bot: Option<BotRequest>,
}

impl Player {
    /// A seat a person plays.
    #[must_use]
    pub fn named(name: impl Into<String>) -> Player {
        Player { name: name.into(), bot: None }
    }

    /// A seat the server's `bot` plays.
    #[must_use]
    pub fn bot(name: impl Into<String>, bot: BotRequest) -> Player {
        Player { name: name.into(), bot: Some(bot) }
    }
}

impl From<&str> for Player {
    fn from(name: &str) -> Player {
        Player::named(name)
    }
}

impl From<String> for Player {
    fn from(name: String) -> Player {
        Player::named(name)
    }
}

impl Serialize for Player {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match &self.bot {
            None => serializer.serialize_str(&self.name),
            Some(bot) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("name", &self.name)?;
                map.serialize_entry("bot", bot)?;
                map.end()
            }
        }
    }
}

impl TryFrom<Value> for Player {
    type Error = String;

    fn try_from(value: Value) -> Result<Player, String> {
        match value {
            Value::String(name) => Ok(Player::named(name)),
            Value::Object(mut seat) => {
                let name = match seat.remove("name") {
                    Some(Value::String(name)) => name,
                    _ => return Err("a seat is a name, or an object with a `name` (a string) and a `bot`".into()),
                };
                let bot = match seat.remove("bot") {
                    None | Some(Value::Null) => None,
                    Some(bot) => Some(BotRequest::from_json(bot)?),
                };
                if let Some(other) = seat.keys().next() {
                    return Err(format!("a seat has a `name` and a `bot`, not `{other}`"));
                }
                Ok(Player { name, bot })
            }
            _ => Err("a seat is a name, or an object with a `name` and a `bot`".into()),
        }
    }
}

/// A created game, with each seat's secret token.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CreatedGame {
    /// The game's id.
    pub id: String,
    /// Game kind.
    pub kind: String,
    /// Version of the new game (always 0: the `game_created` record).
    pub version: u64,
    /// Each seat a person takes at creation, with its name and secret token
    /// (seats left open are not here: see `invitations`; nor are seats a
    /// server bot plays, which no token opens). Tokens are shown only here,
    /// once: the server keeps only their hashes.
    pub seats: Vec<SeatToken>,
    /// The game-admin token: cancels the game while seats are open, hands
    /// an open seat (or a bot's) to a server bot, renews a seat's token that
    /// it holds already (those above, not one a person joined with or
    /// renewed). It never opens a seat. Shown only here, once.
    pub admin_token: String,
    /// For a game with open seats, one invitation per seat: whoever holds
    /// it takes its seat while the seat is open (now, or after its player
    /// left). Shown only here, once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invitations: Vec<Invitation>,
    /// Hex SHA-256 of the game's secret seed; the seed is published when the game ends.
    pub seed_commitment: String,
    /// Status after set-up (`waiting` while seats are open).
    pub status: Status,
    /// With a webhook: the key of its calls' signatures, shown only here.
    /// Each call carries `X-Ludo-Signature: sha256=<hex HMAC-SHA256 of the
    /// body, keyed with this text>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

/// A seat and its secret token.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SeatToken {
    /// Seat number.
    pub seat: Seat,
    /// Player name.
    pub name: String,
    /// Bearer token for this seat's moves and private views.
    pub token: String,
}

/// An invitation to take a seat.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Invitation {
    /// The seat it opens.
    pub seat: Seat,
    /// Whether the seat is open now (the others open if their player leaves).
    pub open: bool,
    /// The secret code: `POST /v1/games/{id}/join` with `{"invitation": code}`.
    pub code: String,
    /// The web app's page that joins with it (the code after `#`, so it is
    /// never sent to a server in a URL).
    #[cfg_attr(feature = "schema", schema(example = "/games/01a2…/join#ludo_inv_3f6c…"))]
    pub link: String,
}

/// A seat's public identity.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SeatInfo {
    /// Seat number.
    pub seat: Seat,
    /// Player name; null while the seat is open.
    pub name: Option<String>,
    /// The server bot that plays the seat, when one does (from the start,
    /// since its player handed it over, or since it resigned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot: Option<BotSeat>,
    /// Whether its player resigned (present only then).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resigned: bool,
}

/// Takes an open seat.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct JoinGame {
    /// The name to play under (1 to 40 visible characters).
    #[cfg_attr(feature = "schema", schema(value_type = crate::schema::PlayerName))]
    pub name: String,
    /// The seat's invitation; without one, only a public game can be
    /// joined (its lowest open seat, or `seat`).
    #[serde(default)]
    pub invitation: Option<String>,
    /// Which open seat of a public game to take (default: the lowest).
    #[serde(default)]
    pub seat: Option<Seat>,
}

/// A seat taken: its token, shown only here, once.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct JoinedSeat {
    /// The game's version after the join (its `seat_joined` record).
    pub version: u64,
    /// The seat.
    pub seat: Seat,
    /// The name it was taken under.
    pub name: String,
    /// Bearer token for the seat's moves and private views.
    pub token: String,
    /// How the game stands now (`in_progress` once the last seat is taken).
    pub status: Status,
}

/// A seat's new token (the old one no longer opens it), shown only here, once.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReissuedToken {
    /// The game's version after the reissue (its `seat_token` record).
    pub version: u64,
    /// The seat.
    pub seat: Seat,
    /// The seat's new bearer token.
    pub token: String,
}

/// What a change of the table left: the game's version and how it stands.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TableChanged {
    /// The game's version after the change (its record's number).
    pub version: u64,
    /// How the game stands now.
    pub status: Status,
    /// When the change ended the game (a resignation, a cancel): its
    /// receipt from the server's transparency log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ludo_transparency::Receipt>,
}

/// Hands a seat to a server bot, as the game's admin.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SetSeatBot {
    /// The bot that plays the seat from now on; null: its player again.
    #[serde(default)]
    pub bot: Option<BotRequest>,
    /// For an open seat, the name the bot takes it under (default "Bot N",
    /// N the seat's number).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(value_type = Option<crate::schema::PlayerName>))]
    pub name: Option<String>,
}

/// Hands the caller's seat to a server bot (`bot`), or takes it back
/// (`bot` null or omitted).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SetAutopilot {
    /// The bot that plays the seat from now on; null: its player.
    #[serde(default)]
    pub bot: Option<BotRequest>,
}

/// Who plays a seat now.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Autopilot {
    /// The game's version after the change (unchanged when nothing changed).
    pub version: u64,
    /// The seat.
    pub seat: Seat,
    /// The server bot that plays it; absent: its player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot: Option<BotSeat>,
}

/// One game in a listing.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GameSummary {
    /// The game's id.
    pub id: String,
    /// Game kind.
    pub kind: String,
    /// Seats in order.
    pub seats: Vec<SeatInfo>,
    /// Whether anyone may join its open seats (present only then).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
    /// Number of the last record.
    pub version: u64,
    /// Whose turn, or the result.
    pub status: Status,
    /// When the game was created (RFC 3339).
    pub created_at: String,
    /// When the game ended (RFC 3339): the time of its last record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Present for a game imported from an export rather than played on
    /// this server: where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ludo_transparency::Imported>,
}

/// A page of games, oldest first.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GameList {
    /// The games of this page: at most `limit`, and possibly fewer (even none)
    /// when a filter matched little of the games read for this page.
    pub games: Vec<GameSummary>,
    /// Pass as `after` to get the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_after: Option<String>,
}

/// Filters for listing games.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Only games of this kind.
    pub kind: Option<String>,
    /// Only running (`false`) or finished (`true`) games; a game waiting
    /// for players is running, a cancelled one finished.
    pub finished: Option<bool>,
    /// Only public games with a seat open to anyone (`true`).
    pub open: bool,
    /// Only games created after this game id.
    pub after: Option<String>,
    /// At most this many games.
    pub limit: usize,
}

/// A game as the caller may see it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GameState {
    /// The game's id.
    pub id: String,
    /// Game kind.
    pub kind: String,
    /// Ruleset the game is played under.
    pub ruleset: String,
    /// Number of the record this state follows (for a replay: the version asked for).
    pub version: u64,
    /// The game's latest version.
    pub latest_version: u64,
    /// Whose turn, or the result, at `version`.
    pub status: Status,
    /// Seats in order, at `version`.
    pub seats: Vec<SeatInfo>,
    /// Whether anyone may join its open seats (present only then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
    /// The caller's seat, or null for a spectator.
    pub viewer_seat: Option<Seat>,
    /// When the game was created (RFC 3339).
    pub created_at: String,
    /// The game's time controls, when it has a clock (the seats' clocks are
    /// in `status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<ludo_record::clock::TimeControl>,
    /// The game's options (for Kardinal & König, the board it is played on).
    #[cfg_attr(feature = "schema", schema(value_type = ludo_record::schema::GameOptions))]
    pub options: std::sync::Arc<serde_json::value::RawValue>,
    /// Hex SHA-256 of the seed.
    pub seed_commitment: String,
    /// The hex seed, once the game is finished (check it against `seed_commitment`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// The game-specific state as the caller may see it.
    #[cfg_attr(feature = "schema", schema(value_type = ludo_record::schema::GameView))]
    pub view: AnyView,
    /// Once the game is over (in its latest state, not a replay): its
    /// receipt from the server's transparency log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ludo_transparency::Receipt>,
    /// Present for a game imported from an export rather than played on
    /// this server: where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<ludo_transparency::Imported>,
}

/// The caller's legal moves.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LegalMoves {
    /// Game kind (the shape of each move).
    pub kind: String,
    /// Version the list is valid for.
    pub version: u64,
    /// The caller's seat.
    pub seat: Seat,
    /// Each move exactly as `POST /v1/games/{id}/moves` accepts it as `move`.
    #[cfg_attr(feature = "schema", schema(value_type = Vec<ludo_record::schema::GameMove>))]
    pub moves: Vec<AnyMove>,
}

/// A move submission.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SubmitMove {
    /// The move, in the game's JSON shape (see the legal moves).
    #[serde(rename = "move")]
    #[cfg_attr(feature = "schema", schema(value_type = ludo_record::schema::GameMove))]
    pub mv: Value,
    /// Refuse the move unless the game is at this version.
    #[serde(default)]
    pub expected_version: Option<u64>,
    /// Idempotency key (1–128 printable ASCII characters): an exact retry
    /// returns the first answer and appends nothing.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$"))]
    pub request_id: Option<String>,
}

/// A move as the service receives it: JSON from the REST edge, or already
/// typed (gRPC converts its messages straight to the engines' types).
#[derive(Clone, Debug, PartialEq)]
pub enum MoveInput {
    /// The move in its game's JSON shape, parsed against the game.
    Json(Value),
    /// The move, typed.
    Typed(AnyMove),
}

/// A move submission from any transport.
#[derive(Clone, Debug, PartialEq)]
pub struct Submission {
    /// The move.
    pub mv: MoveInput,
    /// Refuse the move unless the game is at this version.
    pub expected_version: Option<u64>,
    /// Idempotency key.
    pub request_id: Option<String>,
    /// What the answer carries.
    pub answer: Answer,
}

impl From<SubmitMove> for Submission {
    fn from(request: SubmitMove) -> Self {
        Submission {
            mv: MoveInput::Json(request.mv),
            expected_version: request.expected_version,
            request_id: request.request_id,
            answer: Answer::Full,
        }
    }
}

/// What the answer to an accepted move carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Answer {
    /// Status, effects and the mover's view of the game after the move.
    #[default]
    Full,
    /// Status and effects, without the view (REST `Prefer: return=minimal`,
    /// gRPC `omit_view`): for a client that follows the game another way (a
    /// stream, its own state kept up from the effects), and the server's
    /// own bots. Building and sending the view is most of an answer's cost.
    Minimal,
}

/// An accepted move.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MoveAccepted {
    /// Game kind (the shape of the effects and view).
    pub kind: String,
    /// Version after the move (its record's number).
    pub version: u64,
    /// Whose turn, or the result, after the move.
    pub status: Status,
    /// What the move did, as the mover may see it (automatic steps included).
    #[cfg_attr(feature = "schema", schema(value_type = Vec<ludo_record::schema::GameEffect>))]
    pub effects: Vec<AnyEffect>,
    /// The game-specific state after the move, as the mover may see it.
    /// Always present unless the request asked for a minimal answer
    /// (`Prefer: return=minimal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = ludo_record::schema::GameView))]
    pub view: Option<AnyView>,
    /// On the move that ended the game: its receipt from the server's
    /// transparency log (its head, a signed checkpoint that includes it, the
    /// inclusion proof).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ludo_transparency::Receipt>,
}

/// One record of a game's log, as the caller may see it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Event {
    /// Position in the log (record 0 is `game_created`).
    pub seq: u64,
    /// `game_created`, `move`, `seat_bot`, `seat_joined`, `seat_left`,
    /// `game_cancelled`, `seat_token`, `seat_resigned` or `timeout`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When it was appended (RFC 3339).
    pub at: String,
    /// The seat that moved, or that the record is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// The name a seat was taken under (`seat_joined` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The move as recorded (moves only).
    #[serde(rename = "move", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = Option<ludo_record::schema::GameMove>))]
    pub mv: Option<AnyMove>,
    /// The client's idempotency key (moves only, when given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The server bot that made the move (moves only, when a bot made it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot: Option<BotMark>,
    /// Who plays the seat from now on (`seat_bot` records, a `seat_joined`
    /// by a bot, a `seat_resigned` in a game that goes on); for a `timeout`
    /// that is no forfeit, the bot that makes the seat's move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handover: Option<Handover>,
    /// Whether the seat lost on time (`timeout` records only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forfeit: Option<bool>,
    /// Who asked for the seat's new token (`seat_token` records only): the
    /// game's admin, or the seat itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<ludo_record::table::TokenBy>,
    /// The set-up (record 0 only): kind, ruleset, options, seats, seed commitment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game: Option<ludo_record::record::GameCreated>,
    /// What happened, as the caller may see it.
    #[cfg_attr(feature = "schema", schema(value_type = Vec<ludo_record::schema::GameEffect>))]
    pub effects: Vec<AnyEffect>,
    /// The record's hash in the chain (hex SHA-256).
    pub hash: String,
}

/// A `seat_bot` record: who plays its seat from then on.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Handover {
    /// The server bot that plays the seat; null: its player does again.
    pub bot: Option<BotSeat>,
}

/// What a seat knows of a game, for a computer player in another process
/// (`ludo bot`, or any program using the `ludo-bots` library).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SeatKnowledge {
    /// Game kind: which engine's information set `info` is.
    pub kind: String,
    /// The version it describes.
    pub version: u64,
    /// The seat.
    pub seat: Seat,
    /// Whose turn, or the result.
    pub status: Status,
    /// The seat's information set in its engine's JSON shape
    /// (`ludo_engine::InfoSet::Info`): everything the seat's view and the
    /// log as it may read it prove, and nothing more. The cards it has not
    /// seen are placed canonically, not where they are; the shape follows
    /// the engine's ruleset and is read by the `ludo-bots` library.
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub info: Box<serde_json::value::RawValue>,
}

/// A page of a game's log.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct EventPage {
    /// Game kind (the shape of moves and effects).
    pub kind: String,
    /// The game's latest version.
    pub version: u64,
    /// Records in order.
    pub events: Vec<Event>,
    /// Pass as `from` for the next page; absent when the page reaches the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_from: Option<u64>,
}

/// One record as it is appended, with the caller's new view: an item of a
/// live stream.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GameUpdate {
    /// Game kind (the shape of the record's move, effects and view).
    pub kind: String,
    /// The record, redacted for the caller.
    pub event: Event,
    /// Whose turn, or the result, after this record.
    pub status: Status,
    /// The game-specific state after this record, as the caller may see it.
    #[cfg_attr(feature = "schema", schema(value_type = ludo_record::schema::GameView))]
    pub view: AnyView,
}

/// The last message of a live stream: the game is over and every record
/// was sent (SSE `event: end`). Clients close the stream on it; a
/// reconnect to a finished game that was sent in full answers `204`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct StreamEnd {
    /// The game's last version.
    pub version: u64,
    /// The game's result.
    pub status: Status,
}

/// A ticket that opens one game's live stream as one seat, for a short
/// while: `GET /v1/games/{id}/stream?ticket=…`. For browsers, whose
/// `EventSource` cannot send the seat's token in a header (and a token in a
/// URL would land in logs and history).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct StreamTicket {
    /// The ticket: pass it as the stream's `ticket` query parameter.
    #[cfg_attr(feature = "schema", schema(example = "0.1795431218000.3f6c1a8e9b0d4c7e2a5f8b1c6d9e0a3b"))]
    pub ticket: String,
    /// The seat it follows the game as.
    pub seat: Seat,
    /// When it stops opening streams (RFC 3339). A stream opened before
    /// stays open; a reconnect after needs a new ticket.
    pub expires_at: String,
    /// The same, as milliseconds from now.
    pub expires_in_ms: u64,
}

/// An imported game.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ImportedGame {
    /// The game's id (the same as on the server it was exported from).
    pub id: String,
    /// Game kind.
    pub kind: String,
    /// Number of the last record.
    pub version: u64,
    /// The game's result.
    pub status: Status,
    /// Where it came from: the key that signed the bundle's receipt, or
    /// unknown. The game shows as imported everywhere (listing, views,
    /// exports, its transparency-log leaf).
    pub imported: ludo_transparency::Imported,
}

/// What one record did, in words a viewer can show.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Step {
    /// The record's number.
    pub seq: u64,
    /// When it was appended (RFC 3339).
    pub at: String,
    /// The seat that moved (moves only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// One sentence per thing that happened, as the caller may see it.
    pub lines: Vec<String>,
}

/// A page of a game's steps.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct StepPage {
    /// Game kind.
    pub kind: String,
    /// The game's latest version.
    pub version: u64,
    /// Steps in log order.
    pub steps: Vec<Step>,
    /// Pass as `from` for the next page; absent when the page reaches the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_from: Option<u64>,
}
