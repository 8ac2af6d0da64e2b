//! `report-prompt`: tells the needs-you server when a coding agent waits for
//! its person, and when the person answered.
//!
//! It runs inside the agent's loop, from Claude Code's and Codex's hooks and
//! from our OpenCode and Hermes plugins, so in hook mode it keeps three
//! promises: nothing on stdout, exit code 0, at most one line on stderr. It
//! decides, updates its state files, hands the request to a detached copy of
//! itself and returns in a few milliseconds.
//!
//! * [`args`]: the command line.
//! * [`hook`]: hook mode: read an event, decide, record, hand off.
//! * [`state`]: the per-user state directory: markers and `seq`.
//! * [`detach`]: starting a detached helper that owns a lock (sender, watcher).
//! * [`outbox`]: the reports waiting to be sent, in order, one sender at a time.
//! * [`parent`]: whether Codex runs this hook in its shared background server.
//! * [`send`]: the detached sender and the HTTP client.
//! * [`watch`]: a dialog's transcript, watched for an end that fires no hook.
//! * [`install`]: adding and removing our hooks in each CLI's settings.
//! * [`doctor`]: a check of the whole set-up, for a person.

mod args;
mod detach;
mod doctor;
mod hook;
mod install;
mod outbox;
mod parent;
mod send;
mod state;
mod watch;

use args::Command;

fn main() {
    // A panic must cost one line on stderr and exit 0 like any other failure.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
            .unwrap_or("panic");
        eprintln!("report-prompt: internal error: {msg}");
    }));
    let code = std::panic::catch_unwind(run).unwrap_or(0);
    std::process::exit(code);
}

fn run() -> i32 {
    let command = match args::parse(std::env::args().skip(1)) {
        Ok(c) => c,
        Err(msg) => {
            // Most likely a hook with a bad flag: still drain stdin, exit 0.
            hook::drain_stdin();
            eprintln!("report-prompt: {msg} (see `report-prompt --help`)");
            return 0;
        }
    };
    match command {
        Command::Hook { cli, state_dir } => {
            hook::run(cli, state_dir);
            0
        }
        Command::Classify { cli } => hook::classify_stdin(cli),
        Command::Send { state_dir } => send::run_sender(state_dir),
        Command::Watch {
            state_dir,
            session,
            transcript,
        } => watch::run(state_dir, &session, &transcript),
        Command::Doctor { state_dir } => doctor::run(state_dir),
        Command::Install(opts) => install::run(&opts),
        Command::Help => {
            print!("{}", args::HELP);
            0
        }
        Command::Version => {
            println!("report-prompt {}", env!("CARGO_PKG_VERSION"));
            0
        }
    }
}
