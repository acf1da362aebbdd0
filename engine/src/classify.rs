//! URL verdicts from an artifact: origin, group, automaton.
//!
//! This is the per-URL work of `filter` and `check --rules`: take the URL
//! apart without allocating, find its origin in the artifact's index, pick the
//! group of the crawler, prepare the path (escaped by default) and walk it.
//! [`AgentClassifier::answer`] does it for one URL and can say why;
//! [`AgentClassifier::verdicts`], what the filter runs, takes a batch of URLs
//! through each of those steps side by side, so that their cache misses
//! overlap.

use crate::artifact::{Artifact, ExplainedRule, FetchInfo, FetchKind, GroupOutcome};
use crate::filter::{Classifier, Reasons};
use crate::url::{origin_hash, KeyBuf, PathMode, UrlError};
use crate::verdict::Verdict;
use std::fmt;
use std::io::Write;
use std::ops::Range;

/// One crawler's view of an artifact: classifies URLs for the filter.
pub struct AgentClassifier<'a> {
    artifact: &'a Artifact,
    agent: usize,
    mode: PathMode,
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
    /// The classifier of agent number `agent` (see [`Artifact::agent_index`]).
    pub fn new(artifact: &'a Artifact, agent: usize, mode: PathMode) -> AgentClassifier<'a> {
        assert!(agent < artifact.meta().agents.len(), "agent {agent} is not in the artifact");
        AgentClassifier { artifact, agent, mode }
    }

    /// Merges the tallies of every scratch of a run: URLs and distinct origins
    /// per fetch class.
    pub fn fetch_tallies(&self, scratches: &[Scratch]) -> [(FetchClass, u64, u64); FetchClass::COUNT] {
        let mut urls = [0u64; FetchClass::COUNT];
        let mut hit = vec![0u64; self.artifact.origins().div_ceil(64)];
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
                origins[FetchClass::of(self.artifact.fetch_info(o).kind) as usize] += 1;
                bits &= bits - 1;
            }
        }
        FetchClass::ALL.map(|c| (c, urls[c as usize], origins[c as usize]))
    }
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
    pub fn answer(&self, url: &[u8], scratch: &mut Scratch, explain: bool) -> Answer<'a> {
        self.answers(&[url], scratch, explain)[0]
    }

    /// The verdicts of many URLs, in order: what [`AgentClassifier::answer`]
    /// gives each, without the reasons.
    pub fn verdicts(&self, urls: &[&[u8]], scratch: &mut Scratch, verdicts: &mut [Verdict]) {
        assert_eq!(urls.len(), verdicts.len(), "one verdict per URL");
        for (verdict, answer) in verdicts.iter_mut().zip(self.answers(urls, scratch, false)) {
            *verdict = answer.verdict;
        }
    }

    /// The answers for many URLs, in order (see [`AgentClassifier::answer`]).
    /// The URLs are taken through each step side by side (parse all, find
    /// all origins, decide all), so that the cache misses of different URLs
    /// overlap; see [`Artifact::decide_many`].
    pub fn answers(&self, urls: &[&[u8]], scratch: &mut Scratch, explain: bool) -> Vec<Answer<'a>> {
        let mut answers = vec![Answer { verdict: Verdict::Invalid, reason: Reason::NotAsked }; urls.len()];
        let Scratch { key, keys, paths, lanes, origins, outcomes, urls_by_fetch, origins_hit, .. } = scratch;
        keys.clear();
        paths.clear();
        lanes.clear();
        for (i, url) in urls.iter().enumerate() {
            match key.parse(url) {
                Ok(origin) => {
                    let (key_start, path_start) = (keys.len(), paths.len());
                    keys.extend_from_slice(origin.key);
                    self.mode.prepare_into(&origin, paths);
                    let hash = origin_hash(origin.key);
                    lanes.push(Lane { url: i, key: key_start..keys.len(), hash, path: path_start..paths.len() });
                }
                Err(e) => answers[i].reason = Reason::Invalid(e),
            }
        }
        let lookups: Vec<(&[u8], u64)> = lanes.iter().map(|lane| (&keys[lane.key.clone()], lane.hash)).collect();
        origins.clear();
        self.artifact.find_origins(&lookups, origins);
        let mut queries = Vec::with_capacity(lanes.len());
        let mut asked = Vec::with_capacity(lanes.len());
        for (lane, origin) in lanes.iter().zip(origins.iter()) {
            match *origin {
                Some(o) => {
                    let info = self.tally(o, urls_by_fetch, origins_hit);
                    queries.push((self.artifact.group_of(o, self.agent), &paths[lane.path.clone()]));
                    asked.push((lane.url, info));
                }
                None => answers[lane.url] = Answer { verdict: Verdict::Unknown, reason: Reason::NoRobots },
            }
        }
        outcomes.clear();
        self.artifact.decide_many(&queries, outcomes);
        for (&(url, info), outcome) in asked.iter().zip(outcomes.iter()) {
            let reason = match info.kind {
                _ if !explain => Reason::NotAsked,
                FetchKind::Blocked => Reason::Blocked(info.status),
                FetchKind::Unrestricted => Reason::Unrestricted(info.status),
                FetchKind::Rules => match self.artifact.explain(outcome) {
                    Some(rule) => Reason::Rule(rule),
                    None if outcome.rank == 0 => Reason::NoMatch,
                    None => Reason::Unexplained,
                },
            };
            answers[url] = Answer { verdict: outcome.verdict(), reason };
        }
        answers
    }

    /// Counts a URL of origin `o` in the fetch tallies; its fetch information.
    #[inline]
    fn tally(&self, o: usize, urls_by_fetch: &mut [u64; FetchClass::COUNT], origins_hit: &mut Vec<u64>) -> FetchInfo {
        let info = self.artifact.fetch_info(o);
        urls_by_fetch[FetchClass::of(info.kind) as usize] += 1;
        if origins_hit.len() <= o / 64 {
            origins_hit.resize(self.artifact.origins().div_ceil(64), 0);
        }
        origins_hit[o / 64] |= 1 << (o % 64);
        info
    }
}

impl Classifier for AgentClassifier<'_> {
    type Scratch = Scratch;

    #[inline]
    fn classify(&self, url: &[u8], scratch: &mut Scratch, explain: Option<&mut Vec<u8>>) -> Verdict {
        let answer = self.answer(url, scratch, explain.is_some());
        if let Some(out) = explain {
            let _ = write!(out, "{}", answer.reason);
        }
        answer.verdict
    }

    fn classify_batch(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
        mut reasons: Option<&mut Reasons>,
    ) {
        let answers = self.answers(urls, scratch, reasons.is_some());
        for (verdict, answer) in verdicts.iter_mut().zip(answers) {
            *verdict = answer.verdict;
            if let Some(reasons) = reasons.as_mut() {
                let _ = write!(reasons.start_next(), "{}", answer.reason);
            }
        }
    }
}
