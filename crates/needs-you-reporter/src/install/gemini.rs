//! What Gemini CLI's settings need besides our hooks: nothing, and one name
//! taken back. With its `security.environmentVariableRedaction` on, Gemini
//! CLI drops every variable whose name says `TOKEN` from its hooks'
//! environment, ours too; the same settings decide what its model's shell
//! commands and its MCP servers get, so naming ours in `allowed` would hand
//! the task credential to every command the model runs. The hooks read it
//! from Gemini CLI's own environment instead
//! (`parent::agent_env_var`), and the installer takes the name out
//! of `allowed`, where earlier versions of it put it.

use serde_json::Value;

use crate::send::TOKEN_VAR;

/// What naming the credential in the kept variables does, for a person.
pub const WIDENS: &str =
    "which hands the task credential to every shell command the model runs and every MCP server";

/// Takes [`TOKEN_VAR`] out of the kept variables; what changed, for the person.
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
        "stop keeping {TOKEN_VAR} in security.environmentVariableRedaction.allowed, {WIDENS}: \
         the hooks read it from Gemini CLI's own environment"
    )]
}

/// Whether Gemini CLI with these settings drops our credential from its
/// hooks' environment: redaction on and our variable's name not kept. (Run
/// by GitHub Actions, `GITHUB_SHA` set, it keeps only the names allowed,
/// whatever the settings say; nobody answers such a run.)
pub fn credential_redacted(settings: &Value) -> bool {
    redaction_on(settings) && !credential_kept(settings)
}

/// Whether redaction is on and keeps our credential's name, handing it to
/// the model's commands and servers as well as to the hooks.
pub fn credential_widened(settings: &Value) -> bool {
    redaction_on(settings) && credential_kept(settings)
}

fn redaction_on(settings: &Value) -> bool {
    settings
        .pointer("/security/environmentVariableRedaction/enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn credential_kept(settings: &Value) -> bool {
    settings
        .pointer("/security/environmentVariableRedaction/allowed")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(TOKEN_VAR)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_credential_s_name_is_taken_back_and_the_person_s_own_stay() {
        let mut v = json!({"security": {"environmentVariableRedaction": {"enabled": true, "allowed": ["MY_KEY", TOKEN_VAR]}}});
        assert!(credential_widened(&v));
        assert_eq!(forget_credential(&mut v).len(), 1);
        assert_eq!(
            v["security"]["environmentVariableRedaction"]["allowed"],
            json!(["MY_KEY"])
        );
        assert!(forget_credential(&mut v).is_empty());
        assert!(!credential_widened(&v));
        assert!(forget_credential(&mut json!({})).is_empty());
        assert!(forget_credential(&mut json!({"security": []})).is_empty());
    }

    #[test]
    fn the_credential_is_dropped_only_under_redaction_without_its_name() {
        let on = json!({"security": {"environmentVariableRedaction": {"enabled": true}}});
        assert!(credential_redacted(&on));
        let kept = json!({"security": {"environmentVariableRedaction": {"enabled": true, "allowed": [TOKEN_VAR]}}});
        assert!(!credential_redacted(&kept));
        assert!(!credential_redacted(&json!({})));
        let off = json!({"security": {"environmentVariableRedaction": {"enabled": false}}});
        assert!(!credential_redacted(&off));
        assert!(!credential_widened(&off));
    }
}
