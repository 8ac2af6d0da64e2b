//! The question test: does the text of a reply end with a question?
//!
//! Agents decorate their last sentence: `**Shall I go on?**`, `(ok?)`, `"done?"`,
//! a trailing code span. The test strips that decoration, repeatedly, and then
//! looks at one character. CJK input methods type the full-width `？`, so it counts.

/// Characters that may follow the question mark without changing the meaning:
/// Markdown emphasis, backticks, closing brackets and parentheses, quotes.
const DECORATION: &[char] = &[
    '*', '_', '~', '`', // Markdown emphasis and code spans
    ')', ']', '}', '）', '］', '】', '」', '』', // closing brackets
    '"', '\'', '“', '”', '‘', '’', '«', '»', // straight and curly quotes
];

/// True when `text`, once trailing white space and decoration are gone, ends
/// with `?` or the full-width `？`.
pub fn ends_with_question(text: &str) -> bool {
    let core = text.trim_end_matches(|c: char| c.is_whitespace() || DECORATION.contains(&c));
    matches!(core.chars().next_back(), Some('?' | '？'))
}

/// The most characters of a reply that a question report carries.
pub const REPLY_TAIL_CHARS: usize = 1000;

/// The end of a reply, for the "Needs you" list: at most [`REPLY_TAIL_CHARS`]
/// characters, starting at a paragraph break when one falls inside that window,
/// with a leading `…` when anything was cut.
pub fn reply_tail(text: &str) -> String {
    let text = text.trim();
    let total = text.chars().count();
    if total <= REPLY_TAIL_CHARS {
        return text.to_owned();
    }
    // Byte offset of the first character inside the window.
    let start = text
        .char_indices()
        .nth(total - REPLY_TAIL_CHARS)
        .map_or(0, |(i, _)| i);
    let window = &text[start..];
    let tail = match window.find("\n\n") {
        Some(i) => window[i..].trim_start(),
        None => window.trim_start(),
    };
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_question_marks() {
        assert!(ends_with_question("Which one?"));
        assert!(ends_with_question("Which one？"));
        assert!(ends_with_question("Which one?\n\n  "));
        assert!(!ends_with_question("Done."));
        assert!(!ends_with_question(""));
        assert!(!ends_with_question("   \n"));
    }

    #[test]
    fn decoration_is_stripped_repeatedly() {
        assert!(ends_with_question("**Shall I go on?**"));
        assert!(ends_with_question("_really?_"));
        assert!(ends_with_question("~~sure?~~"));
        assert!(ends_with_question("Use `x?`"));
        assert!(ends_with_question("(is that ok?)"));
        assert!(ends_with_question("[a or b?]"));
        assert!(ends_with_question("He asked \"why?\""));
        assert!(ends_with_question("“Proceed?”"));
        assert!(ends_with_question("‘ok?’ "));
        assert!(ends_with_question("(**“ok?”**)\n"));
        assert!(ends_with_question("これでいいですか？」"));
    }

    #[test]
    fn question_marks_that_are_not_last_do_not_count() {
        assert!(!ends_with_question("Why? Because it failed."));
        assert!(!ends_with_question("What now? I fixed it!"));
        assert!(!ends_with_question("see `foo?` in the code."));
        // A question mark inside an unclosed code fence line still ends the text.
        assert!(ends_with_question("```\nlet x = a?\n```"));
    }

    #[test]
    fn other_trailing_characters_are_kept() {
        assert!(!ends_with_question("ok?."));
        assert!(!ends_with_question("ok? 🙂"));
        assert!(!ends_with_question("ok?>"));
    }

    #[test]
    fn short_replies_are_kept_whole() {
        assert_eq!(reply_tail("  Which one?  "), "Which one?");
    }

    #[test]
    fn long_replies_keep_the_last_paragraphs() {
        let long = format!("{}\n\nFinal paragraph, shall I go on?", "x".repeat(5000));
        assert_eq!(reply_tail(&long), "…Final paragraph, shall I go on?");
    }

    #[test]
    fn long_replies_without_breaks_keep_the_last_characters() {
        let long = "é".repeat(3000) + "?";
        let tail = reply_tail(&long);
        assert_eq!(tail.chars().count(), REPLY_TAIL_CHARS + 1);
        assert!(tail.starts_with('…') && tail.ends_with("é?"));
    }
}
