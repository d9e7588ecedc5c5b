#!/usr/bin/env bash
# Installs the Debian packages distdl needs that are missing; does nothing when all are present.
# Takes no arguments; needs root or sudo when something is missing.
set -euo pipefail
if [[ $# -gt 0 ]]; then
  [[ "$1" == -h || "$1" == --help ]] && { sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
  echo "install-deps.sh: takes no arguments, got: $* (try --help)" >&2
  exit 2
fi
packages=(g++ cmake make git libopenmpi-dev openmpi-bin libxtensor-dev libxtensor-blas-dev xtl-dev
          libopenblas-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
          libdnnl-dev ocl-icd-opencl-dev opencl-headers)
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
