//! The plan of a Claude Code plan approval. Claude Code 2.1.332 calls
//! `ExitPlanMode` with `{}`: the plan is in a file the model wrote, which
//! the session's transcript names. The approval is read in the person's
//! words and with the plan only when both are found; any failure leaves the
//! words alone.

use std::io::Read;
use std::path::{Path, PathBuf};

use needs_you_core::classify::{plan_text, transcript_plan_file, PLAN_TOOL};
use serde_json::Value;

use crate::hook::transcript_tail::{last_found, open_plain};

/// The most of a plan that is read; the report keeps less.
const MAX_PLAN_BYTES: u64 = 16 * 1024;

/// `text` with the plan that `event` (a Claude Code `PermissionRequest`
/// for `ExitPlanMode` whose input has none) leads to, else `text`.
pub fn with_plan(event: &Value, text: String) -> String {
    let has_plan = event
        .pointer("/tool_input/plan")
        .and_then(Value::as_str)
        .is_some_and(|p| !p.trim().is_empty());
    let is_plan = event.get("tool_name").and_then(Value::as_str) == Some(PLAN_TOOL) && !has_plan;
    if !is_plan {
        return text;
    }
    event
        .get("transcript_path")
        .and_then(Value::as_str)
        .and_then(|t| plan_file(Path::new(t)))
        .and_then(|p| read_bounded(&p, MAX_PLAN_BYTES))
        .map_or(text, |plan| plan_text(Some(&plan)))
}

/// The last plan file that the end of the transcript names, if it is in
/// the `plans` folder of the Claude Code folder that holds the transcript
/// (`<config>/projects/<project>/<session>.jsonl`, `<config>/plans/`).
fn plan_file(transcript: &Path) -> Option<PathBuf> {
    let config = transcript.ancestors().nth(3)?;
    let named = last_found(transcript, transcript_plan_file)?;
    let path = PathBuf::from(named);
    (path.parent()? == config.join("plans")).then_some(path)
}

/// At most `max` bytes of it, cut at the last whole character.
fn read_bounded(path: &Path, max: u64) -> Option<String> {
    let mut buf = Vec::new();
    open_plain(path)?.take(max).read_to_end(&mut buf).ok()?;
    let whole = match std::str::from_utf8(&buf) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(), // a character cut
        _ => buf.len(),
    };
    Some(String::from_utf8_lossy(&buf[..whole]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A Claude Code folder whose transcript names its plan file, made by
    /// `make`; and the `ExitPlanMode` event of that session.
    fn session(make: impl FnOnce(&Path)) -> (tempfile::TempDir, Value) {
        let t = tempfile::tempdir().unwrap();
        let plans = t.path().join("claude").join("plans");
        std::fs::create_dir_all(&plans).unwrap();
        let plan = plans.join("plan-the-cleanup.md");
        make(&plan);
        let project = t.path().join("claude").join("projects").join("-home-u-p");
        std::fs::create_dir_all(&project).unwrap();
        let transcript = project.join("s.jsonl");
        name_in(&transcript, &plan);
        let event = json!({"tool_name": "ExitPlanMode", "tool_input": {},
            "transcript_path": transcript.to_str().unwrap()});
        (t, event)
    }

    fn name_in(transcript: &Path, plan: &Path) {
        let attachment = json!({"type": "attachment", "attachment": {"type": "plan_mode",
            "planFilePath": plan.to_str().unwrap()}});
        std::fs::write(
            transcript,
            format!("{{\"type\":\"user\"}}\n{attachment}\n{{\"type\":\"assistant\"}}\n"),
        )
        .unwrap();
    }

    #[test]
    fn the_plan_comes_from_the_file_the_transcript_names() {
        let (t, event) =
            session(|p| std::fs::write(p, "# Clean up\n\n1. Remove build/\n2. Rebuild\n").unwrap());
        let words = plan_text(None);
        assert_eq!(
            with_plan(&event, words.clone()),
            plan_text(Some("# Clean up\n\n1. Remove build/\n2. Rebuild"))
        );
        // An empty plan in the input is no plan: the file is read.
        let mut empty = event.clone();
        empty["tool_input"]["plan"] = json!(" ");
        assert_ne!(with_plan(&empty, words.clone()), words);
        // Nothing found, another tool, another CLI: the words as they were.
        std::fs::remove_file(t.path().join("claude/plans/plan-the-cleanup.md")).unwrap();
        assert_eq!(with_plan(&event, words.clone()), words);
        let bash = json!({"tool_name": "Bash", "transcript_path": event["transcript_path"]});
        assert_eq!(with_plan(&bash, "x".into()), "x");
    }

    #[test]
    fn no_fifo_symbolic_link_or_other_folder_is_read_and_a_cut_keeps_whole_characters() {
        let words = plan_text(None);
        // A FIFO: opened without waiting, and refused.
        let (_t, fifo) = session(|p| {
            let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        });
        assert_eq!(with_plan(&fifo, words.clone()), words);
        // A symbolic link to a secret.
        let (t, link) = session(|p| {
            let secret = p.parent().unwrap().join("secret");
            std::fs::write(&secret, "the key").unwrap();
            std::os::unix::fs::symlink(&secret, p).unwrap();
        });
        assert_eq!(with_plan(&link, words.clone()), words);
        // A plans folder that is not this Claude Code folder's.
        let elsewhere = t.path().join("other").join("plans");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("p.md"), "a plan elsewhere").unwrap();
        let transcript = PathBuf::from(link["transcript_path"].as_str().unwrap());
        name_in(&transcript, &elsewhere.join("p.md"));
        assert_eq!(with_plan(&link, words.clone()), words);
        // A long plan is cut at a whole character.
        let (_t, long) = session(|p| std::fs::write(p, "é".repeat(9000)).unwrap());
        let text = with_plan(&long, words.clone());
        assert!(text.ends_with('é'), "{:?}", &text[text.len() - 8..]);
    }
}
