// The real GitHub Copilot CLI (npm, pinned; scripts/setup-live.sh) in a real
// tmux, offline against a mock OpenAI-compatible model on 127.0.0.1
// (COPILOT_OFFLINE and its bring-your-own-model variables), with our hooks
// installed by the real report-prompt, reporting to the Worker in Miniflare.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newTask, ROOT } from "../worker/helpers.js";
import { startChatMock } from "./mock-chat.js";
import { COPILOT, has } from "./clis.js";
import { inTmux, oneShotIsSilent, startLive } from "./harness.js";
import { keepFixtures, recorded } from "./fixtures.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const skip = !has(COPILOT) && "GitHub Copilot CLI is not installed (bash scripts/setup-live.sh)";

let live, w, model, owner, task, home, cwd, copilotHome, term, vars;
let listUntil, reason;
const figures = {};

/** Copilot's environment for a run against the mock: no GitHub, no update check. */
const copilotEnv = () => ({
  HOME: home, COPILOT_HOME: copilotHome, TERM: "xterm-256color", PATH: process.env.PATH,
  COPILOT_OFFLINE: "true", COPILOT_AUTO_UPDATE: "false",
  COPILOT_PROVIDER_BASE_URL: model.url, COPILOT_PROVIDER_API_KEY: "mock", COPILOT_MODEL: "gpt-4.1",
});

before(async () => {
  if (skip) return;
  live = await startLive("copilot", { NOTIFY_DELAY_MS: "60000" });
  ({ w, owner, home, cwd, listUntil, reason } = live);
  task = await newTask(w, owner.token, { name: "live copilot" });
  model = await startChatMock();
  copilotHome = join(home, ".copilot");
  mkdirSync(copilotHome);
  // A person who trusted the work folder once, as Copilot's first dialog offers.
  writeFileSync(join(copilotHome, "config.json"), JSON.stringify({ trustedFolders: [cwd] }));
  execFileSync(REPORTER, ["install", "--cli", "copilot"], { env: { ...process.env, HOME: home, COPILOT_HOME: copilotHome } });
  assert.ok(existsSync(join(copilotHome, "hooks", "needs-you.json")), "installed where Copilot reads hooks");
  vars = {
    ...copilotEnv(),
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state"),
    NEEDS_YOU_RECORD_DIR: recorded(home),
  };
  term = inTmux(`needs-you-live-copilot-${process.pid}`, cwd, vars, COPILOT);
  await term.waitFor(/Manual Approval/, 60_000);
});

after(async () => {
  if (Object.keys(figures).length) console.log(`# figures ${JSON.stringify(figures)}`);
  term?.stop();
  keepFixtures(home, "copilot");
  await model?.stop();
  await live?.stop();
});

/**
 * The session transcript's lines that say how a permission ended (the
 * approved one, then Esc), kept with the recorded payloads: the core's
 * fixtures read them as its watcher does.
 */
function keepTranscriptLines() {
  const sessions = join(copilotHome, "session-state");
  const lines = readdirSync(sessions).flatMap((id) => {
    const events = join(sessions, id, "events.jsonl");
    return existsSync(events) ? readFileSync(events, "utf8").split("\n") : [];
  });
  const ending = lines.filter((l) => /^\{"type":"(abort|permission\.completed)"/.test(l));
  assert.ok(ending.length >= 2, lines.join("\n"));
  writeFileSync(join(recorded(home), "copilot.events.jsonl"), ending.join("\n") + "\n");
}

const DIALOG = /Do you want to run this command\?/;
/** The model's shell call, as Copilot's `bash` tool takes it. */
const shell = (command) => ({ tool: "bash", input: { command, description: "Touch a file", mode: "sync", initial_wait: 10 } });

test("a permission is listed with its command in Copilot's words, and closes when allowed in the terminal, the command having run", { skip }, async () => {
  const file = join(cwd, "allowed");
  model.next(shell(`touch ${file}`));
  model.next({ text: "Made it." });
  await term.type("make the file");
  await term.waitFor(DIALOG);
  const shown = Date.now();
  const [q] = await listUntil((l) => l.length === 1);
  figures.copilot_permission_listed_ms = Date.now() - shown;
  assert.deepEqual([q.kind, q.cli, q.text, q.who], ["permission", "copilot", `Run command: touch ${file}`, "Copilot needs your permission"]);
  assert.deepEqual([q.answer_from_afar, q.why_not], [null, "Copilot takes its answer only in its terminal"]);
  term.key("Enter"); // 1. Yes
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "tool_ran");
  await term.waitFor(/Made it\./);
  assert.ok(existsSync(file), "the command ran");
});

test("a permission denied with Esc closes as interrupted (its transcript says so: no hook fires), and its command never runs", { skip }, async () => {
  const file = join(cwd, "denied");
  model.next(shell(`touch ${file}`));
  await term.type("make the other file");
  await term.waitFor(DIALOG);
  const [q] = await listUntil((l) => l.length === 1);
  assert.equal(q.text, `Run command: touch ${file}`);
  // Kept apart: the question's form fires a `Notification` of its own later.
  cpSync(join(recorded(home), "copilot.Notification.json"), join(recorded(home), "copilot.Notification_permission_prompt.json"));
  term.key("Escape");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "interrupted");
  // The tool's own line marks it aborted before the turn's closing line
  // follows; either shows Copilot has taken the Esc, so the file's absence
  // below is not read too early.
  await term.waitFor(/✗ Shell .*Operation aborted by user|Operation cancelled by user/);
  assert.equal(existsSync(file), false, "never ran");
  keepTranscriptLines();
});

test("the model's question is listed with its choices, and closes when answered in the terminal", { skip }, async () => {
  model.next({ tool: "ask_user", input: { message: "Which colour do you prefer?",
    requestedSchema: { properties: { colour: { type: "string", title: "Colour", enum: ["red", "blue"] } }, required: ["colour"] } } });
  model.next({ text: "Red it is." });
  await term.type("pick a colour");
  await term.waitFor(/Which colour do you prefer\?/);
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text, q.options.map((o) => o.label)], ["dialog", "Which colour do you prefer?", ["red", "blue"]]);
  term.key("Enter"); // accepts the first, red
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  await term.waitFor(/Red it is\./);
  assert.match(JSON.stringify(model.requests.at(-1).messages), /red/);
});

test("a run for one prompt (`copilot -p`) reports nothing and prints nothing of ours", { skip }, async () => {
  const run = await oneShotIsSilent(live, {
    command: COPILOT, args: ["-p", "update the code"], env: {
      ...copilotEnv(), NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state-one-shot"),
    },
    // A reply alone fires only hooks that wait for an open question (there
    // is none), and `-p` offers no `ask_user` and shows no dialog: a command
    // first, so that an event of its reaches report-prompt.
    say: (text) => {
      model.next(shell("true"));
      model.next({ text });
    },
  });
  assert.match(run.stdout, /Shall I also update the docs\?/);
});
