#!/usr/bin/env node
// Makes a Web Push (VAPID) key pair for the Worker: prints the private key
// (the P-256 scalar, base64url: the secret VAPID_PRIVATE_KEY) and, for
// reference, the public key the page will subscribe with (the Worker derives
// it from the private key and serves it at GET /v1/push/key).
//
//   node scripts/vapid-keys.mjs                # KEY=VALUE lines
//   node scripts/vapid-keys.mjs --private      # the private key alone, for a pipe
import { webcrypto } from "node:crypto";

const pair = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
const { d } = await webcrypto.subtle.exportKey("jwk", pair.privateKey);
const pub = Buffer.from(await webcrypto.subtle.exportKey("raw", pair.publicKey)).toString("base64url");
if (process.argv.includes("--private")) process.stdout.write(d);
else process.stdout.write(`VAPID_PRIVATE_KEY=${d}\nVAPID_PUBLIC_KEY=${pub}\n`);
