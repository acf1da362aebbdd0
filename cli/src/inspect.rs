//! `robotsieve inspect`: what an artifact holds, and one origin's rules.

use crate::failure::{fail, Context, Failure};
use crate::fetch::{parse_time, PolicyArgs};
use robotsieve_compiler::build::copy_facts;
use robotsieve_core::preference::format_entries;
use robotsieve_core::url::OriginKey;
use robotsieve_engine::ShardSet;
use robotsieve_engine::{Artifact, ArtifactError, FetchFacts, FetchKind, GroupStats, Section};
use robotsieve_sources::freshness::{CachePolicy, CacheRule, Freshness};
use robotsieve_sources::Timestamp;
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
    /// One JSON object instead of text: `{"rules", "origins", "groups",
    /// "bytes", "opened_seconds", "shards": [...]}` with a summary per shard
    /// (one for a single artifact); with --origin, `{"rules", "origin",
    /// "known", "fetch", "sitemaps", "agents": [...]}`.
    #[arg(long)]
    json: bool,
    /// Check every byte of the artifact or shard set (every group's
    /// checksum and tables, every origin through the index), not only the
    /// header and index that opening checks; exit 2 naming the first damage.
    #[arg(long)]
    verify: bool,
    /// Count the origins whose robots.txt copies have expired at this time
    /// (RFC 3339) under the cache policy of `fetch --due`, from when each
    /// copy was fetched; with --origin, say whether its copy has.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    now: Option<Timestamp>,
    /// The cache policy's bounds, as for `fetch --due`.
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Origin `origin`'s copy judged by `policy` at `now`: the policy of `fetch
/// --due` on the facts the artifact kept (its status, when it was fetched,
/// its max-age and failures in a row; no Retry-After is kept).
fn freshness(
    artifact: &Artifact,
    origin: usize,
    policy: &CachePolicy,
    now: Timestamp,
) -> Result<Freshness, ArtifactError> {
    let copy = copy_facts(&artifact.fetch_facts(origin)?);
    Ok(policy.freshness_of(artifact.fetch_info(origin).status, None, &copy, now))
}

/// How many origins of the set have expired copies at `now` (those without
/// a known fetch time among them), and how many have no known time.
fn expired(set: &ShardSet, policy: &CachePolicy, now: Timestamp) -> Result<(usize, usize), ArtifactError> {
    let (mut due, mut undated) = (0, 0);
    for artifact in set.shards() {
        for o in 0..artifact.origins() {
            let judged = freshness(artifact, o, policy, now)?;
            due += usize::from(judged.is_due());
            undated += usize::from(matches!(judged, Freshness::Due { rule: CacheRule::Undated, .. }));
        }
    }
    Ok((due, undated))
}

/// The text of an origin's fetch facts: `fetched T, max-age S s, N failures in a row`.
fn facts_text(facts: &FetchFacts) -> String {
    let mut parts = vec![match facts.fetched_at {
        Some(t) => format!("fetched {}", Timestamp::from_unix_nanos(t, 0)),
        None => "fetch time unknown".to_string(),
    }];
    if let Some(age) = facts.max_age {
        parts.push(format!("max-age {age} s"));
    }
    if let Some(k) = facts.failures_in_a_row {
        parts.push(format!("{k} failures in a row"));
    }
    parts.join(", ")
}

/// Why a view could not be written: the output failed, or a group of the
/// artifact is damaged (groups are checked when first read).
enum ViewError {
    Output(io::Error),
    Artifact(ArtifactError),
}

impl From<io::Error> for ViewError {
    fn from(e: io::Error) -> ViewError {
        ViewError::Output(e)
    }
}

impl From<ArtifactError> for ViewError {
    fn from(e: ArtifactError) -> ViewError {
        ViewError::Artifact(e)
    }
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
    if args.verify {
        let started = Instant::now();
        set.verify().map_err(|e| fail!("{e}"))?;
        if !args.json {
            println!("verified      {} in {:.2?} (every byte checked)", path.display(), started.elapsed());
        }
    }
    let policy = args.policy.policy()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let written = match &args.origin {
        Some(url) => {
            let key = OriginKey::of_url(url).map_err(|e| fail!("--origin {url}: {e}"))?;
            if args.json {
                origin_json(&set, path, &key, &policy, args.now)
                    .map_err(ViewError::from)
                    .and_then(|v| Ok(writeln!(out, "{v}")?))
            } else {
                show_origin(&mut out, &set, &key, &policy, args.now)
            }
        }
        None if args.json => overview_json(&set, path, &args, &policy, opened)
            .map_err(ViewError::from)
            .and_then(|v| Ok(writeln!(out, "{v}")?)),
        None => overview(&mut out, &set, path, &args, &policy, opened),
    };
    match written {
        Err(ViewError::Artifact(e)) => return Err(fail!("{e}")),
        Err(ViewError::Output(e)) => Err::<(), _>(e).context("standard output")?,
        Ok(()) => {}
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The summary of an artifact, or of a shard set and then each of its shards.
fn overview(
    out: &mut impl Write,
    set: &ShardSet,
    path: &Path,
    args: &Args,
    policy: &CachePolicy,
    opened: Duration,
) -> Result<(), ViewError> {
    if let Some(now) = args.now {
        let (due, undated) = expired(set, policy, now)?;
        writeln!(
            out,
            "expired       {due} of {} origins at {now} (cache policy of fetch --due; {undated} without a fetch time, expired)",
            set.origins()
        )?;
    }
    let shards = set.shards();
    if let [artifact] = shards {
        return summary(out, artifact, path, args, opened);
    }
    writeln!(out, "shard set     {} ({} shards)", path.display(), shards.len())?;
    writeln!(out, "origins       {}", set.origins())?;
    writeln!(out, "groups        {} (distinct within each shard)", set.groups())?;
    writeln!(out, "bytes         {}", shards.iter().map(Artifact::len).sum::<usize>())?;
    writeln!(
        out,
        "opened in     {opened:.2?} (each shard's header and index checked, each holds only its own origins)"
    )?;
    for (artifact, path) in shards.iter().zip(set.paths()) {
        writeln!(out)?;
        summary(out, artifact, path, args, opened)?;
    }
    Ok(())
}

/// One artifact's summary; reading every group's sizes checks every group,
/// so a damaged one fails here.
fn summary(
    out: &mut impl Write,
    artifact: &Artifact,
    path: &Path,
    args: &Args,
    opened: Duration,
) -> Result<(), ViewError> {
    let meta = artifact.meta();
    writeln!(out, "artifact      {}", path.display())?;
    if let Some(shard) = &meta.shard {
        writeln!(out, "shard         {} of {} (by {})", shard.index, shard.count, shard.scheme)?;
    }
    writeln!(
        out,
        "format        version {}, semantics version {}",
        robotsieve_engine::FORMAT_VERSION,
        robotsieve_engine::SEMANTICS_VERSION
    )?;
    writeln!(out, "digest        {:016x} (of its contents: copies share it)", artifact.digest())?;
    writeln!(out, "agents        {}", meta.agents.join("  "))?;
    for (k, v) in &meta.build {
        writeln!(out, "build         {k}: {v}")?;
    }
    writeln!(out, "explain       {}", if artifact.explains() { "yes (verdicts name their rule)" } else { "no" })?;
    writeln!(out, "opened in     {opened:.2?} (header and index checked; each group on first use)")?;
    writeln!(out, "size          {} bytes", artifact.len())?;
    writeln!(out, "origins       {}", artifact.origins())?;
    writeln!(out, "groups        {} distinct", artifact.groups())?;
    writeln!(out, "bytes/origin  {}", artifact.len() / artifact.origins().max(1))?;
    let figures = Figures::of(artifact)?;
    let [rules, unrestricted, blocked] = figures.fetch;
    writeln!(out, "fetch         {rules} rules, {unrestricted} unrestricted, {blocked} blocked")?;
    writeln!(out, "sections")?;
    let sizes = artifact.section_sizes();
    let width = sizes.iter().map(|&(section, _)| section_name(section).len()).max().unwrap_or(0);
    for (section, size) in sizes {
        writeln!(out, "  {:<width$} {size:>14} bytes", section_name(section))?;
    }
    let stats = &figures.stats;
    let first_user = |g: usize| figures.first_user(g).unwrap_or_else(|| "-".to_string());
    writeln!(out, "states        {}", stats.iter().map(|s| s.states).sum::<usize>())?;
    let combs: usize = stats.iter().map(|s| s.combs).sum();
    let dfas: usize = stats.iter().map(|s| s.dfas).sum();
    writeln!(out, "automata      {dfas} ({combs} stored as comb tables)")?;
    writeln!(out, "largest groups (bytes, states, automata, fallback rules, origins using it, first origin)")?;
    for &g in figures.by_size.iter().take(args.largest) {
        let s = stats[g];
        writeln!(
            out,
            "  group {g:<7} {:>12} {:>9} {:>2} {:>6} {:>7}  {}",
            s.bytes,
            s.states,
            s.dfas,
            s.fallback_rules,
            figures.users[g].0,
            first_user(g)
        )?;
    }
    writeln!(out, "groups needing a split or per-rule fallback: {}", figures.split.len())?;
    for &g in figures.split.iter().take(args.largest) {
        let s = stats[g];
        let origin = first_user(g);
        writeln!(out, "  group {g:<7} {} automata, {} rules matched one by one  {origin}", s.dfas, s.fallback_rules)?;
    }
    Ok(())
}

/// What the summary shows of one artifact's origins and groups, computed
/// once for the text and the JSON.
struct Figures<'a> {
    artifact: &'a Artifact,
    /// Origins by fetch result: rules, unrestricted, blocked.
    fetch: [usize; 3],
    /// Each group's sizes.
    stats: Vec<GroupStats>,
    /// Per group: the (origin, agent) pairs that use it, and the first
    /// origin using it (`usize::MAX`: none).
    users: Vec<(usize, usize)>,
    /// The groups, largest first.
    by_size: Vec<usize>,
    /// The groups that needed a split into several automata or a per-rule fallback.
    split: Vec<usize>,
}

impl<'a> Figures<'a> {
    fn of(artifact: &'a Artifact) -> Result<Figures<'a>, ArtifactError> {
        let mut fetch = [0usize; 3];
        let mut users = vec![(0usize, usize::MAX); artifact.groups()];
        for o in 0..artifact.origins() {
            fetch[artifact.fetch_info(o).kind as usize] += 1;
            for a in 0..artifact.meta().agents.len() {
                let g = artifact.group_of(o, a);
                users[g].0 += 1;
                users[g].1 = users[g].1.min(o);
            }
        }
        let stats = (0..artifact.groups()).map(|g| artifact.group_stats(g)).collect::<Result<Vec<GroupStats>, _>>()?;
        let split = (0..stats.len()).filter(|&g| stats[g].dfas > 1 || stats[g].fallback_rules > 0).collect();
        let mut by_size: Vec<usize> = (0..stats.len()).collect();
        by_size.sort_by_key(|&g| std::cmp::Reverse(stats[g].bytes));
        Ok(Figures { artifact, fetch, stats, users, by_size, split })
    }

    /// Group `g` as JSON: its sizes and its users, as the text's tables show them.
    fn group_json(&self, g: usize) -> serde_json::Value {
        let s = self.stats[g];
        serde_json::json!({
            "group": g,
            "bytes": s.bytes,
            "states": s.states,
            "automata": s.dfas,
            "fallback_rules": s.fallback_rules,
            "origins": self.users[g].0,
            "first_origin": self.first_user(g),
        })
    }

    /// The key of the first origin using group `g`, if any does.
    fn first_user(&self, g: usize) -> Option<String> {
        match self.users[g].1 {
            usize::MAX => None,
            o => Some(String::from_utf8_lossy(self.artifact.origin_key(o)).into_owned()),
        }
    }
}

/// `inspect --json`: the set's totals and each shard's summary (one for a
/// single artifact), every shard's object with the same keys.
fn overview_json(
    set: &ShardSet,
    path: &Path,
    args: &Args,
    policy: &CachePolicy,
    opened: Duration,
) -> Result<serde_json::Value, ArtifactError> {
    let expiry = match args.now {
        Some(now) => {
            let (due, undated) = expired(set, policy, now)?;
            serde_json::json!({"now": now.to_string(), "expired": due, "undated": undated})
        }
        None => serde_json::Value::Null,
    };
    let shards = set
        .shards()
        .iter()
        .zip(set.paths())
        .map(|(artifact, path)| summary_json(artifact, path, args))
        .collect::<Result<Vec<serde_json::Value>, _>>()?;
    Ok(serde_json::json!({
        "rules": path.display().to_string(),
        "origins": set.origins(),
        "groups": set.groups(),
        "bytes": set.shards().iter().map(Artifact::len).sum::<usize>(),
        "opened_seconds": opened.as_secs_f64(),
        "expiry": expiry,
        "shards": shards,
    }))
}

/// One artifact's summary as JSON: what the text summary shows.
fn summary_json(artifact: &Artifact, path: &Path, args: &Args) -> Result<serde_json::Value, ArtifactError> {
    let meta = artifact.meta();
    let figures = Figures::of(artifact)?;
    let stats = &figures.stats;
    let groups = |list: &[usize]| -> Vec<serde_json::Value> {
        list.iter().take(args.largest).map(|&g| figures.group_json(g)).collect()
    };
    let sections: Vec<serde_json::Value> = artifact
        .section_sizes()
        .into_iter()
        .map(|(section, bytes)| serde_json::json!({"section": section_name(section), "bytes": bytes}))
        .collect();
    let [rules, unrestricted, blocked] = figures.fetch;
    Ok(serde_json::json!({
        "artifact": path.display().to_string(),
        "shard": meta.shard.as_ref().map(|s| serde_json::json!({"index": s.index, "count": s.count, "scheme": s.scheme})),
        "format_version": robotsieve_engine::FORMAT_VERSION,
        "semantics_version": robotsieve_engine::SEMANTICS_VERSION,
        "digest": format!("{:016x}", artifact.digest()),
        "agents": meta.agents,
        "build": meta.build.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str()))).collect::<serde_json::Map<_, _>>(),
        "explain": artifact.explains(),
        "bytes": artifact.len(),
        "origins": artifact.origins(),
        "groups": artifact.groups(),
        "fetch": {"rules": rules, "unrestricted": unrestricted, "blocked": blocked},
        "sections": sections,
        "states": stats.iter().map(|s| s.states).sum::<usize>(),
        "automata": stats.iter().map(|s| s.dfas).sum::<usize>(),
        "comb_tables": stats.iter().map(|s| s.combs).sum::<usize>(),
        "largest_groups": groups(&figures.by_size),
        "split_groups": figures.split.len(),
        "split": groups(&figures.split),
    }))
}

fn section_name(section: Section) -> &'static str {
    section.name()
}

/// The name of a fetch result in JSON (as `survey` names them).
fn fetch_kind_name(kind: FetchKind) -> &'static str {
    match kind {
        FetchKind::Rules => "rules",
        FetchKind::Unrestricted => "unrestricted",
        FetchKind::Blocked => "blocked",
    }
}

/// `inspect --origin URL --json`: what the text shows, with the same keys
/// whether the origin is known (`fetch` and `agents` are then null and
/// empty) and whether the artifact kept its rules (`rules` null if not).
fn origin_json(
    set: &ShardSet,
    path: &Path,
    key: &OriginKey,
    policy: &CachePolicy,
    now: Option<Timestamp>,
) -> Result<serde_json::Value, ArtifactError> {
    let artifact = &set.shards()[set.shard_of(key.hash64())];
    let origin = artifact.find_origin(key.as_bytes(), key.hash64());
    let agents = origin
        .into_iter()
        .flat_map(|origin| artifact.meta().agents.iter().enumerate().map(move |(a, agent)| (origin, a, agent)))
        .map(|(origin, a, agent)| {
            let g = artifact.group_of(origin, a);
            let s = artifact.group_stats(g)?;
            let rules = match artifact.explains() {
                false => None,
                true => {
                    let mut rules = Vec::new();
                    for i in 0..artifact.rule_count(g)? {
                        if let Some(rule) = artifact.rule(g, i)? {
                            rules.push(serde_json::json!({
                                "line": rule.line,
                                "rule": rule.to_string(),
                                "index_directory": rule.index_directory,
                            }));
                        }
                    }
                    Some(rules)
                }
            };
            let preferences: Vec<serde_json::Value> = artifact
                .preference_lines(origin, a)
                .iter()
                .map(|line| {
                    let values: serde_json::Map<String, serde_json::Value> = line
                        .entries
                        .iter()
                        .map(|e| {
                            (String::from_utf8_lossy(&e.key).into_owned(), String::from_utf8_lossy(&e.value).into())
                        })
                        .collect();
                    serde_json::json!({
                        "line": artifact.explains().then_some(line.line),
                        "field": line.field.name(),
                        "path": String::from_utf8_lossy(&line.path),
                        "values": values,
                    })
                })
                .collect();
            let delays: Vec<String> =
                artifact.crawl_delays(origin, a)?.iter().map(|d| String::from_utf8_lossy(d).into_owned()).collect();
            let crawl_delay = delays.first().cloned();
            Ok(serde_json::json!({
                "agent": agent,
                "group": g,
                "states": s.states,
                "automata": s.dfas,
                "fallback_rules": s.fallback_rules,
                "rules": rules,
                "preferences": preferences,
                "crawl_delay": crawl_delay,
                "crawl_delays": delays,
            }))
        })
        .collect::<Result<Vec<serde_json::Value>, ArtifactError>>()?;
    let sitemaps: Option<Vec<String>> = match origin {
        Some(o) => Some(artifact.sitemaps(o)?.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect()),
        None => None,
    };
    let fetch = match origin {
        Some(o) => {
            let (info, facts) = (artifact.fetch_info(o), artifact.fetch_facts(o)?);
            let judged = match now {
                Some(now) => freshness_json(&freshness(artifact, o, policy, now)?),
                None => serde_json::Value::Null,
            };
            Some(serde_json::json!({
                "kind": fetch_kind_name(info.kind),
                "status": info.status,
                "fetched_at": facts.fetched_at.map(|t| Timestamp::from_unix_nanos(t, 0).to_string()),
                "max_age": facts.max_age,
                "failures_in_a_row": facts.failures_in_a_row,
                "freshness": judged,
            }))
        }
        None => None,
    };
    Ok(serde_json::json!({
        "rules": path.display().to_string(),
        "origin": key.to_string(),
        "known": origin.is_some(),
        "fetch": fetch,
        "sitemaps": sitemaps,
        "agents": agents,
    }))
}

/// A copy's freshness as JSON: `{"due": bool, "since"|"until": T}`.
fn freshness_json(judged: &Freshness) -> serde_json::Value {
    match judged {
        Freshness::Due { since, .. } => serde_json::json!({"due": true, "since": since.map(|t| t.to_string())}),
        Freshness::Fresh { until, .. } => serde_json::json!({"due": false, "until": until.to_string()}),
    }
}

fn show_origin(
    out: &mut impl Write,
    set: &ShardSet,
    key: &OriginKey,
    policy: &CachePolicy,
    now: Option<Timestamp>,
) -> Result<(), ViewError> {
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
    writeln!(out, "  copy: {}", facts_text(&artifact.fetch_facts(origin)?))?;
    if let Some(now) = now {
        match freshness(artifact, origin, policy, now)? {
            Freshness::Due { since: Some(since), .. } => writeln!(out, "  expired at {since} (at {now}: fetch again)")?,
            Freshness::Due { since: None, .. } => writeln!(out, "  expired: no fetch time (at {now}: fetch again)")?,
            Freshness::Fresh { until, .. } => writeln!(out, "  fresh until {until} (at {now})")?,
        }
    }
    let sitemaps = artifact.sitemaps(origin)?;
    if sitemaps.is_empty() {
        writeln!(out, "  sitemaps: none")?;
    }
    for sitemap in sitemaps {
        writeln!(out, "  sitemap: {}", String::from_utf8_lossy(sitemap))?;
    }
    for (a, agent) in artifact.meta().agents.iter().enumerate() {
        let g = artifact.group_of(origin, a);
        let s = artifact.group_stats(g)?;
        writeln!(
            out,
            "  agent {agent}: group {g} ({} states, {} automata, {} fallback rules)",
            s.states, s.dfas, s.fallback_rules
        )?;
        let delays = artifact.crawl_delays(origin, a)?;
        if !delays.is_empty() {
            let delays: Vec<_> = delays.iter().map(|d| String::from_utf8_lossy(d)).collect();
            writeln!(out, "    crawl-delay: {} (kept, never used for verdicts)", delays.join(", "))?;
        }
        if artifact.explains() {
            for i in 0..artifact.rule_count(g)? {
                if let Some(rule) = artifact.rule(g, i)? {
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
