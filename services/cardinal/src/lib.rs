//! Cardinal (Wolfgang Panning, Holzinsel 2000) as a ludotheque engine.
//!
//! Players take turns building houses, towers and squares around a
//! cathedral under seven placement laws, take a score marker for every edge
//! their new building shares with another building, and steer the cardinal
//! to block a cell. The rules, with their ids `CA-1` … `CA-24`, are in
//! `docs/rules/cardinal.md`; every refusal cites one.
//!
//! A turn is two moves by the same seat: a [`Move::Build`], then
//! [`Move::MoveCardinal`] or [`Move::KeepCardinal`]. Seats that cannot build
//! are passed automatically ([`Effect::ForcedPass`]), so the seat to move
//! always has a legal move; when nobody can build the game ends
//! ([`Effect::GameEnded`]).
//!
//! Coordinates: the cathedral's nave is at (0, 0) and its tower at (1, 0);
//! x grows east, y grows north, and the grid is unbounded.
#![warn(missing_docs)]

mod cell;
mod effect;
mod game;
mod info;
mod markers;
mod moves;
mod narrate;
mod options;
mod pieces;
mod scoring;
mod seats;
mod town;
mod view;

pub use cell::{Cell, Orientation};
pub use effect::Effect;
pub use game::Game;
pub use info::Info;
pub use markers::{MARKERS_PER_COLOUR, MarkerCount};
pub use moves::Move;
pub use options::Options;
pub use pieces::{BUILDINGS_PER_SHAPE, Building, Colour, Shape};
pub use scoring::{Scoring, SeatScore};
pub use town::{CATHEDRAL_TOWER, NAVE};
pub use view::{BuildingsLeft, Cathedral, LastBuilt, Phase, SeatView, View};
