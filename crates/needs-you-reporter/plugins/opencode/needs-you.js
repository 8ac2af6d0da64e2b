// needs-you for OpenCode: tells needs-you when the agent waits for you.
//
// OpenCode runs no shell hooks in its terminal interface; it loads server
// plugins and hands them every bus event. This plugin picks the few events that
// matter and passes their own fields on as the normalized events that
// `report-prompt --cli opencode` reads (defined in needs-you-core's
// classify/plugin_events.rs). Every rule about what a person reads (the question
// test, how a permission is worded, text limits) is report-prompt's:
//
//   question.asked                      -> {event: "dialog", questions}
//   permission.asked / .updated (old)   -> {event: "permission", request: its properties}
//   session.status idle / session.idle  -> {event: "turn_end", text: the last assistant reply}
//   question.replied / .rejected,
//   permission.replied                  -> {event: "close", reason: "answered"}
//   session.status busy                 -> {event: "close", reason: "prompt_submitted"}
//   the plugin disposed (OpenCode quits) -> {event: "close", reason: "session_end"}, each session
//
// A reply's text is followed through `message.part.updated` (the whole text
// so far) and `message.part.delta` (what was added): a reply interrupted
// mid-stream reaches the idle with its deltas only.
//
// While a question or permission dialog is open, status changes are ignored:
// the agent going busy or idle around the dialog does not close it. A child
// (subagent) session is known from its parentID, in `session.created` or
// `session.updated`, or, for one that existed before the plugin loaded, from
// OpenCode's own client. A child's permission is shown to the person in the
// main interface, so it is reported under its top-level session; every other
// event of a child is ignored.
//
// Answers from afar. When OpenCode's client can reply, a permission or
// question goes out with `afar: true`, and the plugin starts `report-prompt
// __await` beside its report, with the same event: that waits on the task's
// relay for the person's answer, checked against the very request
// (report-prompt makes its digest), and prints it. The plugin hands it to
// OpenCode through OpenCode's own routes (a permission's reply, `once`,
// `reject` or `always`, as report-prompt worked it out from the request;
// a question's labels), then tells the waiter
// `took`. The dialog stays on screen meanwhile: a key in the terminal
// answers it first, and the plugin then ends the waiter.
//
// It never throws into OpenCode and never writes to its output. Reports run
// one at a time, in event order, each in a `report-prompt` process that
// returns in milliseconds (the network request is detached); OpenCode does not
// wait for them. Every export of a plugin file must be a plugin function, so
// the helpers below are not exported.
import { spawn } from "node:child_process";

// The installer replaces this with report-prompt's absolute path.
const DEFAULT_REPORTER = "report-prompt";
// How long a session look-up may take before the session is taken for a
// top-level one.
const LOOKUP_MS = 2000;

function createTracker(send, parentOf, awaiter) {
  const parents = new Map(); // child session id -> its parent's id
  const topLevel = new Set(); // session ids known to have no parent
  const openDialogs = new Map(); // session id -> Set of the request ids of its open dialogs
  const lastStatus = new Map(); // session id -> "busy" | "idle"
  const lastAssistant = new Map(); // session id -> the id of its newest assistant message
  const lastMessage = new Map(); // session id -> the id of its newest message
  const roles = new Map(); // message id -> role, for the newest messages only
  const partTexts = new Map(); // message id -> Map(part id -> text), likewise

  const sessionOf = (p) => p?.sessionID ?? p?.info?.sessionID ?? p?.part?.sessionID;

  function noteSession(info) {
    if (!info?.id) return;
    if (info.parentID) parents.set(info.id, info.parentID);
    else topLevel.add(info.id);
  }

  // A session seen for the first time without its creation event: ask
  // OpenCode once whether it has a parent; without an answer, it is taken
  // for a top-level session.
  async function learn(session) {
    if (parents.has(session) || topLevel.has(session)) return;
    let parent;
    try {
      // Never wait long: every later event waits behind this one.
      const timeout = new Promise((r) => setTimeout(r, LOOKUP_MS).unref?.());
      parent = await Promise.race([parentOf?.(session), timeout]);
    } catch {
      parent = undefined;
    }
    if (parent) parents.set(session, parent);
    else topLevel.add(session);
  }

  function topOf(session) {
    let s = session;
    for (let i = 0; i < 16 && parents.has(s); i++) s = parents.get(s);
    return s;
  }

  // A subagent's permission dialog waits for the person like any other.
  function child(session, type, p) {
    const top = topOf(session);
    if (type === "permission.asked" || type === "permission.updated") {
      return openDialogFor(top, p.id, { event: "permission", request: p });
    }
    if (type === "permission.replied") return closeDialogFor(top, p.requestID ?? p.permissionID);
    return undefined;
  }

  // Only the newest message of each session and its newest assistant message
  // are kept: the rest can never be the reply a turn ends with.
  function forget(id, session) {
    if (!id || id === lastAssistant.get(session) || id === lastMessage.get(session)) return;
    roles.delete(id);
    partTexts.delete(id);
  }

  function noteMessage(info) {
    if (!info?.id || !info.sessionID) return;
    const session = info.sessionID;
    roles.set(info.id, info.role);
    const previousMessage = lastMessage.get(session);
    lastMessage.set(session, info.id);
    if (info.role === "assistant") {
      const previousAssistant = lastAssistant.get(session);
      lastAssistant.set(session, info.id);
      forget(previousAssistant, session);
    }
    forget(previousMessage, session);
  }

  function noteDelta(p) {
    if (p.field !== "text" || typeof p.delta !== "string" || !p.messageID || !p.partID) return;
    if (roles.get(p.messageID) === "user") return;
    if (!partTexts.has(p.messageID)) partTexts.set(p.messageID, new Map());
    const parts = partTexts.get(p.messageID);
    parts.set(p.partID, (parts.get(p.partID) ?? "") + p.delta);
  }

  function notePart(part) {
    if (!part || part.type !== "text" || part.synthetic || part.ignored) return;
    if (roles.get(part.messageID) === "user") return;
    if (!partTexts.has(part.messageID)) partTexts.set(part.messageID, new Map());
    // Every update carries the part's full text so far (the last one, all of it).
    partTexts.get(part.messageID).set(part.id, part.text ?? "");
  }

  function lastReply(session) {
    const parts = partTexts.get(lastAssistant.get(session));
    return parts ? [...parts.values()].join("\n").trim() : "";
  }

  // Two dialogs can be pending in one session (parallel tool permissions, a
  // permission and a question). The server keeps one open question per
  // session, the newest; it closes when the last pending dialog is answered.
  function openDialogFor(session, id, normalized) {
    if (!openDialogs.has(session)) openDialogs.set(session, new Set());
    openDialogs.get(session).add(id ?? "unnamed");
    const event = awaiter && id ? { ...normalized, session, afar: true } : { ...normalized, session };
    send(event);
    if (event.afar) awaiter.start(id, event);
  }

  function closeDialogFor(session, id) {
    const pending = openDialogs.get(session);
    if (!pending) return;
    if (id && pending.has(id)) {
      pending.delete(id);
      awaiter?.stop(id);
    } else {
      // An answer we cannot match: assume it ended them all.
      for (const open of pending) awaiter?.stop(open);
      pending.clear();
    }
    if (pending.size > 0) return;
    openDialogs.delete(session);
    send({ event: "close", session, reason: "answered" });
  }

  function status(session, type) {
    // Around an open dialog the agent is busy waiting for it; that says nothing.
    if (openDialogs.has(session)) return;
    if (lastStatus.get(session) === type) return; // busy repeats every step; idle may come twice
    lastStatus.set(session, type);
    if (type === "busy") send({ event: "close", session, reason: "prompt_submitted" });
    else if (type === "idle") send({ event: "turn_end", session, text: lastReply(session) });
  }

  const seen = new Set(); // top-level sessions this plugin has heard of

  // OpenCode is quitting: whatever is open in its sessions closes.
  function closeAll() {
    awaiter?.stopAll();
    for (const session of seen) send({ event: "close", session, reason: "session_end" });
    seen.clear();
  }

  async function handle(event) {
    const type = event?.type;
    const p = event?.properties ?? {};
    if (type === "session.created" || type === "session.updated") return noteSession(p.info);
    const session = sessionOf(p);
    if (!session) return;
    await learn(session);
    if (parents.has(session)) return child(session, type, p);
    seen.add(session);
    switch (type) {
      case "message.updated":
        return noteMessage(p.info);
      case "message.part.updated":
        return notePart(p.part);
      case "message.part.delta":
        return noteDelta(p);
      case "question.asked":
        return openDialogFor(session, p.id, { event: "dialog", questions: p.questions ?? [] });
      case "permission.asked":
      case "permission.updated":
        return openDialogFor(session, p.id, { event: "permission", request: p });
      case "question.replied":
      case "question.rejected":
      case "permission.replied":
        return closeDialogFor(session, p.requestID ?? p.permissionID);
      case "session.status":
        return status(session, p.status?.type);
      case "session.idle":
        return status(session, "idle");
      default:
        return undefined;
    }
  }

  return { handle, closeAll };
}

// Runs report-prompt once per report, the next only after the previous one
// exited, so the reports keep their order (report-prompt numbers them).
function createQueue(reporter) {
  let chain = Promise.resolve();
  const send = function send(normalized) {
    const line = JSON.stringify({ v: 1, ...normalized });
    chain = chain.then(
      () =>
        new Promise((resolve) => {
          let child;
          try {
            child = spawn(reporter, ["--cli", "opencode"], { stdio: ["pipe", "ignore", "ignore"] });
          } catch {
            return resolve();
          }
          child.on("error", resolve);
          child.on("exit", resolve);
          child.stdin.on("error", () => {});
          child.stdin.end(line);
        }),
    );
    return chain;
  };
  /** Resolves once every report so far was handed to report-prompt. */
  send.drained = () => chain;
  return send;
}

// One `report-prompt __await` per dialog that takes an answer from afar
// (see the top of this file), ended when the dialog is answered in the
// terminal, unless it already handed its answer over.
function createAwaiter(reporter, reply) {
  const waiting = new Map(); // request id -> its waiter process
  function start(id, event) {
    let child;
    try {
      child = spawn(reporter, ["__await", "--cli", "opencode"], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return;
    }
    waiting.set(id, child);
    const done = () => waiting.get(id) === child && waiting.delete(id);
    child.on("error", done);
    child.on("exit", done);
    child.stdin.on("error", () => {});
    child.stdin.write(`${JSON.stringify({ v: 1, ...event })}\n`);
    let out = "";
    child.stdout.on("data", (chunk) => {
      if (child.answered) return;
      out += chunk;
      const end = out.indexOf("\n");
      if (end < 0) return;
      child.answered = true;
      let answer;
      try {
        answer = JSON.parse(out.slice(0, end));
      } catch {
        child.kill();
        return;
      }
      reply(event, id, answer).then(
        () => child.stdin.end("took\n"),
        () => child.stdin.end(),
      );
    });
  }
  function stop(id) {
    const child = waiting.get(id);
    if (!child || child.answered) return;
    waiting.delete(id);
    child.kill();
  }
  function stopAll() {
    for (const id of [...waiting.keys()]) stop(id);
  }
  return { start, stop, stopAll };
}

// OpenCode's replies, through the client it gives plugins. That client is
// the SDK's first version, whose generated methods predate the question and
// reply routes; its HTTP client reaches the same OpenCode server, in
// process, and these are the routes OpenCode's own interface calls. A
// rejection or an error answer throws: the waiter then tells the relay
// nothing was taken.
function replier(client) {
  const http = client?._client;
  if (typeof http?.post !== "function") return undefined;
  const post = async (url, requestID, body) => {
    const r = await http.post({ url, path: { requestID }, body, headers: { "Content-Type": "application/json" } });
    if (r?.error || (r?.response && !r.response.ok)) throw new Error("OpenCode refused the reply");
  };
  return (event, id, answer) => {
    if (event.event === "permission" && ["once", "reject", "always"].includes(answer.opencode?.reply)) {
      return post("/permission/{requestID}/reply", id, answer.opencode);
    }
    if (event.event === "dialog" && Array.isArray(answer.choices)) {
      return post("/question/{requestID}/reply", id, { answers: answer.choices });
    }
    return Promise.reject(new Error("an answer of another form"));
  };
}

// OpenCode's client answers `session.get` with `{ data: Session }`, whose
// `parentID` is set for a subagent's session.
function parentLookup(client) {
  if (typeof client?.session?.get !== "function") return undefined;
  return async (id) => (await client.session.get({ path: { id } }))?.data?.parentID;
}

export const NeedsYou = async (input, options) => {
  const reporter = options?.reporter || process.env.NEEDS_YOU_REPORTER || DEFAULT_REPORTER;
  const send = createQueue(reporter);
  const reply = replier(input?.client);
  const awaiter = reply && createAwaiter(reporter, reply);
  const tracker = createTracker(send, parentLookup(input?.client), awaiter);
  // Events are handled one at a time, in the order OpenCode sent them, even
  // when one waits for a session look-up.
  let chain = Promise.resolve();
  const then = (work) => {
    chain = chain.then(work).catch(() => {
      // Never into OpenCode: a broken report must not break the agent.
    });
    return chain;
  };
  return {
    event: ({ event }) => then(() => tracker.handle(event)),
    // OpenCode gives plugins no session-end event; it disposes of them when it
    // quits (/exit), and waits a few seconds for this to finish.
    dispose: () => then(() => tracker.closeAll()).then(() => send.drained()),
  };
};
