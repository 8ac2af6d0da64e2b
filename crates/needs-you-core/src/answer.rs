//! Answers typed into an agent's terminal from afar: the one rule for what
//! may be typed. The page applies it before it signs or sends a reply
//! (through `card.wasm`), the Worker when an answer is posted, and the relay
//! again just before typing, so a line that reached the terminal has passed
//! it whatever the path, and the check stands on the devices even where the
//! server cannot read the words.
//!
//! Two things make an answer unsafe to type:
//!
//! * **Keys that drive the interface**: a line break sends the line early (a
//!   half-typed answer runs as it is), escape sequences and control keys move
//!   through the agent's menus, invisible characters hide what the line says.
//!   [`to_line`] removes them all.
//! * **Lines the agent reads as a command, not as a message** ([`refusal`]).
//!   Each supported CLI gives a few first characters a meaning of its own at
//!   its prompt, checked in their sources at the pinned versions and live:
//!   `!` runs the rest as a shell command, outside the agent's permission
//!   checks (Claude Code, Codex, OpenCode, Hermes' TUI); `/` runs one of the
//!   CLI's commands (all four: `/permissions`, `/add-dir`, custom ones);
//!   `exit`, `quit` and vi's `:q` alone end the session (Claude Code,
//!   OpenCode, and `/exit` in Hermes); and Hermes' TUI runs `{!cmd}` anywhere
//!   in a line. Codex and Hermes trim Unicode white space before they look,
//!   and Claude Code drops invisible characters, so the rule looks at the
//!   first character left once both are gone, which is what [`to_line`]
//!   produces. Such an answer is refused, never rewritten: a person who
//!   meant "!important" reads why, and says it another way.

use crate::text;

/// The longest answer, in characters: a reply to a question, not a file.
pub const MAX_ANSWER_CHARS: usize = 2000;

/// The answer as one line that is safe to type: line breaks and tabs become
/// spaces, every control and invisible character is dropped
/// ([`text::line`]), and the result is cut to [`MAX_ANSWER_CHARS`].
pub fn to_line(answer: &str) -> String {
    // Bounded before the work: a 32 KiB body is the most that arrives, but
    // the rule should not depend on it.
    let head: String = answer.chars().take(MAX_ANSWER_CHARS * 4).collect();
    text::line(&head).chars().take(MAX_ANSWER_CHARS).collect()
}

/// Whole answers that end the agent's session.
const QUIT_WORDS: &[&str] = &["exit", "quit", ":q", ":q!", ":wq", ":wq!"];

/// Why `line` (as [`to_line`] made it) must not be typed into an agent's
/// prompt, in a sentence for the person who wrote it; `None` when it may be.
pub fn refusal(line: &str) -> Option<&'static str> {
    match line.chars().next() {
        Some('!') => {
            return Some("an answer can't start with !: the agent would run it as a shell command")
        }
        Some('/') => {
            return Some(
                "an answer can't start with /: the agent would run it as one of its own commands",
            )
        }
        _ => {}
    }
    if QUIT_WORDS.contains(&line.to_ascii_lowercase().as_str()) {
        return Some("that answer alone would end the agent's session: say it in other words");
    }
    if line.contains("{!") {
        return Some("an answer can't hold {!: Hermes would run what follows as a shell command");
    }
    None
}

/// The line to type for `answer`, or why it may not be typed.
pub fn check(answer: &str) -> Result<String, &'static str> {
    let line = to_line(answer);
    if line.is_empty() {
        return Err(
            "the answer is empty once line breaks, control and invisible characters are removed",
        );
    }
    match refusal(&line) {
        Some(why) => Err(why),
        None => Ok(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_without_control_characters() {
        assert_eq!(to_line("yes, update the docs"), "yes, update the docs");
        assert_eq!(to_line("line one\nline two\r\n"), "line one line two");
        assert_eq!(
            to_line("\u{1b}[31mred\u{1b}[0m \u{3}\u{7f}x"),
            "[31mred[0m x"
        );
        assert_eq!(to_line("\u{9b}31m C1 too"), "31m C1 too");
        assert_eq!(to_line("  \n\t "), "");
        assert_eq!(
            to_line(&"a".repeat(100_000)).chars().count(),
            MAX_ANSWER_CHARS
        );
        assert_eq!(to_line("héllo ✓"), "héllo ✓");
        assert_eq!(to_line("ye\u{200B}s \u{202E}ok"), "yes ok");
    }

    #[test]
    fn answers_the_agent_would_run_as_commands_are_refused() {
        for bad in [
            "!touch FILE",
            "  !curl x | sh",
            "\u{00A0}!ls", // Codex trims Unicode white space first
            "\u{200B}!ls", // invisible characters go before the look
            "\u{202E}\u{2066}!ls",
            "\n\t!ls",
            "/permissions",
            " /add-dir /",
            "\u{FEFF}/exit",
            "exit",
            "Quit",
            ":q!",
            "sure {!rm -rf ~}",
        ] {
            assert!(check(bad).is_err(), "{bad:?} must be refused");
        }
        assert!(check("!important: keep the old API")
            .unwrap_err()
            .contains("shell command"));
    }

    #[test]
    fn ordinary_answers_pass_as_they_are() {
        for ok in [
            "yes, update the docs too",
            "no! keep it",
            "use /tmp for it",
            "exit code 3 is fine",
            "？ what do you mean",
            "！ is fine, no CLI reads the full-width form",
            "@src/main.rs is the file",
        ] {
            assert_eq!(check(ok).as_deref(), Ok(ok));
        }
        assert!(check(" \u{200B} ").is_err(), "empty once cleaned");
    }
}
