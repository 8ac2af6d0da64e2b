// A question's words sealed on the agent's machine (needs_you_core::words):
// the real reporter seals a reply's words and folder in its sender; a
// permission is sealed here by Node's own crypto, as the reporter seals one,
// to check the Worker, the page and the command line against another
// implementation. Each test plants words of its own, then looks for them in
// every D1 table and every file the runtime keeps, and finds them only
// where the owner's keys open them: `needs-you ls`, `log`, `rules`, and the
// page in Chromium.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { waitFor } from "../worker/helpers.js";
import { lastingId, requestDigest, takesRequest } from "../support/request.js";
import { keyedId, openText, sealText } from "../support/sealing.js";
import { startWorld } from "./world.js";

let world, w, api, owner, words, ownerCli, pairedByOwner, relayByHand;
before(async () => {
  world = await startWorld("sealed", { taskName: "release" });
  ({ w, api, owner, words, ownerCli, pairedByOwner, relayByHand } = world);
});
after(async () => {
  await world?.stop();
});

/** Every file under `dir`, recursively. */
function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** Holds that none of `planted` is in any D1 table or any file the
 *  runtime keeps of D1 and the Durable Objects. */
async function heldNowhere(planted) {
  const tables = (await w.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'").all()).results;
  for (const t of ["questions", "answers", "rules", "tasks", "sessions", "devices", "owners"]) {
    assert.ok(tables.some((x) => x.name === t), `table ${t} read`);
  }
  for (const { name } of tables) {
    const rows = JSON.stringify((await w.db.prepare(`SELECT * FROM "${name}"`).all()).results);
    for (const p of planted) assert.ok(!rows.includes(p), `table ${name} holds ${p}`);
  }
  const kept = files(w.state);
  assert.ok(kept.some((f) => f.endsWith(".sqlite")), `the runtime's files: ${kept.join(", ")}`);
  for (const f of kept) {
    const bytes = readFileSync(f);
    for (const p of planted) assert.ok(!bytes.includes(p), `${f} holds ${p}`);
  }
}

const cliOf = async (o, ...args) => {
  const r = await ownerCli(o)(...args).ended;
  assert.equal(r.code, 0, r.err);
  return r.out;
};

test("a reply's words, folder and tmux pane leave the machine sealed by its reporter: no word of them is kept; ls, log and the page open them", async () => {
  const o = await owner();
  const secret = `planted-reply-${randomBytes(6).toString("hex")}`;
  // A tmux session named after its work, as `needs-you run --tmux` names one.
  const pane = `planted-pane-${randomBytes(6).toString("hex")}`;
  const { dir, q } = await world.agentInTmux(o, { agent: "agent.py", env: { AGENT_ASKS: `Done. Shall I rotate ${secret} now?` }, tmuxName: pane });
  assert.equal(q.sealed, true);
  assert.deepEqual([q.text, q.terminal.cwd, q.terminal.target], ["", "", undefined]);
  const host = readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
  assert.deepEqual(await words(o, q), { text: `Done. Shall I rotate ${secret} now?`, cwd: dir, target: `${pane}:0.0`, host });
  await heldNowhere([secret, dir, pane]);

  const listed = JSON.parse(await cliOf(o, "ls", "--json")).questions.find((x) => x.question_id === q.question_id);
  assert.deepEqual([listed.text, listed.terminal.cwd, listed.terminal.target], [`Done. Shall I rotate ${secret} now?`, dir, `${pane}:0.0`]);
  const logged = (await cliOf(o, "log", secret, "--json")).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(logged.map((p) => p.question_id), [q.question_id], "the history searched on the device finds it");

  const { launch, newPage } = await import("../page/browser.js");
  const browser = await launch();
  try {
    const { page } = await pairedByOwner(o, (opts) => newPage(browser, opts));
    const card = page.locator(`#question-${q.question_id}`);
    await card.locator(".text", { hasText: new RegExp(`^Done\\. Shall I rotate ${secret} now\\?$`) }).waitFor();
    assert.match(await card.locator(".terminal").textContent(), new RegExp(` · ${dir} · tmux ${pane}:0\\.0$`));
    await page.click("#history-open");
    await page.fill("#history-search", secret);
    await page.locator(`#past-${q.question_id} .past-text`, { hasText: secret }).waitFor();
    assert.deepEqual(page.errors, []);
  } finally {
    await browser.close();
  }
});

test("a permission sealed as its machine seals it: its card built on the device from the opened request; its rule recorded sealed and opened where it is listed", async () => {
  const o = await owner();
  const secret = `planted-cmd-${randomBytes(6).toString("hex")}`;
  const folder = `/srv/planted-folder-${randomBytes(4).toString("hex")}`;
  const input = { command: `deploy --token ${secret}` };
  const suggestion = { type: "addRules", behavior: "allow", destination: "localSettings", rules: [{ toolName: "Bash", ruleContent: `deploy --token ${secret}:*` }] };
  const session = "s-perm";
  const seal = (scope, field, value) => sealText(o.contentKey, o.key.fingerprint, scope, field, JSON.stringify(value));
  // Its digest and its lasting choice's id keyed, as the reporter names
  // them: the plain ones would let a server test a guess of the command.
  const keyed = (plain) => keyedId(o.contentKey, o.key.fingerprint, plain);
  const [plainDigest, plainId] = [requestDigest("Bash", input), lastingId(suggestion)];
  const [digest, id] = [keyed(plainDigest), keyed(plainId)];
  assert.ok(digest !== plainDigest && id !== plainId && id.startsWith("keep-"));
  const same = randomBytes(32).toString("hex");
  // Sealed afresh for each report of it, as the reporter seals: new nonces, the same words.
  const sealedOpen = async (seq) => ({
    action: "open", cli: "claude-code", session, seq, kind: "permission",
    terminal: { kind: "tmux", host: "box", target: "w:0.1" },
    takes: "decision", digest,
    sealed: {
      // Its host as its machine sealed it: the list's ("box") is the server's word.
      words: await seal(`${session}\n${seq}`, "question", { text: "", request: { tool: "Bash", input, lasting: [suggestion] }, cwd: folder, host: "build-7" }),
      same,
      lasting: [{ id, label: "", lasting: true, scope: "project_local",
        rule: await seal(id, "rule", { label: `Allow, and don't ask again for Bash(deploy --token ${secret}:*)`, rule: `Bash(deploy --token ${secret}:*)` }) }],
    },
  });
  const report = await sealedOpen(4);
  // Words in the clear beside the sealed ones: refused, and nothing kept.
  const clear = await api("POST", "/v1/reports", o.task.credential, { ...report, text: `deploy --token ${secret}` });
  assert.deepEqual([clear.status, clear.body.error], [400, "words_in_the_clear"]);
  const posted = await api("POST", "/v1/reports", o.task.credential, report);
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  const qid = posted.body.question_id;
  // Reported again (a hook that fires twice): the same question, now known
  // by the newer open, its words those sealed for it.
  const again = await api("POST", "/v1/reports", o.task.credential, await sealedOpen(5));
  assert.deepEqual([again.status, again.body.question_id], [200, null], JSON.stringify(again.body));
  const listedNow = (await api("GET", "/v1/needs-you", o.token)).body.questions;
  assert.deepEqual(listedNow.map((x) => [x.question_id, x.open_seq]), [[qid, 5]]);
  const q = listedNow[0];
  assert.deepEqual([q.sealed, q.text, q.answer_from_afar, q.digest], [true, "", "decision", report.digest]);
  assert.deepEqual(q.decisions.map((d) => d.id), ["allow", "deny", id], "chosen by id: its words sealed");

  // The command line builds the card from the opened request.
  const listed = JSON.parse(await cliOf(o, "ls", "--json")).questions.find((x) => x.question_id === qid);
  assert.match(listed.text, new RegExp(`deploy --token ${secret}`));
  assert.deepEqual([listed.terminal.cwd, listed.terminal.host], [folder, "build-7"]);
  assert.equal(listed.decisions.find((d) => d.id === id).rule, `Bash(deploy --token ${secret}:*)`);

  // The page too; its "don't ask again", taken by the agent's machine,
  // records a rule whose words stay sealed.
  const relay = await relayByHand(o.task.credential);
  const { launch, newPage } = await import("../page/browser.js");
  const browser = await launch();
  try {
    const { page } = await pairedByOwner(o, (opts) => newPage(browser, opts));
    const card = page.locator(`#question-${qid}`);
    await card.locator(".text", { hasText: `deploy --token ${secret}` }).waitFor();
    assert.match(await card.locator(".terminal").textContent(), new RegExp(`^on build-7 · ${folder}`));
    await card.locator("button", { hasText: `Allow, and don't ask again for Bash(deploy --token ${secret}:*)` }).click();
    assert.match(await card.locator(".confirm-text").textContent(), /^Allow this on build-7, and from now on /);
    await card.locator(".confirm-yes").click();
    const sent = await waitFor(() => relay.got.find((m) => m.type === "answer"), 10000);
    assert.ok(sent, "the answer reached the relay");
    // Signed as the machine named them: keyed by the page as Node keys them.
    const signed = JSON.parse(Buffer.from(sent.signed.statement, "base64url"));
    assert.deepEqual([signed.digest, signed.answer.decision], [digest, id]);
    relay.ws.send(JSON.stringify({ type: "received", answer_id: sent.answer_id }));
    relay.ws.send(JSON.stringify({ type: "taken", answer_id: sent.answer_id }));
    const rule = await waitFor(async () => (await api("GET", "/v1/rules", o.token)).body.rules[0], 10000);
    assert.equal(rule.sealed_scope, id);
    assert.equal(rule.label, "");
    assert.ok(!rule.rule.includes(secret), rule.rule);
    await page.locator(".rule", { hasText: `Allowed without asking: Bash(deploy --token ${secret}:*).` }).waitFor();
    // The History builds its card from the opened request too (its machine
    // sealed the words without it), and finds it by its command.
    await page.click("#history-open");
    await page.locator("#history-state", { hasText: /questions? loaded\.$/ }).waitFor();
    await page.fill("#history-search", secret);
    await page.locator("#history-state", { hasText: /^1 of the \d+ questions? loaded\.$/ }).waitFor();
    await page.locator(`#past-${qid} .past-text`, { hasText: `Claude Code wants to run: deploy --token ${secret}` }).waitFor();
    assert.deepEqual(page.errors, []);
  } finally {
    await browser.close();
    relay.ws.close();
  }
  assert.match(await cliOf(o, "rules"), new RegExp(`Bash\\(deploy --token ${secret}:\\*\\)`));
  const logged = await cliOf(o, "log", secret);
  assert.ok(logged.includes(qid) && logged.includes(`Claude Code wants to run: deploy --token ${secret}`), logged);
  await heldNowhere([secret, folder, plainDigest, plainId.slice("keep-".length)]);
});

test("an answer's words are sealed on the device that makes it: a reply typed on the page and a denial's message from the command line open on the agent's machine alone", async () => {
  const o = await owner();
  const typed = `planted-typed-${randomBytes(6).toString("hex")}`;
  const denied = `planted-denied-${randomBytes(6).toString("hex")}`;
  const { dir, q } = await world.agentInTmux(o, { agent: "agent.py" });
  const { launch, newPage } = await import("../page/browser.js");
  const browser = await launch();
  try {
    const { page } = await pairedByOwner(o, (opts) => newPage(browser, opts));
    const card = page.locator(`#question-${q.question_id}`);
    await card.locator(".text", { hasText: /Shall I also update the docs/ }).waitFor();
    await card.locator(".answer input").fill(`Yes, and rotate ${typed}`);
    await card.locator(".answer button").click();
    // The real relay opened it and typed it.
    assert.ok(await waitFor(() => existsSync(join(dir, "answered")), 15000), "typed");
    const batches = readFileSync(join(dir, "keys.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).data);
    assert.deepEqual(batches, [`Yes, and rotate ${typed}`, "\r"]);
    const row = await w.db.prepare("SELECT text, body, sealed FROM answers WHERE question_id = ?").bind(q.question_id).first();
    assert.deepEqual([row.text, JSON.parse(row.body)], ["", { text: "" }], "the server keeps its form alone");
    assert.match(row.sealed, /^s1\.1\./);
    // The history on the page opens it.
    await page.click("#history-open");
    await page.locator(`#past-${q.question_id} .past-answer`, { hasText: `answered Yes, and rotate ${typed} by` }).waitFor();
    assert.deepEqual(page.errors, []);
  } finally {
    await browser.close();
  }
  const logged = (await cliOf(o, "log", "--json")).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(logged.find((p) => p.question_id === q.question_id).answers[0].text, `Yes, and rotate ${typed}`);

  // A permission sealed as its machine seals it, denied with a message by
  // `needs-you answer`; what the relay is handed, read here as a machine reads it.
  // Its card is longer than the list keeps a card's text, and holds a tab.
  const input = { command: `make release VERSION=${"9".repeat(5_000)}\tNOTES=1` };
  const words = await sealText(o.contentKey, o.key.fingerprint, "s-deny\n3", "question",
    JSON.stringify({ text: "", request: { tool: "Bash", input }, cwd: "/srv", target: "rel:0.1", host: "build-9" }));
  const posted = await api("POST", "/v1/reports", o.task.credential, {
    action: "open", cli: "claude-code", session: "s-deny", seq: 3, kind: "permission",
    terminal: { kind: "tmux", host: "box", target: "w:0.1" }, takes: "decision",
    digest: keyedId(o.contentKey, o.key.fingerprint, requestDigest("Bash", input)),
    sealed: { words, same: randomBytes(32).toString("hex") } });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  const qid = posted.body.question_id;
  const relay = await relayByHand(o.task.credential);
  try {
    const cli = ownerCli(o)("answer", qid, "--deny", `not with ${denied}`, "--yes");
    const frame = await waitFor(() => relay.got.find((m) => m.type === "answer" && m.question_id === qid), 10000);
    assert.ok(frame, "the answer reached the relay");
    assert.deepEqual([frame.decision, frame.message], ["deny", undefined]);
    const statement = JSON.parse(Buffer.from(frame.signed.statement, "base64url"));
    assert.deepEqual(statement.answer, { decision: "deny" });
    assert.equal(statement.digest, keyedId(o.contentKey, o.key.fingerprint, requestDigest("Bash", input)), "keyed by the command line as Node keys it");
    assert.equal(statement.sealed_hash, createHash("sha256").update(frame.sealed).digest("hex"), "the words signed are those beside it");
    assert.deepEqual(JSON.parse(await openText(o.contentKey, o.key.fingerprint, qid, "answer", frame.sealed)),
      { decision: "deny", message: `not with ${denied}` });
    await assert.rejects(openText(o.contentKey, o.key.fingerprint, q.question_id, "answer", frame.sealed), "sealed for its own question");
    relay.ws.send(JSON.stringify({ type: "received", answer_id: frame.answer_id }));
    relay.ws.send(JSON.stringify({ type: "taken", answer_id: frame.answer_id }));
    const r = await cli.ended;
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /The agent took it: deny\./);
    // Under the card it signs, the place its machine sealed: not the list's "box".
    assert.match(r.out, /^deny: .+\n {2}on build-9 · \/srv · tmux rel:0\.1\n/);
  } finally {
    relay.ws.close();
  }
  await heldNowhere([typed, denied]);
});

test("a task's name is sealed by the command line that starts it, for that task: no word of it is kept; tasks, ls, log and the page open it", async () => {
  const o = await owner();
  const secret = `planted-task-${randomBytes(6).toString("hex")}`;
  const scratch = mkdtempSync(join(tmpdir(), "needs-you-task-"));
  const credential = join(scratch, "credential");
  // The agent writes its task's credential where the test reads it, to
  // report as that task; then waits to be stopped.
  const run = ownerCli(o)("run", "--name", `release ${secret}`, "--", "sh", "-c", `printf %s "$NEEDS_YOU_TOKEN" > ${credential}; sleep 60`);
  try {
    assert.ok(await waitFor(() => existsSync(credential) && readFileSync(credential, "utf8").length > 0, 10000), "the task started");
    const row = await w.db.prepare("SELECT id, name, sealed_name FROM tasks WHERE owner_id = ? AND sealed_name IS NOT NULL").bind(o.owner_id).first();
    assert.ok(row, "a task with a sealed name");
    assert.equal(row.name, "");
    assert.equal(await openText(o.contentKey, o.key.fingerprint, row.id, "task", row.sealed_name), `release ${secret}`);
    await assert.rejects(openText(o.contentKey, o.key.fingerprint, o.task.task_id, "task", row.sealed_name), "sealed for its own task");
    const listed = JSON.parse(await cliOf(o, "tasks", "--json")).tasks.find((t) => t.task_id === row.id);
    assert.equal(listed.name, `release ${secret}`);
    // A question of that task: its group on the page, `ls` and the history name it.
    const q = (await api("POST", "/v1/reports", readFileSync(credential, "utf8"), {
      action: "open", cli: "claude-code", session: "s-task", seq: 1, kind: "reply",
      sealed: { words: await sealText(o.contentKey, o.key.fingerprint, "s-task\n1", "question", JSON.stringify({ text: "Go on?" })), same: randomBytes(32).toString("hex") } })).body;
    assert.ok(q.question_id, JSON.stringify(q));
    const shown = JSON.parse(await cliOf(o, "ls", "--json")).questions.find((x) => x.question_id === q.question_id);
    assert.equal(shown.task_name, `release ${secret}`);
    const logged = (await cliOf(o, "log", secret, "--json")).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(logged.map((p) => p.question_id), [q.question_id], "the history searched on the device finds it by its task");
    const { launch, newPage } = await import("../page/browser.js");
    const browser = await launch();
    try {
      const { page } = await pairedByOwner(o, (opts) => newPage(browser, opts));
      await page.locator("#questions .group-name", { hasText: `release ${secret}` }).waitFor();
      await page.locator("#tasks .name", { hasText: `release ${secret}` }).waitFor();
      assert.deepEqual(page.errors, []);
    } finally {
      await browser.close();
    }
    await heldNowhere([secret]);
  } finally {
    run.child.kill("SIGTERM");
    await run.ended;
  }
});

test("a device that holds the content key sends no word in the clear: to a question listed in the clear it sends a decision, never what the person writes", async () => {
  const o = await owner();
  const typed = `planted-unsent-${randomBytes(6).toString("hex")}`;
  // A machine that reports in the clear (it names no content key): what a
  // server that wants to read the reply would list a sealed question as.
  const { dir, q } = await world.agentInTmux(o, { agent: "agent.py", env: { NEEDS_YOU_CONTENT_KEYS: "", AGENT_ASKS: "Shall I go on?" } });
  assert.deepEqual([q.sealed ?? false, q.text, q.answer_from_afar], [false, "Shall I go on?", "text"]);
  const answers = async (qid) => (await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ?").bind(qid).first()).n;

  const { launch, newPage } = await import("../page/browser.js");
  const browser = await launch();
  try {
    const { page } = await pairedByOwner(o, (opts) => newPage(browser, opts));
    const card = page.locator(`#question-${q.question_id}`);
    await card.locator(".answer input").fill(`Yes, ${typed}`);
    await card.locator(".answer button").click();
    await page.locator("#status", { hasText: "this question is listed in the clear (its machine holds no content key, or so the server says), and what you write leaves this page only sealed" }).waitFor();
    // Its "Pair another device" hands on the owner it pinned, in the link
    // and with no secret (only the owner's `pair` vouches for keys): the
    // browser it pairs holds no key, and sends no word in the clear either.
    await page.click("#pair-other");
    await page.locator("#pair-link", { hasText: "/pair#" }).waitFor();
    const link = await page.locator("#pair-link").getAttribute("href");
    assert.match(link, new RegExp(`/pair#[0-9A-Z]{4}-[0-9A-Z]{4}\\.\\.${o.key.fingerprint}$`));
    assert.equal(await page.locator("#pair-link").textContent(), link);
    // Cut short, the link pairs nothing: it would pin no owner.
    const cut = (await newPage(browser)).page;
    await cut.goto(link.slice(0, -4));
    await cut.click("#pair-ask-yes");
    await cut.locator("#pair-error", { hasText: "this link's owner key is cut short or mangled: open the whole link, as it was shown" }).waitFor();
    const other = (await newPage(browser)).page;
    await other.goto(link);
    await other.click("#pair-ask-yes");
    const otherCard = other.locator(`#question-${q.question_id}`);
    await otherCard.locator(".answer input").fill(`Yes, ${typed}`);
    await otherCard.locator(".answer button").click();
    await other.locator("#status", { hasText: "this question is listed in the clear (its machine holds no content key, or so the server says), and what you write leaves this page only sealed" }).waitFor();
    assert.deepEqual(other.errors, []);
  } finally {
    await browser.close();
  }
  const cli = (...args) => ownerCli(o)(...args).ended;
  const refused = await cli("answer", q.question_id, `Yes, ${typed}`);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /^needs-you: nothing was sent: this question is listed in the clear \(its machine holds no content key, or so the server says\), and what you write goes only sealed: .+\n$/);
  assert.equal(await answers(q.question_id), 0, "nothing was sent");
  assert.equal(readFileSync(join(dir, "keys.jsonl"), "utf8"), "", "nothing typed");

  // A permission in the clear: a denial's message is words, an allow or a
  // bare denial none.
  const input = { command: "make release" };
  const p = (await api("POST", "/v1/reports", o.task.credential, {
    action: "open", cli: "claude-code", session: "s-clear-perm", seq: 1, kind: "permission",
    terminal: { kind: "tmux", host: "box", target: "w:0.1", cwd: "/srv" }, ...takesRequest("decision", "Bash", input) })).body;
  const withMessage = await cli("answer", p.question_id, "--deny", `not with ${typed}`, "--yes");
  assert.equal(withMessage.code, 1);
  assert.match(withMessage.err, /^needs-you: nothing was sent: this question is listed in the clear.*; a bare allow or denial still goes\n$/);
  assert.equal(await answers(p.question_id), 0);
  // A dialog's choices are the person's too.
  const d = (await api("POST", "/v1/reports", o.task.credential, {
    action: "open", cli: "claude-code", session: "s-clear-dialog", seq: 1, kind: "dialog",
    terminal: { kind: "tmux", host: "box", target: "w:0.2", cwd: "/srv" },
    ...takesRequest("choices", "AskUserQuestion", { questions: [{ question: "Which one?", header: "Pick", multiSelect: false, options: [{ label: "A", description: "" }, { label: "B", description: "" }] }] }) })).body;
  const chosen = await cli("answer", d.question_id, "--choose", "A", "--yes");
  assert.equal(chosen.code, 1, chosen.err);
  assert.match(chosen.err, /^needs-you: nothing was sent: this question is listed in the clear/);
  assert.equal(await answers(d.question_id), 0);
  const relay = await relayByHand(o.task.credential);
  try {
    const bare = ownerCli(o)("answer", p.question_id, "--deny", "--yes");
    const frame = await waitFor(() => relay.got.find((m) => m.type === "answer" && m.question_id === p.question_id), 10000);
    assert.ok(frame, "a bare denial is sent");
    assert.deepEqual([frame.decision, frame.message, frame.sealed], ["deny", undefined, undefined]);
    relay.ws.send(JSON.stringify({ type: "received", answer_id: frame.answer_id }));
    relay.ws.send(JSON.stringify({ type: "taken", answer_id: frame.answer_id }));
    assert.equal((await bare.ended).code, 0);
  } finally {
    relay.ws.close();
  }
  await heldNowhere([typed]);
});

test("words sealed for another open, or under a key the owner never made, do not open: the card says so and takes no answer", async () => {
  const o = await owner();
  const secret = `planted-moved-${randomBytes(6).toString("hex")}`;
  const sealed = (key, scope) => sealText(key, o.key.fingerprint, scope, "question", JSON.stringify({ text: `Go on with ${secret}?` }));
  const open = async (session, words) => (await api("POST", "/v1/reports", o.task.credential, {
    action: "open", cli: "claude-code", session, seq: 7, kind: "reply",
    sealed: { words, same: randomBytes(32).toString("hex") } })).body.question_id;
  const moved = await open("s-moved", await sealed(o.contentKey, "s-moved\n6"));
  const stranger = { version: 1, key: randomBytes(32).toString("base64url") };
  const planted = await open("s-planted", await sealed(stranger, "s-planted\n7"));
  const good = await open("s-good", await sealed(o.contentKey, "s-good\n7"));
  const listed = JSON.parse(await cliOf(o, "ls", "--json")).questions;
  const text = (qid) => listed.find((x) => x.question_id === qid).text;
  assert.equal(text(good), `Go on with ${secret}?`);
  for (const qid of [moved, planted]) {
    assert.match(text(qid), /^Its words are sealed, and could not be opened here/);
    assert.equal(listed.find((x) => x.question_id === qid).answer_from_afar, null);
  }
});

test("a sealed question's push: the service worker opens its summary with this browser's content key, as the open the push names", async () => {
  const o = await owner();
  const secret = `planted-push-${randomBytes(6).toString("hex")}`;
  const { deliverPush, launch, newPage, notifications, registrationId } = await import("../page/browser.js");
  const browser = await launch();
  try {
    const { context, page } = await pairedByOwner(o, (opts) => newPage(browser, opts));
    await context.grantPermissions(["notifications"], { origin: w.url });
    await page.evaluate(() => navigator.serviceWorker.ready);
    // The service worker alone, from a document of the same origin without the page's script.
    await page.goto(w.url + "/style.css");
    const { cdp, id } = await registrationId(context, page, w.url);
    const summary = await sealText(o.contentKey, o.key.fingerprint, "s-sw\n5", "summary", `Rotate ${secret}?`);
    const taskName = await sealText(o.contentKey, o.key.fingerprint, "tsk_sw", "task", `ship ${secret}`);
    const push = (qid, openSeq, task = {}) => deliverPush(cdp, w.url, id, { event: "open", question_id: qid, tag: `question-${qid}`,
      title: "Claude Code is asking", body: "release: open needs-you to see it", url: `/#question-${qid}`,
      task: "release", session: "s-sw", open_seq: openSeq, sealed: summary, ...task });
    await push("q_sealed", 5);
    // Named as another open than the one it was sealed for: not opened.
    await push("q_moved", 6);
    // Its task's name sealed too, opened as that task's only.
    await push("q_named", 5, { task: "A task", task_id: "tsk_sw", task_sealed: taskName });
    await push("q_other_task", 5, { task: "A task", task_id: "tsk_other", task_sealed: taskName });
    await waitFor(async () => (await notifications(page)).length === 4, 5000);
    const shown = Object.fromEntries((await notifications(page)).map((n) => [n.tag, n.body]));
    assert.deepEqual(shown, {
      "question-q_sealed": `release: Rotate ${secret}?`, "question-q_moved": "release: open needs-you to see it",
      "question-q_named": `ship ${secret}: Rotate ${secret}?`, "question-q_other_task": `A task: Rotate ${secret}?`,
    });
  } finally {
    await browser.close();
  }
});
