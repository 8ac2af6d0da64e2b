//! Gemini CLI on this machine: our hooks in its settings, or our extension
//! (`gemini extensions install`); and, besides our hooks, one name taken
//! back from its settings. With its `security.environmentVariableRedaction`
//! on, Gemini CLI drops every variable whose name looks like a secret from
//! its hooks' environment, ours too (the credential, the content key's file);
//! the same settings decide what its model's shell commands and its MCP
//! servers get, so naming ours in `allowed` would hand the task credential
//! to every command the model runs. The hooks read every task variable
//! (`crate::TASK_VARS`) from Gemini CLI's own environment instead
//! (`parent::agent_env_vars`),
//! and the installer takes the name out of `allowed`, where earlier
//! versions of it put it.

use std::path::PathBuf;

use needs_you_core::Cli;
use serde_json::Value;

use super::integration::{home, var_dir, Finding, Integration, Plugin};
use crate::install::files::read_json;
use crate::send::TOKEN_VAR;

pub struct Gemini;

/// Gemini CLI's folder: `.gemini` in `$GEMINI_CLI_HOME`, which stands for
/// the home folder, else in the home folder.
pub fn gemini_dir() -> PathBuf {
    var_dir("GEMINI_CLI_HOME")
        .unwrap_or_else(home)
        .join(".gemini")
}

/// Gemini CLI's name for our extension, and its folder's under
/// `~/.gemini/extensions` once `gemini extensions install` copied it.
pub const GEMINI_EXTENSION: &str = "needs-you";

/// Where `gemini extensions install` puts our extension.
fn extension_dir() -> PathBuf {
    gemini_dir().join("extensions").join(GEMINI_EXTENSION)
}

const PLUGIN: Plugin = Plugin {
    folder: "plugins/gemini",
    manifest: "gemini-extension.json",
    extension: true,
    remove: "gemini extensions uninstall needs-you",
    update: "gemini extensions update needs-you",
};

impl Integration for Gemini {
    fn cli(&self) -> Cli {
        Cli::Gemini
    }

    fn settings_paths(&self) -> Vec<PathBuf> {
        vec![gemini_dir().join("settings.json")]
    }

    /// Where the hooks can read the credential from the agent, the name an
    /// earlier installer kept only widens who else gets it.
    fn settings_changes(&self, settings: &mut Value, uninstall: bool) -> Vec<String> {
        if uninstall || crate::hook::parent::agent_env_readable() {
            forget_credential(settings)
        } else {
            Vec::new()
        }
    }

    fn plugin(&self) -> Option<&'static Plugin> {
        Some(&PLUGIN)
    }

    /// Installed is loaded: `gemini extensions disable` is the person's own
    /// word, kept in a file of Gemini CLI's that is not read here.
    fn plugin_enabled(&self) -> bool {
        extension_dir().join("gemini-extension.json").exists()
    }

    fn plugin_named(&self) -> String {
        format!("the needs-you extension ({})", extension_dir().display())
    }

    fn installed_plugin_hooks(&self) -> Vec<PathBuf> {
        let file = extension_dir().join("hooks").join("hooks.json");
        if file.exists() {
            vec![file]
        } else {
            Vec::new()
        }
    }

    /// Gemini CLI drops our credential from its hooks' environment under
    /// its variable redaction; the hooks read it from Gemini CLI's own
    /// where the system shows it, and keeping its name in the redaction's
    /// list would hand it to the model's commands as well.
    fn findings(&self) -> Vec<Finding> {
        let path = gemini_dir().join("settings.json");
        let Ok((_, settings)) = read_json(&path) else {
            return Vec::new();
        };
        let readable = crate::hook::parent::agent_env_readable();
        redaction_finding(&settings, &path.display().to_string(), readable)
            .into_iter()
            .collect()
    }
}

/// What `doctor` says of the redaction in `settings` (the file at `path`),
/// where the system does or does not show the hooks Gemini CLI's own
/// environment (`readable`).
fn redaction_finding(settings: &Value, path: &str, readable: bool) -> Option<Finding> {
    let var = TOKEN_VAR;
    let kept = "security.environmentVariableRedaction.allowed";
    if credential_widened(settings) {
        let what = format!("gemini: {path} keeps {var} in {kept}, {WIDENS}");
        return Some(if readable {
            Finding::Bad(
                what,
                format!("take \"{var}\" out of it (or run `report-prompt install --cli gemini`): the hooks read it from Gemini CLI's own environment"),
            )
        } else {
            Finding::Note(what)
        });
    }
    if !credential_redacted(settings) {
        return None;
    }
    Some(if readable {
        Finding::Ok(format!(
            "gemini: variable redaction is on; the hooks read {var} from Gemini CLI's own environment, and the model's commands do not get it (nor {}, which the hooks seal with)",
            crate::owner::KEYS_VAR
        ))
    } else {
        Finding::Bad(
            format!(
                "gemini: {path} turns environmentVariableRedaction on, which drops {var} from its hooks, and this system does not show them Gemini CLI's own environment: nothing reports"
            ),
            format!("turn the redaction off, or add \"{var}\" to {kept} there, {WIDENS}"),
        )
    })
}

/// What naming the credential in the kept variables does, for a person.
const WIDENS: &str =
    "which hands the task credential to every shell command the model runs and every MCP server";

/// Takes [`TOKEN_VAR`] out of the kept variables; what changed, for the person.
fn forget_credential(settings: &mut Value) -> Vec<String> {
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
fn credential_redacted(settings: &Value) -> bool {
    redaction_on(settings) && !credential_kept(settings)
}

/// Whether redaction is on and keeps our credential's name, handing it to
/// the model's commands and servers as well as to the hooks.
fn credential_widened(settings: &Value) -> bool {
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
