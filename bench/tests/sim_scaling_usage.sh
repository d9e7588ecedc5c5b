#!/usr/bin/env bash
# scripts/sim-scaling.sh's arguments, given the real distdl-verify as $1: sizes past the limit are
# refused at once (a square-root loop ran before the bound: 10^18 hung); a --repeat too long to
# be a number and a --time-limit that is not a positive number before anything runs (every row
# was FAIL, and nothing said why); a usage error of distdl-verify's (a stand-in that refuses
# everything) is printed and ends the run; a run at 16 workers passes. The last two need GNU
# time, as the script does.
set -euo pipefail
verify=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "sim_scaling_usage: $*" >&2; exit 1; }
# run SECONDS ARGS...: sets status and output (stdout and stderr).
run() {
  local limit=$1; shift
  status=0
  output=$(timeout "$limit" bash "$root/scripts/sim-scaling.sh" "$@" 2>&1) || status=$?
}
# refused MESSAGE ARGS...: exit status 2 within seconds, MESSAGE the whole output.
refused() {
  local message=$1; shift
  run 10 --verify "$verify" "$@"
  [[ $status -eq 2 && "$output" == "$message" ]] ||
    fail "$*: exit status $status (expected 2), output (expected '$message'):"$'\n'"$output"
}
for size in 1000000000000000000 99999999999999999999999 0064 25 ""; do
  refused "sim-scaling.sh: --sizes takes squares of even numbers from 4 to 4096, got '$size'" --sizes "$size,16"
done
refused "sim-scaling.sh: --repeat needs a positive count of at most 9 digits, got '18446744073709551617'" \
  --repeat 18446744073709551617
for limit in abc 0 -1 1e-400 1e1 0x10; do
  refused "sim-scaling.sh: --time-limit needs a positive number of seconds, got '$limit'" --time-limit "$limit"
done

if [[ ! -x /usr/bin/time ]]; then
  echo "sim_scaling_usage: no GNU time (/usr/bin/time): runs not tried"
  exit 0
fi
printf '%s\n' '#!/bin/sh' 'echo "distdl-verify: the stand-in refuses $*" >&2' 'echo >&2' \
  'echo "usage: distdl-verify [--transport sim|mpi] ..." >&2' 'exit 2' >"$t/refusing-verify"
chmod +x "$t/refusing-verify"
run 60 --verify "$t/refusing-verify" --sizes 16 --time-limit 5
[[ $status -eq 2 ]] || fail "a refusing distdl-verify: exit status $status, expected 2:"$'\n'"$output"
grep -q "^distdl-verify: the stand-in refuses --transport sim --max-world 0 --time-limit 5 " <<<"$output" ||
  fail "a refusing distdl-verify: its message not shown:"$'\n'"$output"
grep -qE 'FAIL|^usage:' <<<"$output" && fail "a refusing distdl-verify: rows or its usage text shown:"$'\n'"$output"
run 120 --verify "$verify" --sizes 16 --time-limit 60
[[ $status -eq 0 && $(grep -c '^16 .* PASS$' <<<"$output") -eq 11 ]] ||
  fail "--sizes 16: exit status $status, expected 0 and 11 rows PASS:"$'\n'"$output"
echo "sim_scaling_usage: all cases passed"
