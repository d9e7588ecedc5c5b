#!/usr/bin/env bash
# A stand-in for mpiexec in bench_sh_retries.sh: runs the program once, telling it the world
# size (-n N) through FAKE_WORLD_SIZE.
set -euo pipefail
n=1
while [[ $1 == -* ]]; do
  case "$1" in
    -n) n=$2; shift ;;
  esac
  shift
done
FAKE_WORLD_SIZE=$n exec "$@"
