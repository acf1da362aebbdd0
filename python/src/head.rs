//! What the Spark driver reads of a remote artifact without copying it:
//! the header and section table (one ranged read of the first
//! [`GROUPS_START`] bytes), then the META section (a second ranged read),
//! checked as opening checks them. A remote shard set's files are checked
//! this way before any task runs, so that a damaged, foreign or
//! mismatched file fails on the driver, naming the file.

use crate::ArtifactError;
use pyo3::prelude::*;
use robotsieve_engine::format::{checksum, Header, HeaderError, Section, SectionEntry, GROUPS_START};
use robotsieve_engine::Meta;

/// How many bytes of a file's start [`artifact_head`] needs.
pub const HEAD_LEN: usize = GROUPS_START;

/// Checks the header and section table of the artifact `name` (its first
/// [`HEAD_LEN`] bytes, `head`, of a file of `size` bytes): magic, versions,
/// byte order, stored length and checksum. Returns where its META section
/// lies and that section's checksum: `(offset, len, checksum)`.
#[pyfunction]
pub fn artifact_head(name: &str, head: &[u8], size: u64) -> PyResult<(u64, u64, u64)> {
    let fail = |what: String| ArtifactError::new_err(format!("{name}: {what}"));
    let header = Header::decode(head).map_err(|e: HeaderError| fail(e.to_string()))?;
    if header.file_len != size {
        return Err(fail(format!("{size} bytes, but its header says {}: truncated or damaged", header.file_len)));
    }
    let count = header.sections as usize;
    if head.len() < HEAD_LEN || count > robotsieve_engine::format::MAX_SECTIONS {
        return Err(fail(format!("a section table of {count} entries cannot be read")));
    }
    let computed = Header::checksum_of(&head[..HEAD_LEN]);
    if computed != header.checksum {
        return Err(fail("the header's checksum does not match: damaged".to_string()));
    }
    for i in 0..count {
        let entry =
            SectionEntry::decode(&head[Header::LEN + i * SectionEntry::LEN..]).map_err(|d| fail(d.to_string()))?;
        if entry.section == Section::Meta {
            if entry.offset.checked_add(entry.len).is_none_or(|end| end > size) {
                return Err(fail("its META section lies past the end of the file".to_string()));
            }
            return Ok((entry.offset, entry.len, entry.checksum));
        }
    }
    Err(fail("it has no META section".to_string()))
}

/// The META section of the artifact `name` (`meta`, whose checksum the
/// section table stores as `stored`): its agents and, for a shard, `(K, N,
/// scheme)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn artifact_meta(name: &str, meta: &[u8], stored: u64) -> PyResult<(Vec<String>, Option<(u32, u32, String)>)> {
    let fail = |what: String| ArtifactError::new_err(format!("{name}: {what}"));
    if checksum(meta) != stored {
        return Err(fail("its META section's checksum does not match: damaged".to_string()));
    }
    let text = std::str::from_utf8(meta).map_err(|e| fail(format!("meta: not UTF-8: {e}")))?;
    let meta = Meta::from_json(text).map_err(|p| fail(format!("meta: {p}")))?;
    Ok((meta.agents, meta.shard.map(|s| (s.index, s.count, s.scheme))))
}
