#!/usr/bin/env bash
# Shows that a restructuring changed no behaviour: runs two builds of sparkulator-cli (before and after) on
# the four tiny demo drafts and compares, byte for byte, `plan --json`, the exported checkpoint (every file),
# `check --json` and `compare --json`. The demos are written once, by the BEFORE build, so both sides read the
# same sources; the AFTER build's demos must equal them byte for byte. The only text normalised is the SIMD
# target's name in quantize's summary line.
#
#   tools/restructure-identity.sh BEFORE_CLI AFTER_CLI [WORKDIR]
#
# Build BEFORE from the commit before the restructuring (e.g. `git worktree add /tmp/before HEAD~1` and a
# release build there). Prints one line per draft and exits 1 on the first difference, showing it.
set -euo pipefail

[ $# -ge 2 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
work=${3:-$(mktemp -d)}
mkdir -p "$work"

run() { # run CLI OUT ARGS...: the stdout and exit status of one command, into OUT
  local cli=$1 out=$2
  shift 2
  local status=0
  "$cli" "$@" >"$out" 2>/dev/null || status=$?
  echo "exit $status" >>"$out"
}

differs=0
for arch in llama-eagle3 qwen3-dflash laguna-dflash glm-dspark; do
  src="$work/$arch"
  [ -d "$src" ] || "$before" demo --arch "$arch" --scale tiny --out "$src" >/dev/null
  rm -rf "$work/after-demo-$arch"
  "$after" demo --arch "$arch" --scale tiny --out "$work/after-demo-$arch" >/dev/null
  if ! diff -r "$src" "$work/after-demo-$arch" >/dev/null; then
    echo "$arch: the demo draft differs"
    diff -r "$src" "$work/after-demo-$arch" | head -20
    exit 1
  fi
  for side in before after; do
    cli=$before
    [ "$side" = after ] && cli=$after
    dir="$work/$side/$arch"
    rm -rf "$dir"
    mkdir -p "$dir"
    run "$cli" "$dir/plan.json" plan "$src" --json
    run "$cli" "$dir/quantize.txt" quantize "$src" --out "$dir/export" \
      --scheme 're:.*mlp\..*=NVFP4A16' --scheme 're:.*o_proj$=W8A16'
    sed -i -E 's/CPU \([A-Za-z0-9_]+\)/CPU (SIMD target)/' "$dir/quantize.txt"
    (cd "$dir/export" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$dir/export.sha256"
    run "$cli" "$dir/check.json" check "$dir/export" --json
    run "$cli" "$dir/compare.json" compare "$src" "$dir/export" --json
    # compare and check name the folder they read: the two sides read different folders.
    sed -i "s#$dir#EXPORT#g" "$dir/check.json" "$dir/compare.json" "$dir/quantize.txt"
  done
  for f in plan.json quantize.txt export.sha256 check.json compare.json; do
    if ! diff -u "$work/before/$arch/$f" "$work/after/$arch/$f" >"$work/$arch-$f.diff"; then
      echo "$arch: $f differs ($work/$arch-$f.diff):"
      head -20 "$work/$arch-$f.diff"
      differs=1
    fi
  done
  [ "$differs" -eq 0 ] && echo "$arch: plan, export, check and compare identical"
  [ "$differs" -eq 0 ] || exit 1
done
echo "identical on the four demo drafts"
