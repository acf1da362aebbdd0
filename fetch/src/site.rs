//! Sites: the registrable domain of a host by the Public Suffix List (the
//! `psl` crate's copy, compiled in), so that callers can keep one site's
//! hosts together (a Spark job puts them in one task, under one set of
//! per-IP limits).

use crate::target::Target;

/// The registrable domain of `host` (a public suffix and one label more,
/// as the Public Suffix List's rules give it): `www.example.co.uk` ->
/// `example.co.uk`, `alice.github.io` -> `alice.github.io`. The host is
/// read as URLs read it (case folded, IDN in punycode, a trailing dot
/// dropped); `None` for an IP address, a public suffix itself (`co.uk`),
/// or no host at all.
///
/// ```
/// use robotsieve_fetch::registrable_domain;
///
/// assert_eq!(registrable_domain("www.Example.co.uk").as_deref(), Some("example.co.uk"));
/// assert_eq!(registrable_domain("alice.github.io").as_deref(), Some("alice.github.io"));
/// assert_eq!(registrable_domain("co.uk"), None);
/// assert_eq!(registrable_domain("127.0.0.1"), None);
/// ```
pub fn registrable_domain(host: &str) -> Option<String> {
    let host = host.trim().trim_end_matches('.');
    if host.is_empty() || host.contains(['/', '?', '#', '@']) || host.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    let target = Target::parse(&format!("http://{host}/")).ok()?;
    if target.host.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    let host = target.host.trim_end_matches('.');
    let domain = psl::domain_str(host)?;
    Some(domain.to_owned())
}

/// What keeps one site's fetches together: the registrable domain of the
/// host an input line names (an origin, a robots.txt URL or a bare host),
/// else that host (an IP address, a public suffix), else the line itself
/// (a line that names no origin).
pub fn site_of_line(line: &str) -> String {
    match crate::target::targets_of_line(line) {
        Ok(targets) => match targets.first() {
            Some(target) => registrable_domain(&target.host).unwrap_or_else(|| target.host.clone()),
            None => line.trim().to_owned(),
        },
        Err(_) => line.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrable_domains_follow_the_public_suffix_list() {
        let domain = |host: &str| registrable_domain(host);
        assert_eq!(domain("example.com").as_deref(), Some("example.com"));
        assert_eq!(domain("a.b.example.com.").as_deref(), Some("example.com"));
        assert_eq!(domain("www.bbc.co.uk").as_deref(), Some("bbc.co.uk"));
        assert_eq!(domain("co.uk"), None);
        // A private suffix: each user's site is a site of its own.
        assert_eq!(domain("alice.github.io").as_deref(), Some("alice.github.io"));
        assert_eq!(domain("x.alice.github.io").as_deref(), Some("alice.github.io"));
        assert_ne!(domain("alice.github.io"), domain("bob.github.io"));
        // IDN: read in punycode, under an IDN suffix too.
        assert_eq!(domain("www.bücher.de").as_deref(), Some("xn--bcher-kva.de"));
        assert_eq!(domain("www.例子.香港").as_deref(), domain("www.xn--fsqu00a.xn--j6w193g").as_deref());
        assert_eq!(domain("www.xn--fsqu00a.xn--j6w193g").as_deref(), Some("xn--fsqu00a.xn--j6w193g"));
        assert_eq!(domain("127.0.0.1"), None);
        assert_eq!(domain("::1"), None);
        assert_eq!(domain(""), None);
    }

    #[test]
    fn lines_are_kept_together_by_site() {
        let sites = [
            ("https://www.example.co.uk/robots.txt", "example.co.uk"),
            ("shop.example.co.uk:8080", "example.co.uk"),
            ("http://127.0.0.1:81/", "127.0.0.1"),
            ("not an origin", "not an origin"),
        ];
        for (line, site) in sites {
            assert_eq!(site_of_line(line), site, "{line}");
        }
    }
}
