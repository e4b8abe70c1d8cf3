#!/usr/bin/env bash
# Device check of the CUDA backend, for a machine with an NVIDIA GPU (sm_90 or sm_121) and nvcc:
#   1. a fresh Release build with -DSPARK_CUDA=ON (the backend is required, not optional),
#   2. tst_cudaparity, which must run on the device: any QSKIP is a failure here,
#   3. throughput: spark-cudabench (fused kernel GB/s on device-resident weights, the device's own
#      cudaMemcpy device-to-device bandwidth as the reference, end-to-end GB/s from host memory), and
#      `sparkulator-cli perf --backend cuda` when the CLI has that option.
# Budget: under 8 minutes on one H200 (build about 2-3 minutes on 16 cores, tests and benchmarks under
# a minute). Usage: packaging/device-check.sh [BUILD_DIR]   (default build/device-check)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${1:-build/device-check}
JOBS=${JOBS:-$(nproc)}
export QT_QPA_PLATFORM=offscreen

step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }
fail() { printf 'device-check: FAILED: %s\n' "$1" >&2; exit 1; }

step "device"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader || true
else
  echo "nvidia-smi not found"
fi
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || fail "nvcc not found"
export PATH="$PATH:/usr/local/cuda/bin"

step "configure (Release, SPARK_CUDA=ON)"
rm -rf "$BUILD"
mkdir -p "$(dirname "$BUILD")" # build/ is not part of a fresh checkout
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
timeout 120 cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSPARK_CUDA=ON \
  -DSPARK_BUILD_GUI=OFF -DBUILD_TESTING=ON >"$BUILD.configure.log" 2>&1 ||
  { tail -40 "$BUILD.configure.log"; fail "configure"; }
grep -E "CUDA" "$BUILD.configure.log" | head -5 || true

step "build"
timeout 300 cmake --build "$BUILD" -j"$JOBS" --target tst_cudaparity sparkulator-cli spark-cudabench \
  >"$BUILD.build.log" 2>&1 || { tail -60 "$BUILD.build.log"; fail "build"; }

step "parity tests (must not skip)"
set +e
timeout 240 "$BUILD/tests/tst_cudaparity" -o "$BUILD.parity.txt,txt" -o "-,txt" >/dev/null 2>&1
rc=$?
set -e
grep -E "^(QINFO|FAIL|XPASS)|Totals" "$BUILD.parity.txt" | head -40 || true
[ "$rc" -eq 0 ] || { grep -A4 "^FAIL" "$BUILD.parity.txt" | head -80; fail "tst_cudaparity exit code $rc"; }
if grep -q "^SKIP" "$BUILD.parity.txt"; then
  grep "^SKIP" "$BUILD.parity.txt" | head -5
  fail "tst_cudaparity skipped tests: no usable CUDA device"
fi

step "kernel and end-to-end throughput (spark-cudabench)"
timeout 120 "$BUILD/core/spark-cudabench" --gib 1 --reps 5 || fail "spark-cudabench"

step "sparkulator-cli perf --backend cuda"
cli="$BUILD/app/cli/sparkulator-cli"
if "$cli" perf --backend cpu --size 0.001 >/dev/null 2>&1; then
  timeout 180 "$cli" perf --backend cuda --size 1 || fail "sparkulator-cli perf --backend cuda"
else
  echo "(this sparkulator-cli perf has no --backend option; spark-cudabench above gives the figures)"
fi

step "done"
echo "device-check: OK"
