#!/usr/bin/env bash
# Runs needs-you locally: installs what is missing (scripts/setup.sh), applies
# the D1 migrations to the local database, and starts `wrangler dev` (which
# builds the Worker) on 127.0.0.1:8787. Once it answers, prints the page's
# address with a pairing link for a browser and one for this machine's
# command line (one owner for both), an owner token, a task credential and a
# curl line that opens a question. Ctrl-C stops it.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"

PORT="${PORT:-8787}"
URL="http://127.0.0.1:$PORT"
DEMO=.wrangler/needs-you-dev.env   # the demo owner and task, reused across runs

bash scripts/setup.sh

# The admin secret for local runs; wrangler reads .dev.vars (git-ignored).
if [ ! -f .dev.vars ]; then
  umask 077
  printf 'ADMIN_TOKEN=%s\n' "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" > .dev.vars
fi
# Local Web Push keys, made once (a deploy sets its own secrets: README).
if ! grep -q '^VAPID_PRIVATE_KEY=' .dev.vars; then
  printf 'VAPID_PRIVATE_KEY=%s\nVAPID_SUBJECT=mailto:dev@localhost.invalid\n' \
    "$(node scripts/vapid-keys.mjs --private)" >> .dev.vars
fi
ADMIN_TOKEN=$(sed -n 's/^ADMIN_TOKEN=//p' .dev.vars)

wrangler d1 migrations apply DB --local < /dev/null > /dev/null

wrangler dev --ip 127.0.0.1 --port "$PORT" --show-interactive-dev-session=false &
WRANGLER=$!
trap 'kill $WRANGLER 2>/dev/null; wait $WRANGLER 2>/dev/null' EXIT INT TERM

for _ in $(seq 1 600); do
  curl -fs "$URL/v1/health" > /dev/null 2>&1 && break
  kill -0 $WRANGLER 2>/dev/null || { echo "wrangler dev stopped" >&2; exit 1; }
  sleep 0.5
done
curl -fs "$URL/v1/health" > /dev/null || { echo "the Worker did not answer on $URL" >&2; exit 1; }

json_field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{process.stdout.write(String(JSON.parse(s)[process.argv[1]]??""))})' "$1"; }

# Reuse the demo task while its credential still works; else make new ones.
OWNER_TOKEN="" TASK_CREDENTIAL=""
[ -f "$DEMO" ] && source "$DEMO"
if [ -z "$TASK_CREDENTIAL" ] || ! curl -fs -H "authorization: Bearer $TASK_CREDENTIAL" "$URL/v1/task" > /dev/null; then
  OWNER_TOKEN=$(curl -fs -H "authorization: Bearer $ADMIN_TOKEN" -d '{"name":"dev"}' "$URL/v1/owners" | json_field token)
  TASK_CREDENTIAL=$(curl -fs -H "authorization: Bearer $OWNER_TOKEN" -d '{"name":"dev task"}' "$URL/v1/tasks" | json_field credential)
  umask 077
  printf 'OWNER_TOKEN=%s\nTASK_CREDENTIAL=%s\n' "$OWNER_TOKEN" "$TASK_CREDENTIAL" > "$DEMO"
fi

# Two pairings of the one demo owner: the browser's, and this machine's
# command line, so that the page, `needs-you ls` and `needs-you run` share one
# list.
PAIR_URL=$(curl -fs -X POST -H "authorization: Bearer $OWNER_TOKEN" "$URL/v1/pairings" | json_field url)
CLI_PAIR_URL=$(curl -fs -X POST -H "authorization: Bearer $OWNER_TOKEN" "$URL/v1/pairings" | json_field url)

cat <<MSG

needs-you is running on $URL  (admin token: .dev.vars; these: $DEMO)

The page: open this pairing link in a browser (it works once, for 10 minutes):
  $PAIR_URL

The command line (cargo install --path crates/needs-you), on this machine, same owner:
  needs-you login '$CLI_PAIR_URL' --allow answer,tasks
  needs-you run -- claude          # or any command; needs-you ls shows what needs you

  export NEEDS_YOU_URL=$URL
  export NEEDS_YOU_TOKEN=$TASK_CREDENTIAL     # the task credential, for report-prompt
  export OWNER_TOKEN=$OWNER_TOKEN

Open a question, then read the list:
  curl -s -H "authorization: Bearer \$NEEDS_YOU_TOKEN" -d '{"action":"open","kind":"dialog","cli":"claude-code","session":"demo","seq":'\$(date +%s%6N)',"text":"Which auth strategy?","options":[{"label":"OAuth"},{"label":"Email"}]}' $URL/v1/reports
  curl -s -H "authorization: Bearer \$OWNER_TOKEN" $URL/v1/needs-you

MSG
wait $WRANGLER
