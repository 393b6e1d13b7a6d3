//! What happened, for a log reader: the consequences of a move, including
//! the automatic steps (deals, opening check, scoring, next joust).

use ludo_engine::Seat;

use crate::bidding::{BidCard, Contract, FamilyCard};
use crate::crowns::{Camp, Crowns};
use crate::knights::Knight;

/// Why a deal was abandoned and the knights dealt again (same first player).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::VoidReason))]
pub enum VoidReason {
    /// Nobody holds 12 weapons or more (B13-9).
    NoOpener,
    /// Four passes in a row and no tournaments card laid (B13-13).
    AllPassed,
}

/// One seat's knights in a deal, as a viewer may see them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::DealtHand))]
pub struct DealtHand {
    /// The seat dealt these knights.
    pub seat: Seat,
    /// The 13 knights dealt, sorted; `null` when hidden from the viewer.
    pub knights: Option<Vec<Knight>>,
}

/// Something that happened, in order. Only a deal carries hidden knights;
/// they are blanked for each viewer who may not see them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(tag = "type", rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Effect))]
pub enum Effect {
    /// A joust begins (B13-8).
    JoustStarted {
        /// The joust's number, from 1.
        joust: u32,
        /// The first player: chosen or drawn for the first joust, then the previous master.
        first_player: Seat,
    },
    /// The knights were shuffled and dealt, 13 per seat (B13-7).
    Dealt {
        /// The joust dealt.
        joust: u32,
        /// Which deal of this joust, from 1 (redeals count up).
        deal: u32,
        /// Each seat's knights, hidden from whoever may not see them.
        hands: Vec<DealtHand>,
    },
    /// The server stated whether a seat holds 12 weapons or more (B13-9).
    OpeningAnswered {
        /// The seat the statement is about.
        seat: Seat,
        /// Whether it holds 12 weapons or more (the first "yes" opens the bidding).
        twelve_weapons: bool,
    },
    /// The deal is void; the knights go back to the bag and are dealt again.
    DealVoided {
        /// The joust whose deal is void.
        joust: u32,
        /// The void deal's number.
        deal: u32,
        /// Why.
        reason: VoidReason,
    },
    /// A seat laid a bid card (B13-10).
    BidLaid {
        /// Who laid it.
        seat: Seat,
        /// The card, now public.
        card: BidCard,
    },
    /// A seat passed (B13-10).
    Passed {
        /// Who passed.
        seat: Seat,
    },
    /// The talking rounds are over: the contract (B13-13, B13-14).
    BiddingEnded {
        /// The contract, its master and servant.
        contract: Contract,
    },
    /// The favoured family is settled (B13-15).
    FamilyFavoured {
        /// The master player.
        master: Seat,
        /// The favoured family; Neutral means none.
        family: FamilyCard,
        /// Whether the master chose it now (`false`: their latest family card stood).
        chosen: bool,
    },
    /// An opponent activated the Chaos card (B13-16).
    ChaosActivated {
        /// Who activated it.
        seat: Seat,
    },
    /// An opponent declined to activate the Chaos card (B13-16).
    ChaosDeclined {
        /// Who declined.
        seat: Seat,
    },
    /// A knight was played face up (B13-17).
    KnightPlayed {
        /// Whose knight it is.
        seat: Seat,
        /// The knight.
        knight: Knight,
        /// Who chose it: the seat itself, or the master for the servant (B13-18).
        by: Seat,
    },
    /// The servant's knights are now public (B13-18).
    ServantRevealed {
        /// The servant.
        servant: Seat,
        /// The servant's knights, sorted.
        knights: Vec<Knight>,
    },
    /// A tournament was won (B13-19).
    TournamentWon {
        /// The tournament's number, 1 to 13.
        number: u8,
        /// The seat whose knight won; it leads the next tournament.
        winner: Seat,
        /// The winner's camp.
        camp: Camp,
    },
    /// The joust is over and scored (B13-20 … B13-23); its hands are now public.
    JoustScored {
        /// The joust scored.
        joust: u32,
        /// Its contract.
        contract: Contract,
        /// Whether the Chaos card was active.
        chaos: bool,
        /// Tournaments won by each camp, indexed by camp.
        tournaments_won: Vec<u8>,
        /// The crowns earned, and by which camp.
        crowns: Crowns,
        /// Each camp's crowns after this joust, indexed by camp.
        totals: Vec<u32>,
    },
    /// A camp reached the target: the match is over (B13-24).
    MatchWon {
        /// The winning camp.
        camp: Camp,
        /// Its two seats.
        winners: Vec<Seat>,
        /// Final crowns of each camp, indexed by camp.
        crowns: Vec<u32>,
    },
}
