//! A round's reply read from the session's transcript, for a CLI whose
//! round-end event garbles its own copy (Gemini CLI's `AfterAgent` repeats
//! pieces of a reply that streamed in several chunks): the description's
//! [`ReplyInTranscript`] names the event and the field, and how a line of
//! the transcript reads as the model's. The reply is the transcript's last
//! such line, which the CLI has written before it runs the hook.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use needs_you_core::agent::ReplyInTranscript;
use needs_you_core::Cli;
use serde_json::Value;

/// How much of the transcript's end is read: a reply is a few KiB, and the
/// model's last line is near the end.
const TAIL: u64 = 1024 * 1024;

/// `event` with its reply replaced by the transcript's, where `cli` says
/// its own is not to be trusted; as it came when the transcript has none.
pub fn fix(cli: Cli, mut event: Value) -> Value {
    let Some(rule) = cli.describe().reply_in_transcript else {
        return event;
    };
    if event.get("hook_event_name").and_then(Value::as_str) != Some(rule.event) {
        return event;
    }
    let Some(path) = event.get("transcript_path").and_then(Value::as_str) else {
        return event;
    };
    if let (Some(text), Some(fields)) = (last_reply(Path::new(path), &rule), event.as_object_mut())
    {
        fields.insert(rule.field.into(), Value::String(text));
    }
    event
}

/// The text of the last line of `path` that `rule` reads as the model's.
fn last_reply(path: &Path, rule: &ReplyInTranscript) -> Option<String> {
    let mut f = File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::new();
    f.take(len - start).read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let mut lines = text.lines().rev().collect::<Vec<_>>();
    if start > 0 {
        // The first line read is cut at its start.
        lines.pop();
    }
    lines.into_iter().find_map(|l| (rule.text_of)(l.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemini_s_reply_comes_from_its_transcript_and_others_stay_as_they_came() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"id":"1","type":"user","content":[{"text":"go"}]}"#,
                "\n",
                r#"{"id":"2","type":"gemini","content":"Shall I also update the docs?"}"#,
                "\n",
                r#"{"$set":{"lastUpdated":"t"}}"#,
                "\n",
            ),
        )
        .unwrap();
        let event = json!({"hook_event_name": "AfterAgent", "transcript_path": path,
            "prompt_response": "Shall I also Shall I also update the docs?"});
        assert_eq!(
            fix(Cli::Gemini, event.clone())["prompt_response"],
            "Shall I also update the docs?"
        );
        assert_eq!(fix(Cli::ClaudeCode, event.clone()), event);
        let other = json!({"hook_event_name": "AfterTool", "transcript_path": path});
        assert_eq!(fix(Cli::Gemini, other.clone()), other);
        let gone = json!({"hook_event_name": "AfterAgent", "transcript_path": dir.path().join("none"),
            "prompt_response": "As it came?"});
        assert_eq!(fix(Cli::Gemini, gone.clone()), gone);
    }
}
