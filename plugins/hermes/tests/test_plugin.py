"""The Hermes plugin, driven with realistic hook sequences; what reaches a real
HTTP sink on 127.0.0.1 through the real report-prompt of this repository."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from sink import start_sink

PLUGIN_DIR = ROOT / "plugins" / "hermes" / "needs-you"
REPORTER = os.environ.get("NEEDS_YOU_TEST_REPORTER") or str(ROOT / "target" / "release" / "report-prompt")


def load_plugin_module():
    """Imports the plugin as Hermes does: a package named after its folder."""
    spec = importlib.util.spec_from_file_location(
        "hermes_plugins.needs_you", PLUGIN_DIR / "__init__.py", submodule_search_locations=[str(PLUGIN_DIR)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


needs_you = load_plugin_module()
SINK = None


def received():
    """What reached the sink: the path, the authorization and the parsed report."""
    return [{"path": r["path"], "auth": r["headers"].get("authorization"), "body": json.loads(r["body"])}
            for r in SINK.received]


class FakeContext:
    """What Hermes hands register(): only register_hook is used."""

    def __init__(self):
        self.hooks = {}

    def register_hook(self, name, callback):
        self.hooks[name] = callback


SESSION = "20261130_101500_a1b2c3"
TELEMETRY = {"telemetry_schema_version": "hermes.observer.v1", "task_id": "3f0c", "turn_id": "t1"}


class PluginTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global SINK
        SINK = start_sink()
        cls.state_root = tempfile.mkdtemp(prefix="needs-you-hermes-")
        os.environ["NEEDS_YOU_URL"] = SINK.url
        os.environ["NEEDS_YOU_TOKEN"] = "nyt_hermes_test"
        os.environ["NEEDS_YOU_REPORTER"] = REPORTER

    @classmethod
    def tearDownClass(cls):
        SINK.stop()
        shutil.rmtree(cls.state_root, ignore_errors=True)

    def setUp(self):
        SINK.received.clear()
        os.environ["NEEDS_YOU_STATE_DIR"] = os.path.join(self.state_root, self.id().rsplit(".", 1)[-1])
        self.ctx = FakeContext()
        self.plugin = needs_you.register(self.ctx)
        self.hook = self.ctx.hooks

    def reports(self, n):
        """Waits for `n` reports (and a little longer, for extras); in seq order."""
        self.assertTrue(self.plugin.reporter.flush(10))
        end = time.time() + 5
        while len(SINK.received) < n and time.time() < end:
            time.sleep(0.02)
        time.sleep(0.3)
        return [r["body"] for r in sorted(received(), key=lambda r: r["body"]["seq"])]

    def clarify(self, args):
        self.assertIsNone(self.hook["pre_tool_call"](tool_name="clarify", args=args, session_id=SESSION,
                                                     tool_call_id="call_1", **TELEMETRY))

    def clarified(self, answer="OAuth (GitHub)"):
        result = json.dumps({"question": "q", "choices_offered": [], "user_response": answer})
        self.assertIsNone(self.hook["post_tool_call"](tool_name="clarify", args={}, result=result, session_id=SESSION,
                                                      status="ok", duration_ms=5321, **TELEMETRY))

    def test_registers_every_hook(self):
        self.assertEqual(sorted(self.hook), sorted(needs_you.HOOKS))

    def test_a_clarify_dialog_opened_and_answered(self):
        self.clarify({"question": "Which auth strategy should I implement?",
                      "choices": ["OAuth (GitHub)", {"label": "Email + password"}, ""]})
        self.clarified()
        got = self.reports(2)
        self.assertEqual([r["action"] for r in got], ["open", "close"])
        self.assertEqual(got[0]["kind"], "dialog")
        self.assertEqual(got[0]["cli"], "hermes")
        self.assertEqual(got[0]["session"], SESSION)
        self.assertEqual(got[0]["text"], "Which auth strategy should I implement?")
        self.assertEqual(got[0]["options"], [{"label": "OAuth (GitHub)"}, {"label": "Email + password"}])
        self.assertEqual(got[1]["reason"], "answered")
        self.assertEqual(received()[0]["auth"], "Bearer nyt_hermes_test")

    def test_the_batch_clarify_form(self):
        self.clarify({"question": "Setup", "questions": [
            {"id": "auth", "question": "Which auth?", "choices": ["OAuth", "Password"]},
            {"question": "Deadline?"}]})
        got = self.reports(1)
        self.assertEqual(got[0]["text"], "Which auth?\nDeadline?")
        self.assertEqual([o["label"] for o in got[0]["options"]], ["auth: OAuth", "auth: Password"])

    def test_a_permission_granted_then_one_denied(self):
        for choice in ("once", "deny"):
            self.hook["pre_approval_request"](command="rm -rf build/", description="recursive delete",
                                              pattern_key="rm_rf", session_key=SESSION, surface="cli", **TELEMETRY)
            self.hook["post_approval_response"](command="rm -rf build/", session_key=SESSION, surface="cli",
                                                choice=choice, **TELEMETRY)
        got = self.reports(4)
        self.assertEqual([r["action"] for r in got], ["open", "close", "open", "close"])
        self.assertEqual(got[0]["kind"], "permission")
        self.assertEqual(got[0]["text"], "recursive delete\n$ rm -rf build/")

    def test_smart_approvals_ask_nobody(self):
        self.hook["pre_approval_request"](command="ls", session_key=SESSION, surface="smart", **TELEMETRY)
        self.hook["post_approval_response"](command="ls", session_key=SESSION, surface="smart",
                                            choice="smart_approve", decided_by="aux_llm", **TELEMETRY)
        self.assertEqual(self.reports(0), [])

    def test_the_per_turn_session_end_does_not_withdraw_the_question(self):
        self.hook["pre_llm_call"](session_id=SESSION, user_message="deploy?", conversation_history=[],
                                  is_first_turn=False, model="m", platform="cli", **TELEMETRY)
        self.hook["post_llm_call"](session_id=SESSION, user_message="deploy?", conversation_history=[],
                                   assistant_response="Ready. これでデプロイしますか？", model="m", platform="cli", **TELEMETRY)
        self.hook["on_session_end"](session_id=SESSION, completed=True, interrupted=False, model="m",
                                    platform="cli", **TELEMETRY)
        got = self.reports(1)
        self.assertEqual(len(got), 1, "the turn's own session end closed nothing")
        self.assertEqual((got[0]["action"], got[0]["kind"]), ("open", "reply"))
        self.hook["pre_llm_call"](session_id=SESSION, user_message="yes", **TELEMETRY)
        got = self.reports(2)
        self.assertEqual((got[1]["action"], got[1]["reason"]), ("close", "prompt_submitted"))

    def test_an_interrupted_session_end_closes(self):
        self.clarify({"question": "Proceed?"})
        self.hook["on_session_end"](session_id=SESSION, completed=False, interrupted=True, reason="shutdown")
        got = self.reports(2)
        self.assertEqual([(r["action"], r.get("reason")) for r in got], [("open", None), ("close", "interrupted")])

    def test_gateway_mode_reports_every_hook_under_the_conversation_key(self):
        # In the gateway, Hermes gives approval hooks the conversation's key and
        # other hooks the transcript's id; the key is in the turn's session
        # context (gateway.session_context), which this stands for.
        key = "agent:main:telegram:dm:4242"
        gateway = types.ModuleType("gateway")
        context = types.ModuleType("gateway.session_context")
        context.get_session_env = lambda name, default="": key if name == "HERMES_SESSION_KEY" else default
        gateway.session_context = context
        with mock.patch.dict(sys.modules, {"gateway": gateway, "gateway.session_context": context}):
            self.hook["pre_llm_call"](session_id=SESSION, user_message="deploy", platform="telegram", **TELEMETRY)
            self.hook["pre_approval_request"](command="kubectl apply -f prod.yaml", description="deploy",
                                              session_key=key, surface="gateway", **TELEMETRY)
            self.hook["post_approval_response"](command="kubectl apply -f prod.yaml", session_key=key,
                                                surface="gateway", choice="once", **TELEMETRY)
            self.hook["post_llm_call"](session_id=SESSION, assistant_response="Deployed. Tag the release?",
                                       platform="telegram", **TELEMETRY)
            got = self.reports(3)
        self.assertEqual([(r["action"], r.get("kind") or r.get("reason")) for r in got],
                         [("open", "permission"), ("close", "answered"), ("open", "reply")])
        self.assertEqual({r["session"] for r in got}, {key}, "one conversation, one session")
        # The gateway's /new finalizes the old session by its id only, outside the turn.
        self.hook["on_session_finalize"](session_id=SESSION, platform="telegram", reason="new_session")
        got = self.reports(4)
        self.assertEqual((got[3]["action"], got[3]["reason"], got[3]["session"]), ("close", "session_end", key))

    def test_quitting_or_starting_anew_closes_a_reply_left_open(self):
        for reason in ("shutdown", "session_boundary"):
            self.hook["post_llm_call"](session_id=SESSION, assistant_response="Shall I push?", **TELEMETRY)
            self.hook["on_session_finalize"](session_id=SESSION, platform="cli", reason=reason)
        got = self.reports(4)
        self.assertEqual([(r["action"], r.get("kind") or r.get("reason")) for r in got],
                         [("open", "reply"), ("close", "session_end")] * 2)

    def test_a_cancelled_clarify_and_a_timed_out_approval_are_not_answers(self):
        self.clarify({"question": "Proceed?"})
        self.clarified("The user cancelled. Use your best judgement to proceed.")
        self.hook["pre_approval_request"](command="rm -rf /", session_key=SESSION, surface="gateway", **TELEMETRY)
        self.hook["post_approval_response"](command="rm -rf /", session_key=SESSION, surface="gateway",
                                            choice="timeout", **TELEMETRY)
        got = self.reports(4)
        self.assertEqual([(r["action"], r.get("reason")) for r in got],
                         [("open", None), ("close", "interrupted"), ("open", None), ("close", "interrupted")])

    def test_a_reply_without_a_question_sends_nothing(self):
        self.hook["post_llm_call"](session_id=SESSION, assistant_response="Deployed.", **TELEMETRY)
        self.assertEqual(self.reports(0), [])

    def test_a_burst_from_several_threads_keeps_the_order_of_the_calls(self):
        lock = threading.Lock()
        order = []

        def worker(i):
            with lock:  # Hermes's order is the order of the calls
                order.append(i)
                self.clarify({"question": f"Q{i}?"})
                self.clarified()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = self.reports(16)
        self.assertEqual(len(got), 16)
        expected = []
        for i in order:
            expected += [f"open Q{i}?", "close"]
        self.assertEqual([f"open {r['text']}" if r["action"] == "open" else "close" for r in got], expected)

    def test_reports_queued_at_exit_still_go_out(self):
        script = (
            "import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('hermes_plugins.needs_you', {str(PLUGIN_DIR / '__init__.py')!r},"
            f" submodule_search_locations=[{str(PLUGIN_DIR)!r}])\n"
            "m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m; spec.loader.exec_module(m)\n"
            "class Ctx:\n    hooks = {}\n    def register_hook(self, n, f): self.hooks[n] = f\n"
            "ctx = Ctx(); m.register(ctx)\n"
            f"ctx.hooks['pre_tool_call'](tool_name='clarify', args={{'question': 'Exit?'}}, session_id={SESSION!r})\n"
            f"ctx.hooks['on_session_end'](session_id={SESSION!r}, interrupted=True, reason='shutdown')\n"
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=20)
        got = self.reports(2)
        self.assertEqual([(r["action"], r.get("reason")) for r in got], [("open", None), ("close", "interrupted")])

    def test_missing_fields_and_garbage_never_raise(self):
        os.environ["NEEDS_YOU_REPORTER"] = "/nonexistent/report-prompt"
        try:
            ctx = FakeContext()
            plugin = needs_you.register(ctx)
            for name, callback in ctx.hooks.items():
                self.assertIsNone(callback(), name)
                self.assertIsNone(callback(tool_name="clarify", args="not a dict", session_id=None), name)
                self.assertIsNone(callback(tool_name="clarify", args={"questions": [None, 3]}, session_id=SESSION,
                                           assistant_response=None, surface="cli", session_key=SESSION,
                                           interrupted=True), name)
            self.assertTrue(plugin.reporter.flush(10))
        finally:
            os.environ["NEEDS_YOU_REPORTER"] = REPORTER
        time.sleep(0.2)
        self.assertEqual(received(), [])


if __name__ == "__main__":
    unittest.main()
