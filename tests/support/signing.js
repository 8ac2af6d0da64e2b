// The owner's key as the tests hold it: made and used with Node's own
// WebCrypto (another implementation of ECDSA P-256 than the Rust that
// checks it on the agent's machine), to sign answers the way the page and
// `needs-you answer` do (needs_you_core::signed). An agent's environment
// gets `NEEDS_YOU_OWNER: key.fingerprint`; its relay takes only what
// `key.body` or `key.sign` signed.
import { createECDH, createHash, webcrypto } from "node:crypto";
import { sealText } from "./sealing.js";

const { subtle } = webcrypto;
export const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

/** A P-256 key from its private scalar (base64url): {key, pub (SEC1)}. */
export async function importKey(secret) {
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(Buffer.from(secret, "base64url"));
  const pub = ecdh.getPublicKey();
  const jwk = { kty: "EC", crv: "P-256", d: secret, x: b64url(pub.subarray(1, 33)), y: b64url(pub.subarray(33)) };
  const key = await subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  return { key, pub };
}

/** `what` (JSON) signed by `signer`: an envelope. */
export async function seal(signer, what) {
  const bytes = Buffer.from(JSON.stringify(what));
  const sig = await subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.key, bytes);
  return { statement: b64url(bytes), signature: b64url(sig), key: b64url(signer.pub) };
}

/** `answer` with its words left out, as a device sends it beside them once
 *  sealed; null when it holds none (an allow, a deny with no message). */
export function wordless(answer) {
  if ("text" in answer) return answer.text ? { text: "" } : null;
  if ("choices" in answer) return answer.choices.length ? { choices: [] } : null;
  return answer.message ? { decision: answer.decision } : null;
}

/**
 * An owner key: `secret` given (an owner-key.json's), or a new one.
 * `statement(q, answer, fields)` is what the owner signs to answer `q` (as
 * the list shows it) with `answer` (its own fields, no digest); `sign` signs
 * it; `body(q, body)` is an answer's POST body with its `signed` added, and,
 * for a question whose words are sealed, its words sealed under the
 * `contentKey` set on it, as the page and `needs-you answer` seal them;
 * `revoke(rule)` signs the taking back of a lasting rule.
 */
export async function ownerKey(secret = b64url(webcrypto.getRandomValues(new Uint8Array(32)))) {
  const signer = await importKey(secret);
  const fingerprint = b64url(await subtle.digest("SHA-256", signer.pub));
  const statement = (q, answer, fields = {}) => ({
    v: 1, owner: fingerprint, id: b64url(webcrypto.getRandomValues(new Uint8Array(16))),
    question_id: q.question_id, session: q.session, open_seq: q.open_seq,
    digest: "text" in answer ? null : q.digest, answer, expires_at: Date.now() + 5 * 60_000, ...fields,
  });
  const sign = (q, answer, fields) => seal(signer, statement(q, answer, fields));
  /** The envelope that takes back `rule` (as the rules list shows it). */
  const revoke = (rule, fields = {}) => seal(signer, {
    v: 1, owner: fingerprint, id: b64url(webcrypto.getRandomValues(new Uint8Array(16))),
    rule_id: rule.rule_id, answer_id: rule.answer_id, expires_at: Date.now() + 5 * 60_000, ...fields,
  });
  return {
    secret, fingerprint, signer, statement, sign, revoke, contentKey: null,
    async body(q, body) {
      const answer = { ...body };
      delete answer.digest;
      const left = q.sealed && this.contentKey ? wordless(answer) : null;
      if (!left) return { ...body, signed: await sign(q, answer) };
      const sealed = await sealText(this.contentKey, fingerprint, q.question_id, "answer", JSON.stringify(answer));
      const sealed_hash = createHash("sha256").update(sealed).digest("hex");
      const digest = body.digest ? { digest: body.digest } : {};
      return { ...left, ...digest, sealed, signed: await sign(q, left, { v: 2, sealed_hash }) };
    },
  };
}
