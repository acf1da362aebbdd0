//! Compile throughput over the real-world corpus: compiles the group of every
//! `../shared/realworld/robots/*.txt` file for one crawler (rayon, all cores)
//! and prints files per second, states, table bytes, how many groups were
//! split, and the slowest files.
//!
//! Usage: `cargo run --release -p robotsieve-benches --bin compile_corpus -- [--explain] [--agent TOKEN]
//! [--max-work N] [--max-states N]`; `ONLY=substring` restricts the files.

use rayon::prelude::*;
use robotsieve_compiler::automaton::{compile, Budget, BuildOptions};
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_testkit::shared_dir;
use std::time::{Duration, Instant};

struct FileResult {
    name: String,
    rules: usize,
    states: usize,
    bytes: usize,
    split: bool,
    fallback: usize,
    time: Duration,
}

fn main() {
    let mut explain = false;
    let mut budget = Budget::default();
    let mut agent = String::from("googlebot");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--explain" => explain = true,
            "--max-work" => budget.max_work = number(args.next()),
            "--max-states" => budget.max_states = number(args.next()) as usize,
            "--agent" => agent = args.next().unwrap_or_else(|| fail("--agent needs a token")),
            other => fail(&format!(
                "unknown argument {other:?} (expected --explain, --agent TOKEN, --max-work N, --max-states N)"
            )),
        }
    }
    let agent = Agent::parse(&agent).unwrap_or_else(|e| fail(&e.to_string()));
    let Some(dir) = shared_dir().map(|d| d.join("realworld/robots")).filter(|d| d.is_dir()) else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let only = std::env::var("ONLY").ok();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .filter(|p| only.iter().all(|o| p.to_string_lossy().contains(o.as_str())))
        .collect();
    files.sort();
    let bodies: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| {
            let body = std::fs::read(p).unwrap_or_else(|e| fail(&format!("{}: {e}", p.display())));
            (p.file_name().unwrap_or_default().to_string_lossy().into_owned(), body)
        })
        .collect();
    let options = BuildOptions { explain, budget };
    let started = Instant::now();
    let mut results: Vec<FileResult> = bodies
        .par_iter()
        .map(|(name, body)| {
            let t = Instant::now();
            let group = Group::select(&RobotsTxt::parse(body), &agent);
            let compiled = compile(&group, &options);
            FileResult {
                name: name.clone(),
                rules: group.rules.len(),
                states: compiled.stats.states(),
                bytes: compiled.stats.table_bytes(),
                split: compiled.stats.split,
                fallback: compiled.stats.fallback_patterns,
                time: t.elapsed(),
            }
        })
        .collect();
    let wall = started.elapsed();
    let n = results.len();
    println!(
        "{n} files for {agent} ({} mode) in {:.2} s on {} threads: {:.0} files/s (parse + select + compile)",
        if explain { "explain" } else { "verdict" },
        wall.as_secs_f64(),
        rayon::current_num_threads(),
        n as f64 / wall.as_secs_f64()
    );
    println!(
        "total: {} rules, {} states, {:.1} MiB of tables (u32 transitions); {} groups split, {} with a per-rule fallback ({} patterns)",
        results.iter().map(|r| r.rules).sum::<usize>(),
        results.iter().map(|r| r.states).sum::<usize>(),
        results.iter().map(|r| r.bytes).sum::<usize>() as f64 / (1 << 20) as f64,
        results.iter().filter(|r| r.split).count(),
        results.iter().filter(|r| r.fallback > 0).count(),
        results.iter().map(|r| r.fallback).sum::<usize>(),
    );
    results.sort_by_key(|r| std::cmp::Reverse(r.time));
    println!("slowest:");
    for r in results.iter().take(10) {
        println!(
            "  {:>9.2} ms  {:<40} {:>6} rules {:>7} states {:>9} bytes{}",
            r.time.as_secs_f64() * 1e3,
            r.name,
            r.rules,
            r.states,
            r.bytes,
            if r.split { format!("  split, {} in fallback", r.fallback) } else { String::new() }
        );
    }
}

fn number(arg: Option<String>) -> u64 {
    arg.and_then(|a| a.replace('_', "").parse().ok())
        .unwrap_or_else(|| fail("--max-work and --max-states need a number"))
}

fn fail(msg: &str) -> ! {
    eprintln!("compile_corpus: {msg}");
    std::process::exit(2);
}
