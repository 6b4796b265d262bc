#!/usr/bin/env bash
# Builds the Python package (python/) into the peer venv of tools/peer_venv.sh (which holds
# src-method, quimb and NumPy, the tests' references), with maturin and pytest added; prints
# the venv's python on the last line of stdout:
#   PY=$(tools/python_package.sh | tail -1)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$("$REPO/tools/peer_venv.sh" | tail -1)"
if ! "$PY" -c 'import importlib.metadata as m; assert m.version("maturin") == "1.16.0"; assert m.version("pytest") == "9.2.0"' 2>/dev/null; then
    "$PY" -m pip install --quiet --disable-pip-version-check 'maturin==1.16.0' 'pytest==9.2.0' >&2
fi
VENV="$(dirname "$(dirname "$PY")")"
VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" \
    "$VENV/bin/maturin" develop --release --quiet --manifest-path "$REPO/python/Cargo.toml" >&2
echo "$PY"
