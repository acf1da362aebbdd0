//! URL verdicts from an artifact: origin, group, automaton.
//!
//! This is the per-URL work of `filter` and `check --rules`: take the URL
//! apart without allocating, find its origin in the artifact's index, pick the
//! group of the crawler, prepare the path (escaped by default) and walk it.
//! [`AgentClassifier::answer`] does it for one URL and can say why;
//! [`AgentClassifier::verdicts`], what the filter runs, takes a batch of URLs
//! through each of those steps side by side, so that their cache misses
//! overlap.

use crate::artifact::{ArtifactError, ExplainedRule, FetchInfo, FetchKind, GroupOutcome};
use crate::filter::{Classifier, Reasons};
use crate::preference::{applicable, describe, Applied, PreferenceField};
use crate::shards::ShardSet;
use crate::url::{origin_hash, KeyBuf, PathMode, UrlError};
use crate::verdict::Verdict;
use std::fmt;
use std::io::Write;
use std::ops::Range;

/// One crawler's view of an artifact or shard set: classifies URLs for the filter.
pub struct AgentClassifier<'a> {
    artifact: &'a ShardSet,
    agent: usize,
    mode: PathMode,
    /// Whether explanations end with the preferences that apply.
    explain_preferences: bool,
}

/// Per-worker state of an [`AgentClassifier`]: reused buffers, and tallies of
/// the origins hit by robots.txt fetch result.
#[derive(Default)]
pub struct Scratch {
    key: KeyBuf,
    /// A batch's origin keys and prepared paths, concatenated.
    keys: Vec<u8>,
    paths: Vec<u8>,
    /// A batch's parsed URLs, and its origins and outcomes.
    lanes: Vec<Lane>,
    origins: Vec<Option<usize>>,
    outcomes: Vec<GroupOutcome>,
    /// URLs answered per fetch class of their origin ([`FetchClass`] order).
    pub urls_by_fetch: [u64; FetchClass::COUNT],
    /// Origins hit, one bit per origin (grown on demand).
    pub origins_hit: Vec<u64>,
}

/// A URL of a batch that parsed: where its key and path lie in the scratch
/// buffers.
#[derive(Clone, Debug)]
struct Lane {
    url: usize,
    key: Range<usize>,
    hash: u64,
    path: Range<usize>,
}

/// The fetch result of an origin, as the filter's statistics count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchClass {
    /// 2xx: the rules apply.
    Success,
    /// No restrictions (4xx, failed redirects, long outages).
    Unrestricted,
    /// Everything disallowed (5xx, 429, no answer).
    Blocked,
}

impl FetchClass {
    /// Number of classes.
    pub const COUNT: usize = 3;
    /// All classes, in tally order.
    pub const ALL: [FetchClass; 3] = [FetchClass::Success, FetchClass::Unrestricted, FetchClass::Blocked];

    /// The name used in statistics.
    pub fn name(self) -> &'static str {
        match self {
            FetchClass::Success => "rules",
            FetchClass::Unrestricted => "unrestricted",
            FetchClass::Blocked => "blocked",
        }
    }

    fn of(kind: FetchKind) -> FetchClass {
        match kind {
            FetchKind::Rules => FetchClass::Success,
            FetchKind::Unrestricted => FetchClass::Unrestricted,
            FetchKind::Blocked => FetchClass::Blocked,
        }
    }
}

impl<'a> AgentClassifier<'a> {
    /// The classifier of agent number `agent` (see [`ShardSet::agent_index`]).
    pub fn new(artifact: &'a ShardSet, agent: usize, mode: PathMode) -> AgentClassifier<'a> {
        assert!(agent < artifact.meta().agents.len(), "agent {agent} is not in the artifact");
        AgentClassifier { artifact, agent, mode, explain_preferences: false }
    }

    /// Makes every reason the filter asks for ([`Classifier`]) end with the
    /// `Content-Signal` and `Content-Usage` preferences that apply, after
    /// ` | ` (nothing when none apply).
    pub fn explaining_preferences(mut self, yes: bool) -> AgentClassifier<'a> {
        self.explain_preferences = yes;
        self
    }

    /// Appends ` | PREFERENCES` to a reason, when asked for and any apply.
    fn append_preferences(&self, url: &[u8], scratch: &mut Scratch, out: &mut Vec<u8>) {
        if self.explain_preferences && self.artifact.has_preferences() {
            let applied = self.preferences(url, scratch);
            if !applied.is_empty() {
                out.extend_from_slice(b" | ");
                out.extend_from_slice(describe(&applied).as_bytes());
            }
        }
    }

    /// Merges the tallies of every scratch of a run: URLs and distinct origins
    /// per fetch class.
    pub fn fetch_tallies(&self, scratches: &[Scratch]) -> [(FetchClass, u64, u64); FetchClass::COUNT] {
        fetch_tallies(self.artifact, scratches)
    }
}

/// URLs and distinct origins per fetch class, over the scratches of a run.
fn fetch_tallies<'s>(
    artifact: &ShardSet,
    scratches: impl IntoIterator<Item = &'s Scratch>,
) -> [(FetchClass, u64, u64); FetchClass::COUNT] {
    let mut urls = [0u64; FetchClass::COUNT];
    let mut hit = vec![0u64; artifact.origins().div_ceil(64)];
    for s in scratches {
        for (total, n) in urls.iter_mut().zip(s.urls_by_fetch) {
            *total += n;
        }
        for (word, bits) in hit.iter_mut().zip(&s.origins_hit) {
            *word |= bits;
        }
    }
    let mut origins = [0u64; FetchClass::COUNT];
    for (w, &word) in hit.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let o = w * 64 + bits.trailing_zeros() as usize;
            origins[FetchClass::of(artifact.fetch_info(o).kind) as usize] += 1;
            bits &= bits - 1;
        }
    }
    FetchClass::ALL.map(|c| (c, urls[c as usize], origins[c as usize]))
}

/// Why a URL got its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason<'a> {
    /// Not an absolute http, https or ftp URL.
    Invalid(UrlError),
    /// No robots.txt for this origin in the artifact.
    NoRobots,
    /// The robots.txt fetch failed with this status (0: no answer): everything disallowed.
    Blocked(u16),
    /// The robots.txt fetch gave this status (4xx, ...): no restrictions.
    Unrestricted(u16),
    /// This rule decided (artifacts built with `--explain`).
    Rule(ExplainedRule<'a>),
    /// No rule matched: allowed.
    NoMatch,
    /// A rule decided, but the artifact does not keep rules.
    Unexplained,
    /// The caller did not ask why (the filter's fast path).
    NotAsked,
}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Invalid(e) => write!(f, "{e}"),
            Reason::NoRobots => f.write_str("no robots.txt for this origin"),
            Reason::Blocked(status) => write!(f, "robots.txt fetch status {status}: everything disallowed"),
            Reason::Unrestricted(status) => write!(f, "robots.txt fetch status {status}: no restrictions"),
            Reason::Rule(rule) => write!(f, "{}: {rule}", rule.line),
            Reason::NoMatch => f.write_str("no rule matched"),
            Reason::Unexplained => f.write_str("a rule matched (compile with --explain to name it)"),
            Reason::NotAsked => Ok(()),
        }
    }
}

/// A URL's verdict and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer<'a> {
    /// The verdict.
    pub verdict: Verdict,
    /// Why.
    pub reason: Reason<'a>,
}

impl<'a> AgentClassifier<'a> {
    /// The verdict of one URL, and why when `explain` (otherwise the reason
    /// of a decided URL is [`Reason::NotAsked`], which saves a table lookup).
    /// An error when the URL's group is damaged ([`ArtifactError::DamagedGroup`]).
    pub fn answer(&self, url: &[u8], scratch: &mut Scratch, explain: bool) -> Result<Answer<'a>, ArtifactError> {
        Ok(self.answers(&[url], scratch, explain)?[0])
    }

    /// The verdicts of many URLs, in order: what [`AgentClassifier::answer`]
    /// gives each, without the reasons.
    pub fn verdicts(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        assert_eq!(urls.len(), verdicts.len(), "one verdict per URL");
        for (verdict, answer) in verdicts.iter_mut().zip(self.answers(urls, scratch, false)?) {
            *verdict = answer.verdict;
        }
        Ok(())
    }

    /// The answers for many URLs, in order (see [`AgentClassifier::answer`]).
    /// The URLs are taken through each step side by side (parse all, find
    /// all origins, decide all), so that the cache misses of different URLs
    /// overlap; see [`crate::artifact::Artifact::decide_many`]. An error
    /// when a URL's group is damaged.
    pub fn answers(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        explain: bool,
    ) -> Result<Vec<Answer<'a>>, ArtifactError> {
        let mut answers = vec![Answer { verdict: Verdict::Invalid, reason: Reason::NotAsked }; urls.len()];
        locate(self.artifact, self.mode, urls, scratch, |i, e| answers[i].reason = Reason::Invalid(e));
        let Scratch { paths, lanes, origins, outcomes, urls_by_fetch, origins_hit, .. } = scratch;
        let mut queries = Vec::with_capacity(lanes.len());
        let mut asked = Vec::with_capacity(lanes.len());
        for (lane, origin) in lanes.iter().zip(origins.iter()) {
            match *origin {
                Some(o) => {
                    let info = tally(self.artifact, o, urls_by_fetch, origins_hit);
                    queries.push((self.artifact.group_of(o, self.agent), &paths[lane.path.clone()]));
                    asked.push((lane.url, info));
                }
                None => answers[lane.url] = Answer { verdict: Verdict::Unknown, reason: Reason::NoRobots },
            }
        }
        outcomes.clear();
        self.artifact.decide_many(&queries, outcomes)?;
        for (&(url, info), outcome) in asked.iter().zip(outcomes.iter()) {
            let reason = match info.kind {
                _ if !explain => Reason::NotAsked,
                FetchKind::Blocked => Reason::Blocked(info.status),
                FetchKind::Unrestricted => Reason::Unrestricted(info.status),
                FetchKind::Rules => match self.artifact.explain(outcome)? {
                    Some(rule) => Reason::Rule(rule),
                    None if outcome.rank == 0 => Reason::NoMatch,
                    None => Reason::Unexplained,
                },
            };
            answers[url] = Answer { verdict: outcome.verdict(), reason };
        }
        Ok(answers)
    }
}

impl<'a> AgentClassifier<'a> {
    /// The `Content-Signal` and `Content-Usage` preferences that apply to
    /// one URL for this crawler (see [`crate::preference::applicable`]):
    /// none for a URL that is invalid, of an unknown origin, or of an origin
    /// whose group has no preference lines. The slow path of explanations:
    /// it decodes the origin's lines for every call.
    pub fn preferences(&self, url: &[u8], scratch: &mut Scratch) -> Vec<(PreferenceField, Applied)> {
        let Ok(origin) = scratch.key.parse(url) else { return Vec::new() };
        let Some(o) = self.artifact.find_origin(origin.key, origin_hash(origin.key)) else { return Vec::new() };
        let lines = self.artifact.preference_lines(o, self.agent);
        if lines.is_empty() {
            return Vec::new();
        }
        let mut path = Vec::new();
        self.mode.prepare_into(&origin, &mut path);
        applicable(&lines, &path)
    }
}

/// The first steps of a batch, shared by one crawler and many: takes every
/// URL apart (`invalid` hears of those that are not URLs), prepares its path,
/// and finds its origin, into `scratch.lanes` and `scratch.origins`.
#[inline]
fn locate(
    artifact: &ShardSet,
    mode: PathMode,
    urls: &[&[u8]],
    scratch: &mut Scratch,
    mut invalid: impl FnMut(usize, UrlError),
) {
    let Scratch { key, keys, paths, lanes, origins, .. } = scratch;
    keys.clear();
    paths.clear();
    lanes.clear();
    for (i, url) in urls.iter().enumerate() {
        match key.parse(url) {
            Ok(origin) => {
                let (key_start, path_start) = (keys.len(), paths.len());
                keys.extend_from_slice(origin.key);
                mode.prepare_into(&origin, paths);
                let hash = origin_hash(origin.key);
                lanes.push(Lane { url: i, key: key_start..keys.len(), hash, path: path_start..paths.len() });
            }
            Err(e) => invalid(i, e),
        }
    }
    let lookups: Vec<(&[u8], u64)> = lanes.iter().map(|lane| (&keys[lane.key.clone()], lane.hash)).collect();
    origins.clear();
    artifact.find_origins(&lookups, origins);
}

/// Counts a URL of origin `o` in the fetch tallies; its fetch information.
#[inline]
fn tally(
    artifact: &ShardSet,
    o: usize,
    urls_by_fetch: &mut [u64; FetchClass::COUNT],
    origins_hit: &mut Vec<u64>,
) -> FetchInfo {
    let info = artifact.fetch_info(o);
    urls_by_fetch[FetchClass::of(info.kind) as usize] += 1;
    if origins_hit.len() <= o / 64 {
        origins_hit.resize(artifact.origins().div_ceil(64), 0);
    }
    origins_hit[o / 64] |= 1 << (o % 64);
    info
}

impl Classifier for AgentClassifier<'_> {
    type Scratch = Scratch;

    #[inline]
    fn classify(
        &self,
        url: &[u8],
        scratch: &mut Scratch,
        explain: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, ArtifactError> {
        let answer = self.answer(url, scratch, explain.is_some())?;
        if let Some(out) = explain {
            let _ = write!(out, "{}", answer.reason);
            self.append_preferences(url, scratch, out);
        }
        Ok(answer.verdict)
    }

    fn classify_batch(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
        mut reasons: Option<&mut Reasons>,
    ) -> Result<(), ArtifactError> {
        let answers = self.answers(urls, scratch, reasons.is_some())?;
        for ((verdict, answer), url) in verdicts.iter_mut().zip(answers).zip(urls) {
            *verdict = answer.verdict;
            if let Some(reasons) = reasons.as_mut() {
                let out = reasons.start_next();
                let _ = write!(out, "{}", answer.reason);
                self.append_preferences(url, scratch, out);
            }
        }
        Ok(())
    }
}

/// Several crawlers' view of an artifact, in one pass over the URLs: each
/// URL is taken apart and its origin found once, then each crawler's group
/// for that origin walked. What `filter --matrix` and `survey` run.
pub struct MatrixClassifier<'a> {
    artifact: &'a ShardSet,
    agents: Vec<usize>,
    mode: PathMode,
    unknown_as: Verdict,
}

/// Per-worker state of a [`MatrixClassifier`]: the shared buffers and fetch
/// tallies of [`Scratch`], and verdict counts per crawler.
#[derive(Default)]
pub struct MatrixScratch {
    /// The buffers and the per-URL fetch tallies (counted once per URL, not per crawler).
    pub base: Scratch,
    /// URLs per verdict ([`Verdict::index`]) for each crawler, in the classifier's order.
    pub counts: Vec<[u64; 4]>,
    /// A batch's verdicts, URL by URL, crawler by crawler.
    verdicts: Vec<Verdict>,
    queries: Vec<(usize, usize)>,
    /// For each query and crawler, the walk that answers it.
    walk_of: Vec<u32>,
}

impl<'a> MatrixClassifier<'a> {
    /// The classifier of the artifact's agents numbered `agents` (see
    /// [`ShardSet::agent_index`]), in that order. URLs of origins without a
    /// robots.txt get `unknown_as` ([`Verdict::Unknown`] keeps them apart).
    pub fn new(
        artifact: &'a ShardSet,
        agents: Vec<usize>,
        mode: PathMode,
        unknown_as: Verdict,
    ) -> MatrixClassifier<'a> {
        assert!(!agents.is_empty(), "a matrix needs at least one crawler");
        for &agent in &agents {
            assert!(agent < artifact.meta().agents.len(), "agent {agent} is not in the artifact");
        }
        MatrixClassifier { artifact, agents, mode, unknown_as }
    }

    /// The crawlers, as agent numbers of the artifact.
    pub fn agents(&self) -> &[usize] {
        &self.agents
    }

    /// The verdicts of a batch of URLs for every crawler: `verdicts[i *
    /// crawlers + c]` is crawler `c`'s verdict on `urls[i]`, what an
    /// [`AgentClassifier`] of that crawler gives it. Also calls `origin` with
    /// each URL's index and origin number (for callers that tally per origin).
    /// An error when a group the URLs reach is damaged.
    pub fn verdicts(
        &self,
        urls: &[&[u8]],
        scratch: &mut MatrixScratch,
        verdicts: &mut Vec<Verdict>,
        mut origin: impl FnMut(usize, Option<usize>),
    ) -> Result<(), ArtifactError> {
        let n = self.agents.len();
        verdicts.clear();
        verdicts.resize(urls.len() * n, Verdict::Invalid);
        let MatrixScratch { base, counts, queries, walk_of, .. } = scratch;
        locate(self.artifact, self.mode, urls, base, |_, _| {});
        let Scratch { paths, lanes, origins, outcomes, urls_by_fetch, origins_hit, .. } = base;
        // (lane, origin) of the URLs whose origin has a robots.txt.
        queries.clear();
        for (l, (lane, found)) in lanes.iter().zip(origins.iter()).enumerate() {
            origin(lane.url, *found);
            match *found {
                Some(o) => {
                    tally(self.artifact, o, urls_by_fetch, origins_hit);
                    queries.push((l, o));
                }
                None => verdicts[lane.url * n..(lane.url + 1) * n].fill(self.unknown_as),
            }
        }
        // One walk per distinct group of a URL: crawlers that no group names
        // share the `*` group, and a group's verdict on a path is one.
        let mut walks: Vec<(usize, &[u8])> = Vec::with_capacity(queries.len() * 2);
        walk_of.clear();
        for &(l, o) in queries.iter() {
            let path = &paths[lanes[l].path.clone()];
            let first = walks.len();
            for &agent in &self.agents {
                let group = self.artifact.group_of(o, agent);
                let walk = match walks[first..].iter().position(|w| w.0 == group) {
                    Some(i) => first + i,
                    None => {
                        walks.push((group, path));
                        walks.len() - 1
                    }
                };
                walk_of.push(walk as u32);
            }
        }
        outcomes.clear();
        self.artifact.decide_many(&walks, outcomes)?;
        for (&(l, _), walk_of) in queries.iter().zip(walk_of.chunks_exact(n)) {
            let row = &mut verdicts[lanes[l].url * n..(lanes[l].url + 1) * n];
            for (verdict, &walk) in row.iter_mut().zip(walk_of) {
                *verdict = outcomes[walk as usize].verdict();
            }
        }
        if counts.len() != n {
            counts.resize(n, [0; 4]);
        }
        for row in verdicts.chunks_exact(n) {
            for (count, verdict) in counts.iter_mut().zip(row) {
                count[verdict.index()] += 1;
            }
        }
        Ok(())
    }

    /// Merges the fetch tallies of every scratch of a run: URLs and distinct
    /// origins per fetch class (each URL counted once, whatever the crawlers).
    pub fn fetch_tallies<'s>(
        &self,
        scratches: impl IntoIterator<Item = &'s MatrixScratch>,
    ) -> [(FetchClass, u64, u64); FetchClass::COUNT] {
        fetch_tallies(self.artifact, scratches.into_iter().map(|s| &s.base))
    }

    /// The origins the URLs of a run reached (found in the artifact), in order.
    pub fn origins_reached<'s>(&self, scratches: impl IntoIterator<Item = &'s MatrixScratch>) -> Vec<usize> {
        let mut hit = vec![0u64; self.artifact.origins().div_ceil(64)];
        for s in scratches {
            for (word, bits) in hit.iter_mut().zip(&s.base.origins_hit) {
                *word |= bits;
            }
        }
        (0..self.artifact.origins()).filter(|o| hit[o / 64] & (1 << (o % 64)) != 0).collect()
    }

    /// Merges the verdict counts of every scratch of a run, per crawler.
    pub fn counts<'s>(&self, scratches: impl IntoIterator<Item = &'s MatrixScratch>) -> Vec<[u64; 4]> {
        let mut total = vec![[0u64; 4]; self.agents.len()];
        for s in scratches {
            for (t, c) in total.iter_mut().zip(&s.counts) {
                for (t, c) in t.iter_mut().zip(c) {
                    *t += c;
                }
            }
        }
        total
    }
}

impl Classifier for MatrixClassifier<'_> {
    type Scratch = MatrixScratch;

    /// The first crawler's verdict; with `explain`, the row: every crawler's
    /// verdict, tab-separated.
    fn classify(
        &self,
        url: &[u8],
        scratch: &mut MatrixScratch,
        explain: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, ArtifactError> {
        let mut verdicts = std::mem::take(&mut scratch.verdicts);
        let result = self.verdicts(&[url], scratch, &mut verdicts, |_, _| {});
        if let (Ok(()), Some(out)) = (&result, explain) {
            write_row(out, &verdicts);
        }
        let first = verdicts[0];
        scratch.verdicts = verdicts;
        result.map(|()| first)
    }

    fn classify_batch(
        &self,
        urls: &[&[u8]],
        scratch: &mut MatrixScratch,
        verdicts: &mut [Verdict],
        mut reasons: Option<&mut Reasons>,
    ) -> Result<(), ArtifactError> {
        let mut matrix = std::mem::take(&mut scratch.verdicts);
        let result = self.verdicts(urls, scratch, &mut matrix, |_, _| {});
        if result.is_err() {
            scratch.verdicts = matrix;
            return result;
        }
        for (verdict, row) in verdicts.iter_mut().zip(matrix.chunks_exact(self.agents.len())) {
            *verdict = row[0];
            if let Some(reasons) = reasons.as_mut() {
                write_row(reasons.start_next(), row);
            }
        }
        scratch.verdicts = matrix;
        Ok(())
    }
}

/// `allowed<TAB>disallowed<TAB>...`: one row of a matrix.
fn write_row(out: &mut Vec<u8>, row: &[Verdict]) {
    for (i, verdict) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        out.extend_from_slice(verdict.name().as_bytes());
    }
}
