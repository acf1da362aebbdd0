//! The CPU features robotsieve's fast paths use, detected at run time.
//!
//! Every SIMD path asks here rather than calling `is_x86_feature_detected!`
//! itself, so that what a path needs is said in one place and the check is
//! the same everywhere. A feature is a token ([`Avx2`], [`Sse41`]) that only
//! its `detect` makes, as memchr does: code that holds one knows the CPU has
//! the feature, and may call the `#[target_feature]` functions it guards.

/// Proof that the running CPU has AVX2: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

impl Avx2 {
    /// The token when the CPU has AVX2 (always `None` off x86-64). The
    /// standard library caches the answer, so this costs a load per call.
    #[inline]
    pub fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            return Some(Avx2(()));
        }
        None
    }

    /// Whether the CPU has AVX2.
    #[inline]
    pub fn available() -> bool {
        Avx2::detect().is_some()
    }
}

/// Proof that the running CPU has SSE4.1 and SSSE3 (the 128-bit paths for
/// CPUs without AVX2): only [`Sse41::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Sse41(());

impl Sse41 {
    /// The token when the CPU has SSE4.1 and SSSE3 (always `None` off x86-64).
    #[inline]
    pub fn detect() -> Option<Sse41> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("sse4.1") && std::is_x86_feature_detected!("ssse3") {
            return Some(Sse41(()));
        }
        None
    }

    /// Whether the CPU has SSE4.1 and SSSE3.
    #[inline]
    pub fn available() -> bool {
        Sse41::detect().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn tokens_agree_with_the_standard_library() {
        assert_eq!(Avx2::available(), std::is_x86_feature_detected!("avx2"));
        assert_eq!(
            Sse41::available(),
            std::is_x86_feature_detected!("sse4.1") && std::is_x86_feature_detected!("ssse3")
        );
    }
}
