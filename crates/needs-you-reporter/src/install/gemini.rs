//! What Gemini CLI's settings need besides our hooks. With its
//! `security.environmentVariableRedaction` on, it drops from its hooks'
//! environment every variable whose name says `TOKEN`, ours too, and
//! nothing would report; a name in `allowed` is kept. So the installer
//! names our credential's variable there (its name only: the credential
//! stays in the environment), and takes the name away on uninstall.

use serde_json::{Map, Value};

use crate::send::TOKEN_VAR;

/// Adds [`TOKEN_VAR`] to the kept variables; what changed, for the person.
pub fn keep_credential(settings: &mut Value) -> Result<Vec<String>, String> {
    let allowed = allowed_list(settings)?;
    if allowed.iter().any(|v| v.as_str() == Some(TOKEN_VAR)) {
        return Ok(Vec::new());
    }
    allowed.push(Value::String(TOKEN_VAR.into()));
    Ok(vec![format!(
        "keep {TOKEN_VAR} in the hooks' environment (security.environmentVariableRedaction.allowed)"
    )])
}

/// Takes [`TOKEN_VAR`] out of the kept variables.
pub fn forget_credential(settings: &mut Value) -> Vec<String> {
    let Some(allowed) = settings
        .pointer_mut("/security/environmentVariableRedaction/allowed")
        .and_then(Value::as_array_mut)
    else {
        return Vec::new();
    };
    let before = allowed.len();
    allowed.retain(|v| v.as_str() != Some(TOKEN_VAR));
    if allowed.len() == before {
        return Vec::new();
    }
    vec![format!(
        "stop keeping {TOKEN_VAR} (security.environmentVariableRedaction.allowed)"
    )]
}

/// Whether Gemini CLI with these settings drops our credential from its
/// hooks' environment: redaction on and our variable's name not kept. (Run
/// by GitHub Actions, `GITHUB_SHA` set, it keeps only the names allowed,
/// whatever the settings say; nobody answers such a run.)
pub fn credential_redacted(settings: &Value) -> bool {
    let redaction = settings.pointer("/security/environmentVariableRedaction");
    let on = redaction
        .and_then(|r| r.get("enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let kept = redaction
        .and_then(|r| r.get("allowed"))
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(TOKEN_VAR)));
    on && !kept
}

fn allowed_list(settings: &mut Value) -> Result<&mut Vec<Value>, String> {
    let mut at = settings;
    for key in ["security", "environmentVariableRedaction"] {
        at = at
            .as_object_mut()
            .ok_or("the settings file is not a JSON object; nothing was changed")?
            .entry(key)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    at.as_object_mut()
        .ok_or("`security.environmentVariableRedaction` is not an object; nothing was changed")?
        .entry("allowed")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| {
            "`security.environmentVariableRedaction.allowed` is not a list; nothing was changed"
                .into()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_credential_s_name_is_kept_once_beside_the_person_s_own_and_taken_back() {
        let mut v = json!({"security": {"environmentVariableRedaction": {"enabled": true, "allowed": ["MY_KEY"]}}});
        assert_eq!(keep_credential(&mut v).unwrap().len(), 1);
        assert!(keep_credential(&mut v).unwrap().is_empty());
        assert_eq!(
            v["security"]["environmentVariableRedaction"]["allowed"],
            json!(["MY_KEY", TOKEN_VAR])
        );
        assert_eq!(forget_credential(&mut v).len(), 1);
        assert_eq!(
            v["security"]["environmentVariableRedaction"]["allowed"],
            json!(["MY_KEY"])
        );
        assert!(forget_credential(&mut v).is_empty());
        let mut fresh = json!({});
        keep_credential(&mut fresh).unwrap();
        assert_eq!(
            fresh,
            json!({"security": {"environmentVariableRedaction": {"allowed": [TOKEN_VAR]}}})
        );
        assert!(keep_credential(&mut json!({"security": []})).is_err());
    }

    #[test]
    fn the_credential_is_dropped_only_under_redaction_without_its_name() {
        let on = json!({"security": {"environmentVariableRedaction": {"enabled": true}}});
        assert!(credential_redacted(&on));
        let mut kept = on.clone();
        keep_credential(&mut kept).unwrap();
        assert!(!credential_redacted(&kept));
        assert!(!credential_redacted(&json!({})));
        let off = json!({"security": {"environmentVariableRedaction": {"enabled": false}}});
        assert!(!credential_redacted(&off));
    }
}
