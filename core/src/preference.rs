//! Usage preferences: the `Content-Signal` and `Content-Usage` lines of a
//! group, and which of them apply to a URL.
//!
//! Two vocabularies say what a site wants done with its content, beside the
//! allow and disallow rules (which they never change):
//!
//! - Cloudflare's Content Signals Policy, `Content-Signal: search=yes,
//!   ai-input=yes, ai-train=no`: keys `search`, `ai-input`, `ai-train`,
//!   values `yes` and `no`.
//! - The IETF aipref drafts (draft-ietf-aipref-attach for the robots.txt line,
//!   draft-ietf-aipref-vocab for the keys): `Content-Usage: /docs/ train-ai=y`,
//!   an optional path then a Structured Fields dictionary; keys `train-ai`,
//!   `ai-use` and `search` (and `train-genai`, `bots`, `all` of earlier
//!   revisions), values the tokens `y` and `n`.
//!
//! A line keeps its keys and values as written, unknown keys included; what a
//! value means is read from its field's vocabulary ([`meaning`]).
//!
//! Which lines apply to a URL ([`applicable`]), for each field on its own:
//! the lines whose path matches the URL's path (as allow and disallow
//! patterns match: prefix, `*`, final `$`, escaped bytes; a line without a
//! path is read as `/`), and of those the ones with the longest path. When
//! several lines tie, they combine key by key as the aipref vocabulary
//! combines statements: a key any of them says no to is no, else a key any of
//! them says yes to is yes, else the first line's value as written. Within one
//! line a repeated key keeps its last value (Structured Fields dictionaries).
//! The robots.txt parsing itself lives in the compiler; this module is the
//! data and the resolution, which the engine needs to answer from an
//! artifact.

use crate::pattern;

/// Which of the two fields a preference line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PreferenceField {
    /// Cloudflare's `Content-Signal`.
    ContentSignal,
    /// The IETF aipref `Content-Usage`.
    ContentUsage,
}

impl PreferenceField {
    /// Both fields, in output order.
    pub const ALL: [PreferenceField; 2] = [PreferenceField::ContentSignal, PreferenceField::ContentUsage];

    /// The field's name as commonly written (`Content-Signal`).
    pub fn name(self) -> &'static str {
        match self {
            PreferenceField::ContentSignal => "Content-Signal",
            PreferenceField::ContentUsage => "Content-Usage",
        }
    }

    /// The keys the field's vocabulary defines.
    pub fn known_keys(self) -> &'static [&'static str] {
        match self {
            PreferenceField::ContentSignal => &["search", "ai-input", "ai-train"],
            PreferenceField::ContentUsage => &["train-ai", "ai-use", "search", "train-genai", "bots", "all"],
        }
    }

    /// The values that mean yes and no in the field's vocabulary.
    pub fn yes_no(self) -> (&'static [u8], &'static [u8]) {
        match self {
            PreferenceField::ContentSignal => (b"yes", b"no"),
            PreferenceField::ContentUsage => (b"y", b"n"),
        }
    }

    /// The field's number in stored records (0, 1).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The field of a stored record's number.
    pub fn from_code(code: u8) -> Option<PreferenceField> {
        PreferenceField::ALL.get(usize::from(code)).copied()
    }
}

/// What a value says about its key's use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Meaning {
    /// The use is allowed (`yes`, `y`).
    Yes,
    /// The use is not wanted (`no`, `n`).
    No,
    /// Anything else: an unknown key, or a value the vocabulary does not define.
    Unknown,
}

/// What `value` means for `key` under `field`'s vocabulary. Keys and values
/// are case-sensitive, as Structured Fields are; unknown keys mean nothing.
pub fn meaning(field: PreferenceField, key: &[u8], value: &[u8]) -> Meaning {
    if !field.known_keys().iter().any(|k| k.as_bytes() == key) {
        return Meaning::Unknown;
    }
    let (yes, no) = field.yes_no();
    if value == yes {
        Meaning::Yes
    } else if value == no {
        Meaning::No
    } else {
        Meaning::Unknown
    }
}

/// One key and its value, as written (parameters after `;` removed).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entry {
    /// The key, as written.
    pub key: Vec<u8>,
    /// The value, as written; empty for a bare key (a Structured Fields `true`).
    pub value: Vec<u8>,
}

/// One `Content-Signal` or `Content-Usage` line of a group.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PreferenceLine {
    /// Which field.
    pub field: PreferenceField,
    /// The line of the robots.txt it came from.
    pub line: u32,
    /// The path it applies to, escaped as rule patterns are (`/` when the
    /// line has none).
    pub path: Vec<u8>,
    /// Its keys and values, in order, a repeated key's earlier values dropped.
    pub entries: Vec<Entry>,
}

impl PreferenceLine {
    /// Whether the line applies to a path-and-query (in the form rules are
    /// matched against).
    pub fn matches(&self, path: &[u8]) -> bool {
        pattern::matches(&self.path, path)
    }
}

/// The preferences of one field that apply to a URL.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Applied {
    /// The lines that decided (the matching lines with the longest path), in file order.
    pub lines: Vec<u32>,
    /// Their keys and values, combined (see the module documentation).
    pub entries: Vec<Entry>,
}

/// The preferences that apply to a URL: one [`Applied`] per field that has a
/// matching line, in [`PreferenceField::ALL`] order.
pub fn applicable<'a, I>(lines: I, path: &[u8]) -> Vec<(PreferenceField, Applied)>
where
    I: IntoIterator<Item = &'a PreferenceLine>,
    I::IntoIter: Clone,
{
    let lines = lines.into_iter();
    let mut out = Vec::new();
    for field in PreferenceField::ALL {
        let matching = lines.clone().filter(|l| l.field == field && l.matches(path));
        let Some(longest) = matching.clone().map(|l| l.path.len()).max() else { continue };
        let winners: Vec<&PreferenceLine> = matching.filter(|l| l.path.len() == longest).collect();
        out.push((field, combine(field, &winners)));
    }
    out
}

/// Combines tied lines key by key: no beats yes beats anything else; else the
/// first value as written.
fn combine(field: PreferenceField, lines: &[&PreferenceLine]) -> Applied {
    let mut entries: Vec<Entry> = Vec::new();
    for line in lines {
        for entry in &line.entries {
            let rank = |e: &Entry| match meaning(field, &e.key, &e.value) {
                Meaning::No => 2,
                Meaning::Yes => 1,
                Meaning::Unknown => 0,
            };
            match entries.iter_mut().find(|e| e.key == entry.key) {
                Some(kept) if rank(entry) > rank(kept) => *kept = entry.clone(),
                Some(_) => {}
                None => entries.push(entry.clone()),
            }
        }
    }
    Applied { lines: lines.iter().map(|l| l.line).collect(), entries }
}

/// The applicable preferences as one tab-free line: `Content-Signal (line 2):
/// ai-train=no; Content-Usage (lines 3, 4): train-ai=n`; empty when none
/// apply. Without line numbers (all 0), `Content-Signal: ai-train=no`.
pub fn describe(applied: &[(PreferenceField, Applied)]) -> String {
    applied
        .iter()
        .map(|(field, applied)| {
            let entries = format_entries(&applied.entries);
            if applied.lines.iter().all(|&l| l == 0) {
                // Compiled without line numbers.
                return format!("{}: {entries}", field.name());
            }
            let lines = applied.lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
            let plural = if applied.lines.len() == 1 { "line" } else { "lines" };
            format!("{} ({plural} {lines}): {entries}", field.name())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `key=value, key=value` of entries, as a line would write them.
pub fn format_entries(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| {
            let key = String::from_utf8_lossy(&e.key);
            if e.value.is_empty() {
                key.into_owned()
            } else {
                format!("{key}={}", String::from_utf8_lossy(&e.value))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl PreferenceLine {
    /// A line from text, for tests: `(key, value)` pairs as written.
    #[cfg(test)]
    pub(crate) fn of(field: PreferenceField, line: u32, path: &str, entries: &[(&str, &str)]) -> PreferenceLine {
        PreferenceLine {
            field,
            line,
            path: path.as_bytes().to_vec(),
            entries: entries
                .iter()
                .map(|(k, v)| Entry { key: k.as_bytes().to_vec(), value: v.as_bytes().to_vec() })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(field: PreferenceField, n: u32, path: &str, entries: &[(&str, &str)]) -> PreferenceLine {
        PreferenceLine::of(field, n, path, entries)
    }

    #[test]
    fn meanings_follow_each_vocabulary() {
        use PreferenceField::*;
        assert_eq!(meaning(ContentSignal, b"ai-train", b"no"), Meaning::No);
        assert_eq!(meaning(ContentSignal, b"search", b"yes"), Meaning::Yes);
        assert_eq!(meaning(ContentSignal, b"search", b"y"), Meaning::Unknown);
        assert_eq!(meaning(ContentUsage, b"train-ai", b"n"), Meaning::No);
        assert_eq!(meaning(ContentUsage, b"train-ai", b"no"), Meaning::Unknown);
        assert_eq!(meaning(ContentUsage, b"ai-train", b"n"), Meaning::Unknown);
        assert_eq!(meaning(ContentUsage, b"Train-AI", b"n"), Meaning::Unknown);
    }

    #[test]
    fn longest_path_wins_per_field() {
        use PreferenceField::*;
        let lines = [
            line(ContentUsage, 3, "/", &[("train-ai", "n")]),
            line(ContentUsage, 4, "/docs/", &[("train-ai", "y")]),
            line(ContentSignal, 5, "/", &[("ai-train", "no")]),
        ];
        let at = |path: &str| applicable(&lines, path.as_bytes());
        let docs = at("/docs/a");
        assert_eq!(docs[0].0, ContentSignal);
        assert_eq!(docs[1], (ContentUsage, Applied { lines: vec![4], entries: lines[1].entries.clone() }));
        assert_eq!(at("/x")[1].1.lines, vec![3]);
        assert!(applicable(&lines[..2], b"").is_empty(), "no path matches `/` only when it starts with it");
    }

    #[test]
    fn ties_combine_most_restrictive_first() {
        use PreferenceField::*;
        let lines = [
            line(ContentUsage, 1, "/", &[("train-ai", "y"), ("search", "y"), ("x-ext", "1")]),
            line(ContentUsage, 2, "/", &[("train-ai", "n"), ("ai-use", "y"), ("x-ext", "2")]),
        ];
        let got = applicable(&lines, b"/a");
        assert_eq!(got[0].1.lines, vec![1, 2]);
        assert_eq!(format_entries(&got[0].1.entries), "train-ai=n, search=y, x-ext=1, ai-use=y");
    }
}
