//! Reading what the user names on the command line: files, or `-` for stdin.

use crate::failure::{Context, Failure};
use std::io::Read;
use std::path::Path;

/// Reads a whole file, or standard input for `-`.
pub fn read_all(path: &Path) -> Result<Vec<u8>, Failure> {
    if path == Path::new("-") {
        let mut body = Vec::new();
        std::io::stdin().read_to_end(&mut body).context("standard input")?;
        Ok(body)
    } else {
        std::fs::read(path).context(path.display())
    }
}
