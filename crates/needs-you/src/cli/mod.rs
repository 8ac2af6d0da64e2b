//! The command line, defined once: clap reads it, and `--help` is generated
//! from it. Each command's example is its `after_help`; the top-level help
//! collects them all, so the overview cannot drift from the commands, and
//! `parse` reads the arguments into a `Command`, or says in one line what is
//! wrong.
//!
//! * `account`: `devices` and `channels`, the owner's paired devices and the ways it is rung.
//! * `lists`: `tasks` and `rules`, and what can be done to their items.
//! * `run`: `run`'s options, how a task is started under watch.
//! * `values`: the value parsers the commands' arguments share.

use std::ffi::OsString;

mod account;
mod lists;
mod run;
#[cfg(test)]
mod tests;
mod values;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use needs_you_core::api::Rights;

use crate::fail::exit;

pub use account::{ChannelAction, ChannelsArgs, DeviceAction, DevicesArgs};
pub use lists::{RuleAction, RulesArgs, TaskAction, TasksArgs};
pub use run::RunOptions;
pub use values::duration_s;
use values::rights;

#[derive(Debug, Parser)]
#[command(
    name = "needs-you",
    version,
    about = "See what your coding agents are waiting for, and start them under watch.",
    disable_help_subcommand = true,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum Command {
    /// After deploying: create your owner with the admin token (asked
    /// without echo, or $NEEDS_YOU_ADMIN_TOKEN) and log in as it.
    #[command(after_help = "  needs-you setup https://needs-you.example.workers.dev")]
    Setup {
        /// The Worker's URL.
        url: String,
    },
    /// Pair this machine with a code from the page or `needs-you pair`. It
    /// may start and stop tasks and read the list; an agent that reads its
    /// login cannot answer another agent unless --allow answer gave it that.
    #[command(
        after_help = "  NEEDS_YOU_CODE=K7Q2-M9XD.Hk3… needs-you login https://needs-you.example.workers.dev --owner 3q2-…\n  \
        needs-you login 'https://needs-you.example.workers.dev/pair#K7Q2-M9XD'\n\n\
        A code with its secret (the line `needs-you pair` prints, or its link) is read from\n\
        NEEDS_YOU_CODE or asked for, never taken from the command line, which every user of\n\
        the machine can read."
    )]
    Login {
        /// The Worker's URL, or a pairing link.
        target: String,
        /// What else this machine may do: answer (answer, approve, dismiss),
        /// pair (make codes for other devices), screen (see the agents'
        /// terminals), comma-separated. Starting and stopping tasks (tasks)
        /// it may always.
        #[arg(long, value_name = "RIGHTS", value_parser = rights, default_value = "")]
        allow: Rights,
        /// The pairing code, when TARGET is the Worker's URL, without a secret
        /// (a code with one goes in NEEDS_YOU_CODE: with it, this machine
        /// proves its keys to the pairer and gets the content key).
        #[arg(long)]
        code: Option<String>,
        /// The fingerprint of the owner's key, as `needs-you pair` printed
        /// it: the agents run here then take only answers that key signed.
        // Base64url: one in 32 begins with `-`, which is still the value.
        #[arg(long, value_name = "FINGERPRINT", allow_hyphen_values = true)]
        owner: Option<String>,
    },
    /// Revoke this machine's device credential and forget it.
    #[command(after_help = "  needs-you logout")]
    Logout,
    /// Replace a leaked owner token: the old one stops working at once;
    /// devices and tasks keep their own (owner login only).
    #[command(after_help = "  needs-you rotate-token")]
    RotateToken,
    /// Run COMMAND as a task: its own credential in its environment only,
    /// revoked when it exits (its open questions close). Codex's TUI runs
    /// against an app-server of the task's own, so that its approvals can be
    /// answered from afar; Codex's other commands run with `--no-daemon`.
    #[command(after_help = "  needs-you run -- claude\n  \
        needs-you run --name 'api refactor' --tmux -- codex")]
    Run(RunOptions),
    /// What needs you: age, task, agent, kind, text.
    #[command(after_help = "  needs-you ls --watch")]
    Ls {
        /// Draw the list again whenever it changes.
        #[arg(long, conflicts_with = "json")]
        watch: bool,
        #[arg(long)]
        json: bool,
    },
    /// The live tasks and whether they wait for you; `mute` silences one
    /// for a while (its questions stay listed and ring nobody).
    #[command(after_help = "  needs-you tasks --json | jq '.tasks[].name'\n  \
        needs-you tasks --rules\n  \
        needs-you tasks mute 'api refactor' --for 30m")]
    Tasks(TasksArgs),
    /// Every question your agents asked (open, and closed in the last 30
    /// days), newest first, each with every answer (what, by which device,
    /// when, what became of it) and the rules they granted; words search it
    /// here, on this machine.
    #[command(after_help = "  needs-you log npm test\n  needs-you log --json > history.jsonl")]
    Log {
        /// Words that each question shown holds, in any case (its task, text,
        /// options, folder, answers, who answered, rules).
        words: Vec<String>,
        /// At most this many questions.
        #[arg(long, default_value_t = 50, value_name = "N",
              value_parser = clap::value_parser!(u32).range(1..=100_000))]
        limit: u32,
        /// JSON Lines: one question a line, as the server gives it.
        #[arg(long)]
        json: bool,
    },
    /// The lasting rules granted from afar ("don't ask again"), those of
    /// ended tasks too; `revoke` takes one back out of the settings file it
    /// was written to, through its task's relay.
    #[command(after_help = "  needs-you rules\n  needs-you rules revoke rul_5c0e...")]
    Rules(RulesArgs),
    /// Answer a question from here: a reply's text is typed into the agent's
    /// tmux pane (Enter a second later); a permission is allowed once or
    /// denied, a dialog's options chosen, through the agent's own hook or
    /// plugin (`needs-you ls` says what each question takes).
    #[command(
        after_help = "  needs-you answer q_3e9a0c... 'yes, update the docs too'\n  \
        needs-you answer q_51b2... --deny 'not on main'\n  \
        needs-you answer q_7c0d... --choose Postgres --choose 'Login|Search'"
    )]
    Answer {
        /// The question's id (from `needs-you ls`).
        question: String,
        /// Allow the permission, this request once.
        #[arg(long, conflicts_with_all = ["deny", "choose", "keep"])]
        allow: bool,
        /// Allow the permission with one of its lasting choices ("don't ask
        /// again"), by its id (`ls --json`'s `decisions`).
        #[arg(long, value_name = "CHOICE", conflicts_with_all = ["deny", "choose"])]
        keep: Option<String>,
        /// Deny the permission, with a message for the agent if given.
        #[arg(long, value_name = "MESSAGE", num_args = 0..=1, default_missing_value = "",
              conflicts_with = "choose")]
        deny: Option<String>,
        /// A dialog's answer: once per question, in order; several labels of a
        /// multiple choice joined by `|`; a text that is no label is typed.
        #[arg(long, value_name = "LABEL")]
        choose: Vec<String>,
        /// Send a decision or choices without asking first; at a terminal,
        /// `answer` shows the card built from the request and asks.
        #[arg(long, short = 'y')]
        yes: bool,
        /// A reply's answer: every word after the id, those that start with `--` too.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        text: Vec<String>,
    },
    /// The agent's terminal as the question's tmux pane shows it now,
    /// read-only (a login paired with the screen right).
    #[command(after_help = "  needs-you show q_3e9a0c... --watch")]
    Show {
        /// The question's id (from `needs-you ls`).
        question: String,
        /// Draw it again as it changes, until the question closes; Ctrl-C ends it.
        #[arg(long)]
        watch: bool,
    },
    /// Close a stale question as not needed (ids from `ls --json`).
    #[command(after_help = "  needs-you dismiss q_3e9a0c...")]
    Dismiss { question: String },
    /// A pairing link for a phone or a browser, as a QR code and as text.
    #[command(after_help = "  needs-you pair")]
    Pair {
        /// What the new device may do (default: all this login may do):
        /// tasks, answer, pair, screen, comma-separated.
        #[arg(long, value_name = "RIGHTS", value_parser = rights)]
        rights: Option<Rights>,
        #[arg(long)]
        json: bool,
    },
    /// The paired devices, what each may do and which paired it; `revoke`
    /// ends one at once, with the devices it paired and the tasks they made.
    #[command(after_help = "  needs-you devices revoke dev_5c0e...")]
    Devices(DevicesArgs),
    /// The owner's ntfy and webhook channels (owner login only).
    #[command(after_help = "  needs-you channels set ntfy https://ntfy.sh/my-long-secret-topic")]
    Channels(ChannelsArgs),
    /// Send a test notification through every channel and paired browser,
    /// and say which answered (owner login only).
    #[command(after_help = "  needs-you test-push")]
    TestPush {
        #[arg(long)]
        json: bool,
    },
    /// Put the prebuilt Worker that the npm package ships on your Cloudflare
    /// account with wrangler (logging it in when needed), its D1 database
    /// created and migrated, its admin token and Web Push keys made, and make
    /// you its owner; run again, it upgrades the Worker and migrates, and
    /// changes no secret. --local serves it on 127.0.0.1 instead, with a fresh
    /// local D1, logged in here for as long as it runs.
    #[command(after_help = "  needs-you deploy
  needs-you deploy --local --port 8787")]
    Deploy {
        /// Bundle it as a deploy would, and deploy nothing.
        #[arg(long, conflicts_with = "local")]
        dry_run: bool,
        /// Serve it on this machine, to try it first.
        #[arg(long)]
        local: bool,
        /// The local port (with --local).
        #[arg(long, requires = "local", value_name = "N")]
        port: Option<u16>,
        /// An address push services may write to about the Worker (asked
        /// when needed).
        #[arg(long, value_name = "EMAIL", conflicts_with_all = ["local", "dry_run"])]
        contact: Option<String>,
    },
    /// `--version`: this machine's version and its Worker's.
    #[command(name = "__version", hide = true)]
    Version,
    /// `run --tmux`'s first process in the new session: reads the task's
    /// environment from a private file (never a command line), removes it,
    /// runs the command and writes how it ended to STATUS_FILE.
    #[command(name = "__exec", hide = true)]
    Exec {
        env_file: String,
        status_file: String,
        #[arg(last = true, required = true)]
        command: Vec<OsString>,
    },
    /// `run -- codex`'s command: Codex's TUI against a private app-server of
    /// the task's, whose approvals are answered from afar.
    #[command(name = "__codex", hide = true)]
    Codex {
        #[arg(last = true, required = true)]
        command: Vec<OsString>,
    },
}

const EXIT_CODES: &str = "\
Exit codes:
  0 done   1 refused by the server   2 bad usage   3 not logged in, or the login was refused
  4 server out of reach or failing   run: the command's own code (127: not found)

Files:
  $XDG_CONFIG_HOME/needs-you/login.json (else ~/.config/needs-you/), mode 0600";

/// The whole command line, its top-level help ending with every command's
/// example, then the exit codes.
pub fn command() -> clap::Command {
    let cmd = Cli::command();
    let mut examples = String::from("Examples:\n");
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if let Some(example) = sub.get_after_help() {
            examples.push_str(&format!("{example}\n"));
        }
    }
    cmd.after_help(format!("{examples}\n{EXIT_CODES}"))
}

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
