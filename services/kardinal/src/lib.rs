//! Kardinal & König (Michael Schacht, 2000): the pure game engine of ludotheque.
//!
//! Rules: `docs/rules/kardinal.md` (ids `KK-1` … `KK-31`, cited by every refusal).
//! The board is data ([`Board`], KK-3), embedded by default and carried in
//! the [`Options`] so a game's record never depends on a file.
//!
//! A turn is several moves: a placement ([`Move::Place`]) is followed by
//! one move per card drawn ([`Move::DrawDeck`], [`Move::TakeDisplay`]) until
//! the hand holds 3 (KK-18); an exchange ([`Move::Exchange`]) is a whole
//! turn; [`Move::Pass`] exists only in the last round (KK-20). Automatic
//! steps (display refills, exhaustions, the interim scoring, the reshuffle,
//! the end) happen inside `apply` and are reported as [`Effect`]s.
//!
//! Determinism: every random draw comes from the game's seed, in the order
//! documented on [`Game`].
#![warn(missing_docs)]

mod board;
mod cards;
mod chains;
mod country;
mod drawing;
mod effect;
mod game;
mod info;
mod moves;
mod narrate;
mod options;
mod placement;
mod scoring;
mod view;

#[cfg(test)]
mod tests;

pub use board::{Alliance, Board, BoardError, CardKindInfo, CountryInfo, MAX_SITES, MIN_DECK, Road, Site};
pub use cards::CardKind;
pub use country::{Country, Piece};
pub use effect::{Effect, EndReason};
pub use game::{ABBEYS_PER_SEAT, COUNSELLORS_PER_SEAT, Game};
pub use info::Info;
pub use moves::{Move, Placement, Source};
pub use options::{Options, Variant};
pub use scoring::{AllianceScoring, Chain, CountryScoring, FinalScoring, SeatChains, SeatTotal};
pub use view::{AbbeyView, DisplaySlot, SealView, SeatView, Turn, TurnStep, View};
