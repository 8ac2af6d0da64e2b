// The request an answer from afar covers, as a report carries it, and its
// digest made here in JavaScript from the documented rule (SHA-256 of the
// tool's name as a JSON string, a new line, and the input as JSON with every
// object's keys sorted), independently of the Rust code that the Worker and
// the reporter share.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { callBuilder, callWordsBuilder } from "../../public/card.js";

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** The digest of `tool` with `input`, in hex. */
export function requestDigest(tool, input) {
  return createHash("sha256").update(`${JSON.stringify(tool)}\n${canonical(input)}`).digest("hex");
}

/**
 * The fields of an open report that takes `takes` ("decision" or "choices")
 * for the request of `tool` with `input` (and the lasting choices its CLI
 * suggests, if any), as the reporter's sender sends them: the request, its
 * digest, and what the sender builds from it (`builtCard`).
 */
export function takesRequest(takes, tool, input, lasting) {
  const request = { tool, input, ...(lasting ? { lasting } : {}) };
  return { takes, digest: requestDigest(tool, input), request, ...builtCard(takes, request) };
}

let builder;
/**
 * What the reporter's sender adds to an open that carries its request, since
 * the server reads none: the card built from it (text, options, questions)
 * and, for a decision, the lasting choices it offers. Built here by the
 * page's card builder, public/card.wasm, the core's code as the sender runs it.
 */
export function builtCard(takes, request) {
  const card = callBuilder(cardBuilder(), takes, request);
  const lasting = takes === "decision" && card.lasting.length ? { lasting: card.lasting } : {};
  return { text: card.text, options: card.options, questions: card.questions, ...lasting };
}

/** The page's card builder, public/card.wasm, loaded once. */
function cardBuilder() {
  builder ??= new WebAssembly.Instance(new WebAssembly.Module(
    readFileSync(new URL("../../public/card.wasm", import.meta.url)))).exports;
  return builder;
}

/** A question of `kind`'s sealed words, opened, as a device shows them: the
 *  card of the request they carry built by public/card.wasm (its machine
 *  sealed them without it). */
export function shownWords(kind, words) {
  return callWordsBuilder(cardBuilder(), kind, words);
}

/** The id of the lasting choice that applies `suggestion`: `keep-` and its digest. */
export function lastingId(suggestion) {
  return `keep-${requestDigest("lasting", suggestion)}`;
}
