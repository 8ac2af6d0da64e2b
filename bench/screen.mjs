// See bench/screen.sh. Arguments: URL OWNER TASK WORK [--n N] [--busy-s S] [--idle-s S].
// A view is what the page does: GET …/screen, then again every 500 ms with
// the digest it shows, opening each sealed screen with the owner's content key.
import { execFileSync, spawnSync } from "node:child_process";
import { webcrypto } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../tests/worker/helpers.js";
import { openText } from "../tests/support/sealing.js";

const [url, owner, task, work] = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const [N, BUSY_S, IDLE_S] = [arg("--n", 30), arg("--busy-s", 60), arg("--idle-s", 30)];
const EVERY_MS = 500; // public/screen.js
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const stats = (xs) => ({ p50: Math.round(pct(xs, 50)), p95: Math.round(pct(xs, 95)), max: Math.round(Math.max(...xs)) });
const stateDir = join(work, "state");
// The owner's content key, in the file the relay seals with, and the owner
// fingerprint it seals for (the bench answers nothing: any pin will do).
const OWNER_FP = "bench-owner";
const contentKey = { version: 1, key: Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64url") };
const keysFile = join(work, "content-key.json");
writeFileSync(keysFile, JSON.stringify({ keys: [contentKey] }), { mode: 0o600 });

async function api(path, token = owner) {
  const r = await fetch(url + path, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  return { status: r.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) };
}

/** The stand-in agent in its own tmux server, its permission listed and its relay up. */
async function agent(name, extra = {}) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  execFileSync("tmux", ["-S", join(work, `${name}.sock`), "new-session", "-d", "-x", "120", "-y", "40",
    `python3 ${join(ROOT, "tests", "answers", "screen-agent.py")} ${dir}`], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm-256color", NEEDS_YOU_URL: url,
      NEEDS_YOU_TOKEN: task, NEEDS_YOU_STATE_DIR: stateDir, REPORTER: process.env.REPORTER, AGENT_SESSION: name,
      NEEDS_YOU_OWNER: OWNER_FP, NEEDS_YOU_CONTENT_KEYS: keysFile, ...extra },
  });
  for (;;) {
    const q = (await api("/v1/needs-you")).body.questions.find((x) => x.session === name);
    if (q && (await api(`/v1/questions/${q.question_id}/screen`)).status === 200) return { dir, q };
    await sleep(100);
  }
}
const screenOf = (q, seen) => api(`/v1/questions/${q.question_id}/screen${seen ? `?seen=${seen}` : ""}`);
const text = (s) => s.lines.map((l) => l.map((x) => x.t).join("")).join("\n");
/** The screen a 200 answer carries, opened as the page opens it. */
const opened = async (q, r) => JSON.parse(await openText(contentKey, OWNER_FP, `${q.session}\n${q.open_seq}`, "screen", r.body.sealed));

const out = { views: N };
const quiet = await agent("quiet");

// ---- open to the first screen
const first = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  const r = await screenOf(quiet.q);
  if (r.status !== 200 || !r.body.sealed) throw new Error(JSON.stringify(r.body));
  await opened(quiet.q, r);
  first.push(performance.now() - t0);
  await sleep(250); // past the relay's 200 ms reuse: every view is a fresh read
}
out.open_to_first_screen_ms = stats(first);

// ---- a change on the pane to a view that follows it: a view runs as the
// page's does (a request, then 500 ms), and each change lands at a moment of
// its own, unknown to the view.
const follow = [];
let viewing = true;
let shown = "";
const view = (async () => {
  let seen = null;
  while (viewing) {
    const r = await screenOf(quiet.q, seen);
    seen = r.body.digest;
    if (r.body.sealed) shown = text(await opened(quiet.q, r));
    await sleep(EVERY_MS);
  }
})();
for (let i = 0; i < N; i++) {
  const marker = `change-${i}-${Math.random().toString(36).slice(2, 8)}`;
  await sleep(200 + Math.random() * EVERY_MS);
  writeFileSync(join(quiet.dir, "say"), marker);
  const t0 = performance.now();
  while (!shown.includes(marker)) await sleep(5);
  follow.push(performance.now() - t0);
}
viewing = false;
await view;
out.change_to_view_ms = stats(follow);

// ---- an open view on a busy pane: bytes, and the relay's CPU beside no view
const busy = await agent("busy", { AGENT_BUSY_MS: "100" });
const relayPid = Number(spawnSync("pgrep", ["-f", `__relay --state-dir ${stateDir}`], { encoding: "utf8" }).stdout.trim().split("\n")[0]);
const cpuMs = () => {
  const stat = readFileSync(`/proc/${relayPid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime at 100 Hz
};
let c0 = cpuMs();
await sleep(IDLE_S * 1000);
const idleCpu = cpuMs() - c0;
let [bytes, screens, asks] = [0, 0, 0];
let busySeen = null;
c0 = cpuMs();
const end = performance.now() + BUSY_S * 1000;
while (performance.now() < end) {
  const r = await screenOf(busy.q, busySeen);
  asks++;
  bytes += r.bytes;
  if (r.body.sealed) screens++;
  busySeen = r.body.digest;
  await sleep(EVERY_MS);
}
const viewCpu = cpuMs() - c0;
out.busy_view = {
  seconds: BUSY_S,
  pane: "120x40, 10 build lines a second",
  asks,
  screens_sent: screens,
  bytes_per_screen: Math.round(bytes / Math.max(1, screens)),
  bytes_per_minute: Math.round((bytes / BUSY_S) * 60),
};
out.relay_cpu_ms_per_minute = {
  no_view: Math.round((idleCpu / IDLE_S) * 60),
  view_open: Math.round((viewCpu / BUSY_S) * 60),
};
console.log(JSON.stringify(out, null, 2));
