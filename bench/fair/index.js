// The fair floor: what needs-you does for a report, in plain JavaScript. The
// statements are those of src/store/ (the same SQL, the same parameters; a
// test in src/store/mod.rs checks it); the notifier object stores its
// question's id and sets or deletes its alarm, as src/notifier.rs does; the
// owner's live-list object is told after the answer, as src/live.rs is; the
// rate limiter is asked about every report, as src/limits.rs does.
// `POST /setup` makes one owner and task and answers the task's credential.
const CLAIM = `
INSERT INTO sessions (task_id, session, last_seq, applied_id, cli, updated_at)
SELECT id, ?2, ?5, ?3, ?6, ?4 FROM tasks
WHERE credential_hash = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)
  AND (SELECT COUNT(*) FROM questions q
       WHERE q.task_id = tasks.id AND q.closed_at IS NULL AND q.session <> ?2) < ?7
ON CONFLICT (task_id, session) DO UPDATE SET
  last_seq = excluded.last_seq, applied_id = excluded.applied_id,
  cli = excluded.cli, updated_at = excluded.updated_at
WHERE excluded.last_seq > sessions.last_seq`;
const SUPERSEDE = `
UPDATE questions SET closed_at = ?4, close_reason = ?5
WHERE task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND session = ?2 AND closed_at IS NULL
  AND NOT (kind = ?6 AND text = ?7 AND digest IS ?8 AND terminal IS ?9 AND cli = ?10
           AND (decisions IS ?11 OR ?12 IS NOT NULL) AND same IS ?12)
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = questions.task_id AND s.session = ?2 AND s.applied_id = ?3)
RETURNING id, kind, notified_at`;
const REOPEN_SAME = `
UPDATE questions SET open_seq = ?5, sealed = ?13, summary = ?14
WHERE task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND session = ?2 AND closed_at IS NULL
  AND kind = ?6 AND text = ?7 AND digest IS ?8 AND terminal IS ?9 AND cli = ?10
  AND (decisions IS ?11 OR ?12 IS NOT NULL) AND same IS ?12
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = questions.task_id AND s.session = ?2 AND s.applied_id = ?3)`;
const OPEN = `
INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq,
                       terminal, answerable, takes, digest, questions, decisions, request, sealed, same,
                       summary)
SELECT ?5, t.owner_id, t.id, ?2, ?6, ?7, ?8, ?9, ?4, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20
FROM tasks t
WHERE t.credential_hash = ?1
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = t.id AND s.session = ?2 AND s.applied_id = ?3)
  AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.task_id = t.id AND q.session = ?2 AND q.closed_at IS NULL)
RETURNING id`;
const CLOSE_IN_SESSION = `
UPDATE questions SET closed_at = ?4, close_reason = ?5
WHERE task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND session = ?2 AND closed_at IS NULL
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = questions.task_id AND s.session = ?2 AND s.applied_id = ?3)
RETURNING id, kind, notified_at`;
const TOUCH_TASK = `
UPDATE tasks SET last_report_at = ?4
WHERE credential_hash = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)`;
const BUMP_REVISION_OF_APPLIED_REPORT = `
UPDATE owners SET revision = revision + 1
WHERE id = (SELECT t.owner_id FROM tasks t JOIN sessions s ON s.task_id = t.id
            WHERE t.credential_hash = ?1 AND s.session = ?2 AND s.applied_id = ?3)`;
const OUTCOME = `
SELECT t.owner_id, t.revoked_at, t.expires_at,
       coalesce((SELECT applied_id FROM sessions WHERE task_id = t.id AND session = ?2) = ?3, 0) AS applied,
       EXISTS (SELECT 1 FROM questions WHERE task_id = t.id AND closed_at IS NULL) AS waiting,
       (SELECT COUNT(*) FROM questions WHERE task_id = t.id AND closed_at IS NULL AND session <> ?2) AS open_elsewhere
FROM tasks t WHERE t.credential_hash = ?1`;
const SESSION_OPEN = `
SELECT q.id, q.kind, q.opened_at, q.notified_at FROM questions q
WHERE q.task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND q.session = ?2 AND q.closed_at IS NULL`;

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const id = (prefix) => prefix + hex(crypto.getRandomValues(new Uint8Array(16)));
const sha256 = async (s) => hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)));
const DELAY = 15000;

async function report(request, env, ctx) {
  const credential = (request.headers.get("authorization") ?? "").replace(/^Bearer /, "");
  const hash = await sha256(credential);
  // The runtime's rate limiter, asked about every report as src/limits.rs does.
  const { success } = await env.REPORT_RATE.limit({ key: hash });
  if (!success) return Response.json({ error: "rate_limited" }, { status: 429 });
  const r = JSON.parse(await request.text());
  const now = Date.now();
  const keys = [hash, r.session, id("r_"), now];
  const stmt = (sql, extra) => env.DB.prepare(sql).bind(...keys, ...extra);
  const batch = [stmt(CLAIM, [r.seq, r.cli, r.action === "open" ? 20 : 4294967295])];
  const qid = id("q_");
  if (r.action === "open") {
    const same = [r.kind, r.text, r.digest ?? null, r.terminal ? JSON.stringify(r.terminal) : null, r.cli, null, r.sealed?.same ?? null];
    batch.push(stmt(SUPERSEDE, ["superseded", ...same]));
    batch.push(stmt(OPEN, [qid, r.cli, r.kind, r.text, JSON.stringify(r.options ?? []), r.seq,
      r.terminal ? JSON.stringify(r.terminal) : null, r.kind === "reply" && r.terminal?.kind === "tmux" ? 1 : 0,
      r.takes ?? null, r.digest ?? null, r.questions?.length ? JSON.stringify(r.questions) : null, null,
      r.request ? JSON.stringify(r.request) : null, r.sealed?.words ?? null, r.sealed?.same ?? null, r.sealed?.summary ?? null]));
    batch.push(stmt(REOPEN_SAME, [r.seq, ...same, r.sealed?.words ?? null, r.sealed?.summary ?? null]));
  } else {
    batch.push(stmt(CLOSE_IN_SESSION, [r.reason ?? "answered"]));
  }
  batch.push(stmt(TOUCH_TASK, []));
  batch.push(env.DB.prepare(BUMP_REVISION_OF_APPLIED_REPORT).bind(...keys.slice(0, 3)));
  batch.push(env.DB.prepare(OUTCOME).bind(...keys.slice(0, 3)));
  batch.push(env.DB.prepare(SESSION_OPEN).bind(...keys.slice(0, 2)));
  const results = await env.DB.batch(batch);
  const closed = results[1].results;
  const opened = r.action === "open" ? results[2].results[0]?.id ?? null : null;
  const task = results.at(-2).results[0];
  const open = results.at(-1).results[0];
  // The objects hear of it before the answer goes out, as src/routes/reports.rs does.
  for (const q of closed) {
    if (q.kind !== "reply") await notifier(env, q.id, q.notified_at ? { op: "closed", question_id: q.id } : { op: "disarm" });
  }
  if (r.action === "open" && open && open.kind !== "reply" && open.notified_at === null) {
    await notifier(env, open.id, { op: "arm", question_id: open.id, due_at: open.opened_at + DELAY });
  }
  // The owner's live list hears of it after the answer, as src/live.rs is told.
  if (task?.applied) {
    const live = env.LIVE.get(env.LIVE.idFromName(task.owner_id));
    ctx.waitUntil(live.fetch("https://live/changed", { method: "POST", headers: { "x-owner-id": task.owner_id } }));
  }
  return Response.json({ applied: !!task?.applied, question_id: opened, state: task?.waiting ? "waiting" : "running" });
}

async function notifier(env, questionId, cmd) {
  const stub = env.NOTIFIER.get(env.NOTIFIER.idFromName(questionId));
  await stub.fetch("https://notifier/", { method: "POST", body: JSON.stringify(cmd) });
}

export class Notifier {
  constructor(state) {
    this.storage = state.storage;
  }
  async fetch(request) {
    const cmd = await request.json();
    if (cmd.op === "arm") {
      await this.storage.put("question", cmd.question_id);
      await this.storage.setAlarm(cmd.due_at);
    } else if (cmd.op === "closed") {
      await this.storage.put("question", cmd.question_id);
      await this.storage.setAlarm(Date.now());
    } else {
      await this.storage.deleteAlarm();
      await this.storage.deleteAll();
    }
    return new Response(null, { status: 204 });
  }
  async alarm() {
    await this.storage.deleteAll();
  }
}

/** The owner's live list, as src/live.rs's: with no socket open it reads nothing. */
export class Live {
  constructor(state) {
    this.state = state;
  }
  async fetch() {
    if (this.state.getWebSockets().length === 0) return new Response(null, { status: 204 });
    return new Response("the fair floor holds no sockets", { status: 500 });
  }
}

export default {
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    if (path === "/v1/reports" && request.method === "POST") return report(request, env, ctx);
    if (path === "/setup" && request.method === "POST") {
      // `?tasks=N` tasks of one owner, their credentials comma-separated: a
      // load spread over them stays under each one's rate, as with ours.
      const n = Math.min(Number(new URL(request.url).searchParams.get("tasks") ?? 1), 256);
      const owner = id("own_"), now = Date.now();
      const credentials = [];
      const batch = [env.DB.prepare("INSERT INTO owners (id, name, token_hash, created_at) VALUES (?1, 'bench', ?2, ?3)").bind(owner, await sha256(owner), now)];
      for (let i = 0; i < n; i++) {
        const credential = `nyt_${hex(crypto.getRandomValues(new Uint8Array(32)))}`;
        credentials.push(credential);
        batch.push(env.DB.prepare("INSERT INTO tasks (id, owner_id, name, credential_hash, created_at) VALUES (?1, ?2, 'bench', ?3, ?4)").bind(id("tsk_"), owner, await sha256(credential), now));
      }
      await env.DB.batch(batch);
      return new Response(credentials.join(","));
    }
    return Response.json({ ok: true });
  },
};
