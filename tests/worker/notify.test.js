// The notification: one Durable Object alarm per dialog, real deliveries to a
// real HTTP sink on 127.0.0.1, with a short delay (the 15 s default has its
// own test file).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { call, count, newOwner, newTask, post, report, sleep, waitFor, withWorkerAndSink } from "./helpers.js";

const DELAY = 400;
const SECRET = "whsec-0123456789abcdef";
let w, sink;
withWorkerAndSink({ NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300" }, (ww, ss) => ([w, sink] = [ww, ss]));

/** A fresh owner with both channels pointing at the sink, with the
 *  question's words turned on unless `words` is false, and a task. */
async function setup({ words = true, name = "deploy bot" } = {}) {
  const owner = await newOwner(w);
  const topic = `topic-${owner.owner_id.slice(4, 16)}`;
  await call(w, "PUT", "/v1/channels/ntfy", { token: owner.token, body: { url: `${sink.url}/${topic}`, token: "tk_test", words } });
  await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${sink.url}/hook/${topic}`, secret: SECRET, words } });
  const task = await newTask(w, owner.token, { name });
  const mine = () => sink.received.filter((r) => r.url.includes(topic) || r.body.includes(topic));
  return { owner, task, topic, mine };
}

const open = (session, kind = "dialog", text = "Which region?") =>
  report({ session, action: "open", kind, text, options: [{ label: "eu" }, { label: "us" }] });

test("a dialog still open after the delay is notified exactly once, on every channel", async () => {
  const { task, topic, mine } = await setup();
  const r = await post(w, task.credential, open("n1"));
  const qid = r.body.question_id;
  await sleep(DELAY / 2);
  assert.equal(mine().length, 0, "nothing before the delay");
  await waitFor(() => mine().length >= 2, 5000);
  await sleep(DELAY * 2); // room for a wrong second delivery to show up
  const got = mine();
  assert.equal(got.length, 2, JSON.stringify(got.map((g) => g.url)));

  const ntfy = got.find((g) => !g.url.includes("/hook/"));
  assert.equal(ntfy.method, "POST");
  assert.equal(ntfy.url, "/");
  assert.equal(ntfy.headers.authorization, "Bearer tk_test");
  const n = JSON.parse(ntfy.body);
  assert.equal(n.topic, topic);
  assert.equal(n.title, "deploy bot is asking");
  assert.equal(n.message, "Which region?\n• eu\n• us");
  assert.equal(n.priority, 4);
  assert.equal(n.sequence_id, qid);

  const hook = got.find((g) => g.url.includes("/hook/"));
  const expected = createHmac("sha256", SECRET).update(hook.body).digest("hex");
  assert.equal(hook.headers["x-needs-you-signature"], `sha256=${expected}`);
  const event = JSON.parse(hook.body);
  assert.equal(event.event, "question.open");
  assert.equal(event.question.question_id, qid);
  assert.equal(event.question.task_name, "deploy bot");

  const row = await w.db.prepare("SELECT notified_at, opened_at FROM questions WHERE id = ?").bind(qid).first();
  assert.ok(row.notified_at >= row.opened_at + DELAY, "not before the delay");
  assert.equal(await count(w, "deliveries", `question_id = '${qid}' AND ok = 1 AND event = 'open'`), 2);
});

test("a channel without words tells only which CLI waits and what kind of question, and its listing says so", async () => {
  const secret = "planted-9f3c2a";
  const { owner, task, mine } = await setup({ words: false, name: `task ${secret}` });
  const listed = (await call(w, "GET", "/v1/channels", { token: owner.token })).body.channels;
  assert.deepEqual(listed.map((c) => [c.kind, c.words]).sort(), [["ntfy", false], ["webhook", false]]);
  const r = await post(w, task.credential, report({ session: "nw", action: "open", kind: "permission",
    text: `Run deploy --token ${secret}?`, options: [{ label: `yes ${secret}` }] }));
  await waitFor(() => mine().length >= 2, 5000);
  for (const got of mine()) assert.ok(!got.body.includes(secret), got.body);
  const ntfy = JSON.parse(mine().find((g) => g.url === "/").body);
  assert.equal(ntfy.title, "Claude Code needs your permission");
  assert.equal(ntfy.message, "Open needs-you to see it.");
  const event = JSON.parse(mine().find((g) => g.url.includes("/hook/")).body);
  assert.equal(event.words, false);
  assert.deepEqual(Object.keys(event.question).sort(),
    ["answer_from_afar", "cli", "close_reason", "closed_at", "kind", "notified_at", "open_seq", "opened_at", "question_id", "task_id"]);
  assert.equal(event.question.question_id, r.body.question_id);
  assert.equal(event.question.kind, "permission");
});

test("a dialog closed before the delay is never notified", async () => {
  const { task, mine } = await setup();
  const r = await post(w, task.credential, open("n2"));
  await post(w, task.credential, report({ session: "n2", action: "close", reason: "answered" }));
  await sleep(DELAY * 3);
  assert.equal(mine().length, 0);
  assert.equal(await count(w, "deliveries", `question_id = '${r.body.question_id}'`), 0);
});

test("a reply ending with a question is listed but never notified", async () => {
  const { owner, task, mine } = await setup();
  await post(w, task.credential, open("n3", "reply", "Shall I merge?"));
  await sleep(DELAY * 3);
  assert.equal(mine().length, 0);
  const qs = (await call(w, "GET", "/v1/needs-you", { token: owner.token })).body.questions;
  assert.equal(qs.length, 1);
  assert.equal(qs[0].notified_at, null);
});

test("a permission dialog is notified with its own title", async () => {
  const { task, mine } = await setup();
  await post(w, task.credential, open("n4", "permission", "Run `terraform apply`"));
  await waitFor(() => mine().length >= 2, 5000);
  const ntfy = JSON.parse(mine().find((g) => g.url === "/").body);
  assert.equal(ntfy.title, "deploy bot needs your permission");
  assert.deepEqual(ntfy.tags, ["lock", "claude-code"]);
});

test("a channel that is down is retried and delivered once when it is back", async () => {
  const owner = await newOwner(w);
  const topic = `down-${owner.owner_id.slice(4, 16)}`;
  await call(w, "PUT", "/v1/channels/ntfy", { token: owner.token, body: { url: `${sink.url}/${topic}` } });
  const task = await newTask(w, owner.token);
  const mine = () => sink.received.filter((r) => r.body.includes(topic));
  const r = await post(w, task.credential, open("n5"));
  // Fail the first two attempts (the only requests in flight for this owner
  // then: the sink is shared, so wait until the alarm is close).
  await sleep(DELAY - 100);
  sink.failNext(2);
  await waitFor(async () => (await count(w, "deliveries", `question_id = '${r.body.question_id}' AND ok = 1`)) > 0, 8000);
  await sleep(1000);
  const attempts = (await w.db.prepare("SELECT attempt, ok, status FROM deliveries WHERE question_id = ? ORDER BY attempt").bind(r.body.question_id).all()).results;
  assert.deepEqual(attempts.map((a) => [a.attempt, a.ok, a.status]), [[1, 0, 503], [2, 0, 503], [3, 1, 200]]);
  assert.equal(mine().length, 3, "two refused, one delivered, none after");
});

test("a notified dialog that closes tells the channels: ntfy clears, the webhook gets a closed event", async () => {
  const { task, topic, mine } = await setup();
  const r = await post(w, task.credential, open("n6"));
  const qid = r.body.question_id;
  await waitFor(() => mine().length >= 2, 5000);
  await post(w, task.credential, report({ session: "n6", action: "close", reason: "answered" }));
  await waitFor(() => mine().length >= 4, 5000);
  await sleep(DELAY);
  const got = mine();
  assert.equal(got.length, 4);
  const clear = got.find((g) => g.method === "PUT");
  assert.equal(clear.url, `/${topic}/${qid}/clear`);
  assert.equal(clear.headers.authorization, "Bearer tk_test");
  const closed = got.filter((g) => g.url.includes("/hook/")).map((g) => JSON.parse(g.body));
  assert.deepEqual(closed.map((e) => e.event), ["question.open", "question.closed"]);
  assert.equal(closed[1].question.close_reason, "answered");
});

test("a superseded dialog is not notified; its successor is", async () => {
  const { task, mine } = await setup();
  const first = await post(w, task.credential, open("n7", "dialog", "First?"));
  const second = await post(w, task.credential, open("n7", "dialog", "Second?"));
  await waitFor(() => mine().length >= 2, 5000);
  await sleep(DELAY * 2);
  const ids = mine().filter((g) => g.url === "/").map((g) => JSON.parse(g.body).sequence_id);
  assert.deepEqual(ids, [second.body.question_id]);
  assert.notEqual(first.body.question_id, second.body.question_id);
});

test("an owner without channels: the question stays listed, nothing is sent", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const before = sink.received.length;
  const r = await post(w, task.credential, open("n8"));
  await sleep(DELAY * 3);
  assert.equal(sink.received.length, before);
  assert.equal(await count(w, "deliveries", `question_id = '${r.body.question_id}'`), 0);
});

test("a channel's redirect is not followed: the Worker talks only to the URL it was given", async () => {
  const { owner, task, topic, mine } = await setup();
  await call(w, "DELETE", "/v1/channels/ntfy", { token: owner.token });
  sink.redirectNext(1, `${sink.url}/elsewhere/${topic}`);
  const r = await post(w, task.credential, open("redirected"));
  const qid = r.body.question_id;
  await waitFor(async () => (await count(w, "deliveries", `question_id = '${qid}' AND ok = 1`)) > 0, 8000);
  const first = await w.db.prepare("SELECT status, ok FROM deliveries WHERE question_id = ? ORDER BY attempt LIMIT 1").bind(qid).first();
  assert.deepEqual([first.status, first.ok], [307, 0], "a redirect is a failed attempt, retried");
  assert.ok(mine().every((g) => !g.url.startsWith("/elsewhere/")), "the redirect's target was never asked");
  assert.ok(mine().some((g) => g.url.startsWith("/hook/")));
});
