#!/usr/bin/env bash
# The main job: install what is missing, build, and verify the whole case library on the
# simulator, writing reports/verify.md and reports/verify.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/release/verify/distdl-verify --transport sim --report reports cases
