//! What a game keeps outside its public log: the seed and the seats' token
//! hashes. Stored as the stream's sealed side data.

use ludo_engine::{Seat, Seed};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of every seat token, so a leaked token is recognisable in logs and scanners.
const TOKEN_PREFIX: &str = "ludo_";

/// A game's secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct Secrets {
    /// The game's 32-byte seed (published once the game is over).
    pub seed: Seed,
    /// SHA-256 of each seat's token, indexed by seat.
    pub token_hashes: Vec<[u8; 32]>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(<hidden>)")
    }
}

#[derive(Serialize, Deserialize)]
struct StoredSecrets {
    format: u32,
    seed: String,
    token_hashes: Vec<String>,
}

/// Fresh secrets for a game of `players` seats, with the seats' tokens in clear
/// (returned once to the creator, never stored).
///
/// # Errors
/// When the operating system's random source fails.
pub fn generate(players: usize) -> Result<(Secrets, Vec<String>), getrandom::Error> {
    let seed = Seed(random_bytes()?);
    let mut tokens = Vec::with_capacity(players);
    let mut token_hashes = Vec::with_capacity(players);
    for _ in 0..players {
        let token = format!("{TOKEN_PREFIX}{}", hex::encode(random_bytes()?));
        token_hashes.push(hash_token(&token));
        tokens.push(token);
    }
    Ok((Secrets { seed, token_hashes }, tokens))
}

/// 32 bytes from the operating system's random source.
///
/// # Errors
/// When the random source fails.
pub fn random_bytes() -> Result<[u8; 32], getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes)
}

fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Secrets {
    /// The seat whose token this is, comparing against every seat's hash in
    /// constant time (no early exit), so timing tells nothing about tokens.
    #[must_use]
    pub fn seat_of(&self, token: &str) -> Option<Seat> {
        let presented = hash_token(token);
        let mut found: Option<Seat> = None;
        for (i, stored) in self.token_hashes.iter().enumerate() {
            let equal: bool = presented.ct_eq(stored).into();
            if equal {
                found = Some(Seat(i as u8));
            }
        }
        found
    }

    /// Hex SHA-256 of the seed: the commitment published at creation.
    #[must_use]
    pub fn seed_commitment(&self) -> String {
        crate::record::sha256_hex(&self.seed.0)
    }

    /// The bytes kept as the stream's sealed data.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let stored =
            StoredSecrets { format: 1, seed: hex::encode(self.seed.0), token_hashes: self.token_hashes.iter().map(hex::encode).collect() };
        serde_json::to_vec(&stored).expect("secrets serialize")
    }

    /// Parses sealed data.
    ///
    /// # Errors
    /// When the bytes are not secrets of a known format.
    pub fn from_bytes(bytes: &[u8]) -> Result<Secrets, String> {
        let stored: StoredSecrets = serde_json::from_slice(bytes).map_err(|e| format!("unreadable secrets: {e}"))?;
        if stored.format != 1 {
            return Err(format!("unknown secrets format {}", stored.format));
        }
        let seed = decode32(&stored.seed)?;
        let token_hashes = stored.token_hashes.iter().map(|h| decode32(h)).collect::<Result<_, _>>()?;
        Ok(Secrets { seed: Seed(seed), token_hashes })
    }
}

fn decode32(text: &str) -> Result<[u8; 32], String> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(text, &mut out).map_err(|e| format!("bad hex: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_opens_only_its_seat() {
        let (secrets, tokens) = generate(3).unwrap();
        for (i, token) in tokens.iter().enumerate() {
            assert!(token.starts_with(TOKEN_PREFIX));
            assert_eq!(secrets.seat_of(token), Some(Seat(i as u8)));
        }
        assert_eq!(secrets.seat_of("ludo_nope"), None);
        assert_eq!(secrets.seat_of(""), None);
        let mut almost = tokens[0].clone();
        almost.pop();
        assert_eq!(secrets.seat_of(&almost), None);
    }

    #[test]
    fn secrets_round_trip_and_never_print() {
        let (secrets, _) = generate(2).unwrap();
        let back = Secrets::from_bytes(&secrets.to_bytes()).unwrap();
        assert_eq!(back, secrets);
        assert_eq!(format!("{secrets:?}"), "Secrets(<hidden>)");
    }

    #[test]
    fn commitment_is_sha256_of_the_seed() {
        let secrets = Secrets { seed: Seed([0; 32]), token_hashes: vec![] };
        // SHA-256 of 32 zero bytes.
        assert_eq!(secrets.seed_commitment(), "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925");
    }
}
