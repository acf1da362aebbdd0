//! The artifact: every origin's compiled rules in one memory-mappable file.
//!
//! A compiler writes it once (see `robotsieve_compiler::writer`); workers map
//! it with memmap2 and answer from it in place, without decoding. Opening
//! checks everything a lookup will rely on (header, checksum, every offset,
//! every transition), so that a truncated, damaged or foreign file gives a
//! clear [`ArtifactError`], and a lookup afterwards can neither read out of
//! bounds nor panic.
//!
//! # Layout (format version 3)
//!
//! All integers are in the byte order of the machine that wrote the file (the
//! header records it, and a reader of the other order refuses the file). Every
//! section starts at a multiple of 8 bytes.
//!
//! ```text
//! header   magic "RSIEVE\r\n", format version u32, semantics version u32,
//!          byte-order mark u32 (0x01020304), flags u32 (bit 0: explain),
//!          file length u64, checksum u64 (of every other byte of the file),
//!          section count u32, reserved u32
//! sections count x { kind u32, reserved u32, offset u64, length u64 }
//! META     JSON: agents, build information (small, read once; see below)
//! SLOTS    origin hash table, power-of-two slots of { hash u64, origin u64 }
//!          (origin u64::MAX = empty), linear probing
//! KEY_ENDS u32 per origin: end of its key in KEYS
//! KEYS     the canonical origin keys (`scheme://host[:port]`), concatenated
//! ORIGIN_GROUPS u32 per origin and agent: the group that applies
//! ORIGIN_INFO   u32 per origin: fetch status | kind << 16 (see [`FetchKind`])
//! GROUPS   one GroupRecord per distinct compiled group
//! PARTS    PartRecords (a group has one to three parts), 48 bytes each:
//!          kind u32, stride2 u32, count u32, sinks u32, start u32, slots u32,
//!          a u64, b u64, c u64 (see [`PartRecord`] for each kind's fields)
//! TABLES   aligned arrays the records point into (absolute file offsets)
//! PREFERENCES  optional: the Content-Signal and Content-Usage lines per
//!          origin and agent, self-contained (see [`crate::preference_store`])
//! ```
//!
//! A DFA part is stored dense ([`PART_DFA16`], [`PART_DFA32`]: premultiplied
//! transitions, `count << stride2` of them) or row-displaced ([`PART_COMB`],
//! see [`crate::comb`]: `count` rows `[default, base]` of u32, then `slots`
//! slots `[owner, target]`, contiguous behind `b`; in a [`PART_COMB16`] part,
//! for automata of fewer than 65,536 states and answers, the slots are u16
//! pairs and each row is `[default | answer << 16, base]`, with no answers
//! table at `c`; then `stride2` accelerated states `[state, escape bytes]`),
//! whichever is smaller. Version 2 added the comb part
//! and the `slots` field (reserved in version 1); version 3 pairs the comb
//! arrays (version 2 kept defaults, bases, targets and owners in four
//! arrays, so a step touched four cache lines instead of two) and adds the
//! 16-bit comb.
//!
//! The META section is JSON, written and read with no dependency: it is a few
//! hundred bytes read once per open, where a human-readable, self-describing
//! format helps `inspect` and debugging, and a binary serialiser would add a
//! dependency (bincode, the usual choice, is unmaintained) for no speed gain.

use crate::comb::{Accel, CombDfa, CombTables, SlotId};
use crate::dfa::Walker;
use crate::dfa::{Dfa, DfaError, Transitions};
use crate::label::Label;
use crate::preference::PreferenceLine;
use crate::preference_store::PreferenceTable;
use crate::rules::{Prefilter, RuleList};
use crate::walk::{self, Walk};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The first eight bytes of every artifact. The CR LF catches text-mode
/// mangling, as in PNG.
pub const MAGIC: [u8; 8] = *b"RSIEVE\r\n";
/// The layout version this code reads and writes.
pub const FORMAT_VERSION: u32 = 3;
/// The version of the matching semantics the automata were built with. A
/// change of semantics (a fix to Google conformance) bumps it, so old
/// artifacts are refused rather than silently answering differently.
pub const SEMANTICS_VERSION: u32 = 1;
/// Written in native order; reads back differently on a machine of the other order.
pub const BYTE_ORDER_MARK: u32 = 0x0102_0304;
/// Header flag: the automata identify rules and the explanation tables are present.
pub const FLAG_EXPLAIN: u32 = 1;
/// Size of the fixed header in bytes.
pub const HEADER_LEN: usize = 48;
/// Size of one section table entry.
pub const SECTION_ENTRY_LEN: usize = 24;
/// Size of a [`GroupRecord`] in bytes.
pub const GROUP_RECORD_LEN: usize = 48;
/// Size of a [`PartRecord`] in bytes.
pub const PART_RECORD_LEN: usize = 48;
/// An empty hash-table slot.
pub const EMPTY_SLOT: u64 = u64::MAX;
/// `rules[rank]` when the rank does not identify a rule.
pub const NO_RULE: u32 = u32::MAX;

/// The sections of an artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Section {
    /// JSON metadata.
    Meta = 1,
    /// The origin hash table.
    Slots = 2,
    /// End offsets of the origin keys.
    KeyEnds = 3,
    /// The origin keys.
    Keys = 4,
    /// Group id per origin and agent.
    OriginGroups = 5,
    /// Fetch status and kind per origin.
    OriginInfo = 6,
    /// Group records.
    Groups = 7,
    /// Part records.
    Parts = 8,
    /// The tables records point into.
    Tables = 9,
    /// Usage preferences per origin and agent (optional; see [`crate::preference_store`]).
    Preferences = 10,
}

impl Section {
    /// Every section, in file order.
    pub const ALL: [Section; 10] = [
        Section::Meta,
        Section::Slots,
        Section::KeyEnds,
        Section::Keys,
        Section::OriginGroups,
        Section::OriginInfo,
        Section::Groups,
        Section::Parts,
        Section::Tables,
        Section::Preferences,
    ];

    /// Whether every artifact has the section (all but [`Section::Preferences`]).
    pub fn is_required(self) -> bool {
        self != Section::Preferences
    }

    /// The section's name in messages and `inspect`.
    pub fn name(self) -> &'static str {
        match self {
            Section::Meta => "meta",
            Section::Slots => "origin index",
            Section::KeyEnds => "origin key ends",
            Section::Keys => "origin keys",
            Section::OriginGroups => "origin groups",
            Section::OriginInfo => "origin fetch info",
            Section::Groups => "groups",
            Section::Parts => "automaton parts",
            Section::Tables => "tables",
            Section::Preferences => "preferences",
        }
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
    /// The packed form stored in ORIGIN_INFO.
    pub fn pack(self) -> u32 {
        u32::from(self.status) | (self.kind as u32) << 16
    }

    fn unpack(v: u32) -> Option<FetchInfo> {
        Some(FetchInfo { kind: FetchKind::from_u32(v >> 16)?, status: (v & 0xffff) as u16 })
    }
}

/// A distinct compiled group, as stored in GROUPS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupRecord {
    /// Number of ranks including rank 0 (entries of the labels and rules tables).
    pub ranks: u32,
    /// Number of parts.
    pub parts: u32,
    /// Offset of `ranks` u32 labels (`labels[rank]`).
    pub labels_off: u64,
    /// Offset of `ranks` u32 rule indexes into the explanation (`NO_RULE` when none).
    pub rules_off: u64,
    /// Index of the first part in PARTS.
    pub first_part: u64,
    /// Offset of `explain_count` explanation entries (0 when not explained).
    pub explain_off: u64,
    /// Number of explanation entries (the group's rules).
    pub explain_count: u32,
}

/// One part of a group, as stored in PARTS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartRecord {
    /// [`PART_DFA16`], [`PART_DFA32`], [`PART_RULES`], [`PART_COMB`] or [`PART_COMB16`].
    pub kind: u32,
    /// Dense DFA: log2 of the stride. Comb: the number of accelerated states
    /// (listed after the slots). Rules: 0.
    pub stride2: u32,
    /// DFA and comb: number of states. Rules: number of rules.
    pub count: u32,
    /// DFA and comb: number of sink states.
    pub sinks: u32,
    /// Dense DFA: premultiplied start state. Comb: the start state's index.
    pub start: u32,
    /// Comb: number of next and check slots (0 for the others).
    pub slots: u32,
    /// DFA and comb: classes (256 bytes). Rules: concatenated patterns.
    pub a: u64,
    /// Dense DFA: transitions. Comb: `count` rows (pairs of u32), then
    /// `slots` slots (pairs of u32, or of u16 in [`PART_COMB16`]). Rules:
    /// `count` u32 pattern ends.
    pub b: u64,
    /// DFA and comb: `count` u32 answers (none in [`PART_COMB16`]: its rows
    /// carry them). Rules: `count` u32 ranks.
    pub c: u64,
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

/// One rule of a group's explanation table (24 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExplainEntry {
    /// The robots.txt line the rule came from.
    pub line: u32,
    /// Bit 0: allow; bit 1: the directory rule derived from an `index.htm` allow.
    pub flags: u32,
    /// Offset of the pattern text.
    pub text_off: u64,
    /// Length of the pattern text.
    pub text_len: u64,
}

/// Size of an [`ExplainEntry`].
pub const EXPLAIN_ENTRY_LEN: usize = 24;

/// Why an artifact could not be opened.
#[derive(Debug)]
pub enum ArtifactError {
    /// The file could not be read or mapped.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The file is not an artifact, or is damaged; the message says where.
    Invalid(String),
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ArtifactError::Invalid(msg) => write!(f, "not a valid robotsieve artifact: {msg}"),
        }
    }
}

impl std::error::Error for ArtifactError {}

/// An agent the artifact was not compiled for ([`Artifact::find_agent`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAgent {
    /// The agent asked for.
    pub agent: String,
    /// The agents the artifact was compiled for.
    pub built_for: Vec<String>,
}

impl fmt::Display for UnknownAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let agent = &self.agent;
        write!(f, "built for {}, not for {agent}: compile with --agent {agent}", self.built_for.join(" and "))
    }
}

impl std::error::Error for UnknownAgent {}

fn invalid<T>(msg: impl Into<String>) -> Result<T, ArtifactError> {
    Err(ArtifactError::Invalid(msg.into()))
}

/// Where the checksum is stored in the header.
pub const CHECKSUM_AT: std::ops::Range<usize> = 32..40;

/// The checksum of a whole artifact: every byte but the checksum field itself,
/// so that a damaged header is caught as surely as a damaged table.
pub fn file_checksum(file: &[u8]) -> u64 {
    checksum(&file[..CHECKSUM_AT.start]).rotate_left(17) ^ checksum(&file[CHECKSUM_AT.end..])
}

/// A fast 64-bit hash over 8-byte words in four independent lanes, defined
/// here because it is part of the format and must never change with a
/// dependency's version.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes = [0x243F_6A88_85A3_08D3u64, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            *lane = (*lane ^ w).wrapping_mul(K).rotate_left(29);
        }
    }
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    for lane in lanes {
        h = (h ^ lane).wrapping_mul(K).rotate_left(31);
    }
    for &b in blocks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K);
    }
    h ^ (h >> 32)
}

/// The metadata of an artifact (the META section).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// The crawlers, each as `TOKEN[,TOKEN...]`, in ORIGIN_GROUPS order.
    pub agents: Vec<String>,
    /// Free-form build information (tool version, sources, options), as JSON
    /// key/value string pairs.
    pub build: Vec<(String, String)>,
}

impl Meta {
    /// Serialises as a small JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"agents\":[");
        for (i, agent) in self.agents.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_string(&mut out, agent);
        }
        out.push_str("],\"build\":{");
        for (i, (k, v)) in self.build.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_string(&mut out, k);
            out.push(':');
            json_string(&mut out, v);
        }
        out.push_str("}}");
        out
    }

    /// Parses what [`Meta::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<Meta, String> {
        let mut p = JsonReader { s: text.as_bytes(), i: 0 };
        let mut meta = Meta::default();
        p.expect(b'{')?;
        p.key("agents")?;
        p.expect(b'[')?;
        if !p.eat(b']') {
            loop {
                meta.agents.push(p.string()?);
                if p.eat(b']') {
                    break;
                }
                p.expect(b',')?;
            }
        }
        p.expect(b',')?;
        p.key("build")?;
        p.expect(b'{')?;
        if !p.eat(b'}') {
            loop {
                let k = p.string()?;
                p.expect(b':')?;
                meta.build.push((k, p.string()?));
                if p.eat(b'}') {
                    break;
                }
                p.expect(b',')?;
            }
        }
        p.expect(b'}')?;
        Ok(meta)
    }
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Just enough JSON to read back [`Meta::to_json`]: objects of strings.
struct JsonReader<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonReader<'_> {
    fn eat(&mut self, b: u8) -> bool {
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", b as char, self.i))
        }
    }

    fn key(&mut self, name: &str) -> Result<(), String> {
        let k = self.string()?;
        if k != name {
            return Err(format!("expected key {name:?}, found {k:?}"));
        }
        self.expect(b':')
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.s.get(self.i).copied() {
                None => return Err("unterminated string".into()),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(out).map_err(|e| e.to_string());
                }
                Some(b'\\') => {
                    let esc = self.s.get(self.i + 1).copied();
                    self.i += 2;
                    match esc {
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(b'u') => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
                            let code = u32::from_str_radix(std::str::from_utf8(hex).map_err(|e| e.to_string())?, 16)
                                .map_err(|e| e.to_string())?;
                            let c = char::from_u32(code).ok_or("bad \\u escape")?;
                            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                            self.i += 4;
                        }
                        _ => return Err(format!("unsupported escape at byte {}", self.i)),
                    }
                }
                Some(b) => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
    }
}

/// The bytes of an artifact: a memory map, or an 8-byte aligned buffer.
enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u64>, usize),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(words, len) => &bytemuck::cast_slice(words)[..*len],
        }
    }
}

/// Where each section lies: (offset, length) indexed by `Section as usize - 1`.
type SectionTable = [(usize, usize); 10];

/// An opened, fully validated artifact.
pub struct Artifact {
    backing: Backing,
    sections: SectionTable,
    meta: Meta,
    flags: u32,
    origins: usize,
    groups: usize,
    slot_mask: usize,
    /// The prefilter of each per-rule part, by part index, built when the
    /// part is first used: a frontier reaches only some of them, and built
    /// all at open they cost 26 MB and a third of the open time on the whole
    /// corpus. Never set for automaton parts.
    prefilters: Vec<OnceLock<Prefilter>>,
}

impl fmt::Debug for Artifact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Artifact")
            .field("bytes", &self.bytes().len())
            .field("agents", &self.meta.agents)
            .field("origins", &self.origins)
            .field("groups", &self.groups)
            .finish()
    }
}

impl Artifact {
    /// Maps and validates an artifact file.
    pub fn open(path: &Path) -> Result<Artifact, ArtifactError> {
        let io = |error| ArtifactError::Io { path: path.to_path_buf(), error };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read-only; robotsieve never writes an artifact in
        // place (writers use a temporary file and rename), so the bytes do not
        // change under us unless another program modifies the file, which
        // memmap2 cannot rule out and every mmap user accepts.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        let artifact = Artifact::validate(Backing::Mapped(map)).map_err(|e| match e {
            ArtifactError::Invalid(msg) => ArtifactError::Invalid(format!("{}: {msg}", path.display())),
            other => other,
        })?;
        // The check read every page; lookups will read the few their origins need.
        if let Backing::Mapped(map) = &artifact.backing {
            crate::mapped::release(map, 0, map.len());
        }
        Ok(artifact)
    }

    /// Validates an artifact held in memory (tests, or bytes from elsewhere).
    pub fn from_bytes(bytes: &[u8]) -> Result<Artifact, ArtifactError> {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Artifact::validate(Backing::Owned(words, bytes.len()))
    }

    fn bytes(&self) -> &[u8] {
        self.backing.bytes()
    }

    fn validate(backing: Backing) -> Result<Artifact, ArtifactError> {
        let bytes = backing.bytes();
        if bytes.len() < HEADER_LEN {
            return invalid(format!("{} bytes is shorter than the {HEADER_LEN}-byte header", bytes.len()));
        }
        if bytes[..8] != MAGIC {
            return invalid("wrong magic bytes: this is not a robotsieve artifact");
        }
        let u32_at = |off: usize| u32::from_ne_bytes(bytes[off..off + 4].try_into().expect("4 bytes"));
        let u64_at = |off: usize| u64::from_ne_bytes(bytes[off..off + 8].try_into().expect("8 bytes"));
        if u32_at(16) != BYTE_ORDER_MARK {
            return invalid("written on a machine of the other byte order");
        }
        let (format, semantics) = (u32_at(8), u32_at(12));
        if format > FORMAT_VERSION {
            return invalid(format!(
                "format version {format}, written by a newer robotsieve; this one reads version {FORMAT_VERSION}: upgrade robotsieve, or compile the artifact again with this one"
            ));
        }
        if format < FORMAT_VERSION {
            return invalid(format!(
                "format version {format}, written by an older robotsieve; this one reads version {FORMAT_VERSION}: compile the artifact again"
            ));
        }
        if semantics != SEMANTICS_VERSION {
            let (age, advice) = if semantics > SEMANTICS_VERSION {
                ("a newer", "upgrade robotsieve, or compile the artifact again with this one")
            } else {
                ("an older", "compile the artifact again")
            };
            return invalid(format!(
                "semantics version {semantics}, built by {age} robotsieve; this one has version {SEMANTICS_VERSION}: {advice}"
            ));
        }
        let flags = u32_at(20);
        if flags & !FLAG_EXPLAIN != 0 {
            return invalid(format!("unknown flags {flags:#x}: written by a newer robotsieve?"));
        }
        let file_len = u64_at(24);
        if file_len != bytes.len() as u64 {
            return invalid(format!("header says {file_len} bytes but the file has {} (truncated?)", bytes.len()));
        }
        let expected = u64_at(CHECKSUM_AT.start);
        let actual = file_checksum(bytes);
        if expected != actual {
            return invalid(format!(
                "checksum mismatch (stored {expected:016x}, computed {actual:016x}): the file is damaged"
            ));
        }
        let count = u32_at(40) as usize;
        let table_end = HEADER_LEN + count * SECTION_ENTRY_LEN;
        if count > 64 || table_end > bytes.len() {
            return invalid(format!("section table of {count} entries does not fit"));
        }
        let mut sections: SectionTable = [(0, 0); 10];
        let mut seen = [false; 10];
        for i in 0..count {
            let e = HEADER_LEN + i * SECTION_ENTRY_LEN;
            let (kind, off, len) = (u32_at(e), u64_at(e + 8), u64_at(e + 16));
            let Some(section) = Section::ALL.iter().find(|s| **s as u32 == kind) else {
                return invalid(format!("unknown section kind {kind}"));
            };
            let end = off.checked_add(len);
            if off % 8 != 0 || (off as usize) < table_end || end.is_none_or(|end| end > bytes.len() as u64) {
                return invalid(format!("section {} at {off}+{len} is out of bounds or misaligned", section.name()));
            }
            sections[*section as usize - 1] = (off as usize, len as usize);
            seen[*section as usize - 1] = true;
        }
        if let Some(missing) = Section::ALL.iter().find(|s| s.is_required() && !seen[**s as usize - 1]) {
            return invalid(format!("section {} is missing", missing.name()));
        }
        let section = |s: Section| {
            let (off, len) = sections[s as usize - 1];
            &bytes[off..off + len]
        };
        let meta_text =
            std::str::from_utf8(section(Section::Meta)).map_err(|e| ArtifactError::Invalid(format!("meta: {e}")))?;
        let meta = Meta::from_json(meta_text).map_err(|e| ArtifactError::Invalid(format!("meta: {e}")))?;
        let agents = meta.agents.len();

        let slots: &[u64] = cast(section(Section::Slots), Section::Slots)?;
        let key_ends: &[u32] = cast(section(Section::KeyEnds), Section::KeyEnds)?;
        let keys = section(Section::Keys);
        let origin_groups: &[u32] = cast(section(Section::OriginGroups), Section::OriginGroups)?;
        let origin_info: &[u32] = cast(section(Section::OriginInfo), Section::OriginInfo)?;
        let origins = key_ends.len();
        let groups = section(Section::Groups).len() / GROUP_RECORD_LEN;
        if section(Section::Groups).len() % GROUP_RECORD_LEN != 0 {
            return invalid("group records do not divide the groups section");
        }
        if slots.len() % 2 != 0 || !(slots.len() / 2).is_power_of_two() || slots.len() / 2 < origins {
            return invalid("origin index size is not a power of two at least the number of origins");
        }
        if origin_groups.len() != origins * agents || origin_info.len() != origins {
            return invalid(format!("per-origin tables do not match {origins} origins and {agents} agents"));
        }
        let mut prev = 0u32;
        for &end in key_ends {
            if end < prev || end as usize > keys.len() {
                return invalid("origin key offsets are not increasing within the keys section");
            }
            prev = end;
        }
        if let Some(g) = origin_groups.iter().find(|&&g| g as usize >= groups) {
            return invalid(format!("an origin refers to group {g} of {groups}"));
        }
        if let Some(info) = origin_info.iter().find(|&&i| FetchInfo::unpack(i).is_none()) {
            return invalid(format!("unknown origin fetch kind {}", info >> 16));
        }
        for slot in slots.chunks_exact(2) {
            if slot[1] != EMPTY_SLOT && slot[1] as usize >= origins {
                return invalid(format!("origin index points at origin {} of {origins}", slot[1]));
            }
        }
        let slot_mask = slots.len() / 2 - 1;
        let parts = sections[Section::Parts as usize - 1].1 / PART_RECORD_LEN;
        let prefilters = (0..parts).map(|_| OnceLock::new()).collect();
        if seen[Section::Preferences as usize - 1] {
            PreferenceTable::parse(section(Section::Preferences), origins, agents).map_err(ArtifactError::Invalid)?;
        }
        let artifact = Artifact { slot_mask, sections, meta, flags, origins, groups, backing, prefilters };
        for g in 0..groups {
            artifact.validate_group(g)?;
        }
        Ok(artifact)
    }

    fn validate_group(&self, g: usize) -> Result<(), ArtifactError> {
        let at = |what: &str| format!("group {g}: {what}");
        let rec = self.group_record(g);
        if rec.ranks == 0 {
            return invalid(at("no ranks"));
        }
        let labels: &[u32] = self.table(rec.labels_off, rec.ranks as usize).ok_or_else(|| bad(at("labels")))?;
        let rules: &[u32] = self.table(rec.rules_off, rec.ranks as usize).ok_or_else(|| bad(at("rules")))?;
        if labels[0] != 0 || labels.windows(2).any(|w| w[0] > w[1]) {
            return invalid(at("labels are not ascending from 0"));
        }
        if rules.iter().any(|&r| r != NO_RULE && r >= rec.explain_count) {
            return invalid(at("a rank names a rule beyond the explanation table"));
        }
        let parts = self.section(Section::Parts).len() / PART_RECORD_LEN;
        let last_part = rec.first_part.checked_add(u64::from(rec.parts));
        if rec.parts == 0 || rec.parts > 8 || last_part.is_none_or(|last| last > parts as u64) {
            return invalid(at("parts out of range"));
        }
        for p in 0..rec.parts as usize {
            let part = self.part_record(rec.first_part as usize + p);
            let max_answer = match self.part_view(&part, Check::Full) {
                Ok(PartView::Dfa(dfa)) => dfa.max_answer(),
                Ok(PartView::Comb(comb)) => comb.max_answer(),
                Ok(PartView::Comb16(comb)) => comb.max_answer(),
                Ok(PartView::Rules { ends, ranks, patterns }) => {
                    RuleList::check(patterns, ends, ranks).map_err(|e| bad(at(&e.to_string())))?;
                    ranks.iter().copied().max().unwrap_or(0)
                }
                Err(e) => return invalid(at(&e)),
            };
            if max_answer >= rec.ranks {
                return invalid(at("an answer is beyond the rank table"));
            }
        }
        // Checked whatever the flags say: `rule` reads any group's table.
        if rec.explain_count > 0 {
            let entries = self
                .bytes_at(rec.explain_off, rec.explain_count as usize * EXPLAIN_ENTRY_LEN)
                .ok_or_else(|| bad(at("explanation table")))?;
            for e in entries.chunks_exact(EXPLAIN_ENTRY_LEN) {
                let entry = read_explain(e);
                if self.bytes_at(entry.text_off, entry.text_len as usize).is_none() {
                    return invalid(at("explanation text out of range"));
                }
            }
        }
        Ok(())
    }

    fn section(&self, s: Section) -> &[u8] {
        let (off, len) = self.sections[s as usize - 1];
        &self.bytes()[off..off + len]
    }

    fn bytes_at(&self, off: u64, len: usize) -> Option<&[u8]> {
        let (t_off, t_len) = self.sections[Section::Tables as usize - 1];
        let start = usize::try_from(off).ok()?;
        let end = start.checked_add(len)?;
        if start < t_off || end > t_off + t_len {
            return None;
        }
        Some(&self.bytes()[start..end])
    }

    fn table<T: bytemuck::Pod>(&self, off: u64, count: usize) -> Option<&[T]> {
        let bytes = self.bytes_at(off, count.checked_mul(std::mem::size_of::<T>())?)?;
        bytemuck::try_cast_slice(bytes).ok()
    }

    fn group_record(&self, g: usize) -> GroupRecord {
        let b = &self.section(Section::Groups)[g * GROUP_RECORD_LEN..(g + 1) * GROUP_RECORD_LEN];
        GroupRecord {
            ranks: ne32(b, 0),
            parts: ne32(b, 4),
            labels_off: ne64(b, 8),
            rules_off: ne64(b, 16),
            first_part: ne64(b, 24),
            explain_off: ne64(b, 32),
            explain_count: ne32(b, 40),
        }
    }

    fn part_record(&self, p: usize) -> PartRecord {
        let b = &self.section(Section::Parts)[p * PART_RECORD_LEN..(p + 1) * PART_RECORD_LEN];
        PartRecord {
            kind: ne32(b, 0),
            stride2: ne32(b, 4),
            count: ne32(b, 8),
            sinks: ne32(b, 12),
            start: ne32(b, 16),
            slots: ne32(b, 20),
            a: ne64(b, 24),
            b: ne64(b, 32),
            c: ne64(b, 40),
        }
    }

    fn part_view(&self, part: &PartRecord, check: Check) -> Result<PartView<'_>, String> {
        let count = part.count as usize;
        match part.kind {
            PART_DFA16 | PART_DFA32 => {
                let classes: &[u8; 256] =
                    self.bytes_at(part.a, 256).and_then(|b| b.try_into().ok()).ok_or("byte classes out of range")?;
                let entries = count.checked_shl(part.stride2).filter(|_| part.stride2 <= 9).ok_or("bad stride")?;
                let transitions = if part.kind == PART_DFA16 {
                    Transitions::U16(self.table(part.b, entries).ok_or("transitions out of range")?)
                } else {
                    Transitions::U32(self.table(part.b, entries).ok_or("transitions out of range")?)
                };
                let answers = self.table(part.c, count).ok_or("answers out of range")?;
                let dfa = match check {
                    Check::Full => Dfa::new(classes, part.stride2, transitions, answers, part.start, part.sinks),
                    Check::Validated => {
                        Ok(Dfa::validated(classes, part.stride2, transitions, answers, part.start, part.sinks))
                    }
                };
                dfa.map(PartView::Dfa).map_err(|DfaError(e)| e)
            }
            PART_COMB => self.comb_view(part, check).map(PartView::Comb),
            PART_COMB16 => self.comb_view(part, check).map(PartView::Comb16),
            PART_RULES => {
                let ends: &[u32] = self.table(part.b, count).ok_or("rule ends out of range")?;
                let ranks: &[u32] = self.table(part.c, count).ok_or("rule ranks out of range")?;
                let len = ends.last().copied().unwrap_or(0) as usize;
                let patterns = self.bytes_at(part.a, len).ok_or("rule patterns out of range")?;
                Ok(PartView::Rules { patterns, ends, ranks })
            }
            other => Err(format!("unknown part kind {other}")),
        }
    }

    /// A comb part's tables: `count` rows, then `slots` slots of `T` ids.
    fn comb_view<T: SlotId>(&self, part: &PartRecord, check: Check) -> Result<CombDfa<'_, T>, String> {
        let count = part.count as usize;
        let classes: &[u8; 256] =
            self.bytes_at(part.a, 256).and_then(|b| b.try_into().ok()).ok_or("byte classes out of range")?;
        let rows: &[[u32; 2]] = self.table(part.b, count).ok_or("comb rows out of range")?;
        let slots_at = part.b + 8 * count as u64;
        let slots: &[[T; 2]] = self.table(slots_at, part.slots as usize).ok_or("comb slots out of range")?;
        let accels_at = slots_at + std::mem::size_of_val(slots) as u64;
        let accels: &[Accel] = self.table(accels_at, part.stride2 as usize).ok_or("comb accelerations out of range")?;
        // A 16-bit comb's rows carry the answers.
        let answers = if T::ANSWER_IN_ROW { &[] } else { self.table(part.c, count).ok_or("answers out of range")? };
        let (start, sinks) = (part.start, part.sinks);
        let tables = CombTables { classes, rows, slots, answers, accels, start, sinks };
        match check {
            Check::Full => CombDfa::new(tables).map_err(|DfaError(e)| e),
            Check::Validated => Ok(CombDfa::validated(tables)),
        }
    }

    /// The metadata: agents and build information.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Whether the automata identify the deciding rule (`compile --explain`).
    pub fn explains(&self) -> bool {
        self.flags & FLAG_EXPLAIN != 0
    }

    /// Number of origins.
    pub fn origins(&self) -> usize {
        self.origins
    }

    /// Number of distinct compiled groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Total size in bytes.
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    /// Whether the artifact is empty (never: a valid artifact has a header).
    pub fn is_empty(&self) -> bool {
        self.bytes().is_empty()
    }

    /// The size of each section, for `inspect`.
    pub fn section_sizes(&self) -> Vec<(Section, usize)> {
        Section::ALL.iter().map(|&s| (s, self.sections[s as usize - 1].1)).collect()
    }

    /// The usage preferences of the artifact, if any robots.txt had preference lines.
    pub fn preferences(&self) -> Option<PreferenceTable<'_>> {
        let (_, len) = self.sections[Section::Preferences as usize - 1];
        let section = self.section(Section::Preferences);
        (len > 0).then(|| {
            PreferenceTable::layout(section, self.origins, self.meta.agents.len()).expect("checked when opened")
        })
    }

    /// The `Content-Signal` and `Content-Usage` lines of origin `origin`'s
    /// group for agent `agent` (empty when it has none).
    pub fn preference_lines(&self, origin: usize, agent: usize) -> Vec<PreferenceLine> {
        self.preferences().and_then(|t| t.set_of(origin, agent).map(|s| t.lines(s))).unwrap_or_default()
    }

    /// Whether a group of origin `origin`'s robots.txt names agent `agent`
    /// (its rules are its own, not those of `*`). Without a preferences
    /// section no robots.txt of the artifact names any of its crawlers.
    pub fn names_agent(&self, origin: usize, agent: usize) -> bool {
        self.preferences().is_some_and(|t| t.selection(origin, agent).named)
    }

    /// The index of an agent given as `TOKEN[,TOKEN...]` (compared without case).
    pub fn agent_index(&self, agent: &str) -> Option<usize> {
        self.meta.agents.iter().position(|a| a.eq_ignore_ascii_case(agent))
    }

    /// The index of the crawler `agent` (`TOKEN[,TOKEN...]`, as compiled),
    /// or an error that names the agents the artifact was built for: the one
    /// agent lookup of the command line and the bindings.
    pub fn find_agent(&self, agent: &str) -> Result<usize, UnknownAgent> {
        self.agent_index(agent)
            .ok_or_else(|| UnknownAgent { agent: agent.to_string(), built_for: self.meta.agents.clone() })
    }

    /// The origin number of a canonical origin key, if the artifact has it.
    /// `hash` must be `origin_hash(key)`.
    #[inline]
    pub fn find_origin(&self, key: &[u8], hash: u64) -> Option<usize> {
        self.candidates(hash).find(|&origin| self.origin_key(origin) == key)
    }

    /// The origins of many `(key, hash)` lookups, appended to `found` in
    /// order: what [`Artifact::find_origin`] gives each. Every slot is probed
    /// before any key is compared, each step's memory fetched for all
    /// lookups before the step reads it, so that the cache misses of
    /// different lookups overlap (see [`Artifact::decide_many`]). The memory
    /// every caller reads next, each found origin's groups and fetch
    /// information, is on its way when this returns.
    pub fn find_origins(&self, lookups: &[(&[u8], u64)], found: &mut Vec<Option<usize>>) {
        let first = found.len();
        for &(_, hash) in lookups {
            self.prefetch(Section::Slots, ((hash as usize) & self.slot_mask) * 16);
        }
        found.extend(lookups.iter().map(|&(_, hash)| self.candidates(hash).next()));
        for &origin in found[first..].iter().flatten() {
            self.prefetch(Section::KeyEnds, origin.saturating_sub(1) * 4);
        }
        for &origin in found[first..].iter().flatten() {
            self.prefetch(Section::Keys, self.key_range(origin).start);
        }
        let agents = self.meta.agents.len();
        for (slot, &(key, hash)) in found[first..].iter_mut().zip(lookups) {
            if slot.is_some_and(|origin| self.origin_key(origin) != key) {
                // Another key with the same 64-bit hash: look further.
                *slot = self.find_origin(key, hash);
            }
            if let Some(origin) = *slot {
                self.prefetch(Section::OriginGroups, origin * agents * 4);
                self.prefetch(Section::OriginInfo, origin * 4);
            }
        }
    }

    /// Starts loading the cache line of byte `at` of section `s` (see
    /// [`walk::prefetch`]); nothing when `at` is past the section.
    #[inline(always)]
    fn prefetch(&self, s: Section, at: usize) {
        if let Some(byte) = self.section(s).get(at) {
            walk::prefetch(byte);
        }
    }

    /// The origins whose stored hash is `hash`, in probe order: linear
    /// probing from the hash's slot up to the first empty slot (bounded by
    /// the table size, so that a full table cannot loop forever).
    #[inline]
    fn candidates(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        let slots: &[u64] = bytemuck::cast_slice(self.section(Section::Slots));
        let (mask, start) = (self.slot_mask, hash as usize);
        (0..=mask)
            .map(move |k| (start.wrapping_add(k) & mask) * 2)
            .map(move |i| (slots[i], slots[i + 1]))
            .take_while(|&(_, origin)| origin != EMPTY_SLOT)
            .filter(move |&(h, _)| h == hash)
            .map(|(_, origin)| origin as usize)
    }

    /// The canonical key of origin `origin`.
    pub fn origin_key(&self, origin: usize) -> &[u8] {
        &self.section(Section::Keys)[self.key_range(origin)]
    }

    /// Where the key of origin `origin` lies in KEYS.
    fn key_range(&self, origin: usize) -> std::ops::Range<usize> {
        let key_ends: &[u32] = bytemuck::cast_slice(self.section(Section::KeyEnds));
        let start = if origin == 0 { 0 } else { key_ends[origin - 1] as usize };
        start..key_ends[origin] as usize
    }

    /// The fetch information of origin `origin`.
    pub fn fetch_info(&self, origin: usize) -> FetchInfo {
        let info: &[u32] = bytemuck::cast_slice(self.section(Section::OriginInfo));
        FetchInfo::unpack(info[origin]).unwrap_or(FetchInfo { kind: FetchKind::Rules, status: 0 })
    }

    /// The group that applies to `agent` at `origin`.
    #[inline]
    pub fn group_of(&self, origin: usize, agent: usize) -> usize {
        let groups: &[u32] = bytemuck::cast_slice(self.section(Section::OriginGroups));
        groups[origin * self.meta.agents.len() + agent] as usize
    }

    /// The best rank among `group`'s rules for a prepared path (0: none matched).
    pub fn decide(&self, group: usize, path: &[u8]) -> GroupOutcome {
        let mut outcomes = Vec::with_capacity(1);
        self.decide_many(&[(group, path)], &mut outcomes);
        outcomes[0]
    }

    /// The outcomes of many `(group, prepared path)` queries, appended to
    /// `outcomes` in order: what [`Artifact::decide`] gives each query.
    ///
    /// The queries are answered side by side, a step of each in turn: first
    /// every group record, then every part, then the automata walked in
    /// lockstep (see the `walk` module). A frontier reaches tens of thousands of
    /// groups in random order, so nearly every one of these lookups misses the
    /// cache; one query at a time, each miss waits for the one before, while
    /// side by side the misses of different queries overlap.
    pub fn decide_many(&self, queries: &[(usize, &[u8])], outcomes: &mut Vec<GroupOutcome>) {
        for &(group, _) in queries {
            self.prefetch(Section::Groups, group * GROUP_RECORD_LEN);
            self.prefetch(Section::Groups, group * GROUP_RECORD_LEN + GROUP_RECORD_LEN - 1);
        }
        let records: Vec<GroupRecord> = queries.iter().map(|&(group, _)| self.group_record(group)).collect();
        for rec in &records {
            let first = rec.first_part as usize * PART_RECORD_LEN;
            self.prefetch(Section::Parts, first);
            self.prefetch(Section::Parts, first + rec.parts as usize * PART_RECORD_LEN - 1);
        }
        let mut best = vec![0u32; queries.len()];
        let (mut combs, mut combs16, mut dense16, mut dense32) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut lists = Vec::new();
        for (job, (rec, &(_, path))) in records.iter().zip(queries).enumerate() {
            let job_id = job as u32;
            for p in rec.first_part as usize..(rec.first_part + u64::from(rec.parts)) as usize {
                match self.part_view(&self.part_record(p), Check::Validated) {
                    Ok(PartView::Comb(comb)) => combs.push(Walk::new(comb, path, job_id)),
                    Ok(PartView::Comb16(comb)) => combs16.push(Walk::new(comb, path, job_id)),
                    Ok(PartView::Dfa(dfa)) => match dfa.walker() {
                        Walker::U16(dense) => dense16.push(Walk::new(dense, path, job_id)),
                        Walker::U32(dense) => dense32.push(Walk::new(dense, path, job_id)),
                    },
                    Ok(PartView::Rules { patterns, ends, ranks }) => lists.push((job, p, patterns, ends, ranks)),
                    Err(_) => {}
                }
            }
        }
        let mut finish = |job: u32, answer: u32| best[job as usize] = best[job as usize].max(answer);
        walk::interleave(&mut combs16, &mut finish);
        walk::interleave(&mut combs, &mut finish);
        walk::interleave(&mut dense16, &mut finish);
        walk::interleave(&mut dense32, &mut finish);
        // Rule lists last: the best rank so far lets their prefilter skip rules that cannot win.
        for (job, p, patterns, ends, ranks) in lists {
            let prefilter = self.prefilters[p].get_or_init(|| Prefilter::new_or_every_rule(patterns, ends));
            // Built from these very tables, so the sizes agree.
            if let Ok(rules) = RuleList::with_prefilter(patterns, ends, ranks, prefilter) {
                best[job] = best[job].max(rules.best(queries[job].1, best[job]));
            }
        }
        outcomes.extend(records.iter().zip(queries).zip(best).map(|((rec, &(group, _)), rank)| {
            let labels: &[u32] = self.table(rec.labels_off, rec.ranks as usize).unwrap_or(&[0]);
            let label = Label(labels.get(rank as usize).copied().unwrap_or(0));
            GroupOutcome { group, rank, label }
        }));
    }

    /// The rule that a rank of `group` stands for, when the artifact explains.
    pub fn explain(&self, outcome: &GroupOutcome) -> Option<ExplainedRule<'_>> {
        let rec = self.group_record(outcome.group);
        let rules: &[u32] = self.table(rec.rules_off, rec.ranks as usize)?;
        let index = *rules.get(outcome.rank as usize)?;
        if index == NO_RULE {
            return None;
        }
        self.rule(outcome.group, index as usize)
    }

    /// Rule `index` of `group`'s explanation table.
    pub fn rule(&self, group: usize, index: usize) -> Option<ExplainedRule<'_>> {
        let rec = self.group_record(group);
        if index >= rec.explain_count as usize {
            return None;
        }
        let off = rec.explain_off + (index * EXPLAIN_ENTRY_LEN) as u64;
        let entry = read_explain(self.bytes_at(off, EXPLAIN_ENTRY_LEN)?);
        let pattern = self.bytes_at(entry.text_off, entry.text_len as usize)?;
        Some(ExplainedRule {
            line: entry.line,
            allow: entry.flags & 1 != 0,
            index_directory: entry.flags & 2 != 0,
            pattern,
        })
    }

    /// Number of rules in `group`'s explanation table.
    pub fn rule_count(&self, group: usize) -> usize {
        self.group_record(group).explain_count as usize
    }

    /// Statistics of `group` for `inspect`: (states, table bytes, part kinds).
    pub fn group_stats(&self, group: usize) -> GroupStats {
        let rec = self.group_record(group);
        let mut stats = GroupStats { ranks: rec.ranks as usize, ..GroupStats::default() };
        for p in 0..rec.parts as usize {
            let part = self.part_record(rec.first_part as usize + p);
            // An automaton part: (states, table bytes, stored as a comb).
            let automaton = match self.part_view(&part, Check::Validated) {
                Ok(PartView::Dfa(dfa)) => Some((dfa.states(), dfa.memory_bytes(), false)),
                Ok(PartView::Comb(comb)) => Some((comb.states(), comb.memory_bytes(), true)),
                Ok(PartView::Comb16(comb)) => Some((comb.states(), comb.memory_bytes(), true)),
                Ok(PartView::Rules { patterns, ends, .. }) => {
                    stats.fallback_rules += ends.len();
                    stats.bytes += patterns.len() + ends.len() * 8;
                    None
                }
                Err(_) => None,
            };
            if let Some((states, bytes, comb)) = automaton {
                stats.dfas += 1;
                stats.combs += usize::from(comb);
                stats.states += states;
                stats.bytes += bytes;
            }
        }
        stats
    }
}

/// What matching a path against a group gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupOutcome {
    /// The group.
    pub group: usize,
    /// The winning rank (0: no rule matched).
    pub rank: u32,
    /// The winning label.
    pub label: Label,
}

impl GroupOutcome {
    /// Whether the path is allowed.
    pub fn allowed(&self) -> bool {
        self.label.allows()
    }

    /// The verdict: allowed or disallowed.
    pub fn verdict(&self) -> crate::verdict::Verdict {
        if self.allowed() {
            crate::verdict::Verdict::Allowed
        } else {
            crate::verdict::Verdict::Disallowed
        }
    }
}

/// A rule as the explanation table records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExplainedRule<'a> {
    /// Its robots.txt line.
    pub line: u32,
    /// Allow or disallow.
    pub allow: bool,
    /// Google's directory rule derived from an `index.htm` allow.
    pub index_directory: bool,
    /// The escaped pattern.
    pub pattern: &'a [u8],
}

impl fmt::Display for ExplainedRule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.allow { "allow" } else { "disallow" };
        write!(f, "{verb}: {}", String::from_utf8_lossy(self.pattern))
    }
}

/// Size figures of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupStats {
    /// Ranks including 0.
    pub ranks: usize,
    /// Number of automaton parts (dense or comb).
    pub dfas: usize,
    /// How many of those are stored as comb tables (see [`crate::comb`]).
    pub combs: usize,
    /// States over all automaton parts.
    pub states: usize,
    /// Rules in the per-rule fallback part.
    pub fallback_rules: usize,
    /// Table bytes.
    pub bytes: usize,
}

/// Whether a view re-checks every transition (at open) or trusts the check
/// already made (at lookup, where a full check per URL would cost the table's size).
#[derive(Clone, Copy)]
enum Check {
    Full,
    Validated,
}

enum PartView<'a> {
    Dfa(Dfa<'a>),
    Comb(CombDfa<'a>),
    Comb16(CombDfa<'a, u16>),
    Rules { patterns: &'a [u8], ends: &'a [u32], ranks: &'a [u32] },
}

fn bad(msg: String) -> ArtifactError {
    ArtifactError::Invalid(msg)
}

fn cast<T: bytemuck::Pod>(bytes: &[u8], s: Section) -> Result<&[T], ArtifactError> {
    bytemuck::try_cast_slice(bytes).map_err(|_| ArtifactError::Invalid(format!("section {} is misaligned", s.name())))
}

fn ne32(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

fn ne64(b: &[u8], off: usize) -> u64 {
    u64::from_ne_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

fn read_explain(b: &[u8]) -> ExplainEntry {
    ExplainEntry { line: ne32(b, 0), flags: ne32(b, 4), text_off: ne64(b, 8), text_len: ne64(b, 16) }
}
