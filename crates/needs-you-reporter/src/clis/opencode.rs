//! OpenCode on this machine: our plugin file in its plugins folder, or our
//! npm package named in its configuration, never both.

use std::path::PathBuf;

use needs_you_core::Cli;

use super::integration::{home, var_dir, Integration};
use crate::args::InstallOptions;
use crate::error::Error;
use crate::install::files::report_changes;
use crate::install::plugins::{apply_files, with_reporter, Planned, OPENCODE_PLUGIN};
use crate::install::reports::Status;

pub struct Opencode;

/// Where OpenCode loads our plugin from, by default:
/// `$XDG_CONFIG_HOME/opencode/plugins/needs-you.js`.
pub fn opencode_plugin_path() -> PathBuf {
    let config = var_dir("XDG_CONFIG_HOME").unwrap_or_else(|| home().join(".config"));
    config.join("opencode/plugins/needs-you.js")
}

/// The entry of OpenCode's own config (`opencode.json`, the `plugin` list)
/// that loads our npm package, `opencode-needs-you` (or this repository's
/// `plugins/opencode` folder, as `opencode plugin PATH` adds it): beside
/// `opencode_plugin_path()` it would load twice and report every event twice.
fn package_entry() -> Option<String> {
    let config = opencode_plugin_path()
        .parent()?
        .parent()?
        .join("opencode.json");
    let text = std::fs::read_to_string(config).ok()?;
    let root: serde_json::Value = serde_json::from_str(&text).ok()?;
    root.get("plugin")?
        .as_array()?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .find(|p| is_our_package(p))
        .map(str::to_owned)
}

/// `opencode-needs-you`, at any version, or a path to its folder.
fn is_our_package(entry: &str) -> bool {
    let name = entry
        .strip_prefix("opencode-needs-you")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('@'));
    let folder = entry.trim_end_matches('/').ends_with("plugins/opencode");
    name || folder
}

impl Integration for Opencode {
    fn cli(&self) -> Cli {
        Cli::Opencode
    }

    /// Our package in its configuration, or our plugin file; both at once
    /// report every event twice.
    fn plugin_file_status(&self) -> Option<Status> {
        let file = opencode_plugin_path();
        let place = file.display().to_string();
        Some(match (package_entry(), file.exists()) {
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
        })
    }

    fn install_plugin_files(&self, opts: &InstallOptions, exe: &str) -> Result<(), Error> {
        if let (false, Some(entry)) = (opts.uninstall, package_entry()) {
            return Err(Error::Settings(format!(
                "OpenCode loads the needs-you package already ({entry:?} in opencode.json), which \
                 reports every event; a plugin file beside it would report each twice. Nothing was changed"
            )));
        }
        let path = opts.path.clone().unwrap_or_else(opencode_plugin_path);
        let content = with_reporter(OPENCODE_PLUGIN, exe, |p| {
            format!(
                "const DEFAULT_REPORTER = {};",
                serde_json::to_string(p).expect("a string serializes")
            )
        });
        let changes = apply_files(
            &[Planned {
                path: path.clone(),
                content,
            }],
            opts,
        )?;
        report_changes(&path, &changes, opts.dry_run);
        if !changes.is_empty() && !opts.dry_run && !opts.uninstall {
            println!("Restart OpenCode to load the plugin.");
        }
        Ok(())
    }
}
