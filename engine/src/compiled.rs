//! A compiled group's tables: one part enum ([`Part`]) and one group type
//! ([`Matcher`]), each generic over where its tables live, as
//! [`crate::dfa::Dfa`] is. The builder makes them owned, the writer encodes
//! them ([`crate::format::encode_group`]), an artifact's group is read in
//! place as the same part enum over borrowed tables, and
//! [`crate::matcher`] makes the view that decides paths
//! ([`crate::matcher::MatcherRef`]).
//!
//! Kept apart from [`crate::matcher`] so that the format, which encodes
//! these tables, does not depend on the runtime a matcher runs through
//! (matcher -> runtime -> format -> compiled, no circle). Their paths under
//! `matcher` stay (`matcher` re-exports them).

use crate::comb::CombDfaRef;
use crate::dfa::{Dfa, DfaRef};
use crate::rules::{RuleList, RuleListRef};
use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;

/// The most parts a group is split into.
pub const MAX_PARTS: usize = 3;

/// Where the tables of a [`Part`] live, as the type of each kind of part:
/// [`Owned`] by the builder, or borrowed from an artifact, read in place.
pub trait PartTables {
    /// A dense automaton of 32-bit state ids.
    type Dfa: Clone + fmt::Debug;
    /// A dense automaton of 16-bit state ids.
    type Dfa16: Clone + fmt::Debug;
    /// A comb of 32-bit ids.
    type Comb: Clone + fmt::Debug;
    /// A comb of 16-bit ids.
    type Comb16: Clone + fmt::Debug;
    /// Rules matched one by one.
    type Rules: Clone + fmt::Debug;
}

/// The builder's parts: a dense automaton of 32-bit ids or a rule list. The
/// other kinds are forms the artifact writer picks when it encodes an
/// automaton, so an owned part never is one (their types are empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Owned {}

impl PartTables for Owned {
    type Dfa = Dfa;
    type Dfa16 = Infallible;
    type Comb = Infallible;
    type Comb16 = Infallible;
    type Rules = RuleList;
}

/// An artifact's parts, read in place in the form the writer stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stored<'a>(PhantomData<&'a [u8]>);

impl<'a> PartTables for Stored<'a> {
    type Dfa = DfaRef<'a>;
    type Dfa16 = DfaRef<'a, u16>;
    type Comb = CombDfaRef<'a>;
    type Comb16 = CombDfaRef<'a, u16>;
    type Rules = RuleListRef<'a>;
}

/// One part of a compiled group, the one list of the part kinds, generic
/// over where its tables live ([`PartTables`]): owned by default, as the
/// builder makes it.
// A group has at most three parts and the artifact writer reads `Dfa` in
// place, so the automaton stays unboxed despite its 256-byte class map.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part<S: PartTables = Owned> {
    /// A dense automaton of 32-bit state ids.
    Dfa(S::Dfa),
    /// A dense automaton of 16-bit state ids.
    Dfa16(S::Dfa16),
    /// A comb of 32-bit ids.
    Comb(S::Comb),
    /// A comb of 16-bit ids.
    Comb16(S::Comb16),
    /// Rules matched one by one.
    Rules(S::Rules),
}

impl Part {
    /// The highest rank this part can answer.
    pub fn max_answer(&self) -> u32 {
        match self {
            Part::Dfa(dfa) => dfa.max_answer(),
            Part::Rules(list) => list.max_answer(),
            Part::Dfa16(never) | Part::Comb(never) | Part::Comb16(never) => match *never {},
        }
    }

    /// The part over this part's tables, as an artifact's is read.
    pub(crate) fn as_stored(&self) -> Part<Stored<'_>> {
        match self {
            Part::Dfa(dfa) => Part::Dfa(dfa.as_ref()),
            Part::Rules(list) => Part::Rules(list.as_ref()),
            Part::Dfa16(never) | Part::Comb(never) | Part::Comb16(never) => match *never {},
        }
    }
}

/// A compiled group: its rank tables and up to [`MAX_PARTS`] parts, generic
/// over where they live: `T` the two rank tables, `P` the parts.
///
/// The default, all owned, is what the builder makes and the artifact
/// writer encodes, checked by [`Matcher::new`];
/// [`crate::matcher::MatcherRef`] borrows its rank tables and runs its
/// parts through the artifact's runtime, to decide paths.
///
/// # Ranks
///
/// Every part answers a *rank*: 0 means no rule matched, and a larger rank
/// wins. The group carries two tables indexed by rank: the
/// [`Label`](robotsieve_core::Label) it stands for and the index of the
/// deciding rule in the compiler's `Group::rules`
/// (`u32::MAX` when the rank does not name one rule, as in verdict mode, and
/// for rank 0). The compiler numbers ranks in one of two ways:
///
/// - verdict mode: one rank per distinct label, in label order, so automata
///   are minimised on the verdict and stay small;
/// - explain mode: one rank per rule, ordered by label and, among equal
///   labels, with the earlier rule ranked higher, so the best rank names the
///   rule Google would report.
///
/// # Parts
///
/// A group is usually one automaton. A group too large for one is split into
/// at most [`MAX_PARTS`] parts (a literal-rule automaton, a one-star automaton,
/// a per-rule list); the answer is the maximum over the parts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Matcher<T = Vec<u32>, P = Vec<Part>> {
    labels: T,
    rules: T,
    parts: P,
}

impl Matcher {
    /// A group of the rank tables `labels` and `rules` (one entry per rank
    /// each) and up to [`MAX_PARTS`] parts, highest possible answer first.
    ///
    /// Checks that the two tables have one entry per rank, that rank 0 is
    /// "no rule", and that no part answers a rank outside the tables.
    pub fn new(labels: Vec<u32>, rules: Vec<u32>, parts: Vec<Part>) -> Result<Matcher, MatcherError> {
        check(&labels, &rules, parts.iter().map(Part::max_answer))?;
        Ok(Matcher { labels, rules, parts })
    }

    /// The parts, highest possible answer first.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }
}

impl<T: AsRef<[u32]>, P> Matcher<T, P> {
    /// A group over tables [`Matcher::new`] checked (the view of an owned
    /// group).
    pub(crate) fn validated(labels: T, rules: T, parts: P) -> Matcher<T, P> {
        Matcher { labels, rules, parts }
    }

    /// `labels[rank]`: the label a rank stands for.
    pub fn labels(&self) -> &[u32] {
        self.labels.as_ref()
    }

    /// `rules[rank]`: index of the deciding rule in `Group::rules`, or `u32::MAX`.
    pub fn rules(&self) -> &[u32] {
        self.rules.as_ref()
    }

    /// Number of ranks, including 0.
    pub fn ranks(&self) -> usize {
        self.rules().len()
    }

    /// The parts as this storage holds them.
    pub(crate) fn part_storage(&self) -> &P {
        &self.parts
    }
}

/// The checks of [`Matcher::new`], with the highest answer of each part.
fn check(labels: &[u32], rules: &[u32], max_answers: impl Iterator<Item = u32>) -> Result<(), MatcherError> {
    if labels.len() != rules.len() {
        return Err(MatcherError::RankTablesDiffer { labels: labels.len(), rules: rules.len() });
    }
    if labels.first() != Some(&0) {
        return Err(MatcherError::RankZeroNotNoRule);
    }
    let mut max_answers = max_answers.enumerate();
    for (n, max) in max_answers.by_ref() {
        if n == MAX_PARTS {
            return Err(MatcherError::TooManyParts { parts: n + 1 + max_answers.count() });
        }
        if max as usize >= labels.len() {
            return Err(MatcherError::RankOutOfRange { part: n, rank: max, ranks: labels.len() });
        }
    }
    Ok(())
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
