// The real Hermes (PyPI, pinned; scripts/setup-live.sh), its classic CLI in a
// real tmux, against a mock OpenAI-compatible model on 127.0.0.1, with our
// plugin installed by the real report-prompt, reporting to the Worker in
// Miniflare.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { newTask, ROOT, sleep } from "../worker/helpers.js";
import { startChatMock } from "./mock-chat.js";
import { HERMES, has } from "./clis.js";
import { answerFromAfar, busyPromptNeverTyped, commandNeverTyped, inTmux, oneShotIsSilent, startLive } from "./harness.js";
import { writeHermesHome } from "./hermes.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const skip = !has(HERMES) && "Hermes is not installed (bash scripts/setup-live.sh)";
const PROMPT = /^\s*❯ *$/m; // the empty prompt line; choice panels have "❯ 1. …"

let live, w, model, owner, task, home, term, vars;
let listUntil, reason;
const figures = {};

before(async () => {
  if (skip) return;
  live = await startLive("hermes", { NOTIFY_DELAY_MS: "60000" });
  ({ w, owner, home, listUntil, reason } = live);
  task = await newTask(w, owner.token, { name: "live hermes" });
  model = await startChatMock();
  const hermesHome = join(home, ".hermes");
  const cwd = live.cwd;
  writeHermesHome(hermesHome, model);
  execFileSync(REPORTER, ["install", "--cli", "hermes"], { env: { ...process.env, HOME: home, HERMES_HOME: hermesHome } });
  vars = {
    HOME: home, HERMES_HOME: hermesHome, TERM: "xterm-256color", PATH: process.env.PATH,
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
  };
  term = inTmux(`needs-you-live-hermes-${process.pid}`, cwd, vars, `${HERMES} --cli`);
  await term.waitFor(PROMPT, 60_000);
});

after(async () => {
  if (Object.keys(figures).length) console.log(`# figures ${JSON.stringify(figures)}`);
  term?.stop();
  await model?.stop();
  await live?.stop();
});


test("a clarify with choices is listed with them, and closes when answered", { skip }, async () => {
  model.next({ tool: "clarify", input: { question: "Which color do you want?", choices: ["red", "blue"] } });
  model.next({ text: "Blue it is." });
  await term.type("paint it");
  await term.waitFor(/Hermes needs your input/);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1);
  figures.hermes_clarify_listed_ms = Date.now() - shown;
  assert.deepEqual([q.kind, q.cli, q.text, q.options.map((o) => o.label)], ["dialog", "hermes", "Which color do you want?", ["red", "blue"]]);
  term.key("2");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  await term.waitFor(/Blue it is/);
});

test("a dangerous command's approval is listed with what it does, and closes when denied", { skip }, async () => {
  model.next({ tool: "terminal", input: { command: "rm -rf build" } });
  model.next({ text: "I left the build folder alone." });
  await term.type("clean the build");
  await term.waitFor(/Dangerous Command/);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1);
  figures.hermes_approval_listed_ms = Date.now() - shown;
  assert.deepEqual([q.kind, q.text], ["permission", "recursive delete\n$ rm -rf build"]);
  term.key("4"); // Deny
  await listUntil((l) => l.length === 0);
  await term.waitFor(/left the build folder alone/);
});

test("Ctrl-C on a clarify closes it as interrupted, not answered", { skip }, async () => {
  model.next({ tool: "clarify", input: { question: "Which region?", choices: ["eu", "us"] } });
  await term.type("deploy");
  await term.waitFor(/Hermes needs your input/);
  const [q] = await listUntil((l) => l.length === 1);
  term.key("C-c");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "interrupted");
  // The interrupted turn may or may not ask the model once more.
  await sleep(1500);
  if (model.waiting() > 0) model.next({ text: "Stopping here." });
  await term.waitFor(PROMPT);
  assert.equal(model.queued(), 0);
});

test("a reply answered from afar is typed into Hermes's prompt, and the plugin closes it; one it would run as a command is never typed", { skip }, async () => {
  figures.answer_to_closed_ms = (await answerFromAfar(live, term, model)).ms;
  await commandNeverTyped(live, term, model);
});

test("a reply answered from afar while Hermes's prompt holds a draft is refused, and not one key of it joins the draft", { skip }, async () => {
  await busyPromptNeverTyped(live, term, model, { on: "x", shown: /^❯ x\s*$/m, off: "BSpace" });
});

test("a reply ending with a question is listed; /quit closes it", { skip }, async () => {
  model.next({ text: "I updated the code. Shall I also update the docs?" });
  await term.type("update the code");
  const [q] = await listUntil((l) => l.length === 1, 20_000);
  assert.deepEqual([q.kind, q.text], ["reply", "I updated the code. Shall I also update the docs?"]);
  await term.type("/quit");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "session_end");
});

test("a run for one prompt (`hermes chat -q`) whose reply ends with a question reports nothing and prints nothing of ours", { skip }, async () => {
  await oneShotIsSilent(live, {
    command: HERMES, args: ["chat", "-q", "update the code"], env: vars,
    say: (text) => model.next({ text }),
  });
});
