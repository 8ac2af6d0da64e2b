// The history: every question the owner's agents asked (open, and closed in
// the last 30 days), each with every answer (what, by which device, when,
// what became of it) and the rules they granted, a page at a time from
// GET /v1/history. A search runs here, by the rule `needs-you log` follows
// (card.wasm's `find`): the server hands its pages over whole, and sealed
// words are opened here first, since the server cannot read them.

import { call } from "./api.js";
import { find, openedPast } from "./card.js";
import { ago } from "./words.js";

const $ = (id) => document.getElementById(id);

/** Every past question loaded, newest first. */
let loaded = [];
/** The next page's `before`; null after the last page. */
let next = null;
/** Which opening of the history a page's answer belongs to: one that comes
 *  after the history was opened again is dropped. */
let opening = 0;
/** A page on its way: "Show older" waits for it. */
let loading = false;
/** The newest drawing asked for: an older search that ends after it is dropped. */
let drawing = 0;

/** Opens the history on its newest page. */
export async function showHistory() {
  const dialog = $("history-view");
  if (!dialog.open) dialog.showModal();
  opening += 1;
  loaded = [];
  next = null;
  loading = false;
  $("history-search").value = "";
  $("history-list").replaceChildren();
  await more();
}

/** Loads the next page (the first when none is loaded), and draws; one
 *  page at a time. */
async function more() {
  if (loading) return;
  const mine = opening;
  loading = true;
  $("history-more").disabled = true;
  state("Loading…");
  try {
    const after = next ? `?before=${encodeURIComponent(next)}` : "";
    const page = (await call("GET", `/v1/history${after}`)).body;
    if (mine !== opening) return;
    // Sealed words are opened here, before a search can read them.
    const pasts = await Promise.all(page.questions.map(openedPast));
    if (mine !== opening) return;
    loaded.push(...pasts);
    next = page.next;
  } catch (e) {
    if (mine === opening) state(`Could not read the history: ${e.message}`);
    return;
  } finally {
    if (mine === opening) {
      loading = false;
      $("history-more").disabled = false;
    }
  }
  await draw();
}

/** Draws what the search finds among the questions loaded. */
async function draw() {
  const mine = ++drawing;
  const query = $("history-search").value.trim();
  let shown = loaded;
  if (query) {
    try {
      shown = (await find(query, loaded)).map((i) => loaded[i]);
    } catch (e) {
      if (mine === drawing) state(`Could not search here: ${e.message}`);
      return;
    }
  }
  if (mine !== drawing) return;
  $("history-list").replaceChildren(...shown.map(past));
  $("history-more").hidden = !next;
  const older = next ? " Older ones: Show older." : "";
  if (!shown.length) state(query ? `Nothing loaded holds those words.${older}` : "No questions yet.");
  else state(`${shown.length} of the ${loaded.length} questions loaded.${older}`);
}

function state(text) {
  $("history-state").textContent = text;
}

/** One past question, in the words `needs-you log` uses. */
function past(p) {
  const li = document.createElement("li");
  li.className = "past";
  li.id = `past-${p.question_id}`;
  const ended = p.closed_at == null ? "open" : `${p.close_reason ?? "closed"} ${ago(p.closed_at)}`;
  li.append(line("past-head", `${ago(p.opened_at)} · ${p.task_name} · ${p.who} · ${ended}`));
  li.append(line("past-text", p.text));
  for (const a of p.answers) {
    const why = a.reason ? ` (${a.reason})` : "";
    li.append(line("past-answer", `answered ${a.text} by ${a.by ?? "?"}, ${ago(a.created_at ?? a.updated_at)}: ${a.state}${why}`));
  }
  for (const r of p.rules) li.append(line("past-rule", `granted rule ${r.rule} (${r.state})`));
  const t = p.terminal;
  const where = t ? [t.host && `on ${t.host}`, t.cwd].filter(Boolean).join(" · ") : "";
  li.append(line("past-where note", where ? `${p.question_id} · ${where}` : p.question_id));
  return li;
}

function line(className, text) {
  const el = document.createElement("p");
  el.className = className;
  el.textContent = text;
  return el;
}

$("history-search").addEventListener("input", () => draw());
$("history-more").addEventListener("click", () => more());
