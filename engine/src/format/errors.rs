//! Why an artifact is refused: a version mismatch, damage to the file,
//! damage to one group, a shard set that does not fit together.

use super::{Header, ListSection, Section};
use std::fmt;
use std::path::PathBuf;

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
    /// The layout ([`FORMAT_VERSION`](super::FORMAT_VERSION)).
    Format,
    /// The matching semantics the automata were built with ([`SEMANTICS_VERSION`](super::SEMANTICS_VERSION)).
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
                "format version {found}, written by an older robotsieve; this one reads version {supported}: rebuild it from its inputs with `robotsieve compile`"
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
/// (`HeaderError::Version`). It is opaque, as regex-automata's
/// `DeserializeError` is, so that a new check is no breaking change:
/// [`Damage::kind`] says what kind it is, [`Damage::section`] where, and its
/// `Display` is the message robotsieve prints after the file's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage(Fault);

impl Damage {
    /// What kind of damage this is.
    pub fn kind(&self) -> DamageKind {
        match &self.0 {
            Fault::ShortFile { .. } => DamageKind::ShortFile,
            Fault::NotAnArtifact => DamageKind::NotAnArtifact,
            Fault::OtherByteOrder => DamageKind::OtherByteOrder,
            Fault::UnknownFlags { .. } => DamageKind::UnknownFlags,
            Fault::Truncated { .. } => DamageKind::Truncated,
            Fault::SectionTable { .. } => DamageKind::SectionTable,
            Fault::HeaderChecksum { .. } => DamageKind::HeaderChecksum,
            Fault::Digest { .. } => DamageKind::Digest,
            Fault::UnknownSection { .. } => DamageKind::UnknownSection,
            Fault::SectionBounds { .. } => DamageKind::SectionBounds,
            Fault::SectionChecksum { .. } => DamageKind::SectionChecksum,
            Fault::SectionTwice { .. } => DamageKind::SectionTwice,
            Fault::SectionMissing { .. } => DamageKind::SectionMissing,
            Fault::SectionGap { .. } => DamageKind::SectionGap,
            Fault::SectionMisaligned { .. } => DamageKind::SectionMisaligned,
            Fault::Meta { .. } => DamageKind::Meta,
            Fault::OriginRecords => DamageKind::OriginRecords,
            Fault::GroupOrder { .. } => DamageKind::GroupOrder,
            Fault::GroupsEnd => DamageKind::GroupsEnd,
            Fault::OriginKey { .. } => DamageKind::OriginKey,
            Fault::OriginFetchKind { .. } => DamageKind::OriginFetchKind,
            Fault::OriginGroup { .. } => DamageKind::OriginGroup,
            Fault::SlotCount => DamageKind::SlotCount,
            Fault::SlotOrigin { .. } => DamageKind::SlotOrigin,
            Fault::SlotsFilled { .. } => DamageKind::SlotsFilled,
            Fault::OriginNotIndexed { .. } => DamageKind::OriginNotIndexed,
            Fault::List { .. } => DamageKind::List,
        }
    }

    /// The section the damage is in, when it is confined to one.
    pub fn section(&self) -> Option<Section> {
        match &self.0 {
            Fault::SectionBounds { section, .. }
            | Fault::SectionChecksum { section }
            | Fault::SectionTwice { section }
            | Fault::SectionMissing { section }
            | Fault::SectionMisaligned { section }
            | Fault::List { section, .. } => Some(*section),
            Fault::Meta { .. } => Some(Section::Meta),
            Fault::OriginRecords
            | Fault::OriginKey { .. }
            | Fault::OriginFetchKind { .. }
            | Fault::OriginGroup { .. } => Some(Section::Origins),
            Fault::GroupOrder { .. } | Fault::GroupsEnd => Some(Section::GroupIndex),
            Fault::SlotCount | Fault::SlotOrigin { .. } | Fault::SlotsFilled { .. } => Some(Section::Slots),
            _ => None,
        }
    }
}

impl From<Fault> for Damage {
    fn from(fault: Fault) -> Damage {
        Damage(fault)
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Damage {}

/// What kind of damage a [`Damage`] is ([`Damage::kind`]), for code that
/// reacts to some kinds; the message says the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DamageKind {
    /// The file is shorter than a header.
    ShortFile,
    /// The first 8 bytes are not the magic (`RSIEVE\r\n`): not an artifact.
    NotAnArtifact,
    /// Written on a machine of the other byte order.
    OtherByteOrder,
    /// The header sets flags this build does not know.
    UnknownFlags,
    /// The header's file length is not the file's.
    Truncated,
    /// The section table has too many entries, or does not fit the file.
    SectionTable,
    /// The header and section table do not match their checksum.
    HeaderChecksum,
    /// The header's content digest is not that of the checksums it covers.
    Digest,
    /// An entry of the section table names no section this build knows.
    UnknownSection,
    /// A section lies outside the file or is not 8-byte aligned.
    SectionBounds,
    /// A section's bytes do not match their checksum.
    SectionChecksum,
    /// A section appears twice in the table.
    SectionTwice,
    /// A required section is missing.
    SectionMissing,
    /// Bytes between sections that are no padding.
    SectionGap,
    /// A section's length does not fit its items' size.
    SectionMisaligned,
    /// The META section is not the JSON this build writes.
    Meta,
    /// The origin records do not divide their section.
    OriginRecords,
    /// The group index does not lay a group after the one before.
    GroupOrder,
    /// The groups section does not end with its last group.
    GroupsEnd,
    /// An origin's key lies outside the keys section.
    OriginKey,
    /// An origin's fetch kind is unknown.
    OriginFetchKind,
    /// An origin refers to a group the artifact does not have.
    OriginGroup,
    /// The origin index's size is not a power of two at least the number of origins.
    SlotCount,
    /// An origin index slot names an origin the artifact does not have.
    SlotOrigin,
    /// The origin index does not hold every origin once.
    SlotsFilled,
    /// An origin is not found through the index under its own key ([`crate::artifact::Artifact::verify`]).
    OriginNotIndexed,
    /// A list section (PREFERENCES or CRAWL) is damaged.
    List,
}

/// A [`Damage`] with what it names (which section, offset, origin, group):
/// what the checks build and the message is made from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The file is shorter than a header.
    ShortFile {
        /// The file's length.
        len: usize,
    },
    /// The first 8 bytes are not [`MAGIC`](super::MAGIC): not an artifact.
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
    /// The header's content digest differs from the one its section and
    /// group checksums give.
    Digest {
        /// The stored digest.
        stored: u64,
        /// The digest of the checksums.
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
    /// A list section (PREFERENCES or CRAWL, `ListSection`) is damaged.
    List {
        /// Which section.
        section: Section,
        /// What is wrong.
        problem: ListProblem,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::ShortFile { len } => write!(f, "{len} bytes is shorter than the {}-byte header", Header::LEN),
            Fault::NotAnArtifact => f.write_str("wrong magic bytes: this is not a robotsieve artifact"),
            Fault::OtherByteOrder => f.write_str("written on a machine of the other byte order"),
            Fault::UnknownFlags { flags } => write!(f, "unknown flags {flags:#x}: written by a newer robotsieve?"),
            Fault::Truncated { stored, actual } => {
                write!(f, "header says {stored} bytes but the file has {actual} (truncated?)")
            }
            Fault::SectionTable { count } => write!(f, "section table of {count} entries does not fit"),
            Fault::HeaderChecksum { stored, computed } => write!(
                f,
                "header checksum mismatch (stored {stored:016x}, computed {computed:016x}): the file is damaged"
            ),
            Fault::Digest { stored, computed } => write!(
                f,
                "content digest mismatch (stored {stored:016x}, computed {computed:016x}): the file is damaged"
            ),
            Fault::UnknownSection { kind } => write!(f, "unknown section kind {kind}"),
            Fault::SectionBounds { section, offset, len } => {
                write!(f, "section {} at {offset}+{len} is out of bounds or misaligned", section.name())
            }
            Fault::SectionChecksum { section } => {
                write!(f, "section {}: checksum mismatch: the file is damaged", section.name())
            }
            Fault::SectionTwice { section } => write!(f, "section {} appears twice", section.name()),
            Fault::SectionMissing { section } => write!(f, "section {} is missing", section.name()),
            Fault::SectionGap { from, to } => {
                write!(f, "the sections do not follow one another (bytes {from} to {to})")
            }
            Fault::SectionMisaligned { section } => write!(f, "section {} is misaligned", section.name()),
            Fault::Meta { problem } => write!(f, "meta: {problem}"),
            Fault::OriginRecords => f.write_str("origin records do not divide their section"),
            Fault::GroupOrder { group } => {
                write!(f, "group {group} does not follow group {} in the groups section", group.wrapping_sub(1))
            }
            Fault::GroupsEnd => f.write_str("the groups section does not end with its last group"),
            Fault::OriginKey { origin } => write!(f, "origin {origin}: key out of range"),
            Fault::OriginFetchKind { origin, kind } => write!(f, "origin {origin}: unknown fetch kind {kind}"),
            Fault::OriginGroup { origin, group, groups } => {
                write!(f, "origin {origin} refers to group {group} of {groups}")
            }
            Fault::SlotCount => f.write_str("origin index size is not a power of two at least the number of origins"),
            Fault::SlotOrigin { origin, origins } => {
                write!(f, "origin index points at origin {origin} of {origins}")
            }
            Fault::SlotsFilled { filled, origins } => write!(f, "origin index holds {filled} origins of {origins}"),
            Fault::OriginNotIndexed { origin, key } => {
                write!(f, "origin {origin} ({key}) is not found through the index")
            }
            Fault::List { section, problem } => {
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

/// What is wrong with a list section ([`DamageKind::List`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ListProblem {
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
/// ([`DamageKind::Meta`]): what the reader of `Meta::to_json`'s output found,
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

/// What is wrong with a damaged group blob (`GroupView::at`,
/// `GroupView::check`, `GroupView::part`), carried by
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::put32;

    #[test]
    fn an_older_format_is_named_with_a_hint_to_recompile() {
        let mut b = Header { flags: 0, file_len: 0, checksum: 0, sections: 0, digest: 0 }.encode();
        put32(&mut b, 8, 3);
        let err = Header::decode(&b).unwrap_err();
        assert!(matches!(err, HeaderError::Version(VersionMismatch { of: Versioned::Format, found: 3, .. })), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("format version 3, written by an older robotsieve")
                && err.contains("rebuild it from its inputs with `robotsieve compile`"),
            "{err}"
        );
    }
}
