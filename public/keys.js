// This browser's signing key, made here with WebCrypto and never readable by
// script (not extractable), and the certificate the owner's key signed for
// it: the agent's machines take an answer only when its statement is signed
// by a key they can trace to the owner (docs/security.md, "A server that
// cannot act"). The page signs every answer, the service worker a
// notification's Deny; both read the key from IndexedDB.
//
// The statement's shape, the proof's label and the certificate's fields are
// needs_you_core::signed's; the agent's machine reads them as written.
//
// Beside it, a seal key (ECDH P-256, not extractable either), proved with the
// same secret: the owner's command line wraps the content key to it, and the
// page keeps what it unwraps as AES-GCM keys no script can read back, one per
// version, to open what the agents' machines seal and to seal the words of
// the answers it makes, and as HMAC keys, to name a sealed question's request
// and lasting choices as its machine keyed them (needs_you_core::sealed,
// whose forms and labels these are).

import { keptIn } from "./kept.js";

const PROOF_LABEL = "needs-you pairing v2\n";
const SEALED_LABEL = "needs-you sealed v1\n";
const WRAP_LABEL = "needs-you content key v1\n";
const COMMITMENT_LABEL = "needs-you content key commitment v1\n";
const KEYED_LABEL = "needs-you keyed id v1\n";
const ECDH = { name: "ECDH", namedCurve: "P-256" };
/** What a browser asks to be able to do when it pairs: all the code grants.
 *  The proof covers it, in needs_you_core::api::Right's one order, so that
 *  the pairer vouches for no more whatever the server says it got. */
const ASKED = ["tasks", "answer", "pair", "screen"];
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

/** This browser's keys: {privateKey, key (base64url), owner?, certificate?,
 *  sealPrivate?, sealKey? (base64url), contentKeys? (by version)}, or null. */
export function kept() {
  return store.read();
}

/** Pins `owner`, a key's fingerprint, in a browser paired by a link that
 *  names it without a secret (another device's "Pair another device"): it
 *  holds no key the owner vouched for, but what the person writes on it
 *  leaves it only sealed, as on every device of that owner (`sealsOnly`). */
export function pinOwner(owner) {
  return store.write({ owner, contentKeys: {} });
}

export function forgetKey() {
  return store.write(null);
}

/** New keys for this browser, kept: its signing key and its seal key; their
 *  public halves (base64url), the rights it asks for, and the proof of all
 *  three under the pairing link's `secret`, for the pairer to check. */
export async function newKey(secret, owner) {
  const pair = await crypto.subtle.generateKey(ECDSA, false, ["sign"]);
  const key = b64url(await crypto.subtle.exportKey("raw", pair.publicKey));
  const seal = await crypto.subtle.generateKey(ECDH, false, ["deriveBits"]);
  const sealKey = b64url(await crypto.subtle.exportKey("raw", seal.publicKey));
  await store.write({ privateKey: pair.privateKey, key, sealPrivate: seal.privateKey, sealKey, owner, contentKeys: {} });
  const mac = await crypto.subtle.importKey("raw", unb64url(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const proof = b64url(await crypto.subtle.sign("HMAC", mac, enc.encode(`${PROOF_LABEL}${key}\n${sealKey}\n${ASKED.join(",")}`)));
  return { key, seal_key: sealKey, rights: ASKED, proof };
}

/** The hex SHA-256 of a label, the owner, the version and the key's `raw`
 *  bytes: what the owner key vouches for in a certificate. */
async function commitment(owner, version, raw) {
  const bytes = new Uint8Array([...enc.encode(`${COMMITMENT_LABEL}${owner}\n${version}\n`), ...new Uint8Array(raw)]);
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Takes the content key versions in `wrapped` (`w1.…` texts, as the server
 *  keeps them for device `deviceId`) that this browser does not hold yet,
 *  that open with its seal key, and that the certificate the owner key
 *  signed for it vouches for, each as a key no script can read back. A
 *  version held is never replaced; one that does not open (the server
 *  changed it, or gave another device's) or that the owner key did not
 *  vouch for (anyone holding the seal key's public half can wrap a key) is
 *  left. The versions held. */
export async function takeContentKeys(deviceId, wrapped) {
  const me = await kept();
  if (!me?.sealPrivate || !me.certificate) return [];
  const vouched = new Map((JSON.parse(new TextDecoder().decode(unb64url(me.certificate.statement))).content_keys || [])
    .map((c) => [String(c.version), c.commitment]));
  const held = { ...(me.contentKeys || {}) };
  const naming = { ...(me.namingKeys || {}) };
  for (const text of wrapped || []) {
    const [form, version, ephemeral, nonce, ciphertext, more] = String(text).split(".");
    // A version held is kept, unless it was kept to open only, or without
    // its naming key (an older page's): taken again.
    if (form !== "w1" || !/^[1-9][0-9]*$/.test(version || "") || more !== undefined) continue;
    if (held[version]?.usages.includes("encrypt") && naming[version]) continue;
    try {
      const theirs = await crypto.subtle.importKey("raw", unb64url(ephemeral), ECDH, false, []);
      const shared = await crypto.subtle.deriveBits({ name: "ECDH", public: theirs }, me.sealPrivate, 256);
      const hkdf = await crypto.subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
      const info = enc.encode(`${WRAP_LABEL}${me.owner}\n${deviceId}\n${version}\n${ephemeral}\n${me.sealKey}`);
      const wrapping = await crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info },
        hkdf, { name: "AES-GCM", length: 256 }, false, ["decrypt"]);
      const raw = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unb64url(nonce) }, wrapping, unb64url(ciphertext));
      if (raw.byteLength !== 32 || vouched.get(version) !== (await commitment(me.owner, version, raw))) continue;
      // Opens what machines sealed, and seals the words of answers made
      // here; never read back.
      held[version] = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
      naming[version] = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    } catch {
      // Not one this browser's seal key opens: left.
    }
  }
  await store.write({ ...(await kept()), contentKeys: held, namingKeys: naming });
  return Object.keys(held).map(Number).sort((a, b) => a - b);
}

/** Whether what the person writes or chooses leaves this browser only
 *  sealed: it was paired under an owner (the link named the owner's key),
 *  who gives the content key to every browser it vouches for. Judged by
 *  what was kept at pairing, never by what the server says of its keys,
 *  which a server could withhold. */
export async function sealsOnly() {
  const me = await kept().catch(() => null);
  return Boolean(me?.owner);
}

/** `plain`, a request's digest or a lasting choice's id as card.wasm built
 *  it, as a sealed question's machine names it: the HMAC-SHA256 of the
 *  label, the owner and `plain` under content key `version`, in hex, after
 *  a lasting choice's `keep-` (needs_you_core::sealed::keyed_message). A
 *  server that reads the names cannot test a guess of a command against
 *  them. Null when this browser holds no such version. */
export async function keyedId(plain, version) {
  const me = await kept().catch(() => null);
  const key = me?.namingKeys?.[version];
  if (!key) return null;
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(`${KEYED_LABEL}${me.owner}\n${plain}`));
  const hex = [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return plain.startsWith("keep-") ? `keep-${hex}` : hex;
}

/** The scope question `q`'s screen is sealed in: its session and the `seq`
 *  of its open, as the agent's machine recorded them
 *  (needs_you_core::sealed::open_scope). */
export const openScope = (q) => `${q.session}\n${q.open_seq}`;

/** What `sealed` (a `s1.…` text) holds, as text, if it was sealed for this
 *  browser's owner as `scope`'s `field` under a version it holds; null when
 *  it does not open. */
export async function openSealed(scope, field, sealed) {
  const me = await kept().catch(() => null);
  const [form, version, nonce, ciphertext, more] = String(sealed).split(".");
  const key = me?.contentKeys?.[version];
  if (form !== "s1" || more !== undefined || !key) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: unb64url(nonce), additionalData: enc.encode(`${SEALED_LABEL}${me.owner}\n${scope}\n${field}`) },
      key, unb64url(ciphertext));
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}

/** `plain` (text) sealed for this browser's owner as `scope`'s `field`,
 *  under content key `version`: a `s1.…` text; null when this browser holds
 *  no such version that may seal. */
export async function sealWords(scope, field, plain, version) {
  const me = await kept().catch(() => null);
  const key = me?.contentKeys?.[version];
  if (!key?.usages.includes("encrypt")) return null;
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: enc.encode(`${SEALED_LABEL}${me.owner}\n${scope}\n${field}`) },
    key, enc.encode(plain));
  return `s1.${version}.${b64url(nonce)}.${b64url(sealed)}`;
}

/** What a statement says of the sealed words beside it: their SHA-256, in
 *  hex (needs_you_core::signed::sealed_hash). */
async function sealedHash(sealed) {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(sealed)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function fingerprint(keyB64) {
  return b64url(await crypto.subtle.digest("SHA-256", unb64url(keyB64)));
}

/** Takes `certificate` (an envelope) if the owner this browser was paired
 *  to signed it, for this very key; false when it is not (someone between
 *  the pairer and this browser changed it), and nothing is kept. */
export async function takeCertificate(certificate) {
  const me = await kept();
  if (!me?.owner || !me.privateKey || !me.key) return false;
  try {
    if ((await fingerprint(certificate.key)) !== me.owner) return false;
    const ownerKey = await crypto.subtle.importKey("raw", unb64url(certificate.key), ECDSA, false, ["verify"]);
    const bytes = unb64url(certificate.statement);
    if (!(await crypto.subtle.verify(SIGN, ownerKey, unb64url(certificate.signature), bytes))) return false;
    const cert = JSON.parse(new TextDecoder().decode(bytes));
    if (cert.key !== me.key || cert.owner !== me.owner || cert.seal_key !== me.sealKey) return false;
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
 *  `decision` with its `message`, or `choices`; only its form when its words
 *  are `sealedWords`, which it binds by their hash) for question `q` as this
 *  page shows it; null when this browser holds no certified key. */
export async function signAnswer(q, answer, sealedWords = null) {
  const me = await kept().catch(() => null);
  if (!me?.certificate) return null;
  // Version 2 with sealed words (needs_you_core::signed::SEALED_VERSION).
  const statement = {
    v: sealedWords ? 2 : 1, owner: me.owner, id: b64url(crypto.getRandomValues(new Uint8Array(16))),
    question_id: q.question_id, session: q.session, open_seq: q.open_seq,
    digest: "text" in answer ? null : q.digest, answer,
    ...(sealedWords ? { sealed_hash: await sealedHash(sealedWords) } : {}),
    expires_at: Date.now() + LIFETIME_MS,
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
