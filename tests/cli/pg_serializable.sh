#!/usr/bin/env bash
# Usage: pg_serializable.sh PG_TESTS_BINARY
# Runs the PostgreSQL suite against a fresh database whose default isolation is SERIALIZABLE:
# PgStore must pin READ COMMITTED itself. The binary checks the default really is serializable
# (ONEJOB_PG_EXPECT_ISOLATION). The database is dropped afterwards.
# The twin runs beside the main suite, which terminates every backend of its own database: the
# database is created and dropped over a connection to the maintenance database `postgres`, never
# to the suite's.
set -euo pipefail
binary=$1
db="onejob_serializable_$$"
admin="$ONEJOB_PG_URL dbname=postgres"
psql "$admin" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $db" \
  -c "ALTER DATABASE $db SET default_transaction_isolation TO 'serializable'"
trap 'psql "$admin" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
ONEJOB_PG_URL="$ONEJOB_PG_URL dbname=$db" ONEJOB_PG_EXPECT_ISOLATION=serializable "$binary"
