// An armed alarm survives a restart of the runtime: dialogs are armed, the
// Miniflare instance is disposed of before their alarms are due, and a new
// one is started on the same persisted D1 and Durable Object storage. Each
// dialog is then notified exactly once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { call, newOwner, newTask, post, report, sleep, startSink, startWorker, waitFor, withWorkerAndSink } from "./helpers.js";

const DELAY = 3000;
const DIALOGS = 12;
let w, sink;
withWorkerAndSink({ NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300" }, (ww, ss) => ([w, sink] = [ww, ss]));

test("dialogs armed before a restart are each notified once after it", async () => {
  const owner = await newOwner(w);
  await call(w, "PUT", "/v1/channels/webhook", {
    token: owner.token,
    body: { url: `${sink.url}/hook`, secret: "0123456789abcdef" },
  });
  const task = await newTask(w, owner.token);
  const ids = [];
  for (let i = 0; i < DIALOGS; i++) {
    const r = await post(w, task.credential, report({ session: `r${i}`, action: "open", kind: "dialog", text: `Q${i}?` }));
    ids.push(r.body.question_id);
  }
  // Let the notifier calls that follow each response land, then restart
  // well before the first alarm is due.
  await sleep(500);
  assert.equal(sink.received.length, 0, "nothing sent before the restart");
  await w.restart();

  await waitFor(() => sink.received.length >= DIALOGS, DELAY + 10_000);
  await sleep(1500); // room for a second delivery of any of them
  const notified = sink.received.map((r) => JSON.parse(r.body).question.question_id);
  assert.deepEqual([...notified].sort(), [...ids].sort(), "each armed dialog notified exactly once");
  const rows = await w.db.prepare("SELECT COUNT(*) AS n FROM questions WHERE notified_at IS NOT NULL").first();
  assert.equal(rows.n, DIALOGS);
});

test("dialogs armed for a long delay, their objects idle all the while, are each notified once", async () => {
  // An idle object is evicted from memory long before this delay; when its
  // alarm wakes it, it must still know its question.
  const LONG = 80_000;
  const idle = await startWorker({ NOTIFY_DELAY_MS: String(LONG), NOTIFY_RETRY_MS: "300" });
  const idleSink = await startSink();
  try {
    const owner = await newOwner(idle);
    await call(idle, "PUT", "/v1/channels/webhook", {
      token: owner.token,
      body: { url: `${idleSink.url}/hook`, secret: "0123456789abcdef" },
    });
    const task = await newTask(idle, owner.token);
    const ids = [];
    for (let i = 0; i < 10; i++) {
      const r = await post(idle, task.credential, report({ session: `idle${i}`, action: "open", kind: "dialog", text: `L${i}?` }));
      ids.push(r.body.question_id);
    }
    await sleep(LONG - 5000);
    assert.equal(idleSink.received.length, 0, "nothing before the delay");
    await waitFor(() => idleSink.received.length >= ids.length, 20_000);
    await sleep(1500);
    const notified = idleSink.received.map((r) => JSON.parse(r.body).question.question_id);
    assert.deepEqual([...notified].sort(), [...ids].sort(), "each idle dialog notified exactly once");
  } finally {
    await idle.stop();
    await idleSink.stop();
  }
});
