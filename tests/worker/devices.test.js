// Pairing devices, device credentials, and dismissing a question: the routes
// the "Needs you" page and the command line stand on (docs/api.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN, call, count, newOwner, newTask, post, report, sleep, waitFor, withWorkerAndSink } from "./helpers.js";

let w, sink;
// Codes live 2 s here, so that one can expire within a test.
withWorkerAndSink({ PAIRING_TTL_S: "2", NOTIFY_DELAY_MS: "300", NOTIFY_RETRY_MS: "300" }, (ww, ss) => ([w, sink] = [ww, ss]));

async function pairing(token) {
  const r = await call(w, "POST", "/v1/pairings", { token });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function redeem(code, name = "phone") {
  return call(w, "POST", "/v1/devices", { body: { code, name } });
}

test("an owner pairs a device with a one-time code; the device reads the owner's list and tasks", async () => {
  const ana = await newOwner(w);
  const p = await pairing(ana.token);
  assert.match(p.code, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
  assert.equal(p.url, `http://localhost/pair#${p.code}`);
  assert.ok(p.expires_at > Date.now() && p.expires_at <= Date.now() + 2000);

  const d = await redeem(p.code.toLowerCase().replace("-", " "));
  assert.equal(d.status, 201, d.text);
  assert.match(d.body.token, /^nyd_[0-9a-f]{64}$/);
  const stored = await w.db.prepare("SELECT token_hash FROM devices WHERE id = ?").bind(d.body.device_id).first();
  assert.notEqual(stored.token_hash, d.body.token, "stored hashed");

  const task = await newTask(w, ana.token);
  await post(w, task.credential, report({ session: "dv", action: "open", kind: "reply", text: "Go on?" }));
  const list = await call(w, "GET", "/v1/needs-you", { token: d.body.token });
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.questions.map((q) => q.text), ["Go on?"]);
  const tasks = await call(w, "GET", "/v1/tasks", { token: d.body.token });
  assert.deepEqual(tasks.body.tasks.map((t) => t.task_id), [task.task_id]);
  // A device creates and revokes tasks of its owner (the command line's `run`).
  const mine = await call(w, "POST", "/v1/tasks", { token: d.body.token, body: { name: "from the phone" } });
  assert.equal(mine.status, 201);
  assert.equal((await call(w, "DELETE", `/v1/tasks/${mine.body.task_id}`, { token: d.body.token })).status, 200);
});

test("a code works once, within its tries and its time; a refused one writes nothing", async () => {
  const ana = await newOwner(w);
  const devices = () => count(w, "devices", `owner_id = '${ana.owner_id}'`);

  const used = await pairing(ana.token);
  assert.equal((await redeem(used.code)).status, 201);
  const again = await redeem(used.code);
  assert.deepEqual([again.status, again.body.error], [400, "invalid_code"], "used");

  const tried = await pairing(ana.token);
  const [id, secret] = tried.code.split("-");
  const wrong = `${id}-${secret === "0000" ? "1111" : "0000"}`;
  for (let i = 0; i < 5; i++) assert.equal((await redeem(wrong)).status, 400);
  assert.equal((await redeem(tried.code)).status, 400, "no tries left, even for the right code");

  const late = await pairing(ana.token);
  await sleep(2100);
  assert.equal((await redeem(late.code)).status, 400, "expired");

  for (const code of ["", "ABCD", "not a code at all", 12345678]) {
    const r = await call(w, "POST", "/v1/devices", { body: { code, name: "x" } });
    assert.deepEqual([r.status, r.body.error], [400, "invalid_code"], JSON.stringify(code));
  }
  const noName = await call(w, "POST", "/v1/devices", { body: { code: (await pairing(ana.token)).code } });
  assert.equal(noName.status, 400);
  assert.equal(await devices(), 1, "only the one good redemption");
});

test("a device pairs another, sees and revokes only itself, and never manages channels", async () => {
  const ana = await newOwner(w);
  const laptop = (await redeem((await pairing(ana.token)).code, "laptop")).body;
  const phone = (await redeem((await pairing(laptop.token)).code, "phone")).body;
  assert.match(phone.token, /^nyd_/, "the laptop paired the phone");

  const seen = await call(w, "GET", "/v1/devices", { token: phone.token });
  assert.deepEqual(seen.body.devices.map((d) => d.name), ["phone"]);
  const all = await call(w, "GET", "/v1/devices", { token: ana.token });
  assert.deepEqual(all.body.devices.map((d) => d.name).sort(), ["laptop", "phone"]);

  assert.equal((await call(w, "DELETE", `/v1/devices/${laptop.device_id}`, { token: phone.token })).status, 404);
  assert.equal((await call(w, "GET", "/v1/channels", { token: phone.token })).status, 401);
  const put = await call(w, "PUT", "/v1/channels/webhook", { token: phone.token, body: { url: `${sink.url}/x`, secret: "0123456789abcdef" } });
  assert.equal(put.status, 401);
  assert.equal(await count(w, "channels", `owner_id = '${ana.owner_id}'`), 0);

  assert.equal((await call(w, "DELETE", `/v1/devices/${phone.device_id}`, { token: phone.token })).status, 200);
  assert.equal((await call(w, "GET", "/v1/needs-you", { token: phone.token })).status, 401, "revoked at once");
});

test("revocation by the owner works at once; another owner's device is a stranger", async () => {
  const ana = await newOwner(w);
  const bea = await newOwner(w);
  const phone = (await redeem((await pairing(ana.token)).code)).body;
  const beas = (await redeem((await pairing(bea.token)).code)).body;
  const task = await newTask(w, ana.token);
  const q = await post(w, task.credential, report({ session: "st", action: "open", kind: "reply", text: "Mine?" }));

  // Bea's device sees nothing of Ana's: her list, her tasks, her devices, her question.
  assert.deepEqual((await call(w, "GET", "/v1/needs-you", { token: beas.token })).body.questions, []);
  assert.deepEqual((await call(w, "GET", "/v1/tasks", { token: beas.token })).body.tasks, []);
  assert.equal((await call(w, "DELETE", `/v1/devices/${phone.device_id}`, { token: bea.token })).status, 404);
  assert.equal((await call(w, "DELETE", `/v1/tasks/${task.task_id}`, { token: beas.token })).status, 404);
  assert.equal((await call(w, "POST", `/v1/questions/${q.body.question_id}/dismiss`, { token: beas.token })).status, 404);

  // Other credentials are not persons.
  for (const token of [task.credential, ADMIN, "nyd_" + "0".repeat(64), undefined]) {
    assert.equal((await call(w, "POST", "/v1/pairings", { token })).status, 401, String(token));
    assert.equal((await call(w, "GET", "/v1/devices", { token })).status, 401, String(token));
  }

  assert.equal((await call(w, "DELETE", `/v1/devices/${phone.device_id}`, { token: ana.token })).status, 200);
  assert.equal((await call(w, "GET", "/v1/needs-you", { token: phone.token })).status, 401);
  assert.equal((await call(w, "DELETE", `/v1/devices/${phone.device_id}`, { token: ana.token })).status, 404, "once");
});

test("a code made by a device dies with it: revoking a stolen device also stops the codes it made", async () => {
  const ana = await newOwner(w);
  const stolen = (await redeem((await pairing(ana.token)).code)).body;
  const made = await pairing(stolen.token);
  const fromOwner = await pairing(ana.token);
  assert.equal((await call(w, "DELETE", `/v1/devices/${stolen.device_id}`, { token: ana.token })).status, 200);
  const devices = await count(w, "devices", `owner_id = '${ana.owner_id}'`);
  const refused = await redeem(made.code, "thief");
  assert.equal(refused.status, 400, refused.text);
  assert.equal(await count(w, "devices", `owner_id = '${ana.owner_id}'`), devices, "no device made");
  assert.equal((await redeem(fromOwner.code)).status, 201, "the owner's own codes still work");
});

test("dismissing closes the question as not needed, tells its channels, and only once", async () => {
  const ana = await newOwner(w);
  await call(w, "PUT", "/v1/channels/webhook", { token: ana.token, body: { url: `${sink.url}/dismiss`, secret: "0123456789abcdef" } });
  const phone = (await redeem((await pairing(ana.token)).code)).body;
  const task = await newTask(w, ana.token);
  const r = await post(w, task.credential, report({ session: "ds", action: "open", kind: "dialog", text: "Stale?" }));
  const qid = r.body.question_id;
  const mine = () => sink.received.filter((g) => g.body.includes(qid)).map((g) => JSON.parse(g.body));
  await waitFor(() => mine().length === 1, 5000); // notified

  const d = await call(w, "POST", `/v1/questions/${qid}/dismiss`, { token: phone.token });
  assert.deepEqual([d.status, d.body.closed], [200, true]);
  assert.deepEqual((await call(w, "GET", "/v1/needs-you", { token: ana.token })).body.questions, []);
  await waitFor(() => mine().length === 2, 5000);
  assert.deepEqual(mine().map((e) => [e.event, e.question.close_reason]), [["question.open", null], ["question.closed", "dismissed"]]);

  const again = await call(w, "POST", `/v1/questions/${qid}/dismiss`, { token: ana.token });
  assert.deepEqual([again.status, again.body.error], [409, "closed"]);
  assert.equal((await call(w, "POST", "/v1/questions/q_nope/dismiss", { token: ana.token })).status, 404);
  assert.equal((await call(w, "GET", `/v1/questions/${qid}/dismiss`, { token: ana.token })).status, 405);
});

test("a device's seal key and the content key wrapped to it: kept as sent, handed to that device only, written by its owner only, in form", async () => {
  const ana = await newOwner(w);
  const ben = await newOwner(w);
  const p = await pairing(ana.token);
  const [key, sealKey, proof] = ["B" + "k".repeat(86), "B" + "s".repeat(86), "p".repeat(43)];
  const d = await call(w, "POST", "/v1/devices", { body: { code: p.code, name: "phone", key, seal_key: sealKey, proof } });
  assert.equal(d.status, 201, d.text);
  const state = await call(w, "GET", `/v1/pairings/${p.pairing_id}`, { token: ana.token });
  assert.deepEqual([state.body.device.key, state.body.device.seal_key, state.body.device.proof], [key, sealKey, proof]);

  const id = d.body.device_id;
  const cert = { statement: "c3RhdGVtZW50", signature: "c2ln", key: "a2V5" };
  const wrapped = ["w1.1.BAAA.bm9uY2Vub25jZTE.Y2lwaGVy", "w1.2.BAAB.bm9uY2Vub25jZTI.Y2lwaGVy"];
  const put = (token, body) => call(w, "PUT", `/v1/devices/${id}/certificate`, { token, body });
  const keysIn = async () => (await w.db.prepare("SELECT content_keys FROM devices WHERE id = ?").bind(id).first()).content_keys;
  for (const bad of [["plain words"], [wrapped[0], wrapped[0]], "w1.1.a.b.c", [`w1.1.${"A".repeat(300)}.bm9uY2U.Y2lw`], ["s1.1.bm9uY2U.Y2lwaGVy"]]) {
    const r = await put(ana.token, { certificate: cert, content_keys: bad });
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.match(r.body.message, /^`content_keys` is a list of at most 256 wrapped keys/);
  }
  assert.equal(await keysIn(), null, "a refused one wrote nothing");
  assert.equal((await put(d.body.token, { certificate: cert, content_keys: wrapped })).status, 401, "the device itself may not: only the owner's token writes it");
  assert.equal((await put(ben.token, { certificate: cert, content_keys: wrapped })).status, 404, "another owner's device is a stranger");
  assert.equal((await put(ana.token, { certificate: cert, content_keys: wrapped })).status, 200);
  // A certificate renewed without keys keeps the ones given.
  assert.equal((await put(ana.token, { certificate: cert })).status, 200);
  assert.deepEqual(JSON.parse(await keysIn()), wrapped);

  const mine = await call(w, "GET", "/v1/devices", { token: d.body.token });
  assert.deepEqual([mine.body.devices[0].seal_key, mine.body.devices[0].content_keys], [sealKey, wrapped]);
  const other = await call(w, "GET", "/v1/devices", { token: ben.token });
  assert.equal(JSON.stringify(other.body).includes("w1."), false);
  // The owner's own listing names the device's seal key, not what only it can open.
  const owners = await call(w, "GET", "/v1/devices", { token: ana.token });
  assert.equal(owners.body.devices.find((x) => x.device_id === id).seal_key, sealKey);
  assert.equal(JSON.stringify(owners.body).includes("w1."), false);

  // A page or command line from before seal keys is told to upgrade, and
  // the code stays unused.
  const q = await pairing(ana.token);
  const old = await call(w, "POST", "/v1/devices", { body: { code: q.code, name: "old page", key, proof } });
  assert.equal(old.status, 400);
  assert.deepEqual(old.body.error, "upgrade");
  assert.equal((await call(w, "POST", "/v1/devices", { body: { code: q.code, name: "new page", key, seal_key: sealKey, proof } })).status, 201);
});
