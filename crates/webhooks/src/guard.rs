//! The private-address (SSRF) guard.
//!
//! Webhook URLs are chosen by customers, so the service must not be usable to
//! reach its own network: loopback, private ranges, link-local (including the
//! cloud metadata endpoints) and other non-public addresses are refused.
//! The check runs on the addresses a host name resolves to, inside the DNS
//! resolver the HTTP client connects with, so a name that resolves to a
//! public address when validated and to a private one when used (DNS
//! rebinding) is still refused. IP-literal hosts, which skip the resolver,
//! are checked before sending.

use std::error::Error;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why `ip` must not be a webhook target, or `None` if it is allowed.
///
/// The reason is a short kind such as `"loopback"`, `"private"`,
/// `"link-local"`, `"carrier-grade NAT"`, `"unspecified"`, `"broadcast"`,
/// `"multicast"`, `"documentation"`, `"benchmarking"`, `"reserved"`,
/// `"unique-local"`, `"site-local"` or `"cloud metadata"`, fit for
/// "refused: {ip} is a {kind} address".
///
/// IPv6 forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d` and 6to4 `2002:aabb:ccdd::/48`) are judged by the
/// embedded IPv4 address.
///
/// ```
/// use billpay_webhooks::forbidden_reason;
/// assert_eq!(forbidden_reason("127.0.0.1".parse().unwrap()), Some("loopback"));
/// assert_eq!(forbidden_reason("::ffff:10.0.0.1".parse().unwrap()), Some("private"));
/// assert_eq!(forbidden_reason("8.8.8.8".parse().unwrap()), None);
/// ```
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => v4_reason(ip),
        IpAddr::V6(ip) => v6_reason(ip),
    }
}

/// Cloud instance metadata endpoints (all inside ranges refused anyway; named
/// so the error says what they are).
const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(169, 254, 169, 254), // AWS, GCP, Azure, OpenStack, ...
    Ipv4Addr::new(169, 254, 170, 2),   // AWS ECS task metadata
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
];
const METADATA_V6: [Ipv6Addr; 1] = [
    Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254), // AWS IMDS over IPv6
];

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    if METADATA_V4.contains(&ip) {
        return Some("cloud metadata");
    }
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_broadcast() => "broadcast",
        (0, ..) => "reserved", // "this network", 0.0.0.0/8
        (127, ..) => "loopback",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "private",
        (169, 254, _) => "link-local",
        (100, 64..=127, _) => "carrier-grade NAT",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (192, 0, 0) | (192, 88, 99) => "reserved", // IETF protocol assignments, 6to4 relay
        (224..=239, ..) => "multicast",
        (240..=255, ..) => "reserved", // 240.0.0.0/4, "future use"
        _ => return None,
    };
    Some(reason)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if METADATA_V6.contains(&ip) {
        return Some("cloud metadata");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        // IPv4-mapped ::ffff:a.b.c.d
        [0, 0, 0, 0, 0, 0xffff, hi, lo]
        // IPv4-compatible ::a.b.c.d (deprecated; :: and ::1 handled above)
        | [0, 0, 0, 0, 0, 0, hi, lo]
        // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765)
        | [0, 0, 0, 0, 0xffff, 0, hi, lo]
        // NAT64 well-known prefix 64:ff9b::/96
        | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return v4_reason(embedded(hi, lo)),
        // 6to4 2002:aabb:ccdd::/48
        [0x2002, hi, lo, ..] => {
            if let Some(reason) = v4_reason(embedded(hi, lo)) {
                return Some(reason);
            }
        }
        _ => {}
    }
    let reason = match s[0] {
        x if x & 0xffc0 == 0xfe80 => "link-local",    // fe80::/10
        x if x & 0xffc0 == 0xfec0 => "site-local",    // fec0::/10 (deprecated)
        x if x & 0xfe00 == 0xfc00 => "unique-local",  // fc00::/7
        x if x & 0xff00 == 0xff00 => "multicast",     // ff00::/8
        x if x & 0xfff0 == 0x3ff0 => "documentation", // 3fff::/20 (RFC 9637)
        0x2001 if s[1] == 0x0db8 => "documentation",  // 2001:db8::/32
        0x0064 if s[1] == 0xff9b && s[2] == 1 => "private", // 64:ff9b:1::/48, local-use NAT64
        0x0100 if s[1..4] == [0, 0, 0] => "reserved", // 100::/64, discard-only
        _ => return None,
    };
    Some(reason)
}

/// A delivery refused because the target address is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) ip: IpAddr,
    pub(crate) kind: &'static str,
}

impl Refused {
    /// `Some` if `ip` is forbidden.
    pub(crate) fn check(ip: IpAddr) -> Option<Refused> {
        forbidden_reason(ip).map(|kind| Refused { ip, kind })
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let article = if self.kind.starts_with("unspecified") {
            "an"
        } else {
            "a"
        };
        write!(f, "refused: {} is {article} {} address", self.ip, self.kind)
    }
}

impl Error for Refused {}

/// A host name that could not be resolved.
#[derive(Debug)]
pub(crate) struct LookupFailed {
    pub(crate) host: String,
    pub(crate) reason: String,
}

impl fmt::Display for LookupFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DNS lookup failed for {}: {}", self.host, self.reason)
    }
}

impl Error for LookupFailed {}

/// The resolver the delivery client connects with: the system resolver, and
/// then, unless private targets are allowed, a refusal if ANY resolved
/// address is forbidden (not just the one that would be tried first).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let looked_up = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map(Iterator::collect::<Vec<SocketAddr>>);
            let addrs = match looked_up {
                Ok(addrs) => addrs,
                Err(err) => {
                    return Err(LookupFailed {
                        host,
                        reason: err.to_string(),
                    }
                    .into());
                }
            };
            if addrs.is_empty() {
                return Err(LookupFailed {
                    host,
                    reason: "no addresses".to_owned(),
                }
                .into());
            }
            if !allow_private
                && let Some(refused) = addrs.iter().find_map(|addr| Refused::check(addr.ip()))
            {
                return Err(refused.into());
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(ip: &str) -> Option<&'static str> {
        forbidden_reason(ip.parse().expect(ip))
    }

    #[test]
    fn ipv4_ranges() {
        let cases = [
            ("0.0.0.0", Some("unspecified")),
            ("0.1.2.3", Some("reserved")),
            ("127.0.0.1", Some("loopback")),
            ("127.255.255.254", Some("loopback")),
            ("10.0.0.1", Some("private")),
            ("10.255.255.255", Some("private")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.255", Some("private")),
            ("172.15.255.255", None),
            ("172.32.0.1", None),
            ("192.168.1.1", Some("private")),
            ("192.169.0.1", None),
            ("169.254.0.1", Some("link-local")),
            ("169.254.169.254", Some("cloud metadata")),
            ("169.254.170.2", Some("cloud metadata")),
            ("100.64.0.1", Some("carrier-grade NAT")),
            ("100.127.255.255", Some("carrier-grade NAT")),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("100.100.100.200", Some("cloud metadata")),
            ("255.255.255.255", Some("broadcast")),
            ("224.0.0.1", Some("multicast")),
            ("239.255.255.250", Some("multicast")),
            ("240.0.0.1", Some("reserved")),
            ("192.0.2.10", Some("documentation")),
            ("198.51.100.10", Some("documentation")),
            ("203.0.113.10", Some("documentation")),
            ("198.18.0.1", Some("benchmarking")),
            ("192.0.0.8", Some("reserved")),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("93.184.216.34", None),
            ("11.0.0.1", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(reason(ip), expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_ranges() {
        let cases = [
            ("::", Some("unspecified")),
            ("::1", Some("loopback")),
            ("fe80::1", Some("link-local")),
            ("febf:ffff::1", Some("link-local")),
            ("fec0::1", Some("site-local")),
            ("fc00::1", Some("unique-local")),
            ("fdff:ffff::1", Some("unique-local")),
            ("fd00:ec2::254", Some("cloud metadata")),
            ("ff02::1", Some("multicast")),
            ("2001:db8::1", Some("documentation")),
            ("3fff::1", Some("documentation")),
            ("100::1", Some("reserved")),
            ("64:ff9b:1::1", Some("private")),
            ("2001:4860:4860::8888", None),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001::1", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(reason(ip), expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_embedding_ipv4() {
        let cases = [
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:7f00:1", Some("loopback")),
            ("::ffff:10.1.2.3", Some("private")),
            ("::ffff:169.254.169.254", Some("cloud metadata")),
            ("::ffff:0.0.0.0", Some("unspecified")),
            ("::127.0.0.1", Some("loopback")),
            ("::192.168.0.1", Some("private")),
            ("::ffff:0:127.0.0.1", Some("loopback")),
            ("64:ff9b::10.0.0.1", Some("private")),
            ("64:ff9b::169.254.169.254", Some("cloud metadata")),
            ("2002:7f00:1::1", Some("loopback")),
            ("2002:a9fe:a9fe::", Some("cloud metadata")),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::8.8.8.8", None),
            ("2002:808:808::1", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(reason(ip), expected, "{ip}");
        }
    }

    #[test]
    fn refused_message() {
        let refused = Refused::check("127.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(
            refused.to_string(),
            "refused: 127.0.0.1 is a loopback address"
        );
        let refused = Refused::check("0.0.0.0".parse().unwrap()).unwrap();
        assert_eq!(
            refused.to_string(),
            "refused: 0.0.0.0 is an unspecified address"
        );
        assert_eq!(Refused::check("8.8.8.8".parse().unwrap()), None);
    }

    #[tokio::test]
    async fn resolver_refuses_localhost() {
        let resolver = GuardedResolver {
            allow_private: false,
        };
        let err = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost must be refused"),
            Err(err) => err,
        };
        let refused = err.downcast_ref::<Refused>().expect("a Refused error");
        assert_eq!(refused.kind, "loopback");
    }

    #[tokio::test]
    async fn resolver_allows_localhost_when_private_allowed() {
        let resolver = GuardedResolver {
            allow_private: true,
        };
        let addrs: Vec<SocketAddr> = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => addrs.collect(),
            Err(err) => panic!("{err}"),
        };
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        assert!(!addrs.is_empty());
    }
}
