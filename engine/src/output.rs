//! Where the filter's results go: the TSV outputs, and output files that
//! appear only when a run succeeds.
//!
//! The pipeline ([`crate::filter`]) classifies and orders; it writes through
//! a [`Sink`], and knows nothing of formats or files. This module holds what
//! the command line and the bindings write through it:
//!
//! - [`Outputs`]: the TSV sink: lists of one verdict's URLs, the verdicts
//!   output (`VERDICT<TAB>URL[<TAB>REASON]`) and matrix rows, each a `Write`.
//!   Lines are formatted on the workers into per-chunk buffers
//!   ([`TsvChunk`]), which the pipeline hands back in input order to be
//!   written while later chunks are classified.
//! - [`PendingFile`]: an output written under a temporary name in the same
//!   directory and renamed into place only on [`PendingFile::commit`], so a
//!   failed or interrupted run leaves no partial file under the final name.
//!   Live temporary files are registered, so that a signal handler can remove
//!   them with [`remove_pending_files`] before the process exits. The
//!   artifact writer and `meta` write through it too.

use crate::filter::{ChunkSink, Config, FilterError, Format, Sink};
use crate::line::LineProblem;
use crate::verdict::Verdict;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

mod direct;

// ---------------------------------------------------------------------------
// The TSV outputs
// ---------------------------------------------------------------------------

/// Where an output's bytes go: any writer, or an output file, to which a
/// chunk's buffer can go without a copy ([`PendingFile::write_placed`]).
enum Writer<'w> {
    Stream(&'w mut dyn Write),
    File(&'w mut PendingFile),
}

struct Output<'w> {
    name: String,
    writer: Writer<'w>,
}

impl Output<'_> {
    fn failed(&self, source: io::Error) -> FilterError {
        FilterError::Output { name: self.name.clone(), source }
    }

    fn writer(&mut self) -> &mut dyn Write {
        match &mut self.writer {
            Writer::Stream(writer) => *writer,
            Writer::File(file) => *file,
        }
    }

    /// Where in a block the next chunk's bytes land, when they are worth
    /// placing there ([`PendingFile::lead`]).
    fn lead(&self) -> Option<usize> {
        match &self.writer {
            Writer::Stream(_) => None,
            Writer::File(file) => file.lead(),
        }
    }
}

/// Where the results of a run go. Each output is optional; one that is not
/// set costs nothing.
///
/// - A list ([`Outputs::list`]) receives the URLs of one verdict, one per line
///   (LF), in input order.
/// - The verdicts output ([`Outputs::verdicts`]) receives `VERDICT<TAB>URL`
///   for every URL, plus `<TAB>REASON` when [`Config::explain`] is set. The
///   URL is written as read, so a URL holding a tab is still recovered as
///   everything between the first and (with reasons) the last tab.
/// - The rows output ([`Outputs::rows`]) receives `URL<TAB>ROW` for every
///   URL, where ROW is the classifier's reason as given, tabs kept (line ends
///   become spaces): a [`crate::classify::MatrixClassifier`] gives one
///   verdict per crawler, so that each line is a row of the matrix.
///
/// Each may be any writer, or a [`PendingFile`] (`list_file` and so on):
/// then, when the file is written past the page cache
/// ([`PendingFile::write_direct`]), the workers format each chunk where its
/// bytes will lie in the file's blocks, and the chunk's buffer itself goes to
/// the file's writer ([`PendingFile::write_placed`]) instead of being copied.
#[derive(Default)]
pub struct Outputs<'w> {
    /// By number ([`OUTPUTS`]).
    outputs: [Option<Output<'w>>; OUTPUTS],
    /// Shared with the format on the workers: where each chunk of each
    /// output lands in a block.
    leads: Arc<Leads>,
}

/// The outputs of an [`Outputs`] and of a [`TsvChunk`], by number: the lists
/// by [`Verdict::index`], then the verdicts, then the rows.
const OUTPUTS: usize = 6;
const VERDICTS: usize = 4;
const ROWS: usize = 5;

/// Where each chunk's bytes will land in the blocks of each output, worked
/// out as the workers finish chunks (in any order), so that a worker about
/// to format a chunk knows where to put its bytes as soon as every chunk
/// before it is formatted, whether or not those are written yet.
#[derive(Debug, Default)]
struct Leads(Mutex<LeadChain>);

#[derive(Debug, Default)]
struct LeadChain {
    /// The first chunk not yet finished, and where its bytes land in a
    /// block, per output.
    next: u64,
    leads: [usize; OUTPUTS],
    /// The bytes of each output of chunks finished after `next`, by their
    /// number less `next + 1`.
    finished: VecDeque<Option<[usize; OUTPUTS]>>,
}

impl Leads {
    fn chain(&self) -> MutexGuard<'_, LeadChain> {
        // Every update leaves the chain consistent: a poisoned lock holds nothing wrong.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a run whose first chunk's bytes land at `leads`.
    fn restart(&self, leads: [usize; OUTPUTS]) {
        *self.chain() = LeadChain { next: 0, leads, finished: VecDeque::new() };
    }

    /// Where the bytes of chunk `seq` land, if every chunk before it is
    /// finished.
    fn of(&self, seq: u64) -> Option<[usize; OUTPUTS]> {
        let chain = self.chain();
        (chain.next == seq).then_some(chain.leads)
    }

    /// Chunk `seq` holds `lens` bytes of each output.
    fn finished(&self, seq: u64, lens: [usize; OUTPUTS]) {
        let mut chain = self.chain();
        let Some(Ok(at)) = seq.checked_sub(chain.next).map(usize::try_from) else { return };
        if chain.finished.len() <= at {
            chain.finished.resize(at + 1, None);
        }
        chain.finished[at] = Some(lens);
        while let Some(&Some(lens)) = chain.finished.front() {
            chain.finished.pop_front();
            for (lead, len) in chain.leads.iter_mut().zip(lens) {
                *lead = (*lead + len) % BLOCK;
            }
            chain.next += 1;
        }
    }
}

impl<'w> Outputs<'w> {
    /// No outputs: a run only counts.
    pub fn new() -> Outputs<'w> {
        Outputs::default()
    }

    /// Sends the URLs with `verdict` to `writer`; `name` is what errors call it.
    pub fn list(self, verdict: Verdict, name: impl Into<String>, writer: &'w mut dyn Write) -> Outputs<'w> {
        self.with(verdict.index(), name, Writer::Stream(writer))
    }

    /// Sends a `VERDICT<TAB>URL` line per URL to `writer`.
    pub fn verdicts(self, name: impl Into<String>, writer: &'w mut dyn Write) -> Outputs<'w> {
        self.with(VERDICTS, name, Writer::Stream(writer))
    }

    /// Sends a `URL<TAB>ROW` line per URL to `writer` (see [`Outputs`]).
    pub fn rows(self, name: impl Into<String>, writer: &'w mut dyn Write) -> Outputs<'w> {
        self.with(ROWS, name, Writer::Stream(writer))
    }

    /// [`Outputs::list`] to an output file, written without copies when it
    /// is written past the page cache.
    pub fn list_file(self, verdict: Verdict, name: impl Into<String>, file: &'w mut PendingFile) -> Outputs<'w> {
        self.with(verdict.index(), name, Writer::File(file))
    }

    /// [`Outputs::verdicts`] to an output file (see [`Outputs::list_file`]).
    pub fn verdicts_file(self, name: impl Into<String>, file: &'w mut PendingFile) -> Outputs<'w> {
        self.with(VERDICTS, name, Writer::File(file))
    }

    /// [`Outputs::rows`] to an output file (see [`Outputs::list_file`]).
    pub fn rows_file(self, name: impl Into<String>, file: &'w mut PendingFile) -> Outputs<'w> {
        self.with(ROWS, name, Writer::File(file))
    }

    fn with(mut self, output: usize, name: impl Into<String>, writer: Writer<'w>) -> Outputs<'w> {
        self.outputs[output] = Some(Output { name: name.into(), writer });
        self
    }
}

/// The first field of a verdicts line, by [`Verdict::index`]: the name and a
/// tab, copied in one piece.
const VERDICT_FIELDS: [&[u8]; 4] = [b"allowed\t", b"disallowed\t", b"unknown\t", b"invalid\t"];

/// [`VERDICT_FIELDS`] padded to 16 bytes.
const VERDICT_FIELDS_PADDED: [[u8; 16]; 4] =
    [*b"allowed\t________", *b"disallowed\t_____", *b"unknown\t________", *b"invalid\t________"];

/// The output of one chunk for [`Outputs`]: one buffer per output, reused
/// from chunk to chunk. A buffer's bytes start at its `starts` entry: a
/// placed output's buffer begins with room for the bytes that go before
/// them in their first block (see [`Outputs`]).
#[derive(Debug, Default)]
pub struct TsvChunk {
    /// By output number ([`OUTPUTS`]).
    buffers: [Vec<u8>; OUTPUTS],
    starts: [usize; OUTPUTS],
    /// The chunk's number in the run ([`Format::begin`]).
    seq: u64,
}

impl TsvChunk {
    /// The bytes of `output`.
    fn bytes(&self, output: usize) -> &[u8] {
        let buffer = &self.buffers[output];
        &buffer[self.starts[output].min(buffer.len())..]
    }
}

/// Which outputs of an [`Outputs`] a run formats, decided once per run and
/// shared by the workers.
#[derive(Clone, Debug)]
pub struct TsvFormat {
    /// Which outputs are wanted, by number ([`OUTPUTS`]).
    wanted: [bool; OUTPUTS],
    /// Whether any list is wanted.
    any_list: bool,
    /// Whether the verdicts output gets reasons.
    explain: bool,
    /// Which outputs are formatted where their bytes will lie in blocks.
    placed: [bool; OUTPUTS],
    leads: Arc<Leads>,
}

impl Sink for Outputs<'_> {
    type Format = TsvFormat;

    fn format(&self, config: &Config) -> TsvFormat {
        let leads: [Option<usize>; OUTPUTS] =
            std::array::from_fn(|output| self.outputs[output].as_ref().and_then(Output::lead));
        self.leads.restart(leads.map(|lead| lead.unwrap_or(0)));
        let placed = leads.map(|lead| lead.is_some());
        let wanted = std::array::from_fn(|output| self.outputs[output].is_some());
        TsvFormat {
            wanted,
            any_list: wanted[..VERDICTS].contains(&true),
            explain: config.explain && wanted[VERDICTS],
            placed,
            leads: Arc::clone(&self.leads),
        }
    }
}

impl ChunkSink for Outputs<'_> {
    type Chunk = TsvChunk;

    fn write(&mut self, chunk: &TsvChunk) -> Result<(), FilterError> {
        for (output, out) in self.outputs.iter_mut().enumerate() {
            if let Some(out) = out {
                out.writer().write_all(chunk.bytes(output)).map_err(|e| out.failed(e))?;
            }
        }
        Ok(())
    }

    /// [`ChunkSink::write`], but a placed buffer goes to its file as it is
    /// ([`PendingFile::write_placed`]), the chunk getting an empty one.
    fn write_taking(&mut self, chunk: &mut TsvChunk) -> Result<(), FilterError> {
        for (output, out) in self.outputs.iter_mut().enumerate() {
            let start = chunk.starts[output];
            if let Some(out) = out {
                let written = match &mut out.writer {
                    Writer::File(file) => file.write_placed(&mut chunk.buffers[output], start),
                    Writer::Stream(writer) => writer.write_all(chunk.bytes(output)),
                };
                written.map_err(|e| out.failed(e))?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        for out in self.outputs.iter_mut().flatten() {
            out.writer().flush().map_err(|e| out.failed(e))?;
        }
        Ok(())
    }
}

/// Empties `buf` and makes room for `room` bytes after a start at `lead`
/// bytes past a multiple of [`BLOCK`] in memory, with the `lead` bytes
/// before it in the same allocation: returns that start. Only the first
/// allocation of a buffer moves it; the bytes before the start are zeros.
fn place(buf: &mut Vec<u8>, room: usize, lead: usize) -> usize {
    buf.clear();
    buf.reserve(room + 2 * BLOCK);
    let start = buf.as_ptr().align_offset(BLOCK) + lead;
    buf.resize(start, 0);
    start
}

impl Format for TsvFormat {
    type Chunk = TsvChunk;

    fn wants_reasons(&self) -> bool {
        self.explain || self.wanted[ROWS]
    }

    fn writes_lines(&self) -> bool {
        self.wanted.contains(&true)
    }

    fn begin(&self, chunk: &mut TsvChunk, seq: u64) {
        chunk.seq = seq;
    }

    fn start(&self, chunk: &mut TsvChunk, input_len: usize) {
        // Room for the whole chunk's output up front: growing a buffer line by
        // line would copy it over and over. A list holds at most the chunk (plus
        // a final newline); a verdicts line adds at most a dozen bytes to a URL,
        // which is rarely shorter than 24. Reasons grow the buffer as needed.
        let leads = self.placed.contains(&true).then(|| self.leads.of(chunk.seq)).flatten();
        for output in (0..OUTPUTS).filter(|&output| self.wanted[output]) {
            let room = match output {
                VERDICTS => input_len + input_len / 2 + 64,
                ROWS => input_len * 2 + 64,
                _ => input_len + 1,
            };
            let buf = &mut chunk.buffers[output];
            chunk.starts[output] = if self.placed[output] {
                // Where the file's writer will want the bytes; while a chunk
                // before this one is unwritten, a guess, and a wrong one costs
                // a copy of the chunk (as an unplaced output always pays).
                place(buf, room, leads.map_or(0, |leads| leads[output]))
            } else {
                buf.reserve(room);
                buf.len()
            };
        }
    }

    #[inline(always)]
    fn record(&self, chunk: &mut TsvChunk, url: &[u8], verdict: Verdict, reason: &[u8]) {
        let index = verdict.index();
        if self.any_list {
            // Append, then take the line back from a list nobody asked for: the
            // verdict is as good as random to the branch predictor, and a short
            // copy costs less than the mispredicted branch that would skip it
            // (measured: one list wanted of two verdicts, 44 to 62 million URLs/s).
            let list = &mut chunk.buffers[index];
            let len = list.len();
            push_line(list, &[0; 16], 0, url, true);
            list.truncate(len + (url.len() + 1) * usize::from(self.wanted[index]));
        }
        if self.wanted[VERDICTS] {
            let out = &mut chunk.buffers[VERDICTS];
            // A fixed-size copy of the padded field, cut to its length: no
            // variable-length copy and no branch on the verdict.
            push_line(out, &VERDICT_FIELDS_PADDED[index], VERDICT_FIELDS[index].len(), url, !self.explain);
            if self.explain {
                out.push(b'\t');
                // The classifier promises a tab-free reason; a broken promise must
                // still not break the line structure.
                out.extend(reason.iter().map(|&b| if matches!(b, b'\t' | b'\n' | b'\r') { b' ' } else { b }));
                out.push(b'\n');
            }
        }
        if self.wanted[ROWS] {
            let out = &mut chunk.buffers[ROWS];
            out.extend_from_slice(url);
            out.push(b'\t');
            out.extend(reason.iter().map(|&b| if matches!(b, b'\n' | b'\r') { b' ' } else { b }));
            out.push(b'\n');
        }
    }

    fn end(&self, chunk: &mut TsvChunk) {
        if self.placed.contains(&true) {
            self.leads.finished(chunk.seq, std::array::from_fn(|output| chunk.bytes(output).len()));
        }
    }

    #[cold]
    fn record_bad_line(&self, chunk: &mut TsvChunk, line: &[u8], problem: LineProblem) {
        let reason = if self.explain { problem.to_string() } else { String::new() };
        self.record(chunk, line, Verdict::Invalid, reason.as_bytes());
    }

    fn reset(&self, chunk: &mut TsvChunk, keep: usize) {
        for buf in &mut chunk.buffers {
            buf.clear();
            buf.shrink_to(keep);
        }
        chunk.starts = [0; OUTPUTS];
    }
}

/// Appends the first `field_len` bytes of `field` (at most 16), then `bytes`
/// (a URL, tens of bytes), then a newline if `newline`, to `out`: after one
/// check for room, in fixed 16-byte copies (the field whole, then cut; the
/// URL's last copy overlapping the one before), instead of a copy of
/// `bytes.len()` (a `memcpy` call, whose call and size dispatch cost more
/// than the copy on URLs: callgrind, about 35 instructions a URL) and a check
/// for room per piece. URLs shorter than 16 bytes are appended piece by piece.
#[inline(always)]
fn push_line(out: &mut Vec<u8>, field: &[u8; 16], field_len: usize, bytes: &[u8], newline: bool) {
    let len = bytes.len();
    if len < 16 || field_len > 16 {
        out.extend_from_slice(&field[..field_len]);
        out.extend_from_slice(bytes);
        out.extend_from_slice(&b"\n"[..usize::from(newline)]);
        return;
    }
    out.reserve(16 + len + 1);
    let start = out.len();
    // SAFETY: `reserve` made room for `16 + len + 1` bytes from `start`. The
    // field's copy writes bytes 0..16 of that room; each copy of `bytes`
    // reads 16 bytes of it at an offset of at most `len - 16` and writes them
    // at the same offset from `field_len <= 16`; the newline goes at
    // `field_len + len`: all within the room. Together they write every byte
    // of `field_len + len (+ 1)` before `set_len` takes them in.
    unsafe {
        let dst = out.as_mut_ptr().add(start);
        std::ptr::copy_nonoverlapping(field.as_ptr(), dst, 16);
        let src = bytes.as_ptr();
        let dst = dst.add(field_len);
        let mut at = 0;
        while at + 16 < len {
            std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), 16);
            at += 16;
        }
        std::ptr::copy_nonoverlapping(src.add(len - 16), dst.add(len - 16), 16);
        *dst.add(len) = b'\n';
        out.set_len(start + field_len + len + usize::from(newline));
    }
}

// ---------------------------------------------------------------------------
// Output files
// ---------------------------------------------------------------------------

/// An output file written under a temporary name in its final directory and
/// renamed into place by [`PendingFile::commit`]. Dropped without a commit
/// (an error, a panic), it removes the temporary file: a failed run leaves
/// neither a partial file under the final name nor litter.
///
/// A signal ends the process without running destructors: the temporary
/// path is therefore registered from creation to commit or drop, and a
/// signal handler removes every registered file with [`remove_pending_files`].
///
/// Writes go straight to the file, unbuffered: the pipeline writes whole
/// chunks of output at a time. Wrap it in a `BufWriter` for small writes.
///
/// The commit syncs the file before the rename (a renamed file is a whole
/// one even after a crash). So that this sync does not wait for the whole
/// file's writeback at the end of a run, a file written through a rename
/// starts the writeback of every [`WRITEBACK_STEP`] bytes as soon as they
/// are written (Linux's `sync_file_range`, which only queues the I/O): the
/// disk writes while later chunks are classified, and the commit's sync
/// waits for little more than the last step.
pub struct PendingFile {
    /// The path given, for messages.
    path: PathBuf,
    /// What the commit renames over: the path, or the file a symbolic link
    /// there leads to.
    target: PathBuf,
    temp_path: PathBuf,
    file: Option<File>,
    /// Bytes written so far, and how many of them have had their writeback
    /// started.
    written: u64,
    writeback_started: u64,
    /// The writer past the page cache, after [`PendingFile::write_direct`].
    direct: Option<direct::Direct>,
}

/// The block size of writes past the page cache: what
/// [`PendingFile::write_placed`] aligns buffers to.
pub const BLOCK: usize = direct::ALIGN;

/// How many written bytes a [`PendingFile`] lets accumulate before it starts
/// their writeback: large enough that the hint costs nothing per chunk,
/// small enough that little is left for the commit's sync.
pub const WRITEBACK_STEP: u64 = 8 << 20;

impl PendingFile {
    /// Creates the temporary file `.NAME.robotsieve-PID-N.tmp` next to `path`.
    ///
    /// Streams are written directly, in order, and never renamed over:
    /// renaming a file over one would replace the device, pipe or link
    /// itself, and a partial write to a stream cannot be taken back anyway.
    /// They are `-` and the names of standard output and error (`/dev/stdout`,
    /// `/dev/fd/1`, `/proc/self/fd/2`, ...), which write to the descriptor
    /// this process was given (so a shell's `>>` still appends); other
    /// descriptors' names (`/dev/fd/63` of a `>(...)`); and whatever exists
    /// and is not a regular file (`/dev/null`, `/dev/full`, a named pipe, a
    /// terminal). A directory is refused at once.
    ///
    /// A symbolic link is written through: the temporary file goes next to
    /// the file the link leads to (through every link of a chain, whether
    /// or not that file exists yet), and the commit renames over that file,
    /// so the link stays a link.
    pub fn create(path: &Path) -> Result<PendingFile, FilterError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let failed = |source| FilterError::Output { name: path.display().to_string(), source };
        if let Some(file) = open_stream(path) {
            let file = file.map_err(failed)?;
            return Ok(PendingFile::new(path.to_path_buf(), path.to_path_buf(), PathBuf::new(), file));
        }
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(failed(io::Error::other("is a directory")));
        }
        let target = link_target(path).map_err(failed)?;
        let file_name = target.file_name().ok_or_else(|| failed(io::Error::other("not a file name")))?;
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        loop {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(file_name);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            temp_name.push(format!(".robotsieve-{}-{n}.tmp", std::process::id()));
            let temp_path = dir.join(temp_name);
            match File::options().read(true).write(true).create_new(true).open(&temp_path) {
                Ok(file) => {
                    let mut registry = pending_registry();
                    if registry.closed {
                        drop(file);
                        let _ = std::fs::remove_file(&temp_path);
                        return Err(failed(io::Error::other("the process is being interrupted")));
                    }
                    registry.temp_paths.push(temp_path.clone());
                    return Ok(PendingFile::new(path.to_path_buf(), target, temp_path, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(e)),
            }
        }
    }

    fn new(path: PathBuf, target: PathBuf, temp_path: PathBuf, file: File) -> PendingFile {
        PendingFile { path, target, temp_path, file: Some(file), written: 0, writeback_started: 0, direct: None }
    }

    /// From now on, writes bypass the page cache: they are copied into
    /// block-aligned buffers that a thread of the file's own writes with
    /// `O_DIRECT` while the next fills. For an output written in large
    /// pieces and only committed (the filter's lists and verdicts): the
    /// writing thread no longer pays the kernel's copy into the page cache
    /// and its page allocation, which on `filter --verdicts` is the one
    /// serial cost of the run (README "Filter performance"), and the disk
    /// writes while later chunks are classified. Does nothing for a file
    /// written in place (a stream), after something was written, or where
    /// the file system has no direct I/O; [`PendingFile::file_mut`] ends it
    /// (everything written is then in the file).
    pub fn write_direct(&mut self) {
        if self.in_place() || self.written > 0 || self.direct.is_some() {
            return;
        }
        if let Some(file) = &self.file {
            self.direct = direct::Direct::start(&self.temp_path, file);
        }
    }

    /// Whether writes bypass the page cache ([`PendingFile::write_direct`]).
    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// For a writer that can choose where its bytes lie in memory (see
    /// [`PendingFile::write_placed`]): where in a block of [`BLOCK`] bytes
    /// the next byte written lands, when the file is written past the page
    /// cache; `None` otherwise (then placement gains nothing).
    pub fn lead(&self) -> Option<usize> {
        self.direct.as_ref().map(direct::Direct::lead)
    }

    /// Writes `buf[start..]`, as `write_all` would, without copying it when
    /// it is placed: when the file is written past the page cache, the
    /// [`PendingFile::lead`] bytes before `start` are free (their content
    /// is not written) and `start - lead` is a multiple of [`BLOCK`] in
    /// memory, `buf` itself goes to the file's writer thread and is
    /// replaced by an empty buffer (one written earlier, its memory kept,
    /// or a new one). Otherwise `buf[start..]` is copied and `buf` stays.
    /// Either way the file then holds the same bytes.
    pub fn write_placed(&mut self, buf: &mut Vec<u8>, start: usize) -> io::Result<()> {
        let Some(direct) = &mut self.direct else {
            return self.write_all(&buf[start.min(buf.len())..]);
        };
        let len = buf.len().saturating_sub(start);
        direct.write_placed(buf, start)?;
        self.written += len as u64;
        Ok(())
    }

    /// Ends [`PendingFile::write_direct`]: waits for the direct writes and
    /// writes the tail, leaving the file's cursor at its end.
    fn end_direct(&mut self) -> io::Result<()> {
        let Some(direct) = self.direct.take() else { return Ok(()) };
        let file = self.file.as_mut().ok_or_else(|| io::Error::other("the file was committed"))?;
        let len = direct.finish(file)?;
        io::Seek::seek(file, io::SeekFrom::Start(len))?;
        Ok(())
    }

    /// Counts `len` more bytes written and, once a [`WRITEBACK_STEP`] of them
    /// is waiting, starts their writeback (a file renamed into place only).
    fn wrote(&mut self, len: usize) {
        self.written += len as u64;
        if self.in_place() || self.written - self.writeback_started < WRITEBACK_STEP {
            return;
        }
        if let Some(file) = &self.file {
            start_writeback(file, self.writeback_started, self.written - self.writeback_started);
        }
        self.writeback_started = self.written;
    }

    /// Whether this output is written in place ([`PendingFile::create`]
    /// says which are), rather than renamed into place on commit.
    pub fn in_place(&self) -> bool {
        self.temp_path.as_os_str().is_empty()
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary path the data is written to until the commit (empty
    /// when the destination is written in place).
    pub fn temp_path(&self) -> &Path {
        &self.temp_path
    }

    /// Closes the file and renames it to its final path (replacing any file
    /// there; through a symbolic link, the file it leads to). On failure
    /// the temporary file is removed.
    pub fn commit(mut self) -> Result<(), FilterError> {
        let ended = self.end_direct();
        let failed = |source| FilterError::Output { name: self.path.display().to_string(), source };
        ended.map_err(failed)?;
        let mut file = self.file.take().expect("a pending file is committed once");
        if self.temp_path.as_os_str().is_empty() {
            // Written in place (not a regular file): nothing to rename.
            return file.flush().map_err(failed);
        }
        file.sync_all().map_err(failed)?;
        drop(file);
        std::fs::rename(&self.temp_path, &self.target).map_err(failed)?;
        unregister_pending(&std::mem::take(&mut self.temp_path));
        Ok(())
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file.as_mut().ok_or_else(|| io::Error::other("the file was committed"))
    }

    /// The open file itself (opened for reading too), for a writer that
    /// must seek (the artifact writer fills in its header last) or read back
    /// what it wrote.
    pub fn file_mut(&mut self) -> io::Result<&mut File> {
        self.end_direct()?;
        self.file()
    }
}

/// Where a write to `path` lands: `path` itself, or, when it is a symbolic
/// link, the file at the end of its chain of links (which need not exist:
/// writing through a dangling link creates its target). A chain longer
/// than the system's limit is an error, as opening it would be.
fn link_target(path: &Path) -> io::Result<PathBuf> {
    const MAX_LINKS: usize = 40;
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

impl Write for PendingFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(direct) = &mut self.direct {
            direct.write(bytes)?;
            self.written += bytes.len() as u64;
            return Ok(bytes.len());
        }
        let n = self.file()?.write(bytes)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(direct) = &mut self.direct {
            direct.write(bytes)?;
            self.written += bytes.len() as u64;
            return Ok(());
        }
        self.file()?.write_all(bytes)?;
        self.wrote(bytes.len());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.temp_path.as_os_str().is_empty() {
            self.direct = None;
            self.file = None;
            let _ = std::fs::remove_file(&self.temp_path);
            unregister_pending(&self.temp_path);
        }
    }
}

/// Queues the writeback of `len` bytes of `file` from `offset` without
/// waiting for it. Only a hint: a failure here (a file system without the
/// call) changes nothing, since the commit's sync reports every error.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else { return };
    // SAFETY: the descriptor is open for as long as `file` is borrowed, and
    // the call reads no memory of this process.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

/// The stream `path` names, opened for writing, if it names one (see
/// [`PendingFile::create`]); `None` for a file to write through a rename.
fn open_stream(path: &Path) -> Option<io::Result<File>> {
    if let Some(stream) = standard_stream(path) {
        return Some(stream);
    }
    let in_proc = || {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::canonicalize(dir).is_ok_and(|dir| dir.starts_with("/proc"))
    };
    let not_regular = || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    (in_proc() || not_regular()).then(|| File::options().write(true).open(path))
}

/// A duplicate of this process's standard output or error when `path` is
/// `-` (standard output) or names one of them.
fn standard_stream(path: &Path) -> Option<io::Result<File>> {
    let name = path.to_str()?;
    let fd = match name {
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1" => 1,
        "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2" => 2,
        _ => return None,
    };
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let owned =
            if fd == 1 { io::stdout().as_fd().try_clone_to_owned() } else { io::stderr().as_fd().try_clone_to_owned() };
        Some(owned.map(File::from))
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        None
    }
}

/// The temporary paths of this process's live [`PendingFile`]s (a run has a
/// handful), and whether [`remove_pending_files`] has run.
struct PendingRegistry {
    temp_paths: Vec<PathBuf>,
    closed: bool,
}

static PENDING: Mutex<PendingRegistry> = Mutex::new(PendingRegistry { temp_paths: Vec::new(), closed: false });

/// The registry, even after a panic while it was locked: every update leaves
/// it consistent, so a poisoned lock holds nothing wrong.
fn pending_registry() -> MutexGuard<'static, PendingRegistry> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forgets a temporary path once it was renamed into place or removed. (Done
/// after the rename or removal, so that an interruption in between still
/// finds the file.)
fn unregister_pending(temp_path: &Path) {
    let mut registry = pending_registry();
    if let Some(i) = registry.temp_paths.iter().position(|p| p == temp_path) {
        registry.temp_paths.swap_remove(i);
    }
}

/// Removes the temporary file of every live [`PendingFile`] of this process
/// and returns how many were removed: for a SIGINT or SIGTERM handler to call
/// just before it exits, since destructors do not run then. Best effort: a
/// file that cannot be removed is skipped; it never panics.
///
/// The data written so far is lost (a file open for writing is only
/// unlinked), and from then on [`PendingFile::create`] fails, so that no
/// output started while the process exits is left behind either. Files
/// already committed stay.
pub fn remove_pending_files() -> usize {
    let mut registry = pending_registry();
    registry.closed = true;
    let temp_paths = std::mem::take(&mut registry.temp_paths);
    temp_paths.iter().filter(|temp_path| std::fs::remove_file(temp_path).is_ok()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_testkit::names_in as names;

    #[test]
    fn verdict_fields_are_the_names() {
        for verdict in Verdict::ALL {
            assert_eq!(VERDICT_FIELDS[verdict.index()], format!("{verdict}\t").as_bytes());
            assert!(VERDICT_FIELDS_PADDED[verdict.index()].starts_with(VERDICT_FIELDS[verdict.index()]));
        }
    }

    #[test]
    fn lines_are_appended_whole_at_every_length() {
        let text: Vec<u8> = (0..80u8).map(|i| b'!' + i).collect();
        for len in 0..=text.len() {
            for before in [0, 1, 15, 16, 17] {
                for (field, field_len) in [([0; 16], 0), (VERDICT_FIELDS_PADDED[1], 11), (*b"0123456789abcdef", 16)] {
                    for newline in [false, true] {
                        let mut out = vec![b'_'; before];
                        push_line(&mut out, &field, field_len, &text[..len], newline);
                        let expected = [
                            &vec![b'_'; before][..],
                            &field[..field_len],
                            &text[..len],
                            &b"\n"[..usize::from(newline)],
                        ]
                        .concat();
                        assert_eq!(out, expected, "{len} after {before}, field {field_len}, newline {newline}");
                    }
                }
            }
        }
    }

    /// Deterministic bytes that differ from chunk to chunk, so that a chunk
    /// written twice or at the wrong place shows.
    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    #[test]
    fn writeback_starts_step_by_step_and_the_commit_keeps_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.tsv");
        let mut file = PendingFile::create(&path).unwrap();
        let mut expected = Vec::new();
        let step = WRITEBACK_STEP as usize;
        // Pieces of a third of a step, by write_all and by write: the writeback
        // of a step starts once a whole step is waiting, never before.
        for seed in 0..7u8 {
            let piece = pattern(step / 3 + 1, seed);
            if seed % 2 == 0 {
                file.write_all(&piece).unwrap();
            } else {
                let mut rest = &piece[..];
                while !rest.is_empty() {
                    let n = file.write(rest).unwrap();
                    rest = &rest[n..];
                }
            }
            expected.extend_from_slice(&piece);
            assert_eq!(file.written, expected.len() as u64);
            assert!(file.written - file.writeback_started < WRITEBACK_STEP, "a whole step waits after {seed}");
            assert!(file.writeback_started <= file.written);
        }
        assert_eq!(file.writeback_started, (step / 3 + 1) as u64 * 6, "started after pieces 3 and 6");
        assert!(!path.exists(), "nothing under the final name before the commit");
        file.commit().unwrap();
        assert!(std::fs::read(&path).unwrap() == expected, "the committed file holds every byte in order");
        assert_eq!(names(dir.path()), ["out.tsv"]);
    }

    #[test]
    fn a_file_dropped_after_its_writeback_started_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.tsv");
        let mut file = PendingFile::create(&path).unwrap();
        file.write_all(&pattern(WRITEBACK_STEP as usize * 2, 7)).unwrap();
        assert_eq!(file.writeback_started, WRITEBACK_STEP * 2);
        drop(file);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn direct_writes_keep_every_byte_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.tsv");
        let mut file = PendingFile::create(&path).unwrap();
        file.write_direct();
        let mut expected = Vec::new();
        // Pieces that end a buffer exactly, cross one, span several, and a
        // one-byte tail: every byte must land once, in order.
        let sizes = [direct::BUFFER, 1, direct::BUFFER * 2 + 4095, 4096, 0, 12_345, 1];
        for (seed, &len) in sizes.iter().enumerate() {
            let piece = pattern(len, seed as u8);
            file.write_all(&piece).unwrap();
            expected.extend_from_slice(&piece);
        }
        assert!(!path.exists(), "nothing under the final name before the commit");
        file.commit().unwrap();
        assert!(std::fs::read(&path).unwrap() == expected, "the committed file holds every byte in order");
        assert_eq!(names(dir.path()), ["out.tsv"]);
    }

    #[test]
    fn a_direct_file_opened_again_goes_on_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.tsv");
        let mut file = PendingFile::create(&path).unwrap();
        file.write_direct();
        let first = pattern(direct::BUFFER + 100, 3);
        file.write_all(&first).unwrap();
        file.file_mut().unwrap().write_all(b"after").unwrap();
        assert!(!file.is_direct(), "file_mut ends the direct writes");
        file.write_all(b"!").unwrap();
        file.commit().unwrap();
        assert!(std::fs::read(&path).unwrap() == [&first[..], b"after!"].concat());
    }

    #[test]
    fn a_direct_file_dropped_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.tsv");
        let mut file = PendingFile::create(&path).unwrap();
        file.write_direct();
        file.write_all(&pattern(direct::BUFFER * 3, 5)).unwrap();
        drop(file);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    /// How a piece goes to a [`PendingFile`] in `placed_writes_are_the_bytes_written`.
    #[derive(Clone, Copy, Debug)]
    enum Placement {
        /// `write_all`.
        Copied,
        /// `write_placed` from a buffer laid out for the file's lead.
        Placed,
        /// `write_placed` from a buffer laid out for another lead.
        Misplaced(usize),
        /// `write_placed` with no room before the bytes.
        NoRoom,
    }

    fn placement() -> impl proptest::strategy::Strategy<Value = Placement> {
        use proptest::prelude::*;
        prop_oneof![
            1 => Just(Placement::Copied),
            4 => Just(Placement::Placed),
            1 => (1..BLOCK).prop_map(Placement::Misplaced),
            1 => Just(Placement::NoRoom),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

        /// Any sequence of pieces, copied or handed over placed, misplaced or
        /// without room, of any length (within a block, across blocks, filling
        /// the aligned buffers): the committed file holds every byte once, in
        /// order; a placed piece that reaches a block's end is taken whole
        /// (its buffer comes back empty) when the file is written past the
        /// page cache; and a buffer handed over comes back for reuse.
        #[test]
        fn placed_writes_are_the_bytes_written(
            pieces in proptest::collection::vec(
                (placement(), proptest::prop_oneof![0..BLOCK * 2, 0..direct::BUFFER + BLOCK * 3]),
                0..12,
            ),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("out.tsv");
            let mut file = PendingFile::create(&path).unwrap();
            file.write_direct();
            let direct = file.is_direct();
            let mut expected = Vec::new();
            let mut buf = Vec::new();
            for (seed, &(how, len)) in pieces.iter().enumerate() {
                let piece = pattern(len, seed as u8);
                expected.extend_from_slice(&piece);
                let lead = file.lead().unwrap_or(0);
                let start = match how {
                    Placement::Copied => {
                        file.write_all(&piece).unwrap();
                        continue;
                    }
                    Placement::Placed => place(&mut buf, len, lead),
                    Placement::Misplaced(other) => place(&mut buf, len, (lead + other) % BLOCK),
                    Placement::NoRoom => {
                        buf.clear();
                        0
                    }
                };
                buf.extend_from_slice(&piece);
                file.write_placed(&mut buf, start).unwrap();
                let taken = buf.len() < start + len;
                if let (true, Placement::Placed) = (direct, how) {
                    proptest::prop_assert_eq!(taken, lead + len >= BLOCK, "lead {}, {} bytes", lead, len);
                }
                if taken {
                    proptest::prop_assert!(buf.is_empty());
                }
            }
            proptest::prop_assert!(!path.exists(), "nothing under the final name before the commit");
            file.commit().unwrap();
            proptest::prop_assert!(std::fs::read(&path).unwrap() == expected, "the committed file holds every byte in order");
            proptest::prop_assert_eq!(names(dir.path()), ["out.tsv"]);
        }
    }

    proptest::proptest! {
        /// Chunks finished in any order: a chunk's lead is known exactly when
        /// every chunk before it is finished, and it is where the bytes of
        /// the chunks before it end, from the first chunk's lead on.
        #[test]
        fn leads_are_where_the_chunks_before_end(
            lens in proptest::collection::vec(proptest::array::uniform6(0..3 * BLOCK), 1..12),
            first in proptest::array::uniform6(0..BLOCK),
            order in proptest::collection::vec(0..1000usize, 12),
        ) {
            let leads = Leads::default();
            leads.restart(first);
            let mut ends = vec![first];
            for len in &lens {
                let last = *ends.last().unwrap();
                ends.push(std::array::from_fn(|o| (last[o] + len[o]) % BLOCK));
            }
            // Finish the chunks in the order `order` sorts them into.
            let mut seqs: Vec<usize> = (0..lens.len()).collect();
            seqs.sort_by_key(|&seq| order[seq]);
            let mut done = vec![false; lens.len()];
            for seq in seqs {
                let known = done[..seq].iter().all(|&d| d);
                proptest::prop_assert_eq!(leads.of(seq as u64), known.then_some(ends[seq]));
                leads.finished(seq as u64, lens[seq]);
                done[seq] = true;
            }
            proptest::prop_assert_eq!(leads.of(lens.len() as u64), Some(ends[lens.len()]));
        }
    }

    #[test]
    fn placed_buffers_come_back_for_reuse() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = PendingFile::create(&dir.path().join("out.tsv")).unwrap();
        file.write_direct();
        if !file.is_direct() {
            eprintln!("skipped: no direct I/O on this file system");
            return;
        }
        let mut buf = Vec::new();
        let mut capacities = Vec::new();
        for seed in 0..16u8 {
            // Time for the writer to write the last one and give it back.
            std::thread::sleep(std::time::Duration::from_millis(10));
            let start = place(&mut buf, 3 * BLOCK, file.lead().unwrap());
            buf.extend_from_slice(&pattern(3 * BLOCK - 1, seed));
            file.write_placed(&mut buf, start).unwrap();
            assert!(buf.is_empty(), "piece {seed} was taken whole");
            capacities.push(buf.capacity());
        }
        assert!(capacities.iter().any(|&c| c >= 3 * BLOCK), "written buffers come back: {capacities:?}");
        file.commit().unwrap();
    }

    #[test]
    fn streams_and_started_files_are_not_written_direct() {
        let mut stream = PendingFile::create(Path::new("/dev/null")).unwrap();
        stream.write_direct();
        assert!(!stream.is_direct());
        let dir = tempfile::tempdir().unwrap();
        let mut started = PendingFile::create(&dir.path().join("out.tsv")).unwrap();
        started.write_all(b"x").unwrap();
        started.write_direct();
        assert!(!started.is_direct(), "bytes already written stay where they are");
    }

    #[test]
    fn streams_are_written_in_place_without_writeback() {
        let mut file = PendingFile::create(Path::new("/dev/null")).unwrap();
        assert!(file.in_place());
        file.write_all(&pattern(WRITEBACK_STEP as usize + 1, 1)).unwrap();
        assert_eq!(file.writeback_started, 0);
        file.commit().unwrap();
    }
}
