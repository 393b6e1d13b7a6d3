//! Creating games: kinds, option defaults and the checks on new games.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

use ludo_engine::{Seat, Viewer};
use ludo_storage::{AppendRequest, StreamId};
use serde_json::Value;

use crate::api::{CreateGame, CreatedGame, Invitation, KindInfo, SeatToken};
use crate::error::ServiceError;
use crate::secrets;
use crate::secrets::Secrets;
use ludo_record::bot::BotSeat;
use ludo_record::kinds;
use ludo_record::kinds::{AnyEffect, CreateError, Kind};
use ludo_record::record::{GENESIS, GameCreated, Record, RecordBody};
use ludo_record::table::Table;

use super::ids::game_id;
use super::listing::StoredSummary;
use super::{Current, GameMeta, GameService, Slot, Writer, check_new_options, check_players, raw, timestamp};

impl GameService {
    /// Recomputes, per kind, the default options games share.
    pub(super) fn share_default_options(&mut self) {
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
    pub(super) fn fill_defaults(&self, kind: &Kind, options: Option<Value>) -> Result<Value, ServiceError> {
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

    /// A game's unchanging facts, its options shared with every game on the
    /// kind's default options.
    pub(super) fn meta(
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
            seed_commitment: created.seed_commitment.clone(),
            options,
            created_at,
            secrets,
            clock: created.clock,
        }
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
    pub(super) fn default_options_of(&self, kind: &Kind) -> Value {
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
        let names: Vec<Option<String>> = request.players.iter().map(|player| player.as_ref().map(|p| p.name.clone())).collect();
        check_players(kind, &names)?;
        let lobby = names.iter().any(Option::is_none);
        let clock = request
            .clock
            .map(ludo_record::clock::ClockRequest::control)
            .transpose()
            .map_err(|(field, reason)| ServiceError::InvalidInput { field, reason })?;
        if request.public && !lobby {
            return Err(ServiceError::invalid("public", "a public game needs a seat left open (null in `players`) for others to join"));
        }
        let bots: Vec<Option<BotSeat>> =
            request.players.iter().map(|player| player.as_ref().and_then(|p| p.bot).map(|bot| bot.seat(self.think_ms()))).collect();
        let webhook = request.webhook.as_deref().map(|url| self.webhook_policy.check_url(url)).transpose();
        let webhook = webhook.map_err(|reason| ServiceError::invalid("webhook", reason))?;
        let options = self.fill_defaults(kind, request.options)?;
        let (mut secrets, credentials) =
            secrets::generate_with(names.len(), lobby).map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
        if let Some(url) = webhook {
            let secret = secrets::random_bytes().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
            secrets.webhook = Some(crate::webhook::Webhook { url: url.to_string(), secret });
        }
        let new = kind.create(names.len(), &options, &secrets.seed).map_err(|err| match err {
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
            seats: names.clone(),
            bots,
            public: request.public,
            clock,
            seed_commitment: secrets.seed_commitment(),
        };
        let public: Vec<AnyEffect> = new.effects.iter().map(|e| new.game.redact(e, Viewer::Spectator)).collect();
        let at = timestamp(now);
        let record = Record::seal(0, at.clone(), RecordBody::GameCreated(created.clone()), &public, &GENESIS)
            .map_err(|e| ServiceError::Internal(format!("the game's first record does not serialize: {e}")))?;
        let last_hash = record.hash_bytes().map_err(ServiceError::Internal)?;
        let mut table = Table::new(&created, kind.sides(names.len()));
        table.advance(ludo_record::clock::millis(&at).map_err(ServiceError::Internal)?, || new.game.status(), None);
        let table = Arc::new(table);
        let current = Current::new(0, new.game, Arc::clone(&table));
        let status = current.status.clone();
        let meta = self.meta(id.clone(), stream, kind, &created, at.clone(), secrets);
        let summary = StoredSummary::of(&meta, (0, &status), &table, &at);
        let appended = self
            .store
            .append(AppendRequest::create(stream, vec![record.to_bytes()], Some(meta.secrets.to_bytes())).with_summary(summary.to_bytes()))
            .await?;
        let slot = Arc::new(Slot {
            meta,
            writer: Arc::new(tokio::sync::Mutex::new(Writer { last_hash, request_ids: HashMap::new(), evicted: false })),
            current: RwLock::new(Arc::new(current)),
            last_used: AtomicU64::new(self.tick()),
            history: RwLock::new(None),
            heard: AtomicU64::new(0),
            receipt: tokio::sync::OnceCell::new(),
        });
        let slot = self.cache(stream, slot);
        tracing::info!(game = %id, kind = kind.id, players = names.len(), open = lobby, "game created");
        let now = slot.current();
        let created_record = super::commit::Committed {
            slot: Arc::clone(&slot),
            before: None,
            now,
            position: appended.first_position,
            at,
            record: "game_created",
            effects: Vec::new(),
            receipt: std::sync::OnceLock::new(),
        };
        self.dispatch(&created_record).await;
        // A token for each seat a person takes; none for a bot's seat, which
        // no token opens (its creator would read the bot's hand with it).
        let seats = credentials
            .tokens
            .into_iter()
            .zip(names)
            .enumerate()
            .filter(|(i, _)| table.held_by_person(Seat(*i as u8)))
            .filter_map(|(i, (token, name))| Some(SeatToken { seat: Seat(i as u8), name: name?, token }))
            .collect();
        let invitations = credentials
            .invitations
            .into_iter()
            .enumerate()
            .map(|(i, code)| Invitation {
                seat: Seat(i as u8),
                open: table.seats()[i].name.is_none(),
                link: format!("/games/{id}/join#{code}"),
                code,
            })
            .collect();
        Ok(CreatedGame {
            id,
            kind: kind.id.into(),
            version: 0,
            seats,
            admin_token: credentials.admin,
            invitations,
            seed_commitment: created.seed_commitment,
            status,
            webhook_secret: slot.meta.secrets.webhook.as_ref().map(crate::webhook::Webhook::key),
        })
    }
}
