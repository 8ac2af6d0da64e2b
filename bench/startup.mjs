// The Worker's start on a cold isolate, as a person's first request after a
// deploy or an eviction meets it: for each build (BUILDS, `name=dir` pairs,
// each dir holding build/index.js and build/index_bg.wasm), ROUNDS fresh
// `wrangler dev` processes in a turning order, each on a fresh state, and:
//
// * ready: from the spawn to wrangler's "Ready on" line (wrangler's own
//   start, workerd's, and the Worker's module compiled and evaluated);
// * first request: `GET /v1/health` on that fresh isolate, the first the
//   Worker serves, timed alone.
//
// (V8 in Node 20 cannot compile the wasm on its own: it uses the exception
// handling that workerd's V8 has and Node's lacks.)
//
// Prints the p50/p95 of each, per build, as one JSON line.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENV, freePort, WRANGLER } from "../tests/wrangler/dev.js";

const ROOT = new URL("..", import.meta.url).pathname;
const ROUNDS = Number(process.env.ROUNDS || 12);
const builds = (process.env.BUILDS || `this=${ROOT}`).split(/\s+/).filter(Boolean).map((b) => {
  const [name, dir] = b.split("=");
  return { name, dir };
});
/** A folder wrangler runs in: this tree's wrangler.toml without its build step, the build's bundle. */
function stage(build) {
  const dir = mkdtempSync(join(tmpdir(), `needs-you-startup-${build.name}-`));
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8").split("\n");
  const kept = [];
  let skip = false;
  for (const line of toml) {
    if (/^\[build\]/.test(line)) skip = true;
    else if (/^\[/.test(line)) skip = false;
    if (!skip) kept.push(line);
  }
  writeFileSync(join(dir, "wrangler.toml"), kept.join("\n"));
  cpSync(join(build.dir, "build"), join(dir, "build"), { recursive: true });
  cpSync(join(ROOT, "public"), join(dir, "public"), { recursive: true });
  return dir;
}

async function coldStart(dir) {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "needs-you-startup-state-"));
  const start = performance.now();
  const child = spawn(WRANGLER, ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state,
    "--show-interactive-dev-session=false", "--var", "ADMIN_TOKEN:bench"], { cwd: dir, env: ENV, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wrangler dev did not come up:\n${out}`)), 120_000);
    const seen = (d) => {
      out += d;
      if (/Ready on/.test(out)) {
        clearTimeout(timer);
        resolve(performance.now() - start);
      }
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
  });
  // The proxy may say ready a moment before workerd listens: the first
  // request is timed from when a connection is taken.
  const t = performance.now();
  const r = await fetch(`http://127.0.0.1:${port}/v1/health`);
  await r.text();
  const first = performance.now() - t;
  if (r.status !== 200) throw new Error(`health answered ${r.status}`);
  const gone = new Promise((r) => child.once("exit", r));
  process.kill(-child.pid, "SIGTERM");
  await gone;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // all gone
  }
  rmSync(state, { recursive: true, force: true });
  return { ready, first };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
};

const staged = builds.map((b) => ({ ...b, at: stage(b), ready: [], first: [],
  gz: spawnSync("sh", ["-c", `gzip -9 -c '${join(b.dir, "build", "index_bg.wasm")}' | wc -c`], { encoding: "utf8" }).stdout.trim() }));
for (let round = 0; round < ROUNDS; round++) {
  // A turning order: no build always goes first after the machine rested.
  const order = staged.map((_, i) => staged[(i + round) % staged.length]);
  for (const b of order) {
    const { ready, first } = await coldStart(b.at);
    b.ready.push(ready);
    b.first.push(first);
  }
}
const figures = Object.fromEntries(staged.map((b) => [b.name, {
  wasm_gzip_bytes: Number(b.gz),
  ready_ms: { p50: pct(b.ready, 50), p95: pct(b.ready, 95) },
  first_request_ms: { p50: pct(b.first, 50), p95: pct(b.first, 95) },
}]));
for (const b of staged) rmSync(b.at, { recursive: true, force: true });
console.log(JSON.stringify({ rounds: ROUNDS, ...figures }));
