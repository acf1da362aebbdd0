//! robots.txt path patterns: how they are escaped and what they match.
//!
//! A pattern matches a prefix of a URL's path-and-query. `*` matches any run
//! of bytes (including none); a `$` that ends the pattern anchors it at the end
//! of the path; a `$` anywhere else is a literal byte. Matching is on bytes and
//! case-sensitive.
//!
//! Patterns (and, by default, URL paths) are escaped before use exactly as
//! Google's reference library escapes patterns: bytes >= 0x80 become `%XX` and
//! the hex digits of existing `%xx` escapes are upper-cased. Nothing is decoded:
//! `%2A` stays three literal bytes and never means `*`.

use std::borrow::Cow;

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Escapes a pattern or a path the way Google's library escapes patterns.
///
/// Returns the input unchanged (borrowed) when nothing needs escaping, which
/// is the case for almost every real pattern and URL.
pub fn escape(input: &[u8]) -> Cow<'_, [u8]> {
    if !needs_escape(input) {
        return Cow::Borrowed(input);
    }
    let mut out = Vec::with_capacity(input.len() + 16);
    escape_into(input, &mut out);
    Cow::Owned(out)
}

/// Whether [`escape`] would change `input`.
pub fn needs_escape(input: &[u8]) -> bool {
    // Most paths hold neither `%` nor a byte >= 0x80. Blocks checked without
    // a branch per byte (so the compiler can use vector instructions) settle
    // those; the exact walk below runs only when one of the two is present.
    let plain = |block: &[u8]| block.iter().fold(true, |plain, &b| plain & (b < 0x80) & (b != b'%'));
    let blocks = input.chunks_exact(32);
    if plain(blocks.remainder()) && blocks.into_iter().all(plain) {
        return false;
    }
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b == b'%' && is_hex_at(input, i + 1) && is_hex_at(input, i + 2) {
            if input[i + 1].is_ascii_lowercase() || input[i + 2].is_ascii_lowercase() {
                return true;
            }
            i += 3;
            continue;
        }
        if b >= 0x80 {
            return true;
        }
        i += 1;
    }
    false
}

/// Appends the escaped form of `input` to `out` (see [`escape`]).
pub fn escape_into(input: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b == b'%' && is_hex_at(input, i + 1) && is_hex_at(input, i + 2) {
            out.push(b'%');
            out.push(input[i + 1].to_ascii_uppercase());
            out.push(input[i + 2].to_ascii_uppercase());
            i += 3;
        } else if b >= 0x80 {
            out.extend_from_slice(&[b'%', HEX_UPPER[usize::from(b >> 4)], HEX_UPPER[usize::from(b & 15)]]);
            i += 1;
        } else {
            out.push(b);
            i += 1;
        }
    }
}

fn is_hex_at(input: &[u8], i: usize) -> bool {
    input.get(i).is_some_and(u8::is_ascii_hexdigit)
}

/// Splits a pattern into its end anchor and its body: `/a$` is `(/a, true)`.
/// Only a final `$` anchors; any other `$` is literal.
pub fn split_anchor(pattern: &[u8]) -> (&[u8], bool) {
    match pattern.split_last() {
        Some((b'$', body)) => (body, true),
        _ => (pattern, false),
    }
}

/// Whether `pattern` matches `path` (a path-and-query starting with `/`).
///
/// The pattern matches when it matches a prefix of the path; with a final
/// `$`, the whole path. The search is greedy over the literal pieces between
/// stars, which finds a match whenever one exists: each piece is placed at its
/// leftmost possible position, and a later placement can only leave less room
/// for the pieces that follow. It allocates nothing.
///
/// The pattern is read once, piece by piece, and the first piece compared
/// byte by byte as it is read: most checks of a rule list's scan fail
/// within a few bytes of the start (a slice comparison's call, a second
/// pass to learn whether the pattern has a star and a split iterator cost
/// about as much as the check itself).
pub fn matches(pattern: &[u8], path: &[u8]) -> bool {
    let (body, anchored) = split_anchor(pattern);
    // The first piece is anchored at the start of the path.
    let mut pos = 0;
    loop {
        match body.get(pos) {
            None => return !anchored || pos == path.len(),
            Some(b'*') => break,
            Some(&b) if path.get(pos) == Some(&b) => pos += 1,
            Some(_) => return false,
        }
    }
    let mut rest = &body[pos + 1..];
    loop {
        let (piece, more) = match rest.iter().position(|&b| b == b'*') {
            Some(star) => (&rest[..star], Some(&rest[star + 1..])),
            None => (rest, None),
        };
        let Some(more) = more else {
            // The last piece; when anchored, it must sit at the very end, after `pos`.
            return if anchored {
                path.len() >= pos + piece.len() && path.ends_with(piece)
            } else {
                find(&path[pos..], piece).is_some()
            };
        };
        match find(&path[pos..], piece) {
            Some(at) => pos += at + piece.len(),
            None => return false,
        }
        rest = more;
    }
}

/// Leftmost occurrence of `needle` in `haystack`.
///
/// The candidates (positions of the needle's first byte) are found 16
/// bytes a step with SSE2, which every x86-64 CPU has (the last step over
/// the last 16 bytes, the positions seen already masked off), then
/// compared byte by byte: pieces are short and most candidates differ at
/// their second byte. A byte loop elsewhere, and for haystacks under 16.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&first, tail)) = needle.split_first() else { return Some(0) };
    // The last position the needle can start at.
    let last = haystack.len().checked_sub(needle.len())?;
    let is_at = |at: usize| haystack[at + 1..at + needle.len()].iter().zip(tail).all(|(a, b)| a == b);
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if haystack.len() >= 16 {
        use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
        let mut from = 0;
        while from <= last {
            // `from <= last <= len - 1`, so `from - block` is below 16, and
            // `block <= from <= last`.
            let block = from.min(haystack.len() - 16);
            let bytes: &[u8; 16] = haystack[block..block + 16].try_into().expect("16 bytes");
            // SAFETY: the load reads the 16 bytes of `bytes`.
            let equal = unsafe {
                let v = _mm_loadu_si128(bytes.as_ptr().cast());
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(first as i8))) as u32
            };
            let mut mask = equal & (u32::MAX << (from - block)) & (u32::MAX >> (31 - (last - block).min(31)));
            while mask != 0 {
                let at = block + mask.trailing_zeros() as usize;
                if is_at(at) {
                    return Some(at);
                }
                mask &= mask - 1;
            }
            from = block + 16;
        }
        return None;
    }
    (0..=last).find(|&at| haystack[at] == first && is_at(at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Where `needle` first occurs in `haystack`, by definition: the
    /// first window equal to it (an empty needle at 0).
    fn first_window(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        if needle.is_empty() {
            Some(0)
        } else {
            haystack.windows(needle.len()).position(|w| w == needle)
        }
    }

    /// The definition, by recursion: slow and obviously right. Each
    /// (pattern, path) position pair that fails is remembered, so that long
    /// paths with several `*` stay polynomial; the recursion is the same.
    fn reference(pattern: &[u8], path: &[u8]) -> bool {
        fn go(
            p: usize,
            s: usize,
            pattern: &[u8],
            path: &[u8],
            failed: &mut std::collections::HashSet<(usize, usize)>,
        ) -> bool {
            if failed.contains(&(p, s)) {
                return false;
            }
            let matched = match &pattern[p..] {
                [] => true,
                [b'$'] => s == path.len(),
                [b'*', ..] => (s..=path.len()).any(|i| go(p + 1, i, pattern, path, failed)),
                [c, ..] => path.get(s) == Some(c) && go(p + 1, s + 1, pattern, path, failed),
            };
            if !matched {
                failed.insert((p, s));
            }
            matched
        }
        go(0, 0, pattern, path, &mut std::collections::HashSet::new())
    }

    #[test]
    fn documented_examples() {
        // Google's path-matching table.
        assert!(matches(b"/fish", b"/fish"));
        assert!(matches(b"/fish", b"/fish.html"));
        assert!(matches(b"/fish", b"/fishheads/yummy.html"));
        assert!(!matches(b"/fish", b"/Fish.asp"));
        assert!(matches(b"/fish*", b"/fish.php?id=anything"));
        assert!(matches(b"/fish/", b"/fish/?id=anything"));
        assert!(!matches(b"/fish/", b"/fish"));
        assert!(matches(b"/*.php", b"/folder/filename.php?parameters"));
        assert!(!matches(b"/*.php", b"/windows.PHP"));
        assert!(matches(b"/*.php$", b"/filename.php"));
        assert!(!matches(b"/*.php$", b"/filename.php?parameters"));
        assert!(!matches(b"/*.php$", b"/filename.php5"));
        assert!(matches(b"/fish*.php", b"/fishheads/catfish.php?parameters"));
        assert!(!matches(b"/fish*.php", b"/Fish.PHP"));
        assert!(matches(b"/", b"/anything"));
        assert!(matches(b"/*", b"/"));
        assert!(matches(b"/$", b"/"));
        assert!(!matches(b"/$", b"/a"));
    }

    #[test]
    fn dollar_inside_is_literal() {
        assert!(matches(b"/a$b", b"/a$b"));
        assert!(!matches(b"/a$b", b"/ab"));
        assert!(!matches(b"$", b"/"));
        assert!(matches(b"/a$$", b"/a$"));
    }

    #[test]
    fn anchored_last_piece_does_not_overlap_earlier_pieces() {
        assert!(!matches(b"/ab*b$", b"/ab"));
        assert!(matches(b"/ab*b$", b"/abb"));
        assert!(matches(b"/*a*a$", b"/aa"));
        assert!(!matches(b"/*a*a$", b"/a"));
    }

    #[test]
    fn find_is_the_leftmost_occurrence() {
        assert_eq!(find(b"/a/b/xa/", b"/x"), Some(4));
        assert_eq!(find(b"/a/b/xa/", b"a/"), Some(1));
        assert_eq!(find(b"/a/b/xa/", b""), Some(0));
        assert_eq!(find(b"", b""), Some(0));
        assert_eq!(find(b"/a", b"/a/"), None);
        // The rarest byte (`x`) last in the needle and last in the haystack.
        assert_eq!(find(b"//////ax", b"ax"), Some(6));
        assert_eq!(find(b"//////a", b"ax"), None);
    }

    #[test]
    fn escaping() {
        assert_eq!(&*escape(b"/a%2fb"), b"/a%2Fb");
        assert_eq!(&*escape("/ä".as_bytes()), b"/%C3%A4");
        assert_eq!(&*escape(b"/%2A"), b"/%2A");
        assert_eq!(&*escape(b"/%zz%"), b"/%zz%");
        assert_eq!(&*escape(b"/%a"), b"/%a");
        assert!(matches!(escape(b"/plain"), Cow::Borrowed(_)));
        assert!(!needs_escape(b"/%2F/x"));
        assert!(needs_escape(b"/%2f"));
        assert!(needs_escape(&[b'/', 0xff]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn greedy_equals_definition(
            pattern in proptest::collection::vec(prop::sample::select(b"/ab*$".to_vec()), 0..8),
            path in proptest::collection::vec(prop::sample::select(b"/ab$".to_vec()), 0..10),
        ) {
            let mut path = path;
            path.insert(0, b'/');
            prop_assert_eq!(matches(&pattern, &path), reference(&pattern, &path));
        }

        #[test]
        fn greedy_equals_definition_on_long_paths(
            pattern in proptest::collection::vec(prop::sample::select(b"/aeqxZ.*$".to_vec()), 0..14),
            path in proptest::collection::vec(prop::sample::select(b"/aeqxZ.$".to_vec()), 0..120),
        ) {
            // Rare (`x`, `Z`) and common (`/`, `e`) bytes, so that pieces are
            // searched by each of their bytes, over paths longer than a vector.
            let mut path = path;
            path.insert(0, b'/');
            prop_assert_eq!(matches(&pattern, &path), reference(&pattern, &path));
        }

        #[test]
        fn find_equals_the_first_window(
            haystack in proptest::collection::vec(prop::sample::select(b"/aeqxZ".to_vec()), 0..100),
            needle in proptest::collection::vec(prop::sample::select(b"/aeqxZ".to_vec()), 0..5),
        ) {
            let want = first_window(&haystack, &needle);
            prop_assert_eq!(find(&haystack, &needle), want);
        }

        #[test]
        fn find_equals_the_first_window_for_long_needles(
            haystack in proptest::collection::vec(prop::sample::select(b"ab".to_vec()), 0..70),
            needle in proptest::collection::vec(prop::sample::select(b"ab".to_vec()), 0..24),
        ) {
            // Needles longer than a 16-byte step, in haystacks around it.
            let want = first_window(&haystack, &needle);
            prop_assert_eq!(find(&haystack, &needle), want);
            let repeated = [haystack.as_slice(), &needle, &needle].concat();
            let want = first_window(&repeated, &needle);
            prop_assert_eq!(find(&repeated, &needle), want);
        }

        #[test]
        fn escape_is_idempotent(input in proptest::collection::vec(any::<u8>(), 0..20)) {
            let once = escape(&input).into_owned();
            prop_assert!(!needs_escape(&once));
            prop_assert_eq!(escape(&once).into_owned(), once);
        }

        #[test]
        fn needs_escape_says_whether_escaping_changes_the_input(
            input in proptest::collection::vec(prop::sample::select(b"/a%2fF\x80\xff".to_vec()), 0..100),
        ) {
            let mut escaped = Vec::new();
            escape_into(&input, &mut escaped);
            prop_assert_eq!(needs_escape(&input), escaped != input);
        }
    }
}
