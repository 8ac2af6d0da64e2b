//! The command line, defined once: clap reads it, and `--help` is generated
//! from it. Each command's example is its `after_help`; the top-level help
//! collects them all, so the overview cannot drift from the commands.

use std::ffi::OsString;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use needs_you_core::api::{ChannelKind, Right, Rights};

use crate::fail::exit;

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
        after_help = "  needs-you login https://needs-you.example.workers.dev\n  \
        needs-you login 'https://needs-you.example.workers.dev/pair#K7Q2-M9XD'"
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

#[derive(Debug, PartialEq, Args)]
pub struct RunOptions {
    /// The task's name (default: the command and the folder, "claude in api").
    #[arg(long, value_parser = non_blank)]
    pub name: Option<String>,
    /// How long the task lives if needs-you itself is killed: 90m, 8h, 7d.
    #[arg(long = "expires", value_name = "DURATION", value_parser = duration_s, default_value = "7d")]
    pub expires_s: u64,
    /// In a new tmux session, so that answers can be typed into it.
    #[arg(long)]
    pub tmux: bool,
    /// Never show this task's terminal (Show terminal) to anyone; also
    /// `NEEDS_YOU_NO_SCREEN=1` in the environment, for scripts.
    #[arg(long)]
    pub no_screen: bool,
    /// Start the task muted for this long (30m, 2h): its questions are
    /// listed and ring nobody until then.
    #[arg(long, value_name = "DURATION", value_parser = duration_s)]
    pub mute: Option<u64>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, PartialEq, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TasksArgs {
    #[arg(long)]
    pub json: bool,
    /// With each task's rules granted from afar.
    #[arg(long)]
    pub rules: bool,
    #[command(subcommand)]
    pub action: Option<TaskAction>,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum TaskAction {
    /// Mute a task (its name or id): its questions ring nobody until then;
    /// one still open when the mute ends rings then.
    Mute {
        task: String,
        /// How long: 30m, 2h (a day at most).
        #[arg(long = "for", value_name = "DURATION", value_parser = duration_s, default_value = "1h")]
        for_s: u64,
    },
    /// End a task's mute.
    Unmute { task: String },
}

#[derive(Debug, PartialEq, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RulesArgs {
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Option<RuleAction>,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum RuleAction {
    /// Take a rule back (its id, from `needs-you rules`): its task's relay
    /// removes it from the file it was written to, while it is still there
    /// as written.
    Revoke { rule: String },
}

#[derive(Debug, PartialEq, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DevicesArgs {
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Option<DeviceAction>,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum DeviceAction {
    /// Revoke a device (an id from `needs-you devices`).
    Revoke { device: String },
}

#[derive(Debug, PartialEq, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ChannelsArgs {
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub action: Option<ChannelAction>,
}

#[derive(Debug, PartialEq, Subcommand)]
pub enum ChannelAction {
    /// Set a channel: ntfy's token from $NEEDS_YOU_NTFY_TOKEN; the webhook's
    /// secret from $NEEDS_YOU_WEBHOOK_SECRET, or asked.
    Set {
        #[arg(value_parser = channel_kind)]
        kind: ChannelKind,
        url: String,
        /// ntfy's priority, 1 to 5.
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
        priority: Option<u8>,
    },
    /// Remove a channel.
    Remove {
        #[arg(value_parser = channel_kind)]
        kind: ChannelKind,
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
/// `--help` or `--version`, [`exit::USAGE`] after a usage error, said in one
/// line.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, i32> {
    let args: Vec<OsString> = args.into_iter().collect();
    let matches = command().try_get_matches_from(&args);
    match matches.and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => Ok(cli.command),
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
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

fn non_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("needs a name".into())
    } else {
        Ok(s.to_owned())
    }
}

/// "tasks,answer": every name one of [`Right`]'s.
fn rights(s: &str) -> Result<Rights, String> {
    let names: Vec<&str> = s
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .collect();
    let known: Vec<Right> = names.iter().filter_map(|r| Right::parse(r)).collect();
    if known.len() != names.len() {
        return Err(format!("rights are {}", Right::choices()));
    }
    Ok(Rights::from(known))
}

fn channel_kind(s: &str) -> Result<ChannelKind, String> {
    ChannelKind::parse(s).ok_or_else(|| format!("the channel kind is {}", ChannelKind::choices()))
}

/// Parses "90s", "90m", "8h", "7d" into seconds.
pub fn duration_s(s: &str) -> Result<u64, String> {
    let bad = || format!("{s:?} is not a duration such as 90m, 8h or 7d");
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
    let n: u64 = num.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, clap::Error> {
        let all = std::iter::once("needs-you").chain(args.iter().copied());
        command()
            .try_get_matches_from(all)
            .and_then(|m| Cli::from_arg_matches(&m))
            .map(|c| c.command)
    }

    #[test]
    fn run_takes_its_options_before_the_dashes_and_the_command_as_is() {
        let Command::Run(r) = p(&[
            "run",
            "--name",
            "api",
            "--expires",
            "8h",
            "--",
            "claude",
            "--name",
            "x",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!(r.name.as_deref(), Some("api"));
        assert_eq!(r.expires_s, 8 * 3600);
        assert!(!r.tmux);
        assert_eq!(
            r.command,
            vec![OsString::from("claude"), "--name".into(), "x".into()]
        );
        let Command::Run(d) = p(&["run", "--", "x"]).unwrap() else {
            panic!()
        };
        assert_eq!(d.expires_s, 7 * 86_400, "a week by default");
        assert!(p(&["run", "claude"]).is_err());
        assert!(p(&["run", "--"]).is_err());
        assert!(p(&["run", "--expires", "soon", "--", "x"]).is_err());
        assert!(p(&["run", "--bogus", "--", "x"]).is_err());
        assert!(p(&["run", "--name", " ", "--", "x"]).is_err());
    }

    #[test]
    fn an_answer_keeps_every_word_after_the_question() {
        let answer = |args: &[&str]| match p(args) {
            Ok(Command::Answer { question, text, .. }) => Ok((question, text.join(" "))),
            other => Err(format!("{other:?}")),
        };
        assert_eq!(
            answer(&["answer", "q_1", "use", "--force", "please"]).unwrap(),
            ("q_1".into(), "use --force please".into())
        );
        assert_eq!(
            answer(&["answer", "q_1", "--", "--no-verify is fine"])
                .unwrap()
                .1,
            "--no-verify is fine"
        );
        assert!(answer(&["answer", "--json", "q_1", "yes"]).is_err());
        assert!(p(&["answer", "q_1", "--deny", "--choose", "x"]).is_err());
    }

    #[test]
    fn an_answer_takes_a_decision_or_choices() {
        let Command::Answer {
            allow,
            deny,
            choose,
            text,
            ..
        } = p(&["answer", "q_1", "--deny", "not on main"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (allow, deny.as_deref(), choose.len(), text.len()),
            (false, Some("not on main"), 0, 0)
        );
        let Command::Answer { deny, .. } = p(&["answer", "q_1", "--deny"]).unwrap() else {
            panic!()
        };
        assert_eq!(deny.as_deref(), Some(""));
        let Command::Answer { choose, .. } = p(&[
            "answer",
            "q_1",
            "--choose",
            "Postgres",
            "--choose",
            "Login|Search",
        ])
        .unwrap() else {
            panic!()
        };
        assert_eq!(choose, ["Postgres", "Login|Search"]);
        assert!(p(&["answer", "q_1", "--allow", "--deny"]).is_err());
        assert!(p(&["answer", "q_1", "--allow", "--keep", "keep-0"]).is_err());
        assert!(p(&["answer", "q_1", "--keep", "keep-0", "--deny"]).is_err());
        let Command::Answer { keep, .. } = p(&["answer", "q_1", "--keep", "keep-0"]).unwrap()
        else {
            panic!("answer")
        };
        assert_eq!(keep.as_deref(), Some("keep-0"));
    }

    #[test]
    fn durations() {
        assert_eq!(duration_s("90m"), Ok(5400));
        assert_eq!(duration_s("7d"), Ok(604_800));
        assert!(duration_s("0h").is_err());
        assert!(duration_s("h").is_err());
        assert!(duration_s("12").is_err());
    }

    #[test]
    fn listing_commands_take_json_and_refuse_unknown_options() {
        assert_eq!(
            p(&["ls", "--json"]).unwrap(),
            Command::Ls {
                watch: false,
                json: true
            }
        );
        assert!(p(&["ls", "--watch", "--json"]).is_err());
        assert_eq!(
            p(&["tasks", "--rules"]).unwrap(),
            Command::Tasks(TasksArgs {
                json: false,
                rules: true,
                action: None
            })
        );
        assert_eq!(
            p(&["tasks", "mute", "api", "--for", "30m"]).unwrap(),
            Command::Tasks(TasksArgs {
                json: false,
                rules: false,
                action: Some(TaskAction::Mute {
                    task: "api".into(),
                    for_s: 1800
                })
            })
        );
        assert!(p(&["tasks", "--wat"]).is_err());
        assert!(p(&["ls", "extra"]).is_err());
        assert!(p(&["frobnicate"]).is_err());
        assert_eq!(
            p(&[
                "channels",
                "set",
                "ntfy",
                "https://ntfy.sh/t",
                "--priority",
                "5"
            ])
            .unwrap(),
            Command::Channels(ChannelsArgs {
                json: false,
                action: Some(ChannelAction::Set {
                    kind: ChannelKind::Ntfy,
                    url: "https://ntfy.sh/t".into(),
                    priority: Some(5)
                })
            })
        );
        assert!(p(&["channels", "set", "email", "x"]).is_err());
        assert!(p(&["channels", "set", "ntfy", "u", "--priority", "9"]).is_err());
        assert!(p(&["dismiss"]).is_err());
    }

    #[test]
    fn the_help_shows_an_example_of_every_command() {
        let help = command().render_help().to_string();
        for sub in Cli::command()
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
        {
            let name = sub.get_name();
            assert!(
                help.contains(&format!("needs-you {name}")),
                "no example of {name} in:\n{help}"
            );
        }
        assert!(help.contains("Exit codes:"));
        assert!(!help.contains("__exec"));
    }
}
