// The live list in a real browser: the page holds one socket to its owner's
// list and reads the list only when it missed something; it resumes after
// the runtime drops its socket; two tabs each hear every change, another
// owner's page none of them; without a socket it reads the list, less often
// the longer that lasts.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startWorker, waitFor, sleep } from "../worker/helpers.js";
import { launch } from "./browser.js";
import * as world from "./world.js";

let w, browser;
before(async () => {
  w = await startWorker();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await w?.stop();
});

const say = (...args) => world.say(w, ...args);
const pairedPage = (options) => world.pairedPage(w, browser, options);
const { cards } = world;

/** What the page asks of the API from now on: list reads, tickets, sockets. */
function watch(page) {
  const seen = { reads: 0, tickets: 0, sockets: 0, other: [] };
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (path === "/v1/needs-you") seen.reads++;
    else if (path === "/v1/live" && r.method() === "POST") seen.tickets++;
    else if (path.startsWith("/v1/")) seen.other.push(`${r.method()} ${path}`);
  });
  page.on("websocket", (ws) => {
    if (new URL(ws.url()).pathname === "/v1/live") seen.sockets++;
  });
  return seen;
}

test("a card appears and goes with no read of the list once the socket is open, and an idle page asks nothing", async () => {
  const { task, context, page } = await pairedPage();
  await page.locator("#quiet").waitFor(); // the socket's first list is on screen
  const seen = watch(page);
  await say(task, { session: "a", action: "open", kind: "dialog", text: "Which region?" });
  await cards(page).first().waitFor({ timeout: 5000 });
  assert.equal(await cards(page).locator(".text").textContent(), "Which region?");
  await say(task, { session: "a", action: "close", reason: "answered" });
  await page.locator("#quiet").waitFor({ timeout: 5000 });
  await sleep(3000);
  assert.deepEqual(seen, { reads: 0, tickets: 0, sockets: 0, other: [] }, "nothing asked: the socket brought it all");
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a socket the runtime drops (a restart) is opened again, and the list catches up with it", async () => {
  const { task, context, page } = await pairedPage();
  await page.locator("#quiet").waitFor(); // the socket's first list is on screen
  await say(task, { session: "before", action: "open", kind: "dialog", text: "Before the restart?" });
  await cards(page).first().waitFor({ timeout: 5000 });
  const seen = watch(page);
  await w.restart();
  // Made while the page has no socket: it comes with the next one's list.
  await say(task, { session: "during", action: "open", kind: "dialog", text: "After the restart?" });
  await waitFor(async () => (await cards(page).count()) === 2, 15000);
  assert.deepEqual(await cards(page).locator(".text").allTextContents(), ["After the restart?", "Before the restart?"]);
  assert.equal(seen.sockets, 1, "one socket again");
  assert.ok(seen.reads <= 1, `${seen.reads} reads`);
  // And it is live again.
  await say(task, { session: "after", action: "open", kind: "dialog", text: "Live again?" });
  await waitFor(async () => (await cards(page).count()) === 3, 5000);
  assert.ok(seen.reads <= 1);
  await context.close();
});

test("two tabs of one owner each hear every change; another owner's page hears none", async () => {
  const ana = await pairedPage();
  const second = await ana.context.newPage();
  await second.goto(w.url);
  await second.locator("#signed-in").waitFor();
  const bea = await pairedPage();
  await Promise.all([ana.page, second, bea.page].map((p) => p.locator("#quiet").waitFor()));
  await say(ana.task, { session: "t", action: "open", kind: "dialog", text: "Ana's question?" });
  for (const p of [ana.page, second]) {
    await cards(p).first().waitFor({ timeout: 5000 });
    assert.equal(await cards(p).locator(".text").textContent(), "Ana's question?");
  }
  await sleep(500);
  assert.equal(await cards(bea.page).count(), 0);
  await ana.context.close();
  await bea.context.close();
});

test("without a socket the page reads the list instead, less often the longer it lasts, and takes a socket when it can", async () => {
  const { task, context, page } = await pairedPage();
  await page.locator("#quiet").waitFor(); // the socket's first list is on screen
  await page.route("**/v1/live", (route) => route.abort("connectionrefused"));
  const seen = watch(page);
  await w.restart();
  await say(task, { session: "f", action: "open", kind: "dialog", text: "Read without a socket?" });
  await cards(page).first().waitFor({ timeout: 10000 });
  assert.equal(seen.sockets, 0);
  assert.ok(seen.reads >= 1, "read the list");
  // Tries at 1.5, 3, 6, 12 s…: over 14 s, five tickets at most, each with a read.
  await sleep(14_000);
  assert.ok(seen.tickets <= 5 && seen.reads <= 6, JSON.stringify(seen));
  await page.unroute("**/v1/live");
  await waitFor(() => seen.sockets === 1, 30000);
  const reads = seen.reads;
  await say(task, { session: "f2", action: "open", kind: "dialog", text: "Live now?" });
  await waitFor(async () => (await cards(page).count()) === 2, 5000);
  assert.equal(seen.reads, reads, "live again: no read for it");
  await context.close();
});
