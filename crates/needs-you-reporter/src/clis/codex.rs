//! Codex on this machine: our hooks in its managed or per-user hooks file,
//! or our plugin from this repository's marketplace; and which of its
//! events are this hook's to report, beside the app-server client that
//! `needs-you run` starts ([`crate::afar::codex_client`]).

use std::path::{Path, PathBuf};

use needs_you_core::lasting::Scope;
use needs_you_core::Cli;
use serde_json::Value;

use super::integration::{home, var_dir, Integration, Plugin, PLUGIN_ID};
use crate::error::Error;
use crate::install::files::NewFile;

pub struct Codex;

/// Set in the app-server's environment by `needs-you run`: its
/// `PermissionRequest` hooks leave the person's own approvals to the
/// app-server client ([`crate::afar::codex_client`]), which lists them answerable.
pub const BRIDGED: &str = "NEEDS_YOU_CODEX_APP";

/// Whether this hook runs inside a server that the client follows.
pub fn bridged() -> bool {
    std::env::var_os(BRIDGED).is_some_and(|v| v == "1")
}

/// Codex's managed hooks: trusted by policy, so no review prompt in Codex.
pub const CODEX_MANAGED_HOOKS: &str = "/etc/codex/hooks.json";

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home() -> PathBuf {
    var_dir("CODEX_HOME").unwrap_or_else(|| home().join(".codex"))
}

const PLUGIN: Plugin = Plugin {
    folder: "plugins/codex",
    manifest: ".codex-plugin/plugin.json",
    extension: false,
    remove: "codex plugin remove needs-you@needs-you",
    update: "codex plugin marketplace upgrade needs-you (a Git marketplace), then codex plugin add needs-you@needs-you",
};

impl Integration for Codex {
    fn cli(&self) -> Cli {
        Cli::Codex
    }

    fn config_dir(&self) -> Option<PathBuf> {
        Some(codex_home())
    }

    /// Its exec-policy rules, which every new session reads.
    fn rule_file(&self, scope: Scope, _cwd: &Path, config: &Path) -> Option<PathBuf> {
        (scope == Scope::CodexRules).then(|| config.join("rules/default.rules"))
    }

    /// Its managed hooks first, then its per-user `hooks.json`.
    fn settings_paths(&self) -> Vec<PathBuf> {
        vec![
            PathBuf::from(CODEX_MANAGED_HOOKS),
            codex_home().join("hooks.json"),
        ]
    }

    /// Its managed hooks are read by every user's Codex.
    fn new_settings_file(&self, path: &Path) -> NewFile {
        if path == Path::new(CODEX_MANAGED_HOOKS) {
            NewFile::Shared
        } else {
            NewFile::Private
        }
    }

    fn after_install(&self, path: &Path) -> Option<&'static str> {
        (path != Path::new(CODEX_MANAGED_HOOKS)).then_some(
            "Codex runs hooks outside /etc/codex only after you trust them: open Codex and run /hooks.",
        )
    }

    fn plugin(&self) -> Option<&'static Plugin> {
        Some(&PLUGIN)
    }

    /// The `[plugins."needs-you@needs-you"]` table that `codex plugin add`
    /// writes into its `config.toml`, with `enabled = true`.
    fn plugin_enabled(&self) -> bool {
        std::fs::read_to_string(codex_home().join("config.toml"))
            .is_ok_and(|t| toml_plugin_enabled(&t))
    }

    /// Codex keeps one folder per plugin, `plugins/cache/<marketplace>/
    /// <plugin>/<version>`, and replaces it on update.
    fn installed_plugin_hooks(&self) -> Vec<PathBuf> {
        // Marketplace, then plugin: both `needs-you` (PLUGIN_ID).
        let versions = codex_home().join("plugins/cache/needs-you/needs-you");
        let mut files: Vec<PathBuf> = std::fs::read_dir(versions)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path().join("hooks").join("hooks.json"))
            .collect();
        files.sort();
        files
    }

    /// A Codex approval that the app-server client lists is not this
    /// hook's; and one in Codex's shared background server must not be
    /// reported (its credential is another terminal's).
    fn reported_here(&self, event: &Value, agent: Option<&str>) -> Result<bool, Error> {
        if left_to_the_client(event, agent) {
            return Ok(false);
        }
        if crate::hook::parent::under_shared_codex_server() {
            return Err(Error::Setup(
                "Codex ran this hook in its shared background server, whose credential is \
                 another terminal's: start Codex with `codex --no-daemon`"
                    .into(),
            ));
        }
        Ok(true)
    }

    /// In a server that `needs-you run` follows, the client sends a reply's
    /// answer to the thread as the person's next message.
    fn replies_as_messages(&self) -> bool {
        bridged()
    }
}

/// Whether this is an approval of the person's own Codex thread in a server
/// that `needs-you run` follows ([`crate::afar::codex_client`]): that client lists it,
/// with the request, so that it can be answered from afar; a second report
/// here would only make it another card. A subagent's is reported here.
fn left_to_the_client(event: &Value, agent: Option<&str>) -> bool {
    agent.is_none()
        && event.get("hook_event_name").and_then(Value::as_str) == Some("PermissionRequest")
        && bridged()
}

/// Reads only what `codex plugin add` writes: the table's header and its
/// `enabled` key, up to the next table. A full TOML parser for one boolean
/// would be most of this binary's size again.
fn toml_plugin_enabled(text: &str) -> bool {
    let header = format!("[plugins.\"{PLUGIN_ID}\"]");
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
        } else if inside {
            if let Some((key, value)) = line.split_once('=') {
                if key.trim() == "enabled" {
                    return value.split('#').next().map(str::trim) == Some("true");
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_config_is_read_for_our_table_only() {
        let on = "model = \"x\"\n[marketplaces.needs-you]\nsource = \"/r\"\n\n[plugins.\"needs-you@needs-you\"]\nenabled = true # on\n";
        assert!(toml_plugin_enabled(on));
        assert!(!toml_plugin_enabled(
            &on.replace("enabled = true", "enabled = false")
        ));
        assert!(!toml_plugin_enabled(
            "[plugins.\"other@x\"]\nenabled = true\n[plugins.\"needs-you@needs-you\"]\n"
        ));
        assert!(!toml_plugin_enabled(""));
    }
}
