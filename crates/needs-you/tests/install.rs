//! The installers, run as a person runs them, on copies of real-looking
//! settings files; and the installed shell guard, run by `sh` as a CLI runs it.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const CLAUDE_SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write \"$CLAUDE_FILE_PATHS\""}]}
    ],
    "Notification": [
      {"hooks": [{"type": "command", "command": "notify-send 'Claude Code' 'Awaiting your input'"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"}
}
"#;

/// Runs an installer on `path` as a person would (no --state-dir: the hooks
/// find the state directory from their own environment).
fn install(args: &[&str], path: &Path) -> std::process::Output {
    let mut a = args.to_vec();
    a.extend(["--path", path.to_str().unwrap()]);
    run(&a, "", &[("HOME", "/nonexistent")])
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn claude_code_install_is_additive_idempotent_and_reversible() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("settings.json");
    std::fs::write(&path, CLAUDE_SETTINGS).unwrap();
    let original: Value = serde_json::from_str(CLAUDE_SETTINGS).unwrap();

    let dry = install(&["install", "--cli", "claude-code", "--dry-run"], &path);
    assert_eq!(dry.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&dry.stdout).contains("would change"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        CLAUDE_SETTINGS,
        "dry run writes nothing"
    );

    let out = install(&["install", "--cli", "claude-code"], &path);
    assert_success(&out);
    let v = read(&path);
    let backup = t.path().join("settings.json.needs-you.bak");
    assert_eq!(
        std::fs::read_to_string(&backup).unwrap(),
        CLAUDE_SETTINGS,
        "the backup is the file as it was"
    );
    assert_eq!(v["permissions"], original["permissions"]);
    assert_eq!(v["statusLine"], original["statusLine"]);
    // The user's hooks stay first; ours come after.
    assert_eq!(
        v["hooks"]["PostToolUse"][0],
        original["hooks"]["PostToolUse"][0]
    );
    assert_eq!(
        v["hooks"]["Notification"][0],
        original["hooks"]["Notification"][0]
    );
    assert_eq!(
        v["hooks"]["Notification"][1]["matcher"],
        "permission_prompt"
    );
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "AskUserQuestion");
    for event in [
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "SessionEnd",
    ] {
        let ours = v["hooks"][event].as_array().unwrap().last().unwrap();
        let cmd = ours["hooks"][0]["command"].as_str().unwrap();
        assert!(cmd.contains("; if [ -e "), "{event} is guarded: {cmd}");
        assert_eq!(ours["hooks"][0]["timeout"], 10);
    }
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["$schema", "model", "permissions", "hooks", "statusLine"]
    );

    let again = std::fs::read_to_string(&path).unwrap();
    let out = install(&["install", "--cli", "claude-code"], &path);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to change"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        again,
        "a second run changes nothing"
    );

    let out = install(&["uninstall", "--cli", "claude-code"], &path);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        read(&path),
        original,
        "uninstall removes exactly what install added"
    );
}

#[test]
fn codex_install_writes_only_hooks() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("etc-codex/hooks.json");
    let out = install(&["install", "--cli", "codex"], &path);
    assert_success(&out);
    let v = read(&path);
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["hooks"],
        "Codex refuses unknown root keys"
    );
    let events: Vec<&String> = v["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [
            "PermissionRequest",
            "Stop",
            "UserPromptSubmit",
            "PostToolUse",
            "Interrupt",
            "SessionEnd"
        ]
    );
    install(&["uninstall", "--cli", "codex"], &path);
    assert_eq!(read(&path), json!({}));
}

#[test]
fn a_settings_file_that_is_not_json_is_left_untouched() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("settings.json");
    let broken = "{ \"model\": \"opus\", // a comment\n}";
    std::fs::write(&path, broken).unwrap();
    let out = install(&["install", "--cli", "claude-code"], &path);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not valid JSON") && err.contains("left untouched"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    assert!(!t.path().join("settings.json.needs-you.bak").exists());
}

/// Runs an installed hook command the way a CLI does: `sh -c`, event on stdin.
fn run_installed(command: &str, stdin: &str, url: &str, home: &Path) -> std::process::Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NEEDS_YOU_URL", url)
        .env("NEEDS_YOU_TOKEN", TOKEN);
    feed(cmd, stdin)
}

#[test]
fn the_installed_guard_skips_the_reporter_until_something_is_open() {
    let sink = Sink::start();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    // The default state directory, as the hook's shell and the reporter both find it.
    let dir = home.join(".cache/needs-you");
    let path = t.path().join("settings.json");
    install(&["install", "--cli", "claude-code"], &path);
    let v = read(&path);
    let command = |event: &str| {
        v["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let post_tool_use =
        json!({"session_id": "g", "hook_event_name": "PostToolUse", "tool_name": "Bash"})
            .to_string();

    // Nothing open: the guard drains stdin and never starts the reporter; the
    // state directory is not even created.
    let out = run_installed(&command("PostToolUse"), &post_tool_use, &sink.url, &home);
    assert_quiet(&out);
    assert!(!dir.exists(), "the reporter did not run");

    // A permission dialog opens through its own hook, then the guard lets the close through.
    let notification = json!({"session_id": "g", "hook_event_name": "Notification",
        "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"}).to_string();
    assert_quiet(&run_installed(
        &command("Notification"),
        &notification,
        &sink.url,
        &home,
    ));
    assert!(dir.join("open").exists());
    assert_quiet(&run_installed(
        &command("PostToolUse"),
        &post_tool_use,
        &sink.url,
        &home,
    ));
    assert!(!dir.join("open").exists());
    let got = sink.wait_for(2);
    let mut actions: Vec<(u64, String)> = got
        .iter()
        .map(|r| {
            (
                r.body["seq"].as_u64().unwrap(),
                r.body["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    actions.sort();
    assert_eq!(
        actions.iter().map(|a| a.1.as_str()).collect::<Vec<_>>(),
        ["open", "close"]
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(sink.requests().len(), 2);
}

#[test]
fn opencode_plugin_install_round_trip() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("config/opencode/plugins/needs-you.js");
    let out = install(&["install", "--cli", "opencode"], &path);
    assert_success(&out);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(&format!(
            "const DEFAULT_REPORTER = {};",
            serde_json::to_string(BIN).unwrap()
        )) || text.contains("const DEFAULT_REPORTER = \"/"),
        "the reporter's absolute path is written in"
    );
    assert!(text.contains("export const NeedsYou"));
    let out = install(&["install", "--cli", "opencode"], &path);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to change"));
    install(&["uninstall", "--cli", "opencode"], &path);
    assert!(!path.exists());
}

#[test]
fn hermes_plugin_install_enables_it_without_disturbing_the_config() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("hermes-home");
    std::fs::create_dir_all(&home).unwrap();
    let config = "# Hermes config\nmodel:\n  default: anthropic/claude-sonnet-4.6\nplugins:\n  enabled:\n    - disk-cleanup\n  disabled: []\n";
    std::fs::write(home.join("config.yaml"), config).unwrap();

    let dry = install(&["install", "--cli", "hermes", "--dry-run"], &home);
    assert_success(&dry);
    assert!(!home.join("plugins").exists(), "dry run writes nothing");

    let out = install(&["install", "--cli", "hermes"], &home);
    assert_success(&out);
    let plugin = home.join("plugins/needs-you");
    assert!(std::fs::read_to_string(plugin.join("plugin.yaml"))
        .unwrap()
        .contains("name: needs-you"));
    assert!(std::fs::read_to_string(plugin.join("__init__.py"))
        .unwrap()
        .contains("def register(ctx)"));
    let enabled = std::fs::read_to_string(home.join("config.yaml")).unwrap();
    assert_eq!(
        enabled,
        config.replace(
            "    - disk-cleanup\n",
            "    - disk-cleanup\n    - needs-you\n"
        )
    );

    let out = install(&["install", "--cli", "hermes"], &home);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("nothing to change"),
        "idempotent"
    );

    install(&["uninstall", "--cli", "hermes"], &home);
    assert_eq!(
        std::fs::read_to_string(home.join("config.yaml")).unwrap(),
        config
    );
    assert!(!plugin.exists());
}

#[test]
fn a_symlinked_settings_file_stays_a_link() {
    let t = tempfile::tempdir().unwrap();
    let real = t.path().join("dotfiles/claude-settings.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, CLAUDE_SETTINGS).unwrap();
    let link = t.path().join("settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_success(&install(&["install", "--cli", "claude-code"], &link));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        read(&real)["hooks"]["PreToolUse"].is_array(),
        "the file behind the link changed"
    );
}

#[test]
fn the_installer_makes_a_state_directory_that_others_can_read_private() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let settings = t.path().join("settings.json");
    let state = t.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let install = || {
        let out = run(
            &[
                "install",
                "--cli",
                "claude-code",
                "--path",
                settings.to_str().unwrap(),
            ],
            "",
            &[
                ("HOME", "/nonexistent"),
                ("NEEDS_YOU_STATE_DIR", state.to_str().unwrap()),
            ],
        );
        assert_success(&out);
        out
    };
    let out = install();
    assert!(String::from_utf8_lossy(&out.stdout).contains("private now"));
    let mode = std::fs::metadata(&state).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    // One that others may write to is named, not touched.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = install();
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot use the state directory"));
    let mode = std::fs::metadata(&state).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o777);
}

/// A settings file can hold secrets (an MCP server's environment, a key): its
/// backup and its replacement are never readable by more users than it was,
/// whatever an earlier backup's mode, and a new settings file is the person's
/// alone.
#[test]
fn every_installer_keeps_a_private_settings_file_private_backup_included() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for cli in ["claude-code", "codex", "gemini", "copilot"] {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"db": {"env": {"DB_PASSWORD": "hunter2"}}}}"#,
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let backup = t.path().join("settings.json.needs-you.bak");
        std::fs::write(&backup, "an earlier backup, open to all").unwrap();
        std::fs::set_permissions(&backup, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_success(&install(&["install", "--cli", cli], &path));
        assert!(
            std::fs::read_to_string(&backup)
                .unwrap()
                .contains("hunter2"),
            "{cli}"
        );
        assert_eq!(mode(&backup), 0o600, "{cli}: the backup");
        assert_eq!(mode(&path), 0o600, "{cli}: the settings file");
        let fresh = t.path().join("new/settings.json");
        assert_success(&install(&["install", "--cli", cli], &fresh));
        assert_eq!(mode(&fresh), 0o600, "{cli}: a new settings file");
    }
}

/// Gemini CLI's redaction list also decides what its model's shell commands
/// and MCP servers get: the installer never names the credential there, and
/// takes back the name an earlier installer kept, leaving the person's own.
#[test]
fn gemini_install_keeps_the_credential_out_of_the_redaction_list() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"security": {"environmentVariableRedaction": {"enabled": true, "allowed": ["MY_KEY", "NEEDS_YOU_TOKEN"]}}}"#,
    )
    .unwrap();
    let out = install(&["install", "--cli", "gemini"], &path);
    assert_success(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stop keeping NEEDS_YOU_TOKEN"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = read(&path);
    assert_eq!(
        v["security"]["environmentVariableRedaction"],
        json!({"enabled": true, "allowed": ["MY_KEY"]})
    );
    assert!(v["hooks"]["Notification"].is_array(), "the hooks are in");

    let fresh = t.path().join("fresh.json");
    std::fs::write(
        &fresh,
        r#"{"security": {"environmentVariableRedaction": {"enabled": true}}}"#,
    )
    .unwrap();
    assert_success(&install(&["install", "--cli", "gemini"], &fresh));
    assert_eq!(
        read(&fresh)["security"],
        json!({"environmentVariableRedaction": {"enabled": true}})
    );
}

/// Under `umask 000` a folder made with the umask's mode is 0777: another
/// user could replace the settings and the hooks they run. Every folder an
/// installer makes in a fresh home is the person's alone, whatever the umask.
#[test]
fn every_folder_an_installer_makes_is_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    for cli in ["claude-code", "gemini", "copilot"] {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "umask 000; exec \"$0\" \"$@\"",
            BIN,
            "install",
            "--cli",
            cli,
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join(".local/state"));
        assert_success(&feed(cmd, ""));
    }
    let mut folders = Vec::new();
    let mut todo = vec![home.clone()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                folders.push((path.strip_prefix(&home).unwrap().to_owned(), mode));
                todo.push(path);
            }
        }
    }
    let names: Vec<String> = folders
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    for made in [".claude", ".gemini", ".copilot", ".copilot/hooks"] {
        assert!(names.iter().any(|n| n == made), "{made} made: {names:?}");
    }
    let open: Vec<_> = folders.iter().filter(|(_, m)| *m != 0o700).collect();
    assert!(open.is_empty(), "folders not 0700: {open:?}");
}
