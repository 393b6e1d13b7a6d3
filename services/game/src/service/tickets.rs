//! Stream tickets: how a browser follows a game live as its seat.
//!
//! A browser's `EventSource` cannot send an `Authorization` header, and a
//! seat token in a URL would land in access logs and browser history. So a
//! seat trades its token (in a header) for a ticket: short-lived, good for
//! one game and one seat, read-only (it opens that seat's live stream and
//! nothing else). A ticket is `{seat}.{generation}.{expiry ms}.{mac}`, the
//! MAC an HMAC-SHA-256 under a key drawn when the service starts, over the
//! game, the seat, the seat's generation (a ticket of a seat that changed
//! hands since opens nothing) and the expiry: the server keeps nothing per ticket, so tickets
//! cost no memory however many are asked for. A restart voids them (a
//! client then asks for a new one, as it does when one expires).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use ludo_engine::{Seat, Viewer};
use sha2::Sha256;

use super::{GameId, GameService, timestamp};
use crate::api::StreamTicket;
use crate::error::ServiceError;

/// How long a ticket may be used to open a stream. A stream once open
/// lasts as long as its connection; a reconnect after this needs a new one.
pub const TICKET_LIFETIME: Duration = Duration::from_secs(60);

/// Bytes of MAC a ticket carries (128 bits).
const MAC_BYTES: usize = 16;

/// What every MAC starts with, so a ticket's MAC can never be mistaken for
/// another use of the key.
const DOMAIN: &[u8] = b"ludo stream ticket v2\0";

/// The key tickets are signed with.
pub(super) struct TicketKey(Hmac<Sha256>);

impl TicketKey {
    /// A fresh random key.
    pub(super) fn random() -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS has randomness");
        TicketKey(Hmac::new_from_slice(&key).expect("HMAC takes any key length"))
    }

    fn mac(&self, game: &str, (seat, generation): (Seat, u32), expires_ms: u64) -> Hmac<Sha256> {
        let mut mac = self.0.clone();
        mac.update(DOMAIN);
        mac.update(game.as_bytes());
        mac.update(&[0, seat.0]);
        mac.update(&generation.to_be_bytes());
        mac.update(&expires_ms.to_be_bytes());
        mac
    }

    fn issue(&self, game: &str, holder: (Seat, u32), expires_ms: u64) -> String {
        let tag = self.mac(game, holder, expires_ms).finalize().into_bytes();
        format!("{}.{}.{expires_ms}.{}", holder.0.0, holder.1, hex::encode(&tag[..MAC_BYTES]))
    }

    /// The seat `ticket` opens in `game` at `now`, and the seat's
    /// generation it was issued at.
    fn check(&self, game: &str, ticket: &str, now: SystemTime) -> Result<(Seat, u32), ServiceError> {
        let invalid = || ServiceError::Unauthorized { reason: "this stream ticket is not valid for this game".into() };
        let mut parts = ticket.splitn(4, '.');
        let (Some(seat), Some(generation), Some(expires), Some(tag)) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(invalid());
        };
        let seat = seat.parse::<u8>().map(Seat).map_err(|_| invalid())?;
        let generation = generation.parse::<u32>().map_err(|_| invalid())?;
        let expires_ms = expires.parse::<u64>().map_err(|_| invalid())?;
        let tag = hex::decode(tag).map_err(|_| invalid())?;
        if tag.len() != MAC_BYTES {
            return Err(invalid());
        }
        // Constant time, and before the expiry: a forged ticket learns nothing.
        self.mac(game, (seat, generation), expires_ms).verify_truncated_left(&tag).map_err(|_| invalid())?;
        if millis(now) >= expires_ms {
            return Err(ServiceError::Unauthorized { reason: "this stream ticket has expired: ask for a new one".into() });
        }
        Ok((seat, generation))
    }
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl GameService {
    /// A ticket that opens game `id`'s live stream as the seat of `token`,
    /// for [`TICKET_LIFETIME`].
    ///
    /// # Errors
    /// `not_found`; `unauthorized` without a token of a seat of this game.
    pub async fn stream_ticket(&self, id: &GameId, token: Option<&str>) -> Result<StreamTicket, ServiceError> {
        let slot = self.slot(id).await?;
        // The token and the seat's generation from one state (see `watch`).
        let table = Arc::clone(&slot.current().table);
        let seat = slot.seat_at(&table, token)?;
        let generation = table.generation(seat);
        let expires = self.clock.now() + TICKET_LIFETIME;
        let expires_ms = millis(expires);
        Ok(StreamTicket {
            ticket: self.tickets.issue(&slot.meta.id, (seat, generation), expires_ms),
            seat,
            expires_at: timestamp(expires),
            expires_in_ms: u64::try_from(TICKET_LIFETIME.as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// Game `id`'s live stream from `from` as the seat `ticket` was issued
    /// for (see [`GameService::watch`]), while the seat stays in the hands
    /// it was issued to.
    ///
    /// # Errors
    /// As [`GameService::watch`]; `unauthorized` for an expired ticket or
    /// one of another game; `seat_revoked` once the seat changed hands.
    pub async fn watch_with_ticket(&self, id: &GameId, ticket: &str, from: u64) -> Result<super::Watch, ServiceError> {
        // On a shared store this reads what other servers appended: a seat
        // that changed hands there is seen here.
        let slot = self.slot(id).await?;
        // The MAC covers the game, the seat and its generation: a ticket
        // that checks out was issued here, for a seat of this game.
        let (seat, generation) = self.tickets.check(&slot.meta.id, ticket, self.clock.now())?;
        if slot.current().table.generation(seat) != generation {
            tracing::info!(game = %slot.meta.id, %seat, "a stream ticket of a seat that changed hands was refused");
            return Err(ServiceError::SeatRevoked { seat });
        }
        self.watch_as(slot, Viewer::Seat(seat), Some(generation), from).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: &str = "0190b5a4-0000-7000-8000-000000000000";

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn a_ticket_opens_its_seat_of_its_game_until_it_expires() {
        let key = TicketKey::random();
        let ticket = key.issue(GAME, (Seat(2), 3), 10_000);
        assert_eq!(key.check(GAME, &ticket, at(9_999)).unwrap(), (Seat(2), 3));
        let expired = key.check(GAME, &ticket, at(10_000)).unwrap_err();
        assert!(expired.to_string().contains("expired"), "{expired}");
    }

    #[test]
    fn a_ticket_changed_anywhere_or_for_another_game_or_key_is_refused() {
        let key = TicketKey::random();
        let ticket = key.issue(GAME, (Seat(1), 2), 10_000);
        let other_game = "0190b5a4-0000-7000-8000-000000000001";
        assert!(key.check(other_game, &ticket, at(0)).is_err(), "another game");
        assert!(TicketKey::random().check(GAME, &ticket, at(0)).is_err(), "another key (a restarted server)");
        let (seat, rest) = ticket.split_once('.').unwrap();
        assert_eq!(seat, "1");
        assert!(key.check(GAME, &format!("0.{rest}"), at(0)).is_err(), "another seat");
        let (generation, after) = rest.split_once('.').unwrap();
        assert_eq!(generation, "2");
        assert!(key.check(GAME, &format!("1.3.{after}"), at(0)).is_err(), "a later generation (the seat's next holder)");
        let (head, _) = after.split_once('.').unwrap();
        let tag = &ticket[ticket.len() - 2 * MAC_BYTES..];
        assert!(key.check(GAME, &format!("1.2.{}.{tag}", u64::MAX), at(0)).is_err(), "a later expiry");
        assert!(key.check(GAME, &format!("1.2.{head}.{}", &tag[..30]), at(0)).is_err(), "a shorter MAC");
        for junk in ["", "1", "1.2", "1.2.3", "x.1.1.00", "1.x.1.00", "1.1.x.00", "1.2.3.zz", "300.2.3.00"] {
            assert!(key.check(GAME, junk, at(0)).is_err(), "{junk:?}");
        }
    }
}
