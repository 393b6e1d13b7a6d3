//! Playing cards to place pieces (KK-9, KK-11..KK-17, KK-28..KK-30):
//! checking a submitted placement, applying it, and listing every legal one.
//!
//! # Canonical legal moves
//! What a placement changes is the set of cards spent and the set of
//! pieces placed: the payment's assignment to pieces and the listing order
//! do not matter (cards go to the discard pile in kind order, and the
//! reshuffle sorts the pile anyway). The generator lists each distinct
//! (cards spent, pieces placed) pair exactly once, in a canonical spelling:
//! an abbey before a counsellor in the same country (the abbey can only
//! raise the counsellor limit, KK-16), two abbeys by increasing site index,
//! countries in KK-1 order, the single card before the joker. Any other
//! valid spelling a client sends is accepted too.

use ludo_engine::{MoveError, Seat};

use crate::board::bits;
use crate::cards::{CardKind, Cards};
use crate::country::{Country, Piece};
use crate::effect::Effect;
use crate::game::Game;
use crate::moves::{Move, Placement};
use crate::options::Variant;

/// Most pieces per turn (KK-11).
const MAX_PIECES: usize = 2;
/// Most cards per turn (KK-11).
const MAX_CARDS: usize = 3;

/// A checked placement: what to take from the hand and where the pieces go.
pub(crate) struct PlacePlan {
    pub spent: Cards,
    /// Each piece's country and, for an abbey, its site index.
    pub pieces: Vec<(Piece, Country, Option<u8>)>,
}

/// Shortens an id a client sent before quoting it back.
fn quote(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

impl Game {
    /// Checks a [`Move::Place`] against the rules and the board, piece by
    /// piece in the listed order (KK-16). Nothing is changed.
    pub(crate) fn check_place(&self, seat: Seat, pieces: &[Placement]) -> Result<PlacePlan, MoveError> {
        let s = seat.index();
        if pieces.is_empty() {
            return Err(MoveError::rule("KK-9", "a placement needs at least one piece"));
        }
        if pieces.len() > MAX_PIECES {
            return Err(MoveError::rule("KK-11", format!("at most {MAX_PIECES} pieces per turn, not {}", pieces.len())));
        }
        // Payments (KK-11).
        let mut spent = Cards::default();
        for p in pieces {
            match p.paid_with.as_slice() {
                [card] if card.names(p.country) => {}
                [card] => {
                    return Err(MoveError::rule(
                        "KK-11",
                        format!("a `{card}` card does not name {}: pay with a card naming it, or a joker (a pair)", p.country),
                    ));
                }
                [a, b] if a == b => {}
                [a, b] => {
                    return Err(MoveError::rule("KK-11", format!("`{a}` and `{b}` differ: a joker is two identical cards")));
                }
                [] => {
                    return Err(MoveError::rule("KK-11", format!("the {} in {} is not paid for", p.piece, p.country)));
                }
                more => {
                    return Err(MoveError::rule("KK-11", format!("a piece is paid with one card or a pair, not {} cards", more.len())));
                }
            }
            for &card in &p.paid_with {
                spent.add(card);
            }
        }
        if spent.len() > MAX_CARDS {
            return Err(MoveError::rule("KK-11", format!("at most {MAX_CARDS} cards per turn, not {}", spent.len())));
        }
        if !self.hands[s].contains(spent) {
            return Err(MoveError::rule("KK-9", "you do not hold the cards this placement pays with"));
        }
        // Countries (KK-12, KK-13, KK-28, KK-29).
        if self.variant == Variant::Standard && pieces.iter().any(|p| p.country != pieces[0].country) {
            return Err(MoveError::rule("KK-12", "all pieces of a turn go into one country"));
        }
        for c in Country::ALL.into_iter().filter(|&c| self.country_empty(c)) {
            let here: Vec<&Placement> = pieces.iter().filter(|p| p.country == c).collect();
            let counsellor = here.iter().any(|p| p.piece == Piece::Counsellor);
            match (self.variant, here.len()) {
                (_, 0) => {}
                (Variant::Standard, 2..) => {
                    return Err(MoveError::rule(
                        "KK-13",
                        format!("{c} has no piece yet: only one piece, an abbey, may be placed there this turn"),
                    ));
                }
                (Variant::Dynamic, 2..) if counsellor => {
                    return Err(MoveError::rule(
                        "KK-29",
                        format!("{c} has no piece yet: it may take two abbeys, but not an abbey and a counsellor"),
                    ));
                }
                _ if counsellor => {
                    return Err(MoveError::rule("KK-13", format!("{c} has no piece yet: the first piece placed there must be an abbey")));
                }
                _ => {}
            }
        }
        // Pieces, in order, each against the board left by the previous (KK-14..KK-17).
        let mut occupied = self.occupied;
        let mut abbeys = self.abbeys;
        let mut counsellors = self.counsellors;
        let (mut abbeys_left, mut counsellors_left) = (self.abbeys_left[s], self.counsellors_left[s]);
        let mut plan = Vec::with_capacity(pieces.len());
        for p in pieces {
            let c = p.country.index();
            match p.piece {
                Piece::Abbey => {
                    if abbeys_left == 0 {
                        return Err(MoveError::rule("KK-17", "you have no abbey left"));
                    }
                    let Some(id) = p.site.as_deref() else {
                        return Err(MoveError::rule("KK-14", "an abbey needs a monastery site (`site`)"));
                    };
                    let Some(site) = self.board.lookup.get(id) else {
                        return Err(MoveError::rule("KK-14", format!("there is no site `{}` on this board", quote(id))));
                    };
                    let actual = self.board.site_country[usize::from(site)];
                    if actual != p.country {
                        return Err(MoveError::rule("KK-14", format!("`{id}` is in {actual}, not in {}", p.country)));
                    }
                    if occupied & 1u128 << site != 0 {
                        return Err(MoveError::rule("KK-14", format!("`{id}` already holds an abbey")));
                    }
                    occupied |= 1u128 << site;
                    abbeys[c][s] += 1;
                    abbeys_left -= 1;
                    plan.push((Piece::Abbey, p.country, Some(site)));
                }
                Piece::Counsellor => {
                    if p.site.is_some() {
                        return Err(MoveError::rule("KK-15", "a counsellor goes on the seal: give no `site`"));
                    }
                    if counsellors_left == 0 {
                        return Err(MoveError::rule("KK-17", "you have no counsellor left"));
                    }
                    let limit = abbeys[c].iter().copied().max().unwrap_or(0);
                    let on_seal: u8 = counsellors[c].iter().sum();
                    if limit == 0 {
                        return Err(MoveError::rule("KK-15", format!("{} has no abbey: no counsellor may go there", p.country)));
                    }
                    if on_seal + 1 > limit {
                        return Err(MoveError::rule(
                            "KK-15",
                            format!("the seal of {} is full: {on_seal} counsellor(s), largest abbey count {limit}", p.country),
                        ));
                    }
                    counsellors[c][s] += 1;
                    counsellors_left -= 1;
                    plan.push((Piece::Counsellor, p.country, None));
                }
            }
        }
        Ok(PlacePlan { spent, pieces: plan })
    }

    /// Applies a checked placement, then moves on: the game may end at once
    /// (KK-21); in the last round the turn ends (no drawing, KK-20);
    /// otherwise the seat refills its hand (KK-18).
    pub(crate) fn commit_place(&mut self, seat: Seat, pieces: &[Placement], plan: &PlacePlan, effects: &mut Vec<Effect>) {
        let s = seat.index();
        self.hands[s].remove_all(plan.spent);
        self.known[s].remove_saturating(plan.spent);
        self.discard.extend(plan.spent.to_vec());
        for (&(piece, country, site), asked) in plan.pieces.iter().zip(pieces) {
            let c = country.index();
            match (piece, site) {
                (Piece::Abbey, Some(site)) => {
                    self.occupied |= 1u128 << site;
                    self.owner[usize::from(site)] = Some(seat);
                    self.abbeys[c][s] += 1;
                    self.abbeys_left[s] -= 1;
                }
                _ => {
                    self.counsellors[c][s] += 1;
                    self.counsellors_left[s] -= 1;
                }
            }
            effects.push(Effect::Placed {
                seat,
                piece,
                country,
                site: site.map(|i| self.board.site_id(i).to_owned()),
                paid_with: asked.paid_with.clone(),
            });
        }
        if !self.placement_possible() {
            self.finish(crate::effect::EndReason::NoPlacementLeft, effects);
        } else if self.last_round() {
            self.end_turn(effects);
        } else {
            self.step = crate::game::Step::Refill;
            if !self.can_draw() {
                let hand_size = self.hands[s].len() as u8;
                effects.push(Effect::RefillStopped { seat, hand_size });
                self.end_turn(effects);
            }
        }
    }

    /// Every distinct legal placement of `seat` (see the module docs).
    pub(crate) fn place_moves(&self, seat: Seat, out: &mut Vec<Move>) {
        let g = Gen::new(self, seat);
        if g.abbeys == 0 && g.counsellors == 0 {
            return;
        }
        for c in Country::ALL {
            g.one_country(c, out);
        }
        if self.variant == Variant::Dynamic {
            for (i, &c1) in Country::ALL.iter().enumerate() {
                for &c2 in &Country::ALL[i + 1..] {
                    g.two_countries(c1, c2, out);
                }
            }
        }
    }
}

/// How one piece is paid: one card, or a pair of one kind (a joker).
#[derive(Clone, Copy)]
struct Pay {
    kind: CardKind,
    joker: bool,
}

impl Pay {
    fn single(kind: CardKind) -> Pay {
        Pay { kind, joker: false }
    }
    fn joker(kind: CardKind) -> Pay {
        Pay { kind, joker: true }
    }
    fn cards(self) -> Vec<CardKind> {
        if self.joker { vec![self.kind, self.kind] } else { vec![self.kind] }
    }
}

/// One piece a country can take right now.
#[derive(Clone, Copy)]
enum Spot {
    Abbey(u8),
    Counsellor,
}

/// The move generator's view of one seat's options.
struct Gen<'a> {
    game: &'a Game,
    seat: usize,
    hand: Cards,
    abbeys: u8,
    counsellors: u8,
}

impl<'a> Gen<'a> {
    fn new(game: &'a Game, seat: Seat) -> Gen<'a> {
        let s = seat.index();
        Gen { game, seat: s, hand: game.hands[s], abbeys: game.abbeys_left[s], counsellors: game.counsellors_left[s] }
    }

    fn holds(&self, cards: &[CardKind]) -> bool {
        self.hand.contains(Cards::of(cards))
    }

    fn free(&self, c: Country) -> u128 {
        self.game.board.country_sites[c.index()] & !self.game.occupied
    }

    /// The single pieces `c` can take now, abbeys first.
    fn spots(&self, c: Country) -> Vec<Spot> {
        let mut spots = Vec::new();
        if self.abbeys > 0 {
            spots.extend(bits(self.free(c)).map(Spot::Abbey));
        }
        if self.counsellors > 0 && !self.game.country_empty(c) && self.game.seal(c) < self.game.limit(c) {
            spots.push(Spot::Counsellor);
        }
        spots
    }

    fn placement(&self, c: Country, spot: Spot, pay: Pay) -> Placement {
        match spot {
            Spot::Abbey(site) => Placement::abbey(c, self.game.board.site_id(site), &pay.cards()),
            Spot::Counsellor => Placement::counsellor(c, &pay.cards()),
        }
    }

    /// Ways to pay one piece in `c`: the card naming it, or a joker of any kind held twice.
    fn one_payments(&self, c: Country) -> Vec<Pay> {
        let own = c.card_kind();
        let mut pays = Vec::new();
        if self.hand.count(own) >= 1 {
            pays.push(Pay::single(own));
        }
        pays.extend(CardKind::ALL.into_iter().filter(|&k| self.hand.count(k) >= 2).map(Pay::joker));
        pays
    }

    /// Ways to pay two pieces in `c` (never two jokers: 4 cards).
    fn two_payments(&self, c: Country) -> Vec<(Pay, Pay)> {
        let own = c.card_kind();
        let mut pays = Vec::new();
        if self.holds(&[own, own]) {
            pays.push((Pay::single(own), Pay::single(own)));
        }
        for k in CardKind::ALL {
            if self.holds(&[own, k, k]) {
                pays.push((Pay::single(own), Pay::joker(k)));
            }
        }
        pays
    }

    /// One or two pieces in country `c`.
    fn one_country(&self, c: Country, out: &mut Vec<Move>) {
        let pays = self.one_payments(c);
        if pays.is_empty() {
            return;
        }
        let empty = self.game.country_empty(c);
        let spots: Vec<Spot> = self.spots(c);
        for &pay in &pays {
            for &spot in &spots {
                out.push(Move::Place { pieces: vec![self.placement(c, spot, pay)] });
            }
        }
        let pays2 = self.two_payments(c);
        if pays2.is_empty() {
            return;
        }
        let free: Vec<u8> = bits(self.free(c)).collect();
        let limit = self.game.limit(c);
        let seal = self.game.seal(c);
        let own_abbeys = self.game.abbeys[c.index()][self.seat];
        for &(p1, p2) in &pays2 {
            // Two abbeys: not in an empty country, except in the dynamic variant (KK-13, KK-29).
            if self.abbeys >= 2 && (!empty || self.game.variant == Variant::Dynamic) {
                for (i, &a) in free.iter().enumerate() {
                    for &b in &free[i + 1..] {
                        out.push(Move::Place {
                            pieces: vec![self.placement(c, Spot::Abbey(a), p1), self.placement(c, Spot::Abbey(b), p2)],
                        });
                    }
                }
            }
            if empty {
                continue;
            }
            // An abbey, then a counsellor under the limit it may have raised (KK-16).
            if self.abbeys >= 1 && self.counsellors >= 1 && seal < limit.max(own_abbeys + 1) {
                for &a in &free {
                    out.push(Move::Place { pieces: vec![self.placement(c, Spot::Abbey(a), p1), self.placement(c, Spot::Counsellor, p2)] });
                }
            }
            if self.counsellors >= 2 && seal + 2 <= limit {
                out.push(Move::Place { pieces: vec![self.placement(c, Spot::Counsellor, p1), self.placement(c, Spot::Counsellor, p2)] });
            }
        }
    }

    /// One piece in each of two countries (dynamic variant, KK-28).
    fn two_countries(&self, c1: Country, c2: Country, out: &mut Vec<Move>) {
        let (k1, k2) = (c1.card_kind(), c2.card_kind());
        let mut pays = Vec::new();
        if self.holds(&[k1, k2]) {
            pays.push((Pay::single(k1), Pay::single(k2)));
        }
        for k in CardKind::ALL {
            if self.holds(&[k1, k, k]) {
                pays.push((Pay::single(k1), Pay::joker(k)));
            }
        }
        // With one kind naming both countries, the mirrored spelling spends the same cards.
        if k1 != k2 {
            for k in CardKind::ALL {
                if self.holds(&[k, k, k2]) {
                    pays.push((Pay::joker(k), Pay::single(k2)));
                }
            }
        }
        if pays.is_empty() {
            return;
        }
        // An empty country takes only an abbey (KK-13).
        let spots1: Vec<Spot> = self.spots(c1);
        let spots2: Vec<Spot> = self.spots(c2);
        for &(p1, p2) in &pays {
            for &s1 in &spots1 {
                for &s2 in &spots2 {
                    match (s1, s2) {
                        (Spot::Abbey(_), Spot::Abbey(_)) if self.abbeys < 2 => continue,
                        (Spot::Counsellor, Spot::Counsellor) if self.counsellors < 2 => continue,
                        _ => {}
                    }
                    out.push(Move::Place { pieces: vec![self.placement(c1, s1, p1), self.placement(c2, s2, p2)] });
                }
            }
        }
    }
}
