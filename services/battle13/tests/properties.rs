//! Property tests over random legal matches: the contract (through
//! `ludo_engine::testkit::random_playout`), conservation of the 52 knights,
//! 13 tournaments per joust, crowns recomputed independently, each finished
//! joust's record re-read against the rules (opening check, talking rounds,
//! favoured family, Chaos order, leads and following), hidden information,
//! refusals that leave the state alone, and termination.

mod common;

use ludo_battle13::{BidCard, Camp, Effect, Family, FamilyCard, Game, Joust, Knight, Move, Options, Tournament, View, bag};
use ludo_engine::testkit::{Step, random_playout, test_seed};
use ludo_engine::{DeckRng, Engine, MoveError, Seat, Setup, Viewer};

/// Random matches to 20 crowns checked with every invariant.
const MATCHES: u64 = 4000;
/// Random matches to 100 crowns (many jousts each).
const LONG_MATCHES: u64 = 200;

fn setup(n: u64, target: u32) -> Setup<Options> {
    // Half the matches draw the first seat from the seed.
    let first_seat = n.is_multiple_of(2).then_some(Seat((n / 2 % 4) as u8));
    Setup { players: 4, options: Options { first_seat, target_crowns: target }, seed: test_seed(n) }
}

fn sorted(mut knights: Vec<Knight>) -> Vec<Knight> {
    knights.sort_unstable();
    knights
}

fn played(tournaments: &[Tournament]) -> Vec<Knight> {
    tournaments.iter().flat_map(|t| t.plays.iter().map(|p| p.knight)).collect()
}

/// The 52 knights are all in hands or played, each once, in every joust.
fn check_conservation(view: &View) {
    let joust = &view.joust;
    let mut all = played(&joust.tournaments);
    let mut dealt = Vec::new();
    for (i, h) in joust.hands.iter().enumerate() {
        assert_eq!(h.seat, Seat(i as u8));
        let held = h.held.clone().expect("omniscient");
        assert_eq!(usize::from(h.held_count), held.len());
        all.extend(held);
        dealt.extend(h.dealt.clone().expect("omniscient"));
    }
    assert_eq!(sorted(all), bag(), "knights not conserved in joust {}", joust.number);
    assert_eq!(sorted(dealt), bag());
    assert!(joust.tournaments.len() <= 13);
    for t in &joust.tournaments {
        assert!(t.plays.len() <= 4);
        assert_eq!(t.winner.is_some(), t.plays.len() == 4);
    }
    for past in &view.history {
        assert_eq!(past.tournaments.len(), 13, "joust {} played {} tournaments", past.number, past.tournaments.len());
        assert!(past.tournaments.iter().all(|t| t.plays.len() == 4 && t.winner.is_some()));
        assert_eq!(sorted(played(&past.tournaments)), bag());
        assert_eq!(past.tournaments_won.iter().map(|&w| u32::from(w)).sum::<u32>(), 13);
    }
}

/// The rules' table, written again (B13-20).
fn bonus(contract: u8) -> u32 {
    [2, 4, 8, 12, 20, 30, 40][usize::from(contract - 7)]
}

/// The winner of a tournament recomputed from its plays (B13-19).
fn winner(t: &Tournament, favoured: Option<FamilyCard>) -> Seat {
    let favoured: Option<Family> = match favoured.expect("settled") {
        FamilyCard::Eagle => Some(Family::Eagle),
        FamilyCard::Wolf => Some(Family::Wolf),
        FamilyCard::Dragon => Some(Family::Dragon),
        FamilyCard::Lion => Some(Family::Lion),
        FamilyCard::Neutral => None,
    };
    let led = t.plays[0].knight.family;
    let family = favoured.filter(|f| t.plays.iter().any(|p| p.knight.family == *f)).unwrap_or(led);
    t.plays.iter().filter(|p| p.knight.family == family).max_by_key(|p| p.knight.strength).unwrap().seat
}

/// Crowns of a finished joust recomputed from its record (B13-21 … B13-23):
/// (camp index, crowns).
fn recount(joust: &Joust) -> (usize, u32) {
    let contract = joust.contract.expect("a played joust has a contract");
    let master_camp = usize::from(contract.master.0 % 2);
    assert_eq!(contract.servant.0, (contract.master.0 + 2) % 4);
    let mut won = [0u8; 2];
    for t in &joust.tournaments {
        let w = winner(t, joust.favoured);
        assert_eq!(t.winner, Some(w), "tournament {} of joust {}", t.number, joust.number);
        won[usize::from(w.0 % 2)] += 1;
    }
    assert_eq!(joust.tournaments_won, won.to_vec());
    // The contract is the highest tournaments card laid, by the master.
    let highest = joust
        .calls
        .iter()
        .filter_map(|c| match c.card {
            Some(BidCard::Tournaments { value }) => Some((value, c.seat)),
            _ => None,
        })
        .max()
        .unwrap();
    assert_eq!((highest.0, highest.1), (contract.tournaments, contract.master));
    let chaos = joust.chaos.as_ref().is_some_and(|c| c.activated_by.is_some());
    let (c, w) = (contract.tournaments, won[master_camp]);
    let b = bonus(c);
    if w >= c {
        let over = u32::from(w - c);
        (master_camp, if chaos { 2 * b + 2 * over } else { b + over })
    } else {
        let short = u32::from(c - w);
        (1 - master_camp, if chaos { b + 2 * short } else { b / 2 })
    }
}

/// Every finished joust's crowns and the running totals, recomputed.
fn check_crowns(view: &View) {
    let mut totals = [0u32; 2];
    for (i, joust) in view.history.iter().enumerate() {
        assert_eq!(joust.number as usize, i + 1);
        let (camp, crowns) = recount(joust);
        let got = joust.crowns.expect("scored");
        assert_eq!((got.camp, got.crowns), (Camp(camp as u8), crowns), "joust {}", joust.number);
        totals[camp] += crowns;
        // Before the last joust, nobody had reached the target.
        if i + 1 < view.history.len() {
            assert!(totals.iter().all(|&t| t < view.target_crowns));
        }
    }
    assert_eq!(view.crowns, totals.to_vec());
    if let Some(winner) = view.winner {
        assert!(totals[winner.index()] >= view.target_crowns);
        assert!(totals[winner.other().index()] < view.target_crowns);
    } else {
        assert!(totals.iter().all(|&t| t < view.target_crowns));
    }
}

/// Weapons of some knights, written again (B13-2).
fn weapons_of(knights: &[Knight]) -> u32 {
    knights
        .iter()
        .map(|k| match k.strength {
            13 => 4,
            12 => 3,
            11 => 2,
            10 => 1,
            _ => 0,
        })
        .sum()
}

fn seat_after(seat: Seat, steps: u8) -> Seat {
    Seat((seat.0 + steps) % 4)
}

/// A finished joust's record re-read against the rules, from its dealt
/// hands, calls and plays alone: the opening check (B13-9), the talking
/// rounds and their end (B13-10 … B13-14), the favoured family when it is
/// not the master's choice (B13-15), the Chaos order (B13-16), who leads
/// and who plays each tournament, and following the family led (B13-17,
/// B13-18).
fn check_joust_rules(joust: &Joust) {
    let n = joust.number;
    let dealt: Vec<Vec<Knight>> = joust.hands.iter().map(|h| h.dealt.clone().expect("finished jousts are public")).collect();
    // B13-9: from the first player clockwise up to the first "yes".
    let mut expected = Vec::new();
    for i in 0..4 {
        let seat = seat_after(joust.first_player, i);
        let yes = weapons_of(&dealt[seat.index()]) >= 12;
        expected.push((seat, yes));
        if yes {
            break;
        }
    }
    let answers: Vec<(Seat, bool)> = joust.opening.iter().map(|a| (a.seat, a.twelve_weapons)).collect();
    assert_eq!(answers, expected, "opening check of joust {n}");
    assert_eq!(expected.last(), Some(&(joust.opener, true)), "opener of joust {n}");
    // B13-10 … B13-13: clockwise from the opener, who lays a card; rising
    // tournaments cards; each card once per seat; the talking rounds end
    // exactly at the third pass in a row after a tournaments card, and never
    // went through four passes with no tournaments card.
    let mut highest: Option<(u8, Seat)> = None;
    let mut passes = 0;
    let mut laid: Vec<(Seat, BidCard)> = Vec::new();
    for (i, call) in joust.calls.iter().enumerate() {
        assert_eq!(call.seat, seat_after(joust.opener, (i % 4) as u8), "joust {n} call {i}");
        assert!(i > 0 || call.card.is_some(), "joust {n}: the opener passed");
        assert!(!(passes >= 3 && highest.is_some()) && passes < 4, "joust {n}: the talking rounds should have ended before call {i}");
        match call.card {
            None => passes += 1,
            Some(card) => {
                passes = 0;
                assert!(!laid.contains(&(call.seat, card)), "joust {n}: {card:?} laid twice");
                laid.push((call.seat, card));
                if let BidCard::Tournaments { value } = card {
                    assert!(highest.is_none_or(|(h, _)| value > h), "joust {n}: {value} not rising");
                    highest = Some((value, call.seat));
                }
            }
        }
    }
    assert!(passes == 3 && highest.is_some(), "joust {n}: the talking rounds did not end");
    // B13-14.
    let (value, master) = highest.unwrap();
    let contract = joust.contract.expect("contract");
    assert_eq!((contract.master, contract.tournaments), (master, value));
    assert_eq!(contract.servant, seat_after(master, 2));
    // B13-15: the master's latest family card stands unless the master laid
    // none or the servant's latest differs (then any choice is allowed).
    let latest = |seat: Seat| {
        joust.calls.iter().rev().find_map(|c| match c.card {
            Some(BidCard::Family { family }) if c.seat == seat => Some(family),
            _ => None,
        })
    };
    match (latest(master), latest(contract.servant)) {
        (None, _) => {}
        (Some(m), Some(s)) if m != s => {}
        (Some(m), _) => assert_eq!(joust.favoured, Some(m), "joust {n}: favoured family"),
    }
    // B13-16: the master's left first, then the right, until one activates.
    let chaos = joust.chaos.clone().expect("chaos decided");
    let order = [seat_after(master, 1), seat_after(master, 3)];
    let decided = chaos.declined.len() + usize::from(chaos.activated_by.is_some());
    assert!((1..=2).contains(&decided), "joust {n}: chaos {chaos:?}");
    assert_eq!(chaos.declined, order[..chaos.declined.len()], "joust {n}: chaos order");
    if let Some(seat) = chaos.activated_by {
        assert_eq!(seat, order[chaos.declined.len()], "joust {n}: chaos order");
    } else {
        assert_eq!(chaos.declined.len(), 2);
    }
    // B13-17, B13-18: the master's left leads the first tournament, each
    // winner the next; clockwise; follow the family led when you can.
    let mut held = dealt.clone();
    let mut leader = seat_after(master, 1);
    for t in &joust.tournaments {
        assert_eq!(t.leader, leader, "joust {n} tournament {}", t.number);
        let led = t.plays[0].knight.family;
        for (i, p) in t.plays.iter().enumerate() {
            assert_eq!(p.seat, seat_after(leader, i as u8));
            let hand = &mut held[p.seat.index()];
            let at = hand.iter().position(|&k| k == p.knight).expect("held");
            assert!(
                p.knight.family == led || hand.iter().all(|k| k.family != led),
                "joust {n} tournament {}: {:?} did not follow {led:?}",
                t.number,
                p.seat
            );
            hand.remove(at);
        }
        leader = t.winner.expect("complete");
    }
}

/// Every finished joust re-read (see [`check_joust_rules`]); each joust after
/// the first begins with the previous joust's master (B13-8).
fn check_rules(view: &View) {
    for (i, joust) in view.history.iter().enumerate() {
        check_joust_rules(joust);
        let next = view.history.get(i + 1).unwrap_or(&view.joust);
        if next.number != joust.number {
            let master = joust.contract.expect("contract").master;
            assert_eq!(next.first_player, master, "first player of joust {}", next.number);
        }
    }
}

/// Whether `viewer` may see `seat`'s knights of the current deal, decided
/// here from public facts rather than by the engine.
fn may_see(omni: &View, viewer: Viewer, seat: Seat) -> bool {
    let servant_public = omni.joust.tournaments.first().is_some_and(|t| !t.plays.is_empty());
    let servant = omni.joust.contract.map(|c| c.servant);
    match viewer {
        _ if omni.winner.is_some() => true,
        Viewer::Omniscient => true,
        Viewer::Seat(s) if s == seat => true,
        _ => servant_public && servant == Some(seat),
    }
}

const VIEWERS: [Viewer; 5] =
    [Viewer::Seat(Seat(0)), Viewer::Seat(Seat(1)), Viewer::Seat(Seat(2)), Viewer::Seat(Seat(3)), Viewer::Spectator];

/// No view shows a knight its viewer may not see; the visible ones are right.
fn check_views(game: &Game, omni: &View) {
    for viewer in VIEWERS {
        let view = game.view(viewer);
        assert_eq!(view.joust.tournaments, omni.joust.tournaments, "played knights are public");
        assert_eq!(view.history, omni.history, "finished jousts are public");
        for (h, o) in view.joust.hands.iter().zip(&omni.joust.hands) {
            assert_eq!(h.held_count, o.held_count);
            if may_see(omni, viewer, h.seat) {
                assert_eq!((&h.held, &h.dealt), (&o.held, &o.dealt));
            } else {
                assert!(h.held.is_none() && h.dealt.is_none(), "{viewer:?} sees {:?}", h.seat);
            }
        }
    }
}

/// No redacted effect shows a knight of the current deal its viewer may not
/// see; other effects are untouched.
fn check_effects(game: &Game, omni: &View, effects: &[Effect]) {
    let current = (omni.joust.number, omni.joust.deal);
    for effect in effects {
        for viewer in VIEWERS {
            let redacted = game.redact(effect, viewer);
            match (&redacted, effect) {
                (Effect::Dealt { joust, deal, hands }, Effect::Dealt { hands: full, .. }) => {
                    for (h, f) in hands.iter().zip(full) {
                        let visible = (*joust, *deal) < current || may_see(omni, viewer, h.seat);
                        let expect = if visible { f.knights.clone() } else { None };
                        assert_eq!(h.knights, expect, "{viewer:?}, deal {joust}/{deal}, {:?}", h.seat);
                    }
                }
                _ => assert_eq!(&redacted, effect),
            }
        }
        assert_eq!(&game.redact(effect, Viewer::Omniscient), effect);
    }
}

fn check_step(game: &Game, effects: &[Effect]) {
    let omni = game.view(Viewer::Omniscient);
    check_conservation(&omni);
    check_views(game, &omni);
    check_effects(game, &omni, effects);
    if effects.iter().any(|e| matches!(e, Effect::JoustScored { .. })) {
        check_crowns(&omni);
        check_rules(&omni);
    }
}

fn run(n: u64, target: u32) -> usize {
    let setup = setup(n, target);
    let playout = random_playout::<Game>(&setup, n, 1_000_000, |game, step: Option<&Step<Game>>| match step {
        Some(step) => check_step(game, &step.effects),
        None => check_step(game, &Game::new(&setup).unwrap().1),
    });
    assert!(playout.state.status().is_finished(), "match {n} did not end");
    let omni = playout.state.view(Viewer::Omniscient);
    check_crowns(&omni);
    check_rules(&omni);
    omni.history.len()
}

#[test]
fn random_matches_to_20_keep_every_invariant_and_end() {
    let jousts: usize = (0..MATCHES).map(|n| run(n, 20)).sum();
    eprintln!("{MATCHES} matches to 20 crowns: {jousts} jousts");
    assert!(jousts as u64 >= MATCHES);
}

#[test]
fn random_matches_to_100_keep_every_invariant_and_end() {
    let jousts: usize = (0..LONG_MATCHES).map(|n| run(10_000 + n, 100)).sum();
    eprintln!("{LONG_MATCHES} matches to 100 crowns: {jousts} jousts");
    assert!(jousts as u64 > LONG_MATCHES * 2, "long matches should take several jousts");
}

/// Random matches driven by the pass-often chooser, each state probed with every move value.
const PASS_OFTEN_MATCHES: u64 = 120;

/// A coarse name for the path an effect shows the match took.
fn effect_kind(effect: &Effect) -> &'static str {
    match effect {
        Effect::DealVoided { reason: ludo_battle13::VoidReason::NoOpener, .. } => "void:no_opener",
        Effect::DealVoided { reason: ludo_battle13::VoidReason::AllPassed, .. } => "void:all_passed",
        Effect::FamilyFavoured { chosen: true, .. } => "favoured:chosen",
        Effect::FamilyFavoured { chosen: false, .. } => "favoured:stood",
        Effect::ChaosActivated { .. } => "chaos:activated",
        Effect::ChaosDeclined { .. } => "chaos:declined",
        Effect::JoustScored { contract, crowns, .. } if Camp::of(contract.master) == crowns.camp => "made",
        Effect::JoustScored { .. } => "failed",
        Effect::MatchWon { .. } => "match_won",
        _ => "other",
    }
}

/// Every move a client could send, sensible or not.
fn every_move() -> Vec<Move> {
    let mut moves = vec![Move::Pass, Move::Chaos, Move::DeclineChaos];
    for family in FamilyCard::ALL {
        moves.push(Move::Bid { card: BidCard::Family { family } });
        moves.push(Move::ChooseFamily { family });
    }
    for value in [0, 6, 7, 9, 12, 13, 15, 18, 21, 25, 26, 255] {
        moves.push(Move::Bid { card: BidCard::Weapons { value } });
        moves.push(Move::Bid { card: BidCard::Tournaments { value } });
    }
    for family in Family::ALL {
        for strength in 0..=14 {
            moves.push(Move::Play { knight: Knight::new(family, strength) });
        }
    }
    moves
}

/// Any move value is accepted exactly when it is listed, and a refusal says
/// why and leaves the state alone. Matches are driven by a chooser that passes
/// often, so that contracts are low and matches last several jousts.
#[test]
fn every_move_value_is_accepted_iff_listed_and_refusals_change_nothing() {
    let universe = every_move();
    let mut jousts = 0;
    let mut seen = std::collections::BTreeSet::new();
    for n in 0..PASS_OFTEN_MATCHES {
        let (mut game, _) = Game::new(&setup(n, 50)).unwrap();
        let mut chooser = DeckRng::new(&test_seed(900 + n));
        let mut step = 0;
        while !game.status().is_finished() {
            step += 1;
            if step % 5 == 0 {
                for seat in (0..5).map(Seat) {
                    let legal = game.legal_moves(seat);
                    for mv in &universe {
                        let mut probe = game.clone();
                        match probe.apply(seat, mv) {
                            Ok(_) => {
                                assert!(legal.contains(mv), "{seat} {mv:?} accepted but not listed")
                            }
                            Err(err) => {
                                assert!(!legal.contains(mv), "{seat} {mv:?} listed but refused: {err}");
                                assert_eq!(probe, game, "refused {mv:?} changed the state");
                                if let MoveError::Rule { rule, reason } = &err {
                                    assert!(rule.starts_with("B13-") && !reason.is_empty());
                                }
                            }
                        }
                    }
                }
            }
            let seat = game.status().to_move()[0];
            let legal = game.legal_moves(seat);
            let pass_often = legal.contains(&Move::Pass) && chooser.below(3) > 0;
            let mv = if pass_often { Move::Pass } else { legal[chooser.below(legal.len() as u32) as usize] };
            let effects = game.apply(seat, &mv).unwrap();
            check_step(&game, &effects);
            seen.extend(effects.iter().map(effect_kind));
        }
        jousts += game.view(Viewer::Omniscient).history.len();
        check_crowns(&game.view(Viewer::Omniscient));
        check_rules(&game.view(Viewer::Omniscient));
    }
    eprintln!("{PASS_OFTEN_MATCHES} pass-often matches to 50 crowns: {jousts} jousts");
    assert!(jousts as u64 > 2 * PASS_OFTEN_MATCHES, "the pass-often chooser should give several jousts per match");
    // Every path of the rules was taken at least once.
    for kind in [
        "void:no_opener",
        "void:all_passed",
        "favoured:chosen",
        "favoured:stood",
        "chaos:activated",
        "chaos:declined",
        "made",
        "failed",
        "match_won",
    ] {
        assert!(seen.contains(kind), "no random match went through {kind}");
    }
}
