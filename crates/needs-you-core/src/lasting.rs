//! The lasting choices of a permission: "allow, and don't ask again for …",
//! offered from afar exactly as the CLI itself suggests them, never a rule we
//! made up or widened.
//!
//! * The CLI's suggestions travel as it gave them, in the request
//!   ([`crate::request::Request::lasting`]); the Worker lists the choices
//!   [`offered`] builds from them, each with the words the page and its
//!   confirmation show (the rule, where it is written, how long it lasts).
//! * A choice's id is a hash of the suggestion itself ([`id_of`]): the hook
//!   that takes an answer finds the suggestion with that id in the dialog on
//!   its own screen and applies its own copy. A suggestion that a made-up
//!   report showed, and the CLI never made, has an id no dialog offers: it is
//!   never applied.
//! * What is never offered: a suggestion that switches the CLI's mode (it is
//!   broader than any one request), one that denies, asks or removes rules,
//!   and, for Claude Code, a folder's access that the terminal offers only
//!   together with a mode switch.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::request::{Request, OPENCODE_PERMISSION};
use crate::text;

/// Most lasting choices one permission offers.
pub const MAX_LASTING: usize = 4;

wire_enum! {
    /// Where a lasting rule is kept, and so how long it lasts.
    Scope {
        /// In the agent's memory: it ends with its session.
        Session = "session",
        /// In the agent's memory for every session of it: it ends when the
        /// agent quits (OpenCode's `always`).
        UntilQuit = "until_quit",
        /// The project's own, unshared settings (Claude Code's
        /// `.claude/settings.local.json`).
        ProjectLocal = "project_local",
        /// The project's shared settings (`.claude/settings.json`).
        Project = "project",
        /// The person's settings, for every project.
        User = "user",
        /// Codex's exec-policy rules (`$CODEX_HOME/rules/`), for every
        /// project.
        CodexRules = "codex_rules",
    }
}

impl Scope {
    /// Whether the rule is in a file, and so outlives the task.
    pub fn written(self) -> bool {
        !matches!(self, Scope::Session | Scope::UntilQuit)
    }

    /// Where it is kept, in words: "this session", "this project's …".
    pub fn place(self) -> &'static str {
        match self {
            Scope::Session => "this session only, in the agent's memory",
            Scope::UntilQuit => "the agent's memory, for all its sessions",
            Scope::ProjectLocal => "this project's .claude/settings.local.json",
            Scope::Project => "this project's .claude/settings.json, shared with the repository",
            Scope::User => "your ~/.claude/settings.json, for every project",
            Scope::CodexRules => "Codex's rules (~/.codex/rules), for every project",
        }
    }

    /// How long it lasts, in words.
    pub fn lasts(self) -> &'static str {
        match self {
            Scope::Session => "until the session ends",
            Scope::UntilQuit => "until the agent quits",
            _ => "until it is taken back: it outlives the task",
        }
    }
}

/// One choice a permission offers from afar, as every screen shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offer {
    /// `allow`, `deny`, or a lasting choice's [`id_of`].
    pub id: String,
    /// The choice in a few words.
    pub label: String,
    /// Whether it lasts beyond this request.
    pub lasting: bool,
    /// What a lasting choice allows from now on, as the CLI writes it
    /// (`Bash(npm test *)`, `access to /srv/data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where a lasting choice is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The same in words, for the confirmation: where it is written, and
    /// how long it lasts ([`Scope::place`], [`Scope::lasts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lasts: Option<String>,
}

impl Offer {
    /// A lasting choice kept in `scope`.
    fn lasting(id: String, label: &str, rule: &str, scope: Scope) -> Offer {
        Offer {
            id,
            label: text::visible(label),
            lasting: true,
            rule: Some(text::visible(rule)),
            scope: Some(scope),
            place: Some(scope.place().to_owned()),
            lasts: Some(scope.lasts().to_owned()),
        }
    }
}

impl Offer {
    /// Allow once, and deny: what every permission that takes a decision
    /// offers.
    pub fn once() -> [Offer; 2] {
        let plain = |id: &str, label: &str| Offer {
            id: id.to_owned(),
            label: label.to_owned(),
            lasting: false,
            rule: None,
            scope: None,
            place: None,
            lasts: None,
        };
        [plain("allow", "Allow once"), plain("deny", "Deny")]
    }
}

/// A lasting choice and the suggestion it applies, as the CLI gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lasting {
    pub offer: Offer,
    pub suggestion: Value,
}

/// The id of the choice that applies `suggestion` ([`crate::afar::lasting_id`]).
pub use crate::afar::is_lasting_id as is_id;
pub use crate::afar::lasting_id as id_of;

/// The lasting choices `request` offers, in the order its CLI suggested
/// them, at most [`MAX_LASTING`]; none when it suggests nothing this module
/// knows to be as narrow as the CLI's own dialog. Each CLI's suggestions are
/// read in its own shapes only, by the request's tool.
pub fn offered(request: &Request) -> Vec<Lasting> {
    let pairs: Vec<(Value, Option<Offer>)> = if request.tool.starts_with("codex.") {
        request
            .lasting
            .iter()
            .map(|s| (s.clone(), codex(s)))
            .collect()
    } else if request.tool.starts_with("opencode.") {
        // OpenCode's request names its own lasting choice in its input (so
        // under the digest); nothing else is taken for it.
        opencode_request_always(request)
            .map(|s| {
                let offer = opencode(&s, &request.input);
                (s, offer)
            })
            .into_iter()
            .collect()
    } else if request
        .lasting
        .iter()
        .any(|s| str_at(s, "type") == Some("setMode"))
    {
        // Claude Code offers a mode switch together with other changes in
        // one option of its dialog (a folder's access, seen with 2.1.332):
        // which of them go with it is not in the payload, so none is offered.
        Vec::new()
    } else {
        request
            .lasting
            .iter()
            .map(|s| (s.clone(), claude_code(s)))
            .collect()
    };
    let mut out: Vec<Lasting> = Vec::new();
    for (suggestion, offer) in pairs {
        let Some(offer) = offer else {
            continue;
        };
        if out.iter().any(|l| l.offer.id == offer.id) {
            continue;
        }
        out.push(Lasting { offer, suggestion });
        if out.len() == MAX_LASTING {
            break;
        }
    }
    out
}

/// The lasting choice offered with `id`, if `request` offers it.
pub fn find(request: &Request, id: &str) -> Option<Lasting> {
    offered(request).into_iter().find(|l| l.offer.id == id)
}

/// A Claude Code `permission_suggestions` entry as a choice: `addRules`
/// that allow, and `addDirectories`, kept in the session or one of its
/// settings files.
fn claude_code(s: &Value) -> Option<Offer> {
    let scope = match str_at(s, "destination")? {
        "session" => Scope::Session,
        "localSettings" => Scope::ProjectLocal,
        "projectSettings" => Scope::Project,
        "userSettings" => Scope::User,
        _ => return None,
    };
    let (rule, label) = match str_at(s, "type")? {
        "addRules" if str_at(s, "behavior") == Some("allow") => {
            let rules = claude_rules(s)?;
            let rule = rules.join(", ");
            let label = format!("Allow, and don't ask again for {rule}");
            (rule, label)
        }
        "addDirectories" => {
            let dirs = strings_at(s, "directories")?;
            let rule = format!("access to {}", dirs.join(", "));
            let label = format!("Allow, and always allow {rule}");
            (rule, label)
        }
        _ => return None,
    };
    Some(Offer::lasting(id_of(s), &label, &rule, scope))
}

/// Codex's exec-policy amendment: commands that start with the request's
/// own prefix, allowed from now on in its rules. (Its `acceptForSession`
/// is not offered: its reach depends on the request, a command, a host or a
/// set of permissions, and 0.171.0 did not offer it for a command.)
fn codex(s: &Value) -> Option<Offer> {
    let prefix = policy_prefix(s)?;
    let words: Vec<String> = prefix.iter().map(|w| shell_word(w)).collect();
    let rule = format!("commands that start with {}", words.join(" "));
    let label = format!("Allow, and don't ask again for {rule}");
    Some(Offer::lasting(id_of(s), &label, &rule, Scope::CodexRules))
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

/// OpenCode's `always`, as a suggestion, from its request's own patterns.
fn opencode_request_always(request: &Request) -> Option<Value> {
    (request.tool == OPENCODE_PERMISSION)
        .then(|| opencode_always(&request.input))
        .flatten()
}

/// OpenCode's own lasting choice for a permission `input`: its `always`
/// patterns, as the suggestion `{"reply": "always", "patterns"}`.
pub fn opencode_always(input: &Value) -> Option<Value> {
    let items = input.get("always")?.as_array()?;
    // Every pattern a non-empty string, or none is offered: a choice must
    // name all that OpenCode's `always` allows.
    let patterns: Option<Vec<&str>> = items
        .iter()
        .map(|p| p.as_str().filter(|p| !p.is_empty()))
        .collect();
    let patterns = patterns.filter(|p| !p.is_empty())?;
    Some(json!({"reply": "always", "patterns": patterns}))
}

/// Codex's lasting choice: commands that start with the request's own
/// prefix allowed from now on, written into Codex's rules (its TUI's "Yes,
/// and don't ask again for commands that start with …", seen with 0.171.0).
pub const AMEND_POLICY: &str = "acceptWithExecpolicyAmendment";

/// The exec-policy amendment's command prefix, from a suggestion.
pub fn policy_prefix(suggestion: &Value) -> Option<Vec<String>> {
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

/// OpenCode's "always": the request's patterns of its kind of permission
/// (`bash: git push *`, `edit: *`), allowed until OpenCode quits, for every
/// session of it.
fn opencode(s: &Value, input: &Value) -> Option<Offer> {
    let patterns = strings_at(s, "patterns")?.join(", ");
    let rule = match str_at(input, "permission").or_else(|| str_at(input, "type")) {
        Some(kind) => format!("{kind}: {patterns}"),
        None => patterns,
    };
    let label = format!("Allow, and don't ask again for {rule}");
    Some(Offer::lasting(id_of(s), &label, &rule, Scope::UntilQuit))
}

/// An `addRules` suggestion's rules as Claude Code writes them in its
/// settings: `Tool` or `Tool(content)`.
pub fn claude_rules(s: &Value) -> Option<Vec<String>> {
    let rules = s.get("rules")?.as_array()?;
    if rules.is_empty() {
        return None;
    }
    rules
        .iter()
        .map(|r| {
            let tool = str_at(r, "toolName").filter(|t| !t.is_empty())?;
            Some(match r.get("ruleContent") {
                None | Some(Value::Null) => tool.to_owned(),
                Some(Value::String(c)) => format!("{tool}({c})"),
                Some(_) => return None,
            })
        })
        .collect()
}

/// What a Claude Code suggestion kept in a settings file writes there: the
/// entries it adds to the list at `permissions.<list>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    pub scope: Scope,
    /// `allow` or `additionalDirectories`.
    pub list: String,
    pub entries: Vec<String>,
}

/// What `suggestion` writes into a settings or rules file; `None` for a
/// session's (nothing is written) or one never offered.
pub fn written(suggestion: &Value) -> Option<Written> {
    if let Some(prefix) = policy_prefix(suggestion) {
        return Some(Written {
            scope: Scope::CodexRules,
            list: "rules".to_owned(),
            entries: vec![codex_rule_line(&prefix)],
        });
    }
    let offer = claude_code(suggestion)?;
    let scope = offer.scope.filter(|s| s.written())?;
    let (list, entries) = match str_at(suggestion, "type")? {
        "addRules" => ("allow", claude_rules(suggestion)?),
        _ => (
            "additionalDirectories",
            strings_at(suggestion, "directories")?,
        ),
    };
    Some(Written {
        scope,
        list: list.to_owned(),
        entries,
    })
}

/// What taking `written` back out of `settings` (a settings file's JSON)
/// does: the settings without its entries, and which entries were there;
/// `None` when none of them is there any more as written (changed or
/// removed by hand): the file is then left alone. Nothing else changes,
/// an entry the person added again by hand included, when it is one of
/// ours (the same text is the same rule).
pub fn without(settings: &Value, written: &Written) -> Option<(Value, Vec<String>)> {
    let list = settings
        .get("permissions")?
        .get(&written.list)?
        .as_array()?;
    let there: Vec<String> = written
        .entries
        .iter()
        .filter(|e| list.iter().any(|i| i.as_str() == Some(e.as_str())))
        .cloned()
        .collect();
    if there.is_empty() {
        return None;
    }
    let mut out = settings.clone();
    if let Some(Value::Array(l)) = out
        .get_mut("permissions")
        .and_then(|p| p.get_mut(&written.list))
    {
        l.retain(|i| !i.as_str().is_some_and(|i| there.iter().any(|e| e == i)));
    }
    Some((out, there))
}

/// The line Codex writes into its rules for an exec-policy amendment of
/// `prefix` (seen with 0.171.0: `prefix_rule(pattern=["rm", "-rf", "/w"],
/// decision="allow")`).
pub fn codex_rule_line(prefix: &[String]) -> String {
    let parts: Vec<String> = prefix
        .iter()
        .map(|p| Value::String(p.clone()).to_string())
        .collect();
    format!(
        "prefix_rule(pattern=[{}], decision=\"allow\")",
        parts.join(", ")
    )
}

/// [`without`] for a rules file of lines: the text without the lines that
/// are exactly `written`'s entries, and which were there; `None` when none
/// is there any more as written.
pub fn without_lines(text: &str, written: &Written) -> Option<(String, Vec<String>)> {
    let there: Vec<String> = written
        .entries
        .iter()
        .filter(|e| text.lines().any(|l| l.trim_end() == e.as_str()))
        .cloned()
        .collect();
    if there.is_empty() {
        return None;
    }
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !there.iter().any(|e| l.trim_end() == e))
        .collect();
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    Some((out, there))
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

/// A non-empty list of non-empty strings at `key`.
pub fn strings_at(v: &Value, key: &str) -> Option<Vec<String>> {
    let items = v.get(key)?.as_array()?;
    let out: Option<Vec<String>> = items
        .iter()
        .map(|i| i.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
        .collect();
    out.filter(|o| !o.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(lasting: Value) -> Request {
        let mut r = Request::new("Bash", &json!({"command": "npm test"}));
        r.lasting = serde_json::from_value(lasting).unwrap();
        r
    }

    #[test]
    fn a_rule_claude_code_suggests_is_offered_as_it_is() {
        // Seen with Claude Code 2.1.332, its terminal's "Yes, and don't ask
        // again for: npm test *".
        let s = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                       "behavior": "allow", "destination": "localSettings"});
        let got = offered(&request(json!([s])));
        assert_eq!(got.len(), 1);
        let o = &got[0].offer;
        assert_eq!(o.label, "Allow, and don't ask again for Bash(npm test *)");
        assert_eq!(
            (o.rule.as_deref(), o.scope),
            (Some("Bash(npm test *)"), Some(Scope::ProjectLocal))
        );
        assert!(
            o.lasting
                && o.id
                    .strip_prefix("keep-")
                    .is_some_and(crate::afar::is_digest)
        );
        assert_eq!(got[0].suggestion, s, "applied as given");
        // The same suggestion, its keys in another order, is the same choice.
        let same = json!({"destination": "localSettings", "behavior": "allow",
                          "rules": [{"ruleContent": "npm test *", "toolName": "Bash"}], "type": "addRules"});
        assert_eq!(id_of(&same), o.id);
        let wider = json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
                           "behavior": "allow", "destination": "localSettings"});
        assert_ne!(id_of(&wider), o.id, "another rule, another id");
        assert_eq!(find(&request(json!([s])), &o.id).unwrap().suggestion, s);
        assert!(find(&request(json!([s])), &id_of(&wider)).is_none());
    }

    #[test]
    fn a_mode_switch_and_what_comes_with_it_are_never_offered() {
        // Claude Code 2.1.332 on a Write outside the project, in its default
        // mode: one option of its dialog switches to accept-edits and adds
        // the folder.
        let write = json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"},
                           {"type": "addDirectories", "directories": ["/var/tmp"], "destination": "session"}]);
        assert!(offered(&request(write)).is_empty());
        // Alone (in accept-edits mode), the folder's access is offered.
        // Nor anything else beside a mode switch.
        let with_rule = json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"},
                               {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}]);
        assert!(offered(&request(with_rule)).is_empty());
        let folder = json!([{"type": "addDirectories", "directories": ["/var/tmp"], "destination": "session"}]);
        let got = offered(&request(folder));
        assert_eq!(
            got[0].offer.label,
            "Allow, and always allow access to /var/tmp"
        );
        assert_eq!(got[0].offer.scope, Some(Scope::Session));
        for never in [
            json!({"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "deny", "destination": "session"}),
            json!({"type": "removeRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}),
            json!({"type": "addRules", "rules": [], "behavior": "allow", "destination": "session"}),
            json!({"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "policySettings"}),
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": 3}], "behavior": "allow", "destination": "session"}),
            json!("acceptForSession"), // not a Codex request
        ] {
            assert!(offered(&request(json!([never]))).is_empty(), "{never}");
        }
    }

    #[test]
    fn a_rule_in_a_settings_file_comes_out_exactly_as_it_went_in() {
        let s = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                       "behavior": "allow", "destination": "localSettings"});
        let w = written(&s).unwrap();
        assert_eq!(
            (w.scope, w.list.as_str(), w.entries.clone()),
            (
                Scope::ProjectLocal,
                "allow",
                vec!["Bash(npm test *)".to_owned()]
            )
        );
        let settings = json!({"permissions": {"allow": ["Bash(ls)", "Bash(npm test *)"], "deny": ["Bash(npm test *)"]},
                              "model": "x"});
        let (out, removed) = without(&settings, &w).unwrap();
        assert_eq!(
            out,
            json!({"permissions": {"allow": ["Bash(ls)"], "deny": ["Bash(npm test *)"]}, "model": "x"})
        );
        assert_eq!(removed, vec!["Bash(npm test *)".to_owned()]);
        // Changed by hand: left alone.
        let changed = json!({"permissions": {"allow": ["Bash(npm test)"]}});
        assert!(without(&changed, &w).is_none());
        assert!(without(&json!({}), &w).is_none());
        // A session's rule is written nowhere.
        let session = json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
                             "behavior": "allow", "destination": "session"});
        assert!(written(&session).is_none());
        let dirs = json!({"type": "addDirectories", "directories": ["/srv/data"], "destination": "userSettings"});
        assert_eq!(written(&dirs).unwrap().list, "additionalDirectories");
    }

    #[test]
    fn codex_offers_its_own_policy_amendment() {
        // Codex 0.171.0's command approval, as its app-server sent it.
        let params = json!({"threadId": "t", "command": "/bin/bash -lc 'rm -rf /w/x'", "cwd": "/w",
            "proposedExecpolicyAmendment": ["rm", "-rf", "/w/x"],
            "availableDecisions": ["accept", {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x"]}}, "cancel"]});
        let asked = crate::classify::codex_app::asked(
            crate::classify::codex_app::COMMAND_APPROVAL,
            &params,
            None,
        )
        .unwrap();
        let got = offered(&asked.request);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].offer.label,
            "Allow, and don't ask again for commands that start with rm -rf /w/x"
        );
        assert_eq!(got[0].offer.scope, Some(Scope::CodexRules));
        assert_eq!(shell_word("push origin"), "'push origin'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        let keep = crate::afar::AnswerBody::Decision {
            decision: crate::afar::Verdict::Lasting(got[0].offer.id.clone()),
            message: None,
        };
        assert_eq!(
            crate::classify::codex_app::response(
                crate::classify::codex_app::COMMAND_APPROVAL,
                &params,
                &keep
            )
            .unwrap(),
            json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x"]}}}),
            "sent back as Codex offered it"
        );
        let other = crate::afar::AnswerBody::Decision {
            decision: crate::afar::Verdict::Lasting(id_of(&json!("acceptForSession"))),
            message: None,
        };
        assert_eq!(
            crate::classify::codex_app::response(
                crate::classify::codex_app::COMMAND_APPROVAL,
                &params,
                &other
            ),
            None,
            "not offered by this request"
        );
    }

    #[test]
    fn a_codex_rule_comes_out_of_its_rules_file_as_it_went_in() {
        let s = json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x \"y\""]}});
        let w = written(&s).unwrap();
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
        let (out, removed) = without_lines(&text, &w).unwrap();
        assert_eq!(out, "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n");
        assert_eq!(removed, w.entries);
        assert!(without_lines(&out, &w).is_none(), "gone: left alone");
    }

    #[test]
    fn codex_s_accept_for_session_is_not_offered() {
        let mut r = Request::new(
            crate::classify::codex_app::COMMAND_TOOL,
            &json!({"command": "npm test", "cwd": "/w"}),
        );
        r.lasting = vec![json!("acceptForSession")];
        assert!(offered(&r).is_empty());
    }

    #[test]
    fn opencode_offers_its_own_always_patterns_and_nothing_made_up() {
        let input = json!({"id": "per_1", "permission": "bash", "patterns": ["git push origin main"],
                           "always": ["git push *"], "metadata": {"command": "git push origin main"}});
        let r = Request::new("opencode.permission", &input);
        let got = offered(&r);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].offer.label,
            "Allow, and don't ask again for bash: git push *"
        );
        assert_eq!(got[0].offer.scope, Some(Scope::UntilQuit));
        assert_eq!(
            got[0].suggestion,
            json!({"reply": "always", "patterns": ["git push *"]})
        );
        // One made up beside it is not OpenCode's own: never offered.
        let mut forged = r.clone();
        forged.lasting = vec![json!({"reply": "always", "patterns": ["*"]})];
        assert_eq!(offered(&forged).len(), 1);
        let none = Request::new(
            "opencode.permission",
            &json!({"permission": "bash", "always": []}),
        );
        assert!(offered(&none).is_empty());
    }

    #[test]
    fn a_rule_is_shown_with_its_invisible_characters_written_out() {
        let s = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test\u{202E} *"}],
                       "behavior": "allow", "destination": "session"});
        let o = &offered(&request(json!([s])))[0].offer;
        assert!(!o.label.contains('\u{202E}'), "{}", o.label);
    }
}
