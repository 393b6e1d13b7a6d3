//! Property tests over thousands of random legal games (testkit playouts):
//! no panic, the contract holds, cards and pieces are conserved, hidden
//! information stays hidden, turns start with full hands and display until
//! the last round, which gives each remaining seat one turn, the game always
//! ends, and the final scores equal an independent recomputation (`common`).

mod common;

use std::collections::HashSet;

use ludo_engine::testkit::{Step, random_playout, test_seed};
use ludo_engine::{Engine, Seat, Setup, Status, Viewer};
use ludo_kardinal::{
    ABBEYS_PER_SEAT, Board, COUNSELLORS_PER_SEAT, CardKind, Effect, EndReason, Game, Move, Options, TurnStep, Variant, View,
};

/// Far more moves than any game takes: the playout must finish before.
const MAX_MOVES: usize = 2_000;

fn setup(players: usize, seed: u64, variant: Variant) -> Setup<Options> {
    Setup { players, options: Options { variant, ..Options::default() }, seed: test_seed(seed) }
}

fn counts(cards: &[CardKind]) -> [u32; 5] {
    let mut c = [0; 5];
    for k in cards {
        c[k.index()] += 1;
    }
    c
}

/// Cards: hands + deck + display + discard + removed = the board's deck.
fn check_cards(board: &Board, all: &View) {
    let mut total = [0u32; 5];
    let mut add = |cards: &[CardKind]| {
        for (t, n) in total.iter_mut().zip(counts(cards)) {
            *t += n;
        }
    };
    for seat in &all.seats {
        let hand = seat.hand.as_ref().expect("an omniscient view shows every hand");
        assert_eq!(hand.len(), usize::from(seat.hand_size));
        assert!(hand.len() <= 3);
        add(hand);
    }
    let deck = all.deck.as_ref().expect("an omniscient view shows the deck");
    assert_eq!(deck.len() as u32, all.deck_size);
    add(deck);
    add(&all.display.iter().filter_map(|d| d.card).collect::<Vec<_>>());
    add(&all.discard);
    add(&all.removed);
    let mut expected = [0u32; 5];
    for k in &board.card_kinds {
        expected[k.id.index()] = u32::from(k.count);
    }
    assert_eq!(total, expected, "cards are not conserved");
}

/// Pieces: on the board + in the supply = 20 abbeys and 8 counsellors per seat.
fn check_pieces(view: &View) {
    for seat in &view.seats {
        let on_board = view.abbeys.iter().filter(|a| a.seat == seat.seat).count() as u32;
        assert_eq!(on_board + u32::from(seat.abbeys_left), u32::from(ABBEYS_PER_SEAT));
        let on_seals: u32 = view.seals.iter().map(|s| u32::from(s.counsellors[seat.seat.index()])).sum();
        assert_eq!(on_seals + u32::from(seat.counsellors_left), u32::from(COUNSELLORS_PER_SEAT));
    }
    for seal in &view.seals {
        let on: u8 = seal.counsellors.iter().sum();
        assert!(on <= seal.limit, "KK-15 broken on the seal of {}", seal.country);
    }
}

/// No view of a seat shows another hand or the deck; a spectator sees no hand.
fn check_hidden(game: &Game, players: usize, step: Option<&Step<Game>>, setup_effects: Option<&[Effect]>) {
    if game.status().is_finished() {
        for viewer in [Viewer::Spectator, Viewer::Seat(Seat(0))] {
            let v = game.view(viewer);
            assert!(v.seats.iter().all(|s| s.hand.is_some()) && v.deck.is_some(), "a finished game hides nothing");
        }
        return;
    }
    for me in Seat::all(players) {
        let v = game.view(Viewer::Seat(me));
        assert_eq!(v.viewer, Some(me));
        assert!(v.deck.is_none(), "{me} sees the deck order");
        for s in &v.seats {
            assert_eq!(s.hand.is_some(), s.seat == me, "{me} sees the hand of {}", s.seat);
        }
        let effects = step.map(|s| s.effects.as_slice()).or(setup_effects).unwrap_or_default();
        for e in effects {
            match game.redact(e, Viewer::Seat(me)) {
                Effect::Dealt { seat, cards } => assert_eq!(cards.is_some(), seat == me),
                Effect::DrewFromDeck { seat, card } => assert_eq!(card.is_some(), seat == me),
                _ => {}
            }
        }
    }
    let v = game.view(Viewer::Spectator);
    assert!(v.seats.iter().all(|s| s.hand.is_none()) && v.deck.is_none(), "a spectator sees hidden cards");
}

/// The interim scoring equals a recomputation from the board at that moment.
fn check_interim(game: &Game, step: &Step<Game>, interim: &mut Option<Vec<i32>>) {
    for e in &step.effects {
        if let Effect::InterimScoring { countries, scores } = e {
            let all = game.view(Viewer::Omniscient);
            let mut points = vec![0; usize::from(all.players)];
            for c in countries {
                assert_eq!(c.abbeys, common::abbeys_in(&all, c.country));
                let expected = common::abbey_points(&c.abbeys);
                assert_eq!(c.points, expected, "interim abbeys of {}", c.country);
                for (p, e) in points.iter_mut().zip(expected) {
                    *p += e;
                }
            }
            assert_eq!(countries.len(), 9);
            assert_eq!(&points, scores);
            assert!(interim.replace(points).is_none(), "two interim scorings");
        }
    }
}

/// The engine's chains are real: own abbeys, consecutive along roads, disjoint, ≥ 4.
fn check_chain_shapes(board: &Board, view: &View) {
    let scoring = view.final_scoring.as_ref().unwrap();
    for sc in &scoring.chains {
        let mut used = HashSet::new();
        let mut total = 0;
        for chain in &sc.chains {
            assert!(chain.sites.len() >= 4);
            total += chain.sites.len() as i32;
            for site in &chain.sites {
                assert!(view.abbeys.iter().any(|a| &a.site == site && a.seat == sc.seat));
                assert!(used.insert(site.clone()), "abbey {site} in two chains");
            }
            for w in chain.sites.windows(2) {
                assert!(
                    board.roads.iter().any(|r| (r.0[0] == w[0] && r.0[1] == w[1]) || (r.0[0] == w[1] && r.0[1] == w[0])),
                    "no road {} – {}",
                    w[0],
                    w[1]
                );
            }
        }
        assert_eq!(total, sc.points);
    }
}

/// Final scores and winners equal the independent recomputation.
fn check_final(board: &Board, game: &Game, interim: Option<&[i32]>) {
    let Status::Finished { result } = game.status() else { panic!("the game did not end") };
    let view = game.view(Viewer::Spectator);
    let n = usize::from(view.players);
    let zero = vec![0; n];
    let interim = interim.unwrap_or(&zero);
    let r = common::reference(board, &view, interim);
    let scoring = view.final_scoring.as_ref().expect("a finished view has the final scoring");
    for t in &scoring.totals {
        let s = t.seat.index();
        assert_eq!(t.interim, interim[s], "interim of {}", t.seat);
        assert_eq!(t.abbeys, r.abbeys[s], "abbeys of {}", t.seat);
        assert_eq!(t.alliances, r.alliances[s], "alliances of {}", t.seat);
        assert_eq!(t.chains, r.chains[s], "chains of {}", t.seat);
        assert_eq!(t.total, r.totals[s]);
    }
    assert_eq!(result.scores, r.totals);
    assert_eq!(result.winners, r.winners);
    assert_eq!(scoring.winners, r.winners);
    check_chain_shapes(board, &view);
}

/// The turn structure seen along one game (KK-9, KK-18..KK-20).
#[derive(Default)]
struct TurnRecord {
    /// The seat whose move emptied the deck the second time.
    exhauster: Option<Seat>,
    /// Seats whose turn started after that.
    turns_after: Vec<Seat>,
    /// The seat of the game's last move.
    last_mover: Option<Seat>,
}

/// Before the last round every turn starts with full hands, a full display
/// and a deck to draw from (KK-9, KK-10, KK-18, KK-19); records the turns
/// that follow the second exhaustion.
fn check_turn_structure(game: &Game, step: Option<&Step<Game>>, record: &mut TurnRecord) {
    if let Some(step) = step {
        record.last_mover = Some(step.seat);
        for e in &step.effects {
            match e {
                Effect::DeckExhausted { count: 2 } => record.exhauster = Some(step.seat),
                Effect::TurnStarted { seat } if record.exhauster.is_some() => record.turns_after.push(*seat),
                _ => {}
            }
        }
    }
    let all = game.view(Viewer::Omniscient);
    if let Some(turn) = &all.turn {
        assert_eq!(all.last_round, record.exhauster.is_some());
        if turn.step == TurnStep::PlaceOrExchange {
            assert!(all.seats.iter().all(|s| s.hand_size == 3), "a turn starts with a short hand");
            assert!(all.display.iter().all(|d| d.card.is_some()), "a turn starts with a gap in the display");
            assert!(all.deck_size > 0, "a turn starts with an empty deck before the last round");
        }
    }
}

/// KK-20: after the second exhaustion each seat from the exhauster's left up
/// to the first seat's right plays once; the game ends before the first seat.
fn check_last_round(game: &Game, players: usize, record: &TurnRecord) {
    let view = game.view(Viewer::Spectator);
    if view.end_reason != Some(EndReason::LastRoundOver) {
        return;
    }
    let first = view.first_seat;
    let exhauster = record.exhauster.expect("a last round needs a second exhaustion");
    let mut expected = Vec::new();
    let mut seat = exhauster.next(players);
    while seat != first {
        expected.push(seat);
        seat = seat.next(players);
    }
    assert_eq!(record.turns_after, expected, "turns after the second exhaustion (first seat {first})");
    assert_eq!(record.last_mover.map(|s| s.next(players)), Some(first), "the last move is the first seat's right");
}

/// What a batch of games looked like.
struct Stats {
    games: u64,
    moves: usize,
    /// Start-of-turn positions (place / exchange / pass) and their legal moves in all.
    turns: usize,
    turn_moves: usize,
    widest: usize,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} games, {:.0} moves/game, {:.0} legal moves at a turn's start on average, {} at most",
            self.games,
            self.moves as f64 / self.games as f64,
            self.turn_moves as f64 / self.turns as f64,
            self.widest
        )
    }
}

/// Plays `games` random games and checks everything.
fn run(players: usize, variant: Variant, games: u64, seed_base: u64) -> Stats {
    let board = Board::embedded();
    let mut total_moves = 0;
    let mut widest = 0;
    let (mut turns, mut turn_moves) = (0, 0);
    for g in 0..games {
        let seed = seed_base + g;
        let setup = setup(players, seed, variant);
        let mut interim: Option<Vec<i32>> = None;
        let mut record = TurnRecord::default();
        // The set-up effects, redacted against the fresh game: each seat sees only its deal.
        let (fresh, setup_effects) = Game::new(&setup).unwrap();
        check_hidden(&fresh, players, None, Some(&setup_effects));
        let playout = random_playout::<Game>(&setup, seed ^ 0xA11CE, MAX_MOVES, |game, step| {
            let to_move = game.status().to_move().to_vec();
            for seat in to_move {
                let moves = game.legal_moves(seat);
                widest = widest.max(moves.len());
                if !matches!(moves[0], Move::DrawDeck {} | Move::TakeDisplay { .. }) {
                    turns += 1;
                    turn_moves += moves.len();
                }
                let distinct: HashSet<&Move> = moves.iter().collect();
                assert_eq!(distinct.len(), moves.len(), "duplicate legal moves");
            }
            let all = game.view(Viewer::Omniscient);
            check_cards(&board, &all);
            check_pieces(&all);
            check_hidden(game, players, step, None);
            check_turn_structure(game, step, &mut record);
            if let Some(step) = step {
                check_interim(game, step, &mut interim);
            }
        });
        for seat in Seat::all(players) {
            for e in &playout.setup_effects {
                match playout.state.redact(e, Viewer::Seat(seat)) {
                    // Finished: redaction reveals everything.
                    Effect::Dealt { cards, .. } => assert!(cards.is_some()),
                    Effect::DrewFromDeck { card, .. } => assert!(card.is_some()),
                    _ => {}
                }
            }
        }
        assert!(playout.state.status().is_finished(), "game {seed} did not end in {MAX_MOVES} moves");
        check_final(&board, &playout.state, interim.as_deref());
        check_last_round(&playout.state, players, &record);
        total_moves += playout.steps.len();
    }
    Stats { games, moves: total_moves, turns, turn_moves, widest }
}

#[test]
fn random_games_3_players() {
    eprintln!("3 players: {}", run(3, Variant::Standard, 1_000, 3_000));
}

#[test]
fn random_games_4_players() {
    eprintln!("4 players: {}", run(4, Variant::Standard, 1_000, 4_000));
}

#[test]
fn random_games_5_players() {
    eprintln!("5 players: {}", run(5, Variant::Standard, 1_000, 5_000));
}

#[test]
fn random_games_dynamic_variant() {
    for players in 3..=5 {
        eprintln!("dynamic, {players} players: {}", run(players, Variant::Dynamic, 100, 9_000 + players as u64 * 1_000));
    }
}
