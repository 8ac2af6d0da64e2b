// The npm packages as a person without Rust gets them: scripts/npm-pack.sh's
// tarballs (dist/npm/) installed with `npm install -g --prefix` into a fresh
// home whose PATH has no cargo, then both commands run through npm's
// launchers, `needs-you deploy --dry-run` bundles the shipped Worker with the
// real wrangler (fetched by npx, at the pinned version), and `needs-you deploy
// --local` serves it on 127.0.0.1 under the real `wrangler dev`, this home
// logged in as its owner; a report of the npm-installed report-prompt, run
// under `needs-you run`, is listed.
//
//   bash scripts/npm-pack.sh && node --test tests/npm/
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { endProcessesWithin } from "../support/leftovers.js";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, sleep, waitFor } from "../worker/helpers.js";

const DIST = join(ROOT, "dist", "npm");
// The workspace's one version (Cargo.toml), which npm-pack.sh stamps on the packages.
const VERSION = readFileSync(join(ROOT, "Cargo.toml"), "utf8").match(/^version = "(.*)"/m)[1];
let scratch, prefix, env;

before(() => {
  const tarballs = existsSync(DIST) ? readdirSync(DIST).filter((f) => f.endsWith(".tgz")) : [];
  assert.deepEqual(tarballs.sort(), [`needs-you-${VERSION}.tgz`, `needs-you-linux-x64-${VERSION}.tgz`], "bash scripts/npm-pack.sh first");
  scratch = mkdtempSync(join(tmpdir(), "needs-you-npm-"));
  prefix = join(scratch, "prefix");
  const home = join(scratch, "home");
  // The machine's environment (its TLS roots for the npm registry among
  // it), but a fresh home, no variable of ours, and a PATH without Rust.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("NEEDS_YOU_") && !k.startsWith("CARGO") && !k.startsWith("RUSTUP")));
  env = {
    ...inherited,
    HOME: home, USER: "ana", XDG_CONFIG_HOME: join(home, ".config"), NEEDS_YOU_STATE_DIR: join(home, "state"),
    // Node and npm, tmux and the shell's tools; no cargo, no rustc.
    PATH: `${join(prefix, "bin")}:/usr/local/bin:/usr/bin:/bin`,
    // npm's cache, shared with this machine's: npx finds the pinned wrangler
    // there without the registry.
    npm_config_cache: join(homedir(), ".npm"), npm_config_update_notifier: "false",
    WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI_NO_UPDATE_CHECK: "1",
  };
  for (const tool of ["cargo", "rustc"]) {
    assert.notEqual(spawnSync("sh", ["-c", `command -v ${tool}`], { env }).status, 0, `${tool} is on the PATH`);
  }
  execFileSync("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error",
    ...readdirSync(DIST).filter((f) => f.endsWith(".tgz")).map((f) => join(DIST, f))], { env, stdio: "pipe" });
});

after(async () => {
  await endProcessesWithin(scratch);
  rmSync(scratch, { recursive: true, force: true });
});

const run = (command, args, input) => spawnSync(command, args, { env, input, encoding: "utf8", timeout: 180_000 });

function sizeOf(path) {
  const s = statSync(path);
  return s.isDirectory() ? readdirSync(path).reduce((n, f) => n + sizeOf(join(path, f)), 0) : s.size;
}

test("both commands run from npm's launchers, with no Rust on the machine, and the packages take at most 15 MB", () => {
  const v = run("needs-you", ["--version"]);
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout, `needs-you ${VERSION}\n`);
  // A failure's exit code and its one line come through the launcher.
  const ls = run("needs-you", ["ls"]);
  assert.deepEqual([ls.status, ls.stdout, ls.stderr.trim().split("\n").length], [3, "", 1], ls.stderr);
  assert.match(ls.stderr, /^needs-you: not logged in/);
  const event = JSON.stringify({ session_id: "s", hook_event_name: "Stop", last_assistant_message: "Tests pass. Shall I deploy?" });
  const c = run("report-prompt", ["classify", "--cli", "claude-code"], event);
  assert.equal(c.status, 0, c.stderr);
  assert.deepEqual(JSON.parse(c.stdout), { session: "s", action: "open", kind: "reply", text: "Tests pass. Shall I deploy?" });
  const bytes = sizeOf(join(prefix, "lib", "node_modules"));
  assert.ok(bytes <= 15 * 1024 * 1024, `${bytes} bytes`);
  // The native binaries are static: no C library of the machine's needed.
  const native = join(prefix, "lib", "node_modules", "@needs-you", "linux-x64", "bin", "report-prompt");
  assert.match(execFileSync("file", [native], { encoding: "utf8" }), /static/);
});

test("a hook installed from npm runs the native report-prompt, never the Node launcher", () => {
  const out = run("report-prompt", ["install", "--cli", "claude-code"]);
  assert.equal(out.status, 0, out.stderr);
  const settings = readFileSync(join(env.HOME, ".claude", "settings.json"), "utf8");
  const native = realpathSync(join(prefix, "lib", "node_modules", "@needs-you", "linux-x64", "bin", "report-prompt"));
  assert.ok(settings.includes(native), settings);
  assert.ok(!settings.includes(join(prefix, "bin", "report-prompt")), "not the launcher");
});

test("needs-you deploy --dry-run bundles the shipped Worker with the pinned wrangler and deploys nothing", () => {
  const d = run("needs-you", ["deploy", "--dry-run"]);
  assert.equal(d.status, 0, `${d.stdout}\n${d.stderr}`);
  assert.match(d.stdout, new RegExp(`Dry run: needs-you ${VERSION.replace(/\./g, "\\.")}'s Worker bundles with wrangler [0-9.]+ \\(\\d+ KB\\); nothing was deployed\\.`));
});

test("a wrangler another user planted under the temporary folder is never the one deploy runs", () => {
  // What any local user may leave in /tmp: a node_modules with a wrangler of
  // the pinned version, whose program notes that it ran and with what.
  const tmp = join(scratch, "shared-tmp");
  const pinned = JSON.parse(readFileSync(join(ROOT, "node_modules", "wrangler", "package.json"), "utf8")).version;
  const planted = join(tmp, "node_modules", "wrangler");
  mkdirSync(join(tmp, "node_modules", ".bin"), { recursive: true });
  mkdirSync(planted, { recursive: true });
  const ran = join(scratch, "planted-wrangler-ran");
  writeFileSync(join(planted, "package.json"), JSON.stringify({ name: "wrangler", version: pinned, bin: { wrangler: "cli.js" } }));
  writeFileSync(join(planted, "cli.js"), `#!/usr/bin/env node\nrequire("fs").writeFileSync(${JSON.stringify(ran)}, process.argv.join(" "));\n`);
  chmodSync(join(planted, "cli.js"), 0o755);
  execFileSync("ln", ["-s", "../wrangler/cli.js", join(tmp, "node_modules", ".bin", "wrangler")]);
  const d = spawnSync("needs-you", ["deploy", "--dry-run"], { env: { ...env, TMPDIR: tmp }, encoding: "utf8", timeout: 180_000 });
  assert.equal(d.status, 0, `${d.stdout}\n${d.stderr}`);
  assert.match(d.stdout, /Dry run: .* nothing was deployed\./);
  assert.ok(!existsSync(ran), `the planted wrangler ran: ${existsSync(ran) && readFileSync(ran, "utf8")}`);
});

test("needs-you deploy --local serves the Worker on 127.0.0.1, this home is its owner, a report made under needs-you run is listed; TERM stops it and forgets the login", async () => {
  const port = 18_000 + (process.pid % 2000);
  const url = `http://127.0.0.1:${port}`;
  const server = spawn("needs-you", ["deploy", "--local", "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] });
  let said = "";
  server.stdout.on("data", (d) => (said += d));
  server.stderr.on("data", (d) => (said += d));
  const ended = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })));
  try {
    assert.ok(await waitFor(() => said.includes("is serving on"), 150_000), said);
    const health = await (await fetch(`${url}/v1/health`)).json();
    assert.deepEqual(health, { ok: true, version: VERSION });
    // The Web Push key deploy made is one the Worker can use.
    const push = await (await fetch(`${url}/v1/push/key`)).json();
    assert.match(push.public_key, /^B[A-Za-z0-9_-]{86}$/, JSON.stringify(push));
    const v = run("needs-you", ["--version"]);
    assert.equal(v.stdout, `needs-you ${VERSION}\nthe Worker at ${url}: ${VERSION}\n`);
    const empty = run("needs-you", ["ls", "--json"]);
    assert.equal(empty.status, 0, empty.stderr);
    assert.deepEqual(JSON.parse(empty.stdout).questions, []);
    // An agent stand-in under watch: it reports through the report-prompt
    // that `needs-you run` hands it, then waits to be listed.
    const event = JSON.stringify({ session_id: "npm-1", cwd: scratch, hook_event_name: "Stop", last_assistant_message: "Built from npm. Shall I ship it?" });
    const agent = spawn("needs-you", ["run", "--name", "from npm", "--", "sh", "-c",
      `case "$NEEDS_YOU_REPORTER" in ${prefix}/*) ;; *) echo "no native reporter: $NEEDS_YOU_REPORTER" >&2; exit 3 ;; esac
       echo '${event}' | "$NEEDS_YOU_REPORTER" --cli claude-code && sleep 30`], { env, stdio: ["ignore", "pipe", "pipe"] });
    let agentSaid = "";
    agent.stderr.on("data", (d) => (agentSaid += d));
    let listed;
    assert.ok(await waitFor(() => {
      const ls = run("needs-you", ["ls", "--json"]);
      listed = ls.status === 0 && JSON.parse(ls.stdout).questions;
      return listed?.length === 1;
    }, 20_000), `${JSON.stringify(listed)} ${agentSaid}`);
    assert.deepEqual([listed[0].kind, listed[0].text, listed[0].task_name], ["reply", "Built from npm. Shall I ship it?", "from npm"]);
    agent.kill("SIGTERM");
  } finally {
    server.kill("SIGTERM");
  }
  assert.deepEqual(await ended, { code: 0, signal: null }, said);
  assert.match(said, /forgot this machine's login/);
  assert.equal(existsSync(join(env.XDG_CONFIG_HOME, "needs-you", "login.json")), false);
  await sleep(200);
  await assert.rejects(fetch(`${url}/v1/health`), "wrangler is gone with it");
});
