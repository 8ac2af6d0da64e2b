// See bench/answers.sh. Arguments: URL OWNER TASK WORK [--n N] [--idle-s S] [--wrangler-log FILE].
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../tests/worker/helpers.js";
import { ownerKey } from "../tests/support/signing.js";

const [url, owner, task, work] = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg("--n", 30));
const IDLE_S = Number(arg("--idle-s", 60));
const wranglerLog = arg("--wrangler-log", null);
// The owner's key, which the agent's machine pins and every answer is signed with.
const key = await ownerKey();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
async function api(method, path, token, body) {
  const r = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}` }, body: body && JSON.stringify(body) });
  return r.json();
}
const sock = join(work, "bench.sock");
const dir = join(work, "agent");
const stateDir = join(work, "state");
mkdirSync(dir, { recursive: true });
const env = { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm-256color", NEEDS_YOU_URL: url,
  NEEDS_YOU_TOKEN: task, NEEDS_YOU_OWNER: key.fingerprint, NEEDS_YOU_STATE_DIR: stateDir, REPORTER: process.env.REPORTER, AGENT_SESSION: "bench",
  AGENT_ROUNDS: String(N + 1) };
execFileSync("tmux", ["-S", sock, "new-session", "-d", "-s", "bench", "-x", "200", "-y", "50",
  `python3 ${join(ROOT, "tests", "answers", "agent.py")} ${dir}`], { env });
const keys = () => existsSync(join(dir, "keys.jsonl"))
  ? readFileSync(join(dir, "keys.jsonl"), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
async function openQuestion(notId) {
  for (;;) {
    const q = (await api("GET", "/v1/needs-you", owner)).questions.find((x) => x.session === "bench" && x.question_id !== notId);
    if (q) return q;
    await sleep(50);
  }
}

const latency = [];
const enterGap = [];
let last = null;
for (let i = 0; i < N; i++) {
  const q = await openQuestion(last);
  last = q.question_id;
  await sleep(300);
  const before = keys().length;
  const text = `answer ${i}`;
  const t0 = Date.now();
  await api("POST", `/v1/questions/${q.question_id}/answers`, owner, await key.body(q, { text }));
  let ks;
  while ((ks = keys()).length < before + 2) await sleep(10);
  const [typed, enter] = ks.slice(before, before + 2);
  if (typed.data !== text || enter.data !== "\r") throw new Error(`unexpected keys ${JSON.stringify(ks.slice(before))}`);
  latency.push(typed.t * 1000 - t0);
  enterGap.push((enter.t - typed.t) * 1000);
}
const out = {
  answers: N,
  post_to_text_ms: { p50: Math.round(pct(latency, 50)), p95: Math.round(pct(latency, 95)), max: Math.round(Math.max(...latency)) },
  enter_after_text_ms: { min: Math.round(Math.min(...enterGap)), p50: Math.round(pct(enterGap, 50)) },
};

// ---- the relay while idle: its question open, nothing to type
await openQuestion(last);
const relayPid = Number(spawnSync("pgrep", ["-f", `__relay --state-dir ${stateDir}`], { encoding: "utf8" }).stdout.trim().split("\n")[0]);
const cpu = () => {
  const f = readFileSync(`/proc/${relayPid}/stat`, "utf8").slice(readFileSync(`/proc/${relayPid}/stat`, "utf8").lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in ms at 100 Hz
};
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${relayPid}/status`, "utf8"))[1]);
const lines = () => (wranglerLog && existsSync(wranglerLog) ? readFileSync(wranglerLog, "utf8").split("\n").length : 0);
const [cpu0, lines0] = [cpu(), lines()];
await sleep(IDLE_S * 1000);
out.relay_idle = {
  seconds: IDLE_S,
  cpu_ms: cpu() - cpu0,
  rss_kb: rss(),
  worker_requests_logged: lines() - lines0,
};

// ---- the hook's foreground cost: a reply in tmux (relay running) beside the same outside tmux
const stop = join(work, "stop.json");
writeFileSync(stop, JSON.stringify({ session_id: "bench-hook", hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "Shall I go on?" }));
const hookEnv = `NEEDS_YOU_URL=http://127.0.0.1:9 NEEDS_YOU_TOKEN=${task} NEEDS_YOU_STATE_DIR=${stateDir}`;
const result = join(work, "hook.json");
const cmd = `${process.env.REPORTER} --cli claude-code < ${stop}`;
execFileSync("tmux", ["-S", sock, "new-window", "-d",
  `env ${hookEnv} hyperfine --warmup 20 --runs 200 --export-json ${result} -n 'reply, in tmux' 'env ${cmd}' -n 'reply, outside tmux' 'env -u TMUX -u TMUX_PANE ${cmd}' > /dev/null 2>&1; touch ${result}.done`], { env });
while (!existsSync(`${result}.done`)) await sleep(200);
for (const r of JSON.parse(readFileSync(result, "utf8")).results) {
  out[`hook_${r.command.replace(/\W+/g, "_")}_median_ms`] = Number((r.median * 1000).toFixed(2));
}
console.log(JSON.stringify(out, null, 2));
