//! `peers`: robotsieve against the robots.txt libraries people use today, on the same inputs in one run.
//!
//! For each workload (a URL list plus the robots.txt files of its hosts) it measures, each in its own
//! child process so that every peak RSS belongs to one engine only:
//!
//! - `floor`: memory-map the URL file and count its lines (memchr). Nothing can read URLs faster.
//! - `texting_robots`: `Robot::new(agent, body)` once per host (timed apart), then `allowed(url)` per URL.
//! - `robotstxt` (Rust port of Google's library): re-parses the host's robots.txt for every URL, so it
//!   runs on an evenly spread sample of the list.
//! - `robotsieve`: the release binary as a subprocess, `compile` (timed apart) then `filter` with 1, 2, ...
//!   threads; URLs/s from its stats file, peak RSS from `wait4`. Its verdicts are then compared URL by
//!   URL with robotstxt's on the sample, so that the speed figures come with an agreement figure.
//!
//! Times are wall and CPU time (the machine is shared; CPU time is the steadier figure when it is busy).
//!
//! The in-process peers find each URL's robots.txt with robotsieve's own URL splitter and a hash map of
//! origin keys, so that every engine agrees on which URLs are unknown or invalid. Generated inputs are cached
//! under `target/peers-data/`. Run: `cargo run --release -p robotsieve-benches --bin peers -- --help`.

use base64::Engine as _;
use clap::{Parser, ValueEnum};
use robotsieve_core::url::{KeyBuf, OriginKey};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Compare robotsieve with texting_robots and robotstxt (Google's port) on the same URL lists.
#[derive(Parser)]
#[command(name = "peers")]
struct Args {
    /// The shared data directory (with realworld/); default ../shared, then /work/shared.
    #[arg(long)]
    shared: Option<PathBuf>,
    /// The robotsieve binary to measure.
    #[arg(long, default_value = "target/release/robotsieve")]
    robotsieve: PathBuf,
    /// Which workload(s) to run.
    #[arg(long, value_enum, default_value_t = WorkloadChoice::Both)]
    workload: WorkloadChoice,
    /// Number of URLs of the synthetic frontier (the documented figure uses 10000000).
    #[arg(long, default_value_t = 1_000_000)]
    synth: usize,
    /// Crawler names; crawl2019 runs all of them, synthetic the first only.
    #[arg(long, value_delimiter = ',', default_value = "mybot,googlebot")]
    agents: Vec<String>,
    /// How many URLs (spread evenly over the list) robotstxt checks; it re-parses robots.txt per URL.
    #[arg(long, default_value_t = 20_000)]
    sample: usize,
    /// Stop robotstxt after this many seconds of matching (it reports what it did by then).
    #[arg(long, default_value_t = 120.0)]
    robotstxt_seconds: f64,
    /// Thread counts for `robotsieve filter`.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Kill a robotsieve subprocess (compile or filter) that runs longer than this many seconds.
    #[arg(long, default_value_t = 1800.0)]
    robotsieve_timeout: f64,
    /// Address-space limit (GB) of a robotsieve subprocess, so that a runaway build cannot exhaust the machine.
    #[arg(long, default_value_t = 16.0)]
    robotsieve_max_gb: f64,
    /// Runs of each timed phase (floor, texting_robots match, robotsieve filter); the fastest counts.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Where generated inputs are cached.
    #[arg(long, default_value = "target/peers-data")]
    data_dir: PathBuf,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Internal: run one in-process peer in this (child) process and print its result as JSON.
    #[arg(long, value_enum, hide = true)]
    only: Option<Peer>,
    /// Internal: the URL list of `--only`.
    #[arg(long, hide = true)]
    urls: Option<PathBuf>,
    /// Internal: the host -> robots.txt file table of `--only`.
    #[arg(long, hide = true)]
    hosts: Option<PathBuf>,
    /// Internal: where `--only robotstxt` writes its per-URL verdicts.
    #[arg(long, hide = true)]
    sample_out: Option<PathBuf>,
    /// Internal: the crawler name of `--only`.
    #[arg(long, hide = true)]
    agent: Option<String>,
}

/// The workloads the command can run.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum WorkloadChoice {
    Crawl2019,
    Synthetic,
    Both,
}

/// The engines measured inside a child of this process.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Peer {
    Floor,
    TextingRobots,
    Robotstxt,
}

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Floor => "floor",
            Peer::TextingRobots => "texting-robots",
            Peer::Robotstxt => "robotstxt",
        }
    }
}

/// How many URLs got which answer; `failed` counts panics and parse errors of the library measured.
#[derive(Default, Clone, Serialize, Deserialize)]
struct Verdicts {
    allowed: u64,
    disallowed: u64,
    unknown: u64,
    invalid: u64,
    failed: u64,
}

/// What a child process reports about one peer.
#[derive(Default, Serialize, Deserialize)]
struct PeerRun {
    urls: u64,
    seconds: f64,
    /// CPU time of the timed phase: on a busy shared machine, steadier than wall time.
    cpu_seconds: f64,
    setup_files: u64,
    setup_seconds: f64,
    verdicts: Option<Verdicts>,
    peak_rss_bytes: u64,
    note: String,
}

/// One line of the results table.
#[derive(Serialize)]
struct Row {
    engine: String,
    urls: u64,
    seconds: f64,
    urls_per_second: f64,
    /// CPU seconds (for robotsieve: user + system time of the whole process, all threads).
    cpu_seconds: f64,
    urls_per_cpu_second: f64,
    vs_texting_robots: Option<f64>,
    vs_floor: Option<f64>,
    peak_rss_mb: Option<f64>,
    verdicts: Option<Verdicts>,
    note: String,
}

/// One preparation step (parsing or compiling the robots.txt files), reported apart from matching.
#[derive(Serialize)]
struct Setup {
    engine: String,
    files: u64,
    seconds: f64,
    peak_rss_mb: Option<f64>,
    note: String,
}

/// The results of one workload for one crawler name.
#[derive(Serialize)]
struct Table {
    workload: String,
    agent: String,
    /// /proc/loadavg when the workload started: the machine is shared, so say how busy it was.
    load_average: String,
    rows: Vec<Row>,
    setup: Vec<Setup>,
    missing: Vec<String>,
    /// robotsieve against Google's library (robotstxt), URL by URL on the robotstxt sample.
    agreement_with_robotstxt: Option<Agreement>,
}

/// The prepared inputs of one workload: a URL list, a host table for the in-process peers and a corpus
/// for `robotsieve compile`, all describing the same robots.txt files.
struct Inputs {
    name: String,
    urls: PathBuf,
    hosts: PathBuf,
    corpus: PathBuf,
    dir: PathBuf,
}

type Outcome<T> = Result<T, String>;

fn main() {
    let args = Args::parse();
    let result = match args.only {
        Some(peer) => run_only(peer, &args),
        None => run_all(&args),
    };
    if let Err(message) = result {
        eprintln!("peers: {message}");
        std::process::exit(2);
    }
}

// ---------------------------------------------------------------------------------------------------
// Parent: prepare inputs, run every engine, print the tables.

fn run_all(args: &Args) -> Outcome<()> {
    let Some(shared) = find_shared(args.shared.as_deref()) else {
        println!("peers: no shared data directory (tried --shared, ../shared, /work/shared); nothing to measure");
        return Ok(());
    };
    let realworld = shared.join("realworld");
    std::fs::create_dir_all(&args.data_dir).map_err(|e| format!("{}: {e}", args.data_dir.display()))?;
    let mut tables = Vec::new();
    if args.workload != WorkloadChoice::Synthetic {
        match prepare_crawl2019(&realworld, &args.data_dir) {
            Ok(inputs) => {
                for agent in &args.agents {
                    tables.push(measure(args, &inputs, agent)?);
                }
            }
            Err(reason) => println!("crawl2019: skipped ({reason})"),
        }
    }
    if args.workload != WorkloadChoice::Crawl2019 {
        match prepare_synthetic(&realworld, &args.data_dir, args.synth) {
            Ok(inputs) => tables.push(measure(args, &inputs, &args.agents[0])?),
            Err(reason) => println!("synthetic: skipped ({reason})"),
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&tables).map_err(|e| e.to_string())?;
        write_atomically(path, |w| w.write_all(text.as_bytes()))?;
        println!("results written to {}", path.display());
    }
    Ok(())
}

/// `--shared`, else `../shared`, else `/work/shared`, whichever holds `realworld/`.
fn find_shared(given: Option<&Path>) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match given {
        Some(dir) => vec![dir.to_path_buf()],
        None => vec![PathBuf::from("../shared"), PathBuf::from("/work/shared")],
    };
    candidates.into_iter().find(|dir| dir.join("realworld").is_dir())
}

/// Runs every engine on one workload for one crawler name and prints the table.
fn measure(args: &Args, inputs: &Inputs, agent: &str) -> Outcome<Table> {
    let load_average = std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim().to_string();
    println!("\n== workload {} · agent {agent} · load average at start {load_average} ==", inputs.name);
    let mut table = Table {
        workload: inputs.name.clone(),
        agent: agent.to_string(),
        load_average,
        rows: vec![],
        setup: vec![],
        missing: vec![],
        agreement_with_robotstxt: None,
    };

    // A peer that fails is reported and left out; the others still run.
    let mut run = |peer: Peer| {
        run_peer(args, peer, inputs, agent)
            .map_err(|reason| {
                let line = format!("{}: not available ({reason})", peer.name());
                println!("{line}");
                table.missing.push(line);
            })
            .ok()
    };
    let (floor, texting, google) = (run(Peer::Floor), run(Peer::TextingRobots), run(Peer::Robotstxt));
    let floor_rate = floor.as_ref().map_or(0.0, |run| rate(run.urls, run.seconds));
    let texting_rate = texting.as_ref().map_or(0.0, |run| rate(run.urls, run.seconds));
    let row = |engine: &str, urls: u64, (seconds, cpu_seconds): (f64, f64), rss: u64, verdicts, note| {
        let per_second = rate(urls, seconds);
        Row {
            engine: String::from(engine),
            urls,
            seconds,
            urls_per_second: per_second,
            cpu_seconds,
            urls_per_cpu_second: rate(urls, cpu_seconds),
            vs_texting_robots: (texting_rate > 0.0).then(|| per_second / texting_rate),
            vs_floor: (floor_rate > 0.0).then(|| per_second / floor_rate),
            peak_rss_mb: Some(megabytes(rss)),
            verdicts,
            note,
        }
    };
    // The in-process peers' rows: each run's own figures.
    let peer_row = |engine: &str, run: PeerRun| {
        row(engine, run.urls, (run.seconds, run.cpu_seconds), run.peak_rss_bytes, run.verdicts, run.note)
    };
    if let Some(floor) = floor {
        table.rows.push(peer_row("floor (mmap + count lines)", floor));
    }
    if let Some(texting) = texting {
        let (setup_files, setup_seconds) = (texting.setup_files, texting.setup_seconds);
        table.rows.push(peer_row("texting_robots 0.2.2, 1 thread", texting));
        table.setup.push(Setup {
            engine: "texting_robots Robot::new per host".into(),
            files: setup_files,
            seconds: setup_seconds,
            peak_rss_mb: None,
            note: "peak RSS is in the match row (one process)".into(),
        });
    }
    if let Some(google) = google {
        table.rows.push(peer_row("robotstxt 0.3.0 (re-parse per URL), 1 thread", google));
    }

    let mut compile = None;
    match run_robotsieve(args, inputs, agent, &mut compile) {
        Ok(filters) => {
            for mut filter in filters {
                table.agreement_with_robotstxt = table.agreement_with_robotstxt.take().or(filter.agreement.take());
                let note = format!("wall {:.3} s{}", filter.wall_seconds, filter.note);
                table.rows.push(row(
                    &format!("robotsieve filter, {} thread(s)", filter.threads),
                    filter.urls,
                    (filter.seconds, filter.cpu_seconds),
                    filter.peak_rss_bytes,
                    filter.verdicts,
                    note,
                ));
            }
        }
        Err(reason) => {
            let line = format!("robotsieve: not available ({reason})");
            println!("{line}");
            table.missing.push(line);
        }
    }
    table.setup.extend(compile);
    print_table(&table);
    Ok(table)
}

fn rate(urls: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        urls as f64 / seconds
    } else {
        0.0
    }
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn print_table(table: &Table) {
    println!(
        "{:<46} {:>10} {:>9} {:>12} {:>8} {:>8} {:>8} {:>8} {:>12}  verdicts a/d/u/i/failed",
        "engine", "URLs", "seconds", "URLs/s", "vs t_r", "vs floor", "RSS MB", "cpu s", "URLs/cpu-s"
    );
    let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.3}"));
    for row in &table.rows {
        let verdicts = row.verdicts.as_ref().map_or(String::new(), |v| {
            format!("{}/{}/{}/{}/{}", v.allowed, v.disallowed, v.unknown, v.invalid, v.failed)
        });
        println!(
            "{:<46} {:>10} {:>9.3} {:>12.0} {:>8} {:>8} {:>8} {:>8.3} {:>12.0}  {verdicts} {}",
            row.engine,
            row.urls,
            row.seconds,
            row.urls_per_second,
            ratio(row.vs_texting_robots),
            ratio(row.vs_floor),
            row.peak_rss_mb.map_or("-".to_string(), |m| format!("{m:.1}")),
            row.cpu_seconds,
            row.urls_per_cpu_second,
            row.note
        );
    }
    for setup in &table.setup {
        println!(
            "setup: {:<40} {} files in {:.3} s{} {}",
            setup.engine,
            setup.files,
            setup.seconds,
            setup.peak_rss_mb.map_or(String::new(), |m| format!(", peak RSS {m:.1} MB")),
            setup.note
        );
    }
    if let Some(agreement) = &table.agreement_with_robotstxt {
        println!(
            "robotsieve vs robotstxt (Google's semantics), URL by URL on the sample: {} compared, {} disagree, {} skipped",
            agreement.compared, agreement.disagreements, agreement.skipped
        );
        for (kind, count) in &agreement.kinds {
            println!("  {count} x {kind}");
        }
        for example in &agreement.examples {
            println!("  {example}");
        }
    }
}

/// Where the robotstxt child leaves its per-URL verdicts for the comparison with robotsieve.
fn sample_path(inputs: &Inputs, agent: &str) -> PathBuf {
    inputs.dir.join(format!("robotstxt-sample-{agent}.tsv"))
}

/// Re-executes this binary with `--only PEER` and returns what the child measured.
fn run_peer(args: &Args, peer: Peer, inputs: &Inputs, agent: &str) -> Outcome<PeerRun> {
    // /proc/self/exe still runs this very build when cargo has replaced the file meanwhile (the target
    // directory is shared), and after fork it names the parent's executable.
    let _ = std::fs::remove_file(sample_path(inputs, agent));
    let mut command = Command::new("/proc/self/exe");
    command
        .args(["--only", peer.name(), "--agent", agent, "--urls"])
        .arg(&inputs.urls)
        .arg("--hosts")
        .arg(&inputs.hosts)
        .args(["--repeat", &args.repeat.to_string(), "--sample", &args.sample.to_string()])
        .args(["--robotstxt-seconds", &args.robotstxt_seconds.to_string()])
        .arg("--sample-out")
        .arg(sample_path(inputs, agent));
    let finished = run_measured(&mut command, true, None)?;
    if !finished.success {
        return Err(format!("{} child failed: {}", peer.name(), finished.stderr_head()));
    }
    serde_json::from_str(&finished.stdout).map_err(|e| format!("{} child printed bad JSON ({e})", peer.name()))
}

/// A finished child process: its output, status, wall time and peak RSS (from `wait4`).
struct Finished {
    success: bool,
    stdout: String,
    stderr: String,
    wall_seconds: f64,
    /// User plus system time of the child, all threads.
    cpu_seconds: f64,
    peak_rss_bytes: u64,
}

impl Finished {
    /// The first lines the child wrote to stderr (when captured): what went wrong, for a one-line report.
    fn stderr_head(&self) -> String {
        self.stderr.lines().map(str::trim).filter(|l| !l.is_empty()).take(3).collect::<Vec<_>>().join(" | ")
    }

    /// The last line the child wrote to stderr (when captured): usually its summary.
    fn stderr_last(&self) -> &str {
        self.stderr.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("")
    }
}

/// Bounds for a robotsieve child: it is the code under test, and the machine is shared.
#[derive(Clone, Copy)]
struct Limits {
    seconds: f64,
    address_space_bytes: u64,
}

impl Limits {
    fn of(args: &Args) -> Limits {
        Limits { seconds: args.robotsieve_timeout, address_space_bytes: (args.robotsieve_max_gb * 1e9) as u64 }
    }
}

/// Runs `command` to completion, reaping it with `wait4` to get its own peak RSS.
/// With `pass_stderr` the child's stderr goes to ours; otherwise it is captured for error messages.
/// With `limits` the child gets an address-space limit and is killed when it runs past the time limit.
fn run_measured(command: &mut Command, pass_stderr: bool, limits: Option<Limits>) -> Outcome<Finished> {
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    command.stderr(if pass_stderr { Stdio::inherit() } else { Stdio::piped() });
    if let Some(limits) = limits {
        let bytes = limits.address_space_bytes as libc::rlim_t;
        // SAFETY: the closure only calls setrlimit, which is async-signal-safe, between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let started = Instant::now();
    let mut child = command.spawn().map_err(|e| format!("cannot start {:?}: {e}", command.get_program()))?;
    let pid = child.id() as libc::pid_t;
    let finished = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = limits.map(|limits| {
        let (finished, timed_out) = (finished.clone(), timed_out.clone());
        std::thread::spawn(move || {
            while !finished.load(Ordering::Acquire) {
                if started.elapsed().as_secs_f64() > limits.seconds {
                    timed_out.store(true, Ordering::Release);
                    // SAFETY: plain syscall; the child is not reaped before `finished` is set.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        })
    });
    let mut stdout = String::new();
    let stdout_pipe = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    // Drain stderr on a thread so that neither pipe can fill up and block the child.
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = stderr_pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    });
    let read = match stdout_pipe {
        Some(mut pipe) => pipe.read_to_string(&mut stdout).map(drop),
        None => Ok(()),
    };
    let mut stderr = stderr_reader.join().unwrap_or_default();
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data that wait4 fills in; status is a valid out pointer.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall_seconds = started.elapsed().as_secs_f64();
    finished.store(true, Ordering::Release);
    if let Some(watchdog) = watchdog {
        let _ = watchdog.join();
    }
    if reaped != pid {
        return Err(format!("wait4 failed: {}", std::io::Error::last_os_error()));
    }
    read.map_err(|e| format!("reading child output: {e}"))?;
    if timed_out.load(Ordering::Acquire) {
        stderr.insert_str(0, &format!("killed after the time limit of {wall_seconds:.0} s\n"));
    } else if libc::WIFSIGNALED(status) {
        stderr.insert_str(0, &format!("killed by signal {}\n", libc::WTERMSIG(status)));
    }
    Ok(Finished {
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout,
        stderr,
        wall_seconds,
        cpu_seconds: timeval_seconds(usage.ru_utime) + timeval_seconds(usage.ru_stime),
        peak_rss_bytes: usage.ru_maxrss as u64 * 1024,
    })
}

fn timeval_seconds(time: libc::timeval) -> f64 {
    time.tv_sec as f64 + time.tv_usec as f64 * 1e-6
}

/// One `robotsieve filter` run.
struct FilterRun {
    threads: usize,
    urls: u64,
    seconds: f64,
    wall_seconds: f64,
    cpu_seconds: f64,
    peak_rss_bytes: u64,
    verdicts: Option<Verdicts>,
    agreement: Option<Agreement>,
    note: String,
}

/// Compiles the workload's corpus with the robotsieve binary and filters the URL list with it.
/// The compile step is reported through `compile` as soon as it succeeds, even if filtering then fails.
fn run_robotsieve(args: &Args, inputs: &Inputs, agent: &str, compile: &mut Option<Setup>) -> Outcome<Vec<FilterRun>> {
    if !args.robotsieve.is_file() {
        return Err(format!(
            "no binary at {}; build it with `cargo build --release -p robotsieve-cli` or pass --robotsieve",
            args.robotsieve.display()
        ));
    }
    // Run a private copy: the target directory is shared, and compile and filter must be the same build.
    let binary = &inputs.dir.join("robotsieve-under-test");
    std::fs::copy(&args.robotsieve, binary).map_err(|e| format!("copying {}: {e}", args.robotsieve.display()))?;
    let rules = inputs.dir.join(format!("rules-{agent}.rsv"));
    let compiled = run_measured(
        Command::new(binary).args(["compile", "--agent", agent, "--corpus"]).arg(&inputs.corpus).arg("-o").arg(&rules),
        false,
        Some(Limits::of(args)),
    )?;
    if !compiled.success {
        return Err(format!("`robotsieve compile` failed: {}", compiled.stderr_head()));
    }
    let records = count_lines(&inputs.corpus)?;
    *compile = Some(Setup {
        engine: "robotsieve compile (subprocess)".into(),
        files: records,
        seconds: compiled.wall_seconds,
        peak_rss_mb: Some(megabytes(compiled.peak_rss_bytes)),
        note: format!(
            "corpus records (http+https per host); artifact {:.1} MB; it says: {}",
            std::fs::metadata(&rules).map(|m| megabytes(m.len())).unwrap_or(0.0),
            compiled.stderr_last()
        ),
    });
    let mut filters = Vec::new();
    // Only a sample written in this run counts (run_peer removes the previous one first).
    let mut compare_with = Some(sample_path(inputs, agent)).filter(|path| path.is_file());
    let mut agreement = None;
    for &threads in &args.threads {
        let mut best: Option<FilterRun> = None;
        for _ in 0..args.repeat.max(1) {
            let sample = compare_with.take();
            let mut run = run_filter(binary, &rules, inputs, agent, threads, Limits::of(args), sample.as_deref())?;
            // The comparison is made on the first run only; keep it whichever run is fastest.
            agreement = agreement.or(run.agreement.take());
            if !matches!(&best, Some(b) if b.seconds <= run.seconds) {
                best = Some(run);
            }
        }
        filters.extend(best);
    }
    if let Some(first) = filters.first_mut() {
        first.agreement = agreement;
    }
    Ok(filters)
}

/// One `robotsieve filter` run over the workload's URL list. With `sample`, its verdicts are compared
/// URL by URL with those robotstxt gave on its sample.
fn run_filter(
    binary: &Path,
    rules: &Path,
    inputs: &Inputs,
    agent: &str,
    threads: usize,
    limits: Limits,
    sample: Option<&Path>,
) -> Outcome<FilterRun> {
    let stats_path = inputs.dir.join(format!("stats-{agent}-t{threads}.json"));
    let _ = std::fs::remove_file(&stats_path);
    // Not /dev/null: filter writes every output through a temporary file renamed into place, which would
    // replace the device with a regular file when run as root. A real file also counts the cost of writing.
    let verdicts_path = inputs.dir.join(format!("verdicts-{agent}-t{threads}.tsv"));
    let finished = run_measured(
        Command::new(binary)
            .args(["filter", "--rules"])
            .arg(rules)
            .args(["--agent", agent, "--urls"])
            .arg(&inputs.urls)
            .arg("--verdicts")
            .arg(&verdicts_path)
            .args(["--threads", &threads.to_string(), "--stats"])
            .arg(&stats_path),
        false,
        Some(limits),
    )?;
    let agreement = sample.map(|sample| compare_verdicts(&verdicts_path, sample)).transpose();
    let _ = std::fs::remove_file(&verdicts_path);
    if !finished.success {
        return Err(format!("`robotsieve filter --threads {threads}` failed: {}", finished.stderr_head()));
    }
    let text = std::fs::read_to_string(&stats_path)
        .map_err(|e| format!("filter wrote no stats file {}: {e}", stats_path.display()))?;
    let stats: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", stats_path.display()))?;
    let mut run = filter_run_from_stats(&stats, threads, &finished);
    run.agreement = agreement?;
    Ok(run)
}

/// How robotsieve's verdicts compare, URL by URL, with those of Google's library (robotstxt) on its sample.
#[derive(Serialize)]
struct Agreement {
    compared: u64,
    disagreements: u64,
    /// robotstxt failed (panicked) on these; not compared.
    skipped: u64,
    /// Disagreements by kind, `robotsieve VERDICT / robotstxt VERDICT`.
    kinds: BTreeMap<String, u64>,
    /// The first few disagreements: URL, robotsieve's verdict, robotstxt's.
    examples: Vec<String>,
}

/// Compares the verdicts file of a filter run (`VERDICT<TAB>URL` per input line) with the robotstxt
/// sample (`index<TAB>verdict`).
fn compare_verdicts(verdicts_path: &Path, sample_path: &Path) -> Outcome<Agreement> {
    let sample_text = std::fs::read_to_string(sample_path).map_err(|e| format!("{}: {e}", sample_path.display()))?;
    let mut sample = Vec::new();
    for (number, line) in sample_text.lines().enumerate() {
        let parsed = line.split_once('\t').and_then(|(index, verdict)| Some((index.parse::<usize>().ok()?, verdict)));
        sample.push(parsed.ok_or_else(|| format!("{}:{}: bad line", sample_path.display(), number + 1))?);
    }
    let file = File::open(verdicts_path).map_err(|e| format!("{}: {e}", verdicts_path.display()))?;
    let mut agreement =
        Agreement { compared: 0, disagreements: 0, skipped: 0, kinds: BTreeMap::new(), examples: Vec::new() };
    let mut wanted = sample.iter().peekable();
    for (index, line) in BufReader::new(file).split(b'\n').enumerate() {
        let Some(&&(sample_index, google)) = wanted.peek() else { break };
        if index != sample_index {
            continue;
        }
        wanted.next();
        let line = line.map_err(|e| format!("{}: {e}", verdicts_path.display()))?;
        let line = String::from_utf8_lossy(&line);
        let (sieve, url) = line.split_once('\t').unwrap_or((&line, ""));
        if google == "failed" {
            agreement.skipped += 1;
            continue;
        }
        agreement.compared += 1;
        if sieve != google {
            agreement.disagreements += 1;
            *agreement.kinds.entry(format!("robotsieve {sieve} / robotstxt {google}")).or_default() += 1;
            if agreement.examples.len() < 5 {
                agreement.examples.push(format!("{url}: robotsieve {sieve}, robotstxt {google}"));
            }
        }
    }
    if let Some((index, _)) = wanted.next() {
        return Err(format!("{} ends before line {} of the sample", verdicts_path.display(), index + 1));
    }
    Ok(agreement)
}

/// Reads the figures of one filter run from its stats JSON (written by `cli/src/filter.rs`: `urls`,
/// `urls_per_second`, `elapsed_seconds`, `counts.{allowed,disallowed,unknown,invalid}`). A missing figure
/// falls back to wall time, and the note says so.
fn filter_run_from_stats(stats: &serde_json::Value, threads: usize, finished: &Finished) -> FilterRun {
    let urls = stats.get("urls").and_then(|v| v.as_u64());
    let per_second = stats.get("urls_per_second").and_then(|v| v.as_f64());
    let elapsed = stats.get("elapsed_seconds").and_then(|v| v.as_f64());
    let mut note = String::new();
    let (urls, seconds) = match (urls, per_second, elapsed) {
        (Some(urls), Some(per_second), _) if per_second > 0.0 => (urls, urls as f64 / per_second),
        (Some(urls), _, Some(elapsed)) => (urls, elapsed),
        (urls, _, _) => {
            note.push_str("; stats lacked urls_per_second, seconds are wall time");
            (urls.unwrap_or(0), finished.wall_seconds)
        }
    };
    let count = |key: &str| stats.get("counts").and_then(|c| c.get(key)).and_then(|v| v.as_u64());
    let verdicts = match (count("allowed"), count("disallowed"), count("unknown"), count("invalid")) {
        (Some(allowed), Some(disallowed), Some(unknown), Some(invalid)) => {
            Some(Verdicts { allowed, disallowed, unknown, invalid, failed: 0 })
        }
        _ => None,
    };
    FilterRun {
        threads,
        urls,
        seconds,
        wall_seconds: finished.wall_seconds,
        cpu_seconds: finished.cpu_seconds,
        peak_rss_bytes: finished.peak_rss_bytes,
        verdicts,
        agreement: None,
        note,
    }
}

// ---------------------------------------------------------------------------------------------------
// Inputs: built once from shared/realworld and cached under the data directory.

/// crawl2019: the URLs of `urls/crawl2019-linkgraph.tsv` with the robots.txt files the same crawl fetched.
fn prepare_crawl2019(realworld: &Path, data_dir: &Path) -> Outcome<Inputs> {
    let tsv = realworld.join("urls/crawl2019-linkgraph.tsv");
    let dir = data_dir.join("crawl2019");
    let inputs = Inputs {
        name: "crawl2019".into(),
        urls: dir.join("urls.txt"),
        hosts: dir.join("hosts.tsv"),
        corpus: dir.join("corpus.jsonl"),
        dir: dir.clone(),
    };
    if inputs.urls.is_file() && inputs.hosts.is_file() && inputs.corpus.is_file() {
        return Ok(inputs);
    }
    let text = std::fs::read(&tsv).map_err(|e| format!("{}: {e}", tsv.display()))?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut hosts = BTreeMap::new();
    let mut urls = Vec::new();
    for (index, line) in text.split(|&b| b == b'\n').enumerate().skip(1) {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let (host, url, robots_file) = match fields.as_slice() {
            [host, url, robots_file, ..] => (host, url, robots_file),
            _ => return Err(format!("{}:{}: expected host, url, robots_file", tsv.display(), index + 1)),
        };
        urls.extend_from_slice(url);
        urls.push(b'\n');
        if !robots_file.is_empty() {
            let host = String::from_utf8_lossy(host).to_ascii_lowercase();
            hosts.entry(host).or_insert_with(|| realworld.join(String::from_utf8_lossy(robots_file).as_ref()));
        }
    }
    write_atomically(&inputs.urls, |w| w.write_all(&urls))?;
    write_host_files(&inputs, &hosts)?;
    println!("crawl2019: prepared {} hosts in {}", hosts.len(), dir.display());
    Ok(inputs)
}

/// synthetic: `synth_frontier.py` output over every robots.txt file of `realworld/robots/`.
fn prepare_synthetic(realworld: &Path, data_dir: &Path, n: usize) -> Outcome<Inputs> {
    let script = realworld.join("synth_frontier.py");
    if !script.is_file() {
        return Err(format!("{} is missing", script.display()));
    }
    let robots_dir = data_dir.join("all-robots");
    let inputs = Inputs {
        name: format!("synthetic-{n}"),
        urls: data_dir.join(format!("synthetic-n{n}-seed1.urls.txt")),
        hosts: robots_dir.join("hosts.tsv"),
        corpus: robots_dir.join("corpus.jsonl"),
        dir: data_dir.join(format!("synthetic-n{n}")),
    };
    std::fs::create_dir_all(&inputs.dir).map_err(|e| format!("{}: {e}", inputs.dir.display()))?;
    if !(inputs.hosts.is_file() && inputs.corpus.is_file()) {
        std::fs::create_dir_all(&robots_dir).map_err(|e| format!("{}: {e}", robots_dir.display()))?;
        let dir = realworld.join("robots");
        let mut hosts = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if let Some(host) = name.strip_suffix(".txt") {
                hosts.insert(host.to_ascii_lowercase(), path.clone());
            }
        }
        write_host_files(&inputs, &hosts)?;
        println!("synthetic: prepared a corpus of {} hosts in {}", hosts.len(), robots_dir.display());
    }
    if !inputs.urls.is_file() {
        let frontier = data_dir.join(format!("synthetic-n{n}-seed1.tsv"));
        if !frontier.is_file() {
            println!("synthetic: generating {n} URLs with synth_frontier.py (about 40 s per million) ...");
            let out = File::create(frontier.with_extension("tsv.tmp")).map_err(|e| format!("{e}"))?;
            let status = Command::new("python3")
                .arg(&script)
                .arg("--root")
                .arg(realworld)
                .args(["--n", &n.to_string(), "--seed", "1"])
                .stdout(out)
                .status()
                .map_err(|e| format!("cannot run python3: {e}"))?;
            if !status.success() {
                return Err(format!("synth_frontier.py failed ({status})"));
            }
            std::fs::rename(frontier.with_extension("tsv.tmp"), &frontier).map_err(|e| e.to_string())?;
        }
        let reader = BufReader::new(File::open(&frontier).map_err(|e| format!("{}: {e}", frontier.display()))?);
        write_atomically(&inputs.urls, |w| {
            for line in reader.split(b'\n').skip(1) {
                let line = line?;
                if let Some(url) = line.split(|&b| b == b'\t').nth(1) {
                    w.write_all(url)?;
                    w.write_all(b"\n")?;
                }
            }
            Ok(())
        })?;
    }
    Ok(inputs)
}

/// Writes the host table (host, robots.txt path) and the JSON Lines corpus (an http and an https record
/// with status 200 and the file's exact bytes per host) for the same hosts.
fn write_host_files(inputs: &Inputs, hosts: &BTreeMap<String, PathBuf>) -> Outcome<()> {
    write_atomically(&inputs.hosts, |w| {
        for (host, path) in hosts {
            let absolute = std::fs::canonicalize(path)?;
            writeln!(w, "{host}\t{}", absolute.display())?;
        }
        Ok(())
    })?;
    write_atomically(&inputs.corpus, |w| {
        for (host, path) in hosts {
            let bytes = std::fs::read(path)?;
            let body = match std::str::from_utf8(&bytes) {
                Ok(text) => format!("\"body\":{}", serde_json::to_string(text)?),
                Err(_) => format!("\"body_b64\":\"{}\"", base64::engine::general_purpose::STANDARD.encode(&bytes)),
            };
            for scheme in ["http", "https"] {
                let url = serde_json::to_string(&format!("{scheme}://{host}/robots.txt"))?;
                writeln!(w, "{{\"url\":{url},\"status\":200,{body}}}")?;
            }
        }
        Ok(())
    })
}

/// Writes `path` through a temporary file renamed into place, so a cached input is never half written.
fn write_atomically(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Outcome<()> {
    let temporary = path.with_extension("tmp");
    let result = (|| {
        let mut writer = BufWriter::new(File::create(&temporary)?);
        fill(&mut writer)?;
        writer.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    result.map_err(|e| format!("writing {}: {e}", path.display()))
}

fn count_lines(path: &Path) -> Outcome<u64> {
    Ok(UrlList::open(path)?.lines().count() as u64)
}

// ---------------------------------------------------------------------------------------------------
// Child: one in-process peer.

fn run_only(peer: Peer, args: &Args) -> Outcome<()> {
    let urls = args.urls.as_deref().ok_or("--only needs --urls")?;
    let hosts = args.hosts.as_deref().ok_or("--only needs --hosts")?;
    let agent = args.agent.as_deref().ok_or("--only needs --agent")?;
    // The libraries measured may panic on odd input; such URLs are counted as failed, quietly.
    std::panic::set_hook(Box::new(|_| {}));
    let mut run = match peer {
        Peer::Floor => run_floor(urls, args.repeat)?,
        Peer::TextingRobots => run_texting_robots(urls, hosts, agent, args.repeat)?,
        Peer::Robotstxt => run_robotstxt(urls, hosts, agent, args)?,
    };
    run.peak_rss_bytes = peak_rss_of_self()?;
    println!("{}", serde_json::to_string(&run).map_err(|e| e.to_string())?);
    Ok(())
}

/// VmHWM of this process: its peak resident set.
fn peak_rss_of_self() -> Outcome<u64> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).ok_or("/proc/self/status has no VmHWM")?;
    let kilobytes: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).ok_or("bad VmHWM line")?;
    Ok(kilobytes * 1024)
}

/// A memory-mapped URL list.
struct UrlList {
    map: memmap2::Mmap,
}

impl UrlList {
    fn open(path: &Path) -> Outcome<UrlList> {
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: the list is generated by this program and not modified while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(UrlList { map })
    }

    /// The lines, without their newline.
    fn lines(&self) -> impl Iterator<Item = &[u8]> {
        let bytes: &[u8] = &self.map;
        let mut start = 0;
        memchr::memchr_iter(b'\n', bytes)
            .map(move |end| {
                let line = &bytes[start..end];
                start = end + 1;
                line
            })
            .chain(std::iter::once(&bytes[self.last_line_start()..]).filter(|l| !l.is_empty()))
    }

    fn last_line_start(&self) -> usize {
        memchr::memrchr(b'\n', &self.map).map_or(0, |i| i + 1)
    }
}

/// Wall and CPU time of one timed phase.
struct Clock {
    wall: Instant,
    cpu: f64,
}

impl Clock {
    fn start() -> Clock {
        Clock { wall: Instant::now(), cpu: process_cpu_seconds() }
    }

    /// (wall seconds, CPU seconds) since `start`.
    fn read(&self) -> (f64, f64) {
        (self.wall.elapsed().as_secs_f64(), process_cpu_seconds() - self.cpu)
    }
}

/// CPU time this process has used so far (all threads; the peers run on one).
fn process_cpu_seconds() -> f64 {
    // SAFETY: timespec is plain old data that clock_gettime fills in.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

/// The floor: map the list and visit every line end, as any per-URL engine must at least do. Each pass
/// maps the file afresh (so page-table setup counts, as it does for an engine that maps the list);
/// the fastest of `repeat` passes (at least two: the first warms the page cache).
fn run_floor(urls: &Path, repeat: usize) -> Outcome<PeerRun> {
    let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
    let mut lines = 0;
    for _ in 0..repeat.max(2) {
        let clock = Clock::start();
        let list = UrlList::open(urls)?;
        // Visit each line end; memchr's own count() would skip the per-line step no engine can skip.
        let mut count = 0u64;
        for end in memchr::memchr_iter(b'\n', &list.map) {
            count += 1;
            std::hint::black_box(end);
        }
        lines = count;
        drop(list);
        let (wall, cpu) = clock.read();
        best = best.min(wall);
        best_cpu = best_cpu.min(cpu);
    }
    Ok(PeerRun {
        urls: lines,
        seconds: best,
        cpu_seconds: best_cpu,
        note: format!("map + visit each line, best of {}", repeat.max(2)),
        ..PeerRun::default()
    })
}

/// The in-process peers' robots.txt lookup: each host's entry under the origin keys of its http and
/// https records, found for a URL with the engine's own URL splitter, so that every engine agrees on
/// which URLs are unknown (no robots.txt) or invalid.
struct OriginTable<T> {
    entries: Vec<T>,
    index: HashMap<OriginKey, usize>,
    keys: KeyBuf,
}

impl<T> OriginTable<T> {
    /// Builds the table from the host table at `path`, making each host's entry with `make(body)`.
    fn load(path: &Path, mut make: impl FnMut(Vec<u8>) -> T) -> Outcome<OriginTable<T>> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut table = OriginTable { entries: Vec::new(), index: HashMap::new(), keys: KeyBuf::new() };
        for (index, line) in text.lines().enumerate() {
            let Some((host, file)) = line.split_once('\t') else {
                return Err(format!("{}:{}: expected host<TAB>path", path.display(), index + 1));
            };
            let body = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
            let entry = table.entries.len();
            table.entries.push(make(body));
            for scheme in ["http", "https"] {
                // A host name the engine rejects can govern no URL; its entry stays unreachable.
                if let Ok(key) = OriginKey::of_robots_url(format!("{scheme}://{host}/robots.txt")) {
                    table.index.insert(key, entry);
                }
            }
        }
        Ok(table)
    }

    /// Sorts one URL into a verdict: find its origin's entry, then ask `decide` (None: the library failed).
    /// URLs that are not UTF-8 count as failed: neither library takes them. Returns the verdict's name,
    /// as robotsieve writes it.
    fn judge(
        &mut self,
        url: &[u8],
        verdicts: &mut Verdicts,
        decide: impl FnOnce(&T, &str) -> Option<bool>,
    ) -> &'static str {
        let entry = match self.keys.parse(url) {
            Err(_) => {
                verdicts.invalid += 1;
                return "invalid";
            }
            Ok(origin) => match self.index.get(origin.key) {
                None => {
                    verdicts.unknown += 1;
                    return "unknown";
                }
                Some(&entry) => &self.entries[entry],
            },
        };
        match std::str::from_utf8(url).ok().and_then(|url| decide(entry, url)) {
            None => {
                verdicts.failed += 1;
                "failed"
            }
            Some(true) => {
                verdicts.allowed += 1;
                "allowed"
            }
            Some(false) => {
                verdicts.disallowed += 1;
                "disallowed"
            }
        }
    }
}

/// texting_robots: one `Robot` per host, built up front (timed as setup), then `allowed` per URL.
fn run_texting_robots(urls: &Path, hosts: &Path, agent: &str, repeat: usize) -> Outcome<PeerRun> {
    let mut setup_seconds = 0.0;
    let mut parse_failures = 0;
    let mut robots = OriginTable::load(hosts, |body| {
        let started = Instant::now();
        let robot = std::panic::catch_unwind(|| texting_robots::Robot::new(agent, &body)).ok().and_then(Result::ok);
        setup_seconds += started.elapsed().as_secs_f64();
        parse_failures += u64::from(robot.is_none());
        robot
    })?;
    let list = UrlList::open(urls)?;
    let mut verdicts = Verdicts::default();
    let (mut seconds, mut cpu_seconds) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeat.max(1) {
        verdicts = Verdicts::default();
        let clock = Clock::start();
        for url in list.lines() {
            robots.judge(url, &mut verdicts, |robot, url| {
                let robot = robot.as_ref()?;
                std::panic::catch_unwind(|| robot.allowed(url)).ok()
            });
        }
        let (wall, cpu) = clock.read();
        seconds = seconds.min(wall);
        cpu_seconds = cpu_seconds.min(cpu);
    }
    let urls = verdicts.allowed + verdicts.disallowed + verdicts.unknown + verdicts.invalid + verdicts.failed;
    Ok(PeerRun {
        urls,
        seconds,
        cpu_seconds,
        setup_files: robots.entries.len() as u64,
        setup_seconds,
        verdicts: Some(verdicts),
        peak_rss_bytes: 0,
        note: format!("best of {}; {parse_failures} files failed to parse (URLs count as failed)", repeat.max(1)),
    })
}

/// robotstxt: Google's matcher re-parses the host's robots.txt for each URL of an evenly spread sample.
/// Writes `index<TAB>verdict` per sampled URL to `sample_out`, for the per-URL comparison with robotsieve.
fn run_robotstxt(urls: &Path, hosts: &Path, agent: &str, args: &Args) -> Outcome<PeerRun> {
    let (sample, limit_seconds) = (args.sample, args.robotstxt_seconds);
    // The crate takes &str; invalid UTF-8 becomes U+FFFD, which it escapes like any non-ASCII byte.
    let mut bodies = OriginTable::load(hosts, |body| String::from_utf8_lossy(&body).into_owned())?;
    let list = UrlList::open(urls)?;
    let total = list.lines().count();
    let stride = total.div_ceil(sample.max(1)).max(1);
    let mut verdicts = Verdicts::default();
    let mut answers = Vec::with_capacity(sample);
    let mut note = format!("sample of every {stride}th URL");
    let clock = Clock::start();
    for (index, url) in list.lines().enumerate().step_by(stride) {
        let verdict = bodies.judge(url, &mut verdicts, |body, url| {
            std::panic::catch_unwind(|| {
                let mut matcher = robotstxt::DefaultMatcher::default();
                matcher.one_agent_allowed_by_robots(body, agent, url)
            })
            .ok()
        });
        answers.push((index, verdict));
        if clock.read().0 > limit_seconds {
            note.push_str(&format!(", stopped after {limit_seconds} s"));
            break;
        }
    }
    let (seconds, cpu_seconds) = clock.read();
    if let Some(path) = &args.sample_out {
        write_atomically(path, |w| answers.iter().try_for_each(|(index, verdict)| writeln!(w, "{index}\t{verdict}")))?;
    }
    let urls = answers.len() as u64;
    Ok(PeerRun { urls, seconds, cpu_seconds, verdicts: Some(verdicts), note, ..PeerRun::default() })
}
