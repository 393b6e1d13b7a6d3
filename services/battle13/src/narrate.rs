//! One English sentence per effect, for a step-by-step replay viewer.
//!
//! Sentences are in the simple past, without a final full stop, and say only
//! what the (already redacted) effect carries: a deal lists only the hands
//! its viewer may see. Seats are named by their players' names, a camp by
//! its two players ("North and South"), families as the rules name them
//! (B13-1), counts of tournaments in words up to ten ("with ten
//! tournaments"); numbers printed on cards, joust and deal numbers and
//! crowns stay figures. A hand reads family by family, strengths joined by
//! slashes ("Eagle 2/5/11, Wolf 13"); a single knight as "Eagle 11".

use ludo_engine::Seat;
use ludo_engine::words::{and_list as join, plural, seat_name as name};

use crate::bidding::{BidCard, Contract, FamilyCard};
use crate::crowns::{Camp, Crowns};
use crate::effects::{DealtHand, Effect, VoidReason};
use crate::knights::Knight;

/// The sentence for `effect`, seats named by `seats[i]` ("seat N" past its end).
pub(crate) fn narrate(effect: &Effect, seats: &[String]) -> String {
    let name = |seat: Seat| name(seats, seat);
    match effect {
        Effect::JoustStarted { joust, first_player } => format!("Joust {joust} began with {} as first player", name(*first_player)),
        Effect::Dealt { joust, deal, hands } => dealt(seats, *joust, *deal, hands),
        Effect::OpeningAnswered { seat, twelve_weapons: true } => format!("{} held 12 weapons or more and opened the bidding", name(*seat)),
        Effect::OpeningAnswered { seat, twelve_weapons: false } => format!("{} held fewer than 12 weapons", name(*seat)),
        Effect::DealVoided { joust, deal, reason } => format!(
            "Joust {joust}, deal {deal} was void: {}, so the knights went back to the bag",
            match reason {
                VoidReason::NoOpener => "nobody held 12 weapons or more",
                VoidReason::AllPassed => "four passes and no tournaments card",
            }
        ),
        Effect::BidLaid { seat, card } => format!("{} laid {}", name(*seat), bid_card(*card)),
        Effect::Passed { seat } => format!("{} passed", name(*seat)),
        Effect::BiddingEnded { contract } => bidding_ended(seats, contract),
        Effect::FamilyFavoured { master, family, chosen } => family_favoured(&name(*master), *family, *chosen),
        Effect::ChaosActivated { seat } => format!("{} activated the Chaos card", name(*seat)),
        Effect::ChaosDeclined { seat } => format!("{} declined the Chaos card", name(*seat)),
        Effect::KnightPlayed { seat, knight, by } if by == seat => {
            format!("{} played {knight}", name(*seat))
        }
        Effect::KnightPlayed { seat, knight, by } => {
            format!("{} played {knight} from {}'s hand", name(*by), name(*seat))
        }
        Effect::ServantRevealed { servant, knights } if knights.is_empty() => {
            format!("{}'s knights were revealed", name(*servant))
        }
        Effect::ServantRevealed { servant, knights } => format!("{}'s knights were revealed: {}", name(*servant), hand(knights)),
        Effect::TournamentWon { number, winner, .. } => format!("Tournament {number} was won by {}", name(*winner)),
        Effect::JoustScored { joust, contract, chaos, tournaments_won, crowns, totals } => {
            joust_scored(seats, *joust, contract, *chaos, tournaments_won, *crowns, totals)
        }
        Effect::MatchWon { camp, winners, crowns } => {
            let mut out = format!("{} won the match", camp_named(seats, *camp, winners));
            let ours = crowns.get(camp.index());
            let theirs = crowns.get(camp.other().index());
            if let (Some(ours), Some(theirs)) = (ours, theirs) {
                out.push_str(&format!(" with {ours} crowns to {theirs}"));
            }
            out
        }
    }
}

/// "Joust 1, deal 1: the knights were dealt", followed by each visible hand.
fn dealt(seats: &[String], joust: u32, deal: u32, hands: &[DealtHand]) -> String {
    let mut out = format!("Joust {joust}, deal {deal}: the knights were dealt");
    for h in hands {
        // A hidden hand (`None`) is not mentioned at all.
        if let Some(knights) = &h.knights {
            out.push_str(&format!("; {} got ", name(seats, h.seat)));
            if knights.is_empty() {
                out.push_str("no knight");
            } else {
                out.push_str(&hand(knights));
            }
        }
    }
    out
}

/// "the Eagle family card", "the weapons card 25+", "the tournaments card 9".
fn bid_card(card: BidCard) -> String {
    match card {
        BidCard::Family { family } => format!("the {} family card", family_card(family)),
        BidCard::Weapons { value: 25 } => String::from("the weapons card 25+"),
        BidCard::Weapons { value } => format!("the weapons card {value}"),
        BidCard::Tournaments { value } => format!("the tournaments card {value}"),
    }
}

fn family_card(card: FamilyCard) -> &'static str {
    card.family().map_or("Neutral", |f| f.name())
}

/// "The bidding ended: North became master for a contract of nine tournaments, with South as servant".
fn bidding_ended(seats: &[String], contract: &Contract) -> String {
    format!(
        "The bidding ended: {} became master for a contract of {}, with {} as servant",
        name(seats, contract.master),
        plural(u32::from(contract.tournaments), "tournament"),
        name(seats, contract.servant)
    )
}

/// B13-15: a choice made now, or the master's latest family card standing.
fn family_favoured(master: &str, family: FamilyCard, chosen: bool) -> String {
    match (chosen, family.family()) {
        (true, Some(f)) => format!("{master} chose {f} as the favoured family"),
        (true, None) => format!("{master} chose Neutral: no family was favoured"),
        (false, Some(f)) => {
            format!("{master}'s latest family card stood: {f} was the favoured family")
        }
        (false, None) => {
            format!("{master}'s latest family card stood: Neutral, no family was favoured")
        }
    }
}

/// "Joust 2 was scored: North's contract of 9 was made with ten tournaments;
/// North and South earned 9 crowns (totals: North and South 9, East and West 4)".
fn joust_scored(
    seats: &[String],
    joust: u32,
    contract: &Contract,
    chaos: bool,
    tournaments_won: &[u8],
    crowns: Crowns,
    totals: &[u32],
) -> String {
    let master_camp = Camp::of(contract.master);
    // B13-21 … B13-23: only the master's camp scores a made contract.
    let made = crowns.camp == master_camp;
    let mut out = format!(
        "Joust {joust} was scored: {}'s contract of {} {}",
        name(seats, contract.master),
        contract.tournaments,
        if made { "was made" } else { "failed" }
    );
    if chaos {
        out.push_str(" under Chaos");
    }
    if let Some(won) = tournaments_won.get(master_camp.index()) {
        out.push_str(&format!(" with {}", plural(u32::from(*won), "tournament")));
    }
    out.push_str(&format!(
        "; {} earned {} crown{}",
        camp_named(seats, crowns.camp, &crowns.camp.seats()),
        crowns.crowns,
        if crowns.crowns == 1 { "" } else { "s" }
    ));
    let totals: Vec<String> = totals
        .iter()
        .enumerate()
        .map(|(i, n)| match u8::try_from(i) {
            Ok(i) => format!("{} {n}", camp_named(seats, Camp(i), &Camp(i).seats())),
            Err(_) => format!("camp {i} {n}"),
        })
        .collect();
    if !totals.is_empty() {
        out.push_str(&format!(" (totals: {})", totals.join(", ")));
    }
    out
}

/// A camp by its players, "North and South" (B13-5); "camp N" when it has none.
fn camp_named(seats: &[String], camp: Camp, members: &[Seat]) -> String {
    let members: Vec<String> = members.iter().map(|&s| name(seats, s)).collect();
    if members.is_empty() { format!("camp {}", camp.0) } else { join(&members) }
}

/// Knights family by family, in the order given: "Eagle 2/5/11, Wolf 13".
fn hand(knights: &[Knight]) -> String {
    let mut groups: Vec<String> = Vec::new();
    let mut last = None;
    for k in knights {
        if last == Some(k.family) {
            if let Some(group) = groups.last_mut() {
                group.push_str(&format!("/{}", k.strength));
            }
        } else {
            groups.push(k.to_string());
            last = Some(k.family);
        }
    }
    groups.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knights::Family::{Dragon, Eagle, Lion, Wolf};

    fn names() -> Vec<String> {
        ["North", "East", "South", "West"].map(String::from).to_vec()
    }

    fn say(effect: &Effect) -> String {
        narrate(effect, &names())
    }

    fn k(family: crate::knights::Family, strength: u8) -> Knight {
        Knight::new(family, strength)
    }

    #[test]
    fn joust_started() {
        let e = Effect::JoustStarted { joust: 2, first_player: Seat(3) };
        assert_eq!(say(&e), "Joust 2 began with West as first player");
    }

    /// B13-7, B13-25: hidden hands are not mentioned, visible ones are listed.
    #[test]
    fn dealt_lists_only_visible_hands() {
        let hidden = Effect::Dealt { joust: 1, deal: 1, hands: (0..4).map(|s| DealtHand { seat: Seat(s), knights: None }).collect() };
        assert_eq!(say(&hidden), "Joust 1, deal 1: the knights were dealt");
        let own = Effect::Dealt {
            joust: 1,
            deal: 2,
            hands: vec![
                DealtHand { seat: Seat(0), knights: None },
                DealtHand { seat: Seat(1), knights: Some(vec![k(Eagle, 2), k(Eagle, 5), k(Eagle, 11), k(Lion, 13)]) },
            ],
        };
        assert_eq!(say(&own), "Joust 1, deal 2: the knights were dealt; East got Eagle 2/5/11, Lion 13");
    }

    /// B13-9.
    #[test]
    fn opening_answered_yes_and_no() {
        let yes = Effect::OpeningAnswered { seat: Seat(2), twelve_weapons: true };
        assert_eq!(say(&yes), "South held 12 weapons or more and opened the bidding");
        let no = Effect::OpeningAnswered { seat: Seat(1), twelve_weapons: false };
        assert_eq!(say(&no), "East held fewer than 12 weapons");
    }

    /// B13-9, B13-13.
    #[test]
    fn deal_voided_gives_the_reason() {
        let e = Effect::DealVoided { joust: 3, deal: 1, reason: VoidReason::NoOpener };
        assert_eq!(say(&e), "Joust 3, deal 1 was void: nobody held 12 weapons or more, so the knights went back to the bag");
        let e = Effect::DealVoided { joust: 3, deal: 2, reason: VoidReason::AllPassed };
        assert_eq!(say(&e), "Joust 3, deal 2 was void: four passes and no tournaments card, so the knights went back to the bag");
    }

    /// B13-3, B13-10.
    #[test]
    fn bid_laid_names_the_card() {
        let bid = |card| say(&Effect::BidLaid { seat: Seat(1), card });
        assert_eq!(bid(BidCard::Family { family: FamilyCard::Dragon }), "East laid the Dragon family card");
        assert_eq!(bid(BidCard::Family { family: FamilyCard::Neutral }), "East laid the Neutral family card");
        assert_eq!(bid(BidCard::Weapons { value: 12 }), "East laid the weapons card 12");
        assert_eq!(bid(BidCard::Weapons { value: 25 }), "East laid the weapons card 25+");
        assert_eq!(bid(BidCard::Tournaments { value: 9 }), "East laid the tournaments card 9");
    }

    #[test]
    fn passed() {
        assert_eq!(say(&Effect::Passed { seat: Seat(3) }), "West passed");
    }

    /// B13-14.
    #[test]
    fn bidding_ended_names_master_contract_and_servant() {
        let e = Effect::BiddingEnded { contract: Contract::new(Seat(0), 9) };
        assert_eq!(say(&e), "The bidding ended: North became master for a contract of nine tournaments, with South as servant");
    }

    /// B13-15.
    #[test]
    fn family_favoured_chosen_or_standing() {
        let fav = |family, chosen| say(&Effect::FamilyFavoured { master: Seat(0), family, chosen });
        assert_eq!(fav(FamilyCard::Wolf, true), "North chose Wolf as the favoured family");
        assert_eq!(fav(FamilyCard::Neutral, true), "North chose Neutral: no family was favoured");
        assert_eq!(fav(FamilyCard::Eagle, false), "North's latest family card stood: Eagle was the favoured family");
        assert_eq!(fav(FamilyCard::Neutral, false), "North's latest family card stood: Neutral, no family was favoured");
    }

    /// B13-16.
    #[test]
    fn chaos_activated_and_declined() {
        assert_eq!(say(&Effect::ChaosActivated { seat: Seat(1) }), "East activated the Chaos card");
        assert_eq!(say(&Effect::ChaosDeclined { seat: Seat(3) }), "West declined the Chaos card");
    }

    /// B13-17, B13-18: the master plays the servant's knights.
    #[test]
    fn knight_played_by_its_owner_or_by_the_master() {
        let own = Effect::KnightPlayed { seat: Seat(1), knight: k(Wolf, 7), by: Seat(1) };
        assert_eq!(say(&own), "East played Wolf 7");
        let servant = Effect::KnightPlayed { seat: Seat(2), knight: k(Eagle, 11), by: Seat(0) };
        assert_eq!(say(&servant), "North played Eagle 11 from South's hand");
    }

    /// B13-18.
    #[test]
    fn servant_revealed_lists_the_knights() {
        let e = Effect::ServantRevealed { servant: Seat(2), knights: vec![k(Eagle, 2), k(Wolf, 1), k(Wolf, 13), k(Dragon, 7), k(Lion, 4)] };
        assert_eq!(say(&e), "South's knights were revealed: Eagle 2, Wolf 1/13, Dragon 7, Lion 4");
    }

    /// B13-19.
    #[test]
    fn tournament_won() {
        let e = Effect::TournamentWon { number: 5, winner: Seat(1), camp: Camp(1) };
        assert_eq!(say(&e), "Tournament 5 was won by East");
    }

    /// B13-21 … B13-23, with the rules' worked checks.
    #[test]
    fn joust_scored_made_and_failed() {
        let made = Effect::JoustScored {
            joust: 1,
            contract: Contract::new(Seat(1), 11),
            chaos: false,
            tournaments_won: vec![1, 12],
            crowns: Crowns { camp: Camp(1), crowns: 21 },
            totals: vec![0, 21],
        };
        assert_eq!(
            say(&made),
            "Joust 1 was scored: East's contract of 11 was made with 12 tournaments; \
             East and West earned 21 crowns (totals: North and South 0, East and West 21)"
        );
        let failed = Effect::JoustScored {
            joust: 2,
            contract: Contract::new(Seat(1), 11),
            chaos: true,
            tournaments_won: vec![3, 10],
            crowns: Crowns { camp: Camp(0), crowns: 22 },
            totals: vec![22, 21],
        };
        assert_eq!(
            say(&failed),
            "Joust 2 was scored: East's contract of 11 failed under Chaos with ten tournaments; \
             North and South earned 22 crowns (totals: North and South 22, East and West 21)"
        );
    }

    /// B13-24.
    #[test]
    fn match_won() {
        let e = Effect::MatchWon { camp: Camp(0), winners: vec![Seat(0), Seat(2)], crowns: vec![23, 12] };
        assert_eq!(say(&e), "North and South won the match with 23 crowns to 12");
    }

    #[test]
    fn seats_without_a_name_read_as_seat_n() {
        let e = Effect::TournamentWon { number: 13, winner: Seat(9), camp: Camp(1) };
        assert_eq!(say(&e), "Tournament 13 was won by seat 9");
        assert_eq!(narrate(&Effect::Passed { seat: Seat(0) }, &[]), "seat 0 passed");
        let odd = Effect::JoustScored {
            joust: 0,
            contract: Contract { master: Seat(200), servant: Seat(201), tournaments: 0 },
            chaos: false,
            tournaments_won: Vec::new(),
            crowns: Crowns { camp: Camp(7), crowns: 1 },
            totals: Vec::new(),
        };
        assert_eq!(narrate(&odd, &[]), "Joust 0 was scored: seat 200's contract of 0 failed; seat 1 and seat 3 earned 1 crown");
    }
}
