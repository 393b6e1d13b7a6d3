//! A whole match (B13-6, B13-8, B13-24): jousts one after another until a
//! camp reaches the target, and the [`Engine`] implementation.

use ludo_engine::{DeckRng, Engine, MoveError, Outcome, Seat, Setup, SetupError, Status, Viewer};

use crate::crowns::{Camp, seat_scores};
use crate::effects::{DealtHand, Effect, VoidReason};
use crate::joust::{JoustOutcome, JoustState};
use crate::knights::{Knight, SEATS, deal, is_full_deal};
use crate::moves::Move;
use crate::opening::opening_check;
use crate::view::View;

/// The match targets a game may choose (B13-6).
pub const TARGETS: [u32; 3] = [20, 50, 100];

/// Options chosen when a match is created.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(default, deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema), schema(as = battle13::Options))]
pub struct Options {
    /// First player of the first joust, 0 to 3; `null` draws it from the seed (B13-8).
    #[cfg_attr(feature = "schema", schema(value_type = Option<u8>, maximum = 3))]
    pub first_seat: Option<Seat>,
    /// Crowns a camp must reach to win the match: 20, 50 or 100 (B13-6).
    #[cfg_attr(feature = "schema", schema(schema_with = target_crowns_schema))]
    pub target_crowns: u32,
}

/// `target_crowns` in the OpenAPI document: one of [`TARGETS`], which is
/// all a new match accepts.
#[cfg(feature = "schema")]
fn target_crowns_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .enum_values(Some(TARGETS))
        .description(Some("Crowns a camp must reach to win the match: 20, 50 or 100 (B13-6)."))
        .default(Some(TARGETS[0].into()))
        .build()
}

impl Default for Options {
    fn default() -> Self {
        Options { first_seat: None, target_crowns: TARGETS[0] }
    }
}

/// A match of Battle 13: the current joust, the finished ones and the crowns.
///
/// Randomness comes only from `DeckRng::new(&setup.seed)`, drawn in this
/// order: `below(4)` for the first joust's first player when the option
/// `first_seat` is not given, then one full shuffle of the 52 knights per
/// deal, in the order the deals happen (redeals included). See
/// [`crate::bag`] for the bag's order and the deal.
///
/// With the `serde` feature a match (and an [`crate::Info`]) reads and
/// writes as JSON, so a computer player can be handed one over the network.
/// A match's generator holds its secret seed: write infos (whose generator
/// is a fixed one), not live matches.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Game {
    /// The options the match was created with.
    pub(crate) options: Options,
    /// The match's generator, advanced by each deal.
    pub(crate) rng: DeckRng,
    /// Each camp's crowns.
    pub(crate) crowns: [u32; 2],
    /// Every finished joust.
    pub(crate) history: Vec<JoustState>,
    /// The joust in play (the last one once the match is over).
    pub(crate) joust: JoustState,
    /// The winning camp, once the match is over.
    pub(crate) winner: Option<Camp>,
}

impl Game {
    /// Test support: a match whose first deal is `hands` (seat by seat) rather
    /// than drawn from the seed; later deals come from the seed as usual.
    /// Not reachable from the JSON API.
    ///
    /// # Errors
    /// As [`Engine::new`], and `hands` must be four hands of 13 holding each
    /// knight once.
    #[doc(hidden)]
    pub fn with_first_deal(setup: &Setup<Options>, hands: [Vec<Knight>; SEATS]) -> Result<(Self, Vec<Effect>), SetupError> {
        Self::start(setup, Some(hands))
    }

    /// Each camp's crowns, indexed by camp.
    #[must_use]
    pub fn crowns(&self) -> [u32; 2] {
        self.crowns
    }

    /// The winning camp, once the match is over.
    #[must_use]
    pub fn winner(&self) -> Option<Camp> {
        self.winner
    }

    /// The options the match was created with.
    #[must_use]
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The contract of the joust in play, once its bidding is over (public).
    #[must_use]
    pub fn contract(&self) -> Option<crate::bidding::Contract> {
        self.joust.contract
    }

    /// Tournaments won by each camp in the joust in play (public).
    #[must_use]
    pub fn tournaments_won(&self) -> [u8; 2] {
        self.joust.won
    }

    fn start(setup: &Setup<Options>, first_deal: Option<[Vec<Knight>; SEATS]>) -> Result<(Self, Vec<Effect>), SetupError> {
        if setup.players != SEATS {
            return Err(SetupError::PlayerCount { min: SEATS, max: SEATS, got: setup.players });
        }
        let options = setup.options.clone();
        if !TARGETS.contains(&options.target_crowns) {
            return Err(SetupError::InvalidOption {
                field: "target_crowns",
                reason: format!("must be 20, 50 or 100, not {}", options.target_crowns),
            });
        }
        if let Some(seat) = options.first_seat.filter(|s| s.index() >= SEATS) {
            return Err(SetupError::InvalidOption { field: "first_seat", reason: format!("must be a seat from 0 to 3, not {}", seat.0) });
        }
        let first_deal = match first_deal {
            Some(mut hands) if is_full_deal(&hands) => {
                hands.iter_mut().for_each(|h| h.sort_unstable());
                Some(hands)
            }
            Some(_) => {
                return Err(SetupError::InvalidOption {
                    field: "hands",
                    reason: "four hands of 13 knights holding each knight once".to_owned(),
                });
            }
            None => None,
        };
        let mut rng = DeckRng::new(&setup.seed);
        // First draw of the match, and only when the option leaves it open (B13-8).
        let first = options.first_seat.unwrap_or_else(|| Seat(rng.below(SEATS as u32) as u8));
        let mut effects = Vec::new();
        let joust = deal_until_opened(&mut rng, 1, first, 1, first_deal, &mut effects);
        let game = Game { options, rng, crowns: [0; 2], history: Vec::new(), joust, winner: None };
        Ok((game, effects))
    }

    /// Whether `viewer` may see the knights dealt to `seat` in deal `deal`
    /// of joust `joust`, now: always once the match is over, for any deal
    /// that is no longer in play (finished jousts and void deals), for one's
    /// own hand, and for the servant's once public (B13-25).
    pub(crate) fn sees_hand(&self, viewer: Viewer, joust: u32, deal: u32, seat: Seat) -> bool {
        if viewer == Viewer::Omniscient || self.winner.is_some() {
            return true;
        }
        let current = (self.joust.number, self.joust.deal);
        if (joust, deal) != current {
            // A deal from the future cannot be in this match's log: show nothing.
            return (joust, deal) < current;
        }
        viewer.sees_private_of(seat) || (self.joust.servant() == Some(seat) && self.joust.servant_public())
    }
}

/// Deals joust `number` (from deal `deal` on) until someone opens (B13-7,
/// B13-9), reporting each deal, each public opening statement and each void
/// deal. `given` replaces the first deal's shuffle (test support).
fn deal_until_opened(
    rng: &mut DeckRng,
    number: u32,
    first: Seat,
    mut deal_no: u32,
    mut given: Option<[Vec<Knight>; SEATS]>,
    effects: &mut Vec<Effect>,
) -> JoustState {
    if deal_no == 1 {
        effects.push(Effect::JoustStarted { joust: number, first_player: first });
    }
    loop {
        let hands = given.take().unwrap_or_else(|| deal(rng));
        let dealt = Seat::all(SEATS).map(|seat| DealtHand { seat, knights: Some(hands[seat.index()].clone()) });
        effects.push(Effect::Dealt { joust: number, deal: deal_no, hands: dealt.collect() });
        let (answers, opener) = opening_check(&hands, first);
        effects.extend(answers.iter().map(|a| Effect::OpeningAnswered { seat: a.seat, twelve_weapons: a.twelve_weapons }));
        if let Some(opener) = opener {
            return JoustState::new(number, deal_no, first, hands, answers, opener);
        }
        effects.push(Effect::DealVoided { joust: number, deal: deal_no, reason: VoidReason::NoOpener });
        deal_no += 1;
    }
}

impl Engine for Game {
    type Options = Options;
    type Move = Move;
    type View = View;
    type Effect = Effect;

    const KIND: &'static str = "battle13";
    const RULESET: &'static str = "battle13/1";
    const MIN_PLAYERS: usize = SEATS;
    const MAX_PLAYERS: usize = SEATS;

    fn new(setup: &Setup<Options>) -> Result<(Self, Vec<Effect>), SetupError> {
        Self::start(setup, None)
    }

    fn status(&self) -> Status {
        match self.winner {
            Some(camp) => Status::Finished { result: Outcome { scores: seat_scores(self.crowns), winners: camp.seats().to_vec() } },
            None => Status::InProgress { to_move: self.joust.turn().map(|t| vec![t.seat]).unwrap_or_default() },
        }
    }

    fn legal_moves(&self, seat: Seat) -> Vec<Move> {
        if self.winner.is_some() {
            return Vec::new();
        }
        self.joust.legal_moves(seat)
    }

    fn apply(&mut self, seat: Seat, mv: &Move) -> Result<Vec<Effect>, MoveError> {
        if seat.index() >= SEATS {
            return Err(MoveError::UnknownSeat { seat });
        }
        if self.winner.is_some() {
            return Err(MoveError::GameOver);
        }
        self.joust.check(seat, mv)?;
        let mut effects = Vec::new();
        match self.joust.evolve(seat, mv, &mut effects) {
            JoustOutcome::Continue => {}
            JoustOutcome::Void => {
                let (number, deal, first) = (self.joust.number, self.joust.deal, self.joust.first_player);
                effects.push(Effect::DealVoided { joust: number, deal, reason: VoidReason::AllPassed });
                // B13-13 clarification: deal again, same first player.
                self.joust = deal_until_opened(&mut self.rng, number, first, deal + 1, None, &mut effects);
            }
            JoustOutcome::Scored(crowns) => {
                let camp = crowns.camp;
                self.crowns[camp.index()] += crowns.crowns;
                if let Some(contract) = self.joust.contract {
                    effects.push(Effect::JoustScored {
                        joust: self.joust.number,
                        contract,
                        chaos: self.joust.chaos.as_ref().is_some_and(|c| c.is_active()),
                        tournaments_won: self.joust.won.to_vec(),
                        crowns,
                        totals: self.crowns.to_vec(),
                    });
                }
                self.history.push(self.joust.clone());
                // Only the scoring camp's total moved, and the other was below the
                // target before this joust: at most one camp can reach it (B13-24).
                if self.crowns[camp.index()] >= self.options.target_crowns {
                    self.winner = Some(camp);
                    effects.push(Effect::MatchWon { camp, winners: camp.seats().to_vec(), crowns: self.crowns.to_vec() });
                } else {
                    // B13-8: the previous master starts the next joust.
                    let first = self.joust.contract.map_or(self.joust.first_player, |c| c.master);
                    let number = self.joust.number + 1;
                    self.joust = deal_until_opened(&mut self.rng, number, first, 1, None, &mut effects);
                }
            }
        }
        Ok(effects)
    }

    fn view(&self, viewer: Viewer) -> View {
        View::of(self, viewer)
    }

    fn redact(&self, effect: &Effect, viewer: Viewer) -> Effect {
        match effect {
            Effect::Dealt { joust, deal, hands } => Effect::Dealt {
                joust: *joust,
                deal: *deal,
                hands: hands
                    .iter()
                    .map(|h| DealtHand {
                        seat: h.seat,
                        knights: h.knights.clone().filter(|_| self.sees_hand(viewer, *joust, *deal, h.seat)),
                    })
                    .collect(),
            },
            other => other.clone(),
        }
    }

    fn narrate(&self, effect: &Effect, seats: &[String]) -> String {
        crate::narrate::narrate(effect, seats)
    }

    /// The two camps (B13-5): seats 0 and 2 against seats 1 and 3.
    fn sides(_players: usize) -> Vec<Vec<Seat>> {
        [Camp::of(Seat(0)), Camp::of(Seat(1))].into_iter().map(|camp| camp.seats().to_vec()).collect()
    }
}
