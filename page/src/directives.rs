//! One directive parser for robots meta `content` values and
//! `X-Robots-Tag` header values.

use crate::dates::parse_date;
use robotsieve_sources::time::Timestamp;
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

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_sources::time::Timestamp;

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
}
