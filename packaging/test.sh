#!/usr/bin/env bash
# Sets up and runs every test: installs dependencies, builds the `dev` preset (-Werror) and runs ctest
# (GUI tests on the offscreen platform). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh
cmake --preset dev
cmake --build --preset dev -j "${SPARK_JOBS:-$(nproc)}"
export QT_QPA_PLATFORM=offscreen
ctest --preset dev -j "${SPARK_JOBS:-$(nproc)}"
