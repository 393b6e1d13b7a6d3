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

/// Autopilot from the play page: Ann hands her seat to the computer, which
/// plays her turn (the board follows), then takes it back; Bob's page shows
/// who plays Ann's seat. Against the API: the seat's bot, its records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_hands_the_seat_to_the_computer_and_takes_it_back() {
    let Some(t) = Test::start("autopilot", &["--bot-think-ms", "300"]) else { return };
    let created = t.create(json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}})).await;
    let id = created["id"].as_str().unwrap();
    let seats = open_seats(&t, &created).await;
    let (ann, bob) = (&seats[0], &seats[1]);
    wait_live(&[ann, bob]).await;
    ann.wait_js(
        "#autopilot offering the computer to Ann",
        "const a = document.querySelector('#autopilot'); const on = document.querySelector('#autopilot-on');
         return a && !a.hidden && on && !on.hidden && a.dataset.bot === '';",
        vec![],
    )
    .await;
    ann.element("#autopilot-level").await.select_by_value("random").await.unwrap();
    ann.screenshot("autopilot-offered").await;
    ann.element("#autopilot-on").await.click().await.unwrap();
    // Recorded, and shown: the seat is the random bot's.
    ann.wait_js(
        "#autopilot[data-bot=random] with #autopilot-off to take the seat back",
        "const a = document.querySelector('#autopilot'); const off = document.querySelector('#autopilot-off');
         return a && a.dataset.bot === 'random' && off && !off.hidden;",
        vec![],
    )
    .await;
    let state = t.get(&format!("/v1/games/{id}"), None).await;
    assert_eq!(state["seats"][0]["bot"]["level"], "random", "the API: seat 0 is the random bot's");
    // The bot plays Ann's turn (a build and a cardinal move), and both pages follow.
    let version = ann.wait_version_at_least(3, "the bot played Ann's turn").await;
    bob.wait_version_at_least(version, "Bob's page follows the bot's moves").await;
    bob.wait_js(
        "Bob's page names Ann's seat as the random bot's",
        "const h = document.querySelector('.game-title'); return h && h.textContent.includes('Ann (random bot)');",
        vec![],
    )
    .await;
    ann.screenshot("autopilot-on").await;
    let events = t.get(&format!("/v1/games/{id}/events"), None).await;
    let events = events["events"].as_array().unwrap();
    assert_eq!(events[1]["type"], "seat_bot", "{events:?}");
    assert!(events[2..].iter().filter(|e| e["seat"] == 0).all(|e| e["bot"]["level"] == "random"), "{events:?}");
    // Taken back: recorded, shown, and the seat waits for Ann again.
    ann.element("#autopilot-off").await.click().await.unwrap();
    ann.wait_js(
        "#autopilot offering the computer again",
        "const a = document.querySelector('#autopilot'); const on = document.querySelector('#autopilot-on');
         return a && a.dataset.bot === '' && on && !on.hidden;",
        vec![],
    )
    .await;
    let state = t.get(&format!("/v1/games/{id}"), None).await;
    assert!(state["seats"][0].get("bot").is_none(), "the API: seat 0 is Ann's again: {state}");
    let events = t.get(&format!("/v1/games/{id}/events?from={}", state["version"]), None).await;
    assert_eq!(events["events"][0]["type"], "seat_bot");
    assert_eq!(events["events"][0]["handover"]["bot"], Value::Null);
    assert_no_problem(&[ann, bob]).await;
    ann.screenshot("autopilot-off").await;
    for page in seats {
        page.close().await;
    }
    t.finish();
}

/// A seat's page whose token is renewed elsewhere (here by the game's
/// admin, who was handed it at creation) hears `seat_revoked` on its live
/// stream, stops following the game as that seat and says why; the other
/// seat's page plays on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_page_whose_token_was_renewed_stops_following_as_that_seat() {
    let Some(t) = Test::start("seat_revoked", &[]) else { return };
    let created = t.create(json!({"kind": "cardinal", "players": ["Ann", "Bob"], "options": {"first_seat": 0}})).await;
    let id = created["id"].as_str().unwrap();
    let seats = open_seats(&t, &created).await;
    wait_live(&seats.iter().collect::<Vec<_>>()).await;
    let admin = created["admin_token"].as_str().unwrap();
    let renewed = reqwest::Client::new().post(format!("{}/v1/games/{id}/seats/1/token", t.base())).bearer_auth(admin).send().await.unwrap();
    assert_eq!(renewed.status(), 200);
    seats[1]
        .wait_js(
            "Bob's page says the seat changed hands",
            "const r = document.querySelector('#revoked'); return r ? r.textContent : null;",
            vec![],
        )
        .await;
    seats[1].screenshot("revoked").await;
    let state = seats[0].js("return document.querySelector('#status') && document.querySelector('#status').dataset.live", vec![]).await;
    assert_eq!(state, json!("on"), "Ann's page still follows the game");
    for page in seats {
        page.close().await;
    }
    t.finish();
}
