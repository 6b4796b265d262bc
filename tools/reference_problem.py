#!/usr/bin/env python3
"""Writes the seed's reference-size problem as a problem directory for `srcflow simulate`.

The stack N·V·M·U of Pauli-transfer-matrix MPOs (physical dimension 4) on 50 sites: M of bond
4000, N, V and U of bond 4 — 183.5 GiB of complex128 input, and environments of
2000 × 4000 × 4 × 4 × 4 × 16 B = 7.6 GiB at chi_out 2000, as in REFERENCE.md. Each core is a
valid .npy header followed by a sparse payload (a hole the size of the data), so the directory
takes almost no disk and `srcflow simulate`, which reads headers only, sees the real shapes.
Nothing but the simulator should read it.

    tools/reference_problem.py DIR [--sites 50] [--bond 4000] [--small-bond 4] [--phys 4]
"""
import argparse
import json
import os
import struct


def header(shape):
    """The bytes of a version-1 .npy header for a C-ordered complex128 array of `shape`."""
    text = "{'descr': '<c16', 'fortran_order': False, 'shape': (%s), }" % "".join(
        f"{d}, " for d in shape
    )
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def mpo_shape(site, sites, bond, phys):
    """A quimb-layout MPO core: first (r, u, d), bulk (l, r, u, d), last (l, u, d)."""
    if site == 0:
        return (bond, phys, phys)
    if site == sites - 1:
        return (bond, phys, phys)
    return (bond, bond, phys, phys)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--sites", type=int, default=50)
    parser.add_argument("--bond", type=int, default=4000)
    parser.add_argument("--small-bond", type=int, default=4)
    parser.add_argument("--phys", type=int, default=4)
    args = parser.parse_args()
    os.makedirs(args.dir)
    layers = [("N", args.small_bond), ("V", args.small_bond), ("M", args.bond), ("U", args.small_bond)]
    manifest = {"format": "srcflow/1", "layers": [{"name": n, "kind": "mpo"} for n, _ in layers]}
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    total = 0
    for name, bond in layers:
        os.makedirs(os.path.join(args.dir, name))
        for site in range(args.sites):
            shape = mpo_shape(site, args.sites, bond, args.phys)
            data = 16
            for d in shape:
                data *= d
            path = os.path.join(args.dir, name, f"{site:05d}.npy")
            with open(path, "wb") as f:
                head = header(shape)
                f.write(head)
                f.truncate(len(head) + data)
            total += data
    print(f"{args.dir}: {len(layers)} layers, {args.sites} sites, {total / 2**30:.1f} GiB of input (sparse)")


if __name__ == "__main__":
    main()
