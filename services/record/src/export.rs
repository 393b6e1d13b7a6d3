//! A game's whole record as JSON Lines, and its verification.
//!
//! An export is a header line, then every stored record exactly as stored
//! (canonical JSON, one per line, in log order). The stored log holds only
//! public information (effects as a spectator sees them; the seed and the
//! seats' tokens are kept beside it), so an export is safe to hand to anyone
//! while the game runs; once the game is over the header also carries the
//! seed, which lets anyone re-deal the game and re-play every move.
//!
//! The stored records keep hidden cards hidden (a dealt hand is `null`),
//! even once the game is over. So a finished game's export adds, after the
//! records, one `revealed` line per record whose effects hid something: the
//! record's effects in full, as the seed re-deals them. These lines are
//! outside the hash chain (the records stay exactly as stored) and are
//! checked by replay: each must be exactly what the engine computes from
//! the published seed, so they add nothing anyone has to take on trust.
//!
//! [`verify`] needs nothing but the export: it checks the header, every
//! record's canonical form and link in the hash chain, the seed against the
//! commitment in record 0, and re-plays every record through this server's
//! engine for the recorded ruleset. The first bad line is reported with its
//! record number.

use ludo_engine::Viewer;

use crate::status::Status;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kinds::{AnyEffect, AnyView};

use crate::record::{GENESIS, Record, RecordBody, sha256_hex};
use crate::replay::{Replayed, replay};

/// The export format this version writes and reads.
pub const EXPORT_FORMAT: &str = "ludotheque-export/1";

/// The first line of an export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ExportHeader {
    /// Always `ludotheque-export/1`.
    pub format: String,
    /// The game's id.
    pub game_id: String,
    /// Game kind.
    pub kind: String,
    /// Ruleset the game was recorded under.
    pub ruleset: String,
    /// Number of record lines that follow.
    pub records: u64,
    /// Whether the game was over when exported.
    pub finished: bool,
    /// The game's hex seed: present once the game is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// When the export was made (RFC 3339).
    pub exported_at: String,
    /// Number of `revealed` lines after the records (a finished game's
    /// hidden cards, re-dealt from the seed). Absent in exports made before
    /// they existed, which verify as they always did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revealed: Option<u64>,
    /// A finished game's receipt from the exporting server's transparency
    /// log: the game's head, a signed checkpoint that includes it, the
    /// inclusion proof and the public key. With it, an export is a
    /// self-contained bundle: checked offline, it shows that the server
    /// committed to exactly this log as the game's whole log. Absent in
    /// exports made before receipts existed, which verify as they always did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ludo_transparency::Receipt>,
    /// For a game the exporting server imported rather than saw played:
    /// where it came from. Its receipt's leaf says the same (an
    /// `imported-game-head`), so this cannot be dropped without the receipt
    /// failing. Absent for a game played on the exporting server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ludo_transparency::Imported>,
}

impl ExportHeader {
    /// The header of `export` (its first line), without reading further.
    ///
    /// # Errors
    /// A first line that is not an export header.
    pub fn read(export: &[u8]) -> Result<ExportHeader, serde_json::Error> {
        serde_json::from_slice(export.split(|&b| b == b'\n').next().unwrap_or_default())
    }
}

/// A line after the records of a finished game's export: what record
/// `revealed` hid, in full. Checked against a replay from the seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Revealed {
    /// The record's seq.
    pub revealed: u64,
    /// The record's effects with nothing hidden.
    pub effects: Vec<Value>,
}

/// The `revealed` lines of a log: one per record whose stored effects hide
/// part of what the engine computed, with its effects in full (`replayed`
/// must have kept the effects).
#[must_use]
pub fn revealed(records: &[Record], replayed: &Replayed) -> Vec<Revealed> {
    records
        .iter()
        .zip(&replayed.effects)
        .zip(&replayed.hid)
        .filter(|(_, hid)| **hid)
        .map(|((record, full), _)| Revealed { revealed: record.seq, effects: full.iter().map(AnyEffect::to_json).collect() })
        .collect()
}

/// Writes an export: the header line, each stored record's bytes, then
/// the `revealed` lines (the header must count them).
#[must_use]
pub fn write(header: &ExportHeader, records: &[Vec<u8>], revealed: &[Revealed]) -> Vec<u8> {
    let mut out = serde_json::to_vec(header).expect("headers serialize");
    out.push(b'\n');
    for record in records {
        out.extend_from_slice(record);
        out.push(b'\n');
    }
    for line in revealed {
        serde_json::to_writer(&mut out, line).expect("revealed lines serialize");
        out.push(b'\n');
    }
    out
}

/// How the seed in an export compares with the game's commitment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SeedCheck {
    /// Not checked: verification stopped at an earlier fault.
    Unchecked,
    /// The seed hashes to the commitment in record 0.
    Matches,
    /// No seed: the game was running when exported; the deal cannot be checked yet.
    Absent,
    /// The seed does not match the commitment.
    Mismatch,
}

/// The first problem found in an export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ExportFault {
    /// 1-based line of the export (line 1 is the header).
    pub line: u64,
    /// The record number on that line, when it is a record line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// What is wrong.
    pub reason: String,
}

/// The outcome of verifying an export.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct VerifyReport {
    /// Whether everything checked out.
    pub valid: bool,
    /// The game's id, when the header could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
    /// Game kind, when the header could be read and names a kind this
    /// server hosts (the shape of `view`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Record lines read.
    pub records: u64,
    /// Whether every record's hash chains to the previous one.
    pub chain_intact: bool,
    /// The seed against the commitment.
    pub seed: SeedCheck,
    /// Whether every record was re-played through the engine (needs the seed).
    pub replayed: bool,
    /// Records whose hidden effects the export reveals (a finished game's
    /// dealt and drawn cards), each checked against the re-deal from the seed.
    pub revealed: u64,
    /// Hash of the last record: compare it with the server's to be sure
    /// the export is the whole, unaltered log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_hash: Option<String>,
    /// The game's status after the last record, when re-played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// The final state, as everyone may see it once the game is over, when re-played.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = Option<crate::schema::GameView>))]
    pub view: Option<AnyView>,
    /// The receipt's checks, when the export carries one (a finished
    /// game's bundle): signature, leaf, inclusion (all false when an
    /// earlier check failed). Without one, nothing shows that the export
    /// is the whole log: compare `last_hash` with what the server says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ludo_transparency::ReceiptReport>,
    /// What the header says of a game the exporting server imported
    /// rather than saw played (its receipt, when valid, says the same).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<ludo_transparency::Imported>,
    /// The first problem, when not valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<ExportFault>,
}

impl VerifyReport {
    fn failed(mut self, line: u64, seq: Option<u64>, reason: impl Into<String>) -> Self {
        self.valid = false;
        self.fault = Some(ExportFault { line, seq, reason: reason.into() });
        self
    }
}

/// A verified export, ready to import.
#[derive(Debug)]
pub struct Verified {
    /// The header.
    pub header: ExportHeader,
    /// The records, parsed; each keeps its bytes exactly as in the export
    /// ([`Record::to_bytes`]).
    pub records: Vec<Record>,
    /// The report.
    pub report: VerifyReport,
    /// The table after the last record, when re-played.
    pub table: Option<crate::table::Table>,
}

/// Verifies an export (see the module docs); a receipt is checked with
/// the key it names (`receipt.trusted` is then false).
#[must_use]
pub fn verify(export: &[u8]) -> VerifyReport {
    check(export).report
}

/// Verifies an export whose receipt must be signed by `trusted_key` (a
/// C2SP verifier key), when given.
#[must_use]
pub fn verify_with(export: &[u8], trusted_key: Option<&str>) -> VerifyReport {
    check_with(export, trusted_key).report
}

/// Verifies an export and keeps what an import needs.
#[must_use]
pub fn check(export: &[u8]) -> Verified {
    check_with(export, None)
}

/// [`check`], with the key receipts must be signed by.
#[must_use]
pub fn check_with(export: &[u8], trusted_key: Option<&str>) -> Verified {
    let mut report = VerifyReport {
        valid: true,
        game_id: None,
        kind: None,
        records: 0,
        chain_intact: false,
        seed: SeedCheck::Unchecked,
        replayed: false,
        revealed: 0,
        last_hash: None,
        status: None,
        view: None,
        receipt: None,
        imported: None,
        fault: None,
    };
    let empty = |report: VerifyReport| Verified { header: blank_header(), records: vec![], report, table: None };
    let text = export.strip_suffix(b"\n").unwrap_or(export);
    let lines = text.split(|&b| b == b'\n').skip(1);
    let header = match ExportHeader::read(text) {
        Ok(header) => header,
        Err(err) => return empty(report.failed(1, None, format!("the header is not an export header: {err}"))),
    };
    report.game_id = Some(header.game_id.clone());
    report.imported.clone_from(&header.imported);
    // A receipt is reported from here on, unchecked until the game re-plays:
    // "no receipt" and "not checked" never look the same.
    report.receipt = header.receipt.as_ref().map(|receipt| ludo_transparency::ReceiptReport::unchecked(receipt, trusted_key));
    report.kind = crate::kinds::kind(&header.kind).map(|kind| kind.id.to_string());
    if header.format != EXPORT_FORMAT {
        return empty(report.failed(1, None, format!("unknown export format `{}`", header.format)));
    }
    // Lines are borrowed, not copied: a record copies its own bytes once,
    // when it is parsed.
    let mut raw: Vec<&[u8]> = lines.collect();
    // Whatever follows the announced records is the revealed lines.
    let revealed_lines = match usize::try_from(header.records) {
        Ok(records) if header.revealed.is_some() && records < raw.len() => raw.split_off(records),
        _ => Vec::new(),
    };
    report.records = raw.len() as u64;
    let fail = |report: VerifyReport, line: u64, seq: Option<u64>, reason: String, header: &ExportHeader| Verified {
        header: header.clone(),
        records: vec![],
        table: None,
        report: report.failed(line, seq, reason),
    };
    let mut records = Vec::with_capacity(raw.len());
    let mut prev = GENESIS;
    for (i, bytes) in raw.iter().enumerate() {
        let (seq, line) = (i as u64, i as u64 + 2);
        let record = match Record::from_bytes(bytes) {
            Ok(record) => record,
            Err(reason) => return fail(report, line, Some(seq), reason, &header),
        };
        prev = match record.verify_link(seq, &prev) {
            Ok(hash) => hash,
            Err(reason) => return fail(report, line, Some(seq), reason, &header),
        };
        records.push(record);
    }
    report.chain_intact = true;
    report.last_hash = records.last().map(|r| r.hash.clone());
    let Some(first) = records.first() else {
        return fail(report, 2, Some(0), "the export holds no record".into(), &header);
    };
    let RecordBody::GameCreated(created) = &first.body else {
        return fail(report, 2, Some(0), "record 0 is not game_created".into(), &header);
    };
    for (what, header_value, record_value) in [
        ("game_id", &header.game_id, &created.game_id),
        ("kind", &header.kind, &created.kind),
        ("ruleset", &header.ruleset, &created.ruleset),
    ] {
        if header_value != record_value {
            return fail(report, 1, None, format!("the header's {what} `{header_value}` is not record 0's `{record_value}`"), &header);
        }
    }
    if header.records != records.len() as u64 {
        return fail(
            report,
            1,
            None,
            format!("the header announces {} records, the export holds {}", header.records, records.len()),
            &header,
        );
    }
    let announced = header.revealed.unwrap_or(0);
    if announced != revealed_lines.len() as u64 {
        let held = revealed_lines.len();
        return fail(report, 1, None, format!("the header announces {announced} revealed lines, the export holds {held}"), &header);
    }
    let Some(seed_hex) = &header.seed else {
        report.seed = SeedCheck::Absent;
        if header.finished {
            return fail(report, 1, None, "a finished game's export must carry its seed".into(), &header);
        }
        if announced > 0 {
            return fail(report, 1, None, "only a finished game's export reveals hidden cards".into(), &header);
        }
        if header.receipt.is_some() {
            return fail(report, 1, None, "only a finished game's export carries a receipt".into(), &header);
        }
        return Verified { header, records, report, table: None };
    };
    let mut seed = [0u8; 32];
    if hex::decode_to_slice(seed_hex, &mut seed).is_err() {
        return fail(report, 1, None, "the seed is not 32 hex bytes".into(), &header);
    }
    if sha256_hex(&seed) != created.seed_commitment {
        report.seed = SeedCheck::Mismatch;
        return fail(report, 1, None, "the seed does not match record 0's seed commitment".into(), &header);
    }
    report.seed = SeedCheck::Matches;
    match replay(&records, &ludo_engine::Seed(seed), header.revealed.is_some()) {
        Err(err) => fail(report, err.seq + 2, Some(err.seq), err.reason, &header),
        Ok(replayed) => {
            let status = replayed.state.status();
            if status.is_finished() != header.finished {
                return fail(
                    report,
                    1,
                    None,
                    format!("the header says finished: {}, the replayed game says {}", header.finished, status.is_finished()),
                    &header,
                );
            }
            if header.revealed.is_some() {
                let first_line = header.records + 2;
                let expected = revealed(&records, &replayed);
                if let Err((line, seq, reason)) = check_revealed(&revealed_lines, &expected, first_line) {
                    return fail(report, line, seq, reason, &header);
                }
                report.revealed = expected.len() as u64;
            }
            report.replayed = true;
            report.view = Some(replayed.state.game.view(Viewer::Omniscient));
            if let Some(receipt) = &header.receipt {
                // The head the log must have committed to: this game as re-played.
                let head = ludo_transparency::GameHead {
                    game_id: header.game_id.clone(),
                    records: records.len() as u64,
                    last_hash: report.last_hash.clone().unwrap_or_default(),
                    ending: status.ending(),
                    imported: header.imported.clone(),
                };
                let (checked, outcome) = ludo_transparency::check_receipt(receipt, head.leaf().as_deref(), trusted_key);
                report.receipt = Some(checked);
                if let Err(reason) = outcome {
                    report.status = Some(status);
                    return fail(report, 1, None, format!("the receipt: {reason}"), &header);
                }
            }
            report.status = Some(status);
            Verified { header, records, report, table: Some(std::sync::Arc::unwrap_or_clone(replayed.state.table)) }
        }
    }
}

/// Checks the revealed lines (the first on line `first_line`) against what
/// the replay computed: the same records, in order, with the same effects.
fn check_revealed(lines: &[&[u8]], expected: &[Revealed], first_line: u64) -> Result<(), (u64, Option<u64>, String)> {
    for (i, bytes) in lines.iter().enumerate() {
        let line = first_line + i as u64;
        let found: Revealed = serde_json::from_slice(bytes)
            .map_err(|err| (line, None, format!("not a revealed line ({{\"revealed\": seq, \"effects\": […]}}): {err}")))?;
        let seq = Some(found.revealed);
        match expected.get(i) {
            Some(want) if want.revealed != found.revealed => {
                return Err((
                    line,
                    seq,
                    format!("reveals record {}, where the seed reveals record {} next", found.revealed, want.revealed),
                ));
            }
            Some(want) if want.effects != found.effects => {
                return Err((line, seq, "the revealed effects differ from what the seed deals".into()));
            }
            Some(_) => {}
            None => return Err((line, seq, "the seed reveals nothing more: this line is extra".into())),
        }
    }
    if let Some(missing) = expected.get(lines.len()) {
        let line = first_line + lines.len() as u64;
        return Err((line, Some(missing.revealed), format!("record {}'s hidden effects are not revealed", missing.revealed)));
    }
    Ok(())
}

fn blank_header() -> ExportHeader {
    ExportHeader {
        format: String::new(),
        game_id: String::new(),
        kind: String::new(),
        ruleset: String::new(),
        records: 0,
        finished: false,
        seed: None,
        exported_at: String::new(),
        revealed: None,
        receipt: None,
        imported: None,
    }
}
