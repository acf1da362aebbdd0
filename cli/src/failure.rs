//! The one error type of the binary: a message for the user, exit status 2.

use std::fmt;

/// A failure the user must see: bad input, an unreadable file, a bad flag.
/// `main` prints it after `robotsieve: ` and exits with status 2.
#[derive(Debug)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Builds a [`Failure`] from a format string.
macro_rules! fail {
    ($($arg:tt)*) => { $crate::failure::Failure(format!($($arg)*)) };
}
pub(crate) use fail;

/// Adds the name of what was being read or written to an I/O error.
pub trait Context<T> {
    /// Turns the error into a [`Failure`] that names `what`.
    fn context(self, what: impl fmt::Display) -> Result<T, Failure>;
}

impl<T, E: fmt::Display> Context<T> for Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T, Failure> {
        self.map_err(|e| Failure(format!("{what}: {e}")))
    }
}
