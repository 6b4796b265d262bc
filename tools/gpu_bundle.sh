#!/usr/bin/env bash
# Builds, here, what tools/gpu_check.sh runs on a GPU machine that has no Rust: the srcflow binary,
# the test binaries that exercise the CUDA backend and the GPU GEMM-rate benchmark, stripped, in target/gpu-bundle (about
# 30 MB; carry that folder to the GPU machine).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
BUNDLE="$REPO/target/gpu-bundle"
cargo build --release --quiet
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE"
cp target/release/srcflow "$BUNDLE/srcflow"
for test in backend_conformance cuda_backend; do
    binary=$(cargo test --release --no-run --test "$test" --message-format=json 2>/dev/null |
        python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
    cp "$binary" "$BUNDLE/$test"
done
binary=$(cargo bench --no-run --bench gpu_gemm_rate --message-format=json 2>/dev/null |
    python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
cp "$binary" "$BUNDLE/gpu_gemm_rate"
strip "$BUNDLE"/*
du -sh "$BUNDLE"
