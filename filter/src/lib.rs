//! # robotsieve-filter
//!
//! The parallel pipeline that streams a URL list through a classifier into a
//! sink, and the TSV outputs the command line and the bindings write
//! through it. The pipeline knows classifiers only through [`Classifier`];
//! the artifact's classifiers (`robotsieve-engine`) implement it here.
//!
//! - `pipeline` (re-exported at the root): reading the list in chunks,
//!   classifying them on a thread pool, handing the results back in order;
//!   for large lists of many origins, the partitioned form.
//! - `output` (re-exported at the root): the TSV sink.
//! - `classifiers` (internal): [`Classifier`] for the artifact's classifiers.
//!
//! # Example
//!
//! Any [`Classifier`] runs on every core; the verdicts come out in input
//! order. (The CLI runs the artifact's classifiers, whose impls are here.)
//!
//! ```
//! use robotsieve_core::Verdict;
//! use robotsieve_filter::{Classifier, Config, Input, Outputs, Pipeline};
//! use std::io::Cursor;
//!
//! /// Allows every URL under /public/.
//! struct PublicOnly;
//!
//! impl Classifier for PublicOnly {
//!     type Scratch = ();
//!     type Error = std::convert::Infallible;
//!     fn classify(&self, url: &[u8], _: &mut (), _: Option<&mut Vec<u8>>) -> Result<Verdict, Self::Error> {
//!         let public = url.windows(8).any(|w| w == b"/public/");
//!         Ok(if public { Verdict::Allowed } else { Verdict::Disallowed })
//!     }
//! }
//!
//! let pipeline = Pipeline::new(Config { threads: 2, ..Config::default() }).unwrap();
//! let list = "https://a.example/public/x\nhttps://a.example/private\n";
//! let mut input = Input::from_reader("list", Cursor::new(list.as_bytes().to_vec()));
//! let mut verdicts = Vec::new();
//! let mut outputs = Outputs::new().verdicts("verdicts", &mut verdicts);
//! let report = pipeline.run(&PublicOnly, &mut input, &mut outputs, None).unwrap();
//! drop(outputs);
//! assert_eq!(
//!     String::from_utf8(verdicts).unwrap(),
//!     "allowed\thttps://a.example/public/x\ndisallowed\thttps://a.example/private\n"
//! );
//! assert_eq!(report.stats.counts[Verdict::Allowed.index()], 1);
//! ```
#![warn(missing_docs)]

mod classifiers;
mod output;
mod pipeline;

pub use output::{Outputs, TsvChunk, TsvFormat};
pub use pipeline::{
    partitions_for, ChunkReader, ChunkSink, ChunkWorker, Classifier, Config, FilterError, Format, Grouping, Input,
    Pipeline, Progress, Reasons, Report, Sink, Stats, BATCH, DEFAULT_CHUNK_SIZE,
};

/// What the tests need of the pipeline's internals: not part of the API,
/// and free to change with them.
#[doc(hidden)]
pub mod testing {
    pub use crate::pipeline::{PARTITION_MIN_CHUNKS, PARTITION_MIN_ORIGINS};
}
