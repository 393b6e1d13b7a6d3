//! Nim's messages (the test-only game, feature `test-game`).

use ludo_proto::ludo::nim::v1 as pb;
use ludo_record::engines::ludo_nim as game;
use tonic::Status;

use super::small;

super::game_proto!();

fn options_in(options: pb::Options) -> Result<game::Options, Status> {
    Ok(game::Options { heap: small("options.heap", options.heap)? })
}

fn options_out(options: &game::Options) -> pb::Options {
    pb::Options { heap: u32::from(options.heap) }
}

fn move_in(mv: pb::Move) -> Result<game::Move, Status> {
    Ok(game::Move::Take { count: small("move.take", mv.take)? })
}

fn move_out(mv: &game::Move) -> pb::Move {
    let game::Move::Take { count } = mv;
    pb::Move { take: u32::from(*count) }
}

fn view_out(view: &game::View) -> pb::View {
    pb::View { heap: u32::from(view.heap), to_act: view.to_act.map(|s| u32::from(s.0)), winner: view.winner.map(|s| u32::from(s.0)) }
}

fn effect_out(effect: &game::Effect) -> pb::Effect {
    use pb::effect::Effect as E;
    let effect = match *effect {
        game::Effect::GameStarted { heap } => E::GameStarted(pb::GameStarted { heap: u32::from(heap) }),
        game::Effect::Took { seat, count, left } => {
            E::Took(pb::Took { seat: u32::from(seat.0), count: u32::from(count), left: u32::from(left) })
        }
        game::Effect::GameEnded { winner } => E::GameEnded(pb::GameEnded { winner: u32::from(winner.0) }),
    };
    pb::Effect { effect: Some(effect) }
}
