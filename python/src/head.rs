//! What the Spark driver reads of a remote artifact without copying it:
//! the header and section table (one ranged read of the first
//! [`HEAD_LEN`] bytes), then the META section (a second ranged read),
//! checked by the engine's [`ArtifactHead`], the checks opening makes. A
//! remote shard set's files are checked this way before any task runs, so
//! that a damaged, foreign or mismatched file fails on the driver, naming
//! the file.

use crate::ArtifactError;
use pyo3::prelude::*;
use robotsieve_engine::ArtifactHead;
use std::path::Path;

/// How many bytes of a file's start [`artifact_head`] needs.
pub const HEAD_LEN: usize = ArtifactHead::LEN;

fn refused(name: &str, error: robotsieve_engine::ArtifactError) -> PyErr {
    ArtifactError::new_err(error.in_file(Path::new(name)).to_string())
}

/// Checks the header and section table of the artifact `name` (its first
/// [`HEAD_LEN`] bytes, `head`, of a file of `size` bytes) as opening checks
/// them. Returns where its META section lies, `(offset, len)`, and its
/// content digest (16 hex digits): what the executors' cache keys a copy
/// on, the same for every copy of the file and read without the rest of it.
#[pyfunction]
pub fn artifact_head(name: &str, head: &[u8], size: u64) -> PyResult<(u64, u64, String)> {
    let head = ArtifactHead::read(head, size).map_err(|e| refused(name, e))?;
    let range = head.meta_range();
    Ok((range.start, range.end - range.start, format!("{:016x}", head.digest())))
}

/// The META section of the artifact `name` (`meta`, the bytes at the range
/// [`artifact_head`] gave; the head is read again, from `head`, to check
/// them against its checksum): its agents and, for a shard, `(K, N,
/// scheme)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn artifact_meta(
    name: &str,
    head: &[u8],
    size: u64,
    meta: &[u8],
) -> PyResult<(Vec<String>, Option<(u32, u32, String)>)> {
    let head = ArtifactHead::read(head, size).map_err(|e| refused(name, e))?;
    let meta = head.read_meta(meta).map_err(|e| refused(name, e))?;
    Ok((meta.agents, meta.shard.map(|s| (s.index, s.count, s.scheme))))
}
