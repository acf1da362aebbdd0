//! The robots-relevant `<meta>` tags of a document's head, read with the
//! html5gum tokenizer.
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
//! allocating per token. It is only a tokenizer: the head-ending rules (the crate
//! documentation) are the small part of tree construction this module implements, and the
//! switch into raw-text states after `<script>`, `<style>`, `<title>` and
//! `<noscript>` is html5gum's `naive_next_state`.

use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{naive_next_state, Span, Tokenizer};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
