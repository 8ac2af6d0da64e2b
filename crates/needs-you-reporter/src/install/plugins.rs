//! The plugin files of ours that OpenCode and Hermes load (each CLI's
//! module in `clis` says where), and writing them there.
//!
//! The plugin files are built into this binary, with report-prompt's own
//! absolute path written in, so the plugin finds it without a PATH. They are
//! copies, inside this crate so that it builds from its own `.crate`, of the
//! repository's `plugins/` (what OpenCode's and Hermes's own installers
//! take); a test fails when the two drift (`NEEDS_YOU_WRITE_PLUGINS=1 cargo
//! test -p needs-you-reporter plugin_files` copies them again).

use std::fs;
use std::path::PathBuf;

use super::files::{write_with_backup, NewFile};
use crate::args::InstallOptions;
use crate::error::Error;

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
pub(crate) const OPENCODE_PLUGIN: &str = EMBEDDED[0].1;
pub(crate) const HERMES_MANIFEST: &str = EMBEDDED[1].1;
pub(crate) const HERMES_MODULE: &str = EMBEDDED[2].1;
/// Our plugin's name in Hermes's plugins folder and its `plugins.enabled`.
pub(crate) const NAME: &str = "needs-you";

/// A file to write, with what it should hold.
pub(crate) struct Planned {
    pub path: PathBuf,
    pub content: String,
}

/// Writes (or, for uninstall, removes) `files`; returns the change lines.
pub(crate) fn apply_files(files: &[Planned], opts: &InstallOptions) -> Result<Vec<String>, Error> {
    let mut changes = Vec::new();
    for f in files {
        let current = fs::read_to_string(&f.path).ok();
        if opts.uninstall {
            if current.is_some() {
                changes.push(format!("remove {}", f.path.display()));
                if !opts.dry_run {
                    fs::remove_file(&f.path).map_err(|e| {
                        Error::Settings(format!("cannot remove {}: {e}", f.path.display()))
                    })?;
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

/// A plugin's source with `exe` in place of the `report-prompt` that
/// `literal` writes, so that the plugin finds us without a PATH.
pub(crate) fn with_reporter(source: &str, exe: &str, literal: impl Fn(&str) -> String) -> String {
    source.replacen(&literal("report-prompt"), &literal(exe), 1)
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
