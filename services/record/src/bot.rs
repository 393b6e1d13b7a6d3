//! Seats the server's bots play: how a game's log says which seats are
//! bots and which moves a bot made.
//!
//! A seat is a bot's from the start (`game_created`'s `bots`) or from a
//! `seat_bot` record on (autopilot: its player hands it over, or takes it
//! back). A move a bot made says so in its record (`bot`: the level and
//! the bots' library version), so the log tells who decided each move and
//! replays without running any bot again.

use serde::{Deserialize, Serialize};

/// Longest think delay a seat may ask for: a bot seat that waits longer
/// than this between moves is not one a person is following.
pub const MAX_THINK_MS: u32 = 10_000;

/// How well a server bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum BotLevel {
    /// A legal move, uniformly at random.
    Random,
    /// The best move one ply ahead by the game's evaluation.
    Greedy,
    /// Information-set Monte Carlo tree search.
    Strong,
}

impl From<BotLevel> for ludo_bots::Level {
    fn from(level: BotLevel) -> Self {
        match level {
            BotLevel::Random => ludo_bots::Level::Random,
            BotLevel::Greedy => ludo_bots::Level::Greedy,
            BotLevel::Strong => ludo_bots::Level::Strong,
        }
    }
}

impl From<ludo_bots::Level> for BotLevel {
    fn from(level: ludo_bots::Level) -> Self {
        match level {
            ludo_bots::Level::Random => BotLevel::Random,
            ludo_bots::Level::Greedy => BotLevel::Greedy,
            ludo_bots::Level::Strong => BotLevel::Strong,
        }
    }
}

impl BotLevel {
    /// The level's name in the API.
    #[must_use]
    pub fn name(self) -> &'static str {
        ludo_bots::Level::from(self).name()
    }

    /// The level named `name` (the bots' own names).
    ///
    /// # Errors
    /// For any other name.
    pub fn parse(name: &str) -> Result<BotLevel, String> {
        name.parse::<ludo_bots::Level>().map(BotLevel::from).map_err(|unknown| unknown.to_string())
    }
}

/// A seat the server plays, as the log records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BotSeat {
    /// How well it plays.
    pub level: BotLevel,
    /// How long it waits, at least, from its turn to its move (milliseconds),
    /// so a person can follow.
    pub think_ms: u32,
}

/// A bot for a seat, as a request asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, try_from = "serde_json::Value")]
pub struct BotRequest {
    /// `random`, `greedy` or `strong`.
    pub level: BotLevel,
    /// Milliseconds it waits, at least, before each move (0 to 10000);
    /// omitted: the server's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(maximum = 10000))] // MAX_THINK_MS: the server refuses more.
    pub think_ms: Option<u32>,
}

impl TryFrom<serde_json::Value> for BotRequest {
    type Error = String;

    fn try_from(value: serde_json::Value) -> Result<BotRequest, String> {
        BotRequest::from_json(value)
    }
}

impl BotRequest {
    /// A bot request from its JSON, with an error that names what is wrong.
    ///
    /// # Errors
    /// When it is not `{"level": …, "think_ms": …}` with a known level.
    pub fn from_json(value: serde_json::Value) -> Result<BotRequest, String> {
        let serde_json::Value::Object(mut bot) = value else {
            return Err("a bot is an object: {\"level\": \"random\" | \"greedy\" | \"strong\", \"think_ms\": …}".into());
        };
        let level = match bot.remove("level") {
            Some(serde_json::Value::String(level)) => BotLevel::parse(&level)?,
            _ => return Err("a bot needs a `level`: random, greedy or strong".into()),
        };
        let think_ms = match bot.remove("think_ms") {
            None | Some(serde_json::Value::Null) => None,
            Some(ms) => Some(
                ms.as_u64()
                    .and_then(|ms| u32::try_from(ms).ok())
                    .filter(|&ms| ms <= MAX_THINK_MS)
                    .ok_or_else(|| format!("a bot's `think_ms` is a whole number of milliseconds from 0 to {MAX_THINK_MS}"))?,
            ),
        };
        if let Some(other) = bot.keys().next() {
            return Err(format!("a bot has a `level` and a `think_ms`, not `{other}`"));
        }
        Ok(BotRequest { level, think_ms })
    }

    /// The seat this request makes, `default_think_ms` filling a missing delay.
    #[must_use]
    pub fn seat(self, default_think_ms: u32) -> BotSeat {
        BotSeat { level: self.level, think_ms: self.think_ms.unwrap_or(default_think_ms).min(MAX_THINK_MS) }
    }
}

/// Which bot made a move, as its record says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BotMark {
    /// Its level.
    pub level: BotLevel,
    /// The version of the bots' library that chose the move.
    #[cfg_attr(feature = "schema", schema(example = "0.1.0"))]
    pub version: String,
}

impl BotMark {
    /// The mark of a move this build's bot of `level` made.
    #[must_use]
    pub fn of(level: BotLevel) -> BotMark {
        BotMark { level, version: ludo_bots::VERSION.to_string() }
    }
}
