//! The complete WHATWG reading of an http, https or ftp URL: what
//! [`KeyBuf::parse`](super::KeyBuf::parse) falls back to for every URL its
//! fast path does not settle (tabs and newlines, backslashes, percent-escapes
//! or non-ASCII bytes in the host, IPv4 and IPv6 addresses, `xn--` labels,
//! dot segments, bytes the fetcher percent-encodes).
//!
//! It follows the URL Standard's basic URL parser (<https://url.spec.whatwg.org/>)
//! for a special scheme and no base URL, state by state, with one deliberate
//! exception: the scheme must be followed by two slashes (`/` or `\`, in any
//! mix), see [`UrlError::MissingSlashes`]. Each step is written for this case
//! only (no base URL, no state override, no file scheme).

use super::{parse_port, write_decimal, Scheme, UrlError};
use std::net::Ipv4Addr;

/// Where the parts of a URL lie once the complete parser has read it.
pub(super) struct Complete {
    pub(super) scheme: Scheme,
    pub(super) port: Option<u16>,
    /// The length of the serialised host in the key.
    pub(super) host_len: usize,
}

/// Buffers the complete parser reuses between URLs.
#[derive(Clone, Debug, Default)]
pub(super) struct Buffers {
    /// The URL without its tabs and newlines (when it had any).
    clean: Vec<u8>,
    /// The percent-decoded host.
    host: Vec<u8>,
}

/// Whether `b` is a tab or newline, which the standard removes from anywhere in a URL.
fn is_tab_or_newline(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r')
}

/// Reads `url` (already stripped of leading and trailing C0 controls and
/// spaces) completely: writes its origin key into `key` and its request path
/// into `path` (hex digits of escapes upper-cased, as patterns are escaped).
pub(super) fn parse(
    url: &[u8],
    buffers: &mut Buffers,
    key: &mut Vec<u8>,
    path: &mut Vec<u8>,
) -> Result<Complete, UrlError> {
    let Buffers { clean, host: decoded } = buffers;
    let url = if memchr::memchr3(b'\t', b'\n', b'\r', url).is_some() {
        clean.clear();
        clean.extend(url.iter().copied().filter(|&b| !is_tab_or_newline(b)));
        &clean[..]
    } else {
        url
    };

    // Scheme state: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
    let colon = super::scheme_end(url).ok_or(UrlError::NotAbsolute)?;
    let scheme = Scheme::from_name(&url[..colon]).ok_or(UrlError::UnsupportedScheme)?;

    // Special authority slashes: the standard takes one or no slash as well
    // when no base URL is around; robotsieve does not (see MissingSlashes).
    let after_scheme = &url[colon + 1..];
    if !(after_scheme.len() >= 2 && is_slash(after_scheme[0]) && is_slash(after_scheme[1])) {
        return Err(UrlError::MissingSlashes);
    }
    // Special authority ignore slashes state: any further slashes are skipped.
    let authority_start = colon + 1 + after_scheme.iter().position(|&b| !is_slash(b)).unwrap_or(after_scheme.len());

    // Authority state: up to the first `/`, `\`, `?` or `#`; the user info
    // runs to the last `@` and is dropped.
    let authority_end = url[authority_start..]
        .iter()
        .position(|&b| matches!(b, b'/' | b'\\' | b'?' | b'#'))
        .map_or(url.len(), |p| authority_start + p);
    let authority = &url[authority_start..authority_end];
    let host_port = match authority.iter().rposition(|&b| b == b'@') {
        Some(at) => &authority[at + 1..],
        None => authority,
    };

    // Host state: the first `:` outside brackets starts the port.
    let mut inside_brackets = false;
    let mut colon = None;
    for (i, &b) in host_port.iter().enumerate() {
        match b {
            b'[' => inside_brackets = true,
            b']' => inside_brackets = false,
            b':' if !inside_brackets => {
                colon = Some(i);
                break;
            }
            _ => {}
        }
    }
    let (host, port_text) = match colon {
        Some(c) => (&host_port[..c], &host_port[c + 1..]),
        None => (host_port, &b""[..]),
    };
    if host.is_empty() {
        return Err(UrlError::EmptyHost);
    }
    // Port state: digits, at most 65535; the scheme's default is no port.
    let port = match port_text {
        [] => None,
        text => Some(parse_port(text)?),
    }
    .filter(|&p| p != scheme.default_port());

    key.clear();
    key.extend_from_slice(scheme.as_str().as_bytes());
    key.extend_from_slice(b"://");
    write_host(host, decoded, key)?;
    let host_len = key.len() - scheme.as_str().len() - 3;
    if let Some(port) = port {
        key.push(b':');
        write_decimal(key, port);
    }

    let rest = &url[authority_end..];
    let rest = &rest[..memchr::memchr(b'#', rest).unwrap_or(rest.len())];
    path.clear();
    write_path_and_query(rest, path);
    Ok(Complete { scheme, port, host_len })
}

fn is_slash(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

// ---------------------------------------------------------------------------
// Hosts.
// ---------------------------------------------------------------------------

/// The host parser for a special scheme: an IPv6 address in brackets, else a
/// domain (percent-decoded, UTS #46 to ASCII, forbidden code points refused)
/// that becomes an IPv4 address when it ends in a number. Appends the
/// serialised host to `out`.
fn write_host(host: &[u8], decoded: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), UrlError> {
    if host[0] == b'[' {
        let inner = host.strip_prefix(b"[").and_then(|h| h.strip_suffix(b"]")).ok_or(UrlError::InvalidIpv6)?;
        let pieces = parse_ipv6(inner).ok_or(UrlError::InvalidIpv6)?;
        out.push(b'[');
        write_ipv6(&pieces, out);
        out.push(b']');
        return Ok(());
    }
    decoded.clear();
    percent_decode_into(host, decoded);
    // The standard checks forbidden code points after UTS #46, which maps no
    // ASCII code point but upper-case letters: checking the ASCII bytes first
    // gives the same answer and lets the error name the byte.
    if let Some(&b) = decoded.iter().find(|&&b| b.is_ascii() && is_forbidden_domain_byte(b)) {
        return Err(UrlError::ForbiddenHostCodePoint(b));
    }
    if decoded.is_ascii() && !has_punycode_label(decoded) {
        // UTS #46 maps no ASCII but upper-case letters, and checks nothing
        // else in ASCII labels that are not `xn--` (hyphens and lengths are
        // not checked for URLs): lower-casing is the whole mapping.
        decoded.make_ascii_lowercase();
        return write_domain(decoded, out);
    }
    if std::str::from_utf8(decoded).is_err() {
        return Err(UrlError::HostNotUtf8);
    }
    let ascii = idna::domain_to_ascii_cow(decoded, idna::AsciiDenyList::URL).map_err(|_| {
        if decoded.is_ascii() {
            UrlError::InvalidPunycode
        } else {
            UrlError::InvalidIdn
        }
    })?;
    write_domain(ascii.as_bytes(), out)
}

/// Whether a label of `domain` starts with `xn--` (either case).
fn has_punycode_label(domain: &[u8]) -> bool {
    domain.split(|&b| b == b'.').any(|label| label.len() >= 4 && label[..4].eq_ignore_ascii_case(b"xn--"))
}

/// Appends a domain UTS #46 gave (lower-case ASCII): as an IPv4 address in
/// dotted decimal when it ends in a number.
fn write_domain(ascii: &[u8], out: &mut Vec<u8>) -> Result<(), UrlError> {
    if ascii.is_empty() {
        return Err(UrlError::EmptyHost);
    }
    if ends_in_a_number(ascii) {
        let address = parse_ipv4(ascii).ok_or(UrlError::InvalidIpv4)?;
        use std::io::Write as _;
        write!(out, "{address}").expect("writing to a Vec cannot fail");
    } else {
        out.extend_from_slice(ascii);
    }
    Ok(())
}

/// A forbidden domain code point of the standard that is ASCII: C0 controls,
/// space, `#`, `%`, `/`, `:`, `<`, `>`, `?`, `@`, `[`, `\`, `]`, `^`, `|` and DEL.
fn is_forbidden_domain_byte(b: u8) -> bool {
    b <= 0x20 || b == 0x7F || b"#%/:<>?@[\\]^|".contains(&b)
}

/// Percent-decodes `input` into `out`: `%` and two hex digits become their
/// byte; any other `%` stays.
fn percent_decode_into(input: &[u8], out: &mut Vec<u8>) {
    if memchr::memchr(b'%', input).is_none() {
        out.extend_from_slice(input);
        return;
    }
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%' {
            if let (Some(hi), Some(lo)) = (input.get(i + 1).and_then(hex_value), input.get(i + 2).and_then(hex_value)) {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
        }
        out.push(input[i]);
        i += 1;
    }
}

fn hex_value(b: &u8) -> Option<u8> {
    char::from(*b).to_digit(16).map(|d| d as u8)
}

/// The ends-in-a-number checker: whether the last label (a final empty label
/// dropped) is all digits or parses as an IPv4 number (`0x` hex included).
pub(super) fn ends_in_a_number(domain: &[u8]) -> bool {
    let mut labels = domain.rsplit(|&b| b == b'.');
    let mut last = labels.next().unwrap_or_default();
    if last.is_empty() {
        match labels.next() {
            Some(before) => last = before,
            None => return false,
        }
    }
    (!last.is_empty() && last.iter().all(u8::is_ascii_digit)) || parse_ipv4_number(last).is_some()
}

/// The IPv4 number parser: `0x` or `0X` and hex, `0` and octal, else
/// decimal. `Some(None)` is a valid number too large for 32 bits.
fn parse_ipv4_number(text: &[u8]) -> Option<Option<u32>> {
    if text.is_empty() {
        return None;
    }
    let (digits, radix) = match text {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        [b'0', rest @ ..] if !rest.is_empty() => (rest, 8),
        _ => (text, 10),
    };
    if digits.is_empty() {
        return Some(Some(0));
    }
    let mut value: u64 = 0;
    for &b in digits {
        let digit = char::from(b).to_digit(radix)?;
        // Saturate: past 32 bits only "too large" matters, not the value.
        value = (value * u64::from(radix) + u64::from(digit)).min(1 << 40);
    }
    Some(u32::try_from(value).ok())
}

/// The IPv4 parser: up to four numbers separated by dots (a final empty
/// label dropped); all but the last below 256, the last filling the rest.
fn parse_ipv4(domain: &[u8]) -> Option<Ipv4Addr> {
    let domain = domain.strip_suffix(b".").unwrap_or(domain);
    let mut numbers = [0u32; 4];
    let mut count = 0;
    for part in domain.split(|&b| b == b'.') {
        if count == 4 {
            return None;
        }
        numbers[count] = parse_ipv4_number(part)??;
        count += 1;
    }
    let (last, leading) = numbers[..count].split_last()?;
    if leading.iter().any(|&n| n > 255) || u64::from(*last) >= 1u64 << (8 * (4 - leading.len())) {
        return None;
    }
    let address = leading.iter().enumerate().fold(*last, |address, (i, &n)| address + (n << (8 * (3 - i))));
    Some(Ipv4Addr::from(address))
}

/// The IPv6 parser: eight 16-bit pieces, `::` once for a run of zeros, an
/// IPv4 address in dotted decimal (no leading zeros) for the last two.
fn parse_ipv6(input: &[u8]) -> Option<[u16; 8]> {
    let mut pieces = [0u16; 8];
    let mut piece = 0;
    let mut compress = None;
    let mut i = 0;
    let at = |i: usize| input.get(i).copied();
    if at(0) == Some(b':') {
        if at(1) != Some(b':') {
            return None;
        }
        i = 2;
        piece = 1;
        compress = Some(1);
    }
    while i < input.len() {
        if piece == 8 {
            return None;
        }
        if at(i) == Some(b':') {
            if compress.is_some() {
                return None;
            }
            i += 1;
            piece += 1;
            compress = Some(piece);
            continue;
        }
        let (mut value, mut length) = (0u16, 0);
        while length < 4 {
            match at(i).and_then(|b| char::from(b).to_digit(16)) {
                Some(digit) => {
                    value = value * 16 + digit as u16;
                    i += 1;
                    length += 1;
                }
                None => break,
            }
        }
        match at(i) {
            Some(b'.') => {
                if length == 0 || piece > 6 {
                    return None;
                }
                i -= length;
                return parse_ipv4_in_ipv6(&input[i..], pieces, piece, compress);
            }
            Some(b':') => {
                i += 1;
                if i == input.len() {
                    return None;
                }
            }
            Some(_) => return None,
            None => {}
        }
        pieces[piece] = value;
        piece += 1;
    }
    finish_ipv6(pieces, piece, compress)
}

/// The IPv4 part of an IPv6 address, from `input` on, into pieces `piece`
/// and `piece + 1`.
fn parse_ipv4_in_ipv6(
    input: &[u8],
    mut pieces: [u16; 8],
    mut piece: usize,
    compress: Option<usize>,
) -> Option<[u16; 8]> {
    let mut numbers_seen = 0;
    let mut i = 0;
    while i < input.len() {
        if numbers_seen > 0 {
            if input[i] == b'.' && numbers_seen < 4 {
                i += 1;
            } else {
                return None;
            }
        }
        let mut number: Option<u16> = None;
        while let Some(digit) = input.get(i).filter(|b| b.is_ascii_digit()).map(|b| u16::from(b - b'0')) {
            number = match number {
                None => Some(digit),
                Some(0) => return None,
                Some(n) if n * 10 + digit > 255 => return None,
                Some(n) => Some(n * 10 + digit),
            };
            i += 1;
        }
        pieces[piece] = pieces[piece] * 0x100 + number?;
        numbers_seen += 1;
        if numbers_seen == 2 || numbers_seen == 4 {
            piece += 1;
        }
    }
    if numbers_seen != 4 {
        return None;
    }
    finish_ipv6(pieces, piece, compress)
}

/// Moves the pieces after a `::` to the end, or requires all eight.
fn finish_ipv6(mut pieces: [u16; 8], piece: usize, compress: Option<usize>) -> Option<[u16; 8]> {
    match compress {
        Some(compress) => {
            let moved = piece - compress;
            let tail: Vec<u16> = pieces[compress..piece].to_vec();
            pieces[compress..piece].fill(0);
            pieces[8 - moved..].copy_from_slice(&tail);
            Some(pieces)
        }
        None if piece == 8 => Some(pieces),
        None => None,
    }
}

/// The IPv6 serialiser: lower-case hex without leading zeros, the first
/// longest run of two or more zero pieces written `::`.
fn write_ipv6(pieces: &[u16; 8], out: &mut Vec<u8>) {
    use std::io::Write as _;
    let (mut best, mut best_len) = (None, 1);
    let mut i = 0;
    while i < 8 {
        let run = pieces[i..].iter().take_while(|&&p| p == 0).count();
        if run > best_len {
            (best, best_len) = (Some(i), run);
        }
        i += run.max(1);
    }
    let mut i = 0;
    while i < 8 {
        if Some(i) == best {
            out.extend_from_slice(if i == 0 { b"::" } else { b":" });
            i += best_len;
            continue;
        }
        write!(out, "{:x}", pieces[i]).expect("writing to a Vec cannot fail");
        if i < 7 {
            out.push(b':');
        }
        i += 1;
    }
}

// ---------------------------------------------------------------------------
// Path and query.
// ---------------------------------------------------------------------------

/// What [`encode_into`] does with a byte.
const COPY: u8 = 0;
const ENCODE: u8 = 1;
const PERCENT: u8 = 2;

/// The action for each byte in a path segment: the path percent-encode set
/// (C0 controls, space, `"`, `#`, `<`, `>`, `?`, `` ` ``, `{`, `}`, DEL and
/// every non-ASCII byte) is encoded.
static PATH_ACTIONS: [u8; 256] = actions(b"\"#<>?`{}");

/// The action for each byte of a query: the special-query percent-encode set
/// (C0 controls, space, `"`, `#`, `<`, `>`, `'`, DEL and every non-ASCII byte).
static QUERY_ACTIONS: [u8; 256] = actions(b"\"#<>'");

const fn actions(encoded: &[u8]) -> [u8; 256] {
    let mut table = [COPY; 256];
    let mut b = 0;
    while b < 256 {
        if b <= 0x20 || b >= 0x7F {
            table[b] = ENCODE;
        }
        b += 1;
    }
    let mut i = 0;
    while i < encoded.len() {
        table[encoded[i] as usize] = ENCODE;
        i += 1;
    }
    table[b'%' as usize] = PERCENT;
    table
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `bytes` to `out`, bytes whose action is [`ENCODE`] as `%XX`, and
/// the hex digits of `%xx` escapes in upper case (as patterns are escaped;
/// nothing is decoded). Runs of bytes kept as they are copied at once.
fn encode_into(bytes: &[u8], actions: &[u8; 256], out: &mut Vec<u8>) {
    let (mut run, mut i) = (0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        match actions[usize::from(b)] {
            COPY => {
                i += 1;
                continue;
            }
            ENCODE => {
                out.extend_from_slice(&bytes[run..i]);
                out.extend_from_slice(&[b'%', HEX_UPPER[usize::from(b >> 4)], HEX_UPPER[usize::from(b & 15)]]);
                i += 1;
            }
            _ => match bytes.get(i + 1..i + 3) {
                Some(&[hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit() => {
                    out.extend_from_slice(&bytes[run..i]);
                    out.extend_from_slice(&[b'%', hi.to_ascii_uppercase(), lo.to_ascii_uppercase()]);
                    i += 3;
                }
                _ => {
                    i += 1;
                    continue;
                }
            },
        }
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
}

/// `.` or `%2e` (either case).
fn is_single_dot(segment: &[u8]) -> bool {
    segment == b"." || segment.eq_ignore_ascii_case(b"%2e")
}

/// `..`, `.%2e`, `%2e.` or `%2e%2e` (either case).
fn is_double_dot(segment: &[u8]) -> bool {
    matches!(segment.len(), 2 | 4 | 6)
        && [&b".."[..], b".%2e", b"%2e.", b"%2e%2e"].iter().any(|dots| segment.eq_ignore_ascii_case(dots))
}

/// Appends the path and query of a special URL to `out` as the standard
/// serialises them, hex digits of escapes in upper case (as patterns are
/// escaped), from `rest`: what follows the authority, fragment already cut
/// off, tabs and newlines already removed. `\` separates segments like `/`;
/// dot segments are resolved (never above the root); bytes of the
/// percent-encode sets become `%XX` (non-UTF-8 bytes too, each on its own).
/// Always starts with `/`.
///
/// Upper-casing while encoding gives what escaping the standard's output
/// would: the standard keeps each `%` and the two bytes after it together,
/// and tells dot segments without regard to case.
pub(super) fn write_path_and_query(rest: &[u8], out: &mut Vec<u8>) {
    let query = memchr::memchr(b'?', rest);
    let path = &rest[..query.unwrap_or(rest.len())];
    let start = out.len();
    // Path start state: a first slash is consumed; then each segment ends at
    // a slash or at the end.
    let mut i = usize::from(path.first().is_some_and(|&b| is_slash(b)));
    loop {
        let end = path[i..].iter().position(|&b| is_slash(b)).map_or(path.len(), |p| i + p);
        let segment = &path[i..end];
        let last = end == path.len();
        if segment.first().is_some_and(|&b| b == b'.' || b == b'%') && is_double_dot(segment) {
            // Shorten the path: drop its last segment, if any.
            let parent = out[start..].iter().rposition(|&b| b == b'/').map_or(start, |p| start + p);
            out.truncate(parent);
            if last {
                out.push(b'/');
            }
        } else if segment.first().is_some_and(|&b| b == b'.' || b == b'%') && is_single_dot(segment) {
            if last {
                out.push(b'/');
            }
        } else {
            out.push(b'/');
            encode_into(segment, &PATH_ACTIONS, out);
        }
        if last {
            break;
        }
        i = end + 1;
    }
    if let Some(q) = query {
        out.push(b'?');
        encode_into(&rest[q + 1..], &QUERY_ACTIONS, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rest: &str) -> String {
        let mut out = Vec::new();
        write_path_and_query(rest.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn dot_segments_resolve_below_the_root() {
        assert_eq!(path(""), "/");
        assert_eq!(path("/"), "/");
        assert_eq!(path("?q"), "/?q");
        assert_eq!(path("/a/../b"), "/b");
        assert_eq!(path("/a/.."), "/");
        assert_eq!(path("/a/b/.."), "/a/");
        assert_eq!(path("/a/./b/."), "/a/b/");
        assert_eq!(path("/../../x"), "/x");
        assert_eq!(path("/a/%2E%2e/b"), "/b");
        assert_eq!(path("/a/.%2E?x/../y"), "/?x/../y");
        assert_eq!(path("\\a\\..\\b\\c"), "/b/c");
        assert_eq!(path("/a//b"), "/a//b");
        assert_eq!(path("/a/.../b"), "/a/.../b");
    }

    #[test]
    fn percent_encode_sets() {
        assert_eq!(path("/a b\"<>`{}^|'"), "/a%20b%22%3C%3E%60%7B%7D^|'");
        assert_eq!(path("/?a b\"<>`{}'\\"), "/?a%20b%22%3C%3E`{}%27\\");
        assert_eq!(path("/é\u{7f}"), "/%C3%A9%7F");
        assert_eq!(path("/%zz%2f%"), "/%zz%2F%");
    }

    #[test]
    fn ipv4_forms() {
        let ip = |s: &str| parse_ipv4(s.as_bytes()).map(|a| a.to_string());
        assert_eq!(ip("127.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("0x7f.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("127.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("2130706433").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("0177.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("127.0.0.1.").as_deref(), Some("127.0.0.1"));
        assert_eq!(ip("0x").as_deref(), Some("0.0.0.0"));
        assert_eq!(ip("256.256.256.256"), None);
        assert_eq!(ip("1.2.3.4.5"), None);
        assert_eq!(ip("4294967296"), None);
        assert_eq!(ip("08"), None);
        assert!(ends_in_a_number(b"a.0x"));
        assert!(ends_in_a_number(b"a.1."));
        assert!(!ends_in_a_number(b"a.b1"));
        assert!(!ends_in_a_number(b"."));
    }

    #[test]
    fn ipv6_forms() {
        let v6 = |s: &str| {
            parse_ipv6(s.as_bytes()).map(|p| {
                let mut out = Vec::new();
                write_ipv6(&p, &mut out);
                String::from_utf8(out).unwrap()
            })
        };
        assert_eq!(v6("::1").as_deref(), Some("::1"));
        assert_eq!(v6("::").as_deref(), Some("::"));
        assert_eq!(v6("2001:DB8:0:0:0:0:0:1").as_deref(), Some("2001:db8::1"));
        assert_eq!(v6("1:0:0:2:0:0:0:3").as_deref(), Some("1:0:0:2::3"));
        assert_eq!(v6("1:0:2:3:4:5:6:7").as_deref(), Some("1:0:2:3:4:5:6:7"));
        assert_eq!(v6("::ffff:192.0.2.1").as_deref(), Some("::ffff:c000:201"));
        assert_eq!(v6("::ffff:192.0.2.01"), None);
        assert_eq!(v6("1:2:3:4:5:6:7:8:9"), None);
        assert_eq!(v6(":1"), None);
        assert_eq!(v6("1::2::3"), None);
        assert_eq!(v6("1:"), None);
        assert_eq!(v6(""), None);
    }
}
