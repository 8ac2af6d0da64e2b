//! Claude Code's lasting choices: its `permission_suggestions`, `addRules`
//! that allow and `addDirectories`, kept in the session or in one of its
//! settings files, and taken back out of that file's JSON.

use serde_json::Value;

use super::offer::{str_at, strings_at, Lasting, Offer, Scope, TakenOut, Written};
use crate::request::Request;

/// The choices `request`'s suggestions offer, in their order, each `None`
/// that is not as narrow as Claude Code's own dialog.
pub(super) fn suggested(request: &Request) -> Vec<Option<Lasting>> {
    // Claude Code offers a mode switch together with other changes in one
    // option of its dialog (a folder's access, seen with 2.1.332): which of
    // them go with it is not in the payload, so none is offered.
    if request
        .lasting
        .iter()
        .any(|s| str_at(s, "type") == Some("setMode"))
    {
        return Vec::new();
    }
    request.lasting.iter().map(lasting).collect()
}

/// One suggestion as a choice, with what it writes into its settings file.
fn lasting(s: &Value) -> Option<Lasting> {
    let scope = match str_at(s, "destination")? {
        "session" => Scope::Session,
        "localSettings" => Scope::ProjectLocal,
        "projectSettings" => Scope::Project,
        "userSettings" => Scope::User,
        _ => return None,
    };
    let (rule, label, list, entries) = match str_at(s, "type")? {
        "addRules" if str_at(s, "behavior") == Some("allow") => {
            let rules = rules(s)?;
            let rule = rules.join(", ");
            let label = format!("Allow, and don't ask again for {rule}");
            (rule, label, "allow", rules)
        }
        "addDirectories" => {
            let dirs = strings_at(s, "directories")?;
            let rule = format!("access to {}", dirs.join(", "));
            let label = format!("Allow, and always allow {rule}");
            (rule, label, "additionalDirectories", dirs)
        }
        _ => return None,
    };
    let written = scope.written().then(|| Written {
        scope,
        list: list.to_owned(),
        entries,
    });
    Some(Lasting {
        offer: Offer::lasting(s, &label, &rule, scope),
        suggestion: s.clone(),
        written,
    })
}

/// An `addRules` suggestion's rules as Claude Code writes them in its
/// settings: `Tool` or `Tool(content)`.
fn rules(s: &Value) -> Option<Vec<String>> {
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

/// `written` taken out of a settings file's `text`.
pub(super) fn take_out(text: &str, written: &Written) -> TakenOut {
    let settings = match text.trim() {
        "" => Value::Object(Default::default()),
        t => match serde_json::from_str::<Value>(t) {
            Ok(v) => v,
            Err(e) => return TakenOut::Unreadable(format!("is not JSON ({e})")),
        },
    };
    match without(&settings, written) {
        None => TakenOut::Gone,
        Some((out, _)) => TakenOut::Removed {
            text: serde_json::to_string_pretty(&out).unwrap_or_default() + "\n",
            note: None,
        },
    }
}

/// What taking `written` back out of `settings` does: the settings without
/// its entries, and which entries were there; `None` when none of them is
/// there any more as written. Nothing else changes, an entry the person
/// added again by hand included, when it is one of ours (the same text is
/// the same rule).
fn without(settings: &Value, written: &Written) -> Option<(Value, Vec<String>)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lasting::{find, id_of, offered};
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
            // Codex's amendment, on a Claude Code tool: not Claude Code's.
            json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["ls"]}}),
        ] {
            assert!(offered(&request(json!([never]))).is_empty(), "{never}");
        }
    }

    #[test]
    fn a_rule_in_a_settings_file_comes_out_exactly_as_it_went_in() {
        let s = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                       "behavior": "allow", "destination": "localSettings"});
        let w = lasting(&s).unwrap().written.unwrap();
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
        match take_out(&settings.to_string(), &w) {
            TakenOut::Removed { text, note: None } => {
                assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), out)
            }
            other => panic!("{other:?}"),
        }
        // Changed by hand: left alone.
        let changed = json!({"permissions": {"allow": ["Bash(npm test)"]}});
        assert!(without(&changed, &w).is_none());
        assert_eq!(take_out(&changed.to_string(), &w), TakenOut::Gone);
        assert_eq!(take_out("", &w), TakenOut::Gone);
        assert!(
            matches!(take_out("{", &w), TakenOut::Unreadable(why) if why.starts_with("is not JSON"))
        );
        // A session's rule is written nowhere.
        let session = json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
                             "behavior": "allow", "destination": "session"});
        assert!(lasting(&session).unwrap().written.is_none());
        let dirs = json!({"type": "addDirectories", "directories": ["/srv/data"], "destination": "userSettings"});
        assert_eq!(
            lasting(&dirs).unwrap().written.unwrap().list,
            "additionalDirectories"
        );
    }

    #[test]
    fn a_rule_is_shown_with_its_invisible_characters_written_out() {
        let s = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test\u{202E} *"}],
                       "behavior": "allow", "destination": "session"});
        let o = &offered(&request(json!([s])))[0].offer;
        assert!(!o.label.contains('\u{202E}'), "{}", o.label);
    }
}
