#!/usr/bin/env bash
# The test command: installs and builds what is missing, runs the whole lit
# suite (check-zeroc), and ends with a line `N passed, N failed`.
# Exits non-zero when any test fails.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake --build --preset default --target check-zeroc 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# lit's summary: "  Passed           : 41 (100.00%)" and friends.
count() { sed -n "s/^ *$1 *: *\([0-9]\+\).*/\1/p" "$log" | tail -n 1; }
passed=$(( $(count Passed || true) + 0 ))
xfailed=$(( $(count "Expectedly Failed" || true) + 0 ))
failed=$(( $(count Failed || true) + $(count "Unexpectedly Passed" || true) + 0 ))
skipped=$(( $(count Unsupported || true) + 0 ))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi

line="$((passed + xfailed)) passed, $failed failed"
if [ "$skipped" -gt 0 ]; then line="$line, $skipped skipped"; fi
echo "$line"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
