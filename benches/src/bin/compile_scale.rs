//! Compile at web scale: wall time, files/s, CPU time, peak RSS and bytes per
//! origin for N synthetic distinct origins, for the real corpus as it is,
//! and for the real files made distinct through `robotsieve compile` (this
//! build's, and another build's when `--baseline` names its binary).
//!
//! The synthetic origins are `https://h{i}.example`, each serving real file
//! `i mod F` of `../shared/realworld/robots` with one rule unique to its host
//! appended (`user-agent: *` / `disallow: /robotsieve-bench-{i}/`), so that
//! every origin's group is distinct. They are made a batch at a time and
//! streamed through the library's `build` into an artifact under
//! `target/scale/`, in a child process per size, so that each peak RSS is its
//! own (`wait4`). Nothing generated goes into the repository.
//!
//! With `--tiny`, each synthetic origin serves only its unique rule (no real
//! file): every group is still distinct, but compiling it costs next to
//! nothing, so a million origins measure what the build keeps per origin and
//! per group (the origin index, the group ids) in minutes.
//!
//! Usage: `nice cargo run --release -p robotsieve-benches --bin compile_scale --
//! [--sizes 100000,300000,1000000] [--memory BYTES] [--baseline PATH/robotsieve] [--no-cli] [--tiny]`
//! (build `robotsieve` in release first: the CLI runs use the binary beside this one).
//!
//! To see what sets the peak: `COMPILE_SCALE_TRACE=1 compile_scale synth-build N
//! OUT MEMORY real` prints after every batch the live heap bytes, their peak
//! during the batch, VmRSS and VmHWM (the allocator counts only when the
//! variable is set); `COMPILE_SCALE_TRACE=1 compile_scale group-peaks` builds
//! each real file's group alone and lists the largest builds' peak heap bytes.
//! `compile_scale synth-corpus N OUT` writes the origins `synth-build N`
//! builds as a corpus (JSON Lines) for `robotsieve compile --corpus`.

use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build, BuildPlan};
use robotsieve_engine::{ArtifactWriter, DEFAULT_MEMORY};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::corpus::{Corpus, FetchRecord, Place, SourceRef};
use robotsieve_testkit::shared_dir;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

/// Synthetic origins per generated chunk (resolved as one small corpus).
const CHUNK: usize = 4096;

/// The heap bytes this process holds, counted by [`Counting`] when
/// `COMPILE_SCALE_TRACE` is set (`synth-build` then prints, after every
/// batch, the live heap bytes, their peak during the batch and the kernel's
/// VmRSS and VmHWM, to see what sets the peak RSS).
static TRACE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static LIVE_PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The system allocator, counting live bytes while [`TRACE`] is on.
struct Counting;

// SAFETY: every call is passed on to `System` unchanged; the counters only observe.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        if TRACE.load(Relaxed) {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            LIVE_PEAK.fetch_max(live, Relaxed);
        }
        // SAFETY: the caller's contract for `alloc`.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if TRACE.load(std::sync::atomic::Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `dealloc`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// VmRSS and VmHWM of this process in KiB, from /proc/self/status.
fn rss_kib() -> (usize, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    // Counted from the start, so that nothing counted is freed uncounted
    // (what the runtime allocated before main is not freed before the end).
    TRACE.store(std::env::var_os("COMPILE_SCALE_TRACE").is_some(), std::sync::atomic::Ordering::Relaxed);
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("synth-build") {
        return synth_build(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("group-peaks") {
        return group_peaks();
    }
    if args.first().map(String::as_str) == Some("synth-corpus") {
        return synth_corpus(&args[1..]);
    }
    let mut sizes = vec![100_000usize, 300_000, 1_000_000];
    let mut memory = DEFAULT_MEMORY;
    let mut baseline: Option<PathBuf> = None;
    let mut cli = true;
    let mut tiny = false;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sizes" => {
                let list = it.next().unwrap_or_else(|| fail("--sizes needs a list"));
                sizes = list.split(',').filter(|s| !s.is_empty()).map(number).collect();
            }
            "--memory" => memory = number(&it.next().unwrap_or_else(|| fail("--memory needs a byte count"))),
            "--baseline" => {
                baseline = Some(PathBuf::from(it.next().unwrap_or_else(|| fail("--baseline needs a path"))))
            }
            "--no-cli" => cli = false,
            "--tiny" => tiny = true,
            other => fail(&format!("unknown argument {other:?}")),
        }
    }
    let Some(robots) = shared_dir().map(|d| d.join("realworld/robots")).filter(|d| d.is_dir()) else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&e.to_string()));
    let bin_dir = exe.parent().expect("the binary is in a directory").to_path_buf();
    let work = bin_dir.join("../scale");
    std::fs::create_dir_all(&work).unwrap_or_else(|e| fail(&format!("{}: {e}", work.display())));
    let files = real_files(&robots);
    println!("{} real files; machine: {} cores; runs under this process's niceness", files.len(), cores());
    println!();
    println!("| input | build | origins | distinct groups | wall s | CPU s | files/s | files per CPU-s | peak RSS MB | artifact MB | bytes/origin |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");

    if cli {
        let ours = bin_dir.join("robotsieve");
        if !ours.is_file() {
            fail(&format!("{} is missing: cargo build --release -p robotsieve-cli", ours.display()));
        }
        let distinct = work.join(format!("distinct-{}.jsonl", files.len()));
        if !distinct.is_file() {
            write_distinct_corpus(&files, files.len(), &distinct);
        }
        let corpus = ["--corpus".to_string(), distinct.display().to_string()];
        let real = ["--robots-dir".to_string(), robots.display().to_string()];
        let mut runs: Vec<(&str, &Path, &[String])> =
            vec![("real files made distinct", &ours, &corpus), ("real corpus as it is (http + https)", &ours, &real)];
        if let Some(main) = &baseline {
            runs.insert(1, ("real files made distinct", main, &corpus));
            runs.push(("real corpus as it is (http + https)", main, &real));
        }
        for (input, bin, source) in runs {
            let out = work.join("cli.rsv");
            let mut cmd = Command::new(bin);
            cmd.args(["compile", "--agent", "mybot"]).args(source).arg("-o").arg(&out);
            let run = measure(cmd);
            let summary = String::from_utf8_lossy(&run.stderr);
            let origins = field_before(&summary, " origins (");
            let groups = field_before(&summary, " distinct groups");
            let label = if bin == ours.as_path() { "candidate" } else { "baseline" };
            row(input, label, origins, groups, &run, std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0));
        }
    }
    for n in sizes {
        let out = work.join(format!("synthetic-{n}.rsv"));
        let mut cmd = Command::new(&exe);
        let kind = if tiny { "tiny" } else { "real" };
        cmd.args(["synth-build", &n.to_string(), &out.display().to_string(), &memory.to_string(), kind]);
        let run = measure(cmd);
        let text = String::from_utf8_lossy(&run.stdout);
        let groups = field_after(&text, "groups=");
        let bytes = field_after(&text, "bytes=");
        let input = if tiny {
            "synthetic distinct origins, one rule each (library build)"
        } else {
            "synthetic distinct origins (library build)"
        };
        row(input, "candidate", n, groups, &run, bytes as u64);
        let _ = std::fs::remove_file(&out);
    }
}

/// Child mode: `synth-build N OUTPUT MEMORY real|tiny`.
fn synth_build(args: &[String]) {
    let [n, out, memory, kind] = args else { fail("synth-build N OUTPUT MEMORY real|tiny") };
    let tiny = kind == "tiny";
    let (n, memory) = (number(n), number(memory));
    let robots = shared_dir().map(|d| d.join("realworld/robots")).unwrap_or_else(|| fail("no shared dir"));
    let files = real_files(&robots);
    let agents = vec![Agent::parse("mybot").expect("a valid token")];
    let plan = BuildPlan { agents: agents.clone(), options: BuildOptions::default(), memory };
    let mut writer = ArtifactWriter::create(Path::new(out), vec!["mybot".into()], false, memory)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let source = SourceRef { file: Arc::from("synthetic"), place: Place::File };
    let mut next = 0usize;
    let chunks = std::iter::from_fn(|| {
        if next >= n {
            return None;
        }
        let mut corpus = Corpus::new();
        for i in next..(next + CHUNK).min(n) {
            let path = &files[i % files.len()];
            let mut body = if tiny {
                Vec::new()
            } else {
                std::fs::read(path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())))
            };
            body.extend_from_slice(unique_rule(i).as_bytes());
            corpus.push(FetchRecord::new(format!("https://h{i}.example/robots.txt"), 200, body.into(), source.clone()));
        }
        next += CHUNK;
        Some(corpus.resolve().origins.into_values())
    });
    let trace = std::env::var_os("COMPILE_SCALE_TRACE").is_some();
    let on_batch = |report: &robotsieve_compiler::build::BuildReport| {
        if trace {
            use std::sync::atomic::Ordering::Relaxed;
            let (rss, hwm) = rss_kib();
            let live = LIVE.load(Relaxed);
            let peak = LIVE_PEAK.swap(live, Relaxed);
            eprintln!(
                "trace origins={} live_mb={:.1} batch_peak_live_mb={:.1} rss_mb={:.1} hwm_mb={:.1}",
                report.origins,
                live as f64 / 1048576.0,
                peak as f64 / 1048576.0,
                rss as f64 / 1024.0,
                hwm as f64 / 1024.0
            );
        }
    };
    let report = build(chunks.flatten(), &plan, &mut writer, on_batch).unwrap_or_else(|e| fail(&e.to_string()));
    let bytes = writer.finish().unwrap_or_else(|e| fail(&e.to_string()));
    println!("origins={} groups={} bytes={bytes}", report.origins, report.groups);
}

/// Mode `synth-corpus N OUTPUT`: the origins `synth-build N` builds (with real
/// files), as a corpus that a `robotsieve` binary compiles itself
/// (`benches/filter_scale.sh`, for a binary that does not read the format of
/// this build's artifacts).
fn synth_corpus(args: &[String]) {
    let [n, out] = args else { fail("synth-corpus N OUTPUT") };
    let robots = shared_dir().map(|d| d.join("realworld/robots")).unwrap_or_else(|| fail("no shared dir"));
    let files = real_files(&robots);
    if files.is_empty() {
        fail(&format!("no .txt files in {}", robots.display()));
    }
    write_distinct_corpus(&files, number(n), Path::new(out));
}

/// Diagnostic mode `group-peaks` (with `COMPILE_SCALE_TRACE` set): compiles
/// and encodes each real file's group (with its unique rule) alone, on one
/// thread, and prints the heap bytes each build held at its peak and its
/// blob's size, largest first.
fn group_peaks() {
    use std::sync::atomic::Ordering::Relaxed;
    let robots = shared_dir().map(|d| d.join("realworld/robots")).unwrap_or_else(|| fail("no shared dir"));
    let files = real_files(&robots);
    let agent = Agent::parse("mybot").expect("a valid token");
    let options = BuildOptions::default();
    let mut peaks: Vec<(usize, usize, usize, String)> = Vec::new();
    // Per file in order: whether its build took the large-build token.
    let mut takes_token: Vec<bool> = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let mut body = std::fs::read(path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
        body.extend_from_slice(unique_rule(i).as_bytes());
        let robots = robotsieve_robotstxt::parse::RobotsTxt::parse(&body);
        let group = robotsieve_robotstxt::group::Group::select(&robots, &agent);
        let base = LIVE.load(Relaxed);
        LIVE_PEAK.store(base, Relaxed);
        let large = robotsieve_compiler::automaton::LargeBuilds::default();
        let mut gate = robotsieve_compiler::automaton::BuildGate::on(&large);
        let compiled = robotsieve_compiler::automaton::compile_gated(&group, &options, &mut gate);
        takes_token.push(gate.holds_token());
        let blob = robotsieve_engine::encode_group(&compiled.matcher, false, &[]).expect("encodes");
        let peak = LIVE_PEAK.load(Relaxed) - base;
        peaks.push((peak, blob.len(), group.rules.len(), path.file_name().unwrap().to_string_lossy().into()));
    }
    // Large builds per batch of a synthetic run (4,096 consecutive files, cyclically).
    let n = takes_token.len();
    let window = 4096.min(n);
    let per_window: Vec<usize> =
        (0..n).map(|start| (start..start + window).filter(|&i| takes_token[i % n]).count()).collect();
    println!(
        "large_builds={} fewest_per_{window}_files={} most={}",
        takes_token.iter().filter(|&&t| t).count(),
        per_window.iter().min().unwrap_or(&0),
        per_window.iter().max().unwrap_or(&0)
    );
    peaks.sort_by(|a, b| b.cmp(a));
    let total: usize = peaks.iter().map(|p| p.0).sum();
    println!("files={} sum_of_peaks_mb={:.1}", peaks.len(), total as f64 / 1048576.0);
    for (peak, blob, rules, name) in peaks.iter().take(40) {
        println!(
            "peak_mb={:.2} blob_mb={:.2} rules={rules} {name}",
            *peak as f64 / 1048576.0,
            *blob as f64 / 1048576.0
        );
    }
    for t in [1usize, 2, 4, 8, 16, 32] {
        let n = peaks.iter().filter(|p| p.0 >= t << 20).count();
        println!("builds_at_or_over_{t}_mb={n}");
    }
    let mut blobs: Vec<usize> = peaks.iter().map(|p| p.1).collect();
    blobs.sort_unstable_by(|a, b| b.cmp(a));
    println!("largest blobs mb: {:?}", blobs.iter().take(10).map(|b| b / 1024).collect::<Vec<_>>());
}

/// The rule that makes origin `i`'s group its own.
fn unique_rule(i: usize) -> String {
    format!("\nuser-agent: *\ndisallow: /robotsieve-bench-{i}/\n")
}

fn real_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// The `n` synthetic origins of `synth-build` (origin `i` serving real file
/// `i mod F` with its unique rule) as JSON Lines, for `robotsieve compile
/// --corpus`: with `n` = F, every real file once.
fn write_distinct_corpus(files: &[PathBuf], n: usize, path: &Path) {
    let temp = path.with_extension("tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&temp).unwrap_or_else(|e| fail(&e.to_string())));
    for i in 0..n {
        let file = &files[i % files.len()];
        let mut body = std::fs::read(file).unwrap_or_else(|e| fail(&format!("{}: {e}", file.display())));
        body.extend_from_slice(unique_rule(i).as_bytes());
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &body);
        let record =
            serde_json::json!({"url": format!("https://h{i}.example/robots.txt"), "status": 200, "body_b64": b64});
        writeln!(out, "{record}").unwrap_or_else(|e| fail(&e.to_string()));
    }
    out.flush().unwrap_or_else(|e| fail(&e.to_string()));
    std::fs::rename(&temp, path).unwrap_or_else(|e| fail(&e.to_string()));
}

/// What a child run cost.
struct Run {
    wall: f64,
    cpu: f64,
    max_rss_kb: i64,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs `cmd` to its end and measures it with `wait4` (its own peak RSS
/// and CPU time, not the sum over every child so far).
fn measure(mut cmd: Command) -> Run {
    let started = Instant::now();
    let out_path = std::env::temp_dir().join(format!("compile_scale-{}.out", std::process::id()));
    let err_path = out_path.with_extension("err");
    let stdout = std::fs::File::create(&out_path).unwrap_or_else(|e| fail(&e.to_string()));
    let stderr = std::fs::File::create(&err_path).unwrap_or_else(|e| fail(&e.to_string()));
    let mut child = cmd.stdout(stdout).stderr(stderr).spawn().unwrap_or_else(|e| fail(&format!("{cmd:?}: {e}")));
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child's pid with valid pointers; the child is
    // reaped here; `Child::wait` below then finds nothing to wait for.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    if pid < 0 {
        fail(&format!("wait4: {}", std::io::Error::last_os_error()));
    }
    // Already reaped by wait4: this finds no process (and leaves no zombie).
    let _ = child.wait();
    let wall = started.elapsed().as_secs_f64();
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let run = Run {
        wall,
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        max_rss_kb: usage.ru_maxrss,
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: std::fs::read(&err_path).unwrap_or_default(),
    };
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        fail(&format!("{cmd:?} failed: {}", String::from_utf8_lossy(&run.stderr)));
    }
    run
}

fn row(input: &str, build: &str, origins: usize, groups: usize, run: &Run, bytes: u64) {
    println!(
        "| {input} | {build} | {origins} | {groups} | {:.1} | {:.1} | {:.0} | {:.0} | {:.0} | {:.1} | {} |",
        run.wall,
        run.cpu,
        groups as f64 / run.wall,
        groups as f64 / run.cpu,
        run.max_rss_kb as f64 / 1024.0,
        bytes as f64 / 1e6,
        bytes / origins.max(1) as u64,
    );
}

/// The number just before `marker` in `text` (the CLI's summary line).
fn field_before(text: &str, marker: &str) -> usize {
    let Some(end) = text.find(marker) else { return 0 };
    let start = text[..end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    text[start..end].parse().unwrap_or(0)
}

/// The number just after `marker` in `text`.
fn field_after(text: &str, marker: &str) -> usize {
    let Some(start) = text.find(marker).map(|i| i + marker.len()) else { return 0 };
    let digits: String = text[start..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn number(arg: &str) -> usize {
    arg.replace('_', "").parse().unwrap_or_else(|_| fail(&format!("{arg:?} is not a number")))
}

fn fail(msg: &str) -> ! {
    eprintln!("compile_scale: {msg}");
    std::process::exit(2);
}
