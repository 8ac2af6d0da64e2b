#!/usr/bin/env bash
# Installs what the live suite (tests/live/) needs, once per machine, at pinned
# versions, skipping what is already there: tmux from Debian's packages, and the
# agent CLIs it drives, from npm, into ~/.cache/needs-you/live (not the repo).
# Claude Code's package asks for Node 22 in its `engines`; its native binary
# runs the same on Node 20's machines, so the exact pin is installed as it is.
set -euo pipefail
source "$(dirname "$0")/env.sh"

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
OPENCODE_VERSION=1.18.33
HERMES_VERSION=0.19.0
COPILOT_VERSION=1.0.102
GEMINI_VERSION=0.61.0
LIVE=${NEEDS_YOU_LIVE_DIR:-$HOME/.cache/needs-you/live}
say() { printf 'setup-live: %s\n' "$*" >&2; }

if ! command -v tmux > /dev/null; then
  say "installing tmux"
  apt-get install -y -qq tmux > /dev/null 2>&1 || { apt-get update -qq > /dev/null && apt-get install -y -qq tmux > /dev/null; }
fi

# npm_version PACKAGE: the installed version in the live folder, or nothing.
npm_version() {
  node -e 'try { console.log(require(process.argv[1] + "/package.json").version) } catch {}' \
    "$LIVE/npm/node_modules/$1"
}
mkdir -p "$LIVE/npm"
if [ "$(npm_version @anthropic-ai/claude-code)" != "$CLAUDE_CODE_VERSION" ]; then
  say "installing Claude Code $CLAUDE_CODE_VERSION"
  [ -f "$LIVE/npm/package.json" ] || echo '{"private": true}' > "$LIVE/npm/package.json"
  (cd "$LIVE/npm" && npm install --no-audit --no-fund --loglevel=error --engine-strict=false \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" > /dev/null)
fi
if [ "$(npm_version @openai/codex)" != "$CODEX_VERSION" ]; then
  say "installing Codex $CODEX_VERSION"
  (cd "$LIVE/npm" && npm install --no-audit --no-fund --loglevel=error "@openai/codex@$CODEX_VERSION" > /dev/null)
fi
if [ "$(npm_version opencode-ai)" != "$OPENCODE_VERSION" ]; then
  say "installing OpenCode $OPENCODE_VERSION"
  (cd "$LIVE/npm" && npm install --no-audit --no-fund --loglevel=error "opencode-ai@$OPENCODE_VERSION" > /dev/null)
fi
if [ "$(npm_version @github/copilot)" != "$COPILOT_VERSION" ]; then
  say "installing GitHub Copilot CLI $COPILOT_VERSION"
  (cd "$LIVE/npm" && npm install --no-audit --no-fund --loglevel=error "@github/copilot@$COPILOT_VERSION" > /dev/null)
fi
if [ "$(npm_version @google/gemini-cli)" != "$GEMINI_VERSION" ]; then
  say "installing Gemini CLI $GEMINI_VERSION"
  (cd "$LIVE/npm" && npm install --no-audit --no-fund --loglevel=error "@google/gemini-cli@$GEMINI_VERSION" > /dev/null)
fi
# OpenCode installs @opencode-ai/plugin into its config folder at start, and
# hangs offline doing so unless it is there: keep a copy to lay in place.
plugin_version=$(node -e 'try { console.log(require(process.argv[1]).version) } catch {}' \
  "$LIVE/opencode-plugin/node_modules/@opencode-ai/plugin/package.json")
if [ "$plugin_version" != "$OPENCODE_VERSION" ]; then
  say "installing @opencode-ai/plugin $OPENCODE_VERSION"
  rm -rf "$LIVE/opencode-plugin" && mkdir -p "$LIVE/opencode-plugin"
  (cd "$LIVE/opencode-plugin" && npm install --no-audit --no-fund --loglevel=error \
    "@opencode-ai/plugin@$OPENCODE_VERSION" > /dev/null)
fi
# Hermes from PyPI, in a virtualenv of its own.
if [ "$("$LIVE/hermes-venv/bin/python" -c 'import importlib.metadata as m; print(m.version("hermes-agent"))' 2>/dev/null)" != "$HERMES_VERSION" ]; then
  say "installing Hermes $HERMES_VERSION"
  python3 -m venv "$LIVE/hermes-venv"
  "$LIVE/hermes-venv/bin/pip" install --quiet --disable-pip-version-check "hermes-agent==$HERMES_VERSION"
fi
