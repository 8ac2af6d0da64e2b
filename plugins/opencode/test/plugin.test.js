// The OpenCode plugin, driven with realistic event sequences; what reaches a
// real HTTP sink on 127.0.0.1 through the real report-prompt of this repository.
import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { NeedsYou } from "../needs-you.js";
import { startSink } from "../../../tests/support/sink.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const REPORTER = process.env.NEEDS_YOU_TEST_REPORTER || join(ROOT, "target", "release", "report-prompt");

let sink, stateRoot;
// What reached the sink: the authorization, the path and the parsed report.
const received = () =>
  sink.received.map((r) => ({ auth: r.headers.authorization, path: r.url, body: JSON.parse(r.body) }));
before(async () => {
  sink = await startSink();
  stateRoot = mkdtempSync(join(tmpdir(), "needs-you-opencode-"));
  process.env.NEEDS_YOU_URL = sink.url;
  process.env.NEEDS_YOU_TOKEN = "nyt_opencode_test";
});
after(async () => {
  await sink.stop();
  rmSync(stateRoot, { recursive: true, force: true });
});
beforeEach((t) => {
  sink.received.length = 0;
  process.env.NEEDS_YOU_STATE_DIR = join(stateRoot, t.name.replace(/\W+/g, "-"));
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The plugin as OpenCode loads it; `client` stands for OpenCode's SDK client when given. */
async function plugin(client) {
  const hooks = await NeedsYou({ directory: "/repo", client }, { reporter: REPORTER });
  return async (type, properties) => hooks.event({ event: { id: `evt_${Math.random()}`, type, properties } });
}

/** Waits for `n` reports, then a little longer to catch any extra; returns them in seq order. */
async function reports(n) {
  const end = Date.now() + 5000;
  while (sink.received.length < n && Date.now() < end) await sleep(20);
  await sleep(300);
  return received().sort((a, b) => a.body.seq - b.body.seq).map((r) => r.body);
}

const S = "ses_main";
const asked = (id = "que_1", session = S) => ({
  id,
  sessionID: session,
  questions: [{ question: "Which package manager?", header: "Pkg", multiple: false,
    options: [{ label: "bun", description: "fast" }, { label: "npm", description: "default" }] }],
  tool: { messageID: "msg_1", callID: "call_1" },
});

test("a dialog opened and answered", async () => {
  const emit = await plugin();
  await emit("question.asked", asked());
  await emit("question.replied", { sessionID: S, requestID: "que_1", answers: [["bun"]] });
  const got = await reports(2);
  assert.equal(got.length, 2);
  assert.deepEqual(
    { action: got[0].action, kind: got[0].kind, cli: got[0].cli, session: got[0].session, text: got[0].text },
    { action: "open", kind: "dialog", cli: "opencode", session: S, text: "Which package manager?" },
  );
  assert.deepEqual(got[0].options, [{ label: "bun", description: "fast" }, { label: "npm", description: "default" }]);
  assert.deepEqual([got[1].action, got[1].reason], ["close", "answered"]);
  assert.equal(received()[0].auth, "Bearer nyt_opencode_test");
  assert.equal(received()[0].path, "/v1/reports");
});

test("a permission granted, then one rejected", async () => {
  const emit = await plugin();
  const perm = (id) => ({ id, sessionID: S, permission: "bash", patterns: ["git push origin main"],
    always: ["git push *"], metadata: { command: "git push origin main" } });
  await emit("permission.asked", perm("per_1"));
  await emit("permission.replied", { sessionID: S, requestID: "per_1", reply: "once" });
  await emit("permission.asked", perm("per_2"));
  await emit("permission.replied", { sessionID: S, requestID: "per_2", reply: "reject" });
  const got = await reports(4);
  assert.deepEqual(got.map((r) => r.action), ["open", "close", "open", "close"]);
  assert.equal(got[0].kind, "permission");
  assert.equal(got[0].text, "bash: git push origin main");
});

test("the older permission.updated shape opens a permission", async () => {
  const emit = await plugin();
  await emit("permission.updated", { id: "per_9", type: "bash", pattern: ["rm -rf *"], sessionID: S,
    messageID: "msg_2", callID: "c", title: "rm -rf build", metadata: {}, time: { created: 1 } });
  await emit("permission.replied", { sessionID: S, permissionID: "per_9", response: "once" });
  const got = await reports(2);
  assert.deepEqual(got.map((r) => [r.action, r.kind ?? r.reason]), [["open", "permission"], ["close", "answered"]]);
  // The title, then what it allows that the title does not say.
  assert.equal(got[0].text, 'rm -rf build\n\npattern: ["rm -rf *"]\ntype: bash');
});

test("busy and idle around an open dialog do not close it", async () => {
  const emit = await plugin();
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  await emit("question.asked", asked());
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  await emit("session.status", { sessionID: S, status: { type: "idle" } });
  await emit("session.idle", { sessionID: S });
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  const open = await reports(1);
  assert.deepEqual(open.map((r) => r.action), ["open"], "still open");
  await emit("question.replied", { sessionID: S, requestID: "que_1", answers: [["npm"]] });
  const got = await reports(2);
  assert.deepEqual(got.map((r) => r.action), ["open", "close"]);
});

test("two pending dialogs in one session close when the last is answered", async () => {
  const emit = await plugin();
  const perm = (id, command) => ({ id, sessionID: S, permission: "bash", patterns: [command], metadata: { command } });
  await emit("permission.asked", perm("per_a", "npm test"));
  await emit("permission.asked", perm("per_b", "npm run lint"));
  await emit("permission.replied", { sessionID: S, requestID: "per_a", reply: "once" });
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  const open = await reports(2);
  assert.deepEqual(open.map((r) => [r.action, r.text]), [["open", "bash: npm test"], ["open", "bash: npm run lint"]],
    "the first answer closes nothing while the second waits");
  await emit("permission.replied", { sessionID: S, requestID: "per_b", reply: "once" });
  const got = await reports(3);
  assert.deepEqual(got.map((r) => r.action), ["open", "open", "close"]);
});

test("a child (subagent) session asking is ignored", async () => {
  const emit = await plugin();
  await emit("session.created", { sessionID: "ses_child", info: { id: "ses_child", parentID: S, title: "explore" } });
  await emit("question.asked", asked("que_c", "ses_child"));
  await emit("message.updated", { info: { id: "msg_c", sessionID: "ses_child", role: "assistant" } });
  await emit("message.part.updated", { part: { id: "p", messageID: "msg_c", sessionID: "ses_child", type: "text", text: "Proceed?" } });
  await emit("session.status", { sessionID: "ses_child", status: { type: "idle" } });
  assert.deepEqual(await reports(0), []);
  // The same question asked by its parent is reported.
  await emit("question.asked", asked("que_p", S));
  const got = await reports(1);
  assert.deepEqual(got.map((r) => [r.action, r.session]), [["open", S]]);
});

// OpenCode's client as the plugin uses it: `session.get` answers `{ data }`.
const clientWith = (sessions) => ({
  session: {
    get: async ({ path }) => ({ data: sessions[path.id] }),
  },
});

const perm = (id, session, command = "npm test") => ({
  id, sessionID: session, permission: "bash", patterns: [command], metadata: { command },
});

test("a subagent's permission is reported under its top-level session; its other events are not", async () => {
  const emit = await plugin();
  await emit("session.created", { sessionID: "ses_child", info: { id: "ses_child", parentID: S, title: "explore" } });
  await emit("session.created", { sessionID: "ses_grandchild", info: { id: "ses_grandchild", parentID: "ses_child" } });
  await emit("permission.asked", perm("per_c", "ses_grandchild", "rm -rf dist"));
  await emit("session.status", { sessionID: "ses_grandchild", status: { type: "busy" } });
  await emit("permission.replied", { sessionID: "ses_grandchild", requestID: "per_c", reply: "once" });
  const got = await reports(2);
  assert.deepEqual(got.map((r) => [r.action, r.session, r.kind ?? r.reason]), [
    ["open", S, "permission"],
    ["close", S, "answered"],
  ]);
  assert.equal(got[0].text, "bash: rm -rf dist");
});

test("a subagent session that existed before the plugin loaded is known from OpenCode's client", async () => {
  const emit = await plugin(clientWith({ ses_old: { id: "ses_old", parentID: S }, [S]: { id: S } }));
  // No session.created for ses_old: it was created before the plugin loaded.
  await emit("message.updated", { info: { id: "msg_o", sessionID: "ses_old", role: "assistant" } });
  await emit("message.part.updated", { part: { id: "po", messageID: "msg_o", sessionID: "ses_old", type: "text", text: "Shall I?" } });
  await emit("session.status", { sessionID: "ses_old", status: { type: "idle" } });
  await emit("permission.asked", perm("per_o", "ses_old"));
  const got = await reports(1);
  assert.deepEqual(got.map((r) => [r.action, r.session, r.kind]), [["open", S, "permission"]],
    "the subagent's reply is not the person's question; its permission is");
});

test("a session the client cannot tell about is taken for the person's", async () => {
  const failing = { session: { get: async () => { throw new Error("offline"); } } };
  const emit = await plugin(failing);
  await emit("question.asked", asked("que_u", "ses_unknown"));
  const got = await reports(1);
  assert.deepEqual(got.map((r) => [r.action, r.session]), [["open", "ses_unknown"]]);
});

test("a reply ending in ？ opens a reply; the next prompt closes it", async () => {
  const emit = await plugin();
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  await emit("message.updated", { info: { id: "msg_u", sessionID: S, role: "user" } });
  await emit("message.part.updated", { part: { id: "pu", messageID: "msg_u", sessionID: S, type: "text", text: "Do it?" } });
  await emit("message.updated", { info: { id: "msg_a", sessionID: S, role: "assistant" } });
  await emit("message.part.updated", { part: { id: "pa", messageID: "msg_a", sessionID: S, type: "text", text: "" } });
  await emit("message.part.updated", { part: { id: "pa", messageID: "msg_a", sessionID: S, type: "text", text: "I can deploy now. これでいいですか？" } });
  await emit("message.part.updated", { part: { id: "ps", messageID: "msg_a", sessionID: S, type: "text", text: "hidden", synthetic: true } });
  await emit("session.status", { sessionID: S, status: { type: "idle" } });
  await emit("session.idle", { sessionID: S });
  const open = await reports(1);
  assert.equal(open.length, 1, "idle twice is one turn end");
  assert.deepEqual([open[0].action, open[0].kind, open[0].text], ["open", "reply", "I can deploy now. これでいいですか？"]);
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  const got = await reports(2);
  assert.deepEqual([got[1].action, got[1].reason], ["close", "prompt_submitted"]);
});

test("a reply interrupted mid-stream is judged by the text it streamed", async () => {
  const emit = await plugin();
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  await emit("message.updated", { info: { id: "msg_i", sessionID: S, role: "assistant" } });
  await emit("message.part.updated", { part: { id: "pi", messageID: "msg_i", sessionID: S, type: "text", text: "" } });
  for (const delta of ["I found the bug. ", "Shall I ", "fix it?"]) {
    await emit("message.part.delta", { sessionID: S, messageID: "msg_i", partID: "pi", field: "text", delta });
  }
  // Esc Esc: the idle comes before any full update of the part.
  await emit("session.status", { sessionID: S, status: { type: "idle" } });
  const got = await reports(1);
  assert.deepEqual(got.map((r) => [r.action, r.kind, r.text]), [["open", "reply", "I found the bug. Shall I fix it?"]]);
});

test("quitting OpenCode closes what is open in its sessions", async () => {
  const hooks = await NeedsYou({ directory: "/repo" }, { reporter: REPORTER });
  const emit = (type, properties) => hooks.event({ event: { type, properties } });
  await emit("message.updated", { info: { id: "msg_q", sessionID: S, role: "assistant" } });
  await emit("message.part.updated", { part: { id: "pq", messageID: "msg_q", sessionID: S, type: "text", text: "Deploy now?" } });
  await emit("session.status", { sessionID: S, status: { type: "idle" } });
  await hooks.dispose();
  const got = await reports(2);
  assert.deepEqual(got.map((r) => [r.action, r.kind ?? r.reason]), [["open", "reply"], ["close", "session_end"]]);
});

test("a turn that ends without a question sends nothing", async () => {
  const emit = await plugin();
  await emit("session.status", { sessionID: S, status: { type: "busy" } });
  await emit("message.updated", { info: { id: "msg_a", sessionID: S, role: "assistant" } });
  await emit("message.part.updated", { part: { id: "pa", messageID: "msg_a", sessionID: S, type: "text", text: "Done." } });
  await emit("session.status", { sessionID: S, status: { type: "idle" } });
  assert.deepEqual(await reports(0), []);
});

test("a burst of reports stays in order", async () => {
  const emit = await plugin();
  for (let i = 0; i < 8; i++) {
    await emit("question.asked", { ...asked(`que_${i}`), questions: [{ question: `Q${i}?`, options: [] }] });
    await emit("question.replied", { sessionID: S, requestID: `que_${i}`, answers: [["x"]] });
  }
  const got = await reports(16);
  assert.equal(got.length, 16);
  const expected = [];
  for (let i = 0; i < 8; i++) expected.push(`open Q${i}?`, "close");
  assert.deepEqual(got.map((r) => (r.action === "open" ? `open ${r.text}` : "close")), expected);
});

test("a broken event never throws into OpenCode", async () => {
  const hooks = await NeedsYou({}, { reporter: "/nonexistent/report-prompt" });
  await hooks.event({ event: null });
  await hooks.event({ event: { type: "question.asked", properties: null } });
  await hooks.event({ event: { type: "question.asked", properties: asked() } });
  await hooks.event({});
  await sleep(100);
  assert.deepEqual(received(), []);
});

// ---- answers from afar

/** OpenCode's client as far as the plugin replies through it: what it posted. */
function replyingClient() {
  const posts = [];
  return { posts, _client: { post: async (req) => (posts.push(req), { data: true }) } };
}
const waiters = () => spawnSync("pgrep", ["-f", `${REPORTER} __await --cli opencode`], { encoding: "utf8" }).stdout.trim();

test("with a client that can reply, a dialog says it takes answers from afar, with its request's digest", async () => {
  process.env.NEEDS_YOU_RELAY_IDLE_S = "1";
  const client = replyingClient();
  const emit = await plugin(client);
  await emit("permission.asked", { id: "per_a", sessionID: S, permission: "bash", patterns: ["make deploy"], metadata: { command: "make deploy" } });
  await emit("question.asked", asked("que_a", "ses_other"));
  const got = await reports(2);
  const byKind = Object.fromEntries(got.map((r) => [r.kind, r]));
  assert.equal(byKind.permission.takes, "decision");
  assert.equal(byKind.dialog.takes, "choices");
  for (const r of got) assert.match(r.digest, /^[0-9a-f]{64}$/);
  // The request itself goes with it, for the Worker to build the card from.
  assert.equal(byKind.permission.request.tool, "opencode.permission");
  assert.equal(byKind.permission.request.input.metadata.command, "make deploy");
  assert.equal(byKind.dialog.request.tool, "opencode.question");
  assert.deepEqual(byKind.dialog.request.input.map((q) => q.options.map((o) => o.label)), [["bun", "npm"]]);
  // One waiter per dialog, until the terminal answers it; nothing was replied.
  assert.ok(await waitUntil(() => waiters().split("\n").filter(Boolean).length === 2), waiters());
  await emit("permission.replied", { sessionID: S, requestID: "per_a", reply: "once" });
  assert.ok(await waitUntil(() => waiters().split("\n").filter(Boolean).length === 1), "the answered one's waiter ended");
  await emit("question.replied", { sessionID: "ses_other", requestID: "que_a", answers: [["bun"]] });
  assert.ok(await waitUntil(() => !waiters()), "no waiter is left");
  assert.deepEqual(client.posts, []);
});

test("without a client that can reply, nothing says it takes answers from afar, and no waiter starts", async () => {
  const emit = await plugin();
  await emit("permission.asked", { id: "per_b", sessionID: S, permission: "bash", patterns: ["ls"], metadata: { command: "ls" } });
  const [open] = await reports(1);
  assert.equal(open.takes, undefined);
  assert.equal(open.digest, undefined);
  assert.equal(waiters(), "");
  await emit("permission.replied", { sessionID: S, requestID: "per_b", reply: "once" });
});

async function waitUntil(check, ms = 5000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(50);
  }
  return check();
}
