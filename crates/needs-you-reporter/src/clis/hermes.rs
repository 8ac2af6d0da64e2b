//! Hermes on this machine: our plugin folder in its home, and its name in
//! `plugins.enabled` of its `config.yaml`: Hermes loads only the plugins
//! listed there.

use std::fs;
use std::path::{Path, PathBuf};

use needs_you_core::Cli;

use super::integration::{home, var_dir, Integration};
use crate::args::InstallOptions;
use crate::error::Error;
use crate::install::enabled_list;
use crate::install::files::{report_changes, write_with_backup, NewFile};
use crate::install::plugins::{
    apply_files, with_reporter, Planned, HERMES_MANIFEST, HERMES_MODULE, NAME,
};
use crate::install::reports::Status;

pub struct Hermes;

/// Hermes's home folder: `$HERMES_HOME`, else `~/.hermes`.
pub fn hermes_home() -> PathBuf {
    var_dir("HERMES_HOME").unwrap_or_else(|| home().join(".hermes"))
}

/// Whether our Hermes plugin is installed, and listed in `plugins.enabled`.
fn installed_and_enabled(hermes_home: &Path) -> (bool, bool) {
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

impl Integration for Hermes {
    fn cli(&self) -> Cli {
        Cli::Hermes
    }

    fn plugin_file_status(&self) -> Option<Status> {
        let home = hermes_home();
        let place = home.display().to_string();
        Some(match installed_and_enabled(&home) {
            (true, true) => Status::Installed { place },
            (true, false) => Status::Disabled { place },
            _ => Status::Missing { place },
        })
    }

    /// `--path` names the Hermes home folder for this CLI.
    fn install_plugin_files(&self, opts: &InstallOptions, exe: &str) -> Result<(), Error> {
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
}

/// Adds our plugin's name to (or, uninstalling, takes it out of)
/// `plugins.enabled` in `config`; what changed, for the person.
fn enable(config: &Path, opts: &InstallOptions) -> Result<Vec<String>, Error> {
    let current = match fs::read_to_string(config) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Error::Settings(format!(
                "cannot read {}: {e}",
                config.display()
            )))
        }
    };
    let text = current.clone().unwrap_or_default();
    let updated = if opts.uninstall {
        enabled_list::remove(&text, NAME)
    } else {
        enabled_list::add(&text, NAME)
    }
    .map_err(|e| {
        Error::Settings(format!(
            "{}: {e}; nothing was changed there",
            config.display()
        ))
    })?;
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
