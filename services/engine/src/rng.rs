//! The project's deterministic randomness: a ChaCha20 stream seeded from
//! the game's 32-byte seed, and a shuffle algorithm owned by this crate.
//!
//! Anyone holding a finished game's published seed can re-deal it with this
//! exact algorithm, so it is specified here and locked by golden tests; it
//! must never change for an existing ruleset version.
//!
//! # Algorithm
//! 1. The generator is ChaCha20 (20 rounds, the IETF/djb block function as
//!    implemented by `rand_chacha::ChaCha20Rng`), key = the seed, stream 0,
//!    counter from 0. Words are taken little-endian, one `u32` at a time.
//! 2. `below(n)` draws a uniform integer in `0..n` by rejection: draw a word
//!    `x`; with `r = 2^32 mod n`, redraw while `x >= 2^32 - r`; answer
//!    `x mod n`.
//! 3. `shuffle(items)` is the Durstenfeld form of Fisher–Yates: for `i` from
//!    `len - 1` down to `1`, swap `items[i]` with `items[below(i + 1)]`.

use core::fmt;

use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// A game's 32-byte secret seed.
///
/// `Debug` prints nothing of the bytes: a seed in a log line would reveal
/// every hidden hand of a running game.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed(pub [u8; 32]);

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(<secret>)")
    }
}

/// The deterministic generator every engine draws from.
///
/// With the `serde` feature it reads and writes as its position in the
/// stream: `{"seed": "<64 hex digits>", "word_pos": <words drawn>}`; a
/// generator read back draws exactly what the original would have drawn
/// next. Writing one reveals its seed: an engine's full state holds the
/// game's secret seed, a seat's information set only a fixed one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeckRng(ChaCha20Rng);

impl DeckRng {
    /// The generator for `seed` (see the module docs for the algorithm).
    #[must_use]
    pub fn new(seed: &Seed) -> Self {
        DeckRng(ChaCha20Rng::from_seed(seed.0))
    }

    /// The next raw 32-bit word of the stream.
    pub fn next_word(&mut self) -> u32 {
        self.0.next_u32()
    }

    /// A uniform integer in `0..n`.
    ///
    /// # Panics
    /// If `n` is 0 (there is no integer to choose): a bug in the caller.
    pub fn below(&mut self, n: u32) -> u32 {
        assert!(n > 0, "below(0) has no answer");
        let span = 1u64 << 32;
        let limit = span - span % u64::from(n);
        loop {
            let x = u64::from(self.next_word());
            if x < limit {
                return (x % u64::from(n)) as u32;
            }
        }
    }

    /// A new seed of eight words from this stream (for a generator of its
    /// own, such as the future deals of a game drawn for a search).
    pub fn next_seed(&mut self) -> Seed {
        let mut seed = [0u8; 32];
        for chunk in seed.chunks_mut(4) {
            chunk.copy_from_slice(&self.next_word().to_le_bytes());
        }
        Seed(seed)
    }

    /// Shuffles `items` in place (Durstenfeld–Fisher–Yates, see module docs).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(u32::try_from(i + 1).expect("decks are small")) as usize;
            items.swap(i, j);
        }
    }
}

/// The JSON form of a generator: its seed and how many words it has drawn
/// (the stream is always 0: nothing sets another).
#[cfg(feature = "serde")]
mod wire {
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::DeckRng;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Position {
        /// The 32-byte seed as 64 lower-case hex digits.
        seed: String,
        /// Words drawn since the start of the stream (a `u64`: JSON readers
        /// that go through an intermediate value do not keep `u128`s).
        word_pos: u64,
    }

    impl Serialize for DeckRng {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            debug_assert_eq!(self.0.get_stream(), 0, "DeckRng never leaves stream 0");
            let seed = self.0.get_seed().iter().map(|b| format!("{b:02x}")).collect();
            let word_pos = u64::try_from(self.0.get_word_pos()).map_err(|_| S::Error::custom("generator past 2^64 words"))?;
            Position { seed, word_pos }.serialize(serializer)
        }
    }

    impl<'de> Deserialize<'de> for DeckRng {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let Position { seed, word_pos } = Position::deserialize(deserializer)?;
            let digits = seed.as_bytes();
            if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
                return Err(D::Error::custom("a generator's seed is 64 hex digits"));
            }
            let nibble = |d: u8| (d as char).to_digit(16).map_or(0, |n| n as u8);
            let mut bytes = [0u8; 32];
            for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
                *byte = (nibble(pair[0]) << 4) | nibble(pair[1]);
            }
            let mut rng = ChaCha20Rng::from_seed(bytes);
            rng.set_word_pos(u128::from(word_pos));
            Ok(DeckRng(rng))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(byte: u8) -> Seed {
        Seed([byte; 32])
    }

    /// ChaCha20 with an all-zero key, nonce 0, counter 0 (RFC 8439 A.1 test
    /// vector #1: keystream `76 b8 e0 ad a0 f1 3d 90 …`), read little-endian.
    #[test]
    fn generator_is_chacha20_keystream() {
        let mut rng = DeckRng::new(&seed(0));
        let words: Vec<u32> = (0..4).map(|_| rng.next_word()).collect();
        assert_eq!(words, [0xade0_b876, 0x903d_f1a0, 0xe56a_5d40, 0x28bd_8653]);
    }

    #[test]
    fn below_stays_in_range_and_is_deterministic() {
        let mut a = DeckRng::new(&seed(7));
        let mut b = DeckRng::new(&seed(7));
        for n in 1..200 {
            let x = a.below(n);
            assert!(x < n);
            assert_eq!(x, b.below(n));
        }
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = DeckRng::new(&seed(3));
        let mut deck: Vec<u32> = (0..52).collect();
        rng.shuffle(&mut deck);
        let mut sorted = deck.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..52).collect::<Vec<_>>());
        assert_ne!(deck, sorted, "52 cards left in order: not shuffled");
    }

    /// Golden: locks the shuffle algorithm. If this fails, every recorded game
    /// would re-deal differently: do not update it, bump the ruleset instead.
    #[test]
    fn shuffle_golden() {
        let mut rng = DeckRng::new(&seed(0));
        let mut deck: Vec<u32> = (0..20).collect();
        rng.shuffle(&mut deck);
        assert_eq!(deck, GOLDEN_20_SEED0);
        let mut rng = DeckRng::new(&seed(0xA5));
        let mut deck: Vec<u32> = (0..52).collect();
        rng.shuffle(&mut deck);
        assert_eq!(deck, GOLDEN_52_SEED_A5);
    }

    // Both computed by the independent Python reference `tools/reference_shuffle.py`.
    const GOLDEN_20_SEED0: [u32; 20] = [16, 0, 19, 3, 8, 6, 17, 15, 11, 7, 1, 10, 5, 2, 9, 18, 4, 12, 13, 14];
    const GOLDEN_52_SEED_A5: [u32; 52] = [
        9, 36, 39, 34, 17, 44, 33, 14, 29, 18, 30, 37, 2, 35, 23, 50, 0, 7, 1, 49, 3, 27, 15, 4, 11, 28, 38, 40, 41, 47, 43, 45, 6, 20, 8,
        21, 46, 10, 51, 42, 48, 25, 32, 13, 16, 24, 5, 19, 26, 22, 31, 12,
    ];

    /// A generator written and read back at any position (mid-block,
    /// block edges) equals the original and draws the same words after.
    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trip_continues_the_stream() {
        for drawn in [0usize, 1, 7, 15, 16, 17, 63, 64, 65, 100, 1000] {
            let mut rng = DeckRng::new(&seed(0x3C));
            for _ in 0..drawn {
                rng.next_word();
            }
            let json = serde_json::to_string(&rng).unwrap();
            let mut back: DeckRng = serde_json::from_str(&json).unwrap();
            assert_eq!(back, rng, "after {drawn} words");
            assert_eq!(serde_json::to_string(&back).unwrap(), json);
            for _ in 0..200 {
                assert_eq!(back.next_word(), rng.next_word(), "after {drawn} words");
            }
            // Through an intermediate value too (no u128 on the way).
            let value = serde_json::to_value(&rng).unwrap();
            assert_eq!(serde_json::from_value::<DeckRng>(value).unwrap(), rng);
        }
        let json = serde_json::to_string(&DeckRng::new(&seed(0xAB))).unwrap();
        assert_eq!(json, format!(r#"{{"seed":"{}","word_pos":0}}"#, "ab".repeat(32)));
        for bad in [
            r#"{"seed":"ab","word_pos":0}"#,
            r#"{"seed":"zz00000000000000000000000000000000000000000000000000000000000000","word_pos":0}"#,
            r#"{"seed":"+b00000000000000000000000000000000000000000000000000000000000000","word_pos":0}"#,
            r#"{"seed":"0000000000000000000000000000000000000000000000000000000000000000","word_pos":0,"stream":1}"#,
        ] {
            assert!(serde_json::from_str::<DeckRng>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seed_debug_hides_bytes() {
        assert_eq!(format!("{:?}", seed(0xAB)), "Seed(<secret>)");
    }
}
