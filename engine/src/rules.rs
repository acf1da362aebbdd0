//! The per-rule fallback: rules that no automaton can hold cheaply.
//!
//! Rules with several floating `*` (exponential in any DFA), and anything a
//! build found over budget, are matched one by one. They are stored sorted by
//! rank, highest first, so the first rule that matches is the best one and a
//! search stops there. An aho-corasick automaton over each rule's longest
//! literal piece (the bytes between two stars) picks the candidates, so a path
//! is only checked against rules whose rarest-looking piece occurs in it;
//! rules without any literal piece are always candidates.
//!
//! The stored form ([`RuleListBuf`]) is three plain tables, which the artifact
//! keeps as aligned sections; [`RuleList`] is a validated view over them with
//! its [`Prefilter`], either owned (built with the view) or borrowed (built
//! once and cached by whoever keeps the tables, as the artifact does, since a
//! view over memory-mapped tables cannot own what is built from them).

use crate::pattern;
use aho_corasick::AhoCorasick;
use std::borrow::Cow;
use std::fmt;

/// The stored form of a per-rule part: patterns concatenated, sorted by rank,
/// highest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RuleListBuf {
    /// Every pattern (escaped, as matched, with its `$`), one after the other.
    pub patterns: Vec<u8>,
    /// `ends[i]`: where pattern `i` ends in `patterns` (it starts where `i - 1` ends).
    pub ends: Vec<u32>,
    /// `ranks[i]`: the rank pattern `i` gives when it matches; non-increasing, at least 1.
    pub ranks: Vec<u32>,
}

impl RuleListBuf {
    /// Stores `(pattern, rank)` pairs, sorting them by rank, highest first
    /// (stable, so equal ranks keep their order).
    pub fn new<'p>(rules: impl IntoIterator<Item = (&'p [u8], u32)>) -> RuleListBuf {
        let mut rules: Vec<(&[u8], u32)> = rules.into_iter().collect();
        rules.sort_by_key(|&(_, rank)| std::cmp::Reverse(rank));
        let mut buf = RuleListBuf::default();
        for (pattern, rank) in rules {
            buf.patterns.extend_from_slice(pattern);
            buf.ends.push(u32::try_from(buf.patterns.len()).expect("rule list under 4 GiB"));
            buf.ranks.push(rank);
        }
        buf
    }

    /// A validated view (builds the prefilter).
    pub fn as_rule_list(&self) -> Result<RuleList<'_>, RuleListError> {
        RuleList::new(&self.patterns, &self.ends, &self.ranks)
    }
}

/// Why three tables are not a valid rule list, or its prefilter did not build.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub enum RuleListError {
    /// `ends` and `ranks` differ in length.
    CountMismatch {
        /// Entries in `ends`.
        ends: usize,
        /// Entries in `ranks`.
        ranks: usize,
    },
    /// A pattern ends before the previous one or past the pattern bytes.
    PatternEndOutOfRange {
        /// The pattern's index.
        pattern: usize,
        /// Where it ends.
        end: usize,
        /// Where it starts (the previous pattern's end).
        start: usize,
        /// Length of the pattern bytes.
        pattern_bytes: usize,
    },
    /// A pattern has rank 0, which stands for "no rule".
    RankZero {
        /// The pattern's index.
        pattern: usize,
    },
    /// A pattern's rank is above the previous one's (ranks go highest first).
    RanksNotSorted {
        /// The pattern's index.
        pattern: usize,
    },
    /// A prefilter built for another number of rules was given.
    PrefilterSize {
        /// The number of rules it was built for.
        built_for: usize,
        /// The number of rules in the tables.
        rules: usize,
    },
    /// The prefilter's automaton did not build.
    Prefilter {
        /// The number of distinct literal pieces it was built over.
        pieces: usize,
        /// Why it did not build.
        error: aho_corasick::BuildError,
    },
}

impl fmt::Display for RuleListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid rule list: ")?;
        match self {
            RuleListError::CountMismatch { ends, ranks } => write!(f, "{ends} pattern ends but {ranks} ranks"),
            RuleListError::PatternEndOutOfRange { pattern, end, start, pattern_bytes } => write!(
                f,
                "pattern {pattern} ends at {end}, outside {start}..={pattern_bytes} (of {pattern_bytes} pattern bytes)"
            ),
            RuleListError::RankZero { pattern } => write!(f, "pattern {pattern} has rank 0, which means \"no rule\""),
            RuleListError::RanksNotSorted { pattern } => {
                write!(f, "ranks are not sorted highest first at pattern {pattern}")
            }
            RuleListError::PrefilterSize { built_for, rules } => {
                write!(f, "prefilter built for {built_for} rules, tables have {rules}")
            }
            RuleListError::Prefilter { pieces, error } => {
                write!(f, "cannot build the prefilter over {pieces} pieces: {error}")
            }
        }
    }
}

impl std::error::Error for RuleListError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RuleListError::Prefilter { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The candidates of a rule list: an aho-corasick automaton over each rule's
/// longest literal piece, and which rules each piece stands for.
#[derive(Clone, Debug, Default)]
pub struct Prefilter {
    /// The number of rules it was built for (checked by [`RuleList::with_prefilter`]).
    rules: usize,
    /// Over the distinct literal pieces; `None` when no rule has one.
    ac: Option<AhoCorasick>,
    /// For prefilter pattern `p`: the rules having it as their piece, ascending,
    /// are `piece_rules[piece_starts[p] .. piece_starts[p + 1]]`.
    piece_starts: Vec<u32>,
    piece_rules: Vec<u32>,
    /// Rules without a literal piece (`*`, `$`, `*$`), ascending.
    always: Vec<u32>,
}

impl Prefilter {
    /// Builds the prefilter of tables that [`RuleList::check`] accepted.
    pub fn new(patterns: &[u8], ends: &[u32]) -> Result<Prefilter, RuleListError> {
        let mut prefilter = Prefilter { rules: ends.len(), ..Prefilter::default() };
        // Group the rules by their longest literal piece.
        let mut pieces: Vec<(&[u8], u32)> = Vec::new();
        for i in 0..ends.len() {
            match longest_piece(pattern_at(patterns, ends, i)) {
                Some(piece) => pieces.push((piece, i as u32)),
                None => prefilter.always.push(i as u32),
            }
        }
        if !pieces.is_empty() {
            pieces.sort();
            let mut distinct: Vec<&[u8]> = Vec::new();
            for (piece, rule) in pieces {
                if distinct.last() != Some(&piece) {
                    distinct.push(piece);
                    prefilter.piece_starts.push(prefilter.piece_rules.len() as u32);
                }
                prefilter.piece_rules.push(rule);
            }
            prefilter.piece_starts.push(prefilter.piece_rules.len() as u32);
            let ac = AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(&distinct)
                .map_err(|error| RuleListError::Prefilter { pieces: distinct.len(), error })?;
            prefilter.ac = Some(ac);
        }
        Ok(prefilter)
    }

    /// [`Prefilter::new`], or, should its automaton not build (it is built
    /// lazily, where an error has nowhere to go), a prefilter that sends
    /// every rule to be checked: slower, never wrong.
    pub fn new_or_every_rule(patterns: &[u8], ends: &[u32]) -> Prefilter {
        Prefilter::new(patterns, ends).unwrap_or_else(|_| Prefilter {
            rules: ends.len(),
            always: (0..ends.len() as u32).collect(),
            ..Prefilter::default()
        })
    }
}

fn pattern_at<'p>(patterns: &'p [u8], ends: &[u32], i: usize) -> &'p [u8] {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &patterns[start..ends[i] as usize]
}

/// A validated per-rule part with its prefilter.
#[derive(Clone, Debug)]
pub struct RuleList<'a> {
    patterns: &'a [u8],
    ends: &'a [u32],
    ranks: &'a [u32],
    prefilter: Cow<'a, Prefilter>,
}

impl<'a> RuleList<'a> {
    /// Checks the tables and builds the prefilter.
    pub fn new(patterns: &'a [u8], ends: &'a [u32], ranks: &'a [u32]) -> Result<RuleList<'a>, RuleListError> {
        RuleList::check(patterns, ends, ranks)?;
        let prefilter = Cow::Owned(Prefilter::new(patterns, ends)?);
        Ok(RuleList { patterns, ends, ranks, prefilter })
    }

    /// A view over tables that [`RuleList::check`] accepted, with a prefilter
    /// that [`Prefilter::new`] built from the same tables (the caller keeps it).
    /// A prefilter built for a different number of rules is refused; one built
    /// from other tables of the same size gives wrong candidates, never a panic
    /// (every rule index it yields is below the table size).
    pub fn with_prefilter(
        patterns: &'a [u8],
        ends: &'a [u32],
        ranks: &'a [u32],
        prefilter: &'a Prefilter,
    ) -> Result<RuleList<'a>, RuleListError> {
        if prefilter.rules != ends.len() {
            return Err(RuleListError::PrefilterSize { built_for: prefilter.rules, rules: ends.len() });
        }
        Ok(RuleList { patterns, ends, ranks, prefilter: Cow::Borrowed(prefilter) })
    }

    /// Checks the tables: `ends` must be non-decreasing and end within
    /// `patterns`; `ranks` must have one entry per pattern, be non-increasing
    /// and at least 1.
    pub fn check(patterns: &[u8], ends: &[u32], ranks: &[u32]) -> Result<(), RuleListError> {
        if ends.len() != ranks.len() {
            return Err(RuleListError::CountMismatch { ends: ends.len(), ranks: ranks.len() });
        }
        let mut start = 0usize;
        for (pattern, &end) in ends.iter().enumerate() {
            let end = end as usize;
            if end < start || end > patterns.len() {
                return Err(RuleListError::PatternEndOutOfRange { pattern, end, start, pattern_bytes: patterns.len() });
            }
            start = end;
        }
        if let Some(pattern) = ranks.iter().position(|&r| r == 0) {
            return Err(RuleListError::RankZero { pattern });
        }
        if let Some(i) = ranks.windows(2).position(|w| w[0] < w[1]) {
            return Err(RuleListError::RanksNotSorted { pattern: i + 1 });
        }
        Ok(())
    }

    /// The three tables and the prefilter, taken apart for a part that keeps
    /// the prefilter shared ([`crate::runtime::CompiledGroup`]'s rule-list
    /// part, which the artifact also fills from its cache).
    pub(crate) fn into_tables(self) -> (&'a [u8], &'a [u32], &'a [u32], Prefilter) {
        (self.patterns, self.ends, self.ranks, self.prefilter.into_owned())
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Pattern `i` (escaped, with its `$`).
    pub fn pattern(&self, i: usize) -> &'a [u8] {
        pattern_at(self.patterns, self.ends, i)
    }

    /// The highest rank this part can give (0 when empty).
    pub fn max_answer(&self) -> u32 {
        self.ranks.first().copied().unwrap_or(0)
    }

    /// The best rank among the rules matching `path` that is above `floor`
    /// (0 when none is). Allocates nothing.
    pub fn best(&self, path: &[u8], floor: u32) -> u32 {
        // Rules that could beat `floor` are a prefix, and the first match wins.
        let limit = self.ranks.partition_point(|&r| r > floor);
        let mut winner = limit;
        let consider = |rules: &[u32], winner: &mut usize| {
            for &i in rules {
                let i = i as usize;
                if i >= *winner {
                    break;
                }
                if pattern::matches(self.pattern(i), path) {
                    *winner = i;
                    break;
                }
            }
        };
        let prefilter = &*self.prefilter;
        consider(&prefilter.always, &mut winner);
        if let Some(ac) = &prefilter.ac {
            for found in ac.find_overlapping_iter(path) {
                if winner == 0 {
                    break;
                }
                let p = found.pattern().as_usize();
                let rules =
                    &prefilter.piece_rules[prefilter.piece_starts[p] as usize..prefilter.piece_starts[p + 1] as usize];
                consider(rules, &mut winner);
            }
        }
        if winner < limit {
            self.ranks[winner]
        } else {
            0
        }
    }
}

/// The longest run of bytes between stars in a pattern's body, if any.
fn longest_piece(pattern: &[u8]) -> Option<&[u8]> {
    let (body, _) = pattern::split_anchor(pattern);
    body.split(|&b| b == b'*').filter(|p| !p.is_empty()).max_by_key(|p| p.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rules: &[(&str, u32)]) -> RuleListBuf {
        RuleListBuf::new(rules.iter().map(|(p, r)| (p.as_bytes(), *r)))
    }

    #[test]
    fn best_is_the_highest_matching_rank_above_the_floor() {
        let buf = list(&[("/a*b*c", 3), ("/*x*y", 5), ("*", 1), ("/a$", 4)]);
        let rules = buf.as_rule_list().unwrap();
        assert_eq!(rules.max_answer(), 5);
        assert_eq!(rules.best(b"/a1b2c", 0), 3);
        assert_eq!(rules.best(b"/a1b2c/x/y", 0), 5);
        assert_eq!(rules.best(b"/a", 0), 4);
        assert_eq!(rules.best(b"/a/", 0), 1);
        assert_eq!(rules.best(b"/a1b2c", 3), 0);
        assert_eq!(rules.best(b"/a1b2c", 2), 3);
        assert_eq!(rules.best(b"", 0), 1);
    }

    #[test]
    fn equal_pieces_share_the_prefilter() {
        let buf = list(&[("/*abc*1", 2), ("/*abc*2", 3), ("/q*abc", 1)]);
        let rules = buf.as_rule_list().unwrap();
        assert_eq!(rules.best(b"/abc1", 0), 2);
        assert_eq!(rules.best(b"/abc12", 0), 3);
        assert_eq!(rules.best(b"/qabc", 0), 1);
        assert_eq!(rules.best(b"/ab", 0), 0);
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(RuleList::new(b"/a/b", &[2, 1], &[2, 1]).is_err());
        assert!(RuleList::new(b"/a/b", &[2, 5], &[2, 1]).is_err());
        assert!(RuleList::new(b"/a/b", &[2, 4], &[1, 2]).is_err());
        assert!(RuleList::new(b"/a/b", &[2, 4], &[1, 0]).is_err());
        assert!(RuleList::new(b"/a/b", &[2, 4], &[1]).is_err());
        let e = RuleList::new(b"/a/b", &[2, 5], &[2, 1]).unwrap_err();
        assert!(e.to_string().contains("pattern 1 ends at 5"), "{e}");
        assert!(RuleList::new(b"/a/b", &[2, 4], &[2, 2]).is_ok());
        assert_eq!(RuleList::new(b"", &[], &[]).unwrap().best(b"/x", 0), 0);
    }

    #[test]
    fn each_broken_table_gives_its_own_error() {
        let check = |ends: &[u32], ranks: &[u32]| RuleList::check(b"/a/b", ends, ranks).unwrap_err();
        assert!(matches!(
            check(&[2, 1], &[2, 1]),
            RuleListError::PatternEndOutOfRange { pattern: 1, end: 1, start: 2, pattern_bytes: 4 }
        ));
        assert!(matches!(
            check(&[2, 5], &[2, 1]),
            RuleListError::PatternEndOutOfRange { pattern: 1, end: 5, start: 2, pattern_bytes: 4 }
        ));
        assert!(matches!(check(&[2, 4], &[1, 2]), RuleListError::RanksNotSorted { pattern: 1 }));
        assert!(matches!(check(&[2, 4], &[1, 0]), RuleListError::RankZero { pattern: 1 }));
        assert!(matches!(check(&[2, 4], &[1]), RuleListError::CountMismatch { ends: 2, ranks: 1 }));
        let prefilter = Prefilter::new(b"/a/b", &[2]).unwrap();
        let e = RuleList::with_prefilter(b"/a/b", &[2, 4], &[2, 1], &prefilter).unwrap_err();
        assert!(matches!(e, RuleListError::PrefilterSize { built_for: 1, rules: 2 }), "{e}");
        assert_eq!(e.to_string(), "invalid rule list: prefilter built for 1 rules, tables have 2");
    }
}
