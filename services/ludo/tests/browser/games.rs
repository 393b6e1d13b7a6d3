//! Whole games through the board UI, one browser per seat, a spectator's
//! watch page following every move live.

use serde_json::{Value, json};

use super::harness::{Browser, Rng, Test};
use super::play::{assert_no_problem, open_seats, open_watcher, play_through_boards, wait_finished, wait_live};

async fn play_whole_game(t: &Test, created: &Value, rng: &mut Rng, max_moves: usize) {
    let id = created["id"].as_str().unwrap();
    let seats = open_seats(t, created).await;
    let watcher = open_watcher(t, id).await;
    let all: Vec<&Browser> = seats.iter().chain([&watcher]).collect();
    wait_live(&all).await;
    for page in &all {
        page.screenshot("start").await;
    }
    let moves = play_through_boards(t, id, &seats, Some(&watcher), rng, max_moves, |_| false).await;
    let state = t.get(&format!("/v1/games/{id}"), None).await;
    assert_eq!(state["status"]["state"], "finished", "{}: the game is over on the server", t.name);
    let version = state["version"].as_u64().unwrap();
    assert!(moves > 0 && version >= moves as u64);
    wait_finished(&all, version).await;
    assert_no_problem(&all).await;
    let reloaded = watcher.js("return window.__ludoNoReload !== 'mark'", vec![]).await;
    assert_eq!(reloaded, json!(false), "{}: the watch page reloaded", t.name);
    for page in &all {
        page.screenshot("finished").await;
    }
    for page in seats {
        page.close().await;
    }
    watcher.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_cardinal_game_for_two_through_the_boards() {
    let Some(t) = Test::start("cardinal_2p", &[]) else { return };
    let mut rng = Rng::new(t.name, 20261123);
    let created = t.create(json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}})).await;
    play_whole_game(&t, &created, &mut rng, 400).await;
    t.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_kardinal_game_for_three_through_the_boards() {
    let Some(t) = Test::start("kardinal_3p", &[]) else { return };
    let mut rng = Rng::new(t.name, 31337);
    let created = t.create(json!({"kind": "kardinal", "players": ["Ann", "Bob", "Cid"], "options": {"first_seat": 0}})).await;
    play_whole_game(&t, &created, &mut rng, 600).await;
    t.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn battle13_to_the_end_of_a_joust_through_the_boards() {
    let Some(t) = Test::start("battle13_joust", &[]) else { return };
    let mut rng = Rng::new(t.name, 1313);
    let created = t
        .create(json!({"kind": "battle13", "players": ["Ann", "Bob", "Cid", "Dee"], "options": {"first_seat": 0, "target_crowns": 20}}))
        .await;
    let id = created["id"].as_str().unwrap();
    let seats = open_seats(&t, &created).await;
    let watcher = open_watcher(&t, id).await;
    let all: Vec<&Browser> = seats.iter().chain([&watcher]).collect();
    wait_live(&all).await;
    for page in &all {
        page.screenshot("start").await;
    }
    let joust_over = |state: &Value| state["view"]["history"].as_array().is_some_and(|h| !h.is_empty());
    play_through_boards(&t, id, &seats, Some(&watcher), &mut rng, 400, joust_over).await;
    let state = t.get(&format!("/v1/games/{id}"), None).await;
    assert!(joust_over(&state) || state["status"]["state"] == "finished", "{}: a joust ended: {}", t.name, state["view"]);
    let version = state["version"].as_u64().unwrap();
    for page in &all {
        page.wait_version_at_least(version, "the end of the joust").await;
    }
    assert_no_problem(&all).await;
    for page in &all {
        page.screenshot("joust-over").await;
    }
    for page in seats {
        page.close().await;
    }
    watcher.close().await;
    t.finish();
}
