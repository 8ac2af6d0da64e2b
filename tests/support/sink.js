// The one local HTTP sink of the JavaScript tests: a real server on 127.0.0.1
// that records every request and answers as told (200 by default; a number of
// 503s or redirects, a delay, or no answer at all), so channels and reporters
// are checked against real HTTP.
import { createServer } from "node:http";

export async function startSink({ port = 0 } = {}) {
  const received = [];
  let failures = 0;
  let delayMs = 0;
  let hanging = 0;
  let redirects = 0;
  let redirectTo = "";
  const held = new Set();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      // `status` is what the sink answered: null while (or if never) answered.
      const entry = { method: req.method, url: req.url, headers: req.headers, body, at: Date.now(), status: null };
      received.push(entry);
      if (hanging > 0) {
        hanging -= 1;
        held.add(res); // never answered; closed when the sink stops
        return;
      }
      const answer = () => {
        if (redirects > 0) {
          redirects -= 1;
          entry.status = 307;
          res.writeHead(307, { location: redirectTo }).end();
        } else if (failures > 0) {
          failures -= 1;
          entry.status = 503;
          res.writeHead(503, { "content-type": "text/plain" }).end("down");
        } else {
          entry.status = 200;
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        }
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = server.address().port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    received,
    /** Request bodies parsed as JSON, in arrival order. */
    json: () => received.map((r) => JSON.parse(r.body)),
    /** The next `n` requests get 503. */
    failNext(n) {
      failures = n;
    },
    /** The next `n` requests are sent on to `location` (307). */
    redirectNext(n, location) {
      redirects = n;
      redirectTo = location;
    },
    /** The next `n` requests are never answered. */
    hangNext(n) {
      hanging = n;
    },
    /** Every answer from now on waits `ms`. */
    delay(ms) {
      delayMs = ms;
    },
    stop: () =>
      new Promise((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections?.();
        server.close(resolve);
      }),
  };
}
