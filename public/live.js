// The live list: one WebSocket to the owner's list (docs/api.md, "The live
// list"). A ticket asked for with the device's credential opens it, so the
// credential never goes in a URL. The server sends the whole list when the
// socket opens, then each change with the revision it starts from; a change
// that does not start from the revision shown costs one read of the list.
// While no socket can be had the page reads the list instead, less often
// the longer that lasts; a socket that went away is opened again the same
// way. Presence rides on the socket while it is open.

import { call } from "./api.js";

/** The first and the longest wait before trying again without a socket. */
const FIRST_RETRY_MS = 1500;
const LAST_RETRY_MS = 30_000;

/** `list` with a change applied: the questions new or changed replace
 *  their old selves or join, the gone ones go, the order is the one given,
 *  tasks and `more` are replaced when sent. The server's rule is
 *  `needs_you_core::live::Changes::apply`; this is its twin for the page. */
export function applyChanges(list, c) {
  const gone = new Set(c.gone || []);
  const questions = list.questions.filter((q) => !gone.has(q.question_id));
  for (const q of c.questions || []) {
    const at = questions.findIndex((o) => o.question_id === q.question_id);
    if (at >= 0) questions[at] = q;
    else questions.push(q);
  }
  if (c.order) {
    const place = new Map(c.order.map((id, i) => [id, i]));
    questions.sort((a, b) => (place.get(a.question_id) ?? Infinity) - (place.get(b.question_id) ?? Infinity));
  }
  return { ...list, questions, tasks: c.tasks ?? list.tasks, more: c.more ?? list.more };
}

/** The revision in the list's ETag (`"r<revision>-m<minute>"`). */
function etagRevision(etag) {
  const m = /^"r(-?\d+)-/.exec(etag || "");
  return m ? Number(m[1]) : null;
}

/**
 * Keeps the list shown up to date. `shown(list, asked)` is called with each
 * new list, and a moment before the server read it (by this page's clock):
 * it knows of every question opened by then, none opened later. For a read,
 * when it was asked; on a socket, when its ticket was, since the socket's
 * first list is read after that (a later change does not move it: a
 * question opened later is told apart by its own close). `signedOut()` once this device's credential stops working;
 * `trouble(error | null)` when the list cannot be had, and when it can again.
 */
export function liveList({ shown, signedOut, trouble }) {
  let ws = null;
  let open = false;
  let stopped = true;
  let list = null;
  let revision = null;
  let etag = null;
  let retry = FIRST_RETRY_MS;
  let timer = null;
  let reading = null;
  /** When the open socket's ticket was asked for. */
  let socketAsked = 0;

  function show(next, rev, asked) {
    list = next;
    revision = rev;
    trouble(null);
    shown(list, asked);
  }

  /** One read of the list: when a change was missed, or while no socket. */
  function read() {
    reading ??= (async () => {
      try {
        const asked = Date.now();
        const r = await call("GET", "/v1/needs-you", { etag });
        const rev = etagRevision(r.etag);
        // The socket may have brought a newer list while this was read.
        if (r.status === 304 || (rev !== null && revision !== null && rev < revision)) trouble(null);
        else {
          etag = r.etag;
          show(r.body, rev, asked);
        }
      } catch (e) {
        if (e.status === 401) return end();
        trouble(e);
      } finally {
        reading = null;
      }
    })();
    return reading;
  }

  function end() {
    stop();
    signedOut();
  }

  function heard(msg) {
    if (msg.type === "signed_out") return end();
    if (msg.type === "list") return show(msg.list, msg.revision, socketAsked);
    if (msg.type !== "changes" || (revision !== null && msg.revision <= revision && msg.from !== revision)) return;
    if (list && msg.from === revision) show(applyChanges(list, msg), msg.revision, socketAsked);
    else read();
  }

  async function connect() {
    clearTimeout(timer);
    timer = null;
    if (stopped || ws) return;
    let ticket;
    const asked = Date.now();
    try {
      ticket = (await call("POST", "/v1/live")).body.ticket;
    } catch (e) {
      if (e.status === 401) return end();
      return without(e);
    }
    if (stopped || ws) return;
    const url = new URL(`/v1/live?ticket=${encodeURIComponent(ticket)}`, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(url);
    ws = socket;
    socketAsked = asked;
    socket.onopen = () => {
      open = true;
      retry = FIRST_RETRY_MS;
      onOpen?.();
    };
    socket.onmessage = (e) => {
      try {
        heard(JSON.parse(e.data));
      } catch {
        // Not a message of ours: nothing to do with it.
      }
    };
    socket.onclose = (e) => {
      const wasOpen = open;
      if (ws === socket) {
        ws = null;
        open = false;
      }
      if (stopped) return;
      if (e.code === 4401) return end();
      // A socket that was up is opened again at once; one that never
      // opened is tried again later, with a read meanwhile.
      if (wasOpen) connect();
      else without(new Error("the live list's socket was refused"));
    };
  }

  /** No socket: read the list now, and try again later, later each time. */
  function without(error) {
    if (stopped) return;
    if (!list) trouble(error);
    read();
    clearTimeout(timer);
    timer = setTimeout(connect, retry);
    retry = Math.min(retry * 2, LAST_RETRY_MS);
  }

  let onOpen = null;

  function stop() {
    stopped = true;
    clearTimeout(timer);
    timer = null;
    const socket = ws;
    ws = null;
    open = false;
    socket?.close(1000, "done");
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      retry = FIRST_RETRY_MS;
      connect();
    },
    stop,
    /** Tries at once (a page shown again, the network back). */
    wake() {
      if (stopped || ws) return;
      retry = FIRST_RETRY_MS;
      connect();
    },
    /** After the person acted: the change comes on the socket; without one, read. */
    acted() {
      if (!open) read();
    },
    /** Sends `msg` on the socket; false when there is none open. */
    say(msg) {
      if (!open) return false;
      ws.send(JSON.stringify(msg));
      return true;
    },
    /** `f` runs each time a socket opens. */
    set onOpen(f) {
      onOpen = f;
    },
    get live() {
      return open;
    },
  };
}
