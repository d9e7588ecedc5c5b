#!/usr/bin/env bash
# Configures and builds the release preset (build/release). Extra arguments go to the build.
#
#   bash scripts/build.sh                    everything
#   bash scripts/build.sh --target distdl-verify   one target (any `cmake --build` option)
set -euo pipefail
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" "$@"
