//! `filter --unknown-origins FILE`: the robots.txt URLs of the origins the
//! artifact does not hold, each once, in the order their first URL came:
//! the list a crawl loop fetches next.
//!
//! It is a writer the pipeline hands its list of unknown URLs to (which it
//! writes in input order, whole lines): each line's origin is taken with the
//! classifier's own URL parser, and a key not seen before adds
//! `scheme://host[:port]/robots.txt` to the file. The lines go on to the
//! `--unknown` file when one is given too. The keys seen are held in memory,
//! one per distinct unknown origin (what the file holds).

use robotsieve_core::url::KeyBuf;
use robotsieve_engine::PendingFile;
use std::collections::HashSet;
use std::io::{self, Write};

/// Buffered robots.txt URLs are written out beyond this many bytes.
const FLUSH_AT: usize = 1 << 16;

/// The writer of the unknown list that collects its origins (see the module
/// documentation).
pub struct UnknownOrigins<'a> {
    /// The `--unknown` file, when one is wanted too.
    list: Option<&'a mut PendingFile>,
    /// The `--unknown-origins` file.
    origins: &'a mut PendingFile,
    seen: HashSet<Vec<u8>>,
    key: KeyBuf,
    /// The start of a line whose end has not come yet.
    partial: Vec<u8>,
    /// Robots.txt URLs not yet written.
    out: Vec<u8>,
    /// The first error writing the origins file: reported by
    /// [`UnknownOrigins::finish`] under that file's name, not the list's.
    failed: Option<io::Error>,
}

impl<'a> UnknownOrigins<'a> {
    /// Collects into `origins`, passing the lines on to `list` if given.
    pub fn new(origins: &'a mut PendingFile, list: Option<&'a mut PendingFile>) -> UnknownOrigins<'a> {
        UnknownOrigins {
            list,
            origins,
            seen: HashSet::new(),
            key: KeyBuf::new(),
            partial: Vec::new(),
            out: Vec::new(),
            failed: None,
        }
    }

    /// The origin of one unknown URL: its robots.txt URL, if not seen before.
    fn line(&mut self, url: &[u8]) {
        // Unknown URLs parsed when they were classified; the parser is the same.
        let Ok(origin) = self.key.parse(url) else { return };
        if !self.seen.contains(origin.key) {
            self.seen.insert(origin.key.to_vec());
            self.out.extend_from_slice(origin.key);
            self.out.extend_from_slice(b"/robots.txt\n");
        }
    }

    fn write_out(&mut self) {
        if self.failed.is_none() {
            self.failed = self.origins.write_all(&self.out).err();
        }
        self.out.clear();
    }

    /// Writes what is left; the first error writing the origins file, if any.
    pub fn finish(mut self) -> io::Result<()> {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last);
        }
        self.write_out();
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Write for UnknownOrigins<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(list) = self.list.as_mut() {
            list.write_all(bytes)?;
        }
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            if self.partial.is_empty() {
                self.line(&rest[..end]);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(&rest[..end]);
                self.line(&whole);
            }
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        if self.out.len() >= FLUSH_AT {
            self.write_out();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.list.as_mut() {
            Some(list) => list.flush(),
            None => Ok(()),
        }
    }
}
