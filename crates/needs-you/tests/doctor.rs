//! `report-prompt doctor`, run as a person runs it.

mod common;

use common::*;

#[test]
fn doctor_passes_a_working_set_up_and_says_how_to_fix_a_broken_one() {
    let sink = Sink::start();
    let (t, dir) = state_dir();
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let d = dir.to_str().unwrap();
    let h = home.to_str().unwrap();

    // Nothing installed for any CLI: nothing would ever report.
    let bare = run(
        &["doctor", "--state-dir", d],
        "",
        &[
            ("NEEDS_YOU_URL", sink.url.as_str()),
            ("NEEDS_YOU_TOKEN", TOKEN),
            ("HOME", h),
        ],
    );
    let text = String::from_utf8_lossy(&bare.stdout);
    assert_eq!(bare.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL  no hooks or plugin is installed for any CLI"),
        "{text}"
    );
    assert!(
        text.contains("fix: report-prompt install --cli claude-code"),
        "{text}"
    );

    let installed = run(&["install", "--cli", "claude-code"], "", &[("HOME", h)]);
    assert_eq!(installed.status.code(), Some(0));
    let before = sink.requests().len();
    let good = run(
        &["doctor", "--state-dir", d],
        "",
        &[
            ("NEEDS_YOU_URL", sink.url.as_str()),
            ("NEEDS_YOU_TOKEN", TOKEN),
            ("HOME", h),
        ],
    );
    let text = String::from_utf8_lossy(&good.stdout);
    assert_eq!(good.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ok    the server answers /v1/health"),
        "{text}"
    );
    assert!(
        text.contains("ok    the credential belongs to task"),
        "{text}"
    );
    assert!(text.contains("ok    claude-code hooks installed"), "{text}");
    assert!(text.contains("codex hooks not installed"), "{text}");
    assert!(!text.contains(TOKEN), "the credential is never printed");
    let paths: Vec<String> = sink.requests()[before..]
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(paths, ["/v1/health", "/v1/task"]);

    // In the person's own terminal, outside a task: said, and not a fault.
    let plain = run(&["doctor", "--state-dir", d], "", &[("HOME", h)]);
    let text = String::from_utf8_lossy(&plain.stdout);
    assert_eq!(plain.status.code(), Some(0), "{text}");
    assert!(text.contains("--    not inside a task"), "{text}");
    assert!(
        text.contains("`needs-you run -- report-prompt doctor`"),
        "{text}"
    );
    assert!(
        text.contains("ok    claude-code hooks installed"),
        "the rest is checked"
    );

    // Half a task's environment is a fault.
    let bad = run(
        &["doctor", "--state-dir", d],
        "",
        &[("HOME", h), ("NEEDS_YOU_TOKEN", TOKEN)],
    );
    let text = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text.contains("FAIL  NEEDS_YOU_URL is not set"), "{text}");
    assert!(
        text.contains("fix: start the agent with `needs-you run -- AGENT`"),
        "{text}"
    );
}

/// A person's machine for doctor: a home, a state folder, a server (a
/// sink) and a credential, and the commands run there.
struct Machine {
    sink: Sink,
    _t: tempfile::TempDir,
    dir: std::path::PathBuf,
    home: std::path::PathBuf,
}

impl Machine {
    fn new() -> Machine {
        let sink = Sink::start();
        let (t, dir) = state_dir();
        let home = t.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        Machine {
            sink,
            _t: t,
            dir,
            home,
        }
    }

    fn doctor(&self) -> std::process::Output {
        let env = [
            ("NEEDS_YOU_URL", self.sink.url.as_str()),
            ("NEEDS_YOU_TOKEN", TOKEN),
            ("HOME", self.home.to_str().unwrap()),
        ];
        run(
            &["doctor", "--state-dir", self.dir.to_str().unwrap()],
            "",
            &env,
        )
    }

    /// `install` or `uninstall` for `cli`.
    fn install(&self, verb: &str, cli: &str) -> std::process::Output {
        run(
            &[verb, "--cli", cli],
            "",
            &[("HOME", self.home.to_str().unwrap())],
        )
    }
}

#[test]
fn doctor_fails_hooks_installed_by_an_older_reporter_and_install_mends_them() {
    let m = Machine::new();
    assert_eq!(m.install("install", "claude-code").status.code(), Some(0));
    // As an install made before the MCP form hooks existed.
    let settings = m.home.join(".claude").join("settings.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let hooks = v["hooks"].as_object_mut().unwrap();
    hooks.remove("Elicitation");
    hooks.remove("ElicitationResult");
    std::fs::write(&settings, v.to_string()).unwrap();

    let old = m.doctor();
    let text = String::from_utf8_lossy(&old.stdout);
    assert_eq!(old.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL  claude-code hooks lack Elicitation, ElicitationResult"),
        "{text}"
    );
    assert!(
        text.contains("fix: report-prompt install --cli claude-code again"),
        "{text}"
    );

    assert_eq!(m.install("install", "claude-code").status.code(), Some(0));
    let mended = m.doctor();
    let text = String::from_utf8_lossy(&mended.stdout);
    assert_eq!(mended.status.code(), Some(0), "{text}");
    assert!(!text.contains("lack"), "{text}");
}

#[test]
fn opencode_s_npm_package_and_a_plugin_file_together_are_refused_and_failed() {
    let m = Machine::new();
    let config = m.home.join(".config").join("opencode");
    // A plugin file first, then the package named in OpenCode's config.
    assert_eq!(m.install("install", "opencode").status.code(), Some(0));
    std::fs::write(
        config.join("opencode.json"),
        r#"{"model": "m", "plugin": ["other-plugin", "opencode-needs-you@0.1.0"]}"#,
    )
    .unwrap();
    let twice = m.doctor();
    let text = String::from_utf8_lossy(&twice.stdout);
    assert_eq!(twice.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL  opencode loads the needs-you package (opencode-needs-you@0.1.0) and the plugin file"),
        "{text}"
    );
    assert!(
        text.contains("fix: report-prompt uninstall --cli opencode"),
        "{text}"
    );

    // Removed, the package alone reports; installing the file again is refused.
    let plugin_file = config.join("plugins").join("needs-you.js");
    assert_eq!(m.install("uninstall", "opencode").status.code(), Some(0));
    assert!(!plugin_file.exists());
    let once = m.doctor();
    let text = String::from_utf8_lossy(&once.stdout);
    assert!(
        text.contains("ok    opencode reports through the needs-you package"),
        "{text}"
    );
    let refused = m.install("install", "opencode");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("loads the needs-you package already"), "{err}");
    assert!(!plugin_file.exists(), "nothing was changed");
}

#[test]
fn gemini_s_extension_under_variable_redaction_reports_and_keeping_the_credential_s_name_is_failed()
{
    let m = Machine::new();
    let gemini = m.home.join(".gemini");
    // The extension as `gemini extensions install` copies it, from our folder.
    let ext = gemini.join("extensions").join("needs-you");
    let ours = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/gemini");
    std::fs::create_dir_all(ext.join("hooks")).unwrap();
    for file in ["gemini-extension.json", "hooks/hooks.json"] {
        std::fs::copy(ours.join(file), ext.join(file)).unwrap();
    }
    let settings = gemini.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"security": {"environmentVariableRedaction": {"enabled": true}}}"#,
    )
    .unwrap();

    // The hooks read the credential from Gemini CLI's own environment.
    let redacted = m.doctor();
    let text = String::from_utf8_lossy(&redacted.stdout);
    assert_eq!(redacted.status.code(), Some(0), "{text}");
    assert!(
        text.contains("gemini reports through the needs-you extension"),
        "{text}"
    );
    assert!(
        text.contains("the hooks read NEEDS_YOU_TOKEN from Gemini CLI's own environment, and the model's commands do not get it (nor NEEDS_YOU_CONTENT_KEYS, which the hooks seal with)"),
        "{text}"
    );

    std::fs::write(
        &settings,
        r#"{"security": {"environmentVariableRedaction": {"enabled": true, "allowed": ["NEEDS_YOU_TOKEN"]}}}"#,
    )
    .unwrap();
    let widened = m.doctor();
    let text = String::from_utf8_lossy(&widened.stdout);
    assert_eq!(widened.status.code(), Some(1), "{text}");
    assert!(
        text.contains("which hands the task credential to every shell command the model runs and every MCP server"),
        "{text}"
    );
}
