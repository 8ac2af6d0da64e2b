"""The wasm's size, feature by feature: each feature's entry points made to
return at once, so that link-time optimisation drops the code only they reach,
and the Worker built again. What a feature costs is the baseline minus that build.

    python3 bench/size_profile.py            # every feature, one build each
    python3 bench/size_profile.py "Web Push"  # the baseline and the features named

Builds a clean copy of HEAD in a temporary git worktree (sharing this tree's
cargo target folder and node_modules, so only the Worker crate is rebuilt: about
45 s a build), and writes bench/results/size-profile.json. An entry point that
has moved or been renamed fails the run by name: the table below is then out of date.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What a knocked-out entry point returns instead of its work.
NOT_FOUND = 'return Err(crate::json::ApiError::new(404, "gone", ""));'
FAILED = "return Err(worker::Error::RustError(String::new()));"


def routes(path, names):
    return [(path, f"pub async fn {n}(", NOT_FOUND) for n in names]


FEATURES = {
    "the report path (POST /v1/reports: parse, card, batch)": routes(
        "src/routes/reports.rs", ["post"]
    ),
    "answers from afar, Show terminal, lasting rules (Relay object and their routes)": [
        ("src/relay.rs", "async fn fetch(", FAILED),
        ("src/relay.rs", "async fn websocket_message(", FAILED),
        ("src/relay.rs", "async fn websocket_close(", FAILED),
        ("src/relay.rs", "pub async fn deliver(", "return;"),
        ("src/relay.rs", "pub async fn revoke(", "return;"),
        ("src/relay.rs", "pub async fn revoked(", "return;"),
        *routes("src/routes/answers.rs", ["post", "get", "take_back"]),
        *routes("src/routes/screens.rs", ["get"]),
        *routes("src/routes/relay.rs", ["connect"]),
        *routes("src/routes/rules.rs", ["list", "revoke"]),
    ],
    "the live list (Live object, /v1/live, the change fan-out)": [
        ("src/live.rs", "async fn fetch(", FAILED),
        ("src/live.rs", "async fn alarm(", FAILED),
        ("src/live.rs", "async fn websocket_message(", FAILED),
        ("src/live.rs", "async fn websocket_close(", FAILED),
        ("src/live.rs", "pub async fn ticket(", "return Ok(None);"),
        ("src/live.rs", "pub async fn connect(", "return Ok(None);"),
        ("src/live.rs", "pub async fn changed(", "return;"),
        ("src/live.rs", "pub async fn changed_of_task(", "return;"),
        ("src/live.rs", "pub async fn signed_out(", "return;"),
        *routes("src/routes/live.rs", ["ticket", "connect"]),
    ],
    # The objects' own handlers only, their routes and the calls into them
    # kept: what moving the two objects into a Worker of their own would
    # take out of this one.
    "the Relay and Live objects alone (a Worker of their own)": [
        ("src/relay.rs", "async fn fetch(", FAILED),
        ("src/relay.rs", "async fn websocket_message(", FAILED),
        ("src/relay.rs", "async fn websocket_close(", FAILED),
        ("src/live.rs", "async fn fetch(", FAILED),
        ("src/live.rs", "async fn alarm(", FAILED),
        ("src/live.rs", "async fn websocket_message(", FAILED),
        ("src/live.rs", "async fn websocket_close(", FAILED),
    ],
    "Web Push (subscriptions, VAPID, RFC 8291)": [
        ("src/channels/webpush.rs", "pub async fn seal(", "return Err(String::new());"),
        ("src/routes/push.rs", "pub async fn key(", NOT_FOUND),
        *routes("src/routes/push.rs", ["subscribe"]),
    ],
    "ntfy and the webhook": [
        ("src/channels/ntfy.rs", "pub fn from_config(", "return Err(String::new());"),
        ("src/channels/webhook.rs", "pub fn from_config(", "return Err(String::new());"),
    ],
    "pairing and devices": routes(
        "src/routes/devices.rs", ["create", "check", "redeem", "list", "revoke"]
    ),
    "tasks (create, list, revoke, mute, whoami)": routes(
        "src/routes/tasks.rs", ["create", "list", "revoke", "mute", "whoami"]
    ),
    "the list's routes (GET needs-you, deliveries, dismiss)": routes(
        "src/routes/needs_you.rs", ["list", "deliveries", "dismiss"]
    ),
    "the channels' routes (put, list, delete, test)": routes(
        "src/routes/channels.rs", ["put", "list", "delete", "test"]
    ),
}


def knock_out(tree, edits):
    """Puts `ret` first in the body of each function named."""
    for path, signature, ret in edits:
        file = os.path.join(tree, path)
        with open(file) as f:
            text = f.read()
        at = text.find(signature)
        if at < 0:
            sys.exit(f"size_profile: {path} has no `{signature}`: update FEATURES")
        body = text.index(" {\n", at) + 3
        with open(file, "w") as f:
            f.write(text[:body] + f"        {ret}\n" + text[body:])


def build(tree):
    env = dict(
        os.environ,
        NEEDS_YOU_REBUILD="1",
        CARGO_TARGET_DIR=os.path.join(ROOT, "target"),
    )
    run = subprocess.run(
        ["bash", "-c", "source scripts/env.sh && bash scripts/build.sh"],
        cwd=tree, env=env, capture_output=True, text=True, check=False,
    )
    if run.returncode:
        sys.exit(f"size_profile: the build failed:\n{run.stderr[-3000:]}")
    with open(os.path.join(tree, "build/index_bg.wasm"), "rb") as f:
        wasm = f.read()
    return len(wasm), len(gzip.compress(wasm, compresslevel=9))


def main(wanted):
    names = [n for n in FEATURES if not wanted or any(w in n for w in wanted)]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        subprocess.run(["git", "worktree", "add", "-q", "--detach", tree, "HEAD"], cwd=ROOT, check=True)
        try:
            os.symlink(os.path.join(ROOT, "node_modules"), os.path.join(tree, "node_modules"))
            # scripts/build.sh reads the card builder's wasm from ./target.
            os.symlink(os.path.join(ROOT, "target"), os.path.join(tree, "target"))
            for name in ["baseline", *names]:
                subprocess.run(["git", "checkout", "-q", "--", "."], cwd=tree, check=True)
                if name != "baseline":
                    knock_out(tree, FEATURES[name])
                out[name] = build(tree)
                print(name, *out[name], flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=ROOT, check=False)
    base_gz = out["baseline"][1]
    print("\n| without | wasm | gzipped | the feature costs (gzipped) |\n| --- | ---: | ---: | ---: |")
    for name, (raw, gz) in out.items():
        print(f"| {name} | {raw:,} | {gz:,} | {base_gz - gz:,} |")
    os.makedirs(os.path.join(ROOT, "bench/results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench/results/size-profile.json"), "w") as f:
        json.dump({n: {"wasm_bytes": r, "wasm_gzip_bytes": g} for n, (r, g) in out.items()}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
