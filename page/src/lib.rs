//! robotsieve-page: page-level rules, robots `<meta>` tags and `X-Robots-Tag`
//! headers (see the rules module).

mod rules;

pub use rules::*;
