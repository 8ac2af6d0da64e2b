// The real Gemini CLI (npm, pinned; scripts/setup-live.sh) in a real tmux,
// offline against a mock of the Gemini API on 127.0.0.1
// (GOOGLE_GEMINI_BASE_URL), with our hooks installed by the real
// report-prompt, reporting to the Worker in Miniflare. Its settings turn
// environment-variable redaction on, which drops our credential from the
// hooks' environment (and from the model's shell commands), with the
// content key's file beside it: the hooks read every task variable from
// Gemini CLI's own, and so seal what they report.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newTask, ROOT } from "../worker/helpers.js";
import { startGeminiMock } from "./mock-gemini.js";
import { GEMINI, has } from "./clis.js";
import { answerFromAfar, commandNeverTyped, inTmux, oneShotIsSilent, busyPromptNeverTyped, startLive } from "./harness.js";
import { keepFixtures, recorded } from "./fixtures.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const skip = !has(GEMINI) && "Gemini CLI is not installed (bash scripts/setup-live.sh)";

let live, w, model, owner, task, home, cwd, term;
let listUntil, reason;
const figures = {};

/** Gemini CLI's environment for a run against the mock. CI must be unset: with it, Gemini CLI runs for one prompt. */
const geminiEnv = (at = home) => ({
  HOME: at, TERM: "xterm-256color", PATH: process.env.PATH,
  GEMINI_API_KEY: "mock", GOOGLE_GEMINI_BASE_URL: model.url,
});

/**
 * Settings a person who signed in with an API key would have in `at`, folder
 * trust on (Gemini CLI's default), with `trusted` as their one trusted folder
 * (none if not given) and variable redaction as `redaction` says.
 */
function settings(at, { trusted, redaction }) {
  const dir = join(at, ".gemini");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "settings.json"), JSON.stringify({
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: true }, environmentVariableRedaction: { enabled: redaction } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false },
  }));
  writeFileSync(join(dir, "trustedFolders.json"), JSON.stringify(trusted ? { [trusted]: "TRUST_FOLDER" } : {}));
}

before(async () => {
  if (skip) return;
  live = await startLive("gemini", { NOTIFY_DELAY_MS: "60000" });
  ({ w, owner, home, cwd, listUntil, reason } = live);
  task = await newTask(w, owner.token, { name: "live gemini" });
  model = await startGeminiMock();
  settings(home, { trusted: cwd, redaction: true });
  execFileSync(REPORTER, ["install", "--cli", "gemini"], { env: { ...process.env, HOME: home } });
  const installed = JSON.parse(readFileSync(join(home, ".gemini", "settings.json"), "utf8"));
  // Kept there, the credential would reach every command the model runs.
  assert.equal(installed.security.environmentVariableRedaction.allowed, undefined);
  term = inTmux(`needs-you-live-gemini-${process.pid}`, cwd, {
    ...geminiEnv(),
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
    // A machine logged in with `pair`'s line seals; the redaction drops this name too.
    NEEDS_YOU_CONTENT_KEYS: live.keysFile,
    NEEDS_YOU_RECORD_DIR: recorded(home),
  }, GEMINI);
  await term.waitFor(/Type your message/, 60_000);
});

after(async () => {
  if (Object.keys(figures).length) console.log(`# figures ${JSON.stringify(figures)}`);
  term?.stop();
  keepFixtures(home, "gemini");
  await model?.stop();
  await live?.stop();
});

const DIALOG = /Allow execution of/;

const shell = (command) => ({ tool: "run_shell_command", input: { command, description: "Touch a file" } });

test("a reply streamed in pieces that ends with a question is listed with the model's text exactly, and a new prompt closes it", { skip }, async () => {
  const reply = "I updated the code. Shall I also update the docs?";
  model.next({ chunks: ["I updated the code. ", "Shall I also ", "update the docs?"] });
  await term.type("update the code");
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.cli, q.text, q.who], ["reply", "gemini", reply, "Gemini CLI asked in a reply"]);
  // Gemini CLI's own AfterAgent says it otherwise: the transcript is read.
  assert.notEqual(JSON.parse(readFileSync(join(recorded(home), "gemini.AfterAgent.json"), "utf8")).prompt_response, reply);
  assert.equal(q.answerable, true, JSON.stringify(q.terminal));
  model.next({ text: "Not now, then." });
  await term.type("no, leave the docs");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "prompt_submitted");
  await term.waitFor(/Not now, then\./);
});

test("a shell permission is listed with its command, and closes when allowed in the terminal, the command having run", { skip }, async () => {
  const file = join(cwd, "allowed");
  model.next(shell(`touch ${file}`));
  model.next({ text: "Made it." });
  await term.type("make the file");
  await term.waitFor(DIALOG);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1);
  figures.gemini_permission_listed_ms = Date.now() - shown;
  assert.deepEqual([q.kind, q.text, q.who], ["permission", `Confirm Shell Command\n$ touch ${file}`, "Gemini CLI needs your permission"]);
  assert.deepEqual([q.answer_from_afar, q.why_not], [null, "Gemini CLI takes its answer only in its terminal"]);
  term.key("Enter"); // 1. Allow once
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "tool_ran");
  await term.waitFor(/Made it\./);
  assert.ok(existsSync(file), "the command ran");
});

test("under variable redaction the hooks report sealed, and a command the model runs never gets the task credential or the content key", { skip }, async () => {
  const file = join(cwd, "environment-seen");
  model.next(shell(`env > ${file}`));
  model.next({ text: "Listed it." });
  await term.type("show the environment");
  await term.waitFor(DIALOG);
  const [q] = await listUntil((l) => l.length === 1);
  assert.equal(q.kind, "permission");
  // The hook found the content key the redaction hid from it: the command
  // and the folder never reached the server readable.
  assert.equal(q.sealed, true, JSON.stringify(q));
  assert.equal(q.text, `Confirm Shell Command\n$ env > ${file}`, "opened on the device");
  const row = JSON.stringify(await w.db.prepare("SELECT * FROM questions WHERE id = ?").bind(q.question_id).first());
  assert.ok(!row.includes("environment-seen") && !row.includes(cwd), row);
  term.key("Enter"); // 1. Allow once
  await listUntil((l) => l.length === 0);
  await term.waitFor(/Listed it\./);
  const seen = readFileSync(file, "utf8");
  assert.match(seen, /^NEEDS_YOU_URL=/m, "the command ran with the agent's other variables");
  assert.doesNotMatch(seen, /NEEDS_YOU_TOKEN|nyt_|NEEDS_YOU_CONTENT_KEYS/);
});

test("a shell permission denied with Esc closes as interrupted (its transcript says so: no hook fires), and its command never runs", { skip }, async () => {
  const file = join(cwd, "denied");
  model.next(shell(`touch ${file}`));
  await term.type("make the other file");
  await term.waitFor(DIALOG);
  const [q] = await listUntil((l) => l.length === 1);
  // Kept apart: the question's dialog fires a `Notification` of its own later.
  cpSync(join(recorded(home), "gemini.Notification.json"), join(recorded(home), "gemini.Notification_ToolPermission.json"));
  term.key("Escape");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "interrupted");
  await term.waitFor(/Request cancelled/);
  assert.equal(existsSync(file), false, "never ran");
});

test("the model's question is listed with its choices, and closes when answered in the terminal", { skip }, async () => {
  model.next({ tool: "ask_user", input: { questions: [{ question: "Which colour do you prefer?", header: "Colour", type: "choice",
    options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }] } });
  model.next({ text: "Red it is." });
  await term.type("pick a colour");
  await term.waitFor(/Which colour do you prefer\?/);
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text, q.options.map((o) => o.label)], ["dialog", "Which colour do you prefer?", ["Red", "Blue"]]);
  term.key("Enter"); // 1. Red
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  await term.waitFor(/Red it is\./);
});

test("a reply answered from afar is typed into Gemini CLI's prompt and reaches the model", { skip }, async () => {
  const { ms } = await answerFromAfar(live, term, model);
  figures.gemini_answer_typed_ms = ms;
});

test("an answer Gemini CLI would run as a shell command is refused and never typed", { skip }, async () => {
  await commandNeverTyped(live, term, model);
});

test("a run for one prompt (`gemini -p`) reports nothing and prints nothing of ours", { skip }, async () => {
  await oneShotIsSilent(live, {
    command: GEMINI, args: ["-p", "update the code"], env: {
      ...geminiEnv(), NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state-one-shot"),
    },
    say: (text) => model.next({ text }),
  });
});

test("a reply answered from afar while Gemini CLI's prompt is in its shell mode is refused, and nothing of it runs", { skip }, async () => {
  await busyPromptNeverTyped(live, term, model, { on: "!", shown: /shell mode enabled/, off: "Escape" });
});

test("/quit closes what is open", { skip }, async () => {
  model.next({ text: "All set. Anything else?" });
  await term.type("finish up");
  const [q] = await listUntil((l) => l.length === 1);
  await term.type("/quit");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "session_end");
});

test("through our extension (`gemini extensions install`), under variable redaction, in a folder the person did not trust (where Gemini CLI skips the hooks in settings): a shell permission is listed, and closes when allowed", { skip }, async () => {
  const at = join(home, "extension-home");
  const folder = join(at, "not-trusted");
  mkdirSync(folder, { recursive: true });
  settings(at, { redaction: true });
  // It asks whether to trust the extension's source, and trusts the folder
  // it was run in too: a folder beside the one the agent runs in.
  const from = join(home, "installed-from");
  mkdirSync(from, { recursive: true });
  execFileSync(GEMINI, ["extensions", "install", join(ROOT, "plugins", "gemini"), "--consent"], {
    cwd: from, env: geminiEnv(at), input: "y\n", stdio: ["pipe", "pipe", "pipe"], timeout: 60_000,
  });
  assert.ok(existsSync(join(at, ".gemini", "extensions", "needs-you", "hooks", "hooks.json")));
  const trusted = Object.keys(JSON.parse(readFileSync(join(at, ".gemini", "trustedFolders.json"), "utf8")));
  assert.ok(!trusted.some((t) => folder.startsWith(t)), `${folder} is not trusted: ${trusted}`);
  const ext = inTmux(`needs-you-live-gemini-ext-${process.pid}`, folder, {
    ...geminiEnv(at),
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(at, "state"),
    NEEDS_YOU_REPORTER: REPORTER,
  }, GEMINI);
  try {
    // At its start Gemini CLI asks whether to trust the folder (drawn before
    // or after its prompt): the person says no.
    await ext.waitFor(/Do you trust the files in this folder\?/, 60_000);
    ext.key("3"); // 3. Don't trust
    await ext.waitFor(/Type your message[\s\S]*untrusted/);
    const file = join(folder, "made");
    model.next(shell(`touch ${file}`));
    model.next({ text: "Made it." });
    await ext.type("make the file");
    await ext.waitFor(DIALOG);
    const [q] = await listUntil((l) => l.length === 1);
    assert.deepEqual([q.kind, q.cli, q.text], ["permission", "gemini", `Confirm Shell Command\n$ touch ${file}`]);
    ext.key("Enter"); // 1. Allow once
    await listUntil((l) => l.length === 0);
    assert.equal(await reason(q.question_id), "tool_ran");
    await ext.waitFor(/Made it\./);
    assert.ok(existsSync(file), "the command ran");
  } finally {
    ext.stop();
  }
});
