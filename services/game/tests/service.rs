//! The game service over the in-memory store: versions, idempotency,
//! authorisation, replays and the log, driven like a client would.

use std::sync::Arc;

use ludo_engine::Seat;
use ludo_game::api::{CreateGame, CreatedGame, ListFilter, SubmitMove};
use ludo_game::{GameId, GameService, ServiceError, SystemClock};
use ludo_record::Status;
use ludo_storage::{EventStore, MemoryStore, StoreError, StoreFuture, StoredRecord, StreamId, StreamSummary};
use serde_json::{Value, json};

/// A game id the service gave out.
fn gid(id: &str) -> GameId {
    id.parse().expect("a game id")
}

fn service() -> (Arc<GameService>, Arc<dyn EventStore>) {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    (Arc::new(GameService::new(Arc::clone(&store), Arc::new(SystemClock))), store)
}

async fn cardinal(service: &GameService, players: &[&str]) -> CreatedGame {
    service.create(CreateGame::new("cardinal", players.iter().copied()).with_options(json!({"first_seat": 0}))).await.expect("created")
}

fn token(game: &CreatedGame, seat: usize) -> Option<&str> {
    Some(game.seats[seat].token.as_str())
}

fn submit(mv: Value) -> SubmitMove {
    SubmitMove { mv, expected_version: None, request_id: None }
}

/// The seat to move and its first legal move.
async fn next_move(service: &GameService, game: &CreatedGame) -> Option<(usize, Value)> {
    let state = service.get(&gid(&game.id), None).await.unwrap();
    let Status::InProgress { to_move, .. } = state.status else { return None };
    let seat = to_move[0].index();
    let moves = service.legal_moves(&gid(&game.id), token(game, seat)).await.unwrap();
    Some((seat, moves.moves[0].to_json()))
}

async fn log_len(service: &GameService, game: &CreatedGame) -> usize {
    service.events(&gid(&game.id), None, 0, 1000).await.unwrap().events.len()
}

#[tokio::test]
async fn a_whole_game_plays_to_the_end_with_listed_moves() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob", "Cid"]).await;
    assert_eq!(game.version, 0);
    let mut version = 0;
    while let Some((seat, mv)) = next_move(&service, &game).await {
        let accepted =
            service.submit(&gid(&game.id), token(&game, seat), SubmitMove { expected_version: Some(version), ..submit(mv) }).await.unwrap();
        assert_eq!(accepted.version, version + 1);
        version = accepted.version;
        assert!(version < 500, "the game does not end");
    }
    let state = service.get(&gid(&game.id), None).await.unwrap();
    assert!(state.status.is_finished());
    assert_eq!(state.version, version);
    let seed = state.seed.expect("a finished game publishes its seed");
    assert_eq!(ludo_record::record::sha256_hex(&hex::decode(seed).unwrap()), game.seed_commitment);
}

#[tokio::test]
async fn moves_need_the_right_seat_token() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let (seat, mv) = next_move(&service, &game).await.unwrap();
    let err = service.submit(&gid(&game.id), None, submit(mv.clone())).await.unwrap_err();
    assert_eq!(err.code(), "unauthorized");
    let err = service.submit(&gid(&game.id), Some("ludo_wrong"), submit(mv.clone())).await.unwrap_err();
    assert_eq!(err.code(), "unauthorized");
    let other = cardinal(&service, &["Cy", "Di"]).await;
    let err = service.submit(&gid(&game.id), token(&other, seat), submit(mv.clone())).await.unwrap_err();
    assert_eq!(err.code(), "unauthorized", "a token of another game opens nothing");
    let err = service.submit(&gid(&game.id), token(&game, 1 - seat), submit(mv)).await.unwrap_err();
    assert!(matches!(err, ServiceError::NotYourTurn { .. }), "{err:?}");
    assert_eq!(log_len(&service, &game).await, 1, "refusals append nothing");
    let err = service.legal_moves(&gid(&game.id), None).await.unwrap_err();
    assert_eq!(err.code(), "unauthorized");
}

#[tokio::test]
async fn a_stale_expected_version_is_a_conflict_with_the_current_version() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let (seat, mv) = next_move(&service, &game).await.unwrap();
    service.submit(&gid(&game.id), token(&game, seat), submit(mv)).await.unwrap();
    let (seat, mv) = next_move(&service, &game).await.unwrap();
    let err = service.submit(&gid(&game.id), token(&game, seat), SubmitMove { expected_version: Some(0), ..submit(mv) }).await.unwrap_err();
    assert_eq!(err, ServiceError::VersionConflict { expected: 0, current: 1 });
    assert_eq!(log_len(&service, &game).await, 2);
}

#[tokio::test]
async fn racing_writers_on_one_version_exactly_one_wins() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let (seat, mv) = next_move(&service, &game).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (service, id, token, mv) = (Arc::clone(&service), game.id.clone(), game.seats[seat].token.clone(), mv.clone());
        tasks.push(tokio::spawn(async move {
            service.submit(&gid(&id), Some(&token), SubmitMove { expected_version: Some(0), ..submit(mv) }).await
        }));
    }
    let mut wins = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(accepted) => {
                assert_eq!(accepted.version, 1);
                wins += 1;
            }
            Err(err) => assert_eq!(err, ServiceError::VersionConflict { expected: 0, current: 1 }),
        }
    }
    assert_eq!(wins, 1);
    assert_eq!(log_len(&service, &game).await, 2);
}

#[tokio::test]
async fn an_exact_retry_returns_the_first_answer_and_appends_nothing() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let (seat, mv) = next_move(&service, &game).await.unwrap();
    let request = SubmitMove { mv: mv.clone(), expected_version: Some(0), request_id: Some("first-move".into()) };
    let first = service.submit(&gid(&game.id), token(&game, seat), request.clone()).await.unwrap();
    // More moves happen; then the client retries (even with its old expected_version).
    let (seat2, mv2) = next_move(&service, &game).await.unwrap();
    service.submit(&gid(&game.id), token(&game, seat2), submit(mv2)).await.unwrap();
    let again = service.submit(&gid(&game.id), token(&game, seat), request).await.unwrap();
    assert_eq!(again, first);
    assert_eq!(log_len(&service, &game).await, 3);
    // The same id for another move is refused.
    let (seat3, mv3) = next_move(&service, &game).await.unwrap();
    let err = service
        .submit(&gid(&game.id), token(&game, seat3), SubmitMove { mv: mv3, expected_version: None, request_id: Some("first-move".into()) })
        .await
        .unwrap_err();
    assert_eq!(err.code(), "request_id_reused");
    assert_eq!(log_len(&service, &game).await, 3);
}

#[tokio::test]
async fn bad_moves_name_the_field_or_the_rule_and_change_nothing() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let (seat, _) = next_move(&service, &game).await.unwrap();
    let t = token(&game, seat);
    let err = service.submit(&gid(&game.id), t, submit(json!({"type": "teleport"}))).await.unwrap_err();
    assert!(matches!(&err, ServiceError::InvalidInput { field, .. } if field.starts_with("move")), "{err:?}");
    let err = service.submit(&gid(&game.id), t, submit(json!("build"))).await.unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    // A tower alone east of the cathedral's tower: CA-13 (and CA-15).
    let err = service
        .submit(&gid(&game.id), t, submit(json!({"type": "build", "shape": "tower", "colour": seat, "x": 2, "y": 0, "bonus_colour": 1})))
        .await
        .unwrap_err();
    assert!(matches!(&err, ServiceError::RuleViolation { rule, .. } if rule.starts_with("CA-")), "{err:?}");
    let err =
        service.submit(&gid(&game.id), t, SubmitMove { request_id: Some("has space".into()), ..submit(json!({})) }).await.unwrap_err();
    assert!(matches!(&err, ServiceError::InvalidInput { field, .. } if field == "request_id"), "{err:?}");
    assert_eq!(log_len(&service, &game).await, 1);
    assert_eq!(service.get(&gid(&game.id), None).await.unwrap().version, 0);
}

#[tokio::test]
async fn creation_refuses_bad_kinds_players_and_options_by_field() {
    let (service, _) = service();
    let create =
        |kind: &str, players: &[&str], options: Option<Value>| CreateGame { options, ..CreateGame::new(kind, players.iter().copied()) };
    let field = |err: ServiceError| match err {
        ServiceError::InvalidInput { field, .. } => field,
        other => panic!("expected invalid_input, got {other:?}"),
    };
    assert_eq!(field(service.create(create("chess", &["a", "b"], None)).await.unwrap_err()), "kind");
    assert_eq!(field(service.create(create("cardinal", &["a"], None)).await.unwrap_err()), "players");
    assert_eq!(field(service.create(create("cardinal", &["a", "b", "c", "d", "e"], None)).await.unwrap_err()), "players");
    assert_eq!(field(service.create(create("cardinal", &["a", " "], None)).await.unwrap_err()), "players[1]");
    assert_eq!(
        field(service.create(create("cardinal", &["a", "b"], Some(json!({"first_seat": 5})))).await.unwrap_err()),
        "options.first_seat"
    );
    assert!(field(service.create(create("cardinal", &["a", "b"], Some(json!({"colour": 1})))).await.unwrap_err()).starts_with("options"));
    assert!(
        service.list(ListFilter { limit: 10, ..ListFilter::default() }).await.unwrap().games.is_empty(),
        "refused games are not created"
    );
}

#[tokio::test]
async fn replay_rebuilds_every_past_version_and_restart_loses_nothing() {
    let (service, store) = service();
    let game = cardinal(&service, &["Ann", "Bob", "Cid", "Dee"]).await;
    let mut views = vec![service.get(&gid(&game.id), None).await.unwrap()];
    for _ in 0..12 {
        let (seat, mv) = next_move(&service, &game).await.unwrap();
        service.submit(&gid(&game.id), token(&game, seat), submit(mv)).await.unwrap();
        views.push(service.get(&gid(&game.id), None).await.unwrap());
    }
    for (at, live) in views.iter().enumerate() {
        let replayed = service.replay_at(&gid(&game.id), None, at as u64).await.unwrap();
        assert_eq!(replayed.view, live.view, "version {at}");
        assert_eq!(replayed.status, live.status);
    }
    let err = service.replay_at(&gid(&game.id), None, 99).await.unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    // A fresh service over the same store (a restart) rebuilds the same game.
    let restarted = GameService::new(store, Arc::new(SystemClock));
    let again = restarted.get(&gid(&game.id), token(&game, 0)).await.unwrap();
    let before = service.get(&gid(&game.id), token(&game, 0)).await.unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), serde_json::to_value(&before).unwrap());
    let log_before = serde_json::to_value(service.events(&gid(&game.id), None, 0, 100).await.unwrap()).unwrap();
    let log_after = serde_json::to_value(restarted.events(&gid(&game.id), None, 0, 100).await.unwrap()).unwrap();
    assert_eq!(log_before, log_after);
}

#[tokio::test]
async fn the_log_pages_and_chains() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    for _ in 0..5 {
        let (seat, mv) = next_move(&service, &game).await.unwrap();
        service.submit(&gid(&game.id), token(&game, seat), submit(mv)).await.unwrap();
    }
    let page = service.events(&gid(&game.id), None, 0, 4).await.unwrap();
    assert_eq!(page.events.len(), 4);
    assert_eq!(page.next_from, Some(4));
    let rest = service.events(&gid(&game.id), None, 4, 4).await.unwrap();
    assert_eq!(rest.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(rest.next_from, None);
    assert_eq!(page.events[0].kind, "game_created");
    assert!(page.events[1..].iter().all(|e| e.kind == "move" && e.seat.is_some()));
    let hashes: std::collections::HashSet<_> = page.events.iter().chain(&rest.events).map(|e| e.hash.clone()).collect();
    assert_eq!(hashes.len(), 6, "every record has its own hash");
}

#[tokio::test]
async fn listing_filters_by_kind_and_state_and_pages_oldest_first() {
    let (service, _) = service();
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(cardinal(&service, &["Ann", "Bob"]).await.id);
    }
    let first = service.list(ListFilter { limit: 3, ..ListFilter::default() }).await.unwrap();
    assert_eq!(first.games.iter().map(|g| g.id.clone()).collect::<Vec<_>>(), ids[..3]);
    let next = service.list(ListFilter { limit: 3, after: first.next_after.clone(), ..ListFilter::default() }).await.unwrap();
    assert_eq!(next.games.iter().map(|g| g.id.clone()).collect::<Vec<_>>(), ids[3..]);
    assert!(next.next_after.is_none());
    let finished = service.list(ListFilter { limit: 10, finished: Some(true), ..ListFilter::default() }).await.unwrap();
    assert!(finished.games.is_empty());
    let err = service.list(ListFilter { limit: 10, kind: Some("chess".into()), ..ListFilter::default() }).await.unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    // No game has an id that is not a game id: refused where it is parsed.
    let err = "not-a-uuid".parse::<GameId>().unwrap_err();
    assert_eq!(err.code(), "not_found");
    let err = service.get(&gid("01890000-0000-7000-8000-000000000000"), None).await.unwrap_err();
    assert_eq!(err.code(), "not_found");
}

#[tokio::test]
async fn pages_that_fill_up_in_the_last_batch_still_point_to_the_rest() {
    let (service, _) = service();
    let mut cardinal_ids = Vec::new();
    // A filter that skips some streams of each batch: with page size 4 the
    // second batch is the last one and the page fills before its end.
    for kind in ["cardinal", "battle13", "cardinal", "battle13", "cardinal", "cardinal", "cardinal"] {
        let players: Vec<ludo_game::api::Player> =
            if kind == "cardinal" { vec!["Ann".into(), "Bob".into()] } else { ["N", "E", "S", "W"].map(Into::into).to_vec() };
        let game = service.create(CreateGame::new(kind, players)).await.unwrap();
        if kind == "cardinal" {
            cardinal_ids.push(game.id);
        }
    }
    for limit in 1..=8 {
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let filter = ListFilter { limit, after: after.clone(), kind: Some("cardinal".into()), ..ListFilter::default() };
            let page = service.list(filter).await.unwrap();
            seen.extend(page.games.iter().map(|g| g.id.clone()));
            match page.next_after {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, cardinal_ids, "page size {limit}: following next_after visits every game once");
    }
}

#[tokio::test]
async fn a_seat_sees_itself_as_the_viewer() {
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    assert_eq!(service.get(&gid(&game.id), token(&game, 1)).await.unwrap().viewer_seat, Some(Seat(1)));
    assert_eq!(service.get(&gid(&game.id), None).await.unwrap().viewer_seat, None);
    assert!(service.get(&gid(&game.id), None).await.unwrap().seed.is_none(), "the seed stays secret while the game runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bounded_cache_forgets_idle_games_and_loses_nothing() {
    // sled, so each append is in flight for a real flush while readers reload games.
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn EventStore> = Arc::new(ludo_storage::SledStore::open(dir.path(), ludo_storage::SledOptions::default()).unwrap());
    let service = Arc::new(GameService::new(Arc::clone(&store), Arc::new(SystemClock)).with_max_live_games(3));
    let mut games = Vec::new();
    for _ in 0..10 {
        games.push(cardinal(&service, &["Ann", "Bob", "Cid"]).await);
    }
    // Ten games played at once with room for three: games are forgotten and
    // reloaded all the time, and every move must still land on the real state.
    let mut tasks = Vec::new();
    for game in games.clone() {
        let service = Arc::clone(&service);
        tasks.push(tokio::spawn(async move {
            let mut moves = 0u64;
            loop {
                let state = service.get(&gid(&game.id), None).await.unwrap();
                let Status::InProgress { to_move, .. } = state.status else { return moves };
                let seat = to_move[0].index();
                let legal = service.legal_moves(&gid(&game.id), token(&game, seat)).await.unwrap();
                assert_eq!(legal.version, state.version);
                let request = SubmitMove { expected_version: Some(state.version), ..submit(legal.moves[0].to_json()) };
                let accepted = service.submit(&gid(&game.id), token(&game, seat), request).await.expect("no stale state after an eviction");
                moves += 1;
                assert_eq!(accepted.version, moves);
            }
        }));
    }
    // Readers load every game over and over meanwhile.
    let reading = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut readers = Vec::new();
    for r in 0..4 {
        let (service, reading, ids) = (Arc::clone(&service), Arc::clone(&reading), games.iter().map(|g| g.id.clone()).collect::<Vec<_>>());
        readers.push(tokio::spawn(async move {
            let mut i = r;
            while reading.load(std::sync::atomic::Ordering::Relaxed) {
                service.get(&gid(&ids[i % ids.len()]), None).await.unwrap();
                i += 1;
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut played = Vec::new();
    for task in tasks {
        played.push(task.await.unwrap());
    }
    reading.store(false, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        reader.await.unwrap();
    }
    let metric = |name: &str| -> u64 {
        let text = service.metrics_text();
        let line = text.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no {name}")).to_string();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert!(metric("ludo_evictions_total") > 0, "games were forgotten and reloaded during play");
    // The bound is soft while games are being written; the next load restores it.
    cardinal(&service, &["Eve", "Fay"]).await;
    assert!(metric("ludo_live_games") <= 3, "{} games in memory", metric("ludo_live_games"));
    // Every log is whole and replays to its game's end, also from a fresh service.
    let fresh = GameService::new(Arc::clone(&store), Arc::new(SystemClock));
    for (game, moves) in games.iter().zip(played) {
        let state = fresh.get(&gid(&game.id), None).await.unwrap();
        assert!(state.status.is_finished());
        assert_eq!(state.version, moves);
        assert_eq!(service.get(&gid(&game.id), None).await.unwrap().view, state.view);
    }
}

#[tokio::test]
async fn a_listing_reads_a_bounded_number_of_games_and_pages_on() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = GameService::new(Arc::clone(&store), Arc::new(SystemClock)).with_list_scan(10);
    let mut ids = Vec::new();
    for _ in 0..25 {
        ids.push(cardinal(&service, &["Ann", "Bob"]).await.id);
    }
    // A filter matching nothing: short pages, each after at most 10 games read, until the end.
    let mut after = None;
    let mut pages = 0;
    loop {
        let page =
            service.list(ListFilter { finished: Some(true), after: after.clone(), limit: 50, ..ListFilter::default() }).await.unwrap();
        assert!(page.games.is_empty());
        pages += 1;
        match page.next_after {
            Some(next) => {
                assert_eq!(Some(&next), ids.get(pages * 10 - 1), "page {pages} ends after the 10 games it read");
                after = Some(next);
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    // Unfiltered, a page holds what was read (the default scan, 10,000, is
    // far above the largest page, 1,000, so such pages always fill).
    let page = service.list(ListFilter { limit: 20, ..ListFilter::default() }).await.unwrap();
    assert_eq!(page.games.iter().map(|g| g.id.clone()).collect::<Vec<_>>(), ids[..10].to_vec());
    assert_eq!(page.next_after.as_ref(), Some(&ids[9]));
}

/// A store whose appends are acknowledged a while after they are durable
/// (and announced): the widest window between a record's notice and the
/// writer making it readable.
struct SlowAck(MemoryStore);

impl EventStore for SlowAck {
    fn append(&self, request: ludo_storage::AppendRequest) -> ludo_storage::PendingAppend {
        let pending = self.0.append(request);
        let (send, receive) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let outcome = pending.await;
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            let _ = send.send(outcome);
        });
        ludo_storage::PendingAppend::from_receiver(receive)
    }
    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> StoreFuture<Vec<StoredRecord>> {
        self.0.read(stream, from, to)
    }
    fn read_blocking(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        self.0.read_blocking(stream, from, to)
    }
    fn next_seq(&self, stream: StreamId) -> Result<u64, StoreError> {
        self.0.next_seq(stream)
    }
    fn list_streams(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError> {
        self.0.list_streams(after, limit)
    }
    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> StoreFuture<Vec<StreamSummary>> {
        self.0.list_summaries(after, limit)
    }
    fn list_summaries_blocking(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
        self.0.list_summaries_blocking(after, limit)
    }
    fn sealed(&self, stream: StreamId) -> StoreFuture<Option<Vec<u8>>> {
        self.0.sealed(stream)
    }
    fn sealed_blocking(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.sealed_blocking(stream)
    }
    fn read_feed(&self, after: u64, limit: usize) -> StoreFuture<Vec<ludo_storage::FeedEntry>> {
        self.0.read_feed(after, limit)
    }
    fn read_feed_blocking(&self, after: u64, limit: usize) -> Result<Vec<ludo_storage::FeedEntry>, StoreError> {
        self.0.read_feed_blocking(after, limit)
    }
    fn feed_head(&self) -> Result<u64, StoreError> {
        self.0.feed_head()
    }
    fn projection_load(&self, name: &str) -> StoreFuture<Option<u64>> {
        self.0.projection_load(name)
    }
    fn projection_commit(&self, commit: ludo_storage::ProjectionCommit) -> StoreFuture<()> {
        self.0.projection_commit(commit)
    }
    fn projection_get(&self, name: &str, key: &[u8]) -> StoreFuture<Option<Vec<u8>>> {
        self.0.projection_get(name, key)
    }
    fn projection_scan(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> StoreFuture<Vec<(Vec<u8>, Vec<u8>)>> {
        self.0.projection_scan(name, after, limit)
    }
    fn projection_reset(&self, name: &str) -> StoreFuture<()> {
        self.0.projection_reset(name)
    }
    fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.0.projection_names()
    }
    fn projection_lease(&self, name: &str) -> StoreFuture<Option<ludo_storage::ProjectionLease>> {
        self.0.projection_lease(name)
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ludo_storage::Appended> {
        self.0.subscribe()
    }
    fn close(&self) -> Result<(), ludo_storage::StoreError> {
        self.0.close()
    }
    fn health(&self) -> Result<(), ludo_storage::StoreError> {
        self.0.health()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_hears_of_a_record_only_once_reads_return_it() {
    // A page redraws on each streamed record by reading the game: the read
    // must never be older than the record it heard of.
    let store: Arc<dyn EventStore> = Arc::new(SlowAck(MemoryStore::new()));
    let service = Arc::new(GameService::new(store, Arc::new(SystemClock)));
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let ludo_game::Watch::Live(mut updates) = service.watch(&gid(&game.id), None, 1).await.unwrap() else { panic!("a live game") };
    let player = {
        let (service, game) = (Arc::clone(&service), game.clone());
        tokio::spawn(async move {
            let mut played = 0;
            while let Some((seat, mv)) = next_move(&service, &game).await {
                service.submit(&gid(&game.id), token(&game, seat), submit(mv)).await.unwrap();
                played += 1;
                if played == 12 {
                    break;
                }
            }
        })
    };
    for seq in 1..=12 {
        let Some(Ok(ludo_game::Watched::Update(update))) = updates.recv().await else { panic!("record {seq}") };
        assert_eq!(update.event.seq, seq);
        let read = service.get(&gid(&game.id), None).await.unwrap();
        assert!(read.version >= seq, "heard of record {seq}, but a read still says version {}", read.version);
    }
    player.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_moves_only_for_a_seat_token_and_its_move_is_accepted() {
    use ludo_bots::{Bot, Budget, Level};
    let (service, _) = service();
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let id = gid(&game.id);
    let bot = Bot::new(Level::Strong, Budget { iterations: 50, time: None, playout_depth: None }, 1);
    // Not without a seat's token (a spectator has no information set to play from).
    let refused = service.bot_move(&id, None, bot.clone()).await.unwrap_err();
    assert_eq!(refused.code(), "unauthorized");
    assert_eq!(service.bot_move(&id, Some("no-such-token"), bot.clone()).await.unwrap_err().code(), "unauthorized");
    // Seat 1 is not to move (first_seat 0): no move.
    let (none, version, bot) = service.bot_move(&id, token(&game, 1), bot).await.unwrap();
    assert_eq!((none, version), (None, 0));
    // Seat 0's move goes through the same path as anyone's, for many moves.
    let mut bot = bot;
    for _ in 0..6 {
        let Some((seat, _)) = next_move(&service, &game).await else { break };
        let (mv, version, back) = service.bot_move(&id, token(&game, seat), bot).await.unwrap();
        bot = back;
        let mv = mv.expect("the bot moves for the seat to move");
        let submission = ludo_game::api::Submission {
            mv: ludo_game::api::MoveInput::Typed(mv),
            expected_version: Some(version),
            request_id: None,
            answer: ludo_game::api::Answer::Full,
        };
        let accepted = service.submit(&id, token(&game, seat), submission).await.expect("the bot's move is legal");
        assert_eq!(accepted.version, version + 1);
    }
    assert!(log_len(&service, &game).await >= 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_running_the_bots_itself_thinks_only_for_bot_seats() {
    // Bot seats hold no token: `ludo simulate --records` thinks for them by seat,
    // and that path must not become a way to think from a person's hand.
    use ludo_bots::{Bot, Budget, Level};
    use ludo_game::api::Player;
    use ludo_record::bot::{BotLevel, BotRequest};
    let (service, _) = service();
    let players = vec![Player::named("Ann"), Player::bot("Robo", BotRequest { level: BotLevel::Random, think_ms: Some(0) })];
    let game = service.create(CreateGame::new("cardinal", players).with_options(json!({"first_seat": 0}))).await.unwrap();
    assert_eq!(game.seats.len(), 1, "only the person's seat has a token");
    let id = gid(&game.id);
    let bot = Bot::new(Level::Random, Budget { iterations: 10, time: None, playout_depth: None }, 1);
    let refused = service.bot_move_for_bot(&id, Seat(0), bot.clone()).await.unwrap_err();
    assert_eq!(refused.code(), "invalid_input");
    // Seat 1 is not to move (first_seat 0): no move, but no refusal either.
    let (none, version, _) = service.bot_move_for_bot(&id, Seat(1), bot).await.unwrap();
    assert_eq!((none, version), (None, 0));
}

/// A store whose disk can fill up: while `full`, appends are refused as the
/// sled store refuses them (`Unavailable`, nothing written). Counts the
/// reads that reach it.
struct FillingStore {
    inner: MemoryStore,
    full: std::sync::atomic::AtomicBool,
    reads: std::sync::atomic::AtomicU64,
}

impl FillingStore {
    fn read_counted(&self) {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl EventStore for FillingStore {
    fn append(&self, request: ludo_storage::AppendRequest) -> ludo_storage::PendingAppend {
        if self.full.load(std::sync::atomic::Ordering::SeqCst) {
            return ludo_storage::PendingAppend::ready(Err(StoreError::Unavailable("the disk is full; nothing was written".into())));
        }
        self.inner.append(request)
    }
    fn read(&self, stream: StreamId, from: u64, to: Option<u64>) -> StoreFuture<Vec<StoredRecord>> {
        self.read_counted();
        self.inner.read(stream, from, to)
    }
    fn read_blocking(&self, stream: StreamId, from: u64, to: Option<u64>) -> Result<Vec<StoredRecord>, StoreError> {
        self.read_counted();
        self.inner.read_blocking(stream, from, to)
    }
    fn next_seq(&self, stream: StreamId) -> Result<u64, StoreError> {
        self.inner.next_seq(stream)
    }
    fn list_streams(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamId>, StoreError> {
        self.inner.list_streams(after, limit)
    }
    fn list_summaries(&self, after: Option<StreamId>, limit: usize) -> StoreFuture<Vec<StreamSummary>> {
        self.inner.list_summaries(after, limit)
    }
    fn list_summaries_blocking(&self, after: Option<StreamId>, limit: usize) -> Result<Vec<StreamSummary>, StoreError> {
        self.inner.list_summaries_blocking(after, limit)
    }
    fn sealed(&self, stream: StreamId) -> StoreFuture<Option<Vec<u8>>> {
        self.read_counted();
        self.inner.sealed(stream)
    }
    fn sealed_blocking(&self, stream: StreamId) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_counted();
        self.inner.sealed_blocking(stream)
    }
    fn read_feed(&self, after: u64, limit: usize) -> StoreFuture<Vec<ludo_storage::FeedEntry>> {
        self.inner.read_feed(after, limit)
    }
    fn read_feed_blocking(&self, after: u64, limit: usize) -> Result<Vec<ludo_storage::FeedEntry>, StoreError> {
        self.inner.read_feed_blocking(after, limit)
    }
    fn feed_head(&self) -> Result<u64, StoreError> {
        self.inner.feed_head()
    }
    fn projection_load(&self, name: &str) -> StoreFuture<Option<u64>> {
        self.inner.projection_load(name)
    }
    fn projection_commit(&self, commit: ludo_storage::ProjectionCommit) -> StoreFuture<()> {
        self.inner.projection_commit(commit)
    }
    fn projection_get(&self, name: &str, key: &[u8]) -> StoreFuture<Option<Vec<u8>>> {
        self.inner.projection_get(name, key)
    }
    fn projection_scan(&self, name: &str, after: Option<Vec<u8>>, limit: usize) -> StoreFuture<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.projection_scan(name, after, limit)
    }
    fn projection_reset(&self, name: &str) -> StoreFuture<()> {
        self.inner.projection_reset(name)
    }
    fn projection_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.inner.projection_names()
    }
    fn projection_lease(&self, name: &str) -> StoreFuture<Option<ludo_storage::ProjectionLease>> {
        self.inner.projection_lease(name)
    }
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ludo_storage::Appended> {
        self.inner.subscribe()
    }
    fn close(&self) -> Result<(), StoreError> {
        self.inner.close()
    }
    fn health(&self) -> Result<(), StoreError> {
        self.inner.health()
    }
}

#[tokio::test]
async fn a_move_refused_by_a_full_store_keeps_the_game_in_memory() {
    use std::sync::atomic::Ordering;
    let store = Arc::new(FillingStore { inner: MemoryStore::new(), full: false.into(), reads: std::sync::atomic::AtomicU64::new(0) });
    let service = GameService::new(Arc::clone(&store) as Arc<dyn EventStore>, Arc::new(SystemClock));
    let game = cardinal(&service, &["Ann", "Bob"]).await;
    let (seat, mv) = next_move(&service, &game).await.expect("a move");
    service.submit(&gid(&game.id), token(&game, seat), submit(mv)).await.expect("taken");
    let before = service.get(&gid(&game.id), token(&game, 0)).await.unwrap();

    store.full.store(true, Ordering::SeqCst);
    let (seat, mv) = next_move(&service, &game).await.expect("a move");
    let refused = service.submit(&gid(&game.id), token(&game, seat), submit(mv.clone())).await.unwrap_err();
    assert_eq!(refused.code(), "storage_unavailable");
    // The refusal wrote nothing, so the cached game is still the game: reads
    // of its state and legal moves answer from memory, not from the store.
    let reads = store.reads.load(Ordering::SeqCst);
    let now = service.get(&gid(&game.id), token(&game, 0)).await.unwrap();
    assert_eq!(serde_json::to_value(&now).unwrap(), serde_json::to_value(&before).unwrap());
    let legal = service.legal_moves(&gid(&game.id), token(&game, seat)).await.unwrap();
    assert_eq!(legal.moves[0].to_json(), mv);
    assert_eq!(store.reads.load(Ordering::SeqCst), reads, "no read reached the store");

    // Once there is room, the same move is taken at the version it was tried at.
    store.full.store(false, Ordering::SeqCst);
    let accepted = service.submit(&gid(&game.id), token(&game, seat), submit(mv)).await.expect("taken");
    assert_eq!(accepted.version, before.version + 1);
}
