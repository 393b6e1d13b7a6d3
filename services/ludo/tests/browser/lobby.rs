//! The lobby: create a game of each kind with its options and get one link
//! per seat and a watch link; list games, filter them by kind and state, and
//! page through them.

use std::collections::BTreeSet;

use serde_json::json;

use super::harness::{Browser, Test};
use crate::common::play_out;

/// Sets a `<select>` by value, or an `<input>`'s text.
async fn set_field(page: &Browser, css: &str, value: &str) {
    let element = page.element(css).await;
    let tag = element.tag_name().await.unwrap().to_lowercase();
    let done = if tag == "select" {
        element.select_by_value(value).await
    } else {
        match element.clear().await {
            Ok(()) => element.send_keys(value).await,
            Err(error) => Err(error),
        }
    };
    if let Err(error) = done {
        match page.fail(&format!("cannot set {css} ({tag}) to {value:?}: {error}")).await {}
    }
}

/// The game ids of the rows the list shows now.
async fn rows(page: &Browser) -> Vec<String> {
    let value =
        page.js("return [...document.querySelectorAll('#lobby-list tr[data-game-id]')].map((r) => r.dataset.gameId);", vec![]).await;
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// Waits until the list, done loading (no `aria-busy`), shows rows other
/// than `before` (after a click or a filter); a page may be empty.
async fn rows_change(page: &Browser, before: &[String], what: &str) -> Vec<String> {
    let value = page
        .wait_js(
            &format!("#lobby-list rows to change ({what})"),
            "const list = document.querySelector('#lobby-list');
             if (!list || list.closest('[aria-busy=true]') || list.querySelector('[aria-busy=true]')) return null;
             const ids = [...list.querySelectorAll('tr[data-game-id]')].map((r) => r.dataset.gameId);
             return JSON.stringify(ids) !== JSON.stringify(arguments[0]) ? ids : null;",
            vec![json!(before)],
        )
        .await;
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// Whether a paging button can be used.
async fn usable(page: &Browser, css: &str) -> bool {
    page.js(
        "const b = document.querySelector(arguments[0]); return !!b && !b.disabled && b.getAttribute('aria-disabled') !== 'true' && b.getClientRects().length > 0;",
        vec![json!(css)],
    )
    .await
        == json!(true)
}

/// Every game the list shows, page after page; checks pages don't overlap.
async fn all_pages(page: &Browser, what: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut shown = page
        .wait_js(
            &format!("#lobby-list rows ({what})"),
            "const ids = [...document.querySelectorAll('#lobby-list tr[data-game-id]')].map((r) => r.dataset.gameId); return ids.length ? ids : null;",
            vec![],
        )
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    let first = shown.clone();
    let mut pages = 1;
    loop {
        if shown.is_empty() {
            // The API pages by `next_after`, given whenever a page is full: a
            // last page may be empty, but then it must be the last.
            assert!(!usable(page, "#next-page").await, "{what}: an empty page {pages} with a #next-page");
            eprintln!("[{}] note: {what}: page {pages} is empty (the page before it was exactly full)", page.test);
        }
        for id in &shown {
            assert!(!seen.contains(id), "{what}: game {id} on two pages");
        }
        seen.extend(shown.iter().cloned());
        if !usable(page, "#next-page").await {
            break;
        }
        page.element("#next-page").await.click().await.unwrap();
        shown = rows_change(page, &shown, &format!("{what}: #next-page to page {}", pages + 1)).await;
        pages += 1;
        assert!(pages < 100, "{what}: #next-page never ends");
    }
    if pages > 1 {
        page.screenshot(&format!("lobby-last-page-{}", what.replace(' ', "-"))).await;
        // Back to the first page.
        for back in (1..pages).rev() {
            assert!(usable(page, "#prev-page").await, "{what}: #prev-page on page {}", back + 1);
            page.element("#prev-page").await.click().await.unwrap();
            shown = rows_change(page, &shown, &format!("{what}: #prev-page to page {back}")).await;
        }
        assert_eq!(shown, first, "{what}: #prev-page back to the first page");
    }
    seen
}

/// The ids of every game the API lists with `query`.
async fn api_ids(t: &Test, query: &str) -> BTreeSet<String> {
    let list = t.get(&format!("/v1/games?limit=1000{query}"), None).await;
    list["games"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap().to_string()).collect()
}

struct NewGame {
    kind: &'static str,
    players: &'static [&'static str],
    first_seat: usize,
    options: &'static [(&'static str, &'static str)],
    /// A custom board file (Kardinal & König), named `BOARD_NAME`.
    board: bool,
}

const BOARD_NAME: &str = "The browser test's board";

/// Creates one game through `form#create-game`; returns its id and seat links.
async fn create_in_lobby(t: &Test, page: &Browser, game: &NewGame, before: &BTreeSet<String>) -> (String, Vec<String>) {
    set_field(page, "#new-kind", game.kind).await;
    // As many name fields as players.
    for _ in 0..12 {
        let count =
            page.js("return document.querySelectorAll('form#create-game .seat-name').length", vec![]).await.as_u64().unwrap() as usize;
        if count == game.players.len() {
            break;
        }
        let button = if count < game.players.len() { "#add-seat" } else { "#remove-seat" };
        page.element(button).await.click().await.unwrap();
        page.wait_js(
            &format!("{button} to change the number of .seat-name fields from {count}"),
            "return document.querySelectorAll('form#create-game .seat-name').length !== arguments[0];",
            vec![json!(count)],
        )
        .await;
    }
    let fields = page.client.find_all(fantoccini::Locator::Css("form#create-game .seat-name")).await.unwrap();
    assert_eq!(fields.len(), game.players.len(), "lobby: .seat-name fields for {}", game.kind);
    for (field, name) in fields.iter().zip(game.players) {
        field.clear().await.unwrap();
        field.send_keys(name).await.unwrap();
    }
    set_field(page, "#first-seat", &game.first_seat.to_string()).await;
    for (css, value) in game.options {
        set_field(page, css, value).await;
    }
    if game.board {
        // The default board under another name, as a file to choose.
        let kinds = t.get("/v1/kinds", None).await;
        let kind = kinds["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == game.kind).unwrap();
        let mut board = kind["default_options"]["board"].clone();
        board["name"] = json!(BOARD_NAME);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("board.json");
        std::fs::write(&file, serde_json::to_vec_pretty(&board).unwrap()).unwrap();
        let input = page.element("#opt-board").await;
        if let Err(error) = input.send_keys(file.to_str().unwrap()).await {
            match page.fail(&format!("cannot choose a board file in #opt-board: {error}")).await {}
        }
        page.wait_js(
            "the form to acknowledge the board file chosen in #opt-board (its name shown)",
            "const f = document.querySelector('form#create-game'); return f && f.textContent.includes(arguments[0]);",
            vec![json!(BOARD_NAME)],
        )
        .await;
    }
    page.screenshot(&format!("lobby-form-{}", game.kind)).await;
    page.element("#create-submit").await.click().await.unwrap();
    // A seat the server's bot plays gets no token, so no link: only people's seats have one.
    let people: Vec<usize> = (0..game.players.len())
        .filter(|i| !game.options.iter().any(|(css, level)| *css == format!("#seat-bot-{i}") && !level.is_empty() && *level != "open"))
        .collect();
    let created = page
        .wait_js(
            &format!("#created with {} a.seat-link[data-seat] and a#watch-link for a new {} game", people.len(), game.kind),
            "const c = document.querySelector('#created'); const w = c && c.querySelector('a#watch-link') || document.querySelector('a#watch-link');
             if (!c || !w) return null;
             const m = w.href.match(/\\/games\\/([^/?#]+)\\/watch/); if (!m || arguments[0].includes(m[1])) return null;
             const seats = [...c.querySelectorAll('a.seat-link[data-seat]')].map((a) => [a.dataset.seat, a.href]);
             return seats.length === arguments[1] ? {id: m[1], watch: w.href, seats} : null;",
            vec![json!(before), json!(people.len())],
        )
        .await;
    page.screenshot(&format!("lobby-created-{}", game.kind)).await;
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["watch"].as_str().unwrap(), format!("{}/games/{id}/watch", t.base()));
    let heading = page.js("return document.querySelector('#created h3').textContent;", vec![]).await;
    for (i, name) in game.players.iter().enumerate() {
        let shown = if people.contains(&i) { (*name).to_string() } else { format!("{name} (computer)") };
        assert!(heading.as_str().unwrap().contains(&shown), "lobby: #created names seat {i} as {shown:?}: {heading}");
    }
    let mut links = Vec::new();
    for (&i, seat) in people.iter().zip(created["seats"].as_array().unwrap()) {
        assert_eq!(seat[0], json!(i.to_string()), "lobby: the seat links are people's seats, in seat order");
        let href = seat[1].as_str().unwrap();
        let token = href
            .strip_prefix(&format!("{}/games/{id}/play#token=", t.base()))
            .unwrap_or_else(|| panic!("lobby: a seat link is /games/{id}/play#token=…: {href}"));
        // The token is the seat's: it sees the game as that seat.
        let state = t.get(&format!("/v1/games/{id}"), Some(token)).await;
        assert_eq!(state["viewer_seat"], json!(i), "lobby: the token of seat link {i}");
        links.push(href.to_string());
    }
    (id, links)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_creates_every_kind_and_lists_filters_and_pages_games() {
    let Some(t) = Test::start("lobby", &[]) else { return };
    // Games made elsewhere: some finished, enough of them to need pages.
    for _ in 0..3 {
        let game = t.create(json!({"kind": "cardinal", "players": ["Fin", "Ish"]})).await;
        play_out(&t.http, t.base(), &game).await;
    }
    for i in 0..57 {
        let kind = ["cardinal", "kardinal", "battle13"][i % 3];
        let players: &[&str] = match kind {
            "cardinal" => &["A1", "B1"],
            "kardinal" => &["A2", "B2", "C2"],
            _ => &["A3", "B3", "C3", "D3"],
        };
        t.create(json!({"kind": kind, "players": players})).await;
    }

    let page = t.browser("lobby").await;
    page.goto("/").await;
    page.element("form#create-game").await;
    page.screenshot("lobby").await;
    let games = [
        NewGame { kind: "cardinal", players: &["Ann", "Bob", "Cid"], first_seat: 1, options: &[], board: false },
        NewGame {
            kind: "kardinal",
            players: &["Ann", "Bob", "Cid", "Dee"],
            first_seat: 2,
            options: &[("#opt-variant", "dynamic")],
            board: true,
        },
        NewGame {
            kind: "battle13",
            players: &["Ann", "Bob", "Cid", "Dee"],
            first_seat: 3,
            // Two seats the server's bots play, chosen per seat.
            options: &[("#opt-target", "50"), ("#seat-bot-1", "strong"), ("#seat-bot-3", "random")],
            board: false,
        },
    ];
    let mut made = Vec::new();
    for game in &games {
        let before = api_ids(&t, "").await;
        let (id, links) = create_in_lobby(&t, &page, game, &before).await;
        let state = t.get(&format!("/v1/games/{id}"), None).await;
        assert_eq!(state["kind"], game.kind);
        let names: Vec<&str> = state["seats"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, game.players, "lobby: the seat names");
        assert_eq!(state["options"]["first_seat"], json!(game.first_seat), "lobby: #first-seat");
        match game.kind {
            "kardinal" => {
                assert_eq!(state["options"]["variant"], "dynamic", "lobby: #opt-variant");
                assert_eq!(state["options"]["board"]["name"], BOARD_NAME, "lobby: the board file chosen in #opt-board");
            }
            "battle13" => {
                assert_eq!(state["options"]["target_crowns"], 50, "lobby: #opt-target");
                let bots: Vec<&serde_json::Value> = state["seats"].as_array().unwrap().iter().map(|s| &s["bot"]["level"]).collect();
                assert_eq!(bots, [&json!(null), &json!("strong"), &json!(null), &json!("random")], "lobby: .seat-bot");
            }
            _ => {}
        }
        made.push((id, links));
    }

    // The list: every game, over pages.
    page.goto("/").await;
    let all = api_ids(&t, "").await;
    assert_eq!(all.len(), 63);
    let listed = all_pages(&page, "all games").await;
    assert!(listed.len() == all.len(), "lobby: {} games listed over the pages, the API has {}", listed.len(), all.len());
    assert_eq!(listed.iter().cloned().collect::<BTreeSet<_>>(), all, "lobby: the games listed are the API's");
    let first_page = rows(&page).await;
    assert!(first_page.len() < all.len(), "lobby: 63 games fit on one page, so #next-page was never tried");
    for (id, _) in &made {
        assert!(listed.contains(id), "lobby: the game made in the lobby ({id}) is listed");
    }

    // Filters.
    set_field(&page, "#filter-kind", "kardinal").await;
    rows_change(&page, &first_page, "#filter-kind=kardinal").await;
    let kardinal = all_pages(&page, "kardinal games").await;
    assert_eq!(kardinal.iter().cloned().collect::<BTreeSet<_>>(), api_ids(&t, "&kind=kardinal").await, "lobby: #filter-kind=kardinal");
    page.screenshot("lobby-kardinal").await;
    let before = rows(&page).await;
    set_field(&page, "#filter-kind", "cardinal").await;
    set_field(&page, "#filter-state", "finished").await;
    let finished = page
        .wait_js(
            "#lobby-list to show the 3 finished Cardinal games",
            "const ids = [...document.querySelectorAll('#lobby-list tr[data-game-id]')].map((r) => r.dataset.gameId);
             return (ids.length === 3 && JSON.stringify(ids) !== JSON.stringify(arguments[0])) ? ids : null;",
            vec![json!(before)],
        )
        .await;
    let finished: BTreeSet<String> = finished.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(finished, api_ids(&t, "&kind=cardinal&state=finished").await, "lobby: #filter-state=finished");
    assert!(!usable(&page, "#next-page").await, "lobby: one page of finished games");
    page.screenshot("lobby-finished").await;
    page.close().await;
    t.finish();
}
