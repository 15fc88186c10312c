#!/usr/bin/env bash
# Installs what is missing, configures build/ with the `default` preset when
# needed, and builds everything (tools, docs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ ! -f build/build.ninja ]; then
  cmake --preset default >/dev/null
fi
cmake --build --preset default "$@"
