// What the mock models share: an HTTP server that hands each request over
// with its JSON body read, and the scripted answers, queued by the test and
// taken by the agent's requests in order (a request that finds none waits).
import { createServer } from "node:http";

/** A server calling `handle(req, res, path, json)`; a body that is not JSON reads as `{}`. */
export function jsonServer(handle) {
  return createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      let json;
      try {
        json = JSON.parse(body || "{}");
      } catch {
        json = {};
      }
      handle(req, res, req.url.split("?")[0], json);
    });
  });
}

export function stepQueue() {
  const steps = []; // { step, asked }
  const waiting = []; // { said, resolve }
  const fits = (asked, said) => !asked || said.includes(asked);
  return {
    /**
     * Queues the model's next answer; with `asked`, only for a request whose
     * person's text holds it (a subagent's, whose requests run beside its
     * parent's).
     */
    next(step, { asked } = {}) {
      const at = waiting.findIndex((w) => fits(asked, w.said));
      if (at >= 0) waiting.splice(at, 1)[0].resolve(step);
      else steps.push({ step, asked });
    },
    /** The next answer for a request whose person's text is `said`, once there is one. */
    take(said = "") {
      const at = steps.findIndex((s) => fits(s.asked, said));
      if (at >= 0) return Promise.resolve(steps.splice(at, 1)[0].step);
      return new Promise((resolve) => waiting.push({ said, resolve }));
    },
    /** How many requests wait for an answer. */
    waiting: () => waiting.length,
    /** Answers queued and not yet taken. */
    queued: () => steps.length,
    /** Forgets the answers queued and not yet taken (a test that failed half-way). */
    clear: () => steps.splice(0),
  };
}
