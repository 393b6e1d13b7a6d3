//! Kardinal & König's engine types and proto messages, field for field.

use ludo_kardinal as game;
use ludo_proto::ludo::kardinal::v1 as pb;
use tonic::Status;

use super::{seat, small};
use crate::grpc::status::invalid;

super::game_proto!();

fn u(value: u8) -> u32 {
    u32::from(value)
}

fn seats_out(seats: &[ludo_engine::Seat]) -> Vec<u32> {
    seats.iter().map(|s| u(s.0)).collect()
}

fn counts_out(counts: &[u8]) -> Vec<u32> {
    counts.iter().copied().map(u).collect()
}

fn country_in(field: &str, value: i32) -> Result<game::Country, Status> {
    match pb::Country::try_from(value) {
        Ok(pb::Country::England) => Ok(game::Country::England),
        Ok(pb::Country::France) => Ok(game::Country::France),
        Ok(pb::Country::Aragon) => Ok(game::Country::Aragon),
        Ok(pb::Country::Lotharingia) => Ok(game::Country::Lotharingia),
        Ok(pb::Country::Franconia) => Ok(game::Country::Franconia),
        Ok(pb::Country::Swabia) => Ok(game::Country::Swabia),
        Ok(pb::Country::Bavaria) => Ok(game::Country::Bavaria),
        Ok(pb::Country::Burgundy) => Ok(game::Country::Burgundy),
        Ok(pb::Country::Italy) => Ok(game::Country::Italy),
        Ok(pb::Country::Unspecified) | Err(_) => Err(invalid(field, "a country is required: one of the nine COUNTRY_… values")),
    }
}

fn country_out(country: game::Country) -> i32 {
    match country {
        game::Country::England => pb::Country::England,
        game::Country::France => pb::Country::France,
        game::Country::Aragon => pb::Country::Aragon,
        game::Country::Lotharingia => pb::Country::Lotharingia,
        game::Country::Franconia => pb::Country::Franconia,
        game::Country::Swabia => pb::Country::Swabia,
        game::Country::Bavaria => pb::Country::Bavaria,
        game::Country::Burgundy => pb::Country::Burgundy,
        game::Country::Italy => pb::Country::Italy,
    }
    .into()
}

fn countries_in(field: &str, values: &[i32]) -> Result<Vec<game::Country>, Status> {
    values.iter().enumerate().map(|(i, &c)| country_in(&format!("{field}[{i}]"), c)).collect()
}

fn countries_out(countries: &[game::Country]) -> Vec<i32> {
    countries.iter().copied().map(country_out).collect()
}

fn card_in(field: &str, value: i32) -> Result<game::CardKind, Status> {
    match pb::CardKind::try_from(value) {
        Ok(pb::CardKind::FranconiaAragon) => Ok(game::CardKind::FranconiaAragon),
        Ok(pb::CardKind::BavariaBurgundy) => Ok(game::CardKind::BavariaBurgundy),
        Ok(pb::CardKind::LotharingiaItaly) => Ok(game::CardKind::LotharingiaItaly),
        Ok(pb::CardKind::EnglandSwabia) => Ok(game::CardKind::EnglandSwabia),
        Ok(pb::CardKind::France) => Ok(game::CardKind::France),
        Ok(pb::CardKind::Unspecified) | Err(_) => Err(invalid(field, "a card kind is required: one of the five CARD_KIND_… values")),
    }
}

fn card_out(card: game::CardKind) -> i32 {
    match card {
        game::CardKind::FranconiaAragon => pb::CardKind::FranconiaAragon,
        game::CardKind::BavariaBurgundy => pb::CardKind::BavariaBurgundy,
        game::CardKind::LotharingiaItaly => pb::CardKind::LotharingiaItaly,
        game::CardKind::EnglandSwabia => pb::CardKind::EnglandSwabia,
        game::CardKind::France => pb::CardKind::France,
    }
    .into()
}

fn cards_in(field: &str, values: &[i32]) -> Result<Vec<game::CardKind>, Status> {
    values.iter().enumerate().map(|(i, &c)| card_in(&format!("{field}[{i}]"), c)).collect()
}

fn cards_out(cards: &[game::CardKind]) -> Vec<i32> {
    cards.iter().copied().map(card_out).collect()
}

/// A card list that may be hidden: `None` stays an unset wrapper, never an empty list.
fn card_list(cards: Option<&Vec<game::CardKind>>) -> Option<pb::CardList> {
    cards.map(|c| pb::CardList { cards: cards_out(c) })
}

fn piece_in(field: &str, value: i32) -> Result<game::Piece, Status> {
    match pb::Piece::try_from(value) {
        Ok(pb::Piece::Abbey) => Ok(game::Piece::Abbey),
        Ok(pb::Piece::Counsellor) => Ok(game::Piece::Counsellor),
        Ok(pb::Piece::Unspecified) | Err(_) => Err(invalid(field, "a piece is required: abbey or counsellor")),
    }
}

fn piece_out(piece: game::Piece) -> i32 {
    match piece {
        game::Piece::Abbey => pb::Piece::Abbey,
        game::Piece::Counsellor => pb::Piece::Counsellor,
    }
    .into()
}

fn variant_in(value: i32) -> Result<game::Variant, Status> {
    match pb::Variant::try_from(value) {
        Ok(pb::Variant::Standard) => Ok(game::Variant::Standard),
        Ok(pb::Variant::Dynamic) => Ok(game::Variant::Dynamic),
        Ok(pb::Variant::Unspecified) | Err(_) => Err(invalid("options.kardinal.variant", "standard or dynamic (or unset: standard)")),
    }
}

fn variant_out(variant: game::Variant) -> i32 {
    match variant {
        game::Variant::Standard => pb::Variant::Standard,
        game::Variant::Dynamic => pb::Variant::Dynamic,
    }
    .into()
}

fn source_in(value: i32) -> Result<game::Source, Status> {
    match pb::Source::try_from(value) {
        Ok(pb::Source::Deck) => Ok(game::Source::Deck),
        Ok(pb::Source::Display0) => Ok(game::Source::Display0),
        Ok(pb::Source::Display1) => Ok(game::Source::Display1),
        Ok(pb::Source::Unspecified) | Err(_) => Err(invalid("move.kardinal.exchange.take", "deck, display_0 or display_1")),
    }
}

fn source_out(source: game::Source) -> i32 {
    match source {
        game::Source::Deck => pb::Source::Deck,
        game::Source::Display0 => pb::Source::Display0,
        game::Source::Display1 => pb::Source::Display1,
    }
    .into()
}

fn end_reason_out(reason: game::EndReason) -> i32 {
    match reason {
        game::EndReason::LastRoundOver => pb::EndReason::LastRoundOver,
        game::EndReason::NoPlacementLeft => pb::EndReason::NoPlacementLeft,
    }
    .into()
}

pub(super) fn options_in(options: pb::Options) -> Result<game::Options, Status> {
    Ok(game::Options {
        first_seat: options.first_seat.map(|s| seat("options.kardinal.first_seat", s)).transpose()?,
        // Unset is the JSON's omitted field: the default (standard).
        variant: options.variant.map(variant_in).transpose()?.unwrap_or_default(),
        board: options.board.map(board_in).transpose()?,
    })
}

pub(super) fn options_out(options: &game::Options) -> pb::Options {
    pb::Options {
        first_seat: options.first_seat.map(|s| u(s.0)),
        variant: Some(variant_out(options.variant)),
        board: options.board.as_ref().map(board_out),
    }
}

/// A client-supplied board, converted as given: the engine validates it (KK-3).
fn board_in(board: pb::Board) -> Result<game::Board, Status> {
    const B: &str = "options.kardinal.board";
    Ok(game::Board {
        name: board.name,
        note: board.note,
        countries: board
            .countries
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                Ok(game::CountryInfo { id: country_in(&format!("{B}.countries[{i}].id"), c.id)?, name: c.name, german: c.german })
            })
            .collect::<Result<_, Status>>()?,
        card_kinds: board
            .card_kinds
            .into_iter()
            .enumerate()
            .map(|(i, k)| {
                Ok(game::CardKindInfo {
                    id: card_in(&format!("{B}.card_kinds[{i}].id"), k.id)?,
                    countries: countries_in(&format!("{B}.card_kinds[{i}].countries"), &k.countries)?,
                    count: small(&format!("{B}.card_kinds[{i}].count"), k.count)?,
                })
            })
            .collect::<Result<_, Status>>()?,
        sites: board
            .sites
            .into_iter()
            .enumerate()
            .map(|(i, s)| Ok(game::Site { id: s.id, country: country_in(&format!("{B}.sites[{i}].country"), s.country)?, x: s.x, y: s.y }))
            .collect::<Result<_, Status>>()?,
        roads: board.roads.into_iter().map(|r| game::Road([r.a, r.b])).collect(),
        alliances: board
            .alliances
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let field = format!("{B}.alliances[{i}].countries");
                let countries: [game::Country; 2] =
                    countries_in(&field, &a.countries)?.try_into().map_err(|_| invalid(&field, "exactly two countries are required"))?;
                Ok(game::Alliance { number: small(&format!("{B}.alliances[{i}].number"), a.number)?, countries, by_sea: a.by_sea })
            })
            .collect::<Result<_, Status>>()?,
        interim_scoring_order: countries_in(&format!("{B}.interim_scoring_order"), &board.interim_scoring_order)?,
    })
}

fn board_out(board: &game::Board) -> pb::Board {
    pb::Board {
        name: board.name.clone(),
        note: board.note.clone(),
        countries: board
            .countries
            .iter()
            .map(|c| pb::CountryInfo { id: country_out(c.id), name: c.name.clone(), german: c.german.clone() })
            .collect(),
        card_kinds: board
            .card_kinds
            .iter()
            .map(|k| pb::CardKindInfo { id: card_out(k.id), countries: countries_out(&k.countries), count: u(k.count) })
            .collect(),
        sites: board.sites.iter().map(|s| pb::Site { id: s.id.clone(), country: country_out(s.country), x: s.x, y: s.y }).collect(),
        roads: board.roads.iter().map(|game::Road([a, b])| pb::Road { a: a.clone(), b: b.clone() }).collect(),
        alliances: board
            .alliances
            .iter()
            .map(|a| pb::Alliance { number: u(a.number), countries: countries_out(&a.countries), by_sea: a.by_sea })
            .collect(),
        interim_scoring_order: countries_out(&board.interim_scoring_order),
    }
}

fn placement_in(i: usize, p: pb::Placement) -> Result<game::Placement, Status> {
    let field = format!("move.kardinal.place.pieces[{i}]");
    Ok(game::Placement {
        piece: piece_in(&format!("{field}.piece"), p.piece)?,
        country: country_in(&format!("{field}.country"), p.country)?,
        site: p.site,
        paid_with: cards_in(&format!("{field}.paid_with"), &p.paid_with)?,
    })
}

fn placement_out(p: &game::Placement) -> pb::Placement {
    pb::Placement { piece: piece_out(p.piece), country: country_out(p.country), site: p.site.clone(), paid_with: cards_out(&p.paid_with) }
}

pub(super) fn move_in(mv: pb::Move) -> Result<game::Move, Status> {
    use pb::r#move::Kind;
    match mv.kind {
        None => Err(invalid("move.kardinal", "one of place, draw_deck, take_display, exchange, pass is required")),
        Some(Kind::Place(p)) => {
            Ok(game::Move::Place { pieces: p.pieces.into_iter().enumerate().map(|(i, p)| placement_in(i, p)).collect::<Result<_, _>>()? })
        }
        Some(Kind::DrawDeck(_)) => Ok(game::Move::DrawDeck {}),
        Some(Kind::TakeDisplay(t)) => Ok(game::Move::TakeDisplay { slot: small("move.kardinal.take_display.slot", t.slot)? }),
        Some(Kind::Exchange(e)) => {
            Ok(game::Move::Exchange { discard: card_in("move.kardinal.exchange.discard", e.discard)?, take: source_in(e.take)? })
        }
        Some(Kind::Pass(_)) => Ok(game::Move::Pass {}),
    }
}

pub(super) fn move_out(mv: &game::Move) -> pb::Move {
    use pb::r#move::Kind;
    let kind = match mv {
        game::Move::Place { pieces } => Kind::Place(pb::Place { pieces: pieces.iter().map(placement_out).collect() }),
        game::Move::DrawDeck {} => Kind::DrawDeck(pb::DrawDeck {}),
        game::Move::TakeDisplay { slot } => Kind::TakeDisplay(pb::TakeDisplay { slot: u(*slot) }),
        game::Move::Exchange { discard, take } => Kind::Exchange(pb::Exchange { discard: card_out(*discard), take: source_out(*take) }),
        game::Move::Pass {} => Kind::Pass(pb::Pass {}),
    };
    pb::Move { kind: Some(kind) }
}

fn country_scoring(c: &game::CountryScoring) -> pb::CountryScoring {
    pb::CountryScoring { country: country_out(c.country), abbeys: counts_out(&c.abbeys), points: c.points.clone() }
}

fn country_scorings(countries: &[game::CountryScoring]) -> Vec<pb::CountryScoring> {
    countries.iter().map(country_scoring).collect()
}

fn final_scoring(s: &game::FinalScoring) -> pb::FinalScoring {
    pb::FinalScoring {
        abbeys: country_scorings(&s.abbeys),
        alliances: s
            .alliances
            .iter()
            .map(|a| pb::AllianceScoring {
                number: u(a.number),
                countries: countries_out(&a.countries),
                leaders_first: seats_out(&a.leaders_first),
                leaders_second: seats_out(&a.leaders_second),
                counsellors: u(a.counsellors),
                scorers: seats_out(&a.scorers),
                points: a.points,
            })
            .collect(),
        chains: s
            .chains
            .iter()
            .map(|c| pb::SeatChains {
                seat: u(c.seat.0),
                chains: c.chains.iter().map(|chain| pb::Chain { sites: chain.sites.clone() }).collect(),
                points: c.points,
            })
            .collect(),
        totals: s
            .totals
            .iter()
            .map(|t| pb::SeatTotal {
                seat: u(t.seat.0),
                interim: t.interim,
                abbeys: t.abbeys,
                alliances: t.alliances,
                chains: t.chains,
                total: t.total,
                unused_pieces: u(t.unused_pieces),
            })
            .collect(),
        winners: seats_out(&s.winners),
    }
}

pub(super) fn view_out(view: &game::View) -> pb::View {
    pb::View {
        viewer: view.viewer.map(|s| u(s.0)),
        board: view.board.clone(),
        variant: variant_out(view.variant),
        players: u(view.players),
        first_seat: u(view.first_seat.0),
        turn: view.turn.as_ref().map(|t| pb::Turn {
            seat: u(t.seat.0),
            step: match t.step {
                game::TurnStep::PlaceOrExchange => pb::TurnStep::PlaceOrExchange,
                game::TurnStep::Draw => pb::TurnStep::Draw,
                game::TurnStep::PlaceOrPass => pb::TurnStep::PlaceOrPass,
            }
            .into(),
            cards_to_draw: u(t.cards_to_draw),
        }),
        seats: view
            .seats
            .iter()
            .map(|s| pb::SeatView {
                seat: u(s.seat.0),
                hand_size: u(s.hand_size),
                hand: card_list(s.hand.as_ref()),
                abbeys_left: u(s.abbeys_left),
                counsellors_left: u(s.counsellors_left),
                score: s.score,
            })
            .collect(),
        display: view.display.iter().map(|d| pb::DisplaySlot { slot: u(d.slot), card: d.card.map(card_out) }).collect(),
        deck_size: view.deck_size,
        deck: card_list(view.deck.as_ref()),
        discard: cards_out(&view.discard),
        removed: cards_out(&view.removed),
        abbeys: view
            .abbeys
            .iter()
            .map(|a| pb::AbbeyView { site: a.site.clone(), country: country_out(a.country), seat: u(a.seat.0) })
            .collect(),
        seals: view
            .seals
            .iter()
            .map(|s| pb::SealView {
                country: country_out(s.country),
                counsellors: counts_out(&s.counsellors),
                abbeys: counts_out(&s.abbeys),
                limit: u(s.limit),
            })
            .collect(),
        exhaustions: u(view.exhaustions),
        last_round: view.last_round,
        interim: view.interim.as_ref().map(|c| pb::CountryScoringList { countries: country_scorings(c) }),
        final_scoring: view.final_scoring.as_ref().map(final_scoring),
        end_reason: view.end_reason.map(end_reason_out),
    }
}

pub(super) fn effect_out(effect: &game::Effect) -> pb::Effect {
    use pb::effect::Kind;
    let kind = match effect {
        game::Effect::CardsRemoved { cards } => Kind::CardsRemoved(pb::CardsRemoved { cards: cards_out(cards) }),
        game::Effect::Dealt { seat, cards } => Kind::Dealt(pb::Dealt { seat: u(seat.0), cards: card_list(cards.as_ref()) }),
        game::Effect::DisplayRefilled { slot, card } => {
            Kind::DisplayRefilled(pb::DisplayRefilled { slot: u(*slot), card: card_out(*card) })
        }
        game::Effect::FirstSeat { seat, drawn } => Kind::FirstSeat(pb::FirstSeat { seat: u(seat.0), drawn: *drawn }),
        game::Effect::Placed { seat, piece, country, site, paid_with } => Kind::Placed(pb::Placed {
            seat: u(seat.0),
            piece: piece_out(*piece),
            country: country_out(*country),
            site: site.clone(),
            paid_with: cards_out(paid_with),
        }),
        game::Effect::Discarded { seat, card } => Kind::Discarded(pb::Discarded { seat: u(seat.0), card: card_out(*card) }),
        game::Effect::DrewFromDeck { seat, card } => Kind::DrewFromDeck(pb::DrewFromDeck { seat: u(seat.0), card: card.map(card_out) }),
        game::Effect::TookFromDisplay { seat, slot, card } => {
            Kind::TookFromDisplay(pb::TookFromDisplay { seat: u(seat.0), slot: u(*slot), card: card_out(*card) })
        }
        game::Effect::Passed { seat } => Kind::Passed(pb::Passed { seat: u(seat.0) }),
        game::Effect::RefillStopped { seat, hand_size } => {
            Kind::RefillStopped(pb::RefillStopped { seat: u(seat.0), hand_size: u(*hand_size) })
        }
        game::Effect::DeckExhausted { count } => Kind::DeckExhausted(pb::DeckExhausted { count: u(*count) }),
        game::Effect::InterimScoring { countries, scores } => {
            Kind::InterimScoring(pb::InterimScoring { countries: country_scorings(countries), scores: scores.clone() })
        }
        game::Effect::Reshuffled { deck_size } => Kind::Reshuffled(pb::Reshuffled { deck_size: *deck_size }),
        game::Effect::LastRound { ends_before } => Kind::LastRound(pb::LastRound { ends_before: u(ends_before.0) }),
        game::Effect::TurnStarted { seat } => Kind::TurnStarted(pb::TurnStarted { seat: u(seat.0) }),
        game::Effect::GameEnded { reason, scoring } => {
            Kind::GameEnded(pb::GameEnded { reason: end_reason_out(*reason), scoring: Some(final_scoring(scoring)) })
        }
    };
    pb::Effect { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use ludo_engine::{DeckRng, Engine, Seat, Seed, Setup, Status as GameStatus, Viewer};
    use tonic::Code;

    use super::*;

    /// What a few games met, to prove the checks saw both sides of each case.
    #[derive(Default)]
    struct Seen {
        moves: usize,
        hidden_hands: usize,
        visible_hands: usize,
        hidden_cards: usize,
        visible_cards: usize,
        finished: usize,
        interim: usize,
        effects: std::collections::BTreeSet<&'static str>,
    }

    fn assert_invalid(result: Result<impl std::fmt::Debug, Status>, field: &str) {
        let status = result.expect_err("refused");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(&format!("`{field}`")), "{field} not named in {:?}", status.message());
    }

    fn check_view(state: &game::Game, viewer: Viewer, seen: &mut Seen) {
        let view = state.view(viewer);
        let out = view_out(&view);
        assert_eq!(out.viewer, view.viewer.map(|s| u(s.0)));
        assert_eq!(out.board, view.board);
        assert_eq!(out.players, u(view.players));
        assert_eq!(out.turn.is_some(), view.turn.is_some());
        assert_eq!(out.seats.len(), view.seats.len());
        for (mine, theirs) in view.seats.iter().zip(&out.seats) {
            assert_eq!(theirs.seat, u(mine.seat.0));
            assert_eq!(theirs.hand_size, u(mine.hand_size));
            assert_eq!(theirs.score, mine.score);
            match &mine.hand {
                None => {
                    assert!(theirs.hand.is_none(), "a hidden hand must leave the wrapper unset");
                    seen.hidden_hands += 1;
                }
                Some(hand) => {
                    assert_eq!(theirs.hand.as_ref().map(|h| h.cards.clone()), Some(cards_out(hand)));
                    seen.visible_hands += 1;
                }
            }
        }
        assert_eq!(out.deck.as_ref().map(|d| d.cards.clone()), view.deck.as_deref().map(cards_out));
        assert_eq!(out.deck_size, view.deck_size);
        assert_eq!(out.discard, cards_out(&view.discard));
        assert_eq!(
            out.display.iter().map(|d| d.card).collect::<Vec<_>>(),
            view.display.iter().map(|d| d.card.map(card_out)).collect::<Vec<_>>()
        );
        assert_eq!(out.abbeys.len(), view.abbeys.len());
        assert_eq!(out.seals.len(), 9);
        assert_eq!(out.interim.as_ref().map(|i| i.countries.len()), view.interim.as_ref().map(Vec::len));
        assert_eq!(out.final_scoring.is_some(), view.final_scoring.is_some());
        assert_eq!(out.end_reason, view.end_reason.map(end_reason_out));
        if view.interim.is_some() {
            seen.interim += 1;
        }
    }

    fn check_effect(state: &game::Game, effect: &game::Effect, players: usize, seen: &mut Seen) {
        let viewers = Seat::all(players).map(Viewer::Seat).chain([Viewer::Spectator, Viewer::Omniscient]);
        for viewer in viewers {
            let redacted = state.redact(effect, viewer);
            let out = effect_out(&redacted).kind.expect("an effect kind");
            use pb::effect::Kind;
            match (&redacted, &out) {
                (game::Effect::Dealt { seat, cards }, Kind::Dealt(d)) => {
                    assert_eq!(d.seat, u(seat.0));
                    assert_eq!(d.cards.as_ref().map(|c| c.cards.clone()), cards.as_deref().map(cards_out));
                    if cards.is_some() { seen.visible_cards += 1 } else { seen.hidden_cards += 1 }
                }
                (game::Effect::DrewFromDeck { seat, card }, Kind::DrewFromDeck(d)) => {
                    assert_eq!(d.seat, u(seat.0));
                    assert_eq!(d.card, card.map(card_out));
                    if card.is_some() { seen.visible_cards += 1 } else { seen.hidden_cards += 1 }
                }
                (game::Effect::Placed { site, paid_with, .. }, Kind::Placed(p)) => {
                    assert_eq!(&p.site, site);
                    assert_eq!(p.paid_with, cards_out(paid_with));
                }
                (game::Effect::GameEnded { reason, scoring }, Kind::GameEnded(g)) => {
                    assert_eq!(g.reason, end_reason_out(*reason));
                    let s = g.scoring.as_ref().expect("the final scoring");
                    assert_eq!(s.winners, seats_out(&scoring.winners));
                    assert_eq!(
                        s.totals.iter().map(|t| t.total).collect::<Vec<_>>(),
                        scoring.totals.iter().map(|t| t.total).collect::<Vec<_>>()
                    );
                    assert_eq!(s.alliances.len(), scoring.alliances.len());
                }
                (game::Effect::InterimScoring { scores, .. }, Kind::InterimScoring(i)) => assert_eq!(&i.scores, scores),
                _ => {}
            }
            seen.effects.insert(match out {
                Kind::CardsRemoved(_) => "cards_removed",
                Kind::Dealt(_) => "dealt",
                Kind::DisplayRefilled(_) => "display_refilled",
                Kind::FirstSeat(_) => "first_seat",
                Kind::Placed(_) => "placed",
                Kind::Discarded(_) => "discarded",
                Kind::DrewFromDeck(_) => "drew_from_deck",
                Kind::TookFromDisplay(_) => "took_from_display",
                Kind::Passed(_) => "passed",
                Kind::RefillStopped(_) => "refill_stopped",
                Kind::DeckExhausted(_) => "deck_exhausted",
                Kind::InterimScoring(_) => "interim_scoring",
                Kind::Reshuffled(_) => "reshuffled",
                Kind::LastRound(_) => "last_round",
                Kind::TurnStarted(_) => "turn_started",
                Kind::GameEnded(_) => "game_ended",
            });
        }
    }

    fn check_all_views(state: &game::Game, players: usize, seen: &mut Seen) {
        for viewer in Seat::all(players).map(Viewer::Seat).chain([Viewer::Spectator, Viewer::Omniscient]) {
            check_view(state, viewer, seen);
        }
    }

    /// Plays one game with a deterministic chooser, checking every legal move, view and effect.
    fn play(players: usize, options: game::Options, seed: u8, seen: &mut Seen) {
        let setup = Setup { players, options, seed: Seed([seed; 32]) };
        let (mut state, effects) = game::Game::new(&setup).expect("set-up");
        for e in &effects {
            check_effect(&state, e, players, seen);
        }
        let mut chooser = DeckRng::new(&Seed([seed ^ 0x5A; 32]));
        for _ in 0..2_000 {
            check_all_views(&state, players, seen);
            let seat = match state.status() {
                GameStatus::Finished { .. } => break,
                GameStatus::InProgress { to_move } => to_move[0],
            };
            let moves = state.legal_moves(seat);
            assert!(!moves.is_empty());
            for m in &moves {
                assert_eq!(move_in(move_out(m)).map_err(|e| e.to_string()), Ok(m.clone()));
            }
            seen.moves += moves.len();
            let mv = &moves[chooser.below(moves.len() as u32) as usize];
            let effects = state.apply(seat, mv).expect("a legal move");
            for e in &effects {
                check_effect(&state, e, players, seen);
            }
        }
        assert!(matches!(state.status(), GameStatus::Finished { .. }), "the game did not finish");
        seen.finished += 1;
    }

    #[test]
    fn random_games_round_trip_moves_and_convert_views_and_effects() {
        let mut seen = Seen::default();
        play(3, game::Options::default(), 1, &mut seen);
        play(4, game::Options { variant: game::Variant::Dynamic, ..game::Options::default() }, 2, &mut seen);
        play(
            5,
            game::Options { first_seat: Some(Seat(3)), variant: game::Variant::Standard, board: Some(game::Board::embedded()) },
            3,
            &mut seen,
        );
        play(3, game::Options { first_seat: Some(Seat(1)), variant: game::Variant::Dynamic, board: None }, 4, &mut seen);
        assert_eq!(seen.finished, 4);
        assert!(seen.moves > 1_000, "only {} moves checked", seen.moves);
        assert!(seen.hidden_hands > 0 && seen.visible_hands > 0);
        assert!(seen.hidden_cards > 0 && seen.visible_cards > 0);
        assert!(seen.interim > 0, "no game reached the interim scoring");
        for kind in
            ["dealt", "placed", "drew_from_deck", "took_from_display", "turn_started", "game_ended", "cards_removed", "deck_exhausted"]
        {
            assert!(seen.effects.contains(kind), "no `{kind}` effect met");
        }
    }

    #[test]
    fn a_hidden_list_and_an_empty_list_stay_distinct() {
        let setup = Setup { players: 3, options: game::Options::default(), seed: Seed([9; 32]) };
        let (state, _) = game::Game::new(&setup).expect("set-up");
        let mut view = state.view(Viewer::Seat(Seat(0)));
        assert!(view_out(&view).seats[1].hand.is_none());
        view.seats[1].hand = Some(Vec::new());
        view.deck = Some(Vec::new());
        view.interim = Some(Vec::new());
        let out = view_out(&view);
        assert_eq!(out.seats[1].hand, Some(pb::CardList { cards: Vec::new() }));
        assert_eq!(out.deck, Some(pb::CardList { cards: Vec::new() }));
        assert_eq!(out.interim, Some(pb::CountryScoringList { countries: Vec::new() }));
        let dealt = effect_out(&game::Effect::Dealt { seat: Seat(2), cards: None });
        assert_eq!(dealt.kind, Some(pb::effect::Kind::Dealt(pb::Dealt { seat: 2, cards: None })));
    }

    #[test]
    fn every_move_shape_round_trips() {
        use game::{CardKind as K, Country as C};
        let moves = [
            game::Move::Place {
                pieces: vec![
                    game::Placement::abbey(C::France, "cluny", &[K::France]),
                    game::Placement::counsellor(C::Italy, &[K::France, K::France]),
                ],
            },
            game::Move::Place { pieces: Vec::new() },
            game::Move::DrawDeck {},
            game::Move::TakeDisplay { slot: 1 },
            game::Move::Exchange { discard: K::EnglandSwabia, take: game::Source::Deck },
            game::Move::Exchange { discard: K::BavariaBurgundy, take: game::Source::Display0 },
            game::Move::Exchange { discard: K::LotharingiaItaly, take: game::Source::Display1 },
            game::Move::Pass {},
        ];
        for m in moves {
            assert_eq!(move_in(move_out(&m)).map_err(|e| e.to_string()), Ok(m));
        }
    }

    #[test]
    fn options_round_trip_with_the_embedded_board() {
        let board = game::Board::embedded();
        let options = game::Options { first_seat: Some(Seat(2)), variant: game::Variant::Dynamic, board: Some(board.clone()) };
        let out = options_out(&options);
        let b = out.board.as_ref().expect("the board");
        assert_eq!(b.sites.len(), board.sites.len());
        assert_eq!(b.roads.len(), board.roads.len());
        assert_eq!((b.roads[0].a.as_str(), b.roads[0].b.as_str()), (board.roads[0].0[0].as_str(), board.roads[0].0[1].as_str()));
        assert_eq!((b.sites[0].x, b.sites[0].y), (board.sites[0].x, board.sites[0].y));
        assert_eq!(options_in(out).map_err(|e| e.to_string()), Ok(options));
        for o in [game::Options::default(), game::Options { first_seat: Some(Seat(0)), ..game::Options::default() }] {
            assert_eq!(options_in(options_out(&o)).map_err(|e| e.to_string()), Ok(o));
        }
        // Unset fields are the JSON's omitted ones: the defaults.
        assert_eq!(options_in(pb::Options::default()).map_err(|e| e.to_string()), Ok(game::Options::default()));
    }

    fn place(piece: i32, country: i32, paid_with: Vec<i32>) -> pb::Move {
        pb::Move {
            kind: Some(pb::r#move::Kind::Place(pb::Place { pieces: vec![pb::Placement { piece, country, site: None, paid_with }] })),
        }
    }

    #[test]
    fn unspecified_unknown_and_missing_values_are_refused() {
        let abbey = pb::Piece::Abbey as i32;
        let france = pb::Country::France as i32;
        let card = pb::CardKind::France as i32;
        assert_invalid(move_in(pb::Move { kind: None }), "move.kardinal");
        assert_invalid(move_in(place(pb::Piece::Unspecified as i32, france, vec![card])), "move.kardinal.place.pieces[0].piece");
        assert_invalid(move_in(place(abbey, pb::Country::Unspecified as i32, vec![card])), "move.kardinal.place.pieces[0].country");
        assert_invalid(move_in(place(abbey, 99, vec![card])), "move.kardinal.place.pieces[0].country");
        assert_invalid(move_in(place(abbey, france, vec![card, 0])), "move.kardinal.place.pieces[0].paid_with[1]");
        assert_invalid(move_in(place(abbey, france, vec![-1])), "move.kardinal.place.pieces[0].paid_with[0]");
        let exchange = |discard, take| pb::Move { kind: Some(pb::r#move::Kind::Exchange(pb::Exchange { discard, take })) };
        assert_invalid(move_in(exchange(0, pb::Source::Deck as i32)), "move.kardinal.exchange.discard");
        assert_invalid(move_in(exchange(card, 0)), "move.kardinal.exchange.take");
        assert_invalid(move_in(exchange(card, 7)), "move.kardinal.exchange.take");
        let take = pb::Move { kind: Some(pb::r#move::Kind::TakeDisplay(pb::TakeDisplay { slot: 256 })) };
        assert_invalid(move_in(take), "move.kardinal.take_display.slot");

        assert_invalid(options_in(pb::Options { variant: Some(0), ..pb::Options::default() }), "options.kardinal.variant");
        assert_invalid(options_in(pb::Options { first_seat: Some(300), ..pb::Options::default() }), "options.kardinal.first_seat");
        let with_board = |edit: &dyn Fn(&mut pb::Board)| {
            let mut board = board_out(&game::Board::embedded());
            edit(&mut board);
            options_in(pb::Options { board: Some(board), ..pb::Options::default() })
        };
        assert_invalid(with_board(&|b| b.sites[3].country = 0), "options.kardinal.board.sites[3].country");
        assert_invalid(with_board(&|b| b.countries[1].id = 42), "options.kardinal.board.countries[1].id");
        assert_invalid(with_board(&|b| b.card_kinds[2].id = 0), "options.kardinal.board.card_kinds[2].id");
        assert_invalid(with_board(&|b| b.card_kinds[0].countries[1] = 0), "options.kardinal.board.card_kinds[0].countries[1]");
        assert_invalid(with_board(&|b| b.card_kinds[4].count = 1_000), "options.kardinal.board.card_kinds[4].count");
        assert_invalid(with_board(&|b| b.alliances[0].countries.truncate(1)), "options.kardinal.board.alliances[0].countries");
        assert_invalid(with_board(&|b| b.alliances[0].countries.push(france)), "options.kardinal.board.alliances[0].countries");
        assert_invalid(with_board(&|b| b.alliances[1].number = 256), "options.kardinal.board.alliances[1].number");
        assert_invalid(with_board(&|b| b.interim_scoring_order[8] = 0), "options.kardinal.board.interim_scoring_order[8]");
        // A board the engine would refuse still converts faithfully: the engine judges it (KK-3).
        let converted = with_board(&|b| b.roads.push(pb::Road { a: "nowhere".into(), b: String::new() })).expect("converted");
        assert!(converted.board.expect("the board").validate().is_err());
    }
}
