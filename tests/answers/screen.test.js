// Show terminal, end to end: a stand-in agent (tests/answers/screen-agent.py)
// prints colours, HTML, a script tag and escape sequences into a real tmux
// pane and opens a permission through the real reporter; its relay starts;
// the page in Chromium (against the Worker in Miniflare) opens the card's
// view of that pane, follows a change on it, stops asking when closed, and
// ends when the question closes. Then every refusal, `needs-you show`, and
// that nothing of a screen was kept in D1. Every screen travels sealed under
// the owner's content key: the tests open what the Worker passes on with
// Node's own crypto, the page and `needs-you show` with theirs.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, waitFor, sleep } from "../worker/helpers.js";
import { REPORTER, startWorld } from "./world.js";
import { launch, newPage } from "../page/browser.js";
import { keyedId, openText } from "../support/sealing.js";

const NEEDS_YOU = join(ROOT, "target", "release", "needs-you");

let world, w, scratch, api, owner, browser;
before(async () => {
  world = await startWorld("screen", { taskName: "build" });
  ({ w, scratch, api, owner } = world);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await world?.stop();
});

/**
 * The stand-in agent (screen-agent.py) in a new tmux server's pane, as
 * session `name`; resolves once its permission is listed and its relay
 * shows the pane.
 */
async function agentInTmux(o, env = {}, name = undefined) {
  const agent = await world.agentInTmux(o, { agent: "screen-agent.py", env, session: name, size: [100, 20] });
  // Its relay connects in the background: the first screen waits for it.
  assert.ok(await waitFor(async () => (await screen(o.token, agent.q.question_id)).status === 200, 10000), "the relay shows the pane");
  return agent;
}

const screen = (token, qid, seen) => api("GET", `/v1/questions/${qid}/screen${seen ? `?seen=${seen}` : ""}`, token);

/** The scope question `q`'s screen is sealed in: its session and open's `seq`. */
const scopeOf = (q) => `${q.session}\n${q.open_seq}`;
/** The screen in a 200 answer for `q`, opened with owner `o`'s content key. */
const opened = async (o, q, r) => JSON.parse(await openText(o.contentKey, o.key.fingerprint, scopeOf(q), "screen", r.body.sealed));

/** Closes the agent's question as its next hook would (the tool ran). */
function closeQuestion(o, session) {
  const event = { session_id: session, hook_event_name: "PostToolUse", tool_name: "Bash" };
  spawnSync(REPORTER, ["--cli", "claude-code"], {
    input: JSON.stringify(event),
    env: { PATH: process.env.PATH, NEEDS_YOU_URL: w.url, NEEDS_YOU_TOKEN: o.task.credential, NEEDS_YOU_STATE_DIR: join(scratch, "state") },
  });
}

test("a session whose name holds &, =, %, + and accents reaches its relay whole, and its screen is shown", async () => {
  const o = await owner();
  // agentInTmux waits for a 200 screen: a name garbled on its way to the
  // relay would find no pane recorded under it and be refused.
  const odd = "ana's build & co=1 %41+ ünï ✓";
  const { session, q } = await agentInTmux(o, {}, odd);
  assert.equal(q.session, odd);
  const r = await screen(o.token, q.question_id);
  assert.equal(r.status, 200, r.text);
  closeQuestion(o, session);
});

async function pairedPage(o, rights) {
  const pairing = (await api("POST", "/v1/pairings", o.token, rights ? { rights } : undefined)).body;
  const { context, page } = await newPage(browser, { viewport: { width: 412, height: 860 } });
  await page.goto(pairing.url);
  await page.click("#pair-ask-yes");
  await page.locator("#signed-in").waitFor();
  return { context, page };
}

test("Show terminal opens the pane as it looks, text and colours, HTML and scripts as text; follows a change; stops when closed; ends with the question", async () => {
  const o = await owner();
  const { dir, session, q } = await agentInTmux(o);
  assert.equal(q.kind, "permission");
  assert.equal(q.screen, true, "the owner's list offers the screen");
  const { context, page } = await world.pairedByOwner(o, (opts) => newPage(browser, opts), { viewport: { width: 412, height: 860 } });
  const passedOn = [];
  page.on("response", async (r) => /\/v1\/questions\/[^/]+\/screen/.test(r.url()) && r.ok() && passedOn.push(await r.text()));
  const asked = [];
  page.on("request", (r) => r.url().includes("/screen") && asked.push(Date.now()));

  const card = page.locator(`#question-${q.question_id}`);
  await card.locator(".show-screen").click();
  const lines = page.locator("#screen-lines");
  await lines.locator("text=build failed").waitFor({ timeout: 10000 });
  assert.ok(await page.locator("#screen-view").evaluate((d) => d.open), "the view is open");
  const text = await lines.textContent();
  assert.match(text, /Error: build failed in src\/main\.rs/);
  assert.ok(text.includes("<b>bold?</b> <script>window.__owned = 1</script> <img src=x onerror=\"window.__owned=2\">"), text);
  assert.match(text, /a hyperlink and orange/);
  assert.ok(!text.includes("owned title") && !text.includes("evil.example"), "sequences are not shown as text either");
  // Colours and attributes as classes made from numbers; nothing interpreted.
  assert.deepEqual(await lines.locator("span.fg-1.b").allTextContents(), ["Error:"]);
  assert.deepEqual(await lines.locator("span.fg-2").allTextContents(), ["src/main.rs"]);
  assert.deepEqual(await lines.locator("span.fg-208").allTextContents(), ["orange"]);
  assert.deepEqual(await lines.locator("span.fg-rev.bg-rev").allTextContents(), ["reversed"]);
  assert.equal(await lines.locator("script, img, a, b").count(), 0, "no element came from the pane");
  assert.equal(await page.evaluate(() => window.__owned), undefined, "nothing the pane printed ran");
  const red = await lines.locator("span.fg-1").evaluate((e) => getComputedStyle(e).color);
  assert.equal(red, "rgb(205, 0, 0)");
  assert.equal(await lines.locator(".cursor-line").count(), 1, "the cursor's line is marked");
  assert.match(await lines.locator(".cursor-line").textContent(), /Allow rm -rf build\/ \? \(y\/n\)/);

  // A change on the pane reaches the open view.
  writeFileSync(join(dir, "say"), "\x1b[33mcompiling 2 of 9\x1b[0m");
  await lines.locator("span.fg-3", { hasText: "compiling 2 of 9" }).waitFor({ timeout: 5000 });

  // Closed, it asks no more.
  await page.click("#screen-view button");
  assert.ok(!(await page.locator("#screen-view").evaluate((d) => d.open)));
  await sleep(300);
  const before = asked.length;
  await sleep(1500);
  assert.equal(asked.length, before, "no screen asked for once the view closed");

  // Open again, then the question closes: the view ends, and says so.
  await card.locator(".show-screen").click();
  await lines.locator("text=compiling 2 of 9").waitFor({ timeout: 10000 });
  closeQuestion(o, session);
  await page.locator("#screen-state", { hasText: "The question closed" }).waitFor({ timeout: 10000 });
  assert.ok(await page.locator("#screen-state").evaluate((e) => e.classList.contains("failed")));
  const ended = asked.length;
  await sleep(1500);
  assert.equal(asked.length, ended, "an ended view asks no more");
  assert.deepEqual(page.errors, []);
  await context.close();
  // What the Worker passed on was sealed: none of the pane's words in it.
  assert.ok(passedOn.some((t) => JSON.parse(t).sealed), "screens came");
  for (const t of passedOn) assert.ok(!t.includes("build failed") && !t.includes("compiling"), t.slice(0, 200));

  // Nothing of any screen was kept.
  const tables = (await w.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'").all()).results;
  for (const { name } of tables) {
    const rows = (await w.db.prepare(`SELECT * FROM "${name}"`).all()).results;
    assert.ok(!JSON.stringify(rows).includes("build failed"), `table ${name} holds nothing of a screen`);
    assert.ok(!JSON.stringify(rows).includes("compiling 2 of 9"), `table ${name} holds nothing of a screen`);
  }
});

test("the screen's wire: unchanged is a digest alone; bounded to the pane; cleaned of every escape", async () => {
  const o = await owner();
  const { q } = await agentInTmux(o);
  const first = await screen(o.token, q.question_id);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.match(first.body.digest, /^[0-9a-f]{16}$/);
  assert.match(first.body.sealed, /^s1\.1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
  assert.ok(!first.body.sealed.includes("build"), "sealed: none of the pane's words");
  const s = await opened(o, q, first);
  assert.equal(s.width, 100);
  assert.equal(s.height, 20);
  assert.ok(s.lines.length <= 20);
  assert.ok(!JSON.stringify(s).includes("\\u001b"), "no escape character in the screen");
  // Its digest keyed under the content key: not the plain hash of what it
  // shows, which a server could test a guess of a screen against.
  const plain = createHash("sha256").update(JSON.stringify(s)).digest("hex").slice(0, 16);
  assert.notEqual(first.body.digest, plain);
  assert.equal(first.body.digest, keyedId(o.contentKey, o.key.fingerprint, `screen ${plain}`).slice(0, 16));
  await sleep(250);
  const again = await screen(o.token, q.question_id, first.body.digest);
  assert.equal(again.status, 200);
  assert.equal(again.body.digest, first.body.digest);
  assert.equal(again.body.sealed, undefined, "an unchanged screen is not sent again");
  // Sealed as the screen of this session's open as the machine recorded it:
  // it opens as no other open's, no other session's, and under no other
  // owner's key.
  await assert.rejects(openText(o.contentKey, o.key.fingerprint, `${q.session}\n${q.open_seq + 1}`, "screen", first.body.sealed));
  await assert.rejects(openText(o.contentKey, o.key.fingerprint, `other\n${q.open_seq}`, "screen", first.body.sealed));
  const stranger = await owner();
  await assert.rejects(openText(stranger.contentKey, o.key.fingerprint, scopeOf(q), "screen", first.body.sealed));
});

test("refusals: a device without the right, another owner, not in tmux, --no-screen, a pane at a shell, a closed question, a revoked task, no relay", async () => {
  const o = await owner();
  const { dir, session, q } = await agentInTmux(o);

  // A device paired without the screen right: no button, and 403.
  const answerOnly = (await api("POST", "/v1/pairings", o.token, { rights: ["answer"] })).body;
  const dev = (await api("POST", "/v1/devices", null, { code: answerOnly.code, name: "phone" })).body;
  const listed = (await api("GET", "/v1/needs-you", dev.token)).body.questions.find((x) => x.question_id === q.question_id);
  assert.equal(listed.screen, false, "the list does not offer it");
  const refused = await screen(dev.token, q.question_id);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, "not_permitted");
  const { context, page } = await pairedPage(o, ["answer"]);
  await page.locator(`#question-${q.question_id}`).waitFor();
  assert.ok(await page.locator(`#question-${q.question_id} .show-screen`).isHidden(), "no Show terminal without the right");
  await context.close();

  // Another owner: no such question.
  const other = await owner();
  assert.equal((await screen(other.token, q.question_id)).status, 404);

  // A question reported outside tmux, and one whose relay is not connected.
  const report = async (t, terminal, sess) =>
    api("POST", "/v1/reports", t.credential, { action: "open", cli: "claude-code", session: sess, seq: 1, kind: "permission", text: "Run it?", terminal });
  await report(o.task, { kind: "terminal", host: "box", cwd: "/src" }, "plain");
  await report(o.task, { kind: "tmux", host: "box", cwd: "/src", target: "x:0.0" }, "nobody");
  const all = (await api("GET", "/v1/needs-you", o.token)).body.questions;
  const plain = all.find((x) => x.session === "plain");
  assert.equal(plain.screen, false);
  const notTmux = await screen(o.token, plain.question_id);
  assert.deepEqual([notTmux.status, notTmux.body.error], [409, "not_in_tmux"]);

  // A task started without screens: the server refuses before asking anyone.
  const quiet = await owner({ screen: false });
  await report(quiet.task, { kind: "tmux", host: "box", cwd: "/src", target: "x:0.0" }, "q");
  const quietQ = (await api("GET", "/v1/needs-you", quiet.token)).body.questions[0];
  assert.equal(quietQ.screen, false);
  const noScreen = await screen(quiet.token, quietQ.question_id);
  assert.deepEqual([noScreen.status, noScreen.body.error], [409, "no_screen"]);
  assert.equal((await api("POST", "/v1/tasks", o.token, { name: "x", screen: "no" })).status, 400);

  /** What a relay started with `env` (in a state folder of its own, then
   *  stopped) answers to a screen asked of its question. */
  const relaySays = async (name, env) => {
    const who = await owner();
    const stateDir = join(scratch, `state-${name}`);
    const { q: asked } = await world.agentInTmux(who, {
      agent: "screen-agent.py", session: name, size: [100, 20], env: { NEEDS_YOU_STATE_DIR: stateDir, ...env },
    });
    const said = await waitFor(async () => {
      const r = await screen(who.token, asked.question_id);
      return r.status !== 409 || r.body.error !== "relay_offline" ? r : null;
    }, 10000);
    spawnSync("pkill", ["-f", `__relay --state-dir ${stateDir}`]);
    return said;
  };
  // NEEDS_YOU_NO_SCREEN on the agent's machine: its relay refuses too.
  const saysNo = await relaySays("no", { NEEDS_YOU_NO_SCREEN: "1" });
  assert.deepEqual([saysNo.status, saysNo.body.error, saysNo.body.reason_code], [409, "screen_refused", "terminal"]);
  assert.match(saysNo.body.message, /--no-screen/);
  // A machine that holds no content key shows no screen: none goes unsealed.
  const unsealed = await relaySays("keyless", { NEEDS_YOU_CONTENT_KEYS: "" });
  assert.deepEqual([unsealed.status, unsealed.body.error, unsealed.body.reason_code], [409, "screen_refused", "setup"]);
  assert.match(unsealed.body.message, /^this machine holds no content key, so it shows no screen: log it in with the line `needs-you pair` prints/);

  // No relay for that task's question: the machine is not connected.
  const nobody = all.find((x) => x.session === "nobody");
  assert.equal(nobody.screen, true);
  const other2 = await owner();
  await report(other2.task, { kind: "tmux", host: "box", cwd: "/src", target: "x:0.0" }, "alone");
  const alone = (await api("GET", "/v1/needs-you", other2.token)).body.questions[0];
  const offline = await screen(other2.token, alone.question_id);
  assert.deepEqual([offline.status, offline.body.error], [409, "relay_offline"]);

  // A relay of an older reporter (it connects without saying it can show
  // screens) is never asked, which it would not answer: told at once.
  const old = await world.relayByHand(other2.task.credential);
  const askedAt = Date.now();
  const outdated = await screen(other2.token, alone.question_id);
  assert.deepEqual([outdated.status, outdated.body.error], [409, "relay_outdated"], outdated.text);
  assert.match(outdated.body.message, /older report-prompt/);
  assert.ok(Date.now() - askedAt < 3000, "no wait for an answer that never comes");
  old.ws.close(1000);

  // The relay is connected, but no pane of this machine is that question's.
  const unknown = await screen(o.token, nobody.question_id);
  assert.deepEqual([unknown.status, unknown.body.error], [409, "screen_refused"]);
  assert.match(unknown.body.message, /no record of that question's terminal/);

  // The agent exits to a shell: the pane is not shown.
  writeFileSync(join(dir, "shell"), "");
  const atShell = await waitFor(async () => {
    const r = await screen(o.token, q.question_id);
    return r.status === 409 ? r : null;
  }, 10000);
  assert.deepEqual([atShell.body.error, atShell.body.reason_code], ["screen_refused", "terminal"]);
  assert.match(atShell.body.message, /shell prompt \(bash\)/);

  // Closed, and revoked.
  closeQuestion(o, session);
  const closed = await waitFor(async () => {
    const r = await screen(o.token, q.question_id);
    return r.body.error === "closed" ? r : null;
  }, 10000);
  assert.equal(closed.status, 409);
  await api("DELETE", `/v1/tasks/${o.task.task_id}`, o.token);
  const revoked = await screen(o.token, plain.question_id);
  assert.deepEqual([revoked.status, revoked.body.error], [409, "closed"]);
});

test("needs-you show prints the pane once: plain text to a pipe, nothing the pane printed as a sequence; a login without the right is told so", async () => {
  const o = await owner();
  const { q } = await agentInTmux(o);
  const login = async (rights, link) => {
    const home = mkdtempSync(join(scratch, "home-"));
    link ??= (await api("POST", "/v1/pairings", o.token)).body.url;
    const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    // A link from the owner's `pair` carries its secret: in the environment, never the command line.
    const r = spawnSync(NEEDS_YOU, ["login", new URL(link).origin, ...(rights ? ["--allow", rights] : [])], { env: { ...env, NEEDS_YOU_CODE: link }, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return env;
  };
  // Logged in from a bare link, it may see terminals but holds no content
  // key: it says so in one line, and shows nothing.
  const unkeyed = spawnSync(NEEDS_YOU, ["show", q.question_id], { env: await login("screen"), encoding: "utf8" });
  assert.equal(unkeyed.status, 1);
  assert.equal(unkeyed.stdout, "");
  assert.match(unkeyed.stderr, /^needs-you: this login holds no content key, so it cannot open a screen: log in with the link `needs-you pair` shows/);
  assert.equal(unkeyed.stderr.trim().split("\n").length, 1, unkeyed.stderr);
  // From the owner's `pair` link, the owner's key gives it the content key.
  const pairing = world.ownerCli(o)("pair", "--json", "--rights", "screen");
  const link = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
  const sees = await login("screen", link);
  assert.equal((await pairing.ended).code, 0);
  const shown = spawnSync(NEEDS_YOU, ["show", q.question_id], { env: sees, encoding: "utf8" });
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /Error: build failed in src\/main\.rs/);
  assert.match(shown.stdout, /<script>window.__owned = 1<\/script>/);
  assert.ok(!shown.stdout.includes("\x1b"), "no escape reaches a pipe");

  const blind = await login();
  const no = spawnSync(NEEDS_YOU, ["show", q.question_id], { env: blind, encoding: "utf8" });
  assert.equal(no.status, 1);
  assert.equal(no.stdout, "");
  assert.equal(no.stderr.trim().split("\n").length, 1, no.stderr);
  assert.match(no.stderr, /see the agents' terminals/);
});
