//! The artifact: every origin's compiled rules in one memory-mappable file.
//!
//! A compiler writes it once (see [`crate::writer`]); workers map
//! it with memmap2 and answer from it in place, without decoding. The layout,
//! every record's encoding and decoding, and the invariants are in
//! [`crate::format`].
//!
//! Opening is lazy: it checks the header, the section table and the index
//! (META, the group index, the origin keys, records and slots: checksums,
//! offsets, ids), which is what finding an origin and its group relies on,
//! and reads no group blob. Each group blob is checked (its own checksum,
//! then every table and transition) the first time a lookup reaches it, and
//! marked checked in a bitmap of atomics, so that every later lookup pays
//! one load. No table is read before its check, so a flipped byte is caught
//! before it can change an answer: a damaged group gives
//! [`ArtifactError::DamagedGroup`], naming the file, the group and an origin
//! that uses it. [`Artifact::verify`] checks every byte (`inspect --verify`).
//! A truncated or foreign file, or one of another format version, is refused
//! at open with a clear [`ArtifactError`]; no lookup can read out of bounds
//! or panic.
//!
//! The META section is JSON, written and read with no dependency: it is a few
//! hundred bytes read once per open, where a human-readable, self-describing
//! format helps `inspect` and debugging, and a binary serialiser would add a
//! dependency (bincode, the usual choice, is unmaintained) for no speed gain.

use crate::format::{
    checksum, Check, ContentDigest, CrawlTable, Fault, FetchFacts, GroupHead, GroupView, Header, HeaderError,
    MetaProblem, OriginRecord, PartView, PreferenceTable, SectionEntry, ShardSetProblem, Slot, EMPTY_SLOT,
    FLAG_EXPLAIN, GROUPS_START, MAX_SECTIONS, NO_RULE,
};
use crate::rules::LazyPrefilter;
use crate::runtime::{CompiledGroup, RunnerPart};
use crate::walk::{self, Walks};
use robotsieve_core::preference::PreferenceLine;
use robotsieve_core::Label;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use crate::format::{Damage, FetchInfo, FetchKind, GroupDamage, Section, VersionMismatch};

/// Why an artifact could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum ArtifactError {
    /// The file could not be read or mapped.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The file is not an artifact, or is damaged (found at open, or when
    /// a section is first read).
    Invalid {
        /// The file, when the artifact was opened from one.
        path: Option<PathBuf>,
        /// What is wrong, and where.
        damage: Damage,
    },
    /// A shard set's files do not make one set (a file missing, foreign or
    /// twice).
    ShardSet {
        /// The set's directory.
        path: PathBuf,
        /// What is wrong with the set (boxed: it is large, and rare).
        problem: Box<ShardSetProblem>,
    },
    /// One shard of a set was given where the whole set is wanted.
    PartOfSet {
        /// The shard's file.
        path: PathBuf,
        /// Its number in the set.
        index: u32,
        /// How many shards the set has.
        count: u32,
    },
    /// A shard file opened alone as shard `index` of `count`
    /// ([`crate::shards::ShardSet::open_shard`]) is another shard by its own
    /// header, or no shard at all (`header` `None`).
    WrongShard {
        /// The shard's file.
        path: PathBuf,
        /// The shard number asked for.
        index: u32,
        /// The shard count asked for.
        count: u32,
        /// What the file's header says: (shard number, shard count).
        header: Option<(u32, u32)>,
    },
    /// A URL given to a shard opened alone belongs to another shard of its
    /// set: the shard cannot answer for it (its origin would read as
    /// unknown), so the URL was routed to the wrong worker.
    Misrouted {
        /// The URL.
        url: String,
        /// The shard its origin belongs to.
        shard: u32,
        /// The set's shard count.
        count: u32,
        /// The shard opened alone.
        index: u32,
        /// Its file.
        path: PathBuf,
    },
    /// A group blob failed its check when a lookup first reached it (or
    /// when [`Artifact::verify`] read it): the file was damaged after it was
    /// written, and no answer from that group is given.
    DamagedGroup {
        /// The artifact's file (empty for bytes held in memory).
        path: PathBuf,
        /// The group's number in the file.
        group: usize,
        /// An origin whose crawler uses the group (its key), and how many
        /// others do, when any does.
        origin: Option<(String, usize)>,
        /// What is wrong with it.
        problem: GroupDamage,
    },
    /// A lookup asked for a group the artifact does not have.
    NoSuchGroup {
        /// The group asked for.
        group: usize,
        /// How many the artifact has.
        groups: usize,
    },
    /// A caller asked for an origin number the artifact does not have.
    NoSuchOrigin {
        /// The origin number asked for.
        origin: usize,
        /// How many origins the artifact has.
        origins: usize,
    },
    /// The file is an artifact of another version of robotsieve: not
    /// damaged, but it wants compiling again (or a newer robotsieve).
    Version {
        /// The file, when the artifact was opened from one.
        path: Option<PathBuf>,
        /// Which version differs, and how.
        mismatch: VersionMismatch,
    },
}

impl ArtifactError {
    /// The same error naming `path` as the damaged or other-version file,
    /// where it named none (as [`ArtifactHead::read`]'s and
    /// [`Artifact::from_bytes`]'s errors do); any other error unchanged.
    pub fn in_file(self, path: &Path) -> ArtifactError {
        match self {
            ArtifactError::Invalid { path: None, damage } => {
                ArtifactError::Invalid { path: Some(path.to_path_buf()), damage }
            }
            ArtifactError::Version { path: None, mismatch } => {
                ArtifactError::Version { path: Some(path.to_path_buf()), mismatch }
            }
            other => other,
        }
    }
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ArtifactError::Invalid { path: Some(path), damage } => {
                write!(f, "not a valid robotsieve artifact: {}: {damage}", path.display())
            }
            ArtifactError::Invalid { path: None, damage } => write!(f, "not a valid robotsieve artifact: {damage}"),
            ArtifactError::ShardSet { path, problem } => {
                write!(f, "not a valid robotsieve artifact: shard set {}: {problem}", path.display())
            }
            ArtifactError::PartOfSet { path, index, count } => write!(
                f,
                "not a valid robotsieve artifact: {}: this is shard {index} of {count}: give the directory of the whole set, \
                 or open it alone as shard {index}/{count}",
                path.display()
            ),
            ArtifactError::WrongShard { path, index, count, header: Some((k, n)) } => write!(
                f,
                "{}: the header says shard {k} of {n}, not shard {index} of {count} as asked",
                path.display()
            ),
            ArtifactError::WrongShard { path, index, count, header: None } => write!(
                f,
                "{}: not a shard (its header has no shard information), not shard {index} of {count} as asked",
                path.display()
            ),
            ArtifactError::Misrouted { url, shard, count, index, path } => write!(
                f,
                "{url}: belongs to shard {shard} of {count} ({}), not to shard {index} ({}): the URL list \
                 was split by another function or shard count",
                shard_file_name(*shard, *count),
                path.display()
            ),
            ArtifactError::DamagedGroup { path, group, origin, problem } => {
                if !path.as_os_str().is_empty() {
                    write!(f, "{}: ", path.display())?;
                }
                write!(f, "damaged artifact: group {group}")?;
                match origin {
                    Some((key, 0)) => write!(f, " (the rules of {key})")?,
                    Some((key, others)) => write!(f, " (the rules of {key} and {others} other origins)")?,
                    None => {}
                }
                write!(f, ": {problem}: compile the artifact again")
            }
            ArtifactError::NoSuchGroup { group, groups } => write!(f, "no group {group}: the artifact has {groups}"),
            ArtifactError::NoSuchOrigin { origin, origins } => {
                write!(f, "no origin {origin}: the artifact has {origins}")
            }
            ArtifactError::Version { path: Some(path), mismatch } => {
                write!(f, "not a valid robotsieve artifact: {}: {mismatch}", path.display())
            }
            ArtifactError::Version { path: None, mismatch } => write!(f, "not a valid robotsieve artifact: {mismatch}"),
        }
    }
}

impl std::error::Error for ArtifactError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArtifactError::Io { error, .. } => Some(error),
            ArtifactError::Invalid { damage, .. } => Some(damage),
            ArtifactError::DamagedGroup { problem, .. } => Some(problem),
            _ => None,
        }
    }
}

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

fn invalid<T>(damage: impl Into<Damage>) -> Result<T, ArtifactError> {
    Err(ArtifactError::Invalid { path: None, damage: damage.into() })
}

/// The metadata of an artifact (the META section).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// The crawlers, each as `TOKEN[,TOKEN...]`, in ORIGIN_GROUPS order.
    pub agents: Vec<String>,
    /// Free-form build information (tool version, sources, options), as JSON
    /// key/value string pairs.
    pub build: Vec<(String, String)>,
    /// Which shard of a set this artifact is (see [`crate::ShardSet`]); `None`
    /// for a whole artifact.
    pub shard: Option<ShardInfo>,
}

/// What a shard file says of itself: shard `index` of `count`, split by `scheme`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardInfo {
    /// K, from 0.
    pub index: u32,
    /// N.
    pub count: u32,
    /// The name of the shard function ([`crate::shards::SHARD_SCHEME`]).
    pub scheme: String,
}

/// The file name of shard `index` of `count` in a set's directory.
pub fn shard_file_name(index: u32, count: u32) -> String {
    format!("{index:05}-of-{count:05}.rsv")
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
        out.push('}');
        if let Some(shard) = &self.shard {
            out.push_str(&format!(",\"shard\":{{\"index\":{},\"count\":{},\"scheme\":", shard.index, shard.count));
            json_string(&mut out, &shard.scheme);
            out.push('}');
        }
        out.push('}');
        out
    }

    /// Parses what [`Meta::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<Meta, MetaProblem> {
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
        if p.eat(b',') {
            p.key("shard")?;
            p.expect(b'{')?;
            p.key("index")?;
            let index = p.number()?;
            p.expect(b',')?;
            p.key("count")?;
            let count = p.number()?;
            p.expect(b',')?;
            p.key("scheme")?;
            let scheme = p.string()?;
            p.expect(b'}')?;
            meta.shard = Some(ShardInfo { index, count, scheme });
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

    fn expect(&mut self, b: u8) -> Result<(), MetaProblem> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(MetaProblem::Expected { expected: b, at: self.i })
        }
    }

    fn key(&mut self, name: &'static str) -> Result<(), MetaProblem> {
        let k = self.string()?;
        if k != name {
            return Err(MetaProblem::Key { expected: name, found: k });
        }
        self.expect(b':')
    }

    fn number(&mut self) -> Result<u32, MetaProblem> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|digits| digits.parse().ok())
            .ok_or(MetaProblem::Number { at: start })
    }

    fn string(&mut self) -> Result<String, MetaProblem> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.s.get(self.i).copied() {
                None => return Err(MetaProblem::UnterminatedString),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(out).map_err(|e| MetaProblem::StringNotUtf8(e.utf8_error()));
                }
                Some(b'\\') => {
                    let esc = self.s.get(self.i + 1).copied();
                    self.i += 2;
                    match esc {
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(b'u') => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or(MetaProblem::ShortEscape)?;
                            let hex = std::str::from_utf8(hex).map_err(MetaProblem::StringNotUtf8)?;
                            let code = u32::from_str_radix(hex, 16).map_err(MetaProblem::EscapeDigits)?;
                            let c = char::from_u32(code).ok_or(MetaProblem::EscapeNotChar { code })?;
                            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                            self.i += 4;
                        }
                        _ => return Err(MetaProblem::UnsupportedEscape { at: self.i }),
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

/// Where each section lies: (offset, length) indexed by [`Section::index`].
type SectionTable = [(usize, usize); Section::ALL.len()];

/// An opened artifact: its header and index checked at open, each group
/// blob checked the first time a lookup reaches it (see the module
/// documentation).
pub struct Artifact {
    backing: Backing,
    /// The file it was opened from (empty for bytes held in memory), for messages.
    path: PathBuf,
    sections: SectionTable,
    meta: Meta,
    flags: u32,
    /// The header's content digest.
    digest: u64,
    /// The section table as opening read it, in the file's order:
    /// [`Artifact::verify`] hashes it into the digest it recomputes.
    table: Vec<SectionEntry>,
    origins: usize,
    groups: usize,
    agents: usize,
    record_len: usize,
    slot_bits: u32,
    slot_mask: usize,
    /// One bit per group, set once its blob has passed [`GroupView::check`].
    /// Relaxed loads and stores suffice: the check is a function of bytes
    /// that never change, so a bit set by any thread means the same to all,
    /// and a thread that does not see it yet merely checks again.
    checked: Box<[AtomicU64]>,
    /// The prefilter of each per-rule part, by (group, part), built when the
    /// part is first used: a frontier reaches only some of them, and built
    /// all at open they cost 26 MB and a third of the open time on the whole
    /// corpus. Only split groups have such parts, so a map is small.
    prefilters: RwLock<HashMap<(usize, usize), Arc<LazyPrefilter>>>,
    /// The CRAWL section, checked (checksum, tables) on first use: no
    /// verdict reads the section, so opening does not pay for it.
    crawl_check: CheckedOnUse,
    /// The FRESHNESS section, checked (checksum) on first use, likewise.
    freshness_check: CheckedOnUse,
}

/// An optional section no verdict reads: its stored checksum, and the
/// result of checking it on first use.
#[derive(Default)]
struct CheckedOnUse {
    checksum: u64,
    checked: OnceLock<Result<(), Damage>>,
}

impl CheckedOnUse {
    /// Checks `bytes`, the section `section`, once: its checksum, then
    /// `parse`; the same answer afterwards.
    fn check(
        &self,
        section: Section,
        bytes: &[u8],
        parse: impl FnOnce(&[u8]) -> Result<(), Damage>,
    ) -> Result<(), Damage> {
        let checked = self.checked.get_or_init(|| {
            if checksum(bytes) != self.checksum {
                return Err(Fault::SectionChecksum { section }.into());
            }
            parse(bytes)
        });
        checked.clone()
    }
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

/// The SLOTS section: `[hash, origin]` words of an open-addressing table
/// of `mask + 1` slots, a hash's home its top `bits` bits.
#[derive(Clone, Copy)]
struct Slots<'a> {
    words: &'a [u64],
    mask: usize,
    bits: u32,
}

impl<'a> Slots<'a> {
    /// The origins whose stored hash is `hash`, in probe order (see
    /// [`Artifact::candidates`]).
    #[inline]
    fn candidates(self, hash: u64) -> impl Iterator<Item = usize> + 'a {
        let Slots { words, mask, bits } = self;
        let start = Slot::home(hash, bits);
        (0..=mask)
            .map(move |k| (start.wrapping_add(k) & mask) * 2)
            .map(move |i| (words[i], words[i + 1]))
            .take_while(|&(_, origin)| origin != EMPTY_SLOT)
            .filter(move |&(h, _)| h == hash)
            .map(|(_, origin)| origin as usize)
    }
}

/// The ORIGINS section: `len`-byte [`OriginRecord`]s.
#[derive(Clone, Copy)]
struct Records<'a> {
    bytes: &'a [u8],
    len: usize,
}

impl<'a> Records<'a> {
    /// Origin `origin`'s record.
    #[inline]
    fn get(self, origin: usize) -> &'a [u8] {
        &self.bytes[origin * self.len..(origin + 1) * self.len]
    }

    /// Where the key of origin `origin` lies in KEYS.
    #[inline]
    fn key_range(self, origin: usize) -> std::ops::Range<usize> {
        let (off, len) = OriginRecord::key_range(self.get(origin));
        off as usize..off as usize + len as usize
    }
}

/// Starts loading the cache line of byte `at` of `section` (see
/// [`walk::prefetch`]); nothing when `at` is past the section.
#[inline(always)]
fn prefetch_in(section: &[u8], at: usize) {
    if let Some(byte) = section.get(at) {
        walk::prefetch(byte);
    }
}

/// Consecutive queries of one group in [`Artifact::decide_many`]: the
/// group, read once for all of them, and what its ranks stand for.
struct QueryRun<'a> {
    group: usize,
    /// The group's labels by rank.
    labels: &'a [u32],
    /// The queries, by number.
    jobs: std::ops::Range<usize>,
}

/// An artifact's header and section table, checked: the first
/// [`ArtifactHead::LEN`] bytes of the file, which opening reads first and
/// which are all a reader elsewhere (the Spark driver, with a ranged read of
/// a remote file) needs to refuse a damaged, truncated, foreign or
/// other-version file and to find its META section. The checks are those of
/// [`Artifact::open`], so the two cannot disagree.
#[derive(Clone, Debug)]
pub struct ArtifactHead {
    header: Header,
    /// Each section's entry, indexed by [`Section::index`].
    entries: [Option<SectionEntry>; Section::ALL.len()],
    /// The same entries in the table's order, which the content digest
    /// hashes them in.
    table: Vec<SectionEntry>,
}

impl ArtifactHead {
    /// How many bytes of a file's start [`ArtifactHead::read`] needs.
    pub const LEN: usize = GROUPS_START;

    /// Checks the start of an artifact file of `file_len` bytes (`head`: at
    /// least [`ArtifactHead::LEN`] bytes of it, or the whole file if
    /// shorter): magic, versions, byte order and flags, the stored length
    /// against `file_len`, the header's checksum, and each section entry (a
    /// known kind, 8-aligned, past the table and inside the file, none
    /// twice, every required one present). A file of another format or
    /// semantics version is [`ArtifactError::Version`]; anything else wrong
    /// is [`ArtifactError::Invalid`]; neither names a path
    /// ([`ArtifactError::in_file`] adds it).
    pub fn read(head: &[u8], file_len: u64) -> Result<ArtifactHead, ArtifactError> {
        let header = Header::decode(head).map_err(|e| match e {
            HeaderError::Version(mismatch) => ArtifactError::Version { path: None, mismatch },
            HeaderError::Invalid(damage) => ArtifactError::Invalid { path: None, damage },
        })?;
        if header.file_len != file_len {
            return invalid(Fault::Truncated { stored: header.file_len, actual: file_len as usize });
        }
        let count = header.sections as usize;
        if count > MAX_SECTIONS || head.len() < GROUPS_START {
            return invalid(Fault::SectionTable { count });
        }
        let computed = Header::checksum_of(&head[..GROUPS_START]);
        if header.checksum != computed {
            return invalid(Fault::HeaderChecksum { stored: header.checksum, computed });
        }
        let mut entries = [None; Section::ALL.len()];
        let mut table = Vec::with_capacity(count);
        for i in 0..count {
            let entry = SectionEntry::decode(&head[Header::LEN + i * SectionEntry::LEN..]).or_else(invalid)?;
            let (offset, len, section) = (entry.offset, entry.len, entry.section);
            let past_end = offset.checked_add(len).is_none_or(|end| end > file_len);
            if offset % 8 != 0 || offset < GROUPS_START as u64 || past_end {
                return invalid(Fault::SectionBounds { section, offset, len });
            }
            if entries[section.index()].replace(entry).is_some() {
                return invalid(Fault::SectionTwice { section });
            }
            table.push(entry);
        }
        if let Some(missing) = Section::ALL.iter().find(|s| s.is_required() && entries[s.index()].is_none()) {
            return invalid(Fault::SectionMissing { section: *missing });
        }
        Ok(ArtifactHead { header, entries, table })
    }

    /// The content digest the header records: equal for two copies of one
    /// file, different for builds of different contents (see
    /// [`Artifact::digest`]); covered by the header's checksum.
    pub fn digest(&self) -> u64 {
        self.header.digest
    }

    /// Where the META section lies in the file: the range to read and give
    /// to [`ArtifactHead::read_meta`].
    pub fn meta_range(&self) -> std::ops::Range<u64> {
        let entry = self.entries[Section::Meta.index()].expect("read() requires META");
        entry.offset..entry.offset + entry.len
    }

    /// Checks the META section's bytes (those of [`ArtifactHead::meta_range`])
    /// against the checksum the section table holds for them, and parses them.
    pub fn read_meta(&self, meta: &[u8]) -> Result<Meta, ArtifactError> {
        if checksum(meta) != self.entries[Section::Meta.index()].expect("read() requires META").checksum {
            return invalid(Fault::SectionChecksum { section: Section::Meta });
        }
        let damaged = |problem| ArtifactError::Invalid { path: None, damage: Fault::Meta { problem }.into() };
        let text = std::str::from_utf8(meta).map_err(|e| damaged(MetaProblem::NotUtf8(e)))?;
        Meta::from_json(text).map_err(damaged)
    }
}

impl Artifact {
    /// Maps an artifact file and checks its header and index (the groups
    /// are checked on first use; [`Artifact::verify`] checks them all).
    pub fn open(path: &Path) -> Result<Artifact, ArtifactError> {
        let io = |error| ArtifactError::Io { path: path.to_path_buf(), error };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read-only; robotsieve never writes an artifact in
        // place (writers use a temporary file and rename), so the bytes do not
        // change under us unless another program modifies the file, which
        // memmap2 cannot rule out and every mmap user accepts.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Artifact::validate(Backing::Mapped(map), path.to_path_buf()).map_err(|e| e.in_file(path))
    }

    /// An artifact held in memory (tests, or bytes from elsewhere), checked
    /// as [`Artifact::open`] checks a file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Artifact, ArtifactError> {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Artifact::validate(Backing::Owned(words, bytes.len()), PathBuf::new())
    }

    fn bytes(&self) -> &[u8] {
        self.backing.bytes()
    }

    /// The checks of opening: header, section table, META, group index,
    /// keys, origin records, slots, preferences; no group blob.
    fn validate(backing: Backing, path: PathBuf) -> Result<Artifact, ArtifactError> {
        let bytes = backing.bytes();
        let head = ArtifactHead::read(bytes, bytes.len() as u64)?;
        let mut sections: SectionTable = [(0, 0); Section::ALL.len()];
        let mut tiles: Vec<(usize, usize)> = Vec::with_capacity(Section::ALL.len());
        let (mut crawl_check, mut freshness_check) = (CheckedOnUse::default(), CheckedOnUse::default());
        for entry in head.entries.iter().flatten() {
            let range = entry.offset as usize..(entry.offset + entry.len) as usize;
            // GROUPS' blobs carry their own checksums; CRAWL and FRESHNESS
            // are checked on first use; META when it is read, below.
            match entry.section {
                Section::Crawl => crawl_check.checksum = entry.checksum,
                Section::Freshness => freshness_check.checksum = entry.checksum,
                Section::Groups | Section::Meta => {}
                section if checksum(&bytes[range.clone()]) != entry.checksum => {
                    return invalid(Fault::SectionChecksum { section })
                }
                _ => {}
            }
            sections[entry.section.index()] = (range.start, range.len());
            tiles.push((range.start, range.len()));
        }
        // The sections tile the file, with zero padding of under 8 bytes between.
        tiles.sort_unstable();
        let mut at = ArtifactHead::LEN;
        for &(off, len) in tiles.iter().chain([&(bytes.len(), 0)]) {
            if off < at || off - at >= 8 || bytes[at..off].iter().any(|&b| b != 0) {
                return invalid(Fault::SectionGap { from: at, to: off });
            }
            at = off + len;
        }
        let section = |s: Section| {
            let (off, len) = sections[s.index()];
            &bytes[off..off + len]
        };
        let seen = |s: Section| head.entries[s.index()].is_some();
        let meta = head.read_meta(section(Section::Meta))?;
        let agents = meta.agents.len();
        let record_len = OriginRecord::len(agents);

        let records = section(Section::Origins);
        if records.len() % record_len != 0 {
            return invalid(Fault::OriginRecords);
        }
        let origins = records.len() / record_len;
        // The group index: blobs in id order, each at least a head long, from
        // the start of GROUPS to its end, so that every byte of GROUPS lies in
        // exactly one group's extent (checked by that group's checksum).
        let index: &[u64] = cast(section(Section::GroupIndex), Section::GroupIndex)?;
        let groups = index.len();
        let (groups_off, groups_len) = sections[Section::Groups.index()];
        let groups_end = (groups_off + groups_len) as u64;
        let mut next_at_least = groups_off as u64;
        for (g, &off) in index.iter().enumerate() {
            let first_ok = g > 0 || off == groups_off as u64;
            if off % 8 != 0 || off < next_at_least || !first_ok || off >= groups_end {
                return invalid(Fault::GroupOrder { group: g });
            }
            next_at_least = off + GroupHead::LEN as u64;
        }
        if (groups == 0 && groups_len != 0) || next_at_least > groups_end {
            return invalid(Fault::GroupsEnd);
        }
        let keys_len = section(Section::Keys).len() as u64;
        for (o, record) in records.chunks_exact(record_len).enumerate() {
            let (key_off, key_len) = OriginRecord::key_range(record);
            if key_off.checked_add(u64::from(key_len)).is_none_or(|end| end > keys_len) {
                return invalid(Fault::OriginKey { origin: o });
            }
            let info = OriginRecord::info(record);
            if FetchInfo::unpack(info).is_none() {
                return invalid(Fault::OriginFetchKind { origin: o, kind: info >> 16 });
            }
            if let Some(g) = (0..agents).map(|a| OriginRecord::group(record, a)).find(|&g| g as usize >= groups) {
                return invalid(Fault::OriginGroup { origin: o, group: g, groups });
            }
        }
        if seen(Section::Preferences) {
            if let Err(damage) = PreferenceTable::parse(section(Section::Preferences), origins, agents) {
                return invalid(damage);
            }
        }
        if seen(Section::Freshness) && section(Section::Freshness).len() != origins * FetchFacts::LEN {
            return invalid(Fault::SectionMisaligned { section: Section::Freshness });
        }
        let slots = section(Section::Slots);
        let slot_count = slots.len() / Slot::LEN;
        if slots.len() % Slot::LEN != 0 || !slot_count.is_power_of_two() || slot_count < origins {
            return invalid(Fault::SlotCount);
        }
        let mut filled = 0usize;
        for slot in slots.chunks_exact(Slot::LEN).map(Slot::decode) {
            if slot.origin != EMPTY_SLOT {
                if slot.origin as usize >= origins {
                    return invalid(Fault::SlotOrigin { origin: slot.origin, origins });
                }
                filled += 1;
            }
        }
        if filled != origins {
            return invalid(Fault::SlotsFilled { filled, origins });
        }
        Ok(Artifact {
            slot_bits: slot_count.trailing_zeros(),
            slot_mask: slot_count - 1,
            sections,
            meta,
            flags: head.header.flags,
            digest: head.header.digest,
            table: head.table,
            origins,
            groups,
            agents,
            record_len,
            backing,
            path,
            checked: (0..groups.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            prefilters: RwLock::new(HashMap::new()),
            crawl_check,
            freshness_check,
        })
    }

    /// Checks every byte: what opening checks, every origin found through
    /// the index under its own key, and every group blob (as a lookup's
    /// first use would). `inspect --verify`. Afterwards no lookup can meet
    /// a damaged group. The first problem found is the error.
    pub fn verify(&self) -> Result<(), ArtifactError> {
        for o in 0..self.origins {
            let key = self.origin_key(o);
            if self.find_origin(key, robotsieve_core::url::origin_hash(key)) != Some(o) {
                let key = String::from_utf8_lossy(key).into_owned();
                return Err(self.invalid(Fault::OriginNotIndexed { origin: o, key }));
            }
        }
        let mut digest = ContentDigest::default();
        for g in 0..self.groups {
            digest.add_group(self.checked_group(g)?.bytes());
        }
        let computed = digest.finish(&self.table);
        if computed != self.digest {
            return Err(self.invalid(Fault::Digest { stored: self.digest, computed }));
        }
        self.crawl()?;
        self.freshness()?;
        // Verifying read every page; lookups will read the few their origins need.
        if let Backing::Mapped(map) = &self.backing {
            crate::mapped::release(map, 0, map.len());
        }
        Ok(())
    }

    /// Group `g`'s blob, checked on its first use: one relaxed load once
    /// it has been (the hook every lookup of a group goes through).
    #[inline]
    fn checked_group(&self, g: usize) -> Result<GroupView<'_>, ArtifactError> {
        match self.checked.get(g / 64) {
            Some(word) if word.load(Ordering::Relaxed) & (1 << (g % 64)) != 0 => {
                self.raw_group(g).map_err(|problem| self.damaged(g, problem))
            }
            _ => self.check_group(g),
        }
    }

    /// The first use of group `g`: its checksum and every table, then its
    /// bit in the checked bitmap.
    #[cold]
    #[inline(never)]
    fn check_group(&self, g: usize) -> Result<GroupView<'_>, ArtifactError> {
        if g >= self.groups {
            return Err(ArtifactError::NoSuchGroup { group: g, groups: self.groups });
        }
        let view = self
            .raw_group(g)
            .and_then(|view| view.check(self.explains()).map(|()| view))
            .map_err(|problem| self.damaged(g, problem))?;
        self.checked[g / 64].fetch_or(1 << (g % 64), Ordering::Relaxed);
        Ok(view)
    }

    /// The error for `damage` found after opening, naming the file.
    #[cold]
    fn invalid(&self, damage: impl Into<Damage>) -> ArtifactError {
        let path = Some(self.path.clone()).filter(|p| !p.as_os_str().is_empty());
        ArtifactError::Invalid { path, damage: damage.into() }
    }

    /// The error for damaged group `g`, naming an origin that uses it.
    #[cold]
    fn damaged(&self, g: usize, problem: GroupDamage) -> ArtifactError {
        let mut users = (0..self.origins).filter(|&o| (0..self.agents).any(|a| self.group_of(o, a) == g));
        let origin = users.next().map(|o| (String::from_utf8_lossy(self.origin_key(o)).into_owned(), users.count()));
        ArtifactError::DamagedGroup { path: self.path.clone(), group: g, origin, problem }
    }

    /// Where group `g`'s blob lies in the file: from its index entry to the
    /// next group's (or the end of GROUPS), as checked at open.
    fn group_extent(&self, g: usize) -> Option<std::ops::Range<usize>> {
        let index: &[u64] = bytemuck::cast_slice(self.section(Section::GroupIndex));
        let (groups_off, groups_len) = self.sections[Section::Groups.index()];
        let start = *index.get(g)? as usize;
        let end = index.get(g + 1).map_or(groups_off + groups_len, |&next| next as usize);
        Some(start..end)
    }

    /// Group `g`'s blob, its length checked against the index but not its contents.
    #[inline]
    fn raw_group(&self, g: usize) -> Result<GroupView<'_>, GroupDamage> {
        let extent = self.group_extent(g).ok_or(GroupDamage::NotIndexed)?;
        let view = GroupView::at(&self.bytes()[extent.clone()])?;
        if view.bytes().len() != extent.len() {
            return Err(GroupDamage::IndexLength { len: view.bytes().len(), extent: extent.len() });
        }
        Ok(view)
    }

    /// The metadata: agents and build information.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The content digest the header records: a hash of every section's
    /// checksum and every group blob's, so that a cache can tell two files
    /// apart (or a copy from its original) by their first bytes. Opening
    /// does not recompute it; [`Artifact::verify`] does.
    pub fn digest(&self) -> u64 {
        self.digest
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
        Section::ALL.iter().map(|&s| (s, self.sections[s.index()].1)).collect()
    }

    /// The usage preferences of the artifact, if any robots.txt had preference lines.
    pub fn preferences(&self) -> Option<PreferenceTable<'_>> {
        let (_, len) = self.sections[Section::Preferences.index()];
        (len > 0).then(|| {
            PreferenceTable::layout(self.section(Section::Preferences), self.origins, self.agents)
                .expect("checked when opened")
        })
    }

    /// The `Content-Signal` and `Content-Usage` lines of origin `origin`'s
    /// group for agent `agent` (empty when it has none).
    pub fn preference_lines(&self, origin: usize, agent: usize) -> Vec<PreferenceLine> {
        self.preferences().and_then(|t| t.set_of(origin, agent).map(|s| t.lines(s))).unwrap_or_default()
    }

    /// The sitemaps and crawl-delays of the artifact, if any robots.txt had
    /// them: the section's checksum and tables are checked on first use
    /// (an error naming the file when they are damaged).
    fn crawl(&self) -> Result<Option<CrawlTable<'_>>, ArtifactError> {
        let (_, len) = self.sections[Section::Crawl.index()];
        if len == 0 {
            return Ok(None);
        }
        let bytes = self.section(Section::Crawl);
        let parse = |b: &[u8]| CrawlTable::parse(b, self.origins, self.agents).map(|_| ());
        self.crawl_check.check(Section::Crawl, bytes, parse).map_err(|e| self.invalid(e))?;
        CrawlTable::layout(bytes, self.origins, self.agents).map(Some).map_err(|e| self.invalid(e))
    }

    /// Whether the artifact records when origins' copies were fetched (a
    /// FRESHNESS section: compiled from fetch records that carry times).
    pub fn has_fetch_facts(&self) -> bool {
        self.sections[Section::Freshness.index()].1 > 0
    }

    /// When origin `origin`'s governing robots.txt copy was fetched and
    /// what the cache policy reads of it (all `None` without a FRESHNESS
    /// section); the section's checksum is checked on first use (an error
    /// naming the file when it is damaged). An origin number past
    /// [`Artifact::origins`] is [`ArtifactError::NoSuchOrigin`].
    pub fn fetch_facts(&self, origin: usize) -> Result<FetchFacts, ArtifactError> {
        if origin >= self.origins {
            return Err(ArtifactError::NoSuchOrigin { origin, origins: self.origins });
        }
        Ok(self.freshness()?.map_or_else(FetchFacts::default, |bytes| {
            FetchFacts::decode(&bytes[origin * FetchFacts::LEN..(origin + 1) * FetchFacts::LEN])
        }))
    }

    /// The FRESHNESS section, checked (its checksum) on first use; `None`
    /// when the artifact has none. Its length, one record an origin, was
    /// checked at open.
    fn freshness(&self) -> Result<Option<&[u8]>, ArtifactError> {
        if !self.has_fetch_facts() {
            return Ok(None);
        }
        let bytes = self.section(Section::Freshness);
        self.freshness_check.check(Section::Freshness, bytes, |_| Ok(())).map_err(|e| self.invalid(e))?;
        Ok(Some(bytes))
    }

    /// The `sitemap` URLs of origin `origin`'s robots.txt, in file order
    /// (kept for the crawl loop; they never change a verdict); an error
    /// when the section is damaged.
    pub fn sitemaps(&self, origin: usize) -> Result<Vec<&[u8]>, ArtifactError> {
        Ok(self.crawl()?.map(|t| t.sitemaps(origin)).unwrap_or_default())
    }

    /// The `crawl-delay` value, as written, of the group that applies to
    /// agent `agent` at origin `origin` (the first, if it has several).
    /// Read, never used for verdicts: Google ignores crawl-delay.
    pub fn crawl_delay(&self, origin: usize, agent: usize) -> Result<Option<&[u8]>, ArtifactError> {
        Ok(self.crawl()?.and_then(|t| t.crawl_delay(origin, agent)))
    }

    /// Every `crawl-delay` value, as written and in file order, of the group
    /// that applies to agent `agent` at origin `origin` (readers that honour
    /// crawl-delay differ on which of several they take).
    pub fn crawl_delays(&self, origin: usize, agent: usize) -> Result<Vec<&[u8]>, ArtifactError> {
        Ok(self.crawl()?.map(|t| t.crawl_delays(origin, agent)).unwrap_or_default())
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
    /// every caller reads next, each found origin's record, is on its way
    /// when this returns.
    pub fn find_origins(&self, lookups: &[(&[u8], u64)], found: &mut Vec<Option<usize>>) {
        let first = found.len();
        // The three sections found once for all lookups (each `section` call
        // is a match on the backing, a slice and, for SLOTS, a cast).
        let (table, keys, records) = (self.slots(), self.section(Section::Keys), self.records());
        for &(_, hash) in lookups {
            prefetch_in(bytemuck::cast_slice(table.words), Slot::home(hash, table.bits) * Slot::LEN);
        }
        found.extend(lookups.iter().map(|&(_, hash)| table.candidates(hash).next()));
        for &origin in found[first..].iter().flatten() {
            prefetch_in(records.bytes, origin * records.len);
        }
        for &origin in found[first..].iter().flatten() {
            prefetch_in(keys, records.key_range(origin).start);
        }
        for (slot, &(key, hash)) in found[first..].iter_mut().zip(lookups) {
            if slot.is_some_and(|origin| &keys[records.key_range(origin)] != key) {
                // Another key with the same 64-bit hash: look further.
                *slot = self.find_origin(key, hash);
            }
        }
    }

    /// The origins whose stored hash is `hash`, in probe order: linear
    /// probing from the hash's home slot up to the first empty slot (bounded
    /// by the table size, so that a full table cannot loop forever).
    #[inline]
    fn candidates(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        self.slots().candidates(hash)
    }

    /// The SLOTS section as the origin hash table.
    #[inline]
    fn slots(&self) -> Slots<'_> {
        Slots { words: bytemuck::cast_slice(self.section(Section::Slots)), mask: self.slot_mask, bits: self.slot_bits }
    }

    /// Every origin in the index with the hash it is stored under, in slot
    /// order: what lookups can reach (see [`crate::ShardSet`]'s membership check).
    pub fn indexed_origins(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let slots: &[u64] = bytemuck::cast_slice(self.section(Section::Slots));
        slots.chunks_exact(2).filter(|s| s[1] != EMPTY_SLOT).map(|s| (s[1] as usize, s[0]))
    }

    fn record(&self, origin: usize) -> &[u8] {
        self.records().get(origin)
    }

    /// The ORIGINS section as records.
    #[inline]
    fn records(&self) -> Records<'_> {
        Records { bytes: self.section(Section::Origins), len: self.record_len }
    }

    /// The canonical key of origin `origin`.
    pub fn origin_key(&self, origin: usize) -> &[u8] {
        &self.section(Section::Keys)[self.key_range(origin)]
    }

    /// Where the key of origin `origin` lies in KEYS.
    fn key_range(&self, origin: usize) -> std::ops::Range<usize> {
        self.records().key_range(origin)
    }

    /// The fetch information of origin `origin` (read once a run of URLs).
    #[inline]
    pub fn fetch_info(&self, origin: usize) -> FetchInfo {
        FetchInfo::unpack(OriginRecord::info(self.record(origin)))
            .unwrap_or(FetchInfo { kind: FetchKind::Rules, status: 0 })
    }

    /// The group that applies to `agent` at `origin`.
    #[inline]
    pub fn group_of(&self, origin: usize, agent: usize) -> usize {
        debug_assert!(agent < self.agents);
        OriginRecord::group(self.record(origin), agent) as usize
    }

    /// The best rank among `group`'s rules for a prepared path (0: none matched).
    /// An error when the group is damaged ([`ArtifactError::DamagedGroup`])
    /// or does not exist.
    pub fn decide(&self, group: usize, path: &[u8]) -> Result<GroupOutcome, ArtifactError> {
        let mut outcomes = Vec::with_capacity(1);
        self.decide_many(&[(group, path)], &mut outcomes)?;
        Ok(outcomes[0])
    }

    /// The outcomes of many `(group, prepared path)` queries, appended to
    /// `outcomes` in order: what [`Artifact::decide`] gives each query.
    ///
    /// The queries are answered side by side, a step of each in turn: first
    /// every group head, then every part, then the automata walked in
    /// lockstep (see the `walk` module). A frontier reaches tens of thousands of
    /// groups in random order, so nearly every one of these lookups misses the
    /// cache; one query at a time, each miss waits for the one before, while
    /// side by side the misses of different queries overlap.
    ///
    /// Each group is checked on its first use (see the module
    /// documentation); when one is damaged, or does not exist, nothing is
    /// appended and the error says which.
    pub fn decide_many(
        &self,
        queries: &[(usize, &[u8])],
        outcomes: &mut Vec<GroupOutcome>,
    ) -> Result<(), ArtifactError> {
        let index: &[u64] = bytemuck::cast_slice(self.section(Section::GroupIndex));
        let mut previous = None;
        for &(group, _) in queries {
            if previous.replace(group) == Some(group) {
                continue;
            }
            if let Some(&off) = index.get(group) {
                if let Some(byte) = self.bytes().get(off as usize) {
                    walk::prefetch(byte);
                }
            }
        }
        // Queries of one group side by side (the filter asks a short run of
        // one origin's URLs in a row) read the group's view and parts once:
        // per query, these reads and a rule list's prefilter lookup were
        // about a fifth of a cold frontier's instructions. Each part goes
        // straight to the walks of its layout (or the rule lists), stored
        // once for the run.
        // Sized for one run per query (grown push by push, the
        // reallocations cost more than the per-query reads saved), and so
        // are the 16-bit combs' walks, the layout of nearly every automaton
        // of a real corpus (grown, their reallocations were 20 instructions
        // a URL of a cold frontier); the other layouts' walks grow.
        let mut runs: Vec<QueryRun<'_>> = Vec::with_capacity(queries.len());
        let mut combs16 = Walks::with_capacity(queries.len(), queries.len());
        let (mut combs, mut dense16, mut dense32) =
            (Walks::with_capacity(0, 0), Walks::with_capacity(0, 0), Walks::with_capacity(0, 0));
        let mut lists = Vec::new();
        let mut start = 0;
        while start < queries.len() {
            let group = queries[start].0;
            let end = queries[start..].iter().position(|q| q.0 != group).map_or(queries.len(), |n| start + n);
            let view = self.checked_group(group)?;
            for p in 0..view.head.parts as usize {
                // SAFETY: `checked_group` checked the group (on its first use).
                let Ok(part) = (unsafe { view.part(p, Check::Validated) }) else { continue };
                let jobs = start..end;
                match part {
                    PartView::Comb(comb) => combs.add(comb, jobs),
                    PartView::Comb16(comb) => combs16.add(comb, jobs),
                    PartView::Dfa16(dfa) => dense16.add(dfa, jobs),
                    PartView::Dfa(dfa) => dense32.add(dfa, jobs),
                    PartView::Rules(_) => lists.push((jobs, self.runner_part(group, p, part))),
                }
            }
            runs.push(QueryRun { group, labels: view.labels().unwrap_or(&[0]), jobs: start..end });
            start = end;
        }
        let mut best = vec![0u32; queries.len()];
        let path = |job: u32| queries[job as usize].1;
        let mut finish = |job: u32, answer: u32| best[job as usize] = best[job as usize].max(answer);
        walk::interleave(&combs16, path, &mut finish);
        walk::interleave(&combs, path, &mut finish);
        walk::interleave(&dense16, path, &mut finish);
        walk::interleave(&dense32, path, &mut finish);
        // Rule lists last: the best rank so far lets their prefilter skip rules that cannot win.
        for (jobs, rules) in lists {
            for job in jobs {
                best[job] = best[job].max(rules.rank(queries[job].1, best[job]));
            }
        }
        outcomes.reserve(queries.len());
        for run in &runs {
            outcomes.extend(run.jobs.clone().map(|job| {
                let rank = best[job];
                let label = Label(run.labels.get(rank as usize).copied().unwrap_or(0));
                GroupOutcome { group: run.group, rank, label }
            }));
        }
        Ok(())
    }

    /// Group `group` with its parts read, to decide a run of paths with
    /// ([`CompiledGroup::rank`] answers as [`Artifact::decide`] does).
    /// An error when the group is damaged (checked on first use, as every
    /// lookup is) or does not exist.
    pub fn compiled_group(&self, group: usize) -> Result<CompiledGroup<'_>, ArtifactError> {
        let view = self.checked_group(group)?;
        let mut compiled = CompiledGroup::new(view.labels().unwrap_or(&[0]));
        for p in 0..view.head.parts as usize {
            // SAFETY: `checked_group` checked the group (on its first use).
            let part = unsafe { view.part(p, Check::Validated) }.map_err(|problem| self.damaged(group, problem))?;
            compiled.push(self.runner_part(group, p, part));
        }
        Ok(compiled)
    }

    /// Part `p` of group `group` as the walks run it: the one form both
    /// [`Artifact::decide_many`] and [`Artifact::compiled_group`] take a
    /// stored part in, a rule list with its shared [`LazyPrefilter`].
    #[inline]
    fn runner_part<'s>(&'s self, group: usize, p: usize, part: PartView<'s>) -> RunnerPart<'s> {
        RunnerPart::new(part, |patterns| self.prefilter((group, p), patterns))
    }

    /// The prefilter of a per-rule part, made on its first use (and built
    /// once the part is hot, see [`LazyPrefilter`]).
    fn prefilter(&self, part: (usize, usize), patterns: &[u8]) -> Arc<LazyPrefilter> {
        if let Some(found) = self.prefilters.read().unwrap_or_else(|e| e.into_inner()).get(&part) {
            return Arc::clone(found);
        }
        let made = Arc::new(LazyPrefilter::new(patterns.len()));
        let mut map = self.prefilters.write().unwrap_or_else(|e| e.into_inner());
        Arc::clone(map.entry(part).or_insert(made))
    }

    /// The rule that a rank of `group` stands for, when the artifact
    /// explains (`None` when it does not, or no rule matched); an error
    /// when the group is damaged or does not exist.
    pub fn explain(&self, outcome: &GroupOutcome) -> Result<Option<ExplainedRule<'_>>, ArtifactError> {
        let view = self.checked_group(outcome.group)?;
        match view.rule_ids().and_then(|ids| ids.get(outcome.rank as usize)) {
            Some(&index) if index != NO_RULE => self.rule(outcome.group, index as usize),
            _ => Ok(None),
        }
    }

    /// Rule `index` of `group`'s explanation table (`None` past its end).
    pub fn rule(&self, group: usize, index: usize) -> Result<Option<ExplainedRule<'_>>, ArtifactError> {
        let view = self.checked_group(group)?;
        Ok(view.explain_entry(index).and_then(|entry| {
            let pattern = view.bytes_at(entry.text_off, entry.text_len as usize)?;
            Some(ExplainedRule {
                line: entry.line,
                allow: entry.flags & 1 != 0,
                index_directory: entry.flags & 2 != 0,
                pattern,
            })
        }))
    }

    /// Number of rules in `group`'s explanation table.
    pub fn rule_count(&self, group: usize) -> Result<usize, ArtifactError> {
        Ok(self.checked_group(group)?.head.explain_count as usize)
    }

    /// Statistics of `group` for `inspect`: (states, table bytes, part kinds).
    pub fn group_stats(&self, group: usize) -> Result<GroupStats, ArtifactError> {
        let view = self.checked_group(group)?;
        let mut stats = GroupStats { ranks: view.head.ranks as usize, ..GroupStats::default() };
        for p in 0..view.head.parts as usize {
            // An automaton part: (states, table bytes, stored as a comb).
            // SAFETY: `checked_group` checked the group (on its first use).
            let automaton = match unsafe { view.part(p, Check::Validated) } {
                Ok(PartView::Dfa(dfa)) => Some((dfa.states(), dfa.memory_bytes(), false)),
                Ok(PartView::Dfa16(dfa)) => Some((dfa.states(), dfa.memory_bytes(), false)),
                Ok(PartView::Comb(comb)) => Some((comb.states(), comb.memory_bytes(), true)),
                Ok(PartView::Comb16(comb)) => Some((comb.states(), comb.memory_bytes(), true)),
                Ok(PartView::Rules(list)) => {
                    stats.fallback_rules += list.len();
                    stats.bytes += list.patterns().len() + list.len() * 8;
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
        Ok(stats)
    }

    fn section(&self, s: Section) -> &[u8] {
        let (off, len) = self.sections[s.index()];
        &self.bytes()[off..off + len]
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
    pub fn verdict(&self) -> robotsieve_core::Verdict {
        if self.allowed() {
            robotsieve_core::Verdict::Allowed
        } else {
            robotsieve_core::Verdict::Disallowed
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
    /// How many of those are stored as comb tables (see [`CombDfa`](crate::CombDfa)).
    pub combs: usize,
    /// States over all automaton parts.
    pub states: usize,
    /// Rules in the per-rule fallback part.
    pub fallback_rules: usize,
    /// Table bytes.
    pub bytes: usize,
}

fn cast<T: bytemuck::Pod>(bytes: &[u8], s: Section) -> Result<&[T], ArtifactError> {
    bytemuck::try_cast_slice(bytes)
        .map_err(|_| ArtifactError::Invalid { path: None, damage: Fault::SectionMisaligned { section: s }.into() })
}
