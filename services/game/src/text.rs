//! Text a client makes the server store and show to others (player names,
//! the strings of a game's options): visible characters only.

use serde_json::Value;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether `c` may appear in stored text: not a control or format character
/// (bidi overrides, zero-width joiners and spaces, the BOM …), not a line or
/// paragraph separator, not private-use, unassigned or a surrogate.
#[must_use]
pub fn is_visible(c: char) -> bool {
    !matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::Surrogate
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// The first character of `text` that [`is_visible`] refuses, described.
#[must_use]
pub fn invisible_in(text: &str) -> Option<String> {
    text.chars().find(|&c| !is_visible(c)).map(|c| format!("U+{:04X} ({:?})", u32::from(c), c.general_category()))
}

/// The path and description of the first string (or key) in `value` with a
/// character [`is_visible`] refuses; paths start at `root`.
#[must_use]
pub fn first_invisible(value: &Value, root: &str) -> Option<(String, String)> {
    match value {
        Value::String(text) => invisible_in(text).map(|found| (root.to_string(), found)),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| first_invisible(item, &format!("{root}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let path = format!("{root}.{key}");
            invisible_in(key).map(|found| (path.clone(), found)).or_else(|| first_invisible(item, &path))
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn letters_of_every_script_pass_and_invisible_characters_do_not() {
        for name in ["Ann", "Zoë", "Jürgen Groß", "Åsa-Li", "李小龙", "Αλέξανδρος", "محمد", "🎲 Dice", "O'Brien", "Anne Marie"]
        {
            assert_eq!(invisible_in(name), None, "{name}");
        }
        for (text, code) in [
            ("Ann\u{202E}nnA", "U+202E"), // right-to-left override
            ("A\u{200B}nn", "U+200B"),    // zero-width space
            ("A\u{200D}nn", "U+200D"),    // zero-width joiner
            ("\u{FEFF}Ann", "U+FEFF"),    // byte order mark
            ("Ann\u{2066}", "U+2066"),    // left-to-right isolate
            ("Ann\u{2028}x", "U+2028"),   // line separator
            ("Ann\u{E000}", "U+E000"),    // private use
            ("Ann\u{7}", "U+0007"),       // a control character
            ("Ann\u{0378}", "U+0378"),    // unassigned
        ] {
            assert!(invisible_in(text).is_some_and(|found| found.starts_with(code)), "{text:?}");
        }
    }

    #[test]
    fn the_first_invisible_string_of_a_json_value_is_named_by_its_path() {
        let options = json!({"first_seat": 1, "board": {"note": "ok", "countries": [{"name": "Fr\u{202E}ance"}]}});
        let (path, _) = first_invisible(&options, "options").unwrap();
        assert_eq!(path, "options.board.countries[0].name");
        assert_eq!(first_invisible(&json!({"a\u{200B}": 1}), "options").unwrap().0, "options.a\u{200B}");
        assert_eq!(first_invisible(&json!({"board": {"name": "Europe"}}), "options"), None);
    }
}
