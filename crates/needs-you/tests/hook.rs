//! The built `report-prompt`, run as the CLIs' hooks run it, against a real
//! HTTP sink on 127.0.0.1.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;

fn ask_user_question(session: &str) -> String {
    json!({"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/w", "permission_mode": "default",
           "hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
           "tool_input": {"questions": [{"question": "Which auth strategy?", "header": "Auth", "multiSelect": false,
               "options": [{"label": "OAuth (GitHub)", "description": "GitHub sign-in"}, {"label": "Email + password"}]}]}})
    .to_string()
}

/// What follows every "nothing was sent" here: the same reporter, state
/// directory and sink do send a dialog's open, and only that, so the silence
/// came from the events and not from a broken sender.
fn then_a_dialog_is_sent(sink: &Sink, dir: &std::path::Path) {
    assert_quiet(&hook(
        "claude-code",
        dir,
        &sink.url,
        &ask_user_question("control"),
    ));
    let got = sink.wait_for(1);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].body["action"], "open");
    assert_eq!(got[0].body["session"], "control");
}

fn event(session: &str, name: &str, extra: serde_json::Value) -> String {
    let mut v = json!({"session_id": session, "cwd": "/w", "hook_event_name": name});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v.to_string()
}

#[test]
fn a_dialog_opens_and_its_answer_closes_it() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    let out = hook("claude-code", &dir, &sink.url, &ask_user_question("sess-1"));
    assert_eq!(assert_quiet(&out), "");
    assert!(
        dir.join("open").exists(),
        "the marker is written before the hook returns"
    );

    let got = sink.wait_for(1);
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/reports")
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(r.body["action"], "open");
    assert_eq!(r.body["kind"], "dialog");
    assert_eq!(r.body["cli"], "claude-code");
    assert_eq!(r.body["session"], "sess-1");
    assert_eq!(r.body["text"], "Which auth strategy?");
    assert_eq!(
        r.body["options"],
        json!([{"label": "OAuth (GitHub)", "description": "GitHub sign-in"}, {"label": "Email + password"}])
    );

    let out = hook(
        "claude-code",
        &dir,
        &sink.url,
        &event(
            "sess-1",
            "PostToolUse",
            json!({"tool_name": "AskUserQuestion"}),
        ),
    );
    assert_quiet(&out);
    assert!(
        !dir.join("open").exists(),
        "the marker goes with the last open question"
    );
    let got = sink.wait_for(2);
    assert_eq!(got[1].body["action"], "close");
    assert_eq!(got[1].body["reason"], "answered");
    assert!(got[1].body["seq"].as_u64() > got[0].body["seq"].as_u64());
}

#[test]
fn closing_events_with_nothing_open_send_nothing() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    for e in [
        event("s", "Stop", json!({"last_assistant_message": "Done."})),
        event("s", "UserPromptSubmit", json!({"prompt": "go"})),
        event("s", "SessionEnd", json!({"reason": "exit"})),
    ] {
        assert_eq!(assert_quiet(&hook("claude-code", &dir, &sink.url, &e)), "");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(sink.requests().is_empty());
    assert!(!dir.join("open").exists());
    then_a_dialog_is_sent(&sink, &dir);
}

#[test]
fn ignored_events_send_nothing() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    for e in [
        event(
            "s",
            "Notification",
            json!({"notification_type": "idle_prompt", "message": "Claude is waiting for your input"}),
        ),
        event(
            "s",
            "Stop",
            json!({"agent_id": "a1", "last_assistant_message": "Shall I?"}),
        ),
        event(
            "s",
            "SubagentStop",
            json!({"last_assistant_message": "Shall I?"}),
        ),
    ] {
        assert_eq!(assert_quiet(&hook("claude-code", &dir, &sink.url, &e)), "");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(sink.requests().is_empty());
    then_a_dialog_is_sent(&sink, &dir);
}

#[test]
fn a_stop_with_a_question_opens_a_reply_and_the_next_stop_closes_it() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    assert_quiet(&hook(
        "codex",
        &dir,
        &sink.url,
        &event(
            "c1",
            "Stop",
            json!({"last_assistant_message": "Push to main？"}),
        ),
    ));
    assert_quiet(&hook(
        "codex",
        &dir,
        &sink.url,
        &event("c1", "Stop", json!({"last_assistant_message": "Pushed."})),
    ));
    let got = sink.wait_for(2);
    let mut bodies: Vec<_> = got.iter().map(|r| r.body.clone()).collect();
    bodies.sort_by_key(|b| b["seq"].as_u64());
    assert_eq!(bodies[0]["kind"], "reply");
    assert_eq!(bodies[0]["cli"], "codex");
    assert_eq!(bodies[1]["reason"], "round_end");
}

#[test]
fn seq_grows_strictly_for_rapid_reports() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    for i in 0..5 {
        let e = event(
            "rapid",
            "Stop",
            json!({"last_assistant_message": format!("Question {i}?")}),
        );
        assert_quiet(&hook("claude-code", &dir, &sink.url, &e));
    }
    let mut seqs: Vec<u64> = sink
        .wait_for(5)
        .iter()
        .map(|r| r.body["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs.len(), 5);
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), 5, "no two reports share a seq");
}

#[test]
fn bad_input_costs_one_line_and_exit_zero() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    let d = dir.to_str().unwrap();
    let env = [
        ("NEEDS_YOU_URL", sink.url.as_str()),
        ("NEEDS_YOU_TOKEN", TOKEN),
    ];
    type Env<'a> = Vec<(&'a str, &'a str)>;
    let cases: Vec<(Vec<&str>, String, Env, &str)> = vec![
        (
            vec!["--cli", "claude-code", "--state-dir", d],
            String::new(),
            env.to_vec(),
            "no event",
        ),
        (
            vec!["--cli", "claude-code", "--state-dir", d],
            "{garbage".into(),
            env.to_vec(),
            "not a JSON event",
        ),
        (
            vec!["--cli", "kiro", "--state-dir", d],
            ask_user_question("s"),
            env.to_vec(),
            "unknown CLI",
        ),
        (
            vec!["--state-dir", d],
            ask_user_question("s"),
            env.to_vec(),
            "--cli is required",
        ),
        (
            vec!["--cli", "claude-code", "--state-dir", d],
            ask_user_question("s"),
            vec![],
            "NEEDS_YOU_URL is not set",
        ),
        (
            vec!["--cli", "claude-code", "--state-dir", d],
            ask_user_question("s"),
            vec![("NEEDS_YOU_URL", sink.url.as_str())],
            "NEEDS_YOU_TOKEN is not set",
        ),
        (
            vec!["--cli", "claude-code", "--state-dir", d],
            ask_user_question("s"),
            vec![
                ("NEEDS_YOU_URL", "http://example.com"),
                ("NEEDS_YOU_TOKEN", TOKEN),
            ],
            "https",
        ),
        (
            vec!["--cli", "claude-code", "--state-dir", d],
            json!({"hook_event_name": "Stop", "last_assistant_message": "Q?"}).to_string(),
            env.to_vec(),
            "no session id",
        ),
    ];
    for (args, stdin, env, needle) in cases {
        let out = run(&args, &stdin, &env);
        let err = assert_quiet(&out);
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        assert!(err.starts_with("report-prompt: "));
        assert!(!err.contains(TOKEN), "the credential is never printed");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(sink.requests().is_empty());
    assert!(
        !dir.join("open").exists(),
        "a refused set-up marks nothing open"
    );
    then_a_dialog_is_sent(&sink, &dir);
}

#[test]
fn an_unusable_state_directory_costs_one_line() {
    let sink = Sink::start();
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = hook(
        "claude-code",
        &file.join("state"),
        &sink.url,
        &ask_user_question("s"),
    );
    assert!(assert_quiet(&out).contains("state directory"));
}

#[test]
fn an_unreachable_server_never_holds_the_hook_and_is_logged() {
    let (_t, dir) = state_dir();
    // A port nobody listens on: bind, note, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = hook(
        "claude-code",
        &dir,
        &format!("http://127.0.0.1:{port}"),
        &ask_user_question("s"),
    );
    assert_eq!(assert_quiet(&out), "");
    let log = dir.join("report-prompt.log");
    let end = std::time::Instant::now() + Duration::from_secs(6);
    while !log.exists() && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&log).expect("the detached sender logs its failure");
    assert!(text.contains("could not reach"), "{text}");
    assert!(!text.contains(TOKEN));
}

#[test]
fn a_slow_server_does_not_hold_the_hook() {
    // The sink answers 2 s after a request arrives. The hook is back before
    // any answer was written: it never waited for the network.
    let sink = Sink::start_with_delay(Duration::from_secs(2));
    let (_t, dir) = state_dir();
    let out = hook("claude-code", &dir, &sink.url, &ask_user_question("slow"));
    assert_eq!(assert_quiet(&out), "");
    assert_eq!(
        sink.answered(),
        0,
        "the hook returned before the server answered"
    );
    let got = sink.wait_for(1);
    assert_eq!(got[0].body["session"], "slow");
}

#[test]
fn classify_prints_the_decision_and_sends_nothing() {
    let sink = Sink::start();
    let out = run(
        &["classify", "--cli", "claude-code"],
        &ask_user_question("s"),
        &[
            ("NEEDS_YOU_URL", sink.url.as_str()),
            ("NEEDS_YOU_TOKEN", TOKEN),
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], "open");
    assert_eq!(v["kind"], "dialog");
    assert_eq!(v["session"], "s");
    let out = run(
        &["classify", "--cli", "claude-code"],
        &event(
            "s",
            "Notification",
            json!({"notification_type": "idle_prompt"}),
        ),
        &[],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], "ignore");
    assert!(v["why"].as_str().unwrap().contains("idle_prompt"));
    std::thread::sleep(Duration::from_millis(200));
    assert!(sink.requests().is_empty());
    let (_t, dir) = state_dir();
    then_a_dialog_is_sent(&sink, &dir);
}

#[test]
fn a_closed_stderr_does_not_turn_the_error_line_into_an_abort() {
    let (_t, dir) = state_dir();
    // The CLI stopped reading the hook's stderr: the one line meets EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["--cli", "claude-code", "--state-dir", dir.to_str().unwrap()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(writer);
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"{garbage").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", out.status);
    assert!(out.stdout.is_empty());
}

#[test]
fn an_argument_that_is_not_utf8_is_a_bad_flag() {
    use std::os::unix::ffi::OsStrExt;
    let (_t, dir) = state_dir();
    let mut cmd = std::process::Command::new(BIN);
    cmd.arg(std::ffi::OsStr::from_bytes(b"--cli\xff"))
        .args(["claude-code", "--state-dir", dir.to_str().unwrap()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    // The whole event is read (feed would fail on a closed stdin otherwise).
    let err = assert_quiet(&feed(cmd, &"x".repeat(256 * 1024)));
    assert!(err.contains("report-prompt --help"), "{err}");
}

#[test]
fn a_persons_command_with_bad_usage_exits_2_while_a_hook_with_bad_flags_exits_0() {
    let (_t, dir) = state_dir();
    let d = dir.to_str().unwrap();
    for args in [
        vec!["install", "--cli", "kiro"],
        vec!["install"],
        vec!["uninstall", "--cli", "bogus"],
        vec!["doctor", "--frob"],
        vec!["frobnicate"],
    ] {
        let out = run(&args, "", &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("report-prompt: "), "{err}");
    }
    let hook = run(&["--cli", "bogus", "--state-dir", d], "{}", &[]);
    assert_eq!(hook.status.code(), Some(0));
    assert!(hook.stdout.is_empty());
}

#[test]
fn a_codex_subagent_s_approval_closes_at_turn_aborted_in_its_own_rollout_only() {
    let sink = Sink::start();
    let (t, dir) = state_dir();
    let rollout = |name: &str| {
        let p = t.path().join(format!("rollout-{name}.jsonl"));
        std::fs::write(&p, "{\"type\":\"session_meta\"}\n").unwrap();
        p
    };
    let (a, b) = (rollout("a"), rollout("b"));
    let approval = |agent: &str, path: &std::path::Path, command: &str| {
        event(
            "sess-c",
            "PermissionRequest",
            json!({"agent_id": agent, "agent_type": "default", "transcript_path": path,
                "tool_name": "Bash", "tool_input": {"command": command}}),
        )
    };
    let aborted = "{\"type\":\"event_msg\",\"payload\":{\"type\":\"turn_aborted\",\"reason\":\"interrupted\"}}\n";
    let append = |p: &std::path::Path| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        f.write_all(aborted.as_bytes()).unwrap();
    };
    // Subagent A asks, then subagent B: B's approval is the open one.
    assert_quiet(&hook(
        "codex",
        &dir,
        &sink.url,
        &approval("sub-a", &a, "rm -rf a"),
    ));
    assert_quiet(&hook(
        "codex",
        &dir,
        &sink.url,
        &approval("sub-b", &b, "rm -rf b"),
    ));
    let got = sink.wait_for(2);
    assert_eq!(
        got[1].body["text"],
        "Codex wants to run: rm -rf b\n(from a subagent)"
    );
    // A's turn ends aborted: B's approval, still on screen, stays open.
    append(&a);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        sink.requests().len(),
        2,
        "nothing closed by another's rollout"
    );
    assert!(dir.join("open").exists());
    // B's own rollout says so: closed as interrupted.
    append(&b);
    let got = sink.wait_for(3);
    assert_eq!(got.len(), 3, "B's watcher closed it");
    assert_eq!(got[2].body["action"], "close");
    assert_eq!(got[2].body["reason"], "interrupted");
    assert_eq!(got[2].body["session"], "sess-c");
}

#[test]
fn a_codex_approval_of_the_person_s_own_is_not_watched_in_any_rollout() {
    let sink = Sink::start();
    let (t, dir) = state_dir();
    let rollout = t.path().join("rollout.jsonl");
    std::fs::write(
        &rollout,
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"turn_aborted\"}}\n",
    )
    .unwrap();
    let own = event(
        "sess-p",
        "PermissionRequest",
        json!({"transcript_path": rollout, "tool_name": "Bash", "tool_input": {"command": "ls"}}),
    );
    assert_quiet(&hook("codex", &dir, &sink.url, &own));
    sink.wait_for(1);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        sink.requests().len(),
        1,
        "an old turn_aborted closes nothing"
    );
}

#[test]
fn in_a_server_that_needs_you_run_follows_codex_s_own_approval_is_left_to_its_client_and_a_subagent_s_reported(
) {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    let run_bridged = |stdin: &str| {
        run(
            &["--cli", "codex", "--state-dir", dir.to_str().unwrap()],
            stdin,
            &[
                ("NEEDS_YOU_URL", sink.url.as_str()),
                ("NEEDS_YOU_TOKEN", TOKEN),
                ("NEEDS_YOU_CODEX_APP", "1"),
            ],
        )
    };
    let own = event(
        "sess-b",
        "PermissionRequest",
        json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf out"}}),
    );
    assert_quiet(&run_bridged(&own));
    // A subagent's, on the same path, is reported: the client follows only
    // the person's threads.
    let sub = event(
        "sess-b",
        "PermissionRequest",
        json!({"agent_id": "agent-1", "tool_name": "Bash", "tool_input": {"command": "rm -rf sub"}}),
    );
    assert_quiet(&run_bridged(&sub));
    let got = sink.wait_for(1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(sink.requests().len(), 1, "only the subagent's");
    assert_eq!(got[0].body["action"], "open");
    assert!(got[0].body["text"].as_str().unwrap().contains("rm -rf sub"));
    // The same approval of the person's own, with no client to leave it to:
    // reported.
    let (_t2, plain) = state_dir();
    assert_quiet(&hook("codex", &plain, &sink.url, &own));
    let got = sink.wait_for(2);
    assert!(got[1].body["text"].as_str().unwrap().contains("rm -rf out"));
}

/// An agent that starts its hooks without the variables named like secrets,
/// as Gemini CLI does under its variable redaction: `python3` stands in for
/// the agent (a process with the credential), which runs the hook through
/// `sh -c` with an environment lacking it.
fn under_a_redacting_agent(
    cli: &str,
    dir: &std::path::Path,
    url: &str,
    stdin: &str,
) -> std::process::Output {
    const AGENT: &str = r#"
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if k != "NEEDS_YOU_TOKEN"}
run = subprocess.run(["sh", "-c", '"$0" --cli "$1" --state-dir "$2"', *sys.argv[1:]], env=env)
sys.exit(run.returncode)
"#;
    let mut agent = std::process::Command::new("python3");
    agent
        .args(["-c", AGENT, BIN, cli, dir.to_str().unwrap()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("NEEDS_YOU_URL", url)
        .env("NEEDS_YOU_TOKEN", TOKEN);
    feed(agent, stdin)
}

#[test]
fn a_gemini_hook_without_the_credential_reports_with_the_agent_s_own_and_no_other_cli_s_does() {
    let sink = Sink::start();
    let (_t, dir) = state_dir();
    let permission = json!({"session_id": "redacted", "cwd": "/w", "hook_event_name": "Notification",
        "notification_type": "ToolPermission", "message": "Tool Confirm Shell Command requires execution",
        "details": {"type": "exec", "title": "Confirm Shell Command", "command": "touch x", "rootCommand": "touch"}});
    let out = under_a_redacting_agent("gemini", &dir, &sink.url, &permission.to_string());
    assert_eq!(assert_quiet(&out), "");
    let got = sink.wait_for(1);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].body["action"], "open");
    assert_eq!(
        got[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );

    // A CLI that hands its hooks the agent's environment whole never has
    // the credential looked for elsewhere: without it, nothing is sent.
    let (_t2, other) = state_dir();
    let out = under_a_redacting_agent(
        "claude-code",
        &other,
        &sink.url,
        &ask_user_question("plain"),
    );
    assert!(assert_quiet(&out).contains("NEEDS_YOU_TOKEN is not set"));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(sink.requests().len(), 1, "nothing more was sent");
}
