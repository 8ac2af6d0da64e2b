// The real OpenCode set up as a person would, for the live suites: a config
// that talks to a mock model and asks before running a command, and the
// @opencode-ai/plugin copy OpenCode needs offline.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPENCODE_PLUGIN_DIR } from "./clis.js";

/** Writes `config`/opencode/opencode.json for `model`, with `plugin` entries if given. */
export function writeOpencodeConfig(config, model, plugin) {
  mkdirSync(join(config, "opencode"), { recursive: true });
  writeFileSync(join(config, "opencode", "opencode.json"), JSON.stringify({
    provider: { mock: { npm: "@ai-sdk/openai-compatible", name: "Mock",
      options: { baseURL: model.url, apiKey: "mock" }, models: { "mock-model": { name: "Mock" } } } },
    model: "mock/mock-model", permission: { bash: "ask" }, autoupdate: false, share: "disabled",
    ...(plugin ? { plugin } : {}),
  }));
  // OpenCode installs @opencode-ai/plugin into its config folder at start and
  // hangs offline doing so, unless it is there already (setup-live.sh keeps a
  // copy): what a person offline does once, as docs/hooks.md says.
  execFileSync("cp", ["-r", `${OPENCODE_PLUGIN_DIR}/.`, join(config, "opencode")]);
}
