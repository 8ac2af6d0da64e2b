#!/usr/bin/env bash
# A stand-in agent for the command line's tests: it reports through the real
# reporter as Claude Code's hooks would (a question dialog opens), notes what
# it got, then waits for the test and exits with the code it was given.
#
#   agent.sh DIR EXIT_CODE      (AGENT_TRAPS="INT TERM": note those signals and exit 128+n)
dir=$1
code=${2:-0}
for sig in ${AGENT_TRAPS:-}; do
  case $sig in
    INT) trap 'echo INT > "$dir/signal"; exit 130' INT ;;
    TERM) trap 'echo TERM > "$dir/signal"; exit 143' TERM ;;
  esac
done
# Which needs-you variables it was given (names only), and its process id.
env | sed -n 's/^\(NEEDS_YOU_[A-Z_]*\)=.*/\1/p' | sort > "$dir/env-names"
printf '%s' "${NEEDS_YOU_REPORTER:-}" > "$dir/reporter"
echo $$ > "$dir/agent-pid"
"$REPORTER" --cli claude-code < "$dir/open.json"
touch "$dir/opened"
while [ ! -e "$dir/go" ]; do sleep 0.05; done
exit "$code"
