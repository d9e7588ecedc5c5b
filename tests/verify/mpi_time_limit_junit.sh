#!/usr/bin/env bash
# usage: mpi_time_limit_junit.sh JUNIT_FILE COMMAND...
# COMMAND (distdl-verify under mpiexec with a time limit that its case exceeds) must end the job
# with status 3 and still have written JUNIT_FILE, naming the case that ran out of time.
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
echo "ok: the job ended with status 3 and $junit names the case"
