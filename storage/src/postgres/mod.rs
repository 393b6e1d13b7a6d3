//! The PostgreSQL backend: one database shared by any number of servers.
//!
//! # Tables (schema version 2)
//! - `ludo_streams`: one row per stream (game): its id, its record count
//!   (`next_seq`), its current summary and its sealed side data.
//! - `ludo_records`: one row per record, keyed `(stream, seq)`, with its
//!   feed `position` (unique).
//! - `ludo_feed`: one row, the feed's `head` (the last position given).
//! - `ludo_projections`, `ludo_projection_rows`: projection storage
//!   ([`projection`]).
//!
//! # Feed positions
//! An append takes its positions in its own statement: `UPDATE ludo_feed
//! SET head = head + n RETURNING …`. That row lock is held until the
//! transaction ends, so appends that add records commit one after the
//! other in position order, on every server sharing the database: the
//! next one cannot take positions before the previous one has committed (or
//! rolled back, handing its positions back). A reader at position `p` thus
//! never later sees a record appear at `p` or below, which sequences (whose
//! values are taken in one order and committed in another) would not
//! promise. The cost is that commits adding records are serialized across
//! servers; batching ([`batch`]) is what keeps that affordable. The row is
//! locked last in each statement (after the streams' rows), so it adds no
//! deadlock.
//!
//! # An append is one statement, so one transaction
//! A creating append inserts the stream's row (`ON CONFLICT DO NOTHING`: a
//! second creator finds the row there and reports a conflict); any other
//! append moves the row from `next_seq = expected` to its new length with an
//! `UPDATE … WHERE next_seq = expected`, which takes the row's lock, so two
//! writers racing on one stream are serialized and the second finds the
//! count moved and reports a conflict with the committed length. The
//! records go in, in the same statement (a data-modifying `WITH`), only if
//! the row moved, under the `(stream, seq)` primary key, which would
//! refuse a seq written twice even if the row check were bypassed. The
//! summary and the sealed data are written in the same statement. One
//! round trip per append. Every statement is prepared once per connection
//! (`prepare_cached`): a query sent as a bare string costs a parse and an
//! extra round trip each time. The
//! append resolves after the commit, so an acknowledged record is durable
//! as PostgreSQL's `synchronous_commit` makes it (on by default).
//!
//! Appends to existing streams that are asked while another batch of them
//! is being committed share the next statement, and so one transaction and
//! one commit, each still standing or falling alone ([`batch`]). Reads of
//! records asked together share a statement too ([`batch::reads`]).
//!
//! # Notices
//! A notice is sent to this process's subscribers after each commit, before
//! the append resolves, as the other backends do; it is also published with
//! `pg_notify`, after the commit and batched with the others queued (a
//! notifying transaction takes a cluster-wide lock to commit), so other
//! servers on the same database hear it (see the channel [`NOTIFY_CHANNEL`]).
//!
//! Notifications are the one thing the databases that speak PostgreSQL's
//! protocol differ on (CockroachDB has no `LISTEN`), so they sit behind a
//! small seam: [`PgOptions::listen`] off, or a `LISTEN` the database refuses
//! as unsupported, and the store neither publishes nor listens; instead
//! [`EventStore::poll_every`] tells readers to look every
//! [`PgOptions::poll`]. While listening they still look every
//! [`POLL_WHILE_LISTENING`], for notices lost while the listening
//! connection was down; while it is down, every [`PgOptions::poll`].
//!
//! # Threads
//! The store owns a small tokio runtime ("ludo-pg" threads) on which its
//! connections live and its queries run. Async callers await them from any
//! runtime; the `*_blocking` calls and the synchronous ones of the contract
//! wait for them on the calling thread, from anywhere. It has a thread per
//! four cores, at least one (see [`runtime_threads`]).
//!
//! # Schema migrations
//! [`PgStore::connect`] applies what is missing of [`MIGRATIONS`] under an
//! advisory lock (several servers may start at once), and refuses a
//! database whose schema is newer than this build knows.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::{broadcast, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::contract::{
    AppendRequest, Appended, EventStore, FeedEntry, NOTICE_BUFFER, PendingAppend, StoreError, StoreFuture, StoreStats, StoredRecord,
    StreamSummary, closed_receiver,
};
use crate::key::StreamId;
use crate::projection::{Hold, ProjectionCommit, ProjectionLease, ProjectionRow, validate_key, validate_name};

mod batch;
mod feed;
pub(crate) mod lease;
mod projection;

/// The `LISTEN`/`NOTIFY` channel on which appends are published.
pub const NOTIFY_CHANNEL: &str = "ludo_appended";

/// How long connecting may take, unless the URL says (`connect_timeout`).
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How often streams read again although no notice rang, while this store
/// listens (for notices published while its listening connection was down).
pub const POLL_WHILE_LISTENING: Duration = Duration::from_secs(2);

/// Pause before listening again after the listening connection was lost.
const RELISTEN_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// Schema migrations, in order: migration `i` brings the schema to version
/// `i + 1`. Applied ones are never edited; a change is a new migration.
pub const MIGRATIONS: &[&str] = &[
    r"
    CREATE TABLE ludo_streams (
        stream   bytea  PRIMARY KEY CHECK (length(stream) = 16),
        next_seq bigint NOT NULL CHECK (next_seq > 0),
        summary  bytea,
        sealed   bytea
    );
    CREATE TABLE ludo_records (
        stream bytea  NOT NULL REFERENCES ludo_streams (stream),
        seq    bigint NOT NULL CHECK (seq >= 0),
        bytes  bytea  NOT NULL,
        PRIMARY KEY (stream, seq)
    );
",
    r#"
    -- The global feed. Records from before it get positions in stream id
    -- then seq order (their commit order is not known); the migration runs
    -- in one transaction, so an interrupted one leaves nothing behind.
    ALTER TABLE ludo_records ADD COLUMN position bigint;
    UPDATE ludo_records r SET position = n.position
        FROM (SELECT stream, seq, row_number() OVER (ORDER BY stream, seq) AS position FROM ludo_records) n
        WHERE r.stream = n.stream AND r.seq = n.seq;
    ALTER TABLE ludo_records ALTER COLUMN position SET NOT NULL,
        ADD CONSTRAINT ludo_records_position_check CHECK (position > 0);
    CREATE UNIQUE INDEX ludo_records_position ON ludo_records (position);
    CREATE TABLE ludo_feed (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        head     bigint  NOT NULL CHECK (head >= 0)
    );
    INSERT INTO ludo_feed (head) SELECT count(*) FROM ludo_records;
    -- Projection storage.
    CREATE TABLE ludo_projections (
        name       text   PRIMARY KEY CHECK (name ~ '^[a-z0-9_-]{1,64}$'),
        checkpoint bigint NOT NULL CHECK (checkpoint >= 0)
    );
    CREATE TABLE ludo_projection_rows (
        name  text  NOT NULL,
        key   bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (name, key)
    );
"#,
];

/// The schema version this build writes and reads.
#[must_use]
pub fn schema_version() -> i32 {
    i32::try_from(MIGRATIONS.len()).expect("a handful of migrations")
}

/// How to connect.
#[derive(Clone, Debug)]
pub struct PgOptions {
    /// Connections kept open at most.
    pub pool_size: usize,
    /// Whether to publish appends and hear other servers' with
    /// `LISTEN`/`NOTIFY`; off for a database without them (see the module
    /// docs). Every server on one database should say the same.
    pub listen: bool,
    /// How often streams look for other servers' appends while this store
    /// does not hear them (`listen` off, or its connection down).
    pub poll: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions { pool_size: 16, listen: true, poll: Duration::from_millis(250) }
    }
}

/// The store's runtime's threads: one per four cores, at least one.
///
/// Why so few: its work is the protocol's (encoding statements, decoding
/// rows), small beside the server's and the database's, and every thread
/// more is one more to wake and to share the cores with. On 2 cores, one
/// thread against two (`ludo-bench --postgres`, two interleaved runs
/// each, one replica): 0.38–0.41× against 0.35× the raw baseline at 16
/// games, 0.51–0.52× against 0.48–0.51× at 64, and 67–68 against 73 µs of
/// the server's CPU per move at 16.
fn runtime_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| (cores.get() / 4).max(1))
}

/// An event store in a PostgreSQL database.
pub struct PgStore {
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    pool: Pool,
    notices: Mutex<Option<broadcast::Sender<Appended>>>,
    closed: AtomicBool,
    /// Why the database cannot be reached, while it cannot.
    unavailable: Arc<Mutex<Option<String>>>,
    /// Whether a reachability probe is under way (see `health`).
    probing: Arc<AtomicBool>,
    /// What answering an append does besides answering it: its counters,
    /// this store's mark on the notices it publishes, and the publisher.
    settle: batch::Settle,
    /// Appends that may share a transaction, to the batcher (see [`batch`]).
    batches: tokio::sync::mpsc::UnboundedSender<batch::Queued>,
    /// Reads of records, to their batcher (see [`batch::reads`]).
    reads: tokio::sync::mpsc::UnboundedSender<batch::reads::Read>,
    /// Whether other servers' appends are being heard now.
    hearing: Arc<AtomicBool>,
    /// How often readers look while they are not (see [`PgOptions::poll`]).
    poll: Duration,
    /// Where a lease's own connection goes (see [`lease`]).
    lease_target: (tokio_postgres::Config, MakeRustlsConnect),
}

/// Appends and records acknowledged.
#[derive(Default)]
struct Counters {
    appends: AtomicU64,
    records: AtomicU64,
    /// Transactions that carried appends (a batch's, or one append's).
    transactions: AtomicU64,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).field("closed", &self.closed).finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db`),
    /// applies the missing schema migrations, and answers the store.
    ///
    /// # Errors
    /// [`StoreError::Invalid`] for a URL that is not a PostgreSQL one;
    /// [`StoreError::Unavailable`] when the database cannot be reached;
    /// [`StoreError::Backend`] when the schema is newer than this build's
    /// or a migration fails.
    pub fn connect(url: &str, options: &PgOptions) -> Result<PgStore, StoreError> {
        let crate::pg_tls::Target { mut config, tls } = crate::pg_tls::target(url)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let listener_config = config.clone();
        let lease_target = (config.clone(), tls.clone());
        let manager = Manager::from_config(config, tls.clone(), ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::Invalid(format!("connection pool: {e}")))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(runtime_threads())
            .thread_name("ludo-pg")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Backend(format!("cannot start the PostgreSQL runtime: {e}")))?;
        let (publishing, published) = tokio::sync::mpsc::unbounded_channel();
        let (batches, batched) = tokio::sync::mpsc::unbounded_channel();
        let (reads, read_queue) = tokio::sync::mpsc::unbounded_channel();
        let store = PgStore {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
            pool,
            notices: Mutex::new(Some(broadcast::channel(NOTICE_BUFFER).0)),
            closed: AtomicBool::new(false),
            unavailable: Arc::new(Mutex::new(None)),
            probing: Arc::new(AtomicBool::new(false)),
            settle: batch::Settle { counters: Arc::default(), instance: instance_id(), publish: options.listen.then_some(publishing) },
            batches,
            reads,
            hearing: Arc::new(AtomicBool::new(false)),
            poll: options.poll,
            lease_target,
        };
        if options.listen {
            store.handle.spawn(publish(store.db(), published));
        }
        store.handle.spawn(batch::run(store.db(), store.settle.clone(), batched));
        store.handle.spawn(batch::reads::run(store.db(), read_queue));
        let pool = store.pool.clone();
        store.wait(async move { migrate(&pool).await })?;
        if let Some(notices) = store.notices.lock().unwrap_or_else(PoisonError::into_inner).clone()
            && options.listen
        {
            // Open means listening: wait (a bounded time) for the first
            // LISTEN, so that appends other servers make from now on are
            // heard. If it fails, the listener keeps trying on its own.
            let (listening, first) = oneshot::channel();
            let hearing = Hearing { instance: store.settle.instance, notices: notices.downgrade(), now: Arc::clone(&store.hearing) };
            store.handle.spawn(listen(listener_config, tls, hearing, listening));
            store.wait(async move {
                let _ = tokio::time::timeout(CONNECT_TIMEOUT, first).await;
                Ok(())
            })?;
        }
        Ok(store)
    }

    /// Runs `work` on the store's runtime and waits for it on this thread.
    fn wait<T: Send + 'static>(&self, work: impl Future<Output = Result<T, StoreError>> + Send + 'static) -> Result<T, StoreError> {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = reply.send(work.await);
        });
        answer.recv().unwrap_or_else(|_| Err(StoreError::Backend("the PostgreSQL runtime stopped".into())))
    }

    /// Runs `work` on the store's runtime, for a caller to await anywhere.
    fn spawn<T: Send + 'static>(&self, work: impl Future<Output = Result<T, StoreError>> + Send + 'static) -> StoreFuture<T> {
        let task = self.handle.spawn(work);
        Box::pin(async move { task.await.unwrap_or_else(|e| Err(StoreError::Backend(format!("a PostgreSQL task failed: {e}")))) })
    }

    fn check_open(&self) -> Result<(), StoreError> {
        if self.closed.load(Ordering::Acquire) { Err(StoreError::Closed) } else { Ok(()) }
    }

    /// [`Self::spawn`] once `check` passes (the store open, the request
    /// valid), or its refusal at once.
    fn spawn_checked<T: Send + 'static>(
        &self,
        check: Result<(), StoreError>,
        work: impl FnOnce(Db) -> std::pin::Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'static>>,
    ) -> StoreFuture<T> {
        match self.check_open().and(check) {
            Ok(()) => self.spawn(work(self.db())),
            Err(refused) => Box::pin(std::future::ready(Err(refused))),
        }
    }

    /// A query's context: the pool, and where to record reachability.
    fn db(&self) -> Db {
        Db { pool: self.pool.clone(), unavailable: Arc::clone(&self.unavailable) }
    }
}

/// What a query needs, cloned into the task that runs it.
#[derive(Clone)]
struct Db {
    pool: Pool,
    unavailable: Arc<Mutex<Option<String>>>,
}

impl Db {
    /// A pooled connection; failing to get one means nothing was done.
    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        match self.pool.get().await {
            Ok(client) => {
                *self.unavailable.lock().unwrap_or_else(PoisonError::into_inner) = None;
                Ok(client)
            }
            Err(err) => {
                let reason = format!("cannot reach PostgreSQL: {}", chain(&err));
                *self.unavailable.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.clone());
                Err(StoreError::Unavailable(reason))
            }
        }
    }
}

impl Db {
    /// Checks the database answers, and records whether it does.
    async fn ping(&self) {
        let Ok(client) = self.client().await else { return };
        if let Err(err) = client.simple_query("SELECT 1").await {
            *self.unavailable.lock().unwrap_or_else(PoisonError::into_inner) = Some(describe(&err));
        }
    }
}

/// A query failure after a connection was had (the outcome of a write is
/// then unknown).
fn backend(err: &tokio_postgres::Error) -> StoreError {
    StoreError::Backend(describe(err))
}

/// An error and its causes, as one line.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

/// The error with the server's own message, when it sent one.
fn describe(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => format!("PostgreSQL: {} ({}): {}", db.severity(), db.code().code(), db.message()),
        None => format!("PostgreSQL: {}", chain(err)),
    }
}

fn seq_in(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Invalid(format!("seq {seq} is beyond what PostgreSQL's bigint holds")))
}

fn seq_out(seq: i64) -> Result<u64, StoreError> {
    u64::try_from(seq).map_err(|_| StoreError::Backend(format!("a negative seq {seq} in the database")))
}

fn stream_out(bytes: &[u8]) -> Result<StreamId, StoreError> {
    StreamId::from_slice(bytes).ok_or_else(|| StoreError::Backend(format!("a stream id of {} bytes in the database", bytes.len())))
}

/// Applies the missing migrations, one transaction, under an advisory lock
/// so that servers starting together do it once.
async fn migrate(pool: &Pool) -> Result<(), StoreError> {
    let mut client = pool.get().await.map_err(|e| StoreError::Unavailable(format!("cannot reach PostgreSQL: {}", chain(&e))))?;
    let tx = client.transaction().await.map_err(|e| backend(&e))?;
    // Any constant: ours. Held until the transaction ends.
    tx.execute("SELECT pg_advisory_xact_lock(7105612111001)", &[]).await.map_err(|e| backend(&e))?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS ludo_schema (version integer NOT NULL)").await.map_err(|e| backend(&e))?;
    let current: i32 = match tx.query_opt("SELECT version FROM ludo_schema", &[]).await.map_err(|e| backend(&e))? {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO ludo_schema (version) VALUES (0)", &[]).await.map_err(|e| backend(&e))?;
            0
        }
    };
    let known = schema_version();
    if current > known {
        return Err(StoreError::Backend(format!(
            "the database's schema is version {current}, newer than this build's {known}: run a newer ludo (or a fresh database)"
        )));
    }
    for (i, migration) in MIGRATIONS.iter().enumerate().skip(usize::try_from(current).unwrap_or(0)) {
        tx.batch_execute(migration)
            .await
            .map_err(|e| StoreError::Backend(format!("schema migration {} failed: {}", i + 1, describe(&e))))?;
    }
    if current < known {
        tx.execute("UPDATE ludo_schema SET version = $1", &[&known]).await.map_err(|e| backend(&e))?;
        tracing::info!(from = current, to = known, "PostgreSQL schema migrated");
    }
    tx.commit().await.map_err(|e| backend(&e))
}

/// One append, as one transaction: its result, or the stream's actual
/// length when it is not at the expected one.
async fn append(db: Db, request: &AppendRequest) -> Result<Appended, StoreError> {
    let next = request.next_after()?;
    let (expected, new_next) = (seq_in(request.expected_next)?, seq_in(next)?);
    let stream = request.stream.0.to_vec();
    let seqs: Vec<i64> = (expected..new_next).collect();
    let client = db.client().await?;
    // One statement, so one transaction and one round trip: the stream's
    // row moves (or is created) and, only if it did, the records go in.
    let count = new_next - expected;
    let (sql, params): (&str, Vec<&(dyn tokio_postgres::types::ToSql + Sync)>) = match (request.expected_next, request.records.is_empty()) {
        (0, _) => (CREATE, vec![&stream, &new_next, &request.summary, &request.sealed, &seqs, &request.records, &count]),
        (_, false) => (APPEND, vec![&stream, &new_next, &request.summary, &expected, &seqs, &request.records, &count]),
        (_, true) => (DESCRIBE, vec![&stream, &request.summary, &expected]),
    };
    let statement = client.prepare_cached(sql).await.map_err(|e| backend(&e))?;
    // Records: the row answers the first position (none: not moved).
    // A summary alone: the count of rows moved.
    let moved = if request.records.is_empty() {
        client.execute(&statement, &params).await.map(|rows| (rows > 0).then_some(0))
    } else {
        client.query_opt(&statement, &params).await.map(|row| row.map(|row| row.get::<_, i64>(0)))
    };
    let first_position = match moved {
        Ok(Some(position)) => seq_out(position)?,
        Ok(None) => return Err(conflict(&client, request).await),
        // The row check makes this unreachable; the key says the same.
        Err(err) if err.code() == Some(&SqlState::UNIQUE_VIOLATION) => return Err(conflict(&client, request).await),
        Err(err) => return Err(backend(&err)),
    };
    Ok(Appended { stream: request.stream, first_seq: request.expected_next, next_seq: next, first_position })
}

/// The refusal of `request`, whose stream was not at its expected length:
/// a conflict with the length committed (0: no such stream).
async fn conflict(client: &deadpool_postgres::Object, request: &AppendRequest) -> StoreError {
    match length(client, request.stream).await {
        Ok(actual_next) => StoreError::Conflict { stream: request.stream, expected_next: request.expected_next, actual_next },
        Err(err) => err,
    }
}

/// A stream's committed length (0: no such stream).
async fn length(client: &deadpool_postgres::Object, stream: StreamId) -> Result<u64, StoreError> {
    let statement = client.prepare_cached(NEXT_SEQ).await.map_err(|e| backend(&e))?;
    let row = client.query_opt(&statement, &[&stream.0.as_slice()]).await.map_err(|e| backend(&e))?;
    row.map_or(Ok(0), |row| seq_out(row.get(0)))
}

/// What follows the first step of a create or an append (`$step`, the
/// name of its `WITH` query, which answers the stream when it took): the
/// feed's row is locked last (see the module docs) and gives the records
/// the next `$7` positions, and the records go in. The statement answers
/// the first position, or no row when the first step did not take.
macro_rules! then_records {
    ($step:literal) => {
        concat!(
            "), head AS (
        UPDATE ludo_feed SET head = head + $7 WHERE EXISTS (SELECT 1 FROM ",
            $step,
            ") RETURNING head - $7 AS base
    ), written AS (
        INSERT INTO ludo_records (stream, seq, bytes, position)
        SELECT ",
            $step,
            ".stream, r.seq, r.bytes, head.base + r.i
        FROM ",
            $step,
            ", head, unnest($5::bigint[], $6::bytea[]) WITH ORDINALITY AS r (seq, bytes, i)
    )
    SELECT base + 1 FROM head"
        )
    };
}

/// A creating append: the stream's row, then its records (no row answered
/// when the stream's row was there already: a conflict).
const CREATE: &str = concat!(
    "WITH created AS (
        INSERT INTO ludo_streams (stream, next_seq, summary, sealed) VALUES ($1, $2, $3, $4)
        ON CONFLICT (stream) DO NOTHING RETURNING stream
    ",
    then_records!("created")
);

/// An append: the row moves from the expected length under its lock, then
/// the records (no row answered when the stream's row was elsewhere: a
/// conflict).
const APPEND: &str = concat!(
    "WITH moved AS (
        UPDATE ludo_streams SET next_seq = $2, summary = $3 WHERE stream = $1 AND next_seq = $4 RETURNING stream
    ",
    then_records!("moved")
);

/// A stream's length.
const NEXT_SEQ: &str = "SELECT next_seq FROM ludo_streams WHERE stream = $1";

/// A summary alone, for the stream at its present length.
const DESCRIBE: &str = "UPDATE ludo_streams SET summary = $2 WHERE stream = $1 AND next_seq = $3";

/// Most bytes of notices sent in one `NOTIFY` (PostgreSQL allows 8000).
const NOTIFY_PAYLOAD: usize = 7000;

/// Publishes this store's appends to other servers, in batches: a
/// transaction that notifies holds a cluster-wide lock while it commits, so
/// one `NOTIFY` per append would serialize every append behind it. One
/// carries every notice queued since the last (lines of
/// `instance:stream:first:next:position`), after the appends committed. A notice
/// that cannot be sent is dropped: it is a doorbell, and streams also look
/// on their own (see the service's watch).
async fn publish(db: Db, mut queued: tokio::sync::mpsc::UnboundedReceiver<String>) {
    while let Some(first) = queued.recv().await {
        let mut payload = first;
        while payload.len() < NOTIFY_PAYLOAD {
            match queued.try_recv() {
                Ok(line) => {
                    payload.push('\n');
                    payload.push_str(&line);
                }
                Err(_) => break,
            }
        }
        let Ok(client) = db.client().await else { continue };
        // Prepared once per connection: a bare string would be parsed and
        // planned again each time, in a round trip of its own.
        let notified = match client.prepare_cached("SELECT pg_notify($1, $2)").await {
            Ok(statement) => client.execute(&statement, &[&NOTIFY_CHANNEL, &payload]).await,
            Err(err) => Err(err),
        };
        if let Err(err) = notified {
            tracing::warn!("cannot notify the other servers of appends: {}", describe(&err));
        }
    }
}

/// A random mark for this store's notices.
fn instance_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// What the listener needs of its store.
struct Hearing {
    /// The store's mark, to skip its own notices.
    instance: u64,
    /// The store's subscribers, held weakly: once the store is closed (or
    /// dropped), the listener stops.
    notices: broadcast::WeakSender<Appended>,
    /// Set while listening (see [`EventStore::poll_every`]).
    now: Arc<AtomicBool>,
}

/// Hears the appends other servers publish on [`NOTIFY_CHANNEL`] and sends
/// them to this store's subscribers, on a connection of its own; when it is
/// lost, listens again. A notice is only a doorbell: what was published
/// while no connection listened is not heard, and readers re-read by seq.
/// A database that refuses `LISTEN` as unsupported is not asked again: the
/// store's readers poll (see the module docs).
async fn listen(config: tokio_postgres::Config, tls: MakeRustlsConnect, hearing: Hearing, listening: oneshot::Sender<()>) {
    let Hearing { instance, notices, now } = hearing;
    let own = format!("{instance:016x}:");
    let mut listening = Some(listening);
    while notices.upgrade().is_some() {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let (heard, mut hearing) = tokio::sync::mpsc::unbounded_channel();
                let driver = tokio::spawn(async move {
                    while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                        match message {
                            Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                                if heard.send(n.payload().to_string()).is_err() {
                                    return;
                                }
                            }
                            Ok(_) => {}
                            Err(err) => {
                                tracing::warn!("the PostgreSQL notice connection failed: {err}");
                                return;
                            }
                        }
                    }
                });
                let listened = client.batch_execute(&format!("LISTEN {NOTIFY_CHANNEL}")).await;
                now.store(listened.is_ok(), Ordering::Release);
                if let Some(listening) = listening.take() {
                    let _ = listening.send(());
                }
                if let Err(err) = listened {
                    if err.code() == Some(&SqlState::FEATURE_NOT_SUPPORTED) {
                        tracing::warn!(
                            "this database does not support LISTEN ({}): streams will poll for other servers' appends",
                            describe(&err)
                        );
                        driver.abort();
                        return;
                    }
                    tracing::warn!("cannot LISTEN on PostgreSQL: {}", describe(&err));
                } else {
                    while let Some(payload) = hearing.recv().await {
                        let Some(sender) = notices.upgrade() else { break };
                        // This store's own were sent when they committed.
                        for line in payload.lines().filter(|line| !line.starts_with(&own)) {
                            match parse_notice(line) {
                                // No subscriber is no error: nobody listens now.
                                Some(appended) => drop(sender.send(appended)),
                                None => tracing::warn!(line, "an unreadable notice on {NOTIFY_CHANNEL}"),
                            }
                        }
                    }
                }
                now.store(false, Ordering::Release);
                driver.abort();
            }
            Err(err) => tracing::warn!("cannot connect to PostgreSQL to hear other servers' appends: {}", describe(&err)),
        }
        tokio::time::sleep(RELISTEN_AFTER).await;
    }
}

/// A stream id from its 32 hex digits (its `Display`).
fn stream_from_hex(text: &str) -> Option<StreamId> {
    if text.len() != 32 || !text.is_ascii() {
        return None;
    }
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(StreamId(id))
}

/// `instance:stream:first:next:position` as published by
/// [`batch::Settle::answer`].
fn parse_notice(payload: &str) -> Option<Appended> {
    let mut parts = payload.split(':');
    let (_instance, stream, first, next, position) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let stream = stream_from_hex(stream)?;
    let (first_seq, next_seq, first_position) = (first.parse().ok()?, next.parse().ok()?, position.parse().ok()?);
    (first_seq < next_seq && first_position > 0).then_some(Appended { stream, first_seq, next_seq, first_position })
}

/// A read's range in PostgreSQL's integers; `None` when it holds nothing.
fn range(from: u64, to: Option<u64>) -> Option<(i64, i64)> {
    let to = to.map_or(i64::MAX, |to| i64::try_from(to).unwrap_or(i64::MAX));
    let from = i64::try_from(from).ok()?;
    (from < to).then_some((from, to))
}

/// Records `from..to` of `stream`, alone in a statement.
async fn read(db: Db, stream: StreamId, from: i64, to: i64) -> Result<Vec<StoredRecord>, StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached("SELECT seq, bytes FROM ludo_records WHERE stream = $1 AND seq >= $2 AND seq < $3 ORDER BY seq")
        .await
        .map_err(|e| backend(&e))?;
    let rows = client.query(&statement, &[&stream.0.as_slice(), &from, &to]).await.map_err(|e| backend(&e))?;
    rows.into_iter().map(|row| Ok(StoredRecord { seq: seq_out(row.get(0))?, bytes: row.get(1) })).collect()
}

async fn list(db: Db, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let after: Vec<u8> = after.map(|id| id.0.to_vec()).unwrap_or_default();
    let client = db.client().await?;
    // bytea compares bytewise, the streams' order everywhere; the empty
    // string sorts before every id.
    let statement = client
        .prepare_cached("SELECT stream, next_seq, summary FROM ludo_streams WHERE stream > $1 ORDER BY stream LIMIT $2")
        .await
        .map_err(|e| backend(&e))?;
    let rows = client.query(&statement, &[&after, &limit]).await.map_err(|e| backend(&e))?;
    rows.into_iter()
        .map(|row| {
            let stream: &[u8] = row.get(0);
            Ok(StreamSummary { stream: stream_out(stream)?, next_seq: seq_out(row.get(1))?, summary: row.get(2) })
        })
        .collect()
}

async fn sealed(db: Db, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
    let client = db.client().await?;
    let statement = client.prepare_cached("SELECT sealed FROM ludo_streams WHERE stream = $1").await.map_err(|e| backend(&e))?;
    let row = client.query_opt(&statement, &[&stream.0.as_slice()]).await.map_err(|e| backend(&e))?;
    Ok(row.and_then(|row| row.get(0)))
}

async fn next_seq(db: Db, stream: StreamId) -> Result<u64, StoreError> {
    length(&db.client().await?, stream).await
}

impl EventStore for PgStore {
    fn append(&self, request: AppendRequest) -> PendingAppend {
        if let Err(err) = self.check_open().and_then(|()| request.validate()) {
            return PendingAppend::ready(Err(err));
        }
        let (reply, answer) = oneshot::channel();
        let notices = self.notices.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let queued = batch::Queued { request, reply, notices };
        if batch::batchable(&queued.request) {
            // The batcher answers it (it only stops once this store is dropped).
            let _ = self.batches.send(queued);
        } else {
            let (db, settle) = (self.db(), self.settle.clone());
            self.handle.spawn(async move { settle.alone(db, queued).await });
        }
        PendingAppend::from_receiver(answer)
    }

    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> StoreFuture<Vec<StoredRecord>> {
        if let Err(err) = self.check_open() {
            return Box::pin(std::future::ready(Err(err)));
        }
        let Some((from, to)) = range(from, to) else { return Box::pin(std::future::ready(Ok(Vec::new()))) };
        // To the read batcher (see `batch::reads`).
        let (reply, answer) = oneshot::channel();
        let _ = self.reads.send(batch::reads::Read { stream, from, to, reply });
        Box::pin(async move { answer.await.unwrap_or_else(|_| Err(StoreError::Backend("the PostgreSQL runtime stopped".into()))) })
    }

    fn read_blocking(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        self.check_open()?;
        match range(from, to) {
            Some((from, to)) => self.wait(read(self.db(), stream, from, to)),
            None => Ok(Vec::new()),
        }
    }

    fn next_seq(&self, stream: StreamId) -> Result<u64, StoreError> {
        self.check_open()?;
        self.wait(next_seq(self.db(), stream))
    }

    fn shared(&self) -> bool {
        true
    }

    fn poll_every(&self) -> Option<Duration> {
        Some(if self.hearing.load(Ordering::Acquire) { POLL_WHILE_LISTENING } else { self.poll })
    }

    fn list_streams(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError> {
        self.check_open()?;
        Ok(self.wait(list(self.db(), after, limit))?.into_iter().map(|s| s.stream).collect())
    }

    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> StoreFuture<Vec<StreamSummary>> {
        if let Err(err) = self.check_open() {
            return Box::pin(std::future::ready(Err(err)));
        }
        self.spawn(list(self.db(), after, limit))
    }

    fn list_summaries_blocking(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
        self.check_open()?;
        self.wait(list(self.db(), after, limit))
    }

    fn sealed(&self, stream: StreamId) -> StoreFuture<Option<Vec<u8>>> {
        if let Err(err) = self.check_open() {
            return Box::pin(std::future::ready(Err(err)));
        }
        self.spawn(sealed(self.db(), stream))
    }

    fn sealed_blocking(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
        self.check_open()?;
        self.wait(sealed(self.db(), stream))
    }

    fn read_feed(&self, after: u64, limit: usize) -> StoreFuture<Vec<FeedEntry>> {
        self.spawn_checked(Ok(()), |db| Box::pin(feed::read(db, after, limit)))
    }

    fn read_feed_blocking(&self, after: u64, limit: usize) -> Result<Vec<FeedEntry>, StoreError> {
        self.check_open()?;
        self.wait(feed::read(self.db(), after, limit))
    }

    fn feed_head(&self) -> Result<u64, StoreError> {
        self.check_open()?;
        self.wait(feed::head(self.db()))
    }

    fn projection_load(&self, name: &str) -> StoreFuture<Option<u64>> {
        let name = name.to_string();
        self.spawn_checked(validate_name(&name), |db| Box::pin(projection::load(db, name)))
    }

    fn projection_commit(&self, commit: ProjectionCommit) -> StoreFuture<()> {
        self.spawn_checked(commit.validate(), |db| Box::pin(projection::commit(db, commit)))
    }

    fn projection_get(&self, name: &str, key: &[u8]) -> StoreFuture<Option<Vec<u8>>> {
        let (name, key) = (name.to_string(), key.to_vec());
        self.spawn_checked(validate_name(&name).and_then(|()| validate_key(&name, &key)), |db| Box::pin(projection::get(db, name, key)))
    }

    fn projection_scan(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> StoreFuture<Vec<ProjectionRow>> {
        let name = name.to_string();
        let valid = validate_name(&name).and_then(|()| after.as_deref().map_or(Ok(()), |after| validate_key(&name, after)));
        self.spawn_checked(valid, |db| Box::pin(projection::scan(db, name, after, limit)))
    }

    fn projection_reset(&self, name: &str) -> StoreFuture<()> {
        let name = name.to_string();
        self.spawn_checked(validate_name(&name), |db| Box::pin(projection::reset(db, name)))
    }

    fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.check_open()?;
        self.wait(projection::names(self.db()))
    }

    fn projection_lease(&self, name: &str) -> StoreFuture<Option<ProjectionLease>> {
        let (target, name) = (self.lease_target.clone(), name.to_string());
        self.spawn_checked(validate_name(&name), move |_| {
            Box::pin(async move {
                let hold = lease::take(target, name.clone()).await?;
                Ok(hold.map(|hold| ProjectionLease::new(&name, Hold::Postgres(hold))))
            })
        })
    }

    fn subscribe(&self) -> broadcast::Receiver<Appended> {
        match &*self.notices.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(sender) => sender.subscribe(),
            None => closed_receiver(),
        }
    }

    fn close(&self) -> Result<(), StoreError> {
        self.closed.store(true, Ordering::Release);
        self.notices.lock().unwrap_or_else(PoisonError::into_inner).take();
        self.pool.close();
        Ok(())
    }

    fn health(&self) -> Result<(), StoreError> {
        self.check_open()?;
        let unavailable = self.unavailable.lock().unwrap_or_else(PoisonError::into_inner).clone();
        match unavailable {
            Some(reason) => {
                // Unreachable last time: try again in the background (one
                // probe at a time), so that readiness comes back by itself
                // when the database does, with or without traffic.
                if !self.probing.swap(true, Ordering::AcqRel) {
                    let (db, probing) = (self.db(), Arc::clone(&self.probing));
                    self.handle.spawn(async move {
                        db.ping().await;
                        probing.store(false, Ordering::Release);
                    });
                }
                Err(StoreError::Unavailable(reason))
            }
            None => Ok(()),
        }
    }

    fn stats(&self) -> StoreStats {
        let counters = &self.settle.counters;
        StoreStats {
            appends: counters.appends.load(Ordering::Relaxed),
            records: counters.records.load(Ordering::Relaxed),
            flushes: 0,
            groups: counters.transactions.load(Ordering::Relaxed),
        }
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.pool.close();
        // Dropping a runtime may not block inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_back_what_appends_publish() {
        let stream = StreamId([0xab; 16]);
        let payload = format!("{:016x}:{stream}:3:5:17", 42u64);
        assert_eq!(parse_notice(&payload), Some(Appended { stream, first_seq: 3, next_seq: 5, first_position: 17 }));
        for bad in [
            "",
            "x:y:1:2:1",
            &format!("1:{stream}:5:5:1"),
            &format!("1:{stream}:1:2"),
            &format!("1:{stream}:1:2:0"),
            &format!("1:{stream}:1:2:3:4"),
            &format!("1:{stream}:a:2:1"),
        ] {
            assert_eq!(parse_notice(bad), None, "{bad}");
        }
    }
}
