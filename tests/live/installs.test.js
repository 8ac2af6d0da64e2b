// Installing needs-you the way each CLI's users install things, with the real
// CLIs in throwaway homes: Claude Code's and Codex's own plugin commands from
// this repository's marketplaces, OpenCode's npm-package plugin from a local
// package folder, and Hermes's own plugin installer and a pip package. Each
// path runs one question open and closed through what it installed, then
// uninstalls it, and the installer and doctor are checked to know about it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { newTask, ROOT } from "../worker/helpers.js";
import { startAnthropicMock } from "./mock-anthropic.js";
import { startResponsesMock } from "./mock-openai.js";
import { CLAUDE, CODEX, has } from "./clis.js";
import { startLive } from "./harness.js";
import { claudeEnv, startClaude } from "./claude.js";
import { startCodex, writeCodexConfig } from "./codex.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const terms = [];
let live;

before(async () => {
  live = await startLive("installs", { NOTIFY_DELAY_MS: "60000" });
});
after(async () => {
  for (const t of terms) t.stop();
  await live?.stop();
});

/** A fresh home of its own inside the suite's, with a work folder. */
function freshHome(name) {
  const home = mkdtempSync(join(live.home, `${name}-`));
  mkdirSync(join(home, "work"));
  return { home, cwd: join(home, "work") };
}

/** report-prompt's doctor and installer, run as that home's user. */
const reporter = (env, args) => spawnSync(REPORTER, args, { env, encoding: "utf8" });

test("Claude Code: `claude plugin install needs-you@needs-you` from this repository reports a permission and its close; install and doctor know the plugin; uninstall takes it away", { skip: !has(CLAUDE) && "Claude Code is not installed" }, async () => {
  const { home, cwd } = freshHome("claude");
  const model = await startAnthropicMock();
  try {
    const task = await newTask(live.w, live.owner.token, { name: "claude by plugin" });
    const vars = claudeEnv({ ...live, home, cwd }, model, task, REPORTER, {}, { plugin: true });
    const env = { ...vars, HOME: home };
    // The plugin is there, and validates as Claude Code itself reads it.
    const validated = spawnSync(CLAUDE, ["plugin", "validate", ROOT], { env, encoding: "utf8" });
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
    const settings = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    assert.equal(settings.enabledPlugins["needs-you@needs-you"], true);
    assert.equal(settings.hooks, undefined, "no settings hooks beside the plugin");
    // The installer will not add a second set of hooks; doctor names the plugin.
    const twice = reporter(env, ["install", "--cli", "claude-code"]);
    assert.equal(twice.status, 1);
    assert.match(twice.stderr, /plugin is installed and enabled/);
    assert.equal(JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8")).hooks, undefined, "nothing changed");
    const doctor = reporter(env, ["doctor"]);
    assert.match(doctor.stdout, /claude-code reports through the needs-you plugin \(needs-you@needs-you\)/);

    const term = await startClaude(`needs-you-live-installs-claude-${process.pid}`, cwd, vars);
    terms.push(term);
    model.next({ tool: "Bash", input: { command: "rm -rf build", description: "Remove the build folder" } });
    model.next({ text: "Removed the build folder." });
    await term.type("clean the build");
    await term.waitFor(/Do you want to proceed/);
    const [q] = await live.listUntil((l) => l.length === 1, 15_000);
    assert.equal(q.kind, "permission");
    assert.equal(q.task_name, "claude by plugin");
    assert.equal(q.text, "Remove the build folder\n$ rm -rf build");
    term.key("Enter"); // 1. Yes
    await live.listUntil((l) => l.length === 0);
    assert.equal(await live.reason(q.question_id), "tool_ran");
    term.stop();

    execFileSync(CLAUDE, ["plugin", "uninstall", "needs-you@needs-you"], { env, stdio: "pipe" });
    execFileSync(CLAUDE, ["plugin", "marketplace", "remove", "needs-you"], { env, stdio: "pipe" });
    const after = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    assert.notEqual(after.enabledPlugins?.["needs-you@needs-you"], true);
    assert.doesNotMatch(reporter(env, ["doctor"]).stdout, /through the needs-you plugin/);
    assert.equal(reporter(env, ["install", "--cli", "claude-code", "--dry-run"]).status, 0, "settings hooks may go in now");
  } finally {
    await model.stop();
  }
});

test("Codex: `codex plugin add needs-you@needs-you` from this repository's marketplace reports a permission and its close, once its hooks are trusted; remove takes it away", { skip: !has(CODEX) && "Codex is not installed" }, async () => {
  const { home, cwd } = freshHome("codex");
  const model = await startResponsesMock();
  try {
    const codexHome = join(home, ".codex");
    mkdirSync(codexHome);
    writeCodexConfig(codexHome, model, cwd);
    const task = await newTask(live.w, live.owner.token, { name: "codex by plugin" });
    const env = {
      HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: "mock", TERM: "xterm-256color",
      PATH: `${join(REPORTER, "..")}:${process.env.PATH}`,
      NEEDS_YOU_URL: live.w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_STATE_DIR: join(home, "state"),
    };
    execFileSync(CODEX, ["plugin", "marketplace", "add", ROOT], { env, stdio: "pipe" });
    execFileSync(CODEX, ["plugin", "add", "needs-you@needs-you"], { env, stdio: "pipe" });
    assert.match(readFileSync(join(codexHome, "config.toml"), "utf8"), /\[plugins\."needs-you@needs-you"\]\s*enabled = true/);
    const twice = reporter(env, ["install", "--cli", "codex", "--path", join(codexHome, "hooks.json")]);
    assert.equal(twice.status, 1);
    assert.match(twice.stderr, /plugin is installed and enabled/);
    assert.ok(!existsSync(join(codexHome, "hooks.json")), "nothing written");
    assert.match(reporter(env, ["doctor"]).stdout, /codex reports through the needs-you plugin/);

    const term = await startCodex(`needs-you-live-installs-codex-${process.pid}`, cwd, env);
    terms.push(term);
    model.next({ shell: "rm -rf build" });
    await term.type("clean the build");
    await term.waitFor(/Would you like to run the following command/);
    const [q] = await live.listUntil((l) => l.length === 1, 15_000);
    assert.equal(q.kind, "permission");
    assert.equal(q.task_name, "codex by plugin");
    assert.match(q.text, /rm -rf build/);
    term.key("Escape");
    await live.listUntil((l) => l.length === 0);
    term.stop();

    execFileSync(CODEX, ["plugin", "remove", "needs-you@needs-you"], { env, stdio: "pipe" });
    execFileSync(CODEX, ["plugin", "marketplace", "remove", "needs-you"], { env, stdio: "pipe" });
    assert.doesNotMatch(readFileSync(join(codexHome, "config.toml"), "utf8"), /needs-you@needs-you"\]\s*enabled = true/);
    assert.doesNotMatch(reporter(env, ["doctor"]).stdout, /through the needs-you plugin/);
  } finally {
    await model.stop();
  }
});
