// The real Claude Code (npm, pinned; scripts/setup-live.sh) in a real tmux,
// against a mock of its model on 127.0.0.1, with our hooks installed by the
// real report-prompt, reporting to the Worker in Miniflare (real D1, real
// Durable Objects) whose webhook is a real sink. Each scenario drives the
// terminal as a person would and checks the "Needs you" list and the phone.
//
//   node --test tests/live/           (after: bash scripts/setup-live.sh)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, newTask, ROOT, sleep, startSink, waitFor } from "../worker/helpers.js";
import { startAnthropicMock } from "./mock-anthropic.js";
import { CLAUDE, has } from "./clis.js";
import { answerFromAfar, inTmux, startLive } from "./harness.js";
import { keepFixtures, recorded } from "./fixtures.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const DELAY = 4000; // the phone rings a dialog this long after it was reported
const skip = !has(CLAUDE) && `Claude Code is not installed (bash scripts/setup-live.sh)`;
const figures = {};

let live, w, sink, model, term, owner, task, home;
let list, listUntil, reason;

before(async () => {
  if (skip) return;
  live = await startLive("claude", { NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300" });
  ({ w, owner, home, list, listUntil, reason } = live);
  sink = await startSink();
  await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${sink.url}/hook`, secret: "0123456789abcdef" } });
  task = await newTask(w, owner.token, { name: "live claude" });
  model = await startAnthropicMock();
  const cwd = live.cwd;
  const key = `sk-ant-api03-${"k".repeat(80)}`;
  // Straight to the prompt: onboarding done, the key approved, the folder trusted.
  writeFileSync(join(home, ".claude.json"), JSON.stringify({
    hasCompletedOnboarding: true, lastOnboardingVersion: "2.1.332", theme: "dark",
    customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
    hasSeenAutoDefaultNotice: true, hasSeenAutoDefaultNudge: true,
    projects: { [cwd]: { hasTrustDialogAccepted: true, allowedTools: [] } },
  }));
  // Our hooks, installed as a person would; then the manual permission mode,
  // in which Claude Code asks before running a command.
  const env = { ...process.env, HOME: home };
  delete env.CLAUDE_CONFIG_DIR;
  execFileSync(REPORTER, ["install", "--cli", "claude-code"], { env });
  const settingsPath = join(home, ".claude", "settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  writeFileSync(settingsPath, JSON.stringify({ ...settings, permissions: { defaultMode: "default" } }, null, 2));

  const vars = {
    HOME: home, PATH: process.env.PATH, TERM: "xterm-256color",
    ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: 1, DISABLE_AUTOUPDATER: 1, DISABLE_ERROR_REPORTING: 1, DISABLE_BUG_COMMAND: 1,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: 1, CLAUDE_CODE_DISABLE_FEATURE_FLAGS: 1, CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: 1,
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_STATE_DIR: join(home, "state"),
    NEEDS_YOU_RECORD_DIR: recorded(home),
  };
  // A pane gets the tmux server's environment: set ours in the pane's command.
  term = inTmux(`needs-you-live-${process.pid}`, cwd, vars, `${CLAUDE}`);
  await term.waitFor(/❯/, 60_000);
  await sleep(1500);
});

after(async () => {
  term?.stop();
  keepFixtures(home, "claude-code");
  await model?.stop();
  await sink?.stop();
  await live?.stop();
  if (Object.keys(figures).length) console.log(`# figures ${JSON.stringify(figures)}`);
});

const rung = (qid) => sink.received.filter((r) => JSON.parse(r.body).question.question_id === qid);

const REGION = {
  tool: "AskUserQuestion",
  input: { questions: [{ question: "Which region should I deploy to?", header: "Region", multiSelect: false,
    options: [{ label: "eu-west-1", description: "Ireland" }, { label: "us-east-1", description: "Virginia" }] }] },
};
const RM = { tool: "Bash", input: { command: "rm -rf build", description: "Remove the build folder" } };

test("a question dialog left open stays a dialog, with its options, and rings the phone once", { skip }, async () => {
  model.next(REGION);
  model.next({ text: "Deploying to the region you chose." });
  await term.type("deploy it");
  await term.waitFor(/Which region should I deploy to/);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1);
  figures.claude_dialog_listed_ms = Date.now() - shown;
  assert.deepEqual([q.kind, q.cli, q.text], ["dialog", "claude-code", "Which region should I deploy to?"]);
  // Past the permission prompt that Claude Code fires for a dialog left open
  // about 6 s: the list still shows the question and its options.
  await waitFor(() => rung(q.question_id).length > 0, DELAY + 5000);
  figures.claude_dialog_rung_ms = rung(q.question_id)[0].at - shown;
  await sleep(Math.max(0, 8000 - (Date.now() - shown)));
  const [still] = await list();
  assert.equal(still?.question_id, q.question_id, "the permission prompt did not replace the dialog");
  assert.deepEqual(still.options.map((o) => o.label), ["eu-west-1", "us-east-1"]);
  const rings = rung(q.question_id).map((r) => JSON.parse(r.body));
  assert.deepEqual(rings.map((r) => [r.event, r.question.kind]), [["question.open", "dialog"]], "rung once, as a dialog");
  // Answered in the terminal: the first option.
  term.key("Enter");
  await sleep(500);
  if (/Submit|Review your answers/i.test(term.screen())) term.key("Enter");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  await term.waitFor(/Deploying to the region you chose/);
});

test("a permission left open says what it asks, and closes when approved", { skip }, async () => {
  model.next(RM);
  model.next({ text: "Removed the build folder." });
  await term.type("clean the build");
  await term.waitFor(/Do you want to proceed/);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1, 12_000);
  figures.claude_permission_listed_ms = Date.now() - shown;
  assert.equal(q.kind, "permission");
  assert.equal(q.text, "Remove the build folder\n$ rm -rf build", "the command, not the generic sentence");
  term.key("Enter"); // 1. Yes
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "tool_ran");
  await term.waitFor(/Removed the build folder/);
});

test("a permission denied with Esc after it was listed leaves the list at once and never rings", { skip }, async () => {
  model.next(RM);
  await term.type("clean the build again");
  await term.waitFor(/Do you want to proceed/);
  const [q] = await listUntil((l) => l.length === 1, 12_000);
  const denied = Date.now();
  term.key("Escape");
  await term.waitFor(/Interrupted/);
  await listUntil((l) => l.length === 0, 5000);
  figures.claude_denied_left_list_ms = Date.now() - denied;
  assert.ok(figures.claude_denied_left_list_ms < 2000, `${figures.claude_denied_left_list_ms} ms`);
  assert.equal(await reason(q.question_id), "interrupted");
  await sleep(DELAY + 1000);
  assert.deepEqual(rung(q.question_id), [], "the phone never rang");
});

test("a question dismissed with Esc leaves the list and never rings", { skip }, async () => {
  model.next(REGION);
  await term.type("deploy again");
  await term.waitFor(/Which region should I deploy to/);
  const [q] = await listUntil((l) => l.length === 1);
  await sleep(1000);
  term.key("Escape");
  await listUntil((l) => l.length === 0, 5000);
  assert.equal(await reason(q.question_id), "interrupted");
  await sleep(DELAY + 1000);
  assert.deepEqual(rung(q.question_id), [], "the phone never rang");
});

test("a reply ending with a question is listed, never rung, and closes with the next prompt", { skip }, async () => {
  model.next({ text: "I updated the code. Shall I also update the docs?" });
  await term.type("update the code");
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text], ["reply", "I updated the code. Shall I also update the docs?"]);
  model.next({ text: "Docs updated." });
  await term.type("yes");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "prompt_submitted");
  await term.waitFor(/Docs updated/);
  model.next({ text: "All done." });
  await term.type("thanks");
  await term.waitFor(/All done/);
  await sleep(1000);
  assert.deepEqual(await list(), [], "a reply without a question opens nothing");
  assert.deepEqual(rung(q.question_id), []);
});

test("a reply answered from afar is typed into Claude Code's prompt, and Claude Code's own hook closes it", { skip }, async () => {
  figures.answer_to_closed_ms = (await answerFromAfar(live, term, model)).ms;
});

test("/exit closes a reply left open", { skip }, async () => {
  model.next({ text: "Anything else?" });
  await term.type("status");
  const [q] = await listUntil((l) => l.length === 1);
  await term.type("/exit");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "session_end");
});
