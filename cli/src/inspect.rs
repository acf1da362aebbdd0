//! `robotsieve inspect`: what an artifact holds, and one origin's rules.

use crate::failure::{fail, Context, Failure};
use robotsieve_engine::artifact::{Artifact, FetchKind, Section};
use robotsieve_engine::preference::format_entries;
use robotsieve_engine::shards::ShardSet;
use robotsieve_engine::url::OriginKey;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `robotsieve inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The compiled artifact, or the directory of a shard set (`robotsieve compile`).
    #[arg(long, value_name = "ARTIFACT", required_unless_present = "artifact")]
    rules: Option<PathBuf>,
    /// The old spelling of --rules: the artifact as the first argument.
    #[arg(value_name = "ARTIFACT", conflicts_with = "rules", hide = true)]
    artifact: Option<PathBuf>,
    /// Show the group of this origin (a URL or `scheme://host[:port]`) for each agent, with its rules.
    #[arg(long, value_name = "URL")]
    origin: Option<String>,
    /// How many of the largest groups to list.
    #[arg(long, default_value_t = 10)]
    largest: usize,
}

/// Runs `inspect`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    if args.artifact.is_some() {
        crate::flags::deprecated("the artifact as an argument", "--rules ARTIFACT");
    }
    let path = args.rules.as_ref().or(args.artifact.as_ref()).expect("clap requires --rules or the argument");
    let started = Instant::now();
    let set = crate::input::open_rules(path)?;
    let opened = started.elapsed();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match &args.origin {
        Some(url) => {
            let key = OriginKey::of_url(url).map_err(|e| fail!("--origin {url}: {e}"))?;
            show_origin(&mut out, &set, &key).context("standard output")?;
        }
        None => overview(&mut out, &set, path, &args, opened).context("standard output")?,
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The summary of an artifact, or of a shard set and then each of its shards.
fn overview(out: &mut impl Write, set: &ShardSet, path: &Path, args: &Args, opened: Duration) -> io::Result<()> {
    let shards = set.shards();
    if let [artifact] = shards {
        return summary(out, artifact, path, args, opened);
    }
    writeln!(out, "shard set     {} ({} shards)", path.display(), shards.len())?;
    writeln!(out, "origins       {}", set.origins())?;
    writeln!(out, "groups        {} (distinct within each shard)", set.groups())?;
    writeln!(out, "bytes         {}", shards.iter().map(Artifact::len).sum::<usize>())?;
    writeln!(out, "opened in     {opened:.2?} (every shard checked, and each holds only its own origins)")?;
    for (artifact, path) in shards.iter().zip(set.paths()) {
        writeln!(out)?;
        summary(out, artifact, path, args, opened)?;
    }
    Ok(())
}

fn summary(out: &mut impl Write, artifact: &Artifact, path: &Path, args: &Args, opened: Duration) -> io::Result<()> {
    let meta = artifact.meta();
    writeln!(out, "artifact      {}", path.display())?;
    if let Some(shard) = &meta.shard {
        writeln!(out, "shard         {} of {} (by {})", shard.index, shard.count, shard.scheme)?;
    }
    writeln!(
        out,
        "format        version {}, semantics version {}",
        robotsieve_engine::artifact::FORMAT_VERSION,
        robotsieve_engine::artifact::SEMANTICS_VERSION
    )?;
    writeln!(out, "agents        {}", meta.agents.join("  "))?;
    for (k, v) in &meta.build {
        writeln!(out, "build         {k}: {v}")?;
    }
    writeln!(out, "explain       {}", if artifact.explains() { "yes (verdicts name their rule)" } else { "no" })?;
    writeln!(out, "opened in     {opened:.2?} (checksum and every table checked)")?;
    writeln!(out, "size          {} bytes", artifact.len())?;
    writeln!(out, "origins       {}", artifact.origins())?;
    writeln!(out, "groups        {} distinct", artifact.groups())?;
    writeln!(out, "bytes/origin  {}", artifact.len() / artifact.origins().max(1))?;
    let mut kinds = [0usize; 3];
    for o in 0..artifact.origins() {
        kinds[artifact.fetch_info(o).kind as usize] += 1;
    }
    writeln!(out, "fetch         {} rules, {} unrestricted, {} blocked", kinds[0], kinds[1], kinds[2])?;
    writeln!(out, "sections")?;
    for (section, size) in artifact.section_sizes() {
        writeln!(out, "  {:<18} {size:>14} bytes", section_name(section))?;
    }
    // Users per group, for the largest-groups table.
    let mut users = vec![(0usize, usize::MAX); artifact.groups()];
    for o in 0..artifact.origins() {
        for a in 0..meta.agents.len() {
            let g = artifact.group_of(o, a);
            users[g].0 += 1;
            users[g].1 = users[g].1.min(o);
        }
    }
    let first_user = |origin: usize| match origin {
        usize::MAX => "-".to_string(),
        o => String::from_utf8_lossy(artifact.origin_key(o)).into_owned(),
    };
    let stats: Vec<_> = (0..artifact.groups()).map(|g| artifact.group_stats(g)).collect();
    let states: usize = stats.iter().map(|s| s.states).sum();
    let split: Vec<usize> = (0..stats.len()).filter(|&g| stats[g].dfas > 1 || stats[g].fallback_rules > 0).collect();
    writeln!(out, "states        {states}")?;
    let combs: usize = stats.iter().map(|s| s.combs).sum();
    let dfas: usize = stats.iter().map(|s| s.dfas).sum();
    writeln!(out, "automata      {dfas} ({combs} stored as comb tables)")?;
    let mut order: Vec<usize> = (0..stats.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(stats[g].bytes));
    writeln!(out, "largest groups (bytes, states, automata, fallback rules, origins using it, first origin)")?;
    for &g in order.iter().take(args.largest) {
        let s = stats[g];
        let origin = first_user(users[g].1);
        writeln!(
            out,
            "  group {g:<7} {:>12} {:>9} {:>2} {:>6} {:>7}  {origin}",
            s.bytes, s.states, s.dfas, s.fallback_rules, users[g].0
        )?;
    }
    writeln!(out, "groups needing a split or per-rule fallback: {}", split.len())?;
    for &g in split.iter().take(args.largest) {
        let s = stats[g];
        let origin = first_user(users[g].1);
        writeln!(out, "  group {g:<7} {} automata, {} rules matched one by one  {origin}", s.dfas, s.fallback_rules)?;
    }
    Ok(())
}

fn section_name(section: Section) -> &'static str {
    section.name()
}

fn show_origin(out: &mut impl Write, set: &ShardSet, key: &OriginKey) -> io::Result<()> {
    let artifact = &set.shards()[set.shard_of(key.hash64())];
    let Some(origin) = artifact.find_origin(key.as_bytes(), key.hash64()) else {
        writeln!(out, "{key}: not in the artifact (its URLs are 'unknown')")?;
        return Ok(());
    };
    let info = artifact.fetch_info(origin);
    let fetch = match info.kind {
        FetchKind::Rules => format!("robots.txt fetched (status {})", info.status),
        FetchKind::Unrestricted => format!("no restrictions (status {})", info.status),
        FetchKind::Blocked => format!("everything disallowed (status {})", info.status),
    };
    writeln!(out, "{key}: {fetch}")?;
    for (a, agent) in artifact.meta().agents.iter().enumerate() {
        let g = artifact.group_of(origin, a);
        let s = artifact.group_stats(g);
        writeln!(
            out,
            "  agent {agent}: group {g} ({} states, {} automata, {} fallback rules)",
            s.states, s.dfas, s.fallback_rules
        )?;
        if artifact.explains() {
            for i in 0..artifact.rule_count(g) {
                if let Some(rule) = artifact.rule(g, i) {
                    let note = if rule.index_directory { "  (directory of an index.htm allow)" } else { "" };
                    writeln!(out, "    {:>6}: {rule}{note}", rule.line)?;
                }
            }
        } else {
            writeln!(out, "    (rules not kept: compile with --explain to list them)")?;
        }
        for line in artifact.preference_lines(origin, a) {
            let number = if artifact.explains() { line.line.to_string() } else { "-".into() };
            let path = String::from_utf8_lossy(&line.path);
            writeln!(out, "    {number:>6}: {}: {path} {}", line.field.name(), format_entries(&line.entries))?;
        }
    }
    Ok(())
}
