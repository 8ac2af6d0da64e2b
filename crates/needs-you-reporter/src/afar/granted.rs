//! The lasting rules this machine wrote for answers from afar, and taking
//! one back.
//!
//! When a waiter hands the agent a lasting choice kept in a file (Claude
//! Code's settings, Codex's rules), it records here which file the rule
//! goes to and what it adds (`$DIR/granted-rules`, one JSON object a line,
//! 0600 in the 0700 state directory). A revocation from the Worker names
//! only the answer that granted the rule: the relay takes back what this
//! file says was written for its task, from where it was written, and only
//! the entries still there as written
//! ([`needs_you_core::lasting::take_out`]); never a rule or a path that the
//! Worker, or anything else that holds the task credential, names. Which
//! file a rule goes to is its CLI's to say
//! ([`crate::clis::Integration::rule_file`]).

use std::path::{Path, PathBuf};

use needs_you_core::lasting::{self, Scope, TakenOut, Written};
use needs_you_core::relay_messages::{RevokeOutcome, Revoked};
use needs_you_core::Cli;
use serde::{Deserialize, Serialize};

use crate::error::Error;

const FILE: &str = "granted-rules";
/// Most rules remembered; past it, the oldest are forgotten (and can then
/// only be removed by hand).
const KEPT: usize = 200;

/// One rule written for an answer from afar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Grant {
    answer_id: String,
    /// The task key of the relay that may take it back.
    task: String,
    file: PathBuf,
    #[serde(flatten)]
    written: Written,
}

/// Where a session's rules go: its project folder, and each CLI's own
/// folder.
pub struct Places {
    pub cwd: PathBuf,
    pub configs: Vec<(Cli, PathBuf)>,
}

impl Places {
    /// For a session in `cwd`, as this process's environment says.
    pub fn here(cwd: &Path) -> Places {
        let configs = crate::clis::ALL
            .iter()
            .filter_map(|i| Some((i.cli(), i.config_dir()?)))
            .collect();
        Places {
            cwd: cwd.to_owned(),
            configs,
        }
    }

    /// The file a rule of `scope` is kept in, as the CLI that keeps it says.
    fn file_for(&self, scope: Scope) -> Option<PathBuf> {
        let cli = scope.cli();
        let (_, config) = self.configs.iter().find(|(c, _)| *c == cli)?;
        crate::clis::of(cli).rule_file(scope, &self.cwd, config)
    }
}

/// The ledger, read and written under its lock: a hook recording and the
/// relay taking back at once never lose each other's line. `change` gets
/// the grants and says whether to write them back.
fn with_ledger<T>(
    dir: &Path,
    change: impl FnOnce(&mut Vec<Grant>) -> (bool, T),
) -> std::io::Result<T> {
    use std::io::{Read, Seek, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(FILE))?;
    f.lock()?;
    let mut text = String::new();
    f.read_to_string(&mut text)?;
    let mut grants: Vec<Grant> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let (write, out) = change(&mut grants);
    if write {
        let keep = &grants[grants.len().saturating_sub(KEPT)..];
        let text: String = keep
            .iter()
            .filter_map(|g| serde_json::to_string(g).ok())
            .map(|l| l + "\n")
            .collect();
        f.set_len(0)?;
        f.rewind()?;
        f.write_all(text.as_bytes())?;
    }
    Ok(out)
}

/// Records what the CLI is about to write for `answer_id`'s lasting choice
/// (`written`, as its CLI's module read it), in the session's `places`;
/// nothing for a rule kept in the agent's memory. Called before the choice
/// is handed on, which it must not be when this fails: a rule in a file is
/// never one this machine cannot take back.
pub fn record(
    dir: &Path,
    task: &str,
    answer_id: &str,
    written: Option<&Written>,
    places: &Places,
) -> Result<(), Error> {
    let Some(written) = written else {
        return Ok(());
    };
    // A rule its CLI's module says is written to a file, in no file its
    // CLI's part here names: not handed on, rather than written beyond
    // taking back.
    let Some(file) = places.file_for(written.scope) else {
        return Err(Error::Settings(format!(
            "this machine does not know where {} keeps a rule of {}: it is not handed on",
            written.scope.cli(),
            written.scope.place()
        )));
    };
    let grant = Grant {
        answer_id: answer_id.to_owned(),
        task: task.to_owned(),
        file,
        written: written.clone(),
    };
    with_ledger(dir, |grants| {
        // The same grant recorded again is kept once; another grant under
        // the same answer id (which the server chose) never erases it.
        grants.retain(|g| *g != grant);
        grants.push(grant);
        (true, ())
    })
    .map_err(|e| Error::State(format!("could not record the rule granted from afar: {e}")))
}

/// Whether a rule written for `task` is still recorded: its relay stays to
/// take it back.
pub fn holds_any(dir: &Path, task: &str) -> bool {
    with_ledger(dir, |grants| (false, grants.iter().any(|g| g.task == task))).unwrap_or(false)
}

/// Takes back the rule written for `answer_id`, if this machine wrote it for
/// `task`: removes its entries from the file they went to, if they are
/// still there as written.
pub fn revoke(dir: &Path, task: &str, rule_id: &str, answer_id: &str) -> Revoked {
    let reply = |outcome, note: String| Revoked {
        rule_id: rule_id.to_owned(),
        outcome,
        note,
    };
    let done = with_ledger(dir, |grants| {
        let Some(at) = grants
            .iter()
            .position(|g| g.answer_id == answer_id && g.task == task)
        else {
            let why = "this machine has no record of writing that rule: remove it by hand";
            return (false, reply(RevokeOutcome::Failed, why.into()));
        };
        let grant = grants[at].clone();
        let outcome = take_back(&grant, &reply);
        // Kept while it could not be taken back: the person may try again.
        let forget = outcome.outcome != RevokeOutcome::Failed;
        if forget {
            grants.remove(at);
        }
        (forget, outcome)
    });
    done.unwrap_or_else(|e| {
        let why = format!("cannot read this machine's record of the rules it wrote: {e}");
        reply(RevokeOutcome::Failed, why)
    })
}

/// The file a rule was written to, by its name alone: a note travels to the
/// server, which has no business knowing this machine's folders, nor the
/// rule's words, which are sealed.
fn named(file: &Path) -> String {
    file.file_name()
        .map_or("its file".into(), |n| n.to_string_lossy().into_owned())
}

/// Takes `grant`'s entries out of its file, as its CLI keeps that file.
fn take_back(grant: &Grant, reply: &dyn Fn(RevokeOutcome, String) -> Revoked) -> Revoked {
    let shown = named(&grant.file);
    let text = match std::fs::read_to_string(&grant.file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return reply(RevokeOutcome::Failed, format!("cannot read {shown}: {e}")),
    };
    match lasting::take_out(&grant.written, &text) {
        TakenOut::Gone => reply(
            RevokeOutcome::Gone,
            format!("the rule is not in {shown} as written any more: left alone; look at it there"),
        ),
        TakenOut::Unreadable(why) => reply(
            RevokeOutcome::Failed,
            format!("{shown} {why}: remove the rule by hand"),
        ),
        TakenOut::Removed { text, note } => match replace(&grant.file, &text) {
            Ok(()) => {
                let note = note.map_or(String::new(), |n| format!("; {n}"));
                reply(
                    RevokeOutcome::Removed,
                    format!("removed the rule from {shown}{note}"),
                )
            }
            Err(e) => reply(RevokeOutcome::Failed, format!("cannot write {shown}: {e}")),
        },
    }
}

/// Writes `body` in place of `file` (of the file a link names, so that a
/// linked settings file stays a link), keeping its permissions: through a
/// new file of a name nobody could have planted, private while it is
/// written, then renamed over it.
fn replace(file: &Path, body: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let real = match std::fs::canonicalize(file) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => file.to_owned(),
        Err(e) => return Err(e),
    };
    let mode = std::fs::metadata(&real).map_or(0o600, |m| m.permissions().mode() & 0o777);
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    let nonce: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id());
    let tmp = real.with_file_name(format!(".{name}.needs-you-{nonce:x}"));
    let written = (|| {
        // create_new: never through a link or a file that was there.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(body.as_bytes())?;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.sync_all()?;
        std::fs::rename(&tmp, &real)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn places(cwd: &Path) -> Places {
        Places {
            cwd: cwd.to_owned(),
            configs: vec![
                (Cli::ClaudeCode, cwd.join("claude-config")),
                (Cli::Codex, cwd.join("codex-home")),
            ],
        }
    }

    /// What the lasting choice `suggestion` of a request of `tool` writes,
    /// as its CLI's module reads it.
    fn written(tool: &str, suggestion: &Value) -> Option<Written> {
        let mut request = needs_you_core::request::Request::new(tool, &json!({}));
        request.lasting = vec![suggestion.clone()];
        let offered = lasting::offered(&request);
        assert_eq!(offered.len(), 1, "{suggestion} is offered");
        offered[0].written.clone()
    }

    #[test]
    fn a_rule_recorded_is_taken_back_from_its_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("project");
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        let file = cwd.join(".claude/settings.local.json");
        let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                          "behavior": "allow", "destination": "localSettings"});
        record(
            dir.path(),
            "t1",
            "ans_1",
            written("Bash", &rule).as_ref(),
            &places(&cwd),
        )
        .unwrap();
        assert!(holds_any(dir.path(), "t1") && !holds_any(dir.path(), "t2"));
        // What Claude Code writes.
        std::fs::write(
            &file,
            r#"{"permissions": {"allow": ["Bash(npm test *)", "Read"]}, "z": 1, "a": 2}"#,
        )
        .unwrap();
        // Another task's relay cannot take it back.
        let other = revoke(dir.path(), "t2", "rul_1", "ans_1");
        assert_eq!(other.outcome, RevokeOutcome::Failed);
        let done = revoke(dir.path(), "t1", "rul_1", "ans_1");
        assert_eq!(done.outcome, RevokeOutcome::Removed, "{}", done.note);
        let left: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            left,
            json!({"permissions": {"allow": ["Read"]}, "z": 1, "a": 2})
        );
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.find("\"z\"") < text.find("\"a\""),
            "the file's order kept"
        );
        assert!(!holds_any(dir.path(), "t1"), "forgotten once taken back");
        assert_eq!(
            revoke(dir.path(), "t1", "rul_1", "ans_1").outcome,
            RevokeOutcome::Failed
        );
    }

    #[test]
    fn a_codex_rule_is_taken_back_out_of_its_rules_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("codex");
        std::fs::create_dir_all(home.join("rules")).unwrap();
        let s = json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["rm", "-rf", "/w/x"]}});
        let mut at = places(dir.path());
        at.configs = vec![(Cli::Codex, home.clone())];
        let w = written("codex.commandExecution", &s);
        record(dir.path(), "t", "ans_c", w.as_ref(), &at).unwrap();
        let file = home.join("rules/default.rules");
        std::fs::write(
            &file,
            "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\nprefix_rule(pattern=[\"rm\", \"-rf\", \"/w/x\"], decision=\"allow\")\n",
        )
        .unwrap();
        let r = revoke(dir.path(), "t", "rul_c", "ans_c");
        assert_eq!(r.outcome, RevokeOutcome::Removed, "{}", r.note);
        assert!(r.note.ends_with("keeps it until it restarts"), "{}", r.note);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n"
        );
    }

    #[test]
    fn a_linked_settings_file_stays_a_link_and_a_rule_that_cannot_be_recorded_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("p");
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        let real = dir.path().join("dotfiles-settings.json");
        std::fs::write(&real, r#"{"permissions": {"allow": ["Bash(npm test *)"]}}"#).unwrap();
        let link = cwd.join(".claude/settings.local.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                          "behavior": "allow", "destination": "localSettings"});
        record(
            dir.path(),
            "t",
            "ans_l",
            written("Bash", &rule).as_ref(),
            &places(&cwd),
        )
        .unwrap();
        assert_eq!(
            revoke(dir.path(), "t", "r", "ans_l").outcome,
            RevokeOutcome::Removed
        );
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let left: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
        assert_eq!(left, json!({"permissions": {"allow": []}}));
        // No ledger can be kept in a folder that is not there: said, not swallowed.
        let gone = dir.path().join("no-such-folder");
        assert!(record(
            &gone,
            "t",
            "ans_x",
            written("Bash", &rule).as_ref(),
            &places(&cwd)
        )
        .is_err());
    }

    #[test]
    fn a_rule_changed_by_hand_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("p");
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        let file = cwd.join(".claude/settings.local.json");
        let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                          "behavior": "allow", "destination": "localSettings"});
        record(
            dir.path(),
            "t",
            "ans_2",
            written("Bash", &rule).as_ref(),
            &places(&cwd),
        )
        .unwrap();
        let by_hand = r#"{"permissions": {"allow": ["Bash(npm test)"]}}"#;
        std::fs::write(&file, by_hand).unwrap();
        let r = revoke(dir.path(), "t", "rul_2", "ans_2");
        assert_eq!(r.outcome, RevokeOutcome::Gone);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), by_hand);
        // A rule of a file no CLI's part here names: refused, not handed on.
        let nowhere = Places {
            cwd: cwd.clone(),
            configs: Vec::new(),
        };
        let user = json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
                          "behavior": "allow", "destination": "userSettings"});
        assert!(record(
            dir.path(),
            "t",
            "ans_4",
            written("Bash", &user).as_ref(),
            &nowhere
        )
        .is_err());
        // A session's rule is never recorded.
        let session = json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
                             "behavior": "allow", "destination": "session"});
        record(
            dir.path(),
            "t",
            "ans_3",
            written("Bash", &session).as_ref(),
            &places(&cwd),
        )
        .unwrap();
        assert!(!holds_any(dir.path(), "t"));
    }
}
