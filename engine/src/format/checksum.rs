//! The artifact's checksum, with its AVX2 and SSE4.1 paths.

/// The artifact's checksum (format 6): a 64-bit hash of bytes, fed a piece
/// at a time (the writer checksums sections as it streams them), defined
/// here because it is part of the format and must never change with a
/// dependency's version or with the CPU that computes it.
///
/// # Definition
///
/// The bytes are cut into blocks of `CHECKSUM_BLOCK` (256) bytes, the
/// last one padded with zeros. Word `i` of a block (8 bytes, little endian)
/// goes to lane `i` of 32 u64 lanes, each started at its own constant and
/// updated by the mix `lane = M2(rotl(M1(lane ^ word), 8))`, where `Mk`
/// multiplies both 32-bit halves of a u64 by the odd constant `Kk`. Each
/// lane then takes two closing steps with zero words, and the eight groups
/// of four lanes (`4j..4j + 4`) are folded pairwise by the
/// same mix (group `2j + 1` as the words of group `2j`), eight to four to
/// two to one (a tree, so that the fold's latency is three mixes), and the
/// four lanes left and the byte count go through a 64-bit scalar finish
/// (`h = (h ^ lane) * K rotl 31` from `h = count * K`, then `h ^ h >> 32`).
///
/// With AVX2 (detected at run time; std caches the answer for the process)
/// the 32 lanes live in eight ymm registers and a block costs eight times
/// `vpxor` (with the load), `vpmulld`, `vpshufb` (the rotation by a byte),
/// `vpmulld`: 4 instructions per 32 bytes against format 5's 15, eight
/// independent chains to cover the multiply's latency. With SSE4.1 the
/// lanes go in two passes of eight xmm registers; any other CPU runs the
/// plain definition lane by lane. All give the same value (tested against
/// the plain definition, which stays the reference).
///
/// # Strength
///
/// - A change confined to one 8-byte word of the input is always caught:
///   the mix is a bijection of the word for a fixed lane and of the lane for
///   a fixed word (xor, multiplies by odd constants, a rotation), so the
///   word's lane differs after its step and after every later step; the
///   fold and the finish are bijections of each lane given the others; the
///   byte count (so the padding too) is hashed. The same holds for a change
///   of the length alone.
/// - Random damage escapes with probability about 2^-64: each lane is 64
///   bits, as are the fold and the finish.
/// - No cheap structured collision: a lane's difference can be undone only
///   by a word of the same lane (256 bytes on) differing by exactly that
///   difference, and no nonzero difference crosses the mix with certainty:
///   a multiply keeps a difference unchanged only in a half's top bit, which
///   the rotation moves to bit 7 of a half, whence the second multiply
///   spreads it over the 25 bits above through the carries. The likeliest
///   cancellation found (every 1- and 2-bit difference in a word, 4,096
///   random lane states) needs a given 5-bit difference in the lane's next
///   word and happens for 42 in 4,096 states (2^-6.6): a specific 7-bit
///   change in two words, which still fails on 99% of files. Two lanes meet
///   first in the fold, where a pair cancels if both lanes changed by the
///   same difference: the closing steps put a change in the last block three
///   mixes deep there (with one, the same two bits flipped in two words 32
///   bytes apart in the last block gave equal differences for 2^-9.7 of
///   state pairs; with three, no 1- or 2-bit change gave a repeated
///   difference above chance in 65,536 states, 2^-16). Format 5's
///   lanes (`(lane ^ w) * K rotl 29`, one multiply) collided with certainty
///   when bit 63 of a word and bit 28 of the word 32 bytes on were flipped;
///   a plain add, xor or Fletcher sum collides on two top-bit flips.
#[derive(Clone, Debug)]
pub struct Checksum {
    lanes: ChecksumLanes,
    pending: [u8; CHECKSUM_BLOCK],
    pending_len: usize,
    total: u64,
}

/// The bytes a [`Checksum`] takes a step: one 8-byte word for each of its 32 lanes.
pub(crate) const CHECKSUM_BLOCK: usize = 256;
/// A [`Checksum`]'s state between blocks.
type ChecksumLanes = [u64; CHECKSUM_BLOCK / 8];
/// The finish's multiplier.
const CHECKSUM_K: u64 = 0x9E37_79B9_7F4A_7C15;
/// The mix's two odd 32-bit multipliers.
const CHECKSUM_K1: u32 = 0x9E37_79B1;
const CHECKSUM_K2: u32 = 0x85EB_CA77;
/// Each lane's start: distinct, odd, well spread.
const CHECKSUM_SEED: ChecksumLanes = {
    let mut lanes = [0u64; CHECKSUM_BLOCK / 8];
    let mut i = 0;
    while i < lanes.len() {
        lanes[i] = ((i as u64 + 1).wrapping_mul(CHECKSUM_K) ^ 0x243F_6A88_85A3_08D3) | 1;
        i += 1;
    }
    lanes
};

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum::new()
    }
}

impl Checksum {
    /// The checksum of nothing yet.
    pub fn new() -> Checksum {
        Checksum { lanes: CHECKSUM_SEED, pending: [0; CHECKSUM_BLOCK], pending_len: 0, total: 0 }
    }

    /// Feeds more bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.pending_len > 0 {
            let take = (CHECKSUM_BLOCK - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < CHECKSUM_BLOCK {
                return;
            }
            let block = self.pending;
            checksum_blocks(&mut self.lanes, &block);
            self.pending_len = 0;
        }
        let whole = bytes.len() - bytes.len() % CHECKSUM_BLOCK;
        checksum_blocks(&mut self.lanes, &bytes[..whole]);
        let rest = &bytes[whole..];
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The checksum of everything fed.
    pub fn finish(&self) -> u64 {
        checksum_digest(&self.lanes, &[], &self.pending[..self.pending_len], self.total)
    }
}

/// The `Checksum` of `bytes`.
pub fn checksum(bytes: &[u8]) -> u64 {
    let (whole, tail) = bytes.split_at(bytes.len() - bytes.len() % CHECKSUM_BLOCK);
    checksum_digest(&CHECKSUM_SEED, whole, tail, bytes.len() as u64)
}

/// The checksum of `total` bytes: `lanes` fed the whole blocks `whole`, then
/// `tail` (shorter than a block) padded with zeros, folded and finished.
fn checksum_digest(lanes: &ChecksumLanes, whole: &[u8], tail: &[u8], total: u64) -> u64 {
    let mut h = total.wrapping_mul(CHECKSUM_K);
    for lane in checksum_fold(lanes, whole, tail) {
        h = (h ^ lane).wrapping_mul(CHECKSUM_K).rotate_left(31);
    }
    h ^ (h >> 32)
}

/// Both 32-bit halves of `t` multiplied by `k`.
fn halves_mul(t: u64, k: u32) -> u64 {
    let lo = (t as u32).wrapping_mul(k);
    let hi = ((t >> 32) as u32).wrapping_mul(k);
    (u64::from(hi) << 32) | u64::from(lo)
}

/// The plain definition of a lane's step: the reference the vector paths
/// are tested against.
fn checksum_mix(lane: u64, word: u64) -> u64 {
    halves_mul(halves_mul(lane ^ word, CHECKSUM_K1).rotate_left(8), CHECKSUM_K2)
}

/// Feeds whole blocks (`bytes.len()` a multiple of [`CHECKSUM_BLOCK`]) by
/// the fastest path this CPU has.
fn checksum_blocks(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    debug_assert_eq!(bytes.len() % CHECKSUM_BLOCK, 0);
    #[cfg(target_arch = "x86_64")]
    {
        if robotsieve_core::arch::Avx2::available() {
            // SAFETY: the CPU has AVX2 (detected above, once per process).
            return unsafe { checksum_blocks_avx2(lanes, bytes) };
        }
        if robotsieve_core::arch::Sse41::available() {
            // SAFETY: the CPU has SSE4.1 and SSSE3 (detected above).
            return unsafe { checksum_blocks_sse41(lanes, bytes) };
        }
    }
    checksum_blocks_plain(lanes, bytes)
}

/// [`checksum_blocks`] by the plain definition, lane by lane.
fn checksum_blocks_plain(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    for block in bytes.chunks_exact(CHECKSUM_BLOCK) {
        for (lane, word) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = checksum_mix(*lane, u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
    }
}

/// `lanes` fed the whole blocks `whole` and `tail` padded with zeros, then
/// lanes `4k..4k + 4` folded into lanes `0..4`, by the fastest path this CPU
/// has.
fn checksum_fold(lanes: &ChecksumLanes, whole: &[u8], tail: &[u8]) -> [u64; 4] {
    debug_assert!(whole.len() % CHECKSUM_BLOCK == 0 && tail.len() < CHECKSUM_BLOCK);
    #[cfg(target_arch = "x86_64")]
    if robotsieve_core::arch::Avx2::available() {
        // SAFETY: the CPU has AVX2 (detected above, once per process).
        return unsafe { checksum_fold_avx2(lanes, whole, tail) };
    }
    let mut lanes = *lanes;
    checksum_blocks(&mut lanes, whole);
    if !tail.is_empty() {
        let mut block = [0u8; CHECKSUM_BLOCK];
        block[..tail.len()].copy_from_slice(tail);
        checksum_blocks(&mut lanes, &block);
    }
    checksum_fold_plain(&lanes)
}

/// The two closing steps and the fold of [`checksum_fold`] by the plain definition.
fn checksum_fold_plain(lanes: &ChecksumLanes) -> [u64; 4] {
    let lanes = lanes.map(|lane| checksum_mix(checksum_mix(lane, 0), 0));
    let mix = |a: [u64; 4], b: [u64; 4]| -> [u64; 4] { std::array::from_fn(|i| checksum_mix(a[i], b[i])) };
    let group = |j: usize| -> [u64; 4] { std::array::from_fn(|i| lanes[4 * j + i]) };
    let [a, b, c, d] =
        [mix(group(0), group(1)), mix(group(2), group(3)), mix(group(4), group(5)), mix(group(6), group(7))];
    mix(mix(a, b), mix(c, d))
}

/// The mix on vectors of u64 lanes: `$xor`, `$mul` (32-bit lanes, low
/// half), `$shuffle` (bytes) are the instruction set's intrinsics.
#[cfg(target_arch = "x86_64")]
macro_rules! checksum_mix_vector {
    ($lane:expr, $word:expr, $k1:expr, $k2:expr, $rot:expr, $xor:ident, $mul:ident, $shuffle:ident) => {
        $mul($shuffle($mul($xor($lane, $word), $k1), $rot), $k2)
    };
}

/// The AVX2 mix's constants: `K1`, `K2` in every 32-bit lane, and the
/// `vpshufb` indices that rotate each u64 left by 8 bits (byte j takes byte
/// j - 1 mod 8).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checksum_constants_avx2() -> [std::arch::x86_64::__m256i; 3] {
    use std::arch::x86_64::*;
    [
        _mm256_set1_epi32(CHECKSUM_K1 as i32),
        _mm256_set1_epi32(CHECKSUM_K2 as i32),
        _mm256_setr_epi8(
            7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14,
        ),
    ]
}

/// [`checksum_blocks`] with AVX2: the 32 lanes in eight ymm registers, a
/// block eight independent mixes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checksum_blocks_avx2(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    use std::arch::x86_64::*;
    let state = lanes.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `lanes` is 256 bytes: eight unaligned 32-byte loads.
    let mut acc: [__m256i; 8] = std::array::from_fn(|j| unsafe { _mm256_loadu_si256(state.add(j)) });
    // SAFETY: the CPU has AVX2.
    unsafe { checksum_run_avx2(&mut acc, bytes) };
    for (j, a) in acc.into_iter().enumerate() {
        // SAFETY: as the loads.
        unsafe { _mm256_storeu_si256(state.add(j), a) };
    }
}

/// The whole blocks of `bytes` fed to the lanes `acc` (ymm j holds lanes
/// 4j..4j + 4).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn checksum_run_avx2(acc: &mut [std::arch::x86_64::__m256i; 8], bytes: &[u8]) {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX2.
    let [k1, k2, rot] = unsafe { checksum_constants_avx2() };
    for block in bytes.chunks_exact(CHECKSUM_BLOCK) {
        let words = block.as_ptr().cast::<__m256i>();
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: the block is 256 bytes: word group j is bytes 32j..32j + 32.
            let w = unsafe { _mm256_loadu_si256(words.add(j)) };
            *a = checksum_mix_vector!(*a, w, k1, k2, rot, _mm256_xor_si256, _mm256_mullo_epi32, _mm256_shuffle_epi8);
        }
    }
}

/// [`checksum_fold`] with AVX2: the lanes stay in eight ymm registers from
/// the first block to the fold; the tail is fed through a zeroed block.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn checksum_fold_avx2(lanes: &ChecksumLanes, whole: &[u8], tail: &[u8]) -> [u64; 4] {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX2.
    let [k1, k2, rot] = unsafe { checksum_constants_avx2() };
    let state = lanes.as_ptr().cast::<__m256i>();
    // SAFETY: `lanes` is 256 bytes: eight unaligned 32-byte loads.
    let mut acc: [__m256i; 8] = std::array::from_fn(|j| unsafe { _mm256_loadu_si256(state.add(j)) });
    // SAFETY: the CPU has AVX2.
    unsafe { checksum_run_avx2(&mut acc, whole) };
    if !tail.is_empty() {
        // The tail padded with zeros to a block and fed as the loop feeds
        // one: a copy of at most 255 bytes and eight mixes, about half the
        // instructions of reading it word group by word group in place
        // (a group blob's tail is mostly a few hundred bytes of a first use's
        // fixed cost).
        let mut block = [0u8; CHECKSUM_BLOCK];
        block[..tail.len()].copy_from_slice(tail);
        // SAFETY: the CPU has AVX2.
        unsafe { checksum_run_avx2(&mut acc, &block) };
    }
    let mix = |a, b| checksum_mix_vector!(a, b, k1, k2, rot, _mm256_xor_si256, _mm256_mullo_epi32, _mm256_shuffle_epi8);
    // Two closing steps with zero words: the multiplies and the rotation.
    let close = |a| _mm256_mullo_epi32(_mm256_shuffle_epi8(_mm256_mullo_epi32(a, k1), rot), k2);
    let acc = acc.map(|a| close(close(a)));
    let [a, b, c, d] = [mix(acc[0], acc[1]), mix(acc[2], acc[3]), mix(acc[4], acc[5]), mix(acc[6], acc[7])];
    let folded = mix(mix(a, b), mix(c, d));
    let mut out = [0u64; 4];
    // SAFETY: `out` is 32 bytes.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), folded) };
    out
}

/// [`checksum_blocks`] with SSE4.1 (`pmulld`) and SSSE3 (`pshufb`): lanes
/// are independent, so the first 16 go over every block in eight xmm
/// registers, then the other 16.
///
/// # Safety
/// The CPU must support SSE4.1 and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1,ssse3")]
unsafe fn checksum_blocks_sse41(lanes: &mut ChecksumLanes, bytes: &[u8]) {
    use std::arch::x86_64::*;
    let k1 = _mm_set1_epi32(CHECKSUM_K1 as i32);
    let k2 = _mm_set1_epi32(CHECKSUM_K2 as i32);
    let rot = _mm_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14);
    for half in 0..2 {
        // SAFETY: `lanes` is 256 bytes; half h is xmm words 8h..8h + 8.
        let state = unsafe { lanes.as_mut_ptr().cast::<__m128i>().add(8 * half) };
        // SAFETY: eight unaligned 16-byte loads within the half.
        let mut acc: [__m128i; 8] = std::array::from_fn(|j| unsafe { _mm_loadu_si128(state.add(j)) });
        for block in bytes.chunks_exact(CHECKSUM_BLOCK) {
            // SAFETY: the block is 256 bytes; this half's words are bytes 128h..128h + 128.
            let words = unsafe { block.as_ptr().cast::<__m128i>().add(8 * half) };
            for (j, a) in acc.iter_mut().enumerate() {
                // SAFETY: within the block, as above.
                let w = unsafe { _mm_loadu_si128(words.add(j)) };
                *a = checksum_mix_vector!(*a, w, k1, k2, rot, _mm_xor_si128, _mm_mullo_epi32, _mm_shuffle_epi8);
            }
        }
        for (j, a) in acc.into_iter().enumerate() {
            // SAFETY: as the loads.
            unsafe { _mm_storeu_si128(state.add(j), a) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum by its plain definition, word by word: the reference
    /// for [`checksum`] and [`Checksum`] whatever path the CPU takes.
    fn checksum_reference(bytes: &[u8]) -> u64 {
        let mut lanes = CHECKSUM_SEED;
        for block in bytes.chunks(CHECKSUM_BLOCK) {
            let mut padded = [0u8; CHECKSUM_BLOCK];
            padded[..block.len()].copy_from_slice(block);
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane = checksum_mix(*lane, u64::from_le_bytes(padded[8 * i..8 * i + 8].try_into().unwrap()));
            }
        }
        for lane in &mut lanes {
            *lane = checksum_mix(checksum_mix(*lane, 0), 0);
        }
        let mix4 = |a: [u64; 4], b: [u64; 4]| -> [u64; 4] { std::array::from_fn(|i| checksum_mix(a[i], b[i])) };
        let group = |j: usize| -> [u64; 4] { lanes[4 * j..4 * j + 4].try_into().unwrap() };
        let folded = mix4(
            mix4(mix4(group(0), group(1)), mix4(group(2), group(3))),
            mix4(mix4(group(4), group(5)), mix4(group(6), group(7))),
        );
        let mut h = (bytes.len() as u64).wrapping_mul(CHECKSUM_K);
        for lane in folded {
            h = (h ^ lane).wrapping_mul(CHECKSUM_K).rotate_left(31);
        }
        h ^ (h >> 32)
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len as u32).map(|i| (i.wrapping_mul(7919) % 251) as u8).collect()
    }

    #[test]
    fn the_checksum_fed_in_pieces_is_the_checksum_of_the_whole() {
        let data = pattern(1000);
        let whole = checksum(&data);
        for piece in [1, 3, 31, 32, 33, 100, 255, 256, 257, 999] {
            let mut sum = Checksum::new();
            data.chunks(piece).for_each(|c| sum.update(c));
            assert_eq!(sum.finish(), whole, "pieces of {piece}");
        }
        assert_ne!(checksum(&data[..999]), whole);
    }

    #[test]
    fn the_checksum_is_the_format_6_definition() {
        // Pinned: a change of these values is a change of the format.
        assert_eq!(checksum(b""), checksum_reference(b""));
        assert_eq!(checksum(b""), 0x9A06_EDB5_406D_0B62);
        assert_eq!(checksum(&pattern(1000)), 0x754A_AA97_F74B_DC50);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn the_checksum_by_any_path_and_in_any_pieces_is_the_reference(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..5000),
            cuts in proptest::collection::vec(0usize..5000, 0..6),
        ) {
            let expected = checksum_reference(&bytes);
            proptest::prop_assert_eq!(checksum(&bytes), expected);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut sum = Checksum::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                sum.update(&bytes[from..cut]);
                from = cut;
            }
            proptest::prop_assert_eq!(sum.finish(), expected);
            let whole = bytes.len() - bytes.len() % CHECKSUM_BLOCK;
            let mut plain = CHECKSUM_SEED;
            checksum_blocks_plain(&mut plain, &bytes[..whole]);
            #[cfg(target_arch = "x86_64")]
            {
                if robotsieve_core::arch::Avx2::available() {
                    let mut lanes = CHECKSUM_SEED;
                    // SAFETY: the CPU has AVX2.
                    unsafe { checksum_blocks_avx2(&mut lanes, &bytes[..whole]) };
                    proptest::prop_assert_eq!(lanes, plain);
                    let tail = &bytes[whole..];
                    let mut padded = [0u8; CHECKSUM_BLOCK];
                    padded[..tail.len()].copy_from_slice(tail);
                    let mut plain_padded = plain;
                    checksum_blocks_plain(&mut plain_padded, &padded);
                    // SAFETY: as above.
                    let folded = unsafe { checksum_fold_avx2(&CHECKSUM_SEED, &bytes[..whole], tail) };
                    proptest::prop_assert_eq!(folded, checksum_fold_plain(if tail.is_empty() { &plain } else { &plain_padded }));
                }
                if robotsieve_core::arch::Sse41::available() {
                    let mut lanes = CHECKSUM_SEED;
                    // SAFETY: the CPU has SSE4.1 and SSSE3.
                    unsafe { checksum_blocks_sse41(&mut lanes, &bytes[..whole]) };
                    proptest::prop_assert_eq!(lanes, plain);
                }
            }
        }
    }

    #[test]
    fn one_changed_word_and_two_flipped_bits_in_one_lane_are_caught() {
        let data = pattern(3 * CHECKSUM_BLOCK + 40);
        let whole = checksum(&data);
        // Any change of one word (here every bit, and every byte to every
        // value in a few words) and any change of the length.
        for bit in 0..data.len() * 8 {
            let mut d = data.clone();
            d[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(checksum(&d), whole, "bit {bit}");
        }
        for at in [0, 7, 255, 256, 700, data.len() - 1] {
            for value in 0..=255u8 {
                let mut d = data.clone();
                d[at] = value;
                assert_eq!(checksum(&d) == whole, value == data[at], "byte {at} = {value}");
            }
        }
        let mut longer = data.clone();
        longer.push(0);
        assert_ne!(checksum(&longer), whole);
        assert_ne!(checksum(&data[..data.len() - 1]), whole);
        // Two bits in two words of one lane, a block apart: format 5's lanes
        // (one multiply) let bit 63 of a word and bit 28 of the next undo each
        // other; every pair is caught here.
        for (first, second) in [(8, 8 + CHECKSUM_BLOCK), (CHECKSUM_BLOCK - 8, 2 * CHECKSUM_BLOCK - 8)] {
            for a in 0..64 {
                for b in 0..64 {
                    let mut d = data.clone();
                    d[first + a / 8] ^= 1 << (a % 8);
                    d[second + b / 8] ^= 1 << (b % 8);
                    assert_ne!(checksum(&d), whole, "bits {a} and {b}");
                }
            }
        }
    }
}
