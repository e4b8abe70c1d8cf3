#!/usr/bin/env bash
# Sets up and runs every test: installs dependencies, builds the `dev` preset (-Werror) and runs ctest
# (GUI tests on the offscreen platform). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh --reference
# The reference checks of the trained drafts must run here, not skip.
export SPARK_REFERENCE_REQUIRED=1
# The CUDA backend is built whenever the toolkit is installed (SPARK_CUDA=AUTO), so it never rots;
# /usr/local/cuda is the toolkit's standard location even when it is not on PATH.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi
cmake --preset dev
cmake --build --preset dev -j "${SPARK_JOBS:-$(nproc)}"
export QT_QPA_PLATFORM=offscreen
ctest --preset dev -j "${SPARK_JOBS:-$(nproc)}"
