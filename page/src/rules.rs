//! robotsieve-page: page-level rules, robots `<meta>` tags and `X-Robots-Tag` headers.
//!
//! robots.txt says what a crawler may fetch; once a page is fetched, its
//! robots meta tags and `X-Robots-Tag` response headers say whether it may be
//! indexed, its links followed, a snippet or a cached copy shown. This crate
//! reads both and combines them for one crawler:
//!
//! - [`parse_directives`] and [`parse_x_robots_tag`]: one directive parser for
//!   meta `content` values and header values (comma-separated lists, names
//!   without case, `name: value` for the valued directives; a header may carry
//!   `agent:` prefixes).
//! - [`scan_head`]: the robots-relevant `<meta name=... content=...>` tags of
//!   a document's head, with line numbers, read with a real HTML tokenizer.
//! - [`PageRules::combine`] / [`PageRules::evaluate`]: the rules for an
//!   [`Agent`], with the tag or header that decided each one.
//!
//! # Combination
//!
//! The generic `robots` tags and unprefixed headers apply to every crawler;
//! tags named after one of the crawler's tokens (`<meta name="googlebot">`) and
//! headers prefixed with one (`X-Robots-Tag: googlebot: noindex`) apply to it
//! too. All that apply are combined and, where they conflict, the more
//! restrictive wins: `noindex` beats `index` whatever the order, the smallest
//! `max-snippet` and `max-video-preview` win (`-1`, no limit, is the largest),
//! the smallest `max-image-preview` wins, the earliest `unavailable_after` wins.
//! Directives are separated by commas, as Google requires ("you must place a
//! comma between them, but it doesn't matter if you also include spaces"):
//! `noindex nofollow` is one unknown directive, reported.
//! `all` means `index, follow` and `none` means `noindex, nofollow`; defaults
//! are index, follow, everything allowed and no limits. `nocache` is read as
//! `noarchive`, and `max-snippet:0` as `nosnippet` (Google documents both
//! equivalences). Unknown directives and malformed values are reported in
//! [`Statement::directives`] as [`Directive::Unknown`] / [`Directive::Invalid`]
//! and otherwise ignored.
//!
//! # Where the head ends
//!
//! Only tags the HTML parser would put into the document's `<head>` count:
//! the scan follows the tree-construction rules of the WHATWG HTML standard
//! for the "before head", "in head" and "after head" insertion modes. The head
//! ends at `<body>` or `<frameset>`, at any start tag that cannot be in a head
//! (`<div>`, `<p>`, `<img>`, ...), at `</body>`, `</html>` or `</br>`, and at
//! text other than white space. A document with no `<head>` tag has an implied
//! one, so `<meta>` tags before the first body content still count. A `<meta>`
//! between `</head>` and the body (`</head><meta ...><body>`) counts, because a
//! browser moves it into the head. A `<meta>` in the body is **not** read:
//! scanning stops where the head ends, as the crawler operator asked, and a
//! robots tag in the body is invalid HTML that Google documents as belonging
//! in the head. Tags inside `<template>`, and text that only looks like markup
//! inside `<script>`, `<style>`, `<noscript>` (read as a browser with scripting
//! enabled reads it) and `<title>`, do not count either.
//!
//! # The tokenizer: html5gum
//!
//! Candidates checked (November 2026): `html5ever` (0.40, Servo; its tokenizer
//! is usable alone but works on `StrTendril` UTF-8 input and comes with the
//! markup5ever/string-cache stack), `lol_html` (3.0, Cloudflare; a streaming
//! rewriter driven by CSS-selector callbacks, with no way to stop at the end
//! of the head short of an error, and no line positions), and `html5gum`
//! (0.9, maintained, passes the html5lib tokenizer test suite, no
//! dependencies, no unsafe code). html5gum is chosen: it is a pull tokenizer,
//! so the scan simply stops pulling at the end of the head; it works on bytes
//! and recovers from invalid UTF-8, so Latin-1 or Shift_JIS pages are read
//! without a decoding step (the markup that matters is ASCII); it decodes
//! character references in attribute values; it gives byte spans, from which
//! line numbers come; and its callback emitter borrows strings instead of
//! allocating per token. It is only a tokenizer: the head-ending rules above
//! are the small part of tree construction this module implements, and the
//! switch into raw-text states after `<script>`, `<style>`, `<title>` and
//! `<noscript>` is html5gum's `naive_next_state`.
//!
//! Pages are bytes. A leading UTF-8 byte order mark is skipped; a page with a
//! UTF-16 byte order mark is transcoded first (lossily). Nothing fails: the
//! worst a malformed page gets is the defaults.

#![warn(missing_docs)]

use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{naive_next_state, Span, Tokenizer};
use robotsieve_robotstxt::group::Agent;
use robotsieve_sources::http::{HttpError, HttpResponse};
use robotsieve_sources::time::{days_from_civil, days_in_month, Timestamp};
use std::fmt;

/// How large a `max-image-preview` may be, smallest first (so `min` is the
/// more restrictive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ImagePreview {
    /// No image preview.
    None,
    /// A default-size image preview.
    Standard,
    /// A larger image preview, up to the width of the viewport.
    Large,
}

impl ImagePreview {
    /// The directive value: `none`, `standard` or `large`.
    pub fn name(self) -> &'static str {
        match self {
            ImagePreview::None => "none",
            ImagePreview::Standard => "standard",
            ImagePreview::Large => "large",
        }
    }
}

/// One directive of a meta `content` or `X-Robots-Tag` value, as understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `all`: index, follow.
    All,
    /// `none`: noindex, nofollow.
    None,
    /// `index`.
    Index,
    /// `noindex`.
    NoIndex,
    /// `follow`.
    Follow,
    /// `nofollow`.
    NoFollow,
    /// `noarchive`.
    NoArchive,
    /// `nocache` (read as `noarchive`).
    NoCache,
    /// `nosnippet`.
    NoSnippet,
    /// `noimageindex`.
    NoImageIndex,
    /// `notranslate`.
    NoTranslate,
    /// `indexifembedded`.
    IndexIfEmbedded,
    /// `max-snippet:N`; `None` for `-1`, no limit.
    MaxSnippet(Option<u64>),
    /// `max-image-preview:none|standard|large`.
    MaxImagePreview(ImagePreview),
    /// `max-video-preview:N` (seconds); `None` for `-1`, no limit.
    MaxVideoPreview(Option<u64>),
    /// `unavailable_after:DATE` (RFC 822, RFC 850 or ISO 8601 dates).
    UnavailableAfter(Timestamp),
    /// A directive this module does not know, as written.
    Unknown(String),
    /// A known directive with a missing or malformed value: the text as
    /// written, and what is wrong.
    Invalid(String, &'static str),
}

impl Directive {
    /// Reads one directive (`noindex`, `max-snippet: 20`, ...), names without case.
    pub fn parse(item: &str) -> Directive {
        let item = item.trim();
        let (name, value) = match item.split_once(':') {
            Some((name, value)) => (name.trim(), Some(value.trim())),
            None => (item, None),
        };
        let name = name.to_ascii_lowercase();
        let plain =
            |d: Directive| if value.is_none() { d } else { Directive::Invalid(item.to_string(), "takes no value") };
        match name.as_str() {
            "all" => plain(Directive::All),
            "none" => plain(Directive::None),
            "index" => plain(Directive::Index),
            "noindex" => plain(Directive::NoIndex),
            "follow" => plain(Directive::Follow),
            "nofollow" => plain(Directive::NoFollow),
            "noarchive" => plain(Directive::NoArchive),
            "nocache" => plain(Directive::NoCache),
            "nosnippet" => plain(Directive::NoSnippet),
            "noimageindex" => plain(Directive::NoImageIndex),
            "notranslate" => plain(Directive::NoTranslate),
            "indexifembedded" => plain(Directive::IndexIfEmbedded),
            "max-snippet" | "max-video-preview" | "max-image-preview" | "unavailable_after" => {
                let Some(value) = value.filter(|v| !v.is_empty()) else {
                    return Directive::Invalid(item.to_string(), "needs a value");
                };
                let parsed = match name.as_str() {
                    "max-snippet" => parse_limit(value).map(Directive::MaxSnippet),
                    "max-video-preview" => parse_limit(value).map(Directive::MaxVideoPreview),
                    "max-image-preview" => match value.to_ascii_lowercase().as_str() {
                        "none" => Some(Directive::MaxImagePreview(ImagePreview::None)),
                        "standard" => Some(Directive::MaxImagePreview(ImagePreview::Standard)),
                        "large" => Some(Directive::MaxImagePreview(ImagePreview::Large)),
                        _ => None,
                    },
                    _ => parse_date(value).map(Directive::UnavailableAfter),
                };
                parsed.unwrap_or_else(|| {
                    let why = match name.as_str() {
                        "max-image-preview" => "value is not none, standard or large",
                        "unavailable_after" => "value is not an RFC 822, RFC 850 or ISO 8601 date",
                        _ => "value is not -1 or a whole number",
                    };
                    Directive::Invalid(item.to_string(), why)
                })
            }
            _ => Directive::Unknown(item.to_string()),
        }
    }

    /// Whether this is a problem to report (unknown, or invalid).
    pub fn is_problem(&self) -> bool {
        matches!(self, Directive::Unknown(_) | Directive::Invalid(..))
    }
}

impl fmt::Display for Directive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = |l: &Option<u64>| l.map_or(-1, |n| n as i128);
        match self {
            Directive::All => f.write_str("all"),
            Directive::None => f.write_str("none"),
            Directive::Index => f.write_str("index"),
            Directive::NoIndex => f.write_str("noindex"),
            Directive::Follow => f.write_str("follow"),
            Directive::NoFollow => f.write_str("nofollow"),
            Directive::NoArchive => f.write_str("noarchive"),
            Directive::NoCache => f.write_str("nocache"),
            Directive::NoSnippet => f.write_str("nosnippet"),
            Directive::NoImageIndex => f.write_str("noimageindex"),
            Directive::NoTranslate => f.write_str("notranslate"),
            Directive::IndexIfEmbedded => f.write_str("indexifembedded"),
            Directive::MaxSnippet(l) => write!(f, "max-snippet:{}", limit(l)),
            Directive::MaxImagePreview(p) => write!(f, "max-image-preview:{}", p.name()),
            Directive::MaxVideoPreview(l) => write!(f, "max-video-preview:{}", limit(l)),
            Directive::UnavailableAfter(t) => write!(f, "unavailable_after:{t}"),
            Directive::Unknown(text) => write!(f, "unknown directive {text:?}"),
            Directive::Invalid(text, why) => write!(f, "invalid directive {text:?}: {why}"),
        }
    }
}

/// `-1` (no limit) or a whole number.
fn parse_limit(value: &str) -> Option<Option<u64>> {
    if value == "-1" {
        return Some(None);
    }
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Absurdly long numbers saturate: a limit that large is no limit in practice.
    Some(Some(value.parse().unwrap_or(u64::MAX)))
}

/// Splits a comma-separated list into items, gluing back a date that a comma
/// cut (`unavailable_after: Wed, 25 Jun 2010 ...`): an `unavailable_after`
/// item whose value is only a weekday name takes the next item along.
fn list_items(list: &str) -> Vec<&str> {
    let mut items: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut glue_next = false;
    for (i, piece) in split_with_offsets(list) {
        if glue_next {
            glue_next = false;
            if let Some(last) = items.last_mut() {
                *last = &list[start..i + piece.len()];
                continue;
            }
        }
        start = i;
        // The value after `unavailable_after:`, which may follow an `agent:` prefix.
        let lower = piece.to_ascii_lowercase();
        if let Some(at) = lower.find("unavailable_after") {
            let after = piece[at + "unavailable_after".len()..].trim_start();
            if let Some(value) = after.strip_prefix(':').map(str::trim) {
                glue_next = !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphabetic());
            }
        }
        items.push(piece);
    }
    items.into_iter().map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// The comma-separated pieces of `list`, each with its byte offset.
fn split_with_offsets(list: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    list.split(',').map(move |piece| {
        let at = offset;
        offset += piece.len() + 1;
        (at, piece)
    })
}

/// Reads a meta `content` value: a comma-separated list of directives.
pub fn parse_directives(content: &str) -> Vec<Directive> {
    list_items(content).into_iter().map(Directive::parse).collect()
}

/// Reads one `X-Robots-Tag` header value into runs of directives, each for
/// the crawler named by its `agent:` prefix or, without one (`None`), for all.
/// A prefix applies to the directives after it until the next prefix, so
/// `googlebot: noindex, bingbot: nofollow` gives each crawler one directive.
/// A prefix is a product token (`[A-Za-z_-]+`) followed by a colon that is
/// not the name of a valued directive.
pub fn parse_x_robots_tag(value: &str) -> Vec<(Option<String>, Vec<Directive>)> {
    let mut runs: Vec<(Option<String>, Vec<Directive>)> = Vec::new();
    for item in list_items(value) {
        let mut directive = item;
        if let Some((name, rest)) = item.split_once(':') {
            let name = name.trim();
            let is_token = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_');
            let is_directive = !matches!(Directive::parse(name), Directive::Unknown(_));
            if is_token && !is_directive {
                runs.push((Some(name.to_ascii_lowercase()), Vec::new()));
                directive = rest.trim();
                if directive.is_empty() {
                    continue;
                }
            }
        }
        if runs.is_empty() {
            runs.push((None, Vec::new()));
        }
        runs.last_mut().expect("a run was just pushed").1.push(Directive::parse(directive));
    }
    runs
}

/// A `<meta name=... content=...>` tag of a document's head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaTag {
    /// 1-based line of the tag's `<`.
    pub line: usize,
    /// The `name` attribute, trimmed and lower-cased.
    pub name: String,
    /// The `content` attribute, character references decoded (lossy UTF-8).
    pub content: String,
}

/// What [`scan_head`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadScan {
    /// The head's meta tags that have both a non-empty `name` and `content`,
    /// in document order.
    pub tags: Vec<MetaTag>,
    /// How many bytes of the page the scan read (where the head ended, or
    /// the page's length).
    pub bytes_read: usize,
}

/// Where the scan is relative to the head element: the "before head", "in
/// head" and "after head" insertion modes of HTML tree construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Before,
    Inside,
    After,
}

/// Which attribute of the current tag is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attribute {
    Name,
    Content,
    Other,
}

/// What the tokenizer callback hands to the scan loop.
enum Step {
    Meta { start: usize, name: Vec<u8>, content: Vec<u8> },
    HeadEnded { at: usize },
}

/// The head-ending rules of HTML tree construction, fed by tokenizer events.
struct HeadTracker {
    mode: Mode,
    template_depth: usize,
    /// Inside `<script>`, `<title>`, ...: the element's name; its text is content.
    text_element: Option<Vec<u8>>,
    tag_name: Vec<u8>,
    tag_start: usize,
    attribute: Attribute,
    name: Option<Vec<u8>>,
    content: Option<Vec<u8>>,
    name_seen: bool,
    content_seen: bool,
}

/// Start tags the parser processes "in head" (all but `head` and `html`).
fn is_head_element(name: &[u8]) -> bool {
    matches!(
        name,
        b"base"
            | b"basefont"
            | b"bgsound"
            | b"link"
            | b"meta"
            | b"title"
            | b"noscript"
            | b"noframes"
            | b"style"
            | b"script"
    )
}

impl HeadTracker {
    fn new() -> HeadTracker {
        HeadTracker {
            mode: Mode::Before,
            template_depth: 0,
            text_element: None,
            tag_name: Vec::new(),
            tag_start: 0,
            attribute: Attribute::Other,
            name: None,
            content: None,
            name_seen: false,
            content_seen: false,
        }
    }

    fn event(&mut self, event: CallbackEvent<'_>, span: Span<usize>) -> Option<Step> {
        match event {
            CallbackEvent::OpenStartTag { name } => {
                self.tag_name.clear();
                self.tag_name.extend_from_slice(name);
                self.tag_start = span.start;
                self.attribute = Attribute::Other;
                self.name = None;
                self.content = None;
                self.name_seen = false;
                self.content_seen = false;
                None
            }
            CallbackEvent::AttributeName { name } => {
                // The first of duplicate attributes wins, as in the HTML standard.
                self.attribute = match name {
                    b"name" if !self.name_seen => {
                        self.name_seen = true;
                        Attribute::Name
                    }
                    b"content" if !self.content_seen => {
                        self.content_seen = true;
                        Attribute::Content
                    }
                    _ => Attribute::Other,
                };
                None
            }
            CallbackEvent::AttributeValue { value } => {
                match self.attribute {
                    Attribute::Name => self.name = Some(value.to_vec()),
                    Attribute::Content => self.content = Some(value.to_vec()),
                    Attribute::Other => {}
                }
                None
            }
            CallbackEvent::CloseStartTag { .. } => self.start_tag(),
            CallbackEvent::EndTag { name } => self.end_tag(name, span.start),
            CallbackEvent::String { value } => {
                let text = self.text_element.is_some() || self.template_depth > 0;
                let blank = value.iter().all(|b| matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' '));
                (!text && !blank).then_some(Step::HeadEnded { at: span.start })
            }
            _ => None,
        }
    }

    fn start_tag(&mut self) -> Option<Step> {
        let at = self.tag_start;
        if naive_next_state(&self.tag_name).is_some() {
            self.text_element = Some(self.tag_name.clone());
        }
        if self.template_depth > 0 {
            if self.tag_name == b"template" {
                self.template_depth += 1;
            }
            return None;
        }
        let name = self.tag_name.as_slice();
        if self.mode == Mode::Before {
            match name {
                b"html" => return None,
                b"head" => {
                    self.mode = Mode::Inside;
                    return None;
                }
                // Anything else opens an implied head and is processed in it.
                _ => self.mode = Mode::Inside,
            }
        }
        match name {
            b"html" | b"head" => None,
            b"template" => {
                self.template_depth += 1;
                None
            }
            b"meta" => match (self.name.take(), self.content.take()) {
                (Some(name), Some(content)) => Some(Step::Meta { start: at, name, content }),
                _ => None,
            },
            _ if is_head_element(name) => None,
            _ => Some(Step::HeadEnded { at }),
        }
    }

    fn end_tag(&mut self, name: &[u8], at: usize) -> Option<Step> {
        if self.text_element.as_deref() == Some(name) {
            self.text_element = None;
            return None;
        }
        if self.template_depth > 0 {
            if name == b"template" {
                self.template_depth -= 1;
            }
            return None;
        }
        match (self.mode, name) {
            (_, b"body" | b"html" | b"br") => Some(Step::HeadEnded { at }),
            (Mode::Before | Mode::Inside, b"head") => {
                self.mode = Mode::After;
                None
            }
            _ => None,
        }
    }
}

/// Counts lines up to byte offsets that only grow: `\n`, `\r\n` and a lone `\r` end a line.
struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: usize,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset > self.offset {
            for (i, &b) in self.text[self.offset..offset].iter().enumerate() {
                let at = self.offset + i;
                if b == b'\n' || (b == b'\r' && self.text.get(at + 1) != Some(&b'\n')) {
                    self.line += 1;
                }
            }
            self.offset = offset;
        }
        self.line
    }
}

/// The page as the tokenizer should see it: without a UTF-8 byte order mark,
/// and UTF-16 (with a byte order mark) transcoded to UTF-8.
fn page_bytes(html: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let utf16 = |big_endian: bool| {
        let units = html[2..].chunks_exact(2).map(|p| {
            if big_endian {
                u16::from_be_bytes([p[0], p[1]])
            } else {
                u16::from_le_bytes([p[0], p[1]])
            }
        });
        let text: String = char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect();
        std::borrow::Cow::Owned(text.into_bytes())
    };
    match html {
        [0xef, 0xbb, 0xbf, rest @ ..] => std::borrow::Cow::Borrowed(rest),
        [0xfe, 0xff, ..] => utf16(true),
        [0xff, 0xfe, ..] => utf16(false),
        _ => std::borrow::Cow::Borrowed(html),
    }
}

/// Reads the meta tags of a page's head and stops where the head ends (see
/// the module documentation for where that is). Never fails: any bytes are a
/// page, at worst one without tags.
pub fn scan_head(html: &[u8]) -> HeadScan {
    let page = page_bytes(html);
    let mut tracker = HeadTracker::new();
    let mut emitter =
        CallbackEmitter::new(move |event: CallbackEvent<'_>, span: Span<usize>| tracker.event(event, span));
    emitter.naively_switch_states(true);
    let mut lines = LineCounter { text: &page, offset: 0, line: 1 };
    let mut scan = HeadScan { tags: Vec::new(), bytes_read: page.len() };
    for step in Tokenizer::new_with_emitter(&*page, emitter) {
        // The reader of a byte slice cannot fail.
        let step = match step {
            Ok(step) => step,
            Err(never) => match never {},
        };
        match step {
            Step::Meta { start, name, content } => {
                let name = String::from_utf8_lossy(&name).trim_matches(is_html_space).to_ascii_lowercase();
                if name.is_empty() {
                    continue;
                }
                let content = String::from_utf8_lossy(&content).into_owned();
                scan.tags.push(MetaTag { line: lines.line_at(start), name, content });
            }
            Step::HeadEnded { at } => {
                scan.bytes_read = at;
                break;
            }
        }
    }
    scan
}

fn is_html_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ')
}

/// Where a [`Statement`] came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A `<meta>` tag: its line and its `name` (`robots` or a crawler token).
    Meta {
        /// 1-based line of the tag.
        line: usize,
        /// The `name` attribute, lower case.
        name: String,
    },
    /// An `X-Robots-Tag` header: its number among the page's `X-Robots-Tag`
    /// headers (1-based) and the agent prefix of this run of directives.
    Header {
        /// 1-based position among the `X-Robots-Tag` headers.
        number: usize,
        /// The `agent:` prefix, lower case, if any.
        agent: Option<String>,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Meta { line, name } => write!(f, "line {line} <meta name=\"{name}\">"),
            Origin::Header { number, agent: None } => write!(f, "header {number} X-Robots-Tag"),
            Origin::Header { number, agent: Some(agent) } => write!(f, "header {number} X-Robots-Tag {agent}:"),
        }
    }
}

/// One meta tag, or one agent's run of an `X-Robots-Tag` header, that applies
/// to the crawler: where it is, what it says, and what that was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// Where it came from.
    pub origin: Origin,
    /// The directives read from it, in order, including unknown and invalid ones.
    pub directives: Vec<Directive>,
}

/// The page-level rules one field of [`PageRules`] can be decided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// [`PageRules::index`].
    Index,
    /// [`PageRules::follow`].
    Follow,
    /// [`PageRules::archive`].
    Archive,
    /// [`PageRules::snippet`].
    Snippet,
    /// [`PageRules::image_index`].
    ImageIndex,
    /// [`PageRules::translate`].
    Translate,
    /// [`PageRules::index_if_embedded`].
    IndexIfEmbedded,
    /// [`PageRules::max_snippet`].
    MaxSnippet,
    /// [`PageRules::max_image_preview`].
    MaxImagePreview,
    /// [`PageRules::max_video_preview`].
    MaxVideoPreview,
    /// [`PageRules::unavailable_after`].
    UnavailableAfter,
}

impl Field {
    /// Every field, in output order.
    pub const ALL: [Field; 11] = [
        Field::Index,
        Field::Follow,
        Field::Archive,
        Field::Snippet,
        Field::ImageIndex,
        Field::Translate,
        Field::IndexIfEmbedded,
        Field::MaxSnippet,
        Field::MaxImagePreview,
        Field::MaxVideoPreview,
        Field::UnavailableAfter,
    ];

    /// The field's name in output: `index`, `max-snippet`, `unavailable_after`, ...
    pub fn name(self) -> &'static str {
        match self {
            Field::Index => "index",
            Field::Follow => "follow",
            Field::Archive => "archive",
            Field::Snippet => "snippet",
            Field::ImageIndex => "imageindex",
            Field::Translate => "translate",
            Field::IndexIfEmbedded => "indexifembedded",
            Field::MaxSnippet => "max-snippet",
            Field::MaxImagePreview => "max-image-preview",
            Field::MaxVideoPreview => "max-video-preview",
            Field::UnavailableAfter => "unavailable_after",
        }
    }
}

/// The page-level rules for one crawler, and what decided them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRules {
    /// May the page be indexed (no `noindex`, `none`).
    pub index: bool,
    /// May its links be followed (no `nofollow`, `none`).
    pub follow: bool,
    /// May a cached copy be shown (no `noarchive`, `nocache`).
    pub archive: bool,
    /// May a snippet be shown (no `nosnippet`, no `max-snippet:0`).
    pub snippet: bool,
    /// May its images be indexed (no `noimageindex`).
    pub image_index: bool,
    /// May a translation be offered (no `notranslate`).
    pub translate: bool,
    /// `indexifembedded` was given: the page may be indexed when embedded
    /// in another page, despite `noindex`.
    pub index_if_embedded: bool,
    /// The smallest `max-snippet` in characters; `None`: no limit (`-1`).
    pub max_snippet: Option<u64>,
    /// The smallest `max-image-preview`; `None`: not set (the search engine's default).
    pub max_image_preview: Option<ImagePreview>,
    /// The smallest `max-video-preview` in seconds; `None`: no limit (`-1`).
    pub max_video_preview: Option<u64>,
    /// The earliest `unavailable_after`; `None`: none given.
    pub unavailable_after: Option<Timestamp>,
    /// Every tag and header run that applies to the crawler: headers first,
    /// then meta tags in document order.
    pub statements: Vec<Statement>,
    decided: [Option<usize>; Field::ALL.len()],
}

impl Default for PageRules {
    /// Index, follow, everything allowed, no limits, nothing read.
    fn default() -> PageRules {
        PageRules {
            index: true,
            follow: true,
            archive: true,
            snippet: true,
            image_index: true,
            translate: true,
            index_if_embedded: false,
            max_snippet: None,
            max_image_preview: None,
            max_video_preview: None,
            unavailable_after: None,
            statements: Vec::new(),
            decided: [None; Field::ALL.len()],
        }
    }
}

/// Whether a limit (`None` = unlimited) is stricter than the current one.
fn stricter(new: Option<u64>, current: Option<u64>) -> bool {
    match (new, current) {
        (Some(n), Some(c)) => n < c,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

impl PageRules {
    /// Combines the meta tags of a head and `X-Robots-Tag` header values for
    /// `agent` (see the module documentation). `headers` are the values of the
    /// page's `X-Robots-Tag` headers, in order.
    pub fn combine<S: AsRef<str>>(agent: &Agent, tags: &[MetaTag], headers: &[S]) -> PageRules {
        let mut rules = PageRules::default();
        for (i, value) in headers.iter().enumerate() {
            for (prefix, directives) in parse_x_robots_tag(value.as_ref()) {
                if prefix.as_deref().is_none_or(|p| agent.is_named_by(p.as_bytes())) {
                    rules.add(Statement { origin: Origin::Header { number: i + 1, agent: prefix }, directives });
                }
            }
        }
        for tag in tags {
            if tag.name == "robots" || agent.is_named_by(tag.name.as_bytes()) {
                let origin = Origin::Meta { line: tag.line, name: tag.name.clone() };
                rules.add(Statement { origin, directives: parse_directives(&tag.content) });
            }
        }
        rules
    }

    /// Scans a page's head and combines its tags with the page's response
    /// headers (any headers, as name and value bytes; only `X-Robots-Tag`,
    /// named without case, is read).
    pub fn evaluate(agent: &Agent, html: &[u8], headers: &[(&[u8], &[u8])]) -> PageRules {
        let values: Vec<String> = headers
            .iter()
            .filter(|(name, _)| name.trim_ascii().eq_ignore_ascii_case(b"x-robots-tag"))
            .map(|(_, value)| String::from_utf8_lossy(value).into_owned())
            .collect();
        PageRules::combine(agent, &scan_head(html).tags, &values)
    }

    /// The rules of a fetched HTTP response (a WARC `response` record): its
    /// `X-Robots-Tag` headers, and the head of its body when the body is HTML
    /// (a `Content-Type` naming `html`, or none). Other bodies (PDF, images)
    /// have only their headers read. The body is decoded first (chunked,
    /// gzip, deflate); an undecodable body is an error.
    pub fn evaluate_response(agent: &Agent, response: &HttpResponse) -> Result<PageRules, HttpError> {
        let headers: Vec<(&[u8], &[u8])> = response.headers.iter().map(|(n, v)| (n.as_bytes(), v.as_slice())).collect();
        let html = response
            .header("Content-Type")
            .is_none_or(|t| String::from_utf8_lossy(t).to_ascii_lowercase().contains("html"));
        if !html {
            return Ok(PageRules::evaluate(agent, b"", &headers));
        }
        let body = response.decoded_body()?;
        Ok(PageRules::evaluate(agent, &body, &headers))
    }

    /// Adds one statement, keeping the more restrictive value of each field.
    fn add(&mut self, statement: Statement) {
        let source = self.statements.len();
        for directive in &statement.directives {
            let mut restrict = |field: Field, allowed: &mut bool| {
                if *allowed {
                    *allowed = false;
                    self.decided[field as usize] = Some(source);
                }
            };
            match directive {
                Directive::None => {
                    restrict(Field::Index, &mut self.index);
                    restrict(Field::Follow, &mut self.follow);
                }
                Directive::NoIndex => restrict(Field::Index, &mut self.index),
                Directive::NoFollow => restrict(Field::Follow, &mut self.follow),
                Directive::NoArchive | Directive::NoCache => restrict(Field::Archive, &mut self.archive),
                Directive::NoSnippet | Directive::MaxSnippet(Some(0)) => restrict(Field::Snippet, &mut self.snippet),
                Directive::NoImageIndex => restrict(Field::ImageIndex, &mut self.image_index),
                Directive::NoTranslate => restrict(Field::Translate, &mut self.translate),
                _ => {}
            }
            match *directive {
                Directive::IndexIfEmbedded if !self.index_if_embedded => {
                    self.index_if_embedded = true;
                    self.decided[Field::IndexIfEmbedded as usize] = Some(source);
                }
                Directive::MaxSnippet(limit) if stricter(limit, self.max_snippet) => {
                    self.max_snippet = limit;
                    self.decided[Field::MaxSnippet as usize] = Some(source);
                }
                Directive::MaxVideoPreview(limit) if stricter(limit, self.max_video_preview) => {
                    self.max_video_preview = limit;
                    self.decided[Field::MaxVideoPreview as usize] = Some(source);
                }
                Directive::MaxImagePreview(size) if self.max_image_preview.is_none_or(|current| size < current) => {
                    self.max_image_preview = Some(size);
                    self.decided[Field::MaxImagePreview as usize] = Some(source);
                }
                Directive::UnavailableAfter(at) if self.unavailable_after.is_none_or(|current| at < current) => {
                    self.unavailable_after = Some(at);
                    self.decided[Field::UnavailableAfter as usize] = Some(source);
                }
                _ => {}
            }
        }
        self.statements.push(statement);
    }

    /// The statement that decided a field (the first to set it to its final
    /// value); `None` when the field has its default.
    pub fn decided_by(&self, field: Field) -> Option<&Statement> {
        self.decided[field as usize].map(|i| &self.statements[i])
    }

    /// Unknown and invalid directives, with the statement they are in.
    pub fn problems(&self) -> impl Iterator<Item = (&Statement, &Directive)> {
        self.statements.iter().flat_map(|s| s.directives.iter().filter(|d| d.is_problem()).map(move |d| (s, d)))
    }

    /// A field's value as printed: `true`/`false`, `-1` for no limit, `default`
    /// for an unset image preview, `none` for no `unavailable_after`.
    pub fn value_text(&self, field: Field) -> String {
        let limit = |l: Option<u64>| l.map_or_else(|| "-1".to_string(), |n| n.to_string());
        match field {
            Field::Index => self.index.to_string(),
            Field::Follow => self.follow.to_string(),
            Field::Archive => self.archive.to_string(),
            Field::Snippet => self.snippet.to_string(),
            Field::ImageIndex => self.image_index.to_string(),
            Field::Translate => self.translate.to_string(),
            Field::IndexIfEmbedded => self.index_if_embedded.to_string(),
            Field::MaxSnippet => limit(self.max_snippet),
            Field::MaxImagePreview => self.max_image_preview.map_or("default", ImagePreview::name).to_string(),
            Field::MaxVideoPreview => limit(self.max_video_preview),
            Field::UnavailableAfter => self.unavailable_after.map_or_else(|| "none".to_string(), |t| t.to_string()),
        }
    }
}

impl fmt::Display for PageRules {
    /// `index=false follow=true archive=true ...`: every field, space-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, field) in Field::ALL.into_iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{}={}", field.name(), self.value_text(field))?;
        }
        Ok(())
    }
}

fn number(text: &str, digits: std::ops::RangeInclusive<usize>) -> Option<i64> {
    (digits.contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok())?
}

/// Seconds since the epoch of a calendar date and time, checked.
fn instant(y: i64, m: i64, d: i64, (hh, mm, ss): (i64, i64, i64), offset: i64) -> Option<Timestamp> {
    let valid = (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m) && hh < 24 && mm < 60 && ss <= 60;
    valid.then(|| Timestamp::from_unix(days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss.min(59) - offset))
}

/// `HH:MM` or `HH:MM:SS` (fractions of a second dropped).
fn time_of_day(text: &str) -> Option<(i64, i64, i64)> {
    let mut parts = text.split(':');
    let hh = number(parts.next()?, 1..=2)?;
    let mm = number(parts.next()?, 2..=2)?;
    let ss = match parts.next() {
        Some(s) => number(s.split('.').next()?, 2..=2)?,
        None => 0,
    };
    parts.next().is_none().then_some((hh, mm, ss))
}

/// A zone as an offset east of UTC in seconds: `Z`, `GMT`, `UT`, `UTC`, the
/// US zones of RFC 822, `+HHMM`, `+HH:MM`.
fn zone_offset(text: &str) -> Option<i64> {
    let named = match text.to_ascii_uppercase().as_str() {
        "Z" | "GMT" | "UT" | "UTC" => Some(0),
        "EDT" => Some(-4),
        "EST" | "CDT" => Some(-5),
        "CST" | "MDT" => Some(-6),
        "MST" | "PDT" => Some(-7),
        "PST" => Some(-8),
        _ => None,
    };
    if let Some(hours) = named {
        return Some(hours * 3600);
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|&c| c != ':').collect();
    let hh = number(digits.get(..2)?, 2..=2)?;
    let mm = if digits.len() == 4 {
        number(&digits[2..], 2..=2)?
    } else if digits.len() == 2 {
        0
    } else {
        return None;
    };
    Some(sign * (hh * 3600 + mm * 60))
}

/// Reads an `unavailable_after` date: ISO 8601 (`2020-09-21`,
/// `2020-09-21T15:00:00+02:00`, `2020-09-21 15:00Z`), RFC 822/1123
/// (`Wed, 25 Jun 2010 15:00:00 PST`, the weekday optional) or RFC 850
/// (`Wednesday, 25-Jun-10 15:00:00 GMT`). A date without a zone is UTC.
pub fn parse_date(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Some(date) = text.get(..10).filter(|d| d.as_bytes().get(4) == Some(&b'-')) {
        let mut parts = date.split('-');
        let y = number(parts.next()?, 4..=4)?;
        let m = number(parts.next()?, 2..=2)?;
        let d = number(parts.next()?, 2..=2)?;
        let rest = text[10..].trim_start_matches(['T', 't', ' ']);
        if rest.is_empty() {
            return instant(y, m, d, (0, 0, 0), 0);
        }
        let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
        let time = time_of_day(rest[..zone_at].trim())?;
        let zone = rest[zone_at..].trim();
        let offset = if zone.is_empty() { 0 } else { zone_offset(zone)? };
        return instant(y, m, d, time, offset);
    }
    // RFC 822 / 850: drop the weekday, then `DD Mon YYYY` or `DD-Mon-YY`.
    let text = match text.split_once(',') {
        Some((weekday, rest)) if weekday.trim().bytes().all(|b| b.is_ascii_alphabetic()) => rest,
        _ => text,
    };
    let mut words = text.split_ascii_whitespace();
    let first = words.next()?;
    let (day, month, year) = if first.contains('-') {
        let mut parts = first.split('-');
        let date = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        date
    } else {
        (first, words.next()?, words.next()?)
    };
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month = month.get(..3).filter(|_| month.len() >= 3)?.to_ascii_lowercase();
    let m = MONTHS.iter().position(|&name| name == month)? as i64 + 1;
    let d = number(day, 1..=2)?;
    let y = match year.len() {
        2 => number(year, 2..=2).map(|y| if y < 50 { 2000 + y } else { 1900 + y })?,
        _ => number(year, 4..=4)?,
    };
    let time = match words.next() {
        Some(t) => time_of_day(t)?,
        None => (0, 0, 0),
    };
    let offset = match words.next() {
        Some(z) => zone_offset(z)?,
        None => 0,
    };
    if words.next().is_some() {
        return None;
    }
    instant(y, m, d, time, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(spec: &str) -> Agent {
        Agent::parse(spec).unwrap()
    }

    #[test]
    fn directives_are_read_without_case_and_with_values() {
        assert_eq!(
            parse_directives(" NoIndex ,FOLLOW,max-snippet : 20, max-image-preview:LARGE,max-video-preview:-1,,"),
            vec![
                Directive::NoIndex,
                Directive::Follow,
                Directive::MaxSnippet(Some(20)),
                Directive::MaxImagePreview(ImagePreview::Large),
                Directive::MaxVideoPreview(None),
            ]
        );
    }

    #[test]
    fn unknown_and_malformed_directives_are_reported() {
        let read = parse_directives("noodp, max-snippet:abc, max-snippet, noindex:yes, max-image-preview:huge");
        assert_eq!(read[0], Directive::Unknown("noodp".into()));
        assert!(matches!(read[1], Directive::Invalid(ref t, _) if t == "max-snippet:abc"));
        assert!(matches!(read[2], Directive::Invalid(_, "needs a value")));
        assert!(matches!(read[3], Directive::Invalid(_, "takes no value")));
        assert!(matches!(read[4], Directive::Invalid(..)));
        assert!(read.iter().all(Directive::is_problem));
    }

    #[test]
    fn a_comma_inside_a_date_does_not_split_it() {
        let read = parse_directives("noarchive, unavailable_after: Wed, 25 Jun 2010 15:00:00 PST, nofollow");
        assert_eq!(
            read,
            vec![
                Directive::NoArchive,
                Directive::UnavailableAfter(Timestamp::from_unix(1_277_506_800)),
                Directive::NoFollow
            ]
        );
    }

    #[test]
    fn dates_in_the_documented_formats() {
        // 2010-06-25 23:00:00 UTC, written every way.
        let utc = Timestamp::from_unix(1_277_506_800);
        for text in [
            "25 Jun 2010 15:00:00 PST",
            "Friday, 25-Jun-10 23:00:00 GMT",
            "Fri, 25 Jun 2010 23:00:00 +0000",
            "2010-06-25T23:00:00Z",
            "2010-06-25T16:00:00-07:00",
            "2010-06-25 23:00",
        ] {
            assert_eq!(parse_date(text), Some(utc), "{text}");
        }
        assert_eq!(parse_date("2020-09-21").map(|t| t.to_string()), Some("2020-09-21T00:00:00Z".into()));
        for bad in ["2010-02-30", "2010-13-01", "tomorrow", "25 Foo 2010", "2010-06-25T25:00", ""] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn header_prefixes_switch_the_agent() {
        let runs = parse_x_robots_tag("noarchive, googlebot: noindex, nofollow, otherbot: max-snippet: 5");
        assert_eq!(
            runs,
            vec![
                (None, vec![Directive::NoArchive]),
                (Some("googlebot".into()), vec![Directive::NoIndex, Directive::NoFollow]),
                (Some("otherbot".into()), vec![Directive::MaxSnippet(Some(5))]),
            ]
        );
        // A date with a comma after an agent prefix stays whole.
        assert_eq!(
            parse_x_robots_tag("googlebot: unavailable_after: Fri, 25 Jun 2010 23:00:00 GMT, noarchive"),
            vec![(
                Some("googlebot".into()),
                vec![Directive::UnavailableAfter(Timestamp::from_unix(1_277_506_800)), Directive::NoArchive]
            )]
        );
        // A valued directive is not an agent prefix.
        assert_eq!(
            parse_x_robots_tag("unavailable_after: 2020-09-21"),
            vec![(None, vec![Directive::UnavailableAfter(Timestamp::from_unix(1_600_646_400))])]
        );
    }

    #[test]
    fn scan_reads_head_metas_with_lines() {
        let page = b"<!doctype html>\n<html>\n<head>\n<title>t</title>\n<meta name=ROBOTS content='noindex'>\r\n<META CONTENT=\"nofollow\" NAME=\"GoogleBot\">\n</head><body><meta name=robots content=none></body>";
        let scan = scan_head(page);
        assert_eq!(
            scan.tags,
            vec![
                MetaTag { line: 5, name: "robots".into(), content: "noindex".into() },
                MetaTag { line: 6, name: "googlebot".into(), content: "nofollow".into() },
            ]
        );
        let body = page.windows(6).position(|w| w == b"<body>").unwrap();
        assert_eq!(scan.bytes_read, body);
    }

    #[test]
    fn scripts_titles_and_templates_hide_markup() {
        let page = b"<head><script>var s='<meta name=robots content=noindex>'</script><title><meta name=robots content=noindex></title>\
            <noscript><meta name=robots content=nofollow></noscript><template><meta name=robots content=noarchive></template>\
            <style>p{}</style><meta name=robots content=nosnippet></head>";
        let scan = scan_head(page);
        assert_eq!(scan.tags.len(), 1, "{:?}", scan.tags);
        assert_eq!(scan.tags[0].content, "nosnippet");
    }

    #[test]
    fn combining_takes_the_more_restrictive() {
        let tags = [
            MetaTag { line: 1, name: "robots".into(), content: "index, follow, max-snippet:50".into() },
            MetaTag { line: 2, name: "googlebot".into(), content: "noindex, max-snippet:-1, max-snippet:20".into() },
            MetaTag { line: 3, name: "bingbot".into(), content: "nofollow".into() },
        ];
        let rules = PageRules::combine(
            &agent("googlebot"),
            &tags,
            &["googlebot: max-image-preview:standard", "max-image-preview:large"],
        );
        assert!(!rules.index && rules.follow);
        assert_eq!(rules.max_snippet, Some(20));
        assert_eq!(rules.max_image_preview, Some(ImagePreview::Standard));
        assert_eq!(rules.decided_by(Field::Index).unwrap().origin, Origin::Meta { line: 2, name: "googlebot".into() });
        assert_eq!(
            rules.decided_by(Field::MaxImagePreview).unwrap().origin,
            Origin::Header { number: 1, agent: Some("googlebot".into()) }
        );
        assert_eq!(rules.decided_by(Field::Follow), None);
        // bingbot's tag does not apply; three headers' runs and two tags do.
        assert_eq!(rules.statements.len(), 4);
    }
}
