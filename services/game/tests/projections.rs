//! Projections fold the store's feed of committed records. The `games`
//! projection holds each game's summary exactly as the service makes it
//! from the game's state; folded live as games are played and
//! built again from position 0, it holds the same rows. On memory, sled and
//! PostgreSQL (which skips without PostgreSQL unless
//! `LUDO_REQUIRE_POSTGRES=1`); on PostgreSQL two servers never advance one
//! projection at once.

#[path = "../../../storage/tests/common/postgres.rs"]
#[allow(dead_code)] // each test binary uses its own share of the harness
mod postgres;

use std::sync::Arc;
use std::time::Duration;

use ludo_game::api::{CreateGame, JoinGame, ListFilter, SubmitMove};
use ludo_game::projection::Projections;
use ludo_game::{GameId, GameService, SystemClock};
use ludo_record::Status;
use ludo_storage::{Durability, EventStore, MemoryStore, PgOptions, PgStore, SledOptions, SledStore};
use serde_json::{Value, json};

/// Plays a few games of every shape: one to its end, one resigned, one
/// waiting for a player, one joined and part-played.
async fn play(service: &GameService) {
    async fn moves(service: &GameService, id: &GameId, tokens: &[String], most: usize) {
        for _ in 0..most {
            let state = service.get(id, None).await.expect("state");
            let Status::InProgress { to_move, .. } = state.status else { return };
            let token = &tokens[usize::from(to_move[0].0)];
            let legal = service.legal_moves(id, Some(token)).await.expect("legal moves");
            let mv = SubmitMove { mv: legal.moves[0].to_json(), expected_version: None, request_id: None };
            service.submit(id, Some(token), mv).await.expect("a legal move");
        }
    }
    for players in [2, 3] {
        let names = ["Ann", "Bob", "Cid"].into_iter().take(players);
        let game = service.create(CreateGame::new("cardinal", names).with_options(json!({"first_seat": 0}))).await.expect("created");
        let id: GameId = game.id.parse().expect("id");
        let tokens: Vec<String> = game.seats.iter().map(|seat| seat.token.clone()).collect();
        moves(service, &id, &tokens, if players == 2 { 500 } else { 7 }).await;
        if players == 3 {
            service.resign(&id, Some(&tokens[1])).await.expect("resigned");
        }
    }
    let waiting = CreateGame { players: vec![Some("Dee".into()), None, None], ..CreateGame::new("kardinal", ["Dee", "Eve", "Hal"]) };
    service.create(waiting).await.expect("created");
    let open = CreateGame { players: vec![Some("Fay".into()), None], ..CreateGame::new("cardinal", ["Fay", "Gus"]) };
    let game = service.create(open).await.expect("created");
    let id: GameId = game.id.parse().expect("id");
    let joined = service
        .join(&id, JoinGame { name: "Gus".into(), invitation: Some(game.invitations[1].code.clone()), seat: None })
        .await
        .expect("joined");
    moves(service, &id, &[game.seats[0].token.clone(), joined.token], 5).await;
}

/// A flushing sled store in `dir`.
fn sled(dir: &tempfile::TempDir) -> Arc<dyn EventStore> {
    Arc::new(SledStore::open(dir.path(), SledOptions { durability: Durability::Flush }).expect("open"))
}

/// Every row of the `games` projection.
fn rows(store: &dyn EventStore) -> Vec<(Vec<u8>, Value)> {
    let rows = store.projection_scan_blocking("games", None, 10_000).expect("scan");
    rows.into_iter().map(|(key, value)| (key, serde_json::from_slice(&value).expect("a summary"))).collect()
}

/// Every game's summary as the service makes it from the game's state
/// (live, or replayed from its log), in stream order.
async fn summaries(service: &GameService, store: &dyn EventStore) -> Vec<(Vec<u8>, Value)> {
    let listed = store.list_summaries(None, 10_000).await.expect("list");
    let mut summaries = Vec::new();
    for listed in listed.into_iter().filter(|listed| !ludo_game::is_reserved(listed.stream)) {
        let summary = service.summary_from_state(listed.stream).await.expect("a game's summary");
        summaries.push((listed.stream.0.to_vec(), serde_json::from_slice(&summary).expect("JSON")));
    }
    summaries
}

async fn folds_the_feed_into_the_listing_and_rebuilds_the_same(store: Arc<dyn EventStore>) {
    let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
    let projections = Projections::new(Arc::clone(&store));
    let games = projections.get("games").expect("the games projection");
    play(&service).await;
    // Folded in two halves of play, as a running server folds as it goes.
    let checkpoint = projections.catch_up(&**games).await.expect("caught up");
    play(&service).await;
    let head = store.feed_head().expect("head");
    assert!(head > checkpoint, "the second half appended");
    assert_eq!(projections.catch_up(&**games).await.expect("caught up"), head);
    let live = rows(&*store);
    assert_eq!(live.len(), 8, "one row per game");
    assert_eq!(live, summaries(&service, &*store).await, "each row is the game's summary, as made from its state");

    let status = projections.status().await.expect("status");
    assert_eq!(status.iter().map(|s| (s.name, s.checkpoint, s.behind())).collect::<Vec<_>>(), [("games", head, 0)]);

    assert_eq!(projections.rebuild("games").await.expect("rebuilt"), head);
    assert_eq!(rows(&*store), live, "rebuilt from position 0, the same rows");
    assert!(projections.rebuild("players").await.is_err(), "no such projection");
    service.shutdown().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_memory() {
    folds_the_feed_into_the_listing_and_rebuilds_the_same(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sled() {
    let dir = tempfile::tempdir().expect("tempdir");
    folds_the_feed_into_the_listing_and_rebuilds_the_same(sled(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_one_server_at_a_time_advances_it() {
    let Some(cluster) = postgres::Cluster::start() else { return };
    let url = cluster.new_database("projections");
    let open = || -> Arc<dyn EventStore> {
        Arc::new(PgStore::connect(&url, &PgOptions { pool_size: 4, ..PgOptions::default() }).expect("connect"))
    };
    folds_the_feed_into_the_listing_and_rebuilds_the_same(open()).await;

    // Two servers keep the projection while games are played on one of them.
    let (a, b) = (open(), open());
    let service = GameService::new(Arc::clone(&a), Arc::new(SystemClock));
    let (closing, closed) = tokio::sync::watch::channel(false);
    Arc::new(Projections::new(Arc::clone(&a))).spawn(closed.clone());
    Arc::new(Projections::new(Arc::clone(&b))).spawn(closed);
    play(&service).await;
    // While one holds the lease, a rebuild elsewhere is refused.
    let third = Projections::new(open());
    let refused = third.rebuild("games").await;
    assert!(refused.is_err(), "a rebuild while a server advances it: {refused:?}");
    let head = a.feed_head().expect("head");
    let mut waited = 0;
    while third.status().await.expect("status")[0].checkpoint < head {
        assert!(waited < 300, "the servers did not fold the feed in 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(rows(&*a), summaries(&service, &*a).await, "folded by whichever server held the lease, each record once");
    closing.send_replace(true);
    service.shutdown().await.expect("closed");
}

/// While a server keeps the `games` projection, its own commits offer the
/// projection the game as they left it, and the fold of their entries
/// takes that state instead of folding the record again: the rows are the
/// same as those folded from the records' bytes alone (a rebuild, which
/// takes no offer).
async fn offered_states_fold_to_the_rows_the_records_do(store: Arc<dyn EventStore>) {
    let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    service.projections().spawn(stopped);
    play(&service).await;
    let head = store.feed_head().expect("head");
    // The listing waits for the projection to reach the feed's head.
    service.list(ListFilter { limit: 100, ..ListFilter::default() }).await.expect("listed");
    let offered = service.projections().games().offers_taken();
    assert!(offered > head / 2, "most entries folded from the commits' offers: {offered} of {head}");
    let live = rows(&*store);
    assert_eq!(live, summaries(&service, &*store).await, "each row is the game's summary, as made from its state");
    stop.send_replace(true);

    let projections = Projections::new(Arc::clone(&store));
    let mut rebuilt = projections.rebuild("games").await;
    for _ in 0..100 {
        // The closed server's keeper lets the lease go as it stops.
        if !matches!(rebuilt, Err(ludo_game::projection::ProjectionError::Leased(_))) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        rebuilt = projections.rebuild("games").await;
    }
    assert_eq!(rebuilt.expect("rebuilt"), head);
    assert_eq!(projections.games().offers_taken(), 0, "a rebuild folds the records' bytes");
    assert_eq!(rows(&*store), live, "folded from the records alone, the same rows");
    service.shutdown().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offered_states_on_sled() {
    let dir = tempfile::tempdir().expect("tempdir");
    offered_states_fold_to_the_rows_the_records_do(sled(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offered_states_on_memory() {
    offered_states_fold_to_the_rows_the_records_do(Arc::new(MemoryStore::new())).await;
}

/// A listing is read from the `games` projection, which a server folds
/// every [`GATHER`](ludo_game::projection::GATHER) or so: still, a listing
/// that follows a create or a move shows it (the listing nudges the
/// projection and waits for it to reach the feed's head).
async fn a_listing_shows_what_its_caller_just_did(store: Arc<dyn EventStore>) {
    let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
    service.projections().spawn(service.closing());
    for round in 0..5 {
        let game =
            service.create(CreateGame::new("cardinal", ["Ann", "Bob"]).with_options(json!({"first_seat": 0}))).await.expect("created");
        let listed = service.list(ListFilter { limit: 100, ..ListFilter::default() }).await.expect("listed");
        assert_eq!(listed.games.len(), round + 1, "the game just created is listed");
        assert_eq!(listed.games.last().map(|g| (g.id.as_str(), g.version)), Some((game.id.as_str(), 0)));

        let id: GameId = game.id.parse().expect("id");
        let legal = service.legal_moves(&id, Some(&game.seats[0].token)).await.expect("legal moves");
        let mv = SubmitMove { mv: legal.moves[0].to_json(), expected_version: None, request_id: None };
        service.submit(&id, Some(&game.seats[0].token), mv).await.expect("a legal move");
        let listed = service.list(ListFilter { limit: 100, ..ListFilter::default() }).await.expect("listed");
        assert_eq!(listed.games.last().map(|g| g.version), Some(1), "the move just made is in the listing");
    }
    service.shutdown().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_on_sled_shows_what_its_caller_just_did() {
    let dir = tempfile::tempdir().expect("tempdir");
    a_listing_shows_what_its_caller_just_did(sled(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_on_memory_shows_what_its_caller_just_did() {
    a_listing_shows_what_its_caller_just_did(Arc::new(MemoryStore::new())).await;
}
