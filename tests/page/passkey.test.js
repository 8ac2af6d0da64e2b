// The passkey check (needs_you_trust::passkey) held to a real browser's
// WebAuthn: headless Chromium with a CDP virtual authenticator (ctap2,
// internal, user verification) makes a passkey on a page of its own origin
// and asserts statements with it; the Rust check, run as its example
// binary, takes each verified assertion for its statement and origin, and
// refuses one made without user verification, or checked against another
// statement, origin or RP id, with its code.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { launch } from "./browser.js";

const CHECK = new URL("../../target/release/examples/passkey_check", import.meta.url).pathname;
const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

let server, browser, origin;
before(async () => {
  // A blank page: WebAuthn needs a document of the origin, nothing more.
  server = createServer((_, res) => res.end("<!doctype html><title>passkey</title>"));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  // An IP address is no RP id; "localhost" is, and is a secure context.
  origin = `http://localhost:${server.address().port}`;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/** A page of `origin` with a virtual platform authenticator. */
async function withAuthenticator() {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await page.goto(`${origin}/`);
  return { context, page, cdp, authenticatorId };
}

/** A passkey made on the page: its id and its public key, SEC1 base64url. */
function register(page) {
  return page.evaluate(async () => {
    const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
      .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const credential = await navigator.credentials.create({
      publicKey: {
        rp: { id: location.hostname, name: "needs-you" },
        user: { id: crypto.getRandomValues(new Uint8Array(16)), name: "owner", displayName: "owner" },
        challenge: crypto.getRandomValues(new Uint8Array(32)),
        pubKeyCredParams: [{ type: "public-key", alg: -7 }],
        authenticatorSelection: { residentKey: "required", userVerification: "required" },
      },
    });
    const spki = credential.response.getPublicKey();
    const key = await crypto.subtle.importKey("spki", spki, { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"]);
    return { id: credential.id, publicKey: b64(await crypto.subtle.exportKey("raw", key)) };
  });
}

/** An assertion of `statement` (base64url) by the passkey `id`, for `rpId` (the page's host). */
function assertStatement(page, id, statement, userVerification = "required", rpId = null) {
  return page.evaluate(async ({ id, statement, userVerification, rpId }) => {
    const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
      .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const bytes = Uint8Array.from(atob(statement.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const challenge = await crypto.subtle.digest("SHA-256", bytes);
    const rawId = Uint8Array.from(atob(id.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const got = await navigator.credentials.get({
      publicKey: {
        challenge,
        rpId: rpId ?? location.hostname,
        allowCredentials: [{ type: "public-key", id: rawId }],
        userVerification,
      },
    });
    return {
      authenticator_data: b64(got.response.authenticatorData),
      client_data_json: b64(got.response.clientDataJSON),
      signature: b64(got.response.signature),
    };
  }, { id, statement, userVerification, rpId });
}

/** The Rust check's verdict on each case. */
function verdicts(cases) {
  return JSON.parse(execFileSync(CHECK, { input: JSON.stringify(cases) }).toString());
}

const statement = (n) => b64url(Buffer.from(JSON.stringify({ v: 1, id: `st_${n}`, answer: "allow" })));

test("a verified assertion of the statement, on its origin, is taken; each other is refused with its code", async () => {
  const { context, page, cdp, authenticatorId } = await withAuthenticator();
  try {
    const passkey = await register(page);
    assert.equal(Buffer.from(passkey.publicKey, "base64url").length, 65, "an uncompressed P-256 point");
    const expect = (n) => ({ public_key: passkey.publicKey, rp_id: "localhost", origin, statement: statement(n) });

    // Several, so that signatures of every shape (an integer with its high
    // bit set, padded in DER) are read.
    const made = [];
    for (let n = 0; n < 8; n++) made.push(await assertStatement(page, passkey.id, statement(n)));
    assert.deepEqual(verdicts(made.map((assertion, n) => ({ ...expect(n), assertion }))), Array(8).fill("ok"));

    const one = made[0];
    const flags = Buffer.from(one.authenticator_data, "base64url")[32];
    assert.ok((flags & 0x05) === 0x05, `UP and UV set by the authenticator (${flags})`);
    const refused = verdicts([
      { ...expect(1), assertion: one },
      { ...expect(0), origin: "http://localhost:1", assertion: one },
      { ...expect(0), rp_id: "127.0.0.1", assertion: one },
      { ...expect(0), public_key: (await register(page)).publicKey, assertion: one },
      { ...expect(0), assertion: { ...one, client_data_json: made[1].client_data_json } },
    ]);
    assert.deepEqual(refused, [
      "passkey_wrong_challenge",
      "passkey_wrong_origin",
      "passkey_wrong_rp_id",
      "passkey_bad_signature",
      "passkey_wrong_challenge",
    ]);

    // The person not verified: the authenticator says so in its flags.
    await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: false });
    const unverified = await assertStatement(page, passkey.id, statement(9), "discouraged");
    assert.equal(Buffer.from(unverified.authenticator_data, "base64url")[32] & 0x04, 0);
    assert.deepEqual(verdicts([{ ...expect(9), assertion: unverified }]), ["passkey_not_verified"]);
  } finally {
    await context.close();
  }
});

test("the Worker's page on another port of the same host gets an assertion, and it is refused for its origin", async () => {
  // Two ports of one host are two origins but one RP id: the browser lets a
  // page the Worker serves there ask for the page's passkey. What it gets
  // names its own origin in the client data, and the check refuses that.
  const worker = createServer((_, res) => res.end("<!doctype html><title>worker</title>"));
  await new Promise((resolve) => worker.listen(0, "127.0.0.1", resolve));
  const { context, page } = await withAuthenticator();
  try {
    const passkey = await register(page);
    const workerOrigin = `http://localhost:${worker.address().port}`;
    await page.goto(`${workerOrigin}/`);
    const assertion = await assertStatement(page, passkey.id, statement(0));
    const client = JSON.parse(Buffer.from(assertion.client_data_json, "base64url"));
    assert.equal(client.origin, workerOrigin);
    const expect = { public_key: passkey.publicKey, rp_id: "localhost", statement: statement(0), assertion };
    assert.deepEqual(verdicts([{ ...expect, origin }, { ...expect, origin: workerOrigin }]), ["passkey_wrong_origin", "ok"]);
    // On a host that is not the RP id's (an address, here), the browser
    // itself will not ask for it.
    await page.goto(`http://127.0.0.1:${worker.address().port}/`);
    await assert.rejects(assertStatement(page, passkey.id, statement(0), "required", "localhost"), /SecurityError/);
  } finally {
    await context.close();
    await new Promise((resolve) => worker.close(resolve));
  }
});
