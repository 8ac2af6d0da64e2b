// What every live suite shares: the owner's "Needs you" list, read and
// waited on, and an agent CLI started in its own tmux with only the
// environment given (a pane gets the tmux server's environment otherwise).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, newOwner, startWorker, waitFor } from "../worker/helpers.js";
import { tmux } from "./tmux.js";

/**
 * The Worker in Miniflare (with `vars`) and one owner, the owner's list
 * helpers, and a scratch `home` with a `work` folder (`cwd`) for the agent.
 * `stop()` stops the Worker and removes `home` (kept with NEEDS_YOU_LIVE_KEEP).
 */
export async function startLive(name, vars) {
  const w = await startWorker(vars);
  const owner = await newOwner(w);
  const home = mkdtempSync(join(tmpdir(), `needs-you-live-${name}-`));
  const cwd = join(home, "work");
  mkdirSync(cwd);
  return {
    w, owner, home, cwd, ...needsYou(w, owner.token),
    async stop() {
      await w.stop();
      if (process.env.NEEDS_YOU_LIVE_KEEP) console.log(`# kept ${home}`);
      else rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The owner's list: `list()`, `listUntil(check)`, and `reason(questionId)` once closed. */
export function needsYou(w, ownerToken) {
  const list = async () => (await call(w, "GET", "/v1/needs-you", { token: ownerToken })).body.questions;
  return {
    list,
    /** Waits until the list satisfies `check`; returns the list. */
    async listUntil(check, ms = 15_000) {
      let last;
      const ok = await waitFor(async () => check((last = await list())), ms, 100);
      assert.ok(ok, `the list never got there: ${JSON.stringify(last)}`);
      return last;
    },
    reason: async (qid) =>
      (await w.db.prepare("SELECT close_reason FROM questions WHERE id = ?").bind(qid).first())?.close_reason,
  };
}

/**
 * Starts `command` in `cwd` in a new tmux of its own, with exactly `vars` as
 * its environment, plus the pane's own `TMUX` and `TMUX_PANE`, which every
 * program started in tmux has (the reporter finds its pane with them), and a
 * short idle time for the relays it starts.
 */
export function inTmux(socket, cwd, vars, command) {
  // A relay started in a test ends soon after its questions do.
  const all = { NEEDS_YOU_RELAY_IDLE_S: 5, ...vars };
  const assignments = [
    ...Object.entries(all).map(([k, v]) => `${k}='${v}'`),
    `TMUX="$TMUX"`,
    `TMUX_PANE="$TMUX_PANE"`,
  ].join(" ");
  const term = tmux(socket);
  term.start("agent", cwd, `env -i ${assignments} ${command}`);
  return term;
}
