//! # robotsieve-core
//!
//! What every robotsieve crate shares, from the robots.txt parser to the
//! filter: how URLs are taken apart, how patterns are escaped, how a rule's
//! precedence and a URL's answer are written down. It depends on nothing of
//! the automata or the artifact, so the parser and the corpus readers build
//! without them.
//!
//! - [`url`]: taking URLs apart as WHATWG fetchers do: origins, request paths.
//! - [`pattern`]: how robots.txt patterns (and URL paths) are escaped and what
//!   a pattern matches.
//! - [`Label`]: a rule's precedence as one integer, so the larger label wins.
//! - [`preference`]: `Content-Signal` and `Content-Usage` lines, and which apply to a URL.
//! - [`Verdict`]: the four answers for a URL.
//! - [`mod@line`]: what makes a line of a URL list no URL at all (binary, too long).
//! - [`arch`]: the CPU features the fast paths use, detected once, as a token.
//!
//! # Example
//!
//! A URL taken apart as a crawler fetches it: the origin whose robots.txt
//! governs it, and the path its rules are matched against.
//!
//! ```
//! use robotsieve_core::KeyBuf;
//!
//! let mut buf = KeyBuf::new();
//! let url = buf.parse(b"HTTPS://Example.COM:443/a/../private?q=1#top").unwrap();
//! assert_eq!(url.key, b"https://example.com");
//! assert_eq!(url.path, b"/private?q=1");
//! assert!(KeyBuf::new().parse(b"mailto:someone@example.com").is_err());
//! ```
#![warn(missing_docs)]

pub mod arch;
mod label;
pub mod line;
pub mod pattern;
pub mod preference;
pub mod url;
mod verdict;

pub use label::Label;
pub use line::{LineProblem, MAX_LINE};
pub use preference::{PreferenceField, PreferenceLine};
pub use url::{KeyBuf, Origin, OriginKey, PathMode, Scheme, UrlError};
pub use verdict::Verdict;
