//! Listing games from the `games` projection: one summary per game (kind,
//! seats, creation time, version, status, when it finished), folded from
//! the store's feed. A listing reads no log and replays nothing, whatever
//! its filter; it first waits for the projection to fold what was committed
//! before it came, so a caller sees what it just did.
//!
//! The store also keeps a summary beside a game's log, written when the
//! game is created and when it is added to the transparency log (its place
//! there, which no record holds).

use std::sync::Arc;

use ludo_record::status::Status;
use ludo_storage::StreamId;
use serde::{Deserialize, Serialize};

use super::{GameMeta, GameService, game_id, page_limit, parse_id};
use crate::api::{GameList, GameSummary, ListFilter, SeatInfo};
use crate::error::ServiceError;
use crate::projection::ProjectionError;
use crate::projection::games::Games;
use ludo_record::bot::BotSeat;
use ludo_record::kinds;
use ludo_record::table::Table;

/// Most summaries one listing request reads: a filter that matches few
/// games returns a short page (with `next_after`) rather than scan them all.
pub const MAX_LIST_SCAN: usize = 10_000;

/// How long a listing waits for the `games` projection to fold what was
/// committed before it came.
pub const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The summary format this version writes.
const SUMMARY_FORMAT: u32 = 1;

/// A game's summary as stored beside its log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredSummary {
    format: u32,
    kind: String,
    /// Names by seat; null for an open seat.
    seats: Vec<Option<String>>,
    created_at: String,
    version: u64,
    pub(super) status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) finished_at: Option<String>,
    /// Per seat, the server bot that plays it (absent: none does).
    #[serde(default, skip_serializing_if = "no_bots")]
    bots: Vec<Option<BotSeat>>,
    /// Seats whose player resigned (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resigned: Vec<u8>,
    /// Whether anyone may join its open seats.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    public: bool,
    /// The earliest deadline of a seat's clock (ms since the epoch), so a
    /// server that starts finds the timeouts it owes without loading games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) deadline_ms: Option<u64>,
    /// Once the game is over and in the transparency log: its leaf's index
    /// and the size of the checkpoint its receipt is against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) logged: Option<(u64, u64)>,
    /// For an imported game: where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    imported: Option<ludo_transparency::Imported>,
}

fn no_bots(bots: &[Option<BotSeat>]) -> bool {
    bots.iter().all(Option::is_none)
}

impl StoredSummary {
    /// The summary of a game of `kind` with `table`, created at
    /// `created_at`, at `version` with `status`, its last record made at `last_at`.
    pub(crate) fn new(kind: String, table: &Table, created_at: String, (version, status): (u64, &Status), last_at: &str) -> Self {
        let bots = table.bots();
        StoredSummary {
            format: SUMMARY_FORMAT,
            kind,
            seats: table.seats().iter().map(|s| s.name.clone()).collect(),
            created_at,
            version,
            status: status.clone(),
            finished_at: status.is_finished().then(|| last_at.to_string()),
            bots: if no_bots(&bots) { Vec::new() } else { bots },
            resigned: table.seats().iter().enumerate().filter(|(_, s)| s.resigned).map(|(i, _)| i as u8).collect(),
            public: table.public(),
            deadline_ms: table.next_deadline().map(|(at, _)| at),
            logged: None,
            imported: None,
        }
    }

    /// The same, for a game imported from `imported` (or not).
    pub(crate) fn imported(self, imported: Option<ludo_transparency::Imported>) -> Self {
        StoredSummary { imported, ..self }
    }

    /// The summary of a live game at `version` with `status` and `table`,
    /// its last record made at `last_at`.
    pub(super) fn of(meta: &GameMeta, (version, status): (u64, &Status), table: &Table, last_at: &str) -> Self {
        StoredSummary::new(meta.kind.id.into(), table, meta.created_at.clone(), (version, status), last_at)
            .imported(meta.secrets.imported.clone())
    }

    /// Whether a seat a server bot plays is to move.
    pub(super) fn bot_to_move(&self) -> bool {
        self.status.to_move().iter().any(|seat| self.bots.get(usize::from(seat.0)).is_some_and(Option::is_some))
    }

    /// Reads a row of the `games` projection.
    pub(crate) fn from_row(bytes: &[u8]) -> Option<Self> {
        let summary: StoredSummary = serde_json::from_slice(bytes).ok()?;
        (summary.format == SUMMARY_FORMAT).then_some(summary)
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("summaries serialize")
    }

    /// Reads a summary this version understands, for a game `next_seq` records long.
    pub(crate) fn from_bytes(bytes: &[u8], next_seq: u64) -> Option<Self> {
        let summary: StoredSummary = serde_json::from_slice(bytes).ok()?;
        (summary.format == SUMMARY_FORMAT && summary.version + 1 == next_seq).then_some(summary)
    }

    fn listed(self, id: String) -> GameSummary {
        GameSummary {
            id,
            kind: self.kind,
            seats: self
                .seats
                .into_iter()
                .enumerate()
                .map(|(i, name)| SeatInfo {
                    seat: ludo_engine::Seat(i as u8),
                    name,
                    bot: self.bots.get(i).copied().flatten(),
                    resigned: self.resigned.contains(&(i as u8)),
                })
                .collect(),
            public: self.public,
            version: self.version,
            status: self.status,
            created_at: self.created_at,
            finished_at: self.finished_at,
            imported: self.imported,
        }
    }
}

impl GameService {
    /// Lists games, oldest first, from their summaries. A page holds at most
    /// `limit` games; it may hold fewer (even none) while `next_after` is
    /// given, when the filter matched little of the games read (at most
    /// [`MAX_LIST_SCAN`] by default).
    ///
    /// # Errors
    /// `invalid_input` for a bad filter; storage errors.
    pub async fn list(&self, filter: ListFilter) -> Result<GameList, ServiceError> {
        if let Some(kind) = &filter.kind
            && kinds::kind(kind).is_none()
        {
            return Err(ServiceError::invalid("kind", format!("unknown game kind `{kind}`")));
        }
        let limit = page_limit(filter.limit)?;
        let mut after = match &filter.after {
            None => None,
            // A game id as the listing writes it (`next_after`): 36
            // characters, hyphenated, which is all the API documents; the
            // other spellings of a UUID are refused rather than read.
            Some(id) if id.len() == 36 => Some(parse_id(id).map_err(|_| ServiceError::invalid("after", "not a game id"))?),
            Some(_) => return Err(ServiceError::invalid("after", "not a game id (a hyphenated UUID, as `next_after` gives)")),
        };
        self.games_projection_caught_up(LIST_WAIT).await?;
        let mut games = Vec::new();
        let mut scanned = 0;
        loop {
            let batch_size = limit.min(self.list_scan - scanned).max(1);
            let batch = self.store.projection_scan(Games::NAME, after.map(Games::key), batch_size).await?;
            let exhausted = batch.len() < batch_size;
            scanned += batch.len();
            let batch_len = batch.len();
            for (i, (key, row)) in batch.into_iter().enumerate() {
                let stream = Games::stream_of(&key).ok_or_else(|| ServiceError::Internal("a games row keyed by no game".into()))?;
                after = Some(stream);
                let Some(summary) = StoredSummary::from_row(&row) else {
                    tracing::error!(game = %game_id(stream), "a game left out of a listing: its row does not read");
                    continue;
                };
                let kind_ok = filter.kind.as_deref().is_none_or(|k| k == summary.kind);
                let state_ok = filter.finished.is_none_or(|f| f == summary.status.is_finished());
                let open_ok = !filter.open || (summary.public && matches!(summary.status, Status::Waiting { .. }));
                if kind_ok && state_ok && open_ok {
                    games.push(summary.listed(game_id(stream)));
                    if games.len() == limit {
                        let more = !exhausted || i + 1 < batch_len;
                        return Ok(GameList { games, next_after: if more { after.map(game_id) } else { None } });
                    }
                }
            }
            if exhausted {
                return Ok(GameList { games, next_after: None });
            }
            if scanned >= self.list_scan {
                return Ok(GameList { games, next_after: after.map(game_id) });
            }
        }
    }

    /// Waits until the `games` projection has folded every record committed
    /// before now (for at most `within`), so that what reads it sees what
    /// its caller just did: a game it created, a move it made.
    ///
    /// # Errors
    /// `storage_unavailable` when it has not in time; storage errors.
    pub(super) async fn games_projection_caught_up(&self, within: std::time::Duration) -> Result<(), ServiceError> {
        let store = Arc::clone(&self.store);
        // A query on PostgreSQL: off the runtime's workers.
        let head = tokio::task::spawn_blocking(move || store.feed_head())
            .await
            .map_err(|e| ServiceError::Internal(format!("reading the feed's head failed: {e}")))??;
        self.projections.reach(Games::NAME, head, within).await.map_err(|err| match err {
            ProjectionError::Store(err) => err.into(),
            err => ServiceError::Storage(err.to_string()),
        })
    }

    /// A game's summary made from its state (live, or replayed from its
    /// log), as the `games` projection is to hold it: for the tests and
    /// tools that check the projection against the games themselves.
    ///
    /// # Errors
    /// `not_found`; `corrupt_log`; storage errors.
    #[doc(hidden)]
    pub async fn summary_from_state(&self, stream: StreamId) -> Result<Vec<u8>, ServiceError> {
        let slot = self.slot_of(stream).await?;
        let current = slot.current();
        let last = self.records(&slot, current.version, Some(current.version + 1)).await?;
        let last_at = last.first().map_or_else(|| slot.meta.created_at.clone(), |record| record.at.clone());
        Ok(StoredSummary::of(&slot.meta, (current.version, &current.status), &current.table, &last_at).to_bytes())
    }
}
