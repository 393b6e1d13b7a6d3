//! The event-sourced game aggregate: decide, append, evolve.

mod listing;
mod tickets;
mod watch;

pub use tickets::TICKET_LIFETIME;

pub use listing::MAX_LIST_SCAN;
pub use watch::{Watch, Watched};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use ludo_engine::{MoveError, Seat, Status, Viewer};
use ludo_storage::{AppendRequest, EventStore, StoreError, StreamId};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::api::{
    CreateGame, CreatedGame, Event, EventPage, GameState, ImportedGame, KindInfo, LegalMoves, MoveAccepted, SeatInfo, SeatToken, Step,
    StepPage, SubmitMove,
};
use crate::error::ServiceError;
use crate::export;
use crate::kinds::{self, ApplyError, CreateError, DynGame, Kind};
use crate::metrics::{KindLabel, Metrics};
use crate::quota::{Limiter, Rate};
use crate::record::{GENESIS, GameCreated, MoveRecord, Record, RecordBody};
use crate::replay::{ReplayError, Replayed, replay};
use crate::secrets::{self, Secrets};
use listing::StoredSummary;

/// Longest player name accepted.
pub const MAX_NAME_CHARS: usize = 40;
/// Longest `request_id` accepted.
pub const MAX_REQUEST_ID: usize = 128;
/// Most bytes of a new game's options, as recorded (the embedded Kardinal &
/// König board takes 8 KB).
pub const MAX_OPTIONS_BYTES: usize = 64 * 1024;
/// Most games or events in one page.
pub const MAX_PAGE: usize = 1000;

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
    seats: Vec<String>,
    seed_commitment: String,
    /// The recorded options as JSON text; games on the kind's default
    /// options (a Kardinal & König board is ~10 KB) share one copy.
    options: Arc<RawValue>,
    created_at: String,
    secrets: Secrets,
}

/// The latest acknowledged state of a game, shared with readers.
#[derive(Debug)]
struct Current {
    version: u64,
    status: Status,
    game: Box<dyn DynGame>,
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
}

impl Slot {
    fn current(&self) -> Arc<Current> {
        Arc::clone(&self.current.read().expect("current lock"))
    }

    fn viewer(&self, token: Option<&str>) -> Result<Viewer, ServiceError> {
        match token {
            None => Ok(Viewer::Spectator),
            Some(token) => self
                .meta
                .secrets
                .seat_of(token)
                .map(Viewer::Seat)
                .ok_or_else(|| ServiceError::Unauthorized { reason: "this token opens no seat of this game".into() }),
        }
    }

    fn seat(&self, token: Option<&str>) -> Result<Seat, ServiceError> {
        match self.viewer(token)? {
            Viewer::Seat(seat) => Ok(seat),
            _ => Err(ServiceError::Unauthorized { reason: "this needs a seat's token (Authorization: Bearer …)".into() }),
        }
    }

    fn seats(&self) -> Vec<SeatInfo> {
        self.meta.seats.iter().enumerate().map(|(i, name)| SeatInfo { seat: Seat(i as u8), name: name.clone() }).collect()
    }
}

/// Whom a view is for, once the game's state is known: a finished game's
/// whole record is public.
fn effective(viewer: Viewer, status: &Status) -> Viewer {
    if status.is_finished() { Viewer::Omniscient } else { viewer }
}

fn seat_of(viewer: Viewer) -> Option<Seat> {
    match viewer {
        Viewer::Seat(seat) => Some(seat),
        _ => None,
    }
}

/// Game ids: UUIDv7, strictly increasing within this process (RFC 9562
/// §6.2, method 2: the random bits after the millisecond act as a counter
/// when two games are created in the same millisecond), so the store, which
/// lists streams in byte order, lists games oldest first.
#[derive(Debug, Default)]
struct IdGenerator {
    last: Mutex<u128>,
}

impl IdGenerator {
    fn next(&self, now: SystemTime) -> Result<StreamId, ServiceError> {
        let millis = now.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let random = secrets::random_bytes().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
        let mut random10 = [0u8; 10];
        random10.copy_from_slice(&random[..10]);
        let fresh = uuid::Builder::from_unix_timestamp_millis(millis, &random10).into_uuid().as_u128();
        let mut last = self.last.lock().expect("id lock");
        let id = if fresh > *last { fresh } else { bump(*last) };
        *last = id;
        Ok(StreamId(id.to_be_bytes()))
    }
}

/// The next UUIDv7 after `id` with the same millisecond: add one to the 74
/// random bits (12 of `rand_a`, 62 of `rand_b`), keeping version and variant.
fn bump(id: u128) -> u128 {
    const RAND_B: u128 = (1 << 62) - 1;
    const RAND_A: u128 = 0xFFF << 64;
    let counter = (((id & RAND_A) >> 64) << 62 | (id & RAND_B)) + 1;
    let keep = id & !(RAND_A | RAND_B);
    keep | ((counter >> 62) & 0xFFF) << 64 | (counter & RAND_B)
}

/// The game service.
pub struct GameService {
    store: Arc<dyn EventStore>,
    clock: Arc<dyn Clock>,
    ids: IdGenerator,
    /// Per kind, options filled in when a request leaves them out or null.
    option_defaults: HashMap<&'static str, serde_json::Map<String, Value>>,
    /// Live games by stream. A std mutex: only held to look up or insert.
    games: Mutex<HashMap<StreamId, Arc<Slot>>>,
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

/// Parses a game id (a UUID) into its stream.
fn parse_id(id: &str) -> Result<StreamId, ServiceError> {
    uuid::Uuid::try_parse(id)
        .map(|u| StreamId(*u.as_bytes()))
        .map_err(|_| ServiceError::NotFound { what: "game", id: id.chars().take(64).collect() })
}

fn game_id(stream: StreamId) -> String {
    uuid::Uuid::from_bytes(stream.0).hyphenated().to_string()
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

fn check_players(kind: &Kind, players: &[String]) -> Result<(), ServiceError> {
    if players.len() < kind.min_players || players.len() > kind.max_players {
        return Err(ServiceError::invalid(
            "players",
            format!("{} takes {} to {} players, not {}", kind.id, kind.min_players, kind.max_players, players.len()),
        ));
    }
    for (i, name) in players.iter().enumerate() {
        let chars = name.chars().count();
        if name.trim().is_empty() || chars > MAX_NAME_CHARS {
            return Err(ServiceError::invalid(format!("players[{i}]"), format!("a name is 1 to {MAX_NAME_CHARS} characters, not blank")));
        }
        if let Some(found) = crate::text::invisible_in(name) {
            return Err(ServiceError::invalid(
                format!("players[{i}]"),
                format!("a name holds visible characters only, not {found}: control, format (bidi, zero-width), separator or private-use"),
            ));
        }
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
        let mut service = GameService {
            store,
            clock,
            ids: IdGenerator::default(),
            option_defaults,
            games: Mutex::new(HashMap::new()),
            closing,
            doorbells: Arc::default(),
            metrics,
            shared_options: HashMap::new(),
            max_live_games: DEFAULT_MAX_LIVE_GAMES,
            ticks: AtomicU64::new(0),
            seat_moves: None,
            list_scan: MAX_LIST_SCAN,
            tickets: tickets::TicketKey::random(),
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

    /// Limits the moves each seat may submit (`None`: unlimited).
    #[must_use]
    pub fn with_seat_rate(mut self, rate: Option<Rate>) -> Self {
        self.seat_moves = rate.map(Limiter::new);
        self
    }

    /// Reads at most `scan` game summaries per listing request (at least 1;
    /// default [`MAX_LIST_SCAN`]).
    #[must_use]
    pub fn with_list_scan(mut self, scan: usize) -> Self {
        self.list_scan = scan.max(1);
        self
    }

    fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::Relaxed)
    }

    /// Recomputes, per kind, the default options games share.
    fn share_default_options(&mut self) {
        self.shared_options = kinds::KINDS
            .iter()
            .filter_map(|kind| {
                let options = self.fill_defaults(kind, None).ok()?;
                // The engine writes options back with every field, defaults filled in.
                let created = kind.create(kind.min_players, &options, &ludo_engine::Seed([0; 32])).ok()?;
                let shared = raw(&created.options);
                Some((kind.id, (created.options, shared)))
            })
            .collect();
    }

    /// Sets the option `key` that games of `kind` get when a request leaves
    /// it out (e.g. the Kardinal & König `board` from the server's configuration).
    ///
    /// # Errors
    /// `invalid_input` when the kind is not hosted, or when a game of this
    /// kind with that option cannot be set up.
    pub fn with_option_default(mut self, kind: &str, key: &str, value: Value) -> Result<Self, ServiceError> {
        let known = kinds::kind(kind).ok_or_else(|| ServiceError::invalid("kind", format!("unknown game kind `{kind}`")))?;
        let defaults = self.option_defaults.entry(known.id).or_default();
        defaults.insert(key.to_string(), value);
        // Refuse a default no game could be created with, now rather than at the first game.
        let options = Value::Object(defaults.clone());
        let seed = ludo_engine::Seed([0; 32]);
        let created = known.create(known.min_players, &options, &seed).map_err(|err| match err {
            CreateError::InvalidOptions { field, reason } => ServiceError::InvalidInput { field, reason },
            CreateError::Setup(setup) => ServiceError::invalid(format!("options.{key}"), setup.to_string()),
        })?;
        // New games get this default: it keeps their bounds.
        check_new_options(known, &created.options)?;
        self.share_default_options();
        Ok(self)
    }

    /// `options` with the server's defaults filled in where absent or null.
    fn fill_defaults(&self, kind: &Kind, options: Option<Value>) -> Result<Value, ServiceError> {
        let mut options = match options {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(ServiceError::invalid("options", "options are a JSON object")),
        };
        for (key, value) in self.option_defaults.get(kind.id).into_iter().flatten() {
            if options.get(key).is_none_or(Value::is_null) {
                options.insert(key.clone(), value.clone());
            }
        }
        Ok(Value::Object(options))
    }

    /// Adds a metric of the layers around the service (connections, rate
    /// limits …) to those `metrics_text` encodes; `name` gets the `ludo_` prefix.
    pub fn register_metric(&self, name: &str, help: &str, metric: impl prometheus_client::registry::Metric) {
        self.metrics.register(name, help, metric);
    }

    /// Adds a collector read at each scrape (the binary's allocator figures …).
    pub fn register_collector(&self, collector: Box<dyn prometheus_client::collector::Collector>) {
        self.metrics.register_collector(collector);
    }

    /// The service's metrics in the OpenMetrics text format.
    #[must_use]
    pub fn metrics_text(&self) -> String {
        self.metrics.watched_games.set(self.doorbells.len() as i64);
        self.metrics.encode()
    }

    /// A game's unchanging facts, its options shared with every game on the
    /// kind's default options.
    fn meta(
        &self,
        id: String,
        stream: StreamId,
        kind: &'static Kind,
        created: &GameCreated,
        created_at: String,
        secrets: Secrets,
    ) -> GameMeta {
        let options = match self.shared_options.get(kind.id) {
            Some((value, shared)) if *value == created.options => Arc::clone(shared),
            _ => raw(&created.options),
        };
        GameMeta {
            id,
            stream,
            kind,
            ruleset: created.ruleset.clone(),
            seats: created.seats.clone(),
            seed_commitment: created.seed_commitment.clone(),
            options,
            created_at,
            secrets,
        }
    }

    /// Caches a live game and keeps the gauge in step.
    fn cache(&self, stream: StreamId, slot: Arc<Slot>) -> Arc<Slot> {
        let mut games = self.games.lock().expect("games lock");
        let slot = Arc::clone(games.entry(stream).or_insert(slot));
        if games.len() > self.max_live_games {
            let evicted = evict_idle(&mut games, self.max_live_games, stream);
            self.metrics.evictions.inc_by(evicted);
        }
        self.metrics.live_games.set(games.len() as i64);
        slot
    }

    /// Forgets a cached game (it reloads from its log on the next request).
    fn evict(&self, stream: StreamId) {
        let mut games = self.games.lock().expect("games lock");
        games.remove(&stream);
        self.metrics.live_games.set(games.len() as i64);
    }

    /// The game kinds this server hosts. `options_schema` is filled by the
    /// adapter that owns the OpenAPI document.
    #[must_use]
    pub fn kinds(&self) -> Vec<KindInfo> {
        kinds::KINDS
            .iter()
            .map(|k| KindInfo {
                kind: k.id.into(),
                name: k.name.into(),
                ruleset: k.ruleset.into(),
                min_players: k.min_players,
                max_players: k.max_players,
                default_options: self.default_options_of(k),
                options_schema: Value::Null,
            })
            .collect()
    }

    /// The options a game of `kind` gets when the request names none.
    fn default_options_of(&self, kind: &Kind) -> Value {
        let mut options = kind.default_options();
        if let (Value::Object(map), Some(defaults)) = (&mut options, self.option_defaults.get(kind.id)) {
            map.extend(defaults.clone());
        }
        options
    }

    /// Creates a game.
    ///
    /// # Errors
    /// `invalid_input` for an unknown kind, bad players or options;
    /// `storage_unavailable` when the log cannot be written.
    pub async fn create(&self, request: CreateGame) -> Result<CreatedGame, ServiceError> {
        let kind = kinds::kind(&request.kind).ok_or_else(|| {
            let known: Vec<&str> = kinds::KINDS.iter().map(|k| k.id).collect();
            ServiceError::invalid("kind", format!("unknown game kind `{}`; this server hosts: {}", request.kind, known.join(", ")))
        })?;
        check_players(kind, &request.players)?;
        let options = self.fill_defaults(kind, request.options)?;
        let (secrets, tokens) =
            secrets::generate(request.players.len()).map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
        let new = kind.create(request.players.len(), &options, &secrets.seed).map_err(|err| match err {
            CreateError::InvalidOptions { field, reason } => ServiceError::InvalidInput { field, reason },
            CreateError::Setup(setup @ ludo_engine::SetupError::PlayerCount { .. }) => ServiceError::invalid("players", setup.to_string()),
            CreateError::Setup(ludo_engine::SetupError::InvalidOption { field, reason }) => {
                ServiceError::InvalidInput { field: format!("options.{field}"), reason }
            }
        })?;
        check_new_options(kind, &new.options)?;
        let now = self.clock.now();
        let stream = self.ids.next(now)?;
        let id = game_id(stream);
        let created = GameCreated {
            game_id: id.clone(),
            kind: kind.id.into(),
            ruleset: kind.ruleset.into(),
            options: new.options,
            seats: request.players.clone(),
            seed_commitment: secrets.seed_commitment(),
        };
        let public: Vec<Value> = new.effects.iter().map(|e| new.game.redact(e, Viewer::Spectator)).collect();
        let at = timestamp(now);
        let record = Record::seal(0, at.clone(), RecordBody::GameCreated(created.clone()), public, &GENESIS);
        let last_hash = record.hash_bytes().map_err(ServiceError::Internal)?;
        let status = new.game.status();
        let meta = self.meta(id.clone(), stream, kind, &created, at.clone(), secrets);
        let summary = StoredSummary::of(&meta, 0, &status, &at);
        self.store
            .append(AppendRequest::create(stream, vec![record.to_bytes()], Some(meta.secrets.to_bytes())).with_summary(summary.to_bytes()))
            .await?;
        let slot = Arc::new(Slot {
            meta,
            writer: Arc::new(tokio::sync::Mutex::new(Writer { last_hash, request_ids: HashMap::new(), evicted: false })),
            current: RwLock::new(Arc::new(Current { version: 0, status: status.clone(), game: new.game })),
            last_used: AtomicU64::new(self.tick()),
        });
        self.cache(stream, slot);
        self.metrics.games_created.get_or_create(&KindLabel { kind: kind.id.into() }).inc();
        tracing::info!(game = %id, kind = kind.id, players = request.players.len(), "game created");
        let seats = tokens
            .into_iter()
            .zip(request.players)
            .enumerate()
            .map(|(i, (token, name))| SeatToken { seat: Seat(i as u8), name, token })
            .collect();
        Ok(CreatedGame { id, kind: kind.id.into(), version: 0, seats, seed_commitment: created.seed_commitment, status })
    }

    /// The game as the holder of `token` (or a spectator) sees it.
    ///
    /// # Errors
    /// `not_found`, `unauthorized` for a token of no seat, storage errors.
    pub async fn get(&self, id: &str, token: Option<&str>) -> Result<GameState, ServiceError> {
        let slot = self.slot(id).await?;
        let viewer = slot.viewer(token)?;
        let current = slot.current();
        Ok(self.state_of(&slot, viewer, current.version, current.version, &current.status, current.game.as_ref()))
    }

    fn state_of(&self, slot: &Slot, viewer: Viewer, version: u64, latest: u64, status: &Status, game: &dyn DynGame) -> GameState {
        let latest_status = if version == latest { status.clone() } else { slot.current().status.clone() };
        let seen_as = effective(viewer, &latest_status);
        GameState {
            id: slot.meta.id.clone(),
            kind: slot.meta.kind.id.into(),
            ruleset: slot.meta.ruleset.clone(),
            version,
            latest_version: latest,
            status: status.clone(),
            seats: slot.seats(),
            viewer_seat: seat_of(viewer),
            created_at: slot.meta.created_at.clone(),
            options: Arc::clone(&slot.meta.options),
            seed_commitment: slot.meta.seed_commitment.clone(),
            seed: latest_status.is_finished().then(|| hex::encode(slot.meta.secrets.seed.0)),
            view: game.view(seen_as),
        }
    }

    /// The legal moves of the token's seat.
    ///
    /// # Errors
    /// `unauthorized` without a valid seat token; `not_found`.
    pub async fn legal_moves(&self, id: &str, token: Option<&str>) -> Result<LegalMoves, ServiceError> {
        let slot = self.slot(id).await?;
        let seat = slot.seat(token)?;
        let current = slot.current();
        Ok(LegalMoves { kind: slot.meta.kind.id.into(), version: current.version, seat, moves: current.game.legal_moves(seat) })
    }

    /// Submits a move for the token's seat.
    ///
    /// # Errors
    /// `unauthorized`, `invalid_input`, `rule_violation`, `not_your_turn`,
    /// `game_finished`, `version_conflict`, `request_id_reused`, storage errors.
    /// Nothing is appended unless the answer is `Ok`.
    pub async fn submit(&self, id: &str, token: Option<&str>, request: SubmitMove) -> Result<MoveAccepted, ServiceError> {
        let started = std::time::Instant::now();
        let answer = self.submit_move(id, token, request).await;
        let outcome = answer.as_ref().map_or_else(ServiceError::code, |_| "accepted");
        self.metrics.observe_move(outcome, started.elapsed());
        answer
    }

    async fn submit_move(&self, id: &str, token: Option<&str>, request: SubmitMove) -> Result<MoveAccepted, ServiceError> {
        if let Some(request_id) = &request.request_id {
            check_request_id(request_id)?;
        }
        // The game the cache holds, locked for writing. If the cache forgot
        // it between the lookup and the lock (a tiny window, but a reader
        // could reload it in between and never see this move), the log is
        // the truth: load it again.
        let (slot, seat, mut writer) = loop {
            let slot = self.slot(id).await?;
            let seat = slot.seat(token)?;
            if let Some(limiter) = &self.seat_moves {
                limiter
                    .check(&(slot.meta.stream, seat))
                    .map_err(|retry_after| ServiceError::RateLimited { what: "moves from this seat", retry_after })?;
            }
            let writer = Arc::clone(&slot.writer).lock_owned().await;
            if !writer.evicted {
                break (slot, seat, writer);
            }
        };
        let current = slot.current();
        if let Some(request_id) = &request.request_id
            && let Some(&seq) = writer.request_ids.get(request_id)
        {
            drop(writer);
            return self.retried(&slot, seq, seat, &request).await;
        }
        if let Some(expected) = request.expected_version
            && expected != current.version
        {
            return Err(ServiceError::VersionConflict { expected, current: current.version });
        }
        let mut game = current.game.clone();
        let applied = game.apply(seat, &request.mv).map_err(refused)?;
        let seq = current.version + 1;
        let public: Vec<Value> = applied.effects.iter().map(|e| game.redact(e, Viewer::Spectator)).collect();
        let body = RecordBody::Move(MoveRecord { seat, mv: applied.canonical_move, request_id: request.request_id.clone() });
        let at = timestamp(self.clock.now());
        let record = Record::seal(seq, at.clone(), body, public, &writer.last_hash);
        let status = game.status();
        let summary = StoredSummary::of(&slot.meta, seq, &status, &at);
        // Watchers hear of the record once reads return it (when this drops).
        let _ring_when_readable = self.doorbells.hold(slot.meta.stream, seq);
        let appended =
            self.store.append(AppendRequest::at(slot.meta.stream, seq, vec![record.to_bytes()]).with_summary(summary.to_bytes())).await;
        if let Err(err) = appended {
            // The store may hold more than this cache knows (a failed flush
            // after a write): forget the game so the next request reloads it.
            writer.evicted = true;
            self.evict(slot.meta.stream);
            return Err(match err {
                StoreError::Conflict { actual_next, .. } => ServiceError::VersionConflict {
                    expected: request.expected_version.unwrap_or(current.version),
                    current: actual_next.saturating_sub(1),
                },
                other => other.into(),
            });
        }
        writer.last_hash = record.hash_bytes().map_err(ServiceError::Internal)?;
        if let Some(request_id) = request.request_id {
            writer.request_ids.insert(request_id, seq);
        }
        let answer = answer(slot.meta.kind, seq, &status, game.as_ref(), seat, &applied.effects);
        *slot.current.write().expect("current lock") = Arc::new(Current { version: seq, status, game });
        drop(writer);
        Ok(answer)
    }

    /// The first answer to a request id, if this is an exact retry.
    async fn retried(&self, slot: &Slot, seq: u64, seat: Seat, request: &SubmitMove) -> Result<MoveAccepted, ServiceError> {
        let replayed = self.replayed(slot, Some(seq), true).await?;
        let records = self.records(slot, seq, Some(seq + 1)).await?;
        let RecordBody::Move(first) = &records[0].body else {
            return Err(ServiceError::Internal("request id names a non-move record".into()));
        };
        // Canonicalise the retry's move on a scratch copy of the state before that move.
        let before = self.replayed(slot, Some(seq - 1), false).await?;
        let same_move = before.state.game.clone().apply(seat, &request.mv).map(|a| a.canonical_move == first.mv).unwrap_or(false);
        if first.seat != seat || !same_move {
            return Err(ServiceError::RequestIdReused { request_id: first.request_id.clone().unwrap_or_default(), version: seq });
        }
        let status = replayed.state.game.status();
        Ok(answer(slot.meta.kind, seq, &status, replayed.state.game.as_ref(), seat, &replayed.effects[seq as usize]))
    }

    /// A page of the log, redacted for the caller.
    ///
    /// # Errors
    /// `not_found`, `unauthorized`, storage and corruption errors.
    pub async fn events(&self, id: &str, token: Option<&str>, from: u64, limit: usize) -> Result<EventPage, ServiceError> {
        let slot = self.slot(id).await?;
        let viewer = slot.viewer(token)?;
        let current = slot.current();
        let limit = limit.clamp(1, MAX_PAGE) as u64;
        if from > current.version {
            return Ok(EventPage { kind: slot.meta.kind.id.into(), version: current.version, events: vec![], next_from: None });
        }
        let to = (from + limit).min(current.version + 1);
        let records = self.records(&slot, from, Some(to)).await?;
        let seen_as = effective(viewer, &current.status);
        // A spectator of a running game sees exactly the stored (public)
        // effects; anyone else may see more, rebuilt by replay.
        let full = if seen_as == Viewer::Spectator { None } else { Some(self.replayed(&slot, Some(to - 1), true).await?.effects) };
        let events = records
            .into_iter()
            .map(|record| {
                let effects = match &full {
                    None => record.effects.clone(),
                    Some(all) => all[record.seq as usize].iter().map(|e| current.game.redact(e, seen_as)).collect(),
                };
                event(record, effects)
            })
            .collect();
        let next_from = (to <= current.version).then_some(to);
        Ok(EventPage { kind: slot.meta.kind.id.into(), version: current.version, events, next_from })
    }

    /// A page of the game's steps: what each record did, in words, as the
    /// caller may see it (built on the same redaction as [`Self::events`]).
    ///
    /// # Errors
    /// `not_found`, `unauthorized`, storage and corruption errors.
    pub async fn steps(&self, id: &str, token: Option<&str>, from: u64, limit: usize) -> Result<StepPage, ServiceError> {
        let page = self.events(id, token, from, limit).await?;
        let slot = self.slot(id).await?;
        let seats = &slot.meta.seats;
        let game = slot.current().game.clone();
        let steps = page
            .events
            .into_iter()
            .map(|event| {
                let mut lines = Vec::with_capacity(event.effects.len() + 1);
                if let Some(created) = &event.game {
                    lines.push(format!(
                        "A game of {} was set up for {}",
                        slot.meta.kind.name,
                        ludo_engine::words::and_list(&created.seats)
                    ));
                }
                lines.extend(event.effects.iter().map(|e| game.narrate(e, seats)).filter(|line| !line.is_empty()));
                Step { seq: event.seq, at: event.at, seat: event.seat, lines }
            })
            .collect();
        Ok(StepPage { kind: page.kind, version: page.version, steps, next_from: page.next_from })
    }

    /// The game at version `at`, as the caller may see it.
    ///
    /// # Errors
    /// `invalid_input` for a version past the end; `not_found`, `unauthorized`.
    pub async fn replay_at(&self, id: &str, token: Option<&str>, at: u64) -> Result<GameState, ServiceError> {
        let slot = self.slot(id).await?;
        let viewer = slot.viewer(token)?;
        let current = slot.current();
        if at > current.version {
            return Err(ServiceError::invalid("at", format!("the game is at version {}", current.version)));
        }
        if at == current.version {
            return Ok(self.state_of(&slot, viewer, at, at, &current.status, current.game.as_ref()));
        }
        let replayed = self.replayed(&slot, Some(at), false).await?;
        let game = replayed.state.game;
        Ok(self.state_of(&slot, viewer, at, current.version, &game.status(), game.as_ref()))
    }

    /// The game's whole record as JSON Lines (see [`crate::export`]); with
    /// the seed once the game is over. A token, if given, must be valid.
    ///
    /// # Errors
    /// `not_found`, `unauthorized`, storage and corruption errors.
    pub async fn export(&self, id: &str, token: Option<&str>) -> Result<Vec<u8>, ServiceError> {
        let slot = self.slot(id).await?;
        slot.viewer(token)?;
        let current = slot.current();
        let store = Arc::clone(&self.store);
        let stream = slot.meta.stream;
        let upto = current.version + 1;
        let stored = blocking(move || store.read(stream, 0, Some(upto))).await??;
        let finished = current.status.is_finished();
        // Once the game is over its hidden cards are public: re-deal them
        // from the seed for the revealed lines.
        let revealed = if finished {
            let records = parse_records(id, stored.clone())?;
            let seed = slot.meta.secrets.seed.clone();
            // A whole replay: off the async workers.
            let lines = blocking(move || replay(&records, &seed, true).map(|replayed| export::revealed(&records, &replayed.effects)));
            Some(lines.await?.map_err(|err| corrupt(id, err))?)
        } else {
            None
        };
        let header = export::ExportHeader {
            format: export::EXPORT_FORMAT.into(),
            game_id: slot.meta.id.clone(),
            kind: slot.meta.kind.id.into(),
            ruleset: slot.meta.ruleset.clone(),
            records: stored.len() as u64,
            finished,
            seed: finished.then(|| hex::encode(slot.meta.secrets.seed.0)),
            exported_at: timestamp(self.clock.now()),
            revealed: revealed.as_ref().map(|lines| lines.len() as u64),
        };
        let raw: Vec<Vec<u8>> = stored.into_iter().map(|r| r.bytes).collect();
        Ok(export::write(&header, &raw, revealed.as_deref().unwrap_or_default()))
    }

    /// Imports a finished game's export after verifying it; the game keeps
    /// its id and replays identically. It has no seat tokens: it is over.
    ///
    /// # Errors
    /// `invalid_export` naming the first bad line, `invalid_input` for a
    /// running game's export (it has no seed to re-play with), `game_exists`.
    pub async fn import(&self, bytes: &[u8]) -> Result<ImportedGame, ServiceError> {
        let verified = export::check(bytes);
        if let Some(fault) = verified.report.fault {
            return Err(ServiceError::InvalidExport { line: fault.line, seq: fault.seq, reason: fault.reason });
        }
        if !verified.report.replayed {
            return Err(ServiceError::invalid("export", "only a finished game's export, which carries its seed, can be imported"));
        }
        let stream = parse_id(&verified.header.game_id).map_err(|_| ServiceError::InvalidExport {
            line: 1,
            seq: None,
            reason: "the game id is not a UUID".into(),
        })?;
        let seed = verified.header.seed.as_deref().unwrap_or_default();
        let mut seed_bytes = [0u8; 32];
        hex::decode_to_slice(seed, &mut seed_bytes).map_err(|_| ServiceError::Internal("a verified seed is not hex".into()))?;
        let secrets = Secrets { seed: ludo_engine::Seed(seed_bytes), token_hashes: Vec::new() };
        let version = verified.raw.len() as u64 - 1;
        let status = verified.report.status.clone().unwrap_or(Status::InProgress { to_move: vec![] });
        let summary = imported_summary(&verified.records, version, &status)?;
        let appended =
            self.store.append(AppendRequest::create(stream, verified.raw, Some(secrets.to_bytes())).with_summary(summary.to_bytes())).await;
        match appended {
            Err(StoreError::Conflict { .. }) => return Err(ServiceError::GameExists { id: verified.header.game_id }),
            Err(other) => return Err(other.into()),
            Ok(_) => {}
        }
        tracing::info!(game = %verified.header.game_id, records = version + 1, "game imported");
        Ok(ImportedGame { id: verified.header.game_id, kind: verified.header.kind, version, status })
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

    async fn slot(&self, id: &str) -> Result<Arc<Slot>, ServiceError> {
        let stream = parse_id(id)?;
        self.slot_of(stream).await
    }

    /// The cached game, or the game loaded from its log.
    async fn slot_of(&self, stream: StreamId) -> Result<Arc<Slot>, ServiceError> {
        if let Some(slot) = self.games.lock().expect("games lock").get(&stream) {
            slot.last_used.store(self.tick(), Ordering::Relaxed);
            return Ok(Arc::clone(slot));
        }
        let id = game_id(stream);
        let store = Arc::clone(&self.store);
        let (bytes, sealed) = blocking(move || Ok::<_, StoreError>((store.read(stream, 0, None)?, store.sealed(stream)?))).await??;
        if bytes.is_empty() {
            return Err(ServiceError::NotFound { what: "game", id });
        }
        let sealed =
            sealed.ok_or_else(|| ServiceError::CorruptLog { game: id.clone(), seq: 0, reason: "the game's secrets are missing".into() })?;
        let secrets = Secrets::from_bytes(&sealed).map_err(|reason| ServiceError::CorruptLog { game: id.clone(), seq: 0, reason })?;
        let records = parse_records(&id, bytes)?;
        let created_at = records[0].at.clone();
        let replayed = replay(&records, &secrets.seed, false).map_err(|e| corrupt(&id, e))?;
        let Replayed { state, request_ids, .. } = replayed;
        let status = state.game.status();
        let slot = Arc::new(Slot {
            meta: self.meta(id, stream, state.kind, &state.created, created_at, secrets),
            writer: Arc::new(tokio::sync::Mutex::new(Writer { last_hash: state.last_hash, request_ids, evicted: false })),
            current: RwLock::new(Arc::new(Current { version: state.version, status, game: state.game })),
            last_used: AtomicU64::new(self.tick()),
        });
        // Two readers may load the same game at once: keep whichever came first.
        Ok(self.cache(stream, slot))
    }

    async fn records(&self, slot: &Slot, from: u64, to: Option<u64>) -> Result<Vec<Record>, ServiceError> {
        let store = Arc::clone(&self.store);
        let stream = slot.meta.stream;
        let bytes = blocking(move || store.read(stream, from, to)).await??;
        parse_records(&slot.meta.id, bytes)
    }

    /// The game replayed from its log up to `upto` (inclusive; None = all).
    async fn replayed(&self, slot: &Slot, upto: Option<u64>, keep_effects: bool) -> Result<Replayed, ServiceError> {
        let to = upto.map(|v| v + 1);
        let records = self.records(slot, 0, to).await?;
        replay(&records, &slot.meta.secrets.seed, keep_effects).map_err(|e| corrupt(&slot.meta.id, e))
    }
}

/// Forgets the least recently used games that no writer holds, down to 90%
/// of `max` (so eviction is not paid on every insert), never `keep`, and
/// returns how many. Each is marked evicted under its writer lock: a writer
/// that gets the lock later sees the mark and reloads the game from its log.
/// The bound is soft: games being written are never forgotten.
fn evict_idle(games: &mut HashMap<StreamId, Arc<Slot>>, max: usize, keep: StreamId) -> u64 {
    let mut evicted = 0;
    let target = max - max / 10;
    let mut by_age: Vec<(u64, StreamId)> = games.iter().map(|(stream, slot)| (slot.last_used.load(Ordering::Relaxed), *stream)).collect();
    by_age.sort_unstable();
    for (_, stream) in by_age {
        if games.len() <= target {
            break;
        }
        if stream == keep {
            continue;
        }
        let writer = Arc::clone(&games[&stream].writer);
        if let Ok(mut idle) = writer.try_lock() {
            idle.evicted = true;
            games.remove(&stream);
            evicted += 1;
        }
    }
    evicted
}

/// The summary of an imported game, from its first and last records (as
/// `export::check` parsed and verified them).
fn imported_summary(records: &[Record], version: u64, status: &Status) -> Result<StoredSummary, ServiceError> {
    let (Some(first), Some(last)) = (records.first(), records.last()) else {
        return Err(ServiceError::Internal("a verified export without records".into()));
    };
    let RecordBody::GameCreated(created) = &first.body else {
        return Err(ServiceError::Internal("a verified export whose record 0 is not game_created".into()));
    };
    Ok(StoredSummary::new(created.kind.clone(), created.seats.clone(), first.at.clone(), version, status, &last.at))
}

fn parse_records(id: &str, stored: Vec<ludo_storage::StoredRecord>) -> Result<Vec<Record>, ServiceError> {
    stored
        .into_iter()
        .map(|s| Record::from_bytes(&s.bytes).map_err(|reason| ServiceError::CorruptLog { game: id.to_string(), seq: s.seq, reason }))
        .collect()
}

/// The answer to an accepted move, as its mover sees it.
fn answer(kind: &Kind, version: u64, status: &Status, game: &dyn DynGame, seat: Seat, effects: &[Value]) -> MoveAccepted {
    let seen_as = effective(Viewer::Seat(seat), status);
    MoveAccepted {
        kind: kind.id.into(),
        version,
        status: status.clone(),
        effects: effects.iter().map(|e| game.redact(e, seen_as)).collect(),
        view: game.view(seen_as),
    }
}

fn event(record: Record, effects: Vec<Value>) -> Event {
    match record.body {
        RecordBody::GameCreated(created) => Event {
            seq: record.seq,
            kind: "game_created".into(),
            at: record.at,
            seat: None,
            mv: None,
            request_id: None,
            game: Some(created),
            effects,
            hash: record.hash,
        },
        RecordBody::Move(mv) => Event {
            seq: record.seq,
            kind: "move".into(),
            at: record.at,
            seat: Some(mv.seat),
            mv: Some(mv.mv),
            request_id: mv.request_id,
            game: None,
            effects,
            hash: record.hash,
        },
    }
}

/// Runs blocking store work off the async workers (sled calls block).
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

    #[test]
    fn ids_made_in_one_millisecond_still_increase_and_stay_v7() {
        let ids = IdGenerator::default();
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_000);
        let mut previous = ids.next(now).unwrap();
        for _ in 0..1000 {
            let id = ids.next(now).unwrap();
            assert!(id > previous);
            let uuid = uuid::Uuid::from_bytes(id.0);
            assert_eq!(uuid.get_version_num(), 7);
            assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122);
            previous = id;
        }
    }

    #[test]
    fn bump_carries_from_rand_b_into_rand_a() {
        let id = uuid::Builder::from_unix_timestamp_millis(1, &[0xFF; 10]).into_uuid().as_u128();
        let next = bump(id & !(0xFFF << 64));
        let uuid = uuid::Uuid::from_u128(next);
        assert_eq!(uuid.get_version_num(), 7);
        assert_eq!((next >> 64) & 0xFFF, 1, "the carry reaches rand_a");
        assert_eq!(next & ((1 << 62) - 1), 0);
    }
}
