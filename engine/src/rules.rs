//! The per-rule fallback part behind an aho-corasick prefilter. (Being written.)
