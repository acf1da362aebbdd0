//! # robotsieve-fetch
//!
//! Gets robots.txt files as Google gets them and writes fetch records in the
//! corpus format `compile --corpus` reads. tokio and the HTTP stack (hyper,
//! rustls, hickory) live in this crate and nowhere else.
//!
//! - [`run()`]: a whole run (input lines in, `OUT.partial` out, renamed to
//!   `OUT` at the end; signals; `--resume`); [`fetch_records()`] and
//!   [`fetch_to_file()`]: the same run over a caller's lines, into a
//!   caller's function or a file, watching no signals (the Python package).
//! - [`target`]: input lines and redirect targets as URLs (the one module
//!   that uses the engine's URL parser).
//! - [`chain`]: one origin's redirect chain, deadlines, retries.
//! - [`http`]: one request on a connection robotsieve opens itself.
//! - [`body`]: Content-Encoding undone under the size cap.
//! - [`dns`] and [`safety`]: names to addresses, and the address rule.
//! - [`politeness`]: limits in flight and per IP address.
//! - [`site`]: registrable domains by the Public Suffix List (compiled in).
//! - [`record`], [`cache_headers`], [`output`], [`summary`]: what is written.
//!
//! # Example
//!
//! One origin fetched from a server on loopback (the tests' own server,
//! mapped with a `--resolve` entry, which the address rule trusts):
//!
//! ```
//! use robotsieve_fetch::test_server::{Pki, Reply, TestServer};
//! use robotsieve_fetch::{run, Ending, FetchOptions, RunPaths};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let pki = Pki::new(dir.path(), &["example.test"]);
//! let server = TestServer::start(&pki, |_host, _path| Reply::status(200, "User-agent: *\nDisallow: /private\n"));
//! let port = server.ports.http;
//! std::fs::write(dir.path().join("origins.txt"), format!("http://example.test:{port}/\n")).unwrap();
//!
//! let mut options = FetchOptions::new("mybot/1.0 (+https://example.org/bot)");
//! options.dns.overrides.push(format!("example.test:{port}:127.0.0.1").parse().unwrap());
//! let output = dir.path().join("fetched.jsonl");
//! let paths = RunPaths { inputs: vec![dir.path().join("origins.txt")], output: output.clone(), resume: false };
//! let (ending, _summary) = run(&options, &paths, None).unwrap();
//! assert_eq!(ending, Ending::Complete);
//!
//! let record: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&output).unwrap().trim()).unwrap();
//! assert_eq!(record["url"], format!("http://example.test:{port}/robots.txt"));
//! assert_eq!(record["status"], 200);
//! assert_eq!(record["body"], "User-agent: *\nDisallow: /private\n");
//! ```
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
pub mod site;
pub mod summary;
pub mod target;
#[cfg(feature = "test-server")]
pub mod test_server;

pub use dns::{read_hosts_file, DnsOptions, ResolveOverride};
pub use record::{ErrorClass, FetchError, Record};
pub use run::{fetch_records, fetch_to_file, run, Ending, FetchOptions, RunError, RunPaths};
pub use site::{registrable_domain, site_of_line};
pub use summary::{Progress, ProgressReading, Summary};
pub use target::{targets_of_line, Target};

/// Body bytes kept, counted after Content-Encoding is undone: the 500 KiB
/// Google reads (RFC 9309 asks for at least 500 kibibytes).
pub const MAX_BODY: usize = 512_000;
