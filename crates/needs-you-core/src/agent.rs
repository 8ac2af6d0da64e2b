//! What needs-you knows of each agent CLI, in one description per CLI,
//! kept beside its classifier (`classify/claude_code.rs`, `classify/codex.rs`,
//! `classify/plugin_events.rs` for the CLIs our plugins serve): its name, the
//! programs it runs as, how a run for one prompt looks, the hook events
//! installed for it, how its events are read, and why a card of its is
//! answered in the terminal. The installer, doctor, `needs-you run`, the
//! classifier and the Worker's words all read it through [`Cli::describe`],
//! the one place that names every CLI.

use serde_json::Value;

use crate::classify::event::{Decision, HookSpec, Takeable};
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

impl Description {
    /// Whether the hook that runs for `event` is installed as one that
    /// waits, while its dialog is on screen, for an answer from afar
    /// ([`HookSpec::waits`]).
    pub fn waits(&self, event: &Value) -> bool {
        let name = event.get("hook_event_name").and_then(Value::as_str);
        self.hooks.iter().any(|h| h.waits && Some(h.event) == name)
    }
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
///
/// Only the prompt the CLI draws now counts: its rules start at the left
/// edge (what the model or a command prints is indented under the CLI's own
/// marks), and the lower one is the screen's last element but for the
/// CLI's hint line (at most two lines). A menu or dialog (Claude Code's
/// `/model` and `/config`) is drawn in the prompt's place with no rules, so
/// an empty-looking box printed earlier, higher up, never stands in for it,
/// and a line that starts with the sign of a selection below the box means
/// a list is open there.
pub fn prompt_alone_between_rules(screen: &str) -> bool {
    let is_rule = |l: &str| {
        let l = l.trim_end();
        l.chars().count() >= MIN_RULE && l.chars().all(|c| c == '─')
    };
    let lines: Vec<&str> = screen.lines().collect();
    let Some(last) = lines.iter().rposition(|l| !l.trim().is_empty()) else {
        return false;
    };
    let Some(below) = lines[..=last].iter().rposition(|l| is_rule(l)) else {
        return false;
    };
    let foot = &lines[below + 1..=last];
    if foot.len() > FOOT_LINES || foot.iter().any(|l| l.trim_start().starts_with('❯')) {
        return false;
    }
    let Some(above) = below.checked_sub(2) else {
        return false;
    };
    is_rule(lines[above]) && lines[above + 1].trim_end() == "❯"
}

/// The lines a CLI draws below its prompt's lower rule: Claude Code's one
/// line of hints (its mode, `? for shortcuts`); Hermes draws none.
const FOOT_LINES: usize = 2;

/// The shortest line that counts as one of the prompt's rules: they span
/// the terminal's width.
const MIN_RULE: usize = 20;

impl Cli {
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
        let rule = "─".repeat(40);
        assert!(ready(&format!(
            "reply\n{rule}\n❯ \n{rule}\n  ? for shortcuts\n\n"
        )));
    }

    #[test]
    fn a_draft_a_second_line_a_command_list_or_the_shell_mode_is_not() {
        for name in ["draft", "multiline", "slash"] {
            assert!(!ready(&hermes(name)), "{name}");
        }
        let rule = "─".repeat(40);
        assert!(!ready(&format!("{rule}\n! \n{rule}\n  ! for shell mode\n")));
        assert!(!ready("no rules on this screen\n❯\n"));
        assert!(!ready(&format!("{rule}\n❯\n")));
    }

    /// A screen of the real Claude Code 2.1.332 in a 160x45 tmux pane, after
    /// the model's reply printed an empty-looking prompt box of its own.
    fn claude_code(name: &str) -> String {
        crate::fixture(&format!("claude-code.screen.{name}.txt"))
    }

    #[test]
    fn claude_code_s_own_prompt_at_the_foot_is_ready_and_the_box_its_reply_printed_is_not() {
        let screen = claude_code("ready");
        assert!(ready(&screen));
        // The same screen cut below the printed box: that box alone is no prompt.
        let printed: String = screen.lines().take(16).map(|l| format!("{l}\n")).collect();
        assert!(printed.contains("  ❯\n"), "{printed}");
        assert!(!ready(&printed));
    }

    #[test]
    fn a_menu_open_in_the_prompt_s_place_is_never_ready_whatever_was_printed_above() {
        for name in ["model-menu", "config-menu"] {
            assert!(!ready(&claude_code(name)), "{name}");
        }
        // A box drawn at the very foot, but with a list open under it.
        let rule = "─".repeat(40);
        assert!(!ready(&format!("{rule}\n❯\n{rule}\n❯ 1. Yes\n  2. No\n")));
        // Or followed by more than a hint line.
        assert!(!ready(&format!("{rule}\n❯\n{rule}\n  a\n  b\n  c\n")));
    }
}
