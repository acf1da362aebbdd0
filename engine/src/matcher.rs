//! A compiled group: automaton parts combined by rank.
//!
//! # Ranks
//!
//! Every part answers a *rank*: 0 means no rule matched, and a larger rank
//! wins. The group carries two tables indexed by rank: the [`Label`] it stands
//! for and the index of the deciding rule in the compiler's `Group::rules`
//! (`u32::MAX` when the rank does not name one rule, as in verdict mode, and
//! for rank 0). The compiler numbers ranks in one of two ways:
//!
//! - verdict mode: one rank per distinct label, in label order, so automata
//!   are minimised on the verdict and stay small;
//! - explain mode: one rank per rule, ordered by label and, among equal
//!   labels, with the earlier rule ranked higher, so the best rank names the
//!   rule Google would report.
//!
//! # Parts
//!
//! A group is usually one automaton. A group too large for one is split into
//! at most [`MAX_PARTS`] parts (a literal-rule automaton, a one-star automaton,
//! a per-rule list); the answer is the maximum over the parts.
//!
//! # One way to run a group
//!
//! [`Matcher`] checks the tables (rank tables against the parts' answers)
//! and then runs the group through [`CompiledGroup`], the runtime the
//! artifact's classifier uses too: automata first, then the rule lists,
//! whose prefilter skips the rules that cannot beat the rank found so far.
//! So the compiled tables that tests and benches decide with are walked by
//! the very code that decides a frontier. What a matcher adds is the rule
//! index table, to name the deciding rule of an explain-mode group.
//!
//! Parts sit in a fixed inline array instead of a `Vec`, so making a view of
//! an automaton-only group allocates nothing and matching never allocates.
//! Making a view reads every answer once (to check each part's best answer
//! against the rank tables), which costs less than the transition check of
//! [`crate::dfa::Dfa::new`] that an automaton had to pass.

pub use crate::compiled::{MatcherBuf, PartBuf};
use crate::format::PartView;
use crate::runtime::{CompiledGroup, RunnerPart};
use robotsieve_core::Label;
use std::fmt;

/// The most parts a group is split into.
pub const MAX_PARTS: usize = 3;

// Defined in `compiled` (below `format`, which encodes it, so that the
// format does not depend on the runtime this module uses); its view is made here.
impl MatcherBuf {
    /// A validated view for matching.
    pub fn matcher(&self) -> Result<Matcher<'_>, MatcherError> {
        let parts = self.parts.iter().map(|part| match part {
            PartBuf::Dfa(dfa) => PartView::Dfa(dfa.as_ref()),
            PartBuf::Rules(list) => PartView::Rules(list.as_ref()),
        });
        Matcher::new(&self.labels, &self.rules, parts)
    }
}

/// The highest rank `part` can answer (every part was checked when its
/// view was made).
fn max_answer(part: &PartView<'_>) -> u32 {
    match *part {
        PartView::Dfa(dfa) => dfa.max_answer(),
        PartView::Dfa16(dfa) => dfa.max_answer(),
        PartView::Comb(comb) => comb.max_answer(),
        PartView::Comb16(comb) => comb.max_answer(),
        PartView::Rules(list) => list.max_answer(),
    }
}

/// Why tables are not a valid compiled group.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub enum MatcherError {
    /// More parts than a group may have ([`MAX_PARTS`]).
    TooManyParts {
        /// The number of parts given.
        parts: usize,
    },
    /// The label and rule-index tables differ in length (one entry per rank each).
    RankTablesDiffer {
        /// Entries in the label table.
        labels: usize,
        /// Entries in the rule-index table.
        rules: usize,
    },
    /// Rank 0 does not stand for label 0 ("no rule"), or there are no ranks.
    RankZeroNotNoRule,
    /// A part can answer a rank past the tables.
    RankOutOfRange {
        /// The part's index.
        part: usize,
        /// The highest rank it answers.
        rank: u32,
        /// The number of ranks in the tables.
        ranks: usize,
    },
}

impl fmt::Display for MatcherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid compiled group: ")?;
        match self {
            MatcherError::TooManyParts { parts } => write!(f, "{parts} parts, at most {MAX_PARTS} allowed"),
            MatcherError::RankTablesDiffer { labels, rules } => write!(f, "{labels} labels but {rules} rule indexes"),
            MatcherError::RankZeroNotNoRule => f.write_str("rank 0 must stand for label 0 (no rule)"),
            MatcherError::RankOutOfRange { part, rank, ranks } => {
                write!(f, "part {part} answers rank {rank} but there are {ranks} ranks")
            }
        }
    }
}

impl std::error::Error for MatcherError {}

/// The result of matching a path against a compiled group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The winning rank (0: no rule matched).
    pub rank: u32,
    /// The winning label.
    pub label: Label,
    /// The deciding rule's index in `Group::rules`, when the group was
    /// compiled to explain (always `None` in verdict mode or when nothing matched).
    pub rule: Option<u32>,
}

impl Outcome {
    /// Whether the path is allowed.
    pub fn allowed(&self) -> bool {
        self.label.allows()
    }
}

/// A validated compiled group, ready to decide paths: the rank tables, and
/// the parts run by [`CompiledGroup`].
#[derive(Clone, Debug)]
pub struct Matcher<'a> {
    rules: &'a [u32],
    group: CompiledGroup<'a>,
}

impl<'a> Matcher<'a> {
    /// Makes a view over the rank tables and up to [`MAX_PARTS`] parts (in
    /// any order), each of a kind an artifact stores ([`PartView`]).
    ///
    /// Checks that the two tables have one entry per rank, that rank 0 is
    /// "no rule", and that no part answers a rank outside the tables;
    /// builds each rule list's prefilter.
    pub(crate) fn new(
        labels: &'a [u32],
        rules: &'a [u32],
        parts: impl IntoIterator<Item = PartView<'a>>,
    ) -> Result<Matcher<'a>, MatcherError> {
        if labels.len() != rules.len() {
            return Err(MatcherError::RankTablesDiffer { labels: labels.len(), rules: rules.len() });
        }
        if labels.first() != Some(&0) {
            return Err(MatcherError::RankZeroNotNoRule);
        }
        let mut group = CompiledGroup::new(labels);
        let mut parts = parts.into_iter().enumerate();
        for (n, part) in parts.by_ref() {
            if n == MAX_PARTS {
                return Err(MatcherError::TooManyParts { parts: n + 1 + parts.count() });
            }
            let max = max_answer(&part);
            if max as usize >= labels.len() {
                return Err(MatcherError::RankOutOfRange { part: n, rank: max, ranks: labels.len() });
            }
            group.push(RunnerPart::prefiltered(part));
        }
        Ok(Matcher { rules, group })
    }

    /// Decides a path (in the form rules are matched against). Allocates nothing.
    #[inline]
    pub fn decide(&self, path: &[u8]) -> Outcome {
        self.outcome(self.group.rank(path))
    }

    /// What a rank stands for. Ranks come from this group's parts, which
    /// `Matcher::new` checked against the tables.
    pub fn outcome(&self, rank: u32) -> Outcome {
        let rule = self.rules[rank as usize];
        Outcome { rank, label: self.group.label(rank), rule: (rule != u32::MAX).then_some(rule) }
    }

    /// Number of ranks, including 0.
    pub fn ranks(&self) -> usize {
        self.rules.len()
    }

    /// The group as the runtime runs it.
    pub fn compiled_group(&self) -> &CompiledGroup<'a> {
        &self.group
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfa::Dfa;
    use crate::rules::RuleList;

    /// One state per rank, all sinks: the start state answers `rank`.
    fn constant(rank: u32) -> Dfa {
        Dfa::new([0; 256], 0, vec![0], vec![rank], 0, 1).unwrap()
    }

    #[test]
    fn parts_combine_by_max_and_tables_give_meaning() {
        let buf = MatcherBuf {
            labels: vec![0, 4, 7],
            rules: vec![u32::MAX, 3, u32::MAX],
            parts: vec![
                PartBuf::Dfa(constant(1)),
                PartBuf::Rules(RuleList::from_rules([(b"/x".as_slice(), 2), (b"/y".as_slice(), 1)])),
            ],
        };
        let m = buf.matcher().unwrap();
        assert_eq!(m.ranks(), 3);
        let x = m.decide(b"/x");
        assert_eq!((x.rank, x.label, x.rule), (2, Label(7), None));
        assert!(x.allowed());
        let y = m.decide(b"/y");
        assert_eq!((y.rank, y.label, y.rule), (1, Label(4), Some(3)));
        assert!(!y.allowed());
    }

    #[test]
    fn rejects_inconsistent_tables() {
        let buf = |labels: Vec<u32>, rules: Vec<u32>, rank: u32| MatcherBuf {
            labels,
            rules,
            parts: vec![PartBuf::Dfa(constant(rank))],
        };
        assert!(buf(vec![0, 2], vec![u32::MAX, 0], 1).matcher().is_ok());
        assert!(buf(vec![0, 2], vec![u32::MAX, 0], 2).matcher().is_err());
        assert!(buf(vec![0, 2], vec![u32::MAX], 1).matcher().is_err());
        assert!(buf(vec![1, 2], vec![u32::MAX, 0], 1).matcher().is_err());
        let many = MatcherBuf { labels: vec![0], rules: vec![u32::MAX], parts: vec![PartBuf::Dfa(constant(0)); 4] };
        assert!(many.matcher().is_err());
        let empty = MatcherBuf { labels: vec![0], rules: vec![u32::MAX], parts: vec![] };
        assert_eq!(empty.matcher().unwrap().decide(b"/").rank, 0);
    }

    #[test]
    fn each_inconsistency_gives_its_own_error() {
        let buf = |labels: Vec<u32>, rules: Vec<u32>, parts: Vec<PartBuf>| MatcherBuf { labels, rules, parts };
        let rank = |rank| vec![PartBuf::Dfa(constant(rank))];
        let e = buf(vec![0, 2], vec![u32::MAX, 0], rank(2)).matcher().unwrap_err();
        assert!(matches!(e, MatcherError::RankOutOfRange { part: 0, rank: 2, ranks: 2 }), "{e}");
        let e = buf(vec![0, 2], vec![u32::MAX], rank(1)).matcher().unwrap_err();
        assert!(matches!(e, MatcherError::RankTablesDiffer { labels: 2, rules: 1 }), "{e}");
        let e = buf(vec![1, 2], vec![u32::MAX, 0], rank(1)).matcher().unwrap_err();
        assert!(matches!(e, MatcherError::RankZeroNotNoRule), "{e}");
        let e = buf(vec![0], vec![u32::MAX], vec![PartBuf::Dfa(constant(0)); 5]).matcher().unwrap_err();
        assert!(matches!(e, MatcherError::TooManyParts { parts: 5 }), "{e}");
        let parts = (0..5).map(|_| constant(0));
        let dfas: Vec<Dfa> = parts.collect();
        let e = Matcher::new(&[0], &[u32::MAX], dfas.iter().map(|d| PartView::Dfa(d.as_ref()))).unwrap_err();
        assert!(matches!(e, MatcherError::TooManyParts { parts: 5 }), "{e}");
        // A rule list's best rank is checked against the tables as an automaton's is.
        let rules = PartBuf::Rules(RuleList::from_rules([(b"/a".as_slice(), 2)]));
        let e = buf(vec![0, 1], vec![u32::MAX, 0], vec![PartBuf::Dfa(constant(1)), rules]).matcher().unwrap_err();
        assert!(matches!(e, MatcherError::RankOutOfRange { part: 1, rank: 2, ranks: 2 }), "{e}");
    }
}
