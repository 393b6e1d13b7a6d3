//! Listing games reads the `games` projection, folded from the store's
//! feed: a filtered listing loads no game, whatever it matches, the
//! summaries the store keeps beside the logs are not read, and a game just
//! created is listed at once.

use ludo_blackbox::{Rest, TestServer, chooser, tamper};
use serde_json::{Value, json};

async fn metric(rest: &Rest, name: &str) -> f64 {
    let (_, bytes) = rest.get_bytes("/metrics", None).await;
    let text = String::from_utf8(bytes).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name}"))
        .trim()
        .parse()
        .unwrap()
}

async fn all_games(rest: &Rest, query: &str) -> Vec<Value> {
    let mut games = Vec::new();
    let mut after = String::new();
    loop {
        let page = rest.get(&format!("/v1/games?limit=7{query}{after}"), None).await;
        assert_eq!(page.status, 200, "{page:?}");
        games.extend(page.body["games"].as_array().unwrap().iter().cloned());
        match page.body["next_after"].as_str() {
            Some(next) => after = format!("&after={next}"),
            None => return games,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_reads_the_games_projection_not_logs() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut ids = Vec::new();
    for (kind, players, count) in
        [("cardinal", vec!["Ann", "Bob"], 6), ("kardinal", vec!["Ann", "Bob", "Cid"], 3), ("battle13", vec!["N", "E", "S", "W"], 3)]
    {
        for n in 0..count {
            let game = rest.create(kind, &players, json!({})).await;
            if kind == "cardinal" && n < 2 {
                rest.play(&game, 500, chooser(n)).await; // finished
            } else {
                rest.play(&game, 5, chooser(n)).await;
            }
            ids.push(game["id"].as_str().unwrap().to_string());
        }
    }
    // What each game says of itself.
    let mut expected = Vec::new();
    for id in &ids {
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        let finished = state["status"]["state"] == "finished";
        let last_at = rest.events(id, None).await.last().unwrap()["at"].clone();
        expected.push(json!({
            "id": id, "kind": state["kind"], "seats": state["seats"], "version": state["version"], "status": state["status"],
            "created_at": state["created_at"], "finished_at": if finished { last_at } else { Value::Null },
        }));
    }
    let normalise = |games: Vec<Value>| -> Vec<Value> {
        games
            .into_iter()
            .map(|mut g| {
                g.as_object_mut().unwrap().entry("finished_at").or_insert(Value::Null);
                g
            })
            .collect()
    };
    assert_eq!(normalise(all_games(&rest, "").await), expected, "the listing says what each game says");
    let finished: Vec<Value> = expected.iter().filter(|g| g["status"]["state"] == "finished").cloned().collect();
    assert_eq!(finished.len(), 2);
    assert_eq!(normalise(all_games(&rest, "&state=finished").await), finished);
    assert_eq!(all_games(&rest, "&kind=kardinal").await.len(), 3);
    server.stop().await;

    // The summaries the store keeps beside the logs are not what a listing
    // reads: with four of them gone, a restarted server lists the same
    // games, from the projection, and loads none of them to do it.
    let without: Vec<&str> = ids[3..7].iter().map(String::as_str).collect();
    tamper::forget_summaries(dir.path(), &without);
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    assert_eq!(all_games(&rest, "&kind=battle13&state=finished").await, Vec::<Value>::new());
    assert_eq!(normalise(all_games(&rest, "").await), expected, "listed from the games projection");
    assert_eq!(metric(&rest, "ludo_live_games").await, 0.0, "no game was loaded to be listed");
    // A listing right after a create shows it (it waits for the projection).
    let game = rest.create("cardinal", &["Ann", "Bob"], json!({})).await;
    let listed = all_games(&rest, "").await;
    assert_eq!(listed.len(), ids.len() + 1);
    assert_eq!(listed.last().unwrap()["id"], game["id"], "the game just created is listed");
    server.stop().await;
}
