//! Text that a person reads: what every name, question and answer is cleaned
//! of before anyone shows or types it.
//!
//! Two kinds of characters never reach a screen or a terminal:
//!
//! * **control characters** (C0, DEL, C1): escape sequences and control keys
//!   drive a terminal (retitle it, clear it, move the cursor) or the agent's
//!   interface;
//! * **invisible characters**: Unicode's format characters (bidi embeddings,
//!   overrides and isolates, zero-width spaces and joiners, the BOM, tag
//!   characters) and the blank "letters" used to pass for nothing. They make
//!   a text read differently from what it holds: a bidi override shows
//!   `rm -rf /` reversed, tag characters carry a hidden message.
//!
//! [`line`] makes one line of a text (names, answers); [`paragraphs`] keeps
//! its line breaks (a question's text). The Worker cleans what it stores, the
//! command line what it prints, and the relay what it types, each with these.

/// Whether `c` shows nothing and changes how the text around it reads:
/// Unicode's format characters (general category Cf), and the Hangul fillers
/// that render as blank letters.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' // soft hyphen
        | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}' | '\u{0890}'..='\u{0891}'
        | '\u{08E2}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}' // zero-width space, non-joiner, joiner; LRM, RLM
        | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' // word joiner, isolates, deprecated formats
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{110BD}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}' | '\u{E0020}'..='\u{E007F}' // tag characters
        | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' // Hangul fillers
    )
}

/// Line breaks of any kind: each becomes a space in a [`line`].
fn is_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\t' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// `s` as one line: line breaks and tabs become spaces, control and
/// invisible characters go, and the ends are trimmed.
pub fn line(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .filter_map(|c| match c {
            c if is_break(c) => Some(' '),
            c if c.is_control() || is_invisible(c) => None,
            c => Some(c),
        })
        .collect();
    cleaned.trim().to_owned()
}

/// `s` with its line breaks kept (`\r\n` and the other breaks become `\n`,
/// a tab four spaces) and every other control or invisible character gone;
/// trailing white space of the whole text is trimmed.
pub fn paragraphs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\t' => out.push_str("    "),
            c if is_break(c) => out.push('\n'),
            c if c.is_control() || is_invisible(c) => {}
            c => out.push(c),
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// Whether `s` needs no cleaning as a [`line`]: what the Worker checks before
/// it stores a name as given.
pub fn is_clean_line(s: &str) -> bool {
    line(s) == s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_and_invisible_characters_leave_a_name() {
        assert_eq!(
            line("phone\u{1b}]0;owned\u{7}\u{1b}[2J"),
            "phone]0;owned[2J"
        );
        assert_eq!(line("pho\u{200B}ne \u{202E}gnp.exe"), "phone gnp.exe");
        assert_eq!(
            line("a\u{E0041}\u{E0042}b"),
            "ab",
            "tag characters carry hidden text"
        );
        assert_eq!(line("\u{FEFF}\u{2066}x\u{2069}"), "x");
        assert_eq!(line("\u{3164}\u{115F}"), "", "blank letters are nothing");
        assert_eq!(line("one\ntwo\r\nthree\u{2028}four"), "one two  three four");
        assert_eq!(line("\u{9b}31m C1 too"), "31m C1 too");
    }

    #[test]
    fn ordinary_text_in_any_script_is_kept() {
        for s in [
            "héllo ✓",
            "これでいいですか？",
            "مرحبا",
            "Grüße, 👋",
            "a - b",
        ] {
            assert_eq!(line(s), s);
            assert!(is_clean_line(s));
        }
        assert!(!is_clean_line(" padded"));
        assert!(!is_clean_line("bell\u{7}"));
    }

    #[test]
    fn paragraphs_keep_their_breaks() {
        assert_eq!(
            paragraphs("Remove it?\r\n$ rm -rf build\u{1b}[0m\n\n"),
            "Remove it?\n$ rm -rf build[0m"
        );
        assert_eq!(paragraphs("a\rb\tc\u{202E}d"), "a\nb    cd");
        assert_eq!(paragraphs("  indented\nkept"), "  indented\nkept");
    }
}
