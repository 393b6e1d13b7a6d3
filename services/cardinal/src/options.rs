//! The options of a new game.

use ludo_engine::Seat;

/// How a game of Cardinal is set up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(default, deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = cardinal::Options))]
pub struct Options {
    /// The seat that plays first; `null` or absent: drawn from the game's seed.
    pub first_seat: Option<Seat>,
}
