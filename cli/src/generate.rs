//! `robotsieve generate`: the man page and shell completions, made from the
//! same clap definitions as `--help`, so that they never disagree with it.

use crate::failure::{Context, Failure};
use clap::{Args as ClapArgs, Subcommand};
use clap_complete::Shell;
use std::io::Write;
use std::process::ExitCode;

/// What to generate.
#[derive(ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// The man page, as roff on standard output (`robotsieve generate man > robotsieve.1`)
    Man,
    /// The completion script for a shell, on standard output
    Complete {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: Shell,
    },
}

/// Writes what was asked for to standard output; `command` is the whole
/// command line's definition.
pub fn run(args: Args, mut command: clap::Command) -> Result<ExitCode, Failure> {
    let mut out = Vec::new();
    match args.what {
        What::Man => clap_mangen::Man::new(command).render(&mut out).context("cannot render the man page")?,
        What::Complete { shell } => {
            let name = command.get_name().to_string();
            clap_complete::generate(shell, &mut command, name, &mut out);
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out).and_then(|()| stdout.flush()).context("standard output")?;
    Ok(ExitCode::SUCCESS)
}
