#!/usr/bin/env bash
# aarch64 (DGX Spark's Grace CPU) as a tested platform, on an x86-64 Debian 12 machine:
#   1. installs what is missing: the cross compiler and qemu-user-static (apt, after a dry run that must
#      neither remove nor upgrade an installed package), and the arm64 libraries the core, the CLI and the
#      core tests need (Qt 6 Core/Test, Highway, Boost headers, nlohmann-json), unpacked from their arm64
#      .debs into a sysroot folder (see "Why a sysroot" below);
#   2. cross-builds the core, the CLI and the tests it runs (no GUI, no CUDA) with packaging/aarch64.cmake;
#   3. runs everything under qemu-user with SPARK_THREADS=1 (no thread is ever started) and a hard timeout
#      per command, once per CPU model: cortex-a72 (NEON), and `max` with SVE vector lengths of 128, 256
#      and 512 bits, so that Highway's runtime dispatch takes four different code paths
#      (NEON, SVE2_128, SVE_256, SVE2: printed below from `sparkulator-cli perf`):
#        a. the tests of the SIMD kernels against their scalar definitions (quantize, pack, decode,
#           statistics, the BF16 and FP32 GEMMs) and the forward's logits on the trained drafts against the
#           PyTorch reference's (GEMMs and attention on each target);
#        b. a golden run: every scheme exported, verified and analyzed (--json) on the golden fixtures, the
#           searching roundings (mse, range), a demo draft of every architecture with its preset, check,
#           compare and sweep; every output file (and the exit status of every command) must be
#           byte-identical to an x86-64 run of the same commands.
#      Every other test (files, plans, the allocator, GPTQ, the CLI, the fuzz replays) exercises no code
#      that differs by instruction set beyond what a. and b. compare, and runs natively (packaging/test.sh);
#   4. packs the cross build into an arm64 .deb (cpack), unpacks it and runs its CLI (demo, quantize,
#      verify) under qemu.
# The last line is the summary, e.g.
#   aarch64: 32 tests passed; outputs byte-identical on NEON, SVE128, SVE256, SVE512
# and the exit status is non-zero on any failure or difference. HACKING.md gives its time.
#
# Why a sysroot: with dpkg multiarch, qt6-base-dev:arm64 & co. are Multi-Arch: same, so apt must bring every
# shared amd64 library (libc6, zlib1g, libglib2.0-0, libssl3, systemd, mesa, ...) to exactly the arm64
# package's version: on a machine that is not fully upgraded it upgrades dozens of installed amd64
# packages, which this script never does. The .debs unpacked into SPARK_AARCH64_SYSROOT leave the system
# untouched; packaging/aarch64.cmake also works with a real multiarch installation (no sysroot given).
#
# Environment: SPARK_JOBS (parallel build jobs and emulated runs, default nproc), SPARK_AARCH64_BUILD
# (default build/aarch64), SPARK_AARCH64_SYSROOT (default build/aarch64-sysroot), SPARK_X86_CLI (x86 reference
# CLI; default build/dev's when it is newer than every source, else one built in build/x86-ref).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

build=${SPARK_AARCH64_BUILD:-build/aarch64}
sysroot=${SPARK_AARCH64_SYSROOT:-build/aarch64-sysroot}
jobs=${SPARK_JOBS:-$(nproc)}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
case "$sysroot" in /*) ;; *) sysroot="$root/$sysroot" ;; esac
logs="$build/logs"
work="$build/golden"
started=$SECONDS

step() { printf '\n== %s (%ss)\n' "$1" "$((SECONDS - started))"; }
fail() {
  printf 'test-aarch64: FAILED: %s\n' "$1" >&2
  printf 'aarch64: FAILED: %s\n' "$1"
  exit 1
}

# The four CPU models: name, QEMU_CPU value. `sve-default-vector-length` is in bytes (qemu >= 6.0 user mode).
models=(NEON SVE128 SVE256 SVE512)
# shellcheck disable=SC2054 # the commas belong to the QEMU_CPU values
declare -A qemu_cpu=(
  [NEON]=cortex-a72
  [SVE128]=max,sve-default-vector-length=16
  [SVE256]=max,sve-default-vector-length=32
  [SVE512]=max,sve-default-vector-length=64
)
schemes=(W4A16 W4A16:g32 W4A16:g64 W4A16:channel W4A16_ASYM W8A16 W8A16:channel FP8_DYNAMIC NVFP4A16)
# The tests of the SIMD kernels (Highway targets against scalar definitions and golden vectors; the BF16 and
# FP32 GEMMs against exact sums) and of the forward against the PyTorch reference's logits: they run under
# every CPU model, since each model takes another dispatch path (and the Highway tests also run every other
# target the model supports). Only these are built and run here: every other test exercises the pipeline
# around the kernels (files, plans, sweeps, the allocator, GPTQ, the CLI), whose outputs the golden run
# compares byte for byte on all four models, and runs natively in packaging/test.sh.
kernel_tests=(tst_quantgolden tst_quantpack tst_quantsimd tst_roundinggolden tst_schemegolden tst_statssample
  tst_bf16gemm tst_forwardgolden)
architectures=(laguna-dflash glm-dspark qwen3-dflash llama-eagle3)
test_timeout=900 # one emulated test executable
cli_timeout=300  # one emulated CLI command

# ---------------------------------------------------------------------------------------------------------
step "host packages"
packaging/install-deps.sh # the native build (x86 reference CLI, Qt's host tools moc/rcc)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# Installs packages only after a dry run showed that apt neither removes nor upgrades anything installed.
# Returns 1 (installing nothing) when it would.
safe_install() {
  local sim
  sim=$(apt-get install -s -q --no-install-recommends "$@" 2>&1) || {
    echo "$sim" | tail -5
    return 1
  }
  if echo "$sim" | grep -qE '^(Remv |Inst [^ ]+ \[)'; then
    echo "test-aarch64: not installing $*: apt would remove or upgrade installed packages:"
    echo "$sim" | grep -E '^(Remv |Inst [^ ]+ \[)' | head -10 | sed 's/^/  /'
    return 1
  fi
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

need=$(missing qemu-user-static)
if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
  need="$need $(missing crossbuild-essential-arm64)"
fi
if [ -n "${need// /}" ]; then
  if ! apt-cache policy qemu-user-static | grep -q 'Candidate: [0-9]'; then
    "${sudo_cmd[@]}" apt-get update -qq
  fi
  # crossbuild-essential-arm64 also brings dpkg-cross, which needs a newer perl than a machine installed from
  # an older point release may have; then only the compilers it stands for (all this build needs).
  # shellcheck disable=SC2086
  if ! safe_install $need; then
    need=${need//crossbuild-essential-arm64/gcc-aarch64-linux-gnu g++-aarch64-linux-gnu}
    # shellcheck disable=SC2086
    safe_install $need || fail "cannot install $need without touching installed packages"
  fi
fi
command -v aarch64-linux-gnu-g++ >/dev/null || fail "aarch64-linux-gnu-g++ not found"
command -v qemu-aarch64-static >/dev/null || fail "qemu-aarch64-static not found"
qemu-aarch64-static --version | head -1

# ---------------------------------------------------------------------------------------------------------
step "arm64 sysroot $sysroot"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
  "${sudo_cmd[@]}" apt-get update -qq
elif ! apt-cache show libqt6core6:arm64 >/dev/null 2>&1; then
  "${sudo_cmd[@]}" apt-get update -qq
fi
# Runtime libraries with everything they depend on, then headers and CMake packages without their
# dependencies (qt6-base-dev would pull the GUI, GL and Vulkan stacks), qmake6 for Qt's mkspecs.
runtime=(libc6 libgcc-s1 libstdc++6 libqt6core6 libqt6test6 libhwy1)
headers=(qt6-base-dev:arm64 qmake6:arm64 libhwy-dev:arm64 libboost1.74-dev:arm64 nlohmann-json3-dev libeigen3-dev)
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${runtime[@]/%/:arm64}" | grep -E '^[a-z0-9][^ <>]*:arm64$' | sort -u)
[ ${#closure[@]} -gt 5 ] || fail "apt-cache depends found no arm64 packages (apt-get update?)"
packages=("${closure[@]}" "${headers[@]}")
# One apt-cache call for all of them (one per package took over a minute).
manifest=$(apt-cache show --no-all-versions "${packages[@]}" 2>/dev/null |
  awk '/^Package:/ {p = $2} /^Architecture:/ {a = $2} /^Version:/ {v = $2} /^$/ {if (p != "") print p ":" a " " v; p = ""}' |
  sort -u)
if [ -f "$sysroot/.packages" ] && [ "$(cat "$sysroot/.packages")" = "$manifest" ]; then
  echo "sysroot up to date (${#packages[@]} packages)"
else
  rm -rf "$sysroot.tmp" "$sysroot.debs"
  mkdir -p "$sysroot.tmp" "$sysroot.debs"
  apt_opts=(-q)
  [ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)
  (cd "$sysroot.debs" && apt-get download "${apt_opts[@]}" "${packages[@]}" >/dev/null) ||
    fail "apt-get download of the arm64 packages"
  for deb in "$sysroot.debs"/*.deb; do
    dpkg-deb -x "$deb" "$sysroot.tmp"
  done
  echo "$manifest" >"$sysroot.tmp/.packages"
  rm -rf "$sysroot" "$sysroot.debs"
  mv "$sysroot.tmp" "$sysroot"
  echo "unpacked ${#packages[@]} arm64 packages"
fi

# ---------------------------------------------------------------------------------------------------------
step "cross-build (Release, no GUI, no CUDA) in $build"
mkdir -p "$build"
timeout 600 cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/packaging/aarch64.cmake" \
  -DSPARK_AARCH64_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=Release -DSPARK_BUILD_GUI=OFF -DSPARK_CUDA=OFF \
  -DBUILD_TESTING=ON -DSPARK_WERROR=ON >"$build/configure.log" 2>&1 ||
  { tail -40 "$build/configure.log"; fail "configure"; }
timeout 3600 nice cmake --build "$build" -j"$jobs" --target sparkulator-cli tst_parallel "${kernel_tests[@]}" \
  >"$build/build.log" 2>&1 ||
  { grep -E -A5 'error|FAILED' "$build/build.log" | head -60; fail "cross-build"; }
arm_cli="$build/app/cli/sparkulator-cli"
readelf -h "$arm_cli" | grep -q 'Machine:.*AArch64' || fail "$arm_cli is not an aarch64 executable"

# ---------------------------------------------------------------------------------------------------------
step "x86-64 reference CLI"
x86_cli=${SPARK_X86_CLI:-}
if [ -z "$x86_cli" ]; then
  dev_cli=build/dev/app/cli/sparkulator-cli
  # build/dev (packaging/test.sh) is used only when it was built after the last change of any source.
  if [ -x "$dev_cli" ] && [ -z "$(find core app/cli CMakeLists.txt -newer "$dev_cli" -print -quit)" ]; then
    x86_cli="$root/$dev_cli"
  else
    timeout 600 cmake -S . -B build/x86-ref -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARK_BUILD_GUI=OFF \
      -DSPARK_CUDA=OFF -DBUILD_TESTING=OFF >"$build/x86-ref.configure.log" 2>&1 ||
      { tail -40 "$build/x86-ref.configure.log"; fail "configure of the x86 reference"; }
    timeout 3600 nice cmake --build build/x86-ref -j"$jobs" --target sparkulator-cli \
      >"$build/x86-ref.build.log" 2>&1 || { tail -40 "$build/x86-ref.build.log"; fail "x86 reference build"; }
    x86_cli="$root/build/x86-ref/app/cli/sparkulator-cli"
  fi
fi
echo "$x86_cli"

# Everything emulated: libraries from the sysroot, one thread, child CLIs of the tests through qemu too.
export QEMU_LD_PREFIX="$sysroot" SPARK_THREADS=1 SPARK_TEST_EMULATOR=qemu-aarch64-static
export QT_QPA_PLATFORM=offscreen
emulate() { # MODEL TIMEOUT PROGRAM ARGS...
  local model=$1 limit=$2
  shift 2
  QEMU_CPU=${qemu_cpu[$model]} timeout -k 10 "$limit" qemu-aarch64-static "$@"
}

# ---------------------------------------------------------------------------------------------------------
step "SIMD target per CPU model, no thread under SPARK_THREADS=1"
for m in "${models[@]}"; do
  perf=$(emulate "$m" 120 "$arm_cli" perf --size 0.001 --backend cpu 2>&1) ||
    { echo "$perf" | tail -5; fail "sparkulator-cli perf under QEMU_CPU=${qemu_cpu[$m]}"; }
  line=$(echo "$perf" | grep -m1 'SIMD target') || fail "perf printed no SIMD target"
  target=${line##*SIMD target }
  printf '%-7s QEMU_CPU=%-34s Highway target %s\n' "$m" "${qemu_cpu[$m]}" "$target"
  case "$m:$target" in
    NEON:NEON | SVE*:SVE*) ;;
    *) fail "$m ran the Highway target $target (runtime dispatch does not reach NEON/SVE)" ;;
  esac
done
rm -rf "$build/threadcheck"
mkdir -p "$build/threadcheck"
emulate SVE256 120 "$arm_cli" demo --arch glm-dspark --scale tiny --out "$build/threadcheck/src" >/dev/null
# qemu's -strace log names every clone(); a thread is a clone with CLONE_THREAD. The tests run with
# -callgrindchild: Qt Test's private option that leaves out its watchdog thread (QTest::WatchDog).
QEMU_CPU=max timeout 300 qemu-aarch64-static -strace "$arm_cli" quantize "$build/threadcheck/src" \
  --out "$build/threadcheck/q" >/dev/null 2>"$build/threadcheck/cli.strace" || fail "quantize under -strace"
QEMU_CPU=max timeout 300 qemu-aarch64-static -strace "$build/tests/tst_parallel" -callgrindchild \
  >/dev/null 2>"$build/threadcheck/test.strace" || fail "tst_parallel under -strace"
if grep -l CLONE_THREAD "$build/threadcheck/"*.strace; then
  fail "a thread was started under SPARK_THREADS=1 (see the files above)"
fi
echo "no clone(CLONE_THREAD) in quantize or tst_parallel"

# ---------------------------------------------------------------------------------------------------------
step "SIMD kernel and forward tests under qemu (${models[*]})"
rm -rf "$logs"
mkdir -p "$logs"
for name in "${kernel_tests[@]}"; do
  [ -x "$build/tests/$name" ] || fail "kernel test $name was not built"
done

run_test() { # MODEL NAME: exit status in $logs/MODEL/NAME.rc
  local m=$1 name=$2 dir="$logs/$1" rc=0
  emulate "$m" "$test_timeout" "$build/tests/$name" -callgrindchild >"$dir/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$dir/$name.rc"
}
# A simple job pool: at most $jobs emulated processes at once.
pool_wait() {
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
}
# Jobs as "MODEL NAME", SVE models first (qemu emulates them about 3x slower than NEON), so that the pool's
# jobs end together.
queue=()
for m in SVE512 SVE256 SVE128 NEON; do
  mkdir -p "$logs/$m"
  for name in "${kernel_tests[@]}"; do
    queue+=("$m $name")
  done
done
for job in "${queue[@]}"; do
  read -r m name <<<"$job"
  pool_wait
  run_test "$m" "$name" &
done
wait
passed=0
failed=()
for m in "${models[@]}"; do
  for f in "$logs/$m"/*.rc; do
    name=$(basename "$f" .rc)
    if [ "$(cat "$f")" = 0 ]; then
      passed=$((passed + 1))
    else
      failed+=("$name@$m (exit $(cat "$f"))")
      # A test killed by its timeout prints no Totals line: nothing to grep is not an error here.
      { grep -E '^(FAIL!|   Loc:)|Totals' "$logs/$m/$name.log" || true; } | head -12 | sed "s/^/  $m $name: /"
    fi
  done
  printf '%-7s %s test executables, %s\n' "$m" "$(find "$logs/$m" -name '*.rc' | wc -l)" \
    "$(cat "$logs/$m"/*.log | awk '/^Totals:/ {p += $2; f += $4; s += $6} END {print p " functions passed, " f " failed, " s " skipped"}')"
done

# ---------------------------------------------------------------------------------------------------------
step "golden run: x86-64 reference and ${models[*]}"
# Every side runs the same commands with the same relative paths in its own folder, so that outputs
# naming their input or output folder (analyze's "path", the model card's title and base_model) are equal.
# Normalised, nothing else: the CPU backend's name in quantize's summary line ("CPU (AVX3)" vs "CPU (SVE2)")
# says which SIMD target ran, which differs by design; sweep's timing fields (below).
golden_side() { # SIDE: runs every command with $cli (an array) in $work/SIDE
  local dir="$work/$1" a s tag
  mkdir -p "$dir"
  cp -r tests/data/golden/fixture "$dir/g4"
  cp -r tests/data/golden-schemes/fixture "$dir/gs"
  cp -r tests/data/golden-schemes/mixed-example "$dir/mixed"
  cd "$dir"
  run() { # NAME ARGS...: stdout, stderr and exit status of one command
    local name=$1 rc=0
    shift
    "${cli[@]}" "$@" >"$name.out" 2>"$name.err" || rc=$?
    sed -i -E 's/CPU \([A-Za-z0-9_]+\)/CPU (SIMD target)/' "$name.out" "$name.err"
    echo "$name $rc" >>status.txt
  }
  # A demo draft of every architecture under its preset's plan (a scheme per module; the kernels are the
  # ones the fixtures below run under every scheme).
  for a in "${architectures[@]}"; do
    run "demo-$a" demo --arch "$a" --scale tiny --out "demo-$a"
    run "quantize-$a" quantize "demo-$a" --out "q-$a" --backend cpu --no-verify
    run "verify-$a" verify "demo-$a" "q-$a" --json --backend cpu
  done
  for s in "${schemes[@]}"; do
    tag="gs-${s//:/-}"
    run "quantize-$tag" quantize gs --scheme "Linear=$s" --out "q-$tag" --backend cpu --no-verify
    run "verify-$tag" verify gs "q-$tag" --json --backend cpu
    run "analyze-$tag" analyze gs --scheme "$s" --json --backend cpu
  done
  # The range searches of the searching roundings: EAGLE-3's preset (W4A16), and the asymmetric and NVFP4
  # families of the golden-schemes fixture (independent ends; a global scale from shrunk statistics).
  for r in mse range; do
    run "quantize-eagle3-$r" quantize demo-llama-eagle3 --rounding "$r" --out "q-eagle3-$r" --backend cpu \
      --no-verify
    run "verify-eagle3-$r" verify demo-llama-eagle3 "q-eagle3-$r" --json --backend cpu
    for s in W4A16_ASYM NVFP4A16; do
      tag="gs-$r-$s"
      run "quantize-$tag" quantize gs --scheme "Linear=$s" --rounding "$r" --out "q-$tag" --backend cpu --no-verify
      run "verify-$tag" verify gs "q-$tag" --json --backend cpu
    done
  done
  run quantize-g4 quantize g4 --out q-g4 --backend cpu --no-verify
  run verify-g4 verify g4 q-g4 --json --backend cpu
  run analyze-g4 analyze g4 --json --backend cpu
  # The mixed example's regexes name the draft layer as 32: a target model of 32 layers.
  run check-mixed check mixed --target-layers 32 --json
  run compare-mixed compare gs mixed --json --backend cpu
  # The sensitivity sweep's error figures must match too; its "seconds" and "gbps" fields time the run
  # (emulated: meaningless) and are blanked on every side.
  for a in gs g4 demo-llama-eagle3; do
    run "sweep-$a" sweep "$a" --json
    sed -i -E 's/^( *"(seconds|gbps)": ).*$/\1"(timing, not compared)",/' "sweep-$a.out"
  done
}
rm -rf "$work"
mkdir -p "$work"
(
  cli=("$x86_cli")
  golden_side x86
) >"$logs/golden-x86.log" 2>&1 &
for m in "${models[@]}"; do
  pool_wait
  (
    cli=(env "QEMU_CPU=${qemu_cpu[$m]}" timeout -k 10 "$cli_timeout" qemu-aarch64-static "$arm_cli")
    golden_side "$m"
  ) >"$logs/golden-$m.log" 2>&1 &
done
wait
commands=$(wc -l <"$work/x86/status.txt")
refused=$(awk '$2 != 0' "$work/x86/status.txt" | wc -l)
echo "x86-64: $commands commands, $refused refused or failed (the same must hold on every model):"
awk '$2 != 0 {print "  " $0}' "$work/x86/status.txt" | head -20
[ "$(awk '$1 ~ /^verify-/ && $2 != 0' "$work/x86/status.txt" | wc -l)" = 0 ] ||
  fail "verify failed on the x86 reference itself"
identical=()
different=()
for m in "${models[@]}"; do
  files=$(cd "$work/x86" && find . -type f | wc -l)
  if diff -r -q "$work/x86" "$work/$m" >"$logs/diff-$m.txt" 2>&1; then
    identical+=("$m")
    echo "$m: $files files byte-identical to x86-64"
  else
    different+=("$m")
    echo "$m: $(wc -l <"$logs/diff-$m.txt") of $files files differ from x86-64:"
    head -15 "$logs/diff-$m.txt" | sed 's/^/  /'
  fi
done

# ---------------------------------------------------------------------------------------------------------
step "arm64 .deb (cpack) and its CLI under qemu"
deb_ok=1
rm -f "$build"/sparkulator_*_arm64.deb
(cd "$build" && timeout 600 cpack -G DEB >"$build/cpack.log" 2>&1) || { tail -20 "$build/cpack.log"; deb_ok=0; }
deb=$(find "$build" -maxdepth 1 -name 'sparkulator_*_arm64.deb' | head -1)
if [ "$deb_ok" = 1 ] && [ -n "$deb" ]; then
  dpkg-deb -f "$deb" Package Version Architecture Depends | sed 's/^/  /'
  rm -rf "$build/deb-root" "$build/deb-check"
  dpkg-deb -x "$deb" "$build/deb-root"
  mkdir -p "$build/deb-check"
  packaged="$build/deb-root/usr/bin/sparkulator-cli"
  { emulate SVE512 "$cli_timeout" "$packaged" demo --arch qwen3-dflash --scale tiny --out "$build/deb-check/src" &&
    emulate SVE512 "$cli_timeout" "$packaged" quantize "$build/deb-check/src" --out "$build/deb-check/w4" --no-verify &&
    emulate NEON "$cli_timeout" "$packaged" verify "$build/deb-check/src" "$build/deb-check/w4"; } \
    >"$logs/deb-check.log" 2>&1 || deb_ok=0
  tail -1 "$logs/deb-check.log" | sed 's/^/  /'
else
  deb_ok=0
fi
[ "$deb_ok" = 1 ] && echo "${deb#"$root"/}: demo, quantize, verify OK" || echo "arm64 .deb check FAILED"

# ---------------------------------------------------------------------------------------------------------
step "summary"
summary="aarch64: $passed tests passed"
status=0
if [ ${#failed[@]} -gt 0 ]; then
  summary+=", ${#failed[@]} failed (${failed[*]})"
  status=1
fi
if [ ${#different[@]} -eq 0 ]; then
  list="${identical[*]}"
  summary+="; outputs byte-identical on ${list// /, }"
else
  summary+="; outputs differ from x86-64 on ${different[*]} (see $logs/diff-*.txt)"
  [ ${#identical[@]} -gt 0 ] && summary+=", byte-identical on ${identical[*]}"
  status=1
fi
if [ "$deb_ok" != 1 ]; then
  summary+="; arm64 .deb check failed"
  status=1
fi
echo "$summary"
exit "$status"
