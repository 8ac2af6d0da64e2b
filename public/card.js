// The card of a question that takes an answer here, built in this page from
// the request it answers, by the project's one card builder
// (crates/needs-you-card, compiled to card.wasm): what the person sees
// before they answer, and the digest their answer signs. Never a text or a
// digest the server wrote: a server that put "npm test" over the request of
// `curl … | sh` would get a signature for what it did not show.

//
// A question whose words were sealed on the agent's machine
// (needs_you_core::words) is opened here first, with the content key this
// browser holds, as the open the list names (its session and `seq`); its
// card is then built from the opened request like any other.

import { call } from "./api.js";
import { CARD_SHA256 } from "./card-hash.js";
import { keyedId, openScope, openSealed } from "./keys.js";

/** The wasm's exports, once loaded; a failed load is tried again. */
let builder = null;

function loaded() {
  builder ??= fetch("/card.wasm")
    .then((r) => {
      if (!r.ok) throw Object.assign(new Error(`the card builder did not reach this page (card.wasm: ${r.status})`), { again: true });
      return r.arrayBuffer();
    }, (e) => {
      throw Object.assign(e, { again: true, offline: true }); // tried again
    })
    .then(async (bytes) => {
      // Only the builder this page was built with (scripts/build.sh).
      const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
      if (hash !== CARD_SHA256) throw new Error("card.wasm is not the card builder this page was built with");
      return WebAssembly.instantiate(bytes);
    })
    .then(({ instance }) => instance.exports)
    .catch((e) => {
      builder = null;
      throw e;
    });
  return builder;
}

/** `{text, options, questions, lasting, digest}` of `request`, answered
 *  in `form` ("decision" or "choices"); throws what the builder found wrong
 *  with it. */
export function build(form, request) {
  return withBuilder("card", { form, request });
}

/** `input` through the loaded module's export `name`. A trap leaves the
 *  module's memory as it was mid-call: a new one is loaded next time. */
async function withBuilder(name, input) {
  const wasm = await loaded();
  try {
    return callExport(wasm, name, input);
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) builder = null;
    throw e;
  }
}

/** One call of the builder's exports (`wasm`): the JSON in through `room`,
 *  the card out of `card`, both given back. The builder builds the card as
 *  the kind of question `form` answers, never the kind the server says: the
 *  machine takes a decision for a permission only, and choices for a dialog. */
export function callBuilder(wasm, form, request) {
  return callExport(wasm, "card", { form, request });
}

/** A question's opened `words` as a device shows them, through the
 *  builder's exports (`wasm`): a question of `kind` that carries its
 *  request with the card built from it, which its machine sealed them
 *  without. */
export function callWordsBuilder(wasm, kind, words) {
  return callExport(wasm, "words", { kind, words });
}

/** `input` through the module's export `name`: JSON in through `room`, JSON
 *  out, both given back; what the module found wrong with it, thrown. */
function callExport(wasm, name, input) {
  const bytes = new TextEncoder().encode(JSON.stringify(input));
  const at = wasm.room(bytes.length);
  new Uint8Array(wasm.memory.buffer, at, bytes.length).set(bytes);
  const out = wasm[name](at, bytes.length);
  const [place, length] = [Number(out >> 32n), Number(out & 0xffffffffn)];
  const json = new TextDecoder().decode(new Uint8Array(wasm.memory.buffer, place, length));
  wasm.give_back(place, length);
  const answer = JSON.parse(json);
  if (answer.error) throw new Error(answer.error);
  return answer;
}

/** A reply as the agent's terminal would get it: the one line typed; what
 *  the agent would run rather than read (`!…`, `/…`, `exit`) is thrown, by
 *  the rule the relay applies again before it types. */
export async function typedLine(text) {
  return (await withBuilder("typed", { text })).line;
}

/** `screen` (a screen as its relay sealed it, opened here) bounded and its
 *  text cleaned of every control and invisible character, by the rule the
 *  command line applies (needs_you_core::screen). */
export function checkedScreen(screen) {
  return withBuilder("screen", screen);
}

/** The places in `questions` (past questions, as the history gives them)
 *  of those that `query` finds, by the same rule as `needs-you log`. */
export async function find(query, questions) {
  return (await withBuilder("find", { query, questions })).found;
}

/** Cards built, by question: `{key, built}` or `{key, error}`; `key` is
 *  what the list said of the question when it was built (its open and
 *  digest), so that a question opened again is built again. */
const cards = new Map();
/** Questions whose request is being fetched. */
const building = new Set();

/** Does `q` take an answer that is signed over its request? */
export function takesSigned(q) {
  return q.answer_from_afar === "decision" || q.answer_from_afar === "choices";
}

/**
 * `q` as this page shows it: its sealed words opened here; for a question
 * that takes a decision or choices, the card built here from its request in
 * place of the server's words, options, lasting choices and digest. While
 * that is being done, or when it cannot be, a question answered in the
 * terminal, saying why. `ready` is called once a card is built, to draw the
 * list again.
 */
export function shown(q, ready) {
  const card = { ...cardShown(q, ready), task_name: taskName(q.task_id, q.task_sealed_name, q.task_name, ready) };
  return card.answer?.sealed ? { ...card, answer: answerShown(q.question_id, card.answer, ready) } : card;
}

/** What `open()` gives, kept in `cache` under `id` once it is opened:
 *  `{value}`, or `{error}` once it did not open `OPEN_TRIES` times (the key
 *  may be on its way: a page just paired, a version just made); null while
 *  it is being opened, `ready` called each time it was tried, to draw again. */
function openedOnce(cache, id, open, ready) {
  const had = cache.get(id);
  if (had?.value !== undefined || had?.error) return had;
  if (!had?.opening) {
    const tries = (had?.tries ?? 0) + 1;
    cache.set(id, { opening: true, tries });
    open().catch(() => null).then((value) => {
      if (value !== null) cache.set(id, { value });
      else if (tries < OPEN_TRIES) cache.set(id, { tries });
      else cache.set(id, { error: "this page holds no key that opens it" });
      setTimeout(ready, value === null && tries < OPEN_TRIES ? RETRY_MS : 0);
    });
  }
  return null;
}

/** Tasks' sealed names opened here, by task id (openedOnce). */
const taskNames = new Map();

/** The name of task `taskId`: `name`, as the server keeps it, or its
 *  `sealed` name opened here (needs_you_core::sealed::field::TASK, scope
 *  the task's id); `ready` is called once it is, to draw again. */
export function taskName(taskId, sealed, name, ready) {
  if (!sealed) return name;
  const had = openedOnce(taskNames, taskId, () => openSealed(taskId, "task", sealed), ready);
  if (had?.error) return `(sealed: ${had.error})`;
  return had ? had.value : "(opening its sealed name…)";
}

/** `terminal` as its opened `words` place it: their folder, their tmux pane
 *  and their host, the machine's word rather than the list's (words sealed
 *  before the pane and host were among them leave the list's). */
function placed(terminal, words) {
  if (!terminal) return terminal;
  return { ...terminal, cwd: words.cwd ?? "", ...(words.target ? { target: words.target } : {}), ...(words.host !== undefined ? { host: words.host } : {}) };
}

function cardShown(q, ready) {
  if (!takesSigned(q) && !q.sealed) return q;
  const key = `${q.answer_from_afar}:${q.open_seq}:${q.digest}:${q.sealed}`;
  const had = cards.get(q.question_id);
  if (had?.key === key) {
    if (had.error) {
      const text = q.sealed ? `Its words are sealed, and this page could not show them (${had.error}).` : q.text;
      return { ...q, text, answer_from_afar: null, why_not: `${had.error}: answer it in the terminal` };
    }
    const b = had.built;
    const terminal = b.cwd !== undefined ? placed(q.terminal, b) : q.terminal;
    const card = { ...q, text: b.text, options: b.options ?? [], questions: b.questions ?? [], terminal, sealed_version: b.version };
    return takesSigned(q) ? { ...card, decisions: b.lasting, digest: b.digest } : card;
  }
  if (tried.get(q.question_id)?.key !== key) {
    // Each open of a question is waited on anew.
    tried.set(q.question_id, { key, since: Date.now() });
    // Drawn again once the wait is over, to say why if it is not built by then.
    setTimeout(ready, SAY_WHY_AFTER_MS);
  }
  if (!building.has(q.question_id)) {
    building.add(q.question_id);
    fetchAndBuild(q, key).then((again) => {
      building.delete(q.question_id);
      setTimeout(ready, again ? RETRY_MS : 0);
    });
  }
  const { since, why } = tried.get(q.question_id);
  if (Date.now() - since >= SAY_WHY_AFTER_MS) {
    // Still tried, quietly: a request that arrives later builds the card.
    const said = why ?? (q.sealed ? "its sealed words did not reach this page" : "its request did not reach this page");
    const text = q.sealed ? "Its words are sealed, and have not reached this page." : q.text;
    return { ...q, text, answer_from_afar: null, why_not: `${said}: answer it in the terminal` };
  }
  const waiting = q.sealed ? "opening its sealed words…" : "building this card from its request…";
  return { ...q, text: q.sealed ? waiting : q.text, answer_from_afar: null, why_not: waiting };
}

/** How long a card whose request could not be fetched waits to try again. */
const RETRY_MS = 5_000;
/** How long a card may say it is being built: past this, it says why it is
 *  not, and how to answer instead, while it goes on trying. */
export const SAY_WHY_AFTER_MS = 4_000;
/** Each card being built: when it was first tried, and why the last try
 *  failed (for a person), by question id. */
const tried = new Map();
/** How many times sealed words that no key here opens are tried. */
const OPEN_TRIES = 4;
/** How many times each question's words did not open, by question id. */
const unopened = new Map();

/** The words of `q` as its machine sealed them, opened here: `{text,
 *  options, questions, request, cwd, kind}` (those that carry a request
 *  without its card: `withCard`). `held` is what the server keeps of its
 *  request; sealed words that were sealed for another open than the one the
 *  list names are tried again with the next list. */
async function opened(q, held) {
  if (held.open_seq !== q.open_seq) throw Object.assign(new Error("its sealed words did not reach this page as the list names them"), { again: true });
  const plain = await openSealed(openScope(q), "question", held.sealed);
  if (plain === null) {
    // The key may be on its way (a page just paired, a version just made):
    // tried again a few times before it is said.
    const tried = (unopened.get(q.question_id) ?? 0) + 1;
    unopened.set(q.question_id, tried);
    throw Object.assign(new Error("this page holds no key that opens them: pair it again from a command line that holds the content key"), { again: tried < OPEN_TRIES });
  }
  unopened.delete(q.question_id);
  // The version they were sealed under, which their machine holds: an
  // answer's words are sealed under it too.
  return { ...JSON.parse(plain), version: Number(held.sealed.split(".")[1]) };
}

/** `words` of question `q` as the list shows them: those that carry a
 *  request with the card built here from it (by card.wasm, as the kind
 *  sealed with them, else the list's): their machine sealed them without
 *  it. */
async function withCard(q, words) {
  return words.request ? { ...words, ...(await withBuilder("words", { kind: q.kind, words })) } : words;
}

/** Builds `q`'s card from its request, its sealed words opened first; true
 *  when the request or the builder could not be fetched (offline, a server
 *  error), to be tried again. A builder that is not this page's, or a
 *  request it refuses, or words it cannot open, is said on the card. */
async function fetchAndBuild(q, key) {
  try {
    const held = (await call("GET", `/v1/questions/${encodeURIComponent(q.question_id)}/request`)).body ?? {};
    const words = q.sealed ? await opened(q, held) : null;
    if (!takesSigned(q)) {
      cards.set(q.question_id, { key, built: { ...(await withCard(q, words)), cwd: words.cwd ?? "", target: words.target, host: words.host } });
      return false;
    }
    await loaded();
    const request = words ? words.request : held.request;
    if (!request) throw new Error("its request did not reach this page");
    const built = await build(q.answer_from_afar, request);
    cards.set(q.question_id, { key, built: words ? { ...(await named(built, words.version)), cwd: words.cwd ?? "", target: words.target, host: words.host, version: words.version } : built });
  } catch (e) {
    // Out of reach (offline, or the server's own failure): tried again.
    if (e.again || e.offline || e.status >= 500) {
      const t = tried.get(q.question_id);
      if (t) t.why = unreachable(e);
      return true;
    }
    // The server's refusal is said by its status, not in its own words.
    const error = e.status ? `its request did not reach this page (the server answered ${e.status})` : e.message;
    cards.set(q.question_id, { key, error });
  }
  return false;
}

/** Why a try that will be made again failed, for a person. */
function unreachable(e) {
  if (e.status >= 500) return `the server did not give its request (it answered ${e.status})`;
  if (e.offline) return "this page is offline, so its request did not reach it";
  return e.message;
}

/** `built`, a card built here from a sealed question's request, naming the
 *  request and its lasting choices as its machine named them: keyed under
 *  the version its words were sealed under (keys.js keyedId). What is shown
 *  and signed. */
async function named(built, version) {
  const digest = await keyedId(built.digest, version);
  if (digest === null) {
    // The key may be on its way (an older page takes it as it starts):
    // tried again a few times before it is said.
    const tried = (unnamed.get(built.digest) ?? 0) + 1;
    unnamed.set(built.digest, tried);
    throw Object.assign(new Error("this page holds no key that names its request: pair it again from a command line that holds the content key"), { again: tried < OPEN_TRIES });
  }
  unnamed.delete(built.digest);
  const lasting = await Promise.all((built.lasting ?? []).map(async (o) => ({ ...o, id: await keyedId(o.id, version) })));
  return { ...built, digest, lasting };
}

/** How many times each request's digest could not be keyed here, by digest. */
const unnamed = new Map();

/** A rule's words as its machine sealed them (`{label, rule}`), opened
 *  here; null when this browser holds no key that opens them. */
async function openRule(r) {
  const plain = await openSealed(r.sealed_scope, "rule", r.rule);
  return plain === null ? null : JSON.parse(plain);
}

/** Rules' words opened (`{label, rule}`), by rule id (openedOnce). */
const rules = new Map();

/** `r` as this page shows it: its sealed words opened here (`ready` is
 *  called once they are, to draw again). */
export function ruleShown(r, ready) {
  if (!r.sealed_scope) return r;
  const had = openedOnce(rules, r.rule_id, () => openRule(r), ready);
  if (had?.error) return { ...r, rule: `(sealed: ${had.error})` };
  return had ? { ...r, rule: had.value.rule, label: had.value.label } : { ...r, rule: "(opening its sealed words…)" };
}

/** What answers' sealed words say, opened here (as the list would say them
 *  in the clear), by answer id (openedOnce). */
const answers = new Map();

/** `answer` (an answer's fields) as the builder tells it: `{wordless,
 *  summary}`, the answer with its words left out (null when it has none)
 *  and what the list says of it. */
export function answerTold(answer) {
  return withBuilder("answer_words", answer);
}

/** What the list says of `a`, an answer to question `questionId`, its
 *  words opened here as the device that made it sealed them; null when they
 *  do not open. */
async function openAnswer(questionId, a) {
  const plain = await openSealed(questionId, "answer", a.sealed);
  return plain === null ? null : (await answerTold(JSON.parse(plain))).summary;
}

/** `a` as this page shows it: its sealed words opened here into its
 *  `text` (`ready` is called once they are, to draw again). */
function answerShown(questionId, a, ready) {
  // By question and answer: an answer id the server gives again under
  // another question is opened again, as that question's.
  const had = openedOnce(answers, `${questionId} ${a.answer_id}`, () => openAnswer(questionId, a), ready);
  if (had) return had.error ? { ...a, text: "", note: `(sealed: ${had.error})` } : { ...a, text: had.value };
  // Only what opened is ever its text (a draft is made of it): until then,
  // a note says why there is none.
  return { ...a, text: a.form === "decision" ? a.text : "", note: "(opening its sealed words…)" };
}

/** A past question of the history with its sealed words and its rules'
 *  opened here; what does not open says so in its text. */
export async function openedPast(p) {
  const answersOpened = await Promise.all(p.answers.map(async (a) => {
    if (!a.sealed) return a;
    const text = await openAnswer(p.question_id, a).catch(() => null);
    return { ...a, text: text ?? "(sealed: this page holds no key that opens it)" };
  }));
  const task = p.task_sealed_name ? await openSealed(p.task_id, "task", p.task_sealed_name).catch(() => null) : p.task_name;
  return { ...(await openedPastWords(p)), answers: answersOpened, task_name: task ?? "(sealed: this page holds no key that opens it)" };
}

async function openedPastWords(p) {
  const rulesOpened = await Promise.all(p.rules.map(async (r) => {
    if (!r.sealed_scope) return r;
    const w = await openRule(r).catch(() => null);
    return w ? { ...r, rule: w.rule, label: w.label } : { ...r, rule: "(sealed: this page holds no key that opens it)" };
  }));
  if (!p.sealed) return { ...p, rules: rulesOpened };
  try {
    const held = (await call("GET", `/v1/questions/${encodeURIComponent(p.question_id)}/request`)).body ?? {};
    const w = await withCard(p, await opened(p, held));
    const terminal = placed(p.terminal, w);
    return { ...p, text: w.text, options: w.options ?? [], questions: w.questions ?? [], terminal, rules: rulesOpened };
  } catch (e) {
    return { ...p, text: `(sealed: ${e.message})`, rules: rulesOpened };
  }
}

/** Forgets the cards of questions no longer listed. */
export function keepOnly(questions) {
  const listed = new Set(questions.map((q) => q.question_id));
  for (const id of cards.keys()) if (!listed.has(id)) cards.delete(id);
  for (const id of unopened.keys()) if (!listed.has(id)) unopened.delete(id);
  const answered = new Set(questions.map((q) => `${q.question_id} ${q.answer?.answer_id}`));
  for (const id of answers.keys()) if (!answered.has(id)) answers.delete(id);
}
