#!/usr/bin/env bash
# Export throughput against the I/O floor, per scheme. For each scheme it runs, in alternation, the floor
# (read every source safetensors file, write as many bytes as the export writes, sync) and the export
# (`quantize --scheme 'MODULES=S' --no-verify`, which fsyncs its output; MODULES: what the presets quantize), and prints both times and their
# ratio per pair. The machine's disk makes anything with sync noisy, hence pairs, not one figure.
# usage: packaging/bench-export.sh CLI DRAFT [PAIRS] [SCHEME...]   (default: 2 pairs, five schemes)
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 CLI DRAFT [PAIRS] [SCHEME...]" >&2
  exit 2
fi
cli=$1
draft=$2
pairs=${3:-2}
shift $(($# < 3 ? $# : 3))
schemes=("$@")
[ ${#schemes[@]} -gt 0 ] || schemes=(W4A16 W4A16_ASYM W8A16 FP8_DYNAMIC NVFP4A16)

work=$(mktemp -d "${TMPDIR:-/tmp}/sparkulator-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

seconds() { # runs "$@" and prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

floor() { # $1: bytes to write
  cat "$draft"/*.safetensors >/dev/null
  head -c "$1" /dev/zero >"$work/floor.bin"
  sync
  rm -f "$work/floor.bin"
}

# What the presets quantize (MLP, o_proj, fc), as one scheme rule; SPARK_BENCH_MODULES overrides it.
modules=${SPARK_BENCH_MODULES:-'re:.*(mlp\..*|o_proj|fc)$'}

export_once() { # $1: scheme
  rm -rf "$work/out"
  "$cli" quantize "$draft" --out "$work/out" --scheme "$modules=$1" --no-verify
}

echo "draft: $draft ($(du -sh "$draft" | cut -f1)), $pairs pairs per scheme"
for scheme in "${schemes[@]}"; do
  export_once "$scheme" >/dev/null 2>&1 # warm-up, and the size the floor writes
  bytes=$(du -sb "$work/out" | cut -f1)
  line="$scheme: output $(numfmt --to=iec "$bytes")"
  ratios=()
  for _ in $(seq "$pairs"); do
    f=$(seconds floor "$bytes")
    e=$(seconds export_once "$scheme" 2>/dev/null)
    ratios+=("$(awk -v e="$e" -v f="$f" 'BEGIN { printf "%.2f", e / f }')")
    line+="; export $e s / floor $f s = ${ratios[-1]}"
  done
  # The median pair: one slow sync (the disk is shared) moves a single pair, not the figure.
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')
  echo "$line; median $median"
done
