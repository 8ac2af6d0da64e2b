// A mock Web Push service on 127.0.0.1, standing in for a browser vendor's.
// It checks every push the way a real one and the receiving browser would,
// with code independent of the project's: the VAPID JWT (RFC 8292) verified
// by Node's Web Crypto against the Worker's public key, and the body
// (RFC 8291, aes128gcm) decrypted by the `http_ece` package with the
// subscription's private key. A test makes subscriptions here, hands their
// JSON to the Worker, and reads back what each received, decrypted.
import { createServer } from "node:http";
import { createECDH, randomBytes, webcrypto } from "node:crypto";
import ece from "http_ece";

const b64u = (buf) => Buffer.from(buf).toString("base64url");

export async function startPushService({ vapidPublicKey }) {
  const subs = new Map(); // id -> {ecdh, auth, received: [], answer}
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const id = req.url.replace(/^\/push\//, "");
      const sub = subs.get(id);
      const entry = { at: Date.now(), headers: req.headers, problems: [] };
      if (!sub) {
        res.writeHead(404).end();
        return;
      }
      try {
        await checkVapid(req.headers.authorization, `http://127.0.0.1:${port}`, vapidPublicKey);
      } catch (e) {
        entry.problems.push(`vapid: ${e.message}`);
      }
      try {
        const plain = ece.decrypt(Buffer.concat(chunks), {
          version: "aes128gcm",
          privateKey: sub.ecdh,
          authSecret: b64u(sub.auth),
        });
        entry.message = JSON.parse(plain.toString("utf8"));
      } catch (e) {
        entry.problems.push(`decrypt: ${e.message}`);
      }
      const status = sub.answers.length ? sub.answers.shift() : 201;
      entry.status = status;
      // Recorded once checked, so a test never reads a push half examined.
      sub.received.push(entry);
      res.writeHead(status).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = server.address().port;
  return {
    /** A new browser subscription: its JSON for `PUT /v1/devices/me/push`. */
    subscribe() {
      const id = b64u(randomBytes(9));
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const auth = randomBytes(16);
      const sub = { ecdh, auth, received: [], answers: [] };
      subs.set(id, sub);
      return {
        id,
        json: {
          endpoint: `http://127.0.0.1:${port}/push/${id}`,
          expirationTime: null,
          keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(auth) },
        },
        received: sub.received,
        /** The next answers to give (e.g. 503, 410); 201 after them. */
        answer: (...statuses) => sub.answers.push(...statuses),
      };
    },
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Checks `vapid t=<jwt>, k=<key>` as a push service does (RFC 8292). */
async function checkVapid(header, origin, expectedKey) {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header || "");
  if (!m) throw new Error(`no vapid authorization: ${header}`);
  const [, jwt, k] = m;
  if (k !== expectedKey) throw new Error("k is not the Worker's public key");
  const [h, c, s] = jwt.split(".");
  const head = JSON.parse(Buffer.from(h, "base64url"));
  if (head.alg !== "ES256") throw new Error(`alg ${head.alg}`);
  const key = await webcrypto.subtle.importKey(
    "raw", Buffer.from(k, "base64url"), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const ok = await webcrypto.subtle.verify(
    { name: "ECDSA", hash: "SHA-256" }, key, Buffer.from(s, "base64url"), Buffer.from(`${h}.${c}`));
  if (!ok) throw new Error("the JWT signature does not verify");
  const claims = JSON.parse(Buffer.from(c, "base64url"));
  if (claims.aud !== origin) throw new Error(`aud ${claims.aud}, not ${origin}`);
  const now = Date.now() / 1000;
  if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) throw new Error(`exp ${claims.exp}`);
  if (!/^(mailto:|https:)/.test(claims.sub || "")) throw new Error(`sub ${claims.sub}`);
}

/** A fresh VAPID key pair, as `scripts/vapid-keys.mjs` makes one. */
export async function vapidKeys() {
  const pair = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
  const jwk = await webcrypto.subtle.exportKey("jwk", pair.privateKey);
  const raw = await webcrypto.subtle.exportKey("raw", pair.publicKey);
  return { privateKey: jwk.d, publicKey: b64u(raw) };
}
