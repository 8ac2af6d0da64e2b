// See bench/decisions.sh. Decisions from afar with the real Claude Code and
// the real Codex (under `needs-you run`), one after the other in one run: N
// permissions each, each allowed through the API once listed; the time from
// the POST to the command having run, and what waits for the answer while
// its dialog is on screen (its processes' memory, CPU and wake-ups over a
// window): Claude Code's waiting hook, or Codex's second client.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { call, newTask, ROOT } from "../tests/worker/helpers.js";
import { startAnthropicMock } from "../tests/live/mock-anthropic.js";
import { startResponsesMock } from "../tests/live/mock-openai.js";
import { startLive } from "../tests/live/harness.js";
import { claudeEnv, startClaude } from "../tests/live/claude.js";
import { startCodex, writeCodexConfig } from "../tests/live/codex.js";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg("--n", 30));
const WINDOW_S = Number(arg("--window-s", 10));
const CLIS = arg("--cli", "claude,codex").split(",");
// --against DIR: another build's binaries (another checkout's
// target/release), measured right after this one's for each CLI, side by
// side in one run.
const AGAINST = arg("--against", "");
const BUILDS = [["this", join(ROOT, "target", "release")], ...(AGAINST ? [["against", AGAINST]] : [])];
// --first against: that build first, to see what the order itself weighs.
if (arg("--first", "this") === "against") BUILDS.reverse();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

/** The waiting hook's processes: the shell Claude Code starts, and report-prompt. */
function hookPids(REPORTER) {
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


/** What a set of processes costs over the window: memory, CPU ticks, wake-ups. */
async function costOf(pids) {
  const before = pids.map(sample);
  await sleep(WINDOW_S * 1000);
  const after = pids.map(sample);
  return {
    processes: pids.length,
    rss_kb: after.map((s) => s.rss_kb),
    cpu_ticks_in_window: after.reduce((n, s, k) => n + s.ticks - before[k].ticks, 0),
    wakeups_in_window: after.reduce((n, s, k) => n + s.wakeups - before[k].wakeups, 0),
    window_s: WINDOW_S,
  };
}

/** Waits for the open question whose text names `mark`, answerable with a decision. */
async function listed(live, mark, term) {
  const asked = Date.now();
  for (;;) {
    const l = await live.list();
    const q = l.find((x) => x.answer_from_afar === "decision" && x.text.includes(mark));
    if (q) return q;
    if (Date.now() - asked > 30_000) throw new Error(`${mark} never listed: ${JSON.stringify(l)}\n${term.screen()}`);
    await sleep(50);
  }
}

/**
 * N allows through the API, each once its dialog (`step(i)` of the model) is
 * listed: the times from the POST to `ran(i)`, and what `waiting()` measures
 * while the first one waits.
 */
async function decide(live, model, term, { step, ran, waiting }) {
  const times = [];
  let cost;
  for (let i = 0; i < N; i++) {
    model.next(step(i));
    model.next({ text: `Done ${i}.` });
    await term.type(`decision ${i}`);
    const q = await listed(live, `decided-${i}`, term);
    if (i === 0) cost = await waiting();
    const t0 = Date.now();
    const r = await allow(live, q);
    if (r.status !== 201) throw new Error(r.text);
    while (!ran(i)) await sleep(5);
    times.push(Date.now() - t0);
    await term.waitFor(new RegExp(`Done ${i}\\.`));
  }
  return { ran: summary(times), cost };
}

/** An allow signed by the owner's key (tests/support/signing.js), as the page's is by its own. */
const allow = (live, q) => live.answer(q, { decision: "allow", digest: q.digest });
const summary = (ran) => ({ p50: pct(ran, 50), p95: pct(ran, 95), max: Math.max(...ran), min: Math.min(...ran) });

async function claude(bin) {
  const REPORTER = join(bin, "report-prompt");
  const live = await startLive("bench-decisions", { NOTIFY_DELAY_MS: "600000" });
  const task = await newTask(live.w, live.owner.token, { name: "bench" });
  const model = await startAnthropicMock();
  const term = await startClaude(`needs-you-bench-${process.pid}`, live.cwd, claudeEnv(live, model, task, REPORTER));

  try {
    const { ran, cost } = await decide(live, model, term, {
      step: (i) => ({ tool: "Bash", input: { command: `touch ${join(live.cwd, `decided-${i}`)}`, description: `Decision ${i}` } }),
      ran: (i) => existsSync(join(live.cwd, `decided-${i}`)),
      waiting: () => costOf(hookPids(REPORTER)),
    });
    return { post_to_tool_ran_ms: ran, waiting_hook: cost };
  } finally {
    term.stop();
    await model.stop();
    await live.stop();
  }
}

/** Codex under `needs-you run`: the same, each approval a folder removed. */
async function codex(bin) {
  const [REPORTER, NEEDS_YOU] = [join(bin, "report-prompt"), join(bin, "needs-you")];
  const live = await startLive("bench-decisions-codex", { NOTIFY_DELAY_MS: "600000" });
  const model = await startResponsesMock();
  const codexHome = join(live.home, ".codex");
  mkdirSync(codexHome);
  writeCodexConfig(codexHome, model, live.cwd);
  execFileSync(REPORTER, ["install", "--cli", "codex", "--path", join(codexHome, "hooks.json")]);
  const config = join(live.home, "config");
  const pairing = (await call(live.w, "POST", "/v1/pairings", { token: live.owner.token, body: { rights: ["tasks"] } })).body;
  const link = new URL(pairing.url);
  const login = (...more) => execFileSync(NEEDS_YOU, ["login", `${live.w.url}${link.pathname}${link.hash}`, ...more],
    { env: { ...process.env, HOME: live.home, XDG_CONFIG_HOME: config }, stdio: "pipe" });
  // A build from before signed answers (AGAINST) knows no --owner, and takes answers unsigned.
  try {
    login("--owner", live.key.fingerprint);
  } catch {
    login();
  }
  const vars = { HOME: live.home, CODEX_HOME: codexHome, MOCK_API_KEY: "mock", TERM: "xterm-256color", PATH: process.env.PATH,
    XDG_CONFIG_HOME: config, NEEDS_YOU_STATE_DIR: join(live.home, "state") };
  const term = await startCodex(`needs-you-bench-codex-${process.pid}`, live.cwd, vars, "", { wrap: `${NEEDS_YOU} run -- ` });
  const pgrep = (pattern) => spawnSync("pgrep", ["-f", pattern], { encoding: "utf8" }).stdout.trim().split("\n").filter(Boolean);
  let server;
  try {
    const { ran, cost } = await decide(live, model, term, {
      step: (i) => {
        mkdirSync(join(live.cwd, `decided-${i}`));
        return { shell: `rm -rf ${join(live.cwd, `decided-${i}`)}` };
      },
      ran: (i) => !existsSync(join(live.cwd, `decided-${i}`)),
      // What waits for the answer: the client in `needs-you __codex` (its
      // waiter is a thread of it) and the task's relay; the app-server is
      // Codex's own, which the TUI otherwise runs inside itself.
      waiting: () => {
        server = { rss_kb: pgrep(`app-server --listen unix://${live.home}/`).map((p) => sample(p).rss_kb) };
        return costOf([...pgrep(`${NEEDS_YOU} __codex`), ...pgrep(`${NEEDS_YOU} __relay`)]);
      },
    });
    return { post_to_tool_ran_ms: ran, waiting_client: cost, app_server: server };
  } finally {
    term.stop();
    await model.stop();
    await live.stop();
  }
}

const out = { decisions: N };
const key = (cli, build) => (build === "this" ? cli : `${cli}_${build}`);
for (const [cli, run] of [["claude_code", claude], ["codex", codex]]) {
  if (!CLIS.includes(cli === "claude_code" ? "claude" : cli)) continue;
  for (const [build, bin] of BUILDS) out[key(cli, build)] = await run(bin);
}
if (AGAINST) out.against = AGAINST;
console.log(JSON.stringify(out, null, 2));
