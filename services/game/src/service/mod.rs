//! The event-sourced game aggregate: decide, append, evolve.
//!
//! One module per concern: `create` (kinds, option defaults, new games),
//! `submit` (the single writer, versions, request ids), `commit` (the one
//! pipeline every record goes through, and its subscribers: `webhooks`,
//! clocks, bots, metrics, the transparency log), `reads` (state,
//! legal moves, log pages, steps, replays), `watch` (live streams),
//! `tickets` (stream tickets), `transfer` (export, import), `listing`,
//! `cache` (live games, loading, eviction), `bots` (bot seats, autopilot),
//! `seats` (joining, leaving, cancelling, reissuing, resigning) and `ids`. This file holds the
//! service, the live game's parts, and the helpers they share.

mod bots;
mod cache;
mod clocks;
mod commit;
mod create;
mod history;
mod ids;
pub(crate) mod listing;
mod reads;
mod seats;
mod submit;
mod tickets;
mod tlog;
mod transfer;
mod watch;
mod webhooks;

pub use bots::{BotSettings, DEFAULT_THINK_MS};
pub use tickets::TICKET_LIFETIME;
pub use tlog::{LogInfo, LogSettings, TransparencyLog, is_reserved};

pub use listing::MAX_LIST_SCAN;
pub use transfer::{MAX_IMPORT_BYTES, MAX_IMPORT_RECORDS};
pub use watch::{Watch, Watched};

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use ludo_engine::{MoveError, Seat, Viewer};
use ludo_storage::{EventStore, StoreError, StreamId};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::api::{Answer, Event, MoveAccepted, SeatInfo};
use crate::error::ServiceError;
use crate::metrics::Metrics;
use crate::quota::{Limiter, Rate};
use crate::secrets::Secrets;
pub use ids::GameId;
use ids::{IdGenerator, game_id, parse_id};
use ludo_record::bot::BotSeat;
use ludo_record::kinds::{self, AnyEffect, AnyGame, ApplyError, CreateError, Kind};
use ludo_record::record::{Record, RecordBody};
use ludo_record::replay::ReplayError;
use ludo_record::status::Status;
use ludo_record::table::{Refusal, Table};

/// Longest player name accepted.
pub const MAX_NAME_CHARS: usize = 40;
/// Longest `request_id` accepted.
pub const MAX_REQUEST_ID: usize = 128;
/// Most bytes of a new game's options, as recorded (the embedded Kardinal &
/// König board takes 8 KB).
pub const MAX_OPTIONS_BYTES: usize = 64 * 1024;
/// Most games or events in one page.
pub const MAX_PAGE: usize = 1000;

/// A page size as asked for: 1 to [`MAX_PAGE`]. One out of range is
/// refused, not clamped: the API's documents say 1 to 1000, and a client
/// asking for 5000 should learn it gets at most 1000.
fn page_limit(limit: usize) -> Result<usize, ServiceError> {
    if (1..=MAX_PAGE).contains(&limit) {
        Ok(limit)
    } else {
        Err(ServiceError::invalid("limit", format!("a page holds 1 to {MAX_PAGE} items, not {limit}")))
    }
}

/// Where the time of a record comes from (a fixed clock in tests).
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> SystemTime;
}

/// The system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// What never changes about a game once created.
#[derive(Debug)]
struct GameMeta {
    id: String,
    stream: StreamId,
    kind: &'static Kind,
    ruleset: String,
    seed_commitment: String,
    /// The recorded options as JSON text; games on the kind's default
    /// options (a Kardinal & König board is ~10 KB) share one copy.
    options: Arc<RawValue>,
    created_at: String,
    secrets: Secrets,
    /// The game's time controls, if it has a clock.
    clock: Option<ludo_record::clock::TimeControl>,
}

/// The latest acknowledged state of a game, shared with readers (and
/// offered to the `games` projection, see `projection::games::Offered`).
#[derive(Debug)]
pub(crate) struct Current {
    version: u64,
    /// How the game stands: the table's word on the engine's.
    status: Status,
    game: AnyGame,
    /// Who sits at each seat.
    table: Arc<Table>,
}

impl Current {
    fn new(version: u64, game: AnyGame, table: Arc<Table>) -> Current {
        Current { version, status: table.status(game.status()), game, table }
    }

    /// The server bot that plays `seat`, if one does.
    fn bot(&self, seat: Seat) -> Option<BotSeat> {
        self.table.bot(seat)
    }

    /// The game's version: its last record's seq.
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// How the game stands.
    pub(crate) fn status(&self) -> &Status {
        &self.status
    }

    /// The engine's state.
    pub(crate) fn game(&self) -> &AnyGame {
        &self.game
    }

    /// Who sits at each seat.
    pub(crate) fn table(&self) -> &Arc<Table> {
        &self.table
    }
}

/// What only the game's single writer touches.
#[derive(Debug)]
struct Writer {
    last_hash: [u8; 32],
    request_ids: HashMap<String, u64>,
    /// Set (under this lock) when the cache forgets the game: a writer that
    /// gets the lock afterwards must reload the game from its log instead.
    evicted: bool,
}

/// A live game in the cache.
#[derive(Debug)]
struct Slot {
    meta: GameMeta,
    /// One writer per game. A tokio mutex because it is held across the
    /// append's await (until the record is durable); in an `Arc` so a
    /// writer can hold it as an owned guard.
    writer: Arc<tokio::sync::Mutex<Writer>>,
    /// Readers never wait for a pending append: they take the last
    /// acknowledged state. A std lock: never held across an await.
    current: RwLock<Arc<Current>>,
    /// When the game was last used (the service's tick), for eviction.
    last_used: AtomicU64,
    /// The log, typed, once a read needs it (see `history`). A std lock:
    /// never held across an await; the writer extends it before it
    /// publishes `current`, so it never lags what readers see.
    history: RwLock<Option<history::History>>,
    /// On a shared store, the game's length as the store's notices last
    /// told (0: none heard): more than the cached version + 1 means other
    /// servers appended, and a move catches up before it is tried.
    heard: AtomicU64,
    /// Once the game is over: its receipt from the transparency log (an
    /// async cell: one task at a time adds the game's leaf).
    receipt: tokio::sync::OnceCell<ludo_transparency::Receipt>,
}

impl Slot {
    fn current(&self) -> Arc<Current> {
        Arc::clone(&self.current.read().expect("current lock"))
    }

    fn viewer(&self, token: Option<&str>) -> Result<Viewer, ServiceError> {
        self.viewer_at(&self.current().table, token)
    }

    /// Whom `token` opens the game for at `table` (the caller's snapshot,
    /// when it reads more of the same state, such as the seat's generation).
    fn viewer_at(&self, table: &Table, token: Option<&str>) -> Result<Viewer, ServiceError> {
        match token {
            None => Ok(Viewer::Spectator),
            Some(token) => table
                .seat_of(token, &self.meta.secrets.token_hashes)
                .map(Viewer::Seat)
                .ok_or_else(|| ServiceError::Unauthorized { reason: "this token opens no seat of this game".into() }),
        }
    }

    fn seat(&self, token: Option<&str>) -> Result<Seat, ServiceError> {
        self.seat_at(&self.current().table, token)
    }

    /// The seat `token` opens at `table` (see [`Slot::viewer_at`]).
    fn seat_at(&self, table: &Table, token: Option<&str>) -> Result<Seat, ServiceError> {
        match self.viewer_at(table, token)? {
            Viewer::Seat(seat) => Ok(seat),
            _ => Err(ServiceError::Unauthorized { reason: "this needs a seat's token (Authorization: Bearer …)".into() }),
        }
    }

    /// Checks that `token` is the game's admin token.
    fn admin(&self, token: Option<&str>) -> Result<(), ServiceError> {
        match token {
            Some(token) if self.meta.secrets.is_admin(token) => Ok(()),
            _ => Err(ServiceError::Unauthorized {
                reason: "this needs the game's admin token (Authorization: Bearer …), given to its creator".into(),
            }),
        }
    }
}

/// The seats of `table`, as the API shows them.
fn seat_infos(table: &Table) -> Vec<SeatInfo> {
    table
        .seats()
        .iter()
        .enumerate()
        .map(|(i, sitter)| SeatInfo { seat: Seat(i as u8), name: sitter.name.clone(), bot: sitter.bot, resigned: sitter.resigned })
        .collect()
}

/// A table's refusal as the service's error.
fn refusal(refusal: Refusal) -> ServiceError {
    match refusal {
        Refusal::UnknownSeat(seat) => ServiceError::invalid("seat", format!("{seat} is not at this table")),
        Refusal::Started => ServiceError::GameStarted,
        Refusal::Waiting(open) => ServiceError::GameWaiting { open_seats: open.into_iter().map(Seat).collect() },
        Refusal::Cancelled => ServiceError::GameCancelled,
        Refusal::Over => ServiceError::GameFinished,
        Refusal::Taken(seat) => ServiceError::SeatTaken { seat },
        Refusal::Open(seat) => ServiceError::SeatOpen { seat },
        Refusal::Resigned(seat) => ServiceError::SeatResigned { seat },
        Refusal::TimeUp(seat) => ServiceError::TimeUp { seat },
        refused @ (Refusal::NoPerson(_) | Refusal::NotAdmins(_)) => ServiceError::Forbidden { reason: refused.to_string() },
        Refusal::TimeLeft(_) | Refusal::NotThatBot(..) | Refusal::Malformed(_) => {
            ServiceError::Internal(format!("the service made a change the table refuses: {refusal}"))
        }
    }
}

/// Whom a view is for, once the game's state is known: a finished game's
/// whole record is public; while seats are still open, nobody sees a hand:
/// the cards are dealt at creation, and a seat's next player must not get a
/// hand that someone who sat there and left (or the creator, who holds
/// every invitation) has seen.
fn effective(viewer: Viewer, status: &Status) -> Viewer {
    match status {
        Status::Finished { .. } | Status::Cancelled => Viewer::Omniscient,
        Status::Waiting { .. } => Viewer::Spectator,
        Status::InProgress { .. } => viewer,
    }
}

fn seat_of(viewer: Viewer) -> Option<Seat> {
    match viewer {
        Viewer::Seat(seat) => Some(seat),
        _ => None,
    }
}

/// The game service.
pub struct GameService {
    store: Arc<dyn EventStore>,
    clock: Arc<dyn Clock>,
    ids: IdGenerator,
    /// Per kind, options filled in when a request leaves them out or null.
    option_defaults: HashMap<&'static str, serde_json::Map<String, Value>>,
    /// Live games by stream. A std mutex: only held to look up or insert.
    /// Shared with the task hearing a shared store's notices.
    games: Arc<Mutex<HashMap<StreamId, Arc<Slot>>>>,
    /// Starts that task, once (on a shared store's first move).
    hearing: std::sync::Once,
    /// Raised when the server starts shutting down: live streams end then,
    /// so a graceful shutdown does not wait on them forever.
    closing: tokio::sync::watch::Sender<bool>,
    /// Live streams' doorbells: an append wakes only its own game's watchers.
    doorbells: Arc<watch::Doorbells>,
    metrics: Arc<Metrics>,
    /// Per kind, the default options and the one copy games on them share.
    shared_options: HashMap<&'static str, (Value, Arc<RawValue>)>,
    /// Most games kept in memory; the least recently used idle ones are
    /// forgotten beyond it (and reloaded from their log when needed).
    max_live_games: usize,
    /// A logical clock for "recently used".
    ticks: AtomicU64,
    /// Moves per seat, when limited.
    seat_moves: Option<Limiter<(StreamId, Seat)>>,
    /// Most summaries one listing request reads.
    list_scan: usize,
    /// Signs and checks stream tickets.
    tickets: tickets::TicketKey,
    /// Plays the bot seats.
    bots: bots::Bots,
    /// Fires the clocks' deadlines.
    timers: clocks::Timers,
    /// Which addresses games' webhooks may call.
    webhook_policy: crate::webhook::WebhookPolicy,
    /// Sends the webhooks' calls (set by the server; none: no calls).
    webhooks: std::sync::OnceLock<Arc<dyn crate::webhook::WebhookSink>>,
    /// The transparency log of ended games: how it opens, and once open,
    /// the log itself (the `tlog` module's own state).
    tlog: tlog::Keeper,
    /// SHA-256 of the operator's token, which imports need; none: the
    /// server takes no import.
    operator_hash: Option<[u8; 32]>,
    /// The read models folded from the store's feed (the listing reads
    /// `games`); kept up to date by the server ([`GameService::projections`]).
    projections: Arc<crate::projection::Projections>,
    /// What hears each committed record (see `commit`).
    subscribers: Vec<Box<dyn commit::Subscriber>>,
}

/// The moves a seat may submit by default in `ludo serve`: far above what a
/// person or a bot at a table needs (the library's own default is unlimited).
pub const DEFAULT_SEAT_RATE: Rate = Rate::new(20, 60);

/// Default bound of the live-game cache (a few KiB per game).
pub const DEFAULT_MAX_LIVE_GAMES: usize = 100_000;

/// JSON text of a value, for keeping rather than re-walking a tree.
fn raw(value: &Value) -> Arc<RawValue> {
    Arc::from(serde_json::value::to_raw_value(value).expect("JSON values serialize"))
}

impl std::fmt::Debug for GameService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameService").finish_non_exhaustive()
    }
}

fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

fn corrupt(id: &str, err: ReplayError) -> ServiceError {
    ServiceError::CorruptLog { game: id.to_string(), seq: err.seq, reason: err.reason }
}

fn refused(err: ApplyError) -> ServiceError {
    match err {
        ApplyError::Invalid { field, reason } => ServiceError::InvalidInput { field, reason },
        ApplyError::Refused(MoveError::GameOver) => ServiceError::GameFinished,
        ApplyError::Refused(MoveError::NotYourTurn { seat, to_move }) => ServiceError::NotYourTurn { seat, to_move },
        ApplyError::Refused(MoveError::UnknownSeat { seat }) => {
            ServiceError::Internal(format!("token opened {seat}, unknown to the engine"))
        }
        ApplyError::Refused(MoveError::Rule { rule, reason }) => ServiceError::RuleViolation { rule: rule.to_string(), reason },
    }
}

fn check_request_id(id: &str) -> Result<(), ServiceError> {
    let ok = !id.is_empty() && id.len() <= MAX_REQUEST_ID && id.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid("request_id", format!("must be 1 to {MAX_REQUEST_ID} printable ASCII characters without spaces")))
    }
}

fn check_players(kind: &Kind, players: &[Option<String>]) -> Result<(), ServiceError> {
    if players.len() < kind.min_players || players.len() > kind.max_players {
        return Err(ServiceError::invalid(
            "players",
            format!("{} takes {} to {} players, not {}", kind.id, kind.min_players, kind.max_players, players.len()),
        ));
    }
    for (i, name) in players.iter().enumerate() {
        if let Some(name) = name {
            check_name(&format!("players[{i}]"), name)?;
        }
    }
    Ok(())
}

/// Checks a player's name (`field` names it in the error).
fn check_name(field: &str, name: &str) -> Result<(), ServiceError> {
    let chars = name.chars().count();
    if name.trim().is_empty() || chars > MAX_NAME_CHARS {
        return Err(ServiceError::invalid(field, format!("a name is 1 to {MAX_NAME_CHARS} characters, not blank")));
    }
    if let Some(found) = crate::text::invisible_in(name) {
        return Err(ServiceError::invalid(
            field,
            format!("a name holds visible characters only, not {found}: control, format (bidi, zero-width), separator or private-use"),
        ));
    }
    Ok(())
}

/// Checks what a new game's options would make the server store: their size,
/// their strings, and the kind's own bounds.
fn check_new_options(kind: &Kind, options: &Value) -> Result<(), ServiceError> {
    // The kind's own bounds first: they name the field that is too big.
    kind.check_new(options).map_err(|err| match err {
        CreateError::InvalidOptions { field, reason } => ServiceError::InvalidInput { field, reason },
        CreateError::Setup(setup) => ServiceError::invalid("options", setup.to_string()),
    })?;
    if let Some((field, found)) = crate::text::first_invisible(options, "options") {
        return Err(ServiceError::invalid(field, format!("text holds visible characters only, not {found}")));
    }
    let bytes = serde_json::to_vec(options).map_or(usize::MAX, |json| json.len());
    if bytes > MAX_OPTIONS_BYTES {
        return Err(ServiceError::invalid("options", format!("{bytes} bytes of options; at most {MAX_OPTIONS_BYTES} are stored")));
    }
    Ok(())
}

impl GameService {
    /// A service over `store`, stamping records with `clock`.
    pub fn new(store: Arc<dyn EventStore>, clock: Arc<dyn Clock>) -> Self {
        let option_defaults = kinds::KINDS.iter().map(|k| (k.id, k.server_defaults())).collect();
        let (closing, _) = tokio::sync::watch::channel(false);
        let metrics = Arc::new(Metrics::new(Arc::clone(&store)));
        let subscribers = commit::subscribers(Arc::clone(&metrics));
        let projections = Arc::new(crate::projection::Projections::new(Arc::clone(&store)));
        let mut service = GameService {
            store,
            clock,
            ids: IdGenerator::default(),
            option_defaults,
            games: Arc::default(),
            hearing: std::sync::Once::new(),
            closing,
            doorbells: Arc::default(),
            metrics,
            shared_options: HashMap::new(),
            max_live_games: DEFAULT_MAX_LIVE_GAMES,
            ticks: AtomicU64::new(0),
            seat_moves: None,
            list_scan: MAX_LIST_SCAN,
            tickets: tickets::TicketKey::random(),
            bots: bots::Bots::new(BotSettings::default()),
            timers: clocks::Timers::default(),
            webhook_policy: crate::webhook::WebhookPolicy::default(),
            webhooks: std::sync::OnceLock::new(),
            tlog: tlog::Keeper::default(),
            operator_hash: None,
            projections,
            subscribers,
        };
        service.share_default_options();
        service
    }

    /// Keeps at most `max` games in memory (at least 1).
    #[must_use]
    pub fn with_max_live_games(mut self, max: usize) -> Self {
        self.max_live_games = max.max(1);
        self
    }

    /// Takes imports from the holder of `token` (the operator's); without
    /// one (the default) the server takes no import: an import makes the
    /// server keep, list and sign for a game nobody played on it.
    #[must_use]
    pub fn with_operator_token(mut self, token: Option<&str>) -> Self {
        self.operator_hash = token.map(ludo_record::table::hash_token);
        self
    }

    /// Limits the moves each seat may submit (`None`: unlimited).
    #[must_use]
    pub fn with_seat_rate(mut self, rate: Option<Rate>) -> Self {
        self.seat_moves = rate.map(Limiter::new);
        self
    }

    /// Lets games' webhooks call the addresses `policy` allows (default:
    /// public addresses only).
    #[must_use]
    pub fn with_webhook_policy(mut self, policy: crate::webhook::WebhookPolicy) -> Self {
        self.webhook_policy = policy;
        self
    }

    /// Which addresses games' webhooks may call.
    #[must_use]
    pub fn webhook_policy(&self) -> &crate::webhook::WebhookPolicy {
        &self.webhook_policy
    }

    /// Sends webhook calls through `sink` from now on (once; later calls
    /// are ignored). Without a sink, games' webhooks are not called.
    pub fn set_webhook_sink(&self, sink: Arc<dyn crate::webhook::WebhookSink>) {
        let _ = self.webhooks.set(sink);
    }

    /// Reads at most `scan` game summaries per listing request (at least 1;
    /// default [`MAX_LIST_SCAN`]).
    #[must_use]
    pub fn with_list_scan(mut self, scan: usize) -> Self {
        self.list_scan = scan.max(1);
        self
    }

    /// Registers the service's metrics (and its store's counters) in
    /// `registry`: the server's, which encodes them at `/metrics` beside
    /// its own (connections, rate limits, webhook calls …).
    pub fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        self.metrics.register(registry);
        registry.register_collector(Box::new(watch::WatchedGames(Arc::clone(&self.doorbells))));
    }

    /// The service's metrics alone, in the OpenMetrics text format (for
    /// tools and tests; a server encodes them beside its own).
    #[must_use]
    pub fn metrics_text(&self) -> String {
        let mut registry = prometheus_client::registry::Registry::with_prefix("ludo");
        self.register_metrics(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("writing to a String cannot fail");
        text
    }

    /// Whether the service can take moves now: not while it shuts down, nor
    /// while its store is failing (a full or failing disk; it recovers by
    /// itself when it can). Readiness probes report it.
    ///
    /// # Errors
    /// Why not, for a person.
    pub fn ready(&self) -> Result<(), String> {
        if *self.closing.borrow() {
            return Err("the server is shutting down".into());
        }
        self.store.health().map_err(|err| err.to_string())
    }

    /// Whether the store is closed for good (after [`Self::shutdown`]).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        matches!(self.store.health(), Err(StoreError::Closed))
    }

    /// The store the service commits to (the projections fold its feed).
    #[must_use]
    pub fn store(&self) -> Arc<dyn EventStore> {
        Arc::clone(&self.store)
    }

    /// The projections the service reads (a server keeps them up to date
    /// with [`Projections::spawn`](crate::projection::Projections::spawn)).
    #[must_use]
    pub fn projections(&self) -> &Arc<crate::projection::Projections> {
        &self.projections
    }

    /// Turns true when the service begins to shut down.
    #[must_use]
    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Ends every live stream: the first step of a graceful shutdown, taken
    /// before waiting for open connections to finish.
    pub fn begin_shutdown(&self) {
        self.closing.send_replace(true);
    }

    /// Flushes and closes the store (graceful shutdown).
    ///
    /// # Errors
    /// When the final flush fails.
    pub async fn shutdown(&self) -> Result<(), ServiceError> {
        let store = Arc::clone(&self.store);
        blocking(move || store.close()).await??;
        Ok(())
    }
}

fn parse_records(id: &str, stored: Vec<ludo_storage::StoredRecord>) -> Result<Vec<Record>, ServiceError> {
    stored
        .into_iter()
        .map(|s| Record::from_bytes(&s.bytes).map_err(|reason| ServiceError::CorruptLog { game: id.to_string(), seq: s.seq, reason }))
        .collect()
}

/// The answer to an accepted move, as its mover sees it: with the view
/// unless `shape` is [`Answer::Minimal`].
fn answer(kind: &Kind, version: u64, status: &Status, game: &AnyGame, seat: Seat, effects: &[AnyEffect], shape: Answer) -> MoveAccepted {
    let seen_as = effective(Viewer::Seat(seat), status);
    MoveAccepted {
        kind: kind.id.into(),
        version,
        status: status.clone(),
        effects: effects.iter().map(|e| game.redact(e, seen_as)).collect(),
        view: match shape {
            Answer::Full => Some(game.view(seen_as)),
            Answer::Minimal => None,
        },
        receipt: None,
    }
}

/// A record as an event of `game`'s log (its move typed again), with the
/// effects the caller may see.
fn event(game: &AnyGame, id: &str, record: Record, effects: Vec<AnyEffect>) -> Result<Event, ServiceError> {
    let mut event = Event {
        seq: record.seq,
        kind: record.body.type_name().into(),
        at: record.at,
        seat: record.body.seat(),
        name: None,
        mv: None,
        request_id: None,
        bot: None,
        handover: None,
        forfeit: None,
        by: None,
        game: None,
        effects,
        hash: record.hash,
    };
    match record.body {
        RecordBody::GameCreated(created) => event.game = Some(created),
        RecordBody::Move(stored) => {
            event.mv = Some(game.parse_move_json(stored.move_json().as_bytes()).map_err(|err| ServiceError::CorruptLog {
                game: id.to_string(),
                seq: event.seq,
                reason: format!("the recorded move does not parse: {err}"),
            })?);
            event.request_id = stored.request_id;
            event.bot = stored.bot;
        }
        RecordBody::SeatBot(handed) => event.handover = Some(crate::api::Handover { bot: handed.bot }),
        RecordBody::SeatJoined(joined) => {
            event.name = Some(joined.name);
            event.handover = joined.bot.map(|bot| crate::api::Handover { bot: Some(bot) });
        }
        RecordBody::SeatResigned { bot, .. } => event.handover = bot.map(|bot| crate::api::Handover { bot: Some(bot) }),
        RecordBody::Timeout { forfeit, bot, .. } => {
            event.forfeit = Some(forfeit);
            event.handover = bot.map(|bot| crate::api::Handover { bot: Some(bot) });
        }
        // A record from before the log said who asked was the admin's.
        RecordBody::SeatToken { by, .. } => event.by = Some(by.unwrap_or(ludo_record::table::TokenBy::Admin)),
        RecordBody::SeatLeft { .. } | RecordBody::GameCancelled => {}
    }
    Ok(event)
}

/// Runs work that takes a while (a whole replay, a store's final flush)
/// off the async workers. Store reads need not: the store does that itself.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ServiceError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ServiceError::Internal(format!("blocking task failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_options_are_bounded_in_size_whatever_their_kind_allows() {
        let cardinal = kinds::kind("cardinal").unwrap();
        assert_eq!(check_new_options(cardinal, &serde_json::json!({"first_seat": 1})), Ok(()));
        // No kind's options can grow this big today; the bound holds for any kind added later.
        let huge = serde_json::json!({"first_seat": 1, "padding": vec![1; MAX_OPTIONS_BYTES]});
        assert!(matches!(check_new_options(cardinal, &huge), Err(ServiceError::InvalidInput { field, .. }) if field == "options"));
    }
}
