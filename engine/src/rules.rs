//! The per-rule fallback: rules that no automaton can hold cheaply.
//!
//! Rules with several floating `*` (exponential in any DFA), and anything a
//! build found over budget, are matched one by one. They are stored sorted by
//! rank, highest first, so the first rule that matches is the best one and a
//! search stops there. An index of each rule's longest literal piece (the
//! bytes between two stars, see [`Prefilter`]) picks the candidates, so a
//! path is only checked against rules whose longest piece occurs in it;
//! rules without any literal piece are always candidates.
//!
//! The stored form ([`RuleListBuf`]) is three plain tables, which the artifact
//! keeps as aligned sections; [`RuleList`] is a validated view over them with
//! its [`Prefilter`], either owned (built with the view) or borrowed (built
//! once and cached by whoever keeps the tables, as the artifact does, since a
//! view over memory-mapped tables cannot own what is built from them).

use crate::pattern;
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

/// Why three tables are not a valid rule list, or a prefilter does not fit them.
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
        }
    }
}

impl std::error::Error for RuleListError {}

/// The candidates of a rule list: each rule's longest literal piece, indexed
/// by its first two bytes (or its one byte), and which rules each piece
/// stands for. A rule can only match a path that contains its piece, so the
/// rules worth checking are those whose piece occurs in the path.
///
/// The search steps through the path once, testing each byte and each pair
/// of adjacent bytes against a bit set (a few instructions a byte), and
/// compares pieces only where a bit is set. It replaced an overlapping
/// aho-corasick NFA over the same pieces, which cost about 600,000
/// instructions to build for a list of a few hundred rules and about 1,300
/// a search (callgrind, crawl2019); this index is a sort of the pieces.
#[derive(Clone, Debug, Default)]
pub struct Prefilter {
    /// The number of rules it was built for (checked by [`RuleList::with_prefilter`]).
    rules: usize,
    /// The index, boxed so that a [`RuleList`] that owns its prefilter stays small.
    tables: Box<PieceTables>,
}

/// The tables of a [`Prefilter`].
#[derive(Clone, Debug, Default)]
struct PieceTables {
    /// The distinct pieces of two bytes or more, sorted by [`pair_slot`] of
    /// their first two bytes; piece `p` is
    /// `piece_bytes[piece_ends[p - 1]..piece_ends[p]]` (from 0 for the first).
    piece_bytes: Vec<u8>,
    piece_ends: Vec<u32>,
    /// [`pair_slot`] of each piece's first two bytes (ascending).
    piece_slots: Vec<u16>,
    /// One bit per [`pair_slot`] that some piece starts with.
    pair_bits: Vec<u64>,
    /// Per byte: [`IS_PIECE`] when it is a whole piece, [`STARTS_PIECE`]
    /// when a piece of two bytes or more starts with it (most bytes of a
    /// path are neither, and cost one lookup).
    first: Vec<u8>,
    /// The one-byte pieces (ascending), each standing for rules
    /// `byte_rules[..]` like a long piece (its rules follow the long pieces').
    bytes: Vec<u8>,
    /// For piece `p` (the long pieces, then the one-byte pieces): the rules
    /// having it as their piece, ascending, are
    /// `piece_rules[piece_starts[p] .. piece_starts[p + 1]]`.
    piece_starts: Vec<u32>,
    piece_rules: Vec<u32>,
    /// Rules without a literal piece (`*`, `$`, `*$`), ascending.
    always: Vec<u32>,
}

/// How many slots [`pair_slot`] maps byte pairs to (a bit set of 512 bytes).
const PAIR_SLOTS: usize = 1 << 12;

/// The slot of a pair of adjacent bytes in [`Prefilter`]'s pair bit set: a
/// filter only (different pairs may share one), exact for pairs of ASCII
/// letters and digits that differ in the first byte's top bits.
#[inline(always)]
fn pair_slot(first: u8, second: u8) -> usize {
    ((usize::from(first) << 5) ^ usize::from(second)) % PAIR_SLOTS
}

/// A [`Prefilter`] byte flag: the byte is a one-byte piece.
const IS_PIECE: u8 = 1;
/// A [`Prefilter`] byte flag: a piece of two bytes or more starts with the byte.
const STARTS_PIECE: u8 = 2;

fn has_bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

impl Prefilter {
    /// Builds the prefilter of tables that [`RuleList::check`] accepted.
    pub fn new(patterns: &[u8], ends: &[u32]) -> Prefilter {
        let mut t = PieceTables { pair_bits: vec![0; PAIR_SLOTS / 64], first: vec![0; 256], ..PieceTables::default() };
        // The rules by their longest literal piece: long pieces by slot, then one-byte pieces.
        let mut pieces: Vec<(bool, u16, &[u8], u32)> = Vec::with_capacity(ends.len());
        t.piece_rules.reserve_exact(ends.len());
        for i in 0..ends.len() {
            match longest_piece(pattern_at(patterns, ends, i)) {
                Some(&[byte]) => pieces.push((true, u16::from(byte), &[], i as u32)),
                Some(piece) => pieces.push((false, pair_slot(piece[0], piece[1]) as u16, piece, i as u32)),
                None => t.always.push(i as u32),
            }
        }
        pieces.sort_unstable();
        let mut last: Option<(bool, u16, &[u8])> = None;
        for (single, slot, piece, rule) in pieces {
            if last != Some((single, slot, piece)) {
                last = Some((single, slot, piece));
                t.piece_starts.push(t.piece_rules.len() as u32);
                if single {
                    let byte = slot as u8;
                    t.bytes.push(byte);
                    t.first[usize::from(byte)] |= IS_PIECE;
                } else {
                    t.piece_bytes.extend_from_slice(piece);
                    t.piece_ends.push(t.piece_bytes.len() as u32);
                    t.piece_slots.push(slot);
                    t.pair_bits[usize::from(slot) / 64] |= 1 << (slot % 64);
                    t.first[usize::from(piece[0])] |= STARTS_PIECE;
                }
            }
            t.piece_rules.push(rule);
        }
        t.piece_starts.push(t.piece_rules.len() as u32);
        Prefilter { rules: ends.len(), tables: Box::new(t) }
    }

    /// The rules of piece `p` (numbered as for `piece_starts`).
    #[inline]
    fn rules_of(&self, p: usize) -> &[u32] {
        &self.tables.piece_rules[self.tables.piece_starts[p] as usize..self.tables.piece_starts[p + 1] as usize]
    }

    /// Calls `found` with the rules of every piece that occurs in `path`, in
    /// the order the pieces occur (a piece found at several places is
    /// reported at each, a one-byte piece once), while `found` says to go on.
    #[inline]
    fn candidates(&self, path: &[u8], mut found: impl FnMut(&[u32]) -> bool) {
        let t = &*self.tables;
        if t.first.len() != 256 {
            return; // No piece at all (a default prefilter).
        }
        let mut seen = [0u64; 4];
        for (i, &byte) in path.iter().enumerate() {
            let flags = t.first[usize::from(byte)];
            if flags == 0 {
                continue;
            }
            let b = usize::from(byte);
            if flags & IS_PIECE != 0 && !has_bit(&seen, b) {
                seen[b / 64] |= 1 << (b % 64);
                let p = t.bytes.partition_point(|&x| x < byte);
                if !found(self.rules_of(t.piece_slots.len() + p)) {
                    return;
                }
            }
            let Some(&next) = path.get(i + 1) else { break };
            let slot = pair_slot(byte, next);
            if flags & STARTS_PIECE != 0 && has_bit(&t.pair_bits, slot) {
                let first = t.piece_slots.partition_point(|&s| usize::from(s) < slot);
                for p in first..t.piece_slots.len() {
                    if usize::from(t.piece_slots[p]) != slot {
                        break;
                    }
                    let start = if p == 0 { 0 } else { t.piece_ends[p - 1] as usize };
                    let piece = &t.piece_bytes[start..t.piece_ends[p] as usize];
                    if path[i..].starts_with(piece) && !found(self.rules_of(p)) {
                        return;
                    }
                }
            }
        }
    }
}

/// A rule list's prefilter, built once the list has proven hot.
///
/// A frontier reaches most origins a few times at most, and a small list
/// used once is cheaper to scan than to index: with the aho-corasick
/// automaton this index replaced (hundreds of thousands of instructions to
/// build for a list of a few hundred rules), builds on each list's first use
/// were a sixth of a cold frontier's instructions. Until it is built,
/// [`LazyPrefilter::best`] checks the rules one by one (the same answer, see
/// [`RuleList::best_by_scan`]) and counts what that cost; once the scans have
/// cost about what the build would ([`LazyPrefilter::BUILD_COST_PER_BYTE`]
/// times the pattern bytes), the prefilter is built and used from then on
/// (the rent-or-buy rule: never more than about twice the better choice made
/// in hindsight).
#[derive(Debug)]
pub struct LazyPrefilter {
    built: std::sync::OnceLock<Prefilter>,
    /// Estimated instructions spent scanning without the prefilter.
    scanned: std::sync::atomic::AtomicU64,
    /// Estimated instructions its build costs.
    build_cost: u64,
}

impl LazyPrefilter {
    /// Estimated instructions of a prefilter's build per pattern byte. An
    /// estimate: callgrind counts about 50,000 instructions per build on
    /// crawl2019's rule lists of about 4,000 pattern bytes (the aho-corasick
    /// NFA it replaced cost about 600,000); an error by a factor k costs at
    /// most about k + 1 times the better choice.
    pub const BUILD_COST_PER_BYTE: u64 = 12;

    /// Estimated instructions of checking one rule against a path, besides
    /// [`LazyPrefilter::SCAN_COST_PER_PATH_BYTE`] for each byte of the path
    /// (callgrind on the synthetic frontier: about 450 a rule on its paths
    /// of 40 to 50 bytes, the floating pieces of split groups' rules
    /// searched through the path).
    const SCAN_COST_PER_RULE: u64 = 64;

    /// See [`LazyPrefilter::SCAN_COST_PER_RULE`].
    const SCAN_COST_PER_PATH_BYTE: u64 = 8;

    /// A prefilter of the rule list with `pattern_bytes` bytes of patterns, not built yet.
    pub fn new(pattern_bytes: usize) -> LazyPrefilter {
        LazyPrefilter {
            built: std::sync::OnceLock::new(),
            scanned: std::sync::atomic::AtomicU64::new(0),
            build_cost: 4096 + pattern_bytes as u64 * Self::BUILD_COST_PER_BYTE,
        }
    }

    /// A prefilter built already (a [`RuleList`]'s own, see
    /// [`crate::matcher`]): used from the first path on.
    pub fn built(prefilter: Prefilter) -> LazyPrefilter {
        LazyPrefilter {
            built: std::sync::OnceLock::from(prefilter),
            scanned: std::sync::atomic::AtomicU64::new(0),
            build_cost: 0,
        }
    }

    /// Whether the prefilter has been built.
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// [`RuleList::best`] of the list these tables (checked by
    /// [`RuleList::check`]) hold: with the prefilter once it is built, by a
    /// scan of the rules before, which builds it when the scans have cost
    /// what the build would.
    pub fn best(&self, patterns: &[u8], ends: &[u32], ranks: &[u32], path: &[u8], floor: u32) -> u32 {
        use std::sync::atomic::Ordering;
        if let Some(prefilter) = self.built.get() {
            return RuleList::with_prefilter(patterns, ends, ranks, prefilter)
                .map_or(0, |rules| rules.best(path, floor));
        }
        let (best, checked) = RuleList::best_by_scan(patterns, ends, ranks, path, floor);
        let cost = checked as u64 * (Self::SCAN_COST_PER_RULE + path.len() as u64 * Self::SCAN_COST_PER_PATH_BYTE);
        if self.scanned.fetch_add(cost, Ordering::Relaxed) + cost >= self.build_cost {
            self.built.get_or_init(|| Prefilter::new(patterns, ends));
        }
        best
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
        let prefilter = Cow::Owned(Prefilter::new(patterns, ends));
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

    /// [`RuleList::best`] without a prefilter, over tables that
    /// [`RuleList::check`] accepted: the rules that could beat `floor` (a
    /// prefix, highest rank first) checked in turn, the first match the
    /// winner; and how many rules were checked. The same answer as with the
    /// prefilter, which only skips rules that cannot match.
    pub fn best_by_scan(patterns: &[u8], ends: &[u32], ranks: &[u32], path: &[u8], floor: u32) -> (u32, usize) {
        let limit = ranks.partition_point(|&r| r > floor).min(ends.len());
        let mut start = 0usize;
        for (i, &end) in ends[..limit].iter().enumerate() {
            let end = end as usize;
            if let Some(pattern) = patterns.get(start..end) {
                if pattern::matches(pattern, path) {
                    return (ranks[i], i + 1);
                }
            }
            start = end;
        }
        (0, limit)
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
        consider(&prefilter.tables.always, &mut winner);
        if winner > 0 {
            prefilter.candidates(path, |rules| {
                consider(rules, &mut winner);
                winner > 0
            });
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
        let prefilter = Prefilter::new(b"/a/b", &[2]);
        let e = RuleList::with_prefilter(b"/a/b", &[2, 4], &[2, 1], &prefilter).unwrap_err();
        assert!(matches!(e, RuleListError::PrefilterSize { built_for: 1, rules: 2 }), "{e}");
        assert_eq!(e.to_string(), "invalid rule list: prefilter built for 1 rules, tables have 2");
    }

    proptest::proptest! {
        /// The scan without a prefilter, and the lazy prefilter before and
        /// after its build, answer as the prefiltered list does, at every floor.
        #[test]
        fn scanning_answers_as_the_prefilter_does(
            rules in proptest::collection::vec(("/[ab*]{0,6}[$]?", 1u32..6), 0..12),
            paths in proptest::collection::vec("/[ab]{0,10}", 1..8),
            floor in 0u32..6,
        ) {
            let buf = RuleListBuf::new(rules.iter().map(|(p, r)| (p.as_bytes(), *r)));
            let list = buf.as_rule_list().unwrap();
            let lazy = LazyPrefilter::new(0);
            for path in &paths {
                let want = list.best(path.as_bytes(), floor);
                let (scanned, _) = RuleList::best_by_scan(&buf.patterns, &buf.ends, &buf.ranks, path.as_bytes(), floor);
                proptest::prop_assert_eq!(scanned, want);
                let lazily = lazy.best(&buf.patterns, &buf.ends, &buf.ranks, path.as_bytes(), floor);
                proptest::prop_assert_eq!(lazily, want);
            }
        }
    }

    /// Bytes whose pairs share [`pair_slot`]s ("aa" and "c!", "ab" and
    /// "c\"", a byte and its top-bit twin), one-byte pieces, stars and `$`.
    const PIECE_BYTES: &[u8] = b"abc!\"/?=*$\xe1\x01";

    proptest::proptest! {
        /// The prefilter picks every rule that matches: the prefiltered list
        /// answers as the scan of every rule does, at every floor, over rules
        /// whose pieces collide in the pair index or are one byte long.
        #[test]
        fn the_prefilter_misses_no_matching_rule(
            rules in proptest::collection::vec(
                (proptest::collection::vec(proptest::sample::select(PIECE_BYTES), 0..8), 1u32..8),
                0..16,
            ),
            paths in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(PIECE_BYTES), 0..14), 1..8),
            floor in 0u32..8,
        ) {
            let buf = RuleListBuf::new(rules.iter().map(|(p, r)| (p.as_slice(), *r)));
            let list = buf.as_rule_list().unwrap();
            for path in &paths {
                let (want, _) = RuleList::best_by_scan(&buf.patterns, &buf.ends, &buf.ranks, path, floor);
                proptest::prop_assert_eq!(list.best(path, floor), want, "path {:?}", String::from_utf8_lossy(path));
            }
        }
    }

    #[test]
    fn colliding_pairs_are_told_apart() {
        assert_eq!(pair_slot(b'a', b'a'), pair_slot(b'c', b'!'));
        let buf = list(&[("/*aa*x", 2), ("/*c!*y", 1)]);
        let rules = buf.as_rule_list().unwrap();
        assert_eq!(rules.best(b"/c!x", 0), 0);
        assert_eq!(rules.best(b"/c!y", 0), 1);
        assert_eq!(rules.best(b"/aay/c!", 0), 0);
        assert_eq!(rules.best(b"/aax/c!y", 0), 2);
    }

    #[test]
    fn the_lazy_prefilter_is_built_once_the_scans_cost_what_the_build_would() {
        let rules: Vec<String> = (0..50).map(|i| format!("/*x{i}*y")).collect();
        let buf = RuleListBuf::new(rules.iter().map(|p| (p.as_bytes(), 1)));
        let lazy = LazyPrefilter::new(buf.patterns.len());
        let path = b"/no";
        // Each use scans all 50 rules; the build is bought once they cost what it would.
        let scan =
            50 * (LazyPrefilter::SCAN_COST_PER_RULE + path.len() as u64 * LazyPrefilter::SCAN_COST_PER_PATH_BYTE);
        let build = 4096 + buf.patterns.len() as u64 * LazyPrefilter::BUILD_COST_PER_BYTE;
        let expected = build.div_ceil(scan);
        assert!(expected > 1, "a list this small would be built on first use");
        let mut uses = 0;
        while !lazy.is_built() {
            assert_eq!(lazy.best(&buf.patterns, &buf.ends, &buf.ranks, path, 0), 0);
            uses += 1;
            assert!(uses < 1000, "never built");
        }
        assert_eq!(uses, expected);
        assert_eq!(lazy.best(&buf.patterns, &buf.ends, &buf.ranks, b"/ax7zy", 0), 1);
    }
}
