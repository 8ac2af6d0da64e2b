// Load generator for bench/worker.sh: open+close report pairs against one or
// more Workers, from this (second) process. Each worker gets the same number
// of pairs at the same concurrency, in interleaved rounds (each round runs
// every target once, in an order that turns round by round), so machine noise
// falls on all alike. Prints a JSON summary per target, with each round's
// rate: the ratio of two targets within one round is the figure noise
// disturbs least.
//
//   node bench/load.mjs NAME=URL=CREDENTIAL ... [--pairs 2000] [--concurrency 8] [--rounds 3] [--kind dialog|reply]
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const targets = args.filter((a) => a.includes("=") && !a.startsWith("--")).map((a) => {
  // Several credentials, comma-separated, are used in turn, a session on one:
  // the Worker limits each task credential's reports a minute, and an agent
  // machine's load comes from many tasks.
  const [name, url, credentials] = a.split("=");
  return { name, url, credentials: credentials.split(","), latencies: [], pairs: 0, ms: 0, errors: 0, rounds: [] };
});
const PAIRS = opt("pairs", 2000);
const CONCURRENCY = opt("concurrency", 8);
const ROUNDS = opt("rounds", 3);
const ki = args.indexOf("--kind");
const KIND = ki >= 0 ? args[ki + 1] : "dialog";

let seq = Date.now() * 1000;
async function send(t, credential, body) {
  const start = performance.now();
  const resp = await fetch(`${t.url}/v1/reports`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await resp.arrayBuffer();
  t.latencies.push(performance.now() - start);
  if (resp.status !== 200) t.errors += 1;
}

async function round(t, pairs, roundNo) {
  let next = 0;
  const start = performance.now();
  async function worker(w) {
    for (;;) {
      const i = next++;
      if (i >= pairs) return;
      const session = `bench-${roundNo}-${w}-${i}`;
      const credential = t.credentials[i % t.credentials.length];
      await send(t, credential, { action: "open", kind: KIND, cli: "claude-code", session, seq: ++seq,
        text: "Which auth strategy should I implement?", options: [{ label: "OAuth" }, { label: "Email" }] });
      await send(t, credential, { action: "close", cli: "claude-code", session, seq: ++seq, reason: "answered" });
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  const ms = performance.now() - start;
  t.ms += ms;
  t.pairs += pairs;
  t.rounds.push(+(pairs / (ms / 1000)).toFixed(1));
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

// A short warm-up per target, not counted.
for (const t of targets) {
  await round(t, 50, -1);
  Object.assign(t, { latencies: [], pairs: 0, ms: 0, errors: 0, rounds: [] });
}
for (let r = 0; r < ROUNDS; r++) {
  // Turned by one each round: no target always runs first, or right after another.
  const order = targets.map((_, i) => targets[(i + r) % targets.length]);
  for (const t of order) await round(t, Math.ceil(PAIRS / ROUNDS), r);
}

const out = targets.map((t) => ({
  name: t.name,
  pairs: t.pairs,
  pairs_per_s: +(t.pairs / (t.ms / 1000)).toFixed(1),
  reports_per_s: +((2 * t.pairs) / (t.ms / 1000)).toFixed(1),
  p50_ms: +pct(t.latencies, 50).toFixed(2),
  p99_ms: +pct(t.latencies, 99).toFixed(2),
  errors: t.errors,
  per_round_pairs_per_s: t.rounds,
}));
console.log(JSON.stringify(out, null, 2));
