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

    #[test]
    fn seed_debug_hides_bytes() {
        assert_eq!(format!("{:?}", seed(0xAB)), "Seed(<secret>)");
    }
}
