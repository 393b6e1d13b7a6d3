//! What a game keeps outside its public log: the seed, the hashes of the
//! seats' first tokens, of the game-admin token and of the seats'
//! invitations. Stored as the stream's sealed side data, written once with
//! record 0 (tokens issued later, by a join or a reissue, have their hash in
//! the log's seat records instead: see `table`).

use ludo_engine::{Seat, Seed};
use ludo_record::table::hash_token;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

/// Prefix of every seat token, so a leaked token is recognisable in logs and scanners.
const TOKEN_PREFIX: &str = "ludo_";
/// Prefix of a game-admin token.
const ADMIN_PREFIX: &str = "ludo_admin_";
/// Prefix of an invitation code.
const INVITATION_PREFIX: &str = "ludo_inv_";

/// A game's secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct Secrets {
    /// The game's 32-byte seed (published once the game is over).
    pub seed: Seed,
    /// SHA-256 of each seat's first token, indexed by seat.
    pub token_hashes: Vec<[u8; 32]>,
    /// SHA-256 of the game-admin token (games created before it existed have none).
    pub admin_hash: Option<[u8; 32]>,
    /// SHA-256 of each seat's invitation code, indexed by seat (only games
    /// created with open seats have them).
    pub invitation_hashes: Vec<[u8; 32]>,
    /// The game's webhook, with its signing secret (kept here, never in the log).
    pub webhook: Option<crate::webhook::Webhook>,
    /// For a game imported from an export rather than created here: where
    /// it came from (format 3 on; a game imported before has no seat token
    /// and reads as imported from an unknown origin).
    pub imported: Option<ludo_transparency::Imported>,
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
    /// Format 2 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    admin_hash: Option<String>,
    /// Format 2 on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    invitation_hashes: Vec<String>,
    /// Format 2 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    webhook: Option<StoredWebhook>,
    /// Format 3 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    imported: Option<ludo_transparency::Imported>,
}

#[derive(Serialize, Deserialize)]
struct StoredWebhook {
    url: String,
    secret: String,
}

/// The sealed data's format this version writes (1: seed and token hashes
/// only; 2: the admin token's hash, invitations, the webhook; 3: where an
/// imported game came from).
const SECRETS_FORMAT: u32 = 3;

/// What the creator of a game receives in clear, once: the server keeps
/// only hashes.
#[derive(Debug)]
pub struct Credentials {
    /// Each seat's first token.
    pub tokens: Vec<String>,
    /// The game-admin token.
    pub admin: String,
    /// Each seat's invitation code (empty unless asked for).
    pub invitations: Vec<String>,
}

/// Fresh secrets for a game of `players` seats, with invitation codes when
/// `invitations` is set, and the credentials in clear (returned once to
/// the creator, never stored).
///
/// # Errors
/// When the operating system's random source fails.
pub fn generate_with(players: usize, invitations: bool) -> Result<(Secrets, Credentials), getrandom::Error> {
    let seed = Seed(random_bytes()?);
    let (tokens, token_hashes) = credentials(TOKEN_PREFIX, players)?;
    let (mut admin, admin_hash) = credentials(ADMIN_PREFIX, 1)?;
    let (codes, invitation_hashes) = credentials(INVITATION_PREFIX, if invitations { players } else { 0 })?;
    let secrets = Secrets { seed, token_hashes, admin_hash: admin_hash.first().copied(), invitation_hashes, webhook: None, imported: None };
    Ok((secrets, Credentials { tokens, admin: admin.remove(0), invitations: codes }))
}

/// Fresh secrets for a game of `players` seats, with the seats' tokens in clear.
///
/// # Errors
/// When the operating system's random source fails.
pub fn generate(players: usize) -> Result<(Secrets, Vec<String>), getrandom::Error> {
    generate_with(players, false).map(|(secrets, credentials)| (secrets, credentials.tokens))
}

/// A fresh seat token, and its hash.
///
/// # Errors
/// When the operating system's random source fails.
pub fn new_token() -> Result<(String, [u8; 32]), getrandom::Error> {
    let (mut tokens, hashes) = credentials(TOKEN_PREFIX, 1)?;
    Ok((tokens.remove(0), hashes[0]))
}

/// `count` fresh secrets with `prefix`, and their hashes.
fn credentials(prefix: &str, count: usize) -> Result<(Vec<String>, Vec<[u8; 32]>), getrandom::Error> {
    let mut clear = Vec::with_capacity(count);
    let mut hashes = Vec::with_capacity(count);
    for _ in 0..count {
        let secret = format!("{prefix}{}", hex::encode(random_bytes()?));
        hashes.push(hash_token(&secret));
        clear.push(secret);
    }
    Ok((clear, hashes))
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

impl Secrets {
    /// The seat whose first token this is, comparing against every seat's
    /// hash in constant time (no early exit), so timing tells nothing about
    /// tokens. (A live game asks its table, which knows the tokens issued since.)
    #[must_use]
    pub fn seat_of(&self, token: &str) -> Option<Seat> {
        matching(&self.token_hashes, token)
    }

    /// Whether `token` is the game-admin token.
    #[must_use]
    pub fn is_admin(&self, token: &str) -> bool {
        self.admin_hash.is_some_and(|hash| bool::from(hash_token(token).ct_eq(&hash)))
    }

    /// The seat whose invitation `code` is.
    #[must_use]
    pub fn invited_seat(&self, code: &str) -> Option<Seat> {
        matching(&self.invitation_hashes, code)
    }

    /// Hex SHA-256 of the seed: the commitment published at creation.
    #[must_use]
    pub fn seed_commitment(&self) -> String {
        ludo_record::record::sha256_hex(&self.seed.0)
    }

    /// The bytes kept as the stream's sealed data.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let stored = StoredSecrets {
            format: SECRETS_FORMAT,
            seed: hex::encode(self.seed.0),
            token_hashes: self.token_hashes.iter().map(hex::encode).collect(),
            admin_hash: self.admin_hash.map(hex::encode),
            invitation_hashes: self.invitation_hashes.iter().map(hex::encode).collect(),
            webhook: self.webhook.as_ref().map(|hook| StoredWebhook { url: hook.url.clone(), secret: hex::encode(hook.secret) }),
            imported: self.imported.clone(),
        };
        serde_json::to_vec(&stored).expect("secrets serialize")
    }

    /// Parses sealed data.
    ///
    /// # Errors
    /// When the bytes are not secrets of a known format.
    pub fn from_bytes(bytes: &[u8]) -> Result<Secrets, String> {
        let stored: StoredSecrets = serde_json::from_slice(bytes).map_err(|e| format!("unreadable secrets: {e}"))?;
        if !(1..=SECRETS_FORMAT).contains(&stored.format) {
            return Err(format!("unknown secrets format {}", stored.format));
        }
        let seed = decode32(&stored.seed)?;
        let token_hashes: Vec<[u8; 32]> = stored.token_hashes.iter().map(|h| decode32(h)).collect::<Result<_, _>>()?;
        let admin_hash = stored.admin_hash.as_deref().map(decode32).transpose()?;
        let invitation_hashes = stored.invitation_hashes.iter().map(|h| decode32(h)).collect::<Result<_, _>>()?;
        let webhook = match stored.webhook {
            Some(hook) => Some(crate::webhook::Webhook { url: hook.url, secret: decode32(&hook.secret)? }),
            None => None,
        };
        // Only an import leaves a game without seat tokens: one imported
        // before imports were marked came from nobody knows where.
        let imported = match stored.imported {
            None if stored.format < 3 && token_hashes.is_empty() => Some(ludo_transparency::Imported { key: None }),
            imported => imported,
        };
        Ok(Secrets { seed: Seed(seed), token_hashes, admin_hash, invitation_hashes, webhook, imported })
    }
}

/// The index of the hash `secret` has among `hashes`, compared in constant time.
fn matching(hashes: &[[u8; 32]], secret: &str) -> Option<Seat> {
    let presented = hash_token(secret);
    let mut found: Option<Seat> = None;
    for (i, stored) in hashes.iter().enumerate() {
        if bool::from(presented.ct_eq(stored)) {
            found = u8::try_from(i).ok().map(Seat);
        }
    }
    found
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
    fn admin_tokens_and_invitations_open_what_they_were_made_for() {
        let (secrets, made) = generate_with(3, true).unwrap();
        assert!(made.admin.starts_with(ADMIN_PREFIX) && secrets.is_admin(&made.admin));
        assert!(!secrets.is_admin(&made.tokens[0]), "a seat's token is not the admin's");
        for (i, code) in made.invitations.iter().enumerate() {
            assert!(code.starts_with(INVITATION_PREFIX));
            assert_eq!(secrets.invited_seat(code), Some(Seat(i as u8)));
        }
        assert_eq!(secrets.invited_seat(&made.tokens[1]), None);
        assert_eq!(Secrets::from_bytes(&secrets.to_bytes()).unwrap(), secrets);
        let hooked = Secrets { webhook: Some(crate::webhook::Webhook { url: "https://example.com/h".into(), secret: [7; 32] }), ..secrets };
        assert_eq!(Secrets::from_bytes(&hooked.to_bytes()).unwrap(), hooked);
    }

    #[test]
    fn format_1_secrets_still_read() {
        let old = br#"{"format":1,"seed":"0000000000000000000000000000000000000000000000000000000000000000","token_hashes":["00000000000000000000000000000000000000000000000000000000000000aa"]}"#;
        let secrets = Secrets::from_bytes(old).unwrap();
        assert_eq!((secrets.admin_hash, secrets.invitation_hashes.len(), secrets.imported), (None, 0, None));
    }

    #[test]
    fn a_game_imported_before_imports_were_marked_reads_as_imported_from_nowhere_known() {
        // What an import wrote then: the seed, and no seat token.
        let old = br#"{"format":2,"seed":"0000000000000000000000000000000000000000000000000000000000000000","token_hashes":[]}"#;
        assert_eq!(Secrets::from_bytes(old).unwrap().imported, Some(ludo_transparency::Imported { key: None }));
        let marked = Secrets {
            imported: Some(ludo_transparency::Imported { key: Some("example.com/ludo+01234567+AQID".into()) }),
            ..Secrets::from_bytes(old).unwrap()
        };
        assert_eq!(Secrets::from_bytes(&marked.to_bytes()).unwrap(), marked);
    }

    #[test]
    fn commitment_is_sha256_of_the_seed() {
        let secrets = Secrets {
            seed: Seed([0; 32]),
            token_hashes: vec![],
            admin_hash: None,
            invitation_hashes: vec![],
            webhook: None,
            imported: None,
        };
        // SHA-256 of 32 zero bytes.
        assert_eq!(secrets.seed_commitment(), "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925");
    }
}
