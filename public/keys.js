// This browser's signing key, made here with WebCrypto and never readable by
// script (not extractable), and the certificate the owner's key signed for
// it: the agent's machines take an answer only when its statement is signed
// by a key they can trace to the owner (docs/security.md, "A server that
// cannot act"). The page signs every answer, the service worker a
// notification's Deny; both read the key from IndexedDB.
//
// The statement's shape, the proof's label and the certificate's fields are
// needs_you_core::signed's; the agent's machine reads them as written.

import { keptIn } from "./kept.js";

const PROOF_LABEL = "needs-you pairing v1\n";
const LIFETIME_MS = 10 * 60 * 1000;
const ECDSA = { name: "ECDSA", namedCurve: "P-256" };
const SIGN = { name: "ECDSA", hash: "SHA-256" };

const enc = new TextEncoder();

export function b64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function unb64url(text) {
  const s = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

const store = keptIn("needs-you-keys");

/** This browser's key: {privateKey, key (base64url), owner?, certificate?}, or null. */
export function kept() {
  return store.read();
}

export function forgetKey() {
  return store.write(null);
}

/** A new key for this browser, kept; its public half (base64url) and the
 *  proof of it under the pairing link's `secret`, for the pairer to check. */
export async function newKey(secret, owner) {
  const pair = await crypto.subtle.generateKey(ECDSA, false, ["sign"]);
  const key = b64url(await crypto.subtle.exportKey("raw", pair.publicKey));
  await store.write({ privateKey: pair.privateKey, key, owner });
  const mac = await crypto.subtle.importKey("raw", unb64url(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const proof = b64url(await crypto.subtle.sign("HMAC", mac, enc.encode(PROOF_LABEL + key)));
  return { key, proof };
}

async function fingerprint(keyB64) {
  return b64url(await crypto.subtle.digest("SHA-256", unb64url(keyB64)));
}

/** Takes `certificate` (an envelope) if the owner this browser was paired
 *  to signed it, for this very key; false when it is not (someone between
 *  the pairer and this browser changed it), and nothing is kept. */
export async function takeCertificate(certificate) {
  const me = await kept();
  if (!me?.owner) return false;
  try {
    if ((await fingerprint(certificate.key)) !== me.owner) return false;
    const ownerKey = await crypto.subtle.importKey("raw", unb64url(certificate.key), ECDSA, false, ["verify"]);
    const bytes = unb64url(certificate.statement);
    if (!(await crypto.subtle.verify(SIGN, ownerKey, unb64url(certificate.signature), bytes))) return false;
    const cert = JSON.parse(new TextDecoder().decode(bytes));
    if (cert.key !== me.key || cert.owner !== me.owner) return false;
    // A certificate renewed is taken; one older than the kept one is not.
    if (me.certificate && cert.expires_at < ends(me.certificate)) return false;
  } catch {
    return false;
  }
  await store.write({ ...me, certificate });
  return true;
}

/** When a kept certificate (an envelope) ends, ms. */
function ends(certificate) {
  return JSON.parse(new TextDecoder().decode(unb64url(certificate.statement))).expires_at;
}

/** Takes the renewed certificate the server holds for this browser, when
 *  there is one (the owner's command line signs a certificate anew as it
 *  nears its end); then when this browser's certificate ends (ms), or null
 *  when it holds none. */
export async function renewCertificate(held) {
  const me = await kept().catch(() => null);
  if (!me?.certificate) return null;
  if (held && held.statement !== me.certificate.statement) await takeCertificate(held);
  return ends((await kept()).certificate);
}

/** The envelope that signs `answer` (the answer's own fields: `text`,
 *  `decision` with its `message`, or `choices`) for question `q` as this
 *  page shows it; null when this browser holds no certified key. */
export async function signAnswer(q, answer) {
  const me = await kept().catch(() => null);
  if (!me?.certificate) return null;
  const statement = {
    v: 1, owner: me.owner, id: b64url(crypto.getRandomValues(new Uint8Array(16))),
    question_id: q.question_id, session: q.session, open_seq: q.open_seq,
    digest: "text" in answer ? null : q.digest, answer, expires_at: Date.now() + LIFETIME_MS,
  };
  return sealed(me, statement);
}

/** The envelope that signs taking back `rule` (as the rules list shows it:
 *  the answer that granted it), for the agent's machine to check; null when
 *  this browser holds no certified key. */
export async function signRevoke(rule) {
  const me = await kept().catch(() => null);
  if (!me?.certificate) return null;
  return sealed(me, {
    v: 1, owner: me.owner, id: b64url(crypto.getRandomValues(new Uint8Array(16))),
    rule_id: rule.rule_id, answer_id: rule.answer_id, expires_at: Date.now() + LIFETIME_MS,
  });
}

/** `statement` signed with this browser's key, its certificate beside. */
async function sealed(me, statement) {
  const bytes = enc.encode(JSON.stringify(statement));
  const signature = await crypto.subtle.sign(SIGN, me.privateKey, bytes);
  return { statement: b64url(bytes), signature: b64url(signature), key: me.key, certificate: me.certificate };
}
