//! The plan of a Claude Code plan approval. Claude Code 2.1.332 calls
//! `ExitPlanMode` with `{}`: the plan is in a file the model wrote, which
//! the session's transcript names. The approval is read in the person's
//! words and with the plan only when both are found; any failure leaves the
//! words alone.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use needs_you_core::classify::{plan_text, transcript_plan_file, PLAN_TOOL};
use needs_you_core::Cli;
use serde_json::Value;

/// How much of the transcript's end is searched for the plan file's name:
/// Claude Code repeats it at every turn in plan mode.
const TRANSCRIPT_TAIL: u64 = 1024 * 1024;
/// The most of a plan that is read; the report keeps less.
const MAX_PLAN_BYTES: u64 = 16 * 1024;

/// `text` with the plan that `event` (a Claude Code `PermissionRequest`
/// for `ExitPlanMode` whose input has none) leads to, else `text`.
pub fn with_plan(cli: Cli, event: &Value, text: String) -> String {
    let is_plan = cli == Cli::ClaudeCode
        && event.get("tool_name").and_then(Value::as_str) == Some(PLAN_TOOL)
        && event.pointer("/tool_input/plan").is_none();
    if !is_plan {
        return text;
    }
    event
        .get("transcript_path")
        .and_then(Value::as_str)
        .and_then(|t| plan_file(Path::new(t)))
        .and_then(|p| read_bounded(Path::new(&p), MAX_PLAN_BYTES))
        .map_or(text, |plan| plan_text(Some(&plan)))
}

/// The last plan file that the end of the transcript names.
fn plan_file(transcript: &Path) -> Option<String> {
    let mut f = File::open(transcript).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TRANSCRIPT_TAIL)))
        .ok()?;
    let mut buf = Vec::new();
    f.take(TRANSCRIPT_TAIL).read_to_end(&mut buf).ok()?;
    String::from_utf8_lossy(&buf)
        .lines()
        .rev()
        .find_map(transcript_plan_file)
}

fn read_bounded(path: &Path, max: u64) -> Option<String> {
    let f = File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    f.take(max).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_plan_comes_from_the_file_the_transcript_names() {
        let t = tempfile::tempdir().unwrap();
        let plans = t.path().join("plans");
        std::fs::create_dir(&plans).unwrap();
        let plan = plans.join("plan-the-cleanup.md");
        std::fs::write(&plan, "# Clean up\n\n1. Remove build/\n2. Rebuild\n").unwrap();
        let transcript = t.path().join("s.jsonl");
        let attachment = json!({"type": "attachment", "attachment": {"type": "plan_mode",
            "planFilePath": plan.to_str().unwrap()}});
        std::fs::write(
            &transcript,
            format!("{{\"type\":\"user\"}}\n{attachment}\n{{\"type\":\"assistant\"}}\n"),
        )
        .unwrap();
        let event = json!({"tool_name": "ExitPlanMode", "tool_input": {},
            "transcript_path": transcript.to_str().unwrap()});
        let words = plan_text(None);
        assert_eq!(
            with_plan(Cli::ClaudeCode, &event, words.clone()),
            plan_text(Some("# Clean up\n\n1. Remove build/\n2. Rebuild"))
        );
        // Nothing found, another tool, another CLI: the words as they were.
        std::fs::remove_file(&plan).unwrap();
        assert_eq!(with_plan(Cli::ClaudeCode, &event, words.clone()), words);
        let bash = json!({"tool_name": "Bash", "transcript_path": transcript.to_str().unwrap()});
        assert_eq!(with_plan(Cli::ClaudeCode, &bash, "x".into()), "x");
        assert_eq!(with_plan(Cli::Codex, &event, "x".into()), "x");
    }
}
