//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use ludo_storage::StreamId;

/// A stream id whose bytes sort like `n`.
pub fn stream(n: u32) -> StreamId {
    let mut id = [0x5a; 16];
    id[12..].copy_from_slice(&n.to_be_bytes());
    StreamId(id)
}

/// The deterministic content of record `seq` of `stream`: 200 bytes that
/// name their stream and seq, so a misplaced or damaged record is caught.
pub fn record(stream: StreamId, seq: u64) -> Vec<u8> {
    let mut bytes = format!("{stream}#{seq}#").into_bytes();
    let mut x = seq ^ u64::from_be_bytes(stream.0[8..].try_into().expect("8 bytes"));
    while bytes.len() < 200 {
        // xorshift: cheap, deterministic filler.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.push(x as u8);
    }
    bytes
}

/// Records `from..to` of `stream`.
pub fn records(stream: StreamId, from: u64, to: u64) -> Vec<Vec<u8>> {
    (from..to).map(|seq| record(stream, seq)).collect()
}

pub mod postgres;
