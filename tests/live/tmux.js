// Driving a terminal program in a real tmux, on a private tmux server: start
// it, read its screen, type text and keys, wait for what it shows.
import { execFileSync } from "node:child_process";

export function tmux(socket) {
  const run = (...args) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const t = {
    /** Starts `command` (a shell string) in a new 160x45 window, in `cwd`. */
    start(name, cwd, command) {
      run("new-session", "-d", "-s", name, "-x", "160", "-y", "45", "-c", cwd, command);
      t.name = name;
    },
    screen: () => run("capture-pane", "-p", "-t", t.name),
    /** Waits until the screen matches `re`; returns the screen. */
    async waitFor(re, ms = 30_000) {
      const end = Date.now() + ms;
      for (;;) {
        const s = t.screen();
        if (re.test(s)) return s;
        if (Date.now() > end) throw new Error(`the screen never showed ${re}; its last lines:\n${lastLines(s, 20)}`);
        await sleep(150);
      }
    },
    /** Types `text` as it is, then Enter on its own (one chunk with Enter is a paste). */
    async type(text) {
      run("send-keys", "-t", t.name, "-l", "--", text);
      await sleep(400);
      run("send-keys", "-t", t.name, "Enter");
    },
    key: (k) => run("send-keys", "-t", t.name, k),
    stop() {
      try {
        run("kill-server");
      } catch {
        // already gone
      }
    },
  };
  return t;
}

// The end of a screen is where an agent's latest output is; a failure's
// report is cut short, so it leads with that and not with the banner.
function lastLines(screen, n) {
  return screen.trimEnd().split("\n").filter((l) => l.trim() !== "").slice(-n).join("\n");
}
