#!/usr/bin/env bash
# Usage: pg_chaos.sh ONEJOB [SECONDS]
# Runs `onejob load` on PostgreSQL while the database is broken under it: client backends are
# terminated at random (pg_terminate_backend) throughout, and the server is restarted twice.
# Passes when the load run reports every promise held: every create answered 201/200/422/503,
# no exception out of the API, no worker or reconciler loop ended, no acknowledged job lost.
# Run under .ci/with-postgres (it needs .ci/pg-restart), and alone: it kills every backend.
set -euo pipefail
onejob=$1
seconds=${2:-16}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$onejob" load --store "postgres=$ONEJOB_PG_URL" --seconds "$seconds" --drain 8 >"$out" 2>&1 &
load=$!

kills=0
kill_backends() {
  local n
  n=$(psql "$ONEJOB_PG_URL" -qAt -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND backend_type = 'client backend' AND random() < 0.5" 2>/dev/null) || n=0
  kills=$((kills + n))
}
restart() {
  bash "$root/.ci/pg-restart"
  echo "pg_chaos: server restarted"
}

sleep 2
for round in 1 2; do
  for _ in 1 2 3 4 5 6; do
    kill_backends
    sleep 0.4
  done
  restart
  sleep 2
done
status=0
wait "$load" || status=$?
cat "$out"
echo "pg_chaos: $kills backends terminated, 2 restarts; load exited $status"
exit "$status"
