// A server that cannot act: the real Claude Code, started by `needs-you run`
// on a machine logged in with the line `needs-you pair` printed (which pins
// the owner's key), against the Worker in Miniflare. The server is played as
// an attacker would: an allow with the owner's bearer token alone, one
// signed by another key, one whose signature is garbled, one signed for
// another question, a row written straight into D1, the exact replay of a
// signed allow on an identical second request, and a phone's signed allow
// after the owner revoked it. The real waiting hook takes none of them and
// the command never runs. Taken: `needs-you answer --allow` with the owner's
// login, an allow signed by Node's own WebCrypto with the owner's key (an
// independent implementation of the signature), and the page in Chromium,
// paired through the link `needs-you pair` shows, allowing from its card,
// which it builds from the request (card.wasm): words the server wrote over
// the request are not shown, and a request swapped under the real digest is
// signed as what it is, and refused.
//
//   node --test tests/live/signed.test.js   (after: bash scripts/setup-live.sh)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, webcrypto } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ADMIN, call, ROOT, sleep, waitFor } from "../worker/helpers.js";
import { startAnthropicMock } from "./mock-anthropic.js";
import { CLAUDE, has } from "./clis.js";
import { needsYou, startLive } from "./harness.js";
import { claudeEnv, startClaude } from "./claude.js";
import { launch, newPage } from "../page/browser.js";
import { b64url, importKey, seal } from "../support/signing.js";
import { requestDigest } from "../support/request.js";

const NEEDS_YOU = join(ROOT, "target", "release", "needs-you");
const REPORTER = join(ROOT, "target", "release", "report-prompt");
const skip = !has(CLAUDE) && `Claude Code is not installed (bash scripts/setup-live.sh)`;

let live, w, model, term, owner, machine, ownerToken, fingerprint, listUntil, browser;

/** Starts needs-you with `home`'s config: `first` resolves to its first
 *  line of output, `ended` to {code, stdout, stderr}. Never spawnSync: the
 *  Worker answers from this process. */
function startIn(configHome, args, extraEnv = {}) {
  const child = spawn(NEEDS_YOU, args, { env: { PATH: process.env.PATH, HOME: configHome, XDG_CONFIG_HOME: join(configHome, ".config"), ...extraEnv } });
  let stdout = "", stderr = "";
  let line;
  const first = new Promise((resolve) => (line = resolve));
  child.stdout.on("data", (d) => {
    stdout += d;
    if (stdout.includes("\n")) line(stdout.split("\n")[0]);
  });
  child.stderr.on("data", (d) => (stderr += d));
  const ended = new Promise((resolve) => child.on("exit", (code) => {
    line(stdout.split("\n")[0]);
    resolve({ code, stdout, stderr });
  }));
  return { first, ended };
}

const needsYouIn = (configHome, args, extraEnv) => startIn(configHome, args, extraEnv).ended;

/** What the owner would sign to allow `q` as the list shows it. */
function allowing(q, fields = {}) {
  return { v: 1, owner: fingerprint, id: b64url(webcrypto.getRandomValues(new Uint8Array(16))), question_id: q.question_id,
    session: q.session, open_seq: q.open_seq, digest: q.digest, answer: { decision: "allow" },
    expires_at: Date.now() + 5 * 60_000, ...fields };
}

const post = (q, body) => call(w, "POST", `/v1/questions/${q.question_id}/answers`, { token: ownerToken, body });
const row = (id) => w.db.prepare("SELECT state, reason_code, signed FROM answers WHERE id = ?").bind(id).first();

/** Waits until answer `id` has failed; its reason code. */
async function refusedWith(id) {
  const failed = await waitFor(async () => {
    const r = await row(id);
    return r?.state === "failed" && r;
  }, 10_000);
  assert.ok(failed, `never failed: ${JSON.stringify(await row(id))}`);
  return failed.reason_code;
}

before(async () => {
  if (skip) return;
  live = await startLive("signed", {});
  ({ w } = live);
  // The owner's own machine: `setup` makes the owner and its key.
  owner = join(live.home, "owner");
  mkdirSync(owner);
  const setup = await new Promise((resolve) => {
    const child = spawn(NEEDS_YOU, ["setup", w.url], { env: { PATH: process.env.PATH, HOME: owner, USER: "ana",
      XDG_CONFIG_HOME: join(owner, ".config"), NEEDS_YOU_ADMIN_TOKEN: ADMIN } });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => resolve({ code, err }));
  });
  assert.equal(setup.code, 0, setup.err);
  const login = JSON.parse(readFileSync(join(owner, ".config", "needs-you", "login.json"), "utf8"));
  ownerToken = login.token;
  fingerprint = login.owner;
  // What the machine seals, opened with the owner's content key as `setup` keeps it.
  const keysFile = join(owner, ".config", "needs-you", "content-key.json");
  ({ listUntil } = needsYou(w, ownerToken, { owner: fingerprint, keys: () => JSON.parse(readFileSync(keysFile, "utf8")).keys }));
  // The agent's machine logs in with the line `pair --json` prints first;
  // `pair` waits for it, and vouches for the keys it proved with the line's secret.
  const pairing = startIn(owner, ["pair", "--json"]);
  const line = JSON.parse(await pairing.first);
  assert.ok(line.url && line.login.includes(`--owner ${fingerprint}`), JSON.stringify(line));
  machine = join(live.home, "machine");
  mkdirSync(machine);
  // `NEEDS_YOU_CODE=CODE.SECRET needs-you login URL --owner FP`: the secret in the environment.
  const [assign, , ...args] = line.login.split(" ");
  const joined = await needsYouIn(machine, args, { NEEDS_YOU_CODE: assign.slice("NEEDS_YOU_CODE=".length) });
  assert.equal(joined.code, 0, joined.stderr);
  assert.match(joined.stdout, /take only answers signed by the owner key/);
  const paired = await pairing.ended;
  assert.equal(paired.code, 0, paired.stderr);
  assert.equal(JSON.parse(paired.stdout.split("\n")[1]).certified, true, paired.stdout);
  model = await startAnthropicMock();
  const vars = claudeEnv(live, model, { credential: "" }, REPORTER, { XDG_CONFIG_HOME: join(machine, ".config") });
  // `needs-you run` gives the agent these, from the machine's login.
  delete vars.NEEDS_YOU_TOKEN;
  delete vars.NEEDS_YOU_URL;
  delete vars.NEEDS_YOU_OWNER;
  term = await startClaude(`needs-you-live-signed-${process.pid}`, live.cwd, vars, `${NEEDS_YOU} run -- ${CLAUDE}`);
});

after(async () => {
  await browser?.close();
  term?.stop();
  await model?.stop();
  await live?.stop();
});

async function permission(file) {
  model.next({ tool: "Bash", input: { command: `touch ${file}`, description: "Make the file" } });
  model.next({ text: "Made the file." });
  await term.type("make the file");
  await term.waitFor(/Do you want to proceed/);
  const [q] = await listUntil((l) => l.length === 1 && l[0].answer_from_afar === "decision");
  assert.ok(q.open_seq > 0, JSON.stringify(q));
  return q;
}

test("a server that holds the owner's token, the database or the relay's socket cannot allow a command; the owner's signed allow runs it", { skip }, async () => {
  const file = join(live.cwd, "made");
  const q = await permission(file);
  const stranger = await importKey(b64url(webcrypto.getRandomValues(new Uint8Array(32))));

  // The bearer token alone: no statement.
  const bare = await post(q, { decision: "allow", digest: q.digest });
  assert.equal(bare.status, 201, bare.text);
  assert.equal(await refusedWith(bare.body.answer_id), "bad_signature");
  // A key the machine does not know, signing the owner's very statement.
  const other = await post(q, { decision: "allow", digest: q.digest, signed: await seal(stranger, allowing(q)) });
  assert.equal(await refusedWith(other.body.answer_id), "unknown_device");
  // The owner's public key named, the signature made up.
  const ownerKey = JSON.parse(readFileSync(join(owner, ".config", "needs-you", "owner-key.json"), "utf8"));
  const signer = await importKey(ownerKey.secret);
  const garbled = await seal(signer, allowing(q));
  garbled.signature = b64url(Buffer.from(garbled.signature, "base64url").map((b, i) => (i === 5 ? b ^ 1 : b)));
  const g = await post(q, { decision: "allow", digest: q.digest, signed: garbled });
  assert.equal(await refusedWith(g.body.answer_id), "bad_signature");
  // Signed by the owner, for an earlier open of the session.
  const stale = await post(q, { decision: "allow", digest: q.digest, signed: await seal(signer, allowing(q, { open_seq: q.open_seq - 1 })) });
  assert.equal(await refusedWith(stale.body.answer_id), "not_this_request");
  // A device paired through the API with the owner's token, holding its own
  // key and a certificate it made itself, which the server keeps for it.
  const code = (await call(w, "POST", "/v1/pairings", { token: ownerToken, body: { rights: ["answer"] } })).body;
  const made = await importKey(b64url(webcrypto.getRandomValues(new Uint8Array(32))));
  const dev = await call(w, "POST", "/v1/devices", { body: { code: code.code, name: "not a phone",
    key: b64url(made.pub), seal_key: b64url(made.pub), proof: b64url(webcrypto.getRandomValues(new Uint8Array(32))) } });
  assert.equal(dev.status, 201, dev.text);
  const cert = await seal(made, { v: 1, owner: fingerprint, device_id: dev.body.device_id, key: b64url(made.pub),
    rights: ["answer"], expires_at: Date.now() + 86_400_000 });
  assert.equal((await call(w, "PUT", `/v1/devices/${dev.body.device_id}/certificate`, { token: ownerToken, body: { certificate: cert } })).status, 200);
  const byDevice = { ...(await seal(made, allowing(q))), certificate: cert };
  const devAllow = await call(w, "POST", `/v1/questions/${q.question_id}/answers`, { token: dev.body.token,
    body: { decision: "allow", digest: q.digest, signed: byDevice } });
  assert.equal(devAllow.status, 201, devAllow.text);
  assert.equal(await refusedWith(devAllow.body.answer_id), "unknown_device");
  // An answer row written straight into D1, and handed to the relay.
  const now = Date.now();
  await w.db.prepare(`INSERT INTO answers (id, question_id, task_id, owner_id, text, state, created_at, updated_at, form, body, digest, open_seq)
    VALUES ('ans_written', ?, ?, (SELECT owner_id FROM questions WHERE id = ?), 'allow', 'queued', ?, ?, 'decision', '{"decision":"allow"}', ?, ?)`)
    .bind(q.question_id, q.task_id, q.question_id, now, now, q.digest, q.open_seq).run();
  const relay = await w.mf.getDurableObjectNamespace("RELAY");
  await relay.get(relay.idFromName(q.task_id)).fetch("https://relay/", { method: "POST", body: JSON.stringify({ deliver: { task_id: q.task_id, answer_id: "ans_written" } }) });
  assert.equal(await refusedWith("ans_written"), "bad_signature");

  await sleep(500);
  assert.equal(existsSync(file), false, "nothing the server made up ran the command");
  assert.match(term.screen(), /Do you want to proceed/, "the dialog still waits");

  // A server that shows other words over the real request gets no answer
  // from the owner's command line, which builds the card from the request.
  const count = async () => (await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ?").bind(q.question_id).first()).n;
  const before = await count();
  // Its words are sealed on the machine: a server shows others only by
  // listing it in the clear, with words of its own over the real request.
  assert.equal(q.sealed, true);
  const sealedWords = (await w.db.prepare("SELECT sealed FROM questions WHERE id = ?").bind(q.question_id).first()).sealed;
  await w.db.prepare("UPDATE questions SET sealed = NULL, text = ?, request = ? WHERE id = ?")
    .bind("Make the file\n$ npm test", JSON.stringify(q.request), q.question_id).run();
  const lied = await needsYouIn(owner, ["answer", q.question_id, "--allow"]);
  assert.equal(lied.code, 1, lied.stdout);
  assert.match(lied.stderr, /^needs-you: the card the server shows is not what the agent's request asks, so nothing was answered; the request asks: Make the file \$ touch /);
  assert.equal(lied.stderr.trim().split("\n").length, 1);
  assert.equal(await count(), before, "nothing was sent");
  // `ls` shows the card built from the request, not the words written over it.
  const listed = JSON.parse((await needsYouIn(owner, ["ls", "--json"])).stdout).questions.find((l) => l.question_id === q.question_id);
  assert.match(listed.text, new RegExp(`\\$ touch ${file}`));
  assert.doesNotMatch(listed.text, /npm test/);
  // One that serves another request, words and digest to match: the owner
  // signs that request's digest, and the machine, which reported another, takes nothing.
  const harmless = { tool: "Bash", input: { command: "npm test", description: "Make the file" } };
  const kept = (await w.db.prepare("SELECT request FROM questions WHERE id = ?").bind(q.question_id).first()).request;
  await w.db.prepare("UPDATE questions SET request = ?, digest = ? WHERE id = ?")
    .bind(JSON.stringify(harmless), requestDigest(harmless.tool, harmless.input), q.question_id).run();
  assert.ok(kept, "the request is kept with its question");
  const swap = await needsYouIn(owner, ["answer", q.question_id, "--allow"]);
  assert.equal(swap.code, 1, swap.stdout);
  const swapped = await w.db.prepare("SELECT reason_code FROM answers WHERE question_id = ? ORDER BY created_at DESC").bind(q.question_id).first();
  assert.equal(swapped.reason_code, "not_this_request");
  assert.equal(existsSync(file), false, "the command the dialog shows did not run");
  // Back as its machine sealed it.
  await w.db.prepare("UPDATE questions SET sealed = ?, text = '', request = NULL, digest = ? WHERE id = ?")
    .bind(sealedWords, q.digest, q.question_id).run();

  // The owner's command line signs, and the machine takes it.
  const answered = await needsYouIn(owner, ["answer", q.question_id, "--allow"]);
  assert.equal(answered.code, 0, answered.stderr);
  assert.ok(answered.stdout.startsWith(`allow: Make the file $ touch ${file}\n`), answered.stdout);
  assert.match(answered.stdout, /The agent took it/);
  assert.ok(await waitFor(() => existsSync(file), 10_000), "the command ran");
  await term.waitFor(/Made the file/);
  await listUntil((l) => l.length === 0);
});

test("the exact replay of a signed allow on an identical second request is refused; an allow signed by WebCrypto with the owner's key is taken", { skip }, async () => {
  const first = await w.db.prepare("SELECT signed FROM answers WHERE state = 'taken' ORDER BY created_at DESC").first();
  assert.ok(first?.signed, "the taken allow kept its envelope");
  const file = join(live.cwd, "made");
  rmSync(file);
  const q = await permission(file);
  const replay = await post(q, { decision: "allow", digest: q.digest, signed: JSON.parse(first.signed) });
  assert.equal(replay.status, 201, replay.text);
  assert.equal(await refusedWith(replay.body.answer_id), "not_this_request");
  await sleep(500);
  assert.equal(existsSync(file), false, "the replay ran nothing");

  const ownerKey = JSON.parse(readFileSync(join(owner, ".config", "needs-you", "owner-key.json"), "utf8"));
  const signed = await seal(await importKey(ownerKey.secret), allowing(q));
  const ok = await post(q, { decision: "allow", digest: q.digest, signed });
  assert.equal(ok.status, 201, ok.text);
  assert.ok(await waitFor(() => existsSync(file), 10_000), `the command ran: ${JSON.stringify(await row(ok.body.answer_id))}`);
  assert.ok(await waitFor(async () => (await row(ok.body.answer_id)).state === "taken", 5000));
  await term.waitFor(/Made the file/);
  await listUntil((l) => l.length === 0);
});

test("the page, paired through the link `needs-you pair` shows, allows from its card and the command runs; it takes its certificate as the owner's command line renews it; once the owner revokes it, its signed allow is refused", { skip }, async () => {
  browser = await launch();
  const { page } = await newPage(browser);
  const pairing = startIn(owner, ["pair", "--json", "--rights", "answer"]);
  const { url } = JSON.parse(await pairing.first);
  assert.match(url, new RegExp(`/pair#[0-9A-Z]{4}-[0-9A-Z]{4}\\.[A-Za-z0-9_-]{22}\\.${fingerprint}$`));
  await page.goto(url);
  await page.locator("#pair-ask-yes").click();
  const paired = await pairing.ended;
  assert.equal(paired.code, 0, paired.stderr);
  const phone = JSON.parse(paired.stdout.split("\n")[1]);
  assert.equal(phone.certified, true, paired.stdout);
  await page.locator("#status", { hasText: "your machines take the answers this browser signs" }).waitFor();

  const file = join(live.cwd, "made");
  rmSync(file, { force: true });
  const q = await permission(file);
  const card = page.locator(`#question-${q.question_id}`);

  // A server that serves a harmless request and its card, but lists the
  // real request's digest: the page shows and signs the request it built
  // the card from, never the digest it was handed, so the real command,
  // which an allow over the listed digest would run, does not.
  // Its words sealed, the server serves its own by listing it in the clear.
  assert.equal(q.sealed, true);
  const kept = await w.db.prepare("SELECT sealed FROM questions WHERE id = ?").bind(q.question_id).first();
  const harmless = { tool: "Bash", input: { command: "npm test", description: "Make the file" } };
  await w.db.prepare("UPDATE questions SET sealed = NULL, text = ?, request = ? WHERE id = ?")
    .bind("Make the file\n$ npm test", JSON.stringify(harmless), q.question_id).run();
  await page.reload();
  await card.locator(".text", { hasText: "$ npm test" }).waitFor();
  await card.locator(".allow").click();
  const posted = page.waitForResponse((r) => r.url().endsWith(`/v1/questions/${q.question_id}/answers`) && r.request().method() === "POST");
  await card.locator(".confirm-yes").click();
  // The Worker's own check turns the page's answer away (a server that
  // passed it on would meet the machine's); the page signed no real digest.
  const turned = await posted;
  assert.equal(turned.status(), 409);
  assert.equal((await turned.json()).error, "changed", "not the digest the Worker holds");
  await sleep(500);
  assert.equal(existsSync(file), false, "the command the server hid did not run");

  // Words written beside the sealed ones: the page shows what its machine sealed.
  await w.db.prepare("UPDATE questions SET sealed = ?, text = ?, request = NULL WHERE id = ?")
    .bind(kept.sealed, "Make the file\n$ npm test", q.question_id).run();
  await page.reload();
  await card.locator(".text", { hasText: `$ touch ${file}` }).waitFor();
  assert.doesNotMatch(await card.locator(".text").textContent(), /npm test/);
  await card.locator(".allow").click();
  await card.locator(".confirm-yes").click();
  assert.ok(await waitFor(() => existsSync(file), 10_000), "the command ran");
  const taken = await w.db.prepare("SELECT state, signed FROM answers WHERE question_id = ? ORDER BY created_at DESC").bind(q.question_id).first();
  assert.equal(taken.state, "taken");
  assert.ok(JSON.parse(taken.signed).certificate, "signed by the phone's own key, with its certificate");
  await term.waitFor(/Made the file/);
  await listUntil((l) => l.length === 0);

  // Its certificate near its end: the owner's command line signs it anew as
  // it runs, and the page takes the new one when it is next opened.
  const ownerKey = JSON.parse(readFileSync(join(owner, ".config", "needs-you", "owner-key.json"), "utf8"));
  const held = async () => JSON.parse((await w.db.prepare("SELECT certificate FROM devices WHERE id = ?").bind(phone.paired).first()).certificate);
  const cert = JSON.parse(Buffer.from((await held()).statement, "base64url"));
  const ending = await seal(await importKey(ownerKey.secret), { ...cert, expires_at: Date.now() + 86_400_000 });
  await w.db.prepare("UPDATE devices SET certificate = ? WHERE id = ?").bind(JSON.stringify(ending), phone.paired).run();
  rmSync(join(owner, ".config", "needs-you", "certificates-checked"), { force: true });
  const ls = await needsYouIn(owner, ["ls"]);
  assert.match(ls.stderr, /signed anew, for 30 days, the certificate of /);
  const renewed = await held();
  assert.notEqual(renewed.statement, ending.statement);
  await page.reload();
  const pageHolds = () => page.evaluate(async () => (await (await import("/keys.js")).kept()).certificate.statement);
  assert.equal(await waitFor(async () => (await pageHolds()) === renewed.statement, 10_000), true, "the page took the renewed certificate");

  // The phone signs an allow of the next request; then the owner revokes it.
  // A server that kept the phone's allow hands it on anyway: refused.
  rmSync(file);
  const next = await permission(file);
  await card.waitFor({ state: "detached" });
  const signed = await page.evaluate(async (q) => (await import("/keys.js")).signAnswer(q, { decision: "allow" }), next);
  assert.deepEqual(signed?.certificate, renewed);
  const revoked = await needsYouIn(owner, ["devices", "revoke", phone.paired]);
  assert.equal(revoked.code, 0, revoked.stderr);
  const r = await post(next, { decision: "allow", digest: next.digest, signed });
  assert.equal(r.status, 201, r.text);
  assert.equal(await refusedWith(r.body.answer_id), "revoked_device");
  await sleep(500);
  assert.equal(existsSync(file), false, "the revoked phone's allow ran nothing");

  // A server that withholds the revocation: it serves the list from before
  // it to a machine that never saw the newer one (its kept list gone), and
  // that list is past its life: the revoked phone's allow is refused all
  // the same, with its own code.
  const phoneKey = JSON.parse(Buffer.from(signed.certificate.statement, "base64url")).key;
  const listBefore = { v: 1, owner: fingerprint, version: 1, devices: [createHash("sha256").update(Buffer.from(phoneKey, "base64url")).digest("base64url")], expires_at: Date.now() - 1 };
  const stale = await seal(await importKey(ownerKey.secret), listBefore);
  await w.db.prepare("UPDATE owners SET device_list = ? WHERE id = (SELECT owner_id FROM questions WHERE id = ?)").bind(JSON.stringify(stale), next.question_id).run();
  const keptLists = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? keptLists(join(dir, e.name)) : e.name.startsWith("device-list-") && dir.includes("state") ? [join(dir, e.name)] : []);
  const forgotten = keptLists(live.home);
  assert.ok(forgotten.length > 0, "the relay kept the newer list");
  forgotten.forEach((f) => rmSync(f));
  const withheld = await post(next, { decision: "allow", digest: next.digest, signed });
  assert.equal(withheld.status, 201, withheld.text);
  assert.equal(await refusedWith(withheld.body.answer_id), "stale_device_list");
  await sleep(500);
  assert.equal(existsSync(file), false, "the revoked phone's allow ran nothing under the withheld list");
  const ok = await needsYouIn(owner, ["answer", next.question_id, "--allow"]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(await waitFor(() => existsSync(file), 10_000));
  await term.waitFor(/Made the file/);
  await listUntil((l) => l.length === 0);
});
