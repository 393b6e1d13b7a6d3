//! The state as one viewer may see it (KK-31).
//!
//! A seat sees its own hand; everybody sees hand sizes, the display, the
//! discard pile, the deck size, the board, the supplies and the scores.
//! Nobody sees the deck order or another hand until the game is over; then
//! everything is visible to everyone (`Viewer::Omniscient` always sees all).

use ludo_engine::{Seat, Viewer};

use crate::cards::CardKind;
use crate::country::Country;
use crate::effect::EndReason;
use crate::game::{Game, Step};
use crate::options::Variant;
use crate::scoring::{CountryScoring, FinalScoring};

/// The game as one viewer sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::View))]
pub struct View {
    /// The viewer's seat; `null` for a spectator (or an omniscient audit).
    pub viewer: Option<Seat>,
    /// The name of the board in play (the board itself is in the game's options).
    pub board: String,
    /// Standard rules or the dynamic variant.
    pub variant: Variant,
    /// Number of seats.
    pub players: u8,
    /// The seat holding the black token (KK-8); the game ends before its turn in the last round.
    pub first_seat: Seat,
    /// Whose turn it is and what they must do; `null` once the game is over.
    pub turn: Option<Turn>,
    /// Every seat: hand size, hand when visible, supplies, score.
    pub seats: Vec<SeatView>,
    /// The two face-up display slots.
    pub display: Vec<DisplaySlot>,
    /// Cards in the deck.
    pub deck_size: u32,
    /// The deck, top card first; only once the game is over (or for an omniscient viewer).
    pub deck: Option<Vec<CardKind>>,
    /// The discard pile, bottom card first (face up, KK-11).
    pub discard: Vec<CardKind>,
    /// Cards put back in the box at set-up (KK-6).
    pub removed: Vec<CardKind>,
    /// Every abbey on the board, in the board's site order.
    pub abbeys: Vec<AbbeyView>,
    /// Every country's seal, in KK-1 order.
    pub seals: Vec<SealView>,
    /// How often the deck has run out (0, 1 or 2).
    pub exhaustions: u8,
    /// Whether the last round (after the second exhaustion) is under way or over (KK-20).
    pub last_round: bool,
    /// The interim abbey scoring, once it happened (KK-19).
    pub interim: Option<Vec<CountryScoring>>,
    /// The final scoring, once the game is over.
    pub final_scoring: Option<FinalScoring>,
    /// Why the game ended, once it is over.
    pub end_reason: Option<EndReason>,
}

/// The turn in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::Turn))]
pub struct Turn {
    /// The seat to move.
    pub seat: Seat,
    /// What it must do.
    pub step: TurnStep,
    /// While drawing: cards still to draw to hold 3.
    pub cards_to_draw: u8,
}

/// What the seat to move must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::TurnStep))]
pub enum TurnStep {
    /// Place pieces (`place`) or exchange a card (`exchange`) (KK-9, KK-10).
    PlaceOrExchange,
    /// Refill the hand card by card (`draw_deck`, `take_display`) (KK-18).
    Draw,
    /// Last round: place pieces or `pass` (KK-20).
    PlaceOrPass,
}

/// One seat as the viewer sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::SeatView))]
pub struct SeatView {
    /// The seat.
    pub seat: Seat,
    /// Cards in its hand.
    pub hand_size: u8,
    /// Its hand in kind order; `null` unless the viewer may see it.
    pub hand: Option<Vec<CardKind>>,
    /// Abbeys not yet placed.
    pub abbeys_left: u8,
    /// Counsellors not yet placed.
    pub counsellors_left: u8,
    /// Its score so far (after the interim scoring; final once the game is over).
    pub score: i32,
}

/// A display slot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::DisplaySlot))]
pub struct DisplaySlot {
    /// The slot, 0 or 1.
    pub slot: u8,
    /// The face-up card; `null` when empty.
    pub card: Option<CardKind>,
}

/// An abbey on the board.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::AbbeyView))]
pub struct AbbeyView {
    /// The site id.
    pub site: String,
    /// The site's country.
    pub country: Country,
    /// The owner.
    pub seat: Seat,
}

/// A country's seal and its counsellors.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = kardinal::SealView))]
pub struct SealView {
    /// The country.
    pub country: Country,
    /// Counsellors per seat, indexed by seat.
    pub counsellors: Vec<u8>,
    /// Abbeys per seat in the country, indexed by seat.
    pub abbeys: Vec<u8>,
    /// The most counsellors the seal may hold now: the largest abbey count of one seat (KK-15).
    pub limit: u8,
}

impl Game {
    pub(crate) fn project(&self, viewer: Viewer) -> View {
        let players = self.players;
        let reveal_all = self.result.is_some() || viewer == Viewer::Omniscient;
        let sees = |seat: Seat| reveal_all || viewer.sees_private_of(seat);
        let turn = self.result.is_none().then(|| Turn {
            seat: self.turn,
            step: match (self.step, self.last_round()) {
                (Step::Refill, _) => TurnStep::Draw,
                (Step::Act, true) => TurnStep::PlaceOrPass,
                (Step::Act, false) => TurnStep::PlaceOrExchange,
            },
            cards_to_draw: if self.step == Step::Refill { self.cards_to_draw(self.turn) } else { 0 },
        });
        let seats = Seat::all(players)
            .map(|seat| {
                let s = seat.index();
                let hand = self.hands[s];
                SeatView {
                    seat,
                    hand_size: hand.len() as u8,
                    hand: sees(seat).then(|| hand.to_vec()),
                    abbeys_left: self.abbeys_left[s],
                    counsellors_left: self.counsellors_left[s],
                    score: self.scores[s],
                }
            })
            .collect();
        let abbeys = self
            .owner
            .iter()
            .enumerate()
            .filter_map(|(i, owner)| {
                owner.map(|seat| AbbeyView { site: self.board.board.sites[i].id.clone(), country: self.board.site_country[i], seat })
            })
            .collect();
        let seals = Country::ALL
            .iter()
            .map(|&country| SealView {
                country,
                counsellors: self.counsellors[country.index()][..players].to_vec(),
                abbeys: self.abbeys[country.index()][..players].to_vec(),
                limit: self.limit(country),
            })
            .collect();
        View {
            viewer: match viewer {
                Viewer::Seat(s) => Some(s),
                _ => None,
            },
            board: self.board.board.name.clone(),
            variant: self.variant,
            players: players as u8,
            first_seat: self.first_seat,
            turn,
            seats,
            display: (0..self.display.len()).map(|i| DisplaySlot { slot: i as u8, card: self.display[i] }).collect(),
            deck_size: self.deck.len() as u32,
            deck: reveal_all.then(|| self.deck.iter().rev().copied().collect()),
            discard: self.discard.clone(),
            removed: self.removed.clone(),
            abbeys,
            seals,
            exhaustions: self.exhaustions,
            last_round: self.last_round(),
            interim: self.interim.clone(),
            final_scoring: self.final_scoring.clone(),
            end_reason: self.end_reason,
        }
    }
}
