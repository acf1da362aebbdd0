//! Writing artifacts as a stream, in memory flat in the number of origins.
//!
//! The layout and every record's encoding are in `crate::format`;
//! this is its only writer. Group blobs (encoded on any thread by
//! [`crate::format::encode_group`]) are appended to the output as they come, so no
//! automaton stays in memory once written. What an origin leaves behind goes
//! to temporary files at once (its key, its fixed-size record, and its group
//! blob's offset for each distinct group); in memory stays only the origin
//! index's `(hash, origin)` pairs, 16 bytes per origin, up to
//! [`INDEX_RUN_PAIRS`] of them (fewer under a small memory budget): then
//! they are sorted and spilled to a temporary file as a run. At the
//! end, the side files are copied behind the groups, the hash table is
//! built by merging the sorted runs (its home slot is a hash's top bits, so
//! hash order is slot order), META is appended, and the header and section
//! table, reserved at the front, are filled in.
//!
//! The output is a temporary file beside the destination, renamed over it
//! only when complete, so a crash never leaves a half-written artifact under
//! the final name; the side files are unnamed temporary files that vanish
//! with the process.

use crate::artifact::Meta;
use crate::format::{
    align8, encode_group_offset, encode_preference_set, encode_string_list, Checksum, ContentDigest, CrawlHeader,
    CrawlRefs, EncodeError, FetchFacts, FetchInfo, Header, ListSection, OriginRecord, PreferenceHeader, Section,
    SectionEntry, Selection, Slot, CRAWL_LISTS, EMPTY_SLOT, FLAG_EXPLAIN, GROUPS_START, PREFERENCE_LISTS,
};
use crate::pending::{OutputError, PendingFile};
use robotsieve_core::preference::PreferenceLine;
use robotsieve_core::url::OriginKey;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The default memory budget of a build: 1 GiB.
pub const DEFAULT_MEMORY: usize = 1 << 30;

/// Bytes of the origin index kept in memory per origin before spilling.
const INDEX_BYTES_PER_ORIGIN: usize = 16;

/// Most origin-index pairs held in memory (4 MiB) before they are sorted and
/// spilled as a run: a fixed amount, so that memory stays flat from a
/// hundred thousand origins to a billion (a run per 262,144 origins, merged
/// at the end through a read buffer each).
const INDEX_RUN_PAIRS: usize = 1 << 18;

/// Why an artifact could not be written: a caller's mistake (an origin that
/// does not match what was added), a limit of the format, or the output.
#[non_exhaustive]
#[derive(Debug)]
pub enum WriteError {
    /// The same origin was added twice (its key).
    DuplicateOrigin(String),
    /// An origin's ids do not match the agents and what was added: `what`
    /// names the ids ("group ids", "preference sets", "sitemap and
    /// crawl-delay lists"), `added` what they index ("groups", "sets", "lists").
    OriginMismatch {
        /// The origin's key.
        origin: String,
        /// Which ids.
        what: &'static str,
        /// What they index.
        added: &'static str,
    },
    /// An origin's key is longer than a record can address.
    KeyTooLong {
        /// The origin's key.
        origin: String,
    },
    /// More of something than the format can hold.
    TooMany {
        /// What ("groups", "preferences: sets", ...).
        what: String,
        /// The most there may be.
        most: u64,
    },
    /// A group blob or a list does not fit its encoding.
    Encode(EncodeError),
    /// A group the caller could not encode, in its own words.
    BadGroup(String),
    /// Writing the file (or a temporary file) failed.
    Io(std::io::Error),
    /// Creating or writing the output failed: `NAME: cannot write: REASON`.
    Output(OutputError),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::DuplicateOrigin(key) => write!(f, "origin {key} was added twice"),
            WriteError::OriginMismatch { origin, what, added } => {
                write!(f, "origin {origin}: {what} do not match the agents and {added}")
            }
            WriteError::KeyTooLong { origin } => write!(f, "origin {origin}: key too long"),
            WriteError::TooMany { what, most } => write!(f, "more than {most} {what}"),
            WriteError::Encode(e) => write!(f, "{e}"),
            WriteError::BadGroup(msg) => f.write_str(msg),
            WriteError::Io(e) => write!(f, "{e}"),
            WriteError::Output(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Encode(e) => Some(e),
            WriteError::Io(e) => Some(e),
            WriteError::Output(e) => Some(e),
            _ => None,
        }
    }
}

impl WriteError {
    /// An I/O error as an error of the output `name` (the others as they are).
    fn named(self, name: &str) -> WriteError {
        match self {
            WriteError::Io(source) => WriteError::Output(OutputError { name: name.to_string(), source }),
            other => other,
        }
    }
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> WriteError {
        WriteError::Io(e)
    }
}

/// Where the artifact goes.
enum Target {
    /// A destination path, through a temporary file and a rename.
    Path(PendingFile),
    /// A destination that is no regular file (a device, a pipe): written
    /// whole at the end from an unnamed temporary file, since the writer
    /// seeks and reads back.
    Stream(PendingFile, File),
    /// An unnamed temporary file, read back whole (tests, [`ArtifactWriter::finish_bytes`]).
    Memory(File),
}

impl Target {
    fn file(&mut self) -> std::io::Result<&mut File> {
        match self {
            Target::Path(pending) => pending.file_mut(),
            Target::Stream(_, file) | Target::Memory(file) => Ok(file),
        }
    }
}

/// An append-only temporary file, buffered.
struct Spool {
    out: BufWriter<File>,
    len: u64,
}

impl Spool {
    fn new(dir: &Path) -> std::io::Result<Spool> {
        Ok(Spool { out: BufWriter::with_capacity(1 << 16, tempfile::tempfile_in(dir)?), len: 0 })
    }

    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.len += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    /// The file, flushed and rewound.
    fn into_file(self) -> std::io::Result<File> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        Ok(file)
    }
}

/// The origin index's `(hash, origin)` pairs: in memory up to a limit, then
/// sorted and spilled as runs.
struct IndexRuns {
    pending: Vec<(u64, u64)>,
    limit: usize,
    /// The memory budget, for the merge's read buffers.
    budget: usize,
    runs: Vec<File>,
    dir: PathBuf,
}

impl IndexRuns {
    fn push(&mut self, hash: u64, origin: u64) -> std::io::Result<()> {
        self.pending.push((hash, origin));
        if self.pending.len() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        self.pending.sort_unstable();
        let mut out = BufWriter::with_capacity(1 << 16, tempfile::tempfile_in(&self.dir)?);
        for &(hash, origin) in &self.pending {
            out.write_all(&hash.to_ne_bytes())?;
            out.write_all(&origin.to_ne_bytes())?;
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push(file);
        self.pending.clear();
        Ok(())
    }

    /// Every pair in hash order (then origin order).
    fn merged(mut self) -> std::io::Result<Merged> {
        if !self.runs.is_empty() {
            self.spill()?;
        }
        self.pending.sort_unstable();
        // Read buffers of 4 to 64 KiB, a sixteenth of the budget in all.
        let buffer = (self.budget / 16 / self.runs.len().max(1)).clamp(1 << 12, 1 << 16);
        let mut readers: Vec<BufReader<File>> =
            self.runs.into_iter().map(|f| BufReader::with_capacity(buffer, f)).collect();
        let mut heap = BinaryHeap::new();
        for (r, reader) in readers.iter_mut().enumerate() {
            if let Some(pair) = read_pair(reader)? {
                heap.push(std::cmp::Reverse((pair, r)));
            }
        }
        Ok(Merged { memory: self.pending.into_iter(), readers, heap })
    }
}

fn read_pair(reader: &mut impl Read) -> std::io::Result<Option<(u64, u64)>> {
    let mut b = [0u8; 16];
    match reader.read_exact(&mut b) {
        Ok(()) => Ok(Some((
            u64::from_ne_bytes(b[..8].try_into().expect("8 bytes")),
            u64::from_ne_bytes(b[8..].try_into().expect("8 bytes")),
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// The k-way merge of the sorted runs (or the one run in memory).
struct Merged {
    memory: std::vec::IntoIter<(u64, u64)>,
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<std::cmp::Reverse<((u64, u64), usize)>>,
}

impl Merged {
    fn next(&mut self) -> std::io::Result<Option<(u64, u64)>> {
        if self.readers.is_empty() {
            return Ok(self.memory.next());
        }
        let Some(std::cmp::Reverse((pair, r))) = self.heap.pop() else { return Ok(None) };
        if let Some(next) = read_pair(&mut self.readers[r])? {
            self.heap.push(std::cmp::Reverse((next, r)));
        }
        Ok(Some(pair))
    }
}

/// Streams groups and origins into one artifact.
pub struct ArtifactWriter {
    target: Target,
    /// The destination, for messages.
    name: String,
    /// Bytes written to the output so far (the end of the last group blob).
    pos: u64,
    meta: Meta,
    explain: bool,
    group_index: Spool,
    keys: Spool,
    records: Spool,
    index: IndexRuns,
    groups: u64,
    origins: u64,
    record: Vec<u8>,
    preferences: ListSpools,
    crawl: ListSpools,
    /// The content digest, fed each group blob as it is appended.
    digest: ContentDigest,
    /// Each origin's [`FetchFacts`], and whether any is known (else the
    /// FRESHNESS section is left out).
    freshness: Spool,
    any_facts: bool,
}

/// A list section as it is written (PREFERENCES, CRAWL; their shared shape
/// is [`ListSection`]): each origin's OF words and each distinct list go to
/// temporary files at once; the section is put together at the end, and
/// left out when nothing needs it.
struct ListSpools {
    shape: ListSection,
    /// The OF words, per origin.
    of: Spool,
    /// Per list, the end of its records.
    ends: Spool,
    /// The records.
    records: Spool,
    /// Their text.
    text: Spool,
    lists: u32,
    record_count: u32,
    /// Whether the section is written.
    any: bool,
    /// Scratch for one list's records and text, and for OF words.
    scratch: (Vec<u8>, Vec<u8>),
}

impl ListSpools {
    fn new(shape: ListSection, dir: &Path) -> std::io::Result<ListSpools> {
        Ok(ListSpools {
            shape,
            of: Spool::new(dir)?,
            ends: Spool::new(dir)?,
            records: Spool::new(dir)?,
            text: Spool::new(dir)?,
            lists: 0,
            record_count: 0,
            any: false,
            scratch: (Vec::new(), Vec::new()),
        })
    }

    /// Appends a list of `records` records, which `encode(text_at, records,
    /// text)` writes (`text_at`: where its text starts in TEXT), and returns
    /// its id.
    fn append(
        &mut self,
        records: usize,
        encode: impl FnOnce(u64, &mut Vec<u8>, &mut Vec<u8>) -> Result<(), EncodeError>,
    ) -> Result<u32, WriteError> {
        let (name, (list, record)) = (self.shape.section.name(), self.shape.terms);
        if self.lists >= self.shape.max_lists {
            return Err(WriteError::TooMany { what: format!("{name} {list}s"), most: u64::from(self.shape.max_lists) });
        }
        let (bytes, text) = &mut self.scratch;
        bytes.clear();
        text.clear();
        encode(self.text.len, bytes, text).map_err(WriteError::Encode)?;
        self.record_count = u32::try_from(u64::from(self.record_count) + records as u64)
            .map_err(|_| WriteError::TooMany { what: format!("{name} {record}"), most: u64::from(u32::MAX) })?;
        self.records.write(bytes)?;
        self.text.write(text)?;
        bytes.clear();
        ListSection::encode_end(self.record_count, bytes);
        self.ends.write(bytes)?;
        self.lists += 1;
        Ok(self.lists - 1)
    }

    /// Appends OF words.
    fn words(&mut self, words: impl IntoIterator<Item = u32>) -> std::io::Result<()> {
        let bytes = &mut self.scratch.0;
        bytes.clear();
        for word in words {
            ListSection::encode_word(word, bytes);
        }
        self.of.write(bytes)
    }

    /// Writes the section at `pos` behind its encoded `header`; its length and checksum.
    fn write_section(self, file: &mut File, pos: u64, header: &[u8]) -> std::io::Result<(u64, u64)> {
        file.seek(SeekFrom::Start(pos))?;
        file.write_all(header)?;
        let mut sum = Checksum::new();
        sum.update(header);
        let mut len = header.len() as u64;
        for spool in [self.of, self.ends, self.records, self.text] {
            len += copy_summed_into(&mut spool.into_file()?, file, &mut sum)?;
        }
        Ok((len, sum.finish()))
    }
}

impl ArtifactWriter {
    /// A writer of the artifact at `path` for these crawlers (each
    /// `TOKEN[,TOKEN...]`). With `explain`, group blobs carry their rules.
    /// The origin index spills to temporary files (beside `path`) beyond
    /// 2^18 origins or a quarter of `memory` bytes.
    pub fn create(
        path: &Path,
        agents: Vec<String>,
        explain: bool,
        memory: usize,
    ) -> Result<ArtifactWriter, WriteError> {
        let pending = PendingFile::create(path).map_err(WriteError::Output)?;
        let name = path.display().to_string();
        let output = |e| WriteError::Output(OutputError { name: name.clone(), source: e });
        let (target, dir) = if pending.temp_path().as_os_str().is_empty() {
            let dir = std::env::temp_dir();
            (Target::Stream(pending, tempfile::tempfile_in(&dir).map_err(output)?), dir)
        } else {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => PathBuf::from("."),
            };
            (Target::Path(pending), dir)
        };
        let mut writer =
            ArtifactWriter::with_target(target, &dir, agents, explain, memory).map_err(|e| e.named(&name))?;
        writer.name = name;
        Ok(writer)
    }

    /// A writer whose artifact [`ArtifactWriter::finish_bytes`] returns.
    pub fn in_memory(agents: Vec<String>, explain: bool) -> Result<ArtifactWriter, WriteError> {
        let dir = std::env::temp_dir();
        ArtifactWriter::with_target(Target::Memory(tempfile::tempfile_in(&dir)?), &dir, agents, explain, DEFAULT_MEMORY)
    }

    fn with_target(
        mut target: Target,
        dir: &Path,
        agents: Vec<String>,
        explain: bool,
        memory: usize,
    ) -> Result<ArtifactWriter, WriteError> {
        // Room for the header and section table, filled in last.
        target.file()?.write_all(&[0u8; GROUPS_START])?;
        let limit = (memory / 4 / INDEX_BYTES_PER_ORIGIN).clamp(1024, INDEX_RUN_PAIRS);
        Ok(ArtifactWriter {
            target,
            name: "the artifact".into(),
            pos: GROUPS_START as u64,
            meta: Meta { agents, build: Vec::new(), shard: None },
            explain,
            group_index: Spool::new(dir)?,
            keys: Spool::new(dir)?,
            records: Spool::new(dir)?,
            index: IndexRuns { pending: Vec::new(), limit, budget: memory, runs: Vec::new(), dir: dir.to_path_buf() },
            groups: 0,
            origins: 0,
            record: Vec::new(),
            preferences: ListSpools::new(PREFERENCE_LISTS, dir)?,
            crawl: ListSpools::new(CRAWL_LISTS, dir)?,
            digest: ContentDigest::default(),
            freshness: Spool::new(dir)?,
            any_facts: false,
        })
    }

    /// Records a piece of build information (shown by `inspect`).
    pub fn build_info(&mut self, key: &str, value: &str) {
        self.meta.build.push((key.to_string(), value.to_string()));
    }

    /// Marks the artifact as one shard of a set (see `crate::shards`).
    pub fn set_shard(&mut self, shard: crate::artifact::ShardInfo) {
        self.meta.shard = Some(shard);
    }

    /// Which shard of a set the artifact is, when it is one.
    pub fn shard(&self) -> Option<&crate::artifact::ShardInfo> {
        self.meta.shard.as_ref()
    }

    /// Whether group blobs must carry explanations.
    pub fn explains(&self) -> bool {
        self.explain
    }

    /// Appends a group blob made by `format::encode_group` and returns its id.
    pub fn add_group(&mut self, blob: &[u8]) -> Result<u32, WriteError> {
        self.naming_the_output(|w| w.append_group(blob))
    }

    /// Runs a step of writing; its I/O errors name the output.
    fn naming_the_output<T>(
        &mut self,
        step: impl FnOnce(&mut ArtifactWriter) -> Result<T, WriteError>,
    ) -> Result<T, WriteError> {
        step(self).map_err(|e| e.named(&self.name))
    }

    fn append_group(&mut self, blob: &[u8]) -> Result<u32, WriteError> {
        let id = u32::try_from(self.groups)
            .map_err(|_| WriteError::TooMany { what: "groups".into(), most: u64::from(u32::MAX) + 1 })?;
        debug_assert_eq!(blob.len() % 8, 0);
        self.target.file()?.write_all(blob)?;
        self.digest.add_group(blob);
        self.group_index.write(&encode_group_offset(self.pos))?;
        self.pos += blob.len() as u64;
        self.groups += 1;
        Ok(id)
    }

    /// Number of groups added so far.
    pub fn groups(&self) -> u64 {
        self.groups
    }

    /// Appends a set of preference lines (one crawler's `Content-Signal` and
    /// `Content-Usage` lines of a robots.txt) and returns its id, for
    /// [`ArtifactWriter::add_origin_with_preferences`].
    pub fn add_preference_set(&mut self, lines: &[PreferenceLine]) -> Result<u32, WriteError> {
        self.naming_the_output(|w| w.append_preference_set(lines))
    }

    fn append_preference_set(&mut self, lines: &[PreferenceLine]) -> Result<u32, WriteError> {
        let id = self
            .preferences
            .append(lines.len(), |at, records, text| encode_preference_set(lines, at, records, text))?;
        self.preferences.any = true;
        Ok(id)
    }

    /// Appends a list of strings (an origin's sitemaps, or a crawler's
    /// crawl-delay as a list of one) and returns its id, for the
    /// [`CrawlRefs`] of [`ArtifactWriter::add_origin_with_extras`].
    pub fn add_string_list(&mut self, list: &[&[u8]]) -> Result<u32, WriteError> {
        self.naming_the_output(|w| w.append_string_list(list))
    }

    fn append_string_list(&mut self, list: &[&[u8]]) -> Result<u32, WriteError> {
        self.crawl.append(list.len(), |at, items, text| encode_string_list(list, at, items, text))
    }

    /// Adds an origin with its fetch information and one group id per agent
    /// (no preference lines, naming no crawler).
    pub fn add_origin(&mut self, key: &OriginKey, info: FetchInfo, groups: &[u32]) -> Result<(), WriteError> {
        let none = vec![Selection::default(); groups.len()];
        self.add_origin_with_preferences(key, info, groups, &none)
    }

    /// Adds an origin with its fetch information, one group id per agent and
    /// one [`Selection`] per agent (its preference set, from
    /// [`ArtifactWriter::add_preference_set`], and whether it is named).
    pub fn add_origin_with_preferences(
        &mut self,
        key: &OriginKey,
        info: FetchInfo,
        groups: &[u32],
        selections: &[Selection],
    ) -> Result<(), WriteError> {
        let crawl = CrawlRefs { sitemaps: None, delays: vec![None; groups.len()] };
        self.add_origin_with_extras(key, info, groups, selections, &crawl, FetchFacts::default())
    }

    /// [`ArtifactWriter::add_origin_with_preferences`], with the origin's
    /// sitemap list and each crawler's crawl-delay list (ids from
    /// [`ArtifactWriter::add_string_list`]), and what is known of when its
    /// governing copy was fetched (the FRESHNESS section, written when any
    /// origin's facts are not empty).
    pub fn add_origin_with_extras(
        &mut self,
        key: &OriginKey,
        info: FetchInfo,
        groups: &[u32],
        selections: &[Selection],
        crawl: &CrawlRefs,
        facts: FetchFacts,
    ) -> Result<(), WriteError> {
        let mismatch = |what, added| WriteError::OriginMismatch { origin: key.to_string(), what, added };
        if groups.len() != self.meta.agents.len() || groups.iter().any(|&g| u64::from(g) >= self.groups) {
            return Err(mismatch("group ids", "groups"));
        }
        if selections.len() != groups.len()
            || selections.iter().any(|s| s.set.is_some_and(|s| s >= self.preferences.lists))
        {
            return Err(mismatch("preference sets", "sets"));
        }
        let list_ok = |id: &Option<u32>| id.is_none_or(|l| l < self.crawl.lists);
        if crawl.delays.len() != groups.len() || !list_ok(&crawl.sitemaps) || !crawl.delays.iter().all(list_ok) {
            return Err(mismatch("sitemap and crawl-delay lists", "lists"));
        }
        let bytes = key.as_bytes();
        let key_len = u32::try_from(bytes.len()).map_err(|_| WriteError::KeyTooLong { origin: key.to_string() })?;
        let mut spool = || -> std::io::Result<()> {
            self.record.clear();
            crawl.encode(&mut self.record);
            self.crawl.of.write(&self.record)?;
            self.crawl.any |= !crawl.is_empty();
            self.preferences.any |= selections.iter().any(|s| s.named);
            self.preferences.words(selections.iter().map(|s| s.pack()))?;
            self.record.clear();
            OriginRecord { key_off: self.keys.len, key_len, info: info.pack(), groups: groups.to_vec() }
                .encode(&mut self.record);
            self.keys.write(bytes)?;
            self.records.write(&self.record)?;
            self.record.clear();
            facts.encode(&mut self.record);
            self.freshness.write(&self.record)?;
            self.any_facts |= !facts.is_empty();
            self.index.push(key.hash64(), self.origins)?;
            self.origins += 1;
            Ok(())
        };
        spool().map_err(|e| WriteError::Io(e).named(&self.name))
    }

    /// Number of origins added so far.
    pub fn origins(&self) -> u64 {
        self.origins
    }

    /// Completes the artifact and renames it into place; returns its size.
    pub fn finish(self) -> Result<u64, WriteError> {
        let name = self.name.clone();
        let (target, len) = self.complete().map_err(|e| e.named(&name))?;
        match target {
            Target::Path(pending) => pending.commit().map_err(WriteError::Output)?,
            Target::Stream(mut pending, mut file) => {
                let copied = file.seek(SeekFrom::Start(0)).and_then(|_| std::io::copy(&mut file, &mut pending));
                copied.map_err(|e| WriteError::Io(e).named(&name))?;
                pending.commit().map_err(WriteError::Output)?;
            }
            Target::Memory(_) => {}
        }
        Ok(len)
    }

    /// Completes the artifact and returns its bytes (for an in-memory writer).
    pub fn finish_bytes(self) -> Result<Vec<u8>, WriteError> {
        let name = self.name.clone();
        let (mut target, len) = self.complete().map_err(|e| e.named(&name))?;
        let file = target.file()?;
        file.seek(SeekFrom::Start(0))?;
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn complete(mut self) -> Result<(Target, u64), WriteError> {
        let mut entries = vec![SectionEntry {
            section: Section::Groups,
            offset: GROUPS_START as u64,
            len: self.pos - GROUPS_START as u64,
            checksum: 0,
        }];
        let spools =
            [(Section::GroupIndex, self.group_index), (Section::Keys, self.keys), (Section::Origins, self.records)];
        let file = self.target.file()?;
        let mut pos = self.pos;
        for (section, spool) in spools {
            pos = pad_to_8(file, pos)?;
            let mut source = spool.into_file()?;
            let (len, checksum) = copy_summed(&mut source, file)?;
            entries.push(SectionEntry { section, offset: pos, len, checksum });
            pos += len;
        }
        pos = pad_to_8(file, pos)?;
        let origins = |name: &str| {
            u32::try_from(self.origins)
                .map_err(|_| WriteError::TooMany { what: format!("{name} origins"), most: u64::from(u32::MAX) })
        };
        let agents = self.meta.agents.len() as u32;
        let (p, c) = (self.preferences, self.crawl);
        let mut sections = Vec::new();
        if p.any {
            let header = PreferenceHeader {
                sets: p.lists,
                lines: p.record_count,
                origins: origins(p.shape.section.name())?,
                agents,
                text_len: p.text.len,
            };
            sections.push((Section::Preferences, header.encode().to_vec(), p));
        }
        if c.any {
            let header = CrawlHeader {
                origins: origins(c.shape.section.name())?,
                agents,
                lists: c.lists,
                items: c.record_count,
                text_len: c.text.len,
            };
            sections.push((Section::Crawl, header.encode().to_vec(), c));
        }
        for (section, header, spools) in sections {
            let (len, checksum) = spools.write_section(file, pos, &header)?;
            entries.push(SectionEntry { section, offset: pos, len, checksum });
            pos = pad_to_8(file, pos + len)?;
        }
        if self.any_facts {
            let (len, checksum) = copy_summed(&mut self.freshness.into_file()?, file)?;
            entries.push(SectionEntry { section: Section::Freshness, offset: pos, len, checksum });
            pos += len;
        }
        let (slots_len, checksum) = write_slots(file, pos, self.index, self.origins, &entries, self.meta.agents.len())?;
        entries.push(SectionEntry { section: Section::Slots, offset: pos, len: slots_len, checksum });
        pos += slots_len;
        let mut meta = self.meta.clone();
        meta.build.push(("origins".into(), self.origins.to_string()));
        meta.build.push(("groups".into(), self.groups.to_string()));
        let meta = meta.to_json();
        file.seek(SeekFrom::Start(pos))?;
        file.write_all(meta.as_bytes())?;
        entries.push(SectionEntry {
            section: Section::Meta,
            offset: pos,
            len: meta.len() as u64,
            checksum: crate::format::checksum(meta.as_bytes()),
        });
        pos = pad_to_8(file, pos + meta.len() as u64)?;

        let header = Header {
            flags: if self.explain { FLAG_EXPLAIN } else { 0 },
            file_len: pos,
            checksum: 0,
            sections: entries.len() as u32,
            digest: self.digest.finish(&entries),
        };
        file.write_all_at(&header.encode_with_sections(&entries), 0)?;
        file.set_len(pos)?;
        Ok((self.target, pos))
    }
}

/// Zero bytes from `pos` up to the next multiple of 8; the new position.
fn pad_to_8(file: &mut File, pos: u64) -> std::io::Result<u64> {
    let end = align8(pos as usize) as u64;
    file.seek(SeekFrom::Start(pos))?;
    file.write_all(&[0u8; 8][..(end - pos) as usize])?;
    Ok(end)
}

/// Copies `source` to the end of `out`; its length and checksum.
fn copy_summed(source: &mut File, out: &mut File) -> std::io::Result<(u64, u64)> {
    let mut sum = Checksum::new();
    let len = copy_summed_into(source, out, &mut sum)?;
    Ok((len, sum.finish()))
}

/// Copies `source` to the end of `out`, feeding `sum`; the length copied.
fn copy_summed_into(source: &mut File, out: &mut File, sum: &mut Checksum) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = source.read(&mut buf)?;
        if n == 0 {
            return Ok(len);
        }
        sum.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        len += n as u64;
    }
}

/// Writes the origin hash table at `at` from the merged `(hash, origin)`
/// runs: each origin in the first free slot from its home slot on, the few
/// that run past the end wrapped round to the first free slots from the
/// start. Origins of equal hash have their keys compared, read back from the
/// sections already written, so that a duplicate is refused. Returns the
/// section's length and checksum.
fn write_slots(
    file: &mut File,
    at: u64,
    index: IndexRuns,
    origins: u64,
    entries: &[SectionEntry],
    agents: usize,
) -> Result<(u64, u64), WriteError> {
    let capacity = (origins as usize * 2).next_power_of_two().max(2);
    let bits = capacity.trailing_zeros();
    let find = |s: Section| entries.iter().find(|e| e.section == s).expect("written before the slots").offset;
    let (records_at, keys_at) = (find(Section::Origins), find(Section::Keys));
    let record_len = OriginRecord::len(agents) as u64;
    let key_of = |file: &File, origin: u64| -> std::io::Result<Vec<u8>> {
        let mut record = vec![0u8; record_len as usize];
        file.read_exact_at(&mut record, records_at + origin * record_len)?;
        let (off, len) = OriginRecord::key_range(&record);
        let mut key = vec![0u8; len as usize];
        file.read_exact_at(&mut key, keys_at + off)?;
        Ok(key)
    };

    file.seek(SeekFrom::Start(at))?;
    let mut out = BufWriter::with_capacity(1 << 16, &*file);
    let empty = Slot::EMPTY.encode();
    let mut next_free = 0usize;
    let mut overflow = Vec::new();
    let mut merged = index.merged()?;
    let mut same_hash: Vec<u64> = Vec::new();
    let mut last_hash = None;
    while let Some((hash, origin)) = merged.next()? {
        if last_hash == Some(hash) {
            let key = key_of(out.get_ref(), origin)?;
            for &other in &same_hash {
                if key_of(out.get_ref(), other)? == key {
                    return Err(WriteError::DuplicateOrigin(String::from_utf8_lossy(&key).into_owned()));
                }
            }
        } else {
            same_hash.clear();
            last_hash = Some(hash);
        }
        same_hash.push(origin);
        let home = Slot::home(hash, bits);
        let place = home.max(next_free);
        if place >= capacity {
            overflow.push(Slot { hash, origin });
            continue;
        }
        for _ in next_free..place {
            out.write_all(&empty)?;
        }
        out.write_all(&Slot { hash, origin }.encode())?;
        next_free = place + 1;
    }
    for _ in next_free..capacity {
        out.write_all(&empty)?;
    }
    out.flush()?;
    drop(out);
    // The wrapped ones: the first free slots from the start.
    let mut probe = 0usize;
    for slot in overflow {
        loop {
            let mut b = [0u8; Slot::LEN];
            file.read_exact_at(&mut b, at + (probe * Slot::LEN) as u64)?;
            probe += 1;
            if Slot::decode(&b).origin == EMPTY_SLOT {
                file.write_all_at(&slot.encode(), at + ((probe - 1) * Slot::LEN) as u64)?;
                break;
            }
        }
    }
    // The section as it now stands, read back for its checksum.
    let len = (capacity * Slot::LEN) as u64;
    let mut sum = Checksum::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        file.read_exact_at(&mut buf[..n], at + done)?;
        sum.update(&buf[..n]);
        done += n as u64;
    }
    Ok((len, sum.finish()))
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and renames it
/// into place: readers see the old file or the whole new one, never a part.
/// (The engine's [`PendingFile`] does the work, as for every output, and
/// writes streams such as `-` or `/dev/full` in place.) Every error names
/// `path`: `PATH: cannot write: REASON`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = PendingFile::create(path).map_err(std::io::Error::other)?;
    file.write_all(bytes)
        .map_err(|e| std::io::Error::new(e.kind(), OutputError { name: path.display().to_string(), source: e }))?;
    file.commit().map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Artifact;
    use crate::format::FetchKind;

    /// The blob of a group without rules (what an empty robots.txt compiles to).
    fn automaton_free_group() -> Vec<u8> {
        let no_rules = crate::compiled::Part::Rules(crate::rules::RuleList::from_rules(std::iter::empty()));
        let empty = crate::compiled::Matcher::new(vec![0], vec![u32::MAX], vec![no_rules]).unwrap();
        crate::format::encode_group(&empty, false, &[]).unwrap()
    }

    fn writer_with_one_group(memory: usize) -> ArtifactWriter {
        let dir = std::env::temp_dir();
        let target = Target::Memory(tempfile::tempfile_in(&dir).unwrap());
        let mut writer = ArtifactWriter::with_target(target, &dir, vec!["mybot".into()], false, memory).unwrap();
        writer.add_group(&automaton_free_group()).unwrap();
        writer
    }

    fn key(i: usize) -> OriginKey {
        OriginKey::of_url(format!("https://host{i}.example")).unwrap()
    }

    const INFO: FetchInfo = FetchInfo { kind: FetchKind::Unrestricted, status: 404 };

    /// The origin index spilled to many sorted runs gives the very bytes it
    /// gives held in memory, and every origin is found through it.
    #[test]
    fn a_spilled_index_is_the_index_held_in_memory() {
        let build = |memory| {
            let mut writer = writer_with_one_group(memory);
            for i in 0..5000 {
                writer.add_origin(&key(i), INFO, &[0]).unwrap();
            }
            let spilled = writer.index.runs.len();
            (writer.finish_bytes().unwrap(), spilled)
        };
        let (in_memory, no_runs) = build(DEFAULT_MEMORY);
        let (spilled, runs) = build(0);
        assert_eq!((no_runs, runs), (0, 4), "5000 origins in runs of 1024");
        assert!(in_memory == spilled, "spilling changed the artifact");
        let artifact = Artifact::from_bytes(&spilled).unwrap();
        for i in 0..5000 {
            let k = key(i);
            assert_eq!(artifact.find_origin(k.as_bytes(), k.hash64()), Some(i));
        }
    }

    #[test]
    fn a_duplicate_origin_is_refused() {
        let mut writer = writer_with_one_group(0);
        for i in [0, 1, 2, 1] {
            writer.add_origin(&key(i), INFO, &[0]).unwrap();
        }
        let err = writer.finish_bytes().unwrap_err().to_string();
        assert_eq!(err, "origin https://host1.example was added twice");
    }

    #[test]
    fn an_origin_of_an_unknown_group_is_refused_at_once() {
        let mut writer = writer_with_one_group(0);
        for groups in [&[1][..], &[0, 0]] {
            let e = writer.add_origin(&key(0), INFO, groups).unwrap_err();
            assert!(matches!(&e, WriteError::OriginMismatch { what: "group ids", .. }), "{e:?}");
            assert_eq!(e.to_string(), "origin https://host0.example: group ids do not match the agents and groups");
        }
        let none = [Selection { set: Some(0), named: false }];
        let e = writer.add_origin_with_preferences(&key(0), INFO, &[0], &none).unwrap_err();
        assert!(matches!(&e, WriteError::OriginMismatch { what: "preference sets", added: "sets", .. }), "{e:?}");
        let crawl = CrawlRefs { sitemaps: Some(0), delays: vec![None] };
        let e = writer
            .add_origin_with_extras(&key(0), INFO, &[0], &[Selection::default()], &crawl, FetchFacts::default())
            .unwrap_err();
        assert!(matches!(&e, WriteError::OriginMismatch { added: "lists", .. }), "{e:?}");
        // Nothing of the refused origins was written.
        writer.add_origin(&key(0), INFO, &[0]).unwrap();
        assert_eq!(writer.origins(), 1);
    }

    /// Fetch facts are stored per origin and read back, absent ones as
    /// absent; without any, no FRESHNESS section is written (the artifact is
    /// the bytes it is without the feature).
    #[test]
    fn fetch_facts_read_back_and_cost_nothing_when_absent() {
        let crawl = CrawlRefs { sitemaps: None, delays: vec![None] };
        let build = |facts: &[FetchFacts]| {
            let mut writer = writer_with_one_group(DEFAULT_MEMORY);
            for (i, &f) in facts.iter().enumerate() {
                writer.add_origin_with_extras(&key(i), INFO, &[0], &[Selection::default()], &crawl, f).unwrap();
            }
            writer.finish_bytes().unwrap()
        };
        let some = [
            FetchFacts { fetched_at: Some(1_796_000_000), max_age: Some(3600), failures_in_a_row: None },
            FetchFacts::default(),
            FetchFacts { fetched_at: Some(-5), max_age: None, failures_in_a_row: Some(4) },
        ];
        let bytes = build(&some);
        let artifact = Artifact::from_bytes(&bytes).unwrap();
        assert!(artifact.has_fetch_facts());
        for (i, f) in some.iter().enumerate() {
            let k = key(i);
            let o = artifact.find_origin(k.as_bytes(), k.hash64()).unwrap();
            assert_eq!(artifact.fetch_facts(o).unwrap(), *f);
        }
        let past = artifact.fetch_facts(3).unwrap_err();
        assert!(matches!(past, crate::ArtifactError::NoSuchOrigin { origin: 3, origins: 3 }), "{past}");
        let none = build(&[FetchFacts::default(); 3]);
        let without = Artifact::from_bytes(&none).unwrap();
        assert!(!without.has_fetch_facts());
        assert_eq!(bytes.len() - none.len(), 3 * FetchFacts::LEN);
        assert_eq!(without.fetch_facts(0).unwrap(), FetchFacts::default());
        // A damaged record is found by the section's checksum on first use.
        let at = bytes.len() - none.len();
        let entry = (0..Header::decode(&bytes).unwrap().sections as usize)
            .map(|i| SectionEntry::decode(&bytes[Header::LEN + i * SectionEntry::LEN..]).unwrap())
            .find(|e| e.section == Section::Freshness)
            .unwrap();
        assert_eq!(entry.len as usize, at);
        let mut damaged = bytes.clone();
        damaged[entry.offset as usize + 20] ^= 1;
        let opened = Artifact::from_bytes(&damaged).unwrap();
        let e = opened.fetch_facts(1).unwrap_err().to_string();
        assert!(e.contains("fetch times"), "{e}");
        assert!(opened.verify().is_err());
    }

    /// Hashes whose home slots crowd the end of the table wrap round to the
    /// first free slots, where linear probing from their home finds them.
    #[test]
    fn origins_past_the_last_slot_wrap_round() {
        let mut writer = writer_with_one_group(DEFAULT_MEMORY);
        for i in 0..8 {
            writer.add_origin(&key(i), INFO, &[0]).unwrap();
        }
        // Eight origins, 16 slots: six hashes at the last home slot, two at the first.
        let hashes: Vec<u64> = (0..8).map(|i| if i < 6 { u64::MAX - i } else { i }).collect();
        for (pair, &hash) in writer.index.pending.iter_mut().zip(&hashes) {
            pair.0 = hash;
        }
        let bytes = writer.finish_bytes().unwrap();
        let header = Header::decode(&bytes).unwrap();
        let slots = (0..header.sections as usize)
            .map(|i| SectionEntry::decode(&bytes[Header::LEN + i * SectionEntry::LEN..]).unwrap())
            .find(|e| e.section == Section::Slots)
            .unwrap();
        let table: Vec<Slot> = bytes[slots.offset as usize..(slots.offset + slots.len) as usize]
            .chunks_exact(Slot::LEN)
            .map(Slot::decode)
            .collect();
        assert_eq!(table.len(), 16);
        for (origin, &hash) in hashes.iter().enumerate() {
            let home = Slot::home(hash, 4);
            let found = (0..16)
                .map(|k| table[(home + k) % 16])
                .take_while(|s| s.origin != EMPTY_SLOT)
                .any(|s| s.hash == hash && s.origin == origin as u64);
            assert!(found, "origin {origin} (hash {hash:#x}) is not on its probe path");
        }
        assert_eq!(table.iter().filter(|s| s.origin != EMPTY_SLOT).count(), 8);
    }
}
