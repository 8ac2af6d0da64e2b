// The page's tests' browser: Debian's Chromium driven by playwright-core (no
// browser download), against the Worker in Miniflare.
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

export async function launch() {
  // --no-sandbox: the CI machines run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

/** A page in a fresh context (its own storage), `viewport` as given. */
export async function newPage(browser, { viewport = { width: 1280, height: 800 }, ...options } = {}) {
  const context = await browser.newContext({ viewport, ...options });
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  return { context, page };
}

/** The service worker's registration id, for the DevTools push trick. */
export async function registrationId(context, page, origin) {
  const cdp = await context.newCDPSession(page);
  const found = new Promise((resolve) => {
    cdp.on("ServiceWorker.workerRegistrationUpdated", ({ registrations }) => {
      const r = registrations.find((x) => x.scopeURL.startsWith(origin) && !x.isDeleted);
      if (r) resolve(r.registrationId);
    });
  });
  await cdp.send("ServiceWorker.enable");
  return { cdp, id: await found };
}

/** Delivers `message` to the service worker as a push would, decrypted. */
export async function deliverPush(cdp, origin, registrationId, message) {
  await cdp.send("ServiceWorker.deliverPushMessage", {
    origin,
    registrationId,
    data: JSON.stringify(message),
  });
}

/**
 * The notifications the service worker shows now: [{title, body, tag}], read
 * by the service worker in its turn, as it reads them itself: a read while
 * Chromium is still putting one on screen would lose that one (sw.js).
 */
export async function notifications(page) {
  const context = page.context();
  const sw = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  return sw.evaluate(() => new Promise((resolve) => self.needsYou.whenSettled((shown) => {
    resolve(shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag })));
  })));
}
