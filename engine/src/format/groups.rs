//! Group blobs: the head, the part records and their tables, encoded
//! from a compiled group and viewed in place, checked on first use.

use super::{align8, checksum, ne32, ne64, put32, put64, GroupDamage, GroupTable, PartProblem, NO_RULE};
use crate::comb::{Accel, CombDfa, CombDfaRef, NarrowComb, SlotId};
use crate::compiled::{Matcher, Part, Stored};
use crate::dfa::{Dfa, DfaRef, StateId};
use crate::rules::RuleList;

/// The head of a group blob.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupHead {
    /// `checksum` of the blob's bytes after this field.
    pub checksum: u64,
    /// Length of the whole blob (a multiple of 8).
    pub len: u64,
    /// Number of ranks including rank 0 (entries of the labels and rules tables).
    pub ranks: u32,
    /// Number of parts (their records follow the head).
    pub parts: u32,
    /// Number of explanation entries (the group's rules; 0 when not explained).
    pub explain_count: u32,
    /// Offset in the blob of `ranks` u32 labels (`labels[rank]`).
    pub labels_off: u32,
    /// Offset of `ranks` u32 rule indexes into the explanation (`NO_RULE` when none).
    pub rules_off: u32,
    /// Offset of `explain_count` `ExplainEntry`s.
    pub explain_off: u32,
}

impl GroupHead {
    /// Encoded size.
    pub const LEN: usize = 40;
    /// At most this many parts in a group.
    pub const MAX_PARTS: u32 = 8;

    /// Encodes the head.
    pub fn encode(&self, b: &mut [u8]) {
        put64(b, 0, self.checksum);
        put64(b, 8, self.len);
        put32(b, 16, self.ranks);
        put32(b, 20, self.parts);
        put32(b, 24, self.explain_count);
        put32(b, 28, self.labels_off);
        put32(b, 32, self.rules_off);
        put32(b, 36, self.explain_off);
    }

    /// Decodes a head from at least [`GroupHead::LEN`] bytes (one length
    /// check, then fixed offsets: every lookup of a group decodes its head).
    #[inline]
    pub fn decode(b: &[u8]) -> GroupHead {
        let b = &b[..GroupHead::LEN];
        GroupHead {
            checksum: ne64(b, 0),
            len: ne64(b, 8),
            ranks: ne32(b, 16),
            parts: ne32(b, 20),
            explain_count: ne32(b, 24),
            labels_off: ne32(b, 28),
            rules_off: ne32(b, 32),
            explain_off: ne32(b, 36),
        }
    }
}

/// The checksums a group blob carries, in the order it stores them: what
/// the header's content digest ([`super::ContentDigest`]) hashes for the
/// blob, so that a blob whose checksums change changes the digest. Today one,
/// the head's; nothing for bytes too short to hold a head.
pub(crate) fn group_checksums(blob: &[u8]) -> impl Iterator<Item = u64> {
    (blob.len() >= GroupHead::LEN).then(|| GroupHead::decode(blob).checksum).into_iter()
}

/// Part kind: a DFA with u16 transitions.
pub const PART_DFA16: u32 = 1;
/// Part kind: a DFA with u32 transitions.
pub const PART_DFA32: u32 = 2;
/// Part kind: a per-rule list (patterns, ends, ranks).
pub const PART_RULES: u32 = 3;
/// Part kind: a DFA with a row-displaced ("comb") transition table.
pub const PART_COMB: u32 = 4;
/// Part kind: a comb with 16-bit state ids in its slots and the answers in
/// its rows (fewer than 65,536 states and answers).
pub const PART_COMB16: u32 = 5;

/// One part of a group, after the group's head (blob-relative offsets).
///
/// A DFA part is stored dense ([`PART_DFA16`], [`PART_DFA32`]: premultiplied
/// transitions, `count << stride2` of them) or row-displaced ([`PART_COMB`],
/// see [`CombDfa`](crate::CombDfa): `count` rows `[default, base]` of u32, then `slots`
/// slots `[owner, target]`, contiguous behind `b`; in a [`PART_COMB16`] part
/// the slots are u16 pairs and each row is `[default | answer << 16, base]`,
/// with no answers table at `c`; then `stride2` accelerated states), whichever
/// is smaller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartRecord {
    /// [`PART_DFA16`], [`PART_DFA32`], [`PART_RULES`], [`PART_COMB`] or [`PART_COMB16`].
    pub kind: u32,
    /// Dense DFA: log2 of the stride. Comb: the number of accelerated states. Rules: 0.
    pub stride2: u32,
    /// DFA and comb: number of states. Rules: number of rules.
    pub count: u32,
    /// DFA and comb: number of sink states.
    pub sinks: u32,
    /// Dense DFA: premultiplied start state. Comb: the start state's index.
    pub start: u32,
    /// Comb: number of slots (0 for the others).
    pub slots: u32,
    /// DFA and comb: classes (256 bytes). Rules: concatenated patterns.
    pub a: u32,
    /// Dense DFA: transitions. Comb: rows, slots, accelerations. Rules: pattern ends.
    pub b: u32,
    /// DFA and comb: `count` u32 answers (none in [`PART_COMB16`]). Rules: ranks.
    pub c: u32,
}

impl PartRecord {
    /// Encoded size.
    pub const LEN: usize = 40;

    /// Encodes the record.
    pub fn encode(&self, b: &mut [u8]) {
        for (i, v) in [self.kind, self.stride2, self.count, self.sinks, self.start, self.slots, self.a, self.b, self.c]
            .into_iter()
            .enumerate()
        {
            put32(b, 4 * i, v);
        }
        put32(b, 36, 0);
    }

    /// Decodes a record from at least [`PartRecord::LEN`] bytes (one length
    /// check, then fixed offsets: every lookup reads its group's records).
    #[inline]
    pub fn decode(b: &[u8]) -> PartRecord {
        let b = &b[..PartRecord::LEN];
        PartRecord {
            kind: ne32(b, 0),
            stride2: ne32(b, 4),
            count: ne32(b, 8),
            sinks: ne32(b, 12),
            start: ne32(b, 16),
            slots: ne32(b, 20),
            a: ne32(b, 24),
            b: ne32(b, 28),
            c: ne32(b, 32),
        }
    }
}

/// One rule of a group's explanation table (16 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExplainEntry {
    /// The robots.txt line the rule came from.
    pub line: u32,
    /// Bit 0: allow; bit 1: the directory rule derived from an `index.htm` allow.
    pub flags: u32,
    /// Blob offset of the pattern text.
    pub text_off: u32,
    /// Length of the pattern text.
    pub text_len: u32,
}

impl ExplainEntry {
    /// Encoded size.
    pub const LEN: usize = 16;

    /// Encodes the entry.
    pub fn encode(&self, b: &mut [u8]) {
        put32(b, 0, self.line);
        put32(b, 4, self.flags);
        put32(b, 8, self.text_off);
        put32(b, 12, self.text_len);
    }

    /// Decodes an entry.
    pub fn decode(b: &[u8]) -> ExplainEntry {
        ExplainEntry { line: ne32(b, 0), flags: ne32(b, 4), text_off: ne32(b, 8), text_len: ne32(b, 12) }
    }
}

/// A rule to store in a group's explanation table.
#[derive(Clone, Copy, Debug)]
pub struct RuleText<'a> {
    /// Its robots.txt line.
    pub line: u32,
    /// Allow or disallow.
    pub allow: bool,
    /// Google's directory rule derived from an `index.htm` allow.
    pub index_directory: bool,
    /// The escaped pattern.
    pub pattern: &'a [u8],
}

/// Why a group or a preference set could not be encoded.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// A group has no parts or more than `GroupHead::MAX_PARTS`.
    PartCount {
        /// The number of parts it has.
        parts: usize,
    },
    /// A group's tables pass 4 GiB, past what a blob offset can address.
    GroupTooLarge,
    /// The preference text passes 4 GiB, past what a record offset can address.
    PreferenceTextTooLarge,
    /// The sitemap and crawl-delay text passes 4 GiB, past what a record offset can address.
    CrawlTextTooLarge,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::PartCount { parts } => write!(f, "a group of {parts} parts"),
            EncodeError::GroupTooLarge => f.write_str("a group's tables exceed 4 GiB"),
            EncodeError::PreferenceTextTooLarge => f.write_str("preference text past 4 GiB"),
            EncodeError::CrawlTextTooLarge => f.write_str("sitemap and crawl-delay text past 4 GiB"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// A group blob under construction: 8-byte aligned arrays at blob offsets.
struct BlobTables {
    data: Vec<u8>,
}

impl BlobTables {
    fn bytes(&mut self, bytes: &[u8]) -> Result<u32, EncodeError> {
        self.data.resize(align8(self.data.len()), 0);
        let off = u32::try_from(self.data.len()).map_err(|_| EncodeError::GroupTooLarge)?;
        self.data.extend_from_slice(bytes);
        Ok(off)
    }

    fn u32s(&mut self, values: &[u32]) -> Result<u32, EncodeError> {
        self.bytes(bytemuck::cast_slice(values))
    }
}

/// Encodes a compiled group as a self-contained blob (see the module
/// documentation). Each automaton part is stored as a comb when that is
/// smaller than its dense table. With `explain`, the rank-to-rule table and
/// `rules` are stored; without, every rank names `NO_RULE`.
pub fn encode_group(matcher: &Matcher, explain: bool, rules: &[RuleText<'_>]) -> Result<Vec<u8>, EncodeError> {
    let parts = matcher.parts().len();
    if parts == 0 || parts > GroupHead::MAX_PARTS as usize {
        return Err(EncodeError::PartCount { parts });
    }
    let records_end = GroupHead::LEN + parts * PartRecord::LEN;
    let mut t = BlobTables { data: vec![0; records_end] };
    let mut head = GroupHead {
        ranks: matcher.labels().len() as u32,
        parts: parts as u32,
        labels_off: t.u32s(matcher.labels())?,
        ..GroupHead::default()
    };
    let rule_ids = if explain { matcher.rules().to_vec() } else { vec![NO_RULE; matcher.rules().len()] };
    head.rules_off = t.u32s(&rule_ids)?;
    let mut records = Vec::with_capacity(parts);
    for part in matcher.parts() {
        records.push(match part {
            Part::Dfa(dfa) => match smaller_comb(dfa) {
                Some((comb, narrow)) => encode_comb(&mut t, dfa, &comb, narrow)?,
                None => {
                    let a = t.bytes(dfa.classes())?;
                    let (kind, b) = if dfa.fits_u16() {
                        let narrow: Vec<u16> = dfa.transitions().iter().map(|&t| t as u16).collect();
                        (PART_DFA16, t.bytes(bytemuck::cast_slice(&narrow))?)
                    } else {
                        (PART_DFA32, t.u32s(dfa.transitions())?)
                    };
                    let c = t.u32s(dfa.answers())?;
                    let (stride2, count, sinks, start) =
                        (dfa.stride2(), dfa.states() as u32, dfa.sinks() as u32, dfa.start());
                    PartRecord { kind, stride2, count, sinks, start, slots: 0, a, b, c }
                }
            },
            Part::Rules(list) => PartRecord {
                kind: PART_RULES,
                count: list.len() as u32,
                a: t.bytes(list.patterns())?,
                b: t.u32s(list.ends())?,
                c: t.u32s(list.ranks())?,
                ..PartRecord::default()
            },
            Part::Dfa16(never) | Part::Comb(never) | Part::Comb16(never) => match *never {},
        });
    }
    if explain && !rules.is_empty() {
        let mut entries = Vec::with_capacity(rules.len());
        for rule in rules {
            let text_off = t.bytes(rule.pattern)?;
            let flags = u32::from(rule.allow) | u32::from(rule.index_directory) << 1;
            entries.push(ExplainEntry { line: rule.line, flags, text_off, text_len: rule.pattern.len() as u32 });
        }
        let mut bytes = vec![0u8; entries.len() * ExplainEntry::LEN];
        for (entry, b) in entries.iter().zip(bytes.chunks_exact_mut(ExplainEntry::LEN)) {
            entry.encode(b);
        }
        head.explain_off = t.bytes(&bytes)?;
        head.explain_count = rules.len() as u32;
    }
    let mut blob = t.data;
    blob.resize(align8(blob.len()), 0);
    for (i, record) in records.iter().enumerate() {
        let at = GroupHead::LEN + i * PartRecord::LEN;
        record.encode(&mut blob[at..at + PartRecord::LEN]);
    }
    head.len = blob.len() as u64;
    head.encode(&mut blob[..GroupHead::LEN]);
    head.checksum = checksum(&blob[8..]);
    head.encode(&mut blob[..GroupHead::LEN]);
    Ok(blob)
}

/// The comb form of `dfa` (and its 16-bit tables when they fit) when it is
/// smaller than the dense transitions and answers. Trie-like automata from
/// long literal rules shrink many times; small or dense automata stay dense
/// and scan a little faster.
fn smaller_comb(dfa: &Dfa) -> Option<(CombDfa, Option<NarrowComb>)> {
    let dense_bytes = dfa.transitions().len() * if dfa.fits_u16() { 2 } else { 4 } + 4 * dfa.states();
    let comb = CombDfa::from_dense_within(dfa, dense_bytes)?;
    u32::try_from(comb.slots().len()).ok()?;
    if comb.stored_bytes() >= dense_bytes {
        return None;
    }
    let narrow = comb.narrow();
    Some((comb, narrow))
}

fn encode_comb(
    t: &mut BlobTables,
    dfa: &Dfa,
    comb: &CombDfa,
    narrow: Option<NarrowComb>,
) -> Result<PartRecord, EncodeError> {
    let a = t.bytes(dfa.classes())?;
    let cast = |words: &[u32]| bytemuck::cast_slice::<u32, u8>(words).to_vec();
    let accels = cast(comb.accels().as_flattened());
    let (kind, tables, answers) = match narrow {
        Some(narrow) => {
            let slots = bytemuck::cast_slice(narrow.slots()).to_vec();
            (PART_COMB16, [cast(narrow.rows().as_flattened()), slots, accels].concat(), None)
        }
        None => {
            let tables = [cast(comb.rows().as_flattened()), cast(comb.slots().as_flattened()), accels].concat();
            (PART_COMB, tables, Some(comb.answers()))
        }
    };
    let b = t.bytes(&tables)?;
    let c = match answers {
        Some(answers) => t.u32s(answers)?,
        None => 0,
    };
    Ok(PartRecord {
        kind,
        stride2: comb.accels().len() as u32,
        count: comb.states() as u32,
        sinks: comb.sinks() as u32,
        start: comb.start(),
        slots: comb.slots().len() as u32,
        a,
        b,
        c,
    })
}

/// Whether a view re-checks every transition (the first use of a group) or
/// trusts the check already made (every later lookup, where a full check per
/// URL would cost the table's size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Check every table and transition.
    Full,
    /// The group was checked before.
    Validated,
}

/// A group blob, read in place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupView<'a> {
    /// Its head.
    pub head: GroupHead,
    blob: &'a [u8],
}

/// A part of a group, read in place (the runtime wraps it, see
/// `runtime::RunnerPart`).
pub(crate) type PartView<'a> = Part<Stored<'a>>;

impl<'a> GroupView<'a> {
    /// The blob at the start of `bytes` (which may run past it); checks only
    /// that the head fits and its length is within `bytes`. See
    /// [`GroupView::check`] for everything else.
    #[inline]
    pub fn at(bytes: &'a [u8]) -> Result<GroupView<'a>, GroupDamage> {
        if bytes.len() < GroupHead::LEN {
            return Err(GroupDamage::HeadOutOfBounds);
        }
        let head = GroupHead::decode(bytes);
        let len = usize::try_from(head.len).ok().filter(|&l| l >= GroupHead::LEN && l <= bytes.len() && l % 8 == 0);
        let len = len.ok_or(GroupDamage::Length { len: head.len })?;
        Ok(GroupView { head, blob: &bytes[..len] })
    }

    /// The checksum and every table and transition of the group: after this,
    /// lookups with [`Check::Validated`] cannot read out of bounds or loop.
    pub fn check(&self, explain: bool) -> Result<(), GroupDamage> {
        let computed = checksum(&self.blob[8..]);
        if computed != self.head.checksum {
            return Err(GroupDamage::Checksum { stored: self.head.checksum, computed });
        }
        let rec = &self.head;
        if rec.ranks == 0 {
            return Err(GroupDamage::NoRanks);
        }
        let labels = self.labels().ok_or(GroupDamage::OutOfRange { table: GroupTable::Labels })?;
        let rules = self.rule_ids().ok_or(GroupDamage::OutOfRange { table: GroupTable::Rules })?;
        // Ascending: no label above the next (one fold, which vectorises).
        if labels[0] != 0 || labels.iter().zip(&labels[1..]).fold(false, |down, (a, b)| down | (a > b)) {
            return Err(GroupDamage::LabelsNotAscending);
        }
        // A rank names no rule ([`NO_RULE`], which wraps to 0) or one below
        // the count: one maximum, which vectorises, instead of a search.
        if rules.iter().map(|&r| r.wrapping_add(1)).fold(0, u32::max) > rec.explain_count {
            return Err(GroupDamage::RuleBeyondExplanations);
        }
        if rec.parts == 0 || rec.parts > GroupHead::MAX_PARTS || self.records_end() > self.blob.len() {
            return Err(GroupDamage::PartCount { parts: rec.parts });
        }
        for p in 0..rec.parts as usize {
            let mut comb_max_answer = None;
            // SAFETY: a full check takes nothing on trust.
            let part = unsafe { self.read_part(p, Check::Full, &mut comb_max_answer)? };
            let max_answer = match (part, comb_max_answer) {
                (_, Some(max)) => max,
                (PartView::Dfa(dfa), None) => dfa.max_answer(),
                (PartView::Dfa16(dfa), None) => dfa.max_answer(),
                (PartView::Comb(comb), None) => comb.max_answer(),
                (PartView::Comb16(comb), None) => comb.max_answer(),
                // Checked by `read_part`, highest rank first.
                (PartView::Rules(list), None) => list.max_answer(),
            };
            if max_answer >= rec.ranks {
                return Err(GroupDamage::AnswerBeyondRanks { part: p });
            }
        }
        if rec.explain_count > 0 {
            if !explain {
                return Err(GroupDamage::UnexpectedExplanations);
            }
            for i in 0..rec.explain_count as usize {
                let entry =
                    self.explain_entry(i).ok_or(GroupDamage::OutOfRange { table: GroupTable::ExplanationTable })?;
                self.bytes_at(entry.text_off, entry.text_len as usize)
                    .ok_or(GroupDamage::OutOfRange { table: GroupTable::ExplanationText })?;
            }
        }
        Ok(())
    }

    fn records_end(&self) -> usize {
        GroupHead::LEN + self.head.parts as usize * PartRecord::LEN
    }

    /// The blob's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.blob
    }

    /// `labels[rank]`.
    pub fn labels(&self) -> Option<&'a [u32]> {
        self.table(self.head.labels_off, self.head.ranks as usize)
    }

    /// `rules[rank]`: the explanation entry of a rank, or [`NO_RULE`].
    pub fn rule_ids(&self) -> Option<&'a [u32]> {
        self.table(self.head.rules_off, self.head.ranks as usize)
    }

    /// Explanation entry `i`.
    pub fn explain_entry(&self, i: usize) -> Option<ExplainEntry> {
        if i >= self.head.explain_count as usize {
            return None;
        }
        let at = (self.head.explain_off as usize).checked_add(i * ExplainEntry::LEN)?;
        self.blob.get(at..at.checked_add(ExplainEntry::LEN)?).map(ExplainEntry::decode)
    }

    /// `len` bytes at blob offset `off`.
    pub fn bytes_at(&self, off: u32, len: usize) -> Option<&'a [u8]> {
        let start = off as usize;
        self.blob.get(start..start.checked_add(len)?)
    }

    fn table<T: bytemuck::Pod>(&self, off: u32, count: usize) -> Option<&'a [T]> {
        let bytes = self.bytes_at(off, count.checked_mul(std::mem::size_of::<T>())?)?;
        bytemuck::try_cast_slice(bytes).ok()
    }

    /// Part `p`'s record (`p` below the head's part count, and the records
    /// within the blob: [`GroupView::check`] made sure).
    pub fn part_record(&self, p: usize) -> Option<PartRecord> {
        let at = GroupHead::LEN + p * PartRecord::LEN;
        self.blob.get(at..at + PartRecord::LEN).map(PartRecord::decode)
    }

    /// Part `p`, read in place. Every lookup reads its group's parts with
    /// [`Check::Validated`] (a constant at each call), which goes to a
    /// reading of its own without the checks' branches.
    ///
    /// # Safety
    ///
    /// With [`Check::Validated`], [`GroupView::check`] accepted this group:
    /// the walks read its automata without bounds checks.
    #[inline(always)]
    pub unsafe fn part(&self, p: usize, check: Check) -> Result<PartView<'a>, GroupDamage> {
        // SAFETY: the caller's word.
        unsafe {
            match check {
                Check::Validated => self.validated_part(p),
                Check::Full => self.read_part(p, check, &mut None),
            }
        }
    }

    /// [`GroupView::read_part`] with [`Check::Validated`], the constant
    /// folded in: the tables' bounds, no automaton check.
    ///
    /// # Safety
    ///
    /// [`GroupView::check`] accepted this group.
    #[inline(never)]
    unsafe fn validated_part(&self, p: usize) -> Result<PartView<'a>, GroupDamage> {
        // SAFETY: the caller's word.
        unsafe { self.read_part(p, Check::Validated, &mut None) }
    }

    /// Part `p`, and in `comb_max_answer` a comb's largest answer when
    /// `check` is [`Check::Full`] (found by its check's pass over the rows;
    /// an out-parameter so that the view is built where the caller wants it,
    /// not moved through a tuple).
    ///
    /// # Safety
    ///
    /// With [`Check::Validated`], [`GroupView::check`] accepted this group:
    /// the walks read its automata without bounds checks.
    #[inline(always)]
    unsafe fn read_part(
        &self,
        p: usize,
        check: Check,
        comb_max_answer: &mut Option<u32>,
    ) -> Result<PartView<'a>, GroupDamage> {
        let out_of_range = |table| GroupDamage::OutOfRange { table };
        let part = self.part_record(p).ok_or(out_of_range(GroupTable::PartRecord))?;
        let count = part.count as usize;
        match part.kind {
            // SAFETY (the four): the caller's word, passed on.
            PART_DFA16 => unsafe { self.dense(p, &part, check) }.map(PartView::Dfa16),
            PART_DFA32 => unsafe { self.dense(p, &part, check) }.map(PartView::Dfa),
            PART_COMB => unsafe { self.comb(p, &part, check, comb_max_answer) }.map(PartView::Comb),
            PART_COMB16 => unsafe { self.comb(p, &part, check, comb_max_answer) }.map(PartView::Comb16),
            PART_RULES => {
                let ends: &[u32] = self.table(part.b, count).ok_or(out_of_range(GroupTable::RuleEnds))?;
                let ranks: &[u32] = self.table(part.c, count).ok_or(out_of_range(GroupTable::RuleRanks))?;
                let len = ends.last().copied().unwrap_or(0) as usize;
                let patterns = self.bytes_at(part.a, len).ok_or(out_of_range(GroupTable::RulePatterns))?;
                match check {
                    Check::Full => RuleList::new(patterns, ends, ranks)
                        .map(PartView::Rules)
                        .map_err(|e| GroupDamage::Part { part: p, problem: PartProblem::Rules(e) }),
                    Check::Validated => Ok(PartView::Rules(RuleList::validated(patterns, ends, ranks))),
                }
            }
            kind => Err(GroupDamage::UnknownPartKind { part: p, kind }),
        }
    }

    fn classes(&self, off: u32) -> Result<&'a [u8; 256], GroupDamage> {
        self.bytes_at(off, 256)
            .and_then(|b| b.try_into().ok())
            .ok_or(GroupDamage::OutOfRange { table: GroupTable::ByteClasses })
    }

    /// A dense part's tables: `count` rows of `1 << stride2` ids of type `I`.
    ///
    /// # Safety
    ///
    /// With [`Check::Validated`], [`GroupView::check`] accepted this group.
    #[inline(always)]
    unsafe fn dense<I: StateId + bytemuck::Pod>(
        &self,
        p: usize,
        part: &PartRecord,
        check: Check,
    ) -> Result<DfaRef<'a, I>, GroupDamage> {
        let out_of_range = |table| GroupDamage::OutOfRange { table };
        let count = part.count as usize;
        let classes = self.classes(part.a)?;
        let entries =
            count.checked_shl(part.stride2).filter(|_| part.stride2 <= 9).ok_or(GroupDamage::BadStride { part: p })?;
        let transitions: &[I] = self.table(part.b, entries).ok_or(out_of_range(GroupTable::Transitions))?;
        let answers: &[u32] = self.table(part.c, count).ok_or(out_of_range(GroupTable::Answers))?;
        match check {
            Check::Full => Dfa::new(classes, part.stride2, transitions, answers, part.start, part.sinks)
                .map_err(|e| GroupDamage::Part { part: p, problem: PartProblem::Automaton(e) }),
            // SAFETY: the group was checked (the caller's word): `Dfa::new`
            // accepted these tables then.
            Check::Validated => {
                Ok(unsafe { Dfa::validated(classes, part.stride2, transitions, answers, part.start, part.sinks) })
            }
        }
    }

    /// A comb part's tables: `count` rows, then `slots` slots of `T` ids;
    /// with [`Check::Full`], its largest answer too (in `max_answer`).
    ///
    /// # Safety
    ///
    /// With [`Check::Validated`], [`GroupView::check`] accepted this group.
    #[inline(always)]
    unsafe fn comb<T: SlotId>(
        &self,
        p: usize,
        part: &PartRecord,
        check: Check,
        max_answer: &mut Option<u32>,
    ) -> Result<CombDfaRef<'a, T>, GroupDamage> {
        let out_of_range = |table| GroupDamage::OutOfRange { table };
        let count = part.count as usize;
        let classes = self.classes(part.a)?;
        let rows: &[[u32; 2]] = self.table(part.b, count).ok_or(out_of_range(GroupTable::CombRows))?;
        let slots_at = u32::try_from(part.b as usize + 8 * count).map_err(|_| out_of_range(GroupTable::CombSlots))?;
        let slots: &[[T; 2]] = self.table(slots_at, part.slots as usize).ok_or(out_of_range(GroupTable::CombSlots))?;
        let accels_at = u32::try_from(slots_at as usize + std::mem::size_of_val(slots))
            .map_err(|_| out_of_range(GroupTable::CombAccelerations))?;
        let accels: &[Accel] =
            self.table(accels_at, part.stride2 as usize).ok_or(out_of_range(GroupTable::CombAccelerations))?;
        // A 16-bit comb's rows carry the answers.
        let answers: &[u32] =
            if T::ANSWER_IN_ROW { &[] } else { self.table(part.c, count).ok_or(out_of_range(GroupTable::Answers))? };
        let (start, sinks) = (part.start, part.sinks);
        match check {
            Check::Full => CombDfa::new_with_max_answer(classes, rows, slots, answers, accels, start, sinks)
                .map(|(comb, max)| {
                    *max_answer = Some(max);
                    comb
                })
                .map_err(|e| GroupDamage::Part { part: p, problem: PartProblem::Automaton(e) }),
            // SAFETY: the group was checked (the caller's word):
            // `CombDfa::new` accepted these tables then.
            Check::Validated => Ok(unsafe { CombDfa::validated(classes, rows, slots, answers, accels, start, sinks) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_a_group_without_parts_names_the_count() {
        let empty = Matcher::new(vec![0], vec![NO_RULE], vec![]).unwrap();
        let e = encode_group(&empty, false, &[]).unwrap_err();
        assert_eq!(e, EncodeError::PartCount { parts: 0 });
        assert_eq!(e.to_string(), "a group of 0 parts");
    }
}
