//! What every command spells the same way: `--threads` (one definition, so
//! its meaning and help text cannot drift apart between commands) and the
//! note an old spelling of a flag prints.
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
