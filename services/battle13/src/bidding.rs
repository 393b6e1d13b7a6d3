//! The talking rounds (B13-10 … B13-14): bid cards, calls and the contract.

use ludo_engine::{MoveError, Seat};

use crate::knights::{Family, SEATS};

/// A family card (B13-3): one of the four families, or Neutral. As the
/// favoured family (B13-15), Neutral means that no family is favoured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::FamilyCard))]
pub enum FamilyCard {
    /// The Eagle card.
    Eagle,
    /// The Wolf card.
    Wolf,
    /// The Dragon card.
    Dragon,
    /// The Lion card.
    Lion,
    /// The Neutral card (all four symbols): no family.
    Neutral,
}

impl FamilyCard {
    /// The five family cards, in the rules' order.
    pub const ALL: [FamilyCard; 5] = [FamilyCard::Eagle, FamilyCard::Wolf, FamilyCard::Dragon, FamilyCard::Lion, FamilyCard::Neutral];

    /// The family this card names (`None` for Neutral).
    #[must_use]
    pub const fn family(self) -> Option<Family> {
        match self {
            FamilyCard::Eagle => Some(Family::Eagle),
            FamilyCard::Wolf => Some(Family::Wolf),
            FamilyCard::Dragon => Some(Family::Dragon),
            FamilyCard::Lion => Some(Family::Lion),
            FamilyCard::Neutral => None,
        }
    }
}

impl From<Family> for FamilyCard {
    fn from(family: Family) -> Self {
        match family {
            Family::Eagle => FamilyCard::Eagle,
            Family::Wolf => FamilyCard::Wolf,
            Family::Dragon => FamilyCard::Dragon,
            Family::Lion => FamilyCard::Lion,
        }
    }
}

/// The values of the seven weapons cards (B13-3); 25 reads "25+".
pub const WEAPONS_CARDS: [u8; 7] = [6, 9, 12, 15, 18, 21, 25];
/// The values of the seven tournaments cards (B13-3).
pub const TOURNAMENTS_CARDS: [u8; 7] = [7, 8, 9, 10, 11, 12, 13];
/// Bid cards in each player's set (B13-3): 5 family, 7 weapons, 7 tournaments.
pub const BID_CARDS: usize = 19;

/// A bid card (B13-3). Every player holds the same full set and lays each
/// card at most once per joust (B13-12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)
)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::BidCard))]
pub enum BidCard {
    /// A family card: the family the player is strongest in, or Neutral.
    Family {
        /// Which family card.
        family: FamilyCard,
    },
    /// A weapons card: information only (6, 9, 12, 15, 18, 21 or 25 for "25+").
    Weapons {
        /// The number printed on the card (25 means "25 or more").
        value: u8,
    },
    /// A tournaments card: how many tournaments the camp expects to win (7 to 13).
    Tournaments {
        /// The number printed on the card, 7 to 13.
        value: u8,
    },
}

impl BidCard {
    /// A player's full set of 19 bid cards, in a fixed order (family cards,
    /// weapons cards, tournaments cards): also the order of legal bids.
    #[must_use]
    pub fn set() -> Vec<BidCard> {
        let families = FamilyCard::ALL.iter().map(|&family| BidCard::Family { family });
        let weapons = WEAPONS_CARDS.iter().map(|&value| BidCard::Weapons { value });
        let tournaments = TOURNAMENTS_CARDS.iter().map(|&value| BidCard::Tournaments { value });
        families.chain(weapons).chain(tournaments).collect()
    }

    /// The card's position in [`BidCard::set`], or `None` when no such card exists.
    #[must_use]
    pub fn index(self) -> Option<usize> {
        match self {
            BidCard::Family { family } => Some(family as usize),
            BidCard::Weapons { value } => WEAPONS_CARDS.iter().position(|&v| v == value).map(|i| 5 + i),
            BidCard::Tournaments { value } => TOURNAMENTS_CARDS.iter().position(|&v| v == value).map(|i| 12 + i),
        }
    }
}

/// One turn of the talking rounds: a bid card laid, or a pass (B13-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Call))]
pub struct Call {
    /// The seat that spoke.
    pub seat: Seat,
    /// The card laid face up, or `null` for a pass.
    pub card: Option<BidCard>,
}

/// The contract of a joust (B13-14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Contract))]
pub struct Contract {
    /// The master player: who laid the highest tournaments card.
    pub master: Seat,
    /// The servant: the master's partner, whose knights the master plays.
    pub servant: Seat,
    /// Tournaments the master's camp must win: the highest tournaments card.
    pub tournaments: u8,
}

impl Contract {
    /// The contract of `master` for `tournaments`.
    #[must_use]
    pub fn new(master: Seat, tournaments: u8) -> Self {
        Contract { master, servant: master.next(SEATS).next(SEATS), tournaments }
    }
}

/// Where the talking rounds stand (the calls themselves live in the joust).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Bidding {
    /// Who speaks next.
    pub next: Seat,
    /// Passes in a row since the last card laid.
    pub passes: u8,
    /// Cards laid by each seat, a bit per index of [`BidCard::set`].
    pub laid: [u32; SEATS],
    /// The highest tournaments card laid so far, and who laid it.
    pub highest: Option<(u8, Seat)>,
    /// Whether no card has been laid yet (the opener may not pass, B13-10).
    pub opening: bool,
}

/// What a call did to the talking rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BiddingOutcome {
    /// The talking rounds go on.
    Continue,
    /// Three passes in a row after a tournaments card: the contract (B13-13, B13-14).
    Ended(Contract),
    /// Four passes in a row and no tournaments card: the joust is void (B13-13).
    Void,
}

impl Bidding {
    /// The talking rounds opened by `opener`.
    pub fn new(opener: Seat) -> Self {
        Bidding { next: opener, passes: 0, laid: [0; SEATS], highest: None, opening: true }
    }

    /// Whether `seat` has already laid `card` this joust.
    pub fn has_laid(&self, seat: Seat, index: usize) -> bool {
        self.laid[seat.index()] & (1 << index) != 0
    }

    /// Checks `card` (or a pass, `None`) by the seat to speak.
    pub fn check(&self, seat: Seat, card: Option<BidCard>) -> Result<(), MoveError> {
        let Some(card) = card else {
            if self.opening {
                return Err(MoveError::rule("B13-10", "the opener must lay a bid card: no pass on the first call"));
            }
            return Ok(());
        };
        let Some(index) = card.index() else {
            let reason = match card {
                BidCard::Weapons { value } => {
                    format!("there is no weapons card {value}: they read 6, 9, 12, 15, 18, 21 and 25 (25+)")
                }
                BidCard::Tournaments { value } => {
                    format!("there is no tournaments card {value}: they read 7 to 13")
                }
                BidCard::Family { .. } => "no such family card".to_owned(),
            };
            return Err(MoveError::rule("B13-3", reason));
        };
        if self.has_laid(seat, index) {
            return Err(MoveError::rule("B13-12", "you have already laid that card in this joust"));
        }
        match (card, self.highest) {
            (BidCard::Tournaments { value }, Some((highest, _))) if value <= highest => {
                Err(MoveError::rule("B13-11", format!("a tournaments card must be higher than every one laid (highest: {highest})")))
            }
            _ => Ok(()),
        }
    }

    /// Records an accepted call by the seat to speak.
    pub fn record(&mut self, seat: Seat, card: Option<BidCard>) -> BiddingOutcome {
        self.next = seat.next(SEATS);
        match card {
            Some(card) => {
                self.opening = false;
                self.passes = 0;
                if let Some(index) = card.index() {
                    self.laid[seat.index()] |= 1 << index;
                }
                if let BidCard::Tournaments { value } = card {
                    self.highest = Some((value, seat));
                }
                BiddingOutcome::Continue
            }
            None => {
                self.passes += 1;
                match self.highest {
                    Some((tournaments, master)) if self.passes >= 3 => BiddingOutcome::Ended(Contract::new(master, tournaments)),
                    None if usize::from(self.passes) >= SEATS => BiddingOutcome::Void,
                    _ => BiddingOutcome::Continue,
                }
            }
        }
    }

    /// The calls the seat to speak may make, in [`BidCard::set`] order, then the pass.
    pub fn legal_calls(&self) -> impl Iterator<Item = Option<BidCard>> + '_ {
        let seat = self.next;
        let cards = BidCard::set().into_iter().enumerate().filter_map(move |(i, card)| {
            let higher = match (card, self.highest) {
                (BidCard::Tournaments { value }, Some((highest, _))) => value > highest,
                _ => true,
            };
            (higher && !self.has_laid(seat, i)).then_some(Some(card))
        });
        cards.chain((!self.opening).then_some(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b13_3_each_player_holds_19_distinct_bid_cards() {
        let set = BidCard::set();
        assert_eq!(set.len(), BID_CARDS);
        for (i, card) in set.iter().enumerate() {
            assert_eq!(card.index(), Some(i));
        }
        assert_eq!(BidCard::Weapons { value: 7 }.index(), None);
        assert_eq!(BidCard::Tournaments { value: 14 }.index(), None);
        assert_eq!(BidCard::Tournaments { value: 6 }.index(), None);
    }

    #[test]
    fn b13_13_three_passes_end_the_bidding_only_after_a_tournaments_card() {
        let mut b = Bidding::new(Seat(1));
        assert_eq!(b.record(Seat(1), Some(BidCard::Weapons { value: 12 })), BiddingOutcome::Continue);
        for s in [2, 3, 0] {
            assert_eq!(b.record(Seat(s), None), BiddingOutcome::Continue);
        }
        assert_eq!(b.record(Seat(1), None), BiddingOutcome::Void);

        let mut b = Bidding::new(Seat(1));
        b.record(Seat(1), Some(BidCard::Tournaments { value: 8 }));
        b.record(Seat(2), None);
        b.record(Seat(3), None);
        assert_eq!(b.record(Seat(0), None), BiddingOutcome::Ended(Contract::new(Seat(1), 8)));
    }
}
