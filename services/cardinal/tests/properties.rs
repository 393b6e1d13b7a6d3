//! Property tests over thousands of random legal games (2, 3 and 4 players).
//!
//! Everything here is checked from the public API only, and the final
//! scores are recomputed from the buildings without the engine's scoring.

use std::collections::{BTreeMap, BTreeSet};

use ludo_cardinal::{Cell, Colour, Effect, Game, Move, Options, Orientation, Phase, Shape, View};
use ludo_engine::testkit::{Step, random_playout, test_seed};
use ludo_engine::{DeckRng, Engine, Seat, Setup, Status, Viewer};

/// A game has at most 24 buildings, two moves each: this bound is never reached.
const MAX_MOVES: usize = 200;
const GAMES_PER_PLAYER_COUNT: u64 = 1000;

fn setup(players: usize, n: u64) -> Setup<Options> {
    Setup { players, options: Options::default(), seed: test_seed(n) }
}

fn cathedral() -> [(Cell, Shape); 2] {
    [(Cell::new(0, 0), Shape::House), (Cell::new(1, 0), Shape::Tower)]
}

fn touches(a: Cell, b: Cell) -> bool {
    (a.x - b.x).abs() + (a.y - b.y).abs() == 1
}

/// The colours a seat owns, written out from CA-5/6/7 independently of the engine.
fn own_colours(players: usize, seat: usize) -> Vec<u8> {
    if players == 2 { vec![seat as u8, seat as u8 + 2] } else { vec![seat as u8] }
}

fn may_build(players: usize, seat: usize, colour: u8) -> bool {
    own_colours(players, seat).contains(&colour) || (players == 3 && colour == 3)
}

/// Invariants every reachable state keeps.
fn check_state(game: &Game) {
    let v = game.view(Viewer::Spectator);
    let players = usize::from(v.players);
    // Markers are conserved (CA-2).
    for c in 0..4 {
        let taken: u32 = v.seats.iter().map(|s| s.markers_taken[c].count).sum();
        assert_eq!(v.supply[c].count + taken, 12, "markers of colour {c} not conserved");
        if players == 3 && c == 3 {
            assert_eq!(taken, 0, "fourth-colour markers left the supply (CA-6)");
        }
    }
    // Buildings are conserved (CA-1).
    for left in &v.buildings_left {
        for (shape, n_left) in [(Shape::House, left.houses), (Shape::Tower, left.towers), (Shape::Square, left.squares)] {
            let built = v.buildings.iter().filter(|b| b.colour == left.colour && b.shape == shape).count() as u32;
            assert_eq!(built + n_left, 2, "{shape:?} of {:?} not conserved", left.colour);
        }
    }
    // No two pieces on one cell; each cell knows its shape and colour.
    let mut board: BTreeMap<Cell, (usize, Shape, Option<Colour>)> = BTreeMap::new();
    for (cell, shape) in cathedral() {
        board.insert(cell, (usize::MAX, shape, None));
    }
    for (i, b) in v.buildings.iter().enumerate() {
        assert_eq!(b.cells.len(), b.shape.size());
        if b.cells.len() == 2 {
            assert!(touches(b.cells[0], b.cells[1]));
        }
        assert!(may_build(players, b.seat.index(), b.colour.0), "{b:?} built by a seat not playing its colour");
        for &cell in &b.cells {
            assert!(board.insert(cell, (i, b.shape, Some(b.colour))).is_none(), "two pieces on {cell:?}");
        }
    }
    // The cardinal stands on a free building zone (CA-4, CA-10).
    if let Some(c) = v.cardinal {
        assert!(!board.contains_key(&c), "the cardinal is under a building");
        assert!(board.keys().any(|&o| touches(o, c)), "the cardinal is off the town");
    }
    // Every building obeys the laws against all its neighbours (CA-12 … CA-16), and
    // laws 6 and 7 hold between consecutive buildings (CA-17, CA-18).
    for (i, b) in v.buildings.iter().enumerate() {
        let neighbours: Vec<(usize, Shape, Option<Colour>)> = b
            .cells
            .iter()
            .flat_map(|&c| board.iter().filter(move |(o, _)| touches(**o, c)).map(|(_, p)| *p))
            .filter(|(j, _, _)| *j != i)
            .collect();
        assert!(neighbours.iter().any(|(j, _, _)| *j == usize::MAX || *j < i), "{b:?} built touching nothing");
        for (_, shape, colour) in &neighbours {
            assert_ne!(*shape, b.shape, "law 4 broken by {b:?}");
            assert_ne!(*colour, Some(b.colour), "law 5 broken by {b:?}");
        }
        if b.shape != Shape::House {
            assert!(neighbours.iter().any(|(_, s, _)| *s == Shape::House), "laws 2/3 broken by {b:?}");
        }
        if i > 0 {
            let prev = &v.buildings[i - 1];
            assert_ne!(prev.shape, b.shape, "law 6 broken");
            assert_ne!(prev.colour, b.colour, "law 7 broken");
        }
    }
    // Phase, seat to act and status agree.
    match game.status() {
        Status::InProgress { to_move } => {
            assert_eq!(to_move.len(), 1);
            assert_eq!(v.to_act, Some(to_move[0]));
            assert_ne!(v.phase, Phase::Finished);
            assert!(v.scoring.provisional);
        }
        Status::Finished { result } => {
            assert_eq!((v.phase, v.to_act), (Phase::Finished, None));
            assert!(!v.scoring.provisional);
            assert_eq!(result.winners, v.scoring.winners);
        }
    }
}

/// Checks the effects of one step against the states before and after it.
fn check_step(before: &View, after: &View, step: &Step<Game>) {
    match (&step.mv, step.effects.first()) {
        (Move::Build { shape, colour, .. }, Some(Effect::Built { seat, cells, .. })) => {
            assert_eq!(*seat, step.seat);
            let last = after.buildings.last().expect("a building");
            assert_eq!((&last.cells, last.shape, last.colour), (cells, *shape, *colour));
            assert_eq!(after.buildings.len(), before.buildings.len() + 1);
            assert_eq!(after.buildings[..before.buildings.len()], before.buildings[..], "CA-19: a building moved");
            assert_eq!(after.phase, Phase::Cardinal);
            assert_eq!(step.effects.len(), 1);
        }
        (Move::MoveCardinal { .. } | Move::KeepCardinal, Some(Effect::CardinalMoved { .. } | Effect::CardinalKept { .. })) => {
            assert_eq!(after.buildings, before.buildings);
            // The passes name exactly the seats between the builder and the next seat to act.
            let passed: Vec<Seat> = step.effects[1..]
                .iter()
                .filter_map(|e| match e {
                    Effect::ForcedPass { seat } => Some(*seat),
                    _ => None,
                })
                .collect();
            let players = usize::from(after.players);
            match after.to_act {
                Some(next) => {
                    let mut expected = Vec::new();
                    let mut s = step.seat.next(players);
                    while s != next {
                        expected.push(s);
                        s = s.next(players);
                    }
                    assert_eq!(passed, expected);
                    assert_eq!(after.phase, Phase::Build);
                }
                None => {
                    assert!(passed.is_empty());
                    assert!(matches!(step.effects.last(), Some(Effect::GameEnded { .. })));
                }
            }
        }
        other => panic!("move and effects disagree: {other:?}"),
    }
}

/// Random moves near the town, absurd ones included: each is accepted only if
/// listed, and a refusal leaves the state untouched.
fn probe_random_moves(game: &Game, rng: &mut DeckRng, players: usize) {
    let v = game.view(Viewer::Spectator);
    let (mut lo, mut hi) = (Cell::new(-1, -1), Cell::new(2, 1));
    for c in v.buildings.iter().flat_map(|b| b.cells.iter()) {
        lo = Cell::new(lo.x.min(c.x - 1), lo.y.min(c.y - 1));
        hi = Cell::new(hi.x.max(c.x + 1), hi.y.max(c.y + 1));
    }
    let coord = |rng: &mut DeckRng, lo: i32, hi: i32| match rng.below(20) {
        0 => i32::MAX,
        1 => i32::MIN,
        _ => lo - 1 + rng.below((hi - lo + 3) as u32) as i32,
    };
    let to_act = v.to_act;
    for _ in 0..4 {
        let seat = match (to_act, rng.below(8)) {
            (Some(s), 0..=5) => s,
            _ => Seat(rng.below(players as u32 + 1) as u8),
        };
        let x = coord(rng, lo.x, hi.x);
        let y = coord(rng, lo.y, hi.y);
        let mv = match rng.below(10) {
            0 => Move::KeepCardinal,
            1 | 2 => Move::MoveCardinal { x, y },
            _ => Move::Build {
                shape: Shape::ALL[rng.below(3) as usize],
                colour: Colour(rng.below(5) as u8),
                x,
                y,
                orientation: [None, Some(Orientation::Horizontal), Some(Orientation::Vertical)][rng.below(3) as usize],
                bonus_colour: [None, None, Some(Colour(rng.below(5) as u8))][rng.below(3) as usize],
            },
        };
        let listed = game.legal_moves(seat).contains(&mv);
        let mut probe = game.clone();
        match probe.apply(seat, &mv) {
            Ok(_) => assert!(listed, "{mv:?} by {seat} accepted but not listed"),
            Err(err) => {
                assert!(!listed, "{mv:?} by {seat} listed but refused: {err}");
                assert_eq!(&probe, game, "refusing {mv:?} changed the state");
            }
        }
    }
}

/// The final scoring recomputed from the buildings and the first player's
/// bonus, following CA-9, CA-11 and CA-22 … CA-24 literally.
fn recompute_scores(players: usize, view: &View, bonus: (Seat, Colour)) -> (Vec<i32>, Vec<Seat>) {
    let counts_colour = |c: usize| !(players == 3 && c == 3);
    let mut supply = [12u32; 4];
    let mut taken = vec![[0u32; 4]; players];
    supply[bonus.1.index()] -= 1;
    taken[bonus.0.index()][bonus.1.index()] += 1;
    for (i, b) in view.buildings.iter().enumerate() {
        let mut edges = [0u32; 4];
        for earlier in &view.buildings[..i] {
            for &a in &b.cells {
                for &e in &earlier.cells {
                    if touches(a, e) {
                        edges[earlier.colour.index()] += 1;
                    }
                }
            }
        }
        for c in (0..4).filter(|&c| counts_colour(c)) {
            let n = edges[c].min(supply[c]);
            supply[c] -= n;
            taken[b.seat.index()][c] += n;
        }
    }
    let mut rows = Vec::new();
    for (seat, seat_taken) in taken.iter().enumerate() {
        let own = own_colours(players, seat);
        let mut counts = *seat_taken;
        for &c in &own {
            counts[usize::from(c)] += supply[usize::from(c)];
        }
        let total = counts.iter().sum::<u32>() + counts.iter().max().unwrap();
        let contacts: usize = view
            .buildings
            .iter()
            .filter(|b| own.contains(&b.colour.0))
            .flat_map(|b| b.cells.iter())
            .map(|&c| cathedral().iter().filter(|(k, _)| touches(*k, c)).count())
            .sum();
        rows.push((total as i32, contacts));
    }
    let best = rows.iter().max().copied();
    let winners = (0..players).filter(|&s| Some(rows[s]) == best).map(|s| Seat(s as u8)).collect();
    (rows.iter().map(|r| r.0).collect(), winners)
}

fn play_many(players: usize) {
    let mut lengths = BTreeSet::new();
    let mut passes = 0;
    for n in 0..GAMES_PER_PLAYER_COUNT {
        let mut probes = DeckRng::new(&test_seed(n ^ 0xABCD));
        let mut before: Option<View> = None;
        let playout = random_playout::<Game>(&setup(players, n), n, MAX_MOVES, |game, step| {
            check_state(game);
            let after = game.view(Viewer::Spectator);
            if let (Some(step), Some(before)) = (step, &before) {
                check_step(before, &after, step);
            }
            probe_random_moves(game, &mut probes, players);
            before = Some(after);
        });
        let Status::Finished { result } = playout.state.status() else {
            panic!("game {n} at {players} players not finished after {MAX_MOVES} moves");
        };
        let view = playout.state.view(Viewer::Spectator);
        let bonus = match &playout.steps[0].effects[0] {
            Effect::Built { seat, bonus_colour: Some(c), .. } => (*seat, *c),
            other => panic!("first effect {other:?}"),
        };
        let (scores, winners) = recompute_scores(players, &view, bonus);
        assert_eq!(result.scores, scores, "game {n}: scores");
        assert_eq!(result.winners, winners, "game {n}: winners");
        match playout.steps.last().and_then(|s| s.effects.last()) {
            Some(Effect::GameEnded { scoring }) => assert_eq!(*scoring, view.scoring),
            other => panic!("game {n} did not end with game_ended: {other:?}"),
        }
        lengths.insert(view.buildings.len());
        passes += playout.steps.iter().flat_map(|s| &s.effects).filter(|e| matches!(e, Effect::ForcedPass { .. })).count();
    }
    // The random games should cover short and long games, and forced passes.
    assert!(lengths.len() > 5, "{lengths:?}");
    assert!(passes > 0);
}

#[test]
fn random_games_two_players() {
    play_many(2);
}

#[test]
fn random_games_three_players() {
    play_many(3);
}

#[test]
fn random_games_four_players() {
    play_many(4);
}

/// The legal-move list equals, as a set and without duplicates, every move
/// of a brute-force search box around the town that `apply` accepts.
#[test]
fn legal_moves_equal_brute_force() {
    for n in 0..12u64 {
        let players = 2 + (n % 3) as usize;
        random_playout::<Game>(&setup(players, 1000 + n), n, MAX_MOVES, |game, _| {
            let Status::InProgress { to_move } = game.status() else {
                return;
            };
            let seat = to_move[0];
            let v = game.view(Viewer::Spectator);
            let listed = game.legal_moves(seat);
            let listed_set: BTreeSet<Move> = listed.iter().cloned().collect();
            assert_eq!(listed_set.len(), listed.len(), "duplicate legal moves");
            let (mut lo, mut hi) = ((-2, -2), (3, 2));
            for c in v.buildings.iter().flat_map(|b| b.cells.iter()) {
                lo = (lo.0.min(c.x - 2), lo.1.min(c.y - 2));
                hi = (hi.0.max(c.x + 2), hi.1.max(c.y + 2));
            }
            let mut candidates = vec![Move::KeepCardinal];
            let bonuses: Vec<Option<Colour>> =
                if v.buildings.is_empty() { (0..5).map(|c| Some(Colour(c))).collect() } else { vec![None, Some(Colour(0))] };
            for x in lo.0..=hi.0 {
                for y in lo.1..=hi.1 {
                    candidates.push(Move::MoveCardinal { x, y });
                    for colour in (0..4).map(Colour) {
                        for &bonus_colour in &bonuses {
                            for (shape, orientation) in [
                                (Shape::House, None),
                                (Shape::Tower, None),
                                (Shape::Square, Some(Orientation::Horizontal)),
                                (Shape::Square, Some(Orientation::Vertical)),
                            ] {
                                candidates.push(Move::Build { shape, colour, x, y, orientation, bonus_colour });
                            }
                        }
                    }
                }
            }
            // A refusal leaves the state unchanged (checked elsewhere): re-clone only after an acceptance.
            let mut accepted = BTreeSet::new();
            let mut probe = game.clone();
            for m in candidates {
                if probe.apply(seat, &m).is_ok() {
                    accepted.insert(m);
                    probe = game.clone();
                }
            }
            assert_eq!(accepted, listed_set);
        });
    }
}

/// Two runs of the same game give the same moves, effects and state.
#[test]
fn playouts_are_deterministic() {
    for players in 2..=4 {
        let a = random_playout::<Game>(&setup(players, 77), 5, MAX_MOVES, |_, _| {});
        let b = random_playout::<Game>(&setup(players, 77), 5, MAX_MOVES, |_, _| {});
        assert_eq!(a.state, b.state);
        let moves = |p: &ludo_engine::testkit::Playout<Game>| p.steps.iter().map(|s| (s.seat, s.mv.clone())).collect::<Vec<_>>();
        assert_eq!(moves(&a), moves(&b));
    }
}
