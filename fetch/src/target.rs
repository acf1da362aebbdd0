//! What to fetch: input lines and redirect targets as URLs with a host to
//! connect to. This is the one module that reads URLs with the engine's
//! parser (origins, IDN to punycode, user info dropped) and resolves a
//! `Location` as `compile --corpus` follows it, so that the fetcher and the
//! compiler agree on every URL.

use robotsieve_core::url::{KeyBuf, Scheme};
use robotsieve_sources::corpus::resolve_location;

/// One URL to request: its normalised form and the parts a connection needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The URL as records name it: `scheme://host[:port]/path`, normalised
    /// (punycode host, no user info, no fragment).
    pub url: String,
    /// `http`, `https` or `ftp`.
    pub scheme: TargetScheme,
    /// The host to resolve: lower-case ASCII, IPv6 literals without brackets.
    pub host: String,
    /// The port to connect to (the scheme's default when none is written).
    pub port: u16,
    /// The `Host` header: host, and the port when it is not the default.
    pub authority: String,
    /// The path and query to request.
    pub path: String,
}

/// The schemes the fetcher knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetScheme {
    /// Plain HTTP.
    Http,
    /// HTTP over TLS.
    Https,
    /// FTP (an anonymous `RETR /robots.txt` in passive mode).
    Ftp,
}

impl Target {
    /// Parses an absolute URL; an error saying why when it is no http, https
    /// or ftp URL.
    pub fn parse(url: &str) -> Result<Target, String> {
        let mut buf = KeyBuf::new();
        let origin = buf.parse(url.as_bytes()).map_err(|e| e.to_string())?;
        let key = std::str::from_utf8(origin.key).map_err(|_| "origin is not ASCII".to_owned())?;
        let path = String::from_utf8_lossy(origin.path).into_owned();
        let scheme = match origin.scheme {
            Scheme::Http => TargetScheme::Http,
            Scheme::Https => TargetScheme::Https,
            Scheme::Ftp => TargetScheme::Ftp,
        };
        let host = String::from_utf8_lossy(origin.host()).into_owned();
        let port = origin.port.unwrap_or_else(|| origin.scheme.default_port());
        let authority = key.split_once("://").map_or(key, |(_, rest)| rest).to_owned();
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        Ok(Target { url: format!("{key}{path}"), scheme, host, port, authority, path })
    }

    /// The URL a `Location` answer from this target leads to, resolved as
    /// `compile --corpus` follows it; `None` when it names no URL robotsieve
    /// follows (another scheme, garbage).
    pub fn redirect(&self, location: &str) -> Option<Target> {
        let absolute = resolve_location(&self.url, location)?;
        Target::parse(std::str::from_utf8(&absolute).ok()?).ok()
    }

    /// The key of the origin this URL belongs to, `scheme://host[:port]`.
    pub fn origin_key(&self) -> &str {
        &self.url[..self.url.len() - self.path.len()]
    }
}

/// What one input line asks for: robots.txt targets, or why it names none.
pub fn targets_of_line(line: &str) -> Result<Vec<Target>, String> {
    let line = line.trim();
    let robots = |url: &str| -> Result<Target, String> {
        let target = Target::parse(url)?;
        match target.path.as_str() {
            "/" | "/robots.txt" => Target::parse(&format!("{}/robots.txt", target.origin_key())),
            other => Err(format!("{other} is neither / nor /robots.txt: not an origin")),
        }
    };
    if line.contains("://") {
        return Ok(vec![robots(line)?]);
    }
    // A bare host (`example.com`, `example.com:8080`, `[::1]:81`): both schemes.
    if line.contains(['/', '?', '#', '@']) || line.is_empty() {
        return Err("not an origin, a robots.txt URL or a host name".to_owned());
    }
    Ok(vec![robots(&format!("http://{line}"))?, robots(&format!("https://{line}"))?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_robots_txt_urls() {
        let urls = |line: &str| targets_of_line(line).map(|t| t.into_iter().map(|t| t.url).collect::<Vec<_>>());
        assert_eq!(urls("https://Example.com").unwrap(), ["https://example.com/robots.txt"]);
        assert_eq!(urls("https://user:pw@example.com:443/robots.txt").unwrap(), ["https://example.com/robots.txt"]);
        assert_eq!(
            urls("example.com:8080").unwrap(),
            ["http://example.com:8080/robots.txt", "https://example.com:8080/robots.txt"]
        );
        assert_eq!(urls("http://bücher.de/").unwrap(), ["http://xn--bcher-kva.de/robots.txt"]);
        assert!(urls("https://example.com/page").is_err());
        assert!(urls("mailto:x@example.com").is_err());
        assert!(urls("").is_err());
    }

    #[test]
    fn targets_carry_what_a_connection_needs() {
        let t = Target::parse("https://[::1]:8443/robots.txt").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.authority.as_str()), ("::1", 8443, "[::1]:8443"));
        let r = t.redirect("//other.example/x").unwrap();
        assert_eq!(r.url, "https://other.example/x");
        assert_eq!(t.redirect("/robots2.txt").unwrap().url, "https://[::1]:8443/robots2.txt");
    }
}
