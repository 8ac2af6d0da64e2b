// Alarm lateness: opens N dialogs against a running needs-you, each in its own
// session, and compares when each notification reached the sink with when its
// report was sent. Lateness = arrival - sent - delay.
//
//   node bench/alarm.mjs URL TASK_CREDENTIAL SINK_RECORD_FILE [--n 25] [--delay 15000]
import { readFileSync } from "node:fs";

const [url, credential, record] = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = opt("n", 25);
const DELAY = opt("delay", 15000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const sent = new Map(); // question id -> ms when its report was sent
for (let i = 0; i < N; i++) {
  const at = Date.now();
  const resp = await fetch(`${url}/v1/reports`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: JSON.stringify({ action: "open", kind: "dialog", cli: "claude-code", session: `alarm-${at}-${i}`,
      seq: at * 1000 + i, text: `Question ${i}?`, options: [{ label: "yes" }, { label: "no" }] }),
  });
  const body = await resp.json();
  sent.set(body.question_id, at);
  await sleep(200); // spread the alarms a little, as real questions are
}

const deliveries = () =>
  readFileSync(record, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
    .filter((r) => r.method === "POST").map((r) => ({ at: r.at, event: JSON.parse(r.body) }));
const deadline = Date.now() + DELAY + 10_000;
while (Date.now() < deadline && deliveries().length < N) await sleep(200);
await sleep(1000);

const got = deliveries().filter((d) => d.event.event === "question.open");
const late = got.map((d) => d.at - sent.get(d.event.question.question_id) - DELAY).sort((a, b) => a - b);
const perQuestion = new Map();
for (const d of got) perQuestion.set(d.event.question.question_id, (perQuestion.get(d.event.question.question_id) ?? 0) + 1);
const q = (p) => late[Math.min(late.length - 1, Math.floor(p * late.length))];
console.log(JSON.stringify({
  dialogs: N,
  delivered: perQuestion.size,
  delivered_twice: [...perQuestion.values()].filter((n) => n > 1).length,
  delay_ms: DELAY,
  late_ms: { min: late[0], median: q(0.5), p95: q(0.95), max: late[late.length - 1] },
}, null, 2));
