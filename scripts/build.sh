#!/usr/bin/env bash
# Installs what is missing, configures build/ with the `default` preset when
# needed, and builds everything (tools, runtime, docs).
#
#   scripts/build.sh [--no-torch] [cmake --build arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--no-torch" ]; then
  scripts/setup.sh --no-torch
  shift
else
  scripts/setup.sh
fi
if [ ! -f build/build.ninja ]; then
  cmake --preset default >/dev/null
fi
cmake --build --preset default "$@"
