// What a thief holding one device credential, a made-up report or a flood
// could do, and what stops each (docs/security.md): rights chosen at pairing,
// revocation that takes what came from it, tasks that expire, limits with a
// clear 4xx, push only to push services, names without escapes, and refusals
// that write nothing, the list's revision included.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN, call, count, deployedRates, inOneRateWindow, newOwner, newTask, post, report, startSink, startWorker, waitFor } from "./helpers.js";

let w;
before(async () => {
  w = await startWorker({ NOTIFY_DELAY_MS: "200", NOTIFY_RETRY_MS: "200", NOTIFY_TIMEOUT_MS: "5000" });
});
after(async () => w?.stop());

async function pair(token, body = {}) {
  const r = await call(w, "POST", "/v1/pairings", { token, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function device(token, { grant, ask, name = "phone" } = {}) {
  const p = await pair(token, grant ? { rights: grant } : {});
  const d = await call(w, "POST", "/v1/devices", { body: { code: p.code, name, ...(ask ? { rights: ask } : {}) } });
  assert.equal(d.status, 201, d.text);
  return d.body;
}

const revision = async (owner) => (await w.db.prepare("SELECT revision FROM owners WHERE id = ?").bind(owner.owner_id).first()).revision;

/** A reply question in tmux, so that it can be answered from afar. */
async function answerable(task, session = "s") {
  const r = await post(w, task.credential, report({ session, action: "open", kind: "reply", text: "Go on?",
    terminal: { kind: "tmux", host: "h", cwd: "/", target: "a:0.0" } }));
  return r.body.question_id;
}

test("a device does only what it was paired to do; a code grants at most its maker's rights", async () => {
  const ana = await newOwner(w);
  const task = await newTask(w, ana.token);
  const qid = await answerable(task);

  // The page's default: everything.
  const phone = await device(ana.token);
  assert.deepEqual(phone.rights, ["tasks", "answer", "pair", "screen"]);

  // An agent machine's login: tasks only.
  const agentBox = await device(ana.token, { ask: ["tasks"] });
  assert.deepEqual(agentBox.rights, ["tasks"]);
  const answer = await call(w, "POST", `/v1/questions/${qid}/answers`, { token: agentBox.token, body: { text: "yes" } });
  assert.deepEqual([answer.status, answer.body.error], [403, "not_permitted"]);
  assert.match(answer.body.message, /may not answer/);
  assert.equal((await call(w, "POST", `/v1/questions/${qid}/dismiss`, { token: agentBox.token })).status, 403);
  assert.equal((await call(w, "POST", "/v1/pairings", { token: agentBox.token })).status, 403, "no pairing either");
  assert.equal(await count(w, "answers", `question_id = '${qid}'`), 0);
  // What it may: read, and start and stop tasks.
  assert.equal((await call(w, "GET", "/v1/needs-you", { token: agentBox.token })).status, 200);
  const t = await call(w, "POST", "/v1/tasks", { token: agentBox.token, body: { name: "from the agent box" } });
  assert.equal(t.status, 201);

  // A code asked for by a device grants at most what that device may.
  const pairer = await device(ana.token, { grant: ["pair", "tasks"] });
  assert.deepEqual(pairer.rights, ["tasks", "pair"]);
  const wide = await pair(pairer.token, { rights: ["tasks", "answer", "pair"] });
  assert.deepEqual(wide.rights, ["tasks", "pair"], "never more than its maker");
  const child = (await call(w, "POST", "/v1/devices", { body: { code: wide.code, name: "child" } })).body;
  assert.deepEqual(child.rights, ["tasks", "pair"]);
  assert.equal((await call(w, "POST", `/v1/questions/${qid}/answers`, { token: child.token, body: { text: "yes" } })).status, 403);

  // The list says who paired whom, and what each may.
  const list = (await call(w, "GET", "/v1/devices", { token: ana.token })).body.devices;
  const byId = Object.fromEntries(list.map((d) => [d.device_id, d]));
  assert.equal(byId[child.device_id].paired_by, pairer.device_id);
  assert.equal(byId[phone.device_id].paired_by, null);
  assert.deepEqual(byId[agentBox.device_id].rights, ["tasks"]);

  for (const bad of [{ rights: ["root"] }, { rights: "answer" }]) {
    assert.equal((await call(w, "POST", "/v1/pairings", { token: ana.token, body: bad })).status, 400);
  }
});

test("revoking a device takes the devices it paired and the tasks they made; its questions close", async () => {
  const ana = await newOwner(w);
  const d1 = await device(ana.token, { name: "stolen phone" });
  const d2 = await device(d1.token, { name: "thief's laptop" });
  const d3 = await device(d2.token, { name: "thief's second" });
  const mine = await device(ana.token, { name: "my laptop" });
  const thiefTask = (await call(w, "POST", "/v1/tasks", { token: d3.token, body: { name: "made-up" } })).body;
  const myTask = await newTask(w, ana.token);
  const bait = await answerable(thiefTask);

  const r = await call(w, "DELETE", `/v1/devices/${d1.device_id}`, { token: ana.token });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.devices[0], d1.device_id);
  assert.deepEqual([...r.body.devices].sort(), [d1.device_id, d2.device_id, d3.device_id].sort());
  assert.deepEqual(r.body.tasks, [thiefTask.task_id]);
  for (const d of [d1, d2, d3]) {
    assert.equal((await call(w, "GET", "/v1/needs-you", { token: d.token })).status, 401, d.name);
  }
  assert.equal((await call(w, "GET", "/v1/task", { token: thiefTask.credential })).status, 401, "its task too");
  const q = await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(bait).first();
  assert.equal(q.close_reason, "session_end", "the made-up question left the list");
  // The owner's own device and task are untouched.
  assert.equal((await call(w, "GET", "/v1/needs-you", { token: mine.token })).status, 200);
  assert.equal((await call(w, "GET", "/v1/task", { token: myTask.credential })).status, 200);
  // A device revoking itself takes its own pairings too; twice is a 404.
  assert.equal((await call(w, "DELETE", `/v1/devices/${d1.device_id}`, { token: ana.token })).status, 404);
});

test("a task expires in 7 days unless asked otherwise", async () => {
  const ana = await newOwner(w);
  const before = Date.now();
  const t = await newTask(w, ana.token, { name: "no expiry asked" });
  const week = 7 * 86_400_000;
  assert.ok(t.expires_at >= before + week && t.expires_at <= Date.now() + week, String(t.expires_at));
  const row = await w.db.prepare("SELECT expires_at FROM tasks WHERE id = ?").bind(t.task_id).first();
  assert.equal(row.expires_at, t.expires_at);
});

test("a pairing link says whose it is before it is used; a wrong code counts as a try", async () => {
  const ana = await newOwner(w, "Ana Lima");
  const p = await pair(ana.token, { rights: ["answer"] });
  const seen = await call(w, "POST", "/v1/pairings/check", { body: { code: p.code } });
  assert.equal(seen.status, 200, seen.text);
  assert.deepEqual([seen.body.owner_name, seen.body.rights], ["Ana Lima", ["answer"]]);
  assert.equal(await count(w, "devices", `owner_id = '${ana.owner_id}'`), 0, "checking pairs nothing");
  assert.equal((await call(w, "POST", "/v1/devices", { body: { code: p.code, name: "x" } })).status, 201, "and leaves the code usable");
  const other = await pair(ana.token);
  const [id, secret] = other.code.split("-");
  const wrong = `${id}-${secret === "0000" ? "1111" : "0000"}`;
  for (let i = 0; i < 5; i++) assert.equal((await call(w, "POST", "/v1/pairings/check", { body: { code: wrong } })).status, 400);
  assert.equal((await call(w, "POST", "/v1/pairings/check", { body: { code: other.code } })).status, 400, "tries used up");
});

test("names lose terminal escapes and invisible characters; so do questions and answers", async () => {
  const ana = await newOwner(w);
  const d = await device(ana.token, { name: "phone\u001b]0;owned\u0007\u001b[2J\u202e" });
  assert.equal(d.name, "phone]0;owned[2J");
  const stored = await w.db.prepare("SELECT name FROM devices WHERE id = ?").bind(d.device_id).first();
  assert.equal(stored.name, "phone]0;owned[2J");
  const t = await newTask(w, ana.token, { name: "a\u200bpi \u2066refactor\u2069" });
  assert.equal(t.name, "api refactor");
  assert.equal((await call(w, "POST", "/v1/tasks", { token: ana.token, body: { name: "\u200b\u202e" } })).status, 400, "nothing visible");
  await post(w, t.credential, report({ session: "n", action: "open", kind: "dialog",
    text: "Delete \u202egnp.exe?\u{E0041}\u{E0042}", options: [{ label: "y\u200bes", description: "\u001b[31mred" }] }));
  const [q] = (await call(w, "GET", "/v1/needs-you", { token: ana.token })).body.questions;
  assert.equal(q.text, "Delete gnp.exe?");
  assert.deepEqual(q.options, [{ label: "yes", description: "[31mred" }]);
});

test("limits: open questions per task, tasks, devices and live codes per owner, the list's length", async () => {
  const ana = await newOwner(w);
  const task = await newTask(w, ana.token);
  for (let s = 0; s < 20; s++) {
    const r = await post(w, task.credential, report({ session: `many-${s}`, action: "open", kind: "permission", text: `Run ${s}?` }));
    assert.equal(r.status, 200, r.body?.message);
  }
  const rev = await revision(ana);
  const over = await post(w, task.credential, report({ session: "many-20", action: "open", kind: "permission", text: "One more?" }));
  assert.deepEqual([over.status, over.body.error], [409, "too_many_open"]);
  assert.equal(await count(w, "questions", `task_id = '${task.task_id}' AND closed_at IS NULL`), 20);
  assert.equal(await count(w, "sessions", `task_id = '${task.task_id}' AND session = 'many-20'`), 0, "nothing written");
  assert.equal(await revision(ana), rev);
  // A session already open may move on (its own question is replaced), and a close frees room.
  assert.equal((await post(w, task.credential, report({ session: "many-0", action: "open", kind: "reply", text: "Next?" }))).status, 200);
  assert.equal((await post(w, task.credential, report({ session: "many-1", action: "close" }))).status, 200);
  assert.equal((await post(w, task.credential, report({ session: "many-20", action: "open", kind: "permission", text: "One more?" }))).status, 200);

  const bo = await newOwner(w);
  for (let i = 0; i < 99; i++) await newTask(w, bo.token, { name: `t${i}` });
  await newTask(w, bo.token, { name: "the hundredth" });
  const t101 = await call(w, "POST", "/v1/tasks", { token: bo.token, body: { name: "one too many" } });
  assert.deepEqual([t101.status, t101.body.error], [409, "too_many_tasks"]);
  assert.equal(await count(w, "tasks", `owner_id = '${bo.owner_id}'`), 100);

  const cy = await newOwner(w);
  for (let i = 0; i < 5; i++) await pair(cy.token);
  const sixth = await call(w, "POST", "/v1/pairings", { token: cy.token });
  assert.deepEqual([sixth.status, sixth.body.error], [429, "too_many_pairings"]);
  assert.equal(await count(w, "pairings", `owner_id = '${cy.owner_id}'`), 5);

  const di = await newOwner(w);
  for (let i = 0; i < 20; i++) await device(di.token, { name: `d${i}` });
  const code = await pair(di.token);
  const d21 = await call(w, "POST", "/v1/devices", { body: { code: code.code, name: "d20" } });
  assert.deepEqual([d21.status, d21.body.error], [409, "too_many_devices"]);
  assert.equal(await count(w, "devices", `owner_id = '${di.owner_id}' AND revoked_at IS NULL`), 20);
  const [first] = (await call(w, "GET", "/v1/devices", { token: di.token })).body.devices;
  await call(w, "DELETE", `/v1/devices/${first.device_id}`, { token: di.token });
  assert.equal((await call(w, "POST", "/v1/devices", { body: { code: code.code, name: "d20" } })).status, 201, "the code was not used up");

  // The list: the newest 50, and how many more.
  const el = await newOwner(w);
  for (let t = 0; t < 3; t++) {
    const tk = await newTask(w, el.token, { name: `busy ${t}` });
    for (let s = 0; s < 20; s++) await post(w, tk.credential, report({ session: `b${s}`, action: "open", kind: "reply", text: `Q${t}.${s}?` }));
  }
  const list = (await call(w, "GET", "/v1/needs-you", { token: el.token })).body;
  assert.equal(list.questions.length, 50);
  assert.equal(list.more, 10);
  assert.equal(list.questions[0].text, "Q2.19?", "newest first");
});

test("rates: reports per task and answers per credential per minute, a 429 past them", async () => {
  const rates = await deployedRates();
  const limited = await startWorker({}, { rates });
  try {
    await inOneRateWindow(60, 40_000);
    const ana = (await call(limited, "POST", "/v1/owners", { token: ADMIN, body: { name: "Ana" } })).body;
    const t = (await call(limited, "POST", "/v1/tasks", { token: ana.token, body: { name: "chatty" } })).body;
    const statuses = [];
    for (let i = 0; i < rates.REPORT_RATE.limit + 5; i++) {
      statuses.push((await post(limited, t.credential, report({ session: "r", action: "close" }))).status);
    }
    assert.equal(statuses.filter((s) => s === 200).length, rates.REPORT_RATE.limit);
    const refused = await post(limited, t.credential, report({ session: "r", action: "close" }));
    assert.deepEqual([refused.status, refused.body.error], [429, "rate_limited"]);
    const other = (await call(limited, "POST", "/v1/tasks", { token: ana.token, body: { name: "quiet" } })).body;
    assert.equal((await post(limited, other.credential, report({ session: "r", action: "close" }))).status, 200, "per credential");

    const qid = (await post(limited, other.credential, report({ session: "a", action: "open", kind: "reply", text: "Go?",
      terminal: { kind: "tmux", host: "h", cwd: "/" } }))).body.question_id;
    const answers = [];
    for (let i = 0; i < rates.ANSWER_RATE.limit + 3; i++) {
      answers.push((await call(limited, "POST", `/v1/questions/${qid}/answers`, { token: ana.token, body: { text: `a${i}` } })).status);
    }
    assert.equal(answers.filter((s) => s === 429).length, 3, JSON.stringify(answers));
  } finally {
    await limited.stop();
  }
});

test("a push subscription points only at a browser's push service", async () => {
  const ana = await newOwner(w);
  const d = await device(ana.token);
  const keys = { p256dh: "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4", auth: "BTBZMqHH6r4Tts7J_aSIgg" };
  for (const endpoint of ["https://attacker.example/collect", "https://fcm.googleapis.com.attacker.example/x", "http://127.0.0.1:9/p"]) {
    const r = await call(w, "PUT", "/v1/devices/me/push", { token: d.token, body: { endpoint, keys } });
    assert.deepEqual([r.status, r.body.error], [400, "invalid_subscription"], endpoint);
  }
  const ok = await call(w, "PUT", "/v1/devices/me/push", { token: d.token, body: { endpoint: "https://fcm.googleapis.com/fcm/send/abc", keys } });
  assert.equal(ok.status, 200, ok.text);
  const bad = await call(w, "PUT", "/v1/channels/webhook", { token: ana.token, body: { url: "http://[", secret: "0123456789abcdef" } });
  assert.equal(bad.status, 400, "a URL without a host is no webhook");
});

test("every channel of a question is sent to side by side: a slow one delays no other", async () => {
  const ana = await newOwner(w);
  const slow = await startSink();
  const fast = await startSink();
  try {
    slow.delay(3000);
    await call(w, "PUT", "/v1/channels/webhook", { token: ana.token, body: { url: `${slow.url}/hook`, secret: "0123456789abcdef" } });
    await call(w, "PUT", "/v1/channels/ntfy", { token: ana.token, body: { url: `${fast.url}/topic` } });
    const t = await newTask(w, ana.token);
    const opened = Date.now();
    await post(w, t.credential, report({ session: "p", action: "open", kind: "permission", text: "Run it?" }));
    assert.ok(await waitFor(() => fast.received.length > 0 && slow.received.length > 0, 8000));
    // Both asked within moments of each other, though one takes 3 s to answer.
    const gap = Math.abs(fast.received[0].at - slow.received[0].at);
    assert.ok(gap < 1000, `ntfy ${fast.received[0].at - opened} ms, webhook ${slow.received[0].at - opened} ms`);
  } finally {
    await slow.stop();
    await fast.stop();
  }
});

test("refused requests move nothing, the list's revision included", async () => {
  const ana = await newOwner(w);
  const bo = await newOwner(w);
  const task = await newTask(w, ana.token);
  const dialog = (await post(w, task.credential, report({ session: "d", action: "open", kind: "permission", text: "Run?" }))).body.question_id;
  const reply = await answerable(task, "r");
  await call(w, "POST", `/v1/questions/${reply}/answers`, { token: ana.token, body: { text: "first" } });
  const closed = (await post(w, task.credential, report({ session: "c", action: "open", kind: "reply", text: "Old?" }))).body.question_id;
  await post(w, task.credential, report({ session: "c", action: "close" }));
  const bosTask = await newTask(w, bo.token);
  const rev = await revision(ana);
  const refusals = [
    ["POST", `/v1/questions/${closed}/dismiss`, ana.token, 409],
    ["POST", "/v1/questions/q_nothere/dismiss", ana.token, 404],
    ["POST", `/v1/questions/${dialog}/answers`, ana.token, 409, { text: "y" }],
    ["POST", `/v1/questions/${reply}/answers`, ana.token, 409, { decision: "allow", digest: "0".repeat(64) }],
    ["DELETE", "/v1/answers/ans_nothere", ana.token, 404],
    ["POST", `/v1/questions/${reply}/answers`, ana.token, 400, { text: "!rm -rf ~" }],
    ["DELETE", `/v1/tasks/${bosTask.task_id}`, ana.token, 404],
  ];
  for (const [method, path, token, status, body] of refusals) {
    assert.equal((await call(w, method, path, { token, body })).status, status, `${method} ${path}`);
  }
  assert.equal(await revision(ana), rev, "no page re-reads its list for a refusal");
  assert.equal(await revision(bo), 1, "nor the other owner's");
});
