//! What a run did: counts by outcome, for `--stats` and the progress bar.

use crate::record::{ErrorClass, Record};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The `--stats` summary of a run.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// Robots.txt URLs fetched (chains written).
    pub origins: u64,
    /// Records written (a redirect chain writes one a hop).
    pub records: u64,
    /// Records by status class: `2xx`, `3xx`, `4xx`, `5xx`, `other`, and
    /// `0` for no HTTP answer.
    pub by_status: BTreeMap<String, u64>,
    /// Status-0 records by error class (`dns`, `timeout`, ...).
    pub errors: BTreeMap<String, u64>,
    /// Records whose body was cut at the cap.
    pub truncated: u64,
    /// Input lines that named no origin (each got a status-0 record).
    pub bad_lines: u64,
    /// Input lines whose URLs were all fetched already in this run or held
    /// by the resumed output.
    pub duplicates_or_held: u64,
    /// Records the resumed `OUT.partial` held.
    pub records_held: u64,
    /// Wall time of the run.
    pub elapsed_ms: u64,
}

impl Summary {
    /// Counts one origin's chain.
    pub fn add_chain(&mut self, chain: &[Record]) {
        self.origins += 1;
        self.add_records(chain);
    }

    /// Counts records (a bad line's record, or a chain's).
    pub fn add_records(&mut self, records: &[Record]) {
        for record in records {
            self.records += 1;
            let class = match record.status {
                0 => "0",
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                500..=599 => "5xx",
                _ => "other",
            };
            *self.by_status.entry(class.to_owned()).or_default() += 1;
            if let Some(error) = &record.error {
                let class = ErrorClass::ALL.iter().map(|c| c.as_str()).find(|c| error.starts_with(&format!("{c}:")));
                *self.errors.entry(class.unwrap_or("other").to_owned()).or_default() += 1;
            }
            self.truncated += u64::from(record.truncated);
        }
    }
}

/// Counters a progress display reads while a run goes on.
#[derive(Debug, Default)]
pub struct Progress {
    origins: AtomicU64,
    records: AtomicU64,
    success: AtomicU64,
    failed: AtomicU64,
}

/// A reading of [`Progress`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProgressReading {
    /// Origins done.
    pub origins: u64,
    /// Records written.
    pub records: u64,
    /// 2xx records.
    pub success: u64,
    /// Records with no HTTP answer.
    pub failed: u64,
}

impl Progress {
    /// Takes the summary's counts.
    pub fn update(&self, summary: &Summary) {
        self.origins.store(summary.origins, Ordering::Relaxed);
        self.records.store(summary.records, Ordering::Relaxed);
        self.success.store(summary.by_status.get("2xx").copied().unwrap_or(0), Ordering::Relaxed);
        self.failed.store(summary.by_status.get("0").copied().unwrap_or(0), Ordering::Relaxed);
    }

    /// The counts now.
    pub fn read(&self) -> ProgressReading {
        ProgressReading {
            origins: self.origins.load(Ordering::Relaxed),
            records: self.records.load(Ordering::Relaxed),
            success: self.success.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }
}
