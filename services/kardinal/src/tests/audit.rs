//! Rules audit: the corners of the turn structure and the scoring that the
//! per-rule tests leave open (the end condition's off-by-one, exhaustions
//! during an exchange, an emptied display, jokers of a country's own kind,
//! the early end, tie-breaks), each from a concrete position.

use ludo_engine::{Engine, MoveError, Seat, Seed, Setup, Status, Viewer};

use super::*;
use crate::country::{Country::*, Piece};
use crate::effect::EndReason;
use crate::moves::Source;
use crate::scoring;
use crate::view::TurnStep;

/// A fresh game with `first` keeping the black token.
fn game_first(players: usize, first: u8) -> Game {
    let options = Options { first_seat: Some(Seat(first)), variant: Variant::Standard, board: None };
    Game::new(&Setup { players, options, seed: Seed([7; 32]) }).expect("set-up").0
}

fn ended(effects: &[Effect]) -> bool {
    matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::LastRoundOver, .. }))
}

/// The seat to move passes (last round).
fn pass(g: &mut Game) -> Vec<Effect> {
    let seat = g.turn;
    play(g, seat, Move::Pass {}).unwrap()
}

/// The kinds of the effects, in order, as short words.
fn kinds(effects: &[Effect]) -> Vec<&'static str> {
    effects
        .iter()
        .map(|e| match e {
            Effect::Placed { .. } => "placed",
            Effect::Discarded { .. } => "discarded",
            Effect::DrewFromDeck { .. } => "drew",
            Effect::TookFromDisplay { .. } => "took",
            Effect::DeckExhausted { count: 1 } => "exhausted-1",
            Effect::DeckExhausted { .. } => "exhausted-2",
            Effect::InterimScoring { .. } => "interim",
            Effect::Reshuffled { .. } => "reshuffled",
            Effect::DisplayRefilled { .. } => "display",
            Effect::LastRound { .. } => "last-round",
            Effect::RefillStopped { .. } => "stopped",
            Effect::TurnStarted { .. } => "turn",
            Effect::GameEnded { .. } => "ended",
            Effect::Passed { .. } => "passed",
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

// ------------------------------------------------- KK-20: the end condition

#[test]
fn kk20_second_exhaustion_in_the_first_seats_own_turn_every_other_seat_plays_once() {
    // The first seat itself empties the deck: the others each get one more
    // turn, and the game ends before the first seat's next turn (not after it).
    let mut g = game_first(4, 0);
    g.exhaustions = 1;
    g.set_hand(s(0), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI]);
    let effects = play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Deck }).unwrap();
    assert_eq!(kinds(&effects), ["discarded", "drew", "exhausted-2", "last-round", "turn"]);
    for seat in [1, 2] {
        assert_eq!(g.turn, s(seat));
        assert!(!ended(&pass(&mut g)));
    }
    assert_eq!(g.turn, s(3));
    assert!(ended(&pass(&mut g)), "the game ends before seat 0 plays again");
    assert!(g.status().is_finished());
}

#[test]
fn kk20_second_exhaustion_in_the_seat_before_the_first_ends_the_game_with_that_turn() {
    // The seat on the first player's right empties the deck: nobody plays again.
    let mut g = game_first(3, 0);
    g.exhaustions = 1;
    g.turn = s(2);
    g.set_hand(s(2), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI]);
    let effects = play(&mut g, s(2), Move::Exchange { discard: FR, take: Source::Deck }).unwrap();
    assert_eq!(kinds(&effects), ["discarded", "drew", "exhausted-2", "last-round", "ended"]);
    assert_eq!(g.hands[2], Cards::of(&[ES, ES, LI]), "the exchange itself completes");
}

#[test]
fn kk20_the_last_round_wraps_past_seat_0_when_another_seat_holds_the_black_token() {
    // First seat 2 of 4: the deck runs out in seat 3's display refill; seats 0
    // and 1 still play, and the game ends before seat 2.
    let mut g = game_first(4, 2);
    g.exhaustions = 1;
    g.turn = s(3);
    g.put_abbey(s(0), "bec");
    g.set_hand(s(3), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI]);
    place(&mut g, s(3), vec![abbey(France, "jumieges", &[FR])]).unwrap();
    let effects = play(&mut g, s(3), Move::TakeDisplay { slot: 0 }).unwrap();
    assert_eq!(kinds(&effects), ["took", "display", "exhausted-2", "last-round", "turn"]);
    assert!(g.display[1].is_some());
    assert_eq!(g.turn, s(0));
    assert!(!ended(&pass(&mut g)));
    assert_eq!(g.turn, s(1));
    assert!(ended(&pass(&mut g)), "the game ends before seat 2's turn");
}

#[test]
fn kk20_a_seat_may_still_place_in_the_last_round_but_never_draws_or_exchanges() {
    let mut g = game_first(3, 0);
    g.exhaustions = 2;
    g.turn = s(1);
    g.put_abbey(s(0), "bec");
    g.set_hand(s(1), &[FR, FR]);
    let moves = g.legal_moves(s(1));
    assert!(moves.iter().all(|m| matches!(m, Move::Place { .. } | Move::Pass {})));
    assert!(moves.contains(&Move::Pass {}));
    let effects = place(&mut g, s(1), vec![abbey(France, "jumieges", &[FR]), counsellor(France, &[FR])]).unwrap();
    assert_eq!(kinds(&effects), ["placed", "placed", "turn"]);
    assert_eq!(g.hands[1].len(), 0);
    assert_eq!(rule_of(play(&mut g, s(2), Move::DrawDeck {})), "KK-18");
    // An empty hand can only pass.
    g.set_hand(s(2), &[]);
    assert_eq!(g.legal_moves(s(2)), vec![Move::Pass {}]);
    assert!(ended(&pass(&mut g)));
}

// ------------------------------------------ KK-19 / KK-20 during an exchange

#[test]
fn kk19_first_exhaustion_during_an_exchange_from_the_deck_reshuffles_the_discarded_card_too() {
    let mut g = game(3);
    g.put_abbeys(s(1), Italy, 2);
    g.set_hand(s(0), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI]);
    g.discard = vec![BB, BB];
    let display = g.display;
    let effects = play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Deck }).unwrap();
    assert_eq!(kinds(&effects), ["discarded", "drew", "exhausted-1", "interim", "reshuffled", "turn"]);
    assert_eq!(g.hands[0], Cards::of(&[ES, ES, LI]));
    assert_eq!(Cards::of(&g.deck), Cards::of(&[BB, BB, FR]), "the exchanged card was on the pile");
    assert!(g.discard.is_empty());
    assert_eq!(g.display, display, "nothing to refill: the card came from the deck");
    assert_eq!(g.scores[1], 2, "interim scoring: seat 1 alone in Italy with 2");
    assert_eq!(g.exhaustions, 1);
    assert!(!g.last_round());
}

#[test]
fn kk19_first_exhaustion_mid_refill_after_taking_a_display_card_then_the_display_refills_from_the_new_deck() {
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[FR, FR, ES]);
    g.set_deck_top_first(&[LI]);
    g.discard = vec![BB];
    let slot1 = g.display[1];
    place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR]), abbey(France, "fleury", &[FR])]).unwrap();
    play(&mut g, s(0), Move::TakeDisplay { slot: 0 }).unwrap();
    assert_eq!(g.display[0], None, "no display refill before the hand holds 3");
    let effects = play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    assert_eq!(kinds(&effects), ["drew", "exhausted-1", "interim", "reshuffled", "display", "turn"]);
    assert_eq!(g.display[1], slot1);
    assert!(g.display[0].is_some(), "slot 0 refilled from the reshuffled pile");
    // The new deck held the discard pile (BB + the two FR played); one went to the display.
    assert_eq!(g.deck.len(), 2);
}

#[test]
fn kk20_second_exhaustion_during_an_exchange_from_the_display_leaves_the_slot_empty() {
    // Exchange taking slot 1: its refill takes the deck's last card (second
    // exhaustion); the last round starts and no display card is ever drawn.
    let mut g = game_first(3, 0);
    g.exhaustions = 1;
    g.set_hand(s(0), &[FR, ES, ES]);
    g.display = [Some(BB), Some(FA)];
    g.set_deck_top_first(&[LI]);
    let effects = play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Display1 }).unwrap();
    assert_eq!(kinds(&effects), ["discarded", "took", "display", "exhausted-2", "last-round", "turn"]);
    assert_eq!(g.display, [Some(BB), Some(LI)]);
    assert!(g.last_round());
    assert!(g.legal_moves(s(1)).iter().all(|m| !matches!(m, Move::Exchange { .. })));
}

#[test]
fn kk22_a_refill_that_emptied_the_display_then_the_deck_stops_and_the_display_stays_empty() {
    let mut g = game(3);
    g.exhaustions = 1;
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[FR, FR, FR]);
    g.set_deck_top_first(&[LI]);
    place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR]), abbey(France, "fleury", &[FR, FR])]).unwrap();
    play(&mut g, s(0), Move::TakeDisplay { slot: 0 }).unwrap();
    play(&mut g, s(0), Move::TakeDisplay { slot: 1 }).unwrap();
    assert_eq!(g.display, [None, None]);
    assert_eq!(g.legal_moves(s(0)), vec![Move::DrawDeck {}], "only the deck is left");
    let effects = play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    assert_eq!(kinds(&effects), ["drew", "exhausted-2", "last-round", "turn"]);
    assert_eq!(g.hands[0].len(), 3);
    assert_eq!(g.display, [None, None], "nobody refills the display in the last round");
    let v = g.view(Viewer::Seat(s(1)));
    assert_eq!(v.turn.unwrap().step, TurnStep::PlaceOrPass);
    assert_eq!(v.deck_size, 0);
}

// --------------------------------------------------- KK-11: own-kind jokers

#[test]
fn kk11_a_joker_of_the_countrys_own_kind_pays_for_one_piece_there() {
    // "Deux cartes identiques … pour placer un pion dans le pays de son choix":
    // the country of the cards' own kind is one of the choices.
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[FR, FR, ES]);
    let joker = Move::Place { pieces: vec![counsellor(France, &[FR, FR])] };
    assert!(g.legal_moves(s(0)).contains(&joker));
    play(&mut g, s(0), joker).unwrap();
    assert_eq!(g.hands[0], Cards::of(&[ES]));
    assert_eq!(g.discard, vec![FR, FR]);
    // A two-country kind's pair, for one of its own countries.
    let mut g = game(3);
    g.set_hand(s(0), &[FA, FA, ES]);
    place(&mut g, s(0), vec![abbey(Aragon, "ripoll", &[FA, FA])]).unwrap();
    assert_eq!(g.hands[0], Cards::of(&[ES]));
}

#[test]
fn kk11_three_cards_of_a_kind_two_pieces_a_card_and_an_own_kind_joker_in_any_order() {
    // Christian's three France cards: card + joker, the joker listed first.
    let mut g = game(3);
    g.put_abbeys(s(1), France, 2);
    g.set_hand(s(0), &[FR, FR, FR]);
    let site = g.free_site(France);
    place(&mut g, s(0), vec![counsellor(France, &[FR, FR]), abbey(France, &site, &[FR])]).unwrap();
    assert_eq!(g.hands[0].len(), 0);
    assert_eq!(g.cards_to_draw(s(0)), 3);
    // In an empty country the same three cards still place one abbey only.
    let mut g = game(3);
    g.set_hand(s(0), &[LI, LI, LI]);
    let two = vec![abbey(Italy, "farfa", &[LI]), abbey(Italy, "bobbio", &[LI, LI])];
    assert_eq!(rule_of(place(&mut g, s(0), two)), "KK-13");
    let over = vec![abbey(Italy, "farfa", &[LI, LI, LI])];
    assert_eq!(rule_of(place(&mut g, s(0), over)), "KK-11");
}

// ------------------------------------------------------ KK-15/16: the seal

#[test]
fn kk15_the_limit_counts_one_players_abbeys_not_the_countrys_total() {
    // Italy: three players with one abbey each → 3 abbeys but a limit of 1.
    let mut g = game(4);
    for seat in [1, 2, 3] {
        g.put_abbeys(s(seat), Italy, 1);
    }
    g.set_hand(s(0), &[LI, LI, ES]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![counsellor(Italy, &[LI]), counsellor(Italy, &[LI])])), "KK-15");
    // The mover's own first abbey makes four players with one each: still 1.
    let site = g.free_site(Italy);
    let abbey_then_counsellor = vec![abbey(Italy, &site, &[LI]), counsellor(Italy, &[LI])];
    place(&mut g, s(0), abbey_then_counsellor).unwrap();
    assert_eq!((g.limit(Italy), g.seal(Italy)), (1, 1));
}

#[test]
fn kk16_the_movers_first_abbey_does_not_lift_a_limit_set_by_a_bigger_holder() {
    // Seat 1 has 2 abbeys (limit 2, seal full); the mover's first abbey takes
    // their count to 1 only, so the following counsellor is still refused.
    let mut g = game(3);
    g.put_abbeys(s(1), Burgundy, 2);
    g.put_counsellors(s(2), Burgundy, 2);
    g.set_hand(s(0), &[BB, BB, ES]);
    let site = g.free_site(Burgundy);
    let pieces = vec![abbey(Burgundy, &site, &[BB]), counsellor(Burgundy, &[BB])];
    assert_eq!(rule_of(place(&mut g, s(0), pieces)), "KK-15");
    assert!(g.legal_moves(s(0)).iter().all(|m| match m {
        Move::Place { pieces } => pieces.iter().all(|p| p.piece == Piece::Abbey || p.country != Burgundy),
        _ => true,
    }));
}

// ------------------------------------------------------ KK-21: early end

#[test]
fn kk21_full_board_with_room_on_a_seal_goes_on_while_someone_holds_a_counsellor() {
    let mut g = game(5);
    let sites: Vec<String> = g.board.board.sites.iter().map(|s| s.id.clone()).collect();
    for (i, site) in sites.iter().skip(1).enumerate() {
        g.put_abbey(Seat(1 + (i % 4) as u8), site);
    }
    // Every seal full except one place in France; only seat 4 has counsellors.
    g.counsellors_left = [0, 0, 0, 0, 1];
    for c in Country::ALL {
        let room = g.limit(c) - g.seal(c);
        g.counsellors[c.index()][3] += room - u8::from(c == France);
    }
    let country = g.board.site_country[0];
    g.set_hand(s(0), &[country.card_kind(), ES, ES]);
    place(&mut g, s(0), vec![abbey(country, &sites[0], &[country.card_kind()])]).unwrap();
    assert!(!g.status().is_finished(), "seat 4 can still place its counsellor in France");
    // Once that counsellor is placed nothing can be placed any more.
    g.turn = s(4);
    g.step = Step::Act;
    g.set_hand(s(4), &[FR, ES, ES]);
    let effects = place(&mut g, s(4), vec![counsellor(France, &[FR])]).unwrap();
    assert!(matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::NoPlacementLeft, .. })));
}

#[test]
fn kk21_room_on_a_seal_but_no_counsellor_left_anywhere_ends_the_game() {
    let mut g = game(3);
    let sites: Vec<String> = g.board.board.sites.iter().map(|s| s.id.clone()).collect();
    for (i, site) in sites.iter().skip(1).enumerate() {
        g.put_abbey(Seat(1 + (i % 2) as u8), site);
        if g.abbeys_left[1 + i % 2] == 0 {
            g.abbeys_left[1 + i % 2] = 20; // test positions need not conserve pieces
        }
    }
    g.counsellors_left = [0; 5];
    let country = g.board.site_country[0];
    g.set_hand(s(0), &[country.card_kind(), ES, ES]);
    let effects = place(&mut g, s(0), vec![abbey(country, &sites[0], &[country.card_kind()])]).unwrap();
    assert!(matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::NoPlacementLeft, .. })));
    assert_eq!(g.hands[0].len(), 2, "the game ends at once: no refill");
}

#[test]
fn kk21_free_sites_but_no_abbey_left_and_every_seal_full_ends_the_game() {
    // "Plus aucun pion ne peut être placé": sites are free and everybody still
    // holds counsellors, but nobody has an abbey and no seal has room.
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.put_counsellors(s(2), France, 1);
    g.abbeys_left = [1, 0, 0, 0, 0];
    g.set_hand(s(0), &[FR, ES, ES]);
    // Seat 0's last abbey makes France 1–1: the limit stays 1, the seal is full.
    let effects = place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR])]).unwrap();
    assert!(matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::NoPlacementLeft, .. })));
    assert!(g.counsellors_left[..3].iter().all(|&n| n > 0));
}

// ------------------------------------------------------ KK-24/25/27 scoring

#[test]
fn kk24_ties_in_a_later_group_all_score_the_count_of_the_group_above() {
    // 3 | 2 2 | 1: the pair scores 3, the single abbey scores 2 (the pair's count).
    assert_eq!(scoring::abbey_points(&[1, 2, 2, 3]), vec![2, 3, 3, 8]);
    // All tied: everyone is in the first group and scores the total.
    assert_eq!(scoring::abbey_points(&[1, 1, 1]), vec![3, 3, 3]);
    // A lone abbey scores 1 (the total).
    assert_eq!(scoring::abbey_points(&[0, 1, 0, 0, 0]), vec![0, 1, 0, 0, 0]);
    // 5 | 1 1 1: each single scores 5, not the rank-2/3/4 figure.
    assert_eq!(scoring::abbey_points(&[1, 5, 1, 1]), vec![5, 8, 5, 5]);
}

#[test]
fn kk25_leading_both_scores_even_when_tied_in_one_and_an_empty_seal_leads_nobody() {
    // Seats 0 and 1 tie in the first country, seat 0 alone leads the second.
    let a = scoring::alliance(5, [France, Burgundy], &[2, 2, 1], &[1, 0, 0]);
    assert_eq!((a.scorers, a.points), (vec![s(0)], 6));
    // One seal empty: nobody scores however strong the other side.
    let b = scoring::alliance(5, [France, Burgundy], &[3, 0, 0], &[0, 0, 0]);
    assert!(b.scorers.is_empty() && b.points == 0);
}

#[test]
fn kk27_the_final_scoring_breaks_a_tie_by_unused_pieces() {
    // Seats 0 and 1 each score 2 in France (tied group); seat 1 placed a
    // counsellor more (France's alliances score nothing: their partners' seals are empty).
    let mut g = game(3);
    g.put_abbeys(s(0), France, 1);
    g.put_abbeys(s(1), France, 1);
    g.put_counsellors(s(1), France, 1);
    g.exhaustions = 2;
    g.turn = s(2);
    g.set_hand(s(2), &[]);
    let effects = pass(&mut g);
    let Some(Effect::GameEnded { scoring, .. }) = effects.last() else { panic!("not ended") };
    assert_eq!(scoring.totals[0].total, scoring.totals[1].total);
    assert_eq!((scoring.totals[0].unused_pieces, scoring.totals[1].unused_pieces), (27, 26));
    assert_eq!(scoring.winners, vec![s(0)]);
    assert_eq!(g.status(), Status::Finished { result: ludo_engine::Outcome { scores: vec![2, 2, 0], winners: vec![s(0)] } });
}

// ------------------------------------------------------ KK-31: hidden cards

#[test]
fn kk31_an_exchange_shows_the_discard_to_all_and_the_drawn_card_only_to_the_drawer() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI, BB, BB]);
    let effects = play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Deck }).unwrap();
    for e in &effects {
        let other = g.redact(e, Viewer::Seat(s(1)));
        match e {
            Effect::DrewFromDeck { .. } => assert_eq!(other, Effect::DrewFromDeck { seat: s(0), card: None }),
            _ => assert_eq!(&other, e),
        }
    }
    let v = g.view(Viewer::Seat(s(1)));
    assert_eq!(v.discard, vec![FR]);
    assert_eq!(v.seats[0].hand, None);
    assert_eq!(v.seats[0].hand_size, 3);
    assert_eq!(v.deck_size, 2);
    assert!(matches!(play(&mut g, s(0), Move::Pass {}), Err(MoveError::NotYourTurn { .. })));
}
