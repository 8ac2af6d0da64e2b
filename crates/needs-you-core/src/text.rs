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
//! [`line()`] makes one line of a text (names, answers); [`paragraphs`] keeps
//! its line breaks (a question's text). The Worker cleans what it stores, the
//! command line what it prints, and the relay what it types, each with these.

/// Whether `c` shows nothing and changes how the text around it reads:
/// Unicode's whole default-ignorable set (format characters such as bidi
/// embeddings, overrides and isolates, zero-width spaces and joiners, the
/// BOM, tag characters; the combining grapheme joiner; the Hangul fillers
/// that render as blank letters; the reserved blocks), the variation
/// selectors, and the other format characters (general category Cf).
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' // soft hyphen
        | '\u{034F}' // combining grapheme joiner
        | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}' | '\u{0890}'..='\u{0891}'
        | '\u{08E2}'
        | '\u{115F}' | '\u{1160}' // Hangul fillers
        | '\u{17B4}' | '\u{17B5}' // Khmer inherent vowels
        | '\u{180B}'..='\u{180F}' // Mongolian variation selectors and vowel separator
        | '\u{200B}'..='\u{200F}' // zero-width space, non-joiner, joiner; LRM, RLM
        | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
        | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, isolates, deprecated formats
        | '\u{3164}' | '\u{FFA0}' // Hangul fillers
        | '\u{FE00}'..='\u{FE0F}' // variation selectors
        | '\u{FEFF}' | '\u{FFF0}'..='\u{FFFB}'
        | '\u{110BD}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}' // tag characters, variation selectors supplement, reserved
    )
}

/// `s` with nothing hidden: line breaks and tabs kept, every other control or
/// invisible character ([`is_invisible`]) written out as `⟨U+XXXX⟩`. This
/// is how a request that an allow covers is shown: dropping a character
/// there would show the person something other than what runs.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() || is_invisible(c) || matches!(c, '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\u{27E8}U+{:04X}\u{27E9}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
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

/// Whether `s` needs no cleaning as a [`line()`]: what the Worker checks before
/// it stores a name as given.
pub fn is_clean_line(s: &str) -> bool {
    line(s) == s
}

/// Whether `s` is base64url without padding, and not empty: how every key,
/// signature, statement, proof and sealed word travels.
pub fn is_b64url(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Cuts `s` to at most `max` characters, the last of them an ellipsis when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some(_) => {
            let keep = s
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(0, |(i, _)| i);
            format!("{}…", &s[..keep])
        }
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary, the last
/// character an ellipsis when cut: for services that count bytes.
pub fn truncate_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let budget = max.saturating_sub('…'.len_utf8());
    let keep = s
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .take_while(|&end| end <= budget)
        .last()
        .unwrap_or(0);
    format!("{}…", &s[..keep])
}

#[cfg(test)]
mod truncate_tests {
    use super::*;

    #[test]
    fn bytes_are_cut_at_a_character_boundary_with_an_ellipsis() {
        assert_eq!(truncate_bytes("abc", 3), "abc");
        assert_eq!(truncate_bytes("abcdef", 5), "ab…");
        // Four bytes a rocket: two fit in 8 + 3 bytes, not three.
        let cut = truncate_bytes(&"\u{1F680}".repeat(5), 11);
        assert_eq!(cut, format!("{}…", "\u{1F680}".repeat(2)));
        assert!(truncate_bytes(&"é".repeat(100), 10).len() <= 10);
    }
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

    #[test]
    fn the_invisible_set_is_unicode_s_default_ignorables_and_the_variation_selectors() {
        for c in [
            '\u{034F}',
            '\u{FE0F}',
            '\u{FE00}',
            '\u{180B}',
            '\u{17B4}',
            '\u{2065}',
            '\u{FFF0}',
            '\u{E0100}',
            '\u{E01EF}',
            '\u{E0FFF}',
        ] {
            assert!(is_invisible(c), "U+{:04X}", c as u32);
            assert_eq!(line(&format!("a{c}b")), "ab");
        }
        for c in ['a', ' ', '\u{00A0}', '\u{FE10}', '\u{2070}', '✓'] {
            assert!(!is_invisible(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn visible_text_shows_what_it_holds() {
        assert_eq!(
            visible("rm -rf build\u{202E}/\u{1b}[2J\r\ttwo\nlines"),
            "rm -rf build⟨U+202E⟩/⟨U+001B⟩[2J⟨U+000D⟩\ttwo\nlines"
        );
        assert_eq!(visible("héllo ✓"), "héllo ✓");
    }
}
