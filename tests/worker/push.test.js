// Web Push as a channel per paired device: the VAPID key route, subscribing a
// device, and deliveries checked by a mock push service that verifies the
// VAPID JWT and decrypts the body with independent code
// (tests/support/push-service.js).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN, call, newOwner, newTask, post, report, sleep, startWorker, waitFor } from "./helpers.js";
import { startPushService, vapidKeys } from "../support/push-service.js";
import { openText, sealText } from "../support/sealing.js";
import { randomBytes } from "node:crypto";

let w, push, keys;
before(async () => {
  keys = await vapidKeys();
  w = await startWorker({
    VAPID_PRIVATE_KEY: keys.privateKey,
    VAPID_SUBJECT: "mailto:ops@example.com",
    ALLOW_LOOPBACK_PUSH: "true",
    NOTIFY_DELAY_MS: "300",
    NOTIFY_RETRY_MS: "200",
  });
  push = await startPushService({ vapidPublicKey: keys.publicKey });
});
after(async () => {
  await w?.stop();
  await push?.stop();
});

/** An owner with a paired device; `subscribed` gives the device a push subscription. */
async function ownerWithDevice({ subscribed = true } = {}) {
  const owner = await newOwner(w);
  const p = await call(w, "POST", "/v1/pairings", { token: owner.token });
  const d = await call(w, "POST", "/v1/devices", { body: { code: p.body.code, name: "phone" } });
  assert.equal(d.status, 201, d.text);
  const device = d.body;
  let sub;
  if (subscribed) {
    sub = push.subscribe();
    const r = await call(w, "PUT", "/v1/devices/me/push", { token: device.token, body: sub.json });
    assert.equal(r.status, 200, r.text);
  }
  return { owner, device, sub, task: await newTask(w, owner.token) };
}

const settled = (sub, n, ms = 8000) => waitFor(() => sub.received.length >= n, ms);

test("the VAPID public key is served to anyone, and matches the secret", async () => {
  const r = await call(w, "GET", "/v1/push/key");
  assert.equal(r.status, 200);
  assert.equal(r.body.public_key, keys.publicKey);
  assert.equal(r.headers.get("cache-control"), "no-store");
});

test("a dialog left open rings the device, encrypted and signed; its close replaces it under the same topic", async () => {
  const { sub, task } = await ownerWithDevice();
  const opened = await post(w, task.credential, report({ session: "wp", action: "open", kind: "dialog",
    text: "Which region? <b>eu</b>", options: [{ label: "eu-west" }, { label: "us-east" }] }));
  const qid = opened.body.question_id;
  assert.ok(await settled(sub, 1), "the open push arrived");
  const open = sub.received[0];
  assert.deepEqual(open.problems, []);
  assert.equal(open.message.event, "open");
  assert.equal(open.message.question_id, qid);
  assert.equal(open.message.tag, `question-${qid}`);
  assert.equal(open.message.title, "Claude Code is asking");
  assert.match(open.message.body, /Which region\? <b>eu<\/b>\n• eu-west\n• us-east$/);
  assert.equal(open.message.url, `/#question-${qid}`);
  assert.equal(open.headers.urgency, "high");
  assert.equal(open.headers["content-encoding"], "aes128gcm");
  assert.ok(Number(open.headers.ttl) > 0 && Number(open.headers.ttl) <= 24 * 3600);
  assert.match(open.headers.topic, /^[A-Za-z0-9_-]{1,32}$/);
  assert.ok(!open.headers.topic.includes(qid), "the topic does not give away the question id");

  await post(w, task.credential, report({ session: "wp", action: "close", reason: "answered" }));
  assert.ok(await settled(sub, 2), "the close push arrived");
  const close = sub.received[1];
  assert.deepEqual(close.problems, []);
  assert.equal(close.message.event, "close");
  assert.equal(close.message.tag, `question-${qid}`);
  assert.equal(close.message.reason, "answered");
  assert.equal(close.headers.topic, open.headers.topic);

  // Nothing after the close.
  await sleep(1000);
  assert.equal(sub.received.length, 2);
});

test("a permission rings with its own words; a reply never rings; a dialog closed in time never rings", async () => {
  const { sub, task } = await ownerWithDevice();
  await post(w, task.credential, report({ session: "r", action: "open", kind: "reply", text: "Shall I go on?" }));
  await post(w, task.credential, report({ session: "q", action: "open", kind: "dialog", text: "Quick one?" }));
  await post(w, task.credential, report({ session: "q", action: "close", reason: "answered" }));
  await post(w, task.credential, report({ session: "p", action: "open", kind: "permission", text: "Run `make`?", cli: "codex" }));
  assert.ok(await settled(sub, 1));
  await sleep(1000);
  assert.deepEqual(sub.received.map((r) => r.message.title), ["Codex needs your permission"]);
});

test("a push service's 5xx is retried; its 410 drops the subscription for good", async () => {
  const a = await ownerWithDevice();
  a.sub.answer(503, 503);
  const q = await post(w, a.task.credential, report({ session: "x", action: "open", kind: "dialog", text: "Retry?" }));
  assert.ok(await settled(a.sub, 3), "tried three times");
  assert.deepEqual(a.sub.received.map((r) => r.status), [503, 503, 201]);
  const log = await call(w, "GET", `/v1/questions/${q.body.question_id}/deliveries`, { token: a.owner.token });
  assert.deepEqual(log.body.deliveries.map((d) => [d.event, d.ok]), [["open", false], ["open", false], ["open", true]]);

  const b = await ownerWithDevice();
  b.sub.answer(410);
  const gone = await post(w, b.task.credential, report({ session: "y", action: "open", kind: "dialog", text: "Gone?" }));
  assert.ok(await settled(b.sub, 1));
  const dropped = await waitFor(async () => {
    const r = await call(w, "GET", "/v1/devices", { token: b.owner.token });
    return r.body.devices[0].push === false;
  }, 3000);
  assert.ok(dropped, "the subscription was dropped");
  const glog = await call(w, "GET", `/v1/questions/${gone.body.question_id}/deliveries`, { token: b.owner.token });
  assert.equal(glog.body.deliveries.length, 1, "not retried");
  assert.match(glog.body.deliveries[0].error, /gone/);
  await post(w, b.task.credential, report({ session: "z", action: "open", kind: "dialog", text: "Again?" }));
  await sleep(1200);
  assert.equal(b.sub.received.length, 1, "nothing more to a dropped subscription");
});

test("revoking a device drops its subscription at once: no push reaches it", async () => {
  const { owner, device, sub, task } = await ownerWithDevice();
  // Before the revoke, the same report does ring it.
  await post(w, task.credential, report({ session: "rv0", action: "open", kind: "dialog", text: "Before?" }));
  assert.ok(await settled(sub, 1), "a live device is rung");
  const r = await call(w, "DELETE", `/v1/devices/${device.device_id}`, { token: owner.token });
  assert.equal(r.status, 200);
  const row = await w.db.prepare("SELECT push FROM devices WHERE id = ?").bind(device.device_id).first();
  assert.equal(row.push, null);
  await post(w, task.credential, report({ session: "rv", action: "open", kind: "dialog", text: "Anyone?" }));
  await sleep(1200);
  assert.equal(sub.received.length, 1, "nothing after the revoke");
});

test("who may subscribe: only a live device, for itself", async () => {
  const { owner, device, task } = await ownerWithDevice({ subscribed: false });
  const other = await ownerWithDevice({ subscribed: false });
  const sub = push.subscribe().json;
  const put = (token) => call(w, "PUT", "/v1/devices/me/push", { token, body: sub });
  assert.equal((await put(owner.token)).status, 403, "the owner token has no subscription of its own");
  assert.equal((await put(task.credential)).status, 401);
  assert.equal((await put(ADMIN)).status, 401);
  assert.equal((await put(undefined)).status, 401);
  assert.equal((await put(device.token)).status, 200);
  // The subscription is this device's only: the other owner's device is untouched.
  const theirs = await call(w, "GET", "/v1/devices", { token: other.owner.token });
  assert.equal(theirs.body.devices[0].push, false);
  const mine = await call(w, "GET", "/v1/devices", { token: device.token });
  assert.equal(mine.body.devices[0].push, true);
  assert.equal((await call(w, "DELETE", "/v1/devices/me/push", { token: device.token })).status, 200);
  assert.equal((await call(w, "GET", "/v1/devices", { token: device.token })).body.devices[0].push, false);

  await call(w, "DELETE", `/v1/devices/${device.device_id}`, { token: owner.token });
  assert.equal((await put(device.token)).status, 401, "a revoked device");
  assert.equal((await call(w, "DELETE", "/v1/devices/me/push", { token: device.token })).status, 401);
});

test("a bad subscription is refused with a JSON message and nothing is stored", async () => {
  const { device } = await ownerWithDevice({ subscribed: false });
  const good = push.subscribe().json;
  // The browser's point with its last byte changed: the right length and
  // form, off the curve (WebCrypto refuses it).
  const point = Buffer.from(good.keys.p256dh, "base64url");
  point[64] ^= 1;
  const bad = [
    { ...good, keys: { ...good.keys, p256dh: point.toString("base64url") } },
    { ...good, endpoint: "http://10.0.0.1:9/p" },
    { ...good, endpoint: "ftp://127.0.0.1/p" },
    { ...good, endpoint: "https://u:p@push.example/p" },
    { ...good, keys: { p256dh: good.keys.p256dh } },
    { ...good, keys: { ...good.keys, auth: "AAAA" } },
    { ...good, keys: { ...good.keys, p256dh: "BAAA" } },
    { endpoint: good.endpoint },
  ];
  for (const body of bad) {
    const r = await call(w, "PUT", "/v1/devices/me/push", { token: device.token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, "invalid_subscription");
    assert.ok(r.body.message.length > 0);
  }
  const notJson = await call(w, "PUT", "/v1/devices/me/push", { token: device.token, raw: "{" });
  assert.equal(notJson.status, 400);
  const row = await w.db.prepare("SELECT push FROM devices WHERE id = ?").bind(device.device_id).first();
  assert.equal(row.push, null);
  assert.equal((await call(w, "POST", "/v1/push/key")).status, 405);
});

test("without VAPID keys the key route says so, and https endpoints are required", async () => {
  const bare = await startWorker({});
  try {
    const r = await call(bare, "GET", "/v1/push/key");
    assert.equal(r.status, 404);
    assert.equal(r.body.error, "push_not_configured");
    const owner = (await call(bare, "POST", "/v1/owners", { token: ADMIN, body: { name: "b" } })).body;
    const p = await call(bare, "POST", "/v1/pairings", { token: owner.token });
    const d = await call(bare, "POST", "/v1/devices", { body: { code: p.body.code, name: "x" } });
    const loop = await call(bare, "PUT", "/v1/devices/me/push", { token: d.body.token, body: push.subscribe().json });
    assert.equal(loop.status, 400, "loopback endpoints only with ALLOW_LOOPBACK_PUSH");
  } finally {
    await bare.stop();
  }
  // 32 bytes, but above the curve's order: no key, said as for none.
  const wrong = await startWorker({
    VAPID_PRIVATE_KEY: Buffer.alloc(32, 0xff).toString("base64url"),
    VAPID_SUBJECT: "mailto:ops@example.com",
  });
  try {
    const r = await call(wrong, "GET", "/v1/push/key");
    assert.deepEqual([r.status, r.body.error], [404, "push_not_configured"]);
  } finally {
    await wrong.stop();
  }
});

test("a test push goes to every channel of the owner, each device's browser too, and says which answered", async () => {
  const { owner, device, sub } = await ownerWithDevice();
  const gone = await ownerWithDevice();
  sub.answer(201);
  const r = await call(w, "POST", "/v1/channels/test", { token: owner.token });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.results.map((x) => [x.channel, x.name, x.ok, x.status]),
    [[`webpush:${device.device_id}`, "browser: phone", true, 201]]);
  assert.equal(sub.received.length, 1);
  assert.deepEqual(sub.received[0].problems, []);
  assert.match(sub.received[0].message.body, /test notification/);
  assert.equal(gone.sub.received.length, 0, "another owner's browser hears nothing");

  gone.sub.answer(410);
  const g = await call(w, "POST", "/v1/channels/test", { token: gone.owner.token });
  assert.deepEqual(g.body.results.map((x) => [x.ok, x.status]), [[false, 410]]);
  const devices = await call(w, "GET", "/v1/devices", { token: gone.owner.token });
  assert.equal(devices.body.devices[0].push, false, "a gone subscription is dropped");

  for (const token of [device.token, gone.task.credential, ADMIN, undefined]) {
    assert.equal((await call(w, "POST", "/v1/channels/test", { token })).status, 401);
  }
});

test("a question whose words its machine sealed rings with its summary sealed: none of its words in the push, and the summary opens with the owner's content key", async () => {
  const { sub, task } = await ownerWithDevice();
  const contentKey = { version: 1, key: randomBytes(32).toString("base64url") };
  const owner = "the-owner-fingerprint";
  const secret = `planted-push-${randomBytes(6).toString("hex")}`;
  const [session, seq] = ["wp-sealed", 3];
  const seal = (field, text) => sealText(contentKey, owner, `${session}\n${seq}`, field, text);
  const opened = await post(w, task.credential, report({ session, seq, action: "open", kind: "dialog",
    sealed: { words: await seal("question", JSON.stringify({ text: `Rotate ${secret}?` })), same: "a".repeat(64),
      summary: await seal("summary", `Rotate ${secret}?`) } }));
  assert.equal(opened.status, 200, opened.text);
  assert.ok(await settled(sub, 1), "the open push arrived");
  const { message, problems } = sub.received[0];
  assert.deepEqual(problems, []);
  assert.ok(!JSON.stringify(message).includes(secret), JSON.stringify(message));
  assert.equal(message.body, `${task.name}: open needs-you to see it`);
  assert.deepEqual([message.task, message.session, message.open_seq], [task.name, session, seq]);
  assert.equal(await openText(contentKey, owner, `${message.session}\n${message.open_seq}`, "summary", message.sealed), `Rotate ${secret}?`);
});
