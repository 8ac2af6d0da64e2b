// The HTTP API: credentials, tasks, channels, and bad input.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, call, count, newOwner, newTask, post, report, ROOT, startWorker, sleep } from "./helpers.js";

let w;
before(async () => {
  w = await startWorker();
});
after(async () => w?.stop());

test("health answers without credentials, with the Worker's version (the crates')", async () => {
  const r = await call(w, "GET", "/v1/health");
  assert.equal(r.status, 200);
  const version = readFileSync(join(ROOT, "Cargo.toml"), "utf8").match(/^version = "(.*)"/m)[1];
  assert.deepEqual(r.body, { ok: true, version });
});

test("unknown API routes and methods are JSON errors; other paths are the page", async () => {
  const r = await call(w, "GET", "/v1/nope");
  assert.equal(r.status, 404);
  assert.equal(r.body.error, "not_found");
  const page = await call(w, "GET", "/nope");
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type"), /^text\/html/);
  assert.match(page.text, /<title>Needs you<\/title>/);
  // The route that panics on purpose is open only with ALLOW_TEST_PANIC=true.
  const panic = await call(w, "GET", "/v1/test/panic");
  assert.deepEqual([panic.status, panic.body.error], [404, "not_found"]);
  const m = await call(w, "PATCH", "/v1/reports");
  assert.equal(m.status, 405);
  assert.equal(m.body.error, "method_not_allowed");
});

test("only the admin token creates owners; tokens are random and stored hashed", async () => {
  const a = await newOwner(w, "Ana");
  const b = await newOwner(w, "Bo");
  assert.match(a.token, /^nyo_[0-9a-f]{64}$/);
  assert.notEqual(a.token, b.token);
  const stored = await w.db.prepare("SELECT token_hash FROM owners WHERE id = ?").bind(a.owner_id).first();
  assert.match(stored.token_hash, /^[0-9a-f]{64}$/);
  assert.notEqual(stored.token_hash, a.token);
  const dump = JSON.stringify(await w.db.prepare("SELECT * FROM owners").all());
  assert.ok(!dump.includes(a.token.slice(4)), "no plain token in D1");

  for (const token of [undefined, "wrong", a.token]) {
    const r = await call(w, "POST", "/v1/owners", { token, body: { name: "x" } });
    assert.equal(r.status, 401, `token ${token}`);
    assert.equal(r.body.error, "unauthorized");
  }
});

test("the credential matrix on owner and task routes", async () => {
  const ana = await newOwner(w, "Ana");
  const bo = await newOwner(w, "Bo");
  const task = await newTask(w, ana.token, { name: "t1" });
  assert.match(task.credential, /^nyt_[0-9a-f]{64}$/);

  // Owner routes refuse: nothing, garbage, a task credential, the admin token.
  for (const token of [undefined, "Bearer", "nyo_" + "0".repeat(64), task.credential, ADMIN]) {
    const r = await call(w, "GET", "/v1/needs-you", { token });
    assert.equal(r.status, 401, `needs-you with ${token}`);
    assert.equal(typeof r.body.message, "string");
  }
  // Task routes refuse owner and admin tokens.
  for (const token of [undefined, ana.token, ADMIN, "nyt_" + "0".repeat(64)]) {
    const r = await call(w, "GET", "/v1/task", { token });
    assert.equal(r.status, 401, `task with ${token}`);
  }
  // Reports refuse anything but a live task credential, and write nothing.
  const sessions = await count(w, "sessions");
  for (const token of [undefined, ana.token, ADMIN, "nyt_" + "0".repeat(64)]) {
    const r = await post(w, token, report({ action: "open", kind: "reply", text: "Q?" }));
    assert.equal(r.status, 401, `report with ${token}`);
    assert.equal(r.body.error, "unauthorized");
  }
  assert.equal(await count(w, "sessions"), sessions);
  const me = await call(w, "GET", "/v1/task", { token: task.credential });
  assert.deepEqual(me.body, { task_id: task.task_id, name: "t1" });

  // Another owner's task: 404, as if it did not exist.
  const del = await call(w, "DELETE", `/v1/tasks/${task.task_id}`, { token: bo.token });
  assert.equal(del.status, 404);
  const still = await call(w, "GET", "/v1/task", { token: task.credential });
  assert.equal(still.status, 200, "Bo could not revoke Ana's task");
  const list = await call(w, "GET", "/v1/tasks", { token: bo.token });
  assert.deepEqual(list.body.tasks, []);
});

test("revocation works at once", async () => {
  const ana = await newOwner(w);
  const task = await newTask(w, ana.token);
  assert.equal((await post(w, task.credential, report({ action: "open", kind: "dialog", text: "Q?" }))).status, 200);
  const del = await call(w, "DELETE", `/v1/tasks/${task.task_id}`, { token: ana.token });
  assert.equal(del.status, 200);
  assert.equal(del.body.closed_questions, 1);
  const before = [await count(w, "sessions"), await count(w, "questions", "closed_at IS NULL")];
  const r = await post(w, task.credential, report({ action: "open", kind: "dialog", text: "After?" }));
  assert.equal(r.status, 401);
  assert.match(r.body.message, /revoked/);
  assert.deepEqual([await count(w, "sessions"), await count(w, "questions", "closed_at IS NULL")], before, "nothing written");
  assert.deepEqual((await call(w, "GET", "/v1/needs-you", { token: ana.token })).body.questions, []);
  assert.deepEqual((await call(w, "GET", "/v1/tasks", { token: ana.token })).body.tasks, []);
});

test("an expired credential is refused", async () => {
  const ana = await newOwner(w);
  const task = await newTask(w, ana.token, { name: "short", expires_in_s: 1 });
  assert.equal((await call(w, "GET", "/v1/task", { token: task.credential })).status, 200);
  await post(w, task.credential, report({ action: "open", kind: "reply", text: "Still there?" }));
  assert.equal((await call(w, "GET", "/v1/needs-you", { token: ana.token })).body.questions.length, 1);
  await sleep(1100);
  assert.deepEqual((await call(w, "GET", "/v1/needs-you", { token: ana.token })).body.questions, [],
    "an expired task's questions leave the list");
  const r = await call(w, "GET", "/v1/task", { token: task.credential });
  assert.equal(r.status, 401);
  assert.match(r.body.message, /expired/);
  assert.deepEqual((await call(w, "GET", "/v1/tasks", { token: ana.token })).body.tasks, []);
});

test("tasks list their state", async () => {
  const ana = await newOwner(w);
  const t = await newTask(w, ana.token, { name: "alpha" });
  let tasks = (await call(w, "GET", "/v1/tasks", { token: ana.token })).body.tasks;
  assert.equal(tasks.length, 1);
  assert.equal(tasks[0].state, "running");
  assert.equal(tasks[0].last_report_at, null);
  await post(w, t.credential, report({ action: "open", kind: "reply", text: "Go on?" }));
  tasks = (await call(w, "GET", "/v1/tasks", { token: ana.token })).body.tasks;
  assert.equal(tasks[0].state, "waiting");
  assert.equal(typeof tasks[0].last_report_at, "number");
});

test("bad task and owner bodies are refused and write nothing", async () => {
  const ana = await newOwner(w);
  const before = await count(w, "tasks");
  const cases = [
    [{ raw: "{not json" }, 400, "invalid_json"],
    [{ raw: "[1]" }, 400, "invalid_request"],
    [{ body: {} }, 400, "invalid_request"],
    [{ body: { name: 5 } }, 400, "invalid_request"],
    [{ body: { name: "   " } }, 400, "invalid_request"],
    [{ body: { name: "x".repeat(101) } }, 400, "invalid_request"],
    [{ body: { name: "ok", expires_in_s: -5 } }, 400, "invalid_request"],
    [{ body: { name: "ok", expires_in_s: "60" } }, 400, "invalid_request"],
    [{ raw: JSON.stringify({ name: "x".repeat(40000) }) }, 413, "too_large"],
  ];
  for (const [opts, status, code] of cases) {
    const r = await call(w, "POST", "/v1/tasks", { token: ana.token, ...opts });
    assert.equal(r.status, status, JSON.stringify(opts).slice(0, 80));
    assert.equal(r.body.error, code);
    assert.equal(typeof r.body.message, "string");
  }
  assert.equal(await count(w, "tasks"), before);
});

test("bad reports are refused with a message and change nothing", async () => {
  const ana = await newOwner(w);
  const t = await newTask(w, ana.token);
  const counts = async () => [await count(w, "questions"), await count(w, "sessions")];
  const before = await counts();
  const cases = [
    ["{nope", 400, "invalid_json"],
    [JSON.stringify([]), 400, "invalid_report"],
    [JSON.stringify(report({ action: "maybe" })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "poll" })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", cli: "kiro" })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", seq: "12" })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", seq: -1 })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", session: "" })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", text: ["a"] })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", options: [{ label: 1 }] })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "close", reason: "whatever" })), 400, "invalid_report"],
    [JSON.stringify(report({ action: "open", kind: "dialog", text: "x".repeat(33 * 1024) })), 413, "too_large"],
  ];
  for (const [raw, status, code] of cases) {
    const r = await call(w, "POST", "/v1/reports", { token: t.credential, raw });
    assert.equal(r.status, status, raw.slice(0, 80));
    assert.equal(r.body.error, code, raw.slice(0, 80));
    assert.ok(r.body.message.length > 5);
  }
  assert.deepEqual(await counts(), before);
});

test("channels are validated, stored, listed without secrets, and deleted", async () => {
  const ana = await newOwner(w);
  const bad = [
    ["ntfy", {}],
    ["ntfy", { url: "ftp://ntfy.sh/x" }],
    ["ntfy", { url: "https://ntfy.sh/" }],
    ["ntfy", { url: "https://ntfy.sh/a b" }],
    ["ntfy", { url: "https://ntfy.sh/t", priority: 9 }],
    ["ntfy", { url: "https://ntfy.sh/t", words: "yes" }],
    ["webhook", { url: "https://example.com/h" }],
    ["webhook", { url: "https://example.com/h", secret: "short" }],
    ["webhook", { url: "nope", secret: "0123456789abcdef" }],
  ];
  for (const [kind, body] of bad) {
    const r = await call(w, "PUT", `/v1/channels/${kind}`, { token: ana.token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, "invalid_channel");
  }
  assert.equal((await call(w, "PUT", "/v1/channels/pager", { token: ana.token, body: {} })).status, 404);
  assert.equal(await count(w, "channels", `owner_id = '${ana.owner_id}'`), 0);

  const n = await call(w, "PUT", "/v1/channels/ntfy", {
    token: ana.token,
    body: { url: "https://ntfy.sh/ana-secret-topic", token: "tk_abc", priority: 5 },
  });
  assert.equal(n.status, 200);
  assert.deepEqual(n.body, { kind: "ntfy", url: "https://ntfy.sh/ana-secret-topic", priority: 5, click: null, has_token: true, words: false });
  const h = await call(w, "PUT", "/v1/channels/webhook", {
    token: ana.token,
    body: { url: "https://example.com/hook", secret: "s3cret-s3cret-s3cret" },
  });
  assert.equal(h.status, 200);
  const list = await call(w, "GET", "/v1/channels", { token: ana.token });
  assert.equal(list.body.channels.length, 2);
  assert.ok(!list.text.includes("tk_abc") && !list.text.includes("s3cret"), "no secrets in the listing");
  assert.equal((await call(w, "DELETE", "/v1/channels/ntfy", { token: ana.token })).status, 200);
  assert.equal((await call(w, "DELETE", "/v1/channels/ntfy", { token: ana.token })).status, 404);
});

test("the list's ETag: 304 while nothing changed, a new one for each change, none for a refused or stale report", async () => {
  const o = await newOwner(w, "Etta");
  const t = await newTask(w, o.token, { name: "etag" });
  const get = (etag) => call(w, "GET", "/v1/needs-you", { token: o.token, headers: etag ? { "if-none-match": etag } : {} });
  // The ETag also carries the minute (for "how long ago"): compare revisions.
  const revision = (r) => r.headers.get("etag").match(/^"r(\d+)-m\d+"$/)[1];

  const minute = (r) => r.headers.get("etag").match(/-m(\d+)"$/)[1];
  let first = await get();
  let again = await get(first.headers.get("etag"));
  // Unless a minute turned between the two, which is a change; then again.
  if (again.status === 200 && minute(again) !== minute(first)) {
    first = again;
    again = await get(first.headers.get("etag"));
  }
  assert.equal(first.status, 200);
  assert.equal(again.status, 304, "nothing changed");
  assert.equal(again.text, "");

  const seq = 5_000_000;
  const open = await post(w, t.credential, report({ session: "e", seq, action: "open", kind: "dialog", text: "Which?" }));
  assert.equal(open.status, 200, open.text);
  const opened = await get(first.headers.get("etag"));
  assert.equal(opened.status, 200);
  assert.notEqual(revision(opened), revision(first));
  assert.equal(opened.body.questions.length, 1);

  // An older report of the session is not applied: nothing on the list moves.
  const stale = await post(w, t.credential, report({ session: "e", seq: seq - 1, action: "close", reason: "answered" }));
  assert.equal(stale.status, 200, stale.text);
  assert.equal(revision(await get()), revision(opened), "a stale report changes nothing");

  assert.equal((await call(w, "DELETE", `/v1/tasks/${t.task_id}`, { token: o.token })).status, 200);
  const revoked = await get();
  assert.notEqual(revision(revoked), revision(opened), "the revoke closed the question");
  assert.deepEqual(revoked.body.questions, []);
  // A revoked task's hooks keep firing until its agent ends: refused, and
  // the page's next poll is still answered 304.
  for (let i = 1; i <= 3; i++) {
    const r = await post(w, t.credential, report({ session: "e", seq: seq + i, action: "open", kind: "reply", text: "More?" }));
    assert.equal(r.status, 401);
  }
  assert.equal(revision(await get()), revision(revoked), "refused reports change nothing");
});

test("an owner replaces a leaked token: the old one stops at once; devices and tasks go on", async () => {
  const o = await newOwner(w, "Rui");
  const t = await newTask(w, o.token, { name: "rotate" });
  const p = await call(w, "POST", "/v1/pairings", { token: o.token });
  const d = (await call(w, "POST", "/v1/devices", { body: { code: p.body.code, name: "phone" } })).body;

  // Nobody else may: not a task, a device, the admin, nor no one.
  for (const token of [t.credential, d.token, ADMIN, undefined]) {
    assert.equal((await call(w, "POST", "/v1/owners/me/token", { token })).status, 401, String(token));
  }
  assert.equal((await call(w, "GET", "/v1/owners/me/token", { token: o.token })).status, 405);

  const r = await call(w, "POST", "/v1/owners/me/token", { token: o.token });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.owner_id, o.owner_id);
  assert.match(r.body.token, /^nyo_[0-9a-f]{64}$/);
  assert.notEqual(r.body.token, o.token);
  const stored = await w.db.prepare("SELECT token_hash FROM owners WHERE id = ?").bind(o.owner_id).first();
  assert.ok(!stored.token_hash.includes(r.body.token.slice(4)), "stored hashed");

  assert.equal((await call(w, "GET", "/v1/tasks", { token: o.token })).status, 401, "the old token stops at once");
  assert.equal((await call(w, "POST", "/v1/owners/me/token", { token: o.token })).status, 401, "and cannot rotate again");
  const tasks = await call(w, "GET", "/v1/tasks", { token: r.body.token });
  assert.deepEqual(tasks.body.tasks.map((x) => x.task_id), [t.task_id], "the new one sees the same owner");
  assert.equal((await call(w, "GET", "/v1/needs-you", { token: d.token })).status, 200, "devices go on");
  assert.equal((await post(w, t.credential, report({ session: "rot", action: "close", reason: "answered" }))).status, 200, "tasks go on");
});
