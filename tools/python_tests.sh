#!/usr/bin/env bash
# Builds the Python package into the peer venv (tools/python_package.sh) and runs its pytest
# suite (python/tests/), which holds srcflow's Python API to src-method's on the same inputs.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$("$REPO/tools/python_package.sh" | tail -1)"
# The command-line tool, which a test holds `srcflow.report` to.
cargo build --release --quiet --bin srcflow --manifest-path "$REPO/Cargo.toml"
export SRCFLOW_CLI="$REPO/target/release/srcflow"
cd "$REPO/python"
"$PY" -m pytest -q tests "$@"
