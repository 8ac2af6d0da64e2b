// Sealing as needs_you_core::sealed defines it, done with Node's own
// WebCrypto: another implementation than the Rust and the page's, to check
// both against. `key` is a content key version as `content-key.json` keeps
// it: {version, key (32 bytes, base64url)}.
import { webcrypto } from "node:crypto";

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
