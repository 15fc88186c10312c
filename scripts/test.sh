#!/usr/bin/env bash
# The test command: installs and builds what is missing, runs the whole lit
# suite (check-zeroc), then the sanitizer build's subset and the fuzz smoke
# run (build-sanitize/, the `sanitize` preset: clang with AddressSanitizer
# and UndefinedBehaviorSanitizer; docs/reliability.md), and ends with a line
# `N passed, N failed` counting both. Exits non-zero when any test fails.
#
# ZEROC_SANITIZE_TESTS=0 skips the sanitizer part; ZEROC_FUZZ_SECONDS sets
# the smoke run's length per fuzz target (default 25).
#
# The sanitizer build runs in the background once the main build is done
# (not beside it: two builds' compilers in memory at once), at the lowest
# CPU priority (nice 19): it gets the CPU time the main suite leaves idle
# (mpirun's waits, the tests' timeouts, serial steps) and little else until
# the suite ends; its tests run after the suite's (about
# 7 minutes on two cores). Its output goes to build-sanitize/build.log,
# whose end is shown when it fails.
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
sanlog=$(mktemp)
sanbuild_pid=
cleanup() {
  if [ -n "$sanbuild_pid" ]; then kill -- "-$sanbuild_pid" 2>/dev/null; fi
  rm -f "$log" "$sanlog"
}
trap cleanup EXIT
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
if [ "${ZEROC_SANITIZE_TESTS:-1}" != "0" ]; then
  # clang and its sanitizer runtimes first (the build below needs them).
  scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
  mkdir -p build-sanitize
  # A process group of its own (set -m), so that cleanup ends all of it;
  # one job a core (not ninja's cores + 2), as the suite's processes are
  # in memory beside it.
  set -m
  ( { [ -f build-sanitize/build.ninja ] || cmake --preset sanitize >/dev/null; } &&
    nice -n 19 cmake --build --preset sanitize --parallel "$(nproc)" ) \
    </dev/null >build-sanitize/build.log 2>&1 &
  sanbuild_pid=$!
  set +m
fi

cmake --build --preset default --target check-zeroc 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# The sanitizer subset: the verifier, pass and evaluator tests, the driver's
# outputs, the runtime's kernels and services (multi-rank executables among
# them), one generated multi-rank executable, and the fuzz smoke run.
sanitize_status=0
if [ -n "$sanbuild_pid" ]; then
  wait "$sanbuild_pid"
  sanbuild_status=$?
  sanbuild_pid=
  if [ "$sanbuild_status" -eq 0 ]; then
    echo "scripts/test.sh: the sanitizer build is done (build-sanitize/build.log)"
    /usr/lib/llvm-22/bin/lit -sv \
      build-sanitize/test/Dialect build-sanitize/test/Transforms \
      build-sanitize/test/Evaluator build-sanitize/test/Analysis \
      build-sanitize/test/tools/zeroc/outputs.test build-sanitize/test/tools/zeroc/devices.test \
      build-sanitize/test/tools/zeroc/gpt2-tiny.test build-sanitize/test/tools/zeroc/plan.test \
      build-sanitize/test/tools/zeroc/plan-errors.test build-sanitize/test/Runtime/Kernels \
      build-sanitize/test/Runtime/Services build-sanitize/test/Integration/resume.test \
      build-sanitize/test/Fuzz 2>&1 | tee "$sanlog"
    sanitize_status=${PIPESTATUS[0]}
  else
    tail -n 100 build-sanitize/build.log
    echo "scripts/test.sh: the sanitizer build failed (build-sanitize/build.log)"
    echo "  Failed    : 1" > "$sanlog"
    sanitize_status=1
  fi
fi

# lit's summary: "  Passed           : 41 (100.00%)" and friends.
count() { sed -n "s/^ *$2 *: *\([0-9]\+\).*/\1/p" "$1" | tail -n 1; }
total() { echo $(( $(count "$log" "$1" || true) + $(count "$sanlog" "$1" || true) + 0 )); }
passed=$(total Passed)
xfailed=$(total "Expectedly Failed")
failed=$(( $(total Failed) + $(total "Unexpectedly Passed") ))
skipped=$(total Unsupported)
if { [ "$status" -ne 0 ] || [ "$sanitize_status" -ne 0 ]; } && [ "$failed" -eq 0 ]; then failed=1; fi

line="$((passed + xfailed)) passed, $failed failed"
if [ "$skipped" -gt 0 ]; then line="$line, $skipped skipped"; fi
echo "$line"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ] && [ "$sanitize_status" -eq 0 ]
