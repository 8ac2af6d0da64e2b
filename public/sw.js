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
//   replacement at once: Chrome still sees a notification of ours showing;
// * if it would be the last one, the quiet "answered" line stays until the
//   page is opened (the page closes it) or the next open replaces it.
//
// The open text is gone either way: nobody is asked to answer a question
// that was already answered.

const SHELL = "needs-you-shell-v1";
const SHELL_FILES = [
  "/", "/app.js", "/api.js", "/words.js", "/push.js", "/pair.js", "/style.css",
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

self.addEventListener("push", (event) => {
  event.waitUntil(handlePush(event));
});

async function handlePush(event) {
  let m;
  try {
    m = event.data.json();
  } catch {
    m = { event: "open", title: "Needs you", body: "An agent needs you.", tag: "needs-you", url: "/" };
  }
  const data = { url: m.url || "/", question_id: m.question_id, event: m.event };
  if (m.event !== "close") {
    // Shown before the quiet lines go, so the screen is never empty between.
    await self.registration.showNotification(m.title, {
      body: m.body, tag: m.tag, data, renotify: true, icon: "/icons/icon-192.png",
    });
    return closeAnswered();
  }
  await self.registration.showNotification(m.title, {
    body: m.body, tag: m.tag, data, silent: true, icon: "/icons/icon-192.png",
  });
  const shown = await self.registration.getNotifications();
  if (shown.some((n) => n.tag !== m.tag)) {
    for (const n of shown) if (n.tag === m.tag) n.close();
  }
}

/** Closes the quiet "answered" lines left by earlier closes. */
async function closeAnswered() {
  for (const n of await self.registration.getNotifications()) {
    if (n.data?.event === "close") n.close();
  }
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || "/", location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((wins) => {
      const win = wins.find((w) => new URL(w.url).origin === location.origin);
      if (win) return win.navigate(url).then((w) => (w || win).focus());
      return self.clients.openWindow(url);
    }),
  );
});
