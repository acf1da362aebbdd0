//! The artifact's layout: every record type, its encode and its decode side
//! by side, used by the artifact's writer and by [`crate::Artifact`]'s
//! reader alike, so that a new part kind or field is one change here.
//!
//! # Layout (format version 7)
//!
//! All integers are in the byte order of the machine that wrote the file
//! (the header records it; a reader of the other order refuses the file).
//! Every section, every group blob and every table in a blob starts at a
//! multiple of 8 bytes, so that mapped tables can be read in place.
//!
//! ```text
//! header    Header (56 bytes): magic "RSIEVE\r\n", format version u32,
//!           semantics version u32, byte-order mark u32, flags u32,
//!           file length u64, checksum u64, section count u32, reserved u32,
//!           content digest u64
//! sections  up to MAX_SECTIONS (16) entries, the unused ones zero
//! sections  SectionEntry (32 bytes) each: kind, offset, length, checksum
//! GROUPS    the group blobs, one per distinct compiled group, in id order
//! GROUP_INDEX  u64 per group: the file offset of its blob
//! KEYS      the canonical origin keys (`scheme://host[:port]`), concatenated
//! ORIGINS   OriginRecord per origin: key offset and length in KEYS, fetch
//!           information, one group id per agent
//! SLOTS     origin hash table: power-of-two Slots { hash u64, origin u64 }
//!           (origin u64::MAX = empty), home slot = the hash's top bits,
//!           linear probing (wrapping at the end)
//! PREFERENCES  optional: the Content-Signal and Content-Usage lines per
//!           origin and agent ([`PreferenceTable`] has its layout)
//! CRAWL     optional: each origin's sitemaps and each crawler's
//!           crawl-delay, never used for verdicts (`CrawlTable`)
//! FRESHNESS optional: a FetchFacts (16 bytes) per origin, by origin
//!           number: fetched_at i64 (unix seconds, i64::MIN unknown),
//!           max_age u32 and failures_in_a_row u32 (u32::MAX none), the
//!           facts of its governing copy the cache policy reads; written
//!           only when some origin has one (never for files given directly)
//! META      JSON: agents, shard, build information
//! ```
//!
//! A group blob is self-contained: a `GroupHead` (with the blob's length
//! and a checksum of the rest of it), its `PartRecord`s, then the tables
//! they point at, all at offsets relative to the blob's start. A blob is
//! therefore encoded on any thread, before its place in the file is known,
//! and checked on its own the first time a lookup reaches it.
//!
//! # Invariants
//!
//! - The header checksum covers the header (its checksum field read as 0)
//!   and the section table with its unused entries (up to [`MAX_SECTIONS`]); each section entry carries the checksum of its
//!   section's bytes, except GROUPS (0), whose blobs carry their own.
//! - The content digest is the [`Checksum`] of every group blob's
//!   checksums in id order (`groups::group_checksums`), then each section
//!   entry's kind (as u64) and checksum in table order (`ContentDigest`):
//!   equal for copies, different for different contents, read with the
//!   header alone. Opening does not recompute it; `Artifact::verify` does.
//! - Opening checks the header, the section table, META, GROUP_INDEX, KEYS,
//!   ORIGINS, PREFERENCES and SLOTS (checksums, and every offset and id in them), so that
//!   finding an origin and its group ids can neither read out of bounds nor
//!   panic. A group blob is checked (checksum, then every table and
//!   transition) before its first use answers anything (`GroupView::check`),
//!   and on the strength of that check the walks read its automata without
//!   bounds checks; so is CRAWL (checksum, then every id and offset), which no verdict
//!   reads, and FRESHNESS (checksum; opening checks only that it holds one
//!   record per origin), whose every value is valid.
//! - Sections follow one another from [`GROUPS_START`] to the end of the
//!   file, with fewer than 8 zero bytes between two; group blobs follow one
//!   another through GROUPS in id order. No byte of the file is therefore
//!   outside a checksum or a check.
//! - Group ids in ORIGINS are below the number of groups; origin numbers in
//!   SLOTS are below the number of origins, each origin in exactly one slot.
//! - The format version sits at byte 8 in every version, so an older file
//!   is named by its version and the user told to recompile.
//!
//! Version history: 1 dense parts; 2 added the comb part; 3 paired the comb
//! arrays and added the 16-bit comb; 4 self-contained checksummed group
//! blobs, one origin record per origin, the slot table by top bits (so that
//! it is built from sorted runs), per-section checksums; 5 the CRAWL section
//! (sitemaps, crawl-delays), groups checked on first use; 6 the [`Checksum`]
//! of 32 u64 lanes of two 32-bit multiplies a step, vectorised, cheaper to
//! check and without the certain two-bit collision of format 5's
//! one-multiply lanes; 7 the content digest in a 56-byte header, room for
//! 16 sections, the FRESHNESS section.

mod checksum;
mod errors;
pub(crate) mod groups;
pub(crate) mod header;
mod lists;
mod origins;

pub use checksum::{checksum, Checksum};
pub use errors::{
    Damage, DamageKind, GroupDamage, GroupTable, HeaderError, MetaProblem, PartProblem, ShardSetProblem,
    VersionMismatch, Versioned,
};
pub(crate) use errors::{Fault, ListProblem};
pub use groups::{encode_group, EncodeError, RuleText};
pub(crate) use header::ContentDigest;
pub use header::{Header, Section, SectionEntry};
pub use lists::{CrawlRefs, PreferenceTable, Selection};
pub use origins::{FetchFacts, FetchInfo, FetchKind};

pub(crate) use groups::{Check, GroupHead, GroupView, PartView};
pub(crate) use lists::{
    encode_preference_set, encode_string_list, CrawlHeader, CrawlTable, ListSection, PreferenceHeader, CRAWL_LISTS,
    PREFERENCE_LISTS,
};
pub(crate) use origins::{OriginRecord, Slot};

/// The first eight bytes of every artifact. The CR LF catches text-mode
/// mangling, as in PNG.
pub const MAGIC: [u8; 8] = *b"RSIEVE\r\n";
/// The layout version this code reads and writes.
pub const FORMAT_VERSION: u32 = 7;
/// The version of the matching semantics the automata were built with. A
/// change of semantics (a fix to Google conformance) bumps it, so old
/// artifacts are refused rather than silently answering differently.
pub const SEMANTICS_VERSION: u32 = 1;
/// Written in native order; reads back differently on a machine of the other order.
pub const BYTE_ORDER_MARK: u32 = 0x0102_0304;
/// Header flag: the automata identify rules and the explanation tables are present.
pub const FLAG_EXPLAIN: u32 = 1;
/// An empty hash-table slot.
pub(crate) const EMPTY_SLOT: u64 = u64::MAX;
/// `rules[rank]` when the rank does not identify a rule.
pub(crate) const NO_RULE: u32 = u32::MAX;
/// At most this many sections; the writer reserves room for the table.
pub const MAX_SECTIONS: usize = 16;
/// Where the first group blob starts: after the header and a full section table.
pub const GROUPS_START: usize = Header::LEN + MAX_SECTIONS * SectionEntry::LEN;

/// Rounds up to a multiple of 8.
pub(crate) fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

#[inline]
fn ne32(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

#[inline]
fn ne64(b: &[u8], off: usize) -> u64 {
    u64::from_ne_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

fn put32(out: &mut [u8], off: usize, v: u32) {
    out[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(out: &mut [u8], off: usize, v: u64) {
    out[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

/// The GROUP_INDEX entry of a group: the file offset of its blob. The
/// reader takes the section in place as `&[u64]` (aligned, native order).
pub(crate) fn encode_group_offset(offset: u64) -> [u8; 8] {
    offset.to_ne_bytes()
}

#[cfg(test)]
mod tests {
    use super::groups::PartRecord;
    use super::*;

    #[test]
    fn records_read_back_what_was_written() {
        let header = Header { flags: FLAG_EXPLAIN, file_len: 12345, checksum: 99, sections: 6, digest: 77 };
        assert_eq!(Header::decode(&header.encode()), Ok(header));
        let entry = SectionEntry { section: Section::Keys, offset: 8, len: 16, checksum: 7 };
        assert_eq!(SectionEntry::decode(&entry.encode()), Ok(entry));
        let origin = OriginRecord { key_off: 3, key_len: 20, info: 0x2_01f4, groups: vec![1, 2, 3] };
        let mut b = Vec::new();
        origin.encode(&mut b);
        assert_eq!(b.len(), 32);
        assert_eq!((OriginRecord::key_range(&b), OriginRecord::info(&b)), ((3, 20), 0x2_01f4));
        assert_eq!((0..3).map(|a| OriginRecord::group(&b, a)).collect::<Vec<_>>(), vec![1, 2, 3]);
        let slot = Slot { hash: 5, origin: 9 };
        assert_eq!(Slot::decode(&slot.encode()), slot);
        let part = PartRecord { kind: 1, stride2: 2, count: 3, sinks: 4, start: 5, slots: 6, a: 7, b: 8, c: 9 };
        let mut pb = [0u8; PartRecord::LEN];
        part.encode(&mut pb);
        assert_eq!(PartRecord::decode(&pb), part);
    }
}
