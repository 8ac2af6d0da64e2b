// What the page's tests share: the API over real HTTP as the browser reaches
// it, reports, and a page paired to a new owner through a pairing link.
import assert from "node:assert/strict";
import { ADMIN } from "../worker/helpers.js";
import { newPage } from "./browser.js";

/** The API of the Worker `w` over real HTTP. */
export async function api(w, method, path, token, body) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const resp = await fetch(w.url + path, { method, headers, body: body && JSON.stringify(body) });
  const json = await resp.json().catch(() => null);
  return { status: resp.status, body: json, headers: resp.headers };
}

let seq = 1;
/** A report of `task`'s, which must be taken. */
export async function say(w, task, fields) {
  const r = await api(w, "POST", "/v1/reports", task.credential, { cli: "claude-code", session: "s", seq: seq++, ...fields });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** An owner, a task of theirs, and a page paired to them through a link. */
export async function pairedPage(w, browser, options) {
  const owner = (await api(w, "POST", "/v1/owners", ADMIN, { name: "Ana" })).body;
  const task = (await api(w, "POST", "/v1/tasks", owner.token, { name: "api refactor" })).body;
  const pairing = (await api(w, "POST", "/v1/pairings", owner.token)).body;
  const { context, page } = await newPage(browser, options);
  await page.goto(pairing.url);
  await page.click("#pair-ask-yes"); // "Pair this browser with …?"
  await page.locator("#signed-in").waitFor();
  return { owner, task, context, page };
}

export const cards = (page) => page.locator("#questions .card");
