//! One English sentence per effect, for a step-by-step replay viewer.
//!
//! Sentences are in the simple past, without a final full stop, and say only
//! what the effect carries. Cardinal has no hidden information, so every
//! effect reads the same for every viewer. Seats are named by their players'
//! names, colours by name (colour 0 to 3: red, blue, green, yellow; see
//! [`colour_name`]), small counts in words ("two red markers"); cells are
//! coordinates, "(x, y)", with the cathedral's nave at (0, 0):
//! "Ann built a green tower at (0, 1), taking one red marker".

use ludo_engine::Seat;
use ludo_engine::words::{and_list as join, article, plural, seat_name as name};

use crate::cell::Cell;
use crate::effect::Effect;
use crate::markers::MarkerCount;
use crate::pieces::{Colour, Shape};
use crate::scoring::Scoring;

/// The sentence for `effect`, seats named by `seats[i]` ("seat N" past its end).
pub(crate) fn narrate(effect: &Effect, seats: &[String]) -> String {
    match effect {
        Effect::GameStarted { first_seat } => {
            format!("The game started with {} to build first", name(seats, *first_seat))
        }
        Effect::Built { seat, shape, colour, cells, markers_taken, bonus_colour } => {
            built(seats, *seat, *shape, *colour, cells, markers_taken, *bonus_colour)
        }
        Effect::CardinalMoved { seat, x, y } => {
            format!("{} moved the cardinal to ({x}, {y})", name(seats, *seat))
        }
        Effect::CardinalKept { seat } => {
            format!("{} left the cardinal where it was", name(seats, *seat))
        }
        Effect::ForcedPass { seat } => {
            format!("{} could not build and passed", name(seats, *seat))
        }
        Effect::GameEnded { scoring } => game_ended(seats, scoring),
    }
}

/// The colour as players say it (CA-1 numbers the colours 0 to 3; the
/// names are this server's, the same in every client); "colour N" for a
/// number that is no colour.
pub(crate) fn colour_name(colour: Colour) -> String {
    const NAMES: [&str; Colour::COUNT] = ["red", "blue", "green", "yellow"];
    NAMES.get(colour.index()).map_or_else(|| colour.to_string(), |&n| n.to_owned())
}

/// "a green tower", "a colour 9 house" (an odd colour, never in a real game).
fn building(shape: Shape, colour: Colour) -> String {
    let colour = colour_name(colour);
    format!("{} {colour} {}", article(&colour), shape.name())
}

/// "Ann built a green tower at (0, 1), taking one red marker and two blue markers".
fn built(
    seats: &[String],
    seat: Seat,
    shape: Shape,
    colour: Colour,
    cells: &[Cell],
    markers_taken: &[MarkerCount],
    bonus_colour: Option<Colour>,
) -> String {
    let mut out = format!("{} built {}", name(seats, seat), building(shape, colour));
    let cells: Vec<String> = cells.iter().map(|c| format!("({}, {})", c.x, c.y)).collect();
    match cells.len() {
        0 => {}
        1 => out.push_str(&format!(" at {}", cells[0])),
        _ => out.push_str(&format!(" on {}", join(&cells))),
    }
    let mut taken: Vec<String> =
        markers_taken.iter().filter(|m| m.count > 0).map(|m| plural(m.count, &format!("{} marker", colour_name(m.colour)))).collect();
    if let Some(bonus) = bonus_colour {
        let bonus = colour_name(bonus);
        // CA-11: told apart from the contact markers.
        taken.push(format!("{} {bonus} marker as the first player's bonus", article(&bonus)));
    }
    if taken.is_empty() {
        out.push_str(", taking no marker");
    } else {
        out.push_str(&format!(", taking {}", join(&taken)));
    }
    out
}
/// "Game over: Ann 31, Bob 34 — Bob won".
fn game_ended(seats: &[String], scoring: &Scoring) -> String {
    let mut out = String::from("Game over");
    let scores: Vec<String> = scoring.seats.iter().map(|s| format!("{} {}", name(seats, s.seat), s.total)).collect();
    if !scores.is_empty() {
        out.push_str(": ");
        out.push_str(&scores.join(", "));
    }
    let winners: Vec<String> = scoring.winners.iter().map(|&s| name(seats, s)).collect();
    let total_of = |seat: Seat| scoring.seats.iter().find(|s| s.seat == seat).map(|s| s.total);
    // CA-24: a winner level on points with a loser won on cathedral contacts.
    let tie_broken = scoring.winners.iter().any(|&w| {
        let total = total_of(w);
        total.is_some() && scoring.seats.iter().any(|s| !scoring.winners.contains(&s.seat) && Some(s.total) == total)
    });
    let tie_break = if tie_broken { " on cathedral contacts" } else { "" };
    match winners.len() {
        0 => {}
        1 => out.push_str(&format!(" — {} won{tie_break}", winners[0])),
        _ => out.push_str(&format!(" — {} shared the win{tie_break}", join(&winners))),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::SeatScore;

    fn names() -> Vec<String> {
        ["Ann", "Bob", "Cid"].map(String::from).to_vec()
    }

    fn say(effect: &Effect) -> String {
        narrate(effect, &names())
    }

    fn score(seat: u8, total: u32) -> SeatScore {
        SeatScore { seat: Seat(seat), markers: Vec::new(), doubled_colour: None, total, cathedral_contacts: 0 }
    }

    #[test]
    fn game_started_names_the_first_builder() {
        let e = Effect::GameStarted { first_seat: Seat(1) };
        assert_eq!(say(&e), "The game started with Bob to build first");
    }

    #[test]
    fn built_names_shape_colour_cells_and_markers() {
        let e = Effect::Built {
            seat: Seat(0),
            shape: Shape::Tower,
            colour: Colour(0),
            cells: vec![Cell::new(0, 1)],
            markers_taken: vec![MarkerCount { colour: Colour(1), count: 1 }, MarkerCount { colour: Colour(2), count: 2 }],
            bonus_colour: None,
        };
        assert_eq!(say(&e), "Ann built a red tower at (0, 1), taking one blue marker and two green markers");
    }

    /// CA-11: the first building's bonus marker is told apart from contact markers.
    #[test]
    fn built_first_building_tells_the_bonus_marker() {
        let e = Effect::Built {
            seat: Seat(2),
            shape: Shape::Tower,
            colour: Colour(2),
            cells: vec![Cell::new(0, 1)],
            markers_taken: Vec::new(),
            bonus_colour: Some(Colour(1)),
        };
        assert_eq!(say(&e), "Cid built a green tower at (0, 1), taking a blue marker as the first player's bonus");
    }

    #[test]
    fn built_square_names_both_cells_and_no_marker() {
        let e = Effect::Built {
            seat: Seat(1),
            shape: Shape::Square,
            colour: Colour(3),
            cells: vec![Cell::new(2, 0), Cell::new(2, 1)],
            markers_taken: vec![MarkerCount { colour: Colour(0), count: 0 }],
            bonus_colour: None,
        };
        assert_eq!(say(&e), "Bob built a yellow square on (2, 0) and (2, 1), taking no marker");
    }

    /// CA-1: the four colours by name, never by number.
    #[test]
    fn colours_read_as_names() {
        let names = Colour::ALL.map(colour_name);
        assert_eq!(names, ["red", "blue", "green", "yellow"]);
        let built = |colour| {
            say(&Effect::Built {
                seat: Seat(0),
                shape: Shape::House,
                colour,
                cells: vec![Cell::new(-1, 0)],
                markers_taken: vec![MarkerCount { colour: Colour::FOURTH, count: 1 }],
                bonus_colour: None,
            })
        };
        assert_eq!(built(Colour(1)), "Ann built a blue house at (-1, 0), taking one yellow marker");
        for colour in Colour::ALL {
            assert!(!built(colour).contains("colour"), "{}", built(colour));
        }
    }

    #[test]
    fn cardinal_moved_gives_the_cell() {
        let e = Effect::CardinalMoved { seat: Seat(0), x: -3, y: 2 };
        assert_eq!(say(&e), "Ann moved the cardinal to (-3, 2)");
    }

    #[test]
    fn cardinal_kept() {
        let e = Effect::CardinalKept { seat: Seat(1) };
        assert_eq!(say(&e), "Bob left the cardinal where it was");
    }

    /// CA-20.
    #[test]
    fn forced_pass() {
        let e = Effect::ForcedPass { seat: Seat(2) };
        assert_eq!(say(&e), "Cid could not build and passed");
    }

    #[test]
    fn game_ended_lists_totals_and_the_winner() {
        let e =
            Effect::GameEnded { scoring: Scoring { provisional: false, seats: vec![score(0, 31), score(1, 34)], winners: vec![Seat(1)] } };
        assert_eq!(say(&e), "Game over: Ann 31, Bob 34 — Bob won");
    }

    /// CA-24: a tie on points broken by cathedral contacts, and a draw.
    #[test]
    fn game_ended_tells_tie_breaks_and_draws() {
        let tie_broken = Effect::GameEnded {
            scoring: Scoring { provisional: false, seats: vec![score(0, 30), score(1, 30), score(2, 12)], winners: vec![Seat(0)] },
        };
        assert_eq!(say(&tie_broken), "Game over: Ann 30, Bob 30, Cid 12 — Ann won on cathedral contacts");
        let draw = Effect::GameEnded {
            scoring: Scoring { provisional: false, seats: vec![score(0, 30), score(1, 30), score(2, 12)], winners: vec![Seat(0), Seat(1)] },
        };
        assert_eq!(say(&draw), "Game over: Ann 30, Bob 30, Cid 12 — Ann and Bob shared the win");
    }

    #[test]
    fn seats_without_a_name_read_as_seat_n() {
        let e = Effect::ForcedPass { seat: Seat(7) };
        assert_eq!(narrate(&e, &names()), "seat 7 could not build and passed");
        assert_eq!(narrate(&e, &[]), "seat 7 could not build and passed");
        let blank = vec![String::new(); 8];
        assert_eq!(narrate(&e, &blank), "seat 7 could not build and passed");
    }

    #[test]
    fn odd_effects_do_not_panic() {
        let e = Effect::Built {
            seat: Seat(u8::MAX),
            shape: Shape::House,
            colour: Colour(200),
            cells: Vec::new(),
            markers_taken: Vec::new(),
            bonus_colour: None,
        };
        assert_eq!(narrate(&e, &[]), "seat 255 built a colour 200 house, taking no marker");
        let empty = Effect::GameEnded { scoring: Scoring { provisional: true, seats: Vec::new(), winners: vec![Seat(9)] } };
        assert_eq!(narrate(&empty, &[]), "Game over — seat 9 won");
    }
}
