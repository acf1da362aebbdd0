//! `--proxy URL`: an HTTP proxy, as curl's `-x`. `http://` targets are
//! sent to the proxy in absolute form (`GET http://host/robots.txt`);
//! `https://` targets go through a `CONNECT host:port` tunnel, with TLS end
//! to end inside it. Redirects are still followed by the fetcher, each hop
//! through the proxy. The URL's user info becomes a Basic
//! `Proxy-Authorization`, sent to the proxy only, never to an origin.
//!
//! The proxy resolves the targets' names, so the fetcher cannot check what
//! a name resolves to: through a proxy the address rule applies to IP
//! literals (in the input and in redirects), and the proxy must keep its
//! own rules for names. `ftp://` targets are not fetched through a proxy:
//! they get a status-0 `protocol` record.

use crate::record::{ErrorClass, FetchError};
use base64::Engine as _;
use std::fmt;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A proxy as `--proxy` names it: `http://[user:password@]host[:port]`
/// (port 1080 when none is written, as curl).
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    /// The proxy's host (name or IP literal, IPv6 without brackets).
    pub host: String,
    /// The proxy's port.
    pub port: u16,
    /// The `Proxy-Authorization` value (`Basic ...`) from the user info.
    authorization: Option<String>,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The credentials stay out of debug output and logs.
        f.debug_struct("Proxy")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("authorization", &self.authorization.as_ref().map(|_| "(hidden)"))
            .finish()
    }
}

/// Undoes `%XX` escapes (user info may escape `:` and `@`).
fn percent_decoded(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| format!("{text:?} holds a bad % escape"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{text:?} is not UTF-8 once unescaped"))
}

impl std::str::FromStr for Proxy {
    type Err = String;

    /// `http://[user:password@]host[:port][/]`; a URL without a scheme is
    /// read as `http://`, as curl reads it.
    fn from_str(text: &str) -> Result<Proxy, String> {
        let rest = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => return Err(format!("{text}: only http:// proxies are supported, not {scheme}://")),
            None => text,
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#']) {
            return Err(format!("{text}: a proxy URL has no path"));
        }
        let (user_info, authority) = match rest.rsplit_once('@') {
            Some((user_info, authority)) => (Some(user_info), authority),
            None => (None, rest),
        };
        let bad = || format!("{text}: not http://[user:password@]host[:port]");
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (host, port) = v6.split_once(']').ok_or_else(bad)?;
                (host, port.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(bad());
        }
        let port = match port {
            Some(port) => port.parse().map_err(|_| bad())?,
            None => 1080,
        };
        let authorization = match user_info {
            Some(user_info) => {
                let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
                let credentials = format!("{}:{}", percent_decoded(user)?, percent_decoded(password)?);
                Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials)))
            }
            None => None,
        };
        Ok(Proxy { host: host.to_ascii_lowercase(), port, authorization })
    }
}

impl Proxy {
    /// The `Proxy-Authorization` header's value, when the URL had user info.
    pub fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }

    /// The proxy's addresses, by the system's resolver: the operator named
    /// the proxy, so the address rule does not apply to it.
    pub async fn addresses(&self) -> Result<Vec<SocketAddr>, String> {
        let found = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("--proxy {}:{}: {e}", self.host, self.port))?;
        let addrs: Vec<SocketAddr> = found.collect();
        match addrs.is_empty() {
            true => Err(format!("--proxy {}:{}: no address", self.host, self.port)),
            false => Ok(addrs),
        }
    }

    /// Opens a `CONNECT authority` tunnel on `tcp`, a connection to the
    /// proxy; the stream then carries the target's own bytes (its TLS).
    pub async fn tunnel(&self, tcp: &mut TcpStream, authority: &str) -> Result<(), FetchError> {
        let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(authorization) = &self.authorization {
            head.push_str(&format!("Proxy-Authorization: {authorization}\r\n"));
        }
        head.push_str("\r\n");
        let failed =
            |e: std::io::Error| FetchError::new(ErrorClass::Connect, format!("proxy CONNECT {authority}: {e}"));
        tcp.write_all(head.as_bytes()).await.map_err(failed)?;
        // The answer's head, read byte by byte so that nothing of the
        // tunnel's own bytes is taken (a proxy answers before they come).
        let mut answer = Vec::new();
        while !answer.ends_with(b"\r\n\r\n") {
            if answer.len() > 16 << 10 {
                return Err(FetchError::new(ErrorClass::Protocol, "the proxy's CONNECT answer is longer than 16 KiB"));
            }
            let byte = tcp.read_u8().await.map_err(failed)?;
            answer.push(byte);
        }
        let status_line = String::from_utf8_lossy(&answer);
        let status_line = status_line.lines().next().unwrap_or("");
        match status_line.split(' ').nth(1).and_then(|s| s.parse::<u16>().ok()) {
            Some(200..=299) => Ok(()),
            Some(_) => Err(FetchError::new(
                ErrorClass::Connect,
                format!("the proxy answered CONNECT {authority} with {status_line:?}"),
            )),
            None => Err(FetchError::new(
                ErrorClass::Protocol,
                format!("the proxy's answer to CONNECT {authority} is no HTTP status line: {status_line:?}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_parse_as_curl_reads_them() {
        let p: Proxy = "http://proxy.example:3128".parse().unwrap();
        assert_eq!((p.host.as_str(), p.port, p.authorization()), ("proxy.example", 3128, None));
        let p: Proxy = "proxy.example".parse().unwrap();
        assert_eq!(p.port, 1080);
        let p: Proxy = "http://al%40ice:s%3Acret@[::1]:8080/".parse().unwrap();
        assert_eq!((p.host.as_str(), p.port), ("::1", 8080));
        // base64("al@ice:s:cret")
        assert_eq!(p.authorization(), Some("Basic YWxAaWNlOnM6Y3JldA=="));
        assert!(!format!("{p:?}").contains("YWxA"));
        assert!("https://proxy.example".parse::<Proxy>().unwrap_err().contains("only http://"));
        assert!("socks5://proxy.example".parse::<Proxy>().is_err());
        assert!("http://proxy.example:x".parse::<Proxy>().is_err());
        assert!("http://proxy.example/path".parse::<Proxy>().is_err());
    }
}
