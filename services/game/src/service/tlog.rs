//! The transparency log of games, kept through the event-store contract
//! (see [`ludo_transparency`] for what it proves).
//!
//! # How it is stored
//! Two streams with reserved ids (no game id can name them: see `ids`):
//!
//! - **the key stream** (`ffffffff-ffff-ffff-ffff-fffffffffffe`): record 0
//!   names the log's origin and public key; its sealed side data holds the
//!   private key when the server made it (not when the operator gives it
//!   from a file). Created once, by the first server to start: the store's
//!   expected-length check lets exactly one of several replicas create it,
//!   and the others read it back.
//! - **the log stream** (`ffffffff-ffff-ffff-ffff-ffffffffffff`): record `n`
//!   is leaf `n`, with the tree hashes stored when it was added (the
//!   `tlog` scheme: the leaf's hash and one per subtree it completes, about
//!   two per leaf), and the last record of every append carries the signed
//!   checkpoint of the tree it completes. An append of leaves is one store
//!   append at the tree's size: two servers that add leaves at once cannot
//!   both succeed, so the tree (and every checkpoint) is one linear history
//!   on every backend. The loser catches up and signs again; a checkpoint it
//!   signed for the losing append is dropped unseen.
//!
//! A game's leaf is added once the game is over (`ended`), before the
//! answer to the move that ended it, and its place (`logged`: leaf index and
//! the size of the checkpoint its receipt is against) is written into the
//! game's summary. A server that crashed in between leaves a finished game
//! without one; the sweep at start (and every 30 s on a shared store) adds
//! those. Receipts are rebuilt from the log on demand and cached with the game.
//!
//! Proofs read the stored hashes they need from the log stream (a proof at
//! a million leaves reads about 40), keeping those read in a bounded cache:
//! they never change.
//!
//! # How it is checked
//! Opening reads the last checkpoint and the stored roots of the tree's
//! complete subtrees (`check_head`), every proof is checked before it is
//! answered, and the whole tree is re-hashed once in the background
//! (`check_tree`). A tree found altered stops the log adding leaves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use ludo_storage::{AppendRequest, EventStore, StoreError, StreamId};
use serde::{Deserialize, Serialize};
use tlog_tiles::Hash;

use crate::error::ServiceError;
use ludo_transparency::{
    self as transparency, AtHand, ConsistencyProof, LogKey, Missing, Receipt, SignedTree, encode_hash, stored_hash_index,
};

use super::commit::{Committed, Heard, Subscriber};
use super::ids::{GameId, game_id};
use super::listing::StoredSummary;
use super::{Current, GameService, Slot, blocking, timestamp};

/// The log stream's id (the largest UUID).
pub(super) const LOG_STREAM: StreamId = StreamId([0xff; 16]);
/// The key stream's id.
pub(super) const KEY_STREAM: StreamId =
    StreamId([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]);

/// Whether `stream` is one of the transparency log's own (or reserved for
/// it): never a game.
#[must_use]
pub fn is_reserved(stream: StreamId) -> bool {
    stream.0[..15].iter().all(|&b| b == 0xff)
}

/// Most leaves one append adds (what waits beyond goes in the next).
const MAX_BATCH: usize = 512;
/// Leaves read per page when the tree is checked at start.
const CHECK_PAGE: u64 = 4096;
/// Stored hashes kept in memory at most (about 40 bytes each).
const MAX_CACHED_HASHES: usize = 1 << 20;
/// The key record's format.
const KEY_FORMAT: u32 = 1;

/// How the operator sets up the log.
#[derive(Clone, Debug, Default)]
pub struct LogSettings {
    /// The log's origin (and key name); `None`: the one the store already
    /// has, or [`transparency::default_origin`] for a new log.
    pub origin: Option<String>,
    /// The signing key, when the operator gives it (replicas that must not
    /// keep it in the database); `None`: the key kept in the store, made at
    /// first start.
    pub key: Option<LogKey>,
}

/// Record 0 of the key stream.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyRecord {
    format: u32,
    origin: String,
    /// The C2SP verifier key.
    key: String,
    created_at: String,
}

/// One record of the log stream: a leaf and the hashes stored with it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    leaf: String,
    /// Base64, from stored-hash index `stored_hash_index(0, n)` on.
    hashes: Vec<String>,
    /// The signed checkpoint of the tree this record completes (on the last
    /// record of each append).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checkpoint: Option<String>,
}

impl Entry {
    fn from_bytes(seq: u64, bytes: &[u8]) -> Result<Entry, ServiceError> {
        serde_json::from_slice(bytes).map_err(|e| log_corrupt(seq, format!("not a log entry: {e}")))
    }
}

fn log_corrupt(seq: u64, reason: impl Into<String>) -> ServiceError {
    ServiceError::CorruptLog { game: "transparency log".into(), seq, reason: reason.into() }
}

/// The log's public face: what `/v1/log` answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LogInfo {
    /// The log's origin (the first line of its checkpoints, and its key's name).
    pub origin: String,
    /// The public key as a C2SP signed-note verifier key
    /// (`origin+keyid+base64(0x01 ‖ Ed25519 public key)`): what `ludo
    /// verify --key` takes.
    pub key: String,
    /// The key id (8 hex digits), as in each checkpoint's signature line.
    pub key_id: String,
    /// The latest signed checkpoint (C2SP tlog-checkpoint in a signed
    /// note); absent while the log is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// The tree it signs: size and root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<SignedTree>,
}

/// Where the tree stands.
#[derive(Debug, Clone)]
struct Head {
    size: u64,
    checkpoint: Option<String>,
}

/// The transparency log, as one server keeps it (the service opens one;
/// benchmarks and tools may open one over any store).
pub struct TransparencyLog {
    store: Arc<dyn EventStore>,
    key: LogKey,
    /// The appender's lock and the tree as this server last knew it.
    head: tokio::sync::Mutex<Head>,
    /// The latest head, for readers (never behind what this server appended).
    latest: RwLock<Head>,
    /// Leaves waiting for the appender: each with where to send its index
    /// and the checkpoint (the size of the tree that includes it).
    #[allow(clippy::type_complexity)]
    pending: Mutex<Vec<(String, tokio::sync::oneshot::Sender<Result<(u64, u64), ServiceError>>)>>,
    /// Stored hashes read or written (they never change).
    cache: Mutex<HashMap<u64, Hash>>,
    /// Set when the stored tree was found altered (see [`Self::damage`]).
    damage: std::sync::OnceLock<ServiceError>,
}

impl std::fmt::Debug for TransparencyLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransparencyLog").field("key", &self.key).finish_non_exhaustive()
    }
}

impl TransparencyLog {
    /// Opens the log in `store`: loads its key (making it at first start),
    /// then checks the stored tree against its last signed checkpoint
    /// (`check_head`): a few dozen reads, however long the log. A
    /// server whose tree disagrees must not start: it would sign
    /// checkpoints inconsistent with those it published. The whole tree,
    /// leaf by leaf, is [`Self::check_tree`].
    ///
    /// # Errors
    /// A key that does not match the store's, a tree that disagrees with
    /// its last checkpoint, storage errors.
    pub async fn open(store: Arc<dyn EventStore>, settings: &LogSettings, now: String) -> Result<TransparencyLog, ServiceError> {
        let key = load_key(&store, settings, now).await?;
        let size = {
            let store = Arc::clone(&store);
            blocking(move || store.next_seq(LOG_STREAM)).await??
        };
        let log = TransparencyLog {
            store,
            key,
            head: tokio::sync::Mutex::new(Head { size: 0, checkpoint: None }),
            latest: RwLock::new(Head { size: 0, checkpoint: None }),
            pending: Mutex::default(),
            cache: Mutex::default(),
            damage: std::sync::OnceLock::new(),
        };
        if size > 0 {
            let head = log.check_head(size).await?;
            tracing::info!(origin = log.key.origin(), key_id = %log.key.key_id(), leaves = size, "transparency log opened: its tree agrees with its last checkpoint");
            *log.head.lock().await = head.clone();
            *log.latest.write().expect("latest lock") = head;
        } else {
            tracing::info!(origin = log.key.origin(), key_id = %log.key.key_id(), "transparency log opened (empty)");
        }
        Ok(log)
    }

    /// The tree of `size` leaves as stored against its last checkpoint: the
    /// last leaf carries one, it opens with this log's key, it signs `size`
    /// leaves, the last leaf's text is the leaf its stored hash is of, and
    /// the root computed from the stored hashes of the tree's complete
    /// subtrees (about log2 `size` of them) is the root it signs.
    ///
    /// Those hashes are all that every later root is computed from (an
    /// append only adds subtrees on their right), so a server that starts
    /// past this check signs only trees that extend the one it published.
    /// A stored hash inside a complete subtree is read only by proofs,
    /// which are checked against their checkpoint before they are served
    /// ([`Self::receipt`]), and by [`Self::check_tree`].
    async fn check_head(&self, size: u64) -> Result<Head, ServiceError> {
        let last = self.entry(size - 1).await?;
        let Some(checkpoint) = last.checkpoint else {
            return Err(log_corrupt(size - 1, "the tree's last leaf carries no checkpoint: the log was cut or written by something else"));
        };
        let signed = self.signed_root(&checkpoint, size - 1)?;
        if last.hashes.first() != Some(&encode_hash(&transparency::record_hash(last.leaf.as_bytes()))) {
            return Err(log_corrupt(size - 1, "the hash stored with this leaf is not the leaf's: the tree was altered"));
        }
        let root = self.compute(&HashMap::new(), |r| tlog_tiles::tree_hash(size, r)).await?;
        not_altered(size - 1, root, signed)?;
        Ok(Head { size, checkpoint: Some(checkpoint) })
    }

    /// The whole tree as stored, as far as it stood when asked, against
    /// every checkpoint stored in it; answers how many leaves were checked.
    /// It reads every leaf, so it is not run before a server starts (about
    /// 6 s per million leaves): the service runs it once in the background
    /// after the log opens. A tree found altered is marked damaged (see
    /// [`Self::damage`]).
    ///
    /// # Errors
    /// A tree that disagrees with a checkpoint stored in it; storage errors.
    pub async fn check_tree(&self) -> Result<u64, ServiceError> {
        let size = self.latest.read().expect("latest lock").size;
        if size == 0 {
            return Ok(0);
        }
        match self.check_stored_tree(size).await {
            Ok(head) => Ok(head.size),
            Err(err @ ServiceError::CorruptLog { .. }) => Err(self.damaged(err)),
            Err(err) => Err(err),
        }
    }

    /// Why this log adds no more leaves: its stored tree was found altered
    /// (by [`Self::check_tree`], or by a proof that did not hold). Nothing
    /// is signed over a damaged tree until an operator restores the log
    /// and restarts the server.
    pub fn damage(&self) -> Option<&ServiceError> {
        self.damage.get()
    }

    /// Marks the log damaged (see [`Self::damage`]); answers `err`.
    fn damaged(&self, err: ServiceError) -> ServiceError {
        if self.damage.set(err.clone()).is_ok() {
            tracing::error!(%err, "the transparency log's stored tree was altered: no leaf is added to it until it is restored");
        }
        err
    }

    /// Every checkpoint stored in the log (the last leaf must carry one),
    /// opened with this log's key, against the tree as stored: every leaf
    /// is hashed again, every stored hash recomputed from the leaves, and
    /// the root at each checkpoint from them; it must be the root the
    /// checkpoint signs. One pass over the log, in pages, keeping only the
    /// roots of the complete subtrees (log2 of the size of them).
    async fn check_stored_tree(&self, size: u64) -> Result<Head, ServiceError> {
        let mut frontier: Vec<(u8, Hash)> = Vec::new();
        let mut last = None;
        let mut n = 0;
        while n < size {
            let page = self.store.read(LOG_STREAM, n, Some((n + CHECK_PAGE).min(size))).await?;
            if page.is_empty() {
                return Err(log_corrupt(n, "the log stream ends before its length"));
            }
            for record in page {
                let entry = Entry::from_bytes(record.seq, &record.bytes)?;
                let mut hash = transparency::record_hash(entry.leaf.as_bytes());
                let mut stored = vec![hash];
                let mut level = 0;
                while frontier.last().is_some_and(|&(top, _)| top == level) {
                    let (_, left) = frontier.pop().expect("just looked");
                    hash = tlog_tiles::node_hash(left, hash);
                    stored.push(hash);
                    level += 1;
                }
                frontier.push((level, hash));
                let written: Vec<String> = stored.iter().map(encode_hash).collect();
                if written != entry.hashes {
                    return Err(log_corrupt(
                        record.seq,
                        "the hashes stored with this leaf are not those of the leaves: the tree was altered",
                    ));
                }
                // Every checkpoint stored on the way (older games' receipts
                // carry them) must sign the tree as it stood there.
                if let Some(checkpoint) = &entry.checkpoint {
                    let signed = self.signed_root(checkpoint, record.seq)?;
                    not_altered(record.seq, root_of(&frontier), signed)?;
                }
                n = record.seq + 1;
                last = Some(entry);
            }
        }
        // The last leaf ends an append, so it carries a checkpoint (checked above).
        let last = last.ok_or_else(|| log_corrupt(0, "an empty log with a length"))?;
        let Some(checkpoint) = last.checkpoint else {
            return Err(log_corrupt(size - 1, "the tree's last leaf carries no checkpoint: the log was cut or written by something else"));
        };
        Ok(Head { size, checkpoint: Some(checkpoint) })
    }

    /// The log's signing key.
    #[must_use]
    pub fn key(&self) -> &LogKey {
        &self.key
    }

    /// What `/v1/log` shows.
    #[must_use]
    pub fn info(&self) -> LogInfo {
        let latest = self.latest.read().expect("latest lock").clone();
        let tree = latest.checkpoint.as_deref().and_then(transparency::peek_checkpoint);
        LogInfo {
            origin: self.key.origin().to_string(),
            key: self.key.verifier_key().to_string(),
            key_id: self.key.key_id(),
            checkpoint: latest.checkpoint,
            tree,
        }
    }

    /// Adds `leaf` to the tree; answers its index and the size of the tree
    /// whose checkpoint first includes it. Leaves added by several tasks at
    /// once share one append. The append runs in a task of its own: a
    /// caller that goes away (a client that hangs up) cancels neither its
    /// leaf nor the others' in the same append.
    ///
    /// # Errors
    /// Storage errors; a log another server corrupted.
    pub async fn append(self: &Arc<Self>, leaf: String) -> Result<(u64, u64), ServiceError> {
        let (sent, answer) = tokio::sync::oneshot::channel();
        self.pending.lock().expect("pending lock").push((leaf, sent));
        let log = Arc::clone(self);
        tokio::spawn(async move { log.flush().await });
        answer.await.map_err(|_| ServiceError::Internal("the log's appender stopped".into()))?
    }

    /// Appends every pending leaf (the holder of the head's lock appends
    /// what all the others left pending).
    async fn flush(&self) {
        {
            let mut head = self.head.lock().await;
            loop {
                let batch: Vec<_> = {
                    let mut pending = self.pending.lock().expect("pending lock");
                    let take = pending.len().min(MAX_BATCH);
                    pending.drain(..take).collect()
                };
                if batch.is_empty() {
                    break;
                }
                let leaves: Vec<&str> = batch.iter().map(|(leaf, _)| leaf.as_str()).collect();
                let outcome = self.append_batch(&mut head, &leaves).await;
                for (i, (_, sent)) in batch.into_iter().enumerate() {
                    let _ = sent.send(outcome.clone().map(|(first, size)| (first + i as u64, size)));
                }
            }
        }
    }

    /// One append of `leaves` at the tree's size, caught up and tried again
    /// when another server appended first.
    async fn append_batch(&self, head: &mut Head, leaves: &[&str]) -> Result<(u64, u64), ServiceError> {
        if let Some(damage) = self.damage() {
            return Err(damage.clone());
        }
        loop {
            let size = head.size;
            let mut overlay: HashMap<u64, Hash> = HashMap::new();
            let mut entries = Vec::with_capacity(leaves.len());
            for (i, leaf) in leaves.iter().enumerate() {
                let n = size + i as u64;
                let hashes = self.compute(&overlay, |r| tlog_tiles::stored_hashes(n, leaf.as_bytes(), r)).await?;
                let first = stored_hash_index(0, n);
                for (j, hash) in hashes.iter().enumerate() {
                    overlay.insert(first + j as u64, *hash);
                }
                entries.push(Entry { leaf: (*leaf).to_string(), hashes: hashes.iter().map(encode_hash).collect(), checkpoint: None });
            }
            let new_size = size + leaves.len() as u64;
            let root = self.compute(&overlay, |r| tlog_tiles::tree_hash(new_size, r)).await?;
            let checkpoint = self.key.sign_checkpoint(new_size, root).map_err(ServiceError::Internal)?;
            if let Some(last) = entries.last_mut() {
                last.checkpoint = Some(checkpoint.clone());
            }
            let records = entries.iter().map(|e| serde_json::to_vec(e).expect("log entries serialize")).collect();
            match self.store.append(AppendRequest::at(LOG_STREAM, size, records)).await {
                Ok(_) => {
                    self.remember(overlay);
                    *head = Head { size: new_size, checkpoint: Some(checkpoint) };
                    self.publish(head);
                    return Ok((size, new_size));
                }
                Err(StoreError::Conflict { actual_next, .. }) if actual_next > size => {
                    // Another server added leaves: take its tree as ours,
                    // once its checkpoint opens with the log's key.
                    let last = self.entry(actual_next - 1).await?;
                    let checkpoint = last.checkpoint.ok_or_else(|| log_corrupt(actual_next - 1, "an append ended without a checkpoint"))?;
                    self.signed_root(&checkpoint, actual_next - 1)?;
                    *head = Head { size: actual_next, checkpoint: Some(checkpoint) };
                    self.publish(head);
                }
                Err(err) => return Err(err.into()),
            }
        }
    }

    fn publish(&self, head: &Head) {
        let mut latest = self.latest.write().expect("latest lock");
        if head.size >= latest.size {
            *latest = head.clone();
        }
    }

    fn remember(&self, hashes: HashMap<u64, Hash>) {
        let mut cache = self.cache.lock().expect("cache lock");
        if cache.len() + hashes.len() > MAX_CACHED_HASHES {
            cache.clear();
        }
        cache.extend(hashes);
    }

    /// Runs a tree computation, fetching the stored hashes it needs that
    /// are neither in `overlay` (not yet stored) nor cached.
    async fn compute<T>(
        &self,
        overlay: &HashMap<u64, Hash>,
        work: impl Fn(&AtHand<'_>) -> Result<T, tlog_tiles::Error>,
    ) -> Result<T, ServiceError> {
        let mut fetched: HashMap<u64, Hash> = HashMap::new();
        for _ in 0..3 {
            let missing = Missing::default();
            let outcome = {
                let cache = self.cache.lock().expect("cache lock");
                work(&AtHand { layers: &[overlay, &fetched, &cache], missing: &missing })
            };
            let wanted = missing.take();
            match outcome {
                Ok(value) => return Ok(value),
                Err(_) if !wanted.is_empty() => {
                    let hashes = self.stored_hashes(&wanted).await?;
                    fetched.extend(wanted.iter().copied().zip(hashes));
                }
                Err(err) => return Err(log_corrupt(0, format!("a tree computation failed: {err}"))),
            }
        }
        Err(ServiceError::Internal("a tree computation kept asking for more hashes".into()))
    }

    /// The stored hashes at `indexes` (those a computation found neither
    /// at hand nor cached), read from the leaves that stored them, and cached.
    async fn stored_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, ServiceError> {
        let mut by_leaf: HashMap<u64, Vec<(u64, usize)>> = HashMap::new();
        for &index in indexes {
            let (leaf, place) = transparency::stored_by(index);
            by_leaf.entry(leaf).or_default().push((index, place));
        }
        // The leaves are read at once (a proof at a million leaves needs ~40).
        let mut reads = tokio::task::JoinSet::new();
        for &leaf in by_leaf.keys() {
            let store = Arc::clone(&self.store);
            reads.spawn(async move { store.read(LOG_STREAM, leaf, Some(leaf + 1)).await.map(|records| (leaf, records)) });
        }
        let mut read = HashMap::new();
        while let Some(outcome) = reads.join_next().await {
            let (leaf, records) = outcome.map_err(|e| ServiceError::Internal(format!("a log read failed: {e}")))??;
            let record = records.into_iter().next().ok_or_else(|| log_corrupt(leaf, "a leaf the tree needs is missing"))?;
            let entry = Entry::from_bytes(leaf, &record.bytes)?;
            for &(index, place) in &by_leaf[&leaf] {
                let text = entry.hashes.get(place).ok_or_else(|| log_corrupt(leaf, "a stored hash is missing"))?;
                let hash = transparency::decode_hash(text).map_err(|reason| log_corrupt(leaf, reason))?;
                read.insert(index, hash);
            }
        }
        self.remember(read.clone());
        indexes.iter().map(|index| read.get(index).copied().ok_or_else(|| log_corrupt(0, "a stored hash was not read"))).collect()
    }

    /// Record `n` of the log stream.
    async fn entry(&self, n: u64) -> Result<Entry, ServiceError> {
        let records = self.store.read(LOG_STREAM, n, Some(n + 1)).await?;
        let record = records.into_iter().next().ok_or_else(|| log_corrupt(n, "no such leaf"))?;
        Entry::from_bytes(n, &record.bytes)
    }

    /// The receipt of leaf `index` against the checkpoint of `size` leaves
    /// (stored with the leaf that completed that tree).
    ///
    /// # Errors
    /// Storage errors; `internal` for a leaf not in that tree.
    pub async fn receipt(&self, index: u64, size: u64) -> Result<Receipt, ServiceError> {
        if index >= size {
            return Err(ServiceError::Internal(format!("leaf {index} is not in a tree of {size} leaves")));
        }
        let (leaf, last) = tokio::try_join!(self.entry(index), self.entry(size - 1))?;
        let checkpoint = last.checkpoint.ok_or_else(|| log_corrupt(size - 1, "no checkpoint was stored for this tree size"))?;
        let proof = self.compute(&HashMap::new(), |r| tlog_tiles::prove_record(size, index, r)).await?;
        // Only a proof that holds leaves the server: the hashes it was made
        // from were not all checked when the log opened (see `check_head`).
        let root = self.signed_root(&checkpoint, size - 1)?;
        if tlog_tiles::check_record(&proof, size, root, index, transparency::record_hash(leaf.leaf.as_bytes())).is_err() {
            return Err(self.damaged(log_corrupt(
                index,
                format!("the stored tree does not prove leaf {index} in its checkpoint of {size} leaves: the tree was altered"),
            )));
        }
        Ok(Receipt {
            key: self.key.verifier_key().to_string(),
            leaf_index: index,
            leaf: leaf.leaf,
            checkpoint,
            inclusion: proof.iter().map(encode_hash).collect(),
        })
    }

    /// The proof that the tree of `from` leaves is a prefix of the tree of `to`.
    ///
    /// # Errors
    /// `invalid_input` unless `from <= to <=` the log's size; storage errors.
    pub async fn consistency(&self, from: u64, to: u64) -> Result<ConsistencyProof, ServiceError> {
        let size = self.latest.read().expect("latest lock").size;
        let size = if to > size {
            blocking({
                let store = Arc::clone(&self.store);
                move || store.next_seq(LOG_STREAM)
            })
            .await??
        } else {
            size
        };
        if from > to || to > size {
            // The field at fault: `to` past the log, else `from` past `to`.
            return Err(ServiceError::invalid(
                if to > size { "to" } else { "from" },
                format!("a consistency proof needs 0 <= from <= to <= {size} (the log's size), not from = {from}, to = {to}"),
            ));
        }
        let proof = if from == 0 || from == to {
            Vec::new()
        } else {
            let proof = self.compute(&HashMap::new(), |r| tlog_tiles::prove_tree(to, from, r)).await?;
            self.check_consistency(&proof, from, to).await?;
            proof
        };
        Ok(ConsistencyProof { from, to, proof: proof.iter().map(encode_hash).collect() })
    }

    /// Whether `proof` holds between the checkpoints of `from` and `to`
    /// leaves, when both were signed (the trees a client can hold): it was
    /// made from stored hashes that were not all checked when the log
    /// opened (see `check_head`). Between other sizes no signed root
    /// exists to hold it against.
    async fn check_consistency(&self, proof: &tlog_tiles::TreeProof, from: u64, to: u64) -> Result<(), ServiceError> {
        let (older, newer) = tokio::try_join!(self.entry(from - 1), self.entry(to - 1))?;
        let (Some(older), Some(newer)) = (older.checkpoint, newer.checkpoint) else { return Ok(()) };
        let (older, newer) = (self.signed_root(&older, from - 1)?, self.signed_root(&newer, to - 1)?);
        if tlog_tiles::check_tree(proof, to, newer, from, older).is_err() {
            return Err(self.damaged(log_corrupt(
                to - 1,
                format!("the stored tree does not prove its checkpoint of {from} leaves a prefix of its checkpoint of {to}: the tree was altered"),
            )));
        }
        Ok(())
    }

    /// The root the checkpoint stored with leaf `seq` signs: it opens with
    /// the log's key, and signs the tree of the `seq + 1` leaves that leaf
    /// completes.
    fn signed_root(&self, checkpoint: &str, seq: u64) -> Result<Hash, ServiceError> {
        let signed = transparency::open_checkpoint(checkpoint, self.key.verifier_key())
            .map_err(|reason| log_corrupt(seq, format!("a stored checkpoint does not open with the log's key: {reason}")))?;
        if signed.size != seq + 1 {
            return Err(log_corrupt(seq, format!("a checkpoint of {} leaves stored with leaf {seq}", signed.size)));
        }
        transparency::decode_hash(&signed.root).map_err(|reason| log_corrupt(seq, reason))
    }
}

/// `root`, computed from the stored tree of `seq + 1` leaves, is the root
/// its checkpoint signed.
fn not_altered(seq: u64, root: Hash, signed: Hash) -> Result<(), ServiceError> {
    if root == signed {
        return Ok(());
    }
    Err(log_corrupt(
        seq,
        format!(
            "the stored tree's root {} is not the root {} its checkpoint of {} leaves signed: the tree was altered",
            encode_hash(&root),
            encode_hash(&signed),
            seq + 1
        ),
    ))
}

/// The root of a tree from the roots of its complete subtrees, largest first.
fn root_of(frontier: &[(u8, Hash)]) -> Hash {
    frontier.iter().rev().map(|&(_, hash)| hash).reduce(|right, left| tlog_tiles::node_hash(left, right)).unwrap_or(tlog_tiles::EMPTY_HASH)
}

/// The log's key: the one in the store, the operator's (recorded in the
/// store at first start), or a new one made and sealed in the store.
async fn load_key(store: &Arc<dyn EventStore>, settings: &LogSettings, now: String) -> Result<LogKey, ServiceError> {
    let refuse = |reason: String| ServiceError::Internal(format!("the transparency log's key: {reason}"));
    if let (Some(origin), Some(key)) = (&settings.origin, &settings.key)
        && origin != key.origin()
    {
        return Err(refuse(format!("--log-origin is `{origin}` but the key given is named `{}`", key.origin())));
    }
    for _ in 0..2 {
        let stored = store.read(KEY_STREAM, 0, Some(1)).await?;
        if let Some(record) = stored.first() {
            let record: KeyRecord =
                serde_json::from_slice(&record.bytes).map_err(|e| log_corrupt(0, format!("the key record does not read: {e}")))?;
            if record.format != KEY_FORMAT {
                return Err(refuse(format!("the store's key record has format {}, this server reads {KEY_FORMAT}", record.format)));
            }
            if let Some(origin) = &settings.origin
                && *origin != record.origin
            {
                return Err(refuse(format!(
                    "the store's log is `{}`, not `{origin}`: a log's origin never changes (drop --log-origin, or use another store)",
                    record.origin
                )));
            }
            let key = match &settings.key {
                Some(key) => key.clone(),
                None => {
                    let sealed = store.sealed(KEY_STREAM).await?.ok_or_else(|| {
                        refuse("the store's log was started with a key from a file, which this server was not given (--log-key)".into())
                    })?;
                    let text = String::from_utf8(sealed).map_err(|_| log_corrupt(0, "the sealed key is not text"))?;
                    LogKey::from_private(&text).map_err(|reason| log_corrupt(0, reason))?
                }
            };
            if key.verifier_key() != record.key {
                return Err(refuse(format!(
                    "the key given (id {}) is not the store's log key (id {}): checkpoints signed by both could not be checked against each other",
                    key.key_id(),
                    transparency::key_id_of(&record.key).unwrap_or_default()
                )));
            }
            return Ok(key);
        }
        // A new log: the operator's key, or a new one kept sealed in the store.
        let (key, sealed) = match &settings.key {
            Some(key) => (key.clone(), None),
            None => {
                let origin = match &settings.origin {
                    Some(origin) => origin.clone(),
                    None => transparency::default_origin().map_err(refuse)?,
                };
                let key = LogKey::generate(&origin).map_err(refuse)?;
                let sealed = key.private_key().as_bytes().to_vec();
                (key, Some(sealed))
            }
        };
        let record = KeyRecord {
            format: KEY_FORMAT,
            origin: key.origin().to_string(),
            key: key.verifier_key().to_string(),
            created_at: now.clone(),
        };
        let bytes = serde_json::to_vec(&record).expect("key records serialize");
        match store.append(AppendRequest::create(KEY_STREAM, vec![bytes], sealed)).await {
            Ok(_) => {
                tracing::info!(origin = key.origin(), key_id = %key.key_id(), "the transparency log's key was made");
                return Ok(key);
            }
            // Another server made it first: read theirs.
            Err(StoreError::Conflict { .. }) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Err(refuse("the key record could not be written nor read".into()))
}

/// Adds a game that a record ended to the transparency log, before the
/// command that ended it is answered (its receipt is in the answer). A
/// failure is logged, not answered: the record is durable, and the sweep
/// adds the leaf later.
pub(super) struct EndedGames;

impl Subscriber for EndedGames {
    fn name(&self) -> &'static str {
        "transparency_log"
    }

    fn committed<'a>(&'a self, service: &'a GameService, commit: &'a Committed) -> Heard<'a> {
        if !commit.ended_game() {
            return Box::pin(std::future::ready(()));
        }
        Box::pin(async move {
            match service.receipt_of(&commit.slot, &commit.now).await {
                Ok(receipt) => {
                    let _ = commit.receipt.set(receipt);
                }
                Err(err) => {
                    tracing::warn!(%err, game = %commit.slot.meta.id, "a game that ended was not added to the transparency log; the sweep will");
                }
            }
        })
    }
}

/// The service's transparency log: how it is opened, and once open, the
/// log (opened on first use: at start by `ludo serve`, or when the first
/// game ends).
#[derive(Default)]
pub(super) struct Keeper {
    settings: LogSettings,
    log: tokio::sync::OnceCell<Arc<TransparencyLog>>,
}

impl GameService {
    /// Sets how the transparency log is opened (origin, key); takes effect
    /// at [`Self::open_log`] (or the first game that ends).
    #[must_use]
    pub fn with_log(mut self, settings: LogSettings) -> Self {
        self.tlog.settings = settings;
        self
    }

    /// Opens the transparency log: loads (or makes) its key and checks the
    /// stored tree against its last checkpoint (then the whole tree, in the
    /// background: see [`TransparencyLog::check_tree`]). `ludo serve` calls
    /// it before it listens, and does not start when it fails.
    ///
    /// # Errors
    /// A key that does not match the store's, a tree that disagrees with
    /// its checkpoints, storage errors.
    pub async fn open_log(&self) -> Result<LogInfo, ServiceError> {
        Ok(self.tlog().await?.info())
    }

    pub(super) async fn tlog(&self) -> Result<&Arc<TransparencyLog>, ServiceError> {
        self.tlog
            .log
            .get_or_try_init(|| async {
                let log = Arc::new(TransparencyLog::open(Arc::clone(&self.store), &self.tlog.settings, timestamp(self.clock.now())).await?);
                // The whole tree, leaf by leaf, after the start rather than
                // before it (it takes seconds per million leaves).
                let checking = Arc::clone(&log);
                tokio::spawn(async move {
                    let log = checking;
                    match log.check_tree().await {
                        Ok(leaves) => tracing::info!(leaves, "transparency log: the whole stored tree checked against its checkpoints"),
                        // Logged as the log was marked damaged.
                        Err(ServiceError::CorruptLog { .. }) => {}
                        Err(err) => tracing::warn!(%err, "transparency log: the whole stored tree could not be checked"),
                    }
                });
                Ok(log)
            })
            .await
    }

    /// The log's origin, key and latest checkpoint.
    ///
    /// # Errors
    /// Storage errors.
    pub async fn log_info(&self) -> Result<LogInfo, ServiceError> {
        self.open_log().await
    }

    /// The proof that the log's tree of `from` leaves is a prefix of its
    /// tree of `to` leaves.
    ///
    /// # Errors
    /// `invalid_input` unless `from <= to <= ` the log's size; storage errors.
    pub async fn consistency_proof(&self, from: u64, to: u64) -> Result<ConsistencyProof, ServiceError> {
        self.tlog().await?.consistency(from, to).await
    }

    /// The game's receipt: its leaf, the checkpoint that first included it,
    /// and the inclusion proof. A game that ended on a server that stopped
    /// before adding its leaf gets it now.
    ///
    /// # Errors
    /// `not_found`; `game_not_over` for a game still waiting or being
    /// played; storage errors.
    pub async fn receipt(&self, id: &GameId) -> Result<Receipt, ServiceError> {
        let slot = self.slot(id).await?;
        let current = slot.current();
        if !current.status.is_finished() {
            return Err(ServiceError::GameNotOver);
        }
        self.receipt_of(&slot, &current).await
    }

    /// The receipt of a game that is over (cached with the game).
    pub(super) async fn receipt_of(&self, slot: &Slot, current: &Current) -> Result<Receipt, ServiceError> {
        // One try at a time per game: a game that ends while the sweep
        // looks at it gets one leaf.
        slot.receipt.get_or_try_init(|| self.find_receipt(slot, current)).await.cloned()
    }

    async fn find_receipt(&self, slot: &Slot, current: &Current) -> Result<Receipt, ServiceError> {
        let logged = self.logged_place(slot.meta.stream).await?;
        let (leaf, last_at) = self.head_leaf(slot, current).await?;
        if let Some((index, size)) = logged {
            // The place noted must hold this game's head: a log that lost
            // its last append (a restored backup) has given that place to
            // another game since. Then the game is added again.
            match self.tlog().await?.receipt(index, size).await {
                Ok(receipt) if receipt.leaf == leaf => return Ok(receipt),
                Ok(_) | Err(ServiceError::CorruptLog { .. }) => {
                    tracing::warn!(game = %slot.meta.id, leaf = index, "the log's leaf noted for this game is not its head: adding it again");
                }
                Err(err) => return Err(err),
            }
        }
        self.log_game(slot, current, leaf, &last_at).await
    }

    /// The game's place in the log (its leaf's index, and the size of the
    /// checkpoint its receipt is against) as noted in the summary the store
    /// keeps beside its log; none when not noted, or noted for a game that
    /// has moved since.
    pub(super) async fn logged_place(&self, stream: StreamId) -> Result<Option<(u64, u64)>, ServiceError> {
        Ok(self.store.summary(stream).await?.as_ref().and_then(logged_in))
    }

    /// [`Self::logged_place`] for many games asked in stream order (the
    /// start-up sweep's): one range read of the store's summaries per page
    /// rather than one point read per game.
    pub(super) fn logged_places(&self) -> LoggedPlaces<'_> {
        LoggedPlaces { store: &*self.store, page: std::collections::VecDeque::new(), after: None, exhausted: false, page_size: 1000 }
    }

    /// The leaf of a game that is over, and when its last record was made.
    async fn head_leaf(&self, slot: &Slot, current: &Current) -> Result<(String, String), ServiceError> {
        let records = self.records(slot, current.version, Some(current.version + 1)).await?;
        let last = records.first().ok_or_else(|| ServiceError::Internal("a game without its last record".into()))?;
        let head = transparency::GameHead {
            game_id: slot.meta.id.clone(),
            records: current.version + 1,
            last_hash: last.hash.clone(),
            ending: current.status.ending(),
            imported: slot.meta.secrets.imported.clone(),
        };
        Ok((head.leaf().ok_or(ServiceError::GameNotOver)?, last.at.clone()))
    }

    /// Adds the game's head (`leaf`) to the log and notes its place in the
    /// game's summary; answers its receipt.
    async fn log_game(&self, slot: &Slot, current: &Current, leaf: String, last_at: &str) -> Result<Receipt, ServiceError> {
        let log = Arc::clone(self.tlog().await?);
        let mut summary = StoredSummary::of(&slot.meta, (current.version, &current.status), &current.table, last_at);
        let (store, metrics) = (Arc::clone(&self.store), Arc::clone(&self.metrics));
        let (stream, next, id) = (slot.meta.stream, current.version + 1, slot.meta.id.clone());
        // From here on in a task of its own: once the leaf is in the tree,
        // its place is written to the summary even if the caller went away
        // (else a later look would add the game a second time).
        let logged = tokio::spawn(async move {
            let (index, size) = log.append(leaf).await?;
            summary.logged = Some((index, size));
            if let Err(err) = store.append(AppendRequest::describe(stream, next, summary.to_bytes())).await {
                // The next sweep finds the game without its place and logs
                // it again: a second leaf for the same head, proving the same.
                tracing::warn!(%err, game = %id, leaf = index, "a game's place in the log was not written to its summary");
            }
            metrics.logged_games.inc();
            log.receipt(index, size).await
        });
        logged.await.map_err(|e| ServiceError::Internal(format!("adding a game to the log failed: {e}")))?
    }

    /// Adds to the log the games in `summaries` (over, and their summaries
    /// without a place in it: a server stopped between the two). On a shared store, a game that
    /// ended less than `grace` ago is left to the server that ended it.
    pub(super) async fn log_unlogged(&self, summaries: &[(StreamId, StoredSummary)], grace: std::time::Duration) {
        let now = self.clock.now();
        for (stream, summary) in summaries {
            let recent = summary
                .finished_at
                .as_deref()
                .and_then(|at| humantime::parse_rfc3339(at).ok())
                .is_some_and(|at| now.duration_since(at).unwrap_or_default() < grace);
            if self.store.shared() && recent {
                continue;
            }
            let outcome = async {
                let slot = self.slot_of(*stream).await?;
                let current = slot.current();
                self.receipt_of(&slot, &current).await
            };
            match outcome.await {
                Ok(receipt) => {
                    tracing::info!(game = %game_id(*stream), leaf = receipt.leaf_index, "a game that ended earlier was added to the transparency log")
                }
                Err(err) => {
                    tracing::warn!(%err, game = %game_id(*stream), "a game that ended earlier could not be added to the transparency log")
                }
            }
        }
    }
}

/// The place in the log noted in a game's stored summary (none when not
/// noted, or noted for a game that has moved since).
fn logged_in(listed: &ludo_storage::StreamSummary) -> Option<(u64, u64)> {
    listed.summary.as_deref().and_then(|bytes| StoredSummary::from_bytes(bytes, listed.next_seq)).and_then(|summary| summary.logged)
}

/// Games' places in the log, read from the store's summaries in stream
/// order (see [`GameService::logged_places`]).
pub(super) struct LoggedPlaces<'a> {
    store: &'a dyn EventStore,
    /// The summaries read and not yet passed.
    page: std::collections::VecDeque<ludo_storage::StreamSummary>,
    /// The last stream read.
    after: Option<StreamId>,
    /// Whether the last page read was the store's last.
    exhausted: bool,
    /// Summaries read at a time.
    page_size: usize,
}

impl LoggedPlaces<'_> {
    /// As [`GameService::logged_place`], for `stream`, which must come
    /// after every stream asked before.
    pub(super) async fn place(&mut self, stream: StreamId) -> Result<Option<(u64, u64)>, ServiceError> {
        loop {
            while self.page.front().is_some_and(|listed| listed.stream < stream) {
                self.page.pop_front();
            }
            if let Some(listed) = self.page.front() {
                return Ok(if listed.stream == stream { logged_in(listed) } else { None });
            }
            if self.exhausted {
                return Ok(None);
            }
            let page = self.store.list_summaries(self.after, self.page_size).await?;
            self.exhausted = page.len() < self.page_size;
            self.after = page.last().map(|listed| listed.stream).or(self.after);
            self.page.extend(page);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::SystemClock;
    use crate::api::CreateGame;

    #[tokio::test]
    async fn places_walked_in_stream_order_are_the_places_read_one_by_one() {
        let store: Arc<dyn EventStore> = Arc::new(ludo_storage::MemoryStore::new());
        let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
        for n in 0..7 {
            let request = CreateGame::new("cardinal", ["Ann", "Bob"]).with_options(json!({"first_seat": 0}));
            let game = service.create(request).await.expect("created");
            if n % 3 != 0 {
                let id: GameId = game.id.parse().expect("id");
                service.resign(&id, Some(&game.seats[1].token)).await.expect("resigned");
            }
        }
        let streams: Vec<StreamId> = store.list_summaries(None, 100).await.expect("listed").into_iter().map(|l| l.stream).collect();
        let mut places = Vec::new();
        for stream in &streams {
            places.push((*stream, service.logged_place(*stream).await.expect("a place")));
        }
        assert_eq!(places.iter().filter(|(_, place)| place.is_some()).count(), 4, "each ended game has its place: {places:?}");
        // A stream that is no game, between two that are.
        let missing = StreamId((u128::from_be_bytes(streams[2].0) + 1).to_be_bytes());
        assert!(!streams.contains(&missing));
        for page_size in [1, 2, 3, 100] {
            let mut walk = service.logged_places();
            walk.page_size = page_size;
            for (stream, place) in &places {
                assert_eq!(walk.place(*stream).await.expect("walked"), *place, "every stream, {page_size} a page");
            }
            let mut walk = service.logged_places();
            walk.page_size = page_size;
            for (i, (stream, place)) in places.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
                assert_eq!(walk.place(*stream).await.expect("walked"), *place, "every other stream, {page_size} a page");
                if i == 1 {
                    assert_eq!(walk.place(missing).await.expect("walked"), None, "no game, no place");
                }
            }
        }
        service.shutdown().await.expect("closed");
    }
}
