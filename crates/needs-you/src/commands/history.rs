//! `log`: the history of every question, with its answers and the rules they
//! granted, searched here: the server hands its pages over whole
//! ([`needs_you_core::history`] is the one rule of a search).

use needs_you_core::api::{History, Past};
use needs_you_core::{history, query};

use super::{logged_in, now_ms};
use crate::display;
use crate::fail::{exit, Result};
use crate::term;

/// Questions asked of the server at a time.
const PAGE: u32 = 200;

/// `log [WORDS…] [--limit N] [--json]`: the newest `limit` questions that
/// the words find, newest first; `--json`, one a line, as the server gave
/// them.
pub fn log(words: &[String], limit: u32, json_out: bool) -> Result<i32> {
    let (_, client) = logged_in()?;
    let search = words.join(" ");
    let mut found: Vec<Past> = Vec::new();
    let mut before: Option<String> = None;
    loop {
        // Without words every question fetched is shown: no more than that.
        let page_size = if search.is_empty() {
            PAGE.min(limit)
        } else {
            PAGE
        }
        .to_string();
        let mut pairs = vec![("limit", page_size.as_str())];
        if let Some(b) = &before {
            pairs.push(("before", b.as_str()));
        }
        let page: History = client.get(&format!("/v1/history?{}", query::encode(&pairs)))?;
        found.extend(page.questions.into_iter().filter(|p| finds(p, &search)));
        match page.next {
            Some(next) if found.len() < limit as usize => before = Some(next),
            _ => break,
        }
    }
    found.truncate(limit as usize);
    if json_out {
        for p in &found {
            println!(
                "{}",
                serde_json::to_string(p).expect("a past question serializes")
            );
        }
    } else {
        print!(
            "{}",
            display::history(&found, !search.is_empty(), now_ms(), term::width())
        );
    }
    Ok(exit::OK)
}

/// Whether `search` finds `p`, read as the page reads it: from its JSON.
fn finds(p: &Past, search: &str) -> bool {
    serde_json::to_value(p).is_ok_and(|v| history::finds(&v, search))
}
