//! `tasks` and `rules`: the lists of what is running and what was granted,
//! and what can be done to their items.

use clap::{Args, Subcommand};

use super::values::duration_s;

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
