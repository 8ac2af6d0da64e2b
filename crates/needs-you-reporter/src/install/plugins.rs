//! Installing our OpenCode and Hermes plugins where each CLI loads them.
//!
//! * OpenCode: `needs-you.js` in `$XDG_CONFIG_HOME/opencode/plugins/` (default
//!   `~/.config/opencode/plugins/`), which OpenCode loads at start.
//! * Hermes: the `needs-you` folder in `$HERMES_HOME/plugins/` (default
//!   `~/.hermes/plugins/`), and `needs-you` added to `plugins.enabled` in
//!   `$HERMES_HOME/config.yaml`: Hermes loads only the plugins listed there.
//!
//! The plugin files are built into this binary, with report-prompt's own
//! absolute path written in, so the plugin finds it without a PATH. They are
//! copies, inside this crate so that it builds from its own `.crate`, of the
//! repository's `plugins/` (what OpenCode's and Hermes's own installers
//! take); a test fails when the two drift (`NEEDS_YOU_WRITE_PLUGINS=1 cargo
//! test -p needs-you-reporter plugin_files` copies them again).

use std::fs;
use std::path::{Path, PathBuf};

use needs_you_core::Cli;

use super::{enabled_list, home, report_changes, write_with_backup, NewFile};
use crate::args::InstallOptions;

/// Each embedded file: its path in `plugins/` (here and in the repository), and its text.
const EMBEDDED: [(&str, &str); 3] = [
    (
        "opencode/needs-you.js",
        include_str!("../../plugins/opencode/needs-you.js"),
    ),
    (
        "hermes/needs-you/plugin.yaml",
        include_str!("../../plugins/hermes/needs-you/plugin.yaml"),
    ),
    (
        "hermes/needs-you/__init__.py",
        include_str!("../../plugins/hermes/needs-you/__init__.py"),
    ),
];
const OPENCODE_PLUGIN: &str = EMBEDDED[0].1;
const HERMES_MANIFEST: &str = EMBEDDED[1].1;
const HERMES_MODULE: &str = EMBEDDED[2].1;
const NAME: &str = "needs-you";

pub fn run(opts: &InstallOptions) -> Result<(), String> {
    let exe = super::own_path()?;
    match opts.cli {
        Cli::Opencode => opencode(opts, &exe),
        _ => hermes(opts, &exe),
    }
}

/// A file to write, with what it should hold.
struct Planned {
    path: PathBuf,
    content: String,
}

/// Writes (or, for uninstall, removes) `files`; returns the change lines.
fn apply_files(files: &[Planned], opts: &InstallOptions) -> Result<Vec<String>, String> {
    let mut changes = Vec::new();
    for f in files {
        let current = fs::read_to_string(&f.path).ok();
        if opts.uninstall {
            if current.is_some() {
                changes.push(format!("remove {}", f.path.display()));
                if !opts.dry_run {
                    fs::remove_file(&f.path)
                        .map_err(|e| format!("cannot remove {}: {e}", f.path.display()))?;
                }
            }
            continue;
        }
        if current.as_deref() == Some(f.content.as_str()) {
            continue;
        }
        changes.push(format!(
            "{} {}",
            if current.is_some() { "update" } else { "add" },
            f.path.display()
        ));
        if !opts.dry_run {
            write_with_backup(&f.path, current.as_deref(), &f.content, NewFile::Private)?;
        }
    }
    Ok(changes)
}

fn with_reporter(source: &str, exe: &str, literal: impl Fn(&str) -> String) -> String {
    source.replacen(&literal("report-prompt"), &literal(exe), 1)
}

/// Where OpenCode loads our plugin from, by default.
pub fn opencode_plugin_path() -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home().join(".config"), PathBuf::from);
    config.join("opencode/plugins/needs-you.js")
}

/// The entry of OpenCode's own config (`opencode.json`, the `plugin` list)
/// that loads our npm package, `opencode-needs-you` (or this repository's
/// `plugins/opencode` folder, as `opencode plugin PATH` adds it): beside
/// `opencode_plugin_path()` it would load twice and report every event twice.
pub fn opencode_package_entry() -> Option<String> {
    let config = opencode_plugin_path()
        .parent()?
        .parent()?
        .join("opencode.json");
    let text = fs::read_to_string(config).ok()?;
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

/// Hermes's home folder: `$HERMES_HOME`, else `~/.hermes`.
pub fn hermes_home() -> PathBuf {
    std::env::var_os("HERMES_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home().join(".hermes"), PathBuf::from)
}

/// Whether our Hermes plugin is installed and listed in `plugins.enabled`.
pub fn hermes_enabled(hermes_home: &Path) -> (bool, bool) {
    let installed = hermes_home
        .join("plugins")
        .join(NAME)
        .join("__init__.py")
        .exists();
    let enabled = fs::read_to_string(hermes_home.join("config.yaml")).is_ok_and(|t| {
        matches!(enabled_list::add(&t, NAME), Ok(None)) && !enabled_list::is_disabled(&t, NAME)
    });
    (installed, enabled)
}

fn opencode(opts: &InstallOptions, exe: &str) -> Result<(), String> {
    if let (false, Some(entry)) = (opts.uninstall, opencode_package_entry()) {
        return Err(format!(
            "OpenCode loads the needs-you package already ({entry:?} in opencode.json), which \
             reports every event; a plugin file beside it would report each twice. Nothing was changed"
        ));
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

fn hermes(opts: &InstallOptions, exe: &str) -> Result<(), String> {
    // --path names the Hermes home folder for this CLI.
    let hermes_home = opts.path.clone().unwrap_or_else(hermes_home);
    let dir = hermes_home.join("plugins").join(NAME);
    let module = with_reporter(HERMES_MODULE, exe, |p| {
        format!(
            "DEFAULT_REPORTER = {}",
            serde_json::to_string(p).expect("a string serializes")
        )
    });
    let files = [
        Planned {
            path: dir.join("plugin.yaml"),
            content: HERMES_MANIFEST.to_owned(),
        },
        Planned {
            path: dir.join("__init__.py"),
            content: module,
        },
    ];
    let mut changes = apply_files(&files, opts)?;
    if opts.uninstall && !opts.dry_run && dir.exists() {
        // Only our files were in it (and Python's cache); leave anything else.
        let _ = fs::remove_dir_all(dir.join("__pycache__"));
        let _ = fs::remove_dir(&dir);
    }
    let config = hermes_home.join("config.yaml");
    changes.extend(enable(&config, opts)?);
    report_changes(&hermes_home, &changes, opts.dry_run);
    if !opts.uninstall
        && fs::read_to_string(&config).is_ok_and(|t| enabled_list::is_disabled(&t, NAME))
    {
        println!(
            "Note: {NAME} is listed in plugins.disabled in {}, which wins; remove it there.",
            config.display()
        );
    }
    Ok(())
}

fn enable(config: &Path, opts: &InstallOptions) -> Result<Vec<String>, String> {
    let current = match fs::read_to_string(config) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", config.display())),
    };
    let text = current.clone().unwrap_or_default();
    let updated = if opts.uninstall {
        enabled_list::remove(&text, NAME)
    } else {
        enabled_list::add(&text, NAME)
    }
    .map_err(|e| format!("{}: {e}; nothing was changed there", config.display()))?;
    let Some(updated) = updated else {
        return Ok(Vec::new());
    };
    let verb = if opts.uninstall { "remove" } else { "add" };
    if !opts.dry_run {
        write_with_backup(config, current.as_deref(), &updated, NewFile::Private)?;
    }
    Ok(vec![format!(
        "{verb} {NAME} in plugins.enabled of {}",
        config.display()
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_files_embedded_are_the_repositorys() {
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let repo = crate_dir.join("../../plugins");
        // From a packaged crate, the repository is not there to compare with.
        if !repo.exists() {
            return;
        }
        for (path, text) in EMBEDDED {
            let theirs = fs::read_to_string(repo.join(path)).unwrap();
            if std::env::var_os("NEEDS_YOU_WRITE_PLUGINS").is_some() {
                fs::write(crate_dir.join("plugins").join(path), &theirs).unwrap();
            }
            assert!(
                theirs == text,
                "plugins/{path} changed: NEEDS_YOU_WRITE_PLUGINS=1 cargo test -p needs-you-reporter plugin_files, then build again"
            );
        }
    }

    #[test]
    fn the_reporter_path_is_written_into_both_plugins() {
        let js = with_reporter(OPENCODE_PLUGIN, "/opt/bin/report-prompt", |p| {
            format!(
                "const DEFAULT_REPORTER = {};",
                serde_json::to_string(p).unwrap()
            )
        });
        assert!(js.contains(r#"const DEFAULT_REPORTER = "/opt/bin/report-prompt";"#));
        let py = with_reporter(HERMES_MODULE, "/opt/bin/report-prompt", |p| {
            format!("DEFAULT_REPORTER = {}", serde_json::to_string(p).unwrap())
        });
        assert!(py.contains(r#"DEFAULT_REPORTER = "/opt/bin/report-prompt""#));
    }
}
