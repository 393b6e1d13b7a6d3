//! The game state and its [`Engine`] implementation: set-up (KK-6..KK-8),
//! the turn structure (KK-9, KK-10, KK-18, KK-20) and the end (KK-20, KK-21).

use std::sync::Arc;

use ludo_engine::{DeckRng, Engine, MoveError, Outcome, Seat, Setup, SetupError, Status, Viewer};

use crate::board::{Board, BoardIndex, bits, embedded_index};
use crate::cards::{CardKind, Cards, removed_for};
use crate::chains;
use crate::country::Country;
use crate::effect::{self, Effect, EndReason};
use crate::moves::Move;
use crate::options::{Options, Variant};
use crate::scoring::{self, CountryScoring, FinalScoring, SeatChains, SeatTotal};
use crate::view::View;

/// Most seats at a table.
pub(crate) const MAX_PLAYERS: usize = 5;
/// Fewest seats at a table.
pub(crate) const MIN_PLAYERS: usize = 3;
/// Cards in a full hand.
pub(crate) const HAND_SIZE: usize = 3;
/// Face-up display slots.
pub(crate) const DISPLAY_SLOTS: usize = 2;
/// Abbeys per player (KK-5).
pub const ABBEYS_PER_SEAT: u8 = 20;
/// Counsellors per player (KK-5).
pub const COUNSELLORS_PER_SEAT: u8 = 8;

/// Where the seat to move is within its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
pub(crate) enum Step {
    /// Start of the turn: place, exchange, or (last round) pass.
    Act,
    /// After placing: drawing card by card until the hand holds 3 (KK-18).
    Refill,
}

/// A game of Kardinal & König: implements [`Engine`] (`kardinal`, ruleset `kardinal/1`, 3–5 seats).
///
/// # Randomness
/// Every random draw comes from `DeckRng::new(&setup.seed)`, in this order:
/// 1. when `first_seat` is not given: `below(players)` picks the first seat;
/// 2. the deck shuffle: the board's cards per kind, minus the cards removed
///    for the table size (KK-6), listed in [`CardKind::ALL`] order, shuffled
///    with `DeckRng::shuffle`; index 0 of the shuffled list is the top card.
///    The first seat is dealt the top 3 cards, then each next seat clockwise
///    the next 3; then display slot 0 and slot 1 are turned up;
/// 3. at the first exhaustion (KK-19): the discard pile, sorted by kind (so
///    the new deck depends only on which cards were discarded, not on the
///    order they reached the pile: an auditor needs only the counts), is
///    shuffled the same way; index 0 is again the top card.
///
/// Nothing else draws from the generator.
///
/// # JSON
/// With the `serde` feature a game (and an [`crate::Info`]) reads and writes
/// as JSON, so a computer player can be handed one over the network. The
/// embedded board is written as its name, any other board in full (and
/// validated when read). A game's generator holds its secret seed: write
/// infos (whose generator is a fixed one), not live games.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Game {
    #[cfg_attr(feature = "serde", serde(with = "crate::board::shared"))]
    pub(crate) board: Arc<BoardIndex>,
    pub(crate) variant: Variant,
    pub(crate) players: usize,
    pub(crate) first_seat: Seat,
    pub(crate) rng: DeckRng,
    /// The deck, top card last (so drawing is a `pop`).
    pub(crate) deck: Vec<CardKind>,
    pub(crate) display: [Option<CardKind>; DISPLAY_SLOTS],
    /// The discard pile, top card last.
    pub(crate) discard: Vec<CardKind>,
    pub(crate) removed: Vec<CardKind>,
    pub(crate) hands: Vec<Cards>,
    /// What everyone knows each hand holds at least: the cards it took from
    /// the display, less what it has spent or discarded of their kinds
    /// since (for computer players' information sets: see `info.rs`).
    pub(crate) known: Vec<Cards>,
    /// The owner of the abbey on each site, by site index.
    pub(crate) owner: Vec<Option<Seat>>,
    /// Sites holding an abbey (in JSON a decimal string: readers that go
    /// through an intermediate value do not keep `u128`s).
    #[cfg_attr(feature = "serde", serde(with = "crate::board::site_set"))]
    pub(crate) occupied: u128,
    /// Abbeys per country (index) per seat: kept alongside `owner` for speed.
    pub(crate) abbeys: [[u8; MAX_PLAYERS]; 9],
    /// Counsellors per country (index) per seat.
    pub(crate) counsellors: [[u8; MAX_PLAYERS]; 9],
    pub(crate) abbeys_left: [u8; MAX_PLAYERS],
    pub(crate) counsellors_left: [u8; MAX_PLAYERS],
    pub(crate) scores: [i32; MAX_PLAYERS],
    pub(crate) interim: Option<Vec<CountryScoring>>,
    pub(crate) final_scoring: Option<FinalScoring>,
    pub(crate) end_reason: Option<EndReason>,
    pub(crate) exhaustions: u8,
    pub(crate) turn: Seat,
    pub(crate) step: Step,
    pub(crate) result: Option<Outcome>,
}

impl Engine for Game {
    type Options = Options;
    type Move = Move;
    type View = View;
    type Effect = Effect;

    const KIND: &'static str = "kardinal";
    const RULESET: &'static str = "kardinal/1";
    const MIN_PLAYERS: usize = MIN_PLAYERS;
    const MAX_PLAYERS: usize = MAX_PLAYERS;

    fn new(setup: &Setup<Options>) -> Result<(Self, Vec<Effect>), SetupError> {
        let players = setup.players;
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&players) {
            return Err(SetupError::PlayerCount { min: MIN_PLAYERS, max: MAX_PLAYERS, got: players });
        }
        let board = match &setup.options.board {
            None => embedded_index(),
            Some(board) => {
                board.validate().map_err(|e| SetupError::InvalidOption { field: "board", reason: e.to_string() })?;
                let embedded = embedded_index();
                // Share the cached index when the service filled in the default board.
                if embedded.board == *board { embedded } else { Arc::new(BoardIndex::new(board.clone())) }
            }
        };
        if let Some(seat) = setup.options.first_seat.filter(|s| s.index() >= players) {
            return Err(SetupError::InvalidOption { field: "first_seat", reason: format!("{seat} is not at a table of {players}") });
        }

        let mut rng = DeckRng::new(&setup.seed);
        let mut effects = Vec::new();
        let (first_seat, drawn) = match setup.options.first_seat {
            Some(seat) => (seat, false),
            None => (Seat(rng.below(players as u32) as u8), true),
        };
        let removed = removed_for(players);
        let mut cards = Cards(board.card_counts);
        cards.remove_all(Cards::of(&removed));
        let mut deck = cards.to_vec();
        rng.shuffle(&mut deck);
        deck.reverse();
        if !removed.is_empty() {
            effects.push(Effect::CardsRemoved { cards: removed.clone() });
        }

        let mut hands = vec![Cards::default(); players];
        let mut seat = first_seat;
        for _ in 0..players {
            let dealt: Vec<CardKind> = (0..HAND_SIZE).filter_map(|_| deck.pop()).collect();
            hands[seat.index()] = Cards::of(&dealt);
            effects.push(Effect::Dealt { seat, cards: Some(dealt) });
            seat = seat.next(players);
        }
        let mut display = [None; DISPLAY_SLOTS];
        for (slot, place) in display.iter_mut().enumerate() {
            // The board's minimum deck size guarantees these cards (and one more).
            *place = deck.pop();
            if let Some(card) = *place {
                effects.push(Effect::DisplayRefilled { slot: slot as u8, card });
            }
        }
        effects.push(Effect::FirstSeat { seat: first_seat, drawn });
        effects.push(Effect::TurnStarted { seat: first_seat });

        let sites = board.board.sites.len();
        let mut abbeys_left = [0; MAX_PLAYERS];
        let mut counsellors_left = [0; MAX_PLAYERS];
        abbeys_left[..players].fill(ABBEYS_PER_SEAT);
        counsellors_left[..players].fill(COUNSELLORS_PER_SEAT);
        let game = Game {
            board,
            variant: setup.options.variant,
            players,
            first_seat,
            rng,
            deck,
            display,
            discard: Vec::new(),
            removed,
            hands,
            known: vec![Cards::default(); players],
            owner: vec![None; sites],
            occupied: 0,
            abbeys: [[0; MAX_PLAYERS]; 9],
            counsellors: [[0; MAX_PLAYERS]; 9],
            abbeys_left,
            counsellors_left,
            scores: [0; MAX_PLAYERS],
            interim: None,
            final_scoring: None,
            end_reason: None,
            exhaustions: 0,
            turn: first_seat,
            step: Step::Act,
            result: None,
        };
        Ok((game, effects))
    }

    fn status(&self) -> Status {
        match &self.result {
            Some(result) => Status::Finished { result: result.clone() },
            None => Status::InProgress { to_move: vec![self.turn] },
        }
    }

    fn legal_moves(&self, seat: Seat) -> Vec<Move> {
        let mut moves = Vec::new();
        if self.result.is_some() || seat != self.turn {
            return moves;
        }
        match self.step {
            Step::Act => {
                self.place_moves(seat, &mut moves);
                if self.last_round() {
                    moves.push(Move::Pass {});
                } else {
                    self.exchange_moves(seat, &mut moves);
                }
            }
            Step::Refill => self.draw_moves(&mut moves),
        }
        moves
    }

    fn apply(&mut self, seat: Seat, mv: &Move) -> Result<Vec<Effect>, MoveError> {
        if seat.index() >= self.players {
            return Err(MoveError::UnknownSeat { seat });
        }
        if self.result.is_some() {
            return Err(MoveError::GameOver);
        }
        if seat != self.turn {
            return Err(MoveError::NotYourTurn { seat, to_move: vec![self.turn] });
        }
        let mut effects = Vec::new();
        match (self.step, mv) {
            (Step::Act, Move::Place { pieces }) => {
                let plan = self.check_place(seat, pieces)?;
                self.commit_place(seat, pieces, &plan, &mut effects);
            }
            (Step::Act, Move::Exchange { discard, take }) => {
                self.check_exchange(seat, *discard, *take)?;
                self.commit_exchange(seat, *discard, *take, &mut effects);
            }
            (Step::Act, Move::Pass {}) => {
                if !self.last_round() {
                    return Err(MoveError::rule("KK-10", "passing is only allowed in the last round (KK-20); place, or exchange a card"));
                }
                effects.push(Effect::Passed { seat });
                self.end_turn(&mut effects);
            }
            (Step::Act, Move::DrawDeck {} | Move::TakeDisplay { .. }) => {
                return Err(MoveError::rule(
                    "KK-18",
                    "cards are drawn only to refill the hand after placing; place, exchange or pass first",
                ));
            }
            (Step::Refill, Move::DrawDeck {}) => {
                if self.deck.is_empty() {
                    return Err(MoveError::rule("KK-18", "the deck is empty"));
                }
                self.draw_from_deck(seat, &mut effects);
                self.after_refill_draw(seat, &mut effects);
            }
            (Step::Refill, Move::TakeDisplay { slot }) => {
                self.check_display_slot("KK-18", *slot)?;
                self.take_from_display(seat, *slot, &mut effects);
                self.after_refill_draw(seat, &mut effects);
            }
            (Step::Refill, Move::Place { .. } | Move::Exchange { .. } | Move::Pass {}) => {
                return Err(MoveError::rule(
                    "KK-18",
                    format!("finish refilling your hand first: draw {} more card(s)", self.cards_to_draw(seat)),
                ));
            }
        }
        Ok(effects)
    }

    fn view(&self, viewer: Viewer) -> View {
        self.project(viewer)
    }

    fn redact(&self, effect: &Effect, viewer: Viewer) -> Effect {
        effect::redact(effect, viewer, self.result.is_some())
    }

    fn narrate(&self, effect: &Effect, seats: &[String]) -> String {
        crate::narrate::narrate(effect, seats, &self.board.board)
    }
}

impl Game {
    /// The board this game is played on.
    #[must_use]
    pub fn board(&self) -> &Board {
        &self.board.board
    }

    /// Whether the second exhaustion has happened: no more drawing (KK-20).
    pub(crate) fn last_round(&self) -> bool {
        self.exhaustions >= 2
    }

    pub(crate) fn cards_to_draw(&self, seat: Seat) -> u8 {
        HAND_SIZE.saturating_sub(self.hands[seat.index()].len()) as u8
    }

    /// Ends the current turn: the game ends when the last round comes back
    /// to the first seat (KK-20), otherwise the next seat clockwise plays.
    pub(crate) fn end_turn(&mut self, effects: &mut Vec<Effect>) {
        let next = self.turn.next(self.players);
        if self.last_round() && next == self.first_seat {
            self.finish(EndReason::LastRoundOver, effects);
            return;
        }
        self.turn = next;
        self.step = Step::Act;
        effects.push(Effect::TurnStarted { seat: next });
    }

    /// Whether anyone can still place any piece, now or later (KK-21).
    /// Cards do not matter (exchanges eventually bring any); only pieces and room do.
    /// Once no abbey can be placed the counsellor limits are frozen, so a
    /// `false` here stays `false`.
    pub(crate) fn placement_possible(&self) -> bool {
        let free_site = self.occupied != self.all_sites();
        let seal_room = Country::ALL.into_iter().any(|c| self.seal(c) < self.limit(c));
        (0..self.players).any(|s| (self.abbeys_left[s] > 0 && free_site) || (self.counsellors_left[s] > 0 && seal_room))
    }

    pub(crate) fn all_sites(&self) -> u128 {
        let n = self.board.board.sites.len();
        if n == 128 { u128::MAX } else { (1u128 << n) - 1 }
    }

    /// Counsellors of all colours on a country's seal.
    pub(crate) fn seal(&self, country: Country) -> u8 {
        self.counsellors[country.index()].iter().sum()
    }

    /// The counsellor limit of a country: the largest abbey count of a single player there (KK-15).
    pub(crate) fn limit(&self, country: Country) -> u8 {
        self.abbeys[country.index()].iter().copied().max().unwrap_or(0)
    }

    /// Whether a country has no piece yet (KK-13): no abbey (a counsellor needs one).
    pub(crate) fn country_empty(&self, country: Country) -> bool {
        self.occupied & self.board.country_sites[country.index()] == 0
    }

    /// The abbey scoring of every country in the board's order (KK-24).
    fn abbey_scoring(&self) -> Vec<CountryScoring> {
        self.board
            .board
            .interim_scoring_order
            .iter()
            .map(|&country| {
                let abbeys = self.abbeys[country.index()][..self.players].to_vec();
                let points = scoring::abbey_points(&abbeys);
                CountryScoring { country, abbeys, points }
            })
            .collect()
    }

    /// The interim scoring (KK-19, KK-24).
    pub(crate) fn interim_scoring(&mut self, effects: &mut Vec<Effect>) {
        let countries = self.abbey_scoring();
        for c in &countries {
            for (s, p) in c.points.iter().enumerate() {
                self.scores[s] += p;
            }
        }
        effects.push(Effect::InterimScoring { countries: countries.clone(), scores: self.scores[..self.players].to_vec() });
        self.interim = Some(countries);
    }

    /// Ends the game with the final scoring (KK-24..KK-27).
    pub(crate) fn finish(&mut self, reason: EndReason, effects: &mut Vec<Effect>) {
        let players = self.players;
        let abbeys = self.abbey_scoring();
        let alliances: Vec<_> = self
            .board
            .alliances
            .iter()
            .map(|a| {
                let [x, y] = a.countries;
                scoring::alliance(a.number, a.countries, &self.counsellors[x.index()][..players], &self.counsellors[y.index()][..players])
            })
            .collect();
        let chains: Vec<SeatChains> = Seat::all(players)
            .map(|seat| {
                let owned = bits(self.occupied)
                    .filter(|&site| self.owner[usize::from(site)] == Some(seat))
                    .fold(0u128, |m, site| m | 1u128 << site);
                let found = chains::best_chains(&self.board.adjacency, owned);
                let points = chains::points(&found);
                let chains = found
                    .into_iter()
                    .map(|c| scoring::Chain { sites: c.into_iter().map(|s| self.board.site_id(s).to_owned()).collect() })
                    .collect();
                SeatChains { seat, chains, points }
            })
            .collect();
        let totals: Vec<SeatTotal> = Seat::all(players)
            .map(|seat| {
                let s = seat.index();
                let interim = self.interim.as_ref().map_or(0, |c| c.iter().map(|c| c.points[s]).sum());
                let abbey_points: i32 = abbeys.iter().map(|c| c.points[s]).sum();
                let alliance_points: i32 = alliances.iter().filter(|a| a.scorers.contains(&seat)).map(|a| a.points).sum();
                let chain_points = chains[s].points;
                SeatTotal {
                    seat,
                    interim,
                    abbeys: abbey_points,
                    alliances: alliance_points,
                    chains: chain_points,
                    total: self.scores[s] + abbey_points + alliance_points + chain_points,
                    unused_pieces: self.abbeys_left[s] + self.counsellors_left[s],
                }
            })
            .collect();
        for t in &totals {
            self.scores[t.seat.index()] = t.total;
        }
        let scores = self.scores[..players].to_vec();
        let unused: Vec<u8> = totals.iter().map(|t| t.unused_pieces).collect();
        let winners = scoring::winners(&scores, &unused);
        let scoring = FinalScoring { abbeys, alliances, chains, totals, winners: winners.clone() };
        self.result = Some(Outcome { scores, winners });
        self.final_scoring = Some(scoring.clone());
        self.end_reason = Some(reason);
        effects.push(Effect::GameEnded { reason, scoring });
    }
}
