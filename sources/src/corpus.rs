//! Robots.txt fetch results in, one governing robots.txt per origin out.
//!
//! Sources: a single file for one origin, a directory of `<host>.txt` files,
//! JSON Lines fetch records and WARC captures (through [`crate::warc`]). Every
//! source becomes [`FetchRecord`]s in a [`Corpus`]; [`Corpus::resolve`] applies
//! Google's fetch-status rules and says, for each origin, what governs it
//! ([`Robots`]) and why ([`Provenance`]).
//!
//! The rules, as docs/semantics.md ("Fetch results") gives them and the
//! conformance cases (`shared/conformance/status.jsonl`) check them:
//!
//! - 2xx: the body is the robots.txt ([`Robots::Body`]).
//! - 3xx: `location` is followed through the corpus (to any URL, on any host)
//!   for up to [`MAX_REDIRECTS`] hops; the chain's last answer decides. A
//!   chain that needs more hops, loops, has no `location`, or leads to a URL
//!   the corpus has no record of counts as 404. Where the corpus has several
//!   records of a redirect target, the newest is followed. `Location` may be
//!   absolute, `//host/...`, `/path` or relative to the redirecting URL.
//!   304 (a conditional fetch's "not modified") has no `Location` and so
//!   counts as 404 too: a corpus should record the full answer.
//! - 4xx other than 429: no robots.txt, no restrictions ([`Robots::Unrestricted`]).
//! - 5xx, 429, status 0 (no HTTP answer: DNS, timeout, refused, reset) and
//!   any status outside 200 to 599 (1xx, garbage): the site is unreachable,
//!   everything is disallowed ([`Robots::Blocked`]).
//!
//! Several records of one origin: the newest wins (by `fetched_at`; records
//! without a time are older than any dated record; ties go to the record
//! read last). If the newest says "unreachable", the 30-day rule applies,
//! measured from the last *reachable* fetch (2xx or 4xx, after redirects) to
//! the newest failed fetch: at most 30 days (or either time unknown) keeps
//! the site blocked; more than 30 days falls back to that last reachable
//! fetch (its body, or no restrictions for a 4xx). With no reachable fetch at
//! all, failures spanning more than 30 days (oldest to newest) mean no
//! restrictions, as docs/semantics.md says for "no last good copy"; otherwise blocked.
//!
//! Problems that leave the rest usable are [`Warning`]s returned to the
//! caller (file and line or record); a source that cannot be read as what it
//! claims to be is a [`CorpusError`]: a broken JSON Lines record (file and
//! line), a broken WARC record (file, record and offset), an unreadable file.
//! [`Corpus::skip_bad_records`] turns broken records into
//! [`Corpus::skipped`] entries instead, and reading goes on.

use crate::status::{Choice, FetchHistory};
pub use crate::status::{Reason, StatusClass, MAX_REDIRECTS, OUTAGE_GRACE_SECONDS};
use crate::time::{TimeError, Timestamp};
use crate::warc;
use base64::Engine as _;
use robotsieve_core::url::{KeyBuf, OriginKey, UrlError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

/// What governs an origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Robots {
    /// The robots.txt body to parse (shared between origins that serve the
    /// same file, e.g. http and https of one host).
    Body(Arc<[u8]>),
    /// No restrictions: as if the robots.txt were empty (4xx, or an outage
    /// longer than 30 days with no good copy).
    Unrestricted,
    /// Everything disallowed (server error, 429, network failure).
    Blocked,
}

/// Where a record came from, for messages and explanations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceRef {
    /// The file, as given.
    pub file: Arc<str>,
    /// The place in it.
    pub place: Place,
}

/// A place in a source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// The whole file (a robots.txt file).
    File,
    /// A 1-based line (JSON Lines).
    Line(u64),
    /// A 1-based record number (WARC).
    Record(u64),
}

impl fmt::Display for SourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.place {
            Place::File => write!(f, "{}", self.file),
            Place::Line(n) => write!(f, "{}:{n}", self.file),
            Place::Record(n) => write!(f, "{}: record {n}", self.file),
        }
    }
}

/// One fetch of a URL, whatever the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchRecord {
    /// The URL fetched (normally an origin's `/robots.txt`).
    pub url: String,
    /// HTTP status; 0 for no HTTP answer.
    pub status: u16,
    /// The body (empty when there was none).
    pub body: Arc<[u8]>,
    /// When it was fetched, if known.
    pub fetched_at: Option<Timestamp>,
    /// The `Location` of a redirect.
    pub location: Option<String>,
    /// What failed, for status 0 (dns, timeout, connect, reset, ...).
    pub error: Option<String>,
    /// What a fetcher records beyond what compile reads (the cache's inputs
    /// and the fetch's own figures); `None` when the record has none of it,
    /// so that corpora without these fields cost no more memory than before.
    pub details: Option<Box<FetchDetails>>,
    /// Where the record was read.
    pub source: SourceRef,
}

/// The optional fields of a fetch record that compile does not read: what
/// the cache policy ([`crate::freshness`]) and compaction
/// ([`crate::compaction`]) need, and what the fetch itself measured. Each is
/// `None` when the record does not have it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchDetails {
    /// How long (seconds) the server said the copy may be kept:
    /// `Cache-Control` `s-maxage`, else `max-age`, else `Expires` minus
    /// `Date`; 0 for `no-store` or `no-cache`.
    pub max_age: Option<u64>,
    /// The server's `Retry-After` (seconds) on a 429 or 503.
    pub retry_after: Option<u64>,
    /// How many fetches of this URL in a row, this one included, failed
    /// (5xx, 429, status 0): written by compaction on the newest record so
    /// that the backoff survives the records it drops.
    pub failures_in_a_row: Option<u32>,
    /// How many attempts the fetcher made (the record is the last one's).
    pub attempts: Option<u32>,
    /// How long the fetch took, in milliseconds.
    pub elapsed_ms: Option<u64>,
    /// Whether the body was cut at the size limit.
    pub truncated: Option<bool>,
    /// The FTP server's reply, for an `ftp://` fetch.
    pub ftp_reply: Option<String>,
}

/// A record's details when it has none ([`FetchRecord::details`]).
const NO_DETAILS: FetchDetails = FetchDetails {
    max_age: None,
    retry_after: None,
    failures_in_a_row: None,
    attempts: None,
    elapsed_ms: None,
    truncated: None,
    ftp_reply: None,
};

impl FetchDetails {
    /// `Some(self)` boxed, or `None` when every field is `None`.
    fn boxed(self) -> Option<Box<FetchDetails>> {
        (self != NO_DETAILS).then(|| Box::new(self))
    }
}

impl FetchRecord {
    /// A fetch of `url` answered with `status` and `body`, read at `source`,
    /// with nothing else known (no time, no `Location`, no details): what a
    /// robots.txt file given on its own stands for.
    pub fn new(url: String, status: u16, body: Arc<[u8]>, source: SourceRef) -> FetchRecord {
        FetchRecord { url, status, body, fetched_at: None, location: None, error: None, details: None, source }
    }

    /// The record's [`FetchDetails`] (all `None` when it has none).
    pub fn details(&self) -> &FetchDetails {
        self.details.as_deref().unwrap_or(&NO_DETAILS)
    }

    /// Changes the record's details through `change`, keeping
    /// [`FetchRecord::details`] `None` when nothing is left in them.
    pub fn set_details(&mut self, change: impl FnOnce(&mut FetchDetails)) {
        let mut details = self.details.take().map_or_else(FetchDetails::default, |d| *d);
        change(&mut details);
        self.details = details.boxed();
    }

    /// Writes the record as one line of the JSON Lines corpus format that
    /// [`CorpusReader::add_jsonl_from`] reads, newline included: the body as
    /// `body` when it is UTF-8, else as `body_b64` (none when empty),
    /// `fetched_at` in RFC 3339 UTC, and the other fields where present. A
    /// record read back from the line equals this one but for its
    /// [`FetchRecord::source`].
    pub fn write_jsonl(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let details = self.details();
        let text = std::str::from_utf8(&self.body).ok();
        let line = JsonRecordOut {
            url: &self.url,
            status: self.status,
            body: text.filter(|t| !t.is_empty()),
            body_b64: match text {
                None => Some(base64::engine::general_purpose::STANDARD.encode(&self.body)),
                Some(_) => None,
            },
            fetched_at: self.fetched_at.map(|t| t.to_string()),
            location: self.location.as_deref(),
            error: self.error.as_deref(),
            max_age: details.max_age,
            retry_after: details.retry_after,
            failures_in_a_row: details.failures_in_a_row,
            attempts: details.attempts,
            elapsed_ms: details.elapsed_ms,
            truncated: details.truncated,
            ftp_reply: details.ftp_reply.as_deref(),
        };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")
    }
}

/// A record as [`FetchRecord::write_jsonl`] writes it.
#[derive(serde::Serialize)]
struct JsonRecordOut<'r> {
    url: &'r str,
    status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body_b64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fetched_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_age: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failures_in_a_row: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ftp_reply: Option<&'r str>,
}

/// Why an origin is governed as it is: the record that decided and the story.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The record whose result is used (the start of a redirect chain).
    pub source: SourceRef,
    /// Its URL.
    pub url: String,
    /// Its status.
    pub status: u16,
    /// When it was fetched, its `max_age` and its `failures_in_a_row`
    /// ([`CopyFacts::of`]).
    pub copy: CopyFacts,
    /// Redirects followed from it.
    pub redirects: usize,
    /// The rule that applied.
    pub reason: Reason,
    /// One line for people: e.g. `503 from corpus.jsonl:7 (https://a.org/robots.txt,
    /// fetched 2026-11-01T00:00:00Z): server error, everything disallowed`.
    pub explanation: String,
}

/// What governs one origin, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Governing {
    /// The origin.
    pub origin: OriginKey,
    /// Its robots.txt, or the blanket verdict.
    pub robots: Robots,
    /// Why.
    pub provenance: Provenance,
}

/// What the cache policy reads of a fetched copy beside its status and
/// `Retry-After`: when it was fetched, the server's `max_age`, and the
/// failures in a row. What an artifact keeps of each origin's governing
/// copy (`robotsieve inspect --now` judges it by
/// [`crate::freshness::CachePolicy::freshness_of`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CopyFacts {
    /// When it was fetched, if known.
    pub fetched_at: Option<Timestamp>,
    /// [`crate::corpus::FetchDetails::max_age`].
    pub max_age: Option<u64>,
    /// How many fetches in a row, this one included, failed, where known
    /// (the newest record's count of
    /// [`crate::freshness::failures_in_a_row`]; one when unknown).
    pub failures_in_a_row: Option<u32>,
}

impl CopyFacts {
    /// A record's own facts: its time, its `max_age` and the
    /// `failures_in_a_row` it carries (not counted over other records).
    pub fn of(record: &FetchRecord) -> CopyFacts {
        let details = record.details();
        CopyFacts {
            fetched_at: record.fetched_at,
            max_age: details.max_age,
            failures_in_a_row: details.failures_in_a_row,
        }
    }
}

/// What an artifact keeps of an origin: its key, its robots.txt or blanket
/// verdict, and the status of the fetch that decided (the start of its
/// redirect chain). What the build takes, from either resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginRobots {
    /// The origin.
    pub origin: OriginKey,
    /// Its robots.txt, or the blanket verdict.
    pub robots: Robots,
    /// [`Provenance::status`].
    pub status: u16,
    /// [`Provenance::copy`]: what the cache policy reads of that fetch.
    pub copy: CopyFacts,
}

impl From<Governing> for OriginRobots {
    fn from(governing: Governing) -> OriginRobots {
        let provenance = governing.provenance;
        OriginRobots {
            origin: governing.origin,
            robots: governing.robots,
            status: provenance.status,
            copy: provenance.copy,
        }
    }
}

/// A problem that did not stop the corpus from being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where.
    pub source: SourceRef,
    /// What, and what was done about it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

/// A source that cannot be read: a malformed line, a broken WARC file, an
/// unreadable file, an invalid `--origin`. The CLI exits 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusError {
    /// Where: the file, and the line or WARC record.
    pub source: SourceRef,
    /// What is wrong.
    pub problem: CorpusProblem,
}

impl CorpusError {
    pub(crate) fn io(source: SourceRef, error: &std::io::Error) -> CorpusError {
        CorpusError { source, problem: CorpusProblem::Io { kind: error.kind(), message: error.to_string() } }
    }
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.problem)
    }
}

impl std::error::Error for CorpusError {}

/// What is wrong with a source ([`CorpusError::problem`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorpusProblem {
    /// A file or directory that cannot be opened or listed.
    Io {
        /// The kind of failure.
        kind: std::io::ErrorKind,
        /// What the system said.
        message: String,
    },
    /// A read that failed part way through a file.
    Read {
        /// The kind of failure.
        kind: std::io::ErrorKind,
        /// What the system said.
        message: String,
    },
    /// `--origin` names no origin.
    Origin {
        /// The URL given.
        url: String,
        /// Why it is refused.
        error: UrlError,
    },
    /// A JSON Lines line that is no fetch record.
    Record(RecordError),
    /// A WARC file that cannot be read as WARC, or a broken record of one.
    Warc {
        /// Byte offset (decompressed) where the record starts, when a record is broken.
        offset: Option<u64>,
        /// What is wrong.
        why: String,
    },
}

impl fmt::Display for CorpusProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorpusProblem::Io { message, .. } => f.write_str(message),
            CorpusProblem::Read { message, .. } => write!(f, "cannot read: {message}"),
            CorpusProblem::Origin { url, error } => write!(f, "--origin {url}: {error}"),
            CorpusProblem::Record(why) => why.fmt(f),
            CorpusProblem::Warc { offset: Some(offset), why } => write!(f, "at offset {offset}: {why}"),
            CorpusProblem::Warc { offset: None, why } => f.write_str(why),
        }
    }
}

/// Why a JSON Lines line is no fetch record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// Longer than [`MAX_RECORD_LINE`].
    TooLong {
        /// Its length in bytes.
        length: usize,
    },
    /// Not JSON, cut short, or JSON that is no fetch record.
    Json {
        /// `not JSON`, `the record is cut short` or `not a fetch record`.
        what: &'static str,
        /// What the JSON reader said.
        detail: String,
        /// The column (1-based) where it stopped.
        column: usize,
    },
    /// A status above 999.
    Status(u16),
    /// Both `body` and `body_b64`.
    BothBodies,
    /// `body_b64` is not base64.
    Base64(String),
    /// `fetched_at` is not an RFC 3339 time.
    FetchedAt(TimeError),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::TooLong { length } => {
                write!(f, "a line of {length} bytes, longer than the {MAX_RECORD_LINE} a record may have")
            }
            RecordError::Json { what, detail, column } => write!(f, "{what} ({detail}, at column {column})"),
            RecordError::Status(status) => write!(f, "status {status} is not an HTTP status"),
            RecordError::BothBodies => f.write_str("both body and body_b64"),
            RecordError::Base64(why) => write!(f, "body_b64: {why}"),
            RecordError::FetchedAt(why) => why.fmt(f),
        }
    }
}

/// Everything resolved: one entry per origin, and the warnings of reading
/// and resolving, in input order.
#[derive(Clone, Debug, Default)]
pub struct Resolution {
    /// What governs each origin.
    pub origins: BTreeMap<OriginKey, Governing>,
    /// Records skipped and other problems.
    pub warnings: Vec<Warning>,
}

/// Fetch records gathered from any number of sources.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    records: Vec<FetchRecord>,
    warnings: Vec<Warning>,
    /// Whether broken records are skipped ([`Corpus::skip_bad_records`]).
    skip_bad_records: bool,
    skipped: Vec<CorpusError>,
}

/// The longest JSON Lines record read, in bytes: 16 MiB, thirty times the
/// 500 KiB of a robots.txt Google reads, base64 and JSON escapes included.
/// A longer line is a broken record (and is never held in memory whole).
pub const MAX_RECORD_LINE: usize = 16 << 20;

/// A line of a JSON Lines corpus.
#[derive(Deserialize)]
struct JsonRecord {
    url: String,
    status: u16,
    body: Option<String>,
    body_b64: Option<String>,
    fetched_at: Option<String>,
    location: Option<String>,
    error: Option<String>,
    max_age: Option<u64>,
    retry_after: Option<u64>,
    failures_in_a_row: Option<u32>,
    attempts: Option<u32>,
    elapsed_ms: Option<u64>,
    truncated: Option<bool>,
    ftp_reply: Option<String>,
}

fn file_name(path: &Path) -> Arc<str> {
    path.display().to_string().into()
}

/// Where a [`CorpusReader`] puts what it reads: the records in input order,
/// the warnings, and the broken records it skips. A [`Corpus`] keeps them in
/// memory; the bounded resolution ([`crate::bounded`]) keeps a few words per
/// record and reads the sources twice.
pub trait RecordSink {
    /// The next record read. An error stops the reading (the sink could not
    /// keep it: a temporary file that cannot be written).
    fn record(&mut self, record: FetchRecord) -> Result<(), CorpusError>;
    /// A problem that leaves the rest usable.
    fn warning(&mut self, warning: Warning);
    /// Whether broken records are skipped ([`Corpus::skip_bad_records`]).
    fn skips_bad_records(&self) -> bool;
    /// A broken record: fails with `error`, or keeps it as skipped when
    /// skipping bad records.
    fn bad_record(&mut self, error: CorpusError) -> Result<(), CorpusError>;
}

/// Reads sources (a robots.txt file, a directory, JSON Lines, WARC) into a
/// [`RecordSink`], as streams: memory does not grow with a source's size.
pub struct CorpusReader<'s, S: RecordSink> {
    sink: &'s mut S,
}

impl<'s, S: RecordSink> CorpusReader<'s, S> {
    /// A reader into `sink`.
    pub fn new(sink: &'s mut S) -> Self {
        CorpusReader { sink }
    }

    /// `--robots FILE --origin URL`: the file is the robots.txt (fetched with
    /// status 200, time unknown) of the origin of `origin_url` (any URL of it).
    pub fn add_robots_file(&mut self, path: &Path, origin_url: &str) -> Result<OriginKey, CorpusError> {
        let source = SourceRef { file: file_name(path), place: Place::File };
        let origin = OriginKey::of_url(origin_url).map_err(|error| CorpusError {
            source: source.clone(),
            problem: CorpusProblem::Origin { url: origin_url.to_owned(), error },
        })?;
        let body = std::fs::read(path).map_err(|e| CorpusError::io(source.clone(), &e))?;
        self.sink.record(FetchRecord::new(origin.robots_url(), 200, body.into(), source))?;
        Ok(origin)
    }

    /// `--robots-dir DIR`: each `<host>.txt` is the robots.txt of `http://host`
    /// and `https://host` (status 200, time unknown); `<host>_<port>.txt` (file
    /// names cannot hold a colon everywhere) is that of `http://host:port` and
    /// `https://host:port`, so `example.com_443.txt` is https on the default
    /// port (and http on port 443, which is harmless). Names are read as
    /// [`robots_dir_host`] says: percent-escapes decoded (`%3A` for the
    /// colon of a port too), IPv6 literals in brackets. Other files are
    /// skipped silently; a `.txt` whose name is not a host name is skipped
    /// with a warning. Returns the number of files used.
    pub fn add_robots_dir(&mut self, dir: &Path) -> Result<usize, CorpusError> {
        let dir_error = |e: std::io::Error| CorpusError::io(SourceRef { file: file_name(dir), place: Place::File }, &e);
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map_err(dir_error)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(dir_error)?;
        paths.sort();
        let mut used = 0;
        for path in paths {
            if path.extension().is_none_or(|e| e != "txt") || !path.is_file() {
                continue;
            }
            let source = SourceRef { file: file_name(&path), place: Place::File };
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let Some(host) = robots_dir_host(stem) else {
                self.sink.warning(Warning { source, message: format!("skipped: {stem:?} is not a host name") });
                continue;
            };
            let host = host.as_str();
            let body: Arc<[u8]> = std::fs::read(&path).map_err(|e| CorpusError::io(source.clone(), &e))?.into();
            for scheme in ["http", "https"] {
                let url = format!("{scheme}://{host}/robots.txt");
                self.sink.record(FetchRecord::new(url, 200, body.clone(), source.clone()))?;
            }
            used += 1;
        }
        Ok(used)
    }

    /// `--corpus FILE.jsonl`: one fetch record per line (blank lines
    /// skipped), read as a stream; gzip- or zstd-compressed when the file's
    /// first bytes say so (`.jsonl.gz`, `.jsonl.zst`, whatever the name).
    /// Compressed data cut short or damaged is an error naming the file and
    /// the line it reached. Returns the number of records read.
    pub fn add_jsonl(&mut self, path: &Path) -> Result<usize, CorpusError> {
        let file_error =
            |e: std::io::Error| CorpusError::io(SourceRef { file: file_name(path), place: Place::File }, &e);
        let file = std::fs::File::open(path).map_err(file_error)?;
        self.add_jsonl_file(file_name(path), file)
    }

    /// [`CorpusReader::add_jsonl`] of an open file, named `name` in messages.
    pub fn add_jsonl_file(&mut self, name: Arc<str>, file: std::fs::File) -> Result<usize, CorpusError> {
        let file_error = |e: std::io::Error| CorpusError::io(SourceRef { file: name.clone(), place: Place::File }, &e);
        let (input, compression) =
            warc::decompressed(BufReader::with_capacity(256 * 1024, file)).map_err(file_error)?;
        self.add_jsonl_from(name.clone(), input).map_err(|mut e| {
            if let (CorpusProblem::Read { message, .. }, true) =
                (&mut e.problem, compression != warc::Compression::None)
            {
                message.push_str(&format!(" ({} data cut short or damaged)", compression.name()));
            }
            e
        })
    }

    /// Reads JSON Lines fetch records from `input`, named `name` in messages.
    ///
    /// Fields: `url` and `status` (required); at most one of `body` (text)
    /// and `body_b64`; `fetched_at` (RFC 3339); `location`; `error`; and the
    /// [`FetchDetails`] (`max_age`, `retry_after`, `failures_in_a_row`,
    /// `attempts`, `elapsed_ms`: whole numbers; `truncated`: a boolean;
    /// `ftp_reply`: text), which compile does not use. Unknown fields are
    /// ignored. A line that is not such a record (or is longer
    /// than [`MAX_RECORD_LINE`]) is an error naming the file and line, or
    /// skipped ([`Corpus::skip_bad_records`]). A read error fails the file.
    pub fn add_jsonl_from(&mut self, name: Arc<str>, mut input: impl BufRead) -> Result<usize, CorpusError> {
        let mut line = Vec::new();
        let mut number = 0u64;
        let mut count = 0;
        loop {
            number += 1;
            let source = SourceRef { file: name.clone(), place: Place::Line(number) };
            let read =
                robotsieve_core::line::read_bounded_line(&mut input, &mut line, MAX_RECORD_LINE + 1).map_err(|e| {
                    CorpusError {
                        source: source.clone(),
                        problem: CorpusProblem::Read { kind: e.kind(), message: e.to_string() },
                    }
                })?;
            let Some(length) = read else {
                return Ok(count);
            };
            if line.trim_ascii().is_empty() {
                continue;
            }
            let record = if length > MAX_RECORD_LINE {
                Err(RecordError::TooLong { length })
            } else {
                fetch_record(&line, source.clone())
            };
            match record {
                Ok(record) => {
                    self.sink.record(record)?;
                    count += 1;
                }
                Err(why) => self.sink.bad_record(CorpusError { source, problem: CorpusProblem::Record(why) })?,
            }
        }
    }

    /// `--warc FILE`: the `response` records of a WARC file (gzip or plain).
    /// Returns the number of records used.
    pub fn add_warc(&mut self, path: &Path) -> Result<usize, CorpusError> {
        let file = std::fs::File::open(path)
            .map_err(|e| CorpusError::io(SourceRef { file: file_name(path), place: Place::File }, &e))?;
        self.add_warc_from(file_name(path), BufReader::with_capacity(256 * 1024, file))
    }

    /// Reads WARC from `input`, named `name` in messages.
    ///
    /// Each `response` record with an HTTP block gives a record: the URL from
    /// `WARC-Target-URI`, the time from `WARC-Date`, status, `Location` and the
    /// body with chunked transfer coding and gzip/deflate content coding undone
    /// ([`crate::http::HttpResponse::decoded_body`]). Other record types (request,
    /// metadata, warcinfo, revisit, ...) are skipped silently; a response that
    /// cannot be used is skipped with a warning. A file that cannot be read as
    /// WARC is an error.
    pub fn add_warc_from(&mut self, name: Arc<str>, input: impl BufRead) -> Result<usize, CorpusError> {
        let mut reader = warc::reader(input).map_err(|e| CorpusError {
            source: SourceRef { file: name.clone(), place: Place::File },
            problem: CorpusProblem::Warc { offset: None, why: e.to_string() },
        })?;
        if self.sink.skips_bad_records() {
            reader.resync_after_errors();
        }
        let mut count = 0;
        for record in reader {
            let record = match record {
                Ok(record) => record,
                Err(e) => {
                    self.sink.bad_record(CorpusError {
                        source: SourceRef { file: name.clone(), place: Place::Record(e.record) },
                        problem: CorpusProblem::Warc { offset: Some(e.offset), why: e.message },
                    })?;
                    continue;
                }
            };
            if !record.record_type().is_some_and(|t| t.eq_ignore_ascii_case("response")) {
                continue;
            }
            let source = SourceRef { file: name.clone(), place: Place::Record(record.number) };
            let mut warn = |message: String| self.sink.warning(Warning { source: source.clone(), message });
            let Some(url) = record.target_uri().map(str::to_owned) else {
                warn("skipped: response without WARC-Target-URI".into());
                continue;
            };
            if !record.is_http() {
                warn(format!("skipped: {url}: the response is not an HTTP message"));
                continue;
            }
            let response = match record.http_response() {
                Ok(r) => r,
                Err(e) => {
                    warn(format!("skipped: {url}: {e}"));
                    continue;
                }
            };
            if (record.block.len() as u64) < record.length {
                warn(format!("{url}: a record of {} bytes: only its first {} read", record.length, record.block.len()));
            }
            let body = match response.decoded_body() {
                Ok(b) => b.into_owned(),
                Err(e) => {
                    warn(format!("skipped: {url}: {e}"));
                    continue;
                }
            };
            let fetched_at = match record.date() {
                Some(Ok(t)) => Some(t),
                Some(Err(e)) => {
                    warn(format!("{url}: WARC-Date: {e}; fetch time unknown"));
                    None
                }
                None => None,
            };
            let location = response.header("Location").map(|l| String::from_utf8_lossy(l).into_owned());
            self.sink.record(FetchRecord {
                url,
                status: response.status,
                body: body.into(),
                fetched_at,
                location,
                error: None,
                details: None,
                source,
            })?;
            count += 1;
        }
        Ok(count)
    }
}

/// The host (with its port, if any) that a robots directory's file stem
/// names, as a URL would read it, or `None` when it names no host.
///
/// The stem is percent-decoded first (a tool that writes host names as file
/// names may escape what a file system refuses, `:` as `%3A`); an escape
/// that is not `%` and two hex digits, or bytes that are no UTF-8 once
/// decoded, name no host. A port ends the name after `:` or `_` (file names
/// cannot hold a colon everywhere), digits only. Brackets hold an IPv6
/// literal (`[2001:db8::1]_8080`), and a `;` is a host character to the URL
/// reader as to Google's. What a URL reads as the end of its host (`/`,
/// `\`, `?`, `#`) or as user info (`@`: `evil.example@good.example` would
/// name good.example) is refused, so that a file never governs a host its
/// name does not spell; and the host must be one a URL can hold
/// ([`OriginKey::of_url`]).
pub fn robots_dir_host(stem: &str) -> Option<String> {
    let mut decoded = Vec::with_capacity(stem.len());
    let mut bytes = stem.bytes();
    while let Some(b) = bytes.next() {
        if b != b'%' {
            decoded.push(b);
            continue;
        }
        let hex = |b: Option<u8>| (b? as char).to_digit(16);
        decoded.push((hex(bytes.next())? * 16 + hex(bytes.next())?) as u8);
    }
    let decoded = String::from_utf8(decoded).ok()?;
    let host = match decoded.rsplit_once([':', '_']) {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{name}:{port}")
        }
        _ => decoded,
    };
    let name =
        host.rsplit_once(':').filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit())).map_or(&*host, |(n, _)| n);
    let brackets_ok = match name.find(['[', ']']) {
        None => true,
        Some(_) => {
            name.starts_with('[')
                && name.ends_with(']')
                && name[1..name.len() - 1].bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        }
    };
    let refused = |b: u8| b.is_ascii_whitespace() || b.is_ascii_control() || b"/\\@?#%".contains(&b);
    (!name.is_empty()
        && brackets_ok
        && !host.bytes().any(refused)
        && OriginKey::of_url(format!("http://{host}/")).is_ok())
    .then_some(host)
}

impl RecordSink for Corpus {
    fn record(&mut self, record: FetchRecord) -> Result<(), CorpusError> {
        self.records.push(record);
        Ok(())
    }

    fn warning(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    fn skips_bad_records(&self) -> bool {
        self.skip_bad_records
    }

    fn bad_record(&mut self, error: CorpusError) -> Result<(), CorpusError> {
        if !self.skip_bad_records {
            return Err(error);
        }
        self.skipped.push(error);
        Ok(())
    }
}

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Corpus {
        Corpus::default()
    }

    /// The records read so far.
    pub fn records(&self) -> &[FetchRecord] {
        &self.records
    }

    /// The records read, in input order, taken out of the corpus.
    pub fn into_records(self) -> Vec<FetchRecord> {
        self.records
    }

    /// From now on, a broken record (a JSON Lines line that is no fetch
    /// record, a WARC record that cannot be parsed) is skipped and listed in
    /// [`Corpus::skipped`] instead of failing the source: `compile
    /// --skip-bad-records`. What cannot be skipped still fails: a file that
    /// cannot be opened or decompressed, and a WARC file ends at a record cut
    /// short (nothing follows it) or at damaged compressed data.
    pub fn skip_bad_records(&mut self) {
        self.skip_bad_records = true;
    }

    /// The broken records skipped so far, in input order, each with where it
    /// is and what is wrong.
    pub fn skipped(&self) -> &[CorpusError] {
        &self.skipped
    }

    /// Adds one record.
    pub fn push(&mut self, record: FetchRecord) {
        self.records.push(record);
    }

    /// [`CorpusReader::add_robots_file`] into this corpus.
    pub fn add_robots_file(&mut self, path: &Path, origin_url: &str) -> Result<OriginKey, CorpusError> {
        CorpusReader::new(self).add_robots_file(path, origin_url)
    }

    /// [`CorpusReader::add_robots_dir`] into this corpus.
    pub fn add_robots_dir(&mut self, dir: &Path) -> Result<usize, CorpusError> {
        CorpusReader::new(self).add_robots_dir(dir)
    }

    /// [`CorpusReader::add_jsonl`] into this corpus.
    pub fn add_jsonl(&mut self, path: &Path) -> Result<usize, CorpusError> {
        CorpusReader::new(self).add_jsonl(path)
    }

    /// [`CorpusReader::add_jsonl_from`] into this corpus.
    pub fn add_jsonl_from(&mut self, name: Arc<str>, input: impl BufRead) -> Result<usize, CorpusError> {
        CorpusReader::new(self).add_jsonl_from(name, input)
    }

    /// [`CorpusReader::add_warc`] into this corpus.
    pub fn add_warc(&mut self, path: &Path) -> Result<usize, CorpusError> {
        CorpusReader::new(self).add_warc(path)
    }

    /// [`CorpusReader::add_warc_from`] into this corpus.
    pub fn add_warc_from(&mut self, name: Arc<str>, input: impl BufRead) -> Result<usize, CorpusError> {
        CorpusReader::new(self).add_warc_from(name, input)
    }

    /// Applies the fetch-status rules (see the module documentation): one
    /// [`Governing`] per origin that has a record of its `/robots.txt`.
    pub fn resolve(self) -> Resolution {
        let Corpus { records, mut warnings, .. } = self;
        let mut buf = KeyBuf::new();
        // The newest record of each URL (origin key + path), for redirects.
        let mut by_url: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut by_origin: BTreeMap<OriginKey, Vec<usize>> = BTreeMap::new();
        let mut off_root = Vec::new();
        let order = |i: usize| (records[i].fetched_at, i);
        for (i, record) in records.iter().enumerate() {
            let origin = match buf.parse(record.url.as_bytes()) {
                Ok(origin) => origin,
                Err(e) => {
                    warnings.push(Warning {
                        source: record.source.clone(),
                        message: format!("skipped: {}: {e}", record.url),
                    });
                    continue;
                }
            };
            let url = [origin.key, origin.path].concat();
            let at_root = origin.is_robots_txt();
            let key = OriginKey::of_url(&record.url).expect("parsed above");
            by_url.entry(url).and_modify(|j| *j = std::cmp::max_by_key(*j, i, |&k| order(k))).or_insert(i);
            if at_root {
                by_origin.entry(key).or_default().push(i);
            } else {
                off_root.push(i);
            }
        }
        let chains = Chains { records: &records, by_url: &by_url };
        let mut redirect_targets = HashSet::new();
        let mut origins = BTreeMap::new();
        for (origin, mut indices) in by_origin {
            indices.sort_by_key(|&i| order(i));
            let outcomes: Vec<Outcome> = indices.iter().map(|&i| chains.follow(i, &mut redirect_targets)).collect();
            let governing = choose(&records, &indices, &outcomes, origin.clone());
            origins.insert(origin, governing);
        }
        for i in off_root.into_iter().filter(|i| !redirect_targets.contains(i)) {
            warnings.push(Warning {
                source: records[i].source.clone(),
                message: format!("skipped: {} is not /robots.txt at the root of its origin", records[i].url),
            });
        }
        Resolution { origins, warnings }
    }
}

/// What one record comes to after its redirects.
pub(crate) struct Outcome {
    /// `Success`, `ClientError` or `Unreachable` (a failed chain is `ClientError`).
    pub(crate) class: StatusClass,
    /// The record that answered (the end of the chain).
    pub(crate) last: usize,
    pub(crate) redirects: usize,
    /// Why a redirect chain failed, if it did.
    pub(crate) failure: Option<String>,
    /// The records of the chain, its start first and `last` last.
    pub(crate) hops: Vec<usize>,
}

/// Redirects followed through a corpus: each target is the newest record of
/// the URL a `location` names.
pub(crate) struct Chains<'a> {
    pub(crate) records: &'a [FetchRecord],
    /// The newest record of each URL, by [`record_key`].
    pub(crate) by_url: &'a HashMap<Vec<u8>, usize>,
}

impl Chains<'_> {
    /// Follows the redirects from record `start`, adding every target
    /// reached to `targets`.
    pub(crate) fn follow(&self, start: usize, targets: &mut HashSet<usize>) -> Outcome {
        let mut at = start;
        let mut hops = vec![start];
        loop {
            let record = &self.records[at];
            let redirects = hops.len() - 1;
            let class = StatusClass::of(record.status);
            let why = if class != StatusClass::Redirect {
                return Outcome { class, last: at, redirects, failure: None, hops };
            } else if redirects == MAX_REDIRECTS {
                format!("more than {MAX_REDIRECTS} redirects")
            } else if let Some(location) = record.location.as_deref() {
                match resolve_location(&record.url, location).map(|url| self.by_url.get(&url)) {
                    None => format!("redirect to an invalid location {location:?}"),
                    Some(None) => format!("redirect to {location}, which the corpus has not fetched"),
                    Some(Some(target)) if hops.contains(target) => format!("redirect loop back to {location}"),
                    Some(Some(&target)) => {
                        targets.insert(target);
                        hops.push(target);
                        at = target;
                        continue;
                    }
                }
            } else {
                "redirect without a location".into()
            };
            return Outcome { class: StatusClass::ClientError, last: at, redirects, failure: Some(why), hops };
        }
    }
}

/// The fetch record of one JSON Lines line, or what is wrong with it.
fn fetch_record(line: &[u8], source: SourceRef) -> Result<FetchRecord, RecordError> {
    let raw: JsonRecord = serde_json::from_slice(line.trim_ascii()).map_err(|e| {
        // serde counts lines and columns inside the record: one line here.
        let what = match e.classify() {
            serde_json::error::Category::Eof => "the record is cut short",
            serde_json::error::Category::Syntax => "not JSON",
            _ => "not a fetch record",
        };
        let detail = e.to_string();
        let detail = detail.rsplit_once(" at line ").map_or(detail.as_str(), |(detail, _)| detail);
        RecordError::Json { what, detail: detail.to_owned(), column: e.column() }
    })?;
    if raw.status > 999 {
        return Err(RecordError::Status(raw.status));
    }
    let body = match (raw.body, raw.body_b64) {
        (Some(_), Some(_)) => return Err(RecordError::BothBodies),
        (Some(text), None) => text.into_bytes(),
        (None, Some(b64)) => base64::engine::general_purpose::STANDARD
            .decode(b64.as_bytes())
            .map_err(|e| RecordError::Base64(e.to_string()))?,
        (None, None) => Vec::new(),
    };
    let fetched_at =
        raw.fetched_at.map(|t| Timestamp::parse_rfc3339(&t)).transpose().map_err(RecordError::FetchedAt)?;
    Ok(FetchRecord {
        url: raw.url,
        status: raw.status,
        body: body.into(),
        fetched_at,
        location: raw.location,
        error: raw.error,
        details: FetchDetails {
            max_age: raw.max_age,
            retry_after: raw.retry_after,
            failures_in_a_row: raw.failures_in_a_row,
            attempts: raw.attempts,
            elapsed_ms: raw.elapsed_ms,
            truncated: raw.truncated,
            ftp_reply: raw.ftp_reply,
        }
        .boxed(),
        source,
    })
}

/// The key [`Corpus::resolve`] finds a fetched URL by when a redirect leads
/// to it: its origin key and path-and-query, as [`KeyBuf`] normalises them
/// (`None` for a URL that cannot be parsed).
pub fn record_key(url: &[u8]) -> Option<Vec<u8>> {
    let mut buf = KeyBuf::new();
    let origin = buf.parse(url).ok()?;
    Some([origin.key, origin.path].concat())
}

/// The absolute form (origin key + path) of a `Location` relative to `base`,
/// resolved as a WHATWG fetcher resolves it against an http(s) base: tabs and
/// newlines dropped; `//host` or `\\host` (slashes of either kind) keep only
/// the scheme; `/path` or `\path` keep the origin; `?query` keeps the path; a
/// `base-scheme:` without two slashes is relative; anything else is relative
/// to the base path's last segment. The result goes through [`KeyBuf`], which
/// resolves dot segments. It is the [`record_key`] of the target, public so
/// that a distributed resolution (robotsieve.spark) joins redirects on it.
pub fn resolve_location(base: &str, location: &str) -> Option<Vec<u8>> {
    let mut buf = KeyBuf::new();
    let location: String =
        location.trim_matches(|c| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let absolute = if buf.parse(location.as_bytes()).is_ok() {
        location
    } else {
        let (scheme, _) = base.split_once("://")?;
        let slash = |c: char| c == '/' || c == '\\';
        // A scheme: the base's without two slashes (`http:x`, `http:/x`) is
        // relative; any other names no http URL.
        let is_scheme = |name: &str| {
            name.starts_with(|c: char| c.is_ascii_alphabetic())
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        };
        let relative = match location.split_once(':') {
            Some((name, rest)) if is_scheme(name) => match name.eq_ignore_ascii_case(scheme) {
                true => rest,
                false => return None,
            },
            _ => location.as_str(),
        };
        let origin = buf.parse(base.as_bytes()).ok()?;
        let key = String::from_utf8_lossy(origin.key).into_owned();
        let path = String::from_utf8_lossy(origin.path).into_owned();
        let mut chars = relative.chars();
        match (chars.next(), chars.next()) {
            (Some(a), Some(b)) if slash(a) && slash(b) => format!("{scheme}:{relative}"),
            (Some(a), _) if slash(a) => format!("{key}{relative}"),
            (Some('?'), _) => format!("{key}{}{relative}", path.split('?').next().unwrap_or("/")),
            (None | Some('#'), _) => format!("{key}{path}"),
            _ => {
                // A relative path: beside the last segment of the base path.
                let path = path.split('?').next().unwrap_or("/");
                let dir = &path[..path.rfind('/').map_or(0, |p| p + 1)];
                format!("{key}{dir}{relative}")
            }
        }
    };
    record_key(absolute.as_bytes())
}

/// The newest record wins, subject to the 30-day rule ([`FetchHistory`]).
fn choose(records: &[FetchRecord], indices: &[usize], outcomes: &[Outcome], origin: OriginKey) -> Governing {
    let provenance = |k: usize, reason: Reason, explanation: String| Provenance {
        source: records[indices[k]].source.clone(),
        url: records[indices[k]].url.clone(),
        status: records[indices[k]].status,
        copy: CopyFacts::of(&records[indices[k]]),
        redirects: outcomes[k].redirects,
        reason,
        explanation,
    };
    let plain = |k: usize| {
        let outcome = &outcomes[k];
        let (robots, reason) = match outcome.class {
            StatusClass::Success => (Robots::Body(records[outcome.last].body.clone()), Reason::Success),
            StatusClass::ClientError if outcome.failure.is_some() => (Robots::Unrestricted, Reason::RedirectFailed),
            StatusClass::ClientError => (Robots::Unrestricted, Reason::ClientError),
            _ => (Robots::Blocked, Reason::Unreachable),
        };
        (robots, reason)
    };
    let describe_k = |k: usize| describe(records, indices[k], &outcomes[k]);
    let mut history = FetchHistory::default();
    for (k, outcome) in outcomes.iter().enumerate() {
        history.push(k, outcome.class, records[indices[k]].fetched_at);
    }
    match history.choose().expect("an origin has a record") {
        Choice::Newest(newest) => {
            let (robots, reason) = plain(newest);
            Governing { origin, robots, provenance: provenance(newest, reason, describe_k(newest)) }
        }
        Choice::Fallback { newest, reachable: k } => {
            let (robots, _) = plain(k);
            let explanation = format!(
                "unreachable for more than 30 days ({}); falling back to the last reachable fetch: {}",
                describe_k(newest),
                describe_k(k)
            );
            Governing { origin, robots, provenance: provenance(k, Reason::OutageFallback, explanation) }
        }
        Choice::StaysBlocked { newest, since: (_, since) } => {
            let explanation = format!(
                "{}; not more than 30 days after the last reachable fetch ({}), so the site stays blocked",
                describe_k(newest),
                since.map_or_else(|| "time unknown".to_owned(), |t| t.to_string())
            );
            Governing {
                origin,
                robots: Robots::Blocked,
                provenance: provenance(newest, Reason::Unreachable, explanation),
            }
        }
        Choice::Expired { newest, since } => {
            let explanation = format!(
                "{}; unreachable since {since} (more than 30 days) with no good copy: no restrictions",
                describe_k(newest),
            );
            Governing {
                origin,
                robots: Robots::Unrestricted,
                provenance: provenance(newest, Reason::OutageExpired, explanation),
            }
        }
        Choice::Blocked(newest) => Governing {
            origin,
            robots: Robots::Blocked,
            provenance: provenance(newest, Reason::Unreachable, describe_k(newest)),
        },
    }
}

/// One record and its chain, for people.
fn describe(records: &[FetchRecord], start: usize, outcome: &Outcome) -> String {
    let record_text = |r: &FetchRecord| {
        let mut text = format!("{}", r.status);
        if let Some(e) = r.error.as_deref().filter(|_| r.status == 0) {
            text.push_str(&format!(" ({e})"));
        }
        text.push_str(&format!(" from {} ({}", r.source, r.url));
        if let Some(t) = r.fetched_at {
            text.push_str(&format!(", fetched {t}"));
        }
        text.push(')');
        text
    };
    let mut text = record_text(&records[start]);
    if outcome.redirects > 0 {
        let s = if outcome.redirects == 1 { "" } else { "s" };
        text.push_str(&format!(" -> after {} redirect{s}: {}", outcome.redirects, record_text(&records[outcome.last])));
    }
    let last = &records[outcome.last];
    let effect = match (&outcome.failure, outcome.class) {
        (Some(why), _) => format!("{why}: treated as 404, no restrictions"),
        (None, StatusClass::Success) => "its rules apply".to_owned(),
        (None, StatusClass::ClientError) => "no robots.txt: no restrictions".to_owned(),
        (None, _) if last.status == 0 => "no answer: everything disallowed".to_owned(),
        (None, _) if last.status == 429 => "too many requests: everything disallowed".to_owned(),
        (None, _) => "server error: everything disallowed".to_owned(),
    };
    format!("{text}: {effect}")
}
