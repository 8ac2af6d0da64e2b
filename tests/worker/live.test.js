// The live list (docs/api.md, "The live list"): a ticket from an
// authenticated request opens one socket, which gets the whole list and then
// every change to it, at once; it hears its own owner only, with the rights
// of the credential that asked; a revoked device's socket closes; presence
// rides on it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN, call, deployedRates, inOneRateWindow, newOwner, newTask, post, report, sleep, startSink, startWorker, waitFor } from "./helpers.js";

let w, sink;
before(async () => {
  w = await startWorker({ NOTIFY_DELAY_MS: "300" });
  sink = await startSink();
});
after(async () => {
  await w?.stop();
  await sink?.stop();
});

async function ticket(token) {
  const r = await call(w, "POST", "/v1/live", { token });
  assert.equal(r.status, 200, r.text);
  assert.match(r.body.ticket, /^[0-9a-f]{64}\.lt_/);
  return r.body.ticket;
}

/** A socket on the live list; `got` collects its frames, `closed` its close code. */
async function live(token) {
  const t = await ticket(token);
  const resp = await w.mf.dispatchFetch(`${w.url}/v1/live?ticket=${encodeURIComponent(t)}`, { headers: { upgrade: "websocket" } });
  assert.equal(resp.status, 101);
  const ws = resp.webSocket;
  const s = { ws, got: [], closed: null, ticket: t };
  ws.addEventListener("message", (e) => s.got.push(JSON.parse(e.data)));
  ws.addEventListener("close", (e) => { s.closed = e.code; });
  ws.accept();
  assert.ok(await waitFor(() => s.got.length > 0, 5000), "the whole list comes first");
  return s;
}

async function paired(owner, rights) {
  const p = await call(w, "POST", "/v1/pairings", { token: owner.token, body: rights ? { rights } : {} });
  const d = await call(w, "POST", "/v1/devices", { body: { code: p.body.code, name: "phone" } });
  assert.equal(d.status, 201, d.text);
  return d.body;
}

const open = (task, session, text) =>
  post(w, task.credential, report({ session, action: "open", kind: "reply", text,
    terminal: { kind: "tmux", host: "build-box", cwd: "/w", pane: "%1" } }));

/** Says it was signed out, then hears nothing more, not even its owner's next change. */
async function signedOut(s, task) {
  assert.ok(await waitFor(() => s.got.at(-1).type === "signed_out", 5000), JSON.stringify(s.got.at(-1)));
  const heard = s.got.length;
  await open(task, "after", "Anyone there?");
  await sleep(500);
  assert.equal(s.got.length, heard, "a signed-out socket hears nothing");
}

test("a socket gets the list, then each change as it happens, with no read of the list", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const s = await live(owner.token);
  const [first] = s.got;
  assert.equal(first.type, "list");
  assert.deepEqual(first.list.questions, []);
  assert.deepEqual(first.list.tasks.map((t) => t.task_id), [task.task_id]);

  const r = await open(task, "s1", "Which database?");
  assert.equal(r.status, 200, r.text);
  assert.ok(await waitFor(() => s.got.length > 1, 5000), "the new question arrives");
  const change = s.got[1];
  assert.equal(change.type, "changes");
  assert.equal(change.from, first.revision, "it starts from the list the socket has");
  assert.ok(change.revision > first.revision);
  assert.deepEqual(change.questions.map((q) => [q.question_id, q.text]), [[r.body.question_id, "Which database?"]]);
  assert.equal(change.gone, undefined);

  await post(w, task.credential, report({ session: "s1", action: "close" }));
  assert.ok(await waitFor(() => s.got.length > 2, 5000), "its close arrives");
  const gone = s.got[2];
  assert.equal(gone.from, change.revision);
  assert.deepEqual(gone.gone, [r.body.question_id]);
  // What the list reads now is what the socket's changes made of it.
  const read = await call(w, "GET", "/v1/needs-you", { token: owner.token });
  assert.deepEqual(read.body.questions, []);
  assert.equal(read.headers.get("etag").match(/r(\d+)/)[1], String(gone.revision));
  s.ws.close();
});

test("an owner's socket never hears another owner's change", async () => {
  const ana = await newOwner(w, "Ana");
  const bea = await newOwner(w, "Bea");
  const beaTask = await newTask(w, bea.token);
  const anaTask = await newTask(w, ana.token);
  const s = await live(ana.token);
  await open(beaTask, "b", "Bea's secret question");
  await open(anaTask, "a", "Ana's question");
  assert.ok(await waitFor(() => s.got.length > 1, 5000));
  await sleep(300);
  const texts = s.got.flatMap((m) => (m.type === "list" ? m.list.questions : m.questions ?? [])).map((q) => q.text);
  assert.deepEqual(texts, ["Ana's question"]);
  assert.ok(!JSON.stringify(s.got).includes(beaTask.task_id));
  s.ws.close();
});

test("a ticket opens one socket, once; a made-up, spent or missing one is refused with 401, and no upgrade with 426", async () => {
  const owner = await newOwner(w);
  const t = await ticket(owner.token);
  const upgrade = { headers: { upgrade: "websocket" } };
  const first = await w.mf.dispatchFetch(`${w.url}/v1/live?ticket=${encodeURIComponent(t)}`, upgrade);
  assert.equal(first.status, 101);
  first.webSocket.accept();
  const again = await call(w, "GET", `/v1/live?ticket=${encodeURIComponent(t)}`, upgrade);
  assert.deepEqual([again.status, again.body.error], [401, "unauthorized"]);
  const [object, secret] = t.split(".");
  for (const bad of [`${object}.lt_${"0".repeat(43)}`, secret, `${"f".repeat(64)}.${secret}`, "", "x.y"]) {
    const r = await call(w, "GET", `/v1/live?ticket=${encodeURIComponent(bad)}`, upgrade);
    assert.deepEqual([r.status, r.body.error], [401, "unauthorized"], bad);
  }
  const plain = await call(w, "GET", `/v1/live?ticket=${encodeURIComponent(await ticket(owner.token))}`);
  assert.deepEqual([plain.status, plain.body.error], [426, "upgrade_required"]);
  const none = await call(w, "POST", "/v1/live");
  assert.equal(none.status, 401);
  const task = await newTask(w, owner.token);
  // The relay's socket takes the same check.
  const relayPlain = await call(w, "GET", "/v1/relay", { token: task.credential });
  assert.deepEqual([relayPlain.status, relayPlain.body.error], [426, "upgrade_required"]);
  const byTask = await call(w, "POST", "/v1/live", { token: task.credential });
  assert.equal(byTask.status, 401, "a task credential reads no list");
  first.webSocket.close();
});

test("tickets that are never spent stop at a bound per credential (429)", async () => {
  const owner = await newOwner(w);
  let status;
  let n = 0;
  do {
    status = (await call(w, "POST", "/v1/live", { token: owner.token })).status;
    n++;
  } while (status === 200 && n < 100);
  assert.deepEqual([status, n], [429, 5]);
});

test("a device with no rights that asks for tickets as fast as it can keeps neither the owner nor another device from the live list", async () => {
  const owner = await newOwner(w);
  const greedy = await paired(owner, []);
  const phone = await paired(owner, ["answer"]);
  const statuses = await Promise.all(Array.from({ length: 60 }, () => call(w, "POST", "/v1/live", { token: greedy.token }).then((r) => r.status)));
  assert.equal(statuses.filter((s) => s === 200).length, 4, JSON.stringify(statuses));
  assert.ok(statuses.every((s) => s === 200 || s === 429), JSON.stringify(statuses));
  for (const token of [owner.token, phone.token]) {
    const s = await live(token);
    assert.equal(s.got[0].type, "list", JSON.stringify(s.got[0]));
    s.ws.close();
  }
});

test("tickets are asked for at the credential's rate (429 rate_limited), whether or not they are spent; another credential's go on", async () => {
  const { limit, period } = (await deployedRates()).TICKET_RATE;
  const limited = await startWorker({}, { rates: await deployedRates() });
  try {
    const call2 = (method, path, opts) => call(limited, method, path, opts);
    const owner = (await call2("POST", "/v1/owners", { token: ADMIN, body: { name: "Ana" } })).body;
    const p = await call2("POST", "/v1/pairings", { token: owner.token, body: { rights: [] } });
    const device = (await call2("POST", "/v1/devices", { body: { code: p.body.code, name: "greedy" } })).body;
    await inOneRateWindow(period, 15_000);
    // Each ticket spent at once: the bound on waiting ones never stops it.
    for (let i = 0; i < limit; i++) {
      const r = await call2("POST", "/v1/live", { token: device.token });
      assert.equal(r.status, 200, `ticket ${i}: ${r.text}`);
      const resp = await limited.mf.dispatchFetch(`${limited.url}/v1/live?ticket=${encodeURIComponent(r.body.ticket)}`, { headers: { upgrade: "websocket" } });
      assert.equal(resp.status, 101);
      resp.webSocket.accept();
      resp.webSocket.close();
    }
    const refused = await call2("POST", "/v1/live", { token: device.token });
    assert.deepEqual([refused.status, refused.body.error], [429, "rate_limited"], refused.text);
    assert.equal((await call2("POST", "/v1/live", { token: owner.token })).status, 200, "the owner's own token is not limited by the device's rate");
  } finally {
    await limited.stop();
  }
});

test("a device's socket has the device's rights: no Show terminal without that right", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token, { name: "screens", screen: true });
  const reader = await paired(owner, ["answer"]);
  const watcher = await paired(owner, ["answer", "screen"]);
  const [plain, screen] = [await live(reader.token), await live(watcher.token)];
  await open(task, "s", "Which one?");
  assert.ok(await waitFor(() => plain.got.length > 1 && screen.got.length > 1, 5000));
  assert.equal(plain.got[1].questions[0].screen, false);
  assert.equal(screen.got[1].questions[0].screen, true);
  plain.ws.close();
  screen.ws.close();
});

test("a revoked device's socket is told it is signed out and hears nothing more; the owner's goes on", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const device = await paired(owner);
  const [phone, laptop] = [await live(device.token), await live(owner.token)];
  const r = await call(w, "DELETE", `/v1/devices/${device.device_id}`, { token: owner.token });
  assert.equal(r.status, 200, r.text);
  await signedOut(phone, task);
  assert.ok(laptop.got.some((m) => m.questions?.[0]?.text === "Anyone there?"), "the owner's still hears");
  assert.ok(!laptop.got.some((m) => m.type === "signed_out"));
  laptop.ws.close();
});

test("rotating the owner token signs out the sockets it opened", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const s = await live(owner.token);
  const r = await call(w, "POST", "/v1/owners/me/token", { token: owner.token });
  assert.equal(r.status, 200, r.text);
  await signedOut(s, task);
  const again = await live(r.body.token);
  assert.equal(again.got[0].type, "list", "the new token's socket opens");
  again.ws.close();
});

test("presence rides on the socket: looking, not looking, and gone", async () => {
  const owner = await newOwner(w);
  const device = await paired(owner);
  const s = await live(device.token);
  const until = async () => (await w.db.prepare("SELECT looking_until AS u FROM devices WHERE id = ?").bind(device.device_id).first()).u;
  const start = Date.now();
  s.ws.send(JSON.stringify({ type: "looking", looking: true }));
  const u = await waitFor(until, 5000);
  assert.ok(u > start + 60_000 && u < Date.now() + 80_000, `looking until ${u - start} ms from now`);
  s.ws.send(JSON.stringify({ type: "looking", looking: false }));
  assert.ok(await waitFor(async () => (await until()) === null, 5000));
  s.ws.send(JSON.stringify({ type: "looking", looking: true }));
  assert.ok(await waitFor(until, 5000));
  s.ws.close();
  assert.ok(await waitFor(async () => (await until()) === null, 5000), "a closed socket is not looking");
});

test("a dismiss, a mute and a task's revocation reach the socket", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const s = await live(owner.token);
  const q = (await open(task, "s", "Go on?")).body.question_id;
  assert.ok(await waitFor(() => s.got.length === 2, 5000));
  await call(w, "POST", `/v1/questions/${q}/dismiss`, { token: owner.token });
  assert.ok(await waitFor(() => s.got.length === 3, 5000));
  assert.deepEqual(s.got[2].gone, [q]);
  await call(w, "PUT", `/v1/tasks/${task.task_id}/mute`, { token: owner.token, body: { for_s: 600 } });
  assert.ok(await waitFor(() => s.got.length === 4, 5000));
  assert.ok(s.got[3].tasks[0].muted_until > Date.now());
  await call(w, "DELETE", `/v1/tasks/${task.task_id}`, { token: owner.token });
  assert.ok(await waitFor(() => s.got.length === 5, 5000));
  assert.deepEqual(s.got[4].tasks, []);
  for (const [i, m] of s.got.entries()) if (i > 0) assert.equal(m.from, s.got[i - 1].revision, "no gap");
  s.ws.close();
});

test("a ring reaches the socket: the card says when it rang", async () => {
  const owner = await newOwner(w);
  const task = await newTask(w, owner.token);
  const hook = await call(w, "PUT", "/v1/channels/webhook", { token: owner.token, body: { url: `${sink.url}/hook`, secret: "0123456789abcdef" } });
  assert.equal(hook.status, 200, hook.text);
  const s = await live(owner.token);
  const q = (await post(w, task.credential, report({ session: "ring", action: "open", kind: "dialog", text: "Which?" }))).body.question_id;
  const rang = await waitFor(() => s.got.find((m) => m.questions?.some((x) => x.question_id === q && x.notified_at)), 8000);
  assert.ok(rang, JSON.stringify(s.got));
  assert.equal(rang.from, s.got[s.got.indexOf(rang) - 1].revision);
  s.ws.close();
});

test("a ticket asked for before its device was revoked opens nothing after", async () => {
  const owner = await newOwner(w);
  const device = await paired(owner);
  const t = await ticket(device.token);
  assert.equal((await call(w, "DELETE", `/v1/devices/${device.device_id}`, { token: owner.token })).status, 200);
  const r = await call(w, "GET", `/v1/live?ticket=${encodeURIComponent(t)}`, { headers: { upgrade: "websocket" } });
  assert.deepEqual([r.status, r.body.error], [401, "unauthorized"]);
  assert.equal((await call(w, "POST", "/v1/live", { token: device.token })).status, 401);
});

test("a socket that says more than a page does is closed at its credential's rate (1008), and what follows writes nothing", async () => {
  const { limit } = (await deployedRates()).LIVE_RATE;
  const limited = await startWorker({}, { rates: await deployedRates() });
  try {
    const call2 = (method, path, opts) => call(limited, method, path, opts);
    const owner = (await call2("POST", "/v1/owners", { token: ADMIN, body: { name: "Ana" } })).body;
    const p = await call2("POST", "/v1/pairings", { token: owner.token, body: {} });
    const device = (await call2("POST", "/v1/devices", { body: { code: p.body.code, name: "phone" } })).body;
    const open = async () => {
      const { ticket } = (await call2("POST", "/v1/live", { token: device.token })).body;
      const resp = await limited.mf.dispatchFetch(`${limited.url}/v1/live?ticket=${encodeURIComponent(ticket)}`, { headers: { upgrade: "websocket" } });
      const s = { ws: resp.webSocket, closed: null };
      s.ws.addEventListener("close", (e) => { s.closed = e.code; });
      s.ws.accept();
      return s;
    };
    const until = async () => (await limited.db.prepare("SELECT looking_until AS u FROM devices WHERE id = ?").bind(device.device_id).first()).u;
    const flood = await open();
    for (let i = 0; i < limit + 50 && flood.closed === null; i++) {
      try {
        flood.ws.send(JSON.stringify({ type: "looking", looking: i % 2 === 0 }));
      } catch {
        break;
      }
      if (i % 20 === 0) await sleep(0);
    }
    assert.equal(await waitFor(() => flood.closed, 10000), 1008);
    assert.ok(await waitFor(async () => (await until()) === null, 5000), "its close ends its presence");
    // A second socket of the device, within the minute: past the rate too,
    // so its presence is not written.
    const again = await open();
    again.ws.send(JSON.stringify({ type: "looking", looking: true }));
    assert.equal(await waitFor(() => again.closed, 5000), 1008);
    assert.equal(await until(), null);
  } finally {
    await limited.stop();
  }
});
