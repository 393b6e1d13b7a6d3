//! Which addresses are public: none that the IANA IPv4 and IPv6
//! Special-Purpose Address Registries (RFC 6890 and its successors) set
//! apart, no multicast, and no IPv6 form of an IPv4 address that is not
//! public itself.
//!
//! The blocks are the `antissrf` crate's named lists (generated from
//! Microsoft AntiSSRF's, which follow both registries), so a new registry
//! entry arrives with an update of that crate; the two deprecated IPv6
//! forms of IPv4 addresses it lacks are added here. Beyond the registries'
//! "not globally reachable" entries, anycast infrastructure is refused too
//! (AS112, AMT, the PCP and TURN anycast addresses in `192.0.0.0/24` and
//! `2001::/23`, Azure's WireServer): whichever instance is nearest answers,
//! possibly one inside the operator's own network, and no app receives
//! webhooks there.
//!
//! IPv6 addresses that carry an IPv4 address:
//! - IPv4-mapped (`::ffff:0:0/96`) *is* that IPv4 address (a dual-stack
//!   socket connects to it): judged as it.
//! - NAT64's well-known prefix (`64:ff9b::/96`, RFC 6052) and 6to4
//!   (`2002::/16`, RFC 3056) are reached through the IPv4 address they
//!   embed: judged as it. An IPv6-only server behind DNS64 reaches an
//!   IPv4-only receiver only through the former.
//! - IPv4-compatible (`::/96`, deprecated), IPv4-translated
//!   (`::ffff:0:0:0/96`, obsolete), NAT64's local-use prefix
//!   (`64:ff9b:1::/48`, whose IPv4 address sits where the local prefix
//!   length says) and Teredo (`2001::/32`, addresses of clients behind
//!   NATs, within the IETF protocol assignments) are refused whatever
//!   they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use antissrf::ip_address_ranges as iana;
use ipnet::IpNet;

/// Why an address is not public.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotPublic {
    /// It lies in this special-purpose block.
    Reserved(&'static str),
    /// It is this IPv6 form of an IPv4 address that lies in a special-purpose block.
    Carries {
        /// `NAT64` or `6to4`.
        form: &'static str,
        /// The IPv4 address it carries.
        ipv4: Ipv4Addr,
        /// The block that address lies in.
        block: &'static str,
    },
}

impl std::fmt::Display for NotPublic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotPublic::Reserved(block) => f.write_str(block),
            NotPublic::Carries { form, ipv4, block } => write!(f, "the {form} form of {ipv4}, which is {block}"),
        }
    }
}

/// Why `ip` is not public, or `None` when it is.
pub fn not_public(ip: IpAddr) -> Option<NotPublic> {
    let ip = ip.to_canonical();
    if let IpAddr::V6(v6) = ip
        && let Some((form, ipv4)) = reached_through(v6)
    {
        return reserved(ipv4.into()).map(|block| NotPublic::Carries { form, ipv4, block });
    }
    reserved(ip).map(NotPublic::Reserved)
}

/// The IPv4 address an IPv6 address is reached through: NAT64's
/// well-known prefix carries it in the last 32 bits (RFC 6052 §2.2, a /96),
/// 6to4 in the 32 bits after `2002` (RFC 3056 §2).
fn reached_through(ip: Ipv6Addr) -> Option<(&'static str, Ipv4Addr)> {
    let ipv4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match ip.segments() {
        [0x0064, 0xff9b, 0, 0, 0, 0, high, low] => Some(("NAT64", ipv4(high, low))),
        [0x2002, high, low, ..] => Some(("6to4", ipv4(high, low))),
        _ => None,
    }
}

/// The block `ip` lies in: the first that holds it, so the narrower
/// entries (named more precisely) come before the blocks around them.
fn reserved(ip: IpAddr) -> Option<&'static str> {
    BLOCKS.iter().find(|(range, _)| range.contains(&ip)).map(|&(_, block)| block)
}

/// Every special-purpose block, named for a refusal's message.
static BLOCKS: LazyLock<Vec<(IpNet, &'static str)>> = LazyLock::new(|| {
    let named: [(&[&str], &str); 29] = [
        (iana::LOOPBACK, "loopback"),
        (iana::UNSPECIFIED, "unspecified (\"this network\")"),
        // RFC 4291 §2.5.5.1: "deprecated"; some stacks still tunnel them
        // to the IPv4 address inside. (Not in antissrf's lists, which have
        // only `::/128` and `::1/128` of this block.)
        (&["::/96"], "IPv4-compatible (deprecated)"),
        // RFC 2765 §2.1, obsoleted by RFC 6145, which has no such form.
        // (Not in antissrf's lists.)
        (&["::ffff:0:0:0/96"], "IPv4-translated (obsolete)"),
        (iana::PRIVATEUSE, "private-use"),
        (iana::SHAREDADDRESSSPACE, "shared address space (carrier-grade NAT)"),
        (iana::IMDS, "the cloud instance metadata service"),
        (iana::LINKLOCAL, "link-local"),
        (iana::WIRESERVER, "Azure's WireServer"),
        (iana::DUMMY, "a dummy address"),
        (iana::IPV4SERVICECONTINUITY, "IPv4 service continuity (DS-Lite)"),
        (iana::TEREDO, "Teredo"),
        (iana::BENCHMARKING, "benchmarking"),
        (iana::AMT, "AMT relay anycast"),
        (iana::AS112, "AS112 DNS anycast"),
        (iana::ORCHIDV2, "ORCHIDv2 (identifiers, not locators)"),
        (iana::DETSPREFIX, "drone remote ID tags (identifiers, not locators)"),
        (iana::DEPRECATED, "deprecated (6to4 relay anycast, ORCHID)"),
        (iana::IETFPROTOCOL, "IETF protocol assignments"),
        (iana::DOCUMENTATION, "documentation"),
        (iana::DISCARDONLY, "discard-only"),
        (iana::IPV4IPV6TRANSLAT, "local-use IPv4/IPv6 translation"),
        (iana::SIXTO4, "6to4"),
        (iana::SRV6SID, "SRv6 segment identifiers"),
        (iana::UNIQUELOCAL, "unique-local"),
        (iana::SITELOCAL, "site-local (deprecated)"),
        (iana::MULTICAST, "multicast"),
        (iana::BROADCAST, "broadcast"),
        (iana::RESERVED, "reserved"),
    ];
    named
        .iter()
        .flat_map(|&(ranges, block)| ranges.iter().map(move |range| (range.parse().expect("the special-purpose ranges parse"), block)))
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The first and last address of a range.
    fn ends(range: IpNet) -> [IpAddr; 2] {
        [range.network(), range.broadcast()]
    }

    /// antissrf's recommended deny list is refused in whole, except the
    /// two blocks reached through the IPv4 address they carry, which are
    /// refused exactly when that address is: a block the crate adds in a
    /// later version fails here until it is named in [`BLOCKS`].
    #[test]
    fn every_block_of_the_recommended_deny_list_is_refused_or_judged_by_its_ipv4_address() {
        let judged: [IpNet; 2] = ["64:ff9b::/96".parse().unwrap(), "2002::/16".parse().unwrap()];
        for range in iana::RECOMMENDED_LATEST {
            let range: IpNet = range.parse().unwrap();
            for ip in ends(range) {
                let verdict = not_public(ip);
                if judged.contains(&range) {
                    let IpAddr::V6(v6) = ip else { unreachable!("IPv6 blocks") };
                    let (_, ipv4) = reached_through(v6).expect("a judged form carries an IPv4 address");
                    assert_eq!(verdict.is_some(), reserved(ipv4.into()).is_some(), "{ip} is judged by {ipv4}");
                } else {
                    assert!(verdict.is_some(), "{ip} (in {range}) was public");
                }
            }
        }
    }

    #[test]
    fn an_ipv6_form_of_an_ipv4_address_is_refused_with_the_address_it_carries() {
        let refusal = |text: &str| not_public(text.parse().unwrap()).map(|why| why.to_string());
        assert_eq!(refusal("2002:7f00:1::").as_deref(), Some("the 6to4 form of 127.0.0.1, which is loopback"));
        assert_eq!(
            refusal("64:ff9b::a9fe:a9fe").as_deref(),
            Some("the NAT64 form of 169.254.169.254, which is the cloud instance metadata service")
        );
        assert_eq!(refusal("::ffff:10.0.0.1").as_deref(), Some("private-use"), "an IPv4-mapped address is that IPv4 address");
        assert_eq!(refusal("::127.0.0.1").as_deref(), Some("IPv4-compatible (deprecated)"));
        assert_eq!(refusal("::ffff:0:7f00:1").as_deref(), Some("IPv4-translated (obsolete)"));
        assert_eq!(refusal("2001::1").as_deref(), Some("Teredo"));
        assert_eq!(refusal("100::1").as_deref(), Some("discard-only"));
        assert_eq!(refusal("64:ff9b::808:808"), None, "NAT64 of a public address");
        assert_eq!(refusal("2002:808:808::1"), None, "6to4 of a public address");
    }
}
