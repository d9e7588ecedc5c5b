#!/usr/bin/env bash
# usage: expect_failure.sh TEXT COMMAND...
# Runs COMMAND (an MPI job under the test wrapper, cmake/distdl_mpi_tests.cmake) and passes only
# when it fails by itself, not killed at the wrapper's time limit (124, or 137 after SIGKILL),
# and its output holds TEXT.
set -u
text=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then echo "FAIL: killed at the time limit (status $status)"; exit 1; fi
if [ "$status" -eq 0 ]; then echo "FAIL: the job reported success"; exit 1; fi
if ! grep -qF -- "$text" <<<"$output"; then echo "FAIL: no \"$text\" in its output"; exit 1; fi
echo "ok: status $status with \"$text\""
