//! Reading WARC files (ISO 28500, versions 1.0 and 1.1): a streaming record
//! reader; the HTTP response a `response` record holds is read by
//! [`crate::http`].
//!
//! Generic on purpose: the corpus reader takes robots.txt fetch results from
//! it ([`crate::corpus`]), and a page reader can take HTML responses for robots
//! meta tags from the same iterator.
//!
//! Why not the `warc` crate (0.4): it brings a second deflate implementation
//! (libflate) and nom beside flate2, and parses no HTTP; what is needed here
//! is a few hundred lines over [`std::io::BufRead`].
//!
//! - Compression is detected by the gzip magic bytes: a file compressed record
//!   by record (the usual `.warc.gz`, each record its own gzip member) and a
//!   file compressed as a whole both read through one multi-member decoder;
//!   anything else is read as plain WARC.
//! - Records are read one at a time; memory holds one record's block, and at
//!   most [`MAX_BLOCK`] of it: the rest of a larger block (a video in a
//!   general crawl, or a damaged `Content-Length`) is read past, and a body's
//!   content coding is undone up to that size too (no gzip bomb).
//! - Offsets are counted in the decompressed stream.

use crate::http::{truncate, HttpError, HttpResponse, MAX_BLOCK};
use crate::time::{TimeError, Timestamp};
use flate2::bufread::MultiGzDecoder;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// One WARC record: its named fields and its content block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarcRecord {
    /// 1-based position of the record in its file.
    pub number: u64,
    /// Byte offset of the record's version line in the decompressed stream.
    pub offset: u64,
    /// The version line, e.g. `WARC/1.0`.
    pub version: String,
    /// The named fields in order, names as written (look up with
    /// [`WarcRecord::header`], which ignores case).
    pub headers: Vec<(String, String)>,
    /// The content block: `Content-Length` bytes, or its first
    /// [`MAX_BLOCK`] bytes when it is longer.
    pub block: Vec<u8>,
    /// The block's length (`Content-Length`): more than `block.len()` when
    /// the block was cut.
    pub length: u64,
}

impl WarcRecord {
    /// The first field called `name`, compared without case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// `WARC-Type`: `response`, `request`, `metadata`, `warcinfo`, `revisit`, ...
    pub fn record_type(&self) -> Option<&str> {
        self.header("WARC-Type")
    }

    /// `WARC-Target-URI`, without the angle brackets some WARC 1.1 writers put
    /// around it.
    pub fn target_uri(&self) -> Option<&str> {
        let uri = self.header("WARC-Target-URI")?.trim();
        Some(uri.strip_prefix('<').and_then(|u| u.strip_suffix('>')).unwrap_or(uri))
    }

    /// `WARC-Date`, parsed; `None` when absent, an error when malformed.
    pub fn date(&self) -> Option<Result<Timestamp, TimeError>> {
        self.header("WARC-Date").map(|d| Timestamp::parse_rfc3339(d.trim()))
    }

    /// Whether the block is an HTTP message: `Content-Type: application/http`,
    /// or no `Content-Type` and a block starting with `HTTP/`.
    pub fn is_http(&self) -> bool {
        match self.header("Content-Type") {
            Some(t) => t.trim_start().to_ascii_lowercase().starts_with("application/http"),
            None => self.block.starts_with(b"HTTP/"),
        }
    }

    /// The HTTP response in the block of a `response` record.
    pub fn http_response(&self) -> Result<HttpResponse, HttpError> {
        HttpResponse::parse(&self.block)
    }
}

/// A WARC file that cannot be read on: where and why.
#[derive(Debug)]
pub struct WarcError {
    /// 1-based number of the record being read.
    pub record: u64,
    /// Byte offset (decompressed) where that record starts.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for WarcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record {} (offset {}): {}", self.record, self.offset, self.message)
    }
}

impl std::error::Error for WarcError {}

/// Streams the records of a WARC file. After an error the iterator ends: a
/// broken length leaves no reliable way to find the next record. Unless
/// told to resync ([`WarcReader::resync_after_errors`]): then a record
/// with a broken header is followed by the next line that starts with
/// `WARC/`. A read error (damaged compressed data) and the end of the file
/// inside a record end it all the same.
pub struct WarcReader<R> {
    input: R,
    number: u64,
    offset: u64,
    done: bool,
    /// Whether to look for the next record after a broken one.
    resync: bool,
    /// Whether the last record was broken, so the next starts at the next version line.
    resyncing: bool,
}

impl<R: BufRead> WarcReader<R> {
    /// Reads plain (already decompressed) WARC from `input`.
    pub fn new(input: R) -> WarcReader<R> {
        WarcReader { input, number: 0, offset: 0, done: false, resync: false, resyncing: false }
    }

    /// After a record with a broken header, go on at the next line that
    /// starts with `WARC/` instead of ending (`compile --skip-bad-records`).
    pub fn resync_after_errors(&mut self) {
        self.resync = true;
    }

    /// A broken record: the reader ends, or resyncs when told to.
    fn error(&mut self, offset: u64, message: impl Into<String>) -> WarcError {
        self.done = !self.resync;
        self.resyncing = self.resync;
        WarcError { record: self.number, offset, message: message.into() }
    }

    /// A broken record nothing can follow: a read error, or the end of the input.
    fn fatal(&mut self, offset: u64, message: impl Into<String>) -> WarcError {
        self.done = true;
        WarcError { record: self.number, offset, message: message.into() }
    }

    /// Reads one line including its terminator; empty at the end of input.
    fn read_line(&mut self, line: &mut Vec<u8>) -> io::Result<usize> {
        line.clear();
        let n = (&mut self.input).take(64 * 1024).read_until(b'\n', line)?;
        self.offset += n as u64;
        Ok(n)
    }

    fn read_record(&mut self) -> Result<Option<WarcRecord>, WarcError> {
        let mut line = Vec::new();
        // Skip the blank lines between records (after a broken record, every
        // line up to the next version line).
        let start = loop {
            let start = self.offset;
            let n = self.read_line(&mut line).map_err(|e| self.fatal(start, e.to_string()))?;
            if n == 0 {
                return Ok(None);
            }
            if self.resyncing && !line.starts_with(b"WARC/") {
                continue;
            }
            if !line.trim_ascii().is_empty() {
                self.resyncing = false;
                break start;
            }
        };
        self.number += 1;
        let version = String::from_utf8_lossy(line.trim_ascii()).into_owned();
        if !version.starts_with("WARC/") {
            return Err(self.error(start, format!("expected a WARC/ version line, found {:?}", truncate(&version))));
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        loop {
            let n = self.read_line(&mut line).map_err(|e| self.fatal(start, e.to_string()))?;
            if n == 0 {
                return Err(self.fatal(start, "the file ends inside the record's header"));
            }
            if !line.ends_with(b"\n") {
                return Err(self.error(start, "header line not terminated (longer than 64 KiB, or the file ends)"));
            }
            let text = line.trim_ascii_end();
            if text.is_empty() {
                break;
            }
            if matches!(text[0], b' ' | b'\t') {
                if let Some((_, value)) = headers.last_mut() {
                    value.push(' ');
                    value.push_str(&String::from_utf8_lossy(text.trim_ascii()));
                }
                continue;
            }
            let Some(colon) = text.iter().position(|&b| b == b':') else {
                let shown = String::from_utf8_lossy(text).into_owned();
                return Err(self.error(start, format!("header line without a colon: {:?}", truncate(&shown))));
            };
            headers.push((
                String::from_utf8_lossy(text[..colon].trim_ascii()).into_owned(),
                String::from_utf8_lossy(text[colon + 1..].trim_ascii()).into_owned(),
            ));
        }
        let length = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("Content-Length")).map(|(_, v)| v.clone());
        let length: u64 = match length.map(|v| v.parse()) {
            Some(Ok(n)) => n,
            Some(Err(_)) => return Err(self.error(start, "Content-Length is not a number")),
            None => return Err(self.error(start, "record without Content-Length")),
        };
        let mut block = Vec::new();
        let kept = length.min(MAX_BLOCK);
        let got =
            (&mut self.input).take(kept).read_to_end(&mut block).map_err(|e| self.fatal(start, e.to_string()))? as u64;
        let past = io::copy(&mut (&mut self.input).take(length - kept), &mut io::sink())
            .map_err(|e| self.fatal(start, e.to_string()))?;
        self.offset += got + past;
        if got + past < length {
            let got = got + past;
            return Err(self.fatal(start, format!("the file ends inside the record: {got} of its {length} bytes")));
        }
        Ok(Some(WarcRecord { number: self.number, offset: start, version, headers, block, length }))
    }
}

impl<R: BufRead> Iterator for WarcReader<R> {
    type Item = Result<WarcRecord, WarcError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_record() {
            Ok(Some(record)) => Some(Ok(record)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// Wraps `input` in a gzip decoder when it starts with the gzip magic bytes
/// (`1f 8b`), and reads it as WARC.
pub fn reader<'a, R: BufRead + 'a>(mut input: R) -> io::Result<WarcReader<Box<dyn BufRead + 'a>>> {
    let gzip = input.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let input: Box<dyn BufRead + 'a> =
        if gzip { Box::new(BufReader::new(MultiGzDecoder::new(input))) } else { Box::new(input) };
    Ok(WarcReader::new(input))
}

/// Opens a WARC file, gzip-compressed or plain.
pub fn open(path: &Path) -> io::Result<WarcReader<Box<dyn BufRead>>> {
    reader(BufReader::with_capacity(256 * 1024, File::open(path)?))
}
