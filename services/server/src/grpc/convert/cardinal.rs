//! Cardinal's engine types and proto messages, field for field.

use ludo_cardinal as game;
use ludo_proto::ludo::cardinal::v1 as pb;
use tonic::Status;

use super::{seat, small};
use crate::grpc::status::invalid;

super::game_proto!();

fn u(value: u8) -> u32 {
    u32::from(value)
}

fn colour(field: &str, value: u32) -> Result<game::Colour, Status> {
    small(field, value).map(game::Colour)
}

pub(super) fn options_in(options: pb::Options) -> Result<game::Options, Status> {
    Ok(game::Options { first_seat: options.first_seat.map(|s| seat("options.cardinal.first_seat", s)).transpose()? })
}

pub(super) fn options_out(options: &game::Options) -> pb::Options {
    pb::Options { first_seat: options.first_seat.map(|s| u(s.0)) }
}

fn shape_in(field: &str, value: i32) -> Result<game::Shape, Status> {
    match pb::Shape::try_from(value) {
        Ok(pb::Shape::House) => Ok(game::Shape::House),
        Ok(pb::Shape::Tower) => Ok(game::Shape::Tower),
        Ok(pb::Shape::Square) => Ok(game::Shape::Square),
        Ok(pb::Shape::Unspecified) | Err(_) => Err(invalid(field, "a shape is required: house, tower or square")),
    }
}

fn shape_out(shape: game::Shape) -> i32 {
    match shape {
        game::Shape::House => pb::Shape::House,
        game::Shape::Tower => pb::Shape::Tower,
        game::Shape::Square => pb::Shape::Square,
    }
    .into()
}

fn orientation_in(value: i32) -> Result<game::Orientation, Status> {
    match pb::Orientation::try_from(value) {
        Ok(pb::Orientation::Horizontal) => Ok(game::Orientation::Horizontal),
        Ok(pb::Orientation::Vertical) => Ok(game::Orientation::Vertical),
        Ok(pb::Orientation::Unspecified) | Err(_) => Err(invalid("move.cardinal.build.orientation", "horizontal or vertical")),
    }
}

fn orientation_out(orientation: game::Orientation) -> i32 {
    match orientation {
        game::Orientation::Horizontal => pb::Orientation::Horizontal,
        game::Orientation::Vertical => pb::Orientation::Vertical,
    }
    .into()
}

pub(super) fn move_in(mv: pb::Move) -> Result<game::Move, Status> {
    match mv.kind {
        None => Err(invalid("move.cardinal", "one of build, move_cardinal, keep_cardinal is required")),
        Some(pb::r#move::Kind::Build(b)) => Ok(game::Move::Build {
            shape: shape_in("move.cardinal.build.shape", b.shape)?,
            colour: colour("move.cardinal.build.colour", b.colour)?,
            x: b.x,
            y: b.y,
            orientation: b.orientation.map(orientation_in).transpose()?,
            bonus_colour: b.bonus_colour.map(|c| colour("move.cardinal.build.bonus_colour", c)).transpose()?,
        }),
        Some(pb::r#move::Kind::MoveCardinal(m)) => Ok(game::Move::MoveCardinal { x: m.x, y: m.y }),
        Some(pb::r#move::Kind::KeepCardinal(_)) => Ok(game::Move::KeepCardinal),
    }
}

pub(super) fn move_out(mv: &game::Move) -> pb::Move {
    let kind = match *mv {
        game::Move::Build { shape, colour, x, y, orientation, bonus_colour } => pb::r#move::Kind::Build(pb::Build {
            shape: shape_out(shape),
            colour: u(colour.0),
            x,
            y,
            orientation: orientation.map(orientation_out),
            bonus_colour: bonus_colour.map(|c| u(c.0)),
        }),
        game::Move::MoveCardinal { x, y } => pb::r#move::Kind::MoveCardinal(pb::MoveCardinal { x, y }),
        game::Move::KeepCardinal => pb::r#move::Kind::KeepCardinal(pb::KeepCardinal {}),
    };
    pb::Move { kind: Some(kind) }
}

fn cell(c: game::Cell) -> pb::Cell {
    pb::Cell { x: c.x, y: c.y }
}

fn markers(counts: &[game::MarkerCount]) -> Vec<pb::MarkerCount> {
    counts.iter().map(|m| pb::MarkerCount { colour: u(m.colour.0), count: m.count }).collect()
}

fn scoring(s: &game::Scoring) -> pb::Scoring {
    pb::Scoring {
        provisional: s.provisional,
        seats: s
            .seats
            .iter()
            .map(|seat| pb::SeatScore {
                seat: u(seat.seat.0),
                markers: markers(&seat.markers),
                doubled_colour: seat.doubled_colour.map(|c| u(c.0)),
                total: seat.total,
                cathedral_contacts: seat.cathedral_contacts,
            })
            .collect(),
        winners: s.winners.iter().map(|w| u(w.0)).collect(),
    }
}

pub(super) fn view_out(view: &game::View) -> pb::View {
    pb::View {
        players: u(view.players),
        first_seat: u(view.first_seat.0),
        seats: view
            .seats
            .iter()
            .map(|s| pb::SeatView {
                seat: u(s.seat.0),
                colours: s.colours.iter().map(|c| u(c.0)).collect(),
                markers_taken: markers(&s.markers_taken),
            })
            .collect(),
        fourth_colour: view.fourth_colour.map(|c| u(c.0)),
        cathedral: Some(pb::Cathedral { nave: Some(cell(view.cathedral.nave)), tower: Some(cell(view.cathedral.tower)) }),
        buildings: view
            .buildings
            .iter()
            .map(|b| pb::Building {
                seat: u(b.seat.0),
                shape: shape_out(b.shape),
                colour: u(b.colour.0),
                cells: b.cells.iter().copied().map(cell).collect(),
            })
            .collect(),
        cardinal: view.cardinal.map(cell),
        supply: markers(&view.supply),
        buildings_left: view
            .buildings_left
            .iter()
            .map(|l| pb::BuildingsLeft { colour: u(l.colour.0), houses: l.houses, towers: l.towers, squares: l.squares })
            .collect(),
        last_built: view.last_built.map(|l| pb::LastBuilt { shape: shape_out(l.shape), colour: u(l.colour.0) }),
        phase: match view.phase {
            game::Phase::Build => pb::Phase::Build,
            game::Phase::Cardinal => pb::Phase::Cardinal,
            game::Phase::Finished => pb::Phase::Finished,
        }
        .into(),
        to_act: view.to_act.map(|s| u(s.0)),
        scoring: Some(scoring(&view.scoring)),
    }
}

pub(super) fn effect_out(effect: &game::Effect) -> pb::Effect {
    use pb::effect::Kind;
    let kind = match effect {
        game::Effect::GameStarted { first_seat } => Kind::GameStarted(pb::GameStarted { first_seat: u(first_seat.0) }),
        game::Effect::Built { seat, shape, colour, cells, markers_taken, bonus_colour } => Kind::Built(pb::Built {
            seat: u(seat.0),
            shape: shape_out(*shape),
            colour: u(colour.0),
            cells: cells.iter().copied().map(cell).collect(),
            markers_taken: markers(markers_taken),
            bonus_colour: bonus_colour.map(|c| u(c.0)),
        }),
        game::Effect::CardinalMoved { seat, x, y } => Kind::CardinalMoved(pb::CardinalMoved { seat: u(seat.0), x: *x, y: *y }),
        game::Effect::CardinalKept { seat } => Kind::CardinalKept(pb::CardinalKept { seat: u(seat.0) }),
        game::Effect::ForcedPass { seat } => Kind::ForcedPass(pb::ForcedPass { seat: u(seat.0) }),
        game::Effect::GameEnded { scoring: s } => Kind::GameEnded(pb::GameEnded { scoring: Some(scoring(s)) }),
    };
    pb::Effect { kind: Some(kind) }
}
