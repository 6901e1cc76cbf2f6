#!/usr/bin/env bash
# Usage: answers_clean.sh BODIES_FILE [MIN_BODIES]
# Checks the 5xx bodies `onejob load --bodies` wrote: none may carry the store's internals (a
# socket path, SQL, the server's own words), and there must be at least MIN_BODIES of them
# (default 0), so a run that was meant to hit failures shows it did.
set -euo pipefail
bodies=$1
min=${2:-0}
n=$(wc -l <"$bodies")
# What a database or libpq says and a client must never see.
pattern='PGSQL|socket|postgres|libpq|SELECT|INSERT|UPDATE|DELETE|ERROR:|FATAL|server closed|connection to server|SQLSTATE|onejob_'
leaks=$(grep -ciE "$pattern" "$bodies" || true)
echo "answers_clean: $n 5xx bodies, $leaks with internals"
if ((leaks > 0)); then
  grep -iE "$pattern" "$bodies" | sort | uniq -c | sort -rn | head -5 >&2
  exit 1
fi
if ((n < min)); then
  echo "answers_clean: expected at least $min 5xx bodies" >&2
  exit 1
fi
