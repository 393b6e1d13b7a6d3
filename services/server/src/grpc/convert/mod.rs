//! Between the service's JSON values and the typed proto messages.
//!
//! The service speaks each game's JSON shape; here a JSON value becomes the
//! engine's typed value (serde) and then its proto message, and back. Each
//! game kind has its own module; this one dispatches on the kind.

mod battle13;
mod cardinal;
mod kardinal;

use ludo_engine::{Seat, Status as GameStatus};
use ludo_proto::v1 as pb;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tonic::Status;

use super::status::invalid;

/// A JSON value of the service as the engine's typed value.
fn typed<T: DeserializeOwned>(value: &Value) -> Result<T, Status> {
    serde_json::from_value(value.clone()).map_err(|e| Status::internal(format!("the service produced JSON its engine cannot read: {e}")))
}

/// JSON text from the service as the engine's typed value.
fn typed_text<T: DeserializeOwned>(text: &str) -> Result<T, Status> {
    serde_json::from_str(text).map_err(|e| Status::internal(format!("the service produced JSON its engine cannot read: {e}")))
}

/// An engine value as the service's JSON.
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("engine values serialize")
}

/// A proto `uint32` that must fit the engine's `u8`.
pub(crate) fn small(field: &str, value: u32) -> Result<u8, Status> {
    u8::try_from(value).map_err(|_| invalid(field, "out of range"))
}

/// A seat from a proto `uint32`.
pub(crate) fn seat(field: &str, value: u32) -> Result<Seat, Status> {
    small(field, value).map(Seat)
}

fn unknown_kind(kind: &str) -> Status {
    Status::internal(format!("no gRPC mapping for game kind `{kind}`"))
}

/// Options of `kind` from the request (None: the kind's defaults).
///
/// # Errors
/// `invalid_input` when the options are for another kind or malformed.
pub fn options_in(kind: &str, options: Option<pb::Options>) -> Result<Option<Value>, Status> {
    let Some(pb::Options { game: Some(game) }) = options else { return Ok(None) };
    match game {
        pb::options::Game::Cardinal(o) if kind == "cardinal" => Ok(Some(json(&cardinal::options_in(o)?))),
        pb::options::Game::Kardinal(o) if kind == "kardinal" => Ok(Some(json(&kardinal::options_in(o)?))),
        pb::options::Game::Battle13(o) if kind == "battle13" => Ok(Some(json(&battle13::options_in(o)?))),
        _ => Err(invalid("options", &format!("these options are not for a `{kind}` game"))),
    }
}

/// Options (JSON text) as a proto message.
pub fn options_out(kind: &str, options: &str) -> Result<pb::Options, Status> {
    let game = match kind {
        "cardinal" => pb::options::Game::Cardinal(cardinal::options_out(&typed_text(options)?)),
        "kardinal" => pb::options::Game::Kardinal(kardinal::options_out(&typed_text(options)?)),
        "battle13" => pb::options::Game::Battle13(battle13::options_out(&typed_text(options)?)),
        other => return Err(unknown_kind(other)),
    };
    Ok(pb::Options { game: Some(game) })
}

/// A submitted move as the service's JSON.
///
/// # Errors
/// `invalid_input` naming the field when the move is missing or malformed.
pub fn move_in(mv: Option<pb::Move>) -> Result<Value, Status> {
    match mv.and_then(|m| m.game) {
        None => Err(invalid("move", "a move is required")),
        Some(pb::r#move::Game::Cardinal(m)) => Ok(json(&cardinal::move_in(m)?)),
        Some(pb::r#move::Game::Kardinal(m)) => Ok(json(&kardinal::move_in(m)?)),
        Some(pb::r#move::Game::Battle13(m)) => Ok(json(&battle13::move_in(m)?)),
    }
}

/// A move as a proto message.
pub fn move_out(kind: &str, mv: &Value) -> Result<pb::Move, Status> {
    let game = match kind {
        "cardinal" => pb::r#move::Game::Cardinal(cardinal::move_out(&typed(mv)?)),
        "kardinal" => pb::r#move::Game::Kardinal(kardinal::move_out(&typed(mv)?)),
        "battle13" => pb::r#move::Game::Battle13(battle13::move_out(&typed(mv)?)),
        other => return Err(unknown_kind(other)),
    };
    Ok(pb::Move { game: Some(game) })
}

/// A view as a proto message.
pub fn view_out(kind: &str, view: &Value) -> Result<pb::View, Status> {
    let game = match kind {
        "cardinal" => pb::view::Game::Cardinal(cardinal::view_out(&typed(view)?)),
        "kardinal" => pb::view::Game::Kardinal(kardinal::view_out(&typed(view)?)),
        "battle13" => pb::view::Game::Battle13(battle13::view_out(&typed(view)?)),
        other => return Err(unknown_kind(other)),
    };
    Ok(pb::View { game: Some(game) })
}

/// An effect as a proto message.
pub fn effect_out(kind: &str, effect: &Value) -> Result<pb::Effect, Status> {
    let game = match kind {
        "cardinal" => pb::effect::Game::Cardinal(cardinal::effect_out(&typed(effect)?)),
        "kardinal" => pb::effect::Game::Kardinal(kardinal::effect_out(&typed(effect)?)),
        "battle13" => pb::effect::Game::Battle13(battle13::effect_out(&typed(effect)?)),
        other => return Err(unknown_kind(other)),
    };
    Ok(pb::Effect { game: Some(game) })
}

/// Effects as proto messages.
pub fn effects_out(kind: &str, effects: &[Value]) -> Result<Vec<pb::Effect>, Status> {
    effects.iter().map(|e| effect_out(kind, e)).collect()
}

/// A game status as a proto message.
#[must_use]
pub fn status_out(status: &GameStatus) -> pb::Status {
    let state = match status {
        GameStatus::InProgress { to_move } => {
            pb::status::State::InProgress(pb::InProgress { to_move: to_move.iter().map(|s| u32::from(s.0)).collect() })
        }
        GameStatus::Finished { result } => pb::status::State::Finished(pb::Finished {
            scores: result.scores.clone(),
            winners: result.winners.iter().map(|s| u32::from(s.0)).collect(),
        }),
    };
    pb::Status { state: Some(state) }
}
