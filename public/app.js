// The "Needs you" page: pairing, the list of open questions and live tasks,
// kept fresh by polling while the page is visible, and dismissing a card.
// Every text from the server goes into the page with textContent, never as
// HTML.

import { call, checkCode, device, forget, pair } from "./api.js";
import { ago, deviceName, mayDo } from "./words.js";

/** How often a visible page asks for changes. An unchanged list costs the
 *  Worker a 304 after two indexed reads (README: "Idle cost"). */
const POLL_MS = 1500;

const $ = (id) => document.getElementById(id);
let etag = null;
let timer = null;
let list = { questions: [], tasks: [] };
/** When the request for `list` was sent: it knows of no question opened later. */
let listAsked = 0;
/** What the person is typing in each answer box, kept across refreshes. */
const drafts = new Map();

function status(text) {
  $("status").textContent = text || "";
  $("status").hidden = !text;
}

// ---- signed out: pairing ---------------------------------------------------

function showSignedOut(message) {
  stopPolling();
  $("signed-in").hidden = true;
  $("actions").hidden = true;
  $("signed-out").hidden = false;
  status(message);
}

async function redeem(code) {
  $("pair-error").hidden = true;
  try {
    await pair(code.trim(), deviceName());
    status("");
    showSignedIn();
  } catch (e) {
    $("pair-error").textContent = e.message;
    $("pair-error").hidden = false;
  }
}

$("pair-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  redeem($("code").value);
});

/** A pairing link someone may have sent: say whose it is and what it gives
 *  before this browser is tied to that account. A code typed by hand is the
 *  person's own doing, and pairs at once. */
async function askFirst(code) {
  $("pair-error").hidden = true;
  let found;
  try {
    found = await checkCode(code);
  } catch (e) {
    $("pair-error").textContent = e.message;
    $("pair-error").hidden = false;
    return;
  }
  $("pair-ask-title").textContent = `Pair this browser with ${found.owner_name}?`;
  $("pair-ask-grants").textContent = `It will ${mayDo(found.rights)}.`;
  $("pair-ask").hidden = false;
  $("pair-ask-yes").onclick = () => {
    $("pair-ask").hidden = true;
    redeem(code);
  };
  $("pair-ask-no").onclick = () => {
    $("pair-ask").hidden = true;
    status("Not paired.");
  };
  $("pair-ask-yes").focus();
}

// ---- signed in: the list ---------------------------------------------------

function showSignedIn() {
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  $("actions").hidden = false;
  import("./push.js").then((push) => push.offer($("notify")));
  refresh();
}

async function refresh() {
  clearTimeout(timer);
  timer = null;
  try {
    const asked = Date.now();
    const r = await call("GET", "/v1/needs-you", { etag });
    if (r.status !== 304) {
      list = r.body;
      listAsked = asked;
      etag = r.etag;
      render();
    }
    status("");
  } catch (e) {
    if (e.status === 401) {
      forget();
      etag = null;
      showSignedOut("This device was signed out. Pair it again to see what needs you.");
      return;
    }
    status(navigator.onLine ? `Could not refresh: ${e.message}` : "Offline: showing the last list.");
  }
  if (document.visibilityState === "visible" && !$("signed-in").hidden) {
    timer = setTimeout(refresh, POLL_MS);
  }
}

function stopPolling() {
  clearTimeout(timer);
  timer = null;
}

// Polling stops while the page is hidden, and catches up when it shows again.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && device()) refresh();
  else stopPolling();
});

function render() {
  const now = Date.now();
  // A refresh must not take the answer box from under the person's fingers.
  const focused = document.activeElement?.closest?.(".card")?.id;
  const caret = document.activeElement?.selectionStart;
  const cards = list.questions.map((q) => card(q, now));
  $("questions").replaceChildren(...cards);
  const box = focused && document.querySelector(`#${CSS.escape(focused)} .answer input`);
  if (box && !box.disabled) {
    box.focus();
    if (caret != null) box.setSelectionRange(caret, caret);
  }
  $("quiet").hidden = cards.length > 0;
  $("needs-count").textContent = cards.length ? `(${cards.length})` : "";
  document.title = cards.length ? `(${cards.length}) Needs you` : "Needs you";
  const rows = list.tasks.map((t) => taskRow(t, now));
  $("tasks").replaceChildren(...rows);
  $("no-tasks").hidden = rows.length > 0;
  highlight();
  import("./push.js").then((push) => push.tidy(list.questions, listAsked));
}

function card(q, now) {
  const el = $("card").content.firstElementChild.cloneNode(true);
  el.id = `question-${q.question_id}`;
  el.dataset.kind = q.kind;
  el.querySelector(".who").textContent = q.who;
  el.querySelector(".task").textContent = q.task_name;
  const age = el.querySelector(".age");
  age.dateTime = new Date(q.opened_at).toISOString();
  age.dataset.at = q.opened_at;
  age.textContent = ago(q.opened_at, now);
  el.querySelector(".text").textContent = q.text;
  const options = el.querySelector(".options");
  for (const o of q.options || []) {
    const li = document.createElement("li");
    li.textContent = o.description ? `${o.label}: ${o.description}` : o.label;
    options.append(li);
  }
  options.hidden = !options.children.length;
  el.querySelector(".terminal").textContent = terminalLine(q.terminal);
  el.querySelector(".terminal").hidden = !q.terminal;
  answerArea(q, el);
  el.querySelector(".dismiss").addEventListener("click", () => dismiss(q, el));
  return el;
}

/** "on box · ~/src/api · tmux main:1.0": the terminal to go to. */
function terminalLine(t) {
  if (!t) return "";
  const parts = [t.host && `on ${t.host}`, t.cwd, t.target && `tmux ${t.target}`];
  return parts.filter(Boolean).join(" · ");
}

const ANSWER_STATES = {
  queued: "Sent; waiting for the agent's machine…",
  delivered: "On the agent's machine; typing it…",
  typed: "Typed into the terminal.",
};

/** A dialog waits on keys in its terminal, and the page never guesses them;
 *  a reply in tmux can be answered from here. */
function answerArea(q, el) {
  const where = el.querySelector(".where");
  const form = el.querySelector(".answer");
  const state = el.querySelector(".answer-state");
  if (q.kind !== "reply") {
    where.textContent = "Answer this in the terminal.";
    return;
  }
  if (!q.answerable) {
    where.textContent = q.terminal
      ? "Answer it in the agent's terminal: it is not running in tmux, so it cannot be answered from here."
      : "Answer it in the agent's terminal: its reporter did not say where it runs.";
    return;
  }
  where.hidden = true;
  form.hidden = false;
  const input = form.querySelector("input");
  input.value = drafts.get(q.question_id) || "";
  input.addEventListener("input", () => drafts.set(q.question_id, input.value));
  const a = q.answer;
  if (a) {
    state.hidden = false;
    state.textContent = a.state === "failed" ? `Not typed: ${a.reason}` : ANSWER_STATES[a.state] || a.state;
    state.classList.toggle("failed", a.state === "failed");
    if (a.state === "queued" || a.state === "delivered") {
      input.disabled = true;
      form.querySelector("button").disabled = true;
      input.value = a.text;
    }
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    answer(q, input.value, form);
  });
}

async function answer(q, text, form) {
  form.querySelector("button").disabled = true;
  try {
    await call("POST", `/v1/questions/${encodeURIComponent(q.question_id)}/answers`, { body: { text } });
    drafts.delete(q.question_id);
  } catch (e) {
    status(`Could not send the answer: ${e.message}`);
  }
  etag = null;
  refresh();
}

function taskRow(t, now) {
  const el = $("task").content.firstElementChild.cloneNode(true);
  el.querySelector(".name").textContent = t.name;
  const state = el.querySelector(".state");
  const waiting = t.state === "waiting";
  state.textContent = waiting ? "Waiting for your answer" : "Running";
  state.classList.toggle("waiting", waiting);
  const last = el.querySelector(".last");
  const parts = [];
  if (t.agent) parts.push(t.agent);
  parts.push(t.last_report_at ? `last report ${ago(t.last_report_at, now)}` : "no report yet");
  last.textContent = parts.join(" · ");
  return el;
}

async function dismiss(q, el) {
  el.querySelector(".dismiss").disabled = true;
  try {
    await call("POST", `/v1/questions/${encodeURIComponent(q.question_id)}/dismiss`, { body: {} });
  } catch (e) {
    if (e.status !== 409) status(`Could not dismiss: ${e.message}`);
  }
  refresh();
}

/** A tapped notification opens the page at `#question-<id>`. */
function highlight() {
  const id = location.hash.slice(1);
  if (!id.startsWith("question-")) return;
  const el = document.getElementById(id);
  if (el && !el.classList.contains("highlight")) {
    el.classList.add("highlight");
    el.scrollIntoView({ block: "center" });
  }
}
window.addEventListener("hashchange", highlight);

// Ages move on between refreshes.
setInterval(() => {
  for (const t of document.querySelectorAll("time.age")) t.textContent = ago(Number(t.dataset.at));
}, 15000);

// ---- the bar ---------------------------------------------------------------

$("pair-other").addEventListener("click", async () => {
  const { showPairing } = await import("./pair.js");
  showPairing().catch((e) => status(`Could not make a pairing code: ${e.message}`));
});

$("sign-out").addEventListener("click", async () => {
  const me = device();
  try {
    const push = await import("./push.js");
    await push.unsubscribeHere();
    if (me) await call("DELETE", `/v1/devices/${encodeURIComponent(me.device_id)}`);
  } catch {
    // Signed out here whatever the server says.
  }
  forget();
  etag = null;
  showSignedOut("Signed out.");
});

// ---- start -----------------------------------------------------------------

if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js").catch(() => {});
}

/** The code a pairing link carries after its `#`. A mangled one (a lone `%`)
 *  is taken as it is, to be refused like any wrong code. */
function linkCode() {
  if (location.pathname !== "/pair") return "";
  const raw = location.hash.slice(1);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

const code = linkCode();
if (code) {
  // The code came in the link's fragment, which no server saw; drop it from
  // the address bar and the history once read.
  history.replaceState(null, "", "/");
  if (device()) showSignedIn();
  else {
    showSignedOut("");
    askFirst(code);
  }
} else if (device()) {
  showSignedIn();
} else {
  showSignedOut("");
}
