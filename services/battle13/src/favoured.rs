//! The favoured family (B13-15): whether the master chooses it or their
//! latest family card stands.

use ludo_engine::Seat;

use crate::bidding::{BidCard, Call, Contract, FamilyCard};

/// How the favoured family is settled once the contract is known (B13-15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Favouring {
    /// The master's latest family card stands: no decision to ask for.
    Stands(FamilyCard),
    /// The master chooses now (any family card, Neutral included).
    MasterChooses,
}

/// The latest family card `seat` laid in `calls`, if any.
pub(crate) fn latest_family_card(calls: &[Call], seat: Seat) -> Option<FamilyCard> {
    calls.iter().rev().find_map(|call| match call.card {
        Some(BidCard::Family { family }) if call.seat == seat => Some(family),
        _ => None,
    })
}

/// B13-15: the master chooses when they laid no family card, or when both
/// they and the servant laid one and their latest ones differ; otherwise the
/// master's latest family card stands. Neutral is a family card like the
/// others here: Neutral against Eagle "differs".
pub(crate) fn favouring(calls: &[Call], contract: &Contract) -> Favouring {
    let master = latest_family_card(calls, contract.master);
    let servant = latest_family_card(calls, contract.servant);
    match (master, servant) {
        (None, _) => Favouring::MasterChooses,
        (Some(m), Some(s)) if m != s => Favouring::MasterChooses,
        (Some(m), _) => Favouring::Stands(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fam(seat: u8, family: FamilyCard) -> Call {
        Call { seat: Seat(seat), card: Some(BidCard::Family { family }) }
    }

    #[test]
    fn b13_15_the_latest_family_card_counts() {
        let contract = Contract::new(Seat(0), 9);
        let calls = [fam(0, FamilyCard::Eagle), fam(2, FamilyCard::Lion), fam(0, FamilyCard::Lion)];
        assert_eq!(favouring(&calls, &contract), Favouring::Stands(FamilyCard::Lion));
        let calls = [fam(0, FamilyCard::Lion), fam(2, FamilyCard::Lion), fam(2, FamilyCard::Wolf)];
        assert_eq!(favouring(&calls, &contract), Favouring::MasterChooses);
        // Opponents' family cards do not matter.
        let calls = [fam(0, FamilyCard::Neutral), fam(1, FamilyCard::Lion)];
        assert_eq!(favouring(&calls, &contract), Favouring::Stands(FamilyCard::Neutral));
        assert_eq!(favouring(&[fam(2, FamilyCard::Wolf)], &contract), Favouring::MasterChooses);
    }
}
