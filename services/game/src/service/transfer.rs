//! Export and import of a game's whole record.

use super::*;

/// The summary of an imported game, from its first and last records (as
/// `export::check` parsed and verified them).
pub(super) fn imported_summary(
    records: &[Record],
    (version, status): (u64, &Status),
    table: &Table,
) -> Result<StoredSummary, ServiceError> {
    let (Some(first), Some(last)) = (records.first(), records.last()) else {
        return Err(ServiceError::Internal("a verified export without records".into()));
    };
    let RecordBody::GameCreated(created) = &first.body else {
        return Err(ServiceError::Internal("a verified export whose record 0 is not game_created".into()));
    };
    Ok(StoredSummary::new(created.kind.clone(), table, first.at.clone(), (version, status), &last.at))
}

impl GameService {
    /// The game's whole record as JSON Lines (see [`crate::export`]); with
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

    /// Imports a finished game's export after verifying it; the game keeps
    /// its id and replays identically. It has no seat tokens: it is over.
    ///
    /// # Errors
    /// `invalid_export` naming the first bad line, `invalid_input` for no
    /// export at all or a running game's export (it has no seed to re-play
    /// with), `game_exists`.
    pub async fn import(&self, bytes: impl Into<Vec<u8>>) -> Result<ImportedGame, ServiceError> {
        let bytes = bytes.into();
        not_empty(&bytes)?;
        // A whole replay: off the async workers.
        let verified = blocking(move || export::check(&bytes)).await?;
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
        let secrets = Secrets {
            seed: ludo_engine::Seed(seed_bytes),
            token_hashes: Vec::new(),
            admin_hash: None,
            invitation_hashes: Vec::new(),
            webhook: None,
        };
        let version = verified.records.len() as u64 - 1;
        let status = verified.report.status.clone().unwrap_or(Status::InProgress { to_move: vec![], clock: None });
        let table = verified.table.as_ref().ok_or_else(|| ServiceError::Internal("a replayed export without its table".into()))?;
        let summary = imported_summary(&verified.records, (version, &status), table)?;
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
        tracing::info!(game = %verified.header.game_id, records = version + 1, "game imported");
        // An imported game is over: this server commits to it too (a
        // receipt in the export is the exporting server's, not this one's).
        let id = GameId::from(stream);
        let slot = self.slot(&id).await?;
        let current = slot.current();
        if let Err(err) = self.receipt_of(&slot, &current).await {
            tracing::warn!(%err, game = %id, "an imported game was not added to the transparency log; the sweep will");
        }
        Ok(ImportedGame { id: verified.header.game_id, kind: verified.header.kind, version, status })
    }
}

/// An empty request is no export, not a bad one: it is refused as input
/// (a report or `invalid_export` would answer a question nobody asked).
fn not_empty(bytes: &[u8]) -> Result<(), ServiceError> {
    if bytes.is_empty() { Err(ServiceError::invalid("export", "no export: the body is empty")) } else { Ok(()) }
}
