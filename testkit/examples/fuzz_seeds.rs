//! Writes the fuzz targets' seed corpora, made from `shared/` and generated,
//! into a folder per target: `cargo run -p robotsieve-testkit --example
//! fuzz_seeds -- OUT_DIR [EVERY]` (default `fuzz/corpus-seeds`, every 10th
//! real robots.txt file and URL). The folders are outside git (see
//! fuzz/.gitignore): never commit files from `shared/`.

use robotsieve_testkit::{seeds, shared_dir};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().map(PathBuf::from).unwrap_or_else(|| "fuzz/corpus-seeds".into());
    let every: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(10);
    let shared = shared_dir().ok_or("the shared/ folder is missing (set ROBOTSIEVE_SHARED)")?;
    // Seeds above 64 KiB only slow the fuzzer down (and raise its -max_len).
    let small = |seeds: Vec<seeds::Seed>| seeds.into_iter().filter(|(_, s)| s.len() <= 64 << 10).collect::<Vec<_>>();
    let targets = [
        ("robots", small(seeds::robots(&shared, every))),
        ("artifact", seeds::artifact()),
        ("artifact_file", seeds::artifact_file()),
        ("warc", seeds::warc(Some(&shared))),
        ("page", seeds::page()),
        ("url", seeds::url(&shared, every)),
    ];
    for (target, seeds) in targets {
        let n = seeds::write(&out.join(target), &seeds)?;
        println!("{target}: {n} seeds in {}", out.join(target).display());
    }
    Ok(())
}
