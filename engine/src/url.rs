//! Taking URLs apart: the path-and-query that rules match against, and the
//! origin (scheme, host, port) that says which robots.txt governs a URL.

use std::borrow::Cow;
use std::fmt;

/// The path, parameters and query of `url`, as Google's library extracts them.
///
/// Accepts whatever the reference library accepts: absolute URLs, `//host/path`,
/// `host/path`, a bare path, or the empty string. The fragment is dropped; the
/// result always starts with `/` (a `?` or `;` first gets one prepended); a URL
/// without a path gives `/`.
pub fn path_params_query(url: &[u8]) -> Cow<'_, [u8]> {
    // Two leading slashes introduce an authority without a scheme.
    let search_start = if url.starts_with(b"//") { 2 } else { 0 };
    let tail = &url[search_start..];
    let early_path = tail.iter().position(|b| matches!(b, b'/' | b'?' | b';'));
    let protocol_end = match find_subslice(tail, b"://") {
        Some(p) if early_path.is_none_or(|e| p < e) => search_start + p + 3,
        _ => search_start,
    };
    let Some(path_start) = url[protocol_end..].iter().position(|b| matches!(b, b'/' | b'?' | b';')) else {
        return Cow::Borrowed(b"/");
    };
    let path_start = protocol_end + path_start;
    let hash = url[search_start..].iter().position(|&b| b == b'#').map(|h| h + search_start);
    if hash.is_some_and(|h| h < path_start) {
        return Cow::Borrowed(b"/");
    }
    let path_end = hash.unwrap_or(url.len());
    let path = &url[path_start..path_end];
    if path[0] == b'/' {
        Cow::Borrowed(path)
    } else {
        let mut owned = Vec::with_capacity(path.len() + 1);
        owned.push(b'/');
        owned.extend_from_slice(path);
        Cow::Owned(owned)
    }
}

/// How a URL's path is prepared before rules match it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PathMode {
    /// Escape the path as patterns are escaped (bytes >= 0x80 to `%XX`,
    /// upper-case hex in escapes): what a crawler sends on the wire. The
    /// default, and robotsieve's one deliberate extension of Google's library,
    /// which expects URLs already escaped.
    #[default]
    Escaped,
    /// Match the path byte for byte, as Google's library does (`--raw-urls`).
    Raw,
}

impl PathMode {
    /// Prepares a path-and-query for matching.
    pub fn prepare(self, path: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
        match (self, path) {
            (PathMode::Raw, path) => path,
            (PathMode::Escaped, Cow::Borrowed(p)) => crate::pattern::escape(p),
            (PathMode::Escaped, Cow::Owned(p)) => Cow::Owned(crate::pattern::escape(&p).into_owned()),
        }
    }

    /// Appends a path-and-query, prepared for matching, to `out`: what
    /// [`PathMode::prepare`] gives, into a buffer that many paths can share.
    #[inline]
    pub fn prepare_into(self, path: &[u8], out: &mut Vec<u8>) {
        if self == PathMode::Escaped && crate::pattern::needs_escape(path) {
            crate::pattern::escape_into(path, out);
        } else {
            out.extend_from_slice(path);
        }
    }

    /// The path-and-query of any URL Google's library accepts, ready to match.
    pub fn path_of(self, url: &[u8]) -> Cow<'_, [u8]> {
        self.prepare(path_params_query(url))
    }
}

fn find_subslice(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------
// Origins: which robots.txt governs a URL.
// ---------------------------------------------------------------------------

/// A scheme robots.txt rules apply to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scheme {
    /// `http`, default port 80.
    Http,
    /// `https`, default port 443.
    Https,
    /// `ftp`, default port 21.
    Ftp,
}

impl Scheme {
    /// The scheme's name in lower case, as it appears in an origin key.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
            Scheme::Ftp => "ftp",
        }
    }

    /// `scheme://`, how an origin key starts.
    fn key_prefix(self) -> &'static [u8] {
        match self {
            Scheme::Http => b"http://",
            Scheme::Https => b"https://",
            Scheme::Ftp => b"ftp://",
        }
    }

    /// [`Scheme::key_prefix`] padded with zeros to 8 bytes.
    fn key_prefix_padded(self) -> [u8; 8] {
        let mut padded = [0; 8];
        padded[..self.key_prefix().len()].copy_from_slice(self.key_prefix());
        padded
    }

    /// The port an origin of this scheme has when none is written.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
            Scheme::Ftp => 21,
        }
    }

    /// The scheme named by `name`, compared without case; `None` for any other.
    pub fn from_name(name: &[u8]) -> Option<Scheme> {
        if name.eq_ignore_ascii_case(b"http") {
            Some(Scheme::Http)
        } else if name.eq_ignore_ascii_case(b"https") {
            Some(Scheme::Https)
        } else if name.eq_ignore_ascii_case(b"ftp") {
            Some(Scheme::Ftp)
        } else {
            None
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a URL has no origin robots.txt can govern (the verdict `invalid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UrlError {
    /// No `scheme://` at the start: a relative URL, a bare host or garbage.
    NotAbsolute,
    /// A scheme other than http, https or ftp.
    UnsupportedScheme,
    /// Nothing between `scheme://` (or the user info) and the port or path.
    EmptyHost,
    /// The host holds a byte no host name may hold. Percent-escapes count as
    /// such: robotsieve does not decode them in hosts (no crawler resolves
    /// `ex%61mple.com`), so `%` makes the host invalid.
    InvalidHost,
    /// A bracketed host that is not an IPv6 address (zone identifiers included).
    InvalidIpv6,
    /// A non-ASCII host that IDNA (UTS 46) cannot convert to punycode, or that
    /// is not UTF-8.
    InvalidIdn,
    /// A port that is not a decimal number or is above 65535.
    InvalidPort,
    /// A valid URL that is not `/robots.txt` at the root of its origin, where
    /// one was required ([`OriginKey::of_robots_url`]).
    NotRobotsTxt,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::NotAbsolute => "not an absolute URL (no scheme://)",
            UrlError::UnsupportedScheme => "scheme is not http, https or ftp",
            UrlError::EmptyHost => "empty host",
            UrlError::InvalidHost => "host contains a character not allowed in a host name (percent-escapes included)",
            UrlError::InvalidIpv6 => "bracketed host is not an IPv6 address",
            UrlError::InvalidIdn => "non-ASCII host is not a valid internationalised domain name",
            UrlError::InvalidPort => "port is not a number from 0 to 65535",
            UrlError::NotRobotsTxt => "not /robots.txt at the root of its origin",
        })
    }
}

impl std::error::Error for UrlError {}

/// A URL taken apart for the filter: its origin key and the path-and-query.
///
/// Borrowed from a [`KeyBuf`] and the URL; valid until the buffer is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The canonical origin key, `scheme://host` or `scheme://host:port` (see
    /// [`OriginKey`]).
    pub key: &'a [u8],
    /// The path-and-query: from the end of the authority, fragment dropped,
    /// always starting with `/` (agrees with [`path_params_query`] on ordinary
    /// URLs). Not escaped; see [`PathMode::prepare`].
    pub path: &'a [u8],
    /// The scheme.
    pub scheme: Scheme,
    /// The port written in the URL, unless it is the scheme's default.
    pub port: Option<u16>,
    host_len: usize,
}

impl<'a> Origin<'a> {
    /// The normalised host: lower-case ASCII, punycode for internationalised
    /// names, IPv6 literals in brackets and in RFC 5952 form.
    pub fn host(&self) -> &'a [u8] {
        let start = self.scheme.as_str().len() + 3;
        &self.key[start..start + self.host_len]
    }

    /// Whether the path-and-query is exactly `/robots.txt`.
    pub fn is_robots_txt(&self) -> bool {
        self.path == b"/robots.txt"
    }
}

/// Reusable scratch space for taking URLs apart without allocating.
///
/// The filter keeps one per worker: after the first few URLs have grown its
/// buffers, [`KeyBuf::parse`] allocates nothing (except for non-ASCII hosts,
/// which go through IDNA).
///
/// The rules, in order:
/// - ASCII white space around the URL is ignored.
/// - `scheme://` is required; the scheme is http, https or ftp in any case.
/// - The authority runs to the first `/`, `?` or `#`. User info (up to the
///   last `@`) is dropped. A `;` after the user info ends the authority and
///   starts the path, as in Google's `path_params_query`.
/// - The host: `[...]` must be an IPv6 address, written back in RFC 5952 form;
///   otherwise ASCII letters, digits, `-`, `.`, `_` and `~`, lower-cased. A host
///   with any non-ASCII byte goes through IDNA (UTS 46, the WHATWG deny list)
///   to punycode. Percent-escapes are not decoded: `%` makes the host invalid.
///   IPv4 addresses and trailing dots are kept as written.
/// - The port: empty means none; otherwise decimal digits up to 65535; the
///   scheme's default port is dropped from the key.
/// - The path-and-query: fragment dropped, `/` prepended when it starts with
///   `?` or `;`, `/` when empty.
#[derive(Clone, Debug, Default)]
pub struct KeyBuf {
    key: Vec<u8>,
    path: Vec<u8>,
}

impl KeyBuf {
    /// An empty buffer.
    pub fn new() -> KeyBuf {
        KeyBuf { key: Vec::with_capacity(64), path: Vec::new() }
    }

    /// Takes `url` apart: its origin key (written into this buffer) and its
    /// path-and-query.
    ///
    /// Runs once per URL of the frontier, so it avoids what costs on 40 to 90
    /// byte URLs: the scheme is matched as one word, the authority is walked
    /// once for all its delimiters (instead of one memchr each, whose start-up
    /// costs more than the short scan), and the host is lower-cased and checked
    /// while it is copied. Only the fragment search, over the long rest of the
    /// URL, keeps memchr.
    pub fn parse<'a>(&'a mut self, url: &'a [u8]) -> Result<Origin<'a>, UrlError> {
        let url = url.trim_ascii();
        let (scheme, authority_start) = split_scheme(url)?;
        let authority = AuthorityScan::of(&url[authority_start..], authority_start);
        let host_port = &url[authority.host_start..authority.host_port_end];
        let (host, port_text) = match authority.port_colon {
            // A bracketed host may hold colons of its own: its own rules.
            _ if host_port.first() == Some(&b'[') => split_port(host_port)?,
            Some(colon) => (&url[authority.host_start..colon], Some(&url[colon + 1..authority.host_port_end])),
            None => (host_port, None),
        };
        if host.is_empty() {
            return Err(UrlError::EmptyHost);
        }
        let port = match port_text {
            Some(text) if !text.is_empty() => Some(parse_port(text)?),
            _ => None,
        }
        .filter(|&p| p != scheme.default_port());

        self.key.clear();
        // One fixed 8-byte copy, cut back: a copy of 6 to 8 bytes would be a memcpy call.
        self.key.extend_from_slice(&scheme.key_prefix_padded());
        self.key.truncate(scheme.key_prefix().len());
        if authority.plain_host {
            // Known to be host bytes only: what `write_host` does, minus its checks.
            push_lowercase(&mut self.key, &url[authority.host_start..], host.len());
        } else {
            write_host(&mut self.key, host)?;
        }
        let host_len = self.key.len() - scheme.key_prefix().len();
        if let Some(port) = port {
            self.key.push(b':');
            write_decimal(&mut self.key, port);
        }

        // No '#' can come before the end of the authority, which stops at the first.
        let path_end = memchr::memchr(b'#', &url[authority.end..]).map_or(url.len(), |p| authority.end + p);
        let rest = &url[authority.host_port_end..path_end];
        let path: &[u8] = if rest.is_empty() {
            b"/"
        } else if rest[0] == b'/' {
            rest
        } else {
            self.path.clear();
            self.path.push(b'/');
            self.path.extend_from_slice(rest);
            &self.path
        };
        Ok(Origin { key: &self.key, path, scheme, port, host_len })
    }
}

/// The scheme of `url` and the index where its authority starts (after `://`).
fn split_scheme(url: &[u8]) -> Result<(Scheme, usize), UrlError> {
    if let Some(common) = common_scheme_prefix(url) {
        return Ok(common);
    }
    let colon = scheme_end(url).ok_or(UrlError::NotAbsolute)?;
    if !url[colon..].starts_with(b"://") {
        return Err(UrlError::NotAbsolute);
    }
    let scheme = Scheme::from_name(&url[..colon]).ok_or(UrlError::UnsupportedScheme)?;
    Ok((scheme, colon + 3))
}

/// `http://`, `https://` or `ftp://` in any case at the start of `url`, found
/// by comparing its first 8 bytes as one word: nearly every URL of a frontier
/// starts so, and this costs a load and three compares instead of a byte loop
/// and up to three case-folded string compares. `None` for anything else
/// (including URLs shorter than 8 bytes), which [`split_scheme`] then parses
/// byte by byte.
fn common_scheme_prefix(url: &[u8]) -> Option<(Scheme, usize)> {
    const fn word(bytes: &[u8; 8]) -> u64 {
        u64::from_le_bytes(*bytes)
    }
    // Setting bit 0x20 folds exactly one other byte onto each of the letters
    // h, t, p, s and f: its upper case. The mask leaves `://` to match exactly
    // and drops the bytes after a shorter prefix.
    const FOLD_5: u64 = word(b"\x20\x20\x20\x20\x20\0\0\0");
    const FOLD_4: u64 = word(b"\x20\x20\x20\x20\0\0\0\0");
    const FOLD_3: u64 = word(b"\x20\x20\x20\0\0\0\0\0");
    const FIRST_7: u64 = u64::MAX >> 8;
    const FIRST_6: u64 = u64::MAX >> 16;
    let head = word(url.get(..8)?.try_into().expect("8 bytes"));
    if head | FOLD_5 == word(b"https://") {
        Some((Scheme::Https, 8))
    } else if (head | FOLD_4) & FIRST_7 == word(b"http://\0") {
        Some((Scheme::Http, 7))
    } else if (head | FOLD_3) & FIRST_6 == word(b"ftp://\0\0") {
        Some((Scheme::Ftp, 6))
    } else {
        None
    }
}

/// Where the parts of an authority are, found in one pass over it.
#[derive(Debug)]
struct AuthorityScan {
    /// The first `/`, `?` or `#` (or the URL's end): the end of the authority.
    end: usize,
    /// After the last `@` of the authority (the user info is dropped).
    host_start: usize,
    /// The first `;` after `host_start` (it starts the path), or `end`.
    host_port_end: usize,
    /// The last `:` between `host_start` and `host_port_end`.
    port_colon: Option<usize>,
    /// Every byte from `host_start` to `port_colon` (or `host_port_end`) is a
    /// host byte ([`is_host_byte`]): the host needs only lower-casing. When
    /// false the host may still be valid (IPv6, IDN), or only the port may be
    /// odd; [`write_host`] decides.
    plain_host: bool,
}

/// What the authority scan does with a byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AuthorityByte {
    /// A host byte ([`is_host_byte`]): nothing to do (the scan skips runs of
    /// them with [`skip_host_bytes`] before it looks bytes up here).
    Host,
    /// `/`, `?` or `#`: the authority ends.
    End,
    /// `@`: what came before is user info.
    At,
    /// `;`: the first one after the user info starts the path.
    Semicolon,
    /// `:`: the last one before the path separates the port.
    Colon,
    /// Any other byte: the host is not plain (or the port is invalid).
    Other,
}

static AUTHORITY_BYTES: [AuthorityByte; 256] = {
    let mut table = [AuthorityByte::Other; 256];
    let mut b = 0;
    while b < 256 {
        if is_host_byte(b as u8) {
            table[b] = AuthorityByte::Host;
        }
        b += 1;
    }
    table[b'/' as usize] = AuthorityByte::End;
    table[b'?' as usize] = AuthorityByte::End;
    table[b'#' as usize] = AuthorityByte::End;
    table[b'@' as usize] = AuthorityByte::At;
    table[b';' as usize] = AuthorityByte::Semicolon;
    table[b':' as usize] = AuthorityByte::Colon;
    table
};

impl AuthorityScan {
    /// Scans `tail`, the URL from the authority on; the positions returned
    /// are `offset` plus indices into `tail`, that is, indices into the URL.
    ///
    /// Equivalent to memchr3 for the end, memrchr for `@`, memchr for `;`, a
    /// reverse search for `:` and a check of the host bytes; one pass (host
    /// bytes skipped eight at a time, the others looked up in a table) is
    /// cheaper on the 10 to 30 bytes of a typical authority than five passes,
    /// four of them memchr calls with their start-up cost.
    fn of(tail: &[u8], offset: usize) -> AuthorityScan {
        let (mut host_start, mut semicolon, mut colon) = (0, None, None);
        // Whether a byte that is not a host byte was seen since the last '@'
        // and before the first ';' (a colon counts once a later one makes it
        // part of the host). Conservative: a non-host byte in the port also
        // counts, and then the port is invalid anyway.
        let mut odd = false;
        let mut i = 0;
        loop {
            // Host bytes are most of the authority: skip them in bulk.
            i = skip_host_bytes(tail, i);
            let Some(&byte) = tail.get(i) else { break };
            match AUTHORITY_BYTES[usize::from(byte)] {
                AuthorityByte::End => break,
                // A later '@' makes everything before it user info.
                AuthorityByte::At => (host_start, semicolon, colon, odd) = (i + 1, None, None, false),
                AuthorityByte::Semicolon if semicolon.is_none() => semicolon = Some(i),
                // Colons and odd bytes after the ';' belong to the path.
                AuthorityByte::Colon if semicolon.is_none() => odd |= colon.replace(i).is_some(),
                AuthorityByte::Other if semicolon.is_none() => odd = true,
                AuthorityByte::Host | AuthorityByte::Semicolon | AuthorityByte::Colon | AuthorityByte::Other => {}
            }
            i += 1;
        }
        AuthorityScan {
            end: offset + i,
            host_start: offset + host_start,
            host_port_end: offset + semicolon.unwrap_or(i),
            port_colon: colon.map(|c| offset + c),
            plain_host: !odd,
        }
    }
}

/// The index of the first byte at or after `i` in `bytes` that is not a host
/// byte ([`is_host_byte`]), or `bytes.len()`: eight bytes per step while
/// eight remain, then one lookup per byte.
fn skip_host_bytes(bytes: &[u8], mut i: usize) -> usize {
    while let Some(word) = bytes.get(i..i + 8) {
        let others = non_host_bytes(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        if others != 0 {
            return i + others.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while bytes.get(i).is_some_and(|&b| HOST_BYTES[usize::from(b)]) {
        i += 1;
    }
    i
}

/// The high bit of each byte of `word` that is not a host byte
/// ([`is_host_byte`]). Each byte is computed on its own (no carry crosses
/// bytes), so the result is exact for every byte.
fn non_host_bytes(word: u64) -> u64 {
    const EACH: u64 = 0x0101_0101_0101_0101;
    const HIGH_BIT: u64 = 0x80 * EACH;
    let low = word & (0x7F * EACH);
    // High bit set where `lo <= x <= hi`, for 7-bit bytes x (no carries: x + 0x80 <= 0xFF).
    let in_range = |x: u64, lo: u8, hi: u8| (x + u64::from(0x80 - lo) * EACH) & !(x + u64::from(0x7F - hi) * EACH);
    let host = in_range(low | (0x20 * EACH), b'a', b'z') // letters, either case
        | in_range(low, b'0', b'9')
        | in_range(low, b'-', b'.')
        | in_range(low, b'_', b'_')
        | in_range(low, b'~', b'~');
    // Bytes >= 0x80 are never host bytes.
    (!host | word) & HIGH_BIT
}

/// Appends the first `len` bytes of `text` to `out`, ASCII upper case lowered.
///
/// Works a word (8 bytes) at a time from `text`, reading and lowering past
/// `len` where `text` goes on, and cuts the extra bytes off again: nearly
/// every host is followed by a path. (Copying first and lowering in place
/// made each word's load wait for the copy's stores.)
fn push_lowercase(out: &mut Vec<u8>, text: &[u8], len: usize) {
    let start = out.len();
    let mut words = text.chunks_exact(8);
    while out.len() - start < len {
        match words.next() {
            Some(word) => {
                let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                out.extend_from_slice(&lowercase_word(word).to_le_bytes());
            }
            None => {
                let done = out.len() - start;
                out.extend(text[done..len].iter().map(u8::to_ascii_lowercase));
            }
        }
    }
    out.truncate(start + len);
}

/// [`u8::to_ascii_lowercase`] on each byte of a word. Each byte is computed
/// on its own (no carry crosses bytes), so any byte values are fine.
fn lowercase_word(word: u64) -> u64 {
    const EACH: u64 = 0x0101_0101_0101_0101;
    const LOW_7: u64 = 0x7F * EACH;
    const HIGH_BIT: u64 = 0x80 * EACH;
    let low = word & LOW_7;
    // High bit set where the low 7 bits are >= 'A', and where they are > 'Z'.
    let from_a = low + (0x80 - u64::from(b'A')) * EACH;
    let past_z = low + (0x80 - u64::from(b'Z') - 1) * EACH;
    // Upper case: 'A'..='Z' with the byte's own high bit clear.
    let upper = from_a & !past_z & !word & HIGH_BIT;
    word | (upper >> 2)
}

/// The index of the `:` ending a syntactically valid scheme
/// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), if any.
fn scheme_end(url: &[u8]) -> Option<usize> {
    if !url.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = url.iter().position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (url[end] == b':').then_some(end)
}

/// Splits `host[:port]` or `[v6][:port]`; the port text is what follows the colon.
fn split_port(host_port: &[u8]) -> Result<(&[u8], Option<&[u8]>), UrlError> {
    if host_port.first() == Some(&b'[') {
        let close = host_port.iter().position(|&b| b == b']').ok_or(UrlError::InvalidIpv6)?;
        let (host, after) = host_port.split_at(close + 1);
        return match after {
            [] => Ok((host, None)),
            [b':', port @ ..] => Ok((host, Some(port))),
            _ => Err(UrlError::InvalidPort),
        };
    }
    Ok(match host_port.iter().rposition(|&b| b == b':') {
        Some(c) => (&host_port[..c], Some(&host_port[c + 1..])),
        None => (host_port, None),
    })
}

fn parse_port(text: &[u8]) -> Result<u16, UrlError> {
    let mut value: u32 = 0;
    for &b in text {
        if !b.is_ascii_digit() {
            return Err(UrlError::InvalidPort);
        }
        value = value * 10 + u32::from(b - b'0');
        if value > u32::from(u16::MAX) {
            return Err(UrlError::InvalidPort);
        }
    }
    Ok(value as u16)
}

fn write_decimal(out: &mut Vec<u8>, value: u16) {
    let mut digits = [0u8; 5];
    let mut n = value;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

const fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// [`is_host_byte`] as a table, for the per-URL path.
static HOST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_host_byte(b as u8);
        b += 1;
    }
    table
};

/// Appends the normalised form of `host` to `out`.
fn write_host(out: &mut Vec<u8>, host: &[u8]) -> Result<(), UrlError> {
    if host[0] == b'[' {
        let inner = std::str::from_utf8(&host[1..host.len() - 1]).map_err(|_| UrlError::InvalidIpv6)?;
        let addr: std::net::Ipv6Addr = inner.parse().map_err(|_| UrlError::InvalidIpv6)?;
        use std::io::Write as _;
        write!(out, "[{addr}]").expect("writing to a Vec cannot fail");
        return Ok(());
    }
    if host.is_ascii() {
        if host.iter().fold(false, |bad, &b| bad | !HOST_BYTES[usize::from(b)]) {
            return Err(UrlError::InvalidHost);
        }
        let start = out.len();
        out.extend_from_slice(host);
        out[start..].make_ascii_lowercase();
        return Ok(());
    }
    let ascii = idna::domain_to_ascii_cow(host, idna::AsciiDenyList::URL).map_err(|_| UrlError::InvalidIdn)?;
    if ascii.is_empty() || !ascii.bytes().all(is_host_byte) {
        return Err(UrlError::InvalidIdn);
    }
    out.extend_from_slice(ascii.as_bytes());
    Ok(())
}

/// An origin's canonical key: `scheme://host` or `scheme://host:port`, the
/// port only when it is not the scheme's default. Always ASCII. This is what
/// the artifact's origin index stores (hashed with [`origin_hash`]).
///
/// The owned form, for the compiler; the filter uses [`KeyBuf`].
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OriginKey(Box<[u8]>);

impl OriginKey {
    /// The origin of any absolute URL.
    pub fn of_url(url: impl AsRef<[u8]>) -> Result<OriginKey, UrlError> {
        let mut buf = KeyBuf::new();
        let origin = buf.parse(url.as_ref())?;
        Ok(OriginKey(origin.key.into()))
    }

    /// The origin a robots.txt URL governs; the URL must be `/robots.txt` at
    /// the root (no query), else [`UrlError::NotRobotsTxt`].
    pub fn of_robots_url(url: impl AsRef<[u8]>) -> Result<OriginKey, UrlError> {
        let mut buf = KeyBuf::new();
        let origin = buf.parse(url.as_ref())?;
        if !origin.is_robots_txt() {
            return Err(UrlError::NotRobotsTxt);
        }
        Ok(OriginKey(origin.key.into()))
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The key as text (it is always ASCII).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("origin keys are ASCII")
    }

    /// The key's [`origin_hash`].
    pub fn hash64(&self) -> u64 {
        origin_hash(&self.0)
    }

    /// The URL of this origin's robots.txt.
    pub fn robots_url(&self) -> String {
        format!("{}/robots.txt", self.as_str())
    }
}

impl std::borrow::Borrow<[u8]> for OriginKey {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Display for OriginKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for OriginKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OriginKey({:?})", self.as_str())
    }
}

/// The stable 64-bit hash of an origin key, stored in the artifact's origin
/// index. It must never change (a new function needs a new format version).
///
/// Definition: with `K = 0x9E3779B97F4A7C15` and `M = 0xFF51AFD7ED558CCD`,
/// start with `h = K ^ (len * M)`; for each whole 8-byte word `w` of the key
/// (read little-endian), `h = rotl((h ^ w) * M, 31)`; the 0 to 7 remaining
/// bytes, zero-padded to a little-endian word `t`, give `h = (h ^ t) * K`;
/// finally murmur3's fmix64: `h ^= h >> 33; h *= 0xFF51AFD7ED558CCD;
/// h ^= h >> 33; h *= 0xC4CEB9FE1A85EC53; h ^= h >> 33`. All arithmetic
/// wraps. Independent of the machine's byte order.
pub fn origin_hash(key: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    const M: u64 = 0xFF51_AFD7_ED55_8CCD;
    let mut h = K ^ (key.len() as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("chunks of 8"));
        h = (h ^ w).wrapping_mul(M).rotate_left(31);
    }
    // The tail as a little-endian word, zero-padded. Built in a register: a
    // copy into a zeroed array and a load of it stalled on store forwarding
    // (a fifth of the batch's bookkeeping in a profile).
    let tail = words.remainder().iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b));
    h = (h ^ tail).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// `KeyBuf::parse` as it was before the single-pass authority scan (commit
/// 3e1c4f4): one memchr per delimiter. The tests check that the fast parser
/// gives exactly its answers; the helpers both share (`scheme_end`,
/// `split_port`, `parse_port`, `write_host`, `write_decimal`) are unchanged.
#[cfg(test)]
mod reference {
    use super::*;

    pub(super) fn parse<'a>(buf: &'a mut KeyBuf, url: &'a [u8]) -> Result<Origin<'a>, UrlError> {
        let url = url.trim_ascii();
        let colon = scheme_end(url).ok_or(UrlError::NotAbsolute)?;
        if !url[colon..].starts_with(b"://") {
            return Err(UrlError::NotAbsolute);
        }
        let scheme = Scheme::from_name(&url[..colon]).ok_or(UrlError::UnsupportedScheme)?;
        let authority_start = colon + 3;
        let authority_end =
            memchr::memchr3(b'/', b'?', b'#', &url[authority_start..]).map_or(url.len(), |p| authority_start + p);
        let host_start = memchr::memrchr(b'@', &url[authority_start..authority_end])
            .map_or(authority_start, |at| authority_start + at + 1);
        let host_port_end =
            memchr::memchr(b';', &url[host_start..authority_end]).map_or(authority_end, |p| host_start + p);
        let (host, port_text) = split_port(&url[host_start..host_port_end])?;
        if host.is_empty() {
            return Err(UrlError::EmptyHost);
        }
        let port = match port_text {
            Some(text) if !text.is_empty() => Some(parse_port(text)?),
            _ => None,
        }
        .filter(|&p| p != scheme.default_port());

        buf.key.clear();
        buf.key.extend_from_slice(scheme.as_str().as_bytes());
        buf.key.extend_from_slice(b"://");
        write_host(&mut buf.key, host)?;
        let host_len = buf.key.len() - scheme.as_str().len() - 3;
        if let Some(port) = port {
            buf.key.push(b':');
            write_decimal(&mut buf.key, port);
        }

        let rest = &url[host_port_end..];
        let rest = &rest[..memchr::memchr(b'#', rest).unwrap_or(rest.len())];
        let path: &[u8] = if rest.is_empty() {
            b"/"
        } else if rest[0] == b'/' {
            rest
        } else {
            buf.path.clear();
            buf.path.push(b'/');
            buf.path.extend_from_slice(rest);
            &buf.path
        };
        Ok(Origin { key: &buf.key, path, scheme, port, host_len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(url: &str) -> String {
        String::from_utf8(path_params_query(url.as_bytes()).into_owned()).unwrap()
    }

    /// The fast parser and the reference agree on `url`: same key, path,
    /// scheme, port and host length, or the same error.
    fn assert_same_as_reference(url: &[u8]) {
        let (mut fast, mut slow) = (KeyBuf::new(), KeyBuf::new());
        assert_eq!(fast.parse(url), reference::parse(&mut slow, url), "{:?}", String::from_utf8_lossy(url));
    }

    mod same_as_reference {
        use super::*;
        use proptest::prelude::*;

        /// One URL assembled from parts chosen to hit every branch of the
        /// parser: scheme case and near misses, user info, hosts of every
        /// kind, ports in and out of range, params, query, fragment, white
        /// space.
        fn url_parts() -> impl Strategy<Value = Vec<u8>> {
            let space = prop::sample::select(vec!["", "", "", " ", "\t", "\r\n", " \x0c"]);
            let scheme = prop::sample::select(vec![
                "http", "https", "ftp", "HTTP", "HtTpS", "FTP", "ftps", "htt", "httpss", "mailto", "h", "", "1http",
                "ht+tp", "ht~tp", "http ", "xn--http",
            ]);
            let separator = prop::sample::select(vec!["://", "://", "://", "://", ":/", ":", "//", ":///", ""]);
            let user_info = prop_oneof![
                3 => Just(String::new()),
                1 => "[a-zA-Z:;%@]{0,6}@",
            ];
            let host = prop_oneof![
                4 => "[a-z0-9.\\-]{0,14}",
                2 => "[A-Za-z0-9._~\\-]{0,14}",
                1 => "[a-zA-Z0-9.%!$&'()*+,=\\\\^`{|}<> \\x00-\\x1f\\x7f]{0,8}",
                1 => prop::sample::select(vec![
                    "München.de", "bücher.example", "例え.テスト", "xn--mnchen-3ya.de", "ß.de", "a\u{200d}b.com",
                    "\u{fffd}", "exa\u{ff0e}mple.com", "ab\u{0301}.com",
                ]).prop_map(str::to_owned),
                1 => prop::sample::select(vec![
                    "[::1]", "[2001:DB8::1]", "[2001:db8:0:0:0:0:0:1]", "[::ffff:192.0.2.1]", "[fe80::1%25eth0]",
                    "[]", "[::1", "[::1]x", "[1.2.3.4]", "[::1]]", "[[::1]",
                ]).prop_map(str::to_owned),
                1 => "\\[[0-9a-fA-F:.%]{0,10}\\]?",
            ];
            let port = prop_oneof![
                3 => Just(String::new()),
                1 => prop::sample::select(vec![
                    ":", ":80", ":443", ":21", ":8080", ":0", ":00080", ":65535", ":65536", ":99999",
                    ":4294967376", ":12a", ":-1", ": 80", "::80", ":80:",
                ]).prop_map(str::to_owned),
                1 => ":[0-9]{0,7}",
            ];
            let params = prop_oneof![3 => Just(String::new()), 1 => ";[a-z=:@;]{0,5}"];
            let rest = prop_oneof![
                2 => Just(String::new()),
                4 => "/[a-zA-Z0-9/.;:@%~]{0,12}",
                1 => "[/?#;@:]{1,3}[a-zA-Z0-9/?#;@:]{0,8}",
                1 => "/[\\x00-\\x7f]{0,10}",
            ];
            let query = prop_oneof![3 => Just(String::new()), 1 => "\\?[a-z=&/#@:;]{0,8}"];
            let fragment = prop_oneof![3 => Just(String::new()), 1 => "#[a-z/?#;@:]{0,6}"];
            ((space.clone(), scheme, separator, user_info, host), (port, params, rest, query, fragment, space))
                .prop_map(|((lead, scheme, sep, user, host), (port, params, rest, query, fragment, trail))| {
                    [lead, scheme, sep, &user, &host, &port, &params, &rest, &query, &fragment, trail]
                        .concat()
                        .into_bytes()
                })
        }

        /// Bytes drawn from the characters the parser acts on, in any order.
        fn url_soup() -> impl Strategy<Value = Vec<u8>> {
            let alphabet: Vec<u8> = b"hHtTpPsSfF:/@;?#[]%.-_~09aZ \t\x00\xc3\xa9\xff".to_vec();
            let prefix = prop::sample::select(vec!["", "http://", "HTTPS://", "ftp://", "http:/", "https:"]);
            (prefix, prop::collection::vec(prop::sample::select(alphabet), 0..24))
                .prop_map(|(prefix, tail)| [prefix.as_bytes(), &tail].concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(20_000))]

            #[test]
            fn on_assembled_urls(url in url_parts()) {
                assert_same_as_reference(&url);
            }

            #[test]
            fn on_delimiter_soup(url in url_soup()) {
                assert_same_as_reference(&url);
            }

            #[test]
            fn on_arbitrary_bytes(url in prop::collection::vec(any::<u8>(), 0..40)) {
                assert_same_as_reference(&url);
            }
        }
    }

    /// Every URL of the real-world lists in ../shared (skipped when absent).
    #[test]
    fn same_as_reference_on_real_urls() {
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let shared = std::env::var_os("ROBOTSIEVE_SHARED")
            .map(std::path::PathBuf::from)
            .into_iter()
            .chain([manifest.join("../../shared"), "/work/shared".into()])
            .find(|d| d.is_dir());
        let Some(urls_dir) = shared.map(|d| d.join("realworld/urls")).filter(|d| d.is_dir()) else {
            eprintln!("skipped: ../shared/realworld/urls is absent");
            return;
        };
        let mut count = 0;
        if let Ok(text) = std::fs::read(urls_dir.join("crawl2019-linkgraph.tsv")) {
            for line in text.split(|&b| b == b'\n').skip(1) {
                if let Some(url) = line.split(|&b| b == b'\t').nth(1) {
                    assert_same_as_reference(url);
                    count += 1;
                }
            }
        }
        if let Ok(text) = std::fs::read(urls_dir.join("kasztp-urls.txt")) {
            for url in text.split(|&b| b == b'\n') {
                assert_same_as_reference(url);
                count += 1;
            }
        }
        assert!(count > 100_000, "only {count} real URLs found under {}", urls_dir.display());
        eprintln!("{count} real URLs parse as the reference parses them");
    }

    #[test]
    fn lowercase_word_lowers_each_byte_alone() {
        for b in 0..=255u8 {
            for neighbour in [0u8, b'A', b'Z', 0x7F, 0x80, 0xC1, 0xFF] {
                let bytes = [neighbour, b, neighbour, b, 0xFF, b, 0x00, b];
                let lowered = lowercase_word(u64::from_le_bytes(bytes)).to_le_bytes();
                assert_eq!(lowered, bytes.map(|x| x.to_ascii_lowercase()), "{b:#x} beside {neighbour:#x}");
            }
        }
        let mut out = b"x".to_vec();
        for len in 0..=20 {
            out.truncate(1);
            push_lowercase(&mut out, b"WWW.Example.COM/PATH/x", len);
            assert_eq!(&out[1..], &b"www.example.com/path/x"[..len]);
        }
    }

    #[test]
    fn non_host_bytes_marks_exactly_the_non_host_bytes() {
        for b in 0..=255u8 {
            for neighbour in [0u8, b'a', b'Z', b'-', 0x7F, 0x80, 0xFF] {
                let bytes = [neighbour, b, neighbour, b, 0xFF, b, 0x00, b];
                let marks = non_host_bytes(u64::from_le_bytes(bytes)).to_le_bytes();
                assert_eq!(
                    marks,
                    bytes.map(|x| if is_host_byte(x) { 0 } else { 0x80 }),
                    "{b:#x} beside {neighbour:#x}"
                );
            }
        }
        assert_eq!(skip_host_bytes(b"www.Example-1.co_uk~x:80/", 0), 21);
        assert_eq!(skip_host_bytes(b"www.Example-1.co_uk~x:80/", 22), 24);
        assert_eq!(skip_host_bytes(b"abc", 0), 3);
    }

    #[test]
    fn google_path_extraction() {
        // The cases of the reference library's own test.
        assert_eq!(p(""), "/");
        assert_eq!(p("http://www.example.com"), "/");
        assert_eq!(p("http://www.example.com/"), "/");
        assert_eq!(p("http://www.example.com/a"), "/a");
        assert_eq!(p("http://www.example.com/a/"), "/a/");
        assert_eq!(p("http://www.example.com/a/b?c=http://d.e/"), "/a/b?c=http://d.e/");
        assert_eq!(p("http://www.example.com/a/b?c=d&e=f#fragment"), "/a/b?c=d&e=f");
        assert_eq!(p("example.com"), "/");
        assert_eq!(p("example.com/"), "/");
        assert_eq!(p("example.com/a"), "/a");
        assert_eq!(p("example.com/a/"), "/a/");
        assert_eq!(p("example.com/a/b?c=d&e=f#fragment"), "/a/b?c=d&e=f");
        assert_eq!(p("a"), "/");
        assert_eq!(p("a/"), "/");
        assert_eq!(p("/a"), "/a");
        assert_eq!(p("a/b"), "/b");
        assert_eq!(p("example.com?a"), "/?a");
        assert_eq!(p("example.com/a;b#c"), "/a;b");
        assert_eq!(p("//a/b/c"), "/b/c");
    }

    #[test]
    fn fragment_before_path_gives_root() {
        assert_eq!(p("http://example.com#x/y"), "/");
        assert_eq!(p("http://example.com/x#/y"), "/x");
    }

    #[test]
    fn params_start_the_path() {
        assert_eq!(p("http://example.com;jsessionid=1"), "/;jsessionid=1");
    }
}
