// The real OpenCode (npm, pinned; scripts/setup-live.sh) in a real tmux,
// against a mock OpenAI-compatible model on 127.0.0.1, with our plugin
// installed by the real report-prompt, reporting to the Worker in Miniflare.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { takesRequest } from "../support/request.js";
import { call, newTask, ROOT, sleep, waitFor } from "../worker/helpers.js";
import { startChatMock } from "./mock-chat.js";
import { OPENCODE, has } from "./clis.js";
import { answerFromAfar, commandNeverTyped, inTmux, oneShotIsSilent, busyPromptNeverTyped, startLive } from "./harness.js";
import { writeOpencodeConfig } from "./opencode.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const skip = !has(OPENCODE) && "OpenCode is not installed (bash scripts/setup-live.sh)";

let live, w, model, owner, task, home, term, vars;
let list, listUntil, reason;
const figures = {};

before(async () => {
  if (skip) return;
  live = await startLive("opencode", { NOTIFY_DELAY_MS: "60000" });
  ({ w, owner, home, list, listUntil, reason } = live);
  task = await newTask(w, owner.token, { name: "live opencode" });
  model = await startChatMock();
  const config = join(home, ".config");
  const cwd = live.cwd;
  writeOpencodeConfig(config, model);
  execFileSync(REPORTER, ["install", "--cli", "opencode"], { env: { ...process.env, HOME: home, XDG_CONFIG_HOME: config } });
  vars = {
    HOME: home, XDG_CONFIG_HOME: config, TERM: "xterm-256color", PATH: process.env.PATH,
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
  };
  term = inTmux(`needs-you-live-opencode-${process.pid}`, cwd, vars, `${OPENCODE}`);
  await term.waitFor(/Ask anything/, 60_000);
});

after(async () => {
  if (Object.keys(figures).length) console.log(`# figures ${JSON.stringify(figures)}`);
  term?.stop();
  await model?.stop();
  await live?.stop();
});


let mainSession;

test("a permission is listed with its command, and closes when allowed", { skip }, async () => {
  model.next({ tool: "bash", input: { command: "rm -rf build", description: "Remove the build folder" } });
  model.next({ text: "Removed." });
  await term.type("clean the build");
  await term.waitFor(/Permission required/);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1);
  figures.opencode_permission_listed_ms = Date.now() - shown;
  mainSession = q.session;
  assert.deepEqual([q.kind, q.cli, q.text], ["permission", "opencode", "bash: rm -rf build"]);
  term.key("Enter"); // Allow once
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  await term.waitFor(/Removed\./);
});

test("a question dialog is listed with its options, and closes when answered", { skip }, async () => {
  model.next({ tool: "question", input: { questions: [{ question: "Which package manager?", header: "Pkg",
    options: [{ label: "bun", description: "fast" }, { label: "npm", description: "default" }] }] } });
  model.next({ text: "Using bun." });
  await term.type("set up the project");
  await term.waitFor(/Which package manager/);
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text, q.options.map((o) => o.label)], ["dialog", "Which package manager?", ["bun", "npm"]]);
  term.key("Enter");
  await sleep(500);
  if (/Which package manager/.test(term.screen())) term.key("Enter"); // a confirm step, if shown
  await listUntil((l) => l.length === 0);
  await term.waitFor(/Using bun/);
});

test("a subagent's permission is listed under the person's session", { skip }, async () => {
  model.next({ tool: "task", input: { description: "Clean up", prompt: "Remove the dist folder", subagent_type: "general" } });
  model.next({ tool: "bash", input: { command: "rm -rf dist", description: "Remove dist" } }); // the subagent's turn
  model.next({ text: "Removed dist." }); // the subagent ends
  model.next({ text: "The subagent cleaned up." }); // the person's session goes on
  await term.type("delegate the clean-up");
  await term.waitFor(/Permission required/);
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text], ["permission", "bash: rm -rf dist"]);
  assert.equal(q.session, mainSession, "under the session the person is in");
  term.key("Enter");
  await listUntil((l) => l.length === 0);
  await term.waitFor(/The subagent cleaned up/, 20_000);
});

test("a reply interrupted mid-stream is judged by the text it streamed", { skip }, async () => {
  model.next({ partial: ["I found the bug. ", "Shall I fix it?"] });
  await term.type("look for the bug");
  await term.waitFor(/Shall I fix it\?/);
  term.key("Escape");
  await sleep(300);
  term.key("Escape");
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text], ["reply", "I found the bug. Shall I fix it?"]);
  model.next({ text: "Fixed." });
  await term.type("yes");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "prompt_submitted");
  await term.waitFor(/Fixed\./);
});

test("a reply answered from afar is typed into OpenCode's prompt, and the plugin closes it; one it would run as a command is never typed", { skip }, async () => {
  figures.answer_to_closed_ms = (await answerFromAfar(live, term, model)).ms;
  await commandNeverTyped(live, term, model);
});

test("a reply answered from afar while OpenCode's prompt is in its shell mode is refused, and nothing of it runs", { skip }, async () => {
  await busyPromptNeverTyped(live, term, model, { on: "!", shown: /exit shell mode/, off: "Escape" });
});

// ---- decisions and choices from afar, handed to OpenCode by our plugin

/** The open question once it takes `form` from afar. */
async function takes(form) {
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === form);
  assert.match(q.digest, /^[0-9a-f]{64}$/);
  return q;
}
const answerFor = (q, body) => live.answer(q, body);
const answerState = async (q) => (await w.db.prepare("SELECT state FROM answers WHERE question_id = ?").bind(q.question_id).first())?.state;
/** The text of the tool results OpenCode sent the model last. */
const lastToolResult = () => JSON.stringify((model.requests.at(-1)?.messages ?? []).filter((m) => m.role === "tool"));
const waiters = () => spawnSync("pgrep", ["-f", `${REPORTER} __await`], { encoding: "utf8" }).stdout.trim();

test("a permission allowed from afar runs its command once, through OpenCode's own reply", { skip }, async () => {
  const file = join(live.cwd, "allowed-from-afar");
  model.next({ tool: "bash", input: { command: `touch ${file}`, description: "Make the file" } });
  model.next({ text: "Made the file." });
  await term.type("make the file");
  await term.waitFor(/Permission required/);
  const q = await takes("decision");
  assert.ok(waiters(), "the plugin waits for an answer from afar");
  const posted = Date.now();
  assert.equal((await answerFor(q, { decision: "allow", digest: q.digest })).status, 201);
  assert.ok(await waitFor(() => existsSync(file), 10_000), "the command ran");
  figures.opencode_allow_ran_ms = Date.now() - posted;
  await term.waitFor(/Made the file/);
  await listUntil((l) => l.length === 0);
  assert.ok(await waitFor(async () => (await answerState(q)) === "taken", 5000), await answerState(q));
  assert.ok(await waitFor(() => !waiters(), 5000), "no waiter is left");
});

test("a permission denied from afar does not run, and OpenCode goes on with the person's message", { skip }, async () => {
  const file = join(live.cwd, "denied-from-afar");
  model.next({ tool: "bash", input: { command: `touch ${file}`, description: "Make another file" } });
  model.next({ text: "Understood, I left it." });
  await term.type("make another file");
  await term.waitFor(/Permission required/);
  const q = await takes("decision");
  assert.equal((await answerFor(q, { decision: "deny", message: "not on a Friday", digest: q.digest })).status, 201);
  await term.waitFor(/Understood, I left it/, 20_000);
  assert.equal(existsSync(file), false, "the command did not run");
  assert.match(lastToolResult(), /not on a Friday/);
  await listUntil((l) => l.length === 0);
  assert.equal(await answerState(q), "taken");
});

test("OpenCode's own \"always\" chosen from afar runs the command, and the next one its patterns cover asks nothing", { skip }, async () => {
  const first = join(live.cwd, "always-1");
  const second = join(live.cwd, "always-2");
  // mkdir, which no later test runs: "always" lasts until OpenCode quits.
  model.next({ tool: "bash", input: { command: `mkdir ${first}`, description: "Make a folder" } });
  model.next({ text: "Made it." });
  await term.type("make a folder, always");
  await term.waitFor(/Permission required/);
  const q = await takes("decision");
  const keep = q.decisions.filter((d) => d.lasting);
  assert.equal(keep.length, 1, JSON.stringify(q.decisions));
  assert.equal(keep[0].rule, "bash: mkdir *", "OpenCode's own pattern, of its kind");
  assert.equal(keep[0].scope, "until_quit");
  const made = await answerFor(q, { decision: `keep-${"1".repeat(16)}`, digest: q.digest });
  assert.deepEqual([made.status, made.body.error], [409, "not_offered"]);
  assert.equal((await answerFor(q, { decision: keep[0].id, digest: q.digest })).status, 201);
  assert.ok(await waitFor(() => existsSync(first), 10_000), "the command ran");
  await term.waitFor(/Made it/);
  await listUntil((l) => l.length === 0);
  assert.ok(await waitFor(async () => (await answerState(q)) === "taken", 5000));
  const rules = (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules;
  assert.deepEqual(rules.map((r) => [r.rule, r.scope, r.cli]), [[keep[0].rule, "until_quit", "opencode"]]);

  model.next({ tool: "bash", input: { command: `mkdir ${second}`, description: "Make another" } });
  model.next({ text: "Made another." });
  await term.type("make another folder");
  await term.waitFor(/Made another\./, 20_000);
  assert.ok(existsSync(second), "ran with no dialog");
  assert.deepEqual(await list(), []);
});

test("a question answered from afar hands OpenCode the chosen labels", { skip }, async () => {
  model.next({ tool: "question", input: { questions: [
    { question: "Which package manager?", header: "Pkg", options: [{ label: "bun", description: "fast" }, { label: "npm", description: "default" }] },
    { question: "Which checks?", header: "Checks", multiple: true, options: [{ label: "lint", description: "style" }, { label: "types", description: "tsc" }, { label: "tests", description: "unit" }] },
  ] } });
  model.next({ text: "Set up as you chose." });
  await term.type("set up the project from afar");
  await term.waitFor(/Which package manager/);
  const q = await takes("choices");
  assert.deepEqual(q.questions.map((x) => x.multi_select), [false, true]);
  assert.equal((await answerFor(q, { choices: [["npm"], ["lint", "tests"]], digest: q.digest })).status, 201);
  await term.waitFor(/Set up as you chose/, 20_000);
  const result = lastToolResult();
  assert.match(result, /npm/);
  assert.match(result, /lint, tests|lint.*tests/);
  await listUntil((l) => l.length === 0);
  assert.ok(await waitFor(async () => (await answerState(q)) === "taken", 5000));
});

test("answered in the terminal first: the plugin ends its waiter, and a later allow from afar is refused", { skip }, async () => {
  model.next({ tool: "bash", input: { command: "touch terminal-first", description: "Make a third file" } });
  model.next({ text: "Made the third file." });
  await term.type("make a third file");
  await term.waitFor(/Permission required/);
  const q = await takes("decision");
  assert.ok(waiters());
  term.key("Enter"); // Allow once, at the terminal
  await term.waitFor(/Made the third file/);
  assert.ok(await waitFor(() => !waiters(), 5000), "the waiter ended");
  await listUntil((l) => l.length === 0);
  const late = await answerFor(q, { decision: "allow", digest: q.digest });
  assert.deepEqual([late.status, late.body.error], [409, "closed"]);
});

test("a card forged with the task credential cannot steer an allow: the plugin's waiter takes only the request it waits on", { skip }, async () => {
  const file = join(live.cwd, "pwned");
  model.next({ tool: "bash", input: { command: `touch ${file}`, description: "Make a fourth file" } });
  model.next({ text: "Made the fourth file." });
  await term.type("make a fourth file");
  await term.waitFor(/Permission required/);
  const q = await takes("decision");
  assert.match(q.text, new RegExp(`touch ${file}`));
  const forge = (fields) => call(w, "POST", "/v1/reports", { token: task.credential, body: { cli: "opencode",
    session: q.session, seq: Date.now() * 1000 + 1000, action: "open", kind: "permission", ...fields } });
  const harmless = { id: "per_forged", sessionID: q.session, permission: "bash", patterns: ["echo harmless"],
    metadata: { command: "echo harmless" } };
  // The real request's digest beside harmless words: refused.
  const lie = await forge({ text: "bash: echo harmless", takes: "decision", digest: q.digest,
    request: { tool: "opencode.permission", input: harmless } });
  assert.deepEqual([lie.status, lie.body.error], [400, "digest_mismatch"]);
  // A harmless request of its own: listed as what it is; its allow reaches no waiter.
  const forged = await forge(takesRequest("decision", "opencode.permission", harmless));
  assert.equal(forged.status, 200, forged.text);
  const [shown] = await listUntil((l) => l.length === 1 && l[0].question_id === forged.body.question_id);
  assert.equal(shown.text, "bash: echo harmless");
  assert.equal((await answerFor(shown, { decision: "allow", digest: shown.digest })).status, 201);
  const failed = await waitFor(async () => {
    const row = await w.db.prepare("SELECT state, reason_code FROM answers WHERE question_id = ?").bind(shown.question_id).first();
    return row?.state === "failed" && row;
  }, 10_000);
  assert.equal(failed.reason_code, "not_this_request");
  await sleep(1000);
  assert.equal(existsSync(file), false, "the real command did not run");
  assert.ok(waiters(), "the real dialog still waits");
  term.key("Enter"); // Allow once, at the terminal: the person's own answer
  await term.waitFor(/Made the fourth file/);
  await listUntil((l) => l.length === 0);
});

test("a reply ending with a question is listed; quitting OpenCode closes it", { skip }, async () => {
  model.next({ text: "I updated the code. Shall I also update the docs?" });
  await term.type("update the code");
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text], ["reply", "I updated the code. Shall I also update the docs?"]);
  await term.type("/exit");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "session_end");
});

test("a run for one prompt (`opencode run`) whose reply ends with a question reports nothing and prints nothing of ours", { skip }, async () => {
  await oneShotIsSilent(live, {
    command: OPENCODE, args: ["run", "update the code"], env: vars,
    say: (text) => model.next({ text }),
  });
});
