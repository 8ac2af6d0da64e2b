//! `report-prompt`'s entry: its command line parsed, and each subcommand
//! run. The binary itself is built by the `needs-you` package, so that
//! `cargo install needs-you` installs both commands.

use crate::afar::{awaiting, relay};
use crate::args::{self, Command};
use crate::hook::watch;
use crate::{doctor, hook, install, say, send};

/// Runs `report-prompt` with this process's arguments; returns the exit code.
pub fn main() -> i32 {
    // A panic must cost one line on stderr and exit 0 like any other failure.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
            .unwrap_or("panic");
        say(format_args!("internal error: {msg}"));
    }));
    std::panic::catch_unwind(run).unwrap_or(0)
}

fn run() -> i32 {
    // Read leniently: a hook's arguments that are not UTF-8 are a bad flag,
    // not a panic.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let command = match args::parse(args.iter().cloned()) {
        Ok(c) => c,
        Err(msg) => {
            say(format_args!("{msg} (see `report-prompt --help`)"));
            if !args::is_hook(&args) {
                return 2;
            }
            // A hook with a bad flag: still drain stdin, and never fail the agent.
            hook::drain_stdin();
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
        Command::Relay { state_dir } => relay::run(state_dir),
        Command::Await { cli, state_dir } => awaiting::run(cli, state_dir),
        Command::Watch {
            cli,
            state_dir,
            session,
            transcript,
        } => watch::run(cli, state_dir, &session, &transcript),
        Command::Doctor { state_dir } => doctor::run(state_dir),
        Command::Install(opts) => install::run(&opts),
        Command::Help => {
            print!("{}", args::help());
            0
        }
        Command::Version => {
            println!("report-prompt {}", env!("CARGO_PKG_VERSION"));
            0
        }
    }
}
