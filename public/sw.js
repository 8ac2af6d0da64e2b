// The service worker: keeps the app shell for offline use, and shows the
// Worker's Web Push messages as notifications, one per question (its tag).
//
// The Worker sends two events per question: "open" (still unanswered after the
// delay) and "close" (answered, dismissed or ended). Browsers punish a push
// that shows nothing: Chrome shows its own "updated in the background" notice
// once a site's budget of silent pushes runs out, and Safari drops the
// subscription after a few. So a close never ends with nothing shown:
//
// * it first replaces the question's notification, in place and silently
//   (same tag), with "…: answered" — that is the "show" every browser counts;
// * then, if other notifications of ours are still on screen, it closes that
//   replacement: Chrome still sees a notification of ours showing;
// * if it would be the last one, the quiet "answered" line stays until the
//   page is opened (the page closes it) or the next open is on screen.
//
// The open text is gone either way: nobody is asked to answer a question
// that was already answered.
//
// It is a module (the page registers it so), to sign a Deny with keys.js.

import { keptIn } from "./kept.js";
import { openScope, openSealed, signAnswer } from "./keys.js";

const SHELL = "needs-you-shell-v9";
const SHELL_FILES = [
  "/", "/app.js", "/answer.js", "/api.js", "/live.js", "/words.js", "/push.js", "/pair.js", "/history.js", "/keys.js", "/kept.js", "/card.js", "/card-hash.js", "/card.wasm", "/screen.js", "/version.js", "/style.css",
  "/manifest.webmanifest", "/icons/icon-192.png",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL).then((c) => c.addAll(SHELL_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// The shell: network first (a new deploy shows at once), the cached copy when
// offline. The API is never cached: it carries a person's questions.
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== location.origin || url.pathname.startsWith("/v1/")) return;
  event.respondWith(
    fetch(event.request)
      .then((resp) => {
        if (resp.ok && SHELL_FILES.includes(url.pathname)) {
          const copy = resp.clone();
          caches.open(SHELL).then((c) => c.put(event.request, copy));
        }
        return resp;
      })
      .catch(async () => {
        const cached = await caches.match(event.request, { ignoreSearch: true });
        if (cached) return cached;
        // Any page address (/pair among them) is the shell.
        if (event.request.mode === "navigate") return caches.match("/");
        return Response.error();
      }),
  );
});

// Chromium forgets a notification it is still putting on screen if
// getNotifications() runs meanwhile: it drops what the screen does not show
// yet: with a read right after each show, eight pushes at once lost one
// within fifteen rounds, every time (tests/page). So every show and every read take turns in one chain, and a
// read waits until nothing was shown for SETTLE_MS. Opens never wait.
const SETTLE_MS = 1000;
let chain = Promise.resolve();
let lastShown = -Infinity;

function inTurn(job) {
  const done = chain.then(job);
  chain = done.catch(() => {});
  return done;
}

function show(title, options) {
  return self.registration.showNotification(title, { icon: "/icons/icon-192.png", ...options })
    .finally(() => (lastShown = Date.now()));
}

/** Runs `job` with the notifications on screen, in turn, once they settled. */
async function whenSettled(job) {
  for (;;) {
    const wait = lastShown + SETTLE_MS - Date.now();
    if (wait > 0) {
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    const ran = await inTurn(async () => {
      if (Date.now() - lastShown < SETTLE_MS) return false; // shown while waiting for the turn
      await job(await self.registration.getNotifications());
      return true;
    });
    if (ran) return;
  }
}

self.addEventListener("push", (event) => {
  let m;
  try {
    m = event.data.json();
  } catch {
    m = { event: "open", title: "Needs you", body: "An agent needs you.", tag: "needs-you", url: "/" };
  }
  event.waitUntil(m.event === "close" ? pushedClose(m) : pushedOpen(m));
});

function data(m) {
  return { url: m.url || "/", question_id: m.question_id, event: m.event, takes: m.takes, digest: m.digest,
    session: m.session, open_seq: m.open_seq };
}

/** A permission that takes a decision from afar gets two actions: Deny acts
 *  from the notification; Allow only opens its card, where allowing takes a
 *  second look and a second tap (docs/security.md: a one-tap allow on a
 *  lock screen would give a phone's finder the agent's machine). */
function actions(m) {
  if (m.takes !== "decision" || !m.digest) return [];
  return [{ action: "deny", title: "Deny" }, { action: "allow", title: "Allow…" }];
}

/** The body of an open's notification: a question whose words its machine
 *  sealed comes with its summary sealed too, opened here with the content
 *  key this browser holds, as the open the push names, and its task's name
 *  when that is sealed, as that task's; the Worker's own words ("open
 *  needs-you to see it", "A task") where they do not open. */
async function openBody(m) {
  if (!m.sealed) return m.body;
  const summary = await openSealed(openScope(m), "summary", m.sealed).catch(() => null);
  const task = m.task_sealed ? await openSealed(m.task_id, "task", m.task_sealed).catch(() => null) : null;
  return summary === null ? m.body : `${task ?? m.task}: ${summary}`;
}

async function pushedOpen(m) {
  const body = await openBody(m);
  // `quiet`: its owner is looking at the page right now, where the card is:
  // shown, but without a sound or a buzz.
  await inTurn(() => show(m.title, { body, tag: m.tag, data: data(m), renotify: !m.quiet, silent: !!m.quiet, actions: actions(m) }));
  // The quiet "answered" lines of earlier closes go once this one is on screen.
  await whenSettled((shown) => {
    for (const n of shown) if (n.data?.event === "close") n.close();
  });
}

async function pushedClose(m) {
  await inTurn(() => show(m.title, { body: m.body, tag: m.tag, data: data(m), silent: true }));
  await whenSettled((shown) => {
    if (shown.some((n) => n.tag !== m.tag)) {
      for (const n of shown) if (n.tag === m.tag) n.close();
    }
  });
}

// ---- this device's credential, for acting from a notification -------------
//
// The page hands its device over (and null once signed out); the service
// worker keeps it in IndexedDB, which it can read when the page is closed.

// Its own database: an older worker's ("needs-you", store "device") is left
// as it was, and the page hands the device over again when it next opens.
const device = keptIn("needs-you-device");
const keep = (d) => device.write(d);
const kept = () => device.read();

/** Denies the question of a notification's Deny, with the digest its push
 *  carried: a deny lands only on the very request the person was shown.
 *  Whatever comes of it replaces the notification, in words: an action
 *  that comes too late does nothing, and says so. */
async function deny(n) {
  const d = n.data || {};
  let title = "Denied";
  let body = "The agent is told no.";
  const me = await kept().catch(() => null);
  if (!me) {
    title = "Nothing denied";
    body = "This browser is signed out: open the page and pair it again.";
  } else {
    try {
      // Signed here like the page's answers, for the very open it was pushed for.
      const signed = await signAnswer(d, { decision: "deny" });
      const resp = await fetch(`/v1/questions/${encodeURIComponent(d.question_id)}/answers`, {
        method: "POST",
        headers: { authorization: `Bearer ${me.token}`, "content-type": "application/json" },
        body: JSON.stringify({ decision: "deny", digest: d.digest, ...(signed ? { signed } : {}) }),
      });
      if (!resp.ok) {
        const why = await resp.json().catch(() => null);
        title = "Nothing denied";
        body = why?.error === "closed" ? "It was already answered, or it ended." : why?.message || `The server answered ${resp.status}.`;
      }
    } catch {
      title = "Nothing denied";
      body = "The server could not be reached: open the page to try again.";
    }
  }
  await inTurn(() => show(title, { body, tag: n.tag, silent: true, data: { ...d, event: "close" } }));
}

// The page, given a new list: close the notifications of questions it no
// longer holds that were shown before the list was asked for (one shown later
// may be for a question opened after the list was read).
self.addEventListener("message", (event) => {
  if (event.data && "device" in event.data) {
    event.waitUntil(keep(event.data.device));
    return;
  }
  const tidy = event.data?.tidy;
  if (!tidy) return;
  const open = new Set(tidy.open);
  event.waitUntil(whenSettled((shown) => {
    for (const n of shown) if (!open.has(n.data?.question_id) && n.timestamp < tidy.asked) n.close();
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(clicked(event.notification, event.action));
});

/** A tap on a notification opens its card; on its Allow action, the card's
 *  confirmation; its Deny action denies from here. */
function clicked(n, action) {
  if (action === "deny") return deny(n);
  const d = n.data || {};
  const path = action === "allow" ? `/#allow-${d.question_id}` : d.url || "/";
  return openPage(new URL(path, location.origin).href);
}

function openPage(url) {
  return self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((wins) => {
    const win = wins.find((w) => new URL(w.url).origin === location.origin);
    // Focus needs the click's user activation; without it the page still
    // moves to the card, which is what matters.
    if (win) return win.navigate(url).then((w) => (w || win).focus().catch(() => {}));
    return self.clients.openWindow(url);
  });
}

// A module's functions are not on the worker's global scope: what DevTools,
// and the tests that drive this worker through Chromium, call by name.
self.needsYou = { whenSettled, clicked, kept };
