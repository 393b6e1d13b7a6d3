//! Small English helpers the engines' narrations share.

use crate::Seat;

/// The seat's name, or "seat N" when `seats` has no (non-blank) name for it.
#[must_use]
pub fn seat_name(seats: &[String], seat: Seat) -> String {
    match seats.get(seat.index()) {
        Some(name) if !name.trim().is_empty() => name.clone(),
        _ => seat.to_string(),
    }
}

/// "a", "a and b", "a, b and c".
#[must_use]
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// "1 card", "3 cards", "2 countries".
#[must_use]
pub fn plural(n: u32, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fall_back_to_the_seat_number() {
        let seats = vec!["Ann".to_string(), " ".to_string()];
        assert_eq!(seat_name(&seats, Seat(0)), "Ann");
        assert_eq!(seat_name(&seats, Seat(1)), "seat 1");
        assert_eq!(seat_name(&seats, Seat(7)), "seat 7");
    }

    #[test]
    fn lists_and_plurals_read_naturally() {
        let items = |n: usize| ["a", "b", "c"][..n].iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!([0, 1, 2, 3].map(|n| and_list(&items(n))), ["", "a", "a and b", "a, b and c"]);
        assert_eq!([plural(1, "card"), plural(3, "card"), plural(2, "country")], ["1 card", "3 cards", "2 countries"]);
    }
}
