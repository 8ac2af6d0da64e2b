// See bench/page.sh. Arguments: URL OWNER_TOKEN TASK_CREDENTIAL [--n N] [--idle-s S].
import { mkdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { launch, newPage } from "../tests/page/browser.js";
import { ROOT } from "../tests/worker/helpers.js";
import { takesRequest } from "../tests/support/request.js";

const [url, owner, task] = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg("--n", 40);
const IDLE_S = arg("--idle-s", 60);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(method, path, token, body) {
  const r = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}` }, body: body && JSON.stringify(body) });
  return r.json();
}
let seq = 1;
const say = (fields) => api("POST", "/v1/reports", task, { cli: "claude-code", session: "bench", seq: seq++, ...fields });
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

const browser = await launch();
const out = {};

// ---- first load: every file a signed-in first visit fetches, service worker included
{
  const pairing = await api("POST", "/v1/pairings", owner);
  const { context, page } = await newPage(browser);
  const files = new Set();
  context.on("request", (r) => {
    const u = new URL(r.url());
    if (u.origin === url && !u.pathname.startsWith("/v1/")) files.add(u.pathname);
  });
  let liveSocket = null;
  page.on("websocket", (ws) => {
    if (new URL(ws.url()).pathname === "/v1/live") liveSocket = ws;
  });
  await page.goto(pairing.url);
  await page.click("#pair-ask-yes"); // "Pair this browser with …?"
  await page.locator("#signed-in").waitFor();
  await page.locator("#quiet").waitFor();
  await page.evaluate(() => navigator.serviceWorker.ready);
  await sleep(1500);
  const sizes = {};
  for (const f of [...files].sort()) {
    const path = join(ROOT, "public", f === "/" || f === "/pair" ? "index.html" : f);
    sizes[f] = gzipSync(readFileSync(path), { level: 9 }).length;
  }
  out.first_load = { files: sizes, gzip_bytes: Object.values(sizes).reduce((a, b) => a + b, 0) };
  const pairFiles = ["pair.js", "vendor/qrcode-generator-2.0.4.mjs"];
  out.pair_dialog_extra_gzip_bytes = pairFiles
    .map((f) => gzipSync(readFileSync(join(ROOT, "public", f)), { level: 9 }).length)
    .reduce((a, b) => a + b, 0);

  // ---- report to card, and close to card gone
  await page.evaluate(() => {
    window.__seen = {};
    window.__gone = {};
    new MutationObserver(() => {
      const now = Date.now();
      const ids = new Set([...document.querySelectorAll("#questions .card")].map((el) => el.id));
      for (const id of ids) window.__seen[id] ??= now;
      for (const id of Object.keys(window.__seen)) if (!ids.has(id)) window.__gone[id] ??= now;
    }).observe(document.getElementById("questions"), { childList: true });
  });
  // Beside the page, the list as it was read before it was live: a reader
  // that asks every 1.5 s with its ETag, on the same reports.
  const polled = { seen: {}, gone: {} };
  let polling = true;
  const poller = (async () => {
    let etag = null;
    while (polling) {
      const r = await fetch(`${url}/v1/needs-you`, { headers: { authorization: `Bearer ${owner}`, ...(etag && { "if-none-match": etag }) } });
      const now = Date.now();
      if (r.status === 200) {
        etag = r.headers.get("etag");
        const ids = new Set((await r.json()).questions.map((q) => `question-${q.question_id}`));
        for (const id of ids) polled.seen[id] ??= now;
        for (const id of Object.keys(polled.seen)) if (!ids.has(id)) polled.gone[id] ??= now;
      } else await r.arrayBuffer();
      await sleep(1500);
    }
  })();
  const appear = [];
  const leave = [];
  const polledAppear = [];
  const polledLeave = [];
  const until = async (read) => {
    let v;
    while (!(v = await read())) await sleep(20);
    return v;
  };
  for (let i = 0; i < N; i++) {
    // Spread the reports over the poll cycle, as real ones are.
    await sleep(300 + Math.random() * 1500);
    const t0 = Date.now();
    const { question_id } = await say({ session: `b${i}`, action: "open", kind: "dialog", text: `Question ${i}?` });
    const id = `question-${question_id}`;
    appear.push((await until(() => page.evaluate((k) => window.__seen[k], id))) - t0);
    polledAppear.push((await until(() => polled.seen[id])) - t0);
    await sleep(200 + Math.random() * 1000);
    const t1 = Date.now();
    await say({ session: `b${i}`, action: "close", reason: "answered" });
    leave.push((await until(() => page.evaluate((k) => window.__gone[k], id))) - t1);
    polledLeave.push((await until(() => polled.gone[id])) - t1);
  }
  polling = false;
  await poller;
  const spread = (xs) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: Math.max(...xs) });
  out.report_to_card_ms = { live: spread(appear), polled_every_1500ms: spread(polledAppear) };
  out.close_to_gone_ms = { live: spread(leave), polled_every_1500ms: spread(polledLeave) };

  // ---- idle: a visible page with nothing happening, then hidden. Every
  // request to the API counts, and every frame on the socket each way.
  let calls = [];
  const frames = { sent: 0, received: 0 };
  context.on("request", (r) => {
    if (new URL(r.url()).pathname.startsWith("/v1/")) calls.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  liveSocket?.on("framesent", () => frames.sent++);
  liveSocket?.on("framereceived", () => frames.received++);
  await sleep(IDLE_S * 1000);
  const perMin = (n) => Math.round((n * 60) / IDLE_S * 10) / 10;
  out.idle_visible = {
    seconds: IDLE_S,
    api_requests_per_min: perMin(calls.length),
    list_reads_per_min: perMin(calls.filter((c) => c === "GET /v1/needs-you").length),
    socket_frames_sent_per_min: perMin(frames.sent),
    socket_frames_received_per_min: perMin(frames.received),
  };
  calls = [];
  const cdp = await context.newCDPSession(page);
  await cdp.send("Emulation.setFocusEmulationEnabled", { enabled: false });
  await page.evaluate(() => {
    Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
    document.dispatchEvent(new Event("visibilitychange"));
  });
  await sleep(10_000);
  out.idle_hidden = { seconds: 10, requests: calls.length };
  await context.close();
}

// The figures first: the screenshots below change nothing of them.
console.log(JSON.stringify(out, null, 2));

// ---- screenshots with example questions: a permission answerable from
// here, a dialog with choices, a reply
{
  const report = async (credential, fields) => {
    const r = await fetch(`${url}/v1/reports`, { method: "POST", headers: { authorization: `Bearer ${credential}` },
      body: JSON.stringify({ session: "s1", seq: 1, ...fields }) });
    if (!r.ok) throw new Error(`a screenshot's report was refused: ${await r.text()}`);
  };
  const terminal = (host, cwd) => ({ kind: "tmux", host, cwd, target: "agents:0.0" });
  const t3 = (await api("POST", "/v1/tasks", owner, { name: "docs site" })).credential;
  await report(t3, { cli: "opencode", action: "open", kind: "reply", terminal: terminal("laptop", "~/docs"),
    text: "The deploy job fails on purpose now. Shall I also update the docs?" });
  const t2 = (await api("POST", "/v1/tasks", owner, { name: "api refactor" })).credential;
  await report(t2, { cli: "opencode", action: "open", kind: "dialog", text: "made up", terminal: terminal("build-box", "~/api"),
    ...takesRequest("choices", "opencode.question", [
      { question: "Which auth strategy should the API use?", header: "Auth",
        options: [{ label: "OAuth", description: "GitHub and Google sign-in" }, { label: "Email link" }, { label: "API keys only" }] }]) });
  const t1 = (await api("POST", "/v1/tasks", owner, { name: "release" })).credential;
  await report(t1, { cli: "claude-code", action: "open", kind: "permission", text: "made up", terminal: terminal("build-box", "~/app"),
    ...takesRequest("decision", "Bash", { command: "npm publish --access public", description: "Publish the package" }) });
  mkdirSync(join(ROOT, "docs", "screenshots"), { recursive: true });
  for (const [name, viewport, scheme] of [
    ["phone", { width: 360, height: 780 }, "light"],
    ["laptop", { width: 1280, height: 720 }, "light"],
    ["laptop-dark", { width: 1280, height: 720 }, "dark"],
  ]) {
    const pairing = await api("POST", "/v1/pairings", owner);
    const { context, page } = await newPage(browser, { viewport, colorScheme: scheme, deviceScaleFactor: 1 });
    await page.goto(pairing.url);
    await page.click("#pair-ask-yes"); // "Pair this browser with …?"
    await page.locator("#questions .card").nth(2).waitFor();
    // Each card as the person gets it: built on the page from its request,
    // with its Allow and Deny, its options, its reply box.
    await page.locator("#questions .decide:not([hidden])").waitFor();
    await page.locator("#questions .choose:not([hidden])").waitFor();
    await page.locator("#questions .answer:not([hidden])").waitFor();
    await page.screenshot({ path: join(ROOT, "docs", "screenshots", `${name}.png`), fullPage: name === "phone" });
    await context.close();
  }
}

await browser.close();
