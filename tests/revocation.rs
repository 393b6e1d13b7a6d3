//! A seat's eyes go with its hands: once a seat changes hands (its player
//! leaves, its token is renewed, a bot takes it over after a timeout), the
//! old holder's stream tickets open nothing and every stream it opened as
//! the seat (SSE with a ticket or a token, gRPC `WatchGame`, gRPC-Web)
//! ends at once with `seat_revoked`, before anything of the seat's next
//! holder is sent. A resignation, the player's own act, and autopilot, which
//! the player takes back at will, are no change of hands: the player keeps
//! the seat's view, and only its own.

use ludo_blackbox::{GrpcWebStream, Rest, Sse, TestServer, authed, kardinal_leaks};
use ludo_proto::v1 as pb;
use ludo_proto::v1::ludo_client::LudoClient;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic_types::StatusExt;

/// One way of following a game as a seat.
enum Follower {
    /// SSE, with the seat's token in `Authorization` or a stream ticket in the URL.
    Sse(&'static str, Sse),
    /// gRPC `WatchGame` with the seat's token.
    Grpc(tonic::Streaming<pb::GameUpdate>),
    /// gRPC-Web `WatchGame` with the seat's token.
    Web(GrpcWebStream),
}

/// What a follower got next.
#[derive(Debug, PartialEq)]
enum Got {
    /// A record (its seq), and the document as JSON where the transport is JSON.
    Record(u64),
    /// The final `seat_revoked`, naming the seat.
    Revoked(u64),
    /// Anything else: the end of the stream, another status or event.
    Other(String),
}

impl Follower {
    fn name(&self) -> &'static str {
        match self {
            Follower::Sse(how, _) => how,
            Follower::Grpc(_) => "gRPC",
            Follower::Web(_) => "gRPC-Web",
        }
    }

    /// The next item, its JSON document (SSE) checked for other seats' cards
    /// as `seat` may see them, into `leaks`.
    async fn next(&mut self, seat: usize, leaks: &mut Vec<String>) -> Got {
        let revoked = |status: tonic::Status| {
            let info = status.get_details_error_info();
            match (status.code(), info) {
                (tonic::Code::Unauthenticated, Some(info)) if info.reason == "seat_revoked" => {
                    Got::Revoked(info.metadata.get("seat").and_then(|s| s.parse().ok()).unwrap_or(u64::MAX))
                }
                _ => Got::Other(format!("{status:?}")),
            }
        };
        match self {
            Follower::Sse(_, sse) => match sse.next().await {
                Some(event) if event.event == "record" => {
                    leaks.extend(kardinal_leaks(&event.data, Some(seat)));
                    Got::Record(event.data["event"]["seq"].as_u64().unwrap())
                }
                Some(event) if event.event == "seat_revoked" => {
                    assert_eq!(event.data["code"], "seat_revoked", "{:?}", event.data);
                    Got::Revoked(event.data["seat"].as_u64().unwrap())
                }
                other => Got::Other(format!("{other:?}")),
            },
            Follower::Grpc(stream) => match stream.message().await {
                Ok(Some(update)) => Got::Record(update.event.unwrap().seq),
                Ok(None) => Got::Other("the end".into()),
                Err(status) => revoked(status),
            },
            Follower::Web(stream) => match stream.next::<pb::GameUpdate>().await {
                Some(Ok(update)) => Got::Record(update.event.unwrap().seq),
                Some(Err(status)) => revoked(status),
                None => Got::Other("the end".into()),
            },
        }
    }
}

/// The game's version.
async fn version(rest: &Rest, id: &str) -> u64 {
    rest.get(&format!("/v1/games/{id}"), None).await.body["version"].as_u64().unwrap()
}

/// A stream ticket for the seat of `token`.
async fn ticket(rest: &Rest, id: &str, token: &str) -> String {
    let answer = rest.post(&format!("/v1/games/{id}/stream-tickets"), Some(token), &json!({})).await;
    assert_eq!(answer.status, 201, "{answer:?}");
    answer.body["ticket"].as_str().unwrap().to_string()
}

/// The four ways of following game `id` as the seat of `token` (SSE with
/// `ticket` and with the token, gRPC and gRPC-Web with the token), each
/// read up to the game's version `upto`.
async fn follow(server: &TestServer, grpc: &mut LudoClient<Channel>, id: &str, (token, ticket): (&str, &str), upto: u64) -> Vec<Follower> {
    let rest = server.rest();
    let request = pb::WatchGameRequest { id: id.to_string(), from: 0 };
    let mut followers = vec![
        Follower::Sse("SSE with a ticket", rest.sse(&format!("/v1/games/{id}/stream?ticket={ticket}"), None, None).await),
        Follower::Sse("SSE with a token", rest.sse(&format!("/v1/games/{id}/stream"), Some(token), None).await),
        Follower::Grpc(grpc.watch_game(authed(request.clone(), token)).await.expect("a stream").into_inner()),
        Follower::Web(GrpcWebStream::open(&server.base, "/ludo.v1.Ludo/WatchGame", Some(token), &request).await),
    ];
    for follower in &mut followers {
        for seq in 0..=upto {
            assert_eq!(follower.next(usize::MAX, &mut Vec::new()).await, Got::Record(seq), "{}", follower.name());
        }
    }
    followers
}

/// Each follower's next item is `seat_revoked` for `seat`, then nothing.
async fn all_revoked(followers: &mut [Follower], seat: u64, why: &str) {
    for follower in followers {
        assert_eq!(follower.next(seat as usize, &mut Vec::new()).await, Got::Revoked(seat), "{why}: {}", follower.name());
        if let Follower::Sse(_, sse) = follower {
            assert!(sse.next().await.is_none(), "{why}: the stream ends after seat_revoked");
        }
    }
}

/// The problem a stream request with `ticket` gets.
async fn ticket_refused(rest: &Rest, id: &str, ticket: &str) -> Value {
    let answer = rest.get(&format!("/v1/games/{id}/stream?ticket={ticket}"), None).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    answer.body
}

/// The reproduction: in a public Kardinal & König game, Mallory
/// joins seat 1, takes a stream ticket, opens streams, and leaves; Bea
/// joins seat 1 and the game starts. Mallory's streams ended when she
/// left, and her ticket never opens Bea's seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_left_keeps_no_eyes_on_the_next_player_s_hand() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut grpc = server.grpc().await;
    let body = json!({"kind": "kardinal", "players": ["Ann", null, null], "public": true, "options": {"first_seat": 0}});
    let game = rest.post("/v1/games", None, &body).await.body;
    let id = game["id"].as_str().unwrap();
    let joined = rest.post(&format!("/v1/games/{id}/join"), None, &json!({"name": "Mallory", "seat": 1})).await;
    assert_eq!(joined.status, 200, "{joined:?}");
    let mallory = joined.body["token"].as_str().unwrap().to_string();
    let old = ticket(&rest, id, &mallory).await;
    let mut followers = follow(&server, &mut grpc, id, (&mallory, &old), 1).await;

    assert_eq!(rest.post(&format!("/v1/games/{id}/leave"), Some(&mallory), &json!({})).await.status, 200);
    all_revoked(&mut followers, 1, "she left").await;
    assert_eq!(ticket_refused(&rest, id, &old).await["code"], "seat_revoked");
    assert_eq!(rest.get(&format!("/v1/games/{id}"), Some(&mallory)).await.status, 401);

    let bea = rest.post(&format!("/v1/games/{id}/join"), None, &json!({"name": "Bea", "seat": 1})).await.body;
    let cid = rest.post(&format!("/v1/games/{id}/join"), None, &json!({"name": "Cid", "seat": 2})).await.body;
    assert_eq!(cid["status"]["state"], "in_progress", "{cid}");
    // Bea's hand is hers; Mallory's ticket and token open nothing of it.
    let seen = rest.get(&format!("/v1/games/{id}"), bea["token"].as_str()).await.body;
    assert!(seen["view"]["seats"][1]["hand"].is_array(), "{seen}");
    let refused = ticket_refused(&rest, id, &old).await;
    assert_eq!((refused["code"].as_str(), refused["seat"].as_u64()), (Some("seat_revoked"), Some(1)), "{refused}");
    assert!(kardinal_leaks(&refused, None).is_empty());
    for how in ["stream", "events?limit=100", "legal-moves"] {
        assert_eq!(rest.get(&format!("/v1/games/{id}/{how}"), Some(&mallory)).await.status, 401, "{how}");
    }
    let status = grpc.watch_game(authed(pb::WatchGameRequest { id: id.to_string(), from: 0 }, &mallory)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    drop(grpc);
    server.stop().await;
}

/// A renewed token (by the admin, for a token it holds; by the seat itself)
/// ends the old token's tickets and streams; the new token's work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_token_ends_the_old_one_s_tickets_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut grpc = server.grpc().await;
    let game = rest.create("kardinal", &["Ann", "Bob", "Cid"], json!({"first_seat": 0})).await;
    let id = game["id"].as_str().unwrap();
    let (bob, admin) = (game["seats"][1]["token"].as_str().unwrap(), game["admin_token"].as_str().unwrap());
    let old = ticket(&rest, id, bob).await;
    let mut followers = follow(&server, &mut grpc, id, (bob, &old), 0).await;

    // The admin renews the token it was handed at creation.
    let renewed = rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(admin), &json!({})).await;
    assert_eq!(renewed.status, 200, "{renewed:?}");
    all_revoked(&mut followers, 1, "the admin renewed the token").await;
    assert_eq!(ticket_refused(&rest, id, &old).await["code"], "seat_revoked");
    // The new token follows the game, until Bob renews it himself.
    let fresh = renewed.body["token"].as_str().unwrap().to_string();
    let fresh_ticket = ticket(&rest, id, &fresh).await;
    let mut followers = follow(&server, &mut grpc, id, (&fresh, &fresh_ticket), 1).await;
    let own = rest.post(&format!("/v1/games/{id}/seats/1/token"), Some(&fresh), &json!({})).await;
    assert_eq!(own.status, 200, "{own:?}");
    all_revoked(&mut followers, 1, "Bob renewed his token").await;
    assert_eq!(ticket_refused(&rest, id, &fresh_ticket).await["code"], "seat_revoked");
    let mine = own.body["token"].as_str().unwrap();
    let mut leaks = Vec::new();
    let mut sse =
        Follower::Sse("SSE", rest.sse(&format!("/v1/games/{id}/stream?ticket={}", ticket(&rest, id, mine).await), None, None).await);
    for seq in 0..=version(&rest, id).await {
        assert_eq!(sse.next(1, &mut leaks).await, Got::Record(seq));
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    drop(grpc);
    server.stop().await;
}

/// Every change of tokens and tickets at one table, and what each old and
/// new credential sees meanwhile: no document any of them receives holds
/// another seat's cards. A timeout takeover ends the seat's streams; a
/// resignation and autopilot do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_every_change_of_hands_no_credential_sees_another_seat_s_cards() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let mut grpc = server.grpc().await;
    let body = json!({
        "kind": "kardinal",
        "players": ["Ann", "Bob", "Cid"],
        "options": {"first_seat": 0},
        "clock": {"move_ms": 1000, "on_timeout": "lose"},
    });
    let game = rest.post("/v1/games", None, &body).await.body;
    let id = game["id"].as_str().unwrap().to_string();
    let token = |seat: usize| game["seats"][seat]["token"].as_str().unwrap().to_string();
    let (ann, bob, cid) = (token(0), token(1), token(2));
    let mut ann_followers = follow(&server, &mut grpc, &id, (&ann, &ticket(&rest, &id, &ann).await), 0).await;
    let mut bob_sse =
        Follower::Sse("Bob's SSE", rest.sse(&format!("/v1/games/{id}/stream?ticket={}", ticket(&rest, &id, &bob).await), None, None).await);
    let mut cid_sse = Follower::Sse("Cid's SSE", rest.sse(&format!("/v1/games/{id}/stream"), Some(&cid), None).await);
    let mut leaks = Vec::new();
    assert_eq!(bob_sse.next(1, &mut leaks).await, Got::Record(0));
    assert_eq!(cid_sse.next(2, &mut leaks).await, Got::Record(0));

    // Bob resigns (a bot plays his seat on); Cid hands his seat to the autopilot.
    assert_eq!(rest.post(&format!("/v1/games/{id}/resign"), Some(&bob), &json!({})).await.status, 200);
    let autopilot = rest.put(&format!("/v1/games/{id}/autopilot"), Some(&cid), &json!({"bot": {"level": "random", "think_ms": 0}})).await;
    assert_eq!(autopilot.status, 200, "{autopilot:?}");
    // Ann lets her time run out: a bot takes her seat over, and her streams end there.
    let mut seq = 2;
    let timeout = loop {
        seq += 1;
        let events = rest.events(&id, None).await;
        if let Some(at) = events.iter().position(|e| e["type"] == "timeout") {
            break at as u64;
        }
        assert!(seq < 200, "Ann never timed out");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    for follower in &mut ann_followers {
        for seq in 1..timeout {
            assert_eq!(follower.next(0, &mut leaks).await, Got::Record(seq), "{}", follower.name());
        }
    }
    all_revoked(&mut ann_followers, 0, "a bot took Ann's seat over").await;
    assert_eq!(rest.get(&format!("/v1/games/{id}"), Some(&ann)).await.status, 401);
    // Bob (resigned) and Cid (on autopilot) follow on, each with his own cards only.
    let later = timeout + 3;
    while version(&rest, &id).await < later {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for (seat, follower) in [(1, &mut bob_sse), (2, &mut cid_sse)] {
        for seq in 1..=later {
            assert_eq!(follower.next(seat, &mut leaks).await, Got::Record(seq), "{}", follower.name());
        }
    }
    let own = rest.get(&format!("/v1/games/{id}"), Some(&bob)).await.body;
    assert_eq!(own["viewer_seat"], 1, "a resigned seat keeps its view");
    assert!(own["view"]["seats"][1]["hand"].is_array(), "{own}");
    leaks.extend(kardinal_leaks(&own, Some(1)));
    // Cid takes his seat back: his stream goes on.
    assert_eq!(rest.delete(&format!("/v1/games/{id}/autopilot"), Some(&cid)).await.status, 200);
    let back = version(&rest, &id).await;
    let mut next = later + 1;
    while next <= back {
        assert_eq!(cid_sse.next(2, &mut leaks).await, Got::Record(next));
        next += 1;
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert!(
        !kardinal_leaks(&rest.get(&format!("/v1/games/{id}"), Some(&cid)).await.body, Some(1)).is_empty(),
        "the leak detector is blind"
    );
    drop(grpc);
    server.stop().await;
}
