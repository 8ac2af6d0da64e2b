// The "Needs you" page: pairing, the list of open questions and live tasks,
// kept up to date by the live list's socket (live.js), and acting on a card.
// Every text from the server goes into the page with textContent, never as
// HTML.

import { call, checkCode, device, forget, handOver, pair } from "./api.js";
import { liveList } from "./live.js";
import { VERSION } from "./version.js";
import { ago, deviceName, mayDo } from "./words.js";

const $ = (id) => document.getElementById(id);
let list = { questions: [], tasks: [] };
/** A moment before the server read `list`: it knows of no question opened later. */
let listAsked = 0;
/** When the list shown was last known to be the server's. */
let listFresh = 0;
/** What the person is typing in each answer box, kept across refreshes. */
const drafts = new Map();

function status(text, stale = false) {
  $("status").textContent = text || "";
  $("status").hidden = !text;
  $("status").classList.toggle("stale", stale);
}

// ---- signed out: pairing ---------------------------------------------------

function showSignedOut(message) {
  live.stop();
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

/**
 * This page's version and the Worker's: a tab left open across a deploy runs
 * the old page until it is reloaded, and says so.
 */
async function sayVersions() {
  let worker;
  try {
    worker = (await call("GET", "/v1/health")).body.version;
  } catch {
    return; // out of reach: the list says so
  }
  const same = worker === VERSION;
  $("version").textContent = same
    ? `needs-you ${VERSION}`
    : `This page is needs-you ${VERSION}; the Worker is ${worker ?? "older"}: reload the page to use it.`;
  $("reload").hidden = same;
}
$("reload").onclick = () => location.reload();

function showSignedIn() {
  sayVersions();
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  $("actions").hidden = false;
  import("./push.js").then((push) => push.offer($("notify")));
  handOver().catch(() => {});
  live.start();
  sayLooking();
}

const live = liveList({
  shown(next, asked) {
    list = next;
    listAsked = asked;
    listFresh = Date.now();
    render();
  },
  signedOut() {
    forget();
    showSignedOut("This device was signed out. Pair it again to see what needs you.");
  },
  trouble(e) {
    $("signed-in").classList.toggle("stale-list", !!e);
    if (!e) return status("");
    // The list on screen may be out of date: say so loudly, with its age.
    const at = listFresh ? new Date(listFresh).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "";
    const since = at ? ` This list is from ${at}.` : "";
    status(navigator.onLine ? `Cannot reach the server (${e.message}).${since}` : `Offline.${since}`, true);
  },
});

/** After the person acted: the change comes on the socket (or one read);
 *  meanwhile the list is drawn again with what the person typed. */
function refresh() {
  live.acted();
  render();
}

// ---- presence: while this page is open, visible and focused, the owner's
// notifications make no sound (the card is here already). It says so on the
// live list's socket at once and every 50 s while it is (the server forgets
// it after 75 s, or when the socket closes); without a socket, with a PUT
// every 20 s, which the server forgets after 30 s.

const LOOKING_EVERY_MS = 50_000;
const LOOKING_PUT_EVERY_MS = 20_000;
let lookingTimer = null;
let saidLooking = false;

function sayLooking() {
  clearTimeout(lookingTimer);
  lookingTimer = null;
  const looking = !!device() && !$("signed-in").hidden && document.visibilityState === "visible" && document.hasFocus();
  if (looking || saidLooking) {
    if (!live.say({ type: "looking", looking })) {
      call("PUT", "/v1/devices/me/presence", { body: { looking }, keepalive: true }).catch(() => {});
    }
    saidLooking = looking;
  }
  if (looking) lookingTimer = setTimeout(sayLooking, live.live ? LOOKING_EVERY_MS : LOOKING_PUT_EVERY_MS);
}
for (const event of ["focus", "blur", "pagehide"]) window.addEventListener(event, sayLooking);
document.addEventListener("visibilitychange", sayLooking);
// A new socket knows nothing of this page yet.
live.onOpen = () => {
  saidLooking = false;
  sayLooking();
};

// A page shown again, or back online, tries for its socket at once.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && device()) live.wake();
});
window.addEventListener("online", () => live.wake());

function render() {
  const now = Date.now();
  // A refresh must not take an answer box from under the person's fingers.
  const active = document.activeElement;
  const focused = active?.closest?.(".card");
  const at = focused ? [...focused.querySelectorAll("input, button")].indexOf(active) : -1;
  const caret = active?.type === "text" ? active.selectionStart : null;
  const cards = list.questions.map((q) => card(q, now));
  $("questions").replaceChildren(...byTask(list.questions, cards));
  const again = focused && document.getElementById(focused.id)?.querySelectorAll("input, button")[at];
  if (again && !again.disabled) {
    again.focus();
    if (caret != null && again.type === "text") again.setSelectionRange(caret, caret);
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

/** The cards grouped by task: the task's name and machine once, its cards
 *  beneath, newest first; the task with the newest question first. */
function byTask(questions, cards) {
  const groups = new Map();
  questions.forEach((q, i) => {
    let g = groups.get(q.task_id);
    if (!g) {
      g = $("task-group").content.firstElementChild.cloneNode(true);
      g.querySelector(".group-name").textContent = q.task_name;
      const host = q.terminal?.host;
      g.querySelector(".group-where").textContent = host ? ` · on ${host}` : "";
      groups.set(q.task_id, g);
    }
    g.querySelector(".cards").append(cards[i]);
  });
  return [...groups.values()];
}

function card(q, now) {
  const el = $("card").content.firstElementChild.cloneNode(true);
  el.id = `question-${q.question_id}`;
  el.dataset.kind = q.kind;
  el.querySelector(".who").textContent = q.who;
  const age = el.querySelector(".age");
  age.dateTime = new Date(q.opened_at).toISOString();
  age.dataset.at = q.opened_at;
  age.textContent = ago(q.opened_at, now);
  // A ring made quiet by someone's presence is never an invisible one.
  const quieted = el.querySelector(".quieted");
  quieted.hidden = !q.quieted_by;
  quieted.textContent = q.quieted_by ? `Rang without a sound: ${q.quieted_by} had this page open.` : "";
  foldedText(q, el);
  const options = el.querySelector(".options");
  for (const o of q.options || []) {
    const li = document.createElement("li");
    li.textContent = o.description ? `${o.label}: ${o.description}` : o.label;
    options.append(li);
  }
  // A dialog answered here shows its options once: as the ones to tap.
  options.hidden = !options.children.length || q.answer_from_afar === "choices";
  el.querySelector(".terminal").textContent = terminalLine(q.terminal);
  el.querySelector(".terminal").hidden = !q.terminal;
  // The pane it came from, read-only, where its machine can show it.
  const show = el.querySelector(".show-screen");
  show.hidden = !q.screen;
  show.addEventListener("click", () => import("./screen.js").then((s) => s.show(q)));
  answerArea(q, el);
  el.querySelector(".dismiss").addEventListener("click", () => dismiss(q, el));
  el.querySelector(".mute").addEventListener("click", (ev) => mute(q.task_id, MUTE_S, ev.target));
  return el;
}

/** Cards whose long text the person unfolded, by question id: kept across refreshes. */
const unfolded = new Set();
const FOLD_LINES = 12;
const FOLD_CHARS = 900;

/**
 * The card's text, whole: what an allow covers is never cut. A long one is
 * folded behind "Show all" (it is all in the page, only out of sight).
 */
function foldedText(q, el) {
  const text = el.querySelector(".text");
  const more = el.querySelector(".show-all");
  text.textContent = q.text;
  // A permission's request, as the agent's tool has it: commands and files.
  text.classList.toggle("request", q.answer_from_afar === "decision");
  const lines = q.text.split("\n").length;
  const long = lines > FOLD_LINES || q.text.length > FOLD_CHARS;
  const fold = () => {
    const open = unfolded.has(q.question_id);
    text.classList.toggle("folded", long && !open);
    more.textContent = open ? "Show less" : `Show all (${lines} ${lines === 1 ? "line" : "lines"}, ${q.text.length} characters)`;
    more.setAttribute("aria-expanded", String(open));
  };
  more.hidden = !long;
  fold();
  more.addEventListener("click", () => {
    if (!unfolded.delete(q.question_id)) unfolded.add(q.question_id);
    fold();
  });
}

/** "on box · ~/src/api · tmux main:1.0": the terminal to go to. */
function terminalLine(t) {
  if (!t) return "";
  const parts = [t.host && `on ${t.host}`, t.cwd, t.target && `tmux ${t.target}`];
  return parts.filter(Boolean).join(" · ");
}

/** Where an answer is, for a person, by its form. */
const ANSWER_STATES = {
  text: {
    queued: "Sent; waiting for the agent's machine…",
    delivered: "On the agent's machine; typing it…",
    typed: "Typed into the terminal.",
  },
  handed: {
    queued: "Sent; waiting for the agent's machine…",
    delivered: "On the agent's machine; handing it to the agent…",
    taken: "Taken by the agent.",
  },
};

/** "Allowed by Chrome on Android", "Chosen by the owner: SQLite". */
function answeredBy(a) {
  const by = a.by ? ` by ${a.by}` : "";
  if (a.form === "decision") {
    const what = { allow: "Allowed once", deny: "Denied" }[a.text] ?? "Allowed, with its rule kept";
    return `${what}${by}`;
  }
  if (a.form === "choices") return `Chosen${by}: ${a.text}`;
  return `Sent${by}`;
}

/** How long an answer may wait for the agent's machine before the card says
 *  that machine has not been in touch: a connected relay takes it in
 *  milliseconds. */
const UNSEEN_MS = 10_000;

function answerState(a, now = Date.now()) {
  const words = ANSWER_STATES[a.form === "text" || !a.form ? "text" : "handed"];
  if (a.state === "failed") return `Not ${a.form === "text" || !a.form ? "typed" : "taken"}: ${a.reason}`;
  let where = words[a.state] || a.state;
  if (a.state === "queued" && now - a.updated_at > UNSEEN_MS) {
    where = `Sent ${ago(a.updated_at, now)}; the agent's machine has not picked it up: it may be asleep or offline, or its relay stopped. Take it back, or send another in its place.`;
  }
  return a.form && a.form !== "text" ? `${answeredBy(a)}. ${where}` : where;
}

/** "Codex shows …" as a sentence for the card. */
function sentence(s) {
  const t = (s || "answer it in the agent's terminal").trim();
  return t[0].toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".");
}

/** A question takes what its agent's machine can take from afar: a typed
 *  line for a reply in tmux, allow-once or deny for a permission, the
 *  options of a dialog. Anything else says why it stays the terminal's. */
function answerArea(q, el) {
  const where = el.querySelector(".where");
  const state = el.querySelector(".answer-state");
  const a = q.answer;
  if (a) {
    state.hidden = false;
    state.textContent = answerState(a);
    state.classList.toggle("failed", a.state === "failed");
  }
  // Until the agent's machine has it, an answer can be taken back, or
  // replaced by sending another; once it has it, it is on its way.
  const busy = a?.state === "delivered";
  const back = el.querySelector(".take-back");
  back.hidden = a?.state !== "queued";
  back.addEventListener("click", () => takeBack(q, a, back));
  switch (q.answer_from_afar) {
    case "text":
      where.hidden = true;
      return textAnswer(q, el, busy);
    case "decision":
      where.hidden = true;
      return decision(q, el, busy);
    case "choices":
      where.hidden = true;
      return choices(q, el, busy);
    default:
      where.textContent = sentence(q.why_not);
  }
}

function textAnswer(q, el, busy) {
  const form = el.querySelector(".answer");
  form.hidden = false;
  const input = form.querySelector("input");
  input.value = drafts.get(q.question_id) || "";
  input.addEventListener("input", () => drafts.set(q.question_id, input.value));
  if (busy || (q.answer?.state === "queued" && !drafts.has(q.question_id))) input.value = q.answer.text;
  if (busy) {
    input.disabled = true;
    form.querySelector("button").disabled = true;
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    send(q, { text: input.value }, form.querySelector("button")).then((sent) => sent && drafts.delete(q.question_id));
  });
}

/** Questions whose allow waits for its confirmation: question id -> the
 *  id of the decision confirmed (`allow`, or a lasting choice's). */
const confirming = new Map();

/** A permission: Deny at once; Allow once, or one of the lasting choices
 *  its agent suggested ("don't ask again"), only after a second tap on a
 *  confirmation that repeats what is allowed and where, and for a lasting
 *  choice the rule, where it is written and how long it lasts. */
function decision(q, el, busy) {
  const box = el.querySelector(".decide");
  const ask = el.querySelector(".confirm");
  box.hidden = false;
  const [deny, allow] = [box.querySelector(".deny"), box.querySelector(".allow")];
  deny.disabled = allow.disabled = busy;
  const lasting = (q.decisions || []).filter((d) => d.lasting);
  const keep = el.querySelector(".lasting");
  keep.hidden = lasting.length === 0;
  const place = q.terminal?.host ? ` on ${q.terminal.host}` : "";
  const confirm = (d) => {
    box.hidden = true;
    ask.hidden = false;
    ask.querySelector(".confirm-text").textContent = d.lasting
      ? `Allow this${place}, and from now on ${d.rule} without asking? Kept in ${d.place}, ${d.lasts}. ${q.text}`
      : `Allow this once${place}? ${q.text}`;
    ask.querySelector(".confirm-yes").textContent = d.lasting ? "Yes, allow and keep the rule" : "Yes, allow once";
    ask.dataset.decision = d.id;
    ask.querySelector(".confirm-yes").focus();
  };
  const choose = (d) => {
    confirming.set(q.question_id, d.id);
    confirm(d);
  };
  allow.addEventListener("click", () => choose({ id: "allow", lasting: false }));
  for (const d of lasting) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "keep quiet";
    b.textContent = `${d.label}…`;
    b.disabled = busy;
    b.addEventListener("click", () => choose(d));
    keep.append(b);
  }
  ask.querySelector(".confirm-no").addEventListener("click", () => {
    confirming.delete(q.question_id);
    ask.hidden = true;
    box.hidden = false;
  });
  ask.querySelector(".confirm-yes").addEventListener("click", (ev) => {
    confirming.delete(q.question_id);
    send(q, { decision: ask.dataset.decision, digest: q.digest }, ev.target);
  });
  deny.addEventListener("click", () => send(q, { decision: "deny", digest: q.digest }, deny));
  const pending = confirming.get(q.question_id);
  const chosen = pending === "allow" ? { id: "allow", lasting: false } : lasting.find((d) => d.id === pending);
  if (chosen && !busy) confirm(chosen);
}

/** What the person has picked on each dialog, kept across refreshes:
 *  question id -> [{picked: Set of labels, typed: string}] per question. */
const picks = new Map();

/** A dialog: each of its questions with its options to tap (several where
 *  it takes several), a typed answer where it takes one, and Send. */
function choices(q, el, busy) {
  const form = el.querySelector(".choose");
  form.hidden = false;
  const mine = picks.get(q.question_id) || q.questions.map(() => ({ picked: new Set(), typed: "" }));
  picks.set(q.question_id, mine);
  const send_ = form.querySelector("button[type=submit]");
  const ready = () => mine.every((m, i) => m.picked.size > 0 || (q.questions[i].other && m.typed.trim()));
  const sets = q.questions.map((dq, i) => {
    const set = document.createElement("fieldset");
    set.className = "question";
    const legend = document.createElement("legend");
    legend.textContent = dq.header ? `${dq.header}: ${dq.question}` : dq.question;
    set.append(legend);
    const type = dq.multi_select ? "checkbox" : "radio";
    const name = `${q.question_id}-${i}`;
    const inputs = [];
    for (const o of dq.options) {
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.type = type;
      input.name = name;
      input.value = o.label;
      input.checked = mine[i].picked.has(o.label);
      input.disabled = busy;
      input.addEventListener("change", () => {
        if (!dq.multi_select) {
          mine[i].picked.clear();
          mine[i].typed = "";
          for (const t of set.querySelectorAll("input.typed")) t.value = "";
        }
        if (input.checked) mine[i].picked.add(o.label);
        else mine[i].picked.delete(o.label);
        send_.disabled = !ready();
      });
      inputs.push(input);
      label.append(input, ` ${o.label}`);
      if (o.description) {
        const d = document.createElement("span");
        d.className = "description";
        d.textContent = o.description;
        label.append(d);
      }
      set.append(label);
    }
    if (dq.other) {
      const typed = document.createElement("input");
      typed.className = "typed";
      typed.placeholder = "Or type another answer";
      typed.maxLength = 500;
      typed.value = mine[i].typed;
      typed.disabled = busy;
      typed.addEventListener("input", () => {
        mine[i].typed = typed.value;
        // One answer for a single choice: typing takes the place of a tap.
        if (!dq.multi_select && typed.value) {
          mine[i].picked.clear();
          for (const x of inputs) x.checked = false;
        }
        send_.disabled = !ready();
      });
      set.append(typed);
    }
    return set;
  });
  form.prepend(...sets);
  send_.disabled = busy || !ready();
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const chosen = mine.map((m) => [...m.picked, ...(m.typed.trim() ? [m.typed.trim()] : [])]);
    send(q, { choices: chosen, digest: q.digest }, send_).then((sent) => sent && picks.delete(q.question_id));
  });
}

/** Takes back an answer the agent's machine never had; a text goes back
 *  into its box. */
async function takeBack(q, a, button) {
  button.disabled = true;
  try {
    await call("DELETE", `/v1/answers/${encodeURIComponent(a.answer_id)}`);
    if (a.form === "text") drafts.set(q.question_id, a.text);
  } catch (e) {
    status(`Could not take it back: ${e.message}`);
  }
  refresh();
}

/** Posts an answer; true once the Worker queued it. */
async function send(q, body, button) {
  button.disabled = true;
  let sent = false;
  try {
    await call("POST", `/v1/questions/${encodeURIComponent(q.question_id)}/answers`, { body });
    sent = true;
  } catch (e) {
    status(`Could not send the answer: ${e.message}`);
  }
  refresh();
  return sent;
}

/** How long a card's "Mute for an hour" mutes its task. */
const MUTE_S = 3600;

/** Mutes a task for `seconds` (0: unmutes): its questions are listed, and ring nobody. */
async function mute(taskId, seconds, button) {
  button.disabled = true;
  try {
    await call("PUT", `/v1/tasks/${encodeURIComponent(taskId)}/mute`, { body: { for_s: seconds } });
  } catch (e) {
    status(`Could not ${seconds ? "mute" : "unmute"} the task: ${e.message}`);
  }
  refresh();
}

function taskRow(t, now) {
  const el = $("task").content.firstElementChild.cloneNode(true);
  el.querySelector(".name").textContent = t.name;
  const state = el.querySelector(".state");
  const waiting = t.state === "waiting";
  state.textContent = waiting ? "Waiting for your answer" : "Running";
  state.classList.toggle("waiting", waiting);
  const muted = t.muted_until && t.muted_until > now;
  const mutedLine = el.querySelector(".muted");
  mutedLine.hidden = !muted;
  if (muted) {
    const until = new Date(t.muted_until).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    mutedLine.querySelector(".muted-until").textContent = `Muted until ${until}: its questions ring nobody.`;
    mutedLine.querySelector(".unmute").addEventListener("click", (ev) => mute(t.task_id, 0, ev.target));
  }
  const last = el.querySelector(".last");
  const parts = [];
  if (t.agent) parts.push(t.agent);
  parts.push(t.last_report_at ? `last report ${ago(t.last_report_at, now)}` : "no report yet");
  last.textContent = parts.join(" · ");
  const rules = el.querySelector(".rules");
  rules.replaceChildren(...(t.rules || []).map((r) => ruleRow(r, now)));
  rules.hidden = !rules.children.length;
  return el;
}

/** A rule granted from afar on a task: what it allows, where it is kept and
 *  for how long, who granted it, and Take back where it is in a file. */
function ruleRow(r, now) {
  const li = document.createElement("li");
  li.className = `rule ${r.state}`;
  const what = document.createElement("p");
  what.textContent = `Allowed without asking: ${r.rule}. Kept in ${r.place}, ${r.lasts}. Granted by ${r.granted_by}${r.host ? ` on ${r.host}` : ""} ${ago(r.granted_at, now)}.`;
  li.append(what);
  const state = { revoking: "Being taken back: its machine removes it when it is connected.",
    revoked: "Taken back, its machine says.", gone: "Not found as written, its machine says: left alone." }[r.state];
  if (state || r.note) {
    const p = document.createElement("p");
    p.className = "rule-state";
    p.textContent = [state, r.note].filter(Boolean).join(" ");
    li.append(p);
  }
  if (r.state === "granted" && r.scope !== "session") {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "revoke quiet";
    b.textContent = "Take back";
    b.addEventListener("click", () => revokeRule(r, b));
    li.append(b);
  }
  return li;
}

async function revokeRule(r, button) {
  button.disabled = true;
  try {
    await call("DELETE", `/v1/rules/${encodeURIComponent(r.rule_id)}`);
  } catch (e) {
    status(`Could not take it back: ${e.message}`);
  }
  refresh();
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

/** A tapped notification opens the page at `#question-<id>`; its Allow
 *  action at `#allow-<id>`, which shows that card's confirmation: allowing
 *  takes a look at the card and a second tap, never one tap on a lock
 *  screen. */
function highlight() {
  const hash = location.hash.slice(1);
  const allow = hash.startsWith("allow-");
  const id = allow ? `question-${hash.slice("allow-".length)}` : hash;
  if (!id.startsWith("question-")) return;
  const el = document.getElementById(id);
  if (!el) return;
  if (allow) {
    history.replaceState(null, "", `#${id}`);
    el.querySelector(".decide:not([hidden]) .allow")?.click();
  }
  if (!el.classList.contains("highlight")) {
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
