#!/usr/bin/env bash
# Sets up and runs the main job on the bundled demo draft: installs dependencies, builds a release,
# creates the demo draft if missing, then opens the GUI on it when a display exists; otherwise (or with
# --headless) runs the CLI pipeline (inspect, plan, analyze, quantize, verify) and prints the results.
#   packaging/run.sh [--headless] [--arch glm-dspark] [--scale tiny|full]
set -euo pipefail
cd "$(dirname "$0")/.."

headless=0
arch=glm-dspark
scale=tiny
while [ $# -gt 0 ]; do
  case "$1" in
    --headless) headless=1 ;;
    --arch) arch="$2"; shift ;;
    --scale) scale="$2"; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

packaging/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
cli=build/release/app/cli/sparkulator-cli
gui=build/release/app/gui/sparkulator

demo="demo/$arch-$scale"
if [ ! -f "$demo/config.json" ]; then
  "$cli" demo --arch "$arch" --scale "$scale" --out "$demo"
fi

if [ "$headless" -eq 0 ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec "$gui" "$demo"
fi

preset=auto
case "$arch" in
  laguna-dflash) preset=laguna-dflash ;;
  glm-dspark) preset=glm-dspark-patched ;;
  llama-eagle3) preset=eagle3 ;;
esac
out="demo/$arch-$scale-w4a16"
rm -rf "$out"

step() { printf '\n== %s\n' "$*"; }
step "inspect $demo"
"$cli" inspect "$demo"
step "plan (preset $preset)"
"$cli" plan "$demo" --preset "$preset"
step "analyze (W4A16 g128 round-to-nearest error per tensor)"
"$cli" analyze "$demo"
step "quantize to $out, then verify"
"$cli" quantize "$demo" --preset "$preset" --out "$out"
