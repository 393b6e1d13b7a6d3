//! Scoring (KK-23..KK-27): abbeys per country, alliances, chains, the winner.

use ludo_engine::Seat;

use crate::country::Country;

/// Abbey scoring of one country (KK-24), per seat.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::CountryScoring))]
pub struct CountryScoring {
    /// The country.
    pub country: Country,
    /// Abbeys each seat has there, indexed by seat.
    pub abbeys: Vec<u8>,
    /// Points each seat scores for it, indexed by seat.
    pub points: Vec<i32>,
}

/// Scoring of one alliance (KK-25).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::AllianceScoring))]
pub struct AllianceScoring {
    /// The alliance's number.
    pub number: u8,
    /// Its two countries.
    pub countries: Vec<Country>,
    /// Seats with the most counsellors in the first country (empty when its seal is empty).
    pub leaders_first: Vec<Seat>,
    /// Seats with the most counsellors in the second country (empty when its seal is empty).
    pub leaders_second: Vec<Seat>,
    /// Counsellors of all colours in both countries.
    pub counsellors: u8,
    /// Seats leading in both countries; each scores `points`.
    pub scorers: Vec<Seat>,
    /// Points each scorer gets (the counsellor total); 0 when nobody scores.
    pub points: i32,
}

/// A scored chain of abbeys (KK-26).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Chain))]
pub struct Chain {
    /// The site ids of the chain's abbeys, in road order (at least 4).
    pub sites: Vec<String>,
}

/// One seat's chains (KK-26).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::SeatChains))]
pub struct SeatChains {
    /// The seat.
    pub seat: Seat,
    /// A best set of vertex-disjoint chains (one of them when several tie).
    pub chains: Vec<Chain>,
    /// Points: one per abbey in these chains.
    pub points: i32,
}

/// One seat's final account.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::SeatTotal))]
pub struct SeatTotal {
    /// The seat.
    pub seat: Seat,
    /// Points from the interim scoring (0 when it never happened).
    pub interim: i32,
    /// Points from the final abbey scoring.
    pub abbeys: i32,
    /// Points from alliances.
    pub alliances: i32,
    /// Points from chains.
    pub chains: i32,
    /// The final score.
    pub total: i32,
    /// Abbeys and counsellors never placed (the tie-break, KK-27).
    pub unused_pieces: u8,
}

/// The final scoring in full (KK-24..KK-27).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::FinalScoring))]
pub struct FinalScoring {
    /// Abbeys, country by country in the board's scoring order.
    pub abbeys: Vec<CountryScoring>,
    /// Alliances in number order.
    pub alliances: Vec<AllianceScoring>,
    /// Chains, per seat.
    pub chains: Vec<SeatChains>,
    /// Totals, per seat.
    pub totals: Vec<SeatTotal>,
    /// The winners (several when they share the win).
    pub winners: Vec<Seat>,
}

/// Abbey points of one country (KK-24) from each seat's abbey count there.
pub(crate) fn abbey_points(abbeys: &[u8]) -> Vec<i32> {
    let total: i32 = abbeys.iter().map(|&n| i32::from(n)).sum();
    let mut counts: Vec<u8> = abbeys.iter().copied().filter(|&n| n > 0).collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts.dedup();
    // counts: the distinct group counts, highest first.
    abbeys
        .iter()
        .map(|&n| match counts.iter().position(|&c| c == n) {
            None => 0,
            Some(0) => total,
            Some(rank) => i32::from(counts[rank - 1]),
        })
        .collect()
}

/// Seats with the most counsellors on a seal (KK-25); nobody when it is empty.
pub(crate) fn leaders(counsellors: &[u8]) -> Vec<Seat> {
    let best = counsellors.iter().copied().max().unwrap_or(0);
    if best == 0 {
        return Vec::new();
    }
    Seat::all(counsellors.len()).filter(|s| counsellors[s.index()] == best).collect()
}

/// Scores one alliance from the per-seat counsellor counts of its two countries (KK-25).
pub(crate) fn alliance(number: u8, countries: [Country; 2], first: &[u8], second: &[u8]) -> AllianceScoring {
    let leaders_first = leaders(first);
    let leaders_second = leaders(second);
    let scorers: Vec<Seat> = leaders_first.iter().copied().filter(|s| leaders_second.contains(s)).collect();
    let counsellors: u8 = first.iter().chain(second).sum();
    let points = if scorers.is_empty() { 0 } else { i32::from(counsellors) };
    AllianceScoring { number, countries: countries.to_vec(), leaders_first, leaders_second, counsellors, scorers, points }
}

/// The winners (KK-27): highest total, then most unused pieces; the rest share.
pub(crate) fn winners(totals: &[i32], unused: &[u8]) -> Vec<Seat> {
    let best = totals.iter().copied().max().unwrap_or(0);
    let tied: Vec<Seat> = Seat::all(totals.len()).filter(|s| totals[s.index()] == best).collect();
    let most_unused = tied.iter().map(|s| unused[s.index()]).max().unwrap_or(0);
    tied.into_iter().filter(|s| unused[s.index()] == most_unused).collect()
}
