//! What needs-you knows of each agent CLI, in one description per CLI,
//! kept beside its classifier (`classify/claude_code.rs`, `classify/codex.rs`,
//! `classify/normalized.rs` for the CLIs our plugins serve): its name, the
//! programs it runs as, how a run for one prompt looks, the hook events
//! installed for it, how its events are read, and why a card of its is
//! answered in the terminal. The installer, doctor, `needs-you run`, the
//! classifier and the Worker's words all read it through [`Cli::describe`],
//! the one place that names every CLI.

use serde_json::Value;

use crate::classify::{self, Decision, HookSpec, Takeable};
use crate::kinds::{Cli, Kind};

/// One CLI, as the project knows it.
#[derive(Clone, Copy)]
pub struct Description {
    /// The product's own name, as a person reads it ("Claude Code is asking").
    pub name: &'static str,
    /// The names of the programs it runs as (`claude`, `claude.exe`).
    pub programs: &'static [&'static str],
    /// Whether its own arguments (those after the program, up to `--`)
    /// start a run for one prompt and no person (`claude -p`): nobody can
    /// answer such a run, so it reports nothing.
    pub one_shot: fn(&[&str]) -> bool,
    /// The hook events `report-prompt install` adds to its settings; none
    /// for a CLI that loads our plugin instead.
    pub hooks: &'static [HookSpec],
    /// The timeout written for each of them but a waiting one, in seconds:
    /// our hooks return in milliseconds.
    pub hook_timeout_s: u64,
    /// Whether its settings take a hook's timeout in milliseconds (Gemini
    /// CLI's) rather than seconds.
    pub timeouts_in_ms: bool,
    /// What one event means, and what its dialog could take from afar.
    pub classify: fn(&Value) -> (Decision, Option<Takeable>),
    /// Whether a dialog that the event opens can end without a hook, so
    /// that its transcript is watched.
    pub transcript_watched: fn(&Value) -> bool,
    /// Whether a line appended to that transcript means the dialog is gone.
    pub transcript_line_ends_dialog: fn(&str) -> bool,
    /// Where the reporter reads a round's reply that the CLI's own event
    /// garbles; `None` where the event's is right.
    pub reply_in_transcript: Option<ReplyInTranscript>,
    /// Whether its screen (as plain text) shows its prompt empty and in its
    /// ordinary mode, where a typed line is a message to the model: a
    /// half-typed draft would join the answer, and its shell mode would run
    /// it as a command. Checked before a reply is typed; `None` where the
    /// screen is not read for it.
    pub prompt_ready: Option<fn(&str) -> bool>,
    /// Whether it may start its hooks without the variables whose names look
    /// like secrets, the task credential's among them (Gemini CLI with its
    /// `security.environmentVariableRedaction` on): the hook then reads the
    /// credential from the agent process's own environment, so that no
    /// setting has to hand it to the model's commands as well.
    pub hooks_lose_credential: bool,
    /// How a hook of our plugin for it (an extension, for Gemini CLI) names
    /// the plugin's folder, which the CLI sets or substitutes when it runs
    /// the hook; `None` where we ship no such plugin.
    pub plugin_root: Option<&'static str>,
    /// Why a dialog or permission of its (never a reply) is answered in the
    /// terminal, when its reporter said it takes nothing from afar.
    pub why_not: fn(Kind) -> &'static str,
}

/// [`Description::hook_timeout_s`] for a CLI with no rule of its own.
pub const HOOK_TIMEOUT_S: u64 = 10;

/// A round-end event whose copy of the reply cannot be trusted, and how its
/// transcript has it: before classifying `event`, the reporter replaces its
/// `field` with the text of the transcript's last line that `text_of` reads
/// as the model's.
#[derive(Clone, Copy)]
pub struct ReplyInTranscript {
    pub event: &'static str,
    pub field: &'static str,
    pub text_of: fn(&str) -> Option<String>,
}

/// Why a question is answered in the terminal when nothing more particular
/// is known of its CLI.
pub const WHY_NOT: &str =
    "answer it in the agent's terminal: its reporter cannot take an answer from afar";

/// A description's [`Description::why_not`] when its CLI has nothing more to say.
pub fn no_more_to_say(_: Kind) -> &'static str {
    WHY_NOT
}

/// A description's [`Description::transcript_watched`] and
/// [`Description::transcript_line_ends_dialog`] for a CLI whose dialogs
/// always end in an event of their own.
pub fn never<T: ?Sized>(_: &T) -> bool {
    false
}

/// The first of a command line's own arguments that is no option: its
/// subcommand, if it has one (`codex exec`).
pub fn first_word<'a>(own: &[&'a str]) -> Option<&'a str> {
    own.iter().find(|a| !a.starts_with('-')).copied()
}

/// A description's [`Description::prompt_ready`] for a CLI that draws its
/// input between two horizontal rules at the foot of the screen, `❯` alone
/// when it is empty (Claude Code 2.1.332, Hermes 0.19.0). A draft follows the
/// sign or takes more lines, a command list opened by `/` shows the `/`, and
/// Claude Code's shell mode (`!` on an empty prompt, until Backspace) shows
/// `!` in place of the sign.
pub fn prompt_alone_between_rules(screen: &str) -> bool {
    let is_rule = |l: &str| !l.trim().is_empty() && l.trim().chars().all(|c| c == '─');
    let lines: Vec<&str> = screen.lines().collect();
    let rules: Vec<usize> = (0..lines.len()).filter(|&i| is_rule(lines[i])).collect();
    match rules[..] {
        [.., above, below] => matches!(&lines[above + 1..below], [input] if input.trim() == "❯"),
        _ => false,
    }
}

impl Cli {
    /// What the project knows of this CLI. A copy, always inlined: a
    /// caller that reads only its words (the Worker's) leaves its
    /// classifier out of the build.
    #[inline(always)]
    pub const fn describe(self) -> Description {
        match self {
            Cli::ClaudeCode => classify::CLAUDE_CODE,
            Cli::Codex => classify::CODEX,
            Cli::Opencode => classify::OPENCODE,
            Cli::Hermes => classify::HERMES,
            Cli::Copilot => classify::COPILOT,
            Cli::Gemini => classify::GEMINI,
        }
    }

    /// The CLI that a program of this name is, if any.
    pub fn of_program(name: &str) -> Option<Cli> {
        let name = name.rsplit('/').next().unwrap_or(name);
        Cli::ALL
            .iter()
            .copied()
            .find(|c| c.describe().programs.contains(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::prompt_alone_between_rules as ready;

    /// A screen of the real Hermes 0.19.0 in a 160x45 tmux pane, as
    /// `tmux capture-pane -p` gives it.
    fn hermes(name: &str) -> String {
        crate::fixture(&format!("hermes.screen.{name}.txt"))
    }

    #[test]
    fn the_sign_alone_between_the_last_two_rules_is_an_empty_prompt() {
        assert!(ready(&hermes("ready")));
        assert!(ready("reply\n────\n❯ \n────\n  ? for shortcuts\n"));
    }

    #[test]
    fn a_draft_a_second_line_a_command_list_or_the_shell_mode_is_not() {
        for name in ["draft", "multiline", "slash"] {
            assert!(!ready(&hermes(name)), "{name}");
        }
        assert!(!ready("────\n! \n────\n  ! for shell mode\n"));
        assert!(!ready("no rules on this screen\n❯\n"));
        assert!(!ready("────\n❯\n"));
    }
}
