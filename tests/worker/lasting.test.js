// A permission's lasting choices from afar (docs/decisions.md, "Lasting
// choices"): offered only as the CLI suggested them, each bound by an id
// made from the suggestion itself, chosen like an allow (bound to its
// request, spent once), recorded as a rule when the agent took it, listed
// on its task, and taken back through the task's relay.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, newOwner, newTask, post, report, startWorker, waitFor, relaySocket } from "./helpers.js";
import { lastingId, requestDigest, takesRequest } from "../support/request.js";

let w;
before(async () => { w = await startWorker(); });
after(async () => w?.stop());

const NPM = { command: "npm test", description: "Run the tests" };
const RULE = { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test *" }], behavior: "allow", destination: "localSettings" };
const MODE = { type: "setMode", mode: "acceptEdits", destination: "session" };

async function world(rights) {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const p = await call(w, "POST", "/v1/pairings", { token: owner.token, body: rights ? { rights } : {} });
  const d = await call(w, "POST", "/v1/devices", { body: { code: p.body.code, name: "phone" } });
  assert.equal(d.status, 201, d.text);
  return { owner, task, device: d.body };
}

async function permission(task, session, lasting, input = NPM) {
  const r = await post(w, task.credential, report({ session, action: "open", kind: "permission", text: "x",
    terminal: { kind: "tmux", host: "build-box", cwd: "/w", pane: "%1" },
    ...takesRequest("decision", "Bash", input, lasting) }));
  assert.equal(r.status, 200, r.text);
  return r.body.question_id;
}

const listed = async (owner, qid) =>
  (await call(w, "GET", "/v1/needs-you", { token: owner.token })).body.questions.find((q) => q.question_id === qid);
const decide = (token, qid, decision, input = NPM) =>
  call(w, "POST", `/v1/questions/${qid}/answers`, { token, body: { decision, digest: requestDigest("Bash", input) } });

const relay = (credential) => relaySocket(w, credential);

test("a permission offers allow once, deny, and exactly the lasting choices its CLI suggested, never a mode switch nor what comes with one", async () => {
  const { owner, task } = await world();
  const qid = await permission(task, "s1", [RULE]);
  const q = await listed(owner, qid);
  assert.deepEqual(q.decisions, [
    { id: "allow", label: "Allow once", lasting: false },
    { id: "deny", label: "Deny", lasting: false },
    { id: lastingId(RULE), label: "Allow, and don't ask again for Bash(npm test *)", lasting: true,
      rule: "Bash(npm test *)", scope: "project_local", place: "this project's .claude/settings.local.json",
      lasts: "until it is taken back: it outlives the task" },
  ]);
  // A permission whose CLI suggests nothing offers the two; so does one
  // whose suggestions switch the CLI's mode.
  const plain = await listed(owner, await permission(task, "s2", []));
  assert.deepEqual(plain.decisions.map((d) => d.id), ["allow", "deny"]);
  const mode = await listed(owner, await permission(task, "s3", [RULE, MODE]));
  assert.deepEqual(mode.decisions.map((d) => d.id), ["allow", "deny"]);
});

test("a choice the question does not offer is refused (409) and nothing is queued; a device without answer is refused (403)", async () => {
  const { owner, task, device } = await world(["tasks"]);
  const qid = await permission(task, "s1", [RULE]);
  const wider = { ...RULE, rules: [{ toolName: "Bash" }] };
  for (const id of [lastingId(wider), lastingId(MODE), "always"]) {
    const r = await decide(owner.token, qid, id);
    assert.deepEqual([r.status, r.body.error], [409, "not_offered"], id);
  }
  const stale = await decide(owner.token, qid, lastingId(RULE), { command: "npm test -- --all" });
  assert.deepEqual([stale.status, stale.body.error], [409, "changed"]);
  const rows = await w.db.prepare("SELECT count(*) AS n FROM answers WHERE question_id = ?").bind(qid).first();
  assert.equal(rows.n, 0, "nothing queued");
  const r = await decide(device.token, qid, lastingId(RULE));
  assert.equal(r.status, 403, "a device paired without the answer right");
  const other = await world();
  assert.equal((await decide(other.device.token, qid, lastingId(RULE))).status, 404, "another owner's question");
});

test("a lasting choice taken by the agent becomes a rule on its task; taking it back goes to the relay, which says how it went", async () => {
  const { owner, task, device } = await world();
  const qid = await permission(task, "s1", [RULE]);
  const relayed = await relay(task.credential);
  const r = await decide(device.token, qid, lastingId(RULE));
  assert.equal(r.status, 201, r.text);
  await waitFor(() => relayed.got.some((m) => m.type === "answer"), 5000);
  const sent = relayed.got.find((m) => m.type === "answer");
  assert.equal(sent.decision, lastingId(RULE), "the id, for the hook to find in its own dialog");
  // Nothing is a rule before the agent took it.
  let tasks = (await call(w, "GET", "/v1/tasks", { token: owner.token })).body.tasks;
  assert.deepEqual(tasks[0].rules, []);
  relayed.say({ type: "received", answer_id: sent.answer_id });
  relayed.say({ type: "taken", answer_id: sent.answer_id });
  await waitFor(async () => (await call(w, "GET", "/v1/tasks", { token: owner.token })).body.tasks[0].rules.length === 1, 5000);
  tasks = (await call(w, "GET", "/v1/tasks", { token: owner.token })).body.tasks;
  const [rule] = tasks[0].rules;
  assert.equal(rule.rule, "Bash(npm test *)");
  assert.equal(rule.scope, "project_local");
  assert.equal(rule.granted_by, "phone");
  assert.equal(rule.host, "build-box");
  assert.equal(rule.state, "granted");
  // The page's list carries it on the task too.
  const page = (await call(w, "GET", "/v1/needs-you", { token: owner.token })).body;
  assert.equal(page.tasks[0].rules[0].rule_id, rule.rule_id);

  // Another owner cannot see or take it back.
  const stranger = await newOwner(w, "Eve");
  assert.equal((await call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: stranger.token })).status, 404);
  assert.deepEqual((await call(w, "GET", "/v1/rules", { token: stranger.token })).body.rules, []);

  const asked = await call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token });
  assert.equal(asked.status, 202, asked.text);
  assert.equal(asked.body.state, "revoking");
  await waitFor(() => relayed.got.some((m) => m.type === "revoke"), 5000);
  const revoke = relayed.got.find((m) => m.type === "revoke");
  assert.deepEqual(revoke, { type: "revoke", rule_id: rule.rule_id, answer_id: sent.answer_id });
  relayed.say({ type: "revoked", rule_id: rule.rule_id, outcome: "removed", note: "removed Bash(npm test *) from /w/.claude/settings.local.json\u001b[2J" });
  await waitFor(async () => (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules[0].state === "revoked", 5000);
  const [done] = (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules;
  assert.ok(!done.note.includes("\u001b"), "no escape kept");
  const again = await call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token });
  assert.deepEqual([again.status, again.body.error], [409, "rule_ended"]);
  relayed.ws.close();
});

test("a session's rule is listed, and says it ends with its session; a rule asked back while the relay is away goes at its hello", async () => {
  const { owner, task } = await world();
  const session = { ...RULE, destination: "session" };
  const qid = await permission(task, "s1", [session]);
  let relayed = await relay(task.credential);
  await decide(owner.token, qid, lastingId(session));
  await waitFor(() => relayed.got.some((m) => m.type === "answer"), 5000);
  const sent = relayed.got.find((m) => m.type === "answer");
  relayed.say({ type: "taken", answer_id: sent.answer_id });
  await waitFor(async () => (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules.length === 1, 5000);
  const [rule] = (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules;
  const r = await call(w, "DELETE", `/v1/rules/${rule.rule_id}`, { token: owner.token });
  assert.deepEqual([r.status, r.body.error], [409, "session_rule"]);
  assert.match(r.body.message, /ends with the session/);

  // A file's rule, granted through a relay that connected for it, and
  // asked back with no relay connected: sent at the next one's hello.
  relayed.ws.close();
  const qid2 = await permission(task, "s2", [RULE]);
  const d2 = await decide(owner.token, qid2, lastingId(RULE));
  assert.equal(d2.status, 201, d2.text);
  relayed = await relay(task.credential);
  await waitFor(() => relayed.got.some((m) => m.type === "answer"), 5000);
  const sent2 = relayed.got.find((m) => m.type === "answer");
  assert.equal(sent2.question_id, qid2);
  relayed.say({ type: "received", answer_id: sent2.answer_id });
  relayed.say({ type: "taken", answer_id: sent2.answer_id });
  assert.ok(await waitFor(async () => (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules.length === 2, 5000));
  relayed.ws.close();
  const file = (await call(w, "GET", "/v1/rules", { token: owner.token })).body.rules[1];
  const asked = await call(w, "DELETE", `/v1/rules/${file.rule_id}`, { token: owner.token });
  assert.deepEqual([asked.status, asked.body.state], [202, "revoking"]);
  relayed = await relay(task.credential);
  await waitFor(() => relayed.got.some((m) => m.type === "revoke"), 5000);
  assert.equal(relayed.got.find((m) => m.type === "revoke")?.rule_id, file.rule_id);
  relayed.ws.close();
});
