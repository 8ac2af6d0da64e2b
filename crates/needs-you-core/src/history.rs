//! The history searched where it is read: the server hands its pages over
//! whole, and the command line (`needs-you log`) and the page (through
//! `card.wasm`) find what a person asks for with this one rule: what a
//! search reads ([`words`]), and when a query finds a question ([`finds`]).

use serde_json::Value;

/// What a search reads of a past question, as the history's JSON has it
/// (`GET /v1/history`, [`crate::api::Past`]): who asked and in which task
/// and place, its words, options and dialog questions, how it closed, every
/// answer's words, who gave it and what became of it, and the rules they
/// granted; one piece a line. Read from the JSON by name rather than through
/// the API's types, so that the page's builder, which runs it, carries no
/// more of the API than a search needs.
pub fn words(past: &Value) -> String {
    let mut out = Vec::new();
    let mut take = |v: &Value, names: &[&str]| {
        out.extend(
            names
                .iter()
                .filter_map(|n| v[n].as_str())
                .map(str::to_owned),
        );
    };
    take(past, &["who", "task_name", "text", "close_reason"]);
    take(&past["terminal"], &["host", "cwd"]);
    for o in list(&past["options"]) {
        take(o, &["label"]);
    }
    for d in list(&past["questions"]) {
        take(d, &["question"]);
        for o in list(&d["options"]) {
            take(o, &["label"]);
        }
    }
    for a in list(&past["answers"]) {
        take(a, &["text", "by", "state"]);
    }
    for r in list(&past["rules"]) {
        take(r, &["rule", "label", "granted_by"]);
    }
    out.join("\n")
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// Whether `query` finds `past`: each of its words, in any case, is
/// somewhere in [`words`]. An empty query finds everything.
pub fn finds(past: &Value, query: &str) -> bool {
    let words = words(past).to_lowercase();
    query
        .split_whitespace()
        .all(|term| words.contains(&term.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn past() -> Value {
        json!({
            "question_id": "q_1", "task_id": "t", "task_name": "release", "session": "s",
            "cli": "claude-code", "kind": "permission", "text": "Run npm test?", "options": [],
            "opened_at": 1, "notified_at": null, "closed_at": 2, "close_reason": "answered",
            "terminal": {"kind": "tmux", "host": "build-box", "cwd": "/src/api"},
            "who": "Claude Code needs your permission",
            "answers": [{"answer_id": "a", "state": "taken", "reason": null, "text": "allow",
                         "updated_at": 2, "form": "decision", "by": "Pixel 9"}],
            "rules": [{"rule_id": "r", "task_id": "t", "question_id": "q_1", "cli": "claude-code",
                       "host": "build-box", "rule": "Bash(npm test *)", "label": "Allow, and don't ask again",
                       "scope": "project_local", "granted_by": "Pixel 9", "granted_at": 2, "state": "granted"}]
        })
    }

    #[test]
    fn every_word_of_a_query_must_be_found_in_any_case() {
        let p = past();
        for found in [
            "",
            "npm",
            "NPM TEST",
            "pixel release",
            "build-box",
            "/src/api",
            "answered",
            "Bash(npm",
            "claude",
        ] {
            assert!(finds(&p, found), "{found}");
        }
        for missed in ["deploy", "npm deploy", "ana"] {
            assert!(!finds(&p, missed), "{missed}");
        }
    }
}
