//! One test (or more) per rule id, KK-1 … KK-31, and the worked checks.

use ludo_engine::{DeckRng, Engine, MoveError, Seat, Seed, Setup, SetupError, Status, Viewer};

use super::*;
use crate::board::{Board, BoardError, Road};
use crate::country::{Country::*, Piece};
use crate::effect::EndReason;
use crate::moves::Source;
use crate::scoring;
use crate::view::TurnStep;

// ---------------------------------------------------------------- the board

#[test]
fn kk1_board_has_nine_countries_each_with_sites_and_a_seal() {
    let board = Board::embedded();
    assert_eq!(board.countries.len(), 9);
    for c in Country::ALL {
        assert!(board.countries.iter().any(|i| i.id == c), "{c} missing");
        assert!(board.sites.iter().any(|s| s.country == c), "{c} has no site");
    }
    let v = game(3).view(Viewer::Spectator);
    assert_eq!(v.seals.iter().map(|s| s.country).collect::<Vec<_>>(), Country::ALL.to_vec());
}

#[test]
fn kk2_fifteen_numbered_alliances_with_the_rules_pairs() {
    let board = Board::embedded();
    let mut numbers: Vec<u8> = board.alliances.iter().map(|a| a.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=15).collect::<Vec<u8>>());
    let pair = |n: u8| {
        let a = board.alliances.iter().find(|a| a.number == n).unwrap();
        let mut p = a.countries.to_vec();
        p.sort();
        (p, a.by_sea)
    };
    assert_eq!(pair(1), (vec![England, Lotharingia], true));
    assert_eq!(pair(2), (vec![England, France], true));
    assert_eq!(pair(14), (vec![Burgundy, Italy], false));
    assert_eq!(pair(15), (vec![Bavaria, Italy], false));
}

#[test]
fn kk3_board_is_data_a_replacement_board_plays_and_a_broken_one_is_refused() {
    let mut board = Board::embedded();
    let cluny = board.sites.iter_mut().find(|s| s.id == "cluny").unwrap();
    cluny.id = "cluny-abbey".into();
    for Road(ends) in &mut board.roads {
        for end in ends.iter_mut().filter(|e| *e == "cluny") {
            *end = "cluny-abbey".into();
        }
    }
    let options = Options { first_seat: Some(s(0)), variant: Variant::Standard, board: Some(board.clone()) };
    let (mut g, _) = Game::new(&Setup { players: 3, options, seed: Seed([1; 32]) }).unwrap();
    assert_eq!(g.board(), &board);
    g.set_hand(s(0), &[BB, FR, FR]);
    place(&mut g, s(0), vec![abbey(Burgundy, "cluny-abbey", &[BB])]).unwrap();
    assert_eq!(g.view(Viewer::Spectator).abbeys[0].site, "cluny-abbey");

    board.roads.push(Road(["cluny-abbey".into(), "atlantis".into()]));
    let options = Options { board: Some(board), ..Options::default() };
    let err = Game::new(&Setup { players: 3, options, seed: Seed([1; 32]) }).unwrap_err();
    assert!(matches!(err, SetupError::InvalidOption { field: "board", .. }), "{err:?}");
}

#[test]
fn kk3_the_embedded_board_given_explicitly_plays_the_same_game() {
    let setup = |board| Setup { players: 4, options: Options { board, ..Options::default() }, seed: Seed([9; 32]) };
    let (a, ea) = Game::new(&setup(None)).unwrap();
    let (b, eb) = Game::new(&setup(Some(Board::embedded()))).unwrap();
    assert_eq!(a, b);
    assert_eq!(ea, eb);
}

// ------------------------------------------------------------- components

#[test]
fn kk4_fifty_five_cards_in_five_kinds_naming_their_countries() {
    let board = Board::embedded();
    let count = |k: CardKind| board.card_kinds.iter().find(|i| i.id == k).unwrap().count;
    assert_eq!([count(FA), count(BB), count(LI), count(ES), count(FR)], [13, 12, 11, 10, 9]);
    assert_eq!(board.card_kinds.iter().map(|k| usize::from(k.count)).sum::<usize>(), 55);
    assert_eq!(FA.countries(), &[Franconia, Aragon]);
    assert_eq!(FR.countries(), &[France]);
    for c in Country::ALL {
        assert_eq!(CardKind::ALL.iter().filter(|k| k.names(c)).count(), 1, "{c} is on exactly one kind");
    }
}

#[test]
fn kk5_each_player_starts_with_20_abbeys_and_8_counsellors() {
    let v = game(5).view(Viewer::Spectator);
    for seat in &v.seats {
        assert_eq!((seat.abbeys_left, seat.counsellors_left), (20, 8));
    }
}

// ----------------------------------------------------------------- set-up

fn cards_in_play(g: &Game) -> usize {
    g.deck.len() + g.hands.iter().map(|h| h.len()).sum::<usize>() + g.display.iter().flatten().count()
}

#[test]
fn kk6_four_players_remove_one_card_per_kind_three_players_two() {
    for (players, in_play, removed) in [(5, 55, 0), (4, 50, 5), (3, 45, 10)] {
        let (g, effects) = Game::new(&Setup { players, options: Options::default(), seed: Seed([3; 32]) }).unwrap();
        assert_eq!(cards_in_play(&g), in_play);
        assert_eq!(g.removed.len(), removed);
        for k in CardKind::ALL {
            assert_eq!(g.removed.iter().filter(|&&r| r == k).count(), removed / 5);
        }
        let announced = effects.iter().any(|e| matches!(e, Effect::CardsRemoved { cards } if cards.len() == removed));
        assert_eq!(announced, removed > 0);
    }
}

#[test]
fn kk7_three_private_cards_each_two_face_up_and_an_empty_discard() {
    let (g, effects) = Game::new(&Setup { players: 4, options: Options::default(), seed: Seed([4; 32]) }).unwrap();
    assert!(g.hands.iter().all(|h| h.len() == 3));
    assert!(g.display.iter().all(Option::is_some));
    assert!(g.discard.is_empty());
    let deals: Vec<&Effect> = effects.iter().filter(|e| matches!(e, Effect::Dealt { .. })).collect();
    assert_eq!(deals.len(), 4);
    for e in deals {
        let Effect::Dealt { seat, .. } = e else { unreachable!() };
        let other = Seat((seat.0 + 1) % 4);
        assert!(matches!(g.redact(e, Viewer::Seat(*seat)), Effect::Dealt { cards: Some(c), .. } if c.len() == 3));
        assert!(matches!(g.redact(e, Viewer::Seat(other)), Effect::Dealt { cards: None, .. }));
        assert!(matches!(g.redact(e, Viewer::Spectator), Effect::Dealt { cards: None, .. }));
        assert!(matches!(g.redact(e, Viewer::Omniscient), Effect::Dealt { cards: Some(_), .. }));
    }
}

#[test]
fn kk7_deal_follows_the_documented_draw_order() {
    let seed = Seed([0x42; 32]);
    let (g, _) = Game::new(&Setup { players: 4, options: Options::default(), seed: seed.clone() }).unwrap();
    // Independently: first seat, then the shuffle of the 50 cards in kind order.
    let mut rng = DeckRng::new(&seed);
    let first = Seat(rng.below(4) as u8);
    let mut deck = Vec::new();
    for (k, n) in CardKind::ALL.into_iter().zip([12, 11, 10, 9, 8]) {
        deck.extend(std::iter::repeat_n(k, n));
    }
    rng.shuffle(&mut deck);
    assert_eq!(g.first_seat, first);
    let mut at = 0;
    let mut seat = first;
    for _ in 0..4 {
        assert_eq!(g.hands[seat.index()], Cards::of(&deck[at..at + 3]), "hand of {seat}");
        at += 3;
        seat = seat.next(4);
    }
    assert_eq!(g.display, [Some(deck[at]), Some(deck[at + 1])]);
    let rest: Vec<CardKind> = g.deck.iter().rev().copied().collect();
    assert_eq!(rest, deck[at + 2..]);
}

#[test]
fn kk8_first_seat_from_options_or_drawn_and_play_is_clockwise() {
    let opts = Options { first_seat: Some(s(2)), ..Options::default() };
    let (g, effects) = Game::new(&Setup { players: 3, options: opts, seed: Seed([5; 32]) }).unwrap();
    assert_eq!(g.status(), Status::InProgress { to_move: vec![s(2)] });
    assert!(effects.contains(&Effect::FirstSeat { seat: s(2), drawn: false }));

    let seed = Seed([6; 32]);
    let (g, effects) = Game::new(&Setup { players: 5, options: Options::default(), seed: seed.clone() }).unwrap();
    let drawn = Seat(DeckRng::new(&seed).below(5) as u8);
    assert_eq!(g.first_seat, drawn);
    assert!(effects.contains(&Effect::FirstSeat { seat: drawn, drawn: true }));

    let mut g = game(3);
    let discard = first_card(&g, s(0));
    play(&mut g, s(0), Move::Exchange { discard, take: Source::Deck }).unwrap();
    assert_eq!(g.turn, s(1));
    let discard = first_card(&g, s(1));
    play(&mut g, s(1), Move::Exchange { discard, take: Source::Deck }).unwrap();
    let discard = first_card(&g, s(2));
    play(&mut g, s(2), Move::Exchange { discard, take: Source::Deck }).unwrap();
    assert_eq!(g.turn, s(0), "the black token stays; play goes round clockwise");

    let opts = Options { first_seat: Some(s(3)), ..Options::default() };
    let err = Game::new(&Setup { players: 3, options: opts, seed: Seed([5; 32]) }).unwrap_err();
    assert!(matches!(err, SetupError::InvalidOption { field: "first_seat", .. }));
}

#[test]
fn three_to_five_players_only() {
    for players in [0, 1, 2, 6] {
        let err = Game::new(&Setup { players, options: Options::default(), seed: Seed([0; 32]) }).unwrap_err();
        assert_eq!(err, SetupError::PlayerCount { min: 3, max: 5, got: players });
    }
}

fn first_card(g: &Game, seat: Seat) -> CardKind {
    g.hands[seat.index()].to_vec()[0]
}

// ------------------------------------------------------------------ a turn

#[test]
fn kk9_place_then_refill_to_three_then_refill_the_display_then_next_seat() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, FR, ES]);
    g.put_abbey(s(1), "bec");
    g.set_deck_top_first(&[LI, BB, FA, FA, FA]);
    let site = g.free_site(France);
    place(&mut g, s(0), vec![abbey(France, &site, &[FR]), counsellor(France, &[FR])]).unwrap();
    assert_eq!(g.step(), Step::Refill);
    assert_eq!(g.view(Viewer::Seat(s(0))).turn.unwrap().step, TurnStep::Draw);
    assert_eq!(g.legal_moves(s(0)).iter().filter(|m| matches!(m, Move::Place { .. })).count(), 0);
    play(&mut g, s(0), Move::TakeDisplay { slot: 1 }).unwrap();
    assert_eq!(g.display[1], None, "the display waits until the hand is full");
    let effects = play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    assert_eq!(g.hands[0].len(), 3);
    assert_eq!(g.display[1], Some(BB), "refilled from the deck once the hand holds 3");
    assert_eq!(effects.last(), Some(&Effect::TurnStarted { seat: s(1) }));
    assert_eq!(g.discard, vec![FR, FR]);
}

#[test]
fn kk9_a_placement_needs_a_piece() {
    let mut g = game(3);
    assert_eq!(rule_of(place(&mut g, s(0), vec![])), "KK-9");
}

#[test]
fn kk10_exchange_discards_one_takes_one_and_ends_the_turn() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, ES, ES]);
    g.display = [Some(LI), Some(BB)];
    g.set_deck_top_first(&[FA, FA, FA]);
    let effects = play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Display1 }).unwrap();
    assert_eq!(g.hands[0], Cards::of(&[ES, ES, BB]));
    assert_eq!(g.discard, vec![FR]);
    assert_eq!(g.display, [Some(LI), Some(FA)]);
    assert_eq!(g.turn, s(1));
    assert!(effects.contains(&Effect::Discarded { seat: s(0), card: FR }));
    assert!(effects.contains(&Effect::TookFromDisplay { seat: s(0), slot: 1, card: BB }));

    g.set_hand(s(1), &[FR, ES, ES]);
    let effects = play(&mut g, s(1), Move::Exchange { discard: ES, take: Source::Deck }).unwrap();
    assert_eq!(g.hands[1], Cards::of(&[FR, ES, FA]));
    assert!(effects.contains(&Effect::DrewFromDeck { seat: s(1), card: Some(FA) }));
}

#[test]
fn kk10_exchange_needs_the_card_and_passing_is_no_exchange() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, ES, ES]);
    assert_eq!(rule_of(play(&mut g, s(0), Move::Exchange { discard: BB, take: Source::Deck })), "KK-10");
    g.display[0] = None;
    assert_eq!(rule_of(play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Display0 })), "KK-10");
    assert_eq!(rule_of(play(&mut g, s(0), Move::Pass {})), "KK-10");
    assert!(!g.legal_moves(s(0)).contains(&Move::Pass {}));
}

#[test]
fn kk10_a_player_who_cannot_place_may_still_exchange() {
    let mut g = game(3);
    g.abbeys_left[0] = 0;
    g.counsellors_left[0] = 0;
    let moves = g.legal_moves(s(0));
    assert!(!moves.is_empty());
    assert!(moves.iter().all(|m| matches!(m, Move::Exchange { .. })));
}

// ---------------------------------------------------------------- payments

#[test]
fn kk11_one_card_naming_the_country_or_either_country_of_a_pair_card() {
    let mut g = game(3);
    g.set_hand(s(0), &[FA, ES, BB]);
    place(&mut g, s(0), vec![abbey(Aragon, "ripoll", &[FA])]).unwrap();
    let mut g = game(3);
    g.set_hand(s(0), &[FA, ES, BB]);
    place(&mut g, s(0), vec![abbey(Franconia, "fulda", &[FA])]).unwrap();
    let mut g = game(3);
    g.set_hand(s(0), &[FA, ES, BB]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(France, "bec", &[FA])])), "KK-11");
}

#[test]
fn kk11_two_identical_cards_are_a_joker_for_any_country() {
    let mut g = game(3);
    g.set_hand(s(0), &[ES, ES, BB]);
    place(&mut g, s(0), vec![abbey(Italy, "farfa", &[ES, ES])]).unwrap();
    assert_eq!(g.hands[0], Cards::of(&[BB]));
    let mut g = game(3);
    g.set_hand(s(0), &[ES, BB, BB]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(Italy, "farfa", &[ES, BB])])), "KK-11");
}

#[test]
fn kk11_each_piece_is_paid_by_one_card_or_a_pair_and_at_most_three_cards_two_pieces() {
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[FR, FR, FR]);
    let free = |g: &Game, n| g.free_site_n(France, n);
    let (a, b, c) = (free(&g, 0), free(&g, 1), free(&g, 2));
    // Three cards for one piece: no.
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(France, &a, &[FR, FR, FR])])), "KK-11");
    // Unpaid piece: no.
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(France, &a, &[])])), "KK-11");
    // Three pieces: no.
    let three = vec![abbey(France, &a, &[FR]), abbey(France, &b, &[FR]), abbey(France, &c, &[FR])];
    assert_eq!(rule_of(place(&mut g, s(0), three)), "KK-11");
    // Two jokers = four cards: no (even before looking at the hand).
    g.set_hand(s(0), &[FR, FR, FR]);
    let four = vec![abbey(France, &a, &[FR, FR]), counsellor(France, &[FR, FR])];
    assert_eq!(rule_of(place(&mut g, s(0), four)), "KK-11");
    // A card and a joker: three cards, two pieces: yes.
    place(&mut g, s(0), vec![abbey(France, &a, &[FR]), abbey(France, &b, &[FR, FR])]).unwrap();
    assert_eq!(g.discard, vec![FR, FR, FR]);
}

#[test]
fn kk11_cards_must_be_in_hand() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, ES, ES]);
    let err = place(&mut g, s(0), vec![abbey(Aragon, "ripoll", &[FA])]);
    assert_eq!(rule_of(err), "KK-9");
    let mut g = game(3);
    g.set_hand(s(0), &[FR, ES, BB]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(Italy, "farfa", &[ES, ES])])), "KK-9");
}

// ---------------------------------------------------------------- countries

#[test]
fn kk12_all_pieces_of_a_turn_go_into_one_country() {
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.put_abbey(s(1), "ripoll");
    g.set_hand(s(0), &[FR, FA, ES]);
    let two = vec![abbey(France, "jumieges", &[FR]), abbey(Aragon, "poblet", &[FA])];
    assert_eq!(rule_of(place(&mut g, s(0), two)), "KK-12");
}

#[test]
fn kk13_first_piece_in_an_empty_country_is_one_abbey_only_even_with_cards_for_two() {
    // Worked check: Anne has France + two Franconia/Aragon; Franconia is empty.
    let mut g = game(3);
    g.set_hand(s(0), &[FR, FA, FA]);
    let two = vec![abbey(Franconia, "chorin", &[FA]), abbey(Franconia, "obra", &[FA])];
    assert_eq!(rule_of(place(&mut g, s(0), two)), "KK-13");
    let with_counsellor = vec![abbey(Franconia, "chorin", &[FA]), counsellor(Franconia, &[FA])];
    assert_eq!(rule_of(place(&mut g, s(0), with_counsellor)), "KK-13");
    assert_eq!(rule_of(place(&mut g, s(0), vec![counsellor(Franconia, &[FA])])), "KK-13");
    assert!(
        g.legal_moves(s(0)).iter().all(|m| match m {
            Move::Place { pieces } => pieces.len() == 1 && pieces[0].piece == Piece::Abbey,
            _ => true,
        }),
        "only single abbeys are offered on an empty board"
    );
    place(&mut g, s(0), vec![abbey(Franconia, "chorin", &[FA])]).unwrap();
}

#[test]
fn kk13_second_player_may_place_two_pieces_where_an_abbey_stands() {
    // Worked example: Bertrand (one Franconia/Aragon, two Bavaria/Burgundy) after Anne's abbey at Chorin.
    let mut g = game(3);
    g.put_abbey(s(0), "chorin");
    g.turn = s(1);
    g.set_hand(s(1), &[FA, BB, BB]);
    place(&mut g, s(1), vec![abbey(Franconia, "obra", &[FA]), counsellor(Franconia, &[BB, BB])]).unwrap();
    assert_eq!(g.counsellors[Franconia.index()][1], 1);
}

// ---------------------------------------------------------------- placement

#[test]
fn kk14_an_abbey_goes_on_a_free_site_of_that_country() {
    let mut g = game(3);
    g.put_abbey(s(1), "cluny");
    g.set_hand(s(0), &[BB, BB, FR]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(Burgundy, "cluny", &[BB])])), "KK-14");
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(Burgundy, "melk", &[BB])])), "KK-14");
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(Burgundy, "nowhere", &[BB])])), "KK-14");
    let no_site = Placement { site: None, ..abbey(Burgundy, "x", &[BB]) };
    assert_eq!(rule_of(place(&mut g, s(0), vec![no_site])), "KK-14");
    // The same site twice in one move: the second finds it taken (KK-16 order).
    let twice = vec![abbey(Burgundy, "tournus", &[BB]), abbey(Burgundy, "tournus", &[BB])];
    assert_eq!(rule_of(place(&mut g, s(0), twice)), "KK-14");
    place(&mut g, s(0), vec![abbey(Burgundy, "tournus", &[BB])]).unwrap();
    assert_eq!(g.owner[usize::from(g.board.lookup.get("tournus").unwrap())], Some(s(0)));
}

#[test]
fn kk15_counsellor_limit_is_largest_abbey_count_france_red3_yellow2_blue2_allows_3() {
    // Worked check: France Red 3, Yellow 2, Blue 2 → at most 3 counsellors.
    let mut g = game(4);
    g.put_abbeys(s(1), France, 3);
    g.put_abbeys(s(2), France, 2);
    g.put_abbeys(s(3), France, 2);
    assert_eq!(g.limit(France), 3);
    g.put_counsellors(s(1), France, 2);
    g.set_hand(s(0), &[FR, FR, ES]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![counsellor(France, &[FR]), counsellor(France, &[FR])])), "KK-15");
    place(&mut g, s(0), vec![counsellor(France, &[FR])]).unwrap();
    assert_eq!(g.seal(France), 3);
}

#[test]
fn kk15_anne_places_two_counsellors_where_she_has_no_abbey() {
    // Worked example: Bertrand 4 abbeys in France, Bertrand and Christian one counsellor each.
    let mut g = game(3);
    g.put_abbeys(s(1), France, 4);
    g.put_counsellors(s(1), France, 1);
    g.put_counsellors(s(2), France, 1);
    g.set_hand(s(0), &[FR, ES, ES]);
    place(&mut g, s(0), vec![counsellor(France, &[FR]), counsellor(France, &[ES, ES])]).unwrap();
    assert_eq!(g.seal(France), 4);
}

#[test]
fn kk15_no_counsellor_where_there_is_no_abbey_and_none_on_a_site() {
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[ES, ES, FR]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![counsellor(Swabia, &[ES])])), "KK-13");
    let on_site = Placement { site: Some("bec".into()), ..counsellor(France, &[FR]) };
    assert_eq!(rule_of(place(&mut g, s(0), vec![on_site])), "KK-15");
    // Italy: Bertrand and Daniel 2 abbeys each, no counsellor → two counsellors fit (worked example).
    let mut g = game(4);
    g.put_abbeys(s(1), Italy, 2);
    g.put_abbeys(s(3), Italy, 2);
    g.set_hand(s(2), &[LI, LI, LI]);
    g.turn = s(2);
    place(&mut g, s(2), vec![counsellor(Italy, &[LI]), counsellor(Italy, &[LI, LI])]).unwrap();
    assert_eq!(g.seal(Italy), 2);
}

#[test]
fn kk16_pieces_are_placed_in_listed_order_an_abbey_first_raises_the_limit() {
    let mut g = game(3);
    g.put_abbey(s(0), "bec");
    g.put_counsellors(s(1), France, 1);
    g.set_hand(s(0), &[FR, FR, ES]);
    let counsellor_first = vec![counsellor(France, &[FR]), abbey(France, "jumieges", &[FR])];
    assert_eq!(rule_of(place(&mut g, s(0), counsellor_first)), "KK-15");
    place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR]), counsellor(France, &[FR])]).unwrap();
    assert_eq!((g.limit(France), g.seal(France)), (2, 2));
}

#[test]
fn kk17_a_player_without_abbeys_or_counsellors_cannot_place_them() {
    let mut g = game(3);
    g.put_abbey(s(1), "bec");
    g.abbeys_left[0] = 0;
    g.set_hand(s(0), &[FR, FR, ES]);
    assert_eq!(rule_of(place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR])])), "KK-17");
    assert!(g.legal_moves(s(0)).iter().all(|m| match m {
        Move::Place { pieces } => pieces.iter().all(|p| p.piece == Piece::Counsellor),
        _ => true,
    }));
    g.counsellors_left[0] = 0;
    assert_eq!(rule_of(place(&mut g, s(0), vec![counsellor(France, &[FR])])), "KK-17");
    assert!(g.legal_moves(s(0)).iter().all(|m| !matches!(m, Move::Place { .. })));
}

// ------------------------------------------------------------------ drawing

#[test]
fn kk18_each_card_drawn_is_a_move_and_the_drawer_sees_it() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, FR, FR]);
    g.put_abbey(s(1), "bec");
    g.set_deck_top_first(&[LI, BB, ES, ES]);
    place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR]), abbey(France, "fleury", &[FR, FR])]).unwrap();
    assert_eq!(g.view(Viewer::Seat(s(0))).turn.unwrap().cards_to_draw, 3);
    assert_eq!(rule_of(play(&mut g, s(0), Move::Pass {})), "KK-18");
    assert!(matches!(play(&mut g, s(1), Move::DrawDeck {}), Err(MoveError::NotYourTurn { .. })));
    let effects = play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    let drew = effects.iter().find(|e| matches!(e, Effect::DrewFromDeck { .. })).unwrap();
    assert_eq!(g.redact(drew, Viewer::Seat(s(0))), Effect::DrewFromDeck { seat: s(0), card: Some(LI) });
    assert_eq!(g.redact(drew, Viewer::Seat(s(1))), Effect::DrewFromDeck { seat: s(0), card: None });
    assert_eq!(g.turn, s(0), "still refilling");
    assert_eq!(rule_of(play(&mut g, s(0), Move::TakeDisplay { slot: 2 })), "KK-18");
    play(&mut g, s(0), Move::TakeDisplay { slot: 0 }).unwrap();
    play(&mut g, s(0), Move::TakeDisplay { slot: 1 }).unwrap();
    assert_eq!(g.hands[0].len(), 3);
    assert_eq!(g.display, [Some(BB), Some(ES)], "both slots refilled from the deck, slot 0 first");
    assert_eq!(g.turn, s(1));
}

#[test]
fn kk18_no_drawing_outside_a_refill() {
    let mut g = game(3);
    assert_eq!(rule_of(play(&mut g, s(0), Move::DrawDeck {})), "KK-18");
    assert_eq!(rule_of(play(&mut g, s(0), Move::TakeDisplay { slot: 0 })), "KK-18");
}

#[test]
fn kk19_first_exhaustion_scores_abbeys_reshuffles_and_the_refill_goes_on() {
    let mut g = game(3);
    g.put_abbeys(s(1), France, 2);
    g.put_abbeys(s(2), England, 1);
    g.set_hand(s(0), &[FR, FR, ES]);
    g.set_deck_top_first(&[LI]);
    g.discard = vec![BB, BB, BB];
    place(&mut g, s(0), vec![abbey(France, "saint-remi", &[FR]), abbey(France, "clairvaux", &[FR])]).unwrap();
    let effects = play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    let kinds: Vec<&str> = effects
        .iter()
        .map(|e| match e {
            Effect::DrewFromDeck { .. } => "drew",
            Effect::DeckExhausted { count: 1 } => "exhausted",
            Effect::InterimScoring { .. } => "interim",
            Effect::Reshuffled { deck_size: 5 } => "reshuffled",
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["drew", "exhausted", "interim", "reshuffled"]);
    let Some(Effect::InterimScoring { countries, scores }) = effects.iter().find(|e| matches!(e, Effect::InterimScoring { .. })) else {
        unreachable!()
    };
    let order: Vec<Country> = countries.iter().map(|c| c.country).collect();
    assert_eq!(order, [England, Franconia, Bavaria, Italy, Aragon, France, Lotharingia, Swabia, Burgundy]);
    // France: seats 0 and 1 tie with 2 → 4 each; England: seat 2 alone → 1.
    assert_eq!(scores, &vec![4, 4, 1]);
    assert_eq!(g.exhaustions, 1);
    // The new deck, independently: the generator after the 45-card set-up
    // shuffle, then the discard pile sorted by kind, shuffled; index 0 on top.
    let mut rng = DeckRng::new(&Seed([7; 32]));
    rng.shuffle(&mut [0u8; 45]);
    let mut expected = vec![BB, BB, BB, FR, FR];
    rng.shuffle(&mut expected);
    assert_eq!(g.deck.iter().rev().copied().collect::<Vec<_>>(), expected);
    assert_eq!(g.step(), Step::Refill, "the interrupted refill goes on");
    play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    assert_eq!(g.turn, s(1));
    assert_eq!(g.view(Viewer::Spectator).interim.unwrap().len(), 9);
}

#[test]
fn kk19_exhaustion_during_the_display_refill_resumes_the_display_refill() {
    let mut g = game(3);
    g.set_hand(s(0), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI]);
    g.discard = vec![BB, BB];
    // Exchange taking slot 0: the refill of slot 0 empties the deck.
    let effects = play(&mut g, s(0), Move::Exchange { discard: FR, take: Source::Display0 }).unwrap();
    assert!(effects.contains(&Effect::DeckExhausted { count: 1 }));
    assert_eq!(g.display[0], Some(LI));
    assert_eq!(g.deck.len(), 3, "BB, BB and the discarded FR");
}

#[test]
fn kk20_second_exhaustion_starts_the_last_round_ending_before_the_first_seat() {
    let mut g = game(3);
    g.exhaustions = 1;
    g.turn = s(1);
    g.set_hand(s(1), &[FR, ES, ES]);
    g.set_deck_top_first(&[LI]);
    let effects = play(&mut g, s(1), Move::Exchange { discard: FR, take: Source::Deck }).unwrap();
    assert!(effects.contains(&Effect::DeckExhausted { count: 2 }));
    assert!(effects.contains(&Effect::LastRound { ends_before: s(0) }));
    assert_eq!(g.turn, s(2));
    let v = g.view(Viewer::Seat(s(2)));
    assert!(v.last_round);
    assert_eq!(v.turn.unwrap().step, TurnStep::PlaceOrPass);
    let moves = g.legal_moves(s(2));
    assert!(moves.contains(&Move::Pass {}));
    assert!(moves.iter().all(|m| !matches!(m, Move::Exchange { .. })));
    let discard = first_card(&g, s(2));
    assert_eq!(rule_of(play(&mut g, s(2), Move::Exchange { discard, take: Source::Display0 })), "KK-20");
    let effects = play(&mut g, s(2), Move::Pass {}).unwrap();
    assert!(matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::LastRoundOver, .. })));
    assert!(g.status().is_finished());
    assert_eq!(play(&mut g, s(0), Move::Pass {}), Err(MoveError::GameOver));
}

#[test]
fn kk20_in_the_last_round_a_placement_draws_nothing() {
    let mut g = game(3);
    g.exhaustions = 2;
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[FR, ES, ES]);
    place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR])]).unwrap();
    assert_eq!(g.hands[0].len(), 2);
    assert_eq!(g.turn, s(1));
}

#[test]
fn kk21_the_game_ends_at_once_when_no_piece_can_be_placed() {
    // Every site taken but one, nobody has a counsellor left.
    let mut g = game(5);
    let sites: Vec<String> = g.board.board.sites.iter().map(|s| s.id.clone()).collect();
    for (i, site) in sites.iter().skip(1).enumerate() {
        g.put_abbey(Seat(1 + (i % 4) as u8), site);
    }
    g.counsellors_left = [0; 5];
    let last = &sites[0];
    let country = g.board.site_country[0];
    g.set_hand(s(0), &[country.card_kind(), ES, ES]);
    let effects = place(&mut g, s(0), vec![abbey(country, last, &[country.card_kind()])]).unwrap();
    assert!(matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::NoPlacementLeft, .. })));
    assert!(g.status().is_finished());

    // Nobody has a piece left.
    let mut g = game(3);
    g.abbeys_left = [1, 0, 0, 0, 0];
    g.counsellors_left = [0; 5];
    g.set_hand(s(0), &[FR, ES, ES]);
    let effects = place(&mut g, s(0), vec![abbey(France, "bec", &[FR])]).unwrap();
    assert!(matches!(effects.last(), Some(Effect::GameEnded { reason: EndReason::NoPlacementLeft, .. })));
}

#[test]
fn kk21_free_sites_keep_the_game_going_while_someone_has_abbeys() {
    let mut g = game(3);
    g.abbeys_left = [2, 0, 0, 0, 0];
    g.counsellors_left = [0; 5];
    g.set_hand(s(0), &[FR, ES, ES]);
    place(&mut g, s(0), vec![abbey(France, "bec", &[FR])]).unwrap();
    assert!(!g.status().is_finished());
}

#[test]
fn kk22_a_refill_interrupted_by_the_second_exhaustion_stops_short() {
    let mut g = game(3);
    g.exhaustions = 1;
    g.put_abbey(s(1), "bec");
    g.set_hand(s(0), &[FR, FR, ES]);
    g.set_deck_top_first(&[LI]);
    place(&mut g, s(0), vec![abbey(France, "jumieges", &[FR]), abbey(France, "fleury", &[FR])]).unwrap();
    let effects = play(&mut g, s(0), Move::DrawDeck {}).unwrap();
    assert!(effects.contains(&Effect::DeckExhausted { count: 2 }));
    assert!(effects.contains(&Effect::RefillStopped { seat: s(0), hand_size: 2 }));
    assert_eq!(g.hands[0].len(), 2, "the hand stays short");
    assert_eq!(g.turn, s(1));
    assert!(g.display.iter().all(Option::is_some), "the display cards stay but nobody takes them");
}

// ------------------------------------------------------------------ scoring

#[test]
fn kk23_scores_accumulate_over_interim_and_final_scoring() {
    let mut g = game(3);
    g.put_abbeys(s(1), France, 2);
    g.scores[1] = 4; // as if the interim scoring had given 4
    g.interim = Some(Vec::new());
    g.exhaustions = 2;
    g.turn = s(2);
    g.set_hand(s(2), &[ES]);
    let effects = play(&mut g, s(2), Move::Pass {}).unwrap();
    let Some(Effect::GameEnded { scoring, .. }) = effects.last() else { panic!() };
    assert_eq!(scoring.totals[1].abbeys, 2);
    assert_eq!(scoring.totals[1].total, 6);
    assert_eq!(g.status(), Status::Finished { result: ludo_engine::Outcome { scores: vec![0, 6, 0], winners: vec![s(1)] } });
}

#[test]
fn kk24_worked_check_franconia_green4_red2_blue1_scores_7_4_2() {
    assert_eq!(scoring::abbey_points(&[4, 2, 1]), vec![7, 4, 2]);
}

#[test]
fn kk24_worked_check_lotharingia_red2_violet2_blue1_scores_5_5_2() {
    assert_eq!(scoring::abbey_points(&[2, 2, 1]), vec![5, 5, 2]);
}

#[test]
fn kk24_worked_check_a3_b3_c2_d1_e1_scores_10_10_3_2_2() {
    assert_eq!(scoring::abbey_points(&[3, 3, 2, 1, 1]), vec![10, 10, 3, 2, 2]);
    assert_eq!(scoring::abbey_points(&[0, 0, 0]), vec![0, 0, 0]);
    assert_eq!(scoring::abbey_points(&[0, 3, 0, 1]), vec![0, 4, 0, 3]);
}

#[test]
fn kk24_final_abbey_scoring_on_the_board_green4_red2_blue1_in_franconia() {
    let mut g = game(3);
    g.put_abbeys(s(0), Franconia, 4);
    g.put_abbeys(s(1), Franconia, 2);
    g.put_abbeys(s(2), Franconia, 1);
    let mut effects = Vec::new();
    g.finish(EndReason::LastRoundOver, &mut effects);
    let scoring = g.final_scoring.as_ref().unwrap();
    let franconia = scoring.abbeys.iter().find(|c| c.country == Franconia).unwrap();
    assert_eq!(franconia.points, vec![7, 4, 2]);
    assert_eq!(franconia.abbeys, vec![4, 2, 1]);
}

#[test]
fn kk25_worked_check_alliance_14_blue_scores_6_and_alliance_15_nobody() {
    // Blue = seat 0, Red = seat 1, Yellow = seat 2.
    let mut g = game(3);
    g.put_abbeys(s(0), Italy, 4);
    g.put_abbeys(s(0), Burgundy, 2);
    g.put_abbeys(s(1), Bavaria, 3);
    g.put_counsellors(s(0), Italy, 2);
    g.put_counsellors(s(1), Italy, 1);
    g.put_counsellors(s(2), Italy, 1);
    g.put_counsellors(s(0), Burgundy, 1);
    g.put_counsellors(s(1), Burgundy, 1);
    g.put_counsellors(s(1), Bavaria, 2);
    g.put_counsellors(s(2), Bavaria, 1);
    let mut effects = Vec::new();
    g.finish(EndReason::LastRoundOver, &mut effects);
    let scoring = g.final_scoring.as_ref().unwrap();
    let a14 = scoring.alliances.iter().find(|a| a.number == 14).unwrap();
    assert_eq!((a14.scorers.clone(), a14.points, a14.counsellors), (vec![s(0)], 6, 6));
    let a15 = scoring.alliances.iter().find(|a| a.number == 15).unwrap();
    assert!(a15.scorers.is_empty());
    assert_eq!(a15.points, 0);
    assert_eq!(scoring.alliances.iter().map(|a| a.number).collect::<Vec<_>>(), (1..=15).collect::<Vec<_>>());
}

#[test]
fn kk25_tied_leaders_in_both_countries_all_score_and_an_empty_seal_leads_nobody() {
    let a = scoring::alliance(1, [England, France], &[1, 1, 0], &[2, 2, 1]);
    assert_eq!((a.scorers, a.points), (vec![s(0), s(1)], 7));
    let b = scoring::alliance(2, [England, France], &[0, 0, 0], &[2, 2, 1]);
    assert!(b.scorers.is_empty() && b.leaders_first.is_empty());
}

#[test]
fn kk26_worked_check_a_five_chain_across_two_countries_with_a_side_branch_scores_5() {
    // Tournus (Burgundy) – Bobbio – Chiaravalle – Nonantola – Vallombrosa (Italy),
    // and St. Gallen (Swabia) hanging off Chiaravalle: a side branch.
    let mut g = game(3);
    for site in ["tournus", "bobbio", "chiaravalle", "nonantola", "vallombrosa", "st-gallen"] {
        g.put_abbey(s(2), site);
    }
    let mut effects = Vec::new();
    g.finish(EndReason::LastRoundOver, &mut effects);
    let chains = &g.final_scoring.as_ref().unwrap().chains[2];
    assert_eq!(chains.points, 5);
    assert_eq!(chains.chains.len(), 1);
    assert_eq!(chains.chains[0].sites, ["tournus", "bobbio", "chiaravalle", "nonantola", "vallombrosa"]);
}

#[test]
fn kk26_three_abbeys_in_a_row_score_nothing_and_chains_are_the_owners_only() {
    let mut g = game(3);
    for site in ["fulda", "ebrach", "heilsbronn"] {
        g.put_abbey(s(0), site);
    }
    g.put_abbey(s(1), "walkenried");
    let mut effects = Vec::new();
    g.finish(EndReason::LastRoundOver, &mut effects);
    assert!(g.final_scoring.as_ref().unwrap().chains.iter().all(|c| c.points == 0));
}

#[test]
fn kk26_separate_chains_each_score_and_a_ring_with_a_tail_is_one_path() {
    // Aragon's ring of 6 with Moissac (France) on a tail: one path of 7.
    let mut g = game(3);
    for site in ["ripoll", "santes-creus", "poblet", "rueda", "veruela", "san-juan-de-la-pena", "moissac"] {
        g.put_abbey(s(0), site);
    }
    // And a separate chain of 4 in Lotharingia.
    for site in ["villers", "saint-trond", "stavelot", "pruem"] {
        g.put_abbey(s(0), site);
    }
    let mut effects = Vec::new();
    g.finish(EndReason::LastRoundOver, &mut effects);
    let chains = &g.final_scoring.as_ref().unwrap().chains[0];
    assert_eq!(chains.points, 11);
    assert_eq!(chains.chains.len(), 2);
}

#[test]
fn kk27_tie_goes_to_most_unused_pieces_then_the_win_is_shared() {
    assert_eq!(scoring::winners(&[10, 12, 12], &[5, 3, 4]), vec![s(2)]);
    assert_eq!(scoring::winners(&[12, 12, 12], &[4, 3, 4]), vec![s(0), s(2)]);
    assert_eq!(scoring::winners(&[0, 0, 0], &[28, 28, 28]), vec![s(0), s(1), s(2)]);
}

// ------------------------------------------------------------------ variant

#[test]
fn kk28_dynamic_variant_places_into_two_countries() {
    let mut g = game_with(3, Variant::Dynamic);
    g.set_hand(s(0), &[FR, FA, ES]);
    place(&mut g, s(0), vec![abbey(France, "bec", &[FR]), abbey(Aragon, "ripoll", &[FA])]).unwrap();
    assert_eq!(g.abbeys_left[0], 18);
    assert!(game_with(3, Variant::Dynamic).legal_moves(s(0)).iter().any(|m| match m {
        Move::Place { pieces } => pieces.len() == 2 && pieces[0].country != pieces[1].country,
        _ => false,
    }));
}

#[test]
fn kk29_dynamic_variant_allows_two_abbeys_but_not_abbey_and_counsellor_in_an_empty_country() {
    let mut g = game_with(3, Variant::Dynamic);
    g.set_hand(s(0), &[FR, FR, ES]);
    let mixed = vec![abbey(France, "bec", &[FR]), counsellor(France, &[FR])];
    assert_eq!(rule_of(place(&mut g, s(0), mixed)), "KK-29");
    place(&mut g, s(0), vec![abbey(France, "bec", &[FR]), abbey(France, "jumieges", &[FR])]).unwrap();
    let mut g = game_with(3, Variant::Dynamic);
    g.set_hand(s(0), &[FR, FA, ES]);
    let counsellor_alone = vec![abbey(Aragon, "ripoll", &[FA]), counsellor(France, &[FR])];
    assert_eq!(rule_of(place(&mut g, s(0), counsellor_alone)), "KK-13");
}

#[test]
fn kk30_dynamic_variant_keeps_three_cards_and_two_pieces() {
    let mut g = game_with(3, Variant::Dynamic);
    g.set_hand(s(0), &[FR, FA, ES]);
    let three = vec![abbey(France, "bec", &[FR]), abbey(Aragon, "ripoll", &[FA]), abbey(England, "furness", &[ES])];
    assert_eq!(rule_of(place(&mut g, s(0), three)), "KK-11");
    g.set_hand(s(0), &[FR, FR, ES]);
    g.hands[0].add(ES);
    let four = vec![abbey(Italy, "farfa", &[FR, FR]), abbey(Aragon, "ripoll", &[ES, ES])];
    assert_eq!(rule_of(place(&mut g, s(0), four)), "KK-11");
}

// -------------------------------------------------------- hidden information

#[test]
fn kk31_a_seat_sees_its_hand_and_everyones_hand_size_spectators_no_hand() {
    let g = game(4);
    let v = g.view(Viewer::Seat(s(1)));
    for seat in &v.seats {
        assert_eq!(seat.hand_size, 3);
        assert_eq!(seat.hand.is_some(), seat.seat == s(1));
    }
    assert!(v.deck.is_none());
    assert_eq!(v.deck_size, 50 - 12 - 2);
    assert_eq!(v.display.len(), 2);
    let spectator = g.view(Viewer::Spectator);
    assert!(spectator.seats.iter().all(|s| s.hand.is_none()));
    assert_eq!(spectator.viewer, None);
    let all = g.view(Viewer::Omniscient);
    assert!(all.seats.iter().all(|s| s.hand.is_some()) && all.deck.as_ref().unwrap().len() == 36);
}

#[test]
fn kk31_once_over_everything_is_visible_to_everyone() {
    let mut g = game(3);
    g.exhaustions = 2;
    g.turn = s(2);
    let dealt = Effect::Dealt { seat: s(0), cards: Some(vec![FR, FR, FR]) };
    assert_eq!(g.redact(&dealt, Viewer::Seat(s(1))), Effect::Dealt { seat: s(0), cards: None });
    play(&mut g, s(2), Move::Pass {}).unwrap();
    let v = g.view(Viewer::Spectator);
    assert!(v.seats.iter().all(|s| s.hand.is_some()));
    assert!(v.deck.is_some());
    assert!(v.turn.is_none());
    assert!(v.final_scoring.is_some());
    assert_eq!(g.redact(&dealt, Viewer::Spectator), dealt);
}

// --------------------------------------------------------- board validation

fn broken(edit: impl FnOnce(&mut Board)) -> BoardError {
    let mut b = Board::embedded();
    edit(&mut b);
    b.validate().unwrap_err()
}

#[test]
fn kk3_board_validation_refuses_broken_roads_alliances_and_lists() {
    assert!(Board::embedded().validate().is_ok());
    assert!(matches!(
        broken(|b| b.roads.push(Road(["cluny".into(), "atlantis".into()]))),
        BoardError::UnknownRoadSite { site, .. } if site == "atlantis"
    ));
    assert!(matches!(broken(|b| b.roads.push(Road(["cluny".into(), "cluny".into()]))), BoardError::LoopRoad { .. }));
    assert!(matches!(broken(|b| b.roads.push(Road(["tournus".into(), "cluny".into()]))), BoardError::DuplicateRoad { .. }));
    assert!(matches!(broken(|b| b.alliances[3].countries = [France, France]), BoardError::AllianceSameCountry(4)));
    assert!(matches!(broken(|b| b.alliances[3].number = 1), BoardError::DuplicateAlliance(1)));
    assert!(matches!(broken(|b| b.sites[1].id = "furness".into()), BoardError::DuplicateSite(id) if id == "furness"));
    assert!(matches!(broken(|b| b.sites[1].id.clear()), BoardError::EmptySiteId { index: 1 }));
    assert!(matches!(
        broken(|b| {
            b.countries.pop();
        }),
        BoardError::MissingCountry(Italy)
    ));
    assert!(matches!(broken(|b| b.countries[0].id = France), BoardError::DuplicateCountry(France)));
    assert!(matches!(broken(|b| b.card_kinds[4].countries = vec![Italy]), BoardError::CardKindCountries { .. }));
    assert!(matches!(
        broken(|b| {
            b.card_kinds.remove(0);
        }),
        BoardError::MissingCardKind(FA)
    ));
    assert!(matches!(broken(|b| b.card_kinds[0].count = 1), BoardError::CardCount { .. }));
    assert!(matches!(broken(|b| b.card_kinds.iter_mut().for_each(|k| k.count = 4)), BoardError::DeckTooSmall { total: 20 }));
    assert!(matches!(broken(|b| b.interim_scoring_order[0] = France), BoardError::InterimOrder));
    assert!(matches!(
        broken(|b| {
            b.interim_scoring_order.pop();
        }),
        BoardError::InterimOrder
    ));
    assert!(matches!(broken(|b| b.sites.retain(|s| s.country != Aragon)), BoardError::CountryWithoutSite(Aragon)));
}

#[test]
fn kk3_board_size_is_bounded_since_every_game_carries_its_board() {
    use crate::board::{MAX_ALLIANCES, MAX_NOTE_CHARS, MAX_ROADS};
    let oversized = |edit: &dyn Fn(&mut Board)| {
        let mut b = Board::embedded();
        edit(&mut b);
        assert_eq!(b.validate(), Ok(()), "size is not consistency: a recorded game with a big board still replays");
        b.check_size().unwrap_err()
    };
    assert!(Board::embedded().check_size().is_ok());
    // The limits are in characters, not bytes.
    assert!(Board { note: "é".repeat(MAX_NOTE_CHARS), ..Board::embedded() }.check_size().is_ok());
    assert!(matches!(
        oversized(&|b| b.note = "x".repeat(MAX_NOTE_CHARS + 1)),
        BoardError::TextTooLong { field, chars, .. } if field == "note" && chars == MAX_NOTE_CHARS + 1
    ));
    assert!(matches!(oversized(&|b| b.name = "x".repeat(101)), BoardError::TextTooLong { field, .. } if field == "name"));
    assert!(
        matches!(oversized(&|b| b.countries[2].german = "x".repeat(41)), BoardError::TextTooLong { field, .. } if field == "countries[2].german")
    );
    let long_site = |b: &mut Board| {
        let (old, new) = (b.sites[4].id.clone(), "x".repeat(41));
        b.roads.iter_mut().flat_map(|road| road.0.iter_mut()).filter(|end| **end == old).for_each(|end| *end = new.clone());
        b.sites[4].id = new;
    };
    assert!(matches!(oversized(&long_site), BoardError::TextTooLong { field, .. } if field == "sites[4].id"));
    let many_roads = |b: &mut Board| {
        let ids: Vec<String> = b.sites.iter().map(|s| s.id.clone()).collect();
        let pairs = ids.iter().enumerate().flat_map(|(i, a)| ids[i + 1..].iter().map(move |c| (a.clone(), c.clone())));
        b.roads = pairs.take(MAX_ROADS + 1).map(|(a, c)| Road([a, c])).collect();
    };
    assert!(matches!(oversized(&many_roads), BoardError::TooManyRoads(n) if n == MAX_ROADS + 1));
    let many_alliances = |b: &mut Board| {
        let first = b.alliances[0].clone();
        b.alliances = (1..=MAX_ALLIANCES as u8 + 1).map(|number| crate::board::Alliance { number, ..first.clone() }).collect();
    };
    assert!(matches!(oversized(&many_alliances), BoardError::TooManyAlliances(n) if n == MAX_ALLIANCES + 1));
}

#[test]
fn kk3_board_json_errors_name_unknown_countries_and_fields() {
    let text = include_str!("../../board/reconstructed-v1.json");
    assert_eq!(Board::from_json(text).unwrap(), Board::embedded());
    let atlantis = text.replacen("\"country\": \"england\"", "\"country\": \"atlantis\"", 1);
    assert!(matches!(Board::from_json(&atlantis), Err(BoardError::Json(m)) if m.contains("atlantis")));
    let alliance = text.replacen("\"lotharingia\",\n    \"england\"", "\"lotharingia\",\n    \"atlantis\"", 1);
    assert!(matches!(Board::from_json(&alliance), Err(BoardError::Json(m)) if m.contains("atlantis")));
    let typo = text.replacen("\"roads\"", "\"road\"", 1);
    assert!(matches!(Board::from_json(&typo), Err(BoardError::Json(_))));
    assert!(matches!(Board::from_json("{"), Err(BoardError::Json(_))));
    // The board round-trips through JSON exactly.
    let again = serde_json::to_string(&Board::embedded()).unwrap();
    assert_eq!(Board::from_json(&again).unwrap(), Board::embedded());
}
