//! The address rule: a robots.txt comes from servers nobody trusts, so the
//! fetcher connects only to public unicast addresses unless an address was
//! named by the operator (`--resolve`, `--hosts-file`) or `--allow-private`
//! opens the rest. A site cannot point the fetcher at internal services, by
//! its DNS answer or by a redirect (to the cloud metadata address, say).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not fetched from by default, or `None` for a public
/// unicast address.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4_reason(v4),
            None => v6_reason(v6),
        },
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (127, ..) => "loopback",
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => "private",
        (169, 254, _) => "link-local",
        (0, ..) => "this network",
        (100, 64..=127, _) => "shared address space",
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "reserved",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, ..) => "multicast",
        (240..=255, ..) => "reserved",
        _ => return None,
    })
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    Some(match s[0] {
        _ if ip.is_loopback() => "loopback",
        _ if ip.is_unspecified() => "unspecified",
        0xfe80..=0xfebf => "link-local",
        0xfc00..=0xfdff => "private",
        0xff00..=0xffff => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        0x0064 if s[1] == 0xff9b => {
            return v4_reason(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
        }
        0x2002 => return v4_reason(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8)),
        0x0000..=0x1fff | 0x4000..=0xfbff => "reserved",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_named() {
        let reason = |s: &str| non_public_reason(s.parse().unwrap());
        assert_eq!(reason("127.0.0.1"), Some("loopback"));
        assert_eq!(reason("169.254.169.254"), Some("link-local"));
        assert_eq!(reason("10.1.2.3"), Some("private"));
        assert_eq!(reason("::1"), Some("loopback"));
        assert_eq!(reason("::ffff:192.168.0.1"), Some("private"));
        assert_eq!(reason("fd00::1"), Some("private"));
        assert_eq!(reason("93.184.216.34"), None);
        assert_eq!(reason("2606:2800:220:1::1"), None);
    }
}
