//! `robotsieve filter`: stream a URL list through a compiled artifact.
//!
//! The work is `robotsieve_filter`; this module opens the input
//! (decompressing `.gz` and `.zst`), creates the outputs as pending files,
//! drives the progress bar, commits the outputs and writes the stats.

use crate::failure::{fail, Context, Failure};
use crate::progress_line::with_progress_line;
use crate::unknown_origins::UnknownOrigins;
use robotsieve_core::url::PathMode;
use robotsieve_core::Verdict;
use robotsieve_engine::PendingFile;
use robotsieve_engine::{AgentClassifier, FetchClass, MatrixClassifier, Scratch};
use robotsieve_filter::Outputs;
use robotsieve_filter::{partitions_for, Classifier, Config, Grouping, Input, Pipeline, Progress, Stats};
use std::cell::Cell;
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;

/// Arguments of `robotsieve filter`.
#[derive(clap::Args)]
#[command(after_help = "Every output file is written under a temporary name in its directory and renamed into place \
only when the run succeeds: a failed or interrupted run leaves no partial file under the final name. \
Streams are written directly, in order: `-` (standard output, for one output at most), /dev/stdout, \
devices such as /dev/null, named pipes. \
SIGINT, SIGTERM and SIGHUP remove the hidden `.NAME.robotsieve-PID-N.tmp` files before robotsieve exits; \
a run killed outright (SIGKILL, a crash) may leave one beside an output. \
A regular input file is memory-mapped: do not truncate it while robotsieve reads it.")]
pub struct Args {
    /// The compiled artifact, or the directory of a shard set (`robotsieve compile`);
    /// with --shard, the file of one shard of a set.
    #[arg(long, value_name = "ARTIFACT")]
    rules: PathBuf,
    /// Open --rules as shard K of an N-shard set, alone (a worker that holds
    /// only its shard, fed the URLs `shard-of --split` put in its part): its
    /// header must say it is shard K of N, and a URL whose origin belongs to
    /// another shard fails the run (exit 2) naming the URL and its shard.
    #[arg(long, value_name = "K/N", value_parser = crate::flags::parse_shard)]
    shard: Option<(u32, u32)>,
    /// The crawler to decide for: one of the agents the artifact was compiled
    /// for. Repeat it with --matrix for several crawlers in one pass.
    #[arg(long, value_name = "TOKEN", required_unless_present = "all_agents")]
    agent: Vec<String>,
    /// With --matrix: every crawler the artifact was compiled for, in its order.
    #[arg(long, requires = "matrix", conflicts_with = "agent")]
    all_agents: bool,
    /// Write one row per URL here, `URL<TAB>VERDICT<TAB>VERDICT...` with one
    /// verdict per crawler (after a header line `url<TAB>CRAWLER...`),
    /// computed in one pass: each URL's origin is found once and every
    /// crawler's group walked.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["allowed", "disallowed", "unknown", "invalid", "verdicts"])]
    matrix: Option<PathBuf>,
    /// The URL list, one per line (LF or CRLF; blank lines are skipped). `-` reads
    /// standard input; a name ending in `.gz` or `.zst` is decompressed.
    #[arg(long, value_name = "FILE")]
    urls: PathBuf,
    /// Write the allowed URLs here, one per line, in input order.
    #[arg(long, value_name = "FILE")]
    allowed: Option<PathBuf>,
    /// Write the disallowed URLs here.
    #[arg(long, value_name = "FILE")]
    disallowed: Option<PathBuf>,
    /// Write the URLs of origins the artifact has no robots.txt for here
    /// (not with --unknown-as, which puts them in another list).
    #[arg(long, value_name = "FILE", conflicts_with = "unknown_as")]
    unknown: Option<PathBuf>,
    /// Write the robots.txt URL (`scheme://host[:port]/robots.txt`) of each
    /// origin the artifact has no robots.txt for here, once each, in the
    /// order its first URL came: the list to fetch (not with --unknown-as).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["unknown_as", "matrix"])]
    unknown_origins: Option<PathBuf>,
    /// Write the lines that are not absolute http, https or ftp URLs here.
    #[arg(long, value_name = "FILE")]
    invalid: Option<PathBuf>,
    /// Write `VERDICT<TAB>URL` for every URL here, in input order.
    #[arg(long, value_name = "FILE")]
    verdicts: Option<PathBuf>,
    /// Add `<TAB>REASON` to each line of --verdicts: the deciding rule and its
    /// line, or why there was none.
    #[arg(long, requires = "verdicts")]
    explain: bool,
    /// With --explain: end each reason with the `Content-Signal` and
    /// `Content-Usage` preferences that apply to the URL, after ` | `.
    #[arg(long, requires = "explain")]
    explain_preferences: bool,
    /// Report URLs of origins without a robots.txt as allowed or disallowed
    /// instead of unknown: in the lists, the verdicts file and the counts.
    #[arg(long, value_name = "VERDICT", value_enum)]
    unknown_as: Option<UnknownAs>,
    /// Write counts per verdict and speed as JSON here. `counts` are the
    /// verdicts of the crawler named by `agent`: with --matrix the first
    /// crawler's, and `by_agent` has every crawler's.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    #[command(flatten)]
    threads: crate::flags::Threads,
    /// Match each URL's path byte for byte as Google's library reads it,
    /// instead of the path the fetcher requests (dot segments resolved,
    /// percent-encoded as the URL Standard does, escaped like patterns).
    /// The origin is the fetcher's either way.
    #[arg(long)]
    raw_urls: bool,
    /// How URLs are grouped by origin before they are classified: `auto`
    /// partitions a large regular file over an artifact of many origins
    /// (split by origin into a temporary file, classified a partition at a
    /// time, written in input order); `windowed` groups within each chunk
    /// only; `partitioned` partitions whenever it can (a regular file,
    /// without --explain or --matrix, which stay windowed). The outputs are
    /// the same whichever is used.
    #[arg(long, value_name = "HOW", value_enum, default_value = "auto")]
    grouping: GroupingFlag,
    /// Where the partitioned form keeps its temporary files (unnamed: they
    /// vanish with the process); about the input's size. Default: TMPDIR.
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
}

/// The values of `--grouping`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum GroupingFlag {
    /// Partitioned for large regular files over many origins.
    Auto,
    /// Grouped within each chunk only.
    Windowed,
    /// Partitioned whenever the form applies.
    Partitioned,
}

/// Where `--unknown-as` puts the URLs of origins without a robots.txt.
#[derive(Clone, Copy, clap::ValueEnum)]
enum UnknownAs {
    /// Count and list them as allowed.
    Allowed,
    /// Count and list them as disallowed.
    Disallowed,
}

/// The outputs of a run, by flag: (flag, verdict of the list or `None` for
/// the verdicts file, path).
fn requested_outputs(args: &Args) -> Vec<(&'static str, Option<Verdict>, &Path)> {
    let all = [
        ("--allowed", Some(Verdict::Allowed), &args.allowed),
        ("--disallowed", Some(Verdict::Disallowed), &args.disallowed),
        ("--unknown", Some(Verdict::Unknown), &args.unknown),
        ("--invalid", Some(Verdict::Invalid), &args.invalid),
        ("--verdicts", None, &args.verdicts),
        ("--matrix", None, &args.matrix),
    ];
    all.into_iter().filter_map(|(flag, verdict, path)| Some((flag, verdict, path.as_deref()?))).collect()
}

/// Runs `filter`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let outputs = requested_outputs(&args);
    if outputs.is_empty() && args.stats.is_none() && args.unknown_origins.is_none() {
        return Err(fail!(
            "nothing to write: give at least one of --allowed, --disallowed, --unknown, --unknown-origins, --invalid, --verdicts, --matrix, --stats"
        ));
    }
    if args.matrix.is_none() && args.agent.len() > 1 {
        return Err(fail!(
            "--agent given {} times: filter decides for one crawler, or for several with --matrix FILE",
            args.agent.len()
        ));
    }
    let mut paths: Vec<(&str, &Path)> = outputs.iter().map(|&(flag, _, path)| (flag, path)).collect();
    paths.extend(args.stats.as_deref().map(|path| ("--stats", path)));
    paths.extend(args.unknown_origins.as_deref().map(|path| ("--unknown-origins", path)));
    for (i, (flag, path)) in paths.iter().enumerate() {
        if let Some((other, _)) = paths[..i].iter().find(|(_, p)| p == path) {
            return Err(fail!("{other} and {flag} name the same file {}", path.display()));
        }
        if *path == args.urls.as_path() && path.as_os_str() != "-" {
            return Err(fail!("{flag} names the input file {}", path.display()));
        }
    }
    let mode = if args.raw_urls { PathMode::Raw } else { PathMode::Escaped };
    let artifact = match args.shard {
        None => crate::input::open_rules(&args.rules)?,
        Some((index, count)) => crate::input::open_shard(&args.rules, index, count)?,
    };
    if args.matrix.is_some() {
        let agents: Vec<usize> = if args.all_agents {
            (0..artifact.meta().agents.len()).collect()
        } else {
            let mut agents = Vec::with_capacity(args.agent.len());
            for name in &args.agent {
                agents.push(crate::input::agent_index(&artifact, &args.rules, name)?);
            }
            agents
        };
        let classifier = MatrixClassifier::new(&artifact, agents, mode, unknown_as(&args));
        let names: Vec<&str> = classifier.agents().iter().map(|&a| artifact.meta().agents[a].as_str()).collect();
        let header = format!("url\t{}\n", names.join("\t"));
        filter_with(&classifier, &args, artifact.origins(), header.as_bytes(), |scratches| {
            let by_agent: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .zip(classifier.counts(scratches))
                .map(|(name, counts)| (name.to_string(), verdict_counts(&counts)))
                .collect();
            // The pipeline counts the verdicts the classifier gives, the first crawler's.
            vec![
                ("agent", names[0].into()),
                ("by_robots_fetch", fetch_json(&classifier.fetch_tallies(scratches))),
                ("by_agent", by_agent.into()),
            ]
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let agent = crate::input::agent_index(&artifact, &args.rules, &args.agent[0])?;
    let classifier = AgentClassifier::new(&artifact, agent, mode).explaining_preferences(args.explain_preferences);
    let name = artifact.meta().agents[agent].as_str();
    // `by_agent` is the matrix's; null here, so that both documents have the same keys.
    filter_with(&classifier, &args, artifact.origins(), b"", |scratches| {
        vec![
            ("agent", name.into()),
            ("by_robots_fetch", fetch_stats(&classifier, scratches)),
            ("by_agent", serde_json::Value::Null),
        ]
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The verdict `--unknown-as` folds unknown URLs into (`Unknown`: none).
fn unknown_as(args: &Args) -> Verdict {
    match args.unknown_as {
        None => Verdict::Unknown,
        Some(UnknownAs::Allowed) => Verdict::Allowed,
        Some(UnknownAs::Disallowed) => Verdict::Disallowed,
    }
}

/// `{"allowed": N, "disallowed": N, "unknown": N, "invalid": N}`.
fn verdict_counts(counts: &[u64; 4]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> =
        Verdict::ALL.iter().map(|v| (v.name().to_string(), counts[v.index()].into())).collect();
    map.into()
}

/// The `--stats` figures only the artifact's classifier has: URLs and
/// distinct origins per robots.txt fetch result.
fn fetch_stats(classifier: &AgentClassifier<'_>, scratches: &[Scratch]) -> serde_json::Value {
    fetch_json(&classifier.fetch_tallies(scratches))
}

/// `{"rules": {"urls": N, "origins": N}, ...}` of fetch tallies.
fn fetch_json(tallies: &[(FetchClass, u64, u64)]) -> serde_json::Value {
    let classes: serde_json::Map<String, serde_json::Value> = tallies
        .iter()
        .map(|(class, urls, origins)| {
            (class.name().to_string(), serde_json::json!({ "urls": urls, "origins": origins }))
        })
        .collect();
    classes.into()
}

/// Opens the URL list: mapped, streamed from standard input, or decompressed
/// (a read error of a decompressed list says how far it got).
pub(crate) fn open_input(path: &Path) -> Result<Input, Failure> {
    let name = path.display().to_string();
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let open = || -> Result<(Counted<File>, Position), Failure> {
        let file = File::open(path).context(&name)?;
        let len = file.metadata().context(&name)?.len();
        let compressed = Rc::new(Cell::new(0));
        Ok((Counted { inner: file, count: compressed.clone() }, Position { compressed, len, bytes: 0 }))
    };
    Ok(match extension {
        "gz" => {
            let (file, position) = open()?;
            Input::from_reader(
                name,
                Positioned { inner: flate2::read::MultiGzDecoder::new(BufReader::new(file)), position },
            )
        }
        "zst" => {
            let (file, position) = open()?;
            Input::from_reader(name.clone(), Positioned { inner: zstd::Decoder::new(file).context(&name)?, position })
        }
        _ => Input::open(path).map_err(|e| fail!("{e}"))?,
    })
}

/// A reader that counts the bytes read through it, for [`Position`].
struct Counted<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// How far a decompressed list got: compressed bytes read (of the file's
/// length) and decompressed bytes given out. Counting costs a few
/// instructions per read, not per byte (a line count would cost more than
/// the decompression's 5%).
struct Position {
    compressed: Rc<Cell<u64>>,
    len: u64,
    bytes: u64,
}

/// A decompressed stream whose read errors (a truncated or damaged file)
/// say where they happened: `incomplete frame at byte 40000 of 40000 of the
/// compressed file (after 1310720 decompressed bytes)`.
struct Positioned<R> {
    inner: R,
    position: Position,
}

impl<R: Read> Read for Positioned<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Position { compressed, len, bytes } = &mut self.position;
        match self.inner.read(buf) {
            Ok(n) => {
                *bytes += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!(
                    "{e} at byte {} of {len} of the compressed file (after {bytes} decompressed bytes)",
                    compressed.get()
                ),
            )),
        }
    }
}

/// Runs the pipeline with `classifier` and commits the outputs.
/// `origins` is the artifact's number of origins (whether to partition,
/// see [`Grouping`]); `matrix_header` starts the `--matrix` file.
/// `extra_stats` adds the classifier's own figures to `--stats`, from the
/// scratches of the run.
fn filter_with<C: Classifier>(
    classifier: &C,
    args: &Args,
    origins: usize,
    matrix_header: &[u8],
    extra_stats: impl FnOnce(&[C::Scratch]) -> Vec<(&'static str, serde_json::Value)>,
) -> Result<Stats, Failure> {
    let mut input = open_input(&args.urls)?;
    let config = Config {
        threads: args.threads.count(),
        unknown_as: unknown_as(args),
        explain: args.explain,
        grouping: match args.grouping {
            GroupingFlag::Auto => Grouping::Auto { origins },
            GroupingFlag::Windowed => Grouping::Windowed,
            GroupingFlag::Partitioned => Grouping::Partitioned {
                partitions: partitions_for(origins, input.mapped_bytes().map_or(usize::MAX, <[u8]>::len)),
            },
        },
        temp_dir: args.temp_dir.clone(),
        ..Config::default()
    };
    let pipeline = Pipeline::new(config).map_err(|e| fail!("{e}"))?;

    // Every output is created before the work, so that a missing or
    // unwritable directory fails at once.
    let requested = requested_outputs(args);
    let mut files = Vec::with_capacity(requested.len());
    for &(_, _, path) in &requested {
        files.push(PendingFile::create(path).map_err(|e| fail!("{e}"))?);
    }
    let mut stats_file = args.stats.as_deref().map(PendingFile::create).transpose().map_err(|e| fail!("{e}"))?;
    let mut origins_file =
        args.unknown_origins.as_deref().map(PendingFile::create).transpose().map_err(|e| fail!("{e}"))?;
    // --unknown-origins reads the unknown list as it is written (and passes it on to --unknown).
    let unknown_list_at = requested.iter().position(|&(_, verdict, _)| verdict == Some(Verdict::Unknown));
    // The outputs are written a chunk at a time and only committed: past the
    // page cache, but for the list the collector reads back.
    for (i, file) in files.iter_mut().enumerate() {
        if origins_file.is_none() || Some(i) != unknown_list_at {
            file.write_direct();
        }
    }
    let (mut unknown_list, mut others): (Vec<_>, Vec<_>) =
        files.iter_mut().zip(&requested).enumerate().partition(|&(i, _)| Some(i) == unknown_list_at);
    let mut collector = origins_file.as_mut().map(|origins| {
        let list = unknown_list.pop().map(|(_, (file, _))| file);
        UnknownOrigins::new(origins, list)
    });
    let mut outputs = Outputs::new();
    if let Some(collector) = collector.as_mut() {
        let name = args.unknown.as_deref().or(args.unknown_origins.as_deref()).expect("one of them");
        outputs = outputs.list(Verdict::Unknown, name.display().to_string(), collector);
    }
    for (_, (file, &(flag, verdict, path))) in others.iter_mut().chain(unknown_list.iter_mut()) {
        let name = path.display().to_string();
        outputs = match verdict {
            Some(verdict) => outputs.list_file(verdict, name, file),
            None if flag == "--matrix" => {
                file.write_all(matrix_header).context(&name)?;
                outputs.rows_file(name, file)
            }
            None => outputs.verdicts_file(name, file),
        };
    }

    let progress = Progress::new();
    let message = |elapsed: Duration| {
        let urls = progress.urls();
        let rate = urls as f64 / elapsed.as_secs_f64().max(1e-3);
        format!(
            "{urls} URLs, {:.2} million URLs/s, {:.0} MiB read",
            rate / 1e6,
            progress.bytes() as f64 / (1 << 20) as f64
        )
    };
    let report = with_progress_line(message, || pipeline.run(classifier, &mut input, &mut outputs, Some(&progress)))
        .map_err(Failure::from)?;
    drop(outputs);
    if let (Some(collector), Some(path)) = (collector, &args.unknown_origins) {
        collector.finish().map_err(|e| fail!("{}: cannot write: {e}", path.display()))?;
    }
    let stats = report.stats.clone();
    if let Some(file) = &mut stats_file {
        let mut document = stats_json(&stats);
        for (key, value) in extra_stats(&report.scratches) {
            document[key] = value;
        }
        let mut json = serde_json::to_vec_pretty(&document).expect("stats are plain numbers");
        json.push(b'\n');
        let name = format!("{}: cannot write", file.path().display());
        file.write_all(&json).context(name)?;
    }
    for file in files.into_iter().chain(stats_file).chain(origins_file) {
        file.commit().map_err(Failure::from)?;
    }
    Ok(stats)
}

/// The `--stats` document. Classifier-specific figures (`agent`, the
/// crawler whose verdicts `counts` counts; origins hit per robots.txt
/// status class; with --matrix, `by_agent`, the counts of every crawler)
/// are added as further top-level keys.
fn stats_json(stats: &Stats) -> serde_json::Value {
    let counts: serde_json::Map<String, serde_json::Value> =
        Verdict::ALL.iter().map(|v| (v.name().to_string(), stats.count(*v).into())).collect();
    serde_json::json!({
        "urls": stats.urls(),
        "counts": counts,
        "input_bytes": stats.input_bytes,
        "elapsed_seconds": stats.elapsed.as_secs_f64(),
        "urls_per_second": stats.urls_per_second(),
        "bytes_per_second": stats.bytes_per_second(),
        "threads": stats.threads,
    })
}
