// The real Claude Code (npm, pinned; scripts/setup-live.sh) in a real tmux,
// against a mock of its model on 127.0.0.1, with our hooks installed by the
// real report-prompt, reporting to the Worker in Miniflare (real D1, real
// Durable Objects) whose webhook is a real sink. Each scenario drives the
// terminal as a person would and checks the "Needs you" list and the phone.
//
//   node --test tests/live/           (after: bash scripts/setup-live.sh)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, newTask, ROOT, sleep, startSink, waitFor } from "../worker/helpers.js";
import { startAnthropicMock } from "./mock-anthropic.js";
import { CLAUDE, has } from "./clis.js";
import { answerFromAfar, commandNeverTyped, oneShotIsSilent, busyPromptNeverTyped, startLive } from "./harness.js";
import { claudeEnv, startClaude } from "./claude.js";
import { keepFixtures, recorded } from "./fixtures.js";
import { takesRequest } from "../support/request.js";
import { keyedId } from "../support/sealing.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const DELAY = 4000; // the phone rings a dialog this long after it was reported
const SETTINGS_RELOAD_MS = 4000; // Claude Code takes a changed settings file in by then
const skip = !has(CLAUDE) && `Claude Code is not installed (bash scripts/setup-live.sh)`;
const figures = {};

let live, w, sink, model, term, owner, task, home;
let list, listUntil, reason, vars;

before(async () => {
  if (skip) return;
  live = await startLive("claude", { NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300" });
  ({ w, owner, home, list, listUntil, reason } = live);
  sink = await startSink();
  await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${sink.url}/hook`, secret: "0123456789abcdef" } });
  task = await newTask(w, owner.token, { name: "live claude" });
  model = await startAnthropicMock();
  // An MCP server of our own that asks the person (tests/live/mcp-asker.js).
  const mcpServers = { asker: { type: "stdio", command: process.execPath, args: [join(ROOT, "tests", "live", "mcp-asker.js"), join(home, "asker.jsonl")] } };
  vars = claudeEnv(live, model, task, REPORTER, { NEEDS_YOU_RECORD_DIR: recorded(home) },
    { mcpServers, allow: ["mcp__asker__choose_environment"] });
  term = await startClaude(`needs-you-live-${process.pid}`, live.cwd, vars);
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

test("a reply answered from afar is typed into Claude Code's prompt, and Claude Code's own hook closes it; one it would run as a command is never typed", { skip }, async () => {
  figures.answer_to_closed_ms = (await answerFromAfar(live, term, model)).ms;
  await commandNeverTyped(live, term, model);
});

test("a reply answered from afar while Claude Code's prompt is in its shell mode is refused, and nothing of it runs", { skip }, async () => {
  await busyPromptNeverTyped(live, term, model, { on: "!", shown: /! for shell mode/, off: "BSpace" });
});

test("a reply answered from afar while Claude Code's /model menu is open is refused, though the reply printed an empty-looking prompt box above it: no key reaches the menu and no setting changes", { skip }, async () => {
  const rule = "─".repeat(40);
  model.next({ text: `Here is the screen I saw:\n\n${rule}\n❯\n${rule}\n\nShall I deploy it?` });
  await term.type("check the screen");
  const [q] = await listUntil((l) => l.length === 1 && l[0].kind === "reply", 20_000);
  const settingsPath = join(home, ".claude", "settings.json");
  const settingsBefore = readFileSync(settingsPath, "utf8");
  term.key("/model");
  await sleep(500);
  term.key("Enter");
  await term.waitFor(/Select model/);
  const r = await live.answer(q, { text: "go ahead" });
  assert.equal(r.status, 201, r.text);
  let row;
  assert.ok(await waitFor(async () => {
    row = await w.db.prepare("SELECT state, reason FROM answers WHERE id = ?").bind(r.body.answer_id).first();
    return row?.state === "failed";
  }, 10_000), JSON.stringify(row));
  assert.match(row.reason, /a menu or dialog open in its place/);
  await sleep(1500);
  assert.match(term.screen(), /Select model/, "the menu is still open: no Enter reached it");
  assert.doesNotMatch(term.screen(), /go ahead/);
  assert.equal(readFileSync(settingsPath, "utf8"), settingsBefore, "no setting was saved");
  term.key("Escape");
  await term.waitFor(/Kept model/);
  model.next({ text: "Not deploying, then." });
  await term.type("not yet");
  await listUntil((l) => l.length === 0, 20_000);
});

// ---- decisions and choices from afar, through Claude Code's PermissionRequest hook

/** The open question once it takes `form` from afar (it is listed with
 *  Claude Code's permission prompt, some seconds after the dialog shows). */
async function takes(form) {
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === form, 15_000);
  assert.match(q.digest, /^[0-9a-f]{64}$/);
  return q;
}

const answerFor = (q, body) => live.answer(q, body);
const answerRow = (q) => w.db.prepare("SELECT state, reason, form FROM answers WHERE question_id = ?").bind(q.question_id).first();
/** The text of the tool result the agent sent the model last. */
function lastToolResult() {
  const messages = model.requests.at(-1)?.messages ?? [];
  for (const m of [...messages].reverse()) {
    for (const block of Array.isArray(m.content) ? m.content : []) {
      if (block.type === "tool_result") return JSON.stringify(block.content);
    }
  }
  return "";
}
const waitingHooks = () => spawnSync("pgrep", ["-f", `${REPORTER} --cli claude-code`], { encoding: "utf8" }).stdout.trim();

test("a permission allowed from afar runs its command once, with no key typed, and changes no permission rule", { skip }, async () => {
  const file = join(live.cwd, "allowed-from-afar");
  model.next({ tool: "Bash", input: { command: `touch ${file}`, description: "Make the file" } });
  model.next({ text: "Made the file." });
  const settingsBefore = readFileSync(join(home, ".claude", "settings.json"), "utf8");
  await term.type("make the file");
  await term.waitFor(/Do you want to proceed/);
  const q = await takes("decision");
  assert.equal(q.text, `Make the file\n$ touch ${file}`);
  // Show terminal, before deciding: Claude Code's dialog as the person would see it.
  assert.equal(q.screen, true);
  const shown = await call(w, "GET", `/v1/questions/${q.question_id}/screen`, { token: owner.token });
  assert.equal(shown.status, 200, shown.text);
  assert.ok(!shown.text.includes("proceed"), "sealed on its way");
  const screen = (await live.screen(q, shown)).lines.map((l) => l.map((s) => s.t).join("")).join("\n");
  assert.match(screen, /Do you want to proceed/);
  assert.ok(screen.includes(`touch ${file}`), screen);
  const posted = Date.now();
  const r = await answerFor(q, { decision: "allow", digest: q.digest });
  assert.equal(r.status, 201, r.text);
  assert.ok(await waitFor(() => existsSync(file), 10_000), "the command ran");
  figures.claude_allow_ran_ms = Date.now() - posted;
  await term.waitFor(/Made the file/);
  await listUntil((l) => l.length === 0);
  assert.ok(await waitFor(async () => (await answerRow(q)).state === "taken", 5000), JSON.stringify(await answerRow(q)));
  assert.equal(readFileSync(join(home, ".claude", "settings.json"), "utf8"), settingsBefore, "no rule was added");
  assert.equal(existsSync(join(live.cwd, ".claude", "settings.local.json")), false, "nor a project rule");
  assert.ok(await waitFor(() => !waitingHooks(), 5000), "no hook is left waiting");
});

test("a permission denied from afar does not run, and the agent goes on with the person's message", { skip }, async () => {
  const file = join(live.cwd, "denied-from-afar");
  model.next({ tool: "Bash", input: { command: `touch ${file}`, description: "Make another file" } });
  model.next({ text: "Understood, I left it." });
  await term.type("make another file");
  await term.waitFor(/Do you want to proceed/);
  const q = await takes("decision");
  const r = await answerFor(q, { decision: "deny", message: "not on a Friday", digest: q.digest });
  assert.equal(r.status, 201, r.text);
  await term.waitFor(/Understood, I left it/);
  assert.equal(existsSync(file), false, "the command did not run");
  assert.match(lastToolResult(), /not on a Friday/, "the model got the person's message");
  await listUntil((l) => l.length === 0);
  assert.equal((await answerRow(q)).state, "taken");
});

test("a command's \"don't ask again\" chosen from afar runs it and writes Claude Code's own rule; the task lists it; the next command it covers asks nothing; a taking back the owner's key did not sign leaves the rule; taken back from afar, signed, the next one asks again", { skip }, async () => {
  // `npm test` runs a script that counts its runs.
  const ran = join(live.cwd, "ran.txt");
  writeFileSync(join(live.cwd, "package.json"), JSON.stringify({ name: "w", version: "1.0.0",
    scripts: { test: `node -e "require('fs').appendFileSync('ran.txt', 'x')"` } }));
  const runs = () => (existsSync(ran) ? readFileSync(ran, "utf8").length : 0);
  const local = join(live.cwd, ".claude", "settings.local.json");
  const allowed = () => (existsSync(local) ? JSON.parse(readFileSync(local, "utf8")).permissions?.allow ?? [] : []);
  model.next({ tool: "Bash", input: { command: "npm test", description: "Run the tests" } });
  model.next({ text: "The tests ran." });
  await term.type("run the tests");
  await term.waitFor(/don.t ask again for: npm test \*/);
  const q = await takes("decision");
  const keep = q.decisions.find((d) => d.lasting);
  assert.deepEqual(q.decisions.map((d) => d.id).slice(0, 2), ["allow", "deny"]);
  assert.deepEqual([keep.rule, keep.scope, keep.label], ["Bash(npm test *)", "project_local",
    "Allow, and don't ask again for Bash(npm test *)"]);
  // A choice the dialog does not offer: refused, and nothing runs.
  const made = await answerFor(q, { decision: `keep-${"0".repeat(16)}`, digest: q.digest });
  assert.deepEqual([made.status, made.body.error], [409, "not_offered"]);
  const r = await answerFor(q, { decision: keep.id, digest: q.digest });
  assert.equal(r.status, 201, r.text);
  await term.waitFor(/The tests ran/);
  assert.equal(runs(), 1, "the command ran once");
  assert.deepEqual(allowed(), ["Bash(npm test *)"], "Claude Code wrote its own rule, as suggested");
  await listUntil((l) => l.length === 0);
  const rules = async () => live.openedRules((await call(w, "GET", "/v1/tasks", { token: owner.token })).body.tasks.find((t) => t.task_id === task.task_id).rules);
  assert.ok(await waitFor(async () => (await rules()).length === 1, 5000), "the task lists the rule");
  const [rule] = await rules();
  assert.deepEqual([rule.rule, rule.scope, rule.state, rule.granted_by], ["Bash(npm test *)", "project_local", "granted", "the owner"]);

  // The next command it covers: no dialog, nothing listed.
  model.next({ tool: "Bash", input: { command: "npm test -- again", description: "Run them again" } });
  model.next({ text: "They ran again." });
  await term.type("run them again");
  await term.waitFor(/They ran again/);
  assert.equal(runs(), 2);
  assert.deepEqual(await list(), [], "nothing waits");

  // Asked back by the server alone (the owner's token, nothing signed), or
  // with a signature for another rule: the machine takes nothing back.
  for (const [ask, code] of [
    [() => call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token }), "bad_signature"],
    [async () => call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token, body: { signed: await live.key.revoke({ ...rule, rule_id: "rul_other" }) } }), "not_this_request"],
  ]) {
    const forged = await ask();
    assert.equal(forged.status, 202, forged.text);
    assert.ok(await waitFor(async () => (await rules())[0].state === "granted", 10_000), JSON.stringify(await rules()));
    assert.match((await rules())[0].note, new RegExp(`^refused \\(${code}\\)`));
    assert.deepEqual(allowed(), ["Bash(npm test *)"], "the rule stays in the settings file");
  }

  // Taken back from afar, signed: gone from the file, and the next one asks.
  const back = await live.revokeRule(rule);
  assert.equal(back.status, 202, back.text);
  assert.ok(await waitFor(async () => (await rules())[0].state === "revoked", 10_000), JSON.stringify(await rules()));
  assert.deepEqual(allowed(), [], "removed from the settings file");
  // Said without the rule's words or the project's folder, which the server does not read.
  assert.equal((await rules())[0].note, "removed the rule from settings.local.json");
  // Claude Code reads its settings again once the file has been still a
  // moment (seen: a command sent at once after the removal still ran
  // without asking; one sent 1 s later asked).
  await sleep(SETTINGS_RELOAD_MS);
  model.next({ tool: "Bash", input: { command: "npm test -- third", description: "Run them a third time" } });
  await term.type("once more");
  await term.waitFor(/Do you want to proceed/);
  const asked = await takes("decision");
  assert.match(asked.text, /npm test -- third/);
  term.key("Escape");
  await listUntil((l) => l.length === 0);
  assert.equal(runs(), 2, "it did not run without asking");
});

test("in accept-edits mode, a folder's \"always allow access\" chosen from afar writes the file; the next write there asks nothing; the session's rule is listed and cannot be taken back from afar", { skip }, async () => {
  const outside = mkdtempSync(join("/var/tmp", "needs-you-live-folder-"));
  try {
    term.key("BTab"); // Shift+Tab: manual -> accept edits
    await term.waitFor(/accept edits on/);
    const first = join(outside, "first.txt");
    model.next({ tool: "Write", input: { file_path: first, content: "one" } });
    model.next({ text: "Wrote the first." });
    await term.type("write outside");
    await term.waitFor(/Do you want to create first\.txt/);
    const q = await takes("decision");
    const keep = q.decisions.find((d) => d.lasting);
    assert.ok(keep, JSON.stringify(q.decisions));
    assert.deepEqual([keep.rule, keep.scope], [`access to ${outside}`, "session"]);
    assert.equal(q.decisions.filter((d) => d.lasting).length, 1, "no mode switch offered");
    assert.equal((await answerFor(q, { decision: keep.id, digest: q.digest })).status, 201);
    await term.waitFor(/Wrote the first/);
    assert.equal(readFileSync(first, "utf8"), "one");
    await listUntil((l) => l.length === 0);

    const second = join(outside, "second.txt");
    model.next({ tool: "Write", input: { file_path: second, content: "two" } });
    model.next({ text: "Wrote the second." });
    await term.type("write there again");
    await term.waitFor(/Wrote the second/);
    assert.equal(readFileSync(second, "utf8"), "two", "no dialog: the folder is allowed");
    assert.deepEqual(await list(), []);

    const rules = await live.openedRules((await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules);
    const rule = rules.find((r) => r.rule === `access to ${outside}`);
    assert.equal(rule?.scope, "session", JSON.stringify(rules));
    const back = await call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token });
    assert.deepEqual([back.status, back.body.error], [409, "session_rule"]);
  } finally {
    // Back to manual mode: accept edits -> plan -> … -> manual.
    for (let i = 0; i < 6 && !/manual mode on/.test(term.screen()); i++) {
      term.key("BTab");
      await sleep(400);
    }
    rmSync(outside, { recursive: true, force: true });
  }
  assert.match(term.screen(), /manual mode on/);
});

test("a question dialog answered from afar hands the model the chosen label", { skip }, async () => {
  model.next(REGION);
  model.next({ text: "Deploying where you chose." });
  await term.type("deploy from afar");
  await term.waitFor(/Which region should I deploy to/);
  const q = await takes("choices");
  assert.deepEqual(q.questions.map((x) => [x.question, x.multi_select, x.options.map((o) => o.label)]),
    [["Which region should I deploy to?", false, ["eu-west-1", "us-east-1"]]]);
  const posted = Date.now();
  assert.equal((await answerFor(q, { choices: [["us-east-1"]], digest: q.digest })).status, 201);
  await term.waitFor(/Deploying where you chose/);
  figures.claude_choice_taken_ms = Date.now() - posted;
  assert.match(lastToolResult(), /us-east-1/);
  assert.doesNotMatch(lastToolResult(), /eu-west-1/);
  await listUntil((l) => l.length === 0);
});

test("several questions, one of several choices and one typed, answered from afar in one go", { skip }, async () => {
  model.next({ tool: "AskUserQuestion", input: { questions: [
    { question: "Which database?", header: "DB", multiSelect: false, options: [{ label: "SQLite", description: "one file" }, { label: "Postgres", description: "a server" }] },
    { question: "Which features?", header: "Features", multiSelect: true, options: [{ label: "Login", description: "accounts" }, { label: "Search", description: "full text" }, { label: "Export", description: "CSV" }] },
  ] } });
  model.next({ text: "Building it that way." });
  await term.type("plan the app");
  await term.waitFor(/Which database/);
  const q = await takes("choices");
  assert.deepEqual(q.questions.map((x) => x.multi_select), [false, true]);
  const r = await answerFor(q, { choices: [["DuckDB"], ["Login", "Search"]], digest: q.digest });
  assert.equal(r.status, 201, r.text);
  await term.waitFor(/Building it that way/);
  const result = lastToolResult();
  assert.match(result, /DuckDB/, "the typed answer");
  assert.match(result, /Login, Search/, "both choices");
  await listUntil((l) => l.length === 0);
});

test("answered in the terminal first: the waiting hook ends, and a later allow from afar is refused", { skip }, async () => {
  const file = join(live.cwd, "terminal-first");
  model.next({ tool: "Bash", input: { command: `touch ${file}`, description: "Make a third file" } });
  model.next({ text: "Made the third file." });
  await term.type("make a third file");
  await term.waitFor(/Do you want to proceed/);
  const q = await takes("decision");
  assert.ok(waitingHooks(), "the hook waits while the dialog is on screen");
  term.key("Enter"); // 1. Yes, at the terminal
  await term.waitFor(/Made the third file/);
  assert.ok(await waitFor(() => !waitingHooks(), 5000), "Claude Code ended the waiting hook");
  await listUntil((l) => l.length === 0);
  const late = await answerFor(q, { decision: "allow", digest: q.digest });
  assert.equal(late.status, 409);
  assert.equal(late.body.error, "closed");
});

test("a card forged with the task credential cannot steer an allow: the real hook takes only the request it waits on", { skip }, async () => {
  const file = join(live.cwd, "pwned");
  model.next({ tool: "Bash", input: { command: `touch ${file}`, description: "Run the unit tests" } });
  await term.type("run the tests");
  await term.waitFor(/Do you want to proceed/);
  const q = await takes("decision");
  assert.equal(q.text, `Run the unit tests\n$ touch ${file}`);
  // A prompt-injected agent holds the task credential: it re-reports the
  // session a moment later, first with the real digest and harmless words.
  const forge = (fields) => call(w, "POST", "/v1/reports", { token: task.credential, body: { cli: "claude-code",
    session: q.session, seq: Date.now() * 1000 + 1000, action: "open", kind: "permission", ...fields } });
  const lie = await forge({ text: "Run the unit tests\n$ npm test", takes: "decision", digest: q.digest,
    request: { tool: "Bash", input: { command: "npm test", description: "Run the unit tests" } } });
  assert.deepEqual([lie.status, lie.body.error], [400, "digest_mismatch"]);
  assert.equal((await list())[0].text, q.text, "the card still shows what the hook waits on");
  // Then with a harmless request of its own: listed as what it is, and an
  // allow of it reaches no hook (the machine's own open is another request).
  const harmless = await forge(takesRequest("decision", "Bash", { command: "npm test", description: "Run the unit tests" }));
  assert.equal(harmless.status, 200, harmless.text);
  const [shown] = await listUntil((l) => l.length === 1 && l[0].question_id === harmless.body.question_id);
  assert.equal(shown.text, "Run the unit tests\n$ npm test");
  const r = await answerFor(shown, { decision: "allow", digest: shown.digest });
  assert.equal(r.status, 201, r.text);
  const failed = await waitFor(async () => {
    const row = await w.db.prepare("SELECT state, reason_code FROM answers WHERE question_id = ?").bind(shown.question_id).first();
    return row?.state === "failed" && row;
  }, 10_000);
  assert.equal(failed.reason_code, "not_this_request");
  await sleep(1000);
  assert.equal(existsSync(file), false, "the real command did not run");
  assert.match(term.screen(), /Do you want to proceed/, "its dialog waits for the person");
  term.key("Escape");
  await term.waitFor(/Interrupted/);
  await call(w, "POST", `/v1/questions/${shown.question_id}/dismiss`, { token: owner.token });
  await listUntil((l) => l.length === 0, 10_000);
  assert.equal(existsSync(file), false);
});

test("a lasting choice made up by a report with the task credential is never applied: no rule is written, nothing runs", { skip }, async () => {
  const input = { command: "npm test -- forged", description: "Run the tests" };
  const local = join(live.cwd, ".claude", "settings.local.json");
  const before = existsSync(local) ? readFileSync(local, "utf8") : null;
  model.next({ tool: "Bash", input });
  await term.type("run the tests, forged");
  await term.waitFor(/Do you want to proceed/);
  const q = await takes("decision");
  // The same request, its digest true, with a wider "don't ask again" that
  // Claude Code never suggested: every command, in the user's settings,
  // offered as a sender offers what it reads from a request.
  const wide = { type: "addRules", rules: [{ toolName: "Bash" }], behavior: "allow", destination: "userSettings" };
  // (keyed as its machine names it, when its words are sealed).
  const real = takesRequest("decision", "Bash", input).digest;
  assert.equal(q.sealed ? keyedId(live.contentKey, live.key.fingerprint, real) : real, q.digest, "the real request's digest");
  const forged = await call(w, "POST", "/v1/reports", { token: task.credential, body: { cli: "claude-code",
    session: q.session, seq: Date.now() * 1000 + 1000, action: "open", kind: "permission",
    ...takesRequest("decision", "Bash", input, [wide]) } });
  assert.equal(forged.status, 200, forged.text);
  const [shown] = await listUntil((l) => l.length === 1 && l[0].question_id === forged.body.question_id);
  const made = shown.decisions.find((d) => d.lasting);
  assert.equal(made.rule, "Bash", "shown as what it is");
  assert.equal((await answerFor(shown, { decision: made.id, digest: shown.digest })).status, 201);
  const failed = await waitFor(async () => {
    const row = await w.db.prepare("SELECT state, reason_code FROM answers WHERE question_id = ?").bind(shown.question_id).first();
    return row?.state === "failed" && row;
  }, 10_000);
  assert.ok(["not_this_request", "not_offered"].includes(failed.reason_code), JSON.stringify(failed));
  await sleep(1000);
  assert.match(term.screen(), /Do you want to proceed/, "its dialog waits for the person");
  assert.equal(existsSync(local) ? readFileSync(local, "utf8") : null, before, "no rule in the project");
  assert.doesNotMatch(readFileSync(join(home, ".claude", "settings.json"), "utf8"), /"Bash"/, "none in the user's settings");
  term.key("Escape");
  await term.waitFor(/Interrupted/);
  await call(w, "POST", `/v1/questions/${shown.question_id}/dismiss`, { token: owner.token });
  await listUntil((l) => l.length === 0, 10_000);
  assert.deepEqual((await live.openedRules((await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules)).filter((r) => r.rule === "Bash"), []);
});

test("an answer made for a dialog that was replaced is refused: it never lands on the new one", { skip }, async () => {
  model.next({ tool: "Bash", input: { command: "touch first-request", description: "First request" } });
  await term.type("first request");
  await term.waitFor(/Do you want to proceed/);
  const first = await takes("decision");
  term.key("Escape");
  await term.waitFor(/Interrupted/);
  await listUntil((l) => l.length === 0, 5000);
  model.next({ tool: "Bash", input: { command: "touch second-request", description: "Second request" } });
  await term.type("second request");
  await term.waitFor(/Second request/);
  const second = await takes("decision");
  assert.notEqual(second.digest, first.digest);
  const stale = await answerFor(first, { decision: "allow", digest: first.digest });
  assert.deepEqual([stale.status, stale.body.error], [409, "closed"]);
  const moved = await answerFor(second, { decision: "allow", digest: first.digest });
  assert.deepEqual([moved.status, moved.body.error], [409, "changed"]);
  assert.equal(existsSync(join(live.cwd, "second-request")), false);
  term.key("Escape");
  await listUntil((l) => l.length === 0, 5000);
});

test("with the Worker out of reach the dialog stays the terminal's, and nothing hangs", { skip }, async () => {
  // A second Claude Code whose reporter points at a port nobody listens on.
  const file = join(live.cwd, "worker-away");
  let away;
  try {
    away = await startClaude(`needs-you-live-away-${process.pid}`, live.cwd, { ...vars, NEEDS_YOU_URL: "http://127.0.0.1:9",
      NEEDS_YOU_STATE_DIR: join(home, "state-away") });
    model.next({ tool: "Bash", input: { command: `touch ${file}`, description: "Make it while away" } });
    model.next({ text: "Made it while away." });
    await away.type("make it while away");
    await away.waitFor(/Do you want to proceed/);
    await sleep(2000);
    const answered = Date.now();
    away.key("Enter");
    await away.waitFor(/Made it while away/, 15_000);
    figures.claude_away_terminal_answer_ms = Date.now() - answered;
    assert.ok(existsSync(file));
  } finally {
    away?.stop();
  }
});

/**
 * A general-purpose subagent, started by the parent, asks to remove the
 * folder `name` (made here) and then says `after`; resolves once its
 * permission is on screen and listed.
 */
async function subagentAsksToRemove(name, after) {
  const build = join(live.cwd, name);
  mkdirSync(build);
  const SUB = `Remove the folder ${name} with rm -rf`;
  // The subagent runs in the background beside its parent: its requests are
  // scripted apart (`asked`), the parent's take what is left in order.
  model.next({ tool: "Agent", input: { description: "Clean up", prompt: SUB, subagent_type: "general-purpose" } });
  model.next({ tool: "Bash", input: { command: `rm -rf ${name}`, description: "Remove the folder" } }, { asked: SUB });
  model.next({ text: after }, { asked: SUB });
  model.next({ text: "The subagent is on it." });
  await term.type("clean up with a subagent");
  await term.waitFor(/Do you want to proceed/);
  const [q] = await listUntil((l) => l.length === 1, 15_000);
  return { build, q };
}

test("a subagent's permission is listed with what it asks and which agent asks, under the person's session, and closes when allowed", { skip }, async () => {
  const { build, q } = await subagentAsksToRemove("build-of-the-subagent", "Removed it.");
  assert.equal(q.kind, "permission");
  assert.equal(q.text, "Remove the folder\n$ rm -rf build-of-the-subagent\n(from the general-purpose agent)", "what it asks, not Claude Code's generic words");
  assert.equal(q.answer_from_afar, null, "a backgrounded subagent's dialog shows only once its hook returned: no waiting there");
  term.key("Enter"); // 1. Yes
  assert.ok(await waitFor(() => !existsSync(build), 10_000), "the subagent's command ran");
  // Closed by the subagent's own tool running, not by the parent's round.
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "tool_ran");
  await sleep(2000); // the parent's follow-up turn
});

test("a subagent's permission denied with Esc closes when that subagent ends, not at the notice its end gives the parent", { skip }, async () => {
  const { build, q } = await subagentAsksToRemove("kept-by-the-person", "I could not remove it.");
  assert.match(q.text, /rm -rf kept-by-the-person\n\(from the general-purpose agent\)$/);
  term.key("Escape");
  // A denial leaves no mark in any transcript; the subagent's SubagentStop
  // closes it, and the parent's `<task-notification>` prompt is no answer.
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "round_end");
  assert.ok(existsSync(build), "denied: the command never ran");
  await sleep(2000); // the parent's follow-up turn
});

test("a plan waiting for approval is listed in Claude Code's words with the plan it wrote, and closes when approved", { skip }, async () => {
  term.key("BTab");
  await sleep(400);
  term.key("BTab");
  await term.waitFor(/plan mode on/);
  // As a model in plan mode does: the plan into the file Claude Code names
  // (in its reminder), then ExitPlanMode, whose input 2.1.332 sends as {}.
  const PLAN = "# Clean up\n\n1. Remove build/\n2. Rebuild";
  model.next((request) => {
    const file = JSON.stringify(request).match(/(\/[^\s"\\]*\/plans\/[\w.-]+\.md)/)?.[1];
    assert.ok(file, "Claude Code named the plan file");
    return { tool: "Write", input: { file_path: file, content: `${PLAN}\n` } };
  });
  model.next({ tool: "ExitPlanMode", input: {} });
  model.next({ text: "Cleaned up as planned." });
  await term.type("plan the cleanup");
  await term.waitFor(/Ready to code\?/); // with a plan; "Exit plan mode?" without
  await term.waitFor(/Remove build/);
  const [q] = await listUntil((l) => l.length === 1, 15_000);
  assert.equal(q.kind, "permission");
  assert.equal(q.text, `Claude Code needs your approval for the plan\n\n${PLAN}`, "its words and the plan, not \"permission to use ExitPlanMode\"");
  assert.equal(q.answer_from_afar, null, "approved in the terminal");
  term.key("Enter"); // 1. Yes, and switch to default
  await listUntil((l) => l.length === 0);
  await term.waitFor(/Cleaned up as planned/);
});

test("an MCP server's form is listed with its message and choices, closes when accepted (the server gets the choice) and when cancelled, and rings as a dialog", { skip }, async () => {
  const ASK = { tool: "mcp__asker__choose_environment", input: {} };
  const asked = () => readFileSync(join(home, "asker.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  model.next(ASK);
  model.next({ text: "Deploying to staging." });
  await term.type("deploy it");
  await term.waitFor(/requests your input/);
  const [q] = await listUntil((l) => l.length === 1);
  assert.deepEqual([q.kind, q.text, q.options.map((o) => o.label), q.answerable],
    ["dialog", "Which environment should I deploy to?\n(from the MCP server asker)", ["staging", "production"], false]);
  // In the terminal: open the choice, take the first, accept.
  for (const k of ["Right", "Enter", "Enter"]) {
    term.key(k);
    await sleep(400);
  }
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  await term.waitFor(/Deploying to staging/);
  assert.deepEqual(asked().at(-1), { action: "accept", content: { environment: "staging" } });

  model.next(ASK);
  model.next({ text: "Not deploying." });
  await term.type("deploy it again");
  await term.waitFor(/requests your input/);
  const [again] = await listUntil((l) => l.length === 1);
  await waitFor(() => rung(again.question_id).length > 0, DELAY + 5000);
  assert.deepEqual(rung(again.question_id).map((r) => JSON.parse(r.body).question.kind), ["dialog"]);
  term.key("Escape");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(again.question_id), "dismissed");
  assert.deepEqual(asked().at(-1), { action: "cancel" });
  await term.waitFor(/Not deploying/);
});

test("/exit closes a reply left open", { skip }, async () => {
  model.next({ text: "Anything else?" });
  await term.type("status");
  const [q] = await listUntil((l) => l.length === 1);
  await term.type("/exit");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "session_end");
});

test("a run for one prompt (`claude -p`) whose reply ends with a question reports nothing and prints nothing of ours", { skip }, async () => {
  const run = await oneShotIsSilent(live, {
    command: CLAUDE, args: ["-p", "update the code"], env: vars,
    say: (text) => model.next({ text }),
  });
  assert.equal(run.stdout.trim(), "I updated the code. Shall I also update the docs?");
});
