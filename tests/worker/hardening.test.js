// Hardening of the API: bodies refused while they are read, channel settings
// that could never work refused when set, no caching of any answer, and the
// delivery log an owner can read to see why a phone stopped ringing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { ADMIN, call, count, newOwner, newTask, post, report, sleep, waitFor, withWorkerAndSink } from "./helpers.js";

const DELAY = 300;
let w, sink;
withWorkerAndSink({ NOTIFY_DELAY_MS: String(DELAY), NOTIFY_RETRY_MS: "300" }, (ww, ss) => ([w, sink] = [ww, ss]));

/**
 * A body stream of `total` bytes in 64 KiB chunks, one a millisecond at most
 * (so the whole of a large one takes seconds), that counts what was pulled;
 * with `stall`, it stops after that many bytes without ever ending.
 */
function bodyStream(total, stall = Infinity) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const pulled = { bytes: 0 };
  const stream = new ReadableStream({
    async pull(controller) {
      if (pulled.bytes >= stall) return new Promise(() => {}); // never more, never the end
      if (pulled.bytes >= total) return controller.close();
      await sleep(1);
      pulled.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled };
}

test("a huge chunked report body is refused before it is read in full, even with an unknown credential", async () => {
  const total = 64 * 1024 * 1024;
  const { stream, pulled } = bodyStream(total);
  const outcome = await w.mf
    .dispatchFetch("http://localhost/v1/reports", {
      method: "POST",
      headers: { authorization: `Bearer nyt_${"0".repeat(64)}` },
      body: stream,
      duplex: "half",
    })
    .catch((e) => e);
  // The 413 comes while the client is still sending; the runtime may then
  // reset the connection under the client before it reads the answer. Both
  // are a refusal; what matters is that the body was not read in full.
  if (outcome instanceof Error) {
    // fetch rejects with a TypeError for a network error, and only for one.
    assert.ok(outcome instanceof TypeError, String(outcome));
  } else {
    assert.equal(outcome.status, 413);
    // The reset can also cut the answer's body short, after its status.
    const text = await outcome.text().catch(() => null);
    if (text) assert.equal(JSON.parse(text).error, "too_large");
  }
  // Buffers between the test and the Worker may take some megabytes; a Worker
  // that read the body in full would have taken all of it.
  assert.ok(pulled.bytes < total, `read ${pulled.bytes} bytes of 64 MiB`);
});

test("a stalled body past the limit is answered at once, not held", async () => {
  const owner = await newOwner(w);
  const { stream } = bodyStream(Infinity, 96 * 1024);
  const started = Date.now();
  const resp = await Promise.race([
    w.mf.dispatchFetch("http://localhost/v1/tasks", {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}` },
      body: stream,
      duplex: "half",
    }),
    sleep(10_000).then(() => null),
  ]);
  assert.ok(resp, "answered before the body ended");
  assert.equal(resp.status, 413);
  assert.ok(Date.now() - started < 10_000);
  assert.equal(await count(w, "tasks", `owner_id = '${owner.owner_id}'`), 0);
});

test("a declared length over the limit is refused without reading", async () => {
  const owner = await newOwner(w);
  const r = await call(w, "POST", "/v1/tasks", {
    token: owner.token,
    raw: JSON.stringify({ name: "x".repeat(40 * 1024) }),
    headers: { "content-type": "application/json" },
  });
  assert.equal(r.status, 413);
});

/**
 * Sends `requests` one after another on one kept-alive TCP connection, each
 * once the previous one's answer has arrived in full; resolves with each
 * answer's status line, or "closed" for a request the server never answered.
 */
function onOneConnection(url, requests) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const statuses = [];
    let buffered = Buffer.alloc(0);
    const socket = connect(Number(port), hostname);
    const next = () => {
      if (statuses.length === requests.length) return socket.end(), resolve(statuses);
      socket.write(requests[statuses.length]);
    };
    socket.on("connect", next);
    socket.on("data", (data) => {
      buffered = Buffer.concat([buffered, data]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString();
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      statuses.push(head.split("\r\n")[0]);
      buffered = buffered.subarray(end + 4 + length);
      // As a client would: the next request a moment later, not in the same packet.
      setTimeout(next, 20);
    });
    const closed = () => {
      while (statuses.length < requests.length) statuses.push("closed");
      resolve(statuses);
    };
    socket.on("error", closed);
    socket.on("close", closed);
  });
}

test("a request refused before its body is read leaves its connection open for the next one", async () => {
  const body = JSON.stringify({ text: "y" });
  const refused = [
    "POST /v1/questions/q_none/answers HTTP/1.1",
    `Host: 127.0.0.1`,
    "Authorization: Bearer nyd_not-a-device",
    "Content-Type: application/json",
    `Content-Length: ${body.length}`,
    "",
    body,
  ].join("\r\n");
  const health = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  const statuses = await onOneConnection(w.url, [refused, refused, health]);
  assert.deepEqual(statuses, ["HTTP/1.1 401 Unauthorized", "HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"]);
});

test("channel settings that could never work are refused and nothing is stored", async () => {
  const ana = await newOwner(w);
  const bad = [
    ["ntfy", { url: "https://ana:hunter2@ntfy.example/topic" }],
    ["ntfy", { url: "https://ntfy.sh/topic", token: "tk_abc\r\nX-Injected: 1" }],
    ["ntfy", { url: "https://ntfy.sh/topic", token: "tökén" }],
    ["ntfy", { url: "https://ntfy.sh/topic", click: "https://u:p@example.com/" }],
    ["webhook", { url: "https://ana:hunter2@example.com/hook", secret: "0123456789abcdef" }],
    ["webhook", { url: "http:///hook", secret: "0123456789abcdef" }],
  ];
  for (const [kind, body] of bad) {
    const r = await call(w, "PUT", `/v1/channels/${kind}`, { token: ana.token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, "invalid_channel");
    assert.ok(!r.text.includes("hunter2"), "a password is never echoed");
  }
  assert.equal(await count(w, "channels", `owner_id = '${ana.owner_id}'`), 0);
});

test("every answer says Cache-Control: no-store", async () => {
  const ana = await newOwner(w);
  const answers = [
    await call(w, "GET", "/v1/health"),
    await call(w, "POST", "/v1/owners", { token: ADMIN, body: { name: "Bea" } }),
    await call(w, "GET", "/v1/needs-you", { token: ana.token }),
    await call(w, "GET", "/v1/needs-you"),
    await call(w, "GET", "/v1/nowhere"),
    await call(w, "POST", "/v1/reports", { token: "nyt_x", raw: "{" }),
  ];
  for (const r of answers) assert.equal(r.headers.get("cache-control"), "no-store", `${r.status} ${r.text}`);
});

test("the delivery log: per question, and each channel's last success and failure", async () => {
  const ana = await newOwner(w);
  const bea = await newOwner(w);
  await call(w, "PUT", "/v1/channels/webhook", {
    token: ana.token,
    body: { url: `${sink.url}/hook/log`, secret: "0123456789abcdef" },
  });
  const task = await newTask(w, ana.token);
  sink.failNext(1);
  const r = await post(w, task.credential, report({ session: "log", action: "open", kind: "dialog", text: "Go?" }));
  const qid = r.body.question_id;
  const path = `/v1/questions/${qid}/deliveries`;
  const log = await waitFor(async () => {
    const l = await call(w, "GET", path, { token: ana.token });
    return l.body.deliveries.some((d) => d.ok) && l;
  }, 5000);
  assert.equal(log.status, 200);
  assert.deepEqual(
    log.body.deliveries.map((d) => [d.channel, d.event, d.attempt, d.ok, d.status, d.error]),
    [["webhook", "open", 1, false, 503, "HTTP 503"], ["webhook", "open", 2, true, 200, null]],
  );
  const channels = await call(w, "GET", "/v1/channels", { token: ana.token });
  const [hook] = channels.body.channels;
  assert.ok(hook.last_success_at >= hook.last_failure_at, JSON.stringify(hook));
  assert.equal(hook.last_error, "HTTP 503");

  // Only the owner reads it: another owner gets 404, other credentials 401.
  assert.equal((await call(w, "GET", path, { token: bea.token })).status, 404);
  assert.equal((await call(w, "GET", path, { token: task.credential })).status, 401);
  assert.equal((await call(w, "GET", path, { token: ADMIN })).status, 401);
  assert.equal((await call(w, "GET", path)).status, 401);
  assert.equal((await call(w, "GET", "/v1/questions/q_nope/deliveries", { token: ana.token })).status, 404);
  assert.equal((await call(w, "POST", path, { token: ana.token })).status, 405);
});
