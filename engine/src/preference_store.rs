//! The PREFERENCES section of an artifact: the `Content-Signal` and
//! `Content-Usage` lines that apply to each origin and crawler, and whether
//! a group of the origin's robots.txt names the crawler (rather than the
//! crawler falling back to `*`), encoded and decoded side by side.
//!
//! The section is optional: an artifact whose robots.txt files carry no
//! preference line and name none of its crawlers has none, and is byte for
//! byte what it was before the section existed. It is self-contained (its offsets are relative to its
//! own start, nothing in it points into other sections, nothing else points
//! into it), so that it can move with the rest of the format.
//!
//! The lines of a group are stored once per distinct list ("set"), as
//! compiled groups are: origins whose crawler groups have the same
//! preference lines share one set. Without `--explain`, line numbers are
//! stored as 0 so that more origins share.
//!
//! ```text
//! header    sets u32, lines u32, origins u32, agents u32, text length u64
//! SET_OF    u32 per origin and agent (origin-major): bits 0-30 its set + 1
//!           (0: no preference lines), bit 31 set when a group names the agent
//! SET_ENDS  u32 per set: the end of its lines in LINES (increasing)
//! LINES     one record per line, 6 x u32: field (0 Content-Signal,
//!           1 Content-Usage), line number, path offset, path length,
//!           entries offset, entries length (offsets into TEXT)
//! TEXT      bytes: paths, and entries as `key NUL value NUL` pairs
//! ```
//!
//! All integers are in the artifact's (native) byte order.

use crate::preference::{Entry, PreferenceField, PreferenceLine};

/// The `SET_OF` bit of an origin whose robots.txt names the crawler.
const NAMED: u32 = 1 << 31;
const HEADER_LEN: usize = 24;
const LINE_RECORD_LEN: usize = 24;

/// What the section says of one origin and crawler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Selection {
    /// The set of its preference lines, if it has any.
    pub set: Option<u32>,
    /// Whether a group of the origin's robots.txt names the crawler (its
    /// rules are then its own, not those of `*`).
    pub named: bool,
}

/// Encodes the section: `selections[origin * agents + agent]`, whose sets
/// index `sets`.
///
/// # Panics
///
/// When `selections` does not hold `origins * agents` entries, names a set
/// that does not exist, or there are 2^31 sets or 4 GiB of text.
pub fn encode(selections: &[Selection], origins: usize, agents: usize, sets: &[&[PreferenceLine]]) -> Vec<u8> {
    assert_eq!(selections.len(), origins * agents, "one entry per origin and agent");
    assert!(sets.len() < NAMED as usize - 1, "too many preference sets");
    assert!(selections.iter().all(|s| s.set.is_none_or(|s| (s as usize) < sets.len())), "an entry names no set");
    let set_of: Vec<u32> =
        selections.iter().map(|s| s.set.map_or(0, |s| s + 1) | if s.named { NAMED } else { 0 }).collect();
    let mut text = Vec::new();
    let mut records = Vec::new();
    let mut set_ends = Vec::with_capacity(sets.len());
    let offset = |text: &Vec<u8>| u32::try_from(text.len()).expect("preference text within 4 GiB");
    let mut lines = 0u32;
    for set in sets {
        for line in *set {
            let path_off = offset(&text);
            text.extend_from_slice(&line.path);
            let entries_off = offset(&text);
            for entry in &line.entries {
                for part in [&entry.key, &entry.value] {
                    text.extend_from_slice(part);
                    text.push(0);
                }
            }
            let end = offset(&text);
            for v in [
                u32::from(line.field.code()),
                line.line,
                path_off,
                entries_off - path_off,
                entries_off,
                end - entries_off,
            ] {
                records.extend_from_slice(&v.to_ne_bytes());
            }
            lines += 1;
        }
        set_ends.push(lines);
    }
    let mut out = Vec::with_capacity(HEADER_LEN + set_of.len() * 4 + set_ends.len() * 4 + records.len() + text.len());
    for v in [sets.len() as u32, lines, origins as u32, agents as u32] {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    out.extend_from_slice(&(text.len() as u64).to_ne_bytes());
    for v in set_of.iter().chain(&set_ends) {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    out.extend_from_slice(&records);
    out.extend_from_slice(&text);
    out
}

/// A validated view of the section.
#[derive(Clone, Copy, Debug)]
pub struct PreferenceTable<'a> {
    agents: usize,
    set_of: &'a [u8],
    set_ends: &'a [u8],
    records: &'a [u8],
    text: &'a [u8],
}

fn ne32(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

impl<'a> PreferenceTable<'a> {
    /// The section's tables, with only its header and sizes checked (a
    /// constant-time view; see [`PreferenceTable::parse`]).
    pub fn layout(bytes: &'a [u8], origins: usize, agents: usize) -> Result<PreferenceTable<'a>, String> {
        if bytes.len() < HEADER_LEN {
            return Err("preferences: shorter than its header".into());
        }
        let (sets, lines) = (ne32(bytes, 0) as usize, ne32(bytes, 4) as usize);
        if (ne32(bytes, 8) as usize, ne32(bytes, 12) as usize) != (origins, agents) {
            return Err(format!("preferences: written for other counts than {origins} origins and {agents} agents"));
        }
        let text_len = u64::from_ne_bytes(bytes[16..24].try_into().expect("eight bytes"));
        let sizes = [
            origins.checked_mul(agents).and_then(|n| n.checked_mul(4)),
            sets.checked_mul(4),
            lines.checked_mul(LINE_RECORD_LEN),
        ];
        let mut at = HEADER_LEN;
        let mut parts = [&bytes[..0]; 3];
        for (part, size) in parts.iter_mut().zip(sizes) {
            let end = size
                .and_then(|s| at.checked_add(s))
                .filter(|&e| e <= bytes.len())
                .ok_or("preferences: tables do not fit")?;
            *part = &bytes[at..end];
            at = end;
        }
        if bytes.len() - at != usize::try_from(text_len).map_err(|_| "preferences: text too long")? {
            return Err("preferences: text length does not match the section".into());
        }
        Ok(PreferenceTable { agents, set_of: parts[0], set_ends: parts[1], records: parts[2], text: &bytes[at..] })
    }

    /// Reads and checks the section of an artifact of `origins` origins and
    /// `agents` crawlers: every count, offset and field, so that lookups
    /// afterwards cannot fail. The message says what is wrong. (Opening an
    /// artifact does this once; [`PreferenceTable::layout`] is the cheap
    /// view of a section checked before.)
    pub fn parse(bytes: &'a [u8], origins: usize, agents: usize) -> Result<PreferenceTable<'a>, String> {
        let table = PreferenceTable::layout(bytes, origins, agents)?;
        let (sets, lines) = (table.set_ends.len() / 4, table.records.len() / LINE_RECORD_LEN);
        let mut prev = 0;
        for s in 0..sets {
            let end = ne32(table.set_ends, s * 4) as usize;
            if end < prev || end > lines {
                return Err("preferences: set ends are not increasing within the lines".into());
            }
            prev = end;
        }
        if prev != lines {
            return Err("preferences: lines belong to no set".into());
        }
        for o in 0..origins * agents {
            let s = ne32(table.set_of, o * 4) & !NAMED;
            if s as usize > sets {
                return Err(format!("preferences: an origin names set {} of {sets}", s - 1));
            }
        }
        for l in 0..lines {
            let r = |i: usize| ne32(table.records, l * LINE_RECORD_LEN + i * 4) as usize;
            if PreferenceField::from_code(r(0) as u8).is_none() || r(0) > 255 {
                return Err(format!("preferences: line record {l} has unknown field {}", r(0)));
            }
            for (off, len) in [(r(2), r(3)), (r(4), r(5))] {
                if off.checked_add(len).is_none_or(|end| end > table.text.len()) {
                    return Err(format!("preferences: line record {l} points past the text"));
                }
            }
            let entries = &table.text[r(4)..r(4) + r(5)];
            if entries.last().is_some_and(|&b| b != 0) || entries.iter().filter(|&&b| b == 0).count() % 2 != 0 {
                return Err(format!("preferences: line record {l} has broken entries"));
            }
        }
        Ok(table)
    }

    /// What the section says of an origin and crawler.
    pub fn selection(&self, origin: usize, agent: usize) -> Selection {
        let s = ne32(self.set_of, (origin * self.agents + agent) * 4);
        Selection { set: (s & !NAMED).checked_sub(1), named: s & NAMED != 0 }
    }

    /// The set of an origin and crawler, if it has preference lines.
    pub fn set_of(&self, origin: usize, agent: usize) -> Option<u32> {
        self.selection(origin, agent).set
    }

    /// Number of distinct sets.
    pub fn sets(&self) -> usize {
        self.set_ends.len() / 4
    }

    /// The lines of set `set`, decoded.
    ///
    /// # Panics
    ///
    /// When `set` is not below [`PreferenceTable::sets`].
    pub fn lines(&self, set: u32) -> Vec<PreferenceLine> {
        let s = set as usize;
        let start = if s == 0 { 0 } else { ne32(self.set_ends, (s - 1) * 4) as usize };
        let end = ne32(self.set_ends, s * 4) as usize;
        (start..end)
            .map(|l| {
                let r = |i: usize| ne32(self.records, l * LINE_RECORD_LEN + i * 4);
                let field = PreferenceField::from_code(r(0) as u8).expect("checked when opened");
                let path = self.text[r(2) as usize..(r(2) + r(3)) as usize].to_vec();
                let raw = &self.text[r(4) as usize..(r(4) + r(5)) as usize];
                let mut parts = raw.split(|&b| b == 0);
                let mut entries = Vec::new();
                while let (Some(key), Some(value)) = (parts.next(), parts.next()) {
                    entries.push(Entry { key: key.to_vec(), value: value.to_vec() });
                }
                PreferenceLine { field, line: r(1), path, entries }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(field: PreferenceField, n: u32, path: &str, entries: &[(&str, &str)]) -> PreferenceLine {
        PreferenceLine::of(field, n, path, entries)
    }

    #[test]
    fn round_trip() {
        let a = vec![line(PreferenceField::ContentSignal, 2, "/", &[("ai-train", "no"), ("search", "")])];
        let b = vec![
            line(PreferenceField::ContentUsage, 3, "/", &[("train-ai", "n")]),
            line(PreferenceField::ContentUsage, 4, "/docs/", &[]),
        ];
        let sel = |set, named| Selection { set, named };
        let selections = [
            sel(Some(0), false),
            sel(None, true),
            sel(Some(1), true),
            sel(Some(0), false),
            sel(None, false),
            sel(None, false),
        ];
        let bytes = encode(&selections, 3, 2, &[&a, &b]);
        let table = PreferenceTable::parse(&bytes, 3, 2).unwrap();
        assert_eq!(table.sets(), 2);
        for (i, s) in selections.iter().enumerate() {
            assert_eq!(table.selection(i / 2, i % 2), *s);
        }
        assert_eq!(table.lines(0), a);
        assert_eq!(table.lines(1), b);
    }

    #[test]
    fn damage_is_refused() {
        let a = vec![line(PreferenceField::ContentUsage, 3, "/x", &[("train-ai", "n")])];
        let bytes = encode(&[Selection { set: Some(0), named: false }], 1, 1, &[&a]);
        assert!(PreferenceTable::parse(&bytes, 2, 1).is_err(), "other counts");
        assert!(PreferenceTable::parse(&bytes[..bytes.len() - 1], 1, 1).is_err(), "truncated");
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xff;
            // Damage is either refused or decodes within bounds.
            if let Ok(table) = PreferenceTable::parse(&damaged, 1, 1) {
                for s in 0..table.sets() as u32 {
                    let _ = table.lines(s);
                }
            }
        }
    }
}
