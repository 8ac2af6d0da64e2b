//! `needs-you deploy`: the prebuilt Worker that the npm package ships (its
//! bundle, page and migrations) put on the person's Cloudflare account with
//! wrangler (`cloud`), served on this machine to try it first
//! (`local`), or checked without deploying anything (`--dry-run`). No
//! Rust and no clone: wrangler comes from npm at the version the bundle was
//! tested with, fetched on demand by npx, never installed on every agent's
//! machine.
//!
//! The bundle is where the npm launcher says (`NEEDS_YOU_WORKER_DIR`); each
//! run works on a private copy of it (its configuration gets the database's
//! id, a local run its secrets), removed at the end.
//!
//! * `bundle`: the prebuilt Worker as the npm package ships it, and the private copy each run works on.
//! * `cloud`: `deploy` and `deploy --dry-run`, on the account wrangler is logged in to.
//! * `local`: `deploy --local`, the same bundle under `wrangler dev` on 127.0.0.1.
//! * `secrets`: the Worker's secrets, made here and handed to wrangler on its standard input.
//! * `wrangler`: running the pinned wrangler, from the copy npm takes as its project.

mod bundle;
mod cloud;
mod local;
mod secrets;
mod wrangler;

use crate::fail::Result;

pub use bundle::Bundle;

/// What `deploy` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Deploy (or upgrade) on the account wrangler is logged in to.
    Cloud { contact: Option<String> },
    /// Bundle it as a deploy would, and deploy nothing.
    DryRun,
    /// Serve it on 127.0.0.1:`port`, with a fresh local D1.
    Local { port: u16 },
}

pub fn deploy(mode: Mode) -> Result<i32> {
    let bundle = Bundle::find()?;
    let work = bundle.copy()?;
    wrangler::own_project(work.path())?;
    let wrangler = wrangler::Wrangler::new(&bundle, work.path());
    match mode {
        Mode::DryRun => cloud::dry_run(&bundle, &work, &wrangler),
        Mode::Cloud { contact } => cloud::deploy(&bundle, &work, &wrangler, contact.as_deref()),
        Mode::Local { port } => local::serve(&work, &wrangler, port),
    }
}
