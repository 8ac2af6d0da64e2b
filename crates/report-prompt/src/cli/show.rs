//! Lists for a person: the "Needs you" list, the tasks, the channels and a
//! test push's results, each line cut to the terminal's width. Pure: the
//! JSON and the time come in, the text goes out.

use std::io::Write;
use std::time::Duration;

use serde_json::Value;

use needs_you_core::Cli;

use super::term::{cut, width};
use super::{exit, now_ms, Result};
use crate::api::Client;

/// "12s", "3m", "2h", "4d".
pub fn age(ms: f64, now: f64) -> String {
    let s = ((now - ms) / 1000.0).max(0.0) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

fn agent(cli: &Value) -> &str {
    let Some(c) = cli.as_str() else {
        return "-";
    };
    match Cli::parse(c) {
        Some(known) => known.display_name(),
        None => c,
    }
}

/// The open questions, newest first, as the server sorted them.
pub fn questions(list: &Value, now: f64, width: usize) -> String {
    let rows = list.as_array().map(Vec::as_slice).unwrap_or_default();
    if rows.is_empty() {
        return "All quiet: nothing needs you.\n".into();
    }
    let mut out = format!(
        "{:<5} {:<16} {:<11} {:<10} TEXT\n",
        "AGE", "TASK", "AGENT", "KIND"
    );
    for q in rows {
        let text_width = width.saturating_sub(46).max(10);
        let line = format!(
            "{:<5} {:<16} {:<11} {:<10} {}",
            age(q["opened_at"].as_f64().unwrap_or(now), now),
            cut(q["task_name"].as_str().unwrap_or(""), 16),
            agent(&q["cli"]),
            q["kind"].as_str().unwrap_or(""),
            cut(q["text"].as_str().unwrap_or(""), text_width),
        );
        out.push_str(&line);
        out.push('\n');
    }
    out
}

pub fn tasks(list: &Value, now: f64, width: usize) -> String {
    let rows = list.as_array().map(Vec::as_slice).unwrap_or_default();
    if rows.is_empty() {
        return "No live tasks. Start one with `needs-you run -- COMMAND`.\n".into();
    }
    let mut out = format!(
        "{:<24} {:<24} {:<11} LAST REPORT\n",
        "TASK", "STATE", "AGENT"
    );
    for t in rows {
        let state = if t["state"] == "waiting" {
            "waiting for your answer"
        } else {
            "running"
        };
        let last = t["last_report_at"]
            .as_f64()
            .map_or("none".to_owned(), |at| format!("{} ago", age(at, now)));
        let line = format!(
            "{:<24} {:<24} {:<11} {last}",
            cut(t["name"].as_str().unwrap_or(""), 24),
            state,
            agent(&t["cli"]),
        );
        out.push_str(&cut(&line, width));
        out.push('\n');
    }
    out
}

pub fn channel_line(c: &Value) -> String {
    let mut line = format!(
        "{:<8} {}",
        c["kind"].as_str().unwrap_or(""),
        c["url"].as_str().unwrap_or("")
    );
    if let Some(at) = c["last_success_at"].as_f64() {
        line.push_str(&format!("  last delivered {} ago", age(at, now_ms())));
    }
    if let Some(e) = c["last_error"].as_str() {
        line.push_str(&format!("  last error: {e}"));
    }
    line
}

pub fn channels(list: &Value) -> String {
    let rows = list.as_array().map(Vec::as_slice).unwrap_or_default();
    if rows.is_empty() {
        return "No channels. Set one: needs-you channels set ntfy https://ntfy.sh/<a-long-random-topic>\n"
            .into();
    }
    rows.iter().map(|c| channel_line(c) + "\n").collect()
}

pub fn test_results(results: &[Value]) -> String {
    results
        .iter()
        .map(|r| {
            let name = r["name"]
                .as_str()
                .unwrap_or(r["channel"].as_str().unwrap_or(""));
            let outcome = if r["ok"] == true {
                format!("answered {}", r["status"])
            } else {
                format!("failed: {}", r["error"].as_str().unwrap_or("no answer"))
            };
            format!("{name:<32} {outcome}\n")
        })
        .collect()
}

/// `ls --watch`: the list drawn again whenever it changes (the server's ETag
/// says when), every 2 seconds; Ctrl-C ends it.
pub fn watch(client: &Client) -> Result<i32> {
    let mut etag: Option<String> = None;
    let mut last = Value::Null;
    loop {
        match client.request("GET", "/v1/needs-you", None, etag.as_deref()) {
            Ok(a) if a.status == 304 => {}
            Ok(a) => {
                last = a.body["questions"].clone();
                etag = a.etag;
            }
            Err(f) => return Err(f.into()),
        }
        let mut out = std::io::stdout().lock();
        // Home, clear, then the list: one write, so it does not flicker.
        let screen = format!("\x1b[H\x1b[2J{}", questions(&last, now_ms(), width()));
        if out
            .write_all(screen.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            return Ok(exit::OK); // stdout closed: nobody is watching
        }
        drop(out);
        std::thread::sleep(Duration::from_secs(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_list_is_cut_to_the_width() {
        let now = 10_000_000.0;
        let list = json!([{"opened_at": now - 180_000.0, "task_name": "api refactor", "cli": "claude-code",
            "kind": "dialog", "text": "Which auth strategy should the API use, OAuth or email links?"}]);
        let out = questions(&list, now, 80);
        let line = out.lines().nth(1).unwrap();
        assert!(line.starts_with("3m    api refactor     Claude Code dialog     Which auth"));
        assert!(line.chars().count() <= 80);
        assert!(line.ends_with('…'));
        assert_eq!(
            questions(&json!([]), now, 80),
            "All quiet: nothing needs you.\n"
        );
    }

    #[test]
    fn ages() {
        assert_eq!(age(0.0, 59_000.0), "59s");
        assert_eq!(age(0.0, 7_200_000.0), "2h");
        assert_eq!(age(0.0, 3.0 * 86_400_000.0), "3d");
    }
}
