//! What waits for the person: `ls` (and `ls --watch`), `tasks`, and acting
//! on a question: `answer`, `dismiss`.

use std::io::Write;
use std::time::{Duration, Instant};

use needs_you_core::api::{AnswerState, AnswerStatus, Listed, NeedsYou, Queued, Tasks};
use needs_you_reporter::client::Client;
use serde_json::{json, Value};

use super::{logged_in, now_ms, path_part, print_json};
use crate::display;
use crate::fail::{exit, Fail, Result};
use crate::term;

/// How long `answer` follows its answer before it says where it is.
const FOLLOW_FOR: Duration = Duration::from_secs(15);

/// `ls [--watch] [--json]`.
pub fn ls(watch: bool, json_out: bool) -> Result<i32> {
    let (_, client) = logged_in()?;
    if watch {
        return watch_list(&client);
    }
    let list: NeedsYou = client.get("/v1/needs-you")?;
    if json_out {
        print_json(&json!({"questions": list.questions}));
    } else {
        print!(
            "{}",
            display::questions(&list.questions, now_ms(), term::width())
        );
    }
    Ok(exit::OK)
}

/// `ls --watch`: the list drawn again whenever it changes (the server's ETag
/// says when), every 2 seconds; Ctrl-C ends it.
fn watch_list(client: &Client) -> Result<i32> {
    let mut etag: Option<String> = None;
    let mut last: Vec<Listed> = Vec::new();
    loop {
        let reply = client.request("GET", "/v1/needs-you", None, etag.as_deref())?;
        if reply.status != 304 {
            last = client.read::<NeedsYou>(reply.body)?.questions;
            etag = reply.etag;
        }
        let mut out = std::io::stdout().lock();
        // Home, clear, then the list: one write, so it does not flicker.
        let screen = format!(
            "\x1b[H\x1b[2J{}",
            display::questions(&last, now_ms(), term::width())
        );
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

/// `tasks [--json]`.
pub fn tasks(json_out: bool) -> Result<i32> {
    let (_, client) = logged_in()?;
    let tasks: Tasks = client.get("/v1/tasks")?;
    if json_out {
        print_json(&tasks);
    } else {
        print!("{}", display::tasks(&tasks.tasks, now_ms(), term::width()));
    }
    Ok(exit::OK)
}

/// `dismiss QUESTION`.
pub fn dismiss(question: &str) -> Result<i32> {
    let (_, client) = logged_in()?;
    client.post::<Value>(
        &format!("/v1/questions/{}/dismiss", path_part(question)?),
        &json!({}),
    )?;
    println!("Dismissed {question}.");
    Ok(exit::OK)
}

/// `answer QUESTION TEXT`: queued like the page's, then followed until it is
/// typed or refused ([`FOLLOW_FOR`] at most: the agent's machine may be asleep).
pub fn answer(question: &str, text: &str) -> Result<i32> {
    let (_, client) = logged_in()?;
    let id = path_part(question)?;
    let queued: Queued = client.post(
        &format!("/v1/questions/{id}/answers"),
        &json!({"text": text}),
    )?;
    let path = format!("/v1/answers/{}", path_part(&queued.answer_id)?);
    let deadline = Instant::now() + FOLLOW_FOR;
    loop {
        let a: AnswerStatus = client.get(&path)?;
        match a.state {
            AnswerState::Typed => {
                println!("Typed into the agent's terminal.");
                return Ok(exit::OK);
            }
            AnswerState::Failed => {
                let reason = a.reason.unwrap_or_default();
                return Err(Fail::new(exit::REFUSED, format!("not typed: {reason}")));
            }
            state if Instant::now() >= deadline => {
                if state == AnswerState::Delivered {
                    println!(
                        "The agent's machine has it; it has not said yet whether it was typed."
                    );
                } else {
                    println!("Sent; the agent's machine has not taken it yet (it will when its relay reconnects).");
                }
                return Ok(exit::OK);
            }
            _ => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}
