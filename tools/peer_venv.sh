#!/usr/bin/env bash
# Idempotently create the peer-benchmark virtualenv holding src-method==0.5.0, quimb==1.16.0 and
# numpy 2.4.6.
# Prints the venv's python path on the last line of stdout:
#   PY=$(tools/peer_venv.sh | tail -1)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SRCFLOW_PEER_VENV:-$REPO/target/peer-venv}"
PY="$VENV/bin/python"

# Create the venv only when missing (or broken: no python, or no pip in it).
if [ ! -x "$PY" ] || ! "$PY" -m pip --version >/dev/null 2>&1; then
    python3 -m venv "$VENV" >&2   # on a half-made venv this puts pip back
fi

# Install only when the pinned version is not already importable.
if ! "$PY" -c 'import importlib.metadata as m, numpy; assert m.version("src-method") == "0.5.0"; assert m.version("quimb") == "1.16.0"; assert m.version("numpy") == "2.4.6"' 2>/dev/null; then
    "$PY" -m pip install --quiet --disable-pip-version-check 'src-method==0.5.0' 'quimb==1.16.0' 'numpy==2.4.6' >&2
fi

echo "$PY"
