//! Drawing: the hand refill card by card (KK-18), exchanges (KK-10), the
//! display refill, and the deck's exhaustions (KK-19, KK-20, KK-22).

use ludo_engine::{MoveError, Seat};

use crate::cards::CardKind;
use crate::effect::Effect;
use crate::game::{DISPLAY_SLOTS, Game, HAND_SIZE};
use crate::moves::{Move, Source};

impl Game {
    /// Whether any card can still be drawn (deck or display; none after the second exhaustion).
    pub(crate) fn can_draw(&self) -> bool {
        !self.last_round() && (!self.deck.is_empty() || self.display.iter().any(Option::is_some))
    }

    /// The occupied display slots, skipping a slot that shows the same kind
    /// as an earlier one (taking either has the same effect on the hand).
    fn distinct_display_slots(&self) -> impl Iterator<Item = u8> + '_ {
        (0..DISPLAY_SLOTS).filter_map(move |i| {
            let card = self.display[i]?;
            (!self.display[..i].contains(&Some(card))).then_some(i as u8)
        })
    }

    /// The legal draws while refilling (KK-18).
    pub(crate) fn draw_moves(&self, out: &mut Vec<Move>) {
        if !self.deck.is_empty() {
            out.push(Move::DrawDeck {});
        }
        out.extend(self.distinct_display_slots().map(|slot| Move::TakeDisplay { slot }));
    }

    /// The legal exchanges (KK-10): each kind in hand, each source.
    pub(crate) fn exchange_moves(&self, seat: Seat, out: &mut Vec<Move>) {
        let hand = self.hands[seat.index()];
        let mut sources = Vec::with_capacity(3);
        if !self.deck.is_empty() {
            sources.push(Source::Deck);
        }
        sources.extend(self.distinct_display_slots().map(Source::display));
        for kind in CardKind::ALL.into_iter().filter(|&k| hand.count(k) > 0) {
            out.extend(sources.iter().map(|&take| Move::Exchange { discard: kind, take }));
        }
    }

    pub(crate) fn check_display_slot(&self, rule: &'static str, slot: u8) -> Result<(), MoveError> {
        match self.display.get(usize::from(slot)) {
            None => Err(MoveError::rule(rule, format!("there is no display slot {slot}; slots are 0 and 1"))),
            Some(None) => Err(MoveError::rule(rule, format!("display slot {slot} is empty"))),
            Some(Some(_)) => Ok(()),
        }
    }

    pub(crate) fn check_exchange(&self, seat: Seat, discard: CardKind, take: Source) -> Result<(), MoveError> {
        if self.last_round() {
            return Err(MoveError::rule("KK-20", "no exchanging in the last round: place or pass"));
        }
        if self.hands[seat.index()].count(discard) == 0 {
            return Err(MoveError::rule("KK-10", format!("you hold no `{discard}` card to discard")));
        }
        match take.slot() {
            None if self.deck.is_empty() => Err(MoveError::rule("KK-10", "the deck is empty")),
            None => Ok(()),
            Some(slot) => self.check_display_slot("KK-10", slot),
        }
    }

    /// Discard, take, refill the display, end the turn (KK-10).
    pub(crate) fn commit_exchange(&mut self, seat: Seat, discard: CardKind, take: Source, effects: &mut Vec<Effect>) {
        self.hands[seat.index()].take(discard);
        self.known[seat.index()].take(discard);
        self.discard.push(discard);
        effects.push(Effect::Discarded { seat, card: discard });
        match take.slot() {
            None => self.draw_from_deck(seat, effects),
            Some(slot) => self.take_from_display(seat, slot, effects),
        }
        self.refill_display(effects);
        self.end_turn(effects);
    }

    /// Moves the deck's top card into `seat`'s hand (the deck is not empty).
    pub(crate) fn draw_from_deck(&mut self, seat: Seat, effects: &mut Vec<Effect>) {
        if let Some(card) = self.deck.pop() {
            self.hands[seat.index()].add(card);
            effects.push(Effect::DrewFromDeck { seat, card: Some(card) });
            self.check_exhaustion(effects);
        }
    }

    /// Moves a display card into `seat`'s hand (the slot is occupied).
    pub(crate) fn take_from_display(&mut self, seat: Seat, slot: u8, effects: &mut Vec<Effect>) {
        if let Some(card) = self.display[usize::from(slot)].take() {
            self.hands[seat.index()].add(card);
            self.known[seat.index()].add(card);
            effects.push(Effect::TookFromDisplay { seat, slot, card });
        }
    }

    /// After one card of a refill: the turn ends once the hand holds 3
    /// (then the display is refilled), or when nothing can be drawn (KK-22).
    pub(crate) fn after_refill_draw(&mut self, seat: Seat, effects: &mut Vec<Effect>) {
        let in_hand = self.hands[seat.index()].len();
        if in_hand >= HAND_SIZE {
            self.refill_display(effects);
            self.end_turn(effects);
        } else if !self.can_draw() {
            effects.push(Effect::RefillStopped { seat, hand_size: in_hand as u8 });
            self.end_turn(effects);
        }
    }

    /// Fills empty display slots from the deck, slot 0 first.
    pub(crate) fn refill_display(&mut self, effects: &mut Vec<Effect>) {
        for slot in 0..DISPLAY_SLOTS {
            if self.display[slot].is_some() || self.last_round() {
                continue;
            }
            if let Some(card) = self.deck.pop() {
                self.display[slot] = Some(card);
                effects.push(Effect::DisplayRefilled { slot: slot as u8, card });
                self.check_exhaustion(effects);
            }
        }
    }

    /// Handles the deck running out, right after the draw that emptied it.
    /// First time: interim scoring, then the discard pile becomes the new
    /// deck (KK-19). Second time: the last round begins (KK-20). A reshuffle
    /// of an empty discard pile would leave the deck empty at once: that
    /// counts as the second exhaustion.
    pub(crate) fn check_exhaustion(&mut self, effects: &mut Vec<Effect>) {
        while self.deck.is_empty() && !self.last_round() {
            self.exhaustions += 1;
            effects.push(Effect::DeckExhausted { count: self.exhaustions });
            if self.exhaustions == 1 {
                self.interim_scoring(effects);
                self.reshuffle(effects);
            } else {
                effects.push(Effect::LastRound { ends_before: self.first_seat });
            }
        }
    }

    /// The discard pile, sorted by kind, shuffled into a new deck (randomness notes on [`Game`]).
    fn reshuffle(&mut self, effects: &mut Vec<Effect>) {
        let mut cards = std::mem::take(&mut self.discard);
        cards.sort_unstable();
        self.rng.shuffle(&mut cards);
        cards.reverse();
        self.deck = cards;
        effects.push(Effect::Reshuffled { deck_size: self.deck.len() as u32 });
    }
}
