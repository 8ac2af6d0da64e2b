// What each operation costs one deployment, counted by the Worker's own
// bindings (bench/meter/index.js wraps the build: D1's result metadata, Durable
// Object requests, subrequests), and a database seeded to a given size. Shared by
// tests/worker/capacity.test.js (costs must not grow with owners or history)
// and bench/capacity.mjs (the table in bench/README.md).
import { join } from "node:path";
import { ADMIN, ROOT, call, startWorker, waitFor, sleep } from "../worker/helpers.js";
import { startSink } from "./sink.js";
import { startPushService, vapidKeys } from "./push-service.js";

/** The metered Worker, a sink (webhook, ntfy) and a mock push service. */
export async function startMetered() {
  const keys = await vapidKeys();
  const w = await startWorker(
    { VAPID_PRIVATE_KEY: keys.privateKey, VAPID_SUBJECT: "mailto:ops@example.com", ALLOW_LOOPBACK_PUSH: "true", NOTIFY_DELAY_MS: "200" },
    { script: join(ROOT, "bench", "meter", "index.js") },
  );
  const sink = await startSink();
  const push = await startPushService({ vapidPublicKey: keys.publicKey });
  const subs = [];
  return {
    w, sink, push, subs,
    /** Deliveries received so far: webhook and ntfy at the sink, pushes at the push service. */
    deliveries: () => sink.received.length + subs.reduce((n, s) => n + s.received.length, 0),
    meter: async () => (await call(w, "GET", "/__meter")).body,
    async stop() {
      await w.stop();
      await sink.stop();
      await push.stop();
    },
  };
}

/**
 * Fills the database as `owners` owners of `tasks` tasks each would, each
 * owner with one open question, and `history` closed questions of one of
 * them (`heavy`): the load the per-operation costs must not grow with.
 */
export async function seed(w, { owners, tasks, history, heavy }) {
  const now = Date.now();
  const numbers = (n) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n}) SELECT i FROM n`;
  await w.db.batch([
    w.db.prepare(`INSERT INTO owners (id, name, token_hash, created_at)
      SELECT 'own_seed' || i, 'seed ' || i, 'seed-hash-' || i, ${now} FROM (${numbers(owners)})`),
    w.db.prepare(`INSERT INTO tasks (id, owner_id, name, credential_hash, created_at, expires_at)
      SELECT 'tsk_seed' || i, 'own_seed' || ((i - 1) / ${tasks} + 1), 'task ' || i, 'seed-cred-' || i, ${now}, ${now + 7 * 86400e3}
      FROM (${numbers(owners * tasks)})`),
    w.db.prepare(`INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq)
      SELECT 'q_seed_open' || i, 'own_seed' || i, 'tsk_seed' || ((i - 1) * ${tasks} + 1), 's', 'codex', 'permission', 'Run it?', '[]', ${now} - i, 1
      FROM (${numbers(owners)})`),
    w.db.prepare(`INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq, closed_at, close_reason)
      SELECT 'q_seed_old' || i, ?1, ?2, 'old' || i, 'claude-code', 'dialog', 'Which one?', '[]', ${now} - 86400e3 - i, 1, ${now} - 86400e3, 'answered'
      FROM (${numbers(history)})`).bind(heavy.owner_id, heavy.task_id),
  ]);
}

/** An owner with a webhook, ntfy, a device with Web Push, and a task. */
export async function account(m, name = "Ana") {
  const owner = (await call(m.w, "POST", "/v1/owners", { token: ADMIN, body: { name } })).body;
  const task = (await call(m.w, "POST", "/v1/tasks", { token: owner.token, body: { name: "work" } })).body;
  return { owner, task };
}

let seq = 1;
const report = (m, t, fields) =>
  call(m.w, "POST", "/v1/reports", { token: t.credential, body: { cli: "claude-code", session: "s", seq: seq++, ...fields } });

/** Waits for `n` deliveries at the sink and push service, and a moment for the alarm's last writes. */
async function delivered(m, before, n) {
  const got = () => m.deliveries() - before;
  if (!(await waitFor(() => got() >= n, 10_000))) throw new Error(`only ${got()} of ${n} deliveries`);
  await sleep(300);
}

/** A socket on the owner's live list, its first list received. */
async function listen(m, a) {
  const { ticket } = (await call(m.w, "POST", "/v1/live", { token: a.owner.token })).body;
  const resp = await m.w.mf.dispatchFetch(`${m.w.url}/v1/live?ticket=${encodeURIComponent(ticket)}`, { headers: { upgrade: "websocket" } });
  const got = [];
  resp.webSocket.addEventListener("message", (e) => got.push(e.data));
  resp.webSocket.accept();
  const heard = async (n) => {
    if (!(await waitFor(() => got.length >= n, 10_000))) throw new Error(`the socket heard ${got.length} of ${n}`);
  };
  await heard(1);
  return { ws: resp.webSocket, heard };
}

/**
 * Each operation, measured alone: `run(m, a)` does it, and what the Worker
 * did meanwhile is read from the meter. `a` is the account (`account()`).
 */
export const OPERATIONS = [
  // First, while the owner's list is empty and no dialog of the others can
  // ring while these run.
  ["live list: ticket and socket (its first list)", async (m, a) => {
    a.live = await listen(m, a);
  }],
  ["report: a reply opened, a page listening", async (m, a) => {
    await report(m, a.task, { session: `heard-${a.run}`, action: "open", kind: "reply", text: "Heard?" });
    await a.live.heard(2);
  }],
  ["report: a reply opened, no page listening", async (m, a) => {
    a.live.ws.close();
    await sleep(300);
    await m.meter(); // the socket's close is not the report
    await report(m, a.task, { session: `unheard-${a.run}`, action: "open", kind: "reply", text: "Anyone?" });
    await sleep(300); // the object is told after the answer
  }],
  ["report: open a dialog", async (m, a) => {
    await report(m, a.task, { session: `open-${a.run}`, action: "open", kind: "dialog", text: "Which region?" });
  }],
  ["report: close it", async (m, a) => {
    await report(m, a.task, { session: `open-${a.run}`, action: "close", reason: "answered" });
  }],
  ["report: stale (an older seq)", async (m, a) => {
    await call(m.w, "POST", "/v1/reports", { token: a.task.credential, body: { cli: "claude-code", session: `open-${a.run}`, seq: 1, action: "open", kind: "dialog", text: "late" } });
  }],
  ["list read (200)", async (m, a) => {
    await call(m.w, "GET", "/v1/needs-you", { token: a.owner.token });
  }],
  ["list read (304)", async (m, a) => {
    const first = await call(m.w, "GET", "/v1/needs-you", { token: a.owner.token });
    await m.meter(); // the 200 above is the operation before
    await call(m.w, "GET", "/v1/needs-you", { token: a.owner.token, headers: { "if-none-match": first.headers.get("etag") } });
  }],
  ["alarm that notifies, 1 channel", async (m, a) => {
    await call(m.w, "PUT", "/v1/channels/webhook", { token: a.owner.token, body: { url: `${m.sink.url}/hook`, secret: "0123456789abcdef" } });
    await report(m, a.task, { session: `alarm1-${a.run}`, action: "open", kind: "dialog", text: "Which?" });
    const before = m.deliveries();
    await m.meter(); // the set-up and the report are not the alarm
    await delivered(m, before, 1);
  }],
  ["alarm that notifies, 3 channels", async (m, a) => {
    await call(m.w, "PUT", "/v1/channels/ntfy", { token: a.owner.token, body: { url: `${m.sink.url}/topic` } });
    const p = (await call(m.w, "POST", "/v1/pairings", { token: a.owner.token })).body;
    const phone = (await call(m.w, "POST", "/v1/devices", { body: { code: p.code, name: "phone" } })).body;
    const sub = m.push.subscribe();
    m.subs.push(sub);
    await call(m.w, "PUT", "/v1/devices/me/push", { token: phone.token, body: sub.json });
    await report(m, a.task, { session: `alarm3-${a.run}`, action: "open", kind: "dialog", text: "Which?" });
    const before = m.deliveries();
    await m.meter();
    await delivered(m, before, 3);
  }],
  ["answer a reply", async (m, a) => {
    const r = await report(m, a.task, { session: `reply-${a.run}`, action: "open", kind: "reply", text: "Shall I go on?",
      terminal: { kind: "tmux", host: "box", cwd: "/src", target: "main:0.0" } });
    await m.meter();
    await call(m.w, "POST", `/v1/questions/${r.body.question_id}/answers`, { token: a.owner.token, body: { text: "yes" } });
  }],
  ["Show terminal: one screen asked (no relay connected)", async (m, a) => {
    const r = await report(m, a.task, { session: `screen-${a.run}`, action: "open", kind: "permission", text: "Run it?",
      terminal: { kind: "tmux", host: "box", cwd: "/src", target: "main:0.1" } });
    await m.meter();
    await call(m.w, "GET", `/v1/questions/${r.body.question_id}/screen`, { token: a.owner.token });
  }],
  ["pairing: make a code and redeem it", async (m, a) => {
    const p = (await call(m.w, "POST", "/v1/pairings", { token: a.owner.token })).body;
    await call(m.w, "POST", "/v1/devices", { body: { code: p.code, name: "laptop" } });
  }],
];

/** Every operation's cost, in order: [{operation, d1_calls, statements, rows_read, rows_written, do_requests, subrequests}]. */
export async function measure(m, a) {
  // Each measurement in sessions of its own: nothing it finds open is another's.
  a.run = (a.run ?? 0) + 1;
  const rows = [];
  for (const [operation, run] of OPERATIONS) {
    await m.meter();
    await run(m, a);
    const { by_sql, ...cost } = await m.meter();
    rows.push({ operation, ...cost, by_sql });
  }
  return rows;
}

/**
 * Every operation's cost on a fresh metered Worker: an empty database, or
 * one seeded with `size` ({owners, history}, 10 tasks an owner, the history
 * the measured owner's).
 */
export async function costs(size) {
  const m = await startMetered();
  try {
    const a = await account(m);
    if (size) await seed(m.w, { ...size, tasks: 10, heavy: { owner_id: a.owner.owner_id, task_id: a.task.task_id } });
    return await measure(m, a);
  } finally {
    await m.stop();
  }
}
