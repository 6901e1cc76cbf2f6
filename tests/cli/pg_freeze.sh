#!/usr/bin/env bash
# Usage: pg_freeze.sh ONEJOB
# Runs `onejob load` on PostgreSQL for 12 s and freezes the whole server in the middle of it
# (SIGSTOP to the postmaster and every backend, for 6 s, then SIGCONT): a host that stops
# answering without closing anything. With --pg-timeouts 2s,1s,2s a call fails within
# connect + reply = 4 s, so the run passes when every answer came within 5 s (503s included,
# --max-answer), the workers and the reconciler went on after the thaw and settled every job
# (nothing lost, nothing stranded: load's own verdict), at least one 503 was answered during
# the freeze, and no 5xx body carries the store's internals.
# Run under .ci/with-postgres (it needs ONEJOB_PG_DIR), and alone: it stops the whole server.
set -euo pipefail
onejob=$1
: "${ONEJOB_PG_DIR:?run under .ci/with-postgres}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$(mktemp)
bodies=$(mktemp)
load=
frozen=()
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  if ((${#frozen[@]} > 0)); then kill -CONT "${frozen[@]}" 2>/dev/null || true; fi
  if [[ -n $load ]]; then kill "$load" 2>/dev/null || true; fi
  rm -f "$out" "$bodies"
}
trap cleanup EXIT

"$onejob" load --store "postgres=$ONEJOB_PG_URL" --seconds 12 --drain 60 --pg-timeouts 2s,1s,2s \
  --max-answer 5 --bodies "$bodies" >"$out" 2>&1 &
load=$!
sleep 3
postmaster=$(head -n 1 "$ONEJOB_PG_DIR/data/postmaster.pid")
mapfile -t frozen < <(echo "$postmaster"; pgrep -P "$postmaster")
kill -STOP "${frozen[@]}"
echo "pg_freeze: server frozen (${#frozen[@]} processes) for 6 s" >&2
sleep 6
kill -CONT "${frozen[@]}"
frozen=()
echo "pg_freeze: server thawed" >&2
status=0
wait "$load" || status=$?
load=
cat "$out"
bash "$root/tests/cli/answers_clean.sh" "$bodies" 1 || status=1
exit "$status"
