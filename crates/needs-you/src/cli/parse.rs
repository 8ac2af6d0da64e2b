//! The arguments read into a [`Command`], or one line saying what is wrong.

use std::ffi::OsString;

use clap::FromArgMatches;

use super::{command, Cli, Command};
use crate::fail::exit;

/// What to do, or the exit code when there is nothing more to do: 0 after
/// `--help`, [`exit::USAGE`] after a usage error, said in one
/// line.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, i32> {
    let args: Vec<OsString> = args.into_iter().collect();
    let matches = command().try_get_matches_from(&args);
    match matches.and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => Ok(cli.command),
        Err(e) => match e.kind() {
            // The Worker's version beside this one's.
            clap::error::ErrorKind::DisplayVersion => Ok(Command::Version),
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                // Help was asked for (or nothing at all was given): stdout.
                print!("{}", e.render());
                Err(exit::OK)
            }
            kind => {
                let run = args.get(1).is_some_and(|a| a == "run");
                let line = if run && kind == clap::error::ErrorKind::UnknownArgument {
                    // What a person forgot most: the `--` before the command.
                    format!(
                        "{}: `run` needs `--` before the command, e.g. needs-you run -- claude",
                        first_line(&e)
                    )
                } else {
                    first_line(&e)
                };
                eprintln!("needs-you: {line} (see `needs-you --help`)");
                Err(exit::USAGE)
            }
        },
    }
}

/// clap's error as one line: its first, without the `error: ` clap puts
/// first, and its tip when it has one ("to pass 'claude' as a value, use
/// '-- claude'").
fn first_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines();
    let mut line = lines
        .next()
        .unwrap_or("bad usage")
        .trim_start_matches("error: ")
        .to_owned();
    // "the following required arguments were not provided:" names them below.
    if line.ends_with(':') {
        let named: Vec<&str> = lines
            .by_ref()
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .collect();
        line = format!("{} {}", line, named.join(" "));
    }
    if let Some(tip) = lines.find_map(|l| l.trim().strip_prefix("tip: ")) {
        line = format!("{line}; {tip}");
    }
    needs_you_core::text::line(&line)
}
