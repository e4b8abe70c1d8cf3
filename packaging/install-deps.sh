#!/usr/bin/env bash
# Installs the Debian 12 packages Sparkulator needs to build, test and run. Idempotent: installs only
# what is missing. Needs root or sudo when something is missing.
#   packaging/install-deps.sh [--reference]   # --reference: also the Python reference tooling's packages
#                                              # (tools/reference: PyTorch, numpy, scipy, SentencePiece, and
#                                              # OpenBLAS, without which torch multiplies with the netlib BLAS)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libgl-dev
  nlohmann-json3-dev libqcustomplot-dev libhwy-dev libboost-math-dev libeigen3-dev
  xdg-utils
)
if [ "${1:-}" = "--reference" ]; then
  packages+=(python3-torch python3-numpy python3-scipy python3-sentencepiece libopenblas0-pthread)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
