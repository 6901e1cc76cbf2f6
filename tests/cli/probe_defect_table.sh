#!/usr/bin/env bash
# Usage: probe_defect_table.sh ONEJOB SOURCE_DIR [memory|postgres]
# For every named defect, runs `onejob probe` (the conformance suite and the catalogue stories of
# tests/cli/probe.sh) against `onejob serve --defect NAME`, and prints a Markdown table: the
# black-box clauses that caught it, and how many runs failed an expectation. On postgres
# (ONEJOB_PG_URL), defects planted in the embedded store are reported as not plantable there, and
# the target reaches its database through the probe's store proxy (--store-upstream), so the
# story of a lost INSERT (store-request-lost-on-create) runs too.
# Minutes per defect; a manual measurement, not a CTest.
set -uo pipefail
onejob=$(realpath "$1")
source_dir=$(realpath "$2")
store=${3:-memory}
cd "$source_dir" || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same catalogue stories as probe.sh's.
eval "$(sed -n '/^catalogue=(/,/)$/p' tests/cli/probe.sh)"
files=()
for name in "${catalogue[@]}"; do files+=("scenarios/$name.yaml"); done
store_flags=()
if [[ $store == postgres ]]; then
  # The database's address from ONEJOB_PG_URL (keyword form), as probe.sh's pg_store_faults.
  field() { sed -nE "s/.*(^| )$1=([^ ]+).*/\2/p" <<< "$ONEJOB_PG_URL"; }
  host=$(field host) port=$(field port) user=$(field user) db=$(field dbname)
  if [[ $host == /* ]]; then upstream="$host/.s.PGSQL.${port:-5432}"; else upstream="${host:-127.0.0.1}:${port:-5432}"; fi
  store_flags=(--store-upstream "$upstream")
  files+=(scenarios/store_request_lost_on_create.yaml)
fi
echo "| defect | caught by (black-box clauses) | runs failing an expectation | runs |"
echo "|---|---|---|---|"
for defect in $("$onejob" defects | sed -n 's/^  \([a-z0-9-]*\)$/\1/p'); do
  target="$onejob serve --listen 127.0.0.1:{port} --config {config} --tokens harness/real/onejob-serve.tokens --no-logs --defect $defect"
  if [[ $store == postgres ]]; then
    target="$target --store 'postgres=postgresql://${user:-postgres}@{store}/${db:-postgres}' --schema probe_defect_$$"
  fi
  "$onejob" probe --target http://127.0.0.1:0 --target-cmd "$target" --report-dir "$work/$defect" \
    --time-scale 20 --settle 5s "${store_flags[@]}" --suite conformance "${files[@]}" > "$work/out.txt" 2>&1
  code=$?
  [[ $store == postgres ]] &&
    psql "$ONEJOB_PG_URL" -qc "DROP SCHEMA IF EXISTS probe_defect_$$ CASCADE" > /dev/null 2>&1
  if grep -q "could not run" "$work/out.txt" && [[ $code == 2 ]]; then
    echo "| \`$defect\` | not plantable here: $(grep -m1 -o 'could not run: .*' "$work/out.txt" | cut -c1-80) | | |"
    continue
  fi
  clauses=$(grep -oE '^  B[0-9]+\.[a-z_]*' "$work/out.txt" | sed 's/^  //' | sort | uniq -c |
    awk '{printf "%s`%s` (%d)", (NR > 1 ? ", " : ""), $2, $1}')
  expectations=$(awk '/^(PASS|FAIL) /{name=$2} /^  expectation:/{seen[name]=1} END{print length(seen)}' "$work/out.txt")
  runs=$(grep -c '^\(PASS\|FAIL\) ' "$work/out.txt")
  echo "| \`$defect\` | ${clauses:-none} | $expectations | $runs |"
done
