#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test (simulator and
# Open MPI) with ctest. Extra arguments go to ctest.
#
#   bash scripts/test.sh                 every test
#   bash scripts/test.sh -R layers       the tests whose names match (any ctest option)
set -euo pipefail
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset release -j 2 "$@"
