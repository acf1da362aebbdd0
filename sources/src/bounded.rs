//! The corpus resolved in bounded memory: the same rules and the same
//! answers as [`crate::corpus::Corpus::resolve`] (newest record wins,
//! redirects through the corpus, the 30-day rule: [`crate::status`]), for a
//! corpus of any size.
//!
//! 1. **First pass.** Every input is read as a stream ([`CorpusReader`]);
//!    each record gets its number in input order and leaves a few words: per
//!    URL fetched (a 128-bit hash of its origin key and path, its fetch time,
//!    number, status class and where it redirects to, as the hash of the
//!    target's key and path) and per record of a `/robots.txt` (its origin
//!    key, time, number, status, redirect). Both go into external sorts
//!    (the private `runs` module) that spill sorted runs to unnamed temporary files
//!    beyond the memory budget. Inputs that cannot be read twice (a pipe,
//!    standard input) are first copied as they are, compressed or not, to an
//!    unnamed temporary file.
//! 2. **Newest per URL.** The sorted URL words keep the newest record of each
//!    URL: the table redirects are followed through, a temporary file sorted
//!    by URL hash.
//! 3. **Redirect chains.** Each `/robots.txt` record that redirects is a chain
//!    (its target hash, its place in origin order, the records visited);
//!    each round sorts the open chains by target and merges them with the
//!    table, one hop each, at most [`MAX_REDIRECTS`] rounds. What each record
//!    comes to after its redirects goes to a file of 16 bytes a record.
//! 4. **Newest-wins.** The `/robots.txt` records in origin-key order, with
//!    their outcomes, through [`FetchHistory`]: per origin its key, what
//!    governs it and, for a body, the number of the record whose body it is.
//! 5. **Second pass.** The inputs are read again; the bodies needed (sorted by
//!    record number) are copied to a temporary file, and each origin's
//!    (offset, length) is written at its place in a file of 16 bytes an
//!    origin.
//! 6. **Out.** [`ResolvedOrigins`] streams the origins in key order (the order
//!    of [`crate::corpus::Resolution::origins`], so artifacts are the same
//!    bytes), each body read from the temporary file as it is reached.
//!
//! Warnings come out in the order the in-memory resolution gives them
//! (reading, unparsable URLs, records not at a robots.txt root), kept in
//! temporary files.

use crate::corpus::{
    record_key, resolve_location, CopyFacts, CorpusError, CorpusReader, FetchRecord, OriginRobots, Place, RecordSink,
    Robots, SourceRef, Warning,
};
use crate::runs::{read_or_end, Merged, SortedRuns, Spill};
use crate::status::{Choice, FetchHistory, StatusClass, MAX_REDIRECTS};
use crate::time::Timestamp;
use robotsieve_core::url::{KeyBuf, OriginKey};
use std::fs::File;
use std::hash::Hasher;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// How many skipped records a [`BoundedResolution`] keeps (all are counted).
pub const SKIPPED_KEPT: usize = 16;

/// A 128-bit hash of a URL's key and path ([`record_key`]): two SipHash runs
/// of different prefixes, as the build hashes groups. Two different URLs of a
/// corpus collide with a chance of about n^2 / 2^129.
fn url_hash(key: &[u8]) -> u128 {
    let half = |prefix: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write_u8(prefix);
        h.write(key);
        h.finish()
    };
    u128::from(half(0)) << 64 | u128::from(half(1))
}

/// A fetch time as a number in the order of `Option<Timestamp>`: 0 for none.
fn time_key(time: Option<Timestamp>) -> u128 {
    time.map_or(0, |t| {
        1 + (((t.unix_seconds() as i128 - i64::MIN as i128) as u128) << 32 | u128::from(t.subsec_nanos()))
    })
}

/// The time of a [`time_key`].
fn time_of(key: u128) -> Option<Timestamp> {
    let key = key.checked_sub(1)?;
    Some(Timestamp::from_unix_nanos(((key >> 32) as i128 + i64::MIN as i128) as i64, key as u32))
}

/// The bytes of a [`CopyFacts`] in the temporary files.
const COPY_LEN: usize = 28;

/// A copy's `max_age` and `failures_in_a_row` as words (`u64::MAX`,
/// `u32::MAX`: none).
fn copy_words(max_age: Option<u64>, failures_in_a_row: Option<u32>) -> (u64, u32) {
    (max_age.map_or(u64::MAX, |a| a.min(u64::MAX - 1)), failures_in_a_row.map_or(u32::MAX, |k| k.min(u32::MAX - 1)))
}

/// Writes a copy's facts in [`COPY_LEN`] bytes.
fn write_copy(copy: &CopyFacts, out: &mut impl Write) -> io::Result<()> {
    let (max_age, failures) = copy_words(copy.max_age, copy.failures_in_a_row);
    write_copy_words(time_key(copy.fetched_at), max_age, failures, out)
}

/// Writes a copy's facts as words ([`time_key`], [`copy_words`]) in
/// [`COPY_LEN`] bytes.
fn write_copy_words(time: u128, max_age: u64, failures: u32, out: &mut impl Write) -> io::Result<()> {
    out.write_all(&time.to_le_bytes())?;
    out.write_all(&max_age.to_le_bytes())?;
    out.write_all(&failures.to_le_bytes())
}

/// Reads what [`write_copy`] and [`write_copy_words`] wrote.
fn copy_of(b: &[u8; COPY_LEN]) -> CopyFacts {
    let max_age = u64::from_le_bytes(b[16..24].try_into().expect("8 bytes"));
    let failures = u32::from_le_bytes(b[24..28].try_into().expect("4 bytes"));
    CopyFacts {
        fetched_at: time_of(u128::from_le_bytes(b[..16].try_into().expect("16 bytes"))),
        max_age: (max_age != u64::MAX).then_some(max_age),
        failures_in_a_row: (failures != u32::MAX).then_some(failures),
    }
}

/// Where a record redirects to.
const NOT_REDIRECT: u8 = 0;
const TO_TARGET: u8 = 1;
const NO_LOCATION: u8 = 2;
const INVALID_LOCATION: u8 = 3;

fn class_code(class: StatusClass) -> u8 {
    match class {
        StatusClass::Success => 0,
        StatusClass::Redirect => 1,
        StatusClass::ClientError => 2,
        StatusClass::Unreachable => 3,
    }
}

fn class_of(code: u8) -> StatusClass {
    match code {
        0 => StatusClass::Success,
        1 => StatusClass::Redirect,
        2 => StatusClass::ClientError,
        _ => StatusClass::Unreachable,
    }
}

fn read_array<const N: usize>(input: &mut impl Read) -> io::Result<Option<[u8; N]>> {
    let mut b = [0; N];
    Ok(read_or_end(input, &mut b)?.then_some(b))
}

fn cut_short() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "a temporary file is cut short")
}

/// The words kept of every record with a URL that parses (49 bytes on disk).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct UrlFact {
    url: u128,
    time: u128,
    seq: u64,
    class: u8,
    redirect: u8,
    target: u128,
}

impl Spill for UrlFact {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut b = [0u8; 58];
        b[..16].copy_from_slice(&self.url.to_le_bytes());
        b[16..32].copy_from_slice(&self.time.to_le_bytes());
        b[32..40].copy_from_slice(&self.seq.to_le_bytes());
        b[40] = self.class;
        b[41] = self.redirect;
        b[42..58].copy_from_slice(&self.target.to_le_bytes());
        out.write_all(&b)
    }

    fn read_from(input: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(b) = read_array::<58>(input)? else { return Ok(None) };
        let u128_at = |i: usize| u128::from_le_bytes(b[i..i + 16].try_into().expect("16 bytes"));
        Ok(Some(UrlFact {
            url: u128_at(0),
            time: u128_at(16),
            seq: u64::from_le_bytes(b[32..40].try_into().expect("8 bytes")),
            class: b[40],
            redirect: b[41],
            target: u128_at(42),
        }))
    }
}

/// The words kept of every record of a `/robots.txt` at an origin's root.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RootFact {
    key: Box<[u8]>,
    time: u128,
    seq: u64,
    status: u16,
    redirect: u8,
    target: u128,
    /// `max_age` (`u64::MAX`: none) and `failures_in_a_row` (`u32::MAX`:
    /// none), for the artifact's freshness facts.
    max_age: u64,
    failures: u32,
}

impl Spill for RootFact {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&(self.key.len() as u32).to_le_bytes())?;
        out.write_all(&self.key)?;
        out.write_all(&self.time.to_le_bytes())?;
        out.write_all(&self.seq.to_le_bytes())?;
        out.write_all(&self.status.to_le_bytes())?;
        out.write_all(&[self.redirect])?;
        out.write_all(&self.target.to_le_bytes())?;
        out.write_all(&self.max_age.to_le_bytes())?;
        out.write_all(&self.failures.to_le_bytes())
    }

    fn read_from(input: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(length) = read_array::<4>(input)? else { return Ok(None) };
        let mut key = vec![0; u32::from_le_bytes(length) as usize];
        input.read_exact(&mut key)?;
        let b = read_array::<55>(input)?.ok_or_else(cut_short)?;
        Ok(Some(RootFact {
            key: key.into(),
            time: u128::from_le_bytes(b[..16].try_into().expect("16 bytes")),
            seq: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            status: u16::from_le_bytes([b[24], b[25]]),
            redirect: b[26],
            target: u128::from_le_bytes(b[27..43].try_into().expect("16 bytes")),
            max_age: u64::from_le_bytes(b[43..51].try_into().expect("8 bytes")),
            failures: u32::from_le_bytes(b[51..55].try_into().expect("4 bytes")),
        }))
    }

    fn memory(&self) -> usize {
        std::mem::size_of::<Self>() + self.key.len()
    }
}

/// An open redirect chain: the target it goes to next, the place of the
/// record it starts from (in origin order), and the records it visited.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Chain {
    target: u128,
    place: u64,
    hops: u8,
    visited: [u64; MAX_REDIRECTS + 1],
}

impl Spill for Chain {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.target.to_le_bytes())?;
        out.write_all(&self.place.to_le_bytes())?;
        out.write_all(&[self.hops])?;
        for seq in &self.visited[..=self.hops as usize] {
            out.write_all(&seq.to_le_bytes())?;
        }
        Ok(())
    }

    fn read_from(input: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(b) = read_array::<25>(input)? else { return Ok(None) };
        let hops = b[24];
        let mut visited = [0; MAX_REDIRECTS + 1];
        for seq in visited.iter_mut().take(hops as usize + 1) {
            *seq = u64::from_le_bytes(read_array::<8>(input)?.ok_or_else(cut_short)?);
        }
        Ok(Some(Chain {
            target: u128::from_le_bytes(b[..16].try_into().expect("16 bytes")),
            place: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            hops,
            visited,
        }))
    }
}

/// A pair of words: a record number and a place (or nothing, for the
/// records reached by a redirect).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pair(u64, u64);

impl Spill for Pair {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.0.to_le_bytes())?;
        out.write_all(&self.1.to_le_bytes())
    }

    fn read_from(input: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(b) = read_array::<16>(input)? else { return Ok(None) };
        Ok(Some(Pair(
            u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
        )))
    }
}

/// What a record comes to after its redirects (16 bytes in the outcome file).
#[derive(Clone, Copy)]
struct Outcome {
    class: StatusClass,
    /// The record at the end of the chain.
    last: u64,
}

fn write_outcome(file: &File, place: u64, outcome: Outcome) -> io::Result<()> {
    let mut b = [0u8; 16];
    b[0] = class_code(outcome.class);
    b[8..].copy_from_slice(&outcome.last.to_le_bytes());
    file.write_all_at(&b, place * 16)
}

/// A failed chain counts as a 404.
const FAILED: Outcome = Outcome { class: StatusClass::ClientError, last: u64::MAX };

/// Warnings of one kind, as the lines people read, in a temporary file.
struct WarningLog {
    count: u64,
    file: BufWriter<File>,
}

impl WarningLog {
    fn new() -> io::Result<WarningLog> {
        Ok(WarningLog { count: 0, file: BufWriter::new(tempfile::tempfile()?) })
    }

    fn push(&mut self, warning: &Warning) -> io::Result<()> {
        let text = warning.to_string();
        self.count += 1;
        self.file.write_all(&(text.len() as u32).to_le_bytes())?;
        self.file.write_all(text.as_bytes())
    }
}

/// The warnings of a bounded resolution, in the order
/// [`crate::corpus::Resolution::warnings`] has them.
pub struct Warnings {
    count: u64,
    logs: Vec<File>,
}

impl Warnings {
    fn new(logs: Vec<WarningLog>) -> io::Result<Warnings> {
        let count = logs.iter().map(|l| l.count).sum();
        let mut files = Vec::with_capacity(logs.len());
        for log in logs {
            let mut file = log.file.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.seek(SeekFrom::Start(0))?;
            files.push(file);
        }
        Ok(Warnings { count, logs: files })
    }

    /// How many there are.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The first `limit`, as text (`file:line: message`).
    pub fn first(&mut self, limit: u64) -> io::Result<Vec<String>> {
        let mut lines = Vec::new();
        for file in &mut self.logs {
            file.seek(SeekFrom::Start(0))?;
            let mut input = BufReader::new(&*file);
            while (lines.len() as u64) < limit {
                let Some(length) = read_array::<4>(&mut input)? else { break };
                let mut text = vec![0; u32::from_le_bytes(length) as usize];
                input.read_exact(&mut text)?;
                lines.push(String::from_utf8_lossy(&text).into_owned());
            }
        }
        Ok(lines)
    }
}

/// One input of a bounded corpus, read in both passes.
enum Input {
    RobotsFile(PathBuf, String),
    RobotsDir(PathBuf),
    /// JSON Lines, from its path or from a copy of what a pipe gave.
    Jsonl(PathBuf, Option<File>),
    Warc(PathBuf, Option<File>),
}

/// Sources of fetch records to be resolved in bounded memory: the inputs are
/// named here and read by [`BoundedCorpus::resolve`], twice.
pub struct BoundedCorpus {
    inputs: Vec<Input>,
    memory: usize,
    skip_bad_records: bool,
}

fn temporary_error(e: &io::Error) -> CorpusError {
    CorpusError::io(SourceRef { file: "a temporary file".into(), place: Place::File }, e)
}

fn file_source(path: &Path) -> SourceRef {
    SourceRef { file: path.display().to_string().into(), place: Place::File }
}

/// A copy of `path` in an unnamed temporary file when it cannot be read twice
/// (not a regular file: a pipe, a terminal, standard input).
fn spooled(path: &Path) -> Result<Option<File>, CorpusError> {
    let io_error = |e: io::Error| CorpusError::io(file_source(path), &e);
    if std::fs::metadata(path).map_err(io_error)?.is_file() {
        return Ok(None);
    }
    let mut spool = tempfile::tempfile().map_err(|e| temporary_error(&e))?;
    io::copy(&mut File::open(path).map_err(io_error)?, &mut spool).map_err(io_error)?;
    spool.seek(SeekFrom::Start(0)).map_err(|e| temporary_error(&e))?;
    Ok(Some(spool))
}

impl BoundedCorpus {
    /// No inputs yet; the sorts take at most about `memory` bytes.
    pub fn new(memory: usize) -> BoundedCorpus {
        BoundedCorpus { inputs: Vec::new(), memory, skip_bad_records: false }
    }

    /// Broken records are skipped ([`crate::corpus::Corpus::skip_bad_records`]).
    pub fn skip_bad_records(&mut self) {
        self.skip_bad_records = true;
    }

    /// [`CorpusReader::add_robots_file`], read at [`BoundedCorpus::resolve`].
    pub fn add_robots_file(&mut self, path: &Path, origin_url: &str) {
        self.inputs.push(Input::RobotsFile(path.to_owned(), origin_url.to_owned()));
    }

    /// [`CorpusReader::add_robots_dir`], read at [`BoundedCorpus::resolve`].
    pub fn add_robots_dir(&mut self, dir: &Path) {
        self.inputs.push(Input::RobotsDir(dir.to_owned()));
    }

    /// [`CorpusReader::add_jsonl`]: a pipe is copied to a temporary file now.
    pub fn add_jsonl(&mut self, path: &Path) -> Result<(), CorpusError> {
        let spool = spooled(path)?;
        self.inputs.push(Input::Jsonl(path.to_owned(), spool));
        Ok(())
    }

    /// JSON Lines held in memory (the Python API's records), named `name`
    /// in messages (`name:LINE: ...`): copied to an unnamed temporary file
    /// now, so that both passes read it and the caller can drop its copy.
    pub fn add_jsonl_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<(), CorpusError> {
        let tmp = |e: io::Error| temporary_error(&e);
        let mut spool = tempfile::tempfile().map_err(tmp)?;
        spool.write_all(bytes).map_err(tmp)?;
        spool.seek(SeekFrom::Start(0)).map_err(tmp)?;
        self.inputs.push(Input::Jsonl(PathBuf::from(name), Some(spool)));
        Ok(())
    }

    /// [`CorpusReader::add_warc`]: a pipe is copied to a temporary file now.
    pub fn add_warc(&mut self, path: &Path) -> Result<(), CorpusError> {
        let spool = spooled(path)?;
        self.inputs.push(Input::Warc(path.to_owned(), spool));
        Ok(())
    }

    /// Reads every input into `sink`, in order.
    fn read_into<S: RecordSink>(&mut self, sink: &mut S) -> Result<(), CorpusError> {
        for input in &mut self.inputs {
            let mut reader = CorpusReader::new(sink);
            let reopen = |path: &Path, spool: &mut Option<File>| -> Result<File, CorpusError> {
                match spool {
                    Some(spool) => {
                        let mut copy = spool.try_clone().map_err(|e| temporary_error(&e))?;
                        copy.seek(SeekFrom::Start(0)).map_err(|e| temporary_error(&e))?;
                        Ok(copy)
                    }
                    None => File::open(path).map_err(|e| CorpusError::io(file_source(path), &e)),
                }
            };
            match input {
                Input::RobotsFile(path, origin) => drop(reader.add_robots_file(path, origin)?),
                Input::RobotsDir(dir) => drop(reader.add_robots_dir(dir)?),
                Input::Jsonl(path, spool) => {
                    let file = reopen(path, spool)?;
                    reader.add_jsonl_file(path.display().to_string().into(), file)?;
                }
                Input::Warc(path, spool) => {
                    let file = reopen(path, spool)?;
                    reader
                        .add_warc_from(path.display().to_string().into(), BufReader::with_capacity(256 * 1024, file))?;
                }
            }
        }
        Ok(())
    }

    /// Reads the inputs twice and resolves every origin (see the module
    /// documentation). Errors: a source that cannot be read (as
    /// [`crate::corpus::Corpus`] reports it), a temporary file that cannot
    /// be written or read, an input that changed between the passes.
    pub fn resolve(mut self) -> Result<BoundedResolution, CorpusError> {
        let tmp = |e: io::Error| temporary_error(&e);
        let mut first = FirstPass::new(self.memory, self.skip_bad_records).map_err(tmp)?;
        self.read_into(&mut first)?;
        let FirstPass { records, roots, urls, off_root, skipped, skipped_count, reading, unparsable, .. } = first;
        let spilled_runs = roots.runs() + urls.runs();

        // 2. The newest record of each URL, sorted by URL hash.
        let mut newest = BufWriter::new(tempfile::tempfile().map_err(tmp)?);
        let mut last: Option<UrlFact> = None;
        for fact in urls.finish().map_err(tmp)? {
            let fact = fact.map_err(tmp)?;
            if let Some(previous) = last.filter(|l| l.url != fact.url) {
                previous.write_to(&mut newest).map_err(tmp)?;
            }
            last = Some(fact);
        }
        if let Some(previous) = last {
            previous.write_to(&mut newest).map_err(tmp)?;
        }
        let newest = newest.into_inner().map_err(|e| tmp(e.into_error()))?;

        // 3 and 4a. Root records in origin order, each with its place; chains started.
        let share = self.memory / 3;
        let outcomes = tempfile::tempfile().map_err(tmp)?;
        let mut roots_file = BufWriter::new(tempfile::tempfile().map_err(tmp)?);
        let mut chains = SortedRuns::new(share);
        let mut open_chains = 0u64;
        let mut place = 0u64;
        let mut previous_key: Option<Box<[u8]>> = None;
        for fact in roots.finish().map_err(tmp)? {
            let fact = fact.map_err(tmp)?;
            let new_origin = previous_key.as_deref() != Some(&*fact.key);
            roots_file.write_all(&[u8::from(new_origin)]).map_err(tmp)?;
            if new_origin {
                roots_file.write_all(&(fact.key.len() as u32).to_le_bytes()).map_err(tmp)?;
                roots_file.write_all(&fact.key).map_err(tmp)?;
            }
            roots_file.write_all(&fact.status.to_le_bytes()).map_err(tmp)?;
            write_copy_words(fact.time, fact.max_age, fact.failures, &mut roots_file).map_err(tmp)?;
            let class = StatusClass::of(fact.status);
            match fact.redirect {
                NOT_REDIRECT => write_outcome(&outcomes, place, Outcome { class, last: fact.seq }).map_err(tmp)?,
                TO_TARGET => {
                    let mut visited = [0; MAX_REDIRECTS + 1];
                    visited[0] = fact.seq;
                    chains.push(Chain { target: fact.target, place, hops: 0, visited }).map_err(tmp)?;
                    open_chains += 1;
                }
                _ => write_outcome(&outcomes, place, FAILED).map_err(tmp)?,
            }
            previous_key = Some(fact.key);
            place += 1;
        }
        drop(previous_key);
        let roots_file = roots_file.into_inner().map_err(|e| tmp(e.into_error()))?;
        let mut reached = SortedRuns::<Pair>::new(share);
        while open_chains > 0 {
            let mut next = SortedRuns::new(share);
            open_chains = 0;
            let mut table = BufReader::new(&newest);
            (&newest).seek(SeekFrom::Start(0)).map_err(tmp)?;
            let mut entry = UrlFact::read_from(&mut table).map_err(tmp)?;
            for chain in chains.finish().map_err(tmp)? {
                let mut chain = chain.map_err(tmp)?;
                while entry.is_some_and(|e| e.url < chain.target) {
                    entry = UrlFact::read_from(&mut table).map_err(tmp)?;
                }
                let Some(target) = entry.filter(|e| e.url == chain.target) else {
                    write_outcome(&outcomes, chain.place, FAILED).map_err(tmp)?;
                    continue;
                };
                if chain.visited[..=chain.hops as usize].contains(&target.seq) {
                    write_outcome(&outcomes, chain.place, FAILED).map_err(tmp)?;
                    continue;
                }
                reached.push(Pair(target.seq, 0)).map_err(tmp)?;
                chain.hops += 1;
                chain.visited[chain.hops as usize] = target.seq;
                let class = class_of(target.class);
                if class != StatusClass::Redirect {
                    write_outcome(&outcomes, chain.place, Outcome { class, last: target.seq }).map_err(tmp)?;
                } else if chain.hops as usize == MAX_REDIRECTS || target.redirect != TO_TARGET {
                    write_outcome(&outcomes, chain.place, FAILED).map_err(tmp)?;
                } else {
                    chain.target = target.target;
                    next.push(chain).map_err(tmp)?;
                    open_chains += 1;
                }
            }
            chains = next;
        }
        drop(newest);

        // 4b. Newest-wins per origin: its key and verdict, and the bodies needed.
        let mut origins_file = BufWriter::new(tempfile::tempfile().map_err(tmp)?);
        let mut needed = SortedRuns::<Pair>::new(share);
        let mut origins = 0u64;
        {
            let mut roots_in = BufReader::new(&roots_file);
            (&roots_file).seek(SeekFrom::Start(0)).map_err(tmp)?;
            let mut outcomes_in = BufReader::new(&outcomes);
            let mut key: Vec<u8> = Vec::new();
            // Per fetch: its status, its outcome, and its facts for the cache policy.
            type Fetch = (u16, Outcome, CopyFacts);
            let mut history: FetchHistory<Fetch> = FetchHistory::default();
            let mut decide = |key: &[u8], history: FetchHistory<Fetch>| -> io::Result<()> {
                let Some(choice) = history.choose() else { return Ok(()) };
                let plain = |(status, outcome, copy): Fetch| match outcome.class {
                    StatusClass::Success => (0u8, status, copy, Some(outcome.last)),
                    StatusClass::ClientError => (1, status, copy, None),
                    _ => (2, status, copy, None),
                };
                let (kind, status, copy, body) = match choice {
                    Choice::Newest(fetch) | Choice::Fallback { reachable: fetch, .. } => plain(fetch),
                    Choice::StaysBlocked { newest: (status, _, copy), .. } | Choice::Blocked((status, _, copy)) => {
                        (2, status, copy, None)
                    }
                    Choice::Expired { newest: (status, _, copy), .. } => (1, status, copy, None),
                };
                origins_file.write_all(&(key.len() as u32).to_le_bytes())?;
                origins_file.write_all(key)?;
                origins_file.write_all(&[kind])?;
                origins_file.write_all(&status.to_le_bytes())?;
                write_copy(&copy, &mut origins_file)?;
                if let Some(seq) = body {
                    needed.push(Pair(seq, origins))?;
                }
                origins += 1;
                Ok(())
            };
            for _ in 0..place {
                let [new_origin] = read_array::<1>(&mut roots_in).map_err(tmp)?.ok_or_else(|| tmp(cut_short()))?;
                if new_origin == 1 {
                    decide(&key, std::mem::take(&mut history)).map_err(tmp)?;
                    let length = read_array::<4>(&mut roots_in).map_err(tmp)?.ok_or_else(|| tmp(cut_short()))?;
                    key.resize(u32::from_le_bytes(length) as usize, 0);
                    roots_in.read_exact(&mut key).map_err(tmp)?;
                }
                let status = read_array::<2>(&mut roots_in).map_err(tmp)?.ok_or_else(|| tmp(cut_short()))?;
                let status = u16::from_le_bytes(status);
                let copy =
                    copy_of(&read_array::<COPY_LEN>(&mut roots_in).map_err(tmp)?.ok_or_else(|| tmp(cut_short()))?);
                let time = copy.fetched_at;
                let o = read_array::<16>(&mut outcomes_in).map_err(tmp)?.ok_or_else(|| tmp(cut_short()))?;
                let outcome =
                    Outcome { class: class_of(o[0]), last: u64::from_le_bytes(o[8..].try_into().expect("8")) };
                history.push((status, outcome, copy), outcome.class, time);
            }
            decide(&key, history).map_err(tmp)?;
        }
        drop((roots_file, outcomes));
        let origins_file = origins_file.into_inner().map_err(|e| tmp(e.into_error()))?;

        // Records neither at a robots.txt root nor reached by a redirect.
        let mut off_root_warnings = WarningLog::new().map_err(tmp)?;
        {
            let mut off_root = off_root.into_inner().map_err(|e| tmp(e.into_error()))?;
            off_root.seek(SeekFrom::Start(0)).map_err(tmp)?;
            let mut input = BufReader::new(off_root);
            let mut reached = reached.finish().map_err(tmp)?;
            let mut next_reached = reached.next().transpose().map_err(tmp)?.map(|p| p.0);
            while let Some(b) = read_array::<12>(&mut input).map_err(tmp)? {
                let seq = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
                let mut text = vec![0; u32::from_le_bytes(b[8..].try_into().expect("4 bytes")) as usize];
                input.read_exact(&mut text).map_err(tmp)?;
                while next_reached.is_some_and(|r| r < seq) {
                    next_reached = reached.next().transpose().map_err(tmp)?.map(|p| p.0);
                }
                if next_reached == Some(seq) {
                    continue;
                }
                off_root_warnings.count += 1;
                off_root_warnings.file.write_all(&(text.len() as u32).to_le_bytes()).map_err(tmp)?;
                off_root_warnings.file.write_all(&text).map_err(tmp)?;
            }
        }
        let warnings = Warnings::new(vec![reading, unparsable, off_root_warnings]).map_err(tmp)?;

        // 5. The second pass: the bodies needed, and each origin's place of its body.
        let placement = tempfile::tempfile().map_err(tmp)?;
        placement.set_len(origins * 16).map_err(tmp)?;
        let mut needed = needed.finish().map_err(tmp)?;
        let mut second = SecondPass {
            seq: 0,
            next: needed.next().transpose().map_err(tmp)?,
            needed,
            bodies: BufWriter::with_capacity(256 * 1024, tempfile::tempfile().map_err(tmp)?),
            written: 0,
            placement: &placement,
            skip_bad_records: self.skip_bad_records,
        };
        self.read_into(&mut second)?;
        if second.seq != records || second.next.is_some() {
            return Err(CorpusError::io(
                SourceRef { file: "the inputs".into(), place: Place::File },
                &io::Error::other(format!(
                    "changed while being read: {records} records the first time, {} the second",
                    second.seq
                )),
            ));
        }
        let bodies = second.bodies.into_inner().map_err(|e| tmp(e.into_error()))?;
        let mut origins_in = BufReader::new(origins_file);
        origins_in.seek(SeekFrom::Start(0)).map_err(tmp)?;
        let mut placement_in = BufReader::new(placement);
        placement_in.seek(SeekFrom::Start(0)).map_err(tmp)?;
        Ok(BoundedResolution {
            records,
            origins,
            spilled_runs,
            warnings,
            skipped,
            skipped_count,
            stream: ResolvedOrigins {
                origins: origins_in,
                placement: placement_in,
                bodies,
                left: origins,
                error: None,
            },
        })
    }
}

/// The first pass's sink: a few words per record into the sorts.
struct FirstPass {
    records: u64,
    buf: KeyBuf,
    roots: SortedRuns<RootFact>,
    urls: SortedRuns<UrlFact>,
    /// Records not at a robots.txt root: their number and their warning.
    off_root: BufWriter<File>,
    reading: WarningLog,
    unparsable: WarningLog,
    skipped: Vec<CorpusError>,
    skipped_count: u64,
    skip_bad_records: bool,
}

impl FirstPass {
    fn new(memory: usize, skip_bad_records: bool) -> io::Result<FirstPass> {
        Ok(FirstPass {
            records: 0,
            buf: KeyBuf::new(),
            roots: SortedRuns::new(memory / 2),
            urls: SortedRuns::new(memory / 2),
            off_root: BufWriter::new(tempfile::tempfile()?),
            reading: WarningLog::new()?,
            unparsable: WarningLog::new()?,
            skipped: Vec::new(),
            skipped_count: 0,
            skip_bad_records,
        })
    }

    fn keep(&mut self, record: FetchRecord) -> io::Result<()> {
        let seq = self.records;
        self.records += 1;
        let (url_key, root_key) = match self.buf.parse(record.url.as_bytes()) {
            Ok(origin) => {
                let root = origin.is_robots_txt().then(|| Box::<[u8]>::from(origin.key));
                ([origin.key, origin.path].concat(), root)
            }
            Err(e) => {
                let message = format!("skipped: {}: {e}", record.url);
                return self.unparsable.push(&Warning { source: record.source, message });
            }
        };
        let class = StatusClass::of(record.status);
        let (redirect, target) = match (class, record.location.as_deref()) {
            (StatusClass::Redirect, None) => (NO_LOCATION, 0),
            (StatusClass::Redirect, Some(location)) => match resolve_location(&record.url, location) {
                Some(target) => (TO_TARGET, url_hash(&target)),
                None => (INVALID_LOCATION, 0),
            },
            _ => (NOT_REDIRECT, 0),
        };
        let time = time_key(record.fetched_at);
        debug_assert_eq!(record_key(record.url.as_bytes()).as_deref(), Some(&url_key[..]));
        self.urls.push(UrlFact { url: url_hash(&url_key), time, seq, class: class_code(class), redirect, target })?;
        match root_key {
            Some(key) => {
                let details = record.details();
                let (max_age, failures) = copy_words(details.max_age, details.failures_in_a_row);
                let status = record.status;
                self.roots.push(RootFact { key, time, seq, status, redirect, target, max_age, failures })
            }
            None => {
                let message = format!("skipped: {} is not /robots.txt at the root of its origin", record.url);
                let text = Warning { source: record.source, message }.to_string();
                self.off_root.write_all(&seq.to_le_bytes())?;
                self.off_root.write_all(&(text.len() as u32).to_le_bytes())?;
                self.off_root.write_all(text.as_bytes())
            }
        }
    }
}

impl RecordSink for FirstPass {
    fn record(&mut self, record: FetchRecord) -> Result<(), CorpusError> {
        self.keep(record).map_err(|e| temporary_error(&e))
    }

    fn warning(&mut self, warning: Warning) {
        // A warning that cannot be written is lost; the next record's write fails the run.
        let _ = self.reading.push(&warning);
    }

    fn skips_bad_records(&self) -> bool {
        self.skip_bad_records
    }

    fn bad_record(&mut self, error: CorpusError) -> Result<(), CorpusError> {
        if !self.skip_bad_records {
            return Err(error);
        }
        self.skipped_count += 1;
        if self.skipped.len() < SKIPPED_KEPT {
            self.skipped.push(error);
        }
        Ok(())
    }
}

/// The second pass's sink: copies the bodies needed.
struct SecondPass<'a> {
    seq: u64,
    needed: Merged<Pair>,
    /// The next body needed: its record's number, and the origin's.
    next: Option<Pair>,
    bodies: BufWriter<File>,
    written: u64,
    placement: &'a File,
    skip_bad_records: bool,
}

impl SecondPass<'_> {
    fn keep(&mut self, record: FetchRecord) -> io::Result<()> {
        let seq = self.seq;
        self.seq += 1;
        let mut at = None;
        while let Some(Pair(wanted, origin)) = self.next {
            if wanted != seq {
                break;
            }
            self.next = self.needed.next().transpose()?;
            let (offset, length) = *at.get_or_insert((self.written, record.body.len() as u64));
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&offset.to_le_bytes());
            b[8..].copy_from_slice(&length.to_le_bytes());
            self.placement.write_all_at(&b, origin * 16)?;
        }
        if at.is_some() {
            self.bodies.write_all(&record.body)?;
            self.written += record.body.len() as u64;
        }
        Ok(())
    }
}

impl RecordSink for SecondPass<'_> {
    fn record(&mut self, record: FetchRecord) -> Result<(), CorpusError> {
        self.keep(record).map_err(|e| temporary_error(&e))
    }

    fn warning(&mut self, _: Warning) {}

    fn skips_bad_records(&self) -> bool {
        self.skip_bad_records
    }

    fn bad_record(&mut self, error: CorpusError) -> Result<(), CorpusError> {
        if self.skip_bad_records {
            Ok(())
        } else {
            Err(error)
        }
    }
}

/// A corpus resolved in bounded memory: figures, warnings, skipped records,
/// and the origins to stream.
pub struct BoundedResolution {
    /// Records read (those with a URL that does not parse included).
    pub records: u64,
    /// Origins resolved.
    pub origins: u64,
    /// Sorted runs the first pass spilled to temporary files.
    pub spilled_runs: usize,
    /// The warnings of reading and resolving.
    pub warnings: Warnings,
    /// The first [`SKIPPED_KEPT`] broken records skipped.
    pub skipped: Vec<CorpusError>,
    /// How many broken records were skipped.
    pub skipped_count: u64,
    /// The origins, in key order.
    pub stream: ResolvedOrigins,
}

/// The origins of a [`BoundedResolution`] in key order, each body read from
/// a temporary file when its origin is reached. A read that fails ends the
/// stream; [`ResolvedOrigins::error`] then says why.
pub struct ResolvedOrigins {
    origins: BufReader<File>,
    placement: BufReader<File>,
    bodies: File,
    left: u64,
    error: Option<io::Error>,
}

impl ResolvedOrigins {
    /// Why the stream ended early, if it did.
    pub fn error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    fn read_next(&mut self) -> io::Result<OriginRobots> {
        let length = read_array::<4>(&mut self.origins)?.ok_or_else(cut_short)?;
        let mut key = vec![0; u32::from_le_bytes(length) as usize];
        self.origins.read_exact(&mut key)?;
        let [kind, s0, s1] = read_array::<3>(&mut self.origins)?.ok_or_else(cut_short)?;
        let copy = copy_of(&read_array::<COPY_LEN>(&mut self.origins)?.ok_or_else(cut_short)?);
        let place = read_array::<16>(&mut self.placement)?.ok_or_else(cut_short)?;
        let origin = OriginKey::of_url(&key).map_err(|e| io::Error::other(format!("an origin key: {e}")))?;
        let robots = match kind {
            0 => {
                let offset = u64::from_le_bytes(place[..8].try_into().expect("8 bytes"));
                let mut body = vec![0; u64::from_le_bytes(place[8..].try_into().expect("8 bytes")) as usize];
                self.bodies.read_exact_at(&mut body, offset)?;
                Robots::Body(body.into())
            }
            1 => Robots::Unrestricted,
            _ => Robots::Blocked,
        };
        Ok(OriginRobots { origin, robots, status: u16::from_le_bytes([s0, s1]), copy })
    }
}

impl Iterator for ResolvedOrigins {
    type Item = OriginRobots;

    fn next(&mut self) -> Option<OriginRobots> {
        if self.left == 0 || self.error.is_some() {
            return None;
        }
        self.left -= 1;
        match self.read_next() {
            Ok(origin) => Some(origin),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_keys_keep_the_order_of_optional_times() {
        let times = [
            None,
            Some(Timestamp::from_unix_nanos(i64::MIN, 0)),
            Some(Timestamp::from_unix_nanos(-1, 999_999_999)),
            Some(Timestamp::from_unix(0)),
            Some(Timestamp::from_unix_nanos(0, 1)),
            Some(Timestamp::from_unix(1_700_000_000)),
            Some(Timestamp::from_unix_nanos(i64::MAX, 999_999_999)),
        ];
        for pair in times.windows(2) {
            assert!(time_key(pair[0]) < time_key(pair[1]), "{pair:?}");
        }
        for t in times {
            assert_eq!(time_of(time_key(t)), t);
        }
    }
}
