//! The replay page shows, at each version the scrubber, the buttons or the
//! arrow keys reach (and at a deep link), exactly what
//! `GET /v1/games/{id}/replay?at=N` answers for the same viewer.

use fantoccini::key::Key;
use serde_json::{Value, json};

use super::harness::{Browser, Test};
use crate::common::play_one;

/// The first place two JSON values differ, for a readable failure.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let (p, q) = (x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null));
                if x.contains_key(key) != y.contains_key(key) {
                    return Some(format!("{path}.{key}: page {} / API {}", x.contains_key(key), y.contains_key(key)));
                }
                if let Some(d) = first_difference(&format!("{path}.{key}"), p, q) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(&format!("{path}[{i}]"), p, q))
        }
        _ if a == b => None,
        _ => Some(format!("{path}: page {a} / API {b}")),
    }
}

/// Waits for the page to show version `at`, then compares `#raw-view pre`
/// with the API's replay for `token` and checks the current step.
async fn shows_replay(t: &Test, page: &Browser, id: &str, at: u64, token: Option<&str>, how: &str) -> Value {
    let raw = page
        .wait_js(
            &format!("the replay at version {at} ({how}): #status[data-version={at}] and #raw-view pre holding version {at}"),
            "const s = document.querySelector('#status'); const pre = document.querySelector('#raw-view pre');
             if (!s || Number(s.dataset.version) !== arguments[0] || !pre) return null;
             try { const j = JSON.parse(pre.textContent); return j.version === arguments[0] ? pre.textContent : null; } catch (e) { return null; }",
            vec![json!(at)],
        )
        .await;
    let shown: Value = serde_json::from_str(raw.as_str().unwrap()).unwrap();
    let api = t.get(&format!("/v1/games/{id}/replay?at={at}"), token).await;
    if let Some(difference) = first_difference("", &shown, &api) {
        match page.fail(&format!("the replay at {at} ({how}) is not the API's answer for this viewer: {difference}")).await {}
    }
    let current = page.js("const c = document.querySelector('#steps li.current'); return c ? c.dataset.seq : null;", vec![]).await;
    assert_eq!(current, json!(at.to_string()), "{}/{}: #steps li.current[data-seq] at version {at} ({how})", t.name, page.role);
    let scrubber = page.js("const r = document.querySelector('#scrubber'); return r ? r.value : null;", vec![]).await;
    assert_eq!(scrubber, json!(at.to_string()), "{}/{}: #scrubber value at version {at} ({how})", t.name, page.role);
    shown
}

/// Takes the focus away from any control, so keys go to the page.
async fn blur(page: &Browser) {
    page.js("if (document.activeElement) document.activeElement.blur(); document.body.focus();", vec![]).await;
}

/// Walks the replay with every control, comparing each version shown.
async fn walk(t: &Test, page: &Browser, id: &str, latest: u64, token: Option<&str>) -> Vec<Value> {
    let mut shown = Vec::new();
    // Deep link.
    page.goto(&format!("/games/{id}/replay?at=5")).await;
    shown.push(shows_replay(t, page, id, 5, token, "deep link ?at=5").await);
    page.screenshot("replay-at-5").await;
    // Arrow keys on the page.
    blur(page).await;
    page.press(Key::Right).await;
    shows_replay(t, page, id, 6, token, "ArrowRight").await;
    page.press(Key::Left).await;
    page.press(Key::Left).await;
    shows_replay(t, page, id, 4, token, "ArrowLeft twice").await;
    // Buttons.
    page.element("#next").await.click().await.unwrap();
    shows_replay(t, page, id, 5, token, "#next").await;
    page.element("#prev").await.click().await.unwrap();
    page.element("#prev").await.click().await.unwrap();
    shows_replay(t, page, id, 3, token, "#prev twice").await;
    // The scrubber, by keyboard (the range input's own keys) and dragged to a value.
    let scrubber = page.element("#scrubber").await;
    assert_eq!(scrubber.attr("type").await.unwrap().as_deref(), Some("range"));
    page.js("document.querySelector('#scrubber').focus();", vec![]).await;
    page.press(Key::End).await;
    shown.push(shows_replay(t, page, id, latest, token, "End on the scrubber").await);
    page.screenshot("replay-latest").await;
    page.press(Key::Home).await;
    shows_replay(t, page, id, 0, token, "Home on the scrubber").await;
    page.screenshot("replay-at-0").await;
    let to = latest / 2 + 1;
    page.js(
        "const r = document.querySelector('#scrubber'); r.value = String(arguments[0]);
         r.dispatchEvent(new Event('input', {bubbles: true})); r.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![json!(to)],
    )
    .await;
    shown.push(shows_replay(t, page, id, to, token, "scrubber dragged").await);
    // The address follows, so the version can be shared.
    let url = page.client.current_url().await.unwrap();
    assert!(url.query().is_some_and(|q| q.contains(&format!("at={to}"))), "{}/{}: the address names the version: {url}", t.name, page.role);
    shown
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_shows_what_the_api_answers_for_each_viewer() {
    let Some(t) = Test::start("replay", &[]) else { return };
    let created = t.create(json!({"kind": "kardinal", "players": ["Ann", "Bob", "Cid"], "options": {"first_seat": 0}})).await;
    let id = created["id"].as_str().unwrap();
    for _ in 0..14 {
        assert!(play_one(&t.http, t.base(), &created).await);
    }
    let latest = t.get(&format!("/v1/games/{id}"), None).await["version"].as_u64().unwrap();
    assert!(latest >= 14);

    // A spectator: public information only.
    let spectator = t.browser("spectator").await;
    let seen = walk(&t, &spectator, id, latest, None).await;
    for state in &seen {
        assert!(state["view"]["seats"].as_array().unwrap().iter().all(|s| s["hand"].is_null()), "a spectator saw a hand: {state}");
    }
    let perspective = spectator.js("const p = document.querySelector('#perspective'); return p ? p.textContent : null;", vec![]).await;
    assert!(perspective.is_string(), "replay: #perspective");

    // Seat 1 (Bob), whose token the tab holds from its seat link: its own hand.
    let token = created["seats"][1]["token"].as_str().unwrap();
    let bob = t.browser("seat1").await;
    bob.goto(&format!("/games/{id}/play#token={token}")).await;
    bob.wait_version_at_least(0, "the seat's page").await;
    let seen = walk(&t, &bob, id, latest, Some(token)).await;
    for state in &seen {
        assert!(state["view"]["seats"][1]["hand"].is_array(), "Bob did not see his hand: {state}");
        assert!(state["view"]["seats"][0]["hand"].is_null(), "Bob saw Ann's hand: {state}");
    }
    spectator.close().await;
    bob.close().await;
    t.finish();
}
