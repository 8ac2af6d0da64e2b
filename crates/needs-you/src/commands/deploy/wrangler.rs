//! Running wrangler: the program `NEEDS_YOU_WRANGLER` names (for those who
//! have one), else `npx --yes wrangler@VERSION`, the version the bundle was
//! tested with, which npm fetches once into its cache. It runs in this run's
//! copy of the bundle, where it finds `wrangler.toml`.
//!
//! That copy is a private folder under the temporary one, which every user
//! of the machine may write. npx takes the nearest folder above it that
//! holds a `package.json` or a `node_modules` for the project, and runs a
//! `node_modules/wrangler` of the pinned version it finds there: one planted
//! in `/tmp` would run as the person, with the secrets `deploy` hands it.
//! So the copy gets a `package.json` of its own ([`own_project`]): npm's
//! project is then that folder, which nobody else can write, and the pinned
//! wrangler comes from npm's own cache or the registry, never from a walk up.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::bundle::Bundle;
use crate::fail::{exit, Fail, Result};

/// Names a wrangler program to run instead of npx's.
pub const PROGRAM_VAR: &str = "NEEDS_YOU_WRANGLER";

pub struct Wrangler {
    program: Vec<OsString>,
    cwd: PathBuf,
}

/// Makes `dir` a project of its own for npm: a `package.json` that names no
/// dependency, so that npx looks no higher for one.
pub fn own_project(dir: &Path) -> Result<()> {
    let path = dir.join("package.json");
    std::fs::write(
        &path,
        "{\"name\": \"needs-you-deploy\", \"private\": true}\n",
    )
    .map_err(|e| {
        Fail::new(
            exit::REFUSED,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}

impl Wrangler {
    /// The wrangler to run in `cwd`, which [`own_project`] has made npm's
    /// project.
    pub fn new(bundle: &Bundle, cwd: &Path) -> Wrangler {
        let program = match std::env::var_os(PROGRAM_VAR).filter(|p| !p.is_empty()) {
            Some(p) => vec![p],
            None => ["npx", "--yes", &format!("wrangler@{}", bundle.wrangler)]
                .map(OsString::from)
                .to_vec(),
        };
        Wrangler {
            program,
            cwd: cwd.to_owned(),
        }
    }

    fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(&self.program[0]);
        cmd.args(&self.program[1..])
            .args(args)
            .current_dir(&self.cwd)
            // A run driven by needs-you sends wrangler's usage reports
            // nowhere, and asks no questions of a person it cannot see.
            .env("WRANGLER_SEND_METRICS", "false")
            .env("WRANGLER_SEND_ERROR_REPORTS", "false");
        cmd
    }

    /// What it printed on its standard output, when it succeeded; else the
    /// last line it printed on its standard error, in a failure.
    pub fn output<S: AsRef<std::ffi::OsStr>>(
        &self,
        args: &[S],
        stdin: Option<&str>,
    ) -> Result<String> {
        let mut cmd = self.command(args);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = self.start(cmd)?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let _ = pipe.write_all(text.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|e| Fail::new(exit::REFUSED, format!("wrangler: {e}")))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            return Ok(stdout);
        }
        let said = String::from_utf8_lossy(&out.stderr);
        let last = said
            .lines()
            .chain(stdout.lines())
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("no word of why");
        let what: Vec<String> = args
            .iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect();
        Err(Fail::new(
            exit::REFUSED,
            format!("wrangler {} failed: {last}", what.join(" ")),
        ))
    }

    /// Runs it on this terminal (`wrangler login`, which opens a browser).
    pub fn interactive(&self, args: &[&str]) -> Result<()> {
        let status = self
            .start(self.command(args))?
            .wait()
            .map_err(|e| Fail::new(exit::REFUSED, format!("wrangler: {e}")))?;
        if status.success() {
            Ok(())
        } else {
            Err(Fail::new(
                exit::REFUSED,
                format!("wrangler {} failed", args.join(" ")),
            ))
        }
    }

    /// Starts it in a process group of its own, its output into `log`: the
    /// caller ends the group.
    pub fn spawn<S: AsRef<std::ffi::OsStr>>(&self, args: &[S], log: File) -> Result<Child> {
        use std::os::unix::process::CommandExt;
        let err = log
            .try_clone()
            .map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .process_group(0);
        self.start(cmd)
    }

    fn start(&self, mut cmd: Command) -> Result<Child> {
        cmd.spawn().map_err(|e| {
            let program = self.program[0].to_string_lossy();
            Fail::new(
                exit::NOT_FOUND,
                if e.kind() == std::io::ErrorKind::NotFound {
                    format!("{program} is not installed: deploy runs wrangler with npx, which comes with Node.js")
                } else {
                    format!("cannot run {program}: {e}")
                },
            )
        })
    }
}
