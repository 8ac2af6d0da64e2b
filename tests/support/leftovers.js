// What a test's processes leave running: the reporter's detached senders,
// transcript watchers and relays are no children of the test, outlive the
// agent that started them, and may still write their state and log as the
// test removes its folder. A test finds them by the folder it gave them.
import { readdirSync, readFileSync } from "node:fs";

/** Pids of this user's processes with a variable (HOME, a state folder) that
 *  is `dir` or inside it, this one aside. */
export function processesWithin(dir) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p)).map(Number)) {
    if (pid === process.pid) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue; // gone, or not ours
    }
    const inside = environ.split("\0").some((v) => {
      const value = v.slice(v.indexOf("=") + 1);
      return value === dir || value.startsWith(`${dir}/`);
    });
    if (inside) found.push(pid);
  }
  return found;
}

/** Kills every process within `dir` and waits (up to two seconds) until none
 *  is left, so that removing `dir` next races with nobody. */
export async function endProcessesWithin(dir) {
  for (let i = 0; i < 40; i++) {
    const left = processesWithin(dir);
    if (!left.length) return;
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
