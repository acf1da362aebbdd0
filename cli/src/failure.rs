//! The one error type of the binary (a message for the user, exit status
//! 2) and every exit status robotsieve ends with.

use std::fmt;
use std::process::ExitCode;

/// The exit statuses of robotsieve, all in one place.
pub mod status {
    /// `lint` found errors in a robots.txt (status 0 means none, as for
    /// every command that did what was asked; the `invalid` lines of a URL
    /// list are verdicts, not failures).
    pub const LINT_ERRORS: u8 = 1;
    /// A [`super::Failure`]: bad input or output, an unusable artifact, a bad
    /// flag (clap's usage errors exit with 2 too).
    pub const FAILURE: u8 = 2;
    /// Added to the number of the signal that interrupted a run, as a shell
    /// reports a process a signal killed: SIGINT 130, SIGTERM 143, SIGHUP 129.
    pub const SIGNALLED: i32 = 128;
}

impl Failure {
    /// The exit status of a failure.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(status::FAILURE)
    }
}

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
