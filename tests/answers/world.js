// What the answers and Show terminal suites both stand on: the Worker in
// Miniflare, a scratch folder, the API called as an owner or a task, and a
// stand-in agent started in a tmux server of its own, whose relay is the real
// reporter's. Everything started here is stopped by `stop()`.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { webcrypto } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, ROOT, startWorker, waitFor } from "../worker/helpers.js";
import { endProcessesWithin } from "../support/leftovers.js";
import { b64url, ownerKey } from "../support/signing.js";
import { openText } from "../support/sealing.js";

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

  /** A new owner with one task (`taskFields` added to its creation), its
   *  key (`key`), whose fingerprint its agents' machine pins, and its content
   *  key (`contentKey`, version 1), kept as `needs-you setup` keeps them in
   *  `home`'s `needs-you` folder (`keysFile`: the content key's file, which
   *  its agents' relays seal their screens with). */
  async function owner(taskFields = {}) {
    const o = (await api("POST", "/v1/owners", ADMIN, { name: "Ana" })).body;
    const task = (await api("POST", "/v1/tasks", o.token, { name: taskName, ...taskFields })).body;
    const key = await ownerKey();
    keys.set(o.token, key);
    const contentKey = { version: 1, key: b64url(webcrypto.getRandomValues(new Uint8Array(32))) };
    const home = mkdtempSync(join(scratch, "owner-"));
    const config = join(home, "needs-you");
    mkdirSync(config, { mode: 0o700 });
    writeFileSync(join(config, "login.json"), JSON.stringify({ url: w.url, token: o.token, owner: key.fingerprint }), { mode: 0o600 });
    writeFileSync(join(config, "owner-key.json"), JSON.stringify({ secret: key.secret }), { mode: 0o600 });
    const keysFile = join(config, "content-key.json");
    writeFileSync(keysFile, JSON.stringify({ keys: [contentKey] }), { mode: 0o600 });
    key.contentKey = contentKey;
    return { ...o, task, key, contentKey, home, keysFile };
  }

  /** The words of `o`'s question `q` as its machine sealed them, opened by
   *  Node with `o`'s content key, as the open the list names. */
  async function words(o, q) {
    const held = (await api("GET", `/v1/questions/${q.question_id}/request`, o.token)).body;
    assert.ok(held.sealed, `sealed words: ${JSON.stringify(held).slice(0, 200)}`);
    return JSON.parse(await openText(o.contentKey, o.key.fingerprint, `${q.session}\n${q.open_seq}`, "question", held.sealed));
  }

  /**
   * `needs-you` on owner `o`'s own machine (its login, owner key and content
   * key): `(...args)` starts it, {child, ended ({code, out, err})}.
   */
  function ownerCli(o) {
    return (...args) => {
      const child = spawn(join(ROOT, "target", "release", "needs-you"), args, { env: { PATH: process.env.PATH, XDG_CONFIG_HOME: o.home } });
      let out = "", err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      return { child, ended: new Promise((resolve) => child.on("exit", (code) => resolve({ code, out, err }))) };
    };
  }

  /**
   * A browser page paired to owner `o` as a person pairs a phone: by the
   * owner's `needs-you pair` (`rights`, if given), whose link lets the page
   * prove its keys, and which vouches for it and gives it the content key.
   * Resolves once the page says so.
   */
  async function pairedByOwner(o, newPage, { rights, viewport } = {}) {
    const pairing = ownerCli(o)("pair", "--json", ...(rights ? ["--rights", rights.join(",")] : []));
    const url = await new Promise((resolve) => pairing.child.stdout.once("data", (d) => resolve(JSON.parse(String(d).split("\n")[0]).url)));
    const { context, page } = await newPage(viewport ? { viewport } : undefined);
    await page.goto(url);
    await page.click("#pair-ask-yes"); // "Pair this browser with …?"
    const done = await pairing.ended;
    assert.equal(done.code, 0, done.err);
    await page.locator("#status", { hasText: /^Paired: your machines take the answers this browser signs, and it opens what they seal\.$/ }).waitFor();
    return { context, page };
  }

  /**
   * The stand-in agent `agent` (a script in tests/answers/, or `command(dir)`)
   * in a new tmux server's pane, reporting as session `session` with owner
   * `o`'s task; resolves once its question is listed. `tmux` is the tmux
   * session's name, a target for tmux commands.
   */
  async function agentInTmux(o, { agent, command, env = {}, session, size = [200, 50], tmuxName }) {
    const dir = mkdtempSync(join(scratch, "agent-"));
    const sock = join(scratch, `tmux-${++n}.sock`);
    servers.push(sock);
    const tmux = tmuxName ?? `agent${n}`;
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
        NEEDS_YOU_CONTENT_KEYS: o.keysFile,
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

  return { w, scratch, api, owner, words, ownerCli, pairedByOwner, agentInTmux, relayByHand, stop };
}
