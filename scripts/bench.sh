#!/usr/bin/env bash
# Benchmarks: builds the release preset, runs distdl-bench on the simulator and on Open MPI
# (4 and 16 ranks), writes reports/bench.md, bench.json and bench.svg; with --compare, checks
# every ratio to baseline against an older bench.json (exit status 1 on a regression).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'TEXT'
usage: scripts/bench.sh [--quick] [--out DIR] [--ranks "4 16"]
                        [--compare OLD.json [--tolerance T] [--min-baseline S]] [-- distdl-bench flags]

  --quick          a few iterations per benchmark (seconds per benchmark; direction only)
  --out DIR        where bench.md, bench.json and bench.svg go (default: reports)
  --ranks LIST     Open MPI world sizes to run (default "4 16"; the simulator runs the same
                   worker counts)
  --compare OLD    after the run, compare each benchmark's ratio to baseline with OLD (a
                   bench.json); exit status 1 when any ratio grew by more than the tolerance
                   or a benchmark of OLD is missing
  --tolerance T    allowed growth of a ratio before it counts as worse (default 0.25 = 25%)
  --min-baseline S benchmarks whose baseline takes less than S seconds per iteration are not
                   compared (default 1e-6: the simulator's memcpy of small tensors, whose
                   ratio measures the clock)
  -- ...           further flags for distdl-bench (e.g. --benchmark_filter=broadcast)
TEXT
}

quick=() out=reports ranks="4 16" compare="" tolerance=0.25 min_baseline=1e-6 extra=()
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --out) out="${2:?--out needs a directory}"; shift ;;
    --ranks) ranks="${2:?--ranks needs a list}"; shift ;;
    --compare) compare="${2:?--compare needs a bench.json}"; shift ;;
    --tolerance) tolerance="${2:?--tolerance needs a number}"; shift ;;
    --min-baseline) min_baseline="${2:?--min-baseline needs a number of seconds}"; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -n "$compare" ]]; then
  [[ -f "$compare" ]] || { echo "bench.sh: no such file: $compare" >&2; exit 2; }
  cp "$compare" "$work/old.json"  # the new report may overwrite it
fi

cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target distdl-bench distdl-bench-report
bin=build/release/bench
mkdir -p "$out"

workers=$(tr ' ' ',' <<<"$ranks")
echo "bench.sh: simulator, workers $workers"
"$bin/distdl-bench" --transport sim --workers "$workers" "${quick[@]}" --out "$work/sim.json" \
  --benchmark_color=false "${extra[@]}"

# Shared-memory transport without cross-process memory access (containers often forbid it),
# as in the test suite; override by exporting the variable.
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
for n in $ranks; do
  echo "bench.sh: Open MPI, $n ranks"
  mpiexec --oversubscribe -n "$n" "$bin/distdl-bench" --transport mpi "${quick[@]}" --out "$work/mpi$n.json" \
    --benchmark_color=false "${extra[@]}"
done

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ "$commit" != unknown && -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  commit="$commit (with uncommitted changes)"
fi
"$bin/report/distdl-bench-report" --out-dir "$out" --commit "$commit" "$work"/sim.json "$work"/mpi*.json

if [[ -n "$compare" ]]; then
  echo "bench.sh: comparing with $compare (tolerance $tolerance)"
  "$bin/report/distdl-bench-report" --compare "$work/old.json" "$out/bench.json" --tolerance "$tolerance" \
    --min-baseline "$min_baseline"
fi
