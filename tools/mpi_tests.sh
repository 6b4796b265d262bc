#!/usr/bin/env bash
# Installs MPI (tools/mpi_setup.sh), then runs srcflow across MPI ranks on this machine
# (loopback): tests/mpi_ranks.rs runs `srcflow run` under `mpirun -np 2` and `-np 3` against one
# process. As root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM); the tests set them and
# pass --oversubscribe (more ranks than cores).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$REPO/tools/mpi_setup.sh"
cd "$REPO"
cargo test --release --features mpi --test mpi_ranks "$@"
