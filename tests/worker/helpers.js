// Shared set-up for the Worker's integration tests: the built Worker (build/)
// in Miniflare with a real local D1 (our migrations applied) and the real
// Durable Object, plus a real HTTP sink on 127.0.0.1 for the channels.
import { Miniflare } from "miniflare";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ADMIN = "test-admin-token-0123456789";

/** Starts the Worker. `vars` override wrangler.toml's [vars]. */
export async function startWorker(vars = {}) {
  const state = mkdtempSync(join(tmpdir(), "needs-you-test-"));
  const mf = new Miniflare({
    scriptPath: join(ROOT, "build", "index.js"),
    modules: true,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }],
    compatibilityDate: "2026-04-01",
    d1Databases: ["DB"],
    d1Persist: join(state, "d1"),
    durableObjects: { NOTIFIER: "Notifier" },
    durableObjectsPersist: join(state, "do"),
    bindings: { ADMIN_TOKEN: ADMIN, NOTIFY_DELAY_MS: "15000", NOTIFY_RETRY_MS: "2000", ...vars },
  });
  await mf.ready;
  const db = await mf.getD1Database("DB");
  await applyMigrations(db);
  const url = (await mf.ready).toString().replace(/\/$/, "");
  return {
    mf,
    db,
    url,
    async stop() {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** Applies migrations/*.sql in order, as `wrangler d1 migrations apply` would. */
export async function applyMigrations(db) {
  const dir = join(ROOT, "migrations");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
    const sql = readFileSync(join(dir, file), "utf8")
      .split("\n")
      .filter((line) => !line.trim().startsWith("--"))
      .join("\n");
    const statements = sql.split(";").map((s) => s.trim()).filter(Boolean);
    await db.batch(statements.map((s) => db.prepare(s)));
  }
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

/** A real HTTP server on 127.0.0.1 that records what it receives. */
export async function startSink() {
  const received = [];
  let failures = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body, at: Date.now() });
      if (failures > 0) {
        failures -= 1;
        res.writeHead(503, { "content-type": "text/plain" }).end("down");
      } else {
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** The next `n` requests get 503. */
    failNext(n) {
      failures = n;
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

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
