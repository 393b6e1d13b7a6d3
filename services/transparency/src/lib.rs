//! Provable completeness: a transparency log of games.
//!
//! Each game's log is hash-chained, so an export shows whether its records
//! were altered; what the chain alone cannot show is that an export is the
//! *whole* log, or that the server has not quietly rewritten or dropped a
//! game since. Certificate transparency's answer is used here:
//!
//! - Every game that ends (finished or cancelled) becomes one **leaf** of
//!   an append-only Merkle tree ([RFC 6962] hashing): its id, its record
//!   count, the hash of its last record and its outcome, as the text
//!   [`GameHead::leaf`] writes. A game played on this server has a
//!   `game-head` leaf; a game imported from an export has an
//!   `imported-game-head` leaf naming its origin (the key that signed the
//!   bundle it came in, or `unknown`): the server never signs that a game
//!   was played on it when it was not.
//! - The server signs **checkpoints** of that tree (origin, size, root) in
//!   the C2SP [tlog-checkpoint] format, inside a C2SP [signed-note], with an
//!   Ed25519 key whose public half it publishes. It never signs two
//!   checkpoints of which one is not a prefix of the other: the tree only
//!   grows, one append at a time, through the store's expected-length check.
//! - A **receipt** ([`Receipt`]) is a leaf, a signed checkpoint that
//!   includes it and the inclusion proof; a finished game's export carries
//!   one, so anyone holding the public key can check, offline, that the
//!   server committed to exactly this head of exactly this game. Two
//!   checkpoints are checked against each other with a consistency proof
//!   ([`check_consistency`]): the later tree extends the earlier one, so no
//!   committed game was dropped or rewritten between them.
//!
//! The formats are cloudflare/azul's ports of Go's `sumdb` note and tlog
//! packages (`signed_note`, `tlog_tiles`); this crate adds the game's leaf,
//! the key's life cycle and the receipt checks.
//!
//! This crate is the log's formats and checks only: it depends on the
//! engine contract (a leaf names scores and seats) and on no runtime,
//! storage, HTTP or game record. The service keeps the log (ludo-game's
//! `service/tlog.rs`); `ludo-record` checks the receipts exports carry.
//! OpenAPI schemas of its types come with the feature `schema`.
//!
//! [RFC 6962]: https://www.rfc-editor.org/rfc/rfc6962#section-2.1
//! [tlog-checkpoint]: https://c2sp.org/tlog-checkpoint
//! [signed-note]: https://c2sp.org/signed-note

use std::cell::RefCell;
use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use signed_note::{Note, Signer as _, StandardSigner, StandardVerifier, VerifierList};
use tlog_tiles::{Checkpoint, Hash, HashReader};

use ludo_engine::{Outcome, Seat};

pub use tlog_tiles::{record_hash, stored_hash_count, stored_hash_index};

/// The first line of the leaf of a game played on this server.
pub const LEAF_FORMAT: &str = "ludotheque/game-head/v1";

/// The first line of the leaf of a game imported from an export.
pub const IMPORTED_LEAF_FORMAT: &str = "ludotheque/imported-game-head/v1";

/// How the origin (and key name) of a log whose operator named none
/// begins: 8 random hex digits follow, drawn once when the log is made. An
/// origin names one log, and verifiers pin keys by origin (trust on first
/// use), so two servers left unnamed must not share one.
pub const DEFAULT_ORIGIN_PREFIX: &str = "ludotheque/log-";

/// A new log's default origin: [`DEFAULT_ORIGIN_PREFIX`] and 8 random hex digits.
///
/// # Errors
/// No randomness.
pub fn default_origin() -> Result<String, String> {
    let random = random_bytes().map_err(|e| format!("no randomness for the log's origin: {e}"))?;
    Ok(format!("{DEFAULT_ORIGIN_PREFIX}{}", hex::encode(&random[..4])))
}

/// 32 bytes from the operating system's random source.
fn random_bytes() -> Result<[u8; 32], getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes)
}

/// Longest origin accepted (it is the first line of every checkpoint).
pub const MAX_ORIGIN: usize = 128;

/// Most hashes an inclusion or consistency proof may hold (a tree of 2^64
/// leaves needs 64 for inclusion, 128 at most for consistency).
pub const MAX_PROOF: usize = 128;

/// Most bytes of a leaf or checkpoint a receipt may carry.
pub const MAX_RECEIPT_TEXT: usize = 4096;

/// A game's head, as the log commits to it once the game is over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameHead {
    /// The game's id.
    pub game_id: String,
    /// How many records its log holds.
    pub records: u64,
    /// The hash of its last record (hex).
    pub last_hash: String,
    /// How it ended; `None` while it is not over (it has no leaf yet).
    pub ending: Option<Ending>,
    /// For a game imported from an export rather than played here: where
    /// it came from.
    pub imported: Option<Imported>,
}

/// How a game that is over ended, as its leaf says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Played to its end, or given up.
    Finished {
        /// Final scores and winners.
        result: Outcome,
        /// The seats that gave up, in the order they did, each with how, as
        /// the leaf writes it (`resigned`, `timed_out`).
        forfeits: Vec<(Seat, &'static str)>,
    },
    /// Called off before it started.
    Cancelled,
}

/// Where an imported game came from, as far as this server can tell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Imported {
    /// The transparency-log key (a C2SP verifier key) that signed the
    /// receipt of the bundle it was imported from: the log of the server it
    /// was played on, as far as that key's holder says. Null: unknown (the
    /// export carried no receipt).
    pub key: Option<String>,
}

impl GameHead {
    /// The leaf's text: one fact per line, in a fixed order, so that anyone
    /// who re-plays the game writes the very same bytes.
    ///
    /// ```text
    /// ludotheque/game-head/v1
    /// game 0193c3e4-5c2a-7c1e-9d3b-2f7a1c9e4b10
    /// records 57
    /// last 3f0c…(64 hex)
    /// outcome finished
    /// scores 12 7 -3
    /// winners 0
    /// forfeits 2:resigned
    /// ```
    ///
    /// A cancelled game's leaf ends at `outcome cancelled`. An imported
    /// game's leaf begins with [`IMPORTED_LEAF_FORMAT`] and has an `origin`
    /// line after `last`: `origin key <verifier key>` or `origin unknown`.
    /// `None` for a game that is not over.
    #[must_use]
    pub fn leaf(&self) -> Option<String> {
        use std::fmt::Write;
        let format = if self.imported.is_some() { IMPORTED_LEAF_FORMAT } else { LEAF_FORMAT };
        let mut out = format!("{format}\ngame {}\nrecords {}\nlast {}\n", self.game_id, self.records, self.last_hash);
        match &self.imported {
            Some(Imported { key: Some(key) }) => {
                let _ = writeln!(out, "origin key {key}");
            }
            Some(Imported { key: None }) => out.push_str("origin unknown\n"),
            None => {}
        }
        match self.ending.as_ref()? {
            Ending::Finished { result, forfeits } => {
                out.push_str("outcome finished\nscores");
                for score in &result.scores {
                    let _ = write!(out, " {score}");
                }
                out.push_str("\nwinners");
                for seat in &result.winners {
                    let _ = write!(out, " {}", seat.0);
                }
                out.push_str("\nforfeits");
                for (seat, reason) in forfeits {
                    let _ = write!(out, " {}:{reason}", seat.0);
                }
                out.push('\n');
            }
            Ending::Cancelled => out.push_str("outcome cancelled\n"),
        }
        Some(out)
    }
}

/// The game id a leaf names (its second line), if it is a leaf of a
/// format this version writes (a played or an imported game's).
#[must_use]
pub fn leaf_game(leaf: &str) -> Option<&str> {
    let mut lines = leaf.lines();
    matches!(lines.next()?, LEAF_FORMAT | IMPORTED_LEAF_FORMAT).then_some(())?;
    lines.next()?.strip_prefix("game ")
}

/// Whether `origin` can name a log: a C2SP key name (no whitespace, no
/// `+`), printable, at most [`MAX_ORIGIN`] bytes.
#[must_use]
pub fn origin_is_valid(origin: &str) -> bool {
    signed_note::is_key_name_valid(origin) && origin.len() <= MAX_ORIGIN && origin.chars().all(|c| !c.is_control())
}

/// The log's signing key: an Ed25519 key named by the log's origin.
#[derive(Clone)]
pub struct LogKey {
    origin: String,
    signer: StandardSigner,
    /// The C2SP signed-note verifier key: `origin+keyid+base64(0x01 ‖ public key)`.
    verifier_key: String,
    /// The private key in the same encoding (`PRIVATE+KEY+origin+keyid+…`).
    private_key: String,
}

impl std::fmt::Debug for LogKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogKey").field("verifier_key", &self.verifier_key).finish_non_exhaustive()
    }
}

impl LogKey {
    /// A new key named `origin`, from the system's randomness.
    ///
    /// # Errors
    /// An origin that cannot name a key, or no randomness.
    pub fn generate(origin: &str) -> Result<LogKey, String> {
        let seed = random_bytes().map_err(|e| format!("no randomness for the log's key: {e}"))?;
        LogKey::from_seed(origin, &seed)
    }

    /// The key named `origin` whose Ed25519 secret is `seed` (tests use
    /// fixed seeds).
    ///
    /// # Errors
    /// An origin that cannot name a key.
    pub fn from_seed(origin: &str, seed: &[u8; 32]) -> Result<LogKey, String> {
        if !origin_is_valid(origin) {
            return Err(format!(
                "`{origin}` cannot name a log: 1 to {MAX_ORIGIN} printable bytes, no space and no `+` (for example example.com/ludo)"
            ));
        }
        let signing = ed25519_dalek::SigningKey::from_bytes(seed);
        let public = [&[1u8][..], signing.verifying_key().as_bytes()].concat();
        let id = signed_note::key_id(origin, &public);
        let private = [&[1u8][..], seed].concat();
        LogKey::from_private(&format!("PRIVATE+KEY+{origin}+{id:08x}+{}", BASE64.encode(private)))
    }

    /// The key in its private encoding (`PRIVATE+KEY+origin+keyid+base64`,
    /// the format of Go's `note` package and of `ludo log-key`).
    ///
    /// # Errors
    /// Text that is not such a key, or an Ed25519 one.
    pub fn from_private(text: &str) -> Result<LogKey, String> {
        let text = text.trim();
        let signer =
            StandardSigner::new(text).map_err(|e| format!("not a log key (PRIVATE+KEY+origin+keyid+base64 of an Ed25519 key): {e}"))?;
        let origin = signer.name().to_string();
        if !origin_is_valid(&origin) {
            return Err(format!("the key's name `{origin}` cannot name a log"));
        }
        let (_, _, _, _, encoded) = split5(text).ok_or("not a log key")?;
        let private = BASE64.decode(encoded).map_err(|_| "not a log key: bad base64")?;
        let seed: [u8; 32] = private.get(1..).and_then(|s| s.try_into().ok()).ok_or("not an Ed25519 log key")?;
        let verifying = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
        let verifier_key = signed_note::new_ed25519_verifier_key(&origin, &verifying);
        Ok(LogKey { origin, signer, verifier_key, private_key: text.to_string() })
    }

    /// The log's origin, which is also the key's name.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The public key, as a C2SP signed-note verifier key.
    #[must_use]
    pub fn verifier_key(&self) -> &str {
        &self.verifier_key
    }

    /// The private key's text (kept sealed in the store).
    #[must_use]
    pub fn private_key(&self) -> &str {
        &self.private_key
    }

    /// The key id (8 hex digits), as in every signature line.
    #[must_use]
    pub fn key_id(&self) -> String {
        format!("{:08x}", self.signer.key_id())
    }

    /// A signed checkpoint of the tree of `size` leaves whose root is `root`.
    ///
    /// # Errors
    /// Signing failed (never, for an Ed25519 key).
    pub fn sign_checkpoint(&self, size: u64, root: Hash) -> Result<String, String> {
        let checkpoint = Checkpoint::new(&self.origin, size, root, "").map_err(|e| e.to_string())?;
        let mut note = Note::new(&checkpoint.to_bytes(), &[]).map_err(|e| e.to_string())?;
        note.add_sigs(&[&self.signer]).map_err(|e| e.to_string())?;
        String::from_utf8(note.to_bytes()).map_err(|e| e.to_string())
    }
}

/// `a+b+c+d+e` split in five (a private key's parts).
fn split5(text: &str) -> Option<(&str, &str, &str, &str, &str)> {
    let mut parts = text.splitn(5, '+');
    Some((parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?))
}

/// The key id (8 hex digits) of a verifier key, if it is one.
#[must_use]
pub fn key_id_of(verifier_key: &str) -> Option<String> {
    StandardVerifier::new(verifier_key).ok().map(|v| format!("{:08x}", signed_note::Verifier::key_id(&v)))
}

/// A checkpoint whose signature checked out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SignedTree {
    /// The log's origin (the checkpoint's first line).
    pub origin: String,
    /// How many leaves the tree holds.
    pub size: u64,
    /// The tree's root hash (base64, as in the checkpoint).
    pub root: String,
}

impl SignedTree {
    fn root_hash(&self) -> Result<Hash, String> {
        decode_hash(&self.root)
    }
}

/// Opens a signed checkpoint with `verifier_key`: the note's signature by
/// that key, then the checkpoint's format, and its origin against the key's name.
///
/// # Errors
/// What is wrong, for a person.
pub fn open_checkpoint(note: &str, verifier_key: &str) -> Result<SignedTree, String> {
    if note.len() > MAX_RECEIPT_TEXT {
        return Err(format!("a checkpoint of {} bytes; at most {MAX_RECEIPT_TEXT} are read", note.len()));
    }
    let verifier = StandardVerifier::new(verifier_key).map_err(|e| format!("`{verifier_key}` is not a verifier key: {e}"))?;
    let name = signed_note::Verifier::name(&verifier).to_string();
    let parsed = Note::from_bytes(note.as_bytes()).map_err(|e| format!("the checkpoint is not a signed note: {e}"))?;
    let verifiers = VerifierList::new(vec![Box::new(verifier)]);
    parsed.verify(&verifiers).map_err(|e| match e {
        signed_note::NoteError::UnverifiedNote => "the checkpoint carries no signature by this key".to_string(),
        other => format!("the checkpoint's signature does not check out: {other}"),
    })?;
    let checkpoint = Checkpoint::from_bytes(parsed.text()).map_err(|e| format!("the signed text is not a checkpoint: {e}"))?;
    if checkpoint.origin() != name {
        return Err(format!("the checkpoint's origin `{}` is not the key's name `{name}`", checkpoint.origin()));
    }
    Ok(tree_of(&checkpoint))
}

/// The tree a checkpoint describes, without checking any signature (to
/// report what an unverifiable checkpoint claims).
#[must_use]
pub fn peek_checkpoint(note: &str) -> Option<SignedTree> {
    let parsed = Note::from_bytes(note.as_bytes()).ok()?;
    let checkpoint = Checkpoint::from_bytes(parsed.text()).ok()?;
    Some(tree_of(&checkpoint))
}

fn tree_of(checkpoint: &Checkpoint) -> SignedTree {
    SignedTree { origin: checkpoint.origin().to_string(), size: checkpoint.size(), root: encode_hash(checkpoint.hash()) }
}

/// A hash in base64 (as checkpoints and proofs carry them).
#[must_use]
pub fn encode_hash(hash: &Hash) -> String {
    BASE64.encode(hash.0)
}

/// A base64 hash back.
///
/// # Errors
/// Not 32 bytes of base64.
pub fn decode_hash(text: &str) -> Result<Hash, String> {
    let bytes = BASE64.decode(text).map_err(|_| format!("`{}` is not base64", text.chars().take(64).collect::<String>()))?;
    <[u8; 32]>::try_from(bytes.as_slice()).map(Hash).map_err(|_| "a hash is 32 bytes".to_string())
}

fn decode_proof(proof: &[String]) -> Result<Vec<Hash>, String> {
    if proof.len() > MAX_PROOF {
        return Err(format!("a proof of {} hashes; none needs more than {MAX_PROOF}", proof.len()));
    }
    proof.iter().map(|h| decode_hash(h)).collect()
}

/// Proof that a game's head is in the log: the leaf, its index, a signed
/// checkpoint of a tree holding it, the inclusion proof, and the key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The log's public key, as a C2SP signed-note verifier key
    /// (`origin+keyid+base64`): compare it with the one the server
    /// publishes at `/v1/log` (or that you pinned) before trusting it.
    pub key: String,
    /// The leaf's position in the log (from 0).
    pub leaf_index: u64,
    /// The leaf: the game's head (id, record count, last hash, outcome).
    pub leaf: String,
    /// A signed checkpoint (C2SP tlog-checkpoint in a signed note) of a
    /// tree that holds the leaf.
    pub checkpoint: String,
    /// The RFC 6962 inclusion proof of the leaf in that tree: hashes in
    /// base64, from the leaf's sibling up.
    pub inclusion: Vec<String>,
}

/// What checking a receipt found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReceiptReport {
    /// The key the receipt names.
    pub key: String,
    /// Its key id (8 hex digits), when it is a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// Whether that key is the one the verifier trusts: given on the
    /// command line or pinned earlier (`ludo verify`), or this server's own
    /// (`/v1/verify`). A receipt under another key proves only that whoever
    /// holds that key committed to the game.
    pub trusted: bool,
    /// Whether the checkpoint is signed by the key.
    pub signature: bool,
    /// The tree the checkpoint describes, once its signature checked out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<SignedTree>,
    /// The leaf's index.
    pub leaf_index: u64,
    /// Whether the leaf is exactly this game's head as re-played from the
    /// export (its id, record count, last hash and outcome).
    pub leaf_matches: bool,
    /// Whether the inclusion proof leads from the leaf to the checkpoint's root.
    pub included: bool,
}

/// Checks `receipt` for a game whose head, as re-played, is the leaf
/// `expected_leaf`. `trusted_key`, when given, is the only key accepted.
///
/// # Errors
/// The report so far and the first fault, for a person.
pub fn check_receipt(receipt: &Receipt, expected_leaf: Option<&str>, trusted_key: Option<&str>) -> (ReceiptReport, Result<(), String>) {
    let mut report = ReceiptReport::unchecked(receipt, trusted_key);
    let result = check_receipt_into(receipt, expected_leaf, trusted_key, &mut report);
    (report, result)
}

impl ReceiptReport {
    /// The report of a receipt not checked (yet): what it names, no check passed.
    #[must_use]
    pub fn unchecked(receipt: &Receipt, trusted_key: Option<&str>) -> ReceiptReport {
        ReceiptReport {
            key: receipt.key.chars().take(256).collect(),
            key_id: key_id_of(&receipt.key),
            trusted: trusted_key.is_some_and(|k| k == receipt.key),
            signature: false,
            tree: None,
            leaf_index: receipt.leaf_index,
            leaf_matches: false,
            included: false,
        }
    }
}

fn check_receipt_into(
    receipt: &Receipt,
    expected_leaf: Option<&str>,
    trusted_key: Option<&str>,
    report: &mut ReceiptReport,
) -> Result<(), String> {
    if let Some(trusted) = trusted_key
        && trusted != receipt.key
    {
        let theirs = report.key_id.clone().unwrap_or_else(|| "?".into());
        let ours = key_id_of(trusted).unwrap_or_else(|| "?".into());
        return Err(format!("the receipt is signed with key {theirs}, not with the trusted key {ours}"));
    }
    let tree = open_checkpoint(&receipt.checkpoint, &receipt.key)?;
    report.signature = true;
    report.tree = Some(tree.clone());
    if receipt.leaf.len() > MAX_RECEIPT_TEXT {
        return Err(format!("a leaf of {} bytes; at most {MAX_RECEIPT_TEXT} are read", receipt.leaf.len()));
    }
    match expected_leaf {
        Some(expected) if expected == receipt.leaf => report.leaf_matches = true,
        Some(expected) => return Err(leaf_difference(expected, &receipt.leaf)),
        None => return Err("the game is not over: no leaf can match it".into()),
    }
    check_inclusion(&receipt.leaf, receipt.leaf_index, &receipt.inclusion, &tree)?;
    report.included = true;
    Ok(())
}

/// Where the receipt's leaf departs from the re-played game's head.
fn leaf_difference(expected: &str, found: &str) -> String {
    for (want, got) in expected.lines().zip(found.lines()) {
        if want != got {
            let got: String = got.chars().take(120).collect();
            return format!("the receipt's leaf says `{got}` where the re-played game says `{want}`");
        }
    }
    "the receipt's leaf is not this game's head (it has lines more or fewer)".into()
}

/// Checks that `leaf` is leaf `index` of `tree` by the inclusion `proof`.
///
/// # Errors
/// What is wrong.
pub fn check_inclusion(leaf: &str, index: u64, proof: &[String], tree: &SignedTree) -> Result<(), String> {
    if index >= tree.size {
        return Err(format!("leaf {index} cannot be in a tree of {} leaves", tree.size));
    }
    let proof = decode_proof(proof)?;
    tlog_tiles::check_record(&proof, tree.size, tree.root_hash()?, index, record_hash(leaf.as_bytes()))
        .map_err(|_| format!("the inclusion proof does not lead from leaf {index} to the root of the tree of {} leaves", tree.size))
}

/// A proof that the tree of `from` leaves is a prefix of the tree of `to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConsistencyProof {
    /// The older tree's size.
    pub from: u64,
    /// The newer tree's size.
    pub to: u64,
    /// The RFC 6962 consistency proof: hashes in base64.
    pub proof: Vec<String>,
}

/// Checks that `new` extends `old` by `proof` (both already opened with the
/// trusted key).
///
/// # Errors
/// What is wrong.
pub fn check_consistency(old: &SignedTree, new: &SignedTree, proof: &ConsistencyProof) -> Result<(), String> {
    if old.origin != new.origin {
        return Err(format!("the checkpoints are of two logs: `{}` and `{}`", old.origin, new.origin));
    }
    if old.size > new.size {
        return Err(format!("the old checkpoint ({} leaves) is larger than the new one ({} leaves)", old.size, new.size));
    }
    if (proof.from, proof.to) != (old.size, new.size) {
        return Err(format!(
            "the proof is between trees of {} and {} leaves, the checkpoints hold {} and {}",
            proof.from, proof.to, old.size, new.size
        ));
    }
    let hashes = decode_proof(&proof.proof)?;
    if old.size == new.size {
        return if old.root != new.root {
            Err(format!("two checkpoints of {} leaves with different roots: the log forked", old.size))
        } else if hashes.is_empty() {
            Ok(())
        } else {
            Err("a proof between two equal trees has no hashes".into())
        };
    }
    if old.size == 0 {
        // Every tree extends the empty one; a proof of it has no hashes.
        return if hashes.is_empty() { Ok(()) } else { Err("a consistency proof from the empty tree has no hashes".into()) };
    }
    tlog_tiles::check_tree(&hashes, new.size, new.root_hash()?, old.size, old.root_hash()?).map_err(|_| {
        format!("the consistency proof does not show the tree of {} leaves to be a prefix of the tree of {} leaves", old.size, new.size)
    })
}

/// The stored-hash indexes a tree computation asked for that were not at
/// hand: what to fetch before running it again.
#[derive(Debug, Default)]
pub struct Missing(RefCell<Vec<u64>>);

impl Missing {
    /// The indexes asked for and not found, sorted, once each.
    #[must_use]
    pub fn take(&self) -> Vec<u64> {
        let mut missing = self.0.take();
        missing.sort_unstable();
        missing.dedup();
        missing
    }
}

/// A [`HashReader`] over hashes at hand (`layers`, searched in order): an
/// index found in none is noted in `missing` and the read fails, so the
/// caller fetches what is missing and runs the computation again. (The
/// `tlog_tiles` computations each read their hashes in one call, so one
/// fetch is all a computation ever needs.)
pub struct AtHand<'a> {
    /// Where hashes are looked up.
    pub layers: &'a [&'a HashMap<u64, Hash>],
    /// What was asked for and not found.
    pub missing: &'a Missing,
}

impl HashReader for AtHand<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        let mut found = Vec::with_capacity(indexes.len());
        let mut lacking = false;
        for index in indexes {
            match self.layers.iter().find_map(|layer| layer.get(index)) {
                Some(hash) => found.push(*hash),
                None => {
                    self.missing.0.borrow_mut().push(*index);
                    lacking = true;
                }
            }
        }
        if lacking { Err(tlog_tiles::Error::IndexesNotInTree) } else { Ok(found) }
    }
}

/// The leaf whose append stored the hash at stored-hash `index`, and the
/// hash's place among the hashes stored with that leaf.
#[must_use]
pub fn stored_by(index: u64) -> (u64, usize) {
    let (level, n) = tlog_tiles::split_stored_hash_index(index);
    let leaf = ((n + 1) << level) - 1;
    (leaf, (index - stored_hash_index(0, leaf)) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> LogKey {
        LogKey::from_seed("example.com/ludo", &[7; 32]).unwrap()
    }

    #[test]
    fn a_key_round_trips_through_its_private_text() {
        let key = key();
        let again = LogKey::from_private(key.private_key()).unwrap();
        assert_eq!(again.verifier_key(), key.verifier_key());
        assert_eq!(again.origin(), "example.com/ludo");
        assert!(key.verifier_key().starts_with(&format!("example.com/ludo+{}+", key.key_id())));
        assert_eq!(key_id_of(key.verifier_key()), Some(key.key_id()));
        assert!(LogKey::from_seed("has space", &[1; 32]).is_err());
        assert!(LogKey::from_seed("a+b", &[1; 32]).is_err());
        assert!(LogKey::from_private("PRIVATE+KEY+x+00000000+AAAA").is_err());
    }

    #[test]
    fn a_checkpoint_opens_with_its_key_only() {
        let key = key();
        let note = key.sign_checkpoint(3, Hash([9; 32])).unwrap();
        assert!(note.starts_with("example.com/ludo\n3\n"), "{note}");
        let tree = open_checkpoint(&note, key.verifier_key()).unwrap();
        assert_eq!((tree.size, tree.root.as_str()), (3, BASE64.encode([9; 32]).as_str()));
        let other = LogKey::from_seed("example.com/ludo", &[8; 32]).unwrap();
        assert!(open_checkpoint(&note, other.verifier_key()).is_err());
        let tampered = note.replacen("\n3\n", "\n4\n", 1);
        assert!(open_checkpoint(&tampered, key.verifier_key()).is_err());
    }

    #[test]
    fn a_leaf_names_every_fact_of_the_head() {
        let head = GameHead {
            game_id: "g".into(),
            records: 9,
            last_hash: "ab".into(),
            ending: Some(Ending::Finished {
                result: Outcome { scores: vec![3, -1], winners: vec![Seat(0)] },
                forfeits: vec![(Seat(1), "timed_out")],
            }),
            imported: None,
        };
        let leaf = head.leaf().unwrap();
        assert_eq!(
            leaf,
            "ludotheque/game-head/v1\ngame g\nrecords 9\nlast ab\noutcome finished\nscores 3 -1\nwinners 0\nforfeits 1:timed_out\n"
        );
        assert_eq!(leaf_game(&leaf), Some("g"));
        let cancelled = GameHead { ending: Some(Ending::Cancelled), ..head.clone() };
        assert!(cancelled.leaf().unwrap().ends_with("outcome cancelled\n"));
        let running = GameHead { ending: None, ..head.clone() };
        assert_eq!(running.leaf(), None);
    }

    #[test]
    fn an_imported_game_s_leaf_says_so_and_names_its_origin() {
        let ending = Some(Ending::Finished { result: Outcome { scores: vec![3, -1], winners: vec![Seat(0)] }, forfeits: vec![] });
        let head = GameHead { game_id: "g".into(), records: 9, last_hash: "ab".into(), ending, imported: None };
        let played = head.leaf().unwrap();
        let key = key();
        let signed = GameHead { imported: Some(Imported { key: Some(key.verifier_key().into()) }), ..head.clone() }.leaf().unwrap();
        assert_eq!(
            signed,
            format!(
                "ludotheque/imported-game-head/v1\ngame g\nrecords 9\nlast ab\norigin key {}\noutcome finished\nscores 3 -1\nwinners 0\nforfeits\n",
                key.verifier_key()
            )
        );
        let unknown = GameHead { imported: Some(Imported { key: None }), ..head }.leaf().unwrap();
        assert!(unknown.starts_with("ludotheque/imported-game-head/v1\n") && unknown.contains("\norigin unknown\n"), "{unknown}");
        // No imported leaf is ever the leaf of the same game played here.
        assert_ne!(signed, played);
        assert_ne!(unknown, played);
        assert_eq!((leaf_game(&signed), leaf_game(&unknown)), (Some("g"), Some("g")));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Whatever sizes, indexes and proofs a bundle or a client claims,
        /// checking them answers (almost always "no"), never panics.
        #[test]
        fn proof_checks_never_panic(size in proptest::num::u64::ANY, index in proptest::num::u64::ANY, old in proptest::num::u64::ANY, hashes in 0..=MAX_PROOF, byte in proptest::num::u8::ANY) {
            let proof: Vec<String> = (0..hashes).map(|i| encode_hash(&Hash([byte.wrapping_add(i as u8); 32]))).collect();
            let tree = SignedTree { origin: "o".into(), size, root: encode_hash(&Hash([byte; 32])) };
            let _ = check_inclusion("leaf", index, &proof, &tree);
            let older = SignedTree { origin: "o".into(), size: old, root: encode_hash(&Hash([!byte; 32])) };
            let _ = check_consistency(&older, &tree, &ConsistencyProof { from: old, to: size, proof: proof.clone() });
            let small = SignedTree { size: size % 64, ..tree.clone() };
            let _ = check_inclusion("leaf", index % 64, &proof, &small);
            let small_old = SignedTree { size: old % 64, ..older };
            let _ = check_consistency(&small_old, &small, &ConsistencyProof { from: old % 64, to: size % 64, proof });
        }
    }

    #[test]
    fn stored_by_finds_the_leaf_that_stored_each_hash() {
        // Leaf n stores its own hash and one per subtree it completes.
        let mut next = 0;
        for leaf in 0..64_u64 {
            assert_eq!(stored_hash_index(0, leaf), next);
            let count = stored_hash_count(leaf + 1) - stored_hash_count(leaf);
            for place in 0..count {
                assert_eq!(stored_by(next + place), (leaf, place as usize));
            }
            next += count;
        }
    }
}
