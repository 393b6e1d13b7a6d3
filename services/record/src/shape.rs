//! JSON input held to the shape of what it parses into.
//!
//! serde's derived `Deserialize` reads a struct from a sequence as well as
//! from a map (its fields in declaration order), and an internally tagged
//! enum from a sequence whose first item is the tag. So, parsed with
//! `serde_json` alone, `{"move": ["move_cardinal", 1, 1]}` would be played
//! as `{"move": {"type": "move_cardinal", "x": 1, "y": 1}}`, and a body
//! given as an array would be read as the object it is not. No attribute
//! turns this off, and it reaches through serde's buffering of tagged
//! enums, where a deserializer of our own would not.
//!
//! What can be checked is the result: the value written back from what was
//! parsed holds an object wherever the input had to give one. An input
//! with an array in such a place is refused, naming the place. Only that
//! is refused: a type may read one shape and write another (a string
//! written back as an object, say), and other differences are its own
//! business. Input without any array is never looked at twice.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

/// The path (`players[1].bot`, `cells[0]`; empty for the whole) of the
/// first place where `input` gives an array and `parsed`, written back,
/// holds an object; none when there is no such place.
///
/// `parsed` must be what `input` parsed into. A value that cannot be
/// written back (it never happens with the types parsed here) is let
/// through: the parse itself accepted it.
#[must_use]
pub fn array_for_object<T: Serialize>(input: &Value, parsed: &T) -> Option<String> {
    if !has_array(input) {
        return None;
    }
    let written = serde_json::to_value(parsed).ok()?;
    let mut path = String::new();
    find(input, &written, &mut path).then_some(path)
}

/// Whether `value` holds an array anywhere.
fn has_array(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(map) => map.values().any(has_array),
        _ => false,
    }
}

/// Whether an array stands for an object at or under `input`; `path`
/// then leads to it.
fn find(input: &Value, written: &Value, path: &mut String) -> bool {
    match (input, written) {
        (Value::Array(_), Value::Object(_)) => true,
        (Value::Array(items), Value::Array(written)) => items.iter().zip(written).enumerate().any(|(index, (item, written))| {
            let len = path.len();
            let _ = write!(path, "[{index}]");
            let found = find(item, written, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        (Value::Object(fields), Value::Object(written)) => fields.iter().any(|(key, item)| {
            let Some(written) = written.get(key) else { return false };
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            let found = find(item, written, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::array_for_object;

    #[derive(Debug, Serialize, Deserialize)]
    struct Cell {
        x: i32,
        y: i32,
    }

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Move {
        Place { cells: Vec<Cell> },
        Pass,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Body {
        #[serde(rename = "move")]
        mv: Move,
        #[serde(default)]
        note: Option<String>,
    }

    /// `input` parsed, then checked.
    fn check<T: Serialize + for<'de> Deserialize<'de>>(input: serde_json::Value) -> Option<String> {
        let parsed: T = serde_json::from_value(input.clone()).expect("serde reads it");
        array_for_object(&input, &parsed)
    }

    #[test]
    fn an_array_read_as_an_object_is_found_where_it_is() {
        // Every one of these parses with serde_json alone.
        assert_eq!(check::<Body>(json!([{"type": "pass"}, null])), Some(String::new()));
        assert_eq!(check::<Body>(json!({"move": ["pass"]})), Some("move".into()));
        assert_eq!(check::<Body>(json!({"move": {"type": "place", "cells": [{"x": 0, "y": 1}, [2, 3]]}})), Some("move.cells[1]".into()));
        assert_eq!(check::<Move>(json!(["place", [[0, 1]]])), Some(String::new()));
    }

    #[test]
    fn objects_and_real_arrays_pass() {
        assert_eq!(check::<Body>(json!({"move": {"type": "place", "cells": [{"x": 0, "y": 1}, {"x": 2, "y": 3}]}})), None);
        assert_eq!(check::<Body>(json!({"move": {"type": "pass"}, "note": "hi"})), None);
        assert_eq!(check::<Vec<Option<Cell>>>(json!([{"x": 1, "y": 2}, null])), None);
        assert_eq!(check::<Vec<(i32, i32)>>(json!([[1, 2], [3, 4]])), None);
        assert_eq!(check::<serde_json::Value>(json!({"any": [1, {"a": [2]}]})), None);
    }

    #[test]
    fn a_type_that_writes_another_shape_than_it_reads_is_left_alone() {
        /// Read from a string, written as an object.
        #[derive(Debug)]
        struct Named(String);
        impl Serialize for Named {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                json!({"name": self.0}).serialize(serializer)
            }
        }
        impl<'de> Deserialize<'de> for Named {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map(Named)
            }
        }
        assert_eq!(check::<Vec<Named>>(json!(["Ann", "Bob"])), None);
    }
}
