//! Adding our hooks to a Claude Code `settings.json` or a Codex `hooks.json`,
//! and removing them again. Both files share one shape:
//!
//! ```json
//! {"hooks": {"Stop": [{"matcher": "…", "hooks": [{"type": "command", "command": "…", "timeout": 10}]}]}}
//! ```
//!
//! Our groups are appended after the user's, nothing of theirs is reordered or
//! dropped, and a second run finds every hook in place and changes nothing. Our
//! hooks are recognised by their command (`… report-prompt… --cli <cli>`).
//! Everything here is pure: `Value` in, `Value` and a list of changes out.

use serde_json::{json, Map, Value};

use needs_you_core::Cli;

pub use needs_you_core::classify::HookSpec;

use crate::error::Error;

/// Seconds a CLI gives each hook; ours return in milliseconds.
/// Seconds a CLI gives a hook that waits for an answer from afar: an hour,
/// past the wait's own end (`waiters::WAIT_FOR`), so that the hook ends on its
/// own, cleanly, before its CLI would end it.
pub const WAITING_TIMEOUT_S: u64 = 3600;

/// Single-quotes `s` for `sh`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The launcher's path inside our Claude Code, Codex and Gemini CLI plugins
/// ([`super::marketplace`] writes it).
pub const LAUNCHER: &str = "bin/needs-you-hook";

/// What a hook command starts: the reporter by its path (what `install`
/// writes), or the launcher inside our Claude Code or Codex plugin, which
/// runs the `report-prompt` on the PATH.
#[derive(Debug, Clone, Copy)]
pub enum Runs<'a> {
    Binary(&'a str),
    PluginLauncher,
}

impl Runs<'_> {
    /// As a shell word: a path quoted, the launcher found from the plugin's
    /// root as `cli` names it for a hook.
    fn word(&self, cli: Cli) -> String {
        match self {
            Runs::Binary(exe) => sh_quote(exe),
            Runs::PluginLauncher => {
                let root = cli
                    .describe()
                    .plugin_root
                    .expect("a plugin's hooks are made only for a CLI we ship a plugin for");
                format!("sh \"{root}/{LAUNCHER}\"")
            }
        }
    }
}

/// The command a hook runs. Without `state_dir`, the reporter and the guard
/// both find the state directory from the hook's own environment, so one
/// machine-wide file (Codex's `/etc/codex/hooks.json`) serves every user.
pub fn command(exe: &str, cli: Cli, state_dir: Option<&str>, guarded: bool) -> String {
    command_for(Runs::Binary(exe), cli, state_dir, guarded)
}

/// [`command`] for what `runs`.
pub fn command_for(runs: Runs, cli: Cli, state_dir: Option<&str>, guarded: bool) -> String {
    let (run, set, marker) = match state_dir {
        Some(dir) => (
            format!(
                "{} --cli {cli} --state-dir {}",
                runs.word(cli),
                sh_quote(dir)
            ),
            String::new(),
            sh_quote(&format!(
                "{}/{}",
                dir.trim_end_matches('/'),
                crate::state::MARKER
            )),
        ),
        None => (
            format!("{} --cli {cli}", runs.word(cli)),
            format!("{}; ", crate::state::DEFAULT_DIR_SH_SET),
            format!(
                "\"{}/{}\"",
                crate::state::DEFAULT_DIR_SH,
                crate::state::MARKER
            ),
        ),
    };
    if guarded {
        format!("{set}if [ -e {marker} ]; then exec {run}; else cat >/dev/null; fi")
    } else {
        run
    }
}

/// One of our hooks: it runs report-prompt for this CLI, by its path or
/// through our plugins' launcher.
pub fn is_ours(command: &str, cli: Cli) -> bool {
    let flag = format!(" --cli {cli}");
    (command.contains("report-prompt") || command.contains(LAUNCHER))
        && command.match_indices(&flag).any(|(i, _)| {
            matches!(
                command[i + flag.len()..].chars().next(),
                None | Some(' ' | ';' | '\'')
            )
        })
}

/// Whether a settings file holds any hook of ours for `cli`.
pub fn has_ours(root: &Value, cli: Cli) -> bool {
    let Some(hooks) = root.get("hooks").and_then(Value::as_object) else {
        return false;
    };
    hooks
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .any(|group| {
            group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|h| hook_command(h).is_some_and(|c| is_ours(c, cli)))
        })
}

/// The hooks of `specs` that a settings file holding ours lacks (installed by
/// an older report-prompt, or taken out by hand), as `install` names them.
pub fn missing(root: &Value, specs: &[HookSpec], cli: Cli) -> Vec<String> {
    let hooks = root.get("hooks");
    specs
        .iter()
        .filter(|spec| {
            let groups = hooks
                .and_then(|h| h.get(spec.event))
                .and_then(Value::as_array);
            !groups
                .into_iter()
                .flatten()
                .filter(|g| matcher_of(g) == spec.matcher)
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
                .any(|h| hook_command(h).is_some_and(|c| is_ours(c, cli)))
        })
        .map(describe)
        .collect()
}

fn hook_command(h: &Value) -> Option<&str> {
    h.get("command").and_then(Value::as_str)
}

fn matcher_of(group: &Value) -> Option<&str> {
    group
        .get("matcher")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
}

fn object_at<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<&'a mut Map<String, Value>, Error> {
    parent
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| {
            Error::Settings(format!(
                "{what} is not a JSON object; fix it by hand, nothing was changed"
            ))
        })
}

/// Adds the hooks in `specs`; returns one line per change (empty: nothing to do).
pub fn add(
    root: &mut Value,
    specs: &[HookSpec],
    cli: Cli,
    exe: &str,
    state_dir: Option<&str>,
) -> Result<Vec<String>, Error> {
    add_for(root, specs, cli, Runs::Binary(exe), state_dir)
}

/// [`add`] for what `runs`.
pub fn add_for(
    root: &mut Value,
    specs: &[HookSpec],
    cli: Cli,
    runs: Runs,
    state_dir: Option<&str>,
) -> Result<Vec<String>, Error> {
    let root = root.as_object_mut().ok_or_else(|| {
        Error::Settings("the settings file is not a JSON object; nothing was changed".into())
    })?;
    let hooks = object_at(root, "hooks", "`hooks`")?;
    let mut changes = Vec::new();
    for spec in specs {
        let wanted = command_for(runs, cli, state_dir, spec.guarded);
        let seconds = if spec.waits {
            WAITING_TIMEOUT_S
        } else {
            cli.describe().hook_timeout_s
        };
        let timeout = if cli.describe().timeouts_in_ms {
            seconds * 1000
        } else {
            seconds
        };
        let groups = hooks
            .entry(spec.event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| {
                Error::Settings(format!(
                    "`hooks.{}` is not a list; nothing was changed",
                    spec.event
                ))
            })?;
        let mut found = false;
        for group in groups.iter_mut().filter(|g| matcher_of(g) == spec.matcher) {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            for h in list
                .iter_mut()
                .filter(|h| hook_command(h).is_some_and(|c| is_ours(c, cli)))
            {
                found = true;
                let fresh = json!({"type": "command", "command": wanted, "timeout": timeout});
                if *h != fresh {
                    *h = fresh;
                    changes.push(format!("update {}: {wanted}", describe(spec)));
                }
            }
        }
        if !found {
            let mut group = Map::new();
            if let Some(m) = spec.matcher {
                group.insert("matcher".into(), Value::String(m.into()));
            }
            group.insert(
                "hooks".into(),
                json!([{"type": "command", "command": wanted, "timeout": timeout}]),
            );
            groups.push(Value::Object(group));
            changes.push(format!("add {}: {wanted}", describe(spec)));
        }
    }
    Ok(changes)
}

fn describe(spec: &HookSpec) -> String {
    match spec.matcher {
        Some(m) => format!("{} ({m})", spec.event),
        None => spec.event.to_owned(),
    }
}

/// Removes every hook of ours, and the groups, events and `hooks` object that
/// only held ours. Returns one line per removal.
pub fn remove(root: &mut Value, cli: Cli) -> Vec<String> {
    let mut changes = Vec::new();
    let Some(root) = root.as_object_mut() else {
        return changes;
    };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return changes;
    };
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let mut removed_here = false;
        groups.retain_mut(|group| {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|h| !hook_command(h).is_some_and(|c| is_ours(c, cli)));
            let removed = before - list.len();
            if removed > 0 {
                removed_here = true;
                changes.push(format!("remove {event}: {removed} hook(s)"));
            }
            !(removed > 0 && list.is_empty())
        });
        if removed_here && groups.is_empty() {
            emptied.push(event.clone());
        }
    }
    // `retain`, not `remove`: removing from an order-preserving map would
    // move the last key into the gap.
    hooks.retain(|event, _| !emptied.contains(event));
    if hooks.is_empty() && !changes.is_empty() {
        root.retain(|key, _| key != "hooks");
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use needs_you_core::classify::{CLAUDE_CODE_HOOKS as CLAUDE_CODE, CODEX_HOOKS as CODEX};

    const EXE: &str = "/usr/local/bin/report-prompt";
    const DIR: Option<&str> = None;

    fn users_settings() -> Value {
        json!({
            "model": "opus",
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "afplay done.aiff"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}]
            },
            "permissions": {"allow": ["Bash(ls:*)"]}
        })
    }

    #[test]
    fn an_install_by_an_older_reporter_lacks_the_newer_hooks() {
        let mut v = users_settings();
        assert_eq!(
            missing(&v, CLAUDE_CODE, Cli::ClaudeCode).len(),
            CLAUDE_CODE.len()
        );
        add(&mut v, CLAUDE_CODE, Cli::ClaudeCode, EXE, DIR).unwrap();
        assert!(missing(&v, CLAUDE_CODE, Cli::ClaudeCode).is_empty());
        v["hooks"].as_object_mut().unwrap().remove("Elicitation");
        assert_eq!(missing(&v, CLAUDE_CODE, Cli::ClaudeCode), ["Elicitation"]);
        // A hook of the user's own on the event is not ours.
        v["hooks"]["Elicitation"] = json!([{"hooks": [{"type": "command", "command": "log.sh"}]}]);
        assert_eq!(missing(&v, CLAUDE_CODE, Cli::ClaudeCode), ["Elicitation"]);
    }

    #[test]
    fn adds_after_the_users_hooks_and_keeps_everything_else() {
        let mut v = users_settings();
        let changes = add(&mut v, CLAUDE_CODE, Cli::ClaudeCode, EXE, DIR).unwrap();
        assert_eq!(changes.len(), CLAUDE_CODE.len());
        assert_eq!(v["model"], "opus");
        assert_eq!(v["permissions"], users_settings()["permissions"]);
        let stop = v["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(
            stop[0],
            users_settings()["hooks"]["Stop"][0],
            "the user's hook stays first"
        );
        assert_eq!(
            stop[1]["hooks"][0]["command"],
            command(EXE, Cli::ClaudeCode, DIR, false)
        );
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre[0]["matcher"], "Bash");
        assert_eq!(pre[1]["matcher"], "AskUserQuestion");
        assert_eq!(pre[1]["hooks"][0]["timeout"], 10);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "permissions"], "key order is kept");
    }

    #[test]
    fn a_second_run_changes_nothing() {
        let mut v = users_settings();
        add(&mut v, CLAUDE_CODE, Cli::ClaudeCode, EXE, DIR).unwrap();
        let once = v.clone();
        assert!(add(&mut v, CLAUDE_CODE, Cli::ClaudeCode, EXE, DIR)
            .unwrap()
            .is_empty());
        assert_eq!(v, once);
    }

    #[test]
    fn a_moved_binary_is_updated_in_place() {
        let mut v = users_settings();
        add(&mut v, CODEX, Cli::Codex, EXE, DIR).unwrap();
        let changes = add(&mut v, CODEX, Cli::Codex, "/opt/report-prompt", DIR).unwrap();
        assert_eq!(changes.len(), CODEX.len());
        assert!(changes.iter().all(|c| c.starts_with("update")));
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn remove_undoes_add_exactly() {
        for original in [users_settings(), json!({}), json!({"theme": "dark"})] {
            let mut v = original.clone();
            add(&mut v, CLAUDE_CODE, Cli::ClaudeCode, EXE, DIR).unwrap();
            assert!(!remove(&mut v, Cli::ClaudeCode).is_empty());
            assert_eq!(v, original);
        }
    }

    #[test]
    fn remove_leaves_other_clis_and_users_hooks() {
        let mut v = users_settings();
        add(&mut v, CODEX, Cli::Codex, EXE, DIR).unwrap();
        add(&mut v, CLAUDE_CODE, Cli::ClaudeCode, EXE, DIR).unwrap();
        remove(&mut v, Cli::ClaudeCode);
        let stop = v["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2);
        assert!(is_ours(
            stop[1]["hooks"][0]["command"].as_str().unwrap(),
            Cli::Codex
        ));
    }

    #[test]
    fn refuses_odd_shapes() {
        assert!(add(&mut json!([]), CODEX, Cli::Codex, EXE, DIR).is_err());
        assert!(add(&mut json!({"hooks": []}), CODEX, Cli::Codex, EXE, DIR).is_err());
        assert!(add(
            &mut json!({"hooks": {"Stop": {}}}),
            CODEX,
            Cli::Codex,
            EXE,
            DIR
        )
        .is_err());
    }

    #[test]
    fn commands_quote_paths_and_guard_closers() {
        let c = command("/a b/report-prompt's", Cli::Codex, Some("/tmp/d"), true);
        assert_eq!(
            c,
            r"if [ -e '/tmp/d/open' ]; then exec '/a b/report-prompt'\''s' --cli codex --state-dir '/tmp/d'; else cat >/dev/null; fi"
        );
        assert!(is_ours(&c, Cli::Codex));
        assert!(!is_ours(&c, Cli::ClaudeCode));
    }

    #[test]
    fn default_commands_find_the_state_directory_at_hook_time() {
        let c = command("/usr/bin/report-prompt", Cli::Codex, None, true);
        assert_eq!(
            c,
            r#"default_dir=${XDG_RUNTIME_DIR:-$HOME/.cache}/needs-you; if [ -e "${NEEDS_YOU_STATE_DIR:-$default_dir}/open" ]; then exec '/usr/bin/report-prompt' --cli codex; else cat >/dev/null; fi"#
        );
        assert!(is_ours(&c, Cli::Codex));
        let open = command("/usr/bin/report-prompt", Cli::Codex, None, false);
        assert_eq!(open, "'/usr/bin/report-prompt' --cli codex");
        assert!(is_ours(&open, Cli::Codex));
        assert!(!is_ours(
            "'/usr/bin/report-prompt' --cli codexx",
            Cli::Codex
        ));
        assert!(!is_ours("notify-send --cli codex", Cli::Codex));
    }

    #[test]
    fn the_default_guard_finds_the_marker_by_each_rule_of_the_state_directory() {
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let at = |p: &str| dir.path().join(p);
        for folder in ["set/", "xdg/needs-you/", "home/.cache/needs-you/"] {
            std::fs::create_dir_all(at(folder)).unwrap();
        }
        // `echo` stands for the reporter: it prints only when the guard lets it run.
        let cmd = command("/bin/echo", Cli::Codex, None, true);
        let runs = |vars: &[(&str, std::path::PathBuf)]| {
            let mut sh = Command::new("sh");
            sh.args(["-c", &cmd]).env_clear().stdin(Stdio::null());
            for (k, v) in vars {
                sh.env(k, v);
            }
            !sh.output().unwrap().stdout.is_empty()
        };
        let home = ("HOME", at("home"));
        let xdg = ("XDG_RUNTIME_DIR", at("xdg"));
        let set = ("NEEDS_YOU_STATE_DIR", at("set"));
        let cases = [
            (vec![set, xdg.clone(), home.clone()], "set/"),
            (vec![xdg, home.clone()], "xdg/needs-you/"),
            (vec![home], "home/.cache/needs-you/"),
        ];
        for (vars, folder) in &cases {
            assert!(!runs(vars), "no marker yet: {vars:?}");
            std::fs::write(at(folder).join(crate::state::MARKER), "").unwrap();
            assert!(runs(vars), "the marker in {folder}: {vars:?}");
        }
    }

    #[test]
    fn the_plugins_hooks_are_ours_and_lack_nothing() {
        for cli in [Cli::ClaudeCode, Cli::Codex] {
            let v = super::super::marketplace::plugin_hooks(cli);
            assert!(has_ours(&v, cli));
            assert_eq!(
                missing(&v, needs_you_core::classify::hooks(cli), cli),
                Vec::<String>::new()
            );
            let mut old = v.clone();
            old["hooks"].as_object_mut().unwrap().remove("Stop");
            assert_eq!(
                missing(&old, needs_you_core::classify::hooks(cli), cli),
                ["Stop"]
            );
        }
    }
}
