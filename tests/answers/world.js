// What the answers and Show terminal suites both stand on: the Worker in
// Miniflare, a scratch folder, the API called as an owner or a task, and a
// stand-in agent started in a tmux server of its own, whose relay is the real
// reporter's. Everything started here is stopped by `stop()`.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, ROOT, startWorker, waitFor } from "../worker/helpers.js";
import { endProcessesWithin } from "../support/leftovers.js";
import { ownerKey } from "../support/signing.js";

export const REPORTER = join(ROOT, "target", "release", "report-prompt");

/**
 * Starts the Worker; `name` names the scratch folder, `taskName` the task
 * each `owner()` gets.
 */
export async function startWorld(name, { taskName }) {
  const w = await startWorker({});
  const scratch = mkdtempSync(join(tmpdir(), `needs-you-${name}-`));
  const servers = [];
  let n = 0;

  /** Each owner's key, by the owner's token. */
  const keys = new Map();

  /** Calls the API. An answer posted with an owner's token is signed by
   *  that owner's key for the question as the owner's list shows it, as
   *  `needs-you answer` signs it (a question no longer listed: unsigned). */
  async function api(method, path, token, body) {
    const answering = method === "POST" && /^\/v1\/questions\/([^/]+)\/answers$/.exec(path);
    if (answering && keys.has(token) && body && typeof body === "object" && !("signed" in body)) {
      const list = (await api("GET", "/v1/needs-you", token)).body?.questions ?? [];
      const q = list.find((x) => x.question_id === decodeURIComponent(answering[1]));
      if (q) body = await keys.get(token).body(q, body);
    }
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    const r = await fetch(w.url + path, { method, headers, body: body && JSON.stringify(body) });
    return { status: r.status, body: await r.json().catch(() => null) };
  }

  /** A new owner with one task (`taskFields` added to its creation), and
   *  its key (`key`), whose fingerprint its agents' machine pins. */
  async function owner(taskFields = {}) {
    const o = (await api("POST", "/v1/owners", ADMIN, { name: "Ana" })).body;
    const task = (await api("POST", "/v1/tasks", o.token, { name: taskName, ...taskFields })).body;
    const key = await ownerKey();
    keys.set(o.token, key);
    return { ...o, task, key };
  }

  /**
   * The stand-in agent `agent` (a script in tests/answers/, or `command(dir)`)
   * in a new tmux server's pane, reporting as session `session` with owner
   * `o`'s task; resolves once its question is listed. `tmux` is the tmux
   * session's name, a target for tmux commands.
   */
  async function agentInTmux(o, { agent, command, env = {}, session, size = [200, 50] }) {
    const dir = mkdtempSync(join(scratch, "agent-"));
    const sock = join(scratch, `tmux-${++n}.sock`);
    servers.push(sock);
    const tmux = `agent${n}`;
    const reported = session ?? `s-${n}`;
    const run = command ? command(dir) : `python3 ${join(ROOT, "tests", "answers", agent)} ${dir}`;
    execFileSync("tmux", ["-S", sock, "new-session", "-d", "-s", tmux, "-x", String(size[0]), "-y", String(size[1]), run], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TERM: "xterm-256color",
        NEEDS_YOU_URL: w.url,
        NEEDS_YOU_TOKEN: o.task.credential,
        NEEDS_YOU_OWNER: o.key.fingerprint,
        NEEDS_YOU_STATE_DIR: join(scratch, "state"),
        REPORTER,
        AGENT_SESSION: reported,
        ...env,
      },
    });
    assert.ok(await waitFor(() => existsSync(join(dir, "opened")), 10000), "the agent opened its question");
    const q = await waitFor(async () => (await api("GET", "/v1/needs-you", o.token)).body.questions.find((x) => x.session === reported), 10000);
    assert.ok(q, "the question is listed");
    return { dir, sock, tmux, session: reported, q };
  }

  /**
   * The relay's side of the protocol, by hand: a WebSocket into Miniflare with
   * task credential `t`, its hello sent; `got` collects what the Worker sends.
   */
  async function relayByHand(t) {
    const resp = await w.mf.dispatchFetch(`${w.url}/v1/relay`, { headers: { upgrade: "websocket", authorization: `Bearer ${t}` } });
    assert.equal(resp.status, 101);
    const ws = resp.webSocket;
    const got = [];
    ws.addEventListener("message", (e) => got.push(JSON.parse(e.data)));
    ws.accept();
    ws.send(JSON.stringify({ type: "hello" }));
    return { ws, got };
  }

  async function stop() {
    for (const sock of servers) spawnSync("tmux", ["-S", sock, "kill-server"]);
    // The relays end with their tmux panes' questions; stop them now.
    await endProcessesWithin(scratch);
    await w.stop();
    rmSync(scratch, { recursive: true, force: true });
  }

  return { w, scratch, api, owner, agentInTmux, relayByHand, stop };
}
