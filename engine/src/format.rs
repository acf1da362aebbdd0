//! The artifact's layout: every record type, its encode and its decode side
//! by side, used by the compiler's writer and by [`crate::artifact`]'s
//! reader alike, so that a new part kind or field is one change here.
//!
//! # Layout (format version 6)
//!
//! All integers are in the byte order of the machine that wrote the file
//! (the header records it; a reader of the other order refuses the file).
//! Every section, every group blob and every table in a blob starts at a
//! multiple of 8 bytes, so that mapped tables can be read in place.
//!
//! ```text
//! header    Header (48 bytes): magic "RSIEVE\r\n", format version u32,
//!           semantics version u32, byte-order mark u32, flags u32,
//!           file length u64, checksum u64, section count u32, reserved u32
//! sections  SectionEntry (32 bytes) each: kind, offset, length, checksum
//! GROUPS    the group blobs, one per distinct compiled group, in id order
//! GROUP_INDEX  u64 per group: the file offset of its blob
//! KEYS      the canonical origin keys (`scheme://host[:port]`), concatenated
//! ORIGINS   OriginRecord per origin: key offset and length in KEYS, fetch
//!           information, one group id per agent
//! SLOTS     origin hash table: power-of-two Slots { hash u64, origin u64 }
//!           (origin u64::MAX = empty), home slot = the hash's top bits,
//!           linear probing (wrapping at the end)
//! PREFERENCES  optional: the Content-Signal and Content-Usage lines per
//!           origin and agent ([`PreferenceTable`] has its layout)
//! CRAWL     optional: each origin's sitemaps and each crawler's
//!           crawl-delay, never used for verdicts ([`CrawlTable`])
//! META      JSON: agents, shard, build information
//! ```
//!
//! A group blob is self-contained: a [`GroupHead`] (with the blob's length
//! and a checksum of the rest of it), its [`PartRecord`]s, then the tables
//! they point at, all at offsets relative to the blob's start. A blob is
//! therefore encoded on any thread, before its place in the file is known,
//! and checked on its own the first time a lookup reaches it.
//!
//! # Invariants
//!
//! - The header checksum covers the header (its checksum field read as 0)
//!   and the section table with its unused entries (up to [`MAX_SECTIONS`]); each section entry carries the checksum of its
//!   section's bytes, except GROUPS (0), whose blobs carry their own.
//! - Opening checks the header, the section table, META, GROUP_INDEX, KEYS,
//!   ORIGINS, PREFERENCES and SLOTS (checksums, and every offset and id in them), so that
//!   finding an origin and its group ids can neither read out of bounds nor
//!   panic. A group blob is checked (checksum, then every table and
//!   transition) before its first use answers anything ([`GroupView::check`]);
//!   so is CRAWL (checksum, then every id and offset), which no verdict reads.
//! - Sections follow one another from [`GROUPS_START`] to the end of the
//!   file, with fewer than 8 zero bytes between two; group blobs follow one
//!   another through GROUPS in id order. No byte of the file is therefore
//!   outside a checksum or a check.
//! - Group ids in ORIGINS are below the number of groups; origin numbers in
//!   SLOTS are below the number of origins, each origin in exactly one slot.
//! - The format version sits at byte 8 in every version, so an older file
//!   is named by its version and the user told to recompile.
//!
//! Version history: 1 dense parts; 2 added the comb part; 3 paired the comb
//! arrays and added the 16-bit comb; 4 self-contained checksummed group
//! blobs, one origin record per origin, the slot table by top bits (so that
//! it is built from sorted runs), per-section checksums; 5 the CRAWL section
//! (sitemaps, crawl-delays), groups checked on first use; 6 the [`Checksum`]
//! of 32 u64 lanes of two 32-bit multiplies a step, vectorised (AVX2: 4
//! instructions per 32 bytes against 15, 1,852 for 12 KB against 5,839; a
//! group's first use on the synthetic frontier 9.6 k instructions against
//! 13.3 k, opening the whole corpus 5.9 M against 7.8 M; format 5's
//! one-multiply lanes had a certain two-bit collision).

use crate::comb::{Accel, CombDfa, CombDfaBuf, CombTables, NarrowTables, SlotId};
use crate::compiled::{MatcherBuf, PartBuf};
use crate::dfa::{Dfa, DfaRef, StateId};
use crate::rules::RuleList;
use robotsieve_core::preference::{Entry, PreferenceField, PreferenceLine};
use std::fmt;
use std::path::PathBuf;

/// The first eight bytes of every artifact. The CR LF catches text-mode
/// mangling, as in PNG.
pub const MAGIC: [u8; 8] = *b"RSIEVE\r\n";
/// The layout version this code reads and writes.
pub const FORMAT_VERSION: u32 = 6;
/// The version of the matching semantics the automata were built with. A
/// change of semantics (a fix to Google conformance) bumps it, so old
/// artifacts are refused rather than silently answering differently.
pub const SEMANTICS_VERSION: u32 = 1;
/// Written in native order; reads back differently on a machine of the other order.
pub const BYTE_ORDER_MARK: u32 = 0x0102_0304;
/// Header flag: the automata identify rules and the explanation tables are present.
pub const FLAG_EXPLAIN: u32 = 1;
/// An empty hash-table slot.
pub const EMPTY_SLOT: u64 = u64::MAX;
/// `rules[rank]` when the rank does not identify a rule.
pub const NO_RULE: u32 = u32::MAX;
/// At most this many sections; the writer reserves room for the table.
pub const MAX_SECTIONS: usize = 8;
/// Where the first group blob starts: after the header and a full section table.
pub const GROUPS_START: usize = Header::LEN + MAX_SECTIONS * SectionEntry::LEN;

/// Rounds up to a multiple of 8.
pub fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

#[inline]
fn ne32(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

#[inline]
fn ne64(b: &[u8], off: usize) -> u64 {
    u64::from_ne_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

fn put32(out: &mut [u8], off: usize, v: u32) {
    out[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(out: &mut [u8], off: usize, v: u64) {
    out[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

/// The GROUP_INDEX entry of a group: the file offset of its blob. The
/// reader takes the section in place as `&[u64]` (aligned, native order).
pub fn encode_group_offset(offset: u64) -> [u8; 8] {
    offset.to_ne_bytes()
}

/// The fixed header at the start of every artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// [`FLAG_EXPLAIN`] or 0.
    pub flags: u32,
    /// Length of the whole file.
    pub file_len: u64,
    /// Checksum of the header (this field as 0) and the section table.
    pub checksum: u64,
    /// Number of section entries after the header.
    pub sections: u32,
}

impl Header {
    /// Encoded size.
    pub const LEN: usize = 48;
    /// Where the checksum lies.
    pub const CHECKSUM_AT: std::ops::Range<usize> = 32..40;

    /// Encodes with this build's versions and byte-order mark.
    pub fn encode(&self) -> [u8; Header::LEN] {
        let mut b = [0u8; Header::LEN];
        b[..8].copy_from_slice(&MAGIC);
        put32(&mut b, 8, FORMAT_VERSION);
        put32(&mut b, 12, SEMANTICS_VERSION);
        put32(&mut b, 16, BYTE_ORDER_MARK);
        put32(&mut b, 20, self.flags);
        put64(&mut b, 24, self.file_len);
        put64(&mut b, 32, self.checksum);
        put32(&mut b, 40, self.sections);
        b
    }

    /// Decodes and checks magic, byte order, versions and flags; an older
    /// or newer file is a [`HeaderError::Version`], named by its version.
    pub fn decode(b: &[u8]) -> Result<Header, HeaderError> {
        let damaged = |damage: Damage| Err(HeaderError::Invalid(damage));
        if b.len() < Header::LEN {
            return damaged(Damage::ShortFile { len: b.len() });
        }
        if b[..8] != MAGIC {
            return damaged(Damage::NotAnArtifact);
        }
        if ne32(b, 16) != BYTE_ORDER_MARK {
            return damaged(Damage::OtherByteOrder);
        }
        let (format, semantics) = (ne32(b, 8), ne32(b, 12));
        if format != FORMAT_VERSION {
            let supported = FORMAT_VERSION;
            return Err(HeaderError::Version(VersionMismatch { of: Versioned::Format, found: format, supported }));
        }
        if semantics != SEMANTICS_VERSION {
            let supported = SEMANTICS_VERSION;
            return Err(HeaderError::Version(VersionMismatch {
                of: Versioned::Semantics,
                found: semantics,
                supported,
            }));
        }
        let flags = ne32(b, 20);
        if flags & !FLAG_EXPLAIN != 0 {
            return damaged(Damage::UnknownFlags { flags });
        }
        Ok(Header { flags, file_len: ne64(b, 24), checksum: ne64(b, 32), sections: ne32(b, 40) })
    }

    /// The checksum of a header and its whole section table as stored (the
    /// checksum field counts as 0; the unused entries, up to
    /// [`MAX_SECTIONS`], are zero and covered too).
    pub fn checksum_of(header_and_table: &[u8]) -> u64 {
        let mut sum = Checksum::new();
        sum.update(&header_and_table[..Header::CHECKSUM_AT.start]);
        sum.update(&[0; 8]);
        sum.update(&header_and_table[Header::CHECKSUM_AT.end..]);
        sum.finish()
    }

    /// Fills in the checksum of a header and its section table
    /// ([`Header::checksum_of`]), as the writer does last and
    /// [`reseal`] does again.
    pub fn seal(header_and_table: &mut [u8]) {
        let sum = Header::checksum_of(header_and_table);
        header_and_table[Header::CHECKSUM_AT].copy_from_slice(&sum.to_ne_bytes());
    }

    /// The first [`GROUPS_START`] bytes of an artifact: this header (its
    /// checksum field ignored), the section table with its unused entries
    /// zero, sealed.
    pub fn encode_with_sections(&self, entries: &[SectionEntry]) -> Vec<u8> {
        let mut head = Vec::with_capacity(GROUPS_START);
        head.extend_from_slice(&Header { sections: entries.len() as u32, ..*self }.encode());
        for entry in entries {
            head.extend_from_slice(&entry.encode());
        }
        head.resize(GROUPS_START, 0);
        Header::seal(&mut head);
        head
    }
}

/// Why a header was refused ([`Header::decode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// Another version of robotsieve wrote the file: nothing is damaged,
    /// it wants compiling again (or a newer robotsieve).
    Version(VersionMismatch),
    /// Not an artifact, or a damaged one: what is wrong.
    Invalid(Damage),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Version(mismatch) => mismatch.fmt(f),
            HeaderError::Invalid(damage) => damage.fmt(f),
        }
    }
}

/// Which version of an artifact differs from this build's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Versioned {
    /// The layout ([`FORMAT_VERSION`]).
    Format,
    /// The matching semantics the automata were built with ([`SEMANTICS_VERSION`]).
    Semantics,
}

/// An artifact written by another version of robotsieve than this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionMismatch {
    /// The layout or the semantics.
    pub of: Versioned,
    /// The file's version.
    pub found: u32,
    /// The one this build reads.
    pub supported: u32,
}

impl VersionMismatch {
    /// Whether a newer robotsieve wrote the file (else an older one did).
    pub fn is_newer(&self) -> bool {
        self.found > self.supported
    }
}

impl fmt::Display for VersionMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (found, supported) = (self.found, self.supported);
        match (self.of, self.is_newer()) {
            (Versioned::Format, true) => write!(
                f,
                "format version {found}, written by a newer robotsieve; this one reads version {supported}: upgrade robotsieve, or compile the artifact again with this one"
            ),
            (Versioned::Format, false) => write!(
                f,
                "format version {found}, written by an older robotsieve; this one reads version {supported}: compile the artifact again"
            ),
            (Versioned::Semantics, newer) => {
                let (age, advice) = if newer {
                    ("a newer", "upgrade robotsieve, or compile the artifact again with this one")
                } else {
                    ("an older", "compile the artifact again")
                };
                write!(f, "semantics version {found}, built by {age} robotsieve; this one has version {supported}: {advice}")
            }
        }
    }
}

/// What is wrong with a damaged artifact (or a file that is none), found
/// when it is opened or a section is first read: the decoders of this module
/// and [`crate::artifact::Artifact`]'s checks return it, and
/// [`crate::artifact::ArtifactError::Invalid`] carries it with the file, so
/// that code can tell damage from a version mismatch
/// ([`HeaderError::Version`]) and see where the damage is. Its `Display` is
/// the message robotsieve prints after the file's name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Damage {
    /// The file is shorter than a header.
    ShortFile {
        /// The file's length.
        len: usize,
    },
    /// The first 8 bytes are not [`MAGIC`]: not an artifact.
    NotAnArtifact,
    /// Written on a machine of the other byte order.
    OtherByteOrder,
    /// The header sets flags this build does not know.
    UnknownFlags {
        /// The header's flags.
        flags: u32,
    },
    /// The header's file length is not the file's.
    Truncated {
        /// The length the header gives.
        stored: u64,
        /// The file's.
        actual: usize,
    },
    /// The section table has too many entries, or does not fit the file.
    SectionTable {
        /// The number of entries the header gives.
        count: usize,
    },
    /// The header and section table do not match their checksum.
    HeaderChecksum {
        /// The stored checksum.
        stored: u64,
        /// The checksum of the bytes.
        computed: u64,
    },
    /// An entry of the section table names no section this build knows.
    UnknownSection {
        /// The entry's kind.
        kind: u32,
    },
    /// A section lies outside the file or is not 8-byte aligned.
    SectionBounds {
        /// Which section.
        section: Section,
        /// Its offset in the file.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// A section's bytes do not match their checksum.
    SectionChecksum {
        /// Which section.
        section: Section,
    },
    /// A section appears twice in the table.
    SectionTwice {
        /// Which section.
        section: Section,
    },
    /// A required section is missing.
    SectionMissing {
        /// Which section.
        section: Section,
    },
    /// Bytes between sections that are no padding.
    SectionGap {
        /// The end of one section.
        from: usize,
        /// The start of the next.
        to: usize,
    },
    /// A section's length does not fit its items' size.
    SectionMisaligned {
        /// Which section.
        section: Section,
    },
    /// The META section is not the JSON this build writes.
    Meta {
        /// What the JSON reader found.
        problem: MetaProblem,
    },
    /// The origin records do not divide their section.
    OriginRecords,
    /// The group index does not lay group `group` after the one before.
    GroupOrder {
        /// The group.
        group: usize,
    },
    /// The groups section does not end with its last group.
    GroupsEnd,
    /// An origin's key lies outside the keys section.
    OriginKey {
        /// The origin's number.
        origin: usize,
    },
    /// An origin's fetch kind is unknown.
    OriginFetchKind {
        /// The origin's number.
        origin: usize,
        /// The stored kind.
        kind: u32,
    },
    /// An origin refers to a group the artifact does not have.
    OriginGroup {
        /// The origin's number.
        origin: usize,
        /// The group it names.
        group: u32,
        /// How many groups there are.
        groups: usize,
    },
    /// The origin index's size is not a power of two at least the number of origins.
    SlotCount,
    /// An origin index slot names an origin the artifact does not have.
    SlotOrigin {
        /// The origin it names.
        origin: u64,
        /// How many there are.
        origins: usize,
    },
    /// The origin index does not hold every origin once.
    SlotsFilled {
        /// The slots that name an origin.
        filled: usize,
        /// How many origins there are.
        origins: usize,
    },
    /// An origin is not found through the index under its own key ([`crate::artifact::Artifact::verify`]).
    OriginNotIndexed {
        /// The origin's number.
        origin: usize,
        /// Its key.
        key: String,
    },
    /// A list section (PREFERENCES or CRAWL, [`ListSection`]) is damaged.
    List {
        /// Which section.
        section: Section,
        /// What is wrong.
        problem: ListProblem,
    },
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::ShortFile { len } => write!(f, "{len} bytes is shorter than the {}-byte header", Header::LEN),
            Damage::NotAnArtifact => f.write_str("wrong magic bytes: this is not a robotsieve artifact"),
            Damage::OtherByteOrder => f.write_str("written on a machine of the other byte order"),
            Damage::UnknownFlags { flags } => write!(f, "unknown flags {flags:#x}: written by a newer robotsieve?"),
            Damage::Truncated { stored, actual } => {
                write!(f, "header says {stored} bytes but the file has {actual} (truncated?)")
            }
            Damage::SectionTable { count } => write!(f, "section table of {count} entries does not fit"),
            Damage::HeaderChecksum { stored, computed } => write!(
                f,
                "header checksum mismatch (stored {stored:016x}, computed {computed:016x}): the file is damaged"
            ),
            Damage::UnknownSection { kind } => write!(f, "unknown section kind {kind}"),
            Damage::SectionBounds { section, offset, len } => {
                write!(f, "section {} at {offset}+{len} is out of bounds or misaligned", section.name())
            }
            Damage::SectionChecksum { section } => {
                write!(f, "section {}: checksum mismatch: the file is damaged", section.name())
            }
            Damage::SectionTwice { section } => write!(f, "section {} appears twice", section.name()),
            Damage::SectionMissing { section } => write!(f, "section {} is missing", section.name()),
            Damage::SectionGap { from, to } => {
                write!(f, "the sections do not follow one another (bytes {from} to {to})")
            }
            Damage::SectionMisaligned { section } => write!(f, "section {} is misaligned", section.name()),
            Damage::Meta { problem } => write!(f, "meta: {problem}"),
            Damage::OriginRecords => f.write_str("origin records do not divide their section"),
            Damage::GroupOrder { group } => {
                write!(f, "group {group} does not follow group {} in the groups section", group.wrapping_sub(1))
            }
            Damage::GroupsEnd => f.write_str("the groups section does not end with its last group"),
            Damage::OriginKey { origin } => write!(f, "origin {origin}: key out of range"),
            Damage::OriginFetchKind { origin, kind } => write!(f, "origin {origin}: unknown fetch kind {kind}"),
            Damage::OriginGroup { origin, group, groups } => {
                write!(f, "origin {origin} refers to group {group} of {groups}")
            }
            Damage::SlotCount => f.write_str("origin index size is not a power of two at least the number of origins"),
            Damage::SlotOrigin { origin, origins } => {
                write!(f, "origin index points at origin {origin} of {origins}")
            }
            Damage::SlotsFilled { filled, origins } => write!(f, "origin index holds {filled} origins of {origins}"),
            Damage::OriginNotIndexed { origin, key } => {
                write!(f, "origin {origin} ({key}) is not found through the index")
            }
            Damage::List { section, problem } => {
                let (list, record) = ListSection::of(*section).terms;
                let name = section.name();
                match problem {
                    ListProblem::ShorterThanHeader => write!(f, "{name}: shorter than its header"),
                    ListProblem::OtherCounts { origins, agents } => {
                        write!(f, "{name}: written for other counts than {origins} origins and {agents} agents")
                    }
                    ListProblem::TablesDoNotFit => write!(f, "{name}: tables do not fit"),
                    ListProblem::TextLength => write!(f, "{name}: text length does not match the section"),
                    ListProblem::EndsNotIncreasing { .. } => {
                        write!(f, "{name}: {list} ends are not increasing within the {record}")
                    }
                    ListProblem::RecordsInNoList => write!(f, "{name}: {record} belong to no {list}"),
                    ListProblem::UnknownList { list: l, lists } => {
                        write!(f, "{name}: an origin names {list} {l} of {lists}")
                    }
                    ListProblem::UnknownField { record, field } => {
                        write!(f, "{name}: line record {record} has unknown field {field}")
                    }
                    ListProblem::RecordPastText { record } if *section == Section::Preferences => {
                        write!(f, "{name}: line record {record} points past the text")
                    }
                    ListProblem::RecordPastText { record } => write!(f, "{name}: string {record} points past the text"),
                    ListProblem::BrokenEntries { record } => {
                        write!(f, "{name}: line record {record} has broken entries")
                    }
                }
            }
        }
    }
}

impl std::error::Error for Damage {}

/// What is wrong with a list section ([`Damage::List`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListProblem {
    /// The section is shorter than its header.
    ShorterThanHeader,
    /// Its header counts other origins or agents than the artifact's.
    OtherCounts {
        /// The artifact's origins.
        origins: usize,
        /// The artifact's agents.
        agents: usize,
    },
    /// Its tables, as its header counts them, do not fit the section.
    TablesDoNotFit,
    /// Its text is not as long as its header says.
    TextLength,
    /// The end of list `list` is below the one before, or past the records.
    EndsNotIncreasing {
        /// The list.
        list: usize,
    },
    /// The last list ends before the last record.
    RecordsInNoList,
    /// An origin names a list the section does not have.
    UnknownList {
        /// The list named.
        list: u32,
        /// How many there are.
        lists: usize,
    },
    /// A preference line record has a field this build does not know.
    UnknownField {
        /// The record.
        record: usize,
        /// Its field.
        field: usize,
    },
    /// A record points past the section's text.
    RecordPastText {
        /// The record.
        record: usize,
    },
    /// A preference line's entries are not `key NUL value NUL` pairs.
    BrokenEntries {
        /// The record.
        record: usize,
    },
}

/// The tables of a group's blob, as [`GroupDamage::OutOfRange`] names the
/// one that lies outside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupTable {
    /// The rank labels.
    Labels,
    /// The rule index of each rank.
    Rules,
    /// The explanation entries.
    ExplanationTable,
    /// An explanation's text.
    ExplanationText,
    /// A part's record.
    PartRecord,
    /// A dense automaton's transitions.
    Transitions,
    /// An automaton's answers.
    Answers,
    /// A rule list's pattern ends.
    RuleEnds,
    /// A rule list's ranks.
    RuleRanks,
    /// A rule list's pattern bytes.
    RulePatterns,
    /// An automaton's byte classes.
    ByteClasses,
    /// A comb automaton's rows.
    CombRows,
    /// A comb automaton's slots.
    CombSlots,
    /// A comb automaton's accelerations.
    CombAccelerations,
}

impl GroupTable {
    /// The table's name in messages (`comb slots`).
    pub fn name(self) -> &'static str {
        match self {
            GroupTable::Labels => "labels",
            GroupTable::Rules => "rules",
            GroupTable::ExplanationTable => "explanation table",
            GroupTable::ExplanationText => "explanation text",
            GroupTable::PartRecord => "part record",
            GroupTable::Transitions => "transitions",
            GroupTable::Answers => "answers",
            GroupTable::RuleEnds => "rule ends",
            GroupTable::RuleRanks => "rule ranks",
            GroupTable::RulePatterns => "rule patterns",
            GroupTable::ByteClasses => "byte classes",
            GroupTable::CombRows => "comb rows",
            GroupTable::CombSlots => "comb slots",
            GroupTable::CombAccelerations => "comb accelerations",
        }
    }
}

impl fmt::Display for GroupTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the META section is not the JSON this build writes
/// ([`Damage::Meta`]): what the reader of `Meta::to_json`'s output found,
/// and where (`at`: a byte offset in the section).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetaProblem {
    /// The section is not UTF-8.
    NotUtf8(std::str::Utf8Error),
    /// Another byte than `expected` (or the end) at `at`.
    Expected {
        /// The byte the JSON needs there.
        expected: u8,
        /// Where.
        at: usize,
    },
    /// Another key than `expected`.
    Key {
        /// The key the JSON needs there.
        expected: &'static str,
        /// The key found.
        found: String,
    },
    /// No number (of at most 32 bits) at `at`.
    Number {
        /// Where.
        at: usize,
    },
    /// A string does not end.
    UnterminatedString,
    /// A string's bytes are not UTF-8.
    StringNotUtf8(std::str::Utf8Error),
    /// A `\u` escape with fewer than four digits.
    ShortEscape,
    /// A `\u` escape whose digits are not hex.
    EscapeDigits(std::num::ParseIntError),
    /// A `\u` escape that is no character (a surrogate).
    EscapeNotChar {
        /// The escape's value.
        code: u32,
    },
    /// A backslash escape other than `\"`, `\\` and `\u`, before `at`.
    UnsupportedEscape {
        /// Just after the escape.
        at: usize,
    },
}

impl fmt::Display for MetaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaProblem::NotUtf8(e) | MetaProblem::StringNotUtf8(e) => e.fmt(f),
            MetaProblem::Expected { expected, at } => write!(f, "expected '{}' at byte {at}", *expected as char),
            MetaProblem::Key { expected, found } => write!(f, "expected key {expected:?}, found {found:?}"),
            MetaProblem::Number { at } => write!(f, "expected a number at byte {at}"),
            MetaProblem::UnterminatedString => f.write_str("unterminated string"),
            MetaProblem::ShortEscape => f.write_str("short \\u escape"),
            MetaProblem::EscapeDigits(e) => e.fmt(f),
            MetaProblem::EscapeNotChar { .. } => f.write_str("bad \\u escape"),
            MetaProblem::UnsupportedEscape { at } => write!(f, "unsupported escape at byte {at}"),
        }
    }
}

/// Why the shards given as one set (a directory's `*.rsv` files, or
/// artifacts opened already) do not make one: carried by
/// `ArtifactError::ShardSet` with the set's directory. Files are named by
/// their paths (`shard file 0` for artifacts opened in memory).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShardSetProblem {
    /// The directory holds no `*.rsv` file.
    NoShardFiles,
    /// No artifacts were given.
    NoShards,
    /// A file has no shard information: it is a whole artifact.
    NotAShard {
        /// The file.
        file: PathBuf,
    },
    /// A file is of another set: another shard count or scheme than the
    /// first file's.
    ForeignSet {
        /// The file.
        file: PathBuf,
        /// Its shard number, count and scheme.
        index: u32,
        /// How many shards its set has.
        count: u32,
        /// Its scheme.
        scheme: String,
        /// The first file.
        first: PathBuf,
        /// The first file's shard count.
        first_count: u32,
        /// The first file's scheme.
        first_scheme: String,
    },
    /// A file's shard scheme is not one this build knows.
    UnknownScheme {
        /// The file.
        file: PathBuf,
        /// Its scheme.
        scheme: String,
    },
    /// A file was compiled for other agents or options than the first.
    ForeignAgents {
        /// The file.
        file: PathBuf,
        /// The first file.
        first: PathBuf,
    },
    /// A file's shard number is not below its count.
    IndexBeyondCount {
        /// The file.
        file: PathBuf,
        /// Its shard number.
        index: u32,
        /// The set's shard count.
        count: u32,
    },
    /// Two files are the same shard.
    SameShard {
        /// The file found first.
        first: PathBuf,
        /// The other.
        second: PathBuf,
        /// Their shard number.
        index: u32,
        /// The set's shard count.
        count: u32,
    },
    /// A file holds an origin whose hash puts it in another shard.
    ForeignOrigin {
        /// The file.
        file: PathBuf,
        /// Its shard number.
        index: u32,
        /// The origin's key, as text.
        origin: String,
        /// The shard the origin belongs to.
        belongs: u32,
    },
    /// No file is shard `index`.
    Missing {
        /// The shard number.
        index: u32,
        /// The set's shard count.
        count: u32,
        /// The file that shard would be.
        expected: PathBuf,
    },
}

impl fmt::Display for ShardSetProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardSetProblem::NoShardFiles => f.write_str("no shard files (*.rsv) in the directory"),
            ShardSetProblem::NoShards => f.write_str("no shards"),
            ShardSetProblem::NotAShard { file } => {
                write!(f, "{} is not a shard (it has no shard information)", file.display())
            }
            ShardSetProblem::ForeignSet { file, index, count, scheme, first, first_count, first_scheme } => write!(
                f,
                "{} is shard {index} of {count} by {scheme}, but {} is of {first_count} by {first_scheme}: a foreign shard",
                file.display(),
                first.display()
            ),
            ShardSetProblem::UnknownScheme { file, scheme } => {
                write!(f, "{}: unknown shard scheme {scheme}", file.display())
            }
            ShardSetProblem::ForeignAgents { file, first } => write!(
                f,
                "{} was compiled for other agents or options than {}: a foreign shard",
                file.display(),
                first.display()
            ),
            ShardSetProblem::IndexBeyondCount { file, index, count } => {
                write!(f, "{} claims shard {index} of {count}", file.display())
            }
            ShardSetProblem::SameShard { first, second, index, count } => {
                write!(f, "{} and {} are both shard {index} of {count}", first.display(), second.display())
            }
            ShardSetProblem::ForeignOrigin { file, index, origin, belongs } => write!(
                f,
                "{} (shard {index}) holds origin {origin}, which belongs to shard {belongs}: a foreign shard",
                file.display()
            ),
            ShardSetProblem::Missing { index, count, expected } => {
                write!(f, "shard {index} of {count} is missing ({})", expected.display())
            }
        }
    }
}

/// What is wrong with a damaged group blob ([`GroupView::at`],
/// [`GroupView::check`], [`GroupView::part`]), carried by
/// [`crate::artifact::ArtifactError::DamagedGroup`] with the file, the group
/// number and an origin that uses it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum GroupDamage {
    /// The group index has no entry for it.
    NotIndexed,
    /// The blob is shorter than a group head.
    HeadOutOfBounds,
    /// The head's length is not a multiple of 8 within the bytes there are.
    Length {
        /// The head's length.
        len: u64,
    },
    /// The head's length is not the extent the group index gives.
    IndexLength {
        /// The head's length.
        len: usize,
        /// The extent's.
        extent: usize,
    },
    /// The blob does not match its checksum.
    Checksum {
        /// The stored checksum.
        stored: u64,
        /// The checksum of the bytes.
        computed: u64,
    },
    /// The group has no ranks.
    NoRanks,
    /// The labels do not ascend from 0.
    LabelsNotAscending,
    /// A rank names a rule beyond the explanation table.
    RuleBeyondExplanations,
    /// No parts, too many, or their records past the blob.
    PartCount {
        /// The head's part count.
        parts: u32,
    },
    /// A table lies outside the blob.
    OutOfRange {
        /// Which table.
        table: GroupTable,
    },
    /// A dense part's stride is out of range.
    BadStride {
        /// The part.
        part: usize,
    },
    /// A part's kind is unknown.
    UnknownPartKind {
        /// The part.
        part: usize,
        /// Its kind.
        kind: u32,
    },
    /// A part's automaton or rule list failed its check.
    Part {
        /// The part.
        part: usize,
        /// What the check said.
        problem: PartProblem,
    },
    /// A part answers a rank beyond the rank table.
    AnswerBeyondRanks {
        /// The part.
        part: usize,
    },
    /// An explanation table in an artifact compiled without explanations.
    UnexpectedExplanations,
}

/// Why a part's tables failed their check ([`GroupDamage::Part`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum PartProblem {
    /// A dense automaton's or a comb's.
    Automaton(crate::dfa::DfaError),
    /// A rule list's.
    Rules(crate::rules::RuleListError),
}

impl fmt::Display for GroupDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupDamage::NotIndexed => f.write_str("no such group"),
            GroupDamage::HeadOutOfBounds => f.write_str("the group's head is out of bounds"),
            GroupDamage::Length { len } => write!(f, "a group length of {len} bytes does not fit"),
            GroupDamage::IndexLength { len, extent } => {
                write!(f, "its length of {len} bytes is not the {extent} the index gives")
            }
            GroupDamage::Checksum { stored, computed } => {
                write!(f, "checksum mismatch (stored {stored:016x}, computed {computed:016x}): the group is damaged")
            }
            GroupDamage::NoRanks => f.write_str("no ranks"),
            GroupDamage::LabelsNotAscending => f.write_str("labels are not ascending from 0"),
            GroupDamage::RuleBeyondExplanations => f.write_str("a rank names a rule beyond the explanation table"),
            GroupDamage::PartCount { .. } => f.write_str("parts out of range"),
            GroupDamage::OutOfRange { table } => write!(f, "{table} out of range"),
            GroupDamage::BadStride { .. } => f.write_str("bad stride"),
            GroupDamage::UnknownPartKind { kind, .. } => write!(f, "unknown part kind {kind}"),
            GroupDamage::Part { problem: PartProblem::Automaton(e), .. } => e.fmt(f),
            GroupDamage::Part { problem: PartProblem::Rules(e), .. } => e.fmt(f),
            GroupDamage::AnswerBeyondRanks { .. } => f.write_str("an answer is beyond the rank table"),
            GroupDamage::UnexpectedExplanations => {
                f.write_str("an explanation table in an artifact without explanations")
            }
        }
    }
}

impl std::error::Error for GroupDamage {}

/// The sections of an artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Section {
    /// JSON metadata.
    Meta = 1,
    /// The origin hash table.
    Slots = 2,
    /// The origin keys.
    Keys = 4,
    /// One record per origin.
    Origins = 10,
    /// The file offset of each group blob.
    GroupIndex = 11,
    /// The group blobs.
    Groups = 12,
    /// Optional: the Content-Signal and Content-Usage lines per origin and
    /// agent, and whether a group names the agent (see [`PreferenceTable`]).
    Preferences = 13,
    /// Optional: each origin's sitemaps and each crawler's crawl-delay (see [`CrawlTable`]).
    Crawl = 14,
}

impl Section {
    /// Every section, in file order.
    pub const ALL: [Section; 8] = [
        Section::Groups,
        Section::GroupIndex,
        Section::Keys,
        Section::Origins,
        Section::Preferences,
        Section::Crawl,
        Section::Slots,
        Section::Meta,
    ];

    /// Whether every artifact has the section (all but [`Section::Preferences`]
    /// and [`Section::Crawl`]).
    pub fn is_required(self) -> bool {
        !matches!(self, Section::Preferences | Section::Crawl)
    }

    /// The section's name in messages and `inspect`.
    pub fn name(self) -> &'static str {
        match self {
            Section::Meta => "meta",
            Section::Slots => "origin index",
            Section::Keys => "origin keys",
            Section::Origins => "origin records",
            Section::GroupIndex => "group index",
            Section::Groups => "groups",
            Section::Preferences => "preferences",
            Section::Crawl => "sitemaps and crawl-delays",
        }
    }

    /// Position in [`Section::ALL`].
    pub fn index(self) -> usize {
        Section::ALL.iter().position(|&s| s == self).expect("every section is listed")
    }

    fn from_u32(v: u32) -> Option<Section> {
        Section::ALL.iter().copied().find(|&s| s as u32 == v)
    }
}

/// One entry of the section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionEntry {
    /// Which section.
    pub section: Section,
    /// File offset (a multiple of 8).
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// [`checksum`] of its bytes (0 for [`Section::Groups`]).
    pub checksum: u64,
}

impl SectionEntry {
    /// Encoded size.
    pub const LEN: usize = 32;

    /// Encodes the entry.
    pub fn encode(&self) -> [u8; SectionEntry::LEN] {
        let mut b = [0u8; SectionEntry::LEN];
        put32(&mut b, 0, self.section as u32);
        put64(&mut b, 8, self.offset);
        put64(&mut b, 16, self.len);
        put64(&mut b, 24, self.checksum);
        b
    }

    /// Decodes an entry; an unknown kind is an error.
    pub fn decode(b: &[u8]) -> Result<SectionEntry, Damage> {
        let kind = ne32(b, 0);
        let section = Section::from_u32(kind).ok_or(Damage::UnknownSection { kind })?;
        Ok(SectionEntry { section, offset: ne64(b, 8), len: ne64(b, 16), checksum: ne64(b, 24) })
    }
}

/// What the robots.txt fetch of an origin gave, as stored per origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FetchKind {
    /// A body was fetched (2xx, or a file given directly); its rules apply.
    Rules = 0,
    /// No restrictions (4xx other than 429, a redirect chain too long, ...).
    Unrestricted = 1,
    /// Everything disallowed (5xx, 429, no HTTP answer).
    Blocked = 2,
}

impl FetchKind {
    #[inline]
    fn from_u32(v: u32) -> Option<FetchKind> {
        match v {
            0 => Some(FetchKind::Rules),
            1 => Some(FetchKind::Unrestricted),
            2 => Some(FetchKind::Blocked),
            _ => None,
        }
    }
}

/// Per-origin fetch information: the kind and the HTTP status (0 for no answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FetchInfo {
    /// How the fetch result governs the origin.
    pub kind: FetchKind,
    /// The HTTP status of the governing fetch (0: no HTTP answer; 200 for
    /// files given directly).
    pub status: u16,
}

impl FetchInfo {
    /// The packed form stored in an [`OriginRecord`]: status | kind << 16.
    pub fn pack(self) -> u32 {
        u32::from(self.status) | (self.kind as u32) << 16
    }

    /// Reads the packed form back; `None` for an unknown kind.
    #[inline]
    pub fn unpack(v: u32) -> Option<FetchInfo> {
        Some(FetchInfo { kind: FetchKind::from_u32(v >> 16)?, status: (v & 0xffff) as u16 })
    }
}

/// One origin in ORIGINS: `key_off u64, key_len u32, info u32`, then one
/// u32 group id per agent, padded to a multiple of 8 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginRecord {
    /// Where the key starts in KEYS.
    pub key_off: u64,
    /// Its length.
    pub key_len: u32,
    /// [`FetchInfo::pack`].
    pub info: u32,
    /// The group of each agent.
    pub groups: Vec<u32>,
}

impl OriginRecord {
    /// Encoded size for `agents` agents.
    pub fn len(agents: usize) -> usize {
        align8(16 + 4 * agents)
    }

    /// Where agent `agent`'s group id lies in a record.
    pub fn group_at(agent: usize) -> usize {
        16 + 4 * agent
    }

    /// Appends the encoded record.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + OriginRecord::len(self.groups.len()), 0);
        let b = &mut out[start..];
        put64(b, 0, self.key_off);
        put32(b, 8, self.key_len);
        put32(b, 12, self.info);
        for (a, &g) in self.groups.iter().enumerate() {
            put32(b, OriginRecord::group_at(a), g);
        }
    }

    /// The key's range in KEYS.
    #[inline]
    pub fn key_range(b: &[u8]) -> (u64, u32) {
        (ne64(b, 0), ne32(b, 8))
    }

    /// The packed fetch information.
    #[inline]
    pub fn info(b: &[u8]) -> u32 {
        ne32(b, 12)
    }

    /// Agent `agent`'s group id.
    #[inline]
    pub fn group(b: &[u8], agent: usize) -> u32 {
        ne32(b, OriginRecord::group_at(agent))
    }
}

/// One slot of the origin hash table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// `origin_hash` of the key.
    pub hash: u64,
    /// The origin number, or [`EMPTY_SLOT`].
    pub origin: u64,
}

impl Slot {
    /// Encoded size.
    pub const LEN: usize = 16;
    /// An empty slot.
    pub const EMPTY: Slot = Slot { hash: 0, origin: EMPTY_SLOT };

    /// Encodes the slot.
    pub fn encode(&self) -> [u8; Slot::LEN] {
        let mut b = [0u8; Slot::LEN];
        put64(&mut b, 0, self.hash);
        put64(&mut b, 8, self.origin);
        b
    }

    /// Decodes a slot.
    pub fn decode(b: &[u8]) -> Slot {
        Slot { hash: ne64(b, 0), origin: ne64(b, 8) }
    }

    /// The home slot of `hash` in a table of `1 << bits` slots: its top bits,
    /// so that hashes sorted in order are in home-slot order for every size.
    pub fn home(hash: u64, bits: u32) -> usize {
        if bits == 0 {
            0
        } else {
            (hash >> (64 - bits)) as usize
        }
    }
}

/// The head of a group blob.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupHead {
    /// [`checksum`] of the blob's bytes after this field.
    pub checksum: u64,
    /// Length of the whole blob (a multiple of 8).
    pub len: u64,
    /// Number of ranks including rank 0 (entries of the labels and rules tables).
    pub ranks: u32,
    /// Number of parts (their records follow the head).
    pub parts: u32,
    /// Number of explanation entries (the group's rules; 0 when not explained).
    pub explain_count: u32,
    /// Offset in the blob of `ranks` u32 labels (`labels[rank]`).
    pub labels_off: u32,
    /// Offset of `ranks` u32 rule indexes into the explanation (`NO_RULE` when none).
    pub rules_off: u32,
    /// Offset of `explain_count` [`ExplainEntry`]s.
    pub explain_off: u32,
}

impl GroupHead {
    /// Encoded size.
    pub const LEN: usize = 40;
    /// At most this many parts in a group.
    pub const MAX_PARTS: u32 = 8;

    /// Encodes the head.
    pub fn encode(&self, b: &mut [u8]) {
        put64(b, 0, self.checksum);
        put64(b, 8, self.len);
        put32(b, 16, self.ranks);
        put32(b, 20, self.parts);
        put32(b, 24, self.explain_count);
        put32(b, 28, self.labels_off);
        put32(b, 32, self.rules_off);
        put32(b, 36, self.explain_off);
    }

    /// Decodes a head from at least [`GroupHead::LEN`] bytes (one length
    /// check, then fixed offsets: every lookup of a group decodes its head).
    #[inline]
    pub fn decode(b: &[u8]) -> GroupHead {
        let b = &b[..GroupHead::LEN];
        GroupHead {
            checksum: ne64(b, 0),
            len: ne64(b, 8),
            ranks: ne32(b, 16),
            parts: ne32(b, 20),
            explain_count: ne32(b, 24),
            labels_off: ne32(b, 28),
            rules_off: ne32(b, 32),
            explain_off: ne32(b, 36),
        }
    }
}

/// Part kind: a DFA with u16 transitions.
pub const PART_DFA16: u32 = 1;
/// Part kind: a DFA with u32 transitions.
pub const PART_DFA32: u32 = 2;
/// Part kind: a per-rule list (patterns, ends, ranks).
pub const PART_RULES: u32 = 3;
/// Part kind: a DFA with a row-displaced ("comb") transition table.
pub const PART_COMB: u32 = 4;
/// Part kind: a comb with 16-bit state ids in its slots and the answers in
/// its rows (fewer than 65,536 states and answers).
pub const PART_COMB16: u32 = 5;

/// One part of a group, after the group's head (blob-relative offsets).
///
/// A DFA part is stored dense ([`PART_DFA16`], [`PART_DFA32`]: premultiplied
/// transitions, `count << stride2` of them) or row-displaced ([`PART_COMB`],
/// see [`crate::comb`]: `count` rows `[default, base]` of u32, then `slots`
/// slots `[owner, target]`, contiguous behind `b`; in a [`PART_COMB16`] part
/// the slots are u16 pairs and each row is `[default | answer << 16, base]`,
/// with no answers table at `c`; then `stride2` accelerated states), whichever
/// is smaller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartRecord {
    /// [`PART_DFA16`], [`PART_DFA32`], [`PART_RULES`], [`PART_COMB`] or [`PART_COMB16`].
    pub kind: u32,
    /// Dense DFA: log2 of the stride. Comb: the number of accelerated states. Rules: 0.
    pub stride2: u32,
    /// DFA and comb: number of states. Rules: number of rules.
    pub count: u32,
    /// DFA and comb: number of sink states.
    pub sinks: u32,
    /// Dense DFA: premultiplied start state. Comb: the start state's index.
    pub start: u32,
    /// Comb: number of slots (0 for the others).
    pub slots: u32,
    /// DFA and comb: classes (256 bytes). Rules: concatenated patterns.
    pub a: u32,
    /// Dense DFA: transitions. Comb: rows, slots, accelerations. Rules: pattern ends.
    pub b: u32,
    /// DFA and comb: `count` u32 answers (none in [`PART_COMB16`]). Rules: ranks.
    pub c: u32,
}

impl PartRecord {
    /// Encoded size.
    pub const LEN: usize = 40;

    /// Encodes the record.
    pub fn encode(&self, b: &mut [u8]) {
        for (i, v) in [self.kind, self.stride2, self.count, self.sinks, self.start, self.slots, self.a, self.b, self.c]
            .into_iter()
            .enumerate()
        {
            put32(b, 4 * i, v);
        }
        put32(b, 36, 0);
    }

    /// Decodes a record from at least [`PartRecord::LEN`] bytes (one length
    /// check, then fixed offsets: every lookup reads its group's records).
    #[inline]
    pub fn decode(b: &[u8]) -> PartRecord {
        let b = &b[..PartRecord::LEN];
        PartRecord {
            kind: ne32(b, 0),
            stride2: ne32(b, 4),
            count: ne32(b, 8),
            sinks: ne32(b, 12),
            start: ne32(b, 16),
            slots: ne32(b, 20),
            a: ne32(b, 24),
            b: ne32(b, 28),
            c: ne32(b, 32),
        }
    }
}

/// One rule of a group's explanation table (16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExplainEntry {
    /// The robots.txt line the rule came from.
    pub line: u32,
    /// Bit 0: allow; bit 1: the directory rule derived from an `index.htm` allow.
    pub flags: u32,
    /// Blob offset of the pattern text.
    pub text_off: u32,
    /// Length of the pattern text.
    pub text_len: u32,
}

impl ExplainEntry {
    /// Encoded size.
    pub const LEN: usize = 16;

    /// Encodes the entry.
    pub fn encode(&self, b: &mut [u8]) {
        put32(b, 0, self.line);
        put32(b, 4, self.flags);
        put32(b, 8, self.text_off);
        put32(b, 12, self.text_len);
    }

    /// Decodes an entry.
    pub fn decode(b: &[u8]) -> ExplainEntry {
        ExplainEntry { line: ne32(b, 0), flags: ne32(b, 4), text_off: ne32(b, 8), text_len: ne32(b, 12) }
    }
}

/// A rule to store in a group's explanation table.
#[derive(Clone, Copy, Debug)]
pub struct RuleText<'a> {
    /// Its robots.txt line.
    pub line: u32,
    /// Allow or disallow.
    pub allow: bool,
    /// Google's directory rule derived from an `index.htm` allow.
    pub index_directory: bool,
    /// The escaped pattern.
    pub pattern: &'a [u8],
}

/// Why a group or a preference set could not be encoded.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A group has no parts or more than [`GroupHead::MAX_PARTS`].
    PartCount {
        /// The number of parts it has.
        parts: usize,
    },
    /// A group's tables pass 4 GiB, past what a blob offset can address.
    GroupTooLarge,
    /// The preference text passes 4 GiB, past what a record offset can address.
    PreferenceTextTooLarge,
    /// The sitemap and crawl-delay text passes 4 GiB, past what a record offset can address.
    CrawlTextTooLarge,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::PartCount { parts } => write!(f, "a group of {parts} parts"),
            EncodeError::GroupTooLarge => f.write_str("a group's tables exceed 4 GiB"),
            EncodeError::PreferenceTextTooLarge => f.write_str("preference text past 4 GiB"),
            EncodeError::CrawlTextTooLarge => f.write_str("sitemap and crawl-delay text past 4 GiB"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// A group blob under construction: 8-byte aligned arrays at blob offsets.
struct BlobTables {
    data: Vec<u8>,
}

impl BlobTables {
    fn bytes(&mut self, bytes: &[u8]) -> Result<u32, EncodeError> {
        self.data.resize(align8(self.data.len()), 0);
        let off = u32::try_from(self.data.len()).map_err(|_| EncodeError::GroupTooLarge)?;
        self.data.extend_from_slice(bytes);
        Ok(off)
    }

    fn u32s(&mut self, values: &[u32]) -> Result<u32, EncodeError> {
        self.bytes(bytemuck::cast_slice(values))
    }
}

/// Encodes a compiled group as a self-contained blob (see the module
/// documentation). Each automaton part is stored as a comb when that is
/// smaller than its dense table. With `explain`, the rank-to-rule table and
/// `rules` are stored; without, every rank names [`NO_RULE`].
pub fn encode_group(matcher: &MatcherBuf, explain: bool, rules: &[RuleText<'_>]) -> Result<Vec<u8>, EncodeError> {
    let parts = matcher.parts.len();
    if parts == 0 || parts > GroupHead::MAX_PARTS as usize {
        return Err(EncodeError::PartCount { parts });
    }
    let records_end = GroupHead::LEN + parts * PartRecord::LEN;
    let mut t = BlobTables { data: vec![0; records_end] };
    let mut head = GroupHead {
        ranks: matcher.labels.len() as u32,
        parts: parts as u32,
        labels_off: t.u32s(&matcher.labels)?,
        ..GroupHead::default()
    };
    let rule_ids = if explain { matcher.rules.clone() } else { vec![NO_RULE; matcher.rules.len()] };
    head.rules_off = t.u32s(&rule_ids)?;
    let mut records = Vec::with_capacity(parts);
    for part in &matcher.parts {
        records.push(match part {
            PartBuf::Dfa(dfa) => match smaller_comb(dfa) {
                Some((comb, narrow)) => encode_comb(&mut t, dfa, &comb, narrow)?,
                None => {
                    let a = t.bytes(dfa.classes())?;
                    let (kind, b) = if dfa.fits_u16() {
                        let narrow: Vec<u16> = dfa.transitions().iter().map(|&t| t as u16).collect();
                        (PART_DFA16, t.bytes(bytemuck::cast_slice(&narrow))?)
                    } else {
                        (PART_DFA32, t.u32s(dfa.transitions())?)
                    };
                    let c = t.u32s(dfa.answers())?;
                    let (stride2, count, sinks, start) =
                        (dfa.stride2(), dfa.states() as u32, dfa.sinks() as u32, dfa.start());
                    PartRecord { kind, stride2, count, sinks, start, slots: 0, a, b, c }
                }
            },
            PartBuf::Rules(list) => PartRecord {
                kind: PART_RULES,
                count: list.ends.len() as u32,
                a: t.bytes(&list.patterns)?,
                b: t.u32s(&list.ends)?,
                c: t.u32s(&list.ranks)?,
                ..PartRecord::default()
            },
        });
    }
    if explain && !rules.is_empty() {
        let mut entries = Vec::with_capacity(rules.len());
        for rule in rules {
            let text_off = t.bytes(rule.pattern)?;
            let flags = u32::from(rule.allow) | u32::from(rule.index_directory) << 1;
            entries.push(ExplainEntry { line: rule.line, flags, text_off, text_len: rule.pattern.len() as u32 });
        }
        let mut bytes = vec![0u8; entries.len() * ExplainEntry::LEN];
        for (entry, b) in entries.iter().zip(bytes.chunks_exact_mut(ExplainEntry::LEN)) {
            entry.encode(b);
        }
        head.explain_off = t.bytes(&bytes)?;
        head.explain_count = rules.len() as u32;
    }
    let mut blob = t.data;
    blob.resize(align8(blob.len()), 0);
    for (i, record) in records.iter().enumerate() {
        let at = GroupHead::LEN + i * PartRecord::LEN;
        record.encode(&mut blob[at..at + PartRecord::LEN]);
    }
    head.len = blob.len() as u64;
    head.encode(&mut blob[..GroupHead::LEN]);
    head.checksum = checksum(&blob[8..]);
    head.encode(&mut blob[..GroupHead::LEN]);
    Ok(blob)
}

/// The comb form of `dfa` (and its 16-bit tables when they fit) when it is
/// smaller than the dense transitions and answers. Trie-like automata from
/// long literal rules shrink many times; small or dense automata stay dense
/// and scan a little faster.
fn smaller_comb(dfa: &Dfa) -> Option<(CombDfaBuf, Option<NarrowTables>)> {
    let dense_bytes = dfa.transitions().len() * if dfa.fits_u16() { 2 } else { 4 } + 4 * dfa.states();
    let comb = CombDfaBuf::from_dense_within(dfa, dense_bytes)?;
    u32::try_from(comb.slots.len()).ok()?;
    if comb.stored_bytes() >= dense_bytes {
        return None;
    }
    let narrow = comb.narrow();
    Some((comb, narrow))
}

fn encode_comb(
    t: &mut BlobTables,
    dfa: &Dfa,
    comb: &CombDfaBuf,
    narrow: Option<NarrowTables>,
) -> Result<PartRecord, EncodeError> {
    let a = t.bytes(dfa.classes())?;
    let cast = |words: &[u32]| bytemuck::cast_slice::<u32, u8>(words).to_vec();
    let accels = cast(comb.accels.as_flattened());
    let (kind, tables, answers) = match narrow {
        Some(NarrowTables { rows, slots }) => {
            (PART_COMB16, [cast(rows.as_flattened()), bytemuck::cast_slice(&slots).to_vec(), accels].concat(), None)
        }
        None => {
            let tables = [cast(comb.rows.as_flattened()), cast(comb.slots.as_flattened()), accels].concat();
            (PART_COMB, tables, Some(&comb.answers))
        }
    };
    let b = t.bytes(&tables)?;
    let c = match answers {
        Some(answers) => t.u32s(answers)?,
        None => 0,
    };
    Ok(PartRecord {
        kind,
        stride2: comb.accels.len() as u32,
        count: comb.answers.len() as u32,
        sinks: comb.sinks,
        start: comb.start,
        slots: comb.slots.len() as u32,
        a,
        b,
        c,
    })
}

/// Whether a view re-checks every transition (the first use of a group) or
/// trusts the check already made (every later lookup, where a full check per
/// URL would cost the table's size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Check every table and transition.
    Full,
    /// The group was checked before.
    Validated,
}

/// A group blob, read in place.
#[derive(Clone, Copy, Debug)]
pub struct GroupView<'a> {
    /// Its head.
    pub head: GroupHead,
    blob: &'a [u8],
}

/// A part of a group, read in place: the one list of the part kinds a
/// group stores (the runtime wraps it, see `runtime::RunnerPart`).
#[derive(Clone, Copy, Debug)]
pub enum PartView<'a> {
    /// A dense automaton of u32 ids.
    Dfa(DfaRef<'a>),
    /// A dense automaton of u16 ids.
    Dfa16(DfaRef<'a, u16>),
    /// A comb of u32 ids.
    Comb(CombDfa<'a>),
    /// A comb of u16 ids.
    Comb16(CombDfa<'a, u16>),
    /// Rules one by one.
    Rules {
        /// Concatenated patterns.
        patterns: &'a [u8],
        /// End of each pattern.
        ends: &'a [u32],
        /// Rank of each pattern.
        ranks: &'a [u32],
    },
}

impl<'a> GroupView<'a> {
    /// The blob at the start of `bytes` (which may run past it); checks only
    /// that the head fits and its length is within `bytes`. See
    /// [`GroupView::check`] for everything else.
    #[inline]
    pub fn at(bytes: &'a [u8]) -> Result<GroupView<'a>, GroupDamage> {
        if bytes.len() < GroupHead::LEN {
            return Err(GroupDamage::HeadOutOfBounds);
        }
        let head = GroupHead::decode(bytes);
        let len = usize::try_from(head.len).ok().filter(|&l| l >= GroupHead::LEN && l <= bytes.len() && l % 8 == 0);
        let len = len.ok_or(GroupDamage::Length { len: head.len })?;
        Ok(GroupView { head, blob: &bytes[..len] })
    }

    /// The checksum and every table and transition of the group: after this,
    /// lookups with [`Check::Validated`] cannot read out of bounds or loop.
    pub fn check(&self, explain: bool) -> Result<(), GroupDamage> {
        let computed = checksum(&self.blob[8..]);
        if computed != self.head.checksum {
            return Err(GroupDamage::Checksum { stored: self.head.checksum, computed });
        }
        let rec = &self.head;
        if rec.ranks == 0 {
            return Err(GroupDamage::NoRanks);
        }
        let labels = self.labels().ok_or(GroupDamage::OutOfRange { table: GroupTable::Labels })?;
        let rules = self.rule_ids().ok_or(GroupDamage::OutOfRange { table: GroupTable::Rules })?;
        // Ascending: no label above the next (one fold, which vectorises).
        if labels[0] != 0 || labels.iter().zip(&labels[1..]).fold(false, |down, (a, b)| down | (a > b)) {
            return Err(GroupDamage::LabelsNotAscending);
        }
        // A rank names no rule ([`NO_RULE`], which wraps to 0) or one below
        // the count: one maximum, which vectorises, instead of a search.
        if rules.iter().map(|&r| r.wrapping_add(1)).fold(0, u32::max) > rec.explain_count {
            return Err(GroupDamage::RuleBeyondExplanations);
        }
        if rec.parts == 0 || rec.parts > GroupHead::MAX_PARTS || self.records_end() > self.blob.len() {
            return Err(GroupDamage::PartCount { parts: rec.parts });
        }
        for p in 0..rec.parts as usize {
            let mut comb_max_answer = None;
            let part = self.read_part(p, Check::Full, &mut comb_max_answer)?;
            let max_answer = match (part, comb_max_answer) {
                (_, Some(max)) => max,
                (PartView::Dfa(dfa), None) => dfa.max_answer(),
                (PartView::Dfa16(dfa), None) => dfa.max_answer(),
                (PartView::Comb(comb), None) => comb.max_answer(),
                (PartView::Comb16(comb), None) => comb.max_answer(),
                (PartView::Rules { ends, ranks, patterns }, None) => {
                    RuleList::check(patterns, ends, ranks)
                        .map_err(|e| GroupDamage::Part { part: p, problem: PartProblem::Rules(e) })?;
                    ranks.iter().copied().max().unwrap_or(0)
                }
            };
            if max_answer >= rec.ranks {
                return Err(GroupDamage::AnswerBeyondRanks { part: p });
            }
        }
        if rec.explain_count > 0 {
            if !explain {
                return Err(GroupDamage::UnexpectedExplanations);
            }
            for i in 0..rec.explain_count as usize {
                let entry =
                    self.explain_entry(i).ok_or(GroupDamage::OutOfRange { table: GroupTable::ExplanationTable })?;
                self.bytes_at(entry.text_off, entry.text_len as usize)
                    .ok_or(GroupDamage::OutOfRange { table: GroupTable::ExplanationText })?;
            }
        }
        Ok(())
    }

    fn records_end(&self) -> usize {
        GroupHead::LEN + self.head.parts as usize * PartRecord::LEN
    }

    /// The blob's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.blob
    }

    /// `labels[rank]`.
    pub fn labels(&self) -> Option<&'a [u32]> {
        self.table(self.head.labels_off, self.head.ranks as usize)
    }

    /// `rules[rank]`: the explanation entry of a rank, or [`NO_RULE`].
    pub fn rule_ids(&self) -> Option<&'a [u32]> {
        self.table(self.head.rules_off, self.head.ranks as usize)
    }

    /// Explanation entry `i`.
    pub fn explain_entry(&self, i: usize) -> Option<ExplainEntry> {
        if i >= self.head.explain_count as usize {
            return None;
        }
        let at = (self.head.explain_off as usize).checked_add(i * ExplainEntry::LEN)?;
        self.blob.get(at..at.checked_add(ExplainEntry::LEN)?).map(ExplainEntry::decode)
    }

    /// `len` bytes at blob offset `off`.
    pub fn bytes_at(&self, off: u32, len: usize) -> Option<&'a [u8]> {
        let start = off as usize;
        self.blob.get(start..start.checked_add(len)?)
    }

    fn table<T: bytemuck::Pod>(&self, off: u32, count: usize) -> Option<&'a [T]> {
        let bytes = self.bytes_at(off, count.checked_mul(std::mem::size_of::<T>())?)?;
        bytemuck::try_cast_slice(bytes).ok()
    }

    /// Part `p`'s record (`p` below the head's part count, and the records
    /// within the blob: [`GroupView::check`] made sure).
    pub fn part_record(&self, p: usize) -> Option<PartRecord> {
        let at = GroupHead::LEN + p * PartRecord::LEN;
        self.blob.get(at..at + PartRecord::LEN).map(PartRecord::decode)
    }

    /// Part `p`, read in place. Every lookup reads its group's parts with
    /// [`Check::Validated`] (a constant at each call), which goes to a
    /// reading of its own without the checks' branches.
    #[inline(always)]
    pub fn part(&self, p: usize, check: Check) -> Result<PartView<'a>, GroupDamage> {
        match check {
            Check::Validated => self.validated_part(p),
            Check::Full => self.read_part(p, check, &mut None),
        }
    }

    /// [`GroupView::read_part`] with [`Check::Validated`], the constant
    /// folded in: the tables' bounds, no automaton check.
    #[inline(never)]
    fn validated_part(&self, p: usize) -> Result<PartView<'a>, GroupDamage> {
        self.read_part(p, Check::Validated, &mut None)
    }

    /// Part `p`, and in `comb_max_answer` a comb's largest answer when
    /// `check` is [`Check::Full`] (found by its check's pass over the rows;
    /// an out-parameter so that the view is built where the caller wants it,
    /// not moved through a tuple: about 30 instructions a lookup's part).
    #[inline(always)]
    fn read_part(
        &self,
        p: usize,
        check: Check,
        comb_max_answer: &mut Option<u32>,
    ) -> Result<PartView<'a>, GroupDamage> {
        let out_of_range = |table| GroupDamage::OutOfRange { table };
        let part = self.part_record(p).ok_or(out_of_range(GroupTable::PartRecord))?;
        let count = part.count as usize;
        match part.kind {
            PART_DFA16 => self.dense(p, &part, check).map(PartView::Dfa16),
            PART_DFA32 => self.dense(p, &part, check).map(PartView::Dfa),
            PART_COMB => self.comb(p, &part, check, comb_max_answer).map(PartView::Comb),
            PART_COMB16 => self.comb(p, &part, check, comb_max_answer).map(PartView::Comb16),
            PART_RULES => {
                let ends: &[u32] = self.table(part.b, count).ok_or(out_of_range(GroupTable::RuleEnds))?;
                let ranks: &[u32] = self.table(part.c, count).ok_or(out_of_range(GroupTable::RuleRanks))?;
                let len = ends.last().copied().unwrap_or(0) as usize;
                let patterns = self.bytes_at(part.a, len).ok_or(out_of_range(GroupTable::RulePatterns))?;
                Ok(PartView::Rules { patterns, ends, ranks })
            }
            kind => Err(GroupDamage::UnknownPartKind { part: p, kind }),
        }
    }

    fn classes(&self, off: u32) -> Result<&'a [u8; 256], GroupDamage> {
        self.bytes_at(off, 256)
            .and_then(|b| b.try_into().ok())
            .ok_or(GroupDamage::OutOfRange { table: GroupTable::ByteClasses })
    }

    /// A dense part's tables: `count` rows of `1 << stride2` ids of type `I`.
    #[inline(always)]
    fn dense<I: StateId + bytemuck::Pod>(
        &self,
        p: usize,
        part: &PartRecord,
        check: Check,
    ) -> Result<DfaRef<'a, I>, GroupDamage> {
        let out_of_range = |table| GroupDamage::OutOfRange { table };
        let count = part.count as usize;
        let classes = self.classes(part.a)?;
        let entries =
            count.checked_shl(part.stride2).filter(|_| part.stride2 <= 9).ok_or(GroupDamage::BadStride { part: p })?;
        let transitions: &[I] = self.table(part.b, entries).ok_or(out_of_range(GroupTable::Transitions))?;
        let answers: &[u32] = self.table(part.c, count).ok_or(out_of_range(GroupTable::Answers))?;
        match check {
            Check::Full => Dfa::new(classes, part.stride2, transitions, answers, part.start, part.sinks)
                .map_err(|e| GroupDamage::Part { part: p, problem: PartProblem::Automaton(e) }),
            Check::Validated => Ok(Dfa::validated(classes, part.stride2, transitions, answers, part.start, part.sinks)),
        }
    }

    /// A comb part's tables: `count` rows, then `slots` slots of `T` ids;
    /// with [`Check::Full`], its largest answer too (in `max_answer`).
    #[inline(always)]
    fn comb<T: SlotId>(
        &self,
        p: usize,
        part: &PartRecord,
        check: Check,
        max_answer: &mut Option<u32>,
    ) -> Result<CombDfa<'a, T>, GroupDamage> {
        let out_of_range = |table| GroupDamage::OutOfRange { table };
        let count = part.count as usize;
        let classes = self.classes(part.a)?;
        let rows: &[[u32; 2]] = self.table(part.b, count).ok_or(out_of_range(GroupTable::CombRows))?;
        let slots_at = u32::try_from(part.b as usize + 8 * count).map_err(|_| out_of_range(GroupTable::CombSlots))?;
        let slots: &[[T; 2]] = self.table(slots_at, part.slots as usize).ok_or(out_of_range(GroupTable::CombSlots))?;
        let accels_at = u32::try_from(slots_at as usize + std::mem::size_of_val(slots))
            .map_err(|_| out_of_range(GroupTable::CombAccelerations))?;
        let accels: &[Accel] =
            self.table(accels_at, part.stride2 as usize).ok_or(out_of_range(GroupTable::CombAccelerations))?;
        // A 16-bit comb's rows carry the answers.
        let answers =
            if T::ANSWER_IN_ROW { &[] } else { self.table(part.c, count).ok_or(out_of_range(GroupTable::Answers))? };
        let (start, sinks) = (part.start, part.sinks);
        let tables = CombTables { classes, rows, slots, answers, accels, start, sinks };
        match check {
            Check::Full => CombDfa::new_with_max_answer(tables)
                .map(|(comb, max)| {
                    *max_answer = Some(max);
                    comb
                })
                .map_err(|e| GroupDamage::Part { part: p, problem: PartProblem::Automaton(e) }),
            Check::Validated => Ok(CombDfa::validated(tables)),
        }
    }
}

// The PREFERENCES section of an artifact: the `Content-Signal` and
// `Content-Usage` lines that apply to each origin and crawler, and whether
// a group of the origin's robots.txt names the crawler (rather than the
// crawler falling back to `*`), encoded and decoded side by side.
//
// The section is optional: an artifact whose robots.txt files carry no
// preference line and name none of its crawlers has none, and is byte for
// byte what it was before the section existed. It is self-contained (its offsets are relative to its
// own start, nothing in it points into other sections, nothing else points
// into it), so that it can move with the rest of the format.
//
// The lines of a group are stored once per distinct list ("set"), as
// compiled groups are: origins whose crawler groups have the same
// preference lines share one set. Without `--explain`, line numbers are
// stored as 0 so that more origins share.
//
// ```text
// header    sets u32, lines u32, origins u32, agents u32, text length u64
// SET_OF    u32 per origin and agent (origin-major): bits 0-30 its set + 1
//           (0: no preference lines), bit 31 set when a group names the agent
// SET_ENDS  u32 per set: the end of its lines in LINES (increasing)
// LINES     one record per line, 6 x u32: field (0 Content-Signal,
//           1 Content-Usage), line number, path offset, path length,
//           entries offset, entries length (offsets into TEXT)
// TEXT      bytes: paths, and entries as `key NUL value NUL` pairs
// ```
//
// All integers are in the artifact's (native) byte order.

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
pub struct ListSection {
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
pub const PREFERENCE_LISTS: ListSection = ListSection {
    section: Section::Preferences,
    terms: ("set", "lines"),
    header_len: PREFERENCE_HEADER_LEN,
    record_len: LINE_RECORD_LEN,
    fixed_words: 0,
    max_lists: NAMED - 2,
};

/// The CRAWL section's shape: per origin a sitemap word, then a
/// crawl-delay word per agent.
pub const CRAWL_LISTS: ListSection = ListSection {
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
        Damage::List { section: self.section, problem }
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
pub struct PreferenceHeader {
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
pub fn encode_preference_set(
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

/// Encodes a whole section in memory: `selections[origin * agents + agent]`,
/// whose sets index `sets` (the streaming writer writes the same bytes from
/// [`PreferenceHeader`], [`Selection::pack`] and [`encode_preference_set`]).
///
/// # Panics
///
/// When `selections` does not hold `origins * agents` entries, names a set
/// that does not exist, or there are 2^31 sets or 4 GiB of text.
pub fn encode_preferences(
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
pub struct CrawlHeader {
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
/// and of each crawler's crawl-delay list ([`encode_string_list`] order).
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
pub fn encode_string_list(
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

/// Encodes a whole CRAWL section in memory (the streaming writer writes the
/// same bytes from [`CrawlHeader`], [`CrawlRefs::encode`] and
/// [`encode_string_list`]).
///
/// # Panics
///
/// When `refs` does not hold `origins` entries of `agents` crawlers each,
/// or names a list that does not exist.
pub fn encode_crawl(refs: &[CrawlRefs], agents: usize, lists: &[Vec<&[u8]>]) -> Vec<u8> {
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
pub struct CrawlTable<'a> {
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

/// Recomputes every checksum of an artifact's bytes as the writer would:
/// each group blob's, each section's, then the header's. Damage made to a
/// file and then resealed so reaches the checks behind the checksums (the
/// fuzz targets and damage tests use it). Whatever cannot be parsed (a
/// short file, a bad entry or blob length) is left as it is.
pub fn reseal(bytes: &mut [u8]) {
    let Ok(header) = Header::decode(bytes) else { return };
    if bytes.len() < GROUPS_START {
        return;
    }
    for i in 0..(header.sections as usize).min(MAX_SECTIONS) {
        let at = Header::LEN + i * SectionEntry::LEN;
        let Ok(mut entry) = SectionEntry::decode(&bytes[at..]) else { continue };
        let Some(end) = entry.offset.checked_add(entry.len).filter(|&e| e <= bytes.len() as u64) else { continue };
        let (start, end) = (entry.offset as usize, end as usize);
        if entry.section == Section::Groups {
            let mut pos = start;
            while pos + GroupHead::LEN <= end {
                let len = ne64(bytes, pos + 8);
                if len < GroupHead::LEN as u64 || len > (end - pos) as u64 {
                    break;
                }
                let sum = checksum(&bytes[pos + 8..pos + len as usize]);
                put64(bytes, pos, sum);
                pos += len as usize;
            }
        } else {
            entry.checksum = checksum(&bytes[start..end]);
            bytes[at..at + SectionEntry::LEN].copy_from_slice(&entry.encode());
        }
    }
    Header::seal(&mut bytes[..GROUPS_START]);
}

/// The artifact's checksum (format 6): a 64-bit hash of bytes, fed a piece
/// at a time (the writer checksums sections as it streams them), defined
/// here because it is part of the format and must never change with a
/// dependency's version or with the CPU that computes it.
///
/// # Definition
///
/// The bytes are cut into blocks of [`CHECKSUM_BLOCK`] (256) bytes, the
/// last one padded with zeros. Word `i` of a block (8 bytes, little endian)
/// goes to lane `i` of 32 u64 lanes, each started at its own constant and
/// updated by the mix `lane = M2(rotl(M1(lane ^ word), 8))`, where `Mk`
/// multiplies both 32-bit halves of a u64 by the odd constant `Kk`. Each
/// lane then takes two closing steps with zero words, and the eight groups
/// of four lanes (`4j..4j + 4`) are folded pairwise by the
/// same mix (group `2j + 1` as the words of group `2j`), eight to four to
/// two to one (a tree, so that the fold's latency is three mixes), and the
/// four lanes left and the byte count go through a 64-bit scalar finish
/// (`h = (h ^ lane) * K rotl 31` from `h = count * K`, then `h ^ h >> 32`).
///
/// With AVX2 (detected at run time; std caches the answer for the process)
/// the 32 lanes live in eight ymm registers and a block costs eight times
/// `vpxor` (with the load), `vpmulld`, `vpshufb` (the rotation by a byte),
/// `vpmulld`: 4 instructions per 32 bytes against format 5's 15, eight
/// independent chains to cover the multiply's latency. With SSE4.1 the
/// lanes go in two passes of eight xmm registers; any other CPU runs the
/// plain definition lane by lane. All give the same value (tested against
/// the plain definition, which stays the reference).
///
/// # Strength
///
/// - A change confined to one 8-byte word of the input is always caught:
///   the mix is a bijection of the word for a fixed lane and of the lane for
///   a fixed word (xor, multiplies by odd constants, a rotation), so the
///   word's lane differs after its step and after every later step; the
///   fold and the finish are bijections of each lane given the others; the
///   byte count (so the padding too) is hashed. The same holds for a change
///   of the length alone.
/// - Random damage escapes with probability about 2^-64: each lane is 64
///   bits, as are the fold and the finish.
/// - No cheap structured collision: a lane's difference can be undone only
///   by a word of the same lane (256 bytes on) differing by exactly that
///   difference, and no nonzero difference crosses the mix with certainty:
///   a multiply keeps a difference unchanged only in a half's top bit, which
///   the rotation moves to bit 7 of a half, whence the second multiply
///   spreads it over the 25 bits above through the carries. The likeliest
///   cancellation found (every 1- and 2-bit difference in a word, 4,096
///   random lane states) needs a given 5-bit difference in the lane's next
///   word and happens for 42 in 4,096 states (2^-6.6): a specific 7-bit
///   change in two words, which still fails on 99% of files. Two lanes meet
///   first in the fold, where a pair cancels if both lanes changed by the
///   same difference: the closing steps put a change in the last block three
///   mixes deep there (with one, the same two bits flipped in two words 32
///   bytes apart in the last block gave equal differences for 2^-9.7 of
///   state pairs; with three, no 1- or 2-bit change gave a repeated
///   difference above chance in 65,536 states, 2^-16). Format 5's
///   lanes (`(lane ^ w) * K rotl 29`, one multiply) collided with certainty
///   when bit 63 of a word and bit 28 of the word 32 bytes on were flipped;
///   a plain add, xor or Fletcher sum collides on two top-bit flips.
#[derive(Clone, Debug)]
pub struct Checksum {
    lanes: ChecksumLanes,
    pending: [u8; CHECKSUM_BLOCK],
    pending_len: usize,
    total: u64,
}

/// The bytes a [`Checksum`] takes a step: one 8-byte word for each of its 32 lanes.
pub const CHECKSUM_BLOCK: usize = 256;
/// A [`Checksum`]'s state between blocks.
type ChecksumLanes = [u64; CHECKSUM_BLOCK / 8];
/// The finish's multiplier.
const CHECKSUM_K: u64 = 0x9E37_79B9_7F4A_7C15;
/// The mix's two odd 32-bit multipliers.
const CHECKSUM_K1: u32 = 0x9E37_79B1;
const CHECKSUM_K2: u32 = 0x85EB_CA77;
/// Each lane's start: distinct, odd, well spread.
const CHECKSUM_SEED: ChecksumLanes = {
    let mut lanes = [0u64; CHECKSUM_BLOCK / 8];
    let mut i = 0;
    while i < lanes.len() {
        lanes[i] = ((i as u64 + 1).wrapping_mul(CHECKSUM_K) ^ 0x243F_6A88_85A3_08D3) | 1;
        i += 1;
    }
    lanes
};

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum::new()
    }
}

impl Checksum {
    /// The checksum of nothing yet.
    pub fn new() -> Checksum {
        Checksum { lanes: CHECKSUM_SEED, pending: [0; CHECKSUM_BLOCK], pending_len: 0, total: 0 }
    }

    /// Feeds more bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.pending_len > 0 {
            let take = (CHECKSUM_BLOCK - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < CHECKSUM_BLOCK {
                return;
            }
            let block = self.pending;
            checksum_blocks(&mut self.lanes, &block);
            self.pending_len = 0;
        }
        let whole = bytes.len() - bytes.len() % CHECKSUM_BLOCK;
        checksum_blocks(&mut self.lanes, &bytes[..whole]);
        let rest = &bytes[whole..];
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The checksum of everything fed.
    pub fn finish(&self) -> u64 {
        checksum_digest(&self.lanes, &[], &self.pending[..self.pending_len], self.total)
    }
}

/// The [`Checksum`] of `bytes`.
pub fn checksum(bytes: &[u8]) -> u64 {
    let (whole, tail) = bytes.split_at(bytes.len() - bytes.len() % CHECKSUM_BLOCK);
    checksum_digest(&CHECKSUM_SEED, whole, tail, bytes.len() as u64)
}

/// The checksum of `total` bytes: `lanes` fed the whole blocks `whole`, then
/// `tail` (shorter than a block) padded with zeros, folded and finished.
fn checksum_digest(lanes: &ChecksumLanes, whole: &[u8], tail: &[u8], total: u64) -> u64 {
    let mut h = total.wrapping_mul(CHECKSUM_K);
    for lane in checksum_fold(lanes, whole, tail) {
        h = (h ^ lane).wrapping_mul(CHECKSUM_K).rotate_left(31);
    }
    h ^ (h >> 32)
}

/// Both 32-bit halves of `t` multiplied by `k`.
fn halves_mul(t: u64, k: u32) -> u64 {
    let lo = (t as u32).wrapping_mul(k);
    let hi = ((t >> 32) as u32).wrapping_mul(k);
    (u64::from(hi) << 32) | u64::from(lo)
}

/// The plain definition of a lane's step: the reference the vector paths
/// are tested against.
fn checksum_mix(lane: u64, word: u64) -> u64 {
    halves_mul(halves_mul(lane ^ word, CHECKSUM_K1).rotate_left(8), CHECKSUM_K2)
}

/// Feeds whole blocks (`bytes.len()` a multiple of [`CHECKSUM_BLOCK`]) by
/// the fastest path this CPU has.
fn checksum_blocks(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    debug_assert_eq!(bytes.len() % CHECKSUM_BLOCK, 0);
    #[cfg(target_arch = "x86_64")]
    {
        if robotsieve_core::arch::Avx2::available() {
            // SAFETY: the CPU has AVX2 (detected above, once per process).
            return unsafe { checksum_blocks_avx2(lanes, bytes) };
        }
        if robotsieve_core::arch::Sse41::available() {
            // SAFETY: the CPU has SSE4.1 and SSSE3 (detected above).
            return unsafe { checksum_blocks_sse41(lanes, bytes) };
        }
    }
    checksum_blocks_plain(lanes, bytes)
}

/// [`checksum_blocks`] by the plain definition, lane by lane.
fn checksum_blocks_plain(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    for block in bytes.chunks_exact(CHECKSUM_BLOCK) {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = checksum_mix(*lane, u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
    }
}

/// `lanes` fed the whole blocks `whole` and `tail` padded with zeros, then
/// lanes `4k..4k + 4` folded into lanes `0..4`, by the fastest path this CPU
/// has.
fn checksum_fold(lanes: &ChecksumLanes, whole: &[u8], tail: &[u8]) -> [u64; 4] {
    debug_assert!(whole.len() % CHECKSUM_BLOCK == 0 && tail.len() < CHECKSUM_BLOCK);
    #[cfg(target_arch = "x86_64")]
    if robotsieve_core::arch::Avx2::available() {
        // SAFETY: the CPU has AVX2 (detected above, once per process).
        return unsafe { checksum_fold_avx2(lanes, whole, tail) };
    }
    let mut lanes = *lanes;
    checksum_blocks(&mut lanes, whole);
    if !tail.is_empty() {
        let mut block = [0u8; CHECKSUM_BLOCK];
        block[..tail.len()].copy_from_slice(tail);
        checksum_blocks(&mut lanes, &block);
    }
    checksum_fold_plain(&lanes)
}

/// The two closing steps and the fold of [`checksum_fold`] by the plain definition.
fn checksum_fold_plain(lanes: &ChecksumLanes) -> [u64; 4] {
    let lanes = lanes.map(|lane| checksum_mix(checksum_mix(lane, 0), 0));
    let mix = |a: [u64; 4], b: [u64; 4]| -> [u64; 4] { std::array::from_fn(|i| checksum_mix(a[i], b[i])) };
    let group = |j: usize| -> [u64; 4] { std::array::from_fn(|i| lanes[4 * j + i]) };
    let [a, b, c, d] =
        [mix(group(0), group(1)), mix(group(2), group(3)), mix(group(4), group(5)), mix(group(6), group(7))];
    mix(mix(a, b), mix(c, d))
}

/// The mix on vectors of u64 lanes: `$xor`, `$mul` (32-bit lanes, low
/// half), `$shuffle` (bytes) are the instruction set's intrinsics.
#[cfg(target_arch = "x86_64")]
macro_rules! checksum_mix_vector {
    ($lane:expr, $word:expr, $k1:expr, $k2:expr, $rot:expr, $xor:ident, $mul:ident, $shuffle:ident) => {
        $mul($shuffle($mul($xor($lane, $word), $k1), $rot), $k2)
    };
}

/// The AVX2 mix's constants: `K1`, `K2` in every 32-bit lane, and the
/// `vpshufb` indices that rotate each u64 left by 8 bits (byte j takes byte
/// j - 1 mod 8).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checksum_constants_avx2() -> [std::arch::x86_64::__m256i; 3] {
    use std::arch::x86_64::*;
    [
        _mm256_set1_epi32(CHECKSUM_K1 as i32),
        _mm256_set1_epi32(CHECKSUM_K2 as i32),
        _mm256_setr_epi8(
            7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14,
        ),
    ]
}

/// [`checksum_blocks`] with AVX2: the 32 lanes in eight ymm registers, a
/// block eight independent mixes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checksum_blocks_avx2(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    use std::arch::x86_64::*;
    let state = lanes.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `lanes` is 256 bytes: eight unaligned 32-byte loads.
    let mut acc: [__m256i; 8] = std::array::from_fn(|j| unsafe { _mm256_loadu_si256(state.add(j)) });
    // SAFETY: the CPU has AVX2.
    unsafe { checksum_run_avx2(&mut acc, bytes) };
    for (j, a) in acc.into_iter().enumerate() {
        // SAFETY: as the loads.
        unsafe { _mm256_storeu_si256(state.add(j), a) };
    }
}

/// The whole blocks of `bytes` fed to the lanes `acc` (ymm j holds lanes
/// 4j..4j + 4).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn checksum_run_avx2(acc: &mut [std::arch::x86_64::__m256i; 8], bytes: &[u8]) {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX2.
    let [k1, k2, rot] = unsafe { checksum_constants_avx2() };
    for block in bytes.chunks_exact(CHECKSUM_BLOCK) {
        let words = block.as_ptr().cast::<__m256i>();
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: the block is 256 bytes: word group j is bytes 32j..32j + 32.
            let w = unsafe { _mm256_loadu_si256(words.add(j)) };
            *a = checksum_mix_vector!(*a, w, k1, k2, rot, _mm256_xor_si256, _mm256_mullo_epi32, _mm256_shuffle_epi8);
        }
    }
}

/// [`checksum_fold`] with AVX2: the lanes stay in eight ymm registers from
/// the first block to the fold; the tail is fed through a zeroed block.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checksum_fold_avx2(lanes: &ChecksumLanes, whole: &[u8], tail: &[u8]) -> [u64; 4] {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX2.
    let [k1, k2, rot] = unsafe { checksum_constants_avx2() };
    let state = lanes.as_ptr().cast::<__m256i>();
    // SAFETY: `lanes` is 256 bytes: eight unaligned 32-byte loads.
    let mut acc: [__m256i; 8] = std::array::from_fn(|j| unsafe { _mm256_loadu_si256(state.add(j)) });
    // SAFETY: the CPU has AVX2.
    unsafe { checksum_run_avx2(&mut acc, whole) };
    if !tail.is_empty() {
        // The tail padded with zeros to a block and fed as the loop feeds
        // one: a copy of at most 255 bytes and eight mixes, about half the
        // instructions of reading it word group by word group in place
        // (a group blob's tail is mostly a few hundred bytes of a first use's
        // fixed cost).
        let mut block = [0u8; CHECKSUM_BLOCK];
        block[..tail.len()].copy_from_slice(tail);
        // SAFETY: the CPU has AVX2.
        unsafe { checksum_run_avx2(&mut acc, &block) };
    }
    let mix = |a, b| checksum_mix_vector!(a, b, k1, k2, rot, _mm256_xor_si256, _mm256_mullo_epi32, _mm256_shuffle_epi8);
    // Two closing steps with zero words: the multiplies and the rotation.
    let close = |a| _mm256_mullo_epi32(_mm256_shuffle_epi8(_mm256_mullo_epi32(a, k1), rot), k2);
    let acc = acc.map(|a| close(close(a)));
    let [a, b, c, d] = [mix(acc[0], acc[1]), mix(acc[2], acc[3]), mix(acc[4], acc[5]), mix(acc[6], acc[7])];
    let folded = mix(mix(a, b), mix(c, d));
    let mut out = [0u64; 4];
    // SAFETY: `out` is 32 bytes.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), folded) };
    out
}

/// [`checksum_blocks`] with SSE4.1 (`pmulld`) and SSSE3 (`pshufb`): lanes
/// are independent, so the first 16 go over every block in eight xmm
/// registers, then the other 16.
///
/// # Safety
/// The CPU must support SSE4.1 and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1,ssse3")]
unsafe fn checksum_blocks_sse41(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    use std::arch::x86_64::*;
    let k1 = _mm_set1_epi32(CHECKSUM_K1 as i32);
    let k2 = _mm_set1_epi32(CHECKSUM_K2 as i32);
    let rot = _mm_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14);
    for half in 0..2 {
        // SAFETY: `lanes` is 256 bytes; half h is xmm words 8h..8h + 8.
        let state = unsafe { lanes.as_mut_ptr().cast::<__m128i>().add(8 * half) };
        // SAFETY: eight unaligned 16-byte loads within the half.
        let mut acc: [__m128i; 8] = std::array::from_fn(|j| unsafe { _mm_loadu_si128(state.add(j)) });
        for block in bytes.chunks_exact(CHECKSUM_BLOCK) {
            // SAFETY: the block is 256 bytes; this half's words are bytes 128h..128h + 128.
            let words = unsafe { block.as_ptr().cast::<__m128i>().add(8 * half) };
            for (j, a) in acc.iter_mut().enumerate() {
                // SAFETY: within the block, as above.
                let w = unsafe { _mm_loadu_si128(words.add(j)) };
                *a = checksum_mix_vector!(*a, w, k1, k2, rot, _mm_xor_si128, _mm_mullo_epi32, _mm_shuffle_epi8);
            }
        }
        for (j, a) in acc.into_iter().enumerate() {
            // SAFETY: as the loads.
            unsafe { _mm_storeu_si128(state.add(j), a) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum by its plain definition, word by word: the reference
    /// for [`checksum`] and [`Checksum`] whatever path the CPU takes.
    fn checksum_reference(bytes: &[u8]) -> u64 {
        let mut lanes = CHECKSUM_SEED;
        for block in bytes.chunks(CHECKSUM_BLOCK) {
            let mut padded = [0u8; CHECKSUM_BLOCK];
            padded[..block.len()].copy_from_slice(block);
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane = checksum_mix(*lane, u64::from_le_bytes(padded[8 * i..8 * i + 8].try_into().unwrap()));
            }
        }
        for lane in &mut lanes {
            *lane = checksum_mix(checksum_mix(*lane, 0), 0);
        }
        let mix4 = |a: [u64; 4], b: [u64; 4]| -> [u64; 4] { std::array::from_fn(|i| checksum_mix(a[i], b[i])) };
        let group = |j: usize| -> [u64; 4] { lanes[4 * j..4 * j + 4].try_into().unwrap() };
        let folded = mix4(
            mix4(mix4(group(0), group(1)), mix4(group(2), group(3))),
            mix4(mix4(group(4), group(5)), mix4(group(6), group(7))),
        );
        let mut h = (bytes.len() as u64).wrapping_mul(CHECKSUM_K);
        for lane in folded {
            h = (h ^ lane).wrapping_mul(CHECKSUM_K).rotate_left(31);
        }
        h ^ (h >> 32)
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len as u32).map(|i| (i.wrapping_mul(7919) % 251) as u8).collect()
    }

    #[test]
    fn the_checksum_fed_in_pieces_is_the_checksum_of_the_whole() {
        let data = pattern(1000);
        let whole = checksum(&data);
        for piece in [1, 3, 31, 32, 33, 100, 255, 256, 257, 999] {
            let mut sum = Checksum::new();
            data.chunks(piece).for_each(|c| sum.update(c));
            assert_eq!(sum.finish(), whole, "pieces of {piece}");
        }
        assert_ne!(checksum(&data[..999]), whole);
    }

    #[test]
    fn the_checksum_is_the_format_6_definition() {
        // Pinned: a change of these values is a change of the format.
        assert_eq!(checksum(b""), checksum_reference(b""));
        assert_eq!(checksum(b""), 0x9A06_EDB5_406D_0B62);
        assert_eq!(checksum(&pattern(1000)), 0x754A_AA97_F74B_DC50);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn the_checksum_by_any_path_and_in_any_pieces_is_the_reference(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..5000),
            cuts in proptest::collection::vec(0usize..5000, 0..6),
        ) {
            let expected = checksum_reference(&bytes);
            proptest::prop_assert_eq!(checksum(&bytes), expected);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut sum = Checksum::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                sum.update(&bytes[from..cut]);
                from = cut;
            }
            proptest::prop_assert_eq!(sum.finish(), expected);
            let whole = bytes.len() - bytes.len() % CHECKSUM_BLOCK;
            let mut plain = CHECKSUM_SEED;
            checksum_blocks_plain(&mut plain, &bytes[..whole]);
            #[cfg(target_arch = "x86_64")]
            {
                if robotsieve_core::arch::Avx2::available() {
                    let mut lanes = CHECKSUM_SEED;
                    // SAFETY: the CPU has AVX2.
                    unsafe { checksum_blocks_avx2(&mut lanes, &bytes[..whole]) };
                    proptest::prop_assert_eq!(lanes, plain);
                    let tail = &bytes[whole..];
                    let mut padded = [0u8; CHECKSUM_BLOCK];
                    padded[..tail.len()].copy_from_slice(tail);
                    let mut plain_padded = plain;
                    checksum_blocks_plain(&mut plain_padded, &padded);
                    // SAFETY: as above.
                    let folded = unsafe { checksum_fold_avx2(&CHECKSUM_SEED, &bytes[..whole], tail) };
                    proptest::prop_assert_eq!(folded, checksum_fold_plain(if tail.is_empty() { &plain } else { &plain_padded }));
                }
                if robotsieve_core::arch::Sse41::available() {
                    let mut lanes = CHECKSUM_SEED;
                    // SAFETY: the CPU has SSE4.1 and SSSE3.
                    unsafe { checksum_blocks_sse41(&mut lanes, &bytes[..whole]) };
                    proptest::prop_assert_eq!(lanes, plain);
                }
            }
        }
    }

    #[test]
    fn one_changed_word_and_two_flipped_bits_in_one_lane_are_caught() {
        let data = pattern(3 * CHECKSUM_BLOCK + 40);
        let whole = checksum(&data);
        // Any change of one word (here every bit, and every byte to every
        // value in a few words) and any change of the length.
        for bit in 0..data.len() * 8 {
            let mut d = data.clone();
            d[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(checksum(&d), whole, "bit {bit}");
        }
        for at in [0, 7, 255, 256, 700, data.len() - 1] {
            for value in 0..=255u8 {
                let mut d = data.clone();
                d[at] = value;
                assert_eq!(checksum(&d) == whole, value == data[at], "byte {at} = {value}");
            }
        }
        let mut longer = data.clone();
        longer.push(0);
        assert_ne!(checksum(&longer), whole);
        assert_ne!(checksum(&data[..data.len() - 1]), whole);
        // Two bits in two words of one lane, a block apart: format 5's lanes
        // (one multiply) let bit 63 of a word and bit 28 of the next undo each
        // other; every pair is caught here.
        for (first, second) in [(8, 8 + CHECKSUM_BLOCK), (CHECKSUM_BLOCK - 8, 2 * CHECKSUM_BLOCK - 8)] {
            for a in 0..64 {
                for b in 0..64 {
                    let mut d = data.clone();
                    d[first + a / 8] ^= 1 << (a % 8);
                    d[second + b / 8] ^= 1 << (b % 8);
                    assert_ne!(checksum(&d), whole, "bits {a} and {b}");
                }
            }
        }
    }

    #[test]
    fn records_read_back_what_was_written() {
        let header = Header { flags: FLAG_EXPLAIN, file_len: 12345, checksum: 99, sections: 6 };
        assert_eq!(Header::decode(&header.encode()), Ok(header));
        let entry = SectionEntry { section: Section::Keys, offset: 8, len: 16, checksum: 7 };
        assert_eq!(SectionEntry::decode(&entry.encode()), Ok(entry));
        let origin = OriginRecord { key_off: 3, key_len: 20, info: 0x2_01f4, groups: vec![1, 2, 3] };
        let mut b = Vec::new();
        origin.encode(&mut b);
        assert_eq!(b.len(), 32);
        assert_eq!((OriginRecord::key_range(&b), OriginRecord::info(&b)), ((3, 20), 0x2_01f4));
        assert_eq!((0..3).map(|a| OriginRecord::group(&b, a)).collect::<Vec<_>>(), vec![1, 2, 3]);
        let slot = Slot { hash: 5, origin: 9 };
        assert_eq!(Slot::decode(&slot.encode()), slot);
        let part = PartRecord { kind: 1, stride2: 2, count: 3, sinks: 4, start: 5, slots: 6, a: 7, b: 8, c: 9 };
        let mut pb = [0u8; PartRecord::LEN];
        part.encode(&mut pb);
        assert_eq!(PartRecord::decode(&pb), part);
    }

    #[test]
    fn an_older_format_is_named_with_a_hint_to_recompile() {
        let mut b = Header { flags: 0, file_len: 0, checksum: 0, sections: 0 }.encode();
        put32(&mut b, 8, 3);
        let err = Header::decode(&b).unwrap_err();
        assert!(matches!(err, HeaderError::Version(VersionMismatch { of: Versioned::Format, found: 3, .. })), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("format version 3, written by an older robotsieve")
                && err.contains("compile the artifact again"),
            "{err}"
        );
    }

    #[test]
    fn home_slots_follow_hash_order() {
        assert_eq!(Slot::home(u64::MAX, 4), 15);
        assert_eq!(Slot::home(1 << 60, 4), 1);
        assert_eq!(Slot::home(123, 0), 0);
    }

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

    #[test]
    fn reseal_restores_the_checksums_the_writer_made() {
        let mut b = vec![0u8; GROUPS_START + 24];
        let entry = SectionEntry { section: Section::Keys, offset: GROUPS_START as u64, len: 20, checksum: 0 };
        let header = Header { flags: 0, file_len: b.len() as u64, checksum: 0, sections: 1 };
        b[..Header::LEN].copy_from_slice(&header.encode());
        b[Header::LEN..Header::LEN + SectionEntry::LEN].copy_from_slice(&entry.encode());
        b[GROUPS_START..GROUPS_START + 20].copy_from_slice(b"https://example.com/");
        reseal(&mut b);
        let stored = SectionEntry::decode(&b[Header::LEN..]).unwrap();
        assert_eq!(stored.checksum, checksum(&b[GROUPS_START..GROUPS_START + 20]));
        assert_eq!(Header::decode(&b).unwrap().checksum, Header::checksum_of(&b[..GROUPS_START]));
    }

    #[test]
    fn encoding_a_group_without_parts_names_the_count() {
        let empty = MatcherBuf { labels: vec![0], rules: vec![NO_RULE], parts: vec![] };
        let e = encode_group(&empty, false, &[]).unwrap_err();
        assert_eq!(e, EncodeError::PartCount { parts: 0 });
        assert_eq!(e.to_string(), "a group of 0 parts");
    }
}
