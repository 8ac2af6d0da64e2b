// "Show terminal": a read-only view of the tmux pane a question came from,
// asked of the agent's machine (through the Worker) twice a second while the
// view is open and the page visible, and stopped when it closes. A screen is
// lines of spans (`needs_you_core::screen`), sealed by the agent's machine
// under the owner's content key and opened here (the Worker cannot read it):
// each span's text goes in with textContent, its colours and attributes
// become class names made from numbers here. Nothing the pane printed is
// ever interpreted.

import { call } from "./api.js";
import { checkedScreen } from "./card.js";
import { openSealed, openScope } from "./keys.js";

/** How often an open view asks for the pane: the relay reads it at most
 *  every 200 ms, and sends only a digest while it is unchanged. */
const EVERY_MS = 500;
/** How long to wait after a failure that may pass (the machine offline). */
const RETRY_MS = 2000;
/** Refusals that will not pass by asking again: the view stops. */
const FINAL = new Set(["closed", "no_screen", "not_in_tmux", "not_permitted", "not_found", "relay_outdated", "screen_refused", "unauthorized"]);

const $ = (id) => document.getElementById(id);
/** The open view: its question, the digest of what it shows, its timer. */
let view = null;

/** xterm's 256 colours as CSS: 16 named ones, the 6×6×6 cube, the greys. */
function palette() {
  const base = ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"];
  const levels = [0, 95, 135, 175, 215, 255];
  const hex = (r, g, b) => "#" + [r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("");
  const colours = [...base];
  for (let i = 0; i < 216; i++) colours.push(hex(levels[Math.floor(i / 36)], levels[Math.floor(i / 6) % 6], levels[i % 6]));
  for (let i = 0; i < 24; i++) colours.push(hex(8 + 10 * i, 8 + 10 * i, 8 + 10 * i));
  return colours;
}

/** The colour classes, added once to the page's own style sheet (the page's
 *  CSP allows no inline style). */
let styled = false;
function addColours() {
  if (styled) return;
  styled = true;
  const sheet = [...document.styleSheets].find((s) => s.href && s.href.endsWith("/style.css"));
  if (!sheet) return;
  palette().forEach((c, n) => {
    sheet.insertRule(`.screen .fg-${n} { color: ${c}; }`, sheet.cssRules.length);
    sheet.insertRule(`.screen .bg-${n} { background: ${c}; }`, sheet.cssRules.length);
  });
}

const ATTRS = [[1, "b"], [2, "d"], [4, "i"], [8, "u"], [32, "s"]];
const REVERSE = 16;

/** A palette number as the server sent it, or null: only 0..255 makes a class. */
const colour = (n) => (Number.isInteger(n) && n >= 0 && n <= 255 ? n : null);

function spanOf(s) {
  const el = document.createElement("span");
  el.textContent = typeof s.t === "string" ? s.t : "";
  let [fg, bg] = [colour(s.fg), colour(s.bg)];
  const a = Number.isInteger(s.a) ? s.a : 0;
  const classes = [];
  if (a & REVERSE) {
    classes.push(bg == null ? "fg-rev" : `fg-${bg}`, fg == null ? "bg-rev" : `bg-${fg}`);
    fg = bg = null;
  }
  if (fg != null) classes.push(`fg-${fg}`);
  if (bg != null) classes.push(`bg-${bg}`);
  for (const [bit, name] of ATTRS) if (a & bit) classes.push(name);
  if (classes.length) el.className = classes.join(" ");
  return el;
}

/** Draws a screen into the view's <pre>, a block per line. */
function draw(screen) {
  const lines = (screen.lines || []).map((spans, i) => {
    const line = document.createElement("div");
    line.className = i === screen.cursor ? "line cursor-line" : "line";
    line.append(...(Array.isArray(spans) ? spans : []).map(spanOf));
    return line;
  });
  $("screen-lines").replaceChildren(...lines);
}

function say(text, failed = false) {
  $("screen-state").textContent = text;
  $("screen-state").classList.toggle("failed", failed);
}

/** One request of view `v`, then the next one scheduled: one loop per view,
 *  whatever the page's visibility does meanwhile. */
async function ask(v = view) {
  if (!v || v !== view || v.inflight) return;
  clearTimeout(v.timer);
  v.timer = null;
  v.inflight = true;
  let next = EVERY_MS;
  try {
    const seen = v.digest ? `?seen=${encodeURIComponent(v.digest)}` : "";
    const r = await call("GET", `/v1/questions/${encodeURIComponent(v.question.question_id)}/screen${seen}`);
    v.inflight = false;
    if (view !== v) return;
    if (r.body.sealed) {
      const opened = await openSealed(openScope(v.question), "screen", r.body.sealed);
      let screen = null;
      try {
        screen = opened === null ? null : await checkedScreen(JSON.parse(opened));
      } catch {
        // Opened, but no screen: drawn as nothing, said below.
      }
      if (view !== v) return;
      if (!screen) {
        // Not for this browser's key, of another open of the question, or
        // changed on its way: nothing drawn, and asking again would not mend it.
        say(opened === null
          ? "This screen does not open here: the question was asked again since this view opened (close it and open it again), or this browser holds no key for it (pair it with `needs-you pair` on your computer)."
          : "The agent's machine sent something that is not a screen.", true);
        $("screen-view").classList.add("ended");
        v.ended = true;
        return;
      }
      draw(screen);
    }
    v.digest = r.body.digest;
    say(`Live · ${new Date().toLocaleTimeString()}`);
  } catch (e) {
    v.inflight = false;
    if (view !== v) return;
    const final = FINAL.has(e.code) || e.status === 401;
    say(e.code === "closed" ? "The question closed: its terminal is no longer shown." : e.message, true);
    $("screen-view").classList.toggle("ended", final);
    v.ended = final;
    if (final) return;
    next = RETRY_MS;
  }
  if (view === v && !v.timer && document.visibilityState === "visible") v.timer = setTimeout(() => ask(v), next);
}

/** Opens the view of question `q`'s pane. */
export function show(q) {
  close();
  addColours();
  const t = q.terminal || {};
  $("screen-title").textContent = [t.target && `tmux ${t.target}`, t.host && `on ${t.host}`].filter(Boolean).join(" ") || "Terminal";
  $("screen-lines").replaceChildren();
  $("screen-view").classList.remove("ended");
  say("Asking the agent's machine…");
  view = { question: q, digest: null, timer: null, inflight: false, ended: false };
  const dialog = $("screen-view");
  if (!dialog.open) dialog.showModal();
  ask();
}

/** Stops asking; the dialog's own close calls this too. */
export function close() {
  if (view?.timer) clearTimeout(view.timer);
  view = null;
  if ($("screen-view").open) $("screen-view").close();
}

$("screen-view").addEventListener("close", () => {
  // A close that comes after the view was opened again is the old one's.
  if ($("screen-view").open) return;
  if (view?.timer) clearTimeout(view.timer);
  view = null;
});

// Hidden, the view stops asking; shown again, it catches up at once.
document.addEventListener("visibilitychange", () => {
  if (!view) return;
  if (document.visibilityState === "visible") {
    if (!view.timer && !view.ended) ask(view);
  } else if (view.timer) {
    clearTimeout(view.timer);
    view.timer = null;
  }
});
