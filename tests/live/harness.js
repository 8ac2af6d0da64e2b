// What every live suite shares: the owner's "Needs you" list, read and
// waited on, and an agent CLI started in its own tmux with only the
// environment given (a pane gets the tmux server's environment otherwise).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { webcrypto } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { endProcessesWithin } from "../support/leftovers.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, newOwner, sleep, smuggleAnswer, startWorker, waitFor } from "../worker/helpers.js";
import { tmux } from "./tmux.js";
import { b64url, ownerKey } from "../support/signing.js";
import { openText } from "../support/sealing.js";
import { shownWords } from "../support/request.js";

/**
 * The Worker in Miniflare (with `vars`) and one owner, the owner's list
 * helpers, and a scratch `home` with a `work` folder (`cwd`) for the agent.
 * `stop()` stops the Worker and removes `home` (kept with NEEDS_YOU_LIVE_KEEP).
 */
export async function startLive(name, vars) {
  const w = await startWorker(vars);
  const owner = await newOwner(w);
  // The owner's key: its fingerprint goes into every agent's environment,
  // and every answer the tests post is signed with it (support/signing.js).
  const key = await ownerKey();
  const home = mkdtempSync(join(tmpdir(), `needs-you-live-${name}-`));
  const cwd = join(home, "work");
  mkdirSync(cwd);
  // The owner's content key, in the file an agent's relay seals its screens
  // with (NEEDS_YOU_CONTENT_KEYS), as a machine paired from the owner's link keeps it.
  const contentKey = { version: 1, key: b64url(webcrypto.getRandomValues(new Uint8Array(32))) };
  const keysFile = join(home, "content-key.json");
  writeFileSync(keysFile, JSON.stringify({ keys: [contentKey] }), { mode: 0o600 });
  key.contentKey = contentKey;
  return {
    w, owner, key, contentKey, keysFile, home, cwd, ...needsYou(w, owner.token, { owner: key.fingerprint, keys: () => [contentKey] }),
    /** The screen in a 200 answer of the screen route for `q`, opened with the owner's content key. */
    screen: async (q, shown) => JSON.parse(await openText(contentKey, key.fingerprint, `${q.session}\n${q.open_seq}`, "screen", shown.body.sealed)),
    /** Posts `body` as the owner's answer to `q`, signed by the owner's key. */
    answer: async (q, body) => call(w, "POST", `/v1/questions/${q.question_id}/answers`, { token: owner.token, body: await key.body(q, body) }),
    /** Asks to take back `rule` (as the rules list shows it), signed by the owner's key. */
    revokeRule: async (rule) => call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token, body: { signed: await key.revoke(rule) } }),
    async stop() {
      await w.stop();
      if (process.env.NEEDS_YOU_LIVE_KEEP) console.log(`# kept ${home}`);
      else {
        // What the CLIs' hooks started detached (a sender, a relay, a
        // watcher) outlives their tmux: a relay tries the stopped Worker
        // again for a while, and writes its log in the home meanwhile.
        await endProcessesWithin(home);
        rmSync(home, { recursive: true, force: true });
      }
    },
  };
}

/** The owner's list: `list()`, `listUntil(check)`, and `reason(questionId)` once closed. */
export function needsYou(w, ownerToken, sealing) {
  const opener = sealing && openerOf(w, ownerToken, sealing);
  const list = async () => {
    const questions = (await call(w, "GET", "/v1/needs-you", { token: ownerToken })).body.questions;
    return opener ? Promise.all(questions.map(opener.question)) : questions;
  };
  return {
    list,
    /** `rules` (as a list gives them) with their sealed words opened. */
    openedRules: (rules) => (opener ? Promise.all(rules.map(opener.rule)) : rules),
    /** Waits until the list satisfies `check`; returns the list. */
    async listUntil(check, ms = 15_000) {
      let last;
      const ok = await waitFor(async () => check((last = await list())), ms, 100);
      assert.ok(ok, `the list never got there: ${JSON.stringify(last)}`);
      return last;
    },
    reason: async (qid) =>
      (await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(qid).first())?.close_reason,
  };
}

/**
 * What a device does with what the agents' machines sealed, done here with
 * Node's own crypto: `sealing` is `{owner, keys: () => [content key
 * versions]}`. `question(q)` is `q` with its words opened and put back as a
 * device shows them (its lasting choices' and its task's name too); `rule(r)`
 * a rule's.
 */
function openerOf(w, ownerToken, { owner, keys }) {
  const open = (scope, field, sealed) => {
    const version = Number(String(sealed).split(".")[1]);
    const key = keys().find((k) => k.version === version);
    return key ? openText(key, owner, scope, field, sealed) : Promise.reject(new Error(`no version ${version}`));
  };
  const rule = async (r) => {
    if (!r.sealed_scope) return r;
    const words = JSON.parse(await open(r.sealed_scope, "rule", r.rule));
    return { ...r, label: words.label, rule: words.rule };
  };
  const choice = async (d) => {
    if (!d.lasting || d.label) return d;
    const words = JSON.parse(await open(d.id, "rule", d.rule));
    return { ...d, label: words.label, rule: words.rule };
  };
  const question = async (q) => {
    // Its task's name, as `needs-you run` sealed it for that task.
    if (q.task_sealed_name) q = { ...q, task_name: await open(q.task_id, "task", q.task_sealed_name) };
    if (!q.sealed) return q;
    const held = (await call(w, "GET", `/v1/questions/${q.question_id}/request`, { token: ownerToken })).body;
    // Sealed for a newer open than this list names: the next list opens it.
    if (held?.open_seq !== q.open_seq) return q;
    const words = shownWords(q.kind, JSON.parse(await open(`${q.session}\n${q.open_seq}`, "question", held.sealed)));
    // Its folder and its tmux pane are words, sealed with the rest.
    const terminal = q.terminal && { ...q.terminal, cwd: words.cwd ?? "", ...(words.target ? { target: words.target } : {}), ...(words.host !== undefined ? { host: words.host } : {}) };
    return { ...q, text: words.text, options: words.options ?? [], questions: words.questions ?? [], terminal,
      request: words.request ?? null, decisions: await Promise.all((q.decisions ?? []).map(choice)) };
  };
  return { question, rule };
}

/**
 * Starts `command` in `cwd` in a new tmux of its own, with exactly `vars` as
 * its environment, plus the pane's own `TMUX` and `TMUX_PANE`, which every
 * program started in tmux has (the reporter finds its pane with them), and a
 * short idle time for the relays it starts.
 */
export function inTmux(socket, cwd, vars, command) {
  // A relay started in a test ends soon after its questions do.
  const all = { NEEDS_YOU_RELAY_IDLE_S: 5, ...vars };
  const assignments = [
    ...Object.entries(all).map(([k, v]) => `${k}='${v}'`),
    `TMUX="$TMUX"`,
    `TMUX_PANE="$TMUX_PANE"`,
  ].join(" ");
  const term = tmux(socket);
  term.start("agent", cwd, `env -i ${assignments} ${command}`);
  return term;
}

/**
 * A reply answered from afar, end to end with the real agent in `term`: its
 * turn ends with a question, the answer is posted to the API, the relay
 * types it into the agent's prompt, the agent sends it to `model`, and the
 * agent's own next hook closes the question. Returns the question and the
 * time from the POST to the close.
 */
export async function answerFromAfar(live, term, model, answer = "yes, update the docs too") {
  model.next({ text: "I updated the code. Shall I also update the docs?" });
  await term.type("update the code again");
  const [q] = await live.listUntil((l) => l.length === 1 && l[0].kind === "reply", 20_000);
  assert.equal(q.answerable, true, JSON.stringify(q.terminal));
  assert.equal(q.terminal.kind, "tmux");
  assert.match(q.terminal.target, /^agent:0\.0$/);
  model.next({ text: "Docs updated as you asked." });
  const posted = Date.now();
  const r = await live.answer(q, { text: answer });
  assert.equal(r.status, 201, r.text);
  await live.listUntil((l) => l.length === 0, 20_000);
  const ms = Date.now() - posted;
  assert.equal(await live.reason(q.question_id), "prompt_submitted");
  await term.waitFor(/Docs updated as you asked/);
  assert.ok(model.requests.some((m) => JSON.stringify(m).includes(answer)), "the agent sent the typed answer to the model");
  const row = await live.w.db.prepare("SELECT state FROM answers WHERE question_id = ?").bind(q.question_id).first();
  assert.equal(row.state, "typed");
  return { question: q, ms };
}

/**
 * An answer the agent would run as a command, with the real agent in
 * `term`: its turn ends with a question. `!touch FILE` is refused by the
 * API where the API reads it (a question in the clear, from a machine
 * that holds no content key); sealed, as the page seals an answer to a
 * question whose words its machine sealed, it is queued by the API, which
 * cannot read it, and refused by the relay, which opens it. One in the
 * clear handed to the relay anyway (written into D1 behind the API's back)
 * is refused by the relay too, and the file never appears. The agent's
 * next prompt then closes the question.
 */
export async function commandNeverTyped(live, term, model) {
  model.next({ text: "The release is ready. Shall I tag it?" });
  await term.type("prepare the release");
  const [q] = await live.listUntil((l) => l.length === 1 && l[0].kind === "reply", 20_000);
  const file = join(live.cwd, "owned-by-an-answer");
  const r = await live.answer(q, { text: `!touch ${file}` });
  if (q.sealed) {
    assert.equal(r.status, 201, r.text);
    let sealed;
    assert.ok(await waitFor(async () => {
      sealed = await live.w.db.prepare("SELECT state, reason, reason_code, text FROM answers WHERE id = ?").bind(r.body.answer_id).first();
      return sealed?.state === "failed";
    }, 10_000), JSON.stringify(sealed));
    assert.deepEqual([sealed.reason_code, sealed.text], ["refused_answer", ""], sealed.reason);
    assert.match(sealed.reason, /can't start with !/);
  } else {
    assert.deepEqual([r.status, r.body.error], [400, "refused_answer"], r.text);
  }
  // Signed by the owner, as its machine takes it: the relay's own check of
  // the words refuses it all the same.
  const failed = async (id) => {
    let row;
    assert.ok(await waitFor(async () => {
      row = await live.w.db.prepare("SELECT state, reason, reason_code FROM answers WHERE id = ?").bind(id).first();
      return row?.state === "failed";
    }, 10_000), JSON.stringify(row));
    return row;
  };
  const made = await live.key.body(q, { text: `!touch ${file}` });
  const row = await failed(await smuggleAnswer(live.w, live.owner.owner_id, q, made.text, made.signed, made.sealed));
  assert.match(row.reason, /can't start with !/);
  if (q.sealed) {
    // In the clear to a question its machine sealed (a server that listed
    // words of its own in the clear): refused before any word is read.
    const clear = await failed(await smuggleAnswer(live.w, live.owner.owner_id, q, `!touch ${file}`,
      await live.key.sign(q, { text: `!touch ${file}` })));
    assert.equal(clear.reason_code, "words_in_the_clear", clear.reason);
  }
  await sleep(1500);
  assert.equal(existsSync(file), false, "the command never ran");
  assert.doesNotMatch(term.screen(), /owned-by-an-answer/, "not one key of it reached the prompt");
  model.next({ text: "Not tagging it, then." });
  await term.type("not yet");
  await live.listUntil((l) => l.length === 0, 20_000);
}


/**
 * A reply answered from afar while the agent's prompt is not empty in its
 * ordinary mode, with the real agent in `term`: the person turns its shell
 * mode on, or starts a draft (`on`, a key; `shown`, what the screen then
 * shows) and walks away; an answer with no command prefix of its own, which
 * as a message would be harmless, is refused by the relay, which reads the
 * prompt first, and not one key of it is typed, so it never runs nor joins
 * the draft. The prompt back as it was (`off`), the agent's next prompt
 * closes the question.
 */
export async function busyPromptNeverTyped(live, term, model, { on, shown, off }) {
  model.next({ text: "The build is green. Shall I deploy it?" });
  await term.type("check the build");
  const [q] = await live.listUntil((l) => l.length === 1 && l[0].kind === "reply", 20_000);
  term.key(on);
  await term.waitFor(shown);
  const file = join(live.cwd, "deployed-by-an-answer");
  const r = await live.answer(q, { text: `touch ${file}` });
  assert.equal(r.status, 201, r.text);
  let row;
  assert.ok(await waitFor(async () => {
    row = await live.w.db.prepare("SELECT state, reason FROM answers WHERE id = ?").bind(r.body.answer_id).first();
    return row?.state === "failed";
  }, 10_000), JSON.stringify(row));
  assert.match(row.reason, /shell mode/);
  await sleep(1500);
  assert.equal(existsSync(file), false, "nothing ran");
  assert.doesNotMatch(term.screen(), /deployed-by-an-answer/, "not one key of it reached the prompt");
  term.key(off);
  await sleep(500);
  model.next({ text: "Not deploying, then." });
  await term.type("not yet");
  await live.listUntil((l) => l.length === 0, 20_000);
}

/**
 * A run for one prompt and no person (`claude -p`, `codex exec`, `opencode
 * run`, `hermes chat -q`), whose reply ends with a question: it runs our
 * hooks (a fresh record folder gains the event), reports nothing (no
 * question row is added, none is listed) and prints nothing of ours; its
 * standard output is the agent's reply. `command` and `args` start it in
 * `live.cwd` with `env`; `say` queues the model's reply.
 */
export async function oneShotIsSilent(live, { command, args, env, say }) {
  const question = "I updated the code. Shall I also update the docs?";
  const record = mkdtempSync(join(live.home, "one-shot-record-"));
  const rows = async () => (await live.w.db.prepare("SELECT count(*) AS n FROM questions").first()).n;
  const before = await rows();
  say(question);
  // Not spawnSync: the mock model answers from this very process.
  const run = await runFor(command, args, { cwd: live.cwd, env: { ...env, NEEDS_YOU_RECORD_DIR: record } }, 90_000);
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, new RegExp(question.replace(/[.?]/g, "\\$&")));
  for (const out of [run.stdout, run.stderr]) {
    // The scratch home's own name says needs-you: not a line of ours.
    assert.doesNotMatch(out.replaceAll(live.home, "~"), /report-prompt|needs-you/i, out);
  }
  assert.ok(readdirSync(record).length > 0, "the run ran our hooks on its events");
  await sleep(1500); // a hand-off, had there been one, would have landed by now
  assert.equal(await rows(), before, "no question was reported");
  assert.deepEqual(await live.list(), []);
  return run;
}

/** Runs `command` to its end (killed after `ms`), stdin closed: its exit code and output. */
function runFor(command, args, options, ms) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, stdout, stderr });
    });
  });
}
