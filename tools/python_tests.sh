#!/usr/bin/env bash
# Builds the Python package into the peer venv (tools/python_package.sh) and runs its pytest
# suite (python/tests/), which holds srcflow's Python API to src-method's on the same inputs.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$("$REPO/tools/python_package.sh" | tail -1)"
cd "$REPO/python"
"$PY" -m pytest -q tests "$@"
