//! robotsieve-lint: how Google's rules read a robots.txt, and where that differs
//! from what its author evidently meant (see the linter module).

mod linter;

pub use linter::*;
