#!/usr/bin/env bash
# A stand-in for distdl-bench in bench_sh_retries.sh (no benchmark runs): writes Google
# Benchmark JSON with scripted times for a few workloads of its transport and worker count,
# honouring --benchmark_filter, and logs each call ("<transport> w<workers> <filter>") to
# $FAKE_BENCH_STATE/calls. Baselines take 10 ms; ours, per run of its workload (the last value
# repeats): steady 10 ms (ratio 1.0), flaky 16 then 10 ms (1.6, then 1.0), slow 16 ms (1.6).
# Called as conv_bench (a layer benchmark: --report-out, no filter), it logs "layer conv" and
# writes conv_layer/sim/w4/steady (1.0) and conv_layer/sim/w4/lagging (1.6); given --workloads
# W,..., it logs "layer conv W,..." and writes only those.
set -euo pipefail
transport=sim workers=4 out="" filter=".*" workloads=""
while (($#)); do
  case "$1" in
    --transport) transport=$2; shift ;;
    --workers) workers=$2; shift ;;
    --out | --report-out) out=$2; shift ;;
    --benchmark_filter=*) filter=${1#--benchmark_filter=} ;;
    --workloads) workloads=$2; shift ;;
  esac
  shift
done
me=$(basename "$0")
if [[ $me == distdl-bench ]]; then
  [[ $transport == mpi ]] && workers=${FAKE_WORLD_SIZE:?fake_distdl_bench: run mpi under fake_mpiexec}
  key="$transport w$workers"
  echo "$key $filter" >>"$FAKE_BENCH_STATE/calls"
else
  key="layer ${me%_bench}"
  echo "$key${workloads:+ $workloads}" >>"$FAKE_BENCH_STATE/calls"
fi

case "$key" in
  "sim w4") table=("slow/sim/w4/large 16") ;;
  "mpi w4") table=("flaky/mpi/w4/large 16 10" "steady/mpi/w4/large 10") ;;
  "layer conv") table=("conv_layer/sim/w4/steady 10" "conv_layer/sim/w4/lagging 16") ;;
  *) table=() ;;
esac
runs=()
for row in "${table[@]}"; do
  read -r -a times <<<"$row"
  workload=${times[0]}
  times=("${times[@]:1}")
  [[ -z $workloads || ",$workloads," == *",$workload,"* ]] || continue
  count_file="$FAKE_BENCH_STATE/$(tr / _ <<<"$workload")"
  count=$(cat "$count_file" 2>/dev/null || echo 0)
  ran=false
  for role in ours baseline; do
    name="$role/$workload/iterations:10/manual_time"
    [[ $name =~ $filter ]] || continue
    ran=true
    ms=10
    if [[ $role == ours ]]; then ms=${times[count < ${#times[@]} ? count : ${#times[@]} - 1]}; fi
    runs+=("{\"name\": \"$name\", \"run_name\": \"$name\", \"run_type\": \"iteration\", \"real_time\": $ms, \"time_unit\": \"ms\"}")
  done
  if $ran; then echo $((count + 1)) >"$count_file"; fi
done
body=$(IFS=,; echo "${runs[*]}")
[[ -n $out ]] && echo "{\"context\": {\"quick\": \"false\"}, \"benchmarks\": [$body]}" >"$out"
exit 0
