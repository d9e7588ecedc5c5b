#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test (simulator and
# Open MPI) with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset release -j 2 "$@"
