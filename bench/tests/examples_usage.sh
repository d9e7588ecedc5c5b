#!/usr/bin/env bash
# The examples' command lines, in the folder they were built in ($1): -h and --help print the
# usage to stdout and exit 0; a usage error names the argument on stderr (nothing on stdout) and
# exits 2 (-h exited 2; errors went to stdout and named nothing).
set -euo pipefail
dir=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "examples_usage: $*" >&2; exit 1; }
# check STATUS MESSAGE PROGRAM ARGS...: exits with STATUS; for 0 the usage on stdout and nothing on
# stderr, else MESSAGE and the usage on stderr and nothing on stdout.
check() {
  local want=$1 message=$2 status=0
  shift 2
  "$@" >"$t/out" 2>"$t/err" || status=$?
  local out err
  out=$(<"$t/out") err=$(<"$t/err")
  if ((want == 0)); then
    [[ $status -eq 0 && $out == usage:* && -z $err ]]
  else
    [[ $status -eq $want && -z $out && $err == "$message"$'\n'usage:* ]]
  fi || fail "$*: exit status $status (expected $want)"$'\n'"stdout:"$'\n'"$out"$'\n'"stderr:"$'\n'"$err"
}
for program in broadcast_sim repartition_mpi conv_model linear_model train_model; do
  for help in -h --help; do check 0 "" "$dir/$program" "$help"; done
  check 2 "$dir/$program: unknown argument '--bogus'" "$dir/$program" --bogus
done
for model in conv_model linear_model train_model; do
  check 2 "$dir/$model: --transport takes sim or mpi, not 'tcp'" "$dir/$model" --transport tcp
  check 2 "$dir/$model: --transport needs sim or mpi" "$dir/$model" --transport
  check 2 "$dir/$model: unknown argument 'extra'" "$dir/$model" --transport sim extra
done
echo "examples_usage: all cases passed"
