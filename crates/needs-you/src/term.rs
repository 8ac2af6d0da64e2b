//! The terminal: questions asked of the person (a secret without echo), the
//! width to cut lines to, and QR codes drawn with block characters.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::os::fd::AsRawFd;

/// Asks on the terminal and reads one line; `hidden` turns the echo off
/// while it is typed. Reads from `/dev/tty`, so piped input is never taken
/// for an answer.
pub fn ask(prompt: &str, hidden: bool) -> io::Result<String> {
    let tty = File::options()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| io::Error::new(io::ErrorKind::NotFound, "no terminal to ask on"))?;
    let fd = tty.as_raw_fd();
    (&tty).write_all(prompt.as_bytes())?;
    let saved = hidden.then(|| echo_off(fd)).flatten();
    let mut line = String::new();
    let read = BufReader::new(&tty).read_line(&mut line);
    if let Some(t) = saved {
        // SAFETY: `t` is the terminal's own settings, read above.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
        let _ = (&tty).write_all(b"\n");
    }
    read?;
    Ok(line.trim().to_owned())
}

fn echo_off(fd: i32) -> Option<libc::termios> {
    // SAFETY: termios is plain data; tcgetattr fills it or fails.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return None;
    }
    let saved = t;
    t.c_lflag &= !libc::ECHO;
    // SAFETY: `t` came from tcgetattr with one flag changed.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
    Some(saved)
}

/// Asks `question` at the terminal and reads the answer: `Some(true)` for
/// y or yes, `Some(false)` for anything else; `None`, without asking, when
/// stdin or stderr is not a terminal (a script, which says `--yes`).
pub fn confirm(question: &str) -> Option<bool> {
    if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return None;
    }
    eprint!("{question} [y/N] ");
    let _ = io::stderr().flush();
    let mut line = String::new();
    if io::stdin().lock().read_line(&mut line).is_err() {
        return Some(false);
    }
    Some(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Whether stdout is a terminal (colours), not a pipe or a file (plain text).
pub fn is_tty() -> bool {
    io::stdout().is_terminal()
}

/// Columns of the terminal on stdout: `$COLUMNS`, else the terminal's own,
/// else 100 (a pipe: a script will cut for itself).
pub fn width() -> usize {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return n;
    }
    let out = io::stdout();
    if out.is_terminal() {
        // SAFETY: winsize is plain data; the ioctl fills it or fails.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(out.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) } == 0 && ws.ws_col > 0
        {
            return usize::from(ws.ws_col);
        }
    }
    100
}

/// `s` cut to `max` characters, the last one `…` when cut; line breaks and
/// other control characters become spaces, so that one item stays on one
/// line and nothing from a server drives the terminal; invisible characters
/// go ([`needs_you_core::text`]).
pub fn cut(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .filter(|c| !needs_you_core::text::is_invisible(*c))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut out: String = flat.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A QR code of `text` in block characters (two modules per character
/// height), dark on light, with its quiet zone.
pub fn qr(text: &str) -> Result<String, qrcode::types::QrError> {
    let code = qrcode::QrCode::with_error_correction_level(text, qrcode::EcLevel::M)?;
    Ok(code
        .render::<qrcode::render::unicode::Dense1x2>()
        .dark_color(qrcode::render::unicode::Dense1x2::Light)
        .light_color(qrcode::render::unicode::Dense1x2::Dark)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_keeps_one_line_and_marks_the_cut() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("line one\nline two", 40), "line one line two");
        assert_eq!(cut("abcdefghij", 5), "abcd…");
        assert_eq!(cut("\u{1b}[31mred", 20), " [31mred");
        assert_eq!(cut("a\u{202E}b\u{200B}c", 20), "abc");
    }

    #[test]
    fn a_qr_code_is_drawn_in_blocks() {
        let q = qr("https://x.example/pair#ABCD-EFGH").unwrap();
        assert!(q.lines().count() > 10);
        assert!(q.contains('█') || q.contains('▀') || q.contains('▄'));
    }
}
