//! Export and import of a game's whole record.

use std::sync::Arc;

use ludo_storage::{AppendRequest, StoreError, StreamId};

use crate::api::ImportedGame;
use crate::error::ServiceError;
use crate::secrets::Secrets;
use ludo_record::record::{MoveRecord, Record, RecordBody};
use ludo_record::replay::replay;
use ludo_record::status::Status;
use ludo_record::table::Table;
use ludo_record::{export, kinds};

use super::ids::{GameId, parse_id};
use super::listing::StoredSummary;
use super::{GameService, blocking, check_name, check_new_options, check_players, check_request_id, corrupt, parse_records, timestamp};

/// The summary of an imported game, from its first and last records (as
/// `export::check` parsed and verified them).
pub(super) fn imported_summary(
    records: &[Record],
    (version, status): (u64, &Status),
    table: &Table,
    imported: &ludo_transparency::Imported,
) -> Result<StoredSummary, ServiceError> {
    let (Some(first), Some(last)) = (records.first(), records.last()) else {
        return Err(ServiceError::Internal("a verified export without records".into()));
    };
    let RecordBody::GameCreated(created) = &first.body else {
        return Err(ServiceError::Internal("a verified export whose record 0 is not game_created".into()));
    };
    Ok(StoredSummary::new(created.kind.clone(), table, first.at.clone(), (version, status), &last.at).imported(Some(imported.clone())))
}

/// Most bytes of an export an import (or a verification) takes: far above
/// any game's (bots' games measured 19 KB for Cardinal, 71 KB for Kardinal
/// & König, 87 KB for a Battle 13 match, revealed hands included).
pub const MAX_IMPORT_BYTES: usize = 4 * 1024 * 1024;

/// Most records of an imported game: far above any game's (moves, and at
/// most `MAX_SEAT_RECORDS` seat records).
pub const MAX_IMPORT_RECORDS: usize = 10_000;

impl GameService {
    /// The game's whole record as JSON Lines (see [`ludo_record::export`]); with
    /// the seed once the game is over. A token, if given, must be valid.
    ///
    /// # Errors
    /// `not_found`, `unauthorized`, storage and corruption errors.
    pub async fn export(&self, id: &GameId, token: Option<&str>) -> Result<Vec<u8>, ServiceError> {
        let slot = self.slot(id).await?;
        slot.viewer(token)?;
        let current = slot.current();
        let store = Arc::clone(&self.store);
        let stream = slot.meta.stream;
        let upto = current.version + 1;
        let stored = store.read(stream, 0, Some(upto)).await?;
        let finished = current.status.is_finished();
        // Once the game is over its hidden cards are public: re-deal them
        // from the seed for the revealed lines.
        let revealed = if finished {
            let records = parse_records(&slot.meta.id, stored.clone())?;
            let seed = slot.meta.secrets.seed.clone();
            // A whole replay: off the async workers.
            let lines = blocking(move || replay(&records, &seed, true).map(|replayed| export::revealed(&records, &replayed)));
            Some(lines.await?.map_err(|err| corrupt(&slot.meta.id, err))?)
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
            // A finished game's export is a bundle: its receipt with it.
            receipt: if finished { Some(self.receipt_of(&slot, &current).await?) } else { None },
            imported: slot.meta.secrets.imported.clone(),
        };
        let raw: Vec<Vec<u8>> = stored.into_iter().map(|r| r.bytes).collect();
        Ok(export::write(&header, &raw, revealed.as_deref().unwrap_or_default()))
    }

    /// Verifies an export (see [`export::verify`]) off the async workers:
    /// it re-plays the whole game.
    ///
    /// # Errors
    /// `invalid_input` for no export at all (an empty body); otherwise only
    /// when the blocking task itself fails: a bad export is a report that
    /// says so.
    pub async fn verify(&self, bytes: impl Into<Vec<u8>>) -> Result<export::VerifyReport, ServiceError> {
        let bytes = bytes.into();
        not_empty(&bytes)?;
        let mut report = blocking(move || export::verify(&bytes)).await?;
        // Receipts are checked with the key they name; this server trusts its own.
        if let Some(receipt) = report.receipt.as_mut() {
            let own = self.tlog().await?.key().verifier_key();
            receipt.trusted = receipt.key == own;
        }
        Ok(report)
    }

    /// Imports a finished game's export after verifying it, with the
    /// operator's token (see [`GameService::with_operator_token`]): the
    /// game keeps its id and replays identically, and is marked as
    /// imported everywhere it shows (its listing, views, exports and its
    /// transparency-log leaf, which names its origin: the key that signed
    /// the bundle's receipt, or unknown). It has no seat tokens: it is over.
    /// It is bounded as a game created here is: at most
    /// [`MAX_IMPORT_BYTES`] and [`MAX_IMPORT_RECORDS`], its options and
    /// clock as creation takes them, its names as names.
    ///
    /// # Errors
    /// `forbidden` when the server takes no import (no operator token is
    /// configured); `unauthorized` without the operator's token;
    /// `invalid_export` naming the first bad line; `invalid_input` for no
    /// export at all, a running game's export (it has no seed to re-play with), a field out
    /// of creation's bounds, a game id that is no time-ordered (v7) id of
    /// the past; `game_exists`.
    pub async fn import(&self, bytes: impl Into<Vec<u8>>, token: Option<&str>) -> Result<ImportedGame, ServiceError> {
        self.check_operator(token)?;
        let bytes = bytes.into();
        not_empty(&bytes)?;
        if bytes.len() > MAX_IMPORT_BYTES {
            return Err(ServiceError::invalid("export", format!("{} bytes; an import is at most {MAX_IMPORT_BYTES}", bytes.len())));
        }
        // The header says how long the game is: a game longer than any game
        // played here is refused before anything is re-played.
        let header = export::ExportHeader::read(&bytes).map_err(|err| ServiceError::InvalidExport {
            line: 1,
            seq: None,
            reason: format!("the header is not an export header: {err}"),
        })?;
        if header.records > MAX_IMPORT_RECORDS as u64 {
            return Err(ServiceError::invalid("export", format!("{} records; an import is at most {MAX_IMPORT_RECORDS}", header.records)));
        }
        // A whole replay: off the async workers.
        let verified = blocking(move || export::check(&bytes)).await?;
        if let Some(fault) = verified.report.fault {
            return Err(ServiceError::InvalidExport { line: fault.line, seq: fault.seq, reason: fault.reason });
        }
        if !verified.report.replayed {
            return Err(ServiceError::invalid("export", "only a finished game's export, which carries its seed, can be imported"));
        }
        let stream = imported_id(&verified.header.game_id, self.clock.now())?;
        check_imported(&verified.records)?;
        let seed = verified.header.seed.as_deref().unwrap_or_default();
        let mut seed_bytes = [0u8; 32];
        hex::decode_to_slice(seed, &mut seed_bytes).map_err(|_| ServiceError::Internal("a verified seed is not hex".into()))?;
        // Its origin: the key that signed the bundle's receipt (checked by
        // `export::check`), or unknown.
        let imported = ludo_transparency::Imported { key: verified.header.receipt.as_ref().map(|receipt| receipt.key.clone()) };
        let secrets = Secrets {
            seed: ludo_engine::Seed(seed_bytes),
            token_hashes: Vec::new(),
            admin_hash: None,
            invitation_hashes: Vec::new(),
            webhook: None,
            imported: Some(imported.clone()),
        };
        let version = verified.records.len() as u64 - 1;
        let status = verified.report.status.clone().unwrap_or(Status::InProgress { to_move: vec![], clock: None });
        let table = verified.table.as_ref().ok_or_else(|| ServiceError::Internal("a replayed export without its table".into()))?;
        let summary = imported_summary(&verified.records, (version, &status), table, &imported)?;
        let appended = self
            .store
            .append(
                AppendRequest::create(stream, verified.records.iter().map(Record::to_bytes).collect(), Some(secrets.to_bytes()))
                    .with_summary(summary.to_bytes()),
            )
            .await;
        match appended {
            Err(StoreError::Conflict { .. }) => return Err(ServiceError::GameExists { id: verified.header.game_id }),
            Err(other) => return Err(other.into()),
            Ok(_) => {}
        }
        tracing::info!(game = %verified.header.game_id, records = version + 1, origin = imported.key.as_deref().unwrap_or("unknown"), "game imported");
        // An imported game is over: this server's log records it too, as an
        // imported game's head naming its origin (a receipt in the export is
        // the exporting server's, not this one's).
        let id = GameId::from(stream);
        let slot = self.slot(&id).await?;
        let current = slot.current();
        if let Err(err) = self.receipt_of(&slot, &current).await {
            tracing::warn!(%err, game = %id, "an imported game was not added to the transparency log; the sweep will");
        }
        Ok(ImportedGame { id: verified.header.game_id, kind: verified.header.kind, version, status, imported })
    }

    /// Checks that `token` is the operator's, as an import needs: adapters
    /// ask before reading an import's body, so nobody else can make the
    /// server read one.
    ///
    /// # Errors
    /// `forbidden` when the server takes no import; `unauthorized` without
    /// the operator's token.
    pub fn check_operator(&self, token: Option<&str>) -> Result<(), ServiceError> {
        let Some(hash) = &self.operator_hash else {
            return Err(ServiceError::Forbidden {
                reason:
                    "this server takes no import: its operator allows imports with an operator token (`ludo serve --operator-token-file`)"
                        .into(),
            });
        };
        match token {
            Some(token) if bool::from(subtle::ConstantTimeEq::ct_eq(&ludo_record::table::hash_token(token)[..], &hash[..])) => Ok(()),
            _ => Err(ServiceError::Unauthorized { reason: "this needs the server's operator token (Authorization: Bearer …)".into() }),
        }
    }
}

/// The stream of an imported game's id: a time-ordered UUID (v7, as this
/// server makes them) of the past, so an import cannot squat on ids to come
/// nor sort itself ahead of every game listed.
fn imported_id(id: &str, now: std::time::SystemTime) -> Result<StreamId, ServiceError> {
    let bad = |reason: &str| ServiceError::InvalidExport { line: 1, seq: None, reason: format!("the game id `{id}` {reason}") };
    let uuid = uuid::Uuid::parse_str(id).map_err(|_| bad("is not a UUID"))?;
    if uuid.get_version_num() != 7 {
        return Err(bad("is not a time-ordered (version 7) UUID, as game ids are"));
    }
    let (secs, nanos) = uuid.get_timestamp().ok_or_else(|| bad("carries no time"))?.to_unix();
    let made = std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos);
    if made > now + IMPORT_CLOCK_SKEW {
        return Err(bad("was made in the future"));
    }
    parse_id(id).map_err(|_| bad("is not a game id"))
}

/// How far ahead of this server's clock an imported game's id may be
/// (another server's clock may run a little ahead).
const IMPORT_CLOCK_SKEW: std::time::Duration = std::time::Duration::from_secs(300);

/// Checks what an import would make the server store against the bounds
/// creation applies: the options, clock and names of record 0, the names
/// seats are joined under, request ids, and how many seat records.
fn check_imported(records: &[Record]) -> Result<(), ServiceError> {
    let Some(RecordBody::GameCreated(created)) = records.first().map(|r| &r.body) else {
        return Err(ServiceError::Internal("a verified export whose record 0 is not game_created".into()));
    };
    let kind =
        kinds::kind(&created.kind).ok_or_else(|| ServiceError::invalid("export", format!("unknown game kind `{}`", created.kind)))?;
    check_players(kind, &created.seats).map_err(|err| at_record(0, err))?;
    check_new_options(kind, &created.options).map_err(|err| at_record(0, err))?;
    if let Some(control) = created.clock {
        let asked = ludo_record::clock::ClockRequest {
            move_ms: control.move_ms,
            bank_ms: control.bank_ms,
            increment_ms: Some(control.increment_ms),
            on_timeout: Some(control.on_timeout),
        };
        match asked.control() {
            Ok(same) if same == control => {}
            Ok(_) => return Err(at_record(0, ServiceError::invalid("clock", "not a clock a game can be created with"))),
            Err((field, reason)) => return Err(at_record(0, ServiceError::InvalidInput { field, reason })),
        }
    }
    for bot in created.bots.iter().flatten() {
        if bot.think_ms > ludo_record::bot::MAX_THINK_MS {
            return Err(at_record(0, ServiceError::invalid("bots", format!("a bot thinks at most {} ms", ludo_record::bot::MAX_THINK_MS))));
        }
    }
    let mut seat_records = 0u32;
    for record in &records[1..] {
        match &record.body {
            RecordBody::Move(MoveRecord { request_id: Some(id), .. }) => check_request_id(id).map_err(|err| at_record(record.seq, err))?,
            RecordBody::SeatJoined(joined) => check_name("name", &joined.name).map_err(|err| at_record(record.seq, err))?,
            _ => {}
        }
        if !matches!(record.body, RecordBody::Move(_) | RecordBody::Timeout { .. }) {
            seat_records += 1;
        }
    }
    // Every seat record but the few that happen once per seat or game is
    // bounded by `MAX_SEAT_RECORDS` (see `seats`).
    if seat_records > super::seats::MAX_SEAT_RECORDS + 2 * u32::try_from(created.seats.len()).unwrap_or(u32::MAX) {
        return Err(ServiceError::invalid(
            "export",
            format!("{seat_records} seat records; a game takes at most {}", super::seats::MAX_SEAT_RECORDS),
        ));
    }
    Ok(())
}

/// A refusal of what record `seq` of an export holds.
fn at_record(seq: u64, err: ServiceError) -> ServiceError {
    match err {
        ServiceError::InvalidInput { field, reason } => {
            ServiceError::InvalidExport { line: seq + 2, seq: Some(seq), reason: format!("`{field}`: {reason} (as a game created here)") }
        }
        other => other,
    }
}

/// An empty request is no export, not a bad one: it is refused as input
/// (a report or `invalid_export` would answer a question nobody asked).
fn not_empty(bytes: &[u8]) -> Result<(), ServiceError> {
    if bytes.is_empty() { Err(ServiceError::invalid("export", "no export: the body is empty")) } else { Ok(()) }
}
