//! Whether needs-you reports for a CLI on this machine, and through what:
//! the one answer that `report-prompt doctor` and `needs-you run` give.

use std::path::{Path, PathBuf};

use needs_you_core::Cli;

use super::{hooks_json, marketplace, plugins, read_json, settings_paths};

/// How a CLI reports, as it loads our part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Through the needs-you plugin from its marketplace, or OpenCode's
    /// package: `name` says which.
    Plugin { name: String },
    /// Through our hooks in its settings, or our plugin file: `place`.
    Installed { place: String },
    /// Two ways at once, so every event is reported twice: `what`, and the
    /// command that leaves one.
    Twice { what: String, fix: String },
    /// Installed in `place` but not enabled there (Hermes's
    /// `plugins.enabled`): it reports nothing.
    Disabled { place: String },
    /// Not installed; `place` is where it would be.
    Missing { place: String },
}

impl Status {
    /// Whether its events reach the Worker at all.
    pub fn reports(&self) -> bool {
        matches!(
            self,
            Status::Plugin { .. } | Status::Installed { .. } | Status::Twice { .. }
        )
    }
}

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
    settings_paths(cli)
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
    match cli {
        Cli::Opencode => opencode_status(),
        Cli::Hermes => hermes_status(),
        // Every other CLI takes our hooks.
        _ => hooks_status(cli),
    }
}

/// Claude Code, Codex, Copilot and Gemini CLI: the marketplace's plugin
/// (Claude Code's and Codex's) or our extension (Gemini CLI's), or our hooks
/// in their settings; both at once report every event twice.
fn hooks_status(cli: Cli) -> Status {
    let settings = !settings_with_ours(cli).is_empty();
    match (marketplace::plugin_enabled(cli), settings) {
        (true, true) => Status::Twice {
            what: format!(
                "{cli}: both the needs-you plugin and hooks in its settings are installed"
            ),
            fix: format!("report-prompt uninstall --cli {cli} (the plugin stays)"),
        },
        (true, false) => Status::Plugin {
            name: match cli {
                Cli::Gemini => format!(
                    "the needs-you extension ({})",
                    marketplace::gemini_extension_dir().display()
                ),
                _ => format!("the needs-you plugin ({})", marketplace::PLUGIN_ID),
            },
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
    let paths: Vec<String> = settings_paths(cli)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    paths.join(" or ")
}

/// OpenCode: our package in its configuration, or our plugin file; both at
/// once report every event twice.
fn opencode_status() -> Status {
    let file = plugins::opencode_plugin_path();
    let place = file.display().to_string();
    match (plugins::opencode_package_entry(), file.exists()) {
        (Some(entry), true) => Status::Twice {
            what: format!(
                "opencode loads the needs-you package ({entry}) and the plugin file {place}"
            ),
            fix: "report-prompt uninstall --cli opencode (the package stays)".into(),
        },
        (Some(entry), false) => Status::Plugin {
            name: format!("the needs-you package ({entry})"),
        },
        (None, true) => Status::Installed { place },
        (None, false) => Status::Missing { place },
    }
}

/// Hermes: our plugin in its home, and named in its `plugins.enabled`.
fn hermes_status() -> Status {
    let home = plugins::hermes_home();
    let place = home.display().to_string();
    match plugins::hermes_enabled(&home) {
        (true, true) => Status::Installed { place },
        (true, false) => Status::Disabled { place },
        _ => Status::Missing { place },
    }
}
