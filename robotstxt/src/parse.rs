//! The robots.txt parser: bytes in, one report per line out.
//!
//! This follows Google's reference library line for line, because the
//! contract is to read every file exactly as Google does:
//!
//! - Only the first [`MAX_BODY_BYTES`] of a body count (Google's crawler cuts
//!   there before its parser sees the file).
//! - A leading UTF-8 byte order mark, or any leading part of one, is skipped.
//! - CR, LF and CRLF all end a line. Bytes past [`MAX_LINE_BYTES`] on a line
//!   are dropped; what is left still counts.
//! - A NUL byte ends the line's content (the reference works on C strings).
//! - `#` starts a comment. Then `key: value`, both trimmed of white space. A
//!   line without a colon is accepted when it is exactly two words
//!   (`Disallow /x`).
//! - Field names compare without case and by prefix (`Disallowed` is a
//!   disallow), plus Google's accepted typos.
//!
//! Parsing never fails: any byte sequence yields whatever valid lines it has.
//! Every line is reported, including the ones Google ignores, because `lint`
//! and explanations are built on this one parse.

/// Google's crawler reads only this many bytes of a robots.txt body (500 KiB).
pub const MAX_BODY_BYTES: usize = 512_000;

/// The reference parser keeps at most this many bytes of a line.
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// A field a line can set, as Google classifies its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `user-agent` (also `useragent`, `user agent`): starts or joins a group.
    UserAgent,
    /// `allow`: a rule.
    Allow,
    /// `disallow` (also `dissallow`, `dissalow`, `disalow`, `diasllow`, `disallaw`): a rule.
    Disallow,
    /// `sitemap` (also `site-map`): no effect on rules and does not end a group.
    Sitemap,
    /// `content-signal` (exactly, in any case): Cloudflare's usage
    /// preferences. Google reads it as an unknown field: no effect on rules,
    /// and it does not end a group.
    ContentSignal,
    /// `content-usage` (exactly, in any case): the IETF aipref usage
    /// preferences. Like `content-signal`, unknown to Google.
    ContentUsage,
    /// Anything else (`crawl-delay`, `host`, `noindex`, ...): ignored by Google.
    Unknown,
}

impl Field {
    /// The canonical lower-case name of the field (`None` for unknown fields).
    pub fn name(self) -> Option<&'static str> {
        match self {
            Field::UserAgent => Some("user-agent"),
            Field::Allow => Some("allow"),
            Field::Disallow => Some("disallow"),
            Field::Sitemap => Some("sitemap"),
            Field::ContentSignal => Some("content-signal"),
            Field::ContentUsage => Some("content-usage"),
            Field::Unknown => None,
        }
    }

    /// Whether the field is a rule (allow or disallow).
    pub fn is_rule(self) -> bool {
        matches!(self, Field::Allow | Field::Disallow)
    }

    /// Whether the field is a usage preference (`content-signal`, `content-usage`).
    pub fn is_preference(self) -> bool {
        matches!(self, Field::ContentSignal | Field::ContentUsage)
    }
}

/// How a line's key was spelled, relative to the field it was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spelling {
    /// The canonical name, in any case (`Disallow`).
    Exact,
    /// The canonical name followed by more text (`Disallowed`, `User-agents`).
    Prefix,
    /// One of Google's accepted typos (`dissallow`, `useragent`, `site-map`).
    Typo,
}

/// The key and value of a line that has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Directive<'a> {
    /// The field the key was read as.
    pub field: Field,
    /// How the key was spelled.
    pub spelling: Spelling,
    /// The key as written (trimmed).
    pub key: &'a [u8],
    /// The value as written (trimmed, comment removed, not escaped).
    pub value: &'a [u8],
    /// The key and value were separated by white space, not a colon.
    pub missing_colon: bool,
}

/// One line of the file, as the parser read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number, counted as Google counts them (CRLF is one end).
    pub number: u32,
    /// Byte offset of the line's first byte in the body.
    pub offset: usize,
    /// The line's bytes as kept by the parser: at most [`MAX_LINE_BYTES`],
    /// without the line end; may hold a NUL and what follows it.
    pub text: &'a [u8],
    /// The line was longer than [`MAX_LINE_BYTES`] and was cut.
    pub truncated: bool,
    /// The key and value, when the line has them.
    pub directive: Option<Directive<'a>>,
}

impl<'a> Line<'a> {
    /// The field this line sets, if it has a key and value.
    pub fn field(&self) -> Option<Field> {
        self.directive.map(|d| d.field)
    }
}

/// A parsed robots.txt body.
#[derive(Clone, Debug)]
pub struct RobotsTxt<'a> {
    /// Every line, in order.
    pub lines: Vec<Line<'a>>,
    /// How many bytes of a leading byte order mark were skipped (0 to 3).
    pub bom_bytes: usize,
    /// The bytes past [`MAX_BODY_BYTES`], which Google ignores.
    pub ignored_tail: &'a [u8],
}

impl<'a> RobotsTxt<'a> {
    /// Parses a body as Google's crawler does, including the 500 KiB cut.
    pub fn parse(body: &'a [u8]) -> RobotsTxt<'a> {
        let cut = body.len().min(MAX_BODY_BYTES);
        let (kept, tail) = body.split_at(cut);
        let mut parsed = RobotsTxt::parse_all(kept);
        parsed.ignored_tail = tail;
        parsed
    }

    /// Parses every byte of a body, without the 500 KiB cut (what the
    /// reference library does when handed the whole file).
    pub fn parse_all(body: &'a [u8]) -> RobotsTxt<'a> {
        let bom_bytes = body.iter().zip(BOM).take_while(|(a, b)| **a == *b).count();
        let mut lines = Vec::new();
        let mut number = 0u32;
        let mut start = bom_bytes;
        let mut last_was_cr = false;
        let mut i = bom_bytes;
        while i < body.len() {
            let b = body[i];
            if b == b'\n' || b == b'\r' {
                // The LF of a CRLF ends nothing: the CR already ended the line.
                let crlf_continuation = start == i && last_was_cr && b == b'\n';
                if !crlf_continuation {
                    number += 1;
                    lines.push(read_line(number, start, &body[start..i]));
                }
                last_was_cr = b == b'\r';
                start = i + 1;
            }
            i += 1;
        }
        number += 1;
        lines.push(read_line(number, start, &body[start..]));
        RobotsTxt { lines, bom_bytes, ignored_tail: &[] }
    }

    /// The lines that set a field, with their directives.
    pub fn directives(&self) -> impl Iterator<Item = (&Line<'a>, &Directive<'a>)> {
        self.lines.iter().filter_map(|line| line.directive.as_ref().map(|d| (line, d)))
    }

    /// Every `sitemap` value, in file order (sitemaps belong to no group).
    pub fn sitemaps(&self) -> Vec<&'a [u8]> {
        self.directives().filter(|(_, d)| d.field == Field::Sitemap).map(|(_, d)| d.value).collect()
    }
}

fn read_line(number: u32, offset: usize, raw: &[u8]) -> Line<'_> {
    let truncated = raw.len() > MAX_LINE_BYTES;
    let text = &raw[..raw.len().min(MAX_LINE_BYTES)];
    let content = match text.iter().position(|&b| b == 0) {
        Some(nul) => &text[..nul],
        None => text,
    };
    Line { number, offset, text, truncated, directive: directive(content) }
}

/// Google's `isspace`: space, tab, LF, VT, FF, CR.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

fn directive(content: &[u8]) -> Option<Directive<'_>> {
    let without_comment = match content.iter().position(|&b| b == b'#') {
        Some(hash) => &content[..hash],
        None => content,
    };
    let line = trim(without_comment);
    let (sep, missing_colon) = match line.iter().position(|&b| b == b':') {
        Some(colon) => (colon, false),
        None => {
            // Google accepts white space instead of the colon, but only when
            // the line is exactly two words.
            let sep = line.iter().position(|&b| b == b' ' || b == b'\t')?;
            let after = &line[sep..];
            let value_start = after.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(after.len());
            if after[value_start..].iter().any(|&b| b == b' ' || b == b'\t') {
                return None;
            }
            (sep, true)
        }
    };
    let key = trim(&line[..sep]);
    if key.is_empty() {
        return None;
    }
    let value = trim(&line[sep + 1..]);
    let (field, spelling) = classify(key);
    Some(Directive { field, spelling, key, value, missing_colon })
}

/// Google's key classification, in its order of tests.
fn classify(key: &[u8]) -> (Field, Spelling) {
    const FIELDS: &[(Field, &str, &[&str])] = &[
        (Field::UserAgent, "user-agent", &["useragent", "user agent"]),
        (Field::Allow, "allow", &[]),
        (Field::Disallow, "disallow", &["dissallow", "dissalow", "disalow", "diasllow", "disallaw"]),
        (Field::Sitemap, "sitemap", &["site-map"]),
    ];
    for &(field, name, typos) in FIELDS {
        if starts_with_ignore_case(key, name) {
            let spelling = if key.len() == name.len() { Spelling::Exact } else { Spelling::Prefix };
            return (field, spelling);
        }
        if typos.iter().any(|typo| starts_with_ignore_case(key, typo)) {
            return (field, Spelling::Typo);
        }
    }
    // Not Google's fields: only the exact names count, so that a misspelt
    // one is reported as an unknown field rather than guessed at.
    if key.eq_ignore_ascii_case(b"content-signal") {
        return (Field::ContentSignal, Spelling::Exact);
    }
    if key.eq_ignore_ascii_case(b"content-usage") {
        return (Field::ContentUsage, Spelling::Exact);
    }
    (Field::Unknown, Spelling::Exact)
}

fn starts_with_ignore_case(s: &[u8], prefix: &str) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(body: &[u8]) -> Vec<(u32, Option<Field>, String)> {
        RobotsTxt::parse(body)
            .lines
            .iter()
            .map(|l| {
                let value = l.directive.map(|d| String::from_utf8_lossy(d.value).into_owned()).unwrap_or_default();
                (l.number, l.field(), value)
            })
            .collect()
    }

    #[test]
    fn line_ends_and_numbers() {
        let lines = fields(b"user-agent: a\r\ndisallow: /x\rallow: /y\n\nsitemap: s");
        assert_eq!(
            lines,
            vec![
                (1, Some(Field::UserAgent), "a".into()),
                (2, Some(Field::Disallow), "/x".into()),
                (3, Some(Field::Allow), "/y".into()),
                (4, None, "".into()),
                (5, Some(Field::Sitemap), "s".into()),
            ]
        );
        // CR CR is two line ends; CR LF is one.
        assert_eq!(fields(b"a: 1\r\r\nb: 2").len(), 3);
    }

    #[test]
    fn byte_order_marks() {
        for body in [&b"\xEF\xBB\xBFuser-agent: a"[..], b"\xEF\xBBuser-agent: a", b"\xEFuser-agent: a"] {
            assert_eq!(fields(body)[0].1, Some(Field::UserAgent), "{body:?}");
        }
        // A broken mark stops skipping at the first byte that differs.
        assert_eq!(fields(b"\xEF\x00user-agent: a")[0].1, None);
        // Only at the start of the file.
        assert_eq!(fields(b"a: 1\n\xEF\xBB\xBFuser-agent: a")[1].1, Some(Field::Unknown));
    }

    #[test]
    fn keys_by_prefix_and_typo() {
        let body = b"User-Agents: a\nuseragent: b\nuser agent: c\nDisallowed: /1\ndissallow: /2\ndisalow: /3\nAllowance: /4\nsite-map: x\ncrawl-delay: 5\n";
        let r = RobotsTxt::parse(body);
        let got: Vec<_> = r.directives().map(|(_, d)| (d.field, d.spelling)).collect();
        use Field::*;
        use Spelling::*;
        assert_eq!(
            got,
            vec![
                (UserAgent, Prefix),
                (UserAgent, Typo),
                (UserAgent, Typo),
                (Disallow, Prefix),
                (Disallow, Typo),
                (Disallow, Typo),
                (Allow, Prefix),
                (Sitemap, Typo),
                (Unknown, Exact),
            ]
        );
    }

    #[test]
    fn preference_fields_by_exact_name() {
        let r = RobotsTxt::parse(
            b"Content-Signal: search=yes\nCONTENT-USAGE: train-ai=n\ncontent-signals: x=y\ncontent-usage /a\n",
        );
        let got: Vec<_> = r.directives().map(|(_, d)| d.field).collect();
        use Field::*;
        assert_eq!(got, vec![ContentSignal, ContentUsage, Unknown, ContentUsage]);
        assert!(ContentSignal.is_preference() && !ContentSignal.is_rule() && !Unknown.is_preference());
    }

    #[test]
    fn missing_colon_only_for_two_words() {
        let r = RobotsTxt::parse(b"Disallow /x\nDisallow /x /y\nDisallow\n");
        assert!(r.lines[0].directive.unwrap().missing_colon);
        assert_eq!(r.lines[0].directive.unwrap().value, b"/x");
        assert_eq!(r.lines[1].directive, None);
        assert_eq!(r.lines[2].directive, None);
    }

    #[test]
    fn comments_whitespace_and_empty_keys() {
        let r = RobotsTxt::parse(b"  Disallow :  /a b  # note\n: /x\n# only a comment\nallow:\n");
        let d = r.lines[0].directive.unwrap();
        assert_eq!((d.key, d.value), (&b"Disallow"[..], &b"/a b"[..]));
        assert_eq!(r.lines[1].directive, None);
        assert_eq!(r.lines[2].directive, None);
        assert_eq!(r.lines[3].directive.unwrap().value, b"");
    }

    #[test]
    fn nul_ends_the_content() {
        let r = RobotsTxt::parse(b"disallow: /a\0/b\n\0disallow: /c\n");
        assert_eq!(r.lines[0].directive.unwrap().value, b"/a");
        assert_eq!(r.lines[1].directive, None);
    }

    #[test]
    fn long_lines_are_cut_and_still_count() {
        let mut body = b"disallow: /".to_vec();
        body.extend(std::iter::repeat_n(b'a', 20_000));
        let r = RobotsTxt::parse(&body);
        assert!(r.lines[0].truncated);
        assert_eq!(r.lines[0].text.len(), MAX_LINE_BYTES);
        assert_eq!(r.lines[0].directive.unwrap().value.len(), MAX_LINE_BYTES - b"disallow: ".len());
    }

    #[test]
    fn body_is_cut_at_500_kib() {
        let mut body = vec![b'#'; MAX_BODY_BYTES - 1];
        body.extend_from_slice(b"\ndisallow: /");
        let r = RobotsTxt::parse(&body);
        assert_eq!(r.ignored_tail, b"disallow: /");
        assert_eq!(r.lines.len(), 2);
        assert_eq!(r.lines[1].directive, None);
    }

    #[test]
    fn binary_input_never_fails() {
        let body: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let r = RobotsTxt::parse(&body);
        assert!(!r.lines.is_empty());
    }
}
