// The real 15-second default: a dialog is notified once, not before 15 s.
// NOTIFY_DELAY_MS is left unset, as in a deploy that sets no delay.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { call, newOwner, newTask, post, report, sleep, startSink, startWorker, waitFor } from "./helpers.js";

let w, sink;
before(async () => {
  w = await startWorker();
  sink = await startSink();
});
after(async () => {
  await w?.stop();
  await sink?.stop();
});

test("a dialog is notified at the default 15 s, not before", async () => {
  const owner = await newOwner(w);
  await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${sink.url}/hook`, secret: "0123456789abcdef" } });
  const task = await newTask(w, owner.token);
  const sent = Date.now();
  await post(w, task.credential, report({ session: "d", action: "open", kind: "dialog", text: "Proceed?" }));
  await sleep(14_000);
  assert.equal(sink.received.length, 0, "nothing before 15 s");
  await waitFor(() => sink.received.length > 0, 8000);
  assert.equal(sink.received.length, 1);
  assert.ok(sink.received[0].at - sent >= 15_000, `after ${sink.received[0].at - sent} ms`);
});
