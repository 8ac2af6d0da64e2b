// Installing needs-you the way each CLI's users install things, with the real
// CLIs in throwaway homes: Claude Code's and Codex's own plugin commands from
// this repository's marketplaces, OpenCode's npm-package plugin from a local
// package folder, and Hermes's own plugin installer and a pip package. Each
// path runs one question open and closed through what it installed, then
// uninstalls it, and the installer and doctor are checked to know about it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newTask, ROOT } from "../worker/helpers.js";
import { startAnthropicMock } from "./mock-anthropic.js";
import { startResponsesMock } from "./mock-openai.js";
import { startChatMock } from "./mock-chat.js";
import { CLAUDE, CODEX, HERMES, OPENCODE, has } from "./clis.js";
import { inTmux, startLive } from "./harness.js";
import { writeOpencodeConfig } from "./opencode.js";
import { writeHermesHome } from "./hermes.js";
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

/**
 * A copy of this repository's marketplace whose plugins are version 0.0.9
 * and lack the hooks in `lacking` (an event name, in both plugins), as an
 * older needs-you made them; `refresh()` brings the copy up to this tree.
 */
function olderMarketplace(lacking) {
  const dir = mkdtempSync(join(live.home, "marketplace-"));
  const copy = () => {
    for (const path of [".claude-plugin", ".agents", "plugins/claude-code", "plugins/codex"]) {
      cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    }
  };
  copy();
  for (const [plugin, manifest] of [["claude-code", ".claude-plugin"], ["codex", ".codex-plugin"]]) {
    const edit = (path, change) => {
      const file = join(dir, "plugins", plugin, path);
      const v = JSON.parse(readFileSync(file, "utf8"));
      change(v);
      writeFileSync(file, JSON.stringify(v, null, 2));
    };
    edit(`${manifest}/plugin.json`, (m) => { m.version = "0.0.9"; });
    edit("hooks/hooks.json", (h) => { for (const event of lacking) delete h.hooks[event]; });
  }
  return { dir, refresh: copy };
}

/** The `fix:` line doctor printed after the line matching `failed`, as commands. */
function fixAfter(text, failed) {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => failed.test(l));
  assert.ok(at >= 0, text);
  const fix = lines[at + 1].trim().replace(/^fix: /, "");
  return fix.split(", then ").map((c) => c.replace(/ \(.*\)$/, "").split(" "));
}

test("Claude Code: an older version of the plugin is failed by doctor, which names the hooks it lacks; the fix it prints brings the plugin up to date", { skip: !has(CLAUDE) && "Claude Code is not installed" }, () => {
  const { home } = freshHome("claude-older");
  const env = { HOME: home, PATH: process.env.PATH, NEEDS_YOU_URL: live.w.url };
  const older = olderMarketplace(["Elicitation", "SubagentStop"]);
  execFileSync(CLAUDE, ["plugin", "marketplace", "add", older.dir], { env, stdio: "pipe" });
  execFileSync(CLAUDE, ["plugin", "install", "needs-you@needs-you"], { env, stdio: "pipe" });

  const doctor = reporter(env, ["doctor"]);
  assert.equal(doctor.status, 1);
  const failed = /FAIL {2}claude-code: the needs-you plugin's hooks lack Elicitation, SubagentStop \(an older version of the plugin\)/;
  assert.match(doctor.stdout, failed);
  older.refresh();
  for (const [cmd, ...args] of fixAfter(doctor.stdout, failed)) {
    assert.equal(cmd, "claude");
    execFileSync(CLAUDE, args, { env, stdio: "pipe" });
  }
  const mended = reporter(env, ["doctor"]).stdout;
  assert.match(mended, /claude-code reports through the needs-you plugin/);
  assert.doesNotMatch(mended, /lack/);
  // Claude Code kept the older version's folder; doctor reads the one it uses.
  assert.ok(existsSync(join(home, ".claude", "plugins", "cache", "needs-you", "needs-you", "0.0.9")));
});

test("Codex: an older version of the plugin is failed by doctor, which names the hooks it lacks; `codex plugin add` brings it up to date", { skip: !has(CODEX) && "Codex is not installed" }, () => {
  const { home } = freshHome("codex-older");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome);
  const env = { HOME: home, CODEX_HOME: codexHome, PATH: process.env.PATH, NEEDS_YOU_URL: live.w.url };
  const older = olderMarketplace(["Interrupt"]);
  execFileSync(CODEX, ["plugin", "marketplace", "add", older.dir], { env, stdio: "pipe" });
  execFileSync(CODEX, ["plugin", "add", "needs-you@needs-you"], { env, stdio: "pipe" });

  const doctor = reporter(env, ["doctor"]);
  assert.equal(doctor.status, 1);
  const failed = /FAIL {2}codex: the needs-you plugin's hooks lack Interrupt \(an older version of the plugin\)/;
  assert.match(doctor.stdout, failed);
  // A local marketplace is read again by `plugin add`: the fix's last step.
  older.refresh();
  const steps = fixAfter(doctor.stdout, failed);
  assert.deepEqual(steps.at(-1), ["codex", "plugin", "add", "needs-you@needs-you"]);
  execFileSync(CODEX, steps.at(-1).slice(1), { env, stdio: "pipe" });
  const mended = reporter(env, ["doctor"]).stdout;
  assert.match(mended, /codex reports through the needs-you plugin/);
  assert.doesNotMatch(mended, /lack/);
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
      NEEDS_YOU_URL: live.w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
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

test("OpenCode: the npm package plugins/opencode, added by `opencode plugin PATH -g`, loads from its folder and reports a permission and its close", { skip: !has(OPENCODE) && "OpenCode is not installed" }, async () => {
  const { home, cwd } = freshHome("opencode");
  const model = await startChatMock();
  try {
    const config = join(home, ".config");
    writeOpencodeConfig(config, model);
    const task = await newTask(live.w, live.owner.token, { name: "opencode by package" });
    const vars = {
      HOME: home, XDG_CONFIG_HOME: config, TERM: "xterm-256color", PATH: `${join(REPORTER, "..")}:${process.env.PATH}`,
      NEEDS_YOU_URL: live.w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
    };
    const pkg = join(ROOT, "plugins", "opencode");
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    assert.equal(manifest.name, "opencode-needs-you");
    assert.equal(manifest.exports["./server"], "./needs-you.js");
    const added = spawnSync(OPENCODE, ["plugin", pkg, "-g"], { env: vars, encoding: "utf8", cwd, timeout: 60_000 });
    assert.equal(added.status, 0, added.stdout + added.stderr);
    const plugins = JSON.parse(readFileSync(join(config, "opencode", "opencode.json"), "utf8")).plugin;
    assert.ok(plugins.some((p) => String(p).includes("plugins/opencode")), JSON.stringify(plugins));

    const term = inTmux(`needs-you-live-installs-opencode-${process.pid}`, cwd, vars, OPENCODE);
    terms.push(term);
    await term.waitFor(/Ask anything/, 60_000);
    model.next({ tool: "bash", input: { command: "rm -rf build", description: "Remove the build folder" } });
    model.next({ text: "Removed." });
    await term.type("clean the build");
    await term.waitFor(/Permission required/);
    const [q] = await live.listUntil((l) => l.length === 1);
    assert.deepEqual([q.kind, q.cli, q.task_name, q.text], ["permission", "opencode", "opencode by package", "bash: rm -rf build"]);
    term.key("Enter"); // Allow once
    await live.listUntil((l) => l.length === 0);
    assert.equal(await live.reason(q.question_id), "answered");
    term.stop();
  } finally {
    await model.stop();
  }
});

/**
 * A Hermes home for the mock model, then `install(vars)` (our plugin, one
 * way), then Hermes in tmux at its prompt: a clarify through it is listed and
 * closes when answered; then `uninstall(vars)`.
 */
async function hermesClarify(vars, cwd, name, install, uninstall) {
  const model = await startChatMock();
  try {
    writeHermesHome(vars.HERMES_HOME, model);
    install();
    const term = inTmux(`needs-you-live-installs-hermes-${name}-${process.pid}`, cwd, vars, `${HERMES} --cli`);
    terms.push(term);
    await term.waitFor(/^\s*❯ *$/m, 60_000);
    model.next({ tool: "clarify", input: { question: "Which color do you want?", choices: ["red", "blue"] } });
    model.next({ text: "Blue it is." });
    await term.type("paint it");
    await term.waitFor(/Hermes needs your input/);
    const [q] = await live.listUntil((l) => l.length === 1);
    assert.deepEqual([q.kind, q.cli, q.text], ["dialog", "hermes", "Which color do you want?"]);
    term.key("2");
    await live.listUntil((l) => l.length === 0);
    assert.equal(await live.reason(q.question_id), "answered");
    term.stop();
    uninstall();
  } finally {
    await model.stop();
  }
}

function hermesVars(home, task, extra = {}) {
  return {
    HOME: home, HERMES_HOME: join(home, ".hermes"), TERM: "xterm-256color", PATH: `${join(REPORTER, "..")}:${process.env.PATH}`,
    NEEDS_YOU_URL: live.w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"), ...extra,
  };
}

test("Hermes: `hermes plugins install …#plugins/hermes/needs-you --enable` from this repository reports a clarify and its close; doctor sees it; remove takes it away", { skip: !has(HERMES) && "Hermes is not installed" }, async () => {
  const { home, cwd } = freshHome("hermes-git");
  const task = await newTask(live.w, live.owner.token, { name: "hermes by installer" });
  const vars = hermesVars(home, task);
  await hermesClarify(vars, cwd, "git", () => {
    // Hermes clones the repository (its committed files), as it would from GitHub.
    const installed = spawnSync(HERMES, ["plugins", "install", `file://${ROOT}#plugins/hermes/needs-you`, "--enable"], { env: vars, encoding: "utf8", timeout: 120_000 });
    assert.equal(installed.status, 0, installed.stdout + installed.stderr);
    assert.ok(existsSync(join(vars.HERMES_HOME, "plugins", "needs-you", "plugin.yaml")));
    assert.match(readFileSync(join(vars.HERMES_HOME, "config.yaml"), "utf8"), /enabled:\s*\n\s*- needs-you/);
    assert.match(reporter(vars, ["doctor"]).stdout, /ok\s+hermes plugin installed in \S+\n/);
  }, () => {
    const removed = spawnSync(HERMES, ["plugins", "remove", "needs-you"], { env: vars, encoding: "utf8", input: "y\n" });
    assert.equal(removed.status, 0, removed.stdout + removed.stderr);
    assert.ok(!existsSync(join(vars.HERMES_HOME, "plugins", "needs-you")));
  });
});

test("Hermes: the pip package hermes-needs-you (its hermes_agent.plugins entry point), enabled with `hermes plugins enable`, reports a clarify and its close", { skip: !has(HERMES) && "Hermes is not installed" }, async () => {
  const { home, cwd } = freshHome("hermes-pip");
  const task = await newTask(live.w, live.owner.token, { name: "hermes by pip" });
  // Built from a copy, so that the build leaves nothing in the repository.
  const source = join(home, "hermes-needs-you");
  cpSync(join(ROOT, "plugins", "hermes"), source, { recursive: true, filter: (p) => !p.includes("/tests") });
  const target = join(home, "site");
  const pip = spawnSync(join(HERMES, "..", "pip"), ["install", "--quiet", "--disable-pip-version-check", "--target", target, source], { encoding: "utf8", timeout: 300_000 });
  assert.equal(pip.status, 0, pip.stdout + pip.stderr);
  const vars = hermesVars(home, task, { PYTHONPATH: target });
  await hermesClarify(vars, cwd, "pip", () => {
    const enabled = spawnSync(HERMES, ["plugins", "enable", "needs-you"], { env: vars, encoding: "utf8", input: "" });
    assert.equal(enabled.status, 0, enabled.stdout + enabled.stderr);
    const listed = spawnSync(HERMES, ["plugins", "list", "--plain", "--no-bundled"], { env: vars, encoding: "utf8" });
    assert.match(listed.stdout, /enabled\s+entrypoint\s+0\.1\.0\s+needs-you/);
  }, () => {
    const disabled = spawnSync(HERMES, ["plugins", "disable", "needs-you"], { env: vars, encoding: "utf8", input: "" });
    assert.equal(disabled.status, 0, disabled.stdout + disabled.stderr);
  });
});
