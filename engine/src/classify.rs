//! URL verdicts from an artifact: origin, group, automaton.
//!
//! This is the per-URL work of `filter` and `check --rules`: take the URL
//! apart without allocating, find its origin in the artifact's index, pick the
//! group of the crawler, prepare the path (escaped by default) and walk it.
//! [`AgentClassifier::answer`] does it for one URL and can say why;
//! [`AgentClassifier::verdicts`], what the filter runs, groups a chunk's URLs
//! by origin, so that each origin is looked up and its group read once per
//! run of its URLs, and takes the short runs through each step side by side,
//! so that their cache misses overlap.

use crate::artifact::{ArtifactError, ExplainedRule, GroupOutcome};
use crate::format::{FetchInfo, FetchKind};
use crate::shards::ShardSet;
use robotsieve_core::arch::Avx2;
use robotsieve_core::preference::{applicable, describe, Applied, PreferenceField};
use robotsieve_core::url::{origin_hash, origin_hash_of_prefix, KeyBuf, Origin, PathMode, UrlError};
use robotsieve_core::Verdict;
use std::borrow::Cow;
use std::fmt;
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
    /// The grouped path's lanes by origin hash (see [`AgentClassifier::verdicts`]),
    /// and room for sorting them.
    order: Vec<u64>,
    spare: Vec<u64>,
    /// Where each run of one origin's URLs ends in `grouped`.
    runs: Vec<usize>,
    /// The grouped path's lanes, and room for putting them in hash order.
    grouped: Vec<GroupedLane>,
    sorted_lanes: Vec<GroupedLane>,
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

/// A URL of the grouped path ([`AgentClassifier::verdicts`]) that parsed:
/// its number, where its origin key is, its origin hash (taken from the URL
/// before when their keys are equal: only a run's first URL is hashed) and
/// where its prepared path is.
#[derive(Clone, Debug)]
struct GroupedLane {
    url: usize,
    key: BytesAt,
    hash: u64,
    path: BytesAt,
}

/// Where a URL's origin key or prepared path is: inside the URL (nearly
/// always: the plain URLs of a frontier start with their key as it is
/// written and need no change to their path), or copied into a scratch
/// buffer (the keys or the paths).
#[derive(Clone, Debug)]
enum BytesAt {
    /// These bytes of the URL.
    Url(Range<usize>),
    /// These bytes of the buffer.
    Buffer(Range<usize>),
}

impl BytesAt {
    /// Where `bytes` are: in `url` when they are a part of it, else copied
    /// into `buffer`.
    #[inline]
    fn of_bytes(bytes: &[u8], url: &[u8], buffer: &mut Vec<u8>) -> BytesAt {
        let within = (bytes.as_ptr() as usize).checked_sub(url.as_ptr() as usize);
        match within {
            Some(start) if start + bytes.len() <= url.len() => BytesAt::Url(start..start + bytes.len()),
            _ => BytesAt::copied(bytes, buffer),
        }
    }

    /// `bytes` copied to the end of `buffer`.
    #[inline]
    fn copied(bytes: &[u8], buffer: &mut Vec<u8>) -> BytesAt {
        let start = buffer.len();
        buffer.extend_from_slice(bytes);
        BytesAt::Buffer(start..buffer.len())
    }

    /// The path of `origin` (taken from `url`) in `mode`, copied into `paths`
    /// only when it is not a part of the URL as it is.
    #[inline]
    fn prepare(mode: PathMode, origin: &Origin<'_>, url: &[u8], paths: &mut Vec<u8>) -> BytesAt {
        match origin.path_for(mode) {
            Cow::Borrowed(path) => BytesAt::of_bytes(path, url, paths),
            Cow::Owned(path) => {
                let start = paths.len();
                paths.extend_from_slice(&path);
                BytesAt::Buffer(start..paths.len())
            }
        }
    }

    /// The bytes, given their URL and the buffer.
    #[inline]
    fn of<'p>(&self, url: &'p [u8], buffer: &'p [u8]) -> &'p [u8] {
        match self {
            BytesAt::Url(range) => &url[range.clone()],
            BytesAt::Buffer(range) => &buffer[range.clone()],
        }
    }

    /// The [`origin_hash`] of these bytes (an origin key), given their URL
    /// and the buffer: a key in the URL is hashed reading the bytes after it
    /// ([`origin_hash_of_prefix`]).
    #[inline]
    fn hash(&self, url: &[u8], buffer: &[u8]) -> u64 {
        match self {
            BytesAt::Url(range) => origin_hash_of_prefix(&url[range.start..], range.len()),
            BytesAt::Buffer(range) => origin_hash(&buffer[range.clone()]),
        }
    }
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

    /// Makes every reason the filter asks for (the pipeline's classifier trait) end with the
    /// `Content-Signal` and `Content-Usage` preferences that apply, after
    /// ` | ` (nothing when none apply).
    pub fn explaining_preferences(mut self, yes: bool) -> AgentClassifier<'a> {
        self.explain_preferences = yes;
        self
    }

    /// Appends ` | PREFERENCES` to a reason, when asked for and any apply.
    pub fn append_preferences(&self, url: &[u8], scratch: &mut Scratch, out: &mut Vec<u8>) {
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
    /// gives each, without the reasons. What the filter runs on a chunk.
    ///
    /// The URLs are classified grouped by origin, then the verdicts put back
    /// in input order: every URL is taken apart first, the URLs are ordered
    /// by origin hash, and each run of URLs of one origin is looked up and
    /// tallied once, `GROUP_WINDOW` URLs at a time. The runs' origins are looked up `RUN_WINDOW` at a time
    /// side by side; a run of `LONG_RUN` URLs or more reads its group once
    /// ([`ShardSet::compiled_group`]) and scans each path while the group's
    /// tables are hot, and the URLs of the shorter runs are walked side by
    /// side ([`ShardSet::decide_many`]), so that their cold misses overlap.
    pub fn verdicts(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        self.windows_verdicts::<false>(urls, scratch, verdicts)
    }

    /// [`AgentClassifier::verdicts`] of URLs that come grouped by origin
    /// (the partitioned filter's second pass sorts each block by the origin
    /// hash its first pass took): the same verdicts, without hashing every
    /// URL's origin key or sorting again. Runs are found by comparing the
    /// keys the parser gives, and only each run's first URL is hashed, to
    /// look its origin up. The grouping is a hint, never trusted for a
    /// verdict: URLs of one origin that come apart only form more runs.
    pub fn grouped_verdicts(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        self.windows_verdicts::<true>(urls, scratch, verdicts)
    }

    /// The verdicts of many URLs, [`GROUP_WINDOW`] at a time
    /// ([`AgentClassifier::window_verdicts`]).
    #[inline(always)]
    fn windows_verdicts<const GROUPED: bool>(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        assert_eq!(urls.len(), verdicts.len(), "one verdict per URL");
        for (urls, verdicts) in urls.chunks(GROUP_WINDOW).zip(verdicts.chunks_mut(GROUP_WINDOW)) {
            self.window_verdicts::<GROUPED>(urls, scratch, verdicts)?;
        }
        Ok(())
    }

    /// [`AgentClassifier::verdicts`] of one window of URLs; `GROUPED`: they
    /// come grouped by origin ([`AgentClassifier::grouped_verdicts`]). A
    /// constant, so that each path is compiled apart (a run-time flag costs
    /// the windowed path instructions on every URL).
    fn window_verdicts<const GROUPED: bool>(
        &self,
        urls: &[&[u8]],
        scratch: &mut Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), ArtifactError> {
        let Scratch {
            key,
            keys,
            paths,
            grouped: lanes,
            sorted_lanes,
            order,
            spare,
            runs,
            origins,
            outcomes,
            urls_by_fetch,
            origins_hit,
            ..
        } = scratch;
        assert!(urls.len() <= LANE_BITS as usize, "at most 2^32 URLs at once");
        keys.clear();
        paths.clear();
        lanes.clear();
        runs.clear();
        self.take_apart(urls, verdicts, key, keys, paths, lanes, runs);
        if !lanes.is_empty() {
            runs.push(lanes.len());
        }
        // A window whose runs in input order average fewer than [`LONG_RUN`]
        // URLs (unless it came grouped) is ordered by hash, so that the URLs
        // of an origin are side by side: each entry of `order` is the top
        // half of the hash over the lane number, sorted on the hash's top
        // bits (see `group_by_hash`), and the lanes are put in that order.
        // Origins whose hashes agree in those bits may interleave, which only
        // splits their runs. A window that already comes in runs keeps its
        // order: its runs are then as long as the sort would make them, but
        // for an origin that comes back later in the window, whose URLs then
        // form two runs (as correct, only less grouped).
        if !GROUPED && lanes.len() < LONG_RUN * runs.len() {
            order.clear();
            order.extend(lanes.iter().enumerate().map(|(i, lane)| lane.hash & !LANE_BITS | i as u64));
            group_by_hash(order, spare);
            sorted_lanes.clear();
            sorted_lanes.extend(order.iter().map(|&entry| lanes[(entry & LANE_BITS) as usize].clone()));
            std::mem::swap(lanes, sorted_lanes);
            runs.clear();
            let key_of = |lane: &GroupedLane| lane.key.of(urls[lane.url], keys);
            for (i, pair) in lanes.windows(2).enumerate() {
                if pair[0].hash != pair[1].hash || !same_key(key_of(&pair[0]), key_of(&pair[1])) {
                    runs.push(i + 1);
                }
            }
            runs.push(lanes.len());
        }
        // Runs are taken a window at a time: the origins of a window looked
        // up side by side (their cache misses overlap, as do those of the
        // short runs' walks, see `decide_many`); a long run's group is read
        // once and its paths scanned with the tables hot.
        let mut start = 0;
        for window in runs.chunks(RUN_WINDOW) {
            let heads: Vec<(&[u8], u64)> = std::iter::once(start)
                .chain(window[..window.len() - 1].iter().copied())
                .map(|at| {
                    let lane = &lanes[at];
                    (lane.key.of(urls[lane.url], keys), lane.hash)
                })
                .collect();
            origins.clear();
            self.artifact.find_origins(&heads, origins);
            // Room for every URL of the window's runs (grown push by push,
            // the reallocations were a few percent of a cold frontier's work).
            let urls_in_window = window.last().map_or(0, |&end| end - start);
            let mut queries: Vec<(usize, &[u8])> = Vec::with_capacity(urls_in_window);
            let mut asked: Vec<usize> = Vec::with_capacity(urls_in_window);
            for (&end, origin) in window.iter().zip(origins.iter()) {
                let run = &lanes[start..end];
                start = end;
                let Some(o) = *origin else {
                    self.artifact.check_routed(run[0].hash, urls[run[0].url])?;
                    for lane in run {
                        verdicts[lane.url] = Verdict::Unknown;
                    }
                    continue;
                };
                tally_run(self.artifact, o, run.len() as u64, urls_by_fetch, origins_hit);
                let group = self.artifact.group_of(o, self.agent);
                if run.len() < LONG_RUN {
                    for lane in run {
                        queries.push((group, lane.path.of(urls[lane.url], paths)));
                        asked.push(lane.url);
                    }
                    continue;
                }
                let group = self.artifact.compiled_group(group)?;
                for lane in run {
                    let path = lane.path.of(urls[lane.url], paths);
                    verdicts[lane.url] = if group.allows(path) { Verdict::Allowed } else { Verdict::Disallowed };
                }
            }
            outcomes.clear();
            self.artifact.decide_many(&queries, outcomes)?;
            for (&url, outcome) in asked.iter().zip(outcomes.iter()) {
                verdicts[url] = outcome.verdict();
            }
        }
        Ok(())
    }

    /// Takes a window's URLs apart into `lanes` (an invalid URL gets its
    /// verdict here) and finds the runs of one origin in input order, their
    /// ends into `runs` (but the last's): a URL whose key is the one
    /// before's joins its run and takes its hash, so that only each run's
    /// first URL is hashed (a list sorted or grouped by host, as
    /// crawl2019's is, hashes one URL in tens). The key comparison usually
    /// fails on the keys' lengths. Where the CPU has AVX2, the loop is
    /// compiled for it, with the URL scans inlined
    /// ([`AgentClassifier::take_apart_avx2`]).
    #[allow(clippy::too_many_arguments, reason = "the scratch buffers, borrowed apart")]
    fn take_apart(
        &self,
        urls: &[&[u8]],
        verdicts: &mut [Verdict],
        key: &mut KeyBuf,
        keys: &mut Vec<u8>,
        paths: &mut Vec<u8>,
        lanes: &mut Vec<GroupedLane>,
        runs: &mut Vec<usize>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = key.avx2() {
            // SAFETY: the token says that the CPU has AVX2.
            return unsafe { self.take_apart_avx2(avx2, urls, verdicts, key, keys, paths, lanes, runs) };
        }
        self.take_apart_with::<false>(None, urls, verdicts, key, keys, paths, lanes, runs);
    }

    /// [`AgentClassifier::take_apart`] compiled for AVX2, the URL parser's
    /// vector scans ([`KeyBuf::locate_avx2`]) inlined into the loop: as calls
    /// of their own they spend their entry and exit and return the scan's
    /// answer through memory, on every URL.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[allow(clippy::too_many_arguments, reason = "the scratch buffers, borrowed apart")]
    fn take_apart_avx2(
        &self,
        avx2: Avx2,
        urls: &[&[u8]],
        verdicts: &mut [Verdict],
        key: &mut KeyBuf,
        keys: &mut Vec<u8>,
        paths: &mut Vec<u8>,
        lanes: &mut Vec<GroupedLane>,
        runs: &mut Vec<usize>,
    ) {
        self.take_apart_with::<true>(Some(avx2), urls, verdicts, key, keys, paths, lanes, runs);
    }

    /// [`AgentClassifier::take_apart`]; `AVX2`: the CPU has AVX2 and the
    /// caller is compiled for it, and then `avx2` is its token.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "the scratch buffers, borrowed apart")]
    fn take_apart_with<const AVX2: bool>(
        &self,
        avx2: Option<Avx2>,
        urls: &[&[u8]],
        verdicts: &mut [Verdict],
        key: &mut KeyBuf,
        keys: &mut Vec<u8>,
        paths: &mut Vec<u8>,
        lanes: &mut Vec<GroupedLane>,
        runs: &mut Vec<usize>,
    ) {
        // The key before and its hash.
        let mut last: Option<(LastKey<'_>, u64)> = None;
        for (i, (&url, verdict)) in urls.iter().zip(verdicts.iter_mut()).enumerate() {
            let Some((key_at, path)) = self.place(avx2, url, key, keys, paths) else {
                *verdict = Verdict::Invalid;
                continue;
            };
            let this = LastKey::of(&key_at, url);
            let hash = match &last {
                Some((last_key, hash)) if last_key.same::<AVX2>(&this, keys) => *hash,
                last => {
                    if last.is_some() {
                        runs.push(lanes.len());
                    }
                    key_at.hash(url, keys)
                }
            };
            lanes.push(GroupedLane { url: i, key: key_at, hash, path });
            last = Some((this, hash));
        }
    }

    /// Takes `url` apart for the grouped path: where its origin key is and
    /// where its prepared path is (copied into `keys` or `paths` only when
    /// they are not bytes of the URL); `None` for a URL that is not one. In
    /// the default mode the parser says where the two are
    /// ([`KeyBuf::locate`]), with no [`Origin`] built and taken apart again;
    /// `--raw-urls` reads its path from the [`Origin`]. With `avx2`, the
    /// caller is compiled for AVX2 ([`AgentClassifier::take_apart_avx2`]),
    /// whose scans are then inlined here. Always inlined: as
    /// a call of its own, its two places come back through memory.
    #[inline(always)]
    fn place(
        &self,
        avx2: Option<Avx2>,
        url: &[u8],
        key: &mut KeyBuf,
        keys: &mut Vec<u8>,
        paths: &mut Vec<u8>,
    ) -> Option<(BytesAt, BytesAt)> {
        if self.mode == PathMode::Raw {
            let origin = key.parse(url).ok()?;
            let at = BytesAt::of_bytes(origin.key, url, keys);
            return Some((at, BytesAt::prepare(self.mode, &origin, url, paths)));
        }
        #[cfg(target_arch = "x86_64")]
        let spans = match avx2 {
            Some(avx2) => key.locate_avx2(avx2, url),
            None => key.locate(url),
        };
        #[cfg(not(target_arch = "x86_64"))]
        let spans = {
            let _ = avx2;
            key.locate(url)
        };
        let spans = spans.ok()?;
        let at = match spans.key {
            Some(range) => BytesAt::Url(range),
            None => BytesAt::copied(key.key(), keys),
        };
        let path = match spans.path {
            Some(range) => BytesAt::Url(range),
            None => BytesAt::copied(key.path(), paths),
        };
        Some((at, path))
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
                None => {
                    self.artifact.check_routed(lane.hash, urls[lane.url])?;
                    answers[lane.url] = Answer { verdict: Verdict::Unknown, reason: Reason::NoRobots };
                }
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
    /// one URL for this crawler (see [`robotsieve_core::preference::applicable`]):
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

/// How many URLs [`AgentClassifier::verdicts`] groups by origin at once:
/// few enough that a window's lanes, keys and URLs stay in the L2 cache
/// while they are visited in hash order (with a whole 1 MiB chunk, those
/// visits miss the cache), many enough that the URLs of a popular origin
/// form a run.
const GROUP_WINDOW: usize = 2048;

/// How many runs of one origin [`AgentClassifier::verdicts`] looks up side
/// by side: enough for their cache misses to overlap.
const RUN_WINDOW: usize = 256;

/// From how many URLs on a run of one origin is scanned with its group read
/// once ([`ShardSet::compiled_group`]) rather than walked side by side with
/// the other short runs' URLs: below it, the first walk's cold misses are
/// most of the run's cost, and overlapping them with others' gains more.
const LONG_RUN: usize = 4;

/// The low half of an entry of [`group_by_hash`]: a lane number.
const LANE_BITS: u64 = u32::MAX as u64;

/// How many top bits of an entry [`group_by_hash`] orders by: two radix
/// passes of 11 bits, whose counts (16 KiB) stay in the L1 cache.
const RADIX_BITS: u32 = 11;

/// Orders `entries` (an origin hash's top half over a lane number) so that
/// equal top [`RADIX_BITS`]` * 2` bits are side by side, keeping input order
/// among them (a stable least-significant-digit radix sort, `spare` its
/// room): a few instructions per entry, where a comparison sort of a chunk
/// cost a hundred. Two origins share those 22 bits rarely (of the 2,000
/// origins in a chunk, about one pair in four chunks): their URLs then
/// interleave, which only splits their runs.
fn group_by_hash(entries: &mut Vec<u64>, spare: &mut Vec<u64>) {
    const BUCKETS: usize = 1 << RADIX_BITS;
    if entries.len() < 64 {
        // Too few for the passes' fixed cost; the lane numbers make entries distinct.
        entries.sort_unstable();
        return;
    }
    let digit = |entry: u64, pass: u32| (entry >> (64 - RADIX_BITS * (2 - pass))) as usize % BUCKETS;
    let mut counts = [[0u32; BUCKETS]; 2];
    for &entry in entries.iter() {
        counts[0][digit(entry, 0)] += 1;
        counts[1][digit(entry, 1)] += 1;
    }
    spare.clear();
    spare.resize(entries.len(), 0);
    for (pass, counts) in counts.iter_mut().enumerate() {
        let mut next = 0;
        for count in counts.iter_mut() {
            (*count, next) = (next, next + *count);
        }
        for &entry in entries.iter() {
            let at = &mut counts[digit(entry, pass as u32)];
            spare[*at as usize] = entry;
            *at += 1;
        }
        std::mem::swap(entries, spare);
    }
}

/// Whether two origin keys are equal: `a == b`, compared inline a word at
/// a time (keys are 10 to 40 bytes; the run detection compares one pair per
/// URL, and a call to `memcmp` for each cost about as much as the rest of
/// the comparison).
#[inline]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let word = |bytes: &[u8], at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let mut at = 0;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    // The last 8 bytes (overlapping the words before when n is not a multiple of 8).
    word(a, n - 8) == word(b, n - 8)
}

/// An origin key as the run detection of [`AgentClassifier::take_apart`]
/// keeps it for the next URL's comparison: where it is a part of its URL,
/// the URL from the key's start on and the key's length (so that a key of at
/// most 32 bytes followed by enough of its URL is compared as one block),
/// else its place in the keys buffer.
enum LastKey<'u> {
    /// The URL from the key's start, and the key's length.
    InUrl(&'u [u8], usize),
    /// These bytes of the keys buffer.
    Buffer(Range<usize>),
}

impl<'u> LastKey<'u> {
    /// The key at `at` of `url`.
    #[inline(always)]
    fn of(at: &BytesAt, url: &'u [u8]) -> LastKey<'u> {
        match at {
            BytesAt::Url(range) => LastKey::InUrl(&url[range.start..], range.end - range.start),
            BytesAt::Buffer(range) => LastKey::Buffer(range.clone()),
        }
    }

    /// Whether the two keys are equal, given the keys buffer. `AVX2`: the
    /// CPU has AVX2 and the caller is compiled for it; then two keys of at
    /// most 32 bytes, each followed by enough of its URL, are compared as
    /// one 32-byte block each, rather than by a word loop with its bounds
    /// checks: the run detection compares every URL's key with the one
    /// before's.
    #[inline(always)]
    fn same<const AVX2: bool>(&self, other: &LastKey<'_>, buffer: &[u8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let (true, LastKey::InUrl(a, len), LastKey::InUrl(b, other_len)) = (AVX2, self, other) {
            if len != other_len {
                return false;
            }
            if let (Some(a), Some(b), true) = (a.get(..32), b.get(..32), *len <= 32) {
                // SAFETY: `AVX2` says that the CPU has AVX2.
                return unsafe { same_first_bytes_avx2(a, b, *len) };
            }
        }
        same_key(self.bytes(buffer), other.bytes(buffer))
    }

    /// The key's bytes, given the keys buffer.
    #[inline(always)]
    fn bytes<'s>(&'s self, buffer: &'s [u8]) -> &'s [u8] {
        match self {
            LastKey::InUrl(tail, len) => &tail[..*len],
            LastKey::Buffer(range) => &buffer[range.clone()],
        }
    }
}

/// Whether the first `len` bytes (at most 32) of two 32-byte blocks
/// (`a` and `b` hold 32 bytes each) are equal, compared in one AVX2 step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn same_first_bytes_avx2(a: &[u8], b: &[u8], len: usize) -> bool {
    use std::arch::x86_64::*;
    assert!(a.len() >= 32 && b.len() >= 32 && len <= 32);
    // SAFETY: each load reads the first 32 bytes of its slice.
    let equal = unsafe {
        let (a, b) = (_mm256_loadu_si256(a.as_ptr().cast()), _mm256_loadu_si256(b.as_ptr().cast()));
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b)) as u32
    };
    let wanted = ((1u64 << len) - 1) as u32;
    equal & wanted == wanted
}

/// Counts a URL of origin `o` in the fetch tallies; its fetch information.
#[inline]
fn tally(
    artifact: &ShardSet,
    o: usize,
    urls_by_fetch: &mut [u64; FetchClass::COUNT],
    origins_hit: &mut Vec<u64>,
) -> FetchInfo {
    tally_run(artifact, o, 1, urls_by_fetch, origins_hit)
}

/// Counts `urls` URLs of origin `o` in the fetch tallies; its fetch information.
#[inline]
fn tally_run(
    artifact: &ShardSet,
    o: usize,
    urls: u64,
    urls_by_fetch: &mut [u64; FetchClass::COUNT],
    origins_hit: &mut Vec<u64>,
) -> FetchInfo {
    let info = artifact.fetch_info(o);
    urls_by_fetch[FetchClass::of(info.kind) as usize] += urls;
    if origins_hit.len() <= o / 64 {
        origins_hit.resize(artifact.origins().div_ceil(64), 0);
    }
    origins_hit[o / 64] |= 1 << (o % 64);
    info
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
                None => {
                    self.artifact.check_routed(lane.hash, urls[lane.url])?;
                    verdicts[lane.url * n..(lane.url + 1) * n].fill(self.unknown_as);
                }
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

impl MatrixClassifier<'_> {
    /// The first crawler's verdict of one URL (what the filter counts); with
    /// `row`, the row of every crawler's verdict ([`MatrixClassifier::write_row`])
    /// appended to it.
    pub fn first_verdict(
        &self,
        url: &[u8],
        scratch: &mut MatrixScratch,
        row: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, ArtifactError> {
        let mut verdicts = std::mem::take(&mut scratch.verdicts);
        let result = self.verdicts(&[url], scratch, &mut verdicts, |_, _| {});
        if let (Ok(()), Some(out)) = (&result, row) {
            write_row(out, &verdicts);
        }
        let first = verdicts[0];
        scratch.verdicts = verdicts;
        result.map(|()| first)
    }

    /// The first crawler's verdicts of many URLs, in order, with each URL's
    /// row of every crawler's verdict handed to `each_row`, in order.
    pub fn first_verdicts(
        &self,
        urls: &[&[u8]],
        scratch: &mut MatrixScratch,
        verdicts: &mut [Verdict],
        mut each_row: impl FnMut(&[Verdict]),
    ) -> Result<(), ArtifactError> {
        let mut matrix = std::mem::take(&mut scratch.verdicts);
        let result = self.verdicts(urls, scratch, &mut matrix, |_, _| {});
        if result.is_err() {
            scratch.verdicts = matrix;
            return result;
        }
        for (verdict, row) in verdicts.iter_mut().zip(matrix.chunks_exact(self.agents.len())) {
            *verdict = row[0];
            each_row(row);
        }
        scratch.verdicts = matrix;
        Ok(())
    }

    /// Appends `allowed<TAB>disallowed<TAB>...`: one row of a matrix, the
    /// verdicts' names in crawler order.
    pub fn write_row(out: &mut Vec<u8>, row: &[Verdict]) {
        write_row(out, row)
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `same_key` is `==` on every pair of lengths up to 40, equal or
        /// differing in one byte anywhere.
        #[test]
        fn same_key_is_equality(
            a in proptest::collection::vec(0u8..4, 0..40),
            flip in proptest::option::of((0usize..40, 1u8..4)),
            trim in 0usize..3,
        ) {
            let mut b = a.clone();
            if let Some((at, by)) = flip {
                if let Some(byte) = b.get_mut(at) {
                    *byte ^= by;
                }
            }
            b.truncate(b.len().saturating_sub(trim));
            proptest::prop_assert_eq!(same_key(&a, &b), a == b);
            proptest::prop_assert!(same_key(&a, &a));
        }
    }

    proptest::proptest! {
        /// `LastKey::same` is `==` on the keys' bytes, whichever the places
        /// (a URL's tail of any length after the key, or the buffer) and
        /// whichever the form (the AVX2 block where the CPU has it).
        #[test]
        fn last_keys_compare_as_their_bytes(
            a in proptest::collection::vec(0u8..3, 0..40),
            flip in proptest::option::of((0usize..40, 1u8..3)),
            b_len in proptest::option::of(0usize..40),
            tails in (proptest::collection::vec(0u8..3, 0..40), proptest::collection::vec(0u8..3, 0..40)),
            in_buffer in (proptest::bool::weighted(0.2), proptest::bool::weighted(0.2)),
        ) {
            let mut b = a.clone();
            if let Some((at, by)) = flip {
                if let Some(byte) = b.get_mut(at) {
                    *byte ^= by;
                }
            }
            if let Some(len) = b_len {
                b.resize(len, 1);
            }
            let url_a = [a.as_slice(), &tails.0].concat();
            let url_b = [b.as_slice(), &tails.1].concat();
            let buffer = [a.as_slice(), &b].concat();
            let key_a = if in_buffer.0 { BytesAt::Buffer(0..a.len()) } else { BytesAt::Url(0..a.len()) };
            let key_b = if in_buffer.1 { BytesAt::Buffer(a.len()..buffer.len()) } else { BytesAt::Url(0..b.len()) };
            let (last_a, last_b) = (LastKey::of(&key_a, &url_a), LastKey::of(&key_b, &url_b));
            proptest::prop_assert_eq!(last_a.same::<false>(&last_b, &buffer), a == b);
            #[cfg(target_arch = "x86_64")]
            if robotsieve_core::arch::Avx2::available() {
                proptest::prop_assert_eq!(last_a.same::<true>(&last_b, &buffer), a == b);
            }
        }
    }

    #[test]
    fn grouping_by_hash_puts_equal_top_bits_side_by_side_keeping_input_order() {
        for len in [0usize, 1, 63, 64, 65, 1000, 5000] {
            // Few distinct hashes, so that every one comes back many times,
            // some of them equal in the top bits and apart below.
            let hash = |i: usize| {
                let h = robotsieve_core::url::origin_hash(&[(i % 37) as u8]);
                if i % 5 == 0 {
                    h & !(u64::MAX >> 22) | 0x1234_5678
                } else {
                    h
                }
            };
            let mut entries: Vec<u64> = (0..len).map(|l| hash(l) & !LANE_BITS | l as u64).collect();
            group_by_hash(&mut entries, &mut Vec::new());
            let mut lanes: Vec<u64> = entries.iter().map(|e| e & LANE_BITS).collect();
            lanes.sort_unstable();
            assert_eq!(lanes, (0..len as u64).collect::<Vec<_>>(), "every lane once");
            // The entries of equal top bits side by side, and those of one
            // hash in input order: origins then come in runs (split only
            // where two share the top bits).
            let top = |e: u64| e >> (64 - 2 * RADIX_BITS);
            let mut seen = std::collections::HashSet::new();
            let mut last_lane = std::collections::HashMap::new();
            for (i, &e) in entries.iter().enumerate() {
                if i == 0 || top(entries[i - 1]) != top(e) {
                    assert!(seen.insert(top(e)), "len {len}: top bits {:x} come back after others", top(e));
                }
                let lane = e & LANE_BITS;
                if let Some(before) = last_lane.insert(e & !LANE_BITS, lane) {
                    assert!(before < lane, "len {len}: input order lost");
                }
            }
        }
    }
}
