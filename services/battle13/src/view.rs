//! What a viewer may see (B13-25).

use ludo_engine::{Seat, Viewer};

use crate::bidding::{Call, Contract, FamilyCard};
use crate::chaos::Chaos;
use crate::crowns::{Camp, Crowns};
use crate::joust::{JoustState, Turn};
use crate::knights::{Knight, SEATS};
use crate::r#match::Game;
use crate::opening::OpeningAnswer;
use crate::tournaments::Tournament;

/// One seat's knights in a joust, as the viewer may see them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Hand))]
pub struct Hand {
    /// The seat.
    pub seat: Seat,
    /// How many knights the seat still holds (always public).
    pub held_count: u8,
    /// The knights the seat still holds, sorted; `null` when hidden from the viewer.
    pub held: Option<Vec<Knight>>,
    /// The 13 knights the seat was dealt, sorted; `null` when hidden from the viewer.
    pub dealt: Option<Vec<Knight>>,
}

/// A joust as the viewer may see it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Joust))]
pub struct Joust {
    /// The joust's number, from 1.
    pub number: u32,
    /// Which deal of this joust is in play, from 1 (void deals count).
    pub deal: u32,
    /// The first player (B13-8).
    pub first_player: Seat,
    /// Who opened the bidding (the first "yes" of the opening check).
    pub opener: Seat,
    /// The public statements of the opening check, in order (B13-9).
    pub opening: Vec<OpeningAnswer>,
    /// Each seat's knights, indexed by seat.
    pub hands: Vec<Hand>,
    /// Every bid card laid and every pass, in order (B13-12).
    pub calls: Vec<Call>,
    /// The contract, once the talking rounds are over (B13-14).
    pub contract: Option<Contract>,
    /// The favoured family once settled; Neutral means none (B13-15).
    pub favoured: Option<FamilyCard>,
    /// The Chaos decision, once it has begun (B13-16).
    pub chaos: Option<Chaos>,
    /// Whether the servant's knights are public (after the first knight, B13-18).
    pub servant_public: bool,
    /// The tournaments so far; the last may be in progress (B13-17).
    pub tournaments: Vec<Tournament>,
    /// Tournaments won by each camp, indexed by camp.
    pub tournaments_won: Vec<u8>,
    /// The crowns this joust earned, once it is over.
    pub crowns: Option<Crowns>,
}

/// The match as one viewer may see it (B13-25).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::View))]
pub struct View {
    /// The viewer's seat; `null` for a spectator or an omniscient viewer.
    pub seat: Option<Seat>,
    /// Crowns a camp must reach to win (B13-6).
    pub target_crowns: u32,
    /// Each camp's crowns, indexed by camp (camp 0: seats 0 and 2).
    pub crowns: Vec<u32>,
    /// The joust in play (the last one once the match is over).
    pub joust: Joust,
    /// Every finished joust, hands included (they are public once it is over).
    pub history: Vec<Joust>,
    /// Whose decision is awaited, and what kind; `null` once the match is over.
    pub turn: Option<Turn>,
    /// The winning camp, once the match is over (B13-24).
    pub winner: Option<Camp>,
}

impl View {
    /// `game` as `viewer` may see it.
    pub(crate) fn of(game: &Game, viewer: Viewer) -> View {
        let seat = match viewer {
            Viewer::Seat(seat) => Some(seat),
            Viewer::Spectator | Viewer::Omniscient => None,
        };
        View {
            seat,
            target_crowns: game.options.target_crowns,
            crowns: game.crowns.to_vec(),
            joust: joust_view(&game.joust, |s| game.sees_hand(viewer, game.joust.number, game.joust.deal, s)),
            history: game.history.iter().map(|j| joust_view(j, |_| true)).collect(),
            turn: if game.winner.is_some() { None } else { game.joust.turn() },
            winner: game.winner,
        }
    }
}

/// The picture of `joust`, showing the knights of the seats `sees` admits.
fn joust_view(joust: &JoustState, sees: impl Fn(Seat) -> bool) -> Joust {
    let hands = Seat::all(SEATS)
        .map(|seat| {
            let visible = sees(seat);
            let held = &joust.held[seat.index()];
            Hand {
                seat,
                held_count: u8::try_from(held.len()).unwrap_or(u8::MAX),
                held: visible.then(|| held.clone()),
                dealt: visible.then(|| joust.dealt[seat.index()].clone()),
            }
        })
        .collect();
    Joust {
        number: joust.number,
        deal: joust.deal,
        first_player: joust.first_player,
        opener: joust.opener,
        opening: joust.opening.clone(),
        hands,
        calls: joust.calls.clone(),
        contract: joust.contract,
        favoured: joust.favoured,
        chaos: joust.chaos.clone(),
        servant_public: joust.servant_public(),
        tournaments: joust.tournaments.clone(),
        tournaments_won: joust.won.to_vec(),
        crowns: joust.crowns,
    }
}
