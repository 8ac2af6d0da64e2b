// Every way a question closes tells the channels that were told of it: a
// close report, a different question superseding it, its task revoked, its
// task expired (closed by the daily cron). Real D1, real Durable Objects, a
// real sink on 127.0.0.1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { call, newOwner, newTask, post, report, sleep, startSink, waitFor, withWorkerAndSink } from "./helpers.js";

const DELAY = 300;
let w, sink;
withWorkerAndSink({ NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300" }, (ww, ss) => ([w, sink] = [ww, ss]));

/** An owner with both channels on the sink, a task, and one notified dialog. */
async function notifiedDialog(taskBody = { name: "closer" }) {
  const owner = await newOwner(w);
  const topic = `t-${owner.owner_id.slice(4, 16)}`;
  await call(w, "PUT", "/v1/channels/ntfy", { token: owner.token, body: { url: `${sink.url}/${topic}` } });
  await call(w, "PUT", "/v1/channels/webhook", {
    token: owner.token,
    body: { url: `${sink.url}/hook/${topic}`, secret: "0123456789abcdef" },
  });
  const task = await newTask(w, owner.token, taskBody);
  const r = await post(w, task.credential, report({ session: "c", action: "open", kind: "dialog", text: "Ship it?" }));
  const qid = r.body.question_id;
  const mine = () => sink.received.filter((g) => g.url.includes(topic) || g.body.includes(topic) || g.body.includes(qid));
  await waitFor(() => mine().length >= 2, 5000);
  assert.equal(mine().length, 2, "notified on both channels");
  return { owner, task, qid, topic, mine };
}

/** The close events that reached the sink for `qid`: ntfy's clear and the webhook's event. */
async function closeEvents(d) {
  await waitFor(() => d.mine().length >= 4, 5000);
  await sleep(DELAY * 2); // room for a wrong extra delivery
  const got = d.mine().slice(2);
  const clear = got.filter((g) => g.method === "PUT" && g.url === `/${d.topic}/${d.qid}/clear`);
  const hooks = got.filter((g) => g.url.includes("/hook/")).map((g) => JSON.parse(g.body));
  return { count: got.length, clear: clear.length, hooks };
}

test("a close report tells the channels", async () => {
  const d = await notifiedDialog();
  await post(w, d.task.credential, report({ session: "c", action: "close", reason: "tool_ran" }));
  const e = await closeEvents(d);
  assert.equal(e.count, 2);
  assert.equal(e.clear, 1);
  assert.deepEqual(e.hooks.map((h) => [h.event, h.question.close_reason]), [["question.closed", "tool_ran"]]);
});

test("a different question superseding it tells the channels", async () => {
  const d = await notifiedDialog();
  await post(w, d.task.credential, report({ session: "c", action: "open", kind: "reply", text: "Anything else?" }));
  const e = await closeEvents(d);
  assert.equal(e.count, 2);
  assert.equal(e.clear, 1);
  assert.deepEqual(e.hooks.map((h) => [h.event, h.question.close_reason]), [["question.closed", "superseded"]]);
});

test("revoking the task tells the channels", async () => {
  const d = await notifiedDialog();
  const r = await call(w, "DELETE", `/v1/tasks/${d.task.task_id}`, { token: d.owner.token });
  assert.equal(r.body.closed_questions, 1);
  const e = await closeEvents(d);
  assert.equal(e.count, 2);
  assert.equal(e.clear, 1);
  assert.deepEqual(e.hooks.map((h) => [h.event, h.question.close_reason]), [["question.closed", "session_end"]]);
});

test("the daily cron closing an expired task's question tells the channels", async () => {
  const d = await notifiedDialog({ name: "short-lived", expires_in_s: 2 });
  await waitFor(async () => {
    const t = await w.db.prepare("SELECT expires_at FROM tasks WHERE id = ?").bind(d.task.task_id).first();
    return t.expires_at <= Date.now();
  }, 5000);
  const worker = await w.mf.getWorker();
  await worker.scheduled({ cron: "17 3 * * *", scheduledTime: new Date() });
  const e = await closeEvents(d);
  assert.equal(e.count, 2);
  assert.equal(e.clear, 1);
  assert.deepEqual(e.hooks.map((h) => [h.event, h.question.close_reason]), [["question.closed", "session_end"]]);
});

test("a close that comes while an open is still being sent reaches every channel that had the open", async () => {
  // ntfy answers at once, the webhook slowly: the question closes while the
  // notifier still waits on the webhook.
  const slow = await startSink();
  slow.delay(1500);
  try {
    const owner = await newOwner(w);
    const topic = `race-${owner.owner_id.slice(4, 16)}`;
    await call(w, "PUT", "/v1/channels/ntfy", { token: owner.token, body: { url: `${sink.url}/${topic}` } });
    await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${slow.url}/hook`, secret: "0123456789abcdef" } });
    const task = await newTask(w, owner.token, { name: "racer" });
    const r = await post(w, task.credential, report({ session: "race", action: "open", kind: "dialog", text: "Now?" }));
    const qid = r.body.question_id;
    const mine = (s) => s.received.filter((g) => g.url.includes(topic) || g.body.includes(qid));
    await waitFor(() => mine(slow).length === 1, 5000); // the webhook's open is under way
    await post(w, task.credential, report({ session: "race", action: "close", reason: "answered" }));
    await waitFor(() => mine(sink).some((g) => g.method === "PUT") && mine(slow).length >= 2, 10_000);
    await sleep(2000);
    assert.deepEqual(mine(sink).map((g) => g.method), ["POST", "PUT"], "ntfy: the open, then its clear");
    const hook = mine(slow).map((g) => JSON.parse(g.body));
    assert.deepEqual(hook.map((e) => [e.event, e.question.close_reason]), [["question.open", null], ["question.closed", "answered"]]);
  } finally {
    await slow.stop();
  }
});
