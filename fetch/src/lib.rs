//! # robotsieve-fetch
//!
//! Gets robots.txt files as Google gets them and writes fetch records in the
//! corpus format `compile --corpus` reads. tokio and the HTTP stack (hyper,
//! rustls, hickory) live in this crate and nowhere else.
//!
//! - [`run()`]: a whole run (input lines in, `OUT.partial` out, renamed to
//!   `OUT` at the end; signals; `--resume`).
//! - [`target`]: input lines and redirect targets as URLs (the one module
//!   that uses the engine's URL parser).
//! - [`chain`]: one origin's redirect chain, deadlines, retries.
//! - [`http`]: one request on a connection robotsieve opens itself.
//! - [`body`]: Content-Encoding undone under the size cap.
//! - [`dns`] and [`safety`]: names to addresses, and the address rule.
//! - [`politeness`]: limits in flight and per IP address.
//! - [`record`], [`cache_headers`], [`output`], [`summary`]: what is written.
#![warn(missing_docs)]

pub mod body;
pub mod cache_headers;
pub mod chain;
pub mod dns;
pub mod http;
pub mod output;
pub mod politeness;
pub mod record;
pub mod run;
pub mod safety;
pub mod summary;
pub mod target;
#[cfg(feature = "test-server")]
pub mod test_server;

pub use dns::{read_hosts_file, DnsOptions, ResolveOverride};
pub use record::{ErrorClass, FetchError, Record};
pub use run::{run, Ending, FetchOptions, RunError, RunPaths};
pub use summary::{Progress, ProgressReading, Summary};
pub use target::{targets_of_line, Target};

/// Body bytes kept, counted after Content-Encoding is undone: the 500 KiB
/// Google reads (RFC 9309 asks for at least 500 kibibytes).
pub const MAX_BODY: usize = 512_000;
