//! The board as data (KK-1, KK-2, KK-3): loading, validation, and the
//! indexed form the engine plays on.
//!
//! The printed board's sites and roads are not in the rules text, so the
//! board is a JSON document (the embedded default is
//! `board/reconstructed-v1.json`); a game's options carry the board it is
//! played on so its record never depends on a file that may change. The JSON
//! shape of [`Board`] *is* the file format, which is why the board always
//! derives serde (even without the crate's `serde` feature).

use std::sync::{Arc, OnceLock};

use crate::cards::{CardKind, KINDS};
use crate::country::Country;

/// The embedded default board (KK-3 reconstruction).
const EMBEDDED: &str = include_str!("../board/reconstructed-v1.json");

/// Most monastery sites a board may have: site sets are 128-bit masks.
pub const MAX_SITES: usize = 128;

/// Most roads a board may have (the printed board has 75).
pub const MAX_ROADS: usize = 384;

/// Most alliances a board may have: one per pair of countries.
pub const MAX_ALLIANCES: usize = 36;

/// Longest board name, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// Longest board note, in characters.
pub const MAX_NOTE_CHARS: usize = 2000;

/// Longest display name of a country, in characters.
pub const MAX_COUNTRY_NAME_CHARS: usize = 40;

/// Longest site id, in characters.
pub const MAX_SITE_ID_CHARS: usize = 40;

/// Fewest cards a board's deck may hold: 3 players remove 10 (KK-6) and
/// still need 3 hands, 2 display cards and one card left in the deck.
pub const MIN_DECK: usize = 22;

/// A board: countries, card kinds, monastery sites, roads, alliances and the
/// interim scoring order. Its JSON shape is the board file format.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Board))]
pub struct Board {
    /// The board's name and version, e.g. `kardinal-und-koenig/reconstructed-v1` (1 to 100 characters).
    #[cfg_attr(feature = "schema", schema(min_length = 1, max_length = 100))]
    pub name: String,
    /// Free text about the board's origin (at most 2000 characters).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(max_length = 2000))]
    pub note: String,
    /// The nine countries, each exactly once, with display names.
    pub countries: Vec<CountryInfo>,
    /// The five card kinds, each exactly once, with the number of cards.
    pub card_kinds: Vec<CardKindInfo>,
    /// The monastery sites where abbeys go (at most 128).
    #[cfg_attr(feature = "schema", schema(max_items = 128))]
    pub sites: Vec<Site>,
    /// Roads, each joining two sites (chains run along them, KK-26; at most 384).
    #[cfg_attr(feature = "schema", schema(max_items = 384))]
    pub roads: Vec<Road>,
    /// The alliances between pairs of countries, scored in number order (KK-25; at most 36).
    #[cfg_attr(feature = "schema", schema(max_items = 36))]
    pub alliances: Vec<Alliance>,
    /// The order in which countries are scored for abbeys (KK-24): each country once.
    pub interim_scoring_order: Vec<Country>,
}

/// A country's entry on the board.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::CountryInfo))]
pub struct CountryInfo {
    /// Which country.
    pub id: Country,
    /// English display name (at most 40 characters).
    #[cfg_attr(feature = "schema", schema(max_length = 40))]
    pub name: String,
    /// German display name (as printed on the board; at most 40 characters).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schema(max_length = 40))]
    pub german: String,
}

/// A card kind's entry on the board: which countries it names and how many cards there are.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::CardKindInfo))]
pub struct CardKindInfo {
    /// Which kind.
    pub id: CardKind,
    /// The countries the card names; must be exactly the kind's countries.
    pub countries: Vec<Country>,
    /// Cards of this kind in the full 5-player deck (KK-4).
    pub count: u8,
}

/// A monastery site: one abbey may stand on it (KK-14).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Site))]
pub struct Site {
    /// Unique id, used in moves and views (e.g. `cluny`; 1 to 40 characters).
    #[cfg_attr(feature = "schema", schema(min_length = 1, max_length = 40))]
    pub id: String,
    /// The country the site belongs to.
    pub country: Country,
    /// Drawing x coordinate (board canvas units).
    #[serde(default)]
    pub x: i32,
    /// Drawing y coordinate (board canvas units, growing downwards).
    #[serde(default)]
    pub y: i32,
}

/// A road between two sites, written as a two-element array of site ids.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(value_type = Vec<String>, as = kardinal::Road))]
pub struct Road(pub [String; 2]);

/// An alliance: a numbered pair of neighbouring countries (KK-2).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Alliance))]
pub struct Alliance {
    /// The alliance's number (1–15 on the printed board); alliances score in increasing order.
    pub number: u8,
    /// The two countries.
    #[cfg_attr(feature = "schema", schema(value_type = Vec<Country>))]
    pub countries: [Country; 2],
    /// Whether the line crosses the sea (drawing only: it is not a road).
    #[serde(default)]
    pub by_sea: bool,
}

/// Why a board document is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    /// Not valid JSON, or not the board's shape (an unknown country or card kind lands here).
    #[error("board JSON: {0}")]
    Json(String),
    /// A country is listed twice.
    #[error("country `{0}` is listed twice")]
    DuplicateCountry(Country),
    /// A country is missing from `countries`.
    #[error("country `{0}` is missing")]
    MissingCountry(Country),
    /// A card kind is listed twice.
    #[error("card kind `{0}` is listed twice")]
    DuplicateCardKind(CardKind),
    /// A card kind is missing.
    #[error("card kind `{0}` is missing")]
    MissingCardKind(CardKind),
    /// A card kind names other countries than the rules give it (KK-4).
    #[error("card kind `{kind}` must name exactly {expected}")]
    CardKindCountries {
        /// The kind.
        kind: CardKind,
        /// Its countries, as the rules give them.
        expected: String,
    },
    /// A card kind has fewer than 2 cards (3 players remove two of each, KK-6).
    #[error("card kind `{kind}` has {count} cards; at least 2 are needed")]
    CardCount {
        /// The kind.
        kind: CardKind,
        /// Its count.
        count: u8,
    },
    /// The deck is too small to set up a 3-player table.
    #[error("the deck holds {total} cards; at least {MIN_DECK} are needed")]
    DeckTooSmall {
        /// Cards in the deck.
        total: usize,
    },
    /// A site id is empty.
    #[error("site {index} has an empty id")]
    EmptySiteId {
        /// Its position in `sites`.
        index: usize,
    },
    /// Two sites share an id.
    #[error("site `{0}` is listed twice")]
    DuplicateSite(String),
    /// More sites than the engine supports.
    #[error("{0} sites; at most {MAX_SITES} are supported")]
    TooManySites(usize),
    /// A country has no monastery site.
    #[error("country `{0}` has no site")]
    CountryWithoutSite(Country),
    /// A road names a site that does not exist.
    #[error("road {index} names unknown site `{site}`")]
    UnknownRoadSite {
        /// Its position in `roads`.
        index: usize,
        /// The unknown id.
        site: String,
    },
    /// A road joins a site to itself.
    #[error("road {index} joins `{site}` to itself")]
    LoopRoad {
        /// Its position in `roads`.
        index: usize,
        /// The site.
        site: String,
    },
    /// Two roads join the same two sites.
    #[error("road {index} between `{a}` and `{b}` is listed twice")]
    DuplicateRoad {
        /// Position of the second copy in `roads`.
        index: usize,
        /// One end.
        a: String,
        /// The other end.
        b: String,
    },
    /// Two alliances share a number.
    #[error("alliance number {0} is used twice")]
    DuplicateAlliance(u8),
    /// An alliance joins a country to itself.
    #[error("alliance {0} joins a country to itself")]
    AllianceSameCountry(u8),
    /// A text is longer than the board format allows.
    #[error("`{field}` has {chars} characters; at most {max} are allowed")]
    TextTooLong {
        /// Which text (`note`, `sites[3].id` …).
        field: String,
        /// Its length in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// More roads than the board format allows.
    #[error("{0} roads; at most {MAX_ROADS} are allowed")]
    TooManyRoads(usize),
    /// More alliances than the board format allows.
    #[error("{0} alliances; at most {MAX_ALLIANCES} are allowed")]
    TooManyAlliances(usize),
    /// The interim scoring order does not list every country exactly once.
    #[error("interim_scoring_order must list each of the nine countries exactly once")]
    InterimOrder,
}

impl Board {
    /// The embedded default board (`board/reconstructed-v1.json`).
    #[must_use]
    pub fn embedded() -> Board {
        embedded_index().board.clone()
    }

    /// Parses and validates a board document.
    ///
    /// # Errors
    /// [`BoardError`] naming the first problem found.
    pub fn from_json(text: &str) -> Result<Board, BoardError> {
        let board: Board = serde_json::from_str(text).map_err(|e| BoardError::Json(e.to_string()))?;
        board.validate()?;
        Ok(board)
    }

    /// Checks the board's consistency: every id unique, every reference known, every country present.
    ///
    /// # Errors
    /// [`BoardError`] naming the first problem found.
    pub fn validate(&self) -> Result<(), BoardError> {
        self.validate_countries()?;
        self.validate_cards()?;
        self.validate_sites()?;
        self.validate_roads()?;
        self.validate_alliances()
    }

    /// Bounds on what a board may hold, checked for new games: a board
    /// travels in every game's options, so anyone creating a game chooses
    /// its size. (Not part of [`Board::validate`], which replays also run:
    /// a game recorded before these bounds still replays.)
    ///
    /// # Errors
    /// [`BoardError::TextTooLong`], [`BoardError::TooManyRoads`],
    /// [`BoardError::TooManyAlliances`].
    pub fn check_size(&self) -> Result<(), BoardError> {
        let text = |field: String, value: &str, max: usize| {
            let chars = value.chars().count();
            if chars > max { Err(BoardError::TextTooLong { field, chars, max }) } else { Ok(()) }
        };
        text("name".into(), &self.name, MAX_NAME_CHARS)?;
        text("note".into(), &self.note, MAX_NOTE_CHARS)?;
        for (i, country) in self.countries.iter().enumerate() {
            text(format!("countries[{i}].name"), &country.name, MAX_COUNTRY_NAME_CHARS)?;
            text(format!("countries[{i}].german"), &country.german, MAX_COUNTRY_NAME_CHARS)?;
        }
        for (i, site) in self.sites.iter().enumerate() {
            text(format!("sites[{i}].id"), &site.id, MAX_SITE_ID_CHARS)?;
        }
        if self.roads.len() > MAX_ROADS {
            return Err(BoardError::TooManyRoads(self.roads.len()));
        }
        if self.alliances.len() > MAX_ALLIANCES {
            return Err(BoardError::TooManyAlliances(self.alliances.len()));
        }
        Ok(())
    }

    fn validate_countries(&self) -> Result<(), BoardError> {
        let mut seen = [false; 9];
        for info in &self.countries {
            if std::mem::replace(&mut seen[info.id.index()], true) {
                return Err(BoardError::DuplicateCountry(info.id));
            }
        }
        if let Some(c) = Country::ALL.into_iter().find(|c| !seen[c.index()]) {
            return Err(BoardError::MissingCountry(c));
        }
        let mut seen = [false; 9];
        for &c in &self.interim_scoring_order {
            if std::mem::replace(&mut seen[c.index()], true) {
                return Err(BoardError::InterimOrder);
            }
        }
        if self.interim_scoring_order.len() != 9 {
            return Err(BoardError::InterimOrder);
        }
        Ok(())
    }

    fn validate_cards(&self) -> Result<(), BoardError> {
        let mut seen = [false; KINDS];
        let mut total = 0usize;
        for info in &self.card_kinds {
            if std::mem::replace(&mut seen[info.id.index()], true) {
                return Err(BoardError::DuplicateCardKind(info.id));
            }
            let mut given = info.countries.clone();
            given.sort_unstable();
            let mut expected = info.id.countries().to_vec();
            expected.sort_unstable();
            if given != expected {
                let names: Vec<&str> = info.id.countries().iter().map(|c| c.id()).collect();
                return Err(BoardError::CardKindCountries { kind: info.id, expected: names.join(" and ") });
            }
            if info.count < 2 {
                return Err(BoardError::CardCount { kind: info.id, count: info.count });
            }
            total += usize::from(info.count);
        }
        if let Some(k) = CardKind::ALL.into_iter().find(|k| !seen[k.index()]) {
            return Err(BoardError::MissingCardKind(k));
        }
        if total < MIN_DECK {
            return Err(BoardError::DeckTooSmall { total });
        }
        Ok(())
    }

    fn validate_sites(&self) -> Result<(), BoardError> {
        if self.sites.len() > MAX_SITES {
            return Err(BoardError::TooManySites(self.sites.len()));
        }
        let mut ids: Vec<&str> = Vec::with_capacity(self.sites.len());
        for (index, site) in self.sites.iter().enumerate() {
            if site.id.is_empty() {
                return Err(BoardError::EmptySiteId { index });
            }
            ids.push(&site.id);
        }
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(BoardError::DuplicateSite(w[0].to_owned()));
        }
        if let Some(c) = Country::ALL.into_iter().find(|&c| !self.sites.iter().any(|s| s.country == c)) {
            return Err(BoardError::CountryWithoutSite(c));
        }
        Ok(())
    }

    fn validate_roads(&self) -> Result<(), BoardError> {
        let lookup = SiteLookup::new(&self.sites);
        let mut pairs = Vec::with_capacity(self.roads.len());
        for (index, Road([a, b])) in self.roads.iter().enumerate() {
            let ia = lookup.get(a).ok_or_else(|| BoardError::UnknownRoadSite { index, site: a.clone() })?;
            let ib = lookup.get(b).ok_or_else(|| BoardError::UnknownRoadSite { index, site: b.clone() })?;
            if ia == ib {
                return Err(BoardError::LoopRoad { index, site: a.clone() });
            }
            let pair = (ia.min(ib), ia.max(ib));
            if pairs.contains(&pair) {
                return Err(BoardError::DuplicateRoad { index, a: a.clone(), b: b.clone() });
            }
            pairs.push(pair);
        }
        Ok(())
    }

    fn validate_alliances(&self) -> Result<(), BoardError> {
        let mut numbers = Vec::with_capacity(self.alliances.len());
        for alliance in &self.alliances {
            if numbers.contains(&alliance.number) {
                return Err(BoardError::DuplicateAlliance(alliance.number));
            }
            numbers.push(alliance.number);
            if alliance.countries[0] == alliance.countries[1] {
                return Err(BoardError::AllianceSameCountry(alliance.number));
            }
        }
        Ok(())
    }
}

/// Site id → index, by binary search over the sorted ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SiteLookup(Vec<(String, u8)>);

impl SiteLookup {
    fn new(sites: &[Site]) -> SiteLookup {
        let mut v: Vec<(String, u8)> = sites.iter().enumerate().map(|(i, s)| (s.id.clone(), i as u8)).collect();
        v.sort_unstable();
        SiteLookup(v)
    }

    pub fn get(&self, id: &str) -> Option<u8> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(id)).ok().map(|i| self.0[i].1)
    }
}

/// A validated board indexed for play: sites as bit positions, roads as
/// neighbour masks. Shared by every clone of a game (`Arc`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BoardIndex {
    /// The board as given (names, ids, drawing data).
    pub board: Board,
    pub lookup: SiteLookup,
    /// The country of each site, by site index.
    pub site_country: Vec<Country>,
    /// Neighbours of each site along roads.
    pub adjacency: Vec<u128>,
    /// The sites of each country, by country index.
    pub country_sites: [u128; 9],
    /// Alliances sorted by number.
    pub alliances: Vec<Alliance>,
    /// Cards per kind in the full deck.
    pub card_counts: [u8; KINDS],
}

impl BoardIndex {
    /// Indexes a board that passed [`Board::validate`].
    pub fn new(board: Board) -> BoardIndex {
        let lookup = SiteLookup::new(&board.sites);
        let site_country: Vec<Country> = board.sites.iter().map(|s| s.country).collect();
        let mut adjacency = vec![0u128; board.sites.len()];
        for Road([a, b]) in &board.roads {
            if let (Some(a), Some(b)) = (lookup.get(a), lookup.get(b)) {
                adjacency[usize::from(a)] |= 1u128 << b;
                adjacency[usize::from(b)] |= 1u128 << a;
            }
        }
        let mut country_sites = [0u128; 9];
        for (i, c) in site_country.iter().enumerate() {
            country_sites[c.index()] |= 1u128 << i;
        }
        let mut alliances = board.alliances.clone();
        alliances.sort_by_key(|a| a.number);
        let mut card_counts = [0u8; KINDS];
        for info in &board.card_kinds {
            card_counts[info.id.index()] = info.count;
        }
        BoardIndex { board, lookup, site_country, adjacency, country_sites, alliances, card_counts }
    }

    pub fn site_id(&self, site: u8) -> &str {
        &self.board.sites[usize::from(site)].id
    }
}

/// The embedded board, parsed and indexed once (a pure cache of constant data).
pub(crate) fn embedded_index() -> Arc<BoardIndex> {
    static INDEX: OnceLock<Arc<BoardIndex>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let board = Board::from_json(EMBEDDED).expect("the embedded board is valid (tested)");
            Arc::new(BoardIndex::new(board))
        })
        .clone()
}

/// A game's board in JSON: the embedded board as its name (a string), any
/// other board in full (an object, validated when read). Either way the
/// index is rebuilt on reading, shared with the cache for the embedded board.
#[cfg(feature = "serde")]
pub(crate) mod shared {
    use std::sync::Arc;

    use serde::de::{self, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Board, BoardIndex, embedded_index};

    pub(crate) fn serialize<S: Serializer>(index: &Arc<BoardIndex>, serializer: S) -> Result<S::Ok, S::Error> {
        let embedded = embedded_index();
        if Arc::ptr_eq(index, &embedded) || index.board == embedded.board {
            serializer.serialize_str(&embedded.board.name)
        } else {
            index.board.serialize(serializer)
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Arc<BoardIndex>, D::Error> {
        deserializer.deserialize_any(BoardVisitor)
    }

    struct BoardVisitor;

    impl<'de> Visitor<'de> for BoardVisitor {
        type Value = Arc<BoardIndex>;

        fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("the embedded board's name or a board")
        }

        fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
            let embedded = embedded_index();
            if name == embedded.board.name {
                Ok(embedded)
            } else {
                Err(E::custom(format_args!("unknown board `{name}`: only the embedded board (`{}`) goes by name", embedded.board.name)))
            }
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let board = Board::deserialize(de::value::MapAccessDeserializer::new(map))?;
            board.validate().map_err(de::Error::custom)?;
            let embedded = embedded_index();
            Ok(if board == embedded.board { embedded } else { Arc::new(BoardIndex::new(board)) })
        }
    }
}

/// A site set (`u128` mask) in JSON: a decimal string, since readers that go
/// through an intermediate value (`serde_json::Value`, tagged enums) do not
/// keep integers above `u64`.
#[cfg(feature = "serde")]
pub(crate) mod site_set {
    use serde::{Deserialize, Deserializer, Serializer, de};

    pub(crate) fn serialize<S: Serializer>(mask: &u128, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(mask)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u128, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(de::Error::custom)
    }
}

/// Iterates the set bits of a site mask, lowest first.
pub(crate) fn bits(mut mask: u128) -> impl Iterator<Item = u8> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let i = mask.trailing_zeros() as u8;
        mask &= mask - 1;
        Some(i)
    })
}
