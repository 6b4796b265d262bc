//! Stack shapes for the graph's unit tests.

use crate::train::{LayerShape, StackShape};
use crate::Kind;

/// One MPS of `sites` sites, inner bonds `bond` and physical leg `phys`.
pub fn mps(sites: usize, bond: usize, phys: usize) -> StackShape {
    let bond_at = |cut: bool| if cut { 1 } else { bond };
    let cores = (0..sites)
        .map(|i| [bond_at(i == 0), bond_at(i + 1 == sites), phys, 1])
        .collect();
    let mps = LayerShape {
        name: "psi".into(),
        kind: Kind::Mps,
        cores,
        dtype: Default::default(),
    };
    StackShape { layers: vec![mps] }
}
