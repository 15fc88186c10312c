#!/usr/bin/env bash
# Refreshes the committed copies of the TableGen-generated references
# (docs/reference/) from a build; test/docs/reference-current.test fails
# until they match.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build --preset default --target mlir-doc >/dev/null
cp build/docs/Dialects/TrainOps.md docs/reference/TrainOps.md
cp build/docs/ZerocTransformsPasses.md docs/reference/ZerocTransformsPasses.md
echo "docs/reference/ refreshed"
