//! The cards (KK-4), the deck as built for a table (KK-6) and hands as multisets.

use crate::country::Country;

/// One of the five kinds of card (KK-4); a two-country card pays for either country.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::CardKind))]
pub enum CardKind {
    /// Franconia / Aragon (13 cards).
    FranconiaAragon,
    /// Bavaria / Burgundy (12 cards).
    BavariaBurgundy,
    /// Lotharingia / Italy (11 cards).
    LotharingiaItaly,
    /// England / Swabia (10 cards).
    EnglandSwabia,
    /// France (9 cards).
    France,
}

/// Number of card kinds.
pub(crate) const KINDS: usize = 5;

impl CardKind {
    /// All five kinds in the order of KK-4 (the order of every per-kind list).
    pub const ALL: [CardKind; KINDS] =
        [CardKind::FranconiaAragon, CardKind::BavariaBurgundy, CardKind::LotharingiaItaly, CardKind::EnglandSwabia, CardKind::France];

    /// The kind's position in [`CardKind::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The countries this card names (one or two).
    #[must_use]
    pub const fn countries(self) -> &'static [Country] {
        match self {
            CardKind::FranconiaAragon => &[Country::Franconia, Country::Aragon],
            CardKind::BavariaBurgundy => &[Country::Bavaria, Country::Burgundy],
            CardKind::LotharingiaItaly => &[Country::Lotharingia, Country::Italy],
            CardKind::EnglandSwabia => &[Country::England, Country::Swabia],
            CardKind::France => &[Country::France],
        }
    }

    /// Whether one card of this kind pays for a piece in `country` (KK-11).
    #[must_use]
    pub fn names(self, country: Country) -> bool {
        country.card_kind() == self
    }

    /// The snake_case id used in JSON and in the board file.
    #[must_use]
    pub const fn id(self) -> &'static str {
        match self {
            CardKind::FranconiaAragon => "franconia_aragon",
            CardKind::BavariaBurgundy => "bavaria_burgundy",
            CardKind::LotharingiaItaly => "lotharingia_italy",
            CardKind::EnglandSwabia => "england_swabia",
            CardKind::France => "france",
        }
    }
}

impl core::fmt::Display for CardKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.id())
    }
}

/// A multiset of cards, counted per kind: a hand's order carries no meaning,
/// so counting keeps equal hands equal and move generation cheap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Cards(pub [u8; KINDS]);

impl Cards {
    /// The multiset of `cards`.
    pub fn of(cards: &[CardKind]) -> Cards {
        let mut c = Cards::default();
        for &k in cards {
            c.add(k);
        }
        c
    }

    pub fn count(self, kind: CardKind) -> u8 {
        self.0[kind.index()]
    }

    pub fn len(self) -> usize {
        self.0.iter().map(|&n| usize::from(n)).sum()
    }

    pub fn add(&mut self, kind: CardKind) {
        self.0[kind.index()] += 1;
    }

    /// Removes one card of `kind`; false (and no change) when there is none.
    pub fn take(&mut self, kind: CardKind) -> bool {
        let n = &mut self.0[kind.index()];
        if *n == 0 {
            return false;
        }
        *n -= 1;
        true
    }

    /// Whether `other` is a sub-multiset of `self`.
    pub fn contains(self, other: Cards) -> bool {
        self.0.iter().zip(other.0).all(|(&have, need)| have >= need)
    }

    /// Removes what there is of `other`, kind by kind.
    pub fn remove_saturating(&mut self, other: Cards) {
        for (have, gone) in self.0.iter_mut().zip(other.0) {
            *have = have.saturating_sub(gone);
        }
    }

    /// Removes `other` (which must be contained).
    pub fn remove_all(&mut self, other: Cards) {
        for (have, need) in self.0.iter_mut().zip(other.0) {
            *have -= need;
        }
    }

    /// The cards in kind order (KK-4 order), repeated by count.
    pub fn to_vec(self) -> Vec<CardKind> {
        let mut v = Vec::with_capacity(self.len());
        for kind in CardKind::ALL {
            for _ in 0..self.count(kind) {
                v.push(kind);
            }
        }
        v
    }
}

/// The cards put back in the box at a table of `players` (KK-6): one of each
/// kind with 4 players, two of each with 3.
pub(crate) fn removed_for(players: usize) -> Vec<CardKind> {
    let per_kind = 5usize.saturating_sub(players).min(2);
    let mut removed = Vec::new();
    for kind in CardKind::ALL {
        for _ in 0..per_kind {
            removed.push(kind);
        }
    }
    removed
}
