//! `needs-you`: parse, then hand each command to its module (see `lib.rs`).

use needs_you::cli::{self, ChannelAction, Command, DeviceAction, RuleAction, TaskAction};
use needs_you::commands::deploy::{self, Mode};
use needs_you::commands::{
    account, channels, codex, devices, history, questions, rules, run, trusting, version,
};
use needs_you::fail::Result;

fn main() {
    // Like any Unix tool, a reader that went away (`needs-you tasks | head`)
    // ends it quietly, not with a panic at the next write. Programs that
    // `run` starts get the default back anyway.
    // SAFETY: setting a signal's disposition to its default, before any
    // thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A detached helper that this binary started (the sender, the relay) is
    // report-prompt's, as the hooks start it.
    let first = std::env::args_os().nth(1);
    let first = first.as_ref().and_then(|a| a.to_str()).unwrap_or("");
    if needs_you_reporter::detach::HELPERS.contains(&first) {
        std::process::exit(needs_you_reporter::commands::main());
    }
    let code = match cli::parse(std::env::args_os()) {
        Ok(command) => {
            let owners = owners_own(&command);
            match dispatch(command) {
                Ok(code) => {
                    // After what the person asked for, never in an agent's
                    // path: devices' certificates kept from running out.
                    if owners {
                        trusting::renew_now_and_then();
                    }
                    code
                }
                Err(f) => {
                    // One line, whatever a server or a URL put in the message.
                    eprintln!("needs-you: {}", needs_you_core::text::line(&f.message));
                    f.code
                }
            }
        }
        Err(code) => code,
    };
    std::process::exit(code);
}

/// A command a person runs on the owner's computer to read or answer: after
/// it, the owner's command line renews the certificates it signed
/// (`trusting::renew_now_and_then`). Not `run`, `exec` or `codex`, which
/// stand in an agent's path.
fn owners_own(command: &Command) -> bool {
    matches!(
        command,
        Command::Ls { .. }
            | Command::Tasks(_)
            | Command::Answer { .. }
            | Command::Rules(_)
            | Command::Log { .. }
            | Command::Dismiss { .. }
            | Command::Show { .. }
            | Command::Devices(_)
            | Command::Channels(_)
            | Command::TestPush { .. }
            | Command::Pair { .. }
    )
}

fn dispatch(command: Command) -> Result<i32> {
    match command {
        Command::Setup { url } => account::setup(&url),
        Command::Login {
            target,
            allow,
            code,
            owner,
        } => account::login(&target, &allow, code.as_deref(), owner.as_deref()),
        Command::Logout => account::logout(),
        Command::RotateToken => account::rotate_token(),
        Command::Pair { rights, json } => devices::pair(rights, json),
        Command::Run(opts) => run::run(opts),
        Command::Deploy {
            dry_run,
            local,
            port,
            contact,
        } => deploy::deploy(match (dry_run, local) {
            (true, _) => Mode::DryRun,
            (_, true) => Mode::Local {
                port: port.unwrap_or(8787),
            },
            _ => Mode::Cloud { contact },
        }),
        Command::Version => version::version(),
        Command::Exec {
            env_file,
            status_file,
            command,
        } => run::exec(&env_file, &status_file, command),
        Command::Codex { command } => codex::run(command),
        Command::Ls { watch, json } => questions::ls(watch, json),
        Command::Tasks(args) => match args.action {
            None => questions::tasks(args.json, args.rules),
            Some(TaskAction::Mute { task, for_s }) => questions::mute(&task, for_s),
            Some(TaskAction::Unmute { task }) => questions::mute(&task, 0),
        },
        Command::Answer {
            question,
            allow,
            keep,
            deny,
            choose,
            yes,
            text,
        } => questions::answer(
            &question,
            questions::Reply::from_args(allow, keep, deny, choose, text)?,
            yes,
        ),
        Command::Log { words, limit, json } => history::log(&words, limit, json),
        Command::Rules(args) => match args.action {
            None => rules::list(args.json),
            Some(RuleAction::Revoke { rule }) => rules::revoke(&rule),
        },
        Command::Dismiss { question } => questions::dismiss(&question),
        Command::Show { question, watch } => questions::show(&question, watch),
        Command::Devices(args) => match args.action {
            None => devices::devices(args.json),
            Some(DeviceAction::Revoke { device }) => devices::revoke_device(&device),
        },
        Command::Channels(args) => match args.action {
            None => channels::list(args.json),
            Some(ChannelAction::Set {
                kind,
                url,
                priority,
                words,
            }) => channels::set(kind, &url, priority, words),
            Some(ChannelAction::Remove { kind }) => channels::remove(kind),
        },
        Command::TestPush { json } => channels::test_push(json),
    }
}
