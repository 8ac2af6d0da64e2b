"""needs-you for Hermes: tells needs-you when the agent waits for you.

Hermes runs no shell hooks in its terminal interface by default; it loads
plugins. This one picks the hooks that matter and passes their own fields on
as the normalized events that ``report-prompt --cli hermes`` reads (defined in
needs-you-core's classify/plugin_events.rs). Every rule about what a person reads
(the question test, how a clarify or an approval is worded, text limits) is
report-prompt's:

====================================  =========================================
Hermes hook                           normalized event
====================================  =========================================
pre_tool_call for ``clarify``         ``dialog`` with clarify's own arguments
pre_approval_request (cli, gateway)   ``permission`` with the command and description
post_llm_call                         ``turn_end`` with ``assistant_response``
post_tool_call for ``clarify``        ``close`` with clarify's result
post_approval_response                ``close`` with the approval's choice
pre_llm_call                          ``close`` (prompt_submitted)
on_session_end, interrupted only      ``close`` (interrupted)
on_session_finalize                   ``close`` (session_end): the CLI quit, or /new
====================================  =========================================

``on_session_end`` fires after every turn, right after the reply: treating it
as a close withdrew the question the turn had just asked, so only an
interrupted one closes.

Every hook reports under one key per conversation. Hermes hands the approval
hooks a ``session_key`` and every other hook a ``session_id``. In the classic
CLI the two are the same string; in gateway mode (a messaging platform) the
key is the conversation's (``agent:main:telegram:dm:…``) while the id is the
stored transcript's, so the plugin reads the gateway's key from the session
context that Hermes sets for the turn, and uses it for every hook. Approvals decided by Hermes's own model
(``surface="smart"``) asked nobody and are skipped.

Hooks fire from several threads (tool workers, gateway sessions), so reports
go through one background worker with a queue, one at a time, in the order
Hermes produced them: a close never overtakes its open. Every callback takes
``**kwargs``, tolerates missing fields, returns None (a value from
``pre_llm_call`` would be injected into the prompt) and swallows every
exception: a traceback must never reach the person's terminal.
"""

import atexit
import contextlib
import functools
import json
import os
import queue
import subprocess
import threading

# The installer replaces this with report-prompt's absolute path.
DEFAULT_REPORTER = "report-prompt"


class Reporter:
    """Runs ``report-prompt --cli hermes`` once per report, in order, on one
    daemon thread. report-prompt returns in milliseconds: the network request
    is detached from it."""

    def __init__(self, command):
        self._command = command
        self._queue = queue.Queue()
        self._lock = threading.Lock()
        self._thread = None

    def send(self, event):
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="needs-you-reporter", daemon=True)
                self._thread.start()
                # The worker is a daemon thread: at exit, give the last reports
                # (often the interrupted close) a moment to go out.
                atexit.register(self.flush, 2)
        self._queue.put(dict(event, v=1))

    def flush(self, timeout=None):
        """Waits until every queued report was handed to report-prompt (tests)."""
        done = threading.Event()
        threading.Thread(target=lambda: (self._queue.join(), done.set()), daemon=True).start()
        return done.wait(timeout)

    def _run(self):
        while True:
            event = self._queue.get()
            try:
                # Nothing may reach the terminal.
                with contextlib.suppress(Exception):
                    subprocess.run(
                        [self._command, "--cli", "hermes"],
                        input=json.dumps(event).encode(),
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        timeout=10,
                        check=False,
                    )
            finally:
                self._queue.task_done()


def _gateway_session_key():
    """The gateway's conversation key for the current turn, or "" outside the
    gateway (the classic CLI) or when Hermes has none to give."""
    try:
        # Hermes's own, when present.
        from gateway.session_context import get_session_env

        return get_session_env("HERMES_SESSION_KEY") or ""
    except Exception:  # noqa: BLE001 - not in the gateway, or another Hermes
        return ""


def session_of(session_id="", session_key="", **_):
    """The one key every hook reports under: the gateway's conversation key
    when there is one, else the CLI's session id (which is also the key the
    CLI gives its approval hooks)."""
    return session_key or _gateway_session_key() or session_id


def _quiet(hook):
    """A hook that never raises and returns None: whatever goes wrong in
    reporting, nothing reaches Hermes or its terminal."""

    @functools.wraps(hook)
    def quiet(*args, **kwargs):
        with contextlib.suppress(Exception):
            hook(*args, **kwargs)

    return quiet


class NeedsYou:
    """The hook callbacks, each wrapped by _quiet."""

    def __init__(self, reporter):
        self.reporter = reporter
        # session id -> the key its reports went under; the session-finalize
        # hook only names the session id.
        self._keys = {}

    def _key(self, **kwargs):
        key = session_of(**kwargs)
        session_id = kwargs.get("session_id")
        if session_id and key:
            self._keys[str(session_id)] = key
        return key

    def _send(self, session, **event):
        if session:
            self.reporter.send(dict(event, session=str(session)))

    @_quiet
    def pre_tool_call(self, tool_name="", args=None, **kwargs):
        if tool_name == "clarify":
            self._send(self._key(**kwargs), event="dialog", clarify=args if isinstance(args, dict) else {})

    @_quiet
    def post_tool_call(self, tool_name="", result="", **kwargs):
        if tool_name == "clarify":
            # Its result tells an answer from a cancel or a time-out.
            outcome = result if isinstance(result, str) else ""
            self._send(self._key(**kwargs), event="close", clarify_result=outcome)

    @_quiet
    def pre_approval_request(self, command="", description="", surface="", **kwargs):
        if surface != "smart":
            approval = {"command": str(command or ""), "description": str(description or "")}
            self._send(self._key(**kwargs), event="permission", approval=approval)

    @_quiet
    def post_approval_response(self, surface="", choice="", **kwargs):
        if surface != "smart":
            self._send(self._key(**kwargs), event="close", approval_choice=str(choice or ""))

    @_quiet
    def pre_llm_call(self, **kwargs):
        self._send(self._key(**kwargs), event="close", reason="prompt_submitted")

    @_quiet
    def post_llm_call(self, assistant_response="", **kwargs):
        text = assistant_response if isinstance(assistant_response, str) else ""
        self._send(self._key(**kwargs), event="turn_end", text=text)

    @_quiet
    def on_session_end(self, interrupted=False, **kwargs):
        if interrupted is True:
            self._send(self._key(**kwargs), event="close", reason="interrupted")

    @_quiet
    def on_session_finalize(self, session_id="", **kwargs):
        session = self._keys.pop(str(session_id), None) or self._key(session_id=session_id, **kwargs)
        self._send(session, event="close", reason="session_end")


HOOKS = (
    "pre_tool_call",
    "post_tool_call",
    "pre_approval_request",
    "post_approval_response",
    "pre_llm_call",
    "post_llm_call",
    "on_session_end",
    "on_session_finalize",
)


def register(ctx):
    """Called once by Hermes's plugin loader."""
    plugin = NeedsYou(Reporter(os.environ.get("NEEDS_YOU_REPORTER") or DEFAULT_REPORTER))
    for name in HOOKS:
        ctx.register_hook(name, getattr(plugin, name))
    return plugin
