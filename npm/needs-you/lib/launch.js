// Finds the native binary that the platform's package brought
// (`@needs-you/<platform>-<arch>`, one of this package's optional
// dependencies, of which npm installs only the one whose `os` and `cpu`
// fit) and runs it with this process's arguments, standard streams and
// environment, plus NEEDS_YOU_WORKER_DIR: the prebuilt Worker shipped
// beside this file, which `needs-you deploy` puts on Cloudflare.
//
// Node cannot replace itself with another program, so it starts the binary
// and ends as it ended. At a terminal, its Ctrl-C and Ctrl-\ reach the binary
// by themselves (it is in the terminal's foreground group with this
// process): they are ignored here, since passing them on would give it each
// one twice, which an agent under `needs-you run` may read as "quit". Away
// from a terminal, and for a TERM or a hang-up, whatever this process is sent
// is passed on.
"use strict";

const { spawn } = require("node:child_process");
const { existsSync } = require("node:fs");
const { constants } = require("node:os");
const path = require("node:path");

/** The platforms a package is built for: Node's names, as in the packages' names. */
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];

/** The terminal's signals, which reach the binary by themselves. */
const FROM_THE_TERMINAL = ["SIGINT", "SIGQUIT"];
/** Signals another process sends this one, passed on to the binary. */
const PASSED_ON = ["SIGTERM", "SIGHUP"];

/** The path of `name` in this platform's package, or why there is none. */
function nativeBinary(name) {
  const platform = `${process.platform}-${process.arch}`;
  if (!PLATFORMS.includes(platform)) {
    return { why: `no prebuilt ${name} for ${platform} (there are: ${PLATFORMS.join(", ")}); cargo install needs-you builds it` };
  }
  const pkg = `@needs-you/${platform}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    return { why: `${pkg} is not installed beside needs-you (installs that leave out optional dependencies leave it out): npm i -g needs-you` };
  }
  const file = path.join(dir, "bin", name);
  return existsSync(file) ? { file } : { why: `${file} is missing: npm i -g needs-you again` };
}

/**
 * Runs the native `name`. Without one, says why on one line; `report-prompt`
 * then still exits 0, as it does whenever it cannot report, since an agent
 * may be running it as a hook.
 */
function launch(name) {
  const found = nativeBinary(name);
  if (!found.file) {
    process.stderr.write(`${name}: ${found.why}\n`);
    process.exit(name === "report-prompt" ? 0 : 1);
  }
  const env = { ...process.env };
  const worker = path.join(__dirname, "..", "worker");
  if (!env.NEEDS_YOU_WORKER_DIR && existsSync(worker)) env.NEEDS_YOU_WORKER_DIR = worker;
  const child = spawn(found.file, process.argv.slice(2), { stdio: "inherit", env });
  const atTerminal = !!process.stdin.isTTY;
  for (const signal of FROM_THE_TERMINAL) process.on(signal, () => atTerminal || child.kill(signal));
  for (const signal of PASSED_ON) process.on(signal, () => child.kill(signal));
  child.on("error", (e) => {
    process.stderr.write(`${name}: cannot run ${found.file}: ${e.message}\n`);
    process.exit(name === "report-prompt" ? 0 : 1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // Ended by a signal: end by the same one, as a shell expects.
      // Node does not die of every signal (SIGPIPE, SIGUSR1): the shell's
      // code for a death by it, then.
      for (const s of [...FROM_THE_TERMINAL, ...PASSED_ON]) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    process.exit(code ?? 1);
  });
}

module.exports = { launch, nativeBinary, PLATFORMS };
