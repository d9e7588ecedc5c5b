#!/usr/bin/env bash
# The main job: install what is missing, build, and verify the whole case library on the
# simulator, writing reports/verify.md and reports/verify.json.
#
#   bash scripts/main.sh          (no arguments; the test suite is scripts/test.sh)
set -euo pipefail
if [[ $# -gt 0 ]]; then
  [[ "$1" == -h || "$1" == --help ]] && { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
  echo "main.sh: takes no arguments, got: $* (try --help)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/release/verify/distdl-verify --transport sim --report reports cases
