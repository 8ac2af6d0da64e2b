// Sealing as needs_you_core::sealed defines it, done with Node's own
// WebCrypto: another implementation than the Rust and the page's, to check
// both against. `key` is a content key version as `content-key.json` keeps
// it: {version, key (32 bytes, base64url)}.
import { createHash, createHmac, webcrypto } from "node:crypto";

const { subtle } = webcrypto;
const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

/** `text` sealed under `key` for `owner`, as `scope`'s `field`: `s1.…`. */
export async function sealText(key, owner, scope, field, text) {
  const aes = await subtle.importKey("raw", Buffer.from(key.key, "base64url"), "AES-GCM", false, ["encrypt"]);
  const iv = webcrypto.getRandomValues(new Uint8Array(12));
  const additionalData = Buffer.from(`needs-you sealed v1\n${owner}\n${scope}\n${field}`);
  const ciphertext = await subtle.encrypt({ name: "AES-GCM", iv, additionalData }, aes, Buffer.from(text));
  return `s1.${key.version}.${b64url(iv)}.${b64url(ciphertext)}`;
}

/** What `sealed` holds, as text, opened with `key` as `owner`'s `scope`'s
 *  `field`; throws when it does not open. */
export async function openText(key, owner, scope, field, sealed) {
  const [form, version, nonce, ciphertext] = sealed.split(".");
  if (form !== "s1" || Number(version) !== key.version) throw new Error(`not sealed under version ${key.version}: ${sealed.slice(0, 8)}`);
  const aes = await subtle.importKey("raw", Buffer.from(key.key, "base64url"), "AES-GCM", false, ["decrypt"]);
  const additionalData = Buffer.from(`needs-you sealed v1\n${owner}\n${scope}\n${field}`);
  const plain = await subtle.decrypt({ name: "AES-GCM", iv: Buffer.from(nonce, "base64url"), additionalData }, aes, Buffer.from(ciphertext, "base64url"));
  return Buffer.from(plain).toString("utf8");
}

/** `key` wrapped for device `deviceId` of `owner` to its seal key
 *  `recipient` (base64url), as the owner's `pair` wraps it: what a server
 *  holding only the device's public seal key can make too. `w1.…`. */
export async function wrapKey(key, owner, deviceId, recipient) {
  const ecdh = await subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
  const ephemeral = b64url(await subtle.exportKey("raw", ecdh.publicKey));
  const theirs = await subtle.importKey("raw", Buffer.from(recipient, "base64url"), { name: "ECDH", namedCurve: "P-256" }, false, []);
  const shared = await subtle.deriveBits({ name: "ECDH", public: theirs }, ecdh.privateKey, 256);
  const hkdf = await subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
  const info = Buffer.from(`needs-you content key v1\n${owner}\n${deviceId}\n${key.version}\n${ephemeral}\n${recipient}`);
  const aes = await subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info }, hkdf, { name: "AES-GCM", length: 256 }, false, ["encrypt"]);
  const iv = webcrypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await subtle.encrypt({ name: "AES-GCM", iv }, aes, Buffer.from(key.key, "base64url"));
  return `w1.${key.version}.${ephemeral}.${b64url(iv)}.${b64url(ciphertext)}`;
}

/** The commitment a certificate names for version `key` of `owner`'s
 *  content key: hex SHA-256 of the label, owner, version and key bytes. */
export function commitment(owner, key) {
  return createHash("sha256").update(`needs-you content key commitment v1\n${owner}\n${key.version}\n`)
    .update(Buffer.from(key.key, "base64url")).digest("hex");
}

/** `plain`, a request's digest or a lasting choice's id, keyed under `key`
 *  for `owner`, as a machine that seals names it: hex HMAC-SHA256 of the
 *  label, the owner and `plain`, after a lasting choice's `keep-`. */
export function keyedId(key, owner, plain) {
  const mac = createHmac("sha256", Buffer.from(key.key, "base64url")).update(`needs-you keyed id v1\n${owner}\n${plain}`).digest("hex");
  return plain.startsWith("keep-") ? `keep-${mac}` : mac;
}
