//! One or more tests per rule of `docs/rules/battle13.md`, named after what
//! they prove and citing the rule id, driven through the engine contract.

mod common;

use common::*;
use ludo_battle13::{
    BidCard, Call, Camp, Chaos, Contract, Crowns, Decision, Effect, Family, FamilyCard, Game, Knight, Move, Options, VoidReason, bag,
};
use ludo_engine::{DeckRng, Engine, MoveError, Seat, SetupError, Status, Viewer};

/// A deal as an effect reports it: joust, deal, each seat's knights (if shown).
type Deal = (u32, u32, Vec<Option<Vec<Knight>>>);

fn dealt_hands(effects: &[Effect]) -> Vec<Deal> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dealt { joust, deal, hands } => Some((*joust, *deal, hands.iter().map(|h| h.knights.clone()).collect())),
            _ => None,
        })
        .collect()
}

fn openings(effects: &[Effect]) -> Vec<(u8, bool)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::OpeningAnswered { seat, twelve_weapons } => Some((seat.0, *twelve_weapons)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------- components

#[test]
fn b13_1_a_knight_that_does_not_exist_is_refused() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    refused(&mut g, 0, Move::Play { knight: Knight::new(Family::Eagle, 14) }, "B13-1");
    refused(&mut g, 0, Move::Play { knight: Knight::new(Family::Eagle, 0) }, "B13-1");
}

#[test]
fn b13_1_every_deal_holds_the_52_knights() {
    let (_, effects) = Game::new(&setup(5, None, 20)).unwrap();
    for (_, _, hands) in dealt_hands(&effects) {
        let mut all: Vec<Knight> = hands.into_iter().flat_map(Option::unwrap).collect();
        all.sort_unstable();
        assert_eq!(all, bag());
    }
}

#[test]
fn b13_2_exactly_12_weapons_open_and_11_do_not() {
    // Seat 0: E13 E12 E11 E10 (10) + W11 (2) = 12 weapons.
    let specs = ["E4-13 W11 W1 W2", "E1-3 W3-10 W12 W13", "D1-13", "L1-13"];
    let (_, effects) = game(specs, 0);
    assert_eq!(openings(&effects)[0], (0, true));
    // Seat 0 with E13 E12 E11 (9) + W11 (2) = 11 weapons says no; seat 1 (W13 W12 W10 E10 = 9) no,
    // seat 2 and 3 (10) no: redeal.
    let specs = ["E11-13 E1-6 W11 W1 W2 W3", "E7-10 W4-10 W12 W13", "D1-13", "L1-13"];
    let (_, effects) = game(specs, 0);
    assert_eq!(openings(&effects)[..4], [(0, false), (1, false), (2, false), (3, false)]);
}

#[test]
fn b13_3_bid_cards_that_do_not_exist_are_refused() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    refused(&mut g, 2, weapons_card(7), "B13-3");
    refused(&mut g, 2, weapons_card(26), "B13-3");
    refused(&mut g, 2, tournaments(6), "B13-3");
    refused(&mut g, 2, tournaments(14), "B13-3");
    // The opener's full set: 19 cards, no pass.
    assert_eq!(g.legal_moves(Seat(2)).len(), 19);
    ok(&mut g, 2, weapons_card(25));
}

#[test]
fn b13_4_the_single_chaos_card_once_activated_ends_the_decision() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    bid_contract(&mut g, 0, 7);
    ok(&mut g, 0, Move::ChooseFamily { family: FamilyCard::Eagle });
    let effects = ok(&mut g, 1, Move::Chaos);
    assert!(effects.contains(&Effect::ChaosActivated { seat: Seat(1) }));
    // Seat 3 gets no say: the tournaments begin with the master's left.
    assert_eq!(decision(&g), Decision::Play);
    assert_eq!(to_move(&g), Seat(1));
    refused(&mut g, 1, Move::Chaos, "B13-16");
    assert_eq!(omni(&g).joust.chaos, Some(Chaos { declined: vec![], activated_by: Some(Seat(1)) }));
}

// ---------------------------------------------------------------- seats and camps

#[test]
fn b13_5_partners_sit_opposite_and_win_together() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 20);
    // Camp 1 (seats 1, 3) takes 13 with Eagle favoured: seat 0 wins everything.
    to_tournaments(&mut g, 1, 13, FamilyCard::Eagle, false);
    let effects = play_out_joust(&mut g);
    let scored = effects.iter().find_map(|e| match e {
        Effect::JoustScored { crowns, tournaments_won, .. } => Some((*crowns, tournaments_won.clone())),
        _ => None,
    });
    assert_eq!(scored, Some((Crowns { camp: Camp(0), crowns: 20 }, vec![13, 0])));
    let Status::Finished { result } = g.status() else { panic!("20 crowns reach the target") };
    assert_eq!(result.winners, vec![Seat(0), Seat(2)]);
    assert_eq!(result.scores, vec![20, 0, 20, 0]);
}

#[test]
fn b13_6_target_is_20_50_or_100_and_defaults_to_20() {
    assert_eq!(Options::default().target_crowns, 20);
    for target in [20, 50, 100] {
        assert!(Game::new(&setup(1, None, target)).is_ok());
    }
    for target in [0, 19, 21, 30, 1000] {
        match Game::new(&setup(1, None, target)) {
            Err(SetupError::InvalidOption { field, .. }) => assert_eq!(field, "target_crowns"),
            other => panic!("target {target} accepted: {other:?}"),
        }
    }
    match Game::new(&setup(1, Some(4), 20)) {
        Err(SetupError::InvalidOption { field, .. }) => assert_eq!(field, "first_seat"),
        other => panic!("seat 4 accepted: {other:?}"),
    }
    for players in [3, 5] {
        let mut s = setup(1, None, 20);
        s.players = players;
        assert_eq!(Game::new(&s).unwrap_err(), SetupError::PlayerCount { min: 4, max: 4, got: players });
    }
}

// ---------------------------------------------------------------- a joust

#[test]
fn b13_7_the_deal_is_private_to_each_seat() {
    let (g, effects) = Game::new(&setup(3, Some(0), 20)).unwrap();
    let dealt = effects.iter().find(|e| matches!(e, Effect::Dealt { .. })).unwrap();
    for seat in 0..4u8 {
        let Effect::Dealt { hands, .. } = g.redact(dealt, Viewer::Seat(Seat(seat))) else { unreachable!() };
        for h in hands {
            assert_eq!(h.knights.is_some(), h.seat == Seat(seat), "seat {seat} sees {h:?}");
            if let Some(k) = h.knights {
                assert_eq!(k.len(), 13);
            }
        }
        let view = g.view(Viewer::Seat(Seat(seat)));
        for h in &view.joust.hands {
            assert_eq!(h.held.is_some(), h.seat == Seat(seat));
            assert_eq!(h.held_count, 13);
        }
    }
    let Effect::Dealt { hands, .. } = g.redact(dealt, Viewer::Spectator) else { unreachable!() };
    assert!(hands.iter().all(|h| h.knights.is_none()));
}

#[test]
fn b13_7_deals_follow_the_documented_draw_order() {
    // No first seat: below(4) first, then one shuffle of the bag per deal.
    let s = setup(11, None, 20);
    let (_, effects) = Game::new(&s).unwrap();
    let mut rng = DeckRng::new(&s.seed);
    let first = Seat(rng.below(4) as u8);
    assert_eq!(effects[0], Effect::JoustStarted { joust: 1, first_player: first });
    for (_, _, hands) in dealt_hands(&effects) {
        let mut bag = bag();
        rng.shuffle(&mut bag);
        for (seat, hand) in hands.into_iter().enumerate() {
            let mut expect = bag[13 * seat..13 * seat + 13].to_vec();
            expect.sort_unstable();
            assert_eq!(hand.unwrap(), expect);
        }
    }
}

#[test]
fn b13_8_first_seat_option_or_drawn_then_the_previous_master() {
    let (g, effects) = game(EAGLE_WALL, 1);
    assert_eq!(effects[0], Effect::JoustStarted { joust: 1, first_player: Seat(1) });
    assert_eq!(omni(&g).joust.first_player, Seat(1));
    // Drawn from the seed when not given: several seeds reach every seat.
    let drawn: std::collections::BTreeSet<u8> = (0..40)
        .map(|n| match &Game::new(&setup(n, None, 20)).unwrap().1[0] {
            Effect::JoustStarted { first_player, .. } => first_player.0,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(drawn.len(), 4);
    // Next joust: the previous master (seat 0 here) is the first player.
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    to_tournaments(&mut g, 0, 7, FamilyCard::Eagle, false);
    let effects = play_out_joust(&mut g);
    assert!(effects.contains(&Effect::JoustStarted { joust: 2, first_player: Seat(0) }));
    assert_eq!(omni(&g).joust.first_player, Seat(0));
}

#[test]
fn b13_9_opening_answers_go_clockwise_up_to_the_first_yes() {
    // From seat 0: seat 0 (10) no, seat 1 (1) no, seat 2 (19) yes; seat 3 is never asked.
    let (g, effects) = game(EAGLE_WALL, 0);
    assert_eq!(openings(&effects), [(0, false), (1, false), (2, true)]);
    let view = g.view(Viewer::Spectator);
    assert_eq!(view.joust.opener, Seat(2));
    assert_eq!(view.joust.opening.len(), 3);
    assert_eq!(view.turn.unwrap().seat, Seat(2));
    assert_eq!(view.turn.unwrap().decision, Decision::OpenBidding);
}

#[test]
fn b13_9_a_later_seat_with_12_weapons_is_never_asked() {
    // WORKED: seats 1 and 3 both hold 14 weapons, seats 0 and 2 fewer than 12.
    let (g, effects) = game(WORKED, 2);
    assert_eq!(openings(&effects), [(2, false), (3, true)]);
    assert_eq!(omni(&g).joust.opener, Seat(3));
    let (g, effects) = game(WORKED, 0);
    assert_eq!(openings(&effects), [(0, false), (1, true)]);
    assert_eq!(g.view(Viewer::Spectator).joust.opening.len(), 2);
    assert_eq!(to_move(&g), Seat(1));
}

#[test]
fn b13_9_nobody_with_12_weapons_means_a_redeal_with_the_same_first_player() {
    let (g, effects) = game(NO_OPENER, 3);
    assert_eq!(&openings(&effects)[..4], [(3, false), (0, false), (1, false), (2, false)]);
    assert!(effects.contains(&Effect::DealVoided { joust: 1, deal: 1, reason: VoidReason::NoOpener }));
    let deals = dealt_hands(&effects);
    assert!(deals.len() >= 2);
    assert_eq!((deals[1].0, deals[1].1), (1, 2));
    // Every deal's answers start again from the first player.
    let starts: Vec<usize> = effects.iter().enumerate().filter(|(_, e)| matches!(e, Effect::Dealt { .. })).map(|(i, _)| i + 1).collect();
    for i in starts {
        assert!(matches!(effects[i], Effect::OpeningAnswered { seat: Seat(3), .. }), "{:?}", effects[i]);
    }
    let view = omni(&g);
    assert_eq!(view.joust.first_player, Seat(3));
    assert_eq!(view.joust.deal as usize, deals.len());
}

// ---------------------------------------------------------------- bidding

#[test]
fn b13_10_the_opener_must_lay_a_card_then_a_pass_is_not_final() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    refused(&mut g, 2, Move::Pass, "B13-10");
    assert!(!g.legal_moves(Seat(2)).contains(&Move::Pass));
    ok(&mut g, 2, family_card(FamilyCard::Wolf));
    assert_eq!(decision(&g), Decision::Bid);
    assert!(g.legal_moves(Seat(3)).contains(&Move::Pass));
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, Move::Pass);
    ok(&mut g, 1, Move::Pass);
    // Three passes but no tournaments card: the talking rounds go on.
    assert_eq!((to_move(&g), decision(&g)), (Seat(2), Decision::Bid));
    ok(&mut g, 2, tournaments(8));
    // Seat 3 passed before and may now lay a card.
    ok(&mut g, 3, tournaments(9));
    assert_eq!(to_move(&g), Seat(0));
    // Moves of another phase are refused with the bidding rule.
    refused(&mut g, 0, play("E1"), "B13-10");
    refused(&mut g, 0, Move::Chaos, "B13-10");
    assert!(matches!(g.apply(Seat(1), &Move::Pass), Err(MoveError::NotYourTurn { .. })));
}

#[test]
fn b13_11_a_tournaments_card_must_beat_every_one_laid() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, tournaments(9));
    refused(&mut g, 3, tournaments(9), "B13-11");
    refused(&mut g, 3, tournaments(8), "B13-11");
    assert!(!g.legal_moves(Seat(3)).contains(&tournaments(9)));
    ok(&mut g, 3, tournaments(10));
    ok(&mut g, 0, Move::Pass);
    ok(&mut g, 1, Move::Pass);
    // Even one's own earlier card must be beaten.
    refused(&mut g, 2, tournaments(10), "B13-11");
    ok(&mut g, 2, tournaments(11));
}

#[test]
fn b13_12_each_bid_card_is_laid_once_and_stays_public() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, weapons_card(18));
    ok(&mut g, 3, weapons_card(18)); // another player's set: fine
    ok(&mut g, 0, Move::Pass);
    ok(&mut g, 1, Move::Pass);
    refused(&mut g, 2, weapons_card(18), "B13-12");
    assert!(!g.legal_moves(Seat(2)).contains(&weapons_card(18)));
    ok(&mut g, 2, family_card(FamilyCard::Neutral));
    let calls = g.view(Viewer::Spectator).joust.calls;
    let w18 = Some(BidCard::Weapons { value: 18 });
    assert_eq!(
        calls,
        vec![
            Call { seat: Seat(2), card: w18 },
            Call { seat: Seat(3), card: w18 },
            Call { seat: Seat(0), card: None },
            Call { seat: Seat(1), card: None },
            Call { seat: Seat(2), card: Some(BidCard::Family { family: FamilyCard::Neutral }) },
        ]
    );
}

#[test]
fn b13_12_bid_cards_come_back_for_the_next_joust() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    for seat in [2, 3, 0, 1] {
        ok(&mut g, seat, weapons_card(6));
    }
    ok(&mut g, 2, tournaments(7));
    for seat in [3, 0, 1] {
        ok(&mut g, seat, Move::Pass);
    }
    ok(&mut g, 2, Move::ChooseFamily { family: FamilyCard::Eagle });
    ok(&mut g, 3, Move::DeclineChaos);
    ok(&mut g, 1, Move::DeclineChaos);
    play_out_joust(&mut g);
    let view = omni(&g);
    assert_eq!((view.joust.number, view.joust.first_player), (2, Seat(2)));
    assert!(view.joust.calls.is_empty());
    // Whoever opens joust 2 laid Weapons 6 and Tournaments 7 or none in
    // joust 1: their full set of 19 is back.
    let opener = view.joust.opener;
    let legal = g.legal_moves(opener);
    assert_eq!(legal.len(), 19);
    assert!(legal.contains(&weapons_card(6)) && legal.contains(&tournaments(7)));
}

#[test]
fn b13_13_three_passes_after_a_tournaments_card_end_the_bidding() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, tournaments(7));
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, Move::Pass);
    let effects = ok(&mut g, 1, Move::Pass);
    assert!(effects.contains(&Effect::BiddingEnded { contract: Contract::new(Seat(2), 7) }));
    assert_eq!(decision(&g), Decision::ChooseFamily);
}

#[test]
fn b13_13_only_passes_after_the_last_card_count_toward_the_three() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    // The opener's compulsory card, then three passes: no tournaments card yet.
    ok(&mut g, 2, weapons_card(18));
    for seat in [3, 0] {
        ok(&mut g, seat, Move::Pass);
    }
    // A tournaments card restarts the count: the two passes before it do not count.
    ok(&mut g, 1, tournaments(7));
    ok(&mut g, 2, Move::Pass);
    ok(&mut g, 3, Move::Pass);
    assert_eq!((to_move(&g), decision(&g)), (Seat(0), Decision::Bid));
    // So does any other card laid after it.
    ok(&mut g, 0, family_card(FamilyCard::Lion));
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, Move::Pass);
    assert_eq!((to_move(&g), decision(&g)), (Seat(3), Decision::Bid));
    let effects = ok(&mut g, 3, Move::Pass);
    assert!(effects.contains(&Effect::BiddingEnded { contract: Contract::new(Seat(1), 7) }));
}

#[test]
fn b13_13_four_passes_without_a_tournaments_card_void_the_joust() {
    let (mut g, _) = game(EAGLE_WALL, 0);
    ok(&mut g, 2, weapons_card(12));
    for seat in [3, 0, 1] {
        ok(&mut g, seat, Move::Pass);
    }
    let effects = ok(&mut g, 2, Move::Pass);
    assert_eq!(effects[1], Effect::DealVoided { joust: 1, deal: 1, reason: VoidReason::AllPassed });
    assert!(matches!(effects[2], Effect::Dealt { joust: 1, deal: 2, .. }));
    // The same first player (seat 0) is asked first again.
    assert!(matches!(effects[3], Effect::OpeningAnswered { seat: Seat(0), .. }), "{:?}", effects[3]);
    let view = omni(&g);
    assert_eq!((view.joust.number, view.joust.first_player), (1, Seat(0)));
    assert!(view.joust.deal >= 2);
    assert!(view.joust.calls.is_empty());
}

#[test]
fn b13_14_the_highest_tournaments_card_makes_the_master_and_the_contract() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, tournaments(8));
    ok(&mut g, 3, tournaments(9));
    ok(&mut g, 0, weapons_card(6));
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, family_card(FamilyCard::Dragon));
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, Move::Pass);
    let effects = ok(&mut g, 1, Move::Pass);
    let contract = Contract { master: Seat(3), servant: Seat(1), tournaments: 9 };
    assert_eq!(effects[1], Effect::BiddingEnded { contract });
    assert_eq!(g.view(Viewer::Spectator).joust.contract, Some(contract));
}

// ---------------------------------------------------------------- favoured family

#[test]
fn b13_15_a_master_without_family_card_chooses_one_now() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    bid_contract(&mut g, 0, 7);
    assert_eq!(decision(&g), Decision::ChooseFamily);
    assert_eq!(g.legal_moves(Seat(0)).len(), 5);
    refused(&mut g, 0, Move::DeclineChaos, "B13-15");
    assert!(matches!(g.apply(Seat(2), &Move::ChooseFamily { family: FamilyCard::Lion }), Err(MoveError::NotYourTurn { .. })));
    let effects = ok(&mut g, 0, Move::ChooseFamily { family: FamilyCard::Lion });
    assert_eq!(effects[0], Effect::FamilyFavoured { master: Seat(0), family: FamilyCard::Lion, chosen: true });
    assert_eq!(omni(&g).joust.favoured, Some(FamilyCard::Lion));
}

#[test]
fn b13_15_differing_latest_family_cards_let_the_master_change() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, family_card(FamilyCard::Wolf));
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, family_card(FamilyCard::Eagle));
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, Move::Pass);
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, tournaments(7));
    for seat in [1, 2, 3] {
        ok(&mut g, seat, Move::Pass);
    }
    assert_eq!(decision(&g), Decision::ChooseFamily);
    ok(&mut g, 0, Move::ChooseFamily { family: FamilyCard::Wolf });
    assert_eq!(omni(&g).joust.favoured, Some(FamilyCard::Wolf));
}

#[test]
fn b13_15_otherwise_the_masters_latest_family_card_stands_without_asking() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, family_card(FamilyCard::Eagle));
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, family_card(FamilyCard::Wolf));
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, Move::Pass);
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, family_card(FamilyCard::Eagle)); // latest: Eagle, same as the servant's
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, Move::Pass);
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, tournaments(7));
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, Move::Pass);
    let effects = ok(&mut g, 3, Move::Pass);
    assert!(effects.contains(&Effect::FamilyFavoured { master: Seat(0), family: FamilyCard::Eagle, chosen: false }));
    assert_eq!(decision(&g), Decision::Chaos);
    refused(&mut g, 1, Move::ChooseFamily { family: FamilyCard::Lion }, "B13-16");
}

#[test]
fn b13_15_neutral_and_a_family_card_differ_so_the_master_chooses() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, family_card(FamilyCard::Neutral));
    ok(&mut g, 3, Move::Pass);
    ok(&mut g, 0, family_card(FamilyCard::Eagle));
    ok(&mut g, 1, Move::Pass);
    ok(&mut g, 2, tournaments(7));
    for seat in [3, 0, 1] {
        ok(&mut g, seat, Move::Pass);
    }
    assert_eq!((to_move(&g), decision(&g)), (Seat(2), Decision::ChooseFamily));
    let effects = ok(&mut g, 2, Move::ChooseFamily { family: FamilyCard::Eagle });
    assert_eq!(effects[0], Effect::FamilyFavoured { master: Seat(2), family: FamilyCard::Eagle, chosen: true });
    // One last change only: the Chaos decision follows.
    assert_eq!((to_move(&g), decision(&g)), (Seat(3), Decision::Chaos));
    assert!(matches!(g.apply(Seat(2), &Move::ChooseFamily { family: FamilyCard::Lion }), Err(MoveError::NotYourTurn { .. })));
}

#[test]
fn b13_15_neutral_favours_no_family() {
    // Neutral: seat 0's Eagles no longer win over the led family.
    let (mut g, _) = game(EAGLE_WALL, 2);
    to_tournaments(&mut g, 0, 7, FamilyCard::Neutral, false);
    assert_eq!(omni(&g).joust.favoured, Some(FamilyCard::Neutral));
    ok(&mut g, 1, play("W9")); // seat 1 leads Wolf
    ok(&mut g, 0, play("W13")); // the master plays the servant's Wolf 13
    ok(&mut g, 3, play("L13"));
    let effects = ok(&mut g, 0, play("E13"));
    assert!(effects.contains(&Effect::TournamentWon { number: 1, winner: Seat(2), camp: Camp(0) }));
}

// ---------------------------------------------------------------- chaos

#[test]
fn b13_16_the_masters_left_decides_first_then_the_right() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    bid_contract(&mut g, 0, 7);
    ok(&mut g, 0, Move::ChooseFamily { family: FamilyCard::Eagle });
    assert_eq!((to_move(&g), decision(&g)), (Seat(1), Decision::Chaos));
    assert!(matches!(g.apply(Seat(3), &Move::Chaos), Err(MoveError::NotYourTurn { .. })));
    refused(&mut g, 0, Move::Chaos, "B13-16");
    refused(&mut g, 2, Move::DeclineChaos, "B13-16");
    refused(&mut g, 1, play("W1"), "B13-16");
    ok(&mut g, 1, Move::DeclineChaos);
    assert_eq!(to_move(&g), Seat(3));
    let effects = ok(&mut g, 3, Move::Chaos);
    assert_eq!(effects, vec![Effect::ChaosActivated { seat: Seat(3) }]);
    assert_eq!(omni(&g).joust.chaos, Some(Chaos { declined: vec![Seat(1)], activated_by: Some(Seat(3)) }));
}

#[test]
fn b13_16_both_opponents_may_decline() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    to_tournaments(&mut g, 0, 7, FamilyCard::Eagle, false);
    let chaos = omni(&g).joust.chaos.unwrap();
    assert_eq!(chaos, Chaos { declined: vec![Seat(1), Seat(3)], activated_by: None });
    assert_eq!(decision(&g), Decision::Play);
}

// ---------------------------------------------------------------- tournaments

#[test]
fn b13_17_thirteen_tournaments_led_first_by_the_masters_left_then_by_each_winner() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    to_tournaments(&mut g, 3, 7, FamilyCard::Lion, false);
    assert_eq!(to_move(&g), Seat(0), "seat 0 sits left of master 3");
    play_out_joust(&mut g);
    let joust = &omni(&g).history[0];
    assert_eq!(joust.tournaments.len(), 13);
    assert_eq!(joust.tournaments[0].leader, Seat(0));
    for pair in joust.tournaments.windows(2) {
        assert_eq!(pair[1].leader, pair[0].winner.unwrap());
    }
    for t in &joust.tournaments {
        let seats: Vec<u8> = t.plays.iter().map(|p| p.seat.0).collect();
        let l = t.leader.0;
        assert_eq!(seats, [l, (l + 1) % 4, (l + 2) % 4, (l + 3) % 4], "clockwise from the leader");
    }
}

#[test]
fn b13_18_follow_the_family_led() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    ok(&mut g, 0, play("E11"));
    ok(&mut g, 3, play("L13"));
    // Seat 2 holds Eagles: no Dragon now.
    refused(&mut g, 2, play("D13"), "B13-18");
    let legal = g.legal_moves(Seat(2));
    assert!(legal.iter().all(|m| matches!(m, Move::Play { knight } if knight.family == Family::Eagle)));
    assert_eq!(legal.len(), 5);
}

#[test]
fn b13_18_the_servant_is_revealed_and_played_by_the_master() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    assert!(g.view(Viewer::Spectator).joust.hands[1].held.is_none());
    let effects = ok(&mut g, 0, play("E11"));
    assert_eq!(effects[1], Effect::ServantRevealed { servant: Seat(1), knights: knights("W2-13 L13") });
    // Everyone now sees the servant's knights.
    for viewer in [Viewer::Spectator, Viewer::Seat(Seat(0)), Viewer::Seat(Seat(2))] {
        assert_eq!(g.view(viewer).joust.hands[1].held, Some(knights("W2-13 L13")));
    }
    // The master is to move for the servant; the servant's seat cannot play.
    assert_eq!(g.status(), Status::InProgress { to_move: vec![Seat(3)] });
    let turn = g.view(Viewer::Seat(Seat(3))).turn.unwrap();
    assert_eq!((turn.seat, turn.decision, turn.for_seat), (Seat(3), Decision::PlayForServant, Seat(1)));
    refused(&mut g, 1, play("L13"), "B13-18");
    assert!(g.legal_moves(Seat(1)).is_empty());
    // The servant has no Eagle: any of its 13 knights; the master's own are refused.
    assert_eq!(g.legal_moves(Seat(3)).len(), 13);
    refused(&mut g, 3, play("E9"), "B13-17");
    let effects = ok(&mut g, 3, play("W2"));
    assert_eq!(effects[0], Effect::KnightPlayed { seat: Seat(1), knight: k("W2"), by: Seat(3) });
    // Then the master plays their own knights on their own turn.
    ok(&mut g, 2, play("E5"));
    refused(&mut g, 3, play("W13"), "B13-17");
    ok(&mut g, 3, play("E9"));
    // The servant won (favoured Wolf 2): the master leads for the servant.
    assert_eq!(omni(&g).turn.unwrap().decision, Decision::PlayForServant);
}

#[test]
fn b13_17_after_the_servant_wins_the_servants_seat_leads_and_the_master_plays_for_it() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    ok(&mut g, 0, play("E11"));
    ok(&mut g, 3, play("W2")); // for the servant, seat 1
    ok(&mut g, 2, play("E5"));
    ok(&mut g, 3, play("E9"));
    // The servant's favoured Wolf 2 won: seat 1 leads tournament 2, and the
    // master chooses its knight.
    let view = omni(&g);
    assert_eq!(view.joust.tournaments[0].winner, Some(Seat(1)));
    assert_eq!(view.joust.tournaments[1].leader, Seat(1));
    let turn = view.turn.unwrap();
    assert_eq!((turn.seat, turn.decision, turn.for_seat), (Seat(3), Decision::PlayForServant, Seat(1)));
    refused(&mut g, 1, play("W13"), "B13-18");
    refused(&mut g, 3, play("E10"), "B13-17"); // the master's own knight
    assert!(matches!(g.apply(Seat(0), &play("E1")), Err(MoveError::NotYourTurn { .. })));
    let effects = ok(&mut g, 3, play("W13"));
    assert_eq!(effects[0], Effect::KnightPlayed { seat: Seat(1), knight: k("W13"), by: Seat(3) });
    // Then clockwise from the servant's seat: 2, 3 (the master's own), 0.
    assert_eq!((to_move(&g), decision(&g)), (Seat(2), Decision::Play));
    ok(&mut g, 2, play("D10"));
    assert_eq!((to_move(&g), decision(&g)), (Seat(3), Decision::Play));
    refused(&mut g, 3, play("L5"), "B13-18"); // the master holds Wolf 1
    ok(&mut g, 3, play("W1"));
    ok(&mut g, 0, play("E1"));
    let view = omni(&g);
    let seats: Vec<u8> = view.joust.tournaments[1].plays.iter().map(|p| p.seat.0).collect();
    assert_eq!(seats, [1, 2, 3, 0]);
    assert_eq!(view.joust.tournaments[1].winner, Some(Seat(1)));
    assert_eq!(view.joust.tournaments_won, vec![0, 2]);
    assert_eq!(view.joust.tournaments[2].leader, Seat(1));
    assert_eq!(decision(&g), Decision::PlayForServant);
}

#[test]
fn b13_19_worked_check_off_family_lion_13_loses_to_the_led_eagle_11() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    ok(&mut g, 0, play("E11"));
    ok(&mut g, 3, play("L13"));
    ok(&mut g, 2, play("E5"));
    let effects = ok(&mut g, 3, play("E9"));
    assert_eq!(effects[1], Effect::TournamentWon { number: 1, winner: Seat(0), camp: Camp(0) });
    assert_eq!(to_move(&g), Seat(0), "the winner leads the next tournament");
}

#[test]
fn b13_19_worked_check_favoured_wolf_2_beats_the_led_eagle_11() {
    let (mut g, _) = game(WORKED, 3);
    to_tournaments(&mut g, 3, 7, FamilyCard::Wolf, false);
    ok(&mut g, 0, play("E11"));
    ok(&mut g, 3, play("W2"));
    ok(&mut g, 2, play("E5"));
    let effects = ok(&mut g, 3, play("E9"));
    assert_eq!(effects[1], Effect::TournamentWon { number: 1, winner: Seat(1), camp: Camp(1) });
    assert_eq!(omni(&g).joust.tournaments_won, vec![0, 1]);
}

// ---------------------------------------------------------------- crowns

fn scored(effects: &[Effect]) -> (Crowns, Vec<u8>, Vec<u32>) {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::JoustScored { crowns, tournaments_won, totals, .. } => Some((*crowns, tournaments_won.clone(), totals.clone())),
            _ => None,
        })
        .expect("the joust was scored")
}

#[test]
fn b13_20_the_bonus_follows_the_contract() {
    // Contract 9 made with 13: bonus 8 + 4 over.
    let (mut g, _) = game_to(EAGLE_WALL, 2, 50);
    to_tournaments(&mut g, 0, 9, FamilyCard::Eagle, false);
    let (crowns, won, totals) = scored(&play_out_joust(&mut g));
    assert_eq!((crowns, won, totals), (Crowns { camp: Camp(0), crowns: 12 }, vec![13, 0], vec![12, 0]));
}

#[test]
fn b13_21_a_made_contract_scores_bonus_plus_one_per_extra_tournament() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    to_tournaments(&mut g, 0, 7, FamilyCard::Eagle, false);
    let (crowns, won, _) = scored(&play_out_joust(&mut g));
    assert_eq!((crowns, won), (Crowns { camp: Camp(0), crowns: 2 + 6 }, vec![13, 0]));
    assert_eq!(g.crowns(), [8, 0]);
    assert!(!g.status().is_finished());
}

#[test]
fn b13_22_a_failed_contract_gives_the_other_camp_half_the_bonus() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    to_tournaments(&mut g, 3, 12, FamilyCard::Eagle, false);
    let (crowns, won, _) = scored(&play_out_joust(&mut g));
    assert_eq!((crowns, won), (Crowns { camp: Camp(0), crowns: 15 }, vec![13, 0]));
}

#[test]
fn b13_23_chaos_doubles_a_made_contract_and_adds_two_per_extra() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    to_tournaments(&mut g, 0, 7, FamilyCard::Eagle, true);
    let effects = play_out_joust(&mut g);
    assert!(effects.iter().any(|e| matches!(e, Effect::JoustScored { chaos: true, .. })));
    assert_eq!(scored(&effects).0, Crowns { camp: Camp(0), crowns: 2 * 2 + 2 * 6 });
}

#[test]
fn b13_23_chaos_on_a_failed_contract_gives_the_bonus_plus_two_per_missing() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 100);
    to_tournaments(&mut g, 1, 10, FamilyCard::Eagle, true);
    assert_eq!(scored(&play_out_joust(&mut g)).0, Crowns { camp: Camp(0), crowns: 12 + 2 * 10 });
}

/// Seat 0 holds Eagle 1–12 and Dragon 13; seat 3 holds Eagle 13. With Eagle
/// favoured and every seat playing its first legal knight, camp 0 wins 12.
const TWELVE_FOR_CAMP_0: [&str; 4] = ["E1-12 D13", "W3-13 L12 L13", "D1-12 W2", "E13 L1-11 W1"];
/// Seat 3 holds Eagle 11–13 besides seat 0's lower Eagles: camp 0 wins 10.
const TEN_FOR_CAMP_0: [&str; 4] = ["E1-10 D13 W12 W13", "W3-11 L12 L13 D12 D11", "D1-10 W2 W1 L11", "E11-13 L1-10"];

/// The rules' four worked crown checks, each played out as a whole joust:
/// seat 0 masters a contract of 11 (seat 1 opens).
#[test]
fn b13_21_to_23_worked_checks_of_a_contract_of_11_played_out() {
    let cases = [
        (TWELVE_FOR_CAMP_0, false, [12, 1], Camp(0), 21),
        (TEN_FOR_CAMP_0, false, [10, 3], Camp(1), 10),
        (TEN_FOR_CAMP_0, true, [10, 3], Camp(1), 20 + 2),
        (TWELVE_FOR_CAMP_0, true, [12, 1], Camp(0), 40 + 2),
    ];
    for (specs, chaos, won, camp, crowns) in cases {
        let (mut g, _) = game_to(specs, 1, 100);
        assert_eq!(omni(&g).joust.opener, Seat(1));
        to_tournaments(&mut g, 0, 11, FamilyCard::Eagle, chaos);
        let (got, tournaments_won, totals) = scored(&play_out_joust(&mut g));
        assert_eq!(tournaments_won, won, "chaos {chaos}");
        assert_eq!(got, Crowns { camp, crowns }, "chaos {chaos}");
        let mut expect = vec![0, 0];
        expect[camp.index()] = crowns;
        assert_eq!(totals, expect);
    }
}

#[test]
fn b13_24_the_match_ends_after_the_joust_reaching_the_target() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 50);
    to_tournaments(&mut g, 1, 13, FamilyCard::Eagle, true);
    let effects = play_out_joust(&mut g);
    let last = effects.last().unwrap();
    assert_eq!(*last, Effect::MatchWon { camp: Camp(0), winners: vec![Seat(0), Seat(2)], crowns: vec![66, 0] });
    let Status::Finished { result } = g.status() else { panic!("finished") };
    assert_eq!((result.scores, result.winners), (vec![66, 0, 66, 0], vec![Seat(0), Seat(2)]));
    assert_eq!(g.winner(), Some(Camp(0)));
    for seat in 0..4 {
        assert!(g.legal_moves(Seat(seat)).is_empty());
        assert_eq!(g.apply(Seat(seat), &Move::Pass), Err(MoveError::GameOver));
    }
    let view = g.view(Viewer::Spectator);
    assert_eq!((view.winner, view.turn), (Some(Camp(0)), None));
}

#[test]
fn b13_24_below_the_target_a_new_joust_is_dealt() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 20);
    to_tournaments(&mut g, 0, 7, FamilyCard::Eagle, false);
    let effects = play_out_joust(&mut g);
    assert!(!effects.iter().any(|e| matches!(e, Effect::MatchWon { .. })));
    assert!(effects.iter().any(|e| matches!(e, Effect::Dealt { joust: 2, deal: 1, .. })));
    assert_eq!(g.crowns(), [8, 0]);
}

// ---------------------------------------------------------------- hidden information

#[test]
fn b13_25_a_seat_sees_its_knights_the_bids_and_the_scores_but_no_other_hand() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    ok(&mut g, 2, weapons_card(18));
    let view = g.view(Viewer::Seat(Seat(1)));
    assert_eq!(view.seat, Some(Seat(1)));
    assert_eq!(view.joust.hands[1].held, Some(knights("W1-9 D7-10")));
    assert_eq!(view.joust.hands[1].dealt, Some(knights("W1-9 D7-10")));
    for other in [0, 2, 3] {
        assert_eq!(view.joust.hands[other].held, None);
        assert_eq!(view.joust.hands[other].dealt, None);
    }
    assert_eq!(view.joust.calls.len(), 1);
    assert_eq!(view.crowns, vec![0, 0]);
    assert_eq!(view.turn.unwrap().seat, Seat(3));
    let spectator = g.view(Viewer::Spectator);
    assert!(spectator.joust.hands.iter().all(|h| h.held.is_none() && h.dealt.is_none()));
    assert_eq!(spectator.seat, None);
}

#[test]
fn b13_25_a_finished_jousts_hands_become_public() {
    let (mut g, setup_effects) = game_to(EAGLE_WALL, 2, 100);
    let first_deal = setup_effects.iter().find(|e| matches!(e, Effect::Dealt { .. })).unwrap().clone();
    to_tournaments(&mut g, 0, 7, FamilyCard::Eagle, false);
    let effects = play_out_joust(&mut g);
    let view = g.view(Viewer::Spectator);
    assert_eq!(view.history.len(), 1);
    assert_eq!(view.history[0].hands[3].dealt, Some(knights("L1-13")));
    assert_eq!(view.history[0].crowns, Some(Crowns { camp: Camp(0), crowns: 8 }));
    // The first joust's deal, redacted now, shows every hand to anyone.
    let Effect::Dealt { hands, .. } = g.redact(&first_deal, Viewer::Spectator) else { unreachable!() };
    assert!(hands.iter().all(|h| h.knights.is_some()));
    // The new joust's deal is private again.
    let next = effects.iter().rfind(|e| matches!(e, Effect::Dealt { joust: 2, .. })).unwrap();
    let Effect::Dealt { hands, .. } = g.redact(next, Viewer::Seat(Seat(1))) else { unreachable!() };
    let seen: Vec<bool> = hands.iter().map(|h| h.knights.is_some()).collect();
    assert_eq!(seen, [false, true, false, false]);
    let Effect::Dealt { hands, .. } = g.redact(next, Viewer::Omniscient) else { unreachable!() };
    assert!(hands.iter().all(|h| h.knights.is_some()));
}

#[test]
fn b13_25_everything_is_public_once_the_match_is_over() {
    let (mut g, _) = game_to(EAGLE_WALL, 2, 20);
    to_tournaments(&mut g, 1, 13, FamilyCard::Eagle, false);
    play_out_joust(&mut g);
    assert!(g.status().is_finished());
    let view = g.view(Viewer::Spectator);
    assert!(view.joust.hands.iter().all(|h| h.dealt.as_ref().is_some_and(|d| d.len() == 13)));
}

#[test]
fn unknown_seats_are_refused() {
    let (mut g, _) = game(EAGLE_WALL, 2);
    let before = g.clone();
    assert_eq!(g.apply(Seat(4), &Move::Pass), Err(MoveError::UnknownSeat { seat: Seat(4) }));
    assert_eq!(g, before);
    assert!(g.legal_moves(Seat(9)).is_empty());
    let view = g.view(Viewer::Seat(Seat(9)));
    assert!(view.joust.hands.iter().all(|h| h.held.is_none()));
}

#[test]
fn the_test_constructor_refuses_a_deal_that_is_not_the_52_knights() {
    let bad = [knights("E1-13"), knights("E1-13"), knights("D1-13"), knights("L1-13")];
    assert!(matches!(Game::with_first_deal(&setup(1, None, 20), bad), Err(SetupError::InvalidOption { field: "hands", .. })));
}

/// B13-5: the game's sides are its two camps, partners facing each other.
#[test]
fn b13_5_the_sides_are_the_two_camps() {
    let sides = Game::sides(4);
    assert_eq!(sides, vec![vec![Seat(0), Seat(2)], vec![Seat(1), Seat(3)]]);
    for side in &sides {
        let camps: Vec<Camp> = side.iter().map(|&seat| Camp::of(seat)).collect();
        assert!(camps.windows(2).all(|pair| pair[0] == pair[1]), "a side is one camp");
    }
}
