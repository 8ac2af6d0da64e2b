// The real Hermes set up as a person would, for the live suites: the mock as
// a custom endpoint, approvals asked of the person, and everything that would
// reach the network turned off.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Makes `hermesHome` with a config for `model`. */
export function writeHermesHome(hermesHome, model) {
  mkdirSync(hermesHome, { recursive: true });
  // The mock as a custom endpoint, approvals asked of the person (not of a
  // model), and everything that would reach the network turned off.
  writeFileSync(join(hermesHome, "config.yaml"), `model:
  provider: custom
  base_url: ${model.url}
  default: mock-model
  api_key: mock-key
  context_length: 131072
approvals:
  mode: manual
  timeout: 300
clarify:
  timeout: 300
security:
  tirith_enabled: false
  allow_lazy_installs: false
model_catalog:
  enabled: false
auxiliary:
  title_generation:
    enabled: false
curator:
  enabled: false
lsp:
  enabled: false
memory:
  nudge_interval: 0
skills:
  creation_nudge_interval: 0
`);
  // Hermes checks PyPI and models.dev at start unless these are fresh.
  writeFileSync(join(hermesHome, ".update_check"), JSON.stringify({ ts: Date.now() / 1000, behind: 0, rev: null, ver: "0.19.0" }));
  writeFileSync(join(hermesHome, "models_dev_cache.json"), JSON.stringify({ custom: { id: "custom", name: "offline", models: {} } }));
}
