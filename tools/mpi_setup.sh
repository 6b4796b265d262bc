#!/usr/bin/env bash
# Installs what `cargo build --features mpi` and `mpirun` need on a Debian machine: Open MPI's
# library, headers and launcher, and libclang (rsmpi generates its bindings with bindgen).
# Does nothing when they are installed already.
set -euo pipefail
PACKAGES=(libopenmpi-dev openmpi-bin libclang-dev)
INSTALLED=$(dpkg-query -W -f='${Status}\n' "${PACKAGES[@]}" 2>/dev/null | grep -c "install ok installed" || true)
if [ "$INSTALLED" -ne "${#PACKAGES[@]}" ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    install() { $SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null; }
    install || { $SUDO apt-get update -qq && install; }
fi
command -v mpirun >/dev/null
