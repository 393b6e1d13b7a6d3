//! Small English helpers the engines' narrations share: seats by name, lists,
//! counts with small numbers in words ("two cards"), ordinals ("second") and
//! articles ("an England / Swabia card").

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

const SMALL: [&str; 11] = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

/// A count as prose writes it: zero to ten in words, larger numbers in digits.
#[must_use]
pub fn number(n: u32) -> String {
    SMALL.get(n as usize).map_or_else(|| n.to_string(), |&word| word.to_owned())
}

/// "no cards", "one card", "three cards", "two countries", "30 cards".
#[must_use]
pub fn plural(n: u32, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (0, Some(stem)) => format!("no {stem}ies"),
        (0, None) => format!("no {noun}s"),
        (1, _) => format!("one {noun}"),
        (_, Some(stem)) => format!("{} {stem}ies", number(n)),
        (_, None) => format!("{} {noun}s", number(n)),
    }
}

/// "first", "second" … "tenth", then "11th", "21st", "22nd", "23rd", "111th".
#[must_use]
pub fn ordinal(n: u32) -> String {
    const WORDS: [&str; 10] = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];
    if let Some(word) = n.checked_sub(1).and_then(|i| WORDS.get(i as usize)) {
        return (*word).to_owned();
    }
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// "a" or "an" before `word`, by its first letter ("an England / Swabia card").
#[must_use]
pub fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some(c) if "AEIOUaeiou".contains(c) => "an",
        _ => "a",
    }
}

/// `text` with its first letter in upper case, to open a sentence.
#[must_use]
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
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
        assert_eq!(
            [plural(0, "card"), plural(1, "card"), plural(3, "card"), plural(2, "country"), plural(0, "country"), plural(30, "card")],
            ["no cards", "one card", "three cards", "two countries", "no countries", "30 cards"]
        );
    }

    #[test]
    fn small_numbers_are_words() {
        assert_eq!([0, 1, 9, 10, 11, 45].map(number), ["zero", "one", "nine", "ten", "11", "45"]);
    }

    #[test]
    fn ordinals() {
        assert_eq!([1, 2, 3, 10].map(ordinal), ["first", "second", "third", "tenth"]);
        assert_eq!(
            [0, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal),
            ["0th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th"]
        );
    }

    #[test]
    fn articles_and_capitals() {
        assert_eq!([article("England"), article("France"), article("eagle"), article("")], ["an", "a", "an", "a"]);
        assert_eq!([capitalised("two cards"), capitalised(""), capitalised("élan")], ["Two cards", "", "Élan"]);
    }
}
