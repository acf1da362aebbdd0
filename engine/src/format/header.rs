//! The header and the section table: the first [`GROUPS_START`] bytes of
//! every artifact, what they hold and how they are sealed.

use super::groups::group_checksums;
use super::{
    checksum, ne32, ne64, put32, put64, Checksum, Damage, Fault, GroupHead, HeaderError, VersionMismatch, Versioned,
    BYTE_ORDER_MARK, FLAG_EXPLAIN, FORMAT_VERSION, GROUPS_START, MAGIC, MAX_SECTIONS, SEMANTICS_VERSION,
};

/// The fixed header at the start of every artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `FLAG_EXPLAIN` or 0.
    pub flags: u32,
    /// Length of the whole file.
    pub file_len: u64,
    /// Checksum of the header (this field as 0) and the section table.
    pub checksum: u64,
    /// Number of section entries after the header.
    pub sections: u32,
    /// The content digest (`ContentDigest`): a hash of every section's
    /// checksum and every group blob's, so that two copies of one build
    /// compare equal from their first bytes, and two builds of different
    /// inputs differ, without reading the rest.
    pub digest: u64,
}

impl Header {
    /// Encoded size.
    pub const LEN: usize = 56;
    /// Where the checksum lies.
    pub const CHECKSUM_AT: std::ops::Range<usize> = 32..40;
    /// Where the content digest lies.
    pub const DIGEST_AT: usize = 48;

    /// Encodes with this build's versions and byte-order mark.
    pub fn encode(&self) -> [u8; Header::LEN] {
        let mut b = [0u8; Header::LEN];
        b[..8].copy_from_slice(&MAGIC);
        put32(&mut b, 8, FORMAT_VERSION);
        put32(&mut b, 12, SEMANTICS_VERSION);
        put32(&mut b, 16, BYTE_ORDER_MARK);
        put32(&mut b, 20, self.flags);
        put64(&mut b, 24, self.file_len);
        put64(&mut b, 32, self.checksum);
        put32(&mut b, 40, self.sections);
        put64(&mut b, Header::DIGEST_AT, self.digest);
        b
    }

    /// Decodes and checks magic, byte order, versions and flags; an older
    /// or newer file is a [`HeaderError::Version`], named by its version.
    pub fn decode(b: &[u8]) -> Result<Header, HeaderError> {
        let damaged = |fault: Fault| Err(HeaderError::Invalid(fault.into()));
        if b.len() < Header::LEN {
            return damaged(Fault::ShortFile { len: b.len() });
        }
        if b[..8] != MAGIC {
            return damaged(Fault::NotAnArtifact);
        }
        if ne32(b, 16) != BYTE_ORDER_MARK {
            return damaged(Fault::OtherByteOrder);
        }
        let (format, semantics) = (ne32(b, 8), ne32(b, 12));
        if format != FORMAT_VERSION {
            let supported = FORMAT_VERSION;
            return Err(HeaderError::Version(VersionMismatch { of: Versioned::Format, found: format, supported }));
        }
        if semantics != SEMANTICS_VERSION {
            let supported = SEMANTICS_VERSION;
            return Err(HeaderError::Version(VersionMismatch {
                of: Versioned::Semantics,
                found: semantics,
                supported,
            }));
        }
        let flags = ne32(b, 20);
        if flags & !FLAG_EXPLAIN != 0 {
            return damaged(Fault::UnknownFlags { flags });
        }
        Ok(Header {
            flags,
            file_len: ne64(b, 24),
            checksum: ne64(b, 32),
            sections: ne32(b, 40),
            digest: ne64(b, Header::DIGEST_AT),
        })
    }

    /// The checksum of a header and its whole section table as stored (the
    /// checksum field counts as 0; the unused entries, up to
    /// [`MAX_SECTIONS`], are zero and covered too).
    pub fn checksum_of(header_and_table: &[u8]) -> u64 {
        let mut sum = Checksum::new();
        sum.update(&header_and_table[..Header::CHECKSUM_AT.start]);
        sum.update(&[0; 8]);
        sum.update(&header_and_table[Header::CHECKSUM_AT.end..]);
        sum.finish()
    }

    /// Fills in the checksum of a header and its section table
    /// ([`Header::checksum_of`]), as the writer does last and
    /// `reseal` does again.
    pub fn seal(header_and_table: &mut [u8]) {
        let sum = Header::checksum_of(header_and_table);
        header_and_table[Header::CHECKSUM_AT].copy_from_slice(&sum.to_ne_bytes());
    }

    /// The first [`GROUPS_START`] bytes of an artifact: this header (its
    /// checksum field ignored), the section table with its unused entries
    /// zero, sealed.
    pub fn encode_with_sections(&self, entries: &[SectionEntry]) -> Vec<u8> {
        let mut head = Vec::with_capacity(GROUPS_START);
        head.extend_from_slice(&Header { sections: entries.len() as u32, ..*self }.encode());
        for entry in entries {
            head.extend_from_slice(&entry.encode());
        }
        head.resize(GROUPS_START, 0);
        Header::seal(&mut head);
        head
    }
}

/// The header's content digest, built as the file is: the [`Checksum`] of
/// every group blob's checksums in id order, then each section entry's kind
/// and checksum in table order. Every byte of the file is under one of
/// those checksums (or is the header and table, which hold them), so two
/// files with the same digest hold the same contents (up to the checksum's
/// collisions), and a copy has its original's digest without being read.
#[derive(Default)]
pub struct ContentDigest {
    sum: Checksum,
}

impl ContentDigest {
    /// Adds the next group blob's checksums.
    pub fn add_group(&mut self, blob: &[u8]) {
        for sum in group_checksums(blob) {
            self.sum.update(&sum.to_ne_bytes());
        }
    }

    /// The digest, once every group was added, over the section table's `entries`.
    pub fn finish(mut self, entries: &[SectionEntry]) -> u64 {
        for entry in entries {
            self.sum.update(&u64::from(entry.section as u32).to_ne_bytes());
            self.sum.update(&entry.checksum.to_ne_bytes());
        }
        self.sum.finish()
    }
}

/// The sections of an artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Section {
    /// JSON metadata.
    Meta = 1,
    /// The origin hash table.
    Slots = 2,
    /// The origin keys.
    Keys = 4,
    /// One record per origin.
    Origins = 10,
    /// The file offset of each group blob.
    GroupIndex = 11,
    /// The group blobs.
    Groups = 12,
    /// Optional: the Content-Signal and Content-Usage lines per origin and
    /// agent, and whether a group names the agent (see [`PreferenceTable`](super::PreferenceTable)).
    Preferences = 13,
    /// Optional: each origin's sitemaps and each crawler's crawl-delay (see `CrawlTable`).
    Crawl = 14,
    /// Optional: per origin, when its governing copy was fetched and what
    /// the cache policy reads of it ([`FetchFacts`](super::FetchFacts)).
    Freshness = 15,
}

impl Section {
    /// Every section, in file order.
    pub const ALL: [Section; 9] = [
        Section::Groups,
        Section::GroupIndex,
        Section::Keys,
        Section::Origins,
        Section::Preferences,
        Section::Crawl,
        Section::Freshness,
        Section::Slots,
        Section::Meta,
    ];

    /// Whether every artifact has the section (all but [`Section::Preferences`],
    /// [`Section::Crawl`] and [`Section::Freshness`]).
    pub fn is_required(self) -> bool {
        !matches!(self, Section::Preferences | Section::Crawl | Section::Freshness)
    }

    /// The section's name in messages and `inspect`.
    pub fn name(self) -> &'static str {
        match self {
            Section::Meta => "meta",
            Section::Slots => "origin index",
            Section::Keys => "origin keys",
            Section::Origins => "origin records",
            Section::GroupIndex => "group index",
            Section::Groups => "groups",
            Section::Preferences => "preferences",
            Section::Crawl => "sitemaps and crawl-delays",
            Section::Freshness => "fetch times",
        }
    }

    /// Position in [`Section::ALL`].
    pub fn index(self) -> usize {
        Section::ALL.iter().position(|&s| s == self).expect("every section is listed")
    }

    fn from_u32(v: u32) -> Option<Section> {
        Section::ALL.iter().copied().find(|&s| s as u32 == v)
    }
}

/// One entry of the section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionEntry {
    /// Which section.
    pub section: Section,
    /// File offset (a multiple of 8).
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// `checksum` of its bytes (0 for [`Section::Groups`]).
    pub checksum: u64,
}

impl SectionEntry {
    /// Encoded size.
    pub const LEN: usize = 32;

    /// Encodes the entry.
    pub fn encode(&self) -> [u8; SectionEntry::LEN] {
        let mut b = [0u8; SectionEntry::LEN];
        put32(&mut b, 0, self.section as u32);
        put64(&mut b, 8, self.offset);
        put64(&mut b, 16, self.len);
        put64(&mut b, 24, self.checksum);
        b
    }

    /// Decodes an entry; an unknown kind is an error.
    pub fn decode(b: &[u8]) -> Result<SectionEntry, Damage> {
        let kind = ne32(b, 0);
        let section = Section::from_u32(kind).ok_or(Fault::UnknownSection { kind })?;
        Ok(SectionEntry { section, offset: ne64(b, 8), len: ne64(b, 16), checksum: ne64(b, 24) })
    }
}

/// Recomputes every checksum of an artifact's bytes as the writer would:
/// each group blob's, each section's, then the header's. Damage made to a
/// file and then resealed so reaches the checks behind the checksums (the
/// fuzz targets and damage tests use it). Whatever cannot be parsed (a
/// short file, a bad entry or blob length) is left as it is.
pub fn reseal(bytes: &mut [u8]) {
    let Ok(header) = Header::decode(bytes) else { return };
    if bytes.len() < GROUPS_START {
        return;
    }
    let mut digest = ContentDigest::default();
    let mut entries = Vec::new();
    for i in 0..(header.sections as usize).min(MAX_SECTIONS) {
        let at = Header::LEN + i * SectionEntry::LEN;
        let Ok(mut entry) = SectionEntry::decode(&bytes[at..]) else { continue };
        let Some(end) = entry.offset.checked_add(entry.len).filter(|&e| e <= bytes.len() as u64) else {
            entries.push(entry);
            continue;
        };
        let (start, end) = (entry.offset as usize, end as usize);
        if entry.section == Section::Groups {
            let mut pos = start;
            while pos + GroupHead::LEN <= end {
                let len = ne64(bytes, pos + 8);
                if len < GroupHead::LEN as u64 || len > (end - pos) as u64 {
                    break;
                }
                let sum = checksum(&bytes[pos + 8..pos + len as usize]);
                put64(bytes, pos, sum);
                digest.add_group(&bytes[pos..pos + len as usize]);
                pos += len as usize;
            }
        } else {
            entry.checksum = checksum(&bytes[start..end]);
            bytes[at..at + SectionEntry::LEN].copy_from_slice(&entry.encode());
        }
        entries.push(entry);
    }
    put64(bytes, Header::DIGEST_AT, digest.finish(&entries));
    Header::seal(&mut bytes[..GROUPS_START]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reseal_restores_the_checksums_the_writer_made() {
        let mut b = vec![0u8; GROUPS_START + 24];
        let entry = SectionEntry { section: Section::Keys, offset: GROUPS_START as u64, len: 20, checksum: 0 };
        let header = Header { flags: 0, file_len: b.len() as u64, checksum: 0, sections: 1, digest: 0 };
        b[..Header::LEN].copy_from_slice(&header.encode());
        b[Header::LEN..Header::LEN + SectionEntry::LEN].copy_from_slice(&entry.encode());
        b[GROUPS_START..GROUPS_START + 20].copy_from_slice(b"https://example.com/");
        reseal(&mut b);
        let stored = SectionEntry::decode(&b[Header::LEN..]).unwrap();
        assert_eq!(stored.checksum, checksum(&b[GROUPS_START..GROUPS_START + 20]));
        assert_eq!(Header::decode(&b).unwrap().checksum, Header::checksum_of(&b[..GROUPS_START]));
    }
}
