#!/usr/bin/env bash
# Runs every case of tests/fixtures/hostile/manifest.tsv and requires its documented exit status
# (never a signal) within a time and memory budget.
# Usage: hostile.sh ONEJOB FIXTURE_DIR SCRATCH_DIR [SECONDS] [MEGABYTES (0: no memory limit)]
set -uo pipefail
onejob=$1 fixtures=$2 scratch=$3 seconds=${4:-5} megabytes=${5:-256}
rm -rf "$scratch" && mkdir -p "$scratch"
bash "$fixtures/generate.sh" "$scratch/generated" || exit 1
failures=0 cases=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  IFS=$'\t' read -r -a fields <<<"$line"
  expected=${fields[0]}
  args=()
  for arg in "${fields[@]:1}"; do
    arg=${arg//@F/$fixtures/files}
    arg=${arg//@G/$scratch/generated}
    arg=${arg//@S/$scratch}
    args+=("$arg")
  done
  # A trailing empty argument (`run ""`) is lost by read: keep it.
  [[ $line == *$'\t' ]] && args+=("")
  cases=$((cases + 1))
  started=$(date +%s%N)
  (
    if ((megabytes > 0)); then ulimit -v $((megabytes * 1024)); fi
    exec timeout --signal=KILL "$seconds" "$onejob" "${args[@]}"
  ) >"$scratch/out" 2>&1 </dev/null
  status=$?
  elapsed=$((($(date +%s%N) - started) / 1000000))
  if [[ $status != "$expected" ]]; then
    failures=$((failures + 1))
    echo "FAIL  exit $status (expected $expected) after ${elapsed} ms: onejob ${args[*]}"
    head -c 400 "$scratch/out"; echo
  fi
done <"$fixtures/manifest.tsv"
echo "hostile inputs: $cases cases, $failures failed"
((failures == 0))
