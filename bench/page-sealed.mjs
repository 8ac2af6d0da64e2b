// See bench/page.sh. Report to card on the page for what a machine that
// seals sends, beside a permission in the clear, interleaved in one run: the
// Worker in Miniflare (tests/answers/world.js), a page paired by the owner's
// real `needs-you pair`, so that it holds the content key, in headless
// Chromium. Each round reports, in a shuffled order:
//
// - a permission in the clear, whose card the page builds from the request
//   it fetches (card.wasm);
// - a permission sealed as its machine seals it (its words without the card,
//   Node's WebCrypto standing in for the reporter's sender), which the page
//   fetches, opens (WebCrypto) and builds the card of (card.wasm);
// - a reply sealed likewise, which the page fetches and opens.
//
// The clock stops when the card shows its own words (a marker in them) and,
// for a permission, its Allow and Deny (shown once the card is built from
// the request), not when its place appears ("opening its sealed words…",
// "building this card from its request…"). Arguments: [--n N].
import { launch, newPage } from "../tests/page/browser.js";
import { startWorld } from "../tests/answers/world.js";
import { requestDigest, takesRequest } from "../tests/support/request.js";
import { sealText } from "../tests/support/sealing.js";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg("--n", 20);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const spread = (xs) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: Math.max(...xs) });

const world = await startWorld("bench-page-sealed", { taskName: "bench" });
const browser = await launch();
try {
  const o = await world.owner();
  const { page } = await world.pairedByOwner(o, (opts) => newPage(browser, opts));
  // In the page: when each marker first shows in a card's text, with its
  // Allow and Deny for a permission (`decide`).
  await page.evaluate(() => {
    window.__want = new Map();
    window.__shown = {};
    const list = document.getElementById("questions");
    new MutationObserver(() => {
      const now = Date.now();
      for (const card of list.querySelectorAll(".card")) {
        for (const [marker, decide] of window.__want) {
          const built = !decide || card.querySelector(".decide")?.hidden === false;
          if (built && card.textContent.includes(marker)) {
            window.__shown[marker] = now;
            window.__want.delete(marker);
          }
        }
      }
    }).observe(list, { childList: true, subtree: true, characterData: true, attributes: true });
  });

  const task = o.task.credential;
  const fingerprint = o.key.fingerprint;
  const seal = (scope, field, value) => sealText(o.contentKey, fingerprint, scope, field, JSON.stringify(value));
  const terminal = { kind: "tmux", host: "bench", target: "b:0.0" };
  let seq = 1;
  const open = {
    clear_permission: async (session, marker) => ({
      kind: "permission", terminal: { ...terminal, cwd: "/w" },
      ...takesRequest("decision", "Bash", { command: `npm test -- ${marker}` }),
    }),
    sealed_permission: async (session, marker, s) => {
      const input = { command: `npm test -- ${marker}` };
      return {
        kind: "permission", terminal, takes: "decision", digest: requestDigest("Bash", input),
        sealed: { words: await seal(`${session}\n${s}`, "question", { text: "", request: { tool: "Bash", input }, cwd: "/w" }),
          same: requestDigest("same", marker) },
      };
    },
    sealed_reply: async (session, marker, s) => ({
      kind: "reply", terminal,
      sealed: { words: await seal(`${session}\n${s}`, "question", { text: `Shall I go on with ${marker}?`, cwd: "/w" }),
        same: requestDigest("same", marker) },
    }),
  };
  const report = async (body) => {
    const r = await world.api("POST", "/v1/reports", task, { cli: "claude-code", ...body });
    if (r.status !== 200) throw new Error(`a report was refused: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const times = Object.fromEntries(Object.keys(open).map((k) => [k, []]));
  for (let i = 0; i < N; i++) {
    const kinds = Object.keys(open).sort(() => Math.random() - 0.5);
    for (const kind of kinds) {
      const session = `b${i}-${kind}`;
      const marker = `bench-${i}-${kind}`;
      const s = seq++;
      const body = { action: "open", session, seq: s, ...(await open[kind](session, marker, s)) };
      await page.evaluate(([m, decide]) => window.__want.set(m, decide), [marker, body.kind === "permission"]);
      await sleep(100 + Math.random() * 400);
      const t0 = Date.now();
      await report(body);
      let shown;
      while (!(shown = await page.evaluate((m) => window.__shown[m], marker))) await sleep(10);
      times[kind].push(shown - t0);
      await report({ action: "close", session, seq: seq++, reason: "answered" });
    }
  }
  const out = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, spread(xs)]));
  console.log(JSON.stringify({ report_to_card_ms: out }, null, 2));
} finally {
  await browser.close();
  await world.stop();
}
