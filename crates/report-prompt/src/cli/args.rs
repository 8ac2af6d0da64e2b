//! `needs-you`'s command line.

use std::ffi::OsString;

pub const HELP: &str = "\
needs-you: see what your coding agents are waiting for, and start them under watch.

USAGE:
  needs-you COMMAND [OPTIONS]

SET UP (once per machine):
  setup URL              after deploying: create your owner with the admin token
                         (asked without echo, or $NEEDS_YOU_ADMIN_TOKEN) and log in as it
                           needs-you setup https://needs-you.example.workers.dev
  login URL|LINK         pair this machine with a code from the page or `needs-you pair`
                           needs-you login https://needs-you.example.workers.dev
                           needs-you login 'https://needs-you.example.workers.dev/pair#K7Q2-M9XD'
  logout                 revoke this machine's device credential and forget it
                           needs-you logout
  rotate-token           replace a leaked owner token: the old one stops working at once;
                         devices and tasks keep their own (owner login only)
                           needs-you rotate-token

AGENTS:
  run [--name NAME] [--expires DURATION] [--tmux] -- COMMAND [ARGS...]
                         run COMMAND as a task: its own credential in its environment only,
                         revoked when it exits (its open questions close). DURATION: 90m, 8h, 7d
                         (default 7d). --tmux: in a new tmux session, so answers can be typed in
                           needs-you run -- claude
                           needs-you run --name 'api refactor' --tmux -- codex --no-daemon
  ls [--watch] [--json]  what needs you: age, task, agent, kind, text
                           needs-you ls --watch
  tasks [--json]         the live tasks and whether they wait for you
                           needs-you tasks --json | jq '.tasks[].name'
  answer QUESTION TEXT   answer a reply question from here: the text is typed into the
                         agent's tmux pane as one line, Enter a second later
                           needs-you answer q_3e9a0c... 'yes, update the docs too'
  dismiss QUESTION       close a stale question as not needed (ids from `ls --json`)
                           needs-you dismiss q_3e9a0c...

PHONE AND CHANNELS:
  pair [--json]          a pairing link for a phone or a browser, as a QR code and as text
                           needs-you pair
  channels [--json]      the owner's ntfy and webhook channels (owner login only)
  channels set ntfy URL [--priority 1-5]      token, if any, from $NEEDS_YOU_NTFY_TOKEN
  channels set webhook URL                    secret from $NEEDS_YOU_WEBHOOK_SECRET, or asked
  channels remove ntfy|webhook
                           needs-you channels set ntfy https://ntfy.sh/my-long-secret-topic
  test-push [--json]     send a test notification through every channel and paired browser,
                         and say which answered (owner login only)
                           needs-you test-push

EXIT CODES:
  0 done   1 refused by the server   2 bad usage   3 not logged in, or the login was refused
  4 server out of reach or failing   run: the command's own code (127: not found)

FILES:
  $XDG_CONFIG_HOME/needs-you/login.json (else ~/.config/needs-you/), mode 0600
";

#[derive(Debug, PartialEq)]
pub enum Command {
    Setup {
        url: String,
    },
    Login {
        target: String,
    },
    Logout,
    RotateToken,
    Run(RunOptions),
    Ls {
        watch: bool,
        json: bool,
    },
    Tasks {
        json: bool,
    },
    Dismiss {
        question: String,
    },
    Answer {
        question: String,
        text: String,
    },
    Pair {
        json: bool,
    },
    Channels {
        json: bool,
    },
    ChannelSet {
        kind: String,
        url: String,
        priority: Option<u8>,
    },
    ChannelRemove {
        kind: String,
    },
    TestPush {
        json: bool,
    },
    /// Used by `run --tmux` inside the new session: reads the task's
    /// environment from a private file (never a command line), removes it,
    /// runs the command and writes its exit code to `status_file`.
    Exec {
        env_file: String,
        status_file: String,
        command: Vec<OsString>,
    },
    Help,
    Version,
}

#[derive(Debug, PartialEq)]
pub struct RunOptions {
    pub name: Option<String>,
    pub expires_s: u64,
    pub tmux: bool,
    pub command: Vec<OsString>,
}

/// Parses "90s", "90m", "8h", "7d" into seconds.
pub fn duration_s(s: &str) -> Option<u64> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = num.parse().ok().filter(|n| *n > 0)?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(mult)
}

pub fn parse(args: Vec<OsString>) -> Result<Command, String> {
    let mut it = args.into_iter();
    let Some(first) = it.next() else {
        return Ok(Command::Help);
    };
    let cmd = first.to_string_lossy().into_owned();
    if cmd == "run" || cmd == "__exec" {
        return parse_with_command(&cmd, it.collect());
    }
    let rest: Vec<String> = it.map(|a| a.to_string_lossy().into_owned()).collect();
    let flag = |name: &str| rest.iter().any(|a| a == name);
    let positional: Vec<&str> = rest
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    let allow = |flags: &[&str], max_positional: usize| -> Result<(), String> {
        if let Some(bad) = rest
            .iter()
            .find(|a| a.starts_with("--") && !flags.contains(&a.as_str()))
        {
            return Err(format!("`{cmd}` has no option {bad}"));
        }
        if positional.len() > max_positional {
            return Err(format!(
                "`{cmd}` takes at most {max_positional} argument(s)"
            ));
        }
        Ok(())
    };
    let one = |what: &str| -> Result<String, String> {
        positional
            .first()
            .map(|s| (*s).to_owned())
            .ok_or_else(|| format!("`{cmd}` needs {what}"))
    };
    Ok(match cmd.as_str() {
        "-h" | "--help" | "help" => Command::Help,
        "-V" | "--version" => Command::Version,
        "setup" => {
            allow(&[], 1)?;
            Command::Setup {
                url: one("the Worker's URL")?,
            }
        }
        "login" => {
            allow(&[], 1)?;
            Command::Login {
                target: one("the Worker's URL or a pairing link")?,
            }
        }
        "logout" => {
            allow(&[], 0)?;
            Command::Logout
        }
        "rotate-token" => {
            allow(&[], 0)?;
            Command::RotateToken
        }
        "ls" => {
            allow(&["--watch", "--json"], 0)?;
            if flag("--watch") && flag("--json") {
                return Err("`ls --watch` draws for a person; use `ls --json` alone".into());
            }
            Command::Ls {
                watch: flag("--watch"),
                json: flag("--json"),
            }
        }
        "tasks" => {
            allow(&["--json"], 0)?;
            Command::Tasks {
                json: flag("--json"),
            }
        }
        "answer" => {
            // Everything after the question id is the answer, words that
            // start with `--` included (an optional `--` first is dropped).
            let (question, words) = rest
                .split_first()
                .filter(|(q, _)| !q.starts_with("--"))
                .ok_or("`answer` needs a question id and the answer")?;
            let words = match words.split_first() {
                Some((dashes, after)) if dashes == "--" => after,
                _ => words,
            };
            if words.is_empty() {
                return Err("`answer` needs the answer after the question id".into());
            }
            Command::Answer {
                question: question.clone(),
                text: words.join(" "),
            }
        }
        "dismiss" => {
            allow(&[], 1)?;
            Command::Dismiss {
                question: one("a question id")?,
            }
        }
        "pair" => {
            allow(&["--json"], 0)?;
            Command::Pair {
                json: flag("--json"),
            }
        }
        "test-push" => {
            allow(&["--json"], 0)?;
            Command::TestPush {
                json: flag("--json"),
            }
        }
        "channels" => parse_channels(&rest)?,
        other => return Err(format!("unknown command {other:?}")),
    })
}

fn parse_channels(rest: &[String]) -> Result<Command, String> {
    let kind = |k: Option<&String>| -> Result<String, String> {
        match k.map(String::as_str) {
            Some(k @ ("ntfy" | "webhook")) => Ok(k.to_owned()),
            _ => Err("the channel kind is ntfy or webhook".into()),
        }
    };
    match rest.first().map(String::as_str) {
        None => Ok(Command::Channels { json: false }),
        Some("--json") if rest.len() == 1 => Ok(Command::Channels { json: true }),
        Some("set") => {
            let kind = kind(rest.get(1))?;
            let url = rest
                .get(2)
                .filter(|u| !u.starts_with("--"))
                .cloned()
                .ok_or("`channels set KIND URL` needs the URL")?;
            let mut priority = None;
            let mut i = 3;
            while i < rest.len() {
                match rest[i].as_str() {
                    "--priority" if kind == "ntfy" => {
                        priority = rest
                            .get(i + 1)
                            .and_then(|p| p.parse::<u8>().ok())
                            .filter(|p| (1..=5).contains(p))
                            .map(Some)
                            .ok_or("--priority is a number from 1 to 5")?;
                        i += 2;
                    }
                    other => return Err(format!("`channels set` has no option {other}")),
                }
            }
            Ok(Command::ChannelSet {
                kind,
                url,
                priority,
            })
        }
        Some("remove") if rest.len() == 2 => Ok(Command::ChannelRemove {
            kind: kind(rest.get(1))?,
        }),
        Some(other) => Err(format!(
            "unknown `channels` use {other:?}: set, remove or --json"
        )),
    }
}

/// `run` and `__exec`: options up to `--`, then the command as given.
fn parse_with_command(cmd: &str, args: Vec<OsString>) -> Result<Command, String> {
    let Some(dashes) = args.iter().position(|a| a == "--") else {
        return Err(format!(
            "`{cmd}` needs `--` before the command, e.g. needs-you run -- claude"
        ));
    };
    let (opts, command) = args.split_at(dashes);
    let command = command[1..].to_vec();
    if command.is_empty() {
        return Err(format!("`{cmd}` needs a command after `--`"));
    }
    let opts: Vec<String> = opts
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if cmd == "__exec" {
        let [env_file, status_file] = opts.as_slice() else {
            return Err("`__exec` is for `run --tmux` only".into());
        };
        return Ok(Command::Exec {
            env_file: env_file.clone(),
            status_file: status_file.clone(),
            command,
        });
    }
    let mut run = RunOptions {
        name: None,
        expires_s: 7 * 86_400,
        tmux: false,
        command,
    };
    let mut i = 0;
    while i < opts.len() {
        match opts[i].as_str() {
            "--tmux" => run.tmux = true,
            "--name" => {
                let n = opts.get(i + 1).filter(|n| !n.trim().is_empty());
                run.name = Some(n.ok_or("--name needs a name")?.clone());
                i += 1;
            }
            "--expires" => {
                let d = opts.get(i + 1).and_then(|d| duration_s(d));
                run.expires_s = d.ok_or("--expires needs a duration such as 90m, 8h or 7d")?;
                i += 1;
            }
            other => return Err(format!("`run` has no option {other}")),
        }
        i += 1;
    }
    Ok(Command::Run(run))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from).collect())
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
        assert!(p(&["run", "claude"]).is_err());
        assert!(p(&["run", "--"]).is_err());
        assert!(p(&["run", "--expires", "soon", "--", "x"]).is_err());
        assert!(p(&["run", "--bogus", "--", "x"]).is_err());
    }

    #[test]
    fn an_answer_keeps_every_word_after_the_question() {
        let answer = |args: &[&str]| match p(args) {
            Ok(Command::Answer { question, text }) => Ok((question, text)),
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
        assert!(answer(&["answer", "q_1"]).is_err());
        assert!(answer(&["answer", "--json", "q_1", "yes"]).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(duration_s("90m"), Some(5400));
        assert_eq!(duration_s("7d"), Some(604_800));
        assert_eq!(duration_s("0h"), None);
        assert_eq!(duration_s("h"), None);
        assert_eq!(duration_s("12"), None);
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
        assert_eq!(p(&["tasks"]).unwrap(), Command::Tasks { json: false });
        assert!(p(&["tasks", "--wat"]).is_err());
        assert!(p(&["ls", "extra"]).is_err());
        assert!(p(&["frobnicate"]).is_err());
        assert_eq!(p(&[]).unwrap(), Command::Help);
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
            Command::ChannelSet {
                kind: "ntfy".into(),
                url: "https://ntfy.sh/t".into(),
                priority: Some(5)
            }
        );
        assert!(p(&["channels", "set", "email", "x"]).is_err());
        assert!(p(&["dismiss"]).is_err());
    }
}
