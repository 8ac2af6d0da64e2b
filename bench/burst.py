#!/usr/bin/env python3
"""A burst of hooks: N reporter invocations started at once (N/2 sessions
open a question, then the same N/2 close it, N/2 at a time), against a slow
local server. For each binary given, side by side: how long each hook takes to
exit (median, p95, max), how long until the server has every report, and the
sender processes left. Prints JSON.

    python3 bench/burst.py NAME=BINARY ... [--n 200] [--delay-ms 200]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from sink import start_sink


def stop_event(session, question):
    text = "Shall I go on?" if question else "Done."
    return json.dumps({"session_id": session, "hook_event_name": "Stop", "last_assistant_message": text}).encode()


def wave(binary, state, url, sessions, question):
    """Starts one hook per session at once; returns each hook's time to exit (s)."""
    env = {"PATH": os.environ["PATH"], "NEEDS_YOU_URL": url, "NEEDS_YOU_TOKEN": "nyt_bench"}
    times = [0.0] * len(sessions)
    procs = []
    for s in sessions:
        start = time.perf_counter()
        p = subprocess.Popen([binary, "--cli", "claude-code", "--state-dir", state], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append((start, p, s))

    def finish(i, start, p, s):
        p.communicate(stop_event(s, question))
        times[i] = time.perf_counter() - start

    threads = [threading.Thread(target=finish, args=(i, *t)) for i, t in enumerate(procs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


def senders(state):
    out = subprocess.run(["pgrep", "-f", f"__send --state-dir {state}"], check=False, capture_output=True, text=True).stdout
    return len(out.split())


def run(name, binary, n, delay_ms):
    sink = start_sink(delay_ms=delay_ms)
    state = tempfile.mkdtemp(prefix="needs-you-burst-")
    try:
        sessions = [f"burst-{i}" for i in range(n // 2)]
        began = time.perf_counter()
        times = wave(binary, state, sink.url, sessions, True) + wave(binary, state, sink.url, sessions, False)
        hooks_done = time.perf_counter() - began
        peak_senders = senders(state)
        end = time.time() + 120
        while len(sink.received) < n and time.time() < end:
            time.sleep(0.01)
        delivered = time.perf_counter() - began
        times.sort()
        return {"name": name, "hooks": n, "server_delay_ms": delay_ms,
                "exit_ms_p50": round(statistics.median(times) * 1000, 1),
                "exit_ms_p95": round(times[int(0.95 * len(times)) - 1] * 1000, 1),
                "exit_ms_max": round(times[-1] * 1000, 1),
                "all_hooks_exited_s": round(hooks_done, 2),
                "all_reports_received_s": round(delivered, 2),
                "reports_received": len(sink.received),
                "senders_right_after": peak_senders}
    finally:
        sink.stop()
        time.sleep(0.5)
        shutil.rmtree(state, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binaries", nargs="+", help="NAME=PATH")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--delay-ms", type=int, default=200)
    args = parser.parse_args()
    out = [run(*b.split("=", 1), args.n, args.delay_ms) for b in args.binaries]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
