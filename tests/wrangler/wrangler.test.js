// The Worker under `wrangler dev` itself: what the local runtime's proxy and
// its restarts do to requests and alarms, which Miniflare cannot show.
//
// * A body refused while it arrives must not break anyone's next request
//   (the proxy reuses the connection it came on).
// * A body declared over the limit: wrangler dev's own middleware reads any
//   body a Worker left unread before the answer leaves, so the 413 waits for
//   the body (documented in docs/api.md; Miniflare and production answer at
//   once, tests/worker/hardening.test.js).
// * Restarts by SIGTERM and SIGKILL, at the worst moments, lose no dialog.
// * A panic's message and its file and line reach wrangler dev's output, and
//   the next request is served.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createConnection } from "node:net";
import { ADMIN, sleep, startSink, waitFor } from "../worker/helpers.js";
import { startDev } from "./dev.js";

const DELAY = 3000;
let dev, sink;
before(async () => {
  dev = await startDev({ NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300", ALLOW_TEST_PANIC: "true" });
  sink = await startSink();
});
after(async () => {
  await dev?.stop();
  await sink?.stop();
});

async function api(method, path, token, body) {
  const r = await fetch(dev.url + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
}

/** Writes `bytes` on a new connection; resolves with what came back within `ms` (or ""). */
function raw(bytes, ms, { halfClose = false } = {}) {
  return new Promise((resolve) => {
    const sock = createConnection(dev.port, "127.0.0.1");
    let got = "";
    sock.on("data", (d) => (got += d));
    sock.on("error", () => {});
    sock.write(bytes, () => halfClose && sock.end());
    setTimeout(() => {
      sock.destroy();
      resolve(got);
    }, ms);
  });
}

test("a panic's message and location reach wrangler dev's output, and the next request is served", async () => {
  const r = await fetch(`${dev.url}/v1/test/panic`).catch(() => null);
  assert.ok(!r || r.status >= 500, `a panic answers no success (${r?.status})`);
  // console_error_panic_hook's own lines: where it was raised, the message,
  // and the JavaScript stack it adds.
  const ours = /panicked at src[\\/]panic\.rs:\d+:\d+:\S*\s+a panic on purpose, asked for by a test\s+Stack:/;
  assert.ok(await waitFor(() => ours.test(dev.log()), 10_000), `console_error_panic_hook's message in the log:\n${dev.log().slice(-2000)}`);
  // The SDK's hook ran too, chained: it flags the instance for a fresh start.
  assert.match(dev.log(), /Critical Error: Rust panic: panicked at src[\\/]panic\.rs/);
  assert.equal((await api("GET", "/v1/health")).status, 200);
});

const goodOwner = () => api("POST", "/v1/owners", ADMIN, { name: "next" });

test("a chunked body over the limit is refused, and the next request, anyone's, is served", async () => {
  const body = "x".repeat(40_000);
  for (let round = 0; round < 3; round++) {
    const answer = await raw(
      `POST /v1/owners HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      1000,
    );
    assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 80));
    const next = await goodOwner();
    assert.equal(next.status, 201, `round ${round}: ${JSON.stringify(next.body)}`);
  }
});

test("a body declared over the limit: wrangler dev holds the 413 until the body comes; nobody else waits", async () => {
  const head = "POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nyt_x\r\nContent-Type: application/json\r\nContent-Length: 67108864\r\n\r\n";
  const held = raw(head + "{".repeat(1024), 2000);
  await sleep(200);
  const meanwhile = await goodOwner();
  assert.equal(meanwhile.status, 201, "another client is served meanwhile");
  assert.equal(await held, "", "the 413 waits in wrangler dev's drain of the unread body");
  assert.equal((await goodOwner()).status, 201, "and everyone is served after it");
});

test("restarts by SIGTERM and SIGKILL, right after the reports and while alarms fire, lose no dialog", async () => {
  const owner = (await api("POST", "/v1/owners", ADMIN, { name: "Restarts" })).body;
  const set = await api("PUT", "/v1/channels/webhook", owner.token, { url: `${sink.url}/hook`, secret: "0123456789abcdef" });
  assert.equal(set.status, 200);
  const notified = () => sink.received.map((r) => JSON.parse(r.body)).filter((m) => m.event === "question.open").map((m) => m.question.question_id);
  const rounds = [
    ["SIGTERM", "after the reports"],
    ["SIGKILL", "after the reports"],
    ["SIGTERM", "while alarms fire"],
    ["SIGKILL", "while alarms fire"],
  ];
  const all = [];
  let seq = Date.now() * 1000;
  for (const [signal, when] of rounds) {
    const task = (await api("POST", "/v1/tasks", owner.token, { name: `${signal} ${when}` })).body;
    const ids = [];
    for (let i = 0; i < 6; i++) {
      const r = await api("POST", "/v1/reports", task.credential, { action: "open", kind: "dialog", cli: "codex",
        session: `${signal}-${when}-${i}`, seq: ++seq, text: `Q ${i}?` });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(r.body.question_id);
    }
    if (when === "while alarms fire") {
      assert.ok(await waitFor(() => ids.some((id) => notified().includes(id)), DELAY + 8000), "an alarm fired");
    }
    await dev.restart(signal);
    const missing = () => ids.filter((id) => !notified().includes(id));
    await waitFor(() => missing().length === 0, DELAY + 30_000, 200);
    assert.deepEqual(missing(), [], `${signal} ${when}: every dialog notified`);
    all.push(...ids);
  }
  const counts = notified().filter((id) => all.includes(id)).reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map());
  const twice = [...counts.values()].filter((n) => n > 1).length;
  console.log(`# figures ${JSON.stringify({ restarts: rounds.length, dialogs: all.length, notified: counts.size, notified_twice: twice })}`);
});
