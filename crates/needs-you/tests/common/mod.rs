//! What the reporter's integration tests share: the built binary, run as a
//! hook would run it, and a real HTTP sink on 127.0.0.1.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_report-prompt");
pub const TOKEN: &str = "nyt_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
    /// The status the sink answered with.
    pub status: u16,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A real HTTP server on 127.0.0.1 that records every request and answers
/// 200, after `delay` if one is set; [`Sink::start_with`] scripts the first
/// answers' statuses and adds a varying delay.
pub struct Sink {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
    answered: Arc<std::sync::atomic::AtomicUsize>,
}

impl Sink {
    pub fn start() -> Sink {
        Sink::start_with_delay(Duration::ZERO)
    }

    pub fn start_with_delay(delay: Duration) -> Sink {
        Sink::start_with(delay, Duration::ZERO, Vec::new())
    }

    /// Answers the first requests with `statuses` in turn, then 200; each
    /// answer waits `delay` plus a varying part of `jitter`.
    pub fn start_with(delay: Duration, jitter: Duration, statuses: Vec<u16>) -> Sink {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (log, done) = (received.clone(), answered.clone());
        let script = Arc::new(Mutex::new(std::collections::VecDeque::from(statuses)));
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().flatten().enumerate() {
                let (log, done, script) = (log.clone(), done.clone(), script.clone());
                let wait = delay + jitter.mul_f64(((i as u64 * 7919) % 101) as f64 / 100.0);
                std::thread::spawn(move || {
                    serve(stream, &log, wait, &script);
                    done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                });
            }
        });
        Sink {
            url,
            received,
            answered,
        }
    }

    /// How many requests have had their answer written.
    pub fn answered(&self) -> usize {
        self.answered.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until `n` requests arrived (the sender is detached), or 5 s.
    pub fn wait_for(&self, n: usize) -> Vec<Received> {
        let end = Instant::now() + Duration::from_secs(5);
        while self.requests().len() < n && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.requests()
    }
}

fn serve(
    stream: TcpStream,
    log: &Mutex<Vec<Received>>,
    delay: Duration,
    script: &Mutex<std::collections::VecDeque<u16>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or("").to_owned(),
        parts.next().unwrap_or("").to_owned(),
    );
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let status = script.lock().unwrap().pop_front().unwrap_or(200);
    let whoami = path == "/v1/task";
    log.lock().unwrap().push(Received {
        method,
        path,
        headers,
        body,
        status,
    });
    std::thread::sleep(delay);
    // Who a task credential is, as the Worker says it; `{}` to anything else.
    let answer = if whoami {
        r#"{"task_id":"tsk_sink","name":"sink task"}"#
    } else {
        "{}"
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    );
}

/// Runs the binary with `args`, `stdin`, and the environment given (nothing
/// else of the test's environment leaks in, but PATH).
pub fn run(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    feed(cmd, stdin)
}

/// Spawns `cmd` with `stdin` written to it and waits for its output.
pub fn feed(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A person's command: exit 0, or show what it said.
pub fn assert_success(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A hook run: `--cli <cli> --state-dir <dir>` against `url`.
pub fn hook(cli: &str, dir: &Path, url: &str, stdin: &str) -> Output {
    run(
        &["--cli", cli, "--state-dir", dir.to_str().unwrap()],
        stdin,
        &[("NEEDS_YOU_URL", url), ("NEEDS_YOU_TOKEN", TOKEN)],
    )
}

/// The hook promises: exit 0, nothing on stdout, at most one line on stderr.
pub fn assert_quiet(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "exit code");
    assert!(
        out.stdout.is_empty(),
        "stdout: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.lines().count() <= 1,
        "stderr has more than one line: {err:?}"
    );
    err
}

pub fn state_dir() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("state");
    (t, d)
}
