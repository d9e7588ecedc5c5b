#!/usr/bin/env bash
# How the simulator scales: generates the scale cases (Broadcast, SumReduce, AllSumReduce,
# Repartition, HaloExchange, Feature/Channel/GeneralConv2d, Max/AvgPool2d, Linear; 4x4
# elements per worker) for worlds of 16 to 4,096 workers into a temporary
# folder, runs each case alone under /usr/bin/time and prints its time (as distdl-verify
# measures the case) and the process's peak memory (the best of --repeat runs), and the growth
# of both per 4x the workers (n log n growth would be 4x(1 + 2/log2 n): 4.8x from 1,024 to
# 4,096, 5.0x from 256 to 1,024).
#
#   bash scripts/sim-scaling.sh [--sizes 16,64,256,1024,4096] [--repeat N] [--verify PATH] [--time-limit S]
#
# --time-limit: seconds per case (default 120), passed to distdl-verify; a usage error of
# distdl-verify's is printed and ends the run (exit status 2).
# Needs a release build (bash scripts/build.sh) and GNU time (apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="16,64,256,1024,4096"
repeat=1
verify="build/release/verify/distdl-verify"
time_limit=120
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes|--repeat|--verify|--time-limit)
      [[ $# -ge 2 && "$2" != --* ]] || { echo "sim-scaling.sh: $1 needs a value (try --help)" >&2; exit 2; } ;;&
    --sizes) sizes="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --verify) verify="$2"; shift 2 ;;
    --time-limit) time_limit="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sim-scaling.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
IFS=',' read -ra list <<<"$sizes"
((${#list[@]})) || { echo "sim-scaling.sh: --sizes needs at least one size" >&2; exit 2; }
for n in "${list[@]}"; do
  # At most 4 digits before the loop: it takes sqrt(n) steps, and longer numbers wrap.
  side=0
  [[ "$n" =~ ^[1-9][0-9]{0,3}$ ]] && ((n <= 4096)) && while ((side * side < n)); do ((side += 2)); done
  ((side > 0 && side * side == n)) ||
    { echo "sim-scaling.sh: --sizes takes squares of even numbers from 4 to 4096, got '$n'" >&2; exit 2; }
done
[[ "$repeat" =~ ^[1-9][0-9]{0,8}$ ]] ||  # longer counts wrap
  { echo "sim-scaling.sh: --repeat needs a positive count of at most 9 digits, got '$repeat'" >&2; exit 2; }
[[ "$time_limit" =~ ^([0-9]+[.]?[0-9]*|[.][0-9]+)$ ]] &&  # decimal, as distdl-verify takes it
  awk -v t="$time_limit" 'BEGIN { exit !(t + 0 > 0) }' ||
  { echo "sim-scaling.sh: --time-limit needs a positive number of seconds, got '$time_limit'" >&2; exit 2; }
[[ -x "$verify" ]] || { echo "sim-scaling.sh: $verify not found; run bash scripts/build.sh first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "sim-scaling.sh: needs GNU time (/usr/bin/time): apt-get install time" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 verify/make_cases.py --scale-only "$(IFS=,; echo "${list[*]}")" --out "$work" >/dev/null

status=0
declare -A last_seconds last_kib
printf '%-8s %-14s %10s %12s %10s %10s  %s\n' workers layer "time (s)" "peak (MiB)" "time x4" "memory x4" result
for n in "${list[@]}"; do
  for layer in broadcast sum_reduce all_sum_reduce repartition halo_exchange feature_conv2d channel_conv2d \
               general_conv2d max_pool2d avg_pool2d linear; do
    # One case per layer and size that passes (the refusals end early: nothing to time).
    file="$(grep -l "\"world_size\": $n," "$work"/scale/"$layer"_*.json | grep -v '_refused\.json$')"
    log="$work/log"
    result=PASS
    best_seconds="" best_kib=""
    for ((i = 0; i < repeat; ++i)); do
      code=0
      /usr/bin/time -f '%e %M' -o "$work/time" "$verify" --transport sim --max-world 0 \
        --time-limit "$time_limit" "$file" >"$log" 2>&1 || code=$?
      # A usage error would fail every row alike: its message (without the usage text) ends the run.
      if ((code == 2)); then
        echo "sim-scaling.sh: $verify refused its arguments:" >&2
        sed -e '/^usage:/,$d' -e '/^$/d' "$log" >&2
        exit 2
      fi
      if ((code != 0)); then
        result=FAIL
        status=1
      fi
      read -r seconds kib < <(tail -n 1 "$work/time")
      # The case's own time as distdl-verify measures it (ms resolution, without process start).
      case_seconds="$(sed -n 's/^total time \([0-9.]*\) s.*/\1/p' "$log" | tail -n 1)"
      [[ -n "$case_seconds" ]] && seconds="$case_seconds"
      if [[ -z "$best_seconds" ]] || awk -v a="$seconds" -v b="$best_seconds" 'BEGIN { exit !(a < b) }'; then
        best_seconds="$seconds"
      fi
      if [[ -z "$best_kib" || "$kib" -lt "$best_kib" ]]; then best_kib="$kib"; fi
    done
    # Growth against the previous size, scaled to 4x the workers.
    growth_time="" growth_memory=""
    if [[ -n "${last_seconds[$layer]:-}" ]]; then
      read -r growth_time growth_memory < <(awk -v t="$best_seconds" -v t0="${last_seconds[$layer]}" \
        -v m="$best_kib" -v m0="${last_kib[$layer]}" -v n="$n" -v n0="${last_n:-1}" 'BEGIN {
          e = log(4) / log(n / n0)
          printf "%.1f %.1f\n", (t0 > 0 ? (t / t0) ^ e : 0), (m / m0) ^ e }')
    fi
    last_seconds[$layer]="$best_seconds"
    last_kib[$layer]="$best_kib"
    printf '%-8s %-14s %10s %12d %10s %10s  %s\n' "$n" "$layer" "$best_seconds" $((best_kib / 1024)) \
      "${growth_time:--}" "${growth_memory:--}" "$result"
    [[ "$result" == PASS ]] || grep -m 1 'FAIL' "$log" >&2 || true
  done
  last_n="$n"
done
exit $status
