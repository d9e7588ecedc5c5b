#!/usr/bin/env bash
# usage: expect_killed.sh MAX_SECONDS PROBE_NAME COMMAND...
# Runs COMMAND (a hanging MPI job under the test wrapper) and passes only when it ends with a
# non-zero status within MAX_SECONDS and leaves no process of PROBE_NAME behind.
set -u
max_seconds=$1
probe=$2  # at most 15 characters: pgrep -x matches the kernel's process name
shift 2
start=$(date +%s)
"$@" >/dev/null 2>&1
status=$?
# Ranks may take a moment to go once mpiexec is gone: wait for them up to the same limit.
while [ "$(pgrep -x "$probe" | wc -l)" -ne 0 ] && [ $(( $(date +%s) - start )) -le "$max_seconds" ]; do sleep 0.2; done
elapsed=$(( $(date +%s) - start ))
leftover=$(pgrep -x "$probe" | wc -l)
echo "status $status, job and its ranks gone after ${elapsed}s, $leftover leftover $probe processes"
if [ "$status" -eq 0 ]; then echo "FAIL: the hanging job reported success"; exit 1; fi
if [ "$elapsed" -gt "$max_seconds" ]; then echo "FAIL: took ${elapsed}s, more than ${max_seconds}s"; exit 1; fi
if [ "$leftover" -ne 0 ]; then echo "FAIL: $probe processes survived"; exit 1; fi
echo "ok: the wrapper ended the deadlocked job"
