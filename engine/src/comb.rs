//! Row-displacement ("comb") compression of an automaton's transition table.
//!
//! A robots.txt group with hundreds of long, unique literal rules compiles to
//! a trie-like automaton: one state per pattern byte, and almost every
//! transition of such a state goes to one *default* target. The dense table
//! of [`crate::dfa`] pays a full row per state anyway; the comb stores only
//! the transitions that differ from their row's default (Aho, Sethi, Ullman;
//! Tarjan and Yao):
//!
//! - `rows[s] = [default, base]`: the most frequent target of state `s`, and
//!   where its row starts in the shared slots;
//! - `slots[i] = [owner, target]`: the state owning slot `i` ([`FREE_SLOT`]
//!   when none) and the target of its transition.
//!
//! The step from state `s` on class `c` is `[default, base] = rows[s];
//! [owner, target] = slots[base + c]; if owner == s { target } else { default
//! }`: O(1), no loop, two loads. Each pair shares its 8 bytes so that a step
//! touches two cache lines, not four: on a frontier the tables are mostly
//! cold, and lines fetched are what a step costs. The rows are overlaid by
//! first-fit packing, so the slots are little more than the non-default
//! transitions.
//!
//! A state that loops on all bytes but one to three (the `[^?]*` of `/*?`,
//! waiting for the `?`) is *accelerated*: its row's base carries [`ACCEL`],
//! and `accels` lists it with those escape bytes, so that a walk skips to the
//! next escape byte with one vector search (`escape_at`) instead of a step
//! per byte. On a real
//! frontier 38% of the steps stayed in the state they left.
//!
//! In automata of fewer than 65,536 states whose answers fit 16 bits (all
//! but none of a real corpus), slots hold 16-bit ids and a row keeps its
//! state's answer beside the default: `rows[s] = [default | answer << 16,
//! base]`, and there is no answers table ([`SlotId`]).
//!
//! State ids here are plain indices (not premultiplied); otherwise a
//! [`CombDfa`] answers exactly as the [`crate::dfa::Dfa`] it was made from:
//! states `0..sinks` are sinks and the scan stops at the first one.
//!
//! As the dense automaton, one type serves every form, generic over where
//! its tables live: the writer's owned comb, a [`CombDfa`] of `Vec`s (with
//! 32-bit slots, or 16-bit ones from [`CombDfa::narrow`]), and a view of an
//! artifact's tables read in place, a [`CombDfaRef`] of borrowed slices.
//! All are checked by the same [`CombDfa::new`] and scan through the same
//! code.

use crate::dfa::{Dfa, DfaError};
use crate::walk::{self, Automaton, LastSkip, Located, SkipMemo};
use std::borrow::Borrow;
use std::fmt;

/// Marks a free slot: the owner of a slot no state uses.
pub const FREE_SLOT: u32 = u32::MAX;

/// The bit of a row's base that marks an accelerated state (see the module
/// documentation); bases are below it.
pub const ACCEL: u32 = 1 << 31;

/// An accelerated state and its escape bytes: `[state, bytes]`, the bytes
/// packed as `b0 | b1 << 8 | b2 << 16 | count << 24`, count 1 to 3.
pub type Accel = [u32; 2];

/// The escape bytes of a packed [`Accel`] entry.
fn escape_bytes(packed: u32) -> ([u8; 3], usize) {
    let [b0, b1, b2, count] = packed.to_le_bytes();
    ([b0, b1, b2], usize::from(count))
}

/// A state id as a slot stores it: `u32`, or `u16` in automata of fewer than
/// 65,536 states, which halves the slots: the bulk of the tables, and of the
/// cache lines a frontier pulls in.
pub trait SlotId: bytemuck::Pod + Eq + Into<u32> + fmt::Debug {
    /// The owner of a free slot; no state has this id.
    const FREE: Self;
    /// Whether each row carries its state's answer (`rows[s][0] = default |
    /// answer << 16`) instead of an answers table: 4 bytes less per state,
    /// and a walk's last lookup finds the answer in the row it has fetched.
    const ANSWER_IN_ROW: bool;

    /// Whether every slot's target is a state and every owner a state or
    /// free, in an automaton of `states` states (at most [`SlotId::FREE`]).
    /// A group's first use checks every slot: one pass, without branches.
    fn slots_fit(slots: &[[Self; 2]], states: usize) -> bool {
        let free: u32 = Self::FREE.into();
        let (owners, targets) = slots.iter().fold((0u32, 0u32), |(owners, targets), &[owner, target]| {
            let (owner, target): (u32, u32) = (owner.into(), target.into());
            // A free owner counts as 0, any other as its id plus one.
            (owners.max(if owner == free { 0 } else { owner + 1 }), targets.max(target))
        });
        owners as usize <= states && (targets as usize) < states
    }

    /// How many classes of `row_slots` (the slots of `state`'s row for
    /// classes `0..=max_class`; `default` its default) lead out of
    /// `state`. An accelerated state's first-use check counts them and
    /// compares the count with how many of its escape-only classes leave
    /// (at most three, asked one by one): equal exactly when it leaves on
    /// no other class.
    fn leaving_count(row_slots: &[[Self; 2]], state: u32, default: u32) -> usize {
        leaving_count_plain(row_slots, state, default)
    }
}

/// [`SlotId::leaving_count`] one slot at a time: the definition the vector
/// form is tested against, and its tail.
fn leaving_count_plain<T: SlotId>(row_slots: &[[T; 2]], state: u32, default: u32) -> usize {
    row_slots
        .iter()
        .filter(|&&[owner, target]| (if owner.into() == state { target.into() } else { default }) != state)
        .count()
}

impl SlotId for u32 {
    const FREE: u32 = FREE_SLOT;
    const ANSWER_IN_ROW: bool = false;
}

impl SlotId for u16 {
    const FREE: u16 = u16::MAX;
    const ANSWER_IN_ROW: bool = true;

    /// Sixteen ids at a time with AVX2 where the CPU has it, then eight with
    /// SSE2: an owner plus one (a free owner wraps
    /// to 0) may be at most `states`, a target at most `states - 1`, which
    /// a saturating subtraction of the bound leaves at 0.
    #[cfg(target_arch = "x86_64")]
    fn slots_fit(slots: &[[u16; 2]], states: usize) -> bool {
        use std::arch::x86_64::*;
        debug_assert!((1..=usize::from(u16::MAX)).contains(&states));
        let Ok(states) = u16::try_from(states) else { return false };
        let (owner_max, target_max) = (states as i16, (states - 1) as i16);
        let ids: &[u16] = bytemuck::cast_slice(slots);
        let (wide_bad, ids) = if robotsieve_core::arch::Avx2::available() {
            // SAFETY: the CPU has AVX2 (detected above, once per process).
            unsafe { slot_ids_over_avx2(ids, owner_max, target_max) }
        } else {
            (false, ids)
        };
        let mut blocks = ids.chunks_exact(8);
        // SAFETY: SSE2 is part of the x86_64 baseline; each load reads the
        // 8 ids (16 bytes) of its block, unaligned.
        let bad = unsafe {
            // Lanes alternate owner, target (as the pairs lie in memory).
            let plus = _mm_set_epi16(0, 1, 0, 1, 0, 1, 0, 1);
            let bound = _mm_set_epi16(
                target_max, owner_max, target_max, owner_max, target_max, owner_max, target_max, owner_max,
            );
            let mut bad = _mm_setzero_si128();
            for block in &mut blocks {
                let v = _mm_loadu_si128(block.as_ptr().cast());
                bad = _mm_or_si128(bad, _mm_subs_epu16(_mm_add_epi16(v, plus), bound));
            }
            _mm_movemask_epi8(_mm_cmpeq_epi8(bad, _mm_setzero_si128())) != 0xFFFF
        };
        let rest: &[[u16; 2]] = bytemuck::cast_slice(blocks.remainder());
        !wide_bad
            && !bad
            && rest.iter().all(|&[owner, target]| (owner == u16::MAX || owner < states) && target < states)
    }

    /// Eight slots at a time with AVX2 where the CPU has it, four with
    /// SSE2, the rest one by one: a 16-bit compare of each id with `state`
    /// gives a slot's 32-bit lane one of four values (its owner is the
    /// state: the low half set; its target is: the high half), and one
    /// 32-bit compare with the pattern of the case that matters counts it.
    /// When the default is the state, a slot leaves exactly when the state
    /// owns it and its target is another state (pattern `0x0000_FFFF`);
    /// otherwise every slot leaves but those the state owns and that loop
    /// (pattern all ones, counted and taken from the row's length). No
    /// branch a block: the count is compared once, at the end.
    #[cfg(target_arch = "x86_64")]
    fn leaving_count(row_slots: &[[u16; 2]], state: u32, default: u32) -> usize {
        use std::arch::x86_64::*;
        let others_keep = default == state;
        let pattern = if others_keep { 0x0000_FFFF } else { -1 };
        let ids: &[u16] = bytemuck::cast_slice(row_slots);
        let (wide, done) = if robotsieve_core::arch::Avx2::available() {
            // SAFETY: the CPU has AVX2 (detected above, once per process).
            unsafe { pattern_count_avx2(ids, state as u16, pattern) }
        } else {
            (0, 0)
        };
        let mut blocks = ids[2 * done..].chunks_exact(8);
        // SAFETY: SSE2 is part of the x86_64 baseline; each load reads the
        // block's 8 ids (4 slots, 16 bytes), unaligned.
        let narrow = unsafe {
            let (state, pattern) = (_mm_set1_epi16(state as i16), _mm_set1_epi32(pattern));
            let mut counts = _mm_setzero_si128();
            for block in &mut blocks {
                let equal = _mm_cmpeq_epi16(_mm_loadu_si128(block.as_ptr().cast()), state);
                counts = _mm_sub_epi32(counts, _mm_cmpeq_epi32(equal, pattern));
            }
            let mut lanes = [0u32; 4];
            _mm_storeu_si128(lanes.as_mut_ptr().cast(), counts);
            lanes.iter().sum::<u32>() as usize
        };
        let vector = row_slots.len() - blocks.remainder().len() / 2;
        let counted = wide + narrow;
        let leaving = if others_keep { counted } else { vector - counted };
        leaving + leaving_count_plain(&row_slots[vector..], state, default)
    }
}

/// [`SlotId::leaving_count`]'s pass for 16-bit slots (`ids`, owner and
/// target alternating), eight slots (32 bytes) a step with AVX2, where the
/// CPU has it: how many slots' 32-bit lanes, each id compared with `state`
/// (16-bit lanes: all ones where equal), equal `pattern`, and how many
/// slots it took (the rest, fewer than eight, for the SSE2 pass).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn pattern_count_avx2(ids: &[u16], state: u16, pattern: i32) -> (usize, usize) {
    use std::arch::x86_64::*;
    let (state, pattern) = (_mm256_set1_epi16(state as i16), _mm256_set1_epi32(pattern));
    let mut blocks = ids.chunks_exact(16);
    let mut counts = _mm256_setzero_si256();
    for block in &mut blocks {
        // SAFETY: the load reads the block's 16 ids (8 slots, 32 bytes), unaligned.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        counts = _mm256_sub_epi32(counts, _mm256_cmpeq_epi32(_mm256_cmpeq_epi16(v, state), pattern));
    }
    let half = _mm_add_epi32(_mm256_castsi256_si128(counts), _mm256_extracti128_si256(counts, 1));
    let pair = _mm_add_epi32(half, _mm_unpackhi_epi64(half, half));
    let count = _mm_cvtsi128_si32(_mm_add_epi32(pair, _mm_shuffle_epi32(pair, 1))) as u32;
    (count as usize, (ids.len() - blocks.remainder().len()) / 2)
}

/// [`SlotId::slots_fit`]'s pass for 16-bit ids, 16 ids (32 bytes) a step
/// with AVX2, where the CPU has it: whether some owner plus one is over
/// `owner_max` or some target over `target_max`, and the ids left over
/// (fewer than 16, an even number) for the SSE2 pass.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn slot_ids_over_avx2(ids: &[u16], owner_max: i16, target_max: i16) -> (bool, &[u16]) {
    use std::arch::x86_64::*;
    let mut blocks = ids.chunks_exact(16);
    let (o, t) = (owner_max, target_max);
    // Lanes alternate owner, target (as the pairs lie in memory).
    let plus = _mm256_setr_epi16(1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
    let bound = _mm256_setr_epi16(o, t, o, t, o, t, o, t, o, t, o, t, o, t, o, t);
    // The lanes' maxima, compared with the bounds once at the end: one
    // operation a step fewer than comparing each block.
    let mut max = _mm256_setzero_si256();
    for block in &mut blocks {
        // SAFETY: the load reads the block's 16 ids (32 bytes), unaligned.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        max = _mm256_max_epu16(max, _mm256_add_epi16(v, plus));
    }
    let bad = _mm256_subs_epu16(max, bound);
    let bad = _mm256_movemask_epi8(_mm256_cmpeq_epi8(bad, _mm256_setzero_si256())) != -1;
    (bad, blocks.remainder())
}

/// [`rows_fit`]'s pass, four rows (32 bytes) a step with AVX2, where the CPU
/// has it: whether some id masked by `mask` (default, base) is over its
/// `limit`, the top bits counted (default lanes, base lanes), the largest
/// `row[0] & answer_mask`, and the rows left over (fewer than four) for the
/// SSE2 pass. `answer_mask` keeps top bits only (`!default_mask`: the
/// answer above a 16-bit default, or nothing), so the largest masked
/// `row[0]` is the largest `row[0]` masked: the loop takes plain maxima
/// (one AND a step fewer) and masks once at the end.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_over_avx2(
    rows: &[[u32; 2]],
    mask: [i32; 2],
    limit: [i32; 2],
    answer_mask: u32,
) -> (bool, [u32; 2], u32, &[[u32; 2]]) {
    use std::arch::x86_64::*;
    let mut blocks = rows.chunks_exact(4);
    debug_assert_eq!(answer_mask.leading_ones(), answer_mask.count_ones(), "top bits only");
    let ([md, mb], [ld, lb]) = (mask, limit);
    // Lanes alternate default, base (as the rows lie in memory).
    let mask = _mm256_setr_epi32(md, mb, md, mb, md, mb, md, mb);
    let limit = _mm256_setr_epi32(ld, lb, ld, lb, ld, lb, ld, lb);
    let (mut bad, mut tops, mut answers) = (_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256());
    for block in &mut blocks {
        // SAFETY: the load reads the block's four rows (32 bytes), unaligned.
        let raw = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        bad = _mm256_or_si256(bad, _mm256_cmpgt_epi32(_mm256_and_si256(raw, mask), limit));
        tops = _mm256_add_epi32(tops, _mm256_srli_epi32(raw, 31));
        answers = _mm256_max_epu32(answers, raw);
    }
    let (mut lanes, mut answer_lanes) = ([0u32; 8], [0u32; 8]);
    // SAFETY: each store writes the 8 lanes (32 bytes) of its array.
    unsafe {
        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), tops);
        _mm256_storeu_si256(answer_lanes.as_mut_ptr().cast(), answers);
    }
    // Each lane counts at most a quarter of the rows (fewer than 2^32).
    let tops = [lanes[0] + lanes[2] + lanes[4] + lanes[6], lanes[1] + lanes[3] + lanes[5] + lanes[7]];
    // The default lanes' maxima (the base lanes' are not answers).
    let answer = answer_lanes.iter().step_by(2).copied().fold(0, u32::max) & answer_mask;
    (_mm256_movemask_epi8(bad) != 0, tops, answer, blocks.remainder())
}

/// [`rows_fit`]'s pass for a 16-bit comb's rows (`[default | answer << 16,
/// base]`, as 16-bit lanes: default, answer, the base's low half, its high
/// half with [`ACCEL`] at the top), four rows (32 bytes) a step with AVX2:
/// the [`RowsPass`] of the whole blocks and the rows left over (fewer than
/// four). `limits` are the largest default and base (both below 2^16, so
/// that a base's high half must be 0 but for the mark).
///
/// One unsigned 16-bit maximum a step gives the largest default, answer
/// and low half of a base, and the largest high half. Without `MARKS`,
/// that high half must be 0 (no mark, no base past 2^16): `None` when it is
/// not, for the general pass to count the marks. With `MARKS`, a signed
/// maximum as well (a high half is 0 or [`ACCEL`]'s `0x8000` exactly when
/// its unsigned maximum is at most `0x8000` and its signed one at most 0),
/// and each lane's top bit counted (the high halves' counts are the marks).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn narrow_rows_over_avx2<const MARKS: bool>(
    rows: &[[u32; 2]],
    limits: [u16; 2],
) -> Option<(RowsPass, &[[u32; 2]])> {
    use std::arch::x86_64::*;
    let mut blocks = rows.chunks_exact(4);
    let (mut unsigned, mut signed, mut tops) = (_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256());
    for block in &mut blocks {
        // SAFETY: the load reads the block's four rows (32 bytes), unaligned.
        let raw = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        unsigned = _mm256_max_epu16(unsigned, raw);
        if MARKS {
            signed = _mm256_max_epi16(signed, raw);
            // A lane counts at most a quarter of the rows (fewer than 2^14).
            tops = _mm256_add_epi16(tops, _mm256_srli_epi16(raw, 15));
        }
    }
    let lanes = |v: __m256i| {
        let mut out = [0u16; 16];
        // SAFETY: the store writes the 16 lanes (32 bytes) of `out`.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
        out
    };
    // Lane 4r + j of a block is field j of its row r.
    let field = |v: &[u16; 16], j: usize| [v[j], v[4 + j], v[8 + j], v[12 + j]];
    let unsigned = lanes(unsigned);
    let high = field(&unsigned, 3).into_iter().fold(0, u16::max);
    let (high_fits, marked) = if MARKS {
        let signed = lanes(signed);
        let high_signed = field(&signed, 3).into_iter().map(|h| h as i16).fold(0, i16::max);
        (high <= 0x8000 && high_signed <= 0, field(&lanes(tops), 3).into_iter().map(usize::from).sum())
    } else if high != 0 {
        return None;
    } else {
        (true, 0)
    };
    let [default_limit, base_limit] = limits;
    let fit = high_fits
        && field(&unsigned, 0).into_iter().fold(0, u16::max) <= default_limit
        && field(&unsigned, 2).into_iter().fold(0, u16::max) <= base_limit;
    let answer_bits = u32::from(field(&unsigned, 1).into_iter().fold(0, u16::max)) << 16;
    Some((RowsPass { fit, marked, answer_bits }, blocks.remainder()))
}

/// Where a [`CombDfa`]'s slots live: a `Vec` or a slice of `[owner,
/// target]` pairs of [`SlotId`]s, which fixes the width a step loads.
pub trait SlotTable: AsRef<[[Self::Id; 2]]> {
    /// The width of a state id in a slot.
    type Id: SlotId;
}

impl<T: SlotId> SlotTable for Vec<[T; 2]> {
    type Id = T;
}

impl<T: SlotId> SlotTable for &[[T; 2]] {
    type Id = T;
}

/// A comb automaton (see the module documentation), generic over its
/// tables' storage: the slots `S` (a [`SlotTable`], which fixes the width of
/// their ids), the rows `R`, the answers `A`, the accelerated states `X` and
/// the byte classes `C`.
///
/// The default, all owned with 32-bit slots, is what
/// [`CombDfa::from_dense`] makes; [`CombDfa::narrow`] gives its 16-bit
/// form, a [`NarrowComb`], which is what the artifact writer stores when it
/// fits; [`CombDfaRef`] borrows, as an artifact's tables are read
/// in place. Every value was checked by [`CombDfa::new`] or made valid by
/// construction (or is a view of tables that were, [`CombDfa::validated`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CombDfa<S = Vec<[u32; 2]>, R = Vec<[u32; 2]>, A = Vec<u32>, X = Vec<Accel>, C = [u8; 256]> {
    /// Byte to class (as in the dense automaton).
    classes: C,
    /// Per state: `[default, base]`, or `[default | answer << 16, base]`
    /// with 16-bit slots (see the module documentation).
    rows: R,
    /// Per slot: the state owning it (or [`SlotId::FREE`]), and its target.
    slots: S,
    /// The answer per state, or none when the rows carry them.
    answers: A,
    /// The accelerated states (their rows' bases carry [`ACCEL`]), ascending.
    accels: X,
    /// The start state (a plain index).
    start: u32,
    /// States `0..sinks` are sinks.
    sinks: u32,
}

/// A [`CombDfa`] over borrowed tables (an artifact's, or an owned comb's
/// through [`CombDfa::as_ref`]), its slots holding state ids of type `T`:
/// what a walk runs.
pub type CombDfaRef<'a, T = u32> = CombDfa<&'a [[T; 2]], &'a [[u32; 2]], &'a [u32], &'a [Accel], &'a [u8; 256]>;

/// An owned comb of 16-bit slots whose rows carry the answers (see
/// [`SlotId`]): what [`CombDfa::narrow`] makes and the artifact stores when
/// it fits.
pub type NarrowComb = CombDfa<Vec<[u16; 2]>>;

impl<S: SlotTable, R: AsRef<[[u32; 2]]>, A: AsRef<[u32]>, X: AsRef<[Accel]>, C: Borrow<[u8; 256]>>
    CombDfa<S, R, A, X, C>
{
    /// Checks every invariant a scan relies on, so that no lookup can go out
    /// of bounds and no skip passes a byte the state does not loop on: one
    /// row and one answer per state; every row fits (`base + max class <
    /// slots`); every default and slot target is a state; every slot owner is
    /// a state or free ([`SlotId::FREE`], which must not be a state id);
    /// `start` is a state and `sinks <= states`. `answers` has one answer per
    /// state, or is empty when the rows carry them ([`SlotId::ANSWER_IN_ROW`]).
    /// The accelerated states are ascending non-sinks, exactly the rows
    /// marked `ACCEL`, with one to three escape bytes, and loop on every
    /// other byte.
    pub fn new(classes: C, rows: R, slots: S, answers: A, accels: X, start: u32, sinks: u32) -> Result<Self, DfaError> {
        Self::new_with_max_answer(classes, rows, slots, answers, accels, start, sinks).map(|(comb, _)| comb)
    }

    /// [`CombDfa::new`], and the comb's [`CombDfa::max_answer`], taken in the
    /// check's pass over the rows (a 16-bit comb's rows carry the answers):
    /// a group's first use needs both, and reading the interleaved rows a
    /// second time for the answers cost about as much as checking them.
    pub fn new_with_max_answer(
        classes: C,
        rows: R,
        slots: S,
        answers: A,
        accels: X,
        start: u32,
        sinks: u32,
    ) -> Result<(Self, u32), DfaError> {
        // SAFETY: checked at once, before anything walks it: `check` reads
        // the rows and slots with bounds checks, and steps (unchecked) only
        // after they passed.
        let comb = unsafe { Self::validated(classes, rows, slots, answers, accels, start, sinks) };
        let max_answer = comb.as_ref().check()?;
        Ok((comb, max_answer))
    }

    /// Makes a comb of tables that [`CombDfa::new`] has already accepted,
    /// without re-checking them (which costs the tables' size): for lookups in
    /// an artifact whose group was checked on its first use.
    ///
    /// # Safety
    ///
    /// [`CombDfa::new`] accepts these very tables: the walks read them
    /// without bounds checks, trusting its checks.
    #[inline]
    pub unsafe fn validated(classes: C, rows: R, slots: S, answers: A, accels: X, start: u32, sinks: u32) -> Self {
        CombDfa { classes, rows, slots, answers, accels, start, sinks }
    }

    /// This comb over borrowed tables: what a walk runs (no check, no copy).
    #[inline]
    pub fn as_ref(&self) -> CombDfaRef<'_, S::Id> {
        CombDfa {
            classes: self.classes.borrow(),
            rows: self.rows.as_ref(),
            slots: self.slots.as_ref(),
            answers: self.answers.as_ref(),
            accels: self.accels.as_ref(),
            start: self.start,
            sinks: self.sinks,
        }
    }

    /// The answer (a rank) for a whole path, exactly as [`crate::dfa::Dfa::scan`]
    /// of the dense automaton gives it.
    #[inline]
    pub fn scan(&self, path: &[u8]) -> u32 {
        walk::scan(&self.as_ref(), path)
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.rows.as_ref().len()
    }

    /// Number of sink states (states `0..sinks()`).
    pub fn sinks(&self) -> usize {
        self.sinks as usize
    }

    /// The start state (a plain index).
    pub fn start(&self) -> u32 {
        self.start
    }

    /// Byte to class.
    pub fn classes(&self) -> &[u8; 256] {
        self.classes.borrow()
    }

    /// Per state: `[default, base]`, or `[default | answer << 16, base]`
    /// with 16-bit slots.
    pub fn rows(&self) -> &[[u32; 2]] {
        self.rows.as_ref()
    }

    /// The slots the rows share: `[owner, target]` each.
    pub fn slots(&self) -> &[[S::Id; 2]] {
        self.slots.as_ref()
    }

    /// The answer per state, or none when the rows carry them
    /// ([`SlotId::ANSWER_IN_ROW`]).
    pub fn answers(&self) -> &[u32] {
        self.answers.as_ref()
    }

    /// The accelerated states and their escape bytes, ascending.
    pub fn accels(&self) -> &[Accel] {
        self.accels.as_ref()
    }

    /// The largest answer any state gives: no path scores above it.
    pub fn max_answer(&self) -> u32 {
        // Over the tables directly (checked on a group's first use: no per-state lookup).
        if S::Id::ANSWER_IN_ROW {
            self.rows().iter().map(|row| row[0] >> 16).fold(0, u32::max)
        } else {
            self.answers().iter().copied().fold(0, u32::max)
        }
    }

    /// Bytes of the tables (classes, rows, slots, answers).
    pub fn memory_bytes(&self) -> usize {
        256 + std::mem::size_of_val(self.rows())
            + std::mem::size_of_val(self.slots())
            + std::mem::size_of_val(self.answers())
    }
}

impl<T: SlotId> CombDfaRef<'_, T> {
    /// The checks of [`CombDfa::new`], in the order they are documented;
    /// the comb's largest answer when they pass.
    fn check(&self) -> Result<u32, DfaError> {
        self.shaped()?;
        let CombDfa { classes, rows, slots, accels, .. } = *self;
        let states = rows.len();
        let max_class = max_class(classes);
        // Each table is checked in one branch-free pass the compiler
        // vectorises (a group's first use checks all of them, and on a
        // frontier of cold origins that was most of the filter's
        // instructions); only when a pass finds something does the search
        // below name the first culprit.
        // Maxima are what vectorises: the largest base and default, target
        // and owner (a free slot's owner counted as 0).
        // The largest base a row may have: its last class must fall in the slots.
        // The rows' pass also counts the rows marked [`ACCEL`] and takes the
        // largest answer a row carries.
        let default_mask = if T::ANSWER_IN_ROW { 0xFFFF } else { u32::MAX };
        let pass = match (slots.len() as u64).checked_sub(u64::from(max_class) + 1) {
            Some(base_limit) => rows_fit(rows, default_mask, states as u64 - 1, base_limit, !accels.is_empty()),
            None => RowsPass { fit: false, ..rows_fit_plain(rows, default_mask, 0, 0) },
        };
        let slots_bad = !T::slots_fit(slots, states);
        if !pass.fit || slots_bad {
            Self::name_table_problem(classes, rows, slots)?;
        }
        self.check_accels(pass.marked, max_class)?;
        Ok(if T::ANSWER_IN_ROW { pass.answer_bits >> 16 } else { self.max_answer() })
    }

    /// The checks of [`CombDfa::new`] that read no row, slot or acceleration
    /// (a constant cost): at least one state and no more than the slot ids
    /// can name, one answer per state (or none, [`SlotId::ANSWER_IN_ROW`]),
    /// `start` a state, `sinks <= states`: what [`CombDfa::new`] checks
    /// before its passes over the tables.
    fn shaped(&self) -> Result<(), DfaError> {
        let CombDfa { rows, answers, start, sinks, .. } = *self;
        let states = rows.len();
        if states == 0 {
            return Err(DfaError::NoStates);
        }
        if states > T::FREE.into() as usize {
            return Err(DfaError::StatesPastSlotIds { states, id_bytes: std::mem::size_of::<T>() });
        }
        let wanted = if T::ANSWER_IN_ROW { 0 } else { states };
        if answers.len() != wanted {
            return Err(DfaError::AnswerCount { answers: answers.len(), states, wanted });
        }
        if start as usize >= states {
            return Err(DfaError::StartOutOfRange { start, states });
        }
        if sinks as usize > states {
            return Err(DfaError::TooManySinks { sinks, states });
        }
        Ok(())
    }

    /// The first problem of rows or slots that [`CombDfa::new`]'s passes
    /// found, in the order the checks are documented.
    #[cold]
    fn name_table_problem(classes: &[u8; 256], rows: &[[u32; 2]], slots: &[[T; 2]]) -> Result<(), DfaError> {
        let states = rows.len();
        let max_class = u64::from(max_class(classes));
        if let Some(s) = rows.iter().position(|&[_, base]| u64::from(base & !ACCEL) + max_class >= slots.len() as u64) {
            return Err(DfaError::RowPastSlots { state: s, base: rows[s][1] & !ACCEL, slots: slots.len() });
        }
        let is_state = |id: u32| (id as usize) < states;
        if let Some(s) = rows.iter().position(|&row| !is_state(default_of::<T>(row))) {
            return Err(DfaError::DefaultNotState { state: s, target: default_of::<T>(rows[s]) });
        }
        if let Some(i) = slots.iter().position(|&[_, target]| !is_state(target.into())) {
            return Err(DfaError::SlotTargetNotState { slot: i, target: slots[i][1].into() });
        }
        if let Some(i) = slots.iter().position(|&[owner, _]| owner != T::FREE && !is_state(owner.into())) {
            return Err(DfaError::SlotOwnerNotState { slot: i, owner: slots[i][0].into() });
        }
        Ok(())
    }

    /// The acceleration invariants of [`CombDfa::new`] (the rest holds),
    /// given the number of rows `marked` [`ACCEL`] and the largest class.
    fn check_accels(&self, marked: usize, max_class: u8) -> Result<(), DfaError> {
        if let Some(w) = self.accels.windows(2).find(|w| w[0][0] >= w[1][0]) {
            return Err(DfaError::AccelsOutOfOrder { first: w[0][0], second: w[1][0] });
        }
        if marked != self.accels.len() {
            return Err(DfaError::AccelCount { marked, listed: self.accels.len() });
        }
        if self.accels.is_empty() {
            return Ok(());
        }
        // A step depends on the byte's class only, so a state may leave only
        // on classes that consist of escape bytes alone. Per accelerated
        // state that is one pass over its row's slots (`0..=max_class`), a
        // count without a branch a block;
        // which classes consist of its escapes alone is counted once per
        // escape set (the states of a comb mostly share one: a group's first
        // use checks hundreds of these states, and no per-byte table is
        // built).
        let mut last: Option<(u32, ([u8; 3], usize))> = None;
        // Each class's byte count, once counted (0: not yet; an escape's
        // class holds at least the escape).
        let mut sizes = [0u16; 256];
        for &[state, packed] in self.accels {
            if state < self.sinks || state as usize >= self.rows.len() || self.rows[state as usize][1] & ACCEL == 0 {
                return Err(DfaError::AccelNotMarkedState { state });
            }
            let (escapes, count) = escape_bytes(packed);
            if !(1..=3).contains(&count) {
                return Err(DfaError::AccelEscapeCount { state, count });
            }
            let escapes = &escapes[..count];
            let (may_leave, leaving_classes) = match last {
                Some((seen, classes)) if seen == packed => classes,
                _ => {
                    let classes = escape_only_classes(self.classes, escapes, |class| {
                        let size = &mut sizes[usize::from(class)];
                        if *size == 0 {
                            *size = class_size(self.classes, class) as u16;
                        }
                        usize::from(*size)
                    });
                    last = Some((packed, classes));
                    classes
                }
            };
            let may_leave = &may_leave[..leaving_classes];
            let row = self.rows[state as usize];
            let (base, default) = ((row[1] & !ACCEL) as usize, default_of::<T>(row));
            // `new` checked that the row fits: `base + max_class < slots`.
            let row_slots = &self.slots[base..=base + usize::from(max_class)];
            // It leaves on no other class exactly when the classes it leaves on
            // are as many as those of `may_leave` it leaves on (distinct
            // classes, each within the row).
            let leaves = |class: u8| {
                let [owner, target] = row_slots[usize::from(class)];
                (if owner.into() == state { target.into() } else { default }) != state
            };
            let allowed = may_leave.iter().filter(|&&class| leaves(class)).count();
            if T::leaving_count(row_slots, state, default) != allowed {
                // The first byte that leaves, to name it.
                // SAFETY: `state` has a row (checked above), and the rows
                // and slots passed their checks.
                let step = |b: u8| unsafe { self.step(state, b) };
                if let Some(byte) = (0..=255u8).find(|b| !escapes.contains(b) && step(*b) != state) {
                    return Err(DfaError::AccelLeaves { state, byte });
                }
            }
        }
        Ok(())
    }
}

impl<T: SlotId> Automaton for CombDfaRef<'_, T> {
    #[inline(always)]
    fn start(&self) -> u32 {
        self.start
    }

    #[inline(always)]
    fn is_sink(&self, state: u32) -> bool {
        state < self.sinks
    }

    // The tables passed [`CombDfa::new`]'s checks (or were built valid,
    // [`CombDfa::from_dense`]): a state has a row, a row's base plus any
    // class is a slot, and every default, target and the start is a state.

    #[inline(always)]
    unsafe fn locate(&self, state: u32, byte: u8) -> Located {
        // SAFETY: `state` is a state (the caller's word), so it has a row.
        let row = unsafe { *self.rows.get_unchecked(state as usize) };
        let base = (row[1] & !ACCEL) as usize;
        Located { index: base + usize::from(self.classes[usize::from(byte)]), default: default_of::<T>(row) }
    }

    #[inline(always)]
    unsafe fn follow(&self, state: u32, at: Located) -> u32 {
        // SAFETY: `at` is `locate`'s for a state: its row's base plus a
        // class, within the slots (checked: the largest base plus the
        // largest class is below their count).
        let [owner, target] = unsafe { *self.slots.get_unchecked(at.index) };
        if owner.into() == state {
            target.into()
        } else {
            at.default
        }
    }

    #[inline(always)]
    unsafe fn answer(&self, state: u32) -> u32 {
        // SAFETY: `state` is a state: it has a row, and an answer when the
        // rows do not carry them (checked: one answer per state).
        unsafe {
            if T::ANSWER_IN_ROW {
                self.rows.get_unchecked(state as usize)[0] >> 16
            } else {
                *self.answers.get_unchecked(state as usize)
            }
        }
    }

    #[inline(always)]
    unsafe fn accelerated(&self, state: u32) -> bool {
        // SAFETY: `state` is a state, so it has a row.
        unsafe { self.rows.get_unchecked(state as usize)[1] & ACCEL != 0 }
    }

    /// Remembers the state's escapes as the search takes them: three bytes
    /// (`b0 | b1 << 8 | b2 << 16`), the first standing in for missing ones,
    /// so that a run's later skips in the state read them as they are.
    #[inline(always)]
    fn skip(&self, state: u32, path: &[u8], at: usize, memo: &SkipMemo) -> usize {
        // Checked: a skip is rare, and it is the one method a caller may
        // give any number.
        match self.rows.get(state as usize) {
            Some(row) if row[1] & ACCEL != 0 => {}
            _ => return 0,
        }
        let mut last = memo.get();
        if last.state != state {
            // Listed at open (CombDfa::new), so the search finds it.
            let Ok(i) = self.accels.binary_search_by_key(&state, |a| a[0]) else {
                return 0;
            };
            last = LastSkip { state, escapes: search_escapes(self.accels[i][1]) };
            memo.set(last);
        }
        let [b0, b1, b2, _] = last.escapes.to_le_bytes();
        escape_at(path, at, [b0, b1, b2]) - at
    }

    #[inline(always)]
    fn prefetch_row(&self, state: u32) {
        walk::prefetch_item(self.rows, state as usize);
    }

    #[inline(always)]
    fn prefetch_transition(&self, at: Located) {
        walk::prefetch_item(self.slots, at.index);
    }
}

/// The escapes of a packed [`Accel`] entry as [`escape_at`] takes them,
/// packed in a word (`b0 | b1 << 8 | b2 << 16`): fewer than three escapes
/// have the first stand in for the missing ones.
fn search_escapes(packed: u32) -> u32 {
    let ([b0, b1, b2], count) = escape_bytes(packed);
    let b1 = if count >= 2 { b1 } else { b0 };
    let b2 = if count >= 3 { b2 } else { b0 };
    u32::from_le_bytes([b0, b1, b2, 0])
}

/// Where the first of the bytes `escapes` is in `path` at or after `at`
/// (`path.len()` when none is): the end of an accelerated state's skip.
///
/// Paths are short, tens of bytes, and a `memchr` call cost more to start
/// (a call through its dispatch pointer, then its own path for short
/// inputs) than the search itself: this one compares 16 bytes a step with
/// SSE2, the x86_64 baseline, inline. Every load is 16 bytes inside `path`:
/// whole blocks from `at` on, then, when bytes are left, the path's last 16
/// bytes, their hits before the end of the blocks read shifted out. A path
/// under 16 bytes is read a byte at a time.
#[inline(always)]
fn escape_at(path: &[u8], mut at: usize, escapes: [u8; 3]) -> usize {
    let len = path.len();
    #[cfg(target_arch = "x86_64")]
    if len >= 16 {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; each load reads the
        // 16 bytes at `block`, and `block <= len - 16`.
        unsafe {
            // Each escape over a whole vector: the three bytes in one word,
            // each byte spread to four, then each four to all sixteen (the
            // compiler's form of three `_mm_set1_epi8` took about 20
            // instructions a skip, this one 6).
            let word = _mm_cvtsi32_si128(i32::from_le_bytes([escapes[0], escapes[1], escapes[2], 0]));
            let word = _mm_unpacklo_epi8(word, word);
            let word = _mm_unpacklo_epi16(word, word);
            let (a, b, c) =
                (_mm_shuffle_epi32::<0x00>(word), _mm_shuffle_epi32::<0x55>(word), _mm_shuffle_epi32::<0xAA>(word));
            let hits_at = |block: usize| {
                let v = _mm_loadu_si128(path.as_ptr().add(block).cast());
                let hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, a), _mm_cmpeq_epi8(v, b)), _mm_cmpeq_epi8(v, c));
                _mm_movemask_epi8(hit) as u32
            };
            let last = len - 16;
            while at <= last {
                let hits = hits_at(at);
                if hits != 0 {
                    return at + hits.trailing_zeros() as usize;
                }
                at += 16;
            }
            if at < len {
                let hits = hits_at(last) >> (at - last);
                if hits != 0 {
                    return at + hits.trailing_zeros() as usize;
                }
            }
            return len;
        }
    }
    let [a, b, c] = escapes;
    path[at.min(len)..].iter().position(|&e| e == a || e == b || e == c).map_or(len, |i| at + i)
}

/// The classes of `escapes` (one to three bytes) that consist of escape
/// bytes alone, and how many: the only classes an accelerated state with
/// these escapes may leave on. `class_size` counts a class's bytes.
fn escape_only_classes(
    classes: &[u8; 256],
    escapes: &[u8],
    mut class_size: impl FnMut(u8) -> usize,
) -> ([u8; 3], usize) {
    let (mut only, mut n) = ([0u8; 3], 0);
    for (i, &e) in escapes.iter().enumerate() {
        let class = classes[usize::from(e)];
        if escapes[..i].iter().any(|&before| classes[usize::from(before)] == class) {
            continue;
        }
        let escapes_of_class = escapes
            .iter()
            .enumerate()
            .filter(|&(j, &b)| !escapes[..j].contains(&b) && classes[usize::from(b)] == class);
        if class_size(class) == escapes_of_class.count() {
            only[n] = class;
            n += 1;
        }
    }
    (only, n)
}

/// The largest class `classes` maps a byte to: eight 32-byte maxima with
/// AVX2 where the CPU has it (a group's first use takes it once per comb).
fn max_class(classes: &[u8; 256]) -> u8 {
    #[cfg(target_arch = "x86_64")]
    if robotsieve_core::arch::Avx2::available() {
        // SAFETY: AVX2 is present, just checked.
        return unsafe { max_class_avx2(classes) };
    }
    classes.iter().copied().max().unwrap_or(0)
}

/// [`max_class`] with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn max_class_avx2(classes: &[u8; 256]) -> u8 {
    use std::arch::x86_64::*;
    // SAFETY: each load reads 32 of the table's 256 bytes, unaligned.
    let max = unsafe {
        let load = |i: usize| _mm256_loadu_si256(classes[32 * i..].as_ptr().cast());
        let quarter = |i: usize| _mm256_max_epu8(load(2 * i), load(2 * i + 1));
        _mm256_max_epu8(_mm256_max_epu8(quarter(0), quarter(1)), _mm256_max_epu8(quarter(2), quarter(3)))
    };
    let half = _mm_max_epu8(_mm256_castsi256_si128(max), _mm256_extracti128_si256(max, 1));
    // The largest byte of 16: 255 minus the smallest of their complements,
    // which `minpos` finds among 16-bit lanes (each byte widened).
    let complement = _mm_xor_si128(half, _mm_set1_epi8(-1));
    let low = _mm_minpos_epu16(_mm_unpacklo_epi8(complement, _mm_setzero_si128()));
    let high = _mm_minpos_epu16(_mm_unpackhi_epi8(complement, _mm_setzero_si128()));
    let least = (_mm_cvtsi128_si32(low) as u16).min(_mm_cvtsi128_si32(high) as u16);
    255 - least as u8
}

/// How many bytes `classes` maps to `class`: 16 bytes a step with SSE2 (a
/// byte lane counts at most 16 matches before the sum of the lanes).
fn class_size(classes: &[u8; 256], class: u8) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; each load reads 16 of
        // the table's 256 bytes, unaligned.
        unsafe {
            let wanted = _mm_set1_epi8(class as i8);
            let mut counts = _mm_setzero_si128();
            for block in classes.chunks_exact(16) {
                let equal = _mm_cmpeq_epi8(_mm_loadu_si128(block.as_ptr().cast()), wanted);
                counts = _mm_sub_epi8(counts, equal);
            }
            let sums = _mm_sad_epu8(counts, _mm_setzero_si128());
            (_mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4)) as usize
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    classes.iter().filter(|&&c| c == class).count()
}

/// What [`rows_fit`]'s one pass over the rows found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RowsPass {
    /// Every default and base within its limit.
    fit: bool,
    /// How many rows are marked [`ACCEL`].
    marked: usize,
    /// The largest `row[0] & !default_mask`: a 16-bit comb's largest answer
    /// (shifted left 16), 0 for a 32-bit comb.
    answer_bits: u32,
}

/// Whether every row's default (`row[0] & default_mask`) is at most
/// `default_limit` and its base (`row[1]` without [`ACCEL`]) at most
/// `base_limit`, how many rows are marked [`ACCEL`], and the largest answer
/// bits (`row[0] & !default_mask`). Eight ids at a time with AVX2 where the
/// CPU has it, then four with SSE2, the rest one by one: a group's first use
/// checks every row, and taking the marks and the answers in the same pass
/// saves reading the rows again (the answers' scalar pass over the
/// interleaved rows was about a sixth of a first use).
///
/// Signed compares are exact on ids below 2^31, so the vector pass compares
/// the ids without their top bit against limits capped at `i32::MAX`, and
/// counts every lane's top bit (`raw >> 31`, no mask): the bases' lanes
/// count the marks, and a default with its top bit set (possible only where
/// `default_mask` keeps it) is out of range whenever `default_limit` is
/// below 2^31, the only case the pass takes.
///
/// `marks_expected` says whether some row may be marked (the comb lists
/// accelerated states): a 16-bit comb of at most 65,536 slots is read
/// in 16-bit lanes with AVX2 ([`narrow_rows_over_avx2`]), one unsigned
/// maximum per four rows when no row is expected to be marked (and the
/// general pass if one is, after all), two maxima and the count when rows
/// are.
fn rows_fit(
    rows: &[[u32; 2]],
    default_mask: u32,
    default_limit: u64,
    base_limit: u64,
    marks_expected: bool,
) -> RowsPass {
    let answer_mask = !default_mask;
    #[cfg(target_arch = "x86_64")]
    if default_mask == 0xFFFF
        && default_limit <= 0xFFFF
        && base_limit <= 0xFFFF
        && robotsieve_core::arch::Avx2::available()
    {
        let limits = [default_limit as u16, base_limit as u16];
        // SAFETY: the CPU has AVX2 (detected above, once per process).
        let wide = unsafe {
            if marks_expected {
                narrow_rows_over_avx2::<true>(rows, limits)
            } else {
                narrow_rows_over_avx2::<false>(rows, limits)
            }
        };
        if let Some((pass, rest)) = wide {
            let rest = rows_fit_plain(rest, default_mask, default_limit, base_limit);
            return RowsPass {
                fit: pass.fit && rest.fit,
                marked: pass.marked + rest.marked,
                answer_bits: pass.answer_bits.max(rest.answer_bits),
            };
        }
    }
    #[cfg(target_arch = "x86_64")]
    if let Ok(default_limit32) = i32::try_from(default_limit) {
        use std::arch::x86_64::*;
        let base_limit32 = i32::try_from(base_limit).unwrap_or(i32::MAX);
        let (masks, limits) = ([(default_mask & !ACCEL) as i32, !ACCEL as i32], [default_limit32, base_limit32]);
        let (wide_bad, wide_tops, wide_answer, rows) = if robotsieve_core::arch::Avx2::available() {
            // SAFETY: the CPU has AVX2 (detected above, once per process).
            unsafe { rows_over_avx2(rows, masks, limits, answer_mask) }
        } else {
            (false, [0, 0], 0, rows)
        };
        let mut blocks = rows.chunks_exact(2);
        // SAFETY: SSE2 is part of the x86_64 baseline; each load reads the
        // two rows (16 bytes) of its block, unaligned.
        let (bad, lanes) = unsafe {
            // Lanes alternate default, base (as the rows lie in memory).
            let mask = _mm_set_epi32(masks[1], masks[0], masks[1], masks[0]);
            let limit = _mm_set_epi32(limits[1], limits[0], limits[1], limits[0]);
            let mut bad = _mm_setzero_si128();
            let mut tops = _mm_setzero_si128();
            for block in &mut blocks {
                let raw = _mm_loadu_si128(block.as_ptr().cast());
                bad = _mm_or_si128(bad, _mm_cmpgt_epi32(_mm_and_si128(raw, mask), limit));
                tops = _mm_add_epi32(tops, _mm_srli_epi32(raw, 31));
            }
            // Each lane counts at most half the rows, which are fewer than
            // 2^32 (states, as `new` checked).
            let mut lanes = [0u32; 4];
            _mm_storeu_si128(lanes.as_mut_ptr().cast(), tops);
            (_mm_movemask_epi8(bad) != 0, lanes)
        };
        let default_tops = if default_mask & ACCEL != 0 { wide_tops[0] + lanes[0] + lanes[2] } else { 0 };
        // SSE2 has no unsigned 32-bit maximum: the rows of this pass (two
        // with AVX2, all of them on a CPU without) give theirs one by one.
        let sse2_rows = &rows[..rows.len() - blocks.remainder().len()];
        let sse2_answer = sse2_rows.iter().map(|row| row[0] & answer_mask).fold(0, u32::max);
        let rest = rows_fit_plain(blocks.remainder(), default_mask, default_limit, base_limit);
        return RowsPass {
            fit: !wide_bad && !bad && default_tops == 0 && rest.fit,
            marked: wide_tops[1] as usize + lanes[1] as usize + lanes[3] as usize + rest.marked,
            answer_bits: wide_answer.max(sse2_answer).max(rest.answer_bits),
        };
    }
    rows_fit_plain(rows, default_mask, default_limit, base_limit)
}

/// [`rows_fit`] one row at a time: the definition the vector passes are
/// tested against, and their tail.
fn rows_fit_plain(rows: &[[u32; 2]], default_mask: u32, default_limit: u64, base_limit: u64) -> RowsPass {
    let fits =
        |row: &[u32; 2]| u64::from(row[0] & default_mask) <= default_limit && u64::from(row[1] & !ACCEL) <= base_limit;
    RowsPass {
        fit: rows.iter().all(fits),
        marked: rows.iter().filter(|row| row[1] & ACCEL != 0).count(),
        answer_bits: rows.iter().map(|row| row[0] & !default_mask).fold(0, u32::max),
    }
}

/// The owned comb with 32-bit slots: what [`CombDfa::from_dense`] makes,
/// valid by construction.
impl CombDfa {
    /// Compresses a dense automaton; the result scans identically.
    pub fn from_dense(dense: &Dfa) -> CombDfa {
        CombDfa::from_dense_within(dense, usize::MAX).expect("no size limit")
    }

    /// Compresses a dense automaton unless its tables (see
    /// [`CombDfa::stored_bytes`]) would certainly take more than
    /// `max_bytes`: every state needs a row and every non-default transition
    /// a slot, so that bound is known before packing, and a writer that keeps
    /// whichever form is smaller skips packing automata the comb cannot help.
    pub fn from_dense_within(dense: &Dfa, max_bytes: usize) -> Option<CombDfa> {
        let states = dense.states();
        let width = usize::from(dense.classes().iter().copied().max().unwrap_or(0)) + 1;
        let mut defaults = Vec::with_capacity(states);
        // Non-default transitions of all rows, (class, target), row by row.
        let mut entries: Vec<(u8, u32)> = Vec::new();
        let mut row_ends = Vec::with_capacity(states);
        let mut row = Vec::with_capacity(width);
        let mut scratch = Vec::with_capacity(width);
        for s in 0..states {
            let at = s << dense.stride2();
            row.clear();
            row.extend(dense.transitions()[at..at + width].iter().map(|&t| t >> dense.stride2()));
            let default = most_frequent(&row, &mut scratch);
            defaults.push(default);
            entries.extend(row.iter().enumerate().filter(|&(_, &t)| t != default).map(|(c, &t)| (c as u8, t)));
            row_ends.push(entries.len());
        }
        let narrow = narrow_fits(states, dense.max_answer());
        let lower_bound = stored_bytes(states, entries.len(), narrow);
        if lower_bound > max_bytes {
            return None;
        }
        let row_of = |s: usize| &entries[if s == 0 { 0 } else { row_ends[s - 1] }..row_ends[s]];
        // Fullest rows first: they are the hardest to fit once slots are taken.
        let mut order: Vec<usize> = (0..states).filter(|&s| !row_of(s).is_empty()).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(row_of(s).len()));
        let mut taken = Taken::default();
        let mut bases = vec![0u32; states];
        let mut slots: Vec<[u32; 2]> = Vec::new();
        let mut row_classes: Vec<usize> = Vec::with_capacity(width);
        let mut past_shape: std::collections::HashMap<[u64; 4], usize> = std::collections::HashMap::new();
        for s in order {
            let row = row_of(s);
            let first = usize::from(row[0].0);
            // The first base at which every class of the row lands on a free
            // slot, at or after the one that puts the first class on the
            // first free slot (every slot below that is taken).
            // A row of the same classes as an earlier one cannot fit below
            // where that one went (slots are only ever taken), so the
            // search starts past it: rows of one shape do not rescan the
            // table each.
            row_classes.clear();
            row_classes.extend(row.iter().map(|&(c, _)| usize::from(c)));
            let mut shape = [0u64; 4];
            for &c in &row_classes {
                shape[c / 64] |= 1 << (c % 64);
            }
            let after = if row.len() > 1 { past_shape.get(&shape).copied().unwrap_or(0) } else { 0 };
            let base = taken.first_fit(taken.first_free.saturating_sub(first).max(after), &row_classes);
            if row.len() > 1 {
                past_shape.insert(shape, base + 1);
            }
            let end = base + usize::from(row[row.len() - 1].0) + 1;
            if slots.len() < end {
                slots.resize(end, [FREE_SLOT, 0]);
            }
            for &(c, target) in row {
                let i = base + usize::from(c);
                taken.take(i);
                slots[i] = [s as u32, target];
            }
            bases[s] = u32::try_from(base).ok()?;
            taken.first_free = taken.next_free(taken.first_free);
        }
        // Every row, even an empty one, must fit whole: no lookup out of bounds.
        let len = bases.iter().map(|&b| b as usize + width).max().unwrap_or(width);
        if len >= ACCEL as usize {
            return None;
        }
        slots.resize(len, [FREE_SLOT, 0]);
        let accels = accelerated_states(dense);
        for &[state, _] in &accels {
            bases[state as usize] |= ACCEL;
        }
        Some(CombDfa {
            classes: *dense.classes(),
            accels,
            rows: defaults.into_iter().zip(bases).map(|(default, base)| [default, base]).collect(),
            slots,
            answers: dense.answers().to_vec(),
            start: dense.start_index() as u32,
            sinks: dense.sinks() as u32,
        })
    }

    /// Bytes of the rows, slots and answers as the artifact stores them,
    /// 16-bit when they fit (see [`CombDfa::narrow`]): what replaces the
    /// dense transitions and answers.
    pub fn stored_bytes(&self) -> usize {
        stored_bytes(self.rows.len(), self.slots.len(), self.narrow_fits()) + 8 * self.accels.len()
    }

    fn narrow_fits(&self) -> bool {
        narrow_fits(self.rows.len(), self.answers.iter().copied().max().unwrap_or(0))
    }

    /// The 16-bit form, when every state id, the free mark and every
    /// answer fit: rows carrying their answers, slots of 16-bit ids (see
    /// [`SlotId`]) and no answers table. What the artifact stores then.
    pub fn narrow(&self) -> Option<NarrowComb> {
        if !self.narrow_fits() {
            return None;
        }
        let rows =
            self.rows.iter().zip(&self.answers).map(|(&[default, base], &answer)| [default | answer << 16, base]);
        let id = |id: u32| if id == FREE_SLOT { u16::FREE } else { id as u16 };
        let slots = self.slots.iter().map(|&[owner, target]| [id(owner), id(target)]);
        let (classes, accels, start, sinks) = (self.classes, self.accels.clone(), self.start, self.sinks);
        // SAFETY: the same comb in narrower ids (all of which fit, above):
        // valid as `self` is.
        let narrow =
            unsafe { CombDfa::validated(classes, rows.collect(), slots.collect(), Vec::new(), accels, start, sinks) };
        debug_assert_eq!(narrow.as_ref().check().map(|_| ()), Ok(()), "the 16-bit form of a valid comb");
        Some(narrow)
    }
}

/// The non-sink states of `dense` that loop on all bytes but one to three,
/// with those bytes (see [`Accel`]).
fn accelerated_states(dense: &Dfa) -> Vec<Accel> {
    let width = usize::from(dense.classes().iter().copied().max().unwrap_or(0)) + 1;
    let mut bytes_of: Vec<Vec<u8>> = vec![Vec::new(); width];
    for b in 0..=255u8 {
        bytes_of[usize::from(dense.class_of(b))].push(b);
    }
    let mut accels = Vec::new();
    let stride2 = dense.stride2();
    for s in dense.sinks()..dense.states() {
        let row = &dense.transitions()[s << stride2..(s << stride2) + width];
        let mut escapes = Vec::new();
        for (c, &t) in row.iter().enumerate() {
            if (t >> stride2) as usize != s {
                escapes.extend_from_slice(&bytes_of[c]);
                if escapes.len() > 3 {
                    break;
                }
            }
        }
        let count = escapes.len();
        if (1..=3).contains(&count) {
            escapes.resize(3, 0);
            accels.push([s as u32, u32::from_le_bytes([escapes[0], escapes[1], escapes[2], count as u8])]);
        }
    }
    accels
}

/// The default target of a row (see [`SlotId::ANSWER_IN_ROW`]).
#[inline(always)]
fn default_of<T: SlotId>(row: [u32; 2]) -> u32 {
    if T::ANSWER_IN_ROW {
        row[0] & 0xFFFF
    } else {
        row[0]
    }
}

/// Whether an automaton of `states` states whose answers are at most
/// `max_answer` is stored 16-bit: every state id and [`SlotId::FREE`] fit 16
/// bits, and so does every answer.
fn narrow_fits(states: usize, max_answer: u32) -> bool {
    states <= usize::from(u16::FREE) && max_answer <= 0xFFFF
}

/// Bytes an automaton of `states` states with `slots` slots is stored in
/// (rows, slots, and an answers table unless narrow).
fn stored_bytes(states: usize, slots: usize, narrow: bool) -> usize {
    if narrow {
        (8 * states).saturating_add(slots.saturating_mul(4))
    } else {
        (12 * states).saturating_add(slots.saturating_mul(8))
    }
}

/// The most frequent value of `row` (the smallest among equally frequent
/// ones, so the result does not depend on the row's order); `scratch` holds
/// a sorted copy when there is no majority.
fn most_frequent(row: &[u32], scratch: &mut Vec<u32>) -> u32 {
    // Most rows have a target that takes more than half of them (a trie's
    // "anything else"): then it is the most frequent, found without sorting
    // by a majority vote (Boyer and Moore) and a count.
    let (mut candidate, mut votes) = (row[0], 0usize);
    for &t in row {
        if votes == 0 {
            candidate = t;
        }
        votes = if t == candidate { votes + 1 } else { votes - 1 };
    }
    if 2 * row.iter().filter(|&&t| t == candidate).count() > row.len() {
        return candidate;
    }
    scratch.clear();
    scratch.extend_from_slice(row);
    let row = scratch.as_mut_slice();
    row.sort_unstable();
    let (mut best, mut best_count) = (row[0], 0);
    for run in row.chunk_by(|a, b| a == b) {
        if run.len() > best_count {
            (best, best_count) = (run[0], run.len());
        }
    }
    best
}

/// Occupied slots of the table being packed, one bit each, and the first
/// free slot (every slot below it is taken).
#[derive(Default)]
struct Taken {
    bits: Vec<u64>,
    first_free: usize,
}

impl Taken {
    /// The 64 bits of the bitmap from slot `at` on: bit `j` is slot `at + j`
    /// (slots past the bitmap are free).
    #[inline(always)]
    fn window(&self, at: usize) -> u64 {
        let (word, shift) = (at / 64, at % 64);
        let get = |k: usize| self.bits.get(k).copied().unwrap_or(0);
        if shift == 0 {
            get(word)
        } else {
            get(word) >> shift | get(word + 1) << (64 - shift)
        }
    }

    /// The smallest base at or after `from` such that slot `base + c` is
    /// free for every class `c` of `classes`: first fit, tested for 64
    /// bases at once (one window per class), so that a search through a
    /// nearly full table costs a few words per 64 candidates, not a test of
    /// the whole row per free slot.
    fn first_fit(&self, from: usize, classes: &[usize]) -> usize {
        let mut block = from;
        loop {
            let taken = classes.iter().fold(0u64, |acc, &c| acc | self.window(block + c));
            if taken != u64::MAX {
                return block + (!taken).trailing_zeros() as usize;
            }
            block += 64;
        }
    }

    fn take(&mut self, i: usize) {
        if self.bits.len() <= i / 64 {
            self.bits.resize(i / 64 + 1, 0);
        }
        self.bits[i / 64] |= 1 << (i % 64);
    }

    /// The first free slot at or after `from` (slots past the bitmap are free).
    fn next_free(&self, from: usize) -> usize {
        let mut word = from / 64;
        let mut free = match self.bits.get(word) {
            Some(w) => !w & (u64::MAX << (from % 64)),
            None => return from,
        };
        while free == 0 {
            word += 1;
            match self.bits.get(word) {
                Some(w) => free = !w,
                None => return word * 64,
            }
        }
        word * 64 + free.trailing_zeros() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A view's tables checked by [`CombDfa::new`] (as an artifact's are on
    /// a group's first use), and the largest answer the check found.
    fn recheck<T: SlotId>(view: CombDfaRef<'_, T>) -> Result<(CombDfaRef<'_, T>, u32), DfaError> {
        let CombDfa { classes, rows, slots, answers, accels, start, sinks } = view;
        CombDfa::new_with_max_answer(classes, rows, slots, answers, accels, start, sinks)
    }

    /// `comb`'s tables, checked (see [`recheck`]).
    fn checked<S: SlotTable>(comb: &CombDfa<S>) -> Result<(CombDfaRef<'_, S::Id>, u32), DfaError> {
        recheck(comb.as_ref())
    }

    /// `comb`'s classes, accelerations, start and sinks with these rows,
    /// slots and answers (the 16-bit form's, or broken ones), unchecked:
    /// only for the checks ([`recheck`], [`plain_check`]), never walked.
    fn with<'a, T: SlotId>(
        comb: &'a CombDfa,
        rows: &'a [[u32; 2]],
        slots: &'a [[T; 2]],
        answers: &'a [u32],
    ) -> CombDfaRef<'a, T> {
        // SAFETY: the tests only check these tables, which reads them with
        // bounds checks, and step them only once they passed.
        unsafe { CombDfa::validated(&comb.classes, rows, slots, answers, &comb.accels[..], comb.start, comb.sinks) }
    }

    /// A trie over `words`: one state per prefix, every other byte to a
    /// dead sink 0; a complete word reaches the accepting sink 1.
    fn trie(words: &[&[u8]]) -> Dfa {
        let mut classes = [0u8; 256];
        let mut k = 1u8;
        for &b in words.iter().flat_map(|w| w.iter()) {
            if classes[usize::from(b)] == 0 {
                classes[usize::from(b)] = k;
                k += 1;
            }
        }
        let stride2 = u32::from(k).next_power_of_two().trailing_zeros();
        let mut rows: Vec<Vec<u32>> = vec![vec![0; 1 << stride2], vec![1; 1 << stride2], vec![0; 1 << stride2]];
        let mut answers = vec![0, 7, 0];
        for w in words {
            let mut s = 2usize;
            for (i, &b) in w.iter().enumerate() {
                let c = usize::from(classes[usize::from(b)]);
                let t = if i + 1 == w.len() { 1 } else { rows[s][c] as usize };
                let t = if t == 0 {
                    rows.push(vec![0; 1 << stride2]);
                    answers.push(0);
                    rows.len() - 1
                } else {
                    t
                };
                rows[s][c] = t as u32;
                s = t;
            }
        }
        let transitions = rows.iter().flatten().map(|&t| t << stride2).collect();
        Dfa::new(classes, stride2, transitions, answers, 2 << stride2, 2).unwrap()
    }

    #[test]
    fn a_trie_compresses_and_scans_the_same() {
        let words: Vec<Vec<u8>> = (0..200).map(|i| format!("/some/long/path/number/{i}/x").into_bytes()).collect();
        let refs: Vec<&[u8]> = words.iter().map(|w| w.as_slice()).collect();
        let dense = trie(&refs);
        let comb = CombDfa::from_dense(&dense);
        let view = checked(&comb).unwrap().0;
        let dfa = &dense;
        assert_eq!(view.states(), dfa.states());
        assert!(comb.stored_bytes() * 4 < dense.transitions().len() * 4, "{} bytes", comb.stored_bytes());
        for w in &words {
            assert_eq!(view.scan(w), 7);
            assert_eq!(view.scan(&w[..w.len() - 1]), 0);
        }
        for p in [&b""[..], b"/", b"/some/long/path/number/19", b"/some/long/path/number/1999/x", b"zzz"] {
            assert_eq!(view.scan(p), dfa.scan(p), "{}", String::from_utf8_lossy(p));
        }
        assert_eq!(view.max_answer(), 7);
        assert_eq!(view.sinks(), 2);
    }

    #[test]
    fn sinks_stop_the_scan_and_a_sink_start_answers_at_once() {
        let dense = trie(&[b"ab"]);
        let comb = CombDfa::from_dense(&dense);
        assert_eq!(checked(&comb).unwrap().0.scan(b"abzzz"), 7);
        let (transitions, answers) = (dense.transitions().to_vec(), dense.answers().to_vec());
        let sinks = dense.sinks() as u32;
        let dense =
            Dfa::new(*dense.classes(), dense.stride2(), transitions, answers, 1 << dense.stride2(), sinks).unwrap();
        let comb = CombDfa::from_dense(&dense);
        assert_eq!(comb.start, 1);
        assert_eq!(checked(&comb).unwrap().0.scan(b""), 7);
    }

    /// `/*?` as an automaton: start 2 reads `/` to 3, which loops on every
    /// byte but `?`; `?` reaches the accepting sink 1.
    fn slash_star_question() -> Dfa {
        let mut classes = [0u8; 256];
        classes[usize::from(b'/')] = 1;
        classes[usize::from(b'?')] = 2;
        let stride2 = 2;
        let rows: [[u32; 4]; 4] = [[0; 4], [1; 4], [0, 3, 0, 0], [3, 3, 1, 3]];
        let transitions = rows.iter().flatten().map(|&t| t << stride2).collect();
        Dfa::new(classes, stride2, transitions, vec![0, 7, 0, 0], 2 << stride2, 2).unwrap()
    }

    #[test]
    fn a_state_that_waits_for_one_byte_is_accelerated() {
        let dense = slash_star_question();
        let comb = CombDfa::from_dense(&dense);
        assert_eq!(comb.accels, vec![[3, u32::from(b'?') | 1 << 24]]);
        assert_ne!(comb.rows[3][1] & ACCEL, 0);
        let view = checked(&comb).unwrap().0;
        let last = SkipMemo::new();
        assert_eq!(view.skip(3, b"abc?d", 0, &last), 3);
        let question = u32::from_le_bytes([b'?', b'?', b'?', 0]);
        assert_eq!(last.get(), LastSkip { state: 3, escapes: question }, "the escapes are remembered, padded");
        assert_eq!(view.skip(3, b"/abc?d", 1, &last), 3);
        assert_eq!(view.skip(3, b"abcd", 0, &last), 4);
        assert_eq!(view.skip(3, b"abcd", 4, &last), 0);
        assert_eq!(view.skip(2, b"abc?d", 0, &last), 0, "the start state is not accelerated");
        assert_eq!(last.get().state, 3);
        // What is remembered is what is used: the state's escapes, found again.
        let other = SkipMemo::new();
        other.set(LastSkip { state: 3, escapes: u32::from_le_bytes([b'c', b'c', b'c', 0]) });
        assert_eq!(view.skip(3, b"abc?d", 0, &other), 2);
        let dfa = &dense;
        for path in [&b"/abc?d"[..], b"/abcd", b"/?", b"?", b"", b"//x/y?"] {
            assert_eq!(view.scan(path), dfa.scan(path), "{}", String::from_utf8_lossy(path));
        }
        let narrow = comb.narrow().unwrap();
        let narrow = checked(&narrow).unwrap().0;
        assert_eq!(narrow.scan(b"/abc?d"), 7);
        assert_eq!(narrow.scan(b"/abcd"), 0);
    }

    /// The checks of [`CombDfa::new`] written plainly, one byte or slot at a
    /// time, as they were before the vector passes: the reference the fast
    /// checks must agree with.
    fn plain_check<T: SlotId>(t: CombDfaRef<'_, T>) -> Result<(), DfaError> {
        let states = t.rows.len();
        if states == 0 || states > T::FREE.into() as usize || t.start as usize >= states || t.sinks as usize > states {
            return Err(DfaError::NoStates);
        }
        let max_class = u64::from(t.classes.iter().copied().max().unwrap_or(0));
        let is_state = |id: u32| (id as usize) < states;
        for &row in t.rows {
            if u64::from(row[1] & !ACCEL) + max_class >= t.slots.len() as u64 || !is_state(default_of::<T>(row)) {
                return Err(DfaError::NoStates);
            }
        }
        for &[owner, target] in t.slots {
            if !is_state(target.into()) || (owner != T::FREE && !is_state(owner.into())) {
                return Err(DfaError::NoStates);
            }
        }
        for &[state, packed] in t.accels {
            let (escapes, count) = escape_bytes(packed);
            if state < t.sinks || state as usize >= states || !(1..=3).contains(&count) {
                return Err(DfaError::NoStates);
            }
            // SAFETY: `state` is a state, and the rows and slots passed above.
            if (0..=255u8).any(|b| !escapes[..count].contains(&b) && unsafe { t.step(state, b) } != state) {
                return Err(DfaError::NoStates);
            }
        }
        Ok(())
    }

    proptest! {
        /// Damaged tables (a row, slot or acceleration changed, 32-bit and
        /// 16-bit ids, every length of table so that the vector passes'
        /// tails are covered) are refused by the fast checks exactly when
        /// the plain ones refuse them.
        #[test]
        fn fast_table_checks_agree_with_plain_ones(
            words in 1usize..60,
            which in 0usize..4,
            at in any::<prop::sample::Index>(),
            absolute in prop_oneof![0u32..8, 0u32..400, Just(u32::MAX), Just(0xFFFF), Just(0x8000_0005)],
            around_bound in prop::option::of(0u32..3),
        ) {
            let paths: Vec<Vec<u8>> = (0..words).map(|i| format!("/p{i}/*?x{}", i * 7).into_bytes()).collect();
            let refs: Vec<&[u8]> = paths.iter().map(|p| p.as_slice()).collect();
            let mut comb = CombDfa::from_dense(&trie(&refs));
            if which == 3 {
                // An accelerated state of its own: `/*?` beside the trie.
                comb = CombDfa::from_dense(&slash_star_question());
            }
            // Right at a bound (states, slots) or anything.
            let bound = if which == 1 || at.index(2) == 0 { comb.rows.len() } else { comb.slots.len() } as u32;
            let value = around_bound.map_or(absolute, |d| bound + d - 1);
            match which {
                0 => { let r = at.index(comb.rows.len()); comb.rows[r][at.index(2)] = value; }
                1 => { let s = at.index(comb.slots.len()); comb.slots[s][at.index(2)] = value; }
                2 => { let r = at.index(comb.rows.len()); comb.rows[r][1] = value & !ACCEL; }
                _ => { let a = at.index(comb.accels.len()); comb.accels[a][1] = value; }
            }
            let marked_right = comb.accels.len() == comb.rows.iter().filter(|r| r[1] & ACCEL != 0).count();
            let wide = comb.as_ref();
            prop_assert_eq!(recheck(wide).is_ok(), marked_right && plain_check(wide).is_ok());
            let rows: Vec<[u32; 2]> = comb.rows.iter().map(|&[d, b]| [d & 0xFFFF, b]).collect();
            let slots: Vec<[u16; 2]> = comb.slots.iter().map(|&[o, t]| [o as u16, t as u16]).collect();
            let narrow = with(&comb, &rows, &slots, &[]);
            prop_assert_eq!(recheck(narrow).is_ok(), marked_right && plain_check(narrow).is_ok());
        }
    }

    proptest! {
        /// The vector count of `leaving_count` (16-bit slots: AVX2, SSE2 and
        /// the tail) is the slot-by-slot one, on rows of every length up to
        /// 256 classes whose slots mostly hold the state itself, its default
        /// or another state, owned or not, free, or the largest id.
        #[test]
        fn leaving_counts_are_those_of_the_plain_reading(
            slots in proptest::collection::vec((0u16..5, 0u16..5), 1..=256),
            state in 0u16..5,
            default in 0u16..5,
        ) {
            // Ids 0..3, 3 read as the largest state id (u16::MAX - 1) and 4 as a
            // free owner (u16::MAX): enough to meet every case of owner and
            // target against state and default.
            let id = |i: u16| match i { 3 => u16::MAX - 1, 4 => u16::MAX, i => i };
            let row: Vec<[u16; 2]> = slots.iter().map(|&(o, t)| [id(o), id(t).min(u16::MAX - 1)]).collect();
            let (state, default) = (u32::from(id(state).min(u16::MAX - 1)), u32::from(id(default).min(u16::MAX - 1)));
            prop_assert_eq!(u16::leaving_count(&row, state, default), leaving_count_plain(&row, state, default));
        }
    }

    proptest! {
        /// The rows' vector passes (AVX2, SSE2, the tail) find what the
        /// row-by-row definition finds: fit, marks and the largest answer
        /// bits, on rows of every length up to 40 (every split between the
        /// passes), with ids near the limits, top bits set, 16-bit and
        /// 32-bit defaults, marks expected or not, and limits past what the
        /// vector passes take.
        #[test]
        fn rows_pass_agrees_with_the_plain_one(
            rows in proptest::collection::vec(
                (0u32..8, prop_oneof![0u32..8, any::<u16>().prop_map(u32::from)], 0u32..8, any::<bool>()),
                0..40,
            ),
            damage in proptest::collection::vec(
                (any::<prop::sample::Index>(), any::<bool>(), prop_oneof![
                    any::<u32>(), Just(1 << 16 | 3), Just(ACCEL | 1 << 16 | 3), Just(0xFFFF_0000u32 | 5),
                    Just(0x8000), Just(0xFFFF), Just(ACCEL | 0xFFFF), Just(0x7FFF_0000), Just(64),
                ]),
                0..3,
            ),
            narrow in any::<bool>(),
            default_limit in prop_oneof![0u64..70, Just(63u64), Just(u64::from(u32::MAX)), Just(1u64 << 40)],
            base_limit in prop_oneof![0u64..70, Just(63u64), Just(u64::from(u32::MAX)), Just(0xFFFF)],
            marks_expected in any::<bool>(),
        ) {
            // Rows that mostly fit (small defaults and bases, answers in the
            // top half, marks), then up to three words set to values at or
            // past the limits or with stray high bits.
            let mut rows: Vec<[u32; 2]> =
                rows.into_iter().map(|(d, a, b, m)| [d | a << 16, b | if m { ACCEL } else { 0 }]).collect();
            for (at, which, value) in damage {
                if !rows.is_empty() {
                    let r = at.index(rows.len());
                    rows[r][usize::from(which)] = value;
                }
            }
            let default_mask = if narrow { 0xFFFF } else { u32::MAX };
            prop_assert_eq!(
                rows_fit(&rows, default_mask, default_limit, base_limit, marks_expected),
                rows_fit_plain(&rows, default_mask, default_limit, base_limit)
            );
        }

        /// The classes an accelerated state may leave on are those of its
        /// escapes whose every byte is an escape, whatever the duplicates
        /// among the escapes and the classes they share.
        #[test]
        fn escape_only_classes_are_the_classes_of_escapes_alone(
            classes in proptest::collection::vec(0u8..6, 256),
            escapes in proptest::collection::vec(prop_oneof![0u8..8, any::<u8>()], 1..=3),
        ) {
            let classes: [u8; 256] = classes.try_into().unwrap();
            let (only, n) = escape_only_classes(&classes, &escapes, |c| class_size(&classes, c));
            let mut found = only[..n].to_vec();
            found.sort_unstable();
            let mut wanted: Vec<u8> = escapes.iter().map(|&e| classes[usize::from(e)]).collect();
            wanted.sort_unstable();
            wanted.dedup();
            wanted.retain(|&c| (0..=255u8).all(|b| classes[usize::from(b)] != c || escapes.contains(&b)));
            prop_assert_eq!(found, wanted);
        }
    }

    proptest! {
        /// The vector maximum is the plain one, wherever the largest class
        /// lies (each byte position, each value, 0 and 255 included).
        #[test]
        fn max_class_is_the_largest_class(
            fill in 0u8..=255,
            at in 0usize..256,
            top in 0u8..=255,
            others in proptest::collection::vec((0usize..256, 0u8..=255), 0..8),
        ) {
            let mut classes = [fill.min(top); 256];
            classes[at] = top;
            for (i, c) in others {
                classes[i] = c;
            }
            prop_assert_eq!(max_class(&classes), classes.iter().copied().max().unwrap());
        }
    }

    #[test]
    fn class_size_counts_the_bytes_of_a_class() {
        let mut classes = [0u8; 256];
        classes[b'?' as usize] = 1;
        classes[200..].iter_mut().for_each(|c| *c = 2);
        assert_eq!([0, 1, 2, 3].map(|c| class_size(&classes, c)), [199, 1, 56, 0]);
    }

    #[test]
    fn broken_accelerations_are_refused_naming_the_problem() {
        let good = CombDfa::from_dense(&slash_star_question());
        let waits_for_question = u32::from(b'?') | 1 << 24;
        type Breakage = Box<dyn Fn(&mut CombDfa)>;
        let cases: Vec<(&str, Breakage, DfaError)> = vec![
            (
                "an escape byte missing",
                Box::new(|b| b.accels[0][1] = u32::from(b'x') | 1 << 24),
                DfaError::AccelLeaves { state: 3, byte: b'?' },
            ),
            (
                "a byte beside the escape in its class",
                Box::new(|b| b.classes[usize::from(b'x')] = b.classes[usize::from(b'?')]),
                DfaError::AccelLeaves { state: 3, byte: b'x' },
            ),
            ("no escape byte", Box::new(|b| b.accels[0][1] = 0), DfaError::AccelEscapeCount { state: 3, count: 0 }),
            (
                "four escape bytes",
                Box::new(|b| b.accels[0][1] |= 4 << 24),
                DfaError::AccelEscapeCount { state: 3, count: 5 },
            ),
            ("listed, not marked", Box::new(|b| b.rows[3][1] &= !ACCEL), DfaError::AccelCount { marked: 0, listed: 1 }),
            ("marked, not listed", Box::new(|b| b.rows[2][1] |= ACCEL), DfaError::AccelCount { marked: 2, listed: 1 }),
            (
                "listed, another marked",
                Box::new(|b| {
                    b.rows[3][1] &= !ACCEL;
                    b.rows[2][1] |= ACCEL;
                }),
                DfaError::AccelNotMarkedState { state: 3 },
            ),
            (
                "a sink",
                Box::new(move |b| {
                    b.rows[1][1] |= ACCEL;
                    b.accels.insert(0, [1, waits_for_question]);
                }),
                DfaError::AccelNotMarkedState { state: 1 },
            ),
            (
                "no state",
                Box::new(move |b| b.accels.push([9, waits_for_question])),
                DfaError::AccelCount { marked: 1, listed: 2 },
            ),
            (
                "out of order",
                Box::new(move |b| b.accels.push([3, waits_for_question])),
                DfaError::AccelsOutOfOrder { first: 3, second: 3 },
            ),
        ];
        for (what, break_it, expected) in cases {
            let mut buf = good.clone();
            break_it(&mut buf);
            assert_eq!(checked(&buf).map(|_| ()), Err(expected), "{what}");
        }
    }

    #[test]
    fn a_size_limit_skips_packing() {
        let dense = trie(&[b"abc", b"abd"]);
        assert!(CombDfa::from_dense_within(&dense, 8).is_none());
        assert!(CombDfa::from_dense_within(&dense, 1 << 20).is_some());
    }

    #[test]
    fn rejects_broken_tables() {
        let good = CombDfa::from_dense(&trie(&[b"abc", b"abd", b"xy"]));
        assert!(checked(&good).is_ok());
        let states = good.answers.len() as u32;
        let owned = good.slots.iter().position(|&[owner, _]| owner != FREE_SLOT).unwrap();
        type Breakage = Box<dyn Fn(&mut CombDfa)>;
        let cases: Vec<(&str, Breakage)> = vec![
            ("default", Box::new(move |b| b.rows[2][0] = states)),
            ("target", Box::new(move |b| b.slots[owned][1] = states + 5)),
            ("owner", Box::new(move |b| b.slots[owned][0] = states)),
            ("base", Box::new(|b| b.rows[1][1] = b.slots.len() as u32)),
            ("base overflow", Box::new(|b| b.rows[1][1] = u32::MAX)),
            ("start", Box::new(move |b| b.start = states)),
            ("sinks", Box::new(move |b| b.sinks = states + 1)),
            ("short slots", Box::new(|b| b.slots.truncate(b.slots.len() - 1))),
            ("short rows", Box::new(|b| b.rows.truncate(b.rows.len() - 1))),
            ("no answers", Box::new(|b| b.answers.clear())),
            (
                "no states",
                Box::new(|b| {
                    b.rows.clear();
                    b.answers.clear();
                }),
            ),
            ("class past the table", Box::new(|b| b.classes[9] = 255)),
        ];
        for (what, break_it) in cases {
            let mut buf = good.clone();
            break_it(&mut buf);
            let err = checked(&buf).expect_err(what);
            assert!(err.to_string().starts_with("invalid automaton: "), "{what}: {err}");
        }
        let mut buf = good.clone();
        buf.slots[owned][1] = states + 5;
        assert_eq!(checked(&buf).map(|_| ()), Err(DfaError::SlotTargetNotState { slot: owned, target: states + 5 }));
        let mut buf = good.clone();
        buf.rows[2][0] = states;
        assert_eq!(checked(&buf).map(|_| ()), Err(DfaError::DefaultNotState { state: 2, target: states }));
        // The 16-bit form: rows carry the answers. Refused: a default or an
        // owner that is no state, an answers table besides, too many states.
        let CombDfa { rows, mut slots, .. } = good.narrow().unwrap();
        let check = |rows: &[[u32; 2]], slots: &[[u16; 2]], answers: &[u32]| {
            recheck(with(&good, rows, slots, answers)).map(|_| ()).map_err(|e| e.to_string())
        };
        assert!(check(&rows, &slots, &[]).is_ok());
        assert!(check(&rows, &slots, &good.answers).unwrap_err().contains("answers for"));
        let mut bad_rows = rows.clone();
        bad_rows[2][0] = (bad_rows[2][0] & !0xFFFF) | states;
        assert!(check(&bad_rows, &slots, &[]).unwrap_err().contains("not a state"));
        let many_rows = vec![[0u32, 0]; 65_536];
        assert!(check(&many_rows, &slots, &[]).unwrap_err().contains("do not fit 2-byte slot ids"));
        slots[owned][0] = states as u16;
        assert!(check(&rows, &slots, &[]).unwrap_err().contains("not a state"));
        let mut big = good.clone();
        big.rows.resize(65_536, [0, 0]);
        big.answers.resize(65_536, 0);
        assert!(big.narrow().is_none(), "too many states");
        let mut loud = good.clone();
        loud.answers[1] = 70_000;
        assert!(loud.narrow().is_none(), "an answer over 16 bits");
    }

    #[test]
    fn packs_a_large_trie_quickly() {
        // 100 words of 400 bytes share only a prefix: about 40,000 states.
        let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789/-_.";
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut byte = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            alphabet[(seed >> 33) as usize % alphabet.len()]
        };
        let words: Vec<Vec<u8>> = (0..100).map(|_| (0..400).map(|_| byte()).collect()).collect();
        let refs: Vec<&[u8]> = words.iter().map(|w| w.as_slice()).collect();
        let dense = trie(&refs);
        assert!(dense.states() > 30_000);
        let started = std::time::Instant::now();
        let comb = CombDfa::from_dense(&dense);
        let took = started.elapsed();
        // Generous for unoptimised builds; release packs this in milliseconds.
        assert!(took.as_secs_f64() < 5.0, "{took:?}");
        // Near one slot per non-default transition.
        let entries = comb.slots.iter().filter(|&&[owner, _]| owner != FREE_SLOT).count();
        assert!(comb.slots.len() < entries + 64, "{} slots for {entries} entries", comb.slots.len());
        let view = checked(&comb).unwrap().0;
        for w in &words {
            assert_eq!(view.scan(w), 7);
        }
    }

    /// A random dense automaton that satisfies `Dfa::new`: `states` rows of
    /// `1 << stride2`, each mostly pointing at one target (trie-like) with a
    /// few random exceptions, or entirely random.
    ///
    /// With `sparse` classes, every byte but those of `/abc?` is in class 0
    /// and states often default to themselves: states that loop on all bytes
    /// but a few, which the comb accelerates.
    fn random_dense() -> impl Strategy<Value = Dfa> {
        (1usize..40, 0u32..5, any::<bool>(), any::<bool>(), any::<u64>()).prop_map(
            |(states, stride2, dense_rows, sparse, seed)| {
                let mut rng = seed | 1;
                let mut rand = move |n: usize| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    (rng % n as u64) as usize
                };
                let stride = 1usize << stride2;
                let mut classes = [0u8; 256];
                if sparse {
                    SPECIAL.iter().for_each(|&b| classes[usize::from(b)] = rand(stride) as u8);
                } else {
                    classes.iter_mut().for_each(|c| *c = rand(stride) as u8);
                }
                let mut transitions = Vec::with_capacity(states * stride);
                for s in 0..states {
                    let default = if sparse && rand(2) == 0 { s } else { rand(states) };
                    for _ in 0..stride {
                        let t = if dense_rows || rand(4) == 0 { rand(states) } else { default };
                        transitions.push((t << stride2) as u32);
                    }
                }
                let answers = (0..states).map(|_| rand(10) as u32).collect();
                let start = (rand(states) << stride2) as u32;
                let sinks = rand(states + 1) as u32;
                Dfa::new(classes, stride2, transitions, answers, start, sinks).unwrap()
            },
        )
    }

    /// The bytes that get classes of their own in a sparse [`random_dense`].
    const SPECIAL: &[u8] = b"/abc?";

    /// Paths over any bytes, and over mostly the special ones.
    fn random_paths() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let byte = prop_oneof![any::<u8>(), prop::sample::select(SPECIAL.to_vec())];
        proptest::collection::vec(proptest::collection::vec(byte, 0..30), 1..20)
    }

    proptest! {
        /// The vector search for escape bytes finds the first one at or
        /// after the start, as a byte loop does, on paths of every length
        /// around the 16-byte blocks, from every start.
        #[test]
        fn escape_search_finds_the_first_escape(
            path in proptest::collection::vec(prop_oneof![Just(b'?'), Just(b'#'), Just(0u8), any::<u8>()], 0..70),
            escapes in proptest::collection::vec(prop_oneof![Just(b'?'), Just(b'#'), Just(0u8), any::<u8>()], 1..=3),
            at in any::<prop::sample::Index>(),
        ) {
            let at = at.index(path.len() + 1);
            let padded = [escapes[0], *escapes.get(1).unwrap_or(&escapes[0]), *escapes.get(2).unwrap_or(&escapes[0])];
            let naive = (at..path.len()).find(|&i| escapes.contains(&path[i])).unwrap_or(path.len());
            prop_assert_eq!(escape_at(&path, at, padded), naive);
        }
    }

    proptest! {
        /// The word-parallel first fit finds the base a slot-by-slot scan finds.
        #[test]
        fn first_fit_is_the_first_base_that_fits(
            words in proptest::collection::vec(any::<u64>(), 0..6),
            mut classes in proptest::collection::vec(0usize..256, 1..6),
            from in 0usize..400,
        ) {
            classes.sort_unstable();
            classes.dedup();
            let taken = Taken { bits: words, first_free: 0 };
            let is_taken = |i: usize| taken.bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1);
            let naive = (from..).find(|&b| classes.iter().all(|&c| !is_taken(b + c))).unwrap();
            prop_assert_eq!(taken.first_fit(from, &classes), naive);
        }

        /// The majority shortcut gives the value a full count gives (the
        /// smallest of the most frequent).
        #[test]
        fn most_frequent_is_the_smallest_of_the_commonest(row in proptest::collection::vec(0u32..4, 1..40)) {
            let count = |v: u32| row.iter().filter(|&&t| t == v).count();
            let best = row.iter().copied().max_by_key(|&v| (count(v), std::cmp::Reverse(v))).unwrap();
            prop_assert_eq!(most_frequent(&row, &mut Vec::new()), best);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn comb_scans_like_dense(dense in random_dense(), paths in random_paths()) {
            let dfa = dense.as_ref();
            let comb = CombDfa::from_dense(&dense);
            let view = checked(&comb).unwrap().0;
            prop_assert_eq!(view.states(), dfa.states());
            prop_assert_eq!(view.max_answer(), dfa.max_answer());
            let narrow_comb = comb.narrow().unwrap();
            let narrow = checked(&narrow_comb).unwrap().0;
            prop_assert_eq!(narrow.max_answer(), dfa.max_answer());
            // The largest answer the check's pass takes is the one the tables give.
            let ((_, wide_max), (_, narrow_max)) = (checked(&comb).unwrap(), checked(&narrow_comb).unwrap());
            prop_assert_eq!((wide_max, narrow_max), (dfa.max_answer(), dfa.max_answer()));
            // And so do walks that keep their last skip from path to path.
            let (wide_last, narrow_last) = (SkipMemo::new(), SkipMemo::new());
            for path in &paths {
                prop_assert_eq!(view.scan(path), dfa.scan(path));
                prop_assert_eq!(narrow.scan(path), dfa.scan(path));
                prop_assert_eq!(walk::scan_remembering(&view, path, &wide_last), dfa.scan(path));
                prop_assert_eq!(walk::scan_remembering(&narrow, path, &narrow_last), dfa.scan(path));
            }
            // And walks that take a leading `/` as read in the state after it,
            // on the paths as they are and with a `/` in front (the start
            // state a sink, accelerated or neither, as the tables make it).
            let (wide_slash, narrow_slash) = (walk::after_slash(&view), walk::after_slash(&narrow));
            let dense_slash = walk::after_slash(&dfa);
            let dense_last = SkipMemo::new();
            for path in paths.iter().flat_map(|p| [p.clone(), [&b"/"[..], p].concat()]) {
                let want = dfa.scan(&path);
                // SAFETY (the three): each slash is `after_slash` of its automaton.
                prop_assert_eq!(unsafe { walk::scan_after_slash(&view, &path, wide_slash, &wide_last) }, want);
                prop_assert_eq!(unsafe { walk::scan_after_slash(&narrow, &path, narrow_slash, &narrow_last) }, want);
                let dense = unsafe { walk::scan_after_slash(&dfa, &path, dense_slash, &dense_last) };
                prop_assert_eq!(dense, want);
            }
        }

        /// Walks interleaved ([`walk::interleave`]) through several automata
        /// at once, more walks than a window, each automaton a run of them:
        /// through the wide combs, the narrow ones and the dense automata
        /// themselves, every walk answers as the dense automaton's scan
        /// (walks that end on their path's last byte, in a sink, or in an
        /// accelerated state skipped to the path's end among them).
        #[test]
        fn interleaved_walks_answer_as_dense(
            automata in proptest::collection::vec((random_dense(), random_paths()), 1..5),
            repeat in 1..4usize,
        ) {
            let combs: Vec<CombDfa> = automata.iter().map(|(dense, _)| CombDfa::from_dense(dense)).collect();
            let narrows: Vec<NarrowComb> = combs.iter().map(|comb| comb.narrow().unwrap()).collect();
            // Jobs: each automaton's paths, `repeat` times over, one run per automaton.
            let mut jobs: Vec<(usize, &[u8])> = Vec::new();
            let mut runs = Vec::new();
            for (a, (_, paths)) in automata.iter().enumerate() {
                let first = jobs.len();
                jobs.extend((0..repeat).flat_map(|_| paths.iter().map(move |p| (a, p.as_slice()))));
                runs.push(first..jobs.len());
            }
            let want: Vec<Option<u32>> =
                jobs.iter().map(|&(a, path)| Some(automata[a].0.scan(path))).collect();
            fn walked<A: Automaton>(walks: &walk::Walks<A>, jobs: &[(usize, &[u8])]) -> Vec<Option<u32>> {
                let mut got = vec![None; jobs.len()];
                walk::interleave(walks, |job| jobs[job as usize].1, |job, answer| {
                    assert!(got[job as usize].replace(answer).is_none(), "walk {job} finished twice");
                });
                got
            }
            let (mut wide, mut narrow) = (walk::Walks::with_capacity(0, 0), walk::Walks::with_capacity(0, 0));
            let mut dense = walk::Walks::with_capacity(0, 0);
            let mut dense32 = walk::Walks::with_capacity(0, 0);
            // Every other automaton's dense walks in 16-bit ids, as an artifact stores them.
            let narrow_ids: Vec<Vec<u16>> =
                automata.iter().map(|(d, _)| d.transitions().iter().map(|&id| id as u16).collect()).collect();
            for (a, run) in runs.iter().enumerate() {
                wide.add(checked(&combs[a]).unwrap().0, run.clone());
                narrow.add(checked(&narrows[a]).unwrap().0, run.clone());
                let d = &automata[a].0;
                if a % 2 == 0 {
                    let (ids, sinks) = (narrow_ids[a].as_slice(), d.sinks() as u32);
                    dense.add(Dfa::new(d.classes(), d.stride2(), ids, d.answers(), d.start(), sinks).unwrap(), run.clone());
                } else {
                    dense32.add(d.as_ref(), run.clone());
                }
            }
            prop_assert_eq!(&walked(&wide, &jobs), &want);
            prop_assert_eq!(&walked(&narrow, &jobs), &want);
            // The dense automata split by layout: each side answers its own jobs.
            let (d16, d32) = (walked(&dense, &jobs), walked(&dense32, &jobs));
            let both: Vec<Option<u32>> = d16.iter().zip(&d32).map(|(x, y)| x.or(*y)).collect();
            prop_assert!(d16.iter().zip(&d32).all(|(x, y)| x.is_none() != y.is_none()));
            prop_assert_eq!(&both, &want);
        }
    }
}
