//! The one error type of the binary (a message for the user, exit status
//! 2), every exit status robotsieve ends with, and the one place that maps
//! an error to its status: a broken pipe (the reader of standard output went
//! away, as `| head -1` does) ends the run quietly with status 0, as ripgrep
//! does.

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

/// A failure the user must see: bad input, an unreadable file, a bad flag;
/// or the end of a run whose output's reader went away.
/// `main` prints it after `robotsieve: ` and exits with [`Failure::exit_code`].
#[derive(Debug)]
pub struct Failure {
    message: String,
    /// A write failed with a broken pipe: whoever read the output (standard
    /// output, or a named pipe given as an output) closed it. Outputs not
    /// yet committed are removed as for any failed run.
    reader_gone: bool,
}

impl Failure {
    /// A failure with this message, exit status 2.
    pub fn new(message: String) -> Failure {
        Failure { message, reader_gone: false }
    }

    /// The failure of `error`, which says what failed (an engine or compiler
    /// error names its file, line or URL); a broken pipe anywhere in its
    /// chain of sources makes it [`Failure::reader_gone`].
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Failure {
        Failure { message: error.to_string(), reader_gone: is_broken_pipe(error) }
    }

    /// Whether the run ended because the reader of an output went away: then
    /// robotsieve exits 0 and prints nothing, as ripgrep does, so that
    /// `robotsieve check ... | head -1` is not an error.
    pub fn reader_gone(&self) -> bool {
        self.reader_gone
    }

    /// The exit status of a failure: 0 when the output's reader went away,
    /// 2 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        if self.reader_gone {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(status::FAILURE)
        }
    }
}

/// Whether `error` or one of its sources is an I/O error of kind
/// `BrokenPipe`.
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if error.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        next = error.source();
    }
    false
}

impl<E: std::error::Error + 'static> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure::of(&error)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Builds a [`Failure`] from a format string.
macro_rules! fail {
    ($($arg:tt)*) => { $crate::failure::Failure::new(format!($($arg)*)) };
}
pub(crate) use fail;

/// Adds the name of what was being read or written to an error.
pub trait Context<T> {
    /// Turns the error into a [`Failure`] that names `what` (a broken pipe
    /// stays one: see [`Failure::reader_gone`]).
    fn context(self, what: impl fmt::Display) -> Result<T, Failure>;
}

impl<T, E: std::error::Error + 'static> Context<T> for Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T, Failure> {
        self.map_err(|e| Failure { message: format!("{what}: {e}"), reader_gone: is_broken_pipe(&e) })
    }
}
