#!/usr/bin/env python3
"""Independent reference of the project's shuffle (services/engine/src/rng.rs).

Pure-Python ChaCha20 (RFC 8439 block function, 64-bit counter from 0, nonce 0)
plus the documented rejection sampling and Fisher-Yates, so anyone can re-deal
a finished game from its published seed without Rust.

    python3 reference_shuffle.py SEED_HEX N   ->  the shuffled list 0..N-1
"""
import struct
import sys


def rotl(v, c):
    return ((v << c) & 0xFFFFFFFF) | (v >> (32 - c))


def quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF; s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF; s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = rotl(s[b] ^ s[c], 7)


def words(key):
    """ChaCha20 keystream as little-endian u32 words (key, nonce 0, counter 0..)."""
    k = list(struct.unpack("<8I", key))
    counter = 0
    while True:
        state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + k + [
            counter & 0xFFFFFFFF, counter >> 32, 0, 0]
        s = list(state)
        for _ in range(10):
            quarter(s, 0, 4, 8, 12); quarter(s, 1, 5, 9, 13)
            quarter(s, 2, 6, 10, 14); quarter(s, 3, 7, 11, 15)
            quarter(s, 0, 5, 10, 15); quarter(s, 1, 6, 11, 12)
            quarter(s, 2, 7, 8, 13); quarter(s, 3, 4, 9, 14)
        for i in range(16):
            yield (s[i] + state[i]) & 0xFFFFFFFF
        counter += 1


def below(stream, n):
    limit = (1 << 32) - (1 << 32) % n
    while True:
        x = next(stream)
        if x < limit:
            return x % n


def shuffle(stream, items):
    for i in range(len(items) - 1, 0, -1):
        j = below(stream, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


if __name__ == "__main__":
    seed = bytes.fromhex(sys.argv[1])
    assert len(seed) == 32
    print(shuffle(words(seed), list(range(int(sys.argv[2])))))
