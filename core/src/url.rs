//! Taking URLs apart: the origin (scheme, host, port) that says which
//! robots.txt governs a URL, and the path-and-query that rules match against,
//! both as a WHATWG URL parser (a browser, Chromium's URL library, the `url`
//! crate) reads them, so that the robots.txt robotsieve answers from is that
//! of the site the fetcher will request.

use crate::arch::Avx2;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

mod complete;

/// The path, parameters and query of `url`, as Google's library extracts them.
///
/// Accepts whatever the reference library accepts: absolute URLs, `//host/path`,
/// `host/path`, a bare path, or the empty string. The fragment is dropped; the
/// result always starts with `/` (a `?` or `;` first gets one prepended); a URL
/// without a path gives `/`. Nothing else is done: no dot segments resolved,
/// `\` is an ordinary byte, and the path starts at the first `/`, `?` or `;`
/// after `://` even inside the user info (`https://u;x@example.com/ab/` gives
/// `/;x@example.com/ab/`). This is what `--raw-urls` matches.
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
    if memchr::memchr(b'#', &url[search_start..path_start]).is_some() {
        return Cow::Borrowed(b"/");
    }
    google_path_from(url, path_start)
}

/// [`path_params_query`] once the path is known to start at `path_start`
/// with no `#` before it: up to the fragment, `/` prepended when needed.
fn google_path_from(url: &[u8], path_start: usize) -> Cow<'_, [u8]> {
    let path = &url[path_start..];
    let path = &path[..memchr::memchr(b'#', path).unwrap_or(path.len())];
    match path.first() {
        None => Cow::Borrowed(b"/"),
        Some(b'/') => Cow::Borrowed(path),
        Some(_) => Cow::Owned([&b"/"[..], path].concat()),
    }
}

/// How a URL's path is read before rules match it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PathMode {
    /// The path and query the fetcher requests: as a WHATWG URL parser
    /// serialises them (dot segments resolved, so `/x/../private` is
    /// `/private`; `\` read as `/`; the standard's percent-encode sets
    /// applied, so bytes >= 0x80 become `%XX`), then escaped as patterns are
    /// (upper-case hex in escapes). The default: a link through `..` cannot
    /// get past a `Disallow`. Google's library expects URLs already in this
    /// form; for those both modes agree.
    #[default]
    Escaped,
    /// The path byte for byte as Google's library reads it
    /// ([`path_params_query`]; `--raw-urls`).
    Raw,
}

impl PathMode {
    /// Appends the path of `origin`'s URL in this mode to `out`: what
    /// [`Origin::path_for`] gives, into a buffer that many paths can share.
    #[inline]
    pub fn prepare_into(self, origin: &Origin<'_>, out: &mut Vec<u8>) {
        match self {
            PathMode::Escaped => out.extend_from_slice(origin.path),
            PathMode::Raw => out.extend_from_slice(&origin.google_path()),
        }
    }

    /// The path, in this mode, of anything Google's library accepts (absolute
    /// URLs, `host/path`, bare paths): what `check --robots` matches.
    ///
    /// For a URL [`KeyBuf::parse`] accepts this is exactly the path an
    /// artifact lookup matches (`check --rules`, `filter`), so one robots.txt
    /// gives one answer however it is asked. For anything else the escaped
    /// path is Google's path read as the path and query of a special URL
    /// (dot segments, `\` and percent-encoding as above).
    pub fn path_of(self, url: &[u8]) -> Cow<'_, [u8]> {
        let url = trim_c0_and_space(url);
        if self == PathMode::Raw {
            return path_params_query(url);
        }
        let mut buf = KeyBuf::new();
        if let Ok(origin) = buf.parse(url) {
            return Cow::Owned(origin.path.to_vec());
        }
        let google = path_params_query(url);
        let clean: Vec<u8> = google.iter().copied().filter(|b| !matches!(b, b'\t' | b'\n' | b'\r')).collect();
        let mut serialised = Vec::with_capacity(clean.len() + 8);
        complete::write_path_and_query(&clean, &mut serialised);
        Cow::Owned(crate::pattern::escape(&serialised).into_owned())
    }
}

fn find_subslice(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `url` without leading and trailing C0 controls and spaces (bytes up to
/// 0x20), as the URL Standard strips them before parsing.
pub fn trim_c0_and_space(url: &[u8]) -> &[u8] {
    // Nearly every URL: nothing to trim, seen from its two ends.
    if let [first, .., last] = url {
        if *first > 0x20 && *last > 0x20 {
            return url;
        }
    }
    let start = url.iter().position(|&b| b > 0x20).unwrap_or(url.len());
    let end = url.iter().rposition(|&b| b > 0x20).map_or(start, |e| e + 1);
    &url[start..end]
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
///
/// Every URL the WHATWG URL Standard refuses gets one of these, and so do
/// the few it accepts that robotsieve refuses on purpose
/// ([`UrlError::MissingSlashes`], [`UrlError::UnsupportedScheme`]). More
/// variants may come: match with a wildcard arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrlError {
    /// No scheme at the start: a relative URL, a bare host or garbage.
    NotAbsolute,
    /// A scheme other than http, https or ftp (robots.txt governs only those).
    UnsupportedScheme,
    /// `http:` not followed by two slashes (`/` or `\`), as in
    /// `http:example.com` or `http:/x.com`. The standard reads these as
    /// absolute only when no base URL of the same scheme is around; as a
    /// link on an http page they are relative, so a frontier holding them
    /// holds an extraction bug, and refusing fails closed. A deliberate
    /// exception to the standard.
    MissingSlashes,
    /// Nothing between `scheme://` (or the user info) and the port or path.
    EmptyHost,
    /// The host, percent-decoded, holds this forbidden code point: a C0
    /// control, space, `#`, `%`, `/`, `:`, `<`, `>`, `?`, `@`, `[`, `\`, `]`,
    /// `^`, `|` or DEL.
    ForbiddenHostCodePoint(u8),
    /// The percent-decoded host is not UTF-8.
    HostNotUtf8,
    /// A non-ASCII host that UTS #46 (IDNA) cannot map to ASCII.
    InvalidIdn,
    /// An ASCII host with an `xn--` label that is not valid punycode or
    /// decodes to a label UTS #46 refuses (`http://xn--/`).
    InvalidPunycode,
    /// The host ends in a number (`1.2.3.4`, `0x7f.1`, `example.256`) but is
    /// not an IPv4 address the standard accepts (`256.256.256.256`).
    InvalidIpv4,
    /// A bracketed host that is not an IPv6 address (zone identifiers included).
    InvalidIpv6,
    /// A port that is not a decimal number or is above 65535.
    InvalidPort,
    /// A valid URL that is not `/robots.txt` at the root of its origin, where
    /// one was required ([`OriginKey::of_robots_url`]).
    NotRobotsTxt,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::NotAbsolute => f.write_str("not an absolute URL (no scheme)"),
            UrlError::UnsupportedScheme => f.write_str("scheme is not http, https or ftp"),
            UrlError::MissingSlashes => {
                f.write_str("no // after the scheme (a link relative to its page, not an absolute URL)")
            }
            UrlError::EmptyHost => f.write_str("empty host"),
            UrlError::ForbiddenHostCodePoint(b) => match char::from(*b) {
                c if c.is_ascii_graphic() => write!(f, "host contains {c:?}, which no host may hold"),
                _ => write!(f, "host contains byte {b:#04x}, which no host may hold"),
            },
            UrlError::HostNotUtf8 => f.write_str("host is not UTF-8 (after percent-decoding)"),
            UrlError::InvalidIdn => f.write_str("non-ASCII host is not a valid internationalised domain name"),
            UrlError::InvalidPunycode => f.write_str("host has an xn-- label that is not valid punycode"),
            UrlError::InvalidIpv4 => f.write_str("host ends in a number but is not an IPv4 address"),
            UrlError::InvalidIpv6 => f.write_str("bracketed host is not an IPv6 address"),
            UrlError::InvalidPort => f.write_str("port is not a number from 0 to 65535"),
            UrlError::NotRobotsTxt => f.write_str("not /robots.txt at the root of its origin"),
        }
    }
}

impl std::error::Error for UrlError {}

/// A URL taken apart for the filter: its origin key and its paths.
///
/// Borrowed from a [`KeyBuf`] and the URL; valid until the buffer is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The canonical origin key, `scheme://host` or `scheme://host:port` (see
    /// [`OriginKey`]): the URL's own first bytes when it is written so
    /// (see [`KeyBuf`]), else built in the buffer.
    pub key: &'a [u8],
    /// The path and query the fetcher requests, fragment dropped, ready to
    /// match in the default mode ([`PathMode::Escaped`]): serialised as the
    /// URL Standard does, hex digits of escapes in upper case. Always starts
    /// with `/`.
    pub path: &'a [u8],
    /// The scheme.
    pub scheme: Scheme,
    /// The port written in the URL, unless it is the scheme's default.
    pub port: Option<u16>,
    host_len: usize,
    /// The URL, stripped of leading and trailing C0 controls and spaces.
    url: &'a [u8],
    /// Where Google's library's path starts in `url`, when the fast path
    /// found it on the way (no `#` before it).
    google_path_start: Option<usize>,
}

impl<'a> Origin<'a> {
    /// The normalised host: lower-case ASCII, punycode for internationalised
    /// names, IPv4 addresses in dotted decimal, IPv6 literals in brackets in
    /// the standard's compressed form.
    pub fn host(&self) -> &'a [u8] {
        let start = self.scheme.as_str().len() + 3;
        &self.key[start..start + self.host_len]
    }

    /// Whether the path-and-query is exactly `/robots.txt`.
    pub fn is_robots_txt(&self) -> bool {
        self.path == b"/robots.txt"
    }

    /// The path and query as Google's library reads them
    /// ([`path_params_query`] of the URL): what `--raw-urls` matches.
    pub fn google_path(&self) -> Cow<'a, [u8]> {
        match self.google_path_start {
            Some(start) => google_path_from(self.url, start),
            None => path_params_query(self.url),
        }
    }

    /// The path rules match in `mode`.
    pub fn path_for(&self, mode: PathMode) -> Cow<'a, [u8]> {
        match mode {
            PathMode::Escaped => Cow::Borrowed(self.path),
            PathMode::Raw => self.google_path(),
        }
    }
}

/// Reusable scratch space for taking URLs apart without allocating.
///
/// The filter keeps one per worker: after the first few URLs have grown its
/// buffers, [`KeyBuf::parse`] allocates nothing (except for non-ASCII hosts,
/// which go through IDNA).
///
/// The origin and the request path are those of the WHATWG URL Standard's
/// parser for the special schemes http, https and ftp, with no base URL:
/// - leading and trailing C0 controls and spaces are stripped, tab, LF and CR
///   removed from anywhere;
/// - the scheme is http, https or ftp in any case, followed by at least two
///   slashes, each `/` or `\` (robotsieve's one exception: the standard also
///   takes one or none, [`UrlError::MissingSlashes`]); more are skipped;
/// - the authority ends at the first `/`, `\`, `?` or `#`; the user info (up
///   to its last `@`) is dropped; the first `:` outside brackets starts the
///   port (decimal, at most 65535; the scheme's default dropped from the key);
/// - the host: `[...]` must be an IPv6 address, written back compressed;
///   otherwise it is percent-decoded, refused if it holds a forbidden code
///   point, mapped with UTS #46 (lower case, punycode, `xn--` labels
///   checked), and, when its last label is a number, read as an IPv4 address
///   in any form the standard takes (`0x7f.1`, `127.1`, `2130706433`,
///   `0177.0.0.1`) and written in dotted decimal;
/// - the path and query: see [`PathMode::Escaped`].
///
/// Nearly every URL of a frontier is plain: a lower- or upper-case ASCII host
/// of letters, digits, `-`, `.`, `_` and `~` that does not end in a digit and
/// has no label starting `xn--` or `0x`, and a path with no byte the
/// standard changes, no escape but upper-case `%XX` (not `%2E`) and no
/// segment starting with `.`. Those are taken in one pass over the authority
/// and a vector scan of the path; every other URL (about 3% of a real
/// frontier) goes through the complete parser (the `complete` module), which
/// gives the same answer for the plain ones. A plain URL whose scheme and
/// host are in lower case, with no user info and no default or zero-padded
/// port, starts with its key as it is written: its [`Origin::key`] is then
/// those first bytes of the URL, and nothing is built or copied.
#[derive(Clone, Debug, Default)]
pub struct KeyBuf {
    key: Vec<u8>,
    path: Vec<u8>,
    complete: complete::Buffers,
    /// Which vector forms of the scans the CPU runs, asked once per buffer.
    vectors: Vectors,
}

/// Where [`KeyBuf::locate`] found a URL's origin key and escaped path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spans {
    /// The key ([`Origin::key`]): these bytes of the URL, or `None` for
    /// [`KeyBuf::key`].
    pub key: Option<Range<usize>>,
    /// The path and query in [`PathMode::Escaped`] ([`Origin::path`]):
    /// these bytes of the URL, or `None` for [`KeyBuf::path`].
    pub path: Option<Range<usize>>,
}

/// Where [`KeyBuf::parse`] left the parts of a URL it accepted.
struct Layout {
    scheme: Scheme,
    port: Option<u16>,
    host_len: usize,
    /// The key: a range of the URL, or `None` for the buffer.
    key: Option<Range<usize>>,
    /// The path: a range of the URL, or `None` for the buffer.
    path: Option<Range<usize>>,
    google_path_start: Option<usize>,
}

impl KeyBuf {
    /// An empty buffer.
    pub fn new() -> KeyBuf {
        KeyBuf {
            key: Vec::with_capacity(64),
            path: Vec::new(),
            complete: complete::Buffers::default(),
            vectors: Vectors::detect(),
        }
    }

    /// Takes `url` apart: its origin key (written into this buffer) and its
    /// paths, as the WHATWG URL Standard reads them (see [`KeyBuf`]).
    pub fn parse<'a>(&'a mut self, url: &'a [u8]) -> Result<Origin<'a>, UrlError> {
        let url = trim_c0_and_space(url);
        let layout = match self.parse_plain(url, self.vectors) {
            Some(layout) => layout,
            None => self.parse_complete_layout(url)?,
        };
        Ok(self.origin(url, layout))
    }

    /// Where `url`'s origin key and escaped path ([`PathMode::Escaped`])
    /// are, as [`KeyBuf::parse`] reads them: ranges of `url` itself (nearly
    /// always, see [`KeyBuf`]), or, where a range is `None`, this buffer's
    /// [`KeyBuf::key`] or [`KeyBuf::path`]. The same parse as
    /// [`KeyBuf::parse`] without the [`Origin`] around it: the filter's
    /// grouped path needs only these two places, and building and reading
    /// back the nine words of an `Origin` was a tenth of its parse.
    #[inline(always)]
    pub fn locate(&mut self, url: &[u8]) -> Result<Spans, UrlError> {
        self.locate_with(url, self.vectors)
    }

    /// [`KeyBuf::locate`] for a caller compiled with AVX2 enabled
    /// (`#[target_feature(enable = "avx2")]`), into which the AVX2 scans
    /// are then inlined, with no check of the CPU per URL: `avx2` (from
    /// [`KeyBuf::avx2`]) is the proof that the CPU has it. Called from
    /// another caller it answers the same, only without the inlining.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn locate_avx2(&mut self, avx2: Avx2, url: &[u8]) -> Result<Spans, UrlError> {
        let _ = avx2;
        self.locate_with(url, Vectors { avx2: true, inline: true })
    }

    /// The AVX2 token when this buffer's scans run with AVX2 (the CPU has
    /// it), for [`KeyBuf::locate_avx2`].
    pub fn avx2(&self) -> Option<Avx2> {
        Avx2::detect().filter(|_| self.vectors.avx2)
    }

    /// [`KeyBuf::locate`] with the scans of `vectors`.
    #[inline(always)]
    fn locate_with(&mut self, url: &[u8], vectors: Vectors) -> Result<Spans, UrlError> {
        let trimmed = trim_c0_and_space(url);
        let layout = match self.parse_plain(trimmed, vectors) {
            Some(layout) => layout,
            None => self.parse_complete_layout(trimmed)?,
        };
        // The ranges are of the trimmed URL; move them to `url`'s indices.
        let offset = trimmed.as_ptr() as usize - url.as_ptr() as usize;
        let of_url = |range: Range<usize>| range.start + offset..range.end + offset;
        Ok(Spans { key: layout.key.map(of_url), path: layout.path.map(of_url) })
    }

    /// The origin key the last [`KeyBuf::locate`] built, when its
    /// [`Spans::key`] is `None` (otherwise stale).
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The escaped path the last [`KeyBuf::locate`] built, when its
    /// [`Spans::path`] is `None` (otherwise stale).
    pub fn path(&self) -> &[u8] {
        &self.path
    }

    /// [`KeyBuf::parse`] without the fast path: the complete parser alone.
    /// The same answer for every URL; the tests check that it is.
    pub fn parse_complete<'a>(&'a mut self, url: &'a [u8]) -> Result<Origin<'a>, UrlError> {
        let url = trim_c0_and_space(url);
        let layout = self.parse_complete_layout(url)?;
        Ok(self.origin(url, layout))
    }

    fn origin<'a>(&'a self, url: &'a [u8], layout: Layout) -> Origin<'a> {
        let path = match layout.path {
            Some(range) => &url[range],
            None => &self.path[..],
        };
        let key = match layout.key {
            Some(range) => &url[range],
            None => &self.key[..],
        };
        let Layout { scheme, port, host_len, google_path_start, .. } = layout;
        Origin { key, path, scheme, port, host_len, url, google_path_start }
    }

    fn parse_complete_layout(&mut self, url: &[u8]) -> Result<Layout, UrlError> {
        let parsed = complete::parse(url, &mut self.complete, &mut self.key, &mut self.path)?;
        Ok(Layout {
            scheme: parsed.scheme,
            port: parsed.port,
            host_len: parsed.host_len,
            key: None,
            path: None,
            google_path_start: None,
        })
    }

    /// The fast path: a plain URL (see [`KeyBuf`]) taken apart, or `None`
    /// for any other, which the complete parser then reads.
    ///
    /// Runs once per URL of the frontier, so it avoids what costs on 40 to 90
    /// byte URLs: the scheme is matched as one word, the authority is walked
    /// once for all its delimiters (instead of one memchr each, whose start-up
    /// costs more than the short scan), the host is lower-cased while it is
    /// copied, and the path is checked 16 bytes at a time, which also finds
    /// the fragment.
    // Always inlined: into `locate`, so that the grouped path reads the
    // key's and path's places from registers, not from a returned `Layout`.
    #[inline(always)]
    fn parse_plain(&mut self, url: &[u8], vectors: Vectors) -> Option<Layout> {
        let (scheme, authority_start, scheme_as_is) = common_scheme_prefix(url)?;
        let authority = match AuthorityScan::of_block(url, authority_start, vectors) {
            Some(authority) => authority,
            None => AuthorityScan::of(&url[authority_start..], authority_start),
        };
        if !authority.plain {
            return None;
        }
        let host_end = authority.port_colon.unwrap_or(authority.end);
        let host = &url[authority.host_start..host_end];
        // An empty host may be more slashes to skip; a last label that ends
        // in a digit may make the host an IPv4 address. Both are rare.
        let last = match host {
            [] => return None,
            [.., last, b'.'] => *last,
            [.., last] => *last,
        };
        if last.is_ascii_digit() {
            return None;
        }
        let port = match authority.port_colon {
            Some(colon) if colon + 1 < authority.end => Some(parse_port(&url[colon + 1..authority.end]).ok()?),
            _ => None,
        }
        .filter(|&p| p != scheme.default_port());

        // The scan steps over `|`, `~` and upper-case escapes other than
        // `%2E` ([`stepped_over`]); it ends at the fragment or the end.
        let path_end = plain_path_end(url, authority.end, vectors);
        if path_end != url.len() && url[path_end] != b'#' {
            return None;
        }

        let key = if scheme_as_is && key_is_written_as_is(url, authority_start, &authority, port) {
            Some(0..authority.end)
        } else {
            self.key.clear();
            // One fixed 8-byte copy, cut back: a copy of 6 to 8 bytes would be a memcpy call.
            self.key.extend_from_slice(&scheme.key_prefix_padded());
            self.key.truncate(scheme.key_prefix().len());
            push_lowercase(&mut self.key, &url[authority.host_start..], host.len());
            if let Some(port) = port {
                self.key.push(b':');
                write_decimal(&mut self.key, port);
            }
            None
        };

        // The authority ends at '/', '?', '#' or the end ('\' is not plain).
        let path = match url.get(authority.end) {
            Some(b'/') => Some(authority.end..path_end),
            Some(b'?') => {
                self.path.clear();
                self.path.push(b'/');
                self.path.extend_from_slice(&url[authority.end..path_end]);
                None
            }
            _ => {
                self.path.clear();
                self.path.push(b'/');
                None
            }
        };
        let google_path_start = authority.semicolon.unwrap_or(authority.end);
        Some(Layout { scheme, port, host_len: host.len(), key, path, google_path_start: Some(google_path_start) })
    }
}

/// Whether a plain URL (one [`KeyBuf::parse_plain`] takes) whose scheme is
/// written in lower case starts with its origin key exactly as the key is
/// written: no user info, a host with no upper-case letter, and no port or a port that
/// is not the scheme's default, written without leading zeros. Then the
/// key is the URL's first bytes, up to the end of the authority (or of the
/// host, when there is no port), and nothing is copied.
///
/// Nearly every URL of a frontier is written so; the others (`HTTP://`,
/// `Example.com`, `:80`, `:0080`, `user@`) have their key built.
#[inline]
fn key_is_written_as_is(url: &[u8], authority_start: usize, authority: &AuthorityScan, port: Option<u16>) -> bool {
    let port_as_is = match (authority.port_colon, port) {
        (None, _) => true,
        // `:0`, or digits with no leading zero (`parse_port` took them).
        (Some(colon), Some(_)) => url[colon + 1] != b'0' || colon + 2 == authority.end,
        // `:` alone, or the default port written out.
        (Some(_), None) => false,
    };
    port_as_is && authority.host_start == authority_start && !authority.upper_case
}

/// `http://`, `https://` or `ftp://` in any case at the start of `url`, found
/// by comparing its first 8 bytes as one word: nearly every URL of a frontier
/// starts so, and this costs a load and three compares instead of a byte loop
/// and up to three case-folded string compares. `None` for anything else
/// (including URLs shorter than 8 bytes), which the complete parser reads.
/// Also says whether the scheme is written in lower case, as in the key.
fn common_scheme_prefix(url: &[u8]) -> Option<(Scheme, usize, bool)> {
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
        Some((Scheme::Https, 8, head == word(b"https://")))
    } else if (head | FOLD_4) & FIRST_7 == word(b"http://\0") {
        Some((Scheme::Http, 7, head & FIRST_7 == word(b"http://\0")))
    } else if (head | FOLD_3) & FIRST_6 == word(b"ftp://\0\0") {
        Some((Scheme::Ftp, 6, head & FIRST_6 == word(b"ftp://\0\0")))
    } else {
        None
    }
}

/// Where the parts of an authority are, found in one pass over it.
#[derive(Debug, PartialEq, Eq)]
struct AuthorityScan {
    /// The first `/`, `\`, `?` or `#` (or the URL's end): the end of the authority.
    end: usize,
    /// After the last `@` of the authority (the user info is dropped).
    host_start: usize,
    /// The `:` after `host_start`, if there is one.
    port_colon: Option<usize>,
    /// The first `;` of the authority, user info included: where Google's
    /// library starts the path.
    semicolon: Option<usize>,
    /// After the last `@`: only plain host bytes ([`is_plain_host_byte`],
    /// and `x` but where it starts `xn--` or `0x`) and at most one `:`. When
    /// false the URL may still be valid (IPv6, IDN, percent-escapes, an
    /// `xn--` label, an IPv4 address), or the port may be odd; the complete
    /// parser decides.
    plain: bool,
    /// Whether an ASCII upper-case letter follows the last `@`: the key
    /// then differs from the URL's bytes (found on the way, by the same
    /// word-at-a-time steps that skip host bytes).
    upper_case: bool,
}

/// What the authority scan does with a byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AuthorityByte {
    /// A plain host byte ([`is_plain_host_byte`]): nothing to do (the scan
    /// skips runs of them with [`skip_host_bytes`] before it looks bytes up here).
    Host,
    /// `/`, `\`, `?` or `#`: the authority ends.
    End,
    /// `@`: what came before is user info.
    At,
    /// `:`: separates the port.
    Colon,
    /// `;`: not a plain host byte, and where Google's library starts the
    /// path when it is the first.
    Semicolon,
    /// `x` or `X`: a plain host byte unless it starts `xn--` or ends `0x` at
    /// the start of a label ([`starts_punycode_or_hex`]).
    X,
    /// Any other byte: the host is not plain (or the port is invalid).
    Other,
}

static AUTHORITY_BYTES: [AuthorityByte; 256] = {
    let mut table = [AuthorityByte::Other; 256];
    let mut b = 0;
    while b < 256 {
        if is_plain_host_byte(b as u8) {
            table[b] = AuthorityByte::Host;
        }
        b += 1;
    }
    table[b'/' as usize] = AuthorityByte::End;
    table[b'\\' as usize] = AuthorityByte::End;
    table[b'?' as usize] = AuthorityByte::End;
    table[b'#' as usize] = AuthorityByte::End;
    table[b'@' as usize] = AuthorityByte::At;
    table[b':' as usize] = AuthorityByte::Colon;
    table[b';' as usize] = AuthorityByte::Semicolon;
    table[b'x' as usize] = AuthorityByte::X;
    table[b'X' as usize] = AuthorityByte::X;
    table
};

/// Whether the `x` at `i` of `tail` (whose host starts at `host_start`)
/// starts an `xn--` label, a punycode label UTS #46 must check, or follows
/// the `0` of a label starting `0x`, a hex number that may make the host an
/// IPv4 address. Either case of `x` and `n`.
fn starts_punycode_or_hex(tail: &[u8], host_start: usize, i: usize) -> bool {
    let label_starts_at = |j: usize| j == host_start || (j > host_start && tail[j - 1] == b'.');
    let punycode = label_starts_at(i)
        && tail.get(i + 1..i + 4).is_some_and(|next| next[0].eq_ignore_ascii_case(&b'n') && next[1..] == *b"--");
    let hex = i > host_start && tail[i - 1] == b'0' && label_starts_at(i - 1);
    punycode || hex
}

impl AuthorityScan {
    /// Scans `tail`, the URL from the authority on; the positions returned
    /// are `offset` plus indices into `tail`, that is, indices into the URL.
    ///
    /// One pass (host bytes skipped eight at a time, the others looked up in
    /// a table) is cheaper on the 10 to 30 bytes of a typical authority than
    /// one memchr per delimiter with their start-up cost.
    fn of(tail: &[u8], offset: usize) -> AuthorityScan {
        let (mut host_start, mut colon, mut semicolon) = (0, None, None);
        // Whether a byte that is not a plain host byte, or a second colon,
        // was seen since the last '@'.
        let mut odd = false;
        // Whether an upper-case letter was seen since the last '@'.
        let mut upper_case = false;
        let mut i = 0;
        loop {
            // Host bytes are most of the authority: skip them in bulk.
            let upper_case_skipped;
            (i, upper_case_skipped) = skip_host_bytes(tail, i);
            upper_case |= upper_case_skipped;
            let Some(&byte) = tail.get(i) else { break };
            match AUTHORITY_BYTES[usize::from(byte)] {
                AuthorityByte::End => break,
                // A later '@' makes everything before it user info.
                AuthorityByte::At => (host_start, colon, odd, upper_case) = (i + 1, None, false, false),
                AuthorityByte::Colon => odd |= colon.replace(i).is_some(),
                AuthorityByte::Semicolon => {
                    odd = true;
                    semicolon = semicolon.or(Some(i));
                }
                AuthorityByte::X => {
                    odd |= starts_punycode_or_hex(tail, host_start, i);
                    upper_case |= byte == b'X';
                }
                AuthorityByte::Other => odd = true,
                AuthorityByte::Host => {}
            }
            i += 1;
        }
        AuthorityScan {
            end: offset + i,
            host_start: offset + host_start,
            port_colon: colon.map(|c| offset + c),
            semicolon: semicolon.map(|c| offset + c),
            plain: !odd,
            upper_case,
        }
    }
}

impl AuthorityScan {
    /// The scan of a plain authority (no user info, no `;`, at most one `:`,
    /// only plain host bytes and no `xn--` or `0x` label) that ends within
    /// the 32 bytes from `authority_start`, found from the bit masks of one
    /// block ([`AuthorityMasks`]); `None` for anything else, which
    /// [`AuthorityScan::of`] then reads byte by byte (a few URLs in a hundred).
    #[inline]
    fn of_block(url: &[u8], authority_start: usize, vectors: Vectors) -> Option<AuthorityScan> {
        #[cfg(target_arch = "x86_64")]
        if vectors.avx2 && vectors.inline {
            // SAFETY: the CPU has AVX2 (and the caller is compiled for it).
            return AuthorityScan::of_block_with(url, authority_start, |block, _| unsafe {
                AuthorityMasks::of_avx2(block)
            });
        }
        #[cfg(target_arch = "x86_64")]
        if vectors.avx2 {
            // SAFETY: the CPU has AVX2.
            return unsafe { AuthorityScan::of_block_avx2(url, authority_start) };
        }
        AuthorityScan::of_block_sse2(url, authority_start)
    }

    /// [`AuthorityScan::of_block`] with the masks of [`AuthorityMasks::of`]
    /// (SSE2 on x86_64), a call of its own like the AVX2 form, so that the
    /// per-URL loop holds neither form inline.
    #[inline(never)]
    fn of_block_sse2(url: &[u8], authority_start: usize) -> Option<AuthorityScan> {
        AuthorityScan::of_block_with(url, authority_start, AuthorityMasks::of)
    }

    /// [`AuthorityScan::of_block`] with the masks of [`AuthorityMasks::of_avx2`]:
    /// the 32 bytes in one step, the host bytes found by one nibble lookup.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    fn of_block_avx2(url: &[u8], authority_start: usize) -> Option<AuthorityScan> {
        AuthorityScan::of_block_with(url, authority_start, |block, _| AuthorityMasks::of_avx2(block))
    }

    /// [`AuthorityScan::of_block`] with the masks of each block from `of`
    /// (a form of [`AuthorityMasks::of`]).
    #[inline(always)]
    fn of_block_with(
        url: &[u8],
        authority_start: usize,
        of: impl Fn(&[u8; 32], bool) -> AuthorityMasks,
    ) -> Option<AuthorityScan> {
        let (masks, len) = AuthorityMasks::at(url, authority_start, of);
        let end = match masks.end {
            0 if len < 32 => len,
            0 => return None,
            ends => ends.trailing_zeros(),
        };
        let before_end = !(u32::MAX << end);
        let colons = masks.colon & before_end;
        if masks.other & before_end != 0 || colons & colons.wrapping_sub(1) != 0 {
            return None;
        }
        let tail = &url[authority_start..];
        let mut xs = masks.x & before_end;
        while xs != 0 {
            if starts_punycode_or_hex(tail, 0, xs.trailing_zeros() as usize) {
                return None;
            }
            xs &= xs - 1;
        }
        Some(AuthorityScan {
            end: authority_start + end as usize,
            host_start: authority_start,
            port_colon: (colons != 0).then(|| authority_start + colons.trailing_zeros() as usize),
            semicolon: None,
            plain: true,
            upper_case: masks.upper & before_end != 0,
        })
    }
}

/// What the authority scan needs to know of 32 bytes of a URL, one bit per
/// byte (bit `i` for byte `i`): found for all 32 bytes at once (two SSE2
/// blocks on x86_64), so that a plain authority is read from a few masks
/// instead of byte by byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct AuthorityMasks {
    /// `/`, `\`, `?` and `#`: where the authority may end.
    end: u32,
    /// `:`.
    colon: u32,
    /// ASCII upper-case letters (`X` included).
    upper: u32,
    /// `x` and `X`, host bytes unless they start `xn--` or `0x`.
    x: u32,
    /// Bytes that are none of these and no plain host byte
    /// ([`is_plain_host_byte`]): `@`, `;`, `%`, `[`, controls, non-ASCII...
    other: u32,
}

/// One bit per [`AuthorityMasks`] field: the class of each byte, for the
/// byte-at-a-time form of the masks and the nibble tables of the vector form.
static AUTHORITY_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = if matches!(byte, b'/' | b'\\' | b'?' | b'#') {
            AuthorityMasks::END
        } else if byte == b':' {
            AuthorityMasks::COLON
        } else if byte == b'X' {
            AuthorityMasks::X | AuthorityMasks::UPPER
        } else if byte == b'x' {
            AuthorityMasks::X
        } else if byte.is_ascii_uppercase() {
            AuthorityMasks::UPPER
        } else if is_plain_host_byte(byte) {
            0
        } else {
            AuthorityMasks::OTHER
        };
        b += 1;
    }
    table
};

/// The classes of [`AUTHORITY_CLASSES`], one per field.
impl AuthorityMasks {
    const END: u8 = 1;
    const COLON: u8 = 2;
    const UPPER: u8 = 4;
    const X: u8 = 8;
    const OTHER: u8 = 16;
}

impl AuthorityMasks {
    /// The masks of the 32 bytes of `url` from `at` (`at <= url.len()`), and
    /// how many of those 32 bytes the URL has: bits past the URL's end are
    /// clear, and so may be those after the first `end` bit (see
    /// [`AuthorityMasks::of`]). A URL that ends sooner is read as its last
    /// 32 bytes, the masks shifted, or, shorter than 32 bytes, copied into a
    /// block of zeros.
    #[inline(always)]
    fn at(url: &[u8], at: usize, of: impl Fn(&[u8; 32], bool) -> AuthorityMasks) -> (AuthorityMasks, u32) {
        if let Some(block) = url.get(at..at + 32) {
            return (of(block.try_into().expect("32 bytes"), false), 32);
        }
        let len = (url.len() - at) as u32;
        if len == 0 {
            return (AuthorityMasks::default(), 0);
        }
        if let Some(start) = url.len().checked_sub(32) {
            // The block starts before `at`: its first half may hold a `/` of the scheme.
            let masks = of(url[start..].try_into().expect("32 bytes"), true);
            return (masks.shifted((at - start) as u32), len);
        }
        let mut block = [0u8; 32];
        block[..url.len() - at].copy_from_slice(&url[at..]);
        (of(&block, false).within(len), len)
    }

    /// The masks with bit `i` moved to bit `i - by` (`0 < by < 32`).
    fn shifted(self, by: u32) -> AuthorityMasks {
        let AuthorityMasks { end, colon, upper, x, other } = self;
        AuthorityMasks { end: end >> by, colon: colon >> by, upper: upper >> by, x: x >> by, other: other >> by }
    }

    /// The masks of the first `len` bytes only (`len < 32`).
    fn within(self, len: u32) -> AuthorityMasks {
        self.within_mask(!(u32::MAX << len))
    }

    /// The masks of the bytes of `keep` only.
    fn within_mask(self, keep: u32) -> AuthorityMasks {
        let AuthorityMasks { end, colon, upper, x, other } = self;
        AuthorityMasks { end: end & keep, colon: colon & keep, upper: upper & keep, x: x & keep, other: other & keep }
    }

    /// The masks of `block`; unless `whole`, only the bits up to the first
    /// `end` bit are sure to be set (the vector form skips the second half
    /// when the first holds an `end` byte: 40% of real authorities are
    /// shorter than 16 bytes).
    #[inline]
    fn of(block: &[u8; 32], whole: bool) -> AuthorityMasks {
        #[cfg(target_arch = "x86_64")]
        return AuthorityMasks::of_sse2(block, whole);
        #[cfg(not(target_arch = "x86_64"))]
        return {
            let _ = whole;
            AuthorityMasks::of_bytewise(block)
        };
    }

    /// The masks from [`AUTHORITY_CLASSES`], a byte at a time: the portable
    /// form, and what the vector form is tested against.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code, reason = "the portable form; on x86_64 the tests' reference"))]
    fn of_bytewise(block: &[u8; 32]) -> AuthorityMasks {
        let mut masks = AuthorityMasks::default();
        for (i, &b) in block.iter().enumerate() {
            let class = AUTHORITY_CLASSES[usize::from(b)];
            let bit = |flag: u8| u32::from(class & flag != 0) << i;
            masks.end |= bit(AuthorityMasks::END);
            masks.colon |= bit(AuthorityMasks::COLON);
            masks.upper |= bit(AuthorityMasks::UPPER);
            masks.x |= bit(AuthorityMasks::X);
            masks.other |= bit(AuthorityMasks::OTHER);
        }
        masks
    }

    /// [`AuthorityMasks::of_bytewise`] 16 bytes per step with SSE2 (see
    /// [`AuthorityMasks::of`] for `whole`).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn of_sse2(block: &[u8; 32], whole: bool) -> AuthorityMasks {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; the two unaligned
        // loads read exactly the 32 bytes of `block`.
        unsafe {
            let splat = |b: u8| _mm_set1_epi8(b as i8);
            // Bytes from `lo` to `hi`: moved so that `lo` is -128, then one
            // signed comparison.
            let in_range = |v: __m128i, lo: u8, hi: u8| {
                _mm_cmplt_epi8(_mm_add_epi8(v, splat(0x80u8.wrapping_sub(lo))), splat(0x81u8.wrapping_add(hi - lo)))
            };
            let half = |offset: usize| {
                let v = _mm_loadu_si128(block.as_ptr().add(offset).cast());
                let folded = _mm_or_si128(v, splat(0x20));
                let letter = in_range(folded, b'a', b'z');
                let upper = in_range(v, b'A', b'Z');
                let x = _mm_cmpeq_epi8(folded, splat(b'x'));
                let colon = _mm_cmpeq_epi8(v, splat(b':'));
                // `/` and `?` are the two bytes that give 0x3F with bit 0x10 set.
                let end = _mm_or_si128(
                    _mm_cmpeq_epi8(_mm_or_si128(v, splat(0x10)), splat(b'?')),
                    _mm_or_si128(_mm_cmpeq_epi8(v, splat(b'#')), _mm_cmpeq_epi8(v, splat(b'\\'))),
                );
                let host = _mm_or_si128(
                    _mm_or_si128(letter, in_range(v, b'0', b'9')),
                    _mm_or_si128(
                        in_range(v, b'-', b'.'),
                        _mm_or_si128(_mm_cmpeq_epi8(v, splat(b'_')), _mm_cmpeq_epi8(v, splat(b'~'))),
                    ),
                );
                let known = _mm_or_si128(host, _mm_or_si128(colon, end));
                let mask = |m: __m128i| _mm_movemask_epi8(m) as u32 & 0xFFFF;
                AuthorityMasks {
                    end: mask(end),
                    colon: mask(colon),
                    upper: mask(upper),
                    x: mask(x),
                    other: !mask(known) & 0xFFFF,
                }
            };
            let low = half(0);
            if low.end != 0 && !whole {
                return low;
            }
            let high = half(16);
            AuthorityMasks {
                end: low.end | high.end << 16,
                colon: low.colon | high.colon << 16,
                upper: low.upper | high.upper << 16,
                x: low.x | high.x << 16,
                other: low.other | high.other << 16,
            }
        }
    }
}

impl AuthorityMasks {
    /// [`AuthorityMasks::of_bytewise`] of all 32 bytes in one step with
    /// AVX2: the bytes the scan knows (host bytes, `:`, `x` and the ends)
    /// found by one nibble lookup ([`AUTHORITY_NIBBLES`]) instead of ten
    /// comparisons, the others compared as [`AuthorityMasks::of_sse2`] does.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    fn of_avx2(block: &[u8; 32]) -> AuthorityMasks {
        use std::arch::x86_64::*;
        // SAFETY: the unaligned loads read the 32 bytes of `block` and of each table.
        unsafe {
            let v = _mm256_loadu_si256(block.as_ptr().cast());
            let splat = |b: u8| _mm256_set1_epi8(b as i8);
            let high_table = _mm256_loadu_si256(AUTHORITY_NIBBLES_WIDE[0].as_ptr().cast());
            let low_table = _mm256_loadu_si256(AUTHORITY_NIBBLES_WIDE[1].as_ptr().cast());
            let high_nibbles = _mm256_and_si256(_mm256_srli_epi16(v, 4), splat(0x0F));
            // A byte from 0x80 has its top bit set: its low lookup gives 0.
            let known =
                _mm256_and_si256(_mm256_shuffle_epi8(high_table, high_nibbles), _mm256_shuffle_epi8(low_table, v));
            let other = _mm256_cmpeq_epi8(known, _mm256_setzero_si256());
            // `/` and `?` are the two bytes that give 0x3F with bit 0x10 set.
            let end = _mm256_or_si256(
                _mm256_cmpeq_epi8(_mm256_or_si256(v, splat(0x10)), splat(b'?')),
                _mm256_or_si256(_mm256_cmpeq_epi8(v, splat(b'#')), _mm256_cmpeq_epi8(v, splat(b'\\'))),
            );
            // Signed: `A` moved to -128, then one comparison.
            let upper = _mm256_cmpgt_epi8(
                splat(0x80u8.wrapping_add(b'Z' - b'A' + 1)),
                _mm256_add_epi8(v, splat(0x80u8.wrapping_sub(b'A'))),
            );
            let mask = |m: __m256i| _mm256_movemask_epi8(m) as u32;
            AuthorityMasks {
                end: mask(end),
                colon: mask(_mm256_cmpeq_epi8(v, splat(b':'))),
                upper: mask(upper),
                x: mask(_mm256_cmpeq_epi8(_mm256_or_si256(v, splat(0x20)), splat(b'x'))),
                other: mask(other),
            }
        }
    }
}

/// The bytes of no [`AuthorityMasks::OTHER`] class (host bytes, `:`, `x`,
/// the ends: those an authority read from its masks may hold) as
/// [`nibble_tables`].
const AUTHORITY_NIBBLES: ([u8; 16], [u8; 16]) = {
    let mut known = [false; 256];
    let mut b = 0;
    while b < 256 {
        known[b] = AUTHORITY_CLASSES[b] & AuthorityMasks::OTHER == 0;
        b += 1;
    }
    nibble_tables(&known)
};

/// [`AUTHORITY_NIBBLES`] for 256-bit lookups.
#[cfg(target_arch = "x86_64")]
static AUTHORITY_NIBBLES_WIDE: [[u8; 32]; 2] = wide_nibble_tables(AUTHORITY_NIBBLES);

/// The index of the first byte at or after `i` in `bytes` that is not a
/// plain host byte ([`is_plain_host_byte`]), or `bytes.len()`, and whether
/// an ASCII upper-case letter is among the bytes skipped: eight bytes per
/// step while eight remain, then one lookup per byte.
fn skip_host_bytes(bytes: &[u8], mut i: usize) -> (usize, bool) {
    let mut upper_case = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let others = non_host_bytes(word);
        // The bytes up to the first that is not a host byte (which is no
        // letter, so taking it along changes nothing): all of them when none is.
        upper_case |= upper_case_bytes(word) & (others ^ others.wrapping_sub(1));
        if others != 0 {
            return (i + others.trailing_zeros() as usize / 8, upper_case != 0);
        }
        i += 8;
    }
    let mut upper_case = upper_case != 0;
    while let Some(&b) = bytes.get(i).filter(|&&b| HOST_BYTES[usize::from(b)]) {
        upper_case |= b.is_ascii_uppercase();
        i += 1;
    }
    (i, upper_case)
}

/// The high bit of each byte of `word` that is an ASCII upper-case letter.
/// Each byte is computed on its own (no carry crosses bytes).
fn upper_case_bytes(word: u64) -> u64 {
    const EACH: u64 = 0x0101_0101_0101_0101;
    let low = word & (0x7F * EACH);
    let from_a = low + (0x80 - u64::from(b'A')) * EACH;
    let past_z = low + (0x7F - u64::from(b'Z')) * EACH;
    from_a & !past_z & !word & (0x80 * EACH)
}

/// The high bit of each byte of `word` that is not a plain host byte
/// ([`is_plain_host_byte`]). Each byte is computed on its own (no carry
/// crosses bytes), so the result is exact for every byte.
fn non_host_bytes(word: u64) -> u64 {
    const EACH: u64 = 0x0101_0101_0101_0101;
    const HIGH_BIT: u64 = 0x80 * EACH;
    let low = word & (0x7F * EACH);
    // High bit set where `lo <= x <= hi`, for 7-bit bytes x (no carries: x + 0x80 <= 0xFF).
    let in_range = |x: u64, lo: u8, hi: u8| (x + u64::from(0x80 - lo) * EACH) & !(x + u64::from(0x7F - hi) * EACH);
    let folded = low | (0x20 * EACH);
    let host = in_range(folded, b'a', b'w') // letters, either case, but x
        | in_range(folded, b'y', b'z')
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
    // Upper case letters differ from lower case ones in bit 0x20 alone.
    word | (upper_case_bytes(word) >> 2)
}

/// Whether the fast path must hand a path holding `b` to the complete
/// parser: bytes the standard percent-encodes in a path or a special query
/// (C0 controls, space, `"`, `<`, `>`, `` ` ``, `{`, `}`, `'`, DEL, non-ASCII),
/// `\` (a slash), `%` (maybe `%2e`, maybe lower-case hex), and `#` (where the
/// path ends; the caller tells it apart). `^`, which the standard leaves alone,
/// comes along for free in the vector test and is sent on too; so do `|` and
/// `~`, which the caller steps over (they are rare, and taking them along
/// makes the vector test two comparisons shorter).
const fn is_path_stop_byte(b: u8) -> bool {
    b <= 0x20
        || b >= 0x7F
        || matches!(b, b'"' | b'#' | b'%' | b'\'' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}' | b'~')
}

/// [`is_path_stop_byte`] as a table, for the byte-at-a-time scan.
static PATH_STOP_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_path_stop_byte(b as u8);
        b += 1;
    }
    table
};

/// The index of the first byte of `url` at or after `start` that is a path
/// stop byte ([`is_path_stop_byte`]) or a `.` right after a `/` (a segment
/// that may be a dot segment), but for those the scan steps over
/// ([`stepped_over`]), or `url.len()`.
#[inline]
fn plain_path_end(url: &[u8], start: usize, vectors: Vectors) -> usize {
    #[cfg(target_arch = "x86_64")]
    if url.len() > 16 && start > 0 {
        if vectors.avx2 {
            // SAFETY: the CPU has AVX2.
            return unsafe { plain_path_end_avx2(url, start) };
        }
        return plain_path_end_sse2(url, start);
    }
    plain_path_end_bytewise(url, start)
}

/// Whether the CPU has AVX2 (the standard library detects it once per
/// process and caches the answer).
#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    crate::arch::Avx2::available()
}

/// Which vector forms of the scans ([`plain_path_end`],
/// [`AuthorityScan::of_block`]) this CPU runs: asked once per [`KeyBuf`]
/// and carried along, since asking the standard library's cache at each
/// scan costs instructions on every URL (two or three scans each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Vectors {
    /// AVX2: the 32-byte nibble lookups; else SSE2 (on x86_64) or none.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "x86_64 only"))]
    avx2: bool,
    /// With `avx2`: the caller is compiled for AVX2 ([`KeyBuf::locate_avx2`]),
    /// so the authority's scan is inlined into it rather than called (LLVM
    /// does not inline the call on its own). Only [`KeyBuf::locate_avx2`] sets it.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "x86_64 only"))]
    inline: bool,
}

impl Vectors {
    /// What this CPU has.
    fn detect() -> Vectors {
        #[cfg(target_arch = "x86_64")]
        return Vectors { avx2: has_avx2(), inline: false };
        #[cfg(not(target_arch = "x86_64"))]
        return Vectors { avx2: false, inline: false };
    }
}

impl Default for Vectors {
    fn default() -> Vectors {
        Vectors::detect()
    }
}

/// Nibble tables of a set of bytes, for a lookup of 16 or 32 bytes at
/// once with PSHUFB: byte `b` is in the set exactly when
/// `high[b >> 4] & low[b & 15]` is not zero, where a byte from 0x80 (whose
/// top bit makes PSHUFB give 0) counts as a low entry of 0. Each distinct
/// row of the set (the low nibbles in it for one high nibble) gets a bit of
/// its own, set in `high` for the high nibbles of that row and in `low`
/// for the row's low nibbles; a row of none has no bit. The build fails
/// (the tables are constants) should a set need more than eight bits, or
/// hold a byte from 0x80.
const fn nibble_tables(set: &[bool; 256]) -> ([u8; 16], [u8; 16]) {
    let (mut high, mut low) = ([0u8; 16], [0u8; 16]);
    let mut rows = [0u16; 8];
    let mut count = 0;
    let mut h = 0;
    while h < 16 {
        let mut row = 0u16;
        let mut l = 0;
        while l < 16 {
            if set[h * 16 + l] {
                row |= 1 << l;
            }
            l += 1;
        }
        if row != 0 {
            assert!(h < 8, "a byte from 0x80 in a nibble-table set");
            let mut bit = 0;
            while bit < count && rows[bit] != row {
                bit += 1;
            }
            assert!(bit < 8, "more than eight distinct rows in a nibble-table set");
            if bit == count {
                rows[bit] = row;
                count += 1;
            }
            high[h] = 1 << bit;
            let mut l = 0;
            while l < 16 {
                if row >> l & 1 != 0 {
                    low[l] |= 1 << bit;
                }
                l += 1;
            }
        }
        h += 1;
    }
    (high, low)
}

/// Whether byte `b` is in the set of `tables` ([`nibble_tables`]): the
/// lookup the vector code makes, a byte at a time, for the tests.
#[cfg(test)]
fn in_nibble_set((high, low): ([u8; 16], [u8; 16]), b: u8) -> bool {
    // PSHUFB gives 0 for an index with its top bit set.
    let low_entry = if b >= 0x80 { 0 } else { low[usize::from(b & 15)] };
    high[usize::from(b >> 4)] & low_entry != 0
}

/// `tables` twice over, high table first, one copy per 128-bit lane of a
/// 256-bit PSHUFB (which looks up within each lane).
#[cfg(target_arch = "x86_64")]
const fn wide_nibble_tables((high, low): ([u8; 16], [u8; 16])) -> [[u8; 32]; 2] {
    let mut wide = [[0u8; 32]; 2];
    let mut i = 0;
    while i < 32 {
        wide[0][i] = high[i % 16];
        wide[1][i] = low[i % 16];
        i += 1;
    }
    wide
}

/// The bytes a plain path takes along (those that are no
/// [`is_path_stop_byte`]) as [`nibble_tables`]: five distinct rows (0x2_,
/// 0x3_ and 0x5_, 0x4_, 0x6_, 0x7_).
const PATH_NIBBLES: ([u8; 16], [u8; 16]) = {
    let mut taken = [false; 256];
    let mut b = 0;
    while b < 256 {
        taken[b] = !is_path_stop_byte(b as u8);
        b += 1;
    }
    nibble_tables(&taken)
};

/// [`PATH_NIBBLES`] for 256-bit lookups.
#[cfg(target_arch = "x86_64")]
static PATH_NIBBLES_WIDE: [[u8; 32]; 2] = wide_nibble_tables(PATH_NIBBLES);

/// [`plain_path_end`] with AVX2, from `start > 0` in URLs of more than 16
/// bytes: 32 bytes a step (the last block the URL's last 32 bytes,
/// overlapping what was checked), each classified by one nibble lookup
/// ([`PATH_NIBBLES`]) instead of the SSE2 scan's nine comparisons; a URL
/// of at most 32 bytes is read as [`plain_path_end_sse2`] reads it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn plain_path_end_avx2(url: &[u8], start: usize) -> usize {
    debug_assert!(url.len() > 16 && start > 0);
    let len = url.len();
    if len <= 32 {
        return plain_path_end_sse2(url, start);
    }
    let mut i = start;
    while i < len {
        let block = i.min(len - 32);
        let found = path_stops_avx2(url, block) & (u32::MAX << (i - block));
        if let Some(stop) = first_stop(url, block, found) {
            return stop;
        }
        i = block + 32;
    }
    len
}

/// [`path_stops_sse2`] for the 32 bytes of `url` from `at` (`at >= 1`,
/// `url` holding 32 bytes from `at`), by nibble lookup.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn path_stops_avx2(url: &[u8], at: usize) -> u32 {
    use std::arch::x86_64::*;
    let bytes: &[u8; 33] = url[at - 1..at + 32].try_into().expect("33 bytes");
    // SAFETY: the two unaligned loads read bytes 0..32 and 1..33 of
    // `bytes`, and the table loads the 32 bytes of each table.
    unsafe {
        let before = _mm256_loadu_si256(bytes.as_ptr().cast());
        let v = _mm256_loadu_si256(bytes.as_ptr().add(1).cast());
        let high_table = _mm256_loadu_si256(PATH_NIBBLES_WIDE[0].as_ptr().cast());
        let low_table = _mm256_loadu_si256(PATH_NIBBLES_WIDE[1].as_ptr().cast());
        let high_nibbles = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
        // A byte from 0x80 has its top bit set: its low lookup gives 0.
        let taken = _mm256_and_si256(_mm256_shuffle_epi8(high_table, high_nibbles), _mm256_shuffle_epi8(low_table, v));
        let stops = _mm256_cmpeq_epi8(taken, _mm256_setzero_si256());
        let dot_segments = _mm256_and_si256(
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'.' as i8)),
            _mm256_cmpeq_epi8(before, _mm256_set1_epi8(b'/' as i8)),
        );
        _mm256_movemask_epi8(_mm256_or_si256(stops, dot_segments)) as u32
    }
}

/// Whether the path stop at `stop` of `url` is one the fast path takes
/// along after all: `|` and `~`, plain path bytes that the vector test
/// stops at (see [`is_path_stop_byte`]), and a percent-escape in upper case
/// other than `%2E` (left as it is by the standard and by pattern escaping;
/// `%2E` may make a dot segment). Its other bytes are no stops. Stepped over
/// inside the scans, with the block's other stops, rather than by a new
/// scan from after each (a quarter of crawl2019's URLs have one).
#[inline(always)]
fn stepped_over(url: &[u8], stop: usize) -> bool {
    match url[stop] {
        b'|' | b'~' => true,
        b'%' => {
            matches!(url.get(stop + 1..stop + 3), Some(&[hi, lo]) if is_upper_hex(hi) && is_upper_hex(lo) && [hi, lo] != *b"2E")
        }
        _ => false,
    }
}

/// The first of the stops `found` (bit `i` for byte `block + i`) of `url`
/// that the scan does not step over ([`stepped_over`]), if any.
#[inline(always)]
fn first_stop(url: &[u8], block: usize, mut found: u32) -> Option<usize> {
    while found != 0 {
        let stop = block + found.trailing_zeros() as usize;
        if !stepped_over(url, stop) {
            return Some(stop);
        }
        found &= found - 1;
    }
    None
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code, reason = "the portable form; on x86_64 the tests' reference"))]
fn plain_path_end_bytewise(url: &[u8], start: usize) -> usize {
    (start..url.len())
        .find(|&i| {
            (PATH_STOP_BYTES[usize::from(url[i])] || (url[i] == b'.' && url[i - 1] == b'/')) && !stepped_over(url, i)
        })
        .unwrap_or(url.len())
}

/// [`plain_path_end`] 32 bytes at a time, or 16 where at most 16 are left
/// (or the URL has at most 32), from `start > 0` in URLs of more than 16
/// bytes: the last block is the URL's last bytes, overlapping what was
/// checked.
#[cfg(target_arch = "x86_64")]
#[inline]
fn plain_path_end_sse2(url: &[u8], start: usize) -> usize {
    debug_assert!(url.len() > 16 && start > 0);
    let mut i = start;
    while i < url.len() {
        let (block, width, found) = if url.len() > 32 && url.len() - i > 16 {
            let block = i.min(url.len() - 32);
            (block, 32, path_stops_sse2(url, block) | path_stops_sse2(url, block + 16) << 16)
        } else {
            let block = i.min(url.len() - 16);
            (block, 16, path_stops_sse2(url, block))
        };
        let found = found & (u32::MAX << (i - block));
        if let Some(stop) = first_stop(url, block, found) {
            return stop;
        }
        i = block + width;
    }
    url.len()
}

/// Bit `i` set where `url[at + i]` (for `i` below 16) is a path stop byte
/// ([`is_path_stop_byte`]) or a `.` right after a `/`; `at` must be at least
/// 1 and `url` hold 16 bytes from `at`. One movemask: the `/` before each
/// byte comes from a second load, one byte earlier.
#[cfg(target_arch = "x86_64")]
#[inline]
fn path_stops_sse2(url: &[u8], at: usize) -> u32 {
    use std::arch::x86_64::*;
    let bytes: &[u8; 17] = url[at - 1..at + 16].try_into().expect("17 bytes");
    // SAFETY: SSE2 is part of the x86_64 baseline, and the two unaligned
    // loads read bytes 0..16 and 1..17 of `bytes`.
    unsafe {
        let before = _mm_loadu_si128(bytes.as_ptr().cast());
        let v = _mm_loadu_si128(bytes.as_ptr().add(1).cast());
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let or_2 = _mm_or_si128(v, splat(2));
        let stops = _mm_or_si128(
            _mm_or_si128(
                // Signed: below 0x21 or at least 0x80.
                _mm_cmplt_epi8(v, splat(0x21)),
                _mm_cmpeq_epi8(_mm_or_si128(v, splat(1)), splat(b'#')), // " #
            ),
            _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(or_2, splat(b'\'')),                            // % '
                    _mm_cmpeq_epi8(_mm_and_si128(or_2, splat(0x9F)), splat(0x1E)), // < > \ ^ | ~
                ),
                // Signed: `{` to DEL, `|` and `~` included.
                _mm_or_si128(_mm_cmpeq_epi8(v, splat(b'`')), _mm_cmpgt_epi8(v, splat(b'z'))),
            ),
        );
        let dot_segments = _mm_and_si128(_mm_cmpeq_epi8(v, splat(b'.')), _mm_cmpeq_epi8(before, splat(b'/')));
        _mm_movemask_epi8(_mm_or_si128(stops, dot_segments)) as u32
    }
}

/// The index of the `:` ending a syntactically valid scheme
/// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), if any.
pub(crate) fn scheme_end(url: &[u8]) -> Option<usize> {
    if !url.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = url.iter().position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (url[end] == b':').then_some(end)
}

pub(crate) fn parse_port(text: &[u8]) -> Result<u16, UrlError> {
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

pub(crate) fn write_decimal(out: &mut Vec<u8>, value: u16) {
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

/// An ASCII digit or an upper-case hex letter.
fn is_upper_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'A'..=b'F').contains(&b)
}

/// A host byte the fast path takes as it is: ASCII letters but `x`, digits,
/// `-`, `.`, `_` and `~`. (`x` may start `xn--`, a punycode label to check,
/// or `0x`, a hex number that makes the host an IPv4 address.)
const fn is_plain_host_byte(b: u8) -> bool {
    (b.is_ascii_alphanumeric() && !b.eq_ignore_ascii_case(&b'x')) || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// [`is_plain_host_byte`] as a table, for the per-URL path.
static HOST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_plain_host_byte(b as u8);
        b += 1;
    }
    table
};

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
    origin_hash_of_prefix(key, key.len())
}

/// [`origin_hash`] of the first `len` bytes of `text`, reading the bytes
/// after them when that is cheaper: where `text` goes on past the key (a
/// key that is the start of its URL, see [`Origin::key`]), the key's last
/// 0 to 7 bytes are read as one word and the bytes after them masked off,
/// instead of being gathered one by one.
///
/// # Panics
///
/// When `len` is more than `text.len()`.
#[inline]
pub fn origin_hash_of_prefix(text: &[u8], len: usize) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    const M: u64 = 0xFF51_AFD7_ED55_8CCD;
    let key = &text[..len];
    let mut h = K ^ (len as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("chunks of 8"));
        h = (h ^ w).wrapping_mul(M).rotate_left(31);
    }
    // The tail as a little-endian word, zero-padded. Built in a register: a
    // copy into a zeroed array and a load of it stalled on store forwarding
    // (a fifth of the batch's bookkeeping in a profile).
    let whole = len - words.remainder().len();
    let tail = match text.get(whole..whole + 8) {
        Some(word) => {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            word & ((1u64 << (8 * (len - whole))) - 1)
        }
        None => words.remainder().iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b)),
    };
    h = (h ^ tail).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(url: &str) -> String {
        String::from_utf8(path_params_query(url.as_bytes()).into_owned()).unwrap()
    }

    mod path_scan {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(20_000))]

            /// The vector scan of the path stops where the byte-at-a-time scan
            /// stops: URLs shorter than one 16-byte block, between one and
            /// two, and of several 32-byte blocks, from any start; with the
            /// stops stepped over (`|`, `~`, upper-case escapes but `%2E`)
            /// anywhere in a block, at its end and at the URL's.
            #[test]
            fn path_scans_agree(
                url in prop::collection::vec(prop::sample::select(b"ab/./%%%#?\\\"'<>`{}|^~ \x7f\x80\x1f\xff&!=z[]@2E2EA0f".to_vec()), 0..140),
                start in 0usize..140,
            ) {
                let start = start.min(url.len()).max(usize::from(!url.is_empty()));
                let bytewise = plain_path_end_bytewise(&url, start);
                prop_assert_eq!(plain_path_end(&url, start, Vectors::detect()), bytewise);
                // Both vector forms, whichever `plain_path_end` chose here.
                #[cfg(target_arch = "x86_64")]
                if url.len() > 16 && start > 0 {
                    prop_assert_eq!(plain_path_end_sse2(&url, start), bytewise);
                    if has_avx2() {
                        // SAFETY: the CPU has AVX2.
                        prop_assert_eq!(unsafe { plain_path_end_avx2(&url, start) }, bytewise);
                    }
                }
            }

            /// The whole parse reads a URL the same with the SSE2 scans as
            /// with the AVX2 ones (where the CPU has AVX2; else SSE2 twice).
            #[test]
            fn parses_agree_whichever_vectors(
                prefix in prop::sample::select(vec!["http://", "https://", "ftp://", "HTTP://", "http:/", ""]),
                tail in prop::collection::vec(
                    prop_oneof![
                        8 => prop::sample::select(b"abcxn-0./".to_vec()),
                        1 => prop::sample::select(b"/?#\\@%:;AXN9_~[] |^2E\x00\x80\xff".to_vec()),
                    ],
                    0..90,
                ),
            ) {
                let url = [prefix.as_bytes(), &tail].concat();
                let mut detected = KeyBuf::new();
                let mut sse2 = KeyBuf { vectors: Vectors { avx2: false, inline: false }, ..KeyBuf::new() };
                let spans = detected.locate(&url).map(|s| (s.key.is_none().then(|| detected.key().to_vec()), s));
                let spans_sse2 = sse2.locate(&url).map(|s| (s.key.is_none().then(|| sse2.key().to_vec()), s));
                prop_assert_eq!(spans, spans_sse2);
                prop_assert_eq!(detected.parse(&url), sse2.parse(&url));
            }

            /// The vector masks of a block are the byte-at-a-time ones: all
            /// of them for a whole block, up to the first `end` byte otherwise.
            #[test]
            fn authority_masks_agree(
                block in prop::collection::vec(
                    prop_oneof![
                        4 => prop::sample::select(b"/?#\\@%:;aAzZxXnN09-._~[] \x00\x7f\x80\xff".to_vec()),
                        1 => any::<u8>(),
                    ],
                    32,
                ),
            ) {
                let block: [u8; 32] = block.try_into().unwrap();
                let bytewise = AuthorityMasks::of_bytewise(&block);
                prop_assert_eq!(AuthorityMasks::of(&block, true), bytewise);
                #[cfg(target_arch = "x86_64")]
                if has_avx2() {
                    // SAFETY: the CPU has AVX2.
                    prop_assert_eq!(unsafe { AuthorityMasks::of_avx2(&block) }, bytewise);
                }
                let through_end = match bytewise.end {
                    0 => u32::MAX,
                    ends => ends ^ ends.wrapping_sub(1),
                };
                let part = AuthorityMasks::of(&block, false).within_mask(through_end);
                prop_assert_eq!(part, bytewise.within_mask(through_end));
            }

            /// Where the block scan of an authority answers, it answers as the
            /// byte-at-a-time scan does, for URLs shorter than a block, ending
            /// inside one and longer.
            #[test]
            fn authority_scans_agree(
                prefix in prop::sample::select(vec!["http://", "https://", "ftp://", "HTTP://"]),
                tail in prop::collection::vec(
                    prop_oneof![
                        6 => prop::sample::select(b"abcxn-0.".to_vec()),
                        1 => prop::sample::select(b"/?#\\@%:;AXN9_~[] \x00\x80\xff".to_vec()),
                    ],
                    0..60,
                ),
            ) {
                let url = [prefix.as_bytes(), &tail].concat();
                let start = prefix.len();
                let bytewise = AuthorityScan::of(&url[start..], start);
                let sse2 = AuthorityScan::of_block_with(&url, start, AuthorityMasks::of);
                if let Some(block) = &sse2 {
                    prop_assert_eq!(block, &bytewise);
                }
                // The AVX2 form answers for the same URLs, the same.
                #[cfg(target_arch = "x86_64")]
                if has_avx2() {
                    // SAFETY: the CPU has AVX2.
                    prop_assert_eq!(unsafe { AuthorityScan::of_block_avx2(&url, start) }, sse2);
                }
            }
        }
    }

    #[test]
    fn the_nibble_lookups_find_exactly_their_sets() {
        for b in 0..=255u8 {
            assert_eq!(in_nibble_set(PATH_NIBBLES, b), !is_path_stop_byte(b), "{b:#04x}");
            let known = AUTHORITY_CLASSES[usize::from(b)] & AuthorityMasks::OTHER == 0;
            assert_eq!(in_nibble_set(AUTHORITY_NIBBLES, b), known, "{b:#04x}");
        }
    }

    #[test]
    fn trimming_drops_exactly_the_c0_and_space_bytes_at_both_ends() {
        let bytes = [b' ', b'\t', 0, 0x20, 0x21, b'a', 0x7f, 0xff];
        // Every string of up to 4 of these bytes.
        let (mut inputs, mut longest) = (vec![Vec::new()], vec![Vec::new()]);
        for _ in 0..4 {
            longest = longest.iter().flat_map(|s| bytes.iter().map(move |&b| [&s[..], &[b][..]].concat())).collect();
            inputs.extend(longest.iter().cloned());
        }
        for input in &inputs {
            let start = input.iter().position(|&b| b > 0x20).unwrap_or(input.len());
            let end = input.iter().rposition(|&b| b > 0x20).map_or(start, |e| e + 1);
            assert_eq!(trim_c0_and_space(input), &input[start..end], "{input:?}");
        }
        assert!(inputs.len() > 4000);
    }

    #[test]
    fn plain_authorities_are_read_from_the_block() {
        for (url, end) in [
            ("http://example.com/a", 18),
            ("http://a.b", 10),
            ("https://www.example.com:8080?q", 28),
            ("http://a-host-name-of-thirty.example/", 36),
            ("http://mixed.CASE.example/", 25),
            ("http://box.example/", 18),
        ] {
            let block = AuthorityScan::of_block(url.as_bytes(), url.find("//").unwrap() + 2, Vectors::detect());
            assert_eq!(block.map(|scan| scan.end), Some(end), "{url}");
        }
        for url in ["http://u@example.com/", "http://xn--a.example/", "http://0x7f.1/", "http://a:1:2/", "http://a%41/"]
        {
            assert_eq!(AuthorityScan::of_block(url.as_bytes(), 7, Vectors::detect()), None, "{url}");
        }
        // Longer than the block, and ending past it: read byte by byte.
        let long = b"http://an-authority-of-more-than-32-bytes.example/";
        assert_eq!(AuthorityScan::of_block(long, 7, Vectors::detect()), None);
    }

    #[test]
    fn plain_keys_written_as_is_are_the_urls_first_bytes() {
        let mut buf = KeyBuf::new();
        let mut complete = KeyBuf::new();
        for (url, borrowed) in [
            ("http://example.com/a", true),
            ("https://a-b.example.org", true),
            ("https://a.example.org?q", true),
            ("http://example.com:8080/", true),
            ("http://example.com:0/", true),
            ("ftp://files.example.com#x", true),
            ("http://ex_am~ple.com./x", true),
            ("HTTP://example.com/", false),
            ("http://Example.com/", false),
            ("http://exampLe.com/", false),
            ("https://abcdefghijklmnoP.com/", false),
            ("http://example.com:80/", false),
            ("https://example.com:443/", false),
            ("http://example.com:/", false),
            ("http://example.com:08080/", false),
            ("http://u@example.com/", false),
        ] {
            let origin = buf.parse(url.as_bytes()).unwrap();
            let inside = origin.key.as_ptr() == url.as_ptr();
            assert_eq!(inside, borrowed, "{url}: key {:?}", String::from_utf8_lossy(origin.key));
            let key = origin.key.to_vec();
            assert_eq!(key, complete.parse_complete(url.as_bytes()).unwrap().key, "{url}");
        }
    }

    #[test]
    fn hash_of_a_prefix_is_the_hash_of_the_prefix_alone() {
        let text = b"https://www.example.com:8443/path?q\xff\x00tail";
        for len in 0..=text.len() {
            assert_eq!(origin_hash_of_prefix(text, len), origin_hash(&text[..len]), "{len}");
        }
    }

    #[test]
    fn skipping_host_bytes_sees_exactly_the_upper_case_letters_skipped() {
        let text = b"abcdefghijklMnopqrstuvwyzABC/Qr";
        for start in 0..text.len() {
            let (end, upper_case) = skip_host_bytes(text, start);
            assert_eq!(end, if start <= 28 { 28 } else { text.len() }, "{start}");
            assert_eq!(upper_case, text[start..end].iter().any(u8::is_ascii_uppercase), "{start}");
        }
        for word in [*b"\xC1\xDA\xC1\xDAab\xC1\xDA", *b"@ABYZ[`a", *b"abcdefgh", *b"ghijklmN"] {
            let marks = upper_case_bytes(u64::from_le_bytes(word)).to_le_bytes();
            for (b, mark) in word.iter().zip(marks) {
                assert_eq!(mark == 0x80, b.is_ascii_uppercase(), "{b:#x}");
            }
        }
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
                    bytes.map(|x| if is_plain_host_byte(x) { 0 } else { 0x80 }),
                    "{b:#x} beside {neighbour:#x}"
                );
            }
        }
        assert_eq!(skip_host_bytes(b"www.Ebample-1.co_uk~z:80/", 0), (21, true));
        assert_eq!(skip_host_bytes(b"www.Ebample-1.co_uk~z:80/", 22), (24, false));
        assert_eq!(skip_host_bytes(b"www.sample.xyz", 0), (11, false));
        assert_eq!(skip_host_bytes(b"abc", 0), (3, false));
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
