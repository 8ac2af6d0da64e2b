// A card's answer: what its agent's machine takes from afar (a typed line,
// allow or deny, a dialog's choices), each behind the confirmation it needs,
// and where the answer is once sent. Every text from the server goes into the
// page with textContent, never as HTML.

import { call } from "./api.js";
import { answerTold, typedLine } from "./card.js";
import { sealsOnly, sealWords, signAnswer } from "./keys.js";
import { ago } from "./words.js";

/** What the page does around an answer: say why one failed, and fetch the
 *  list again. The page sets them once (`answersOn`). */
const page = { status: () => {}, refresh: () => {} };

/** Gives the answers the page's status line and refresh. */
export function answersOn(status, refresh) {
  page.status = status;
  page.refresh = refresh;
}

/** What the person is typing in each answer box, kept across refreshes. */
const drafts = new Map();

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
  if (a.form === "choices") return `Chosen${by}: ${a.text || a.note}`;
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
export function answerArea(q, el) {
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
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // Refused here, before it is signed or sent, by the rule the relay
    // applies again before it types: the server need not read it.
    let line;
    try {
      line = await typedLine(input.value);
    } catch (e) {
      page.status(`Not sent: ${e.message}.`);
      return;
    }
    // Sealed, it is the line as it would be typed: the server, which
    // cleans one in the clear, cannot read it.
    send(q, { text: q.sealed ? line : input.value }, form.querySelector("button")).then((sent) => sent && drafts.delete(q.question_id));
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
    page.status(`Could not take it back: ${e.message}`);
  }
  page.refresh();
}

/** Posts an answer, signed by this browser's key when it holds a certified
 *  one (keys.js); true once the Worker queued it. The words of an answer to
 *  a question whose words are sealed are sealed here, as the answer's
 *  (needs_you_core::sealed::field::ANSWER, scope the question's id): the
 *  server gets its form, the agent's machine opens them. */
async function send(q, body, button) {
  button.disabled = true;
  let sent = false;
  try {
    let answer = { ...body };
    delete answer.digest;
    let posted = body;
    let words = null;
    // The answer with its words left out, null when it has none (the
    // builder throws on one it cannot read: nothing is sent).
    const { wordless } = await answerTold(answer);
    // What the person wrote or chose leaves a browser paired under an owner
    // sealed, or not at all: to a question listed in the clear (its machine
    // holds no key, or a server says so of a sealed one to read the reply)
    // it would go readable.
    if (wordless !== null && !q.sealed && (await sealsOnly())) {
      const bare = "decision" in answer ? "; a bare allow or denial still goes" : "";
      throw new Error(`this question is listed in the clear (its machine holds no content key, or so the server says), and what you write leaves this page only sealed: answer it in the agent's terminal, or log that machine in with the line \`needs-you pair\` prints${bare}`);
    }
    const left = q.sealed ? wordless : null;
    if (left) {
      // Under the version its question's words were sealed under, which
      // its machine holds, whatever newer one this page has.
      words = await sealWords(q.question_id, "answer", JSON.stringify(answer), q.sealed_version);
      if (!words) throw new Error("this page holds no content key to seal it with: pair it again");
      answer = left;
      posted = { ...left, ...(body.digest ? { digest: body.digest } : {}), sealed: words };
    }
    const signed = await signAnswer(q, answer, words);
    await call("POST", `/v1/questions/${encodeURIComponent(q.question_id)}/answers`, { body: signed ? { ...posted, signed } : posted });
    sent = true;
  } catch (e) {
    page.status(`Could not send the answer: ${e.message}`);
  }
  page.refresh();
  return sent;
}
