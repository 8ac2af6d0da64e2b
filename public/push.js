// Web Push for this device: offered once notifications can work here; the
// subscription goes to the Worker, which sends through it (src/channels/webpush.rs).

import { call } from "./api.js";

function supported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

function keyBytes(b64url) {
  const b64 = b64url.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

const BLOCKED = "Notifications are blocked for this page: allow them in the browser's site settings, then reload.";

function say(text) {
  const el = document.getElementById("notify-note");
  el.textContent = text;
  el.hidden = false;
}

/** Shows the button when push can be turned on here; hides it once it is. */
export async function offer(button) {
  if (!supported()) return;
  let key;
  try {
    key = (await call("GET", "/v1/push/key")).body.public_key;
  } catch {
    return; // This server has no Web Push key: ntfy or the webhook it is.
  }
  const reg = await navigator.serviceWorker.ready;
  const existing = await reg.pushManager.getSubscription();
  if (existing && Notification.permission === "granted") {
    // Keep the Worker's copy current: a browser may renew a subscription.
    await call("PUT", "/v1/devices/me/push", { body: existing.toJSON() }).catch(() => {});
    button.hidden = true;
    return;
  }
  if (Notification.permission === "denied") {
    say(BLOCKED);
    return;
  }
  button.hidden = false;
  button.onclick = async () => {
    button.disabled = true;
    try {
      if ((await Notification.requestPermission()) !== "granted") {
        say(Notification.permission === "denied" ? BLOCKED : "Notifications were not turned on: choose Allow when the browser asks.");
        return;
      }
      const sub = await reg.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: keyBytes(key),
      });
      await call("PUT", "/v1/devices/me/push", { body: sub.toJSON() });
      button.hidden = true;
    } catch (e) {
      say(`Notifications could not be turned on: ${e.message}`);
    } finally {
      button.disabled = false;
    }
  };
}

/** Before signing out: no more pushes to this browser. */
export async function unsubscribeHere() {
  if (!supported()) return;
  const reg = await navigator.serviceWorker.getRegistration();
  const sub = await reg?.pushManager.getSubscription();
  if (sub) {
    await call("DELETE", "/v1/devices/me/push").catch(() => {});
    await sub.unsubscribe().catch(() => {});
  }
}

/**
 * Asks the service worker to close the notifications of questions missing
 * from a list asked for at `asked` (ms): it alone reads and closes them (see
 * sw.js on why reads take turns with shows).
 */
export async function tidy(open, asked) {
  if (!supported()) return;
  const reg = await navigator.serviceWorker.getRegistration();
  reg?.active?.postMessage({ tidy: { open: open.map((q) => q.question_id), asked } });
}
