//! A round's reply read from the session's transcript, for a CLI whose
//! round-end event garbles its own copy (Gemini CLI's `AfterAgent` repeats
//! pieces of a reply that streamed in several chunks): the description's
//! [`ReplyInTranscript`](needs_you_core::agent::ReplyInTranscript) names
//! the event and the field, and how a line of the transcript reads as the
//! model's. The reply is the transcript's last such line, which the CLI has
//! written before it runs the hook (`transcript_tail`).

use std::path::Path;

use needs_you_core::Cli;
use serde_json::Value;

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
    let text = crate::hook::transcript_tail::last_found(Path::new(path), rule.text_of);
    if let (Some(text), Some(fields)) = (text, event.as_object_mut()) {
        fields.insert(rule.field.into(), Value::String(text));
    }
    event
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
