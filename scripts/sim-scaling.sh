#!/usr/bin/env bash
# How the simulator scales: generates the scale cases (Broadcast, SumReduce, AllSumReduce,
# Repartition; 4x4 elements per worker) for worlds of 16 to 4,096 workers into a temporary
# folder, runs each case alone under /usr/bin/time and prints its wall time and peak memory.
#
#   bash scripts/sim-scaling.sh [--sizes 16,64,256,1024,4096] [--verify PATH] [--time-limit S]
#
# Needs a release build (bash scripts/build.sh) and GNU time (apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="16,64,256,1024,4096"
verify="build/release/verify/distdl-verify"
time_limit=120
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --verify) verify="$2"; shift 2 ;;
    --time-limit) time_limit="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sim-scaling.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$verify" ]] || { echo "sim-scaling.sh: $verify not found; run bash scripts/build.sh first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "sim-scaling.sh: needs GNU time (/usr/bin/time): apt-get install time" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 verify/make_cases.py --scale-only "$sizes" --out "$work" >/dev/null

status=0
printf '%-8s %-14s %10s %12s  %s\n' workers layer "time (s)" "peak (MiB)" result
IFS=',' read -ra list <<<"$sizes"
for n in "${list[@]}"; do
  for layer in broadcast sum_reduce all_sum_reduce repartition; do
    file="$(grep -l "\"world_size\": $n," "$work"/scale/"$layer"_*.json)"  # one per layer and size
    log="$work/log"
    if /usr/bin/time -f '%e %M' -o "$work/time" "$verify" --transport sim --max-world 0 --time-limit "$time_limit" \
         "$file" >"$log" 2>&1; then
      result=PASS
    else
      result=FAIL
      status=1
    fi
    read -r seconds kib < <(tail -n 1 "$work/time")
    printf '%-8s %-14s %10s %12d  %s\n' "$n" "$layer" "$seconds" $((kib / 1024)) "$result"
    [[ "$result" == PASS ]] || grep -m 1 'FAIL' "$log" >&2 || true
  done
done
exit $status
