//! The exact product of a stack as one train (bonds multiply): the reference for small problems.

use crate::error::Result;
use crate::kernels::{legs, site_product};
use crate::tensor::{Labeled, Meter};
use crate::train::{Stack, Train};
use std::sync::Arc;

/// The uncompressed product of all layers, with bond = product of the layers' bonds.
pub fn exact_product(stack: &Stack) -> Result<Train> {
    let k = stack.layers().len();
    let cores = (0..stack.shape().sites())
        .map(|site| {
            let operands: Vec<_> = stack
                .layers()
                .iter()
                .enumerate()
                .map(|(i, layer)| Labeled {
                    legs: legs::core(i, k),
                    value: Arc::new(layer.train.core(site).clone()),
                })
                .collect();
            let product = site_product(&operands, &mut Meter::default());
            let s = product.value.shape();
            let left: usize = s[..k].iter().product();
            let right: usize = s[k..2 * k].iter().product();
            let shape = vec![left, right, s[2 * k], s[2 * k + 1]];
            Arc::unwrap_or_clone(product.value).reshape(shape)
        })
        .collect();
    Train::new(stack.shape().output_kind(), cores)
}
