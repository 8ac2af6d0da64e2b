// The page's side of the API: the device credential kept in this browser, and
// one fetch wrapper that turns every refusal into an Error with the server's
// own message. A 401 means this device was revoked (or never paired): the
// caller signs out.

import { forgetKey } from "./keys.js";

const KEY = "needs-you.device";

/** The stored device: {device_id, name, token}, or null. */
export function device() {
  try {
    return JSON.parse(localStorage.getItem(KEY));
  } catch {
    return null;
  }
}

export function forget() {
  localStorage.removeItem(KEY);
  handOver(null);
  forgetKey().catch(() => {});
}

/** Gives the service worker this device (or null), so that a notification's
 *  Deny can act while the page is closed (sw.js). */
export async function handOver(me = device()) {
  if (!("serviceWorker" in navigator)) return;
  const reg = await navigator.serviceWorker.ready;
  reg.active?.postMessage({ device: me && { device_id: me.device_id, token: me.token } });
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `the server answered ${status}`);
    this.status = status;
    this.code = body?.error;
  }
}

/** Calls the API; resolves to {status, body, etag}. 304 has no body. */
export async function call(method, path, { body, etag, keepalive } = {}) {
  const headers = {};
  const me = device();
  if (me) headers.authorization = `Bearer ${me.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (etag) headers["if-none-match"] = etag;
  // A fetch that fails is the network's failure (offline, refused), and
  // says so as `offline`: a failure of the page's own code is not one.
  const resp = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    // A page going away still says so (presence).
    keepalive: !!keepalive,
  }).catch((e) => {
    throw Object.assign(e, { offline: true });
  });
  if (resp.status === 304) return { status: 304, etag };
  const json = await resp.json().catch(() => null);
  if (!resp.ok) throw new ApiError(resp.status, json);
  return { status: resp.status, body: json, etag: resp.headers.get("etag") };
}

/** Whose a pairing code is and what it grants, without using it. */
export async function checkCode(code) {
  return (await call("POST", "/v1/pairings/check", { body: { code } })).body;
}

/** Turns a pairing code into this browser's device credential; `keyed`,
 *  {key, seal_key, rights, proof}, sends this browser's keys with it (keys.js). */
export async function pair(code, name, keyed = null) {
  const { body } = await call("POST", "/v1/devices", { body: { code, name, ...(keyed || {}) } });
  localStorage.setItem(KEY, JSON.stringify(body));
  return body;
}
