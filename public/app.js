// The "Needs you" page: pairing, the list of open questions and live tasks,
// kept up to date by the live list's socket (live.js), and acting on a card.
// Every text from the server goes into the page with textContent, never as
// HTML.

import { answerArea, answersOn } from "./answer.js";
import { keepOnly, ruleShown, shown, taskName } from "./card.js";
import { call, checkCode, device, forget, handOver, pair } from "./api.js";
import { forgetKey, kept, newKey, pinOwner, renewCertificate, signRevoke, takeCertificate, takeContentKeys } from "./keys.js";
import { liveList } from "./live.js";
import { VERSION } from "./version.js";
import { ago, deviceName, mayDo } from "./words.js";

const $ = (id) => document.getElementById(id);
answersOn(status, refresh);
let list = { questions: [], tasks: [] };
/** A moment before the server read `list`: it knows of no question opened later. */
let listAsked = 0;
/** When the list shown was last known to be the server's. */
let listFresh = 0;

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

/** A key's fingerprint: base64url of 32 bytes. */
const FINGERPRINT = /^[A-Za-z0-9_-]{43}$/;

/** Pairs with `link` ({code, secret?, owner?}). A link from the owner's
 *  `needs-you pair` carries a secret and the owner's fingerprint: this
 *  browser then makes its signing key, proves it with the secret, and waits
 *  for the owner's key to vouch for it. One from a device paired under the
 *  owner carries the fingerprint alone, which this browser pins. */
async function redeem(link) {
  $("pair-error").hidden = true;
  try {
    // A link cut short (a chat app's doing) would pair a browser that
    // sends what the person writes in the clear: refused whole.
    if ((link.secret !== undefined || link.owner !== undefined) && !FINGERPRINT.test(link.owner ?? "")) {
      throw new Error("this link's owner key is cut short or mangled: open the whole link, as it was shown");
    }
    // Kept before the pairing, as newKey keeps its keys: a browser paired
    // is never left without the owner it was paired under.
    const keyed = link.secret && link.owner ? await newKey(link.secret, link.owner) : null;
    if (!keyed && link.owner) await pinOwner(link.owner);
    await pair(link.code.trim(), deviceName(), keyed).catch(async (e) => {
      await forgetKey();
      throw e;
    });
    status("");
    showSignedIn();
    if (keyed) awaitCertificate();
  } catch (e) {
    $("pair-error").textContent = e.message;
    $("pair-error").hidden = false;
  }
}

/** How long the page asks for its certificate: the pairing code's life. */
const CERTIFICATE_WAIT_MS = 10 * 60 * 1000;

/** Waits for the certificate the pairer sends, and keeps it if the owner's
 *  key signed it for this browser's key; says which. */
async function awaitCertificate() {
  status("Waiting for your computer to vouch for this browser's key…");
  const until = Date.now() + CERTIFICATE_WAIT_MS;
  while (Date.now() < until) {
    let me = null;
    try {
      me = (await call("GET", "/v1/devices")).body.devices[0];
    } catch {
      // Out of reach for a moment, or signed out: asked again, or it ends below.
    }
    if (!device()) return;
    if (me?.certificate) {
      if (!(await takeCertificate(me.certificate))) {
        status("The certificate the server gave is not one your key made for this browser: your machines will refuse its answers. Pair it again, and tell whoever runs the server.");
      } else if (!(await takeContentKeys(me.device_id, me.content_keys)).length) {
        status("Paired, but the content key the server gave does not open with this browser's key: it cannot read what your machines seal. Pair it again, and tell whoever runs the server.");
      } else {
        status("Paired: your machines take the answers this browser signs, and it opens what they seal.");
      }
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  status("No certificate came: your machines will refuse this browser's answers. Pair it again with `needs-you pair`.");
}

$("pair-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  redeem({ code: $("code").value });
});

/** A pairing link someone may have sent: say whose it is and what it gives
 *  before this browser is tied to that account. A code typed by hand is the
 *  person's own doing, and pairs at once. */
async function askFirst(link) {
  $("pair-error").hidden = true;
  let found;
  try {
    found = await checkCode(link.code);
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
    redeem(link);
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

/** Takes this browser's certificate as renewed by the owner's command line,
 *  and says when the one it holds has ended: its answers are refused then. */
async function checkCertificate() {
  let me;
  try {
    me = (await call("GET", "/v1/devices")).body.devices[0];
  } catch {
    return; // out of reach: the list says so
  }
  const ends = await renewCertificate(me?.certificate);
  // A version of the content key made since (a device was revoked).
  if (me) await takeContentKeys(me.device_id, me.content_keys).catch(() => {});
  if (ends && ends < Date.now()) {
    status(`This browser's certificate ended on ${new Date(ends).toLocaleDateString()}: your machines refuse its answers. Run any needs-you command on your computer (it renews certificates), then reload this page; or pair it again.`);
  }
}

function showSignedIn() {
  sayVersions();
  checkCertificate().catch(() => {});
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
    // Back in reach: only the trouble's own line goes; a line that tells
    // the outcome of the person's act (pairing, say) stays.
    if (!e) {
      if ($("status").classList.contains("stale")) status("");
      return;
    }
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
  // Each question as this page shows it: a card that takes a signed answer
  // is built here from its request (card.js).
  keepOnly(list.questions);
  const questions = list.questions.map((q) => shown(q, render));
  const cards = questions.map((q) => card(q, now));
  $("questions").replaceChildren(...byTask(questions, cards));
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
  el.querySelector(".name").textContent = taskName(t.task_id, t.sealed_name, t.name, render);
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
  rules.replaceChildren(...(t.rules || []).map((r) => ruleRow(ruleShown(r, render), now)));
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
    // Signed here: the agent's machine takes back only what this browser's key asked.
    const signed = await signRevoke(r);
    await call("DELETE", `/v1/rules/${encodeURIComponent(r.rule_id)}`, { body: { signed } });
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

$("history-open").addEventListener("click", async () => {
  const { showHistory } = await import("./history.js");
  showHistory().catch((e) => status(`Could not open the history: ${e.message}`));
});

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
  navigator.serviceWorker.register("/sw.js", { type: "module" }).catch(() => {});
}

/** What a pairing link carries after its `#`: its code, and from the
 *  owner's `needs-you pair` also a secret and the owner's fingerprint
 *  (`CODE.SECRET.FINGERPRINT`), from a device paired under the owner the
 *  fingerprint alone (`CODE..FINGERPRINT`). A mangled one (a lone `%`) is taken as it
 *  is, to be refused like any wrong code. */
function linkParts() {
  if (location.pathname !== "/pair") return null;
  let raw = location.hash.slice(1);
  try {
    raw = decodeURIComponent(raw);
  } catch {
    // kept as it is
  }
  if (!raw) return null;
  const [code, secret, owner] = raw.split(".");
  return { code, secret, owner };
}

const link = linkParts();
if (link) {
  // The code came in the link's fragment, which no server saw; drop it from
  // the address bar and the history once read.
  history.replaceState(null, "", "/");
  if (device()) showSignedIn();
  else {
    showSignedOut("");
    askFirst(link);
  }
} else if (device()) {
  showSignedIn();
  // A pairing that the page was closed in the middle of: its certificate may have come since.
  // (A browser that pinned the owner alone made no key, and waits for none.)
  kept().then((me) => me?.privateKey && !me.certificate && awaitCertificate()).catch(() => {});
} else {
  showSignedOut("");
}
