// What building a card in the page costs: public/card.wasm (the core's card
// builder for wasm32) compiled and instantiated, then cards built from a
// permission's request (a command) and a dialog's (two questions), in V8,
// Chromium's engine. Medians of ROUNDS rounds of BATCH builds each.
//
//   bash bench/card.sh     # writes bench/results/card.json
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { callBuilder } from "../public/card.js";

const ROUNDS = 30;
const BATCH = 200;
const bytes = readFileSync(new URL("../public/card.wasm", import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const starts = [];
let wasm;
for (let i = 0; i < ROUNDS; i++) {
  const t = performance.now();
  wasm = (await WebAssembly.instantiate(bytes)).instance.exports;
  starts.push(performance.now() - t);
}

const build = (form, request) => callBuilder(wasm, form, request);

const permission = { tool: "Bash", input: { command: "npm test -- --coverage && git diff --stat", description: "Run the tests" },
  lasting: [{ type: "addRules", behavior: "allow", destination: "localSettings", rules: [{ toolName: "Bash", ruleContent: "npm test *" }] }] };
const dialog = { tool: "opencode.question", input: [
  { question: "Which database?", header: "DB", options: [{ label: "SQLite", description: "one file" }, { label: "Postgres" }] },
  { question: "Which features?", options: [{ label: "Login" }, { label: "Search" }], multiple: true },
] };

function perCard(form, request) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < BATCH; i++) build(form, request);
    rounds.push(((performance.now() - t) / BATCH) * 1000);
  }
  return median(rounds);
}

const result = {
  card_wasm_bytes: bytes.length,
  instantiate_ms_p50: +median(starts).toFixed(2),
  permission_card_us_p50: +perCard("decision", permission).toFixed(1),
  dialog_card_us_p50: +perCard("choices", dialog).toFixed(1),
  memory_bytes_after: wasm.memory.buffer.byteLength,
};
console.log(JSON.stringify(result));
mkdirSync(new URL("results/", import.meta.url), { recursive: true });
writeFileSync(new URL("results/card.json", import.meta.url), JSON.stringify(result) + "\n");
