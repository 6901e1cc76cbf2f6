#!/usr/bin/env bash
# Usage: with_pg.sh CMD [ARGS...]
# Runs CMD with every argument @PG_URL@ replaced by $ONEJOB_PG_URL (.ci/with-postgres sets it).
# Without a database: exit 77 (ctest: skipped), or 1 when ONEJOB_REQUIRE_PG is set (CI), so a
# missing PostgreSQL never passes silently.
set -euo pipefail
if [[ -z ${ONEJOB_PG_URL:-} ]]; then
  if [[ -n ${ONEJOB_REQUIRE_PG:-} ]]; then
    echo "with_pg: ONEJOB_PG_URL not set, and ONEJOB_REQUIRE_PG says this test must run" >&2
    exit 1
  fi
  echo "with_pg: skipped, ONEJOB_PG_URL not set"
  exit 77
fi
args=()
for arg in "$@"; do args+=("${arg//@PG_URL@/$ONEJOB_PG_URL}"); done
exec "${args[@]}"
