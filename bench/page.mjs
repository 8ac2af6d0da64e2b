// See bench/page.sh. Arguments: URL OWNER_TOKEN TASK_CREDENTIAL [--n N] [--idle-s S].
import { mkdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { launch, newPage } from "../tests/page/browser.js";
import { ROOT } from "../tests/worker/helpers.js";

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
  await page.goto(pairing.url);
  await page.click("#pair-ask-yes"); // "Pair this browser with …?"
  await page.locator("#signed-in").waitFor();
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
      const ids = new Set([...document.querySelectorAll("#questions > li")].map((el) => el.id));
      for (const id of ids) window.__seen[id] ??= now;
      for (const id of Object.keys(window.__seen)) if (!ids.has(id)) window.__gone[id] ??= now;
    }).observe(document.getElementById("questions"), { childList: true });
  });
  const appear = [];
  const leave = [];
  for (let i = 0; i < N; i++) {
    // Spread the reports over the poll cycle, as real ones are.
    await sleep(300 + Math.random() * 1500);
    const t0 = Date.now();
    const { question_id } = await say({ session: `b${i}`, action: "open", kind: "dialog", text: `Question ${i}?` });
    const id = `question-${question_id}`;
    let seen;
    while (!(seen = await page.evaluate((k) => window.__seen[k], id))) await sleep(20);
    appear.push(seen - t0);
    await sleep(200 + Math.random() * 1000);
    const t1 = Date.now();
    await say({ session: `b${i}`, action: "close", reason: "answered" });
    let gone;
    while (!(gone = await page.evaluate((k) => window.__gone[k], id))) await sleep(20);
    leave.push(gone - t1);
  }
  out.report_to_card_ms = { n: N, p50: pct(appear, 50), p95: pct(appear, 95), max: Math.max(...appear) };
  out.close_to_gone_ms = { n: N, p50: pct(leave, 50), p95: pct(leave, 95), max: Math.max(...leave) };

  // ---- idle: a visible page with nothing happening, then hidden
  let calls = [];
  context.on("response", (r) => {
    if (new URL(r.url()).pathname === "/v1/needs-you") calls.push(r.status());
  });
  await sleep(IDLE_S * 1000);
  const perMin = (n) => Math.round((n * 60) / IDLE_S);
  out.idle_visible = {
    seconds: IDLE_S,
    requests_per_min: perMin(calls.length),
    answered_304: calls.filter((s) => s === 304).length,
    answered_200: calls.filter((s) => s === 200).length,
    // The 304 path: the credential's row by its unique hash, then the owner's
    // revision by primary key (src/routes/needs_you.rs).
    d1_reads_per_min: perMin(calls.filter((s) => s === 304).length * 2 + calls.filter((s) => s === 200).length * 4),
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

// ---- screenshots with example questions
{
  const t2 = (await api("POST", "/v1/tasks", owner, { name: "docs site" })).credential;
  await api("POST", "/v1/reports", t2, { cli: "codex", session: "s1", seq: 1, action: "open", kind: "permission",
    text: "Run `npm publish --access public`?" });
  const t1 = (await api("POST", "/v1/tasks", owner, { name: "api refactor" })).credential;
  await api("POST", "/v1/reports", t1, { cli: "claude-code", session: "s1", seq: 1, action: "open", kind: "dialog",
    text: "Which auth strategy should the API use?",
    options: [{ label: "OAuth", description: "GitHub and Google sign-in" }, { label: "Email link" }, { label: "API keys only" }] });
  await api("POST", "/v1/reports", t1, { cli: "opencode", session: "s2", seq: 1, action: "open", kind: "reply",
    text: "The deploy job fails on purpose now. Shall I also update the docs?" });
  mkdirSync(join(ROOT, "docs", "screenshots"), { recursive: true });
  for (const [name, viewport, scheme] of [
    ["phone", { width: 360, height: 780 }, "light"],
    ["laptop", { width: 1280, height: 720 }, "light"],
    ["laptop-dark", { width: 1280, height: 720 }, "dark"],
  ]) {
    const pairing = await api("POST", "/v1/pairings", owner);
    const { context, page } = await newPage(browser, { viewport, colorScheme: scheme, deviceScaleFactor: 1 });
    await page.goto(pairing.url);
    await page.locator("#questions > li").nth(2).waitFor();
    await page.screenshot({ path: join(ROOT, "docs", "screenshots", `${name}.png`), fullPage: name === "phone" });
    await context.close();
  }
}

await browser.close();
console.log(JSON.stringify(out, null, 2));
