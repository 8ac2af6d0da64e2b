// The request an answer from afar covers, as a report carries it, and its
// digest made here in JavaScript from the documented rule (SHA-256 of the
// tool's name as a JSON string, a new line, and the input as JSON with every
// object's keys sorted), independently of the Rust code that the Worker and
// the reporter share.
import { createHash } from "node:crypto";

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
 * for the request of `tool` with `input`: the request itself and its digest.
 */
export function takesRequest(takes, tool, input) {
  return { takes, digest: requestDigest(tool, input), request: { tool, input } };
}

/** The id of the lasting choice that applies `suggestion`: `keep-` and its digest. */
export function lastingId(suggestion) {
  return `keep-${requestDigest("lasting", suggestion)}`;
}
