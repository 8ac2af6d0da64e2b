// The real Codex (npm, pinned; scripts/setup-live.sh) in real tmux terminals,
// against a mock of its model on 127.0.0.1, with our hooks installed by the
// real report-prompt, reporting to the Worker in Miniflare.
//
// Codex runs hooks inside the process that serves its session. With
// `--no-daemon` that is the terminal's own, with the terminal's environment;
// by default it is one background server per CODEX_HOME, shared by every
// terminal, with the environment of the one that started it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { call, newTask, ROOT, sleep, smuggleAnswer, waitFor } from "../worker/helpers.js";
import { startResponsesMock } from "./mock-openai.js";
import { CODEX, has } from "./clis.js";
import { answerFromAfar, commandNeverTyped, oneShotIsSilent, startLive } from "./harness.js";
import { startCodex, writeCodexConfig } from "./codex.js";
import { keepFixtures, recorded } from "./fixtures.js";
import { takesRequest } from "../support/request.js";

const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");
const NEEDS_YOU = join(ROOT, "target", "release", "needs-you");
const skip = !has(CODEX) && "Codex is not installed (bash scripts/setup-live.sh)";

let live, w, model, owner, home, codexHome, cwd;
let list, listUntil, reason;
const terms = [];
const figures = {};

before(async () => {
  if (skip) return;
  live = await startLive("codex", { NOTIFY_DELAY_MS: "60000" });
  ({ w, owner, home, list, listUntil, reason } = live);
  model = await startResponsesMock();
  codexHome = join(home, ".codex");
  cwd = live.cwd;
  mkdirSync(codexHome);
  writeCodexConfig(codexHome, model, cwd);
  // Our hooks in the user's hooks.json, as a person without root installs them.
  execFileSync(REPORTER, ["install", "--cli", "codex", "--path", join(codexHome, "hooks.json")]);
});

after(async () => {
  if (Object.keys(figures).length) console.log(`# figures ${JSON.stringify(figures)}`);
  for (const t of terms) t.stop();
  stopSharedServer();
  keepFixtures(home, "codex");
  await model?.stop();
  await live?.stop();
});

/** Ends the shared background server of this test's CODEX_HOME, if one started, and its pid-update-loop (which outlives a TERM at times): KILL after 2 s. */
function stopSharedServer() {
  if (!codexHome) return;
  const pattern = `${codexHome}/packages/app-server-daemon`;
  for (const signal of ["TERM", "KILL"]) {
    spawnSync("pkill", [`-${signal}`, "-f", pattern]);
    const until = Date.now() + 2000;
    while (Date.now() < until && spawnSync("pgrep", ["-f", pattern]).status === 0) spawnSync("sleep", ["0.1"]);
  }
}

/** A Codex terminal for `task`: started, its new hooks trusted, at its prompt. */
async function terminal(task, flags = "--no-daemon") {
  const vars = {
    HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: "mock", TERM: "xterm-256color", PATH: process.env.PATH,
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, `state-${task.task_id}`),
    NEEDS_YOU_RECORD_DIR: recorded(home),
  };
  const t = await startCodex(`needs-you-live-codex-${process.pid}-${terms.length}`, cwd, vars, flags);
  terms.push(t);
  return t;
}


test("two Codex terminals of two tasks: each permission is reported with its own task's credential", { skip }, async () => {
  const alpha = await newTask(w, owner.token, { name: "alpha" });
  const beta = await newTask(w, owner.token, { name: "beta" });
  const a = await terminal(alpha);
  const b = await terminal(beta);
  model.next({ shell: "rm -rf build" });
  await a.type("clean the build");
  await a.waitFor(/Would you like to run the following command/);
  const shown = Date.now();
  await listUntil((l) => l.length === 1);
  figures.codex_permission_listed_ms = Date.now() - shown;
  model.next({ shell: "rm -rf dist" });
  await b.type("clean dist");
  await b.waitFor(/Would you like to run the following command/);
  const both = await listUntil((l) => l.length === 2);
  const byTask = Object.fromEntries(both.map((q) => [q.task_name, q]));
  assert.equal(byTask.alpha?.kind, "permission");
  assert.match(byTask.alpha.text, /rm -rf build/);
  assert.equal(byTask.beta?.kind, "permission");
  assert.match(byTask.beta.text, /rm -rf dist/);
  // Esc on each: Codex's Interrupt hook closes them.
  a.key("Escape");
  b.key("Escape");
  await listUntil((l) => l.length === 0);
});

test("a reply answered from afar is typed into Codex's prompt, and Codex's own hook closes it; one it would run as a command is never typed", { skip }, async () => {
  const delta = await newTask(w, owner.token, { name: "delta" });
  const t = await terminal(delta);
  figures.answer_to_closed_ms = (await answerFromAfar(live, t, model)).ms;
  await commandNeverTyped(live, t, model);
});

test("a subagent's approval is listed with what it runs, under the person's session; allowed it closes as run, denied with Esc as interrupted", { skip }, async () => {
  const sigma = await newTask(w, owner.token, { name: "sigma" });
  const t = await terminal(sigma);
  const spawnThen = async (folder, key) => {
    mkdirSync(join(cwd, folder));
    const SUB = `Remove the folder ${folder} with rm -rf`;
    // The subagent's requests run beside its parent's: scripted apart.
    model.next({ call: { name: "spawn_agent", namespace: "multi_agent_v1", args: { message: SUB } } });
    model.next({ shell: `rm -rf ${folder}` }, { asked: SUB });
    model.next({ text: "Done with the folder." }, { asked: SUB });
    model.next({ text: "A subagent is on it." });
    await t.type(`clean ${folder} with a subagent`);
    await t.waitFor(/Thread: Agent/);
    const [q] = await listUntil((l) => l.length === 1);
    assert.deepEqual([q.kind, q.task_name, q.text], ["permission", "sigma", `Codex wants to run: rm -rf ${folder}\n(from a subagent)`]);
    t.key(key);
    await listUntil((l) => l.length === 0);
    return q;
  };
  const allowed = await spawnThen("sub-allowed", "Enter");
  assert.equal(await reason(allowed.question_id), "tool_ran");
  assert.ok(await waitFor(() => !existsSync(join(cwd, "sub-allowed")), 5000), "the subagent's command ran");
  // Esc fires no hook for a subagent's approval: its rollout says turn_aborted.
  const denied = await spawnThen("sub-denied", "Escape");
  assert.equal(await reason(denied.question_id), "interrupted");
  assert.equal(denied.session, allowed.session, "both under the person's one session");
  assert.ok(existsSync(join(cwd, "sub-denied")), "denied: never ran");
});

test("a reply left open at /quit closes", { skip }, async () => {
  const gamma = await newTask(w, owner.token, { name: "gamma" });
  const t = await terminal(gamma);
  model.next({ text: "I updated the code. Shall I also update the docs?" });
  await t.type("update the code");
  const [q] = await listUntil((l) => l.length === 1 && l[0].kind === "reply");
  assert.equal(q.task_name, "gamma");
  await t.type("/quit");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "session_end");
});

test("in Codex's shared background server, the reporter refuses to report under another terminal's credential", { skip }, async () => {
  // The first terminal starts the shared server with its environment; the
  // second attaches to it, and its hooks run there.
  const first = await newTask(w, owner.token, { name: "starts the server" });
  const second = await newTask(w, owner.token, { name: "attaches" });
  await terminal(first, "");
  const t = await terminal(second, "");
  model.next({ shell: "rm -rf out" });
  await t.type("clean out");
  await t.waitFor(/Would you like to run the following command/);
  await sleep(3000);
  assert.deepEqual(await list(), [], "nothing reported under the first terminal's task");
  t.key("Escape");
  stopSharedServer();
});

// ---- under `needs-you run`: a private app-server, answered from afar through it

let runConfig;
/** This machine logged in as `needs-you login` does it (once), and its vars for `needs-you run`. */
async function runVars() {
  if (!runConfig) {
    runConfig = join(home, "run-config");
    const pairing = (await call(w, "POST", "/v1/pairings", { token: owner.token, body: { rights: ["tasks"] } })).body;
    const link = new URL(pairing.url);
    execFileSync(NEEDS_YOU, ["login", `${w.url}${link.pathname}${link.hash}`, "--owner", live.key.fingerprint], { env: { ...process.env, HOME: home, XDG_CONFIG_HOME: runConfig } });
    // The owner's content key, kept beside the login as a machine keeps it once
    // its pairer gave it: `run` hands its file to the relay, which seals screens.
    writeFileSync(join(runConfig, "needs-you", "content-key.json"), readFileSync(live.keysFile), { mode: 0o600 });
  }
  return { HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: "mock", TERM: "xterm-256color", PATH: process.env.PATH,
    XDG_CONFIG_HOME: runConfig, NEEDS_YOU_STATE_DIR: join(home, "state-run"), NEEDS_YOU_RECORD_DIR: recorded(home) };
}

/** `needs-you run -- codex` in a terminal of its own, at Codex's prompt. */
async function runCodex(vars) {
  const { CODEX_FLAGS: flags = "", NOT_IN_TMUX: away, ...env } = vars;
  // Drawn in tmux all the same, but with nothing that says so to our reporter.
  const unset = away ? "env -u TMUX -u TMUX_PANE " : "";
  const t = await startCodex(`needs-you-live-codex-run-${process.pid}-${terms.length}`, cwd, env, flags, { wrap: `${unset}${NEEDS_YOU} run -- ` });
  terms.push(t);
  return t;
}

/**
 * `test` with a `needs-you run -- codex` terminal of its own (`vars`, default
 * the logged-in machine's), closed at its end however it ends, with nothing
 * of its model's script left for the next test.
 */
function runTest(name, body, vars) {
  test(name, { skip }, async () => {
    const t = await runCodex(vars ? await vars() : await runVars());
    try {
      await body(t);
    } finally {
      t.stop();
      model.clear();
    }
  });
}

const answerFor = (q, body) => live.answer(q, body);
// The question's newest answer.
const answerRow = (q) => w.db.prepare("SELECT state, reason, reason_code FROM answers WHERE question_id = ? ORDER BY created_at DESC, rowid DESC").bind(q.question_id).first();
// Codex's shared server for this CODEX_HOME, and its pid-update-loop.
const daemons = () => spawnSync("pgrep", ["-f", `${codexHome}/packages/app-server-daemon`], { encoding: "utf8" }).stdout.trim();
// The task's private app-server, which `needs-you run` starts in its state directory.
const taskServers = () => spawnSync("pgrep", ["-f", `app-server --listen unix://${join(home, "state-run")}/`], { encoding: "utf8" }).stdout.trim();
const DIALOG = /Would you like to run the following command/;

/** The dialog for `command`, once listed as answerable from afar. */
async function approval(t, command, prompt) {
  model.next({ shell: command });
  await t.type(prompt);
  await t.waitFor(DIALOG);
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
  assert.match(q.digest, /^[0-9a-f]{64}$/);
  return q;
}

runTest("`needs-you run -- codex`: an approval is listed from Codex's own request, allowed from afar it runs and its dialog leaves the screen, denied it does not run", async (t) => {
  assert.ok(taskServers(), "the task's own app-server runs");
  const allowed = join(cwd, "afar-allowed");
  mkdirSync(allowed);
  const q = await approval(t, `rm -rf ${allowed}`, "clean the allowed folder");
  assert.equal(q.task_name, `codex in ${basename(cwd)}`, "reported with the task `run` made");
  assert.equal(q.kind, "permission");
  assert.equal(q.text, `Codex wants to run:\n$ /bin/bash -lc 'rm -rf ${allowed}'\nin ${cwd}\n\nenvironmentId: local`);
  // Show terminal, before deciding: Codex's dialog as the person sees it.
  assert.equal(q.screen, true);
  const shown = await call(w, "GET", `/v1/questions/${q.question_id}/screen`, { token: owner.token });
  assert.equal(shown.status, 200, shown.text);
  const screen = (await live.screen(q, shown)).lines.map((l) => l.map((x) => x.t).join("")).join("\n");
  assert.match(screen, DIALOG);
  model.next({ text: "Cleaned it." });
  const posted = Date.now();
  const r = await answerFor(q, { decision: "allow", digest: q.digest });
  assert.equal(r.status, 201, r.text);
  assert.ok(await waitFor(() => !existsSync(allowed), 10_000), "the command ran");
  figures.codex_allow_ran_ms = Date.now() - posted;
  await t.waitFor(/Cleaned it/);
  assert.doesNotMatch(t.screen(), DIALOG, "the dialog left the screen by itself");
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  assert.ok(await waitFor(async () => (await answerRow(q))?.state === "taken", 5000), JSON.stringify(await answerRow(q)));
  // One question for the request: the PermissionRequest hook, which ran in
  // the same server, left it to the client that lists it answerable.
  const cards = await w.db.prepare("SELECT COUNT(*) AS n FROM questions WHERE session = ?").bind(q.session).first();
  assert.equal(cards.n, 1);

  const denied = join(cwd, "afar-denied");
  mkdirSync(denied);
  const d = await approval(t, `rm -rf ${denied}`, "clean the denied folder");
  assert.notEqual(d.digest, q.digest);
  assert.equal((await answerFor(d, { decision: "deny", digest: d.digest })).status, 201);
  // Codex offers no "decline" for a command: deny is its own "No" (the turn stops).
  await t.waitFor(/Ask Codex to do anything/);
  assert.ok(await waitFor(() => !DIALOG.test(t.screen()), 10_000), "the dialog left the screen");
  await listUntil((l) => l.length === 0);
  assert.ok(existsSync(denied), "denied: it never ran");
  assert.equal((await answerRow(d)).state, "taken");
  assert.equal(daemons(), "", "Codex runs without its shared server");
}, async () => {
  // Codex's shared server of the tests above, gone before this one starts.
  stopSharedServer();
  assert.ok(await waitFor(() => daemons() === "", 10_000), `no shared server before: ${daemons()}`);
  return runVars();
});

runTest("`needs-you run -- codex`: Codex's own \"don't ask again\" chosen from afar runs the command, the same command later asks nothing, and taken back from afar the rule leaves Codex's rules file", async (t) => {
  const folder = join(cwd, "afar-kept");
  mkdirSync(folder);
  const command = `rm -rf ${folder}`;
  const q = await approval(t, command, "clean the kept folder");
  const keep = q.decisions.filter((d) => d.lasting);
  assert.deepEqual(keep.map((d) => [d.rule, d.scope]), [[`commands that start with rm -rf ${folder}`, "codex_rules"]],
    JSON.stringify(q.decisions));
  const made = await answerFor(q, { decision: `keep-${"3".repeat(16)}`, digest: q.digest });
  assert.deepEqual([made.status, made.body.error], [409, "not_offered"]);
  model.next({ text: "Cleaned it for good." });
  assert.equal((await answerFor(q, { decision: keep[0].id, digest: q.digest })).status, 201);
  assert.ok(await waitFor(() => !existsSync(folder), 10_000), "the command ran");
  await t.waitFor(/Cleaned it for good/);
  await listUntil((l) => l.length === 0);
  assert.ok(await waitFor(async () => (await answerRow(q))?.state === "taken", 5000), JSON.stringify(await answerRow(q)));

  mkdirSync(folder);
  model.next({ shell: command });
  model.next({ text: "Cleaned it again." });
  await t.type("clean it again");
  await t.waitFor(/Cleaned it again/);
  assert.equal(existsSync(folder), false, "ran with no dialog");
  assert.deepEqual(await list(), []);
  const rules = await live.openedRules((await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules);
  const [rule] = rules.filter((r) => r.cli === "codex");
  assert.deepEqual([rule.rule, rule.scope], [keep[0].rule, "codex_rules"]);
  const file = join(codexHome, "rules", "default.rules");
  const line = `prefix_rule(pattern=["rm", "-rf", "${folder}"], decision="allow")`;
  assert.ok(readFileSync(file, "utf8").split("\n").includes(line), "Codex wrote its own rule");

  // Taken back from afar, signed by the owner's key: out of Codex's rules.
  const back = await live.revokeRule(rule);
  assert.equal(back.status, 202, back.text);
  const state = async () => (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules.find((r) => r.rule_id === rule.rule_id);
  assert.ok(await waitFor(async () => (await state()).state === "revoked", 10_000), JSON.stringify(await state()));
  assert.ok(!readFileSync(file, "utf8").includes(line), "removed from the rules file");
  // Codex holds the amendment in memory for the session that made it (seen
  // with 0.171.0): the same command still runs without asking there, and
  // the note says so; a new session reads the rules file again.
  assert.match((await state()).note, /the Codex session running now keeps it until it restarts/);
  mkdirSync(folder);
  model.next({ shell: command });
  model.next({ text: "Cleaned it a third time." });
  await t.type("clean it a third time");
  await t.waitFor(/Cleaned it a third time/);
  assert.equal(existsSync(folder), false);
});

runTest("`needs-you run -- codex`: answered in the terminal first, a late allow from afar runs nothing and is refused", async (t) => {
  const first = join(cwd, "terminal-first");
  mkdirSync(first);
  const q = await approval(t, `rm -rf ${first}`, "clean the first folder");
  t.key("Escape"); // No, at the terminal
  await listUntil((l) => l.length === 0);
  const late = await answerFor(q, { decision: "allow", digest: q.digest });
  assert.equal(late.status, 409, late.text);
  assert.equal(late.body.error, "closed");
  assert.ok(existsSync(first), "nothing ran");
});

runTest("`needs-you run -- codex`: an allow made for one request never approves another that opened meanwhile", async (t) => {
  const one = join(cwd, "request-one");
  const two = join(cwd, "request-two");
  mkdirSync(one);
  mkdirSync(two);
  const q1 = await approval(t, `rm -rf ${one}`, "clean folder one");
  t.key("Escape");
  await listUntil((l) => l.length === 0);
  const q2 = await approval(t, `rm -rf ${two}`, "clean folder two");
  // The first card's allow, sent for the second question: refused, and nothing runs.
  const moved = await answerFor(q2, { decision: "allow", digest: q1.digest });
  assert.deepEqual([moved.status, moved.body.error], [409, "changed"]);
  await sleep(1500);
  assert.ok(existsSync(one) && existsSync(two), "neither ran");
  assert.match(t.screen(), DIALOG, "the dialog is still the terminal's");
  t.key("Escape");
  await listUntil((l) => l.length === 0);
});

runTest("`needs-you run -- codex`: a card forged with the task credential cannot steer an allow: the client takes only the request it waits on", async (t) => {
  const target = join(cwd, "forged-target");
  mkdirSync(target);
  const q = await approval(t, `rm -rf ${target}`, "clean the forged target");
  // A prompt-injected agent holds the task credential: its environment has it.
  const [pid] = taskServers().split("\n");
  const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  const credential = env.find((v) => v.startsWith("NEEDS_YOU_TOKEN="))?.slice("NEEDS_YOU_TOKEN=".length);
  assert.ok(credential, "the server has the task's credential");
  // It re-reports the session with a harmless request of its own.
  const forged = await call(w, "POST", "/v1/reports", { token: credential, body: { cli: "codex", session: q.session,
    seq: Date.now() * 1000 + 1000, action: "open", kind: "permission",
    ...takesRequest("decision", "codex.commandExecution", { command: "npm test", cwd }) } });
  assert.equal(forged.status, 200, forged.text);
  const [shown] = await listUntil((l) => l.length === 1 && l[0].question_id === forged.body.question_id);
  assert.equal(shown.text, `Codex wants to run:\n$ npm test\nin ${cwd}`, "listed as what it is");
  assert.equal((await answerFor(shown, { decision: "allow", digest: shown.digest })).status, 201);
  const failed = await waitFor(async () => {
    const row = await answerRow(shown);
    return row?.state === "failed" && row;
  }, 10_000);
  assert.equal(failed.reason_code, "not_this_request");
  await sleep(1000);
  assert.ok(existsSync(target), "the real command did not run");
  assert.match(t.screen(), DIALOG, "its dialog waits for the person");
  t.key("Escape");
  await call(w, "POST", `/v1/questions/${shown.question_id}/dismiss`, { token: owner.token });
  await listUntil((l) => l.length === 0, 10_000);
  assert.ok(existsSync(target));
});

runTest("`needs-you run -- codex`: /quit ends Codex, its app-server and `needs-you run`, and leaves nothing of the task behind", async (t) => {
  const folders = () => readdirSync(join(home, "state-run")).filter((f) => f.startsWith("codex-"));
  assert.equal(folders().length, 1, "the server's private folder");
  assert.equal(statSync(join(home, "state-run", folders()[0])).mode & 0o777, 0o700);
  await t.type("/quit");
  assert.ok(await waitFor(() => !spawnSync("pgrep", ["-f", `${NEEDS_YOU} run`], { encoding: "utf8" }).stdout.trim(), 15_000),
    "needs-you run ended with Codex");
  assert.equal(taskServers(), "", "the task's app-server ended with it");
  assert.equal(daemons(), "", "nothing of Codex is left running");
  assert.deepEqual(folders(), [], "its folder is gone");
});

runTest("`needs-you run -- codex`: a file change is listed with its file and its diff, allowed from afar it is made, denied it is not", async (t) => {
  // Outside every folder Codex may write to unasked (the work folder, /tmp).
  const outside = mkdtempSync("/var/tmp/needs-you-live-codex-");
  after(() => rmSync(outside, { recursive: true, force: true }));
  const made = join(outside, "made-from-afar.txt");
  const patch = (file) => `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${file}\n+hello from afar\n*** End Patch\nEOF`;
  model.next({ shell: patch(made) });
  await t.type("write the file");
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
  assert.equal(q.text, `Codex wants to change a file:\n\n${made} (new file)\nhello from afar`);
  model.next({ text: "Wrote it." });
  assert.equal((await answerFor(q, { decision: "allow", digest: q.digest })).status, 201);
  assert.ok(await waitFor(() => existsSync(made), 10_000), "the file was made");
  assert.equal(readFileSync(made, "utf8"), "hello from afar\n");
  await t.waitFor(/Wrote it/);
  await listUntil((l) => l.length === 0);

  const refused = join(outside, "refused-from-afar.txt");
  model.next({ shell: patch(refused) });
  model.next({ text: "Left it alone." });
  await t.type("write the other file");
  const [d] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
  assert.equal((await answerFor(d, { decision: "deny", digest: d.digest })).status, 201);
  // A file change takes "decline": the turn goes on, and the model hears it.
  await t.waitFor(/Left it alone/);
  await listUntil((l) => l.length === 0);
  assert.equal(existsSync(refused), false, "denied: never made");
  await t.type("/quit");
  assert.ok(await waitFor(() => taskServers() === "", 15_000));
});

runTest("`needs-you run -- codex`: a terminal closed under Codex ends its app-server too", async (t) => {
  assert.equal(taskServers().split("\n").length, 1, "this terminal's app-server, and no other");
  t.stop();
  assert.ok(await waitFor(() => taskServers() === "", 10_000), `left running: ${taskServers()}`);
});

runTest("`needs-you run -- codex` with the Worker out of reach: Codex still runs, and is answered in its terminal", async (t) => {
  const gone = join(cwd, "unwatched");
  mkdirSync(gone);
  model.next({ shell: `rm -rf ${gone}` });
  model.next({ text: "Removed." });
  await t.type("clean the unwatched folder");
  await t.waitFor(DIALOG);
  t.key("Enter");
  assert.ok(await waitFor(() => !existsSync(gone), 10_000), "answered in the terminal, it ran");
  await t.type("/quit");
  assert.ok(await waitFor(() => !spawnSync("pgrep", ["-f", `${NEEDS_YOU} run`], { encoding: "utf8" }).stdout.trim(), 15_000));
  assert.equal(daemons(), "", "no Codex server left behind");
}, async () => {
  const vars = await runVars();
  // The login's address, pointed at a port nobody listens on.
  const config = join(home, "unreachable-config");
  cpSync(runConfig, config, { recursive: true });
  const file = join(config, "needs-you", "login.json");
  const saved = JSON.parse(readFileSync(file, "utf8"));
  writeFileSync(file, JSON.stringify({ ...saved, url: "http://127.0.0.1:9" }), { mode: 0o600 });
  return { ...vars, XDG_CONFIG_HOME: config };
});

test("a run for one prompt (`codex exec`) whose reply ends with a question reports nothing and prints nothing of ours", { skip }, async () => {
  // A person who trusted the hooks in a terminal once (config.toml keeps it).
  const task = await newTask(w, owner.token, { name: "exec" });
  await terminal(task);
  const env = {
    HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: "mock", PATH: process.env.PATH,
    NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: task.credential, NEEDS_YOU_OWNER: live.key.fingerprint, NEEDS_YOU_STATE_DIR: join(home, "state-exec"),
  };
  const run = await oneShotIsSilent(live, {
    command: CODEX, args: ["exec", "--skip-git-repo-check", "update the code"], env,
    say: (text) => model.next({ text }),
  });
  // The final message alone on stdout; Codex's own progress on stderr names
  // each hook it runs ("hook: Stop"), as it does every step of the run.
  assert.equal(run.stdout.trim(), "I updated the code. Shall I also update the docs?");
  assert.match(run.stderr, /^hook: Stop Completed$/m, "our Stop hook ran");
});

/** `needs-you run -- codex` with the model's question tool offered outside plan mode too. */
const askingVars = async () => ({ ...(await runVars()), CODEX_FLAGS: "--enable default_mode_request_user_input" });
const QUESTION_UI = /Question 1\/1/;
/** What the model was told its `request_user_input` call got back, once it asks again. */
const toolOutput = () => model.requests.flatMap((r) => (Array.isArray(r.input) ? r.input : []))
  .filter((i) => i.type === "function_call_output").map((i) => (typeof i.output === "string" ? i.output : JSON.stringify(i.output))).pop();

runTest("`needs-you run -- codex`: the model's question is listed with its own options, answered from afar with an option or a typed answer it reaches the model, and the question leaves the screen", async (t) => {
  const ask = (id) => ({ call: { name: "request_user_input", args: { questions: [
    { id, header: "Database", question: "Which database?", options: [
      { label: "SQLite (Recommended)", description: "One file." }, { label: "Postgres", description: "A server." }] }] } } });
  model.next(ask("db"));
  await t.type("set up the database");
  await t.waitFor(QUESTION_UI);
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "choices", 15_000);
  assert.equal(q.kind, "dialog");
  assert.equal(q.text, "Which database?");
  assert.deepEqual(q.questions, [{ question: "Which database?", header: "Database", multi_select: false, other: true,
    options: [{ label: "SQLite (Recommended)", description: "One file." }, { label: "Postgres", description: "A server." }] }]);
  // Two choices for a question that takes one. Its words are sealed, so the
  // Worker cannot check them and queues it; the agent's machine refuses it
  // against its own dialog, and nothing reaches the model.
  assert.equal(q.sealed, true);
  const two = await answerFor(q, { choices: [["Postgres", "SQLite (Recommended)"]], digest: q.digest });
  assert.equal(two.status, 201, two.text);
  assert.ok(await waitFor(async () => (await answerRow(q))?.reason_code === "wrong_answer", 10_000), JSON.stringify(await answerRow(q)));
  assert.match(t.screen(), QUESTION_UI, "the question still waits");
  model.next({ text: "Postgres it is." });
  const r = await answerFor(q, { choices: [["Postgres"]], digest: q.digest });
  assert.equal(r.status, 201, r.text);
  await t.waitFor(/Postgres it is/);
  assert.doesNotMatch(t.screen(), QUESTION_UI, "the question left the screen by itself");
  assert.match(toolOutput(), /Postgres/);
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  assert.ok(await waitFor(async () => (await answerRow(q))?.state === "taken", 5000), JSON.stringify(await answerRow(q)));

  // A typed answer, for the "None of the above" the terminal offers.
  model.next(ask("db2"));
  await t.type("and the cache?");
  await t.waitFor(QUESTION_UI);
  const [typed] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "choices", 15_000);
  model.next({ text: "Noted." });
  assert.equal((await answerFor(typed, { choices: [["MariaDB, on the old box"]], digest: typed.digest })).status, 201);
  await t.waitFor(/Noted\./);
  assert.match(toolOutput(), /MariaDB, on the old box/);
  figures.codex_typed_answer_to_the_model = toolOutput();
  await listUntil((l) => l.length === 0);

  // Answered in the terminal first (its first option): a late answer from afar is refused.
  model.next(ask("db3"));
  await t.type("and the queue?");
  await t.waitFor(QUESTION_UI);
  const [there] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "choices", 15_000);
  model.next({ text: "SQLite for the queue." });
  t.key("Enter");
  await t.waitFor(/SQLite for the queue/);
  assert.match(toolOutput(), /SQLite \(Recommended\)/);
  await listUntil((l) => l.length === 0);
  const late = await answerFor(there, { choices: [["Postgres"]], digest: there.digest });
  assert.deepEqual([late.status, late.body.error], [409, "closed"]);
}, askingVars);

runTest("`needs-you run -- codex` outside tmux: a reply answered from afar reaches the model as the thread's next message, no key typed, and one Codex would run as a command is refused", async (t) => {
  model.next({ text: "I updated the code. Shall I also update the docs?" });
  await t.type("update the code");
  const [q] = await listUntil((l) => l.length === 1 && l[0].kind === "reply", 20_000);
  assert.deepEqual([q.answerable, q.terminal.kind, q.screen], [true, "terminal", false], JSON.stringify(q));
  // Handed to the relay behind the API's back: refused there, it reaches nobody.
  const file = join(cwd, "owned-by-a-message");
  const made = await live.key.body(q, { text: `!touch ${file}` });
  const id = await smuggleAnswer(w, owner.owner_id, q, made.text, made.signed, made.sealed);
  let row;
  assert.ok(await waitFor(async () => {
    row = await w.db.prepare("SELECT state, reason FROM answers WHERE id = ?").bind(id).first();
    return row?.state === "failed";
  }, 10_000), JSON.stringify(row));
  assert.match(row.reason, /can't start with !/);
  const answer = "yes, update the docs too";
  model.next({ text: "Docs updated as you asked." });
  const asked = model.requests.length;
  const posted = Date.now();
  const r = await answerFor(q, { text: answer });
  assert.equal(r.status, 201, r.text);
  await t.waitFor(/Docs updated as you asked/);
  figures.codex_message_to_the_model_ms = Date.now() - posted;
  const sent = model.requests.slice(asked).map((m) => JSON.stringify(m.input));
  assert.ok(sent.some((m) => m.includes(answer)), "the answer reached the model");
  assert.ok(sent.every((m) => !m.includes("owned-by-a-message")), "the refused one did not");
  // The TUI shows it as the person's own message.
  assert.match(t.screen(), new RegExp(answer));
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  const state = () => w.db.prepare("SELECT state FROM answers WHERE id = ?").bind(r.body.answer_id).first("state");
  assert.ok(await waitFor(async () => (await state()) === "taken", 5000), await state());
  assert.equal(existsSync(file), false);
}, async () => ({ ...(await runVars()), NOT_IN_TMUX: "1" }));

const PERMISSIONS_UI = /Would you like to grant these permissions\?/;
/** The model's `request_permissions` call for `folder` and the network. */
const askPermissions = (folder) => ({ call: { name: "request_permissions",
  args: { permissions: { file_system: { write: [folder] }, network: { enabled: true } }, reason: "to write the build" } } });

runTest("`needs-you run -- codex`: a permissions request is listed with each folder and the network, allowed from afar it is granted for the turn and used without a dialog, denied nothing is granted", async (t) => {
  // Outside every folder Codex may write to unasked (the work folder, /tmp).
  const outside = mkdtempSync("/var/tmp/needs-you-live-codex-");
  after(() => rmSync(outside, { recursive: true, force: true }));
  model.next(askPermissions(outside));
  await t.type("ask for permissions");
  await t.waitFor(PERMISSIONS_UI);
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
  assert.equal(q.kind, "permission");
  assert.equal(q.text, `Codex asks for more permissions:\n- write: ${outside}\n- the network\nin ${cwd}\nWhy: to write the build\n\nenvironmentId: local`);
  // Offered once, for this turn: the session-long grant stays the terminal's.
  assert.deepEqual(q.decisions.filter((d) => d.lasting), [], JSON.stringify(q.decisions));
  const made = join(outside, "granted.txt");
  model.next({ shell: `touch ${made}` });
  model.next({ text: "Built it." });
  const r = await answerFor(q, { decision: "allow", digest: q.digest });
  assert.equal(r.status, 201, r.text);
  await t.waitFor(/Built it/);
  assert.doesNotMatch(t.screen(), PERMISSIONS_UI, "the dialog left the screen by itself");
  assert.ok(existsSync(made), "the granted folder was written without asking again");
  const granted = JSON.parse(model.requests.flatMap((r) => (Array.isArray(r.input) ? r.input : []))
    .filter((i) => i.type === "function_call_output" && /permissions/.test(i.output)).pop().output);
  assert.deepEqual(granted, { permissions: { network: { enabled: true }, file_system: { write: [outside] } }, scope: "turn" });
  await listUntil((l) => l.length === 0);
  assert.equal(await reason(q.question_id), "answered");
  assert.ok(await waitFor(async () => (await answerRow(q))?.state === "taken", 5000), JSON.stringify(await answerRow(q)));

  model.next(askPermissions(join(outside, "other")));
  await t.type("ask again");
  await t.waitFor(PERMISSIONS_UI);
  const [d] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
  assert.notEqual(d.digest, q.digest);
  model.next({ text: "Went on without." });
  assert.equal((await answerFor(d, { decision: "deny", digest: d.digest })).status, 201);
  // Deny is the TUI's "No, continue without permissions": the turn goes on with nothing granted.
  await t.waitFor(/Went on without/);
  assert.doesNotMatch(t.screen(), PERMISSIONS_UI);
  assert.deepEqual(JSON.parse(toolOutput()), { permissions: { network: null, file_system: null }, scope: "turn" });
  await listUntil((l) => l.length === 0);
  assert.equal((await answerRow(d)).state, "taken");
}, async () => ({ ...(await runVars()), CODEX_FLAGS: "--enable request_permissions_tool" }));

/** The answers our MCP server (tests/live/mcp-asker.js) was given, one a line. */
const askerAnswers = () => (existsSync(join(home, "asker.jsonl")) ? readFileSync(join(home, "asker.jsonl"), "utf8").trim().split("\n").filter(Boolean).map(JSON.parse) : []);
const TOOL_CALL_UI = /Allow the asker MCP server to run tool "choose_environment"\?/;
const FORM_UI = /Which environment should I deploy to\?/;
let configBefore;

/** Our MCP server that asks the person, in Codex's configuration for one test; its answers file starts empty. */
async function withAsker() {
  configBefore = readFileSync(join(codexHome, "config.toml"), "utf8");
  rmSync(join(home, "asker.jsonl"), { force: true });
  writeFileSync(join(codexHome, "config.toml"), `${configBefore}\n[mcp_servers.asker]\ncommand = "${process.execPath}"\nargs = ["${join(ROOT, "tests", "live", "mcp-asker.js")}", "${join(home, "asker.jsonl")}"]\n`);
  return runVars();
}

/** GET /v1/answers/{id} until `done` says so (15 s at most); the last answer read. */
async function answerUntil(id, done) {
  const end = Date.now() + 15_000;
  for (;;) {
    const a = (await call(w, "GET", `/v1/answers/${id}`, { token: owner.token })).body;
    if (done(a) || Date.now() > end) return a;
    await new Promise((r) => setTimeout(r, 150));
  }
}

runTest("`needs-you run -- codex`: an answer the server's form cannot take is not sent, and the form waits for one it can", async (t) => {
  try {
    model.next({ call: { name: "choose_replicas", namespace: "mcp__asker", args: {} } });
    await t.type("scale it");
    await t.waitFor(/Allow the asker MCP server to run tool "choose_replicas"\?/);
    const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
    assert.equal((await answerFor(q, { decision: "allow", digest: q.digest })).status, 201);
    await t.waitFor(/How many replicas should run\?/);
    const [f] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "choices", 15_000);
    assert.deepEqual(f.questions.map((x) => [x.header, x.other, x.options]), [["Replicas", true, []]]);
    // Typed text the Worker cannot judge; the form takes a whole number.
    const wrong = await answerFor(f, { choices: [["a few"]], digest: f.digest });
    assert.equal(wrong.status, 201, wrong.text);
    const failed = await answerUntil(wrong.body.answer_id, (a) => a.state === "failed");
    assert.equal(failed.state, "failed", JSON.stringify(failed));
    assert.deepEqual(askerAnswers(), [], "nothing reached the server");
    assert.match(t.screen(), /How many replicas should run\?/, "the form still waits in the terminal");
    model.next({ text: "Scaling to three." });
    const right = await answerFor(f, { choices: [["3"]], digest: f.digest });
    assert.equal(right.status, 201, right.text);
    await t.waitFor(/Scaling to three\./);
    assert.deepEqual(askerAnswers(), [{ action: "accept", content: { replicas: 3 } }]);
    assert.equal((await answerUntil(right.body.answer_id, (a) => a.state === "taken")).state, "taken");
  } finally {
    writeFileSync(join(codexHome, "config.toml"), configBefore);
  }
}, withAsker);

runTest("`needs-you run -- codex`: an MCP tool call's approval is a permission and the server's form a dialog: allowed from afar the tool runs and asks, the form answered from afar reaches the server; denied the tool never runs", async (t) => {
  try {
    model.next({ call: { name: "choose_environment", namespace: "mcp__asker", args: {} } });
    await t.type("deploy it");
    await t.waitFor(TOOL_CALL_UI);
    const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
    assert.equal(q.kind, "permission");
    assert.equal(q.text, "Codex wants to run the tool choose_environment of the MCP server asker, with no arguments\nAsks the person which environment to deploy to.");
    // Codex's "for this session" and "always" stay the terminal's.
    assert.deepEqual(q.decisions.filter((d) => d.lasting), []);
    assert.equal((await answerFor(q, { decision: "allow", digest: q.digest })).status, 201);
    // Allowed, the tool runs, and its server asks through Codex.
    await t.waitFor(FORM_UI);
    assert.doesNotMatch(t.screen(), TOOL_CALL_UI, "the approval left the screen by itself");
    const [f] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "choices", 15_000);
    assert.equal(f.kind, "dialog");
    assert.deepEqual(f.questions, [{ question: "Which environment should I deploy to?\n(from the MCP server asker)", header: "Environment",
      multi_select: false, other: false, options: [{ label: "staging" }, { label: "production" }] }]);
    // Not one of the form's values. Its words are sealed, so the Worker
    // cannot check it and queues it; the agent's machine refuses it against
    // its own form, and nothing reaches the server.
    assert.equal(f.sealed, true);
    assert.equal((await answerFor(f, { choices: [["prod"]], digest: f.digest })).status, 201);
    assert.ok(await waitFor(async () => (await answerRow(f))?.reason_code === "wrong_answer", 10_000), JSON.stringify(await answerRow(f)));
    assert.deepEqual(askerAnswers(), []);
    model.next({ text: "Deploying to production." });
    assert.equal((await answerFor(f, { choices: [["production"]], digest: f.digest })).status, 201);
    await t.waitFor(/Deploying to production\./);
    assert.doesNotMatch(t.screen(), FORM_UI, "the form left the screen by itself");
    assert.deepEqual(askerAnswers(), [{ action: "accept", content: { environment: "production" } }]);
    assert.match(toolOutput(), /The person chose \{\\?"environment\\?":\\?"production\\?"\}/);
    await listUntil((l) => l.length === 0);
    for (const x of [q, f]) assert.equal(await reason(x.question_id), "answered");

    model.next({ call: { name: "choose_environment", namespace: "mcp__asker", args: {} } });
    model.next({ text: "Not deploying, then." });
    await t.type("deploy it again");
    await t.waitFor(TOOL_CALL_UI);
    const [d] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision", 15_000);
    // The same call asks the same thing (one digest); the allow of the first was spent on it.
    assert.equal(d.digest, q.digest);
    assert.notEqual(d.question_id, q.question_id);
    assert.equal((await answerFor(d, { decision: "deny", digest: d.digest })).status, 201);
    await t.waitFor(/Not deploying, then\./);
    await listUntil((l) => l.length === 0);
    assert.equal(askerAnswers().length, 1, "denied: the tool never ran, its server never asked");
  } finally {
    writeFileSync(join(codexHome, "config.toml"), configBefore);
  }
}, withAsker);
