#!/usr/bin/env bash
# Usage: timeouts.sh BUILD_DIR
# Fails when a test of the build has no TIMEOUT of its own: without one, a hung test (a
# PostgreSQL statement that never returns, a server that never stops) holds CI for ctest's
# default of 1,500 s instead of failing with its name.
set -euo pipefail
ctest --test-dir "$1" --show-only=json-v1 | python3 -c '
import json, sys
tests = json.load(sys.stdin)["tests"]
bare = [t["name"] for t in tests
        if not any(p["name"] == "TIMEOUT" for p in t.get("properties", []))]
for name in bare:
    print("no TIMEOUT: " + name)
print("%d tests, %d without a TIMEOUT" % (len(tests), len(bare)))
sys.exit(1 if bare or not tests else 0)
'
