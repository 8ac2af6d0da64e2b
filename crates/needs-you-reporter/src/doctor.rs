//! `report-prompt doctor`: checks the whole set-up and says how to fix what is
//! wrong. It is for a person, so it prints on stdout; it exits 1 when
//! something needs fixing.

use std::path::PathBuf;

use needs_you_core::api::TaskIdentity;
use needs_you_core::Cli;

use crate::client::{Client, FailureKind};
use crate::clis::{self, Finding};
use crate::install::{self, Status};
use crate::send::Target;
use crate::state::{self, StateDir};

/// What the checks found, printed as they go.
struct Checklist {
    problems: usize,
}

impl Checklist {
    fn ok(&self, what: &str) {
        println!("ok    {what}");
    }
    fn bad(&mut self, what: &str, fix: &str) {
        self.problems += 1;
        println!("FAIL  {what}\n      fix: {fix}");
    }
    fn note(&self, what: &str) {
        println!("--    {what}");
    }
}

pub fn run(state_dir: Option<PathBuf>) -> i32 {
    let mut r = Checklist { problems: 0 };
    check_reporter(&mut r);
    check_server(&mut r);
    check_sealing(&mut r);
    check_state(&mut r, state_dir);
    check_hooks(&mut r);
    if r.problems == 0 {
        println!("\nall good");
        0
    } else {
        println!("\n{} problem(s)", r.problems);
        1
    }
}

/// Where report-prompt is: this binary (what the installers write into the
/// hooks), and the one our plugins' hooks run ([`crate::REPORTER_VAR`],
/// else the PATH's), which costs a Node start per event when it is npm's
/// launcher.
fn check_reporter(r: &mut Checklist) {
    if let Ok(me) = install::own_path() {
        r.ok(&format!("report-prompt: {me}"));
    }
    let named = std::env::var_os(crate::REPORTER_VAR).filter(|v| !v.is_empty());
    let (found, how) = match &named {
        Some(p) => (Some(PathBuf::from(p)), crate::REPORTER_VAR),
        None => (
            crate::program::find_program(std::ffi::OsStr::new("report-prompt")),
            "the PATH",
        ),
    };
    match found {
        None => r.note("the plugins' hooks find no report-prompt on the PATH: `needs-you run` hands them this one"),
        Some(p) if is_node_launcher(&p) => r.note(&format!(
            "the plugins' hooks would run npm's launcher {} (from {how}), a Node start at every event; `needs-you run` hands them the native one",
            p.display()
        )),
        Some(p) => r.ok(&format!("the plugins' hooks run {} (from {how})", p.display())),
    }
}

/// Whether `path` is a script run by Node (npm's launchers are).
fn is_node_launcher(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    head.starts_with("#!") && head.lines().next().is_some_and(|l| l.contains("node"))
}

fn check_server(r: &mut Checklist) {
    // A person's own terminal, outside any task: nothing is wrong with it.
    let unset = |k| std::env::var_os(k).is_none_or(|v| v.is_empty());
    if unset("NEEDS_YOU_URL") && unset("NEEDS_YOU_TOKEN") {
        r.note(
            "not inside a task: `needs-you run -- AGENT` gives an agent NEEDS_YOU_URL and \
             NEEDS_YOU_TOKEN; to check the server as an agent sees it: \
             `needs-you run -- report-prompt doctor`",
        );
        return;
    }
    let target = match Target::from_env() {
        Ok(t) => t,
        Err(e) => {
            r.bad(
                &e.to_string(),
                "start the agent with `needs-you run -- AGENT`, which sets both; to check them as the \
                 agent will see them: `needs-you run -- report-prompt doctor`",
            );
            return;
        }
    };
    r.ok(&format!("NEEDS_YOU_URL is {}", target.base));
    if !target.token.starts_with("nyt_") {
        r.bad(
            "NEEDS_YOU_TOKEN is not a task credential (nyt_…)",
            "start the agent with `needs-you run -- AGENT`, which creates a task and sets its credential",
        );
    }
    let client = match Client::new(&target.base, Some(&target.token)) {
        Ok(c) => c,
        Err(e) => return r.bad(&e.to_string(), "check NEEDS_YOU_URL"),
    };
    match client.get::<serde_json::Value>("/v1/health") {
        Ok(_) => r.ok("the server answers /v1/health"),
        Err(f) if f.kind == FailureKind::Unreachable => {
            r.bad(
                &format!("the server is unreachable: {}", f.message),
                "check NEEDS_YOU_URL and the network",
            );
            return;
        }
        Err(f) => r.bad(
            &format!("/v1/health answered HTTP {}", f.status.unwrap_or(0)),
            "check NEEDS_YOU_URL",
        ),
    }
    match client.get::<TaskIdentity>("/v1/task") {
        Ok(TaskIdentity { name, .. }) => {
            r.ok(&format!("the credential belongs to task {name:?}"));
        }
        Err(f) if f.kind == FailureKind::Unreachable => r.bad(
            &format!("GET /v1/task failed: {}", f.message),
            "check the network",
        ),
        Err(f) => r.bad(
            &format!(
                "the credential was refused (HTTP {}): {}",
                f.status.unwrap_or(0),
                f.message
            ),
            "the task was revoked or expired: start the agent again with `needs-you run -- AGENT` \
             (check with `needs-you run -- report-prompt doctor`)",
        ),
    }
}

/// Whether a task's questions leave this machine sealed, kept back, or
/// readable: the content key `needs-you run` names, as the sender reads it.
fn check_sealing(r: &mut Checklist) {
    if std::env::var_os("NEEDS_YOU_URL").is_none_or(|v| v.is_empty()) {
        return;
    }
    // As the sender seals.
    match crate::send::sealed_report::sealer() {
        Ok(Some((key, _))) => r.ok(&format!(
            "questions leave this machine sealed, under content key version {}",
            key.version
        )),
        Ok(None) => r.note(
            "no content key: questions reach the server readable; log this machine in with the \
             line `needs-you pair` prints on the owner's machine to seal them",
        ),
        Err(e) => r.bad(
            &format!("{e}, so questions are kept back rather than sent readable"),
            "log this machine in again with the line `needs-you pair` prints on the owner's \
             machine, then start the agent again",
        ),
    }
}

fn check_state(r: &mut Checklist, state_dir: Option<PathBuf>) {
    let path = state::resolve(state_dir);
    match StateDir::open(path.clone()) {
        Ok(dir) => {
            r.ok(&format!("state directory {} is private", path.display()));
            let open = dir.open_sessions().unwrap_or(0);
            r.note(&format!(
                "{open} session(s) with an open question; marker {}",
                if dir.marker().exists() {
                    "present"
                } else {
                    "absent"
                }
            ));
            if let Ok(log) = std::fs::read_to_string(dir.path().join(state::LOG)) {
                if let Some(last) = log.lines().last() {
                    r.note(&format!("last delivery failure: {last}"));
                }
            }
        }
        Err(e) => r.bad(
            &format!("state directory: {e}"),
            "remove it, or set NEEDS_YOU_STATE_DIR to a folder of yours",
        ),
    }
}

/// The hooks that `install` adds for `cli` and that its settings files
/// holding ours lack.
fn lacking_hooks(cli: Cli) -> Vec<String> {
    let ours = install::status::settings_with_ours(cli)
        .into_iter()
        .filter_map(|p| install::read_json(&p).ok())
        .map(|(_, v)| v);
    lacking_in(ours, cli)
}

/// The hooks that `cli`'s installed plugin lacks: the plugin's folder is a
/// copy the CLI made at install time, which a newer report-prompt does not
/// change.
fn lacking_plugin_hooks(cli: Cli) -> Vec<String> {
    let files = clis::of(cli)
        .installed_plugin_hooks()
        .into_iter()
        .filter_map(|f| match install::read_json(&f) {
            Ok((Some(_), v)) => Some(v),
            // Gone or unreadable: nothing to say about its hooks.
            _ => None,
        });
    lacking_in(files, cli)
}

/// The hooks of `cli` that any of these hooks files lacks, each named once
/// (both Codex files, or two plugin installs, may lack the same).
fn lacking_in(files: impl Iterator<Item = serde_json::Value>, cli: Cli) -> Vec<String> {
    let mut all = Vec::new();
    for v in files {
        for m in install::hooks_json::missing(&v, needs_you_core::classify::hooks(cli), cli) {
            if !all.contains(&m) {
                all.push(m);
            }
        }
    }
    all
}

/// Fails `whose` hooks for lacking `lacking` (why: `older`), if any.
fn fail_lacking(r: &mut Checklist, lacking: &[String], whose: &str, older: &str, fix: &str) {
    if !lacking.is_empty() {
        r.bad(
            &format!(
                "{whose} lack {} ({older}): those events report nothing",
                lacking.join(", ")
            ),
            fix,
        );
    }
}

/// What `cli`'s module finds in its settings beyond our hooks.
fn check_findings(r: &mut Checklist, cli: Cli) {
    for finding in clis::of(cli).findings() {
        match finding {
            Finding::Ok(what) => r.ok(&what),
            Finding::Bad(what, fix) => r.bad(&what, &fix),
            Finding::Note(what) => r.note(&what),
        }
    }
}

/// Every CLI's hooks or plugin ([`install::status()`]); none installed at all
/// is a problem: nothing would ever report.
fn check_hooks(r: &mut Checklist) {
    let mut installed = 0;
    for &cli in Cli::ALL {
        let loads = install::status::loads(cli);
        let status = install::status(cli);
        if status.reports() {
            check_findings(r, cli);
        }
        match status {
            Status::Twice { what, fix } => {
                r.bad(&format!("{what}: every event is reported twice"), &fix)
            }
            Status::Plugin { name } => {
                installed += 1;
                r.ok(&format!("{cli} reports through {name}"));
                fail_lacking(
                    r,
                    &lacking_plugin_hooks(cli),
                    &format!("{cli}: the needs-you plugin's hooks"),
                    "an older version of the plugin",
                    clis::of(cli).plugin().map_or("", |p| p.update),
                );
            }
            Status::Installed { place } => {
                installed += 1;
                r.ok(&format!("{cli} {loads} installed in {place}"));
                fail_lacking(
                    r,
                    &lacking_hooks(cli),
                    &format!("{cli} hooks"),
                    "installed by an older report-prompt",
                    &format!("report-prompt install --cli {cli} again"),
                );
            }
            Status::Disabled { place } => r.note(&format!(
                "{cli} {loads} installed in {place} but not enabled there (report-prompt install --cli {cli})"
            )),
            Status::Missing { place } => r.note(&format!(
                "{cli} {loads} not installed in {place} (report-prompt install --cli {cli})"
            )),
        }
    }
    if installed == 0 {
        r.bad(
            "no hooks or plugin is installed for any CLI: nothing will ever report",
            &format!("report-prompt install --cli {}", other_clis()),
        );
    }
}

/// "claude-code (or codex, opencode, …)": every CLI, from the one list.
fn other_clis() -> String {
    let names: Vec<&str> = Cli::ALL.iter().map(|c| c.as_str()).collect();
    format!("{} (or {})", names[0], names[1..].join(", "))
}
