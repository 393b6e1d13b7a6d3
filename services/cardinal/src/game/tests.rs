//! Rule tests: one or more per rule id, named after what they prove.

use ludo_engine::{DeckRng, Engine, MoveError, Seat, Seed, Setup, SetupError, Status, Viewer};

use super::{Game, Turn};
use crate::cell::{Cell, Orientation};
use crate::effect::Effect;
use crate::markers::MarkerCount;
use crate::moves::Move;
use crate::options::Options;
use crate::pieces::{Colour, Footprint, Shape};
use crate::view::Phase;

const H: Orientation = Orientation::Horizontal;
const V: Orientation = Orientation::Vertical;

fn game(players: usize, first: u8) -> Game {
    let setup = Setup { players, options: Options { first_seat: Some(Seat(first)) }, seed: Seed([0; 32]) };
    Game::new(&setup).expect("set-up").0
}

#[track_caller]
fn play(g: &mut Game, seat: u8, mv: Move) -> Vec<Effect> {
    match g.apply(Seat(seat), &mv) {
        Ok(effects) => effects,
        Err(err) => panic!("{mv:?} by seat {seat} refused: {err}"),
    }
}

/// Asserts that the move is refused citing `rule`, that the state is
/// unchanged, and that the move is not among the legal ones.
#[track_caller]
fn refused(g: &Game, seat: u8, mv: Move, rule: &str) {
    let mut probe = g.clone();
    match probe.apply(Seat(seat), &mv) {
        Err(MoveError::Rule { rule: got, reason }) => {
            assert_eq!(got, rule, "{mv:?} refused for {reason}")
        }
        other => panic!("{mv:?}: expected a {rule} refusal, got {other:?}"),
    }
    assert_eq!(&probe, g, "a refused move changed the state");
    assert!(!g.legal_moves(Seat(seat)).contains(&mv), "{mv:?} is refused but listed");
}

/// Puts a building in the town by hand, skipping the laws, to arrange a position.
fn put(g: &mut Game, seat: u8, shape: Shape, colour: u8, at: (i32, i32), orientation: Option<Orientation>) {
    let cell = Cell::new(at.0, at.1);
    let footprint = match orientation {
        Some(o) => Footprint::square(cell, o).unwrap(),
        None => Footprint::single(cell),
    };
    g.town.add(Seat(seat), shape, Colour(colour), &footprint);
    g.stock.take(Colour(colour), shape);
    g.last_built = Some((shape, Colour(colour)));
}

fn built_markers(effects: &[Effect]) -> Vec<MarkerCount> {
    match &effects[0] {
        Effect::Built { markers_taken, .. } => markers_taken.clone(),
        other => panic!("expected a build, got {other:?}"),
    }
}

fn mc(colour: u8, count: u32) -> MarkerCount {
    MarkerCount { colour: Colour(colour), count }
}

// ---- set-up ----

#[test]
fn setup_refuses_player_counts_outside_2_to_4() {
    for players in [0, 1, 5] {
        let setup = Setup { players, options: Options::default(), seed: Seed([1; 32]) };
        assert_eq!(Game::new(&setup).unwrap_err(), SetupError::PlayerCount { min: 2, max: 4, got: players });
    }
}

#[test]
fn setup_refuses_a_first_seat_not_at_the_table() {
    let setup = Setup { players: 3, options: Options { first_seat: Some(Seat(3)) }, seed: Seed([1; 32]) };
    assert!(matches!(Game::new(&setup), Err(SetupError::InvalidOption { field: "first_seat", .. })));
}

#[test]
fn default_first_seat_is_the_first_draw_of_the_seed() {
    for byte in 0..20u8 {
        let seed = Seed([byte; 32]);
        let expected = Seat(DeckRng::new(&seed).below(4) as u8);
        let (g, effects) = Game::new(&Setup { players: 4, options: Options::default(), seed }).unwrap();
        assert_eq!(effects, vec![Effect::GameStarted { first_seat: expected }]);
        assert_eq!(g.status(), Status::InProgress { to_move: vec![expected] });
    }
}

// ---- CA-1, CA-2, CA-3, CA-4: components ----

/// CA-1: each colour starts with 2 houses, 2 towers, 2 squares.
#[test]
fn ca1_each_colour_starts_with_two_of_each_shape() {
    let v = game(4, 0).view(Viewer::Spectator);
    assert_eq!(v.buildings_left.len(), 4);
    assert!(v.buildings_left.iter().all(|b| (b.houses, b.towers, b.squares) == (2, 2, 2)));
}

/// CA-1: a colour cannot build a third building of one shape.
#[test]
fn ca1_no_third_house_of_a_colour() {
    let mut g = game(4, 0);
    g.stock.take(Colour(0), Shape::House);
    g.stock.take(Colour(0), Shape::House);
    refused(&g, 0, Move::house(0, 2, 0).with_bonus(1), "CA-1");
    assert!(g.legal_moves(Seat(0)).iter().all(|m| !matches!(m, Move::Build { shape: Shape::House, .. })));
}

/// CA-1: colours are 0 to 3; only squares have (and need) an orientation.
#[test]
fn ca1_colours_and_shapes_are_checked() {
    let g = game(4, 0);
    refused(&g, 0, Move::house(4, 2, 0).with_bonus(1), "CA-1");
    refused(&g, 0, Move::house(255, 2, 0).with_bonus(1), "CA-1");
    let no_orientation =
        Move::Build { shape: Shape::Square, colour: Colour(0), x: 0, y: 1, orientation: None, bonus_colour: Some(Colour(1)) };
    refused(&g, 0, no_orientation, "CA-1");
    let oriented_house =
        Move::Build { shape: Shape::House, colour: Colour(0), x: 2, y: 0, orientation: Some(H), bonus_colour: Some(Colour(1)) };
    refused(&g, 0, oriented_house, "CA-1");
}

/// CA-2: the supply holds 12 markers of each colour, nobody has any yet.
#[test]
fn ca2_supply_starts_with_twelve_per_colour() {
    let v = game(3, 1).view(Viewer::Seat(Seat(0)));
    assert_eq!(v.supply, (0..4).map(|c| mc(c, 12)).collect::<Vec<_>>());
    assert!(v.seats.iter().all(|s| s.markers_taken.iter().all(|m| m.count == 0)));
}

/// CA-3: the cathedral stands at (0,0)+(1,0) and is surrounded by 6 building zones.
#[test]
fn ca3_cathedral_position_and_its_six_zones() {
    let g = game(4, 0);
    let v = g.view(Viewer::Spectator);
    assert_eq!((v.cathedral.nave, v.cathedral.tower), (Cell::new(0, 0), Cell::new(1, 0)));
    let mut cells: Vec<(i32, i32)> = g
        .legal_moves(Seat(0))
        .into_iter()
        .filter_map(|m| match m {
            Move::Build { x, y, orientation: None, .. } => Some((x, y)),
            _ => None,
        })
        .collect();
    cells.sort_unstable();
    cells.dedup();
    // Houses may go only by the cathedral tower, towers only by the nave: together, all six zones.
    assert_eq!(cells, vec![(-1, 0), (0, -1), (0, 1), (1, -1), (1, 1), (2, 0)]);
}

/// CA-4: the cardinal occupies one free cell, shown in the view, and blocks it.
#[test]
fn ca4_cardinal_occupies_one_free_cell() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(2));
    assert_eq!(g.view(Viewer::Spectator).cardinal, None);
    play(&mut g, 0, Move::cardinal_to(2, 0));
    assert_eq!(g.view(Viewer::Spectator).cardinal, Some(Cell::new(2, 0)));
    refused(&g, 1, Move::house(1, 2, 0), "CA-12");
}

// ---- CA-5, CA-6, CA-7: seats and colours ----

/// CA-5: at four players a seat builds only its own colour.
#[test]
fn ca5_four_players_build_only_their_colour() {
    let g = game(4, 1);
    refused(&g, 1, Move::house(0, 2, 0).with_bonus(1), "CA-5");
    refused(&g, 1, Move::house(3, 2, 0).with_bonus(1), "CA-5");
    assert!(g.legal_moves(Seat(1)).iter().all(|m| matches!(m, Move::Build { colour: Colour(1), .. })));
}

/// CA-6: at three players anyone builds the fourth colour, and it scores for nobody.
#[test]
fn ca6_three_players_build_their_colour_or_the_fourth() {
    let mut g = game(3, 0);
    refused(&g, 0, Move::house(1, 2, 0).with_bonus(1), "CA-6");
    play(&mut g, 0, Move::house(3, 2, 0).with_bonus(0));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    let colours: std::collections::BTreeSet<Colour> = g
        .legal_moves(Seat(1))
        .iter()
        .map(|m| match m {
            Move::Build { colour, .. } => *colour,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(colours.into_iter().collect::<Vec<_>>(), vec![Colour(1)], "colour 3 was just built (law 7)");
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.fourth_colour, Some(Colour(3)));
    assert!(v.scoring.seats.iter().all(|s| s.markers[3].count == 0));
}

/// CA-6: a seat whose own buildings are used up goes on with the fourth colour.
#[test]
fn ca6_fourth_colour_after_own_buildings_are_used_up() {
    let mut g = game(3, 1);
    for shape in Shape::ALL {
        g.stock.take(Colour(1), shape);
        g.stock.take(Colour(1), shape);
    }
    assert!(g.can_build(Seat(1)));
    assert!(g.legal_moves(Seat(1)).iter().all(|m| matches!(m, Move::Build { colour: Colour(3), .. })));
}

/// CA-7: at two players seat 0 plays colours 0 and 2, seat 1 colours 1 and 3.
#[test]
fn ca7_two_players_play_two_colours_each() {
    let mut g = game(2, 0);
    refused(&g, 0, Move::house(1, 2, 0).with_bonus(1), "CA-7");
    play(&mut g, 0, Move::house(2, 2, 0).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    refused(&g, 1, Move::tower(0, 0, 1), "CA-7");
    play(&mut g, 1, Move::tower(3, 0, 1));
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.seats[0].colours, vec![Colour(0), Colour(2)]);
    assert_eq!(v.seats[1].colours, vec![Colour(1), Colour(3)]);
}

// ---- CA-8 … CA-11: the turn ----

/// CA-8: a turn is exactly one building, then the cardinal step.
#[test]
fn ca8_exactly_one_building_per_turn() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    assert_eq!(g.view(Viewer::Spectator).phase, Phase::Cardinal);
    assert_eq!(g.status(), Status::InProgress { to_move: vec![Seat(0)] });
    refused(&g, 0, Move::house(0, 2, 0), "CA-8");
    assert!(g.legal_moves(Seat(0)).iter().all(|m| !matches!(m, Move::Build { .. })));
}

/// CA-8: building is mandatory when possible: the seat to act has build moves only.
#[test]
fn ca8_the_turn_starts_with_a_build() {
    let g = game(4, 2);
    let moves = g.legal_moves(Seat(2));
    assert!(!moves.is_empty() && moves.iter().all(|m| matches!(m, Move::Build { .. })));
}

/// CA-9: one marker of the touched colour per shared unit edge.
#[test]
fn ca9_one_marker_per_edge_with_each_touched_building() {
    let mut g = game(4, 1);
    put(&mut g, 0, Shape::House, 0, (1, 1), None);
    put(&mut g, 0, Shape::House, 0, (2, 2), None);
    put(&mut g, 2, Shape::House, 2, (3, 1), None);
    g.cardinal = Some(Cell::new(-1, 0));
    let effects = play(&mut g, 1, Move::tower(1, 2, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 2), mc(2, 1)]);
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.seats[1].markers_taken, vec![mc(0, 2), mc(1, 0), mc(2, 1), mc(3, 0)]);
    assert_eq!(v.supply, vec![mc(0, 10), mc(1, 12), mc(2, 11), mc(3, 12)]);
}

/// CA-9: touching the cathedral gives nothing.
#[test]
fn ca9_touching_the_cathedral_gives_nothing() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(0));
    play(&mut g, 0, Move::cardinal_to(2, 0));
    // A square along the cathedral's south side touches only the cathedral.
    let effects = play(&mut g, 1, Move::square(1, 0, -1, H));
    assert_eq!(built_markers(&effects), vec![]);
}

/// CA-9: at three players fourth-colour buildings give nothing.
#[test]
fn ca9_fourth_colour_buildings_give_nothing() {
    let mut g = game(3, 0);
    play(&mut g, 0, Move::house(3, 1, 1).with_bonus(0));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    let effects = play(&mut g, 1, Move::tower(1, 2, 1));
    assert_eq!(built_markers(&effects), vec![]);
    assert_eq!(g.view(Viewer::Spectator).supply[3].count, 12);
}

/// CA-9 worked check: with all 12 colour-2 markers taken, touching colour 2 gives nothing.
#[test]
fn ca9_worked_check_empty_supply_gives_nothing() {
    let mut g = game(4, 1);
    put(&mut g, 0, Shape::House, 0, (1, 1), None);
    put(&mut g, 2, Shape::House, 2, (3, 1), None);
    g.markers.hand_over(Seat(3), Colour(2), 12);
    let effects = play(&mut g, 1, Move::tower(1, 2, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 1)]);
    assert_eq!(g.view(Viewer::Spectator).supply[2].count, 0);
}

/// CA-9: a supply that runs short gives what it has left.
#[test]
fn ca9_short_supply_gives_what_is_left() {
    let mut g = game(4, 1);
    put(&mut g, 0, Shape::House, 0, (1, 1), None);
    put(&mut g, 0, Shape::House, 0, (2, 2), None);
    g.markers.hand_over(Seat(2), Colour(0), 11);
    let effects = play(&mut g, 1, Move::tower(1, 2, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 1)]);
}

/// CA-9: the supply is capped colour by colour: a short colour gives what is left while
/// another colour touched by the same building pays in full.
#[test]
fn ca9_short_supply_of_one_colour_does_not_cut_the_others() {
    let mut g = game(4, 1);
    put(&mut g, 0, Shape::House, 0, (1, 1), None);
    put(&mut g, 0, Shape::House, 0, (2, 2), None);
    put(&mut g, 2, Shape::House, 2, (3, 1), None);
    g.markers.hand_over(Seat(3), Colour(0), 11);
    let effects = play(&mut g, 1, Move::tower(1, 2, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 1), mc(2, 1)]);
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.supply, vec![mc(0, 0), mc(1, 12), mc(2, 11), mc(3, 12)]);
}

/// CA-9: every unit edge counts, whichever cell of a square it belongs to: a square
/// touching a house with one cell and a tower with the other takes two markers.
#[test]
fn ca9_a_square_takes_a_marker_for_each_of_its_cells_edges() {
    let mut g = game(4, 1);
    put(&mut g, 0, Shape::House, 0, (2, 2), None);
    put(&mut g, 0, Shape::Tower, 0, (3, 0), None);
    let effects = play(&mut g, 1, Move::square(1, 2, 1, H));
    assert_eq!(built_markers(&effects), vec![mc(0, 2)]);
}

/// CA-9: a building touching the cathedral and a building is paid for the building only.
#[test]
fn ca9_cathedral_edges_pay_nothing_beside_paying_edges() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(0, -1));
    // (1,1) touches the tower at (0,1) and the cathedral's tower at (1,0).
    let effects = play(&mut g, 1, Move::house(1, 1, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 1)]);
}

/// CA-9 with CA-7: at two players a seat building against its *other* colour takes
/// those markers itself (the French: "on en recevra normalement les pions de marque"),
/// and the opponent takes markers of both of that seat's colours.
#[test]
fn ca9_two_players_markers_of_a_seats_colours_go_to_whoever_builds() {
    let mut g = game(2, 1);
    put(&mut g, 0, Shape::House, 0, (1, 1), None);
    put(&mut g, 0, Shape::House, 2, (3, 1), None);
    // Seat 1's tower between seat 0's two houses: one marker of each of seat 0's colours.
    let effects = play(&mut g, 1, Move::tower(1, 2, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 1), mc(2, 1)]);
    play(&mut g, 1, Move::cardinal_to(-1, 0));
    // Seat 0's colour-0 square against its own colour-2 house: seat 0 takes that marker.
    let effects = play(&mut g, 0, Move::square(0, 4, 1, V));
    assert_eq!(built_markers(&effects), vec![mc(2, 1)]);
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.seats[0].markers_taken, vec![mc(0, 0), mc(1, 0), mc(2, 1), mc(3, 0)]);
    assert_eq!(v.supply, vec![mc(0, 11), mc(1, 12), mc(2, 10), mc(3, 12)]);
    // CA-22: what is left of both colours is seat 0's at the end: 11 and 1 + 10, one doubled.
    assert_eq!(v.scoring.seats[0].markers, vec![mc(0, 11), mc(1, 0), mc(2, 11), mc(3, 0)]);
    assert_eq!(v.scoring.outcome().scores, vec![22 + 11, 26 + 12]);
}

/// CA-9 with CA-6: at three players a fourth-colour building earns markers of the
/// counting colours it touches, the builder's own colour included.
#[test]
fn ca9_three_players_a_fourth_colour_building_earns_what_it_touches() {
    let mut g = game(3, 0);
    put(&mut g, 0, Shape::House, 0, (1, 1), None);
    put(&mut g, 1, Shape::House, 1, (3, 1), None);
    let effects = play(&mut g, 0, Move::tower(3, 2, 1));
    assert_eq!(built_markers(&effects), vec![mc(0, 1), mc(1, 1)]);
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    // And a building touching only that fourth-colour tower earns nothing.
    let effects = play(&mut g, 1, Move::house(1, 2, 2));
    assert_eq!(built_markers(&effects), vec![]);
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.supply, vec![mc(0, 11), mc(1, 11), mc(2, 12), mc(3, 12)]);
}

/// CA-10: on the first turn the cardinal must be placed: keeping it is refused.
#[test]
fn ca10_first_player_must_place_the_cardinal() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    refused(&g, 0, Move::KeepCardinal, "CA-10");
    let moves = g.legal_moves(Seat(0));
    assert!(moves.iter().all(|m| matches!(m, Move::MoveCardinal { .. })));
    // The zones after one tower north of the nave: 5 left around the cathedral + 2 new ones by the tower.
    assert_eq!(moves.len(), 7);
}

/// CA-10: the cardinal moves only to a free building zone, not onto its own cell; keeping it is allowed later.
#[test]
fn ca10_cardinal_moves_to_a_free_building_zone() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    refused(&g, 0, Move::cardinal_to(5, 5), "CA-10");
    refused(&g, 0, Move::cardinal_to(0, 0), "CA-10");
    refused(&g, 0, Move::cardinal_to(0, 1), "CA-10");
    refused(&g, 0, Move::cardinal_to(i32::MAX, i32::MIN), "CA-10");
    let effects = play(&mut g, 0, Move::cardinal_to(0, 2));
    assert_eq!(effects[0], Effect::CardinalMoved { seat: Seat(0), x: 0, y: 2 });
    play(&mut g, 1, Move::house(1, 2, 0));
    refused(&g, 1, Move::cardinal_to(0, 2), "CA-10");
    assert_eq!(g.legal_moves(Seat(1))[0], Move::KeepCardinal);
    let effects = play(&mut g, 1, Move::KeepCardinal);
    assert_eq!(effects[0], Effect::CardinalKept { seat: Seat(1) });
    assert_eq!(g.cardinal, Some(Cell::new(0, 2)));
}

/// CA-10: only a seat that built this turn may move the cardinal.
#[test]
fn ca10_only_the_seat_that_built_moves_the_cardinal() {
    let mut g = game(4, 0);
    refused(&g, 0, Move::cardinal_to(2, 0), "CA-10");
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(2, 0));
    refused(&g, 1, Move::KeepCardinal, "CA-10");
    refused(&g, 1, Move::cardinal_to(-1, 0), "CA-10");
}

/// CA-10 with CA-12: the cardinal is no building: a cell touching only the cardinal is
/// no building zone, for a building or for the cardinal itself.
#[test]
fn ca10_the_cardinal_makes_no_building_zone() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(2, 0));
    refused(&g, 1, Move::house(1, 3, 0), "CA-12");
    play(&mut g, 1, Move::house(1, 1, 1));
    refused(&g, 1, Move::cardinal_to(3, 0), "CA-10");
    // A zone where nothing could be built is still a zone for the cardinal.
    play(&mut g, 1, Move::cardinal_to(2, 1));
}

/// CA-11 worked check: a first tower at (0,1) is legal and earns exactly the one bonus marker.
#[test]
fn ca11_worked_check_first_tower_north_of_the_nave_earns_only_the_bonus() {
    let mut g = game(4, 0);
    let effects = play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(3));
    assert_eq!(
        effects,
        vec![Effect::Built {
            seat: Seat(0),
            shape: Shape::Tower,
            colour: Colour(0),
            cells: vec![Cell::new(0, 1)],
            markers_taken: vec![],
            bonus_colour: Some(Colour(3)),
        }]
    );
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.seats[0].markers_taken, vec![mc(0, 0), mc(1, 0), mc(2, 0), mc(3, 1)]);
    assert_eq!(v.supply[3].count, 11);
}

/// CA-11: the first building must name its bonus colour, and only the first.
#[test]
fn ca11_bonus_colour_on_the_first_building_only() {
    let mut g = game(4, 0);
    refused(&g, 0, Move::tower(0, 0, 1), "CA-11");
    assert!(g.legal_moves(Seat(0)).iter().all(|m| matches!(m, Move::Build { bonus_colour: Some(_), .. })));
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(0));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    refused(&g, 1, Move::house(1, 2, 0).with_bonus(1), "CA-11");
    assert!(g.legal_moves(Seat(1)).iter().all(|m| matches!(m, Move::Build { bonus_colour: None, .. })));
}

/// CA-11: the bonus is any colour whose markers count: not the fourth at three players.
#[test]
fn ca11_bonus_colour_must_count() {
    let g = game(3, 2);
    refused(&g, 2, Move::tower(2, 0, 1).with_bonus(3), "CA-11");
    refused(&g, 2, Move::tower(2, 0, 1).with_bonus(9), "CA-11");
    let bonuses = |g: &Game, seat| {
        let mut b: Vec<Colour> = g
            .legal_moves(Seat(seat))
            .iter()
            .filter_map(|m| match m {
                Move::Build { bonus_colour, .. } => *bonus_colour,
                _ => None,
            })
            .collect();
        b.sort_unstable();
        b.dedup();
        b
    };
    assert_eq!(bonuses(&g, 2), vec![Colour(0), Colour(1), Colour(2)]);
    assert_eq!(bonuses(&game(2, 1), 1), Colour::ALL.to_vec());
}

// ---- CA-12 … CA-19: placement laws ----

/// CA-12: a building must touch the town, and cover only free cells.
#[test]
fn ca12_building_must_touch_the_town_on_free_cells() {
    let mut g = game(4, 0);
    refused(&g, 0, Move::house(0, 3, 3).with_bonus(1), "CA-12");
    refused(&g, 0, Move::house(0, 0, 0).with_bonus(1), "CA-12");
    refused(&g, 0, Move::square(0, 1, 0, V).with_bonus(1), "CA-12");
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    refused(&g, 1, Move::house(1, 0, 1), "CA-12");
    refused(&g, 1, Move::square(1, 0, 1, V), "CA-12");
}

/// CA-12 law 1: nothing is built under the cardinal, not even half a square.
#[test]
fn ca12_law1_nothing_under_the_cardinal() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(2, 0));
    refused(&g, 1, Move::house(1, 2, 0), "CA-12");
    refused(&g, 1, Move::square(1, 2, -1, V), "CA-12");
    let covers_cardinal = |m: &Move| match *m {
        Move::Build { x, y, orientation, .. } => {
            (x, y) == (2, 0) || (orientation == Some(H) && (x, y) == (1, 0)) || (orientation == Some(V) && (x, y) == (2, -1))
        }
        _ => false,
    };
    assert!(!g.legal_moves(Seat(1)).iter().any(covers_cardinal));
}

/// CA-12: coordinates at the ends of i32 are refused, never overflow.
#[test]
fn ca12_extreme_coordinates_are_refused() {
    let g = game(2, 0);
    for (x, y) in [(i32::MAX, i32::MAX), (i32::MIN, i32::MIN), (i32::MAX, 0), (0, i32::MIN)] {
        refused(&g, 0, Move::house(0, x, y).with_bonus(1), "CA-12");
        refused(&g, 0, Move::square(0, x, y, H).with_bonus(1), "CA-12");
        refused(&g, 0, Move::square(0, x, y, V).with_bonus(1), "CA-12");
    }
}

/// CA-13 worked check: a first tower east of the cathedral tower touches no house (and touches a tower).
#[test]
fn ca13_worked_check_first_tower_east_of_the_cathedral_is_illegal() {
    let g = game(4, 0);
    let mut probe = g.clone();
    let err = probe.apply(Seat(0), &Move::tower(0, 2, 0).with_bonus(1)).unwrap_err();
    assert!(matches!(err, MoveError::Rule { rule: "CA-13" | "CA-15", .. }), "{err:?}");
    assert_eq!(probe, g);
}

/// CA-13 law 2: a tower touching only a square is refused.
#[test]
fn ca13_tower_must_touch_a_house() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::square(0, 0, 1, H).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    refused(&g, 1, Move::tower(1, 0, 2), "CA-13");
}

/// CA-14 law 3: a square touching only towers is refused.
#[test]
fn ca14_square_must_touch_a_house() {
    let g = game(4, 0);
    refused(&g, 0, Move::square(0, 2, 0, H).with_bonus(1), "CA-14");
    refused(&g, 0, Move::square(0, 1, 1, V).with_bonus(1), "CA-14");
}

/// CA-15 worked check: a first house north of the nave touches a house; a tower there is fine.
#[test]
fn ca15_worked_check_first_house_north_of_the_nave_is_illegal() {
    let g = game(4, 0);
    refused(&g, 0, Move::house(0, 0, 1).with_bonus(1), "CA-15");
    assert!(g.legal_moves(Seat(0)).contains(&Move::tower(0, 0, 1).with_bonus(1)));
}

/// CA-15 law 4: a square may not touch a square.
#[test]
fn ca15_no_two_squares_side_by_side() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::square(0, 0, 1, H).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    play(&mut g, 1, Move::house(1, 0, 2));
    play(&mut g, 1, Move::KeepCardinal);
    refused(&g, 2, Move::square(2, 1, 2, H), "CA-15");
}

/// CA-16 law 5: no building touches one of its own colour; at two players the other colour is fine and pays.
#[test]
fn ca16_no_two_buildings_of_one_colour_side_by_side() {
    let mut g = game(2, 0);
    play(&mut g, 0, Move::house(0, 1, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(0, -1));
    play(&mut g, 1, Move::tower(1, -1, 0));
    play(&mut g, 1, Move::KeepCardinal);
    refused(&g, 0, Move::square(0, 1, 2, H), "CA-16");
    let effects = play(&mut g, 0, Move::square(2, 1, 2, H));
    assert_eq!(built_markers(&effects), vec![mc(0, 1)]);
}

/// CA-17 worked check: after any house the next building in the game cannot be a house.
#[test]
fn ca17_worked_check_no_house_after_a_house() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::house(0, 1, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    refused(&g, 1, Move::house(1, 2, 0), "CA-17");
    assert!(g.legal_moves(Seat(1)).iter().all(|m| !matches!(m, Move::Build { shape: Shape::House, .. })));
}

/// CA-17: a forced pass does not reset law 6: the seat after it is still bound by the last building.
#[test]
fn ca17_passes_do_not_reset_law_6() {
    let mut g = game(4, 0);
    for shape in Shape::ALL {
        g.stock.take(Colour(1), shape);
        g.stock.take(Colour(1), shape);
    }
    play(&mut g, 0, Move::house(0, 1, 1).with_bonus(1));
    let effects = play(&mut g, 0, Move::cardinal_to(-1, 0));
    assert_eq!(effects[1], Effect::ForcedPass { seat: Seat(1) });
    refused(&g, 2, Move::house(2, 2, 0), "CA-17");
}

/// CA-18 law 7: the fourth colour cannot follow the fourth colour.
#[test]
fn ca18_no_two_buildings_of_one_colour_in_a_row() {
    let mut g = game(3, 0);
    play(&mut g, 0, Move::house(3, 1, 1).with_bonus(0));
    play(&mut g, 0, Move::cardinal_to(-1, 0));
    refused(&g, 1, Move::tower(3, 2, 1), "CA-18");
    assert!(g.legal_moves(Seat(1)).iter().all(|m| !matches!(m, Move::Build { colour: Colour(3), .. })));
}

/// CA-18: at two players a seat may not follow itself in the same colour after the other passes.
#[test]
fn ca18_same_colour_twice_refused_after_a_pass() {
    let mut g = game(2, 0);
    for shape in Shape::ALL {
        for c in [1, 3] {
            g.stock.take(Colour(c), shape);
            g.stock.take(Colour(c), shape);
        }
    }
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    let effects = play(&mut g, 0, Move::cardinal_to(2, 0));
    assert_eq!(effects[1], Effect::ForcedPass { seat: Seat(1) });
    assert_eq!(g.status(), Status::InProgress { to_move: vec![Seat(0)] });
    refused(&g, 0, Move::house(0, 1, 1), "CA-18");
    play(&mut g, 0, Move::house(2, 1, 1));
}

/// CA-14 law 3: a square may touch its house with either cell, anchor or second cell.
#[test]
fn ca14_a_square_touches_a_house_through_either_cell() {
    let mut g = game(4, 0);
    let legal = g.legal_moves(Seat(0));
    for mv in [
        Move::square(0, -1, -1, V), // second cell (-1,0) touches the nave
        Move::square(0, -2, 0, H),  // second cell (-1,0) touches the nave
        Move::square(0, 0, 1, V),   // anchor (0,1) touches the nave
    ] {
        assert!(legal.contains(&mv.clone().with_bonus(1)), "{mv:?}");
    }
    play(&mut g, 0, Move::square(0, -1, -1, V).with_bonus(1));
}

/// CA-15/CA-16 laws 4 and 5 look at both cells of a square: a square whose second cell
/// touches a square, or a building of its colour, is refused though its anchor is fine.
#[test]
fn ca15_ca16_laws_4_and_5_look_at_both_cells_of_a_square() {
    let mut g = game(4, 1);
    put(&mut g, 1, Shape::Tower, 1, (-1, 4), None);
    put(&mut g, 2, Shape::Square, 2, (2, 6), Some(H));
    put(&mut g, 0, Shape::House, 0, (0, 5), None);
    // (0,6) touches the house; (1,6) touches the square at (2,6).
    refused(&g, 1, Move::square(1, 0, 6, H), "CA-15");
    // (-1,5) touches the house and the colour-1 tower at (-1,4).
    refused(&g, 1, Move::square(1, -2, 5, H), "CA-16");
    // One cell further west, clear of both: legal.
    play(&mut g, 1, Move::square(1, -1, 6, H));
}

/// CA-17 law 6 compares with the building built immediately before in the game, by
/// anyone, not with the seat's own last building nor with older ones.
#[test]
fn ca17_law6_looks_only_at_the_previous_building_in_the_game() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(0, -1));
    play(&mut g, 1, Move::house(1, 1, 1));
    play(&mut g, 1, Move::KeepCardinal);
    play(&mut g, 2, Move::tower(2, 2, 1));
    play(&mut g, 2, Move::KeepCardinal);
    // A tower west of the nave would touch a house: refused only for following seat 2's tower.
    refused(&g, 3, Move::tower(3, -1, 0), "CA-17");
    // A house two buildings after seat 1's house is fine.
    play(&mut g, 3, Move::house(3, 2, 0));
}

/// CA-18 law 7 at three players holds across a pass: the French "si elle a été utilisée
/// par le joueur précédant" read as the previous *building*, as law 6's example does.
#[test]
fn ca18_fourth_colour_stays_barred_across_a_pass() {
    let mut g = game(3, 0);
    for shape in Shape::ALL {
        g.stock.take(Colour(1), shape);
        g.stock.take(Colour(1), shape);
    }
    play(&mut g, 0, Move::house(3, 1, 1).with_bonus(0));
    let effects = play(&mut g, 0, Move::cardinal_to(-1, 0));
    assert_eq!(effects[1], Effect::ForcedPass { seat: Seat(1) });
    refused(&g, 2, Move::tower(3, 2, 1), "CA-18");
    assert!(g.legal_moves(Seat(2)).iter().all(|m| matches!(m, Move::Build { colour: Colour(2), .. })));
}

/// CA-19: buildings are never moved or removed: the list only grows, and built cells stay taken.
#[test]
fn ca19_buildings_stay_where_they_are() {
    let mut g = game(4, 0);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(1));
    play(&mut g, 0, Move::cardinal_to(2, 0));
    let before = g.view(Viewer::Spectator).buildings;
    play(&mut g, 1, Move::house(1, 1, 1));
    play(&mut g, 1, Move::cardinal_to(-1, 0));
    let after = g.view(Viewer::Spectator).buildings;
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after.len(), 2);
    refused(&g, 2, Move::square(2, 0, 1, H), "CA-12");
}

// ---- CA-20, CA-21: passing and the end ----

/// CA-20: a seat with no buildings left is passed by the server, with an effect.
#[test]
fn ca20_seat_without_buildings_is_passed() {
    let mut g = game(4, 3);
    for shape in Shape::ALL {
        for c in [0, 1] {
            g.stock.take(Colour(c), shape);
            g.stock.take(Colour(c), shape);
        }
    }
    play(&mut g, 3, Move::tower(3, 0, 1).with_bonus(0));
    let effects = play(&mut g, 3, Move::cardinal_to(2, 0));
    assert_eq!(&effects[1..], &[Effect::ForcedPass { seat: Seat(0) }, Effect::ForcedPass { seat: Seat(1) }]);
    assert_eq!(g.status(), Status::InProgress { to_move: vec![Seat(2)] });
    assert!(g.legal_moves(Seat(0)).is_empty());
}

/// CA-20: a seat blocked by the laws (only houses left, right after a house) is passed too.
#[test]
fn ca20_seat_blocked_by_the_laws_is_passed() {
    let mut g = game(4, 0);
    for shape in [Shape::Tower, Shape::Square] {
        g.stock.take(Colour(1), shape);
        g.stock.take(Colour(1), shape);
    }
    play(&mut g, 0, Move::house(0, 1, 1).with_bonus(1));
    let effects = play(&mut g, 0, Move::cardinal_to(-1, 0));
    assert_eq!(effects[1], Effect::ForcedPass { seat: Seat(1) });
    assert_eq!(g.view(Viewer::Spectator).to_act, Some(Seat(2)));
}

/// CA-21: when nobody can build the game ends with the final scoring, and every move is refused.
#[test]
fn ca21_game_ends_when_nobody_can_build() {
    let mut g = game(4, 0);
    for c in 1..4 {
        for shape in Shape::ALL {
            g.stock.take(Colour(c), shape);
            g.stock.take(Colour(c), shape);
        }
    }
    for shape in [Shape::House, Shape::Square] {
        g.stock.take(Colour(0), shape);
        g.stock.take(Colour(0), shape);
    }
    g.stock.take(Colour(0), Shape::Tower);
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(2));
    let effects = play(&mut g, 0, Move::cardinal_to(2, 0));
    let scoring = g.scoring();
    assert!(!scoring.provisional);
    assert_eq!(effects, vec![Effect::CardinalMoved { seat: Seat(0), x: 2, y: 0 }, Effect::GameEnded { scoring: scoring.clone() }]);
    assert_eq!(g.turn, Turn::Over);
    assert_eq!(g.status(), Status::Finished { result: scoring.outcome() });
    // Seat 0: 12 own doubled + 1 bonus of colour 2 = 25; seat 2: 11 doubled = 22; others 24.
    assert_eq!(scoring.outcome().scores, vec![25, 24, 22, 24]);
    assert_eq!(scoring.winners, vec![Seat(0)]);
    assert_eq!(g.view(Viewer::Spectator).phase, Phase::Finished);
    for seat in Seat::all(4) {
        assert!(g.legal_moves(seat).is_empty());
        assert_eq!(g.clone().apply(seat, &Move::KeepCardinal), Err(MoveError::GameOver));
    }
}

/// CA-21: the game ends when every seat in turn is blocked by the laws, buildings
/// left or not; the unbuilt ones count for nothing.
#[test]
fn ca21_game_ends_with_buildings_left_when_the_laws_block_everyone() {
    let mut g = game(4, 0);
    for c in 0..4 {
        for shape in [Shape::Tower, Shape::Square] {
            g.stock.take(Colour(c), shape);
            g.stock.take(Colour(c), shape);
        }
    }
    g.stock.take(Colour(0), Shape::House);
    // Seat 0's last house; everyone else has only houses, barred by law 6.
    play(&mut g, 0, Move::house(0, 2, 0).with_bonus(1));
    let effects = play(&mut g, 0, Move::cardinal_to(-1, 0));
    assert_eq!(effects.len(), 2);
    assert!(matches!(effects[1], Effect::GameEnded { .. }));
    let v = g.view(Viewer::Spectator);
    assert!(v.buildings_left[1..].iter().all(|b| b.houses == 2));
    // Seat 0: 12 own doubled + 1 bonus of colour 1; seat 1: 11 doubled; the others 24.
    assert_eq!(v.scoring.outcome().scores, vec![25, 22, 24, 24]);
    assert_eq!(v.scoring.winners, vec![Seat(0)]);
}

/// CA-21 with CA-18: at four players a seat never builds twice in a row, so when all
/// the others are out of buildings the game ends though that seat still has some.
#[test]
fn ca21_four_players_game_ends_when_only_the_last_builder_could_build() {
    let mut g = game(4, 0);
    for c in 1..4 {
        for shape in Shape::ALL {
            g.stock.take(Colour(c), shape);
            g.stock.take(Colour(c), shape);
        }
    }
    play(&mut g, 0, Move::tower(0, 0, 1).with_bonus(2));
    let effects = play(&mut g, 0, Move::cardinal_to(2, 0));
    assert!(matches!(effects[..], [Effect::CardinalMoved { .. }, Effect::GameEnded { .. }]));
    assert_eq!(g.turn, Turn::Over);
    let left = &g.view(Viewer::Spectator).buildings_left[0];
    assert_eq!((left.houses, left.towers, left.squares), (2, 1, 2));
}

// ---- contract details ----

#[test]
fn unknown_seats_and_out_of_turn_seats_are_refused() {
    let g = game(3, 1);
    let mv = Move::tower(1, 0, 1).with_bonus(0);
    assert_eq!(g.clone().apply(Seat(3), &mv), Err(MoveError::UnknownSeat { seat: Seat(3) }));
    assert_eq!(g.clone().apply(Seat(0), &mv), Err(MoveError::NotYourTurn { seat: Seat(0), to_move: vec![Seat(1)] }));
    assert!(g.legal_moves(Seat(0)).is_empty() && g.legal_moves(Seat(7)).is_empty());
}

#[test]
fn provisional_scoring_while_running() {
    let g = game(2, 0);
    let s = g.view(Viewer::Spectator).scoring;
    assert!(s.provisional);
    assert_eq!(s.outcome().scores, vec![36, 36]);
}

#[test]
fn redact_returns_the_effect_unchanged() {
    let g = game(2, 0);
    let e = Effect::ForcedPass { seat: Seat(1) };
    assert_eq!(g.redact(&e, Viewer::Spectator), e);
    assert_eq!(g.view(Viewer::Seat(Seat(0))), g.view(Viewer::Spectator));
}
