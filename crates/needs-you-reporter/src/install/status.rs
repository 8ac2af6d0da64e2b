//! Whether needs-you reports for a CLI on this machine, and through what:
//! the one answer that `report-prompt doctor` and `needs-you run` give.

use std::path::{Path, PathBuf};

use needs_you_core::Cli;

use super::files::read_json;
use super::hooks_json;
pub use super::reports::Status;
use crate::clis;

/// What of ours a CLI loads when it is not the marketplace's plugin: hooks
/// in its settings, or a plugin of ours.
pub fn loads(cli: Cli) -> &'static str {
    if cli.describe().hooks.is_empty() {
        "plugin"
    } else {
        "hooks"
    }
}

/// The settings files holding our hooks for `cli`, of those it reads.
pub fn settings_with_ours(cli: Cli) -> Vec<PathBuf> {
    clis::of(cli)
        .settings_paths()
        .into_iter()
        .filter(|p| hooks_in(p, cli))
        .collect()
}

fn hooks_in(path: &Path, cli: Cli) -> bool {
    read_json(path)
        .ok()
        .is_some_and(|(_, v)| hooks_json::has_ours(&v, cli))
}

/// How `cli` reports here.
pub fn status(cli: Cli) -> Status {
    clis::of(cli)
        .plugin_file_status()
        .unwrap_or_else(|| hooks_status(cli))
}

/// Claude Code, Codex, Copilot and Gemini CLI: the marketplace's plugin
/// (Claude Code's and Codex's) or our extension (Gemini CLI's), or our hooks
/// in their settings; both at once report every event twice.
fn hooks_status(cli: Cli) -> Status {
    let settings = !settings_with_ours(cli).is_empty();
    let integration = clis::of(cli);
    match (integration.plugin_enabled(), settings) {
        (true, true) => Status::Twice {
            what: format!(
                "{cli}: both the needs-you plugin and hooks in its settings are installed"
            ),
            fix: format!("report-prompt uninstall --cli {cli} (the plugin stays)"),
        },
        (true, false) => Status::Plugin {
            name: integration.plugin_named(),
        },
        (false, true) => Status::Installed {
            place: hooks_place(cli),
        },
        (false, false) => Status::Missing {
            place: hooks_place(cli),
        },
    }
}

/// Where `cli`'s hooks are installed, as a person reads it.
fn hooks_place(cli: Cli) -> String {
    let paths: Vec<String> = clis::of(cli)
        .settings_paths()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    paths.join(" or ")
}
