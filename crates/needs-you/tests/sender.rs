//! The outbox and its one sender, with the real binary against a real sink:
//! reports of a session reach the server in the order they were made, a
//! transient failure is retried (in order) and a refusal is not, and a burst
//! of hooks against a dead or slow server leaves nothing behind.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// A Stop event: a reply ending with a question opens, any other closes.
fn stop(session: &str, question: bool) -> String {
    let text = if question { "Shall I go on?" } else { "Done." };
    json!({"session_id": session, "hook_event_name": "Stop", "last_assistant_message": text})
        .to_string()
}

fn hook_with(dir: &Path, url: &str, stdin: &str, extra: &[(&str, &str)]) -> std::process::Output {
    let mut env = vec![("NEEDS_YOU_URL", url), ("NEEDS_YOU_TOKEN", TOKEN)];
    env.extend_from_slice(extra);
    run(
        &["--cli", "claude-code", "--state-dir", dir.to_str().unwrap()],
        stdin,
        &env,
    )
}

/// The `__send` processes that serve `dir`.
fn senders_of(dir: &Path) -> usize {
    let out = Command::new("pgrep")
        .args(["-f", &format!("__send --state-dir {}", dir.display())])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn wait_until(what: impl Fn() -> bool, within: Duration) -> bool {
    let end = Instant::now() + within;
    while !what() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// The reports as the server keeps them. A try whose answer is lost (no
/// answer within the request's time, on a loaded machine) is sent again, since
/// the sender cannot know whether it arrived: the same body, `seq` and all,
/// which the server drops as stale. So a report may arrive twice, but only
/// byte for byte and only after a try the sender logged as unfinished.
fn as_kept(got: Vec<Received>, dir: &Path) -> Vec<Received> {
    let mut kept: Vec<Received> = Vec::new();
    for r in got {
        if kept.iter().any(|k| k.body == r.body) {
            let log = std::fs::read_to_string(dir.join("report-prompt.log")).unwrap_or_default();
            assert!(
                log.contains("could not reach"),
                "a report sent twice with no failed try: {}\n{log}",
                r.body
            );
            continue;
        }
        assert!(
            !kept
                .iter()
                .any(|k| k.body["seq"] == r.body["seq"] && k.body["session"] == r.body["session"]),
            "two different reports under one seq: {}",
            r.body
        );
        kept.push(r);
    }
    kept
}

/// Waits until `n` different reports arrived (or 5 s), and gives them as kept.
fn wait_kept(sink: &Sink, n: usize, dir: &Path) -> Vec<Received> {
    wait_until(
        || {
            let got = sink.requests();
            let mut bodies: Vec<&serde_json::Value> = got.iter().map(|r| &r.body).collect();
            bodies.sort_by_key(|b| b.to_string());
            bodies.dedup();
            bodies.len() >= n
        },
        Duration::from_secs(5),
    );
    as_kept(sink.requests(), dir)
}

fn outbox_is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("outbox-"))
        .filter(|e| e.path().is_dir())
        .all(|e| std::fs::read_dir(e.path()).unwrap().next().is_none())
}

#[test]
fn a_burst_of_one_session_arrives_in_the_order_it_was_made() {
    // 40 hooks of one session at once (each a reply ending with a question,
    // so each is sent), answers taking 0 to 30 ms: senders of their own
    // would overtake one another on the wire.
    let sink = Sink::start_with(Duration::ZERO, Duration::from_millis(30), vec![]);
    let (_t, dir) = state_dir();
    let n = 40;
    let hooks: Vec<_> = (0..n)
        .map(|_| {
            let (dir, url) = (dir.clone(), sink.url.clone());
            std::thread::spawn(move || hook_with(&dir, &url, &stop("burst", true), &[]))
        })
        .collect();
    for h in hooks {
        assert_quiet(&h.join().unwrap());
    }
    let got = wait_kept(&sink, n, &dir);
    assert_eq!(got.len(), n, "each report exactly once");
    let seqs: Vec<u64> = got
        .iter()
        .map(|r| r.body["seq"].as_u64().unwrap())
        .collect();
    let mut sorted = seqs.clone();
    sorted.sort_unstable();
    assert_eq!(seqs, sorted, "arrival order is seq order");
    assert!(wait_until(|| senders_of(&dir) == 0, Duration::from_secs(5)));
    assert!(outbox_is_empty(&dir));
}

#[test]
fn a_transient_failure_is_retried_and_the_order_kept() {
    let sink = Sink::start_with(Duration::ZERO, Duration::ZERO, vec![503, 503, 500]);
    let (_t, dir) = state_dir();
    assert_quiet(&hook_with(&dir, &sink.url, &stop("t", true), &[]));
    assert_quiet(&hook_with(&dir, &sink.url, &stop("t", false), &[]));
    let ok = wait_until(
        || sink.requests().iter().filter(|r| r.status == 200).count() == 2,
        Duration::from_secs(10),
    );
    assert!(ok, "{:?}", sink.requests());
    let got = sink.requests();
    let tried: Vec<(&str, u16)> = got
        .iter()
        .map(|r| (r.body["action"].as_str().unwrap(), r.status))
        .collect();
    assert_eq!(
        tried,
        [
            ("open", 503),
            ("open", 503),
            ("open", 500),
            ("open", 200),
            ("close", 200)
        ],
        "the close waits behind its open"
    );
    let log = std::fs::read_to_string(dir.join("report-prompt.log")).unwrap();
    assert!(log.contains("HTTP 503; trying again"), "{log}");
}

#[test]
fn a_refusal_is_not_retried() {
    let sink = Sink::start_with(Duration::ZERO, Duration::ZERO, vec![400]);
    let (_t, dir) = state_dir();
    assert_quiet(&hook_with(&dir, &sink.url, &stop("r", true), &[]));
    assert!(wait_until(|| senders_of(&dir) == 0, Duration::from_secs(5)));
    assert_eq!(sink.requests().len(), 1);
    let log = std::fs::read_to_string(dir.join("report-prompt.log")).unwrap();
    assert!(log.contains("refused a report: HTTP 400"), "{log}");
    assert!(outbox_is_empty(&dir));
}

/// 100 sessions open a question and close it again, each step 100 hooks at
/// once; returns the slowest hook's time.
fn storm(dir: &Path, url: &str) -> Duration {
    let mut slowest = Duration::ZERO;
    for question in [true, false] {
        let children: Vec<_> = (0..100)
            .map(|i| {
                let started = Instant::now();
                let child = Command::new(BIN)
                    .args(["--cli", "claude-code", "--state-dir", dir.to_str().unwrap()])
                    .env_clear()
                    .env("PATH", std::env::var("PATH").unwrap_or_default())
                    .env("NEEDS_YOU_URL", url)
                    .env("NEEDS_YOU_TOKEN", TOKEN)
                    .env("NEEDS_YOU_SEND_FOR_S", "2")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                (started, child, stop(&format!("storm-{i}"), question))
            })
            .collect();
        for (started, mut child, input) in children {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            slowest = slowest.max(started.elapsed());
            assert_eq!(assert_quiet(&out), "");
        }
    }
    slowest
}

#[test]
fn two_hundred_hooks_against_a_dead_server_leave_nothing_behind() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (_t, dir) = state_dir();
    storm(&dir, &format!("http://127.0.0.1:{port}"));
    assert!(!dir.join("open").exists(), "no marker left");
    // Each report is retried for 2 s (NEEDS_YOU_SEND_FOR_S), then given up.
    assert!(
        wait_until(|| senders_of(&dir) == 0, Duration::from_secs(10)),
        "no sender left once its time is up"
    );
    assert!(outbox_is_empty(&dir));
    let log = std::fs::read_to_string(dir.join("report-prompt.log")).unwrap();
    assert!(log.contains("gave up on the report"), "{log}");
}

#[test]
fn two_hundred_hooks_against_a_slow_server_are_all_sent_by_one_sender() {
    let sink = Sink::start_with(Duration::from_millis(20), Duration::ZERO, vec![]);
    let (_t, dir) = state_dir();
    storm(&dir, &sink.url);
    assert!(!dir.join("open").exists(), "no marker left");
    let got = wait_kept(&sink, 200, &dir);
    assert_eq!(got.len(), 200, "every report, once");
    for i in 0..100 {
        let session = format!("storm-{i}");
        let mine: Vec<&str> = got
            .iter()
            .filter(|r| r.body["session"] == session.as_str())
            .map(|r| r.body["action"].as_str().unwrap())
            .collect();
        assert_eq!(mine, ["open", "close"], "{session}");
    }
    assert!(wait_until(|| senders_of(&dir) == 0, Duration::from_secs(5)));
}
