//! Reading the value of a `Content-Signal` or `Content-Usage` line.
//!
//! The value is an optional path, white space, then a Structured Fields
//! dictionary (RFC 9651, section 3.2) of `key=value` members separated by
//! commas: `/docs/ train-ai=y, search=y` (draft-ietf-aipref-attach, section
//! 3) or Cloudflare's `ai-train=no, search=yes, ai-input=yes`. A path is
//! there when the value starts with `/` or `*`; without one the line applies
//! to `/`, the whole site.
//!
//! The reading is lenient and reports what a strict reader would refuse:
//! every member that has a key is kept (its parameters after `;` dropped, a
//! repeated key keeping its last value), and each departure from the syntax
//! or the field's vocabulary is a [`Problem`] for `lint`. A strict
//! Structured Fields parser would drop the whole line on a syntax error.
//! What the values mean is [`robotsieve_core::preference::meaning`].

use robotsieve_core::pattern;
use robotsieve_core::preference::{meaning, Entry, Meaning, PreferenceField, PreferenceLine};

/// What is wrong with a preference line, for `lint`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The line has no `key=value` at all (`Content-Usage: /docs/`).
    NoPreferences,
    /// The first word looks like a path but does not start with `/` (it then matches nothing).
    PathNotSlash(Vec<u8>),
    /// An empty member: two commas in a row, or a comma at an end.
    EmptyMember,
    /// A key that is not a Structured Fields key (lower case letters, digits, `_-.*`; upper case included).
    BadKey(Vec<u8>),
    /// White space around `=`, which Structured Fields do not allow.
    SpaceAroundEquals(Vec<u8>),
    /// A value that is not a Structured Fields item (token, string, number, boolean, bytes).
    BadValue {
        /// The key.
        key: Vec<u8>,
        /// The value as written.
        value: Vec<u8>,
    },
    /// A key of the field's vocabulary with a value the vocabulary does not
    /// define (`train-ai=yes` where `y` is meant): it means nothing.
    NotYesNo {
        /// The key.
        key: Vec<u8>,
        /// The value as written.
        value: Vec<u8>,
    },
    /// A key the field's vocabulary does not define (kept; ignored by readers of the vocabulary).
    UnknownKey(Vec<u8>),
    /// A key given twice on one line: the last value counts.
    RepeatedKey(Vec<u8>),
}

impl Problem {
    /// Whether the problem makes the line (or a member) malformed, rather
    /// than merely outside the known vocabulary.
    pub fn is_malformed(&self) -> bool {
        !matches!(self, Problem::UnknownKey(_) | Problem::RepeatedKey(_))
    }
}

/// Reads the value of a preference line (already trimmed, comment removed).
pub fn read(field: PreferenceField, line: u32, value: &[u8]) -> (PreferenceLine, Vec<Problem>) {
    let mut problems = Vec::new();
    let first_end = value.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(value.len());
    let first = &value[..first_end];
    let (path, dictionary): (&[u8], &[u8]) = if value.starts_with(b"/") || value.starts_with(b"*") {
        (first, trim(&value[first_end..]))
    } else if first_end < value.len() && first.contains(&b'/') && !first.contains(&b'=') {
        problems.push(Problem::PathNotSlash(first.to_vec()));
        (first, trim(&value[first_end..]))
    } else {
        (b"/", value)
    };
    let mut entries: Vec<Entry> = Vec::new();
    if !dictionary.is_empty() {
        for member in dictionary.split(|&b| b == b',') {
            let member = trim(member);
            if member.is_empty() {
                problems.push(Problem::EmptyMember);
                continue;
            }
            let item = member.split(|&b| b == b';').next().unwrap_or_default();
            let (raw_key, raw_value) = match item.iter().position(|&b| b == b'=') {
                Some(eq) => (&item[..eq], Some(&item[eq + 1..])),
                None => (item, None),
            };
            let (key, value) = (trim(raw_key), raw_value.map(trim).unwrap_or_default());
            if raw_value.is_some() && (key.len() != raw_key.len() || Some(value.len()) != raw_value.map(<[u8]>::len)) {
                problems.push(Problem::SpaceAroundEquals(key.to_vec()));
            }
            if !is_key(key) {
                problems.push(Problem::BadKey(key.to_vec()));
            }
            if raw_value.is_some() && !is_item(value) {
                problems.push(Problem::BadValue { key: key.to_vec(), value: value.to_vec() });
            } else if field.known_keys().iter().any(|k| k.as_bytes() == key) {
                if meaning(field, key, value) == Meaning::Unknown {
                    problems.push(Problem::NotYesNo { key: key.to_vec(), value: value.to_vec() });
                }
            } else if is_key(key) {
                problems.push(Problem::UnknownKey(key.to_vec()));
            }
            let entry = Entry { key: key.to_vec(), value: value.to_vec() };
            if let Some(i) = entries.iter().position(|e| e.key == entry.key) {
                problems.push(Problem::RepeatedKey(entry.key.clone()));
                entries.remove(i);
            }
            entries.push(entry);
        }
    }
    if entries.is_empty() && !problems.contains(&Problem::EmptyMember) {
        problems.push(Problem::NoPreferences);
    }
    let path = pattern::escape(path).into_owned();
    (PreferenceLine { field, line, path, entries }, problems)
}

/// RFC 9651 `key`: `( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`.
fn is_key(key: &[u8]) -> bool {
    let Some((&first, rest)) = key.split_first() else { return false };
    (first.is_ascii_lowercase() || first == b'*')
        && rest.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.*".contains(&b))
}

/// Whether a value is an RFC 9651 bare item: token, string, integer or
/// decimal, boolean, or byte sequence.
fn is_item(value: &[u8]) -> bool {
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&b);
    match value {
        [] => false,
        [b'?', b'0' | b'1'] => true,
        [b'"', inner @ .., b'"'] => {
            inner.iter().all(|&b| (0x20..0x7f).contains(&b))
                && !inner.windows(2).any(|w| w[0] == b'\\' && !b"\"\\".contains(&w[1]))
        }
        [b':', inner @ .., b':'] => inner.iter().all(|&b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
        [first, ..] if first.is_ascii_alphabetic() || *first == b'*' => value.iter().all(|&b| tchar(b)),
        _ => {
            let digits = value.strip_prefix(b"-").unwrap_or(value);
            !digits.is_empty()
                && digits[0].is_ascii_digit()
                && digits.iter().all(|&b| b.is_ascii_digit() || b == b'.')
                && digits.iter().filter(|&&b| b == b'.').count() <= 1
        }
    }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_core::preference::format_entries;
    use PreferenceField::*;

    fn parsed(field: PreferenceField, value: &str) -> (String, String, Vec<Problem>) {
        let (line, problems) = read(field, 1, value.as_bytes());
        (String::from_utf8(line.path).unwrap(), format_entries(&line.entries), problems)
    }

    #[test]
    fn cloudflare_example() {
        assert_eq!(
            parsed(ContentSignal, "ai-train=no, search=yes, ai-input=yes"),
            ("/".into(), "ai-train=no, search=yes, ai-input=yes".into(), vec![])
        );
    }

    #[test]
    fn aipref_examples_with_and_without_paths() {
        assert_eq!(parsed(ContentUsage, "train-ai=n"), ("/".into(), "train-ai=n".into(), vec![]));
        assert_eq!(parsed(ContentUsage, "/docs/ train-ai=y"), ("/docs/".into(), "train-ai=y".into(), vec![]));
        assert_eq!(
            parsed(ContentUsage, "/ai-ok/\ttrain-ai=y, search=n"),
            ("/ai-ok/".into(), "train-ai=y, search=n".into(), vec![])
        );
        assert_eq!(parsed(ContentUsage, "/ä/ train-ai=n").0, "/%C3%A4/");
    }

    #[test]
    fn vocabularies_do_not_mix() {
        let (_, _, problems) = parsed(ContentUsage, "train-ai=no, ai-train=n");
        assert_eq!(
            problems,
            vec![
                Problem::NotYesNo { key: b"train-ai".to_vec(), value: b"no".to_vec() },
                Problem::UnknownKey(b"ai-train".to_vec())
            ]
        );
        let (_, _, problems) = parsed(ContentSignal, "search=y");
        assert_eq!(problems, vec![Problem::NotYesNo { key: b"search".to_vec(), value: b"y".to_vec() }]);
    }

    #[test]
    fn malformed_lines() {
        let problems = |v: &str| parsed(ContentUsage, v).2;
        assert_eq!(problems("/docs/"), vec![Problem::NoPreferences]);
        assert_eq!(problems(""), vec![Problem::NoPreferences]);
        assert_eq!(problems("train-ai=n,,search=y"), vec![Problem::EmptyMember]);
        assert_eq!(problems("Train-AI=n"), vec![Problem::BadKey(b"Train-AI".to_vec())]);
        assert_eq!(problems("train-ai = n"), vec![Problem::SpaceAroundEquals(b"train-ai".to_vec())]);
        assert_eq!(
            problems("train-ai=(n)"),
            vec![Problem::BadValue { key: b"train-ai".to_vec(), value: b"(n)".to_vec() }]
        );
        assert_eq!(problems("docs/ train-ai=n"), vec![Problem::PathNotSlash(b"docs/".to_vec())]);
        // What a malformed line still says is kept.
        assert_eq!(parsed(ContentUsage, "train-ai = n").1, "train-ai=n");
    }

    #[test]
    fn parameters_repeats_and_unknown_keys_are_kept_or_reported() {
        let (_, entries, problems) = parsed(ContentUsage, "train-ai;x=1, train-ai=y, foo=\"bar\", search");
        assert_eq!(entries, "train-ai=y, foo=\"bar\", search");
        assert_eq!(
            problems,
            vec![
                Problem::NotYesNo { key: b"train-ai".to_vec(), value: b"".to_vec() },
                Problem::RepeatedKey(b"train-ai".to_vec()),
                Problem::UnknownKey(b"foo".to_vec()),
                Problem::NotYesNo { key: b"search".to_vec(), value: b"".to_vec() },
            ]
        );
        assert!(!Problem::UnknownKey(vec![]).is_malformed() && !Problem::RepeatedKey(vec![]).is_malformed());
    }
}
