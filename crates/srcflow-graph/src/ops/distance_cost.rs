//! What [`distance`](super::distance) between two stacks' exact products costs, from shapes
//! alone: the products' cores (bonds multiply) and the QR sweep over their difference.

use crate::train::StackShape;
use srcflow_tensor::kernels::qr_flops;

/// The estimated cost of comparing the exact products of two stacks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceCost {
    /// Bytes of both products' complex128 cores.
    pub bytes: u64,
    /// Real flops of contracting the products and of the QR sweep (an estimate).
    pub flops: f64,
    /// The largest bond of either product.
    pub max_bond: usize,
}

impl DistanceCost {
    /// The cost of `distance(exact product of a, exact product of b)`; a one-layer stack is its
    /// own train and costs no contraction.
    pub fn of(a: &StackShape, b: &StackShape) -> DistanceCost {
        let (bonds_a, bonds_b) = (product_bonds(a), product_bonds(b));
        let sites = a.sites().min(b.sites());
        let mut cost = DistanceCost {
            bytes: 0,
            flops: contraction_flops(a) + contraction_flops(b),
            max_bond: bonds_a.iter().chain(&bonds_b).copied().max().unwrap_or(1),
        };
        for site in 0..sites {
            let (up, down) = a.output_phys(site);
            let phys = up.saturating_mul(down);
            for bonds in [&bonds_a, &bonds_b] {
                let elements = bonds[site]
                    .saturating_mul(bonds[site + 1])
                    .saturating_mul(phys);
                cost.bytes = cost.bytes.saturating_add(elements as u64 * 16);
            }
            let left = bonds_a[site].saturating_add(bonds_b[site]);
            let right = bonds_a[site + 1].saturating_add(bonds_b[site + 1]);
            let rows = left.saturating_mul(phys);
            let carry = 8.0 * left as f64 * rows as f64 * right as f64;
            cost.flops += carry + qr_flops(rows, right);
        }
        cost
    }
}

/// The exact product's bonds, with 1 at both ends: `sites + 1` of them.
fn product_bonds(stack: &StackShape) -> Vec<usize> {
    let cut = |site: usize| {
        let bonds = stack.layers.iter().map(|l| l.cores[site][1]);
        bonds.fold(1, usize::saturating_mul)
    };
    let inner = (0..stack.sites() - 1).map(cut);
    std::iter::once(1).chain(inner).chain([1]).collect()
}

/// Real flops of contracting every site of `stack` into one core: each product element sums
/// over the legs joining the layers (none for one layer).
fn contraction_flops(stack: &StackShape) -> f64 {
    if stack.layers.len() < 2 {
        return 0.0;
    }
    let bonds = product_bonds(stack);
    (0..stack.sites())
        .map(|site| {
            let (up, down) = stack.output_phys(site);
            let joined: f64 = stack.layers[1..]
                .iter()
                .map(|l| l.cores[site][2] as f64)
                .product();
            let elements = bonds[site] as f64 * bonds[site + 1] as f64 * (up * down) as f64;
            8.0 * elements * joined
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{random_mpo, random_mps};
    use crate::train::Stack;

    /// MPO (bond `mpo`) · MPS (bond `mps`) on `sites` sites of dimension 2.
    fn stack(sites: usize, mpo: usize, mps: usize) -> StackShape {
        let trains = [
            &random_mpo(sites, 2, 2, mpo, 0.5, 1),
            &random_mps(sites, 2, mps, 0.5, 2),
        ];
        Stack::of_trains(&trains).unwrap().shape()
    }

    #[test]
    fn the_bytes_are_the_products_cores_and_the_work_grows_with_the_bonds() {
        // Bonds 2 · 2 = 4 at both cuts: cores of 1·4·2, 4·4·2 and 4·1·2 elements, twice.
        let tiny = DistanceCost::of(&stack(3, 2, 2), &stack(3, 2, 2));
        assert_eq!((tiny.bytes, tiny.max_bond), (2 * 48 * 16, 4));
        let narrow = DistanceCost::of(&stack(12, 4, 4), &stack(12, 4, 4));
        let wide = DistanceCost::of(&stack(12, 4, 8), &stack(12, 4, 8));
        assert_eq!((narrow.max_bond, wide.max_bond), (16, 32));
        assert!(wide.flops > 4.0 * narrow.flops, "{narrow:?} {wide:?}");
    }
}
