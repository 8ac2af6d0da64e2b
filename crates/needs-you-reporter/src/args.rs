//! The command line, parsed by hand: a hook pays for every microsecond of start-up.

use std::path::PathBuf;

use needs_you_core::Cli;

use crate::error::Error;

/// The help, with `{clis}` where the CLIs' names go ([`help`]).
const HELP: &str = "\
report-prompt: tells needs-you when a coding agent waits for you.

USAGE (from a CLI's hooks; reads one event on stdin, prints nothing):
  report-prompt --cli {clis} [--state-dir DIR]

FOR PEOPLE:
  report-prompt classify --cli CLI      show the decision for the event on stdin; sends nothing
  report-prompt doctor                  check env, server, credential, state dir and hooks
  report-prompt install --cli CLI [--path FILE] [--dry-run]
  report-prompt uninstall --cli CLI [--path FILE] [--dry-run]

EXIT CODES:
  hook mode always exits 0 (a failure is one line on stderr); the commands for
  people exit 0 when done, 1 when something failed (doctor: a problem found),
  2 on bad usage

ENVIRONMENT:
  NEEDS_YOU_URL         the server, e.g. https://needs-you.example.workers.dev
  NEEDS_YOU_TOKEN       this task's credential (nyt_...); never put it on a command line
  NEEDS_YOU_STATE_DIR   where markers live (default $XDG_RUNTIME_DIR/needs-you, else ~/.cache/needs-you)
  NEEDS_YOU_SEND_FOR_S  how long a report is retried while the server is down (default 60)
  NEEDS_YOU_RECORD_DIR  keep the last payload of each hook event there (<cli>.<event>.json), to see what a CLI sends
";

/// `report-prompt --help`: every CLI's name from the one list of them.
pub fn help() -> String {
    let names: Vec<&str> = Cli::ALL.iter().map(|c| c.as_str()).collect();
    HELP.replace("{clis}", &names.join("|"))
}

pub enum Command {
    Hook {
        cli: Cli,
        state_dir: Option<PathBuf>,
    },
    Classify {
        cli: Cli,
    },
    Send {
        state_dir: Option<PathBuf>,
    },
    Relay {
        state_dir: Option<PathBuf>,
    },
    Await {
        cli: Cli,
        state_dir: Option<PathBuf>,
    },
    Watch {
        cli: Cli,
        state_dir: Option<PathBuf>,
        session: String,
        transcript: PathBuf,
    },
    Doctor {
        state_dir: Option<PathBuf>,
    },
    Install(InstallOptions),
    Help,
    Version,
}

pub struct InstallOptions {
    pub cli: Cli,
    pub path: Option<PathBuf>,
    pub dry_run: bool,
    pub uninstall: bool,
    pub state_dir: Option<PathBuf>,
}

/// Whether these arguments are a hook's (they start with an option, or there
/// are none): a hook's errors exit 0, a person's command's exit 2.
pub fn is_hook(args: &[String]) -> bool {
    args.first().is_none_or(|a| {
        a.starts_with('-') && !matches!(a.as_str(), "--help" | "-h" | "--version" | "-V")
    })
}

pub fn parse(args: impl Iterator<Item = String>) -> Result<Command, Error> {
    let args: Vec<String> = args.collect();
    let (verb, rest) = match args.first().map(String::as_str) {
        Some(
            v @ ("classify" | "doctor" | "install" | "uninstall" | "__send" | "__watch" | "__relay"
            | "__await"),
        ) => (v, &args[1..]),
        Some("--help" | "-h" | "help") => return Ok(Command::Help),
        Some("--version" | "-V") => return Ok(Command::Version),
        // A hook's arguments start with an option; a word is a person's
        // command, mistyped.
        Some(word) if !word.starts_with('-') => {
            return Err(Error::Usage(format!("unknown command {word:?}")));
        }
        _ => ("hook", &args[..]),
    };
    let mut cli = None;
    let mut state_dir = None;
    let mut path = None;
    let mut dry_run = false;
    let (mut session, mut transcript) = (None, None);
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| Error::Usage(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--cli" => {
                let v = value("--cli")?;
                cli = Some(Cli::parse(&v).ok_or_else(|| {
                    Error::Usage(format!("unknown CLI {v:?}; use one of {}", Cli::choices()))
                })?);
            }
            "--state-dir" => state_dir = Some(PathBuf::from(value("--state-dir")?)),
            "--path" if matches!(verb, "install" | "uninstall") => {
                path = Some(PathBuf::from(value("--path")?))
            }
            "--dry-run" if matches!(verb, "install" | "uninstall") => dry_run = true,
            "--session" if verb == "__watch" => session = Some(value("--session")?),
            "--transcript" if verb == "__watch" => {
                transcript = Some(PathBuf::from(value("--transcript")?))
            }
            other => return Err(Error::Usage(format!("unexpected argument {other:?}"))),
        }
    }
    let need_cli = || cli.ok_or_else(|| Error::Usage("--cli is required".to_owned()));
    Ok(match verb {
        "hook" => Command::Hook {
            cli: need_cli()?,
            state_dir,
        },
        "classify" => Command::Classify { cli: need_cli()? },
        "__send" => Command::Send { state_dir },
        "__relay" => Command::Relay { state_dir },
        "__await" => Command::Await {
            cli: need_cli()?,
            state_dir,
        },
        "__watch" => Command::Watch {
            cli: need_cli()?,
            state_dir,
            session: session.ok_or_else(|| Error::Usage("--session is required".into()))?,
            transcript: transcript
                .ok_or_else(|| Error::Usage("--transcript is required".into()))?,
        },
        "doctor" => Command::Doctor { state_dir },
        _ => Command::Install(InstallOptions {
            cli: need_cli()?,
            path,
            dry_run,
            uninstall: verb == "uninstall",
            state_dir,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, Error> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn hook_mode_is_the_default() {
        let Ok(Command::Hook { cli, state_dir }) = p(&["--cli", "codex", "--state-dir", "/x"])
        else {
            panic!()
        };
        assert_eq!(cli, Cli::Codex);
        assert_eq!(state_dir, Some(PathBuf::from("/x")));
    }

    #[test]
    fn errors_are_sentences() {
        assert!(p(&["--cli", "kiro"])
            .err()
            .unwrap()
            .message()
            .contains("unknown CLI"));
        assert!(p(&[])
            .err()
            .unwrap()
            .message()
            .contains("--cli is required"));
        assert!(p(&["--cli"])
            .err()
            .unwrap()
            .message()
            .contains("needs a value"));
        assert!(p(&["--cli", "codex", "--dry-run"]).is_err());
    }

    #[test]
    fn install_flags() {
        let Ok(Command::Install(o)) = p(&[
            "uninstall",
            "--cli",
            "claude-code",
            "--path",
            "/s.json",
            "--dry-run",
        ]) else {
            panic!()
        };
        assert!(o.uninstall && o.dry_run);
        assert_eq!(o.path, Some(PathBuf::from("/s.json")));
    }
}
