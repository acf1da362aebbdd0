//! The filter pipeline against a sequential model: line splitting, ordering
//! under parallelism, every output, folding of unknown, stats, and the
//! guarantee that a failed run leaves no output file behind.
//!
//! The classifiers here decide from the URL text (its first byte), which is
//! all the pipeline needs: it must never care how a verdict was reached.

use proptest::prelude::*;
use robotsieve_core::line::{self, MAX_LINE};
use robotsieve_core::Verdict;
use robotsieve_engine::ArtifactError;
use robotsieve_engine::PendingFile;
use robotsieve_filter::testing::{PARTITION_MIN_CHUNKS, PARTITION_MIN_ORIGINS};
use robotsieve_filter::Outputs;
use robotsieve_filter::{
    partitions_for, ChunkSink, Classifier, Config, FilterError, Format, Grouping, Input, Pipeline, Progress, Report,
    Sink, Stats,
};
use robotsieve_testkit::names_in;
use std::io::{self, Cursor, Read, Write};
use std::path::{Path, PathBuf};

/// `a…` is allowed, `d…` disallowed, `u…` unknown, anything else invalid.
/// Reasons name the first byte; the scratch counts the URLs it saw.
struct FirstByte;

fn first_byte_verdict(url: &[u8]) -> Verdict {
    match url[0] {
        b'a' => Verdict::Allowed,
        b'd' => Verdict::Disallowed,
        b'u' => Verdict::Unknown,
        _ => Verdict::Invalid,
    }
}

impl Classifier for FirstByte {
    type Scratch = u64;
    type Error = ArtifactError;

    fn classify(&self, url: &[u8], seen: &mut u64, explain: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
        *seen += 1;
        if let Some(reason) = explain {
            reason.extend_from_slice(b"first byte ");
            reason.push(url[0]);
        }
        Ok(first_byte_verdict(url))
    }
}

/// Panics on the URL `boom`, like a classifier with a bug.
struct PanicsOnBoom;

impl Classifier for PanicsOnBoom {
    type Scratch = ();
    type Error = ArtifactError;

    fn classify(&self, url: &[u8], _: &mut (), _: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
        assert!(url != b"boom", "boom");
        Ok(first_byte_verdict(url))
    }
}

/// What a run wrote to every output, with its stats.
#[derive(Debug, PartialEq)]
struct Written {
    lists: [Vec<u8>; 4],
    verdicts: Vec<u8>,
    counts: [u64; 4],
    input_bytes: u64,
}

/// The straightforward model of a run: split on LF, drop one CR, skip
/// blank lines, classify each line in order; a line that is no URL at all
/// ([`line::problem`]) is invalid with its problem as the reason, and
/// outputs hold at most its first `MAX_LINE` bytes.
fn model(data: &[u8], unknown_as: Verdict, explain: bool) -> Written {
    let mut written = Written { lists: Default::default(), verdicts: Vec::new(), counts: [0; 4], input_bytes: 0 };
    written.input_bytes = data.len() as u64;
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.ends_with(b"\n") {
        lines.pop();
    }
    for line in lines {
        let url = line.strip_suffix(b"\r").unwrap_or(line);
        if url.is_empty() {
            continue;
        }
        let problem = line::problem(url);
        let mut verdict = if problem.is_some() { Verdict::Invalid } else { first_byte_verdict(url) };
        if verdict == Verdict::Unknown {
            verdict = unknown_as;
        }
        let url = &url[..url.len().min(MAX_LINE)];
        written.counts[verdict.index()] += 1;
        written.lists[verdict.index()].extend_from_slice(url);
        written.lists[verdict.index()].push(b'\n');
        written.verdicts.extend_from_slice(verdict.name().as_bytes());
        written.verdicts.push(b'\t');
        written.verdicts.extend_from_slice(url);
        if let (true, Some(problem)) = (explain, problem) {
            written.verdicts.extend_from_slice(format!("\t{problem}").as_bytes());
        } else if explain {
            written.verdicts.extend_from_slice(b"\tfirst byte ");
            // The pipeline keeps reasons on their line and in their field.
            written.verdicts.push(if matches!(url[0], b'\t' | b'\r') { b' ' } else { url[0] });
        }
        written.verdicts.push(b'\n');
    }
    written
}

/// How the input reaches the pipeline.
#[derive(Clone, Copy, Debug)]
enum Feed {
    /// A file on disk, memory-mapped.
    Mapped,
    /// The same bytes through a reader that returns at most 7 bytes a call.
    Trickled,
    /// The same bytes through a plain in-memory reader.
    Streamed,
}

const FEEDS: [Feed; 3] = [Feed::Mapped, Feed::Trickled, Feed::Streamed];

/// A reader that returns at most 7 bytes per call.
struct Trickle(Cursor<Vec<u8>>);

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(7);
        self.0.read(&mut buf[..n])
    }
}

fn input_of(data: &[u8], feed: Feed, dir: &Path) -> Input {
    match feed {
        Feed::Mapped => {
            let path = dir.join("urls.txt");
            std::fs::write(&path, data).unwrap();
            Input::open(&path).unwrap()
        }
        Feed::Trickled => Input::from_reader("trickle", Trickle(Cursor::new(data.to_vec()))),
        Feed::Streamed => Input::from_reader("memory", Cursor::new(data.to_vec())),
    }
}

fn config(threads: usize, chunk_size: usize) -> Config {
    Config { threads, chunk_size, ..Config::default() }
}

/// Runs `FirstByte` over `data` with every output requested, in memory.
fn run_all_outputs(data: &[u8], feed: Feed, config: Config) -> (Written, Report<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let mut input = input_of(data, feed, dir.path());
    let mut lists: [Vec<u8>; 4] = Default::default();
    let mut verdicts = Vec::new();
    let [allowed, disallowed, unknown, invalid] = &mut lists;
    let mut outputs = Outputs::new()
        .list(Verdict::Allowed, "allowed", allowed)
        .list(Verdict::Disallowed, "disallowed", disallowed)
        .list(Verdict::Unknown, "unknown", unknown)
        .list(Verdict::Invalid, "invalid", invalid)
        .verdicts("verdicts", &mut verdicts);
    let pipeline = Pipeline::new(config).unwrap();
    let report = pipeline.run(&FirstByte, &mut input, &mut outputs, None).unwrap();
    drop(outputs);
    let Stats { counts, input_bytes, .. } = report.stats;
    (Written { lists, verdicts, counts, input_bytes }, report)
}

/// Checks a run of `data` against the model for every feed and a few chunk sizes.
fn check_against_model(data: &[u8], threads: usize, chunk_sizes: &[usize]) {
    let expected = model(data, Verdict::Unknown, false);
    for feed in FEEDS {
        for &chunk_size in chunk_sizes {
            let (written, _) = run_all_outputs(data, feed, config(threads, chunk_size));
            assert_eq!(written, expected, "{feed:?}, chunk size {chunk_size}, {threads} threads");
        }
    }
}

#[test]
fn crlf_lines_lose_only_their_line_end() {
    let data = b"a1\r\nd2\r\nu3\r\nx4\r\n";
    check_against_model(data, 2, &[1, 3, 1 << 20]);
    let (written, _) = run_all_outputs(data, Feed::Mapped, Config::default());
    assert_eq!(written.lists[Verdict::Allowed.index()], b"a1\n");
    assert_eq!(written.verdicts, b"allowed\ta1\ndisallowed\td2\nunknown\tu3\ninvalid\tx4\n");
}

#[test]
fn blank_lines_are_skipped_and_nothing_else_is() {
    let data = b"\n\na1\n\r\n\n d2\n\t\nu3\n\n";
    check_against_model(data, 2, &[1, 2, 5, 64]);
    let (written, _) = run_all_outputs(data, Feed::Mapped, Config::default());
    // A line of white space is not blank: it is a URL (an invalid one).
    assert_eq!(written.counts, [1, 0, 1, 2]);
    assert_eq!(written.lists[Verdict::Invalid.index()], b" d2\n\t\n");
}

#[test]
fn a_final_line_without_newline_counts() {
    check_against_model(b"a1\nd2", 2, &[1, 2, 3, 100]);
    check_against_model(b"a1\r\nd2\r", 2, &[1, 4, 100]);
    let (written, _) = run_all_outputs(b"a1\nd2", Feed::Trickled, config(2, 1));
    assert_eq!(written.lists[Verdict::Disallowed.index()], b"d2\n");
}

#[test]
fn a_line_longer_than_the_limit_is_one_invalid_url_cut_in_the_outputs() {
    let line_of = |len: usize| {
        let mut line = vec![b'd'];
        line.resize(len, b'x');
        line
    };
    // Past the limit: 1 MiB, one byte, and one byte with a CRLF (whose CR is
    // no part of the line); at the limit, with CRLF: a URL like any other.
    let (long, just_over, at_limit) = (line_of(1 << 20), line_of(MAX_LINE + 1), line_of(MAX_LINE));
    let mut data = b"a1\n".to_vec();
    for (line, end) in [(&long, &b"\r\n"[..]), (&just_over, b"\n"), (&just_over, b"\r\n"), (&at_limit, b"\r\n")] {
        data.extend_from_slice(line);
        data.extend_from_slice(end);
        data.extend_from_slice(b"u2\n");
    }
    data.extend_from_slice(&long);
    check_against_model(&data, 2, &[1, 4096, MAX_LINE, 1 << 20, 1 << 22]);
    for feed in FEEDS {
        let (written, report) = run_all_outputs(&data, feed, config(2, 4096));
        assert_eq!(written.counts, [1, 1, 4, 4], "{feed:?}");
        let invalid = &written.lists[Verdict::Invalid.index()];
        assert_eq!(invalid.len(), 4 * (MAX_LINE + 1), "{feed:?}: each cut to the limit");
        assert_eq!(report.stats.input_bytes, data.len() as u64, "{feed:?}: skipped bytes are read bytes");
    }
}

#[test]
fn lines_that_are_no_text_are_invalid_with_their_problem_as_reason() {
    let data = b"a1\na\x002\r\nd\r3\nd\xff4\na\x1b5\nu\xc3\xa96\r\na\t7\n";
    check_against_model(data, 2, &[1, 3, 64]);
    let expected = model(data, Verdict::Unknown, true);
    for feed in FEEDS {
        let dir = tempfile::tempdir().unwrap();
        let mut input = input_of(data, feed, dir.path());
        let mut verdicts = Vec::new();
        let mut outputs = Outputs::new().verdicts("verdicts", &mut verdicts);
        let pipeline = Pipeline::new(Config { explain: true, ..config(2, 5) }).unwrap();
        let report = pipeline.run(&FirstByte, &mut input, &mut outputs, None).unwrap();
        drop(outputs);
        assert_eq!(verdicts, expected.verdicts, "{feed:?}");
        assert_eq!(report.stats.counts, [2, 0, 1, 4]);
        // The classifier never saw the lines that are no text.
        assert_eq!(report.scratches.iter().sum::<u64>(), 3);
    }
    let text = String::from_utf8_lossy(&expected.verdicts).into_owned();
    assert!(text.contains("invalid\ta\x002\tNUL byte at byte 2: binary data, not a URL\n"), "{text}");
    assert!(text.contains("carriage return at byte 2: lines end with LF or CRLF, not CR alone"), "{text}");
    assert!(text.contains("not UTF-8 from byte 2 on"), "{text}");
    assert!(text.contains("control character 0x1b at byte 2"), "{text}");
}

#[test]
fn empty_input_gives_empty_outputs() {
    for data in [&b""[..], b"\n", b"\r\n\r\n\n"] {
        for feed in FEEDS {
            let (written, report) = run_all_outputs(data, feed, config(2, 1));
            assert_eq!(written, Written { input_bytes: data.len() as u64, ..model(b"", Verdict::Unknown, false) });
            assert_eq!(report.stats.urls(), 0);
        }
    }
}

/// Many distinct URLs, so any reordering shows.
fn numbered_urls(count: usize) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..count {
        let first = [b'a', b'd', b'u', b'x'][i % 7 % 4];
        data.push(first);
        data.extend_from_slice(format!("/{i}/{}", "p".repeat(i % 13)).as_bytes());
        data.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
    }
    data
}

#[test]
fn outputs_keep_input_order_with_many_threads_and_tiny_chunks() {
    let data = numbered_urls(20_000);
    check_against_model(&data, 8, &[1, 17, 1000]);
}

#[test]
fn an_input_far_larger_than_the_chunk_keeps_a_bounded_window() {
    let data = numbered_urls(100_000);
    assert!(data.len() > 1_000 * 1024);
    let threads = 3;
    let chunks_per_thread = 2;
    for feed in FEEDS {
        let config = Config { threads, chunk_size: 1024, chunks_per_thread, ..Config::default() };
        let (written, report) = run_all_outputs(&data, feed, config);
        assert_eq!(written, model(&data, Verdict::Unknown, false), "{feed:?}");
        // One scratch per chunk in flight: at most the window, however long the input.
        assert!(report.scratches.len() <= threads * chunks_per_thread, "{} scratches", report.scratches.len());
        assert_eq!(report.scratches.iter().sum::<u64>(), report.stats.urls(), "every URL went through a scratch");
    }
}

/// The resident bytes of the mappings of `path` in this process (Linux:
/// the `Rss:` lines of /proc/self/smaps).
#[cfg(target_os = "linux")]
fn resident_bytes_of(path: &Path) -> usize {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let mut inside = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            inside = line.ends_with(name);
        } else if inside && first == "Rss:" {
            kib += line.split_whitespace().nth(1).unwrap().parse::<usize>().unwrap();
        }
    }
    kib * 1024
}

/// A mapped input's pages leave the resident set once their chunks are
/// written, so that a run's memory does not grow with its input.
#[cfg(target_os = "linux")]
#[test]
fn a_mapped_input_is_not_kept_resident() {
    let data = numbered_urls(3_000_000);
    assert!(data.len() > 40 << 20, "{} bytes", data.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("urls.txt");
    std::fs::write(&path, &data).unwrap();
    let mut input = Input::open(&path).unwrap();
    // Every page read, as a run reads them.
    let sum = input.mapped_bytes().unwrap().iter().step_by(4096).fold(0u8, |a, &b| a ^ b);
    std::hint::black_box(sum);
    assert!(resident_bytes_of(&path) > 40 << 20, "the test must see the pages it read");
    let mut counts = Vec::new();
    let mut outputs = Outputs::new().verdicts("verdicts", &mut counts);
    let pipeline = Pipeline::new(config(2, 64 << 10)).unwrap();
    let report = pipeline.run(&FirstByte, &mut input, &mut outputs, None).unwrap();
    drop(outputs);
    assert_eq!(report.stats.urls(), 3_000_000);
    let resident = resident_bytes_of(&path);
    assert!(resident < 12 << 20, "{resident} bytes of the {}-byte input still resident", data.len());
    // The mapping itself is intact: its bytes read back as written.
    assert_eq!(input.mapped_bytes().unwrap(), &data[..]);
}

#[test]
fn explain_appends_the_reason_to_the_verdicts_output_only() {
    let data = numbered_urls(3_000);
    let expected = model(&data, Verdict::Unknown, true);
    for feed in FEEDS {
        let config = Config { explain: true, ..config(2, 100) };
        let (written, _) = run_all_outputs(&data, feed, config);
        assert_eq!(written, expected, "{feed:?}");
    }
}

/// Gives reasons with tabs and newlines, which must not break the lines.
struct UntidyReasons;

impl Classifier for UntidyReasons {
    type Scratch = ();
    type Error = ArtifactError;

    fn classify(&self, _: &[u8], _: &mut (), explain: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
        if let Some(reason) = explain {
            reason.extend_from_slice(b"line\t4:\r\ndisallow");
        }
        Ok(Verdict::Disallowed)
    }
}

#[test]
fn reasons_never_add_fields_or_lines() {
    let pipeline = Pipeline::new(Config { explain: true, ..Config::default() }).unwrap();
    let mut verdicts = Vec::new();
    let mut outputs = Outputs::new().verdicts("verdicts", &mut verdicts);
    let mut input = Input::from_reader("memory", Cursor::new(b"a1\nd2\n".to_vec()));
    pipeline.run(&UntidyReasons, &mut input, &mut outputs, None).unwrap();
    drop(outputs);
    assert_eq!(verdicts, b"disallowed\ta1\tline 4:  disallow\ndisallowed\td2\tline 4:  disallow\n");
}

#[test]
fn unknown_as_folds_unknown_into_lists_verdicts_and_counts() {
    let data = numbered_urls(5_000);
    for unknown_as in [Verdict::Allowed, Verdict::Disallowed] {
        let expected = model(&data, unknown_as, false);
        assert!(expected.counts[Verdict::Unknown.index()] == 0 && expected.counts[unknown_as.index()] > 0);
        let config = Config { unknown_as, ..config(2, 256) };
        let (written, _) = run_all_outputs(&data, Feed::Mapped, config);
        assert_eq!(written, expected, "--unknown-as {unknown_as}");
        assert!(!written.verdicts.starts_with(b"unknown") && !contains(&written.verdicts, b"\nunknown\t"));
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn stats_count_verdicts_bytes_and_threads() {
    let data = b"a1\nd2\r\n\nd3\nu4\nx5\nx6\nx7";
    let pipeline = Pipeline::new(config(2, 4)).unwrap();
    let progress = Progress::new();
    let mut input = Input::from_reader("memory", Cursor::new(data.to_vec()));
    let report = pipeline.run(&FirstByte, &mut input, &mut Outputs::new(), Some(&progress)).unwrap();
    let stats = &report.stats;
    assert_eq!(stats.counts, [1, 2, 1, 3]);
    assert_eq!(stats.count(Verdict::Invalid), 3);
    assert_eq!(stats.urls(), 7);
    assert_eq!(stats.input_bytes, data.len() as u64);
    assert_eq!(stats.threads, 2);
    assert!(stats.urls_per_second() > 0.0 && stats.bytes_per_second() > stats.urls_per_second());
    assert_eq!((progress.urls(), progress.bytes()), (7, data.len() as u64));
}

#[test]
fn outputs_nobody_asked_for_are_not_written() {
    let data = numbered_urls(1_000);
    let expected = model(&data, Verdict::Unknown, false);
    let pipeline = Pipeline::new(config(2, 64)).unwrap();
    let mut disallowed = Vec::new();
    let mut outputs = Outputs::new().list(Verdict::Disallowed, "disallowed", &mut disallowed);
    let mut input = Input::from_reader("memory", Cursor::new(data.clone()));
    let report = pipeline.run(&FirstByte, &mut input, &mut outputs, None).unwrap();
    drop(outputs);
    assert_eq!(disallowed, expected.lists[Verdict::Disallowed.index()]);
    assert_eq!(report.stats.counts, expected.counts);
}

/// Pending files for the four lists and the verdicts, in `dir`.
fn pending_files(dir: &Path) -> Vec<PendingFile> {
    ["allowed.txt", "disallowed.txt", "unknown.txt", "invalid.txt", "verdicts.tsv"]
        .iter()
        .map(|name| PendingFile::create(&dir.join(name)).unwrap())
        .collect()
}

fn outputs_of(files: &mut [PendingFile]) -> Outputs<'_> {
    let [allowed, disallowed, unknown, invalid, verdicts] = files else { panic!("five files") };
    Outputs::new()
        .list(Verdict::Allowed, "allowed.txt", allowed)
        .list(Verdict::Disallowed, "disallowed.txt", disallowed)
        .list(Verdict::Unknown, "unknown.txt", unknown)
        .list(Verdict::Invalid, "invalid.txt", invalid)
        .verdicts("verdicts.tsv", verdicts)
}

#[test]
fn output_files_appear_with_their_content_only_on_commit() {
    let dir = tempfile::tempdir().unwrap();
    let data = numbered_urls(10_000);
    std::fs::write(dir.path().join("urls.txt"), &data).unwrap();
    let expected = model(&data, Verdict::Unknown, false);
    // A stale file under a final name is replaced, not appended to.
    std::fs::write(dir.path().join("allowed.txt"), b"stale\n").unwrap();

    let mut files = pending_files(dir.path());
    let mut input = Input::open(&dir.path().join("urls.txt")).unwrap();
    let pipeline = Pipeline::new(config(2, 1000)).unwrap();
    pipeline.run(&FirstByte, &mut input, &mut outputs_of(&mut files), None).unwrap();
    assert_eq!(std::fs::read(dir.path().join("allowed.txt")).unwrap(), b"stale\n", "not before the commit");
    assert!(!dir.path().join("verdicts.tsv").exists(), "not before the commit");
    for file in files {
        file.commit().unwrap();
    }
    assert_eq!(
        names_in(dir.path()),
        ["allowed.txt", "disallowed.txt", "invalid.txt", "unknown.txt", "urls.txt", "verdicts.tsv"]
    );
    for verdict in Verdict::ALL {
        let content = std::fs::read(dir.path().join(format!("{verdict}.txt"))).unwrap();
        assert_eq!(content, expected.lists[verdict.index()], "{verdict}.txt");
    }
    assert_eq!(std::fs::read(dir.path().join("verdicts.tsv")).unwrap(), expected.verdicts);
}

#[test]
fn a_panicking_classifier_leaves_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = numbered_urls(50_000);
    data.extend_from_slice(b"boom\n");
    data.extend_from_slice(&numbered_urls(50_000));
    std::fs::write(dir.path().join("urls.txt"), &data).unwrap();

    let mut files = pending_files(dir.path());
    assert_eq!(names_in(dir.path()).len(), 6, "five temporary files and the input");
    let mut input = Input::open(&dir.path().join("urls.txt")).unwrap();
    let pipeline = Pipeline::new(config(2, 1000)).unwrap();
    let error = pipeline.run(&PanicsOnBoom, &mut input, &mut outputs_of(&mut files), None).unwrap_err();
    assert!(matches!(&error, FilterError::ClassifierPanicked { message } if message == "boom"), "{error}");
    // Some chunks were written before the failure: the temporary files hold them.
    assert!(files.iter().any(|f| std::fs::metadata(f.temp_path()).unwrap().len() > 0));
    drop(files);
    assert_eq!(names_in(dir.path()), ["urls.txt"]);
}

/// Passes writes to `inner` until `budget` bytes have gone through, then fails.
struct FailsAfter<W> {
    inner: W,
    budget: usize,
}

impl<W: Write> Write for FailsAfter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if bytes.len() > self.budget {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "no space left on device"));
        }
        self.budget -= bytes.len();
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[test]
fn an_output_error_mid_run_names_the_output_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = numbered_urls(50_000);
    std::fs::write(dir.path().join("urls.txt"), &data).unwrap();

    let mut allowed = PendingFile::create(&dir.path().join("allowed.txt")).unwrap();
    let mut verdicts =
        FailsAfter { inner: PendingFile::create(&dir.path().join("verdicts.tsv")).unwrap(), budget: 100_000 };
    let mut outputs =
        Outputs::new().list(Verdict::Allowed, "allowed.txt", &mut allowed).verdicts("out/verdicts.tsv", &mut verdicts);
    let mut input = Input::open(&dir.path().join("urls.txt")).unwrap();
    let pipeline = Pipeline::new(config(2, 1000)).unwrap();
    let error = pipeline.run(&FirstByte, &mut input, &mut outputs, None).unwrap_err();
    drop(outputs);
    assert!(matches!(&error, FilterError::Output { name, .. } if name == "out/verdicts.tsv"), "{error:?}");
    assert!(error.to_string().starts_with("out/verdicts.tsv: "), "{error}");
    assert!(std::fs::metadata(verdicts.inner.temp_path()).unwrap().len() > 0, "written up to the failure");
    drop((allowed, verdicts));
    assert_eq!(names_in(dir.path()), ["urls.txt"]);
}

#[test]
fn an_unreadable_input_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let error = Input::open(&missing).err().expect("a missing file is an error");
    assert!(matches!(&error, FilterError::Input { name, .. } if Path::new(name) == missing));
    assert!(error.to_string().contains("missing.txt"), "{error}");

    let error = Input::open(dir.path()).err().expect("a directory is an error");
    assert!(error.to_string().contains(&*dir.path().to_string_lossy()), "{error}");
}

/// Yields `data`, then fails.
struct FailsAtEnd(Cursor<Vec<u8>>);

impl Read for FailsAtEnd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf)? {
            0 => Err(io::Error::new(io::ErrorKind::InvalidData, "corrupt gzip stream")),
            n => Ok(n),
        }
    }
}

#[test]
fn a_read_error_mid_stream_names_the_input() {
    let data = numbered_urls(20_000);
    let pipeline = Pipeline::new(config(2, 1000)).unwrap();
    let mut sink = Vec::new();
    let mut outputs = Outputs::new().verdicts("verdicts", &mut sink);
    let mut input = Input::from_reader("frontier.txt.gz", FailsAtEnd(Cursor::new(data)));
    let error = pipeline.run(&FirstByte, &mut input, &mut outputs, None).unwrap_err();
    assert_eq!(error.to_string(), "frontier.txt.gz: cannot read: corrupt gzip stream");
}

#[test]
fn a_pending_file_dropped_without_commit_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let final_path: PathBuf = dir.path().join("out.txt");
    let mut file = PendingFile::create(&final_path).unwrap();
    file.write_all(b"partial").unwrap();
    assert!(file.temp_path().exists() && file.temp_path().parent() == final_path.parent());
    drop(file);
    assert!(names_in(dir.path()).is_empty());

    let error = PendingFile::create(&dir.path().join("no/such/dir/out.txt")).err().expect("no directory");
    assert!(error.to_string().contains("no/such/dir/out.txt"), "{error}");
}

#[test]
fn a_pipeline_runs_many_inputs() {
    let pipeline = Pipeline::new(config(2, 8)).unwrap();
    for count in [0, 1, 10, 1000] {
        let data = numbered_urls(count);
        let mut input = Input::from_reader("memory", Cursor::new(data.clone()));
        let report = pipeline.run(&FirstByte, &mut input, &mut Outputs::new(), None).unwrap();
        assert_eq!(report.stats.counts, model(&data, Verdict::Unknown, false).counts);
    }
}

fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"\r".to_vec()),
        proptest::collection::vec(
            prop_oneof![Just(b'a'), Just(b'd'), Just(b'u'), Just(b'x'), Just(b'\r'), any::<u8>()],
            1..40
        )
        .prop_map(|mut bytes| {
            bytes.retain(|&b| b != b'\n');
            bytes
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any input, any chunk size, any thread count, any feed: the model's outputs.
    #[test]
    fn any_run_agrees_with_the_sequential_model(
        lines in proptest::collection::vec((line_strategy(), any::<bool>()), 0..60),
        final_newline in any::<bool>(),
        chunk_size in 1usize..64,
        threads in 1usize..5,
        chunks_per_thread in 1usize..4,
        feed in prop_oneof![Just(Feed::Mapped), Just(Feed::Trickled), Just(Feed::Streamed)],
        explain in any::<bool>(),
    ) {
        let mut data = Vec::new();
        for (i, (line, crlf)) in lines.iter().enumerate() {
            data.extend_from_slice(line);
            if i + 1 < lines.len() || final_newline {
                data.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        let config = Config { threads, chunk_size, chunks_per_thread, explain, unknown_as: Verdict::Unknown, ..Config::default() };
        let (written, _) = run_all_outputs(&data, feed, config);
        prop_assert_eq!(written, model(&data, Verdict::Unknown, explain));
    }
}

/// URLs of 20 to 90 bytes whose first byte gives the verdict (`FirstByte`),
/// some of them lines that are no text, some blank: enough bytes a chunk to
/// fill blocks of a file written past the page cache.
fn url_lines_strategy() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        (
            prop_oneof![Just(b'a'), Just(b'd'), Just(b'u'), Just(b'x')],
            10..80usize,
            prop_oneof![8 => Just(b"\n".as_slice()), 1 => Just(b"\r\n".as_slice()), 1 => Just(b"\x01\n".as_slice()), 1 => Just(b"\n\n".as_slice())],
        ),
        0..3_000,
    )
    .prop_map(|lines| {
        let mut data = Vec::new();
        for (i, (first, len, end)) in lines.into_iter().enumerate() {
            data.push(first);
            data.extend_from_slice(format!("://h{}.example/", i % 97).as_bytes());
            data.extend(std::iter::repeat_n(b'p', len));
            data.extend_from_slice(end);
        }
        data
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Output files written past the page cache, each chunk formatted where
    /// its bytes lie in the file (`Outputs::list_file`), hold what the
    /// in-memory outputs hold, at every chunk size and thread count, with
    /// and without reasons (which grow a chunk's buffer past its room).
    #[test]
    fn placed_output_files_hold_the_models_bytes(
        data in url_lines_strategy(),
        chunk_size in prop_oneof![1usize..64, 64usize..40_000],
        threads in 1usize..4,
        explain in any::<bool>(),
        feed in prop_oneof![Just(Feed::Mapped), Just(Feed::Streamed)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut input = input_of(&data, feed, dir.path());
        let mut files = pending_files(dir.path());
        for file in &mut files {
            file.write_direct();
        }
        let [allowed, disallowed, unknown, invalid, verdicts] = &mut files[..] else { panic!("five files") };
        let mut outputs = Outputs::new()
            .list_file(Verdict::Allowed, "allowed.txt", allowed)
            .list_file(Verdict::Disallowed, "disallowed.txt", disallowed)
            .list_file(Verdict::Unknown, "unknown.txt", unknown)
            .list_file(Verdict::Invalid, "invalid.txt", invalid)
            .verdicts_file("verdicts.tsv", verdicts);
        let config = Config { threads, chunk_size, explain, ..Config::default() };
        let report = Pipeline::new(config).unwrap().run(&FirstByte, &mut input, &mut outputs, None).unwrap();
        drop(outputs);
        for file in files {
            file.commit().unwrap();
        }
        let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
        let written = Written {
            lists: [read("allowed.txt"), read("disallowed.txt"), read("unknown.txt"), read("invalid.txt")],
            verdicts: read("verdicts.tsv"),
            counts: report.stats.counts,
            input_bytes: report.stats.input_bytes,
        };
        prop_assert!(written == model(&data, Verdict::Unknown, explain), "{} bytes, chunk size {}, {} threads", data.len(), chunk_size, threads);
    }
}

/// An output that is not a regular file (here `/dev/null`) is written in
/// place: renaming a temporary file over it would replace the device.
#[cfg(unix)]
#[test]
fn outputs_to_devices_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let null = Path::new("/dev/null");
    if !std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        eprintln!("skipped: no /dev/null character device here");
        return;
    }
    let mut pending = PendingFile::create(null).unwrap();
    assert!(pending.temp_path().as_os_str().is_empty(), "no temporary file for a device");
    std::io::Write::write_all(&mut pending, b"allowed\thttps://a.example/\n").unwrap();
    pending.commit().unwrap();
    assert!(std::fs::metadata(null).unwrap().file_type().is_char_device(), "/dev/null is still a device");
}

/// A sink of no text format: every URL's verdict as a value, in the order
/// the pipeline wrote the chunks, and how many chunks it wrote.
#[derive(Default)]
struct Collected {
    verdicts: Vec<(Vec<u8>, Verdict)>,
    chunks: usize,
    finished: bool,
}

/// [`Collected`]'s format: the pairs of a chunk.
struct Pairs;

impl Sink for Collected {
    type Format = Pairs;

    fn format(&self, _: &Config) -> Pairs {
        Pairs
    }
}

impl ChunkSink for Collected {
    type Chunk = Vec<(Vec<u8>, Verdict)>;

    fn write(&mut self, chunk: &Self::Chunk) -> Result<(), FilterError> {
        assert!(!self.finished, "a chunk after finish");
        self.verdicts.extend_from_slice(chunk);
        self.chunks += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        self.finished = true;
        Ok(())
    }
}

impl Format for Pairs {
    type Chunk = Vec<(Vec<u8>, Verdict)>;

    fn wants_reasons(&self) -> bool {
        false
    }

    fn start(&self, _: &mut Self::Chunk, _: usize) {}

    fn record(&self, chunk: &mut Self::Chunk, url: &[u8], verdict: Verdict, reason: &[u8]) {
        assert!(reason.is_empty(), "a reason nobody asked for");
        chunk.push((url.to_vec(), verdict));
    }

    fn record_bad_line(&self, chunk: &mut Self::Chunk, line: &[u8], _: line::LineProblem) {
        chunk.push((line.to_vec(), Verdict::Invalid));
    }

    fn reset(&self, chunk: &mut Self::Chunk, _: usize) {
        chunk.clear();
    }
}

#[test]
fn any_sink_gets_every_verdict_in_input_order() {
    let mut data = numbered_urls(5_000);
    data.extend_from_slice(b"bin\0ary\n\nd/last");
    let expected = model(&data, Verdict::Disallowed, false);
    for feed in FEEDS {
        let dir = tempfile::tempdir().unwrap();
        let mut input = input_of(&data, feed, dir.path());
        let mut sink = Collected::default();
        let config = Config { unknown_as: Verdict::Disallowed, ..config(4, 100) };
        let report = Pipeline::new(config).unwrap().run(&FirstByte, &mut input, &mut sink, None).unwrap();
        assert!(sink.finished && sink.chunks > 10, "{feed:?}: {} chunks", sink.chunks);
        // The verdicts output of the model, rebuilt from the pairs.
        let mut verdicts = Vec::new();
        for (url, verdict) in &sink.verdicts {
            verdicts.extend_from_slice(format!("{verdict}\t").as_bytes());
            verdicts.extend_from_slice(url);
            verdicts.push(b'\n');
        }
        assert_eq!(verdicts, expected.verdicts, "{feed:?}");
        assert_eq!(report.stats.counts, expected.counts, "{feed:?}");
    }
}

/// A frontier of many hosts in random order, with every kind of line the
/// pipeline must keep apart: unknown and invalid URLs, lines that are no
/// text, blank lines, CRLF, a line over the limit, and a last line without
/// a newline.
fn mixed_frontier(urls: usize) -> Vec<u8> {
    let mut data = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in 0..urls {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let kind = b"aduxx"[(state % 5) as usize];
        let host = (state >> 8) % 3000;
        match i % 97 {
            0 => data.extend_from_slice(b"\r\n"),
            1 => data.extend_from_slice(format!("a://h{host}.example/bin\0ary\n").as_bytes()),
            2 => data.extend_from_slice(b"d:no authority\n"),
            3 => data.extend_from_slice(b"u\xff\n"),
            _ => {}
        }
        if i == urls / 2 {
            data.push(b'd');
            data.resize(data.len() + MAX_LINE + 10, b'x');
            data.push(b'\n');
        }
        let end: &[u8] = if i % 3 == 0 { b"\r\n" } else { b"\n" };
        data.extend_from_slice(format!("{}://h{host}.example/p{i}", kind as char).as_bytes());
        data.extend_from_slice(end);
    }
    data.extend_from_slice(b"d://last.example/no-newline");
    data
}

#[test]
fn the_partitioned_form_writes_what_the_windowed_path_writes() {
    let data = mixed_frontier(20_000);
    let expected = model(&data, Verdict::Unknown, false);
    for threads in [1, 2] {
        let windowed = run_all_outputs(&data, Feed::Mapped, config(threads, 4096));
        assert_eq!(windowed.0, expected, "windowed, {threads} threads");
        for partitions in [1, 7, 64, 1024, 8192] {
            let temp = tempfile::tempdir().unwrap();
            let partitioned = Config {
                grouping: Grouping::Partitioned { partitions },
                temp_dir: Some(temp.path().to_path_buf()),
                ..config(threads, 4096)
            };
            let (written, report) = run_all_outputs(&data, Feed::Mapped, partitioned);
            assert_eq!(written, expected, "{partitions} partitions, {threads} threads");
            // Each URL reached the classifier once (the model's count of
            // URLs that are text), on at most one scratch per worker.
            let seen: u64 = report.scratches.iter().sum();
            assert_eq!(seen, windowed.1.scratches.iter().sum::<u64>(), "{partitions} partitions");
            assert!(report.scratches.len() <= threads, "{} scratches", report.scratches.len());
            assert!(names_in(temp.path()).is_empty(), "temporary files left: {:?}", names_in(temp.path()));
        }
    }
}

#[test]
fn the_partitioned_form_counts_what_the_windowed_path_counts_when_it_writes_nothing() {
    // No outputs: the partitioned form counts its verdict file instead of
    // walking the lines again (pass 3), and pass 1 counts the lines that
    // are no URL. Its figures and progress must be the windowed path's.
    let data = mixed_frontier(20_000);
    for unknown_as in [Verdict::Unknown, Verdict::Allowed, Verdict::Disallowed] {
        let expected = model(&data, unknown_as, false);
        for threads in [1, 2] {
            for partitions in [1, 7, 1024] {
                let temp = tempfile::tempdir().unwrap();
                let dir = tempfile::tempdir().unwrap();
                let mut input = input_of(&data, Feed::Mapped, dir.path());
                let partitioned = Config {
                    grouping: Grouping::Partitioned { partitions },
                    temp_dir: Some(temp.path().to_path_buf()),
                    unknown_as,
                    ..config(threads, 4096)
                };
                let progress = Progress::new();
                let pipeline = Pipeline::new(partitioned).unwrap();
                let report = pipeline.run(&FirstByte, &mut input, &mut Outputs::new(), Some(&progress)).unwrap();
                let what = format!("{partitions} partitions, {threads} threads, unknown as {unknown_as:?}");
                assert_eq!(report.stats.counts, expected.counts, "{what}");
                assert_eq!(report.stats.input_bytes, expected.input_bytes, "{what}");
                assert_eq!(progress.urls(), report.stats.urls(), "{what}");
                assert_eq!(progress.bytes(), expected.input_bytes, "{what}");
                // Each URL that is text classified once, on at most one scratch per worker.
                let urls_seen: u64 = report.scratches.iter().sum();
                let bad_lines = data.split(|&b| b == b'\n').filter(|line| {
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    !line.is_empty() && line::problem(line).is_some()
                });
                assert_eq!(urls_seen, report.stats.urls() - bad_lines.count() as u64, "{what}");
                assert!(names_in(temp.path()).is_empty(), "temporary files left: {:?}", names_in(temp.path()));
            }
        }
    }
}

#[test]
fn auto_grouping_partitions_only_large_mapped_inputs_over_many_origins() {
    // A classifier that counts its batches: the partitioned form hands over
    // blocks of partitions, the windowed path chunks.
    struct Batches;
    impl Classifier for Batches {
        type Scratch = Vec<usize>;
        type Error = ArtifactError;
        fn classify(&self, url: &[u8], _: &mut Vec<usize>, _: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
            Ok(first_byte_verdict(url))
        }
        fn classify_batch(
            &self,
            urls: &[&[u8]],
            sizes: &mut Vec<usize>,
            verdicts: &mut [Verdict],
            _: Option<&mut robotsieve_filter::Reasons>,
        ) -> Result<(), ArtifactError> {
            sizes.push(urls.len());
            for (url, verdict) in urls.iter().zip(verdicts) {
                *verdict = first_byte_verdict(url);
            }
            Ok(())
        }
    }
    let data = mixed_frontier(20_000);
    let chunk_size = data.len() / (PARTITION_MIN_CHUNKS * 3);
    let batches = |grouping: Grouping, feed: Feed| {
        let dir = tempfile::tempdir().unwrap();
        let mut input = input_of(&data, feed, dir.path());
        let run_config = Config { grouping, ..config(2, chunk_size) };
        let report = Pipeline::new(run_config).unwrap().run(&Batches, &mut input, &mut Outputs::new(), None).unwrap();
        report.scratches.iter().map(Vec::len).sum::<usize>()
    };
    let chunks = batches(Grouping::Windowed, Feed::Mapped);
    assert!(chunks >= PARTITION_MIN_CHUNKS, "{chunks} chunks");
    // Many origins, a mapped input of enough chunks: partitions of one block each.
    let partitions = partitions_for(PARTITION_MIN_ORIGINS, data.len());
    assert!(partitions > 1);
    assert_eq!(batches(Grouping::Auto { origins: PARTITION_MIN_ORIGINS }, Feed::Mapped), partitions);
    // Too few origins, or a stream: windowed.
    assert_eq!(batches(Grouping::Auto { origins: PARTITION_MIN_ORIGINS - 1 }, Feed::Mapped), chunks);
    assert_eq!(batches(Grouping::Auto { origins: PARTITION_MIN_ORIGINS }, Feed::Streamed), chunks);
    assert_eq!(batches(Grouping::Partitioned { partitions: 2 }, Feed::Streamed), chunks);
    // The same URLs sorted by host: origins repeat within every window, windowed.
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    lines.sort_by_key(|line| line.split(|&b| b == b'/').nth(2).map(<[u8]>::to_vec));
    let sorted = lines.join(&b'\n');
    let dir = tempfile::tempdir().unwrap();
    let mut input = input_of(&sorted, Feed::Mapped, dir.path());
    let auto = Config { grouping: Grouping::Auto { origins: PARTITION_MIN_ORIGINS }, ..config(2, chunk_size) };
    let report = Pipeline::new(auto).unwrap().run(&Batches, &mut input, &mut Outputs::new(), None).unwrap();
    assert!(report.scratches.iter().map(Vec::len).sum::<usize>() >= PARTITION_MIN_CHUNKS, "windowed");
}

#[test]
fn the_partitioned_form_fails_like_the_windowed_path_and_leaves_nothing() {
    let mut data = mixed_frontier(5_000);
    data.extend_from_slice(b"\nboom\n");
    let temp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut input = input_of(&data, Feed::Mapped, dir.path());
    let partitioned = Config {
        grouping: Grouping::Partitioned { partitions: 4 },
        temp_dir: Some(temp.path().to_path_buf()),
        ..config(2, 4096)
    };
    let mut verdicts = Vec::new();
    let mut outputs = Outputs::new().verdicts("verdicts", &mut verdicts);
    let error = Pipeline::new(partitioned).unwrap().run(&PanicsOnBoom, &mut input, &mut outputs, None).unwrap_err();
    assert!(matches!(&error, FilterError::ClassifierPanicked { message } if message == "boom"), "{error}");
    drop(outputs);
    assert!(verdicts.is_empty(), "nothing is written before every partition is classified");
    assert!(names_in(temp.path()).is_empty());
    // A temporary directory that does not exist: an error naming it.
    let missing = Config {
        grouping: Grouping::Partitioned { partitions: 4 },
        temp_dir: Some(temp.path().join("missing")),
        ..config(2, 4096)
    };
    let error = Pipeline::new(missing).unwrap().run(&FirstByte, &mut input, &mut Outputs::new(), None).unwrap_err();
    assert!(error.to_string().contains("missing"), "{error}");
}

/// [`FirstByte`]'s verdicts through [`Classifier::classify_grouped`], which
/// also checks that each batch came grouped: the URLs of an authority as
/// written and a scheme's length (what pass 1's bits tell apart: `http`,
/// `https` and `ftp` of one host, not two schemes of one length) in one run
/// (its scratch counts the batches and the runs that came back after
/// another's).
struct GroupedFirstByte;

/// The scheme's length and the authority of `url` as written: up to the
/// first `/`, `?` or `#` after its `://` (the whole URL without one).
fn written_origin(url: &[u8]) -> (usize, &[u8]) {
    let Some(colon) = url.windows(3).position(|w| w == b"://") else { return (0, url) };
    let end = url[colon + 3..].iter().position(|b| b"/?#".contains(b)).map_or(url.len(), |i| colon + 3 + i);
    (colon, &url[colon + 3..end])
}

impl Classifier for GroupedFirstByte {
    type Scratch = (u64, u64, u64);
    type Error = ArtifactError;

    fn classify(&self, url: &[u8], _: &mut (u64, u64, u64), _: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
        Ok(first_byte_verdict(url))
    }

    fn classify_grouped(
        &self,
        urls: &[&[u8]],
        (batches, runs, returns): &mut (u64, u64, u64),
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        *batches += 1;
        let mut done = std::collections::HashSet::new();
        let mut last = None;
        for (url, verdict) in urls.iter().zip(verdicts) {
            let origin = written_origin(url);
            if last != Some(origin) {
                *runs += 1;
                *returns += u64::from(!done.insert(origin));
                last = Some(origin);
            }
            *verdict = first_byte_verdict(url);
        }
        Ok(())
    }
}

#[test]
fn the_partitioned_form_hands_each_block_grouped_by_origin_and_the_verdicts_stay_the_windowed_paths() {
    // Three schemes of one host (http and https differ in the bits pass 1
    // keeps, not in their partition), case and ports as written, over 400
    // hosts in random order; the first byte decides (`u`, `a`, `d` schemes
    // too, and lines that are no URL: the windowed path's verdicts).
    let mut data = mixed_frontier(4000);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..30_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let scheme = ["http", "https", "ftp", "HTTP", "a", "d"][(state % 6) as usize];
        let host = (state >> 8) % 400;
        let port = if (state >> 20) % 9 == 0 { ":8080" } else { "" };
        data.extend_from_slice(format!("{scheme}://h{host}.example{port}/p{i}\n").as_bytes());
    }
    let windowed = run_all_outputs(&data, Feed::Mapped, config(1, 4096)).0.verdicts;
    for threads in [1, 2] {
        for partitions in [1, 7, 64, 1024] {
            let temp = tempfile::tempdir().unwrap();
            let partitioned = Config {
                grouping: Grouping::Partitioned { partitions },
                temp_dir: Some(temp.path().to_path_buf()),
                ..config(threads, 4096)
            };
            let dir = tempfile::tempdir().unwrap();
            let mut input = input_of(&data, Feed::Mapped, dir.path());
            let mut verdicts = Vec::new();
            let mut outputs = Outputs::new().verdicts("verdicts", &mut verdicts);
            let report = Pipeline::new(partitioned).unwrap().run(&GroupedFirstByte, &mut input, &mut outputs, None);
            let report = report.unwrap();
            drop(outputs);
            assert!(verdicts == windowed, "{partitions} partitions, {threads} threads: verdicts differ");
            let batches: u64 = report.scratches.iter().map(|s| s.0).sum();
            let runs: u64 = report.scratches.iter().map(|s| s.1).sum();
            let returns: u64 = report.scratches.iter().map(|s| s.2).sum();
            assert!(batches > 0 && batches <= partitions as u64 * 2, "{batches} grouped batches");
            // About 5,000 origins as pass 1 tells them apart: those that
            // share 15 bits in a partition interleave (1 partition: some
            // hundreds of pairs, 64: a few), any other comes in one run.
            // Were `http` and `https` of a host told apart by their
            // partition only, 400 hosts' runs would come back.
            let most = if partitions >= 64 { runs / 100 } else { runs / 5 };
            assert!(returns <= most, "{partitions} partitions, {threads} threads: {returns} of {runs} runs came back");
        }
    }
}
