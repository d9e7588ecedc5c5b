#!/usr/bin/env bash
# Benchmarks: builds the release preset, runs distdl-bench on the simulator and on Open MPI
# (4 and 16 ranks) and the layer benchmarks (bench/layers), writes reports/bench.md, bench.json
# and bench.svg; with --compare, checks every ratio to baseline against an older bench.json,
# re-runs the workloads that got worse and exits 1 only on a regression confirmed by every
# attempt.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."

usage() {
  cat <<'TEXT'
usage: scripts/bench.sh [--quick] [--out DIR] [--ranks "4 16"] [--layers "conv pool linear"] [--bin DIR]
                        [--compare OLD.json [--tolerance T] [--min-baseline S] [--retries N]
                        [--exclude REGEX]] [-- distdl-bench flags]

  --quick          a few iterations per benchmark (seconds per benchmark; direction only)
  --out DIR        where bench.md, bench.json and bench.svg go (default: reports)
  --ranks LIST     Open MPI world sizes to run (default "4 16"; the simulator runs the same
                   worker counts); --compare leaves the workloads of the others out of the
                   comparison (not MISSING)
  --layers LIST    layer benchmarks to run, of conv, pool and linear (default all three; ""
                   none): bench/layers/<name>_bench, 4 simulated workers against the serial
                   kernels, reported as the groups <name>_layer with their goals as targets;
                   --compare leaves the others out of the comparison (not MISSING)
  --compare OLD    after the run, compare each benchmark's ratio to baseline with OLD (a
                   bench.json, which distdl-bench-report reads with --tolerance and
                   --min-baseline before anything runs: exit status 2 if it cannot); a
                   benchmark whose ratio grew by more than the tolerance is
                   re-run (ours and baseline, same transport and worker count) up to N more
                   times and counts as a regression only when it is worse in every attempt
                   (the best ratio counts: noise only slows a run down) and ours' own time grew
                   too, allowing for the machine's speed (a faster baseline alone passes: 'ours ok');
                   exit status 1 on a regression, when a benchmark of OLD is missing, or
                   when nothing was compared
  --tolerance T    allowed growth of a ratio before it counts as worse (default 0.25 = 25%)
  --retries N      re-runs of a worse benchmark before it fails the run (default 2; 0: none;
                   decimal, up to 9 digits)
  --min-baseline S benchmarks whose baseline takes less than S seconds per iteration are not
                   compared (default 1e-6: a ratio against a shorter time measures the
                   clock)
  --exclude REGEX  leave the workloads whose names it matches out of the comparison too (as
                   distdl-bench-report --exclude): those a --benchmark_filter after -- does
                   not run, e.g. --exclude '^(?!broadcast/)' with --benchmark_filter=broadcast
  --bin DIR        run DIR/distdl-bench and DIR/report/distdl-bench-report as they are
                   instead of building the release preset (default: build, then use
                   build/release/bench; the layer benchmarks are DIR/layers/<name>_bench,
                   and each of --layers must be there);
                   the Open MPI runs start with $MPIEXEC (default
                   mpiexec). Relative paths are taken from the current directory.
  -- ...           further flags for distdl-bench (e.g. --benchmark_filter=broadcast)
  -h, --help       this text

Exit status: 0 done (and with --compare, nothing worse or missing); 1 a regression, a missing
benchmark or nothing compared; 2 a usage error or an OLD that cannot be compared with, before
anything runs; 3 a step failed (a build, a benchmark run, mpiexec or the report), named in the
last message.
TEXT
}

quick=() out=reports ranks="4 16" layers="conv pool linear" compare="" tolerance=0.25 min_baseline=1e-6 retries=2 bin="" extra=()
exclude=""
# A path as the caller meant it: relative to the directory bench.sh was started in.
from_caller() { [[ $1 == /* ]] && echo "$1" || echo "$caller/$1"; }
# An option's value: present, and not the next option.
value() {
  [[ $# -ge 3 && ( -n "$2" || "$1" == --layers ) && "$2" != --* ]] || { echo "bench.sh: $1 needs $3" >&2; exit 2; }
}
number='^([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$'
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --out) value "$1" "${2-}" "a directory"; out=$(from_caller "$2"); shift ;;
    --ranks) value "$1" "${2-}" "a list"; ranks="$2"; shift
             [[ $ranks =~ [^[:space:]] ]] ||
               { echo "bench.sh: --ranks needs at least one of 4 and 16, got '$ranks'" >&2; exit 2; }
             for r in $ranks; do
               [[ $r == 4 || $r == 16 ]] ||
                 { echo "bench.sh: --ranks takes 4 and 16 (the workloads' sizes), got '$r'" >&2; exit 2; }
             done ;;
    --layers) value "$1" "${2-}" 'a list ("" for none)'; layers="$2"; shift
              for l in $layers; do
                [[ $l == conv || $l == pool || $l == linear ]] || { echo "bench.sh: --layers takes conv, pool and linear, got '$l'" >&2; exit 2; }
              done ;;
    --bin) value "$1" "${2-}" "a directory"; bin=$(from_caller "$2"); shift ;;
    --compare) value "$1" "${2-}" "a bench.json"; compare=$(from_caller "$2"); shift ;;
    --exclude) value "$1" "${2-}" "a regular expression"; exclude="$2"; shift ;;
    --tolerance) value "$1" "${2-}" "a number"; tolerance="$2"; shift
                 [[ "$tolerance" =~ $number ]] ||
                   { echo "bench.sh: --tolerance must be a number >= 0, got '$tolerance'" >&2; exit 2; } ;;
    --min-baseline) value "$1" "${2-}" "a number of seconds"; min_baseline="$2"; shift
                    [[ "$min_baseline" =~ $number ]] ||
                      { echo "bench.sh: --min-baseline must be a number of seconds >= 0, got '$min_baseline'" >&2; exit 2; } ;;
    --retries) value "$1" "${2-}" "a count"; retries="$2"; shift
               # Decimal: bash's arithmetic reads 010 as 8 and refuses 08; 9 digits cannot wrap.
               [[ "$retries" =~ ^0*([0-9]{1,9})$ ]] ||
                 { echo "bench.sh: --retries must be a count from 0 to 999999999, got '$retries'" >&2; exit 2; }
               retries=$((10#${BASH_REMATCH[1]})) ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

[[ -z "$compare" || -f "$compare" ]] ||
  { echo "bench.sh: --compare $compare: $([[ -e $compare ]] && echo "not a file" || echo "no such file")" >&2; exit 2; }
[[ -n "$compare" || -z "$exclude" ]] || { echo "bench.sh: --exclude needs --compare" >&2; exit 2; }
# Without a build, the programs must be there: else bash's own error, after the runs before.
if [[ -n "$bin" ]]; then
  [[ -d "$bin" ]] || { echo "bench.sh: --bin $bin: no such directory" >&2; exit 2; }
  for program in distdl-bench report/distdl-bench-report $(for l in $layers; do echo "layers/${l}_bench"; done); do
    [[ -f "$bin/$program" && -x "$bin/$program" ]] ||
      { echo "bench.sh: --bin $bin has no program $program" >&2; exit 2; }
  done
fi

# The layer benchmarks and worker counts left out on purpose (--layers, --ranks) are not missing,
# nor what --exclude names; the report tool takes one pattern, so they join as alternatives.
left_out=() counts=() patterns=() not_compared=()
for l in conv pool linear; do [[ " $layers " == *" $l "* ]] || left_out+=("$l"); done
if ((${#left_out[@]})); then
  patterns+=("^($(IFS='|'; echo "${left_out[*]}"))_layer/")
  not_compared+=("(left out by --layers): ${left_out[*]/%/_layer}")
fi
for n in 4 16; do [[ " $ranks " == *" $n "* ]] || counts+=("$n"); done
if ((${#counts[@]})); then
  patterns+=("^[^/]+/(sim|mpi)/w($(IFS='|'; echo "${counts[*]}"))/")
  not_compared+=("(left out by --ranks): the workloads of ${counts[*]} workers")
fi
if [[ -n "$exclude" ]]; then
  patterns+=("$exclude")
  not_compared+=("(--exclude): the workloads matching $exclude")
fi
excluded=()
if ((${#patterns[@]})); then
  joined=""
  for p in "${patterns[@]}"; do joined+="${joined:+|}(?:$p)"; done
  excluded=(--exclude "$joined")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# step WHAT COMMAND...: runs a step; its failure ends the run with exit status 3, which a
# regression's 1 is not.
step() {
  local what=$1 status=0
  shift
  "$@" || status=$?
  ((status == 0)) || { echo "bench.sh: $what failed (exit status $status); stopped" >&2; exit 3; }
}
if [[ -z "$bin" ]]; then
  step "configuring the release preset" cmake --preset release >/dev/null
  step "building the benchmarks" cmake --build --preset release -j "$(nproc)" --target distdl-bench \
    distdl-bench-report $(for l in $layers; do echo "${l}_bench"; done)
  bin=$PWD/build/release/bench
fi
report="$bin/report/distdl-bench-report"
# OLD and the comparison's options, checked by the report tool before anything runs (else they
# fail after the whole suite): OLD against itself, then with the options. Its messages without
# its usage text, which is not bench.sh's.
if [[ -n "$compare" ]]; then
  if ! "$report" --compare "$compare" "$compare" --list-worse >/dev/null 2>"$work/check"; then
    echo "bench.sh: --compare $compare: distdl-bench-report cannot compare with it; nothing was run" >&2
    sed '/^usage:/,$d' "$work/check" >&2
    exit 2
  fi
  if ! "$report" --compare "$compare" "$compare" --tolerance "$tolerance" --min-baseline "$min_baseline" \
       "${excluded[@]}" --list-worse >/dev/null 2>"$work/check"; then
    sed -e '/^usage:/,$d' -e 's/^distdl-bench-report: /bench.sh: /' "$work/check" >&2
    exit 2
  fi
  cp "$compare" "$work/old.json"  # the new report may overwrite it
fi
mpiexec="${MPIEXEC:-mpiexec}"
mkdir -p "$out"

# One run of distdl-bench: run_sim WORKERS OUT [flags] (WORKERS a comma list), run_mpi RANKS OUT [flags].
run_sim() {
  "$bin/distdl-bench" --transport sim --workers "$1" "${quick[@]}" --out "$2" --benchmark_color=false \
    "${extra[@]}" "${@:3}"
}
run_mpi() {
  "$mpiexec" --oversubscribe -n "$1" "$bin/distdl-bench" --transport mpi "${quick[@]}" --out "$2" \
    --benchmark_color=false "${extra[@]}" "${@:3}"
}
# run_layer NAME OUT [--workloads W,...]: one layer benchmark, all of it or the benchmarks of
# the workloads given (each layer's, its baseline's and its kernels alone).
run_layer() {
  "$bin/layers/$1_bench" "${quick[@]}" --report-out "$2" --benchmark_color=false "${@:3}"
}

workers=$(read -ra list <<<"$ranks"; IFS=,; echo "${list[*]}")
echo "bench.sh: simulator, workers $workers"
step "the simulator run" run_sim "$workers" "$work/sim.json"

# Shared-memory transport without cross-process memory access (containers often forbid it),
# as in the test suite; override by exporting the variable.
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
for n in $ranks; do
  echo "bench.sh: Open MPI, $n ranks"
  step "the Open MPI run on $n ranks" run_mpi "$n" "$work/mpi$n.json"
done
for l in $layers; do
  echo "bench.sh: layer benchmark $l"
  step "the layer benchmark $l" run_layer "$l" "$work/layer_$l.json"
done

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ "$commit" != unknown && -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  commit="$commit (with uncommitted changes)"
fi
step "writing the report" "$report" --out-dir "$out" --commit "$commit" "$work"/sim.json "$work"/mpi*.json \
  $(for l in $layers; do echo "$work/layer_$l.json"; done)

[[ -n "$compare" ]] || exit 0
compared=(--compare "$work/old.json" "$out/bench.json" --tolerance "$tolerance" --min-baseline "$min_baseline"
  "${excluded[@]}")
for line in "${not_compared[@]}"; do echo "bench.sh: not compared $line"; done
echo "bench.sh: comparing with $compare (tolerance $tolerance, up to $retries re-runs of a worse benchmark)"
# Each attempt re-runs ours and baseline of the workloads still worse (one run per transport and
# worker count); its summary joins the comparison as a --retry.
for ((attempt = 1; attempt <= retries; attempt++)); do
  # An assignment, not < <(...): a failure (step's exit status 3) ends the run here rather than
  # being printed again below.
  worse_list=$(step "listing the worse benchmarks" "$report" "${compared[@]}" --list-worse)
  worse=()
  [[ -z "$worse_list" ]] || mapfile -t worse <<<"$worse_list"
  ((${#worse[@]})) || break
  echo "bench.sh: re-run $attempt of $retries of ${#worse[@]} worse benchmark(s): ${worse[*]}"
  dir="$work/retry$attempt"
  mkdir -p "$dir/runs"
  declare -A groups=() layer_runs=()
  for name in "${worse[@]}"; do  # <primitive>/<transport>/w<workers>/<size>, or <name>_layer/...
    IFS=/ read -r -a part <<<"$name"
    if [[ ${part[0]} == *_layer && -x "$bin/layers/${part[0]%_layer}_bench" ]]; then
      layer_runs[${part[0]%_layer}]="${layer_runs[${part[0]%_layer}]:+${layer_runs[${part[0]%_layer}]},}$name"
    elif [[ ${#part[@]} -ge 3 && ( ${part[1]} == sim || ${part[1]} == mpi ) && ${part[2]} =~ ^w[0-9]+$ ]]; then
      key="${part[1]} ${part[2]#w}"
      groups[$key]="${groups[$key]:+${groups[$key]}|}$name"
    else
      echo "bench.sh: $name is not <primitive>/<sim|mpi>/w<workers>/<size>; not re-run" >&2
    fi
  done
  for key in "${!groups[@]}"; do
    read -r transport n <<<"$key"
    filter="--benchmark_filter=^(ours|baseline)/(${groups[$key]})(/|\$)"
    step "re-run $attempt on $transport, $n workers" "run_$transport" "$n" "$dir/runs/$transport$n.json" "$filter"
  done
  for l in "${!layer_runs[@]}"; do
    step "re-run $attempt of the layer benchmark $l" run_layer "$l" "$dir/runs/layer_$l.json" \
      --workloads "${layer_runs[$l]}"
  done
  unset groups layer_runs
  if compgen -G "$dir/runs/*.json" >/dev/null; then
    step "writing the report of re-run $attempt" "$report" --out-dir "$dir" --commit "$commit" "$dir"/runs/*.json \
      >/dev/null
    compared+=(--retry "$dir/bench.json")
  fi
done
"$report" "${compared[@]}"
