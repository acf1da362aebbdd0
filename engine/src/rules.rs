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
//! A [`RuleList`] is three plain tables, which the artifact keeps as
//! aligned sections, generic over where they live (as [`crate::dfa::Dfa`]
//! is): the builder's owned list, and a [`RuleListRef`] of an artifact's
//! tables read in place, both checked by [`RuleList::new`]. Its
//! [`Prefilter`] is kept beside it, not in it: the builder, which never
//! matches, never builds one, and a view over memory-mapped tables cannot
//! own what is built from them, so whoever keeps the tables keeps the
//! prefilter (an artifact one per part, built once the part is hot, see
//! [`LazyPrefilter`]).

use robotsieve_core::pattern;
use std::fmt;

/// A per-rule part: every pattern, concatenated and sorted by rank, highest
/// first, generic over where its tables live: the pattern bytes `P`, and
/// `E` for the pattern ends and the ranks.
///
/// The default, all owned, is what the builder makes
/// ([`RuleList::from_rules`]) and the artifact writer stores;
/// [`RuleListRef`] borrows, as an artifact's tables are read in place.
/// Every value was sorted by [`RuleList::from_rules`] or checked by
/// [`RuleList::new`] (or is a view of tables that were), so a search never
/// indexes out of bounds. A search takes the list's [`Prefilter`], which
/// its keeper holds beside it ([`RuleList::prefilter`] builds it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RuleList<P = Vec<u8>, E = Vec<u32>> {
    /// Every pattern (escaped, as matched, with its `$`), one after the other.
    patterns: P,
    /// `ends[i]`: where pattern `i` ends in `patterns` (it starts where `i - 1` ends).
    ends: E,
    /// `ranks[i]`: the rank pattern `i` gives when it matches; non-increasing, at least 1.
    ranks: E,
}

/// A [`RuleList`] over borrowed tables (an artifact's, or an owned list's
/// through [`RuleList::as_ref`]), as an artifact's part holds it.
pub type RuleListRef<'a> = RuleList<&'a [u8], &'a [u32]>;

impl RuleList {
    /// Stores `(pattern, rank)` pairs, sorting them by rank, highest first
    /// (stable, so equal ranks keep their order).
    ///
    /// # Panics
    ///
    /// When a rank is 0 (which stands for "no rule", and which no rule the
    /// builder ranks has), or the patterns pass 4 GiB.
    pub fn from_rules<'p>(rules: impl IntoIterator<Item = (&'p [u8], u32)>) -> RuleList {
        let mut rules: Vec<(&[u8], u32)> = rules.into_iter().collect();
        rules.sort_by_key(|&(_, rank)| std::cmp::Reverse(rank));
        let mut list: RuleList = RuleList::default();
        for (pattern, rank) in rules {
            assert!(rank > 0, "a rule of rank 0 (no rule)");
            list.patterns.extend_from_slice(pattern);
            list.ends.push(u32::try_from(list.patterns.len()).expect("rule list under 4 GiB"));
            list.ranks.push(rank);
        }
        list
    }
}

impl<P: AsRef<[u8]>, E: AsRef<[u32]>> RuleList<P, E> {
    /// Checks the tables: `ends` must be non-decreasing and end within
    /// `patterns`; `ranks` must have one entry per pattern, be non-increasing
    /// and at least 1.
    pub fn new(patterns: P, ends: E, ranks: E) -> Result<RuleList<P, E>, RuleListError> {
        check(patterns.as_ref(), ends.as_ref(), ranks.as_ref())?;
        Ok(RuleList { patterns, ends, ranks })
    }

    /// A list over tables that [`RuleList::new`] accepted before (an
    /// artifact's group, checked on its first use), not checked again.
    #[inline(always)]
    pub(crate) fn validated(patterns: P, ends: E, ranks: E) -> RuleList<P, E> {
        RuleList { patterns, ends, ranks }
    }

    /// A view over this list's tables.
    pub fn as_ref(&self) -> RuleListRef<'_> {
        RuleList { patterns: self.patterns(), ends: self.ends(), ranks: self.ranks() }
    }

    /// Every pattern, one after the other.
    #[inline(always)]
    pub fn patterns(&self) -> &[u8] {
        self.patterns.as_ref()
    }

    /// Where each pattern ends in [`RuleList::patterns`].
    #[inline(always)]
    pub fn ends(&self) -> &[u32] {
        self.ends.as_ref()
    }

    /// The rank each pattern gives when it matches, highest first.
    #[inline(always)]
    pub fn ranks(&self) -> &[u32] {
        self.ranks.as_ref()
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.ends().len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.ends().is_empty()
    }

    /// Pattern `i` (escaped, with its `$`).
    pub fn pattern(&self, i: usize) -> &[u8] {
        pattern_at(self.patterns(), self.ends(), i)
    }

    /// The highest rank this part can give (0 when empty).
    pub fn max_answer(&self) -> u32 {
        self.ranks().first().copied().unwrap_or(0)
    }

    /// The prefilter of this list, built now (what [`RuleList::best`] takes).
    pub fn prefilter(&self) -> Prefilter {
        Prefilter::new(self)
    }

    /// [`RuleList::best`] without a prefilter: the rules that could beat
    /// `floor` (a prefix, highest rank first) checked in turn, the first
    /// match the winner; and how many rules were checked. The same answer
    /// as with the prefilter, which only skips rules that cannot match.
    pub fn best_by_scan(&self, path: &[u8], floor: u32) -> (u32, usize) {
        let (patterns, ends, ranks) = (self.patterns(), self.ends(), self.ranks());
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
    /// (0 when none is), with `prefilter` picking the candidates: this
    /// list's ([`RuleList::prefilter`]). Another list's gives wrong
    /// candidates, never a panic (a rule it names past this list's is never
    /// checked). Allocates nothing.
    pub fn best(&self, prefilter: &Prefilter, path: &[u8], floor: u32) -> u32 {
        debug_assert_eq!(prefilter.rules, self.len(), "another list's prefilter");
        let ranks = self.ranks();
        // Rules that could beat `floor` are a prefix, and the first match wins.
        let limit = ranks.partition_point(|&r| r > floor);
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
        consider(&prefilter.always, &mut winner);
        if winner > 0 {
            prefilter.candidates(path, |rules| {
                consider(rules, &mut winner);
                winner > 0
            });
        }
        if winner < limit {
            ranks[winner]
        } else {
            0
        }
    }
}

/// Checks a rule list's tables (see [`RuleList::new`]).
fn check(patterns: &[u8], ends: &[u32], ranks: &[u32]) -> Result<(), RuleListError> {
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

/// Why three tables are not a valid rule list.
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
        }
    }
}

impl std::error::Error for RuleListError {}

/// The candidates of a rule list: a rule can only match a path that starts
/// with its first piece (the bytes before its first star) and contains each
/// of its other pieces, so the prefilter keeps one such necessary piece per
/// rule and the rules worth checking are those whose piece is in the path.
///
/// A rule whose first piece has `MIN_PREFIX` bytes or more
/// (`/mobile/*/x`), or two or more and no floating piece of two, is indexed
/// by that prefix, looked up once per path by the path's second byte. The
/// others (`/*x*y`, `*/x/*`) are indexed by one pair of adjacent
/// bytes of one of their floating pieces: the pair whose first byte is
/// rarest in URL paths (`byte_commonness`), wherever it sits in whichever
/// piece. The search steps through the path once, and only a byte that
/// starts some rule's pair (a lookup in a 256-byte table, a few
/// instructions a byte) leads to a test of the pair's bit and then to the
/// comparison of the pieces that pair stands for. Rules whose pieces are
/// all one byte long are indexed by their rarest byte; rules without any
/// literal byte (`*`, `$`, `*$`) are always candidates.
///
/// Rarest bytes, because an index keyed by each rule's longest piece's
/// first bytes (`/`, common letters) stopped on most bytes of a path
/// (benches/README.md, "Figures behind the code's choices").
#[derive(Clone, Debug, Default)]
pub struct Prefilter {
    /// The number of rules it was built for.
    rules: usize,
    /// The index, boxed so that a prefilter (and a [`LazyPrefilter`] not
    /// built yet) stays small; `None` when no rule has a literal byte to index.
    tables: Option<Box<PieceTables>>,
    /// Rules without a literal piece (`*`, `$`, `*$`), ascending.
    always: Vec<u32>,
}

/// The tables of a [`Prefilter`]. Piece `p` (the prefixes, then the
/// floating pieces, then the one-byte pieces) stands for the rules
/// `piece_rules[piece_starts[p] .. piece_starts[p + 1]]`, ascending.
#[derive(Clone, Debug)]
struct PieceTables {
    /// Per byte: [`STARTS_PAIR`] when some floating piece's indexed pair
    /// starts with it, [`IS_PIECE`] when it is an indexed one-byte piece
    /// (most bytes of a path are neither, and cost one lookup).
    first: [u8; 256],
    /// The nibble tables of the indexed pairs and one-byte pieces, when the
    /// CPU has AVX2 (asked once, at the build) and their bytes are ASCII.
    #[cfg(target_arch = "x86_64")]
    nibbles: Option<PairNibbles>,
    /// One bit per [`pair_slot`] that some indexed pair has.
    pair_bits: [u64; PAIR_SLOTS / 64],
    /// `pair_ranks[w]`: the bits set in `pair_bits[..w]`, so that a set
    /// slot's rank among the set slots (its entry in `slot_starts`) is two
    /// lookups and a popcount instead of a binary search of the pairs.
    pair_ranks: [u16; PAIR_SLOTS / 64],
    /// The distinct prefixes (of two bytes or more), sorted by their second
    /// byte: those whose second byte is `b` are
    /// `prefix_by_second[b] .. prefix_by_second[b + 1]`.
    prefix_by_second: Vec<u32>,
    /// The floating pieces' indexed pairs, one entry per distinct piece and
    /// offset, by [`pair_slot`] (ascending): the entries of the `r`-th set
    /// slot are `slot_starts[r] .. slot_starts[r + 1]`, and `pair_offsets`
    /// says where the pair sits in its piece.
    slot_starts: Vec<u32>,
    pair_offsets: Vec<u32>,
    /// The one-byte pieces (ascending).
    bytes: Vec<u8>,
    /// Every indexed piece of two bytes or more (the prefixes, then the
    /// floating pieces): piece `p` is `piece_bytes[piece_ends[p - 1]..piece_ends[p]]`
    /// (from 0 for the first).
    piece_bytes: Vec<u8>,
    piece_ends: Vec<u32>,
    piece_starts: Vec<u32>,
    piece_rules: Vec<u32>,
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
/// A [`Prefilter`] byte flag: an indexed pair starts with the byte.
const STARTS_PAIR: u8 = 2;

fn has_bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

/// How common a byte is in URL paths, roughly (higher is more common): `/`
/// and lower-case letters by their frequency in English, then the usual
/// separators and digits, then upper-case letters, then the rest. Only the
/// [`Prefilter`]'s choice of pair depends on it (a pair starting with a
/// rarer byte stops the search's sieve less often), never an answer.
static BYTE_COMMONNESS: [u8; 256] = {
    const LETTERS: &[u8; 26] = b"etaoinsrhlcdmupgfwybvkxjqz";
    let mut table = [5u8; 256];
    let mut i = 0;
    while i < 26 {
        table[LETTERS[i] as usize] = 90 - 2 * i as u8;
        table[(LETTERS[i] - b'a' + b'A') as usize] = 15;
        i += 1;
    }
    let mut digit = b'0';
    while digit <= b'9' {
        table[digit as usize] = 40;
        digit += 1;
    }
    table[b'/' as usize] = 100;
    table[b'-' as usize] = 60;
    table[b'.' as usize] = 60;
    table[b'=' as usize] = 45;
    table[b'&' as usize] = 45;
    table[b'_' as usize] = 45;
    table[b'%' as usize] = 45;
    table[b'?' as usize] = 30;
    table
};

/// [`BYTE_COMMONNESS`] of a byte.
fn byte_commonness(byte: u8) -> u8 {
    BYTE_COMMONNESS[usize::from(byte)]
}

/// Where a rule goes in a [`Prefilter`].
enum RuleKey<'p> {
    /// Its first piece, of two bytes or more, must start the path.
    Prefix(&'p [u8]),
    /// The pair at `offset` of a floating piece of two bytes or more.
    Pair { piece: &'p [u8], offset: usize },
    /// A one-byte piece.
    Byte(u8),
    /// No literal byte: always a candidate.
    Always,
}

/// The shortest first piece a [`Prefilter`] indexes a rule by when the
/// rule has a floating piece of two bytes or more: a shorter one (`/c/`)
/// starts too many paths, and each of those costs a check of the rule.
const MIN_PREFIX: usize = 4;

/// The key of a rule (see [`Prefilter`]).
fn rule_key(pattern: &[u8]) -> RuleKey<'_> {
    let (body, _) = pattern::split_anchor(pattern);
    let head = &body[..body.iter().position(|&b| b == b'*').unwrap_or(body.len())];
    if head.len() >= MIN_PREFIX {
        return RuleKey::Prefix(head);
    }
    if head.len() < body.len() {
        if let Some((piece, offset)) = rarest_pair(&body[head.len() + 1..]) {
            return RuleKey::Pair { piece, offset };
        }
    }
    if head.len() >= 2 {
        return RuleKey::Prefix(head);
    }
    match body.iter().copied().filter(|&b| b != b'*').min_by_key(|&b| byte_commonness(b)) {
        Some(byte) => RuleKey::Byte(byte),
        None => RuleKey::Always,
    }
}

/// The pair a rule whose floating pieces are `floating` (the pattern after
/// its first star, without the final `$`) is keyed by, as its piece and its
/// offset there: the first of the pairs with the rarest first byte, then
/// the rarest second byte, then in the longest piece; `None` when every
/// piece is shorter than two bytes.
///
/// One pass over the bytes, a commonness lookup each: within a piece the
/// first pair of the rarest (first, second) wins, and a piece's best is
/// compared with the others' once the piece's length is known, as one
/// packed key. The same choice as a `min_by_key` over every pair of every
/// piece (which cost about a third of a build, and the split into pieces
/// and a packed key a pair about a third still).
fn rarest_pair(floating: &[u8]) -> Option<(&[u8], usize)> {
    // (packed key, piece start, piece end, offset)
    let mut rarest: Option<(u32, usize, usize, usize)> = None;
    let (mut start, mut piece_best, mut piece_at) = (0, u32::MAX, 0);
    let mut previous = 0u32;
    for i in 0..=floating.len() {
        let byte = floating.get(i).copied().unwrap_or(b'*');
        if byte == b'*' {
            if piece_best != u32::MAX {
                let longer = 0xFFFF - (i - start).min(0xFFFF) as u32;
                let key = piece_best << 16 | longer;
                if rarest.is_none_or(|(best, ..)| key < best) {
                    rarest = Some((key, start, i, piece_at));
                }
            }
            (start, piece_best) = (i + 1, u32::MAX);
            continue;
        }
        let commonness = u32::from(byte_commonness(byte));
        if i > start {
            let pair = previous << 8 | commonness;
            if pair < piece_best {
                (piece_best, piece_at) = (pair, i - 1 - start);
            }
        }
        previous = commonness;
    }
    rarest.map(|(_, start, end, offset)| (&floating[start..end], offset))
}

impl Prefilter {
    /// Builds the prefilter of a list (as [`RuleList::prefilter`] does).
    ///
    /// Each keyed rule gets one integer sort key, its kind (prefix, pair,
    /// byte), its lookup key (second byte, `pair_slot`, byte), a hash of
    /// its piece and offset (`piece_hash`, 18 bits or more) and its
    /// place, so that one sort of plain integers (no comparison of piece
    /// bytes) puts the rules of equal pieces next to each other, ascending,
    /// in the order the tables keep.
    /// Pieces are only compared byte by byte when their keys are equal (a
    /// shared piece, or a hash collision, which then gives a piece entry of
    /// its own: a repeated check, never a wrong answer). Every table is
    /// sized before it is filled.
    pub fn new<P: AsRef<[u8]>, E: AsRef<[u32]>>(list: &RuleList<P, E>) -> Prefilter {
        Prefilter::build(list.patterns(), list.ends(), piece_hash)
    }

    /// [`Prefilter::new`] with the hash of pieces given (tests give one
    /// under which every piece collides).
    fn build(patterns: &[u8], ends: &[u32], piece_hash: fn(&[u8], usize) -> u64) -> Prefilter {
        // One u64 a keyed rule: kind (2 bits), lookup key (12), the top bits
        // of the piece's hash, and its entry in `entries` (`entry_bits`, the
        // low bits), which is in rule order, so that equal pieces keep their
        // rules ascending.
        let entry_bits = usize::BITS - ends.len().leading_zeros();
        let mut keyed: Vec<u64> = Vec::with_capacity(ends.len());
        let mut entries: Vec<(&[u8], u32, u32)> = Vec::with_capacity(ends.len());
        let mut always = Vec::new();
        let mut piece_bytes = 0;
        for i in 0..ends.len() {
            let rule = i as u32;
            let (kind, key, piece, offset) = match rule_key(pattern_at(patterns, ends, i)) {
                RuleKey::Prefix(piece) => (0, usize::from(piece[1]), piece, 0),
                RuleKey::Pair { piece, offset } => (1, pair_slot(piece[offset], piece[offset + 1]), piece, offset),
                RuleKey::Byte(byte) => (2, usize::from(byte), &[][..], 0),
                RuleKey::Always => {
                    always.push(rule);
                    continue;
                }
            };
            let hash = piece_hash(piece, offset) >> (14 + entry_bits) << entry_bits;
            keyed.push((kind as u64) << 62 | (key as u64) << 50 | hash | entries.len() as u64);
            entries.push((piece, offset as u32, rule));
            piece_bytes += piece.len();
        }
        if keyed.is_empty() {
            return Prefilter { rules: ends.len(), tables: None, always };
        }
        keyed.sort_unstable();
        let mut t = Box::new(PieceTables {
            first: [0; 256],
            #[cfg(target_arch = "x86_64")]
            nibbles: None,
            pair_bits: [0; PAIR_SLOTS / 64],
            pair_ranks: [0; PAIR_SLOTS / 64],
            prefix_by_second: vec![0; 257],
            slot_starts: Vec::with_capacity(keyed.len() + 1),
            pair_offsets: Vec::with_capacity(keyed.len()),
            bytes: Vec::new(),
            piece_bytes: Vec::with_capacity(piece_bytes),
            piece_ends: Vec::with_capacity(keyed.len()),
            piece_starts: Vec::with_capacity(keyed.len() + 1),
            piece_rules: Vec::with_capacity(keyed.len()),
        });
        // The byte sets of the vector sieve: the pairs' first bytes, their
        // second bytes, the one-byte pieces.
        let mut sets = ByteSets::default();
        let mut last: Option<(u64, &[u8], u32)> = None;
        for &packed in &keyed {
            let (sort_key, entry) = (packed >> entry_bits, packed & ((1 << entry_bits) - 1));
            let (piece, offset, rule) = entries[entry as usize];
            let same = last.is_some_and(|(k, p, o)| k == sort_key && o == offset && p == piece);
            if !same {
                last = Some((sort_key, piece, offset));
                let key = (packed >> 50 & 0xFFF) as usize;
                t.piece_starts.push(t.piece_rules.len() as u32);
                match packed >> 62 {
                    0 => t.prefix_by_second[key + 1] += 1,
                    1 => {
                        let (word, bit) = (key / 64, 1 << (key % 64));
                        if t.pair_bits[word] & bit == 0 {
                            t.pair_bits[word] |= bit;
                            t.slot_starts.push(t.pair_offsets.len() as u32);
                        }
                        t.pair_offsets.push(offset);
                        let (first, second) = (piece[offset as usize], piece[offset as usize + 1]);
                        t.first[usize::from(first)] |= STARTS_PAIR;
                        sets.insert(0, first);
                        sets.insert(1, second);
                    }
                    _ => {
                        t.bytes.push(key as u8);
                        t.first[key] |= IS_PIECE;
                        sets.insert(2, key as u8);
                    }
                }
                if packed >> 62 < 2 {
                    t.piece_bytes.extend_from_slice(piece);
                    t.piece_ends.push(t.piece_bytes.len() as u32);
                }
            }
            t.piece_rules.push(rule);
        }
        t.piece_starts.push(t.piece_rules.len() as u32);
        t.slot_starts.push(t.pair_offsets.len() as u32);
        for w in 1..PAIR_SLOTS / 64 {
            t.pair_ranks[w] = t.pair_ranks[w - 1] + t.pair_bits[w - 1].count_ones() as u16;
        }
        #[cfg(target_arch = "x86_64")]
        if robotsieve_core::arch::Avx2::available() {
            t.nibbles = sets.nibble_tables();
        }
        for b in 0..256 {
            t.prefix_by_second[b + 1] += t.prefix_by_second[b];
        }
        Prefilter { rules: ends.len(), tables: Some(t), always }
    }

    /// Calls `found` with the rules of every indexed piece that occurs in
    /// `path` (a prefix at the start, a floating piece anywhere, a one-byte
    /// piece once), while `found` says to go on.
    #[inline]
    fn candidates(&self, path: &[u8], mut found: impl FnMut(&[u32]) -> bool) {
        let Some(t) = self.tables.as_deref() else { return };
        let rules_of = |p: usize| &t.piece_rules[t.piece_starts[p] as usize..t.piece_starts[p + 1] as usize];
        let piece = |p: usize| {
            let start = if p == 0 { 0 } else { t.piece_ends[p - 1] as usize };
            &t.piece_bytes[start..t.piece_ends[p] as usize]
        };
        if let Some(&second) = path.get(1) {
            let b = usize::from(second);
            for p in t.prefix_by_second[b] as usize..t.prefix_by_second[b + 1] as usize {
                if path.starts_with(piece(p)) && !found(rules_of(p)) {
                    return;
                }
            }
        }
        let prefixes = t.prefix_by_second[256] as usize;
        let pairs = t.pair_offsets.len();
        let mut seen = [0u64; 4];
        let visit = |i: usize| {
            let byte = path[i];
            let flags = t.first[usize::from(byte)];
            let b = usize::from(byte);
            if flags & IS_PIECE != 0 && !has_bit(&seen, b) {
                seen[b / 64] |= 1 << (b % 64);
                let p = t.bytes.partition_point(|&x| x < byte);
                if !found(rules_of(prefixes + pairs + p)) {
                    return false;
                }
            }
            let Some(&next) = path.get(i + 1) else { return true };
            let slot = pair_slot(byte, next);
            let (word, bit) = (t.pair_bits[slot / 64], 1u64 << (slot % 64));
            if flags & STARTS_PAIR == 0 || word & bit == 0 {
                return true;
            }
            let rank = usize::from(t.pair_ranks[slot / 64]) + (word & (bit - 1)).count_ones() as usize;
            for e in t.slot_starts[rank] as usize..t.slot_starts[rank + 1] as usize {
                let p = prefixes + e;
                let Some(at) = i.checked_sub(t.pair_offsets[e] as usize) else { continue };
                if path[at..].starts_with(piece(p)) && !found(rules_of(p)) {
                    return false;
                }
            }
            true
        };
        #[cfg(target_arch = "x86_64")]
        if let Some(nibbles) = &t.nibbles {
            if path.len() >= 33 {
                // SAFETY: `nibbles` is only made when the CPU has AVX2.
                unsafe { for_each_flagged_avx2(nibbles, &t.first, path, visit) };
                return;
            }
        }
        for_each_flagged(&t.first, path, visit);
    }
}

/// Calls `visit` with each position of `bytes` whose byte has an entry in
/// `flags` that is not zero, in order, while it says to go on.
#[inline]
fn for_each_flagged(flags: &[u8; 256], bytes: &[u8], mut visit: impl FnMut(usize) -> bool) {
    let mut from = 0;
    while let Some(k) = next_flagged(flags, &bytes[from..]) {
        if !visit(from + k) {
            return;
        }
        from += k + 1;
    }
}

/// A hash of a [`Prefilter`] piece and the offset of its indexed pair,
/// which orders equal pieces next to each other in a build's sort (see
/// [`Prefilter::new`]); its top bits are used. Eight bytes a step.
fn piece_hash(piece: &[u8], offset: usize) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mix = |h: u64, word: u64| (h.rotate_left(23) ^ word).wrapping_mul(K);
    let mut h = mix(offset as u64, piece.len() as u64);
    let mut words = piece.chunks_exact(8);
    for word in &mut words {
        h = mix(h, u64::from_le_bytes(word.try_into().expect("8 bytes")));
    }
    let tail = words.remainder().iter().fold(0u64, |w, &b| w << 8 | u64::from(b));
    mix(mix(h, tail), 0)
}

/// Three sets of bytes as the low nibble tables of a 32-byte PSHUFB lookup
/// ([`PairNibbles`]): byte `h << 4 | l` of set `s` sets bit `h` of
/// `low[s][l]`, so that a build fills them one byte at a time instead of
/// testing every byte of each set.
#[derive(Default)]
struct ByteSets {
    low: [[u8; 16]; 3],
    /// Whether a set holds a byte from 0x80 (which the tables cannot).
    non_ascii: bool,
}

impl ByteSets {
    /// Adds `byte` to set `set`.
    fn insert(&mut self, set: usize, byte: u8) {
        if byte >= 0x80 {
            self.non_ascii = true;
        } else {
            self.low[set][usize::from(byte & 15)] |= 1 << (byte >> 4);
        }
    }

    /// The [`PairNibbles`] of the three sets, `None` when one holds a byte from 0x80.
    #[cfg(target_arch = "x86_64")]
    fn nibble_tables(&self) -> Option<PairNibbles> {
        if self.non_ascii {
            return None;
        }
        let mut tables = PairNibbles([[0u8; 32]; 4]);
        for lane in [0, 16] {
            for high in 0..8 {
                tables.0[0][lane + high] = 1 << high;
            }
            for (table, low) in tables.0[1..].iter_mut().zip(&self.low) {
                table[lane..lane + 16].copy_from_slice(low);
            }
        }
        Some(tables)
    }
}

/// The nibble tables of a [`Prefilter`]'s indexed pairs, for a 32-byte
/// PSHUFB lookup each, every table's 16 entries twice (once per 128-bit
/// lane): the high table (high nibble `h`, below 8, has bit `h`), then the
/// low tables of the pairs' first bytes, of their second bytes and of the
/// one-byte pieces (low nibble `l` has bit `h` for each byte `h << 4 | l`
/// in the set). A byte is in a set exactly when its high entry and its low
/// entry share a bit.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Debug)]
struct PairNibbles([[u8; 32]; 4]);

/// [`for_each_flagged`] with AVX2 for `bytes` of 33 or more, on a finer
/// sieve: a position is visited when its byte starts an indexed pair and
/// the next byte ends one (not necessarily the same pair), or when its byte
/// is a one-byte piece. 32 positions a step, each byte looked up in the
/// [`PairNibbles`], the last step over the last 33 bytes (the positions
/// seen already masked off), then the last byte, which starts no pair.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn for_each_flagged_avx2(nibbles: &PairNibbles, flags: &[u8; 256], bytes: &[u8], mut visit: impl FnMut(usize) -> bool) {
    use std::arch::x86_64::*;
    debug_assert!(bytes.len() >= 33);
    let len = bytes.len();
    let mut at = 0;
    while at < len - 1 {
        let block = at.min(len - 33);
        let chunk: &[u8; 33] = bytes[block..block + 33].try_into().expect("33 bytes");
        // SAFETY: the loads read bytes 0..32 and 1..33 of `chunk` and the
        // 32 bytes of each table.
        let flagged = unsafe {
            let table = |i: usize| _mm256_loadu_si256(nibbles.0[i].as_ptr().cast());
            let high_table = table(0);
            let in_set = |v: __m256i, low_table: __m256i| {
                let high_nibbles = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
                // A byte from 0x80 has its top bit set: its low lookup gives 0.
                let hits =
                    _mm256_and_si256(_mm256_shuffle_epi8(high_table, high_nibbles), _mm256_shuffle_epi8(low_table, v));
                !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hits, _mm256_setzero_si256())) as u32)
            };
            let v = _mm256_loadu_si256(chunk.as_ptr().cast());
            let next = _mm256_loadu_si256(chunk.as_ptr().add(1).cast());
            in_set(v, table(1)) & in_set(next, table(2)) | in_set(v, table(3))
        };
        let mut mask = flagged & (u32::MAX << (at - block));
        while mask != 0 {
            if !visit(block + mask.trailing_zeros() as usize) {
                return;
            }
            mask &= mask - 1;
        }
        at = block + 32;
    }
    if flags[usize::from(bytes[len - 1])] & IS_PIECE != 0 {
        visit(len - 1);
    }
}

/// The first byte of `bytes` whose entry in `flags` is not zero: eight
/// bytes a step while none is (their entries OR-ed, one branch), since
/// most bytes of a path have none and the branch per byte of a plain loop
/// cost about three times as much.
#[inline]
fn next_flagged(flags: &[u8; 256], bytes: &[u8]) -> Option<usize> {
    let flagged = |b: &u8| flags[usize::from(*b)] != 0;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        let any = flags[usize::from(c[0])]
            | flags[usize::from(c[1])]
            | flags[usize::from(c[2])]
            | flags[usize::from(c[3])]
            | flags[usize::from(c[4])]
            | flags[usize::from(c[5])]
            | flags[usize::from(c[6])]
            | flags[usize::from(c[7])];
        if any != 0 {
            return c.iter().position(flagged).map(|k| at + k);
        }
        at += 8;
    }
    chunks.remainder().iter().position(flagged).map(|k| at + k)
}

/// A rule list's prefilter, built once the list has proven hot.
///
/// A frontier reaches most origins a few times at most, and a small list
/// used once is cheaper to scan than to index. Until it is built,
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
    #[cfg(test)]
    fn is_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// [`RuleList::best`] of `list` (the list this prefilter is for): with
    /// the prefilter once it is built, by a scan of the rules before, which
    /// builds it when the scans have cost what the build would.
    pub fn best<P: AsRef<[u8]>, E: AsRef<[u32]>>(&self, list: &RuleList<P, E>, path: &[u8], floor: u32) -> u32 {
        use std::sync::atomic::Ordering;
        if let Some(prefilter) = self.built.get() {
            return list.best(prefilter, path, floor);
        }
        let (best, checked) = list.best_by_scan(path, floor);
        let cost = checked as u64 * (Self::SCAN_COST_PER_RULE + path.len() as u64 * Self::SCAN_COST_PER_PATH_BYTE);
        if self.scanned.fetch_add(cost, Ordering::Relaxed) + cost >= self.build_cost {
            self.built.get_or_init(|| Prefilter::new(list));
        }
        best
    }
}

fn pattern_at<'p>(patterns: &'p [u8], ends: &[u32], i: usize) -> &'p [u8] {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &patterns[start..ends[i] as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rules: &[(&str, u32)]) -> RuleList {
        RuleList::from_rules(rules.iter().map(|(p, r)| (p.as_bytes(), *r)))
    }

    /// A list with a prefilter beside it, searched as the runtime searches.
    struct Prefiltered<'a> {
        list: RuleListRef<'a>,
        prefilter: Prefilter,
    }

    impl Prefiltered<'_> {
        fn best(&self, path: &[u8], floor: u32) -> u32 {
            self.list.best(&self.prefilter, path, floor)
        }
    }

    /// `list` with its own prefilter.
    fn prefiltered(list: &RuleList) -> Prefiltered<'_> {
        Prefiltered { list: list.as_ref(), prefilter: list.prefilter() }
    }

    /// [`RuleList::new`] of borrowed tables.
    fn tables<'a>(patterns: &'a [u8], ends: &'a [u32], ranks: &'a [u32]) -> Result<RuleListRef<'a>, RuleListError> {
        RuleList::new(patterns, ends, ranks)
    }

    #[test]
    fn best_is_the_highest_matching_rank_above_the_floor() {
        let buf = list(&[("/a*b*c", 3), ("/*x*y", 5), ("*", 1), ("/a$", 4)]);
        assert_eq!(buf.max_answer(), 5);
        let rules = prefiltered(&buf);
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
        let rules = prefiltered(&buf);
        assert_eq!(rules.best(b"/abc1", 0), 2);
        assert_eq!(rules.best(b"/abc12", 0), 3);
        assert_eq!(rules.best(b"/qabc", 0), 1);
        assert_eq!(rules.best(b"/ab", 0), 0);
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(tables(b"/a/b", &[2, 1], &[2, 1]).is_err());
        assert!(tables(b"/a/b", &[2, 5], &[2, 1]).is_err());
        assert!(tables(b"/a/b", &[2, 4], &[1, 2]).is_err());
        assert!(tables(b"/a/b", &[2, 4], &[1, 0]).is_err());
        assert!(tables(b"/a/b", &[2, 4], &[1]).is_err());
        let e = tables(b"/a/b", &[2, 5], &[2, 1]).unwrap_err();
        assert!(e.to_string().contains("pattern 1 ends at 5"), "{e}");
        let ok = tables(b"/a/b", &[2, 4], &[2, 2]).unwrap();
        assert_eq!((ok.len(), ok.pattern(0), ok.pattern(1), ok.max_answer()), (2, &b"/a"[..], &b"/b"[..], 2));
        let empty = tables(b"", &[], &[]).unwrap();
        assert_eq!(empty.best(&empty.prefilter(), b"/x", 0), 0);
    }

    #[test]
    #[should_panic(expected = "a rule of rank 0")]
    fn the_builder_refuses_a_rule_of_rank_zero() {
        RuleList::from_rules([(b"/a".as_slice(), 1), (b"/b".as_slice(), 0)]);
    }

    #[test]
    fn each_broken_table_gives_its_own_error() {
        let check = |ends: &[u32], ranks: &[u32]| tables(b"/a/b", ends, ranks).unwrap_err();
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
            let buf = RuleList::from_rules(rules.iter().map(|(p, r)| (p.as_bytes(), *r)));
            let list = prefiltered(&buf);
            let lazy = LazyPrefilter::new(0);
            for path in &paths {
                let want = list.best(path.as_bytes(), floor);
                let (scanned, _) = buf.best_by_scan(path.as_bytes(), floor);
                proptest::prop_assert_eq!(scanned, want);
                let lazily = lazy.best(&buf, path.as_bytes(), floor);
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
            let buf = RuleList::from_rules(rules.iter().map(|(p, r)| (p.as_slice(), *r)));
            let list = prefiltered(&buf);
            for path in &paths {
                let (want, _) = buf.best_by_scan(path, floor);
                proptest::prop_assert_eq!(list.best(path, floor), want, "path {:?}", String::from_utf8_lossy(path));
            }
        }
    }

    /// `prefilter` with its portable scan only (no AVX2 tables).
    fn without_vectors(prefilter: &Prefilter) -> Prefilter {
        let mut prefilter = prefilter.clone();
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = prefilter.tables.as_deref_mut() {
            t.nibbles = None;
        }
        prefilter
    }

    /// One to seven paths of up to `max_len` bytes over [`long_rule`]'s
    /// alphabet (and a byte of UTF-8).
    fn long_paths(max_len: usize) -> impl proptest::strategy::Strategy<Value = Vec<Vec<u8>>> {
        let path = proptest::collection::vec(proptest::sample::select(b"abAB/-_?=%\x01\xe1".as_slice()), 0..max_len);
        proptest::collection::vec(path, 1..8)
    }

    /// Whether each of `lists` answers every path at `floor` as the scan
    /// of every rule of `buf` does.
    fn answer_as_the_scan(
        buf: &RuleList,
        lists: &[&Prefiltered<'_>],
        paths: &[Vec<u8>],
        floor: u32,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        for path in paths {
            let (want, _) = buf.best_by_scan(path, floor);
            for list in lists {
                proptest::prop_assert_eq!(list.best(path, floor), want, "path {:?}", String::from_utf8_lossy(path));
            }
        }
        Ok(())
    }

    /// Pieces of a few bytes from a small alphabet (so that pairs and
    /// pieces recur in paths), rules of up to four pieces with or without a
    /// leading `/` or `*` and a final `$`.
    fn long_rule() -> impl proptest::strategy::Strategy<Value = (Vec<u8>, u32)> {
        use proptest::prelude::*;
        let piece = proptest::collection::vec(proptest::sample::select(b"abAB/-_?=%\x01".as_slice()), 0..6);
        (proptest::collection::vec(piece, 1..5), any::<bool>(), 1u32..8).prop_map(|(pieces, anchored, rank)| {
            let mut pattern = pieces.join(&b'*');
            if anchored {
                pattern.push(b'$');
            }
            (pattern, rank)
        })
    }

    proptest::proptest! {
        /// On paths of 33 bytes and more (the AVX2 sieve's), the prefiltered
        /// list answers as the scan of every rule does, with and without the
        /// vector tables, at every floor.
        #[test]
        fn the_vector_sieve_misses_no_matching_rule(
            rules in proptest::collection::vec(long_rule(), 0..24),
            paths in long_paths(90),
            floor in 0u32..8,
        ) {
            let buf = RuleList::from_rules(rules.iter().map(|(p, r)| (p.as_slice(), *r)));
            let list = prefiltered(&buf);
            let portable = Prefiltered { list: buf.as_ref(), prefilter: without_vectors(&list.prefilter) };
            answer_as_the_scan(&buf, &[&list, &portable], &paths, floor)?;
        }
    }

    #[test]
    fn each_rule_is_keyed_by_a_prefix_a_rare_pair_a_byte_or_nothing() {
        let pair = |pattern: &[u8]| match rule_key(pattern) {
            RuleKey::Pair { piece, offset } => Some(piece[offset..offset + 2].to_vec()),
            _ => None,
        };
        // The rarest first byte, wherever it is (an upper-case letter, the
        // rarer second byte breaking ties: `r` before `e`), then `+`.
        assert_eq!(pair(b"/*/GetProductList*").as_deref(), Some(&b"Pr"[..]));
        assert_eq!(pair(b"/*rue+du+commerce*").as_deref(), Some(&b"+d"[..]));
        // A long prefix is taken; a short one only without a floating pair.
        assert!(matches!(rule_key(b"/mpv-*?x*"), RuleKey::Prefix(b"/mpv-")));
        assert_eq!(pair(b"/c/*price_bucket=*").as_deref(), Some(&b"_b"[..]));
        assert!(matches!(rule_key(b"/c/*x*"), RuleKey::Prefix(b"/c/")));
        assert!(matches!(rule_key(b"*/*?*$"), RuleKey::Byte(b'?')));
        assert!(matches!(rule_key(b"**$"), RuleKey::Always));
        let buf = list(&[("/c/*price_bucket=*", 3), ("/mpv-*?x*", 2), ("*/*?*$", 1)]);
        let rules = prefiltered(&buf);
        assert_eq!(rules.best(b"/c/shoes?price_bucket=2", 0), 3);
        assert_eq!(rules.best(b"/c/shoes?price_bucket", 0), 1);
        assert_eq!(rules.best(b"/mpv-12?x=1", 0), 2);
        assert_eq!(rules.best(b"/mpv-12?a=x", 0), 1);
        assert_eq!(rules.best(b"/mpv-12/x", 0), 0);
        let long = b"/c/some/long/path/of/more/than/thirty-three/bytes?price_bucket=1";
        assert_eq!(rules.best(long, 0), 3);
        assert_eq!(rules.best(&long[..long.len() - 3], 0), 1);
        // A one-byte piece as the last byte of a long path (which starts no pair).
        let last = [b"/".as_slice(), &[b'a'; 40], b"?"].concat();
        assert_eq!(rules.best(&last, 0), 1);
        assert_eq!(rules.best(&last[..last.len() - 1], 0), 0);
    }

    /// The number of piece entries (prefixes and pairs) of a prefilter.
    fn piece_entries(prefilter: &Prefilter) -> usize {
        prefilter.tables.as_deref().map_or(0, |t| t.piece_ends.len())
    }

    #[test]
    fn equal_pieces_get_one_entry_and_colliding_hashes_keep_pieces_apart() {
        // `abc` and `bcd` are both keyed by their pair `bc` (at offsets 1 and 0).
        let buf = list(&[("/*abc*1", 6), ("/*bcd*2", 5), ("/*abc*3", 4), ("/mobile/*a", 2), ("/mobile/*b", 1)]);
        let hashed = buf.prefilter();
        // `abc` once, `bcd`, `/mobile/` once.
        assert_eq!(piece_entries(&hashed), 3);
        // Under one hash for all, the rules of `bc` are sorted by rule only:
        // `abc`, `bcd`, `abc` again, an entry each.
        let colliding = Prefilter::build(buf.patterns(), buf.ends(), |_, _| 0);
        assert_eq!(piece_entries(&colliding), 4);
        for prefilter in [hashed, colliding] {
            let rules = Prefiltered { list: buf.as_ref(), prefilter };
            assert_eq!(rules.best(b"/abc3/abc1", 0), 6);
            assert_eq!(rules.best(b"/abc3", 0), 4);
            assert_eq!(rules.best(b"/bcd2", 0), 5);
            assert_eq!(rules.best(b"/bcd2/abc3", 0), 5);
            assert_eq!(rules.best(b"/bcd2/abc3", 5), 0);
            assert_eq!(rules.best(b"/mobile/b", 0), 1);
            assert_eq!(rules.best(b"/mobile/ab", 0), 2);
            assert_eq!(rules.best(b"/mobile/", 0), 0);
        }
    }

    proptest::proptest! {
        /// A prefilter whose pieces all hash alike (so that the build's
        /// sort leaves different pieces of one key interleaved) answers as
        /// the scan of every rule does, as the one with the real hash does.
        #[test]
        fn colliding_piece_hashes_miss_no_matching_rule(
            rules in proptest::collection::vec(long_rule(), 0..24),
            paths in long_paths(60),
            floor in 0u32..8,
        ) {
            let buf = RuleList::from_rules(rules.iter().map(|(p, r)| (p.as_slice(), *r)));
            let colliding = Prefilter::build(buf.patterns(), buf.ends(), |_, _| 0);
            let list = Prefiltered { list: buf.as_ref(), prefilter: colliding };
            let hashed = prefiltered(&buf);
            answer_as_the_scan(&buf, &[&list, &hashed], &paths, floor)?;
        }
    }

    proptest::proptest! {
        /// A rule's pair is the first of the `min_by_key` over every pair of
        /// every floating piece by (first byte's commonness, second's,
        /// longest piece), the definition `rarest_pair`'s single pass keeps.
        #[test]
        fn the_rarest_pair_is_the_first_minimum_over_every_pair(
            floating in proptest::collection::vec(proptest::sample::select(b"abeEz/*-?%\x01\xe1".as_slice()), 0..40),
        ) {
            let want = floating
                .split(|&b| b == b'*')
                .flat_map(|piece| (0..piece.len().saturating_sub(1)).map(move |offset| (piece, offset)))
                .min_by_key(|&(piece, offset)| {
                    (byte_commonness(piece[offset]), byte_commonness(piece[offset + 1]), std::cmp::Reverse(piece.len()))
                });
            let got = rarest_pair(&floating);
            proptest::prop_assert_eq!(got.map(|(p, o)| (p.as_ptr(), p.len(), o)), want.map(|(p, o)| (p.as_ptr(), p.len(), o)));
        }
    }

    #[test]
    fn colliding_pairs_are_told_apart() {
        assert_eq!(pair_slot(b'a', b'a'), pair_slot(b'c', b'!'));
        let buf = list(&[("/*aa*x", 2), ("/*c!*y", 1)]);
        let rules = prefiltered(&buf);
        assert_eq!(rules.best(b"/c!x", 0), 0);
        assert_eq!(rules.best(b"/c!y", 0), 1);
        assert_eq!(rules.best(b"/aay/c!", 0), 0);
        assert_eq!(rules.best(b"/aax/c!y", 0), 2);
    }

    #[test]
    fn the_lazy_prefilter_is_built_once_the_scans_cost_what_the_build_would() {
        let rules: Vec<String> = (0..50).map(|i| format!("/*x{i}*y")).collect();
        let buf = RuleList::from_rules(rules.iter().map(|p| (p.as_bytes(), 1)));
        let lazy = LazyPrefilter::new(buf.patterns().len());
        let path = b"/no";
        // Each use scans all 50 rules; the build is bought once they cost what it would.
        let scan =
            50 * (LazyPrefilter::SCAN_COST_PER_RULE + path.len() as u64 * LazyPrefilter::SCAN_COST_PER_PATH_BYTE);
        let build = 4096 + buf.patterns().len() as u64 * LazyPrefilter::BUILD_COST_PER_BYTE;
        let expected = build.div_ceil(scan);
        assert!(expected > 1, "a list this small would be built on first use");
        let mut uses = 0;
        while !lazy.is_built() {
            assert_eq!(lazy.best(&buf, path, 0), 0);
            uses += 1;
            assert!(uses < 1000, "never built");
        }
        assert_eq!(uses, expected);
        assert_eq!(lazy.best(&buf, b"/ax7zy", 0), 1);
    }
}
