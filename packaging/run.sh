#!/usr/bin/env bash
# Sets up and runs the main job: installs dependencies, builds a release, then opens the GUI on a trained
# tiny draft (tests/data/trained) when a display exists; otherwise (or with --headless) runs the CLI
# pipeline on it (inspect, plan, quantize and verify, then offline acceptance of the BF16 draft against the
# plan on the shipped capture of held-out code) and prints the results.
#   packaging/run.sh [--headless] [--draft eagle3|qwen3-dflash|dspark]
#   packaging/run.sh [--headless] --arch laguna-dflash|glm-dspark|qwen3-dflash|llama-eagle3 [--scale tiny|full]
#     (a synthetic demo draft instead: real layouts and sizes, random weights, no acceptance)
set -euo pipefail
cd "$(dirname "$0")/.."

headless=0
draft=eagle3
arch=
scale=tiny
while [ $# -gt 0 ]; do
  case "$1" in
    --headless) headless=1 ;;
    --draft) draft="$2"; shift ;;
    --arch) arch="$2"; shift ;;
    --scale) scale="$2"; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

packaging/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
cli=build/release/app/cli/sparkulator-cli
gui=build/release/app/gui/sparkulator
step() { printf '\n== %s\n' "$*"; }

if [ -n "$arch" ]; then
  source="demo/$arch-$scale"
  if [ ! -f "$source/config.json" ]; then
    "$cli" demo --arch "$arch" --scale "$scale" --out "$source"
  fi
else
  trained=tests/data/trained
  [ -f "$trained/$draft/config.json" ] || { echo "run.sh: no trained draft '$draft' in $trained" >&2; exit 2; }
  source="$trained/$draft"
fi

if [ "$headless" -eq 0 ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec "$gui" "$source"
fi

preset=auto
case "${arch:-$draft}" in
  laguna-dflash) preset=laguna-dflash ;;
  glm-dspark) preset=glm-dspark-patched ;;
  llama-eagle3 | eagle3) preset=eagle3 ;;
esac
out="demo/$(basename "$source")-w4a16"
rm -rf "$out"

step "inspect $source"
"$cli" inspect "$source"
step "plan (preset $preset)"
"$cli" plan "$source" --preset "$preset"
step "quantize to $out, then verify"
"$cli" quantize "$source" --preset "$preset" --out "$out"
if [ -z "$arch" ]; then
  step "offline acceptance on held-out code: the BF16 draft against the plan, paired, k = 4"
  "$cli" acceptance "$source" --hidden-states "$trained/capture" --target-model "$trained/target" \
    --preset "$preset" --k 4 --anchors 2000
else
  step "analyze (W4A16 g128 round-to-nearest error per tensor)"
  "$cli" analyze "$source"
fi
