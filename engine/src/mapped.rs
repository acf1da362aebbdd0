//! Giving back the pages of read-only file mappings.
//!
//! A mapped file's pages count in a process's resident memory once read, and
//! stay there until unmapped. Two mappings are read in full only once: a URL
//! list, chunk after chunk, and an artifact, when it is verified. Both
//! give their pages back afterwards (MADV_DONTNEED), so that a run's memory
//! follows what it still uses, not the size of its files. The data is not
//! lost: the pages stay in the page cache, and a page read again is mapped
//! back from there.

use memmap2::Mmap;

/// Takes `len` bytes of `map` from `offset` out of this process's resident
/// memory. `offset` should be a multiple of the page size; where the system
/// refuses (another page size, no madvise), the pages simply stay resident.
pub fn release(map: &Mmap, offset: usize, len: usize) {
    #[cfg(unix)]
    // SAFETY: robotsieve maps files shared and read-only (`Mmap::map`), so
    // MADV_DONTNEED only drops this process's page table entries: there are
    // no private modifications to lose, and any later read of the range
    // faults the file's unchanged bytes back in from the page cache. Slices
    // into the range stay valid for the same reason.
    let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len) };
    #[cfg(not(unix))]
    let _ = (map, offset, len);
}
