//! What every command spells the same way: `--threads` (one definition, so
//! its meaning and help text cannot drift apart between commands), the
//! values of `--shard K/N` and `--memory BYTES`, and the note an old
//! spelling of a flag prints.
//!
//! The spellings, as ripgrep keeps them: `--rules ARTIFACT` wherever an
//! artifact or shard set is read, `-o/--output` wherever one file is
//! written, `--json` (a switch) wherever the output can be JSON, `--threads`
//! wherever work runs in parallel.

use crate::failure::{fail, Failure};

/// `--threads N`, flattened into the arguments of every command that runs
/// in parallel.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct Threads {
    /// Worker threads; 0 or absent: one per core (or `RAYON_NUM_THREADS`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16))]
    threads: Option<u16>,
}

impl Threads {
    /// The number of threads asked for, 0 meaning one per core (the
    /// convention of `robotsieve_filter::Config::threads` and of
    /// rayon's `ThreadPoolBuilder::num_threads`).
    pub fn count(self) -> usize {
        self.threads.map_or(0, usize::from)
    }

    /// Runs `work` on a pool of [`Threads::count`] threads, so that what it
    /// runs in parallel with rayon (`par_iter`) uses that many.
    pub fn install<T: Send>(self, work: impl FnOnce() -> T + Send) -> Result<T, Failure> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.count())
            .thread_name(|i| format!("worker-{i}"))
            .build()
            .map_err(|e| fail!("cannot start worker threads: {e}"))?;
        Ok(pool.install(work))
    }
}

/// Prints the one-line note of an old spelling on standard error
/// (`robotsieve: --out is deprecated; use -o/--output`): the old spelling
/// still works, so that existing scripts do not break, and `--help` shows
/// only the new one.
pub fn deprecated(old: &str, new: &str) {
    eprintln!("robotsieve: {old} is deprecated; use {new}");
}

/// Reads `K/N` (shard K of N, 0 <= K < N).
pub fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{text:?} is not K/N with 0 <= K < N, such as 17/64");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Reads a byte count with an optional K, M or G suffix (powers of 1024).
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let (digits, unit) = match text.trim().char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text.trim()[..i], c.to_ascii_uppercase()),
        _ => (text.trim(), 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        other => return Err(format!("unknown unit {other:?} (use K, M or G)")),
    };
    let n: usize = digits.parse().map_err(|_| format!("{text:?} is not a byte count such as 512M or 2G"))?;
    n.checked_mul(1 << shift).filter(|&n| n > 0).ok_or_else(|| format!("{text:?} is out of range"))
}

/// A duration: a whole number followed by `s`, `m`, `h` or `d` (seconds,
/// minutes, hours, days), or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = match &text[digits.len()..] {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        other => return Err(format!("unknown unit {other:?}: use s, m, h or d (e.g. 90m, 24h, 7d)")),
    };
    let n: u64 =
        digits.parse().map_err(|_| format!("{text:?} is not a whole number and a unit (e.g. 90m, 24h, 7d)"))?;
    n.checked_mul(unit).map(std::time::Duration::from_secs).ok_or_else(|| format!("{text:?} is too long"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_counts_take_suffixes() {
        assert_eq!(super::parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(super::parse_bytes("64m"), Ok(64 << 20));
        assert_eq!(super::parse_bytes("4096"), Ok(4096));
        assert!(super::parse_bytes("12X").is_err());
        assert!(super::parse_bytes("0").is_err());
    }

    #[test]
    fn shards_are_k_of_n() {
        assert_eq!(super::parse_shard("17/64"), Ok((17, 64)));
        assert!(super::parse_shard("64/64").is_err());
        assert!(super::parse_shard("3").is_err());
    }

    #[test]
    fn durations_take_units() {
        use std::time::Duration;
        assert_eq!(super::parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(super::parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(super::parse_duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(super::parse_duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(super::parse_duration("7d"), Ok(Duration::from_secs(604_800)));
        assert!(super::parse_duration("7w").is_err());
        assert!(super::parse_duration("h").is_err());
        assert!(super::parse_duration("-1h").is_err());
    }
}
