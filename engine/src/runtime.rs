//! A compiled group ready to decide many paths: its parts read once.
//!
//! [`crate::artifact::Artifact::decide_many`] makes a view of each query's
//! group and each of its parts, then walks the queries side by side: right
//! for a batch of unrelated queries, and wasted work when many paths go
//! through the same group one after the other. The filter groups the URLs of
//! a chunk by origin (see [`crate::classify`]), so each group is used for a
//! run of paths; a [`CompiledGroup`] reads the group's head, its part records
//! and its rank tables once for the run, and [`CompiledGroup::rank`] is then
//! a scan per part, with the tables hot in the cache after the first path.

use crate::dfa::Walker;
use crate::format::{GroupHead, PartView};
use crate::label::Label;
use crate::rules::LazyPrefilter;
use crate::walk::{self, Automaton, LastSkip};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The most parts a stored group has ([`GroupHead::MAX_PARTS`]).
const MAX_PARTS: usize = GroupHead::MAX_PARTS as usize;

/// One part of a stored group as the walks run it: the decoder's
/// [`PartView`] (the one list of part kinds, in [`crate::format`]) plus the
/// runtime state a part needs, a rule list's prefilter. Made by the artifact
/// both for [`CompiledGroup`] and for the side-by-side walks of
/// [`crate::artifact::Artifact::decide_many`], and by [`crate::matcher`].
#[derive(Debug)]
pub(crate) struct RunnerPart<'a> {
    /// The stored part.
    pub(crate) view: PartView<'a>,
    /// A rule list's prefilter, shared by every use of the part
    /// ([`LazyPrefilter`]); `None` for an automaton.
    pub(crate) prefilter: Option<Arc<LazyPrefilter>>,
    /// An automaton's last accelerated state and its escapes, kept from
    /// path to path ([`walk::scan_remembering`]): a run's paths mostly skip
    /// in the same state, whose escapes are then looked up once a run
    /// instead of once a path (a binary search, about 40 instructions a
    /// URL on crawl2019). An atomic word rather than a `Cell` so that
    /// groups and matchers stay `Sync`: relaxed loads and stores are plain
    /// moves on x86-64, and whatever another thread stored is a state with
    /// its own escapes, a valid hint.
    last_skip: AtomicU64,
}

impl<'a> RunnerPart<'a> {
    /// The part `view`; `prefilter` gives a rule list's prefilter (its
    /// patterns in hand) and is not called for an automaton.
    #[inline]
    pub(crate) fn new(view: PartView<'a>, prefilter: impl FnOnce(&'a [u8]) -> Arc<LazyPrefilter>) -> RunnerPart<'a> {
        let prefilter = match view {
            PartView::Rules { patterns, .. } => Some(prefilter(patterns)),
            _ => None,
        };
        RunnerPart::with_prefilter(view, prefilter)
    }

    /// The part `view` with its prefilter (`None` for an automaton).
    pub(crate) fn with_prefilter(view: PartView<'a>, prefilter: Option<Arc<LazyPrefilter>>) -> RunnerPart<'a> {
        RunnerPart { view, prefilter, last_skip: AtomicU64::new(LastSkip::NONE.to_bits()) }
    }

    fn is_rules(&self) -> bool {
        matches!(self.view, PartView::Rules { .. })
    }

    /// This part's rank for `path`; a rule list may answer 0 when no rule of
    /// it beats `floor`.
    #[inline]
    pub(crate) fn rank(&self, path: &[u8], floor: u32) -> u32 {
        match self.view {
            PartView::Dfa(dfa) => match dfa.walker() {
                Walker::U16(dense) => walk::scan(&dense, path),
                Walker::U32(dense) => walk::scan(&dense, path),
            },
            PartView::Comb(comb) => self.scan_remembering(&comb, path),
            PartView::Comb16(comb) => self.scan_remembering(&comb, path),
            PartView::Rules { patterns, ends, ranks } => match &self.prefilter {
                Some(prefilter) => prefilter.best(patterns, ends, ranks, path, floor),
                None => 0,
            },
        }
    }
}

impl Clone for RunnerPart<'_> {
    fn clone(&self) -> Self {
        let last_skip = AtomicU64::new(self.last_skip.load(Ordering::Relaxed));
        RunnerPart { view: self.view, prefilter: self.prefilter.clone(), last_skip }
    }
}

impl RunnerPart<'_> {
    /// [`walk::scan`] of `automaton`, this part's, remembering its last
    /// skip in the part.
    #[inline(always)]
    fn scan_remembering(&self, automaton: &impl Automaton, path: &[u8]) -> u32 {
        let mut last = LastSkip::from_bits(self.last_skip.load(Ordering::Relaxed));
        let answer = walk::scan_remembering(automaton, path, &mut last);
        self.last_skip.store(last.to_bits(), Ordering::Relaxed);
        answer
    }
}

/// A group of an artifact with its parts read, for deciding a run of paths
/// ([`crate::artifact::Artifact::compiled_group`]). It answers exactly as
/// [`crate::artifact::Artifact::decide`] does for every path: the best rank
/// over the parts, the automata first and then the rule lists (whose
/// prefilter skips the rules that cannot beat the rank found so far).
#[derive(Clone, Debug)]
pub struct CompiledGroup<'a> {
    labels: &'a [u32],
    /// Automata from the front, rule lists from the back.
    parts: [Option<RunnerPart<'a>>; MAX_PARTS],
    automata: usize,
    rule_lists: usize,
}

impl<'a> CompiledGroup<'a> {
    /// A group of no parts yet whose ranks stand for `labels` (`labels[rank]`).
    pub(crate) fn new(labels: &'a [u32]) -> CompiledGroup<'a> {
        CompiledGroup { labels, parts: Default::default(), automata: 0, rule_lists: 0 }
    }

    /// Adds a part; a group holds at most [`GroupHead::MAX_PARTS`] (checked
    /// when the group was validated), and a part past that is dropped.
    pub(crate) fn push(&mut self, part: RunnerPart<'a>) {
        if self.automata + self.rule_lists == MAX_PARTS {
            return;
        }
        if part.is_rules() {
            self.rule_lists += 1;
            self.parts[MAX_PARTS - self.rule_lists] = Some(part);
        } else {
            self.parts[self.automata] = Some(part);
            self.automata += 1;
        }
    }

    /// The winning rank for a prepared path (0: no rule matched).
    #[inline]
    pub fn rank(&self, path: &[u8]) -> u32 {
        let mut best = 0;
        let automata = self.parts[..self.automata].iter();
        let rule_lists = self.parts[MAX_PARTS - self.rule_lists..].iter().rev();
        for part in automata.chain(rule_lists).flatten() {
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
        shared::<crate::matcher::Matcher<'static>>();
    }

    #[test]
    fn a_last_skip_survives_its_word() {
        for skip in [LastSkip::NONE, LastSkip { state: 0, escapes: 0 }, LastSkip { state: 7, escapes: 0x2f3f_2300 }] {
            assert_eq!(LastSkip::from_bits(skip.to_bits()), skip);
        }
    }
}
