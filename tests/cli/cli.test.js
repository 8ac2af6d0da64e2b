// The `needs-you` command line, the real release binary, against the Worker
// in Miniflare (real D1): setup, login with pairing codes, `run` with a
// stand-in agent reporting through the real reporter, the listings and their
// `--json`, exit codes and signals passed through, `run --tmux` in a real
// tmux (detached, and attached at a terminal that `script` gives), channels and test-push to a real local sink, and every failure path.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createECDH, createHash, createHmac, webcrypto } from "node:crypto";
import { join } from "node:path";
import { ADMIN, ROOT, startSink, startWorker, waitFor, sleep } from "../worker/helpers.js";
import { lastingId, requestDigest, takesRequest } from "../support/request.js";
import { endProcessesWithin } from "../support/leftovers.js";
import { b64url, importKey, seal } from "../support/signing.js";
import { commitment, wrapKey } from "../support/sealing.js";

const BIN = join(ROOT, "target", "release", "needs-you");
const REPORTER = join(ROOT, "target", "release", "report-prompt");
const AGENT = join(ROOT, "tests", "cli", "agent.sh");

let w, sink, scratch;
before(async () => {
  w = await startWorker({ PAIRING_TTL_S: "2", NOTIFY_DELAY_MS: "60000" });
  sink = await startSink();
  scratch = mkdtempSync(join(tmpdir(), "needs-you-cli-"));
});
after(async () => {
  for (const dir of agentDirs) writeFileSync(join(dir, "go"), "");
  spawnSync("tmux", ["kill-server"], { env: tmuxEnv() });
  await w?.stop();
  await sink?.stop();
  // The reporter's detached senders, transcript watchers and relays are no
  // children of this process, and one may still be writing its state (a
  // watcher logs that its transcript went away): end them first.
  await endProcessesWithin(scratch);
  rmSync(scratch, { recursive: true, force: true });
});

let homes = 0;
/** A fresh home for one person's machine: its own config and state folders. */
function machine() {
  const home = join(scratch, `home-${++homes}`);
  return {
    home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      USER: "ana",
      XDG_CONFIG_HOME: join(home, ".config"),
      NEEDS_YOU_STATE_DIR: join(home, "state"),
      REPORTER,
      TMUX_TMPDIR: join(scratch, "tmux"),
    },
  };
}

function tmuxEnv() {
  return { PATH: process.env.PATH, TMUX_TMPDIR: join(scratch ?? tmpdir(), "tmux") };
}

/** Runs needs-you to the end: {code, signal, stdout, stderr}. Never
 *  spawnSync: the sink answers from this process, which must keep running. */
function cli(m, args, extraEnv = {}) {
  return start(m, args, extraEnv).ended;
}

/** Starts needs-you without waiting: the child process and a promise of its end. */
function start(m, args, extraEnv = {}) {
  const child = spawn(BIN, args, { env: { ...m.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const ended = new Promise((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, ended };
}

async function api(method, path, token, body) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const r = await fetch(w.url + path, { method, headers, body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
}

const oneLine = (s) => s.trim().split("\n").length === 1;

/** The HMAC-SHA256 of `text` under `secret` (base64url), base64url: a
 *  pairing's proof, made by Node's own crypto. */
function createHmacB64(secret, text) {
  return createHmac("sha256", Buffer.from(secret, "base64url")).update(text).digest("base64url");
}

/** `login` with a link from the owner's `pair`, pasted as the person would:
 *  its secret in NEEDS_YOU_CODE, never on the command line. */
function pasteLink(m, link, more = []) {
  return cli(m, ["login", w.url, ...more], { NEEDS_YOU_CODE: link });
}

/** A machine logged in as a new owner through `setup`. */
async function ownerMachine() {
  const m = machine();
  const r = (await cli(m, ["setup", w.url], { NEEDS_YOU_ADMIN_TOKEN: ADMIN }));
  assert.equal(r.code, 0, r.stderr);
  m.login = JSON.parse(readFileSync(join(m.home, ".config", "needs-you", "login.json"), "utf8"));
  return m;
}

/** A machine paired to `owner` through `login` with a pairing link. */
async function deviceMachine(owner) {
  const m = machine();
  const p = await api("POST", "/v1/pairings", owner.login.token);
  const r = (await cli(m, ["login", p.body.url]));
  assert.equal(r.code, 0, r.stderr);
  m.login = JSON.parse(readFileSync(join(m.home, ".config", "needs-you", "login.json"), "utf8"));
  m.rightsSaid = /may read the list, start and stop tasks; it may not answer or approve/.test(r.stdout);
  return m;
}

/** The stand-in agent's folder, with the reports it will make. */
/** Every stand-in agent's folder: a test that fails before it lets its agent
 *  go would otherwise leave it waiting, and this file's process with it. */
const agentDirs = [];

function agentDir(session = `s-${Math.random().toString(16).slice(2)}`) {
  const dir = mkdtempSync(join(scratch, "agent-"));
  agentDirs.push(dir);
  const transcript = join(dir, "transcript.jsonl");
  writeFileSync(transcript, "");
  writeFileSync(join(dir, "open.json"), JSON.stringify({
    session_id: session, transcript_path: transcript, cwd: dir, hook_event_name: "PreToolUse",
    tool_name: "AskUserQuestion",
    tool_input: { questions: [{ question: "Which region should I deploy to?", header: "Region",
      options: [{ label: "eu-west-1" }, { label: "us-east-1" }], multiSelect: false }] },
  }));
  return dir;
}

test("setup creates the owner from the admin token and keeps the login private", async () => {
  const m = await ownerMachine();
  assert.match(m.login.token, /^nyo_/);
  const file = join(m.home, ".config", "needs-you", "login.json");
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(join(m.home, ".config", "needs-you")).mode & 0o777, 0o700);
  const again = (await cli(m, ["setup", w.url], { NEEDS_YOU_ADMIN_TOKEN: ADMIN }));
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already logged in/);

  const wrong = machine();
  const r = (await cli(wrong, ["setup", w.url], { NEEDS_YOU_ADMIN_TOKEN: "not-the-admin-token" }));
  assert.equal(r.code, 3);
  assert.ok(oneLine(r.stderr), r.stderr);
  assert.ok(!existsSync(join(wrong.home, ".config", "needs-you", "login.json")));
});

test("login redeems a pairing link once; a used, wrong or expired code is refused and nothing is saved", async () => {
  const owner = await ownerMachine();
  const m = await deviceMachine(owner);
  assert.match(m.login.token, /^nyd_/);
  assert.match(m.login.device_id, /^dev_/);
  const devices = await api("GET", "/v1/devices", owner.login.token);
  assert.deepEqual(devices.body.devices.map((d) => d.name), [`needs-you on ${readFileSync("/proc/sys/kernel/hostname", "utf8").trim()}`]);

  const used = await api("POST", "/v1/pairings", owner.login.token);
  assert.equal((await cli(machine(), ["login", used.body.url])).code, 0);
  const expired = await api("POST", "/v1/pairings", owner.login.token);
  await sleep(2200);
  for (const link of [used.body.url, `${w.url}/pair#ZZZZ-ZZZZ`, expired.body.url]) {
    const n = machine();
    const r = (await cli(n, ["login", link]));
    assert.equal(r.code, 1, link);
    assert.match(r.stderr, /^needs-you: that pairing code is wrong, used, expired/);
    assert.ok(oneLine(r.stderr));
    assert.ok(!existsSync(join(n.home, ".config", "needs-you", "login.json")));
  }
  // A bare URL asks for the code on the terminal; without one, it says so.
  const r = (await cli(machine(), ["login", w.url]));
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no terminal to ask on/);
});

test("run: the agent gets the task's credential in its environment only, its question is listed, and its exit revokes the task", async () => {
  const owner = await ownerMachine();
  const m = await deviceMachine(owner);
  const dir = agentDir();
  const run = start(m, ["run", "--name", "deploy", "--", AGENT, dir, "7"]);
  assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000), "the agent reported");
  // NEEDS_YOU_REPORTER: the report-prompt beside needs-you, which our plugins' hooks run.
  assert.deepEqual(readFileSync(join(dir, "env-names"), "utf8").trim().split("\n"), ["NEEDS_YOU_REPORTER", "NEEDS_YOU_STATE_DIR", "NEEDS_YOU_TOKEN", "NEEDS_YOU_URL"]);
  assert.equal(readFileSync(join(dir, "reporter"), "utf8"), realpathSync(REPORTER));
  const listed = await waitFor(async () => {
    const r = (await cli(m, ["ls", "--json"]));
    const qs = JSON.parse(r.stdout).questions;
    return qs.length === 1 && qs[0];
  }, 10000);
  assert.equal(listed.task_name, "deploy");
  assert.equal(listed.text, "Which region should I deploy to?");
  const human = (await cli(m, ["ls"], { COLUMNS: "80" }));
  assert.match(human.stdout, /^AGE +TASK +AGENT +KIND +ANSWER +TEXT\n\S+ +deploy +Claude Code dialog +\S+ +Which region/);
  // Under it, the id that answer and dismiss take, and where the agent runs.
  const wide = (await cli(m, ["ls"], { COLUMNS: "300" })).stdout;
  assert.match(wide.split("\n")[2], new RegExp(`^ +${listed.question_id} · on \\S+ · ${dir}$`));
  const tasks = JSON.parse((await cli(m, ["tasks", "--json"])).stdout).tasks;
  assert.deepEqual(tasks.map((t) => [t.name, t.state]), [["deploy", "waiting"]]);
  // The credential is on no command line.
  const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
  assert.ok(!/nyt_[0-9a-f]{8}/.test(ps));

  writeFileSync(join(dir, "go"), "");
  const end = await run.ended;
  assert.equal(end.code, 7, end.stderr);
  assert.match(end.stderr, /not in tmux/);
  const q = await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(listed.question_id).first();
  assert.equal(q.close_reason, "session_end", "revoking the task closed its question");
  assert.deepEqual(JSON.parse((await cli(m, ["tasks", "--json"])).stdout).tasks, []);
});

test("run keeps our own secrets out of the agent's environment", async () => {
  const owner = await ownerMachine();
  const m = await deviceMachine(owner);
  const dir = agentDir();
  const secrets = { NEEDS_YOU_ADMIN_TOKEN: ADMIN, NEEDS_YOU_NTFY_TOKEN: "tk_x", NEEDS_YOU_WEBHOOK_SECRET: "0123456789abcdef" };
  const run = start(m, ["run", "--", AGENT, dir, "0"], secrets);
  assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000), "the agent reported");
  assert.deepEqual(readFileSync(join(dir, "env-names"), "utf8").trim().split("\n"), ["NEEDS_YOU_REPORTER", "NEEDS_YOU_STATE_DIR", "NEEDS_YOU_TOKEN", "NEEDS_YOU_URL"]);
  writeFileSync(join(dir, "go"), "");
  assert.equal((await run.ended).code, 0);
});

test("a login on an agent machine starts tasks but cannot answer; --allow answer can, and devices shows who may what", async () => {
  const owner = await ownerMachine();
  const agentBox = await deviceMachine(owner);
  assert.deepEqual(agentBox.rightsSaid, true);
  const t = (await api("POST", "/v1/tasks", owner.login.token, { name: "asks" })).body;
  const q = (await api("POST", "/v1/reports", t.credential, { action: "open", kind: "reply", cli: "codex", session: "s", seq: 1,
    text: "Go on?", terminal: { kind: "tmux", host: "h", cwd: "/" } })).body;
  const refused = await cli(agentBox, ["answer", q.question_id, "yes"]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /may not answer/);
  assert.ok(oneLine(refused.stderr));
  const dismissed = await cli(agentBox, ["dismiss", q.question_id]);
  assert.equal(dismissed.code, 1, "nor dismiss");

  const trusted = machine();
  const p = await api("POST", "/v1/pairings", owner.login.token);
  const login = await cli(trusted, ["login", p.body.url, "--allow", "answer"]);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, /may read the list, start and stop tasks, answer or approve/);
  // Logged in from a bare link, it holds no key the owner's vouched for:
  // it says so, and sends nothing every machine would refuse.
  const unvouched = await cli(trusted, ["answer", q.question_id, "yes"]);
  assert.equal(unvouched.code, 1, unvouched.stderr);
  assert.match(unvouched.stderr, /^needs-you: this command line holds no key your owner key vouched for/);
  assert.ok(oneLine(unvouched.stderr));
  // Logged in from the owner's `pair` link, it makes a key of its own
  // (0600), `pair` vouches for it, and its answer carries its certificate.
  const laptop = machine();
  const pairing = start(owner, ["pair", "--json", "--rights", "answer,tasks"]);
  const link = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  const joined = await pasteLink(laptop, link, ["--allow", "answer"]);
  assert.equal(joined.code, 0, joined.stderr);
  assert.match(joined.stdout, /take only answers signed by the owner key/);
  const done = await pairing.ended;
  assert.equal(JSON.parse(done.stdout.split("\n")[1]).certified, true, done.stdout);
  assert.equal(statSync(join(laptop.home, ".config", "needs-you", "device-key.json")).mode & 0o777, 0o600);
  // It holds the owner's content key too: what it writes goes sealed or
  // not at all, so a reply to a question in the clear is not sent; an
  // allow, which holds no words, is.
  // A server that withholds its wrapped key gains nothing: it writes under
  // the owner it pinned, so its reply goes sealed or not at all.
  const laptopId = JSON.parse(readFileSync(join(laptop.home, ".config", "needs-you", "login.json"), "utf8")).device_id;
  const wrapped = (await w.db.prepare("SELECT content_keys FROM devices WHERE id = ?").bind(laptopId).first()).content_keys;
  await w.db.prepare("UPDATE devices SET content_keys = '[]' WHERE id = ?").bind(laptopId).run();
  const inTheClear = await cli(laptop, ["answer", q.question_id, "yes"]);
  await w.db.prepare("UPDATE devices SET content_keys = ? WHERE id = ?").bind(wrapped, laptopId).run();
  assert.equal(inTheClear.code, 1, inTheClear.stderr);
  assert.match(inTheClear.stderr, /^needs-you: nothing was sent: this question is listed in the clear/);
  assert.ok(oneLine(inTheClear.stderr));
  assert.equal((await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ?").bind(q.question_id).first()).n, 0, "nothing sent");
  const input = { command: "make" };
  const perm = (await api("POST", "/v1/reports", t.credential, { action: "open", kind: "permission", cli: "claude-code", session: "s2", seq: 1,
    terminal: { kind: "tmux", host: "h", cwd: "/" }, ...takesRequest("decision", "Bash", input) })).body;
  const answered = await cli(laptop, ["answer", perm.question_id, "--allow", "--yes"]);
  assert.equal(answered.code, 0, answered.stderr);
  const row = await w.db.prepare("SELECT signed FROM answers WHERE question_id = ? ORDER BY created_at DESC").bind(perm.question_id).first();
  const signed = JSON.parse(row.signed);
  const said = JSON.parse(Buffer.from(signed.statement, "base64url"));
  assert.deepEqual([said.question_id, said.answer, said.digest, said.owner],
    [perm.question_id, { decision: "allow" }, requestDigest("Bash", input), owner.login.owner]);
  assert.equal(JSON.parse(Buffer.from(signed.certificate.statement, "base64url")).key, signed.key, "its certificate names its key");

  // Its seal key (0600) got the owner's content key, wrapped: the server
  // keeps the wrapped copy and the seal key's public half, never the key.
  const laptopDir = join(laptop.home, ".config", "needs-you");
  assert.equal(statSync(join(laptopDir, "seal-key.json")).mode & 0o777, 0o600);
  const ownersKeys = JSON.parse(readFileSync(join(owner.home, ".config", "needs-you", "content-key.json"), "utf8")).keys;
  assert.deepEqual(ownersKeys.map((k) => k.version), [1], "setup made version 1");
  const held = await w.db.prepare("SELECT * FROM devices WHERE id = (SELECT device_id FROM answers WHERE question_id = ? ORDER BY created_at DESC LIMIT 1)")
    .bind(perm.question_id).first();
  assert.match(JSON.parse(held.content_keys)[0], /^w1\.1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
  const rawKey = Buffer.from(ownersKeys[0].key, "base64url");
  for (const form of [rawKey.toString("base64url"), rawKey.toString("base64"), rawKey.toString("hex")]) {
    assert.equal(JSON.stringify(held).includes(form), false, "the content key is nowhere in the device's row");
  }
  const certified = JSON.parse(Buffer.from(JSON.parse(held.certificate).statement, "base64url"));
  assert.equal(certified.seal_key, held.seal_key, "its certificate names the seal key the content key went to");
  // A server that withholds its wrapped key from `run` gains nothing either:
  // the laptop pinned the owner and made a seal key at login, so it names
  // its task sealed or not at all, and its reporter keeps the agent's
  // question back rather than send it readable.
  await w.db.prepare("UPDATE devices SET content_keys = '[]' WHERE id = ?").bind(laptopId).run();
  const withheldDir = agentDir("s-withheld");
  const withheld = start(laptop, ["run", "--name", "withheld-name", "--", AGENT, withheldDir, "0"]);
  assert.ok(await waitFor(() => existsSync(join(withheldDir, "opened")), 10000), "the agent reported");
  const senderLog = join(laptop.home, "state", "report-prompt.log");
  assert.ok(await waitFor(() => existsSync(senderLog) && readFileSync(senderLog, "utf8").includes(
    "kept a report back: this machine's content key (NEEDS_YOU_CONTENT_KEYS) cannot be read"), 10000), "the report was kept back");
  assert.ok(readFileSync(join(withheldDir, "env-names"), "utf8").split("\n").includes("NEEDS_YOU_CONTENT_KEYS"));
  writeFileSync(join(withheldDir, "go"), "");
  const withheldEnd = await withheld.ended;
  // The reporter's doctor, as the agent sees it, says so too.
  const keptBack = await cli(laptop, ["run", "--", REPORTER, "doctor"]);
  assert.match(keptBack.stdout, /^FAIL {2}this machine's content key \(NEEDS_YOU_CONTENT_KEYS\) cannot be read, so questions are kept back rather than sent readable$/m);
  assert.equal(keptBack.code, 1, keptBack.stdout);
  await w.db.prepare("UPDATE devices SET content_keys = ? WHERE id = ?").bind(wrapped, laptopId).run();
  assert.equal(withheldEnd.code, 0, withheldEnd.stderr);
  assert.match(withheldEnd.stderr, /^needs-you: this machine holds no content key it can open, so its agent's questions are kept back rather than sent readable: log it in again with the line `needs-you pair` prints$/m);
  assert.equal((await w.db.prepare("SELECT COUNT(*) AS n FROM questions WHERE session = 's-withheld'").first()).n, 0, "nothing listed");
  const names = JSON.stringify((await w.db.prepare("SELECT * FROM tasks").all()).results);
  assert.ok(!names.includes("withheld-name"), "no task name in the clear");
  // `run` opens it and keeps it beside the login, the same key as the owner's.
  assert.equal(existsSync(join(laptopDir, "content-key.json")), false, "not before it is needed");
  const ran = await cli(laptop, ["run", "--", "true"]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.equal(statSync(join(laptopDir, "content-key.json")).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(readFileSync(join(laptopDir, "content-key.json"), "utf8")).keys, ownersKeys);
  const sealing = await cli(laptop, ["run", "--", REPORTER, "doctor"]);
  assert.match(sealing.stdout, /^ok {4}questions leave this machine sealed, under content key version 1$/m);

  // Revoking another device makes a new version for what comes after: the
  // laptop gets it (with the first) at its next run, the revoked one not.
  const phone = machine();
  const phonePairing = start(owner, ["pair", "--json", "--rights", "answer"]);
  const phoneLink = await new Promise((resolve) => phonePairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  assert.equal((await pasteLink(phone, phoneLink)).code, 0);
  const phonePaired = JSON.parse((await phonePairing.ended).stdout.split("\n")[1]);
  const revokedPhone = await cli(owner, ["devices", "revoke", phonePaired.paired]);
  assert.equal(revokedPhone.code, 0, revokedPhone.stderr);
  assert.match(revokedPhone.stdout, /What is sealed from now on is under version 2 of your content key, which 1 remaining device\(s\) got and the revoked one did not/);
  const rotated = JSON.parse(readFileSync(join(owner.home, ".config", "needs-you", "content-key.json"), "utf8")).keys;
  assert.deepEqual(rotated.map((k) => k.version), [1, 2]);
  // A device that never held the key (paired from a bare code) turns none.
  const bare = await api("POST", "/v1/pairings", owner.login.token);
  const keyless = await api("POST", "/v1/devices", null, { code: bare.body.code, name: "keyless" });
  const revokedKeyless = await cli(owner, ["devices", "revoke", keyless.body.device_id]);
  assert.equal(revokedKeyless.code, 0, revokedKeyless.stderr);
  assert.doesNotMatch(revokedKeyless.stdout, /content key/);
  assert.deepEqual(JSON.parse(readFileSync(join(owner.home, ".config", "needs-you", "content-key.json"), "utf8")).keys, rotated);
  assert.deepEqual(rotated[0], ownersKeys[0], "the first version stays, for what it sealed");
  const wrappedTo = async (id) => JSON.parse((await w.db.prepare("SELECT content_keys FROM devices WHERE id = ?").bind(id).first()).content_keys);
  assert.deepEqual((await wrappedTo(held.id)).map((t) => t.split(".")[1]), ["1", "2"]);
  assert.deepEqual((await wrappedTo(phonePaired.paired)).map((t) => t.split(".")[1]), ["1"], "the revoked phone got nothing new");
  // A server can wrap a key of its own to the laptop's public seal key, as a
  // newer version: it opens there, and is not taken, for the owner key did
  // not vouch for it in the laptop's certificate.
  const planted = { version: 3, key: Buffer.from(webcrypto.getRandomValues(new Uint8Array(32))).toString("base64url") };
  const plantedWrap = await wrapKey(planted, owner.login.owner, held.id, held.seal_key);
  await w.db.prepare("UPDATE devices SET content_keys = ? WHERE id = ?").bind(JSON.stringify([...(await wrappedTo(held.id)), plantedWrap]), held.id).run();
  assert.equal((await cli(laptop, ["run", "--", "true"])).code, 0);
  assert.deepEqual(JSON.parse(readFileSync(join(laptopDir, "content-key.json"), "utf8")).keys, rotated, "both versions, and not the planted one");
  // The same wrapping, once the owner key vouches for it in the laptop's
  // certificate (signed here with the owner's key, by Node), is taken: what
  // refused it was the owner key's word, not a wrapping that does not open.
  const ownerSigner = await importKey(JSON.parse(readFileSync(join(owner.home, ".config", "needs-you", "owner-key.json"), "utf8")).secret);
  const laptopCert = JSON.parse(Buffer.from(JSON.parse((await w.db.prepare("SELECT certificate FROM devices WHERE id = ?").bind(held.id).first()).certificate).statement, "base64url"));
  const vouchedToo = await seal(ownerSigner, { ...laptopCert, content_keys: [...laptopCert.content_keys, { version: 3, commitment: commitment(owner.login.owner, planted) }] });
  await w.db.prepare("UPDATE devices SET certificate = ? WHERE id = ?").bind(JSON.stringify(vouchedToo), held.id).run();
  assert.equal((await cli(laptop, ["run", "--", "true"])).code, 0);
  assert.deepEqual(JSON.parse(readFileSync(join(laptopDir, "content-key.json"), "utf8")).keys.map((k) => k.version), [1, 2, 3]);
  // Logging out takes its keys with it.
  assert.equal((await cli(laptop, ["logout"])).code, 0);
  for (const file of ["device-key.json", "seal-key.json", "content-key.json"]) {
    assert.equal(existsSync(join(laptopDir, file)), false, file);
  }

  const list = await cli(owner, ["devices"], { COLUMNS: "200" });
  assert.equal(list.code, 0, list.stderr);
  const rows = list.stdout.trim().split("\n");
  // The laptop logged itself out: the server forgets it, and the owner's
  // key, which only the owner's revoke strikes, still vouches for it.
  assert.match(rows[0], /^Your key still vouches for these, which the server does not list/);
  const laptopFp = createHash("sha256").update(Buffer.from(held.public_key, "base64url")).digest("base64url");
  assert.equal(rows[1], `  ${held.id} (key ${laptopFp.slice(0, 11)}…): needs-you devices revoke ${held.id}`);
  assert.match(rows[2], /^DEVICE +KEY +NAME +AGE +MAY +PAIRED BY$/);
  assert.ok(rows.some((r) => /read,tasks,answer +the owner$/.test(r)), list.stdout);
  assert.ok(rows.some((r) => / read,tasks +the owner$/.test(r)), list.stdout);
  const bad = await cli(owner, ["login", w.url, "--allow", "root"]);
  assert.equal(bad.code, 2);
});

test("a server that swaps a new device's seal key is caught: pair gives it no content key, revokes it and says why; a device from before seal keys is told to upgrade", async () => {
  const owner = await ownerMachine();
  const pairing = start(owner, ["pair", "--json", "--rights", "answer"]);
  const link = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  const [code, secret] = new URL(link).hash.slice(1).split(".");
  const p256 = () => { const e = createECDH("prime256v1"); e.generateKeys(); return b64url(e.getPublicKey()); };
  const [key, sealKey, serversSealKey] = [p256(), p256(), p256()];
  // The device proves its own seal key (and the rights it asks for: all, by
  // default); the server hands the pairer its own seal key.
  const proof = createHmacB64(secret, `needs-you pairing v2\n${key}\n${sealKey}\ntasks,answer,pair,screen`);
  const old = await api("POST", "/v1/devices", null, { code, name: "old page", key, proof });
  assert.equal(old.status, 400);
  assert.equal(old.body.error, "upgrade");
  assert.match(old.body.message, /older than its server: reload the page, or upgrade needs-you/);
  const dev = await api("POST", "/v1/devices", null, { code, name: "phone", key, seal_key: serversSealKey, proof });
  assert.equal(dev.status, 201, JSON.stringify(dev.body));
  const done = await pairing.ended;
  assert.equal(done.code, 1, done.stdout);
  assert.match(done.stderr, /^needs-you: the keys the server gave for "phone" are not the ones the device made: someone between them changed them/);
  const row = await w.db.prepare("SELECT revoked_at, certificate, content_keys FROM devices WHERE id = ?").bind(dev.body.device_id).first();
  assert.ok(row.revoked_at, "revoked");
  assert.deepEqual([row.certificate, row.content_keys], [null, null], "no certificate, no content key");
});

test("a server that files a new device under an earlier phone's id is caught: pair vouches for nothing, and revoking that phone strikes the phone's own key", async () => {
  const owner = await ownerMachine();
  const listed = async () => JSON.parse(Buffer.from(JSON.parse((await w.db.prepare("SELECT device_list FROM owners WHERE id = (SELECT owner_id FROM devices WHERE id = ?)")
    .bind(owner.phoneId).first()).device_list).statement, "base64url")).devices;
  // The phone P, paired for real: its key vouched for under its id.
  const phone = machine();
  const first = start(owner, ["pair", "--json", "--rights", "answer"]);
  const firstLink = await new Promise((resolve) => first.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  assert.equal((await pasteLink(phone, firstLink, ["--allow", "answer"])).code, 0);
  const paired = JSON.parse((await first.ended).stdout.split("\n")[1]);
  owner.phoneId = paired.paired;
  const { public_key: phoneKey } = await w.db.prepare("SELECT public_key FROM devices WHERE id = ?").bind(owner.phoneId).first();
  const phoneFp = createHash("sha256").update(Buffer.from(phoneKey, "base64url")).digest("base64url");
  assert.deepEqual(await listed(), [phoneFp]);
  // A second pairing, redeemed by a device N whose keys and proof hold;
  // the server says N is P: P's row carries N's keys for this pairing.
  const second = start(owner, ["pair", "--json", "--rights", "answer"]);
  const link = await new Promise((resolve) => second.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  const [, secret] = new URL(link).hash.slice(1).split(".");
  const pairingId = (await w.db.prepare("SELECT id FROM pairings ORDER BY created_at DESC LIMIT 1").first()).id;
  const p256 = () => { const e = createECDH("prime256v1"); e.generateKeys(); return b64url(e.getPublicKey()); };
  const [key, sealKey] = [p256(), p256()];
  const proof = createHmacB64(secret, `needs-you pairing v2\n${key}\n${sealKey}\ntasks,answer`);
  await w.db.prepare("UPDATE devices SET pairing_id = ?, created_at = ?, public_key = ?, seal_key = ?, asked_rights = 3, key_proof = ? WHERE id = ?")
    .bind(pairingId, Date.now(), key, sealKey, proof, owner.phoneId).run();
  const done = await second.ended;
  assert.equal(done.code, 1, done.stdout);
  assert.match(done.stderr, new RegExp(`^needs-you: the server named the new device "needs-you on .*" ${owner.phoneId}, the id of a device you paired before \\(key ${phoneFp.slice(0, 11)}…\\): nothing was vouched for`));
  assert.ok(oneLine(done.stderr), done.stderr);
  assert.deepEqual(await listed(), [phoneFp], "the list is as it was");
  // `devices` names the key it vouched for under each id; revoking P
  // strikes P's own key, whatever the server says P's key is now.
  const shown = await cli(owner, ["devices"], { COLUMNS: "200" });
  assert.ok(shown.stdout.split("\n").some((r) => r.startsWith(owner.phoneId) && r.includes(`${phoneFp.slice(0, 11)}…`)), shown.stdout);
  const revoked = await cli(owner, ["devices", "revoke", owner.phoneId]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, new RegExp(`no longer vouches for its key ${phoneFp.slice(0, 11)}…`));
  assert.deepEqual(await listed(), [], "P's key struck");
});

test("a device the server no longer lists, whose key the owner's still vouches for, is shown by devices, and revoke strikes its key", async () => {
  const owner = await ownerMachine();
  const pairing = start(owner, ["pair", "--json", "--rights", "answer"]);
  const link = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  const phone = machine();
  assert.equal((await pasteLink(phone, link, ["--allow", "answer"])).code, 0);
  const id = JSON.parse((await pairing.ended).stdout.split("\n")[1]).paired;
  const ownerId = (await w.db.prepare("SELECT owner_id FROM devices WHERE id = ?").bind(id).first()).owner_id;
  const listed = async () => JSON.parse(Buffer.from(JSON.parse((await w.db.prepare("SELECT device_list FROM owners WHERE id = ?")
    .bind(ownerId).first()).device_list).statement, "base64url")).devices;
  const [fp] = await listed();
  // The device logs itself out: the server forgets it, the owner's key
  // still vouches for it (as a server hiding a device would leave it).
  assert.equal((await cli(phone, ["logout"])).code, 0);
  const shown = await cli(owner, ["devices"], { COLUMNS: "200" });
  assert.equal(shown.code, 0, shown.stderr);
  assert.ok(shown.stdout.includes(`  ${id} (key ${fp.slice(0, 11)}…): needs-you devices revoke ${id}\n`), shown.stdout);
  const json = JSON.parse((await cli(owner, ["devices", "--json"])).stdout);
  assert.deepEqual(json.vouched_unlisted, [{ device_id: id, key: fp }]);
  // The content key cannot turn (its file unreadable here, as a server
  // failing the turn would leave it): the key is struck all the same, and
  // the turn stays owed until a revoke does it.
  const keyFile = join(owner.home, ".config", "needs-you", "content-key.json");
  const keyText = readFileSync(keyFile, "utf8");
  writeFileSync(keyFile, "{ not json", { mode: 0o600 });
  const failed = await cli(owner, ["devices", "revoke", id]);
  assert.notEqual(failed.code, 0, failed.stdout);
  assert.ok(oneLine(failed.stderr), failed.stderr);
  assert.match(failed.stderr, new RegExp(`your content key has yet to turn past it: run \`needs-you devices revoke ${id}\` again\n$`));
  assert.deepEqual(await listed(), [], "its key struck at the first try");
  writeFileSync(keyFile, keyText, { mode: 0o600 });
  const revoked = await cli(owner, ["devices", "revoke", id]);
  assert.equal(revoked.code, 0, revoked.stderr);
  const [said, nothingStruck, turned] = revoked.stdout.split("\n");
  assert.equal(said, `The server answered 404 for ${id}: it lists no such device to revoke.`);
  assert.match(nothingStruck, /^This machine vouched for no key under /, "struck at the first try");
  // What is sealed from now on, the key the phone held does not open.
  assert.match(turned, /^What is sealed from now on is under version 2 of your content key, which 0 remaining device\(s\) got/);
  assert.equal(existsSync(join(owner.home, ".config", "needs-you", "content-key-owed")), false, "nothing owed once turned");
  assert.deepEqual(await listed(), [], "its key struck");
  const after = await cli(owner, ["devices"], { COLUMNS: "200" });
  assert.ok(!after.stdout.includes(id), after.stdout);
});

test("a device whose certificate ended long ago gets no new content key; an unreadable record of devices stops devices and revoke in one line, and nothing changes", async () => {
  const owner = await ownerMachine();
  const pairOne = async () => {
    const pairing = start(owner, ["pair", "--json", "--rights", "answer"]);
    const link = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
    assert.equal((await pasteLink(machine(), link, ["--allow", "answer"])).code, 0);
    return JSON.parse((await pairing.ended).stdout.split("\n")[1]).paired;
  };
  const [stale, tablet, kept] = [await pairOne(), await pairOne(), await pairOne()];
  const config = join(owner.home, ".config", "needs-you");
  const ownerKey = await importKey(JSON.parse(readFileSync(join(config, "owner-key.json"), "utf8")).secret);
  const row = async (id) => w.db.prepare("SELECT certificate, content_keys FROM devices WHERE id = ?").bind(id).first();
  // The owner key's own certificate for it, ended eight days ago: past
  // what renewal brings back, a device nobody uses.
  const said = JSON.parse(Buffer.from(JSON.parse((await row(stale)).certificate).statement, "base64url"));
  const ended = await seal(ownerKey, { ...said, expires_at: Date.now() - 8 * 86_400_000 });
  await w.db.prepare("UPDATE devices SET certificate = ? WHERE id = ?").bind(JSON.stringify(ended), stale).run();
  const revoked = await cli(owner, ["devices", "revoke", tablet]);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, /under version 2 of your content key, which 1 remaining device\(s\) got/);
  const versions = async (id) => JSON.parse((await row(id)).content_keys).map((t) => t.split(".")[1]);
  assert.deepEqual(await versions(kept), ["1", "2"]);
  assert.deepEqual(await versions(stale), ["1"], "the long-ended device got nothing new");

  // The record garbled: neither read as empty nor written over.
  const record = join(config, "certified.json");
  writeFileSync(record, "{ not json", { mode: 0o600 });
  const list = () => w.db.prepare("SELECT device_list FROM owners WHERE id = (SELECT owner_id FROM devices WHERE id = ?)").bind(kept).first();
  const before = await list();
  const pairings = async () => (await w.db.prepare("SELECT COUNT(*) AS n FROM pairings").first()).n;
  const madeBefore = await pairings();
  for (const args of [["devices"], ["devices", "revoke", kept], ["pair"]]) {
    const r = await cli(owner, args);
    assert.equal(r.code, 3, `${args}: ${r.stderr}`);
    assert.ok(oneLine(r.stderr), r.stderr);
    assert.match(r.stderr.trim(), /^needs-you: .*certified\.json is not a needs-you record of devices: nothing is vouched for or struck until it is put back$/);
  }
  assert.equal(await pairings(), madeBefore, "pair made no code");
  assert.deepEqual(await list(), before, "the device list as it was");
  assert.equal((await w.db.prepare("SELECT revoked_at FROM devices WHERE id = ?").bind(kept).first()).revoked_at, null, "not revoked");
  assert.equal(readFileSync(record, "utf8"), "{ not json");
});

test("the owner's command line signs anew a certificate near its end, once a day as it runs, for the key it vouched for, naming the device; the device's answers carry the new one; one long ended is left", async () => {
  const owner = await ownerMachine();
  const laptop = machine();
  const pairing = start(owner, ["pair", "--json", "--rights", "answer"]);
  const link = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  assert.equal((await pasteLink(laptop, link, ["--allow", "answer"])).code, 0);
  assert.equal((await pairing.ended).code, 0);
  const id = JSON.parse(readFileSync(join(laptop.home, ".config", "needs-you", "login.json"), "utf8")).device_id;
  const held = async () => JSON.parse((await w.db.prepare("SELECT certificate FROM devices WHERE id = ?").bind(id).first()).certificate);
  const said = (envelope) => JSON.parse(Buffer.from(envelope.statement, "base64url"));
  const first = said(await held());
  assert.ok(first.expires_at > Date.now() + 29 * 86_400_000, "pair signs 30 days");

  // The certificate as it would be with a day left, signed by the owner key.
  const config = join(owner.home, ".config", "needs-you");
  const ownerKey = await importKey(JSON.parse(readFileSync(join(config, "owner-key.json"), "utf8")).secret);
  const nearItsEnd = async () => {
    const e = await seal(ownerKey, { ...first, expires_at: Date.now() + 86_400_000 });
    await w.db.prepare("UPDATE devices SET certificate = ? WHERE id = ?").bind(JSON.stringify(e), id).run();
    return e;
  };
  await nearItsEnd();
  // A day after the last look (pair looked, and found nothing to renew).
  rmSync(join(config, "certificates-checked"));
  const ls = await cli(owner, ["ls"]);
  assert.equal(ls.code, 0, ls.stderr);
  const host = readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
  assert.equal(ls.stderr, `needs-you: signed anew, for 30 days, the certificate of needs-you on ${host} (\`needs-you devices revoke ID\` ends one)\n`);
  const renewed = await held();
  const cert = said(renewed);
  assert.ok(cert.expires_at > Date.now() + 29 * 86_400_000, JSON.stringify(cert));
  assert.deepEqual({ ...cert, expires_at: 0 }, { ...first, expires_at: 0 }, "the same id, key, rights and owner");
  // Signed by the owner key: checked with Node's WebCrypto, and the key is the pinned one.
  const pub = await webcrypto.subtle.importKey("raw", Buffer.from(renewed.key, "base64url"), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  assert.ok(await webcrypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, Buffer.from(renewed.signature, "base64url"), Buffer.from(renewed.statement, "base64url")));
  assert.equal(createHash("sha256").update(Buffer.from(renewed.key, "base64url")).digest("base64url"), owner.login.owner);

  // The laptop's next answer carries the renewed certificate.
  const t = (await api("POST", "/v1/tasks", owner.login.token, { name: "asks" })).body;
  const q = (await api("POST", "/v1/reports", t.credential, { action: "open", kind: "permission", cli: "claude-code", session: "s", seq: 1,
    terminal: { kind: "tmux", host: "h", cwd: "/" }, ...takesRequest("decision", "Bash", { command: "make" }) })).body;
  assert.equal((await cli(laptop, ["answer", q.question_id, "--allow", "--yes"])).code, 0);
  const row = await w.db.prepare("SELECT signed FROM answers WHERE question_id = ?").bind(q.question_id).first();
  assert.deepEqual(JSON.parse(row.signed).certificate, renewed);

  // Looked at today: the next command does not look again.
  const again = await nearItsEnd();
  const ls2 = await cli(owner, ["ls"]);
  assert.equal(ls2.stderr, "");
  assert.deepEqual(await held(), again);
  // One that ended more than a week ago is left ended: pairing brings it back.
  rmSync(join(config, "certificates-checked"));
  const long = await seal(ownerKey, { ...first, expires_at: Date.now() - 8 * 86_400_000 });
  await w.db.prepare("UPDATE devices SET certificate = ? WHERE id = ?").bind(JSON.stringify(long), id).run();
  const ls4 = await cli(owner, ["ls"]);
  assert.equal(ls4.stderr, "");
  assert.deepEqual(await held(), long);
  // A key the owner did not vouch for under that id is not renewed.
  rmSync(join(config, "certificates-checked"));
  const other = await seal(ownerKey, { ...first, key: b64url(createECDH("prime256v1").generateKeys()), expires_at: Date.now() + 86_400_000 });
  await w.db.prepare("UPDATE devices SET certificate = ? WHERE id = ?").bind(JSON.stringify(other), id).run();
  const ls3 = await cli(owner, ["ls"]);
  assert.equal(ls3.code, 0, ls3.stderr);
  assert.equal(ls3.stderr, "");
  assert.deepEqual(await held(), other);
});

test("run passes signals through: a trapped SIGINT and an untrapped SIGTERM", async () => {
  const m = await ownerMachine();
  const trapped = agentDir();
  const a = start(m, ["run", "--", AGENT, trapped, "0"], { AGENT_TRAPS: "INT" });
  await waitFor(() => existsSync(join(trapped, "opened")), 10000);
  a.child.kill("SIGINT");
  const ea = await a.ended;
  assert.equal(readFileSync(join(trapped, "signal"), "utf8").trim(), "INT");
  assert.equal(ea.code, 130);

  const plain = agentDir();
  const b = start(m, ["run", "--", AGENT, plain, "0"]);
  await waitFor(() => existsSync(join(plain, "opened")), 10000);
  b.child.kill("SIGTERM");
  const eb = await b.ended;
  assert.equal(eb.signal, "SIGTERM", "killed by the signal that killed the agent");
  const pid = Number(readFileSync(join(plain, "agent-pid"), "utf8"));
  assert.throws(() => process.kill(pid, 0), "the agent is gone");
  assert.deepEqual(JSON.parse((await cli(m, ["tasks", "--json"])).stdout).tasks, [], "both tasks revoked");
});

test("run --tmux runs the agent in a new tmux session, with the credential kept off every command line", async () => {
  const m = await ownerMachine();
  const dir = agentDir();
  const run = start(m, ["run", "--tmux", "--name", "in tmux", "--", AGENT, dir, "5"]);
  assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000));
  const sessions = execFileSync("tmux", ["list-sessions", "-F", "#{session_name}"], { env: tmuxEnv(), encoding: "utf8" });
  assert.match(sessions, /^in-tmux-[0-9a-f]{4}$/m);
  const panes = execFileSync("tmux", ["list-panes", "-a", "-F", "#{pane_start_command}"], { env: tmuxEnv(), encoding: "utf8" });
  assert.ok(!panes.includes("nyt_"), panes);
  assert.ok(!/nyt_[0-9a-f]{8}/.test(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })));
  assert.ok(await waitFor(async () => JSON.parse((await cli(m, ["ls", "--json"])).stdout).questions.length === 1, 10000));
  writeFileSync(join(dir, "go"), "");
  const end = await run.ended;
  assert.equal(end.code, 5, end.stderr);
  assert.match(end.stderr, /running in the tmux session in-tmux-/);
  assert.deepEqual(JSON.parse((await cli(m, ["tasks", "--json"])).stdout).tasks, []);
});

/** needs-you run --tmux at a terminal that `script` gives it, as a person's
 *  shell would: that is what makes it attach instead of starting detached.
 *  Writing to `keys` types into that terminal. */
function atTerminal(m, args, extraEnv = {}) {
  const line = [BIN, ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["-qfec", line, "/dev/null"], {
    env: { ...m.env, SHELL: "/bin/sh", TERM: "xterm", ...extraEnv }, stdio: ["pipe", "pipe", "pipe"] });
  const run = { out: "", keys: child.stdin, child };
  child.stdout.on("data", (d) => (run.out += d));
  child.stderr.on("data", (d) => (run.out += d));
  run.ended = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return run;
}

const clients = () => execFileSync("tmux", ["list-clients", "-F", "#{session_name}"], { env: tmuxEnv(), encoding: "utf8" });

/** The pid of the needs-you process below `pid` (script, then maybe a shell). */
function needsYouBelow(pid) {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,comm="], { encoding: "utf8" }).trim().split("\n")
    .map((l) => l.trim().split(/\s+/)).map(([p, pp, comm]) => ({ pid: Number(p), ppid: Number(pp), comm }));
  const below = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows) if (below.has(r.ppid) && !below.has(r.pid)) { below.add(r.pid); grew = true; }
  }
  return rows.find((r) => below.has(r.pid) && r.comm === "needs-you")?.pid;
}

test("answer at a terminal shows the card built from the request and sends only after a yes; --yes and a script do not ask", async () => {
  const m = await ownerMachine();
  const task = (await api("POST", "/v1/tasks", m.login.token, { name: "asks" })).body;
  const input = { command: "npm test", description: "Run the tests" };
  const open = async (session) => (await api("POST", "/v1/reports", task.credential, { cli: "claude-code", session, seq: 1, action: "open",
    kind: "permission", text: "x", ...takesRequest("decision", "Bash", input),
    terminal: { kind: "terminal", host: "box", cwd: "/w" } })).body.question_id;
  const answers = async (qid) => (await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ?").bind(qid).first()).n;

  const qid = await open("asked");
  const no = atTerminal(m, ["answer", qid, "--allow"]);
  assert.ok(await waitFor(() => no.out.includes("Send it? [y/N]"), 10_000), no.out);
  assert.match(no.out, /allow: Run the tests \$ npm test/);
  no.keys.write("n\r");
  assert.equal(await no.ended, 1, no.out);
  assert.match(no.out, /needs-you: nothing was sent/);
  assert.equal(await answers(qid), 0, "nothing was sent");

  const yes = atTerminal(m, ["answer", qid, "--allow"]);
  assert.ok(await waitFor(() => yes.out.includes("Send it? [y/N]"), 10_000), yes.out);
  yes.keys.write("y\r");
  assert.ok(await waitFor(async () => (await answers(qid)) === 1, 10_000), yes.out);
  yes.child.kill();
  await yes.ended;

  // --yes at a terminal, and a script (no terminal), send without asking.
  const other = await open("other");
  const flagged = atTerminal(m, ["answer", other, "--allow", "--yes"]);
  assert.ok(await waitFor(async () => (await answers(other)) === 1, 10_000), flagged.out);
  assert.ok(!flagged.out.includes("Send it?"), flagged.out);
  flagged.child.kill();
  await flagged.ended;

  // A card the list keeps cleaned and cut (a tab, a trailing space, 6,000
  // characters): checked against the list's words in that form, answered.
  const long = { command: `echo\t${"y".repeat(6_000)} \n`, description: "Say yes" };
  const longQ = (await api("POST", "/v1/reports", task.credential, { cli: "claude-code", session: "long", seq: 1, action: "open",
    kind: "permission", text: "x", ...takesRequest("decision", "Bash", long),
    terminal: { kind: "terminal", host: "box", cwd: "/w" } })).body.question_id;
  const sent = atTerminal(m, ["answer", longQ, "--allow", "--yes"]);
  assert.ok(await waitFor(async () => (await answers(longQ)) === 1, 10_000), sent.out);
  sent.child.kill();
  await sent.ended;
});

test("run --tmux at a terminal attaches to the new session; detached from, it waits for the agent, and passes it a Ctrl-C", async () => {
  const m = await ownerMachine();
  const dir = agentDir();
  const run = atTerminal(m, ["run", "--tmux", "--name", "attached", "--", AGENT, dir, "6"], { AGENT_TRAPS: "INT" });
  assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000), run.out);
  assert.match(clients(), /^attached-[0-9a-f]{4}$/m, "the terminal is attached to the agent's session");
  assert.ok(!run.out.includes("running in the tmux session"), "no hint to attach: it is attached");

  const session = clients().trim().split("\n").find((s) => s.startsWith("attached-"));
  execFileSync("tmux", ["detach-client", "-s", session], { env: tmuxEnv() });
  assert.ok(await waitFor(() => !clients().includes(session), 5000), "detached");
  await sleep(1200); // two of run's checks on the session
  assert.equal(run.child.exitCode, null, "run waits for the agent, not for the terminal");
  assert.equal(JSON.parse((await cli(m, ["tasks", "--json"])).stdout).tasks.length, 1, "the task lives on");

  // Ctrl-C at the terminal where run waits: the agent, in tmux, gets it.
  run.keys.write("\u0003");
  assert.equal(await run.ended, 130, run.out);
  assert.equal(readFileSync(join(dir, "signal"), "utf8").trim(), "INT");
  assert.deepEqual(JSON.parse((await cli(m, ["tasks", "--json"])).stdout).tasks, [], "revoked when the agent ended");
});

test("run --tmux, attached: a kill reaches the agent in its session", async () => {
  const m = await ownerMachine();
  const dir = agentDir();
  const run = atTerminal(m, ["run", "--tmux", "--name", "killed", "--", AGENT, dir, "0"], { AGENT_TRAPS: "TERM" });
  assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000), run.out);
  assert.match(clients(), /^killed-[0-9a-f]{4}$/m);
  const pid = needsYouBelow(run.child.pid);
  assert.ok(pid, "needs-you is running");
  await sleep(300); // the session has written the agent's pid
  process.kill(pid, "SIGTERM");
  assert.ok(await waitFor(() => existsSync(join(dir, "signal")), 5000), "the agent got it");
  assert.equal(readFileSync(join(dir, "signal"), "utf8").trim(), "TERM");
  assert.equal(await run.ended, 143, run.out);
});

/** Quotes one word for /bin/sh. */
const shellQuote = (s) => `'${String(s).replaceAll("'", `'\\''`)}'`;

test("rotate-token replaces the owner token in the login file; the old one is refused; a device may not", async () => {
  const m = await ownerMachine();
  const file = join(m.home, ".config", "needs-you", "login.json");
  const old = m.login.token;
  const r = await cli(m, ["rotate-token"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(oneLine(r.stdout), r.stdout);
  const now = JSON.parse(readFileSync(file, "utf8"));
  assert.match(now.token, /^nyo_[0-9a-f]{64}$/);
  assert.notEqual(now.token, old);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.ok(!(r.stdout + r.stderr).includes(now.token.slice(4)), "the token is not printed");
  assert.equal((await api("GET", "/v1/tasks", old)).status, 401, "the old token is refused");
  assert.equal((await cli(m, ["tasks", "--json"])).code, 0, "this machine goes on with the new one");

  const device = await deviceMachine({ login: now });
  const refused = await cli(device, ["rotate-token"]);
  assert.equal(refused.code, 1);
  assert.ok(oneLine(refused.stderr), refused.stderr);
  assert.match(refused.stderr, /paired device/);
  assert.equal((await cli(m, ["rotate-token", "now"])).code, 2, "bad usage");
});

test("dismiss closes a question as not needed; a bad or unknown id says so", async () => {
  const owner = await ownerMachine();
  const task = (await api("POST", "/v1/tasks", owner.login.token, { name: "t" })).body;
  const q = (await api("POST", "/v1/reports", task.credential, { cli: "codex", session: "d", seq: 1, action: "open", kind: "permission", text: "Run it?" })).body;
  const ok = (await cli(owner, ["dismiss", q.question_id]));
  assert.equal(ok.code, 0, ok.stderr);
  const row = await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(q.question_id).first();
  assert.equal(row.close_reason, "dismissed");
  assert.equal((await cli(owner, ["dismiss", q.question_id])).code, 1, "closed already");
  assert.equal((await cli(owner, ["dismiss", "q_nothere"])).code, 1);
  assert.equal((await cli(owner, ["dismiss", "../owners"])).code, 2);
});

test("pair prints a QR code, the link and the machine's line that pins the owner's key, then waits for the device; --json gives them on its first line; login --owner pins it", async () => {
  const owner = await ownerMachine();
  // Nobody uses this code: pair waits out its life (2 s here), and says so.
  const r = (await cli(owner, ["pair"]));
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, "needs-you: the code expired unused\n");
  assert.match(r.stdout, /[█▀▄]/);
  assert.match(r.stdout, new RegExp(`open: ${w.url.replace(/[.]/g, "\\.")}/pair#[0-9A-Z]{4}-[0-9A-Z]{4}\\.[A-Za-z0-9_-]{22}\\.${owner.login.owner}\\n`));
  assert.match(r.stdout, new RegExp(`paste:\\n  NEEDS_YOU_CODE=[0-9A-Z]{4}-[0-9A-Z]{4}\\.[A-Za-z0-9_-]{22} needs-you login ${w.url.replace(/[.]/g, "\\.")} --owner ${owner.login.owner}\\n`));
  assert.match(r.stdout, /Waiting for the device…\n$/);
  const pairing = start(owner, ["pair", "--json"]);
  const first = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(String(d))));
  const j = JSON.parse(first.split("\n")[0]);
  assert.match(j.code, /^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
  // The machine's line carries the link's secret after the code, as the link
  // does after `#`: in the command's environment, not on its command line.
  const secret = new URL(j.url).hash.split(".")[1];
  assert.equal(j.login, `NEEDS_YOU_CODE=${j.code}.${secret} needs-you login ${w.url} --owner ${owner.login.owner}`);
  assert.match(owner.login.owner, /^[A-Za-z0-9_-]{43}$/);
  // The owner's key beside the login, its own alone.
  assert.equal(statSync(join(owner.home, ".config", "needs-you", "owner-key.json")).mode & 0o777, 0o600);
  // The machine that pastes the line pins the owner; a made-up pin is refused before anything is asked.
  const m = machine();
  const bad = await cli(m, ["login", w.url, "--code", j.code, "--owner", "not-a-fingerprint"]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.ok(oneLine(bad.stderr), bad.stderr);
  // The secret on a command line, where every user of the machine reads it
  // (/proc/PID/cmdline), is refused before anything is sent: the code stays unused.
  for (const args of [["login", w.url, "--code", `${j.code}.${secret}`, "--owner", owner.login.owner], ["login", j.url]]) {
    const onLine = await cli(m, args);
    assert.equal(onLine.code, 2, onLine.stderr);
    assert.match(onLine.stderr, /^needs-you: the pairing secret would be on this command line, which every user of this machine can read/);
    assert.ok(oneLine(onLine.stderr), onLine.stderr);
    assert.equal(existsSync(join(m.home, ".config", "needs-you", "login.json")), false);
  }
  // A NEEDS_YOU_CODE left in the environment for another code than the one
  // the command line names: refused, neither code redeemed.
  const stale = await cli(m, ["login", w.url, "--code", j.code, "--owner", owner.login.owner], { NEEDS_YOU_CODE: `ZZZZ-ZZZZ.${secret}` });
  assert.equal(stale.code, 2, stale.stderr);
  assert.equal(stale.stderr, `needs-you: NEEDS_YOU_CODE holds the code ZZZZ-ZZZZ, not ${j.code}: unset it (unset NEEDS_YOU_CODE) or give that code\n`);
  assert.equal(existsSync(join(m.home, ".config", "needs-you", "login.json")), false);
  // The line pasted as it is, into a shell: the needs-you it starts never
  // has the secret among its arguments.
  const shim = join(m.home, "shim");
  execFileSync("mkdir", ["-p", shim]);
  writeFileSync(join(shim, "needs-you"), `#!/bin/sh\ncat /proc/$$/cmdline | tr '\\0' ' ' > ${join(m.home, "argv")}\nexec ${BIN} "$@"\n`, { mode: 0o755 });
  const joined = await new Promise((resolve) => {
    const child = spawn("sh", ["-c", j.login], { env: { ...m.env, PATH: `${shim}:${m.env.PATH}` }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
  assert.equal(joined.code, 0, joined.stderr);
  const argv = readFileSync(join(m.home, "argv"), "utf8");
  assert.match(argv, /needs-you login /);
  assert.ok(!argv.includes(secret), argv);
  const pinned = JSON.parse(readFileSync(join(m.home, ".config", "needs-you", "login.json"), "utf8"));
  assert.equal(pinned.owner, owner.login.owner);
  // The pairer saw the machine log in with keys it proved with the line's
  // secret, vouched for them, and gave it the content key.
  const done = await pairing.ended;
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout.split("\n")[1]), { paired: pinned.device_id, name: `needs-you on ${readFileSync("/proc/sys/kernel/hostname", "utf8").trim()}`, certified: true });
  assert.equal(statSync(join(m.home, ".config", "needs-you", "seal-key.json")).mode & 0o777, 0o600);

  // A device's login hands on the owner it pinned: its `pair` names the
  // fingerprint in the link, with no secret (only the owner key vouches for
  // keys), and in the machine's line; a machine logged in with that link
  // pins the owner and makes no key.
  const second = start(owner, ["pair", "--json"]);
  const k = JSON.parse((await new Promise((resolve) => second.child.stdout.once("data", (d) => resolve(String(d))))).split("\n")[0]);
  const device = machine();
  const [assign, , ...deviceArgs] = k.login.split(" ");
  const deviceJoined = await cli(device, [...deviceArgs, "--allow", "pair"], { NEEDS_YOU_CODE: assign.split("=")[1] });
  assert.equal(deviceJoined.code, 0, deviceJoined.stderr);
  assert.equal((await second.ended).code, 0);
  const handed = await cli(device, ["pair", "--json"]);
  assert.equal(handed.code, 0, handed.stderr);
  const h = JSON.parse(handed.stdout.split("\n")[0]);
  assert.equal(h.url, `${w.url}/pair#${h.code}..${owner.login.owner}`);
  assert.equal(h.login, `NEEDS_YOU_CODE=${h.code} needs-you login ${w.url} --owner ${owner.login.owner}`);
  const third = machine();
  // The same link cut short pairs nothing: it would pin no owner.
  for (const short of [h.url.slice(0, -4), `${w.url}/pair#${h.code}.`]) {
    const cut = await cli(third, ["login", short]);
    assert.equal(cut.code, 2, cut.stderr);
    assert.equal(cut.stderr, "needs-you: the link's owner key is cut short or mangled: give the whole link, as it was shown\n");
    assert.equal(existsSync(join(third.home, ".config", "needs-you", "login.json")), false);
  }
  const thirdJoined = await cli(third, ["login", h.url]);
  assert.equal(thirdJoined.code, 0, thirdJoined.stderr);
  assert.equal(JSON.parse(readFileSync(join(third.home, ".config", "needs-you", "login.json"), "utf8")).owner, owner.login.owner);
  assert.equal(existsSync(join(third.home, ".config", "needs-you", "device-key.json")), false, "no key: none is vouched for");
  // Its agents' questions go readable (it was given no content key), and `run` says so.
  const thirdRan = await cli(third, ["run", "--", "true"]);
  assert.equal(thirdRan.code, 0, thirdRan.stderr);
  assert.match(thirdRan.stderr, /^needs-you: this machine holds no content key \(it logged in without the line `needs-you pair` prints\), so its agents' questions reach the server readable; log it in again with that line$/m);
  const thirdDoctor = await cli(third, ["run", "--", REPORTER, "doctor"]);
  assert.match(thirdDoctor.stdout, /^-- {4}no content key: questions reach the server readable; log this machine in with the line `needs-you pair` prints on the owner's machine to seal them$/m);
});

test("log: every question with its answers, newest first, searched on this machine; --json as JSON Lines", async () => {
  const owner = await ownerMachine();
  const t = (await api("POST", "/v1/tasks", owner.login.token, { name: "release" })).body;
  const NPM = { command: "npm test" };
  const say = (body) => api("POST", "/v1/reports", t.credential, { cli: "claude-code", seq: Date.now() * 1000, ...body });
  const asked = (await say({ session: "s1", action: "open", kind: "permission", text: "Run npm test?",
    terminal: { kind: "terminal", host: "build-box", cwd: "/src/api" },
    ...takesRequest("decision", "Bash", NPM) })).body.question_id;
  const allow = await api("POST", `/v1/questions/${asked}/answers`, owner.login.token, { decision: "allow", digest: requestDigest("Bash", NPM) });
  assert.equal(allow.status, 201, JSON.stringify(allow.body));
  await say({ session: "s1", action: "close", reason: "answered" });
  const region = (await say({ session: "s2", action: "open", kind: "dialog", text: "Which region?", options: [{ label: "eu" }] })).body.question_id;

  const all = await cli(owner, ["log"], { COLUMNS: "300" });
  assert.equal(all.code, 0, all.stderr);
  const paragraphs = all.stdout.trim().split(/\n(?=\S)/);
  assert.equal(paragraphs.length, 2, all.stdout);
  assert.match(paragraphs[0], new RegExp(`^\\S+ ago  release · Claude Code is asking · open\n  Which region\\?\n  ${region}$`));
  assert.match(paragraphs[1], new RegExp(`^\\S+ ago  release · Claude Code needs your permission · answered \\S+ ago\n  Claude Code wants to run: npm test\n` +
    `  answered allow by the owner, \\S+ ago: failed \\(.+\\)\n  ${asked} · on build-box · /src/api$`));

  const npm = await cli(owner, ["log", "NPM", "build-box"], { COLUMNS: "300" });
  assert.equal(npm.code, 0, npm.stderr);
  assert.ok(npm.stdout.includes(asked) && !npm.stdout.includes(region), npm.stdout);
  const lines = (await cli(owner, ["log", "--json"])).stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((p) => p.question_id), [region, asked]);
  assert.deepEqual(lines[1].answers.map((a) => [a.text, a.by, a.form]), [["allow", "the owner", "decision"]]);
  assert.deepEqual((await cli(owner, ["log", "--limit", "1", "--json"])).stdout.trim().split("\n").map((l) => JSON.parse(l).question_id), [region]);
  const none = await cli(owner, ["log", "kubernetes"]);
  assert.deepEqual([none.code, none.stdout], [0, "Nothing in the history holds those words.\n"]);
  const bad = await cli(owner, ["log", "--limit", "0"]);
  assert.equal(bad.code, 2);
  assert.ok(oneLine(bad.stderr.split("\n\n")[0]), bad.stderr);
});

test("channels and test-push: the owner sets ntfy, a test reaches the sink; a device may not", async () => {
  const owner = await ownerMachine();
  const set = (await cli(owner, ["channels", "set", "ntfy", `${sink.url}/my-topic`]));
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^Set the ntfy channel: ntfy +\S+my-topic {2}no words \(which CLI, what kind\)$/m);
  const worded = (await cli(owner, ["channels", "set", "ntfy", `${sink.url}/my-topic`, "--words"]));
  assert.equal(worded.code, 0, worded.stderr);
  assert.match((await cli(owner, ["channels"])).stdout, /^ntfy +\S+my-topic {2}with words/m);
  const list = JSON.parse((await cli(owner, ["channels", "--json"])).stdout);
  assert.deepEqual(list.channels.map((c) => [c.kind, c.words]), [["ntfy", true]]);
  const before = sink.received.length;
  const t = (await cli(owner, ["test-push", "--json"]));
  assert.equal(t.code, 0, t.stderr);
  const results = JSON.parse(t.stdout).results;
  assert.deepEqual(results.map((x) => [x.channel, x.ok, x.status]), [["ntfy", true, 200]]);
  assert.equal(sink.received.length, before + 1);
  assert.match(JSON.parse(sink.received.at(-1).body).message, /test notification/);
  assert.match((await cli(owner, ["test-push"])).stdout, /^ntfy +answered 200$/m);

  const device = await deviceMachine(owner);
  const refused = (await cli(device, ["channels"]));
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /only the owner's login/);
  assert.equal((await cli(owner, ["channels", "remove", "ntfy"])).code, 0);
  const none = (await cli(owner, ["test-push"]));
  assert.equal(none.code, 1);
  assert.match(none.stdout, /No channel to test/);
});

test("failures: not logged in, a login file others can read, a revoked device, no server, a missing command, bad usage", async () => {
  const nobody = machine();
  const r1 = (await cli(nobody, ["ls"]));
  assert.equal(r1.code, 3);
  assert.match(r1.stderr, /^needs-you: not logged in/);

  const owner = await ownerMachine();
  const file = join(owner.home, ".config", "needs-you", "login.json");
  chmodSync(file, 0o644);
  const r2 = (await cli(owner, ["tasks"]));
  assert.equal(r2.code, 3);
  assert.match(r2.stderr, /can be read by others; run `chmod 600/);
  chmodSync(file, 0o600);

  const device = await deviceMachine(owner);
  assert.equal((await api("DELETE", `/v1/devices/${device.login.device_id}`, owner.login.token)).status, 200);
  const r3 = (await cli(device, ["ls"]));
  assert.equal(r3.code, 3);
  assert.match(r3.stderr, /refused this login/);
  assert.ok(oneLine(r3.stderr));

  const gone = machine();
  const p = await api("POST", "/v1/pairings", owner.login.token);
  assert.equal((await cli(gone, ["login", p.body.url])).code, 0);
  const login = JSON.parse(readFileSync(join(gone.home, ".config", "needs-you", "login.json"), "utf8"));
  writeFileSync(join(gone.home, ".config", "needs-you", "login.json"), JSON.stringify({ ...login, url: "http://127.0.0.1:9" }), { mode: 0o600 });
  const r4 = (await cli(gone, ["tasks"]));
  assert.equal(r4.code, 4);
  assert.match(r4.stderr, /no answer from http:\/\/127\.0\.0\.1:9/);
  // The server out of reach never keeps the agent from starting: it runs
  // unwatched, says so in one line, and its exit code is ours.
  const ran = join(gone.home, "ran");
  const unwatched = await cli(gone, ["run", "--", "sh", "-c", `touch ${ran}; exit 7`]);
  assert.equal(unwatched.code, 7, unwatched.stderr);
  assert.ok(existsSync(ran), "the command ran");
  assert.match(unwatched.stderr, /^needs-you: http:\/\/127\.0\.0\.1:9 is out of reach \(.*\): starting sh unwatched$/m);
  assert.equal(unwatched.stderr.split("\n").filter((l) => l.includes("out of reach")).length, 1);

  // A login the server refuses is replaced by the next one, no logout first.
  const again = await api("POST", "/v1/pairings", owner.login.token);
  const relogin = await cli(device, ["login", again.body.url]);
  assert.equal(relogin.code, 0, relogin.stderr);
  assert.match(relogin.stderr, /replacing the login to .*, which the server no longer accepts/);
  assert.equal((await cli(device, ["ls"])).code, 0);
  // An id that is no open question of this owner says where the ids are.
  const unknown = await cli(owner, ["dismiss", "q_nosuch"]);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, "needs-you: no open question q_nosuch in your list: `needs-you ls` shows the open ones with their ids\n");
  // An address without its scheme is told which one it needs.
  const bare = await cli(machine(), ["setup", "127.0.0.1:8787"], { NEEDS_YOU_ADMIN_TOKEN: ADMIN });
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /needs its scheme: http:\/\/127\.0\.0\.1:8787/);

  const tasksBefore = (await api("GET", "/v1/tasks", owner.login.token)).body.tasks.length;
  const r5 = (await cli(owner, ["run", "--", "no-such-agent-here", "x"]));
  assert.equal(r5.code, 127);
  assert.equal(r5.stderr.trim(), "needs-you: command not found: no-such-agent-here");
  assert.equal((await api("GET", "/v1/tasks", owner.login.token)).body.tasks.length, tasksBefore, "no task made");

  for (const args of [["run", "claude"], ["ls", "--bogus"], ["frobnicate"]]) {
    const r = (await cli(owner, args));
    assert.equal(r.code, 2, args.join(" "));
    assert.ok(oneLine(r.stderr));
  }
  const help = (await cli(owner, ["--help"]));
  assert.equal(help.code, 0);
  for (const cmd of ["setup", "login", "logout", "rotate-token", "run", "ls", "tasks", "answer", "dismiss", "pair", "channels", "test-push"]) {
    assert.match(help.stdout, new RegExp(`needs-you ${cmd}`), `an example for ${cmd}`);
  }
});

test("a URL that is not the Worker: a page or a redirect is said in one line, and no login is saved", async () => {
  // What a wrong URL answers: a login page (200, HTML), or a redirect. The
  // redirect leads to what would pass for a login, were it followed.
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => {
    if (req.url.startsWith("/moved")) res.writeHead(307, { location: "/elsewhere" }).end();
    else if (req.url.startsWith("/elsewhere")) {
      res.writeHead(201, { "content-type": "application/json" })
        .end(JSON.stringify({ device_id: "dev_x", name: "x", token: `nyd_${"0".repeat(64)}` }));
    } else res.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    for (const url of [`${base}/pair#K7Q2-M9XD`, `${base}/moved/pair#K7Q2-M9XD`]) {
      const m = machine();
      const r = await cli(m, ["login", url]);
      assert.equal(r.code, 4, r.stderr);
      assert.ok(oneLine(r.stderr), r.stderr);
      assert.match(r.stderr, /is it the needs-you Worker's URL\?/);
      assert.ok(!existsSync(join(m.home, ".config", "needs-you", "login.json")), "nothing saved");
    }
    const m = machine();
    const setup = await cli(m, ["setup", base], { NEEDS_YOU_ADMIN_TOKEN: ADMIN });
    assert.equal(setup.code, 4, setup.stderr);
    assert.ok(!existsSync(join(m.home, ".config", "needs-you", "login.json")), "nothing saved");
  } finally {
    server.close();
  }
  // A line break in what the person typed stays out of the error's one line.
  const r = await cli(machine(), ["login", "http://127.0.0.1:9/\nx"]);
  assert.notEqual(r.code, 0);
  assert.ok(oneLine(r.stderr), JSON.stringify(r.stderr));
});

test("a reader that goes away ends needs-you quietly, not with a panic", () => {
  // Python opens a pipe, closes its reading end, and runs needs-you with the
  // writing end as stdout: the first write meets a closed pipe.
  const script = `import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.argv[1], "--help"], stdout=w, stderr=subprocess.PIPE)
print(p.returncode, len(p.stderr))`;
  const [code, errBytes] = execFileSync("python3", ["-c", script, BIN], { encoding: "utf8" }).trim().split(" ").map(Number);
  assert.equal(code, -13, "ended by SIGPIPE, like any Unix tool (a panic exits 101)");
  assert.equal(errBytes, 0, "nothing on stderr");
});

test("logout revokes the device and forgets it", async () => {
  const owner = await ownerMachine();
  const device = await deviceMachine(owner);
  const r = (await cli(device, ["logout"]));
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!existsSync(join(device.home, ".config", "needs-you", "login.json")));
  const left = (await api("GET", "/v1/devices", owner.login.token)).body.devices;
  assert.ok(!left.some((d) => d.device_id === device.login.device_id));
  assert.equal((await cli(device, ["ls"])).code, 3);
});

test("run warns once when an agent CLI's hooks are not installed, naming the command that fixes it", async () => {
  const m = await ownerMachine();
  const bin = mkdtempSync(join(scratch, "bin-"));
  writeFileSync(join(bin, "claude"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const r = await cli(m, ["run", "--", "claude"], { PATH: `${bin}:${process.env.PATH}` });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.deepEqual(lines.filter((l) => /not installed/.test(l)),
    ["needs-you: Claude Code's hooks are not installed, so it will not report; run `report-prompt install --cli claude-code`"]);
  assert.equal(lines.filter((l) => /pinned no owner key/.test(l)).length, 0, "the owner's own machine pins its key");
  // A machine logged in from a bare pairing link pinned nothing: run says what that costs.
  const bare = await deviceMachine(m);
  const b = await cli(bare, ["run", "--", "claude"], { PATH: `${bin}:${process.env.PATH}` });
  assert.equal(b.code, 0, b.stderr);
  assert.ok(b.stderr.includes("needs-you: this machine pinned no owner key, so its agents take no answer from afar and their questions reach the server readable; log in again with the line `needs-you pair` prints\n"), b.stderr);
});

test("ls --watch draws the list again when it changes, on the live list's socket: nothing while nothing changes", async () => {
  const owner = await ownerMachine();
  const task = (await api("POST", "/v1/tasks", owner.login.token, { name: "watched" })).body;
  const watch = start(owner, ["ls", "--watch"], { COLUMNS: "100" });
  let out = "";
  watch.child.stdout.on("data", (d) => (out += d));
  const draws = () => out.split("\u001b[H\u001b[2J").length - 1;
  assert.ok(await waitFor(() => out.includes("All quiet"), 10000));
  // Quiet: the socket brings nothing, so nothing is drawn (a read every
  // 2 s would draw twice in this time).
  const quiet = draws();
  await sleep(4500);
  assert.equal(draws(), quiet, "no change, no draw");
  await api("POST", "/v1/reports", task.credential, { cli: "hermes", session: "w", seq: 1, action: "open", kind: "dialog", text: "Which branch?" });
  assert.ok(await waitFor(() => /watched +Hermes +dialog +\S+ +Which branch\?/.test(out), 10000), out);
  assert.equal(draws(), quiet + 1, "one change, one draw");
  watch.child.kill("SIGINT");
  const end = await watch.ended;
  assert.equal(end.signal, "SIGINT");
});

test("ls --watch of a device that is revoked meanwhile ends at once, saying so in one line", async () => {
  const owner = await ownerMachine();
  const m = await deviceMachine(owner);
  const watch = start(m, ["ls", "--watch"]);
  let out = "";
  watch.child.stdout.on("data", (d) => (out += d));
  assert.ok(await waitFor(() => out.includes("All quiet"), 10000));
  await sleep(300);
  assert.equal((await api("DELETE", `/v1/devices/${m.login.device_id}`, owner.login.token)).status, 200);
  const end = await watch.ended;
  assert.equal(end.code, 3, end.stderr);
  assert.deepEqual(end.stderr.trim().split("\n"), ["needs-you: this login was signed out (revoked or replaced): `needs-you login URL` with a new pairing code replaces it"]);
});

test("mute: run --mute starts a task muted, tasks shows it, tasks mute and unmute change it by name; an unknown task says so in one line", async () => {
  const owner = await ownerMachine();
  const m = await deviceMachine(owner);
  const dir = agentDir();
  const run = start(m, ["run", "--name", "quiet one", "--mute", "30m", "--", AGENT, dir, "0"]);
  assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000), "the agent reported");
  const task = () => JSON.parse(execFileSync(BIN, ["tasks", "--json"], { env: m.env, encoding: "utf8" })).tasks[0];
  const first = task();
  assert.ok(first.muted_until > Date.now() + 29 * 60_000 && first.muted_until <= Date.now() + 30 * 60_000, JSON.stringify(first));
  assert.match((await cli(m, ["tasks"], { COLUMNS: "120" })).stdout, /quiet one .* muted for (29|30)m/);

  const unmuted = await cli(m, ["tasks", "unmute", "quiet one"]);
  assert.equal(unmuted.code, 0, unmuted.stderr);
  assert.equal(unmuted.stdout, "quiet one: unmuted.\n");
  assert.equal(task().muted_until, undefined);
  const muted = await cli(m, ["tasks", "mute", first.task_id, "--for", "2h"]);
  assert.equal(muted.code, 0, muted.stderr);
  assert.match(muted.stdout, /muted for 2 hours/);
  assert.ok(task().muted_until > Date.now() + 119 * 60_000);

  const none = await cli(m, ["tasks", "mute", "no such task"]);
  assert.equal(none.code, 1);
  assert.equal(none.stdout, "");
  assert.ok(oneLine(none.stderr), none.stderr);
  assert.match(none.stderr, /no live task "no such task"/);
  const bad = await cli(m, ["tasks", "mute", "quiet one", "--for", "soon"]);
  assert.equal(bad.code, 2);
  writeFileSync(join(dir, "go"), "");
  assert.equal((await run.ended).code, 0);
});

test("lasting choices: answer --keep grants one, tasks --rules and rules list it, rules revoke takes it back through the relay; a session's says why not in one line", async () => {
  const owner = await ownerMachine();
  const task = (await api("POST", "/v1/tasks", owner.login.token, { name: "rules" })).body;
  const input = { command: "npm test" };
  const kept = (destination) => ({ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test *" }], behavior: "allow", destination });
  const open = async (session, suggestion) => {
    const r = await api("POST", "/v1/reports", task.credential, { cli: "claude-code", session, seq: Date.now(), action: "open",
      kind: "permission", text: "x", ...takesRequest("decision", "Bash", input, [suggestion]),
      terminal: { kind: "terminal", host: "box", cwd: "/w" } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.question_id;
  };
  // The relay's side by hand: takes every answer, and takes back every rule.
  const resp = await w.mf.dispatchFetch(`${w.url}/v1/relay`, { headers: { upgrade: "websocket", authorization: `Bearer ${task.credential}` } });
  const ws = resp.webSocket;
  const revokes = [];
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(e.data);
    if (m.type === "answer") ws.send(JSON.stringify({ type: "taken", answer_id: m.answer_id }));
    if (m.type === "revoke") revokes.push(m);
    if (m.type === "revoke") ws.send(JSON.stringify({ type: "revoked", rule_id: m.rule_id, outcome: "removed", note: "removed Bash(npm test *) from /w/.claude/settings.local.json" }));
  });
  ws.accept();
  ws.send(JSON.stringify({ type: "hello" }));
  try {
    for (const [session, destination] of [["file", "localSettings"], ["memory", "session"]]) {
      const qid = await open(session, kept(destination));
      const r = await cli(owner, ["answer", qid, "--keep", lastingId(kept(destination))]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /The agent took it/);
    }
    const made = await cli(owner, ["answer", await open("made", kept("localSettings")), "--keep", `keep-${"2".repeat(16)}`]);
    assert.equal(made.code, 1);
    assert.ok(oneLine(made.stderr), made.stderr);
    assert.match(made.stderr, /does not offer that choice/);

    const listed = await cli(owner, ["tasks", "--rules"], { COLUMNS: "120" });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /Bash\(npm test \*\) {2}\(in force\)\n {2}kept in this project's \.claude\/settings\.local\.json, until it is taken back: it outlives the task\n {2}granted by the owner on box/);
    assert.match(listed.stdout, /kept in this session only, in the agent's memory, until the session ends/);
    const rules = JSON.parse((await cli(owner, ["rules", "--json"])).stdout).rules;
    const [file, memory] = rules;
    const back = await cli(owner, ["rules", "revoke", file.rule_id]);
    assert.equal(back.code, 0, back.stderr);
    assert.match(back.stdout, /^Asked to take back Bash\(npm test \*\) from this project's \.claude\/settings\.local\.json on box…\nTaken back: removed Bash\(npm test \*\) from \/w\/\.claude\/settings\.local\.json\.\n$/);
    assert.match((await cli(owner, ["rules"])).stdout, /\(taken back\)/);
    // What reached the relay: the taking back signed by the owner's key
    // (checked with Node's WebCrypto), naming the rule and the answer that granted it.
    const [frame] = revokes;
    const said = JSON.parse(Buffer.from(frame.signed.statement, "base64url"));
    assert.deepEqual([said.owner, said.rule_id, said.answer_id], [owner.login.owner, file.rule_id, file.answer_id]);
    assert.match(file.answer_id, /^ans_/);
    assert.equal(createHash("sha256").update(Buffer.from(frame.signed.key, "base64url")).digest("base64url"), owner.login.owner);
    const pub = await webcrypto.subtle.importKey("raw", Buffer.from(frame.signed.key, "base64url"), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
    assert.ok(await webcrypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, Buffer.from(frame.signed.signature, "base64url"), Buffer.from(frame.signed.statement, "base64url")));
    const session = await cli(owner, ["rules", "revoke", memory.rule_id]);
    assert.equal(session.code, 1);
    assert.equal(session.stdout, "");
    assert.ok(oneLine(session.stderr), session.stderr);
    assert.match(session.stderr, /lasts only for its session/);
  } finally {
    ws.close();
  }
});
