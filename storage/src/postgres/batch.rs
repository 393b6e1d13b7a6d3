//! Appends to different games share a transaction, as sled's appends share
//! a flush.
//!
//! Why: what an append costs PostgreSQL is mostly what any transaction
//! costs it (a round trip, a snapshot, a commit record, the wait for its
//! WAL flush, the backend's wake-ups), not its two rows. With one
//! transaction per append, a move cost the database about three of the raw
//! baseline's single-row `INSERT`+`COMMIT`s (`ludo-bench --postgres`).
//!
//! How: plain appends (to an existing stream, with records) queue for one
//! task, the batcher, which runs one batch at a time: whatever queued while
//! a batch ran goes into the next, as one statement (so one transaction,
//! one round trip) that moves every stream's row from its expected length
//! and inserts the records of those that moved. Nothing waits to fill a
//! batch: a lone append runs alone, by the single-append statement, as
//! before.
//!
//! Why one at a time: against two and four batches under way at once,
//! one made the largest batches and the most moves/s here (`ludo-bench
//! --postgres`, one replica: 0.35× and 0.48–0.50× the raw baseline at 16
//! and 64 games, against 0.31–0.33× and 0.42–0.45× with two). The rate
//! still follows the load: the slower the database answers, the more
//! queues meanwhile, and the larger the next batch.
//!
//! Each append still stands or falls alone. One whose stream was not at the
//! expected length is not moved and adds no record, and is answered a
//! conflict while the others commit. A batch that fails as a whole on an
//! error the database reports (a deadlock between two servers' batches, a
//! key violation) wrote nothing, and each of its appends is tried again
//! alone, so that one cannot fail the others. A lost connection fails all
//! of them, as it fails a lone append: the outcome is unknown.
//!
//! Two appends of one stream never share a batch (the second would find
//! the stream moved by the first): the second goes into the next one.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_postgres::types::ToSql;

use super::{Counters, Db, append, backend, conflict, seq_in, seq_out};
use crate::contract::{AppendRequest, Appended, StoreError};
use crate::key::StreamId;

/// At most this many appends per batch …
const MAX_BATCH_APPENDS: usize = 256;
/// … and about this many payload bytes (a larger append still goes alone).
const MAX_BATCH_BYTES: usize = 4 << 20;

/// One statement for many appends: each stream's row moves from its
/// expected length (under its lock), then the records of the streams that
/// moved take consecutive positions (the feed's row locked last, see the
/// module docs of `postgres`), in the batch's order, and go in. Answers the
/// streams that moved, each with its first position.
const APPEND_MANY: &str = "WITH input AS (
        SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::bytea[]) AS i (stream, expected, next_seq, summary)
    ), moved AS (
        UPDATE ludo_streams s SET next_seq = i.next_seq, summary = i.summary
        FROM input i WHERE s.stream = i.stream AND s.next_seq = i.expected
        RETURNING s.stream
    ), records AS (
        SELECT r.stream, r.seq, r.bytes, r.i
        FROM unnest($5::bytea[], $6::bigint[], $7::bytea[]) WITH ORDINALITY AS r (stream, seq, bytes, i)
        WHERE r.stream IN (SELECT stream FROM moved)
    ), counted AS (
        SELECT count(*) AS n FROM records
    ), head AS (
        UPDATE ludo_feed SET head = head + counted.n FROM counted WHERE counted.n > 0 RETURNING head - counted.n AS base
    ), numbered AS (
        SELECT records.stream, records.seq, records.bytes, head.base + row_number() OVER (ORDER BY records.i) AS position
        FROM records, head
    ), written AS (
        INSERT INTO ludo_records (stream, seq, bytes, position) SELECT stream, seq, bytes, position FROM numbered
    )
    SELECT stream, min(position) FROM numbered GROUP BY stream";

/// An append waiting for its batch, and where its answer goes.
pub(super) struct Queued {
    pub(super) request: AppendRequest,
    pub(super) reply: oneshot::Sender<Result<Appended, StoreError>>,
    /// This store's subscribers, as they were when the append was asked.
    pub(super) notices: Option<broadcast::Sender<Appended>>,
}

/// What answering an append does besides answering it.
#[derive(Clone)]
pub(super) struct Settle {
    pub(super) counters: Arc<Counters>,
    pub(super) instance: u64,
    /// To the publisher, for other servers (none when not notifying).
    pub(super) publish: Option<mpsc::UnboundedSender<String>>,
}

impl Settle {
    /// Counts a transaction that carried appends.
    fn transacted(&self) {
        self.counters.transactions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs one append alone, in a transaction of its own, and answers it.
    pub(super) async fn alone(&self, db: Db, queued: Queued) {
        let result = append(db, &queued.request).await;
        self.transacted();
        self.answer(queued, result);
    }

    /// Counts, announces (to this process and to other servers) and
    /// answers one append.
    pub(super) fn answer(&self, queued: Queued, result: Result<Appended, StoreError>) {
        let Queued { reply, notices, .. } = queued;
        if let Ok(appended) = &result
            && appended.next_seq > appended.first_seq
        {
            self.counters.appends.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.counters.records.fetch_add(appended.next_seq - appended.first_seq, std::sync::atomic::Ordering::Relaxed);
            if let Some(notices) = &notices {
                let _ = notices.send(appended.clone());
            }
            if let Some(publish) = &self.publish {
                let _ = publish.send(format!(
                    "{:016x}:{}:{}:{}:{}",
                    self.instance, appended.stream, appended.first_seq, appended.next_seq, appended.first_position
                ));
            }
        }
        // Let go of the channel before answering: once the store is closed
        // and its appends answered, subscribers see it end.
        drop(notices);
        let _ = reply.send(result);
    }
}

/// Whether `request` can share a batch: an append to an existing stream
/// that adds records (a creation, or a summary alone, goes alone), whose
/// seqs PostgreSQL's `bigint` holds (one that does not is refused alone,
/// not with the batch it would have joined).
pub(super) fn batchable(request: &AppendRequest) -> bool {
    request.expected_next > 0 && !request.records.is_empty() && request.next_after().is_ok_and(|next| seq_in(next).is_ok())
}

/// The batcher: forms batches from `queue` and runs them, one at a time,
/// until the queue's senders are gone and it is drained.
pub(super) async fn run(db: Db, settle: Settle, mut queue: mpsc::UnboundedReceiver<Queued>) {
    // An append of a stream the last batch already had.
    let mut held: Option<Queued> = None;
    loop {
        let first = match held.take() {
            Some(queued) => queued,
            None => match queue.recv().await {
                Some(queued) => queued,
                None => return,
            },
        };
        let mut bytes = first.request.payload_len();
        let mut streams = HashSet::from([first.request.stream]);
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH_APPENDS && bytes < MAX_BATCH_BYTES {
            match queue.try_recv() {
                Ok(queued) if streams.insert(queued.request.stream) => {
                    bytes += queued.request.payload_len();
                    batch.push(queued);
                }
                Ok(queued) => {
                    held = Some(queued);
                    break;
                }
                Err(_) => break,
            }
        }
        commit(&db, &settle, batch).await;
    }
}

/// Runs one batch and answers each of its appends.
async fn commit(db: &Db, settle: &Settle, mut batch: Vec<Queued>) {
    if batch.len() == 1 {
        settle.alone(db.clone(), batch.pop().expect("one")).await;
        return;
    }
    match append_many(db, &batch).await {
        Ok(moved) => {
            settle.transacted();
            // The committed first; then the conflicts, whose answers need
            // a query each (a rare case: two servers racing on a game).
            let (committed, conflicting): (Vec<Queued>, Vec<Queued>) =
                batch.into_iter().partition(|queued| moved.contains_key(&queued.request.stream));
            for queued in committed {
                let request = &queued.request;
                let first_position = moved.get(&request.stream).copied().unwrap_or_default();
                let result = request.next_after().map(|next_seq| Appended {
                    stream: request.stream,
                    first_seq: request.expected_next,
                    next_seq,
                    first_position,
                });
                settle.answer(queued, result);
            }
            for queued in conflicting {
                let refusal = match db.client().await {
                    Ok(client) => conflict(&client, &queued.request).await,
                    Err(err) => err,
                };
                settle.answer(queued, Err(refusal));
            }
        }
        Err(Failed::Alone) => {
            // Nothing was written: each on its own, so one cannot fail the others.
            for queued in batch {
                settle.alone(db.clone(), queued).await;
            }
        }
        Err(Failed::All(error)) => {
            for queued in batch {
                settle.answer(queued, Err(error.clone()));
            }
        }
    }
}

/// How a batch failed as a whole.
enum Failed {
    /// The database refused it (nothing was written): try each alone.
    Alone,
    /// No connection, or it was lost: every append fails with this.
    All(StoreError),
}

/// The batch's statement: the streams that moved (their records are in),
/// each with its first position.
async fn append_many(db: &Db, batch: &[Queued]) -> Result<HashMap<StreamId, u64>, Failed> {
    let mut streams = Vec::with_capacity(batch.len());
    let (mut expected, mut next) = (Vec::with_capacity(batch.len()), Vec::with_capacity(batch.len()));
    let mut summaries = Vec::with_capacity(batch.len());
    let (mut record_streams, mut seqs, mut records) = (Vec::new(), Vec::new(), Vec::new());
    // In the streams' order: every batch, of every server, then locks the
    // rows it moves in one order, so that two batches cannot each hold a
    // row the other waits for.
    let mut sorted: Vec<&AppendRequest> = batch.iter().map(|queued| &queued.request).collect();
    sorted.sort_unstable_by_key(|request| request.stream);
    for request in sorted {
        let stream = request.stream.0.as_slice();
        let first = seq_in(request.expected_next).map_err(Failed::All)?;
        streams.push(stream);
        expected.push(first);
        next.push(request.next_after().and_then(seq_in).map_err(Failed::All)?);
        summaries.push(request.summary.as_deref());
        for (seq, record) in (first..).zip(&request.records) {
            record_streams.push(stream);
            seqs.push(seq);
            records.push(record.as_slice());
        }
    }
    let client = db.client().await.map_err(Failed::All)?;
    let statement = client.prepare_cached(APPEND_MANY).await.map_err(|e| Failed::All(backend(&e)))?;
    let params: [&(dyn ToSql + Sync); 7] = [&streams, &expected, &next, &summaries, &record_streams, &seqs, &records];
    match client.query(&statement, &params).await {
        Ok(rows) => rows
            .iter()
            .map(|row| {
                let stream = StreamId::from_slice(row.get(0))
                    .ok_or_else(|| Failed::All(StoreError::Backend("a stream id of the wrong length".into())))?;
                Ok((stream, seq_out(row.get(1)).map_err(Failed::All)?))
            })
            .collect(),
        Err(err) if err.code().is_some() => {
            tracing::debug!("a batch of {} appends was refused whole ({}): each is tried alone", batch.len(), super::describe(&err));
            Err(Failed::Alone)
        }
        Err(err) => Err(Failed::All(backend(&err))),
    }
}

/// Reads of records, asked together, share a statement too.
///
/// Why: a replica one move behind reads the record it missed before each
/// move (see the service's cache), a query of its own; with two replicas
/// taking turns on every game, that is one read per move beside the
/// append. As with appends, the statement, not its rows, is most of the
/// cost: with two replicas taking turns, batched reads made 1.05–1.16× the
/// moves/s (`ludo-bench --postgres`, N = 16 and 64, two interleaved runs).
/// Reads run [`READS_IN_FLIGHT`] batches at once, not one: a long read (a
/// whole game's log, for a cold load) must not hold up the short ones
/// behind it for long.
pub(super) mod reads {
    use std::sync::Arc;

    use tokio::sync::{Semaphore, mpsc, oneshot};
    use tokio_postgres::types::ToSql;

    use super::super::{Db, backend, read, seq_out};
    use crate::contract::{StoreError, StoredRecord};
    use crate::key::StreamId;

    /// Read batches under way at once, per store.
    pub(in crate::postgres) const READS_IN_FLIGHT: usize = 2;

    /// At most this many reads per batch.
    const MAX_BATCH_READS: usize = 256;

    /// Many ranges in one statement: each range's records in order, tagged
    /// with the range's place in the batch.
    const READ_MANY: &str = "SELECT q.i, r.seq, r.bytes
        FROM unnest($1::bytea[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS q (stream, lo, hi, i)
        JOIN LATERAL (
            SELECT seq, bytes FROM ludo_records WHERE stream = q.stream AND seq >= q.lo AND seq < q.hi ORDER BY seq
        ) r ON true
        ORDER BY q.i, r.seq";

    /// A read waiting for its batch: records `from..to` of `stream` (in
    /// PostgreSQL's integers, `from < to`), and where they go.
    pub(in crate::postgres) struct Read {
        pub(in crate::postgres) stream: StreamId,
        pub(in crate::postgres) from: i64,
        pub(in crate::postgres) to: i64,
        pub(in crate::postgres) reply: oneshot::Sender<Result<Vec<StoredRecord>, StoreError>>,
    }

    /// The read batcher: batches of whatever queued, [`READS_IN_FLIGHT`] at
    /// once, until the queue's senders are gone and it is drained.
    pub(in crate::postgres) async fn run(db: Db, mut queue: mpsc::UnboundedReceiver<Read>) {
        let permits = Arc::new(Semaphore::new(READS_IN_FLIGHT));
        loop {
            let Ok(permit) = Arc::clone(&permits).acquire_owned().await else { return };
            let Some(first) = queue.recv().await else { return };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH_READS {
                match queue.try_recv() {
                    Ok(read) => batch.push(read),
                    Err(_) => break,
                }
            }
            let db = db.clone();
            tokio::spawn(async move {
                answer(&db, batch).await;
                drop(permit);
            });
        }
    }

    /// Runs one batch of reads and answers each.
    async fn answer(db: &Db, mut batch: Vec<Read>) {
        if batch.len() == 1 {
            let Read { stream, from, to, reply } = batch.pop().expect("one");
            let _ = reply.send(read(db.clone(), stream, from, to).await);
            return;
        }
        match read_many(db, &batch).await {
            Ok(found) => {
                for (read, records) in batch.into_iter().zip(found) {
                    let _ = read.reply.send(Ok(records));
                }
            }
            Err(error) => {
                for read in batch {
                    let _ = read.reply.send(Err(error.clone()));
                }
            }
        }
    }

    /// The batch's statement: each read's records, in the batch's order.
    async fn read_many(db: &Db, batch: &[Read]) -> Result<Vec<Vec<StoredRecord>>, StoreError> {
        let streams: Vec<&[u8]> = batch.iter().map(|read| read.stream.0.as_slice()).collect();
        let lows: Vec<i64> = batch.iter().map(|read| read.from).collect();
        let highs: Vec<i64> = batch.iter().map(|read| read.to).collect();
        let client = db.client().await?;
        let statement = client.prepare_cached(READ_MANY).await.map_err(|e| backend(&e))?;
        let params: [&(dyn ToSql + Sync); 3] = [&streams, &lows, &highs];
        let rows = client.query(&statement, &params).await.map_err(|e| backend(&e))?;
        let mut found: Vec<Vec<StoredRecord>> = batch.iter().map(|_| Vec::new()).collect();
        for row in rows {
            let place: i64 = row.get(0);
            let records = usize::try_from(place - 1)
                .ok()
                .and_then(|place| found.get_mut(place))
                .ok_or_else(|| StoreError::Backend(format!("a read batch answered for place {place} of {}", batch.len())))?;
            records.push(StoredRecord { seq: seq_out(row.get(1))?, bytes: row.get(2) });
        }
        Ok(found)
    }
}
