//! Our Claude Code and Codex plugins and our Gemini CLI extension: installed
//! with each CLI's own command (the plugins from this repository's
//! marketplace files, `.claude-plugin/` and `.agents/plugins/` at its root;
//! the extension by `gemini extensions install` from its folder), they give
//! the same hooks `report-prompt install` writes, from `plugins/claude-code/`,
//! `plugins/codex/` and `plugins/gemini/`.
//!
//! Those folders are made here ([`files`]), from the same hook table and
//! command builder as the installer, and a test fails when the committed
//! files drift from it (`NEEDS_YOU_WRITE_PLUGINS=1 cargo test -p
//! needs-you-reporter plugin_files` writes them again). Their hooks run
//! [`LAUNCHER`], which starts the `report-prompt` on the PATH, or says on
//! stderr what to install and lets the agent go on.
//!
//! A hook installed twice reports every event twice, so the installer
//! refuses to add settings hooks beside an enabled plugin, and `doctor`
//! says which of the two is active ([`claude_plugin_enabled`],
//! [`codex_plugin_enabled`]), and whether the CLI's copy of the plugin lacks
//! hooks ([`installed_hooks_files`]).

use std::path::PathBuf;

use needs_you_core::classify::hooks;
use needs_you_core::Cli;
use serde_json::{json, Value};

use super::hooks_json::{self, Runs, LAUNCHER};
use super::{claude_settings_path, gemini_dir, home, read_json};

/// The plugin's id in both CLIs: plugin `needs-you` of marketplace `needs-you`.
pub const PLUGIN_ID: &str = "needs-you@needs-you";

/// The launcher: `sh` runs it, so it needs no executable bit after a copy.
const LAUNCHER_TEXT: &str = r#"# needs-you's hook launcher, made by report-prompt's installer (install/marketplace.rs).
# Runs report-prompt ($NEEDS_YOU_REPORTER, else the one on the PATH) with the
# hook's arguments. Without one it says what to install, on stderr, which the
# agent does not show, reads the event and lets the agent go on.
reporter=${NEEDS_YOU_REPORTER:-report-prompt}
if command -v "$reporter" >/dev/null 2>&1; then
  exec "$reporter" "$@"
fi
echo "needs-you: report-prompt is not installed: cargo install needs-you" >&2
cat >/dev/null
exit 0
"#;

const DESCRIPTION: &str =
    "Tells your phone when this agent waits for you: reports its questions and permission dialogs to your needs-you server.";

/// The folder of `cli`'s plugin in the repository.
pub fn folder(cli: Cli) -> &'static str {
    match cli {
        Cli::Codex => "plugins/codex",
        Cli::Gemini => "plugins/gemini",
        _ => "plugins/claude-code",
    }
}

/// Gemini CLI's name for our extension, and its folder's under
/// `~/.gemini/extensions` once `gemini extensions install` copied it.
pub const GEMINI_EXTENSION: &str = "needs-you";

/// `cli`'s plugin `hooks/hooks.json`: the installer's hooks, run through the launcher.
pub fn plugin_hooks(cli: Cli) -> Value {
    let mut v = json!({});
    hooks_json::add_for(&mut v, hooks(cli), cli, Runs::PluginLauncher, None)
        .expect("an empty object takes every hook");
    v
}

/// Every file of the plugin and extension folders, as (path in the
/// repository, text).
pub fn files() -> Vec<(String, String)> {
    // Claude Code's and Codex's plugins share one manifest; Gemini CLI's
    // names its own few fields.
    let plugin = pretty(&json!({
        "name": "needs-you",
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "author": {"name": "needs-you"},
        "license": "MIT",
    }));
    let extension = pretty(&json!({
        "name": GEMINI_EXTENSION,
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
    }));
    let mut out = Vec::new();
    for (cli, manifest_path, manifest) in [
        (Cli::ClaudeCode, ".claude-plugin/plugin.json", &plugin),
        (Cli::Codex, ".codex-plugin/plugin.json", &plugin),
        (Cli::Gemini, "gemini-extension.json", &extension),
    ] {
        let dir = folder(cli);
        out.push((format!("{dir}/{manifest_path}"), manifest.clone()));
        out.push((
            format!("{dir}/hooks/hooks.json"),
            pretty(&plugin_hooks(cli)),
        ));
        out.push((format!("{dir}/{LAUNCHER}"), LAUNCHER_TEXT.to_owned()));
    }
    out
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values serialize") + "\n"
}

/// Whether Claude Code has our plugin enabled: its user settings'
/// `enabledPlugins`, which `claude plugin install` and `enable` set.
pub fn claude_plugin_enabled() -> bool {
    read_json(&claude_settings_path())
        .ok()
        .is_some_and(|(_, v)| v["enabledPlugins"][PLUGIN_ID] == Value::Bool(true))
}

/// Codex's `config.toml`: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
pub fn codex_config_path() -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(h) => PathBuf::from(h).join("config.toml"),
        None => home().join(".codex").join("config.toml"),
    }
}

/// Whether Codex has our plugin enabled: the `[plugins."needs-you@needs-you"]`
/// table that `codex plugin add` writes, with `enabled = true`.
pub fn codex_plugin_enabled() -> bool {
    std::fs::read_to_string(codex_config_path()).is_ok_and(|t| toml_plugin_enabled(&t))
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

/// The hooks files of `cli`'s installed plugin, as the CLI copied them:
/// Claude Code names the folder of each install in
/// `plugins/installed_plugins.json` (an update leaves the older version's
/// folder beside the new one, so the folders alone do not say which is
/// used); Codex keeps one folder per plugin, `plugins/cache/<marketplace>/
/// <plugin>/<version>`, and replaces it on update.
pub fn installed_hooks_files(cli: Cli) -> Vec<PathBuf> {
    let hooks_in = |root: PathBuf| root.join("hooks").join("hooks.json");
    match cli {
        Cli::ClaudeCode => {
            let settings = claude_settings_path();
            let Some(config) = settings.parent() else {
                return Vec::new();
            };
            let Ok((_, v)) = read_json(&config.join("plugins").join("installed_plugins.json"))
            else {
                return Vec::new();
            };
            v["plugins"][PLUGIN_ID]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|install| install["installPath"].as_str())
                .map(|root| hooks_in(PathBuf::from(root)))
                .collect()
        }
        Cli::Codex => {
            let Some(config) = codex_config_path().parent().map(PathBuf::from) else {
                return Vec::new();
            };
            // Marketplace, then plugin: both `needs-you` (PLUGIN_ID).
            let versions = config.join("plugins/cache/needs-you/needs-you");
            let mut files: Vec<PathBuf> = std::fs::read_dir(versions)
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .map(|e| hooks_in(e.path()))
                .collect();
            files.sort();
            files
        }
        Cli::Gemini => {
            let file = hooks_in(gemini_extension_dir());
            if file.exists() {
                vec![file]
            } else {
                Vec::new()
            }
        }
        Cli::Opencode | Cli::Hermes | Cli::Copilot => Vec::new(),
    }
}

/// Where `gemini extensions install` puts our extension.
pub fn gemini_extension_dir() -> PathBuf {
    gemini_dir().join("extensions").join(GEMINI_EXTENSION)
}

/// Whether `cli`'s plugin is enabled (false for the CLIs without one).
pub fn plugin_enabled(cli: Cli) -> bool {
    match cli {
        Cli::ClaudeCode => claude_plugin_enabled(),
        Cli::Codex => codex_plugin_enabled(),
        // Installed is loaded: `gemini extensions disable` is the person's
        // own word, kept in a file of Gemini CLI's that is not read here.
        Cli::Gemini => gemini_extension_dir()
            .join("gemini-extension.json")
            .exists(),
        Cli::Opencode | Cli::Hermes | Cli::Copilot => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn plugin_files_are_what_the_installer_makes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        // From a packaged crate, the repository is not there to compare with.
        if !root.join(".claude-plugin").exists() {
            return;
        }
        let write = std::env::var_os("NEEDS_YOU_WRITE_PLUGINS").is_some();
        for (path, text) in files() {
            let at = root.join(&path);
            if write {
                std::fs::create_dir_all(at.parent().unwrap()).unwrap();
                std::fs::write(&at, &text).unwrap();
            }
            let committed = std::fs::read_to_string(&at).unwrap_or_default();
            assert!(
                committed == text,
                "{path} drifted from install/marketplace.rs: NEEDS_YOU_WRITE_PLUGINS=1 cargo test -p needs-you-reporter plugin_files"
            );
        }
    }

    #[test]
    fn plugin_hooks_run_the_launcher_behind_the_same_guard() {
        let v = plugin_hooks(Cli::ClaudeCode);
        let stop = v["hooks"]["Stop"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert_eq!(
            stop,
            "sh \"$CLAUDE_PLUGIN_ROOT/bin/needs-you-hook\" --cli claude-code"
        );
        let waits = &v["hooks"]["PermissionRequest"][0]["hooks"][0];
        assert_eq!(waits["timeout"], hooks_json::WAITING_TIMEOUT_S);
        let guarded = v["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(
            guarded.contains("if [ -e \"${NEEDS_YOU_STATE_DIR:-$default_dir}/open\" ]"),
            "{guarded}"
        );
        let codex = plugin_hooks(Cli::Codex);
        assert!(codex["hooks"]["Stop"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("--cli codex"));
        assert_eq!(codex["hooks"]["Stop"][0]["hooks"][0]["timeout"], 3);
    }

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
