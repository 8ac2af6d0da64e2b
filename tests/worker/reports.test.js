// POST /v1/reports: the report semantics (docs/api.md), and the Needs-you list.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { call, newOwner, newTask, post, report, startWorker } from "./helpers.js";

let w, ana, task;
before(async () => {
  w = await startWorker();
  ana = await newOwner(w, "Ana");
  task = await newTask(w, ana.token, { name: "api refactor" });
});
after(async () => w?.stop());

const list = async (token = ana.token) => (await call(w, "GET", "/v1/needs-you", { token })).body.questions;
const mine = async (session) => (await list()).filter((q) => q.session === session);

test("an open is listed with its task, options and times; a close removes it", async () => {
  const r = await post(w, task.credential, report({
    session: "list-1", action: "open", kind: "dialog", text: "Which auth strategy?",
    options: [{ label: "OAuth (GitHub)", description: "sign in with GitHub" }, { label: "Email + password" }],
  }));
  assert.equal(r.status, 200);
  assert.equal(r.body.applied, true);
  assert.equal(r.body.state, "waiting");
  assert.match(r.body.question_id, /^q_[0-9a-f]{32}$/);
  const [q] = await mine("list-1");
  assert.equal(q.question_id, r.body.question_id);
  assert.equal(q.task_id, task.task_id);
  assert.equal(q.task_name, "api refactor");
  assert.equal(q.cli, "claude-code");
  assert.equal(q.kind, "dialog");
  assert.equal(q.text, "Which auth strategy?");
  assert.deepEqual(q.options, [{ label: "OAuth (GitHub)", description: "sign in with GitHub" }, { label: "Email + password" }]);
  assert.ok(Math.abs(q.opened_at - Date.now()) < 10_000);
  assert.equal(q.notified_at, null);

  const c = await post(w, task.credential, report({ session: "list-1", action: "close", reason: "answered" }));
  assert.equal(c.body.applied, true);
  assert.equal(c.body.state, "running");
  assert.deepEqual(await mine("list-1"), []);
});

test("a stale or repeated report is acknowledged and ignored", async () => {
  const open = report({ session: "stale", action: "open", kind: "reply", text: "Ship it?" });
  assert.equal((await post(w, task.credential, open)).body.applied, true);
  const again = await post(w, task.credential, open);
  assert.equal(again.status, 200);
  assert.equal(again.body.applied, false, "the same seq again is stale");
  const older = await post(w, task.credential, { ...open, seq: open.seq - 1, text: "Older?" });
  assert.equal(older.body.applied, false);
  const qs = await mine("stale");
  assert.equal(qs.length, 1);
  assert.equal(qs[0].text, "Ship it?");
});

test("a close that overtook its open on the network wins", async () => {
  const open = report({ session: "overtake", action: "open", kind: "dialog", text: "A or B?" });
  const close = report({ session: "overtake", action: "close", reason: "answered" });
  assert.ok(close.seq > open.seq);
  assert.equal((await post(w, task.credential, close)).body.applied, true);
  const late = await post(w, task.credential, open);
  assert.equal(late.status, 200);
  assert.equal(late.body.applied, false);
  assert.deepEqual(await mine("overtake"), []);
});

test("a new open supersedes the one before; the same question again is a no-op", async () => {
  const first = await post(w, task.credential, report({ session: "sup", action: "open", kind: "dialog", text: "First?" }));
  const same = await post(w, task.credential, report({ session: "sup", action: "open", kind: "dialog", text: "First?" }));
  assert.equal(same.body.applied, true);
  assert.equal(same.body.question_id, null, "no new question");
  let qs = await mine("sup");
  assert.equal(qs.length, 1);
  assert.equal(qs[0].question_id, first.body.question_id);

  const second = await post(w, task.credential, report({ session: "sup", action: "open", kind: "permission", text: "Run rm?" }));
  qs = await mine("sup");
  assert.equal(qs.length, 1);
  assert.equal(qs[0].question_id, second.body.question_id);
  const old = await w.db.prepare("SELECT closed_at, close_reason FROM questions WHERE id = ?").bind(first.body.question_id).first();
  assert.equal(old.close_reason, "superseded");
  assert.ok(old.closed_at > 0);
});

test("a close with nothing open changes nothing but the seq", async () => {
  const r = await post(w, task.credential, report({ session: "empty", action: "close", reason: "round_end" }));
  assert.equal(r.body.applied, true);
  assert.deepEqual(await mine("empty"), []);
});

test("sessions are independent; the task waits while any has an open question", async () => {
  const t = await newTask(w, ana.token, { name: "two sessions" });
  await post(w, t.credential, report({ session: "a", action: "open", kind: "reply", text: "A?" }));
  const b = await post(w, t.credential, report({ session: "b", action: "open", kind: "reply", text: "B?" }));
  assert.equal(b.body.state, "waiting");
  const ca = await post(w, t.credential, report({ session: "a", action: "close", reason: "prompt_submitted" }));
  assert.equal(ca.body.state, "waiting", "b is still open");
  const cb = await post(w, t.credential, report({ session: "b", action: "close", reason: "prompt_submitted" }));
  assert.equal(cb.body.state, "running");
});

test("the list is newest first and only the owner's", async () => {
  const bo = await newOwner(w, "Bo");
  const boTask = await newTask(w, bo.token, { name: "bo's" });
  await post(w, task.credential, report({ session: "order-1", action: "open", kind: "reply", text: "One?" }));
  await new Promise((r) => setTimeout(r, 5));
  await post(w, task.credential, report({ session: "order-2", action: "open", kind: "reply", text: "Two?" }));
  await post(w, boTask.credential, report({ session: "order-3", action: "open", kind: "reply", text: "Bo's?" }));
  const anas = await list();
  const i1 = anas.findIndex((q) => q.session === "order-1");
  const i2 = anas.findIndex((q) => q.session === "order-2");
  assert.ok(i2 >= 0 && i1 > i2, "newest first");
  assert.ok(!anas.some((q) => q.text === "Bo's?"));
  const bos = await list(bo.token);
  assert.deepEqual(bos.map((q) => q.text), ["Bo's?"]);
});

test("one task's reports never touch another task's session of the same name", async () => {
  const other = await newTask(w, ana.token, { name: "other" });
  await post(w, task.credential, report({ session: "shared", action: "open", kind: "reply", text: "Mine?" }));
  await post(w, other.credential, report({ session: "shared", action: "close", reason: "answered" }));
  const qs = await mine("shared");
  assert.equal(qs.length, 1);
  assert.equal(qs[0].task_id, task.task_id);
});

test("long text is cut with an ellipsis, not refused", async () => {
  const r = await post(w, task.credential, report({ session: "long", action: "open", kind: "reply", text: "é".repeat(5000) + "?" }));
  assert.equal(r.status, 200);
  const [q] = await mine("long");
  assert.equal([...q.text].length, 4000);
  assert.ok(q.text.endsWith("…"));
});

test("with many closed questions, the planner itself picks the partial index of open ones", async () => {
  // Production names the index (INDEXED BY) as a guarantee; this checks that
  // SQLite would choose it anyway once closed questions pile up, so the hint
  // and the index definition agree.
  const closed = Array.from({ length: 500 }, (_, i) =>
    w.db.prepare(`INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq, closed_at, close_reason)
                  VALUES (?1, ?2, ?3, ?1, 'codex', 'reply', 'x?', '[]', ?4, 1, ?4, 'answered')`)
      .bind(`q_pile_${i}`, ana.owner_id, task.task_id, Date.now() - i));
  await w.db.batch(closed);
  await w.db.prepare("ANALYZE").run();
  const plan = await w.db
    .prepare(`EXPLAIN QUERY PLAN SELECT q.id FROM questions q JOIN tasks t ON t.id = q.task_id
              WHERE q.owner_id = ?1 AND q.closed_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
              ORDER BY q.opened_at DESC`)
    .bind(ana.owner_id, Date.now())
    .all();
  const detail = plan.results.map((r) => r.detail).join("\n");
  assert.match(detail, /questions_open_by_owner/, detail);
  assert.doesNotMatch(detail, /TEMP B-TREE/, "no sort step: the index gives the order");
});

test("the daily clean-up closes an expired task's questions and deletes closed questions older than 30 days", async () => {
  const old = Date.now() - 31 * 24 * 3600 * 1000;
  const insert = (id, closedAt) =>
    w.db.prepare(`INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq, closed_at, close_reason)
                  VALUES (?1, ?2, ?3, ?1, 'codex', 'reply', 'x?', '[]', ?4, 1, ?5, 'answered')`)
      .bind(id, ana.owner_id, task.task_id, old, closedAt).run();
  await insert("q_old", old);
  await insert("q_recent", Date.now() - 24 * 3600 * 1000);
  await insert("q_open_old", null);
  const expired = await newTask(w, ana.token, { name: "expiring", expires_in_s: 1 });
  const open = await post(w, expired.credential, report({ session: "exp", action: "open", kind: "reply", text: "Q?" }));
  await new Promise((r) => setTimeout(r, 1100));
  const worker = await w.mf.getWorker();
  await worker.scheduled({ cron: "17 3 * * *", scheduledTime: new Date() });
  const ids = (await w.db.prepare("SELECT id FROM questions WHERE id IN ('q_old','q_recent','q_open_old')").all()).results.map((r) => r.id);
  assert.deepEqual(ids.sort(), ["q_open_old", "q_recent"]);
  const closed = await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(open.body.question_id).first();
  assert.equal(closed.close_reason, "session_end", "the expired task's question was closed");
  const still = await w.db.prepare("SELECT closed_at FROM questions WHERE id = 'q_open_old'").first();
  assert.equal(still.closed_at, null, "a live task's open question stays open");
});
