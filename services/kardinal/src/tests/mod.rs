//! Rule tests beside the rules: one or more per rule id, named after what
//! they prove, and every worked check of `docs/rules/kardinal.md`. Positions are
//! built by editing a fresh game's state directly (these tests live inside
//! the crate for that).

mod audit;
mod legal;
mod rules;

use ludo_engine::{Engine, MoveError, Seat, Seed, Setup};

use crate::cards::{CardKind, Cards};
use crate::country::Country;
use crate::effect::Effect;
use crate::game::{Game, Step};
use crate::moves::{Move, Placement};
use crate::options::{Options, Variant};

pub(crate) use CardKind::{BavariaBurgundy as BB, EnglandSwabia as ES, France as FR, FranconiaAragon as FA, LotharingiaItaly as LI};

/// A fresh game: `players` seats, seat 0 first, a fixed seed.
pub(crate) fn game(players: usize) -> Game {
    game_with(players, Variant::Standard)
}

pub(crate) fn game_with(players: usize, variant: Variant) -> Game {
    let options = Options { first_seat: Some(Seat(0)), variant, board: None };
    Game::new(&Setup { players, options, seed: Seed([7; 32]) }).expect("set-up").0
}

pub(crate) fn s(n: u8) -> Seat {
    Seat(n)
}

impl Game {
    /// Gives `seat` exactly `cards` (test positions need not conserve cards).
    pub(crate) fn set_hand(&mut self, seat: Seat, cards: &[CardKind]) {
        self.hands[seat.index()] = Cards::of(cards);
    }

    /// Puts an abbey of `seat` on `site` as if placed earlier.
    pub(crate) fn put_abbey(&mut self, seat: Seat, site: &str) {
        let i = self.board.lookup.get(site).unwrap_or_else(|| panic!("no site {site}"));
        assert!(self.owner[usize::from(i)].is_none(), "{site} taken");
        let c = self.board.site_country[usize::from(i)].index();
        self.owner[usize::from(i)] = Some(seat);
        self.occupied |= 1u128 << i;
        self.abbeys[c][seat.index()] += 1;
        self.abbeys_left[seat.index()] -= 1;
    }

    /// Puts `n` abbeys of `seat` on the first free sites of `country`.
    pub(crate) fn put_abbeys(&mut self, seat: Seat, country: Country, n: usize) {
        for _ in 0..n {
            let free = self.board.country_sites[country.index()] & !self.occupied;
            assert!(free != 0, "no free site in {country}");
            let site = free.trailing_zeros() as u8;
            let id = self.board.site_id(site).to_owned();
            self.put_abbey(seat, &id);
        }
    }

    /// Puts `n` counsellors of `seat` on the seal of `country`.
    pub(crate) fn put_counsellors(&mut self, seat: Seat, country: Country, n: u8) {
        self.counsellors[country.index()][seat.index()] += n;
        self.counsellors_left[seat.index()] -= n;
    }

    /// The first free site of `country`.
    pub(crate) fn free_site(&self, country: Country) -> String {
        let free = self.board.country_sites[country.index()] & !self.occupied;
        self.board.site_id(free.trailing_zeros() as u8).to_owned()
    }

    /// The n-th free site of `country`.
    pub(crate) fn free_site_n(&self, country: Country, n: usize) -> String {
        let free = self.board.country_sites[country.index()] & !self.occupied;
        let site = crate::board::bits(free).nth(n).expect("enough free sites");
        self.board.site_id(site).to_owned()
    }

    /// Sets the deck (top card last in `cards` order given top first).
    pub(crate) fn set_deck_top_first(&mut self, cards: &[CardKind]) {
        self.deck = cards.iter().rev().copied().collect();
    }

    pub(crate) fn step(&self) -> Step {
        self.step
    }
}

/// Applies `mv`; on refusal checks that the state is unchanged.
pub(crate) fn play(g: &mut Game, seat: Seat, mv: Move) -> Result<Vec<Effect>, MoveError> {
    let before = g.clone();
    let result = g.apply(seat, &mv);
    if result.is_err() {
        assert_eq!(*g, before, "a refused move changed the state");
    }
    result
}

/// Places `pieces` by `seat`.
pub(crate) fn place(g: &mut Game, seat: Seat, pieces: Vec<Placement>) -> Result<Vec<Effect>, MoveError> {
    play(g, seat, Move::Place { pieces })
}

/// The rule id of a refusal.
pub(crate) fn rule_of(result: Result<Vec<Effect>, MoveError>) -> &'static str {
    match result {
        Err(MoveError::Rule { rule, .. }) => rule,
        other => panic!("expected a rule refusal, got {other:?}"),
    }
}

pub(crate) fn abbey(c: Country, site: &str, paid: &[CardKind]) -> Placement {
    Placement::abbey(c, site, paid)
}

pub(crate) fn counsellor(c: Country, paid: &[CardKind]) -> Placement {
    Placement::counsellor(c, paid)
}
