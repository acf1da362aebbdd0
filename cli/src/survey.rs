//! `robotsieve survey`: what a frontier's robots.txt files say to many
//! crawlers at once, in figures and as a picture.
//!
//! One pass over the URL list through a [`MatrixClassifier`] (each URL's
//! origin found once, every crawler's group walked), then per crawler: the
//! share of URLs disallowed, the share of reached origins with a disallowed
//! URL, the origins fully blocked (by their rules: the group disallows `/`,
//! by name or only by `*`; or by their fetch result: 5xx, 429, no answer),
//! and per `Content-Signal` / `Content-Usage` value the share of reached
//! origins that carry it and of URLs it applies to. The SVG chart is drawn
//! here, with no dependency.

use crate::failure::{fail, Context, Failure};
use robotsieve_core::preference::{applicable, PreferenceField, PreferenceLine};
use robotsieve_core::url::{KeyBuf, PathMode};
use robotsieve_core::Verdict;
use robotsieve_engine::PendingFile;
use robotsieve_engine::ShardSet;
use robotsieve_engine::{ArtifactError, FetchKind, GroupOutcome};
use robotsieve_engine::{MatrixClassifier, MatrixScratch};
use robotsieve_filter::Outputs;
use robotsieve_filter::{Classifier, Config, Pipeline, Reasons};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `robotsieve survey`.
#[derive(clap::Args)]
pub struct Args {
    /// The compiled artifact, or the directory of a shard set (`robotsieve compile`).
    #[arg(long, value_name = "ARTIFACT")]
    rules: PathBuf,
    /// The URL list, one per line (as `filter` reads it; `.gz`, `.zst` and `-` too).
    #[arg(long, value_name = "FILE")]
    urls: PathBuf,
    /// A crawler of the artifact; repeat for several. Default: every crawler
    /// the artifact was compiled for.
    #[arg(long, value_name = "TOKEN")]
    agent: Vec<String>,
    /// The crawlers from a file (see `compile --agents-file`): names that are
    /// not product tokens are read as Google reads them, with a warning.
    #[arg(long, value_name = "FILE", conflicts_with = "agent")]
    agents_file: Option<PathBuf>,
    /// Write JSON instead of a text table.
    #[arg(long)]
    json: bool,
    /// Where to write the figures (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Draw the figures as an SVG bar chart here.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    threads: crate::flags::Threads,
    /// Match URL paths byte for byte instead of escaping them first.
    #[arg(long)]
    raw_urls: bool,
}

/// A usage preference value as counted: field, key, value (as written).
type Value = (PreferenceField, Vec<u8>, Vec<u8>);

/// The survey's classifier: the matrix, plus tallies per origin and of
/// preference values per URL.
struct Survey<'a> {
    matrix: MatrixClassifier<'a>,
    artifact: &'a ShardSet,
    mode: PathMode,
}

#[derive(Default)]
struct SurveyScratch {
    matrix: MatrixScratch,
    verdicts: Vec<Verdict>,
    origin_of: Vec<Option<usize>>,
    /// One bit per origin and crawler: a URL of the origin was disallowed for it.
    disallowed: Vec<u64>,
    /// URLs each preference value applies to (for at least one crawler).
    value_urls: HashMap<Value, u64>,
    /// Decoded preference sets.
    sets: HashMap<usize, Vec<PreferenceLine>>,
    key: KeyBuf,
    path: Vec<u8>,
}

impl Classifier for Survey<'_> {
    type Scratch = SurveyScratch;
    type Error = ArtifactError;

    fn classify(
        &self,
        url: &[u8],
        scratch: &mut SurveyScratch,
        _explain: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, ArtifactError> {
        let mut verdict = [Verdict::Invalid];
        self.classify_batch(&[url], scratch, &mut verdict, None)?;
        Ok(verdict[0])
    }

    fn classify_batch(
        &self,
        urls: &[&[u8]],
        s: &mut SurveyScratch,
        verdicts: &mut [Verdict],
        _: Option<&mut Reasons>,
    ) -> Result<(), ArtifactError> {
        let n = self.matrix.agents().len();
        s.origin_of.clear();
        s.origin_of.resize(urls.len(), None);
        let origin_of = &mut s.origin_of;
        self.matrix.verdicts(urls, &mut s.matrix, &mut s.verdicts, |i, o| origin_of[i] = o)?;
        if s.disallowed.is_empty() {
            s.disallowed = vec![0; (self.artifact.origins() * n).div_ceil(64)];
        }
        let preferences = self.artifact.has_preferences();
        for (i, url) in urls.iter().enumerate() {
            let row = &s.verdicts[i * n..(i + 1) * n];
            verdicts[i] = row[0];
            let Some(o) = s.origin_of[i] else { continue };
            for (c, &v) in row.iter().enumerate() {
                if v == Verdict::Disallowed {
                    let bit = o * n + c;
                    s.disallowed[bit / 64] |= 1 << (bit % 64);
                }
            }
            if !preferences {
                continue;
            }
            let mut set_ids: Vec<usize> =
                self.matrix.agents().iter().filter_map(|&a| self.artifact.preference_set(o, a)).collect();
            if set_ids.is_empty() {
                continue;
            }
            set_ids.sort_unstable();
            set_ids.dedup();
            let Ok(parsed) = s.key.parse(url) else { continue };
            s.path.clear();
            self.mode.prepare_into(&parsed, &mut s.path);
            let mut values: Vec<Value> = Vec::new();
            for set in set_ids {
                let lines = s.sets.entry(set).or_insert_with(|| self.artifact.preference_set_lines(set));
                for (field, applied) in applicable(lines.iter(), &s.path) {
                    values.extend(applied.entries.into_iter().map(|e| (field, e.key, e.value)));
                }
            }
            values.sort();
            values.dedup();
            for value in values {
                *s.value_urls.entry(value).or_default() += 1;
            }
        }
        Ok(())
    }
}

/// Figures of one crawler.
struct CrawlerFigures {
    name: String,
    counts: [u64; 4],
    origins_disallowed: u64,
    blocked_by_name: u64,
    blocked_by_star: u64,
    blocked_by_fetch: u64,
}

/// Runs `survey`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let artifact = crate::input::open_rules(&args.rules)?;
    let names: Vec<String> = match &args.agents_file {
        Some(path) => crate::input::agents_file(path)?.iter().map(|a| a.to_string()).collect(),
        None if args.agent.is_empty() => artifact.meta().agents.clone(),
        None => args.agent.clone(),
    };
    let mut agents = Vec::with_capacity(names.len());
    for name in &names {
        agents.push(crate::input::agent_index(&artifact, &args.rules, name)?);
    }
    let mode = if args.raw_urls { PathMode::Raw } else { PathMode::Escaped };
    let survey =
        Survey { matrix: MatrixClassifier::new(&artifact, agents, mode, Verdict::Unknown), artifact: &artifact, mode };

    let mut input = crate::filter::open_input(&args.urls)?;
    let config = Config { threads: args.threads.count(), ..Config::default() };
    let pipeline = Pipeline::new(config).map_err(Failure::from)?;
    let report = pipeline.run(&survey, &mut input, &mut Outputs::new(), None).map_err(Failure::from)?;
    let scratches = report.scratches;

    let mut document = figures(&survey, &names, &scratches, report.stats.urls()).map_err(|e| fail!("{e}"))?;
    document["threads"] = report.stats.threads.into();
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&document).expect("plain values");
        text.push('\n');
        text
    } else {
        text_table(&document)
    };
    let plot = args.plot.as_ref().map(|path| (path, svg(&document)));
    let mut pending = Vec::new();
    if let Some((path, svg)) = &plot {
        let mut file = PendingFile::create(path).map_err(Failure::from)?;
        file.write_all(svg.as_bytes()).context(path.display())?;
        pending.push(file);
    }
    match &args.output {
        Some(path) => {
            let mut file = PendingFile::create(path).map_err(Failure::from)?;
            file.write_all(text.as_bytes()).context(path.display())?;
            pending.push(file);
        }
        None => std::io::stdout().write_all(text.as_bytes()).context("standard output")?,
    }
    for file in pending {
        file.commit().map_err(Failure::from)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The survey's JSON document.
fn figures(
    survey: &Survey<'_>,
    names: &[String],
    scratches: &[SurveyScratch],
    urls: u64,
) -> Result<serde_json::Value, ArtifactError> {
    let artifact = survey.artifact;
    let matrix = &survey.matrix;
    let n = names.len();
    let counts = matrix.counts(scratches.iter().map(|s| &s.matrix));
    let reached = matrix.origins_reached(scratches.iter().map(|s| &s.matrix));
    let mut disallowed = vec![0u64; (artifact.origins() * n).div_ceil(64)];
    for s in scratches {
        for (word, bits) in disallowed.iter_mut().zip(&s.disallowed) {
            *word |= bits;
        }
    }
    // Whether each group disallows `/`, walked once per distinct group.
    let mut root_blocked: HashMap<usize, bool> = HashMap::new();
    let mut outcomes: Vec<GroupOutcome> = Vec::new();
    let mut crawlers: Vec<CrawlerFigures> = names
        .iter()
        .zip(&counts)
        .map(|(name, counts)| CrawlerFigures {
            name: name.clone(),
            counts: *counts,
            origins_disallowed: 0,
            blocked_by_name: 0,
            blocked_by_star: 0,
            blocked_by_fetch: 0,
        })
        .collect();
    let mut by_fetch = [0u64; 3];
    let mut value_origins: BTreeMap<Value, u64> = BTreeMap::new();
    let preferences = artifact.has_preferences();
    for &o in &reached {
        let kind = artifact.fetch_info(o).kind;
        by_fetch[match kind {
            FetchKind::Rules => 0,
            FetchKind::Unrestricted => 1,
            FetchKind::Blocked => 2,
        }] += 1;
        for (c, &agent) in matrix.agents().iter().enumerate() {
            let figures = &mut crawlers[c];
            let bit = o * n + c;
            figures.origins_disallowed += u64::from(disallowed[bit / 64] & (1 << (bit % 64)) != 0);
            match kind {
                FetchKind::Blocked => figures.blocked_by_fetch += 1,
                FetchKind::Unrestricted => {}
                FetchKind::Rules => {
                    let group = artifact.group_of(o, agent);
                    let blocked = match root_blocked.get(&group) {
                        Some(&blocked) => blocked,
                        None => {
                            outcomes.clear();
                            artifact.decide_many(&[(group, b"/".as_slice())], &mut outcomes)?;
                            let blocked = outcomes[0].verdict() == Verdict::Disallowed;
                            root_blocked.insert(group, blocked);
                            blocked
                        }
                    };
                    if blocked && artifact.names_agent(o, agent) {
                        figures.blocked_by_name += 1;
                    } else if blocked {
                        figures.blocked_by_star += 1;
                    }
                }
            }
        }
        if preferences {
            let mut values: Vec<Value> = Vec::new();
            for &agent in matrix.agents() {
                if let Some(set) = artifact.preference_set(o, agent) {
                    for line in artifact.preference_set_lines(set) {
                        values.extend(line.entries.into_iter().map(|e| (line.field, e.key, e.value)));
                    }
                }
            }
            values.sort();
            values.dedup();
            for value in values {
                *value_origins.entry(value).or_default() += 1;
            }
        }
    }
    let mut value_urls: HashMap<Value, u64> = HashMap::new();
    for s in scratches {
        for (value, count) in &s.value_urls {
            *value_urls.entry(value.clone()).or_default() += count;
        }
    }
    let reached_count = reached.len() as u64;
    let known_urls = counts.first().map_or(0, |c| c[0] + c[1]);
    let agents: Vec<serde_json::Value> = crawlers
        .iter()
        .map(|f| {
            let judged = f.counts[0] + f.counts[1];
            serde_json::json!({
                "agent": f.name,
                "urls": {"allowed": f.counts[0], "disallowed": f.counts[1], "unknown": f.counts[2], "invalid": f.counts[3]},
                "urls_disallowed_share": share(f.counts[1], judged),
                "origins_with_disallowed_url": f.origins_disallowed,
                "origins_with_disallowed_url_share": share(f.origins_disallowed, reached_count),
                "origins_fully_blocked": {
                    "by_name": f.blocked_by_name,
                    "only_by_star": f.blocked_by_star,
                    "by_fetch_result": f.blocked_by_fetch,
                },
                "origins_fully_blocked_share": share(f.blocked_by_name + f.blocked_by_star + f.blocked_by_fetch, reached_count),
            })
        })
        .collect();
    let preferences: Vec<serde_json::Value> = value_origins
        .iter()
        .map(|((field, key, value), origins)| {
            let urls = value_urls.get(&(*field, key.clone(), value.clone())).copied().unwrap_or(0);
            serde_json::json!({
                "field": field.name(),
                "key": String::from_utf8_lossy(key),
                "value": String::from_utf8_lossy(value),
                "origins": origins,
                "origins_share": share(*origins, reached_count),
                "urls": urls,
                "urls_share": share(urls, known_urls),
            })
        })
        .collect();
    Ok(serde_json::json!({
        "urls": urls,
        "urls_with_robots": known_urls,
        "urls_unknown": counts.first().map_or(0, |c| c[2]),
        "urls_invalid": counts.first().map_or(0, |c| c[3]),
        "origins_reached": reached_count,
        "origins_reached_by_fetch": {"rules": by_fetch[0], "unrestricted": by_fetch[1], "blocked": by_fetch[2]},
        "agents": agents,
        "preferences": preferences,
    }))
}

fn percent(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or(0.0) * 100.0
}

/// The figures as an aligned text table.
fn text_table(doc: &serde_json::Value) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} URLs ({} with a robots.txt, {} unknown, {} invalid); {} origins reached",
        doc["urls"], doc["urls_with_robots"], doc["urls_unknown"], doc["urls_invalid"], doc["origins_reached"]
    );
    let _ = writeln!(
        out,
        "{:<28} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "crawler", "URLs dis", "origins", "blocked", "by name", "by *", "by fetch"
    );
    for a in doc["agents"].as_array().into_iter().flatten() {
        let blocked = &a["origins_fully_blocked"];
        let _ = writeln!(
            out,
            "{:<28} {:>8.2}% {:>8.2}% {:>8.2}% {:>8} {:>8} {:>8}",
            a["agent"].as_str().unwrap_or(""),
            percent(&a["urls_disallowed_share"]),
            percent(&a["origins_with_disallowed_url_share"]),
            percent(&a["origins_fully_blocked_share"]),
            blocked["by_name"].as_u64().unwrap_or(0),
            blocked["only_by_star"].as_u64().unwrap_or(0),
            blocked["by_fetch_result"].as_u64().unwrap_or(0)
        );
    }
    let prefs = doc["preferences"].as_array().cloned().unwrap_or_default();
    if prefs.is_empty() {
        let _ = writeln!(out, "no Content-Signal or Content-Usage line on any reached origin");
    }
    for p in prefs {
        let _ = writeln!(
            out,
            "{}: {}={}  {} origins ({:.2}%), {} URLs ({:.2}%)",
            p["field"].as_str().unwrap_or(""),
            p["key"].as_str().unwrap_or(""),
            p["value"].as_str().unwrap_or(""),
            p["origins"],
            percent(&p["origins_share"]),
            p["urls"],
            percent(&p["urls_share"])
        );
    }
    out
}

/// Escapes text for SVG.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Where the chart's bars start (after the row labels).
const BAR_START: f64 = 230.0;

/// One bar of the chart: from [`BAR_START`] to `end`, `height` tall, its
/// top at `top`.
struct Bar<'c> {
    top: f64,
    end: f64,
    height: u32,
    color: &'c str,
}

impl Bar<'_> {
    /// Writes the row's label (right-aligned before the bars, its baseline
    /// 15 below the row's top `y`) and the bar.
    fn row(&self, s: &mut String, y: f64, label: &str) {
        let Bar { top, end, height, color } = *self;
        let _ =
            writeln!(s, r##"<text x="{}" y="{}" text-anchor="end">{}</text>"##, BAR_START - 8.0, y + 15.0, xml(label));
        let _ = writeln!(
            s,
            r##"<rect x="{BAR_START}" y="{top}" width="{}" height="{height}" fill="{color}"/>"##,
            end - BAR_START
        );
    }

    /// Writes `text` (already escaped) just after the bar, its baseline at `y`.
    fn note(&self, s: &mut String, y: f64, attributes: &str, text: &str) {
        let _ = writeln!(s, r##"<text x="{}" y="{y}" {attributes}>{text}</text>"##, self.end + 4.0);
    }
}

/// The figures as an SVG chart: per crawler (most disallowed first) a bar of
/// the share of URLs disallowed and a stacked bar of the share of reached
/// origins fully blocked (by name, only by `*`, by fetch result); then a bar
/// per preference value (share of reached origins). Readable without the JSON:
/// every bar is labelled with its figure.
fn svg(doc: &serde_json::Value) -> String {
    const WIDTH: f64 = 960.0;
    const LABEL: f64 = BAR_START;
    const CHART: f64 = 620.0;
    const ROW: f64 = 26.0;
    let mut agents: Vec<&serde_json::Value> = doc["agents"].as_array().into_iter().flatten().collect();
    agents.sort_by(|a, b| {
        percent(&b["urls_disallowed_share"])
            .total_cmp(&percent(&a["urls_disallowed_share"]))
            .then_with(|| a["agent"].as_str().cmp(&b["agent"].as_str()))
    });
    let prefs: Vec<&serde_json::Value> = doc["preferences"].as_array().into_iter().flatten().collect();
    let top = 138.0;
    let agents_end = top + ROW * agents.len() as f64;
    let prefs_top = agents_end + 70.0;
    let height = prefs_top + 30.0 + ROW * prefs.len().max(1) as f64 + 20.0;
    let x = |share: f64| LABEL + CHART * share.clamp(0.0, 1.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="white"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="10" y="24" font-size="17" font-weight="bold">robots.txt survey: {} crawlers, {} URLs, {} origins reached</text>"##,
        agents.len(),
        doc["urls"],
        doc["origins_reached"]
    );
    let by_fetch = &doc["origins_reached_by_fetch"];
    let _ = writeln!(
        s,
        r##"<text x="10" y="44" fill="#444">{} URLs of origins with a robots.txt result ({} unknown, {} invalid)</text>"##,
        doc["urls_with_robots"], doc["urls_unknown"], doc["urls_invalid"]
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="60" fill="#444">reached origins: {} with rules, {} unrestricted (4xx), {} blocked by their fetch result (5xx, 429, no answer)</text>"##,
        by_fetch["rules"], by_fetch["unrestricted"], by_fetch["blocked"]
    );
    // Legend.
    let legend = [
        ("#3b6fb6", "URLs disallowed (share of URLs with a robots.txt result)"),
        ("#a61c1c", "origins fully blocked: the crawler's own group disallows /"),
        ("#f08a24", "… only by the * group"),
        ("#8c8c8c", "… by the robots.txt fetch result"),
    ];
    for (i, (color, text)) in legend.iter().enumerate() {
        let (lx, ly) = (10.0 + (i % 2) as f64 * 470.0, 80.0 + (i / 2) as f64 * 18.0);
        let _ = writeln!(s, r##"<rect x="{lx}" y="{}" width="12" height="12" fill="{color}"/>"##, ly - 10.0);
        let _ = writeln!(s, r##"<text x="{}" y="{ly}">{}</text>"##, lx + 18.0, xml(text));
    }
    // Grid.
    for tick in 0..=4 {
        let gx = x(tick as f64 / 4.0);
        let _ = writeln!(s, r##"<line x1="{gx}" y1="{}" x2="{gx}" y2="{agents_end}" stroke="#ddd"/>"##, top - 8.0);
        let _ = writeln!(
            s,
            r##"<text x="{gx}" y="{}" text-anchor="middle" fill="#666">{}%</text>"##,
            top - 12.0,
            tick * 25
        );
    }
    for (i, a) in agents.iter().enumerate() {
        let y = top + ROW * i as f64;
        let urls = a["urls_disallowed_share"].as_f64().unwrap_or(0.0);
        let bar = Bar { top: y + 2.0, end: x(urls), height: 9, color: "#3b6fb6" };
        bar.row(&mut s, y, a["agent"].as_str().unwrap_or(""));
        bar.note(&mut s, y + 10.0, r##"font-size="9" fill="#3b6fb6""##, &format!("{:.1}% URLs", urls * 100.0));
        let reached = doc["origins_reached"].as_f64().unwrap_or(0.0).max(1.0);
        let blocked = &a["origins_fully_blocked"];
        let mut at = LABEL;
        for (key, color) in [("by_name", "#a61c1c"), ("only_by_star", "#f08a24"), ("by_fetch_result", "#8c8c8c")] {
            let w = CHART * blocked[key].as_f64().unwrap_or(0.0) / reached;
            let _ = writeln!(s, r##"<rect x="{at}" y="{}" width="{w}" height="9" fill="{color}"/>"##, y + 12.0);
            at += w;
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="9" fill="#333">{:.1}% origins blocked ({} by name, {} by *, {} by fetch)</text>"##,
            at + 4.0,
            y + 20.0,
            percent(&a["origins_fully_blocked_share"]),
            blocked["by_name"],
            blocked["only_by_star"],
            blocked["by_fetch_result"]
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="10" y="{}" font-size="15" font-weight="bold">Content-Signal and Content-Usage values: share of reached origins carrying each</text>"##,
        prefs_top
    );
    if prefs.is_empty() {
        let _ = writeln!(
            s,
            r##"<text x="10" y="{}" fill="#444">No reached origin's robots.txt has a Content-Signal or Content-Usage line for these crawlers.</text>"##,
            prefs_top + 26.0
        );
    }
    for (i, p) in prefs.iter().enumerate() {
        let y = prefs_top + 14.0 + ROW * i as f64;
        let label = format!(
            "{}: {}={}",
            p["field"].as_str().unwrap_or(""),
            p["key"].as_str().unwrap_or(""),
            p["value"].as_str().unwrap_or("")
        );
        let share = p["origins_share"].as_f64().unwrap_or(0.0);
        let bar = Bar { top: y + 4.0, end: x(share), height: 14, color: "#2e8b57" };
        bar.row(&mut s, y, &label);
        let note = format!(
            "{:.1}% of origins ({}), {:.1}% of URLs ({})",
            share * 100.0,
            p["origins"],
            percent(&p["urls_share"]),
            p["urls"]
        );
        bar.note(&mut s, y + 15.0, r##"font-size="10""##, &note);
    }
    s.push_str("</svg>\n");
    s
}
