//! Claude Code on this machine: our hooks in its user settings, or our
//! plugin from this repository's marketplace, the plan its plan approval
//! leaves out of the event, and how its waiting hook hands an answer over.

use std::io::Write;
use std::path::{Path, PathBuf};

use needs_you_core::afar::AnswerBody;
use needs_you_core::classify::{claude_code_hook_output, Takeable};
use needs_you_core::lasting::Scope;
use needs_you_core::Cli;
use serde_json::Value;

use super::integration::{home, var_dir, Integration, Plugin, PLUGIN_ID};
use crate::afar::taker::{Closing, Taker};
use crate::error::Error;
use crate::install::files::read_json;

pub struct ClaudeCode;

/// Claude Code's own folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn config_dir() -> PathBuf {
    var_dir("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home().join(".claude"))
}

/// Claude Code's user-level settings: `settings.json` in its own folder.
pub fn claude_settings_path() -> PathBuf {
    config_dir().join("settings.json")
}

const PLUGIN: Plugin = Plugin {
    folder: "plugins/claude-code",
    manifest: ".claude-plugin/plugin.json",
    extension: false,
    remove: "claude plugin uninstall needs-you@needs-you",
    update:
        "claude plugin marketplace update needs-you, then claude plugin update needs-you@needs-you",
};

impl Integration for ClaudeCode {
    fn cli(&self) -> Cli {
        Cli::ClaudeCode
    }

    fn config_dir(&self) -> Option<PathBuf> {
        Some(config_dir())
    }

    /// Its settings files: the project's own or shared ones, or the
    /// person's.
    fn rule_file(&self, scope: Scope, cwd: &Path, config: &Path) -> Option<PathBuf> {
        match scope {
            Scope::ProjectLocal => Some(cwd.join(".claude/settings.local.json")),
            Scope::Project => Some(cwd.join(".claude/settings.json")),
            Scope::User => Some(config.join("settings.json")),
            _ => None,
        }
    }

    fn settings_paths(&self) -> Vec<PathBuf> {
        vec![claude_settings_path()]
    }

    fn plugin(&self) -> Option<&'static Plugin> {
        Some(&PLUGIN)
    }

    /// Its user settings' `enabledPlugins`, which `claude plugin install`
    /// and `enable` set.
    fn plugin_enabled(&self) -> bool {
        read_json(&claude_settings_path())
            .ok()
            .is_some_and(|(_, v)| v["enabledPlugins"][PLUGIN_ID] == Value::Bool(true))
    }

    /// Claude Code names the folder of each install in
    /// `plugins/installed_plugins.json` (an update leaves the older
    /// version's folder beside the new one, so the folders alone do not say
    /// which is used).
    fn installed_plugin_hooks(&self) -> Vec<PathBuf> {
        let settings = claude_settings_path();
        let Some(config) = settings.parent() else {
            return Vec::new();
        };
        let Ok((_, v)) = read_json(&config.join("plugins").join("installed_plugins.json")) else {
            return Vec::new();
        };
        v["plugins"][PLUGIN_ID]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|install| install["installPath"].as_str())
            .map(|root| PathBuf::from(root).join("hooks").join("hooks.json"))
            .collect()
    }

    fn with_more(&self, event: &Value, text: String) -> String {
        crate::hook::plan::with_plan(event, text)
    }

    fn waiting_hook_taker<'a>(&self, event: &'a Value) -> Option<Box<dyn Taker + 'a>> {
        Some(Box::new(ClaudeCodeHook { event }))
    }
}

/// Claude Code's part of the road: its hook's decision, printed.
struct ClaudeCodeHook<'a> {
    event: &'a Value,
}

impl Taker for ClaudeCodeHook<'_> {
    fn translate(&self, answer: &AnswerBody, takeable: Option<&Takeable>) -> Option<Value> {
        let takeable = takeable?;
        Some(claude_code_hook_output(
            answer,
            &takeable.request,
            &takeable.questions,
        ))
        .filter(|o| !o.is_null())
    }

    /// Claude Code keeps a project's settings in the folder it was started
    /// in, which the hook's `cwd` leaves after a `cd`.
    fn project(&self) -> Option<PathBuf> {
        std::env::var_os("CLAUDE_PROJECT_DIR")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                self.event
                    .get("cwd")
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
            })
    }

    fn hand_over(&mut self, form: Value) -> Result<bool, Error> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{form}")
            .and_then(|()| out.flush())
            .map(|()| true)
            .map_err(|e| Error::Agent(format!("cannot print the hook's decision: {e}")))
    }

    fn closing(&self) -> Closing {
        Closing::Here {
            cli: Cli::ClaudeCode,
            opened: None,
        }
    }
}
