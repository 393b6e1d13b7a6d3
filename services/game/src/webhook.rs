//! Turn notifications for apps: a game's webhook, called when it becomes a
//! seat's turn and when the game ends.
//!
//! The URL is given when the game is created and kept with its secrets
//! (never in the public log), with a secret the creator receives once. Each
//! call is a `POST` of a small JSON body, signed with HMAC-SHA256 over the
//! body under that secret (`X-Ludo-Signature: sha256=<hex>`), so the app can
//! tell the server's calls from anyone else's. The service only says what
//! to send ([`Delivery`]); a [`WebhookSink`] (the server's, which retries
//! with backoff) sends it, never holding up the move that caused it.
//!
//! A webhook must not become a way into the server's own network: by
//! default a URL may only name, or resolve to, public addresses — none of
//! the special-purpose blocks of the IANA registries (loopback, private,
//! link-local with the cloud metadata service, shared, documentation …),
//! no multicast, and no IPv6 form of an IPv4 address that is not public
//! itself (the `address` module says which forms are judged by the IPv4
//! address they carry and which are refused outright) — unless the
//! operator allows a range explicitly ([`WebhookPolicy::allowing`], `ludo
//! serve --webhook-allow`). The sink checks again the addresses a name
//! resolves to when it connects.

mod address;

use std::net::{IpAddr, Ipv4Addr};

use hmac::{Hmac, KeyInit, Mac};
use ipnet::IpNet;
use serde::Serialize;
use sha2::Sha256;

use ludo_record::status::Status;

pub use address::NotPublic;

/// A comma-separated list of addresses or CIDR ranges
/// (`10.0.0.0/8,192.168.1.7,fd00::/8`); empty or `none` for none.
///
/// # Errors
/// Naming the first item that is neither.
pub fn parse_ranges(text: &str) -> Result<Vec<IpNet>, String> {
    let text = text.trim();
    if text.is_empty() || text == "none" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(str::trim)
        .map(|item| {
            item.parse::<IpNet>()
                .or_else(|_| item.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("{item:?} is not an IP address or CIDR range (like 10.0.0.0/8)"))
        })
        .collect()
}

/// Longest webhook URL accepted.
pub const MAX_URL_BYTES: usize = 2048;

/// Which addresses webhooks may call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebhookPolicy {
    /// Ranges allowed although not public (a local receiver, a private network).
    allow: Vec<IpNet>,
}

impl WebhookPolicy {
    /// Public addresses, and also `allow`.
    #[must_use]
    pub fn allowing(allow: Vec<IpNet>) -> WebhookPolicy {
        WebhookPolicy { allow }
    }

    /// The ranges allowed beyond public addresses.
    #[must_use]
    pub fn allowed(&self) -> &[IpNet] {
        &self.allow
    }

    /// Whether a webhook may call `ip`.
    #[must_use]
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.refusal(ip).is_none()
    }

    /// Why a webhook may not call `ip`, or `None` when it may: it is
    /// public, or in a range the operator allows (an IPv4-mapped address
    /// is matched as its IPv4 address; another IPv6 form of an IPv4
    /// address only as itself).
    #[must_use]
    pub fn refusal(&self, ip: IpAddr) -> Option<NotPublic> {
        let ip = ip.to_canonical();
        if self.allow.iter().any(|range| range.contains(&ip)) {
            return None;
        }
        address::not_public(ip)
    }

    /// A webhook URL, checked: `http` or `https`, a host, no credentials,
    /// and (for an address, or `localhost`) an address this policy allows.
    /// A name is checked again, against what it resolves to, when called.
    ///
    /// # Errors
    /// Why the URL is refused.
    pub fn check_url(&self, text: &str) -> Result<url::Url, String> {
        if text.len() > MAX_URL_BYTES {
            return Err(format!("a webhook URL is at most {MAX_URL_BYTES} bytes"));
        }
        let url = url::Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("a webhook is called over http or https, not {}", url.scheme()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("a webhook URL carries no credentials: the calls are signed instead".into());
        }
        let ip = match url.host() {
            None => return Err("a webhook URL names a host".into()),
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(name)) if is_localhost(name) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Some(url::Host::Domain(_)) => return Ok(url),
        };
        match self.refusal(ip) {
            Some(why) => Err(format!("{ip} is not a public address ({why}); the server's operator may allow it: --webhook-allow")),
            None => Ok(url),
        }
    }
}

impl std::str::FromStr for WebhookPolicy {
    type Err = String;

    /// The ranges allowed beyond public addresses, as [`parse_ranges`] reads them.
    fn from_str(text: &str) -> Result<Self, String> {
        parse_ranges(text).map(WebhookPolicy::allowing)
    }
}

impl std::fmt::Display for WebhookPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.allow.is_empty() {
            return f.write_str("none");
        }
        let items: Vec<String> = self.allow.iter().map(ToString::to_string).collect();
        f.write_str(&items.join(","))
    }
}

fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// A game's webhook, as kept with its secrets.
#[derive(Clone, PartialEq, Eq)]
pub struct Webhook {
    /// Where to `POST`.
    pub url: String,
    /// The key of the calls' HMAC-SHA256 signatures.
    pub secret: [u8; 32],
}

impl Webhook {
    /// The signing key as the creator received it (hex): its text is the
    /// HMAC key.
    #[must_use]
    pub fn key(&self) -> String {
        hex::encode(self.secret)
    }
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook").field("url", &self.url).finish_non_exhaustive()
    }
}

/// What a webhook call says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Notice {
    /// `turn` (it became these seats' turn) or `game_over`.
    pub event: &'static str,
    /// The game's id.
    pub game_id: String,
    /// The version of the record that caused the call.
    pub version: u64,
    /// The seats whose turn it became (`turn`); empty for `game_over`.
    pub seats: Vec<ludo_engine::Seat>,
    /// How the game stands (with the seats' deadlines in a game with a clock).
    pub status: Status,
    /// When the record was made (RFC 3339).
    pub at: String,
}

/// One call to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Where.
    pub url: String,
    /// The JSON body.
    pub body: Vec<u8>,
    /// `sha256=` and the hex HMAC-SHA256 of the body under the game's secret.
    pub signature: String,
    /// The event (`X-Ludo-Event`).
    pub event: &'static str,
    /// Names this call for the receiver's deduplication (`X-Ludo-Delivery`):
    /// a retry carries the same.
    pub id: String,
}

impl Delivery {
    /// The call that tells `webhook` of `notice`.
    #[must_use]
    pub fn of(webhook: &Webhook, notice: &Notice) -> Delivery {
        let body = serde_json::to_vec(notice).expect("notices serialize");
        Delivery {
            url: webhook.url.clone(),
            signature: sign(webhook.key().as_bytes(), &body),
            event: notice.event,
            id: format!("{}:{}:{}", notice.game_id, notice.version, notice.event),
            body,
        }
    }
}

/// `sha256=` and the hex HMAC-SHA256 of `body` under `secret`: what a
/// receiver computes to check a call.
#[must_use]
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Sends deliveries (the server's sink retries them with backoff). Must
/// not block: it is called right after a record is appended.
pub trait WebhookSink: Send + Sync + 'static {
    /// Sends `delivery`, now or later.
    fn deliver(&self, delivery: Delivery);
}

/// The calls a change from `before` to `after` makes: `turn` for the seats
/// whose turn it became (those a person plays), `game_over` once it ended.
#[must_use]
pub fn notices(
    before: Option<&Status>,
    after: &Status,
    people: impl Fn(ludo_engine::Seat) -> bool,
) -> Vec<(&'static str, Vec<ludo_engine::Seat>)> {
    let was_over = before.is_some_and(Status::is_finished);
    if after.is_finished() {
        return if was_over { Vec::new() } else { vec![("game_over", Vec::new())] };
    }
    let had: &[ludo_engine::Seat] = before.map_or(&[], Status::to_move);
    let new: Vec<_> = after.to_move().iter().copied().filter(|seat| !had.contains(seat) && people(*seat)).collect();
    if new.is_empty() { Vec::new() } else { vec![("turn", new)] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludo_engine::Seat;

    #[test]
    fn only_public_addresses_by_default() {
        let policy = WebhookPolicy::default();
        for refused in [
            "http://127.0.0.1/hook",
            "http://localhost:8080/",
            "http://api.localhost/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[64:ff9b::a00:1]/",
            "ftp://example.com/",
            "file:///etc/passwd",
            "http://user:pw@example.com/",
            "not a url",
        ] {
            assert!(policy.check_url(refused).is_err(), "{refused} was allowed");
        }
        for allowed in ["https://example.com/hook", "http://93.184.215.14:8080/x", "https://[2606:4700::1111]/"] {
            assert!(policy.check_url(allowed).is_ok(), "{allowed} was refused");
        }
        let local = WebhookPolicy::allowing(vec!["127.0.0.0/8".parse().unwrap()]);
        assert!(local.check_url("http://127.0.0.1:9000/hook").is_ok());
        assert!(local.check_url("http://localhost:9000/hook").is_ok());
        assert!(local.check_url("http://10.0.0.1/").is_err(), "only the range allowed");
    }

    /// One address of every block of the IANA IPv4 and IPv6 Special-Purpose
    /// Address Registries (and multicast), and of every IPv6 form that
    /// embeds an internal IPv4 address: none is called by default.
    #[test]
    fn no_special_purpose_address_and_no_ipv6_form_of_an_internal_one_is_public() {
        let policy = WebhookPolicy::default();
        for refused in [
            // IPv4 (RFC 6890 and successors).
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.254",
            "192.0.0.1",
            "192.0.0.8",
            "192.0.0.9",
            "192.0.0.170",
            "192.0.2.1",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.168.1.1",
            "192.175.48.1",
            "198.18.0.1",
            "198.19.255.254",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "168.63.129.16",
            // IPv6.
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:0:7f00:1",
            "::ffff:0:808:808",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::808:808",
            "100::1",
            "100:0:0:1::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:1::1",
            "2001:2::1",
            "2001:3::1",
            "2001:4:112::1",
            "2001:10::1",
            "2001:20::1",
            "2001:30::1",
            "2001:db8::1",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2002:c0a8:101::1",
            "2002:a9fe:a9fe::1",
            "2620:4f:8000::1",
            "3fff::1",
            "3fff:fff:ffff::1",
            "5f00::1",
            "fc00::1",
            "fd00::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
        ] {
            let ip: IpAddr = refused.parse().unwrap();
            assert!(!policy.allows(ip), "{refused} was allowed");
            let host = if ip.is_ipv6() { format!("[{ip}]") } else { ip.to_string() };
            assert!(policy.check_url(&format!("http://{host}/hook")).is_err(), "{refused} was allowed in a URL");
        }
        // Public addresses; and the NAT64 (RFC 6052) and 6to4 (RFC 3056)
        // forms of a public IPv4 address, judged by that address: an
        // IPv6-only server behind DNS64 reaches IPv4-only receivers only
        // through the former.
        for allowed in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "192.0.3.1",
            "198.20.0.1",
            "2606:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:4860:4860::8888",
            "3fff:1000::1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            let ip: IpAddr = allowed.parse().unwrap();
            assert!(policy.allows(ip), "{allowed} was refused");
        }
        // The operator's ranges still open what they name, and only that.
        let private = WebhookPolicy::allowing(vec!["10.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()]);
        for allowed in ["10.1.2.3", "::ffff:10.1.2.3", "fd00::1"] {
            assert!(private.allows(allowed.parse().unwrap()), "{allowed} was refused");
        }
        for refused in ["127.0.0.1", "::127.0.0.1", "fc00::1", "2002:7f00:1::"] {
            assert!(!private.allows(refused.parse().unwrap()), "{refused} was allowed");
        }
    }

    #[test]
    fn signatures_are_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        let mac = sign(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(mac, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn calls_come_when_a_persons_turn_begins_and_when_the_game_ends() {
        let turn = |seats: &[u8]| Status::InProgress { to_move: seats.iter().map(|&s| Seat(s)).collect(), clock: None };
        let everyone = |_| true;
        assert_eq!(notices(None, &turn(&[0]), everyone), vec![("turn", vec![Seat(0)])]);
        assert_eq!(notices(Some(&turn(&[0])), &turn(&[0]), everyone), vec![], "the same seat goes on");
        assert_eq!(notices(Some(&turn(&[0])), &turn(&[1]), |seat| seat != Seat(1)), vec![], "a bot's turn calls nobody");
        let waiting = Status::Waiting { open_seats: vec![Seat(1)] };
        assert_eq!(notices(None, &waiting, everyone), vec![]);
        assert_eq!(notices(Some(&waiting), &turn(&[1]), everyone), vec![("turn", vec![Seat(1)])]);
        assert_eq!(notices(Some(&turn(&[1])), &Status::Cancelled, everyone), vec![("game_over", vec![])]);
        assert_eq!(notices(Some(&Status::Cancelled), &Status::Cancelled, everyone), vec![]);
    }
}
