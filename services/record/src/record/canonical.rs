//! Canonical JSON: writing it, and checking that stored bytes are in it.
//!
//! Canonical bytes are JSON with object keys sorted bytewise, no
//! insignificant whitespace, and strings and numbers exactly as `serde_json`
//! writes them. [`canonical_json`] writes them; [`check_object`] checks
//! bytes read back are what it would have written, by scanning them once
//! instead of parsing them into a tree and writing that out again.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// JSON with object keys sorted bytewise and no whitespace.
#[must_use]
pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    out
}

/// Appends `value` in canonical form.
pub(super) fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => write_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::String(text) => write_str(text, out),
        scalar => serde_json::to_writer(&mut *out, scalar).expect("scalars serialize"),
    }
}

fn write_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    // Maps keep their insertion order (`preserve_order`): an engine's output
    // comes in field order and must be sorted, but a map parsed from
    // canonical bytes is sorted already and needs no list to sort.
    let sorted = map.keys().zip(map.keys().skip(1)).all(|(a, b)| a.as_bytes() < b.as_bytes());
    out.push(b'{');
    if sorted {
        write_members(map.iter(), out);
    } else {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        write_members(entries.into_iter(), out);
    }
    out.push(b'}');
}

fn write_members<'a>(members: impl Iterator<Item = (&'a String, &'a Value)>, out: &mut Vec<u8>) {
    for (i, (key, item)) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(key, out);
        out.push(b':');
        write_canonical(item, out);
    }
}

/// Appends a JSON string as `serde_json` escapes it.
pub(super) fn write_str(text: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, text).expect("strings serialize");
}

/// A member of the top-level object of checked bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Member<'a> {
    /// The key as written (canonical, so escaped only where it must be).
    pub key: &'a [u8],
    /// Where the member's key starts.
    pub start: usize,
    /// Just past the member's value.
    pub end: usize,
    /// Where the member's value is.
    pub value: std::ops::Range<usize>,
    /// Where each item of the value is, when it is an array.
    pub items: Vec<std::ops::Range<usize>>,
}

/// Why bytes are not canonical, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NotCanonical {
    /// What is wrong.
    pub why: &'static str,
    /// The byte where it was found.
    pub at: usize,
}

impl std::fmt::Display for NotCanonical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (byte {})", self.why, self.at)
    }
}

/// Checks that `bytes` are one JSON object exactly as [`canonical_json`]
/// writes it, and lists its top-level members in order.
///
/// The rules: valid UTF-8; no whitespace outside strings; object keys
/// strictly increasing bytewise (so no key twice); string escapes only
/// those `serde_json` writes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and
/// `\u00xx` in lower-case hex for the other control characters); integers
/// without sign or leading zeros beyond `-` and a lone `0`, other numbers
/// as `serde_json` writes the `f64` it reads them as. A value nested deeper
/// than `serde_json` would read is refused too.
pub(super) fn check_object(bytes: &[u8]) -> Result<Vec<Member<'_>>, NotCanonical> {
    if let Err(err) = std::str::from_utf8(bytes) {
        return Err(NotCanonical { why: "not UTF-8", at: err.valid_up_to() });
    }
    let mut scanner = Scanner { bytes, at: 0 };
    if scanner.peek() != Some(b'{') {
        return scanner.fault("not a JSON object");
    }
    let mut members = Vec::with_capacity(12);
    scanner.object(1, Some(&mut members))?;
    if scanner.at != bytes.len() {
        return scanner.fault("bytes after the object");
    }
    Ok(members)
}

/// As deep as `serde_json` reads.
const MAX_DEPTH: usize = 128;

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn fault<T>(&self, why: &'static str) -> Result<T, NotCanonical> {
        Err(NotCanonical { why, at: self.at })
    }

    fn value(&mut self, depth: usize) -> Result<(), NotCanonical> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1, None),
            Some(b'[') => self.array(depth + 1, None),
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.fault("not a JSON value (or whitespace)"),
        }
    }

    /// At `{`: the object, its members pushed to `members` when given.
    fn object(&mut self, depth: usize, mut members: Option<&mut Vec<Member<'a>>>) -> Result<(), NotCanonical> {
        if depth > MAX_DEPTH {
            return self.fault("nested too deep");
        }
        self.at += 1;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        // The previous key, and whether it holds an escape.
        let mut previous: Option<(&'a [u8], bool)> = None;
        loop {
            let start = self.at;
            if self.peek() != Some(b'"') {
                return self.fault("not an object key (or whitespace)");
            }
            let (key, escaped) = self.string()?;
            if let Some((previous, previous_escaped)) = previous {
                // Keys are ordered by their text; without an escape, that
                // is the bytes as written (as it nearly always is).
                let ordered = if previous_escaped || escaped { unescaped(previous) < unescaped(key) } else { previous < key };
                if !ordered {
                    return Err(NotCanonical { why: "object keys not in increasing bytewise order", at: start });
                }
            }
            previous = Some((key, escaped));
            if self.peek() != Some(b':') {
                return self.fault("no `:` right after an object key");
            }
            self.at += 1;
            let value = self.at;
            match members.as_deref_mut() {
                Some(members) => {
                    let mut items = Vec::new();
                    if self.peek() == Some(b'[') {
                        self.array(depth + 1, Some(&mut items))?;
                    } else {
                        self.value(depth)?;
                    }
                    members.push(Member { key, start, end: self.at, value: value..self.at, items });
                }
                None => self.value(depth)?,
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return self.fault("no `,` or `}` right after a member"),
            }
        }
    }

    /// At `[`: the array, where each item is pushed to `items` when given.
    fn array(&mut self, depth: usize, mut items: Option<&mut Vec<std::ops::Range<usize>>>) -> Result<(), NotCanonical> {
        if depth > MAX_DEPTH {
            return self.fault("nested too deep");
        }
        self.at += 1;
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            let item = self.at;
            self.value(depth)?;
            if let Some(items) = items.as_deref_mut() {
                items.push(item..self.at);
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return self.fault("no `,` or `]` right after an item"),
            }
        }
    }

    /// At `"`: the string as written between its quotes, and whether it
    /// holds an escape.
    fn string(&mut self) -> Result<(&'a [u8], bool), NotCanonical> {
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            let plain = self.bytes[self.at..].iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            let Some(plain) = plain else {
                self.at = self.bytes.len();
                return self.fault("unterminated string");
            };
            self.at += plain;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok((&self.bytes[start..self.at - 1], escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return self.fault("a raw control character in a string"),
            }
        }
    }

    /// At `\`: an escape, as `serde_json` writes it.
    fn escape(&mut self) -> Result<(), NotCanonical> {
        match self.bytes.get(self.at + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.at += 2;
                Ok(())
            }
            Some(b'u') => match self.bytes.get(self.at + 2..self.at + 6) {
                Some(&[b'0', b'0', high @ (b'0' | b'1'), low @ (b'0'..=b'9' | b'a'..=b'f')])
                    if !matches!((high, low), (b'0', b'8' | b'9' | b'a' | b'c' | b'd')) =>
                {
                    self.at += 6;
                    Ok(())
                }
                _ => self.fault("a \\u escape serde_json would not write"),
            },
            _ => self.fault("an escape serde_json would not write"),
        }
    }

    fn literal(&mut self, literal: &[u8]) -> Result<(), NotCanonical> {
        if !self.bytes[self.at..].starts_with(literal) {
            return self.fault("not a JSON value");
        }
        self.at += literal.len();
        Ok(())
    }

    /// At `-` or a digit: the number.
    fn number(&mut self) -> Result<(), NotCanonical> {
        let start = self.at;
        let len = self.bytes[start..].iter().position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'));
        self.at = len.map_or(self.bytes.len(), |len| start + len);
        let text = &self.bytes[start..self.at];
        if plain_integer(text) || written_back(text) {
            Ok(())
        } else {
            Err(NotCanonical { why: "a number not as serde_json writes it", at: start })
        }
    }
}

/// An integer `serde_json` reads as an `i64` or `u64` and writes back as
/// it was: no `+`, no leading zero, not `-0`, and (to stay inside both
/// ranges without parsing) at most 18 digits.
fn plain_integer(text: &[u8]) -> bool {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    match digits {
        [] => false,
        [b'0'] => digits.len() == text.len(),
        [b'1'..=b'9', rest @ ..] => rest.len() < 18 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Any other number (a fraction, an exponent, a wide integer, `-0`):
/// whether `serde_json` writes back the number it reads as these very bytes.
/// Rare in records, so its cost does not matter.
fn written_back(text: &[u8]) -> bool {
    serde_json::from_slice::<Value>(text)
        .ok()
        .filter(Value::is_number)
        .and_then(|number| serde_json::to_vec(&number).ok())
        .is_some_and(|written| written == text)
}

/// A checked key as its text, to compare keys the way [`canonical_json`]
/// sorts them. Keys rarely hold an escape, so this rarely allocates.
pub(super) fn unescaped(key: &[u8]) -> Cow<'_, [u8]> {
    if !key.contains(&b'\\') {
        return Cow::Borrowed(key);
    }
    let mut quoted = Vec::with_capacity(key.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(key);
    quoted.push(b'"');
    // The key passed the checks above, so it is a valid JSON string.
    let text: String = serde_json::from_slice(&quoted).expect("a checked key is a JSON string");
    Cow::Owned(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> Result<Vec<String>, NotCanonical> {
        check_object(text.as_bytes()).map(|members| members.iter().map(|m| String::from_utf8(m.key.to_vec()).unwrap()).collect())
    }

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        let v: Value = serde_json::from_str(r#"{ "b": [1, {"z": 1, "a": "é"}], "a": null }"#).unwrap();
        assert_eq!(String::from_utf8(canonical_json(&v)).unwrap(), r#"{"a":null,"b":[1,{"a":"é","z":1}]}"#);
    }

    #[test]
    fn what_canonical_json_writes_passes_the_check() {
        let v: Value = serde_json::from_str(
            r#"{"z":[true,false,null,-1,0,1.5,-2.5e-7,18446744073709551615,-9223372036854775808],
                "a\"b":{"\u0001\n\t\u001f\u007f":"\\/é😀\u2028","":{}},"a":[],"a#":[[[]]]}"#,
        )
        .unwrap();
        let bytes = canonical_json(&v);
        let keys = check_object(&bytes).map(|m| m.iter().map(|m| m.key.to_vec()).collect::<Vec<_>>());
        assert_eq!(
            keys,
            Ok(vec![b"a".to_vec(), br#"a\"b"#.to_vec(), b"a#".to_vec(), b"z".to_vec()]),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }

    #[test]
    fn members_say_where_each_top_level_member_is() {
        let text = r#"{"a":{"hash":1},"hash":"x","z":[]}"#;
        let members = check_object(text.as_bytes()).unwrap();
        let spans: Vec<(&str, &str)> = members.iter().map(|m| (std::str::from_utf8(m.key).unwrap(), &text[m.start..m.end])).collect();
        assert_eq!(spans, [("a", r#""a":{"hash":1}"#), ("hash", r#""hash":"x""#), ("z", r#""z":[]"#)]);
        let values: Vec<&str> = members.iter().map(|m| &text[m.value.clone()]).collect();
        assert_eq!(values, [r#"{"hash":1}"#, r#""x""#, "[]"]);
        assert!(members.iter().all(|m| m.items.is_empty()));

        let text = r#"{"e":[{"a":[1,2]},[],"x",3],"f":[]}"#;
        let members = check_object(text.as_bytes()).unwrap();
        let items: Vec<&str> = members[0].items.iter().map(|at| &text[at.clone()]).collect();
        assert_eq!(items, [r#"{"a":[1,2]}"#, "[]", r#""x""#, "3"], "only the top-level array's own items");
    }

    #[test]
    fn anything_serde_json_would_write_otherwise_is_refused() {
        for text in [
            r#" {"a":1}"#,
            r#"{"a":1} "#,
            r#"{"a": 1}"#,
            r#"{"a":1 ,"b":2}"#,
            r#"{"a":[1, 2]}"#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":1}"#,
            r#"{"a":{"y":1,"x":1}}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\u000a"}"#,
            r#"{"a":"\u001F"}"#,
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":01}"#,
            r#"{"a":-0}"#,
            r#"{"a":+1}"#,
            r#"{"a":1e2}"#,
            r#"{"a":1.50}"#,
            r#"{"a":1E-7}"#,
            r#"{"a":18446744073709551616}"#,
            r#"{"a":tru}"#,
            r#"{"a":nul}"#,
            r#"{"a":"x"#,
            "{\"a\":\"\t\"}",
            r#"{"a":1,}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":1}{}"#,
            r#"["a"]"#,
            "",
        ] {
            assert!(canonical(text).is_err(), "{text} passed");
        }
        assert!(check_object(b"{\"a\":\"\xff\"}").is_err(), "invalid UTF-8 passed");
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(canonical(&deep).unwrap_err().why, "nested too deep");
    }

    #[test]
    fn escaped_keys_are_ordered_by_their_text() {
        // `"` (0x22) sorts before `#` (0x23), though its escape `\"` starts with 0x5c.
        assert!(canonical(r##"{"\"":1,"#":2}"##).is_ok());
        assert!(canonical(r##"{"#":1,"\"":2}"##).is_err());
    }
}
