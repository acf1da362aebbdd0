//! A compiled group ready to decide many paths: its parts read once.
//!
//! [`crate::artifact::Artifact::decide_many`] makes a view of each query's
//! group and each of its parts, then walks the queries side by side: right
//! for a batch of unrelated queries, and wasted work when many paths go
//! through the same group one after the other. The filter groups the URLs of
//! a chunk by origin (see [`crate::AgentClassifier`]), so each group is used for a
//! run of paths; a [`CompiledGroup`] reads the group's head, its part records
//! and its rank tables once for the run, and [`CompiledGroup::rank`] is then
//! a scan per part, with the tables hot in the cache after the first path.

use crate::format::{GroupHead, PartView};
use crate::rules::LazyPrefilter;
use crate::walk::{self, Automaton, SkipMemo};
use robotsieve_core::Label;
use std::sync::Arc;

/// The most parts a stored group has ([`GroupHead::MAX_PARTS`]).
const MAX_PARTS: usize = GroupHead::MAX_PARTS as usize;

/// One part of a stored group as the walks run it: the decoder's
/// [`PartView`] (the one part enum, [`crate::compiled::Part`], over the
/// tables it reads in place) plus the runtime state a part needs, a rule
/// list's prefilter. Made by the artifact both for [`CompiledGroup`] and
/// for the side-by-side walks of [`crate::artifact::Artifact::decide_many`],
/// and by [`crate::MatcherRef`].
#[derive(Clone, Debug)]
pub(crate) struct RunnerPart<'a> {
    /// The stored part (never replaced: `slash` is its automaton's).
    pub(crate) view: PartView<'a>,
    /// A rule list's prefilter, shared by every use of the part
    /// ([`LazyPrefilter`]); `None` for an automaton.
    pub(crate) prefilter: Option<Arc<LazyPrefilter>>,
    /// An automaton's last accelerated state and its escapes, kept from
    /// path to path ([`walk::scan_remembering`]): a run's paths mostly skip
    /// in the same state, whose escapes are then looked up once a run
    /// instead of once a path (a binary search, about 40 instructions a
    /// URL on crawl2019). A [`SkipMemo`] (an atomic word) rather than a
    /// `Cell`, so that groups and matchers stay `Sync`.
    last_skip: SkipMemo,
    /// An automaton's state after a path's leading `/`
    /// ([`walk::after_slash`]), taken once here rather than once a path;
    /// 0 for a rule list.
    slash: u32,
}

impl<'a> RunnerPart<'a> {
    /// The part `view`; `prefilter` gives a rule list's prefilter (its
    /// patterns in hand) and is not called for an automaton.
    #[inline]
    pub(crate) fn new(view: PartView<'a>, prefilter: impl FnOnce(&[u8]) -> Arc<LazyPrefilter>) -> RunnerPart<'a> {
        let prefilter = match view {
            PartView::Rules(list) => Some(prefilter(list.patterns())),
            _ => None,
        };
        RunnerPart::with_prefilter(view, prefilter)
    }

    /// The part `view`, a rule list with its prefilter built now (for a
    /// group whose tables are not an artifact's, which caches prefilters).
    pub(crate) fn prefiltered(view: PartView<'a>) -> RunnerPart<'a> {
        let prefilter = match view {
            PartView::Rules(list) => Some(Arc::new(LazyPrefilter::built(list.prefilter()))),
            _ => None,
        };
        RunnerPart::with_prefilter(view, prefilter)
    }

    /// The part `view` with its prefilter (`None` for an automaton).
    pub(crate) fn with_prefilter(view: PartView<'a>, prefilter: Option<Arc<LazyPrefilter>>) -> RunnerPart<'a> {
        let slash = match &view {
            PartView::Dfa(dfa) => walk::after_slash(dfa),
            PartView::Dfa16(dfa) => walk::after_slash(dfa),
            PartView::Comb(comb) => walk::after_slash(comb),
            PartView::Comb16(comb) => walk::after_slash(comb),
            PartView::Rules(_) => 0,
        };
        RunnerPart { view, prefilter, last_skip: SkipMemo::new(), slash }
    }

    fn is_rules(&self) -> bool {
        matches!(self.view, PartView::Rules(_))
    }

    /// This part's rank for `path`; a rule list may answer 0 when no rule of
    /// it beats `floor`.
    #[inline]
    pub(crate) fn rank(&self, path: &[u8], floor: u32) -> u32 {
        // SAFETY (the four): `slash` was taken of this very view when the
        // part was made (`with_prefilter`), and neither changes since.
        match &self.view {
            PartView::Dfa(dfa) => unsafe { scan_automaton(dfa, path, self.slash, &self.last_skip) },
            PartView::Dfa16(dfa) => unsafe { scan_automaton(dfa, path, self.slash, &self.last_skip) },
            PartView::Comb(comb) => unsafe { scan_automaton(comb, path, self.slash, &self.last_skip) },
            PartView::Comb16(comb) => unsafe { scan_automaton(comb, path, self.slash, &self.last_skip) },
            PartView::Rules(list) => match &self.prefilter {
                Some(prefilter) => prefilter.best(list, path, floor),
                None => 0,
            },
        }
    }
}

/// [`walk::scan_after_slash`] of a part's automaton, kept out of line:
/// inlined into [`CompiledGroup::rank`], whose loop over the parts holds
/// registers of its own, a comb's step loop kept its tables' pointers on the
/// stack and moved them between registers (about 4 instructions a step
/// more, 6 to 7 steps a URL on crawl2019, against a call's 15 or so); and
/// [`RunnerPart::rank`] stays a dispatch that jumps here.
///
/// # Safety
///
/// `slash` is [`walk::after_slash`] of `automaton`.
#[inline(never)]
unsafe fn scan_automaton<A: Automaton>(automaton: &A, path: &[u8], slash: u32, last: &SkipMemo) -> u32 {
    // SAFETY: the caller's word.
    unsafe { walk::scan_after_slash(automaton, path, slash, last) }
}

/// A group of an artifact with its parts read, for deciding a run of paths
/// ([`crate::artifact::Artifact::compiled_group`]). It answers exactly as
/// [`crate::artifact::Artifact::decide`] does for every path: the best rank
/// over the parts, the automata first and then the rule lists (whose
/// prefilter skips the rules that cannot beat the rank found so far).
#[derive(Clone, Debug)]
pub struct CompiledGroup<'a> {
    labels: &'a [u32],
    /// The parts in the order a path walks them: the automata, then the
    /// rule lists, each in the order they were added; `None` past `len`.
    parts: [Option<RunnerPart<'a>>; MAX_PARTS],
    len: usize,
}

impl<'a> CompiledGroup<'a> {
    /// A group of no parts yet whose ranks stand for `labels` (`labels[rank]`).
    pub(crate) fn new(labels: &'a [u32]) -> CompiledGroup<'a> {
        CompiledGroup { labels, parts: Default::default(), len: 0 }
    }

    /// Adds a part: an automaton after the automata added before it, a
    /// rule list after every part (a rule list's prefilter skips the rules
    /// that cannot beat the automata's rank). A group holds at most
    /// [`GroupHead::MAX_PARTS`] (checked when the group was validated), and
    /// a part past that is dropped.
    pub(crate) fn push(&mut self, part: RunnerPart<'a>) {
        if self.len == MAX_PARTS {
            return;
        }
        let at = if part.is_rules() {
            self.len
        } else {
            self.parts[..self.len].iter().flatten().take_while(|p| !p.is_rules()).count()
        };
        self.parts[at..=self.len].rotate_right(1);
        self.parts[at] = Some(part);
        self.len += 1;
    }

    /// The winning rank for a prepared path (0: no rule matched).
    ///
    /// Always inlined: the one-part jump below pays only inside the
    /// caller's loop over a run of paths, and whether the compiler inlines
    /// it otherwise turns on the size of the rule-list call beside it.
    #[inline(always)]
    pub fn rank(&self, path: &[u8]) -> u32 {
        // Most groups are one automaton: its walk is the rank, reached
        // before the loop's registers are set up (on x86-64 a jump into the
        // walk, no frame of this function's own).
        if self.len == 1 {
            if let Some(only) = &self.parts[0] {
                return only.rank(path, 0);
            }
        }
        let mut best = 0;
        for part in self.parts[..self.len.min(MAX_PARTS)].iter().flatten() {
            best = best.max(part.rank(path, best));
        }
        best
    }

    /// The label a rank stands for.
    #[inline]
    pub fn label(&self, rank: u32) -> Label {
        Label(self.labels.get(rank as usize).copied().unwrap_or(0))
    }

    /// Whether a prepared path is allowed.
    #[inline(always)]
    pub fn allows(&self, path: &[u8]) -> bool {
        self.label(self.rank(path)).allows()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups and matchers are shared by threads (an artifact's group cache,
    /// a `Matcher` behind an `Arc`): the per-part walk hint must not take
    /// `Sync` away from them, which a `Cell` would (and did, for a commit).
    #[test]
    fn groups_and_matchers_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<RunnerPart<'static>>();
        shared::<CompiledGroup<'static>>();
        shared::<crate::MatcherRef<'static>>();
    }

    /// Every way of adding up to [`MAX_PARTS`] + 1 parts, each an automaton
    /// or a rule list: the group walks the automata first and then the rule
    /// lists, each in the order they were added, drops what is past
    /// [`MAX_PARTS`], and ranks a path by the best of its parts.
    #[test]
    fn automata_walk_first_in_order_and_the_rank_is_the_best_part() {
        use crate::dfa::Dfa;
        use crate::rules::RuleList;
        // Automaton `i` answers `i + 1` on every path; rule list `i` answers
        // `20 + i` on `/r<i>` and nothing else.
        let dfas: Vec<Dfa> =
            (0..=MAX_PARTS as u32).map(|i| Dfa::new([0; 256], 0, vec![0], vec![i + 1], 0, 1).unwrap()).collect();
        let patterns: Vec<Vec<u8>> = (0..=MAX_PARTS).map(|i| format!("/r{i}").into_bytes()).collect();
        let lists: Vec<RuleList> =
            (0..=MAX_PARTS).map(|i| RuleList::from_rules([(patterns[i].as_slice(), 20 + i as u32)])).collect();
        let labels: Vec<u32> = (0..40).collect();
        let part = |rules: bool, i: usize| -> RunnerPart<'_> {
            if rules {
                RunnerPart::prefiltered(PartView::Rules(lists[i].as_ref()))
            } else {
                RunnerPart::prefiltered(PartView::Dfa(dfas[i].as_ref()))
            }
        };
        for count in 0..=MAX_PARTS + 1 {
            for kinds in 0..1u32 << count {
                let is_rules = |i: usize| kinds >> i & 1 == 1;
                let mut group = CompiledGroup::new(&labels);
                for i in 0..count {
                    group.push(part(is_rules(i), i));
                }
                let kept: Vec<usize> = (0..count.min(MAX_PARTS)).collect();
                let want_order: Vec<(bool, usize)> = kept
                    .iter()
                    .filter(|&&i| !is_rules(i))
                    .chain(kept.iter().filter(|&&i| is_rules(i)))
                    .map(|&i| (is_rules(i), i))
                    .collect();
                let order: Vec<(bool, usize)> = group.parts[..group.len]
                    .iter()
                    .map(|p| match &p.as_ref().unwrap().view {
                        PartView::Dfa(dfa) => (false, dfa.max_answer() as usize - 1),
                        PartView::Rules(list) => (true, list.max_answer() as usize - 20),
                        _ => unreachable!(),
                    })
                    .collect();
                assert_eq!(order, want_order, "{count} parts, kinds {kinds:b}");
                assert!(group.parts[group.len..].iter().all(Option::is_none));
                let best_automaton = kept.iter().filter(|&&i| !is_rules(i)).map(|&i| i as u32 + 1).max();
                for (i, pattern) in patterns.iter().enumerate() {
                    let list = (kept.contains(&i) && is_rules(i)).then_some(20 + i as u32);
                    let want = best_automaton.max(list).unwrap_or(0);
                    assert_eq!(group.rank(pattern), want, "{count} parts, kinds {kinds:b}, path {i}");
                    assert_eq!(group.label(group.rank(pattern)), Label(want));
                }
                assert_eq!(group.rank(b"/other"), best_automaton.unwrap_or(0));
            }
        }
    }
}
