#!/usr/bin/env bash
# scripts/bench.sh --compare end to end on stand-ins (fake_distdl_bench.sh, fake_mpiexec.sh;
# the real distdl-bench-report, given as $1): a workload worse in the first run only passes as
# noise after one re-run, one worse in every attempt fails and is named, only the worse
# workloads are re-run (under mpiexec -n <workers> for Open MPI ones), a layer benchmark's
# regression re-runs that benchmark's worse workloads only (--workloads), layer benchmarks left
# out by --layers are not compared, and --retries 0 fails on the first run.
set -euo pipefail
report=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin/report" "$t/bin/layers"
ln -s "$root/bench/tests/fake_distdl_bench.sh" "$t/bin/distdl-bench"
ln -s "$root/bench/tests/fake_distdl_bench.sh" "$t/bin/layers/conv_bench"
ln -s "$report" "$t/bin/report/distdl-bench-report"
export MPIEXEC="$root/bench/tests/fake_mpiexec.sh"

summary() {  # workloads with ratio 1.0
  local rows=() w
  for w in "$@"; do rows+=("\"$w\": {\"roles\": {\"ours\": {\"seconds\": 0.01}, \"baseline\": {\"seconds\": 0.01}}}"); done
  echo "{\"schema\": 1, \"benchmarks\": {$(IFS=,; echo "${rows[*]}")}}"
}
fail() { echo "bench_sh_retries: $*" >&2; exit 1; }

# run NAME OLD-WORKLOADS... -- BENCH.SH-FLAGS...: sets status and output; state is fresh per run.
run() {
  name=$1; shift
  local old=()
  while [[ $1 != -- ]]; do old+=("$1"); shift; done
  shift
  export FAKE_BENCH_STATE="$t/$name"
  mkdir -p "$FAKE_BENCH_STATE"
  summary "${old[@]}" >"$t/$name.old.json"
  status=0
  output=$(bash "$root/scripts/bench.sh" --bin "$t/bin" --ranks 4 --out "$t/$name" --compare "$t/$name.old.json" "$@" 2>&1) || status=$?
}
expect() { grep -qF -- "$1" <<<"$output" || fail "$name: no line with '$1' in:"$'\n'"$output"; }

run confirmed slow/sim/w4/large flaky/mpi/w4/large steady/mpi/w4/large -- --layers ""
[[ $status -eq 1 ]] || fail "confirmed: exit status $status, expected 1"$'\n'"$output"
expect "| flaky/mpi/w4/large | 1.000 | 1.000 | +0.0% | 2: 1.600, 1.000 | noise |"
expect "| slow/sim/w4/large | 1.000 | 1.600 | +60.0% | 3: 1.600, 1.600, 1.600 | WORSE |"
expect "| steady/mpi/w4/large | 1.000 | 1.000 | +0.0% | 1 | ok |"
expect "regression: benchmark slow/sim/w4/large ratio 1.000 -> 1.600 (+60.0%), worse in all 3 attempts"
expect "FAIL: 1 regression (slow/sim/w4/large), 0 missing"
# Two full runs, then both worse workloads, then only the one still worse.
expected_calls="sim w4 .*
mpi w4 .*
mpi w4 ^(ours|baseline)/(flaky/mpi/w4/large)(/|\$)
sim w4 ^(ours|baseline)/(slow/sim/w4/large)(/|\$)
sim w4 ^(ours|baseline)/(slow/sim/w4/large)(/|\$)"
calls=$(head -2 "$t/confirmed/calls"; tail -n +3 "$t/confirmed/calls" | head -2 | sort; tail -n +5 "$t/confirmed/calls")
[[ "$calls" == "$expected_calls" ]] || fail "confirmed: calls"$'\n'"$calls"$'\n'"expected"$'\n'"$expected_calls"

run noise flaky/mpi/w4/large steady/mpi/w4/large -- --layers ""
[[ $status -eq 0 ]] || fail "noise: exit status $status, expected 0"$'\n'"$output"
expect "| slow/sim/w4/large | - | 1.600 | - | - | new |"
expect "PASS: no benchmark got worse (1 worse at first, within tolerance on a re-run)"
[[ $(wc -l <"$t/noise/calls") -eq 3 ]] || fail "noise: expected 3 runs, got"$'\n'"$(cat "$t/noise/calls")"

run no_retries flaky/mpi/w4/large -- --retries 0 --layers ""
[[ $status -eq 1 ]] || fail "no_retries: exit status $status, expected 1"$'\n'"$output"
expect "| flaky/mpi/w4/large | 1.000 | 1.600 | +60.0% | 1: 1.600 | WORSE |"
# A layer benchmark's workloads: reported with the primitives'; a regression re-runs just that
# workload of the benchmark (--workloads) and is named like any other.
run layer conv_layer/sim/w4/steady conv_layer/sim/w4/lagging steady/mpi/w4/large -- --layers conv
[[ $status -eq 1 ]] || fail "layer: exit status $status, expected 1"$'\n'"$output"
expect "| conv_layer/sim/w4/lagging | 1.000 | 1.600 | +60.0% | 3: 1.600, 1.600, 1.600 | WORSE |"
expect "| conv_layer/sim/w4/steady | 1.000 | 1.000 | +0.0% | 1 | ok |"
expect "FAIL: 1 regression (conv_layer/sim/w4/lagging), 0 missing"
[[ $(grep -c "^layer conv$" "$t/layer/calls") -eq 1 &&
   $(grep -c "^layer conv conv_layer/sim/w4/lagging$" "$t/layer/calls") -eq 2 ]] ||
  fail "layer: expected a whole run of conv_bench and 2 of its lagging workload, got"$'\n'"$(cat "$t/layer/calls")"
# Layer benchmarks left out by --layers are not compared, so not MISSING.
run left_out conv_layer/sim/w4/steady flaky/mpi/w4/large -- --layers ""
[[ $status -eq 0 ]] || fail "left_out: exit status $status, expected 0"$'\n'"$output"
expect "bench.sh: not compared (left out by --layers): conv_layer pool_layer linear_layer"
grep -qF "conv_layer/sim/w4/steady" <<<"$output" && fail "left_out: conv_layer/sim/w4/steady compared:"$'\n'"$output"
run bad_layer steady/mpi/w4/large -- --layers "conv fft"
[[ $status -eq 2 ]] || fail "bad_layer: exit status $status, expected 2"$'\n'"$output"
expect "bench.sh: --layers takes conv, pool and linear, got 'fft'"
echo "bench_sh_retries: all cases passed"
