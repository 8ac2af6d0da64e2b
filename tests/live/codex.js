// The real Codex set up as a person would, for the live suites: a config
// that talks to a mock model, the work folder trusted, and a terminal that
// reviews and trusts new hooks the way a person does at Codex's start.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CODEX } from "./clis.js";
import { inTmux } from "./harness.js";
import { sleep } from "../worker/helpers.js";

/** Writes `codexHome`'s config.toml: `model` as its provider, `cwd` trusted. */
export function writeCodexConfig(codexHome, model, cwd) {
  writeFileSync(join(codexHome, "config.toml"), `model = "gpt-mock"
model_provider = "mock"
approval_policy = "on-request"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "${model.url}"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[projects."${cwd}"]
trust_level = "trusted"
`);
}

/**
 * Starts Codex (`flags`) with `vars` in a tmux of its own, behind `wrap` (a
 * command that starts it, such as `needs-you run --`); resolves at its
 * prompt, new hooks trusted.
 */
export async function startCodex(socket, cwd, vars, flags = "--no-daemon", { wrap = "" } = {}) {
  const t = inTmux(socket, cwd, vars, `${wrap}${CODEX} ${flags}`);
  // New hooks are reviewed at start ("Hooks need review", then the list of
  // hooks): "t" trusts them all, stored in config.toml for later terminals.
  // The review pops up a moment after the prompt first shows.
  const end = Date.now() + 30_000;
  let promptSince = 0;
  for (;;) {
    const s = t.screen();
    if (!/Ask Codex to do anything/.test(s)) promptSince = 0;
    if (/t trust all/.test(s)) {
      t.key("t");
      await sleep(700);
    } else if (/need review|enter confirm/.test(s)) {
      t.key("Enter");
      await sleep(700);
    } else if (/enter details · esc close/.test(s)) {
      t.key("Escape");
      await sleep(700);
    } else if (/Ask Codex to do anything/.test(s)) {
      promptSince ||= Date.now();
      if (Date.now() - promptSince > 2500) return t;
      await sleep(200);
    } else if (Date.now() > end) {
      throw new Error(`Codex never reached its prompt:\n${s}`);
    } else {
      await sleep(200);
    }
  }
}
