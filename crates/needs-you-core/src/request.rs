//! The request that an answer from afar covers, as the CLI gave it: the tool
//! and its input. What you see is what you allow:
//!
//! * the reporter sends the request itself with the open of a dialog or
//!   permission that takes an answer from afar;
//! * the Worker computes the digest from exactly that request and refuses a
//!   report whose digest says otherwise; it reads nothing else of it;
//! * the reporter's sender builds the card from it for the list
//!   (`classify::card::built`), and the device that answers builds it again,
//!   and shows and signs only its own (`classify::card::to_sign`, in each
//!   CLI's words): no free text of the agent's machine or the server
//!   describes what an allow covers;
//! * the hook or plugin that takes the answer computes the digest again from
//!   the dialog on its own screen, and takes only an answer made for it.
//!
//! The card shows everything the digest covers (the whole command, a file's
//! content, an edit as a diff, every argument of an MCP tool), with every
//! control and invisible character written out (`text::visible`). Nothing
//! is cut: a request too large to carry whole ([`MAX_REQUEST_BYTES`]) takes
//! nothing from afar, and its card says why.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::afar;
use crate::kinds::Cli;

/// The largest request carried whole, as JSON: it and the rest of its report
/// fit the Worker's 32 KiB body.
pub const MAX_REQUEST_BYTES: usize = 24 * 1024;
/// Most lasting choices a request carries, as the CLI suggested them.
pub const MAX_SUGGESTIONS: usize = 8;

/// The tool whose dialog request keeps its questions in `questions` of its
/// input: Claude Code's (and Copilot's) `AskUserQuestion`.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

/// The tool name under which OpenCode's permission requests are digested:
/// its own lasting choice is read from such a request ([`crate::lasting`]).
pub const OPENCODE_PERMISSION: &str = "opencode.permission";

/// A tool and its input, as the CLI gave them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub tool: String,
    pub input: Value,
    /// The lasting choices the CLI suggests for it, as it gave them: its
    /// dialog's "don't ask again" ([`crate::lasting`]). Not in the digest:
    /// each choice is bound by an id of its own, which the hook that takes
    /// it finds again in its own dialog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lasting: Vec<Value>,
}

impl Request {
    pub fn new(tool: &str, input: &Value) -> Request {
        Request {
            tool: tool.to_owned(),
            input: input.clone(),
            lasting: Vec::new(),
        }
    }

    /// The CLI whose tool this is, by the tool's own name, which the digest
    /// binds: Codex's app-server requests are named `codex.…`, OpenCode's
    /// `opencode.…`; every other tool name is Claude Code's (and that of the
    /// CLIs that speak its hook's format). What a report says of its CLI is
    /// never asked.
    pub fn cli(&self) -> Cli {
        match self.tool.split_once('.') {
            Some(("codex", _)) => Cli::Codex,
            Some(("opencode", _)) => Cli::Opencode,
            _ => Cli::ClaudeCode,
        }
    }

    /// A dialog request's list of questions, where its tool keeps them:
    /// [`ASK_USER_QUESTION`] in `questions` of its input; every other
    /// dialog's request (OpenCode's, Codex's) is the list itself. Chosen by
    /// the tool's own name, which the digest binds.
    pub fn dialog_questions(&self) -> Option<&Value> {
        match self.tool.as_str() {
            ASK_USER_QUESTION => self.input.get("questions"),
            _ => Some(&self.input),
        }
    }

    /// [`afar::digest`] of the tool and its input.
    pub fn digest(&self) -> String {
        afar::digest(&self.tool, &self.input)
    }

    /// Its size as JSON, in bytes.
    pub fn size(&self) -> usize {
        serde_json::to_string(self).map_or(usize::MAX, |s| s.len())
    }

    /// Whether it is carried whole, and so may be answered from afar.
    pub fn fits(&self) -> bool {
        self.size() <= MAX_REQUEST_BYTES
    }

    /// Reads `{"tool": "…", "input": …}`.
    pub fn from_value(v: &Value) -> Result<Request, &'static str> {
        let obj = v.as_object().ok_or("`request` must be an object")?;
        let tool = match obj.get("tool") {
            Some(Value::String(t)) if !t.is_empty() && t.len() <= 200 => t.clone(),
            _ => return Err("`request.tool` must be a string of 1 to 200 bytes"),
        };
        let input = obj.get("input").cloned().unwrap_or(Value::Null);
        let lasting = match obj.get("lasting") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(l)) if l.len() <= MAX_SUGGESTIONS => l.clone(),
            Some(_) => {
                return Err("`request.lasting` must be a list of at most 8 suggestions");
            }
        };
        Ok(Request {
            tool,
            input,
            lasting,
        })
    }
}

/// The fields of a request's input that its first lines did not show, one a
/// line as `name: value` (a string as it is, anything else as JSON), in the
/// order of their names: what the digest covers is all on the card. A name
/// that is not plain is written as JSON, and a value's further lines are
/// indented, so that no value can pass for a field of its own.
pub fn rest_lines(rest: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = rest.keys().collect();
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let plain = !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
            let name = if plain {
                k.clone()
            } else {
                Value::String(k.clone()).to_string()
            };
            let value = match &rest[k] {
                Value::String(s) => s.replace('\n', "\n  "),
                other => other.to_string(),
            };
            format!("{name}: {value}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line the agent wrote (a command's description), its breaks written
/// out: it never passes for more lines of the card.
pub fn one_line(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', " ⏎ ")
}

/// Removes `key` from `rest` if it is a string, and gives it.
pub fn take_str(rest: &mut Map<String, Value>, key: &str) -> Option<String> {
    match rest.get(key) {
        Some(Value::String(_)) => match rest.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// An edit as a diff: each line taken out after `- `, each put in after `+ `.
pub fn diff(old: &str, new: &str) -> String {
    let minus = old.split('\n').map(|l| format!("- {l}"));
    let plus = new.split('\n').map(|l| format!("+ {l}"));
    minus.chain(plus).collect::<Vec<_>>().join("\n")
}

/// `head`, then a blank line and `rest`'s lines when there are any.
pub fn with_rest(head: String, rest: &Map<String, Value>) -> String {
    if rest.is_empty() {
        head
    } else {
        format!("{head}\n\n{}", rest_lines(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_is_its_cli_s_by_its_tool_s_name_alone() {
        let of = |tool: &str| Request::new(tool, &json!({})).cli();
        assert_eq!(of("codex.commandExecution"), Cli::Codex);
        assert_eq!(of(OPENCODE_PERMISSION), Cli::Opencode);
        for claude in ["Bash", "mcp__codex.run", "codexes.x", "opencode", ""] {
            assert_eq!(of(claude), Cli::ClaudeCode, "{claude}");
        }
    }

    #[test]
    fn a_request_fits_or_not_and_digests_as_its_tool_and_input() {
        let big = Request::new(
            "Write",
            &json!({"file_path": "/w/big", "content": "x".repeat(30_000)}),
        );
        assert!(!big.fits());
        let small = Request::new("Bash", &json!({"command": "ls"}));
        assert!(small.fits());
        assert_eq!(
            small.digest(),
            afar::digest("Bash", &json!({"command": "ls"}))
        );
    }

    #[test]
    fn an_edit_is_a_diff_and_the_rest_is_listed_by_name() {
        assert_eq!(diff("a\nb", "c"), "- a\n- b\n+ c");
        let rest = json!({"z": 1, "a": "text", "m": [1, 2]});
        assert_eq!(
            rest_lines(rest.as_object().unwrap()),
            "a: text\nm: [1,2]\nz: 1"
        );
        // No value passes for a field of its own.
        let sly = json!({"sql": "DROP TABLE users\ndatabase: staging", "a: b": 1});
        assert_eq!(
            rest_lines(sly.as_object().unwrap()),
            "\"a: b\": 1\nsql: DROP TABLE users\n  database: staging"
        );
        assert_eq!(
            one_line("Run the tests\n$ npm test"),
            "Run the tests ⏎ $ npm test"
        );
    }

    #[test]
    fn a_request_reads_from_its_json() {
        let r = Request::from_value(&json!({"tool": "Bash", "input": {"command": "ls"}})).unwrap();
        assert_eq!(r.input["command"], "ls");
        for bad in [
            json!("Bash"),
            json!({"tool": ""}),
            json!({"input": {}}),
            json!({"tool": 3}),
        ] {
            assert!(Request::from_value(&bad).is_err(), "{bad}");
        }
    }
}
