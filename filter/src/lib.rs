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
