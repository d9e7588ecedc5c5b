#!/usr/bin/env bash
# The layer benchmarks' usage errors ($@: conv_bench, pool_bench, linear_bench), none of which
# runs a benchmark: exit status 2 (was 1) with a message, an unknown --workloads name answered
# with the benchmark's workloads (was not); -h is --help (exit 0); a workload named runs.
set -euo pipefail
fail() { echo "layers_usage: $*" >&2; exit 1; }
for bench in "$@"; do
  name=$(basename "$bench")
  case "$name" in
    conv_bench) workloads="conv_layer/sim/w4/channel, conv_layer/sim/w4/feature, conv_layer/sim/w4/general" ;;
    pool_bench) workloads="pool_layer/sim/w4/avg_k2_s2, pool_layer/sim/w4/avg_k3_s2_p1, pool_layer/sim/w4/max_k2_s2"
                workloads+=", pool_layer/sim/w4/max_k3_s2_p1" ;;
    linear_bench) workloads="linear_layer/serial/w1/gemm_kernel, linear_layer/sim/w4/linear" ;;
    *) fail "$bench: not a layer benchmark this test knows" ;;
  esac
  # expect STATUS TEXT ARGS...: exit status STATUS and a line of stdout or stderr that is TEXT.
  expect() {
    local want=$1 text=$2 status=0 output
    shift 2
    output=$("$bench" "$@" 2>&1) || status=$?
    [[ $status -eq $want ]] && grep -qxF -- "$text" <<<"$output" ||
      fail "$name $*: exit status $status (expected $want), no line '$text' in:"$'\n'"$output"
  }
  expect 2 "$bench: --workloads: 'bogus' is not a workload of this benchmark (its workloads: $workloads)" \
    --workloads "${workloads%%,*},bogus"
  expect 2 "$bench: error: unrecognized command-line flag: --bogus" --bogus
  expect 2 "$bench: --report-out needs a value" --report-out --quick
  expect 2 "$bench: --workloads needs a value" --workloads=
  expect 0 "  --workloads LIST   run only the benchmarks of these workloads (comma-separated, names as" -h
  listed=$("$bench" --workloads "${workloads##*, }" --benchmark_list_tests=true) ||
    fail "$name --workloads ${workloads##*, }: exit status $?"
  grep -q '/process_time$' <<<"$listed" || fail "$name --workloads ${workloads##*, }: no benchmark in:"$'\n'"$listed"
done
echo "layers_usage: all cases passed"
