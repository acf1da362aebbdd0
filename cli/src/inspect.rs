//! `robotsieve inspect`: what an artifact holds, and one origin's rules.

use crate::failure::{fail, Failure};
use robotsieve_engine::artifact::{Artifact, FetchKind, Section};
use robotsieve_engine::preference::format_entries;
use robotsieve_engine::shards::ShardSet;
use robotsieve_engine::url::OriginKey;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `robotsieve inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The artifact, or the directory of a shard set.
    artifact: PathBuf,
    /// Show the group of this origin (a URL or `scheme://host[:port]`) for each agent, with its rules.
    #[arg(long, value_name = "URL")]
    origin: Option<String>,
    /// How many of the largest groups to list.
    #[arg(long, default_value_t = 10)]
    largest: usize,
    /// Check every byte of the artifact or shard set (every group's
    /// checksum and tables, every origin through the index), not only the
    /// header and index that opening checks; exit 2 naming the first damage.
    #[arg(long)]
    verify: bool,
}

/// Runs `inspect`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let started = Instant::now();
    let set = crate::input::open_rules(&args.artifact)?;
    let opened = started.elapsed();
    if args.verify {
        let started = Instant::now();
        set.verify().map_err(|e| fail!("{e}"))?;
        println!("verified      {} in {:.2?} (every byte checked)", args.artifact.display(), started.elapsed());
    }
    match &args.origin {
        Some(url) => show_origin(&set, url)?,
        None if set.shards().len() == 1 => summary(&set.shards()[0], &args.artifact, &args, opened)?,
        None => {
            let shards = set.shards();
            println!("shard set     {} ({} shards)", args.artifact.display(), shards.len());
            println!("origins       {}", set.origins());
            println!("groups        {} (distinct within each shard)", set.groups());
            println!("bytes         {}", shards.iter().map(Artifact::len).sum::<usize>());
            println!(
                "opened in     {opened:.2?} (each shard's header and index checked, each holds only its own origins)"
            );
            for (artifact, path) in shards.iter().zip(set.paths()) {
                println!();
                summary(artifact, path, &args, opened)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What one artifact holds; reading every group's statistics checks every
/// group, so a damaged one fails here.
fn summary(
    artifact: &Artifact,
    path: &std::path::Path,
    args: &Args,
    opened: std::time::Duration,
) -> Result<(), Failure> {
    let meta = artifact.meta();
    println!("artifact      {}", path.display());
    if let Some(shard) = &meta.shard {
        println!("shard         {} of {} (by {})", shard.index, shard.count, shard.scheme);
    }
    println!(
        "format        version {}, semantics version {}",
        robotsieve_engine::artifact::FORMAT_VERSION,
        robotsieve_engine::artifact::SEMANTICS_VERSION
    );
    println!("agents        {}", meta.agents.join("  "));
    for (k, v) in &meta.build {
        println!("build         {k}: {v}");
    }
    println!("explain       {}", if artifact.explains() { "yes (verdicts name their rule)" } else { "no" });
    println!("opened in     {opened:.2?} (header and index checked; each group on first use)");
    println!("size          {} bytes", artifact.len());
    println!("origins       {}", artifact.origins());
    println!("groups        {} distinct", artifact.groups());
    println!("bytes/origin  {}", artifact.len() / artifact.origins().max(1));
    let mut kinds = [0usize; 3];
    for o in 0..artifact.origins() {
        kinds[artifact.fetch_info(o).kind as usize] += 1;
    }
    println!("fetch         {} rules, {} unrestricted, {} blocked", kinds[0], kinds[1], kinds[2]);
    println!("sections");
    for (section, size) in artifact.section_sizes() {
        println!("  {:<18} {size:>14} bytes", section_name(section));
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
    let stats = (0..artifact.groups()).map(|g| artifact.group_stats(g)).collect::<Result<Vec<_>, _>>();
    let stats = stats.map_err(|e| fail!("{e}"))?;
    let states: usize = stats.iter().map(|s| s.states).sum();
    let split: Vec<usize> = (0..stats.len()).filter(|&g| stats[g].dfas > 1 || stats[g].fallback_rules > 0).collect();
    println!("states        {states}");
    let combs: usize = stats.iter().map(|s| s.combs).sum();
    let dfas: usize = stats.iter().map(|s| s.dfas).sum();
    println!("automata      {dfas} ({combs} stored as comb tables)");
    let mut order: Vec<usize> = (0..stats.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(stats[g].bytes));
    println!("largest groups (bytes, states, automata, fallback rules, origins using it, first origin)");
    for &g in order.iter().take(args.largest) {
        let s = stats[g];
        let origin = first_user(users[g].1);
        println!(
            "  group {g:<7} {:>12} {:>9} {:>2} {:>6} {:>7}  {origin}",
            s.bytes, s.states, s.dfas, s.fallback_rules, users[g].0
        );
    }
    println!("groups needing a split or per-rule fallback: {}", split.len());
    for &g in split.iter().take(args.largest) {
        let s = stats[g];
        let origin = first_user(users[g].1);
        println!("  group {g:<7} {} automata, {} rules matched one by one  {origin}", s.dfas, s.fallback_rules);
    }
    Ok(())
}

fn section_name(section: Section) -> &'static str {
    section.name()
}

fn show_origin(set: &ShardSet, url: &str) -> Result<(), Failure> {
    let key = OriginKey::of_url(url).map_err(|e| fail!("--origin {url}: {e}"))?;
    let artifact = &set.shards()[set.shard_of(key.hash64())];
    let Some(origin) = artifact.find_origin(key.as_bytes(), key.hash64()) else {
        println!("{key}: not in the artifact (its URLs are 'unknown')");
        return Ok(());
    };
    let info = artifact.fetch_info(origin);
    let fetch = match info.kind {
        FetchKind::Rules => format!("robots.txt fetched (status {})", info.status),
        FetchKind::Unrestricted => format!("no restrictions (status {})", info.status),
        FetchKind::Blocked => format!("everything disallowed (status {})", info.status),
    };
    println!("{key}: {fetch}");
    let sitemaps = artifact.sitemaps(origin);
    if sitemaps.is_empty() {
        println!("  sitemaps: none");
    }
    for sitemap in sitemaps {
        println!("  sitemap: {}", String::from_utf8_lossy(sitemap));
    }
    for (a, agent) in artifact.meta().agents.iter().enumerate() {
        let g = artifact.group_of(origin, a);
        let s = artifact.group_stats(g).map_err(|e| fail!("{e}"))?;
        println!(
            "  agent {agent}: group {g} ({} states, {} automata, {} fallback rules)",
            s.states, s.dfas, s.fallback_rules
        );
        if let Some(delay) = artifact.crawl_delay(origin, a) {
            println!("    crawl-delay: {} (kept, never used for verdicts)", String::from_utf8_lossy(delay));
        }
        if artifact.explains() {
            for i in 0..artifact.rule_count(g).map_err(|e| fail!("{e}"))? {
                if let Some(rule) = artifact.rule(g, i).map_err(|e| fail!("{e}"))? {
                    let note = if rule.index_directory { "  (directory of an index.htm allow)" } else { "" };
                    println!("    {:>6}: {rule}{note}", rule.line);
                }
            }
        } else {
            println!("    (rules not kept: compile with --explain to list them)");
        }
        for line in artifact.preference_lines(origin, a) {
            let number = if artifact.explains() { line.line.to_string() } else { "-".into() };
            let path = String::from_utf8_lossy(&line.path);
            println!("    {number:>6}: {}: {path} {}", line.field.name(), format_entries(&line.entries));
        }
    }
    Ok(())
}
