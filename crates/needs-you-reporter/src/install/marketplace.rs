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
//! says which of the two is active, and whether the CLI's copy of the
//! plugin lacks hooks (each CLI's module in `clis` says whether its plugin
//! is enabled, and where that copy is).

use needs_you_core::classify::hooks;
use needs_you_core::Cli;
use serde_json::{json, Value};

use super::hooks_json::{self, Runs, LAUNCHER};
use crate::clis;

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
        "name": "needs-you",
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
    }));
    let mut out = Vec::new();
    for integration in clis::ALL {
        let Some(p) = integration.plugin() else {
            continue;
        };
        let cli = integration.cli();
        let dir = p.folder;
        let manifest = if p.extension { &extension } else { &plugin };
        out.push((format!("{dir}/{}", p.manifest), manifest.clone()));
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
}
