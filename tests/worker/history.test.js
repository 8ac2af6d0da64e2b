// The history (GET /v1/history): every question the owner's tasks asked,
// open and closed, newest first, a page at a time, each with every answer it
// had (who, what, when, what became of it) and the rules they granted.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, newOwner, newTask, post, report, startWorker, waitFor, relaySocket } from "./helpers.js";
import { lastingId, requestDigest, takesRequest } from "../support/request.js";

let w;
before(async () => { w = await startWorker(); });
after(async () => w?.stop());

const NPM = { command: "npm test", description: "Run the tests" };
const RULE = { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test *" }], behavior: "allow", destination: "localSettings" };

const relay = (credential) => relaySocket(w, credential);

const history = (token, query = "") => call(w, "GET", `/v1/history${query}`, { token });

test("the history holds every question, newest first, with its answers and the rules they granted; pages follow on without a gap", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token, { name: "release" });
  const p = await call(w, "POST", "/v1/pairings", { token: owner.token, body: {} });
  const phone = (await call(w, "POST", "/v1/devices", { body: { code: p.body.code, name: "phone" } })).body;

  // A permission allowed from the phone with a lasting choice, taken by the agent, then closed.
  const opened = await post(w, task.credential, report({ session: "s1", action: "open", kind: "permission", text: "Run npm test?",
    terminal: { kind: "tmux", host: "build-box", cwd: "/w", pane: "%1" },
    ...takesRequest("decision", "Bash", NPM, [RULE]) }));
  const allowed = opened.body.question_id;
  const relayed = await relay(task.credential);
  const sent = await call(w, "POST", `/v1/questions/${allowed}/answers`, { token: phone.token,
    body: { decision: lastingId(RULE), digest: requestDigest("Bash", NPM) } });
  assert.equal(sent.status, 201, sent.text);
  await waitFor(() => relayed.got.some((m) => m.type === "answer"), 5000);
  relayed.say({ type: "received", answer_id: sent.body.answer_id });
  relayed.say({ type: "taken", answer_id: sent.body.answer_id });
  await waitFor(async () => (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules.length === 1, 5000);
  relayed.ws.close();
  await post(w, task.credential, report({ session: "s1", action: "close", reason: "answered" }));
  // Then three more, the last still open.
  const later = [];
  for (const [session, text] of [["s2", "Which region?"], ["s3", "Shall I merge?"], ["s4", "Deploy now?"]]) {
    later.push((await post(w, task.credential, report({ session, action: "open", kind: "dialog", text, options: [{ label: "yes" }] }))).body.question_id);
  }
  await post(w, task.credential, report({ session: "s2", action: "close", reason: "answered" }));

  const first = await history(owner.token, "?limit=3");
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.body.questions.map((q) => q.question_id), later.slice().reverse());
  assert.ok(first.body.next, "a full page says where the next starts");
  const second = await history(owner.token, `?limit=3&before=${encodeURIComponent(first.body.next)}`);
  assert.deepEqual(second.body.questions.map((q) => q.question_id), [allowed]);
  assert.equal(second.body.next, null);

  const [past] = second.body.questions;
  assert.equal(past.who, "Claude Code needs your permission");
  assert.match(past.text, /\$ npm test$/, "the words the list showed");
  assert.equal(past.close_reason, "answered");
  assert.equal(past.screen, false, "Show terminal is the open list's");
  assert.equal(past.answers.length, 1);
  const [answer] = past.answers;
  assert.deepEqual([answer.answer_id, answer.by, answer.form, answer.state], [sent.body.answer_id, "phone", "decision", "taken"]);
  assert.ok(answer.created_at > 0 && answer.updated_at >= answer.created_at, JSON.stringify(answer));
  assert.deepEqual(past.rules.map((r) => [r.rule, r.granted_by, r.state, r.host]), [["Bash(npm test *)", "phone", "granted", "build-box"]]);
  const open = first.body.questions[0];
  assert.deepEqual([open.closed_at, open.answers, open.rules], [null, [], []]);

  // The phone reads the same history; another owner reads none of it.
  const fromPhone = await history(phone.token);
  assert.deepEqual(fromPhone.body.questions.map((q) => q.question_id), [...later.slice().reverse(), allowed]);
  assert.equal(fromPhone.body.next, null);
  const eve = await newOwner(w, "Eve");
  assert.deepEqual((await history(eve.token)).body, { questions: [], next: null });
  assert.equal((await history(undefined)).status, 401);
  // An agent holding its task's credential reads no history, its own task's neither.
  assert.equal((await history(task.credential)).status, 401);
});

test("a page's start or size it cannot read is refused with a clear message", async () => {
  const owner = await newOwner(w);
  for (const query of ["?before=yesterday", "?before=12:", "?before=-1:q_x", "?before=1:q'x", "?limit=0", "?limit=201", "?limit=ten"]) {
    const r = await history(owner.token, query);
    assert.equal(r.status, 400, query);
    assert.ok(["invalid_cursor", "invalid_request"].includes(r.body.error), `${query}: ${r.text}`);
    assert.ok(r.body.message.length > 10, r.text);
  }
  assert.equal((await history(owner.token, "?limit=200")).status, 200);
});
