//! Whether OpenCode's screen shows its prompt empty in its ordinary mode
//! (seen with 1.18.33), before the relay types a reply into it.
//!
//! The prompt is a box at the foot of the screen: rows that start with `┃`,
//! then the mode row (`┃  Build · <model>`, or `┃  Shell` in the shell mode
//! that `!` on an empty prompt turns on), closed by a border of `╹▀▀…`. Its
//! input rows are empty when the prompt is; a draft, or a command list opened
//! by `/`, puts text on them. The box is as wide as its border: what stands to
//! its right (the session's sidebar) is not read.

/// The sign that starts each row of the prompt's box.
const ROW: char = '┃';
/// The corner that starts the border closing the box.
const CORNER: char = '╹';

pub fn prompt_ready(screen: &str) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(border) = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with(CORNER))
    else {
        return false;
    };
    let line = lines[border].trim_end();
    let Some(left) = line.chars().position(|c| c == CORNER) else {
        return false;
    };
    let width = line.chars().count() - left;
    // The part of a row inside the box: its text after the row's sign, or
    // None for a row that is not the box's.
    let inside = |row: &str| -> Option<String> {
        let cut: String = row.chars().skip(left).take(width).collect();
        cut.strip_prefix(ROW).map(|rest| rest.trim().to_owned())
    };
    let footer = lines.get(border + 1).copied().unwrap_or("");
    let Some(mode) = border.checked_sub(1).and_then(|i| inside(lines[i])) else {
        return false;
    };
    if mode == "Shell" || footer.contains("exit shell mode") {
        return false;
    }
    let input: Vec<String> = lines[..border - 1]
        .iter()
        .rev()
        .map_while(|row| inside(row))
        .collect();
    !input.is_empty() && input.iter().all(String::is_empty)
}

#[cfg(test)]
mod tests {
    use super::prompt_ready;

    /// A screen of the real OpenCode 1.18.33 in a 160x45 tmux pane, as
    /// `tmux capture-pane -p` gives it.
    fn screen(name: &str) -> String {
        crate::fixture(&format!("opencode.screen.{name}.txt"))
    }

    #[test]
    fn an_empty_prompt_after_a_reply_is_ready() {
        assert!(prompt_ready(&screen("ready")));
    }

    #[test]
    fn a_draft_the_shell_mode_or_the_command_list_is_not() {
        for name in ["draft", "shell", "commands"] {
            assert!(!prompt_ready(&screen(name)), "{name}");
        }
    }

    /// The start screen's placeholder reads as text: no reply is open
    /// before the first turn, and a refusal is the safe side.
    #[test]
    fn the_start_screen_s_placeholder_is_not_taken_for_an_empty_prompt() {
        assert!(!prompt_ready(&screen("start")));
    }

    #[test]
    fn a_screen_without_the_box_is_not_ready() {
        assert!(!prompt_ready(""));
        assert!(!prompt_ready(
            "$ opencode\nbash: opencode: command not found\n"
        ));
        // The border alone, with nothing of the box above it.
        assert!(!prompt_ready("  ╹▀▀▀▀▀▀▀▀▀▀\n"));
    }

    /// A draft's text is read within the box only: the sidebar beside the
    /// box's rows is not the prompt, and text in the box is, wherever it is.
    #[test]
    fn text_beside_the_box_is_not_read_and_text_in_it_is() {
        let ready = screen("ready");
        let beside = ready.replacen(
            "  ┃\n",
            &format!("  ┃{}Modified files\n", " ".repeat(118)),
            1,
        );
        assert!(prompt_ready(&beside));
        let typed = ready.replacen(
            "  ┃\n  ┃\n  ┃  Build",
            "  ┃\n  ┃                  rm -rf ~\n  ┃  Build",
            1,
        );
        assert_ne!(typed, ready);
        assert!(!prompt_ready(&typed));
    }
}
