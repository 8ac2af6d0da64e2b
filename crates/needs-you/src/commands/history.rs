//! `log`: the history of every question, with its answers and the rules they
//! granted, searched here: the server hands its pages over whole
//! ([`needs_you_core::history`] is the one rule of a search), and sealed
//! words are opened here first ([`super::cards`]), since it cannot read
//! them.

use needs_you_core::api::Past;
use needs_you_core::{history, query};
use serde_json::Value;

use super::{logged_in, now_ms};
use crate::display;
use crate::fail::{exit, Fail, Result};
use crate::term;

/// Questions asked of the server at a time.
const PAGE: u32 = 200;

/// `log [WORDS…] [--limit N] [--json]`: the newest `limit` questions that
/// the words find, newest first; `--json`, one a line, as the server gave
/// them.
pub fn log(words: &[String], limit: u32, json_out: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let mut opener = super::cards::Built::new(&login);
    let search = words.join(" ");
    // Searched and written as the server gave them, their sealed words
    // opened, by the rule the page follows on the same JSON.
    let mut found: Vec<Value> = Vec::new();
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
        let mut page: Value = client.get(&format!("/v1/history?{}", query::encode(&pairs)))?;
        if let Value::Array(questions) = page["questions"].take() {
            found.extend(
                questions
                    .into_iter()
                    .map(|p| opener.opened_past(&client, p))
                    .filter(|p| history::finds(p, &search)),
            );
        }
        match page["next"].as_str() {
            Some(next) if found.len() < limit as usize => before = Some(next.to_owned()),
            _ => break,
        }
    }
    found.truncate(limit as usize);
    if json_out {
        for p in &found {
            println!("{p}");
        }
    } else {
        let past = found
            .into_iter()
            .map(serde_json::from_value)
            .collect::<serde_json::Result<Vec<Past>>>()
            .map_err(|e| {
                Fail::new(
                    exit::SERVER,
                    format!("the server's history is not one this needs-you reads: {e}"),
                )
            })?;
        print!(
            "{}",
            display::history(&past, !search.is_empty(), now_ms(), term::width())
        );
    }
    Ok(exit::OK)
}
