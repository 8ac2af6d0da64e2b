// See bench/decisions.sh. Decisions from afar with the real Claude Code: N
// permissions, each allowed through the API once listed; the time from the
// POST to the command having run (its file exists), and what a waiting hook
// costs while its dialog is on screen (its processes' memory, CPU and
// wake-ups over a window).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { call, newTask, ROOT } from "../tests/worker/helpers.js";
import { startAnthropicMock } from "../tests/live/mock-anthropic.js";
import { startLive } from "../tests/live/harness.js";
import { claudeEnv, startClaude } from "../tests/live/claude.js";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg("--n", 30));
const WINDOW_S = Number(arg("--window-s", 10));
const REPORTER = join(ROOT, "target", "release", "report-prompt");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

const live = await startLive("bench-decisions", { NOTIFY_DELAY_MS: "600000" });
const task = await newTask(live.w, live.owner.token, { name: "bench" });
const model = await startAnthropicMock();
const term = await startClaude(`needs-you-bench-${process.pid}`, live.cwd, claudeEnv(live, model, task, REPORTER));

/** The waiting hook's processes: the shell Claude Code starts, and report-prompt. */
function hookPids() {
  const hook = spawnSync("pgrep", ["-f", `^${REPORTER} --cli claude-code`], { encoding: "utf8" }).stdout.trim().split("\n").filter(Boolean);
  const parents = hook.map((p) => readFileSync(`/proc/${p}/status`, "utf8").match(/PPid:\s+(\d+)/)[1]);
  return [...hook, ...parents.filter((p) => /sh$/.test(readFileSync(`/proc/${p}/comm`, "utf8").trim()))];
}
function sample(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    rss_kb: Number(/VmRSS:\s+(\d+)/.exec(status)[1]),
    ticks: Number(f[11]) + Number(f[12]),
    wakeups: Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]) + Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]),
  };
}

const ran = [];
let cost;
try {
  for (let i = 0; i < N; i++) {
    const file = join(live.cwd, `decided-${i}`);
    model.next({ tool: "Bash", input: { command: `touch ${file}`, description: `Decision ${i}` } });
    model.next({ text: `Done ${i}.` });
    await term.type(`decision ${i}`);
    let q;
    const asked = Date.now();
    for (;;) {
      const l = await live.list();
      q = l.find((x) => x.answer_from_afar === "decision" && x.text.includes(`decided-${i}`));
      if (q) break;
      if (Date.now() - asked > 30_000) throw new Error(`decision ${i} never listed: ${JSON.stringify(l)}\n${term.screen()}`);
      await sleep(50);
    }
    if (i === 0) {
      const pids = hookPids();
      const before = pids.map(sample);
      await sleep(WINDOW_S * 1000);
      const after = pids.map(sample);
      cost = {
        processes: pids.length,
        rss_kb: after.map((s) => s.rss_kb),
        cpu_ticks_in_window: after.reduce((n, s, k) => n + s.ticks - before[k].ticks, 0),
        wakeups_in_window: after.reduce((n, s, k) => n + s.wakeups - before[k].wakeups, 0),
        window_s: WINDOW_S,
      };
    }
    const t0 = Date.now();
    const r = await call(live.w, "POST", `/v1/questions/${q.question_id}/answers`, { token: live.owner.token, body: { decision: "allow", digest: q.digest } });
    if (r.status !== 201) throw new Error(r.text);
    while (!existsSync(file)) await sleep(5);
    ran.push(Date.now() - t0);
    await term.waitFor(new RegExp(`Done ${i}\\.`));
  }
} finally {
  term.stop();
  await model.stop();
  await live.stop();
}
console.log(JSON.stringify({
  decisions: N,
  post_to_tool_ran_ms: { p50: pct(ran, 50), p95: pct(ran, 95), max: Math.max(...ran), min: Math.min(...ran) },
  waiting_hook: cost,
}, null, 2));
