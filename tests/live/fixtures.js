// The payloads the real CLIs sent to our hooks during a live run. The
// reporter keeps the last one of each event in NEEDS_YOU_RECORD_DIR; with
// NEEDS_YOU_RECORD_FIXTURES=1 the run copies them to the core crate's
// fixtures, which its tests classify: a CLI version that changes a shape
// fails there first.
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../worker/helpers.js";

/** The folder a live run records into, inside its scratch `home`. */
export function recorded(home) {
  const dir = join(home, "recorded");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Copies what was recorded for `cli` into the fixtures, when asked to. */
export function keepFixtures(home, cli) {
  if (!home || process.env.NEEDS_YOU_RECORD_FIXTURES !== "1") return;
  const to = join(ROOT, "crates", "needs-you-core", "tests", "fixtures");
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(recorded(home)).filter((f) => f.startsWith(`${cli}.`))) {
    cpSync(join(recorded(home), f), join(to, f));
  }
}
