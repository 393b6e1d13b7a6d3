//! One joust (deal) from the opening of the bidding to its score: the
//! phases and their transitions. Deciding ([`JoustState::check`]) may
//! refuse; evolving ([`JoustState::evolve`]) an accepted move never fails.

use ludo_engine::{MoveError, Seat};

use crate::bidding::{Bidding, BiddingOutcome, Call, Contract, FamilyCard};
use crate::chaos::{Chaos, first_to_decide, second_to_decide};
use crate::crowns::{Camp, Crowns, joust_crowns};
use crate::effects::Effect;
use crate::favoured::{Favouring, favouring};
use crate::knights::{Knight, SEATS};
use crate::moves::Move;
use crate::opening::OpeningAnswer;
use crate::tournaments::{Play, TOURNAMENTS, Tournament, follows, tournament_winner};

/// Where a joust stands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub(crate) enum Phase {
    /// The talking rounds (B13-10 … B13-13).
    Bidding(Bidding),
    /// The master chooses the favoured family (B13-15).
    ChoosingFamily,
    /// An opponent decides on the Chaos card (B13-16).
    Chaos {
        /// The opponent to decide.
        next: Seat,
    },
    /// The tournaments (B13-17).
    Tournaments {
        /// The seat whose knight is played next (the servant's is chosen by the master).
        next: Seat,
    },
    /// All 13 tournaments are played and the joust is scored.
    Over,
}

/// What kind of decision is awaited, and from whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Decision))]
pub enum Decision {
    /// The opener lays their first bid card (no pass allowed, B13-10).
    OpenBidding,
    /// Lay a bid card or pass (B13-10).
    Bid,
    /// The master chooses the favoured family (B13-15).
    ChooseFamily,
    /// Activate the Chaos card or decline (B13-16).
    Chaos,
    /// Play one of your knights (B13-17).
    Play,
    /// The master plays one of the servant's knights (B13-18).
    PlayForServant,
}

/// Whose decision is awaited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Turn))]
pub struct Turn {
    /// The seat that must submit the move.
    pub seat: Seat,
    /// What kind of move.
    pub decision: Decision,
    /// The seat the decision is for: the servant when the master plays a
    /// servant's knight, otherwise `seat` itself.
    pub for_seat: Seat,
}

/// What an accepted move did to the joust, for the match to follow up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JoustOutcome {
    /// The joust goes on.
    Continue,
    /// Four passes and no tournaments card: deal again (B13-13).
    Void,
    /// The 13th tournament is over; the joust earned these crowns.
    Scored(Crowns),
}

/// A joust's whole state (private; [`crate::Joust`] is its public picture).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct JoustState {
    /// The joust's number, from 1.
    pub number: u32,
    /// Which deal of this joust, from 1.
    pub deal: u32,
    /// The first player (B13-8).
    pub first_player: Seat,
    /// The 13 knights each seat was dealt, sorted.
    pub dealt: [Vec<Knight>; SEATS],
    /// The knights each seat still holds, sorted.
    pub held: [Vec<Knight>; SEATS],
    /// The public statements of the opening check (B13-9).
    pub opening: Vec<OpeningAnswer>,
    /// Who opened the bidding.
    pub opener: Seat,
    /// Every call of the talking rounds, in order.
    pub calls: Vec<Call>,
    /// The contract, once the talking rounds are over.
    pub contract: Option<Contract>,
    /// The favoured family, once settled (Neutral: none).
    pub favoured: Option<FamilyCard>,
    /// The Chaos decision, once its phase began.
    pub chaos: Option<Chaos>,
    /// The tournaments so far (the last may be in progress).
    pub tournaments: Vec<Tournament>,
    /// Tournaments won by each camp.
    pub won: [u8; 2],
    /// The crowns earned, once the joust is over.
    pub crowns: Option<Crowns>,
    /// Where the joust stands.
    pub phase: Phase,
}

impl JoustState {
    /// A joust whose deal was opened by `opener` (B13-9).
    pub fn new(number: u32, deal: u32, first_player: Seat, dealt: [Vec<Knight>; SEATS], opening: Vec<OpeningAnswer>, opener: Seat) -> Self {
        JoustState {
            number,
            deal,
            first_player,
            held: dealt.clone(),
            dealt,
            opening,
            opener,
            calls: Vec::new(),
            contract: None,
            favoured: None,
            chaos: None,
            tournaments: Vec::new(),
            won: [0; 2],
            crowns: None,
            phase: Phase::Bidding(Bidding::new(opener)),
        }
    }

    /// Whether the servant's knights are public: after the first knight of
    /// the joust is played (B13-18).
    pub fn servant_public(&self) -> bool {
        self.tournaments.first().is_some_and(|t| !t.plays.is_empty())
    }

    /// The servant, once there is a contract.
    pub fn servant(&self) -> Option<Seat> {
        self.contract.map(|c| c.servant)
    }

    /// The decision awaited, if any.
    pub fn turn(&self) -> Option<Turn> {
        let (seat, decision) = match &self.phase {
            Phase::Bidding(b) if b.opening => (b.next, Decision::OpenBidding),
            Phase::Bidding(b) => (b.next, Decision::Bid),
            Phase::ChoosingFamily => (self.contract?.master, Decision::ChooseFamily),
            Phase::Chaos { next } => (*next, Decision::Chaos),
            Phase::Tournaments { next } => {
                let contract = self.contract?;
                if *next == contract.servant {
                    return Some(Turn { seat: contract.master, decision: Decision::PlayForServant, for_seat: *next });
                }
                (*next, Decision::Play)
            }
            Phase::Over => return None,
        };
        Some(Turn { seat, decision, for_seat: seat })
    }

    /// Every move `seat` may submit now.
    pub fn legal_moves(&self, seat: Seat) -> Vec<Move> {
        let Some(turn) = self.turn() else {
            return Vec::new();
        };
        if turn.seat != seat {
            return Vec::new();
        }
        match &self.phase {
            Phase::Bidding(b) => b
                .legal_calls()
                .map(|call| match call {
                    Some(card) => Move::Bid { card },
                    None => Move::Pass,
                })
                .collect(),
            Phase::ChoosingFamily => FamilyCard::ALL.iter().map(|&family| Move::ChooseFamily { family }).collect(),
            Phase::Chaos { .. } => vec![Move::Chaos, Move::DeclineChaos],
            Phase::Tournaments { next } => {
                let hand = &self.held[next.index()];
                let led = self.tournaments.last().and_then(Tournament::family_led);
                hand.iter().filter(|&&k| follows(hand, k, led)).map(|&knight| Move::Play { knight }).collect()
            }
            Phase::Over => Vec::new(),
        }
    }

    /// Checks `mv` by `seat` (a seat at the table) without changing anything.
    pub fn check(&self, seat: Seat, mv: &Move) -> Result<(), MoveError> {
        let Some(turn) = self.turn() else {
            return Err(MoveError::GameOver);
        };
        if turn.decision == Decision::PlayForServant && seat == turn.for_seat {
            return Err(MoveError::rule("B13-18", "the master chooses every knight the servant plays: the servant's seat cannot play"));
        }
        if seat != turn.seat {
            let chaos_move = matches!(mv, Move::Chaos | Move::DeclineChaos);
            let masters_camp = self.contract.is_some_and(|c| Camp::of(seat) == Camp::of(c.master));
            if matches!(self.phase, Phase::Chaos { .. }) && chaos_move && masters_camp {
                return Err(MoveError::rule("B13-16", "only the master's opponents decide on the Chaos card"));
            }
            return Err(MoveError::NotYourTurn { seat, to_move: vec![turn.seat] });
        }
        match (&self.phase, mv) {
            (Phase::Bidding(b), Move::Bid { card }) => b.check(seat, Some(*card)),
            (Phase::Bidding(b), Move::Pass) => b.check(seat, None),
            (Phase::Bidding(_), _) => Err(MoveError::rule("B13-10", "the talking rounds are on: lay a bid card or pass")),
            (Phase::ChoosingFamily, Move::ChooseFamily { .. }) => Ok(()),
            (Phase::ChoosingFamily, _) => Err(MoveError::rule("B13-15", "the master must choose the favoured family (or Neutral)")),
            (Phase::Chaos { .. }, Move::Chaos | Move::DeclineChaos) => Ok(()),
            (Phase::Chaos { .. }, _) => Err(MoveError::rule("B13-16", "activate the Chaos card or decline it before the first tournament")),
            (Phase::Tournaments { next }, Move::Play { knight }) => self.check_play(*next, *knight),
            (Phase::Tournaments { .. }, Move::Bid { .. } | Move::Pass) => Err(MoveError::rule("B13-13", "the talking rounds are over")),
            (Phase::Tournaments { .. }, Move::ChooseFamily { .. }) => {
                Err(MoveError::rule("B13-15", "the favoured family is already settled"))
            }
            (Phase::Tournaments { .. }, Move::Chaos | Move::DeclineChaos) => {
                Err(MoveError::rule("B13-16", "the Chaos card is decided before the first tournament"))
            }
            (Phase::Over, _) => Err(MoveError::GameOver),
        }
    }

    /// Checks that `player` may play `knight` now (B13-17, B13-18).
    fn check_play(&self, player: Seat, knight: Knight) -> Result<(), MoveError> {
        if !knight.exists() {
            return Err(MoveError::rule("B13-1", format!("there is no knight of strength {}", knight.strength)));
        }
        let hand = &self.held[player.index()];
        if !hand.contains(&knight) {
            let whose = if self.servant() == Some(player) { "the servant does" } else { "you do" };
            return Err(MoveError::rule("B13-17", format!("{whose} not hold the {knight}")));
        }
        let led = self.tournaments.last().and_then(Tournament::family_led);
        if !follows(hand, knight, led) {
            let led = led.map_or("", |f| f.name());
            return Err(MoveError::rule("B13-18", format!("you must follow the family led ({led})")));
        }
        Ok(())
    }

    /// Applies an accepted move (see [`JoustState::check`]) by `seat`.
    pub fn evolve(&mut self, seat: Seat, mv: &Move, effects: &mut Vec<Effect>) -> JoustOutcome {
        match (&mut self.phase, *mv) {
            (Phase::Bidding(b), Move::Bid { card }) => {
                effects.push(Effect::BidLaid { seat, card });
                let outcome = b.record(seat, Some(card));
                self.calls.push(Call { seat, card: Some(card) });
                self.after_call(outcome, effects)
            }
            (Phase::Bidding(b), Move::Pass) => {
                effects.push(Effect::Passed { seat });
                let outcome = b.record(seat, None);
                self.calls.push(Call { seat, card: None });
                self.after_call(outcome, effects)
            }
            (Phase::ChoosingFamily, Move::ChooseFamily { family }) => {
                self.favour(family, true, effects);
                JoustOutcome::Continue
            }
            (Phase::Chaos { .. }, Move::Chaos) => {
                effects.push(Effect::ChaosActivated { seat });
                if let Some(chaos) = &mut self.chaos {
                    chaos.activated_by = Some(seat);
                }
                self.start_tournaments();
                JoustOutcome::Continue
            }
            (Phase::Chaos { .. }, Move::DeclineChaos) => {
                effects.push(Effect::ChaosDeclined { seat });
                let first = self.chaos.as_ref().is_none_or(|c| c.declined.is_empty());
                if let Some(chaos) = &mut self.chaos {
                    chaos.declined.push(seat);
                }
                match self.contract {
                    Some(c) if first => self.phase = Phase::Chaos { next: second_to_decide(c.master) },
                    _ => self.start_tournaments(),
                }
                JoustOutcome::Continue
            }
            (Phase::Tournaments { next }, Move::Play { knight }) => {
                let player = *next;
                self.play(player, seat, knight, effects)
            }
            // Unreachable after a successful check: leave the state alone.
            _ => JoustOutcome::Continue,
        }
    }

    /// Follows up a call: end of the talking rounds or a void joust.
    fn after_call(&mut self, outcome: BiddingOutcome, effects: &mut Vec<Effect>) -> JoustOutcome {
        match outcome {
            BiddingOutcome::Continue => JoustOutcome::Continue,
            BiddingOutcome::Void => JoustOutcome::Void,
            BiddingOutcome::Ended(contract) => {
                effects.push(Effect::BiddingEnded { contract });
                self.contract = Some(contract);
                match favouring(&self.calls, &contract) {
                    // No choice left: settle it now rather than ask for a move with one outcome.
                    Favouring::Stands(family) => self.favour(family, false, effects),
                    Favouring::MasterChooses => self.phase = Phase::ChoosingFamily,
                }
                JoustOutcome::Continue
            }
        }
    }

    /// Settles the favoured family, then opens the Chaos decision (B13-16).
    fn favour(&mut self, family: FamilyCard, chosen: bool, effects: &mut Vec<Effect>) {
        self.favoured = Some(family);
        if let Some(c) = self.contract {
            effects.push(Effect::FamilyFavoured { master: c.master, family, chosen });
            self.chaos = Some(Chaos::default());
            self.phase = Phase::Chaos { next: first_to_decide(c.master) };
        }
    }

    /// The first tournament, led by the master's left (B13-17).
    fn start_tournaments(&mut self) {
        if let Some(c) = self.contract {
            let leader = c.master.next(SEATS);
            self.tournaments.push(Tournament { number: 1, leader, plays: Vec::new(), winner: None });
            self.phase = Phase::Tournaments { next: leader };
        }
    }

    /// Plays `player`'s `knight`, chosen by `by`; closes the tournament and
    /// the joust when complete.
    fn play(&mut self, player: Seat, by: Seat, knight: Knight, effects: &mut Vec<Effect>) -> JoustOutcome {
        let (Some(contract), Some(current)) = (self.contract, self.tournaments.last_mut()) else {
            return JoustOutcome::Continue;
        };
        self.held[player.index()].retain(|&k| k != knight);
        current.plays.push(Play { seat: player, knight });
        effects.push(Effect::KnightPlayed { seat: player, knight, by });
        if current.number == 1 && current.plays.len() == 1 {
            let servant = contract.servant;
            effects.push(Effect::ServantRevealed { servant, knights: self.held[servant.index()].clone() });
        }
        if current.plays.len() < SEATS {
            self.phase = Phase::Tournaments { next: player.next(SEATS) };
            return JoustOutcome::Continue;
        }
        let favoured = self.favoured.and_then(FamilyCard::family);
        let Some(winner) = tournament_winner(&current.plays, favoured).map(|p| p.seat) else {
            return JoustOutcome::Continue;
        };
        current.winner = Some(winner);
        let number = current.number;
        let camp = Camp::of(winner);
        self.won[camp.index()] += 1;
        effects.push(Effect::TournamentWon { number, winner, camp });
        if number < TOURNAMENTS {
            self.tournaments.push(Tournament { number: number + 1, leader: winner, plays: Vec::new(), winner: None });
            self.phase = Phase::Tournaments { next: winner };
            return JoustOutcome::Continue;
        }
        let master_camp = Camp::of(contract.master);
        let chaos = self.chaos.as_ref().is_some_and(Chaos::is_active);
        let crowns = joust_crowns(master_camp, contract.tournaments, self.won[master_camp.index()], chaos);
        self.crowns = Some(crowns);
        self.phase = Phase::Over;
        JoustOutcome::Scored(crowns)
    }
}
