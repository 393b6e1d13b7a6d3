//! Hidden information through the service: every read (state, legal moves,
//! the log, the mover's answer, replays) is projected for its caller, and a
//! finished game's whole record is public.

use std::sync::Arc;

use ludo_engine::Status;
use ludo_game::api::{CreateGame, CreatedGame, SubmitMove};
use ludo_game::{GameService, SystemClock};
use ludo_storage::MemoryStore;
use serde_json::{Value, json};

fn service() -> GameService {
    GameService::new(Arc::new(MemoryStore::new()), Arc::new(SystemClock))
}

async fn create(service: &GameService, kind: &str, players: usize) -> CreatedGame {
    let names: Vec<String> = (0..players).map(|i| format!("P{i}")).collect();
    service.create(CreateGame { kind: kind.into(), players: names, options: Some(json!({"first_seat": 0})) }).await.unwrap()
}

fn tok(game: &CreatedGame, seat: usize) -> Option<&str> {
    Some(game.seats[seat].token.as_str())
}

/// Plays up to `moves` moves (xorshift choice); returns the mover's answers.
async fn play(service: &GameService, game: &CreatedGame, moves: usize, mut state: u64) -> Vec<(usize, Value)> {
    let mut answers = Vec::new();
    for _ in 0..moves {
        let current = service.get(&game.id, None).await.unwrap();
        let Status::InProgress { to_move } = current.status else { break };
        let seat = to_move[0].index();
        let legal = service.legal_moves(&game.id, tok(game, seat)).await.unwrap().moves;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mv = legal[(state % legal.len() as u64) as usize].clone();
        let answer = service.submit(&game.id, tok(game, seat), SubmitMove { mv, expected_version: None, request_id: None }).await.unwrap();
        answers.push((seat, serde_json::to_value(answer).unwrap()));
    }
    answers
}

/// Kardinal & König: the private parts a viewer other than `owner` must not see.
fn kardinal_leaks(value: &Value, viewer: Option<usize>, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let owner = map.get("seat").and_then(Value::as_u64).map(|s| s as usize);
            let private = match map.get("type").and_then(Value::as_str) {
                Some("dealt") => map.get("cards"),
                Some("drew_from_deck") => map.get("card"),
                _ if map.contains_key("hand_size") => map.get("hand"),
                _ => None,
            };
            if let Some(private) = private
                && !private.is_null()
                && owner != viewer
            {
                out.push(format!("seat {owner:?}'s private {private} shown to {viewer:?}"));
            }
            if map.get("deck").is_some_and(|deck| !deck.is_null()) {
                out.push(format!("the deck order shown to {viewer:?}"));
            }
            map.values().for_each(|v| kardinal_leaks(v, viewer, out));
        }
        Value::Array(items) => items.iter().for_each(|v| kardinal_leaks(v, viewer, out)),
        _ => {}
    }
}

#[tokio::test]
async fn kardinal_seats_see_only_their_own_hand_everywhere() {
    let service = service();
    let game = create(&service, "kardinal", 5).await;
    let answers = play(&service, &game, 60, 0x9E37).await;
    let mut leaks = Vec::new();
    for (seat, answer) in &answers {
        kardinal_leaks(answer, Some(*seat), &mut leaks);
    }
    for viewer in [None, Some(0), Some(1), Some(2), Some(3), Some(4)] {
        let token = viewer.and_then(|s| tok(&game, s));
        let state = serde_json::to_value(service.get(&game.id, token).await.unwrap()).unwrap();
        kardinal_leaks(&state, viewer, &mut leaks);
        if let Some(seat) = viewer {
            assert!(state["view"]["seats"][seat]["hand"].is_array(), "seat {seat} sees its own hand");
        }
        let events = serde_json::to_value(service.events(&game.id, token, 0, 1000).await.unwrap()).unwrap();
        kardinal_leaks(&events, viewer, &mut leaks);
        for at in [0, 10, 30] {
            let replay = serde_json::to_value(service.replay_at(&game.id, token, at).await.unwrap()).unwrap();
            kardinal_leaks(&replay, viewer, &mut leaks);
        }
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    // A seat sees the cards it was dealt in its own log.
    let events = serde_json::to_value(service.events(&game.id, tok(&game, 2), 0, 1).await.unwrap()).unwrap();
    let dealt = events["events"][0]["effects"].as_array().unwrap().iter().find(|e| e["type"] == "dealt" && e["seat"] == 2).unwrap();
    assert_eq!(dealt["cards"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_finished_kardinal_game_is_public_and_its_seed_re_deals_it() {
    let service = service();
    let game = create(&service, "kardinal", 3).await;
    play(&service, &game, 2000, 0x51).await;
    let state = service.get(&game.id, None).await.unwrap();
    assert!(state.status.is_finished(), "the game ends");
    let view = &state.view;
    for seat in 0..3 {
        assert!(view["seats"][seat]["hand"].is_array(), "hands are public once the game is over");
    }
    let events = service.events(&game.id, None, 0, 1).await.unwrap();
    assert!(events.events[0].effects.iter().filter(|e| e["type"] == "dealt").all(|e| e["cards"].is_array()));
    assert!(state.view["final_scoring"].is_object());
    let seed = state.seed.clone().expect("the seed is published");
    assert_eq!(ludo_game::record::sha256_hex(&hex::decode(seed).unwrap()), game.seed_commitment);
    // The detector used above does see hands when they are shown.
    let mut shown = Vec::new();
    kardinal_leaks(&serde_json::to_value(&state).unwrap(), None, &mut shown);
    assert!(shown.len() >= 3, "the leak detector is blind: {shown:?}");
}

/// Battle 13: knights of a seat not in `allowed` (held, dealt) that show.
fn battle13_leaks(value: &Value, allowed: &[usize], out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let owner = map.get("seat").and_then(Value::as_u64).map(|s| s as usize);
            for key in ["held", "dealt", "knights"] {
                if let (Some(private), Some(owner)) = (map.get(key), owner)
                    && !private.is_null()
                    && !allowed.contains(&owner)
                {
                    out.push(format!("seat {owner}'s {key} {private} shown to a viewer allowed {allowed:?}"));
                }
            }
            map.values().for_each(|v| battle13_leaks(v, allowed, out));
        }
        Value::Array(items) => items.iter().for_each(|v| battle13_leaks(v, allowed, out)),
        _ => {}
    }
}

#[tokio::test]
async fn battle13_knights_stay_hidden_through_the_first_joust() {
    let service = service();
    let game = create(&service, "battle13", 4).await;
    let mut leaks = Vec::new();
    let mut checked_after_lead = false;
    for step in 0..200u64 {
        let state = serde_json::to_value(service.get(&game.id, None).await.unwrap()).unwrap();
        let joust = &state["view"]["joust"];
        if joust["number"] != 1 || state["status"]["state"] == "finished" {
            break;
        }
        // Once the servant's knights are public (B13-18) they may show to all.
        let servant = (joust["servant_public"] == true).then(|| joust["contract"]["servant"].as_u64().unwrap() as usize);
        checked_after_lead |= servant.is_some();
        for viewer in [None, Some(0), Some(1), Some(2), Some(3)] {
            let allowed: Vec<usize> = viewer.into_iter().chain(servant).collect();
            let token = viewer.and_then(|s| tok(&game, s));
            let seen = serde_json::to_value(service.get(&game.id, token).await.unwrap()).unwrap();
            battle13_leaks(&seen["view"]["joust"], &allowed, &mut leaks);
            let events = serde_json::to_value(service.events(&game.id, token, 0, 1000).await.unwrap()).unwrap();
            battle13_leaks(&events, &allowed, &mut leaks);
            if let Some(seat) = viewer {
                assert!(seen["view"]["joust"]["hands"][seat]["held"].is_array(), "seat {seat} sees its own knights");
            }
        }
        if play(&service, &game, 1, 77 + step).await.is_empty() {
            break;
        }
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert!(checked_after_lead, "the joust reached its tournaments");
    // The detector does see a hand that is shown: each seat's own.
    let own = serde_json::to_value(service.get(&game.id, tok(&game, 0)).await.unwrap()).unwrap();
    let mut shown = Vec::new();
    battle13_leaks(&own["view"]["joust"], &[], &mut shown);
    assert!(!shown.is_empty(), "the leak detector is blind");
}

#[tokio::test]
async fn a_battle13_match_plays_to_its_target_through_the_service() {
    let service = service();
    let game = create(&service, "battle13", 4).await;
    play(&service, &game, 5000, 0xB13).await;
    let state = service.get(&game.id, None).await.unwrap();
    let Status::Finished { result } = &state.status else { panic!("the match ends") };
    assert_eq!(result.winners.len(), 2, "a camp of two wins");
    assert!(result.scores.iter().any(|&s| s >= 20), "someone reached the target: {:?}", result.scores);
    // Every past version replays.
    for at in [0, state.version / 2, state.version] {
        service.replay_at(&game.id, None, at).await.unwrap();
    }
}
