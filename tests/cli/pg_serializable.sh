#!/usr/bin/env bash
# Usage: pg_serializable.sh PG_TESTS_BINARY
# Runs the PostgreSQL suite against a fresh database whose default isolation is SERIALIZABLE:
# PgStore must pin READ COMMITTED itself. The binary checks the default really is serializable
# (ONEJOB_PG_EXPECT_ISOLATION). The database is dropped afterwards.
set -euo pipefail
binary=$1
db="onejob_serializable_$$"
psql "$ONEJOB_PG_URL" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $db" \
  -c "ALTER DATABASE $db SET default_transaction_isolation TO 'serializable'"
trap 'psql "$ONEJOB_PG_URL" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
ONEJOB_PG_URL="$ONEJOB_PG_URL dbname=$db" ONEJOB_PG_EXPECT_ISOLATION=serializable "$binary"
