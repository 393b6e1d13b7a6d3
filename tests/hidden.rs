//! Hidden information over REST: every read (state, legal moves, the log,
//! the mover's answer, replays, steps) is projected for its caller, and a
//! finished game's whole record is public.

use ludo_blackbox::{Rest, TestServer, battle13_leaks, chooser, kardinal_leaks};
use serde_json::{Value, json};

fn token(game: &Value, seat: usize) -> Option<&str> {
    game["seats"][seat]["token"].as_str()
}

/// Plays one move by the seat to move; returns its seat and the answer.
async fn step(rest: &Rest, game: &Value, choose: &mut impl FnMut(&[Value]) -> usize) -> Option<(usize, Value)> {
    let id = game["id"].as_str().unwrap();
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    if state["status"]["state"] == "finished" {
        return None;
    }
    let seat = state["status"]["to_move"][0].as_u64().unwrap() as usize;
    let moves = rest.get(&format!("/v1/games/{id}/legal-moves"), token(game, seat)).await.body["moves"].as_array().unwrap().clone();
    let answer = rest.post(&format!("/v1/games/{id}/moves"), token(game, seat), &json!({"move": moves[choose(&moves)]})).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    Some((seat, answer.body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kardinal_seats_see_only_their_own_hand_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid", "Dee", "Eve"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let mut choose = chooser(0x9E37);
    let mut leaks = Vec::new();
    for _ in 0..60 {
        let (seat, answer) = step(&rest, &game, &mut choose).await.expect("the game runs");
        leaks.extend(kardinal_leaks(&answer, Some(seat)));
    }
    for viewer in [None, Some(0), Some(1), Some(2), Some(3), Some(4)] {
        let t = viewer.and_then(|s| token(&game, s));
        let state = rest.get(&format!("/v1/games/{id}"), t).await.body;
        leaks.extend(kardinal_leaks(&state, viewer));
        if let Some(seat) = viewer {
            assert!(state["view"]["seats"][seat]["hand"].is_array(), "seat {seat} sees its own hand");
        }
        for page in ["events", "steps"] {
            leaks.extend(kardinal_leaks(&rest.get(&format!("/v1/games/{id}/{page}?limit=1000"), t).await.body, viewer));
        }
        for at in [0, 10, 30] {
            leaks.extend(kardinal_leaks(&rest.get(&format!("/v1/games/{id}/replay?at={at}"), t).await.body, viewer));
        }
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    // A seat sees the cards it was dealt in its own log.
    let events = rest.get(&format!("/v1/games/{id}/events?limit=1"), token(&game, 2)).await.body;
    let dealt = events["events"][0]["effects"].as_array().unwrap().iter().find(|e| e["type"] == "dealt" && e["seat"] == 2).unwrap().clone();
    assert_eq!(dealt["cards"].as_array().unwrap().len(), 3);
    // A spectator's steps say a card was drawn, never which.
    let steps = rest.get(&format!("/v1/games/{id}/steps?limit=1000"), None).await.body.to_string();
    assert!(steps.contains("drew a card from the deck"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_kardinal_game_is_public_and_its_seed_re_deals_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({})).await;
    let id = game["id"].as_str().unwrap();
    rest.play(&game, 3000, chooser(0x51)).await;
    let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
    assert_eq!(state["status"]["state"], "finished");
    for seat in 0..3 {
        assert!(state["view"]["seats"][seat]["hand"].is_array(), "hands are public once the game is over");
    }
    let events = rest.get(&format!("/v1/games/{id}/events?limit=1"), None).await.body;
    assert!(events["events"][0]["effects"].as_array().unwrap().iter().filter(|e| e["type"] == "dealt").all(|e| e["cards"].is_array()));
    // The detector used above does see hands when they are shown.
    assert!(kardinal_leaks(&state, None).len() >= 3, "the leak detector is blind");
    let seed = hex::decode(state["seed"].as_str().unwrap()).unwrap();
    assert_eq!(ludo_record::record::sha256_hex(&seed), game["seed_commitment"].as_str().unwrap());
    server.stop().await;
}

/// The log without the `dealt` effects of deals other than the current one:
/// a deal voided because nobody opened (B13-9) or everyone passed (B13-13)
/// is over, so its hands are public (the redeal reshuffles the whole bag).
fn current_deal_only(mut events: Value, joust: &Value, deal: &Value) -> Value {
    for event in events["events"].as_array_mut().unwrap() {
        event["effects"].as_array_mut().unwrap().retain(|e| e["type"] != "dealt" || (e["joust"] == *joust && e["deal"] == *deal));
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn battle13_knights_stay_hidden_through_the_first_joust() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let game = rest.create("battle13", &["North", "East", "South", "West"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let mut choose = chooser(77);
    let mut leaks = Vec::new();
    let mut checked_after_lead = false;
    loop {
        let state = rest.get(&format!("/v1/games/{id}"), None).await.body;
        let joust = &state["view"]["joust"];
        if joust["number"] != 1 || state["status"]["state"] == "finished" {
            break;
        }
        // Once the servant's knights are public (B13-18) they may show to all.
        let servant = (joust["servant_public"] == true).then(|| joust["contract"]["servant"].as_u64().unwrap() as usize);
        checked_after_lead |= servant.is_some();
        for viewer in [None, Some(0), Some(1), Some(2), Some(3)] {
            let allowed: Vec<usize> = viewer.into_iter().chain(servant).collect();
            let t = viewer.and_then(|s| token(&game, s));
            let seen = rest.get(&format!("/v1/games/{id}"), t).await.body;
            leaks.extend(battle13_leaks(&seen["view"]["joust"], &allowed));
            let events = rest.get(&format!("/v1/games/{id}/events?limit=1000"), t).await.body;
            leaks.extend(battle13_leaks(&current_deal_only(events, &joust["number"], &joust["deal"]), &allowed));
            if let Some(seat) = viewer {
                assert!(seen["view"]["joust"]["hands"][seat]["held"].is_array(), "seat {seat} sees its own knights");
            }
        }
        if step(&rest, &game, &mut choose).await.is_none() {
            break;
        }
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert!(checked_after_lead, "the joust reached its tournaments");
    let own = rest.get(&format!("/v1/games/{id}"), token(&game, 0)).await.body;
    assert!(!battle13_leaks(&own["view"]["joust"], &[]).is_empty(), "the leak detector is blind");
    server.stop().await;
}

/// What seat `s` knows (`GET /v1/games/{id}/info`) holds its own hand as it
/// is, and the hands it has not seen in canonical places, not where they
/// are. At the deal, the hand seat `s`'s information set shows for another
/// seat is compared with that seat's real hand (each seat's own information
/// set shows its real hand). If the server sent the full state they would
/// be equal every time. Placed canonically, they are equal by chance only:
/// in Battle 13 (13 of 39 unseen knights) never in practice, so every pair
/// must differ; in Kardinal & König (3-card hands of 5 kinds) often enough
/// that only the share of equal pairs is bounded, well below all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seats_information_set_holds_no_other_seats_hand() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    for (kind, players, hands, games) in [("battle13", 4, "/game/joust/held", 5), ("kardinal", 5, "/game/hands", 20)] {
        let (mut pairs, mut equal) = (0, 0);
        for _ in 0..games {
            let names: Vec<String> = (0..players).map(|i| format!("P{i}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let game = rest.create(kind, &names, json!({})).await;
            let id = game["id"].as_str().unwrap();
            let mut infos = Vec::new();
            for seat in 0..players {
                let known = rest.get(&format!("/v1/games/{id}/info"), token(&game, seat)).await;
                assert_eq!(known.status, 200, "{known:?}");
                assert_eq!((known.body["seat"].as_u64(), known.body["version"].as_u64()), (Some(seat as u64), Some(0)));
                infos.push(known.body["info"].pointer(hands).unwrap_or_else(|| panic!("{kind}: no {hands}")).clone());
            }
            for (seat, held) in infos.iter().enumerate() {
                let own = &infos[seat][seat];
                assert!(own.as_array().is_some_and(|cards| !cards.is_empty()), "{kind}: seat {seat} holds its hand: {own}");
                for (other, theirs) in infos.iter().enumerate().filter(|&(other, _)| other != seat) {
                    pairs += 1;
                    equal += usize::from(held[other] == theirs[other]);
                }
            }
            // Without a seat's token there is no seat to know for.
            assert_eq!(rest.get(&format!("/v1/games/{id}/info"), None).await.body["code"], "unauthorized");
        }
        eprintln!("{kind}: {equal} of {pairs} hands shown to another seat were the real one");
        match kind {
            "battle13" => assert_eq!(equal, 0, "battle13: a seat's information showed another seat's real hand"),
            _ => assert!(equal * 2 < pairs, "{kind}: {equal} of {pairs} hands shown to other seats were the real ones"),
        }
    }
    server.stop().await;
}
