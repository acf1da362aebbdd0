//! Compiling a merged group into precedence-labelled automata.
//!
//! # Ranks
//!
//! Every rule gets a *rank* (see [`robotsieve_engine::Matcher`]): in verdict
//! mode one rank per distinct label, in label order; in explain mode one rank
//! per rule, ordered by label and then by rule index *descending*, so that the
//! largest rank among the matching rules is the largest label and, among equal
//! labels, the first rule in the file: exactly [`Group::decide`]'s choice.
//!
//! # The automaton
//!
//! A direct subset construction over the rules' positions, carrying the best
//! rank found so far (ARCHITECTURE.md, "The automaton"). A state is `(best, threads)`
//! where a thread is a position inside one pattern's body (the pattern without
//! its final `$`). On a byte, literal positions advance and `*` positions stay
//! (and also stand at the position after them). When the body of a pattern
//! without `$` is complete, the pattern matches a prefix of the path whatever
//! follows, so its rank is folded into `best` and every thread whose rank
//! cannot beat `best` is dropped; a completed `$` pattern only adds its rank to
//! the answer of the state (the rank if the path ends there). Dropping beaten
//! threads is what keeps floating rules (`/*x`) linear instead of exponential.
//!
//! We chose the direct construction over walking a regex-automata dense DFA:
//! it needs no regex translation of patterns (escaping `*`, `$`, bytes), no
//! second automaton in memory, it can prune threads as soon as they are
//! beaten, and it counts its own work exactly (so the budget is exact). The
//! regex-automata reading in `testkit` stays as an oracle of the verdicts.
//!
//! Bytes that no pattern mentions behave alike, so the alphabet is one class
//! per mentioned byte plus one for the rest. The automaton is then minimised
//! on the answer (Hopcroft's algorithm, `O(n k log n)`), the states whose
//! transitions all loop back (their answer can no longer change) become sinks
//! numbered first, and the rest follow in breadth-first order from the start.
//!
//! # Budget
//!
//! Every build counts states and work (threads visited plus table entries,
//! which also bounds memory) and gives up past its [`Budget`]. A group over
//! budget is split: rules without `*` in one automaton, rules with one `*` in
//! another, rules with several `*` and any part still over budget in a
//! per-rule list ([`RuleList`]). So a build costs at most three budgets,
//! whatever the input.

use robotsieve_core::pattern;
use robotsieve_engine::Dfa;
use robotsieve_engine::RuleList;
use robotsieve_engine::{Matcher, Part};
use robotsieve_robotstxt::group::Group;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast non-cryptographic hash (the multiply-rotate of rustc's FxHash):
/// thread sets are hashed once per transition, and SipHash dominated builds.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The multiply leaves the low bits depending on the low bits of the
        // input only, and the table's home slot is the low bits: thread ids
        // are small numbers, so without this rotation lookups probed far.
        self.0.rotate_left(26)
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Limits of one automaton build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Most states the subset construction may create (before minimisation).
    pub max_states: usize,
    /// Most work units: threads visited plus transition-table entries.
    pub max_work: u64,
}

impl Default for Budget {
    /// 100,000 states and 5 million work units: a build gives up within about
    /// 0.2 s and 100 MiB. Measured on the 31,899-file real-world corpus
    /// (googlebot): 613 groups (2%) go over and are split; the large prefix-rule
    /// files (docs.oracle.com, 19,126 rules) fit. A larger budget turns few
    /// more groups into automata (floating-suffix lists like `/jobs/*<city>`)
    /// at a far longer compile.
    fn default() -> Self {
        Budget { max_states: 100_000, max_work: 5_000_000 }
    }
}

/// How to compile a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// One rank per rule (explanations name the deciding rule) instead of one
    /// per label (smaller automata).
    pub explain: bool,
    /// Limits of each automaton build.
    pub budget: Budget,
}

/// Subset-construction bytes past which a build is *large*: it must hold
/// the one [`LargeBuilds`] token to go on. At 8 MiB, 38 of the 31,898 real
/// files (0.1%) pass it, and the largest build's heap peaks at 42 MiB (all
/// builds measured alone with `compile_scale group-peaks`).
pub const LARGE_BUILD_BYTES: usize = 8 << 20;

/// At most one large build at a time, whatever builds run together: a build
/// whose state table and state keys reach the threshold waits there until
/// no other large build is running, and then holds the token until its
/// group is compiled. So the builds of a batch on every core hold at most
/// the largest single build plus the threshold per other core, where two of
/// the largest meeting on two cores set the peak RSS before (their timing,
/// not their result: output is the same whatever waits).
#[derive(Debug)]
pub struct LargeBuilds {
    threshold: usize,
    taken: std::sync::Mutex<bool>,
    freed: std::sync::Condvar,
    /// How many times the token was taken so far.
    large: std::sync::atomic::AtomicUsize,
}

impl LargeBuilds {
    /// A token for builds past `threshold` bytes ([`LARGE_BUILD_BYTES`] by default).
    pub fn new(threshold: usize) -> LargeBuilds {
        LargeBuilds {
            threshold,
            taken: std::sync::Mutex::new(false),
            freed: std::sync::Condvar::new(),
            large: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// How many builds have been large so far (took the token).
    pub fn large_builds(&self) -> usize {
        self.large.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits until no other build holds the token, and takes it.
    fn take(&self) -> LargeBuild<'_> {
        let mut taken = self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *taken {
            taken = self.freed.wait(taken).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *taken = true;
        self.large.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LargeBuild(self)
    }
}

impl Default for LargeBuilds {
    fn default() -> Self {
        LargeBuilds::new(LARGE_BUILD_BYTES)
    }
}

/// The token of [`LargeBuilds`], given back when dropped.
#[derive(Debug)]
pub struct LargeBuild<'a>(&'a LargeBuilds);

impl Drop for LargeBuild<'_> {
    fn drop(&mut self) {
        *self.0.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = false;
        self.0.freed.notify_one();
    }
}

/// What one compilation holds of a [`LargeBuilds`]: nothing until one of
/// its builds grows past the threshold, then the token, to the end of the
/// compilation (and of whatever the caller does with it before dropping).
#[derive(Debug, Default)]
pub struct BuildGate<'a> {
    large: Option<&'a LargeBuilds>,
    held: Option<LargeBuild<'a>>,
}

impl<'a> BuildGate<'a> {
    /// A gate that never waits (one build at a time anyway).
    pub fn open() -> BuildGate<'static> {
        BuildGate { large: None, held: None }
    }

    /// A gate on `large`, holding nothing yet.
    pub fn on(large: &'a LargeBuilds) -> BuildGate<'a> {
        BuildGate { large: Some(large), held: None }
    }

    /// Whether this compilation holds the token (it went past the threshold).
    pub fn holds_token(&self) -> bool {
        self.held.is_some()
    }

    /// Told that a build holds `bytes`: past the threshold, takes the
    /// token (waiting for it) unless already held.
    fn account(&mut self, bytes: usize) {
        if let (Some(large), None) = (self.large, &self.held) {
            if bytes >= large.threshold {
                self.held = Some(large.take());
            }
        }
    }
}

/// Which rules a part holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartKind {
    /// Every rule of the group, in one automaton.
    All,
    /// Rules without `*`.
    Literal,
    /// Rules with exactly one `*`.
    OneStar,
    /// Rules matched one by one (several `*`, or over budget).
    Fallback,
}

impl PartKind {
    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            PartKind::All => "all rules",
            PartKind::Literal => "literal rules",
            PartKind::OneStar => "one-star rules",
            PartKind::Fallback => "per-rule fallback",
        }
    }
}

/// What one part of a compiled group holds and costs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartStats {
    /// Which rules.
    pub kind: PartKind,
    /// How many distinct patterns it holds.
    pub patterns: usize,
    /// States after minimisation (0 for the fallback).
    pub states: usize,
    /// States before minimisation (0 for the fallback).
    pub subset_states: usize,
    /// Sink states.
    pub sinks: usize,
    /// Byte classes.
    pub classes: usize,
    /// Bytes of the stored tables (u32 transitions; the artifact may halve them).
    pub table_bytes: usize,
}

/// What a compilation made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildStats {
    /// Rules in the group.
    pub rules: usize,
    /// Ranks, including 0.
    pub ranks: usize,
    /// The parts, in the order of [`Matcher::parts`].
    pub parts: Vec<PartStats>,
    /// Whether the budget forced a split of the group.
    pub split: bool,
    /// Patterns left to the per-rule fallback.
    pub fallback_patterns: usize,
}

impl BuildStats {
    /// Automaton states over all parts.
    pub fn states(&self) -> usize {
        self.parts.iter().map(|p| p.states).sum()
    }

    /// Table bytes over all parts.
    pub fn table_bytes(&self) -> usize {
        self.parts.iter().map(|p| p.table_bytes).sum()
    }
}

impl fmt::Display for BuildStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rules, {} ranks, {} states, {} table bytes",
            self.rules,
            self.ranks,
            self.states(),
            self.table_bytes()
        )?;
        if self.split {
            write!(f, "; over budget, split ({} patterns in the per-rule fallback)", self.fallback_patterns)?;
        }
        for p in &self.parts {
            write!(f, "\n  {}: {} patterns", p.kind.name(), p.patterns)?;
            if p.kind != PartKind::Fallback {
                write!(
                    f,
                    ", {} states ({} before minimising, {} sinks), {} byte classes",
                    p.states, p.subset_states, p.sinks, p.classes
                )?;
            }
            write!(f, ", {} bytes", p.table_bytes)?;
        }
        Ok(())
    }
}

/// A compiled group and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// What the engine runs and the artifact stores.
    pub matcher: Matcher,
    /// Sizes and decisions, for `inspect`.
    pub stats: BuildStats,
}

/// Compiles a merged group into a matcher whose ranks are numbered as
/// `options.explain` asks. Never fails: what no automaton can hold within the
/// budget is matched rule by rule.
pub fn compile(group: &Group, options: &BuildOptions) -> Compiled {
    compile_gated(group, options, &mut BuildGate::open())
}

/// [`compile`], taking `gate`'s token when a build grows past its
/// threshold (see [`LargeBuilds`]); the result is the same whatever the gate.
pub fn compile_gated(group: &Group, options: &BuildOptions, gate: &mut BuildGate<'_>) -> Compiled {
    let (labels, rules, rank_of) = rank_tables(group, options.explain);
    // Identical patterns match identically: keep the best rank of each.
    let mut best_of: HashMap<&[u8], u32> = HashMap::new();
    for (rule, &rank) in group.rules.iter().zip(&rank_of) {
        let entry = best_of.entry(rule.pattern.as_slice()).or_insert(rank);
        *entry = (*entry).max(rank);
    }
    let mut items: Vec<Item<'_>> = best_of.into_iter().map(|(pattern, rank)| Item { pattern, rank }).collect();
    items.sort_by(|a, b| (a.pattern, a.rank).cmp(&(b.pattern, b.rank)));

    let mut stats = BuildStats {
        rules: group.rules.len(),
        ranks: labels.len(),
        parts: Vec::new(),
        split: false,
        fallback_patterns: 0,
    };
    let mut parts: Vec<(Part, u32)> = Vec::new();
    let stars = |item: &Item<'_>| pattern::split_anchor(item.pattern).0.iter().filter(|&&b| b == b'*').count();
    // Rules with several stars usually blow any automaton up: try them with
    // the others on a quarter of the budget only, so a doomed attempt is cheap.
    let first_budget = if items.iter().any(|i| stars(i) > 1) {
        Budget { max_states: options.budget.max_states / 4, max_work: options.budget.max_work / 4 }
    } else {
        options.budget
    };
    match build(&items, &first_budget, gate) {
        Ok(built) => push_dfa(&mut parts, &mut stats, PartKind::All, items.len(), built),
        Err(OverBudget) => {
            stats.split = true;
            let mut fallback: Vec<Item<'_>> = items.iter().filter(|i| stars(i) > 1).copied().collect();
            for (kind, count) in [(PartKind::Literal, 0), (PartKind::OneStar, 1)] {
                let subset: Vec<Item<'_>> = items.iter().filter(|i| stars(i) == count).copied().collect();
                if subset.is_empty() {
                    continue;
                }
                // The same rules on the same budget would fail the same way.
                let retried = subset.len() == items.len() && first_budget == options.budget;
                let built = if retried { Err(OverBudget) } else { build(&subset, &options.budget, gate) };
                match built {
                    Ok(built) => push_dfa(&mut parts, &mut stats, kind, subset.len(), built),
                    Err(OverBudget) => fallback.extend(subset),
                }
            }
            if !fallback.is_empty() {
                let list = RuleList::from_rules(fallback.iter().map(|i| (i.pattern, i.rank)));
                let max = list.max_answer();
                stats.fallback_patterns = fallback.len();
                stats.parts.push(PartStats {
                    kind: PartKind::Fallback,
                    patterns: fallback.len(),
                    states: 0,
                    subset_states: 0,
                    sinks: 0,
                    classes: 0,
                    table_bytes: list.patterns().len() + 4 * (list.ends().len() + list.ranks().len()),
                });
                parts.push((Part::Rules(list), max));
            }
        }
    }
    // Highest possible answer first (stable, so stats stay aligned).
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(parts[i].1));
    let part_stats = std::mem::take(&mut stats.parts);
    stats.parts = order.iter().map(|&i| part_stats[i].clone()).collect();
    let mut slots: Vec<Option<Part>> = parts.into_iter().map(|(p, _)| Some(p)).collect();
    let parts = order.iter().map(|&i| slots[i].take().expect("each part once")).collect();
    let matcher = Matcher::new(labels, rules, parts).expect("ranks from the rank tables, at most three parts");
    Compiled { matcher, stats }
}

fn push_dfa(parts: &mut Vec<(Part, u32)>, stats: &mut BuildStats, kind: PartKind, patterns: usize, built: Built) {
    stats.parts.push(PartStats {
        kind,
        patterns,
        states: built.dfa.states(),
        subset_states: built.subset_states,
        sinks: built.dfa.sinks(),
        classes: built.classes,
        table_bytes: 256 + 4 * (built.dfa.transitions().len() + built.dfa.states()),
    });
    let max = built.dfa.max_answer();
    parts.push((Part::Dfa(built.dfa), max));
}

/// `(labels by rank, rule index by rank, rank of each rule)`.
fn rank_tables(group: &Group, explain: bool) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let label_of = |i: usize| group.rules[i].label().0;
    let n = group.rules.len();
    let mut rank_of = vec![0u32; n];
    if explain {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (label_of(i), std::cmp::Reverse(i)));
        let mut labels = vec![0];
        let mut rules = vec![u32::MAX];
        for (k, &i) in order.iter().enumerate() {
            rank_of[i] = k as u32 + 1;
            labels.push(label_of(i));
            rules.push(i as u32);
        }
        (labels, rules, rank_of)
    } else {
        let mut distinct: Vec<u32> = (0..n).map(label_of).collect();
        distinct.sort_unstable();
        distinct.dedup();
        for (i, rank) in rank_of.iter_mut().enumerate() {
            *rank = distinct.binary_search(&label_of(i)).expect("label present") as u32 + 1;
        }
        let mut labels = vec![0];
        labels.extend(distinct);
        let rules = vec![u32::MAX; labels.len()];
        (labels, rules, rank_of)
    }
}

/// A distinct pattern and the best rank it gives.
#[derive(Clone, Copy, Debug)]
struct Item<'g> {
    pattern: &'g [u8],
    rank: u32,
}

/// The build went over its budget.
#[derive(Debug)]
struct OverBudget;

struct Built {
    dfa: Dfa,
    subset_states: usize,
    classes: usize,
}

/// What stands at a thread position.
const STAR: u16 = 256;
const END: u16 = 257;

/// The patterns' positions, numbered globally: thread ids.
struct Positions {
    /// A literal byte, [`STAR`] or [`END`].
    what: Vec<u16>,
    /// The rank of the item a position belongs to (one load per thread in
    /// [`normalise`], which runs for every transition).
    rank: Vec<u32>,
    /// Per position: whether it is the end of a pattern without `$` (which
    /// matches whatever follows).
    open_end: Vec<bool>,
    /// Each item's first position.
    first: Vec<u32>,
}

impl Positions {
    fn new(items: &[Item<'_>]) -> Positions {
        let mut p = Positions { what: Vec::new(), rank: Vec::new(), open_end: Vec::new(), first: Vec::new() };
        for item in items {
            let (body, anchored) = pattern::split_anchor(item.pattern);
            p.first.push(p.what.len() as u32);
            for &b in body {
                p.what.push(if b == b'*' { STAR } else { u16::from(b) });
                p.rank.push(item.rank);
                p.open_end.push(false);
            }
            p.what.push(END);
            p.rank.push(item.rank);
            p.open_end.push(!anchored);
        }
        p
    }

    /// Adds `at` and the positions after the stars it stands on.
    fn push_closed(&self, mut at: u32, out: &mut Vec<u32>) {
        loop {
            out.push(at);
            if self.what[at as usize] != STAR {
                return;
            }
            at += 1;
        }
    }
}

/// The states of a subset construction: each thread set once, in an arena,
/// numbered in order of discovery (which is also the breadth-first order in
/// which their rows are made).
#[derive(Default)]
struct States {
    /// Id of each `[best, threads...]` key.
    ids: FxMap<Box<[u32]>, u32>,
    /// The keys, one after another, and where each ends.
    arena: Vec<u32>,
    ends: Vec<usize>,
    /// The key being looked up (reused, so that a hit allocates nothing).
    key: Vec<u32>,
}

impl States {
    /// About the bytes the states hold: the arena, the ends, the map's
    /// table and each key's own boxed copy (with its allocation's overhead).
    fn bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Box<[u32]>, u32)>() + 1;
        4 * (self.arena.capacity() + self.arena.len())
            + 8 * self.ends.capacity()
            + entry * self.ids.capacity()
            + 16 * self.ends.len()
    }

    /// The `[best, threads...]` key of state `id`.
    fn key(&self, id: usize) -> &[u32] {
        &self.arena[if id == 0 { 0 } else { self.ends[id - 1] }..self.ends[id]]
    }
}

/// Builds the subset automaton of `items`, minimises it and lays it out.
fn build(items: &[Item<'_>], budget: &Budget, gate: &mut BuildGate<'_>) -> Result<Built, OverBudget> {
    let positions = Positions::new(items);
    // Byte classes: one per mentioned byte, class 0 for all the others.
    let mut mentioned = [false; 256];
    for &w in &positions.what {
        if w < 256 {
            mentioned[usize::from(w)] = true;
        }
    }
    let mut classes = [0u8; 256];
    let mut nclasses = usize::from(mentioned.iter().any(|m| !m));
    for (class, _) in classes.iter_mut().zip(mentioned).filter(|(_, m)| *m) {
        // At most 256 classes: class 0 is unused when every byte is mentioned.
        *class = (nclasses % 256) as u8;
        nclasses += 1;
    }
    let nclasses = nclasses.min(256);

    let mut work: u64 = 0;
    let mut table: Vec<u32> = Vec::new();
    let mut answers: Vec<u32> = Vec::new();
    let mut states = States::default();
    // `threads` is sorted and free of duplicates.
    let intern = |best: u32,
                  threads: &mut Vec<u32>,
                  answers: &mut Vec<u32>,
                  states: &mut States,
                  work: &mut u64|
     -> Result<u32, OverBudget> {
        let (best, answer) = normalise(&positions, best, threads);
        *work += threads.len() as u64 + 1;
        states.key.clear();
        states.key.push(best);
        states.key.extend_from_slice(threads);
        if let Some(&id) = states.ids.get(states.key.as_slice()) {
            return Ok(id);
        }
        let id = answers.len() as u32;
        if answers.len() >= budget.max_states || *work > budget.max_work {
            return Err(OverBudget);
        }
        answers.push(answer);
        states.arena.extend_from_slice(&states.key);
        states.ends.push(states.arena.len());
        states.ids.insert(states.key.as_slice().into(), id);
        Ok(id)
    };

    let mut threads = Vec::new();
    for &first in &positions.first {
        positions.push_closed(first, &mut threads);
    }
    threads.sort_unstable();
    threads.dedup();
    intern(0, &mut threads, &mut answers, &mut states, &mut work)?;
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); nclasses];
    let mut stars = Vec::new();
    let mut row = vec![0u32; nclasses];
    let mut current: Vec<u32> = Vec::new();
    let mut next = 0usize;
    while next < answers.len() {
        current.clear();
        current.extend_from_slice(states.key(next));
        next += 1;
        let (best, state) = (current[0], &current[1..]);
        work += nclasses as u64 + state.len() as u64;
        if work > budget.max_work {
            return Err(OverBudget);
        }
        stars.clear();
        for bucket in &mut buckets {
            bucket.clear();
        }
        // Each bucket comes out ascending and without duplicates (a state is
        // sorted, and a closure after a literal cannot reach the next literal
        // thread); the stars' closures can overlap, so they are sorted once
        // here, not once per class.
        for &at in state.iter() {
            match positions.what[at as usize] {
                STAR => positions.push_closed(at, &mut stars),
                END => {}
                b => positions.push_closed(at + 1, &mut buckets[usize::from(classes[usize::from(b)])]),
            }
        }
        stars.sort_unstable();
        stars.dedup();
        // Classes no thread reads all lead where the unmentioned bytes lead.
        let mut unread = None;
        for (target, bucket) in row.iter_mut().zip(&buckets) {
            if bucket.is_empty() {
                if let Some(id) = unread {
                    *target = id;
                    continue;
                }
            }
            merge_sorted(&stars, bucket, &mut threads);
            let id = intern(best, &mut threads, &mut answers, &mut states, &mut work)?;
            if bucket.is_empty() {
                unread = Some(id);
            }
            *target = id;
        }
        table.extend_from_slice(&row);
        gate.account(4 * (table.capacity() + answers.capacity()) + states.bytes());
    }
    let subset_states = answers.len();
    // The keys are done with: minimising needs the table and answers only.
    drop(states);
    let dfa = minimise_and_lay_out(&table, &answers, nclasses, classes);
    Ok(Built { dfa, subset_states, classes: nclasses })
}

/// The union of two ascending lists without duplicates, ascending and
/// without duplicates, into `out`.
fn merge_sorted(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// Folds completed patterns without `$` of a sorted, duplicate-free thread
/// set into `best`, drops threads that cannot beat it; returns `(best,
/// answer)`.
fn normalise(positions: &Positions, mut best: u32, threads: &mut Vec<u32>) -> (u32, u32) {
    debug_assert!(threads.windows(2).all(|w| w[0] < w[1]), "threads sorted and distinct");
    // A completed pattern without `$` matches whatever follows.
    for &at in threads.iter() {
        if positions.open_end[at as usize] {
            best = best.max(positions.rank[at as usize]);
        }
    }
    // Keep the threads that can beat `best` (an open end never can now);
    // the answer is the best of `best` and the completed `$` patterns kept.
    let mut answer = best;
    threads.retain(|&at| {
        let (rank, keep) = (positions.rank[at as usize], positions.rank[at as usize] > best);
        if keep && positions.what[at as usize] == END {
            answer = answer.max(rank);
        }
        keep && !positions.open_end[at as usize]
    });
    (best, answer)
}

/// Hopcroft's minimisation on the answers, then sinks first, the rest in
/// breadth-first order, premultiplied.
fn minimise_and_lay_out(table: &[u32], answers: &[u32], k: usize, classes: [u8; 256]) -> Dfa {
    let block_of = hopcroft(table, answers, k);
    let blocks = block_of.iter().copied().max().map_or(0, |m| m as usize + 1);
    // One representative per block.
    let mut rep = vec![u32::MAX; blocks];
    for (s, &b) in block_of.iter().enumerate() {
        if rep[b as usize] == u32::MAX {
            rep[b as usize] = s as u32;
        }
    }
    let row = |b: usize| {
        let s = rep[b] as usize;
        table[s * k..(s + 1) * k].iter().map(|&t| block_of[t as usize])
    };
    let is_sink: Vec<bool> = (0..blocks).map(|b| row(b).all(|t| t as usize == b)).collect();
    // Sinks first, then breadth-first from the start.
    let mut new_id = vec![u32::MAX; blocks];
    let mut order = Vec::with_capacity(blocks);
    for b in 0..blocks {
        if is_sink[b] {
            new_id[b] = order.len() as u32;
            order.push(b);
        }
    }
    let sinks = order.len() as u32;
    let start = block_of[0] as usize;
    let mut next = order.len();
    if new_id[start] == u32::MAX {
        new_id[start] = order.len() as u32;
        order.push(start);
    }
    while next < order.len() {
        let b = order[next];
        next += 1;
        for t in row(b) {
            if new_id[t as usize] == u32::MAX {
                new_id[t as usize] = order.len() as u32;
                order.push(t as usize);
            }
        }
    }
    let stride2 = k.next_power_of_two().trailing_zeros();
    let stride = 1usize << stride2;
    let mut transitions = vec![0u32; order.len() * stride];
    let mut new_answers = Vec::with_capacity(order.len());
    for (id, &b) in order.iter().enumerate() {
        new_answers.push(answers[rep[b] as usize]);
        for (c, t) in row(b).enumerate() {
            transitions[id * stride + c] = new_id[t as usize] << stride2;
        }
        // Padding columns (never read: classes are below k) loop to the state itself.
        for c in k..stride {
            transitions[id * stride + c] = (id as u32) << stride2;
        }
    }
    // Valid by construction (every target a state, classes below `k`);
    // checked all the same, one vectorised pass, so that a layout bug stops
    // here rather than in an artifact that every reader refuses.
    Dfa::new(classes, stride2, transitions, new_answers, new_id[start] << stride2, sinks)
        .expect("minimisation lays out a valid automaton")
}

/// The coarsest partition of the states that respects answers and
/// transitions; returns each state's block.
fn hopcroft(table: &[u32], answers: &[u32], k: usize) -> Vec<u32> {
    let n = answers.len();
    // Predecessors by (target, class): preds[offsets[t * k + c] .. offsets[t * k + c + 1]].
    let mut offsets = vec![0u32; n * k + 1];
    // Counted at each bucket's own index, summed so that `offsets[j]` is
    // where bucket j ends, then filled from the back, each bucket from its
    // end down to its start (which `offsets[j]` is left at): the order of a
    // forward fill, without a second table of positions (a quarter of a
    // large build's peak). `offsets[n * k]` is the total throughout.
    for (i, &t) in table.iter().enumerate() {
        offsets[t as usize * k + i % k] += 1;
    }
    for i in 0..n * k {
        offsets[i + 1] += offsets[i];
    }
    let mut preds = vec![0u32; n * k];
    for (i, &t) in table.iter().enumerate().rev() {
        let slot = &mut offsets[t as usize * k + i % k];
        *slot -= 1;
        preds[*slot as usize] = (i / k) as u32;
    }

    // The refinable partition: `elems` grouped by block, each block a range
    // `first..end` whose `first..mid` part is marked.
    let mut elems: Vec<u32> = (0..n as u32).collect();
    elems.sort_by_key(|&s| answers[s as usize]);
    let mut loc = vec![0u32; n];
    let mut block_of = vec![0u32; n];
    let (mut first, mut end, mut mid) = (Vec::new(), Vec::new(), Vec::new());
    for (i, &s) in elems.iter().enumerate() {
        if i == 0 || answers[s as usize] != answers[elems[i - 1] as usize] {
            first.push(i as u32);
            mid.push(i as u32);
            end.push(i as u32);
        }
        let b = first.len() - 1;
        end[b] = i as u32 + 1;
        loc[s as usize] = i as u32;
        block_of[s as usize] = b as u32;
    }
    let mut in_work = vec![true; first.len()];
    let mut work: Vec<u32> = (0..first.len() as u32).collect();
    // All blocks but the largest suffice as first splitters.
    if let Some(largest) = (0..first.len()).max_by_key(|&b| end[b] - first[b]) {
        work.retain(|&b| b as usize != largest);
        in_work[largest] = false;
    }
    let mut splitter = Vec::new();
    let mut touched = Vec::new();
    while let Some(s) = work.pop() {
        in_work[s as usize] = false;
        splitter.clear();
        splitter.extend_from_slice(&elems[first[s as usize] as usize..end[s as usize] as usize]);
        for c in 0..k {
            touched.clear();
            for &t in &splitter {
                let at = t as usize * k + c;
                for &q in &preds[offsets[at] as usize..offsets[at + 1] as usize] {
                    let b = block_of[q as usize] as usize;
                    let pos = loc[q as usize];
                    if pos < mid[b] {
                        continue; // already marked
                    }
                    if mid[b] == first[b] {
                        touched.push(b as u32);
                    }
                    // Swap q to the end of the marked part.
                    let m = mid[b];
                    let other = elems[m as usize];
                    elems.swap(pos as usize, m as usize);
                    loc[other as usize] = pos;
                    loc[q as usize] = m;
                    mid[b] += 1;
                }
            }
            for &b in &touched {
                let b = b as usize;
                if mid[b] == end[b] {
                    mid[b] = first[b];
                    continue;
                }
                // The marked part becomes a new block.
                let nb = first.len();
                first.push(first[b]);
                end.push(mid[b]);
                mid.push(first[b]);
                for &q in &elems[first[b] as usize..mid[b] as usize] {
                    block_of[q as usize] = nb as u32;
                }
                // The rest keeps `b`, unmarked: its first is the old `mid`.
                first[b] = mid[b];
                let smaller = if end[nb] - first[nb] <= end[b] - first[b] { nb } else { b };
                if in_work[b] {
                    in_work.push(true);
                    work.push(nb as u32);
                } else {
                    in_work.push(false);
                    in_work[smaller] = true;
                    work.push(smaller as u32);
                }
            }
        }
    }
    block_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn a_second_large_build_waits_for_the_first_and_small_ones_do_not() {
        let large = LargeBuilds::new(100);
        let mut first = BuildGate::on(&large);
        first.account(99);
        assert!(!first.holds_token(), "below the threshold nothing is taken");
        first.account(100);
        assert!(first.holds_token());
        // Another build below the threshold goes on beside it.
        let mut small = BuildGate::on(&large);
        small.account(50);
        assert!(!small.holds_token());
        let first_done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let second = scope.spawn(|| {
                let mut gate = BuildGate::on(&large);
                gate.account(1000);
                (gate.holds_token(), first_done.load(Ordering::SeqCst))
            });
            std::thread::sleep(Duration::from_millis(100));
            assert!(!second.is_finished(), "a second large build waits");
            first_done.store(true, Ordering::SeqCst);
            drop(first);
            assert_eq!(second.join().unwrap(), (true, true), "it went on only once the first was done");
        });
        assert_eq!(large.large_builds(), 2);
        // An open gate never takes anything.
        let mut open = BuildGate::open();
        open.account(usize::MAX);
        assert!(!open.holds_token());
    }

    #[test]
    fn a_gated_compile_takes_the_token_past_the_threshold_and_builds_the_same() {
        let mut body = String::from("user-agent: *\n");
        for i in 0..400 {
            body += &format!("disallow: /section-{i}/*/item{}\n", i * 7);
        }
        let robots = robotsieve_robotstxt::parse::RobotsTxt::parse(body.as_bytes());
        let agent = robotsieve_robotstxt::group::Agent::parse("x").unwrap();
        let group = Group::select(&robots, &agent);
        let options = BuildOptions::default();
        let plain = compile(&group, &options);
        let low = LargeBuilds::new(1 << 10);
        let mut gate = BuildGate::on(&low);
        assert_eq!(compile_gated(&group, &options, &mut gate), plain);
        assert!(gate.holds_token(), "{}", plain.stats);
        let high = LargeBuilds::new(1 << 30);
        let mut gate = BuildGate::on(&high);
        assert_eq!(compile_gated(&group, &options, &mut gate), plain);
        assert!(!gate.holds_token());
    }

    #[test]
    fn minimising_merges_the_states_that_lead_alike_and_only_those() {
        // A table of 6 states over 2 classes: 0 -> {1,2}, 1 and 2 alike, 3..5 sinks of two answers.
        let table = [1, 2, 3, 4, 3, 4, 3, 3, 4, 4, 5, 5];
        let answers = [0, 0, 0, 1, 2, 1];
        let blocks = hopcroft(&table, &answers, 2);
        assert_eq!(blocks[1], blocks[2], "1 and 2 lead alike");
        assert_eq!(blocks[3], blocks[5], "3 and 5 have one answer and loop");
        assert_ne!(blocks[3], blocks[4]);
        assert_ne!(blocks[0], blocks[1]);
    }
}
