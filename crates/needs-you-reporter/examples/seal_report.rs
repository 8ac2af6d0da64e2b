//! What sealing a report's words costs the detached sender
//! (`sealed_report::sealed_body`: the report read, its card built, its
//! words, summary and lasting choices sealed under the content key), in
//! microseconds: `bash bench/seal.sh`. Two reports side by side, round after
//! round: a permission to run a short command, and one to write a 20 KB
//! file. Beside each, reading the report alone (`Report::parse`), which is
//! what the Worker does with every report, and what the sender of a machine
//! that seals nothing does (the report read, its card and lasting choices
//! built from its request, `card::built`). Runs `ROUNDS` rounds of
//! `PER_ROUND` of each and prints the median and the spread of the rounds'
//! means, as JSON on the last line.

use std::time::Instant;

use needs_you_core::request::Request;
use needs_you_core::Report;
use needs_you_reporter::owner::{KEYS_VAR, OWNER_VAR};
use needs_you_reporter::send::sealed_report::sealed_body;
use needs_you_trust::sealing::ContentKeys;
use serde_json::{json, Value};

const ROUNDS: usize = 30;
const PER_ROUND: usize = 200;

fn permission(tool: &str, input: Value) -> Vec<u8> {
    let request = json!({"tool": tool, "input": input,
        "lasting": [{"type": "addRules", "behavior": "allow", "destination": "localSettings",
                     "rules": [{"toolName": tool, "ruleContent": "npm test:*"}]}]});
    let digest = serde_json::from_value::<Request>(request.clone())
        .expect("a request")
        .digest();
    serde_json::to_vec(
        &json!({"action": "open", "cli": "claude-code", "session": "bench", "seq": 7,
        "kind": "permission", "text": "", "takes": "decision", "digest": digest, "request": request,
        "terminal": {"kind": "tmux", "host": "box", "cwd": "/srv/project", "target": "a:0.1"}}),
    )
    .expect("json")
}

/// The median and the spread of the rounds' means of `f`, in microseconds.
fn measure(mut f: impl FnMut()) -> Value {
    let mut means: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..PER_ROUND {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / PER_ROUND as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let round = |x: f64| (x * 10.0).round() / 10.0;
    json!({"median_us": round(means[ROUNDS / 2]), "min_us": round(means[0]), "max_us": round(means[ROUNDS - 1])})
}

fn main() {
    let dir = std::env::temp_dir().join(format!("needs-you-seal-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let keys = dir.join("content-key.json");
    let held = ContentKeys::first().expect("a key");
    std::fs::write(&keys, serde_json::to_vec(&held).expect("json")).expect("written");
    std::fs::set_permissions(&keys, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("0600");
    std::env::set_var(KEYS_VAR, &keys);
    std::env::set_var(OWNER_VAR, "bench-owner-fingerprint");

    let command = permission("Bash", json!({"command": "npm test -- --run src/api"}));
    let write = permission(
        "Write",
        json!({"file_path": "/srv/project/src/big.rs", "content": "x".repeat(20 * 1024)}),
    );
    let sent_size = |body: &[u8]| sealed_body(body.to_vec()).expect("sent").len();
    let mut out = json!({
        "rounds": ROUNDS, "per_round": PER_ROUND,
        "command": {"queued_bytes": command.len(), "sealed_bytes": sent_size(&command)},
        "write_20k": {"queued_bytes": write.len(), "sealed_bytes": sent_size(&write)},
    });
    for (name, body) in [("command", &command), ("write_20k", &write)] {
        out[name]["sealed_in_sender"] = measure(|| {
            std::hint::black_box(sealed_body(body.clone()).expect("sealed"));
        });
        out[name]["parse_alone"] = measure(|| {
            std::hint::black_box(Report::parse(body).expect("a report"));
        });
        // A machine that names no content key sends its words in the clear.
        std::env::remove_var(KEYS_VAR);
        out[name]["clear_bytes"] = json!(sent_size(body));
        out[name]["built_in_the_clear"] = measure(|| {
            std::hint::black_box(sealed_body(body.clone()).expect("built"));
        });
        std::env::set_var(KEYS_VAR, &keys);
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{out}");
}
