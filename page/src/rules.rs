//! The page-level rules for one crawler, combined from the tags and
//! headers that apply to it.

use crate::directives::{parse_directives, parse_x_robots_tag, Directive, ImagePreview};
use crate::head::{scan_head, MetaTag};
use robotsieve_robotstxt::group::Agent;
use robotsieve_sources::http::{HttpError, HttpResponse};
use robotsieve_sources::time::Timestamp;
use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directives::ImagePreview;
    use crate::head::MetaTag;

    fn agent(spec: &str) -> Agent {
        Agent::parse(spec).unwrap()
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
