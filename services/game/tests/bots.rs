//! The service's bot seats over the in-memory store: bots play their seats
//! to the end, say so in the log, wait their think delay, take turns left
//! before a restart, and stop when their seat is taken back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ludo_game::api::{CreateGame, CreatedGame, Player, SetAutopilot, SubmitMove};
use ludo_game::{BotSettings, GameId, GameService, SystemClock};
use ludo_record::bot::{BotLevel, BotRequest};
use ludo_storage::{EventStore, MemoryStore};

fn quick() -> BotSettings {
    BotSettings { workers: 2, budget: ludo_bots::Budget { iterations: 60, time: None, playout_depth: None }, think_ms: 0 }
}

fn service_on(store: &Arc<dyn EventStore>) -> Arc<GameService> {
    let service = Arc::new(GameService::new(Arc::clone(store), Arc::new(SystemClock)).with_bots(quick()));
    service.start_bots();
    service
}

fn bot(level: BotLevel, think_ms: u32) -> Option<BotRequest> {
    Some(BotRequest { level, think_ms: Some(think_ms) })
}

async fn create(service: &GameService, kind: &str, seats: Vec<(&str, Option<BotRequest>)>) -> (CreatedGame, GameId) {
    let players: Vec<Player> = seats.into_iter().map(|(name, bot)| Player { name: name.into(), bot }).collect();
    let game = service.create(CreateGame::new(kind, players)).await.expect("created");
    let id = game.id.parse().unwrap();
    (game, id)
}

/// Waits (at most 60 s) until `done` holds for the game's state.
async fn until(service: &GameService, id: &GameId, what: &str, done: impl Fn(&ludo_game::api::GameState) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let state = service.get(id, None).await.unwrap();
        if done(&state) {
            return;
        }
        assert!(Instant::now() < deadline, "waited 60 s for {what}; the game is at {} ({:?})", state.version, state.status);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_play_every_kind_to_the_end_and_each_move_names_its_bot() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service_on(&store);
    for (kind, players) in [("cardinal", 2), ("kardinal", 3), ("battle13", 4)] {
        let levels = [BotLevel::Strong, BotLevel::Random, BotLevel::Greedy, BotLevel::Random];
        let seats = (0..players).map(|s| ("Bot", bot(levels[s], 0))).collect();
        let (_, id) = create(&service, kind, seats).await;
        until(&service, &id, "the end", |s| s.status.is_finished()).await;
        let page = service.events(&id, None, 0, 1000).await.unwrap();
        assert!(page.next_from.is_none(), "{kind}: one page");
        for event in &page.events[1..] {
            let seat = usize::from(event.seat.expect("a move").0);
            let mark = event.bot.as_ref().unwrap_or_else(|| panic!("{kind}: move {} was made by no bot", event.seq));
            assert_eq!(mark.level, levels[seat], "{kind}: move {} names its seat's bot", event.seq);
            assert_eq!(mark.version, ludo_bots::VERSION);
        }
        let report = ludo_record::export::verify(&service.export(&id, None).await.unwrap());
        assert!(report.valid && report.replayed, "{kind}: {:?}", report.fault);
    }
    // Counted by kind and level, with the time they thought.
    let metrics = service.metrics_text();
    let count = |kind: &str, level: &str| -> f64 {
        let prefix = format!("ludo_bot_moves_total{{kind=\"{kind}\",level=\"{level}\"}} ");
        metrics.lines().find_map(|line| line.strip_prefix(prefix.as_str())).map_or(0.0, |n| n.parse().unwrap())
    };
    assert!(count("cardinal", "strong") > 0.0 && count("battle13", "greedy") > 0.0, "{metrics}");
    assert!(metrics.contains("ludo_bot_think_seconds_count") && metrics.contains("ludo_bots_thinking 0"), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_waits_its_think_delay_before_it_moves() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service_on(&store);
    let (_, id) = create(&service, "cardinal", vec![("A", bot(BotLevel::Random, 300)), ("B", bot(BotLevel::Random, 300))]).await;
    until(&service, &id, "two bot moves", |s| s.version >= 2).await;
    let page = service.events(&id, None, 0, 3).await.unwrap();
    let at = |i: usize| humantime::parse_rfc3339(&page.events[i].at).unwrap();
    for i in 1..3 {
        let waited = at(i).duration_since(at(i - 1)).unwrap();
        assert!(waited >= Duration::from_millis(300), "move {i} came {waited:?} after the record before it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_turn_left_by_a_stopped_service_is_played_by_the_next_one() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    // A service that never starts its bots: the bot's turn is left undone.
    let first = Arc::new(GameService::new(Arc::clone(&store), Arc::new(SystemClock)).with_bots(quick()));
    let (game, id) = create(&first, "battle13", (0..4).map(|_| ("Bot", bot(BotLevel::Random, 0))).collect()).await;
    assert_eq!(game.version, 0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(first.get(&id, None).await.unwrap().version, 0, "nobody played");
    drop(first);
    // The next service over the same log finds it at start and plays on.
    let next = service_on(&store);
    until(&next, &id, "the end", |s| s.status.is_finished()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autopilot_plays_a_seat_until_its_player_takes_it_back() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());
    let service = service_on(&store);
    let (game, id) = create(&service, "cardinal", vec![("Ann", None), ("Bob", None)]).await;
    let first = game.status.to_move()[0];
    let (mine, theirs) = (&game.seats[usize::from(first.0)], &game.seats[1 - usize::from(first.0)]);
    // The player whose turn it is hands the seat over: the bot moves for it.
    let handed = service.set_autopilot(&id, Some(&mine.token), SetAutopilot { bot: bot(BotLevel::Greedy, 0) }).await.expect("handed over");
    assert_eq!(handed.version, 1);
    assert_eq!(handed.seat, first);
    until(&service, &id, "the bot's move", |s| s.version >= 2).await;
    let page = service.events(&id, None, 1, 2).await.unwrap();
    assert_eq!(page.events[0].kind, "seat_bot");
    assert_eq!(page.events[1].bot.as_ref().map(|b| b.level), Some(BotLevel::Greedy));
    // Asking again for what holds appends nothing.
    let again = service.set_autopilot(&id, Some(&mine.token), SetAutopilot { bot: bot(BotLevel::Greedy, 0) }).await.unwrap();
    assert_eq!(again.version, service.get(&id, None).await.unwrap().version);
    // Taken back: the other player moves, and the seat waits for its player.
    let back = service.set_autopilot(&id, Some(&mine.token), SetAutopilot { bot: None }).await.expect("taken back");
    assert!(back.bot.is_none());
    let state = service.get(&id, None).await.unwrap();
    if state.status.to_move().contains(&theirs.seat) {
        let legal = service.legal_moves(&id, Some(&theirs.token)).await.unwrap();
        let mv = serde_json::to_value(&legal.moves[0]).unwrap();
        service.submit(&id, Some(&theirs.token), SubmitMove { mv, expected_version: None, request_id: None }).await.unwrap();
    }
    let waiting = service.get(&id, None).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(service.get(&id, None).await.unwrap().version, waiting.version, "no bot plays a seat taken back");
    assert!(waiting.seats.iter().all(|s| s.bot.is_none()));
}
