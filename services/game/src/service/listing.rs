//! Listing games from the store's per-game summaries: a listing reads no
//! log and replays nothing, whatever its filter.
//!
//! Every append carries the game's summary as it stands after that append
//! (kind, seats, creation time, version, status, when it finished). A game
//! without a current summary (written before summaries existed, or whose
//! summary a crash lost) is described from its live state or its log once,
//! and its summary is written back for the next listing.

use std::sync::Arc;

use ludo_record::status::Status;
use ludo_storage::{AppendRequest, StreamId, StreamSummary};
use serde::{Deserialize, Serialize};

use super::{GameMeta, GameService, game_id, page_limit, parse_id};
use crate::api::{GameList, GameSummary, ListFilter, SeatInfo};
use crate::error::ServiceError;
use ludo_record::bot::BotSeat;
use ludo_record::kinds;
use ludo_record::table::Table;

/// Most summaries one listing request reads: a filter that matches few
/// games returns a short page (with `next_after`) rather than scan them all.
pub const MAX_LIST_SCAN: usize = 10_000;

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
        let mut games = Vec::new();
        let mut scanned = 0;
        loop {
            let batch_size = limit.min(self.list_scan - scanned).max(1);
            let store = Arc::clone(&self.store);
            let batch = store.list_summaries(after, batch_size).await?;
            let exhausted = batch.len() < batch_size;
            scanned += batch.len();
            let batch_len = batch.len();
            for (i, listed) in batch.into_iter().enumerate() {
                after = Some(listed.stream);
                if super::tlog::is_reserved(listed.stream) {
                    continue; // the transparency log's own streams
                }
                let Some(summary) = self.summary_of(listed).await? else { continue };
                let kind_ok = filter.kind.as_deref().is_none_or(|k| k == summary.kind);
                let state_ok = filter.finished.is_none_or(|f| f == summary.status.is_finished());
                let open_ok = !filter.open || (summary.public && matches!(summary.status, Status::Waiting { .. }));
                if kind_ok && state_ok && open_ok {
                    games.push(summary.listed(game_id(after.expect("just set"))));
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

    /// A listed game's summary: the stored one when current, else one made
    /// from the game (and written back). `None` for a game whose log is
    /// damaged: one damaged log must not hide every other game; reading it
    /// directly still reports `corrupt_log` and where.
    async fn summary_of(&self, listed: StreamSummary) -> Result<Option<StoredSummary>, ServiceError> {
        if let Some(summary) = listed.summary.as_deref().and_then(|bytes| StoredSummary::from_bytes(bytes, listed.next_seq)) {
            return Ok(Some(summary));
        }
        match self.described(listed.stream).await {
            Ok(summary) => Ok(Some(summary)),
            Err(err @ ServiceError::CorruptLog { .. }) => {
                tracing::error!(%err, "a game left out of a listing");
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    /// Describes a game from its state and writes the summary back, so the
    /// next listing finds it.
    pub(super) async fn described(&self, stream: StreamId) -> Result<StoredSummary, ServiceError> {
        let slot = self.slot_of(stream).await?;
        let current = slot.current();
        let last = self.records(&slot, current.version, Some(current.version + 1)).await?;
        let last_at = last.first().map_or_else(|| slot.meta.created_at.clone(), |record| record.at.clone());
        let summary = StoredSummary::of(&slot.meta, (current.version, &current.status), &current.table, &last_at);
        // Refused when the game moved meanwhile: that move wrote its own.
        let written = self.store.append(AppendRequest::describe(stream, current.version + 1, summary.to_bytes())).await;
        if let Err(err) = written {
            tracing::debug!(%err, game = %slot.meta.id, "a game's summary was not written back");
        }
        Ok(summary)
    }
}
