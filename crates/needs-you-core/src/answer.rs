//! Answers typed into an agent's terminal from afar: the one rule for what
//! may be typed. The Worker applies it when an answer is posted, and the
//! relay again just before typing, so a line that reached the terminal has
//! passed it whatever the path.

/// The longest answer, in characters: a reply to a question, not a file.
pub const MAX_ANSWER_CHARS: usize = 2000;

/// The answer as one line that is safe to type: line breaks and tabs become
/// spaces (a line break would send the line early, and a half-typed answer
/// runs as it is); every other control character is dropped, escape
/// included, since escape sequences and control keys drive the agent's
/// interface; the result is trimmed and cut to [`MAX_ANSWER_CHARS`].
pub fn to_line(text: &str) -> String {
    let line: String = text
        .chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .take(MAX_ANSWER_CHARS * 2)
        .collect();
    line.trim().chars().take(MAX_ANSWER_CHARS).collect()
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
    }
}
