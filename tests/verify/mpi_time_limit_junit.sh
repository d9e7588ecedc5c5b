#!/usr/bin/env bash
# usage: mpi_time_limit_junit.sh JUNIT_FILE COMMAND...
# COMMAND (distdl-verify under mpiexec with a time limit that its case exceeds) must end the job
# with status 3 and still have written JUNIT_FILE, naming the case that ran out of time and
# listing the case after it as not run.
set -u
junit=$1
shift
rm -f "$junit"
"$@"
status=$?
if [ "$status" -ne 3 ]; then echo "FAIL: status $status, expected 3 (a case past the time limit)"; exit 1; fi
if ! grep -q 'exceeded the time limit of 0.05 s; the job was aborted' "$junit"; then
    echo "FAIL: $junit is missing or does not name the case that ran out of time"
    exit 1
fi
if ! grep -q 'not run: the job was aborted when slow/feature_conv_5x5 exceeded the time limit' "$junit"; then
    echo "FAIL: $junit does not list slow/not_reached, the case after the one that ran out of time, as not run"
    exit 1
fi
echo "ok: the job ended with status 3 and $junit names the case and the one it kept from running"
