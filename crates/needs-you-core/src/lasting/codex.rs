//! Codex's lasting choice: its exec-policy amendment, commands that start
//! with the request's own prefix allowed from now on, written as one line
//! into its rules and taken back out of them. (Its `acceptForSession` is not
//! offered: its reach depends on the request, a command, a host or a set of
//! permissions, and 0.171.0 did not offer it for a command.)

use serde_json::Value;

use super::offer::{Lasting, Offer, Scope, TakenOut, Written};
use crate::request::Request;

/// The decision that amends Codex's policy (its TUI's "Yes, and don't ask
/// again for commands that start with …", seen with 0.171.0).
pub const AMEND_POLICY: &str = "acceptWithExecpolicyAmendment";

/// What the person should know once the line is out of the file: Codex
/// holds an amendment in memory for the session that made it (seen with
/// 0.171.0); the file is what new sessions read.
const STILL_HELD: &str = "the Codex session running now keeps it until it restarts";

/// The choices `request`'s suggestions offer, in their order.
pub(super) fn suggested(request: &Request) -> Vec<Option<Lasting>> {
    request.lasting.iter().map(lasting).collect()
}

fn lasting(s: &Value) -> Option<Lasting> {
    let prefix = policy_prefix(s)?;
    let words: Vec<String> = prefix.iter().map(|w| shell_word(w)).collect();
    let rule = format!("commands that start with {}", words.join(" "));
    let label = format!("Allow, and don't ask again for {rule}");
    Some(Lasting {
        offer: Offer::lasting(s, &label, &rule, Scope::CodexRules),
        suggestion: s.clone(),
        written: Some(Written {
            scope: Scope::CodexRules,
            list: "rules".to_owned(),
            entries: vec![rule_line(&prefix)],
        }),
    })
}

/// The exec-policy amendment's command prefix, from a suggestion.
fn policy_prefix(suggestion: &Value) -> Option<Vec<String>> {
    let prefix = suggestion
        .get(AMEND_POLICY)?
        .get("execpolicy_amendment")?
        .as_array()?;
    let prefix: Option<Vec<String>> = prefix
        .iter()
        .map(|p| p.as_str().map(str::to_owned))
        .collect();
    prefix.filter(|p| !p.is_empty())
}

/// A word of a command as a shell would read it back: quoted when it holds
/// anything but plain characters, so that `["git", "push origin"]` does not
/// read as three words.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The line Codex writes into its rules for an amendment of `prefix` (seen
/// with 0.171.0: `prefix_rule(pattern=["rm", "-rf", "/w"],
/// decision="allow")`).
fn rule_line(prefix: &[String]) -> String {
    let parts: Vec<String> = prefix
        .iter()
        .map(|p| Value::String(p.clone()).to_string())
        .collect();
    format!(
        "prefix_rule(pattern=[{}], decision=\"allow\")",
        parts.join(", ")
    )
}

/// `written` taken out of a rules file's `text`: the lines that are
/// exactly its entries, if any is still there as written.
pub(super) fn take_out(text: &str, written: &Written) -> TakenOut {
    let there = |l: &str| written.entries.iter().any(|e| l.trim_end() == e);
    if !text.lines().any(there) {
        return TakenOut::Gone;
    }
    let kept: Vec<&str> = text.lines().filter(|l| !there(l)).collect();
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    TakenOut::Removed {
        text: out,
        note: Some(STILL_HELD),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::afar::{AnswerBody, Verdict};
    use crate::classify::codex_app::{self, COMMAND_APPROVAL, COMMAND_TOOL};
    use crate::lasting::{id_of, offered};
    use serde_json::json;

    #[test]
    fn codex_offers_its_own_policy_amendment() {
        // Codex 0.171.0's command approval, as its app-server sent it.
        let params = json!({"threadId": "t", "command": "/bin/bash -lc 'rm -rf /w/x'", "cwd": "/w",
            "proposedExecpolicyAmendment": ["rm", "-rf", "/w/x"],
            "availableDecisions": ["accept", {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x"]}}, "cancel"]});
        let asked = codex_app::asked(COMMAND_APPROVAL, &params, None).unwrap();
        let got = offered(&asked.request);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].offer.label,
            "Allow, and don't ask again for commands that start with rm -rf /w/x"
        );
        assert_eq!(got[0].offer.scope, Some(Scope::CodexRules));
        assert_eq!(shell_word("push origin"), "'push origin'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        let keep = AnswerBody::Decision {
            decision: Verdict::Lasting(got[0].offer.id.clone()),
            message: None,
        };
        assert_eq!(
            codex_app::response(COMMAND_APPROVAL, &params, &keep).unwrap(),
            json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x"]}}}),
            "sent back as Codex offered it"
        );
        let other = AnswerBody::Decision {
            decision: Verdict::Lasting(id_of(&json!("acceptForSession"))),
            message: None,
        };
        assert_eq!(
            codex_app::response(COMMAND_APPROVAL, &params, &other),
            None,
            "not offered by this request"
        );
    }

    #[test]
    fn a_codex_rule_comes_out_of_its_rules_file_as_it_went_in() {
        let s = json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x \"y\""]}});
        let w = lasting(&s).unwrap().written.unwrap();
        assert_eq!(
            w.entries,
            vec![
                r#"prefix_rule(pattern=["rm", "-rf", "/w/x \"y\""], decision="allow")"#.to_owned()
            ]
        );
        let text = format!(
            "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n{}\n",
            w.entries[0]
        );
        let TakenOut::Removed { text: out, note } = take_out(&text, &w) else {
            panic!("not taken out");
        };
        assert_eq!(out, "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n");
        assert_eq!(note, Some(STILL_HELD));
        assert_eq!(take_out(&out, &w), TakenOut::Gone, "gone: left alone");
    }

    #[test]
    fn codex_s_accept_for_session_is_not_offered() {
        let mut r = Request::new(COMMAND_TOOL, &json!({"command": "npm test", "cwd": "/w"}));
        r.lasting = vec![json!("acceptForSession")];
        assert!(offered(&r).is_empty());
    }
}
