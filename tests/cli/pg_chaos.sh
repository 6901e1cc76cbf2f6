#!/usr/bin/env bash
# Usage: pg_chaos.sh ONEJOB [SECONDS [LOAD_FLAGS...]]
# Runs `onejob load` on PostgreSQL for SECONDS (default 10; LOAD_FLAGS go to it as they are)
# while the database is broken under it: every ~5 ms each client backend of the database
# (every node's connection, on every thread) is terminated with probability
# $PG_CHAOS_KILL_P (default 0.02), from the run's first second to its last client second, in
# three phases with a server restart (.ci/pg-restart) between each two. Each phase is one psql
# session running one bounded loop (a restart would end a longer one); the clients' last second
# and the drain run undisturbed, so the reconciler can settle. Passes when the load run exits 0:
# every create answered 201/200/422/503, no exception out of the API, no loop ended, no
# acknowledged job lost, and none stranded (not succeeded after the drain); and no 5xx body
# carries the store's internals (tests/cli/answers_clean.sh).
# Run under .ci/with-postgres (it needs .ci/pg-restart), and alone: it kills every backend.
set -euo pipefail
onejob=$1
seconds=${2:-10}
shift $(($# < 2 ? $# : 2))
kill_p=${PG_CHAOS_KILL_P:-0.02}
if [[ ! $seconds =~ ^[0-9]+$ ]] || ((seconds < 4)); then
  echo "pg_chaos: SECONDS must be a whole number from 4" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$(mktemp)
bodies=$(mktemp)
load=
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  if [[ -n $load ]]; then kill "$load" 2>/dev/null || true; fi
  rm -f "$out" "$bodies"
}
trap cleanup EXIT

now_ms() { date +%s%3N; }

# One phase: until $1 (ms since the epoch), terminate each other client backend of the database
# with probability $kill_p, every ~5 ms. pg_stat_clear_snapshot() makes each round read
# pg_stat_activity afresh (it is otherwise read once per transaction). Bounded by time and by a
# round count. Adds what it terminated to $kills and $rounds.
# shellcheck disable=SC2016  # $chaos$ is PL/pgSQL quoting, not a shell expansion
sql_template='DO $chaos$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '\''@MS@ milliseconds'\'';
  rounds int := 0;
  terminated int := 0;
  n int;
BEGIN
  WHILE clock_timestamp() < deadline AND rounds < @ROUNDS@ LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) INTO n
      FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND backend_type = '\''client backend'\'' AND random() < @P@;
    terminated := terminated + n;
    rounds := rounds + 1;
    PERFORM pg_sleep(0.005);
  END LOOP;
  RAISE NOTICE '\''pg_chaos: % terminated in % rounds'\'', terminated, rounds;
END
$chaos$'
kills=0
rounds=0
kill_phase() {
  local ms=$(($1 - $(now_ms))) sql reply counts
  ((ms > 0)) || return 0
  sql=${sql_template//@MS@/$ms}
  sql=${sql//@ROUNDS@/$((ms / 5 + 1))}
  sql=${sql//@P@/$kill_p}
  reply=$(psql "$ONEJOB_PG_URL" -qAtX -v ON_ERROR_STOP=1 -c "$sql" 2>&1) || true
  counts=$(sed -n 's/.*pg_chaos: \([0-9]*\) terminated in \([0-9]*\) rounds.*/\1 \2/p' <<<"$reply")
  if [[ -z $counts ]]; then
    echo "pg_chaos: a kill loop failed: $reply" >&2
    return 0
  fi
  echo "pg_chaos: ${ms} ms: ${counts% *} backends terminated in ${counts#* } rounds" >&2
  kills=$((kills + ${counts% *}))
  rounds=$((rounds + ${counts#* }))
}

started=$(now_ms)
"$onejob" load --store "postgres=$ONEJOB_PG_URL" --seconds "$seconds" --bodies "$bodies" "$@" \
  >"$out" 2>&1 &
load=$!

kill_from=$((started + 1000))
kill_until=$((started + seconds * 1000 - 1000))
sleep 1
restarts=0
for phase in 1 2 3; do
  kill -0 "$load" 2>/dev/null || break
  kill_phase $((kill_from + (kill_until - kill_from) * phase / 3))
  if ((phase < 3)); then
    bash "$root/.ci/pg-restart"
    restarts=$((restarts + 1))
    echo "pg_chaos: server restarted" >&2
  fi
done
status=0
wait "$load" || status=$?
load=
cat "$out"
wall_ms=$(($(now_ms) - started))
printf 'pg_chaos: %d backends terminated in %d rounds, %d restarts; load exited %d; wall %d.%d s\n' \
  "$kills" "$rounds" "$restarts" "$status" $((wall_ms / 1000)) $((wall_ms % 1000 / 100))
# What the clients were told: never the store's internals.
bash "$root/tests/cli/answers_clean.sh" "$bodies" || status=1
exit "$status"
