# Sourced by the benchmark scripts: a scratch folder, background servers that
# stop with the script, and needs-you under `wrangler dev` with an owner and a
# task ready.
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
mkdir -p bench/results
WORK=$(mktemp -d)
# Each background server starts in a session of its own (`setsid`), so that
# stopping it stops what it started too (wrangler's workerd), also when the
# script fails half-way: the next run finds its ports free.
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# wait_up URL: until GET URL/v1/health answers (the floor answers anything).
wait_up() {
  for _ in $(seq 1 600); do curl -fs -o /dev/null "$1/v1/health" && return; sleep 0.5; done
  echo "$1 did not come up" >&2
  exit 1
}

field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s)[process.argv[1]]))' "$1"; }

# start_needs_you PORT: migrates a fresh local D1, starts wrangler dev, and sets
# URL, OWNER (an owner token) and TASK (a task credential).
start_needs_you() {
  local admin=bench-admin-$RANDOM$RANDOM
  URL=http://127.0.0.1:$1
  wrangler d1 migrations apply DB --local --persist-to "$WORK/ours" < /dev/null > /dev/null
  setsid wrangler dev --ip 127.0.0.1 --port "$1" --inspector-port "$((9200 + $1 % 100))" --persist-to "$WORK/ours" --var "ADMIN_TOKEN:$admin" \
    --show-interactive-dev-session=false > "$WORK/ours.log" 2>&1 &
  PIDS+=($!)
  wait_up "$URL"
  OWNER=$(curl -fs -H "authorization: Bearer $admin" -d '{"name":"bench"}' "$URL/v1/owners" | field token)
  TASK=$(curl -fs -H "authorization: Bearer $OWNER" -d '{"name":"bench"}' "$URL/v1/tasks" | field credential)
}

# many_tasks N: sets TASKS to N more task credentials of OWNER, comma-separated
# (a load spread over tasks stays under each one's rate of reports).
many_tasks() {
  TASKS=$TASK
  for _ in $(seq 2 "$1"); do
    TASKS=$TASKS,$(curl -fs -H "authorization: Bearer $OWNER" -d '{"name":"bench"}' "$URL/v1/tasks" | field credential)
  done
}
