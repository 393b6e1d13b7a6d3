//! The options chosen when a game is created.

use ludo_engine::Seat;

use crate::board::Board;

/// Options of a Kardinal & König game.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(default, deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Options))]
pub struct Options {
    /// The seat that keeps the black token and plays first (KK-8); `null`: drawn from the seed.
    pub first_seat: Option<Seat>,
    /// Standard rules or the dynamic variant (KK-28..KK-30).
    pub variant: Variant,
    /// The board to play on; `null`: the embedded reconstructed board (KK-3).
    /// The game service fills it at creation so the record carries the board.
    pub board: Option<Board>,
}

/// Which placement rules apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Variant))]
pub enum Variant {
    /// All pieces of a turn in one country; one abbey only in an empty country.
    #[default]
    Standard,
    /// Pieces may go into two countries (KK-28); two abbeys allowed in an empty country (KK-29).
    Dynamic,
}
