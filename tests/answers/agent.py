#!/usr/bin/env python3
"""A stand-in agent for the answer tests, run in a real tmux pane.

It reports through the real reporter as Claude Code's hooks would: its turn
ends with a question (a Stop whose reply ends with "?"), which opens a reply
question, and it draws Claude Code's empty prompt (the sign between two
rules), which the relay reads before it types. Then it reads its terminal raw and records every batch of
keystrokes with its time in keys.jsonl. On Enter, the person has answered:
its next hook (UserPromptSubmit) closes the question, and it exits.

    agent.py DIR        (REPORTER: the report-prompt binary; AGENT_SESSION;
                         AGENT_EXIT_AFTER_OPEN: leave the question open and exit;
                         AGENT_ROUNDS: ask again after each answer, this many rounds)
"""
import json
import os
import subprocess
import sys
import termios
import time
import tty

folder = sys.argv[1]
session = os.environ.get("AGENT_SESSION", "answers")


def hook(event):
    event = {"session_id": session, "cwd": folder, **event}
    subprocess.run([os.environ["REPORTER"], "--cli", "claude-code"], input=json.dumps(event).encode(), check=False)


def draw_empty_prompt():
    rule = "\u2500" * 40
    sys.stdout.write(f"\r\n{rule}\r\n\u276f \r\n{rule}\r\n")
    sys.stdout.flush()


fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setraw(fd)
hook({"hook_event_name": "Stop", "stop_hook_active": False,
      "last_assistant_message": os.environ.get("AGENT_ASKS", "The tests pass. Shall I also update the docs?")})
draw_empty_prompt()
open(os.path.join(folder, "opened"), "w").close()
if os.environ.get("AGENT_EXIT_AFTER_OPEN"):
    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    sys.exit(0)
line = b""
asked = 0
with open(os.path.join(folder, "keys.jsonl"), "a") as log:
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        log.write(json.dumps({"t": time.time(), "data": chunk.decode("utf-8", "replace")}) + "\n")
        log.flush()
        if b"\r" in chunk:
            line += chunk.split(b"\r")[0]
            hook({"hook_event_name": "UserPromptSubmit", "prompt": line.decode("utf-8", "replace")})
            with open(os.path.join(folder, "answered"), "w") as f:
                f.write(line.decode("utf-8", "replace"))
            asked += 1
            if asked >= int(os.environ.get("AGENT_ROUNDS", "1")):
                break
            # The next round ends with another question (the benchmark's loop).
            line = b""
            hook({"hook_event_name": "Stop", "stop_hook_active": False,
                  "last_assistant_message": f"Round {asked} done. Shall I go on?"})
            draw_empty_prompt()
            continue
        line += chunk
termios.tcsetattr(fd, termios.TCSADRAIN, saved)
if os.environ.get("AGENT_THEN_SHELL"):
    os.execvp("bash", ["bash", "--norc", "-i"])
time.sleep(float(os.environ.get("AGENT_LINGER_S", "0")))
