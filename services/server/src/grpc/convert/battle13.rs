//! Battle 13's engine types and proto messages, field for field.

use ludo_battle13 as game;
use ludo_proto::ludo::battle13::v1 as pb;
use tonic::Status;

use super::{seat, small};
use crate::grpc::status::invalid;

super::game_proto!();

fn u(value: u8) -> u32 {
    u32::from(value)
}

pub(super) fn options_in(options: pb::Options) -> Result<game::Options, Status> {
    Ok(game::Options {
        first_seat: options.first_seat.map(|s| seat("options.battle13.first_seat", s)).transpose()?,
        // Unset as in the JSON API: the default target (the engine checks the value, B13-6).
        target_crowns: options.target_crowns.unwrap_or_else(|| game::Options::default().target_crowns),
    })
}

pub(super) fn options_out(options: &game::Options) -> pb::Options {
    pb::Options { first_seat: options.first_seat.map(|s| u(s.0)), target_crowns: Some(options.target_crowns) }
}

fn family_in(field: &str, value: i32) -> Result<game::Family, Status> {
    match pb::Family::try_from(value) {
        Ok(pb::Family::Eagle) => Ok(game::Family::Eagle),
        Ok(pb::Family::Wolf) => Ok(game::Family::Wolf),
        Ok(pb::Family::Dragon) => Ok(game::Family::Dragon),
        Ok(pb::Family::Lion) => Ok(game::Family::Lion),
        Ok(pb::Family::Unspecified) | Err(_) => Err(invalid(field, "a family is required: eagle, wolf, dragon or lion")),
    }
}

fn family_out(family: game::Family) -> i32 {
    match family {
        game::Family::Eagle => pb::Family::Eagle,
        game::Family::Wolf => pb::Family::Wolf,
        game::Family::Dragon => pb::Family::Dragon,
        game::Family::Lion => pb::Family::Lion,
    }
    .into()
}

fn family_card_in(field: &str, value: i32) -> Result<game::FamilyCard, Status> {
    match pb::FamilyCard::try_from(value) {
        Ok(pb::FamilyCard::Eagle) => Ok(game::FamilyCard::Eagle),
        Ok(pb::FamilyCard::Wolf) => Ok(game::FamilyCard::Wolf),
        Ok(pb::FamilyCard::Dragon) => Ok(game::FamilyCard::Dragon),
        Ok(pb::FamilyCard::Lion) => Ok(game::FamilyCard::Lion),
        Ok(pb::FamilyCard::Neutral) => Ok(game::FamilyCard::Neutral),
        Ok(pb::FamilyCard::Unspecified) | Err(_) => Err(invalid(field, "a family card is required: eagle, wolf, dragon, lion or neutral")),
    }
}

fn family_card_out(card: game::FamilyCard) -> i32 {
    match card {
        game::FamilyCard::Eagle => pb::FamilyCard::Eagle,
        game::FamilyCard::Wolf => pb::FamilyCard::Wolf,
        game::FamilyCard::Dragon => pb::FamilyCard::Dragon,
        game::FamilyCard::Lion => pb::FamilyCard::Lion,
        game::FamilyCard::Neutral => pb::FamilyCard::Neutral,
    }
    .into()
}

/// A knight named at `field`; a strength outside 1..=13 that fits a `u8` is
/// passed on for the engine to refuse (B13-1).
fn knight_in(field: &str, knight: Option<pb::Knight>) -> Result<game::Knight, Status> {
    let Some(k) = knight else { return Err(invalid(field, "a knight is required")) };
    Ok(game::Knight {
        family: family_in(&format!("{field}.family"), k.family)?,
        strength: small(&format!("{field}.strength"), k.strength)?,
    })
}

fn knight_out(knight: game::Knight) -> pb::Knight {
    pb::Knight { family: family_out(knight.family), strength: u(knight.strength) }
}

fn knights(knights: &[game::Knight]) -> Vec<pb::Knight> {
    knights.iter().copied().map(knight_out).collect()
}

/// Knights that may be hidden: unset when hidden, an empty list when none.
fn knight_list(hidden_or_known: Option<&[game::Knight]>) -> Option<pb::KnightList> {
    hidden_or_known.map(|k| pb::KnightList { knights: knights(k) })
}

/// A bid card named at `field`; a weapons or tournaments number that is on
/// no card but fits a `u8` is passed on for the engine to refuse (B13-3).
fn bid_card_in(field: &str, card: Option<pb::BidCard>) -> Result<game::BidCard, Status> {
    use pb::bid_card::Kind;
    match card.and_then(|c| c.kind) {
        None => Err(invalid(field, "a bid card is required: one of family, weapons, tournaments")),
        Some(Kind::Family(f)) => Ok(game::BidCard::Family { family: family_card_in(&format!("{field}.family.family"), f.family)? }),
        Some(Kind::Weapons(w)) => Ok(game::BidCard::Weapons { value: small(&format!("{field}.weapons.value"), w.value)? }),
        Some(Kind::Tournaments(t)) => Ok(game::BidCard::Tournaments { value: small(&format!("{field}.tournaments.value"), t.value)? }),
    }
}

fn bid_card_out(card: game::BidCard) -> pb::BidCard {
    use pb::bid_card::Kind;
    let kind = match card {
        game::BidCard::Family { family } => Kind::Family(pb::FamilyBidCard { family: family_card_out(family) }),
        game::BidCard::Weapons { value } => Kind::Weapons(pb::WeaponsBidCard { value: u(value) }),
        game::BidCard::Tournaments { value } => Kind::Tournaments(pb::TournamentsBidCard { value: u(value) }),
    };
    pb::BidCard { kind: Some(kind) }
}

pub(super) fn move_in(mv: pb::Move) -> Result<game::Move, Status> {
    use pb::r#move::Kind;
    match mv.kind {
        None => Err(invalid("move.battle13", "one of bid, pass, choose_family, chaos, decline_chaos, play is required")),
        Some(Kind::Bid(b)) => Ok(game::Move::Bid { card: bid_card_in("move.battle13.bid.card", b.card)? }),
        Some(Kind::Pass(_)) => Ok(game::Move::Pass),
        Some(Kind::ChooseFamily(c)) => {
            Ok(game::Move::ChooseFamily { family: family_card_in("move.battle13.choose_family.family", c.family)? })
        }
        Some(Kind::Chaos(_)) => Ok(game::Move::Chaos),
        Some(Kind::DeclineChaos(_)) => Ok(game::Move::DeclineChaos),
        Some(Kind::Play(p)) => Ok(game::Move::Play { knight: knight_in("move.battle13.play.knight", p.knight)? }),
    }
}

pub(super) fn move_out(mv: &game::Move) -> pb::Move {
    use pb::r#move::Kind;
    let kind = match *mv {
        game::Move::Bid { card } => Kind::Bid(pb::Bid { card: Some(bid_card_out(card)) }),
        game::Move::Pass => Kind::Pass(pb::Pass {}),
        game::Move::ChooseFamily { family } => Kind::ChooseFamily(pb::ChooseFamily { family: family_card_out(family) }),
        game::Move::Chaos => Kind::Chaos(pb::ActivateChaos {}),
        game::Move::DeclineChaos => Kind::DeclineChaos(pb::DeclineChaos {}),
        game::Move::Play { knight } => Kind::Play(pb::PlayKnight { knight: Some(knight_out(knight)) }),
    };
    pb::Move { kind: Some(kind) }
}

fn contract(c: game::Contract) -> pb::Contract {
    pb::Contract { master: u(c.master.0), servant: u(c.servant.0), tournaments: u(c.tournaments) }
}

fn crowns(c: game::Crowns) -> pb::Crowns {
    pb::Crowns { camp: u(c.camp.0), crowns: c.crowns }
}

fn decision(d: game::Decision) -> i32 {
    match d {
        game::Decision::OpenBidding => pb::Decision::OpenBidding,
        game::Decision::Bid => pb::Decision::Bid,
        game::Decision::ChooseFamily => pb::Decision::ChooseFamily,
        game::Decision::Chaos => pb::Decision::Chaos,
        game::Decision::Play => pb::Decision::Play,
        game::Decision::PlayForServant => pb::Decision::PlayForServant,
    }
    .into()
}

fn joust(j: &game::Joust) -> pb::Joust {
    pb::Joust {
        number: j.number,
        deal: j.deal,
        first_player: u(j.first_player.0),
        opener: u(j.opener.0),
        opening: j.opening.iter().map(|a| pb::OpeningAnswer { seat: u(a.seat.0), twelve_weapons: a.twelve_weapons }).collect(),
        hands: j
            .hands
            .iter()
            .map(|h| pb::Hand {
                seat: u(h.seat.0),
                held_count: u(h.held_count),
                held: knight_list(h.held.as_deref()),
                dealt: knight_list(h.dealt.as_deref()),
            })
            .collect(),
        calls: j.calls.iter().map(|c| pb::Call { seat: u(c.seat.0), card: c.card.map(bid_card_out) }).collect(),
        contract: j.contract.map(contract),
        favoured: j.favoured.map(family_card_out),
        chaos: j
            .chaos
            .as_ref()
            .map(|c| pb::Chaos { declined: c.declined.iter().map(|s| u(s.0)).collect(), activated_by: c.activated_by.map(|s| u(s.0)) }),
        servant_public: j.servant_public,
        tournaments: j
            .tournaments
            .iter()
            .map(|t| pb::Tournament {
                number: u(t.number),
                leader: u(t.leader.0),
                plays: t.plays.iter().map(|p| pb::Play { seat: u(p.seat.0), knight: Some(knight_out(p.knight)) }).collect(),
                winner: t.winner.map(|s| u(s.0)),
            })
            .collect(),
        tournaments_won: j.tournaments_won.iter().copied().map(u).collect(),
        crowns: j.crowns.map(crowns),
    }
}

pub(super) fn view_out(view: &game::View) -> pb::View {
    pb::View {
        seat: view.seat.map(|s| u(s.0)),
        target_crowns: view.target_crowns,
        crowns: view.crowns.clone(),
        joust: Some(joust(&view.joust)),
        history: view.history.iter().map(joust).collect(),
        turn: view.turn.map(|t| pb::Turn { seat: u(t.seat.0), decision: decision(t.decision), for_seat: u(t.for_seat.0) }),
        winner: view.winner.map(|c| u(c.0)),
    }
}

pub(super) fn effect_out(effect: &game::Effect) -> pb::Effect {
    use pb::effect::Kind;
    let kind = match effect {
        game::Effect::JoustStarted { joust, first_player } => {
            Kind::JoustStarted(pb::JoustStarted { joust: *joust, first_player: u(first_player.0) })
        }
        game::Effect::Dealt { joust, deal, hands } => Kind::Dealt(pb::Dealt {
            joust: *joust,
            deal: *deal,
            hands: hands.iter().map(|h| pb::DealtHand { seat: u(h.seat.0), knights: knight_list(h.knights.as_deref()) }).collect(),
        }),
        game::Effect::OpeningAnswered { seat, twelve_weapons } => {
            Kind::OpeningAnswered(pb::OpeningAnswered { seat: u(seat.0), twelve_weapons: *twelve_weapons })
        }
        game::Effect::DealVoided { joust, deal, reason } => Kind::DealVoided(pb::DealVoided {
            joust: *joust,
            deal: *deal,
            reason: match reason {
                game::VoidReason::NoOpener => pb::VoidReason::NoOpener,
                game::VoidReason::AllPassed => pb::VoidReason::AllPassed,
            }
            .into(),
        }),
        game::Effect::BidLaid { seat, card } => Kind::BidLaid(pb::BidLaid { seat: u(seat.0), card: Some(bid_card_out(*card)) }),
        game::Effect::Passed { seat } => Kind::Passed(pb::Passed { seat: u(seat.0) }),
        game::Effect::BiddingEnded { contract: c } => Kind::BiddingEnded(pb::BiddingEnded { contract: Some(contract(*c)) }),
        game::Effect::FamilyFavoured { master, family, chosen } => {
            Kind::FamilyFavoured(pb::FamilyFavoured { master: u(master.0), family: family_card_out(*family), chosen: *chosen })
        }
        game::Effect::ChaosActivated { seat } => Kind::ChaosActivated(pb::ChaosActivated { seat: u(seat.0) }),
        game::Effect::ChaosDeclined { seat } => Kind::ChaosDeclined(pb::ChaosDeclined { seat: u(seat.0) }),
        game::Effect::KnightPlayed { seat, knight, by } => {
            Kind::KnightPlayed(pb::KnightPlayed { seat: u(seat.0), knight: Some(knight_out(*knight)), by: u(by.0) })
        }
        game::Effect::ServantRevealed { servant, knights: k } => {
            Kind::ServantRevealed(pb::ServantRevealed { servant: u(servant.0), knights: knights(k) })
        }
        game::Effect::TournamentWon { number, winner, camp } => {
            Kind::TournamentWon(pb::TournamentWon { number: u(*number), winner: u(winner.0), camp: u(camp.0) })
        }
        game::Effect::JoustScored { joust, contract: c, chaos, tournaments_won, crowns: earned, totals } => {
            Kind::JoustScored(pb::JoustScored {
                joust: *joust,
                contract: Some(contract(*c)),
                chaos: *chaos,
                tournaments_won: tournaments_won.iter().copied().map(u).collect(),
                crowns: Some(crowns(*earned)),
                totals: totals.clone(),
            })
        }
        game::Effect::MatchWon { camp, winners, crowns } => {
            Kind::MatchWon(pb::MatchWon { camp: u(camp.0), winners: winners.iter().map(|s| u(s.0)).collect(), crowns: crowns.clone() })
        }
    };
    pb::Effect { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use ludo_engine::{Engine, Seat, Seed, Setup, Status as GameStatus, Viewer};
    use tonic::Code;

    use super::*;

    /// `Ok(value)`, or the status's message (tonic's `Status` has no `PartialEq`).
    fn ok<T>(result: Result<T, Status>) -> Result<T, String> {
        result.map_err(|e| e.message().to_owned())
    }

    /// Asserts `result` is an `invalid_input` naming `field`.
    #[track_caller]
    fn refused<T: core::fmt::Debug>(result: Result<T, Status>, field: &str) {
        match result {
            Ok(v) => panic!("accepted {v:?}, expected a refusal naming `{field}`"),
            Err(e) => {
                assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
                assert!(e.message().contains(&format!("`{field}`")), "{field} not named in {:?}", e.message());
            }
        }
    }

    #[track_caller]
    fn round_trips(m: &game::Move) {
        assert_eq!(ok(move_in(move_out(m))), Ok(*m));
    }

    /// The engine's knights back from a proto list (through the inbound path).
    fn parse(list: &pb::KnightList) -> Vec<game::Knight> {
        list.knights.iter().map(|k| knight_in("test", Some(*k)).expect("a knight we produced")).collect()
    }

    fn check_joust(pb: &pb::Joust, j: &game::Joust) {
        assert_eq!((pb.number, pb.deal, pb.first_player, pb.opener), (j.number, j.deal, u(j.first_player.0), u(j.opener.0)));
        assert_eq!(pb.opening.len(), j.opening.len());
        assert_eq!(pb.hands.len(), j.hands.len());
        for (p, h) in pb.hands.iter().zip(&j.hands) {
            assert_eq!((p.seat, p.held_count), (u(h.seat.0), u(h.held_count)));
            assert_eq!(p.held.as_ref().map(parse), h.held, "held knights of seat {}", h.seat.0);
            assert_eq!(p.dealt.as_ref().map(parse), h.dealt, "dealt knights of seat {}", h.seat.0);
        }
        assert_eq!(pb.calls.len(), j.calls.len());
        for (p, c) in pb.calls.iter().zip(&j.calls) {
            assert_eq!(p.card.is_some(), c.card.is_some(), "a pass has no card");
            assert_eq!(p.card.map(|card| ok(bid_card_in("test", Some(card)))), c.card.map(Ok));
        }
        assert_eq!(pb.contract, j.contract.map(contract));
        assert_eq!(pb.favoured.is_some(), j.favoured.is_some());
        assert_eq!(pb.chaos.as_ref().map(|c| c.activated_by.is_some()), j.chaos.as_ref().map(|c| c.activated_by.is_some()));
        assert_eq!(pb.servant_public, j.servant_public);
        assert_eq!(pb.tournaments.len(), j.tournaments.len());
        for (p, t) in pb.tournaments.iter().zip(&j.tournaments) {
            assert_eq!(p.plays.len(), t.plays.len());
            assert_eq!(p.winner, t.winner.map(|s| u(s.0)));
        }
        assert_eq!(pb.tournaments_won, j.tournaments_won.iter().copied().map(u).collect::<Vec<_>>());
        assert_eq!(pb.crowns.map(|c| (c.camp, c.crowns)), j.crowns.map(|c| (u(c.camp.0), c.crowns)));
    }

    fn check_view(game: &game::Game, viewer: Viewer, hidden_seen: &mut usize) {
        let view = game.view(viewer);
        let pb = view_out(&view);
        assert_eq!(pb.seat, view.seat.map(|s| u(s.0)));
        assert_eq!(pb.target_crowns, view.target_crowns);
        assert_eq!(pb.crowns, view.crowns);
        assert_eq!(pb.winner, view.winner.map(|c| u(c.0)));
        assert_eq!(pb.turn.map(|t| (t.seat, t.for_seat)), view.turn.map(|t| (u(t.seat.0), u(t.for_seat.0))));
        assert!(pb.turn.is_none_or(|t| t.decision != i32::from(pb::Decision::Unspecified)));
        check_joust(pb.joust.as_ref().expect("the joust is always set"), &view.joust);
        assert_eq!(pb.history.len(), view.history.len());
        for (p, j) in pb.history.iter().zip(&view.history) {
            check_joust(p, j);
        }
        let hands = &pb.joust.as_ref().expect("the joust is always set").hands;
        let over = game.winner().is_some();
        if let Viewer::Seat(me) = viewer {
            // Own hand: always visible, the very knights the engine holds.
            let own = hands[me.index()].held.as_ref().expect("a seat sees its own hand");
            assert_eq!(Some(parse(own)), view.joust.hands[me.index()].held);
        }
        for (s, hand) in hands.iter().enumerate() {
            let mine = matches!(viewer, Viewer::Seat(me) if me.index() == s);
            let servant = view.joust.servant_public && view.joust.contract.is_some_and(|c| c.servant.index() == s);
            if !mine && !servant && !over && viewer != Viewer::Omniscient {
                // Another seat's hand in the joust in play: hidden, not empty.
                assert!(hand.held.is_none() && hand.dealt.is_none(), "seat {s}'s hand leaked to {viewer:?}");
                *hidden_seen += 1;
            }
        }
    }

    fn check_effect(effect: &game::Effect) {
        use pb::effect::Kind;
        let pb = effect_out(effect);
        let kind = pb.kind.expect("every effect has a kind");
        match (effect, kind) {
            (game::Effect::Dealt { hands, .. }, Kind::Dealt(d)) => {
                assert_eq!(d.hands.len(), hands.len());
                for (p, h) in d.hands.iter().zip(hands) {
                    assert_eq!(p.knights.as_ref().map(parse), h.knights);
                }
            }
            (game::Effect::BidLaid { card, .. }, Kind::BidLaid(b)) => assert_eq!(ok(bid_card_in("test", b.card)), Ok(*card)),
            (game::Effect::KnightPlayed { knight, seat, by }, Kind::KnightPlayed(k)) => {
                assert_eq!(ok(knight_in("test", k.knight)), Ok(*knight));
                assert_eq!((k.seat, k.by), (u(seat.0), u(by.0)));
            }
            (game::Effect::ServantRevealed { knights: k, .. }, Kind::ServantRevealed(r)) => {
                assert_eq!(parse(&pb::KnightList { knights: r.knights }), *k);
            }
            (game::Effect::DealVoided { .. }, Kind::DealVoided(d)) => assert_ne!(d.reason, i32::from(pb::VoidReason::Unspecified)),
            (game::Effect::FamilyFavoured { .. }, Kind::FamilyFavoured(f)) => assert_ne!(f.family, i32::from(pb::FamilyCard::Unspecified)),
            (game::Effect::JoustScored { totals, .. }, Kind::JoustScored(s)) => {
                assert_eq!(s.totals, *totals);
                assert!(s.contract.is_some() && s.crowns.is_some());
            }
            (game::Effect::MatchWon { crowns, .. }, Kind::MatchWon(m)) => assert_eq!(m.crowns, *crowns),
            (game::Effect::JoustStarted { .. }, Kind::JoustStarted(_))
            | (game::Effect::OpeningAnswered { .. }, Kind::OpeningAnswered(_))
            | (game::Effect::Passed { .. }, Kind::Passed(_))
            | (game::Effect::BiddingEnded { .. }, Kind::BiddingEnded(_))
            | (game::Effect::ChaosActivated { .. }, Kind::ChaosActivated(_))
            | (game::Effect::ChaosDeclined { .. }, Kind::ChaosDeclined(_))
            | (game::Effect::TournamentWon { .. }, Kind::TournamentWon(_)) => {}
            (e, k) => panic!("{e:?} became {k:?}"),
        }
    }

    const VIEWERS: [Viewer; 6] =
        [Viewer::Seat(Seat(0)), Viewer::Seat(Seat(1)), Viewer::Seat(Seat(2)), Viewer::Seat(Seat(3)), Viewer::Spectator, Viewer::Omniscient];

    fn check_effects(game: &game::Game, effects: &[game::Effect], seen: &mut BTreeSet<String>) {
        for effect in effects {
            seen.extend(format!("{effect:?}").split([' ', '{']).next().map(str::to_owned));
            check_effect(effect);
            for viewer in VIEWERS {
                check_effect(&game.redact(effect, viewer));
            }
        }
    }

    /// Plays a whole match with a deterministic chooser, checking every legal
    /// move, every view and every effect on the way. Returns the moves played.
    fn play_match(seed: u8, options: game::Options, seen: &mut BTreeSet<String>) -> usize {
        let setup = Setup { players: 4, options, seed: Seed([seed; 32]) };
        let (mut game, effects) = game::Game::new(&setup).expect("a valid setup");
        check_effects(&game, &effects, seen);
        let mut state = u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut hidden_seen = 0;
        for played in 0..100_000 {
            for viewer in VIEWERS {
                check_view(&game, viewer, &mut hidden_seen);
            }
            let to_move = match game.status() {
                GameStatus::Finished { .. } => {
                    assert!(hidden_seen > 0, "never saw a hidden hand");
                    return played;
                }
                GameStatus::InProgress { to_move } => to_move[0],
            };
            let moves = game.legal_moves(to_move);
            assert!(!moves.is_empty());
            moves.iter().for_each(round_trips);
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let r = usize::try_from(state >> 33).expect("31 bits fit");
            // Pass often (it is listed last) so that low contracts, long
            // matches and void deals (B13-13) come up too.
            let pick = if moves.last() == Some(&game::Move::Pass) && r % 8 < 5 { moves.len() - 1 } else { r % moves.len() };
            let effects = game.apply(to_move, &moves[pick]).expect("a legal move is accepted");
            check_effects(&game, &effects, seen);
        }
        panic!("the match did not end");
    }

    #[test]
    fn battle13_random_matches_convert_both_ways() {
        let mut seen = BTreeSet::new();
        let mut moves = 0;
        for seed in 1..=3 {
            moves += play_match(seed, game::Options::default(), &mut seen);
        }
        moves += play_match(7, game::Options { first_seat: Some(Seat(2)), target_crowns: 100 }, &mut seen);
        assert!(moves > 100);
        // Every kind of effect came up (void deals and both Chaos decisions included).
        assert_eq!(seen.len(), 15, "{seen:?}");
    }

    #[test]
    fn battle13_every_move_round_trips_even_those_the_engine_refuses() {
        let mut moves = vec![game::Move::Pass, game::Move::Chaos, game::Move::DeclineChaos];
        moves.extend(game::BidCard::set().into_iter().map(|card| game::Move::Bid { card }));
        moves.extend(game::FamilyCard::ALL.into_iter().map(|family| game::Move::ChooseFamily { family }));
        for value in 0..=u8::MAX {
            moves.push(game::Move::Bid { card: game::BidCard::Weapons { value } });
            moves.push(game::Move::Bid { card: game::BidCard::Tournaments { value } });
            moves.extend(game::Family::ALL.into_iter().map(|family| game::Move::Play { knight: game::Knight::new(family, value) }));
        }
        moves.iter().for_each(round_trips);
    }

    #[test]
    fn battle13_missing_or_unspecified_input_is_refused() {
        use pb::r#move::Kind;
        let mv = |kind| pb::Move { kind: Some(kind) };
        let play = |knight| mv(Kind::Play(pb::PlayKnight { knight }));
        let bid = |kind| mv(Kind::Bid(pb::Bid { card: Some(pb::BidCard { kind: Some(kind) }) }));
        use pb::bid_card::Kind as Card;

        refused(move_in(pb::Move { kind: None }), "move.battle13");
        refused(move_in(mv(Kind::Bid(pb::Bid { card: None }))), "move.battle13.bid.card");
        refused(move_in(mv(Kind::Bid(pb::Bid { card: Some(pb::BidCard { kind: None }) }))), "move.battle13.bid.card");
        refused(
            move_in(bid(Card::Family(pb::FamilyBidCard { family: pb::FamilyCard::Unspecified.into() }))),
            "move.battle13.bid.card.family.family",
        );
        refused(move_in(bid(Card::Family(pb::FamilyBidCard { family: 42 }))), "move.battle13.bid.card.family.family");
        refused(move_in(bid(Card::Weapons(pb::WeaponsBidCard { value: 256 }))), "move.battle13.bid.card.weapons.value");
        refused(move_in(bid(Card::Tournaments(pb::TournamentsBidCard { value: u32::MAX }))), "move.battle13.bid.card.tournaments.value");
        refused(move_in(mv(Kind::ChooseFamily(pb::ChooseFamily { family: 0 }))), "move.battle13.choose_family.family");
        refused(move_in(mv(Kind::ChooseFamily(pb::ChooseFamily { family: -1 }))), "move.battle13.choose_family.family");
        refused(move_in(play(None)), "move.battle13.play.knight");
        refused(
            move_in(play(Some(pb::Knight { family: pb::Family::Unspecified.into(), strength: 5 }))),
            "move.battle13.play.knight.family",
        );
        refused(move_in(play(Some(pb::Knight { family: 9, strength: 5 }))), "move.battle13.play.knight.family");
        refused(move_in(play(Some(pb::Knight { family: pb::Family::Lion.into(), strength: 300 }))), "move.battle13.play.knight.strength");
        refused(options_in(pb::Options { first_seat: Some(256), target_crowns: None }), "options.battle13.first_seat");

        // Well-formed values on no card or token are the engine's to refuse (B13-1, B13-3).
        assert_eq!(
            ok(move_in(bid(Card::Weapons(pb::WeaponsBidCard { value: 7 })))),
            Ok(game::Move::Bid { card: game::BidCard::Weapons { value: 7 } })
        );
        assert_eq!(
            ok(move_in(play(Some(pb::Knight { family: pb::Family::Wolf.into(), strength: 0 })))),
            Ok(game::Move::Play { knight: game::Knight::new(game::Family::Wolf, 0) })
        );
    }

    #[test]
    fn battle13_options_round_trip() {
        let all = [
            game::Options::default(),
            game::Options { first_seat: Some(Seat(3)), target_crowns: 50 },
            game::Options { first_seat: Some(Seat(0)), target_crowns: 100 },
            // Refused by the engine (B13-6), still carried as given.
            game::Options { first_seat: Some(Seat(9)), target_crowns: 0 },
        ];
        for options in all {
            assert_eq!(ok(options_in(options_out(&options))), Ok(options));
        }
        // Unset fields read as the JSON API's defaults.
        assert_eq!(ok(options_in(pb::Options::default())), Ok(game::Options::default()));
    }
}
