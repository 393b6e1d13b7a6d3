//! Canonical bytes straight from typed values.
//!
//! [`write_sorted`] writes any `Serialize` value (an engine's move or
//! effect) in the canonical form of [`super::canonical_json`] without first
//! building a `serde_json::Value` tree of it: `serde_json`'s own serializer
//! does the writing, escaping and number formatting, and the [`Sorting`]
//! formatter under it holds each object's members until the object ends,
//! then writes them in bytewise key order. It is the same idea as the
//! canonical formatters of `olpc-cjson` and `serde_jcs`, but with
//! `serde_json`'s escaping, which is what this log's canonical form is.
//!
//! Tests check it against [`super::canonical_json`] of the same value's
//! tree: for random JSON (keys with escapes, control characters,
//! non-ASCII) and for every move and effect of played games of every kind.

use std::cell::Cell;
use std::io;
use std::ops::Range;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, Serializer};

use super::canonical::unescaped;

/// Appends `value` in canonical form.
///
/// # Errors
/// What `serde_json` refuses to write (a map whose keys are not strings or
/// numbers, a failing `Serialize` impl).
pub fn write_sorted<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    // The objects' buffers are kept between calls on the same thread, so
    // a replay writing thousands of effects allocates them once.
    let mut open = SPARE.take();
    let written = value.serialize(&mut Serializer::with_formatter(io::sink(), Sorting { root: out, open: &mut open, depth: 0 }));
    SPARE.set(open);
    written
}

thread_local! {
    static SPARE: Cell<Vec<Object>> = const { Cell::new(Vec::new()) };
}

/// A formatter that ignores the serializer's writer: everything goes to
/// `root`, or, inside an object, to that object's buffer.
struct Sorting<'a> {
    root: &'a mut Vec<u8>,
    /// Buffers of the objects being written, innermost last; kept (and
    /// their allocations reused) when the objects end.
    open: &'a mut Vec<Object>,
    /// How many of `open` are being written.
    depth: usize,
}

/// An object being written: its members, unordered, in one buffer.
#[derive(Default)]
struct Object {
    buf: Vec<u8>,
    /// Each member: its key (quoted, as written) and the whole member.
    members: Vec<(Range<usize>, Range<usize>)>,
}

impl Sorting<'_> {
    fn target(&mut self) -> &mut Vec<u8> {
        match self.depth {
            0 => self.root,
            depth => &mut self.open[depth - 1].buf,
        }
    }

    fn object(&mut self) -> &mut Object {
        &mut self.open[self.depth - 1]
    }
}

impl Formatter for Sorting<'_> {
    fn write_null<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        CompactFormatter.write_null(self.target())
    }

    fn write_bool<W: ?Sized + io::Write>(&mut self, _: &mut W, value: bool) -> io::Result<()> {
        CompactFormatter.write_bool(self.target(), value)
    }

    fn write_i8<W: ?Sized + io::Write>(&mut self, _: &mut W, value: i8) -> io::Result<()> {
        CompactFormatter.write_i8(self.target(), value)
    }

    fn write_i16<W: ?Sized + io::Write>(&mut self, _: &mut W, value: i16) -> io::Result<()> {
        CompactFormatter.write_i16(self.target(), value)
    }

    fn write_i32<W: ?Sized + io::Write>(&mut self, _: &mut W, value: i32) -> io::Result<()> {
        CompactFormatter.write_i32(self.target(), value)
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, _: &mut W, value: i64) -> io::Result<()> {
        CompactFormatter.write_i64(self.target(), value)
    }

    fn write_i128<W: ?Sized + io::Write>(&mut self, _: &mut W, value: i128) -> io::Result<()> {
        CompactFormatter.write_i128(self.target(), value)
    }

    fn write_u8<W: ?Sized + io::Write>(&mut self, _: &mut W, value: u8) -> io::Result<()> {
        CompactFormatter.write_u8(self.target(), value)
    }

    fn write_u16<W: ?Sized + io::Write>(&mut self, _: &mut W, value: u16) -> io::Result<()> {
        CompactFormatter.write_u16(self.target(), value)
    }

    fn write_u32<W: ?Sized + io::Write>(&mut self, _: &mut W, value: u32) -> io::Result<()> {
        CompactFormatter.write_u32(self.target(), value)
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, _: &mut W, value: u64) -> io::Result<()> {
        CompactFormatter.write_u64(self.target(), value)
    }

    fn write_u128<W: ?Sized + io::Write>(&mut self, _: &mut W, value: u128) -> io::Result<()> {
        CompactFormatter.write_u128(self.target(), value)
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, _: &mut W, value: f32) -> io::Result<()> {
        CompactFormatter.write_f32(self.target(), value)
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, _: &mut W, value: f64) -> io::Result<()> {
        CompactFormatter.write_f64(self.target(), value)
    }

    fn write_number_str<W: ?Sized + io::Write>(&mut self, _: &mut W, value: &str) -> io::Result<()> {
        CompactFormatter.write_number_str(self.target(), value)
    }

    fn begin_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        CompactFormatter.begin_string(self.target())
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        CompactFormatter.end_string(self.target())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, _: &mut W, fragment: &str) -> io::Result<()> {
        CompactFormatter.write_string_fragment(self.target(), fragment)
    }

    fn write_char_escape<W: ?Sized + io::Write>(&mut self, _: &mut W, escape: CharEscape) -> io::Result<()> {
        CompactFormatter.write_char_escape(self.target(), escape)
    }

    fn write_byte_array<W: ?Sized + io::Write>(&mut self, _: &mut W, value: &[u8]) -> io::Result<()> {
        CompactFormatter.write_byte_array(self.target(), value)
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        CompactFormatter.begin_array(self.target())
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        CompactFormatter.end_array(self.target())
    }

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        CompactFormatter.begin_array_value(self.target(), first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        if self.open.len() == self.depth {
            self.open.push(Object::default());
        }
        self.depth += 1;
        let object = self.object();
        object.buf.clear();
        object.members.clear();
        Ok(())
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        let mut object = std::mem::take(&mut self.open[self.depth - 1]);
        self.depth -= 1;
        let Object { buf, members } = &mut object;
        // Keys are compared as their text: the written key without its
        // quotes, unless it holds an escape (rare: field names never do).
        let written = |member: &(Range<usize>, Range<usize>)| &buf[member.0.start + 1..member.0.end - 1];
        if members.iter().any(|member| written(member).contains(&b'\\')) {
            members.sort_by(|a, b| unescaped(written(a)).cmp(&unescaped(written(b))));
        } else if !members.is_sorted_by(|a, b| written(a) < written(b)) {
            members.sort_unstable_by(|a, b| written(a).cmp(written(b)));
        }
        let out = self.target();
        out.push(b'{');
        for (i, (_, member)) in members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&buf[member.clone()]);
        }
        out.push(b'}');
        self.open[self.depth] = object;
        Ok(())
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, _: &mut W, _first: bool) -> io::Result<()> {
        let object = self.object();
        let at = object.buf.len();
        object.members.push((at..at, at..at));
        Ok(())
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        let object = self.object();
        let end = object.buf.len();
        let member = object.members.last_mut().expect("a key was begun");
        member.0.end = end;
        Ok(())
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.object().buf.push(b':');
        Ok(())
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        let object = self.object();
        let end = object.buf.len();
        let member = object.members.last_mut().expect("a key was begun");
        member.1.end = end;
        Ok(())
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(&mut self, _: &mut W, fragment: &str) -> io::Result<()> {
        // Raw values are written as they come: nothing in a record is one.
        CompactFormatter.write_raw_fragment(self.target(), fragment)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::record::canonical_json;

    fn sorted(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        write_sorted(value, &mut out).unwrap();
        out
    }

    #[test]
    fn objects_come_out_sorted_at_every_depth() {
        let value = json!({"b": [{"z": 1, "a": {"y": null, "x": true}}], "a": "\u{0}\"", "": {}, "é": [], "e": -3});
        assert_eq!(String::from_utf8(sorted(&value)).unwrap(), String::from_utf8(canonical_json(&value)).unwrap());
        assert_eq!(sorted(&json!({"b": 1, "a": 2})), br#"{"a":2,"b":1}"#);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let key = prop_oneof![Just(String::new()), "[a-z]{1,4}", "[\"\\\\/a\\u{0}-\\u{1f}\\u{7f}é😀\\u{2028}]{1,3}"];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            "[ -~]{0,6}".prop_map(Value::String),
            "[\"\\\\\\u{0}-\\u{1f}\\u{80}-\\u{10ffff}]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_same_bytes_as_through_a_tree(value in json_value()) {
            prop_assert_eq!(sorted(&value), canonical_json(&value));
        }
    }
}
