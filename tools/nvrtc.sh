#!/usr/bin/env bash
# Idempotently install NVIDIA's runtime compiler (NVRTC) from PyPI under target/nvrtc, so the
# CUDA kernels in crates/srcflow-tensor/kernels/ compile on any machine, GPU or not (the tests of
# crates/srcflow-tensor/src/backend/cuda/kernels.rs find it there).
# Prints the directory holding libnvrtc.so.12 on the last line of stdout:
#   export SRCFLOW_NVRTC_DIR=$(tools/nvrtc.sh | tail -1)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${SRCFLOW_NVRTC_TARGET:-$REPO/target/nvrtc}"
VERSION="12.9.86"
LIB_DIR="$TARGET/nvidia/cuda_nvrtc/lib"

if [ ! -f "$TARGET/.installed-$VERSION" ] || [ ! -e "$LIB_DIR/libnvrtc.so.12" ]; then
    rm -rf "$TARGET"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
        --target "$TARGET" "nvidia-cuda-nvrtc-cu12==$VERSION" >&2
    touch "$TARGET/.installed-$VERSION"
fi

echo "$LIB_DIR"
