//! Durable moves under load: N concurrent Cardinal games, each client
//! submitting its game's moves one after another (a new game when one ends),
//! over REST or over gRPC.
//!
//! A Cardinal game with a fixed first seat does not depend on its seed, so
//! every game's moves are computed up front with the engine, and encoded for
//! both transports before any clock starts: the timed path is exactly
//! "submit a move and wait until it is durable".

use std::sync::Arc;
use std::time::{Duration, Instant};

use ludo_engine::{Engine, Seat, Seed, Setup, Status};
use ludo_proto::codec::StrictCodec;
use ludo_proto::v1 as pb;
use serde::Serialize;
use serde_json::json;
use tonic::codegen::http::uri::PathAndQuery;

use crate::server::{Cpu, Server, checked};

/// Seats of every load game.
const PLAYERS: usize = 4;

/// Distinct games the clients cycle through.
const PLAYOUTS: usize = 64;

/// Clients sharing one HTTP/2 connection over gRPC. One connection is served
/// by one server task and carries at most 100 calls at once (the server's
/// `--h2-max-streams`), so one channel for 256 clients would measure the
/// connection, not the server: the clients are spread over several channels,
/// as a real client's pool would do.
const GRPC_CLIENTS_PER_CHANNEL: usize = 8;

/// What the gRPC load clients decode of a move's answer (`MoveAccepted`):
/// whether it carries a view, whose bytes are kept as they came. The REST
/// clients read each answer's bytes without parsing them, so decoding the
/// whole answer into prost's types here (the view's every building and
/// cell) would charge the gRPC phase with client work the REST phase does
/// not do, on the two cores the server shares with the clients. Every
/// other field is skipped by its length.
#[derive(Clone, PartialEq, prost::Message)]
struct AnswerHead {
    #[prost(bytes = "bytes", optional, tag = "4")]
    view: Option<bytes::Bytes>,
}

/// The path of `ludo.v1.Ludo/SubmitMove`, called with [`AnswerHead`] as
/// the answer's type.
const SUBMIT_MOVE: &str = "/ludo.v1.Ludo/SubmitMove";

/// What the load clients ask each move's answer to carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answers {
    /// The whole answer, the view of the game included (the default).
    Full,
    /// Without the view: REST `Prefer: return=minimal`, gRPC `omit_view`.
    Minimal,
}

/// Which replica each move of a game goes to, with several replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// Each move to the next replica in turn, as a load balancer without
    /// stickiness would send them: every move lands on a replica that did
    /// not make the one before (the worst case for a replica's cache).
    Alternating,
    /// Every move of a game to the replica it was created on, as a load
    /// balancer routing by game would send them.
    ByGame,
}

/// One move, ready for either transport.
struct PlannedMove {
    seat: usize,
    /// `{"move": …}`, the REST body (cloned per request without a copy).
    rest_body: bytes::Bytes,
    /// The same move as a gRPC message.
    grpc: pb::Move,
}

/// A whole game's moves.
pub struct Playout {
    moves: Vec<PlannedMove>,
}

/// `PLAYOUTS` random whole Cardinal games of `PLAYERS` seats, first seat 0.
pub fn playouts() -> Vec<Arc<Playout>> {
    (0..PLAYOUTS as u64).map(|salt| Arc::new(playout(salt))).collect()
}

fn playout(salt: u64) -> Playout {
    let setup = Setup { players: PLAYERS, options: ludo_cardinal::Options { first_seat: Some(Seat(0)) }, seed: Seed([0; 32]) };
    let (mut game, _) = ludo_cardinal::Game::new(&setup).expect("a Cardinal game of 4 seats sets up");
    // xorshift: which legal move each turn, reproducibly.
    let mut state = (salt + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut moves = Vec::new();
    while let Status::InProgress { to_move } = game.status() {
        let seat = to_move[0];
        let legal = game.legal_moves(seat);
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mv = legal[(state % legal.len() as u64) as usize].clone();
        game.apply(seat, &mv).expect("a listed legal move is accepted");
        let body = serde_json::to_vec(&json!({ "move": mv })).expect("moves serialize");
        moves.push(PlannedMove {
            seat: seat.index(),
            rest_body: body.into(),
            grpc: pb::Move { game: Some(pb::r#move::Game::Cardinal(to_proto(&mv))) },
        });
    }
    Playout { moves }
}

/// What one timed phase measured.
#[derive(Clone, Serialize)]
pub struct MoveRun {
    /// Concurrent games (clients).
    pub concurrency: usize,
    /// Moves accepted (each durable when answered).
    pub moves: usize,
    /// Games created during the phase.
    pub games: usize,
    /// Accepted moves per second of wall time.
    pub moves_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Server CPU (user + system) per accepted move, game creations included.
    pub server_cpu_us_per_move: f64,
    /// The whole machine's CPU per accepted move: the server's, the load
    /// clients', the kernel's, anything else running.
    pub machine_cpu_us_per_move: f64,
    /// Answers that came without the view (with [`Answers::Minimal`], every
    /// one if the server honours the request; an older build sends views).
    pub answers_without_view: usize,
}

/// What one timed run of clients measured, before it is summed up: a
/// phase may be run in parts (see [`rest_and_grpc`]).
struct Part {
    measured: Measured,
    elapsed: Duration,
    cpu: Cpu,
}

/// The figures of `parts` taken together, as one phase of `concurrency` clients.
fn summarize(concurrency: usize, parts: Vec<Part>) -> MoveRun {
    let (mut all, mut elapsed) = (Measured::default(), Duration::ZERO);
    let mut cpu = Cpu { servers: Duration::ZERO, machine: Duration::ZERO };
    for part in parts {
        all.latencies.extend(part.measured.latencies);
        all.games += part.measured.games;
        all.without_view += part.measured.without_view;
        elapsed += part.elapsed;
        cpu.servers += part.cpu.servers;
        cpu.machine += part.cpu.machine;
    }
    let Measured { mut latencies, games, without_view } = all;
    latencies.sort_unstable();
    let moves = latencies.len();
    MoveRun {
        concurrency,
        moves,
        games,
        moves_per_s: moves as f64 / elapsed.as_secs_f64(),
        p50_ms: percentile_ms(&latencies, 0.50),
        p99_ms: percentile_ms(&latencies, 0.99),
        server_cpu_us_per_move: cpu.servers.as_secs_f64() * 1e6 / moves as f64,
        machine_cpu_us_per_move: cpu.machine.as_secs_f64() * 1e6 / moves as f64,
        answers_without_view: without_view,
    }
}

/// N concurrent games over REST, then over gRPC, each for `seconds` in
/// two halves run in the order REST, gRPC, gRPC, REST. Run one after the
/// other, the second transport always met the machine later in the run
/// (the store grown by the first, the machine in another state): two runs
/// each way at N=64 gave gRPC 0.96–0.98× REST's moves/s when REST went
/// first and 0.98–0.99× when gRPC did. In halves, each transport's figures
/// are centred on the same moment.
///
/// # Errors
/// When a request or a call fails, or a computed legal move is refused.
pub async fn rest_and_grpc(
    server: &Server,
    playouts: &[Arc<Playout>],
    clients: usize,
    seconds: Duration,
    answers: Answers,
) -> Result<(MoveRun, MoveRun), String> {
    let half = seconds / 2;
    let rest_first = rest_part(&[server], Routing::ByGame, playouts, clients, half, answers).await?;
    let grpc_first = grpc_part(server, playouts, clients, half, answers).await?;
    let grpc_second = grpc_part(server, playouts, clients, half, answers).await?;
    let rest_second = rest_part(&[server], Routing::ByGame, playouts, clients, half, answers).await?;
    Ok((summarize(clients, vec![rest_first, rest_second]), summarize(clients, vec![grpc_first, grpc_second])))
}

/// The `p` quantile (0 to 1) of sorted latencies, in ms (NaN when empty).
pub fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

/// What the clients of a phase saw, together or each.
#[derive(Default)]
struct Measured {
    /// Each accepted move's time from sending to its whole answer.
    latencies: Vec<Duration>,
    /// Games created.
    games: usize,
    /// Answers without a view.
    without_view: usize,
}

async fn collect(tasks: Vec<tokio::task::JoinHandle<Result<Measured, String>>>) -> Result<Measured, String> {
    let mut all = Measured::default();
    for task in tasks {
        let mine = task.await.map_err(|e| format!("a load client failed: {e}"))??;
        all.latencies.extend(mine.latencies);
        all.games += mine.games;
        all.without_view += mine.without_view;
    }
    Ok(all)
}

/// N concurrent games over REST, one keep-alive client shared by all.
///
/// # Errors
/// When a request fails or a computed legal move is refused.
pub async fn rest(
    server: &Server,
    playouts: &[Arc<Playout>],
    clients: usize,
    seconds: Duration,
    answers: Answers,
) -> Result<MoveRun, String> {
    rest_on(&[server], Routing::ByGame, playouts, clients, seconds, answers).await
}

/// [`rest`] against several replicas of one store: each client creates its
/// games on one replica, and sends their moves as `routing` says. The CPU
/// figure is the replicas' total.
///
/// # Errors
/// As [`rest`].
pub async fn rest_on(
    servers: &[&Server],
    routing: Routing,
    playouts: &[Arc<Playout>],
    clients: usize,
    seconds: Duration,
    answers: Answers,
) -> Result<MoveRun, String> {
    Ok(summarize(clients, vec![rest_part(servers, routing, playouts, clients, seconds, answers).await?]))
}

/// [`rest_on`], its figures not yet summed up.
async fn rest_part(
    servers: &[&Server],
    routing: Routing,
    playouts: &[Arc<Playout>],
    clients: usize,
    seconds: Duration,
    answers: Answers,
) -> Result<Part, String> {
    let bases: Vec<String> = servers.iter().map(|s| s.base.clone()).collect();
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build().map_err(|e| format!("cannot build a client: {e}"))?;
    let create_body: bytes::Bytes =
        serde_json::to_vec(&json!({"kind": "cardinal", "players": ["A", "B", "C", "D"], "options": {"first_seat": 0}}))
            .expect("JSON serializes")
            .into();
    let cpu_before = Cpu::of(servers)?;
    let started = Instant::now();
    let deadline = started + seconds;
    let mut tasks = Vec::with_capacity(clients);
    for client in 0..clients {
        let (http, bases, create_body) = (http.clone(), bases.clone(), create_body.clone());
        let playouts = playouts.to_vec();
        tasks.push(tokio::spawn(async move {
            let Measured { mut latencies, mut games, mut without_view } = Measured::default();
            let mut sent_moves = 0;
            'games: while Instant::now() < deadline {
                let base = &bases[client % bases.len()];
                let created = http
                    .post(format!("{base}/v1/games"))
                    .header("content-type", "application/json")
                    .body(create_body.clone())
                    .send()
                    .await
                    .map_err(|e| format!("create: {e}"))?;
                let created: serde_json::Value =
                    checked(created, "a Cardinal game was not created").await?.json().await.map_err(|e| e.to_string())?;
                games += 1;
                let id = created["id"].as_str().ok_or("no game id")?.to_string();
                let tokens: Vec<String> =
                    (0..PLAYERS).map(|s| format!("Bearer {}", created["seats"][s]["token"].as_str().unwrap_or_default())).collect();
                let urls: Vec<String> = bases.iter().map(|base| format!("{base}/v1/games/{id}/moves")).collect();
                let playout = &playouts[(client + games * 7) % playouts.len()];
                for planned in &playout.moves {
                    if Instant::now() >= deadline {
                        break 'games;
                    }
                    sent_moves += 1;
                    let to = match routing {
                        Routing::Alternating => client + sent_moves,
                        Routing::ByGame => client,
                    };
                    let mut request = http
                        .post(&urls[to % urls.len()])
                        .header("authorization", &tokens[planned.seat])
                        .header("content-type", "application/json")
                        .body(planned.rest_body.clone());
                    if answers == Answers::Minimal {
                        request = request.header("prefer", "return=minimal");
                    }
                    let sent = Instant::now();
                    let answer = request.send().await.map_err(|e| format!("move: {e}"))?;
                    let answer = checked(answer, "a computed legal move was refused").await?;
                    let minimal = answer.headers().get("preference-applied").is_some_and(|v| v == "return=minimal");
                    answer.bytes().await.map_err(|e| format!("move answer: {e}"))?;
                    latencies.push(sent.elapsed());
                    without_view += usize::from(minimal);
                }
            }
            Ok(Measured { latencies, games, without_view })
        }));
    }
    let measured = collect(tasks).await?;
    let elapsed = started.elapsed();
    let cpu = Cpu::of(servers)?.since(cpu_before);
    Ok(Part { measured, elapsed, cpu })
}

/// N concurrent games over gRPC, `GRPC_CLIENTS_PER_CHANNEL` per HTTP/2
/// connection, for `seconds`.
///
/// # Errors
/// When a call fails or a computed legal move is refused.
async fn grpc_part(
    server: &Server,
    playouts: &[Arc<Playout>],
    clients: usize,
    seconds: Duration,
    answers: Answers,
) -> Result<Part, String> {
    let channels = grpc_channels(server, clients).await?;
    let cpu_before = Cpu::of(&[server])?;
    let started = Instant::now();
    let deadline = started + seconds;
    let mut tasks = Vec::with_capacity(clients);
    for client in 0..clients {
        let channel = channels[client % channels.len()].clone();
        let mut ludo = pb::ludo_client::LudoClient::new(channel.clone());
        let mut submit = tonic::client::Grpc::new(channel);
        let playouts = playouts.to_vec();
        tasks.push(tokio::spawn(async move {
            let Measured { mut latencies, mut games, mut without_view } = Measured::default();
            'games: while Instant::now() < deadline {
                let options = pb::Options {
                    game: Some(pb::options::Game::Cardinal(ludo_proto::ludo::cardinal::v1::Options { first_seat: Some(0) })),
                };
                let players = ["A", "B", "C", "D"].map(String::from).to_vec();
                let created = ludo
                    .create_game(pb::CreateGameRequest { kind: "cardinal".into(), players, options: Some(options), ..Default::default() })
                    .await
                    .map_err(|e| format!("a Cardinal game was not created: {e}"))?
                    .into_inner();
                games += 1;
                let tokens = created
                    .seats
                    .iter()
                    .map(|seat| format!("Bearer {}", seat.token).parse::<tonic::metadata::MetadataValue<_>>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("a token is not a header value: {e}"))?;
                let playout = &playouts[(client + games * 7) % playouts.len()];
                for planned in &playout.moves {
                    if Instant::now() >= deadline {
                        break 'games;
                    }
                    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
                        id: created.id.clone(),
                        r#move: Some(planned.grpc.clone()),
                        expected_version: None,
                        request_id: None,
                        omit_view: answers == Answers::Minimal,
                    });
                    request.metadata_mut().insert("authorization", tokens[planned.seat].clone());
                    let sent = Instant::now();
                    submit.ready().await.map_err(|e| format!("the gRPC channel failed: {e}"))?;
                    let codec = StrictCodec::<pb::SubmitMoveRequest, AnswerHead>::default();
                    let answer = submit
                        .unary(request, PathAndQuery::from_static(SUBMIT_MOVE), codec)
                        .await
                        .map_err(|e| format!("a computed legal move was refused: {e}"))?;
                    latencies.push(sent.elapsed());
                    without_view += usize::from(answer.get_ref().view.is_none());
                }
            }
            Ok(Measured { latencies, games, without_view })
        }));
    }
    let measured = collect(tasks).await?;
    let elapsed = started.elapsed();
    let cpu = Cpu::of(&[server])?.since(cpu_before);
    Ok(Part { measured, elapsed, cpu })
}

/// One HTTP/2 connection per `GRPC_CLIENTS_PER_CHANNEL` of `clients`.
///
/// # Errors
/// When a connection cannot be opened.
pub async fn grpc_channels(server: &Server, clients: usize) -> Result<Vec<tonic::transport::Channel>, String> {
    let mut channels = Vec::new();
    for _ in 0..clients.div_ceil(GRPC_CLIENTS_PER_CHANNEL) {
        let endpoint = tonic::transport::Channel::from_shared(server.base.clone()).map_err(|e| e.to_string())?;
        channels.push(endpoint.connect().await.map_err(|e| format!("cannot open a gRPC channel: {e}"))?);
    }
    Ok(channels)
}

fn to_proto(mv: &ludo_cardinal::Move) -> ludo_proto::ludo::cardinal::v1::Move {
    use ludo_proto::ludo::cardinal::v1 as pb;
    let kind = match *mv {
        ludo_cardinal::Move::Build { shape, colour, x, y, orientation, bonus_colour } => pb::r#move::Kind::Build(pb::Build {
            shape: match shape {
                ludo_cardinal::Shape::House => pb::Shape::House,
                ludo_cardinal::Shape::Tower => pb::Shape::Tower,
                ludo_cardinal::Shape::Square => pb::Shape::Square,
            }
            .into(),
            colour: u32::from(colour.0),
            x,
            y,
            orientation: orientation.map(|o| match o {
                ludo_cardinal::Orientation::Horizontal => pb::Orientation::Horizontal.into(),
                ludo_cardinal::Orientation::Vertical => pb::Orientation::Vertical.into(),
            }),
            bonus_colour: bonus_colour.map(|c| u32::from(c.0)),
        }),
        ludo_cardinal::Move::MoveCardinal { x, y } => pb::r#move::Kind::MoveCardinal(pb::MoveCardinal { x, y }),
        ludo_cardinal::Move::KeepCardinal => pb::r#move::Kind::KeepCardinal(pb::KeepCardinal {}),
    };
    pb::Move { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn a_phase_in_two_parts_counts_as_one() {
        let part = |millis: &[u64], games, seconds, server_ms| Part {
            measured: Measured { latencies: millis.iter().map(|&ms| Duration::from_millis(ms)).collect(), games, without_view: 0 },
            elapsed: Duration::from_secs(seconds),
            cpu: Cpu { servers: Duration::from_millis(server_ms), machine: Duration::from_millis(2 * server_ms) },
        };
        let run = summarize(4, vec![part(&[1, 2, 3], 1, 1, 30), part(&[4, 5, 6, 7], 2, 3, 40)]);
        assert_eq!((run.concurrency, run.moves, run.games), (4, 7, 3));
        // 7 moves in 4 s, 70 ms of server CPU and 140 of the machine's.
        assert!((run.moves_per_s - 1.75).abs() < 1e-9);
        assert!((run.server_cpu_us_per_move - 10_000.0).abs() < 1e-6);
        assert!((run.machine_cpu_us_per_move - 20_000.0).abs() < 1e-6);
        // The latencies of both parts, sorted together.
        assert!((run.p50_ms - 4.0).abs() < 1e-9);
        assert!((run.p99_ms - 7.0).abs() < 1e-9);
    }

    /// A whole answer: every field set, the view a game in progress.
    fn answer(view: Option<pb::View>) -> pb::MoveAccepted {
        pb::MoveAccepted {
            version: 7,
            status: Some(pb::Status {
                state: Some(pb::status::State::InProgress(pb::InProgress { to_move: vec![1], ..Default::default() })),
            }),
            effects: vec![pb::Effect::default(); 3],
            view,
            receipt: Some(pb::Receipt::default()),
        }
    }

    #[test]
    fn the_answer_head_keeps_the_view_bytes_and_skips_the_rest() {
        let view = pb::View {
            game: Some(pb::view::Game::Cardinal(ludo_proto::ludo::cardinal::v1::View { players: 4, first_seat: 2, ..Default::default() })),
        };
        let whole = answer(Some(view.clone())).encode_to_vec();
        let head = AnswerHead::decode(whole.as_slice()).expect("a whole answer decodes");
        assert_eq!(head.view.as_deref(), Some(view.encode_to_vec().as_slice()));
        assert_eq!(pb::View::decode(head.view.expect("a view")).expect("the kept bytes are the view"), view);

        let minimal = answer(None).encode_to_vec();
        assert_eq!(AnswerHead::decode(minimal.as_slice()).expect("a minimal answer decodes").view, None);
    }
}
