#!/usr/bin/env bash
# Usage: probe.sh ONEJOB SOURCE_DIR MODE
# `onejob probe` against `onejob serve` started by the probe itself (--target-cmd, a free port
# per run, the scenario's policy time-scaled through {config}). Modes:
#   conformance  the conformance suite passes on the memory store; `onejob check` on every
#                recorded history agrees (exit 0)
#   defects      each defect observable over HTTP is caught by its rule, and `onejob check` on
#                the recorded history gives the same verdict
#   catalogue    more catalogue stories than the suite, on the memory store, pass (exit 0)
#   pg_suites    the conformance suite and those stories on PostgreSQL (ONEJOB_PG_URL; 77 =
#                skipped), one schema for all of them (the keys are prefixed per run)
#   kill_memory  kill -9 and restart of a memory-store target mid-run: reported as loss (B8)
#   port_taken   a target whose first start exits at once (its port taken) is started again on
#                another free port, and the run passes
#   slow_target  a target stopped (SIGSTOP, from outside the scenario) for 3 s while a request's
#                only send waits: answered late, past the client's scaled timeout, and the run
#                passes (a loaded machine's slow target is not a lost reply)
#   pg_kill_9    the same on PostgreSQL (ONEJOB_PG_URL; 77 = skipped): nothing lost
#   pg_store_faults  the probe between a PostgreSQL target and its database (--store-upstream):
#                a create whose INSERT is lost passes on the reference, lost-create is caught by
#                B8.acknowledged_without_job, store-error-500 by B12.undeclared_server_error
#                (probe and check agree)
set -uo pipefail
onejob=$(realpath "$1")
source_dir=$(realpath "$2")
mode=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir" || exit 1
serve="$onejob serve --listen 127.0.0.1:{port} --config {config} --tokens harness/real/onejob-serve.tokens --no-logs"
status=0
fail() {
  echo "FAILED: $*"
  status=1
}
probe() {  # REPORT_DIR TARGET_CMD ARGS...
  local dir=$1 cmd=$2
  shift 2
  "$onejob" probe --target http://127.0.0.1:0 --target-cmd "$cmd" --report-dir "$dir" \
    --time-scale 20 --settle 5s "$@"
}

# Catalogue stories a black box can be told (no crash of a memory target, no fault inside the
# target, no load balancer of the simulator's), beyond the conformance suite.
catalogue=(a_replay_shows_the_job_as_it_stands answer_at_the_deadline attempt_limit body_size_limits
  cancelled_late_result_wins certification_judges_every_operations_meaning
  every_call_carries_its_providers_prompt every_label_accepted
  claim_reply_lost create_bodies_not_json failover_after_a_lost_failed_reply fallback_hallucinated_key
  fallback_not_certified fallback_plausible_but_wrong fallback_wrong_operation json_repeated_key
  key_reused_with_escapes late_answer_no_reconciler missing_key operator_double_click_cancel
  operator_keys_reused
  operator_retry_replayed operator_retry_respelled
  prompt_limit_boundary provider_timeout_cancel_fallback route_probes same_key_other_provider
  store_lost_before_the_call transport_reset_after_delivery zombie_worker_fenced)
catalogue_files=()
for name in "${catalogue[@]}"; do catalogue_files+=("scenarios/$name.yaml"); done
need_pg() {
  if [[ -z ${ONEJOB_PG_URL:-} ]]; then
    [[ -n ${ONEJOB_REQUIRE_PG:-} ]] && { echo "ONEJOB_PG_URL not set"; exit 1; }
    echo "skipped: ONEJOB_PG_URL not set"
    exit 77
  fi
}

case $mode in
  port_taken)
    # The target's first start exits at once, as serve does when another process took its port
    # before it could bind: the probe starts it again on another free port, and the run passes.
    first="$work/first-start"
    probe "$work/t" "sh -c 'test -e $first || { touch $first; exit 1; }; exec $serve'" \
      scenarios/double_click.yaml > "$work/out.txt" 2>&1
    code=$?
    cat "$work/out.txt"
    [[ $code == 0 ]] || fail "a target whose first start exits: exit $code, expected 0"
    [[ -e $first ]] || fail "the target's first start did not run"
    grep -q "^PASS " "$work/out.txt" || fail "the run on the second port did not pass"
    ;;
  slow_target)
    # The target execs serve in place, so the pid it writes is serve's. Once serve listens
    # (the probe's timeline starts then), stop it 0.5 s to 3.5 s: the create, sent at 20 s of
    # scenario time (1 s real), is answered about 2.5 s after it was sent.
    pidfile="$work/target.pid"
    (
      for _ in $(seq 100); do [[ -s $pidfile ]] && break; sleep 0.05; done
      pid=$(cat "$pidfile")
      port=$(tr '\0' '\n' < "/proc/$pid/cmdline" | grep -A1 -x -- --listen | tail -1 | cut -d: -f2)
      for _ in $(seq 100); do (: < "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
      sleep 0.5
      kill -STOP "$pid"
      sleep 3
      kill -CONT "$pid" 2>/dev/null  # gone already if the probe ended first (a failing run)
    ) &
    stopper=$!
    probe "$work/w" "sh -c 'echo \$\$ > $pidfile; exec $serve'" \
      tests/fixtures/probe/slow_target.yaml > "$work/out.txt" 2>&1
    code=$?
    wait "$stopper"
    cat "$work/out.txt"
    [[ $code == 0 ]] || fail "a target answering 2.5 s late: exit $code, expected 0"
    grep -q "^PASS " "$work/out.txt" || fail "a target answering 2.5 s late: the run did not pass"
    # The stop did hold the create: its answer came over 1.2 s after it was sent (the history's
    # microseconds since the run began; about 2.5 s when nothing is slow), later than the 1 s a
    # resend waits.
    python3 - "$work"/w/slow-target.history.jsonl <<'PY' || fail "the create was not answered late"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
sent = next(l["t_us"] for l in lines if l["kind"] == "request" and l["client"] == "browser")
got = next(l["t_us"] for l in lines if l["kind"] == "response" and l["id"] == "r1")
print(f"create answered {(got - sent) / 1e6:.2f} s after it was sent")
sys.exit(0 if got - sent > 1_200_000 else 1)
PY
    ;;
  catalogue)
    probe "$work/k" "$serve" "${catalogue_files[@]}" > "$work/out.txt" 2>&1
    code=$?
    cat "$work/out.txt"
    [[ $code == 0 ]] || fail "catalogue stories: exit $code, expected 0"
    runs=$(grep -c "^PASS " "$work/out.txt")
    [[ $runs == "${#catalogue[@]}" ]] || fail "catalogue stories: $runs passed of ${#catalogue[@]}"
    ;;
  pg_suites)
    need_pg
    schema="probe_suites_$$"
    probe "$work/s" "$serve --store 'postgres=$ONEJOB_PG_URL' --schema $schema" \
      --suite conformance "${catalogue_files[@]}" > "$work/out.txt" 2>&1
    code=$?
    psql "$ONEJOB_PG_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" > /dev/null 2>&1
    cat "$work/out.txt"
    [[ $code == 0 ]] || fail "suites on PostgreSQL: exit $code, expected 0"
    runs=$(grep -c "^PASS " "$work/out.txt")
    expected=$((10 + ${#catalogue[@]}))
    [[ $runs == "$expected" ]] || fail "suites on PostgreSQL: $runs passed of $expected"
    ;;
  conformance)
    probe "$work/c" "$serve" --suite conformance > "$work/out.txt" 2>&1
    code=$?
    cat "$work/out.txt"
    [[ $code == 0 ]] || fail "conformance: exit $code, expected 0"
    runs=$(grep -c "^PASS " "$work/out.txt")
    [[ $runs -ge 10 ]] || fail "conformance: $runs passing runs, expected at least 10"
    grep -q 'tests="10" failures="0"' "$work/c/probe.junit.xml" || fail "JUnit: not 10 tests, 0 failures"
    for history in "$work"/c/*.history.jsonl; do
      "$onejob" check "$history" > /dev/null || fail "onejob check disagrees on $history"
    done
    ;;
  defects)
    # defect:scenario:clause — every defect observable over HTTP, with the rule that must catch it.
    for row in ignore-fingerprint:key_reused_with_other_payload:B2.other_payload_accepted \
               fingerprint-without-provider:same_key_other_provider:B2.other_payload_accepted \
               action-key-ignores-request:operator_keys_reused:B9.key_answered_another_request \
               record-refused-action:operator_keys_reused:B9.refused_then_acknowledged \
               replay-current-state:operator_retry_replayed:B9.answer_misstates \
               replay-unmarked:operator_double_click_cancel:B9.replay_unmarked \
               foreign-owner-retry:owner_b_probes_owner_a:B10.another_owners_job \
               skip-contract:fallback_not_certified:B11.uncertified_failover \
               schema-only-contract:fallback_plausible_but_wrong:B11.uncertified_failover \
               failover-past-limit:attempt_limit:B13.attempts_past_limit \
               cancel-skips-unknown:provider_timeout_cancel_fallback:B14.live_attempt_refused \
               timeout-is-failure:provider_never_answers:B7.failed_while_running \
               blind-overwrite:reverse_order_completion:B4.result_changed \
               late-merge:reverse_order_completion:B4.result_changed \
               read-shows-attempt-results:reverse_order_completion:B15.output_shown_elsewhere; do
      IFS=: read -r defect scenario clause <<< "$row"
      dir="$work/$defect"
      probe "$dir" "$serve --defect $defect" "scenarios/$scenario.yaml" > "$work/out.txt" 2>&1
      code=$?
      grep -v "^  note" "$work/out.txt" | head -4
      [[ $code == 1 ]] || fail "$defect: probe exit $code, expected 1"
      grep -q "  $clause:" "$work/out.txt" || fail "$defect: $clause not reported"
      "$onejob" check "$dir"/*.history.jsonl > "$work/check.txt"
      code=$?
      [[ $code == 1 ]] || fail "$defect: onejob check exit $code, expected 1"
      grep -q "$clause" "$work/check.txt" || fail "$defect: onejob check did not find $clause"
      echo "$defect -> $clause (probe and check agree)"
    done
    # A target whose refusal of a reused key is not the one its profile states (the reference
    # answers 422; this profile says 409): B2 judges the refusal by the profile.
    printf 'codes: {conflict: 409}\n' > "$work/conflict-409.yaml"
    probe "$work/conflict" "$serve" --no-expect --profile "$work/conflict-409.yaml" \
      scenarios/key_reused_with_other_payload.yaml > "$work/out.txt" 2>&1
    code=$?
    grep -v "^  note" "$work/out.txt" | head -4
    [[ $code == 1 ]] || fail "conflict status 409: probe exit $code, expected 1"
    grep -q "  B2.reuse_misanswered:" "$work/out.txt" || fail "conflict status 409: not reported"
    "$onejob" check "$work/conflict"/*.history.jsonl > "$work/check.txt"
    [[ $? == 1 ]] && grep -q "B2.reuse_misanswered" "$work/check.txt" ||
      fail "conflict status 409: onejob check disagrees"
    echo "profile conflict 409, target 422 -> B2.reuse_misanswered (probe and check agree)"
    ;;
  kill_memory)
    probe "$work/m" "$serve" --no-expect scenarios/reconciler_resolves_after_another_won.yaml \
      > "$work/out.txt" 2>&1
    code=$?
    cat "$work/out.txt"
    [[ $code == 1 ]] || fail "memory store killed: exit $code, expected 1 (loss)"
    grep -q "B8.acknowledged_job_missing" "$work/out.txt" || fail "memory store killed: no B8 finding"
    ;;
  pg_store_faults)
    need_pg
    # The database's address from ONEJOB_PG_URL (keyword form): a Unix socket's directory or a
    # host, its port, user and database; the target reaches it through the probe's proxy.
    field() { sed -nE "s/.*(^| )$1=([^ ]+).*/\2/p" <<< "$ONEJOB_PG_URL"; }
    host=$(field host) port=$(field port) user=$(field user) db=$(field dbname)
    if [[ $host == /* ]]; then upstream="$host/.s.PGSQL.${port:-5432}"; else upstream="${host:-127.0.0.1}:${port:-5432}"; fi
    schema="probe_store_$$"
    target="$serve --store 'postgres=postgresql://${user:-postgres}@{store}/${db:-postgres}' --schema $schema"
    for defect in none lost-create store-error-500; do
      cmd=$target
      [[ $defect == none ]] || cmd="$target --defect $defect"
      probe "$work/$defect" "$cmd" --store-upstream "$upstream" \
        scenarios/store_request_lost_on_create.yaml > "$work/out.txt" 2>&1
      code=$?
      grep -v "^  note" "$work/out.txt" | head -4
      case $defect in
        none) [[ $code == 0 ]] || fail "reference: exit $code, expected 0" ;;
        *)
          case $defect in
            lost-create) clause=B8.acknowledged_without_job ;;
            store-error-500) clause=B12.undeclared_server_error ;;
          esac
          [[ $code == 1 ]] || fail "$defect: exit $code, expected 1"
          grep -q "  $clause:" "$work/out.txt" || fail "$defect: $clause not reported"
          "$onejob" check "$work/$defect"/*.history.jsonl > "$work/check.txt"
          [[ $? == 1 ]] && grep -q "$clause" "$work/check.txt" ||
            fail "$defect: onejob check does not agree" ;;
      esac
    done
    psql "$ONEJOB_PG_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" > /dev/null 2>&1
    ;;
  pg_kill_9)
    need_pg
    schema="probe_$$"
    probe "$work/p" "$serve --store 'postgres=$ONEJOB_PG_URL' --schema $schema" --no-expect \
      scenarios/reconciler_resolves_after_another_won.yaml \
      scenarios/every_api_node_crashes_after_commit.yaml > "$work/out.txt" 2>&1
    code=$?
    psql "$ONEJOB_PG_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" > /dev/null 2>&1
    cat "$work/out.txt"
    [[ $code == 0 ]] || fail "PostgreSQL target killed and restarted: exit $code, expected 0"
    grep -Eq '"target_starts": ([2-9]|[1-9][0-9])' "$work/p/probe.json" ||
      fail "the target was never killed and restarted"
    ;;
  *)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
exit $status
