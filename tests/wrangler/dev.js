// `wrangler dev` itself, for what only the local runtime's own proxy and
// restarts show (Miniflare, which the other suites use, has neither): started
// on a free port of 127.0.0.1 with its own local D1 and Durable Object state,
// stopped or killed as a whole process group, and started again on the same
// state.
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, ROOT, sleep } from "../worker/helpers.js";

/** A port of 127.0.0.1 that nothing listens on now. */
export async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/** Starts `wrangler dev` with `vars`; `restart(signal)` ends it with
 *  `signal` (SIGTERM, SIGKILL) and starts it again on the same state;
 *  `log()` is everything it printed so far, every start's. */
export const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");
// As scripts/env.sh sets them: no telemetry, no update checks, no fetch of
// Cloudflare's request metadata (none would get through).
export const ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false",
  CI_NO_UPDATE_CHECK: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

export async function startDev(vars = {}) {
  const state = mkdtempSync(join(tmpdir(), "needs-you-wrangler-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  execFileSync(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], {
    cwd: ROOT, stdio: "ignore", input: "", env: ENV,
  });
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", state,
    "--show-interactive-dev-session=false", "--var", `ADMIN_TOKEN:${ADMIN}`,
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`])];
  let child;
  const logPath = join(state, "wrangler.log");
  const up = async () => {
    const out = openSync(logPath, "a");
    child = spawn(WRANGLER, args, { cwd: ROOT, stdio: ["ignore", out, out], detached: true, env: ENV });
    closeSync(out);
    for (let i = 0; i < 480; i++) {
      try {
        if ((await fetch(`${url}/v1/health`)).ok) return;
      } catch {
        // not yet
      }
      await sleep(250);
    }
    throw new Error("wrangler dev did not come up");
  };
  const end = async (signal) => {
    const gone = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid, signal);
    } catch {
      return;
    }
    await gone;
    // workerd's children of the group, if the signal reached wrangler only.
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // all gone
    }
  };
  await up();
  return {
    url,
    port,
    log: () => readFileSync(logPath, "utf8"),
    async restart(signal) {
      await end(signal);
      await up();
    },
    async stop() {
      await end("SIGTERM");
      rmSync(state, { recursive: true, force: true });
    },
  };
}
