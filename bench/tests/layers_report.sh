#!/usr/bin/env bash
# A layer benchmark's --report-out end to end, on pool_bench's quickest pair ($1; the real
# distdl-bench-report is $2): the report gets a row with the layer's goal as its target and the
# kernels-alone column; a file that cannot be written fails the benchmark.
set -euo pipefail
bench=$1 report=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
quick=(--benchmark_repetitions=2 --benchmark_min_time=0.01)
"$bench" "--benchmark_filter=max, geometry::k2_s2" "${quick[@]}" --report-out "$t/pool.json" >/dev/null
"$report" --out-dir "$t" "$t/pool.json" >/dev/null
row='^[|] sim/w4/max_k2_s2 [|] pool_sim_2x2&lt;kind::max, geometry::k2_s2> over pool_serial&lt;kind::max, '
row+='geometry::k2_s2>: CPU time, fastest repetition [|] [0-9.]+ ms [|] [0-9.]+ ms [|] [0-9.]+ [|] '
row+='(met|MISSED) [(]<= 1[.]2[)] [|] [0-9.]+ [|]'
grep -qE "$row" "$t/bench.md" || { echo "layers_report: no row matching $row in:" >&2; cat "$t/bench.md" >&2; exit 1; }
if "$bench" --benchmark_filter=pool_serial "${quick[@]}" --report-out /nonexistent/pool.json >/dev/null 2>&1; then
  echo "layers_report: an unwritable --report-out did not fail" >&2
  exit 1
fi
echo "layers_report: passed"
