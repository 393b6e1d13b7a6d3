//! `ludo bot`: plays one seat of a game on any ludotheque server with a
//! computer player running in this process, over the public REST API.
//!
//! The loop: read the game; when it is the seat's turn, read what the seat
//! knows (`GET /v1/games/{id}/info`: its information set, nothing more),
//! let the bot choose from that, and submit the move with the version it
//! was chosen at (`expected_version`), so a move chosen on a stale state is
//! refused rather than played; otherwise wait on the game's stream
//! (`GET /v1/games/{id}/stream`, the seat's token in `Authorization`) for
//! the next record. It ends when the game does.

use std::time::Duration;

use clap::Args;
use ludo_bots::{Bot, Budget, Level, Playable};
use ludo_engine::{Engine, InfoSet, Seat};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Arguments of `ludo bot`.
#[derive(Args, Debug)]
pub struct BotArgs {
    /// The server's base URL, plain HTTP only (reach a server elsewhere
    /// through a local tunnel, such as `ssh -L` or stunnel in client mode).
    #[arg(long, env = "LUDO_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// The game's id.
    #[arg(long)]
    game: String,
    /// The seat's token (better from the environment than on a command
    /// line other users of the machine can read).
    #[arg(long, env = "LUDO_TOKEN", hide_env_values = true)]
    token: String,
    /// How well the bot plays: random, greedy or strong.
    #[arg(long, default_value = "strong")]
    level: Level,
    /// The most search iterations per move (strong).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    iterations: u32,
    /// The most time per move, in milliseconds.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    think_ms: u64,
    /// Seed of the bot's own random choices.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// How a game ended for the seat the bot played.
#[derive(Debug)]
pub struct Played {
    /// The seat.
    pub seat: Seat,
    /// Moves the bot made.
    pub moves: u64,
    /// The final status.
    pub status: Value,
}

/// A refusal worth reading the game again for: it moved meanwhile.
fn stale(problem: &Value) -> bool {
    matches!(problem["code"].as_str(), Some("version_conflict" | "not_your_turn"))
}

struct Client {
    http: reqwest::Client,
    base: String,
    game: String,
    token: String,
}

impl Client {
    fn url(&self, path: &str) -> String {
        format!("{}/v1/games/{}{path}", self.base, self.game)
    }

    /// GETs `path` of the game as the seat; the JSON answer, or the problem.
    async fn get(&self, path: &str) -> Result<Value, String> {
        let answer = self.http.get(self.url(path)).bearer_auth(&self.token).send().await.map_err(|e| format!("GET {path}: {e}"))?;
        read(answer, path).await
    }

    /// POSTs a move; `Ok(None)` when refused as stale. The answer comes
    /// without the view (`Prefer: return=minimal`): the bot reads what its
    /// seat knows before each move anyway.
    async fn submit(&self, mv: Value, version: u64) -> Result<Option<Value>, String> {
        let body = json!({"move": mv, "expected_version": version});
        let answer = self
            .http
            .post(self.url("/moves"))
            .bearer_auth(&self.token)
            .header("prefer", "return=minimal")
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("POST a move: {e}"))?;
        match read(answer, "/moves").await {
            Ok(accepted) => Ok(Some(accepted)),
            Err(problem) if problem.starts_with('{') && stale(&serde_json::from_str(&problem).unwrap_or_default()) => Ok(None),
            Err(problem) => Err(problem),
        }
    }

    /// Waits until the game's log holds a record past `version` (or the
    /// stream ends or stalls: the caller reads the game again either way).
    async fn wait_past(&self, version: u64) -> Result<(), String> {
        let mut stream = self
            .http
            .get(self.url(&format!("/stream?from={}", version + 1)))
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| format!("GET the stream: {e}"))?;
        if stream.status() == reqwest::StatusCode::NO_CONTENT {
            return Ok(()); // over, and every record was sent
        }
        if !stream.status().is_success() {
            return read(stream, "/stream").await.map(|_| ());
        }
        // An event is complete at its blank line; any complete `record` or
        // `end` event is news. A quiet minute: look again anyway.
        let mut pending = String::new();
        loop {
            let chunk = match tokio::time::timeout(Duration::from_secs(60), stream.chunk()).await {
                Err(_) | Ok(Ok(None)) => return Ok(()),
                Ok(Ok(Some(chunk))) => chunk,
                Ok(Err(e)) => return Err(format!("reading the stream: {e}")),
            };
            pending.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = pending.find("\n\n") {
                let event: String = pending.drain(..end + 2).collect();
                if event.lines().any(|line| line == "event: record" || line == "event: end") {
                    return Ok(());
                }
            }
        }
    }
}

/// The JSON answer, or the problem's JSON text as the error.
async fn read(answer: reqwest::Response, what: &str) -> Result<Value, String> {
    let status = answer.status();
    let text = answer.text().await.map_err(|e| format!("{what}: {e}"))?;
    if status.is_success() {
        serde_json::from_str(&text).map_err(|e| format!("{what}: the answer is not JSON: {e}"))
    } else if text.starts_with('{') {
        Err(text)
    } else {
        Err(format!("{what}: {status}: {text}"))
    }
}

/// The move `bot` chooses for `seat` of a game of engine `E`, from the
/// seat's information set as the server sent it.
fn choose<E>(bot: &mut Bot, seat: Seat, info: &Value) -> Result<Option<Value>, String>
where
    E: Playable,
    <E as InfoSet>::Info: DeserializeOwned,
    E::Move: Serialize,
{
    let info: <E as InfoSet>::Info =
        serde_json::from_value(info.clone()).map_err(|e| format!("the seat's information does not read: {e}"))?;
    Ok(bot.choose::<E>(seat, &info).map(|mv| serde_json::to_value(mv).expect("moves serialize")))
}

fn choose_for(kind: &str, bot: &mut Bot, seat: Seat, info: &Value) -> Result<Option<Value>, String> {
    macro_rules! by_kind {
        ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
            match kind {
                $(kind if kind == <ludo_record::engines::$krate::Game as Engine>::KIND => choose::<ludo_record::engines::$krate::Game>(bot, seat, info),)*
                other => Err(format!("this ludo has no bot for games of kind `{other}`")),
            }
        };
    }
    ludo_record::for_each_game!(by_kind)
}

/// Plays the seat to the end of the game.
///
/// # Errors
/// A refusal that is not a stale state (a wrong token, a game that does
/// not exist …), or a server that cannot be reached.
pub async fn run(args: BotArgs) -> Result<Played, String> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("ludo-bot/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())?;
    let client = Client { http, base: args.server.trim_end_matches('/').to_string(), game: args.game.clone(), token: args.token.clone() };
    let budget = Budget { iterations: args.iterations, time: Some(Duration::from_millis(args.think_ms)), playout_depth: None };
    let mut bot = Bot::new(args.level, budget, args.seed);
    let mut moves = 0;
    loop {
        let known = client.get("/info").await?;
        let seat = Seat(known["seat"].as_u64().and_then(|s| u8::try_from(s).ok()).ok_or("the answer names no seat")?);
        let version = known["version"].as_u64().ok_or("the answer has no version")?;
        let status = &known["status"];
        if status["state"] == "finished" {
            return Ok(Played { seat, moves, status: status.clone() });
        }
        let my_turn = status["to_move"].as_array().is_some_and(|seats| seats.iter().any(|s| s.as_u64() == Some(u64::from(seat.0))));
        if !my_turn {
            client.wait_past(version).await?;
            continue;
        }
        let kind = known["kind"].as_str().unwrap_or_default().to_string();
        let info = known["info"].clone();
        // A strong bot thinks for up to its budget: off the async workers.
        let (chosen, back) = tokio::task::spawn_blocking(move || {
            let chosen = choose_for(&kind, &mut bot, seat, &info);
            (chosen, bot)
        })
        .await
        .map_err(|e| format!("the bot failed: {e}"))?;
        bot = back;
        let Some(mv) = chosen? else {
            client.wait_past(version).await?;
            continue;
        };
        if client.submit(mv, version).await?.is_some() {
            moves += 1;
            tracing::info!(seat = %seat, version = version + 1, "moved");
        }
    }
}
