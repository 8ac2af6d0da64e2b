//! A terminal's screen, for "Show terminal": what the relay reads from the
//! agent's tmux pane and seals, and the page and the command line open and
//! show. It is lines of styled spans, and nothing else: text
//! cleaned of every control and invisible character, colours as palette
//! numbers, a few attribute bits. Whatever the pane printed (HTML, escape
//! sequences, a hyperlink) arrives as the text a person saw, never as
//! something a reader could interpret.
//!
//! [`Screen::from_capture`] reads `tmux capture-pane -p -e` (text with SGR
//! sequences); [`Screen::checked`] is the one place that bounds and cleans a
//! screen, run by the relay before it seals one and by the command line on
//! every screen it opens (the Worker cannot read it; the page draws only
//! text and palette numbers); [`Screen::to_ansi`] draws one for a terminal.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::text::is_invisible;

/// The most lines a screen keeps: the bottom ones, where the cursor is.
pub const MAX_LINES: usize = 200;
/// The most characters a line keeps.
pub const MAX_COLUMNS: usize = 400;
/// The most bytes a screen's JSON may take; lines go from the top until it fits.
pub const MAX_BYTES: usize = 64 * 1024;

/// Attribute bits of a [`Span`].
pub const BOLD: u8 = 1;
pub const DIM: u8 = 2;
pub const ITALIC: u8 = 4;
pub const UNDERLINE: u8 = 8;
pub const REVERSE: u8 = 16;
pub const STRIKE: u8 = 32;
const KNOWN: u8 = BOLD | DIM | ITALIC | UNDERLINE | REVERSE | STRIKE;

/// A run of text in one style. Short keys: a busy pane sends many.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Span {
    /// The text.
    pub t: String,
    /// The foreground colour, a number of the 256-colour palette; none: the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fg: Option<u8>,
    /// The background colour, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg: Option<u8>,
    /// Attribute bits ([`BOLD`], [`DIM`], …).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub a: u8,
}

fn is_zero(a: &u8) -> bool {
    *a == 0
}

/// One screen of a pane.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Screen {
    /// The pane's size, in columns and lines.
    pub width: u16,
    pub height: u16,
    /// The cursor's line among `lines`, when the pane shows its cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u16>,
    pub lines: Vec<Vec<Span>>,
}

/// The style a span is drawn in while reading a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Style {
    fg: Option<u8>,
    bg: Option<u8>,
    a: u8,
}

impl Screen {
    /// Reads `tmux capture-pane -p -e`: one line per screen line, its style
    /// changes as SGR sequences (a style runs on into the next line, as tmux
    /// writes it). Every other escape or control sequence is dropped.
    pub fn from_capture(capture: &str, width: u16, height: u16, cursor: Option<u16>) -> Screen {
        let mut style = Style::default();
        let mut lines = Vec::new();
        for raw in capture.split('\n') {
            lines.push(read_line(raw, &mut style));
        }
        // The capture ends with a line break: no line after it.
        if capture.ends_with('\n') {
            lines.pop();
        }
        Screen {
            width,
            height,
            cursor,
            lines,
        }
        .checked()
    }

    /// The screen bounded and cleaned: spans of text only (no control or
    /// invisible character), known attribute bits, at most [`MAX_LINES`]
    /// lines of [`MAX_COLUMNS`] characters and [`MAX_BYTES`] of JSON, the
    /// cursor on a line it has.
    pub fn checked(self) -> Screen {
        let Screen {
            width,
            height,
            cursor,
            lines,
        } = self;
        let mut cursor = cursor.map(usize::from);
        let mut lines: Vec<Vec<Span>> = lines
            .into_iter()
            .map(|line| {
                let mut left = MAX_COLUMNS;
                let mut out: Vec<Span> = Vec::new();
                for span in line {
                    let t: String = span
                        .t
                        .chars()
                        .filter(|c| !c.is_control() && !is_invisible(*c))
                        .take(left)
                        .collect();
                    left -= t.chars().count();
                    if t.is_empty() {
                        continue;
                    }
                    let a = span.a & KNOWN;
                    match out.last_mut() {
                        Some(last) if (last.fg, last.bg, last.a) == (span.fg, span.bg, a) => {
                            last.t.push_str(&t)
                        }
                        _ => out.push(Span {
                            t,
                            fg: span.fg,
                            bg: span.bg,
                            a,
                        }),
                    }
                }
                out
            })
            .collect();
        let mut drop_top = |lines: &mut Vec<Vec<Span>>, n: usize| {
            lines.drain(..n);
            cursor = cursor.and_then(|c| c.checked_sub(n));
        };
        if lines.len() > MAX_LINES {
            let n = lines.len() - MAX_LINES;
            drop_top(&mut lines, n);
        }
        // Each line's share of the JSON, to drop the fewest lines.
        let mut size = json_len(&lines);
        let mut n = 0;
        while size > MAX_BYTES && n < lines.len() {
            size -= json_len(&lines[n..n + 1]).saturating_sub(1);
            n += 1;
        }
        drop_top(&mut lines, n);
        Screen {
            width,
            height,
            cursor: cursor
                .filter(|c| *c < lines.len())
                .and_then(|c| u16::try_from(c).ok()),
            lines,
        }
    }

    /// A short digest of what it shows: a reader that has this screen sends
    /// it back, and is told "unchanged" rather than sent it again.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).expect("a screen serializes");
        let hash = Sha256::digest(&json);
        hash[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The screen as plain text, one line each.
    pub fn to_plain(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            for span in line {
                out.push_str(&span.t);
            }
            out.push('\n');
        }
        out
    }

    /// The screen for a terminal: its text with SGR sequences made here from
    /// its numbers (the only escapes it holds), each line ending in a reset.
    pub fn to_ansi(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            for span in line {
                let mut codes: Vec<String> = Vec::new();
                for (bit, code) in [
                    (BOLD, 1),
                    (DIM, 2),
                    (ITALIC, 3),
                    (UNDERLINE, 4),
                    (REVERSE, 7),
                    (STRIKE, 9),
                ] {
                    if span.a & bit != 0 {
                        codes.push(code.to_string());
                    }
                }
                if let Some(fg) = span.fg {
                    codes.push(format!("38;5;{fg}"));
                }
                if let Some(bg) = span.bg {
                    codes.push(format!("48;5;{bg}"));
                }
                if codes.is_empty() {
                    out.push_str(&span.t);
                } else {
                    out.push_str(&format!("\u{1b}[{}m{}\u{1b}[0m", codes.join(";"), span.t));
                }
            }
            out.push('\n');
        }
        out
    }
}

fn json_len(lines: &[Vec<Span>]) -> usize {
    serde_json::to_vec(lines).map_or(0, |v| v.len())
}

/// One line of a capture into spans, `style` carried in and out.
fn read_line(raw: &str, style: &mut Style) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, spans: &mut Vec<Span>, style: &Style| {
        if !text.is_empty() {
            spans.push(Span {
                t: std::mem::take(text),
                fg: style.fg,
                bg: style.bg,
                a: style.a,
            });
        }
    };
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    let mut params = String::new();
                    let mut plain = true;
                    let mut last = None;
                    for c in chars.by_ref() {
                        match c {
                            '\u{30}'..='\u{3f}' => params.push(c),
                            '\u{20}'..='\u{2f}' => plain = false,
                            _ => {
                                last = Some(c);
                                break;
                            }
                        }
                    }
                    if plain && last == Some('m') {
                        let before = *style;
                        sgr(&params, style);
                        if *style != before {
                            flush(&mut text, &mut spans, &before);
                        }
                    }
                }
                // OSC (a title, a hyperlink), DCS, SOS, PM, APC: up to their end.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => text.push(' '),
            c if c.is_control() || is_invisible(c) => {}
            c => text.push(c),
        }
    }
    flush(&mut text, &mut spans, style);
    spans
}

/// Applies one SGR sequence's parameters (`1;38;5;208`, `38:2::255:0:0`).
fn sgr(params: &str, style: &mut Style) {
    let groups: Vec<Vec<u16>> = params
        .split(';')
        .map(|g| g.split(':').map(|p| p.parse().unwrap_or(0)).collect())
        .collect();
    let mut i = 0;
    while i < groups.len() {
        let g = &groups[i];
        let code = g[0];
        i += 1;
        match code {
            0 => *style = Style::default(),
            1 => style.a |= BOLD,
            2 => style.a |= DIM,
            3 => style.a |= ITALIC,
            4 => {
                if g.get(1) == Some(&0) {
                    style.a &= !UNDERLINE
                } else {
                    style.a |= UNDERLINE
                }
            }
            7 => style.a |= REVERSE,
            9 => style.a |= STRIKE,
            21 => style.a |= UNDERLINE,
            22 => style.a &= !(BOLD | DIM),
            23 => style.a &= !ITALIC,
            24 => style.a &= !UNDERLINE,
            27 => style.a &= !REVERSE,
            29 => style.a &= !STRIKE,
            30..=37 => style.fg = Some((code - 30) as u8),
            39 => style.fg = None,
            40..=47 => style.bg = Some((code - 40) as u8),
            49 => style.bg = None,
            90..=97 => style.fg = Some((code - 90 + 8) as u8),
            100..=107 => style.bg = Some((code - 100 + 8) as u8),
            38 | 48 | 58 => {
                // The colour's numbers: after colons in the same group, or
                // in the groups that follow.
                let (colour, used) = if g.len() > 1 {
                    (extended(&g[1..]), 0)
                } else {
                    let rest: Vec<u16> = groups[i..].iter().map(|g| g[0]).collect();
                    let used = match rest.first() {
                        Some(5) => 2,
                        Some(2) => 4,
                        _ => rest.len(),
                    };
                    (extended(&rest[..used.min(rest.len())]), used)
                };
                i += used;
                match code {
                    38 => style.fg = colour,
                    48 => style.bg = colour,
                    _ => {} // an underline's colour: not shown
                }
            }
            _ => {}
        }
    }
}

/// `5;N` or `2;R;G;B` (with an optional colour-space id after the colon
/// form's `2`) as a palette number.
fn extended(p: &[u16]) -> Option<u8> {
    match p {
        [5, n, ..] => u8::try_from(*n).ok(),
        [2, _, r, g, b] | [2, r, g, b] => Some(nearest(
            (*r).min(255) as u8,
            (*g).min(255) as u8,
            (*b).min(255) as u8,
        )),
        _ => None,
    }
}

/// The palette number nearest to a true colour: the 6×6×6 cube or the grey ramp.
fn nearest(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_i = ((avg.saturating_sub(8)) / 10).min(23) as u8;
    let grey = 8 + 10 * grey_i;
    let dist = |(x, y, z): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    if dist((grey, grey, grey)) < dist(cube) {
        232 + grey_i
    } else {
        16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(t: &str, fg: Option<u8>, a: u8) -> Span {
        Span {
            t: t.into(),
            fg,
            bg: None,
            a,
        }
    }

    #[test]
    fn a_capture_reads_into_styled_spans() {
        let s = Screen::from_capture(
            "\u{1b}[1m\u{1b}[31mError:\u{1b}[39m build\u{1b}[0m done\nplain\n",
            80,
            24,
            Some(1),
        );
        assert_eq!(
            s.lines,
            vec![
                vec![
                    span("Error:", Some(1), BOLD),
                    span(" build", None, BOLD),
                    span(" done", None, 0)
                ],
                vec![span("plain", None, 0)],
            ]
        );
        assert_eq!(s.cursor, Some(1));
        assert_eq!(s.to_plain(), "Error: build done\nplain\n");
    }

    #[test]
    fn a_style_runs_on_into_the_next_line() {
        let s = Screen::from_capture("\u{1b}[32mgreen\nstill\u{1b}[0m\n", 80, 24, None);
        assert_eq!(s.lines[1], vec![span("still", Some(2), 0)]);
    }

    #[test]
    fn extended_colours_become_palette_numbers() {
        let s = Screen::from_capture(
            "\u{1b}[38;5;208ma\u{1b}[38;2;255;0;0mb\u{1b}[38:2::0:0:255mc\u{1b}[48;5;17;1md\u{1b}[94me",
            80,
            24,
            None,
        );
        let l = &s.lines[0];
        assert_eq!(l[0].fg, Some(208));
        assert_eq!(l[1].fg, Some(196), "pure red is the cube's 196");
        assert_eq!(l[2].fg, Some(21), "pure blue is the cube's 21");
        assert_eq!((l[3].bg, l[3].a), (Some(17), BOLD));
        assert_eq!(l[4].fg, Some(12), "bright blue");
        assert_eq!(nearest(128, 128, 128), 244);
    }

    #[test]
    fn other_sequences_and_controls_are_dropped_and_html_stays_text() {
        let s = Screen::from_capture(
            "\u{1b}]8;;https://evil.example\u{1b}\\link\u{1b}]8;;\u{1b}\\ \u{1b}]0;title\u{7}<script>alert(1)</script>\u{1b}[2J\u{1b}[?25l\u{7}\u{8}x\u{202e}y",
            80,
            24,
            None,
        );
        assert_eq!(s.to_plain(), "link <script>alert(1)</script>xy\n");
        assert_eq!(s.lines[0].len(), 1, "no sequence made a style");
    }

    #[test]
    fn a_made_up_screen_is_bounded_and_cleaned() {
        let line = vec![Span {
            t: format!("\u{1b}[31m{}", "x".repeat(1000)),
            fg: Some(3),
            bg: None,
            a: 0xff,
        }];
        let s = Screen {
            width: 80,
            height: 24,
            cursor: Some(299),
            lines: vec![line; 300],
        }
        .checked();
        assert!(s.lines.len() <= MAX_LINES);
        let first = &s.lines[0][0];
        assert_eq!(first.t.chars().count(), MAX_COLUMNS);
        assert!(first.t.starts_with("[31m"), "the escape character went");
        assert_eq!(first.a, KNOWN);
        assert!(serde_json::to_vec(&s).unwrap().len() <= MAX_BYTES);
        assert_eq!(
            s.cursor.map(usize::from),
            Some(s.lines.len() - 1),
            "the cursor stays on its line"
        );
        let gone = Screen {
            cursor: Some(5),
            lines: vec![vec![]],
            ..Screen::default()
        }
        .checked();
        assert_eq!(gone.cursor, None);
    }

    #[test]
    fn the_digest_follows_what_is_shown() {
        let a = Screen::from_capture("one\n", 80, 24, Some(0));
        let b = Screen::from_capture("one\n", 80, 24, Some(0));
        let c = Screen::from_capture("\u{1b}[1mone\n", 80, 24, Some(0));
        assert_eq!(a.digest(), b.digest());
        assert_ne!(a.digest(), c.digest());
        assert_eq!(a.digest().len(), 16);
    }

    #[test]
    fn ansi_is_made_from_the_numbers_only() {
        let s = Screen::from_capture("\u{1b}[1;31mred\u{1b}[0m plain\n", 80, 24, None);
        assert_eq!(s.to_ansi(), "\u{1b}[1;38;5;1mred\u{1b}[0m plain\n");
    }
}
