//! Taking an export apart and putting it back together, for the tests that
//! alter one. Shared by the game crate's tests, the `ludo` binary's and the
//! black-box tests (each includes this file).

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The export's header (as `H`: its type, or a JSON value) and its other lines.
pub fn split<H: DeserializeOwned>(bundle: &[u8]) -> (H, Vec<String>) {
    let text = std::str::from_utf8(bundle).unwrap();
    let mut lines = text.lines();
    let header = serde_json::from_str(lines.next().unwrap()).unwrap();
    (header, lines.map(str::to_string).collect())
}

/// An export of `header` and `lines`, one per line.
pub fn join<H: Serialize>(header: &H, lines: &[String]) -> Vec<u8> {
    let mut out = serde_json::to_string(header).unwrap();
    for line in lines {
        out.push('\n');
        out.push_str(line);
    }
    out.push('\n');
    out.into_bytes()
}
