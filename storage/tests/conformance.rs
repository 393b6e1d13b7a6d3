//! The event-store contract, written once and run against every backend.

mod common;

use common::postgres::Cluster;
use common::{record, records, stream};
use ludo_storage::{
    AppendRequest, Appended, Durability, EventStore, FeedEntry, MAX_PROJECTION_KEY, MAX_PROJECTION_PUTS, MAX_PROJECTION_VALUE, MemoryStore,
    PgOptions, PgStore, ProjectionCommit, SledOptions, SledStore, StoreError, StreamId, StreamSummary,
};

/// A store under test, with what it lives in (dropped after it: fields
/// drop in order).
struct Opened {
    store: Box<dyn EventStore>,
    _dir: Option<tempfile::TempDir>,
    _cluster: Option<Cluster>,
}

fn memory() -> Option<Opened> {
    Some(Opened { store: Box::new(MemoryStore::new()), _dir: None, _cluster: None })
}

fn sled_with(durability: Durability) -> Option<Opened> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SledStore::open(dir.path(), SledOptions { durability }).expect("open sled");
    Some(Opened { store: Box::new(store), _dir: Some(dir), _cluster: None })
}

fn sled() -> Option<Opened> {
    sled_with(Durability::Flush)
}

fn sled_fsync() -> Option<Opened> {
    sled_with(Durability::Fsync)
}

/// A PostgreSQL store in a fresh database of its own throwaway cluster
/// (`None`: this machine has no PostgreSQL, and the test skips).
fn postgres() -> Option<Opened> {
    let cluster = Cluster::start()?;
    let url = cluster.new_database("conformance");
    let store = PgStore::connect(&url, &PgOptions { pool_size: 8, ..PgOptions::default() }).expect("connect to the test database");
    Some(Opened { store: Box::new(store), _dir: None, _cluster: Some(cluster) })
}

/// The suite: every check takes any store.
mod suite {
    use super::*;

    fn create(store: &dyn EventStore, id: StreamId, count: u64, sealed: Option<&[u8]>) -> Appended {
        store.append(AppendRequest::create(id, records(id, 0, count), sealed.map(<[u8]>::to_vec))).wait().expect("create")
    }

    fn seqs_and_bytes(store: &dyn EventStore, id: StreamId, from: u64, to: Option<u64>) -> Vec<(u64, Vec<u8>)> {
        store.read_blocking(id, from, to).expect("read").into_iter().map(|r| (r.seq, r.bytes)).collect()
    }

    fn expected(id: StreamId, from: u64, to: u64) -> Vec<(u64, Vec<u8>)> {
        (from..to).map(|seq| (seq, record(id, seq))).collect()
    }

    pub fn append_and_read_ranges(store: &dyn EventStore) {
        let id = stream(1);
        let created = create(store, id, 3, None);
        assert_eq!(created, Appended { stream: id, first_seq: 0, next_seq: 3, first_position: 1 });
        let grown = store.append(AppendRequest::at(id, 3, records(id, 3, 5))).wait().expect("append");
        assert_eq!(grown, Appended { stream: id, first_seq: 3, next_seq: 5, first_position: 4 });
        assert_eq!(store.next_seq(id), Ok(5));

        assert_eq!(seqs_and_bytes(store, id, 0, None), expected(id, 0, 5));
        assert_eq!(seqs_and_bytes(store, id, 1, Some(3)), expected(id, 1, 3));
        assert_eq!(seqs_and_bytes(store, id, 3, None), expected(id, 3, 5));
        assert_eq!(seqs_and_bytes(store, id, 2, Some(100)), expected(id, 2, 5));
        assert_eq!(seqs_and_bytes(store, id, 4, Some(5)), expected(id, 4, 5));
        // Empty, past the end, reversed, maximal: nothing, no error.
        assert_eq!(seqs_and_bytes(store, id, 2, Some(2)), vec![]);
        assert_eq!(seqs_and_bytes(store, id, 5, None), vec![]);
        assert_eq!(seqs_and_bytes(store, id, 10, Some(20)), vec![]);
        assert_eq!(seqs_and_bytes(store, id, 3, Some(1)), vec![]);
        assert_eq!(seqs_and_bytes(store, id, u64::MAX, None), vec![]);
        assert_eq!(seqs_and_bytes(store, id, 0, Some(u64::MAX)), expected(id, 0, 5));
        // Unknown stream: nothing, next seq 0. Neighbours do not leak in.
        assert_eq!(seqs_and_bytes(store, stream(2), 0, None), vec![]);
        assert_eq!(store.next_seq(stream(2)), Ok(0));
        create(store, stream(0), 2, None);
        create(store, stream(2), 2, None);
        assert_eq!(seqs_and_bytes(store, id, 0, None), expected(id, 0, 5));
    }

    pub fn a_wrong_expected_next_conflicts_and_changes_nothing(store: &dyn EventStore) {
        let id = stream(1);
        create(store, id, 2, Some(b"seed"));
        let conflict = |expected_next, actual_next| Err(StoreError::Conflict { stream: id, expected_next, actual_next });
        let stale = store.append(AppendRequest::at(id, 1, vec![b"x".to_vec()])).wait();
        assert_eq!(stale, conflict(1, 2));
        let ahead = store.append(AppendRequest::at(id, 5, vec![b"x".to_vec()])).wait();
        assert_eq!(ahead, conflict(5, 2));
        let recreate = store.append(AppendRequest::create(id, vec![b"x".to_vec()], Some(b"other".to_vec()))).wait();
        assert_eq!(recreate, conflict(0, 2));
        // State unchanged.
        assert_eq!(store.next_seq(id), Ok(2));
        assert_eq!(seqs_and_bytes(store, id, 0, None), expected(id, 0, 2));
        assert_eq!(store.sealed_blocking(id), Ok(Some(b"seed".to_vec())));
        // Appending to a stream that does not exist creates nothing.
        let missing = stream(9);
        let orphan = store.append(AppendRequest::at(missing, 3, vec![b"x".to_vec()])).wait();
        assert_eq!(orphan, Err(StoreError::Conflict { stream: missing, expected_next: 3, actual_next: 0 }));
        assert_eq!(store.list_streams(None, 10), Ok(vec![id]));
        assert_eq!(store.stats().appends, 1);
    }

    pub fn invalid_requests_are_refused(store: &dyn EventStore) {
        let id = stream(1);
        let empty = store.append(AppendRequest::create(id, vec![], None)).wait();
        assert!(matches!(empty, Err(StoreError::Invalid(_))), "{empty:?}");
        create(store, id, 1, None);
        let sealed_late =
            store.append(AppendRequest { sealed: Some(b"late".to_vec()), ..AppendRequest::at(id, 1, vec![b"x".to_vec()]) }).wait();
        assert!(matches!(sealed_late, Err(StoreError::Invalid(_))), "{sealed_late:?}");
        let overflow = store.append(AppendRequest::at(id, u64::MAX, vec![b"x".to_vec(), b"y".to_vec()])).wait();
        assert!(matches!(overflow, Err(StoreError::Invalid(_))), "{overflow:?}");
        assert_eq!(store.next_seq(id), Ok(1));
        assert_eq!(store.sealed_blocking(id), Ok(None));
    }

    pub fn racing_appends_exactly_one_wins(store: &dyn EventStore) {
        let id = stream(1);
        create(store, id, 1, None);
        for round in 0..20 {
            let next = store.next_seq(id).expect("next");
            // Contender 1 appends one record, contender 2 two: the loser's
            // conflict tells which one won.
            let barrier = std::sync::Barrier::new(2);
            let (one, two) = std::thread::scope(|scope| {
                let contend = |count: u64| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        let batch = (0..count).map(|i| format!("{round}:{count}:{i}").into_bytes()).collect();
                        barrier.wait();
                        store.append(AppendRequest::at(id, next, batch)).wait()
                    })
                };
                let (one, two) = (contend(1), contend(2));
                (one.join().expect("thread"), two.join().expect("thread"))
            });
            let (winner_count, loser) = match (&one, &two) {
                (Ok(_), Err(loser)) => (1, loser),
                (Err(loser), Ok(_)) => (2, loser),
                _ => panic!("round {round}: exactly one must win: {one:?} / {two:?}"),
            };
            assert_eq!(*loser, StoreError::Conflict { stream: id, expected_next: next, actual_next: next + winner_count });
            let stored = store.read_blocking(id, next, None).expect("read");
            assert_eq!(stored.len() as u64, winner_count);
            for (i, r) in stored.iter().enumerate() {
                assert_eq!(r.bytes, format!("{round}:{winner_count}:{i}").into_bytes());
            }
        }
    }

    pub fn sealed_data_only_on_creation(store: &dyn EventStore) {
        let (with, without) = (stream(1), stream(2));
        create(store, with, 1, Some(b"seed and token hashes"));
        create(store, without, 1, None);
        assert_eq!(store.sealed_blocking(with), Ok(Some(b"seed and token hashes".to_vec())));
        assert_eq!(store.sealed_blocking(without), Ok(None));
        assert_eq!(store.sealed_blocking(stream(3)), Ok(None));
        let late =
            store.append(AppendRequest { sealed: Some(b"late".to_vec()), ..AppendRequest::at(without, 1, vec![b"x".to_vec()]) }).wait();
        assert!(matches!(late, Err(StoreError::Invalid(_))));
        assert_eq!(store.sealed_blocking(without), Ok(None));
        // Sealed data is not part of the log.
        assert_eq!(seqs_and_bytes(store, with, 0, None), expected(with, 0, 1));
        // Empty side data is still side data.
        create(store, stream(4), 1, Some(b""));
        assert_eq!(store.sealed_blocking(stream(4)), Ok(Some(vec![])));
    }

    pub fn list_streams_in_byte_order_with_pagination(store: &dyn EventStore) {
        let mut ids: Vec<StreamId> = [17, 3, 250, 4, 1000, 70_000, 9, 0, 5, 12, 11, 600].into_iter().map(stream).collect();
        ids.push(StreamId([0; 16]));
        ids.push(StreamId([0xff; 16]));
        let mut almost = [0xff; 16];
        almost[15] = 0xfe;
        ids.push(StreamId(almost));
        for (i, id) in ids.iter().enumerate() {
            // Streams of different lengths: listing must skip whole streams.
            create(store, *id, 1 + i as u64 % 4, None);
        }
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(store.list_streams(None, 100), Ok(sorted.clone()));
        assert_eq!(store.list_streams(None, 0), Ok(vec![]));
        assert_eq!(store.list_streams(None, 3), Ok(sorted[..3].to_vec()));
        for limit in [1, 4, 7] {
            let mut pages = Vec::new();
            let mut after = None;
            loop {
                let page = store.list_streams(after, limit).expect("page");
                assert!(page.len() <= limit);
                if page.is_empty() {
                    break;
                }
                after = page.last().copied();
                pages.extend(page);
            }
            assert_eq!(pages, sorted, "limit {limit}");
        }
        // Strictly after, also from an id that is not a stream.
        assert_eq!(store.list_streams(Some(stream(9)), 2), Ok(vec![stream(11), stream(12)]));
        assert_eq!(store.list_streams(Some(stream(10)), 2), Ok(vec![stream(11), stream(12)]));
        assert_eq!(store.list_streams(Some(StreamId([0xff; 16])), 10), Ok(vec![]));
        assert_eq!(store.list_streams(Some(StreamId(almost)), 10), Ok(vec![StreamId([0xff; 16])]));
    }

    pub fn subscribers_receive_every_notice_in_order(store: &dyn EventStore) {
        let mut early = store.subscribe();
        let mut expected_notices = Vec::new();
        for n in 0..5 {
            expected_notices.push(create(store, stream(n), 1 + u64::from(n % 2), None));
        }
        for n in [3, 1, 4, 1, 0] {
            let id = stream(n);
            let next = store.next_seq(id).expect("next");
            let appended = store.append(AppendRequest::at(id, next, records(id, next, next + 1))).wait().expect("append");
            expected_notices.push(appended);
            // A refused append sends no notice.
            let _ = store.append(AppendRequest::at(id, 0, vec![b"x".to_vec()])).wait();
        }
        // Notices are sent before the append resolves: all are here.
        let mut received = Vec::new();
        while let Ok(notice) = early.try_recv() {
            received.push(notice);
        }
        assert_eq!(received, expected_notices);

        // Concurrent appenders: every notice arrives, each stream's in order.
        let mut late = store.subscribe();
        std::thread::scope(|scope| {
            for n in 10..14 {
                scope.spawn(move || {
                    let id = stream(n);
                    create(store, id, 1, None);
                    for seq in 1..10 {
                        store.append(AppendRequest::at(id, seq, records(id, seq, seq + 1))).wait().expect("append");
                    }
                });
            }
        });
        let mut next_by_stream = std::collections::HashMap::new();
        let mut count = 0;
        while let Ok(notice) = late.try_recv() {
            let next = next_by_stream.entry(notice.stream).or_insert(0);
            assert_eq!(notice.first_seq, *next, "{notice:?}");
            *next = notice.next_seq;
            count += 1;
        }
        assert_eq!(count, 40);
        assert!(next_by_stream.values().all(|next| *next == 10));
    }

    pub fn close_then_everything_is_closed(store: &dyn EventStore) {
        let id = stream(1);
        create(store, id, 2, None);
        let mut subscriber = store.subscribe();
        store.append(AppendRequest::at(id, 2, records(id, 2, 3))).wait().expect("append");
        store.close().expect("close");
        let after = store.append(AppendRequest::at(id, 3, records(id, 3, 4))).wait();
        assert_eq!(after, Err(StoreError::Closed));
        let create_after = store.append(AppendRequest::create(stream(2), vec![b"x".to_vec()], None)).wait();
        assert_eq!(create_after, Err(StoreError::Closed));
        assert_eq!(store.read_blocking(id, 0, None), Err(StoreError::Closed));
        assert_eq!(store.next_seq(id), Err(StoreError::Closed));
        assert_eq!(store.list_streams(None, 10), Err(StoreError::Closed));
        assert_eq!(store.list_summaries_blocking(None, 10), Err(StoreError::Closed));
        assert_eq!(store.sealed_blocking(id), Err(StoreError::Closed));
        // Subscribers get what was sent, then the end of the channel.
        assert_eq!(subscriber.try_recv().map(|n| n.next_seq), Ok(3));
        assert_eq!(subscriber.try_recv(), Err(tokio::sync::broadcast::error::TryRecvError::Closed));
        assert_eq!(store.subscribe().try_recv(), Err(tokio::sync::broadcast::error::TryRecvError::Closed));
        // Closing twice is fine.
        assert_eq!(store.close(), Ok(()));
    }

    pub fn summaries_describe_the_stream_as_it_is(store: &dyn EventStore) {
        let (a, b, c) = (stream(1), stream(2), stream(3));
        let summaries = |store: &dyn EventStore| -> Vec<(StreamId, u64, Option<Vec<u8>>)> {
            store.list_summaries_blocking(None, 10).expect("summaries").into_iter().map(|s| (s.stream, s.next_seq, s.summary)).collect()
        };
        store.append(AppendRequest::create(a, records(a, 0, 2), Some(b"seed".to_vec())).with_summary(b"a@2".to_vec())).wait().unwrap();
        store.append(AppendRequest::create(b, records(b, 0, 1), None).with_summary(b"b@1".to_vec())).wait().unwrap();
        create(store, c, 1, None);
        assert_eq!(
            summaries(store),
            vec![(a, 2, Some(b"a@2".to_vec())), (b, 1, Some(b"b@1".to_vec())), (c, 1, None)],
            "each summary as given; none for a stream created without one"
        );
        // A new summary replaces the old one; an append without one leaves none current.
        store.append(AppendRequest::at(a, 2, records(a, 2, 3)).with_summary(b"a@3".to_vec())).wait().unwrap();
        store.append(AppendRequest::at(b, 1, records(b, 1, 2))).wait().unwrap();
        assert_eq!(summaries(store), vec![(a, 3, Some(b"a@3".to_vec())), (b, 2, None), (c, 1, None)]);
        // A summary alone describes a stream at its present length, adds no
        // record and sends no notice …
        let mut notices = store.subscribe();
        let described = store.append(AppendRequest::describe(b, 2, b"b@2".to_vec())).wait();
        assert_eq!(described, Ok(Appended { stream: b, first_seq: 2, next_seq: 2, first_position: 0 }), "no record, no position");
        assert_eq!(store.next_seq(b), Ok(2));
        assert!(notices.try_recv().is_err(), "no record, no notice");
        assert_eq!(summaries(store)[1], (b, 2, Some(b"b@2".to_vec())));
        // … and is refused for another length, or a stream that does not exist.
        let stale = store.append(AppendRequest::describe(a, 2, b"a@2 again".to_vec())).wait();
        assert_eq!(stale, Err(StoreError::Conflict { stream: a, expected_next: 2, actual_next: 3 }));
        let missing = store.append(AppendRequest::describe(stream(9), 1, b"?".to_vec())).wait();
        assert!(matches!(missing, Err(StoreError::Conflict { actual_next: 0, .. })), "{missing:?}");
        let nothing = store.append(AppendRequest { summary: None, ..AppendRequest::describe(a, 3, vec![]) }).wait();
        assert!(matches!(nothing, Err(StoreError::Invalid(_))), "{nothing:?}");
        assert_eq!(summaries(store)[0], (a, 3, Some(b"a@3".to_vec())));
        // Paging as list_streams does.
        let page: Vec<StreamId> = store.list_summaries_blocking(Some(a), 1).unwrap().into_iter().map(|s| s.stream).collect();
        assert_eq!(page, vec![b]);
        assert_eq!(store.stats().appends, 5, "a summary alone is not an append of records");
    }

    pub async fn summary_answers_for_one_stream(store: &dyn EventStore) {
        let of = |id: StreamId| store.summary(id);
        let listed = |id: StreamId, next_seq: u64, summary: Option<&[u8]>| -> Result<Option<StreamSummary>, StoreError> {
            Ok(Some(StreamSummary { stream: id, next_seq, summary: summary.map(<[u8]>::to_vec) }))
        };
        // Nothing yet: no stream, whichever id (all zeros has no predecessor, all ones no successor).
        let (zero, one, top) = (StreamId([0; 16]), StreamId([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), StreamId([0xff; 16]));
        for id in [zero, one, top, stream(1)] {
            assert_eq!(of(id).await, Ok(None), "{id}: no such stream");
        }
        // A stream created with a summary: that summary, at its record count.
        let a = stream(1);
        store.append(AppendRequest::create(a, records(a, 0, 2), Some(b"seed".to_vec())).with_summary(b"a@2".to_vec())).await.unwrap();
        assert_eq!(of(a).await, listed(a, 2, Some(b"a@2")));
        // Its neighbours in byte order are still unknown (the listing from
        // just before the one below finds `a`, which is not it).
        let (before_a, after_a) = (stream(0), stream(2));
        assert_eq!(of(before_a).await, Ok(None), "the stream just before one that exists");
        assert_eq!(of(after_a).await, Ok(None), "the stream just after one that exists");
        // Records without a summary leave none current; a summary-only
        // append describes the stream again without adding a record.
        store.append(AppendRequest::at(a, 2, records(a, 2, 3))).await.unwrap();
        assert_eq!(of(a).await, listed(a, 3, None));
        store.append(AppendRequest::describe(a, 3, b"a@3".to_vec())).await.unwrap();
        assert_eq!(of(a).await, listed(a, 3, Some(b"a@3")));
        store.append(AppendRequest::describe(a, 3, b"a@3, again".to_vec())).await.unwrap();
        assert_eq!(of(a).await, listed(a, 3, Some(b"a@3, again")), "the latest summary replaces the previous one");
        // Streams whose ids are adjacent in byte order each answer their own:
        // the first id of all (no predecessor), its successor, two ids a
        // carry apart (…00ff, …0100: the second's predecessor takes a
        // borrow), the last id of all, and a stream created without a summary.
        let carry_low = StreamId([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff]);
        let carry_high = StreamId([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
        let named = [(zero, 1, &b"zero"[..]), (one, 2, b"one"), (carry_low, 3, b"low"), (carry_high, 4, b"high"), (top, 5, b"top")];
        for (id, count, summary) in named {
            store.append(AppendRequest::create(id, records(id, 0, count), None).with_summary(summary.to_vec())).await.unwrap();
        }
        let bare = stream(3);
        store.append(AppendRequest::create(bare, records(bare, 0, 1), None)).await.unwrap();
        for (id, count, summary) in named {
            assert_eq!(of(id).await, listed(id, count, Some(summary)), "{id}");
        }
        assert_eq!(of(bare).await, listed(bare, 1, None), "a stream without a summary is still a stream");
        assert_eq!(of(a).await, listed(a, 3, Some(b"a@3, again")), "unchanged by its new neighbours");
        // Ids between existing streams are still unknown.
        for id in [StreamId([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]), stream(2), StreamId([0xfe; 16])] {
            assert_eq!(of(id).await, Ok(None), "{id}: no such stream");
        }
        // A refused summary-only append changes nothing.
        let stale = store.append(AppendRequest::describe(zero, 5, b"stale".to_vec())).await;
        assert_eq!(stale, Err(StoreError::Conflict { stream: zero, expected_next: 5, actual_next: 1 }));
        assert_eq!(of(zero).await, listed(zero, 1, Some(b"zero")));
        // The same answers as the listing.
        let listing = store.list_summaries(None, 100).await.unwrap();
        assert_eq!(listing.len(), 7, "a, the five adjacent ones and the bare one");
        for entry in listing {
            assert_eq!(of(entry.stream).await, Ok(Some(entry.clone())), "{}", entry.stream);
        }
        // Closed: refused like every read.
        store.close().unwrap();
        assert_eq!(of(a).await, Err(StoreError::Closed));
    }

    /// Appends in flight together stand or fall each by itself: a
    /// backend that commits them together (PostgreSQL's batches, sled's
    /// groups) must still answer each as if it ran alone.
    pub async fn appends_in_flight_together_each_stand_alone(store: &dyn EventStore) {
        const STREAMS: u32 = 40;
        let all = usize::try_from(STREAMS).expect("40");
        for n in 0..STREAMS {
            let id = stream(n);
            store.append(AppendRequest::create(id, records(id, 0, 1), None)).await.expect("create");
        }
        let before = store.stats().appends;
        let mut notices = store.subscribe();
        // All asked before any is awaited: on every stream its next record;
        // on every fourth a rival for the same seq; on every fifth one at a
        // seq the stream is nowhere near.
        let mut next = Vec::new();
        let mut rivals = Vec::new();
        let mut strays = Vec::new();
        for n in 0..STREAMS {
            let id = stream(n);
            next.push((n, store.append(AppendRequest::at(id, 1, records(id, 1, 2)).with_summary(n.to_be_bytes().to_vec()))));
            if n % 4 == 0 {
                rivals.push((n, store.append(AppendRequest::at(id, 1, vec![b"rival".to_vec()]).with_summary(b"rival".to_vec()))));
            }
            if n % 5 == 0 {
                strays.push((n, store.append(AppendRequest::at(id, 7, records(id, 7, 8)))));
            }
        }
        let mut won = std::collections::HashMap::new();
        for (n, pending) in next {
            match pending.await {
                Ok(appended) => {
                    assert_eq!((appended.stream, appended.first_seq, appended.next_seq), (stream(n), 1, 2));
                    won.insert(n, (record(stream(n), 1), Some(n.to_be_bytes().to_vec())));
                }
                Err(err) => assert_eq!(err, StoreError::Conflict { stream: stream(n), expected_next: 1, actual_next: 2 }, "stream {n}"),
            }
        }
        for (n, pending) in rivals {
            match pending.await {
                Ok(appended) => {
                    assert_eq!((appended.stream, appended.first_seq, appended.next_seq), (stream(n), 1, 2));
                    assert!(won.insert(n, (b"rival".to_vec(), Some(b"rival".to_vec()))).is_none(), "stream {n}: both rivals won");
                }
                Err(err) => assert_eq!(err, StoreError::Conflict { stream: stream(n), expected_next: 1, actual_next: 2 }, "stream {n}"),
            }
        }
        for (n, pending) in strays {
            let refused = pending.await;
            assert!(matches!(refused, Err(StoreError::Conflict { expected_next: 7, actual_next: 1 | 2, .. })), "stream {n}: {refused:?}");
        }
        assert_eq!(won.len(), all, "one append won on every stream");
        // The log and the summaries hold exactly the winners.
        let summaries = store.list_summaries(None, 100).await.expect("summaries");
        assert_eq!(summaries.len(), all);
        for summary in summaries {
            let n = (0..STREAMS).find(|n| stream(*n) == summary.stream).expect("a stream of the test");
            let (bytes, described) = &won[&n];
            let read: Vec<_> = store.read(summary.stream, 0, None).await.expect("read").into_iter().map(|r| (r.seq, r.bytes)).collect();
            assert_eq!(read, vec![(0, record(stream(n), 0)), (1, bytes.clone())], "stream {n}");
            assert_eq!((summary.next_seq, &summary.summary), (2, described), "stream {n}");
        }
        // One notice per winner, none for the refused.
        let mut heard = std::collections::HashSet::new();
        while let Ok(notice) = notices.try_recv() {
            assert_eq!((notice.first_seq, notice.next_seq), (1, 2), "{notice:?}");
            assert!(heard.insert(notice.stream), "a second notice for {}", notice.stream);
        }
        assert_eq!(heard.len(), all);
        assert_eq!(store.stats().appends - before, u64::from(STREAMS));
    }

    /// Reads in flight together each get their own records: a backend
    /// that answers them in one query (PostgreSQL) must split its answer
    /// right, ranges that hold nothing included.
    pub async fn reads_in_flight_together_each_get_their_own(store: &dyn EventStore) {
        for n in 0..12 {
            let id = stream(n);
            store.append(AppendRequest::create(id, records(id, 0, u64::from(n) + 1), None)).await.expect("create");
        }
        let mut asked = Vec::new();
        for n in 0..12 {
            let (id, len) = (stream(n), u64::from(n) + 1);
            for (from, to) in
                [(0, None), (len / 2, None), (1, Some(len)), (len, None), (3, Some(2)), (0, Some(1)), (len + 5, Some(len + 9))]
            {
                asked.push((id, from, to, len, store.read(id, from, to)));
            }
        }
        // And a stream that does not exist.
        asked.push((stream(99), 0, None, 0, store.read(stream(99), 0, None)));
        for (id, from, to, len, pending) in asked {
            let read: Vec<(u64, Vec<u8>)> = pending.await.expect("read").into_iter().map(|r| (r.seq, r.bytes)).collect();
            let end = to.map_or(len, |to| to.min(len));
            assert_eq!(read, expected(id, from, end.max(from)), "{id} {from}..{to:?}");
        }
    }

    /// The whole feed, page by page.
    fn whole_feed(store: &dyn EventStore, page: usize) -> Vec<FeedEntry> {
        let mut all: Vec<FeedEntry> = Vec::new();
        loop {
            let after = all.last().map_or(0, |e| e.position);
            let next = store.read_feed_blocking(after, page).expect("feed");
            assert!(next.len() <= page);
            if next.is_empty() {
                return all;
            }
            all.extend(next);
        }
    }

    /// Checks that `feed` is dense from 1, names each (stream, seq) once,
    /// holds each stream's records in seq order with their bytes, and
    /// places every acknowledged append where its notice said.
    fn assert_dense_and_ordered(feed: &[FeedEntry], acked: &[Appended]) {
        let mut next_seq = std::collections::HashMap::new();
        for (expected, entry) in (1..).zip(feed) {
            assert_eq!(entry.position, expected, "positions are dense from 1");
            let next = next_seq.entry(entry.stream).or_insert(0);
            assert_eq!(entry.seq, *next, "{}: seqs in order, each once", entry.stream);
            *next += 1;
            assert_eq!(entry.bytes, record(entry.stream, entry.seq), "the record's own bytes at {}", entry.position);
        }
        for appended in acked {
            for (offset, seq) in (appended.first_seq..appended.next_seq).enumerate() {
                let position = appended.first_position + offset as u64;
                let entry = &feed[usize::try_from(position - 1).expect("small")];
                assert_eq!((entry.stream, entry.seq), (appended.stream, seq), "the notice's position {position}");
            }
        }
    }

    pub fn the_feed_holds_every_record_once_in_commit_order(store: &dyn EventStore) {
        assert_eq!(store.feed_head(), Ok(0));
        assert_eq!(store.read_feed_blocking(0, 10), Ok(vec![]));
        let mut notices = store.subscribe();
        let (a, b) = (stream(1), stream(2));
        let mut acked = vec![create(store, a, 3, None), create(store, b, 2, None)];
        acked.push(store.append(AppendRequest::at(a, 3, records(a, 3, 5))).wait().expect("append"));
        // Refused and summary-only appends take no position.
        assert!(store.append(AppendRequest::at(a, 1, records(a, 1, 2))).wait().is_err());
        let described = store.append(AppendRequest::describe(b, 2, b"b@2".to_vec())).wait().expect("describe");
        assert_eq!(described.first_position, 0);
        acked.push(store.append(AppendRequest::at(b, 2, records(b, 2, 3))).wait().expect("append"));
        let positions: Vec<u64> = acked.iter().map(|a| a.first_position).collect();
        assert_eq!(positions, vec![1, 4, 6, 8], "each append's records follow the previous append's");
        assert_eq!(store.feed_head(), Ok(8));
        let feed = whole_feed(store, 100);
        let order: Vec<(StreamId, u64)> = feed.iter().map(|e| (e.stream, e.seq)).collect();
        assert_eq!(order, vec![(a, 0), (a, 1), (a, 2), (b, 0), (b, 1), (a, 3), (a, 4), (b, 2)]);
        assert_dense_and_ordered(&feed, &acked);
        // Notices carry the same positions.
        let heard: Vec<u64> = std::iter::from_fn(|| notices.try_recv().ok()).map(|n| n.first_position).collect();
        assert_eq!(heard, positions);
        // `after` and `limit`.
        let page = store.read_feed_blocking(3, 2).expect("page");
        assert_eq!(page.iter().map(|e| e.position).collect::<Vec<_>>(), vec![4, 5]);
        assert_eq!(page, feed[3..5].to_vec());
        assert_eq!(store.read_feed_blocking(7, 100).expect("tail"), feed[7..].to_vec());
        assert_eq!(store.read_feed_blocking(8, 100), Ok(vec![]));
        assert_eq!(store.read_feed_blocking(u64::MAX, 100), Ok(vec![]));
        assert_eq!(store.read_feed_blocking(0, 0), Ok(vec![]));
        assert_eq!(store.read_feed_blocking(0, usize::MAX).expect("any limit is bounded"), feed);
        for page in [1, 3, 5] {
            assert_eq!(whole_feed(store, page), feed, "pages of {page}");
        }
        store.close().expect("close");
        assert_eq!(store.read_feed_blocking(0, 10), Err(StoreError::Closed));
        assert_eq!(store.feed_head(), Err(StoreError::Closed));
    }

    /// A reader catches up from a checkpoint, then follows notices (as
    /// doorbells) while appenders run: it sees every record exactly once,
    /// in position order, and each notice's position matches the feed.
    pub fn a_reader_from_a_checkpoint_then_live_sees_each_record_once(store: &dyn EventStore) {
        // The reader awaits the async read, on a runtime of its own.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        for n in 0..3 {
            create(store, stream(n), 2, None);
        }
        let mut notices = store.subscribe();
        // The reader's checkpoint: what it had already applied.
        let mut checkpoint = 4;
        let mut seen: Vec<FeedEntry> = runtime.block_on(store.read_feed(0, 4)).expect("first page");
        let acked = std::thread::scope(|scope| {
            let appenders: Vec<_> = (0..3)
                .map(|n| {
                    scope.spawn(move || {
                        let id = stream(n);
                        (2..12)
                            .map(|seq| store.append(AppendRequest::at(id, seq, records(id, seq, seq + 1))).wait().expect("append"))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let total = 6 + 3 * 10;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while seen.len() < total {
                assert!(std::time::Instant::now() < deadline, "the reader stalled at {checkpoint}");
                let page = runtime.block_on(store.read_feed(checkpoint, 7)).expect("page");
                if page.is_empty() {
                    // Nothing new: wait for a doorbell (or a short tick).
                    if notices.try_recv().is_err() {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    continue;
                }
                for entry in page {
                    assert_eq!(entry.position, checkpoint + 1, "no gap, no repeat");
                    checkpoint = entry.position;
                    seen.push(entry);
                }
            }
            appenders.into_iter().flat_map(|a| a.join().expect("appender")).collect::<Vec<_>>()
        });
        assert_eq!(seen, whole_feed(store, 1000), "what the reader saw is the feed");
        assert_dense_and_ordered(&seen, &acked);
    }

    pub fn concurrent_appenders_make_a_dense_feed_in_each_streams_order(store: &dyn EventStore) {
        let acked: Vec<Appended> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4)
                .map(|n| {
                    scope.spawn(move || {
                        let id = stream(n);
                        let mut next = 0;
                        let mut acked = Vec::new();
                        for round in 0..25 {
                            let len = 1 + round % 3;
                            let request = if next == 0 {
                                AppendRequest::create(id, records(id, 0, len), None)
                            } else {
                                AppendRequest::at(id, next, records(id, next, next + len))
                            };
                            let appended = store.append(request).wait().expect("append");
                            next = appended.next_seq;
                            acked.push(appended);
                        }
                        acked
                    })
                })
                .collect();
            threads.into_iter().flat_map(|t| t.join().expect("appender")).collect()
        });
        let total: u64 = acked.iter().map(|a| a.next_seq - a.first_seq).sum();
        assert_eq!(store.feed_head(), Ok(total));
        let feed = whole_feed(store, 37);
        assert_eq!(feed.len() as u64, total);
        assert_dense_and_ordered(&feed, &acked);
    }

    fn commit(name: &str, expected: Option<u64>, checkpoint: u64, puts: &[(&[u8], Option<&[u8]>)]) -> ProjectionCommit {
        ProjectionCommit {
            name: name.into(),
            expected,
            checkpoint,
            puts: puts.iter().map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec))).collect(),
        }
    }

    pub async fn projection_commits_compare_and_set(store: &dyn EventStore) {
        let name = "ratings";
        assert_eq!(store.projection_load(name).await, Ok(None));
        assert_eq!(store.projection_names(), Ok(vec![]));
        store.projection_commit(commit(name, None, 5, &[(b"alice", Some(b"1500")), (b"bob", Some(b"1400"))])).await.expect("first");
        assert_eq!(store.projection_load(name).await, Ok(Some(5)));
        assert_eq!(store.projection_load_blocking(name), Ok(Some(5)));
        // A stale or wrong expectation changes nothing.
        let conflict = |expected| Err(StoreError::ProjectionConflict { name: name.into(), expected, actual: Some(5) });
        assert_eq!(store.projection_commit(commit(name, None, 9, &[(b"alice", Some(b"0"))])).await, conflict(None));
        assert_eq!(store.projection_commit(commit(name, Some(4), 9, &[(b"alice", Some(b"0"))])).await, conflict(Some(4)));
        assert_eq!(store.projection_commit(commit(name, Some(6), 9, &[(b"alice", Some(b"0"))])).await, conflict(Some(6)));
        assert_eq!(store.projection_get(name, b"alice").await, Ok(Some(b"1500".to_vec())));
        assert_eq!(store.projection_load(name).await, Ok(Some(5)));
        // The right one writes, deletes, and moves the checkpoint; of two
        // puts of one key the later wins.
        let step =
            commit(name, Some(5), 8, &[(b"alice", Some(b"1510")), (b"bob", None), (b"carol", Some(b"x")), (b"carol", Some(b"1300"))]);
        store.projection_commit_blocking(step).expect("second");
        assert_eq!(store.projection_load(name).await, Ok(Some(8)));
        assert_eq!(store.projection_get(name, b"alice").await, Ok(Some(b"1510".to_vec())));
        assert_eq!(store.projection_get(name, b"bob").await, Ok(None));
        assert_eq!(store.projection_get(name, b"carol").await, Ok(Some(b"1300".to_vec())));
        // Racing committers of one step: exactly one wins.
        let racing: Vec<_> = (0..4).map(|i| store.projection_commit(commit(name, Some(8), 9 + i, &[(b"alice", Some(b"r"))]))).collect();
        let mut won = 0;
        for pending in racing {
            match pending.await {
                Ok(()) => won += 1,
                Err(StoreError::ProjectionConflict { actual: Some(9..=12), .. }) => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(won, 1);
        // Another projection is apart; names lists both with checkpoints.
        store.projection_commit(commit("history", None, 2, &[(b"alice", Some(b"h"))])).await.expect("other");
        assert_eq!(store.projection_get("history", b"bob").await, Ok(None));
        let names = store.projection_names().expect("names");
        assert_eq!(names.len(), 2);
        assert_eq!(names[0], ("history".to_string(), 2));
        assert_eq!(names[1].0, "ratings");
        // A reset forgets rows and checkpoint, of that projection only.
        store.projection_reset(name).await.expect("reset");
        assert_eq!(store.projection_load(name).await, Ok(None));
        assert_eq!(store.projection_get(name, b"alice").await, Ok(None));
        assert_eq!(store.projection_scan(name, None, 10).await, Ok(vec![]));
        assert_eq!(store.projection_names(), Ok(vec![("history".to_string(), 2)]));
        assert_eq!(store.projection_get("history", b"alice").await, Ok(Some(b"h".to_vec())));
        store.projection_reset_blocking("never-ran").expect("resetting nothing is fine");
        // Rebuilt from the start.
        assert!(matches!(
            store.projection_commit(commit(name, Some(8), 1, &[])).await,
            Err(StoreError::ProjectionConflict { actual: None, .. })
        ));
        store.projection_commit(commit(name, None, 1, &[(b"dave", Some(b"1"))])).await.expect("rebuild");
        assert_eq!(store.projection_scan_blocking(name, None, 10), Ok(vec![(b"dave".to_vec(), b"1".to_vec())]));
    }

    pub async fn projection_scans_in_key_order_within_bounds(store: &dyn EventStore) {
        let keys: Vec<Vec<u8>> =
            vec![vec![], vec![0], vec![0, 0], vec![0, 1], vec![1], vec![1, 0xff], vec![0x7f], vec![0x80], vec![0xff], vec![0xff; 3]];
        let mut shuffled = keys.clone();
        shuffled.reverse();
        shuffled.rotate_left(3);
        let puts: Vec<(&[u8], Option<&[u8]>)> = shuffled.iter().map(|k| (k.as_slice(), Some(k.as_slice()))).collect();
        store.projection_commit(commit("p", None, 1, &puts)).await.expect("commit");
        // A neighbouring name ("p" + a byte) must not leak in.
        store.projection_commit(commit("pa", None, 1, &[(b"", Some(b"pa")), (b"\x00", Some(b"pa"))])).await.expect("neighbour");
        store.projection_commit(commit("o", None, 1, &[(b"\xff", Some(b"o"))])).await.expect("neighbour");
        let all = store.projection_scan("p", None, 100).await.expect("scan");
        assert_eq!(all, keys.iter().map(|k| (k.clone(), k.clone())).collect::<Vec<_>>());
        for limit in [1, 3, 4] {
            let mut paged = Vec::new();
            let mut after = None;
            loop {
                let page = store.projection_scan("p", after.clone(), limit).await.expect("page");
                assert!(page.len() <= limit);
                let Some(last) = page.last() else { break };
                after = Some(last.0.clone());
                paged.extend(page);
            }
            assert_eq!(paged, all, "pages of {limit}");
        }
        // Strictly after a key that is not a row.
        assert_eq!(store.projection_scan("p", Some(vec![0, 0, 0]), 2).await.expect("scan")[0].0, vec![0, 1]);
        assert_eq!(store.projection_scan("p", Some(vec![0xff; 3]), 2).await, Ok(vec![]));
        assert_eq!(store.projection_scan("p", None, 0).await, Ok(vec![]));
        assert_eq!(store.projection_scan("p", None, usize::MAX).await.expect("bounded"), all);
        assert_eq!(store.projection_scan("nothing", None, 10).await, Ok(vec![]));
    }

    pub async fn projection_names_keys_and_values_are_checked(store: &dyn EventStore) {
        let invalid = |result: Result<(), StoreError>| assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
        for bad in ["", "Ratings", "a b", "a/b", &"x".repeat(65)] {
            invalid(store.projection_load(bad).await.map(drop));
            invalid(store.projection_load_blocking(bad).map(drop));
            invalid(store.projection_commit(commit(bad, None, 1, &[])).await);
            invalid(store.projection_get(bad, b"k").await.map(drop));
            invalid(store.projection_scan(bad, None, 1).await.map(drop));
            invalid(store.projection_reset(bad).await);
            invalid(store.projection_lease(bad).await.map(drop));
        }
        let long_key = vec![7; MAX_PROJECTION_KEY + 1];
        invalid(store.projection_commit(commit("p", None, 1, &[(&long_key, Some(b"v"))])).await);
        invalid(store.projection_get("p", &long_key).await.map(drop));
        invalid(store.projection_scan("p", Some(long_key), 1).await.map(drop));
        let big = vec![7; MAX_PROJECTION_VALUE + 1];
        invalid(store.projection_commit(commit("p", None, 1, &[(b"k", Some(&big))])).await);
        let many: Vec<(&[u8], Option<&[u8]>)> = vec![(b"k", None); MAX_PROJECTION_PUTS + 1];
        invalid(store.projection_commit(commit("p", None, 1, &many)).await);
        // Nothing was written; the largest allowed commit goes through.
        assert_eq!(store.projection_load("p").await, Ok(None));
        let key = vec![7; MAX_PROJECTION_KEY];
        let value = vec![8; MAX_PROJECTION_VALUE];
        store.projection_commit(commit("p", None, 1, &[(&key, Some(&value))])).await.expect("at the bounds");
        assert_eq!(store.projection_get("p", &key).await, Ok(Some(value)));
    }

    /// Retries a lease until granted (a PostgreSQL backend lets go of a
    /// dropped lease's lock a moment later, when its connection ends).
    pub async fn lease_soon(store: &dyn EventStore, name: &str) -> ludo_storage::ProjectionLease {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            if let Some(lease) = store.projection_lease(name).await.expect("lease") {
                return lease;
            }
            assert!(std::time::Instant::now() < deadline, "{name}: the lease never came back");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    pub async fn projection_leases_are_exclusive(store: &dyn EventStore) {
        let first = store.projection_lease("ratings").await.expect("lease").expect("granted");
        assert_eq!(first.name(), "ratings");
        assert!(first.is_held());
        assert!(store.projection_lease("ratings").await.expect("lease").is_none(), "a second lease on one projection is refused");
        let other = store.projection_lease("history").await.expect("lease");
        assert!(other.is_some(), "another projection has a lease of its own");
        drop(first);
        let again = lease_soon(store, "ratings").await;
        assert!(again.is_held());
        assert!(store.projection_lease("ratings").await.expect("lease").is_none());
    }

    pub async fn pending_appends_can_be_awaited(store: &dyn EventStore) {
        let id = stream(1);
        let created = store.append(AppendRequest::create(id, records(id, 0, 1), None)).await.expect("create");
        assert_eq!(created.next_seq, 1);
        // Many in flight at once, awaited afterwards.
        let pending: Vec<_> = (1..=30)
            .map(|n| {
                let other = stream(n + 100);
                store.append(AppendRequest::create(other, records(other, 0, 1), None))
            })
            .collect();
        for p in pending {
            assert_eq!(p.await.expect("append").next_seq, 1);
        }
        let conflict = store.append(AppendRequest::at(id, 0, records(id, 0, 1))).await;
        assert!(matches!(conflict, Err(StoreError::Conflict { actual_next: 1, .. })));
        assert_eq!(store.stats().appends, 31);
    }
}

macro_rules! conformance {
    ($backend:ident, $open:expr) => {
        mod $backend {
            use super::*;

            #[test]
            fn append_and_read_ranges() {
                let Some(opened) = $open else { return };
                suite::append_and_read_ranges(&*opened.store);
            }
            #[test]
            fn a_wrong_expected_next_conflicts_and_changes_nothing() {
                let Some(opened) = $open else { return };
                suite::a_wrong_expected_next_conflicts_and_changes_nothing(&*opened.store);
            }
            #[test]
            fn invalid_requests_are_refused() {
                let Some(opened) = $open else { return };
                suite::invalid_requests_are_refused(&*opened.store);
            }
            #[test]
            fn racing_appends_exactly_one_wins() {
                let Some(opened) = $open else { return };
                suite::racing_appends_exactly_one_wins(&*opened.store);
            }
            #[test]
            fn sealed_data_only_on_creation() {
                let Some(opened) = $open else { return };
                suite::sealed_data_only_on_creation(&*opened.store);
            }
            #[test]
            fn list_streams_in_byte_order_with_pagination() {
                let Some(opened) = $open else { return };
                suite::list_streams_in_byte_order_with_pagination(&*opened.store);
            }
            #[test]
            fn subscribers_receive_every_notice_in_order() {
                let Some(opened) = $open else { return };
                suite::subscribers_receive_every_notice_in_order(&*opened.store);
            }
            #[test]
            fn close_then_everything_is_closed() {
                let Some(opened) = $open else { return };
                suite::close_then_everything_is_closed(&*opened.store);
            }
            #[test]
            fn summaries_describe_the_stream_as_it_is() {
                let Some(opened) = $open else { return };
                suite::summaries_describe_the_stream_as_it_is(&*opened.store);
            }
            #[tokio::test]
            async fn summary_answers_for_one_stream() {
                let Some(opened) = $open else { return };
                suite::summary_answers_for_one_stream(&*opened.store).await;
            }
            #[tokio::test]
            async fn appends_in_flight_together_each_stand_alone() {
                let Some(opened) = $open else { return };
                suite::appends_in_flight_together_each_stand_alone(&*opened.store).await;
            }
            #[tokio::test]
            async fn reads_in_flight_together_each_get_their_own() {
                let Some(opened) = $open else { return };
                suite::reads_in_flight_together_each_get_their_own(&*opened.store).await;
            }
            #[tokio::test]
            async fn pending_appends_can_be_awaited() {
                let Some(opened) = $open else { return };
                suite::pending_appends_can_be_awaited(&*opened.store).await;
            }
            #[test]
            fn the_feed_holds_every_record_once_in_commit_order() {
                let Some(opened) = $open else { return };
                suite::the_feed_holds_every_record_once_in_commit_order(&*opened.store);
            }
            #[test]
            fn a_reader_from_a_checkpoint_then_live_sees_each_record_once() {
                let Some(opened) = $open else { return };
                suite::a_reader_from_a_checkpoint_then_live_sees_each_record_once(&*opened.store);
            }
            #[test]
            fn concurrent_appenders_make_a_dense_feed_in_each_streams_order() {
                let Some(opened) = $open else { return };
                suite::concurrent_appenders_make_a_dense_feed_in_each_streams_order(&*opened.store);
            }
            #[tokio::test]
            async fn projection_commits_compare_and_set() {
                let Some(opened) = $open else { return };
                suite::projection_commits_compare_and_set(&*opened.store).await;
            }
            #[tokio::test]
            async fn projection_scans_in_key_order_within_bounds() {
                let Some(opened) = $open else { return };
                suite::projection_scans_in_key_order_within_bounds(&*opened.store).await;
            }
            #[tokio::test]
            async fn projection_names_keys_and_values_are_checked() {
                let Some(opened) = $open else { return };
                suite::projection_names_keys_and_values_are_checked(&*opened.store).await;
            }
            #[tokio::test]
            async fn projection_leases_are_exclusive() {
                let Some(opened) = $open else { return };
                suite::projection_leases_are_exclusive(&*opened.store).await;
            }
        }
    };
}

conformance!(memory_store, memory());
conformance!(sled_store, sled());
conformance!(sled_store_fsync, sled_fsync());
conformance!(postgres_store, postgres());

/// What only PostgreSQL does: appends in flight together share a
/// transaction (`storage/src/postgres/batch.rs`).
mod postgres_batches {
    use super::*;

    /// A fresh database of the shared throwaway cluster, and a store on it.
    fn open(name: &str) -> Option<(&'static Cluster, PgStore)> {
        let cluster = Cluster::shared()?;
        let url = cluster.new_database(name);
        let store = PgStore::connect(&url, &PgOptions { pool_size: 8, ..PgOptions::default() }).expect("connect");
        Some((cluster, store))
    }

    fn create_streams(store: &PgStore, count: u32) {
        for n in 0..count {
            let id = stream(n);
            store.append(AppendRequest::create(id, records(id, 0, 1), None)).wait().expect("create");
        }
    }

    #[test]
    fn appends_in_flight_together_share_transactions() {
        let Some((_cluster, store)) = open("batches_share") else { return };
        create_streams(&store, 64);
        let before = store.stats();
        let pending: Vec<_> = (0..64).map(|n| store.append(AppendRequest::at(stream(n), 1, records(stream(n), 1, 2)))).collect();
        for p in pending {
            assert_eq!(p.wait().expect("append").next_seq, 2);
        }
        let after = store.stats();
        assert_eq!(after.appends - before.appends, 64);
        let transactions = after.groups - before.groups;
        // Asked faster than one round trip: the first may go alone (the
        // batcher wakes for it), the rest share (with slack for a test
        // thread descheduled on a busy machine: one transaction each would
        // be 64).
        assert!(transactions <= 16, "64 appends asked together took {transactions} transactions");
    }

    #[test]
    fn an_append_beyond_bigint_is_refused_alone_not_with_its_batch() {
        let Some((_cluster, store)) = open("batches_bigint") else { return };
        create_streams(&store, 16);
        let beyond = u64::try_from(i64::MAX).expect("fits") + 1;
        let pending: Vec<_> = (0..16)
            .map(|n| {
                let expected = if n == 7 { beyond } else { 1 };
                (n, store.append(AppendRequest::at(stream(n), expected, records(stream(n), 1, 2))))
            })
            .collect();
        for (n, p) in pending {
            let answer = p.wait();
            if n == 7 {
                assert!(matches!(answer, Err(StoreError::Invalid(_))), "{answer:?}");
            } else {
                assert_eq!(answer.map(|a| a.next_seq), Ok(2), "stream {n} is not refused with stream 7");
            }
        }
    }

    #[test]
    fn a_batch_the_database_refuses_whole_is_tried_append_by_append() {
        let Some((cluster, store)) = open("batches_refused") else { return };
        create_streams(&store, 16);
        // Stream 5's row says one record, but a record 1 is there already
        // (written behind the store's back): moving the row and inserting
        // its record breaks the primary key, which fails the whole statement.
        cluster.psql(
            "batches_refused",
            &format!("INSERT INTO ludo_records (stream, seq, bytes, position) VALUES ('\\x{}', 1, 'planted', 1000000)", stream(5)),
        );
        let before = store.stats();
        let pending: Vec<_> = (0..16).map(|n| (n, store.append(AppendRequest::at(stream(n), 1, records(stream(n), 1, 2))))).collect();
        for (n, p) in pending {
            let answer = p.wait();
            if n == 5 {
                assert_eq!(answer, Err(StoreError::Conflict { stream: stream(5), expected_next: 1, actual_next: 1 }));
            } else {
                assert_eq!(answer.map(|a| a.next_seq), Ok(2), "stream {n} is not held back by stream 5");
            }
        }
        assert_eq!(store.stats().appends - before.appends, 15);
        // Nothing of the refused batch stayed half-written: every other
        // stream has its own record 1, stream 5 its planted one and one record.
        for n in (0..16).filter(|n| *n != 5) {
            let read = store.read_blocking(stream(n), 0, None).expect("read");
            assert_eq!(read.iter().map(|r| r.bytes.clone()).collect::<Vec<_>>(), records(stream(n), 0, 2), "stream {n}");
        }
        assert_eq!(store.next_seq(stream(5)), Ok(1));
    }
}

/// What only PostgreSQL does: a schema from before the feed is migrated,
/// and leases hold across servers (stores) sharing the database.
mod postgres_feed {
    use super::*;

    fn connect(url: &str) -> PgStore {
        PgStore::connect(url, &PgOptions { pool_size: 4, ..PgOptions::default() }).expect("connect")
    }

    #[test]
    fn a_schema_from_before_the_feed_gets_positions_on_connect() {
        let Some(cluster) = Cluster::shared() else { return };
        let url = cluster.new_database("feed_upgrade");
        // Schema version 1, as a build from before the feed left it, with
        // records written out of id order.
        let mut sql = format!(
            "{} CREATE TABLE ludo_schema (version integer NOT NULL); INSERT INTO ludo_schema VALUES (1);",
            ludo_storage::MIGRATIONS[0]
        );
        for (n, len) in [(7_u32, 2_u64), (3, 3), (5, 1)] {
            let id = stream(n);
            sql.push_str(&format!("INSERT INTO ludo_streams (stream, next_seq) VALUES ('\\x{id}', {len});"));
            for seq in 0..len {
                let bytes: String = record(id, seq).iter().map(|b| format!("{b:02x}")).collect();
                sql.push_str(&format!("INSERT INTO ludo_records (stream, seq, bytes) VALUES ('\\x{id}', {seq}, '\\x{bytes}');"));
            }
        }
        cluster.psql("feed_upgrade", &sql);
        let store = connect(&url);
        assert_eq!(cluster.psql("feed_upgrade", "SELECT version FROM ludo_schema").trim(), ludo_storage::schema_version().to_string());
        assert_eq!(store.feed_head(), Ok(6));
        let feed = store.read_feed_blocking(0, 100).expect("feed");
        let expected: Vec<(StreamId, u64)> =
            [(3, 3), (5, 1), (7, 2)].iter().flat_map(|(n, len)| (0..*len).map(move |seq| (stream(*n), seq))).collect();
        assert_eq!(feed.iter().map(|e| (e.stream, e.seq)).collect::<Vec<_>>(), expected, "stream id then seq order");
        assert_eq!(feed.iter().map(|e| e.position).collect::<Vec<_>>(), (1..=6).collect::<Vec<_>>());
        assert!(feed.iter().all(|e| e.bytes == record(e.stream, e.seq)));
        let id = stream(5);
        assert_eq!(store.append(AppendRequest::at(id, 1, records(id, 1, 3))).wait().expect("append").first_position, 7);
        drop(store);
        // Connecting again migrates nothing more.
        let again = connect(&url);
        assert_eq!(again.feed_head(), Ok(8));
        assert_eq!(again.read_feed_blocking(0, 6).expect("feed"), feed);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lease_is_held_against_another_server_until_dropped() {
        let Some(cluster) = Cluster::shared() else { return };
        let url = cluster.new_database("feed_leases");
        let (one, two) = (connect(&url), connect(&url));
        let lease = one.projection_lease("ratings").await.expect("lease").expect("granted");
        assert!(lease.is_held());
        assert!(two.projection_lease("ratings").await.expect("lease").is_none(), "the other server is refused");
        assert!(one.projection_lease("ratings").await.expect("lease").is_none(), "and so is this one, again");
        let other = two.projection_lease("standings").await.expect("lease");
        assert!(other.is_some(), "another projection is leased apart");
        drop(lease);
        let taken = suite::lease_soon(&two, "ratings").await;
        assert!(taken.is_held());
        assert!(one.projection_lease("ratings").await.expect("lease").is_none());
        // A lost connection is a lost lease: ending the backend that holds
        // it shows, and lets the other server take it.
        cluster.psql(
            "feed_leases",
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()",
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while taken.is_held() || other.as_ref().is_some_and(ludo_storage::ProjectionLease::is_held) {
            assert!(std::time::Instant::now() < deadline, "the lost leases still say they are held");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let back = suite::lease_soon(&one, "ratings").await;
        assert!(back.is_held());
    }
}
