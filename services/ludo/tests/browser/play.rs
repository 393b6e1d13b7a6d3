//! Playing through the board UI: each seat in its own browser clicks enabled
//! `[data-pick]` parts (the README's contract: picking enabled parts one
//! after another always reaches a submitted legal move) until a move lands;
//! a spectator's watch page must follow every move live.

use serde_json::{Value, json};

use super::harness::{Browser, Rng, Test};

/// Opens one browser per seat on its seat link (`/games/{id}/play#token=…`)
/// and checks the token left the address bar for the tab's sessionStorage.
pub async fn open_seats(t: &Test, created: &Value) -> Vec<Browser> {
    let id = created["id"].as_str().unwrap();
    let mut seats = Vec::new();
    for (i, seat) in created["seats"].as_array().unwrap().iter().enumerate() {
        let token = seat["token"].as_str().unwrap();
        let browser = t.browser(&format!("seat{i}")).await;
        browser.goto(&format!("/games/{id}/play#token={token}")).await;
        browser.wait_version_at_least(0, "the seat's page shows its game").await;
        let kept = browser
            .wait_js(
                "the seat token moved to sessionStorage and out of the address bar",
                "const t = sessionStorage.getItem('ludo.token.' + arguments[0]); return (t && !location.href.includes(t)) ? t : null;",
                vec![json!(id)],
            )
            .await;
        assert_eq!(kept, json!(token), "{}: sessionStorage ludo.token.{id}", browser.role);
        seats.push(browser);
    }
    seats
}

/// Opens a spectator's watch page and marks its document, so that a reload
/// (which would lose the mark) is seen.
pub async fn open_watcher(t: &Test, id: &str) -> Browser {
    let watcher = t.browser("watcher").await;
    watcher.goto(&format!("/games/{id}/watch")).await;
    watcher.wait_version_at_least(0, "the watch page shows the game").await;
    watcher.js("window.__ludoNoReload = 'mark';", vec![]).await;
    watcher
}

/// Waits until every page says it follows its game live (`data-live=on`).
pub async fn wait_live(pages: &[&Browser]) {
    for page in pages {
        page.wait_js(
            "#status[data-live=on] (the page follows its game through a stream)",
            "const s = document.querySelector('#status'); return s && s.dataset.live === 'on';",
            vec![],
        )
        .await;
    }
}

/// Before a pick: the enabled, visible parts of the board once the page
/// shows version `v` and nothing is in flight; or the refusal shown; or the
/// newer version the page reached.
const SNAPSHOT: &str = r#"
const v = arguments[0];
const s = document.querySelector('#status');
const p = document.querySelector('#problem');
if (p && (p.textContent.trim() || p.dataset.code)) return { problem: (p.dataset.code || '') + ': ' + p.textContent.trim() };
if (window.__ludoFetch && window.__ludoFetch.inflight > 0) return null;
if (!s || s.dataset.version === undefined) return null;
const version = Number(s.dataset.version);
if (version > v) return { version };
if (version !== v || s.dataset.state !== 'in_progress') return null;
const parts = [...document.querySelectorAll('#board [data-pick]')]
  .filter((e) => e.getAttribute('aria-disabled') !== 'true' && e.getClientRects().length > 0);
if (!parts.length) return null;
return {
  version,
  parts,
  labels: parts.map((e) => e.dataset.pick + ' (' + (e.getAttribute('aria-label') || 'no aria-label') + ')'),
  roles: parts.map((e) => [e.getAttribute('role'), e.getAttribute('tabindex')]),
  mutations: window.__ludoBoard.mutations,
};
"#;

/// On a page at version `v`, the number of enabled parts (null at another version).
const IDLE: &str = r#"
const s = document.querySelector('#status');
if (!s || Number(s.dataset.version) !== arguments[0]) return null;
return [...document.querySelectorAll('#board [data-pick]')].filter((e) => e.getAttribute('aria-disabled') !== 'true').length;
"#;

/// After a pick: the board answered (it changed, or the page moved on to a
/// newer version) and nothing is in flight; or a refusal is shown.
const ANSWERED: &str = r#"
const [v, before] = arguments;
const s = document.querySelector('#status');
const p = document.querySelector('#problem');
if (p && (p.textContent.trim() || p.dataset.code)) return { problem: (p.dataset.code || '') + ': ' + p.textContent.trim() };
if (window.__ludoFetch.inflight > 0) return null;
const version = s ? Number(s.dataset.version) : -1;
if (version > v) return { version };
if (window.__ludoBoard.mutations !== before) return { changed: true };
return null;
"#;

/// Plays moves through the seats' boards until `done(state)` (the spectator's
/// `GET /v1/games/{id}`) or the game is over; returns the number of moves.
/// After each move the watcher, if any, must reach the new version live.
pub async fn play_through_boards(
    t: &Test,
    id: &str,
    seats: &[Browser],
    watcher: Option<&Browser>,
    rng: &mut Rng,
    max_moves: usize,
    done: impl Fn(&Value) -> bool,
) -> usize {
    let mut moves = 0;
    let mut keyboard_picks = 0;
    let mut intercepted = 0;
    let mut shots_at = [1usize, 10, 40];
    loop {
        let state = t.get(&format!("/v1/games/{id}"), None).await;
        if state["status"]["state"] == "finished" || done(&state) {
            break;
        }
        assert!(moves < max_moves, "{}: still not done after {max_moves} moves", t.name);
        let v = state["version"].as_u64().unwrap();
        let seat = state["status"]["to_move"][0].as_u64().unwrap_or_else(|| panic!("nobody to move: {}", state["status"])) as usize;
        let page = &seats[seat];
        // Pages whose viewer may not move now offer nothing to pick.
        let to_move: Vec<usize> = state["status"]["to_move"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap() as usize).collect();
        let idle = seats.iter().enumerate().filter(|(i, _)| !to_move.contains(i)).map(|(_, p)| p).chain(watcher);
        for other in idle {
            let offered = other.js(IDLE, vec![json!(v)]).await;
            if offered.as_u64().is_some_and(|n| n > 0) {
                match other
                    .fail(&format!(
                        "{n} enabled [data-pick] parts at version {v}, though this viewer may not move (to_move {to_move:?})",
                        n = offered
                    ))
                    .await {}
            }
        }
        let posted_before = page.js("return window.__ludoFetch.moves", vec![]).await.as_u64().unwrap();
        let mut picks = Vec::new();
        loop {
            let snapshot = page
                .wait_js(
                    &format!(
                        "version {v} on seat {seat}'s page with an enabled [data-pick] part on #board (its turn: status.to_move = {})",
                        state["status"]["to_move"]
                    ),
                    SNAPSHOT,
                    vec![json!(v)],
                )
                .await;
            if let Some(problem) = snapshot["problem"].as_str() {
                match page.fail(&format!("a refusal appeared in #problem after picking {picks:?}: {problem}")).await {}
            }
            if snapshot.get("parts").is_none() {
                break; // the page reached a newer version: the move landed
            }
            if picks.len() >= 120 {
                match page.fail(&format!("120 picks did not make a move at version {v}: {picks:?}")).await {}
            }
            let parts = snapshot["parts"].as_array().unwrap();
            let choice = rng.below(parts.len());
            let label = snapshot["labels"][choice].as_str().unwrap().to_string();
            let role = &snapshot["roles"][choice];
            if role[0] != "button" || role[1].is_null() {
                match page.fail(&format!("the part {label} lacks role=button or tabindex (got {role})")).await {}
            }
            let Some(element) = page.element_of(&parts[choice]) else { panic!("not an element: {}", parts[choice]) };
            let by = rng.below(8);
            let how = if by == 0 || by == 1 {
                keyboard_picks += 1;
                let key = if by == 0 { "\u{E007}" } else { " " };
                match element.send_keys(key).await {
                    Ok(()) => {
                        if by == 0 {
                            "Enter"
                        } else {
                            "Space"
                        }
                    }
                    Err(error) => match page.fail(&format!("the part {label} does not take keys: {error}")).await {},
                }
            } else {
                match element.click().await {
                    Ok(()) => "click",
                    Err(error) if error.to_string().contains("intercepted") => {
                        // Another element covers the part's centre: note it and
                        // click the part itself.
                        intercepted += 1;
                        eprintln!("[{}] warning: a click on {label} was intercepted ({error}); dispatching it", t.name);
                        page.js(
                            "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));",
                            vec![parts[choice].clone()],
                        )
                        .await;
                        "dispatched click"
                    }
                    Err(error) => match page.fail(&format!("cannot click {label}: {error}")).await {},
                }
            };
            picks.push(format!("{how} {label}"));
            let answered = page
                .wait_js(
                    &format!("the page to answer the pick of {label} ({how}) at version {v}"),
                    ANSWERED,
                    vec![json!(v), snapshot["mutations"].clone()],
                )
                .await;
            if let Some(problem) = answered["problem"].as_str() {
                match page.fail(&format!("a refusal appeared in #problem after picking {picks:?}: {problem}")).await {}
            }
            if answered.get("version").is_some() {
                break;
            }
        }
        // The move landed, once: exactly one submission, not refused.
        let fetches = page.js("return {moves: window.__ludoFetch.moves, refused: window.__ludoFetch.refused}", vec![]).await;
        assert_eq!(
            fetches["moves"].as_u64().unwrap() - posted_before,
            1,
            "{}: seat {seat} submitted more than once for one move: {picks:?} {fetches}",
            t.name
        );
        assert_eq!(fetches["refused"], json!([]), "{}: a submission was refused: {picks:?}", t.name);
        let after = t.get(&format!("/v1/games/{id}"), None).await;
        let new_version = after["version"].as_u64().unwrap();
        assert!(new_version > v, "{}: the page moved past version {v} but the server is at {new_version}", t.name);
        moves += 1;
        if let Some(watcher) = watcher {
            let seen = watcher
                .wait_js(
                    &format!("the watch page to reach version {new_version} live (move {moves}: seat {seat} {picks:?})"),
                    "if (window.__ludoNoReload !== 'mark') return {reloaded: true}; const s = document.querySelector('#status'); return (s && Number(s.dataset.version) >= arguments[0]) ? {version: Number(s.dataset.version)} : null;",
                    vec![json!(new_version)],
                )
                .await;
            if seen.get("reloaded").is_some() {
                match watcher.fail("the watch page reloaded instead of updating live").await {}
            }
        }
        if shots_at.contains(&moves) {
            page.screenshot(&format!("move-{moves}")).await;
            if let Some(watcher) = watcher {
                watcher.screenshot(&format!("move-{moves}")).await;
            }
            shots_at.iter_mut().filter(|m| **m == moves).for_each(|m| *m = usize::MAX);
        }
    }
    eprintln!("[{}] {moves} moves through the boards ({keyboard_picks} picks by keyboard, {intercepted} intercepted clicks)", t.name);
    moves
}

/// Waits for every page to show the game's final version and `finished`.
pub async fn wait_finished(pages: &[&Browser], version: u64) {
    for page in pages {
        page.wait_js(
            &format!("#status[data-state=finished][data-version={version}]"),
            "const s = document.querySelector('#status'); return s && s.dataset.state === 'finished' && Number(s.dataset.version) === arguments[0];",
            vec![json!(version)],
        )
        .await;
    }
}

/// No page shows a refusal.
pub async fn assert_no_problem(pages: &[&Browser]) {
    for page in pages {
        if let Some(problem) = page.problem().await {
            match page.fail(&format!("#problem shows a refusal: {problem}")).await {}
        }
    }
}
