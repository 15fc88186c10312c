#!/usr/bin/env bash
# zeroc's fuzz targets (docs/reliability.md), from the sanitizer build
# (cmake --preset sanitize && cmake --build --preset sanitize).
#
#   scripts/fuzz.sh run TARGET SECONDS   fuzz one target for SECONDS, keeping
#                                        its corpus in build-sanitize/fuzz/corpus/
#                                        TARGET and any crash in .../crashes/TARGET
#   scripts/fuzz.sh all SECONDS          every target in turn, SECONDS each
#   scripts/fuzz.sh replay TARGET FILE.. run inputs once (a crash, a seed)
#
# TARGET: parse-verify pipeline passes emit evaluator safetensors checkpoint.
# One fuzzing process at a time; prefix with `nice` on a shared machine.
# Each run ends with libFuzzer's stat::number_of_executed_units (inputs
# tried) and the number of crashes found; the exit status is non-zero when
# there is one. The suite's smoke run is test/Fuzz (about 25 s a target).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${ZEROC_SANITIZE_BUILD:-build-sanitize}
targets=(parse-verify pipeline passes emit evaluator safetensors checkpoint)

options() { # the libFuzzer flags of a target
  local target=$1
  echo "-timeout=30 -rss_limit_mb=2048 -print_final_stats=1"
  case "$target" in
    parse-verify|pipeline|passes|emit|evaluator) echo "-dict=test/Fuzz/train.dict" ;;
  esac
}

run() {
  local target=$1 seconds=$2
  local corpus=$build/fuzz/corpus/$target crashes=$build/fuzz/crashes/$target
  mkdir -p "$corpus" "$crashes"
  if [ -z "$(ls -A "$corpus")" ]; then
    python3 scripts/fuzz_corpus.py "$target" "$corpus" --bin "$build/bin" || return 1
  fi
  local log=$build/fuzz/$target.log
  # shellcheck disable=SC2046
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$build/bin/zeroc-fuzz-$target" "$corpus" \
    $(options "$target") -max_total_time="$seconds" -artifact_prefix="$crashes/" \
    > "$log" 2>&1
  local status=$?
  local units
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  local found
  found=$(find "$crashes" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  echo "$target: ${units:-?} inputs in ${seconds} s, $found crash(es) in $crashes (status $status; log $log)"
  return $status
}

case "${1:-}" in
  run) run "$2" "$3" ;;
  all)
    failed=0
    for target in "${targets[@]}"; do run "$target" "$2" || failed=1; done
    exit $failed ;;
  replay)
    target=$2; shift 2
    # shellcheck disable=SC2046
    exec "$build/bin/zeroc-fuzz-$target" $(options "$target") "$@" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
