#!/usr/bin/env python3
"""A stand-in agent for the Show terminal tests, run in a real tmux pane.

It prints what a hostile or merely colourful agent might (colours, bold,
HTML, a script tag, a hyperlink and a title sequence), then reports a
permission dialog through the real reporter as Claude Code's Notification
hook would, and waits. A file the test drops in its folder drives it:

    say    its text is printed (the view must follow it)
    shell  it becomes an interactive shell (the view must refuse)

    screen-agent.py DIR   (REPORTER: the report-prompt binary; AGENT_SESSION;
                           AGENT_BUSY_MS: also print a build line this often)
"""
import json
import os
import subprocess
import sys
import time

folder = sys.argv[1]
session = os.environ.get("AGENT_SESSION", "screen")


def out(text):
    sys.stdout.write(text)
    sys.stdout.flush()


out("\x1b]0;owned title\x07")
out("\x1b[1;31mError:\x1b[0m build failed in \x1b[32msrc/main.rs\x1b[0m\r\n")
out("<b>bold?</b> <script>window.__owned = 1</script> <img src=x onerror=\"window.__owned=2\">\r\n")
out("\x1b]8;;https://evil.example/\x1b\\a hyperlink\x1b]8;;\x1b\\ and \x1b[38;5;208morange\x1b[0m\r\n")
out("\x1b[7mreversed\x1b[0m\r\n")
out("Allow rm -rf build/ ? (y/n) ")

event = {"session_id": session, "cwd": folder, "hook_event_name": "Notification",
         "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"}
subprocess.run([os.environ["REPORTER"], "--cli", "claude-code"], input=json.dumps(event).encode(), check=False)
open(os.path.join(folder, "opened"), "w").close()

busy = float(os.environ.get("AGENT_BUSY_MS", "0")) / 1000
built = 0
next_line = time.monotonic()
while True:
    if busy and time.monotonic() >= next_line:
        built += 1
        out(f"\r\n\x1b[32m   Compiling\x1b[0m crate-{built} v0.1.{built} (/src/crate-{built})")
        next_line += busy
    say = os.path.join(folder, "say")
    if os.path.exists(say):
        with open(say) as f:
            text = f.read()
        os.remove(say)
        out("\r\n" + text)
    if os.path.exists(os.path.join(folder, "shell")):
        os.execvp("bash", ["bash", "--norc", "-i"])
    time.sleep(0.02)
