#!/usr/bin/env bash
# distdl-bench-report's command line as a CI job meets it ($1: the program; $2: tests/data):
# exit status 2 with a message naming the problem for input it cannot use (a directory, an empty
# file, an OLD without a ratio, an --exclude that leaves OLD nothing, an option of the other
# form, a number that is not a plain decimal); 1 when nothing was compared; --name=value works;
# --out-dir makes the folders it needs.
set -euo pipefail
report=$1 data=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "report_cli: $*" >&2; exit 1; }

# expect STATUS TEXT ARGS...: the exit status, and TEXT in the output (stdout and stderr).
expect() {
  local want=$1 text=$2 status=0 out
  shift 2
  out=$("$report" "$@" 2>&1) || status=$?
  [[ $status -eq $want ]] || fail "$*: exit status $status, expected $want:"$'\n'"$out"
  grep -qF -- "$text" <<<"$out" || fail "$*: no '$text' in:"$'\n'"$out"
}

mkdir "$t/dir"
: >"$t/empty.json"
echo '{"schema": 1, "benchmarks": {}}' >"$t/none.json"
expect 2 "$t/dir is a directory, not a JSON file" --compare "$t/dir" "$data/old.json"
expect 2 "$t/empty.json is empty" --compare "$t/empty.json" "$data/old.json"
expect 2 "$t/none.json: no workload with a ratio to compare with" --compare "$t/none.json" "$data/old.json"
expect 2 "(after --exclude, which left out 3 of OLD's workloads)" --compare "$data/old.json" "$data/worse.json" \
  --exclude ''
expect 1 "FAIL: nothing was compared" --compare "$data/old.json" "$data/old.json" --min-baseline 1e9
expect 2 "--tolerance needs --compare" --tolerance 0.5 "$data/old.json"
expect 2 "--out-dir is for writing a report, not for --compare" --compare "$data/old.json" "$data/old.json" \
  --out-dir "$t"
expect 2 "--tolerance must be a number >= 0, got '0x1p-2'" --compare "$data/old.json" "$data/old.json" \
  --tolerance 0x1p-2
expect 2 "unknown option '-x'" --compare "$data/old.json" "$data/old.json" -x
expect 0 "a ratio may grow by 50%" --compare "$data/old.json" "$data/worse.json" --tolerance=0.5
expect 2 "a summary (bench.json), not Google Benchmark output" --out-dir "$t/out" "$data/old.json"
# A usage error shows the synopsis, not the whole help.
out=$("$report" --bogus 2>&1) || true
[[ $(wc -l <<<"$out") -le 5 ]] || fail "a usage error printed more than the synopsis:"$'\n'"$out"

# --out-dir makes nested folders.
cat >"$t/run.json" <<'JSON'
{"context": {}, "benchmarks": [
 {"name": "ours/x/sim/w4/large", "run_name": "ours/x/sim/w4/large", "run_type": "iteration", "real_time": 2, "time_unit": "ms"},
 {"name": "baseline/x/sim/w4/large", "run_name": "baseline/x/sim/w4/large", "run_type": "iteration", "real_time": 1, "time_unit": "ms"}]}
JSON
expect 0 "wrote $t/new/sub/bench.md" --out-dir "$t/new/sub" "$t/run.json"
[[ -f "$t/new/sub/bench.json" ]] || fail "--out-dir $t/new/sub: no bench.json"
expect 2 "is also in a file before this one" --out-dir "$t/twice" "$t/run.json" "$t/run.json"
echo "report_cli: all cases passed"
