// The reliability suite: an ordering storm of shuffled, duplicated reports;
// channels that fail, hang, refuse and crawl; and a seeded fuzz of malformed
// bodies over every write route. Real D1, real Durable Objects, real sinks on
// 127.0.0.1. Bounded: each part stops by itself in well under a minute.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { ADMIN, call, newOwner, newTask, post, sleep, startSink, startWorker, waitFor } from "./helpers.js";

const DELAY = 200;
let w;
before(async () => {
  w = await startWorker({ NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "200", NOTIFY_TIMEOUT_MS: "1000" });
});
after(async () => w?.stop());

/** A small seeded generator (mulberry32), so a failing run can be replayed. */
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)] };
}

/** Runs `jobs` (functions returning promises) with at most `width` in flight. */
async function inFlight(jobs, width) {
  let i = 0;
  const lanes = Array.from({ length: width }, async () => {
    while (i < jobs.length) await jobs[i++]();
  });
  await Promise.all(lanes);
}

// ---- ordering storm -----------------------------------------------------------

/** The end state of one session's stream applied in seq order, as docs/api.md defines it. */
function expectedOpen(stream) {
  let open = null;
  for (const r of [...stream].sort((a, b) => a.seq - b.seq)) {
    if (r.action === "close") open = null;
    else if (!open || open.kind !== r.kind || open.text !== r.text) open = { kind: r.kind, text: r.text };
  }
  return open;
}

test("an ordering storm: 240 sessions of shuffled, duplicated reports end as their seq order says", async () => {
  const seed = 20261130;
  const r = rng(seed);
  const owner = await newOwner(w);
  // Sixteen tasks of fifteen sessions: a task holds at most 20 open
  // questions (src/limits.rs), and the storm is about order, not that limit.
  const tasks = [];
  for (let t = 0; t < 16; t++) tasks.push(await newTask(w, owner.token, { name: `storm ${t}` }));
  const taskOf = (session) => tasks[Number(session.split("-")[1]) % tasks.length];
  const sessions = 240;
  const streams = [];
  let seq = 1_000_000;
  for (let s = 0; s < sessions; s++) {
    const stream = [];
    for (let k = 0; k < 5; k++) {
      seq += 1 + r.int(3);
      const session = `storm-${s}`;
      stream.push(
        r.next() < 0.6
          ? { action: "open", cli: "codex", session, seq, kind: r.pick(["reply", "permission"]), text: `Q${r.int(3)}?` }
          : { action: "close", cli: "codex", session, seq, reason: "answered" },
      );
    }
    streams.push(stream);
  }
  const all = streams.flat();
  const sent = [...all, ...all.filter(() => r.next() < 0.2)]; // a fifth sent twice
  for (let i = sent.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [sent[i], sent[j]] = [sent[j], sent[i]];
  }
  const statuses = [];
  await inFlight(sent.map((body) => async () => statuses.push((await post(w, taskOf(body.session).credential, body)).status)), 16);
  assert.deepEqual([...new Set(statuses)], [200], "every report acknowledged");

  const rows = (await w.db.prepare("SELECT task_id, session, kind, text FROM questions WHERE owner_id = ? AND closed_at IS NULL")
    .bind(owner.owner_id).all()).results;
  const actual = new Map(rows.map((q) => [q.session, { kind: q.kind, text: q.text }]));
  let mismatches = 0;
  for (const stream of streams) {
    const want = expectedOpen(stream);
    const got = actual.get(stream[0].session) ?? null;
    if (JSON.stringify(want) !== JSON.stringify(got)) mismatches += 1;
  }
  assert.equal(mismatches, 0, `seed ${seed}: sessions whose end state differs from their seq order`);
  const listed = (await call(w, "GET", "/v1/tasks", { token: owner.token })).body.tasks;
  for (const t of listed) {
    const open = rows.some((q) => q.task_id === t.task_id);
    assert.equal(t.state, open ? "waiting" : "running", t.name);
  }
});

// ---- channel chaos ----------------------------------------------------------------

/** A port on 127.0.0.1 that nothing listens on (yet). */
async function freePort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** An owner whose one webhook channel points at `url`, a task, and an open dialog. */
async function dialogTo(url, session) {
  const owner = await newOwner(w);
  await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${url}/hook`, secret: "0123456789abcdef" } });
  const task = await newTask(w, owner.token, { name: session });
  const r = await post(w, task.credential, { action: "open", kind: "dialog", cli: "claude-code", session, seq: Date.now(), text: `${session}?` });
  return { owner, task, qid: r.body.question_id, session };
}

const close = (d) =>
  post(w, d.task.credential, { action: "close", cli: "claude-code", session: d.session, seq: Date.now() * 1000, reason: "answered" });

const events = (sink, qid) =>
  sink.received.filter((g) => g.body.includes(qid)).map((g) => ({ ...g, event: JSON.parse(g.body).event }));

async function deliveries(qid) {
  return (await w.db.prepare("SELECT event, ok, status, error, at FROM deliveries WHERE question_id = ? ORDER BY id").bind(qid).all()).results;
}

/** The invariants of one notified and then closed question, against what its sink saw. */
async function checkNotifiedThenClosed(sink, d) {
  const seen = events(sink, d.qid);
  const okOpens = seen.filter((g) => g.event === "question.open" && g.status === 200);
  const okCloses = seen.filter((g) => g.event === "question.closed" && g.status === 200);
  assert.equal(okOpens.length, 1, `${d.session}: exactly one successful open`);
  assert.equal(okCloses.length, 1, `${d.session}: a close event after the notification`);
  const q = await w.db.prepare("SELECT closed_at FROM questions WHERE id = ?").bind(d.qid).first();
  assert.ok(!seen.some((g) => g.event === "question.open" && g.at > q.closed_at + 1000), `${d.session}: no open after the close`);
  const rows = await deliveries(d.qid);
  assert.equal(rows.filter((x) => x.ok).length, seen.filter((g) => g.status === 200).length, `${d.session}: successes recorded`);
  assert.equal(rows.filter((x) => x.status !== null).length, seen.filter((g) => g.status !== null).length, `${d.session}: answers recorded`);
}

test("channel chaos: failures, a hang, a refused connection and slow answers each end in one open and one close", async () => {
  const failing = await startSink();
  const hanging = await startSink();
  const slow = await startSink();
  const laterPort = await freePort();
  let later;
  try {
    failing.failNext(2);
    hanging.hangNext(1);
    slow.delay(400);
    const a = await dialogTo(failing.url, "fails-twice");
    const b = await dialogTo(hanging.url, "hangs-once");
    const c = await dialogTo(`http://127.0.0.1:${laterPort}`, "refused-then-up");
    const d = await dialogTo(slow.url, "slow");
    // The refused channel comes up after two failed attempts.
    await waitFor(async () => (await deliveries(c.qid)).length >= 2, 10_000);
    later = await startSink({ port: laterPort });

    const notified = async (x) => (await w.db.prepare("SELECT notified_at FROM questions WHERE id = ?").bind(x.qid).first()).notified_at;
    for (const x of [a, b, c, d]) assert.ok(await waitFor(() => notified(x), 15_000), `${x.session} notified`);
    for (const x of [a, b, c, d]) await close(x);
    const sinks = [[failing, a], [hanging, b], [later, c], [slow, d]];
    for (const [sink, x] of sinks) {
      await waitFor(() => events(sink, x.qid).some((g) => g.event === "question.closed" && g.status === 200), 10_000);
    }
    await sleep(1000); // room for a wrong extra delivery
    for (const [sink, x] of sinks) await checkNotifiedThenClosed(sink, x);
    assert.ok((await deliveries(b.qid)).some((x) => x.error?.includes("no answer")), "the hang counted as a failure");
    assert.ok((await deliveries(c.qid)).some((x) => x.status === null && !x.ok), "the refused connection was recorded");
  } finally {
    for (const s of [failing, hanging, slow, later]) await s?.stop();
  }
});

test("channel chaos: a close while the open is being retried stops the retries, and nothing is sent after it", async () => {
  const sink = await startSink();
  try {
    sink.failNext(1000);
    const x = await dialogTo(sink.url, "closed-mid-retry");
    await waitFor(() => events(sink, x.qid).length >= 2, 10_000);
    await close(x);
    const q = await w.db.prepare("SELECT closed_at FROM questions WHERE id = ?").bind(x.qid).first();
    await sleep(3000); // several retry periods
    const seen = events(sink, x.qid);
    assert.ok(seen.every((g) => g.event === "question.open" && g.status === 503), "never a success, never a close");
    assert.ok(!seen.some((g) => g.at > q.closed_at + 1000), "no attempt after the close");
    const rows = await deliveries(x.qid);
    assert.equal(rows.length, seen.length, "each attempt the sink saw is recorded");
  } finally {
    await sink.stop();
  }
});

// ---- seeded fuzz of malformed bodies ------------------------------------------------

/** Everything a request could have written, summed: any write changes it. */
async function fingerprint() {
  const row = await w.db.prepare(`SELECT
      (SELECT COUNT(*) FROM owners) || ':' ||
      (SELECT COUNT(*) || '/' || coalesce(SUM(coalesce(last_report_at, 0) + coalesce(revoked_at, 0)), 0) FROM tasks) || ':' ||
      (SELECT COUNT(*) || '/' || coalesce(SUM(last_seq), 0) FROM sessions) || ':' ||
      (SELECT COUNT(*) || '/' || coalesce(SUM(coalesce(closed_at, 0)), 0) FROM questions) || ':' ||
      (SELECT COUNT(*) || '/' || coalesce(SUM(length(config) + updated_at), 0) FROM channels) || ':' ||
      (SELECT COUNT(*) FROM deliveries) AS f`).first();
  return row.f;
}

/** A malformed variant of a valid body: a value of the wrong type or size, a broken encoding, or no JSON at all. */
function malformed(r, valid) {
  const weird = [null, true, -1, 1.5, 2 ** 60, "", "x".repeat(5000), [], {}, [1, 2], { a: { b: { c: [] } } }, "\u0000", "\ud800"];
  switch (r.int(6)) {
    case 0: { // a field of the wrong type or size
      const body = { ...valid };
      const keys = Object.keys(body);
      body[r.pick(keys)] = r.pick(weird);
      return JSON.stringify(body);
    }
    case 1: { // a field missing
      const body = { ...valid };
      delete body[r.pick(Object.keys(body))];
      return JSON.stringify(body);
    }
    case 2: // cut short
      return JSON.stringify(valid).slice(0, 1 + r.int(JSON.stringify(valid).length - 1));
    case 3: // not an object
      return JSON.stringify(r.pick([[valid], "report", 42, null, true]));
    case 4: // random bytes
      return Buffer.from(Array.from({ length: 1 + r.int(200) }, () => r.int(256)));
    default: { // unknown enum values
      const body = { ...valid };
      for (const k of ["action", "kind", "cli", "reason", "url", "priority"]) if (k in body) body[k] = r.pick(["", "bogus", 7, "OPEN"]);
      return JSON.stringify(body);
    }
  }
}

test("a seeded fuzz of 2,400 malformed bodies over every write route: no 5xx, JSON errors, nothing written when refused", async () => {
  const seed = 8291;
  const r = rng(seed);
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token, { name: "fuzz" });
  // Replies are never notified and the channels point at a closed port on
  // this machine: nothing runs in the background to change the fingerprint.
  const routes = [
    ["POST", "/v1/owners", ADMIN, { name: "Ana" }],
    ["POST", "/v1/tasks", owner.token, { name: "t", expires_in_s: 60 }],
    ["POST", "/v1/reports", task.credential, { action: "open", kind: "reply", cli: "codex", session: "fz", seq: 5, text: "Q?", options: [{ label: "a" }] }],
    ["POST", "/v1/reports", task.credential, { action: "close", cli: "codex", session: "fz", seq: 6, reason: "answered" }],
    ["PUT", "/v1/channels/ntfy", owner.token, { url: "http://127.0.0.1:9/topic", token: "tk_x", priority: 3 }],
    ["PUT", "/v1/channels/webhook", owner.token, { url: "http://127.0.0.1:9/h", secret: "0123456789abcdef" }],
  ];
  const tally = { refused: 0, accepted: 0 };
  for (let i = 0; i < 2400; i++) {
    const [method, path, token, valid] = routes[i % routes.length];
    const raw = malformed(r, valid);
    const before = await fingerprint();
    const res = await call(w, method, path, { token, raw, headers: { "content-type": "application/json" } });
    assert.ok(res.status < 500, `seed ${seed} case ${i}: ${res.status} ${res.text}`);
    if (res.status >= 400) {
      tally.refused += 1;
      assert.ok(res.body && typeof res.body.error === "string" && typeof res.body.message === "string",
        `seed ${seed} case ${i}: not a JSON error: ${res.text}`);
      assert.equal(await fingerprint(), before, `seed ${seed} case ${i}: a refused request wrote something`);
    } else {
      tally.accepted += 1; // a mutation that happened to stay valid (an extra field, a long name)
    }
  }
  assert.ok(tally.refused >= 2000, JSON.stringify(tally));
});

// ---- a flood from one task ------------------------------------------------------

test("a flood: one task credential opens 300 permissions under 300 sessions; the list stays small, rings are bounded", async () => {
  const owner = await newOwner(w);
  const sink = await startSink();
  try {
    await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${sink.url}/hook`, secret: "0123456789abcdef" } });
    const task = await newTask(w, owner.token, { name: "flood" });
    const text = "Run this? ".repeat(390); // near the 4,000-character cut
    const statuses = [];
    const jobs = Array.from({ length: 300 }, (_, i) => async () => {
      statuses.push((await post(w, task.credential, { action: "open", kind: "permission", cli: "codex",
        session: `flood-${i}`, seq: 1_000 + i, text })).status);
    });
    await inFlight(jobs, 8);
    const accepted = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 409).length;
    assert.equal(accepted + refused, 300, JSON.stringify([...new Set(statuses)]));
    assert.equal(accepted, 20, "the task's open questions are capped");
    const list = await call(w, "GET", "/v1/needs-you", { token: owner.token });
    assert.equal(list.body.questions.length, 20);
    const bytes = Buffer.byteLength(list.text);
    assert.ok(bytes < 120_000, `the list is ${bytes} bytes`);
    // Each accepted question rings once, after the delay; no refused one does.
    await waitFor(() => sink.received.length >= accepted, 10_000);
    await sleep(1000);
    const rung = sink.received.map((r) => JSON.parse(r.body).question.question_id);
    assert.equal(new Set(rung).size, accepted);
    assert.equal(rung.length, accepted, "none twice");
    console.log(`# figures ${JSON.stringify({ flood_reports: 300, accepted, refused_409: refused, list_bytes: bytes, pushes: rung.length })}`);
  } finally {
    await sink.stop();
  }
});
