//! `run`'s options: how a task is started under watch.

use std::ffi::OsString;

use clap::Args;

use super::values::{duration_s, non_blank};

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
