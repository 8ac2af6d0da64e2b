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
      let json = {};
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
  const steps = [];
  const waiting = [];
  return {
    /** Queues the model's next answer. */
    next(step) {
      const w = waiting.shift();
      if (w) w(step);
      else steps.push(step);
    },
    /** The next answer, once there is one. */
    take: () => (steps.length ? Promise.resolve(steps.shift()) : new Promise((resolve) => waiting.push(resolve))),
    /** How many requests wait for an answer. */
    waiting: () => waiting.length,
    /** Answers queued and not yet taken. */
    queued: () => steps.length,
  };
}
