//! The prebuilt Worker as the npm package ships it: `wrangler.toml` (no
//! build step, no database id), `build/` (the bundle), `public/` (the page),
//! `migrations/`, and `deploy.json` (its version and the wrangler it was
//! tested with).

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::fail::{exit, Fail, Result};

/// Where the npm launcher says the bundle is.
pub const DIR_VAR: &str = "NEEDS_YOU_WORKER_DIR";

#[derive(Debug, Clone, Deserialize)]
struct Manifest {
    version: String,
    wrangler: String,
}

/// The bundle found, and what its manifest says.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub dir: PathBuf,
    /// The Worker's version (the crates').
    pub version: String,
    /// The wrangler version the bundle was tested with.
    pub wrangler: String,
}

impl Bundle {
    pub fn find() -> Result<Bundle> {
        let dir = std::env::var_os(DIR_VAR)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| {
                Fail::new(
                    exit::USAGE,
                    "the prebuilt Worker comes with the npm package (npm i -g needs-you); \
                     from a clone of the repository, bash scripts/deploy.sh deploys it",
                )
            })?;
        let manifest = dir.join("deploy.json");
        let text = fs::read_to_string(&manifest).map_err(|e| {
            Fail::new(
                exit::USAGE,
                format!("{} is no Worker bundle ({e})", dir.display()),
            )
        })?;
        let m: Manifest = serde_json::from_str(&text)
            .map_err(|e| Fail::new(exit::USAGE, format!("{}: {e}", manifest.display())))?;
        Ok(Bundle {
            dir,
            version: m.version,
            wrangler: m.wrangler,
        })
    }

    /// A private copy to work on (0700), removed when dropped.
    pub fn copy(&self) -> Result<Work> {
        let work = Work::new()?;
        copy_dir(&self.dir, work.path()).map_err(|e| {
            Fail::new(
                exit::REFUSED,
                format!("cannot copy {}: {e}", self.dir.display()),
            )
        })?;
        Ok(work)
    }
}

/// A private folder of this run's, removed when dropped.
pub struct Work {
    path: PathBuf,
}

impl Work {
    fn new() -> Result<Work> {
        use std::os::unix::fs::DirBuilderExt;
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
        let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = std::env::temp_dir().join(format!("needs-you-deploy-{name}"));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| {
                Fail::new(
                    exit::REFUSED,
                    format!("cannot create {}: {e}", path.display()),
                )
            })?;
        Ok(Work { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The configuration wrangler reads.
    pub fn config(&self) -> PathBuf {
        self.path.join("wrangler.toml")
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Copies the bundle's tree; every folder of the copy is this user's alone.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    needs_you_reporter::install::files::create_folders(to, 0o700)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
