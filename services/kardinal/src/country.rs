//! The nine countries (KK-1) and the two kinds of piece (KK-5).

use crate::cards::CardKind;

/// One of the nine countries of the board (KK-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Country))]
pub enum Country {
    /// England (Angleterre).
    England,
    /// France.
    France,
    /// Aragon.
    Aragon,
    /// Lotharingia (Lothringen).
    Lotharingia,
    /// Franconia (Franken).
    Franconia,
    /// Swabia (Schwaben).
    Swabia,
    /// Bavaria (Bayern).
    Bavaria,
    /// Burgundy (Burgund).
    Burgundy,
    /// Italy (Italien).
    Italy,
}

impl Country {
    /// All nine countries in the order of KK-1 (the order of every per-country list).
    pub const ALL: [Country; 9] = [
        Country::England,
        Country::France,
        Country::Aragon,
        Country::Lotharingia,
        Country::Franconia,
        Country::Swabia,
        Country::Bavaria,
        Country::Burgundy,
        Country::Italy,
    ];

    /// The country's position in [`Country::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The snake_case id used in JSON and in the board file.
    #[must_use]
    pub const fn id(self) -> &'static str {
        match self {
            Country::England => "england",
            Country::France => "france",
            Country::Aragon => "aragon",
            Country::Lotharingia => "lotharingia",
            Country::Franconia => "franconia",
            Country::Swabia => "swabia",
            Country::Bavaria => "bavaria",
            Country::Burgundy => "burgundy",
            Country::Italy => "italy",
        }
    }

    /// The one card kind that names this country (KK-4: each country is on exactly one kind).
    #[must_use]
    pub const fn card_kind(self) -> CardKind {
        match self {
            Country::Franconia | Country::Aragon => CardKind::FranconiaAragon,
            Country::Bavaria | Country::Burgundy => CardKind::BavariaBurgundy,
            Country::Lotharingia | Country::Italy => CardKind::LotharingiaItaly,
            Country::England | Country::Swabia => CardKind::EnglandSwabia,
            Country::France => CardKind::France,
        }
    }
}

impl core::fmt::Display for Country {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.id())
    }
}

/// A kind of piece a player places (KK-5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Piece))]
pub enum Piece {
    /// An abbey: goes on a free monastery site (KK-14); 20 per player.
    Abbey,
    /// A counsellor: goes on a country's seal (KK-15); 8 per player.
    Counsellor,
}

impl core::fmt::Display for Piece {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Piece::Abbey => "abbey",
            Piece::Counsellor => "counsellor",
        })
    }
}
