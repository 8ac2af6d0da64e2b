// Shared set-up for the Worker's integration tests: the built Worker (build/)
// in Miniflare with a real local D1 (our migrations applied) and the real
// Durable Object, plus a real HTTP sink on 127.0.0.1 for the channels
// (tests/support/sink.js).
import { after, before } from "node:test";
import { Miniflare } from "miniflare";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ADMIN = "test-admin-token-0123456789";

/** A wrangler.toml as wrangler itself reads it (imported only when asked:
 * the import takes about a second). */
export async function readWranglerConfig(file) {
  const { experimental_readRawConfig } = await import("wrangler");
  return (await experimental_readRawConfig({ config: file })).rawConfig;
}

/** The project's wrangler.toml, read once. */
let config;
export async function wranglerConfig() {
  config ??= await readWranglerConfig(join(ROOT, "wrangler.toml"));
  return config;
}

/** The rate limits of wrangler.toml's `ratelimits`, by binding name. */
/**
 * Waits, if need be, for the start of the rate limiter's next window of
 * `periodS` seconds, so that `needMs` from now fall inside one window: the
 * limiter counts in fixed windows of the clock (Miniflare's, as Cloudflare's),
 * and a test that straddles two sees its count start again.
 */
export async function inOneRateWindow(periodS = 60, needMs = 20_000) {
  const into = Date.now() % (periodS * 1000);
  if (into > periodS * 1000 - needMs) await sleep(periodS * 1000 - into + 100);
}

export async function deployedRates() {
  return Object.fromEntries((await wranglerConfig()).ratelimits.map((r) => [r.name, { limit: r.simple.limit, period: r.simple.period }]));
}

/**
 * Starts the Worker. `vars` override the settings' defaults (the code's own,
 * as in a deploy that sets none). The rate limiters are wrangler.toml's with
 * `{rates: await deployedRates()}`, else so wide that no test of something else
 * runs into them. `restart()` disposes of the Miniflare instance and starts
 * a new one on the same persisted D1 and Durable Object storage, as a
 * restart of the runtime would.
 */
export async function startWorker(vars = {}, { rates, script } = {}) {
  const limits = rates ?? Object.fromEntries(Object.keys(await deployedRates()).map((k) => [k, { limit: 1e9, period: 60 }]));
  const state = mkdtempSync(join(tmpdir(), "needs-you-test-"));
  const options = {
    // `script`: another entry around the build (bench/meter/index.js).
    scriptPath: script ?? join(ROOT, "build", "index.js"),
    modulesRoot: ROOT,
    modules: true,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }, { type: "ESModule", include: ["**/*.js"] }],
    compatibilityDate: "2026-04-01",
    d1Databases: ["DB"],
    d1Persist: join(state, "d1"),
    durableObjects: { NOTIFIER: "Notifier", RELAY: "Relay", LIVE: "Live" },
    durableObjectsPersist: join(state, "do"),
    bindings: { ADMIN_TOKEN: ADMIN, ...vars },
    ratelimits: Object.fromEntries(Object.entries(limits).map(([k, v]) => [k, { simple: v }])),
    // As wrangler.toml's assets: the page's files, the Worker first.
    assets: {
      directory: join(ROOT, "public"),
      binding: "ASSETS",
      routerConfig: { invoke_user_worker_ahead_of_assets: true, has_user_worker: true },
      assetConfig: { not_found_handling: "single-page-application" },
    },
  };
  const w = { mf: new Miniflare(options) };
  await w.mf.ready;
  w.db = await w.mf.getD1Database("DB");
  await applyMigrations(w.db);
  w.url = (await w.mf.ready).toString().replace(/\/$/, "");
  // Every file the runtime keeps of D1 and the Durable Objects.
  w.state = state;
  w.restart = async () => {
    await w.mf.dispose();
    // On the same port, as a restarted server would be: clients reconnect.
    w.mf = new Miniflare({ ...options, port: Number(new URL(w.url).port) });
    await w.mf.ready;
    w.db = await w.mf.getD1Database("DB");
  };
  w.stop = async () => {
    await w.mf.dispose();
    rmSync(state, { recursive: true, force: true });
  };
  return w;
}

/**
 * For a test file: starts the Worker with `vars` and a sink before its tests,
 * hands both to `use`, and stops them after its tests.
 */
export function withWorkerAndSink(vars, use) {
  let w, sink;
  before(async () => {
    w = await startWorker(vars);
    sink = await startSink();
    use(w, sink);
  });
  after(async () => {
    await w?.stop();
    await sink?.stop();
  });
}

/** Applies migrations/*.sql in order, as `wrangler d1 migrations apply` would. */
export async function applyMigrations(db) {
  const dir = join(ROOT, "migrations");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
    const sql = readFileSync(join(dir, file), "utf8")
      .split("\n")
      .filter((line) => !line.trim().startsWith("--"))
      .join("\n");
    await db.batch(sqlStatements(sql).map((s) => db.prepare(s)));
  }
}

/**
 * A migration's statements, as wrangler applies them: each ends with `;`,
 * but for the `;` inside a trigger's BEGIN … END.
 */
export function sqlStatements(sql) {
  const statements = [];
  let current = "";
  let inBody = false;
  for (const part of sql.split(/(;)/)) {
    current += part;
    if (/\bBEGIN\b/i.test(part)) inBody = true;
    if (part !== ";") continue;
    if (inBody && !/\bEND\s*;$/i.test(current.trim())) continue;
    inBody = false;
    if (current.replace(/;$/, "").trim()) statements.push(current.trim().replace(/;$/, ""));
    current = "";
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}

/** A JSON request to the Worker; returns {status, body}. */
export async function call(w, method, path, { token, body, raw, headers = {} } = {}) {
  const h = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  let payload;
  if (raw !== undefined) payload = raw;
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    h["content-type"] = "application/json";
  }
  const resp = await w.mf.dispatchFetch(`http://localhost${path}`, { method, headers: h, body: payload });
  const text = await resp.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: resp.status, body: json, text, headers: resp.headers };
}

export async function newOwner(w, name = "Ana") {
  const r = await call(w, "POST", "/v1/owners", { token: ADMIN, body: { name } });
  if (r.status !== 201) throw new Error(`owner: ${r.status} ${r.text}`);
  return r.body;
}

export async function newTask(w, ownerToken, body = { name: "api refactor" }) {
  const r = await call(w, "POST", "/v1/tasks", { token: ownerToken, body });
  if (r.status !== 201) throw new Error(`task: ${r.status} ${r.text}`);
  return r.body;
}

let seqCounter = 1_000_000;
/** A report body; `seq` grows across calls unless given. */
export function report(fields) {
  return { cli: "claude-code", session: "s1", seq: ++seqCounter, ...fields };
}

export async function post(w, credential, body) {
  return call(w, "POST", "/v1/reports", { token: credential, body });
}

export async function count(w, table, where = "1=1") {
  const row = await w.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).first();
  return row.n;
}

import { startSink } from "../support/sink.js";

export { startSink };

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns truthy or `ms` pass. */
export async function waitFor(check, ms, step = 50) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) return v;
    await sleep(step);
  }
}

/** The task's relay by hand: its socket to the Worker, having said hello;
 *  `got` collects the frames, `closed` the close code, `say` sends one. */
export async function relaySocket(w, credential) {
  const resp = await w.mf.dispatchFetch(`${w.url}/v1/relay`, { headers: { upgrade: "websocket", authorization: `Bearer ${credential}` } });
  if (resp.status !== 101) throw new Error(`the relay's socket was refused: ${resp.status}`);
  const ws = resp.webSocket;
  const r = { ws, got: [], closed: null, say: (m) => ws.send(JSON.stringify(m)) };
  ws.addEventListener("message", (e) => r.got.push(JSON.parse(e.data)));
  ws.addEventListener("close", (e) => { r.closed = e.code; });
  ws.accept();
  r.say({ type: "hello" });
  return r;
}

/**
 * Writes an answer straight into D1, behind the API's back, and has the
 * task's relay object deliver it: what a relay would be handed if the API's
 * checks were ever bypassed. `sealed`, its words sealed as a device seals
 * them, beside an empty `text`. Returns the answer's id.
 */
export async function smuggleAnswer(w, ownerId, q, text, signed = null, sealed = null) {
  const id = `ans_smuggled${Math.random().toString(16).slice(2)}`;
  const now = Date.now();
  await w.db.prepare(`INSERT INTO answers (id, question_id, task_id, owner_id, text, state, created_at, updated_at, signed, sealed)
    VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`).bind(id, q.question_id, q.task_id, ownerId, text, now, now,
    signed && JSON.stringify(signed), sealed).run();
  const relay = await w.mf.getDurableObjectNamespace("RELAY");
  const stub = relay.get(relay.idFromName(q.task_id));
  await stub.fetch("https://relay/", { method: "POST", body: JSON.stringify({ deliver: { task_id: q.task_id, answer_id: id } }) });
  return id;
}

