//! Between the registry's typed values and the proto messages, directly:
//! no JSON on the way. Each game kind has its own module with the
//! conversions of its messages (`GameProto`); `proto_pairs!` joins them
//! into the conversions of the registry's enums, from the one list of
//! games (`ludo_record::for_each_game!`).
//!
//! Local traits ([`ToProto`], [`FromProto`]) rather than `From`/`TryFrom`:
//! both sides are other crates' types (the registry's enums in `ludo-record`,
//! the messages in `ludo-proto`), which Rust's orphan rule forbids to join
//! with a foreign trait here.

mod battle13;
mod cardinal;
mod kardinal;
#[cfg(feature = "test-game")]
mod nim;

use ludo_engine::{Engine, Seat};
use ludo_proto::v1 as pb;
use ludo_record::Status as GameStatus;
use ludo_record::kinds::{AnyEffect, AnyMove, AnyOptions, AnyView};
use tonic::Status;

use super::status::invalid;

/// A typed value as its proto message.
pub trait ToProto {
    /// The message.
    type Proto;
    /// The message for `self`.
    fn to_proto(&self) -> Self::Proto;
}

/// A typed value from its proto message.
pub trait FromProto<P>: Sized {
    /// The value a message holds.
    ///
    /// # Errors
    /// `invalid_input` naming the field when the message is missing parts
    /// or out of range.
    fn from_proto(proto: P) -> Result<Self, Status>;
}

/// A game's own proto messages and their conversions from and to its
/// engine's types: each game's module implements it (with
/// `game_proto!`), and `proto_pairs!` calls it per game.
pub(crate) trait GameProto: Engine {
    /// The game's `Options` message.
    type OptionsMessage;
    /// The game's `Move` message.
    type MoveMessage;
    /// The game's `View` message.
    type ViewMessage;
    /// The game's `Effect` message.
    type EffectMessage;
    /// Options from their message.
    ///
    /// # Errors
    /// `invalid_input` naming the field out of range.
    fn options_in(options: Self::OptionsMessage) -> Result<Self::Options, Status>;
    /// Options as their message.
    fn options_out(options: &Self::Options) -> Self::OptionsMessage;
    /// A move from its message.
    ///
    /// # Errors
    /// `invalid_input` naming the field missing or out of range.
    fn move_in(mv: Self::MoveMessage) -> Result<Self::Move, Status>;
    /// A move as its message.
    fn move_out(mv: &Self::Move) -> Self::MoveMessage;
    /// A view as its message.
    fn view_out(view: &Self::View) -> Self::ViewMessage;
    /// An effect as its message.
    fn effect_out(effect: &Self::Effect) -> Self::EffectMessage;
}

/// Implements [`GameProto`] for the module's `game::Game` with its `pb`
/// messages and its functions of the same names.
macro_rules! game_proto {
    () => {
        impl super::GameProto for game::Game {
            type OptionsMessage = pb::Options;
            type MoveMessage = pb::Move;
            type ViewMessage = pb::View;
            type EffectMessage = pb::Effect;
            fn options_in(options: pb::Options) -> Result<game::Options, Status> {
                options_in(options)
            }
            fn options_out(options: &game::Options) -> pb::Options {
                options_out(options)
            }
            fn move_in(mv: pb::Move) -> Result<game::Move, Status> {
                move_in(mv)
            }
            fn move_out(mv: &game::Move) -> pb::Move {
                move_out(mv)
            }
            fn view_out(view: &game::View) -> pb::View {
                view_out(view)
            }
            fn effect_out(effect: &game::Effect) -> pb::Effect {
                effect_out(effect)
            }
        }
    };
}
use game_proto;

/// The conversions of the registry's enums, from each game's own: the
/// variant names the game in the registry and in the proto oneofs alike.
macro_rules! proto_pairs {
    ($($variant:ident => $krate:ident, $name:literal, listed: $listed:literal, $defaults:expr, $bounds:expr;)*) => {
        impl ToProto for AnyMove {
            type Proto = pb::Move;
            fn to_proto(&self) -> pb::Move {
                let game = match self { $(AnyMove::$variant(mv) => pb::r#move::Game::$variant(<ludo_record::engines::$krate::Game as GameProto>::move_out(mv)),)* };
                pb::Move { game: Some(game) }
            }
        }

        impl FromProto<Option<pb::Move>> for AnyMove {
            fn from_proto(mv: Option<pb::Move>) -> Result<Self, Status> {
                match mv.and_then(|m| m.game) {
                    None => Err(invalid("move", "a move is required")),
                    $(Some(pb::r#move::Game::$variant(mv)) => Ok(AnyMove::$variant(<ludo_record::engines::$krate::Game as GameProto>::move_in(mv)?)),)*
                }
            }
        }

        impl ToProto for AnyView {
            type Proto = pb::View;
            fn to_proto(&self) -> pb::View {
                let game = match self { $(AnyView::$variant(view) => pb::view::Game::$variant(<ludo_record::engines::$krate::Game as GameProto>::view_out(view)),)* };
                pb::View { game: Some(game) }
            }
        }

        impl ToProto for AnyEffect {
            type Proto = pb::Effect;
            /// A withheld effect shows nothing: an effect with no game.
            fn to_proto(&self) -> pb::Effect {
                let game = match self {
                    $(AnyEffect::$variant(effect) => Some(pb::effect::Game::$variant(<ludo_record::engines::$krate::Game as GameProto>::effect_out(effect))),)*
                    AnyEffect::Withheld => None,
                };
                pb::Effect { game }
            }
        }

        impl ToProto for AnyOptions {
            type Proto = pb::Options;
            fn to_proto(&self) -> pb::Options {
                let game = match self { $(AnyOptions::$variant(options) => pb::options::Game::$variant(<ludo_record::engines::$krate::Game as GameProto>::options_out(options)),)* };
                pb::Options { game: Some(game) }
            }
        }

        impl FromProto<pb::Options> for AnyOptions {
            fn from_proto(options: pb::Options) -> Result<Self, Status> {
                match options.game {
                    None => Err(invalid("options", "options name no game")),
                    $(Some(pb::options::Game::$variant(o)) => Ok(AnyOptions::$variant(<ludo_record::engines::$krate::Game as GameProto>::options_in(o)?)),)*
                }
            }
        }

        /// The kind whose options `options` are (`None`: no game named).
        fn options_kind(options: &pb::Options) -> Option<&'static str> {
            match &options.game {
                None => None,
                $(Some(pb::options::Game::$variant(_)) => Some(<ludo_record::engines::$krate::Game as Engine>::KIND),)*
            }
        }
    };
}

ludo_record::for_each_game!(proto_pairs);

/// A proto `uint32` that must fit the engine's `u8`.
pub(crate) fn small(field: &str, value: u32) -> Result<u8, Status> {
    u8::try_from(value).map_err(|_| invalid(field, "out of range"))
}

/// A seat from a proto `uint32`.
pub(crate) fn seat(field: &str, value: u32) -> Result<Seat, Status> {
    small(field, value).map(Seat)
}

/// Options of `kind` from the request, as the service's JSON (None: the
/// kind's defaults). Options are JSON in the service because a request's
/// options are merged with the server's defaults and recorded as they are.
///
/// # Errors
/// `invalid_input` when the options are for another kind or malformed.
pub fn options_in(kind: &str, options: Option<pb::Options>) -> Result<Option<serde_json::Value>, Status> {
    let Some(options) = options else { return Ok(None) };
    let Some(theirs) = options_kind(&options) else { return Ok(None) };
    if theirs != kind {
        return Err(invalid("options", &format!("these options are not for a `{kind}` game")));
    }
    Ok(Some(AnyOptions::from_proto(options)?.to_json()))
}

/// Options (JSON text, as recorded) as a proto message.
pub fn options_out(kind: &str, options: &str) -> Result<pb::Options, Status> {
    match AnyOptions::from_json(kind, options) {
        None => Err(Status::internal(format!("no gRPC mapping for game kind `{kind}`"))),
        Some(Err(e)) => Err(Status::internal(format!("the service produced options its engine cannot read: {e}"))),
        Some(Ok(options)) => Ok(options.to_proto()),
    }
}

/// Effects as proto messages.
pub fn effects_out(effects: &[AnyEffect]) -> Vec<pb::Effect> {
    effects.iter().map(ToProto::to_proto).collect()
}

/// Time controls as a proto message.
#[must_use]
pub fn time_control_out(control: &ludo_record::clock::TimeControl) -> pb::TimeControl {
    pb::TimeControl {
        move_ms: control.move_ms,
        bank_ms: control.bank_ms,
        increment_ms: control.increment_ms,
        on_timeout: match control.on_timeout {
            ludo_record::clock::OnTimeout::Bot => pb::OnTimeout::Bot,
            ludo_record::clock::OnTimeout::Lose => pb::OnTimeout::Lose,
        }
        .into(),
    }
}

/// Time controls a request asks for.
///
/// # Errors
/// `invalid_input` (`clock.on_timeout`) for an unknown value.
pub fn clock_in(control: pb::TimeControl) -> Result<ludo_record::clock::ClockRequest, Status> {
    let on_timeout = match pb::OnTimeout::try_from(control.on_timeout) {
        Ok(pb::OnTimeout::Bot) => ludo_record::clock::OnTimeout::Bot,
        Ok(pb::OnTimeout::Lose) => ludo_record::clock::OnTimeout::Lose,
        Err(_) => return Err(invalid("clock.on_timeout", "expected ON_TIMEOUT_BOT or ON_TIMEOUT_LOSE")),
    };
    Ok(ludo_record::clock::ClockRequest {
        move_ms: control.move_ms,
        bank_ms: control.bank_ms,
        increment_ms: Some(control.increment_ms),
        on_timeout: Some(on_timeout),
    })
}

/// A game status as a proto message.
#[must_use]
pub fn status_out(status: &GameStatus) -> pb::Status {
    let state = match status {
        GameStatus::InProgress { to_move, clock } => pb::status::State::InProgress(pb::InProgress {
            to_move: to_move.iter().map(|s| u32::from(s.0)).collect(),
            clock: clock.as_ref().map(|clock| pb::ClockStatus {
                seats: clock
                    .seats
                    .iter()
                    .map(|s| pb::SeatClock { seat: u32::from(s.seat.0), bank_ms: s.bank_ms, deadline: s.deadline.clone() })
                    .collect(),
            }),
        }),
        GameStatus::Finished { result, forfeits } => pb::status::State::Finished(pb::Finished {
            scores: result.scores.clone(),
            winners: result.winners.iter().map(|s| u32::from(s.0)).collect(),
            forfeits: forfeits
                .iter()
                .map(|f| pb::Forfeit {
                    seat: u32::from(f.seat.0),
                    reason: match f.reason {
                        ludo_record::ForfeitReason::Resigned => pb::ForfeitReason::Resigned.into(),
                        ludo_record::ForfeitReason::TimedOut => pb::ForfeitReason::TimedOut.into(),
                    },
                })
                .collect(),
        }),
        GameStatus::Waiting { open_seats } => {
            pb::status::State::Waiting(pb::Waiting { open_seats: open_seats.iter().map(|s| u32::from(s.0)).collect() })
        }
        GameStatus::Cancelled => pb::status::State::Cancelled(pb::Cancelled {}),
    };
    pb::Status { state: Some(state) }
}

#[cfg(test)]
mod tests {
    use ludo_engine::{Seed, Viewer};
    use ludo_record::kinds::{AnyGame, HOSTED};

    use super::*;

    /// A small deterministic generator for picking moves (not the games' randomness).
    fn pick(state: &mut u64, n: usize) -> usize {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state % n as u64) as usize
    }

    /// Plays `games` random games of every hosted kind at every seat count
    /// through the registry, handing each state, its moves and its effects to `check`.
    fn playouts(games: u64, mut check: impl FnMut(&AnyGame, &[AnyMove], &[AnyEffect])) {
        for kind in HOSTED {
            for players in kind.min_players..=kind.max_players {
                for g in 0..games {
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ ((g + 1) * 7919 + players as u64);
                    let seed = Seed([g as u8 ^ players as u8; 32]);
                    let mut new = kind.create(players, &kind.default_options(), &seed).expect("default set-up");
                    check(&new.game, &[], &new.effects);
                    for _ in 0..2000 {
                        let Some(seat) = new.game.status().to_move().first().copied() else { break };
                        let moves = new.game.legal_moves(seat);
                        let mv = moves[pick(&mut rng, moves.len())].clone();
                        let effects = new.game.apply(seat, &mv).expect("a legal move applies");
                        check(&new.game, &moves, &effects);
                    }
                }
            }
        }
    }

    #[test]
    fn every_legal_move_of_every_game_round_trips_through_proto() {
        let mut moves = 0;
        playouts(3, |_, legal, _| {
            for mv in legal {
                assert_eq!(AnyMove::from_proto(Some(mv.to_proto())).map_err(|e| e.message().to_owned()), Ok(mv.clone()));
                moves += 1;
            }
        });
        assert!(moves > 10_000, "only {moves} moves checked");
    }

    #[test]
    fn options_of_every_game_round_trip_through_proto() {
        for kind in HOSTED {
            let json = kind.default_options().to_string();
            let options = AnyOptions::from_json(kind.id, &json).expect("a hosted kind").expect("default options parse");
            assert_eq!(AnyOptions::from_proto(options.to_proto()).map_err(|e| e.message().to_owned()), Ok(options.clone()), "{}", kind.id);
            assert_eq!(options_in(kind.id, Some(options.to_proto())).map_err(|e| e.message().to_owned()), Ok(Some(options.to_json())));
            let other = HOSTED.iter().find(|k| k.id != kind.id).unwrap();
            assert!(options_in(other.id, Some(options.to_proto())).is_err(), "{} options accepted for {}", kind.id, other.id);
        }
    }

    /// Views and effects go out only; each converts for every viewer to a
    /// message of its own game, never to the empty (withheld) message.
    #[test]
    fn views_and_effects_of_every_game_convert_for_every_viewer() {
        let mut effects_seen = 0;
        playouts(1, |game, _, effects| {
            let viewers = [Viewer::Spectator, Viewer::Omniscient, Viewer::Seat(ludo_engine::Seat(0))];
            for viewer in viewers {
                assert!(game.view(viewer).to_proto().game.is_some());
                for effect in effects {
                    assert!(game.redact(effect, viewer).to_proto().game.is_some(), "{effect:?} withheld");
                    effects_seen += 1;
                }
            }
        });
        assert!(effects_seen > 1000, "only {effects_seen} effects checked");
        assert_eq!(AnyEffect::Withheld.to_proto().game, None);
    }
}
