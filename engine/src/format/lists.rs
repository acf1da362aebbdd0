//! The list sections, PREFERENCES and CRAWL: the shape they share, and
//! each one's encoder and decoder.
//!
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

use super::{ne32, ne64, put32, put64, Damage, EncodeError, Fault, ListProblem, Section};
use robotsieve_core::preference::{Entry, PreferenceField, PreferenceLine};

/// The shape the two optional list sections share (PREFERENCES, CRAWL),
/// defined once for their encoders and decoders:
///
/// ```text
/// header   the section's own (PreferenceHeader, CrawlHeader)
/// OF       u32 words per origin, each naming a list + 1 (0: none)
/// ENDS     u32 per list: the end of its records in RECORDS (increasing)
/// RECORDS  fixed-size records, each list's one after the other
/// TEXT     the bytes the records point at
/// ```
///
/// Each distinct list is stored once; the writer appends a list's records
/// and text as it comes and its end with [`ListSection::encode_end`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ListSection {
    /// Which section (messages name it by [`Section::name`]).
    pub section: Section,
    /// How messages name a list and a record ("set" and "lines", "list" and "items").
    pub terms: (&'static str, &'static str),
    /// Size of the section's header.
    pub header_len: usize,
    /// Size of one record.
    pub record_len: usize,
    /// OF words per origin, per agent (`of_words = origins * (fixed + agents)`).
    pub fixed_words: usize,
    /// Lists the section may hold (an OF word stores list + 1, and
    /// PREFERENCES keeps its top bit for [`Selection::named`]).
    pub max_lists: u32,
}

/// What a list section's header counts, whatever its order.
#[derive(Clone, Copy, Debug)]
struct ListCounts {
    origins: u32,
    agents: u32,
    lists: u32,
    records: u32,
    text_len: u64,
}

/// The tables of a list section ([`ListSection`]), in the section's bytes.
#[derive(Clone, Copy, Debug)]
struct ListTables<'a> {
    of: &'a [u8],
    ends: &'a [u8],
    records: &'a [u8],
    text: &'a [u8],
}

/// The PREFERENCES section's shape: a SET_OF word per origin and agent.
pub(crate) const PREFERENCE_LISTS: ListSection = ListSection {
    section: Section::Preferences,
    terms: ("set", "lines"),
    header_len: PREFERENCE_HEADER_LEN,
    record_len: LINE_RECORD_LEN,
    fixed_words: 0,
    max_lists: NAMED - 2,
};

/// The CRAWL section's shape: per origin a sitemap word, then a
/// crawl-delay word per agent.
pub(crate) const CRAWL_LISTS: ListSection = ListSection {
    section: Section::Crawl,
    terms: ("list", "items"),
    header_len: CRAWL_HEADER_LEN,
    record_len: CRAWL_ITEM_LEN,
    fixed_words: 1,
    max_lists: u32::MAX - 1,
};

impl ListSection {
    /// The shape of a list section ([`PREFERENCE_LISTS`] for
    /// [`Section::Preferences`], else [`CRAWL_LISTS`]).
    pub fn of(section: Section) -> &'static ListSection {
        if section == Section::Preferences {
            &PREFERENCE_LISTS
        } else {
            &CRAWL_LISTS
        }
    }

    /// The damage `problem` in this section.
    fn damage(&self, problem: ListProblem) -> Damage {
        Fault::List { section: self.section, problem }.into()
    }

    /// Both sections' headers are four u32 counts and the length of TEXT
    /// (24 bytes), in an order of their own; this encodes them in the order given.
    fn encode_header(counts: [u32; 4], text_len: u64) -> [u8; 24] {
        let mut b = [0u8; 24];
        for (i, count) in counts.into_iter().enumerate() {
            put32(&mut b, i * 4, count);
        }
        put64(&mut b, 16, text_len);
        b
    }

    /// Reads back what [`ListSection::encode_header`] wrote (from at least 24 bytes).
    fn decode_header(b: &[u8]) -> ([u32; 4], u64) {
        ([ne32(b, 0), ne32(b, 4), ne32(b, 8), ne32(b, 12)], ne64(b, 16))
    }

    /// Appends the ENDS word of a list whose records end at `end`.
    pub fn encode_end(end: u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&end.to_ne_bytes());
    }

    /// Appends an OF word.
    pub fn encode_word(word: u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&word.to_ne_bytes());
    }

    /// The section's tables: its header's counts checked against the
    /// artifact's and the tables' sizes against the section's (constant
    /// time). `counts` reads the header's.
    fn layout<'a>(
        &self,
        bytes: &'a [u8],
        origins: usize,
        agents: usize,
        counts: fn(&[u8]) -> ListCounts,
    ) -> Result<ListTables<'a>, Damage> {
        if bytes.len() < self.header_len {
            return Err(self.damage(ListProblem::ShorterThanHeader));
        }
        let ListCounts { origins: stored_origins, agents: stored_agents, lists, records, text_len } = counts(bytes);
        if (stored_origins as usize, stored_agents as usize) != (origins, agents) {
            return Err(self.damage(ListProblem::OtherCounts { origins, agents }));
        }
        let [of, ends, records, text] = self.split(bytes, origins, agents, lists, records, text_len)?;
        Ok(ListTables { of, ends, records, text })
    }

    /// A whole section in memory: the header, then the tables.
    #[cfg(test)]
    fn concat(header: &[u8], tables: [&[u8]; 4]) -> Vec<u8> {
        let mut out = header.to_vec();
        for table in tables {
            out.extend_from_slice(table);
        }
        out
    }

    /// The section's four tables (OF, ENDS, RECORDS, TEXT) after its
    /// header, checked only for size (constant time).
    fn split<'a>(
        &self,
        bytes: &'a [u8],
        origins: usize,
        agents: usize,
        lists: u32,
        records: u32,
        text_len: u64,
    ) -> Result<[&'a [u8]; 4], Damage> {
        let sizes = [
            origins.checked_mul(agents + self.fixed_words).and_then(|n| n.checked_mul(4)),
            (lists as usize).checked_mul(4),
            (records as usize).checked_mul(self.record_len),
        ];
        let mut at = self.header_len;
        let mut parts = [&bytes[..0]; 4];
        for (part, size) in parts.iter_mut().zip(sizes) {
            let end = size
                .and_then(|s| at.checked_add(s))
                .filter(|&e| e <= bytes.len())
                .ok_or(self.damage(ListProblem::TablesDoNotFit))?;
            *part = &bytes[at..end];
            at = end;
        }
        if (bytes.len() - at) as u64 != text_len {
            return Err(self.damage(ListProblem::TextLength));
        }
        parts[3] = &bytes[at..];
        Ok(parts)
    }

    /// Checks ENDS against RECORDS, and that no OF word names a list past
    /// ENDS (`mask` clears the bits of an OF word that are no list).
    fn check_lists(&self, tables: &ListTables<'_>, mask: u32) -> Result<(), Damage> {
        let ListTables { of, ends, records, .. } = *tables;
        let (lists, count) = (ends.len() / 4, records.len() / self.record_len);
        let mut prev = 0;
        for l in 0..lists {
            let end = ne32(ends, l * 4) as usize;
            if end < prev || end > count {
                return Err(self.damage(ListProblem::EndsNotIncreasing { list: l }));
            }
            prev = end;
        }
        if prev != count {
            return Err(self.damage(ListProblem::RecordsInNoList));
        }
        for i in 0..of.len() / 4 {
            let word = ne32(of, i * 4) & mask;
            if word as usize > lists {
                return Err(self.damage(ListProblem::UnknownList { list: word - 1, lists }));
            }
        }
        Ok(())
    }

    /// The records of list `l` (below the number of lists in `ends`).
    fn records(ends: &[u8], l: usize) -> std::ops::Range<usize> {
        let start = if l == 0 { 0 } else { ne32(ends, (l - 1) * 4) as usize };
        start..ne32(ends, l * 4) as usize
    }
}

/// The `SET_OF` bit of an origin whose robots.txt names the crawler.
const NAMED: u32 = 1 << 31;
const PREFERENCE_HEADER_LEN: usize = 24;
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

impl Selection {
    /// The stored `SET_OF` word: bits 0-30 the set + 1 (0: none), bit 31 named.
    pub fn pack(self) -> u32 {
        self.set.map_or(0, |s| s + 1) | if self.named { NAMED } else { 0 }
    }

    /// Reads a `SET_OF` word back.
    pub fn unpack(v: u32) -> Selection {
        Selection { set: (v & !NAMED).checked_sub(1), named: v & NAMED != 0 }
    }
}

/// The header of the PREFERENCES section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PreferenceHeader {
    /// Number of distinct sets.
    pub sets: u32,
    /// Number of line records over all sets.
    pub lines: u32,
    /// Number of origins (as in ORIGINS).
    pub origins: u32,
    /// Number of agents (as in META).
    pub agents: u32,
    /// Length of TEXT.
    pub text_len: u64,
}

impl PreferenceHeader {
    /// Encoded size.
    pub const LEN: usize = PREFERENCE_HEADER_LEN;

    /// Encodes the header.
    pub fn encode(&self) -> [u8; PreferenceHeader::LEN] {
        ListSection::encode_header([self.sets, self.lines, self.origins, self.agents], self.text_len)
    }

    /// Decodes a header of at least [`PreferenceHeader::LEN`] bytes.
    pub fn decode(b: &[u8]) -> PreferenceHeader {
        let ([sets, lines, origins, agents], text_len) = ListSection::decode_header(b);
        PreferenceHeader { sets, lines, origins, agents, text_len }
    }
}

/// Appends the LINES records of one set to `records` and its text to
/// `text`; `text_at` is where `text` starts in TEXT (offsets in records are
/// from TEXT's start). Fails when TEXT would pass 4 GiB.
pub(crate) fn encode_preference_set(
    set: &[PreferenceLine],
    text_at: u64,
    records: &mut Vec<u8>,
    text: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let offset =
        |text: &Vec<u8>| u32::try_from(text_at + text.len() as u64).map_err(|_| EncodeError::PreferenceTextTooLarge);
    for line in set {
        let path_off = offset(text)?;
        text.extend_from_slice(&line.path);
        let entries_off = offset(text)?;
        for entry in &line.entries {
            for part in [&entry.key, &entry.value] {
                text.extend_from_slice(part);
                text.push(0);
            }
        }
        let end = offset(text)?;
        for v in
            [u32::from(line.field.code()), line.line, path_off, entries_off - path_off, entries_off, end - entries_off]
        {
            records.extend_from_slice(&v.to_ne_bytes());
        }
    }
    Ok(())
}

/// Encodes a whole section in memory, for the tests: `selections[origin * agents + agent]`,
/// whose sets index `sets` (the streaming writer writes the same bytes from
/// [`PreferenceHeader`], [`Selection::pack`] and [`encode_preference_set`]).
///
/// # Panics
///
/// When `selections` does not hold `origins * agents` entries, names a set
/// that does not exist, or there are 2^31 sets or 4 GiB of text.
#[cfg(test)]
pub(crate) fn encode_preferences(
    selections: &[Selection],
    origins: usize,
    agents: usize,
    sets: &[&[PreferenceLine]],
) -> Vec<u8> {
    assert_eq!(selections.len(), origins * agents, "one entry per origin and agent");
    assert!(sets.len() <= PREFERENCE_LISTS.max_lists as usize, "too many preference sets");
    assert!(selections.iter().all(|s| s.set.is_none_or(|s| (s as usize) < sets.len())), "an entry names no set");
    let (mut records, mut text) = (Vec::new(), Vec::new());
    let mut set_ends = Vec::with_capacity(sets.len() * 4);
    for set in sets {
        encode_preference_set(set, 0, &mut records, &mut text).expect("preference text within 4 GiB");
        ListSection::encode_end((records.len() / LINE_RECORD_LEN) as u32, &mut set_ends);
    }
    let header = PreferenceHeader {
        sets: sets.len() as u32,
        lines: (records.len() / LINE_RECORD_LEN) as u32,
        origins: origins as u32,
        agents: agents as u32,
        text_len: text.len() as u64,
    };
    let mut set_of = Vec::with_capacity(selections.len() * 4);
    for s in selections {
        ListSection::encode_word(s.pack(), &mut set_of);
    }
    ListSection::concat(&header.encode(), [&set_of, &set_ends, &records, &text])
}

/// A validated view of the section.
#[derive(Clone, Copy, Debug)]
pub struct PreferenceTable<'a> {
    agents: usize,
    /// SET_OF, SET_ENDS, LINES, TEXT.
    tables: ListTables<'a>,
}

impl<'a> PreferenceTable<'a> {
    /// The section's tables, with only its header and sizes checked (a
    /// constant-time view; see [`PreferenceTable::parse`]).
    pub fn layout(bytes: &'a [u8], origins: usize, agents: usize) -> Result<PreferenceTable<'a>, Damage> {
        let counts = |b: &[u8]| {
            let h = PreferenceHeader::decode(b);
            ListCounts { origins: h.origins, agents: h.agents, lists: h.sets, records: h.lines, text_len: h.text_len }
        };
        Ok(PreferenceTable { agents, tables: PREFERENCE_LISTS.layout(bytes, origins, agents, counts)? })
    }

    /// Reads and checks the section of an artifact of `origins` origins and
    /// `agents` crawlers: every count, offset and field, so that lookups
    /// afterwards cannot fail. The message says what is wrong. (Opening an
    /// artifact does this once; [`PreferenceTable::layout`] is the cheap
    /// view of a section checked before.)
    pub fn parse(bytes: &'a [u8], origins: usize, agents: usize) -> Result<PreferenceTable<'a>, Damage> {
        let table = PreferenceTable::layout(bytes, origins, agents)?;
        PREFERENCE_LISTS.check_lists(&table.tables, !NAMED)?;
        for l in 0..table.tables.records.len() / LINE_RECORD_LEN {
            let r = |i: usize| ne32(table.tables.records, l * LINE_RECORD_LEN + i * 4) as usize;
            if PreferenceField::from_code(r(0) as u8).is_none() || r(0) > 255 {
                return Err(PREFERENCE_LISTS.damage(ListProblem::UnknownField { record: l, field: r(0) }));
            }
            for (off, len) in [(r(2), r(3)), (r(4), r(5))] {
                if off.checked_add(len).is_none_or(|end| end > table.tables.text.len()) {
                    return Err(PREFERENCE_LISTS.damage(ListProblem::RecordPastText { record: l }));
                }
            }
            let entries = &table.tables.text[r(4)..r(4) + r(5)];
            if entries.last().is_some_and(|&b| b != 0) || entries.iter().filter(|&&b| b == 0).count() % 2 != 0 {
                return Err(PREFERENCE_LISTS.damage(ListProblem::BrokenEntries { record: l }));
            }
        }
        Ok(table)
    }

    /// What the section says of an origin and crawler.
    pub fn selection(&self, origin: usize, agent: usize) -> Selection {
        Selection::unpack(ne32(self.tables.of, (origin * self.agents + agent) * 4))
    }

    /// The set of an origin and crawler, if it has preference lines.
    pub fn set_of(&self, origin: usize, agent: usize) -> Option<u32> {
        self.selection(origin, agent).set
    }

    /// Number of distinct sets.
    pub fn sets(&self) -> usize {
        self.tables.ends.len() / 4
    }

    /// The lines of set `set`, decoded.
    ///
    /// # Panics
    ///
    /// When `set` is not below [`PreferenceTable::sets`].
    pub fn lines(&self, set: u32) -> Vec<PreferenceLine> {
        ListSection::records(self.tables.ends, set as usize)
            .map(|l| {
                let r = |i: usize| ne32(self.tables.records, l * LINE_RECORD_LEN + i * 4);
                let field = PreferenceField::from_code(r(0) as u8).expect("checked when opened");
                let path = self.tables.text[r(2) as usize..(r(2) + r(3)) as usize].to_vec();
                let raw = &self.tables.text[r(4) as usize..(r(4) + r(5)) as usize];
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

// The CRAWL section of an artifact: each origin's `sitemap` URLs and each
// crawler's `crawl-delay`, kept for the crawl loop and never used for a
// verdict (Google ignores crawl-delay), encoded and decoded side by side.
//
// Optional, as PREFERENCES: an artifact whose robots.txt files have no
// sitemap and no crawl-delay for its crawlers has none. Self-contained
// (offsets relative to its own start). Values are stored as lists of
// strings, each distinct list once (origins of one robots.txt share their
// sitemap list; equal crawl-delays share one list of one string).
//
// ```text
// header   origins u32, agents u32, lists u32, items u32, text length u64
// OF       u32 per origin, 1 + agents each (origin-major): its sitemap
//          list + 1, then each crawler's crawl-delay list + 1 (0: none)
// ENDS     u32 per list: the end of its items in ITEMS (increasing)
// ITEMS    per string: offset u32, length u32 in TEXT
// TEXT     the strings' bytes
// ```

const CRAWL_HEADER_LEN: usize = 24;
const CRAWL_ITEM_LEN: usize = 8;

/// The header of the CRAWL section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CrawlHeader {
    /// Number of origins (as in ORIGINS).
    pub origins: u32,
    /// Number of agents (as in META).
    pub agents: u32,
    /// Number of distinct lists.
    pub lists: u32,
    /// Number of strings over all lists.
    pub items: u32,
    /// Length of TEXT.
    pub text_len: u64,
}

impl CrawlHeader {
    /// Encoded size.
    pub const LEN: usize = CRAWL_HEADER_LEN;

    /// Encodes the header.
    pub fn encode(&self) -> [u8; CrawlHeader::LEN] {
        ListSection::encode_header([self.origins, self.agents, self.lists, self.items], self.text_len)
    }

    /// Decodes a header of at least [`CrawlHeader::LEN`] bytes.
    pub fn decode(b: &[u8]) -> CrawlHeader {
        let ([origins, agents, lists, items], text_len) = ListSection::decode_header(b);
        CrawlHeader { origins, agents, lists, items, text_len }
    }
}

/// What the CRAWL section keeps of one origin: the ids of its sitemap list
/// and of each crawler's crawl-delay list (`encode_string_list` order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrawlRefs {
    /// The origin's sitemap list, if it has sitemaps.
    pub sitemaps: Option<u32>,
    /// Per crawler, its crawl-delay list (of one string), if its group has one.
    pub delays: Vec<Option<u32>>,
}

impl CrawlRefs {
    /// Appends the origin's OF words (1 + agents of them).
    pub fn encode(&self, out: &mut Vec<u8>) {
        for id in std::iter::once(&self.sitemaps).chain(&self.delays) {
            ListSection::encode_word(id.map_or(0, |l| l + 1), out);
        }
    }

    /// Whether the origin has anything to keep.
    pub fn is_empty(&self) -> bool {
        self.sitemaps.is_none() && self.delays.iter().all(Option::is_none)
    }
}

/// Appends the ITEMS of one list to `items` and its bytes to `text`;
/// `text_at` is where `text` starts in TEXT. Fails when TEXT would pass 4 GiB.
pub(crate) fn encode_string_list(
    list: &[&[u8]],
    text_at: u64,
    items: &mut Vec<u8>,
    text: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    for s in list {
        let off = u32::try_from(text_at + text.len() as u64)
            .ok()
            .filter(|&o| u64::from(o) + s.len() as u64 <= u64::from(u32::MAX))
            .ok_or(EncodeError::CrawlTextTooLarge)?;
        text.extend_from_slice(s);
        items.extend_from_slice(&off.to_ne_bytes());
        items.extend_from_slice(&(s.len() as u32).to_ne_bytes());
    }
    Ok(())
}

/// Encodes a whole CRAWL section in memory, for the tests (the streaming writer writes the
/// same bytes from [`CrawlHeader`], [`CrawlRefs::encode`] and
/// [`encode_string_list`]).
///
/// # Panics
///
/// When `refs` does not hold `origins` entries of `agents` crawlers each,
/// or names a list that does not exist.
#[cfg(test)]
pub(crate) fn encode_crawl(refs: &[CrawlRefs], agents: usize, lists: &[Vec<&[u8]>]) -> Vec<u8> {
    assert!(refs.iter().all(|r| r.delays.len() == agents), "one crawl-delay entry per agent");
    let exists = |id: &Option<u32>| id.is_none_or(|l| (l as usize) < lists.len());
    assert!(refs.iter().all(|r| exists(&r.sitemaps) && r.delays.iter().all(exists)), "an entry names no list");
    let (mut items, mut text, mut ends) = (Vec::new(), Vec::new(), Vec::new());
    for list in lists {
        encode_string_list(list, 0, &mut items, &mut text).expect("text within 4 GiB");
        ListSection::encode_end((items.len() / CRAWL_ITEM_LEN) as u32, &mut ends);
    }
    let header = CrawlHeader {
        origins: refs.len() as u32,
        agents: agents as u32,
        lists: lists.len() as u32,
        items: (items.len() / CRAWL_ITEM_LEN) as u32,
        text_len: text.len() as u64,
    };
    let mut of = Vec::new();
    for r in refs {
        r.encode(&mut of);
    }
    ListSection::concat(&header.encode(), [&of, &ends, &items, &text])
}

/// A checked view of the CRAWL section.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrawlTable<'a> {
    agents: usize,
    /// OF, ENDS, ITEMS, TEXT.
    tables: ListTables<'a>,
}

impl<'a> CrawlTable<'a> {
    /// The section's tables with only its header and sizes checked (a
    /// constant-time view of a section [`CrawlTable::parse`] accepted before).
    pub fn layout(bytes: &'a [u8], origins: usize, agents: usize) -> Result<CrawlTable<'a>, Damage> {
        let counts = |b: &[u8]| {
            let h = CrawlHeader::decode(b);
            ListCounts { origins: h.origins, agents: h.agents, lists: h.lists, records: h.items, text_len: h.text_len }
        };
        Ok(CrawlTable { agents, tables: CRAWL_LISTS.layout(bytes, origins, agents, counts)? })
    }

    /// Reads and checks the section of an artifact of `origins` origins and
    /// `agents` crawlers: every count, list id, end and offset, so that
    /// lookups afterwards cannot fail (opening does this once).
    pub fn parse(bytes: &'a [u8], origins: usize, agents: usize) -> Result<CrawlTable<'a>, Damage> {
        let table = CrawlTable::layout(bytes, origins, agents)?;
        CRAWL_LISTS.check_lists(&table.tables, u32::MAX)?;
        for i in 0..table.tables.records.len() / CRAWL_ITEM_LEN {
            let (off, len) =
                (ne32(table.tables.records, i * 8) as usize, ne32(table.tables.records, i * 8 + 4) as usize);
            if off.checked_add(len).is_none_or(|end| end > table.tables.text.len()) {
                return Err(CRAWL_LISTS.damage(ListProblem::RecordPastText { record: i }));
            }
        }
        Ok(table)
    }

    /// The strings of the list an OF word names (none for 0).
    fn list(&self, word: usize) -> Vec<&'a [u8]> {
        let Some(l) = (ne32(self.tables.of, word * 4) as usize).checked_sub(1) else { return Vec::new() };
        ListSection::records(self.tables.ends, l)
            .map(|i| {
                let (off, len) =
                    (ne32(self.tables.records, i * 8) as usize, ne32(self.tables.records, i * 8 + 4) as usize);
                &self.tables.text[off..off + len]
            })
            .collect()
    }

    /// The `sitemap` URLs of origin `origin`'s robots.txt, in file order.
    pub fn sitemaps(&self, origin: usize) -> Vec<&'a [u8]> {
        self.list(origin * (self.agents + 1))
    }

    /// The first `crawl-delay` value (as written) of crawler `agent`'s group
    /// at origin `origin`, if it has one.
    pub fn crawl_delay(&self, origin: usize, agent: usize) -> Option<&'a [u8]> {
        self.crawl_delays(origin, agent).first().copied()
    }

    /// Every `crawl-delay` value (as written, in file order) of crawler
    /// `agent`'s group at origin `origin`.
    pub fn crawl_delays(&self, origin: usize, agent: usize) -> Vec<&'a [u8]> {
        self.list(origin * (self.agents + 1) + 1 + agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(field: PreferenceField, n: u32, path: &str, entries: &[(&str, &str)]) -> PreferenceLine {
        PreferenceLine {
            field,
            line: n,
            path: path.as_bytes().to_vec(),
            entries: entries
                .iter()
                .map(|(k, v)| robotsieve_core::preference::Entry {
                    key: k.as_bytes().to_vec(),
                    value: v.as_bytes().to_vec(),
                })
                .collect(),
        }
    }

    #[test]
    fn preferences_round_trip() {
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
        let bytes = encode_preferences(&selections, 3, 2, &[&a, &b]);
        let table = PreferenceTable::parse(&bytes, 3, 2).unwrap();
        assert_eq!(table.sets(), 2);
        for (i, s) in selections.iter().enumerate() {
            assert_eq!(table.selection(i / 2, i % 2), *s);
        }
        assert_eq!(table.lines(0), a);
        assert_eq!(table.lines(1), b);
    }

    #[test]
    fn sitemaps_and_crawl_delays_round_trip_and_damage_stays_in_bounds() {
        let lists: Vec<Vec<&[u8]>> =
            vec![vec![b"https://a.example/sitemap.xml", b"https://a.example/news.xml"], vec![b"10"], vec![b"0.5"]];
        let refs = [
            CrawlRefs { sitemaps: Some(0), delays: vec![Some(1), None] },
            CrawlRefs { sitemaps: None, delays: vec![None, None] },
            CrawlRefs { sitemaps: Some(0), delays: vec![Some(2), Some(1)] },
        ];
        let bytes = encode_crawl(&refs, 2, &lists);
        let table = CrawlTable::parse(&bytes, 3, 2).unwrap();
        assert_eq!(table.sitemaps(0), lists[0]);
        assert_eq!(table.sitemaps(1), Vec::<&[u8]>::new());
        assert_eq!(table.sitemaps(2), lists[0]);
        assert_eq!([table.crawl_delay(0, 0), table.crawl_delay(0, 1)], [Some(&b"10"[..]), None]);
        assert_eq!([table.crawl_delay(2, 0), table.crawl_delay(2, 1)], [Some(&b"0.5"[..]), Some(&b"10"[..])]);
        assert!(CrawlTable::parse(&bytes, 3, 1).is_err(), "other counts");
        assert!(CrawlTable::parse(&bytes[..bytes.len() - 1], 3, 2).is_err(), "truncated");
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xff;
            // Damage is either refused or decodes within bounds.
            if let Ok(table) = CrawlTable::parse(&damaged, 3, 2) {
                for o in 0..3 {
                    let _ = (table.sitemaps(o), table.crawl_delay(o, 0), table.crawl_delay(o, 1));
                }
            }
        }
    }

    #[test]
    fn damaged_preferences_are_refused_or_read_in_bounds() {
        let a = vec![line(PreferenceField::ContentUsage, 3, "/x", &[("train-ai", "n")])];
        let bytes = encode_preferences(&[Selection { set: Some(0), named: false }], 1, 1, &[&a]);
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
