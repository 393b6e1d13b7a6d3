//! Two game services on one PostgreSQL database, as two replicas of the
//! server behind a load balancer would be: what one acknowledges the other
//! reads at once, racing writers get exactly one winner, a request id
//! retried on the other replica gets the first answer, and appends made on
//! one are heard by the other's subscribers.
//!
//! Needs PostgreSQL (see `storage/tests/common/postgres.rs`, shared here):
//! skips without it unless `LUDO_REQUIRE_POSTGRES=1`.

#[path = "../../../storage/tests/common/postgres.rs"]
#[allow(dead_code)] // each test binary uses its own share of the harness
mod postgres;

use std::sync::Arc;
use std::time::Duration;

use ludo_game::api::{CreateGame, CreatedGame, MoveInput, Submission};
use ludo_game::{GameId, GameService, ServiceError, SystemClock};
use ludo_record::Status;
use ludo_storage::{EventStore, PgOptions, PgStore};
use postgres::Cluster;
use serde_json::json;

struct Replicas {
    a: GameService,
    b: GameService,
    a_store: Arc<dyn EventStore>,
    b_store: Arc<dyn EventStore>,
    cluster: Cluster,
}

fn replicas() -> Option<Replicas> {
    replicas_with(&PgOptions { pool_size: 4, ..PgOptions::default() })
}

fn replicas_with(options: &PgOptions) -> Option<Replicas> {
    let cluster = Cluster::start()?;
    let url = cluster.new_database("replicas");
    let open = || -> Arc<dyn EventStore> { Arc::new(PgStore::connect(&url, options).expect("connect")) };
    let (a_store, b_store) = (open(), open());
    Some(Replicas {
        a: GameService::new(Arc::clone(&a_store), Arc::new(SystemClock)),
        b: GameService::new(Arc::clone(&b_store), Arc::new(SystemClock)),
        a_store,
        b_store,
        cluster,
    })
}

fn gid(game: &CreatedGame) -> GameId {
    game.id.parse().expect("a game id")
}

async fn create(service: &GameService, kind: &str, players: usize) -> CreatedGame {
    let players: Vec<ludo_game::api::Player> = (0..players).map(|i| format!("P{i}").into()).collect();
    service.create(CreateGame::new(kind, players).with_options(json!({}))).await.expect("created")
}

/// Waits (up to 10 s) until `store` listens for notices, or has stopped,
/// as told by its poll rate: slow while it listens, fast while it does not.
/// A store's listener waits half a second before listening again, so a
/// loop that looks every 5 ms sees it deaf.
async fn until_listening(store: &Arc<dyn EventStore>, listening: bool) -> Result<(), tokio::time::error::Elapsed> {
    let done = async {
        while (store.poll_every() == Some(ludo_storage::POLL_WHILE_LISTENING)) != listening {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), done).await
}

/// The seat to move, its token and a legal move, as `service` sees the game.
async fn next(service: &GameService, game: &CreatedGame, pick: usize) -> Option<(String, Submission)> {
    let state = service.get(&gid(game), None).await.expect("the game");
    let Status::InProgress { to_move, .. } = state.status else { return None };
    let token = game.seats[to_move[0].index()].token.clone();
    let legal = service.legal_moves(&gid(game), Some(&token)).await.expect("legal moves");
    let mv = legal.moves[pick % legal.moves.len()].clone();
    Some((
        token,
        Submission {
            mv: MoveInput::Typed(mv),
            expected_version: Some(state.version),
            request_id: None,
            answer: ludo_game::api::Answer::Full,
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_games_alternate_between_replicas() {
    let Some(r) = replicas() else { return };
    for (kind, players) in [("cardinal", 3), ("kardinal", 3), ("battle13", 4)] {
        let game = create(&r.a, kind, players).await;
        let mut version = 0;
        for turn in 0..300usize {
            // Even turns on A, odd on B: each sees the other's last move.
            let (here, there) = if turn % 2 == 0 { (&r.a, &r.b) } else { (&r.b, &r.a) };
            let Some((token, submission)) = next(here, &game, turn * 7).await else { break };
            assert_eq!(submission.expected_version, Some(version), "{kind}: turn {turn} sees the latest version");
            let accepted = here.submit(&gid(&game), Some(&token), submission).await.expect("a legal move");
            version = accepted.version;
            // Read-your-writes on the other replica, at once.
            assert_eq!(there.get(&gid(&game), None).await.expect("read").version, version, "{kind}: turn {turn}");
        }
        assert!(version > 10, "{kind}: the game went on ({version} records)");
        // Both replicas serve the same log, and it verifies.
        let (from_a, from_b) = (r.a.export(&gid(&game), None).await.unwrap(), r.b.export(&gid(&game), None).await.unwrap());
        // The same lines but the header's (which says when it was exported).
        let lines = |export: &[u8]| String::from_utf8(export.to_vec()).unwrap().lines().skip(1).map(String::from).collect::<Vec<_>>();
        assert!(lines(&from_a) == lines(&from_b), "{kind}: the same log from both replicas");
        assert!(ludo_record::export::verify(&from_a).valid, "{kind}: the log verifies");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_replicas_have_exactly_one_winner() {
    let Some(r) = replicas() else { return };
    let game = create(&r.a, "cardinal", 2).await;
    for round in 0..10 {
        let Some((token, submission)) = next(&r.a, &game, round).await else { break };
        // Both replicas know the game at this version.
        let version = r.b.get(&gid(&game), None).await.unwrap().version;
        assert_eq!(submission.expected_version, Some(version));
        let id = gid(&game);
        let (on_a, on_b) = tokio::join!(r.a.submit(&id, Some(&token), submission.clone()), r.b.submit(&id, Some(&token), submission));
        match (&on_a, &on_b) {
            (Ok(won), Err(ServiceError::VersionConflict { current, .. }))
            | (Err(ServiceError::VersionConflict { current, .. }), Ok(won)) => {
                assert_eq!(*current, won.version, "round {round}: the loser is told the winner's version");
            }
            _ => panic!("round {round}: exactly one must win: {on_a:?} / {on_b:?}"),
        }
        assert_eq!(r.a.get(&id, None).await.unwrap().version, version + 1);
        assert_eq!(r.b.get(&id, None).await.unwrap().version, version + 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_retried_on_the_other_replica_gets_the_first_answer() {
    let Some(r) = replicas() else { return };
    let game = create(&r.a, "battle13", 4).await;
    let (token, submission) = next(&r.a, &game, 0).await.expect("a move");
    // B has the game in its cache, as it was before the move.
    assert_eq!(r.b.get(&gid(&game), None).await.unwrap().version, 0);
    let submission = Submission { request_id: Some("retry-me".into()), ..submission };
    let first = r.a.submit(&gid(&game), Some(&token), submission.clone()).await.expect("accepted");
    let retried = r.b.submit(&gid(&game), Some(&token), submission).await.expect("the retry is answered");
    assert_eq!(retried, first, "the same answer from the other replica");
    assert_eq!(r.b.get(&gid(&game), None).await.unwrap().version, first.version, "and no second record");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_on_one_replica_ring_the_other() {
    let Some(r) = replicas() else { return };
    let mut heard = r.b_store.subscribe();
    let game = create(&r.a, "cardinal", 2).await;
    let (token, submission) = next(&r.a, &game, 0).await.expect("a move");
    r.a.submit(&gid(&game), Some(&token), submission).await.expect("accepted");
    let mut notices = Vec::new();
    while notices.len() < 2 {
        let notice = tokio::time::timeout(Duration::from_secs(10), heard.recv()).await.expect("B hears A's appends").expect("a notice");
        notices.push((notice.first_seq, notice.next_seq));
    }
    assert_eq!(notices, [(0, 1), (1, 2)], "creation, then the move, in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_one_replica_follows_moves_made_on_the_other() {
    let Some(r) = replicas() else { return };
    let game = create(&r.a, "kardinal", 3).await;
    let ludo_game::Watch::Live(mut updates) = r.b.watch(&gid(&game), None, 1).await.expect("watch on B") else { panic!("a live game") };
    let mut made = Vec::new();
    for turn in 0..20 {
        let Some((token, submission)) = next(&r.a, &game, turn).await else { break };
        made.push(r.a.submit(&gid(&game), Some(&token), submission).await.expect("accepted on A").version);
    }
    for version in made {
        let update = tokio::time::timeout(Duration::from_secs(10), updates.recv()).await.expect("B's stream hears A's move");
        let Some(Ok(ludo_game::Watched::Update(update))) = update else { panic!("record {version}: {update:?}") };
        assert_eq!(update.event.seq, version, "in order, with no gap and no duplicate");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_notifications_a_stream_follows_the_other_replica_by_polling() {
    // As on a database without LISTEN/NOTIFY (CockroachDB): the stores
    // neither publish nor listen, and tell readers to poll.
    let poll = Duration::from_millis(100);
    let Some(r) = replicas_with(&PgOptions { pool_size: 4, listen: false, poll }) else { return };
    assert_eq!(r.b_store.poll_every(), Some(poll));
    assert_eq!(
        r.cluster.psql("replicas", "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'").trim(),
        "0",
        "nobody listens"
    );
    let mut heard = r.b_store.subscribe();
    let game = create(&r.a, "cardinal", 3).await;
    let ludo_game::Watch::Live(mut updates) = r.b.watch(&gid(&game), None, 1).await.expect("watch on B") else { panic!("a live game") };
    let mut made = Vec::new();
    for turn in 0..12 {
        let Some((token, submission)) = next(&r.a, &game, turn).await else { break };
        made.push(r.a.submit(&gid(&game), Some(&token), submission).await.expect("accepted on A").version);
    }
    for version in made {
        let update = tokio::time::timeout(Duration::from_secs(10), updates.recv()).await.expect("B's stream finds A's move");
        let Some(Ok(ludo_game::Watched::Update(update))) = update else { panic!("record {version}: {update:?}") };
        assert_eq!(update.event.seq, version, "in order, with no gap and no duplicate");
    }
    assert!(heard.try_recv().is_err(), "B's store heard no notice of A's appends: the stream found them by polling");
    // Both replicas still agree on writes: a move for the latest version on B.
    let (token, submission) = next(&r.b, &game, 1).await.expect("a move");
    r.b.submit(&gid(&game), Some(&token), submission).await.expect("B takes the next move");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listening_store_polls_only_as_a_safety_net() {
    let Some(r) = replicas() else { return };
    assert_eq!(r.b_store.poll_every(), Some(ludo_storage::POLL_WHILE_LISTENING), "listening once open");
    // Its listening connection cut, it polls at the fast rate until it listens again.
    r.cluster.psql("replicas", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'");
    until_listening(&r.b_store, false).await.expect("it knows it stopped hearing");
    assert_eq!(r.b_store.poll_every(), Some(PgOptions::default().poll), "and polls at the fast rate");
    until_listening(&r.b_store, true).await.expect("and listens again by itself");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_keeps_following_across_a_lost_database_connection() {
    let Some(r) = replicas() else { return };
    let game = create(&r.a, "battle13", 4).await;
    let ludo_game::Watch::Live(mut updates) = r.b.watch(&gid(&game), None, 1).await.expect("watch on B") else { panic!("a live game") };
    let mut expected = 1;
    for round in 0..3 {
        // Both stores listen (again, after the round before: B's stream may
        // have found that round's moves by polling before they did).
        for (name, store) in [("A", &r.a_store), ("B", &r.b_store)] {
            until_listening(store, true).await.unwrap_or_else(|_| panic!("round {round}: {name} listens"));
        }
        // Every listening connection is cut: notices sent until the stores
        // listen again are lost, and the streams must not lose the moves.
        let cut = r.cluster.psql("replicas", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'");
        assert_eq!(cut.trim(), "2", "round {round}: both listening connections were cut");
        for (name, store) in [("A", &r.a_store), ("B", &r.b_store)] {
            until_listening(store, false).await.unwrap_or_else(|_| panic!("round {round}: {name} knows it stopped hearing"));
        }
        for turn in 0..4 {
            let Some((token, submission)) = next(&r.a, &game, round * 4 + turn).await else { break };
            r.a.submit(&gid(&game), Some(&token), submission).await.expect("accepted on A");
        }
        let last = r.a.get(&gid(&game), None).await.unwrap().version;
        while expected <= last {
            let update = tokio::time::timeout(Duration::from_secs(10), updates.recv()).await.expect("B's stream goes on");
            let Some(Ok(ludo_game::Watched::Update(update))) = update else { panic!("record {expected}: {update:?}") };
            assert_eq!(update.event.seq, expected, "round {round}: in order, no gap, no duplicate");
            expected += 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_behind_takes_a_move_made_for_the_latest_version() {
    let Some(r) = replicas() else { return };
    let game = create(&r.a, "cardinal", 2).await;
    // B caches the game at version 0, then A plays on.
    assert_eq!(r.b.get(&gid(&game), None).await.unwrap().version, 0);
    for turn in 0..3 {
        let (token, submission) = next(&r.a, &game, turn).await.expect("a move");
        r.a.submit(&gid(&game), Some(&token), submission).await.expect("accepted on A");
    }
    // A move for version 3, straight to B, whose cache is at 0: the seat
    // to move, the rules and the version are B's stale ones, and still the
    // move is taken, on the game as the store has it.
    let (token, submission) = next(&r.a, &game, 3).await.expect("a move");
    assert_eq!(submission.expected_version, Some(3));
    let accepted = r.b.submit(&gid(&game), Some(&token), submission.clone()).await.expect("B catches up and takes it");
    assert_eq!(accepted.version, 4);
    // And a stale expected version is still a conflict, with the latest.
    let stale = r.b.submit(&gid(&game), Some(&token), submission).await;
    assert!(matches!(stale, Err(ServiceError::VersionConflict { expected: 3, current: 4 })), "{stale:?}");
}

/// A record that does not replay stops a replica catching up at it (the
/// log is corrupt) and leaves its cached game as it was, the records before
/// it included: once the record is repaired, the replica catches up and
/// tells the log exactly as the replica that wrote it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_that_does_not_replay_leaves_the_replica_behind_as_it_was() {
    let Some(r) = replicas() else { return };
    let game = create(&r.a, "cardinal", 2).await;
    let id = gid(&game);
    let play = |turn| {
        let (a, game, id) = (&r.a, &game, &id);
        async move {
            let (token, submission) = next(a, game, turn).await.expect("a move");
            a.submit(id, Some(&token), submission).await.expect("accepted on A");
        }
    };
    play(0).await;
    // B caches the game at version 1 and keeps its history (a replay at
    // an older version needs it).
    assert_eq!(r.b.replay_at(&id, None, 0).await.expect("a replay on B").version, 0);
    play(1).await;
    play(2).await;
    // Record 3 spoiled in the database, as a bad disk or a hand would: a
    // copy of record 2, which reads as a record but does not follow on.
    r.cluster.psql("replicas", "CREATE TABLE kept AS SELECT * FROM ludo_records WHERE seq = 3");
    r.cluster.psql("replicas", "UPDATE ludo_records SET bytes = (SELECT bytes FROM ludo_records WHERE seq = 2) WHERE seq = 3");
    // B applies record 2, then refuses record 3; twice.
    for _ in 0..2 {
        let read = r.b.replay_at(&id, None, 0).await;
        assert!(matches!(read, Err(ServiceError::CorruptLog { seq: 3, .. })), "{read:?}");
    }
    r.cluster.psql("replicas", "UPDATE ludo_records r SET bytes = k.bytes FROM kept k WHERE r.stream = k.stream AND r.seq = k.seq");
    for at in 0..=3 {
        let on_b = r.b.replay_at(&id, None, at).await.expect("a replay on B once repaired");
        let on_a = r.a.replay_at(&id, None, at).await.expect("a replay on A");
        assert_eq!(serde_json::to_value(&on_b).unwrap(), serde_json::to_value(&on_a).unwrap(), "at {at}");
    }
    // A seat's page is told from the kept unredacted effects, record by record.
    let seat = Some(game.seats[0].token.as_str());
    let on_b = r.b.events(&id, seat, 0, 100).await.expect("events on B");
    let on_a = r.a.events(&id, seat, 0, 100).await.expect("events on A");
    assert_eq!(on_b.events.len(), 4);
    assert_eq!(serde_json::to_value(&on_b).unwrap(), serde_json::to_value(&on_a).unwrap());
    let on_b = r.b.steps(&id, seat, 0, 100).await.expect("steps on B");
    let on_a = r.a.steps(&id, seat, 0, 100).await.expect("steps on A");
    assert_eq!(serde_json::to_value(&on_b).unwrap(), serde_json::to_value(&on_a).unwrap());
}

/// Both replicas watch a game's clock (each loaded it) and both fire when
/// a seat's time runs out: the store's version check lets exactly one
/// timeout record in, and the other replica's is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_expiry_gives_one_timeout_record_however_many_replicas_fire_it() {
    // The cluster lives as long as it is bound.
    let Some(Replicas { a, b, cluster: _cluster, .. }) = replicas() else { return };
    let (a, b) = (Arc::new(a), Arc::new(b));
    a.start_bots();
    b.start_bots();
    let players = ["Ann", "Bob", "Cy"].map(|name| Some(name.into())).to_vec();
    let clock = ludo_record::clock::ClockRequest {
        move_ms: Some(1_000),
        on_timeout: Some(ludo_record::clock::OnTimeout::Lose),
        ..Default::default()
    };
    let created = a
        .create(CreateGame { kind: "cardinal".into(), players, options: Some(json!({})), public: false, clock: Some(clock), webhook: None })
        .await
        .expect("created");
    let id = gid(&created);
    // B loads the game: from then on it watches its clock too.
    assert_eq!(b.get(&id, None).await.unwrap().version, 0);
    // A three-seat game goes on after a seat loses on time (a bot plays it,
    // with no clock): each seat times out at most once, the first within
    // a few seconds.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let events = a.events(&id, None, 0, 1000).await.unwrap().events;
        if events.iter().any(|e| e.kind == "timeout") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no timeout was written");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Both replicas' timers have long fired by now.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let events = b.events(&id, None, 0, 1000).await.unwrap().events;
    let mut timed_out: Vec<u8> = events.iter().filter(|e| e.kind == "timeout").map(|e| e.seat.unwrap().0).collect();
    let count = timed_out.len();
    timed_out.dedup();
    assert_eq!(timed_out.len(), count, "a seat timed out twice: {events:?}");
    let first = events.iter().find(|e| e.kind == "timeout").unwrap();
    assert_eq!(first.seq, 1, "the first seat's expiry is the first record after the set-up");
    let export = a.export(&id, None).await.unwrap();
    let report = ludo_record::export::verify(&export);
    assert!(report.chain_intact && report.valid, "{:?}", report.fault);
    // Both fired the first expiry: one wrote it, the other lost the race.
    let fired = |service: &GameService, outcome: &str| -> u64 {
        let text = service.metrics_text();
        let line = format!("ludo_timeouts_total{{outcome=\"{outcome}\"}} ");
        text.lines().find_map(|l| l.strip_prefix(line.as_str())).map_or(0, |n| n.trim().parse().unwrap())
    };
    let written = fired(&a, "written") + fired(&b, "written");
    let lost = fired(&a, "lost_race") + fired(&b, "lost_race") + fired(&a, "moved_on") + fired(&b, "moved_on");
    assert_eq!(written, count as u64, "each timeout record was written by exactly one replica");
    assert!(lost >= 1, "the other replica fired too and wrote nothing (written {written}, lost {lost})");
}
