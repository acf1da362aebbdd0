//! Where the filter's results go: the TSV outputs.
//!
//! The pipeline ([`crate::pipeline`]) classifies and orders; it writes through
//! a [`Sink`], and knows nothing of formats or files. This module holds what
//! the command line and the bindings write through it:
//!
//! - [`Outputs`]: the TSV sink: lists of one verdict's URLs, the verdicts
//!   output (`VERDICT<TAB>URL[<TAB>REASON]`) and matrix rows, each a `Write`.
//!   Lines are formatted on the workers into per-chunk buffers
//!   ([`TsvChunk`]), which the pipeline hands back in input order to be
//!   written while later chunks are classified.
//!
//! Each output is a `Write`; files are the engine's [`PendingFile`]s, which
//! appear under their final names only when the run succeeds.

use crate::pipeline::{ChunkSink, Config, FilterError, Format, Sink};
use robotsieve_core::line::LineProblem;
use robotsieve_core::Verdict;
use robotsieve_engine::PendingFile;

const BLOCK: usize = PendingFile::BLOCK;
use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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
///   become spaces): a [`robotsieve_engine::MatrixClassifier`] gives one
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
/// than the copy on URLs) and a check for room per piece. URLs shorter than 16 bytes are appended piece by piece.
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

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_engine::testing::DIRECT_BUFFER;
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
                (placement(), proptest::prop_oneof![0..BLOCK * 2, 0..DIRECT_BUFFER + BLOCK * 3]),
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
                let piece = robotsieve_testkit::varied_bytes(len, seed as u8);
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
            buf.extend_from_slice(&robotsieve_testkit::varied_bytes(3 * BLOCK - 1, seed));
            file.write_placed(&mut buf, start).unwrap();
            assert!(buf.is_empty(), "piece {seed} was taken whole");
            capacities.push(buf.capacity());
        }
        assert!(capacities.iter().any(|&c| c >= 3 * BLOCK), "written buffers come back: {capacities:?}");
        file.commit().unwrap();
    }
}
