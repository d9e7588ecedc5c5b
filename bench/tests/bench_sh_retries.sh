#!/usr/bin/env bash
# scripts/bench.sh --compare end to end on stand-ins (fake_distdl_bench.sh, fake_mpiexec.sh;
# the real distdl-bench-report, given as $1): a workload worse in the first run only passes as
# noise after one re-run, one worse in every attempt fails and is named, only the worse
# workloads are re-run (under mpiexec -n <workers> for Open MPI ones), a layer benchmark's
# regression re-runs that benchmark's worse workloads only (--workloads), layer benchmarks left
# out by --layers, worker counts left out by --ranks and what --exclude names are not compared, a
# failing step (mpiexec) exits 3, relative paths are the caller's, --retries 0 fails on the first
# run and counts are decimal; usage errors (a bad --layers, --ranks or --bin, an OLD or a
# --tolerance or --exclude distdl-bench-report refuses) exit 2 with one message naming the
# argument, before any benchmark runs.
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
# Worker counts left out by --ranks (here 16) are not compared either; nor what --exclude names
# (what a filter after -- leaves out).
run ranks_left_out steady/mpi/w4/large steady/mpi/w16/large steady/sim/w16/large -- --layers ""
[[ $status -eq 0 ]] || fail "ranks_left_out: exit status $status, expected 0"$'\n'"$output"
expect "bench.sh: not compared (left out by --ranks): the workloads of 16 workers"
grep -qF "w16" <<<"$(grep '^|' <<<"$output")" && fail "ranks_left_out: a w16 workload compared:"$'\n'"$output"
run excluded steady/mpi/w4/large filtered/mpi/w4/large -- --layers "" --exclude '^filtered/'
[[ $status -eq 0 ]] || fail "excluded: exit status $status, expected 0"$'\n'"$output"
expect "bench.sh: not compared (--exclude): the workloads matching ^filtered/"
# A step that fails (here mpiexec) ends the run with exit status 3, not a regression's 1.
MPIEXEC=false run mpiexec_fails steady/mpi/w4/large -- --layers ""
[[ $status -eq 3 ]] || fail "mpiexec_fails: exit status $status, expected 3"$'\n'"$output"
expect "bench.sh: the Open MPI run on 4 ranks failed (exit status 1); stopped"
# Relative paths are the caller's: OLD and --out below the directory bench.sh is started in.
mkdir -p "$t/caller"
summary steady/mpi/w4/large >"$t/caller/old.json"
export FAKE_BENCH_STATE="$t/caller/state"
mkdir -p "$FAKE_BENCH_STATE"
(cd "$t/caller" && bash "$root/scripts/bench.sh" --bin ../bin --ranks 4 --layers "" --out rel --compare old.json \
  >/dev/null 2>&1) || fail "relative paths: bench.sh failed"
[[ -f "$t/caller/rel/bench.json" ]] || fail "relative paths: no $t/caller/rel/bench.json"

# Counts are decimal: 08 is eight re-runs (not bash's octal error), 010 ten.
run leading_zero flaky/mpi/w4/large -- --retries 08 --layers ""
[[ $status -eq 0 ]] || fail "leading_zero: exit status $status, expected 0"$'\n'"$output"
expect "PASS: no benchmark got worse (1 worse at first, within tolerance on a re-run)"
run decimal slow/sim/w4/large -- --retries 010 --layers ""
[[ $status -eq 1 ]] || fail "decimal: exit status $status, expected 1"$'\n'"$output"
expect "worse in all 11 attempts"

# Usage errors: exit status 2 with one message naming the argument, before any benchmark runs.
once() { [[ $(grep -cF -- "$1" <<<"$output") -eq 1 ]] || fail "$name: not one line with '$1' in:"$'\n'"$output"; }
refused() {
  [[ $status -eq 2 ]] || fail "$name: exit status $status, expected 2"$'\n'"$output"
  once "$1"
  [[ ! -e "$t/$name/calls" ]] || fail "$name: benchmarks ran:"$'\n'"$(cat "$t/$name/calls")"
}
run bad_layer steady/mpi/w4/large -- --layers "conv fft"
refused "bench.sh: --layers takes conv, pool and linear, got 'fft'"
# OLD is read and the comparison's options checked by distdl-bench-report up front.
echo '{"schema": 1, "benchmarks": ' >"$t/broken.json"
run broken_old steady/mpi/w4/large -- --layers "" --compare "$t/broken.json"
refused "bench.sh: --compare $t/broken.json: distdl-bench-report cannot compare with it; nothing was run"
once "distdl-bench-report: $t/broken.json is not valid JSON"
grep -qF /old.json <<<"$output" && fail "broken_old: a temporary copy named:"$'\n'"$output"
echo '{"a": 1}' >"$t/not_summary.json"
run not_summary steady/mpi/w4/large -- --layers "" --compare "$t/not_summary.json"
refused "bench.sh: --compare $t/not_summary.json: distdl-bench-report cannot compare with it; nothing was run"
expect "not a distdl benchmark summary"
run huge_tolerance steady/mpi/w4/large -- --layers "" --tolerance 1e999
refused "bench.sh: --tolerance must be a number >= 0, got '1e999'"
run huge_min_baseline steady/mpi/w4/large -- --layers "" --min-baseline 1e999
refused "bench.sh: --min-baseline must be a number >= 0, got '1e999'"
run no_bin steady/mpi/w4/large -- --layers "" --bin /nonexistent
refused "bench.sh: --bin /nonexistent: no such directory"
run no_layer_bin steady/mpi/w4/large -- --layers pool
refused "bench.sh: --bin $t/bin has no program layers/pool_bench"
run directory_old steady/mpi/w4/large -- --layers "" --compare "$t"
refused "bench.sh: --compare $t: not a file"
run exclude_empty steady/mpi/w4/large -- --layers "" --exclude ''
refused "bench.sh: --exclude needs a regular expression"
run exclude_all steady/mpi/w4/large -- --layers "" --exclude 'x*'
refused "no workload with a ratio to compare with (after --exclude"
run blank_ranks steady/mpi/w4/large -- --layers "" --ranks " "
refused "bench.sh: --ranks needs at least one of 4 and 16, got ' '"
echo "bench_sh_retries: all cases passed"
